#!/usr/bin/env bash
# The plans docs/PERFORMANCE.md measures on, made with dwp itself (untimed):
#
#   benches/plans.sh DWP [OUT=/tmp/dwp-plans]
#
# For a plan of 6 tasks (OUT/n6, the size of real plans) and one of 1,000 (OUT/n1000), each a
# Full plan made by `dwp new` and approved, it writes one folder per starting point:
#
#   start/          every task pending                          (dwp update --task 1 --status in_progress)
#   complete/       task 1 in progress                           (--status completed --gate ..., --tick)
#   verify/         the first half completed (gates, boxes, logs) (dwp verify)
#   finalize-last/  all but the last task completed, the last in progress with a passing gate,
#                   the markdown written up as done (boxes, Plan Status, logs, security review)
#   finalize/       the same with every task completed in state.json, not yet published
#
# The 1,000-task plan takes about two thousand updates to make: a minute or so.
set -euo pipefail
DWP="${1:?usage: benches/plans.sh DWP [OUT]}"
OUT="${2:-/tmp/dwp-plans}"
GATE='cargo test|0|12 passed, 0 failed'

# Every task log written up as done, and a security review: what publication asks for.
write_up() {
  python3 - "$1" <<'PY'
import pathlib, sys
plan = pathlib.Path(sys.argv[1])
for task in plan.glob("[0-9]*.task_*.md"):
    text = task.read_text()
    text = text.replace(
        "Status: pending\nTimestamp:\nGate record:\nSkills disposition:\nDocumentation decision:",
        "Status: completed\nTimestamp: 2026-06-09T14:15:00Z\nGate record: cargo test, 12 passed\n"
        "Skills disposition: none\nDocumentation decision: no change needed",
    )
    task.write_text(text)
(plan / "analysis_results/SECURITY_REVIEW.md").write_text(
    "# Security review\n\nNo unresolved critical findings.\n"
)
PY
}

# Each placeholder dwp new left for the author written, as an author does before approval.
write_plan() {
  python3 - "$1" <<'PY'
import pathlib, re, sys
plan = pathlib.Path(sys.argv[1])
for task in plan.glob("[0-9]*.task_*.md"):
    text = re.sub(r"(?m)^To be written before approval: .*$", "Written for the benchmark.", task.read_text())
    text = re.sub(r"(?m)^- to be listed before approval: .*$", "- `cargo test`", text)
    text = re.sub(r"(?m)^- to be (named|written) before approval: .*$", "- written for the benchmark", text)
    task.write_text(text)
PY
}

build() { # size label, plan name, task titles...
  local size="$1" name="$2"
  shift 2
  local base="$OUT/$size" plan
  rm -rf "$base"
  mkdir -p "$base"/{start,complete,verify,finalize-last,finalize}
  plan="$base/start/$name"
  "$DWP" -q new "$plan" --tasks "$@" --goal "Measure dwp" --context "A plan made for timing"
  write_plan "$plan"
  "$DWP" -q approve "$plan" --by bench
  local tasks
  tasks=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["task_count"])' "$plan/state.json")
  cp -a "$plan" "$base/complete/"
  "$DWP" -q update "$base/complete/$name" --task 1 --status in_progress
  cp -a "$plan" "$base/finalize-last/"
  plan="$base/finalize-last/$name"
  write_up "$plan"
  local task
  for ((task = 1; task < tasks; task++)); do
    "$DWP" -q update "$plan" --task "$task" --status in_progress
    "$DWP" -q update "$plan" --task "$task" --status completed --gate "$GATE" --tick
    if [ "$task" -eq $((tasks / 2)) ]; then
      cp -a "$plan" "$base/verify/"
    fi
  done
  "$DWP" -q update "$plan" --task "$tasks" --status in_progress --gate "$GATE"
  sed -i -e "s/^- \[ \] Task $tasks:/- [x] Task $tasks:/" \
    -e "s|Plan Status: $((tasks - 1))/$tasks|Plan Status: $tasks/$tasks|" "$plan/README.md"
  cp -a "$plan" "$base/finalize/"
  "$DWP" -q finalize "$base/finalize/$name"
  rm "$base/finalize/$name/analysis_results/FINALIZATION.json"
  echo "$base: $tasks tasks"
}

build n6 PLAN_six_tasks T1 T2 T3 T4 T5
build n1000 PLAN_big_one $(seq -f 'T%g' 1 999)
