//! dwp's Python-exact JSON (`dwp::plan::pyjson`) against Python itself: each document of a
//! corpus is read by dwp's strict reader and written by `canonical` and `pretty`, and Python's
//! `json.loads` then `json.dumps(sort_keys=True)`, compact and `indent=2`, must give the same
//! bytes. Record plans hash and write those bytes (contract ids, snapshot state.json), so the
//! test needs python3 and fails without it rather than skipping.

use dwp::plan::json::parse_strict;
use dwp::plan::pyjson::{canonical, pretty};
use std::io::Write as _;
use std::process::{Command, Stdio};

/// Documents covering each rule of Python's output: escapes, float repr, integers of any size,
/// key order, nesting and empty containers.
const CORPUS: &[&str] = &[
    // Strings and escapes.
    r#""plain ascii ~ with space""#,
    r#""quote \" and backslash \\ and slash \/""#,
    r#""newline\n return\r tab\t backspace\b formfeed\f""#,
    r#""\u0000\u0001\u0007\u000b\u000e\u001f""#,
    "\"del \u{7f} end\"",
    "\"Latin-1: caf\u{e9} na\u{ef}ve \u{a0}nbsp \u{ff}\"",
    "\"CJK: \u{4e2d}\u{6587}\u{65e5}\u{672c}\u{8a9e}\"",
    "\"emoji \u{1F600} astral \u{10348} last \u{10FFFF}\"",
    "\"BMP edge \u{FFFD} \u{FFFF} \u{E000}\"",
    r#""escaped astral \ud83d\ude80 and \u00e9""#,
    r#""""#,
    // Floats.
    "0.1",
    "1e16",
    "1e-5",
    "1e-4",
    "123456789012345678.0",
    "5e-324",
    "1.7976931348623157e308",
    "-0.0",
    "4000.0",
    "1E2",
    "2.5e+3",
    "1e15",
    "0.30000000000000004",
    "-2.2250738585072014e-308",
    "1.0000000000000002",
    "[3.14159, -1.5e-7, 6.02214076e23, 100.0, 0.001, 12345.678e-3]",
    // Integers.
    "0",
    "-0",
    "9223372036854775808",
    "18446744073709551616",
    "-9223372036854775809",
    "1000000000000000000000000000000",
    "[1, -1, 42, 9007199254740993]",
    // Literals, nesting, empty containers.
    "[true, false, null]",
    "[]",
    "{}",
    r#"{"a": [], "b": {}, "c": [[]], "d": [{}]}"#,
    r#"[[[[1]]], {"x": {"y": {"z": [null]}}}]"#,
    // Key order.
    r#"{"b": 1, "a": 2, "c": {"z": 0, "y": [{"q": 1, "p": 2}]}}"#,
    r#"{"B": 1, "a": 2, "_": 3, "1": 4, "": 5, " ": 6}"#,
    "{\"\u{1F600}\": 1, \"\u{FF61}\": 2, \"\u{e9}\": 3, \"z\": 4}",
    "{\"\u{10000}\": \"astral\", \"\u{FFFF}\": \"bmp end\", \"\u{D7FF}\": \"before surrogates\"}",
    "{\"ab\": 1, \"a\": 2, \"a\\u0000b\": 3, \"a\\u001f\": 4}",
    // Shaped like a record plan's contract and snapshot.
    r#"{"contract_id": "x", "version": 7, "tasks": [{"id": "T1", "weight": 0.5, "gates": ["cargo test"]}], "budget": {"hours": 4000.0, "ratio": 1e-5}}"#,
    r#"{"status": "in_progress", "tasks": [{"id": 1, "passes": false, "notes": "ça \"marche\"\n"}], "updated": "2026-12-06T23:59:00Z"}"#,
];

/// Python's bytes for every document: compact then `indent=2`, each pair in order.
fn python_bytes(documents: &[&str]) -> Vec<(Vec<u8>, Vec<u8>)> {
    const SCRIPT: &str = "import json,sys\n\
        for d in sys.stdin.buffer.read().split(b'\\0'):\n    \
            v=json.loads(d)\n    \
            sys.stdout.buffer.write(json.dumps(v,sort_keys=True,separators=(',',':')).encode('utf-8')+b'\\0')\n    \
            sys.stdout.buffer.write(json.dumps(v,sort_keys=True,indent=2).encode('utf-8')+b'\\0')\n";
    let mut child = Command::new("python3")
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("python3 is required for this test (Python's json is the reference): {e}")
        });
    let input = documents.join("\0");
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(input.as_bytes())
        .expect("write the corpus to python3");
    let output = child.wait_with_output().expect("run python3");
    assert!(output.status.success(), "python3 failed: {}", output.status);
    let parts: Vec<&[u8]> = output.stdout.split(|&b| b == 0).collect();
    assert_eq!(
        parts.len(),
        2 * documents.len() + 1,
        "one pair per document"
    );
    parts
        .chunks(2)
        .take(documents.len())
        .map(|pair| (pair[0].to_vec(), pair[1].to_vec()))
        .collect()
}

#[test]
fn canonical_and_pretty_are_the_bytes_python_json_dumps_writes() {
    assert!(CORPUS.len() >= 40, "the corpus covers every rule");
    let expected = python_bytes(CORPUS);
    let mut mismatches = Vec::new();
    for (document, (compact, indented)) in CORPUS.iter().zip(&expected) {
        let value = parse_strict(document.as_bytes())
            .unwrap_or_else(|e| panic!("dwp reads {document:?}: {e}"));
        for (form, ours, python) in [
            ("compact", canonical(&value), compact),
            ("indent=2", pretty(&value), indented),
        ] {
            if &ours != python {
                mismatches.push(format!(
                    "{document:?} {form}:\n  dwp:    {}\n  python: {}",
                    String::from_utf8_lossy(&ours),
                    String::from_utf8_lossy(python)
                ));
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
