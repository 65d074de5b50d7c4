//! Documented `dwp` command lines, run as written: the examples of every subcommand's help
//! (`tests/interface/help.rs`) and the shell blocks of README.md and docs/
//! (`tests/interface/doc_examples.rs`).
//!
//! A line is read the way a shell reads it, for what examples use: words split on blanks,
//! `"..."` and `'...'` quoting, a trailing `\` continuing the line, `$NAME` / `${NAME}` replaced
//! by an earlier `NAME=value` line of the same block, where `NAME=$(sha256sum FILE | cut -d' '
//! -f1)` is the sha256 of FILE at the time the line using NAME runs (the snapshot the line
//! before left: what the shell computes there). A trailing
//! comment saying `exit N` is the exit code the line documents (else 0); one saying
//! `not run: REASON` marks a line that cannot run here, which is printed as skipped with its
//! reason. What follows an unquoted `|` or `>` (a pipe, a redirection) is not run: the line's
//! stdout must then be non-empty, as whatever reads it needs something to read. A line reading
//! its stdin from a file (`<`) must be marked not run. `cargo run --release -- ARGS` is
//! `dwp ARGS` run from a clone.

use super::{Run, copy_plan, dwp, repo_root, sha256_hex};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// The plan a documented example uses, also placed at `.dwp/plans/` of the folder the examples
/// run in, so `--all .` finds a plan.
pub const EXAMPLE_PLAN: &str = "conformance-fixtures/valid-full-v5/PLAN_payment_webhooks";

/// One `dwp` command line as documented.
#[derive(Debug, Clone)]
pub struct Example {
    /// Where it is documented (`README.md:67`, `dwp update --help`).
    pub place: String,
    /// The line as written (continuations joined).
    pub text: String,
    /// The words after `dwp`.
    pub args: Vec<String>,
    /// The exit code its comment documents, else 0.
    pub exit: i32,
    /// A pipe or redirection takes its stdout.
    pub piped: bool,
    /// It reads its stdin from a file.
    pub reads_stdin: bool,
    /// Why it is not run here (`# not run: REASON`).
    pub not_run: Option<String>,
}

/// Lines with their continuations (a trailing `\`) joined, each with the number of its first.
pub fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut lines = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (index, line) in text.lines().enumerate() {
        let (number, mut joined) = current.take().unwrap_or_else(|| (index + 1, String::new()));
        let trimmed = line.trim();
        match trimmed.strip_suffix('\\') {
            Some(head) => {
                joined.push_str(head.trim_end());
                joined.push(' ');
                current = Some((number, joined));
            }
            None => {
                joined.push_str(trimmed);
                lines.push((number, joined));
            }
        }
    }
    if let Some(last) = current {
        lines.push(last);
    }
    lines
}

/// The `dwp` command lines of a block of shell lines, with `NAME=value` lines substituted into
/// the lines after them; `None` for a line that is not a `dwp` command.
pub fn examples_of(block: &str, place: impl Fn(usize) -> String) -> Vec<Example> {
    let mut variables: BTreeMap<String, String> = BTreeMap::new();
    let mut found = Vec::new();
    for (number, line) in logical_lines(block) {
        let line = line.strip_prefix("$ ").unwrap_or(&line).to_owned();
        let (command, comment) = split_comment(&line);
        if let Some((name, file)) = sha256_assignment(command) {
            let (file, _) = shell_words(&file, &variables);
            variables.insert(name, format!("{SHA256_OF}{}>", file.concat()));
            continue;
        }
        if let Some((name, value)) = assignment(command) {
            variables.insert(name, value);
            continue;
        }
        let command = match command.strip_prefix("cargo run --release -- ") {
            Some(args) => format!("dwp {args}"),
            None if command.starts_with("dwp ") => command.to_owned(),
            None => continue,
        };
        let (words, cut) = shell_words(&command, &variables);
        found.push(Example {
            place: place(number),
            text: line.clone(),
            args: words[1..].to_vec(),
            exit: documented_exit(comment),
            piped: matches!(cut, Some('|' | '>')),
            reads_stdin: cut == Some('<'),
            not_run: comment
                .split_once("not run:")
                .map(|(_, reason)| reason.trim().to_owned()),
        });
    }
    found
}

/// The value standing for "the sha256 of FILE when the line runs": `<sha256 of FILE>`.
const SHA256_OF: &str = "<sha256 of ";

/// `NAME=$(sha256sum FILE | cut -d' ' -f1)`: the name, and FILE as written.
fn sha256_assignment(command: &str) -> Option<(String, String)> {
    let (name, value) = command.split_once("=$(sha256sum ")?;
    let file = value.strip_suffix(" | cut -d' ' -f1)")?;
    let is_name = !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c == '_');
    (is_name && !file.contains(char::is_whitespace)).then(|| (name.to_owned(), file.to_owned()))
}

/// `NAME=value` (a shell assignment, the whole command).
fn assignment(command: &str) -> Option<(String, String)> {
    let (name, value) = command.split_once('=')?;
    let is_name = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    (is_name && !value.contains(char::is_whitespace)).then(|| (name.to_owned(), value.to_owned()))
}

/// The command and its trailing comment (a `#` outside quotes after a blank).
fn split_comment(line: &str) -> (&str, &str) {
    let mut quote = None;
    let mut previous = ' ';
    for (at, c) in line.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if previous.is_whitespace() => {
                return (line[..at].trim_end(), &line[at + 1..]);
            }
            _ => {}
        }
        previous = c;
    }
    (line.trim_end(), "")
}

/// The code a comment documents: the number after its first `exit `.
fn documented_exit(comment: &str) -> i32 {
    comment
        .split("exit ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|digits| digits.parse().ok())
        .unwrap_or(0)
}

/// The words of `command` as a shell splits them, up to an unquoted `|`, `>` or `<`, a `$`
/// kept as written.
pub fn split_like_a_shell(command: &str) -> Vec<String> {
    // A `$` is kept as written: a hint's command sets no variable.
    let (words, _) = shell_words(&command.replace('$', "\u{1}"), &BTreeMap::new());
    words.into_iter().map(|w| w.replace('\u{1}', "$")).collect()
}

/// The words of a command, up to an unquoted `|`, `>` or `<`; which one was there.
fn shell_words(command: &str, variables: &BTreeMap<String, String>) -> (Vec<String>, Option<char>) {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote = None;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '|' | '>' | '<') => {
                words.extend(word.take());
                return (words, Some(c));
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            // `\x` outside quotes: the character itself (`'\''` puts a quote in a word).
            (None, '\\') => {
                let escaped = chars.next().unwrap_or('\\');
                word.get_or_insert_with(String::new).push(escaped);
            }
            (None, '"' | '\'') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (Some(q), c) if c == q => quote = None,
            (None | Some('"'), '$') => {
                let braced = chars.next_if_eq(&'{').is_some();
                let mut name = String::new();
                while let Some(n) = chars.next_if(|n| n.is_ascii_alphanumeric() || *n == '_') {
                    name.push(n);
                }
                if braced {
                    assert_eq!(chars.next(), Some('}'), "`${{{name}` unclosed in {command}");
                }
                let value = variables
                    .get(&name)
                    .unwrap_or_else(|| panic!("`${name}` is set by no line before: {command}"));
                word.get_or_insert_with(String::new).push_str(value);
            }
            (_, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    (words, None)
}

/// A folder holding, at the paths the examples name, copies of the repository's plan fixtures
/// (`conformance-fixtures/GROUP/PLAN_x`) and example folders (`examples/NAME`) they use, and a
/// copy of [`EXAMPLE_PLAN`] under `.dwp/plans/`: the examples write to these copies only.
pub fn workspace(examples: &[Example]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut copies = vec![(PathBuf::from(EXAMPLE_PLAN), PathBuf::from(EXAMPLE_PLAN))];
    copies.push((
        PathBuf::from(EXAMPLE_PLAN),
        PathBuf::from(".dwp/plans/PLAN_payment_webhooks"),
    ));
    for word in examples.iter().flat_map(|e| &e.args) {
        let parts: Vec<&str> = word.split('/').collect();
        let depth = match parts[0] {
            "conformance-fixtures" => 3,
            "examples" => 2,
            _ => continue,
        };
        if parts.len() >= depth {
            let folder = PathBuf::from(parts[..depth].join("/"));
            copies.push((folder.clone(), folder));
        }
    }
    for (from, to) in copies {
        let target = dir.path().join(&to);
        if !target.exists() {
            copy_plan(&repo_root().join(&from), &target);
        }
    }
    dir
}

/// Run `example` in `dir` and check its exit code (and, piped, a non-empty stdout); `None`
/// for an example marked not run, printed as skipped with its reason.
pub fn run(example: &Example, dir: &Path) -> Option<Run> {
    if let Some(reason) = &example.not_run {
        println!("SKIPPED {}: `{}`: {reason}", example.place, example.text);
        return None;
    }
    assert!(
        !example.reads_stdin,
        "{}: `{}` reads a file on stdin: mark it `# not run: REASON`",
        example.place, example.text
    );
    let args: Vec<String> = example
        .args
        .iter()
        .map(
            |a| match a.strip_prefix(SHA256_OF).and_then(|f| f.strip_suffix('>')) {
                Some(file) => sha256_hex(
                    &std::fs::read(dir.join(file))
                        .unwrap_or_else(|e| panic!("{}: sha256sum {file}: {e}", example.place)),
                ),
                None => a.clone(),
            },
        )
        .collect();
    let run = dwp().in_dir(dir).env_remove("COLUMNS").args(&args).run();
    assert_eq!(
        run.code, example.exit,
        "{}: `{}` exited {}, documented {}\nstdout: {}\nstderr: {}",
        example.place, example.text, run.code, example.exit, run.stdout, run.stderr
    );
    if example.piped {
        assert!(
            !run.stdout.is_empty(),
            "{}: `{}` feeds a pipe or a file but printed nothing",
            example.place,
            example.text
        );
    }
    Some(run)
}
