//! The one printer: [`print`] writes a command's [`Outcome`] as human text, as one JSON document
//! (`"dwp": 2`, the payload under the command's key, built by [`envelope`]), as SARIF (`verify`) or as markdown (`loop dod`). What is
//! written here reaches the terminal through [`Inert`] (see `crate::term`); `status` also keeps
//! each field read from the plan on its line. The exit code is not decided here: it is
//! [`Outcome::exit`], and a document's `"ok"` is [`Outcome::ok`].

mod contract;
mod generated;
mod loops;
mod plan;
pub mod progress;
mod record;
mod sarif;

use super::outcome::Outcome;
use crate::term::Inert;
use serde_json::{Value, json};
use std::io::Write;

/// Version of the JSON output format.
pub const FORMAT_VERSION: u32 = 2;

/// The form an outcome is written in; the command line offers each command only the forms it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
    Sarif,
    Markdown,
}

/// What every JSON document says first, after `dwp` and `command`: whether the command
/// succeeded and the exit code it ends with (both from [`Outcome::exit`], or the error's).
#[derive(Debug, Clone, Copy)]
pub struct Stamp {
    pub ok: bool,
    pub exit: u8,
}

/// Write `outcome` on `out` in `format`; human text is painted when `out` colours.
pub fn print<W: Write>(out: &mut Inert<W>, outcome: &Outcome, format: Format) {
    let stamp = Stamp {
        ok: outcome.ok(),
        exit: outcome.exit().code(),
    };
    let json = (format == Format::Json).then_some(stamp);
    match outcome {
        Outcome::Validate(results) => plan::validate(out, results, json),
        Outcome::Update {
            outcome,
            target,
            gates_from,
        } => plan::update(out, outcome, target, gates_from, json),
        Outcome::Amend(amend) => plan::amend(out, amend, json),
        Outcome::Run(run) => plan::run(out, run, json),
        Outcome::Approve(approve) => plan::approve(out, approve, json),
        Outcome::Init(init) => plan::init(out, init, json),
        Outcome::New(new) => plan::new(out, new, json),
        Outcome::RecordNew(new) => record::new(out, new, json),
        Outcome::Migrate(migrate) => plan::migrate(out, migrate, json),
        Outcome::LockStatus { lock, holder } => plan::lock_status(out, lock, holder.as_ref(), json),
        Outcome::LockRecover { lock, recovery } => {
            plan::lock_recover(out, lock, recovery.as_ref(), json)
        }
        Outcome::Reconcile { report, write } => plan::reconcile(out, report, *write, json),
        Outcome::RecordReconcile(report) => record::reconcile(out, report, json),
        Outcome::RecordUpdate(report) => record::update(out, report, json),
        Outcome::RecordApprove(report) => record::approve(out, report, json),
        Outcome::RecordAmend(report) => record::amend(out, report, json),
        Outcome::RecordInit(report) => record::init(out, report, json),
        Outcome::RecordRun(report) => record::run(out, report, json),
        Outcome::Verify {
            reports,
            strict,
            all,
        } => plan::verify(out, reports, format, *strict, *all, stamp),
        Outcome::Status(summary) => plan::status(out, summary, json),
        Outcome::StatusAll(lines) => plan::status_all(out, lines, json),
        Outcome::Next(next) => plan::next(out, next, json),
        Outcome::RecordStatus(status) => record::status(out, status, json),
        Outcome::RecordNext(set) => record::next(out, set, json),
        Outcome::FinalizeCheck {
            plan: target,
            findings,
        } => plan::finalize_check(out, target, findings, json),
        Outcome::Finalize {
            publication,
            recover,
        } => plan::finalize(out, publication, *recover, json),
        Outcome::LoopArtifacts(report) => loops::artifacts(out, report, json),
        Outcome::LoopDod(report) => loops::dod(out, report, format, stamp),
        Outcome::LoopFreeze(frozen) => loops::freeze(out, frozen, json),
        Outcome::LoopProve { worktree, report } => loops::prove(out, worktree, report, json),
        Outcome::ContractDeclare(declared) => contract::declare(out, declared, json),
        Outcome::ContractRecord(recorded) => contract::record(out, recorded, json),
        Outcome::ContractCheck { outcome, .. } => contract::check(out, outcome, stamp.ok, json),
        Outcome::ContractHook(hook) => contract::hook(out, hook, json),
        Outcome::Schema(schema) => match json {
            // The schema itself, as embedded, so `dwp schema output > output.schema.json` works.
            None => {
                let _ = out.write_all(schema.text.as_bytes());
            }
            Some(stamp) => {
                let text: Value = serde_json::from_str(schema.text).unwrap_or(Value::Null);
                let body = json!({ "name": schema.name(), "schema": text });
                print_json(out, &envelope("schema", stamp, body));
            }
        },
        Outcome::SchemaList(names) => match json {
            None => {
                for name in names {
                    let _ = writeln!(out, "{name}");
                }
            }
            Some(stamp) => print_json(out, &envelope("schema", stamp, json!({ "names": names }))),
        },
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

/// The key a command's payload sits under in its JSON document: the words of its `command`,
/// each flag's dashes dropped, joined by `_` (`verify`, `lock_status`, `finalize_check`).
pub fn payload_key(command: &str) -> String {
    command
        .split_whitespace()
        .map(|word| word.trim_start_matches('-'))
        .collect::<Vec<_>>()
        .join("_")
}

/// What every JSON document opens with: `{"dwp": 2, "command", "ok", "exit"}`.
fn stamped(command: &str, stamp: Stamp) -> Value {
    json!({
        "dwp": FORMAT_VERSION,
        "command": command,
        "ok": stamp.ok,
        "exit": stamp.exit,
    })
}

/// The one JSON envelope every command's document has: [`stamped`], then the command's whole
/// payload under its one key ([`payload_key`]), so no payload field meets an envelope field.
pub fn envelope(command: &str, stamp: Stamp, payload: impl serde::Serialize) -> Value {
    let mut document = stamped(command, stamp);
    document[payload_key(command)] = json!(payload);
    document
}

/// Write one JSON document, pretty-printed, on its own lines.
fn print_json(out: &mut dyn Write, document: &Value) {
    let _ = writeln!(out, "{document:#}");
}

/// The document of `command` with `payload` under its key, on `out`.
fn print_keyed(out: &mut dyn Write, command: &str, stamp: Stamp, payload: impl serde::Serialize) {
    print_json(out, &envelope(command, stamp, payload));
}

/// Whether a stream colours its text: `--color`, then `NO_COLOR` and `CLICOLOR_FORCE`, then
/// whether it is a terminal ([`crate::term::wants_colour`] says which wins).
pub fn use_colour(choice: super::ColorChoice, terminal: bool) -> bool {
    let when = match choice {
        super::ColorChoice::Auto => crate::term::When::Auto,
        super::ColorChoice::Always => crate::term::When::Always,
        super::ColorChoice::Never => crate::term::When::Never,
    };
    crate::term::wants_colour(
        when,
        std::env::var_os("NO_COLOR").as_deref(),
        std::env::var_os("CLICOLOR_FORCE").as_deref(),
        terminal,
    )
}

/// The one JSON document of a failed command under `--json`; the error also goes to stderr.
pub fn error_json(
    out: &mut impl Write,
    command: &str,
    error: &crate::error::Error,
    hint: Option<&str>,
) {
    let stamp = Stamp {
        ok: false,
        exit: error.exit().code(),
    };
    let mut document = stamped(command, stamp);
    document["error"] = json!({
        "kind": error.kind(),
        "message": error.to_string(),
        "place": error.place(),
        "hint": hint,
    });
    print_json(out, &document);
}

/// Warnings a command met on its way, on stderr as `dwp <command>: warning: ...`.
fn warn(command: &str, warnings: &[String]) {
    let mut err = super::stderr();
    for warning in warnings {
        let _ = write!(err, "dwp {command}: ");
        let _ = err.paint("warning:", crate::term::Paint::Unsure);
        let _ = writeln!(err, " {warning}");
    }
}
