//! `dwp verify --format sarif`: the findings as one SARIF 2.1.0 log, so CI can show them as
//! code-scanning annotations. One rule per finding code (all of them, in code order, so a rule's
//! index never depends on what was found); one result per finding, located by a URI relative to
//! the working directory where the file lies under it (what code-scanning uploads expect).

use crate::commands::verify::PlanReport;
use crate::findings::{Code, Finding, Severity};
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use serde::{Serialize, Serializer};
use serde_json::{Value, json};
use std::io::{self, Write};
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

/// Write the SARIF log of `reports` to `out`, result by result: a log of 100,000 findings is
/// never held whole in memory. `strict` makes advisories errors, as it does for the verdict.
pub fn write_log(
    out: &mut impl Write,
    reports: &[PlanReport],
    strict: bool,
    cwd: Option<&Path>,
) -> io::Result<()> {
    let results = Results {
        reports,
        strict,
        cwd,
    };
    let log = Log {
        schema: SARIF_SCHEMA,
        version: "2.1.0",
        runs: [SarifRun {
            tool: Tool {
                driver: Driver {
                    name: "dwp",
                    semantic_version: env!("CARGO_PKG_VERSION"),
                    rules: Code::ALL.iter().map(|code| rule(*code)).collect(),
                },
            },
            column_kind: "unicodeCodePoints",
            results,
        }],
    };
    serde_json::to_writer_pretty(&mut *out, &log)?;
    writeln!(out)
}

#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [SarifRun<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifRun<'a> {
    tool: Tool,
    column_kind: &'static str,
    results: Results<'a>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    semantic_version: &'static str,
    rules: Vec<Value>,
}

/// Every finding of every report, serialized one result at a time as the writer asks.
struct Results<'a> {
    reports: &'a [PlanReport],
    strict: bool,
    cwd: Option<&'a Path>,
}

impl Serialize for Results<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.reports.iter().flat_map(|report| {
            report
                .findings
                .iter()
                .map(move |f| result(f, &report.plan, self.strict, self.cwd))
        }))
    }
}

fn rule(code: Code) -> Value {
    let level = match code {
        Code::DeadLock
        | Code::OrphanGateLog
        | Code::ApprovalPending
        | Code::ActiveBlocker
        | Code::NoStateLayer
        | Code::IndexInCode
        | Code::InlineLeftover
        | Code::NoProgressCount
        | Code::JournalFraming
        | Code::ApprovalDigest
        | Code::SnapshotStale
        | Code::OpenDelegation => "note",
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

/// One finding as a SARIF result: the fields in the order SARIF viewers show them.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: String,
    rule_index: usize,
    level: &'static str,
    message: Message,
    locations: [Location<'a>; 1],
    properties: Properties<'a>,
}

#[derive(Serialize)]
struct Message {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location<'a> {
    physical_location: PhysicalLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    logical_locations: Option<[LogicalLocation<'a>; 1]>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Serialize)]
struct ArtifactLocation {
    uri: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LogicalLocation<'a> {
    fully_qualified_name: &'a str,
    kind: &'static str,
}

#[derive(Serialize)]
struct Properties<'a> {
    plan: &'a str,
    severity: Severity,
    #[serde(skip_serializing_if = "Option::is_none")]
    task: Option<u64>,
}

fn result<'a>(
    finding: &'a Finding,
    plan: &'a str,
    strict: bool,
    cwd: Option<&Path>,
) -> SarifResult<'a> {
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
    let location = Location {
        physical_location: PhysicalLocation {
            artifact_location: ArtifactLocation {
                uri: uri(&finding.file, cwd),
            },
            region: finding.line.map(|start_line| Region { start_line }),
        },
        logical_locations: finding.path.as_deref().map(|path| {
            [LogicalLocation {
                fully_qualified_name: path,
                kind: "member",
            }]
        }),
    };
    SarifResult {
        rule_id: finding.code.id(),
        rule_index: finding.code.index(),
        level,
        message: Message { text },
        locations: [location],
        properties: Properties {
            plan,
            severity: finding.severity,
            task: finding.task,
        },
    }
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
