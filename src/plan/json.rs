//! Strict JSON reading.
//!
//! `serde_json` alone lets the last of two duplicate keys win, which lets a document say two
//! things at once (`"passes": false, ..., "passes": true`). dwp refuses that, and also a byte
//! order mark, invalid UTF-8 and anything after the document. Errors carry the JSON path
//! (`$.tasks[2].gates`) and the line and column where the reader stopped.

use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::{self, Write as _};

/// An object's field found by comparing its keys in turn, not by hashing the key: with
/// `preserve_order` a `serde_json` object is an index map keyed by SipHash, and a record plan's
/// contract objects (a task, a criterion) have a dozen keys at most, which a scan compares in less
/// time than one hash takes. A key is in an object once (the strict reader refuses a repeat), so
/// the first match is `get`'s.
pub trait Field {
    fn field(&self, key: &str) -> Option<&Self>;
}

/// From this many keys, an object's field is looked up by its hash.
const SCANNED_UP_TO: usize = 16;

/// `map`'s value of `key`, found as [`Field`] finds a field.
#[inline]
fn find<'m>(map: &'m Map<String, Value>, key: &str) -> Option<&'m Value> {
    match map.len() <= SCANNED_UP_TO {
        true => map.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v),
        false => map.get(key),
    }
}

/// Whether `map` has `key`, found as [`Field`] finds a field.
pub fn has_key(map: &Map<String, Value>, key: &str) -> bool {
    find(map, key).is_some()
}

impl Field for Value {
    #[inline]
    fn field(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|map| find(map, key))
    }
}

/// Why a byte string is not one JSON document dwp accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// JSON path of the value being read, when known (`$` for the document).
    pub path: String,
    pub message: String,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// A step of a JSON path: an object key or an array index.
#[derive(Debug, Clone)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// Render path segments as `$.a.b[3]`, quoting keys that are not plain identifiers.
pub fn render_path<'a>(segments: impl IntoIterator<Item = &'a Segment>) -> String {
    let mut out = String::from("$");
    for segment in segments {
        match segment {
            Segment::Key(key) => push_key(&mut out, key),
            Segment::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
        }
    }
    out
}

pub(crate) fn push_key(out: &mut String, key: &str) {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        out.push('.');
        out.push_str(key);
    } else {
        let _ = write!(out, "[{}]", Value::String(key.to_owned()));
    }
}

/// Parse `bytes` as exactly one JSON document: UTF-8 without BOM, no duplicate keys, nothing
/// but whitespace after the value.
pub fn parse_strict(bytes: &[u8]) -> Result<Value, JsonError> {
    let text = checked_text(bytes)?;
    parse_text(text, None).map(|(value, _)| value)
}

/// A document read with its top-level `tasks` array kept as raw JSON text, one slice per task,
/// so that each task can be parsed, checked, typed and freed in turn: a 10,000-task state then
/// never exists as one 45 MB tree of JSON values.
#[derive(Debug)]
pub struct Shell<'a> {
    /// The document; when `tasks` is an array it holds one `null` per task.
    pub value: Value,
    /// Each task's JSON text, when `tasks` is an array.
    pub tasks: Option<Vec<&'a RawValue>>,
    /// The whole text, to place errors inside a task at their real line and column.
    pub text: &'a str,
}

/// [`parse_strict`] with the top-level `tasks` array left raw (see [`Shell`]).
pub fn parse_strict_shell(bytes: &[u8]) -> Result<Shell<'_>, JsonError> {
    let text = checked_text(bytes)?;
    let slot = RefCell::new(None);
    let (mut value, raw) = parse_text(text, Some(&slot))?;
    let mut tasks = None;
    if let (Some(raw), Value::Object(map)) = (raw, &mut value) {
        let placeholder = if raw.get().trim_start().starts_with('[') {
            let items: Vec<&RawValue> = serde_json::from_str(raw.get()).map_err(|e| JsonError {
                path: "$.tasks".into(),
                message: e.to_string(),
            })?;
            let nulls = Value::Array(vec![Value::Null; items.len()]);
            tasks = Some(items);
            nulls
        } else {
            parse_task_text(text, raw.get(), "$.tasks")?
        };
        map.insert("tasks".into(), placeholder);
    }
    Ok(Shell { value, tasks, text })
}

/// Parse one raw slice of `whole` strictly; errors carry `path` as their prefix and the line
/// and column in `whole`.
pub fn parse_task_text(whole: &str, part: &str, path: &str) -> Result<Value, JsonError> {
    parse_text(part, None).map(|(value, _)| value).map_err(|e| {
        let offset = (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize);
        let (base_line, base_column) = line_column(whole.as_bytes(), offset);
        let message = rebase_position(&e.message, base_line, base_column)
            .replace("in the object at $", &format!("in the object at {path}"));
        JsonError {
            path: format!("{path}{}", e.path.strip_prefix('$').unwrap_or(&e.path)),
            message,
        }
    })
}

/// serde_json ends messages with "at line L column C" relative to the text it read; move that
/// position into the enclosing document.
fn rebase_position(message: &str, base_line: usize, base_column: usize) -> String {
    let Some(at) = message.rfind(" at line ") else {
        return message.to_owned();
    };
    let mut numbers = message[at + 9..]
        .split(" column ")
        .map(|n| n.trim().parse::<usize>().ok());
    match (numbers.next().flatten(), numbers.next().flatten()) {
        (Some(line), Some(column)) => {
            let (line, column) = if line == 1 {
                (base_line, base_column + column - 1)
            } else {
                (base_line + line - 1, column)
            };
            format!("{} at line {line} column {column}", &message[..at])
        }
        _ => message.to_owned(),
    }
}

fn checked_text(bytes: &[u8]) -> Result<&str, JsonError> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        return Err(at_root(
            "starts with a UTF-8 byte order mark; JSON text must not (RFC 8259 §8.1)",
        ));
    }
    std::str::from_utf8(bytes).map_err(|e| {
        let (line, column) = line_column(bytes, e.valid_up_to());
        at_root(format!(
            "invalid UTF-8 at line {line} column {column} (byte {})",
            e.valid_up_to()
        ))
    })
}

type TasksSlot<'p, 'de> = &'p RefCell<Option<&'de RawValue>>;

fn parse_text<'de>(
    text: &'de str,
    tasks: Option<TasksSlot<'_, 'de>>,
) -> Result<(Value, Option<&'de RawValue>), JsonError> {
    let path = RefCell::new(Vec::new());
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = StrictSeed { path: &path, tasks }
        .deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value))
        .map_err(|e| JsonError {
            path: render_path(path.borrow().iter()),
            message: e.to_string(),
        })?;
    Ok((value, tasks.and_then(|slot| slot.take())))
}

fn at_root(message: impl Into<String>) -> JsonError {
    JsonError {
        path: "$".into(),
        message: message.into(),
    }
}

fn line_column(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    (line, column)
}

/// Builds a `serde_json::Value`, refusing duplicate keys. The shared path stack is pushed on the
/// way down and popped on the way up, so on error it still names where reading stopped.
struct StrictSeed<'p, 'de> {
    path: &'p RefCell<Vec<Segment>>,
    /// At the top level only: where to leave the raw text of `tasks`.
    tasks: Option<TasksSlot<'p, 'de>>,
}

impl<'de> DeserializeSeed<'de> for StrictSeed<'_, 'de> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictSeed<'_, 'de> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("number is not finite"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            self.path.borrow_mut().push(Segment::Index(items.len()));
            let seed = StrictSeed {
                path: self.path,
                tasks: None,
            };
            match seq.next_element_seed(seed)? {
                Some(item) => items.push(item),
                None => break,
            }
            self.path.borrow_mut().pop();
        }
        self.path.borrow_mut().pop();
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.is_empty() && key == NUMBER_TOKEN {
                return number_from_lexeme(&map.next_value::<String>()?);
            }
            if has_key(&object, &key) {
                let mut message = format!("duplicate key `{key}` in the object at ");
                message.push_str(&render_path(self.path.borrow().iter()));
                return Err(A::Error::custom(message));
            }
            self.path.borrow_mut().push(Segment::Key(key));
            let value = match self.tasks.filter(|_| self.path.borrow().len() == 1) {
                Some(slot) if matches!(self.path.borrow().last(), Some(Segment::Key(k)) if k == "tasks") =>
                {
                    *slot.borrow_mut() = Some(map.next_value::<&'de RawValue>()?);
                    Value::Null
                }
                _ => map.next_value_seed(StrictSeed {
                    path: self.path,
                    tasks: None,
                })?,
            };
            let Some(Segment::Key(key)) = self.path.borrow_mut().pop() else {
                unreachable!("the key pushed above is on top of the path stack")
            };
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// The one key of the map serde_json hands over for a number when `arbitrary_precision` keeps
/// each number's lexeme (docs/DECISIONS.md): its value is the number as written.
pub(crate) const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// The number a lexeme from serde_json's reader spells, kept exactly as written.
fn number_from_lexeme<E: serde::de::Error>(lexeme: &str) -> Result<Value, E> {
    lexeme
        .parse::<Number>()
        .map(Value::Number)
        .map_err(|e| E::custom(format!("number `{lexeme}`: {e}")))
}

/// Where the values at `paths` (as [`render_path`] writes them) start in `text`: 1-based lines,
/// so a finding on `$.tasks[3].gates` can point at `state.json:57`. One pass over the text,
/// however many paths; paths that are not in the document are left out. `text` is assumed to
/// be JSON that already parsed; on anything else the scan stops early.
pub fn lines_of(text: &str, paths: &[&str]) -> HashMap<String, usize> {
    enum Frame {
        Object { key: String, expect_key: bool },
        Array { index: usize },
    }
    let wanted: std::collections::HashSet<&str> = paths.iter().copied().collect();
    let mut found = HashMap::new();
    let mut frames: Vec<Frame> = Vec::new();
    let bytes = text.as_bytes();
    let (mut at, mut line) = (0, 1);
    let value_starts = |frames: &[Frame], line: usize, found: &mut HashMap<String, usize>| {
        let segments: Vec<Segment> = frames
            .iter()
            .map(|f| match f {
                Frame::Object { key, .. } => Segment::Key(key.clone()),
                Frame::Array { index } => Segment::Index(*index),
            })
            .collect();
        let path = render_path(&segments);
        if wanted.contains(path.as_str()) {
            found.entry(path).or_insert(line);
        }
    };
    while at < bytes.len() && found.len() < wanted.len() {
        match bytes[at] {
            b'\n' => line += 1,
            b' ' | b'\t' | b'\r' | b':' => {}
            b',' => match frames.last_mut() {
                Some(Frame::Array { index }) => *index += 1,
                Some(Frame::Object { expect_key, .. }) => *expect_key = true,
                None => break,
            },
            b'}' | b']' => {
                frames.pop();
            }
            b'{' => {
                value_starts(&frames, line, &mut found);
                frames.push(Frame::Object {
                    key: String::new(),
                    expect_key: true,
                });
            }
            b'[' => {
                value_starts(&frames, line, &mut found);
                frames.push(Frame::Array { index: 0 });
            }
            b'"' => {
                let end = string_end(bytes, at);
                match frames.last_mut() {
                    Some(Frame::Object { key, expect_key }) if *expect_key => {
                        let Ok(text_key) = serde_json::from_str::<String>(&text[at..end]) else {
                            break;
                        };
                        *key = text_key;
                        *expect_key = false;
                    }
                    _ => value_starts(&frames, line, &mut found),
                }
                at = end;
                continue;
            }
            _ => {
                value_starts(&frames, line, &mut found);
                while at < bytes.len() && !b",]} \t\r\n".contains(&bytes[at]) {
                    at += 1;
                }
                continue;
            }
        }
        at += 1;
    }
    found
}

/// The index just past the string that starts at `start` (a `"`), escapes skipped.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut at = start + 1;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'"' => return at + 1,
            _ => at += 1,
        }
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_are_refused_with_their_path() {
        let err = parse_strict(br#"{"tasks":[{"id":1,"id":2}]}"#).unwrap_err();
        assert!(err.message.contains("duplicate key `id`"), "{err}");
        assert!(err.message.contains("$.tasks[0]"), "{err}");
    }

    #[test]
    fn bom_invalid_utf8_and_trailing_garbage_are_refused() {
        assert!(
            parse_strict(b"\xEF\xBB\xBF{}")
                .unwrap_err()
                .message
                .contains("byte order mark")
        );
        assert!(
            parse_strict(b"{\"a\":\"\xFF\"}")
                .unwrap_err()
                .message
                .contains("invalid UTF-8")
        );
        assert!(
            parse_strict(b"{} x")
                .unwrap_err()
                .message
                .contains("trailing characters")
        );
    }

    #[test]
    fn error_path_names_where_reading_stopped() {
        let err = parse_strict(br#"{"tasks":[{"id":1},{"id":tru}]}"#).unwrap_err();
        assert_eq!(err.path, "$.tasks[1].id");
    }

    #[test]
    fn a_valid_document_round_trips_unchanged() {
        let text = r#"{"a":[1,2.5,"x",null,true],"b":{"c":{}}}"#;
        let value = parse_strict(text.as_bytes()).unwrap();
        assert_eq!(value, serde_json::from_str::<Value>(text).unwrap());
    }

    #[test]
    fn a_shell_keeps_each_task_raw_and_places_errors_in_the_whole_text() {
        let text = "{\"a\": 1,\n \"tasks\": [{\"id\": 1}, {\"id\": 2}]}";
        let shell = parse_strict_shell(text.as_bytes()).unwrap();
        assert_eq!(shell.value["tasks"], serde_json::json!([null, null]));
        let tasks = shell.tasks.unwrap();
        assert_eq!(tasks[1].get(), "{\"id\": 2}");
        let bad = "{\"tasks\": [{\"id\": 1},\n  {\"id\": 2, \"id\": 3}]}";
        let shell = parse_strict_shell(bad.as_bytes()).unwrap();
        let raw = shell.tasks.unwrap()[1];
        let err = parse_task_text(shell.text, raw.get(), "$.tasks[1]").unwrap_err();
        assert_eq!(err.path, "$.tasks[1]");
        assert!(err.message.contains("duplicate key `id`"), "{err}");
        assert!(err.message.contains("in the object at $.tasks[1]"), "{err}");
        assert!(err.message.ends_with("at line 2 column 16"), "{err}");
        // Not an array: parsed in place, for the schema to report.
        let odd = parse_strict_shell(br#"{"tasks": {"x": 1}}"#).unwrap();
        assert!(odd.tasks.is_none());
        assert_eq!(odd.value["tasks"]["x"], 1);
        // Duplicate `tasks` keys are still refused.
        assert!(parse_strict_shell(br#"{"tasks": [], "tasks": []}"#).is_err());
    }

    #[test]
    fn paths_quote_keys_that_are_not_identifiers() {
        let path = render_path(&[
            Segment::Key("a b".into()),
            Segment::Index(2),
            Segment::Key("ok_1".into()),
        ]);
        assert_eq!(path, r#"$["a b"][2].ok_1"#);
    }

    #[test]
    fn lines_of_finds_where_each_path_starts() {
        let text = "{\n  \"tasks\": [\n    {\"id\": 1},\n    {\n      \"id\": 2,\n      \"gates\": []\n    }\n  ],\n  \"a b\": \"x,]\"\n}\n";
        let lines = lines_of(
            text,
            &[
                "$.tasks",
                "$.tasks[1].gates",
                "$.tasks[0].id",
                "$[\"a b\"]",
                "$.missing",
            ],
        );
        assert_eq!(lines.get("$.tasks"), Some(&2));
        assert_eq!(lines.get("$.tasks[0].id"), Some(&3));
        assert_eq!(lines.get("$.tasks[1].gates"), Some(&6));
        assert_eq!(lines.get("$[\"a b\"]"), Some(&9));
        assert_eq!(lines.get("$.missing"), None);
    }
}
