//! `dwp loop ...`: arguments only; the logic is in [`crate::commands::r#loop`], the rendering in
//! `cli::render`.

use super::help::examples;
use super::outcome::Outcome;
use super::render::Format;
use crate::commands::r#loop::artifacts::{self, Artifact};
use crate::commands::r#loop::changed::ChangedSource;
use crate::commands::r#loop::{dod, issue, prove};
use crate::error::Error;
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Subcommand)]
pub enum LoopCommand {
    /// Check .ak-loop/plan.md, verify.json and dod.json: present, missing (named) or invalid.
    #[command(after_help = examples![
        "# Which phase artifacts a worktree has (exit 1 until loop prove writes verify.json)",
        "dwp loop artifacts examples/loop-worktree   # exit 1",
        "# A dispatch without a worktree: the gate is left out",
        "dwp loop artifacts --no-worktree",
    ])]
    Artifacts(ArtifactsArgs),
    /// Judge both lists of the definition of done: proven, missing (prove it), failed (fix it).
    #[command(after_help = examples![
        "# Prove the items first (the worker's side), then judge both lists",
        "dwp loop prove examples/loop-worktree --config examples/loop-worktree/loop.config.yaml \\",
        "    --contract examples/loop-worktree/contract.json",
        "dwp loop dod examples/loop-worktree --config examples/loop-worktree/loop.config.yaml \\",
        "    --contract examples/loop-worktree/contract.json \\",
        "    --changed-files examples/loop-worktree/changed.txt",
        "# The same verdict as the markdown table a pull request shows",
        "dwp loop dod examples/loop-worktree --config examples/loop-worktree/loop.config.yaml \\",
        "    --changed-files examples/loop-worktree/changed.txt --format markdown",
    ])]
    Dod(DodArgs),
    /// Stamp a contract with the sha256 of its outcomes (canonical JSON) before dispatch.
    #[command(after_help = examples![
        "# Stamp the contract's sha256 (a contract already frozen is left as it is)",
        "dwp loop freeze examples/loop-worktree/contract.json",
        "# The stamp as one JSON document",
        "dwp loop freeze --json examples/loop-worktree/contract.json",
    ])]
    Freeze {
        /// The contract: {"outcomes": [{"id", "description", "check"?}]}.
        #[arg(value_name = "CONTRACT.json")]
        contract: PathBuf,
    },
    /// The worker's side: run the command items and contract checks, record what dwp observed.
    #[command(after_help = examples![
        "# Run every command item and contract check, record what dwp observed in .ak-loop/",
        "dwp loop prove examples/loop-worktree --config examples/loop-worktree/loop.config.yaml \\",
        "    --contract examples/loop-worktree/contract.json",
        "# Run one item again, keeping the other proofs",
        "dwp loop prove examples/loop-worktree --config examples/loop-worktree/loop.config.yaml \\",
        "    --item greeting",
    ])]
    Prove(ProveArgs),
}

#[derive(Debug, Args)]
pub struct ArtifactsArgs {
    /// The worker's worktree root.
    #[arg(
        value_name = "WORKTREE",
        required_unless_present = "no_worktree",
        conflicts_with = "no_worktree"
    )]
    worktree: Option<PathBuf>,
    /// The artifacts that must be present (default: verify).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "LIST",
        default_value = "verify"
    )]
    require: Vec<ArtifactArg>,
    /// A plan was approved: plan.md is required too.
    #[arg(long)]
    plan_approved: bool,
    /// The dispatch has no worktree: the artifact gate is left out (verdict skipped, exit 0).
    #[arg(long)]
    no_worktree: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ArtifactArg {
    Plan,
    Verify,
    Dod,
}

impl From<ArtifactArg> for Artifact {
    fn from(arg: ArtifactArg) -> Artifact {
        match arg {
            ArtifactArg::Plan => Artifact::Plan,
            ArtifactArg::Verify => Artifact::Verify,
            ArtifactArg::Dod => Artifact::Dod,
        }
    }
}

#[derive(Debug, Args)]
pub struct DodArgs {
    /// The worker's worktree root.
    #[arg(value_name = "WORKTREE")]
    worktree: PathBuf,
    /// loop.config.yaml (its dod.items are the project's list).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// The frozen contract (its outcomes are the issue's list).
    #[arg(long, value_name = "CONTRACT.json")]
    contract: Option<PathBuf>,
    /// Changed files: git diff against the merge base of REV and HEAD, in the worktree.
    #[arg(long, value_name = "REV", conflicts_with = "changed_files")]
    changed_from: Option<String>,
    /// Changed files: one worktree-relative path per line.
    #[arg(long, value_name = "FILE")]
    changed_files: Option<PathBuf>,
    /// Output format (--json is --format json).
    #[arg(long, value_enum, default_value = "human")]
    format: DodFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DodFormat {
    Human,
    Markdown,
    Json,
}

impl From<DodFormat> for Format {
    fn from(format: DodFormat) -> Format {
        match format {
            DodFormat::Human => Format::Human,
            DodFormat::Markdown => Format::Markdown,
            DodFormat::Json => Format::Json,
        }
    }
}

#[derive(Debug, Args)]
pub struct ProveArgs {
    /// The worktree to run the commands in.
    #[arg(value_name = "WORKTREE")]
    worktree: PathBuf,
    /// loop.config.yaml (its command items are run).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// The contract (outcomes with a `check` are run too).
    #[arg(long, value_name = "CONTRACT.json")]
    contract: Option<PathBuf>,
    /// Only this item or outcome (repeatable); the other proofs are kept.
    #[arg(long = "item", value_name = "ID")]
    items: Vec<String>,
    /// Kill a command (and its process group) after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 600.0)]
    timeout: f64,
    /// Pass this variable of dwp's environment to the commands (repeatable). By default they get
    /// only PATH, LANG, LC_ALL, TMPDIR, the toolchain managers' folders and selectors (docs/loop.md), and a
    /// private empty HOME.
    #[arg(long = "pass-env", value_name = "NAME")]
    pass_env: Vec<String>,
}

impl LoopCommand {
    pub fn name(&self) -> &'static str {
        match self {
            LoopCommand::Artifacts(_) => "loop artifacts",
            LoopCommand::Dod(_) => "loop dod",
            LoopCommand::Freeze { .. } => "loop freeze",
            LoopCommand::Prove(_) => "loop prove",
        }
    }
}

/// Run `command`; its outcome and the form to write it in (`--json` is `--format json`).
pub fn run(command: &LoopCommand, json: bool) -> Result<(Outcome, Format), Error> {
    let format = match command {
        LoopCommand::Dod(args) if !json => args.format.into(),
        _ if json => Format::Json,
        _ => Format::Human,
    };
    let outcome = run_command(command)?;
    Ok((outcome, format))
}

fn run_command(command: &LoopCommand) -> Result<Outcome, Error> {
    match command {
        LoopCommand::Artifacts(args) => {
            let request = artifacts::ArtifactsRequest {
                worktree: args.worktree.as_deref().map(super::from_here),
                require: args.require.iter().map(|a| Artifact::from(*a)).collect(),
                plan_approved: args.plan_approved,
            };
            Ok(Outcome::LoopArtifacts(artifacts::check(&request)?))
        }
        LoopCommand::Dod(args) => {
            let changed = match (&args.changed_from, &args.changed_files) {
                (Some(rev), _) => Some(ChangedSource::Git(rev.clone())),
                (None, Some(list)) => Some(ChangedSource::List(list.clone())),
                (None, None) => None,
            };
            let request = dod::DodRequest {
                worktree: super::from_here(&args.worktree),
                config: args.config.clone(),
                contract: args.contract.clone(),
                changed,
            };
            Ok(Outcome::LoopDod(dod::judge(&request)?))
        }
        LoopCommand::Freeze { contract } => Ok(Outcome::LoopFreeze(issue::freeze(
            &super::from_here(contract),
        )?)),
        LoopCommand::Prove(args) => {
            if !(args.timeout.is_finite() && args.timeout > 0.0) {
                return Err(Error::Usage(format!(
                    "--timeout {} is not a positive number of seconds",
                    args.timeout
                )));
            }
            let request = prove::ProveRequest {
                worktree: super::from_here(&args.worktree),
                config: args.config.clone(),
                contract: args.contract.clone(),
                items: args.items.clone(),
                timeout: Duration::from_secs_f64(args.timeout.min(86_400.0)),
                pass_env: args.pass_env.clone(),
            };
            Ok(Outcome::LoopProve {
                worktree: super::from_here(&args.worktree),
                report: prove::prove(&request)?,
            })
        }
    }
}
