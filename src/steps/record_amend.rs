//! A record plan's contract amended (`dwp amend PLAN --contract DRAFT --by NAME --reason TEXT
//! --note FILE`; docs/record-plans.md "Writing a record plan", rule 24), in the order of the
//! public ledger's `amend`, so that no kill leaves a live revision nobody approved:
//!
//! 1. the chain begun, when the plan has none: `contract.json`'s bytes copied to
//!    `contracts/contract.r1.json`;
//! 2. the next revision staged as `contracts/.contract.rN.json.pending` (no `*.json` name: never
//!    read as a revision);
//! 3. the `amendment` event, its note tagged with the revision it introduces, listing the
//!    criteria whose earlier evidence stops counting;
//! 4. the `approval` of the new revision, citing its id before it is live (an amendment counts
//!    only once such an approval exists);
//! 5. the staged file renamed `contracts/contract.rN.json`: the revision goes live.
//!
//! Everything is judged first, under the plan's lock, and a refusal writes nothing: the draft
//! (the next link of the chain, the same plan and generation, its schema and rules, the chain
//! it extends), a different revision already pending, each event, the markdown the approval
//! digests. Each step finds what an earlier run of the same amendment wrote and goes on from
//! there; a draft that is the live contract in substance writes nothing (the amendment is done).

use crate::error::{Error, Result};
use crate::plan::record::{CHAIN, CONTRACT, RecordPlan, pending_file, revision_file};
use crate::rules::record::amendment::{self, Revised};
use crate::rules::record::contract::substance;
use crate::steps::commit::Change;
use crate::steps::record_materialize::Step;
use crate::steps::record_writer::{RecordWriter, Repair, human_marker, read_given_file};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The longest authority name dwp records (as `dwp approve` and `dwp init --contract`).
const MAX_NAME_CHARS: usize = 100;

/// The two approval mechanisms (rule 6).
const MECHANISMS: [&str; 2] = ["plan_authorship", "pre_authorization"];

/// What `dwp amend` asks of a record plan.
#[derive(Debug, Clone)]
pub struct RecordAmendRequest {
    /// The contract draft: the live contract edited (its `contract_id`, if any, is computed
    /// again; its chain fields are derived from the live contract).
    pub contract: PathBuf,
    /// The human who authorizes the revision (the amendment's `authority`, the approver).
    pub by: String,
    pub reason: String,
    /// The note the human wrote: both events' authority marker.
    pub note: PathBuf,
    /// The approval's mechanism (default: the live contract's `authorization.mechanism`).
    pub mechanism: Option<String>,
    pub wait: Duration,
}

/// Each step of an amendment: written by this run, or found from an earlier one.
#[derive(Debug, Clone, Serialize)]
pub struct AmendSteps {
    /// `contracts/contract.r1.json`, `contract.json`'s bytes beginning the chain (found: the
    /// chain was begun).
    pub chain: Step,
    pub pending: Step,
    pub amendment: Step,
    pub approval: Step,
    /// The staged revision renamed live.
    pub revision: Step,
}

/// What `dwp amend` did to a record plan.
#[derive(Debug, Clone, Serialize)]
pub struct RecordAmendReport {
    pub plan: String,
    pub generation: String,
    /// The draft is the live contract in substance: nothing was written.
    pub unchanged: bool,
    /// The live contract now: its revision, id, parent and file.
    pub revision: i64,
    pub contract_id: String,
    pub parent_contract_id: Option<String>,
    pub contract_file: String,
    /// `None` when unchanged.
    pub steps: Option<AmendSteps>,
    pub amendment_seq: Option<i64>,
    pub approval_seq: Option<i64>,
    pub authority: String,
    pub mechanism: Option<String>,
    pub plan_digest: Option<String>,
    pub marker: String,
    /// The criteria whose earlier evidence no longer counts, and the tasks gating them.
    pub invalidated: Vec<String>,
    pub affected_tasks: Vec<String>,
    pub repairs: Vec<Repair>,
}

/// Amend the live contract of the record plan at `plan_dir` to `request.contract`.
pub fn amend_record(plan_dir: &Path, request: &RecordAmendRequest) -> Result<RecordAmendReport> {
    Error::check_length("--by", &request.by, MAX_NAME_CHARS)?;
    for (flag, text) in [("--by", &request.by), ("--reason", &request.reason)] {
        if text.trim().is_empty() {
            return Err(Error::rejected(flag, "is empty; nothing was written"));
        }
    }
    let (file, draft) = read_draft(&request.contract)?;
    let marker = human_marker(&request.note)?;
    let mut writer = RecordWriter::open(plan_dir, request.wait)?;
    if substance(&Value::Object(draft.clone())) == substance(writer.contract()) {
        return unchanged(writer, request, marker);
    }
    let planned = Planned::judge(&writer, draft, &file, request, &marker)?;
    let done = planned.carry_out(&mut writer)?;
    let report = planned.report(done, &writer, request, marker);
    writer.finish()?;
    Ok(report)
}

/// The draft at `path`: a JSON object, without its `contract_id`; and its name for messages.
fn read_draft(path: &Path) -> Result<(String, Map<String, Value>)> {
    let file = path.display().to_string();
    let bytes = read_given_file(path, "contract draft")?;
    let value = crate::plan::json::parse_strict(&bytes)
        .map_err(|e| Error::rejected(file.clone(), format!("is not a JSON document ({e})")))?;
    let Value::Object(mut draft) = value else {
        return Err(Error::rejected(file, "is not a JSON object: no contract"));
    };
    draft.remove("contract_id");
    Ok((file, draft))
}

/// The live contract already is the draft: nothing to amend (finishing still projects
/// `state.json`, which a run killed after its rename left stale).
fn unchanged(
    writer: RecordWriter,
    request: &RecordAmendRequest,
    marker: String,
) -> Result<RecordAmendReport> {
    let (plan, derived) = writer.plan();
    let contract = writer.contract();
    let report = RecordAmendReport {
        plan: plan.dir.display().to_string(),
        generation: derived.generation.label().to_owned(),
        unchanged: true,
        revision: contract
            .get("revision")
            .and_then(Value::as_i64)
            .unwrap_or(1),
        contract_id: writer.contract_id().to_owned(),
        parent_contract_id: contract
            .get("parent_contract_id")
            .and_then(Value::as_str)
            .map(str::to_owned),
        contract_file: derived.contract_file.clone(),
        steps: None,
        amendment_seq: None,
        approval_seq: None,
        authority: request.by.clone(),
        mechanism: None,
        plan_digest: None,
        marker,
        invalidated: Vec::new(),
        affected_tasks: Vec::new(),
        repairs: writer.repairs.clone(),
    };
    writer.finish()?;
    Ok(report)
}

/// An amendment judged whole, before its first write.
struct Planned {
    plan_dir: PathBuf,
    revision: i64,
    live_id: String,
    new_id: String,
    /// `contract.json`'s bytes, when this run begins the chain.
    chain_start: Option<Vec<u8>>,
    /// The stamped revision's bytes, when this run stages it.
    staged: Option<Vec<u8>>,
    revised: Revised,
    amendment: Recorded,
    approval: Approval,
}

/// An event of the amendment: to append (payload, actor, note; judged), or found at its seq.
enum Recorded {
    Append(Map<String, Value>, Value, String),
    Found(i64),
}

impl Recorded {
    /// Append the event citing `id`, unless it was found: the step, and the event's seq.
    fn record(&self, writer: &mut RecordWriter, id: &str, kind: &str) -> Result<(Step, i64)> {
        match self {
            Recorded::Found(seq) => Ok((Step::Found, *seq)),
            Recorded::Append(payload, actor, note) => {
                let (payload, actor) = (payload.clone(), actor.clone());
                let event = writer.append_citing(id, kind, payload, actor, Some(note))?;
                let seq = event.get("seq").and_then(Value::as_i64).unwrap_or_default();
                Ok((Step::Written, seq))
            }
        }
    }
}

/// The approval of the new revision, and what it records.
struct Approval {
    event: Recorded,
    mechanism: String,
    digest: String,
}

/// What carrying out an amendment did.
struct Done {
    steps: AmendSteps,
    amendment_seq: i64,
    approval_seq: i64,
}

impl Planned {
    /// Judge the amendment of the writer's live contract to `draft` (not the live contract in
    /// substance) from every file and event read under its lock.
    fn judge(
        writer: &RecordWriter,
        mut draft: Map<String, Value>,
        file: &str,
        request: &RecordAmendRequest,
        marker: &str,
    ) -> Result<Planned> {
        let (plan, _) = writer.plan();
        let (live, live_id) = (writer.contract(), writer.contract_id().to_owned());
        let refused = |why: String| Error::rejected(file, format!("{why}; nothing was written"));
        let revision = amendment::next_link(&mut draft, live, &live_id).map_err(refused)?;
        let draft = Value::Object(draft);
        amendment::keeps_plan(&draft, live).map_err(refused)?;
        check_draft(file, &draft, plan, revision)?;
        let new_id = crate::plan::pyjson::contract_id(&draft);
        let revised = amendment::revised(live, &draft);
        let actor = json!({"kind": "human", "identity": request.by});
        let tag = amendment::tag(revision, &new_id);
        let amendment = match found_amendment(plan, &tag) {
            Some(seq) => Recorded::Found(seq),
            None => {
                let payload =
                    amendment::payload(live, &draft, &revised, &request.reason, &request.by);
                let note = amendment::note(revision, &new_id, marker);
                writer.judge_event(&live_id, "amendment", &payload, &actor, Some(&note))?;
                Recorded::Append(payload, actor.clone(), note)
            }
        };
        let approval = approve(writer, &new_id, revision, request, marker, actor)?;
        Ok(Planned {
            plan_dir: plan.dir.clone(),
            chain_start: chain_start(plan, live)?,
            staged: staged(plan, revision, &draft, &new_id)?,
            revision,
            live_id,
            new_id,
            revised,
            amendment,
            approval,
        })
    }

    /// Write each step not found, in order: chain begun, revision staged, amendment, approval,
    /// rename.
    fn carry_out(&self, writer: &mut RecordWriter) -> Result<Done> {
        let chain = self.write_new(writer, &revision_file(1), self.chain_start.as_ref())?;
        let pending = self.write_new(writer, &pending_file(self.revision), self.staged.as_ref())?;
        let (amendment, amendment_seq) =
            self.amendment.record(writer, &self.live_id, "amendment")?;
        let (approval, approval_seq) =
            self.approval
                .event
                .record(writer, &self.new_id, "approval")?;
        let mut change = Change::new(&self.plan_dir, "dwp amend");
        change.rename(
            &self.plan_dir.join(pending_file(self.revision)),
            &self.plan_dir.join(revision_file(self.revision)),
        );
        writer.commit_files(change)?;
        Ok(Done {
            steps: AmendSteps {
                chain,
                pending,
                amendment,
                approval,
                revision: Step::Written,
            },
            amendment_seq,
            approval_seq,
        })
    }

    /// What was done, the new revision now live.
    fn report(
        self,
        done: Done,
        writer: &RecordWriter,
        request: &RecordAmendRequest,
        marker: String,
    ) -> RecordAmendReport {
        let (_, derived) = writer.plan();
        RecordAmendReport {
            plan: self.plan_dir.display().to_string(),
            generation: derived.generation.label().to_owned(),
            unchanged: false,
            revision: self.revision,
            contract_id: self.new_id,
            parent_contract_id: Some(self.live_id),
            contract_file: revision_file(self.revision),
            steps: Some(done.steps),
            amendment_seq: Some(done.amendment_seq),
            approval_seq: Some(done.approval_seq),
            authority: request.by.clone(),
            mechanism: Some(self.approval.mechanism),
            plan_digest: Some(self.approval.digest),
            marker,
            invalidated: self.revised.criteria,
            affected_tasks: self.revised.tasks,
            repairs: writer.repairs.clone(),
        }
    }

    /// Write `bytes` as the new file `name` of the chain (its folder made first), or find it.
    fn write_new(
        &self,
        writer: &mut RecordWriter,
        name: &str,
        bytes: Option<&Vec<u8>>,
    ) -> Result<Step> {
        let Some(bytes) = bytes else {
            return Ok(Step::Found);
        };
        let mut change = Change::new(&self.plan_dir, "dwp amend");
        change.create_dir(&self.plan_dir.join(CHAIN));
        change.write(&self.plan_dir.join(name), None, bytes.clone());
        writer.commit_files(change)?;
        Ok(Step::Written)
    }
}

/// Refused unless `draft`, revision `revision` of the plan, is a valid contract (its schema,
/// the rules its schema cannot say) extending the chain (rule 2) under a name no file holds.
fn check_draft(file: &str, draft: &Value, plan: &RecordPlan, revision: i64) -> Result<()> {
    let (_, findings) = crate::rules::record::standalone_document(file, draft);
    if let Some(first) = findings.first() {
        return Err(Error::rejected(
            file,
            format!(
                "is no valid contract: {}; nothing was written",
                first.message
            ),
        )
        .with_hint(format!(
            "`dwp validate {}` lists every problem",
            crate::term::path_word(Path::new(file))
        )));
    }
    let name = revision_file(revision);
    if plan.chain.iter().any(|doc| doc.name == name) {
        return Err(Error::rejected(
            plan.dir.join(&name).display().to_string(),
            "already stands: each revision is written once (rule 2); nothing was written",
        ));
    }
    // The chain as it stands (else contract.json, its revision 1), the draft as its next link.
    let mut sources: Vec<(String, &Value)> = plan
        .chain
        .iter()
        .filter_map(|doc| Some((doc.name.clone(), doc.value()?)))
        .collect();
    if plan.chain.is_empty()
        && let Some(first) = plan.first_contract.as_ref().and_then(|doc| doc.value())
    {
        sources.push((CONTRACT.to_owned(), first));
    }
    sources.push((name.clone(), draft));
    let revisions: Vec<_> = sources
        .iter()
        .map(|(name, contract)| crate::rules::record::contract::Revision { name, contract })
        .collect();
    let breaks = crate::rules::record::contract::chain_breaks(None, &revisions);
    match breaks.into_iter().find(|(at, _)| *at == name) {
        Some((_, why)) => Err(Error::rejected(
            file,
            format!("cannot be revision {revision} of the chain: it {why}; nothing was written"),
        )),
        None => Ok(()),
    }
}

/// `contract.json`'s bytes when the plan has no chain yet and its live contract is revision 1:
/// the chain begins with them, byte for byte.
fn chain_start(plan: &RecordPlan, live: &Value) -> Result<Option<Vec<u8>>> {
    let first = revision_file(1);
    let live_revision = live.get("revision").and_then(Value::as_i64).unwrap_or(1);
    if plan.chain.iter().any(|doc| doc.name == first) || live_revision != 1 {
        return Ok(None);
    }
    let bytes = plan.first_contract.as_ref().and_then(|doc| doc.bytes());
    match bytes {
        Some(bytes) => Ok(Some(bytes.to_vec())),
        None => Err(Error::rejected(
            plan.dir.join(CONTRACT).display().to_string(),
            "cannot be read, and the chain begins with its bytes; nothing was written",
        )),
    }
}

/// The stamped revision's bytes to stage (the public ledger's `json.dumps(sort_keys=True,
/// indent=2)` and a newline), or `None` when this revision is staged already; a different
/// revision pending is refused.
fn staged(
    plan: &RecordPlan,
    revision: i64,
    draft: &Value,
    new_id: &str,
) -> Result<Option<Vec<u8>>> {
    let path = plan.dir.join(pending_file(revision));
    match crate::store::read_artifact(&path, &plan.dir) {
        Ok(bytes) => {
            let pending = crate::plan::json::parse_strict(&bytes).ok();
            let id = pending
                .as_ref()
                .and_then(|p| p.get("contract_id")?.as_str());
            if id == Some(new_id) {
                return Ok(None);
            }
            let short: String = id.unwrap_or("(no id)").chars().take(12).collect();
            Err(Error::rejected(
                path.display().to_string(),
                format!(
                    "stages a different revision {revision} ({short}): resume it with its own draft first; nothing was written"
                ),
            ))
        }
        Err(crate::store::ReadFailure::Missing) => {
            let mut stamped = draft.clone();
            if let Value::Object(map) = &mut stamped {
                map.insert("contract_id".into(), new_id.into());
            }
            let mut bytes = crate::plan::pyjson::pretty(&stamped);
            bytes.push(b'\n');
            Ok(Some(bytes))
        }
        Err(failure) => Err(failure.into_error("read", &path)),
    }
}

/// The seq of an amendment whose note carries `tag`: this amendment, written by an earlier run.
fn found_amendment(plan: &RecordPlan, tag: &str) -> Option<i64> {
    let arena = bumpalo::Bump::new();
    let journal = plan.journal(&arena);
    let found = journal.events.iter().find(|e| {
        e.kind() == Some("amendment") && e.str("note").is_some_and(|note| note.contains(tag))
    });
    found.map(|e| e.seq())
}

/// The approval of revision `revision` (`new_id`): one found citing it, else the one to append,
/// judged, with the markdown's digest (rule 20) and the mechanism asked for or the live
/// contract's.
fn approve(
    writer: &RecordWriter,
    new_id: &str,
    revision: i64,
    request: &RecordAmendRequest,
    marker: &str,
    actor: Value,
) -> Result<Approval> {
    let (plan, _) = writer.plan();
    let live_mechanism = writer.contract().pointer("/authorization/mechanism");
    let mechanism = match &request.mechanism {
        Some(asked) => asked.clone(),
        None => live_mechanism
            .and_then(Value::as_str)
            .unwrap_or("plan_authorship")
            .to_owned(),
    };
    if !MECHANISMS.contains(&mechanism.as_str()) {
        return Err(Error::rejected(
            "--mechanism",
            format!(
                "`{mechanism}` is not plan_authorship or pre_authorization (rule 6); nothing was written"
            ),
        ));
    }
    let arena = bumpalo::Bump::new();
    let journal = plan.journal(&arena);
    let found = journal
        .events
        .iter()
        .find(|e| e.kind() == Some("approval") && e.str("contract_id") == Some(new_id));
    if let Some(found) = found {
        let digest = found.str("plan_digest").unwrap_or_default().to_owned();
        return Ok(Approval {
            event: Recorded::Found(found.seq()),
            mechanism: found.str("mechanism").unwrap_or(&mechanism).to_owned(),
            digest,
        });
    }
    drop(journal);
    let digest = writer.plan_digest()?;
    let payload =
        crate::rules::record::transitions::approval_payload(&request.by, &mechanism, &digest);
    let note = amendment::approval_note(revision, &request.reason, marker);
    writer.judge_event(new_id, "approval", &payload, &actor, Some(&note))?;
    Ok(Approval {
        event: Recorded::Append(payload, actor, note),
        mechanism,
        digest,
    })
}
