//! Rule 18 of docs/record-plans.md: a runner that does not run the record-plan loop says so and
//! stops. Every dwp command that writes only v5 plans refuses a record plan (DWP v6/v7) whole,
//! writing nothing, naming the commands that write one, and its hint runs as printed. (`dwp lock` takes one:
//! its lock is the ledger's own, `tests/writers/ledger_lock.rs`; `dwp reconcile` regenerates its
//! state from its journal, `tests/writers/record_reconcile.rs`; `dwp update` starts a task and
//! finds it completed, `tests/writers/record_update.rs`; `dwp run` records an observed gate,
//! `tests/writers/record_run.rs`; `dwp approve` and `dwp init --contract` record a human's
//! approval, `tests/writers/record_approve.rs` and `tests/writers/record_init.rs`; `dwp amend`
//! makes the next revision of its contract, `tests/writers/record_amend.rs`.)

use crate::common::{dwp, fixture_copy, refused};
use std::path::PathBuf;

fn record_plan() -> (tempfile::TempDir, PathBuf) {
    let (root, name) = fixture_copy("record-valid-v7-in-progress");
    let plan = root.path().join(name);
    (root, plan)
}

#[test]
fn rule_18_every_writer_refuses_a_record_plan_and_writes_nothing() {
    let (_root, plan) = record_plan();
    let path = plan.to_str().unwrap();
    let writers: [(&str, Vec<&str>); 4] = [
        ("init", vec!["init", path]),
        ("migrate", vec!["migrate", path, "--to", "v5"]),
        ("finalize", vec!["finalize", path]),
        ("finalize --check", vec!["finalize", path, "--check"]),
    ];
    for (command, args) in writers {
        let run = refused(
            &plan,
            command,
            1,
            &[
                "is a record plan",
                "writes v5 plans only",
                "init --contract",
            ],
            || dwp().args(&args).run_utf8(),
        );
        assert!(
            run.stderr.contains(&format!("`dwp next {path}`")),
            "{}",
            run.stderr
        );
    }
}
