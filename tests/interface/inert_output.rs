//! Terminal output is inert: text read from a plan (task titles, gate evidence, a lock owner's
//! command, a path) never reaches the terminal raw through `dwp status`, `verify`, `lock status`
//! or `update`, on stdout or stderr. Control characters are escaped as `\uXXXX`; `--json` still
//! carries every string exactly (the parsed document holds the original characters).

use crate::common::{Run, dwp_in, written};
use dwp::synth::SynthPlan;
use serde_json::{Value, json};
use std::fs;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// Clear screen, an OSC window title ended by BEL, a C1 CSI (U+009B) and a right-to-left
/// override: each acts on a terminal or on what it shows.
const EVIL: &str = "\u{1b}[2J\u{1b}]0;pwned\u{7}\u{9b}31m\u{202e}evil";

/// Whether `c` would act on a terminal: C0 controls but the newline and tab dwp lays lines out
/// with, DEL, C1 controls, and the bidirectional formatting characters.
fn acts_on_terminal(c: char) -> bool {
    let code = c as u32;
    (code < 0x20 && c != '\n' && c != '\t')
        || (0x7f..=0x9f).contains(&code)
        || matches!(code, 0x061c | 0x200e | 0x200f | 0x202a..=0x202e | 0x2066..=0x2069)
}

/// Nothing in the run's stdout or stderr acts on a terminal, and the escaped form of the
/// payload is there to be seen.
fn assert_inert(what: &str, run: &Run) {
    for (stream, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        let raw: Vec<String> = text
            .chars()
            .filter(|&c| acts_on_terminal(c))
            .map(|c| format!("U+{:04X}", c as u32))
            .collect();
        assert!(raw.is_empty(), "{what}: raw {raw:?} on {stream}:\n{text}");
    }
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(
        all.contains("\\u001b[2J") && all.contains("\\u009b") && all.contains("\\u202e"),
        "{what}: the escaped payload should be visible:\n{all}"
    );
}

/// A five-task plan (two completed) whose task 1 title and gate evidence carry [`EVIL`].
fn evil_plan() -> (TempDir, PathBuf) {
    let (root, dir) = written(SynthPlan::new("PLAN_inert_output", 5).completed(2));
    let path = dir.join("state.json");
    let mut state: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    state["tasks"][0]["title"] = json!(format!("Title {EVIL}"));
    state["tasks"][0]["gates"][0]["evidence"] = json!(format!("3 passed {EVIL}"));
    state["tasks"][0]["gates"][0]["command"] = json!(format!("cargo test {EVIL}"));
    fs::write(&path, serde_json::to_vec_pretty(&state).unwrap()).unwrap();
    (root, dir)
}

fn run_in(plan: &Path, args: &[&str]) -> Run {
    dwp_in(plan.parent().unwrap(), args)
}

fn name(plan: &Path) -> &str {
    plan.file_name().unwrap().to_str().unwrap()
}

/// `update PLAN --task 3 --status in_progress EXTRA...`, run from the plan's parent.
fn start_task_3<'a>(plan: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "update",
        name(plan),
        "--task",
        "3",
        "--status",
        "in_progress",
    ];
    args.extend(extra);
    args
}

#[test]
fn status_escapes_a_title_and_a_gate_command_and_json_keeps_them() {
    let (_root, plan) = evil_plan();
    let run = run_in(&plan, &["status", name(&plan)]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_inert("dwp status", &run);

    let run = run_in(&plan, &["status", name(&plan), "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    // The desync entry quotes the state's title: exactly, once parsed.
    assert!(
        strings(&run.json()).iter().any(|s| s.contains(EVIL)),
        "{}",
        run.stdout
    );
}

/// Every string in a JSON document.
fn strings(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items.iter().flat_map(strings).collect(),
        Value::Object(map) => map.values().flat_map(strings).collect(),
        _ => Vec::new(),
    }
}

#[test]
fn verify_escapes_what_it_quotes_and_json_keeps_it() {
    let (_root, plan) = evil_plan();
    let run = run_in(&plan, &["verify", name(&plan)]);
    assert_inert("dwp verify", &run);

    let run = run_in(&plan, &["verify", name(&plan), "--json"]);
    assert!(!run.stdout.chars().any(acts_on_terminal), "{}", run.stdout);
    let document = run.payload();
    assert!(
        strings(&document["plans"][0]["findings"])
            .iter()
            .any(|m| m.contains(EVIL)),
        "a finding quotes the title exactly: {document:#}"
    );
}

#[test]
fn lock_status_escapes_the_owners_command_and_json_keeps_it() {
    let (_root, plan) = evil_plan();
    let command = format!("dwp update {EVIL}\nheld: forged line");
    fs::create_dir(plan.join("state.json.lock")).unwrap();
    let owner = json!({
        "pid": 999_999_999u32,
        "host": dwp::store::lock_dir::host_name(),
        "command": command,
        "started_at": "2026-01-01T00:00:00Z",
    });
    fs::write(plan.join("state.json.lock/owner.json"), owner.to_string()).unwrap();

    let run = run_in(&plan, &["lock", "status", name(&plan)]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_inert("dwp lock status", &run);
    assert_eq!(
        run.stdout
            .lines()
            .filter(|l| l.starts_with("held:"))
            .count(),
        1,
        "a newline in the command forges no line:\n{}",
        run.stdout
    );

    let run = run_in(&plan, &["lock", "status", name(&plan), "--json"]);
    assert!(!run.stdout.chars().any(acts_on_terminal), "{}", run.stdout);
    assert_eq!(run.payload()["holder"]["owner"]["command"], command);

    // A writer blocked by that lock names the owner on stderr: inert too.
    let run = run_in(&plan, &start_task_3(&plan, &[]));
    assert_eq!(run.code, 3, "{run:?}");
    assert_inert("dwp update (lock held)", &run);
}

#[test]
fn update_escapes_its_diff_and_its_errors() {
    let (_root, plan) = evil_plan();
    let note = format!("note {EVIL}");
    let args = start_task_3(&plan, &["--checkpoint-note", &note, "--dry-run"]);
    let run = run_in(&plan, &args);
    assert_eq!(run.code, 0, "{run:?}");
    assert_inert("dwp update --dry-run", &run);

    // The written state carries the note exactly.
    let mut written = args.clone();
    written.pop();
    let run = run_in(&plan, &written);
    assert_eq!(run.code, 0, "{run:?}");
    let state: Value = serde_json::from_slice(&fs::read(plan.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["checkpoint"]["note"], note.as_str());

    // An error naming a path read from the command line.
    let missing = format!("missing {EVIL}");
    let run = run_in(
        &plan,
        &["update", &missing, "--task", "1", "--status", "pending"],
    );
    assert_ne!(run.code, 0, "{run:?}");
    assert_inert("dwp update (error)", &run);
}
