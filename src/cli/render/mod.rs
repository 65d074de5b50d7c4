//! The one printer: [`print`] writes a command's [`Outcome`] as human text, as one JSON document
//! (`"dwp": 1`, built by [`envelope`]), as SARIF (`verify`) or as markdown (`loop dod`). What is
//! written here reaches the terminal through [`Inert`] (see `crate::term`); `status` also keeps
//! each field read from the plan on its line. The exit code is not decided here: it is
//! [`Outcome::exit`], and a document's `"ok"` is [`Outcome::ok`].

mod contract;
mod generated;
mod loops;
mod plan;
mod sarif;

use super::outcome::Outcome;
use crate::term::Inert;
use serde_json::{Value, json};
use std::io::Write;

/// Version of the JSON output format.
pub const FORMAT_VERSION: u32 = 1;

/// The form an outcome is written in; the command line offers each command only the forms it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
    Sarif,
    Markdown,
}

/// Write `outcome` on `out` in `format`; `colour` paints `status`'s human text.
pub fn print<W: Write>(out: &mut Inert<W>, outcome: &Outcome, format: Format, colour: bool) {
    let json = format == Format::Json;
    let ok = outcome.ok();
    match outcome {
        Outcome::Validate(results) => plan::validate(out, results, ok, json),
        Outcome::Update { outcome, target } => plan::update(out, outcome, target, json),
        Outcome::Amend(amend) => plan::amend(out, amend, json),
        Outcome::Approve(approve) => plan::approve(out, approve, json),
        Outcome::Init(init) => plan::init(out, init, json),
        Outcome::Migrate(migrate) => plan::migrate(out, migrate, json),
        Outcome::LockStatus { lock, holder } => plan::lock_status(out, lock, holder.as_ref(), json),
        Outcome::LockRecover { lock, recovery } => {
            plan::lock_recover(out, lock, recovery.as_ref(), json)
        }
        Outcome::Reconcile { report, write } => plan::reconcile(out, report, *write, ok, json),
        Outcome::Verify { reports, strict } => plan::verify(out, reports, format, *strict),
        Outcome::Status(summary) => plan::status(out, summary, json, colour),
        Outcome::StatusAll(lines) => plan::status_all(out, lines, json),
        Outcome::FinalizeCheck {
            plan: target,
            findings,
        } => plan::finalize_check(out, target, findings, ok, json),
        Outcome::Finalize(publication) => plan::finalize(out, publication, ok, json),
        Outcome::LoopArtifacts(report) => loops::artifacts(out, report, ok, json),
        Outcome::LoopDod(report) => loops::dod(out, report, format),
        Outcome::LoopFreeze(frozen) => loops::freeze(out, frozen, json),
        Outcome::LoopProve { worktree, report } => loops::prove(out, worktree, report, ok, json),
        Outcome::ContractDeclare(declared) => contract::declare(out, declared, json),
        Outcome::ContractRecord(recorded) => contract::record(out, recorded, json),
        Outcome::ContractCheck { outcome, .. } => contract::check(out, outcome, ok, json),
        Outcome::ContractHook(hook) => contract::hook(out, hook, json),
        Outcome::Completions { shell, script } => generated::text(
            out,
            "completions",
            ("shell", shell),
            ("script", script),
            json,
        ),
        Outcome::Man { page, roff } => {
            generated::text(out, "man", ("page", page), ("roff", roff), json)
        }
    }
}

/// The one JSON envelope every command's document has: `{"dwp": 1, "command": ...}` followed by
/// the keys of `body`, in their order.
pub fn envelope(command: &str, body: Value) -> Value {
    let mut document = json!({"dwp": FORMAT_VERSION, "command": command});
    if let (Value::Object(document), Value::Object(body)) = (&mut document, body) {
        document.extend(body);
    }
    document
}

/// Write one JSON document, pretty-printed, on its own lines.
fn print_json(out: &mut dyn Write, document: &Value) {
    let _ = writeln!(out, "{document:#}");
}

/// One JSON document `{"dwp": 1, "command", "ok", KEY: VALUE}` on `out`.
fn print_keyed(
    out: &mut dyn Write,
    command: &str,
    ok: bool,
    key: &str,
    value: impl serde::Serialize,
) {
    let mut document = envelope(command, json!({ "ok": ok }));
    document[key] = json!(value);
    print_json(out, &document);
}

/// Colour only for a terminal, and never with NO_COLOR set.
pub fn use_colour() -> bool {
    use std::io::IsTerminal;
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

/// The one JSON document of a failed command under `--json`; the error also goes to stderr.
pub fn error_json(
    out: &mut impl Write,
    command: &str,
    error: &crate::error::Error,
    can_wait: bool,
) {
    let document = envelope(
        command,
        json!({
        "ok": false,
        "error": {
            "exit": error.exit().code(),
            "message": error.to_string(),
            "hint": error.hint_for(can_wait),
        }}),
    );
    print_json(out, &document);
}

/// Warnings a command met on its way, on stderr as `dwp <command>: warning: ...`.
fn warn(command: &str, warnings: &[String]) {
    let mut err = super::stderr();
    for warning in warnings {
        let _ = writeln!(err, "dwp {command}: warning: {warning}");
    }
}
