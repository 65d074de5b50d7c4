//! Colour, the same for every command that prints text for people: `--color always` paints
//! (verdicts, status words, severities, the `hint:` prefix and an error's `dwp <command>:` on
//! stderr), `--color never` never does; under `auto`, `NO_COLOR` (any non-empty value) turns it
//! off, `CLICOLOR_FORCE` (non-empty, not `0`) turns it on even in a pipe, and `NO_COLOR` wins
//! over it.

use crate::common::{Plan, Run, dwp};
use dwp::synth::SynthPlan;

/// How a run is asked to colour: its name, the flags, the environment, and whether it paints.
type Mode = (
    &'static str,
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
    bool,
);

const MODES: [Mode; 6] = [
    ("--color always", &["--color", "always"], &[], true),
    (
        "--color never",
        &["--color", "never"],
        &[("CLICOLOR_FORCE", "1")],
        false,
    ),
    ("auto in a pipe", &[], &[], false),
    ("NO_COLOR=1", &[], &[("NO_COLOR", "1")], false),
    ("CLICOLOR_FORCE=1", &[], &[("CLICOLOR_FORCE", "1")], true),
    (
        "NO_COLOR=1 CLICOLOR_FORCE=1",
        &[],
        &[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")],
        false,
    ),
];

/// `dwp ARGS` on a fresh plan with task 3 in progress (PLAN stands for its folder), in `mode`.
fn run_in_mode(args: &[&str], mode: &Mode) -> Run {
    let plan = Plan::from_synth(SynthPlan::new("PLAN_colour_cases", 4).completed(2));
    let p = plan.dir.to_str().unwrap();
    let setup = plan.dwp(&["update", "--task", "3", "--status", "in_progress"]);
    assert_eq!(setup.code, 0, "{setup:?}");
    let contract = plan.root().join("contract.json");
    std::fs::write(
        &contract,
        r#"{"outcomes": [{"id": "one", "description": "it works"}]}"#,
    )
    .unwrap();
    let c = contract.to_str().unwrap();
    let args: Vec<&str> = args
        .iter()
        .map(|a| match *a {
            "PLAN" => p,
            "CONTRACT" => c,
            other => other,
        })
        .collect();
    let mut command = dwp();
    command.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
    for (name, value) in mode.2 {
        command.env(name, value);
    }
    command.in_dir(plan.root()).args(mode.1).args(&args);
    let run = command.run();
    drop(plan);
    run
}

#[test]
fn every_command_that_prints_text_colours_as_the_flag_and_the_environment_say() {
    let commands: [&[&str]; 13] = [
        &["status", "PLAN"],
        &["verify", "PLAN"],
        &["validate", "PLAN"],
        &["next", "PLAN"],
        &["update", "PLAN", "--task", "3", "--status", "in_progress"],
        &["run", "PLAN", "--task", "3", "--", "echo", "1 passed"],
        &["finalize", "PLAN"],
        &["lock", "status", "PLAN"],
        &["reconcile", "PLAN"],
        &["loop", "freeze", "CONTRACT"],
        &[
            "contract", "declare", "PLAN", "--task", "3", "--create", "a.rs",
        ],
        // Refusals: the error's prefix and its hint on stderr.
        &["update", "PLAN", "--task", "9", "--status", "completed"],
        &["frobnicate"],
    ];
    for args in commands {
        for mode in &MODES {
            let run = run_in_mode(args, mode);
            let painted = run.stdout.contains("\x1b[") || run.stderr.contains("\x1b[");
            assert_eq!(painted, mode.3, "{args:?} with {}: {run:?}", mode.0);
            if !mode.3 {
                let escapes = run.stdout.contains('\x1b') || run.stderr.contains('\x1b');
                assert!(!escapes, "{args:?} with {}: {run:?}", mode.0);
            }
        }
    }
}

#[test]
fn an_error_paints_its_prefix_and_hint_and_json_is_never_painted() {
    let mode = &MODES[0];
    let refused = run_in_mode(&["update", "PLAN", "--task", "3"], mode);
    assert!(
        refused.stderr.starts_with("\x1b[31;1mdwp update:\x1b[0m "),
        "{refused:?}"
    );
    assert!(
        refused.stderr.contains("\x1b[36mhint:\x1b[0m "),
        "{refused:?}"
    );
    let json = run_in_mode(&["--json", "verify", "PLAN"], mode);
    assert!(!json.stdout.contains('\x1b'), "{json:?}");
    json.json();
}
