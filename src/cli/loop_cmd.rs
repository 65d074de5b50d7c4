//! `dwp loop ...`: arguments and rendering only; the logic is in [`crate::commands::r#loop`].

use super::render::envelope;
use crate::commands::r#loop::artifacts::{self, Artifact, ArtifactsReport, Status};
use crate::commands::r#loop::changed::ChangedSource;
use crate::commands::r#loop::contract::{self, Frozen};
use crate::commands::r#loop::dod::{self, DodReport, Row, Verdict};
use crate::commands::r#loop::prove::{self, ProveReport};
use crate::error::{Error, Exit};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Subcommand)]
pub enum LoopCommand {
    /// Check .ak-loop/plan.md, verify.json and dod.json: present, missing (named) or invalid.
    #[command(after_help = crate::error::Exit::help_text())]
    Artifacts(ArtifactsArgs),
    /// Judge both lists of the definition of done: proven, missing (prove it), failed (fix it).
    #[command(after_help = crate::error::Exit::help_text())]
    Dod(DodArgs),
    /// Stamp a contract with the sha256 of its outcomes (canonical JSON) before dispatch.
    #[command(after_help = crate::error::Exit::help_text())]
    Freeze {
        /// The contract: {"outcomes": [{"id", "description", "check"?}]}.
        #[arg(value_name = "CONTRACT.json")]
        contract: PathBuf,
    },
    /// The worker's side: run the command items and contract checks, record what dwp observed.
    #[command(after_help = crate::error::Exit::help_text())]
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
    /// The frozen contract (its outcomes are the list).
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
    /// only PATH, LANG, LC_ALL, TMPDIR and a private empty HOME.
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

pub fn run(command: &LoopCommand, out: &mut dyn Write, json: bool) -> Result<Exit, Error> {
    match command {
        LoopCommand::Artifacts(args) => {
            let request = artifacts::ArtifactsRequest {
                worktree: args.worktree.clone(),
                require: args.require.iter().map(|a| Artifact::from(*a)).collect(),
                plan_approved: args.plan_approved,
            };
            Ok(render_artifacts(out, &artifacts::check(&request)?, json))
        }
        LoopCommand::Dod(args) => {
            let changed = match (&args.changed_from, &args.changed_files) {
                (Some(rev), _) => Some(ChangedSource::Git(rev.clone())),
                (None, Some(list)) => Some(ChangedSource::List(list.clone())),
                (None, None) => None,
            };
            let request = dod::DodRequest {
                worktree: args.worktree.clone(),
                config: args.config.clone(),
                contract: args.contract.clone(),
                changed,
            };
            let report = dod::judge(&request)?;
            let format = if json { DodFormat::Json } else { args.format };
            Ok(render_dod(out, &report, format))
        }
        LoopCommand::Freeze { contract } => {
            Ok(render_freeze(out, &contract::freeze(contract)?, json))
        }
        LoopCommand::Prove(args) => {
            if !(args.timeout.is_finite() && args.timeout > 0.0) {
                return Err(Error::Usage(format!(
                    "--timeout {} is not a positive number of seconds",
                    args.timeout
                )));
            }
            let request = prove::ProveRequest {
                worktree: args.worktree.clone(),
                config: args.config.clone(),
                contract: args.contract.clone(),
                items: args.items.clone(),
                timeout: Duration::from_secs_f64(args.timeout.min(86_400.0)),
                pass_env: args.pass_env.clone(),
            };
            Ok(render_prove(
                out,
                &args.worktree,
                &prove::prove(&request)?,
                json,
            ))
        }
    }
}

fn print_json(out: &mut dyn Write, document: &Value) {
    let _ = writeln!(out, "{document:#}");
}

fn exit_if(ok: bool) -> Exit {
    if ok { Exit::Ok } else { Exit::Rejected }
}

fn render_artifacts(out: &mut dyn Write, report: &ArtifactsReport, json: bool) -> Exit {
    let verdict = report.verdict;
    let ok = matches!(
        verdict,
        artifacts::Verdict::Present | artifacts::Verdict::Skipped
    );
    if json {
        let items: Vec<Value> = report
            .artifacts
            .iter()
            .map(|a| {
                let mismatches: Vec<Value> = match &a.status {
                    Status::Invalid(found) => found
                        .iter()
                        .map(|v| json!({"path": v.path, "message": v.message}))
                        .collect(),
                    _ => Vec::new(),
                };
                json!({"artifact": a.artifact.name(), "path": a.path, "required": a.required,
                       "status": a.status.name(), "mismatches": mismatches})
            })
            .collect();
        let skipped = (verdict == artifacts::Verdict::Skipped).then_some(
            "no worktree (--no-worktree): the artifact gate is left out, nothing was checked",
        );
        print_json(
            out,
            &envelope(
                "loop artifacts",
                json!({ "ok": ok,
            "verdict": verdict.name(), "worktree": report.worktree, "note": skipped, "artifacts": items}),
            ),
        );
        return exit_if(ok);
    }
    let Some(worktree) = &report.worktree else {
        let _ = writeln!(
            out,
            "artifacts: skipped — no worktree (--no-worktree): the artifact gate is left out, nothing was checked"
        );
        return Exit::Ok;
    };
    let _ = writeln!(
        out,
        "artifacts: {} ({})",
        verdict.name(),
        worktree.display()
    );
    for a in &report.artifacts {
        let path = a.path.display();
        let _ = match &a.status {
            Status::Present => writeln!(out, "  present  {path}"),
            Status::Absent => writeln!(out, "  absent   {path} (not required)"),
            Status::Missing => writeln!(out, "  missing  {path}: required, write it"),
            Status::Invalid(found) => {
                let _ = writeln!(
                    out,
                    "  invalid  {path}: present but does not match the schema (worse than absent)"
                );
                for v in found {
                    let _ = writeln!(out, "           {}: {}", v.path, v.message);
                }
                Ok(())
            }
        };
    }
    exit_if(ok)
}

fn verdict_cell(verdict: Verdict) -> String {
    match verdict.instruction() {
        Some(instruction) => format!("{} — {instruction}", verdict.name()),
        None => verdict.name().to_owned(),
    }
}

fn evidence_text(row: &Row) -> String {
    match row.source.describe() {
        Some(source) => format!("{} [{source}]", row.evidence),
        None => row.evidence.clone(),
    }
}

fn summary(report: &DodReport) -> String {
    format!(
        "{} of {} proven · {} missing (prove it) · {} failed (fix it)",
        report.count(Verdict::Proven),
        report.rows.len(),
        report.count(Verdict::Missing),
        report.count(Verdict::Failed)
    )
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn render_dod(out: &mut dyn Write, report: &DodReport, format: DodFormat) -> Exit {
    match format {
        DodFormat::Json => dod_json(out, report),
        DodFormat::Markdown => dod_markdown(out, report),
        DodFormat::Human => dod_human(out, report),
    }
    exit_if(report.done())
}

fn dod_json(out: &mut dyn Write, report: &DodReport) {
    let items: Vec<Value> = report
        .rows
        .iter()
        .map(|r| {
            json!({"list": r.list.name(), "id": r.id, "item": r.item, "kind": r.kind,
                   "verdict": r.verdict.name(), "instruction": r.verdict.instruction(),
                   "evidence": r.evidence, "source": r.source.describe()})
        })
        .collect();
    print_json(
        out,
        &envelope(
            "loop dod",
            json!({
            "ok": report.done(),
            "verdict": if report.done() { "done" } else { "not done" },
            "summary": {"total": report.rows.len(), "proven": report.count(Verdict::Proven),
                        "missing": report.count(Verdict::Missing), "failed": report.count(Verdict::Failed)},
            "contract": report.contract.as_ref().map(|(path, digest)| json!({"path": path, "digest": digest})),
            "changed": report.changed.as_ref().map(|(source, count)| json!({"source": source, "count": count})),
            "items": items}),
        ),
    );
}

/// One cell of a markdown table: no pipe or newline may break the row.
fn cell(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

fn dod_markdown(out: &mut dyn Write, report: &DodReport) {
    let headline = if report.done() { "Done" } else { "Not done" };
    let _ = writeln!(out, "## Definition of done\n");
    let _ = writeln!(out, "**{headline}**: {}\n", summary(report));
    let mut context = Vec::new();
    if let Some((path, digest)) = &report.contract {
        context.push(format!(
            "contract `{}` frozen at sha256 `{digest}`",
            file_name(path)
        ));
    }
    if let Some((source, count)) = &report.changed {
        context.push(format!("{count} changed files ({})", cell(source)));
    }
    if !context.is_empty() {
        let _ = writeln!(out, "{}\n", context.join(" · "));
    }
    let _ = writeln!(out, "| List | Id | Item | Verdict | Evidence |");
    let _ = writeln!(out, "|---|---|---|---|---|");
    for r in &report.rows {
        let mark = match r.verdict {
            Verdict::Proven => "✅",
            Verdict::Missing => "⚠️",
            Verdict::Failed => "❌",
        };
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {mark} {} | {} |",
            r.list.name(),
            r.id,
            cell(&r.item),
            verdict_cell(r.verdict),
            cell(&evidence_text(r))
        );
    }
}

fn dod_human(out: &mut dyn Write, report: &DodReport) {
    let headline = if report.done() { "done" } else { "not done" };
    let _ = writeln!(out, "definition of done: {headline} · {}", summary(report));
    let id_width = report
        .rows
        .iter()
        .map(|r| r.id.chars().count())
        .max()
        .unwrap_or(0);
    for r in &report.rows {
        let _ = writeln!(
            out,
            "  {:<7}  {:<id_width$}  {:<7}  {}",
            r.list.name(),
            r.id,
            r.verdict.name(),
            r.item
        );
        let instruction = r
            .verdict
            .instruction()
            .map(|i| format!("{i}: "))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {:<7}  {:<id_width$}  {instruction}{}",
            "",
            "",
            evidence_text(r)
        );
    }
    if report.rows.is_empty() {
        let _ = writeln!(
            out,
            "  (no items: no dod.items in the configuration and no contract)"
        );
    }
    if let Some((path, digest)) = &report.contract {
        let _ = writeln!(
            out,
            "contract: {} frozen at sha256 {digest}",
            path.display()
        );
    }
}

fn render_freeze(out: &mut dyn Write, frozen: &Frozen, json: bool) -> Exit {
    if json {
        print_json(
            out,
            &envelope(
                "loop freeze",
                json!({ "ok": true,
            "contract": frozen.path, "digest": frozen.digest, "outcomes": frozen.outcomes, "changed": frozen.changed}),
            ),
        );
    } else if frozen.changed {
        let _ = writeln!(
            out,
            "frozen {}: {} outcomes · sha256 {}",
            frozen.path.display(),
            frozen.outcomes,
            frozen.digest
        );
    } else {
        let _ = writeln!(
            out,
            "already frozen {}: {} outcomes · sha256 {} (no change)",
            frozen.path.display(),
            frozen.outcomes,
            frozen.digest
        );
    }
    Exit::Ok
}

fn render_prove(out: &mut dyn Write, worktree: &Path, report: &ProveReport, json: bool) -> Exit {
    let ok = report.all_passed();
    let written = |relative: &str, outcome: &crate::store::WriteOutcome| json!({"path": worktree.join(relative), "sha256": outcome.sha256, "changed": outcome.changed});
    if json {
        let proofs: Vec<Value> = report
            .proved
            .iter()
            .map(|p| {
                let mut proof = serde_json::to_value(&p.proof).unwrap_or(Value::Null);
                if let Value::Object(map) = &mut proof {
                    map.insert("list".into(), json!(p.list.name()));
                }
                proof
            })
            .collect();
        print_json(
            out,
            &envelope(
                "loop prove",
                json!({ "ok": ok, "env": report.env, "proofs": proofs,
            "dod": written(crate::commands::r#loop::DOD_JSON, &report.dod),
            "verify": written(crate::commands::r#loop::VERIFY_JSON, &report.verify)}),
            ),
        );
        return exit_if(ok);
    }
    let failed = report
        .proved
        .iter()
        .filter(|p| p.proof.status == crate::commands::r#loop::proofs::ProofStatus::Failed)
        .count();
    let _ = writeln!(
        out,
        "proved {} items: {} passed, {failed} failed",
        report.proved.len(),
        report.proved.len() - failed
    );
    let id_width = report
        .proved
        .iter()
        .map(|p| p.proof.id.chars().count())
        .max()
        .unwrap_or(0);
    for p in &report.proved {
        let status = match p.proof.status {
            crate::commands::r#loop::proofs::ProofStatus::Passed => "passed",
            crate::commands::r#loop::proofs::ProofStatus::Failed => "failed",
        };
        let _ = writeln!(
            out,
            "  {:<7}  {:<id_width$}  {status}: {}",
            p.list.name(),
            p.proof.id,
            p.proof.evidence
        );
    }
    let _ = writeln!(
        out,
        "environment passed: {} (HOME: {})",
        report.env.join(", "),
        if report.env.iter().any(|n| n == "HOME") {
            "dwp's"
        } else {
            "a private empty folder"
        }
    );
    for (relative, outcome) in [
        (crate::commands::r#loop::DOD_JSON, &report.dod),
        (crate::commands::r#loop::VERIFY_JSON, &report.verify),
    ] {
        let _ = writeln!(
            out,
            "wrote {} · sha256 {}",
            worktree.join(relative).display(),
            outcome.sha256
        );
    }
    exit_if(ok)
}
