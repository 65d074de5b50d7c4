//! The command line: argument parsing (clap derive, grouped help in `cli::help`), then one
//! command, its [`outcome::Outcome`] printed by the one printer (`cli::render`) with the exit
//! code from `Outcome::exit`. Errors, dwp's and clap's alike, become `dwp <command>: <what>
//! (<where>)` plus a hint that runs as printed (and, with `--json`, one JSON document
//! `{"dwp": 2, "command", "ok": false, "exit", "error": {"kind", "message", "place", "hint"}}`
//! on stdout), with the exit code from [`crate::error::Error::exit`]. A PLAN left out is the plan
//! folder the current directory is in. Everything printed, stdout and stderr, passes through one
//! [`crate::term::Inert`] sink, so text read from a plan cannot drive the terminal.

mod contract_cmd;
mod gate_flags;
pub mod help;
mod loop_cmd;
mod outcome;
mod render;

use crate::commands::amend::{Authority, Disposition};
use crate::commands::r#loop::gates::GateFrom;
use crate::error::{Error, Exit};
use crate::plan::model::{Generation, PlanFormat, TaskStatus};
use crate::term::Inert;
use clap::{Args, Parser, Subcommand};
use help::examples;
use outcome::Outcome;
use render::Format;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "dwp",
    version,
    about = "Keeps the machine-readable state of a Deep Work Plan honest.",
    long_about = "Keeps the machine-readable state of a Deep Work Plan honest: every agent, hook \
                  and CI job calls dwp to change or judge manifest.json and state.json.",
    after_help = crate::error::Exit::help_text(),
    max_term_width = 100
)]
pub struct Cli {
    /// Print one JSON document on stdout instead of text.
    #[arg(long, global = true, help_heading = "Global options")]
    pub json: bool,

    /// Colour the text: auto, always or never. Auto colours a terminal; a non-empty NO_COLOR
    /// turns it off, else CLICOLOR_FORCE (not 0) turns it on.
    #[arg(
        long,
        global = true,
        value_name = "WHEN",
        default_value = "auto",
        help_heading = "Global options"
    )]
    pub color: ColorChoice,

    /// Print nothing on stdout but a JSON document asked for: the exit code says it, and
    /// errors and warnings still go to stderr.
    #[arg(short, long, global = true, help_heading = "Global options")]
    pub quiet: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check manifest.json and state.json against their schema and the state invariants.
    #[command(after_help = examples![
        "# Check a plan folder: both JSON files, their schemas and the state invariants",
        "dwp validate conformance-fixtures/valid-full-v5/PLAN_payment_webhooks",
        "# One file, the findings as one JSON document",
        "dwp validate --json conformance-fixtures/valid-full-v5/PLAN_payment_webhooks/state.json",
    ])]
    Validate {
        /// Plan folders, or single manifest.json / state.json files (default: the plan folder
        /// this directory is in).
        #[arg(value_name = "PLAN")]
        targets: Vec<PathBuf>,
    },
    /// Change one task through the guarded updater (locked, atomic, evidence-checked).
    #[command(after_help = examples![
        "# Preview starting task 3: the diff of state.json, nothing written",
        "dwp update conformance-fixtures/valid-full-v5/PLAN_payment_webhooks \\",
        "    --task 3 --status in_progress --dry-run",
        "# Complete it with a passing gate record, its README box ticked in the same write",
        "dwp update conformance-fixtures/valid-full-v5/PLAN_payment_webhooks --task 3 \\",
        "    --status completed --tick --gate \"pnpm run test|0|42 passed, 0 failed\"",
        "# Block the next task, saying what it needs",
        "dwp update conformance-fixtures/valid-full-v5/PLAN_payment_webhooks --task 4 \\",
        "    --status blocked --block-reason \"sandbox down\" --block-needs \"sandbox access\"",
    ])]
    Update(Box<UpdateArgs>),
    /// Run a task's gate and record what dwp observed: exit code, summary, log and its sha256.
    #[command(after_help = examples![
        "# Start the task, run its gate through dwp (the record is what dwp saw), then complete it",
        "dwp update examples/run-plan/PLAN_greeting_banner --task 1 --status in_progress",
        "dwp run examples/run-plan/PLAN_greeting_banner --task 1 -- sh examples/run-plan/gate.sh",
        "# The record is observed: verify holds it against its log",
        "dwp verify examples/run-plan/PLAN_greeting_banner --strict-evidence",
    ])]
    Run(Box<RunArgs>),
    /// Append an amendment record to a task's log and PROGRESS.md; --invalidate reopens.
    #[command(after_help = examples![
        "# Revise task 4's criterion on the user's word: a block in its log, a line in PROGRESS.md",
        "dwp amend conformance-fixtures/valid-full-v5/PLAN_payment_webhooks --task 4 \\",
        "    --original \"replays are rejected\" --observed \"the provider replays on purpose\" \\",
        "    --disposition \"revised criterion\" --revised \"replays are acknowledged\" \\",
        "    --reason \"the provider's retry policy\" --authority user --affected 4",
        "# Move a requirement of task 5 to task 6",
        "dwp amend conformance-fixtures/valid-full-v5/PLAN_payment_webhooks --task 5 \\",
        "    --original \"alert runbook link\" --observed \"the runbook is task 6\" \\",
        "    --disposition \"deferred requirement\" --destination 6 \\",
        "    --reason \"one place for the runbook\" --authority developer --affected 5,6",
        "# Amend a record plan's contract: revision 2 staged, recorded, approved, then live",
        "R2=conformance-fixtures/record-valid-v7-amended/PLAN_021_docs_site_migration",
        "dwp amend conformance-fixtures/record-valid-v7-in-progress/PLAN_021_docs_site_migration \\",
        "    --contract $R2/contracts/contract.r2.json --by maria.lopez \\",
        "    --reason \"orphan guides were unreachable\" --note $R2/notes/amend-r2.md",
    ])]
    Amend(Box<AmendArgs>),
    /// Record the user's approval: state.json, the README's Approval row and PROGRESS.md.
    #[command(after_help = examples![
        "# Record the user's approval (nothing changes when the plan already records it)",
        "dwp approve conformance-fixtures/valid-full-v5/PLAN_payment_webhooks --by \"Dana Reyes\"",
        "# Preview recording it as approved before the plan was written",
        "dwp approve conformance-fixtures/valid-full-v5/PLAN_payment_webhooks \\",
        "    --by \"Dana Reyes\" --pre-approved --dry-run",
    ])]
    Approve {
        /// The plan folder, or its state.json (default: the plan folder this directory is in).
        #[arg(value_name = "PLAN")]
        target: Option<PathBuf>,
        /// Who approved the plan (named in the README's Approval row and PROGRESS.md).
        #[arg(long, value_name = "NAME")]
        by: String,
        /// The plan was approved before it was written (approval pre_approved).
        #[arg(long)]
        pre_approved: bool,
        /// A record plan's approval: the note the human wrote, recorded by its path and sha256
        /// as the approval's authority marker (required there; not for other plans).
        #[arg(long, value_name = "FILE")]
        note: Option<PathBuf>,
        /// Refuse (exit 3) unless state.json still has this sha256.
        #[arg(long, value_name = "HEX")]
        expected_sha256: Option<String>,
        /// Retry a held lock for up to this many seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = 0.0)]
        wait: f64,
        /// Validate and print the unified diff of what would be written; write nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        signed: Signature,
    },
    /// Materialize a markdown-only plan: manifest.json once, state.json all pending.
    #[command(after_help = examples![
        "# Materialize a markdown-only plan: manifest.json once, state.json from the README's boxes",
        "dwp init conformance-fixtures/markdown-only-current-v5/PLAN_feature_flag_cleanup \\",
        "    --agent planner",
        "# A plan written under an older standard keeps the one its README declares",
        "dwp init conformance-fixtures/markdown-only-legacy-three-task-ending/PLAN_newsletter_double_opt_in",
    ])]
    Init {
        /// The plan folder (PLAN_name) holding README.md (default: the one this directory is in).
        #[arg(value_name = "PLAN")]
        target: Option<PathBuf>,
        /// Who materializes: the agent's display name (manifest created_by.agent).
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        /// Who materializes: the model's display name (manifest created_by.model).
        #[arg(long, value_name = "NAME")]
        model: Option<String>,
        /// The DWP standard the plan was written under, for a README without a
        /// `**Standard:**` line (it must agree with the README when both are given).
        #[arg(long, value_name = "X.Y.Z")]
        standard: Option<String>,
        /// Check everything and print the diff of every file it would write; write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Make a record plan (DWP v6/v7) of this contract draft instead: manifest.json, the
        /// stamped contract.json, then the approval (with --by and --note), resumable.
        #[arg(long, value_name = "FILE")]
        contract: Option<PathBuf>,
        /// With --contract: who approves the plan.
        #[arg(long, value_name = "NAME", requires = "contract")]
        by: Option<String>,
        /// With --contract: the note the approver wrote, recorded by its path and sha256.
        #[arg(long, value_name = "FILE", requires = "contract")]
        note: Option<PathBuf>,
        /// With --contract: the plan was approved before it was written (pre_authorization).
        #[arg(long, requires = "contract")]
        pre_approved: bool,
        /// With --contract: retry a held lock for up to this many seconds.
        #[arg(
            long,
            value_name = "SECONDS",
            default_value_t = 0.0,
            requires = "contract"
        )]
        wait: f64,
    },
    /// A new plan folder: a v5 plan verify accepts as it stands, or a v7 record plan's draft.
    #[command(after_help = examples![
        "# A Full plan of two tasks (a Final Review is appended as the third)",
        "dwp new PLAN_payment_retries --tasks \"Add retry queue\" \"Wire the worker\"",
        "# A Lite plan: every task a section of the README",
        "dwp new PLAN_small_fix --format lite --tasks \"Fix the parser\"",
        "# A v7 record plan: its markdown and a contract draft for `dwp init --contract`",
        "dwp new PLAN_docs_move --generation v7 --tasks \"List the pages\" \"Convert them\"",
    ])]
    New {
        /// The new plan folder; its name must be a plan name (PLAN_ then 2 to 5 lower-case words joined by `_`).
        #[arg(value_name = "PLAN")]
        target: PathBuf,
        /// full: one task file per task; lite: every task a section of the README (v5 plans;
        /// default full).
        #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
        format: Option<PlanFormat>,
        /// v5 (the default): markdown, manifest.json and state.json; v7: a record plan's
        /// markdown and a contract draft (contract.draft.json) for `dwp init --contract`.
        #[arg(long, value_name = "VERSION", value_parser = parse_new_generation)]
        generation: Option<NewGeneration>,
        /// The tasks' titles, in order; a Final Review is appended unless the last is one.
        #[arg(long, value_name = "TITLE", num_args = 1.., required = true)]
        tasks: Vec<String>,
        /// The plan's title (default: from its name).
        #[arg(long, value_name = "TEXT")]
        title: Option<String>,
        /// The plan's Goal (default: a placeholder to replace before approval).
        #[arg(long, value_name = "TEXT")]
        goal: Option<String>,
        /// The plan's Context (default: a placeholder to replace before approval).
        #[arg(long, value_name = "TEXT")]
        context: Option<String>,
        /// Who writes the plan: the agent's display name (manifest created_by.agent).
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        /// Who writes the plan: the model's display name (manifest created_by.model).
        #[arg(long, value_name = "NAME")]
        model: Option<String>,
    },
    /// Convert a v1 manifest.json/state.json pair to v2 or v5, recorded in PROGRESS.md.
    #[command(after_help = examples![
        "# Convert a v1 plan to v5, recorded in PROGRESS.md",
        "dwp migrate conformance-fixtures/valid-full-v1/PLAN_legacy_export_job --to v5",
        "# Or to v2",
        "dwp migrate conformance-fixtures/reconcile-in-sync-full-v1/PLAN_sync_full_one --to v2",
    ])]
    Migrate {
        /// The plan folder (default: the plan folder this directory is in).
        #[arg(value_name = "PLAN")]
        target: Option<PathBuf>,
        /// The schema generation to convert to: v2 or v5.
        #[arg(long, value_name = "VERSION", value_parser = parse_generation)]
        to: Generation,
        /// Check everything and print the diff of every file it would write; write nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        signed: Signature,
    },
    /// Inspect the writer lock, or remove it when its owner is provably gone.
    #[command(subcommand, after_help = examples![
        "dwp lock status conformance-fixtures/valid-full-v5/PLAN_payment_webhooks",
        "dwp lock recover conformance-fixtures/valid-full-v5/PLAN_payment_webhooks",
    ])]
    Lock(LockCommand),
    /// Compare the markdown with state.json; the markdown wins (--write regenerates).
    #[command(after_help = examples![
        "# Where the markdown and state.json disagree, and which way (exit 0 in sync, 1 if not)",
        "dwp reconcile conformance-fixtures/valid-full-v5/PLAN_payment_webhooks",
        "# What --write would change in state.json",
        "dwp reconcile conformance-fixtures/valid-full-v5/PLAN_payment_webhooks --diff",
        "# Regenerate state.json from the markdown under the lock, logged in PROGRESS.md",
        "dwp reconcile conformance-fixtures/valid-full-v5/PLAN_payment_webhooks --write",
    ])]
    Reconcile {
        /// The plan folder, or its state.json (default: the plan folder this directory is in).
        #[arg(value_name = "PLAN")]
        target: Option<PathBuf>,
        /// Regenerate state.json from the markdown under the lock and log it in PROGRESS.md.
        #[arg(long)]
        write: bool,
        /// With --write: check everything and print the diff of every file it would write
        /// (state.json and PROGRESS.md); write nothing.
        #[arg(long, requires = "write")]
        dry_run: bool,
        /// Print the unified diff of state.json (before → after).
        #[arg(long)]
        diff: bool,
        /// Take commit hashes from `git log` (commits naming `Task N of PLAN_name`).
        #[arg(long)]
        git: bool,
        /// Refuse (exit 3) unless state.json still has this sha256.
        #[arg(long, value_name = "HEX")]
        expected_sha256: Option<String>,
        /// Retry a held lock for up to this many seconds (with --write).
        #[arg(long, value_name = "SECONDS", default_value_t = 0.0)]
        wait: f64,
        /// With --write: let task N leave state.json although it carries gate records, an
        /// outcome, a commit or a completed status (recorded in PROGRESS.md). Repeatable.
        #[arg(long = "drop-task", value_name = "N", requires = "write")]
        drop_task: Vec<u64>,
        #[command(flatten)]
        signed: Signature,
    },
    /// Conformance: schema, desync and evidence truth (CONFORMANT, NOT CONFORMANT, UNVERIFIED).
    #[command(after_help = examples![
        "# The verdict on one plan: CONFORMANT, NOT CONFORMANT or UNVERIFIED",
        "dwp verify conformance-fixtures/valid-full-v5/PLAN_payment_webhooks",
        "# Every plan under ./.dwp/plans/, advisories counted, as a SARIF log for code scanning",
        "dwp verify --all . --strict --format sarif",
    ])]
    Verify {
        /// Plan folders (or, with --all, the repository root); default: the plan folder this
        /// directory is in, or with --all the repository it is in.
        #[arg(value_name = "PLAN")]
        targets: Vec<PathBuf>,
        /// Verify every ROOT/.dwp/plans/PLAN_* and the PLAN_* folders nested in them (one ROOT,
        /// default: the repository this is in).
        #[arg(long)]
        all: bool,
        /// Advisories count as failures.
        #[arg(long)]
        strict: bool,
        /// A completed task's gate asserted (`dwp update --gate`), not observed by dwp (`dwp
        /// run`), is a finding (DWP069); a plan asks the same with `| Gate Evidence | observed |`.
        #[arg(long)]
        strict_evidence: bool,
        /// Output: human text, one JSON document (= --json), or a SARIF 2.1.0 log for code scanning.
        #[arg(long, value_enum, default_value_t = VerifyFormat::Human)]
        format: VerifyFormat,
    },
    /// A person's view of a plan: progress, current task, blocker, gates, desync.
    #[command(after_help = examples![
        "# Progress, the current task, checkpoint, blocker, gates and desync of one plan",
        "dwp status conformance-fixtures/valid-full-v5/PLAN_payment_webhooks",
        "# One line for every plan under ./.dwp/plans/",
        "dwp status --all .",
    ])]
    Status {
        /// The plan folder (or its state.json), or a repository root to list its plans (default:
        /// the plan folder this directory is in, else the repository it is in).
        #[arg(value_name = "PLAN")]
        target: Option<PathBuf>,
        /// List every plan under ROOT/.dwp/plans/, one line each.
        #[arg(long)]
        all: bool,
    },
    /// The next task, its Validation commands and the dwp line that starts or completes it.
    #[command(after_help = examples![
        "# What to do next, and the exact line that does it",
        "dwp next conformance-fixtures/valid-full-v5/PLAN_payment_webhooks",
        "# The same as one JSON document",
        "dwp next conformance-fixtures/valid-full-v5/PLAN_payment_webhooks --json",
    ])]
    Next {
        /// The plan folder, or its state.json (default: the plan folder this directory is in).
        #[arg(value_name = "PLAN")]
        target: Option<PathBuf>,
    },
    /// Publish a completed plan: check every artifact, write state.json and a receipt.
    #[command(after_help = examples![
        "# Publish a plan whose tasks are all completed: state.json and a receipt",
        "dwp finalize conformance-fixtures/valid-completed-v5/PLAN_audit_log_export",
        "# Later: recompute the receipt and list every artifact changed since",
        "dwp finalize conformance-fixtures/valid-completed-v5/PLAN_audit_log_export --check",
    ])]
    Finalize {
        /// The plan folder, or its state.json (default: the plan folder this directory is in).
        #[arg(value_name = "PLAN")]
        target: Option<PathBuf>,
        /// The completed state to publish (default: the state with its last task completed).
        #[arg(long, value_name = "STATE.json")]
        candidate: Option<PathBuf>,
        /// Refuse (exit 3) unless state.json still has this sha256.
        #[arg(long, value_name = "HEX")]
        expected_sha256: Option<String>,
        /// Complete an interrupted publication (.finalizing.json), only with its own candidate.
        #[arg(long, conflicts_with = "check")]
        recover: bool,
        /// Recompute the receipt's hashes and list every artifact changed since publication.
        #[arg(long, conflicts_with_all = ["candidate", "expected_sha256"])]
        check: bool,
        /// Retry a held lock for up to this many seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = 0.0)]
        wait: f64,
        #[command(flatten)]
        signed: Signature,
    },
    /// Loop contracts: the .ak-loop/ phase artifacts and the two-list definition of done.
    #[command(subcommand, after_help = examples![
        "# The worker proves each item, then the definition of done is judged",
        "dwp loop prove examples/loop-worktree --config examples/loop-worktree/loop.config.yaml",
        "dwp loop dod examples/loop-worktree --config examples/loop-worktree/loop.config.yaml \\",
        "    --changed-files examples/loop-worktree/changed.txt",
    ])]
    Loop(loop_cmd::LoopCommand),
    /// The hook-enforced file contract: declare, record, check at stop.
    #[command(subcommand, after_help = examples![
        "# Declare what task 3 creates, then check it (exit 1 until the file defines RetryQueue)",
        "dwp contract declare conformance-fixtures/valid-full-v5/PLAN_payment_webhooks \\",
        "    --task 3 --root . --create src/retry_queue.ts:RetryQueue",
        "dwp contract check conformance-fixtures/valid-full-v5/PLAN_payment_webhooks   # exit 1",
    ])]
    Contract(contract_cmd::ContractCommand),
    /// Print an embedded JSON Schema (plan documents, receipt, contract, loop, --json output).
    #[command(after_help = examples![
        "# List the embedded schemas",
        "dwp schema",
        "# The schema every --json document matches",
        "dwp schema output",
    ])]
    Schema {
        /// The schema's name, e.g. `plan-state-v5` or `output`; left out, every name is listed.
        #[arg(value_name = "NAME")]
        name: Option<String>,
    },
    /// Print the completion script of a shell on stdout.
    #[command(after_help = examples![
        "# bash: load the completions in every new shell",
        "dwp completions bash > ~/.local/share/bash-completion/completions/dwp",
        "# zsh: a file named _dwp in a folder of $fpath",
        "dwp completions zsh > ~/.zfunc/_dwp",
        "# fish",
        "dwp completions fish > ~/.config/fish/completions/dwp.fish",
    ])]
    Completions {
        /// The shell to complete dwp's commands and flags in.
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) of dwp, or of one of its subcommands.
    #[command(after_help = examples![
        "# Read dwp(1), which lists every subcommand's page",
        "dwp man | man -l -",
        "# Install the page of dwp update",
        "dwp man update > ~/.local/share/man/man1/dwp-update.1",
    ])]
    Man {
        /// The subcommand whose page to print (`lock recover`: dwp-lock-recover(1)); none: dwp(1).
        #[arg(value_name = "SUBCOMMAND")]
        path: Vec<String>,
    },
}

/// Who writes, recorded in state.json's `updated_by` when the write changes it.
#[derive(Debug, Clone, Args)]
pub struct Signature {
    /// Who writes: the agent's name (updated_by.agent).
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// Who writes: the model's name (updated_by.model).
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
}

impl Signature {
    fn actor(&self) -> crate::plan::model::Actor {
        crate::plan::model::Actor {
            agent: self.agent.clone(),
            model: self.model.clone(),
        }
    }
}

/// When to colour human text (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// How `dwp verify` prints its findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum VerifyFormat {
    Human,
    Json,
    Sarif,
}

impl From<VerifyFormat> for Format {
    fn from(format: VerifyFormat) -> Format {
        match format {
            VerifyFormat::Human => Format::Human,
            VerifyFormat::Json => Format::Json,
            VerifyFormat::Sarif => Format::Sarif,
        }
    }
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The plan folder, or its state.json (default: the plan folder this directory is in).
    #[arg(value_name = "PLAN")]
    pub target: Option<PathBuf>,
    /// The task to change: its number, 1..N (a record plan's: its id, `T-...`).
    #[arg(long, value_name = "N", value_parser = parse_task)]
    pub task: TaskArg,
    /// The task's new status: pending, in_progress, completed, blocked or skipped.
    #[arg(long, value_name = "STATUS", value_parser = parse_status)]
    pub status: TaskStatus,
    /// With --status completed: tick the task's README box (and recount `Plan Status: N/M`) in
    /// the same locked write as the state.
    #[arg(long)]
    pub tick: bool,
    /// A gate record "COMMAND|EXIT_CODE|EVIDENCE", split on the first two `|`; passes = exit 0. Repeatable.
    #[arg(long, value_name = "SPEC")]
    pub gate: Vec<String>,
    /// A closed gate object {command, passes, exit_code, last_run, evidence}. Repeatable.
    #[arg(long, value_name = "JSON")]
    pub gate_json: Vec<String>,
    /// A loop's verify.json (WORKTREE/.ak-loop/verify.json): each outcome becomes a gate record, observed (its output copied into the plan) when dwp loop prove kept it. Repeatable.
    #[arg(long, value_name = "PATH")]
    pub gates_from: Vec<PathBuf>,
    /// Why the task is blocked (with --status blocked).
    #[arg(long, value_name = "TEXT")]
    pub block_reason: Option<String>,
    /// What the blocked task needs to go on (with --status blocked).
    #[arg(long, value_name = "TEXT")]
    pub block_needs: Option<String>,
    /// Resolve this task's active blocker, into in_progress or completed.
    #[arg(long)]
    pub resolve_blocker: bool,
    /// Why a completed or skipped task moves again, or why a task is skipped (refine).
    #[arg(long, value_name = "TEXT")]
    pub reopen_reason: Option<String>,
    /// Refuse (exit 3) unless state.json still has this sha256.
    #[arg(long, value_name = "HEX")]
    pub expected_sha256: Option<String>,
    /// Outcome: what worked.
    #[arg(long, value_name = "TEXT")]
    pub worked: Option<String>,
    /// Outcome: something tried (repeatable, appended).
    #[arg(long, value_name = "TEXT")]
    pub tried: Vec<String>,
    /// Outcome: something that failed (repeatable, appended).
    #[arg(long, value_name = "TEXT")]
    pub failed: Vec<String>,
    /// Outcome: free-form notes.
    #[arg(long, value_name = "TEXT")]
    pub notes: Option<String>,
    /// The task's commit (7-40 lower-case hex).
    #[arg(long, value_name = "SHA")]
    pub commit: Option<String>,
    /// Checkpoint step locator (default: what the transition was).
    #[arg(long, value_name = "TEXT")]
    pub checkpoint_step: Option<String>,
    /// Checkpoint note (default: the transition in words).
    #[arg(long, value_name = "TEXT")]
    pub checkpoint_note: Option<String>,
    /// Who writes: the agent's name (updated_by.agent).
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// Who writes: the model's name (updated_by.model).
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Retry a held lock with jittered backoff for up to this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 0.0)]
    pub wait: f64,
    /// Validate and print the unified diff of what would be written; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The plan folder, or its state.json (default: the plan folder this directory is in).
    #[arg(value_name = "PLAN")]
    pub target: Option<PathBuf>,
    /// The task the gate is for (default: the task in progress); it must be in_progress or blocked.
    /// A record plan's: its id, `T-...`, always given, and the task started.
    #[arg(long, value_name = "N", value_parser = parse_task)]
    pub task: Option<TaskArg>,
    /// A record plan's acceptance criterion the gate is evidence for (`AC-...`): one of the
    /// task's gate_intent, named before the run.
    #[arg(long, value_name = "AC")]
    pub criterion: Option<String>,
    /// A record plan's invariant the command checks (`INV-...`), instead of a task's gate: its
    /// evaluation is recorded, a pass when the command exits 0, a failure otherwise.
    #[arg(long, value_name = "INV", conflicts_with_all = ["task", "criterion"])]
    pub invariant: Option<String>,
    /// Kill the command, its process group and every process it left (setsid ones too) after this
    /// many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 600.0)]
    pub timeout: f64,
    /// Run the command in this folder (default: the root of the plan's repository, the nearest
    /// folder above the plan holding .git or .dwp/plans/; else the current folder).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Pass this variable of dwp's environment to the command (repeatable). By default it gets
    /// only PATH, LANG, LC_ALL, TMPDIR, the toolchain managers' folders (RUSTUP_HOME, CARGO_HOME,
    /// PYENV_ROOT, NVM_DIR) and selectors, and a private empty HOME.
    #[arg(long = "pass-env", value_name = "NAME")]
    pub pass_env: Vec<String>,
    /// Refuse (exit 3) unless state.json still has this sha256 when the gate is recorded.
    #[arg(long, value_name = "HEX")]
    pub expected_sha256: Option<String>,
    /// Once the command ended, retry a held lock for up to this many seconds (a run is costly
    /// to repeat, so the default waits).
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub wait: f64,
    #[command(flatten)]
    pub signed: Signature,
    /// The command to run, after `--`: argv, no shell (give one, `sh -c '...'`, to have one).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// The flags of a record plan's amendment: given one, the v5 amendment's flags are not required
/// (and are refused there).
const RECORD_AMEND_FLAGS: [&str; 3] = ["contract", "by", "note"];

#[derive(Debug, Args)]
pub struct AmendArgs {
    /// The plan folder, or its state.json (default: the plan folder this directory is in).
    #[arg(value_name = "PLAN")]
    pub target: Option<PathBuf>,
    /// The task whose criterion changes (its id, 1..N).
    #[arg(long, value_name = "N", required_unless_present_any = RECORD_AMEND_FLAGS)]
    pub task: Option<u64>,
    /// The original criterion, verbatim.
    #[arg(long, value_name = "TEXT", required_unless_present_any = RECORD_AMEND_FLAGS)]
    pub original: Option<String>,
    /// What was observed.
    #[arg(long, value_name = "TEXT", required_unless_present_any = RECORD_AMEND_FLAGS)]
    pub observed: Option<String>,
    /// revised criterion, deferred requirement, unexecuted scenario or failed gate.
    #[arg(long, value_name = "DISPOSITION", value_parser = parse_disposition, required_unless_present_any = RECORD_AMEND_FLAGS)]
    pub disposition: Option<Disposition>,
    /// The revised criterion (required with --disposition "revised criterion").
    #[arg(long, value_name = "TEXT")]
    pub revised: Option<String>,
    /// Why the criterion changes (a record plan: why its contract changes).
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// Who stands behind it: user, developer or evidence (a record plan's is a person: --by).
    #[arg(long, value_name = "AUTHORITY", value_parser = parse_authority, required_unless_present_any = RECORD_AMEND_FLAGS)]
    pub authority: Option<Authority>,
    /// The affected task ids, e.g. 2,3.
    #[arg(long, value_name = "IDS", required_unless_present_any = RECORD_AMEND_FLAGS)]
    pub affected: Option<String>,
    /// A record plan's amendment: the contract draft, the live contract edited, to become its
    /// next revision.
    #[arg(long, value_name = "DRAFT")]
    pub contract: Option<PathBuf>,
    /// A record plan's amendment: the human who authorizes the revision (its authority and
    /// approver).
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
    /// A record plan's amendment: the note the human wrote, recorded by its path and sha256 as
    /// the authority marker of the amendment and its approval.
    #[arg(long, value_name = "FILE")]
    pub note: Option<PathBuf>,
    /// A record plan's amendment: how the revision is approved (default: as the live contract
    /// says).
    #[arg(long, value_name = "MECHANISM", value_parser = ["plan_authorship", "pre_authorization"])]
    pub mechanism: Option<String>,
    /// The task a deferred requirement moves to (required with "deferred requirement").
    #[arg(long, value_name = "N")]
    pub destination: Option<u64>,
    /// A gate command whose records this amendment invalidates; the task returns to pending. Repeatable.
    #[arg(long, value_name = "COMMAND")]
    pub invalidate: Vec<String>,
    /// A gate command whose evidence stays valid. Repeatable.
    #[arg(long, value_name = "COMMAND")]
    pub preserve: Vec<String>,
    /// Refuse (exit 3) unless state.json still has this sha256.
    #[arg(long, value_name = "HEX")]
    pub expected_sha256: Option<String>,
    /// Retry a held lock for up to this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 0.0)]
    pub wait: f64,
    /// Check everything and print the diff of every file it would write; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub signed: Signature,
}

#[derive(Debug, Subcommand)]
pub enum LockCommand {
    /// Whether the lock is held, by whom, since when, and whether that process is alive.
    #[command(after_help = examples![
        "# Who holds the writer lock, since when, and whether that process still runs",
        "dwp lock status conformance-fixtures/valid-full-v5/PLAN_payment_webhooks",
        "# The same as one JSON document",
        "dwp lock status --json conformance-fixtures/valid-full-v5/PLAN_payment_webhooks",
    ])]
    Status {
        /// The plan folder, or its state.json (default: the plan folder this directory is in).
        #[arg(value_name = "PLAN")]
        target: Option<PathBuf>,
    },
    /// Remove the lock only when its owner is provably gone; prints what it inspected.
    #[command(after_help = examples![
        "# Remove the lock only if its owner is provably gone; prints what it inspected",
        "dwp lock recover conformance-fixtures/valid-full-v5/PLAN_payment_webhooks",
        "# Also remove a lock with no owner record that is 10 minutes old or older",
        "dwp lock recover conformance-fixtures/valid-full-v5/PLAN_payment_webhooks --older-than 600",
    ])]
    Recover {
        /// The plan folder, or its state.json (default: the plan folder this directory is in).
        #[arg(value_name = "PLAN")]
        target: Option<PathBuf>,
        /// Also remove a lock with no owner record (the reference tooling's) this old or older.
        #[arg(long, value_name = "SECONDS")]
        older_than: Option<u64>,
        /// Remove whatever holds it (another host's writer); needs --reason, appended to PROGRESS.md.
        #[arg(long, requires = "reason")]
        force: bool,
        /// Why the lock is forced (with --force).
        #[arg(long, value_name = "TEXT", requires = "force")]
        reason: Option<String>,
    },
}

/// `--task` of `dwp update`: a v1/v2/v5 plan's task number, or a record plan's task id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskArg {
    Number(u64),
    Id(String),
}

impl TaskArg {
    /// The task number a numbered plan's task has; a record plan's id is refused there.
    fn number(&self) -> Result<u64, Error> {
        match self {
            TaskArg::Number(number) => Ok(*number),
            TaskArg::Id(id) => Err(Error::Usage(format!(
                "--task {id} names a record plan's task; this plan numbers its tasks 1..N"
            ))),
        }
    }
}

fn parse_task(text: &str) -> Result<TaskArg, String> {
    if let Ok(number) = text.parse::<u64>() {
        return Ok(TaskArg::Number(number));
    }
    let id_words = text.strip_prefix("T-").map(|rest| rest.split('-'));
    let is_id = id_words.is_some_and(|mut words| {
        words.all(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
    });
    match is_id {
        true => Ok(TaskArg::Id(text.to_owned())),
        false => Err(format!(
            "`{text}` is no task: a task number (1..N) or a record plan's task id (T-...)"
        )),
    }
}

fn parse_status(text: &str) -> Result<TaskStatus, String> {
    text.parse()
}

fn parse_format(text: &str) -> Result<PlanFormat, String> {
    text.parse()
}

fn parse_disposition(text: &str) -> Result<Disposition, String> {
    text.parse()
}

fn parse_authority(text: &str) -> Result<Authority, String> {
    text.parse()
}

/// The plans `dwp new` makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewGeneration {
    V5,
    V7,
}

fn parse_new_generation(text: &str) -> Result<NewGeneration, String> {
    match text {
        "v5" => Ok(NewGeneration::V5),
        "v7" => Ok(NewGeneration::V7),
        _ => Err(format!(
            "`{text}` is not v5 or v7: dwp new makes a v5 plan, or a v7 record plan's markdown and contract draft"
        )),
    }
}

fn parse_generation(text: &str) -> Result<Generation, String> {
    match text {
        "v2" => Ok(Generation::V2),
        "v5" => Ok(Generation::V5),
        _ => Err(format!(
            "`{text}` is not v2 or v5: a v1 plan migrates to one of them"
        )),
    }
}

impl Command {
    fn name(&self) -> &'static str {
        match self {
            Command::Validate { .. } => "validate",
            Command::Update(_) => "update",
            Command::Run(_) => "run",
            Command::Amend(_) => "amend",
            Command::Approve { .. } => "approve",
            Command::Init { .. } => "init",
            Command::New { .. } => "new",
            Command::Migrate { .. } => "migrate",
            Command::Lock(LockCommand::Status { .. }) => "lock status",
            Command::Lock(LockCommand::Recover { .. }) => "lock recover",
            Command::Reconcile { .. } => "reconcile",
            Command::Status { .. } => "status",
            Command::Next { .. } => "next",
            Command::Verify { .. } => "verify",
            Command::Finalize { check: true, .. } => "finalize --check",
            Command::Finalize { recover: true, .. } => "finalize --recover",
            Command::Finalize { .. } => "finalize",
            Command::Loop(command) => command.name(),
            Command::Contract(command) => command.name(),
            Command::Schema { .. } => "schema",
            Command::Completions { .. } => "completions",
            Command::Man { .. } => "man",
        }
    }
}

impl Command {
    /// Whether the command has `--wait`, read from its clap definition: a hint tells only such
    /// a command to use it.
    fn can_wait(&self) -> bool {
        use clap::CommandFactory;
        let root = Cli::command();
        let mut command = &root;
        for word in self
            .name()
            .split_whitespace()
            .filter(|w| !w.starts_with('-'))
        {
            match command.find_subcommand(word) {
                Some(sub) => command = sub,
                None => return false,
            }
        }
        command
            .get_arguments()
            .any(|a| a.get_long() == Some("wait"))
    }
}

/// Run the command line and return the process exit code.
pub fn main() -> ExitCode {
    crate::steps::process::ignore_file_size_signal();
    crate::profile::start();
    // One command, then the process ends: the large trees it read are left to the OS.
    crate::dispose::free_nothing_at_exit();
    let exit = run_main();
    if let Some(timings) = crate::profile::report() {
        eprint!("{timings}");
    }
    exit
}

fn run_main() -> ExitCode {
    let parsed = crate::profile::time("parse arguments", help::parse);
    let cli = match parsed {
        Ok(cli) => cli,
        Err(refused) => return ExitCode::from(refuse_arguments(refused).code()),
    };
    let name = cli.command.name();
    let colour = decide_colours(cli.color);
    let mut out = Inert::new(std::io::stdout().lock()).coloured(colour);
    let ran = crate::profile::time("command", || run(&cli));
    let result = ran.and_then(|(outcome, format)| {
        let _stage = crate::profile::stage("render");
        if cli.quiet && format != Format::Json {
            // Rendered all the same, into nothing: warnings still reach stderr.
            render::print(&mut Inert::new(std::io::sink()), &outcome, format);
        } else {
            render::print(&mut out, &outcome, format);
        }
        written(out.flush()).map(|()| outcome.exit())
    });
    let exit = match result {
        Ok(exit) => exit,
        Err(error) => {
            // The one JSON document --json promises, unless the command already printed one.
            let hint = hint_for(name, &error, cli.command.can_wait());
            if cli.json && !out.has_written() {
                render::error_json(&mut out, name, &error, hint.as_deref());
                let _ = out.flush();
            }
            report_error(name, &error, hint.as_deref());
            error.exit()
        }
    };
    ExitCode::from(exit.code())
}

/// Run the one command the arguments name: its outcome, and the form to write it in.
fn run(cli: &Cli) -> Result<(Outcome, Format), Error> {
    let _ = RUNNING.set(cli.command.name());
    let format = if cli.json {
        Format::Json
    } else {
        Format::Human
    };
    let outcome = match &cli.command {
        Command::Validate { targets } => {
            let here = match targets.is_empty() {
                true => vec![plan_arg(&None)?],
                false => Vec::new(),
            };
            let results: Vec<_> = targets
                .iter()
                .chain(&here)
                .map(|t| crate::commands::validate::validate(&named_plan(t)))
                .collect();
            Outcome::Validate(results)
        }
        Command::Update(args) => match record_plan_to_write(&args.target)? {
            Some(dir) => Outcome::RecordUpdate(crate::commands::update::update_record(
                &dir,
                &record_update_request(args)?,
            )?),
            None => update_with_loops(args)?,
        },
        Command::Run(args) => {
            check_sha256(args.expected_sha256.as_deref())?;
            if !(args.timeout.is_finite() && args.timeout >= 1.0) {
                return Err(Error::Usage(format!(
                    "--timeout {} is not a number of seconds, 1 or more",
                    args.timeout
                )));
            }
            let timeout = std::time::Duration::from_secs(args.timeout.min(86_400.0) as u64);
            // The command's output goes to stderr as it comes: stdout stays dwp's own line, or
            // the one JSON document.
            let sink = Box::new(Inert::new(std::io::stderr()));
            match record_plan_to_write(&args.target)? {
                Some(dir) => Outcome::RecordRun(crate::commands::run::run_record(
                    &dir,
                    &record_run_request(&dir, args, timeout)?,
                    sink,
                )?),
                None => {
                    let record_only = [
                        (
                            args.criterion.is_some(),
                            "--criterion names a record plan's acceptance criterion",
                        ),
                        (
                            args.invariant.is_some(),
                            "--invariant names a record plan's invariant",
                        ),
                    ];
                    if let Some((_, flag)) = record_only.iter().find(|(given, _)| *given) {
                        return Err(Error::Usage(format!(
                            "{flag}; this plan's gates are its tasks' commands"
                        )));
                    }
                    let request = crate::commands::run::RunRequest {
                        task: args.task.as_ref().map(TaskArg::number).transpose()?,
                        argv: args.command.clone(),
                        cwd: args.cwd.clone(),
                        timeout,
                        pass_env: args.pass_env.clone(),
                        expected_sha256: args.expected_sha256.clone(),
                        wait: wait_duration(args.wait)?,
                        agent: args.signed.agent.clone(),
                        model: args.signed.model.clone(),
                    };
                    let mut ran =
                        crate::commands::run::run(&plan_to_write(&args.target)?, &request, sink)?;
                    // Where it ran, and its log, from where the user stands.
                    ran.cwd = shown_from_here(&ran.cwd);
                    ran.plan_dir = shown_from_here(&ran.plan_dir);
                    Outcome::Run(ran)
                }
            }
        }
        Command::Amend(args) => {
            if let Some(dir) = record_plan_to_write(&args.target)? {
                let request = record_amend_request(&dir, args)?;
                let amended = crate::commands::amend::amend_record(&dir, &request)?;
                return Ok((Outcome::RecordAmend(amended), format));
            }
            check_sha256(args.expected_sha256.as_deref())?;
            let request = amend_request(args)?;
            Outcome::Amend(crate::commands::amend::amend(
                &plan_to_write(&args.target)?,
                &request,
            )?)
        }
        Command::Approve {
            target,
            by,
            pre_approved,
            note,
            expected_sha256,
            wait,
            dry_run,
            signed,
        } => {
            if let Some(dir) = record_plan_to_write(target)? {
                let given = [
                    (expected_sha256.is_some(), "--expected-sha256"),
                    (*dry_run, "--dry-run"),
                ];
                let request = record_approve_request(&dir, by, *pre_approved, note, &given, *wait)?;
                let approved = crate::commands::approve::approve_record(&dir, &request)?;
                return Ok((Outcome::RecordApprove(approved), format));
            }
            if note.is_some() {
                return Err(Error::Usage(
                    "--note is a record plan's approval marker; this plan records its approval in its README and state.json".into(),
                ));
            }
            check_sha256(expected_sha256.as_deref())?;
            let request = crate::commands::approve::ApproveRequest {
                by: by.clone(),
                pre_approved: *pre_approved,
                expected_sha256: expected_sha256.clone(),
                wait: wait_duration(*wait)?,
                dry_run: *dry_run,
                agent: signed.agent.clone(),
                model: signed.model.clone(),
            };
            Outcome::Approve(crate::commands::approve::approve(
                &plan_to_write(target)?,
                &request,
            )?)
        }
        Command::Init {
            target,
            agent,
            model,
            standard,
            dry_run,
            contract: Some(contract),
            by,
            note,
            pre_approved,
            wait,
        } => {
            let given = [
                (agent.is_some() || model.is_some(), "--agent"),
                (standard.is_some(), "--standard"),
                (*dry_run, "--dry-run"),
            ];
            refuse_given(
                &given,
                "makes a v5 plan's manifest; with --contract, init makes a record plan",
            )?;
            let (Some(by), Some(note)) = (by, note) else {
                return Err(Error::Usage(
                    "--contract makes a record plan approved by a human: give --by NAME and --note FILE (the note they wrote)".into(),
                ));
            };
            let request = crate::commands::init::RecordInitRequest {
                contract: from_here(contract),
                by: by.clone(),
                pre_approved: *pre_approved,
                note: from_here(note),
                wait: wait_duration(*wait)?,
            };
            let dir = crate::plan::resolve_target(&plan_arg(target)?).0;
            Outcome::RecordInit(crate::commands::init::materialize_record(&dir, &request)?)
        }
        Command::Init {
            target,
            agent,
            model,
            standard,
            dry_run,
            ..
        } => {
            let creator = crate::commands::init::Creator {
                agent: agent.clone(),
                model: model.clone(),
            };
            let standard = standard.as_deref();
            Outcome::Init(crate::commands::init::init(
                &plan_to_write(target)?,
                &creator,
                standard,
                *dry_run,
            )?)
        }
        Command::New {
            target,
            format,
            generation,
            tasks,
            title,
            goal,
            context,
            agent,
            model,
        } => {
            if *generation == Some(NewGeneration::V7) {
                let v5_only = [
                    (format.is_some(), "--format"),
                    (agent.is_some() || model.is_some(), "--agent and --model"),
                ];
                refuse_given(
                    &v5_only,
                    "belongs to a v5 plan: a v7 record plan's markdown is free-form, and its manifest is written by `dwp init --contract`",
                )?;
                let request = crate::commands::new::RecordNewRequest {
                    tasks: tasks.clone(),
                    title: title.clone(),
                    goal: goal.clone(),
                    context: context.clone(),
                };
                Outcome::RecordNew(crate::commands::new::new_record(
                    &from_here(target),
                    &request,
                )?)
            } else {
                let request = crate::commands::new::NewRequest {
                    format: format.unwrap_or(PlanFormat::Full),
                    tasks: tasks.clone(),
                    title: title.clone(),
                    goal: goal.clone(),
                    context: context.clone(),
                    creator: crate::commands::init::Creator {
                        agent: agent.clone(),
                        model: model.clone(),
                    },
                };
                Outcome::New(crate::commands::new::new(&from_here(target), &request)?)
            }
        }
        Command::Migrate {
            target,
            to,
            dry_run,
            signed,
        } => Outcome::Migrate(crate::commands::migrate::migrate(
            &plan_to_write(target)?,
            *to,
            *dry_run,
            &signed.actor(),
        )?),
        Command::Lock(LockCommand::Status { target }) => {
            let (lock, holder) = crate::commands::lock::status(&plan_to_lock(target)?)?;
            Outcome::LockStatus { holder, lock }
        }
        Command::Lock(LockCommand::Recover {
            target,
            older_than,
            force,
            reason,
        }) => {
            let (lock, recovery) = crate::commands::lock::recover(
                &plan_to_lock(target)?,
                older_than.map(std::time::Duration::from_secs),
                *force,
                reason.as_deref(),
            )?;
            Outcome::LockRecover { lock, recovery }
        }
        Command::Reconcile {
            target,
            write,
            diff,
            dry_run,
            git,
            expected_sha256,
            wait,
            drop_task,
            signed,
        } => {
            check_sha256(expected_sha256.as_deref())?;
            let request = crate::commands::reconcile::ReconcileRequest {
                write: *write,
                dry_run: *dry_run,
                diff: *diff,
                git: *git,
                expected_sha256: expected_sha256.clone(),
                wait: wait_duration(*wait)?,
                drop: drop_task.iter().copied().collect(),
                agent: signed.agent.clone(),
                model: signed.model.clone(),
            };
            match record_plan_to_write(target)? {
                Some(dir) => Outcome::RecordReconcile(
                    crate::commands::reconcile::reconcile_record(&dir, &request)?,
                ),
                None => Outcome::Reconcile {
                    report: crate::commands::reconcile::reconcile(
                        &plan_to_write(target)?,
                        &request,
                    )?,
                    write: *write,
                },
            }
        }
        Command::Verify {
            targets,
            all,
            strict,
            strict_evidence,
            format,
        } => {
            let strictness = crate::commands::verify::Strictness {
                advisories: *strict,
                evidence: *strict_evidence,
            };
            let format = match (cli.json, format) {
                (true, VerifyFormat::Sarif) => {
                    return Err(Error::Usage(
                        "--json and --format sarif ask for two formats; give one".into(),
                    ));
                }
                (true, _) => Format::Json,
                (false, format) => (*format).into(),
            };
            let reports = if *all {
                let root = match targets.as_slice() {
                    [] => workspace_arg(None)?,
                    [root] => workspace_arg(Some(root))?,
                    _ => return Err(Error::Usage("--all takes at most one ROOT".into())),
                };
                let progress = render::progress::Bar::for_terminal(cli.quiet);
                // Each plan named from here, the root itself too when it is here.
                let plans: Vec<PathBuf> = crate::plan::plan_dirs(&root)?
                    .iter()
                    .map(|plan| from_here(plan))
                    .collect();
                crate::commands::verify::verify_many(&plans, strictness, &progress)
            } else if targets.is_empty() {
                let silent = crate::commands::verify::Silent;
                crate::commands::verify::verify_many(&[plan_arg(&None)?], strictness, &silent)
            } else {
                let progress = render::progress::Bar::for_terminal(cli.quiet);
                let targets: Vec<PathBuf> = targets.iter().map(|t| named_plan(t)).collect();
                crate::commands::verify::verify_many(&targets, strictness, &progress)
            };
            let (strict, all) = (*strict, *all);
            return Ok((
                Outcome::Verify {
                    reports,
                    strict,
                    all,
                },
                format,
            ));
        }
        Command::Status { target, all } => {
            // A repository root (holding .dwp/plans/, not itself a plan) lists its plans.
            let workspace =
                |dir: &Path| crate::plan::is_workspace(dir) && !crate::plan::is_plan_folder(dir);
            let plan = match target {
                _ if *all => None,
                Some(dir) if workspace(dir) => None,
                Some(target) => Some(plan_arg(&Some(target.clone()))?),
                // At a repository root every plan is listed, none picked.
                None => std::env::current_dir()
                    .ok()
                    .and_then(|here| crate::plan::discover_plan(&here)),
            };
            match plan {
                Some(plan) if crate::plan::record::is_record_plan(&plan) => {
                    Outcome::RecordStatus(crate::commands::status::summarize_record(&plan)?)
                }
                Some(plan) => Outcome::Status(crate::commands::status::summarize(&plan)?),
                None => {
                    let root = workspace_arg(target.as_deref())?;
                    let mut lines = crate::commands::status::summarize_all(&root)?;
                    for line in &mut lines {
                        line.dir = from_here(&line.dir);
                    }
                    Outcome::StatusAll(lines)
                }
            }
        }
        Command::Next { target } => {
            let plan = plan_arg(target)?;
            if crate::plan::record::is_record_plan(&plan) {
                Outcome::RecordNext(crate::commands::next::ready_set(&plan)?)
            } else {
                Outcome::Next(crate::commands::next::next(&plan)?)
            }
        }
        Command::Finalize {
            target,
            check: true,
            ..
        } => Outcome::FinalizeCheck {
            findings: crate::commands::finalize::check(&plan_to_write(target)?)?,
            plan: plan_arg(target)?,
        },
        Command::Finalize {
            target,
            candidate,
            expected_sha256,
            recover,
            wait,
            signed,
            ..
        } => {
            check_sha256(expected_sha256.as_deref())?;
            let request = crate::commands::finalize::FinalizeRequest {
                candidate: candidate.clone(),
                expected_sha256: expected_sha256.clone(),
                recover: *recover,
                wait: wait_duration(*wait)?,
                signer: signed.actor(),
            };
            Outcome::Finalize {
                publication: crate::commands::finalize::finalize(
                    &plan_to_write(target)?,
                    &request,
                )?,
                recover: *recover,
            }
        }
        Command::Loop(command) => return loop_cmd::run(command, cli.json),
        Command::Contract(command) => contract_cmd::run(command)?,
        Command::Schema { name: None } => Outcome::SchemaList(crate::commands::schema::list()),
        Command::Schema { name: Some(name) } => {
            Outcome::Schema(crate::commands::schema::get(name)?)
        }
        Command::Completions { shell } => Outcome::Completions {
            shell: shell.to_string(),
            script: help::completions(*shell),
        },
        Command::Man { path } => {
            let (page, roff) = help::man(path)?;
            Outcome::Man { page, roff }
        }
    };
    Ok((outcome, format))
}

/// What a write to stdout that failed means, decided in this one place: a reader that stopped
/// early (`dwp verify ... | head`) is not a failure to report, so the command exits as if it
/// had written; any other failure is an I/O failure.
fn written(result: std::io::Result<()>) -> Result<(), Error> {
    match result {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Error::io("write", std::path::Path::new("<stdout>"), e))
        }
        _ => Ok(()),
    }
}

/// The PLAN argument, or, left out, the plan folder the current directory is in (found the
/// way git finds its repository: this folder or the nearest one above).
fn plan_arg(target: &Option<PathBuf>) -> Result<PathBuf, Error> {
    let plan = plan_arg_as_given(target)?;
    if crate::store::is_absent(&plan) {
        return Err(Error::Usage(format!(
            "not a plan: nothing exists at this path; give a plan folder or its state.json ({})",
            plan.display()
        )));
    }
    Ok(plan)
}

/// [`plan_arg`] for a command that writes only v5 plans: a record plan (DWP v6/v7) is refused,
/// whole, before anything is read for writing, naming the commands that do write it (rule 18 of
/// docs/record-plans.md: a runner that does not run their loop says so and stops).
fn plan_to_write(target: &Option<PathBuf>) -> Result<PathBuf, Error> {
    let plan = plan_arg(target)?;
    let (dir, _) = crate::plan::resolve_target(&plan);
    if crate::plan::record::is_record_plan(&dir) {
        let word = crate::term::path_word(&dir);
        return Err(Error::rejected(
            dir.display().to_string(),
            "is a record plan (DWP v6/v7: a contract, an append-only journal, a derived state.json): this command writes v5 plans only, and writes nothing here; a record plan is written by `dwp init --contract`, `approve`, `update`, `run`, `amend` and `reconcile --write`",
        )
        .with_hint(format!("`dwp next {word}` says what comes next in it")));
    }
    Ok(plan)
}

/// The first of `flags` (given, its name) that was given, refused as a usage error: `FLAG
/// {why}` (a flag of one kind of plan given for the other).
fn refuse_given(flags: &[(bool, &str)], why: &str) -> Result<(), Error> {
    match flags.iter().find(|(given, _)| *given) {
        Some((_, flag)) => Err(Error::Usage(format!("{flag} {why}"))),
        None => Ok(()),
    }
}

/// [`plan_arg`] for `dwp lock status` and `dwp lock recover`: a record plan is taken too (not
/// refused as [`plan_to_write`] refuses it), since its lock is the public ledger's own
/// `.ledger.lock`, which dwp inspects and recovers like any plan's (`plan::lock_target`).
fn plan_to_lock(target: &Option<PathBuf>) -> Result<PathBuf, Error> {
    plan_arg(target)
}

/// The folder of the record plan (DWP v6/v7) `target` names, for a command that writes record
/// plans (`None`: it names another plan, for [`plan_to_write`]).
fn record_plan_to_write(target: &Option<PathBuf>) -> Result<Option<PathBuf>, Error> {
    let plan = plan_arg(target)?;
    let (dir, _) = crate::plan::resolve_target(&plan);
    Ok(crate::plan::record::is_record_plan(&dir).then_some(dir))
}

/// [`plan_arg`] without its check that the plan exists: the file contract's hook reports a plan
/// that is gone through its own ladder (it must let the agent stop in the end).
fn plan_arg_as_given(target: &Option<PathBuf>) -> Result<PathBuf, Error> {
    if let Some(target) = target {
        return Ok(named_plan(target));
    }
    let here = std::env::current_dir().map_err(|e| Error::io("read", Path::new("."), e))?;
    if let Some(plan) = crate::plan::discover_plan(&here) {
        return Ok(plan);
    }
    if crate::plan::is_repository_root(&here) {
        return plan_at_root(&here);
    }
    Err(Error::Usage(format!(
        "no PLAN given, and {} is in no plan folder: name the plan folder (PLAN_* with README.md, state.json or manifest.json)",
        here.display()
    )))
}

/// A PLAN argument as a path ([`from_here`]). At a repository root, a bare plan name that names
/// nothing here is the plan of that name under `.dwp/plans/`, where `dwp new PLAN_x` made it.
fn named_plan(target: &Path) -> PathBuf {
    let bare =
        target.components().count() == 1 && target.to_str().is_some_and(crate::plan::is_plan_name);
    if bare && crate::store::is_absent(target) {
        let here = Path::new(".");
        let home = crate::plan::plan_home(here, &target.to_string_lossy());
        if crate::plan::is_repository_root(here) && !crate::store::is_absent(&home) {
            return home
                .strip_prefix(here)
                .map_or(home.clone(), Path::to_path_buf);
        }
    }
    from_here(target)
}

/// A path as everything dwp prints names it, text and JSON alike: relative to the current
/// directory when it lies under it (`/repo/.dwp/plans/PLAN_x` run from `/repo` is
/// `.dwp/plans/PLAN_x`), else as given. Every path a command prints derives from its
/// arguments, so the arguments are taken this way once, here.
pub(crate) fn from_here(path: &Path) -> PathBuf {
    let here = match std::env::current_dir() {
        Ok(here) if path.is_absolute() => here,
        _ => return path.to_path_buf(),
    };
    match path.strip_prefix(&here) {
        Ok(rest) if !rest.as_os_str().is_empty() => rest.to_path_buf(),
        _ => path.to_path_buf(),
    }
}

/// [`from_here`], and `.` for the current directory itself.
fn shown_from_here(path: &Path) -> PathBuf {
    match std::env::current_dir() {
        Ok(here) if here == path => PathBuf::from("."),
        _ => from_here(path),
    }
}

/// The command this process runs, for a note printed on the way ([`plan_at_root`]).
static RUNNING: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// The plan a command takes at the repository root `here` (the current directory) when none is
/// named ([`crate::plan::pick_plan`]), as a path from `here` ([`from_here`]); or the usage error
/// that lists the candidates, each as a PLAN argument that works from here.
fn plan_at_root(here: &Path) -> Result<PathBuf, Error> {
    const LISTED: usize = 10;
    // Taken once per process: a command that asks twice (a record plan's writer or another)
    // gets the same plan, and the note is printed once.
    static TAKEN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    if let Some(plan) = TAKEN.get() {
        return Ok(plan.clone());
    }
    let candidates = match crate::plan::pick_plan(here, crate::rules::record::view::in_progress) {
        Ok((plan, why)) => {
            // Said, since the command may write: the user sees which plan it took.
            let plan = from_here(&plan);
            let _ = writeln!(
                stderr(),
                "dwp {}: no PLAN given: taking {}, {why} under .dwp/plans/",
                RUNNING.get().copied().unwrap_or_default(),
                crate::term::path_word(&plan)
            );
            return Ok(TAKEN.get_or_init(|| plan).clone());
        }
        Err(candidates) => candidates,
    };
    if candidates.is_empty() {
        return Err(Error::Usage(format!(
            "no PLAN given, and the repository at {} has no plans under .dwp/plans/: name a plan folder, or make one with `dwp new`",
            here.display()
        )));
    }
    let mut named: Vec<String> = candidates
        .iter()
        .take(LISTED)
        .map(|dir| crate::term::path_word(&from_here(dir)))
        .collect();
    if candidates.len() > LISTED {
        named.push(format!(
            "and {} more (`dwp status` lists them)",
            candidates.len() - LISTED
        ));
    }
    Err(Error::Usage(format!(
        "no PLAN given, and of the {} plans under .dwp/plans/ not exactly one is in progress: name one of {}",
        candidates.len(),
        named.join(", ")
    )))
}

/// The repository ROOT argument of `--all`, or, left out, the repository the current directory
/// is in (this folder or the nearest one above holding `.dwp/plans/`).
fn workspace_arg(root: Option<&Path>) -> Result<PathBuf, Error> {
    if let Some(root) = root {
        return Ok(root.to_path_buf());
    }
    let here = std::env::current_dir().map_err(|e| Error::io("read", Path::new("."), e))?;
    crate::plan::discover_workspace(&here).ok_or_else(|| {
        Error::Usage(format!(
            "no ROOT given, and {} is in no repository with .dwp/plans/: name the repository root",
            here.display()
        ))
    })
}

/// The request of `dwp update`, and the `--gates-from` outcomes in order (the asserted ones
/// are among the request's gates; the observed ones are recorded by the update, under its lock).
fn update_request(
    args: &UpdateArgs,
) -> Result<
    (
        crate::commands::update::UpdateRequest,
        Vec<crate::commands::r#loop::gates::OutcomeGate>,
    ),
    Error,
> {
    let now = crate::clock::now_rfc3339();
    let mut gates = Vec::new();
    for spec in &args.gate {
        gates.push(gate_flags::parse_gate_spec(spec, &now)?);
    }
    for text in &args.gate_json {
        gates.push(gate_flags::parse_gate_json(text, &now)?);
    }
    let mut from_loops = Vec::new();
    for path in &args.gates_from {
        from_loops.extend(crate::commands::r#loop::gates::gates_from_verify(path)?);
    }
    for outcome in &from_loops {
        if let GateFrom::Asserted { gate, .. } = &outcome.gate {
            gates.push(gate.clone());
        }
    }
    let wait = wait_duration(args.wait)?;
    let request = crate::commands::update::UpdateRequest {
        task: args.task.number()?,
        status: Some(args.status),
        gates,
        block_reason: args.block_reason.clone(),
        block_needs: args.block_needs.clone(),
        resolve_blocker: args.resolve_blocker,
        reopen_reason: args.reopen_reason.clone(),
        expected_sha256: args.expected_sha256.clone(),
        worked: args.worked.clone(),
        tried: args.tried.clone(),
        failed: args.failed.clone(),
        notes: args.notes.clone(),
        commit: args.commit.clone(),
        checkpoint_step: args.checkpoint_step.clone(),
        checkpoint_note: args.checkpoint_note.clone(),
        agent: args.agent.clone(),
        model: args.model.clone(),
        wait,
        dry_run: args.dry_run,
        invalidate: Vec::new(),
        tick: args.tick,
    };
    Ok((request, from_loops))
}

/// `dwp update`, the `--gates-from` outcomes dwp observed recorded as `dwp run` records its
/// own; the outcome, and what became of each `--gates-from` outcome.
fn update_with_loops(args: &UpdateArgs) -> Result<Outcome, Error> {
    use crate::commands::r#loop::gates::GateNote;
    let (request, from_loops) = update_request(args)?;
    let observed: Vec<_> = from_loops
        .iter()
        .filter_map(|o| match &o.gate {
            GateFrom::Observed(run) => Some(run.clone()),
            GateFrom::Asserted { .. } => None,
        })
        .collect();
    let target = plan_to_write(&args.target)?;
    let (outcome, logs) = crate::commands::update::update_observing(&target, &request, &observed)?;
    let mut logs = logs.into_iter();
    let gates_from = from_loops
        .iter()
        .map(|o| {
            let file = o.file.display().to_string();
            match &o.gate {
                GateFrom::Observed(run) => {
                    let log = logs.next();
                    GateNote {
                        file,
                        outcome: o.id.clone(),
                        command: run.command(),
                        recorded: "observed",
                        log_sha256: log.as_ref().map(|l| l.sha256.clone()),
                        log: log.map(|l| l.name),
                        why: None,
                    }
                }
                GateFrom::Asserted { gate, why } => GateNote {
                    file,
                    outcome: o.id.clone(),
                    command: gate.command.clone(),
                    recorded: "asserted",
                    log: None,
                    log_sha256: None,
                    why: Some(why.clone()),
                },
            }
        })
        .collect();
    Ok(Outcome::Update {
        outcome,
        target,
        gates_from,
    })
}

/// `dwp update` of a record plan's task: `--status in_progress` starts it, `--status
/// completed` asks for the completion its journal derives; every flag that records what a v5
/// state holds is refused, as a record plan keeps no such record.
fn record_update_request(
    args: &UpdateArgs,
) -> Result<crate::commands::update::RecordUpdateRequest, Error> {
    use crate::commands::update::RecordTransition;
    let TaskArg::Id(task) = &args.task else {
        return Err(Error::Usage(format!(
            "--task {}: a record plan names its tasks by id (T-...); `dwp status` lists them",
            args.task.number().unwrap_or_default()
        )));
    };
    let transition = match args.status {
        TaskStatus::InProgress => RecordTransition::Start,
        TaskStatus::Completed => RecordTransition::Complete,
        other => {
            return Err(Error::Usage(format!(
                "--status {}: a record plan's task is started (in_progress) or found completed (completed); its other states derive from its journal",
                other.as_str()
            )));
        }
    };
    let v5_only = [
        (args.tick, "--tick"),
        (
            !args.gate.is_empty() || !args.gate_json.is_empty(),
            "--gate",
        ),
        (!args.gates_from.is_empty(), "--gates-from"),
        (
            args.block_reason.is_some() || args.block_needs.is_some(),
            "--block-reason",
        ),
        (args.resolve_blocker, "--resolve-blocker"),
        (args.reopen_reason.is_some(), "--reopen-reason"),
        (args.expected_sha256.is_some(), "--expected-sha256"),
        (args.worked.is_some() || args.notes.is_some(), "--worked"),
        (!args.tried.is_empty() || !args.failed.is_empty(), "--tried"),
        (args.commit.is_some(), "--commit"),
        (
            args.checkpoint_step.is_some() || args.checkpoint_note.is_some(),
            "--checkpoint-step",
        ),
        (args.dry_run, "--dry-run"),
    ];
    refuse_given(
        &v5_only,
        "records what a v5 state holds; a record plan's journal records starts, gate runs (`dwp run`) and refusals, and derives the rest",
    )?;
    Ok(crate::commands::update::RecordUpdateRequest {
        task: task.clone(),
        transition,
        agent: args.agent.clone(),
        wait: wait_duration(args.wait)?,
    })
}

/// `dwp approve` of a record plan: a human's approval, so `--note FILE` (their note) is
/// required; the flags that guard a v5 state are refused.
fn record_approve_request(
    dir: &Path,
    by: &str,
    pre_approved: bool,
    note: &Option<PathBuf>,
    given: &[(bool, &str)],
    wait: f64,
) -> Result<crate::commands::approve::RecordApproveRequest, Error> {
    refuse_given(
        given,
        "guards a v5 state; a record plan's approval is an event appended to its journal",
    )?;
    let Some(note) = note else {
        return Err(Error::Usage(format!(
            "a record plan's approval is a human's: give --note FILE, the note they wrote (recorded by its path and sha256): `dwp approve {} --by {} --note FILE`",
            crate::term::path_word(dir),
            crate::term::shell_word(by),
        )));
    };
    Ok(crate::commands::approve::RecordApproveRequest {
        by: by.to_owned(),
        pre_approved,
        note: from_here(note),
        wait: wait_duration(wait)?,
    })
}

/// `dwp run` on a record plan: the task by id and the criterion are required; every flag that
/// records what a v5 state holds, or runs the gate elsewhere than the public ledger runs it, is
/// refused.
fn record_run_request(
    plan_dir: &Path,
    args: &RunArgs,
    timeout: std::time::Duration,
) -> Result<crate::commands::run::RecordRunRequest, Error> {
    let v5_only = [
        (args.cwd.is_some(), "--cwd"),
        (args.expected_sha256.is_some(), "--expected-sha256"),
        (
            args.signed.agent.is_some() || args.signed.model.is_some(),
            "--agent",
        ),
    ];
    refuse_given(
        &v5_only,
        "belongs to a v5 plan's gate record; a record plan's gate runs at its repository root, as the public ledger runs it, and its gate_run is dwp's own",
    )?;
    let subject = match &args.invariant {
        Some(id) => crate::commands::run::RunSubject::Invariant(id.clone()),
        None => record_gate_subject(plan_dir, args)?,
    };
    Ok(crate::commands::run::RecordRunRequest {
        subject,
        argv: args.command.clone(),
        timeout,
        pass_env: args.pass_env.clone(),
        wait: wait_duration(args.wait)?,
    })
}

/// A record plan's gate names its task by id and the criterion it is evidence for.
fn record_gate_subject(
    plan_dir: &Path,
    args: &RunArgs,
) -> Result<crate::commands::run::RunSubject, Error> {
    let task = match &args.task {
        Some(TaskArg::Id(task)) => task.clone(),
        Some(TaskArg::Number(number)) => {
            return Err(Error::Usage(format!(
                "--task {number}: a record plan names its tasks by id (T-...); `dwp status` lists them"
            )));
        }
        None => {
            return Err(Error::Usage(
                "a record plan's gate names its task: --task T-... (`dwp status` lists them)"
                    .into(),
            ));
        }
    };
    let Some(criterion) = args.criterion.clone() else {
        let plan = crate::term::path_word(plan_dir);
        return Err(Error::Usage(format!(
            "a record plan's gate names the criterion it is evidence for: --criterion AC-..., one of {task}'s gate_intent (\"some command exited 0\" is not acceptance evidence); `dwp next {plan}` prints the line to run"
        )));
    };
    Ok(crate::commands::run::RunSubject::Gate { task, criterion })
}

/// `dwp amend` of a record plan: a new revision of its contract, so `--contract`, `--by` and
/// `--note` (the human's marker, rule 12) are required, and the v5 amendment's flags refused.
fn record_amend_request(
    dir: &Path,
    args: &AmendArgs,
) -> Result<crate::commands::amend::RecordAmendRequest, Error> {
    let v5_only = [
        (args.task.is_some(), "--task"),
        (args.original.is_some(), "--original"),
        (args.observed.is_some(), "--observed"),
        (args.disposition.is_some(), "--disposition"),
        (args.revised.is_some(), "--revised"),
        (args.authority.is_some(), "--authority"),
        (args.affected.is_some(), "--affected"),
        (args.destination.is_some(), "--destination"),
        (!args.invalidate.is_empty(), "--invalidate"),
        (!args.preserve.is_empty(), "--preserve"),
        (args.expected_sha256.is_some(), "--expected-sha256"),
        (args.dry_run, "--dry-run"),
        (
            args.signed.agent.is_some() || args.signed.model.is_some(),
            "--agent",
        ),
    ];
    let usage = || {
        format!(
            "`dwp amend {} --contract DRAFT --by NAME --reason TEXT --note FILE`",
            crate::term::path_word(dir)
        )
    };
    refuse_given(
        &v5_only,
        &format!(
            "belongs to a v5 plan's amendment record; a record plan's amendment is the next revision of its contract, approved by a human (the authority is --by NAME): {}",
            usage()
        ),
    )?;
    let (Some(contract), Some(by), Some(note)) = (&args.contract, &args.by, &args.note) else {
        return Err(Error::Usage(format!(
            "a record plan's amendment is a new revision of its contract, authorized by a human: give --contract DRAFT, --by NAME and --note FILE (the note they wrote): {}",
            usage()
        )));
    };
    Ok(crate::commands::amend::RecordAmendRequest {
        contract: from_here(contract),
        by: by.clone(),
        reason: args.reason.clone(),
        note: from_here(note),
        mechanism: args.mechanism.clone(),
        wait: wait_duration(args.wait)?,
    })
}

fn amend_request(args: &AmendArgs) -> Result<crate::commands::amend::AmendRequest, Error> {
    let record_only = [
        (args.contract.is_some(), "--contract"),
        (args.by.is_some(), "--by"),
        (args.note.is_some(), "--note"),
        (args.mechanism.is_some(), "--mechanism"),
    ];
    refuse_given(
        &record_only,
        "amends a record plan's contract; this plan records its amendment in the task's log: --task, --original, --observed, --disposition, --authority, --affected",
    )?;
    // clap requires each of them unless a record plan's flag is given, refused above.
    let missing = |flag: &str| Error::Usage(format!("{flag} is required (command line)"));
    Ok(crate::commands::amend::AmendRequest {
        task: args.task.ok_or_else(|| missing("--task"))?,
        original: args.original.clone().ok_or_else(|| missing("--original"))?,
        observed: args.observed.clone().ok_or_else(|| missing("--observed"))?,
        disposition: args.disposition.ok_or_else(|| missing("--disposition"))?,
        revised: args.revised.clone(),
        reason: args.reason.clone(),
        authority: args.authority.ok_or_else(|| missing("--authority"))?,
        affected: args.affected.clone().ok_or_else(|| missing("--affected"))?,
        destination: args.destination,
        invalidate: args.invalidate.clone(),
        preserve: args.preserve.clone(),
        expected_sha256: args.expected_sha256.clone(),
        wait: wait_duration(args.wait)?,
        dry_run: args.dry_run,
        agent: args.signed.agent.clone(),
        model: args.signed.model.clone(),
    })
}

fn wait_duration(seconds: f64) -> Result<std::time::Duration, Error> {
    if !(seconds.is_finite() && seconds >= 0.0) {
        return Err(Error::Usage(format!(
            "--wait {seconds} is not a number of seconds"
        )));
    }
    Ok(std::time::Duration::from_secs_f64(seconds.min(86_400.0)))
}

fn check_sha256(expected: Option<&str>) -> Result<(), Error> {
    match expected {
        Some(hex)
            if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) =>
        {
            Err(Error::Usage(format!(
                "--expected-sha256 `{hex}` is not 64 lower-case hex digits"
            )))
        }
        _ => Ok(()),
    }
}

/// Whether stderr colours (`--color`, the environment, a terminal), decided once the command
/// line is read; before that (clap's own refusals), as `--color auto` decides.
static STDERR_COLOUR: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// stderr, through the same inert sink as stdout, painting its prefixes when it colours.
pub(crate) fn stderr() -> Inert<std::io::StderrLock<'static>> {
    use std::io::IsTerminal;
    let colour = *STDERR_COLOUR
        .get_or_init(|| render::use_colour(ColorChoice::Auto, std::io::stderr().is_terminal()));
    Inert::new(std::io::stderr().lock()).coloured(colour)
}

/// Whether stdout colours under `choice`; stderr's answer is kept for [`stderr`].
fn decide_colours(choice: ColorChoice) -> bool {
    use std::io::IsTerminal;
    let _ = STDERR_COLOUR.set(render::use_colour(choice, std::io::stderr().is_terminal()));
    render::use_colour(choice, std::io::stdout().is_terminal())
}

/// `  hint: TEXT` on stderr, the prefix painted.
pub(crate) fn write_hint<W: Write>(err: &mut Inert<W>, indent: &str, hint: &str) {
    let _ = write!(err, "{indent}");
    let _ = err.paint("hint:", crate::term::Paint::Hint);
    let _ = writeln!(err, " {hint}");
}

/// What to do next after `error` of `command`: the error's own hint, and for a usage error the
/// help that lists the command's arguments.
fn hint_for(command: &str, error: &Error, can_wait: bool) -> Option<String> {
    match error {
        Error::Usage(_) => Some(help_hint(command)),
        _ => error.hint_for(can_wait),
    }
}

fn help_hint(command: &str) -> String {
    match command {
        "" => "`dwp --help` lists the commands".to_owned(),
        command => format!(
            "`dwp {} --help` lists its arguments",
            command.split(" --").next().unwrap_or(command)
        ),
    }
}

/// Whether a word of `args` after the command names a record plan's folder (a command line
/// clap refused, so which word is the PLAN argument is not known).
fn names_a_record_plan(args: &[String]) -> bool {
    args.iter()
        .skip(1)
        .filter(|arg| !arg.starts_with('-'))
        .any(|arg| crate::plan::record::is_record_plan(Path::new(arg)))
}

/// A command line clap refuses, told the way dwp tells its own usage errors: `dwp <command>:
/// <what> (command line)`, a hint naming the help that lists the arguments (after clap's own
/// tip, when it has one), exit 2, and with `--json` the one JSON document. A request for help
/// or the version prints as clap prints it.
fn refuse_arguments(refused: clap::Error) -> Exit {
    use clap::error::ErrorKind;
    if matches!(
        refused.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = refused.print();
        return if refused.use_stderr() {
            Exit::Usage
        } else {
            Exit::Ok
        };
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(choice) = colour_asked(&args) {
        decide_colours(choice);
    }
    let command = command_named(&args);
    let rendered = refused.render().to_string();
    // clap's first paragraph says what is wrong (a list of missing arguments runs over lines).
    let what = rendered
        .lines()
        .take_while(|line| !line.trim().is_empty())
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    let what = what.trim_start_matches("error: ");
    let record_amend = command == "amend"
        && refused.kind() == ErrorKind::MissingRequiredArgument
        && names_a_record_plan(&args);
    let what = match record_amend {
        true => {
            "a record plan is amended by the next revision of its contract: --contract DRAFT --by NAME --reason TEXT --note FILE (the v5 amendment's flags do not apply)"
        }
        false => what,
    };
    let mut hints: Vec<String> = rendered
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("tip: "))
        .map(String::from)
        .collect();
    hints.push(help_hint(&command));
    let error = Error::Usage(format!("{what} (command line)"));
    let hint = hints.join("; ");
    let name = if command.is_empty() {
        "dwp"
    } else {
        command.as_str()
    };
    if args.iter().any(|a| a == "--json") {
        let mut out = Inert::new(std::io::stdout().lock());
        render::error_json(&mut out, name, &error, Some(&hint));
        let _ = out.flush();
    }
    let mut err = stderr();
    let prefix = if command.is_empty() {
        "dwp".to_owned()
    } else {
        format!("dwp {command}")
    };
    let _ = err.paint(&format!("{prefix}:"), crate::term::Paint::Alarm);
    let _ = writeln!(err, " {error}");
    write_hint(&mut err, "  ", &hint);
    Exit::Usage
}

/// The `--color WHEN` (or `--color=WHEN`) of raw arguments clap refused, when it names one.
fn colour_asked(args: &[String]) -> Option<ColorChoice> {
    use clap::ValueEnum;
    let value = args
        .iter()
        .enumerate()
        .find_map(|(i, arg)| match arg.as_str() {
            "--color" => args.get(i + 1).map(String::as_str),
            _ => arg.strip_prefix("--color="),
        })?;
    ColorChoice::from_str(value, false).ok()
}

/// The (sub)command the raw arguments name, as far as clap's definition knows it: `update`,
/// `lock recover`; empty when they name none. The value of a global `--color` is no word of it.
fn command_named(args: &[String]) -> String {
    use clap::CommandFactory;
    let root = Cli::command();
    let mut command = &root;
    let mut words = Vec::new();
    let words_given = args
        .iter()
        .enumerate()
        .filter(|(i, a)| !a.starts_with('-') && (*i == 0 || args[i - 1] != "--color"));
    for (_, arg) in words_given {
        match command.find_subcommand(arg) {
            Some(sub) => {
                words.push(sub.get_name().to_owned());
                command = sub;
            }
            None => break,
        }
    }
    words.join(" ")
}

fn report_error(command: &str, error: &Error, hint: Option<&str>) {
    let mut err = stderr();
    let _ = err.paint(&format!("dwp {command}:"), crate::term::Paint::Alarm);
    let _ = writeln!(err, " {error}");
    if let Some(hint) = hint {
        write_hint(&mut err, "  ", hint);
    }
}
