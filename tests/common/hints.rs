//! A hint is a promise, checked wherever a test makes dwp print one: every `hint:` a run prints
//! (a line of stdout or stderr, or a `"hint"` of its JSON document) is read, and each `dwp ...`
//! command it names in backticks must parse as a dwp command line, as a shell splits it, with
//! only the user's own words filled in (`TEXT`, `NAME`, `SECONDS`, `DIR`): a placeholder for a
//! value dwp knows (`PLAN`, `N`, `COMMAND`, `EVIDENCE`, `...`) fails. Every test that drives
//! the binary through a state is thereby a walk of the hints printed in it; running a hinted
//! command's effect is left to the tests that name it (`tests/interface/hints.rs`).

use super::examples;
use clap::Parser;
use serde_json::Value;

/// What only the user can say, with a sample of each.
const USERS_WORDS: &[(&str, &str)] = &[("TEXT", "the reason"), ("NAME", "Ada"), ("SECONDS", "30")];

/// Words that stand for a value dwp knows: never left in a hint's command.
const PLACEHOLDERS: &[&str] = &["PLAN", "N", "COMMAND", "...", "HEX", "ROOT"];

/// Never part of any word of a hint's command: evidence is a run's, never typed from a hint.
const NEVER_IN_A_WORD: &[&str] = &["EVIDENCE", "COMMAND|"];

/// Panic, naming the hint, when a `dwp ...` command of a hint in this output is one dwp refuses.
pub fn check(stdout: &str, stderr: &str) {
    for hint in hints_in(stdout, stderr) {
        for command in commands_in(&hint) {
            if let Err(why) = accepted(&command) {
                panic!("a hint names `{command}`, which {why}\nhint: {hint}");
            }
        }
    }
}

/// Every hint of the output: `hint:` lines, and the `hint` strings of a JSON document.
fn hints_in(stdout: &str, stderr: &str) -> Vec<String> {
    let mut hints: Vec<String> = stdout
        .lines()
        .chain(stderr.lines())
        .filter_map(|line| line.trim_start().strip_prefix("hint: "))
        .map(str::to_owned)
        .collect();
    if let Ok(document) = serde_json::from_str::<Value>(stdout) {
        json_hints(&document, &mut hints);
    }
    hints
}

fn json_hints(value: &Value, hints: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("hint", Value::String(hint)) => hints.push(hint.clone()),
                    _ => json_hints(value, hints),
                }
            }
        }
        Value::Array(values) => values.iter().for_each(|v| json_hints(v, hints)),
        _ => {}
    }
}

/// The backticked spans of `hint` that are dwp command lines.
pub fn commands_in(hint: &str) -> Vec<String> {
    hint.split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| span.starts_with("dwp "))
        .map(str::to_owned)
        .collect()
}

/// The words of a hinted `dwp ...` command as a shell splits them, the user's own words filled
/// in with samples: what a user runs.
pub fn as_run(command: &str) -> Vec<String> {
    examples::split_like_a_shell(command)
        .into_iter()
        .map(|word| {
            match USERS_WORDS
                .iter()
                .find(|(placeholder, _)| *placeholder == word)
            {
                Some((_, sample)) => (*sample).to_owned(),
                None => word,
            }
        })
        .collect()
}

/// Whether dwp's own parser takes `command` as a shell splits it (up to a pipe or a
/// redirection), the user's words filled in; why not, else.
fn accepted(command: &str) -> Result<(), String> {
    let words = examples::split_like_a_shell(command);
    if let Some(word) = words.iter().find(|w| {
        PLACEHOLDERS.contains(&w.as_str()) || NEVER_IN_A_WORD.iter().any(|p| w.contains(p))
    }) {
        return Err(format!("leaves `{word}` for the user, a value dwp knows"));
    }
    let filled = as_run(command);
    match dwp::cli::Cli::try_parse_from(&filled) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => Ok(()),
        // `dwp migrate`, `dwp loop dod`: the command's name in a sentence, not a line to run.
        Err(e)
            if e.kind() == clap::error::ErrorKind::MissingRequiredArgument
                && filled[1..]
                    .iter()
                    .all(|w| w.chars().all(|c| c.is_ascii_lowercase())) =>
        {
            Ok(())
        }
        Err(e) => Err(format!("dwp refuses: {}", e.kind())),
    }
}
