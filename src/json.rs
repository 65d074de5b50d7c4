//! Strict JSON reading.
//!
//! `serde_json` alone lets the last of two duplicate keys win, which lets a document say two
//! things at once (`"passes": false, ..., "passes": true`). dwp refuses that, and also a byte
//! order mark, invalid UTF-8 and anything after the document. Errors carry the JSON path
//! (`$.tasks[2].gates`) and the line and column where the reader stopped.

use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::cell::RefCell;
use std::fmt::{self, Write as _};

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
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        return Err(at_root(
            "starts with a UTF-8 byte order mark; JSON text must not (RFC 8259 §8.1)",
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let (line, column) = line_column(bytes, e.valid_up_to());
        at_root(format!(
            "invalid UTF-8 at line {line} column {column} (byte {})",
            e.valid_up_to()
        ))
    })?;
    let path = RefCell::new(Vec::new());
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = StrictSeed { path: &path }
        .deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value))
        .map_err(|e| JsonError {
            path: render_path(path.borrow().iter()),
            message: e.to_string(),
        })?;
    Ok(value)
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
struct StrictSeed<'p> {
    path: &'p RefCell<Vec<Segment>>,
}

impl<'de> DeserializeSeed<'de> for StrictSeed<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictSeed<'_> {
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
            match seq.next_element_seed(StrictSeed { path: self.path })? {
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
            if object.contains_key(&key) {
                let mut message = format!("duplicate key `{key}` in the object at ");
                message.push_str(&render_path(self.path.borrow().iter()));
                return Err(A::Error::custom(message));
            }
            self.path.borrow_mut().push(Segment::Key(key));
            let value = map.next_value_seed(StrictSeed { path: self.path })?;
            let Some(Segment::Key(key)) = self.path.borrow_mut().pop() else {
                unreachable!("the key pushed above is on top of the path stack")
            };
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
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
    fn paths_quote_keys_that_are_not_identifiers() {
        let path = render_path(&[
            Segment::Key("a b".into()),
            Segment::Index(2),
            Segment::Key("ok_1".into()),
        ]);
        assert_eq!(path, r#"$["a b"][2].ok_1"#);
    }
}
