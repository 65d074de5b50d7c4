//! `dwp completions` and `dwp man`: text generated from the command line's own definition
//! (`cli::help`), written as it is; with `--json`, inside the one document every command prints.

use super::{Stamp, envelope, print_json};
use serde_json::json;
use std::io::Write;

/// `text.1` as it is, or `{"dwp": 2, "command", "ok", "exit", COMMAND: {NAME: VALUE, TEXT_KEY: TEXT}}`.
pub fn text(
    out: &mut impl Write,
    command: &str,
    (name_key, name): (&str, &str),
    (text_key, text): (&str, &str),
    json: Option<Stamp>,
) {
    if let Some(stamp) = json {
        let mut payload = json!({});
        payload[name_key] = json!(name);
        payload[text_key] = json!(text);
        print_json(out, &envelope(command, stamp, payload));
    } else {
        let _ = out.write_all(text.as_bytes());
    }
}
