//! The renderers of `dwp loop`: the artifacts gate, the definition of done (human, markdown or
//! JSON), the frozen contract and the proofs.

use super::{Format, Stamp, envelope, print_json};
use crate::commands::r#loop::artifacts::{self, ArtifactsReport, Status};
use crate::commands::r#loop::dod::{DodReport, Row, Verdict};
use crate::commands::r#loop::issue::Frozen;
use crate::commands::r#loop::prove::ProveReport;
use crate::term::{Inert, Paint};
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;

pub(super) fn artifacts<W: Write>(
    out: &mut Inert<W>,
    report: &ArtifactsReport,
    json: Option<Stamp>,
) {
    let verdict = report.verdict;
    if let Some(stamp) = json {
        let items: Vec<Value> = report
            .artifacts
            .iter()
            .map(|a| {
                let mismatches: Vec<Value> = match &a.status {
                    Status::Invalid(found) => found
                        .iter()
                        .map(|v| json!({"path": v.path, "message": v.message}))
                        .collect(),
                    _ => Vec::new(),
                };
                json!({"artifact": a.artifact.name(), "path": a.path, "required": a.required,
                       "status": a.status.name(), "mismatches": mismatches})
            })
            .collect();
        let skipped = (verdict == artifacts::Verdict::Skipped).then_some(
            "no worktree (--no-worktree): the artifact gate is left out, nothing was checked",
        );
        print_json(
            out,
            &envelope(
                "loop artifacts",
                stamp,
                json!({
            "verdict": verdict.name(), "worktree": report.worktree, "note": skipped, "artifacts": items}),
            ),
        );
        return;
    }
    let Some(worktree) = &report.worktree else {
        let _ = writeln!(
            out,
            "artifacts: skipped — no worktree (--no-worktree): the artifact gate is left out, nothing was checked"
        );
        return;
    };
    let paint = match verdict {
        artifacts::Verdict::Present | artifacts::Verdict::Skipped => Paint::Good,
        _ => Paint::Bad,
    };
    let _ = write!(out, "artifacts: ");
    let _ = out.paint(verdict.name(), paint);
    let _ = writeln!(out, " ({})", worktree.display());
    for a in &report.artifacts {
        let path = a.path.display();
        let _ = match &a.status {
            Status::Present => writeln!(out, "  present  {path}"),
            Status::Absent => writeln!(out, "  absent   {path} (not required)"),
            Status::Missing => writeln!(out, "  missing  {path}: required, write it"),
            Status::Invalid(found) => {
                let _ = writeln!(
                    out,
                    "  invalid  {path}: present but does not match the schema (worse than absent)"
                );
                for v in found {
                    let _ = writeln!(out, "           {}: {}", v.path, v.message);
                }
                Ok(())
            }
        };
    }
}

fn verdict_cell(verdict: Verdict) -> String {
    match verdict.instruction() {
        Some(instruction) => format!("{} — {instruction}", verdict.name()),
        None => verdict.name().to_owned(),
    }
}

fn evidence_text(row: &Row) -> String {
    match row.source.describe() {
        Some(source) => format!("{} [{source}]", row.evidence),
        None => row.evidence.clone(),
    }
}

fn summary(report: &DodReport) -> String {
    format!(
        "{} of {} proven · {} missing (prove it) · {} failed (fix it)",
        report.count(Verdict::Proven),
        report.rows.len(),
        report.count(Verdict::Missing),
        report.count(Verdict::Failed)
    )
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

pub(super) fn dod<W: Write>(out: &mut Inert<W>, report: &DodReport, format: Format, stamp: Stamp) {
    match format {
        Format::Json => dod_json(out, report, stamp),
        Format::Markdown => dod_markdown(out, report),
        Format::Human | Format::Sarif => dod_human(out, report),
    }
}

fn dod_json(out: &mut dyn Write, report: &DodReport, stamp: Stamp) {
    let items: Vec<Value> = report
        .rows
        .iter()
        .map(|r| {
            json!({"list": r.list.name(), "id": r.id, "item": r.item, "kind": r.kind,
                   "verdict": r.verdict.name(), "instruction": r.verdict.instruction(),
                   "evidence": r.evidence, "source": r.source.describe()})
        })
        .collect();
    print_json(
        out,
        &envelope(
            "loop dod",
            stamp,
            json!({
            "verdict": if report.done() { "done" } else { "not done" },
            "summary": {"total": report.rows.len(), "proven": report.count(Verdict::Proven),
                        "missing": report.count(Verdict::Missing), "failed": report.count(Verdict::Failed)},
            "contract": report.contract.as_ref().map(|(path, digest)| json!({"path": path, "digest": digest})),
            "changed": report.changed.as_ref().map(|(source, count)| json!({"source": source, "count": count})),
            "items": items}),
        ),
    );
}

/// One cell of a markdown table: no pipe or newline may break the row.
fn cell(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

fn dod_markdown(out: &mut dyn Write, report: &DodReport) {
    let headline = if report.done() { "Done" } else { "Not done" };
    let _ = writeln!(out, "## Definition of done\n");
    let _ = writeln!(out, "**{headline}**: {}\n", summary(report));
    let mut context = Vec::new();
    if let Some((path, digest)) = &report.contract {
        context.push(format!(
            "contract `{}` frozen at sha256 `{digest}`",
            file_name(path)
        ));
    }
    if let Some((source, count)) = &report.changed {
        context.push(format!("{count} changed files ({})", cell(source)));
    }
    if !context.is_empty() {
        let _ = writeln!(out, "{}\n", context.join(" · "));
    }
    let _ = writeln!(out, "| List | Id | Item | Verdict | Evidence |");
    let _ = writeln!(out, "|---|---|---|---|---|");
    for r in &report.rows {
        let mark = match r.verdict {
            Verdict::Proven => "✅",
            Verdict::Missing => "⚠️",
            Verdict::Failed => "❌",
        };
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {mark} {} | {} |",
            r.list.name(),
            r.id,
            cell(&r.item),
            verdict_cell(r.verdict),
            cell(&evidence_text(r))
        );
    }
}

fn dod_human<W: Write>(out: &mut Inert<W>, report: &DodReport) {
    let headline = match report.done() {
        true => ("done", Paint::Good),
        false => ("not done", Paint::Bad),
    };
    let _ = write!(out, "definition of done: ");
    let _ = out.paint(headline.0, headline.1);
    let _ = writeln!(out, " · {}", summary(report));
    let id_width = report
        .rows
        .iter()
        .map(|r| r.id.chars().count())
        .max()
        .unwrap_or(0);
    for r in &report.rows {
        let _ = writeln!(
            out,
            "  {:<7}  {:<id_width$}  {:<7}  {}",
            r.list.name(),
            r.id,
            r.verdict.name(),
            r.item
        );
        let instruction = r
            .verdict
            .instruction()
            .map(|i| format!("{i}: "))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {:<7}  {:<id_width$}  {instruction}{}",
            "",
            "",
            evidence_text(r)
        );
    }
    if report.rows.is_empty() {
        let _ = writeln!(
            out,
            "  (no items: no dod.items in the configuration and no contract)"
        );
    }
    if let Some((path, digest)) = &report.contract {
        let _ = writeln!(
            out,
            "contract: {} frozen at sha256 {digest}",
            path.display()
        );
    }
}

pub(super) fn freeze<W: Write>(out: &mut Inert<W>, frozen: &Frozen, json: Option<Stamp>) {
    if let Some(stamp) = json {
        print_json(
            out,
            &envelope(
                "loop freeze",
                stamp,
                json!({
            "contract": frozen.path, "digest": frozen.digest, "outcomes": frozen.outcomes, "changed": frozen.changed}),
            ),
        );
    } else {
        let (verb, change) = match frozen.changed {
            true => ("frozen", ""),
            false => ("already frozen", " (no change)"),
        };
        let _ = out.paint(verb, Paint::Good);
        let _ = writeln!(
            out,
            " {}: {} outcomes · sha256 {}{change}",
            frozen.path.display(),
            frozen.outcomes,
            frozen.digest
        );
    }
}

pub(super) fn prove<W: Write>(
    out: &mut Inert<W>,
    worktree: &Path,
    report: &ProveReport,
    json: Option<Stamp>,
) {
    let written = |relative: &str, outcome: &crate::store::WriteOutcome| json!({"path": worktree.join(relative), "sha256": outcome.sha256, "changed": outcome.changed});
    if let Some(stamp) = json {
        let proofs: Vec<Value> = report
            .proved
            .iter()
            .map(|p| {
                let mut proof = serde_json::to_value(&p.proof).unwrap_or(Value::Null);
                if let Value::Object(map) = &mut proof {
                    map.insert("list".into(), json!(p.list.name()));
                }
                proof
            })
            .collect();
        print_json(
            out,
            &envelope(
                "loop prove",
                stamp,
                json!({ "env": report.env, "proofs": proofs,
            "dod": written(crate::commands::r#loop::DOD_JSON, &report.dod),
            "verify": written(crate::commands::r#loop::VERIFY_JSON, &report.verify)}),
            ),
        );
        return;
    }
    let failed = report
        .proved
        .iter()
        .filter(|p| p.proof.status == crate::commands::r#loop::proofs::ProofStatus::Failed)
        .count();
    let _ = writeln!(
        out,
        "proved {} items: {} passed, {failed} failed",
        report.proved.len(),
        report.proved.len() - failed
    );
    let id_width = report
        .proved
        .iter()
        .map(|p| p.proof.id.chars().count())
        .max()
        .unwrap_or(0);
    for p in &report.proved {
        let status = match p.proof.status {
            crate::commands::r#loop::proofs::ProofStatus::Passed => ("passed", Paint::Good),
            crate::commands::r#loop::proofs::ProofStatus::Failed => ("failed", Paint::Bad),
        };
        let _ = write!(out, "  {:<7}  {:<id_width$}  ", p.list.name(), p.proof.id);
        let _ = out.paint(status.0, status.1);
        let _ = writeln!(out, ": {}", p.proof.evidence);
    }
    let _ = writeln!(
        out,
        "environment passed: {} (HOME: {})",
        report.env.join(", "),
        if report.env.iter().any(|n| n == "HOME") {
            "dwp's"
        } else {
            "a private empty folder"
        }
    );
    for (relative, outcome) in [
        (crate::commands::r#loop::DOD_JSON, &report.dod),
        (crate::commands::r#loop::VERIFY_JSON, &report.verify),
    ] {
        let _ = writeln!(
            out,
            "wrote {} · sha256 {}",
            worktree.join(relative).display(),
            outcome.sha256
        );
    }
}
