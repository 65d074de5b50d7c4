//! Task titles as plans write them, reduced to what they mean (docs/plan-markdown.md, "Titles").
//!
//! An index line carries more than the title: a separator before its link (`Title — [file]`), a
//! status emoji (`Title ✅`), an estimate (`Title (2h)`), an anchor note
//! (`Title — (immutable anchor: #task-3)`). [`normalize_title`] removes exactly those, at either
//! end, plus emphasis markers and runs of whitespace; every other character (a descriptive
//! parenthetical, inline code, a colon or dash inside the title) is the title. The same function
//! is applied to both sides before titles are compared, so dwp never reports as drift a
//! difference that its own rule removes, and titles written into state.json are normalised.

/// The title with decorations removed; empty when nothing is left.
pub fn normalize_title(raw: &str) -> String {
    let spaced = single_spaced(&super::sections::without_emphasis(raw));
    // Each round strips what the last one uncovered, on slices of `spaced`: one copy at the end.
    let mut title = spaced.as_str();
    loop {
        let before = title.len();
        title = strip_trailing(strip_leading(title));
        if title.len() == before {
            return title.to_owned();
        }
    }
}

/// The words of `text` joined by single spaces.
fn single_spaced(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Status emoji, check marks, arrows and the like: never part of a title at its ends.
fn is_decoration(c: char) -> bool {
    matches!(c as u32,
        0x2190..=0x2BFF      // arrows, technical, dingbats, miscellaneous symbols
        | 0x1F000..=0x1FAFF  // emoji
        | 0xFE0E | 0xFE0F | 0x200D | 0x20E3)
}

/// What separates a title from a link or a note.
fn is_separator(c: char) -> bool {
    matches!(c, ':' | '—' | '–' | '-' | '|' | '·' | '>' | '=')
}

fn strip_leading(title: &str) -> &str {
    title.trim_start_matches(|c: char| c.is_whitespace() || is_decoration(c))
}

fn strip_trailing(title: &str) -> &str {
    let trimmed =
        title.trim_end_matches(|c: char| c.is_whitespace() || is_decoration(c) || is_separator(c));
    match trailing_group(trimmed) {
        Some((rest, inner)) if is_note(inner) => rest.trim_end(),
        _ => trimmed,
    }
}

/// `rest (inner)` → `(rest, inner)` when the text ends with one balanced parenthetical.
fn trailing_group(text: &str) -> Option<(&str, &str)> {
    let body = text.strip_suffix(')')?;
    let mut depth = 1usize;
    for (at, c) in body.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    return Some((&body[..at], &body[at + 1..]));
                }
            }
            _ => {}
        }
    }
    None
}

/// A parenthetical that annotates the title rather than being part of it: empty (a link that
/// was removed), an anchor note naming `#task-N`, or an estimate (`2h`, `~30 min`, `est. 1-2 days`).
fn is_note(inner: &str) -> bool {
    let inner = inner.trim();
    inner.is_empty() || inner.contains("#task-") || is_estimate(inner)
}

fn is_estimate(text: &str) -> bool {
    let lower = text.to_lowercase();
    let mut rest = lower.as_str();
    for prefix in [
        "estimate:",
        "estimated:",
        "estimate",
        "est.",
        "est:",
        "est",
        "~",
        "≈",
    ] {
        if let Some(r) = rest.strip_prefix(prefix) {
            rest = r.trim_start();
        }
    }
    let rest = rest.trim_start_matches(['~', '≈']).trim_start();
    let number_end = rest
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '–' | ' ')))
        .unwrap_or(rest.len());
    let (number, unit) = rest.split_at(number_end);
    const UNITS: [&str; 16] = [
        "m", "min", "mins", "minute", "minutes", "h", "hr", "hrs", "hour", "hours", "d", "day",
        "days", "pt", "pts", "points",
    ];
    number.bytes().any(|b| b.is_ascii_digit()) && UNITS.contains(&unit.trim())
}

#[cfg(test)]
mod tests {
    use super::normalize_title;

    #[test]
    fn decorations_at_either_end_are_removed() {
        for (raw, want) in [
            ("Create endpoint — ", "Create endpoint"),
            ("Create endpoint ✅", "Create endpoint"),
            ("✅ Create endpoint", "Create endpoint"),
            ("Create endpoint (2h)", "Create endpoint"),
            ("Create endpoint (~30 min) ⏳", "Create endpoint"),
            ("Create endpoint (est. 1-2 days)", "Create endpoint"),
            (
                "Create endpoint — (immutable anchor: #task-1)",
                "Create endpoint",
            ),
            ("Create endpoint ()", "Create endpoint"),
            ("**Create** endpoint", "Create endpoint"),
            ("Create   endpoint\t", "Create endpoint"),
            ("Create endpoint →", "Create endpoint"),
        ] {
            assert_eq!(normalize_title(raw), want, "{raw:?}");
        }
    }

    #[test]
    fn the_title_itself_is_kept() {
        for title in [
            "Write docs (EN + ES)",
            "Certificate page chrome: print, download",
            "CLI install — warn/block unsafe packages",
            "Add `--json` flag",
            "Fix #297 (regression)",
            "docs/TESTING_GUIDE.md (verified testing map)",
            "Final review",
            "数据导出",
            "Phase 2 (1h of downtime allowed)",
        ] {
            assert_eq!(normalize_title(title), title);
        }
    }

    #[test]
    fn nothing_but_decoration_is_no_title() {
        assert_eq!(normalize_title(" — ✅ "), "");
        assert_eq!(normalize_title(""), "");
    }
}
