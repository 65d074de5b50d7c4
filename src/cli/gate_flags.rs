//! The gate record flags of `dwp update`: `--gate "COMMAND|EXIT_CODE|EVIDENCE"` and
//! `--gate-json '{...}'`, parsed into the model's `Gate` before any command runs.

use crate::clock;
use crate::error::{Error, Result};
use crate::plan::model::Gate;
use serde::Deserialize;

/// Parse `--gate "COMMAND|EXIT_CODE|EVIDENCE"`: split on the first two `|` (so evidence may
/// hold pipes; a command with a pipe uses `--gate-json`); passes is `EXIT_CODE == 0`.
pub fn parse_gate_spec(spec: &str, now: &str) -> Result<Gate> {
    let flag = || format!("--gate {spec:?}");
    let mut parts = spec.splitn(3, '|');
    let (Some(command), Some(exit), Some(evidence)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(Error::Usage(format!(
            "{} is not COMMAND|EXIT_CODE|EVIDENCE (use --gate-json for a command with a pipe)",
            flag()
        )));
    };
    let exit_code: i64 = exit
        .trim()
        .parse()
        .map_err(|_| Error::Usage(format!("{}: exit code `{exit}` is not an integer", flag())))?;
    Ok(Gate {
        command: command.trim().to_owned(),
        passes: exit_code == 0,
        exit_code: Some(exit_code),
        last_run: now.to_owned(),
        evidence: Some(evidence.trim().to_owned()),
    })
}

/// The `--gate-json` object: the closed gate record; `last_run` defaults to now.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GateJson {
    command: String,
    passes: bool,
    #[serde(default, deserialize_with = "crate::plan::model::int::opt_i64")]
    exit_code: Option<i64>,
    #[serde(default)]
    last_run: Option<String>,
    #[serde(default)]
    evidence: Option<String>,
}

/// Parse `--gate-json '{...}'`, refusing unknown keys, duplicate keys and wrong types.
pub fn parse_gate_json(text: &str, now: &str) -> Result<Gate> {
    let place = "--gate-json";
    let value = crate::plan::json::parse_strict(text.as_bytes())
        .map_err(|e| Error::rejected(format!("{place}: {}", e.path), e.message))?;
    let gate: GateJson = serde_path_to_error::deserialize(&value).map_err(|e| {
        Error::rejected(
            format!("{place}: $.{}", e.path()),
            e.into_inner().to_string(),
        )
    })?;
    if let Some(last_run) = &gate.last_run
        && clock::parse_rfc3339(last_run).is_none()
    {
        return Err(Error::rejected(
            format!("{place}: $.last_run"),
            format!("`{last_run}` is not an RFC 3339 date-time"),
        ));
    }
    Ok(Gate {
        command: gate.command,
        passes: gate.passes,
        exit_code: gate.exit_code,
        last_run: gate.last_run.unwrap_or_else(|| now.to_owned()),
        evidence: gate.evidence,
    })
}
