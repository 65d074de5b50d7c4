//! The plan's markdown, read with pulldown-cmark: the one reader of the human source of truth
//! that every command shares (`update` for the Approval row, `reconcile`, `status`, `verify`,
//! `finalize`).
//!
//! pulldown-cmark finds the structure (headings with their `{#id}` attributes, list items with
//! their task markers, fenced code to ignore); labelled lines inside a section (`Status:`,
//! `**Timestamp:**`, `- Gate record: ...`) are read line by line, outside code. Every element keeps
//! its 1-based line. The task index is only the task list itself (the list under the `Tasks`
//! heading, or else the first list of `Task N` checkboxes): a checklist elsewhere that mentions
//! "Task 2" is kept apart as a stray and never corrupts the index. The reader never panics and
//! accepts CRLF, tabs, a missing final newline, non-ASCII titles and very long files.

use crate::model::Approval;
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use std::ops::Range;

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

/// One line of the README's task index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub id: u64,
    pub title: String,
    pub marker: Marker,
    /// Link destinations on the line (`N.task_slug.md` for Full, `#task-N` for Lite).
    pub links: Vec<String>,
    pub line: usize,
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
/// above, or a bold-label paragraph (`**Goal:** ...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
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
    pub title: String,
    /// The heading's `{#id}` attribute (Lite: `task-N`).
    pub anchor: Option<String>,
    pub line: usize,
    pub sections: Vec<Section>,
    pub log: Option<TaskLog>,
    pub amendments: Vec<Amendment>,
}

impl TaskRecord {
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(name))
    }
}

/// A row of the Plan Variables table.
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
    pub index: Vec<IndexEntry>,
    /// Line of the heading (or first item) of the task index.
    pub index_line: Option<usize>,
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
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ',' | ';' | '—'))
        .find(|w| !w.is_empty())?
        .to_ascii_lowercase()
        .replace('-', "_");
    word.parse().ok()
}

// ---------------------------------------------------------------------------------------------
// Structure: one pass of pulldown-cmark over the text.

#[derive(Debug, Clone)]
struct Heading {
    level: u8,
    text: String,
    id: Option<String>,
    range: Range<usize>,
}

#[derive(Debug, Clone)]
struct Item {
    /// Start offset of the list this item belongs to, and its nesting depth.
    list: usize,
    depth: usize,
    marker: Option<Marker>,
    /// Text before the first link, and all text.
    lead: String,
    text: String,
    links: Vec<String>,
    range: Range<usize>,
}

#[derive(Debug, Default)]
struct Outline {
    headings: Vec<Heading>,
    items: Vec<Item>,
    tables: Vec<(Vec<String>, usize)>,
    code: Vec<Range<usize>>,
}

fn options() -> Options {
    Options::ENABLE_TASKLISTS | Options::ENABLE_HEADING_ATTRIBUTES | Options::ENABLE_TABLES
}

fn outline(text: &str) -> Outline {
    let mut out = Outline::default();
    let mut heading: Option<Heading> = None;
    let mut lists: Vec<usize> = Vec::new();
    let mut items: Vec<Item> = Vec::new(); // open items, innermost last
    let mut row: Option<(Vec<String>, usize)> = None;
    let mut in_link = false;
    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, id, .. }) => {
                heading = Some(Heading {
                    level: heading_level(level),
                    text: String::new(),
                    id: id.map(|i| i.to_string()),
                    range,
                });
            }
            Event::End(TagEnd::Heading(_)) => out.headings.extend(heading.take()),
            Event::Start(Tag::List(_)) => lists.push(range.start),
            Event::End(TagEnd::List(_)) => {
                lists.pop();
            }
            Event::Start(Tag::Item) => items.push(Item {
                list: lists.last().copied().unwrap_or(0),
                depth: lists.len().saturating_sub(1),
                marker: None,
                lead: String::new(),
                text: String::new(),
                links: Vec::new(),
                range,
            }),
            Event::End(TagEnd::Item) => out.items.extend(items.pop()),
            Event::TaskListMarker(done) => {
                if let Some(item) = items.last_mut().filter(|i| i.text.is_empty()) {
                    item.marker = Some(if done { Marker::Done } else { Marker::Open });
                }
            }
            Event::Start(Tag::Link { dest_url, .. }) => {
                in_link = true;
                if let Some(item) = items.last_mut() {
                    item.links.push(dest_url.to_string());
                }
            }
            Event::End(TagEnd::Link) => in_link = false,
            Event::Start(Tag::CodeBlock(_)) => out.code.push(range),
            Event::Start(Tag::TableHead | Tag::TableRow) => {
                row = Some((Vec::new(), range.start));
            }
            Event::End(TagEnd::TableHead | TagEnd::TableRow) => out.tables.extend(row.take()),
            Event::Start(Tag::TableCell) => {
                if let Some((cells, _)) = row.as_mut() {
                    cells.push(String::new());
                }
            }
            Event::Code(t) if row.is_none() => {
                // Titles keep their inline code as written: ``Add `--json` flag``.
                let quoted = format!("`{t}`");
                if let Some(h) = heading.as_mut() {
                    h.text.push_str(&quoted);
                } else if let Some(item) = items.last_mut() {
                    item.text.push_str(&quoted);
                    if item.links.is_empty() && !in_link {
                        item.lead.push_str(&quoted);
                    }
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.text.push_str(&t);
                } else if let Some(cell) = row.as_mut().and_then(|(c, _)| c.last_mut()) {
                    cell.push_str(&t);
                } else if let Some(item) = items.last_mut() {
                    let links_before = item.links.len();
                    item.text.push_str(&t);
                    if links_before == 0 && !in_link {
                        item.lead.push_str(&t);
                    }
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(item) = items.last_mut() {
                    item.text.push(' ');
                }
            }
            _ => {}
        }
    }
    out
}

fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// Offsets to 1-based line numbers.
struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    fn new(text: &str) -> Lines {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Lines { starts }
    }

    fn of(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset)
    }
}

/// The lines of `text[range]` with their 1-based numbers, skipping fenced and indented code.
fn plain_lines<'a>(
    text: &'a str,
    range: Range<usize>,
    code: &'a [Range<usize>],
    lines: &'a Lines,
) -> impl Iterator<Item = (usize, &'a str)> + 'a {
    let start = range.start;
    text[range]
        .split_inclusive('\n')
        .scan(start, move |offset, line| {
            let at = *offset;
            *offset += line.len();
            Some((at, line))
        })
        .filter(move |(at, _)| !in_code(code, *at))
        .map(move |(at, line)| (lines.of(at), line.trim_end_matches(['\n', '\r'])))
}

/// Whether `offset` lies in a code block (`code` is in document order, as events come).
fn in_code(code: &[Range<usize>], offset: usize) -> bool {
    let after = code.partition_point(|c| c.start <= offset);
    after > 0 && code[after - 1].contains(&offset)
}

/// `Label: value`, `**Label:** value`, `- **Label**: value`: the label and value, if any.
fn label_line(line: &str) -> Option<(String, String)> {
    let line = line.trim();
    let line = line
        .strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))
        .unwrap_or(line)
        .trim_start();
    let unbolded = line.replacen("**", "", 2);
    let (label, value) = unbolded.split_once(':')?;
    let label = label.trim().trim_matches('*').trim();
    if label.is_empty() || label.len() > 40 || label.contains(['`', '[', '(']) {
        return None;
    }
    Some((
        label.to_owned(),
        value.trim().trim_start_matches("**").trim().to_owned(),
    ))
}

// ---------------------------------------------------------------------------------------------
// README.

/// Parse a plan's README.md.
pub fn parse_readme(text: &str) -> Readme {
    let outline = outline(text);
    let lines = Lines::new(text);
    let mut readme = Readme {
        title: outline
            .headings
            .iter()
            .find(|h| h.level == 1)
            .map(|h| h.text.trim().to_owned()),
        ..Readme::default()
    };
    readme.variables = outline
        .tables
        .iter()
        .filter_map(|(cells, start)| match cells.as_slice() {
            [name, value, ..] => Some(Variable {
                name: name.trim().trim_matches('*').trim().to_owned(),
                value: value.trim().to_owned(),
                line: lines.of(*start),
            }),
            _ => None,
        })
        .collect();
    for (line_no, line) in plain_lines(text, 0..text.len(), &outline.code, &lines) {
        scan_readme_line(&mut readme, line_no, line);
    }
    readme.goal = section_named(text, &outline, &lines, "Goal");
    readme.context = section_named(text, &outline, &lines, "Context");
    read_index(&mut readme, &outline, &lines);
    readme.inline_tasks = inline_tasks(text, &outline, &lines);
    readme
}

fn scan_readme_line(readme: &mut Readme, line_no: usize, line: &str) {
    let unbolded = line.replace("**", "");
    let trimmed = unbolded.trim().trim_start_matches("- ").trim();
    if readme.plan_status.is_none()
        && let Some(rest) = trimmed.strip_prefix("Plan Status:")
    {
        readme.plan_status = Some(Located {
            value: plan_status_value(rest.trim()),
            line: line_no,
        });
    }
    if readme.standard.is_none()
        && let Some(rest) = trimmed.strip_prefix("Standard:")
    {
        let rest = rest.trim();
        let rest = rest.strip_prefix("DWP spec").unwrap_or(rest).trim();
        let (version, suffix) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        readme.standard = Some(Standard {
            version: version.trim_start_matches('v').to_owned(),
            suffix: (!suffix.trim().is_empty()).then(|| suffix.trim().to_owned()),
            line: line_no,
        });
    }
    if readme.revalidate.is_none()
        && let Some(start) = line.find("(re-validate:")
    {
        let rest = &line[start + "(re-validate:".len()..];
        let value = rest.split(')').next().unwrap_or(rest).trim().to_owned();
        readme.revalidate = Some(Located {
            value,
            line: line_no,
        });
    }
}

fn plan_status_value(text: &str) -> PlanStatusValue {
    let word = text.split_whitespace().next().unwrap_or("");
    if word.eq_ignore_ascii_case("materializing") {
        return PlanStatusValue::Materializing;
    }
    let parsed = word.split_once('/').and_then(|(done, total)| {
        Some(PlanStatusValue::Count {
            done: done.trim().parse().ok()?,
            total: total.trim().parse().ok()?,
        })
    });
    parsed.unwrap_or_else(|| PlanStatusValue::Other(text.to_owned()))
}

/// The section under the first heading named `name`, or a `**Name:** ...` paragraph.
fn section_named(text: &str, outline: &Outline, lines: &Lines, name: &str) -> Option<Section> {
    if let Some(index) = outline
        .headings
        .iter()
        .position(|h| h.text.trim().eq_ignore_ascii_case(name))
    {
        let heading = &outline.headings[index];
        let end = outline.headings[index + 1..]
            .iter()
            .find(|h| h.level <= heading.level)
            .map_or(text.len(), |h| h.range.start);
        return Some(Section {
            name: heading.text.trim().to_owned(),
            body: text[heading.range.end.min(end)..end].trim().to_owned(),
            line: lines.of(heading.range.start),
        });
    }
    plain_lines(text, 0..text.len(), &outline.code, lines).find_map(|(line_no, line)| {
        let (label, value) = label_line(line).filter(|_| line.contains("**"))?;
        label.eq_ignore_ascii_case(name).then_some(Section {
            name: label,
            body: value,
            line: line_no,
        })
    })
}

/// `Task 12: Title — [link](...)` → (12, "Title").
fn task_line(text: &str) -> Option<(u64, String)> {
    let rest = text.trim_start().strip_prefix("Task")?;
    let rest = rest.strip_prefix(char::is_whitespace)?.trim_start();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let id: u64 = rest[..digits].parse().ok()?;
    let after = &rest[digits..];
    if after.starts_with(|c: char| c.is_alphanumeric()) {
        return None;
    }
    let title = after
        .trim_start_matches([':', '.', ' ', '\t', '-', '—', '–'])
        .trim_end()
        .trim_end_matches(['—', '–', '-', ':', '|'])
        .trim_end();
    Some((id, title.to_owned()))
}

fn is_tasks_heading(heading: &Heading) -> bool {
    let text = heading.text.trim().to_ascii_lowercase();
    matches!(
        text.as_str(),
        "tasks" | "task list" | "task index" | "task checklist"
    )
}

/// A marker written as text: pulldown-cmark only knows `[ ]`, `[x]`, `[X]`.
fn text_marker(text: &str) -> Option<(Marker, &str)> {
    let rest = text.strip_prefix('[')?;
    let mut chars = rest.char_indices();
    let (_, c) = chars.next()?;
    let (close, _) = chars.next().filter(|(_, c)| *c == ']')?;
    (!c.is_whitespace() || c != ' ').then(|| (Marker::Other(format!("[{c}]")), &rest[close + 1..]))
}

fn read_index(readme: &mut Readme, outline: &Outline, lines: &Lines) {
    let checkbox = |item: &Item| -> Option<(Marker, String, String)> {
        match &item.marker {
            Some(m) => Some((m.clone(), item.lead.clone(), item.text.clone())),
            None => {
                let (marker, lead) = text_marker(item.lead.trim_start())?;
                let text = item.text.trim_start();
                let text = text_marker(text).map_or(text, |(_, t)| t);
                Some((marker, lead.to_owned(), text.to_owned()))
            }
        }
    };
    // The index list: the first task-line list under the Tasks heading, else the first anywhere.
    let under_heading = outline.headings.iter().position(is_tasks_heading).map(|i| {
        let start = outline.headings[i].range.start;
        let level = outline.headings[i].level;
        let end = outline.headings[i + 1..]
            .iter()
            .find(|h| h.level <= level)
            .map_or(usize::MAX, |h| h.range.start);
        (start, end)
    });
    let is_task_item = |item: &Item| {
        item.depth == 0
            && checkbox(item).is_some_and(|(_, lead, text)| {
                task_line(&lead).or_else(|| task_line(&text)).is_some()
            })
    };
    let index_list = under_heading
        .and_then(|(start, end)| {
            outline
                .items
                .iter()
                .find(|i| i.range.start > start && i.range.start < end && is_task_item(i))
        })
        .or_else(|| outline.items.iter().find(|i| is_task_item(i)))
        .map(|i| i.list);
    let mut items: Vec<&Item> = outline.items.iter().collect();
    items.sort_by_key(|i| i.range.start);
    for item in items {
        let Some((marker, lead, text)) = checkbox(item) else {
            continue;
        };
        let line = lines.of(item.range.start);
        let parsed = task_line(&lead).or_else(|| task_line(&text));
        match parsed {
            Some((id, title)) if Some(item.list) == index_list && item.depth == 0 => {
                readme.index_line.get_or_insert(line);
                readme.index.push(IndexEntry {
                    id,
                    title: if title.is_empty() {
                        text.trim().to_owned()
                    } else {
                        title
                    },
                    marker,
                    links: item.links.clone(),
                    line,
                });
            }
            _ => readme.strays.push(Checkbox {
                marker,
                text: text.trim().to_owned(),
                line,
            }),
        }
    }
}

/// Lite: each `## Task N ...` heading (usually with `{#task-N}`) up to the next `## `.
fn inline_tasks(text: &str, outline: &Outline, lines: &Lines) -> Vec<TaskRecord> {
    let headings = &outline.headings;
    headings
        .iter()
        .enumerate()
        .filter(|(_, h)| h.level == 2)
        .filter_map(|(i, h)| {
            let (id, title) = task_line(&h.text)?;
            let end = headings[i + 1..]
                .iter()
                .find(|n| n.level <= 2)
                .map_or(text.len(), |n| n.range.start);
            Some(task_record(text, outline, lines, i, end, id, title))
        })
        .collect()
}

/// Lite: the byte range of task `id`'s `## Task N` section in the README (heading to the next
/// heading of level 2 or above, or the end), where `dwp amend` appends to its log.
pub fn inline_task_span(text: &str, id: u64) -> Option<Range<usize>> {
    let outline = outline(text);
    let headings = &outline.headings;
    let (i, heading) = headings
        .iter()
        .enumerate()
        .find(|(_, h)| h.level == 2 && task_line(&h.text).is_some_and(|(n, _)| n == id))?;
    let end = headings[i + 1..]
        .iter()
        .find(|n| n.level <= 2)
        .map_or(text.len(), |n| n.range.start);
    Some(heading.range.start..end)
}

// ---------------------------------------------------------------------------------------------
// Task records.

/// Parse a Full task file (`# Task N: title` and its sections).
pub fn parse_task_file(text: &str) -> Option<TaskRecord> {
    let outline = outline(text);
    let lines = Lines::new(text);
    let (index, heading) = outline
        .headings
        .iter()
        .enumerate()
        .find(|(_, h)| task_line(&h.text).is_some())?;
    let (id, title) = task_line(&heading.text)?;
    Some(task_record(
        text,
        &outline,
        &lines,
        index,
        text.len(),
        id,
        title,
    ))
}

fn is_log_heading(name: &str) -> bool {
    let name = name.trim().to_ascii_lowercase();
    matches!(
        name.as_str(),
        "completion & log" | "completion and log" | "completion log" | "completion &amp; log"
    )
}

/// The sections a task record has by name (DESIGN.md §3): recognised at any heading level
/// inside the record, since plans in the wild nest them at `##` or `###`.
fn is_known_section(name: &str) -> bool {
    const KNOWN: [&str; 7] = [
        "context",
        "goal",
        "touched surface",
        "acceptance criteria",
        "validation",
        "instructions",
        "steps",
    ];
    let name = name.trim().to_ascii_lowercase();
    KNOWN.contains(&name.as_str()) || is_log_heading(&name)
}

/// The record whose heading is `outline.headings[index]`, reaching to `end`.
fn task_record(
    text: &str,
    outline: &Outline,
    lines: &Lines,
    index: usize,
    end: usize,
    id: u64,
    title: String,
) -> TaskRecord {
    let heading = &outline.headings[index];
    let inner: Vec<(usize, &Heading)> = outline.headings[index + 1..]
        .iter()
        .enumerate()
        .map(|(i, h)| (index + 1 + i, h))
        .take_while(|(_, h)| h.range.start < end)
        .collect();
    let mut record = TaskRecord {
        id,
        title,
        anchor: heading.id.clone(),
        line: lines.of(heading.range.start),
        sections: Vec::new(),
        log: None,
        amendments: Vec::new(),
    };
    let section_level = inner.iter().map(|(_, h)| h.level).min();
    for (pos, (_, h)) in inner.iter().enumerate() {
        // A section runs to the next heading of its level or above; its own fields stop at
        // the next heading of any level.
        let section_end = inner[pos + 1..]
            .iter()
            .find(|(_, n)| n.level <= h.level)
            .map_or(end, |(_, n)| n.range.start);
        let fields_end = inner
            .get(pos + 1)
            .map_or(end, |(_, n)| n.range.start)
            .min(section_end);
        let body = h.range.end.min(fields_end)..fields_end;
        if let Some(amendment) = amendment(text, outline, lines, h, body.clone()) {
            record.amendments.push(amendment);
        } else if Some(h.level) == section_level || is_known_section(&h.text) {
            if is_log_heading(&h.text) {
                record.log = Some(task_log(text, outline, lines, h.range.start, body.clone()));
            }
            record.sections.push(Section {
                name: h.text.trim().to_owned(),
                body: text[h.range.end.min(section_end)..section_end]
                    .trim()
                    .to_owned(),
                line: lines.of(h.range.start),
            });
        }
    }
    bold_label_sections(text, outline, lines, heading.range.end..end, &mut record);
    record
}

/// Records written with bold labels instead of headings: `**Goal:** ...` lines.
fn bold_label_sections(
    text: &str,
    outline: &Outline,
    lines: &Lines,
    range: Range<usize>,
    record: &mut TaskRecord,
) {
    const NAMES: [&str; 8] = [
        "Context",
        "Goal",
        "Touched Surface",
        "Acceptance Criteria",
        "Validation",
        "Completion & Log",
        "Completion and Log",
        "Completion log",
    ];
    let found: Vec<(usize, String, String)> =
        plain_lines(text, range.clone(), &outline.code, lines)
            .filter(|(_, line)| line.trim_start().starts_with("**"))
            .filter_map(|(n, line)| {
                let (label, value) = label_line(line)?;
                NAMES
                    .iter()
                    .any(|name| name.eq_ignore_ascii_case(&label))
                    .then_some((n, label, value))
            })
            .collect();
    for (line_no, label, value) in found {
        if record.section(&label).is_some() {
            continue;
        }
        if is_log_heading(&label) && record.log.is_none() {
            let start = lines.starts[line_no - 1];
            let next = lines.starts.get(line_no).copied().unwrap_or(range.end);
            let log_end = outline
                .headings
                .iter()
                .map(|h| h.range.start)
                .find(|&s| s > start)
                .unwrap_or(range.end)
                .min(range.end);
            record.log = Some(task_log(
                text,
                outline,
                lines,
                start,
                next.min(log_end)..log_end,
            ));
        }
        record.sections.push(Section {
            name: label,
            body: value,
            line: line_no,
        });
    }
}

fn task_log(
    text: &str,
    outline: &Outline,
    lines: &Lines,
    heading_start: usize,
    body: Range<usize>,
) -> TaskLog {
    let mut log = TaskLog {
        line: lines.of(heading_start),
        ..TaskLog::default()
    };
    for (line_no, line) in plain_lines(text, body, &outline.code, lines) {
        let Some((label, value)) = label_line(line) else {
            continue;
        };
        let slot = match label.to_ascii_lowercase().as_str() {
            "status" => &mut log.status,
            "timestamp" => &mut log.timestamp,
            "gate record" | "gate records" => &mut log.gate_record,
            "skills disposition" => &mut log.skills_disposition,
            "documentation decision" => &mut log.documentation_decision,
            _ => continue,
        };
        if slot.is_none() {
            *slot = Some(Located {
                value,
                line: line_no,
            });
        }
    }
    log
}

/// `Amendment 2 — 2026-06-10` (em dash, en dash or hyphen).
fn amendment(
    text: &str,
    outline: &Outline,
    lines: &Lines,
    heading: &Heading,
    body: Range<usize>,
) -> Option<Amendment> {
    let rest = heading.text.trim().strip_prefix("Amendment")?;
    let rest = rest.trim_start();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let number = rest[..digits].parse().ok();
    let date = rest[digits..]
        .trim_start_matches([' ', '—', '–', '-', ':'])
        .trim()
        .to_owned();
    let fields = plain_lines(text, body, &outline.code, lines)
        .filter_map(|(line_no, line)| {
            let (label, value) = label_line(line)?;
            Some((
                label,
                Located {
                    value,
                    line: line_no,
                },
            ))
        })
        .collect();
    Some(Amendment {
        number,
        date,
        line: lines.of(heading.range.start),
        fields,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(readme.index[0].title, "Create endpoint");
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
        assert_eq!(readme.index[2].title, "Final review");
        assert_eq!(readme.index[0].line, 24);
    }

    #[test]
    fn the_approval_row_is_read_from_the_plan_variables_table() {
        assert_eq!(readme_approval("# Plan\n\nApproval: approved\n"), None);
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
        assert_eq!((record.id, record.title.as_str()), (2, "Store events"));
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
        assert_eq!(record.title, "One");
        assert_eq!(
            record.log.as_ref().unwrap().status.as_ref().unwrap().value,
            "in_progress"
        );
        assert_eq!(readme.index[0].links, ["#task-1"]);
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
