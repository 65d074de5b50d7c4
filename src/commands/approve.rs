//! `dwp approve`: the user's approval of a plan, recorded where both readers look for it.
//! `state.json`'s `approval` becomes `approved` (`pre_approved` with
//! `--pre-approved`), the README's Approval row (a Plan Variables row, or an `Approval:` line)
//! says the same, and PROGRESS.md gets one line naming who approved, when and which approval.
//!
//! Under the plan's lock, with compare-and-swap on `--expected-sha256`, like every writer: a
//! plan being published, not materialized, or whose state does not validate is refused, and so
//! is a v1 state (it has no `approval` field). The three files change in one intent record, so
//! a killed writer's approval is completed by the next writer. Every check runs before the
//! first write, so a refusal changes no byte.
//!
//! The README edit keeps the row's shape: in a table row only the value cell changes (the name
//! cell, its emphasis, further cells and the pipes stay); in a line only what follows the label.
//! The value is written the way plans write it: `approved (NAME, YYYY-MM-DD)`, capitalised when
//! the old value was. A README without an Approval row gets one at the end of its Plan Variables
//! table; without that table, or with a row whose value is no approval dwp can read, it is
//! refused: dwp never rewrites what it does not understand. The edited README is read back, and
//! must give the new approval on the same line and the same task index.
//!
//! The same approval again is no change: nothing is written, PROGRESS.md included.

use crate::clock;
use crate::error::{Error, Result};
use crate::plan::markdown;
use crate::plan::model::{Approval, Generation, State};
use crate::plan::{Loaded, LoadedPlan};
use crate::steps::commit::Change;
use crate::steps::updater;
use crate::store;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The longest `--by` name (the schema's limit for `updated_by.agent`).
const MAX_NAME_CHARS: usize = 100;

/// What the caller asks for; every field maps to one flag of `dwp approve`.
#[derive(Debug, Clone, Default)]
pub struct ApproveRequest {
    /// Who approves (`--by NAME`).
    pub by: String,
    /// `--pre-approved`: the plan was approved before it was written (`pre_approved`).
    pub pre_approved: bool,
    pub expected_sha256: Option<String>,
    pub wait: Duration,
    pub dry_run: bool,
    /// Who writes (`--agent`, `--model`): recorded in `updated_by`.
    pub agent: Option<String>,
    pub model: Option<String>,
}

/// What happened to the README's Approval row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadmeEdit {
    /// The row (or line) already recorded this approval.
    Unchanged,
    /// The row's value was rewritten.
    Updated,
    /// A row was added to the Plan Variables table.
    Inserted,
}

/// What an approval did (or, with `--dry-run`, would do).
#[derive(Debug, Clone, Serialize)]
pub struct ApproveOutcome {
    pub plan: String,
    pub approval: Approval,
    /// state.json's `approval` before (`None`: the field was absent).
    pub previous: Option<Approval>,
    pub by: String,
    /// The time of the approval (the clock).
    pub at: String,
    /// README.md, and the line of its Approval row once written.
    pub readme: String,
    pub readme_line: usize,
    pub readme_edit: ReadmeEdit,
    pub changed: bool,
    pub dry_run: bool,
    pub old_sha256: String,
    pub new_sha256: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

impl ApproveRequest {
    fn wanted(&self) -> Approval {
        if self.pre_approved {
            Approval::PreApproved
        } else {
            Approval::Approved
        }
    }
}

/// Approve the plan at `target`.
pub fn approve(target: &Path, request: &ApproveRequest) -> Result<ApproveOutcome> {
    check_input(request)?;
    crate::steps::writer::under_lock(target, request.wait, |plan| {
        approve_under_lock(plan, request)
    })
}

fn approve_under_lock(plan: &LoadedPlan, request: &ApproveRequest) -> Result<ApproveOutcome> {
    let plan_dir = plan.dir();
    let state_path = &plan.paths.state;
    crate::plan::refuse_while_finalizing(plan_dir)?;
    let loaded = crate::steps::writer::load_state_for_write(plan, true)?;
    crate::steps::writer::check_snapshot(loaded, request.expected_sha256.as_ref())?;
    refuse_v1(loaded, plan_dir)?;
    let readme_path = plan_dir.join("README.md");
    let Some(readme_text) = updater::read_readme(plan)? else {
        return Err(Error::rejected(
            readme_path.display().to_string(),
            "the plan has no README.md: the Approval row has nowhere to go",
        )
        .with_hint("restore the plan's README.md, then run the same `dwp approve` again"));
    };
    updater::require_materialized(loaded, &readme_path, Some(readme_text)).map_err(|e| {
        match e.hint() {
            Some(_) => e,
            None => e.with_hint(format!(
                "finish the materialization (or the promotion) first; `dwp verify {}` lists what it lacks",
                crate::term::path_word(plan_dir)
            )),
        }
    })?;

    refuse_unwritten(plan, readme_text)?;

    let wanted = request.wanted();
    let now = clock::now_rfc3339();
    let date = now.get(..10).unwrap_or(&now);
    let readme_place = readme_path.display().to_string();
    let edit = readme_with_approval(readme_text, &readme_place, wanted, &request.by, date)?;
    let state = &loaded.doc;
    let state_changes = state.approval != Some(wanted);
    let changed = state_changes || edit.kind != ReadmeEdit::Unchanged;

    if changed && crate::steps::publication::is_published(plan, state) {
        return Err(Error::rejected(
            plan_dir.join(crate::rules::receipt::RECEIPT).display().to_string(),
            "the plan is published: an approval is recorded before the work, and this one would change files its receipt covers",
        )
        .with_hint(format!(
            "a published plan keeps the approval it was published with; `dwp status {}` shows it",
            crate::term::path_word(plan_dir)
        )));
    }
    let bytes = if state_changes {
        crate::steps::writer::refuse_clock_behind(state, &loaded.file, &now)?;
        let mut next = state.clone();
        next.approval = Some(wanted);
        next.updated_at = now.clone();
        next.sign(request.agent.as_ref(), request.model.as_ref());
        let bytes = store::json_file_bytes(&next);
        crate::steps::writer::check_before_write(state_path, &bytes, "the approved state")?;
        bytes
    } else {
        loaded.bytes.clone()
    };
    let diff = (request.dry_run && changed).then(|| {
        let mut diff = crate::diff::unified_diff(&loaded.bytes, &bytes, &loaded.file);
        diff.push_str(&crate::diff::unified_diff(
            readme_text.as_bytes(),
            edit.text.as_bytes(),
            &readme_place,
        ));
        diff
    });
    let new_sha256 = if state_changes {
        store::sha256_hex(&bytes)
    } else {
        loaded.sha256.clone()
    };
    if changed && !request.dry_run {
        // README, PROGRESS.md and state.json change together: one change, in one intent record.
        let mut change = Change::new(plan_dir, "dwp approve");
        if edit.kind != ReadmeEdit::Unchanged {
            change.write(
                &readme_path,
                Some(readme_text.as_bytes()),
                edit.text.clone().into_bytes(),
            );
        }
        change.append(
            &plan_dir.join("PROGRESS.md"),
            &progress_line(&now, state, wanted, request, &edit),
        );
        if state_changes {
            change.write_known(state_path, Some(loaded.sha256.clone()), bytes);
        }
        crate::steps::commit::commit(change)?;
    }
    Ok(ApproveOutcome {
        plan: state.plan.clone(),
        approval: wanted,
        previous: state.approval,
        by: request.by.trim().to_owned(),
        at: now.clone(),
        readme: readme_place,
        readme_line: edit.line,
        readme_edit: edit.kind,
        changed,
        dry_run: request.dry_run,
        old_sha256: loaded.sha256.clone(),
        new_sha256,
        diff,
    })
}

// ---------------------------------------------------------------------------------------------
// Checks, all before the first write.

/// `--by`: a name, one line, not overlong, and no `|` (it is written into a table cell).
fn check_input(request: &ApproveRequest) -> Result<()> {
    crate::steps::writer::check_signature(request.agent.as_ref(), request.model.as_ref())?;
    let by = &request.by;
    if by.trim().is_empty() {
        return Err(
            Error::rejected("--by", "is empty: an approval names who gave it")
                .with_hint("pass --by NAME, the person who approved the plan"),
        );
    }
    if by.contains(['\n', '\r']) {
        return Err(Error::rejected(
            "--by",
            "spans several lines: the name goes on the README's Approval row and one PROGRESS.md line",
        )
        .with_hint("pass the name on one line"));
    }
    if by.contains('|') {
        return Err(Error::rejected(
            "--by",
            format!("`{by}` holds a `|`, which would split the README's Approval table row"),
        )
        .with_hint("pass the name without `|`"));
    }
    Error::check_length("--by", by, MAX_NAME_CHARS)
        .map_err(|e| e.with_hint("pass a shorter name: initials, or a handle"))
}

/// What a user approves must be written: a placeholder `dwp new` left for the author
/// ("To be written before approval: ...", "to be listed before approval: ...") still in the
/// README or a task record refuses the approval, naming each place.
fn refuse_unwritten(plan: &LoadedPlan, readme_text: &str) -> Result<()> {
    let readme_path = plan.dir().join("README.md");
    let mut places = placeholder_lines(&readme_path, readme_text);
    if let Ok(md) = plan.markdown() {
        let files: std::collections::BTreeSet<_> = md
            .records
            .values()
            .map(|(path, _)| path)
            .filter(|path| **path != readme_path)
            .collect();
        for path in files {
            if let Ok(text) = plan.read_text(path) {
                places.extend(placeholder_lines(path, &text));
            }
        }
    }
    if places.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = places.iter().take(10).map(String::as_str).collect();
    let more = match places.len() > shown.len() {
        true => format!(" and {} more", places.len() - shown.len()),
        false => String::new(),
    };
    Err(Error::rejected(
        plan.dir().display().to_string(),
        format!(
            "the plan still holds {} placeholder{} written for its author, not yet the plan: {}{more}",
            places.len(),
            if places.len() == 1 { "" } else { "s" },
            shown.join(", ")
        ),
    )
    .with_hint(format!(
        "write each in place of its placeholder, then let the user read the plan; `dwp approve {} --by NAME` once they approve it",
        crate::term::path_word(plan.dir())
    )))
}

/// `FILE:LINE` of each line of `text` holding a `dwp new` placeholder.
fn placeholder_lines(path: &Path, text: &str) -> Vec<String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| crate::plan::markdown::is_placeholder(line))
        .map(|(at, _)| format!("{}:{}", path.display(), at + 1))
        .collect()
}

/// A v1 state has no `approval` field: there is nothing to record the approval in.
fn refuse_v1(loaded: &Loaded<State>, plan_dir: &Path) -> Result<()> {
    if loaded.generation == Generation::V1 {
        return Err(Error::rejected(
            format!("{}: $", loaded.file),
            "a v1 state has no `approval` field: the approval cannot be recorded in it",
        )
        .with_hint(format!(
            "convert the plan with `dwp migrate {} --to v5`, then approve it",
            crate::term::path_word(plan_dir)
        )));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The README's Approval row.

/// The README with its Approval row recording `wanted`, where the row is, and what was done.
struct RowEdit {
    text: String,
    line: usize,
    kind: ReadmeEdit,
}

/// How the README spells an approval: `approved`, `pre-approved` (as plans write it; the
/// reader takes `-` and `_` alike).
fn spelled(approval: Approval, capital: bool) -> String {
    let word = approval.as_str().replace('_', "-");
    if !capital {
        return word;
    }
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

fn readme_with_approval(
    text: &str,
    place: &str,
    wanted: Approval,
    by: &str,
    date: &str,
) -> Result<RowEdit> {
    let parsed = markdown::parse_readme(text);
    let by = by.trim();
    let (edited, line, kind) = match parsed.variable("Approval") {
        Some(row) => {
            match parsed.approval() {
                Some(recorded) if recorded == wanted => {
                    return Ok(RowEdit {
                        text: text.to_owned(),
                        line: row.line,
                        kind: ReadmeEdit::Unchanged,
                    });
                }
                Some(_) => {}
                None => {
                    return Err(Error::rejected(
                        format!("{place}:{}", row.line),
                        format!(
                            "the README's Approval row says `{}`, which is not pending, approved or pre-approved: dwp does not rewrite what it cannot read",
                            row.value
                        ),
                    )
                    .with_hint("write `pending` (or the approval given) as the row's value, then run the same `dwp approve` again"));
                }
            }
            let capital = row
                .value
                .trim_start_matches(|c: char| !c.is_alphanumeric())
                .starts_with(|c: char| c.is_uppercase());
            let value = format!("{} ({by}, {date})", spelled(wanted, capital));
            let mut understood = true;
            let edited = markdown::edit_line(text, row.line, |line| {
                set_value(line, &value).unwrap_or_else(|| {
                    understood = false;
                    line.to_owned()
                })
            });
            if !understood {
                return Err(not_understood(place, row.line));
            }
            (edited, row.line, ReadmeEdit::Updated)
        }
        None => {
            let Some(last) = markdown::plan_variables_last_row(text) else {
                return Err(Error::rejected(
                    place,
                    "the README has no Approval row and no Plan Variables table to add one to: dwp does not guess where it goes",
                )
                .with_hint(
                    "add `| Approval | pending |` to the README's Plan Variables table (or an `Approval: pending` line), then run the same `dwp approve` again",
                ));
            };
            let value = format!("{} ({by}, {date})", spelled(wanted, false));
            let edited = insert_row(text, last, &value);
            (edited, last + 1, ReadmeEdit::Inserted)
        }
    };
    // Read back: the new approval on that line, and the same task index.
    let check = markdown::parse_readme(&edited);
    let same_index = |a: &markdown::Readme, b: &markdown::Readme| {
        a.index.len() == b.index.len()
            && a.index
                .iter()
                .zip(&b.index)
                .all(|(x, y)| (x.id, &x.marker, &x.title) == (y.id, &y.marker, &y.title))
    };
    if check.approval() != Some(wanted)
        || check.variable("Approval").map(|v| v.line) != Some(line)
        || !same_index(&parsed, &check)
    {
        return Err(not_understood(place, line));
    }
    Ok(RowEdit {
        text: edited,
        line,
        kind,
    })
}

fn not_understood(place: &str, line: usize) -> Error {
    Error::rejected(
        format!("{place}:{line}"),
        "the README's Approval row is in a shape dwp cannot rewrite and read back: nothing was written",
    )
    .with_hint("write the row as `| Approval | pending |` in the Plan Variables table (or `Approval: pending` on a line of its own), then run the same `dwp approve` again")
}

/// The line with its Approval value replaced by `value`: a table row's value cell (the cell
/// after the one naming Approval; its padding, the other cells and the pipes kept), or what
/// follows the label of an `Approval:` line (its emphasis kept). `None`: neither shape.
fn set_value(line: &str, value: &str) -> Option<String> {
    table_cell_value(line, value).or_else(|| labelled_value(line, value))
}

fn table_cell_value(line: &str, value: &str) -> Option<String> {
    let bytes = line.as_bytes();
    let pipes: Vec<usize> = (0..bytes.len())
        .filter(|&i| bytes[i] == b'|' && (i == 0 || bytes[i - 1] != b'\\'))
        .collect();
    let leading = line.trim_start().starts_with('|');
    let (name, cell_start) = if leading {
        (line.get(pipes.first()? + 1..*pipes.get(1)?)?, pipes[1] + 1)
    } else {
        (line.get(..*pipes.first()?)?, pipes[0] + 1)
    };
    let name = name.trim().trim_matches(['*', '`', '_']).trim();
    if !name.eq_ignore_ascii_case("Approval") {
        return None;
    }
    let cell_end = pipes
        .iter()
        .copied()
        .find(|&p| p >= cell_start)
        .unwrap_or(line.len());
    let cell = &line[cell_start..cell_end];
    let content = cell.trim();
    if content.is_empty() {
        return None;
    }
    let before = &cell[..cell.len() - cell.trim_start().len()];
    let after = &cell[cell.trim_end().len()..];
    Some(format!(
        "{}{}{value}{}{}",
        &line[..cell_start],
        if before.is_empty() { " " } else { before },
        if after.is_empty() && cell_end < line.len() {
            " "
        } else {
            after
        },
        &line[cell_end..]
    ))
}

fn labelled_value(line: &str, value: &str) -> Option<String> {
    let lower = line.to_ascii_lowercase();
    let at = lower.find("approval")?;
    let rest = &line[at + "approval".len()..];
    let emphasis = |s: &str| s.len() - s.trim_start_matches(['*', '_']).len();
    let mut offset = at + "approval".len() + emphasis(rest);
    let colon = line[offset..].strip_prefix(':')?;
    offset = line.len() - colon.len();
    offset += emphasis(&line[offset..]);
    offset += line[offset..].len() - line[offset..].trim_start().len();
    let tail = line[offset..].trim_end();
    let tail_kept = tail.len() - tail.trim_end_matches(['|', ' ', '\t']).len();
    let end = offset + tail.len() - tail_kept;
    if end <= offset {
        return None;
    }
    Some(format!("{}{value}{}", &line[..offset], &line[end..]))
}

/// `text` with the row `| Approval | value |` after its 1-based line `last` (the last row of
/// the Plan Variables table), the name bold when the table's rows are written that way.
fn insert_row(text: &str, last: usize, value: &str) -> String {
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut out = String::with_capacity(text.len() + 64);
    for (index, line) in text.split_inclusive('\n').enumerate() {
        out.push_str(line);
        if index + 1 == last {
            let body = line.trim_end_matches(['\n', '\r']);
            if body.len() == line.len() {
                out.push_str(newline); // the table ended the file without a line ending
            }
            let bold = body
                .trim_start()
                .trim_start_matches('|')
                .trim_start()
                .starts_with("**");
            let name = if bold { "**Approval**" } else { "Approval" };
            let indent = &body[..body.len() - body.trim_start().len()];
            out.push_str(&format!("{indent}| {name} | {value} |"));
            if body.len() != line.len() {
                out.push_str(newline);
            }
        }
    }
    out
}

/// The PROGRESS.md line: when, which approval, by whom, and what changed.
fn progress_line(
    now: &str,
    state: &State,
    wanted: Approval,
    request: &ApproveRequest,
    edit: &RowEdit,
) -> String {
    let previous = state
        .approval
        .map_or("absent".to_owned(), |a| a.to_string());
    let readme = match edit.kind {
        ReadmeEdit::Unchanged => format!("README.md line {} already said so", edit.line),
        ReadmeEdit::Updated => format!("README.md Approval row (line {}) updated", edit.line),
        ReadmeEdit::Inserted => format!("README.md Approval row added at line {}", edit.line),
    };
    format!(
        "- {now}: {} {} by {} (`dwp approve`): state.json approval {previous} → {wanted}; {readme}",
        state.plan,
        spelled(wanted, false),
        request.by.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_row_keeps_its_shape_and_further_cells() {
        assert_eq!(
            set_value("| **Approval** | Pending |", "Approved (ann, 2026-06-09)").as_deref(),
            Some("| **Approval** | Approved (ann, 2026-06-09) |")
        );
        assert_eq!(
            set_value(
                "|Approval|pending|set by the user|",
                "approved (ann, 2026-06-09)"
            )
            .as_deref(),
            Some("|Approval| approved (ann, 2026-06-09) |set by the user|")
        );
        assert_eq!(
            set_value("Approval | pending", "approved").as_deref(),
            Some("Approval | approved")
        );
    }

    #[test]
    fn a_labelled_line_keeps_its_label_and_emphasis() {
        assert_eq!(
            set_value("Approval: pending", "approved").as_deref(),
            Some("Approval: approved")
        );
        assert_eq!(
            set_value("**Approval:** pending (awaiting review)", "approved").as_deref(),
            Some("**Approval:** approved")
        );
        assert_eq!(
            set_value("- **Approval**: pending", "approved").as_deref(),
            Some("- **Approval**: approved")
        );
        assert_eq!(set_value("Approval pending", "approved"), None);
    }

    #[test]
    fn a_row_is_added_at_the_end_of_the_plan_variables_table() {
        let text = "# P\n\n## Plan Variables\n\n| Variable | Value |\n|---|---|\n| **Plan Format** | full |\n\n## Tasks\n";
        let last = markdown::plan_variables_last_row(text).unwrap();
        assert_eq!(last, 7);
        assert_eq!(
            insert_row(text, last, "approved (ann, 2026-06-09)"),
            "# P\n\n## Plan Variables\n\n| Variable | Value |\n|---|---|\n| **Plan Format** | full |\n| **Approval** | approved (ann, 2026-06-09) |\n\n## Tasks\n"
        );
        assert_eq!(
            markdown::plan_variables_last_row("# P\n\n| a | b |\n|---|---|\n"),
            None
        );
    }

    #[test]
    fn the_approval_is_spelled_as_plans_write_it() {
        assert_eq!(spelled(Approval::PreApproved, true), "Pre-approved");
        assert_eq!(spelled(Approval::Approved, false), "approved");
    }
}

/// What `dwp approve` asks of a record plan (DWP v6/v7): an `approval` event citing the live
/// contract, by a human, with the marker of the note they wrote (rules 19, 20, 12).
#[derive(Debug, Clone)]
pub struct RecordApproveRequest {
    pub by: String,
    pub pre_approved: bool,
    /// `--note FILE`: the human's note, recorded by its path and digest.
    pub note: PathBuf,
    pub wait: std::time::Duration,
}

/// What `dwp approve` did to a record plan.
#[derive(Debug, Clone, Serialize)]
pub struct RecordApproveReport {
    pub plan: String,
    pub contract_id: String,
    /// The approval written, or the same one found.
    pub seq: i64,
    /// The same approval (authority, mechanism, markdown digest, contract) was there: nothing
    /// was written.
    pub unchanged: bool,
    pub authority: String,
    pub mechanism: String,
    pub plan_digest: String,
    pub marker: String,
    /// The mends of the live journal the writer made on opening it.
    pub repairs: Vec<crate::steps::record_writer::Repair>,
}

/// Approve the record plan at `plan_dir`: the live contract, as its markdown stands now.
pub fn approve_record(
    plan_dir: &Path,
    request: &RecordApproveRequest,
) -> Result<RecordApproveReport> {
    crate::Error::check_length("--by", &request.by, MAX_NAME_CHARS)?;
    let marker = crate::steps::record_writer::human_marker(&request.note)?;
    let mechanism = match request.pre_approved {
        true => "pre_authorization",
        false => "plan_authorship",
    };
    let mut writer = crate::steps::record_writer::RecordWriter::open(plan_dir, request.wait)?;
    let approved = writer.approve(&request.by, mechanism, &marker)?;
    let contract_id = writer.contract_id().to_owned();
    let repairs = writer.repairs.clone();
    writer.finish()?;
    Ok(RecordApproveReport {
        plan: plan_dir.display().to_string(),
        contract_id,
        seq: approved.seq,
        unchanged: approved.found,
        authority: request.by.clone(),
        mechanism: mechanism.to_owned(),
        plan_digest: approved.plan_digest,
        marker,
        repairs,
    })
}
