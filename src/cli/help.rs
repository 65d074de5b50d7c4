//! The CLI's own definition as people read it: `dwp --help` with its commands grouped, the
//! examples every subcommand's help ends with ([`examples!`]), and the text generated from the
//! definition: shell completions (`dwp completions SHELL`) and roff man pages (`dwp man`).
//!
//! This is text about the command line, not about a plan, so it is made here rather than by a
//! command below: the commands layer knows nothing of clap. It still reaches stdout as an
//! `Outcome` printed by `cli::render`, through the same inert sink as every command.

use super::Cli;
use crate::error::Error;
use clap::CommandFactory;

/// The `Examples:` section a subcommand's help ends with (its `after_help`): one line each,
/// indented by two spaces. A line starting with `dwp ` is an example that `tests/interface/help.rs`
/// runs on a copy of the plans it names; a line starting with `# ` says what the next one does;
/// a line indented further continues the one above (after a trailing `\`). An example that
/// exits other than 0 says so in a trailing comment: `# exit N`.
macro_rules! examples {
    ($($line:literal),+ $(,)?) => {
        concat!("Examples:", $("\n  ", $line),+)
    };
}
pub(crate) use examples;

/// The headings `dwp --help` lists the commands under, each with its commands in order.
pub const GROUPS: [(&str, &[&str]); 5] = [
    (
        "Plan state",
        &[
            "status",
            "validate",
            "update",
            "run",
            "amend",
            "approve",
            "reconcile",
            "next",
        ],
    ),
    ("Publication", &["verify", "finalize"]),
    ("Loop", &["loop"]),
    ("Hooks", &["contract"]),
    (
        "Maintenance",
        &[
            "new",
            "init",
            "migrate",
            "lock",
            "schema",
            "completions",
            "man",
            "help",
        ],
    ),
];

/// The heading of a command no group names (a test fails on such a command).
pub const UNGROUPED: &str = "Other";

/// clap's own `help` subcommand, which the derive does not list.
const HELP: (&str, &str) = (
    "help",
    "Print this message or the help of the given subcommand(s)",
);

/// The command line as dwp parses it and prints its help: the derive's definition with the
/// top-level help listing the commands under [`GROUPS`].
pub fn command() -> clap::Command {
    let command = Cli::command();
    let template = top_level_template(&command);
    command.help_template(template)
}

/// The top-level help: clap's usual layout, with the one `Commands:` list replaced by one list
/// per group. Every subcommand is listed: one no group names goes under [`UNGROUPED`].
fn top_level_template(command: &clap::Command) -> String {
    let mut listed: Vec<(String, String)> = command
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| {
            let about = s.get_about().map(|a| a.to_string()).unwrap_or_default();
            (s.get_name().to_owned(), about)
        })
        .collect();
    if !command.is_disable_help_subcommand_set() {
        listed.push((HELP.0.to_owned(), HELP.1.to_owned()));
    }
    let width = listed.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    let header = command.get_styles().get_header();
    let mut sections = String::new();
    let mut section = |heading: &str, names: &[(String, String)]| {
        if names.is_empty() {
            return;
        }
        sections.push_str(&format!("{header}{heading}:{header:#}\n"));
        for (name, about) in names {
            sections.push_str(&format!("  {name:<width$}  {about}\n"));
        }
        sections.push('\n');
    };
    for (heading, names) in GROUPS {
        let group: Vec<_> = names
            .iter()
            .filter_map(|n| listed.iter().find(|(name, _)| name == n).cloned())
            .collect();
        section(heading, &group);
    }
    let other: Vec<_> = listed
        .iter()
        .filter(|(name, _)| {
            !GROUPS
                .iter()
                .any(|(_, names)| names.contains(&name.as_str()))
        })
        .cloned()
        .collect();
    section(UNGROUPED, &other);
    format!(
        "{{before-help}}{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{sections}\
         {header}Options:{header:#}\n{{options}}{{after-help}}"
    )
}

/// Parse the process's arguments (clap's `Cli::parse`). The grouped help is built only when
/// help is what was asked for: every other run is spared building it at start.
pub fn parse() -> Result<Cli, clap::Error> {
    use clap::error::ErrorKind;
    use clap::{FromArgMatches, Parser};
    match Cli::try_parse() {
        Err(asked)
            if matches!(
                asked.kind(),
                ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) =>
        {
            let mut matches = command().try_get_matches()?;
            Cli::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut command()))
        }
        parsed => parsed,
    }
}

/// The completion script of `shell` for every command and flag.
pub fn completions(shell: clap_complete::Shell) -> String {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command(), "dwp", &mut script);
    String::from_utf8_lossy(&script).into_owned()
}

/// The man page of `dwp`, or of the subcommand `path` names (`["lock", "recover"]`:
/// dwp-lock-recover(1)); with its name. Each page's help sections (examples, exit codes) are
/// kept line for line.
pub fn man(path: &[String]) -> Result<(String, String), Error> {
    let mut root = command();
    root.build();
    let mut page = &root;
    for word in path {
        page = page.find_subcommand(word).ok_or_else(|| {
            let names: Vec<_> = page
                .get_subcommands()
                .map(|s| s.get_name().to_owned())
                .collect();
            Error::Usage(format!(
                "`{word}` is not a subcommand of `{}`; it has {}",
                page.get_display_name().unwrap_or("dwp"),
                names.join(", ")
            ))
        })?;
    }
    let name = page.get_display_name().unwrap_or("dwp").to_owned();
    let sections = page.get_after_help().map(|text| text.to_string());
    // Every page's header names dwp and its version (a subcommand has no version of its own,
    // so clap_mangen's default source was `verify ` alone), and a date: an empty one is written
    // as nothing, which shifts the source into the date's place.
    let man = clap_mangen::Man::new(page.clone().after_help(None::<&str>))
        .date(crate::clock::now().format("%Y-%m-%d").to_string())
        .source(format!("dwp {}", env!("CARGO_PKG_VERSION")))
        .manual("dwp manual");
    let mut roff = Vec::new();
    man.render(&mut roff)
        .map_err(|e| Error::io("render", std::path::Path::new("<man page>"), e))?;
    let mut text = String::from_utf8_lossy(&roff).into_owned();
    if let Some(sections) = sections {
        text.push_str(&roff_sections(&sections));
    }
    Ok((name, text))
}

/// Help sections as roff: each paragraph whose first line is a `Heading:` becomes a section
/// (`.SH HEADING`) whose lines are printed as they are (no filling).
fn roff_sections(text: &str) -> String {
    let mut roff = String::new();
    for paragraph in text.split("\n\n") {
        let mut lines = paragraph.lines();
        let Some(first) = lines.next() else { continue };
        let (heading, body): (String, Vec<&str>) = match first.strip_suffix(':') {
            Some(heading) if !heading.starts_with(' ') => (heading.to_uppercase(), lines.collect()),
            _ => ("NOTES".to_owned(), paragraph.lines().collect()),
        };
        roff.push_str(&format!(".SH \"{heading}\"\n.nf\n"));
        for line in body {
            roff.push_str(&roff_line(line.strip_prefix("  ").unwrap_or(line)));
            roff.push('\n');
        }
        roff.push_str(".fi\n");
    }
    roff
}

/// One line of literal text in roff: backslashes and dashes escaped, a leading `.` or `'`
/// (a request) made text.
fn roff_line(line: &str) -> String {
    let escaped = line.replace('\\', "\\e").replace('-', "\\-");
    match escaped.starts_with(['.', '\'']) {
        true => format!("\\&{escaped}"),
        false => escaped,
    }
}
