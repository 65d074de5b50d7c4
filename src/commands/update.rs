//! `dwp update`: one guarded update of one task (`crate::steps::updater`), planned against the
//! plan loaded under its lock (taken once the request's flags are checked and the inputs are
//! known to be regular files) and written as one change.
//!
//! The markdown wins, so a completion puts it first: with `--tick` the task's README box is
//! ticked (and `Plan Status: X/N` recounted) in the same change as the state, through one
//! intent record; without it, a completion whose box is still unchecked succeeds but says so
//! (`"markdown": "box unchecked"`), since the plan is not conformant until the box is ticked.

use crate::error::Result;
use crate::steps::gate_log::{self, ObservedRun, WrittenLog};
pub use crate::steps::updater::{BoxNote, UpdateOutcome, UpdateRequest};
use crate::steps::updater::{check_request, commit_update, plan_update};
use crate::store;
use std::path::Path;

/// Run one guarded update of the plan at `target`. A `--commit` that is not a hash (`HEAD`, a
/// branch, a tag) is resolved by git in the plan's repository first; one git cannot resolve is
/// refused as it is.
pub fn update(target: &Path, request: &UpdateRequest) -> Result<UpdateOutcome> {
    update_observing(target, request, &[]).map(|(outcome, _)| outcome)
}

/// [`update`], recording besides `request.gates` one observed gate per run of `observed`
/// (`--gates-from`, runs `dwp loop prove` kept): each run's log kept in the plan's
/// `analysis_results/gates/` and its gate appended, in the same change, as `dwp run` records
/// its own. Returns the logs kept, in order (their names and hashes as they would be, on a dry
/// run, which writes none).
pub fn update_observing(
    target: &Path,
    request: &UpdateRequest,
    observed: &[ObservedRun],
) -> Result<(UpdateOutcome, Vec<WrittenLog>)> {
    refuse_observed_mark(target, request)?;
    let resolved = resolve_commit(target, request);
    let request = resolved.as_ref().unwrap_or(request);
    check_request(request)?;
    crate::steps::writer::under_lock(target, request.wait, |plan| {
        let now = crate::clock::now_rfc3339();
        let mut full = request.clone();
        let mut logs = Vec::with_capacity(observed.len());
        let mut kept = crate::steps::commit::Change::new(plan.dir(), "dwp update");
        for run in observed {
            let recorded = gate_log::record(plan, &mut kept, request.task, run);
            full.gates.push(recorded.gate);
            logs.push(recorded.log);
        }
        let mut planned = plan_update(plan, &full, &now)?;
        if request.dry_run {
            return Ok((planned.outcome, logs));
        }
        planned.change.prepend(kept);
        Ok((commit_update(planned)?, logs))
    })
}

/// Only dwp writes the `(observed by dwp: ...)` mark, after running the command itself (`dwp
/// run`, `--gates-from`): a `--gate` or `--gate-json` carrying it is the agent's word dressed
/// as dwp's, refused before anything is locked or written.
fn refuse_observed_mark(target: &Path, request: &UpdateRequest) -> Result<()> {
    let marked = request.gates.iter().find(|gate| {
        gate.evidence
            .as_deref()
            .is_some_and(|e| e.contains(crate::rules::observed::MARK.trim_start()))
    });
    let Some(gate) = marked else {
        return Ok(());
    };
    let (plan_dir, _) = crate::plan::resolve_target(target);
    Err(crate::error::Error::rejected(
        format!("--gate `{}`", gate.command),
        "its evidence carries `(observed by dwp: ...)`, which only dwp writes, after running the command itself",
    )
    .with_hint(format!(
        "let dwp run it and record what it observed: `dwp run {} --task {} -- {}`; or record the result you saw in your own words, without the mark",
        crate::term::shell_word(&plan_dir.display().to_string()),
        request.task,
        gate.command
    )))
}

/// The request with its `commit` resolved to a full hash, when it names a revision, not a hash.
fn resolve_commit(target: &Path, request: &UpdateRequest) -> Option<UpdateRequest> {
    let rev = request.commit.as_deref()?;
    let is_hash = (7..=40).contains(&rev.len())
        && rev.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if is_hash {
        return None;
    }
    let (plan_dir, _) = crate::plan::resolve_target(target);
    let hash = store::git::resolve_commit(&plan_dir, rev)?;
    Some(UpdateRequest {
        commit: Some(hash),
        ..request.clone()
    })
}
