//! One pass of pulldown-cmark over a markdown file, kept as an outline: headings (with their
//! section key and `{#id}`), list items (checkbox, first line, links, nesting), bold labels,
//! tables and code blocks, each with its byte range; and the offsets-to-lines table.
//!
//! Plans in the wild sometimes indent a whole task list (or a whole README, a heredoc artifact)
//! by four spaces, which CommonMark reads as an indented code block. The public reference checker
//! reads such lines anyway. [`Document::parse`] reads a top-level indented block that holds a
//! task checkbox line as markdown, by removing the four columns, and remembers where it did, so
//! the reader can say so (an advisory, never silently). Line numbers are the file's own: only
//! leading whitespace is removed, never a line.

use super::{Marker, section_key};
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use std::borrow::Cow;
use std::ops::{Range, RangeInclusive};

#[derive(Debug, Clone)]
pub(super) struct Heading {
    pub level: u8,
    pub text: String,
    /// [`section_key`] of `text`.
    pub key: String,
    pub id: Option<String>,
    pub range: Range<usize>,
}

/// A list item. The *head* is what its first line says (links contribute their text unless the
/// text only names the target); everything after the first line break is continuation, which
/// contributes links only.
#[derive(Debug, Clone)]
pub(super) struct Item {
    /// The enclosing item, if this one is nested.
    pub parent: Option<usize>,
    /// Start offset of the list this item belongs to.
    pub list: usize,
    pub marker: Option<Marker>,
    pub head: String,
    /// Link destinations and task-file references, in order, `./` removed.
    pub links: Vec<String>,
    pub range: Range<usize>,
    in_head: bool,
}

/// `**Name:**`, `**Name**:`: bold text that may label a section or a field.
#[derive(Debug, Clone)]
pub(super) struct Label {
    pub key: String,
    pub range: Range<usize>,
}

#[derive(Debug, Clone)]
pub(super) struct CodeBlock {
    pub range: Range<usize>,
    indented: bool,
    top_level: bool,
    holds_task_line: bool,
}

#[derive(Debug, Default)]
pub(super) struct Outline {
    pub headings: Vec<Heading>,
    /// In document order of their start.
    pub items: Vec<Item>,
    pub labels: Vec<Label>,
    pub tables: Vec<(Vec<String>, usize)>,
    pub code: Vec<CodeBlock>,
}

/// Offsets to 1-based line numbers.
pub(super) struct Lines {
    pub starts: Vec<usize>,
}

impl Lines {
    fn new(text: &str) -> Lines {
        // Counted first (a fast pass) so the table is allocated once at its size.
        let newlines = || memchr::memchr_iter(b'\n', text.as_bytes());
        let mut starts = Vec::with_capacity(newlines().count() + 1);
        starts.push(0);
        starts.extend(newlines().map(|i| i + 1));
        Lines { starts }
    }

    pub fn of(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset)
    }
}

/// A parsed markdown file.
pub(super) struct Document<'a> {
    /// What was parsed: the file, with indented blocks of plan markdown moved four columns left.
    pub text: Cow<'a, str>,
    pub outline: Outline,
    pub lines: Lines,
    /// Lines (1-based) of indented blocks that were read as markdown.
    pub dedented: Vec<RangeInclusive<usize>>,
}

impl<'a> Document<'a> {
    pub fn parse(text: &'a str) -> Document<'a> {
        let first = outline(text);
        let lines = Lines::new(text);
        let blocks: Vec<Range<usize>> = first
            .code
            .iter()
            .filter(|c| c.indented && c.top_level && c.holds_task_line)
            .map(|c| c.range.clone())
            .collect();
        if blocks.is_empty() {
            return Document {
                text: Cow::Borrowed(text),
                outline: first,
                lines,
                dedented: Vec::new(),
            };
        }
        let dedented = blocks
            .iter()
            .map(|b| lines.of(b.start)..=lines.of(b.end.saturating_sub(1).max(b.start)))
            .collect::<Vec<_>>();
        let moved = dedent(text, &lines, &dedented);
        // Only leading whitespace went: the line table of `moved` has as many lines.
        let outline = outline(&moved);
        let lines = Lines::new(&moved);
        Document {
            text: Cow::Owned(moved),
            outline,
            lines,
            dedented,
        }
    }

    /// The lines of `range` with their 1-based numbers, outside code blocks.
    pub fn plain_lines(&self, range: Range<usize>) -> impl Iterator<Item = (usize, &str)> + '_ {
        let range = self.clamp(range);
        let start = range.start;
        self.text[range]
            .split_inclusive('\n')
            .scan(start, move |offset, line| {
                let at = *offset;
                *offset += line.len();
                Some((at, line))
            })
            .filter(move |(at, _)| !self.in_code(*at))
            .map(move |(at, line)| (self.lines.of(at), line.trim_end_matches(['\n', '\r'])))
    }

    /// Whether `offset` lies in a code block (blocks are in document order).
    pub fn in_code(&self, offset: usize) -> bool {
        let code = &self.outline.code;
        let after = code.partition_point(|c| c.range.start <= offset);
        after > 0 && code[after - 1].range.contains(&offset)
    }

    /// `text[range]`, clamped to the text and to char boundaries.
    pub fn slice(&self, range: Range<usize>) -> &str {
        &self.text[self.clamp(range)]
    }

    /// `range` inside the text, its ends moved out to char boundaries.
    fn clamp(&self, range: Range<usize>) -> Range<usize> {
        let text: &str = &self.text;
        let mut start = range.start.min(text.len());
        let mut end = range.end.min(text.len()).max(start);
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        while !text.is_char_boundary(end) {
            end += 1;
        }
        start..end
    }

    /// Whether `line` was read from an indented block.
    pub fn is_dedented(&self, line: usize) -> bool {
        self.dedented.iter().any(|r| r.contains(&line))
    }
}

/// Remove up to four leading columns (spaces, or one tab) from every line in `blocks`.
fn dedent(text: &str, lines: &Lines, blocks: &[RangeInclusive<usize>]) -> String {
    let mut out = String::with_capacity(text.len());
    for (index, line) in text.split_inclusive('\n').enumerate() {
        let number = index + 1;
        if !blocks.iter().any(|b| b.contains(&number)) {
            out.push_str(line);
            continue;
        }
        let spaces = line.bytes().take(4).take_while(|b| *b == b' ').count();
        let cut = if spaces == 0 && line.starts_with('\t') {
            1
        } else {
            spaces
        };
        out.push_str(&line[cut..]);
    }
    debug_assert_eq!(Lines::new(&out).starts.len(), lines.starts.len());
    out
}

fn options() -> Options {
    Options::ENABLE_TASKLISTS | Options::ENABLE_HEADING_ATTRIBUTES | Options::ENABLE_TABLES
}

/// A word that names a task file: `3.task_retry_queue.md`, `./3.task_x.md`, `tasks/3.task_x.md`
/// (returned without `./`).
pub(super) fn task_file_reference(word: &str) -> Option<&str> {
    let word = strip_dot_slash(word.trim_matches(|c: char| matches!(c, '`' | ',' | ';' | ':')));
    let name = word.rsplit('/').next().unwrap_or(word);
    let digits = name.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0 && name[digits..].starts_with(".task_") && name.ends_with(".md")).then_some(word)
}

/// Every task file a text names, as words split at spaces and link punctuation
/// (`See: [3.task_x.md](./3.task_x.md)` names `3.task_x.md`).
pub(super) fn task_file_references(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || matches!(c, '[' | ']' | '(' | ')' | '<' | '>'))
        .filter_map(task_file_reference)
}

/// `./x` and `x` name the same file.
pub(super) fn strip_dot_slash(mut link: &str) -> &str {
    while let Some(rest) = link.strip_prefix("./") {
        link = rest;
    }
    link
}

/// Whether a checkbox task line starts this (code) line: `- [ ] Task 1`, `* [x] 2. Title`.
fn is_task_checkbox_line(line: &str) -> bool {
    let line = line.trim_start();
    let rest = match line.as_bytes().first() {
        Some(b'-' | b'*' | b'+') => &line[1..],
        Some(b) if b.is_ascii_digit() => {
            let digits = line.bytes().take_while(u8::is_ascii_digit).count();
            match line.as_bytes().get(digits) {
                Some(b'.' | b')') => &line[digits + 1..],
                _ => return false,
            }
        }
        _ => return false,
    };
    let rest = rest.trim_start();
    let Some(after) = rest
        .strip_prefix("[ ]")
        .or_else(|| rest.strip_prefix("[x]"))
        .or_else(|| rest.strip_prefix("[X]"))
    else {
        return false;
    };
    let after = after.trim_start().trim_start_matches('*');
    after
        .get(..4)
        .is_some_and(|w| w.eq_ignore_ascii_case("task"))
        || after.starts_with(|c: char| c.is_ascii_digit())
}

/// What the pass keeps while walking the events.
#[derive(Default)]
struct Walk {
    out: Outline,
    heading: Option<Heading>,
    lists: Vec<usize>,
    /// Open items, innermost last (indices into `out.items`).
    open: Vec<usize>,
    row: Option<(Vec<String>, usize)>,
    link: Option<(String, String)>,
    strong: Option<(usize, String)>,
    code: Option<CodeBlock>,
    /// Open block quotes.
    quotes: usize,
}

pub(super) fn outline(text: &str) -> Outline {
    let mut walk = Walk::default();
    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        walk.event(text, event, range);
    }
    for item in &mut walk.out.items {
        take_bare_references(item);
    }
    walk.out
}

impl Walk {
    fn item(&mut self) -> Option<&mut Item> {
        let index = *self.open.last()?;
        self.out.items.get_mut(index)
    }

    fn event(&mut self, text: &str, event: Event<'_>, range: Range<usize>) {
        match event {
            Event::Start(Tag::Heading { level, id, .. }) => {
                self.heading = Some(Heading {
                    level: heading_level(level),
                    text: String::new(),
                    key: String::new(),
                    id: id.map(|i| i.to_string()),
                    range,
                });
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(mut heading) = self.heading.take() {
                    heading.key = section_key(&heading.text);
                    self.out.headings.push(heading);
                }
            }
            Event::Start(Tag::BlockQuote(_)) => self.quotes += 1,
            Event::End(TagEnd::BlockQuote(_)) => self.quotes = self.quotes.saturating_sub(1),
            Event::Start(Tag::List(_)) => {
                if let Some(item) = self.item() {
                    item.in_head = false;
                }
                self.lists.push(range.start);
            }
            Event::End(TagEnd::List(_)) => {
                self.lists.pop();
            }
            Event::Start(Tag::Item) => {
                let index = self.out.items.len();
                self.out.items.push(Item {
                    parent: self.open.last().copied(),
                    list: self.lists.last().copied().unwrap_or(0),
                    marker: None,
                    head: String::new(),
                    links: Vec::new(),
                    range,
                    in_head: true,
                });
                self.open.push(index);
            }
            Event::End(TagEnd::Item) => {
                self.open.pop();
            }
            Event::End(TagEnd::Paragraph) => {
                if let Some(item) = self.item() {
                    item.in_head = false;
                }
            }
            Event::TaskListMarker(done) => {
                if let Some(item) = self.item().filter(|i| i.head.is_empty()) {
                    item.marker = Some(if done { Marker::Done } else { Marker::Open });
                }
            }
            Event::Start(Tag::Link { dest_url, .. }) => {
                self.link = Some((dest_url.to_string(), String::new()));
            }
            Event::End(TagEnd::Link) => self.end_link(),
            Event::Start(Tag::Strong) => self.strong = Some((range.start, String::new())),
            Event::End(TagEnd::Strong) => self.end_strong(text, range),
            Event::Start(Tag::CodeBlock(kind)) => {
                self.code = Some(CodeBlock {
                    range,
                    indented: matches!(kind, CodeBlockKind::Indented),
                    top_level: self.open.is_empty() && self.quotes == 0,
                    holds_task_line: false,
                });
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(block) = self.code.take() {
                    self.out.code.push(block);
                }
            }
            Event::Start(Tag::TableHead | Tag::TableRow) => {
                self.row = Some((Vec::new(), range.start));
            }
            Event::End(TagEnd::TableHead | TagEnd::TableRow) => {
                self.out.tables.extend(self.row.take());
            }
            Event::Start(Tag::TableCell) => {
                if let Some((cells, _)) = self.row.as_mut() {
                    cells.push(String::new());
                }
            }
            Event::Code(t) => self.inline_code(&t),
            Event::Text(t) => self.text(&t),
            Event::SoftBreak | Event::HardBreak => {
                if let Some(item) = self.item() {
                    item.in_head = false;
                }
                if let Some(h) = self.heading.as_mut() {
                    h.text.push(' ');
                }
            }
            _ => {}
        }
    }

    fn text(&mut self, t: &str) {
        if let Some(code) = self.code.as_mut() {
            if !code.holds_task_line && t.lines().any(is_task_checkbox_line) {
                code.holds_task_line = true;
            }
            // A `See:` line that became code inside an item still names its file.
            if !code.top_level {
                self.add_references(t);
            }
            return;
        }
        if let Some((_, label)) = self.strong.as_mut() {
            label.push_str(t);
        }
        if let Some((_, link_text)) = self.link.as_mut() {
            link_text.push_str(t);
        } else if let Some(h) = self.heading.as_mut() {
            h.text.push_str(t);
        } else if let Some(cell) = self.row.as_mut().and_then(|(c, _)| c.last_mut()) {
            cell.push_str(t);
        } else if self.item().is_some_and(|i| i.in_head) {
            if let Some(item) = self.item() {
                item.head.push_str(t);
            }
        } else {
            self.add_references(t);
        }
    }

    /// Task files named in an item's continuation text join its links.
    fn add_references(&mut self, t: &str) {
        let Some(item) = self.item() else {
            return;
        };
        for file in task_file_references(t) {
            if !item.links.iter().any(|l| l == file) {
                item.links.push(file.to_owned());
            }
        }
    }

    /// Inline code keeps its backticks in titles (``Add `--json` flag``); a task file named in
    /// code (`` See: `3.task_x.md` ``) is a reference to it.
    fn inline_code(&mut self, t: &str) {
        if let Some(cell) = self.row.as_mut().and_then(|(c, _)| c.last_mut()) {
            cell.push_str(t);
            return;
        }
        if let Some(h) = self.heading.as_mut() {
            push_quoted(&mut h.text, t);
        } else if let Some((_, link_text)) = self.link.as_mut() {
            link_text.push_str(t);
        } else if let Some(item) = self.item() {
            match task_file_reference(t) {
                Some(file) => item.links.push(file.to_owned()),
                None if item.in_head => push_quoted(&mut item.head, t),
                None => {}
            }
        }
    }

    /// A link gives its target; its text joins the head unless it only names the target
    /// (`[3.task_x.md](./3.task_x.md)`, `[#task-3](#task-3)`).
    fn end_link(&mut self) {
        let Some((dest, link_text)) = self.link.take() else {
            return;
        };
        // Most destinations have nothing to strip: they are kept, not copied.
        let kept = strip_dot_slash(dest.trim());
        let dest = if kept.len() == dest.len() {
            dest
        } else {
            kept.to_owned()
        };
        if let Some(h) = self.heading.as_mut() {
            h.text.push_str(&link_text);
            return;
        }
        if let Some(cell) = self.row.as_mut().and_then(|(c, _)| c.last_mut()) {
            cell.push_str(&link_text);
            return;
        }
        let Some(item) = self.item() else {
            return;
        };
        let names_target = {
            let shown = strip_dot_slash(link_text.trim().trim_matches('`'));
            shown.is_empty() || shown == dest || task_file_reference(shown).is_some()
        };
        if item.in_head && !names_target {
            item.head.push_str(&link_text);
        }
        item.links.push(dest);
    }

    fn end_strong(&mut self, text: &str, range: Range<usize>) {
        let Some((start, label)) = self.strong.take() else {
            return;
        };
        if self.heading.is_some() || self.code.is_some() {
            return;
        }
        // `**Name:**`, or `**Name**` followed by `:`: both label what follows.
        let trimmed = label.trim();
        let name = trimmed.strip_suffix(':').unwrap_or(trimmed).trim();
        if name.is_empty() || name.chars().count() > 60 {
            return;
        }
        let end = range.end.min(text.len());
        self.out.labels.push(Label {
            key: section_key(name),
            range: start..end,
        });
    }
}

/// `` `t` `` onto `text`, without a copy of its own.
fn push_quoted(text: &mut String, t: &str) {
    text.push('`');
    text.push_str(t);
    text.push('`');
}

/// Task files named as bare words in an item's head (`1. Title → 1.task_x.md`) are references:
/// they leave the head and join the links.
fn take_bare_references(item: &mut Item) {
    if !item.head.contains(".task_") {
        return;
    }
    let found: Vec<String> = task_file_references(&item.head)
        .map(str::to_owned)
        .collect();
    for file in found {
        item.head = item
            .head
            .replace(&format!("./{file}"), "")
            .replace(&file, "");
        if !item.links.contains(&file) {
            item.links.push(file);
        }
    }
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
