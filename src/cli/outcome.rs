//! What a command did, as data: one variant per command, each holding that command's own outcome
//! type and no text for people. [`Outcome::exit`] is the one place a command that ran gets its
//! exit code; a command that failed exits with [`crate::error::Error::exit`]; both codes and
//! their meanings are [`crate::error::Exit::TABLE`].

use crate::commands::amend::AmendOutcome;
use crate::commands::approve::ApproveOutcome;
use crate::commands::contract::check::CheckOutcome;
use crate::commands::contract::declare::DeclareOutcome;
use crate::commands::contract::ladder::{self, HookOutcome};
use crate::commands::contract::ledger::RecordOutcome;
use crate::commands::init::InitOutcome;
use crate::commands::r#loop::artifacts::{self, ArtifactsReport};
use crate::commands::r#loop::dod::DodReport;
use crate::commands::r#loop::gates::GateNote;
use crate::commands::r#loop::issue::Frozen;
use crate::commands::r#loop::prove::ProveReport;
use crate::commands::migrate::MigrateOutcome;
use crate::commands::new::NewOutcome;
use crate::commands::next::NextOutcome;
use crate::commands::reconcile::ReconcileReport;
use crate::commands::run::RunOutcome;
use crate::commands::status::{PlanLine, Summary};
use crate::commands::update::UpdateOutcome;
use crate::commands::validate::Validation;
use crate::commands::verify::PlanReport;
use crate::error::Exit;
use crate::findings::{Finding, Verdict};
use crate::plan::schemas::EmbeddedSchema;
use crate::steps::publication::Publication;
use crate::store::lock_dir::{LockInfo, Recovery};
use std::path::PathBuf;

pub enum Outcome {
    Validate(Vec<Validation>),
    /// `target`: the PLAN argument, for the follow-up commands a warning names.
    /// `gates_from`: what became of each `--gates-from` outcome (observed or asserted).
    Update {
        outcome: UpdateOutcome,
        target: PathBuf,
        gates_from: Vec<GateNote>,
    },
    Amend(AmendOutcome),
    /// `dwp run`: the gate dwp observed; the process exits with the command's own code.
    Run(RunOutcome),
    Approve(ApproveOutcome),
    Init(InitOutcome),
    New(NewOutcome),
    RecordNew(crate::commands::new::RecordNewOutcome),
    Migrate(MigrateOutcome),
    LockStatus {
        lock: PathBuf,
        holder: Option<LockInfo>,
    },
    LockRecover {
        lock: PathBuf,
        recovery: Option<Recovery>,
    },
    /// `write`: the state now follows the markdown, so what remains is the markdown's to fix.
    Reconcile {
        report: ReconcileReport,
        write: bool,
    },
    /// A record plan made of a contract draft (`dwp init --contract`).
    RecordInit(crate::commands::init::RecordInitReport),
    /// A record plan's contract amended to its next revision (`dwp amend`).
    RecordAmend(crate::commands::amend::RecordAmendReport),
    /// A record plan approved (`dwp approve`).
    RecordApprove(crate::commands::approve::RecordApproveReport),
    /// A record plan's gate run by dwp and recorded as an observed `gate_run` (`dwp run`); the
    /// process exits with the command's own code.
    RecordRun(crate::commands::run::RecordRunReport),
    /// A record plan's task started, or found completed (`dwp update`).
    RecordUpdate(crate::commands::update::RecordUpdateReport),
    /// A record plan's reconciliation: its state.json against the journal's projection.
    RecordReconcile(crate::commands::reconcile::RecordReconcileReport),
    /// `strict`: advisories counted as errors (the reports' verdicts already weigh it); `all`:
    /// the plans a workspace holds, summed up whatever their number.
    Verify {
        reports: Vec<PlanReport>,
        strict: bool,
        all: bool,
    },
    Status(Summary),
    Next(NextOutcome),
    /// A record plan's status (DWP v6/v7).
    RecordStatus(crate::rules::record::view::RecordStatus),
    /// A record plan's ready set.
    RecordNext(crate::rules::record::view::ReadySet),
    StatusAll(Vec<PlanLine>),
    FinalizeCheck {
        plan: PathBuf,
        findings: Vec<Finding>,
    },
    /// `recover`: `--recover` asked for, which the document's `command` says.
    Finalize {
        publication: Publication,
        recover: bool,
    },
    LoopArtifacts(ArtifactsReport),
    LoopDod(DodReport),
    LoopFreeze(Frozen),
    LoopProve {
        worktree: PathBuf,
        report: ProveReport,
    },
    ContractDeclare(DeclareOutcome),
    ContractRecord(RecordOutcome),
    ContractCheck {
        outcome: CheckOutcome,
        require_declaration: bool,
    },
    /// `contract check --hook`: the Stop hook protocol has its own blocking code.
    ContractHook(HookOutcome),
    /// `dwp schema NAME`: one embedded schema.
    Schema(&'static EmbeddedSchema),
    /// `dwp schema`: the names of every embedded schema.
    SchemaList(Vec<&'static str>),
    /// `dwp completions SHELL`: the script, generated from the command line's definition.
    Completions {
        shell: String,
        script: String,
    },
    /// `dwp man [SUBCOMMAND]`: the page's name (`dwp-update`) and its roff text.
    Man {
        page: String,
        roff: String,
    },
}

impl Outcome {
    /// The exit code of a command that ran: 0 when what it judged passed or what it was asked
    /// to write is written, 1 when its judgement failed, 5 when a check could not be made, 2
    /// for a stop the hook blocks; `dwp run` passes on its command's own.
    pub fn exit(&self) -> Exit {
        let passes = |ok: bool| if ok { Verdict::Valid } else { Verdict::Invalid };
        let verdict = match self {
            Outcome::Validate(results) => Verdict::worst(results.iter().map(Validation::verdict)),
            Outcome::Verify { reports, .. } => {
                Verdict::worst(reports.iter().map(|r| r.verdict.weight()))
            }
            Outcome::Finalize { publication, .. } => publication.verdict.weight(),
            Outcome::Reconcile { report, write } => passes(report.in_sync || *write),
            Outcome::RecordReconcile(report) => passes(report.in_sync),
            Outcome::FinalizeCheck { findings, .. } => passes(findings.is_empty()),
            Outcome::LoopArtifacts(report) => passes(matches!(
                report.verdict,
                artifacts::Verdict::Present | artifacts::Verdict::Skipped
            )),
            Outcome::LoopDod(report) => passes(report.done()),
            Outcome::LoopProve { report, .. } => passes(report.all_passed()),
            Outcome::ContractCheck {
                outcome,
                require_declaration,
            } => passes(outcome.passed(*require_declaration)),
            Outcome::Run(run) if run.exit == 0 => Verdict::Valid,
            Outcome::Run(run) => return Exit::Command(run.exit),
            Outcome::RecordRun(run) if run.exit == 0 => Verdict::Valid,
            Outcome::RecordRun(run) => return Exit::Command(run.exit),
            Outcome::ContractHook(hook) => match hook.verdict {
                ladder::Verdict::Block => return Exit::BlockStop,
                ladder::Verdict::Allow => Verdict::Valid,
            },
            Outcome::Update { .. }
            | Outcome::RecordUpdate(_)
            | Outcome::RecordApprove(_)
            | Outcome::RecordAmend(_)
            | Outcome::RecordInit(_)
            | Outcome::Amend(_)
            | Outcome::Approve(_)
            | Outcome::Init(_)
            | Outcome::New(_)
            | Outcome::RecordNew(_)
            | Outcome::Migrate(_)
            | Outcome::LockStatus { .. }
            | Outcome::LockRecover { .. }
            | Outcome::Status(_)
            | Outcome::Next(_)
            | Outcome::RecordStatus(_)
            | Outcome::RecordNext(_)
            | Outcome::StatusAll(_)
            | Outcome::LoopFreeze(_)
            | Outcome::ContractDeclare(_)
            | Outcome::ContractRecord(_)
            | Outcome::Schema(_)
            | Outcome::SchemaList(_)
            | Outcome::Completions { .. }
            | Outcome::Man { .. } => Verdict::Valid,
        };
        match verdict {
            Verdict::Valid => Exit::Ok,
            Verdict::Invalid => Exit::Rejected,
            Verdict::Unverified => Exit::Unverified,
        }
    }

    /// Whether the command's JSON document says `"ok": true`: exactly when it exits 0.
    pub fn ok(&self) -> bool {
        self.exit() == Exit::Ok
    }
}
