//! Rendering command results as human text or as one JSON document (`"dwp": 1`).

use crate::error::Exit;
use crate::findings::{Finding, Verdict};
use crate::store::lock::{LockInfo, Recovery};
use crate::update::UpdateOutcome;
use crate::validate::Validation;
use serde_json::json;
use std::io::Write;
use std::path::Path;

/// Version of the JSON output format.
pub const FORMAT_VERSION: u32 = 1;

fn overall(verdicts: impl Iterator<Item = Verdict>) -> Verdict {
    verdicts.fold(Verdict::Valid, |acc, v| match (acc, v) {
        (Verdict::Invalid, _) | (_, Verdict::Invalid) => Verdict::Invalid,
        (Verdict::Unverified, _) | (_, Verdict::Unverified) => Verdict::Unverified,
        _ => Verdict::Valid,
    })
}

fn write_findings(out: &mut impl Write, findings: &[Finding]) {
    for finding in findings {
        let _ = writeln!(out, "{}", finding.render());
        if let Some(hint) = &finding.hint {
            let _ = writeln!(out, "  hint: {hint}");
        }
    }
}

pub fn validate(out: &mut impl Write, results: &[Validation], as_json: bool) -> Exit {
    let verdict = overall(results.iter().map(Validation::verdict));
    if as_json {
        let findings: Vec<&Finding> = results.iter().flat_map(|r| &r.findings).collect();
        let targets: Vec<_> = results
            .iter()
            .map(|r| json!({"target": r.target, "verdict": r.verdict(), "summary": r.summary}))
            .collect();
        let document = json!({
            "dwp": FORMAT_VERSION,
            "command": "validate",
            "ok": verdict == Verdict::Valid,
            "verdict": verdict,
            "targets": targets,
            "findings": findings,
        });
        let _ = writeln!(out, "{document:#}");
    } else {
        for result in results {
            write_findings(out, &result.findings);
            let count = result.findings.len();
            let plural = if count == 1 { "" } else { "s" };
            let _ = match result.verdict() {
                Verdict::Valid => writeln!(out, "valid: {}", result.summary),
                Verdict::Invalid => {
                    writeln!(out, "invalid: {} ({count} problem{plural})", result.target)
                }
                Verdict::Unverified => writeln!(
                    out,
                    "UNVERIFIED: {} (a check could not be made; no claim either way)",
                    result.target
                ),
            };
        }
    }
    verdict.exit()
}

pub fn update(out: &mut impl Write, outcome: &UpdateOutcome, as_json: bool) -> Exit {
    if as_json {
        let document = json!({
            "dwp": FORMAT_VERSION,
            "command": "update",
            "ok": true,
            "outcome": outcome,
        });
        let _ = writeln!(out, "{document:#}");
        return Exit::Ok;
    }
    if let Some(diff) = &outcome.diff {
        let _ = write!(out, "{diff}");
    }
    let suffix = match (outcome.changed, outcome.dry_run) {
        (false, _) => " (no change)",
        (true, true) => " (dry run: nothing written)",
        (true, false) => "",
    };
    let _ = writeln!(
        out,
        "task {} → {} · {}/{} completed · plan {} · sha256 {}{suffix}",
        outcome.task,
        outcome.status,
        outcome.completed_count,
        outcome.task_count,
        outcome.plan_status,
        outcome.new_sha256
    );
    Exit::Ok
}

pub fn lock_status(
    out: &mut impl Write,
    lock: &Path,
    info: Option<&LockInfo>,
    as_json: bool,
) -> Exit {
    if as_json {
        let document = json!({
            "dwp": FORMAT_VERSION,
            "command": "lock status",
            "lock": lock,
            "held": info.is_some(),
            "holder": info,
        });
        let _ = writeln!(out, "{document:#}");
        return Exit::Ok;
    }
    let _ = match info {
        None => writeln!(out, "free: {} is not held", lock.display()),
        Some(info) => {
            let _ = writeln!(out, "held: {} by {}", lock.display(), info.describe());
            match &info.owner_problem {
                Some(problem) => writeln!(out, "  {problem}"),
                None => Ok(()),
            }
        }
    };
    Exit::Ok
}

pub fn lock_recover(
    out: &mut impl Write,
    lock: &Path,
    recovery: Option<&Recovery>,
    as_json: bool,
) -> Exit {
    if as_json {
        let document = json!({
            "dwp": FORMAT_VERSION,
            "command": "lock recover",
            "lock": lock,
            "removed": recovery.is_some(),
            "recovery": recovery,
        });
        let _ = writeln!(out, "{document:#}");
        return Exit::Ok;
    }
    let _ = match recovery {
        None => writeln!(
            out,
            "free: {} is not held; nothing to recover",
            lock.display()
        ),
        Some(r) => writeln!(
            out,
            "inspected: {} held by {}\nremoved: {}",
            lock.display(),
            r.inspected.describe(),
            r.grounds
        ),
    };
    Exit::Ok
}
