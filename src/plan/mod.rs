//! Locating and loading the JSON artifacts of a plan: read (bounded, no escaping symlinks),
//! parse strictly, identify the schema generation, validate against the embedded schema, and
//! deserialize into the typed model. Every step that fails becomes findings with file and path,
//! so `validate` can report all of them and writers can refuse with the first.

pub mod json;
mod loaded;
pub mod markdown;
pub mod model;
pub mod pyjson;
pub mod record;
pub mod records;
pub mod schemas;
pub mod typed_schema;

pub use loaded::LoadedPlan;

use crate::findings::{Code, Finding, Severity};
use crate::plan::json::parse_strict;
use crate::plan::model::{DocKind, Generation, Manifest, SchemaId, State};
use crate::store::{ReadFailure, read_artifact, sha256_hex};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The folder and artifact paths of one plan.
#[derive(Debug, Clone)]
pub struct PlanPaths {
    pub dir: PathBuf,
    pub manifest: PathBuf,
    pub state: PathBuf,
}

impl PlanPaths {
    pub fn new(dir: impl Into<PathBuf>) -> PlanPaths {
        let dir = dir.into();
        PlanPaths {
            manifest: dir.join(DocKind::Manifest.file_name()),
            state: dir.join(DocKind::State.file_name()),
            dir,
        }
    }

    /// The plan folder's own name (`PLAN_x`), if it has one that is UTF-8.
    pub fn folder_name(&self) -> Option<String> {
        let absolute = std::path::absolute(&self.dir).ok()?;
        let name = absolute.components().next_back()?;
        name.as_os_str().to_str().map(str::to_owned)
    }

    pub fn artifact(&self, kind: DocKind) -> &Path {
        match kind {
            DocKind::Manifest => &self.manifest,
            DocKind::State => &self.state,
        }
    }
}

/// A JSON artifact read, validated against its schema, and typed.
#[derive(Debug, Clone)]
pub struct Loaded<T> {
    pub path: PathBuf,
    /// The path as findings name it.
    pub file: String,
    pub bytes: Vec<u8>,
    pub sha256: String,
    pub generation: Generation,
    pub doc: T,
}

impl<T> Loaded<T> {
    fn new(path: &Path, bytes: Vec<u8>, generation: Generation, doc: T) -> Loaded<T> {
        Loaded {
            path: path.to_path_buf(),
            file: path.display().to_string(),
            sha256: crate::profile::time("sha256 input", || sha256_hex(&bytes)),
            bytes,
            generation,
            doc,
        }
    }
}

/// Which kind a document declares itself to be, from its `schema` URL.
pub fn declared_kind(value: &Value) -> Option<DocKind> {
    match SchemaId::parse(value.get("schema")?.as_str()?) {
        SchemaId::Known(kind, _) | SchemaId::Newer(kind, _) => Some(kind),
        SchemaId::Unknown => None,
    }
}

/// The JSON state of a plan is never a symlink (docs/CONFORMANCE.md, DWP001), wherever it
/// points: writers replace files, and a link would split what is read from what is written.
fn read_json_artifact(path: &Path, plan_dir: &Path) -> Result<Vec<u8>, ReadFailure> {
    if crate::store::entry(path, plan_dir).is_ok_and(|e| e == crate::store::Entry::Symlink) {
        return Err(ReadFailure::Symlink);
    }
    read_artifact(path, plan_dir)
}

fn read_findings(path: &Path, failure: ReadFailure) -> Vec<Finding> {
    let severity = if failure.is_unverifiable() {
        Severity::Unverified
    } else {
        Severity::Error
    };
    let finding = Finding::error(
        Code::Unreadable,
        path.display().to_string(),
        failure.to_string(),
    )
    .at("$")
    .severity(severity);
    vec![match failure {
        ReadFailure::Missing => finding.hint("materialize the plan with `dwp init PLAN`"),
        _ => finding,
    }]
}

/// Read a JSON artifact's bytes, or the finding that stops it.
pub fn read_bytes(path: &Path, plan_dir: &Path) -> Result<Vec<u8>, Vec<Finding>> {
    read_json_artifact(path, plan_dir).map_err(|failure| read_findings(path, failure))
}

/// Read and parse an artifact into a JSON value, or the findings that stop it.
pub fn read_value(path: &Path, plan_dir: &Path) -> Result<(Vec<u8>, Value), Vec<Finding>> {
    let bytes =
        read_json_artifact(path, plan_dir).map_err(|failure| read_findings(path, failure))?;
    let value = parse_value(path, &bytes)?;
    Ok((bytes, value))
}

fn parse_value(path: &Path, bytes: &[u8]) -> Result<Value, Vec<Finding>> {
    parse_strict(bytes).map_err(|e| {
        vec![Finding::error(Code::NotJson, path.display().to_string(), e.message).at(e.path)]
    })
}

/// Load one artifact of the `expected` kind (or whatever kind its `schema` declares).
pub fn load<T: DeserializeOwned>(
    path: &Path,
    plan_dir: &Path,
    expected: DocKind,
) -> Result<Loaded<T>, Vec<Finding>> {
    let (bytes, value) = read_value(path, plan_dir)?;
    from_value(path, bytes, value, expected)
}

/// Identify, schema-check and type a document already read and parsed by [`read_value`].
pub fn from_value<T: DeserializeOwned>(
    path: &Path,
    bytes: Vec<u8>,
    value: Value,
    expected: DocKind,
) -> Result<Loaded<T>, Vec<Finding>> {
    let (generation, doc) = typed_value(path, value, expected)?;
    Ok(Loaded::new(path, bytes, generation, doc))
}

/// The generation and typed document of the bytes of a JSON artifact of the `expected` kind.
pub fn typed_document<T: DeserializeOwned>(
    path: &Path,
    bytes: &[u8],
    expected: DocKind,
) -> Result<(Generation, T), Vec<Finding>> {
    typed_value(path, parse_value(path, bytes)?, expected)
}

fn typed_value<T: DeserializeOwned>(
    path: &Path,
    value: Value,
    expected: DocKind,
) -> Result<(Generation, T), Vec<Finding>> {
    let generation = generation_of(path, &value, expected)?;
    type_checked(path, value, expected, generation).map(|doc| (generation, doc))
}

fn generation_of(
    path: &Path,
    value: &Value,
    expected: DocKind,
) -> Result<Generation, Vec<Finding>> {
    let file = path.display().to_string();
    let url = value.get("schema").and_then(Value::as_str);
    let known = "https://deepworkplan.com/schema/plan-{manifest,state}/v{1,2,5}.json";
    match url.map(SchemaId::parse) {
        Some(SchemaId::Known(kind, generation)) if kind == expected => Ok(generation),
        Some(SchemaId::Known(kind, _)) | Some(SchemaId::Newer(kind, _)) if kind != expected => {
            Err(vec![
                Finding::error(
                    Code::UnknownSchema,
                    &file,
                    format!(
                        "declares a {} schema but stands where a {} belongs",
                        kind.slug(),
                        expected.slug()
                    ),
                )
                .at("$.schema"),
            ])
        }
        Some(SchemaId::Newer(_, number)) => {
            // v6 and v7 are record plans, found by their contract (`plan::record`): a v6 or v7
            // URL on a folder without one is a shape dwp cannot read either way.
            let message = match number {
                6 | 7 => format!(
                    "uses {} v{number}, a record-plan generation, but the folder holds no contract (a contract pointer in manifest.json, contract.json or contracts/): not a plan dwp can read; no claim is made",
                    expected.slug()
                ),
                _ => format!(
                    "uses {} v{number}, newer than this dwp knows (v1, v2, v5; v6 and v7 record plans): no claim is made",
                    expected.slug()
                ),
            };
            Err(vec![
                Finding::error(Code::NewerSpec, &file, message)
                    .at("$.schema")
                    .severity(Severity::Unverified)
                    .hint("upgrade dwp to a version that knows this schema"),
            ])
        }
        _ => Err(vec![
            Finding::error(
                Code::UnknownSchema,
                &file,
                match url {
                    Some(url) => format!("`{url}` is not a plan schema dwp knows ({known})"),
                    None => format!("has no string `schema` field naming one of {known}"),
                },
            )
            .at("$.schema"),
        ]),
    }
}

fn type_checked<T: DeserializeOwned>(
    path: &Path,
    value: Value,
    kind: DocKind,
    generation: Generation,
) -> Result<T, Vec<Finding>> {
    let file = path.display().to_string();
    // A valid v2/v5 manifest is decided without compiling its schema (`typed_schema`).
    let typed_check = kind == DocKind::Manifest && typed_schema::manifest_fits(generation, &value);
    let violations = if typed_check {
        Vec::new()
    } else {
        crate::plan::schemas::validate(kind, generation, &value)
    };
    if !violations.is_empty() {
        return Err(violations
            .into_iter()
            .map(|v| Finding::error(Code::SchemaViolation, &file, v.message).at(v.path))
            .collect());
    }
    // Typing without path tracking is twice as fast; the path is needed only to report a failure.
    T::deserialize(&value).map_err(|_| vec![typing_finding::<T>(&file, "$", &value)])
}

/// Load `manifest.json` of a plan.
pub fn load_manifest(paths: &PlanPaths) -> Result<Loaded<Manifest>, Vec<Finding>> {
    crate::profile::time("load manifest", || {
        load(&paths.manifest, &paths.dir, DocKind::Manifest)
    })
}

/// Load `state.json` of a plan.
pub fn load_state(paths: &PlanPaths) -> Result<Loaded<State>, Vec<Finding>> {
    load_state_at(&paths.state, &paths.dir)
}

/// Load a state file: like [`load`], but one task at a time (see [`state_from_bytes`]).
pub fn load_state_at(path: &Path, plan_dir: &Path) -> Result<Loaded<State>, Vec<Finding>> {
    let bytes = read_state_bytes(path, plan_dir)?;
    crate::profile::time("load state", || state_from_bytes(path, bytes))
}

/// The bytes of a state file of the plan, unchecked, or why they could not be read (as
/// [`load_state_at`] reports it).
pub fn read_state_bytes(path: &Path, plan_dir: &Path) -> Result<Vec<u8>, Vec<Finding>> {
    crate::profile::time("read state", || read_json_artifact(path, plan_dir))
        .map_err(|failure| read_findings(path, failure))
}

/// Identify, schema-check and type state bytes. A v2/v5 state the typed checks accept
/// ([`typed_schema`]) is loaded without the schema validator; anything else takes
/// [`state_from_bytes_by_schema`], which reports every violation.
pub fn state_from_bytes(path: &Path, bytes: Vec<u8>) -> Result<Loaded<State>, Vec<Finding>> {
    let (generation, state) = typed_state(path, &bytes)?;
    Ok(Loaded::new(path, bytes, generation, state))
}

/// The generation and typed state of state bytes, as [`state_from_bytes`] decides them.
pub fn typed_state(path: &Path, bytes: &[u8]) -> Result<(Generation, State), Vec<Finding>> {
    match crate::profile::time("typed state", || typed_schema::state(bytes)) {
        Some(typed) => Ok(typed),
        None => typed_state_by_schema(path, bytes),
    }
}

/// A state dwp built from one that validated, and its serialization: loaded without parsing
/// the bytes back when the typed schema checks accept the state itself (the guarded updater's
/// safety net, `steps::writer::check_changed_task`, rests on the same round trip). Otherwise
/// the bytes are handed back, for [`state_from_bytes`] to report what is wrong.
pub fn built_state(
    path: &Path,
    bytes: Vec<u8>,
    generation: Generation,
    state: State,
) -> Result<Loaded<State>, Vec<u8>> {
    if typed_schema::state_fits(generation, &state) {
        Ok(Loaded::new(path, bytes, generation, state))
    } else {
        Err(bytes)
    }
}

/// [`state_from_bytes`] through the schema validator: the whole document parsed, checked
/// against its schema (every violation reported) and typed.
pub fn state_from_bytes_by_schema(
    path: &Path,
    bytes: Vec<u8>,
) -> Result<Loaded<State>, Vec<Finding>> {
    let (generation, state) = typed_state_by_schema(path, &bytes)?;
    Ok(Loaded::new(path, bytes, generation, state))
}

fn typed_state_by_schema(path: &Path, bytes: &[u8]) -> Result<(Generation, State), Vec<Finding>> {
    typed_value(path, parse_value(path, bytes)?, DocKind::State)
}

/// Why `value` cannot be typed as `T`, as a finding whose path is under `prefix`. Typing runs
/// without path tracking first (twice as fast); this re-runs it with the path only on failure.
fn typing_finding<T: DeserializeOwned>(file: &str, prefix: &str, value: &Value) -> Finding {
    let error = match serde_path_to_error::deserialize::<_, T>(value) {
        Err(error) => error,
        Ok(_) => return Finding::error(Code::Unrepresentable, file, "cannot be typed").at(prefix),
    };
    let inner = error.path().to_string();
    let path = if inner == "." || inner.is_empty() {
        prefix.to_owned()
    } else if inner.starts_with('[') {
        format!("{prefix}{inner}")
    } else {
        format!("{prefix}.{inner}")
    };
    Finding::error(Code::Unrepresentable, file, error.into_inner().to_string()).at(path)
}

/// Whether `target` is a plan folder with a README.md and neither JSON file: a plan without a
/// state layer, read and shown from its markdown (`dwp status`, `dwp next`).
pub fn is_markdown_only(target: &Path) -> bool {
    use crate::store::{Entry, Place, entry, place};
    entry(target, target).is_ok_and(|e| e == Entry::Directory)
        && has_no_state_layer(target)
        && place(&target.join("README.md"), target) == Place::File
}

/// Whether `dir` is a plan folder: it holds state.json or manifest.json, or it is named
/// `PLAN_...` and holds a README.md (a plan with no state layer yet).
pub fn is_plan_folder(dir: &Path) -> bool {
    use crate::store::{Place, place};
    let has = |name: &str| place(&dir.join(name), dir) == Place::File;
    let named = dir
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("PLAN_"));
    has("state.json") || has("manifest.json") || (named && has("README.md"))
}

/// The plan folder `start` is in: `start` itself or its nearest ancestor that is a plan folder
/// ([`is_plan_folder`]), the way git finds its repository. A PLAN argument left out means this.
pub fn discover_plan(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| is_plan_folder(dir))
        .map(Path::to_path_buf)
}

/// The repository `start` is in, for `--all`: `start` or its nearest ancestor holding
/// `.dwp/plans/`, else the nearest repository root ([`is_repository_root`]), which has no plans
/// yet.
pub fn discover_workspace(start: &Path) -> Option<PathBuf> {
    let nearest = |holds: fn(&Path) -> bool| start.ancestors().find(|dir| holds(dir));
    nearest(is_workspace)
        .or_else(|| nearest(is_repository_root))
        .map(Path::to_path_buf)
}

/// The repository a plan folder belongs to: the nearest folder above `plan_dir` that is a
/// repository root ([`is_repository_root`]), for `dwp run`, which runs a gate where the
/// project's build and tests expect it. `None` for a plan outside any repository.
pub fn repository_of(plan_dir: &Path) -> Option<PathBuf> {
    let plan_dir = std::path::absolute(plan_dir).ok()?;
    plan_dir
        .ancestors()
        .skip(1)
        .find(|dir| is_repository_root(dir))
        .map(Path::to_path_buf)
}

/// Whether `dir` is a repository root: it holds `.git` (a folder, or the file a linked worktree
/// or submodule has) or `.dwp/plans/`. Only there does a bare plan name given to `dwp new` mean
/// `.dwp/plans/NAME`, and a command that needs one plan pick it from `.dwp/plans/`; and a root
/// without `.dwp/plans/` has no plans, which `--all` reports rather than refuses.
pub fn is_repository_root(dir: &Path) -> bool {
    !crate::store::is_absent(&dir.join(".git")) || is_workspace(dir)
}

/// Where discovery finds a plan: `ROOT/.dwp/plans/NAME`.
pub fn plan_home(root: &Path, name: &str) -> PathBuf {
    root.join(".dwp").join("plans").join(name)
}

/// The plan a command that needs one takes at the repository root `root` when none is named:
/// the only plan under `.dwp/plans/`, or else the only one in progress (state.json's status
/// `in_progress` or `blocked`: started and not finished; for a record plan, what
/// `record_in_progress` derives from its journal). Otherwise the candidates, every plan there, in
/// `--all`'s order. The plan comes with why it was picked, in words.
pub fn pick_plan(
    root: &Path,
    record_in_progress: impl Fn(&record::RecordPlan) -> bool,
) -> Result<(PathBuf, &'static str), Vec<PathBuf>> {
    use crate::plan::model::PlanStatus;
    let plans = plan_dirs(root).unwrap_or_default();
    if let [only] = plans.as_slice() {
        return Ok((only.clone(), "the only plan"));
    }
    let started = |dir: &&PathBuf| {
        if record::is_record_plan(dir) {
            return record_in_progress(&record::RecordPlan::load(dir));
        }
        let plan = LoadedPlan::open(dir);
        plan.state().is_ok_and(|state| {
            matches!(
                state.doc.status,
                PlanStatus::InProgress | PlanStatus::Blocked
            )
        })
    };
    match plans.iter().filter(started).collect::<Vec<_>>().as_slice() {
        [only] => Ok(((*only).clone(), "the only plan in progress")),
        _ => Err(plans),
    }
}

/// Whether `dir` holds plans of its own (`.dwp/plans/`): a repository root, for `dwp status`.
pub fn is_workspace(dir: &Path) -> bool {
    use crate::store::{Entry, entry};
    entry(&dir.join(".dwp").join("plans"), dir).is_ok_and(|e| e == Entry::Directory)
}

/// The plan folder and state file a target names (the folder, or its `state.json`).
pub fn resolve_target(target: &Path) -> (PathBuf, PathBuf) {
    if target.is_dir() {
        (target.to_path_buf(), target.join("state.json"))
    } else {
        let dir = match target.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        (dir, target.to_path_buf())
    }
}

/// The plan folder and lock target a lock command names (the plan folder, or its state.json).
/// A plan's lock guards its state.json (`state.json.lock`); a record plan's is the public
/// ledger's own `.ledger.lock` (`store::lock_dir::ledger_target`), which dwp takes to write one,
/// so that is the lock to inspect and recover. A path that is neither a plan folder nor a
/// state.json in one is a usage error, never "free".
pub fn lock_target(target: &Path) -> crate::Result<(PathBuf, PathBuf)> {
    const PLAN_FILES: [&str; 4] = [
        "README.md",
        "state.json",
        "manifest.json",
        "state.json.lock",
    ];
    let (dir, state) = resolve_target(target);
    let names_state = state.file_name().is_some_and(|n| n == "state.json");
    let in_a_plan = PLAN_FILES
        .iter()
        .any(|name| crate::store::place(&dir.join(name), &dir) != crate::store::Place::Missing);
    if names_state && in_a_plan {
        if record::is_record_plan(&dir) {
            let ledger = crate::store::lock_dir::ledger_target(&dir);
            return Ok((dir, ledger));
        }
        return Ok((dir, state));
    }
    Err(crate::Error::Usage(format!(
        "not a plan: give a plan folder (README.md, state.json or manifest.json) or its state.json ({})",
        target.display()
    )))
}

/// Refuse every state change while a publication is in progress.
pub fn refuse_while_finalizing(plan_dir: &Path) -> crate::Result<()> {
    let marker = plan_dir.join(FINALIZING_MARKER);
    if crate::store::place(&marker, plan_dir) != crate::store::Place::Missing {
        return Err(crate::Error::rejected(
            marker.display().to_string(),
            "a publication is in progress (interrupted?): the state may not change until it is recovered",
        )
        .with_hint(format!(
            "inspect it, then run `dwp finalize {} --recover` against the same candidate",
            crate::term::path_word(plan_dir)
        )));
    }
    Ok(())
}

/// Every plan under `ROOT/.dwp/plans/` (folders named `PLAN_*`), sorted by name, each followed
/// by the `PLAN_*` folders nested inside it (a sub-plan an agent made within a plan's folder), so
/// `--all` names every one rather than skipping it in silence. A repository root without
/// `.dwp/plans/` has none.
pub fn plan_dirs(root: &Path) -> crate::Result<Vec<PathBuf>> {
    use crate::store::{Entry, entry};
    let plans = root.join(".dwp").join("plans");
    if entry(&plans, root).is_ok_and(|e| e == Entry::Missing) {
        if is_repository_root(root) {
            return Ok(Vec::new());
        }
        return Err(crate::Error::Usage(format!(
            "{} is no repository root (it holds neither .git nor .dwp/plans/): --all takes the repository root",
            root.display()
        )));
    }
    let mut found = Vec::new();
    for dir in plan_folders_in(&plans, root)? {
        nested_plans(dir, root, 1, &mut found);
    }
    Ok(found)
}

/// The `PLAN_*` folders (not symlinks) directly inside `folder`, in natural order.
fn plan_folders_in(folder: &Path, root: &Path) -> crate::Result<Vec<PathBuf>> {
    use crate::store::{Entry, list_entries};
    let mut names: Vec<String> = list_entries(folder, root)?
        .into_iter()
        .filter(|(name, kind)| name.starts_with("PLAN_") && *kind == Entry::Directory)
        .map(|(name, _)| name)
        .collect();
    names.sort_by(|a, b| natural_order(a, b));
    Ok(names.into_iter().map(|name| folder.join(name)).collect())
}

/// Push `dir`, then the plan folders nested inside it, depth first. A folder that cannot be
/// listed is still pushed (its verification says why); nesting deeper than
/// `NESTED_PLAN_DEPTH` is not followed.
fn nested_plans(dir: PathBuf, root: &Path, depth: usize, found: &mut Vec<PathBuf>) {
    let inner = match depth < NESTED_PLAN_DEPTH {
        true => plan_folders_in(&dir, root).unwrap_or_default(),
        false => Vec::new(),
    };
    found.push(dir);
    for nested in inner {
        nested_plans(nested, root, depth + 1, found);
    }
}

/// How deep `--all` looks for plans inside plans: real ones nest one level.
const NESTED_PLAN_DEPTH: usize = 8;

/// Names in the order people count: digit runs compared as numbers (`PLAN_p_2` before
/// `PLAN_p_10`), the rest byte by byte.
pub fn natural_order(a: &str, b: &str) -> std::cmp::Ordering {
    /// The next run of `text`: all digits, or none.
    fn run(text: &str) -> (&str, &str) {
        let digits = text.starts_with(|c: char| c.is_ascii_digit());
        let end = text
            .find(|c: char| c.is_ascii_digit() != digits)
            .unwrap_or(text.len());
        text.split_at(end)
    }
    let (mut a, mut b) = (a, b);
    while !a.is_empty() && !b.is_empty() {
        let ((run_a, rest_a), (run_b, rest_b)) = (run(a), run(b));
        let numbers = run_a.starts_with(|c: char| c.is_ascii_digit())
            && run_b.starts_with(|c: char| c.is_ascii_digit());
        let order = if numbers {
            let (x, y) = (run_a.trim_start_matches('0'), run_b.trim_start_matches('0'));
            x.len().cmp(&y.len()).then(x.cmp(y))
        } else {
            run_a.cmp(run_b)
        };
        if order.is_ne() {
            return order;
        }
        (a, b) = (rest_a, rest_b);
    }
    a.len().cmp(&b.len())
}

/// The pattern of a plan's name (the schemas' `name` and `plan`), also the plan folder's name.
pub const PLAN_NAME_PATTERN: &str = "^PLAN_[a-z0-9]+(_[a-z0-9]+){1,4}$";

/// Whether `name` is a plan name: `PLAN_` then 2 to 5 lower-case words joined by `_`.
pub fn is_plan_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("PLAN_") else {
        return false;
    };
    let word = |w: &str| {
        !w.is_empty()
            && w.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    rest.split('_').all(word) && (2..=5).contains(&rest.split('_').count())
}

/// Marker of a publication in progress; writers refuse while it exists.
pub const FINALIZING_MARKER: &str = ".finalizing.json";

/// A plan folder with neither manifest.json nor state.json (nothing at either name, not even a
/// symlink): a plan without a state layer, judged and shown from its markdown.
pub fn has_no_state_layer(plan_dir: &Path) -> bool {
    [DocKind::Manifest, DocKind::State].iter().all(|kind| {
        crate::store::entry(&plan_dir.join(kind.file_name()), plan_dir)
            .is_ok_and(|e| e == crate::store::Entry::Missing)
    })
}

/// The error a writer gives for findings that stop it: the first finding, counted with the rest.
pub fn refusal(findings: Vec<Finding>, what: &str) -> crate::Error {
    let Some(first) = findings.first() else {
        return crate::Error::rejected("", what);
    };
    let more = match findings.len() {
        1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    if first.severity == Severity::Unverified {
        return crate::Error::Unverified {
            message: format!("{what}: {}", first.message),
            place: first.file.clone(),
        };
    }
    let place = match &first.path {
        Some(path) => format!("{}: {path}", first.file),
        None => first.file.clone(),
    };
    let hint = first
        .hint
        .as_deref()
        .unwrap_or("`dwp validate` lists every problem");
    crate::Error::rejected(place, format!("{what}: {}{more}", first.message)).with_hint(hint)
}

#[cfg(test)]
mod tests {
    #[test]
    fn plans_sort_the_way_people_count() {
        use super::natural_order;
        let mut names = vec![
            "PLAN_p_10",
            "PLAN_p_2",
            "PLAN_p_1",
            "PLAN_b_x",
            "PLAN_a_x",
            "PLAN_p_02",
        ];
        names.sort_by(|a, b| natural_order(a, b));
        assert_eq!(
            names,
            [
                "PLAN_a_x",
                "PLAN_b_x",
                "PLAN_p_1",
                "PLAN_p_2",
                "PLAN_p_02",
                "PLAN_p_10"
            ]
        );
        assert!(natural_order("PLAN_p", "PLAN_p_1").is_lt());
    }

    #[test]
    fn plan_names_are_the_pattern() {
        let pattern = regex::Regex::new(super::PLAN_NAME_PATTERN).unwrap();
        for name in [
            "PLAN_payment_webhooks",
            "PLAN_a_b",
            "PLAN_a1_b2_c3_d4_e5",
            "PLAN_a",
            "PLAN_a_b_c_d_e_f",
            "PLAN_A_b",
            "PLAN__a_b",
            "PLAN_a__b",
            "PLAN_a_b_",
            "plan_a_b",
            "PLAN_a-b_c",
            "",
        ] {
            assert_eq!(super::is_plan_name(name), pattern.is_match(name), "{name}");
        }
    }
}
