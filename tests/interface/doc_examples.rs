//! Every `dwp` command line in the `sh`, `bash`, `shell` and `console` blocks of README.md and
//! docs/*.md runs as written (`tests/common/examples.rs` says how a line is read), in the order
//! of its document, on copies of the plans it names, and exits 0 or with the code its comment
//! documents. A line marked `# not run: REASON` is printed as skipped with its reason.
//!
//! docs/tutorial.md is a path, not a list of examples: its blocks run whole, in order, through
//! `sh` from an empty folder ([`the_tutorial_runs_from_an_empty_folder_to_a_published_plan`]).
//!
//! What a document assumes is set up the way it describes it: a plan under `.dwp/plans/` that
//! the repository does not ship is a copy of the example plan under that name, and the files a
//! `contract declare` example modifies or deletes exist, holding the symbols it names.

use crate::common;
use crate::common::examples::{self, EXAMPLE_PLAN, Example};
use std::path::Path;

const SHELL_BLOCKS: [&str; 4] = ["sh", "bash", "shell", "console"];

/// The tutorial, run whole through `sh`.
const TUTORIAL: &str = "docs/tutorial.md";

/// The documents whose examples run: README.md, then docs/*.md by name.
fn documents() -> Vec<String> {
    let mut docs: Vec<String> = std::fs::read_dir(common::repo_root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .filter(|doc| doc != TUTORIAL)
        .collect();
    docs.sort();
    docs.insert(0, "README.md".to_owned());
    docs
}

/// The document with every line outside a shell block blanked, so line numbers stay and a
/// variable set in one block holds in the next.
fn shell_lines(text: &str) -> String {
    // None: outside a block; Some(true): in a shell block; Some(false): in another block.
    let mut block: Option<bool> = None;
    let mut kept = String::new();
    for line in text.lines() {
        match (block, line.trim_start().strip_prefix("```")) {
            (None, Some(info)) => block = Some(SHELL_BLOCKS.contains(&info.trim())),
            (Some(_), Some(_)) => block = None,
            (Some(true), None) => kept.push_str(line),
            _ => {}
        }
        kept.push('\n');
    }
    kept
}

fn examples_in(doc: &str) -> Vec<Example> {
    let text = std::fs::read_to_string(common::repo_root().join(doc)).unwrap();
    examples::examples_of(&shell_lines(&text), |n| format!("{doc}:{n}"))
}

/// What the examples of one document assume: the plans they name under `.dwp/plans/`, the files
/// a declaration modifies or deletes.
fn set_up(examples: &[Example], dir: &Path) {
    for example in examples {
        for word in &example.args {
            if let Some(name) = word.strip_prefix(".dwp/plans/") {
                let plan = dir.join(".dwp/plans").join(name.trim_end_matches('/'));
                if !plan.exists() {
                    common::copy_plan(&common::repo_root().join(EXAMPLE_PLAN), &plan);
                }
            }
        }
        if example
            .args
            .starts_with(&["contract".to_owned(), "declare".to_owned()])
        {
            for pair in example.args.windows(2) {
                if pair[0] == "--modify" || pair[0] == "--delete" {
                    let (path, symbols) = pair[1].split_once(':').unwrap_or((&pair[1], ""));
                    let file = dir.join(path);
                    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                    std::fs::write(&file, symbols.replace(',', "\n")).unwrap();
                }
            }
        }
    }
}

#[test]
fn every_documented_dwp_command_runs() {
    let mut ran = 0;
    let mut skipped = 0;
    for doc in documents() {
        let found = examples_in(&doc);
        let workspace = examples::workspace(&found);
        set_up(&found, workspace.path());
        for example in &found {
            match examples::run(example, workspace.path()) {
                Some(_) => ran += 1,
                None => skipped += 1,
            }
        }
    }
    println!("{ran} documented commands ran, {skipped} skipped");
    assert!(ran >= 10, "only {ran} documented commands ran");
}

/// The reading of a document finds the README's examples: a change to the block format that
/// hid them would otherwise pass with nothing run.
#[test]
fn the_readme_examples_are_found() {
    let found = examples_in("README.md");
    let texts: Vec<&str> = found.iter().map(|e| e.text.as_str()).collect();
    assert!(found.len() >= 8, "{texts:#?}");
    assert!(
        found
            .iter()
            .any(|e| e.args.first().is_some_and(|a| a == "reconcile")),
        "{texts:#?}"
    );
    assert!(
        examples_in("docs/hooks.md").len() >= 4,
        "the hooks document's commands"
    );
}

/// The tutorial's `sh` blocks as one script, in order. A line whose comment says `exit N` must
/// end with that code (the script stops, naming the line, when it does not); every other line
/// must succeed (`sh -e`).
fn tutorial_script(text: &str) -> String {
    let mut script = String::new();
    let mut in_block = false;
    for (index, line) in text.lines().enumerate() {
        match line.trim_start().strip_prefix("```") {
            Some(info) if !in_block => in_block = info.trim() == "sh",
            Some(_) => in_block = false,
            None if in_block => script.push_str(&expecting_exit(line, index + 1)),
            None => {}
        }
    }
    script
}

/// `line` as the script runs it: as written, or checked for the exit code its comment says.
fn expecting_exit(line: &str, number: usize) -> String {
    let documented = line.rsplit_once("# exit ").and_then(|(command, rest)| {
        let code: String = rest.chars().take_while(char::is_ascii_digit).collect();
        Some((command.trim_end(), code.parse::<i32>().ok()?))
    });
    match documented {
        Some((command, code)) => format!(
            "if {command}; then echo \"{TUTORIAL}:{number}: exited 0, documented {code}\" >&2; exit 1; \
             else rc=$?; [ $rc -eq {code} ] || {{ echo \"{TUTORIAL}:{number}: exited $rc, documented {code}\" >&2; exit 1; }}; fi\n"
        ),
        None => format!("{line}\n"),
    }
}

/// The first hour, run as a user runs it: every command of docs/tutorial.md, in order, through
/// `sh -e` in an empty folder with this build's `dwp` first on `PATH`; the repository it made
/// ends with a published plan that verifies CONFORMANT.
#[test]
fn the_tutorial_runs_from_an_empty_folder_to_a_published_plan() {
    let text = std::fs::read_to_string(common::repo_root().join(TUTORIAL)).unwrap();
    let script = tutorial_script(&text);
    assert!(script.matches("dwp ").count() >= 20, "{script}");
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("dwp");
    let path = std::env::join_paths(std::iter::once(bin.parent().unwrap().to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let output = std::process::Command::new("sh")
        .args(["-e", "-c", &script])
        .current_dir(dir.path())
        .env("PATH", path)
        .env("HOME", &home)
        .env("DWP_TEST_NOW", common::NOW)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let run = common::Run::lossy(&output);
    assert_eq!(
        run.code, 0,
        "the tutorial stopped:\n{}\n{}",
        run.stdout, run.stderr
    );
    let repo = dir.path().join("greeter");
    let plan = repo.join(".dwp/plans/PLAN_greeting_tool");
    assert!(plan.join("analysis_results/FINALIZATION.json").is_file());
    let verdict = common::dwp()
        .args(["--json", "verify", "--all"])
        .arg(&repo)
        .run();
    assert_eq!(
        common::verify_codes(&verdict.json()),
        Vec::<String>::new(),
        "{verdict:?}"
    );
    assert_eq!(common::state_of(&plan)["status"], "completed");
}
