//! `dwp update`: one guarded update of one task, the guarded step of `crate::steps::updater` under the
//! plan's lock (taken once the request's flags are checked and the inputs are known to be
//! regular files).

use crate::error::Result;
use crate::steps::updater::{AmendmentCheck, check_request, update_under_lock};
pub use crate::steps::updater::{UpdateOutcome, UpdateRequest};
use std::path::Path;

/// Run one guarded update of the plan at `target`.
pub fn update(target: &Path, request: &UpdateRequest) -> Result<UpdateOutcome> {
    check_request(request)?;
    let (plan_dir, state_path) = crate::plan::resolve_target(target);
    let guard = crate::steps::writer::lock_for_write(&plan_dir, &state_path, request.wait)?;
    let outcome = update_under_lock(&plan_dir, &state_path, request, AmendmentCheck::TaskLog)?;
    guard.release()?;
    Ok(outcome)
}
