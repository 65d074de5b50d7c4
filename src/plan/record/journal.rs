//! A record plan's journal, framed exactly as the public ledger frames it: the raw bytes split
//! on `\n`, blank lines skipped, and the first line that is not UTF-8 JSON ending the read (a
//! torn tail: its line-start offset and cause kept, the file never touched). A live file whose
//! last event lacks its final newline is complete, only unframed. Retired segments
//! (`journal-archive-NNNNNN-NNNNNN.ndjson`) come first, their events in seq order, then the live
//! file's in file order: the whole history every reader of the plan uses.

use super::value::{Json, Reader};
use crate::store::{self, ReadFailure};
use bumpalo::Bump;
use serde_json::Value;
use std::path::Path;

/// One event of the journal, where it was read; its value borrows the journal's bytes.
#[derive(Debug)]
pub struct Event<'a> {
    pub value: Json<'a>,
    /// The file it came from (`journal.ndjson` or an archive's name).
    pub file: usize,
    /// 1-based line in that file.
    pub line: usize,
    /// Why dwp's strict reader refuses the line although it is JSON the public tooling reads
    /// (a key written twice: the last one is taken, as there).
    pub lenient: Option<String>,
    /// The seq this event's does not rise above: the previous event's in the same file, or the
    /// archives' last for the live file's first event (positions never go backwards).
    pub not_above: Option<i64>,
    /// Its `type` and integer `seq`, read once: every check asks for them, and a field is
    /// found by a scan of the event's keys.
    kind: Option<&'a str>,
    integer_seq: Option<i64>,
}

impl<'a> Event<'a> {
    /// An event of the live journal at `line`, from its JSON value laid out in `arena` (for
    /// tools that build events rather than read them).
    pub fn from_value(value: &Value, line: usize, arena: &'a Bump) -> Event<'a> {
        Event::new(Json::from_value(value, arena), 0, line, None)
    }

    fn new(value: Json<'a>, file: usize, line: usize, lenient: Option<String>) -> Event<'a> {
        let kind = match value.get("type") {
            Some(Json::String(kind)) => Some(*kind),
            _ => None,
        };
        let integer_seq = value.get("seq").and_then(super::json_int);
        Event {
            value,
            file,
            line,
            lenient,
            not_above: None,
            kind,
            integer_seq,
        }
    }
}

#[cfg(test)]
impl Event<'static> {
    /// The events of a live journal holding `bodies`, one per line, in order (their arena lives
    /// as long as the test).
    pub fn journal_of(bodies: Vec<Value>) -> Vec<Event<'static>> {
        let arena: &'static Bump = Box::leak(Box::default());
        let lines = bodies.iter().enumerate();
        lines
            .map(|(i, body)| Event::from_value(body, i + 1, arena))
            .collect()
    }
}

impl<'a> Event<'a> {
    pub fn str(&self, key: &str) -> Option<&str> {
        self.value.get(key).and_then(Json::as_str)
    }

    pub fn kind(&self) -> Option<&str> {
        self.kind
    }

    /// `seq` as an integer; anything else counts as 0, as the public ledger's `get('seq', 0)`
    /// comparisons treat a missing one.
    pub fn seq(&self) -> i64 {
        self.integer_seq().unwrap_or(0)
    }

    /// `seq` when it is an integer (never a float or a bool).
    pub fn integer_seq(&self) -> Option<i64> {
        self.integer_seq
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

/// One journal file, as read.
#[derive(Debug)]
pub struct Segment {
    pub name: String,
    /// `(first_seq, last_seq)` from an archive's name; `None` for the live file.
    pub range: Option<(u64, u64)>,
    /// Its bytes, or why it could not be read at all.
    pub read: Result<Vec<u8>, ReadFailure>,
}

impl Segment {
    /// A live journal file holding `bytes`.
    pub fn live(bytes: Vec<u8>) -> Segment {
        Segment {
            name: super::JOURNAL.to_owned(),
            range: None,
            read: Ok(bytes),
        }
    }

    pub fn unreadable(&self) -> Option<&ReadFailure> {
        self.read.as_ref().err()
    }
}

/// Read the archives `archives` (names in the plan folder) and, when `live` is there,
/// `journal.ndjson`: archives by name, then the live file.
pub fn read_segments(dir: &Path, archives: &[String], live: bool) -> Vec<Segment> {
    let live = live.then(|| super::JOURNAL.to_owned());
    let names = archives.iter().chain(live.as_ref());
    names
        .map(|name| Segment {
            name: name.clone(),
            range: archive_range(name),
            read: store::read_artifact(&dir.join(name), dir),
        })
        .collect()
}

/// The journal: its files, and the events read from them.
#[derive(Debug)]
pub struct Journal<'a> {
    /// Archives by name, then the live file (when present).
    pub segments: &'a [Segment],
    pub events: Vec<Event<'a>>,
    pub torn: Vec<Torn>,
    /// The live file's last event is complete but lacks its final newline.
    pub unframed: bool,
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

impl<'a> Journal<'a> {
    /// A journal of no file, before one is read.
    pub fn unread() -> Journal<'static> {
        Journal {
            segments: &[],
            events: Vec::new(),
            torn: Vec::new(),
            unframed: false,
        }
    }

    /// The events of `segments`: archived history in seq order (a stable sort, as the public
    /// ledger's), then the live file's in file order; what they do not borrow is in `arena`.
    /// With a `helper` arena, the second half of the largest file is read on another core into
    /// it (from [`SPLIT_FROM`] bytes): the same events either way.
    pub fn frame(
        segments: &'a [Segment],
        arena: &'a Bump,
        mut helper: Option<&'a mut Bump>,
    ) -> Journal<'a> {
        let mut journal = Journal {
            segments,
            events: Vec::new(),
            torn: Vec::new(),
            unframed: false,
        };
        let readable = |archived: bool| {
            let files = segments.iter().enumerate();
            files.filter_map(move |(file, segment)| {
                let bytes = segment.read.as_ref().ok()?;
                (segment.range.is_some() == archived).then_some((file, bytes))
            })
        };
        let largest = (readable(true).chain(readable(false)))
            .max_by_key(|(_, bytes)| bytes.len())
            .map(|(file, _)| file);
        let mut helper_for = |file: usize| helper.take_if(|_| Some(file) == largest);
        for (file, bytes) in readable(true) {
            let framed = frame(bytes, file, arena, helper_for(file));
            journal.events.extend(framed.events);
            journal.torn.extend(framed.torn);
        }
        journal.events.sort_by_key(Event::seq);
        let archive_top = journal.archives().map(|(_, (_, last))| last).max();
        for (file, bytes) in readable(false) {
            let mut framed = frame(bytes, file, arena, helper_for(file));
            if let (Some(top), Some(first)) = (archive_top, framed.events.first_mut())
                && first.integer_seq().is_some_and(|s| s <= top as i64)
            {
                first.not_above = Some(top as i64);
            }
            journal.events.extend(framed.events);
            journal.unframed = framed.unframed;
            journal.torn.extend(framed.torn);
        }
        journal
    }

    /// The name of the file an event or a tear is in.
    pub fn file_name(&self, file: usize) -> &str {
        &self.segments[file].name
    }

    /// The archives' ranges, as the snapshot lists them.
    pub fn archives(&self) -> impl Iterator<Item = (&'a str, (u64, u64))> {
        let segments = self.segments;
        segments
            .iter()
            .filter_map(|s| s.range.map(|range| (s.name.as_str(), range)))
    }
}

struct Framed<'a> {
    events: Vec<Event<'a>>,
    torn: Option<Torn>,
    unframed: bool,
}

/// From this many bytes, a file is read on two cores when a helper arena is given: a half
/// is about 4,000 events.
pub const SPLIT_FROM: usize = 1 << 20;

/// Split `bytes` into events the way the public ledger does (see the module doc); with a
/// `helper` arena and from [`SPLIT_FROM`] bytes, on two cores.
fn frame<'a>(
    bytes: &'a [u8],
    file: usize,
    arena: &'a Bump,
    helper: Option<&'a mut Bump>,
) -> Framed<'a> {
    let (mut events, torn) = match helper.filter(|_| bytes.len() >= SPLIT_FROM) {
        Some(helper) => read_halves(bytes, file, arena, helper, bytes.len() / 2),
        None => read_lines(bytes, 0, 0, file, arena),
    };
    mark_regressions(&mut events);
    Framed {
        // A torn file's end is the tear's, not a complete event without its newline.
        unframed: torn.is_none() && !bytes.is_empty() && !bytes.ends_with(b"\n"),
        events,
        torn,
    }
}

type Lines<'a> = (Vec<Event<'a>>, Option<Torn>);

/// The events of the file `whole` from byte `from` (a line start, the `first_index`th line),
/// line by line, up to the first line that does not read.
fn read_lines<'a>(
    whole: &'a [u8],
    from: usize,
    first_index: usize,
    file: usize,
    arena: &'a Bump,
) -> Lines<'a> {
    let bytes = &whole[from..];
    let mut events = Vec::new();
    let mut reader = Reader::new(arena);
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len()));
    for (index, end) in ends.enumerate() {
        let line = read_line(
            &bytes[start..end],
            file,
            first_index + index,
            from + start,
            &mut reader,
        );
        match line {
            Some(Ok(event)) => events.push(event),
            Some(Err(tear)) => return (events, Some(tear)),
            None => {}
        }
        start = end + 1;
    }
    (events, None)
}

/// [`read_lines`] of all of `bytes`, the lines from the first one starting after `middle` read
/// on another core into `helper`. The second half counts only when the first is not torn: a
/// reader stops at the first line that does not read.
fn read_halves<'a>(
    bytes: &'a [u8],
    file: usize,
    arena: &'a Bump,
    helper: &'a mut Bump,
    middle: usize,
) -> Lines<'a> {
    let Some(split) = memchr::memchr(b'\n', &bytes[middle..]).map(|at| middle + at + 1) else {
        return read_lines(bytes, 0, 0, file, arena);
    };
    let first_half = &bytes[..split];
    let index_at_split = memchr::memchr_iter(b'\n', first_half).count();
    let mut second = None;
    let second_slot = &mut second;
    let first = rayon::in_place_scope(|scope| {
        // The arena moves to the other core whole (a `Bump` is not shared between threads).
        scope.spawn(move |_| {
            let helper: &'a Bump = helper;
            *second_slot = Some(read_lines(bytes, split, index_at_split, file, helper));
        });
        read_lines(first_half, 0, 0, file, arena)
    });
    let second = second.expect("a scope ends when its spawned work has");
    match first {
        (events, Some(tear)) => (events, Some(tear)),
        (mut events, None) => {
            events.extend(second.0);
            (events, second.1)
        }
    }
}

/// One line: nothing when blank, its event, or why it tears the journal.
fn read_line<'a>(
    line: &'a [u8],
    file: usize,
    index: usize,
    offset: usize,
    reader: &mut Reader<'a>,
) -> Option<Result<Event<'a>, Torn>> {
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
    let Ok(read) = reader.read(text) else {
        return Some(Err(tear("the line does not parse (a torn append)")));
    };
    // Python's reader takes a key written twice (the last one counts); dwp's strict one
    // refuses it, so the event is read and marked.
    let lenient = read.repeated.map(|(path, key)| match path.as_str() {
        "$" => format!("the key `{key}` is written twice"),
        _ => format!("the key `{key}` is written twice in the object at {path}"),
    });
    Some(Ok(Event::new(read.value, file, index + 1, lenient)))
}

/// Mark each event whose integer seq does not rise above the previous one's, in file order.
fn mark_regressions(events: &mut [Event]) {
    let mut previous: Option<i64> = None;
    for event in events {
        let Some(seq) = event.integer_seq() else {
            continue;
        };
        if let Some(before) = previous.filter(|before| seq <= *before) {
            event.not_above = Some(before);
        }
        previous = Some(seq);
    }
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
        let arena = Bump::new();
        let framed = frame(b"{\"seq\":1}\n{\"seq\":2\n{\"seq\":3}\n", 0, &arena, None);
        assert_eq!(framed.events.len(), 1);
        let torn = framed.torn.expect("torn");
        assert_eq!((torn.offset, torn.line), (10, 2));
    }

    #[test]
    fn a_file_read_in_two_halves_gives_the_events_and_the_tear_read_in_one() {
        let files: [&[u8]; 5] = [
            b"{\"seq\":1}\n{\"seq\":2,\"note\":\"a\\nb\"}\n\n \n{\"seq\":3}\n",
            b"{\"seq\":1}\n{\"seq\":2\n{\"seq\":3}\n{\"seq\":4}\n",
            b"{\"seq\":1}\r\n{\"seq\":1,\"seq\":2}\n{\"seq\":3}",
            b"{\"seq\":1}\n{\"seq\":2}\n\xff\n{\"seq\":4}\n",
            b"\n\n{\"seq\":1}\n",
        ];
        for bytes in files {
            let arena = Bump::new();
            let whole = format!("{:?}", read_lines(bytes, 0, 0, 3, &arena));
            for middle in 0..bytes.len() {
                let (arena, mut helper) = (Bump::new(), Bump::new());
                let halves = read_halves(bytes, 3, &arena, &mut helper, middle);
                assert_eq!(format!("{halves:?}"), whole, "split after byte {middle}");
            }
        }
    }

    #[test]
    fn blank_lines_are_skipped_and_a_missing_final_newline_is_only_unframed() {
        let arena = Bump::new();
        let framed = frame(b"{\"seq\":1}\n\n \n{\"seq\":2}", 0, &arena, None);
        assert_eq!(framed.events.len(), 2);
        assert!(framed.torn.is_none());
        assert!(framed.unframed);
    }

    #[test]
    fn a_torn_last_line_is_a_tear_not_an_event_missing_its_newline() {
        let arena = Bump::new();
        let framed = frame(b"{\"seq\":1}\n{\"seq\":2", 0, &arena, None);
        assert!(framed.torn.is_some());
        assert!(!framed.unframed);
    }

    #[test]
    fn undecodable_bytes_tear_the_journal() {
        let arena = Bump::new();
        let framed = frame(b"{\"seq\":1}\n\xff\xfe\n", 0, &arena, None);
        assert_eq!(framed.events.len(), 1);
        assert!(framed.torn.is_some_and(|t| t.cause.contains("undecodable")));
    }

    #[test]
    fn a_duplicate_key_is_read_as_the_public_tooling_reads_it_and_marked() {
        let arena = Bump::new();
        let framed = frame(b"{\"seq\":1,\"seq\":2}\n", 0, &arena, None);
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
        let segments = read_segments(&folder.0, &[ARCHIVE.to_owned()], true);
        let arena = Bump::new();
        let journal = Journal::frame(&segments, &arena, None);
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
            let segments = read_segments(&folder.0, &[ARCHIVE.to_owned()], true);
            let arena = Bump::new();
            let journal = Journal::frame(&segments, &arena, None);
            assert_eq!(
                journal.events.last().unwrap().not_above,
                marked,
                "first seq {first}"
            );
        }
    }
}
