#!/usr/bin/env python3
"""Interleaved whole-process timings of several commands on fresh copies of one plan.

    python3 benches/paired.py PLAN ROUNDS COMMAND...

Each COMMAND is one string, split into words as a shell would (no shell runs it), in which the
word PLAN (alone, or followed by `/`) stands for a fresh copy of the plan folder PLAN. Each round
copies the plan afresh (untimed) for every command, in an order that rotates from round to
round, and times the command. It prints each command's median and the median of its per-round
ratio to the first command: the pairing keeps a ratio meaningful while the machine's speed
drifts. Exit codes 0 and 1 count as runs (a plan verify judges NOT CONFORMANT is still a run);
any other stops the measurement.

With WORK=/dev/shm/dwp-paired the copies live in memory, where fsync costs nothing: what is
left is the commands' own work, without the disk's noise. Without it they go to
/tmp/dwp-paired, on the disk.

Examples (plans from benches/plans.sh; two builds of dwp, then dwp against another tool):

    python3 benches/paired.py /tmp/dwp-plans/n6/start 40 \\
        "./dwp-new update PLAN --task 1 --status in_progress" \\
        "./dwp-old update PLAN --task 1 --status in_progress"
    python3 benches/paired.py /tmp/dwp-plans/n1000/verify 20 \\
        "target/release/dwp verify PLAN" "python3 /path/to/plan_contract.py PLAN nogit"
"""

import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time

PLAN_WORD = re.compile(r"^PLAN(?=/|$)")


def fresh_copy(plan: str, work: str) -> str:
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    copy = os.path.join(work, os.path.basename(plan.rstrip("/")))
    subprocess.run(["cp", "-a", plan, copy], check=True)
    subprocess.run(["sync"], check=True)
    return copy


def argv_of(command: str, copy: str) -> list:
    return [PLAN_WORD.sub(copy, word) for word in shlex.split(command)]


def main() -> None:
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    plan, rounds, commands = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    # A plans folder holding one plan: the plan inside it.
    inside = [n for n in os.listdir(plan) if n.startswith("PLAN_")]
    if not os.path.exists(os.path.join(plan, "README.md")) and len(inside) == 1:
        plan = os.path.join(plan, inside[0])
    work = os.environ.get("WORK", "/tmp/dwp-paired")
    times = {command: [] for command in commands}
    for round_ in range(rounds):
        turn = round_ % len(commands)
        for command in commands[turn:] + commands[:turn]:
            copy = fresh_copy(plan, work)
            argv = argv_of(command, copy)
            started = time.perf_counter()
            run = subprocess.run(argv, capture_output=True)
            took = time.perf_counter() - started
            if run.returncode not in (0, 1):
                sys.exit(f"{command}: exit {run.returncode}: {run.stderr.decode()[-400:]}")
            times[command].append(took)
    first = times[commands[0]]
    for command in commands:
        ratios = [mine / theirs for mine, theirs in zip(times[command], first)]
        print(
            f"{statistics.median(times[command]) * 1000:9.2f} ms median"
            f"   ratio to the first {statistics.median(ratios):.3f}"
            f"   ({rounds} rounds)   {command}"
        )


if __name__ == "__main__":
    main()
