//! The renderers of `dwp contract`: the declaration, a ledger record, the check and the Stop
//! hook's answer (its block reason goes to stderr, as the hook protocol reads it).

use super::{Stamp, envelope, print_json, warn};
use crate::commands::contract::check::{CheckOutcome, CheckReport};
use crate::commands::contract::declare::DeclareOutcome;
use crate::commands::contract::ladder::{HookOutcome, Verdict};
use crate::commands::contract::ledger::RecordOutcome;
use crate::term::{Inert, Paint};
use serde_json::{Value, json};
use std::io::Write;

fn put(out: &mut dyn Write, text: &str) {
    let _ = writeln!(out, "{text}");
}

fn print_document(out: &mut dyn Write, command: &str, stamp: Stamp, body: Value) {
    print_json(out, &envelope(command, stamp, body));
}

pub(super) fn declare<W: Write>(out: &mut Inert<W>, outcome: &DeclareOutcome, json: Option<Stamp>) {
    if let Some(stamp) = json {
        print_document(
            out,
            "contract declare",
            stamp,
            json!({
                "file": outcome.file,
                "sha256": outcome.sha256,
                "replaced": outcome.replaced,
                "declaration": outcome.declaration,
            }),
        );
        return;
    }
    let d = &outcome.declaration;
    let verb = if outcome.replaced {
        "re-declared"
    } else {
        "declared"
    };
    let _ = out.paint(verb, Paint::Good);
    put(
        out,
        &format!(
            " task {}: {} expected file{} · {} · sha256 {}",
            d.task,
            d.files_expected.len(),
            if d.files_expected.len() == 1 { "" } else { "s" },
            outcome.file,
            outcome.sha256
        ),
    );
    for e in &d.files_expected {
        let mut line = format!("  {:<6}  {}", e.op.as_str(), e.path);
        if !e.required.is_empty() {
            line.push_str(&format!("  [required: {}]", e.required.join(", ")));
        }
        put(out, &line);
    }
}

pub(super) fn record<W: Write>(out: &mut Inert<W>, outcome: &RecordOutcome, json: Option<Stamp>) {
    match outcome {
        RecordOutcome::Recorded {
            entry,
            ledger,
            repaired,
        } => {
            if *repaired > 0 {
                warn(
                    "contract record",
                    &[format!(
                        "{}: dropped a torn last line ({repaired} bytes) left by an interrupted append",
                        ledger.display()
                    )],
                );
            }
            if let Some(stamp) = json {
                print_document(
                    out,
                    "contract record",
                    stamp,
                    json!({"recorded": true, "entry": entry, "ledger": ledger.display().to_string(), "repaired_bytes": repaired}),
                );
            } else {
                let _ = out.paint("recorded", Paint::Good);
                put(
                    out,
                    &format!(
                        " task {}: {} {} ({})",
                        entry.task_id, entry.op, entry.path, entry.tool
                    ),
                );
            }
        }
        RecordOutcome::Skipped(reason) => {
            if let Some(stamp) = json {
                print_document(
                    out,
                    "contract record",
                    stamp,
                    json!({"recorded": false, "reason": reason}),
                );
            } else {
                put(out, reason);
            }
        }
    }
}

/// One line of a check's text: what comes before its verdict word, the word in its colour, and
/// the rest.
struct Line {
    before: String,
    word: (&'static str, Paint),
    after: String,
}

impl Line {
    fn text(&self) -> String {
        format!("{}{}{}", self.before, self.word.0, self.after)
    }

    fn put<W: Write>(&self, out: &mut Inert<W>) {
        let _ = write!(out, "{}", self.before);
        let _ = out.paint(self.word.0, self.word.1);
        let _ = writeln!(out, "{}", self.after);
    }
}

fn report_lines(report: &CheckReport) -> Vec<Line> {
    let failed = report.expectations.iter().filter(|e| !e.ok).count();
    let before = format!("file contract of task {} ({}): ", report.task, report.plan);
    let head = if report.passed {
        Line {
            before,
            word: ("OK", Paint::Good),
            after: format!(
                " · {} expected file{} verified",
                report.expectations.len(),
                if report.expectations.len() == 1 {
                    ""
                } else {
                    "s"
                }
            ),
        }
    } else {
        Line {
            before,
            word: ("FAILED", Paint::Bad),
            after: format!(
                " · {failed} of {} expected files fail",
                report.expectations.len()
            ),
        }
    };
    let mut lines = vec![head];
    for e in &report.expectations {
        if e.ok {
            lines.push(Line {
                before: "  ".into(),
                word: ("ok", Paint::Good),
                after: format!("    {} ({})", e.path, e.op),
            });
        }
        for problem in &e.problems {
            lines.push(Line {
                before: "  ".into(),
                word: ("FAIL", Paint::Bad),
                after: format!("  {} ({}): {problem}", e.path, e.op),
            });
        }
    }
    lines
}

pub(super) fn check<W: Write>(
    out: &mut Inert<W>,
    outcome: &CheckOutcome,
    passed: bool,
    json: Option<Stamp>,
) {
    let (task, message, report) = match outcome {
        CheckOutcome::NoTask => (
            None,
            "no task is in progress: no file contract to check".to_owned(),
            None,
        ),
        CheckOutcome::Undeclared { task, file } => (
            Some(*task),
            format!("task {task} declares no files ({file} is missing)"),
            None,
        ),
        CheckOutcome::Checked(report) => {
            let head = report_lines(report).swap_remove(0).text();
            (Some(report.task), head, Some(report))
        }
    };
    if let Some(report) = report {
        warn("contract check", &report.warnings);
    }
    if let Some(stamp) = json {
        print_document(
            out,
            "contract check",
            stamp,
            json!({"checked": report.is_some(), "passed": passed, "task": task, "message": message, "report": report}),
        );
    } else if let Some(report) = report {
        for line in report_lines(report) {
            line.put(out);
        }
    } else {
        put(out, &message);
    }
}

pub(super) fn hook<W: Write>(out: &mut Inert<W>, outcome: &HookOutcome, json: Option<Stamp>) {
    warn("contract check", &outcome.warnings);
    if let Some(report) = &outcome.report {
        warn("contract check", &report.warnings);
    }
    if let Some(stamp) = json {
        print_document(
            out,
            "contract check",
            stamp,
            json!({"hook": true, "verdict": outcome.verdict, "task": outcome.task, "message": outcome.message, "consecutive_failures": outcome.consecutive_failures, "escalated": outcome.escalated, "report": outcome.report}),
        );
    }
    match outcome.verdict {
        Verdict::Block => {
            let mut err = super::super::stderr();
            let _ = writeln!(err, "dwp contract check: {}", outcome.message);
        }
        Verdict::Allow if json.is_none() => put(out, &outcome.message),
        Verdict::Allow => {}
    }
}
