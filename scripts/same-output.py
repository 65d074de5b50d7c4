#!/usr/bin/env python3
"""Prove that two dwp builds behave the same: every command's output and every written file.

    python3 scripts/same-output.py record DWP OUT.json    # run the corpus with one build
    python3 scripts/same-output.py compare OLD.json NEW.json

`record` runs a fixed corpus with the clock fixed (`DWP_TEST_NOW`) and a private HOME, on fresh
copies of every plan in `conformance-fixtures/` and `examples/` placed at the same path each
time, so paths in the output are the same from one build to the next:

- the readers on each plan: validate, verify (json and sarif), status, next, reconcile (check
  and --diff), lock status, finalize --check;
- the writers on a fresh copy each: reconcile --write, init, migrate --to v5, approve, amend
  --invalidate of the first task, finalize, and a walk that starts, records a gate on and
  completes (--tick) every task in turn, publishing the plan at the last one.

For every command it keeps the exit code, stdout and stderr, and after every writer the sha256
of each file left in the plan folder. `compare` prints every difference and exits 1 if there is
one. A refactor that claims "no behaviour change" records both builds and compares them.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.environ.get("WORK", "/tmp/dwp-same-output")
NOW = "2026-06-09T16:42:10Z"


def plans():
    """Every plan folder of the fixtures and examples: (case name, path)."""
    found = []
    fixtures = os.path.join(ROOT, "conformance-fixtures")
    for case in sorted(os.listdir(fixtures)):
        folder = os.path.join(fixtures, case)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if name.startswith("PLAN_") and os.path.isdir(os.path.join(folder, name)):
                found.append((f"{case}/{name}", os.path.join(folder, name)))
    found.append(("examples/run-plan", os.path.join(ROOT, "examples/run-plan/PLAN_greeting_banner")))
    return found


# Sequences that start from nothing but a folder: a new plan, driven to publication; a gate
# run and recorded by `dwp run`.
GATE = os.path.join(ROOT, "examples/run-plan/gate.sh")
FROM_SCRATCH = {
    "new full": [["new", "PLAN_golden_walk", "--tasks", "Parse input", "Write output", "--json"],
                 ["approve", "--by", "Ana", "--json", "PLAN"]],
    "new lite": [["new", "PLAN_golden_lite", "--format", "lite", "--tasks", "One", "--json"],
                 ["approve", "--by", "Ana", "--pre-approved", "--json", "PLAN"]],
}


def tree(folder):
    """Each file under `folder` (relative path) with its sha256; symlinks by their target."""
    files = {}
    for here, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(here, name)
            relative = os.path.relpath(path, folder)
            if os.path.islink(path):
                files[relative] = "-> " + os.readlink(path)
            else:
                try:
                    with open(path, "rb") as handle:
                        files[relative] = hashlib.sha256(handle.read()).hexdigest()
                except OSError as error:
                    files[relative] = f"unreadable: {error.errno}"
    return files


def real_clock_free(text):
    """The text with the age of a fixture's lock, measured on the real clock, left out."""
    text = re.sub(r'"age_seconds": \d+', '"age_seconds": N', text)
    return re.sub(r"\b\d+[dhms]( \d+[dhms])* old\b", "AGE old", text)


class Runner:
    def __init__(self, dwp):
        self.dwp = os.path.abspath(dwp)
        self.home = os.path.join(WORK, "home")
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.home,
            "LANG": "C.UTF-8",
            "DWP_TEST_NOW": NOW,
            "NO_COLOR": "1",
        }

    def fresh(self, source):
        """A fresh copy of the plan at the same path every time."""
        shutil.rmtree(WORK, ignore_errors=True)
        os.makedirs(self.home)
        copy = os.path.join(WORK, os.path.basename(source))
        subprocess.run(["cp", "-a", source, copy], check=True)
        return copy

    def run(self, args, cwd=None):
        done = subprocess.run(
            [self.dwp] + args,
            capture_output=True,
            env=self.env,
            cwd=cwd or WORK,
            timeout=120,
        )
        return {
            "args": args,
            "exit": done.returncode,
            "stdout": real_clock_free(done.stdout.decode("utf-8", "replace")),
            "stderr": real_clock_free(done.stderr.decode("utf-8", "replace")),
        }


READERS = [
    ["validate", "--json", "PLAN"],
    ["verify", "--json", "PLAN"],
    ["verify", "PLAN"],
    ["verify", "--format", "sarif", "PLAN"],
    ["verify", "--strict-evidence", "--json", "PLAN"],
    ["status", "--json", "PLAN"],
    ["status", "PLAN"],
    ["next", "--json", "PLAN"],
    ["next", "PLAN"],
    ["reconcile", "--json", "PLAN"],
    ["reconcile", "--diff", "PLAN"],
    ["lock", "status", "--json", "PLAN"],
    ["finalize", "--check", "--json", "PLAN"],
]

WRITERS = [
    [["reconcile", "--write", "--json", "PLAN"]],
    [["init", "--json", "PLAN"]],
    [["migrate", "--to", "v5", "--json", "PLAN"]],
    [["approve", "--by", "Ana", "--json", "PLAN"]],
    [["update", "PLAN", "--task", "1", "--status", "in_progress", "--dry-run", "--json"]],
    [["finalize", "--json", "PLAN"]],
    [
        [
            "amend", "PLAN", "--task", "1", "--original", "all tests pass",
            "--observed", "one flaky", "--disposition", "failed-gate", "--reason", "rerun",
            "--authority", "developer", "--affected", "1", "--invalidate", "pnpm run test",
            "--json",
        ]
    ],
]


def walk(tasks):
    """Start, record, complete with --tick every task in turn; the last one publishes."""
    steps = []
    for task in range(1, tasks + 1):
        t = str(task)
        steps.append(["update", "PLAN", "--task", t, "--status", "in_progress", "--gate",
                      "cargo clippy|1|2 warnings", "--checkpoint-step", "gate", "--json"])
        steps.append(["update", "PLAN", "--task", t, "--status", "completed", "--tick",
                      "--gate", f"cargo test|0|{task} passed, 0 failed",
                      "--gate", "cargo clippy|0|0 warnings",
                      "--worked", "done", "--commit", "abcdef1", "--json"])
    steps.append(["verify", "--json", "PLAN"])
    return steps


def task_count(plan):
    try:
        with open(os.path.join(plan, "state.json")) as handle:
            return min(int(json.load(handle).get("task_count", 0)), 12)
    except (OSError, ValueError, AttributeError, TypeError):
        return 3


def record(dwp, out):
    runner = Runner(dwp)
    results = {}
    for name, source in plans():
        case = {}
        copy = runner.fresh(source)
        for args in READERS:
            argv = [copy if a == "PLAN" else a for a in args]
            case[" ".join(args)] = runner.run(argv)
        case["readers leave the tree"] = tree(copy)
        sequences = WRITERS + [walk(task_count(source))]
        for number, sequence in enumerate(sequences):
            copy = runner.fresh(source)
            outputs = []
            for args in sequence:
                argv = [copy if a == "PLAN" else a for a in args]
                outputs.append(runner.run(argv))
            case[f"writer {number}"] = {"outputs": outputs, "tree": tree(copy)}
        results[name] = case
        print(name, file=sys.stderr)
    for name, start in FROM_SCRATCH.items():
        shutil.rmtree(WORK, ignore_errors=True)
        os.makedirs(runner.home)
        plan = os.path.join(WORK, start[0][1])
        steps = start + walk(3) + [["run", "PLAN", "--", "sh", GATE], ["status", "--json", "PLAN"]]
        outputs = [runner.run([plan if a == "PLAN" else a for a in args]) for args in steps]
        results[name] = {"outputs": outputs, "tree": tree(plan) if os.path.isdir(plan) else {}}
    run_plan = os.path.join(ROOT, "examples/run-plan/PLAN_greeting_banner")
    copy = runner.fresh(run_plan)
    steps = [["update", "PLAN", "--task", "1", "--status", "in_progress"],
             ["run", "PLAN", "--", "sh", GATE],
             ["run", "--json", "PLAN", "--", "sh", "-c", "echo 0 passed; echo 2 failed; exit 1"],
             ["run", "--json", "PLAN", "--", "sh", GATE],
             ["update", "PLAN", "--task", "1", "--status", "completed", "--tick", "--json"],
             ["status", "PLAN"], ["verify", "--json", "PLAN"]]
    outputs = [runner.run([copy if a == "PLAN" else a for a in args]) for args in steps]
    results["dwp run"] = {"outputs": outputs, "tree": tree(copy)}
    with open(out, "w") as handle:
        json.dump(results, handle, indent=1, sort_keys=True)


def compare(old_path, new_path):
    with open(old_path) as handle:
        old = json.load(handle)
    with open(new_path) as handle:
        new = json.load(handle)
    differences = 0
    for name in sorted(set(old) | set(new)):
        if old.get(name) == new.get(name):
            continue
        for key in sorted(set(old.get(name, {})) | set(new.get(name, {}))):
            a, b = old.get(name, {}).get(key), new.get(name, {}).get(key)
            if a != b:
                differences += 1
                print(f"--- {name}: {key}")
                print(json.dumps(a, indent=1)[:3000])
                print(f"+++ {name}: {key}")
                print(json.dumps(b, indent=1)[:3000])
    print(f"{differences} difference(s) in {len(set(old) | set(new))} plans")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "record":
        record(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
