//! A record plan made from its markdown and a contract draft (`dwp init PLAN --contract DRAFT`;
//! docs/record-plans.md, "Writing a record plan"), in the order rule 19 sets and the public
//! ledger's `materialize` follows: the manifest (the contract's pointer, so a plan cut short
//! after it is still found as a record plan), the stamped contract, then the approval, the
//! first event, which opens the tasks.
//!
//! Everything is judged before anything is written: the draft (no placeholder `dwp new` wrote
//! left, schema, the rules its schema cannot say, its plan naming this folder), the markdown the
//! approval digests (rule 20; no placeholder left), the human's note. Each step finds what an
//! earlier, interrupted run wrote and goes on from there; what it never does is rewrite: a manifest of another generation or pointing at another
//! contract, a stamped contract that differs, or a contract chain (rule 20).

use crate::error::{Error, Result};
use crate::plan::record::{CONTRACT, MANIFEST, RecordGeneration};
use crate::steps::commit::{Change, commit};
use crate::steps::record_writer::{
    RecordWriter, Repair, human_marker, read_given_file, refuse_placeholders,
};
use crate::store::lock_dir;
use serde::Serialize;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What `dwp init --contract` asks for.
#[derive(Debug, Clone)]
pub struct RecordInitRequest {
    /// The contract draft (its `contract_id`, if any, is computed again).
    pub contract: PathBuf,
    /// Who approves, and how (`--pre-approved`: `pre_authorization`).
    pub by: String,
    pub pre_approved: bool,
    /// The note the human wrote: the approval's authority marker.
    pub note: PathBuf,
    pub wait: Duration,
}

/// Whether a step wrote its file or event, or found it from an earlier run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Written,
    Found,
}

/// What `dwp init --contract` did.
#[derive(Debug, Clone, Serialize)]
pub struct RecordInitReport {
    pub plan: String,
    pub generation: String,
    pub contract_id: String,
    pub manifest: Step,
    pub contract: Step,
    pub approval: Step,
    pub approval_seq: i64,
    pub plan_digest: String,
    pub repairs: Vec<Repair>,
}

/// Make the plan at `plan_dir` a record plan of the draft `request.contract`, approved.
pub fn materialize_record(
    plan_dir: &Path,
    request: &RecordInitRequest,
) -> Result<RecordInitReport> {
    crate::Error::check_length("--by", &request.by, 100)?;
    let draft = Draft::read(&request.contract, plan_dir)?;
    let marker = human_marker(&request.note)?;
    let markdown = crate::plan::record::read_markdown(plan_dir);
    refuse_without_markdown(plan_dir, &markdown)?;
    refuse_placeholders(plan_dir, &markdown)?;
    let (manifest, contract) = {
        let lock = lock_dir::acquire(&lock_dir::ledger_target(plan_dir), request.wait)?;
        crate::store::intent::complete_pending(plan_dir)?;
        // Both judged before either is written: a refusal writes nothing.
        let steps = (
            draft.check_manifest(plan_dir)?,
            draft.check_contract(plan_dir)?,
        );
        if steps.0 == Step::Written {
            draft.write_manifest(plan_dir)?;
        }
        if steps.1 == Step::Written {
            draft.write_contract(plan_dir)?;
        }
        lock.release()?;
        steps
    };
    let mechanism = match request.pre_approved {
        true => "pre_authorization",
        false => "plan_authorship",
    };
    let mut writer = RecordWriter::open(plan_dir, request.wait)?;
    if writer.contract_id() != draft.id {
        return Err(Error::rejected(
            plan_dir.display().to_string(),
            format!(
                "its live contract is {}, not this draft's {}: a materialized plan changes its contract by amendment, never by init",
                writer.contract_id(),
                draft.id
            ),
        ));
    }
    let approved = writer.approve(&request.by, mechanism, &marker)?;
    let repairs = writer.repairs.clone();
    writer.finish()?;
    Ok(RecordInitReport {
        plan: plan_dir.display().to_string(),
        generation: draft.generation.label().to_owned(),
        contract_id: draft.id,
        manifest,
        contract,
        approval: match approved.found {
            true => Step::Found,
            false => Step::Written,
        },
        approval_seq: approved.seq,
        plan_digest: approved.plan_digest,
        repairs,
    })
}

/// A contract draft judged and stamped.
struct Draft {
    /// The draft without `contract_id`.
    value: Value,
    id: String,
    generation: RecordGeneration,
    plan: String,
    /// Where it came from, for messages.
    file: String,
}

impl Draft {
    fn read(path: &Path, plan_dir: &Path) -> Result<Draft> {
        let file = path.display().to_string();
        let bytes = read_given_file(path, "contract draft")?;
        let mut value = crate::plan::json::parse_strict(&bytes)
            .map_err(|e| Error::rejected(file.clone(), format!("is not a JSON document ({e})")))?;
        if let Value::Object(map) = &mut value {
            map.remove("contract_id");
        }
        if let Some((at, text)) = crate::rules::record::draft::placeholder_in_json(&value) {
            return Err(Error::rejected(
                file.clone(),
                format!(
                    "still holds a placeholder at {at} (`{}`): a contract is stamped as approved, never edited after, so every field is written first; nothing was written",
                    crate::term::inert_line(&text)
                ),
            )
            .with_hint(format!(
                "write each `To be written before approval: ...` of {}, then run this again",
                crate::term::path_word(path)
            )));
        }
        let (_, findings) = crate::rules::record::standalone_document(&file, &value);
        if let Some(first) = findings.first() {
            return Err(Error::rejected(
                file.clone(),
                format!("is no valid contract: {}", first.message),
            )
            .with_hint(format!(
                "`dwp validate {}` lists every problem",
                crate::term::path_word(path)
            )));
        }
        let generation = crate::rules::record::contract::generation(&value).ok_or_else(|| {
            Error::rejected(file.clone(), "is no v6 or v7 contract (its `schema`)")
        })?;
        let plan = value
            .get("plan")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let folder = plan_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        if folder.as_deref() != Some(plan.as_str()) {
            return Err(Error::rejected(
                file,
                format!(
                    "names the plan {plan}, but the folder is {}: a contract belongs to the folder of its plan",
                    folder.unwrap_or_default()
                ),
            ));
        }
        let id = crate::plan::pyjson::contract_id(&value);
        Ok(Draft {
            value,
            id,
            generation,
            plan,
            file,
        })
    }

    /// The manifest to write (`Written`), or one found, which must be this generation's and
    /// point at this contract.
    fn check_manifest(&self, plan_dir: &Path) -> Result<Step> {
        let path = plan_dir.join(MANIFEST);
        let url = self.generation.url("plan-manifest");
        if let Some(existing) = read_json(&path, plan_dir)? {
            if existing.get("schema").and_then(Value::as_str) != Some(url.as_str()) {
                return Err(Error::rejected(
                    path.display().to_string(),
                    format!(
                        "is {}, not a {} record manifest: a manifest of another generation keeps its lifecycle and is never rewritten (rules 17, 20)",
                        existing.get("schema").unwrap_or(&Value::Null),
                        self.generation.label()
                    ),
                ));
            }
            let pointer = existing.get("contract").and_then(|c| c.get("id"));
            if pointer.and_then(Value::as_str) != Some(self.id.as_str()) {
                return Err(Error::rejected(
                    path.display().to_string(),
                    format!(
                        "points at the contract {}, not this draft's {}: a pointer is never rewritten; a changed contract is an amendment",
                        pointer.unwrap_or(&Value::Null),
                        self.id
                    ),
                ));
            }
            return Ok(Step::Found);
        }
        Ok(Step::Written)
    }

    /// The manifest: the contract's pointer, written first.
    fn write_manifest(&self, plan_dir: &Path) -> Result<()> {
        let manifest = json!({
            "schema": self.generation.url("plan-manifest"),
            "plan": self.plan,
            "contract": {"id": self.id, "path": CONTRACT},
        });
        write_new(plan_dir, &plan_dir.join(MANIFEST), &manifest)
    }

    /// The contract to write (`Written`), or one found, which must carry this id; a chain of
    /// revisions means the plan is past materialization.
    fn check_contract(&self, plan_dir: &Path) -> Result<Step> {
        if crate::store::is_folder(&plan_dir.join(crate::plan::record::CHAIN)) {
            return Err(Error::rejected(
                plan_dir
                    .join(crate::plan::record::CHAIN)
                    .display()
                    .to_string(),
                "holds the contract's revision chain: its contract is owned by amendments, and materialization never rewrites it",
            ));
        }
        let path = plan_dir.join(CONTRACT);
        if let Some(existing) = read_json(&path, plan_dir)? {
            let stamped = existing.get("contract_id").and_then(Value::as_str);
            if stamped != Some(self.id.as_str()) {
                return Err(Error::rejected(
                    path.display().to_string(),
                    format!(
                        "is stamped {}, and {} is {}: a stamped contract is never rewritten (rule 20); a changed one is an amendment",
                        stamped.unwrap_or("(no id)"),
                        self.file,
                        self.id
                    ),
                ));
            }
            return Ok(Step::Found);
        }
        Ok(Step::Written)
    }

    /// The contract, stamped with its id.
    fn write_contract(&self, plan_dir: &Path) -> Result<()> {
        let mut stamped = self.value.clone();
        if let Value::Object(map) = &mut stamped {
            map.insert("contract_id".into(), self.id.clone().into());
        }
        write_new(plan_dir, &plan_dir.join(CONTRACT), &stamped)
    }
}

/// The plan must have markdown for the approval to digest (rule 20): refused before anything
/// is written, as the public ledger refuses it.
fn refuse_without_markdown(
    plan_dir: &Path,
    markdown: &[crate::plan::record::MarkdownFile],
) -> Result<()> {
    if markdown.is_empty() {
        return Err(Error::rejected(
            plan_dir.display().to_string(),
            "holds no markdown (*.md): an approval digests the plan the authority approved, and a folder of records alone is not approvable (rule 20); nothing was written",
        ));
    }
    Ok(())
}

/// A JSON document of the plan, when one stands at `path`.
fn read_json(path: &Path, plan_dir: &Path) -> Result<Option<Value>> {
    match crate::store::read_artifact(path, plan_dir) {
        Ok(bytes) => crate::plan::json::parse_strict(&bytes)
            .map(Some)
            .map_err(|e| {
                Error::rejected(
                    path.display().to_string(),
                    format!("is not a JSON document ({e}); nothing was written"),
                )
            }),
        Err(crate::store::ReadFailure::Missing) => Ok(None),
        Err(failure) => Err(failure.into_error("read", path)),
    }
}

/// Write `value` as the public ledger writes a record document: 2-space, sorted keys,
/// `ensure_ascii`, a final newline.
fn write_new(plan_dir: &Path, path: &Path, value: &Value) -> Result<()> {
    let mut bytes = crate::plan::pyjson::pretty(value);
    bytes.push(b'\n');
    let mut change = Change::new(plan_dir, "dwp init --contract");
    change.write(path, None, bytes);
    commit(change)
}
