//! The one printer's contract with stdout, through the real binary: a stdout that cannot be
//! written is an I/O failure (exit 4, the error on stderr), never a success that printed nothing.
//! Each renderer family (plan commands, `loop`, `contract`) goes through the same path.

use crate::common;
use crate::common::{dwp, written};
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

#[test]
fn clap_usage_errors_look_like_dwps_own_with_a_hint_that_runs() {
    let missing = dwp().args(["update", PLAN, "--task", "3"]).run();
    assert_eq!(missing.code, 2, "{missing:?}");
    let first = missing.message();
    assert!(first.starts_with("dwp update: "), "{first}");
    assert!(
        first.contains("--status") && first.ends_with("(command line)"),
        "{first}"
    );
    let hint = missing.stderr.lines().nth(1).unwrap_or_default();
    assert_eq!(hint, "  hint: `dwp update --help` lists its arguments");
    let help = dwp().args(["update", "--help"]).run();
    assert_eq!(help.code, 0, "the hinted help runs: {help:?}");
    assert!(help.stdout.contains("--status"));

    let typo = dwp()
        .args(["update", PLAN, "--task", "3", "--stauts", "completed"])
        .run();
    assert_eq!(typo.code, 2);
    assert!(
        typo.stderr
            .contains("a similar argument exists: '--status'"),
        "{typo:?}"
    );

    let unknown = dwp().arg("frobnicate").run();
    assert_eq!(unknown.code, 2);
    assert!(
        unknown
            .message()
            .starts_with("dwp: unrecognized subcommand"),
        "{unknown:?}"
    );
    assert!(
        unknown.stderr.contains("`dwp --help` lists the commands"),
        "{unknown:?}"
    );
}

#[test]
fn a_clap_usage_error_under_json_is_one_json_document() {
    let run = dwp()
        .args(["--json", "lock", "recover", PLAN, "--bogus"])
        .run();
    assert_eq!(run.code, 2, "{run:?}");
    let document = run.json();
    assert_eq!(document["dwp"], 2);
    assert_eq!(document["command"], "lock recover");
    assert_eq!(document["ok"], false);
    assert_eq!(document["exit"], 2);
    assert!(
        document["error"]["hint"]
            .as_str()
            .unwrap()
            .ends_with("`dwp lock recover --help` lists its arguments"),
        "{document:#}"
    );
}

#[test]
fn color_always_and_never_decide_and_auto_stays_plain_in_a_pipe() {
    let always = dwp().args(["status", PLAN, "--color", "always"]).run();
    assert!(
        always.stdout.contains("\u{1b}["),
        "always colours: {always:?}"
    );
    let with_no_color = dwp()
        .env("NO_COLOR", "1")
        .args(["status", PLAN, "--color", "always"])
        .run();
    assert!(
        with_no_color.stdout.contains("\u{1b}["),
        "the flag outranks NO_COLOR"
    );
    for choice in ["never", "auto"] {
        let run = dwp().args(["status", PLAN, "--color", choice]).run();
        assert_eq!(run.code, 0);
        assert!(!run.stdout.contains('\u{1b}'), "{choice}: {run:?}");
    }
}

#[test]
fn quiet_prints_nothing_on_stdout_but_keeps_errors_and_json() {
    let quiet = dwp().args(["-q", "status", PLAN]).run();
    assert_eq!((quiet.code, quiet.stdout.as_str()), (0, ""), "{quiet:?}");
    let refused = dwp()
        .args(["verify", "--quiet", "/nonexistent/PLAN_nowhere_at_all"])
        .run();
    assert_ne!(refused.code, 0);
    assert!(refused.stdout.is_empty(), "{refused:?}");
    let json = dwp().args(["--quiet", "--json", "status", PLAN]).run();
    assert_eq!(
        json.json()["command"],
        "status",
        "a JSON document asked for is printed"
    );
}

#[test]
fn every_state_writer_records_who_wrote_last_in_updated_by() {
    use dwp::synth::SynthPlan;
    let (_root, plan) = written(SynthPlan::new("PLAN_signed_writes", 4).completed(2));
    let updated_by = || {
        let state: serde_json::Value =
            serde_json::from_slice(&std::fs::read(plan.join("state.json")).unwrap()).unwrap();
        state["updated_by"].clone()
    };
    let p = plan.to_str().unwrap();
    let writes: Vec<Vec<&str>> = vec![
        vec![
            "update",
            p,
            "--task",
            "3",
            "--status",
            "in_progress",
            "--agent",
            "a1",
            "--model",
            "m1",
        ],
        [
            &["amend", p][..],
            &common::AMEND_TASK_2,
            &["--invalidate", "cargo test", "--model", "m2"],
        ]
        .concat(),
    ];
    for (n, args) in writes.iter().enumerate() {
        let run = dwp().args(args).run();
        assert_eq!(run.code, 0, "{args:?}: {run:?}");
        let who = updated_by();
        assert_eq!(who["agent"], format!("a{}", n + 1), "{args:?}: {who}");
        assert_eq!(who["model"], format!("m{}", n + 1), "{args:?}: {who}");
    }
    // The markdown wins: a reconcile that changes state.json signs it too.
    let readme = std::fs::read_to_string(plan.join("README.md")).unwrap();
    std::fs::write(
        plan.join("README.md"),
        readme.replace("| Approval | approved |", "| Approval | pending |"),
    )
    .unwrap();
    let run = dwp()
        .args(["reconcile", p, "--write", "--agent", "a3"])
        .run();
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(updated_by()["agent"], "a3");
    assert_eq!(
        updated_by()["model"],
        "m2",
        "a name not given keeps the one recorded"
    );
    let approve = dwp()
        .args(["approve", p, "--by", "ann", "--agent", "a4"])
        .run();
    assert_eq!(approve.code, 0, "{approve:?}");
    assert_eq!(updated_by()["agent"], "a4");
    let long = "x".repeat(101);
    let refused = dwp()
        .args(["reconcile", p, "--write", "--agent", &long])
        .run();
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(refused.stderr.contains("--agent"), "{refused:?}");
}

#[test]
fn migrate_and_finalize_sign_the_state_they_write() {
    use dwp::plan::model::Generation;
    use dwp::synth::SynthPlan;
    let root = tempfile::tempdir().unwrap();
    let state_of = |plan: &std::path::Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(plan.join("state.json")).unwrap()).unwrap()
    };
    let v1 = SynthPlan::new("PLAN_signed_migrate", 3)
        .generation(Generation::V1)
        .write(root.path())
        .unwrap();
    let run = dwp()
        .arg("migrate")
        .arg(&v1)
        .args(["--to", "v5", "--agent", "mig"])
        .run();
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(state_of(&v1)["updated_by"]["agent"], "mig");
    let ready = SynthPlan::new("PLAN_signed_finalize", 3)
        .ready_to_publish()
        .write(root.path())
        .unwrap();
    let run = dwp()
        .arg("finalize")
        .arg(&ready)
        .args(["--model", "fin"])
        .run();
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(state_of(&ready)["updated_by"]["model"], "fin");
}

/// `DWP_PROFILE=1` adds the stage timings on stderr, ending with the total, and changes nothing
/// else: the same stdout and exit, and the same bytes written, as the same update without it.
#[test]
fn dwp_profile_prints_stage_timings_on_stderr_and_changes_nothing_else() {
    let synth = || dwp::synth::SynthPlan::new("PLAN_profile_check", 4).completed(2);
    let (plain, profiled) = (
        common::Plan::from_synth(synth()),
        common::Plan::from_synth(synth()),
    );
    let update = |plan: &common::Plan, profile: bool| {
        let mut run = dwp();
        run.args(["--json", "update"]).arg(&plan.dir).args([
            "--task",
            "3",
            "--status",
            "in_progress",
        ]);
        if profile {
            run.env("DWP_PROFILE", "1");
        }
        run.run()
    };
    let (without, with) = (update(&plain, false), update(&profiled, true));
    assert_eq!((without.code, with.code), (0, 0), "{}", with.stderr);
    assert_eq!(without.stderr, "");
    let lines: Vec<&str> = with.stderr.lines().collect();
    assert!(lines[0].starts_with("dwp profile"), "{}", with.stderr);
    for stage in [
        "parse arguments",
        "lock",
        "load state",
        "durable write",
        "unlock",
        "total",
    ] {
        assert!(
            lines.iter().any(|l| l.trim_start().starts_with(stage)),
            "no `{stage}` line in:\n{}",
            with.stderr
        );
    }
    assert!(lines.last().unwrap().trim_start().starts_with("total"));
    let named = |run: &common::Run, plan: &common::Plan| {
        run.stdout.replace(plan.dir.to_str().unwrap(), "PLAN")
    };
    assert_eq!(named(&without, &plain), named(&with, &profiled));
    assert_eq!(plain.read("state.json"), profiled.read("state.json"));
}
