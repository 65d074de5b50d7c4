//! `dwp update --gates-from WORKTREE/.ak-loop/verify.json`: each verify.json outcome becomes a
//! gate record of the plan task (command, exit code, evidence), so a loop and a plan share one
//! evidence trail. Nothing is invented: an outcome without an exit code gives a gate without one,
//! which the updater's evidence rules then judge as they judge any other gate.

use super::proofs::{self, Proof, ProofStatus};
use crate::error::Result;
use crate::plan::model::Gate;
use std::path::Path;

/// The gate records the outcomes of the verify.json at `path` stand for.
pub fn gates_from_verify(path: &Path) -> Result<Vec<Gate>> {
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
    Ok(verify
        .outcomes
        .iter()
        .map(|o| gate(o, &verify.command, &verify.ran_at))
        .collect())
}

fn gate(outcome: &Proof, command: &str, ran_at: &str) -> Gate {
    Gate {
        // The latest record per command counts, so every outcome needs its own command.
        command: match &outcome.command {
            Some(argv) => crate::steps::run::display_argv(argv),
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
        assert_eq!(gates[0].exit_code, None);
        assert_eq!(gates[0].command, "pnpm test [o1]");
        assert_eq!(gates[0].last_run, "2026-06-09T16:00:00Z");
        assert!(gates[0].passes);
    }
}
