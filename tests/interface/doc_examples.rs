//! Every `dwp` command line in the `sh`, `bash`, `shell` and `console` blocks of README.md and
//! docs/*.md runs as written (`tests/common/examples.rs` says how a line is read), in the order
//! of its document, on copies of the plans it names, and exits 0 or with the code its comment
//! documents. A line marked `# not run: REASON` is printed as skipped with its reason.
//!
//! What a document assumes is set up the way it describes it: a plan under `.dwp/plans/` that
//! the repository does not ship is a copy of the example plan under that name, and the files a
//! `contract declare` example modifies or deletes exist, holding the symbols it names.

use crate::common;
use crate::common::examples::{self, EXAMPLE_PLAN, Example};
use std::path::Path;

const SHELL_BLOCKS: [&str; 4] = ["sh", "bash", "shell", "console"];

/// The documents whose examples run: README.md, then docs/*.md by name.
fn documents() -> Vec<String> {
    let mut docs: Vec<String> = std::fs::read_dir(common::repo_root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
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
