//! Locating and loading the JSON artifacts of a plan: read (bounded, no escaping symlinks),
//! parse strictly, identify the schema generation, validate against the embedded schema, and
//! deserialize into the typed model. Every step that fails becomes findings with file and path,
//! so `validate` can report all of them and writers can refuse with the first.

use crate::findings::{Code, Finding, Severity};
use crate::json::parse_strict;
use crate::model::{DocKind, Generation, Manifest, SchemaId, State};
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

/// Which kind a document declares itself to be, from its `schema` URL.
pub fn declared_kind(value: &Value) -> Option<DocKind> {
    match SchemaId::parse(value.get("schema")?.as_str()?) {
        SchemaId::Known(kind, _) | SchemaId::Newer(kind, _) => Some(kind),
        SchemaId::Unknown => None,
    }
}

/// The JSON state of a plan is never a symlink (DESIGN.md §4: symlinked state files are bad
/// input), wherever it points: writers replace files, and a link would split what is read from
/// what is written.
fn read_json_artifact(path: &Path, plan_dir: &Path) -> Result<Vec<u8>, ReadFailure> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(ReadFailure::Symlink);
    }
    read_artifact(path, plan_dir)
}

/// Read and parse an artifact into a JSON value, or the findings that stop it.
pub fn read_value(path: &Path, plan_dir: &Path) -> Result<(Vec<u8>, Value), Vec<Finding>> {
    let file = path.display().to_string();
    let bytes = read_json_artifact(path, plan_dir).map_err(|failure| {
        let severity = if failure.is_unverifiable() {
            Severity::Unverified
        } else {
            Severity::Error
        };
        let hint = match failure {
            ReadFailure::Missing => Some("materialize the plan with `dwp init`"),
            _ => None,
        };
        let finding = Finding::error(Code::Unreadable, &file, failure.to_string())
            .at("$")
            .severity(severity);
        vec![match hint {
            Some(h) => finding.hint(h),
            None => finding,
        }]
    })?;
    let value = parse_strict(&bytes)
        .map_err(|e| vec![Finding::error(Code::NotJson, &file, e.message).at(e.path)])?;
    Ok((bytes, value))
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
    let generation = generation_of(path, &value, expected)?;
    type_checked(path, bytes, value, expected, generation)
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
            Err(vec![Finding::error(
            Code::NewerSpec,
            &file,
            format!(
                "uses {} v{number}, newer than this dwp knows (v1, v2, v5): no claim is made",
                expected.slug()
            ),
        )
        .at("$.schema")
        .severity(Severity::Unverified)
        .hint("upgrade dwp to a version that knows this schema")])
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
    bytes: Vec<u8>,
    value: Value,
    kind: DocKind,
    generation: Generation,
) -> Result<Loaded<T>, Vec<Finding>> {
    let file = path.display().to_string();
    let violations = crate::schema::validate(kind, generation, &value);
    if !violations.is_empty() {
        return Err(violations
            .into_iter()
            .map(|v| Finding::error(Code::SchemaViolation, &file, v.message).at(v.path))
            .collect());
    }
    let doc = serde_path_to_error::deserialize(&value).map_err(|e| {
        let path = format!("$.{}", e.path())
            .replace("$.[", "$[")
            .replace(".[", "[");
        let path = if path == "$.." || path == "$." {
            "$".into()
        } else {
            path
        };
        vec![Finding::error(Code::Unrepresentable, &file, e.into_inner().to_string()).at(path)]
    })?;
    Ok(Loaded {
        path: path.to_path_buf(),
        file,
        sha256: sha256_hex(&bytes),
        bytes,
        generation,
        doc,
    })
}

/// Load `manifest.json` of a plan.
pub fn load_manifest(paths: &PlanPaths) -> Result<Loaded<Manifest>, Vec<Finding>> {
    load(&paths.manifest, &paths.dir, DocKind::Manifest)
}

/// Load `state.json` of a plan.
pub fn load_state(paths: &PlanPaths) -> Result<Loaded<State>, Vec<Finding>> {
    load(&paths.state, &paths.dir, DocKind::State)
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
    crate::Error::rejected(place, format!("{what}: {}{more}", first.message))
        .with_hint("`dwp validate` lists every problem")
}

/// Load the state a writer is about to change: readable, strict JSON, schema-valid, typed, and,
/// with `invariants`, free of invariant findings. A read the OS refuses is an I/O failure.
pub fn load_state_for_write(
    plan_dir: &Path,
    state_path: &Path,
    invariants: bool,
) -> crate::Result<Loaded<State>> {
    let loaded: Loaded<State> = load(state_path, plan_dir, DocKind::State).map_err(|findings| {
        let unreadable = findings
            .first()
            .is_some_and(|f| f.severity == Severity::Unverified);
        match std::fs::read(state_path) {
            Err(e) if unreadable => crate::Error::io("read", state_path, e),
            _ => refusal(findings, "the input state does not validate"),
        }
    })?;
    if invariants {
        let problems = crate::invariants::check_state(&loaded);
        if !problems.is_empty() {
            return Err(refusal(problems, "the input state breaks an invariant"));
        }
    }
    Ok(loaded)
}
