//! `dwp migrate`: deliberately converts a v1 pair to v2 or v5, one of the two commands that
//! write `manifest.json` (the spec: it "MUST be written exactly once, when the create flow
//! materializes the plan, and MUST NOT change afterward except for a spec-version migration
//! recorded in PROGRESS.md"; `dwp init` is the other).
//!
//! Each `file` becomes a `file` locator, the manifest gains `plan_format: full`, the state
//! `format: full`, `materialization: ready`, the README's approval (when it records one) and
//! `promotion: null`. Both documents and the PROGRESS.md line are one change under the state
//! lock (`steps::commit`), each document checked against its schema and the invariants before
//! anything is written. No other command changes a document's generation.

use crate::clock;
use crate::error::{Error, Result};
use crate::findings::Severity;
use crate::plan::model::{
    Approval, DocKind, Field, Generation, Locator, LocatorKind, Manifest, Materialization,
    PlanFormat, State,
};
use crate::plan::{self, Loaded, LoadedPlan};
use crate::steps::commit::{Change, commit_or_preview};
use crate::store;
use serde::Serialize;
use std::path::Path;

/// What `dwp migrate` wrote.
#[derive(Debug, Clone, Serialize)]
pub struct MigrateOutcome {
    pub plan: String,
    pub from: String,
    pub to: String,
    pub manifest_sha256: String,
    pub state_sha256: String,
    /// False for a replay: the pair already is of the generation asked for.
    pub changed: bool,
    /// `--dry-run`: nothing was written; `diff` is what would have been.
    pub dry_run: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// Convert the v1 plan in `plan_dir` to `to` (v2 or v5).
pub fn migrate(
    plan_dir: &Path,
    to: Generation,
    dry_run: bool,
    signer: &crate::plan::model::Actor,
) -> Result<MigrateOutcome> {
    crate::steps::writer::check_signature(signer.agent.as_ref(), signer.model.as_ref())?;
    if to == Generation::V1 {
        return Err(Error::Usage(
            "--to takes v2 or v5: a plan migrates forward only".into(),
        ));
    }
    crate::steps::writer::under_lock(plan_dir, std::time::Duration::ZERO, |plan| {
        migrate_under_lock(plan, to, dry_run, signer)
    })
}

fn migrate_under_lock(
    plan: &LoadedPlan,
    to: Generation,
    dry_run: bool,
    signer: &crate::plan::model::Actor,
) -> Result<MigrateOutcome> {
    let paths = &plan.paths;
    crate::plan::refuse_while_finalizing(&paths.dir)?;
    let manifest = plan
        .manifest()
        .map_err(|f| newer_or(f.to_vec(), "the manifest"))?;
    let state = plan
        .state()
        .map_err(|f| newer_or(f.to_vec(), "the state"))?;
    if manifest.generation == to && state.generation == to {
        // A replay (the migration done, or a plan born this generation): nothing to write.
        return Ok(MigrateOutcome {
            plan: state.doc.plan.clone(),
            from: format!("v{}", to.number()),
            to: format!("v{}", to.number()),
            manifest_sha256: manifest.sha256.clone(),
            state_sha256: state.sha256.clone(),
            changed: false,
            dry_run,
            diff: None,
        });
    }
    check_migratable(manifest, state, to)?;
    let readme = plan.markdown().map_err(|failure| {
        failure
            .clone_kind()
            .into_error("read", &paths.dir.join("README.md"))
    })?;
    readme.require_readable()?;
    if let Some(standard) = &readme.readme.standard {
        let place = format!("{}:{}", readme.readme_path.display(), standard.line);
        crate::steps::materialize::refuse_newer_spec(&standard.version, &place)?;
    }
    crate::steps::materialize::refuse_newer_spec(
        &manifest.doc.spec_version,
        &format!("{}: $.spec_version", manifest.file),
    )?;
    let problems = crate::rules::invariants::check_state(state);
    if !problems.is_empty() {
        return Err(plan::refusal(
            problems,
            "the input state breaks an invariant",
        ));
    }
    crate::steps::writer::refuse_clock_behind(&state.doc, &state.file, &clock::now_rfc3339())?;
    let next_manifest = migrated_manifest(&manifest.doc, to);
    let mut next_state = migrated_state(&state.doc, to, readme.readme.approval());
    next_state.sign(signer.agent.as_ref(), signer.model.as_ref());
    let (manifest_bytes, state_bytes) =
        crate::steps::materialize::checked_pair(paths, &next_manifest, &next_state)?;
    let from = format!("v{}", manifest.generation.min(state.generation).number());
    let state_sha256 = store::sha256_hex(&state_bytes);
    let manifest_sha256 = store::sha256_hex(&manifest_bytes);
    // Both files and the record, in one change.
    let mut write = Change::new(&paths.dir, "dwp migrate");
    write.write_known(&paths.state, Some(state.sha256.clone()), state_bytes);
    write.write_known(
        &paths.manifest,
        Some(manifest.sha256.clone()),
        manifest_bytes,
    );
    write.append(
        &paths.dir.join("PROGRESS.md"),
        &format!(
            "- {}: `dwp migrate --to v{n}`: manifest.json and state.json {from} → v{n} (file → locator, plan_format full, format full, materialization ready)",
            next_state.updated_at,
            n = to.number()
        ),
    );
    let diff = commit_or_preview(write, plan, dry_run)?;
    Ok(MigrateOutcome {
        plan: next_state.plan,
        from,
        to: format!("v{}", to.number()),
        manifest_sha256,
        state_sha256,
        changed: true,
        dry_run,
        diff,
    })
}

/// A plan of a newer generation is refused as newer, never as invalid.
fn newer_or(findings: Vec<crate::findings::Finding>, what: &str) -> Error {
    if let Some(newer) = findings.iter().find(|f| f.severity == Severity::Unverified) {
        return Error::rejected(
            newer.file.clone(),
            format!(
                "{}: the plan is newer than this tool; it is never migrated by guess",
                newer.message
            ),
        )
        .with_hint("upgrade dwp");
    }
    plan::refusal(findings, &format!("{what} does not validate"))
}

/// A v1 pair, or one half already at `to` (a migration a crash interrupted between writes).
fn check_migratable(
    manifest: &Loaded<Manifest>,
    state: &Loaded<State>,
    to: Generation,
) -> Result<()> {
    let generations = [manifest.generation, state.generation];
    let fits = generations.contains(&Generation::V1)
        && generations.iter().all(|g| *g == Generation::V1 || *g == to);
    if fits {
        return Ok(());
    }
    let (file, generation) = if manifest.generation != Generation::V1 {
        (&manifest.file, manifest.generation)
    } else {
        (&state.file, state.generation)
    };
    Err(Error::rejected(
        format!("{file}: $.schema"),
        format!(
            "is v{}: only a v1 plan migrates (to v{}), and a plan is never rewritten to another generation otherwise",
            generation.number(),
            to.number()
        ),
    ))
}

fn migrated_manifest(manifest: &Manifest, to: Generation) -> Manifest {
    Manifest {
        schema: to.url(DocKind::Manifest),
        plan_format: Some(manifest.plan_format.unwrap_or(PlanFormat::Full)),
        ..manifest.clone()
    }
}

/// v1 tasks locate their file in `file`; from v2 on it is a `file` locator, and `gates` is
/// required.
fn migrated_state(state: &State, to: Generation, readme_approval: Option<Approval>) -> State {
    let tasks = state
        .tasks
        .iter()
        .map(|task| {
            let mut task = task.clone();
            if let Some(file) = task.file.take() {
                task.locator = Some(Locator {
                    kind: LocatorKind::File,
                    value: file,
                });
            }
            task.gates.get_or_insert_with(Vec::new);
            task
        })
        .collect();
    State {
        schema: to.url(DocKind::State),
        updated_at: clock::now_rfc3339(),
        format: Some(state.format.unwrap_or(PlanFormat::Full)),
        materialization: Some(state.materialization.unwrap_or(Materialization::Ready)),
        approval: state.approval.or(readme_approval),
        promotion: match &state.promotion {
            Field::Absent => Field::Null,
            other => other.clone(),
        },
        tasks,
        ..state.clone()
    }
}
