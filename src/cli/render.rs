//! Rendering command results as human text or as one JSON document (`"dwp": 1`).

use crate::error::Exit;
use crate::findings::{Finding, Verdict};
use crate::validate::Validation;
use serde_json::json;
use std::io::Write;

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
        let document = json!({
            "dwp": FORMAT_VERSION,
            "command": "validate",
            "ok": verdict == Verdict::Valid,
            "verdict": verdict,
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
