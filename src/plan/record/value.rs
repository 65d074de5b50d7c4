//! A JSON value read from a journal line and borrowing that line's text: keys and strings
//! without escapes are slices of the bytes read, numbers keep their lexeme, objects are their
//! fields in written order. A journal holds thousands of small events; built as
//! `serde_json::Value`s they cost an allocation per key and per string, and as much again to
//! free. Here what is not borrowed (an object's fields, an array's items, an escaped string, a
//! number's lexeme) is laid out in an arena the reader owns (bumpalo's `Bump`): a value has no
//! destructor, and a journal's events are freed with their arena at once (docs/PERFORMANCE.md).
//!
//! serde_json does the reading, in one pass. The methods are named as `serde_json::Value`'s,
//! with the same meaning.

use bumpalo::Bump;
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};
use std::fmt;

/// A JSON value borrowing the text it was read from and the arena it was read into.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Json<'a> {
    Null,
    Bool(bool),
    /// The number as written (a lexeme serde_json's reader accepted), so no digit is lost.
    Number(&'a str),
    String(&'a str),
    Array(&'a [Json<'a>]),
    Object(Object<'a>),
}

/// `null`, to stand for a missing field where a reference is wanted.
pub static NULL: Json<'static> = Json::Null;

/// An object's fields in written order. A key written twice keeps both entries: reading a key
/// gives the last one, as Python's reader (the public tooling's) does.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Object<'a> {
    entries: &'a [(&'a str, Json<'a>)],
    repeats_a_key: bool,
}

/// One JSON text read as a [`Json`], with the first key an object in it writes twice.
#[derive(Debug)]
pub struct Read<'a> {
    pub value: Json<'a>,
    /// Where the first repeated key is (`$` for the top level) and the key.
    pub repeated: Option<(String, String)>,
}

impl<'a> Json<'a> {
    /// Read `text` as exactly one JSON value (whitespace around it allowed), laying out what
    /// it does not borrow in `arena`.
    pub fn read(text: &'a str, arena: &'a Bump) -> Result<Read<'a>, serde_json::Error> {
        Reader::new(arena).read(text)
    }

    /// `value` laid out in `arena` (numbers keep their lexeme).
    pub fn from_value(value: &Value, arena: &'a Bump) -> Json<'a> {
        match value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) => Json::Number(arena.alloc_str(n.as_str())),
            Value::String(s) => Json::String(arena.alloc_str(s)),
            Value::Array(items) => Json::Array(
                arena.alloc_slice_fill_iter(items.iter().map(|v| Json::from_value(v, arena))),
            ),
            Value::Object(map) => Json::Object(Object {
                entries: arena.alloc_slice_fill_iter(
                    map.iter()
                        .map(|(k, v)| (&*arena.alloc_str(k), Json::from_value(v, arena))),
                ),
                repeats_a_key: false,
            }),
        }
    }

    /// The field `key` of an object (the last one written), or `None`.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.as_object()?.get(key)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Json<'a>]> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Json::Object(object) => Some(object),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    pub fn is_string(&self) -> bool {
        matches!(self, Json::String(_))
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Json::Object(_))
    }

    /// A number written with a fraction or an exponent that reads as a finite float
    /// (`serde_json::Number::is_f64` with `arbitrary_precision`).
    pub fn is_f64(&self) -> bool {
        match self {
            Json::Number(n) if n.contains(['.', 'e', 'E']) => {
                n.parse::<f64>().is_ok_and(f64::is_finite)
            }
            _ => false,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Json::Number(n) => n.parse().ok(),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Number(n) => n.parse().ok(),
            _ => None,
        }
    }

    /// The value as a `serde_json::Value` (numbers keep their lexeme).
    pub fn to_value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            // The lexeme passed serde_json's own number grammar, which reads it back.
            Json::Number(n) => n.parse::<Number>().map_or(Value::Null, Value::Number),
            Json::String(s) => Value::String((*s).to_owned()),
            Json::Array(items) => Value::Array(items.iter().map(Json::to_value).collect()),
            Json::Object(object) => Value::Object(
                object
                    .iter()
                    .map(|(k, v)| (k.to_owned(), v.to_value()))
                    .collect(),
            ),
        }
    }
}

/// Equal as `serde_json::Value`s are (numbers by their lexeme, objects whatever their order).
impl PartialEq<Value> for Json<'_> {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Json::Null, Value::Null) => true,
            (Json::Bool(a), Value::Bool(b)) => a == b,
            (Json::String(a), Value::String(b)) => a == b,
            (Json::Number(_), Value::Number(_)) => self.to_value() == *other,
            (Json::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a == b)
            }
            (Json::Object(a), Value::Object(b)) => {
                a.keys().count() == b.len()
                    && b.iter()
                        .all(|(k, v)| a.get(k).is_some_and(|mine| mine == v))
            }
            _ => false,
        }
    }
}

/// Compact JSON, as `serde_json::Value` displays (for messages).
impl fmt::Display for Json<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.to_value().fmt(f)
    }
}

impl<'a> Object<'a> {
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        let found = self.entries.iter().rev().find(|(k, _)| *k == key);
        found.map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Each key once, in the order first written.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(i, (k, _))| {
                !self.repeats_a_key || !self.entries[..*i].iter().any(|e| e.0 == *k)
            })
            .map(|(_, (k, _))| *k)
    }

    /// Each key once with the value read for it (the last written).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Json<'a>)> {
        self.keys()
            .map(|k| (k, self.get(k).expect("a key of this object")))
    }

    pub fn values(&self) -> impl Iterator<Item = &Json<'a>> {
        self.iter().map(|(_, v)| v)
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A reader of many texts into one arena (a journal's lines): the room its stacks took for one
/// text is used again for the next.
pub struct Reader<'a> {
    arena: &'a Bump,
    scratch: Scratch<'a>,
}

impl<'a> Reader<'a> {
    pub fn new(arena: &'a Bump) -> Reader<'a> {
        Reader {
            arena,
            scratch: Scratch {
                repeated: None,
                entries: Vec::new(),
                items: Vec::new(),
            },
        }
    }

    /// [`Json::read`] of `text`.
    pub fn read(&mut self, text: &'a str) -> Result<Read<'a>, serde_json::Error> {
        let scratch = &mut self.scratch;
        // A text that does not parse leaves the levels it opened on the stacks.
        scratch.entries.clear();
        scratch.items.clear();
        scratch.repeated = None;
        let mut reader = serde_json::Deserializer::from_str(text);
        let value = ValueReader {
            arena: self.arena,
            path: &Path::Root,
            scratch: &mut *scratch,
        }
        .deserialize(&mut reader)?;
        reader.end()?;
        Ok(Read {
            value,
            repeated: scratch.repeated.take(),
        })
    }
}

/// Where a nested value is, for the message about a repeated key (`$.actor`): a chain of
/// steps on the stack, written out only when a key repeats.
enum Path<'p> {
    Root,
    Key(&'p Path<'p>, &'p str),
    Index(&'p Path<'p>, usize),
}

impl Path<'_> {
    fn render(&self) -> String {
        match self {
            Path::Root => String::from("$"),
            Path::Key(parent, key) => {
                let mut out = parent.render();
                crate::plan::json::push_key(&mut out, key);
                out
            }
            Path::Index(parent, index) => format!("{}[{index}]", parent.render()),
        }
    }
}

/// The first repeated key of a document: where, and which.
type Repeated = Option<(String, String)>;

/// What the reader of one text shares between its levels: the first repeated key, and the
/// fields and items read so far of the objects and arrays still open (each level's at the top,
/// moved to the arena when it closes, so the stacks' room is used again and again).
struct Scratch<'a> {
    repeated: Repeated,
    entries: Vec<(&'a str, Json<'a>)>,
    items: Vec<Json<'a>>,
}

/// Reads one value in a single pass over its text: strings without escapes are borrowed,
/// objects and arrays read item by item, a number arrives as its lexeme (serde_json's
/// `arbitrary_precision` hands it over as a one-entry map, see `crate::plan::json`).
struct ValueReader<'a, 'p, 's> {
    arena: &'a Bump,
    path: &'p Path<'p>,
    scratch: &'s mut Scratch<'a>,
}

impl<'a> ValueReader<'a, '_, '_> {
    /// The reader of a value nested at `path`.
    fn nested<'p>(&mut self, path: &'p Path<'p>) -> ValueReader<'a, 'p, '_> {
        ValueReader {
            arena: self.arena,
            path,
            scratch: &mut *self.scratch,
        }
    }
}

impl<'a> DeserializeSeed<'a> for ValueReader<'a, '_, '_> {
    type Value = Json<'a>;

    fn deserialize<D: serde::Deserializer<'a>>(self, d: D) -> Result<Json<'a>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'a> Visitor<'a> for ValueReader<'a, '_, '_> {
    type Value = Json<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json<'a>, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Json<'a>, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Json<'a>, E> {
        Ok(Json::Number(self.arena.alloc_str(&v.to_string())))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Json<'a>, E> {
        Ok(Json::Number(self.arena.alloc_str(&v.to_string())))
    }

    fn visit_borrowed_str<E>(self, v: &'a str) -> Result<Json<'a>, E> {
        Ok(Json::String(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Json<'a>, E> {
        Ok(Json::String(self.arena.alloc_str(v)))
    }

    fn visit_seq<A: SeqAccess<'a>>(mut self, mut seq: A) -> Result<Json<'a>, A::Error> {
        let open = self.scratch.items.len();
        loop {
            let path = Path::Index(self.path, self.scratch.items.len() - open);
            match seq.next_element_seed(self.nested(&path))? {
                Some(item) => self.scratch.items.push(item),
                None => break,
            }
        }
        let items = self.scratch.items.drain(open..);
        Ok(Json::Array(self.arena.alloc_slice_fill_iter(items)))
    }

    fn visit_map<A: MapAccess<'a>>(mut self, mut map: A) -> Result<Json<'a>, A::Error> {
        let open = self.scratch.entries.len();
        let mut repeats_a_key = false;
        while let Some(key) = map.next_key_seed(Key(self.arena))? {
            let mine = &self.scratch.entries[open..];
            if mine.is_empty() && key == crate::plan::json::NUMBER_TOKEN {
                let lexeme = map.next_value::<String>()?;
                return Ok(Json::Number(self.arena.alloc_str(&lexeme)));
            }
            // The public tooling writes keys sorted: a key above the last one is new.
            let ascending = mine.last().is_none_or(|(last, _)| key > *last);
            if !ascending && mine.iter().any(|(k, _)| *k == key) {
                repeats_a_key = true;
                if self.scratch.repeated.is_none() {
                    self.scratch.repeated = Some((self.path.render(), key.to_owned()));
                }
            }
            let path = Path::Key(self.path, key);
            let value = map.next_value_seed(self.nested(&path))?;
            self.scratch.entries.push((key, value));
        }
        let entries = self.scratch.entries.drain(open..);
        Ok(Json::Object(Object {
            entries: self.arena.alloc_slice_fill_iter(entries),
            repeats_a_key,
        }))
    }
}

/// A key, borrowed from the text when it has no escape, else laid out in the arena.
struct Key<'a>(&'a Bump);

impl<'a> DeserializeSeed<'a> for Key<'a> {
    type Value = &'a str;

    fn deserialize<D: serde::Deserializer<'a>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'a> Visitor<'a> for Key<'a> {
    type Value = &'a str;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_borrowed_str<E>(self, v: &'a str) -> Result<Self::Value, E> {
        Ok(v)
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(self.0.alloc_str(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read<'a>(text: &'a str, arena: &'a Bump) -> Read<'a> {
        Json::read(text, arena).expect("JSON")
    }

    #[test]
    fn strings_without_escapes_borrow_the_text_and_numbers_keep_their_lexeme() {
        let text =
            r#"{"a":"plain","b":"tab\there","n":-12.50e3,"big":123456789012345678901234567890}"#;
        let arena = Bump::new();
        let value = read(text, &arena).value;
        let plain = value.get("a").and_then(Json::as_str).unwrap();
        assert!(
            text.as_bytes().as_ptr_range().contains(&plain.as_ptr()),
            "borrowed"
        );
        assert_eq!(value.get("b").and_then(Json::as_str), Some("tab\there"));
        // The lexeme as serde_json's `arbitrary_precision` keeps it (an exponent gains its sign).
        assert!(matches!(value.get("n"), Some(Json::Number(n)) if *n == "-12.50e+3"));
        assert_eq!(
            value.get("big").unwrap().to_value().to_string(),
            "123456789012345678901234567890",
            "no digit is lost"
        );
    }

    #[test]
    fn it_reads_what_serde_json_reads_and_refuses_what_it_refuses() {
        let cases = [
            r#"{"a":[1,{"b":null}],"c":true,"d":"\u00e9\ud83d\ude00"}"#,
            r#"  [1, "x", {"y": false}]  "#,
            r#""just a string""#,
            "17",
            r#"{"a":1}x"#,
            r#"{"a":"\ud800"}"#,
            "{\"a\":\"raw \u{1} control\"}",
            r#"{"a":NaN}"#,
            r#"{"a":1,}"#,
            "",
        ];
        for text in cases {
            let arena = Bump::new();
            let ours = Json::read(text, &arena).map(|r| r.value.to_value());
            let theirs = serde_json::from_str::<Value>(text);
            match (ours, theirs) {
                (Ok(ours), Ok(theirs)) => assert_eq!(ours, theirs, "{text}"),
                (Err(_), Err(_)) => {}
                (ours, theirs) => panic!("{text}: ours {ours:?}, serde_json {theirs:?}"),
            }
        }
    }

    #[test]
    fn a_repeated_key_is_named_where_it_is_and_the_last_one_is_read() {
        let arena = Bump::new();
        let top = read(r#"{"seq":1,"seq":2}"#, &arena);
        assert_eq!(top.repeated, Some(("$".into(), "seq".into())));
        assert_eq!(top.value.get("seq").and_then(Json::as_i64), Some(2));
        assert_eq!(top.value.as_object().unwrap().keys().count(), 1);
        let nested = read(r#"{"actor":{"kind":"agent","kind":"helper"}}"#, &arena);
        assert_eq!(nested.repeated, Some(("$.actor".into(), "kind".into())));
        let actor = nested.value.get("actor").unwrap();
        assert_eq!(actor.get("kind").and_then(Json::as_str), Some("helper"));
        assert_eq!(actor.to_value(), json!({"kind": "helper"}));
    }

    #[test]
    fn numbers_answer_as_serde_json_numbers_do() {
        for text in ["1", "-3", "2.0", "1e3", "18446744073709551616", "-0"] {
            let arena = Bump::new();
            let ours = read(text, &arena).value;
            let Value::Number(theirs) = serde_json::from_str::<Value>(text).unwrap() else {
                unreachable!()
            };
            assert_eq!(ours.is_f64(), theirs.is_f64(), "{text}");
            assert_eq!(ours.as_i64(), theirs.as_i64(), "{text}");
            assert_eq!(ours.as_f64(), theirs.as_f64(), "{text}");
        }
    }

    #[test]
    fn a_value_converts_both_ways_unchanged() {
        let value = json!({"a": [1, 2.5, "x", null, {"b": false}], "c": "é"});
        let arena = Bump::new();
        assert_eq!(Json::from_value(&value, &arena).to_value(), value);
        assert_eq!(
            Json::from_value(&value, &arena).to_string(),
            value.to_string()
        );
    }
}
