//! Materialization, the core of `dwp init` that `dwp new` shares: a v5 `manifest.json` and
//! `state.json` derived from a plan's markdown (the README's title, `**Standard:**` line, Plan
//! Variables, Approval row and task index; a checked box is a completed task), with PROMPTS.md,
//! PROGRESS.md and analysis_results/ created when absent, in one intent record under the state
//! lock. It refuses a plan that already has either JSON file, or that declares a standard newer
//! than this dwp knows. The manifest is written once (the plan-state spec: it "MUST be written exactly
//! once, when the create flow materializes the plan").
//!
//! [`materialize`] takes the plan's name from its caller, so `dwp new` can materialize a plan
//! in the folder it builds beside its destination before renaming it into place; [`init`] takes
//! it from the folder's own name.

use crate::clock;
use crate::error::{Error, Result};
use crate::plan::markdown::Readme;
use crate::plan::model::{
    Actor, Approval, Archetype, DocKind, Field, Generation, Locator, LocatorKind, Manifest,
    Materialization, PlanFormat, PlanStatus, Rigor, State, Task, TaskStatus,
};
use crate::plan::{self, Loaded, LoadedPlan, PlanPaths};
use crate::steps::commit::{Change, commit_or_preview};
use crate::store;
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::Path;

/// What `dwp init` wrote.
#[derive(Debug, Clone, Serialize)]
pub struct InitOutcome {
    pub plan: String,
    /// The plan folder as the caller named it.
    pub path: String,
    pub spec_version: String,
    /// Where the standard came from: `README` (its Standard line) or `--standard` (assumed: the
    /// README declares none).
    pub standard_from: &'static str,
    pub plan_format: PlanFormat,
    pub archetype: Archetype,
    pub rigor: Rigor,
    pub approval: Approval,
    pub task_count: u64,
    /// Tasks whose README box is checked, recorded completed as the markdown says.
    pub completed: u64,
    /// Completed tasks whose log records no gate: `dwp verify` will ask for evidence.
    pub completed_without_gates: Vec<u64>,
    /// Completed tasks whose log records no readable `Timestamp:`: their `completed_at` is the
    /// time of `dwp init`.
    pub completed_at_init: Vec<u64>,
    /// Plan files that were absent and were created (`PROMPTS.md`, `PROGRESS.md`,
    /// `analysis_results/`).
    pub created: Vec<String>,
    pub manifest_sha256: String,
    pub state_sha256: String,
    /// `--dry-run`: nothing was written; `diff` is what would have been.
    pub dry_run: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// Who materializes the plan (`--agent`, `--model`): a display name, never read from the
/// environment.
#[derive(Debug, Clone, Default)]
pub struct Creator {
    pub agent: Option<String>,
    pub model: Option<String>,
}

/// Who materializes, under which standard, and in whose name.
#[derive(Debug, Clone, Copy)]
pub struct Materialize<'a> {
    pub creator: &'a Creator,
    /// The `--standard` the caller gives for a README that declares none.
    pub standard: Option<&'a str>,
    /// The plan's name; `None`: the folder's own name, which must be a plan name.
    pub name: Option<&'a str>,
    /// The command named in PROGRESS.md and the intent record (`dwp init`, `dwp new`).
    pub by: &'a str,
    /// Check everything and show the writes as a diff, writing nothing.
    pub dry_run: bool,
}

/// Materialize the markdown-only plan in `plan_dir` (`dwp init`). `standard` is the
/// `--standard` the caller gives for a README that declares none.
pub fn init(
    plan_dir: &Path,
    creator: &Creator,
    standard: Option<&str>,
    dry_run: bool,
) -> Result<InitOutcome> {
    materialize(
        plan_dir,
        &Materialize {
            creator,
            standard,
            name: None,
            by: "dwp init",
            dry_run,
        },
    )
}

/// Materialize the markdown-only plan in `plan_dir` as `how` says, under the plan's lock.
pub fn materialize(plan_dir: &Path, how: &Materialize) -> Result<InitOutcome> {
    check_creator(how.creator)?;
    let paths = PlanPaths::new(plan_dir);
    if !plan_dir.is_dir() {
        return Err(Error::rejected(
            plan_dir.display().to_string(),
            "is not a plan folder",
        ));
    }
    crate::steps::writer::under_lock(&paths.dir, std::time::Duration::ZERO, |plan| {
        materialize_under_lock(plan, how)
    })
}

fn materialize_under_lock(plan: &LoadedPlan, how: &Materialize) -> Result<InitOutcome> {
    let paths = &plan.paths;
    let (creator, standard) = (how.creator, how.standard);
    crate::plan::refuse_while_finalizing(&paths.dir)?;
    refuse_existing(plan)?;
    let name = match how.name {
        Some(name) => name.to_owned(),
        None => plan_name(paths)?,
    };
    let md = plan.markdown().map_err(|failure| {
        failure
            .clone_kind()
            .into_error("read", &paths.dir.join("README.md"))
    })?;
    md.require_readable()?;
    let place = md.readme_path.display().to_string();
    let readme = &md.readme;
    let (spec_version, standard_from) = declared_standard(readme, &place, standard)?;
    let format = plan_format(readme, &place)?;
    let pending = initial_tasks(md, format, &paths.dir, &place)?;
    let now = clock::now_rfc3339();
    let approval = readme.approval().unwrap_or(Approval::Pending);
    let base = State {
        schema: Generation::V5.url(DocKind::State),
        plan: name.clone(),
        updated_at: now.clone(),
        updated_by: creator.as_actor(),
        status: PlanStatus::Pending,
        completed_count: 0,
        task_count: pending.len() as u64,
        format: Some(format),
        materialization: Some(Materialization::Ready),
        approval: Some(approval),
        promotion: Field::Null,
        tasks: pending,
        checkpoint: Field::Null,
        blocked: Field::Null,
    };
    // The boxes as they are: a checked task is completed, with what its log records.
    let rules = crate::rules::regenerate::Regeneration {
        allow_completion: true,
        ..Default::default()
    };
    let (state, _) = crate::rules::regenerate::regenerate(md, &base, &now, &rules)?;
    let manifest = Manifest {
        schema: Generation::V5.url(DocKind::Manifest),
        spec_version: spec_version.clone(),
        name: name.clone(),
        title: readme.title.as_deref().and_then(|h1| plan_title(h1, &name)),
        archetype: variable(readme, "Archetype", &place)?.unwrap_or(Archetype::Individual),
        rigor: variable(readme, "Rigor", &place)?.unwrap_or(Rigor::Standard),
        plan_format: Some(format),
        created_at: now.clone(),
        created_by: creator.as_map(),
        tags: None,
        task_count: state.task_count,
        parent_plan: Field::Null,
    };
    let (manifest_bytes, state_bytes) = checked_pair(paths, &manifest, &state)?;
    let completed = state.completed_count;
    let record = format!(
        "- {now}: materialized by `{}`: manifest.json and state.json (v5, {format}, DWP spec {spec_version} from {standard_from}, {} tasks, {completed} completed as the README's boxes record, approval {approval})",
        how.by, state.task_count
    );
    let state_sha256 = store::sha256_hex(&state_bytes);
    let manifest_sha256 = store::sha256_hex(&manifest_bytes);
    // Every file of the materialization, and its record, in one change.
    let mut write = Change::new(&paths.dir, how.by);
    let created = plan_file_steps(&mut write, plan, &record)?;
    write.write(&paths.state, None, state_bytes);
    write.write(&paths.manifest, None, manifest_bytes);
    if !created.iter().any(|c| c == "PROGRESS.md") {
        write.append(&paths.dir.join("PROGRESS.md"), &record);
    }
    let diff = commit_or_preview(write, plan, how.dry_run)?;
    Ok(InitOutcome {
        dry_run: how.dry_run,
        diff,
        plan: name,
        path: paths.dir.display().to_string(),
        spec_version,
        standard_from,
        plan_format: format,
        archetype: manifest.archetype,
        rigor: manifest.rigor,
        approval,
        task_count: state.task_count,
        completed,
        completed_without_gates: state
            .tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Completed && t.gates().is_empty())
            .map(|t| t.id)
            .collect(),
        completed_at_init: state
            .tasks
            .iter()
            .filter(|t| {
                t.status == TaskStatus::Completed && t.completed_at.as_deref() == Some(now.as_str())
            })
            .map(|t| t.id)
            .collect(),
        created,
        manifest_sha256,
        state_sha256,
    })
}

/// The plan's title from the README's H1, without the labels plans put before it
/// (`# Plan: Title`, `# Deep Work Plan: Title`, `# PLAN_name — Title`); `None` when nothing else
/// is left.
fn plan_title(h1: &str, name: &str) -> Option<String> {
    let mut title = h1.trim();
    for label in ["Deep Work Plan:", "Example Plan:", "Plan:", name] {
        if let Some(head) = title.get(..label.len())
            && head.eq_ignore_ascii_case(label)
        {
            title = title[label.len()..].trim_start_matches([' ', ':', '—', '–', '-']);
        }
    }
    let title = crate::plan::markdown::normalize_title(title);
    (!title.is_empty()).then_some(title)
}

/// The plan layout's files that a markdown-only plan may lack, created titled (a new
/// PROGRESS.md opens with the materialization's `record`), as steps of `write`.
fn plan_file_steps(write: &mut Change, plan: &LoadedPlan, record: &str) -> Result<Vec<String>> {
    let dir = plan.dir();
    let missing = |path: &Path| -> Result<bool> {
        match plan.entry(path) {
            Some(entry) => Ok(entry == store::Entry::Missing),
            None => Err(Error::io(
                "stat",
                path,
                std::io::Error::other("cannot be looked at"),
            )),
        }
    };
    let mut created = Vec::new();
    let progress = format!("# Progress\n{record}\n");
    for (name, text) in [
        ("PROMPTS.md", "# Prompts\n"),
        ("PROGRESS.md", progress.as_str()),
    ] {
        let path = dir.join(name);
        if missing(&path)? {
            write.write(&path, None, text.as_bytes().to_vec());
            created.push(name.to_owned());
        }
    }
    let results = dir.join("analysis_results");
    if missing(&results)? {
        write.create_dir(&results);
        created.push("analysis_results/".to_owned());
    }
    Ok(created)
}

impl Creator {
    fn as_map(&self) -> Option<Map<String, Value>> {
        let mut map = Map::new();
        for (key, value) in [("agent", &self.agent), ("model", &self.model)] {
            if let Some(value) = value {
                map.insert(key.to_owned(), Value::String(value.clone()));
            }
        }
        (!map.is_empty()).then_some(map)
    }

    fn as_actor(&self) -> Option<Actor> {
        (self.agent.is_some() || self.model.is_some()).then(|| Actor {
            agent: self.agent.clone(),
            model: self.model.clone(),
        })
    }
}

/// A display name of at most 100 characters on one line (the v1 schema's limit, kept for all).
fn check_creator(creator: &Creator) -> Result<()> {
    for (flag, value) in [("--agent", &creator.agent), ("--model", &creator.model)] {
        let Some(value) = value else { continue };
        let ok = !value.trim().is_empty()
            && value.chars().count() <= 100
            && !value.chars().any(char::is_control);
        if !ok {
            return Err(Error::rejected(
                flag,
                format!("`{value}` is not a display name (one line, 1 to 100 characters)"),
            ));
        }
    }
    Ok(())
}

/// The manifest is written once: a plan that has either JSON file is already materialized.
fn refuse_existing(plan: &LoadedPlan) -> Result<()> {
    for path in [&plan.paths.manifest, &plan.paths.state] {
        if plan.entry(path).is_some_and(|e| e != store::Entry::Missing) {
            return Err(Error::rejected(
                path.display().to_string(),
                "already exists: a plan is materialized once, and manifest.json is never rewritten",
            )
            .with_hint("`dwp reconcile` brings an existing state in line with the markdown; `dwp migrate` converts a v1 pair; a state that never held a valid plan (`dwp validate` says why) is moved aside with its manifest before `dwp init` runs again"));
        }
    }
    Ok(())
}

/// The folder's name, which must match the schema's `PLAN_word_word` pattern.
fn plan_name(paths: &PlanPaths) -> Result<String> {
    let name = paths.folder_name().unwrap_or_default();
    if !crate::plan::is_plan_name(&name) {
        return Err(Error::rejected(
            paths.dir.display().to_string(),
            format!("the folder name `{name}` is not a plan name: PLAN_ then 2 to 5 lower-case words joined by `_`"),
        )
        .with_hint("rename the folder (e.g. PLAN_payment_webhooks)"));
    }
    Ok(name)
}

/// The standard the plan is materialized under: the README's `**Standard:** DWP spec X.Y.Z`,
/// else `--standard` (which must agree with the README when both are given). Refused when
/// neither says, when it is not X.Y.Z, not a DWP standard, or newer than this dwp knows.
fn declared_standard(
    readme: &Readme,
    place: &str,
    flag: Option<&str>,
) -> Result<(String, &'static str)> {
    let (version, from, place) = match (&readme.standard, flag) {
        (Some(standard), Some(flag)) if standard.version != flag => {
            return Err(Error::Usage(format!(
                "--standard {flag}: the README declares DWP spec {} ({place}:{}); give no --standard, or correct the README",
                standard.version, standard.line
            )));
        }
        (Some(standard), _) => (
            standard.version.clone(),
            "README",
            format!("{place}:{}", standard.line),
        ),
        (None, Some(flag)) => (flag.to_owned(), "--standard", "--standard".to_owned()),
        (None, None) => {
            return Err(Error::rejected(
                place,
                "declares no standard: spec_version comes from the `**Standard:** DWP spec X.Y.Z` line",
            )
            .with_hint(format!(
                "add `**Standard:** DWP spec X.Y.Z` to the README, or say which standard the plan was written under with `dwp init {} --standard X.Y.Z`",
                crate::term::path_word(Path::new(&place).parent().unwrap_or(Path::new(".")))
            )));
        }
    };
    let semver = regex::Regex::new(r"^\d+\.\d+\.\d+$").expect("constant pattern");
    if !semver.is_match(&version) {
        return Err(Error::rejected(
            place,
            format!("the standard `{version}` is not a version X.Y.Z"),
        ));
    }
    refuse_newer_spec(&version, &place)?;
    if !crate::rules::conformance::is_dwp_standard(&version) {
        return Err(Error::rejected(
            place,
            format!("DWP spec {version} is not a DWP standard: the series are 2.x and 4.x (historical) and 5.x (current)"),
        )
        .with_hint("name the standard the plan was written under (2.x, 4.x or 5.x)"));
    }
    Ok((version, from))
}

/// A plan that declares a spec newer than this dwp knows is never guessed at.
pub fn refuse_newer_spec(version: &str, place: &str) -> Result<()> {
    let major = version
        .split('.')
        .next()
        .and_then(|m| m.parse::<u64>().ok());
    let known = crate::rules::conformance::KNOWN_STANDARD_MAJOR;
    match major {
        Some(major) if major > known => Err(Error::rejected(
            place,
            format!("the plan declares DWP spec {version}, newer than this dwp knows (up to {known}.x): the plan is newer than this tool"),
        )
        .with_hint("upgrade dwp; it does not guess at a newer spec")),
        _ => Ok(()),
    }
}

/// `Plan Format` from the Plan Variables, else what the README holds: `## Task N` records and
/// no index line linking a task file make a Lite plan, anything else Full.
fn plan_format(readme: &Readme, place: &str) -> Result<PlanFormat> {
    if let Some(format) = variable(readme, "Plan Format", place)? {
        return Ok(format);
    }
    let lite = !readme.inline_tasks.is_empty()
        && readme
            .index
            .iter()
            .all(|e| crate::plan::records::linked_file(&e.links).is_none());
    Ok(if lite {
        PlanFormat::Lite
    } else {
        PlanFormat::Full
    })
}

/// A Plan Variables row read as one of the schema's words (its first word, lower-case, `-`
/// and `_` as the schema spells them); absent is `None`, an unknown word is refused.
fn variable<T: std::str::FromStr<Err = String>>(
    readme: &Readme,
    name: &str,
    place: &str,
) -> Result<Option<T>> {
    let Some(row) = readme.variable(name) else {
        return Ok(None);
    };
    let word = row
        .value
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ',' | ';'))
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .trim_matches(['*', '`'])
        .to_ascii_lowercase();
    let candidates = [word.clone(), word.replace('_', "-"), word.replace('-', "_")];
    candidates
        .iter()
        .find_map(|w| w.parse().ok())
        .map(Some)
        .ok_or_else(|| {
            Error::rejected(
                format!("{place}:{}", row.line),
                format!(
                    "the {name} row says `{}`: {}",
                    row.value,
                    word.parse::<T>().err().unwrap_or_default()
                ),
            )
        })
}

/// Every task of the README index, pending, with its locator and title. Full: the file its
/// line links (or the folder's one `N.task_*.md` of its number), which must exist in the plan
/// folder itself; every task file of the folder must be indexed (dwp does not materialize a plan
/// it may be reading wrong). Lite: `#task-N`. The title is the index line's, else the record's
/// heading.
fn initial_tasks(
    md: &crate::plan::records::PlanMarkdown,
    format: PlanFormat,
    plan_dir: &Path,
    place: &str,
) -> Result<Vec<Task>> {
    md.check_index()?;
    if format == PlanFormat::Full {
        refuse_unindexed_files(md, plan_dir)?;
    }
    md.readme
        .index
        .iter()
        .map(|entry| {
            let locator = match format {
                PlanFormat::Lite => Locator {
                    kind: LocatorKind::Inline,
                    value: format!("#task-{}", entry.id),
                },
                PlanFormat::Full => Locator {
                    kind: LocatorKind::File,
                    value: task_file(md, entry, plan_dir, place)?,
                },
            };
            let title = md.require_title(entry)?;
            Ok(Task {
                id: entry.id,
                file: None,
                locator: Some(locator),
                title,
                status: TaskStatus::Pending,
                started_at: None,
                completed_at: None,
                commit: None,
                gates: Some(Vec::new()),
                outcome: None,
            })
        })
        .collect()
}

/// A `N.task_*.md` in the folder that the index does not name may be a task the reader missed.
fn refuse_unindexed_files(md: &crate::plan::records::PlanMarkdown, plan_dir: &Path) -> Result<()> {
    let named: Vec<String> = md
        .readme
        .index
        .iter()
        .filter_map(|e| md.task_file(e))
        .collect();
    match md.task_files.iter().find(|f| !named.contains(f)) {
        Some(file) => Err(Error::rejected(
            plan_dir.join(file).display().to_string(),
            "is a task file the README's task list does not name: dwp does not materialize a plan it may be reading wrong",
        )
        .with_hint(format!("link `{file}` from its task's line in the README, or remove the file"))),
        None => Ok(()),
    }
}

/// The task file of a Full task: linked from its index line, else the folder's one file of its
/// number; it must be a file of the plan folder named `N.task_slug.md`.
fn task_file(
    md: &crate::plan::records::PlanMarkdown,
    entry: &crate::plan::markdown::IndexEntry,
    plan_dir: &Path,
    place: &str,
) -> Result<String> {
    let place = format!("{place}:{}", entry.line);
    let Some(file) = md.task_file(entry) else {
        return Err(Error::rejected(
            place,
            format!(
                "task {} links no task file (`{}.task_slug.md`) and the folder has none of its number: a Full plan locates each task by its file",
                entry.id, entry.id
            ),
        ));
    };
    if let Some(problem) = crate::plan::records::misnumbered_file(entry, &file) {
        return Err(Error::rejected(place, problem)
            .with_hint("number the README's task list and its task files 1..N in order (a file and its link renamed together), then run this again"));
    }
    let pattern =
        regex::Regex::new(r"^[1-9][0-9]*\.task_[a-z0-9_]+\.md$").expect("constant pattern");
    if !pattern.is_match(&file) || !file.starts_with(&format!("{}.task_", entry.id)) {
        return Err(Error::rejected(
            place,
            format!(
                "task {} is `{file}`: a task file is `{}.task_slug.md` in the plan folder itself (lower-case slug)",
                entry.id, entry.id
            ),
        )
        .with_hint("move or rename the file, and its link in the README"));
    }
    if !plan_dir.join(&file).is_file() {
        return Err(Error::rejected(
            place,
            format!(
                "task {} links `{file}`, which is not a file in the plan folder",
                entry.id
            ),
        ));
    }
    Ok(file)
}

/// Both documents checked like any input (schema, invariants, identity) before either is
/// written; their file bytes.
pub fn checked_pair(
    paths: &PlanPaths,
    manifest: &Manifest,
    state: &State,
) -> Result<(Vec<u8>, Vec<u8>)> {
    let manifest_bytes = store::json_file_bytes(manifest);
    let state_bytes = store::json_file_bytes(state);
    crate::steps::writer::check_before_write(&paths.state, &state_bytes, "the materialized state")?;
    let value = crate::plan::json::parse_strict(&manifest_bytes)
        .map_err(|e| Error::rejected(paths.manifest.display().to_string(), e.message))?;
    let loaded: Loaded<Manifest> = plan::from_value(
        &paths.manifest,
        manifest_bytes.clone(),
        value,
        DocKind::Manifest,
    )
    .map_err(|f| plan::refusal(f, "the manifest would not validate"))?;
    let problems = crate::rules::invariants::check_manifest(&loaded);
    if !problems.is_empty() {
        return Err(plan::refusal(
            problems,
            "the manifest would break an invariant",
        ));
    }
    Ok((manifest_bytes, state_bytes))
}
