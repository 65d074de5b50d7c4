//! Every flag a message, hint or comment of the library names is a flag dwp has. The commands and
//! rules name the flags a user must pass in their hints (a hint names a step that works), so the
//! names live below the command line; this test holds them to the clap definition, the one place
//! the flags are declared: a renamed or imagined flag fails here, with the file and line.
//! In `dwp SUB ... --flag`, the flag must be one of SUB's own.

use crate::common;
use clap::CommandFactory;
use std::collections::BTreeSet;

/// Long flags of `command` and of every subcommand below it, plus clap's own.
fn flags_of(command: &clap::Command) -> BTreeSet<String> {
    let mut flags: BTreeSet<String> = command
        .get_arguments()
        .filter_map(|a| a.get_long())
        .map(|long| format!("--{long}"))
        .collect();
    flags.extend(["--help", "--version"].map(String::from));
    flags
}

fn every_flag(command: &clap::Command, into: &mut BTreeSet<String>) {
    into.extend(flags_of(command));
    for sub in command.get_subcommands() {
        every_flag(sub, into);
    }
}

/// `--name` tokens in `text`: two dashes then a lower-case letter, letters, digits and dashes.
fn flag_tokens(text: &str) -> Vec<(usize, String)> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(at) = text[i..].find("--").map(|at| at + i) {
        let starts_word =
            at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'-');
        let mut end = at + 2;
        while end < bytes.len()
            && (bytes[end].is_ascii_lowercase()
                || bytes[end].is_ascii_digit()
                || bytes[end] == b'-')
        {
            end += 1;
        }
        if starts_word && end > at + 2 && bytes[at + 2].is_ascii_lowercase() {
            found.push((at, text[at..end].trim_end_matches('-').to_owned()));
        }
        i = end.max(at + 2);
    }
    found
}

/// The subcommand a `dwp SUB [SUB2]` mention at `at` names, if any, and where its span ends
/// (the closing backtick or quote, else the line's end).
fn command_before(root: &clap::Command, line: &str, at: usize) -> Option<clap::Command> {
    let start = line[..at].rfind("dwp ")?;
    let span_opened = line[..start].rfind(['`', '"']);
    let span_closed = line[start..at].contains(['`', '"']);
    if span_closed || span_opened.is_none() && start > 0 && !line[..start].ends_with(' ') {
        return None;
    }
    let mut command = root.clone();
    for word in line[start + 4..at].split_whitespace() {
        match command.find_subcommand(word) {
            Some(sub) => command = sub.clone(),
            None => break,
        }
    }
    (command.get_name() != root.get_name()).then_some(command)
}

/// The files that build git's argv or say what git runs, and the git flags they name: these are
/// git's to declare, not dwp's. Anything else they name is checked like the rest.
const GIT_CALLERS: [&str; 3] = [
    "src/store/git.rs",
    "src/commands/loop/changed.rs",
    "src/commands/reconcile.rs",
];
const GIT_FLAGS: [&str; 15] = [
    "--no-pager",
    "--porcelain",
    "--includes",
    "--name-only",
    "--get-regexp",
    "--verify",
    "--quiet",
    "--end-of-options",
    "--no-renames",
    "--relative",
    "--no-ext-diff",
    "--no-textconv",
    "--ignore-submodules",
    "--merge-base",
    "--no-show-signature",
];

fn is_gits(file: &str, flag: &str) -> bool {
    GIT_CALLERS.contains(&file) && GIT_FLAGS.contains(&flag)
}

#[test]
fn every_flag_the_library_names_is_a_flag_of_dwp_and_of_the_command_it_names() {
    let root = dwp::cli::Cli::command();
    let global = flags_of(&root);
    let mut known = BTreeSet::new();
    every_flag(&root, &mut known);
    let mut wrong = Vec::new();
    let repo = &common::repo_root();
    let mut files = Vec::new();
    common::rust_files(&repo.join("src"), &mut files);
    for file in files {
        let relative = file.strip_prefix(repo).unwrap().display().to_string();
        // The command line declares the flags; synth builds test plans and names none.
        if relative.starts_with("src/cli/") || relative == "src/synth.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (number, line) in text.lines().enumerate() {
            for (at, flag) in flag_tokens(line) {
                if is_gits(&relative, &flag) {
                    continue;
                }
                let place = format!("{relative}:{}: {flag}", number + 1);
                match command_before(&root, line, at) {
                    Some(command) => {
                        let own = flags_of(&command);
                        if !own.contains(&flag) && !global.contains(&flag) {
                            wrong.push(format!(
                                "{place} is not a flag of `dwp {}`",
                                command.get_name()
                            ));
                        }
                    }
                    None if !known.contains(&flag) => {
                        wrong.push(format!("{place} is not a flag of any dwp command"))
                    }
                    None => {}
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "flags named but not declared:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_scan_finds_flags_and_the_command_they_belong_to() {
    let root = dwp::cli::Cli::command();
    let line = r#"hint: run `dwp reconcile --write PLAN`; pass --reopen-reason, not -x or a--b"#;
    let tokens: Vec<String> = flag_tokens(line).into_iter().map(|(_, f)| f).collect();
    assert_eq!(tokens, ["--write", "--reopen-reason"]);
    let at = line.find("--write").unwrap();
    assert_eq!(
        command_before(&root, line, at).unwrap().get_name(),
        "reconcile"
    );
    let at = line.find("--reopen-reason").unwrap();
    assert!(
        command_before(&root, line, at).is_none(),
        "the span closed at the backtick"
    );
    // A flag of another command is caught.
    let line = "hint: `dwp lock recover --wait 5`";
    let at = line.find("--wait").unwrap();
    let command = command_before(&root, line, at).unwrap();
    assert_eq!(command.get_name(), "recover");
    assert!(!flags_of(&command).contains("--wait"));
    // git's flags are git's, where dwp runs git, and nowhere else.
    assert!(is_gits("src/store/git.rs", "--no-pager"));
    assert!(!is_gits("src/steps/updater.rs", "--no-pager"));
    assert!(!is_gits("src/store/git.rs", "--reopen-reasons"));
}
