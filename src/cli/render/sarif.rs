//! `dwp verify --format sarif`: the findings as one SARIF 2.1.0 log, so CI can show them as
//! code-scanning annotations. One rule per finding code (all of them, in code order, so a rule's
//! index never depends on what was found); one result per finding, located by a URI relative to
//! the working directory where the file lies under it (what code-scanning uploads expect).

use crate::commands::verify::PlanReport;
use crate::findings::{Code, Finding, Severity};
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use serde_json::{Value, json};
use std::path::Path;

/// The SARIF 2.1.0 schema's URI, as the standard names it.
const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// Bytes a URI path must escape (RFC 3986): everything but unreserved characters and `/`.
const URI_PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// The SARIF log of `reports`; `strict` makes advisories errors, as it does for the verdict.
pub fn log(reports: &[PlanReport], strict: bool, cwd: Option<&Path>) -> Value {
    let rules: Vec<Value> = Code::ALL.iter().map(|code| rule(*code)).collect();
    let results: Vec<Value> = reports
        .iter()
        .flat_map(|report| {
            report
                .findings
                .iter()
                .map(move |f| result(f, &report.plan, strict, cwd))
        })
        .collect();
    json!({
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "dwp",
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

fn rule(code: Code) -> Value {
    let level = match code {
        Code::DeadLock
        | Code::ApprovalPending
        | Code::ActiveBlocker
        | Code::NoStateLayer
        | Code::IndexInCode
        | Code::InlineLeftover
        | Code::NoProgressCount => "note",
        Code::NewerSpec | Code::NewerStandard => "warning",
        _ => "error",
    };
    json!({
        "id": code.id(),
        "name": format!("{code:?}"),
        "shortDescription": {"text": code.summary()},
        "help": {"text": crate::rules::conformance::fix_hint(code)},
        "defaultConfiguration": {"level": level},
        "properties": {"documentation": "docs/CONFORMANCE.md"},
    })
}

fn result(finding: &Finding, plan: &str, strict: bool, cwd: Option<&Path>) -> Value {
    let level = match finding.severity {
        Severity::Error => "error",
        Severity::Advisory if strict => "error",
        Severity::Advisory => "note",
        Severity::Unverified => "warning",
    };
    let mut text = finding.message.clone();
    if let Some(hint) = &finding.hint {
        text.push_str(&format!(" (hint: {hint})"));
    }
    let mut physical = json!({"artifactLocation": {"uri": uri(&finding.file, cwd)}});
    if let Some(line) = finding.line {
        physical["region"] = json!({"startLine": line});
    }
    let mut location = json!({"physicalLocation": physical});
    if let Some(path) = &finding.path {
        location["logicalLocations"] = json!([{"fullyQualifiedName": path, "kind": "member"}]);
    }
    let rule_index = Code::ALL
        .iter()
        .position(|c| *c == finding.code)
        .expect("every code is in Code::ALL");
    let mut properties = json!({"plan": plan, "severity": finding.severity});
    if let Some(task) = finding.task {
        properties["task"] = json!(task);
    }
    json!({
        "ruleId": finding.code.id(),
        "ruleIndex": rule_index,
        "level": level,
        "message": {"text": text},
        "locations": [location],
        "properties": properties,
    })
}

/// A relative URI for a file under `cwd` (or given relative), else a `file://` URI.
fn uri(file: &str, cwd: Option<&Path>) -> String {
    let path = Path::new(file);
    let relative = if path.is_absolute() {
        cwd.and_then(|cwd| path.strip_prefix(cwd).ok())
    } else {
        Some(path.strip_prefix(".").unwrap_or(path))
    };
    match relative {
        Some(relative) => encode(&relative.to_string_lossy()),
        None => format!("file://{}", encode(file)),
    }
}

fn encode(path: &str) -> String {
    utf8_percent_encode(path, URI_PATH).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_relative_under_the_working_directory_and_escaped() {
        let cwd = Path::new("/repo");
        assert_eq!(
            uri("/repo/.dwp/plans/PLAN_a b/state.json", Some(cwd)),
            ".dwp/plans/PLAN_a%20b/state.json"
        );
        assert_eq!(uri("./PLAN_x/README.md", Some(cwd)), "PLAN_x/README.md");
        assert_eq!(
            uri("/elsewhere/PLAN_x/README.md", Some(cwd)),
            "file:///elsewhere/PLAN_x/README.md"
        );
    }
}
