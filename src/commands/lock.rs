//! `dwp lock status` and `dwp lock recover`: who holds a plan's writer lock and whether that
//! process still runs; removing the lock a dead writer left and, when forced, recording why in
//! PROGRESS.md so that no kill leaves the removal without its record.
//!
//! The order of a recovery: the lock is claimed and judged (`store::lock_dir::recover`, whose
//! module documents why no live writer's lock is ever moved); while the dead owner's lock still
//! keeps every writer out, any record a killed writer left is completed and, when forced, this
//! removal is recorded as an intent record (the lock it removes, by identity, and its
//! PROGRESS.md entry); the lock is removed; then, while a record is pending, this command takes
//! the lock as a writer, which completes it, and releases it. Killed after the record and
//! before the removal, the lock still stands with the record naming it: `dwp lock recover`
//! (what the lock-held hint names) completes that removal on the record's strength, with no new
//! `--force` and no second entry. Killed after the removal, the next writer completes the entry.
//!
//! A record plan's lock is the public ledger's `.ledger.lock` (`plan::lock_target`): the one
//! inspected, recovered, and taken as a writer to complete the entry, so a forced recovery keeps
//! the ledger out until its PROGRESS.md entry is written. The ledger does not complete dwp's
//! intent records: one left by a kill after the removal waits for the next dwp writer.

use crate::error::Result;
use crate::steps::commit::Change;
use crate::store::{intent, lock_dir as lock};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long the recovering command waits for the lock it just freed (another writer may have
/// taken it first: that writer completes the entry, and this one then finds nothing to do).
const TAKE_OVER_WAIT: Duration = Duration::from_secs(30);

/// The lock of the plan at `target` (its folder or state.json; a record plan's is the ledger's
/// `.ledger.lock`): its folder, and who holds it (`None`: it is free).
pub fn status(target: &Path) -> Result<(PathBuf, Option<lock::LockInfo>)> {
    let (_, locked) = crate::plan::lock_target(target)?;
    Ok((lock::lock_dir(&locked), lock::inspect(&locked)?))
}

/// Remove the lock of the plan at `target` on the grounds `lock::recover` accepts; with
/// `reason` (given with `--force`), record the removal in PROGRESS.md. Returns the lock's folder
/// and what was removed (`None`: nothing).
pub fn recover(
    target: &Path,
    older_than: Option<Duration>,
    force: bool,
    reason: Option<&str>,
) -> Result<(PathBuf, Option<lock::Recovery>)> {
    let (plan_dir, locked) = crate::plan::lock_target(target)?;
    let removed = recover_lock(&plan_dir, &locked, older_than, force, reason)?;
    Ok((lock::lock_dir(&locked), removed))
}

/// Recover the lock on `locked` (the plan's state.json, or a record plan's ledger target): every
/// step below, the take-over included, works on that one lock.
fn recover_lock(
    plan_dir: &Path,
    locked: &Path,
    older_than: Option<Duration>,
    force: bool,
    reason: Option<&str>,
) -> Result<Option<lock::Recovery>> {
    let pending = intent::pending(plan_dir)?;
    let recorded = pending.as_ref().and_then(intent::recorded_lock_removal);
    let grounds = lock::Grounds {
        older_than,
        force,
        recorded,
    };
    let recovery = lock::recover(locked, grounds, |info| {
        let resuming = recorded.is_some() && recorded == info.identity.as_ref();
        match reason {
            // The record of an interrupted forced recovery of this lock is there already.
            _ if resuming => Ok(()),
            Some(reason) => {
                // A record a killed writer left is completed first: the intent file holds one.
                intent::complete_pending(plan_dir)?;
                let mut entry = Change::new(plan_dir, "dwp lock recover --force");
                if let Some(identity) = &info.identity {
                    entry.remove_lock(&info.path, identity);
                }
                entry.append(&plan_dir.join("PROGRESS.md"), &progress_line(info, reason));
                crate::steps::commit::record_for_next_writer(entry)
            }
            None => Ok(()),
        }
    })?;
    if recovery.is_some() && intent::pending(plan_dir)?.is_some() {
        // A writer completes the pending record (this removal's entry, or a killed writer's).
        crate::steps::writer::lock_for_write(plan_dir, locked, TAKE_OVER_WAIT)?.release()?;
    }
    Ok(recovery)
}

/// One PROGRESS.md line: when, what was removed, whose it was, and why (on one line whatever
/// the reason holds, so it cannot forge further entries).
fn progress_line(info: &lock::LockInfo, reason: &str) -> String {
    let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    format!(
        "- {}: `dwp lock recover --force` removed {} ({}): {reason}",
        crate::clock::now_rfc3339(),
        info.path.display(),
        info.describe()
    )
}
