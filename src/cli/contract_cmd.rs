//! `dwp contract ...`: arguments and rendering only; the logic is in [`crate::commands::contract`].

use crate::commands::contract::check::{CheckOutcome, CheckReport};
use crate::commands::contract::declare::{DeclareOutcome, DeclareRequest};
use crate::commands::contract::ladder::{HookOutcome, HookRequest, Verdict};
use crate::commands::contract::ledger::{RecordOutcome, RecordRequest, RecordSource};
use crate::commands::contract::{Op, payload};
use crate::error::{Error, Exit};
use clap::{Args, Subcommand};
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;

const HOOK_EXIT: &str = "\
With --hook (the Stop hook protocol): 0 allows the stop; 2 blocks it, with the reason on stderr.
An internal error blocks too; the 3rd consecutive failure marks the task blocked and allows.";

#[derive(Debug, Subcommand)]
pub enum ContractCommand {
    /// Declare a task's expected files (ledger/task-N.expected.json), with a snapshot of each.
    #[command(after_help = crate::error::Exit::help_text())]
    Declare(DeclareArgs),
    /// Append one edit to the task's ledger, from a PostToolUse payload on stdin (or --path).
    #[command(after_help = crate::error::Exit::help_text())]
    Record(RecordArgs),
    /// Check the declaration against disk and ledger; --hook speaks the Stop hook protocol.
    #[command(after_help = HOOK_EXIT)]
    Check(CheckArgs),
}

#[derive(Debug, Args)]
pub struct DeclareArgs {
    /// The plan folder, or its state.json.
    #[arg(value_name = "PLAN")]
    pub target: PathBuf,
    /// The task whose files these are.
    #[arg(long, value_name = "N")]
    pub task: u64,
    /// A file the task creates, with the symbols it must define. Repeatable.
    #[arg(long, value_name = "PATH[:SYMBOL,...]")]
    pub create: Vec<String>,
    /// A file the task modifies, with the symbols it must hold afterwards. Repeatable.
    #[arg(long, value_name = "PATH[:SYMBOL,...]")]
    pub modify: Vec<String>,
    /// A file the task deletes. Repeatable.
    #[arg(long, value_name = "PATH")]
    pub delete: Vec<String>,
    /// The repository root the paths are relative to (default: the folder holding .dwp/plans/).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Replace the task's existing declaration (the replaced one is recorded).
    #[arg(long)]
    pub replace: bool,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The plan folder, or its state.json.
    #[arg(value_name = "PLAN")]
    pub target: PathBuf,
    /// Record for this task (default: the task in progress).
    #[arg(long, value_name = "N")]
    pub task: Option<u64>,
    /// The repository root, for a task not yet declared (default: the folder holding .dwp/plans/).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Record this path (relative to the current folder) instead of reading a payload.
    #[arg(long, value_name = "P", requires_all = ["op", "tool"])]
    pub path: Option<String>,
    /// With --path: create, modify or delete.
    #[arg(long, value_name = "OP", requires = "path", value_parser = parse_op)]
    pub op: Option<Op>,
    /// With --path: the tool that made the edit.
    #[arg(long, value_name = "T", requires = "path")]
    pub tool: Option<String>,
    /// With --path: the session that made the edit.
    #[arg(long, value_name = "ID", requires = "path")]
    pub session: Option<String>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The plan folder, or its state.json.
    #[arg(value_name = "PLAN")]
    pub target: PathBuf,
    /// Check this task (default: the task in progress).
    #[arg(long, value_name = "N")]
    pub task: Option<u64>,
    /// Speak the Stop hook protocol: read the Stop payload on stdin; exit 0 allows, 2 blocks.
    #[arg(long)]
    pub hook: bool,
    /// A task in progress with no declaration fails instead of passing with nothing to check.
    #[arg(long)]
    pub require_declaration: bool,
}

fn parse_op(text: &str) -> Result<Op, String> {
    text.parse()
}

impl ContractCommand {
    pub fn name(&self) -> &'static str {
        match self {
            ContractCommand::Declare(_) => "contract declare",
            ContractCommand::Record(_) => "contract record",
            ContractCommand::Check(_) => "contract check",
        }
    }
}

pub fn run(command: &ContractCommand, out: &mut dyn Write, json: bool) -> Result<Exit, Error> {
    match command {
        ContractCommand::Declare(args) => {
            let request = DeclareRequest {
                task: args.task,
                create: args.create.clone(),
                modify: args.modify.clone(),
                delete: args.delete.clone(),
                root: args.root.clone(),
                replace: args.replace,
            };
            let outcome = crate::commands::contract::declare::declare(&args.target, &request)?;
            render_declare(out, &outcome, json)
        }
        ContractCommand::Record(args) => {
            let source = match (&args.path, args.op, &args.tool) {
                (Some(path), Some(op), Some(tool)) => RecordSource::Manual {
                    path: path.clone(),
                    op,
                    tool: tool.clone(),
                    session: args.session.clone(),
                },
                _ => RecordSource::Payload(payload::read_stdin()?),
            };
            let request = RecordRequest {
                task: args.task,
                root: args.root.clone(),
                source,
            };
            let outcome = crate::commands::contract::ledger::record(&args.target, &request)?;
            render_record(out, &outcome, json)
        }
        ContractCommand::Check(args) if args.hook => {
            // Reading stdin can only fail on I/O; an empty payload is refused by the parser.
            let payload = payload::read_stdin().unwrap_or_default();
            let request = HookRequest {
                task: args.task,
                require_declaration: args.require_declaration,
                payload,
            };
            let outcome = crate::commands::contract::ladder::stop_hook(&args.target, &request);
            render_hook(out, &outcome, json)
        }
        ContractCommand::Check(args) => {
            let (outcome, _) = crate::commands::contract::check::check(&args.target, args.task)?;
            render_check(out, &outcome, args.require_declaration, json)
        }
    }
}

fn put(out: &mut dyn Write, text: &str) -> Result<(), Error> {
    super::written(writeln!(out, "{text}"))
}

fn print_json(out: &mut dyn Write, command: &str, body: Value) -> Result<(), Error> {
    let doc = super::render::envelope(command, body);
    let text = serde_json::to_string_pretty(&doc).expect("JSON output serializes");
    put(out, &text)
}

fn warn(command: &str, warnings: &[String]) {
    let mut err = super::stderr();
    for warning in warnings {
        let _ = writeln!(err, "dwp {command}: warning: {warning}");
    }
}

fn render_declare(
    out: &mut dyn Write,
    outcome: &DeclareOutcome,
    json: bool,
) -> Result<Exit, Error> {
    if json {
        print_json(
            out,
            "contract declare",
            json!({
                "file": outcome.file,
                "sha256": outcome.sha256,
                "replaced": outcome.replaced,
                "declaration": outcome.declaration,
            }),
        )?;
        return Ok(Exit::Ok);
    }
    let d = &outcome.declaration;
    let verb = if outcome.replaced {
        "re-declared"
    } else {
        "declared"
    };
    put(
        out,
        &format!(
            "{verb} task {}: {} expected file{} · {} · sha256 {}",
            d.task,
            d.files_expected.len(),
            if d.files_expected.len() == 1 { "" } else { "s" },
            outcome.file,
            outcome.sha256
        ),
    )?;
    for e in &d.files_expected {
        let mut line = format!("  {:<6}  {}", e.op.as_str(), e.path);
        if !e.required.is_empty() {
            line.push_str(&format!("  [required: {}]", e.required.join(", ")));
        }
        put(out, &line)?;
    }
    Ok(Exit::Ok)
}

fn render_record(out: &mut dyn Write, outcome: &RecordOutcome, json: bool) -> Result<Exit, Error> {
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
            if json {
                print_json(
                    out,
                    "contract record",
                    json!({"recorded": true, "entry": entry, "ledger": ledger.display().to_string(), "repaired_bytes": repaired}),
                )?;
            } else {
                put(
                    out,
                    &format!(
                        "recorded task {}: {} {} ({})",
                        entry.task_id, entry.op, entry.path, entry.tool
                    ),
                )?;
            }
        }
        RecordOutcome::Skipped(reason) => {
            if json {
                print_json(
                    out,
                    "contract record",
                    json!({"recorded": false, "reason": reason}),
                )?;
            } else {
                put(out, reason)?;
            }
        }
    }
    Ok(Exit::Ok)
}

fn report_lines(report: &CheckReport) -> Vec<String> {
    let failed = report.expectations.iter().filter(|e| !e.ok).count();
    let head = if report.passed {
        format!(
            "file contract of task {} ({}): OK · {} expected file{} verified",
            report.task,
            report.plan,
            report.expectations.len(),
            if report.expectations.len() == 1 {
                ""
            } else {
                "s"
            }
        )
    } else {
        format!(
            "file contract of task {} ({}): FAILED · {failed} of {} expected files fail",
            report.task,
            report.plan,
            report.expectations.len()
        )
    };
    let mut lines = vec![head];
    for e in &report.expectations {
        if e.ok {
            lines.push(format!("  ok    {} ({})", e.path, e.op));
        }
        for problem in &e.problems {
            lines.push(format!("  FAIL  {} ({}): {problem}", e.path, e.op));
        }
    }
    lines
}

fn render_check(
    out: &mut dyn Write,
    outcome: &CheckOutcome,
    require_declaration: bool,
    json: bool,
) -> Result<Exit, Error> {
    let (passed, task, message, report) = match outcome {
        CheckOutcome::NoTask => (
            true,
            None,
            "no task is in progress: no file contract to check".to_owned(),
            None,
        ),
        CheckOutcome::Undeclared { task, file } => (
            !require_declaration,
            Some(*task),
            format!("task {task} declares no files ({file} is missing)"),
            None,
        ),
        CheckOutcome::Checked(report) => {
            let head = report_lines(report).swap_remove(0);
            (report.passed, Some(report.task), head, Some(report))
        }
    };
    if let Some(report) = report {
        warn("contract check", &report.warnings);
    }
    if json {
        print_json(
            out,
            "contract check",
            json!({"checked": report.is_some(), "passed": passed, "task": task, "message": message, "report": report}),
        )?;
    } else if let Some(report) = report {
        for line in report_lines(report) {
            put(out, &line)?;
        }
    } else {
        put(out, &message)?;
    }
    Ok(if passed { Exit::Ok } else { Exit::Rejected })
}

fn render_hook(out: &mut dyn Write, outcome: &HookOutcome, json: bool) -> Result<Exit, Error> {
    warn("contract check", &outcome.warnings);
    if let Some(report) = &outcome.report {
        warn("contract check", &report.warnings);
    }
    if json {
        print_json(
            out,
            "contract check",
            json!({"hook": true, "verdict": outcome.verdict, "task": outcome.task, "message": outcome.message, "consecutive_failures": outcome.consecutive_failures, "escalated": outcome.escalated, "report": outcome.report}),
        )?;
    }
    match outcome.verdict {
        Verdict::Block => {
            let mut err = super::stderr();
            let _ = writeln!(err, "dwp contract check: {}", outcome.message);
            Ok(Exit::BlockStop)
        }
        Verdict::Allow => {
            if !json {
                put(out, &outcome.message)?;
            }
            Ok(Exit::Ok)
        }
    }
}
