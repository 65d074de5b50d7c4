//! `dwp contract ...`: arguments only; the logic is in [`crate::commands::contract`], the
//! rendering in `cli::render`.

use super::help::examples;
use super::outcome::Outcome;
use crate::commands::contract::declare::DeclareRequest;
use crate::commands::contract::ladder::HookRequest;
use crate::commands::contract::ledger::{RecordRequest, RecordSource};
use crate::commands::contract::{Op, payload};
use crate::error::Error;
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// The exit codes of `contract check --hook`, which differ from the table of `dwp --help`.
macro_rules! hook_exit {
    () => {
        "Exit codes with --hook (the Stop hook protocol):
  0  the stop is allowed
  2  the stop is blocked, with the reason on stderr (an internal error blocks too; the 3rd
     consecutive failure marks the task blocked and allows)"
    };
}

#[derive(Debug, Subcommand)]
pub enum ContractCommand {
    /// Declare a task's expected files (ledger/task-N.expected.json), with a snapshot of each.
    #[command(after_help = examples![
        "# Task 3 creates src/retry_queue.ts, which must define RetryQueue (paths from --root)",
        "dwp contract declare conformance-fixtures/valid-full-v5/PLAN_payment_webhooks \\",
        "    --task 3 --root . --create src/retry_queue.ts:RetryQueue",
        "# Declare it again, with a second symbol (the replaced declaration is recorded)",
        "dwp contract declare conformance-fixtures/valid-full-v5/PLAN_payment_webhooks \\",
        "    --task 3 --root . --replace --create src/retry_queue.ts:RetryQueue,Backoff",
    ])]
    Declare(DeclareArgs),
    /// Append one edit to the task's ledger, from a PostToolUse payload on stdin (or --path).
    #[command(after_help = examples![
        "# Record an edit by hand, for a harness that sends no PostToolUse payload",
        "dwp contract record conformance-fixtures/valid-full-v5/PLAN_payment_webhooks \\",
        "    --task 3 --root . --path src/retry_queue.ts --op create --tool editor",
        "# The same edit recorded for the task in progress",
        "dwp contract record conformance-fixtures/valid-full-v5/PLAN_payment_webhooks \\",
        "    --root . --path src/retry_queue.ts --op create --tool editor",
    ])]
    Record(RecordArgs),
    /// Check the declaration against disk and ledger; --hook speaks the Stop hook protocol.
    #[command(after_help = concat!(hook_exit!(), "\n\n", examples![
        "# Check task 3's declaration against disk and ledger (nothing declared: nothing to check)",
        "dwp contract check conformance-fixtures/valid-full-v5/PLAN_payment_webhooks --task 3",
        "# A task in progress with no declaration fails",
        "dwp contract check conformance-fixtures/valid-full-v5/PLAN_payment_webhooks \\",
        "    --require-declaration   # exit 1",
    ]))]
    Check(CheckArgs),
}

#[derive(Debug, Args)]
pub struct DeclareArgs {
    /// The plan folder, or its state.json (default: the plan folder this directory is in).
    #[arg(value_name = "PLAN")]
    pub target: Option<PathBuf>,
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
    /// The plan folder, or its state.json (default: the plan folder this directory is in).
    #[arg(value_name = "PLAN")]
    pub target: Option<PathBuf>,
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
    /// The plan folder, or its state.json (default: the plan folder this directory is in).
    #[arg(value_name = "PLAN")]
    pub target: Option<PathBuf>,
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

pub fn run(command: &ContractCommand) -> Result<Outcome, Error> {
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
            let declared = crate::commands::contract::declare::declare(
                &super::plan_arg_as_given(&args.target)?,
                &request,
            )?;
            Ok(Outcome::ContractDeclare(declared))
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
            let recorded = crate::commands::contract::ledger::record(
                &super::plan_arg_as_given(&args.target)?,
                &request,
            )?;
            Ok(Outcome::ContractRecord(recorded))
        }
        ContractCommand::Check(args) if args.hook => {
            // A payload that could not be read is a verdict of the hook, as a malformed one is.
            let payload = payload::read_stdin();
            let request = HookRequest {
                task: args.task,
                require_declaration: args.require_declaration,
                payload,
            };
            let hook = crate::commands::contract::ladder::stop_hook(
                &super::plan_arg_as_given(&args.target)?,
                &request,
            );
            Ok(Outcome::ContractHook(hook))
        }
        ContractCommand::Check(args) => {
            let (outcome, _) = crate::commands::contract::check::check(
                &super::plan_arg_as_given(&args.target)?,
                args.task,
            )?;
            Ok(Outcome::ContractCheck {
                outcome,
                require_declaration: args.require_declaration,
            })
        }
    }
}
