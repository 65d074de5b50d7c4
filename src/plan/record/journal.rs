//! A record plan's journal, framed exactly as the public ledger frames it: the raw bytes split
//! on `\n`, blank lines skipped, and the first line that is not UTF-8 JSON ending the read (a
//! torn tail: its line-start offset and cause kept, the file never touched). A live file whose
//! last event lacks its final newline is complete, only unframed. Retired segments
//! (`journal-archive-NNNNNN-NNNNNN.ndjson`) come first, their events in seq order, then the live
//! file's in file order: the whole history every reader of the plan uses.

use crate::plan::json::{Line, parse_line};
use crate::store::{self, ReadFailure};
use serde_json::Value;
use std::path::Path;

/// An event's top-level fields in written order: looked up by a scan (an event has a dozen), the
/// last of a key written twice counting, as in the public ledger's reader.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fields {
    entries: Vec<(String, Value)>,
    /// The line held a JSON value that is no object (kept to be shown).
    not_object: Option<Value>,
}

impl Fields {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Each key once, in written order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(i, (k, _))| !self.entries[..*i].iter().any(|(j, _)| j == k))
            .map(|(_, (k, _))| k.as_str())
    }

    /// Whether the line was a JSON object at all.
    pub fn is_object(&self) -> bool {
        self.not_object.is_none()
    }

    /// The fields as one JSON object (the last of a repeated key), or the value that was no
    /// object.
    pub fn to_value(&self) -> Value {
        match &self.not_object {
            Some(value) => value.clone(),
            None => Value::Object(
                self.keys()
                    .map(|k| (k.to_owned(), self.get(k).cloned().unwrap_or(Value::Null)))
                    .collect(),
            ),
        }
    }
}

impl From<Value> for Fields {
    fn from(value: Value) -> Fields {
        match value {
            Value::Object(map) => Fields {
                entries: map.into_iter().collect(),
                not_object: None,
            },
            other => Fields {
                entries: Vec::new(),
                not_object: Some(other),
            },
        }
    }
}

/// One event of the journal, where it was read.
#[derive(Debug)]
pub struct Event {
    pub value: Fields,
    /// The file it came from (`journal.ndjson` or an archive's name).
    pub file: usize,
    /// 1-based line in that file.
    pub line: usize,
    /// Why dwp's strict reader refuses the line although it is JSON the public tooling reads
    /// (a duplicate key: the last one is taken, as there).
    pub lenient: Option<String>,
    /// The seq this event's does not rise above: the previous event's in the same file, or the
    /// archives' last for the live file's first event (positions never go backwards).
    pub not_above: Option<i64>,
}

impl Event {
    /// An event of the live journal at `line`, from its JSON value (for tests and tools that
    /// build events rather than read them).
    pub fn from_value(value: Value, line: usize) -> Event {
        Event {
            value: value.into(),
            file: 0,
            line,
            lenient: None,
            not_above: None,
        }
    }

    /// The events of a live journal holding `bodies`, one per line, in order.
    pub fn journal_of(bodies: Vec<Value>) -> Vec<Event> {
        let lines = bodies.into_iter().enumerate();
        lines
            .map(|(i, body)| Event::from_value(body, i + 1))
            .collect()
    }

    pub fn str(&self, key: &str) -> Option<&str> {
        self.value.get(key).and_then(Value::as_str)
    }

    pub fn kind(&self) -> Option<&str> {
        self.str("type")
    }

    /// `seq` as an integer; anything else counts as 0, as the public ledger's `get('seq', 0)`
    /// comparisons treat a missing one.
    pub fn seq(&self) -> i64 {
        self.value.get("seq").and_then(super::as_int).unwrap_or(0)
    }
}

/// Where a journal file stops being readable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Torn {
    pub file: usize,
    /// Byte offset of the start of the first unreadable line.
    pub offset: usize,
    pub line: usize,
    pub cause: String,
}

/// One journal file.
#[derive(Debug)]
pub struct Segment {
    pub name: String,
    /// `(first_seq, last_seq)` from an archive's name; `None` for the live file.
    pub range: Option<(u64, u64)>,
    /// Why it could not be read at all.
    pub unreadable: Option<ReadFailure>,
}

/// The journal: archived segments and the live file, and the events read from them.
#[derive(Debug, Default)]
pub struct Journal {
    /// Archives by name, then the live file (when present).
    pub segments: Vec<Segment>,
    pub events: Vec<Event>,
    pub torn: Vec<Torn>,
    /// The live file's last event is complete but lacks its final newline.
    pub unframed: bool,
    /// Byte length of the live file, when read.
    pub live_len: Option<usize>,
}

/// The `(first, last)` seq range an archive segment's name declares.
pub fn archive_range(name: &str) -> Option<(u64, u64)> {
    let rest = name
        .strip_prefix("journal-archive-")?
        .strip_suffix(".ndjson")?;
    let (first, last) = rest.split_once('-')?;
    let six = |s: &str| {
        (s.len() == 6 && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    Some((six(first)?, six(last)?))
}

impl Journal {
    /// Read the archives `archives` (names in the plan folder) and, when `live` is there,
    /// `journal.ndjson`.
    pub fn load(dir: &Path, archives: &[String], live: bool) -> Journal {
        let mut journal = Journal::default();
        let mut archived = Vec::new();
        for name in archives {
            let file = journal.segments.len();
            let range = archive_range(name);
            match store::read_artifact(&dir.join(name), dir) {
                Ok(bytes) => {
                    let framed = frame(&bytes, file);
                    archived.extend(framed.events);
                    journal.torn.extend(framed.torn);
                    journal.segments.push(Segment {
                        name: name.clone(),
                        range,
                        unreadable: None,
                    });
                }
                Err(failure) => journal.segments.push(Segment {
                    name: name.clone(),
                    range,
                    unreadable: Some(failure),
                }),
            }
        }
        // Archived history in seq order (a stable sort, as the public ledger's).
        archived.sort_by_key(Event::seq);
        journal.events = archived;
        if live {
            let file = journal.segments.len();
            let name = super::JOURNAL.to_owned();
            match store::read_artifact(&dir.join(super::JOURNAL), dir) {
                Ok(bytes) => {
                    let mut framed = frame(&bytes, file);
                    let archive_top = journal.archives().map(|(_, (_, last))| last).max();
                    if let (Some(top), Some(first)) = (archive_top, framed.events.first_mut())
                        && first
                            .value
                            .get("seq")
                            .and_then(super::as_int)
                            .is_some_and(|s| s <= top as i64)
                    {
                        first.not_above = Some(top as i64);
                    }
                    journal.events.extend(framed.events);
                    journal.unframed = framed.unframed;
                    journal.torn.extend(framed.torn);
                    journal.live_len = Some(bytes.len());
                    journal.segments.push(Segment {
                        name,
                        range: None,
                        unreadable: None,
                    });
                }
                Err(failure) => journal.segments.push(Segment {
                    name,
                    range: None,
                    unreadable: Some(failure),
                }),
            }
        }
        journal
    }

    /// One journal file's bytes, framed on their own (`dwp validate journal.ndjson`).
    pub fn from_live_bytes(bytes: &[u8]) -> Journal {
        let framed = frame(bytes, 0);
        Journal {
            segments: vec![Segment {
                name: super::JOURNAL.to_owned(),
                range: None,
                unreadable: None,
            }],
            unframed: framed.unframed,
            torn: framed.torn.into_iter().collect(),
            events: framed.events,
            live_len: Some(bytes.len()),
        }
    }

    /// The name of the file an event or a tear is in.
    pub fn file_name(&self, file: usize) -> &str {
        &self.segments[file].name
    }

    /// The archives' ranges, as the snapshot lists them.
    pub fn archives(&self) -> impl Iterator<Item = (&str, (u64, u64))> {
        self.segments
            .iter()
            .filter_map(|s| s.range.map(|range| (s.name.as_str(), range)))
    }
}

struct Framed {
    events: Vec<Event>,
    torn: Option<Torn>,
    unframed: bool,
}

/// Split `bytes` into events the way the public ledger does (see the module doc).
fn frame(bytes: &[u8], file: usize) -> Framed {
    let mut events = Vec::new();
    let mut torn = None;
    let mut offset = 0;
    for (index, line) in bytes.split(|&b| b == b'\n').enumerate() {
        match read_line(line, file, index, offset) {
            Some(Ok(event)) => events.push(event),
            // The first line that does not read ends the journal: what follows is not read.
            Some(Err(tear)) => {
                torn = Some(tear);
                break;
            }
            None => {}
        }
        offset += line.len() + 1;
    }
    mark_regressions(&mut events);
    Framed {
        // A torn file's end is the tear's, not a complete event without its newline.
        unframed: torn.is_none() && !bytes.is_empty() && !bytes.ends_with(b"\n"),
        events,
        torn,
    }
}

/// One line: nothing when blank, its event, or why it tears the journal.
fn read_line(line: &[u8], file: usize, index: usize, offset: usize) -> Option<Result<Event, Torn>> {
    if line.iter().all(|b| is_python_space(*b)) {
        return None;
    }
    let tear = |cause: &str| Torn {
        file,
        offset,
        line: index + 1,
        cause: cause.to_owned(),
    };
    let Ok(text) = std::str::from_utf8(line) else {
        return Some(Err(tear("undecodable bytes in the line")));
    };
    let read = match parse_line(text.trim_matches(is_json_space)) {
        Ok(Line::Object { fields, duplicate }) => Some((
            Fields {
                entries: fields,
                not_object: None,
            },
            duplicate.map(|key| format!("the key `{key}` is written twice")),
        )),
        Ok(Line::Other(value)) => Some((Fields::from(value), None)),
        // Python's reader also takes what dwp's strict one refuses deeper in: the last of a
        // nested key written twice.
        Err(strict) => serde_json::from_str::<Value>(text)
            .ok()
            .map(|value| (Fields::from(value), Some(strict.to_string()))),
    };
    Some(match read {
        Some((value, lenient)) => Ok(Event {
            value,
            file,
            line: index + 1,
            lenient,
            not_above: None,
        }),
        None => Err(tear("the line does not parse (a torn append)")),
    })
}

/// Mark each event whose integer seq does not rise above the previous one's, in file order.
fn mark_regressions(events: &mut [Event]) {
    let mut previous: Option<i64> = None;
    for event in events {
        let Some(seq) = event.value.get("seq").and_then(super::as_int) else {
            continue;
        };
        if let Some(before) = previous.filter(|before| seq <= *before) {
            event.not_above = Some(before);
        }
        previous = Some(seq);
    }
}

fn is_json_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// Python's `bytes.strip()` whitespace, which decides a blank line: space, \t, \n, \r, \x0b,
/// \x0c.
fn is_python_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_tail_is_the_first_line_that_does_not_parse_and_ends_the_read() {
        let framed = frame(b"{\"seq\":1}\n{\"seq\":2\n{\"seq\":3}\n", 0);
        assert_eq!(framed.events.len(), 1);
        let torn = framed.torn.expect("torn");
        assert_eq!((torn.offset, torn.line), (10, 2));
    }

    #[test]
    fn blank_lines_are_skipped_and_a_missing_final_newline_is_only_unframed() {
        let framed = frame(b"{\"seq\":1}\n\n \n{\"seq\":2}", 0);
        assert_eq!(framed.events.len(), 2);
        assert!(framed.torn.is_none());
        assert!(framed.unframed);
    }

    #[test]
    fn a_torn_last_line_is_a_tear_not_an_event_missing_its_newline() {
        let framed = frame(b"{\"seq\":1}\n{\"seq\":2", 0);
        assert!(framed.torn.is_some());
        assert!(!framed.unframed);
    }

    #[test]
    fn undecodable_bytes_tear_the_journal() {
        let framed = frame(b"{\"seq\":1}\n\xff\xfe\n", 0);
        assert_eq!(framed.events.len(), 1);
        assert!(framed.torn.is_some_and(|t| t.cause.contains("undecodable")));
    }

    #[test]
    fn a_duplicate_key_is_read_as_the_public_tooling_reads_it_and_marked() {
        let framed = frame(b"{\"seq\":1,\"seq\":2}\n", 0);
        assert_eq!(framed.events[0].seq(), 2);
        assert!(framed.events[0].lenient.is_some());
    }

    #[test]
    fn archive_names_carry_their_seq_range() {
        assert_eq!(
            archive_range("journal-archive-000001-000040.ndjson"),
            Some((1, 40))
        );
        assert_eq!(archive_range("journal-archive-1-40.ndjson"), None);
        assert_eq!(archive_range("journal.ndjson"), None);
    }

    /// A fresh folder holding `files`, removed when dropped.
    struct Folder(std::path::PathBuf);

    impl Folder {
        fn with(name: &str, files: &[(&str, &str)]) -> Folder {
            let dir =
                std::env::temp_dir().join(format!("dwp-journal-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            for (file, text) in files {
                std::fs::write(dir.join(file), text).unwrap();
            }
            Folder(dir)
        }
    }

    impl Drop for Folder {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    const ARCHIVE: &str = "journal-archive-000001-000003.ndjson";

    fn seqs(journal: &Journal) -> Vec<i64> {
        journal.events.iter().map(Event::seq).collect()
    }

    #[test]
    fn an_archives_events_come_in_seq_order_before_the_live_files() {
        let folder = Folder::with(
            "order",
            &[
                (ARCHIVE, "{\"seq\":2}\n{\"seq\":1}\n{\"seq\":3}\n"),
                ("journal.ndjson", "{\"seq\":5}\n{\"seq\":4}\n"),
            ],
        );
        let journal = Journal::load(&folder.0, &[ARCHIVE.to_owned()], true);
        assert_eq!(
            seqs(&journal),
            vec![1, 2, 3, 5, 4],
            "the live file keeps file order"
        );
        assert_eq!(journal.file_name(journal.events[0].file), ARCHIVE);
        assert_eq!(journal.file_name(journal.events[3].file), "journal.ndjson");
        assert_eq!(
            journal.events[4].not_above,
            Some(5),
            "a regression in the live file"
        );
        assert_eq!(
            journal.archives().collect::<Vec<_>>(),
            vec![(ARCHIVE, (1, 3))]
        );
    }

    #[test]
    fn a_live_file_starting_at_or_below_the_archives_top_is_marked() {
        for (first, marked) in [(3, Some(3)), (2, Some(3)), (4, None)] {
            let live = format!("{{\"seq\":{first}}}\n");
            let folder = Folder::with(
                &format!("top-{first}"),
                &[(ARCHIVE, "{\"seq\":1}\n"), ("journal.ndjson", &live)],
            );
            let journal = Journal::load(&folder.0, &[ARCHIVE.to_owned()], true);
            assert_eq!(
                journal.events.last().unwrap().not_above,
                marked,
                "first seq {first}"
            );
        }
    }
}
