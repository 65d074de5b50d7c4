//! `dwp update --gates-from WORKTREE/.ak-loop/verify.json`: each verify.json outcome becomes a
//! gate record of the plan task, so a loop and a plan share one evidence trail.
//!
//! An outcome `dwp loop prove` ran and whose output it kept (`log`, `logSha256`, `ended`) is
//! recorded as `dwp run` records its own run: the log is copied into the plan's
//! `analysis_results/gates/` (header, bounded tail, name) and the gate carries the observed
//! mark, all through `steps::gate_log` and `rules::observed`, under the update's lock. The log
//! is copied only while it still hashes to the `logSha256` dwp recorded; one that does not is
//! refused, nothing written. Any other outcome (written by hand, or by a `dwp loop prove` that
//! kept no hash) is recorded as asserted, as before, and the output says so. Nothing is
//! invented: an outcome without an exit code gives a gate without one.

use super::proofs::{self, Proof, ProofStatus};
use crate::error::Result;
use crate::plan::model::Gate;
use crate::rules::observed::Ending;
use crate::steps::gate_log::ObservedRun;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One verify.json outcome, as the gate it becomes.
#[derive(Debug, Clone)]
pub struct OutcomeGate {
    /// The verify.json it came from, as given.
    pub file: PathBuf,
    pub id: String,
    pub gate: GateFrom,
}

#[derive(Debug, Clone)]
pub enum GateFrom {
    /// dwp ran it and its output is at hand: kept in the plan as `dwp run` keeps its own.
    Observed(ObservedRun),
    /// Recorded as the outcome says; `why` it could not be observed.
    Asserted { gate: Gate, why: String },
}

/// What became of one outcome, for the output of `dwp update`.
#[derive(Debug, Clone, Serialize)]
pub struct GateNote {
    pub file: String,
    pub outcome: String,
    pub command: String,
    /// `observed` or `asserted`.
    pub recorded: &'static str,
    /// The log kept in the plan (observed), relative to the plan folder, and its sha256.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_sha256: Option<String>,
    /// Why an asserted one could not be observed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// The gates the outcomes of the verify.json at `path` stand for, in order. Refused, nothing
/// read further, when an outcome claims a kept output that is not there or no longer hashes to
/// its `logSha256`.
pub fn gates_from_verify(path: &Path) -> Result<Vec<OutcomeGate>> {
    let bytes = super::read_input(path)?;
    let verify = proofs::parse_verify(&bytes).map_err(|found| {
        let first = &found[0];
        super::rejected_at(
            path,
            &first.path,
            format!("does not match the verify.json schema: {}", first.message),
        )
        .with_hint("see docs/loop.md and schemas/loop/verify.schema.json")
    })?;
    if verify.outcomes.is_empty() {
        return Err(
            super::rejected_at(path, "$.outcomes", "no outcome to record as a gate")
                .with_hint("run `dwp loop prove` with the contract, or record the outcomes first"),
        );
    }
    let worktree = worktree_of(path);
    let mut gates = Vec::with_capacity(verify.outcomes.len());
    for (i, outcome) in verify.outcomes.iter().enumerate() {
        let gate = match observed_run(path, &worktree, i, outcome, &verify)? {
            Ok(run) => GateFrom::Observed(run),
            Err(why) => GateFrom::Asserted {
                gate: asserted(outcome, &verify.command, &verify.ran_at),
                why,
            },
        };
        gates.push(OutcomeGate {
            file: path.to_path_buf(),
            id: outcome.id.clone(),
            gate,
        });
    }
    Ok(gates)
}

/// The worktree a verify.json belongs to: the folder holding its `.ak-loop/`.
fn worktree_of(path: &Path) -> PathBuf {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if dir.file_name().is_some_and(|name| name == super::LOOP_DIR) {
        dir.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf()
    } else {
        dir.to_path_buf()
    }
}

/// The run dwp observed for outcome `i`, its output read back and checked against the hash
/// `dwp loop prove` recorded; `Ok(Err(why))` when the outcome keeps no output to copy (it is
/// then recorded as asserted).
fn observed_run(
    path: &Path,
    worktree: &Path,
    i: usize,
    outcome: &Proof,
    verify: &proofs::VerifyFile,
) -> Result<std::result::Result<ObservedRun, String>> {
    let field = |name: &str| format!("$.outcomes[{i}].{name}");
    if !outcome.observed_by_dwp() {
        return Ok(Err(
            "not run by dwp (no `observedBy`): the outcome's word".into()
        ));
    }
    let (Some(sha256), Some(log), Some(argv), Some(at)) = (
        &outcome.log_sha256,
        &outcome.log,
        &outcome.command,
        &outcome.at,
    ) else {
        return Ok(Err(
            "its output was kept without a hash (no `logSha256`: a verify.json from an older dwp loop prove); prove it again to record it as observed".into(),
        ));
    };
    let reprove = match &verify.prove_command {
        Some(prove) => format!(
            "prove it again, then run this update again: `{prove} --item {}`",
            outcome.id
        ),
        None => format!(
            "prove item {} again in {} with the `dwp loop prove` that wrote {} (`--item {}`), then run this update again",
            outcome.id,
            worktree.display(),
            path.display(),
            outcome.id
        ),
    };
    let Some(ending) = outcome.ended.as_deref().and_then(Ending::parse) else {
        return Err(super::rejected_at(
            path,
            &field("ended"),
            "an outcome with `logSha256` must say how its run ended (`exit N`, `timed out after S s`, `killed by signal N`, `not started`)",
        )
        .with_hint(reprove));
    };
    if ending.exit_code() != outcome.exit_code {
        return Err(super::rejected_at(
            path,
            &field("exitCode"),
            format!(
                "the outcome says `{ending}` but exit code {}: a proof that contradicts itself",
                outcome
                    .exit_code
                    .map_or_else(|| "none".to_owned(), |c| c.to_string())
            ),
        )
        .with_hint(reprove));
    }
    if !super::is_inside_relative(log) {
        return Err(super::rejected_at(
            path,
            &field("log"),
            format!("`{log}` is not a path inside the worktree"),
        )
        .with_hint(reprove));
    }
    let bytes = super::read_inside(worktree, log).map_err(|failure| {
        let what = match failure {
            crate::store::ReadFailure::Missing => "is missing".to_owned(),
            other => format!("cannot be read: {other}"),
        };
        super::rejected_at(
            path,
            &field("log"),
            format!("the output `{log}` the outcome points at {what}"),
        )
        .with_hint(reprove.clone())
    })?;
    let actual = crate::store::sha256_hex(&bytes);
    if actual != *sha256 {
        return Err(super::rejected_at(
            path,
            &field("logSha256"),
            format!(
                "the output `{log}` has sha256 {actual}, not the {sha256} dwp loop prove recorded: it changed after the run, so it is not copied into the plan"
            ),
        )
        .with_hint(reprove));
    }
    let total = outcome.output_bytes.unwrap_or(0).max(bytes.len() as u64);
    Ok(Ok(ObservedRun {
        argv: argv.clone(),
        finished: at.clone(),
        ending,
        total,
        output: bytes,
    }))
}

/// The gate record of an outcome dwp cannot back with a log: as the outcome says it.
fn asserted(outcome: &Proof, command: &str, ran_at: &str) -> Gate {
    Gate {
        // The latest record per command counts, so every outcome needs its own command.
        command: match &outcome.command {
            Some(argv) => crate::term::display_argv(argv),
            None => format!("{command} [{}]", outcome.id),
        },
        passes: outcome.status == ProofStatus::Passed,
        exit_code: outcome.exit_code,
        last_run: outcome.at.clone().unwrap_or_else(|| ran_at.to_owned()),
        evidence: Some(format!(
            "{} (.ak-loop/verify.json outcome {})",
            outcome.evidence, outcome.id
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asserted_gate(gate: &OutcomeGate) -> &Gate {
        match &gate.gate {
            GateFrom::Asserted { gate, .. } => gate,
            GateFrom::Observed(run) => panic!("observed: {run:?}"),
        }
    }

    #[test]
    fn gates_from_invents_no_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("verify.json");
        std::fs::write(
            &path,
            r#"{"ranAt": "2026-06-09T16:00:00Z", "command": "pnpm test", "exitCode": 0,
                "outcomes": [{"id": "o1", "status": "passed", "evidence": "42 passed"}]}"#,
        )
        .unwrap();
        let gates = gates_from_verify(&path).unwrap();
        let gate = asserted_gate(&gates[0]);
        assert_eq!(gate.exit_code, None);
        assert_eq!(gate.command, "pnpm test [o1]");
        assert_eq!(gate.last_run, "2026-06-09T16:00:00Z");
        assert!(gate.passes);
    }

    #[test]
    fn the_worktree_is_the_folder_holding_ak_loop() {
        assert_eq!(
            worktree_of(Path::new("/w/.ak-loop/verify.json")),
            Path::new("/w")
        );
        assert_eq!(
            worktree_of(Path::new(".ak-loop/verify.json")),
            Path::new(".")
        );
        assert_eq!(worktree_of(Path::new("/x/verify.json")), Path::new("/x"));
    }
}
