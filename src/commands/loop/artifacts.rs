//! `dwp loop artifacts`: the loop's three phase artifacts, file by file.
//!
//! `verify.json` is required (and `plan.md` when a plan was approved). A required file that is
//! absent is *missing*, named by its path: "which file?" is the one question the worker needs
//! answered. A file present but not matching its schema is *invalid*, with the JSON paths of its
//! first mismatches, and outranks missing: it looks like evidence. With no worktree the gate is
//! left out (*skipped*): blaming a worker for a file nobody can open is how a loop invents work.

use super::proofs::{self, Loaded};
use crate::error::Result;
use crate::plan::schemas::Violation;
use crate::store::ReadFailure;
use std::path::{Path, PathBuf};

/// One of the three artifacts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Artifact {
    Plan,
    Verify,
    Dod,
}

impl Artifact {
    pub const ALL: [Artifact; 3] = [Artifact::Plan, Artifact::Verify, Artifact::Dod];

    pub fn name(self) -> &'static str {
        match self {
            Artifact::Plan => "plan",
            Artifact::Verify => "verify",
            Artifact::Dod => "dod",
        }
    }

    pub fn relative_path(self) -> &'static str {
        match self {
            Artifact::Plan => super::PLAN_MD,
            Artifact::Verify => super::VERIFY_JSON,
            Artifact::Dod => super::DOD_JSON,
        }
    }
}

#[derive(Debug, Clone)]
pub struct ArtifactsRequest {
    /// None: `--no-worktree`.
    pub worktree: Option<PathBuf>,
    /// Required artifacts (default: verify).
    pub require: Vec<Artifact>,
    /// A plan was approved, so `plan.md` is required too.
    pub plan_approved: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Present,
    /// Absent and not required.
    Absent,
    /// Absent and required.
    Missing,
    /// Present but not a valid document: the first mismatches.
    Invalid(Vec<Violation>),
}

impl Status {
    pub fn name(&self) -> &'static str {
        match self {
            Status::Present => "present",
            Status::Absent => "absent",
            Status::Missing => "missing",
            Status::Invalid(_) => "invalid",
        }
    }
}

#[derive(Debug, Clone)]
pub struct ArtifactCheck {
    pub artifact: Artifact,
    pub path: PathBuf,
    pub required: bool,
    pub status: Status,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Present,
    Missing,
    Invalid,
    Skipped,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Present => "present",
            Verdict::Missing => "missing",
            Verdict::Invalid => "invalid",
            Verdict::Skipped => "skipped",
        }
    }
}

#[derive(Debug, Clone)]
pub struct ArtifactsReport {
    pub worktree: Option<PathBuf>,
    pub verdict: Verdict,
    pub artifacts: Vec<ArtifactCheck>,
}

pub fn check(request: &ArtifactsRequest) -> Result<ArtifactsReport> {
    let Some(worktree) = &request.worktree else {
        return Ok(ArtifactsReport {
            worktree: None,
            verdict: Verdict::Skipped,
            artifacts: Vec::new(),
        });
    };
    let worktree = super::worktree_dir(worktree)?;
    let mut artifacts = Vec::with_capacity(3);
    for artifact in Artifact::ALL {
        let required = request.require.contains(&artifact)
            || (artifact == Artifact::Plan && request.plan_approved);
        let status = match status_of(&worktree, artifact)? {
            Status::Absent if required => Status::Missing,
            status => status,
        };
        artifacts.push(ArtifactCheck {
            artifact,
            path: worktree.join(artifact.relative_path()),
            required,
            status,
        });
    }
    Ok(ArtifactsReport {
        worktree: Some(worktree),
        verdict: verdict(&artifacts),
        artifacts,
    })
}

/// Invalid outranks missing (worse than absent), which outranks present.
fn verdict(artifacts: &[ArtifactCheck]) -> Verdict {
    if artifacts
        .iter()
        .any(|a| matches!(a.status, Status::Invalid(_)))
    {
        Verdict::Invalid
    } else if artifacts.iter().any(|a| a.status == Status::Missing) {
        Verdict::Missing
    } else {
        Verdict::Present
    }
}

fn status_of(worktree: &Path, artifact: Artifact) -> Result<Status> {
    let from = |loaded: Loaded<()>| match loaded {
        Loaded::Missing => Status::Absent,
        Loaded::Invalid(found) => Status::Invalid(found),
        Loaded::Present(()) => Status::Present,
    };
    Ok(match artifact {
        Artifact::Plan => plan_status(worktree)?,
        Artifact::Verify => from(unit(proofs::load_verify(worktree)?)),
        Artifact::Dod => from(unit(proofs::load_dod(worktree)?)),
    })
}

fn unit<T>(loaded: Loaded<T>) -> Loaded<()> {
    match loaded {
        Loaded::Missing => Loaded::Missing,
        Loaded::Invalid(found) => Loaded::Invalid(found),
        Loaded::Present(_) => Loaded::Present(()),
    }
}

/// `plan.md` has no schema; it must be text a human can read on the pull request.
fn plan_status(worktree: &Path) -> Result<Status> {
    let problem = |message: &str| {
        Status::Invalid(vec![Violation {
            path: "plan.md".into(),
            message: message.into(),
        }])
    };
    Ok(match super::read_inside(worktree, super::PLAN_MD) {
        Ok(bytes) => match std::str::from_utf8(&bytes) {
            Err(_) => problem("is not UTF-8 text"),
            Ok(text) if text.trim().is_empty() => problem("is empty"),
            Ok(_) => Status::Present,
        },
        Err(ReadFailure::Missing) => Status::Absent,
        Err(ReadFailure::Io(e)) => {
            return Err(crate::error::Error::Unverified {
                message: format!("cannot be read: {e}"),
                place: worktree.join(super::PLAN_MD).display().to_string(),
            });
        }
        Err(other) => problem(&other.to_string()),
    })
}
