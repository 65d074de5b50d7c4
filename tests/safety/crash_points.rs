//! Every crash point of every multi-file writer. Each writer runs once under `strace`, which
//! records the syscalls it makes; each one that changes the plan folder (a file created,
//! written, renamed, removed, a folder made or removed) is a crash point. For each, the writer
//! runs again on a fresh copy of its plan and `strace` kills it with SIGKILL on entry to that
//! syscall, leaving the folder as a crash there would. (A kill on entry to a syscall that
//! changes nothing leaves what a kill on entry to the next one that does leaves, so these are
//! every state a kill can leave.) From each state:
//!
//! - the next writer (`dwp reconcile --write PLAN`, the hint of an interrupted write), with
//!   every hint it prints run as printed while the crash has left something behind (the dead
//!   writer's lock, an intent record, a publication marker), must leave the plan whole: byte
//!   for byte what it is when the writer ran to its end, or when it never ran;
//! - every `dwp ...` hint `dwp verify` and `dwp validate` print there, run as printed (and the
//!   hints it prints in turn, while the crash has left something behind), must succeed and leave
//!   the plan whole in the same sense.
//!
//! A crash point after one that only built a temp file (or a lock folder not yet placed)
//! leaves the state judged at that one, but for the temp file: it is counted, not judged again.
//! Each writer is its own test, bounded by its number of crash points (tens: a few seconds).
//! Run them with `cargo test --test safety crash_points -- --nocapture`, which prints per writer
//! the crash points explored and the states found bad.

use crate::common::{self, NOW, Run, changed_paths};
use dwp::plan::model::{Generation, PlanFormat};
use dwp::synth::SynthPlan;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// The syscalls that can change a folder, traced (those of them that do, on the plan's
/// folder, are the crash points).
const TRACED: &str = "trace=openat,creat,mkdir,mkdirat,rename,renameat,renameat2,unlink,unlinkat,\
rmdir,write,writev,pwrite64,fchmod,fchmodat,ftruncate,truncate,link,linkat,symlink,symlinkat";

/// What a crash leaves that a recovery must clear, by name: the writer's lock, an intent
/// record, a publication marker.
const LEFTOVERS: [&str; 4] = [
    "state.json.lock",
    ".dwp-intent.json",
    ".finalizing.json",
    ".ledger.lock",
];

/// How many hints a recovery follows before it is judged to go nowhere.
const MOST_HINTS: usize = 6;

/// One writer and the plan it changes (`intent_recovery` kills five of them at their renames).
pub(super) struct Writer {
    pub(super) name: &'static str,
    pub(super) plan: fn(&Path) -> PathBuf,
    /// The arguments after `dwp`, `PLAN` standing for the plan folder (else it goes second).
    pub(super) args: &'static [&'static str],
    /// The next writer, which must make a killed run's plan whole, in the same form:
    /// [`NEXT_WRITER`] (`dwp reconcile PLAN --write`), or the writer itself where running it
    /// again is how an interrupted run is completed (a record plan's `init --contract`, rule 19).
    pub(super) next: &'static [&'static str],
}

/// The next writer of most writers: `dwp reconcile PLAN --write`, the step DWP087's hint names.
pub(super) const NEXT_WRITER: &[&str] = &["reconcile", "--write"];

// ---------------------------------------------------------------------------------------------
// The plans
// ---------------------------------------------------------------------------------------------

const PLAN_NAME: &str = "PLAN_crash_points";

pub(super) fn synth(root: &Path) -> PathBuf {
    SynthPlan::new(PLAN_NAME, 4)
        .format(PlanFormat::Full)
        .completed(2)
        .write(root)
        .unwrap()
}

/// `dwp` on `plan`, run to its end (a step of building a test plan).
fn prepare(plan: &Path, args: &[&str]) {
    let run = run_dwp(plan, args);
    assert_eq!(
        run.code, 0,
        "preparing the plan: {}{}",
        run.stdout, run.stderr
    );
}

/// Task 3 in progress, its log filled: `update --tick` completes it, ticking its box.
fn task_3_started(root: &Path) -> PathBuf {
    let plan = synth(root);
    prepare(&plan, &["update", "--task", "3", "--status", "in_progress"]);
    let log = plan.join("3.task_synthetic_3.md");
    common::fill_task_log(&log, 3);
    plan
}

/// Three tasks, ready to publish but for task 3's box and the Plan Status count: `update
/// --tick` of task 3 publishes the plan.
fn last_task_unticked(root: &Path) -> PathBuf {
    let plan = SynthPlan::new(PLAN_NAME, 3)
        .ready_to_publish()
        .write(root)
        .unwrap();
    common::edit(&plan.join("README.md"), "- [x] Task 3:", "- [ ] Task 3:");
    common::edit(
        &plan.join("README.md"),
        "Plan Status: 3/3",
        "Plan Status: 2/3",
    );
    plan
}

/// Task 3 in progress: `dwp run` records the gate it observes.
fn task_3_at_work(root: &Path) -> PathBuf {
    let plan = synth(root);
    prepare(&plan, &["update", "--task", "3", "--status", "in_progress"]);
    plan
}

/// Task 3 renamed in the README: `reconcile --write` changes state.json and PROGRESS.md.
pub(super) fn title_drift(root: &Path) -> PathBuf {
    let plan = synth(root);
    common::edit(&plan.join("README.md"), "Task 3: ", "Task 3: Renamed ");
    plan
}

/// Awaiting approval in state.json and in the README's Approval row: `approve` changes both and
/// PROGRESS.md.
pub(super) fn approval_pending(root: &Path) -> PathBuf {
    let plan = synth(root);
    common::edit_state(&plan, |state| state["approval"] = "pending".into());
    common::edit(
        &plan.join("README.md"),
        "| Approval | approved |",
        "| Approval | pending |",
    );
    plan
}

/// No state layer yet, and no PROGRESS.md: `init` writes five files and a folder entry.
pub(super) fn markdown_only(root: &Path) -> PathBuf {
    let plan = synth(root);
    for name in ["state.json", "manifest.json", "PROGRESS.md"] {
        std::fs::remove_file(plan.join(name)).unwrap();
    }
    plan
}

pub(super) fn v1(root: &Path) -> PathBuf {
    SynthPlan::new(PLAN_NAME, 4)
        .generation(Generation::V1)
        .completed(2)
        .write(root)
        .unwrap()
}

/// A lock whose owner is on another host: only `lock recover --force` removes it, recording
/// why.
fn foreign_lock(root: &Path) -> PathBuf {
    let plan = synth(root);
    let lock = plan.join("state.json.lock");
    std::fs::create_dir(&lock).unwrap();
    let owner = serde_json::json!({
        "pid": 4242,
        "host": "a-host-that-is-not-this-one",
        "command": "dwp update",
        "started_at": NOW,
    });
    std::fs::write(lock.join("owner.json"), owner.to_string()).unwrap();
    plan
}

// ---------------------------------------------------------------------------------------------
// The writers
// ---------------------------------------------------------------------------------------------

const TICK: Writer = Writer {
    name: "update --tick",
    plan: task_3_started,
    args: &[
        "update",
        "--task",
        "3",
        "--status",
        "completed",
        "--gate",
        "cargo test|0|13 passed, 0 failed",
        "--tick",
    ],
    next: NEXT_WRITER,
};

const TICK_LAST: Writer = Writer {
    name: "update --tick (the last task: publication)",
    plan: last_task_unticked,
    args: &[
        "update",
        "--task",
        "3",
        "--status",
        "completed",
        "--gate",
        "cargo test|0|13 passed",
        "--tick",
    ],
    next: NEXT_WRITER,
};

pub(super) const INIT: Writer = Writer {
    name: "init",
    plan: markdown_only,
    args: &["init", "--agent", "tester", "--model", "none"],
    next: NEXT_WRITER,
};

pub(super) const MIGRATE: Writer = Writer {
    name: "migrate --to v5",
    plan: v1,
    args: &["migrate", "--to", "v5"],
    next: NEXT_WRITER,
};

const RUN: Writer = Writer {
    name: "run",
    plan: task_3_at_work,
    args: &[
        "run",
        "PLAN",
        "--task",
        "3",
        "--",
        "echo",
        "4 passed, 0 failed",
    ],
    next: NEXT_WRITER,
};

pub(super) const AMEND: Writer = Writer {
    name: "amend --invalidate",
    plan: synth,
    args: &[
        "amend",
        "--task",
        "2",
        "--original",
        "the suite passes",
        "--observed",
        "the suite ran against a stub",
        "--disposition",
        "failed-gate",
        "--reason",
        "the evidence did not exercise the real store",
        "--authority",
        "evidence",
        "--affected",
        "2",
        "--invalidate",
        "cargo test",
    ],
    next: NEXT_WRITER,
};

pub(super) const APPROVE: Writer = Writer {
    name: "approve",
    plan: approval_pending,
    args: &["approve", "--by", "the user"],
    next: NEXT_WRITER,
};

pub(super) const RECONCILE: Writer = Writer {
    name: "reconcile --write",
    plan: title_drift,
    args: &["reconcile", "--write"],
    next: NEXT_WRITER,
};

pub(super) const LOCK_RECOVER: Writer = Writer {
    name: "lock recover --force",
    plan: foreign_lock,
    args: &[
        "lock",
        "recover",
        "PLAN",
        "--force",
        "--reason",
        "the writer's host was rebooted",
    ],
    next: NEXT_WRITER,
};

// ---------------------------------------------------------------------------------------------
// Record plans (DWP v6/v7): the journal's writer
// ---------------------------------------------------------------------------------------------

/// A copy of the record-plan fixture `case` in `root`, with the approver's note and a draft of
/// its contract inside the plan folder (no markdown, no JSON the plan reads: `PLAN/...` args
/// name them, and their paths settle as the plan's).
fn record_fixture(root: &Path, case: &str) -> PathBuf {
    let source = std::fs::read_dir(common::repo_root().join("conformance-fixtures").join(case))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .unwrap();
    let plan = root.join(source.file_name().unwrap());
    common::copy_plan(&source, &plan);
    std::fs::write(plan.join("approval-note.txt"), "Approved as written.\n").unwrap();
    plan
}

fn record_in_progress(root: &Path) -> PathBuf {
    record_fixture(root, "record-valid-v7-in-progress")
}

fn record_unapproved(root: &Path) -> PathBuf {
    record_fixture(root, "record-dwp111-approval-cites-draft")
}

fn record_torn(root: &Path) -> PathBuf {
    record_fixture(root, "record-dwp105-torn-tail")
}

/// The markdown of a record plan, its contract as a draft beside it: `init --contract` makes
/// the record plan.
fn record_unmaterialized(root: &Path) -> PathBuf {
    let plan = record_fixture(root, "record-valid-v7-fresh");
    let contract = std::fs::read(plan.join("contract.json")).unwrap();
    let mut draft: serde_json::Value = serde_json::from_slice(&contract).unwrap();
    draft.as_object_mut().unwrap().remove("contract_id");
    std::fs::write(plan.join("draft.contract"), draft.to_string()).unwrap();
    for name in [
        "manifest.json",
        "contract.json",
        "journal.ndjson",
        "state.json",
    ] {
        let _ = std::fs::remove_file(plan.join(name));
    }
    plan
}

const RECORD_START: Writer = Writer {
    name: "update --status in_progress (a record plan's task_start)",
    plan: record_in_progress,
    args: &[
        "update",
        "--task",
        "T-convert-reference",
        "--status",
        "in_progress",
    ],
    next: NEXT_WRITER,
};

const RECORD_APPROVE: Writer = Writer {
    name: "approve (a record plan)",
    plan: record_unapproved,
    args: &[
        "approve",
        "--by",
        "ana.ruiz",
        "--note",
        "PLAN/approval-note.txt",
    ],
    next: NEXT_WRITER,
};

const RECORD_MEND: Writer = Writer {
    name: "reconcile --write (a record plan's torn journal mended)",
    plan: record_torn,
    args: &["reconcile", "--write"],
    next: NEXT_WRITER,
};

const RECORD_INIT_ARGS: &[&str] = &[
    "init",
    "--contract",
    "PLAN/draft.contract",
    "--by",
    "maria.lopez",
    "--note",
    "PLAN/approval-note.txt",
];

const RECORD_INIT: Writer = Writer {
    name: "init --contract (a record plan made)",
    plan: record_unmaterialized,
    args: RECORD_INIT_ARGS,
    // Rule 19: an interrupted materialization is completed by running it again.
    next: RECORD_INIT_ARGS,
};

/// The in-progress record plan with a draft of its next revision beside its contract (not a
/// `*.json` name: the plan does not read it): AC-guides-build's observable check revised.
fn record_to_amend(root: &Path) -> PathBuf {
    let plan = record_in_progress(root);
    let contract = std::fs::read(plan.join("contract.json")).unwrap();
    let mut draft: serde_json::Value = serde_json::from_slice(&contract).unwrap();
    draft["acceptance"]["criteria"][1]["observable_check"] =
        "a strict build of the guides exits 0 and reports no orphan page".into();
    std::fs::write(plan.join("amend.contract"), draft.to_string()).unwrap();
    plan
}

const RECORD_AMEND_ARGS: &[&str] = &[
    "amend",
    "--contract",
    "PLAN/amend.contract",
    "--by",
    "maria.lopez",
    "--reason",
    "orphan guides built cleanly but were unreachable from the navigation",
    "--note",
    "PLAN/approval-note.txt",
];

const RECORD_AMEND: Writer = Writer {
    name: "amend --contract (a record plan's next revision)",
    plan: record_to_amend,
    args: RECORD_AMEND_ARGS,
    // Rule 24: an interrupted amendment is completed by running it again.
    next: RECORD_AMEND_ARGS,
};

const RECORD_RUN: Writer = Writer {
    name: "run (a record plan's observed gate_run)",
    plan: record_in_progress,
    args: &[
        "run",
        "PLAN",
        "--task",
        "T-convert-guides",
        "--criterion",
        "AC-guides-build",
        "--",
        "python3",
        "-c",
        "print('12 pages built')",
    ],
    next: NEXT_WRITER,
};

const RECORD_EVALUATION: Writer = Writer {
    name: "run --invariant (a record plan's observed evaluation)",
    plan: record_in_progress,
    args: &[
        "run",
        "PLAN",
        "--invariant",
        "INV-wiki-read-only",
        "--",
        "python3",
        "-c",
        "print('the wiki is untouched')",
    ],
    next: NEXT_WRITER,
};

#[test]
fn every_crash_point_of_a_record_gate_run_leaves_a_plan_its_next_writer_makes_whole() {
    explore(&RECORD_RUN);
}

#[test]
fn every_crash_point_of_an_invariant_evaluation_leaves_a_plan_its_next_writer_makes_whole() {
    explore(&RECORD_EVALUATION);
}

#[test]
fn every_crash_point_of_a_record_task_start_leaves_a_plan_its_next_writer_makes_whole() {
    explore(&RECORD_START);
}

#[test]
fn every_crash_point_of_a_record_approval_leaves_a_plan_its_next_writer_makes_whole() {
    explore(&RECORD_APPROVE);
}

#[test]
fn every_crash_point_of_a_journal_mend_leaves_a_plan_its_next_writer_makes_whole() {
    explore(&RECORD_MEND);
}

#[test]
fn every_crash_point_of_a_record_init_leaves_a_plan_its_next_writer_makes_whole() {
    explore(&RECORD_INIT);
}

#[test]
fn every_crash_point_of_a_record_amendment_leaves_a_plan_its_next_writer_makes_whole() {
    explore(&RECORD_AMEND);
}

#[test]
fn every_crash_point_of_update_tick_leaves_a_plan_its_next_writer_or_hint_makes_whole() {
    explore(&TICK);
}

#[test]
fn every_crash_point_of_update_tick_of_the_last_task_leaves_a_recoverable_publication() {
    explore(&TICK_LAST);
}

#[test]
fn every_crash_point_of_init_leaves_a_plan_its_next_writer_or_hint_makes_whole() {
    explore(&INIT);
}

#[test]
fn every_crash_point_of_migrate_leaves_a_plan_its_next_writer_or_hint_makes_whole() {
    explore(&MIGRATE);
}

#[test]
fn every_crash_point_of_run_leaves_a_plan_its_next_writer_or_hint_makes_whole() {
    explore(&RUN);
}

#[test]
fn every_crash_point_of_amend_leaves_a_plan_its_next_writer_or_hint_makes_whole() {
    explore(&AMEND);
}

#[test]
fn every_crash_point_of_approve_leaves_a_plan_its_next_writer_or_hint_makes_whole() {
    explore(&APPROVE);
}

#[test]
fn every_crash_point_of_reconcile_write_leaves_a_plan_its_next_writer_or_hint_makes_whole() {
    explore(&RECONCILE);
}

#[test]
fn every_crash_point_of_lock_recover_force_leaves_a_plan_its_next_writer_or_hint_makes_whole() {
    explore(&LOCK_RECOVER);
}

// ---------------------------------------------------------------------------------------------
// Exploring
// ---------------------------------------------------------------------------------------------

/// Run `writer` whole, then killed at each of its crash points, and judge every state a kill
/// leaves; fail naming each bad one.
fn explore(writer: &Writer) {
    if !common::strace_available("the crash-point enumeration") {
        return;
    }
    let started = std::time::Instant::now();
    let root = tempfile::tempdir().unwrap();
    let done = (writer.plan)(&root.path().join("done"));
    let calls = traced(&done, writer.args, None);
    let crash_points: Vec<&Call> = calls.iter().filter(|c| c.mutates).collect();
    assert_eq!(
        leftovers(&done),
        Vec::<&str>::new(),
        "{}: the untroubled run left something behind",
        writer.name
    );
    let mut whole = Whole {
        bases: [done, (writer.plan)(&root.path().join("untouched"))],
        next: writer.next,
        outcomes: BTreeMap::new(),
    };

    let mut bad = Vec::new();
    let mut judged = 0;
    for (k, point) in crash_points.iter().enumerate() {
        if k > 0 && only_swept(crash_points[k - 1]) {
            // The state here is the one judged at the crash point before, but for a temp file.
            continue;
        }
        judged += 1;
        let case = tempfile::tempdir().unwrap();
        // Each look at the state is at a state of its own, made by a kill: a copy would not do,
        // as a record of a lock's removal names that lock directory by its inode.
        let crash = |label: &str| -> PathBuf {
            let plan = (writer.plan)(&case.path().join(label));
            let seen = traced(&plan, writer.args, Some(point));
            assert!(
                seen.last()
                    .is_some_and(|c| c.name == point.name && c.ordinal == point.ordinal),
                "{}: the kill did not land on crash point {} ({}): the writer's syscalls \
                 differ from run to run",
                writer.name,
                k + 1,
                point.line
            );
            plan
        };
        if let Some(problem) = judge(&crash, &mut whole) {
            bad.push(format!(
                "{}: killed at crash point {} of {} ({}):\n    {problem}",
                writer.name,
                k + 1,
                crash_points.len(),
                point.line
            ));
        }
    }
    println!(
        "{}: {} crash points explored ({} distinct states judged), {} bad states, {:.1?}",
        writer.name,
        crash_points.len(),
        judged,
        bad.len(),
        started.elapsed()
    );
    assert!(
        bad.is_empty(),
        "{}: {} of {} crash points leave a plan that is not made whole:\n{}",
        writer.name,
        bad.len(),
        crash_points.len(),
        bad.join("\n")
    );
}

/// The two whole outcomes of a writer (it ran to its end; it never ran), and what a hint and
/// then the next writer make of each: a crash state followed by a hint must end as the hint
/// ends on one of them.
struct Whole {
    bases: [PathBuf; 2],
    /// The next writer's arguments ([`Writer::next`]).
    next: &'static [&'static str],
    /// By hint (the plan's path written `PLAN`; none: the next writer alone): the codes the
    /// hint exits with, and the settled plans, on each base.
    outcomes: BTreeMap<Vec<String>, ([i32; 2], [Settled; 2])>,
}

type Settled = BTreeMap<PathBuf, String>;

impl Whole {
    /// What `hint` (its commands naming `PLAN`), then the next writer, leave on each whole
    /// outcome, each on its own copy.
    fn after(&mut self, hint: &[String]) -> &([i32; 2], [Settled; 2]) {
        let bases = self.bases.clone();
        let next = self.next;
        self.outcomes.entry(hint.to_vec()).or_insert_with(|| {
            let mut codes = [0; 2];
            let settled = [0, 1].map(|i| {
                let dir = copy_of(
                    &bases[i],
                    &format!("hint-{}", common::sha256_hex(hint.join("\n").as_bytes())),
                );
                if !hint.is_empty() {
                    codes[i] = apply_hint(&dir, hint).last_code();
                }
                next_writer(&dir, next).settled
            });
            (codes, settled)
        })
    }
}

/// A copy of the plan folder `plan`, beside it in a folder `label` (same plan name).
fn copy_of(plan: &Path, label: &str) -> PathBuf {
    let dir = plan
        .parent()
        .unwrap()
        .join(label)
        .join(plan.file_name().unwrap());
    common::copy_tree(plan, &dir, &[]);
    dir
}

/// Run the commands of `hint` (naming `PLAN`) on `plan`, the last followed as a step is.
fn apply_hint(plan: &Path, hint: &[String]) -> Followed {
    let named: Vec<String> = hint
        .iter()
        .map(|c| c.replace("PLAN", plan.to_str().unwrap()))
        .collect();
    let (last, before) = named.split_last().expect("a hint names a command");
    for line in before {
        execute(plan, &Command::Printed(line.clone()));
    }
    follow(plan, Command::Printed(last.clone()))
}

/// What is wrong with the state a kill leaves (`crash(label)` makes it anew), if anything: the
/// next writer and each hint the readers print there, each on a state of its own.
fn judge(crash: &dyn Fn(&str) -> PathBuf, whole: &mut Whole) -> Option<String> {
    let plan = crash("next");
    let own_path = plan.to_str().unwrap().to_owned();
    let hints = reader_hints(&plan);
    let next = next_writer(&plan, whole.next);
    let wholes = whole.after(&[]).1.clone();
    if !is_whole(&next.settled, &wholes) {
        return Some(format!(
            "the next writer leaves files unlike either whole outcome (they differ from the \
             change run whole in {:?}); it ran:\n{}",
            changed_paths(&next.settled, &wholes[0]),
            next.transcript()
        ));
    }
    for (n, printed) in hints.into_iter().enumerate() {
        let hint: Vec<String> = printed
            .iter()
            .map(|c| c.replace(&own_path, "PLAN"))
            .collect();
        let shown = hint.join("` then `");
        let dir = crash(&format!("hint-{n}"));
        let followed = apply_hint(&dir, &hint);
        let after = next_writer(&dir, whole.next).settled;
        let (codes, on_whole) = whole.after(&hint).clone();
        if followed.last_code() != 0 && codes.contains(&0) {
            return Some(format!(
                "the hint `{shown}` fails where it is printed; it ran:\n{}",
                followed.transcript()
            ));
        }
        if !is_whole(&after, &on_whole) && !is_whole(&after, &wholes) {
            return Some(format!(
                "the hint `{shown}` leaves files unlike either whole outcome (they differ from \
                 the change run whole, then the hint, in {:?}); it ran:\n{}",
                changed_paths(&after, &on_whole[0]),
                followed.transcript()
            ));
        }
    }
    None
}

/// Where a writer puts new files before its record (a `dwp run` gate log, a v5 plan's or a
/// record plan's): a kill may leave one that no record names, by design (docs/DECISIONS.md,
/// "Folders and new files first").
const WRITTEN_FIRST: [&str; 2] = ["analysis_results/gates/", "gates/"];

/// Whether `settled` is one of the whole outcomes `wholes` (ran to its end; never ran), the
/// latter with any file its writer writes first, as the full run wrote it.
fn is_whole(settled: &Settled, wholes: &[Settled; 2]) -> bool {
    let [done, untouched] = wholes;
    let written_first = |path: &PathBuf, text: &String| {
        WRITTEN_FIRST.iter().any(|folder| path.starts_with(folder))
            && !untouched.contains_key(path)
            && done.get(path) == Some(text)
    };
    let without: Settled = settled
        .iter()
        .filter(|(path, text)| !written_first(path, text))
        .map(|(path, text)| (path.clone(), text.clone()))
        .collect();
    wholes.contains(settled) || &without == untouched
}

/// The leftovers of a crash in `plan`.
fn leftovers(plan: &Path) -> Vec<&'static str> {
    LEFTOVERS
        .into_iter()
        .filter(|name| std::fs::symlink_metadata(plan.join(name)).is_ok())
        .collect()
}

/// A command to run: dwp's own arguments, or a line dwp printed.
#[derive(Clone, Debug)]
enum Command {
    Dwp(Vec<String>),
    Printed(String),
}

/// What a recovery ran, and the plan it left.
struct Followed {
    runs: Vec<(String, Run)>,
    settled: Settled,
}

impl Followed {
    fn last_code(&self) -> i32 {
        self.runs.last().map_or(0, |(_, run)| run.code)
    }

    fn transcript(&self) -> String {
        self.runs
            .iter()
            .map(|(command, run)| {
                format!(
                    "      $ {command}\n      exit {}\n{}",
                    run.code,
                    indent(&format!("{}{}", run.stdout, run.stderr))
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("        {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The next writer (`next`, [`Writer::next`]: most often `dwp reconcile PLAN --write`, the step
/// DWP087's hint names), following the hints it prints while the crash has left something
/// behind.
fn next_writer(plan: &Path, next: &[&str]) -> Followed {
    follow(plan, Command::Dwp(dwp_args(plan, next)))
}

/// Run `first`; while it fails and the crash has left something behind, run the first `dwp`
/// command its hint names, as printed (and so on, for a hint that fails in turn), then `first`
/// again.
fn follow(plan: &Path, first: Command) -> Followed {
    let mut runs = Vec::new();
    let mut next = first.clone();
    for _ in 0..MOST_HINTS {
        let (shown, run) = execute(plan, &next);
        let code = run.code;
        let hint = hint_lines(&run.stderr).into_iter().next();
        runs.push((shown, run));
        let was_first = same(&next, &first);
        if code == 0 || leftovers(plan).is_empty() {
            if was_first {
                break;
            }
            next = first.clone();
            continue;
        }
        let Some(hint) = hint else { break };
        // Every command of the hint, in order (`dwp lock status P` then `dwp lock recover P`),
        // the last one judged as the step.
        let (last, before) = hint.split_last().expect("a hint names a command");
        for line in before {
            let (shown, run) = execute(plan, &Command::Printed(line.clone()));
            runs.push((shown, run));
        }
        next = Command::Printed(last.clone());
    }
    Followed {
        runs,
        settled: settled(plan),
    }
}

fn same(a: &Command, b: &Command) -> bool {
    match (a, b) {
        (Command::Dwp(a), Command::Dwp(b)) => a == b,
        (Command::Printed(a), Command::Printed(b)) => a == b,
        _ => false,
    }
}

/// Run `command` in the plan's parent folder: its line as shown, and its run.
fn execute(plan: &Path, command: &Command) -> (String, Run) {
    let folder = plan.parent().unwrap();
    match command {
        Command::Dwp(args) => {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            (
                format!("dwp {}", args.join(" ")),
                common::dwp_in(folder, &args),
            )
        }
        Command::Printed(line) => {
            let filled = line
                .replace("--reason TEXT", "--reason 'the writer was killed'")
                .replace("--older-than SECONDS", "--older-than 0");
            (line.clone(), common::run_printed(&filled, folder))
        }
    }
}

/// The `dwp ...` commands in backticks of each `hint:` line of `text` that names one.
fn hint_lines(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("hint: "))
        .map(|hint| {
            hint.split('`')
                .skip(1)
                .step_by(2)
                .filter(|c| c.starts_with("dwp "))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .filter(|commands| !commands.is_empty())
        .collect()
}

/// Every distinct hint naming `dwp ...` commands that `dwp verify PLAN` and `dwp validate PLAN`
/// print on `plan`.
fn reader_hints(plan: &Path) -> Vec<Vec<String>> {
    let folder = plan.parent().unwrap();
    let path = plan.to_str().unwrap();
    let mut hints = Vec::new();
    for reader in ["verify", "validate"] {
        let run = common::dwp_in(folder, &[reader, path]);
        for hint in hint_lines(&format!("{}\n{}", run.stdout, run.stderr)) {
            if !hints.contains(&hint) {
                hints.push(hint);
            }
        }
    }
    hints
}

// ---------------------------------------------------------------------------------------------
// Tracing
// ---------------------------------------------------------------------------------------------

/// One syscall the writer entered: its name, its ordinal among the calls of that name (what
/// `strace -e inject=NAME:when=N` counts), its line, and whether it changed the plan's folder.
#[derive(Debug, Clone)]
struct Call {
    name: String,
    ordinal: usize,
    line: String,
    mutates: bool,
}

/// `dwp ARGS` on `plan` under strace (the main thread only: a gate's command and its output's
/// reader are not the writer); `kill`: SIGKILL on entry to that call. Returns the calls made.
fn traced(plan: &Path, args: &[&str], kill: Option<&Call>) -> Vec<Call> {
    let root = plan.parent().unwrap();
    let trace = root.join("strace.out");
    let mut strace: Vec<String> = ["-qq", "-y", "-s", "0", "-e", TRACED]
        .map(String::from)
        .into();
    if let Some(call) = kill {
        strace.push("-e".into());
        strace.push(format!(
            "inject={}:signal=KILL:when={}",
            call.name, call.ordinal
        ));
    }
    strace.push("-o".into());
    strace.push(trace.display().to_string());
    let mut command = common::dwp()
        .args(dwp_args(plan, args))
        .in_dir("/")
        .wrapped("strace", &strace);
    command.stdout(Stdio::null()).stderr(Stdio::null());
    let status = command.status().expect("run strace");
    if kill.is_none() {
        assert!(status.success(), "the untroubled run failed: {status:?}");
    }
    let text = std::fs::read_to_string(&trace).unwrap_or_default();
    std::fs::remove_file(&trace).ok();
    let folder = std::fs::canonicalize(root).unwrap().display().to_string();
    calls(&text, &folder)
}

/// The calls of a trace, each judged against the folder `root` (in a killed run the last call
/// never returned: it is shown as entered, and changed nothing).
fn calls(trace: &str, root: &str) -> Vec<Call> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for line in trace.lines() {
        let Some(open) = line.find('(') else { continue };
        let name = &line[..open];
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            continue;
        }
        let count = counts.entry(name.to_owned()).or_default();
        *count += 1;
        let entered = line.rsplit_once(") ").map_or(line, |(call, _)| call);
        out.push(Call {
            name: name.to_owned(),
            ordinal: *count,
            line: entered.to_owned(),
            mutates: mutates(name, line, root),
        });
    }
    out
}

/// Whether the traced call `line` (of syscall `name`) changed something under `root`.
fn mutates(name: &str, line: &str, root: &str) -> bool {
    let result = line.rsplit_once(" = ").map(|(_, r)| r);
    if !result.is_some_and(|r| !r.starts_with('-') && !r.starts_with('?')) {
        return false;
    }
    let args = &line[name.len() + 1..];
    match name {
        // The descriptor written to, as `-y` decodes it: `write(4</root/plan/x>, ...`.
        "write" | "writev" | "pwrite64" => args
            .split_once('<')
            .is_some_and(|(_, rest)| rest.starts_with(root)),
        "openat" | "creat" => (name == "creat" || args.contains("O_CREAT")) && args.contains(root),
        _ => args.contains(root),
    }
}

/// Whether `call` only built something the next write sweeps and [`settled`] leaves out (a
/// temp file, a lock folder not yet placed): a kill on entry to the next crash point then
/// leaves what a kill on entry to this one leaves. A rename or removal never counts: it may
/// change a plan file.
fn only_swept(call: &Call) -> bool {
    const BUILDING: [&str; 10] = [
        "openat",
        "creat",
        "mkdir",
        "mkdirat",
        "write",
        "writev",
        "pwrite64",
        "fchmod",
        "fchmodat",
        "ftruncate",
    ];
    BUILDING.contains(&call.name.as_str()) && SWEPT.iter().any(|mark| call.line.contains(mark))
}

/// What names a temp file or a lock folder set aside, which a killed writer may leave for a
/// later write to sweep.
const SWEPT: [&str; 2] = [".dwp-tmp.", ".lock."];

/// `dwp` with the plan in place of `PLAN` (and of `PLAN` starting a path, `PLAN/note.txt`), or
/// in second place (`dwp reconcile PLAN --write`).
fn dwp_args(plan: &Path, args: &[&str]) -> Vec<String> {
    let inside = |a: &str| a.strip_prefix("PLAN/").map(|rest| plan.join(rest));
    let args: Vec<String> = args
        .iter()
        .map(|a| match inside(a) {
            Some(path) => path.display().to_string(),
            None => (*a).to_owned(),
        })
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let plan = plan.display().to_string();
    if args.contains(&"PLAN") {
        return args
            .iter()
            .map(|a| {
                if *a == "PLAN" {
                    plan.clone()
                } else {
                    (*a).to_owned()
                }
            })
            .collect();
    }
    let mut full = vec![args[0].to_owned(), plan];
    full.extend(args[1..].iter().map(|a| (*a).to_owned()));
    full
}

fn run_dwp(plan: &Path, args: &[&str]) -> Run {
    let args = dwp_args(plan, args);
    common::dwp_in(
        plan.parent().unwrap(),
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    )
}

/// The plan's files as text, without what a killed writer leaves for a later write to sweep
/// (temp files, lock folders set aside), with the plan's path (which differs from run to run,
/// and from a copy to its original) written `PLAN` and a lock's age (wall time) written `N old`.
fn settled(plan: &Path) -> Settled {
    let name = plan.file_name().unwrap().to_string_lossy();
    let own_path =
        regex::Regex::new(&format!(r"/\S*/{}\b", regex::escape(&name))).expect("a fixed pattern");
    let age = regex::Regex::new(r"\b\d+[dhms]( \d+[dhms])? old\b").expect("a fixed pattern");
    let gate_cwd = regex::Regex::new(r#""cwd":"/[^"]*""#).expect("a fixed pattern");
    let note =
        regex::Regex::new(r"human authority marker: note \S+ sha256:").expect("a fixed pattern");
    common::snapshot(plan)
        .into_iter()
        .filter(|(path, _)| {
            let name = path.to_string_lossy();
            !SWEPT.iter().any(|mark| name.contains(mark))
        })
        .map(|(path, bytes)| {
            let text = String::from_utf8_lossy(&bytes);
            let text = own_path.replace_all(&text, "PLAN");
            // A record plan's gate records the folder it ran in (the plan's parent), which
            // differs from a copy to its original.
            let text = gate_cwd.replace_all(&text, r#""cwd":"ROOT""#);
            // A human-authority marker names the note as the command line gave it, from the
            // folder dwp ran in: `/` for a traced run, the plan's parent for the next writer,
            // so an amendment's two events may name one note two ways.
            let text = note.replace_all(&text, "human authority marker: note NOTE sha256:");
            (path, age.replace_all(&text, "N old").into_owned())
        })
        .collect()
}
