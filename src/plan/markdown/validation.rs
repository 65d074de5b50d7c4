//! The commands a task record's Validation section lists, read as written and never guessed:
//! each command of a fenced (or indented) code block (a line, or lines joined by a `\` at their
//! end, as a shell reads them), and each item of a list whose text opens with a code span
//! (`` - `cargo test` (unit and integration) ``). A section that has neither gives the code spans
//! of its text. List items that hold no code are kept apart as notes: they say what to check,
//! not what to run. [`command_argv`] splits a listed command into the argv `dwp run` takes, only
//! where a shell would read it as plain words.

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

/// What a Validation section lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidationList {
    /// Commands, in the order the section gives them (each once).
    pub commands: Vec<String>,
    /// List items without code, as written.
    pub notes: Vec<String>,
}

/// Read the body of a Validation section.
pub fn validation_list(body: &str) -> ValidationList {
    let mut list = ValidationList::default();
    let mut spans = Vec::new();
    // The text of the list item being read, and whether it opened with a code span.
    let mut items: Vec<(String, Option<String>)> = Vec::new();
    let mut in_block = false;
    let mut block = String::new();
    for event in Parser::new(body) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => {
                in_block = true;
                block.clear();
            }
            Event::End(TagEnd::CodeBlock) => {
                in_block = false;
                for command in block_commands(&block) {
                    push_once(&mut list.commands, &command);
                }
            }
            Event::Text(text) if in_block => block.push_str(&text),
            Event::Start(Tag::Item) => items.push((String::new(), None)),
            Event::End(TagEnd::Item) => {
                if let Some((text, code)) = items.pop() {
                    match code {
                        Some(command) => push_once(&mut list.commands, &command),
                        None if !text.trim().is_empty() => list.notes.push(text.trim().to_owned()),
                        None => {}
                    }
                }
            }
            Event::Code(code) => {
                spans.push(code.trim().to_owned());
                if let Some((text, first)) = items.last_mut() {
                    if text.trim().is_empty() && first.is_none() && !code.trim().is_empty() {
                        *first = Some(code.trim().to_owned());
                    }
                    text.push_str(&format!("`{code}`"));
                }
            }
            Event::Text(text) => {
                if let Some((item, _)) = items.last_mut() {
                    item.push_str(&text);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some((item, _)) = items.last_mut() {
                    item.push(' ');
                }
            }
            _ => {}
        }
    }
    if list.commands.is_empty() && list.notes.is_empty() {
        for span in spans.iter().filter(|s| !s.is_empty()) {
            push_once(&mut list.commands, span);
        }
    }
    list
}

/// The commands of a code block: one per line, a line that ends with an odd number of `\`
/// continued on the next (the shell's line continuation; a `> ` prompt opening the continued
/// line is the shell's too), a leading `$ ` prompt and `#` comment lines left out.
fn block_commands(block: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut pending: Option<String> = None;
    for line in block.lines() {
        let mut line = line.trim();
        if let Some(start) = pending.as_mut() {
            line = line.strip_prefix("> ").unwrap_or(line).trim_start();
            let (text, continued) = continuation(line);
            start.push(' ');
            start.push_str(text);
            if !continued {
                commands.extend(pending.take());
            }
            continue;
        }
        let line = line.strip_prefix("$ ").unwrap_or(line).trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match continuation(line) {
            (text, true) => pending = Some(text.to_owned()),
            (text, false) => commands.push(text.to_owned()),
        }
    }
    // A block that ends on a continuation: the command as far as it goes.
    commands.extend(pending);
    commands
        .into_iter()
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty())
        .collect()
}

/// A line without its continuation `\` (trailing blanks before it dropped), and whether it had
/// one: an odd number of backslashes at its end (an even number is escaped backslashes).
fn continuation(line: &str) -> (&str, bool) {
    let trailing = line.len() - line.trim_end_matches('\\').len();
    if trailing % 2 == 1 {
        (line[..line.len() - 1].trim_end(), true)
    } else {
        (line, false)
    }
}

fn push_once(commands: &mut Vec<String>, command: &str) {
    if !commands.iter().any(|c| c == command) {
        commands.push(command.to_owned());
    }
}

/// The argv a shell would run for `command`, when it holds only words: plain characters, and
/// single or double quotes around literal text. `None` for anything a shell would expand,
/// redirect or chain (`$`, a backtick, `|`, `&`, `;`, `<`, `>`, globs, `~`, braces, a `#`
/// comment, a backslash, a variable assignment before the program), which only a shell runs as
/// written: dwp never guesses what it would do.
pub fn command_argv(command: &str) -> Option<Vec<String>> {
    let mut argv = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => argv.extend(word.take()),
            '\'' => {
                let text = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c if c.is_control() => return None,
                        c => text.push(c),
                    }
                }
            }
            '"' => {
                let text = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '$' | '`' | '\\' | '!' => return None,
                        c if c.is_control() => return None,
                        c => text.push(c),
                    }
                }
            }
            c if is_plain(c) => word.get_or_insert_with(String::new).push(c),
            _ => return None,
        }
    }
    argv.extend(word);
    // `NAME=value program`: the shell's environment assignment, not a program named so.
    let assignment = argv.first().is_some_and(|w| w.contains('='));
    (!argv.is_empty() && !assignment).then_some(argv)
}

/// A character a shell takes as itself outside quotes, wherever it stands in a word.
fn is_plain(c: char) -> bool {
    c.is_alphanumeric() || "-_./=:,+@%".contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_items_opening_with_code_are_commands() {
        let list = validation_list(
            "- `pnpm run test`\n- `pnpm run db:migrate -- --dry-run` (no writes)\n",
        );
        assert_eq!(
            list.commands,
            ["pnpm run test", "pnpm run db:migrate -- --dry-run"]
        );
        assert!(list.notes.is_empty());
    }

    #[test]
    fn code_block_lines_are_commands() {
        let list = validation_list(
            "Run:\n\n```sh\n$ cargo test\n# a comment\ncargo clippy -- -D warnings\n```\n",
        );
        assert_eq!(list.commands, ["cargo test", "cargo clippy -- -D warnings"]);
    }

    #[test]
    fn a_backslash_continued_line_is_one_command() {
        let list = validation_list(
            "```bash\ncargo test --all \\\n    --json \\\n    -- --strict\n$ pytest -q \\\n> tests/unit\necho 'a\\\\'\nmake check\n```\n",
        );
        assert_eq!(
            list.commands,
            [
                "cargo test --all --json -- --strict",
                "pytest -q tests/unit",
                "echo 'a\\\\'",
                "make check"
            ]
        );
        let cut = validation_list("```sh\ncargo test \\\n```\n");
        assert_eq!(cut.commands, ["cargo test"]);
    }

    #[test]
    fn items_without_code_are_notes_and_nothing_is_guessed() {
        let list = validation_list("- open the page and check the banner\n");
        assert!(list.commands.is_empty());
        assert_eq!(list.notes, ["open the page and check the banner"]);
        assert_eq!(
            validation_list("Manual check only."),
            ValidationList::default()
        );
    }

    #[test]
    fn prose_gives_its_code_spans_when_nothing_else_is_listed() {
        let list = validation_list("Run `make check` before committing.");
        assert_eq!(list.commands, ["make check"]);
    }

    #[test]
    fn a_command_of_plain_and_quoted_words_is_its_argv() {
        let argv = |c| command_argv(c).map(|a| a.join("|"));
        assert_eq!(argv("cargo test -q").as_deref(), Some("cargo|test|-q"));
        assert_eq!(
            argv("pnpm run db:migrate -- --dry-run").as_deref(),
            Some("pnpm|run|db:migrate|--|--dry-run")
        );
        assert_eq!(
            argv("sh -c 'echo \"a b\"'  -n=\"x y\"'z'").as_deref(),
            Some("sh|-c|echo \"a b\"|-n=x yz")
        );
        assert_eq!(argv("grep -q ''").as_deref(), Some("grep|-q|"));
    }

    #[test]
    fn a_command_only_a_shell_runs_as_written_has_no_argv() {
        for command in [
            "cargo test 2>&1 | tail -1",
            "cd web && npm test",
            "cargo test; echo done",
            "echo $HOME",
            "echo \"$HOME\"",
            "ls *.rs",
            "ls ~/x",
            "echo {a,b}",
            "echo `date`",
            "echo a\\ b",
            "RUST_LOG=debug cargo test",
            "cargo test # all",
            "echo 'unclosed",
            "",
            "   ",
        ] {
            assert_eq!(command_argv(command), None, "{command}");
        }
    }
}
