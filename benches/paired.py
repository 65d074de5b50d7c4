#!/usr/bin/env python3
"""Interleaved whole-process timings of several dwp binaries on fresh copies of one plan.

    python3 benches/paired.py PLAN ROUNDS BINARY... -- ARG...

Each round copies PLAN afresh (untimed) for every binary, in an order that rotates from round
to round, and times `BINARY ARG...` with the word `PLAN` in ARG replaced by the copy's path.
It prints each binary's median and the median of its per-round ratio to the first binary: the
pairing keeps a ratio meaningful while the machine's speed drifts. Exit codes 0 and 1 count as
runs (a plan verify judges NOT CONFORMANT is still a run); any other stops the measurement.

With WORK=/dev/shm/dwp-paired the copies live in memory, where fsync costs nothing: what is
left is the binaries' own work, without the disk's noise (docs/PERFORMANCE.md "Third pass").
Without it they go to /tmp/dwp-paired, on the disk.

Example (a plan from `dwp::synth`, two builds of dwp):

    WORK=/dev/shm/dwp-paired python3 benches/paired.py /tmp/plans/PLAN_x 40 \
        ./dwp-new ./dwp-old -- update PLAN --task 501 --status in_progress
"""

import os
import shutil
import statistics
import subprocess
import sys
import time


def fresh_copy(plan: str, work: str) -> str:
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    copy = os.path.join(work, os.path.basename(plan.rstrip("/")))
    subprocess.run(["cp", "-a", plan, copy], check=True)
    subprocess.run(["sync"], check=True)
    return copy


def main() -> None:
    if "--" not in sys.argv or len(sys.argv) < 5:
        sys.exit(__doc__)
    separator = sys.argv.index("--")
    plan, rounds = sys.argv[1], int(sys.argv[2])
    binaries, args = sys.argv[3:separator], sys.argv[separator + 1 :]
    work = os.environ.get("WORK", "/tmp/dwp-paired")
    times = {binary: [] for binary in binaries}
    for round_ in range(rounds):
        turn = round_ % len(binaries)
        for binary in binaries[turn:] + binaries[:turn]:
            copy = fresh_copy(plan, work)
            argv = [binary] + [copy if arg == "PLAN" else arg for arg in args]
            started = time.perf_counter()
            run = subprocess.run(argv, capture_output=True)
            took = time.perf_counter() - started
            if run.returncode not in (0, 1):
                sys.exit(f"{binary}: exit {run.returncode}: {run.stderr.decode()[-400:]}")
            times[binary].append(took)
    first = times[binaries[0]]
    for binary in binaries:
        ratios = [mine / theirs for mine, theirs in zip(times[binary], first)]
        print(
            f"{binary}: median {statistics.median(times[binary]) * 1000:.2f} ms, "
            f"ratio to {binaries[0]} {statistics.median(ratios):.3f} ({rounds} rounds)"
        )


if __name__ == "__main__":
    main()
