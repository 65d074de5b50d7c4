//! The plan's markdown, read with pulldown-cmark: the one reader of the human source of truth
//! that every command shares (`update` for the Approval row, `reconcile`, `status`, `verify`,
//! `finalize`, `init`, `amend`).
//!
//! It reads plans as they are written in the wild, not only as dwp writes them; the shapes it
//! accepts are listed in docs/plan-markdown.md. pulldown-cmark finds the structure (headings
//! with their `{#id}` attributes, list items with their task markers, bold labels, fenced code to
//! ignore); labelled lines inside a section (`Status:`, `**Timestamp:**`, `- Gate record: ...`)
//! are read line by line, outside code. Every element keeps its 1-based line. The task index is
//! only the task list section ([`index`]); what dwp cannot read there is reported, never
//! dropped. The reader never panics and accepts CRLF, tabs, a missing final newline, non-ASCII
//! titles and very long files.

pub mod boxes;
mod document;
mod index;
mod sections;
mod title;
mod validation;

use crate::plan::model::Approval;
use document::Document;
use sections::trim_start_repeated;
use std::ops::Range;

pub use sections::{is_blank, is_placeholder, section_key};
pub use title::normalize_title;
pub use validation::{ValidationList, command_argv, validation_list};

/// A task checkbox: only `[ ]`, `[x]` and `[X]` are markers; anything else (`[~]`, `[-]`, `[/]`)
/// reads as not done and is reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Marker {
    Open,
    Done,
    Other(String),
}

impl Marker {
    pub fn is_done(&self) -> bool {
        *self == Marker::Done
    }
}

/// One item of the README's task index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub id: u64,
    /// The title, normalised ([`normalize_title`]); `None` when the line gives none
    /// (`- [x] Task 3` with a `See:` line): then no title drift can be claimed.
    pub title: Option<String>,
    pub marker: Marker,
    /// Link destinations and task files the item names (on its line or a continuation line),
    /// without `./`: `N.task_slug.md` for Full, `#task-N` for Lite.
    pub links: Vec<String>,
    pub line: usize,
}

/// An item of the task list that dwp cannot read as a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexProblem {
    pub message: String,
    pub line: usize,
    /// The task it names, if it names one (a task line without a checkbox).
    pub task: Option<u64>,
}

/// A checkbox outside the task index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkbox {
    pub marker: Marker,
    pub text: String,
    pub line: usize,
}

/// What `Plan Status:` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanStatusValue {
    Count { done: u64, total: u64 },
    Materializing,
    Other(String),
}

impl std::fmt::Display for PlanStatusValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanStatusValue::Count { done, total } => write!(f, "{done}/{total}"),
            PlanStatusValue::Materializing => f.write_str("materializing"),
            PlanStatusValue::Other(text) => f.write_str(text),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located<T> {
    pub value: T,
    pub line: usize,
}

/// `**Standard:** DWP spec 5.0.0 (migrated from 2.4.0)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standard {
    pub version: String,
    /// What follows the version, e.g. a migration note.
    pub suffix: Option<String>,
    pub line: usize,
}

/// A titled part of a document: a heading and the text up to the next heading of its level or
/// above, or a bold label (`**Goal:** ...`) and the text up to the next label or heading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// As written (`5. Acceptance Criteria`).
    pub name: String,
    /// What it means ([`section_key`]: `acceptance criteria`).
    pub key: String,
    pub body: String,
    pub line: usize,
}

/// The `Completion & Log` (Lite: `Completion log`) section of a task record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskLog {
    pub line: usize,
    pub status: Option<Located<String>>,
    pub timestamp: Option<Located<String>>,
    pub gate_record: Option<Located<String>>,
    pub skills_disposition: Option<Located<String>>,
    pub documentation_decision: Option<Located<String>>,
}

impl TaskLog {
    /// The status the log's `Status:` line records, as one word: `pending`, `in_progress`,
    /// `completed`, `blocked`, `skipped`, or another word as written (lower case). `None` when
    /// the line is absent, empty or still a template's placeholder (`(completed / blocked)`).
    pub fn status_word(&self) -> Option<String> {
        status_word(&self.status.as_ref()?.value)
    }
}

/// The first word of a `Status:` value, whatever its emphasis, emoji, case or punctuation
/// (`**Pending.**`, `✅ Complete`, `in progress`).
pub fn status_word(value: &str) -> Option<String> {
    let value = value.trim();
    if value.starts_with(['(', '<', '{', '[']) {
        return None;
    }
    let mut words = value
        .split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '*' | '_'
                        | '`'
                        | '.'
                        | ','
                        | ';'
                        | ':'
                        | '!'
                        | '—'
                        | '–'
                        | '-'
                        | '/'
                        | '('
                        | ')'
                )
        })
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        });
    let first = words.next()?;
    let word = match first.as_str() {
        "in" if words.next().as_deref() == Some("progress") => "in_progress".to_owned(),
        "inprogress" => "in_progress".to_owned(),
        "complete" | "done" => "completed".to_owned(),
        _ => first,
    };
    Some(word)
}

/// `### Amendment n — YYYY-MM-DD` and its labelled fields, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Amendment {
    pub number: Option<u64>,
    pub date: String,
    pub line: usize,
    pub fields: Vec<(String, Located<String>)>,
}

impl Amendment {
    /// The value of a field, matched case-insensitively.
    pub fn field(&self, name: &str) -> Option<&Located<String>> {
        self.fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }
}

/// A task record: a Full task file or a Lite inline section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRecord {
    pub id: u64,
    /// The heading's title (`# Task 3: Title`), normalised; `None` for `## Task 3 {#task-3}`.
    pub title: Option<String>,
    /// The heading's `{#id}` attribute (Lite: `task-N`).
    pub anchor: Option<String>,
    pub line: usize,
    pub sections: Vec<Section>,
    pub log: Option<TaskLog>,
    pub amendments: Vec<Amendment>,
}

impl TaskRecord {
    /// The record of a task file that has no `Task N` heading: no title, no section.
    pub fn headless(id: u64) -> Self {
        TaskRecord {
            id,
            title: None,
            anchor: None,
            line: 1,
            sections: Vec::new(),
            log: None,
            amendments: Vec::new(),
        }
    }

    /// The section named `name`, however the record writes it (heading or label, numbered or
    /// decorated): names are compared by [`section_key`].
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.section_by_key(&section_key(name))
    }

    fn section_by_key(&self, key: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.key == key)
    }
}

/// A row of the Plan Variables table (or a `Name: value` line for the few variables plans
/// also write as lines: Plan Format, Materialization, Approval, Rigor, Archetype).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    pub name: String,
    pub value: String,
    pub line: usize,
}

/// Everything dwp reads from a plan's README.md.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Readme {
    pub title: Option<String>,
    pub standard: Option<Standard>,
    pub goal: Option<Section>,
    pub context: Option<Section>,
    pub variables: Vec<Variable>,
    pub plan_status: Option<Located<PlanStatusValue>>,
    /// Every further `Plan Status:` line (and the table row, when a line came first): the first
    /// is the one read, and one that says otherwise is reported.
    pub more_plan_status: Vec<Located<PlanStatusValue>>,
    /// A legacy plan's progress count in its `Plan Status / Notes` section
    /// (`- Completed: 2/18`, `- **Tasks completed:** 0 / 18`): used only in the legacy era, and
    /// only without a `Plan Status:` line.
    pub notes_count: Option<Located<PlanStatusValue>>,
    pub index: Vec<IndexEntry>,
    /// Line of the first index item.
    pub index_line: Option<usize>,
    /// Line of the task list section's heading, when there is one.
    pub task_list_line: Option<usize>,
    /// Items of the task list section dwp cannot read as tasks: reported, never skipped.
    pub index_problems: Vec<IndexProblem>,
    /// Lines of index items read from a block indented as code (four spaces): renderers show
    /// them as code.
    pub index_in_code: Vec<usize>,
    pub strays: Vec<Checkbox>,
    /// `(re-validate: ...)` after a refine.
    pub revalidate: Option<Located<String>>,
    /// Lite plans: the `## Task N ... {#task-N}` sections.
    pub inline_tasks: Vec<TaskRecord>,
}

impl Readme {
    pub fn variable(&self, name: &str) -> Option<&Variable> {
        self.variables
            .iter()
            .find(|v| v.name.eq_ignore_ascii_case(name))
    }

    /// The approval the Approval row records, if it records a known one.
    pub fn approval(&self) -> Option<Approval> {
        parse_approval(&self.variable("Approval")?.value)
    }

    /// Checked boxes and index items: what `Plan Status: X/N` must say.
    pub fn box_counts(&self) -> (u64, u64) {
        let done = self.index.iter().filter(|e| e.marker.is_done()).count() as u64;
        (done, self.index.len() as u64)
    }
}

/// The value of a row of the README's Plan Variables table.
pub fn plan_variable(readme: &str, name: &str) -> Option<String> {
    parse_readme(readme).variable(name).map(|v| v.value.clone())
}

/// The approval the README's Approval row records, if it records a known one.
pub fn readme_approval(readme: &str) -> Option<Approval> {
    parse_readme(readme).approval()
}

fn parse_approval(value: &str) -> Option<Approval> {
    let word = value
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ',' | ';' | '—' | '`' | '*'))
        .find(|w| !w.is_empty())?
        .to_ascii_lowercase()
        .replace('-', "_");
    word.parse().ok()
}

// ---------------------------------------------------------------------------------------------
// README.

/// Variables plans also write as `Name: value` lines rather than table rows.
const LINE_VARIABLES: [&str; 6] = [
    "Plan Format",
    "Materialization",
    "Approval",
    "Rigor",
    "Archetype",
    "Standard",
];

/// Parse a plan's README.md.
pub fn parse_readme(text: &str) -> Readme {
    let doc = Document::parse(text);
    let headings = &doc.outline.headings;
    let mut readme = Readme {
        title: headings
            .iter()
            .find(|h| h.level == 1)
            .map(|h| h.text.trim().to_owned()),
        ..Readme::default()
    };
    readme.variables = table_variables(&doc);
    for (line_no, line) in doc.plain_lines(0..doc.text.len()) {
        scan_readme_line(&mut readme, line_no, line);
    }
    if readme.standard.is_none() {
        readme.standard = readme
            .variable("Standard")
            .and_then(|v| standard(&v.value, v.line));
    }
    if let Some(v) = readme.variable("Plan Status") {
        let row = Located {
            value: plan_status_value(&v.value),
            line: v.line,
        };
        match readme.plan_status {
            None => readme.plan_status = Some(row),
            Some(_) => readme.more_plan_status.push(row),
        }
    }
    readme.notes_count = notes_count(&doc);
    readme.inline_tasks = inline_tasks(&doc);
    // Plan-level sections are read before the first Lite task record, never inside one.
    let plan_part = 0..readme
        .inline_tasks
        .first()
        .map_or(doc.text.len(), |r| doc.lines.starts[r.line - 1]);
    readme.goal = sections::find_section(&doc, plan_part.clone(), "goal");
    readme.context = sections::find_section(&doc, plan_part, "context");
    index::read_index(&doc, &mut readme);
    readme
}

fn table_variables(doc: &Document) -> Vec<Variable> {
    doc.outline
        .tables
        .iter()
        .filter_map(|(cells, start)| match cells.as_slice() {
            [name, value, ..] => Some(Variable {
                name: name.trim().trim_matches(['*', '`']).trim().to_owned(),
                value: value.trim().to_owned(),
                line: doc.lines.of(*start),
            }),
            _ => None,
        })
        .collect()
}

fn scan_readme_line(readme: &mut Readme, line_no: usize, line: &str) {
    let unbolded = if line.contains('*') {
        std::borrow::Cow::Owned(line.replace("**", ""))
    } else {
        std::borrow::Cow::Borrowed(line)
    };
    let quoted = unbolded.trim().trim_start_matches(['>', '|', ' ', '\t']);
    let trimmed = trim_start_repeated(trim_start_repeated(quoted, "- "), "* ").trim();
    if let Some(rest) = strip_label(trimmed, "Plan Status") {
        let status = Located {
            value: plan_status_value(rest),
            line: line_no,
        };
        match readme.plan_status {
            None => readme.plan_status = Some(status),
            Some(_) => readme.more_plan_status.push(status),
        }
    }
    if readme.standard.is_none()
        && let Some(rest) = strip_label(trimmed, "Standard")
    {
        readme.standard = standard(rest, line_no);
    }
    for name in LINE_VARIABLES {
        if let Some(rest) = strip_label(trimmed, name)
            && readme.variable(name).is_none()
            && !rest.is_empty()
        {
            readme.variables.push(Variable {
                name: name.to_owned(),
                value: rest.trim_end_matches('|').trim().to_owned(),
                line: line_no,
            });
        }
    }
    if readme.revalidate.is_none()
        && let Some(start) = revalidate_note(line)
    {
        let rest = &line[start + REVALIDATE.len()..];
        let value = rest.split(')').next().unwrap_or(rest).trim().to_owned();
        readme.revalidate = Some(Located {
            value,
            line: line_no,
        });
    }
}

const REVALIDATE: &str = "(re-validate:";

/// Where `(re-validate:` starts in `line`. Every line of the README is asked: looking only where
/// a `(` is costs less than a substring search set up per line.
fn revalidate_note(line: &str) -> Option<usize> {
    line.match_indices('(')
        .map(|(at, _)| at)
        .find(|&at| line[at..].starts_with(REVALIDATE))
}

/// `Name: rest` (the name matched case-insensitively) → `rest`.
fn strip_label<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let head = line.get(..name.len())?;
    if !head.eq_ignore_ascii_case(name) {
        return None;
    }
    Some(line[name.len()..].strip_prefix(':')?.trim())
}

/// `DWP spec 5.0.0 (migrated from 2.4.0)` → the version and what follows it.
fn standard(text: &str, line: usize) -> Option<Standard> {
    let rest = text.split('|').next().unwrap_or(text).trim();
    let rest = rest
        .strip_prefix("DWP spec")
        .or_else(|| rest.strip_prefix("DWP"))
        .unwrap_or(rest)
        .trim();
    let (version, suffix) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let version = version.trim_start_matches('v').trim_matches('`');
    (!version.is_empty()).then(|| Standard {
        version: version.to_owned(),
        suffix: (!suffix.trim().is_empty()).then(|| suffix.trim().to_owned()),
        line,
    })
}

/// `2/7`, `2 / 7 completed`, `materializing`.
fn plan_status_value(text: &str) -> PlanStatusValue {
    let text = text.trim().trim_matches('`').trim();
    let word = text.split_whitespace().next().unwrap_or("");
    if word.eq_ignore_ascii_case("materializing") {
        return PlanStatusValue::Materializing;
    }
    let count = text.split_once('/').and_then(|(done, rest)| {
        let total: String = rest
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        Some(PlanStatusValue::Count {
            done: done.trim().parse().ok()?,
            total: total.parse().ok()?,
        })
    });
    count.unwrap_or_else(|| PlanStatusValue::Other(text.to_owned()))
}

/// Labels of the progress lines older plans keep in their `Plan Status / Notes` section
/// (docs/plan-markdown.md, "Plan Status line"), compared by [`section_key`].
const NOTES_COUNT_LABELS: [&str; 4] = ["completed", "tasks completed", "completion", "status"];

/// The first progress count of the README's `Plan Status / Notes` section (a heading whose key
/// starts with `plan status`): a list item or line `Label: ... X/N ...` under one of
/// [`NOTES_COUNT_LABELS`] (`- Completed: 2/18`, `- **Tasks completed:** 0 / 18`,
/// `- Status: Not started — 0/6 tasks completed`, `- Completion: 0/10 tasks (0%)`).
fn notes_count(doc: &Document) -> Option<Located<PlanStatusValue>> {
    let headings = &doc.outline.headings;
    let (i, heading) = headings
        .iter()
        .enumerate()
        .find(|(_, h)| h.key.starts_with("plan status"))?;
    let end = sections::section_end(headings, i, doc.text.len());
    doc.plain_lines(heading.range.end..end)
        .find_map(|(line_no, line)| {
            let line = line.replace("**", "");
            let item = trim_start_repeated(
                trim_start_repeated(line.trim().trim_start_matches('>').trim(), "- "),
                "* ",
            );
            let (label, value) = item.split_once(':')?;
            NOTES_COUNT_LABELS
                .contains(&section_key(label).as_str())
                .then(|| first_count(value))
                .flatten()
                .map(|(done, total)| Located {
                    value: PlanStatusValue::Count { done, total },
                    line: line_no,
                })
        })
}

/// The first `X/N` or `X / N` in `text` (whole numbers on both sides of the slash, and no
/// further slash: `2026/03/02` is a date, not a count).
fn first_count(text: &str) -> Option<(u64, u64)> {
    text.match_indices('/').find_map(|(at, _)| {
        let before = text[..at].trim_end();
        let digits = before.len() - before.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let done = &before[before.len() - digits..];
        let after = text[at + 1..].trim_start();
        let total =
            &after[..after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len()];
        let whole = !before[..before.len() - digits]
            .ends_with(|c: char| c.is_alphanumeric() || c == '/')
            && !after[total.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '/');
        (whole && !done.is_empty() && !total.is_empty())
            .then(|| Some((done.parse().ok()?, total.parse().ok()?)))
            .flatten()
    })
}

/// Lite: each `## Task N ...` heading (usually with `{#task-N}`) up to the next `## `.
fn inline_tasks(doc: &Document) -> Vec<TaskRecord> {
    let headings = &doc.outline.headings;
    headings
        .iter()
        .enumerate()
        .filter(|(_, h)| h.level == 2)
        .filter_map(|(i, h)| {
            let (id, title) = sections::task_line(&h.text)?;
            let end = sections::section_end(headings, i, doc.text.len());
            Some(sections::task_record(doc, i, end, id, title))
        })
        .collect()
}

/// Lite: the byte range of task `id`'s `## Task N` section in the README (heading to the next
/// heading of level 2 or above, or the end), where `dwp amend` appends to its log. Refused (with
/// the reason) when there is no such section, or when the README holds markdown indented as
/// code: a writer does not write into markdown it had to reinterpret.
pub fn inline_task_span(text: &str, id: u64) -> Result<Range<usize>, String> {
    let doc = Document::parse(text);
    if let Some(block) = doc.dedented.first() {
        return Err(format!(
            "holds a task list indented four spaces (lines {}-{}), which renders as code: dwp does not write into it",
            block.start(),
            block.end()
        ));
    }
    let headings = &doc.outline.headings;
    let (i, heading) = headings
        .iter()
        .enumerate()
        .find(|(_, h)| h.level == 2 && sections::task_line(&h.text).is_some_and(|(n, _)| n == id))
        .ok_or_else(|| format!("has no `## Task {id}` section"))?;
    let end = sections::section_end(headings, i, text.len());
    Ok(heading.range.start..end)
}

/// The 1-based line of the last row of the Plan Variables table: the first table under a
/// heading that reads `Plan Variables`, outside code. `None` when the README has no such table.
pub fn plan_variables_last_row(text: &str) -> Option<usize> {
    let doc = Document::parse(text);
    let headings = &doc.outline.headings;
    let (i, heading) = headings
        .iter()
        .enumerate()
        .find(|(_, h)| h.key == "plan variables")?;
    let end = sections::section_end(headings, i, text.len());
    let rows: Vec<usize> = doc
        .outline
        .tables
        .iter()
        .map(|(_, start)| *start)
        .filter(|start| (heading.range.end..end).contains(start))
        .collect();
    let first = *rows.first()?;
    // The first table's rows: its header, the delimiter row below it, then one row a line.
    let mut last = doc.lines.of(first);
    for (index, start) in rows.iter().enumerate().skip(1) {
        let step = if index == 1 { 2 } else { 1 };
        let line = doc.lines.of(*start);
        if line != last + step {
            break;
        }
        last = line;
    }
    Some(last)
}

/// `text` with its 1-based line `line_no` (without its line ending) replaced by `edit`.
pub fn edit_line(text: &str, line_no: usize, edit: impl FnOnce(&str) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut edit = Some(edit);
    for (index, line) in text.split_inclusive('\n').enumerate() {
        match edit.take_if(|_| index + 1 == line_no) {
            Some(edit) => {
                let body = line.trim_end_matches(['\n', '\r']);
                out.push_str(&edit(body));
                out.push_str(&line[body.len()..]);
            }
            None => out.push_str(line),
        }
    }
    out
}

/// `text` (the file holding `log`) with the log's lines as a completion leaves them: `Status:`
/// completed (unless it says so already), an empty `Timestamp:` set to `now`, an empty `Gate
/// record:` to `gate_record`. Only lines that are there change, and only their value: the skills
/// disposition and documentation decision are the agent's to write (`dwp update --tick`).
pub fn fill_log(text: &str, log: &TaskLog, now: &str, gate_record: Option<&str>) -> String {
    let empty =
        |field: &Option<Located<String>>| field.as_ref().is_some_and(|f| f.value.trim().is_empty());
    let mut edits: Vec<(&Located<String>, &str)> = Vec::new();
    if log.status_word().as_deref() != Some("completed") {
        edits.extend(log.status.as_ref().map(|f| (f, "completed")));
    }
    if empty(&log.timestamp) {
        edits.extend(log.timestamp.as_ref().map(|f| (f, now)));
    }
    if let Some(record) = gate_record.filter(|_| empty(&log.gate_record)) {
        edits.extend(log.gate_record.as_ref().map(|f| (f, record)));
    }
    edits
        .into_iter()
        .fold(text.to_owned(), |text, (field, value)| {
            edit_line(&text, field.line, |line| {
                with_value(line, &field.value, value)
            })
        })
}

/// `line` with its value `old` replaced by `new`: the last occurrence of `old`, or, for an empty
/// value, `new` after the label.
fn with_value(line: &str, old: &str, new: &str) -> String {
    let old = old.trim();
    match (old.is_empty(), line.rfind(old)) {
        (false, Some(at)) => format!("{}{new}{}", &line[..at], &line[at + old.len()..]),
        _ => format!("{} {new}", line.trim_end()),
    }
}

// ---------------------------------------------------------------------------------------------
// Task records.

/// Parse a Full task file (`# Task N: title` and its sections).
pub fn parse_task_file(text: &str) -> Option<TaskRecord> {
    let doc = Document::parse(text);
    let (index, (id, title)) = doc
        .outline
        .headings
        .iter()
        .enumerate()
        .find_map(|(i, h)| Some((i, sections::task_line(&h.text)?)))?;
    Some(sections::task_record(
        &doc,
        index,
        doc.text.len(),
        id,
        title,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `fill_log` changes only the values of lines that are there, keeping each line's ending.
    #[test]
    fn fill_log_writes_only_the_values_of_lines_that_are_there_in_their_line_endings() {
        let text = "# Task 1: Tiny\r\n\r\n## Completion & Log\r\n\r\n**Status:** pending\r\nTimestamp:\r\nSkills disposition:\r\n";
        let record = parse_task_file(text).unwrap();
        let filled = fill_log(
            text,
            record.log.as_ref().unwrap(),
            "2026-06-09T15:00:00Z",
            Some("cargo test → 3 passed"),
        );
        assert_eq!(
            filled,
            "# Task 1: Tiny\r\n\r\n## Completion & Log\r\n\r\n**Status:** completed\r\nTimestamp: 2026-06-09T15:00:00Z\r\nSkills disposition:\r\n"
        );
    }

    const FULL: &str = "# Add payment webhooks\n\n**Standard:** DWP spec 5.0.0 (migrated from 2.4.0)\n\n\
        ## Goal\n\nAccept webhooks.\n\n## Context\n\nOrders are polled.\n\n## Plan Variables\n\n\
        | Variable | Value |\n|---|---|\n| Plan Format | full |\n| **Approval** | Pre-approved (user, 2026-06-09) |\n\n\
        ## Tasks\n\nPlan Status: 1/3\n\n\
        - [x] Task 1: Create endpoint — [1.task_endpoint.md](1.task_endpoint.md)\n\
        - [~] Task 2: Store events — [2.task_store.md](2.task_store.md)\n\
        - [ ] Task 3: Final review — [3.task_final_review.md](3.task_final_review.md)\n\n\
        ## Checks\n\n- [ ] check Task 2 again\n\n```\n- [x] Task 9: fenced\n```\n";

    #[test]
    fn the_index_is_the_task_list_and_nothing_else() {
        let readme = parse_readme(FULL);
        let ids: Vec<u64> = readme.index.iter().map(|e| e.id).collect();
        assert_eq!(ids, [1, 2, 3]);
        assert_eq!(readme.index[0].title.as_deref(), Some("Create endpoint"));
        assert_eq!(readme.index[0].marker, Marker::Done);
        assert_eq!(readme.index[1].marker, Marker::Other("[~]".into()));
        assert_eq!(readme.index[2].marker, Marker::Open);
        assert_eq!(readme.index[0].links, ["1.task_endpoint.md"]);
        assert_eq!(readme.strays.len(), 1, "{:?}", readme.strays);
        assert_eq!(readme.strays[0].text, "check Task 2 again");
        assert_eq!(readme.index[0].line, 24);
    }

    #[test]
    fn readme_fields_are_read_with_their_lines() {
        let readme = parse_readme(FULL);
        assert_eq!(readme.title.as_deref(), Some("Add payment webhooks"));
        let standard = readme.standard.unwrap();
        assert_eq!(standard.version, "5.0.0");
        assert_eq!(standard.suffix.as_deref(), Some("(migrated from 2.4.0)"));
        assert_eq!(readme.goal.unwrap().body, "Accept webhooks.");
        assert_eq!(readme.context.unwrap().body, "Orders are polled.");
        assert_eq!(
            readme.plan_status.unwrap().value,
            PlanStatusValue::Count { done: 1, total: 3 }
        );
        assert_eq!(readme_approval(FULL), Some(Approval::PreApproved));
        assert_eq!(plan_variable(FULL, "plan format").as_deref(), Some("full"));
    }

    #[test]
    fn crlf_and_a_missing_final_newline_read_the_same() {
        let crlf = FULL.replace('\n', "\r\n");
        let crlf = crlf.trim_end();
        let readme = parse_readme(crlf);
        assert_eq!(readme.index.len(), 3);
        assert_eq!(readme.index[2].title.as_deref(), Some("Final review"));
        assert_eq!(readme.index[0].line, 24);
    }

    #[test]
    fn the_approval_row_is_read_from_the_plan_variables_table() {
        // Plans also write the row as a line of its own (bold or not); never from prose.
        assert_eq!(
            readme_approval("# Plan\n\nApproval: approved\n"),
            Some(Approval::Approved)
        );
        assert_eq!(
            readme_approval("# Plan\n\n**Approval:** pre-approved (trust)\n"),
            Some(Approval::PreApproved)
        );
        assert_eq!(readme_approval("# Plan\n\nThe Approval: approved.\n"), None);
        // The table row wins over a line.
        let both = FULL.replace(
            "# Add payment webhooks\n",
            "# Add payment webhooks\n\nApproval: pending\n",
        );
        assert_eq!(readme_approval(&both), Some(Approval::PreApproved));
        let pending = FULL.replace("Pre-approved (user, 2026-06-09)", "pending");
        assert_eq!(readme_approval(&pending), Some(Approval::Pending));
        let unknown = FULL.replace("Pre-approved (user, 2026-06-09)", "maybe");
        assert_eq!(readme_approval(&unknown), None);
    }

    const TASK: &str = "# Task 2: Store events\n\n## Context\n\nWhy.\n\n## Goal\n\nWhat.\n\n\
        ## Acceptance Criteria\n\n- stored once\n\n## Completion & Log\n\n**Status:** completed\n\
        Timestamp: 2026-06-09T15:00:00Z\n- Gate record: pnpm test → 42 passed\nSkills disposition: none\n\
        Documentation decision: README updated\n\n```\nStatus: pending\n```\n\n\
        ### Amendment 1 — 2026-06-10\n\nOriginal criterion: stored once\nObserved: duplicates\n\
        Disposition: revised criterion\nAuthority: user\n";

    #[test]
    fn a_task_file_gives_its_sections_log_and_amendments() {
        let record = parse_task_file(TASK).unwrap();
        assert_eq!(
            (record.id, record.title.as_deref()),
            (2, Some("Store events"))
        );
        assert_eq!(record.section("goal").unwrap().body, "What.");
        let log = record.log.unwrap();
        assert_eq!(log.status.unwrap().value, "completed");
        assert_eq!(log.gate_record.unwrap().value, "pnpm test → 42 passed");
        assert_eq!(log.documentation_decision.unwrap().value, "README updated");
        assert_eq!(record.amendments.len(), 1);
        let amendment = &record.amendments[0];
        assert_eq!(
            (amendment.number, amendment.date.as_str()),
            (Some(1), "2026-06-10")
        );
        assert_eq!(amendment.field("authority").unwrap().value, "user");
    }

    #[test]
    fn known_sections_are_found_at_any_level_inside_the_record() {
        let text = "# Task 1: Mixed\n\n### Context\n\nWhy.\n\n### Goal\n\nWhat.\n\n\
            ## Completion & Log\n\nStatus: pending\n";
        let record = parse_task_file(text).unwrap();
        assert_eq!(record.section("Context").unwrap().body, "Why.");
        assert_eq!(record.section("Goal").unwrap().body, "What.");
        assert_eq!(record.log.unwrap().status.unwrap().value, "pending");
    }

    #[test]
    fn bold_label_records_are_read_too() {
        let text =
            "# Task 1: Tiny\n\n**Goal:** make it work\n\n**Completion & Log:**\nStatus: pending\n";
        let record = parse_task_file(text).unwrap();
        assert_eq!(record.section("Goal").unwrap().body, "make it work");
        assert_eq!(record.log.unwrap().status.unwrap().value, "pending");
    }

    #[test]
    fn lite_sections_are_task_records() {
        let text = "# Plan\n\n## Tasks\n\n- [ ] Task 1: One — [#task-1](#task-1)\n\n\
            ## Task 1: One {#task-1}\n\n### Goal\n\nG.\n\n### Completion log\n\nStatus: in_progress\n\n## Notes\n\nx\n";
        let readme = parse_readme(text);
        assert_eq!(readme.inline_tasks.len(), 1);
        let record = &readme.inline_tasks[0];
        assert_eq!(record.anchor.as_deref(), Some("task-1"));
        assert_eq!(record.title.as_deref(), Some("One"));
        assert_eq!(
            record.log.as_ref().unwrap().status.as_ref().unwrap().value,
            "in_progress"
        );
        assert_eq!(readme.index[0].links, ["#task-1"]);
    }

    #[test]
    fn a_legacy_count_is_read_from_the_plan_status_notes_section_only() {
        let count = |notes: &str| {
            let text = format!(
                "# Plan\n\n## Tasks\n\n- [ ] Task 1: One\n\n## 7. Plan Status / Notes\n\n{notes}\n## 8. Next\n\n- Completed: 9/9\n"
            );
            parse_readme(&text).notes_count.map(|c| c.value.to_string())
        };
        assert_eq!(count("- Completed: 2/18").as_deref(), Some("2/18"));
        assert_eq!(
            count("- **Tasks completed:** 0 / 18").as_deref(),
            Some("0/18")
        );
        assert_eq!(
            count("- Status: Not started — 0/6 tasks completed").as_deref(),
            Some("0/6")
        );
        assert_eq!(
            count("### Current Status\n\n- **Completion:** 0/10 tasks (0%)").as_deref(),
            Some("0/10")
        );
        // A date is no count; a label outside the four is not read; nor is another section.
        assert_eq!(
            count("- Status: done 2026/03/02 — 1/4 tasks").as_deref(),
            Some("1/4")
        );
        assert_eq!(count("- Progress: 1/4"), None);
        assert_eq!(count("- Current status: In progress"), None);
    }

    #[test]
    fn odd_input_never_panics() {
        for text in [
            "",
            "[",
            "- [",
            "- [x",
            "# Task",
            "# Task 99999999999999999999999: x",
            "\u{feff}- [x] Task 1",
            "|a|\n|-|\n|b|",
            "- [é] Task 1: x",
        ] {
            let _ = parse_readme(text);
            let _ = parse_task_file(text);
        }
    }
}
