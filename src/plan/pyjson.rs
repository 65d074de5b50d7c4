//! JSON bytes exactly as Python's `json` module writes them.
//!
//! Record plans name their contract by the sha256 of
//! `json.dumps(body, sort_keys=True, separators=(',', ':'))` ([`canonical`], [`contract_id`]) and
//! their snapshot state.json is `json.dumps(state, sort_keys=True, indent=2) + "\n"` ([`pretty`]).
//! No crate writes that format, so this is a small writer over `serde_json::Value`:
//!
//! - keys sorted by code point at every level (Rust's `str` order is UTF-8 byte order, which is
//!   code point order; Python compares code points too);
//! - `ensure_ascii`: `\"` `\\` `\n` `\r` `\t` `\b` `\f` in short form, every other character
//!   outside 0x20..=0x7E (0x7F included) as lowercase `\uXXXX`, as a surrogate pair above the BMP;
//! - numbers from their lexeme (serde_json keeps it: docs/DECISIONS.md): an integer as Python's
//!   `int` writes it, of any size (`-0` is `0`); a float (`.`, `e` or `E` in the lexeme) as
//!   Python's `repr(float)`: shortest round-trip digits, scientific with a signed two-digit
//!   exponent below 1e-4 and from 1e16 up (`1e-05`, `1e+16`), else fixed with at least `.0`.

use crate::plan::record::Json;
use serde_json::{Map, Number, Value};
use std::fmt::Write as _;

/// `json.dumps(value, sort_keys=True, separators=(',', ':')).encode('utf-8')`.
pub fn canonical(value: &Value) -> Vec<u8> {
    let mut out = String::new();
    write_value(&mut out, value, None);
    out.into_bytes()
}

/// `json.dumps(value, sort_keys=True, indent=2).encode('utf-8')`, without the `"\n"` a
/// state.json ends with (the caller appends it).
pub fn pretty(value: &Value) -> Vec<u8> {
    let mut out = String::new();
    write_value(&mut out, value, Some(0));
    out.into_bytes()
}

/// A document for [`pretty_parts`], its parts borrowed from where they are held: the bytes
/// [`pretty`] writes for the `Value` the parts make, without building that `Value` (a record
/// plan's snapshot has thousands of objects, each a map of owned keys as a `Value`).
#[derive(Debug)]
pub enum Part<'a> {
    Null,
    Bool(bool),
    Text(&'a str),
    Unsigned(u64),
    Value(&'a Value),
    /// A value read from a journal line.
    Record(&'a Json<'a>),
    List(Vec<Part<'a>>),
    /// An object's fields, each key once, in any order: they are written sorted.
    Fields(Vec<(&'a str, Part<'a>)>),
}

/// [`pretty`] of the `Value` that `part` makes.
pub fn pretty_parts(part: &Part) -> Vec<u8> {
    let mut out = String::new();
    write_part(&mut out, part, 0);
    out.into_bytes()
}

fn write_part(out: &mut String, part: &Part, depth: usize) {
    match part {
        Part::Null => out.push_str("null"),
        Part::Bool(b) => write_value(out, &Value::Bool(*b), Some(depth)),
        Part::Text(text) => write_string(out, text),
        Part::Unsigned(n) => {
            let _ = write!(out, "{n}");
        }
        Part::Value(value) => write_value(out, value, Some(depth)),
        Part::Record(Json::Null) => out.push_str("null"),
        Part::Record(Json::Bool(b)) => write_value(out, &Value::Bool(*b), Some(depth)),
        Part::Record(Json::String(text)) => write_string(out, text),
        Part::Record(Json::Number(lexeme)) => write_lexeme(out, lexeme),
        // Nested records are rare in a snapshot: their `Value`'s writer sorts their keys.
        Part::Record(nested) => write_value(out, &nested.to_value(), Some(depth)),
        Part::List(items) => {
            write_container(out, ('[', ']'), items.iter(), Some(depth), |out, item| {
                write_part(out, item, depth + 1)
            })
        }
        Part::Fields(fields) => {
            let mut fields: Vec<_> = fields.iter().collect();
            fields.sort_unstable_by(|a, b| a.0.cmp(b.0));
            debug_assert!(
                fields.windows(2).all(|w| w[0].0 != w[1].0),
                "a key written twice"
            );
            write_container(
                out,
                ('{', '}'),
                fields.into_iter(),
                Some(depth),
                |out, (key, item)| {
                    write_string(out, key);
                    out.push_str(": ");
                    write_part(out, item, depth + 1);
                },
            )
        }
    }
}

/// The id of a record plan's contract: lowercase hex sha256 of [`canonical`] of the contract
/// without its own top-level `contract_id` key.
pub fn contract_id(contract: &Value) -> String {
    crate::store::sha256_hex(&canonical_without(contract, "contract_id"))
}

/// [`canonical`] of `value` with its top-level `key` left out (the value itself is not copied).
pub fn canonical_without(value: &Value, key: &str) -> Vec<u8> {
    let Value::Object(map) = value else {
        return canonical(value);
    };
    let mut out = String::new();
    let entries: Vec<_> = sorted(map).filter(|(k, _)| k.as_str() != key).collect();
    write_container(
        &mut out,
        ('{', '}'),
        entries.into_iter(),
        None,
        |out, (key, item)| {
            write_string(out, key);
            out.push(':');
            write_value(out, item, None);
        },
    );
    out.into_bytes()
}

/// Write `value`; `depth` is `None` for the compact form, else the nesting level of `indent=2`.
fn write_value(out: &mut String, value: &Value, depth: Option<usize>) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(number) => write_number(out, number),
        Value::String(text) => write_string(out, text),
        Value::Array(items) => {
            write_container(out, ('[', ']'), items.iter(), depth, |out, item| {
                write_value(out, item, depth.map(|d| d + 1))
            })
        }
        Value::Object(map) => {
            write_container(out, ('{', '}'), sorted(map), depth, |out, (key, item)| {
                write_string(out, key);
                out.push_str(if depth.is_some() { ": " } else { ":" });
                write_value(out, item, depth.map(|d| d + 1));
            })
        }
    }
}

/// An object's entries by key in code point order, as `sort_keys=True` has them.
fn sorted(map: &Map<String, Value>) -> std::vec::IntoIter<(&String, &Value)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    entries.into_iter()
}

/// `open items close`: empty as `[]`/`{}`; compact with `,`; with `indent=2`, each item on its
/// own line and `,` at line ends (Python >= 3.4 drops the space before the newline).
fn write_container<T>(
    out: &mut String,
    (open, close): (char, char),
    items: impl ExactSizeIterator<Item = T>,
    depth: Option<usize>,
    mut write_item: impl FnMut(&mut String, T),
) {
    out.push(open);
    let empty = items.len() == 0;
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        if let Some(depth) = depth {
            new_line(out, depth + 1);
        }
        write_item(out, item);
    }
    if let (Some(depth), false) = (depth, empty) {
        new_line(out, depth);
    }
    out.push(close);
}

fn new_line(out: &mut String, depth: usize) {
    out.push('\n');
    out.extend(std::iter::repeat_n(' ', 2 * depth));
}

/// A string with `ensure_ascii=True` escapes.
fn write_string(out: &mut String, text: &str) {
    out.push('"');
    // Printable ASCII other than `"` and `\\` is written as it is, in one run.
    let plain = text
        .bytes()
        .position(|b| !(b' '..=b'~').contains(&b) || b == b'"' || b == b'\\')
        .unwrap_or(text.len());
    out.push_str(&text[..plain]);
    for c in text[plain..].chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                for unit in c.encode_utf16(&mut [0; 2]) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

/// A number as Python writes the value `json.loads` reads from its lexeme.
fn write_number(out: &mut String, number: &Number) {
    write_lexeme(out, number.as_str())
}

/// A number from the lexeme serde_json's reader accepted ([`write_number`]).
fn write_lexeme(out: &mut String, lexeme: &str) {
    if lexeme.contains(['.', 'e', 'E']) {
        // A lexeme serde_json accepted always parses; overflow gives infinity, as in Python.
        write_float(out, lexeme.parse::<f64>().unwrap_or(f64::NAN));
    } else if lexeme == "-0" {
        out.push('0');
    } else {
        out.push_str(lexeme);
    }
}

/// `repr(x)` of a Python float (`float_repr_style` "short"), `Infinity`/`NaN` as `json` writes
/// them.
fn write_float(out: &mut String, x: f64) {
    if x.is_nan() {
        return out.push_str("NaN");
    }
    if x.is_infinite() {
        return out.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
    }
    // Rust's `{:e}` gives the shortest digits that round-trip, as Python's repr does.
    let scientific = format!("{x:e}");
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("`{:e}` always writes an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` writes a decimal exponent");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits = mantissa.replace('.', "");
    out.push_str(sign);
    if !(-4..16).contains(&exponent) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let exponent_sign = if exponent < 0 { '-' } else { '+' };
        let _ = write!(out, "e{exponent_sign}{:02}", exponent.unsigned_abs());
    } else if exponent >= 0 {
        let whole = exponent as usize + 1;
        if digits.len() <= whole {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', whole - digits.len()));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..whole]);
            out.push('.');
            out.push_str(&digits[whole..]);
        }
    } else {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-exponent - 1) as usize));
        out.push_str(&digits);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::json::parse_strict;
    use serde_json::json;

    fn compact_of(text: &str) -> String {
        String::from_utf8(canonical(&parse_strict(text.as_bytes()).unwrap())).unwrap()
    }

    fn pretty_of(text: &str) -> String {
        String::from_utf8(pretty(&parse_strict(text.as_bytes()).unwrap())).unwrap()
    }

    #[test]
    fn keys_are_sorted_by_code_point_at_every_level() {
        assert_eq!(
            compact_of(r#"{"b":{"z":1,"a":2},"a":[{"y":0,"x":0}]}"#),
            r#"{"a":[{"x":0,"y":0}],"b":{"a":2,"z":1}}"#
        );
        // U+FF61 sorts before U+1F600 by code point, after it in UTF-16 (D83D < FF61).
        assert_eq!(
            compact_of("{\"\u{1F600}\":1,\"\u{FF61}\":2,\"Z\":3,\"a\":4}"),
            r#"{"Z":3,"a":4,"\uff61":2,"\ud83d\ude00":1}"#
        );
    }

    #[test]
    fn ensure_ascii_uses_short_escapes_for_quote_backslash_and_five_controls() {
        assert_eq!(
            compact_of(r#""q\" b\\ n\n r\r t\t b\b f\f s\/""#),
            r#""q\" b\\ n\n r\r t\t b\b f\f s/""#
        );
    }

    #[test]
    fn ensure_ascii_escapes_other_controls_del_and_non_ascii_in_lowercase_hex() {
        assert_eq!(
            compact_of("\"\\u0000\\u001f\u{7f}~ \u{e9}\u{4e2d}\u{FFFF}\""),
            r#""\u0000\u001f\u007f~ \u00e9\u4e2d\uffff""#
        );
    }

    #[test]
    fn ensure_ascii_writes_astral_characters_as_surrogate_pairs() {
        assert_eq!(
            compact_of("\"\u{1F600}\u{10FFFF}\""),
            r#""\ud83d\ude00\udbff\udfff""#
        );
    }

    #[test]
    fn floats_are_python_repr_fixed_between_1e_minus_4_and_1e16() {
        for (lexeme, python) in [
            ("0.1", "0.1"),
            ("4000.0", "4000.0"),
            ("1E2", "100.0"),
            ("2.5e+3", "2500.0"),
            ("1e-4", "0.0001"),
            ("0.00012345", "0.00012345"),
            ("1e15", "1000000000000000.0"),
            ("9999999999999998.0", "9999999999999998.0"),
            ("-0.0", "-0.0"),
            ("0.0", "0.0"),
            ("1.10", "1.1"),
        ] {
            assert_eq!(compact_of(lexeme), python, "{lexeme}");
        }
    }

    #[test]
    fn floats_are_python_repr_scientific_below_1e_minus_4_and_from_1e16() {
        for (lexeme, python) in [
            ("1e16", "1e+16"),
            ("1e-5", "1e-05"),
            ("-1.5e-7", "-1.5e-07"),
            ("123456789012345678.0", "1.2345678901234568e+17"),
            ("5e-324", "5e-324"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("1e400", "Infinity"),
            ("-1e400", "-Infinity"),
        ] {
            assert_eq!(compact_of(lexeme), python, "{lexeme}");
        }
    }

    #[test]
    fn integers_of_any_size_stay_integers_and_minus_zero_is_zero() {
        for (lexeme, python) in [
            ("0", "0"),
            ("-0", "0"),
            ("9223372036854775808", "9223372036854775808"),
            ("18446744073709551616", "18446744073709551616"),
            ("-9223372036854775809", "-9223372036854775809"),
            ("100000000000000000000", "100000000000000000000"),
        ] {
            assert_eq!(compact_of(lexeme), python, "{lexeme}");
        }
    }

    #[test]
    fn numbers_built_in_rust_are_written_as_python_writes_the_same_value() {
        let built = json!([7u64, -3i64, 4000.0, 1e16, 0.1, 1e-5]);
        assert_eq!(
            String::from_utf8(canonical(&built)).unwrap(),
            "[7,-3,4000.0,1e+16,0.1,1e-05]"
        );
        let from_f64 = Value::Number(Number::from_f64(-0.0).unwrap());
        assert_eq!(canonical(&from_f64), b"-0.0");
    }

    #[test]
    fn indent_two_puts_each_item_on_its_line_with_comma_at_line_end() {
        assert_eq!(
            pretty_of(r#"{"b":[1,{"c":null}],"a":true}"#),
            "{\n  \"a\": true,\n  \"b\": [\n    1,\n    {\n      \"c\": null\n    }\n  ]\n}"
        );
    }

    #[test]
    fn empty_containers_are_written_closed_in_both_forms() {
        assert_eq!(compact_of(r#"{"a":[],"b":{}}"#), r#"{"a":[],"b":{}}"#);
        assert_eq!(
            pretty_of(r#"{"a":[],"b":{}}"#),
            "{\n  \"a\": [],\n  \"b\": {}\n}"
        );
        assert_eq!(pretty_of("[]"), "[]");
    }

    #[test]
    fn contract_id_hashes_the_canonical_body_without_its_own_contract_id() {
        let with_id = json!({"contract_id": "old", "b": 1, "a": "é"});
        let body = br#"{"a":"\u00e9","b":1}"#;
        assert_eq!(contract_id(&with_id), crate::store::sha256_hex(body));
        assert_eq!(
            contract_id(&json!({"b": 1, "a": "é"})),
            contract_id(&with_id)
        );
    }

    #[test]
    fn contract_id_keeps_nested_contract_id_keys() {
        let nested = json!({"inner": {"contract_id": 1}});
        let body = br#"{"inner":{"contract_id":1}}"#;
        assert_eq!(contract_id(&nested), crate::store::sha256_hex(body));
    }

    #[test]
    fn parts_write_the_bytes_of_the_value_they_make() {
        let arena = bumpalo::Bump::new();
        let line = r#"{"n":-0,"f":1e16,"t":"tab\there \u00e9","o":{"z":[1.5,null],"a":true}}"#;
        let record = crate::plan::record::Json::read(line, &arena).unwrap().value;
        let field = |key| Part::Record(record.get(key).unwrap());
        let contract = json!({"y": [2, {"b": "\u{1F600}", "a": []}]});
        let parts = Part::Fields(vec![
            ("zeta", Part::List(vec![field("n"), field("f"), field("t")])),
            ("nested", field("o")),
            ("alpha", Part::Value(&contract)),
            ("empty", Part::Fields(Vec::new())),
            (
                "flags",
                Part::List(vec![Part::Bool(false), Part::Null, Part::Unsigned(7)]),
            ),
            ("text", Part::Text("\"q\"")),
        ]);
        let value = json!({
            "zeta": [record.get("n").unwrap().to_value(), record.get("f").unwrap().to_value(), "tab\there \u{e9}"],
            "nested": record.get("o").unwrap().to_value(),
            "alpha": contract,
            "empty": {},
            "flags": [false, null, 7],
            "text": "\"q\"",
        });
        assert_eq!(
            String::from_utf8(pretty_parts(&parts)).unwrap(),
            String::from_utf8(pretty(&value)).unwrap()
        );
    }
}
