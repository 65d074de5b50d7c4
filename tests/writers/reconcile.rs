//! `dwp reconcile` through the real binary (seed 003 "Projection and reconciliation"): the
//! markdown wins every disagreement, regeneration never invents evidence, and `--write` is
//! idempotent.
//!
//! Plans are made with `dwp::synth::SynthPlan` in temporary folders and their README boxes
//! edited by hand. Every refusal is checked against the bytes of the whole plan folder; every
//! write against the state on disk, PROGRESS.md, and a second `--write` that must change nothing.
//! Tests of behaviour judged wrong against the seed are `#[ignore = "BUG: ..."]` and assert the
//! correct behaviour.

use crate::common;
use crate::common::{NOW, Plan, Run, changed_paths, sha256_hex, state_of, task_of, tree_digest};
use dwp::plan::model::{Generation, PlanFormat};
use dwp::synth::SynthPlan;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// The heading of the PROGRESS.md entry a `--write` at `NOW` appends.
const ENTRY: &str = "### Reconciliation — 2026-06-09T16:42:10Z";

// ---------------------------------------------------------------------------------------------
// Plans, runs and assertions
// ---------------------------------------------------------------------------------------------

impl Plan {
    /// A Full v5 plan of `tasks` tasks, the first `completed` completed with a passing gate.
    fn full(name: &str, tasks: usize, completed: usize) -> Plan {
        Plan::from_synth(SynthPlan::new(name, tasks).completed(completed))
    }

    fn state_sha256(&self) -> String {
        sha256_hex(&fs::read(self.path("state.json")).expect("read state.json"))
    }

    /// Every entry under the plan folder with a digest (directories marked).
    fn snapshot(&self) -> BTreeMap<PathBuf, String> {
        tree_digest(&self.dir)
    }

    fn assert_unchanged(&self, before: &BTreeMap<PathBuf, String>, after_what: &str) {
        let changed = changed_paths(before, &self.snapshot());
        assert!(
            changed.is_empty(),
            "{after_what} changed {changed:?} in {}",
            self.dir.display()
        );
    }

    /// Set the marker of task `id` in the README index (`"x"`, `"X"`, `" "`, `"~"`, ...).
    fn set_box(&self, id: usize, marker: &str) {
        self.edit("README.md", |text| set_box(&text, id, marker));
    }

    /// Check task `id`'s box and make the README's Plan Status say `status`: the markdown
    /// records a completion state.json does not have yet.
    fn check_in_markdown(&self, id: usize, status: &str) {
        self.set_box(id, "x");
        self.set_plan_status(status);
    }

    /// Give task `id` the index title `title` in the README (the generator's is `Synthetic task
    /// N`): a title drift.
    fn retitle_in_markdown(&self, id: usize, title: &str) {
        self.edit("README.md", |t| {
            t.replace(
                &format!("Task {id}: Synthetic task {id}"),
                &format!("Task {id}: {title}"),
            )
        });
    }

    /// `dwp reconcile PLAN ARGS...` refused with `code` (`what` says which refusal), every entry
    /// of the plan folder left as it was.
    fn refused(&self, args: &[&str], code: i32, what: &str) -> Run {
        let run = common::refused(&self.dir, "reconcile", code, &[], || reconcile(self, args));
        run.assert_code(code, what);
        run
    }

    fn set_plan_status(&self, status: &str) {
        self.edit("README.md", |text| {
            text.lines()
                .map(|line| {
                    if line.starts_with("Plan Status:") {
                        format!("Plan Status: {status}")
                    } else {
                        line.to_owned()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n")
                + "\n"
        });
    }

    /// Replace task `id`'s log `Status: pending` line (Full task file) with `lines`.
    fn set_log(&self, file: &str, lines: &str) {
        self.edit(file, |text| {
            assert!(text.contains("Status: pending\n"), "{file}: {text}");
            text.replace("Status: pending\n", lines)
        });
    }
}

fn set_box(text: &str, id: usize, marker: &str) -> String {
    let needle = format!("] Task {id}: ");
    let mut found = false;
    let out: Vec<String> = text
        .lines()
        .map(|line| {
            if !found
                && let Some(rest) = line.strip_prefix("- [")
                && let Some(close) = rest.find(']')
                && rest[close..].starts_with(&needle)
            {
                found = true;
                return format!("- [{marker}{}", &rest[close..]);
            }
            line.to_owned()
        })
        .collect();
    assert!(found, "no index line for task {id} in:\n{text}");
    out.join("\n") + "\n"
}

/// The 1-based README line of task `id`'s index entry.
fn index_line(readme: &str, id: usize) -> usize {
    let needle = format!("] Task {id}: ");
    readme
        .lines()
        .position(|l| l.starts_with("- [") && l.contains(&needle))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("no index line for task {id}"))
}

impl Run {
    fn assert_code(&self, code: i32, what: &str) {
        assert_eq!(
            self.code, code,
            "{what}: exit {} (expected {code})\nstdout: {}\nstderr: {}",
            self.code, self.stdout, self.stderr
        );
        assert!(!self.stderr.contains("panicked"), "{what}: {}", self.stderr);
    }
}

/// `dwp reconcile PLAN ARGS...` in `dir` (or here), with the caller's HOME and NO_COLOR set.
fn reconcile_in(dir: Option<&Path>, args: &[&str], plan: &Path) -> Run {
    let mut command = common::dwp();
    command.inherit_home().env("NO_COLOR", "1");
    if let Some(dir) = dir {
        command.in_dir(dir);
    }
    command.arg("reconcile").arg(plan).args(args).run_utf8()
}

/// `dwp reconcile PLAN ARGS...`.
fn reconcile(plan: &Plan, args: &[&str]) -> Run {
    reconcile_in(None, args, &plan.dir)
}

/// The `--json` report of `run` lists a change of task `id` whose description holds `words`.
fn assert_a_change_of_task(run: &Run, id: u64, words: &str) {
    let changes = run.payload()["changes"].clone();
    assert!(
        changes
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["task"] == id && c["what"].as_str().unwrap().contains(words)),
        "{changes:#}"
    );
}

fn directions(report: &Value, key: &str) -> Vec<String> {
    let mut out: Vec<String> = report[key]
        .as_array()
        .unwrap_or_else(|| panic!("report.{key} is an array: {report:#}"))
        .iter()
        .map(|d| d["direction"].as_str().expect("direction").to_owned())
        .collect();
    out.sort();
    out
}

/// The text of each task object of a canonical (2-space indented) state.json, by id.
fn task_blocks(text: &str) -> BTreeMap<u64, String> {
    let mut blocks = BTreeMap::new();
    let mut current: Option<Vec<&str>> = None;
    for line in text.lines() {
        if line == "    {" {
            current = Some(vec![line]);
        } else if let Some(lines) = current.as_mut() {
            lines.push(line);
            if line == "    }" || line == "    }," {
                let block = lines.join("\n");
                let block = block.trim_end_matches(',').to_owned();
                let id = block
                    .lines()
                    .find_map(|l| l.trim().strip_prefix("\"id\": "))
                    .and_then(|v| v.trim_end_matches(',').parse().ok())
                    .expect("task block has an id");
                blocks.insert(id, block);
                current = None;
            }
        }
    }
    blocks
}

// ---------------------------------------------------------------------------------------------
// Round trip: markdown edits → --write → in sync → second --write is a no-op
// ---------------------------------------------------------------------------------------------

#[test]
fn round_trip_write_then_check_is_in_sync_and_a_second_write_changes_no_byte() {
    let mut rng = fastrand::Rng::with_seed(0x003_5eed);
    let mut refused_all_checked = 0;
    let mut written = 0;
    for case in 0..30 {
        let tasks = rng.usize(1..=40);
        let completed = rng.usize(0..=tasks);
        let generation = Generation::ALL[rng.usize(0..3)];
        let format = if generation != Generation::V1 && rng.bool() {
            PlanFormat::Lite
        } else {
            PlanFormat::Full
        };
        let name = format!("PLAN_round_trip_{case}");
        let plan = Plan::from_synth(
            SynthPlan::new(&name, tasks)
                .completed(completed)
                .format(format)
                .generation(generation),
        );
        let what = format!(
            "case {case}: {tasks} tasks, {completed} completed, {format:?} v{}",
            generation.number()
        );

        // Perturb the boxes: flip about a third, spell some done boxes `[X]`, a few odd ones.
        // Every tenth case checks every box (refused unless the plan was already completed).
        let check_all = case % 10 == 9;
        let mut done = vec![false; tasks + 1];
        let mut odd = 0;
        for (id, slot) in done.iter_mut().enumerate().skip(1) {
            let was_done = id <= completed;
            let now_done = check_all || if rng.f32() < 0.3 { !was_done } else { was_done };
            let marker = if !check_all && rng.f32() < 0.05 {
                odd += 1;
                ["~", "-", "/"][rng.usize(0..3)]
            } else if now_done {
                if rng.bool() { "x" } else { "X" }
            } else {
                " "
            };
            *slot = marker == "x" || marker == "X";
            plan.set_box(id, marker);
        }
        let boxes_done = done.iter().filter(|d| **d).count();
        let fixed_status = rng.bool();
        if fixed_status {
            plan.set_plan_status(&format!("{boxes_done}/{tasks}"));
        }
        let progress_before = plan.read("PROGRESS.md");
        let before = plan.snapshot();

        let first = reconcile(&plan, &["--write", "--json"]);
        if boxes_done == tasks && completed != tasks {
            // Every box checked: completing the plan is `dwp finalize`'s, never reconcile's.
            first.assert_code(1, &format!("{what}: --write with every box checked"));
            assert!(
                first.stderr.contains("dwp finalize"),
                "{what}: {}",
                first.stderr
            );
            plan.assert_unchanged(&before, &format!("{what}: refused --write"));
            refused_all_checked += 1;
            continue;
        }
        first.assert_code(0, &format!("{what}: first --write"));
        let report = first.payload().clone();

        // The state now follows the boxes.
        let state = plan.state();
        for (id, is_done) in done.iter().enumerate().skip(1) {
            let status = task_of(&state, id as u64)["status"]
                .as_str()
                .unwrap()
                .to_owned();
            assert_eq!(
                status == "completed",
                *is_done,
                "{what}: task {id} is {status} after --write, its box done={is_done}"
            );
        }
        assert_eq!(state["completed_count"], boxes_done, "{what}");
        assert_eq!(state["task_count"], tasks, "{what}");

        // PROGRESS.md: one entry when something was written, none otherwise.
        let progress = plan.read("PROGRESS.md");
        assert!(
            progress.starts_with(&progress_before),
            "{what}: PROGRESS.md rewritten"
        );
        let entries = progress.matches(ENTRY).count();
        if report["written"] == true {
            written += 1;
            assert_eq!(entries, 1, "{what}: {progress}");
        } else {
            assert_eq!(
                progress, progress_before,
                "{what}: nothing written, PROGRESS.md changed"
            );
            assert!(
                report["in_sync"] == true
                    || report["desync"].as_array().unwrap().iter().all(|d| {
                        matches!(
                            d["direction"].as_str(),
                            Some("plan status drift" | "odd marker")
                        )
                    }),
                "{what}: nothing written though the state disagreed: {report:#}"
            );
        }

        // Check: in sync, unless only the markdown's own problems remain.
        let check = reconcile(&plan, &["--json"]);
        let doc = check.json();
        let remaining = directions(&doc["reconcile"], "desync");
        assert!(
            remaining
                .iter()
                .all(|d| d == "plan status drift" || d == "odd marker"),
            "{what}: still out of sync after --write: {remaining:?}\n{:#}",
            doc["reconcile"]["desync"]
        );
        if odd == 0 && fixed_status {
            assert!(remaining.is_empty(), "{what}: {remaining:?}");
        }
        check.assert_code(if remaining.is_empty() { 0 } else { 1 }, &what);
        assert_eq!(doc["reconcile"]["in_sync"], remaining.is_empty(), "{what}");
        assert_eq!(
            directions(&report, "remaining"),
            remaining,
            "{what}: the first --write's `remaining` is what the check reports"
        );

        // A second --write changes no byte and appends nothing.
        let settled = plan.snapshot();
        let second = reconcile(&plan, &["--write", "--json"]);
        second.assert_code(0, &format!("{what}: second --write"));
        assert_eq!(second.payload()["written"], false, "{what}");
        plan.assert_unchanged(&settled, &format!("{what}: second --write"));

        let output = common::dwp()
            .inherit_home()
            .arg("validate")
            .arg(&plan.dir)
            .output();
        assert!(
            output.status.success(),
            "{what}: the regenerated state does not validate: {}",
            String::from_utf8_lossy(&output.stdout)
        );
    }
    assert!(written >= 10, "only {written} of 30 cases wrote anything");
    assert!(
        refused_all_checked >= 1,
        "no case checked every box of an unfinished plan"
    );
}

#[test]
fn checking_every_box_is_refused_by_write_and_left_to_finalize() {
    let plan = Plan::full("PLAN_all_boxes_checked", 3, 2);
    plan.check_in_markdown(3, "3/3");
    let run = plan.refused(&["--write"], 1, "--write with every box checked");
    assert!(
        run.stderr.contains("every box is checked") && run.stderr.contains("dwp finalize"),
        "{}",
        run.stderr
    );
}

// ---------------------------------------------------------------------------------------------
// --write: PROGRESS.md entry, evidence, kept records
// ---------------------------------------------------------------------------------------------

#[test]
fn write_appends_one_dated_progress_entry_naming_each_task_and_direction() {
    let plan = Plan::full("PLAN_progress_entry", 5, 2);
    plan.set_box(2, " "); // state ahead
    plan.set_box(3, "x"); // markdown ahead
    plan.retitle_in_markdown(4, "Wire the retry queue"); // title drift
    plan.set_plan_status("2/5");
    let progress_before = plan.read("PROGRESS.md");

    let run = reconcile(&plan, &["--write"]);
    run.assert_code(0, "--write");
    assert!(
        run.stdout.contains("reconciled: PLAN_progress_entry"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(&format!("sha256 {}", plan.state_sha256())),
        "the printed sha256 is the written file's:\n{}",
        run.stdout
    );

    let progress = plan.read("PROGRESS.md");
    let added = progress
        .strip_prefix(&progress_before)
        .expect("PROGRESS.md is only appended to");
    assert_eq!(added.matches("### Reconciliation").count(), 1, "{added}");
    assert_eq!(progress.matches(ENTRY).count(), 1, "{progress}");
    assert!(
        added.trim_start().starts_with(ENTRY),
        "dated heading first:\n{added}"
    );
    for line in [
        // Unchecked, its log still says completed and it was started: back to in_progress.
        "- task 2: state ahead — completed → in_progress",
        "- task 3: markdown ahead — pending → completed",
        "- task 4: title drift — title \"Synthetic task 4\" → \"Wire the retry queue\"",
    ] {
        assert!(
            added.contains(line),
            "expected {line:?} in the entry:\n{added}"
        );
    }
    assert!(
        !added.contains("- task 1:") && !added.contains("- task 5:"),
        "{added}"
    );

    let state = plan.state();
    assert_eq!(task_of(&state, 2)["status"], "in_progress");
    assert_eq!(task_of(&state, 3)["status"], "completed");
    assert_eq!(task_of(&state, 4)["title"], "Wire the retry queue");
    assert_eq!(state["completed_count"], 2);
    assert_eq!(state["updated_at"], NOW);

    // Idempotent: a second --write appends nothing and changes no byte.
    let settled = plan.snapshot();
    reconcile(&plan, &["--write"]).assert_code(0, "second --write");
    plan.assert_unchanged(&settled, "second --write");
}

#[test]
fn a_checked_box_whose_log_records_no_gate_stays_without_gates_and_the_output_says_so() {
    for (synth, log_file) in [
        (
            SynthPlan::new("PLAN_no_gate_full", 4).completed(1),
            Some("2.task_synthetic_2.md"),
        ),
        (
            SynthPlan::new("PLAN_no_gate_lite", 4)
                .completed(1)
                .format(PlanFormat::Lite)
                .generation(Generation::V2),
            None,
        ),
    ] {
        let plan = Plan::from_synth(synth);
        if let Some(file) = log_file {
            // The log says completed, with a timestamp, but records no gate.
            plan.set_log(file, "Status: completed\nTimestamp: 2026-06-09T15:10:00Z\n");
        }
        plan.check_in_markdown(2, "2/4");

        let run = reconcile(&plan, &["--write", "--json"]);
        run.assert_code(0, "--write");
        let report = &run.payload();
        let said: Vec<&str> = report["changes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["task"] == 2)
            .map(|c| c["what"].as_str().unwrap())
            .collect();
        assert!(
            said.iter()
                .any(|w| w.contains("without evidence") && w.contains("no gate")),
            "the report says task 2 has no evidence: {said:?}"
        );
        let state = plan.state();
        let task2 = task_of(&state, 2);
        assert_eq!(task2["status"], "completed");
        assert_eq!(task2["gates"], json!([]), "no gate invented: {task2:#}");
        assert!(
            task2.get("outcome").is_none(),
            "no outcome invented: {task2:#}"
        );
        assert!(
            task2.get("commit").is_none(),
            "no commit invented: {task2:#}"
        );
        if log_file.is_some() {
            assert_eq!(task2["completed_at"], "2026-06-09T15:10:00Z");
        } else {
            assert_eq!(
                task2["completed_at"], NOW,
                "no Timestamp: the reconciliation time"
            );
            assert!(
                said.iter().any(|w| w.contains("no Timestamp")),
                "the report says completed_at is the reconciliation time: {said:?}"
            );
        }
        let progress = plan.read("PROGRESS.md");
        assert!(
            progress.contains("- task 2: markdown ahead — completed without evidence"),
            "{progress}"
        );
    }

    // Human output says it too.
    let plan2 = Plan::full("PLAN_no_gate_human", 3, 0);
    plan2.check_in_markdown(1, "1/3");
    let human = reconcile(&plan2, &["--write"]);
    human.assert_code(0, "--write (human)");
    assert!(
        human
            .stdout
            .contains("task 1: markdown ahead — completed without evidence"),
        "{}",
        human.stdout
    );
}

#[test]
fn a_logged_gate_record_and_timestamp_give_the_gate_and_completed_at() {
    // Plain labels in a Full task file.
    let plan = Plan::full("PLAN_logged_gate_full", 5, 2);
    plan.set_log(
        "3.task_synthetic_3.md",
        "Status: completed\nTimestamp: 2026-06-09T15:30:00Z\nGate record: cargo test → 12 passed\n",
    );
    plan.check_in_markdown(3, "3/5");
    let run = reconcile(&plan, &["--write", "--json"]);
    run.assert_code(0, "--write");
    let state = plan.state();
    let task3 = task_of(&state, 3);
    assert_eq!(task3["status"], "completed");
    assert_eq!(task3["completed_at"], "2026-06-09T15:30:00Z");
    let gates = task3["gates"].as_array().expect("gates");
    assert_eq!(gates.len(), 1, "{task3:#}");
    assert_eq!(gates[0]["command"], "cargo test");
    assert_eq!(gates[0]["passes"], true);
    assert_eq!(gates[0]["evidence"], "12 passed");
    assert_eq!(gates[0]["last_run"], "2026-06-09T15:30:00Z");
    assert_a_change_of_task(&run, 3, "Gate record");

    // Bold labels in a Lite plan's inline section.
    let plan = Plan::from_synth(
        SynthPlan::new("PLAN_logged_gate_lite", 4)
            .completed(1)
            .format(PlanFormat::Lite)
            .generation(Generation::V5),
    );
    plan.edit("README.md", |text| {
        let at = text.find("## Task 2:").expect("task 2 section");
        let (head, tail) = text.split_at(at);
        let tail = tail.replacen(
            "Status: pending\n",
            "**Status:** completed\n**Timestamp:** 2026-06-09T15:45:00Z\n\
             - **Gate record:** `cargo test` → 12 passed\n",
            1,
        );
        format!("{head}{tail}")
    });
    plan.check_in_markdown(2, "2/4");
    reconcile(&plan, &["--write"]).assert_code(0, "--write (lite, bold labels)");
    let state = plan.state();
    let task2 = task_of(&state, 2);
    assert_eq!(task2["completed_at"], "2026-06-09T15:45:00Z", "{task2:#}");
    assert_eq!(task2["gates"][0]["command"], "cargo test", "{task2:#}");
    assert_eq!(task2["gates"][0]["evidence"], "12 passed", "{task2:#}");
    assert_eq!(task2["gates"][0]["passes"], true, "{task2:#}");
}

#[test]
fn records_of_tasks_whose_status_did_not_change_are_kept_byte_for_byte() {
    let plan = Plan::full("PLAN_kept_records", 6, 3);
    // Richer records on the completed tasks: a second gate and a full outcome.
    plan.edit("state.json", |text| {
        let mut state: Value = serde_json::from_str(&text).unwrap();
        let t2 = &mut state["tasks"][1];
        t2["gates"].as_array_mut().unwrap().push(json!({
            "command": "cargo clippy -- -D warnings",
            "passes": true,
            "exit_code": 0,
            "last_run": "2026-06-09T14:23:30Z",
            "evidence": "0 warnings"
        }));
        t2["outcome"] = json!({
            "tried": ["a | pipe in the text", "ümlaut"],
            "failed": ["first attempt"],
            "worked": "the second",
            "notes": "see analysis_results/notes.md"
        });
        let mut bytes = serde_json::to_string_pretty(&state).unwrap();
        bytes.push('\n');
        bytes
    });
    let old_text = plan.read("state.json");
    let old_blocks = task_blocks(&old_text);
    assert_eq!(old_blocks.len(), 6, "{old_text}");
    let before = plan.snapshot();

    plan.set_box(4, "x"); // markdown ahead on task 4 only
    plan.set_plan_status("4/6");
    let readme = plan.read("README.md");
    reconcile(&plan, &["--write"]).assert_code(0, "--write");

    let new_text = plan.read("state.json");
    let new_blocks = task_blocks(&new_text);
    for id in [1, 2, 3, 5, 6] {
        assert_eq!(
            new_blocks[&id], old_blocks[&id],
            "task {id}'s record changed though its status did not"
        );
    }
    assert_ne!(new_blocks[&4], old_blocks[&4]);
    // The markdown, the manifest and the task files are never edited.
    assert_eq!(plan.read("README.md"), readme);
    let after = plan.snapshot();
    for (path, bytes) in &before {
        let name = path.display().to_string();
        if ["state.json", "PROGRESS.md", "README.md"].contains(&name.as_str()) {
            continue;
        }
        assert_eq!(after.get(path), Some(bytes), "{name} changed");
    }
    assert_eq!(after.len(), before.len(), "files appeared or vanished");
}

// ---------------------------------------------------------------------------------------------
// --diff, refusals
// ---------------------------------------------------------------------------------------------

#[test]
fn diff_prints_the_unified_diff_and_check_mode_writes_nothing() {
    let plan = Plan::full("PLAN_diff_preview", 4, 1);
    plan.check_in_markdown(2, "2/4");
    let old = plan.read("state.json");
    let before = plan.snapshot();

    let run = reconcile(&plan, &["--diff"]);
    run.assert_code(1, "--diff (check mode, desync)");
    plan.assert_unchanged(&before, "reconcile --diff");
    let out = &run.stdout;
    assert!(out.contains("state.json (on disk)"), "{out}");
    assert!(out.contains("state.json (after)"), "{out}");
    assert!(out.contains("\n@@ "), "{out}");
    assert!(out.contains("\n-      \"status\": \"pending\",\n"), "{out}");
    assert!(
        out.contains("\n+      \"status\": \"completed\",\n"),
        "{out}"
    );
    assert!(
        out.contains(&format!("\n+      \"completed_at\": \"{NOW}\",\n")),
        "{out}"
    );
    assert!(out.contains("markdown ahead"), "{out}");

    let json_run = reconcile(&plan, &["--diff", "--json"]);
    json_run.assert_code(1, "--diff --json");
    let diff = json_run.payload()["diff"]
        .as_str()
        .expect("report.diff with --diff")
        .to_owned();
    assert!(diff.contains("+      \"status\": \"completed\","), "{diff}");
    assert_eq!(json_run.payload()["written"], false);
    plan.assert_unchanged(&before, "reconcile --diff --json");

    // Without --diff there is no diff in the report.
    assert!(
        reconcile(&plan, &["--json"])
            .payload()
            .get("diff")
            .is_none()
    );

    // --write --diff prints the same diff and writes exactly its `+` side.
    let write = reconcile(&plan, &["--write", "--diff"]);
    write.assert_code(0, "--write --diff");
    let new = plan.read("state.json");
    for line in write.stdout.lines() {
        if let Some(added) = line.strip_prefix('+').filter(|_| !line.starts_with("+++")) {
            assert!(
                new.lines().any(|l| l == added),
                "`+{added}` not in the new state"
            );
        }
        if let Some(removed) = line.strip_prefix('-').filter(|_| !line.starts_with("---")) {
            assert!(
                old.lines().any(|l| l == removed),
                "`-{removed}` not in the old state"
            );
        }
    }
    assert_eq!(plan.state()["tasks"][1]["status"], "completed");

    // In sync: --diff prints no diff.
    let quiet = reconcile(&plan, &["--diff"]);
    quiet.assert_code(0, "--diff in sync");
    assert!(!quiet.stdout.contains("@@"), "{}", quiet.stdout);
}

#[test]
fn refusals_exit_with_their_code_and_change_no_byte() {
    let plan = Plan::full("PLAN_refusals_here", 4, 1);
    plan.check_in_markdown(2, "2/4");
    let before = plan.snapshot();
    let wrong = "0".repeat(64);

    // A moved snapshot: exit 3, with --write and in check mode.
    let run = reconcile(&plan, &["--write", "--expected-sha256", &wrong]);
    run.assert_code(3, "--write --expected-sha256 (mismatch)");
    assert!(run.stderr.contains("snapshot moved"), "{}", run.stderr);
    plan.assert_unchanged(&before, "--expected-sha256 mismatch");
    reconcile(&plan, &["--expected-sha256", &wrong]).assert_code(3, "check, mismatch");

    // Not a sha256 at all: a usage error.
    reconcile(&plan, &["--write", "--expected-sha256", "abc"]).assert_code(2, "bad sha");
    plan.assert_unchanged(&before, "--expected-sha256 abc");

    // A held lock (a bare directory, as the reference updater makes it): exit 3, kept.
    fs::create_dir(plan.path("state.json.lock")).unwrap();
    let held = plan.snapshot();
    let run = reconcile(&plan, &["--write"]);
    run.assert_code(3, "--write with the lock held");
    assert!(run.stderr.contains("state.json.lock"), "{}", run.stderr);
    plan.assert_unchanged(&held, "--write with the lock held");
    // The check needs no lock.
    reconcile(&plan, &["--json"]).assert_code(1, "check with the lock held");
    fs::remove_dir(plan.path("state.json.lock")).unwrap();
    plan.assert_unchanged(&before, "lock tests");

    // A publication in progress: exit 1.
    plan.write(".finalizing.json", "{\"step\": \"state\"}\n");
    let finalizing = plan.snapshot();
    let run = reconcile(&plan, &["--write"]);
    run.assert_code(1, "--write with .finalizing.json");
    assert!(run.stderr.contains(".finalizing.json"), "{}", run.stderr);
    plan.assert_unchanged(&finalizing, "--write with .finalizing.json");
    fs::remove_file(plan.path(".finalizing.json")).unwrap();

    // An index that is not 1..N in order cannot be regenerated from: exit 1.
    plan.edit("README.md", |t| t.replace("- [ ] Task 4:", "- [ ] Task 7:"));
    let broken = plan.snapshot();
    reconcile(&plan, &["--write"]).assert_code(1, "--write with ids 1, 2, 3, 7");
    plan.assert_unchanged(&broken, "--write with ids 1, 2, 3, 7");
    plan.edit("README.md", |t| t.replace("- [ ] Task 7:", "- [ ] Task 4:"));
    plan.assert_unchanged(&before, "refusals");

    // The right sha256 goes through and the new one is printed.
    let sha = plan.state_sha256();
    let run = reconcile(&plan, &["--write", "--expected-sha256", &sha, "--json"]);
    run.assert_code(0, "--write --expected-sha256 (match)");
    let report = run.payload().clone();
    assert_eq!(report["old_sha256"], sha);
    assert_eq!(report["new_sha256"], plan.state_sha256());
    assert_eq!(report["written"], true);
    assert!(!plan.path("state.json.lock").exists(), "lock left behind");
}

// ---------------------------------------------------------------------------------------------
// --git
// ---------------------------------------------------------------------------------------------

/// A git repository holding one plan under `.dwp/plans/`, everything committed.
struct Repo {
    root: TempDir,
    plan: PathBuf,
}

impl Repo {
    fn new(name: &str, tasks: usize, completed: usize) -> Repo {
        let root = tempfile::tempdir().expect("temp dir");
        let plans = root.path().join(".dwp/plans");
        fs::create_dir_all(&plans).unwrap();
        let plan = SynthPlan::new(name, tasks)
            .completed(completed)
            .write(&plans)
            .expect("write plan");
        let repo = Repo { root, plan };
        repo.git(&["init", "-q", "."]);
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", &format!("Materialize {name}")]);
        repo
    }

    fn git(&self, args: &[&str]) -> String {
        common::git(self.root.path(), args)
    }

    /// Commit a change with `message`; its short hash as `git log --format=%h` prints it.
    fn commit(&self, file: &str, message: &str) -> String {
        fs::write(self.root.path().join(file), message).unwrap();
        self.git(&["add", file]);
        self.git(&["commit", "-q", "-m", message]);
        self.git(&["log", "-1", "--format=%h"])
    }

    fn as_plan(&self) -> PlanRef<'_> {
        PlanRef(&self.plan)
    }
}

struct PlanRef<'a>(&'a Path);

impl PlanRef<'_> {
    fn set_box(&self, id: usize, marker: &str) {
        let path = self.0.join("README.md");
        let text = fs::read_to_string(&path).unwrap();
        fs::write(&path, set_box(&text, id, marker)).unwrap();
    }

    fn state(&self) -> Value {
        state_of(self.0)
    }
}

#[test]
fn git_gives_a_checked_task_the_commit_that_names_it() {
    let repo = Repo::new("PLAN_git_trace", 5, 1);
    let _other = repo.commit("noise.txt", "Tidy the workspace");
    let older = repo.commit("a.txt", "Task 3 of PLAN_git_trace: first try at the queue");
    let task2 = repo.commit("b.txt", "Task 2 of PLAN_git_trace: store events");
    let task3 = repo.commit("c.txt", "Task 3 of PLAN_git_trace: add the retry queue");
    assert_ne!(older, task3);
    let plan = repo.as_plan();
    plan.set_box(2, "x");
    plan.set_box(3, "x");
    let before = plan.state();

    let run = reconcile_in(
        Some(repo.root.path()),
        &["--write", "--git", "--json"],
        repo.plan.as_path(),
    );
    run.assert_code(0, "--write --git");
    let state = plan.state();
    assert_eq!(task_of(&state, 2)["commit"], task2.as_str(), "{state:#}");
    assert_eq!(
        task_of(&state, 3)["commit"],
        task3.as_str(),
        "the newest commit naming task 3 wins"
    );
    assert!(
        task_of(&state, 4).get("commit").is_none(),
        "unchecked task 4 got a commit"
    );
    assert_eq!(
        task_of(&state, 1)["commit"],
        task_of(&before, 1)["commit"],
        "an existing commit is kept"
    );
    assert_a_change_of_task(&run, 3, &task3);

    // Idempotent with --git too.
    let settled = fs::read(repo.plan.join("state.json")).unwrap();
    let progress = fs::read(repo.plan.join("PROGRESS.md")).unwrap();
    reconcile_in(
        Some(repo.root.path()),
        &["--write", "--git"],
        repo.plan.as_path(),
    )
    .assert_code(0, "second --write --git");
    assert_eq!(fs::read(repo.plan.join("state.json")).unwrap(), settled);
    assert_eq!(fs::read(repo.plan.join("PROGRESS.md")).unwrap(), progress);
}

#[test]
fn git_ignores_commits_of_another_plan_whose_name_extends_this_one() {
    let repo = Repo::new("PLAN_git_trace", 4, 1);
    let other = repo.commit(
        "a.txt",
        "Task 3 of PLAN_git_trace_other: another plan's work",
    );
    let plan = repo.as_plan();
    plan.set_box(3, "x");
    reconcile_in(
        Some(repo.root.path()),
        &["--write", "--git"],
        repo.plan.as_path(),
    )
    .assert_code(0, "--write --git");
    let state = plan.state();
    assert!(
        task_of(&state, 3).get("commit").is_none(),
        "task 3 of PLAN_git_trace got {other}, a commit of PLAN_git_trace_other: {:#}",
        task_of(&state, 3)
    );
}

// ---------------------------------------------------------------------------------------------
// The desync report
// ---------------------------------------------------------------------------------------------

#[test]
fn the_json_report_names_the_direction_the_task_and_the_readme_line() {
    let plan = Plan::full("PLAN_json_report", 5, 2);
    plan.check_in_markdown(3, "3/5");
    let readme = plan.read("README.md");
    let before = plan.snapshot();

    let run = reconcile(&plan, &["--json"]);
    run.assert_code(1, "check, markdown ahead");
    plan.assert_unchanged(&before, "check");
    let doc = run.json();
    assert_eq!(doc["dwp"], 2);
    assert_eq!(doc["command"], "reconcile");
    assert_eq!(doc["ok"], false);
    let report = &doc["reconcile"];
    assert_eq!(report["plan"], "PLAN_json_report");
    assert_eq!(report["in_sync"], false);
    assert_eq!(report["written"], false);
    assert_eq!(report["old_sha256"], plan.state_sha256());
    let first = &report["desync"][0];
    assert_eq!(first["direction"], "markdown ahead", "{report:#}");
    assert_eq!(first["kind"], "markdown_ahead");
    assert_eq!(first["task"], 3);
    assert_eq!(first["state"], "pending");
    assert_eq!(first["line"], index_line(&readme, 3));
    assert!(
        first["message"].as_str().unwrap().contains("task 3"),
        "{first:#}"
    );
    assert_eq!(
        directions(report, "desync"),
        ["completed_count drift", "markdown ahead"]
    );
    let count = report["desync"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["direction"] == "completed_count drift")
        .unwrap();
    assert_eq!(
        (count["state"].clone(), count["boxes"].clone()),
        (json!(2), json!(3))
    );
    assert_eq!(count["task"], Value::Null);

    // The human form prints each disagreement with its direction and README line.
    let human = reconcile(&plan, &[]);
    human.assert_code(1, "check (human)");
    let line = index_line(&readme, 3);
    assert!(
        human
            .stdout
            .contains(&format!("README.md:{line}: task 3: markdown ahead: ")),
        "{}",
        human.stdout
    );
    assert!(
        human
            .stdout
            .contains("desync: PLAN_json_report · 2 disagreements"),
        "{}",
        human.stdout
    );
}

#[test]
fn each_direction_is_reported_with_its_task_and_line() {
    let plan = Plan::full("PLAN_every_direction", 6, 3);
    plan.set_box(2, " "); // state ahead
    plan.set_box(4, "x"); // markdown ahead
    plan.set_box(5, "~"); // odd marker
    plan.retitle_in_markdown(1, "Renamed first task");
    plan.set_plan_status("9/6");
    let readme = plan.read("README.md");
    let run = reconcile(&plan, &["--json"]);
    run.assert_code(1, "check");
    let report = &run.payload();
    let found: Vec<(String, Value, Value)> = report["desync"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["direction"].as_str().unwrap().to_owned(),
                d["task"].clone(),
                d["line"].clone(),
            )
        })
        .collect();
    let status_line = readme
        .lines()
        .position(|l| l.starts_with("Plan Status:"))
        .unwrap()
        + 1;
    for expected in [
        (
            "title drift".to_owned(),
            json!(1),
            json!(index_line(&readme, 1)),
        ),
        (
            "state ahead".to_owned(),
            json!(2),
            json!(index_line(&readme, 2)),
        ),
        (
            "markdown ahead".to_owned(),
            json!(4),
            json!(index_line(&readme, 4)),
        ),
        (
            "odd marker".to_owned(),
            json!(5),
            json!(index_line(&readme, 5)),
        ),
        (
            "plan status drift".to_owned(),
            Value::Null,
            json!(status_line),
        ),
    ] {
        assert!(found.contains(&expected), "{expected:?} not in {found:?}");
    }
    // 3 completed in state, boxes: 1, 3, 4 → still 3: no completed_count drift.
    assert_eq!(found.len(), 5, "{found:?}");
}

// ---------------------------------------------------------------------------------------------
// Suspected bugs
// ---------------------------------------------------------------------------------------------

#[test]
fn a_plan_the_check_reports_in_sync_is_left_unchanged_by_write() {
    for blocked in [false, true] {
        let plan = Plan::full("PLAN_started_task_kept", 4, 1);
        common::dwp()
            .inherit_home()
            .arg("update")
            .arg(&plan.dir)
            .args(["--task", "2", "--status", "in_progress"])
            .assert()
            .success();
        if blocked {
            common::dwp()
                .inherit_home()
                .arg("update")
                .arg(&plan.dir)
                .args([
                    "--task",
                    "2",
                    "--status",
                    "blocked",
                    "--block-reason",
                    "staging database unreachable",
                    "--block-needs",
                    "VPN credentials",
                ])
                .assert()
                .success();
        }
        let check = reconcile(&plan, &[]);
        check.assert_code(0, "check");
        let file_sha = plan.state_sha256();
        let before = plan.snapshot();
        reconcile(&plan, &["--write"]).assert_code(0, "--write");
        plan.assert_unchanged(
            &before,
            &format!("--write on a plan the check called in sync (blocked={blocked})"),
        );
        assert!(
            check.stdout.contains(&format!("sha256 {file_sha}")),
            "the check prints the sha256 of state.json as it is ({file_sha}):\n{}",
            check.stdout
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Writers never damage state on a shape they do not understand (issue #12)
// ---------------------------------------------------------------------------------------------

/// Remove task `id`'s line from the README index (and recount Plan Status over what is left).
fn drop_index_line(plan: &Plan, id: usize, status: &str) {
    plan.edit("README.md", |text| {
        text.lines()
            .filter(|l| !(l.starts_with("- [") && l.contains(&format!("] Task {id}: "))))
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    });
    plan.set_plan_status(status);
}

/// A plan of four tasks, the first completed, whose last task carries a failing gate record
/// from an earlier attempt.
fn plan_with_evidence_on_task_four(name: &str) -> Plan {
    let plan = Plan::full(name, 4, 1);
    let mut state = plan.state();
    state["tasks"][3]["gates"] = json!([{
        "command": "cargo test",
        "passes": false,
        "exit_code": 101,
        "last_run": "2026-06-09T15:30:00Z",
        "evidence": "3 failed"
    }]);
    plan.write(
        "state.json",
        &(serde_json::to_string_pretty(&state).unwrap() + "\n"),
    );
    plan
}

#[test]
fn write_refuses_to_drop_a_task_that_carries_evidence_and_names_it() {
    let plan = plan_with_evidence_on_task_four("PLAN_drop_guard");
    drop_index_line(&plan, 4, "1/3");
    let run = plan.refused(
        &["--write"],
        1,
        "--write dropping task 4 and its gate record",
    );
    let first = run.stderr.lines().next().unwrap();
    assert!(
        first.starts_with(
            "dwp reconcile: task 4 is in state.json with 1 gate record but not in the README index"
        ),
        "{first}"
    );
    assert!(first.contains("a write would drop it"), "{first}");
    assert!(
        run.stderr.contains("hint: restore task 4's line"),
        "{}",
        run.stderr
    );
    // The check still reports what disagrees.
    let report = reconcile(&plan, &["--json"]).payload();
    assert!(directions(&report, "desync").contains(&"missing in markdown".to_owned()));
}

#[test]
fn a_task_that_carries_nothing_leaves_without_drop_task() {
    let plan = Plan::full("PLAN_drop_nothing", 4, 1);
    drop_index_line(&plan, 4, "1/3");
    reconcile(&plan, &["--write"]).assert_code(0, "a pending task without evidence");
    assert_eq!(plan.state()["task_count"], 3);
}

#[test]
fn drop_task_names_a_task_of_the_state_that_left_the_index() {
    let plan = Plan::full("PLAN_drop_usage", 4, 1);
    let before = plan.snapshot();
    let run = reconcile(&plan, &["--write", "--drop-task", "2"]);
    run.assert_code(2, "task 2 is still indexed");
    assert!(
        run.stderr.contains("still in the README index"),
        "{}",
        run.stderr
    );
    reconcile(&plan, &["--write", "--drop-task", "9"]).assert_code(2, "no task 9");
    reconcile(&plan, &["--drop-task", "2"]).assert_code(2, "--drop-task needs --write");
    plan.assert_unchanged(&before, "usage errors");
}

#[test]
fn drop_task_lets_the_task_go_and_records_what_it_carried_in_progress() {
    let plan = plan_with_evidence_on_task_four("PLAN_drop_recorded");
    drop_index_line(&plan, 4, "1/3");
    // The refusal's hint names the step; run it.
    let refused = reconcile(&plan, &["--write"]);
    refused.assert_code(1, "task 4 carries a gate record");
    assert!(
        refused.stderr.contains("`--drop-task 4`"),
        "{}",
        refused.stderr
    );
    let run = reconcile(&plan, &["--write", "--drop-task", "4"]);
    run.assert_code(0, "dropped deliberately");
    assert_eq!(plan.state()["task_count"], 3);
    let progress = plan.read("PROGRESS.md");
    assert!(
        progress.contains(
            "- task 4: missing in markdown — removed with --drop-task: it carried 1 gate record"
        ),
        "{progress}"
    );
}

#[test]
fn write_refuses_a_task_list_it_cannot_read_whole_and_the_check_reports_it() {
    let plan = Plan::full("PLAN_unreadable_item", 4, 1);
    plan.edit("README.md", |t| {
        t.replace("- [ ] Task 3:", "- [ ] Update the changelog\n- [ ] Task 3:")
    });
    let run = plan.refused(&["--write"], 1, "an item dwp cannot read");
    assert!(
        run.stderr.contains("Update the changelog"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("README.md:"), "{}", run.stderr);
    let report = reconcile(&plan, &["--json"]);
    report.assert_code(1, "check");
    assert_eq!(
        directions(&report.payload(), "desync"),
        ["unreadable index line"]
    );
}

#[test]
fn a_readme_without_a_plan_status_line_is_reported_and_left_to_the_markdown() {
    let plan = Plan::full("PLAN_no_plan_status", 4, 1);
    plan.edit("README.md", |t| t.replace("Plan Status: 1/4\n", ""));
    let report = reconcile(&plan, &["--json"]);
    report.assert_code(1, "check");
    let json = report.json();
    assert_eq!(
        directions(&json["reconcile"], "desync"),
        ["plan status drift"]
    );
    assert!(
        json["reconcile"]["desync"][0]["message"]
            .as_str()
            .unwrap()
            .contains("no `Plan Status: X/N` line (the boxes say 1/4)")
    );
    // --write changes nothing in state.json and lists it as still to fix in the markdown.
    let sha = plan.state_sha256();
    let run = reconcile(&plan, &["--write", "--json"]);
    run.assert_code(0, "write");
    assert_eq!(plan.state_sha256(), sha);
    assert_eq!(
        directions(&run.payload(), "remaining"),
        ["plan status drift"]
    );
}

#[test]
fn write_refuses_to_hand_a_tasks_evidence_to_the_task_that_took_its_number() {
    // Task 2 (completed, with its gate) is removed from the README and the later tasks are
    // renumbered: README task 2 now links task 3's file.
    let plan = Plan::full("PLAN_renumbered_tasks", 4, 2);
    plan.edit("README.md", |text| {
        text.lines()
            .filter(|l| !l.contains("] Task 2: "))
            .map(|l| {
                l.replace("] Task 3: ", "] Task 2: ")
                    .replace("] Task 4: ", "] Task 3: ")
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    });
    plan.set_plan_status("1/3");
    let run = plan.refused(&["--write"], 1, "renumbered tasks");
    assert!(
        run.stderr.contains("task 2 is `2.task_synthetic_2.md` in state.json, with a completed status, 1 gate record, an outcome, commit 0a1b2c5, but its index line links `3.task_synthetic_3.md`"),
        "{}",
        run.stderr
    );
}
