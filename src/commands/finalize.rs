//! `dwp finalize`: publish a plan (`crate::steps::publication`, the terminal transition it shares with
//! `dwp update` of the last task), recover an interrupted publication, or check a published
//! plan's receipt against its files (`--check`).

use crate::error::{Error, Result};
use crate::findings::Finding;
use crate::plan::LoadedPlan;
use crate::plan::model::PlanStatus;
use crate::steps::commit;
use crate::steps::publication::{
    Candidate, Checked, MARKER, Publication, default_candidate, plan_publication, plan_recovery,
};
use crate::store;
use crate::term::path_word;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the caller asks for.
#[derive(Debug, Clone, Default)]
pub struct FinalizeRequest {
    /// A completed state to publish; default: the current state with its last task completed.
    pub candidate: Option<PathBuf>,
    pub expected_sha256: Option<String>,
    pub recover: bool,
    pub wait: Duration,
    /// Who writes the default candidate (`--agent`, `--model`), recorded in `updated_by`.
    pub signer: crate::plan::model::Actor,
}

/// Run `dwp finalize` (or `--recover`) on the plan at `target`.
pub fn finalize(target: &Path, request: &FinalizeRequest) -> Result<Publication> {
    crate::steps::writer::check_signature(
        request.signer.agent.as_ref(),
        request.signer.model.as_ref(),
    )?;
    let (plan_dir, _) = crate::plan::resolve_target(target);
    let result = crate::steps::writer::under_lock(target, request.wait, |plan| {
        if request.recover {
            let offered = match &request.candidate {
                Some(path) => Some((path.as_path(), read_candidate(path)?)),
                None => None,
            };
            publish(plan_recovery(plan, offered)?)
        } else {
            finalize_locked(plan, request)
        }
    });
    result.map_err(|e| name_recovery(e, &plan_dir))
}

/// Carry out a publication that passed its checks; one that did not is the answer as it is.
fn publish(checked: Checked) -> Result<Publication> {
    match checked {
        Checked::Ready(planned) => commit::publish(*planned),
        Checked::Stopped(publication) => Ok(*publication),
    }
}

/// An I/O failure (a full disk) after the marker was written leaves a publication to complete,
/// not "nothing claimed": the hint names the command that completes it.
fn name_recovery(error: Error, plan_dir: &Path) -> Error {
    let marked = store::place(&plan_dir.join(MARKER), plan_dir) != store::Place::Missing;
    if marked && matches!(error, Error::Io { .. }) {
        let hint = format!(
            "the publication stopped after its marker was written: once the cause is fixed, `dwp finalize --recover {}` completes it",
            crate::term::path_word(plan_dir)
        );
        return error.with_hint(hint);
    }
    error
}

fn finalize_locked(plan: &LoadedPlan, request: &FinalizeRequest) -> Result<Publication> {
    crate::plan::refuse_while_finalizing(plan.dir())?;
    let current = crate::steps::writer::load_state_for_write(plan, false)?;
    if let Some(expected) = &request.expected_sha256
        && *expected != current.sha256
    {
        return Err(Error::SnapshotMoved {
            path: plan.paths.state.clone(),
            expected: expected.clone(),
            actual: current.sha256.clone(),
        });
    }
    let candidate = match &request.candidate {
        Some(path) => Candidate::Bytes(read_candidate(path)?),
        None => {
            crate::steps::writer::refuse_clock_behind(
                &current.doc,
                &current.file,
                &crate::clock::now_rfc3339(),
            )?;
            crate::profile::time("default candidate", || {
                default_candidate(current.clone(), &request.signer)
            })
        }
    };
    publish(plan_publication(plan, candidate, Vec::new()))
}

/// A candidate file: a bounded read of a regular file (a symlink may not lead out of its folder).
fn read_candidate(path: &Path) -> Result<Vec<u8>> {
    store::read_given(path).map_err(|failure| {
        Error::rejected(
            path.display().to_string(),
            format!("the candidate cannot be read: {failure}"),
        )
    })
}

/// `dwp finalize --check`: the receipt's hashes against the files on disk.
pub fn check(target: &Path) -> Result<Vec<Finding>> {
    let plan = LoadedPlan::of_target(target);
    let state = crate::steps::writer::load_state_for_write(&plan, false)?;
    let plan_dir = plan.dir();
    let receipt = plan_dir.join(crate::rules::receipt::RECEIPT);
    if plan.place(&receipt) == store::Place::Missing {
        // Nothing was published, so nothing "changed since publication".
        let hint = if state.doc.status == PlanStatus::Completed {
            format!("publish it with `dwp finalize {}`", path_word(plan_dir))
        } else {
            format!(
                "there is nothing to check until it is published: complete its tasks, then `dwp finalize {}`",
                path_word(plan_dir)
            )
        };
        return Err(Error::rejected(
            receipt.display().to_string(),
            "the plan is not published: there is no receipt to check",
        )
        .with_hint(hint));
    }
    let mut findings = crate::rules::conformance::receipt_findings(&plan, &state.doc);
    crate::rules::conformance::add_fix_hints(&mut findings, plan_dir);
    Ok(findings)
}

#[cfg(test)]
mod tests {
    //! Fault injection at each step of publication: after an injected stop, `verify` fails and
    //! every other writer refuses; `--recover` completes with the recorded candidate and refuses
    //! another one.

    use super::*;
    use crate::commands::verify::{VerifyVerdict, verify_plan};
    use crate::findings::Code;
    use crate::plan::model::State;
    use crate::steps::publication::{Marker, PublicationVerdict, STOP_AFTER, Step};
    use crate::synth::SynthPlan;

    fn plan(root: &Path) -> PathBuf {
        SynthPlan::new("PLAN_fault_injection", 3)
            .ready_to_publish()
            .write(root)
            .unwrap()
    }

    fn publish(plan: &Path, stop_after: Option<Step>) -> Result<Publication> {
        STOP_AFTER.with(|s| s.set(stop_after));
        let result = finalize(plan, &FinalizeRequest::default());
        STOP_AFTER.with(|s| s.set(None));
        result
    }

    fn recover(plan: &Path, candidate: Option<PathBuf>) -> Result<Publication> {
        let request = FinalizeRequest {
            candidate,
            recover: true,
            ..FinalizeRequest::default()
        };
        finalize(plan, &request)
    }

    #[test]
    fn an_interrupted_publication_blocks_everything_but_recovery_with_the_same_candidate() {
        for step in [
            Step::Marked,
            Step::StatePublished,
            Step::Reverified,
            Step::ReceiptWritten,
        ] {
            let root = tempfile::tempdir().unwrap();
            let plan = plan(root.path());
            let stopped = publish(&plan, Some(step));
            assert!(stopped.is_err(), "{step:?}: the injected stop");
            assert!(plan.join(MARKER).exists(), "{step:?}: the marker stays");
            let marker: Marker =
                serde_json::from_slice(&std::fs::read(plan.join(MARKER)).unwrap()).unwrap();
            assert_eq!(
                marker.step, "marked",
                "{step:?}: the marker is not rewritten with a later step"
            );

            let report = verify_plan(&plan, false);
            assert_eq!(report.verdict, VerifyVerdict::NotConformant, "{step:?}");
            assert!(
                report
                    .findings
                    .iter()
                    .any(|f| f.code == Code::PublicationInProgress),
                "{step:?}: verify names the marker"
            );
            let other_writer = crate::commands::update::update(
                &plan,
                &crate::commands::update::UpdateRequest {
                    task: 3,
                    notes: Some("more notes".into()),
                    ..Default::default()
                },
            );
            let in_progress = |result: Result<String>| {
                result
                    .unwrap_err()
                    .to_string()
                    .contains("a publication is in progress")
            };
            assert!(
                in_progress(other_writer.map(|o| o.transition)),
                "{step:?}: other writers refuse because of the marker"
            );
            assert!(
                in_progress(publish(&plan, None).map(|p| p.plan)),
                "{step:?}: a new publication refuses while the marker exists"
            );

            // Another candidate: the current state with a different note.
            let mut other: State =
                serde_json::from_slice(&std::fs::read(plan.join("state.json")).unwrap()).unwrap();
            other.updated_at = "2026-06-09T14:44:00Z".into();
            let other_path = root.path().join("other-candidate.json");
            std::fs::write(&other_path, store::json_file_bytes(&other)).unwrap();
            assert!(
                recover(&plan, Some(other_path)).is_err(),
                "{step:?}: another candidate is refused"
            );
            assert!(plan.join(MARKER).exists());

            let recovered = recover(&plan, None).expect("recovery");
            assert_eq!(recovered.verdict, PublicationVerdict::Published, "{step:?}");
            let summary = recovered.recovered_from.expect("what the marker said");
            assert_eq!(
                summary.state_already_published,
                step != Step::Marked,
                "{step:?}"
            );
            assert!(!plan.join(MARKER).exists());
            assert_eq!(
                verify_plan(&plan, false).verdict,
                VerifyVerdict::Conformant,
                "{step:?}: {:?}",
                verify_plan(&plan, false).findings
            );
        }
    }

    #[test]
    fn a_stop_after_the_marker_is_removed_leaves_a_published_plan() {
        let root = tempfile::tempdir().unwrap();
        let plan = plan(root.path());
        assert!(publish(&plan, Some(Step::MarkerRemoved)).is_err());
        assert!(!plan.join(MARKER).exists());
        assert_eq!(verify_plan(&plan, false).verdict, VerifyVerdict::Conformant);
        assert!(recover(&plan, None).is_err(), "nothing to recover");
    }

    #[test]
    fn recovery_refuses_a_marker_whose_candidate_was_altered() {
        let root = tempfile::tempdir().unwrap();
        let plan = plan(root.path());
        assert!(publish(&plan, Some(Step::Marked)).is_err());
        let path = plan.join(MARKER);
        let mut marker: Marker = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        marker.candidate = marker
            .candidate
            .replace("plan published", "plan published!");
        std::fs::write(&path, store::json_file_bytes(&marker)).unwrap();
        let error = recover(&plan, None).unwrap_err();
        assert!(error.to_string().contains("altered"), "{error}");
    }

    #[test]
    fn artifacts_changed_during_publication_leave_no_receipt_and_keep_the_marker() {
        let root = tempfile::tempdir().unwrap();
        let plan = plan(root.path());
        assert!(publish(&plan, Some(Step::StatePublished)).is_err());
        let readme = plan.join("README.md");
        let text = std::fs::read_to_string(&readme).unwrap() + "\nEdited mid-publication.\n";
        std::fs::write(&readme, text).unwrap();
        let publication = recover(&plan, None).unwrap();
        assert_eq!(publication.verdict, PublicationVerdict::Refused);
        assert!(!plan.join(crate::rules::receipt::RECEIPT).exists());
        assert!(plan.join(MARKER).exists());
    }
}
