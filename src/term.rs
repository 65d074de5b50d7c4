//! Terminal-inert text: what dwp prints can never drive the terminal it is printed on.
//!
//! Task titles, gate evidence, lock owners' commands and every other string read from a plan
//! reach stdout and stderr inside dwp's own text. A control character among them (ESC starting
//! an escape sequence that clears the screen, sets the window title or colours the text; a C1
//! control such as U+009B CSI; DEL; a bidirectional override that reorders what is shown) would
//! act on the terminal. [`Inert`] is the one sink every byte dwp prints passes through: it
//! writes each such character as `\uXXXX` (four hex digits, a JSON escape too), keeping only the
//! newline and the tab, which dwp itself lays out lines with. [`inert_line`] also escapes those
//! two, for one data field that must stay on its line. docs/DECISIONS.md, "Terminal output".
//!
//! Colour is dwp's own SGR sequences, the one thing the sink passes unescaped: [`Inert::paint`]
//! writes a word in the [`Paint`] its meaning has, when the sink was made to colour
//! ([`Inert::coloured`], decided once per stream by [`wants_colour`]).

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write};

/// Whether `c` acts on a terminal or on the order text is shown in: C0, DEL and C1 controls,
/// and the bidirectional formatting characters (marks, embeddings, overrides, isolates).
pub fn is_active(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `text` with every active character but the newline and the tab escaped as `\uXXXX`.
pub fn inert(text: &str) -> Cow<'_, str> {
    escape(text, |c| is_active(c) && c != '\n' && c != '\t')
}

/// `text` with every active character escaped, the newline and the tab too: for one field
/// inside a line, which must not start another (`\u000a`).
pub fn inert_line(text: &str) -> Cow<'_, str> {
    escape(text, is_active)
}

/// A path as one word of a shell command line ([`shell_word`]): the plan folder a hint's `dwp
/// ...` command names, so that the command runs as printed (`PLAN_a b`, `PLAN_a${IFS}b`).
pub fn path_word(path: &std::path::Path) -> String {
    shell_word(&path.display().to_string()).into_owned()
}

/// `text` as one word of a POSIX shell command line, so a `dwp ...` line dwp prints runs as
/// printed: as it is when it needs no quoting, else in double quotes when nothing in it is
/// special there, else in single quotes (a `'` written `'\''`).
pub fn shell_word(text: &str) -> Cow<'_, str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        return Cow::Borrowed(text);
    }
    if !text.contains(['"', '$', '`', '\\', '!']) {
        return Cow::Owned(format!("\"{text}\""));
    }
    Cow::Owned(format!("'{}'", text.replace('\'', "'\\''")))
}

/// `--color`: colour when the stream and the environment allow it, always, or never.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    Auto,
    Always,
    Never,
}

/// Whether a stream gets colour. A flag (`--color always|never`) outranks the environment; under
/// `auto`, `NO_COLOR` set to anything but the empty string turns it off (no-color.org), and wins
/// over `CLICOLOR_FORCE`, which set to anything but empty or `0` turns it on even when the stream
/// is no terminal (the bixense clicolors convention); else a terminal gets colour.
pub fn wants_colour(
    when: When,
    no_color: Option<&std::ffi::OsStr>,
    clicolor_force: Option<&std::ffi::OsStr>,
    terminal: bool,
) -> bool {
    let set = |value: Option<&std::ffi::OsStr>| value.is_some_and(|v| !v.is_empty());
    match when {
        When::Always => true,
        When::Never => false,
        When::Auto if set(no_color) => false,
        When::Auto if set(clicolor_force) && clicolor_force != Some("0".as_ref()) => true,
        When::Auto => terminal,
    }
}

/// What a painted word means; each meaning has one colour in every command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paint {
    /// Passed, valid, conformant, completed, written.
    Good,
    /// Failed, invalid, an error.
    Bad,
    /// Refused or blocked: bold red.
    Alarm,
    /// Unverified, an advisory, work in progress, a warning.
    Unsure,
    /// Skipped, invalidated, no change.
    Muted,
    /// A title or a heading word.
    Strong,
    /// A `hint:` prefix.
    Hint,
}

impl Paint {
    /// The SGR code of the colour.
    fn code(self) -> &'static str {
        match self {
            Paint::Good => "32",
            Paint::Bad => "31",
            Paint::Alarm => "31;1",
            Paint::Unsure => "33",
            Paint::Muted => "90",
            Paint::Strong => "1",
            Paint::Hint => "36",
        }
    }
}

/// An argv as one readable line, each word as a shell reads it back: a plain word as it is, a
/// word with spaces or quotes single-quoted, a word with a control character (a newline of a
/// multi-line `sh -c` script, a tab) in the `$'...'` quoting of bash, zsh and POSIX.1-2024, so
/// that the line holds no control character and reads back through a log header unchanged.
pub fn display_argv(argv: &[String]) -> String {
    argv.iter()
        .map(|word| display_word(word))
        .collect::<Vec<_>>()
        .join(" ")
}

fn display_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        word.to_owned()
    } else if word.chars().any(char::is_control) {
        let mut quoted = String::from("$'");
        for c in word.chars() {
            match c {
                '\n' => quoted.push_str("\\n"),
                '\t' => quoted.push_str("\\t"),
                '\r' => quoted.push_str("\\r"),
                '\\' => quoted.push_str("\\\\"),
                '\'' => quoted.push_str("\\'"),
                c if c.is_ascii_control() => quoted.push_str(&format!("\\x{:02x}", c as u32)),
                c if c.is_control() => quoted.push_str(&format!("\\u{:04x}", c as u32)),
                c => quoted.push(c),
            }
        }
        quoted.push('\'');
        quoted
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn escape(text: &str, active: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&active) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if active(c) {
            // Every active character is in the Basic Multilingual Plane: four digits suffice.
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A writer that makes everything written through it inert ([`inert`]), whatever writes it.
///
/// `1 box`, `2 boxes`: a count with its noun in the number it takes.
pub fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Bytes arrive in pieces; a UTF-8 sequence split across two writes waits for its end, and a
/// byte that is not UTF-8 at all is written as `\xNN`. JSON passes through unchanged in meaning:
/// serde_json already escapes C0 controls, and a DEL, C1 or bidi character can stand only inside
/// a string there, where `\uXXXX` is the same character to any JSON reader.
pub struct Inert<W: Write> {
    inner: W,
    /// The start of a UTF-8 sequence whose end has not been written yet.
    pending: Vec<u8>,
    written: bool,
    /// Whether [`Inert::paint`] colours.
    colour: bool,
}

impl<W: Write> Inert<W> {
    pub fn new(inner: W) -> Inert<W> {
        Inert {
            inner,
            pending: Vec::new(),
            written: false,
            colour: false,
        }
    }

    /// This sink, colouring what [`Inert::paint`] writes when `colour`.
    pub fn coloured(mut self, colour: bool) -> Inert<W> {
        self.colour = colour;
        self
    }

    /// Write `text` (made inert) in the colour of `paint` when this sink colours, else as it is.
    pub fn paint(&mut self, text: &str, paint: Paint) -> io::Result<()> {
        if !self.colour {
            return self.write_all(text.as_bytes());
        }
        self.style(paint.code())?;
        self.write_all(text.as_bytes())?;
        self.style("0")
    }

    /// Whether anything has been written through this sink.
    pub fn has_written(&self) -> bool {
        self.written
    }

    /// Write dwp's own SGR colour sequence `ESC [ code m`, the one thing that passes unescaped.
    pub fn style(&mut self, code: &str) -> io::Result<()> {
        debug_assert!(code.bytes().all(|b| b.is_ascii_digit() || b == b';'));
        self.drain_pending()?;
        self.written = true;
        write!(self.inner, "\x1b[{code}m")
    }

    /// Write what `pending` holds, inert; an unfinished UTF-8 sequence at its end waits for the
    /// next write unless `at_end`.
    fn drain(&mut self, at_end: bool) -> io::Result<()> {
        let pending = std::mem::take(&mut self.pending);
        let mut rest = &pending[..];
        while !rest.is_empty() {
            let error = match std::str::from_utf8(rest) {
                Ok(text) => {
                    self.inner.write_all(inert(text).as_bytes())?;
                    break;
                }
                Err(error) => error,
            };
            let (valid, after) = rest.split_at(error.valid_up_to());
            let valid = std::str::from_utf8(valid).unwrap_or_default();
            self.inner.write_all(inert(valid).as_bytes())?;
            let bad = match error.error_len() {
                Some(length) => length,
                None if at_end => after.len(),
                None => {
                    self.pending = after.to_vec();
                    break;
                }
            };
            for byte in &after[..bad] {
                write!(self.inner, "\\x{byte:02x}")?;
            }
            rest = &after[bad..];
        }
        Ok(())
    }

    fn drain_pending(&mut self) -> io::Result<()> {
        self.drain(true)
    }
}

impl<W: Write> Write for Inert<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !buf.is_empty() {
            self.written = true;
        }
        self.pending.extend_from_slice(buf);
        self.drain(false)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.drain_pending()?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for Inert<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_words_with_spaces_are_quoted() {
        let argv = ["grep", "-q", "a b", "it's"].map(String::from);
        assert_eq!(display_argv(&argv), r#"grep -q 'a b' 'it'\''s'"#);
    }

    #[test]
    fn argv_words_with_control_characters_are_one_line_and_read_back_by_the_shell() {
        let script = "printf '%s\\n' a\\\\b\n\tprintf 'c\x1bd\u{85}'\r";
        let argv = ["sh", "-c", script].map(String::from);
        let line = display_argv(&argv);
        assert!(!line.chars().any(char::is_control), "{line}");
        assert_eq!(
            line,
            r"sh -c $'printf \'%s\\n\' a\\\\b\n\tprintf \'c\x1bd\u0085\'\r'"
        );
        // bash (where there is one) reads the word back to the argument it was; ASCII, so the
        // locale does not matter.
        let ascii = script.replace('\u{85}', "");
        let _one = crate::one_child_at_a_time();
        let echoed = std::process::Command::new("bash")
            .env_clear()
            .arg("-c")
            .arg(format!("printf '%s' {}", display_word(&ascii)))
            .output();
        if let Ok(echoed) = echoed {
            assert_eq!(String::from_utf8(echoed.stdout).unwrap(), ascii);
        }
    }

    #[test]
    fn shell_words_run_as_printed() {
        assert_eq!(shell_word("PLAN_x/state.json"), "PLAN_x/state.json");
        assert_eq!(shell_word("my plans/PLAN_x"), "\"my plans/PLAN_x\"");
        assert_eq!(
            shell_word("cargo test|0|EVIDENCE"),
            "\"cargo test|0|EVIDENCE\""
        );
        assert_eq!(shell_word("it's $HOME"), "'it'\\''s $HOME'");
        assert_eq!(shell_word(""), "\"\"");
    }

    fn through_sink(pieces: &[&[u8]]) -> String {
        let mut bytes = Vec::new();
        {
            let mut sink = Inert::new(&mut bytes);
            for piece in pieces {
                sink.write_all(piece).unwrap();
            }
            sink.flush().unwrap();
        }
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn controls_and_bidi_are_escaped_newline_and_tab_kept() {
        let text = "a\x1b[2J\x1b]0;pwned\x07\u{9b}31m\u{202e}x\u{7f}\r\n\tb\u{200f}\u{2066}é";
        assert_eq!(
            inert(text),
            "a\\u001b[2J\\u001b]0;pwned\\u0007\\u009b31m\\u202ex\\u007f\\u000d\n\tb\\u200f\\u2066é"
        );
        assert_eq!(inert_line("a\nb\tc"), "a\\u000ab\\u0009c");
        assert!(matches!(inert("plain text — ✓"), Cow::Borrowed(_)));
    }

    #[test]
    fn the_sink_escapes_a_sequence_split_across_writes() {
        // U+009B is C2 9B in UTF-8; U+202E is E2 80 AE.
        let out = through_sink(&[b"x\xc2", b"\x9by\xe2\x80", b"\xae\n"]);
        assert_eq!(out, "x\\u009by\\u202e\n");
    }

    #[test]
    fn bytes_that_are_not_utf8_are_written_as_hex() {
        assert_eq!(through_sink(&[b"a\x9bb\xff"]), "a\\x9bb\\xff");
        // An unfinished sequence at the very end is not kept back forever.
        assert_eq!(through_sink(&[b"z\xe2\x80"]), "z\\xe2\\x80");
    }

    #[test]
    fn json_through_the_sink_parses_to_the_same_value() {
        let original = "t\x1b[2J\u{9b}\u{7f}\u{202e}\u{2069}\\\n\"";
        let document = serde_json::json!({ "title": original });
        let out = through_sink(&[format!("{document:#}\n").as_bytes()]);
        assert!(!out.chars().any(|c| is_active(c) && c != '\n'), "{out}");
        let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(parsed["title"], original);
    }

    #[test]
    fn a_flag_outranks_the_environment_and_no_color_wins_over_clicolor_force() {
        let on = Some(std::ffi::OsStr::new("1"));
        let empty = Some(std::ffi::OsStr::new(""));
        let zero = Some(std::ffi::OsStr::new("0"));
        assert!(wants_colour(When::Always, on, None, false));
        assert!(!wants_colour(When::Never, None, on, true));
        assert!(!wants_colour(When::Auto, on, on, true), "NO_COLOR wins");
        assert!(
            wants_colour(When::Auto, empty, on, false),
            "empty NO_COLOR is unset"
        );
        assert!(
            wants_colour(When::Auto, None, on, false),
            "forced off a terminal"
        );
        assert!(!wants_colour(When::Auto, None, zero, false));
        assert!(!wants_colour(When::Auto, None, empty, false));
        assert!(wants_colour(When::Auto, None, None, true));
        assert!(!wants_colour(When::Auto, None, None, false));
    }

    #[test]
    fn paint_colours_only_a_colouring_sink() {
        let mut plain = Vec::new();
        Inert::new(&mut plain).paint("ok", Paint::Good).unwrap();
        assert_eq!(plain, b"ok");
        let mut coloured = Vec::new();
        Inert::new(&mut coloured)
            .coloured(true)
            .paint("ok\x1b[31m", Paint::Good)
            .unwrap();
        assert_eq!(coloured, b"\x1b[32mok\\u001b[31m\x1b[0m");
    }

    #[test]
    fn style_passes_dwp_own_colour_only() {
        let mut bytes = Vec::new();
        {
            let mut sink = Inert::new(&mut bytes);
            sink.style("31").unwrap();
            sink.write_all(b"\x1b[32m").unwrap();
            sink.style("0").unwrap();
        }
        assert_eq!(bytes, b"\x1b[31m\\u001b[32m\x1b[0m");
    }
}
