//! Sections as plans write them: a heading at any level, numbered (`## 5. Acceptance Criteria`),
//! decorated (`## 🎯 Goal`, `## Goal (what)`, `## 11. Completion & Log (filled by the agent)`),
//! or a bold label (`**Goal:** ...`, `**Goal**: ...`) whose text runs to the next label or heading.
//! [`section_key`] reduces a heading or label to the name it means; every lookup compares keys.
//! Task records (a Full task file, a Lite `## Task N` section), their logs and amendments are
//! read here.

use super::document::{Document, Heading};
use super::title::normalize_title;
use super::{Amendment, Located, Section, TaskLog, TaskRecord};
use std::borrow::Cow;
use std::ops::Range;

/// A heading's or label's name as plans mean it: emphasis, a leading emoji or number
/// (`1.`, `11)`, `2.1`), trailing parentheticals and a trailing colon dropped; `&` read as
/// `and`; lower case, single spaces. `## 11. Completion & Log (filled by the agent)` and
/// `**Completion and log:**` both give `completion and log`.
pub fn section_key(text: &str) -> String {
    let text = without_emphasis(text);
    let text = if text.contains('&') {
        std::borrow::Cow::Owned(text.replace("&amp;", "&").replace('&', " and "))
    } else {
        text
    };
    let mut rest = text.trim_start_matches(|c: char| {
        c.is_whitespace() || c == '#' || !(c.is_alphanumeric() || c.is_ascii_punctuation())
    });
    rest = strip_numbering(rest).trim();
    loop {
        let trimmed = rest.trim_end_matches(|c: char| {
            c.is_whitespace() || c == ':' || !(c.is_alphanumeric() || c.is_ascii_punctuation())
        });
        let without_group = match trimmed.strip_suffix(')').and_then(|b| b.rfind('(')) {
            Some(open) if open > 0 => &trimmed[..open],
            _ => trimmed,
        };
        if without_group.len() == rest.len() {
            break;
        }
        rest = without_group;
    }
    // Lower case, one space between words, in one pass.
    let mut key = String::with_capacity(rest.len());
    for word in rest.split_whitespace() {
        if !key.is_empty() {
            key.push(' ');
        }
        if word.is_ascii() {
            key.extend(word.chars().map(|c| c.to_ascii_lowercase()));
        } else {
            key.push_str(&word.to_lowercase());
        }
    }
    key
}

/// `text` without `**` and `__` (searched for only where a `*` or `_` is: most names have none).
pub(super) fn without_emphasis(text: &str) -> std::borrow::Cow<'_, str> {
    let mut text = std::borrow::Cow::Borrowed(text);
    if text.contains('*') {
        text = std::borrow::Cow::Owned(text.replace("**", ""));
    }
    if text.contains('_') {
        text = std::borrow::Cow::Owned(text.replace("__", ""));
    }
    text
}

/// `text` without the copies of `prefix` it starts with: `trim_start_matches(prefix)` without
/// building a substring searcher, which costs more than the few bytes it would look at.
pub(super) fn trim_start_repeated<'a>(mut text: &'a str, prefix: &str) -> &'a str {
    while let Some(rest) = text.strip_prefix(prefix) {
        text = rest;
    }
    text
}

/// `1. `, `11) `, `2.1 `, `3 ` before a name.
fn strip_numbering(text: &str) -> &str {
    let digits = text
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b'.')
        .count();
    if digits == 0 || !text.as_bytes()[0].is_ascii_digit() {
        return text;
    }
    let after = &text[digits..];
    let after = after.strip_prefix(')').unwrap_or(after);
    if after.starts_with(char::is_whitespace) {
        after.trim_start()
    } else {
        text
    }
}

/// The log's names: `Completion & Log` (Full) and `Completion log` (Lite) are one section.
pub(super) fn is_log_key(key: &str) -> bool {
    matches!(key, "completion and log" | "completion log")
}

/// The sections a task record may carry, by key; bold labels with these names open a section
/// and end the one before.
const SECTION_KEYS: [&str; 8] = [
    "context",
    "goal",
    "touched surface",
    "acceptance criteria",
    "validation",
    "instructions",
    "steps",
    "read before starting",
];

fn is_section_key(key: &str) -> bool {
    SECTION_KEYS.contains(&key) || is_log_key(key)
}

/// `Task 12: Title`, `Task 12 — Title`, `Task 12` → (12, title); `Task 1.2` (a sub-step) is not
/// a task line.
pub(super) fn task_line(text: &str) -> Option<(u64, Option<String>)> {
    let text = text.trim_start_matches(|c: char| {
        c.is_whitespace() || c == '*' || !(c.is_alphanumeric() || c.is_ascii_punctuation())
    });
    let word = text.get(..4)?;
    if !word.eq_ignore_ascii_case("task") {
        return None;
    }
    let rest = text[4..].strip_prefix(char::is_whitespace)?.trim_start();
    let (id, after) = leading_number(rest)?;
    if after.starts_with(|c: char| c.is_alphanumeric())
        || (after.starts_with('.') && after[1..].starts_with(|c: char| c.is_ascii_digit()))
    {
        return None;
    }
    Some((id, title_after(after)))
}

/// `12.` or `12)` then a title: (12, title).
pub(super) fn numbered_line(text: &str) -> Option<(u64, Option<String>)> {
    let (id, after) = leading_number(text.trim_start())?;
    let after = after.strip_prefix(['.', ')'])?;
    if !(after.is_empty() || after.starts_with(char::is_whitespace)) {
        return None;
    }
    Some((id, title_after(after)))
}

fn leading_number(text: &str) -> Option<(u64, &str)> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let id: u64 = text[..digits].parse().ok()?;
    (id > 0).then(|| (id, &text[digits..]))
}

fn title_after(after: &str) -> Option<String> {
    let raw = after.trim_start_matches([':', '.', ')', ' ', '\t', '-', '—', '–']);
    Some(normalize_title(raw)).filter(|t| !t.is_empty())
}

/// Whether a section body says nothing: blank, or only separators the way templates leave
/// them (`-`, `·`, `:`, backticks).
pub fn is_blank(body: &str) -> bool {
    body.trim_matches(|c: char| c.is_whitespace() || matches!(c, '`' | '·' | ':' | '-'))
        .is_empty()
}

/// Whether `line` holds a placeholder `dwp new` writes for the plan's author (`To be written
/// before approval: ...`, `to be listed ...`, `to be named ...`): what a user approves must be
/// written, so `dwp approve` refuses while one is there.
pub fn is_placeholder(line: &str) -> bool {
    let line = line.to_lowercase();
    line.find("before approval:")
        .is_some_and(|at| line[..at].contains("to be "))
}

/// The first section named `key` in `range`: a heading (its text up to the next heading of its
/// level or above), else a bold label.
pub(super) fn find_section(doc: &Document, range: Range<usize>, key: &str) -> Option<Section> {
    let headings = &doc.outline.headings;
    if let Some(index) = headings
        .iter()
        .position(|h| h.key == key && range.contains(&h.range.start))
    {
        let heading = &headings[index];
        let end = section_end(headings, index, range.end);
        return Some(heading_section(doc, heading, end));
    }
    label_sections(doc, range)
        .into_iter()
        .map(|(section, _)| section)
        .find(|section| section.key == key)
}

/// Where the section under `headings[index]` ends: the next heading of its level or above.
pub(super) fn section_end(headings: &[Heading], index: usize, limit: usize) -> usize {
    let level = headings[index].level;
    headings[index + 1..]
        .iter()
        .find(|n| n.level <= level)
        .map_or(limit, |n| n.range.start)
        .min(limit)
}

fn heading_section(doc: &Document, heading: &Heading, end: usize) -> Section {
    let start = heading.range.end.min(end);
    Section {
        name: heading.text.trim().to_owned(),
        key: heading.key.clone(),
        body: doc.slice(start..end).trim().to_owned(),
        line: doc.lines.of(heading.range.start),
    }
}

/// Sections written as bold labels in `range`, each with its body range: from the label to the
/// next section label or heading.
fn label_sections(doc: &Document, range: Range<usize>) -> Vec<(Section, Range<usize>)> {
    let labels: Vec<_> = doc
        .outline
        .labels
        .iter()
        .filter(|l| range.contains(&l.range.start) && is_section_key(&l.key))
        .collect();
    let headings = &doc.outline.headings;
    labels
        .iter()
        .enumerate()
        .map(|(i, label)| {
            let next_label = labels.get(i + 1).map_or(range.end, |l| l.range.start);
            let next_heading = headings
                .iter()
                .map(|h| h.range.start)
                .find(|&s| s > label.range.start)
                .unwrap_or(range.end);
            let end = next_label.min(next_heading).min(range.end);
            let text = doc.slice(label.range.end.min(end)..end);
            // `**Goal** - text`, `**Goal**: text`: one separator may follow the label on its line.
            let rest = text.trim_start_matches([' ', '\t']);
            let body = rest
                .strip_prefix([':', '·', '-'])
                .unwrap_or(rest)
                .trim()
                .to_owned();
            let section = Section {
                name: doc
                    .slice(label.range.clone())
                    .replace("**", "")
                    .trim()
                    .trim_end_matches(':')
                    .to_owned(),
                key: label.key.clone(),
                body,
                line: doc.lines.of(label.range.start),
            };
            (section, label.range.end.min(end)..end)
        })
        .collect()
}

/// The record whose heading is `headings[index]`, reaching to `end`: its sections by heading
/// (any level inside the record) or bold label, its log and its amendments.
pub(super) fn task_record(
    doc: &Document,
    index: usize,
    end: usize,
    id: u64,
    title: Option<String>,
) -> TaskRecord {
    let headings = &doc.outline.headings;
    let heading = &headings[index];
    let mut record = TaskRecord {
        id,
        title,
        anchor: heading.id.clone(),
        line: doc.lines.of(heading.range.start),
        sections: Vec::new(),
        log: None,
        amendments: Vec::new(),
    };
    // The headings inside the record: those after its own that start before `end`.
    let inner = index + 1
        ..headings[index + 1..]
            .iter()
            .position(|h| h.range.start >= end)
            .map_or(headings.len(), |count| index + 1 + count);
    let section_level = headings[inner.clone()].iter().map(|h| h.level).min();
    for i in inner.clone() {
        let h = &headings[i];
        let section_end = section_end(headings, i, end);
        // A log's fields stop at the next heading of any level (an amendment below it).
        let fields_end = headings[i + 1..inner.end]
            .first()
            .map_or(end, |next| next.range.start)
            .min(section_end);
        let body = h.range.end.min(fields_end)..fields_end;
        if let Some(amendment) = amendment(doc, h, body.clone()) {
            record.amendments.push(amendment);
            continue;
        }
        if Some(h.level) != section_level && !is_section_key(&h.key) {
            continue;
        }
        if is_log_key(&h.key) && record.log.is_none() {
            record.log = Some(task_log(doc, h.range.start, body));
        }
        record.sections.push(heading_section(doc, h, section_end));
    }
    for (section, body) in label_sections(doc, heading.range.end..end) {
        if record.section_by_key(&section.key).is_some() {
            continue;
        }
        if is_log_key(&section.key) && record.log.is_none() {
            let start = doc.lines.starts[section.line - 1];
            record.log = Some(task_log(doc, start, body));
        }
        record.sections.push(section);
    }
    record
}

/// `Label: value`, `**Label:** value`, `- **Label**: value`: the label and value, if any.
pub(super) fn label_line(line: &str) -> Option<(String, String)> {
    with_label_line(line, |label, value| (label.to_owned(), value.to_owned()))
}

/// `read(label, value)` of a label line ([`label_line`]): the two are borrowed from the line,
/// so a caller that keeps neither (a log line naming no field) copies nothing.
fn with_label_line<R>(line: &str, read: impl FnOnce(&str, &str) -> R) -> Option<R> {
    // No colon, no label (removing `**` below adds none): most lines of a record end here.
    memchr::memchr(b':', line.as_bytes())?;
    let line = line.trim().trim_start_matches('>').trim_start();
    let line = line
        .strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))
        .or_else(|| line.strip_prefix("+ "))
        .unwrap_or(line)
        .trim_start();
    // Most lines are not bold: the copy without the first two `**` is made only when needed.
    let unbolded = if line.contains('*') {
        Cow::Owned(line.replacen("**", "", 2))
    } else {
        Cow::Borrowed(line)
    };
    let (label, value) = unbolded.split_once(':')?;
    let label = label.trim().trim_matches('*').trim();
    if label.is_empty() || label.chars().count() > 40 || label.contains(['`', '[', '(']) {
        return None;
    }
    Some(read(label, trim_start_repeated(value.trim(), "**").trim()))
}

fn task_log(doc: &Document, heading_start: usize, body: Range<usize>) -> TaskLog {
    let mut log = TaskLog {
        line: doc.lines.of(heading_start),
        ..TaskLog::default()
    };
    for (line_no, line) in doc.plain_lines(body) {
        // Lite records join fields on one line with ` · `.
        for part in line.split('·') {
            with_label_line(part, |label, value| {
                if let Some(slot) = log_field(&mut log, label)
                    && slot.is_none()
                {
                    *slot = Some(Located {
                        value: value.to_owned(),
                        line: line_no,
                    });
                }
            });
        }
    }
    log
}

/// The log field a label names (matched case-insensitively), if it names one.
fn log_field<'a>(log: &'a mut TaskLog, label: &str) -> Option<&'a mut Option<Located<String>>> {
    let is = |name: &str| label.eq_ignore_ascii_case(name);
    if is("status") {
        Some(&mut log.status)
    } else if is("timestamp") {
        Some(&mut log.timestamp)
    } else if is("gate record") || is("gate records") {
        Some(&mut log.gate_record)
    } else if is("skills disposition") {
        Some(&mut log.skills_disposition)
    } else if is("documentation decision") {
        Some(&mut log.documentation_decision)
    } else {
        None
    }
}

/// `Amendment 2 — 2026-06-10` (em dash, en dash or hyphen) and its labelled fields.
fn amendment(doc: &Document, heading: &Heading, body: Range<usize>) -> Option<Amendment> {
    let rest = heading.text.trim().strip_prefix("Amendment")?;
    let rest = rest.trim_start();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let number = rest[..digits].parse().ok();
    let date = rest[digits..]
        .trim_start_matches([' ', '—', '–', '-', ':'])
        .trim()
        .to_owned();
    let fields = doc
        .plain_lines(body)
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
        line: doc.lines.of(heading.range.start),
        fields,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_keys_fold_numbering_decoration_and_notes() {
        for (text, key) in [
            ("Goal", "goal"),
            ("1. Goal", "goal"),
            ("11) Goal", "goal"),
            ("2.1 Goal", "goal"),
            ("🎯 Goal", "goal"),
            ("Goal (what)", "goal"),
            ("**Goal:**", "goal"),
            ("Goal:", "goal"),
            (
                "11. Completion & Log (filled by the agent)",
                "completion and log",
            ),
            ("Completion &amp; Log", "completion and log"),
            ("Completion and Log", "completion and log"),
            ("Completion log", "completion log"),
            ("5. Acceptance Criteria", "acceptance criteria"),
            ("4. Task List & Links", "task list and links"),
        ] {
            assert_eq!(section_key(text), key, "{text:?}");
        }
        assert!(is_log_key(&section_key("Completion & Log")));
        assert!(is_log_key(&section_key("Completion log")));
    }

    #[test]
    fn task_lines_read_a_number_and_an_optional_title() {
        assert_eq!(
            task_line("Task 12: Title"),
            Some((12, Some("Title".into())))
        );
        assert_eq!(task_line("Task 3 — Title"), Some((3, Some("Title".into()))));
        assert_eq!(task_line("task 3"), Some((3, None)));
        assert_eq!(task_line("Task 1.2: sub-step"), None);
        assert_eq!(task_line("Tasks 1-2"), None);
        assert_eq!(task_line("Task 0: none"), None);
        assert_eq!(task_line("Task 99999999999999999999999: x"), None);
        assert_eq!(numbered_line("3. Title"), Some((3, Some("Title".into()))));
        assert_eq!(numbered_line("3.Title"), None);
        assert_eq!(numbered_line("3.1 Title"), None);
    }
}
