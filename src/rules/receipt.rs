//! The publication receipt, `analysis_results/FINALIZATION.json`: its schema (embedded from
//! `schemas/finalization-receipt.schema.json`) and the digest rule both dwp and the public
//! reference finalizer use, so that either tool can check the other's receipt.
//!
//! `artifacts_sha256` is the sha256 over the sorted names of README.md, PROGRESS.md, PROMPTS.md,
//! manifest.json, analysis_results/SECURITY_REVIEW.md, analysis_results/SKILLS_CANDIDATES.md and
//! every task file, each fed as the name, a NUL byte, then the file's bytes (or the literal
//! `<absent>`), the reference's digest (docs/DECISIONS.md, "Publication and receipts"). `dwp finalize` writes
//! receipts with this module; `dwp verify` checks them. A dwp receipt also lists every file
//! under `analysis_results/` ([`results_files`]), so a file added there after publication shows.

use crate::plan::LoadedPlan;
use crate::plan::model::State;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::sync::OnceLock;

/// Where the receipt lives, relative to the plan folder.
pub const RECEIPT: &str = "analysis_results/FINALIZATION.json";

/// The receipt schema as embedded (its file: `schemas/finalization-receipt.schema.json`).
pub const SCHEMA: &str = crate::plan::schemas::RECEIPT.text;

/// The names the digest covers in every plan; the task files come from the state.
pub const FIXED_NAMES: [&str; 6] = [
    "README.md",
    "PROGRESS.md",
    "PROMPTS.md",
    "manifest.json",
    "analysis_results/SECURITY_REVIEW.md",
    "analysis_results/SKILLS_CANDIDATES.md",
];

/// The names the reference digest covers, sorted.
pub fn digest_names(state: &State) -> Vec<String> {
    let mut names: Vec<String> = FIXED_NAMES.iter().map(|s| (*s).to_owned()).collect();
    names.extend(task_files(state));
    names.sort();
    names.dedup();
    names
}

/// The task files a state locates (Full plans; Lite anchors are not files).
pub fn task_files(state: &State) -> impl Iterator<Item = String> + '_ {
    state
        .tasks
        .iter()
        .filter_map(|t| t.locator_value())
        .filter(|v| !v.starts_with('#'))
        .map(str::to_owned)
}

/// The `artifacts_sha256` of a plan folder, of the bytes `plan` read (each file read once).
pub fn artifacts_digest(plan: &LoadedPlan, state: &State) -> String {
    let names = digest_names(state);
    let read: Vec<_> = names
        .iter()
        .map(|name| plan.read(&plan.dir().join(name)))
        .collect();
    digest_of(names.iter().zip(read.iter().map(|r| &**r)))
}

/// The digest of files already read: each `(name, bytes or why not)` in [`digest_names`] order.
pub fn digest_of<'a>(
    files: impl Iterator<Item = (&'a String, &'a Result<Vec<u8>, crate::store::ReadFailure>)>,
) -> String {
    let mut hasher = Sha256::new();
    for (name, read) in files {
        hasher.update(name.as_bytes());
        hasher.update([0u8]);
        // The reference's digest rule: a file that cannot be read counts as absent (so the
        // digest then disagrees with a receipt written while it could be read).
        match read {
            Ok(bytes) => hasher.update(bytes),
            Err(_) => hasher.update(b"<absent>"),
        }
    }
    crate::store::hex(&hasher.finalize())
}

/// Schema violations of a receipt document.
pub fn schema_violations(receipt: &Value) -> Vec<crate::plan::schemas::Violation> {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    let validator = crate::plan::schemas::compiled(&VALIDATOR, &crate::plan::schemas::RECEIPT);
    crate::plan::schemas::violations(validator, receipt)
}

/// Why the files under `analysis_results/` could not all be named: the folder (or one inside
/// it) is no folder of the plan, could not be looked at, or could not be listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultsUnlisted {
    NotAFolder(PathBuf),
    Unseen(PathBuf),
    Unlisted(PathBuf, String),
}

/// Every file under `analysis_results/` (relative to the plan), except the receipt and the temp
/// files of an interrupted write (a killed publication leaves them): what dwp's receipt lists,
/// and what verify holds a published plan's files to.
pub fn results_files(plan: &LoadedPlan) -> Result<Vec<String>, ResultsUnlisted> {
    use crate::store::Entry;
    let mut found = Vec::new();
    let mut folders = vec![PathBuf::from("analysis_results")];
    while let Some(folder) = folders.pop() {
        let folder_path = plan.dir().join(&folder);
        match plan.entry(&folder_path) {
            Some(Entry::Missing) => continue,
            Some(Entry::Directory) => {}
            Some(_) => return Err(ResultsUnlisted::NotAFolder(folder_path)),
            None => return Err(ResultsUnlisted::Unseen(folder_path)),
        }
        let listed = plan.list(&folder_path);
        let entries = match &*listed {
            Ok(entries) => entries,
            Err(e) => return Err(ResultsUnlisted::Unlisted(folder_path, e.to_string())),
        };
        for (name, kind) in entries {
            let relative = folder.join(name);
            if *kind == Entry::Directory {
                folders.push(relative);
            } else {
                // Files and anything else: a symlink or a pipe is refused when it is read.
                let relative = relative.to_string_lossy().into_owned();
                if relative != RECEIPT && !crate::store::atomic::is_temp_name(name) {
                    found.push(relative);
                }
            }
        }
    }
    Ok(found)
}
