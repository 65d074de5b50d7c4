//! The help people read: `dwp --help` lists every command under a heading and prints the
//! exit-code table once; every subcommand's help ends with two or three examples, and every
//! example runs as written (on copies of the plans it names) with the exit code it documents.
//! A subcommand gets its examples with one attribute: `#[command(after_help = examples![...])]`
//! (`cli::help::examples`).

use crate::common;
use crate::common::examples::{self, Example};
use dwp::cli::help::{GROUPS, UNGROUPED, command};

/// Subcommands added on other branches before they have examples and a heading (and may still
/// end their help with the exit-code table). The list must empty: give such a command its
/// `examples![...]` instead of the table and a place in `cli::help::GROUPS`, then remove its
/// name here.
const NOT_YET_DOCUMENTED: [&str; 0] = [];

/// Every subcommand's path (`["lock", "recover"]`), parents before children; clap's `help` left
/// out.
fn subcommand_paths() -> Vec<Vec<String>> {
    fn walk(command: &clap::Command, prefix: &[String], into: &mut Vec<Vec<String>>) {
        for sub in command.get_subcommands() {
            let mut path = prefix.to_vec();
            path.push(sub.get_name().to_owned());
            into.push(path.clone());
            walk(sub, &path, into);
        }
    }
    let mut paths = Vec::new();
    walk(&command(), &[], &mut paths);
    paths
}

/// [`subcommand_paths`] but those of the [`NOT_YET_DOCUMENTED`] commands and below.
fn documented_subcommand_paths() -> Vec<Vec<String>> {
    subcommand_paths()
        .into_iter()
        .filter(|path| {
            !path
                .iter()
                .any(|w| NOT_YET_DOCUMENTED.contains(&w.as_str()))
        })
        .collect()
}

/// `dwp PATH... --help` as printed (the width clap uses without a terminal).
fn help(path: &[String]) -> String {
    let run = common::dwp()
        .env_remove("COLUMNS")
        .args(path)
        .arg("--help")
        .run();
    assert_eq!(run.code, 0, "dwp {path:?} --help: {}", run.stderr);
    run.stdout
}

/// The examples a help text ends with: the lines of its last section, which must be
/// `Examples:`.
fn examples_of(path: &[String], help: &str) -> Option<Vec<Example>> {
    let (_, section) = help.rsplit_once("\nExamples:\n")?;
    let place = format!("`dwp {} --help`", path.join(" "));
    Some(examples::examples_of(section, |_| place.clone()))
}

#[test]
fn top_level_help_lists_every_command_under_a_heading() {
    let text = help(&[]);
    let mut headings: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if let Some(heading) = line.strip_suffix(':').filter(|l| !l.starts_with(' ')) {
            headings.push((heading.to_owned(), Vec::new()));
        } else if let (Some((_, names)), Some(rest)) =
            (headings.last_mut(), line.strip_prefix("  "))
            && let Some(name) = rest.split_whitespace().next()
        {
            names.push(name.to_owned());
        }
    }
    let listed_under = |name: &str| {
        headings
            .iter()
            .find(|(_, names)| names.iter().any(|n| n == name))
            .map(|(heading, _)| heading.clone())
    };
    let mut names: Vec<String> = command()
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    names.push("help".to_owned());
    for name in &names {
        let heading = listed_under(name).unwrap_or_else(|| panic!("`{name}` not listed:\n{text}"));
        let grouped = GROUPS.iter().any(|(h, _)| *h == heading);
        assert!(
            grouped || heading == UNGROUPED && NOT_YET_DOCUMENTED.contains(&name.as_str()),
            "`{name}` is listed under `{heading}`: give it a place in cli::help::GROUPS"
        );
    }
    let order: Vec<&str> = headings
        .iter()
        .map(|(h, _)| h.as_str())
        .filter(|h| GROUPS.iter().any(|(g, _)| g == h))
        .collect();
    let groups: Vec<&str> = GROUPS.iter().map(|(g, _)| *g).collect();
    assert_eq!(order, groups, "the groups in their order:\n{text}");
    for (_, members) in GROUPS {
        for member in members {
            assert!(
                names.iter().any(|n| n == member),
                "GROUPS names `{member}`, no command"
            );
        }
    }
}

#[test]
fn the_exit_code_table_is_printed_once_by_the_top_level_help() {
    let table = dwp::error::Exit::help_text();
    assert_eq!(help(&[]).matches(&table).count(), 1);
    // A command from another branch may still carry the table it was written with.
    for path in documented_subcommand_paths() {
        let text = help(&path);
        assert!(
            !text.contains("Exit codes:"),
            "`dwp {} --help` repeats the exit-code table:\n{text}",
            path.join(" ")
        );
    }
}

#[test]
fn every_subcommand_help_ends_with_two_or_three_examples() {
    for path in documented_subcommand_paths() {
        let text = help(&path);
        let found = examples_of(&path, &text).unwrap_or_else(|| {
            panic!(
                "`dwp {} --help` has no Examples section: give it `after_help = examples![...]`",
                path.join(" ")
            )
        });
        assert!(
            (2..=3).contains(&found.len()),
            "`dwp {} --help` has {} examples, not two or three:\n{text}",
            path.join(" "),
            found.len()
        );
    }
}

/// No line of a help's own sections (examples, exit codes) is wider than clap's widest help
/// (100 columns), so none is folded: an example folded in two would no longer run.
#[test]
fn every_help_section_line_fits_the_help_width() {
    fn check(command: &clap::Command) {
        let text = command
            .get_after_help()
            .map(|t| t.to_string())
            .unwrap_or_default();
        for line in text.lines() {
            assert!(
                line.chars().count() <= 100,
                "`{}`: a help line of {} characters:\n{line}",
                command.get_name(),
                line.chars().count()
            );
        }
        command.get_subcommands().for_each(check);
    }
    check(&command());
}

#[test]
fn every_help_example_runs_with_the_exit_code_it_documents() {
    let mut ran = 0;
    for path in subcommand_paths() {
        let Some(found) = examples_of(&path, &help(&path)) else {
            continue;
        };
        // The examples of one help run in order on one copy of the plans they name.
        let workspace = examples::workspace(&found);
        for example in &found {
            let run = examples::run(example, workspace.path());
            assert!(run.is_some(), "a help example is never marked not run");
            ran += 1;
        }
    }
    assert!(ran >= 40, "only {ran} examples ran");
}

/// The README's command table says `available` on every row and names every command.
#[test]
fn the_readme_command_table_lists_every_command_as_available() {
    let rows = common::readme_table("## Commands", "| command");
    for row in &rows {
        assert!(row.ends_with("| available |"), "not `available`: {row}");
    }
    for name in command().get_subcommands().map(|s| s.get_name()) {
        if NOT_YET_DOCUMENTED.contains(&name) {
            continue;
        }
        assert!(
            rows.iter()
                .any(|r| r.starts_with(&format!("| `dwp {name}"))),
            "the README's command table has no row for `dwp {name}`"
        );
    }
}

#[test]
fn snapshot_update_help() {
    insta::assert_snapshot!("update_help", help(&["update".to_owned()]));
}
