//! Multi-file writes killed at every rename (issue #13): `reconcile --write`, `amend`, `approve`,
//! `init` and `migrate` each change several files, recorded first in `.dwp-intent.json`. Each command is
//! run under `strace`, which kills it with SIGKILL on entry to its K-th rename, for every K the
//! command reaches; then the next writer runs (`dwp reconcile --write`, after `dwp lock recover`
//! removed the dead writer's lock). The plan must then be byte for byte what it is when the
//! command ran whole (or, killed before its record was written, as if it never ran), and the
//! record of the change is in PROGRESS.md whenever the change is there: no kill leaves a change
//! without its record.

use super::crash_points;
use crate::common;
use crate::common::{NOW, changed_paths, copy_plan};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;

const RENAMES: &str = "rename,renameat,renameat2";

/// The intent record's name (`dwp::store::intent::INTENT`), spelled out: the test names the file
/// it looks for, whatever the code calls it.
const INTENT: &str = ".dwp-intent.json";

/// One multi-file writer and the plan it changes.
struct Case {
    writer: &'static crash_points::Writer,
    /// A line of PROGRESS.md that only this command's record holds.
    record: &'static str,
}

/// A lock whose owner is gone: `lock recover --force` removes it and records why.
fn dead_lock(root: &Path) -> PathBuf {
    let plan = crash_points::synth(root);
    let lock = plan.join("state.json.lock");
    std::fs::create_dir(&lock).unwrap();
    let owner = serde_json::json!({
        "pid": 999_999_999u32,
        "host": dwp::store::lock_dir::host_name(),
        "command": "dwp update",
        "started_at": NOW,
    });
    std::fs::write(lock.join("owner.json"), owner.to_string()).unwrap();
    plan
}

/// The writers and plans of `crash_points`, killed here at their renames only, each with the
/// line of PROGRESS.md only its record holds.
const CASES: &[Case] = &[
    Case {
        writer: &crash_points::RECONCILE,
        record: "### Reconciliation",
    },
    Case {
        writer: &crash_points::AMEND,
        record: "amendment 1 of task 2",
    },
    Case {
        writer: &crash_points::APPROVE,
        record: "approved by the user (`dwp approve`)",
    },
    Case {
        writer: &crash_points::INIT,
        record: "materialized by `dwp init`",
    },
    Case {
        writer: &crash_points::Writer {
            name: "lock recover --force",
            plan: dead_lock,
            args: crash_points::LOCK_RECOVER.args,
            next: crash_points::NEXT_WRITER,
        },
        record: "`dwp lock recover --force` removed",
    },
    Case {
        writer: &crash_points::MIGRATE,
        record: "`dwp migrate --to v5`",
    },
];

/// `dwp` with the plan in place of `PLAN`, or in second place (`dwp reconcile PLAN --write`).
fn dwp_command(plan: &Path, args: &[&str]) -> Vec<String> {
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

fn run_dwp(plan: &Path, args: &[&str]) -> common::Run {
    common::dwp_in(
        plan.parent().unwrap(),
        &dwp_command(plan, args)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    )
}

/// One rename the command entered: the syscall and the destination's name.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rename {
    call: String,
    to: String,
}

/// Run the case's command under strace; `kill_at`: SIGKILL on entry to the k-th of `renames`
/// (strace counts each syscall on its own, so the kill names the syscall and its ordinal).
/// Returns the renames the command entered, in order.
fn traced(plan: &Path, args: &[&str], kill_at: Option<(usize, &[Rename])>) -> Vec<Rename> {
    let trace = plan.parent().unwrap().join("strace.out");
    let mut strace: Vec<String> = ["-f", "-qq", "-y", "-e"].map(String::from).into();
    strace.push(format!("trace={RENAMES}"));
    if let Some((k, renames)) = kill_at {
        let call = &renames[k - 1].call;
        let ordinal = renames[..k].iter().filter(|r| r.call == *call).count();
        strace.push("-e".into());
        strace.push(format!("inject={call}:signal=KILL:when={ordinal}"));
    }
    strace.push("-o".into());
    strace.push(trace.display().to_string());
    let mut command = common::dwp()
        .args(dwp_command(plan, args))
        .wrapped("strace", &strace);
    command.stdout(Stdio::null()).stderr(Stdio::null());
    let status = command.status().expect("run strace");
    if kill_at.is_none() {
        assert!(status.success(), "the untroubled run failed: {status:?}");
    }
    let text = std::fs::read_to_string(&trace).unwrap_or_default();
    std::fs::remove_file(&trace).ok();
    text.lines()
        .filter(|l| l.contains("rename"))
        .filter_map(|l| {
            let call = l.split('(').next()?.rsplit(' ').next()?;
            let to = l.rsplit('"').nth(1)?;
            let to = to.rsplit('/').next().unwrap_or(to);
            Some(Rename {
                call: call.to_owned(),
                to: to.to_owned(),
            })
        })
        .collect()
}

/// The plan's files as text, without what a killed writer leaves for a later write to sweep,
/// and with the plan's own path (which differs from run to run) written `PLAN`.
fn settled(plan: &Path) -> BTreeMap<PathBuf, String> {
    let own_path = plan.display().to_string();
    common::snapshot(plan)
        .into_iter()
        .filter(|(path, _)| {
            let name = path.to_string_lossy();
            !name.contains(".dwp-tmp.") && !name.contains(".lock.")
        })
        .map(|(path, bytes)| {
            let text = String::from_utf8_lossy(&bytes).replace(&own_path, "PLAN");
            (path, without_lock_ages(&text))
        })
        .collect()
}

/// A lock's age as `lock recover` describes it ("`dwp update`, 4h 12m old") is wall time,
/// which moves between two runs: written `N old`.
fn without_lock_ages(text: &str) -> String {
    let age = regex::Regex::new(r"\b\d+[dhms]( \d+[dhms])? old\b").expect("a fixed pattern");
    age.replace_all(text, "N old").into_owned()
}

/// What the next writer does after a kill: remove the dead writer's lock, then write.
fn next_writer(plan: &Path) {
    if plan.join("state.json.lock").exists() {
        let run = common::dwp_in(
            plan.parent().unwrap(),
            &["lock", "recover", plan.to_str().unwrap()],
        );
        assert_eq!(run.code, 0, "lock recover: {}", run.stderr);
    }
    // Refused or not (a plan without state refuses), it completes a pending record first.
    run_dwp(plan, &["reconcile", "--write"]);
}

fn progress_holds(plan: &Path, record: &str) -> bool {
    std::fs::read_to_string(plan.join("PROGRESS.md")).is_ok_and(|t| t.contains(record))
}

#[test]
fn a_multi_file_write_killed_at_any_rename_is_completed_by_the_next_writer_with_its_record() {
    if !common::strace_available("the kill-at-every-rename test") {
        return;
    }
    for case in CASES {
        // The two outcomes a kill may lead to: the command's change, whole, or none of it.
        let root = tempfile::tempdir().unwrap();
        let whole = (case.writer.plan)(&root.path().join("whole"));
        let renames = traced(&whole, case.writer.args, None);
        next_writer(&whole);
        let done = settled(&whole);
        assert!(
            progress_holds(&whole, case.record),
            "{}: no record",
            case.writer.name
        );
        let untouched = (case.writer.plan)(&root.path().join("untouched"));
        next_writer(&untouched);
        let not_done = settled(&untouched);
        // The rename that makes the intent record durable, when the command writes one.
        let recorded_at = renames.iter().position(|r| r.to == INTENT).map(|i| i + 1);
        for k in 1..=renames.len() {
            let root = tempfile::tempdir().unwrap();
            let plan = (case.writer.plan)(root.path());
            traced(&plan, case.writer.args, Some((k, &renames)));
            next_writer(&plan);
            let after = settled(&plan);
            let label = format!(
                "{}: killed at rename {k} of {} ({})",
                case.writer.name,
                renames.len(),
                renames[k - 1].to
            );
            assert!(
                !plan.join(INTENT).exists(),
                "{label}: the next writer left the record"
            );
            assert!(
                after == done || after == not_done,
                "{label}: neither the whole change nor none of it (files differing from the whole change: {:?})",
                changed_paths(&after, &done)
            );
            // (For `reconcile --write`, the next writer makes the same change: both outcomes agree.)
            if let Some(recorded_at) = recorded_at.filter(|_| done != not_done) {
                assert_eq!(
                    after == done,
                    k > recorded_at,
                    "{label}: the change must be whole exactly when its record was written (at rename {recorded_at})"
                );
            }
            assert_eq!(
                after == done,
                progress_holds(&plan, case.record),
                "{label}: a change without its record"
            );
        }
        println!(
            "{}: {} renames, the intent recorded at rename {recorded_at:?}",
            case.writer.name,
            renames.len()
        );
    }
}

#[test]
fn the_hint_of_an_interrupted_write_completes_it_as_written() {
    let fixture = common::fixture("verify-dwp087-interrupted-write/PLAN_payment_webhooks");
    let root = tempfile::tempdir().unwrap();
    let plan = root.path().join("PLAN_payment_webhooks");
    copy_plan(&fixture, &plan);
    let report = common::dwp_in(
        root.path(),
        &["verify", "--format", "json", "PLAN_payment_webhooks"],
    )
    .payload();
    let finding = &report["plans"][0]["findings"][0];
    assert_eq!(finding["code"], "DWP087", "{report}");
    let hint = finding["hint"].as_str().unwrap();
    let command = hint.split('`').nth(1).expect("a command in backticks");
    let args: Vec<&str> = command.split_whitespace().skip(1).collect();
    assert_eq!(
        args,
        ["reconcile", "--write", "PLAN_payment_webhooks"],
        "{hint}"
    );

    let run = common::dwp_in(root.path(), &args);

    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(!plan.join(INTENT).exists());
    assert!(progress_holds(
        &plan,
        "### Reconciliation — 2026-06-09T16:40:00Z"
    ));
    let after = common::dwp_in(root.path(), &["verify", "PLAN_payment_webhooks"]);
    assert_eq!(after.code, 0, "{}", after.stdout);
}
