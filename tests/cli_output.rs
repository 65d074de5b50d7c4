//! The one printer's contract with stdout, through the real binary: a stdout that cannot be
//! written is an I/O failure (exit 4, the error on stderr), never a success that printed nothing.
//! Each renderer family (plan commands, `loop`, `contract`) goes through the same path.

mod common;

use common::dwp;
use std::process::Stdio;

const PLAN: &str = "conformance-fixtures/valid-full-v5/PLAN_payment_webhooks";

fn to_dev_full(args: &[&str]) -> (Option<i32>, String) {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let output = dwp()
        .args(args)
        .command()
        .stdout(Stdio::from(full))
        .stderr(Stdio::piped())
        .output()
        .expect("run dwp");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A contract of one outcome, not yet frozen, in `dir`.
fn contract_in(dir: &std::path::Path) -> std::path::PathBuf {
    let contract = dir.join("contract.json");
    std::fs::write(
        &contract,
        r#"{"outcomes": [{"id": "one", "description": "it works"}]}"#,
    )
    .unwrap();
    contract
}

#[test]
fn a_stdout_that_cannot_be_written_is_an_io_failure_for_every_renderer() {
    let freeze_dir = tempfile::tempdir().unwrap();
    let contract = contract_in(freeze_dir.path());
    let contract = contract.to_str().unwrap();
    for args in [
        vec!["status", PLAN],
        vec!["--json", "verify", PLAN],
        vec!["contract", "check", PLAN],
        vec!["loop", "freeze", contract],
    ] {
        let (code, stderr) = to_dev_full(&args);
        assert_eq!(code, Some(4), "{args:?}: {stderr}");
        assert!(
            stderr.contains("write failed") && stderr.contains("(<stdout>)"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn loop_freeze_says_frozen_then_already_frozen_with_no_change() {
    let dir = tempfile::tempdir().unwrap();
    let contract = contract_in(dir.path());
    let first = dwp().args(["loop", "freeze"]).arg(&contract).run();
    let second = dwp().args(["loop", "freeze"]).arg(&contract).run();
    assert_eq!((first.code, second.code), (0, 0));
    assert!(first.stdout.starts_with("frozen "), "{}", first.stdout);
    assert!(!first.stdout.contains("no change"), "{}", first.stdout);
    assert!(
        second.stdout.starts_with("already frozen ") && second.stdout.contains("(no change)"),
        "{}",
        second.stdout
    );
    assert!(second.stdout.contains(": 1 outcomes · sha256 "));
}
