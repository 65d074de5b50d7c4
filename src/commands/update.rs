//! `dwp update`: one guarded update of one task, the guarded step of `crate::steps::updater` under
//! the plan's lock (taken once the request's flags are checked and the inputs are known to be
//! regular files).
//!
//! The markdown wins, so a completion puts it first: with `--tick` the task's README box is
//! ticked (and `Plan Status: X/N` recounted) in the same locked write as the state, through one
//! intent record; without it, a completion whose box is still unchecked succeeds but says so
//! (`"markdown": "box unchecked"`), since the plan is not conformant until the box is ticked.

use crate::error::{Error, Result};
use crate::plan::markdown;
use crate::steps::gate_log::{self, ObservedRun, WrittenLog};
use crate::steps::updater::{
    AmendmentCheck, check_request, update_under_lock, update_under_lock_ticking,
};
pub use crate::steps::updater::{BoxNote, UpdateOutcome, UpdateRequest};
use crate::store;
use std::path::Path;

/// Run one guarded update of the plan at `target`. A `--commit` that is not a hash (`HEAD`, a
/// branch, a tag) is resolved by git in the plan's repository first; one git cannot resolve is
/// refused as it is.
pub fn update(target: &Path, request: &UpdateRequest) -> Result<UpdateOutcome> {
    update_observing(target, request, &[]).map(|(outcome, _)| outcome)
}

/// [`update`], recording besides `request.gates` one observed gate per run of `observed`
/// (`--gates-from`, runs `dwp loop prove` kept): under the lock, each run's log is written
/// into the plan's `analysis_results/gates/` and its gate appended, as `dwp run` records its
/// own; a refused update removes the logs again. Returns the logs kept, in order (their names
/// and hashes as they would be, on a dry run, which writes none).
pub fn update_observing(
    target: &Path,
    request: &UpdateRequest,
    observed: &[ObservedRun],
) -> Result<(UpdateOutcome, Vec<WrittenLog>)> {
    let resolved = resolve_commit(target, request);
    let request = resolved.as_ref().unwrap_or(request);
    check_request(request)?;
    crate::steps::writer::under_lock(target, request.wait, |plan_dir, state_path| {
        let mut logs = Vec::with_capacity(observed.len());
        let mut full = request.clone();
        for run in observed {
            match gate_log::record(plan_dir, request.task, run, request.dry_run) {
                Ok(recorded) => {
                    full.gates.push(recorded.gate);
                    logs.push(recorded.log);
                }
                Err(failed) => {
                    remove_written(plan_dir, request, &logs);
                    return Err(failed);
                }
            }
        }
        let updated = if full.tick {
            update_and_tick(plan_dir, state_path, &full)
        } else {
            update_under_lock(plan_dir, state_path, &full, AmendmentCheck::TaskLog)
        };
        match updated {
            Ok(outcome) => Ok((outcome, logs)),
            Err(refused) => {
                // Nothing is left of gates the plan refused to record.
                remove_written(plan_dir, request, &logs);
                Err(refused)
            }
        }
    })
}

fn remove_written(plan_dir: &Path, request: &UpdateRequest, logs: &[WrittenLog]) {
    if !request.dry_run {
        gate_log::remove(plan_dir, logs);
    }
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

/// Complete the task and tick its box. Usually one intent record holds both files, so a kill
/// between them is completed by the next writer. Completing the last task is publication, which
/// reads the boxes: there the tick is written first, on its own, and put back if the update is
/// refused; a kill between the two leaves the box ahead of the state, and the same command run
/// again completes it.
fn update_and_tick(
    plan_dir: &Path,
    state_path: &Path,
    request: &UpdateRequest,
) -> Result<UpdateOutcome> {
    let readme_path = plan_dir.join("README.md");
    let readme = store::read_text(&readme_path, plan_dir)
        .map_err(|failure| failure.into_error("read", &readme_path))?;
    // One parse of the README answers both the tick and whether it completes the plan.
    let parsed = markdown::parse_readme(&readme);
    let ticked =
        markdown::boxes::set_box_in(&readme, &parsed, request.task, true).map_err(|why| {
            Error::rejected(readme_path.display().to_string(), format!("--tick: {why}")).with_hint(
                "tick the box by hand (`- [x] Task N`), then run the same update without --tick",
            )
        })?;
    let with_note = |mut outcome: UpdateOutcome, note| {
        outcome.markdown = Some(note);
        outcome
    };
    if ticked == readme {
        return update_under_lock(plan_dir, state_path, request, AmendmentCheck::TaskLog);
    }
    let publishes = parsed
        .index
        .iter()
        .all(|e| e.id == request.task || e.marker.is_done());
    if publishes {
        return tick_then_publish(plan_dir, state_path, request, &readme, &ticked)
            .map(|outcome| with_note(outcome, BoxNote::Ticked));
    }
    let preview = UpdateRequest {
        dry_run: true,
        tick: false,
        ..request.clone()
    };
    let planned =
        update_under_lock_ticking(plan_dir, state_path, &preview, AmendmentCheck::TaskLog)?;
    let mut write = store::intent::Transaction::new(plan_dir, "dwp update --tick");
    write.replace(&readme_path, Some(readme.as_bytes()), ticked.as_bytes())?;
    let new_sha256 = match &planned.planned {
        Some(bytes) => {
            write.replace_known(state_path, Some(&planned.old_sha256), bytes)?;
            store::sha256_hex(bytes)
        }
        None => planned.old_sha256.clone(),
    };
    write.commit()?;
    let outcome = UpdateOutcome {
        dry_run: false,
        diff: None,
        planned: None,
        new_sha256,
        ..planned
    };
    Ok(with_note(outcome, BoxNote::Ticked))
}

/// The last task: tick, then the update that publishes; the tick comes back if it is refused.
fn tick_then_publish(
    plan_dir: &Path,
    state_path: &Path,
    request: &UpdateRequest,
    readme: &str,
    ticked: &str,
) -> Result<UpdateOutcome> {
    let readme_path = plan_dir.join("README.md");
    let mut tick = store::intent::Transaction::new(plan_dir, "dwp update --tick");
    tick.replace(&readme_path, Some(readme.as_bytes()), ticked.as_bytes())?;
    tick.commit()?;
    let refused = match update_under_lock(plan_dir, state_path, request, AmendmentCheck::TaskLog) {
        Ok(outcome) => return Ok(outcome),
        Err(refused) => refused,
    };
    let mut untick = store::intent::Transaction::new(plan_dir, "dwp update --tick (refused)");
    untick.replace(&readme_path, Some(ticked.as_bytes()), readme.as_bytes())?;
    untick.commit()?;
    Err(refused)
}
