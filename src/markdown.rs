//! The plan's markdown, read with pulldown-cmark. The markdown is the human source of truth;
//! this module is the one reader of it that every command shares.
//!
//! So far: the Plan Variables table of README.md (whose Approval row gives the approval when
//! `state.json` records none). The full model (task index, task records, amendments) follows in
//! issue #4.

use crate::model::Approval;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// The value of a row of the README's Plan Variables table (`| Approval | approved |`),
/// matched case-insensitively on the first cell, bold markers ignored.
pub fn plan_variable(readme: &str, name: &str) -> Option<String> {
    let mut cells: Vec<String> = Vec::new();
    let mut in_cell = false;
    for event in Parser::new_ext(readme, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::TableRow | Tag::TableHead) => cells.clear(),
            Event::Start(Tag::TableCell) => {
                in_cell = true;
                cells.push(String::new());
            }
            Event::End(TagEnd::TableCell) => in_cell = false,
            Event::Text(text) | Event::Code(text) if in_cell => {
                if let Some(cell) = cells.last_mut() {
                    cell.push_str(&text);
                }
            }
            Event::End(TagEnd::TableRow | TagEnd::TableHead) => {
                if let [key, value, ..] = cells.as_slice()
                    && key.trim().eq_ignore_ascii_case(name)
                {
                    return Some(value.trim().to_owned());
                }
            }
            _ => {}
        }
    }
    None
}

/// The approval the README's Approval row records, if it records a known one.
pub fn readme_approval(readme: &str) -> Option<Approval> {
    let value = plan_variable(readme, "Approval")?;
    let word = value
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ',' | ';' | '—'))
        .find(|w| !w.is_empty())?
        .to_ascii_lowercase()
        .replace('-', "_");
    word.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const README: &str = "# Plan\n\n## Plan Variables\n\n| Variable | Value |\n|---|---|\n\
        | Plan Format | full |\n| **Approval** | Pre-approved (user, 2026-06-09) |\n";

    #[test]
    fn the_approval_row_is_read_from_the_plan_variables_table() {
        assert_eq!(
            plan_variable(README, "plan format").as_deref(),
            Some("full")
        );
        assert_eq!(readme_approval(README), Some(Approval::PreApproved));
        assert_eq!(readme_approval("# Plan\n\nApproval: approved\n"), None);
        let pending = README.replace("Pre-approved (user, 2026-06-09)", "pending");
        assert_eq!(readme_approval(&pending), Some(Approval::Pending));
        let unknown = README.replace("Pre-approved (user, 2026-06-09)", "maybe");
        assert_eq!(readme_approval(&unknown), None);
    }
}
