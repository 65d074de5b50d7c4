//! The rules of record plans (DWP v6/v7), shared by `validate`, `verify`, `status` and `next`
//! (docs/record-plans.md): the documents (manifest, contract chain, journal) judged on their
//! own, then what the records say together (approval, snapshot, gate logs, task order), and the
//! state the journal derives, which is what `status` and `next` show.

pub mod amendment;
pub mod contract;
pub mod draft;
pub mod events;
pub mod evidence;
pub mod gate_run;
pub mod invariant;
pub mod mint;
pub mod projection;
mod standalone;
pub mod transitions;
pub mod view;

pub use standalone::{is_record_document, read_untrusted, standalone_document, standalone_journal};

use crate::findings::{Code, Finding, Severity};
use crate::plan::json::Field;
use crate::plan::record::{
    Doc, DocProblem, Event, Journal, Json, RecordGeneration, RecordPlan, UrlGeneration,
    url_generation,
};
use crate::plan::schemas::{RecordSchema, Violation, validate_record};
use crate::store::ReadFailure;
use projection::{Projection, TaskStatus};
use regex::Regex;
use serde::Serialize;
use serde_json::Value;
use std::sync::LazyLock;

/// What the rules found, and what the records derive when the live contract could be read.
pub struct Judged {
    pub findings: Vec<Finding>,
    pub derived: Option<Derived>,
}

/// A record plan as its records derive it.
pub struct Derived {
    pub generation: RecordGeneration,
    /// The live contract's file, inside the plan folder.
    pub contract_file: String,
    pub contract_id: Value,
    pub revision: Value,
    /// The contract's `title`, when it has one.
    pub title: Option<String>,
    pub projection: Projection,
    /// Per task id, its prerequisites and whether it is marked `parallel_safe` (v7).
    pub graph: Vec<TaskShape>,
    pub approval: Option<Approval>,
    pub snapshot: SnapshotAgreement,
    pub open_delegations: Vec<(String, String)>,
    pub events: usize,
    pub torn: bool,
    /// Where the journal ends: what its writer must know before it appends.
    pub end: JournalEnd,
    /// Each invariant the live contract declares, with its latest evaluation (rule 21).
    pub invariants: Vec<(String, Option<invariant::Evaluated>)>,
}

/// Where a journal ends, as read: the seq its next event gets, and what a writer must mend (or
/// refuse) first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalEnd {
    /// One above every seq read and every seq an archive's name declares.
    pub next_seq: i64,
    /// An archive's first tear: the archive's name, the tear's byte offset and cause.
    pub archive_tear: Option<(String, usize, String)>,
    /// The live file's tear: its byte offset and cause.
    pub live_tear: Option<(usize, String)>,
    /// The live file's last event has no final newline.
    pub unframed: bool,
}

impl JournalEnd {
    fn of(journal: &Journal) -> JournalEnd {
        let archive_top = journal.archives().map(|(_, (_, last))| last).max();
        let highest = journal.events.iter().filter_map(|e| e.integer_seq()).max();
        let floor = archive_top.map_or(0, |top| i64::try_from(top).unwrap_or(i64::MAX));
        let archived = |file: usize| journal.segments[file].range.is_some();
        let tear = |archive: bool| {
            let torn = journal.torn.iter().find(|t| archived(t.file) == archive);
            torn.map(|t| (t.file, t.offset, t.cause.clone()))
        };
        JournalEnd {
            next_seq: highest.unwrap_or(0).max(floor).saturating_add(1),
            archive_tear: tear(true)
                .map(|(file, offset, cause)| (journal.file_name(file).to_owned(), offset, cause)),
            live_tear: tear(false).map(|(_, offset, cause)| (offset, cause)),
            unframed: journal.unframed,
        }
    }
}

/// A task's place in the contract's graph.
#[derive(Debug, Clone, Serialize)]
pub struct TaskShape {
    pub id: String,
    pub prerequisites: Vec<String>,
    pub parallel_safe: bool,
}

/// The latest approval citing the live contract.
#[derive(Debug, Clone, Serialize)]
pub struct Approval {
    pub seq: Value,
    pub authority: Value,
    pub mechanism: Value,
    /// Whether its `plan_digest` is the markdown's digest now (`None`: the markdown could not
    /// be read whole, or a writer's judgement did not read it).
    pub digest_matches: Option<bool>,
}

/// How `state.json` stands against the projection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotAgreement {
    Agrees,
    Stale,
    Missing,
    /// Not compared: the journal is torn, or state.json could not be read.
    NotCompared,
}

impl Derived {
    pub fn completed(&self) -> usize {
        self.projection
            .tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Completed)
            .count()
    }
}

/// Judge the documents only (`dwp validate`).
pub fn validate(plan: &RecordPlan) -> Judged {
    judge(plan, Depth::Documents)
}

/// Judge everything the records say (`dwp verify`).
pub fn verify(plan: &RecordPlan) -> Judged {
    judge(plan, Depth::Everything)
}

/// [`validate`] for a writer and the checks made for one (`dwp run` before it runs the
/// command, `dwp reconcile` saying what `--write` would do): the same findings, but the
/// markdown is not read for the approval's digest (`Approval::digest_matches` is `None`), which
/// no event a writer appends depends on (an approval digests the markdown itself).
pub fn validate_to_write(plan: &RecordPlan) -> Judged {
    judge(plan, Depth::ToWrite)
}

/// How much a judgement says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Depth {
    /// What the records say together (`dwp verify`).
    Everything,
    /// The documents, and the approval's markdown digest.
    Documents,
    /// The documents alone.
    ToWrite,
}

impl Depth {
    /// Whether the records are judged against each other (events, gate logs, markdown).
    fn cross(self) -> bool {
        self == Depth::Everything
    }

    /// Whether the approval's digest is compared with the markdown.
    fn digests(self) -> bool {
        self != Depth::ToWrite
    }
}

/// The live contract, once it is known to be readable, of a known generation and valid.
struct Live<'p> {
    doc: &'p Doc,
    value: &'p Value,
    generation: RecordGeneration,
}

struct Judge<'p> {
    plan: &'p RecordPlan,
    journal: &'p Journal<'p>,
    findings: Vec<Finding>,
}

/// From this many bytes of journal, the journal and the contract are judged on two cores.
const TWO_CORES_FROM: usize = 1 << 20;

/// `(first(), second())`, on two cores when `two_cores`: `first` on this thread (it may borrow
/// what only this thread may use, as the journal's arena), `second` on another.
fn both<A, B: Send>(
    two_cores: bool,
    first: impl FnOnce() -> A,
    second: impl FnOnce() -> B + Send,
) -> (A, B) {
    if !two_cores {
        return (first(), second());
    }
    let mut second_done = None;
    let first_done = rayon::in_place_scope(|scope| {
        scope.spawn(|_| second_done = Some(second()));
        first()
    });
    let second_done = second_done.expect("a scope ends when its spawned work has");
    (first_done, second_done)
}

/// `(first(), second())`, on two cores when `two_cores`, both in rayon's pool: what either
/// hands out (the reads of many files) goes to whichever core is free.
fn join<A: Send, B: Send>(
    two_cores: bool,
    first: impl FnOnce() -> A + Send,
    second: impl FnOnce() -> B + Send,
) -> (A, B) {
    match two_cores {
        true => rayon::join(first, second),
        false => (first(), second()),
    }
}

fn judge(plan: &RecordPlan, depth: Depth) -> Judged {
    judge_on(plan, depth, plan.journal_len() >= TWO_CORES_FROM)
}

/// [`judge`], the journal's and the contract's work on two cores when `two_cores`: the same
/// findings in the same order either way.
fn judge_on(plan: &RecordPlan, depth: Depth, two_cores: bool) -> Judged {
    let unread = Journal::unread();
    let mut judge = Judge {
        plan,
        journal: &unread,
        findings: Vec::new(),
    };
    if let Some(why) = &plan.unlisted {
        // Nothing of the plan could be read: no claim either way, never "missing".
        judge.push(Code::Unreadable, ".", why.clone()).severity = Severity::Unverified;
        let mut findings = judge.findings;
        crate::rules::conformance::add_fix_hints(&mut findings, &plan.dir);
        return Judged {
            findings,
            derived: None,
        };
    }
    // The contract's findings come first; the journal is framed meanwhile.
    let arena = bumpalo::Bump::new();
    let mut helper = bumpalo::Bump::new();
    let (journal, (live, graph)) = both(
        two_cores,
        || match two_cores {
            true => plan.journal_on_two_cores(&arena, &mut helper),
            false => plan.journal(&arena),
        },
        || {
            let live = crate::profile::time("record contracts", || judge.contracts(two_cores));
            judge.manifest(live.as_ref());
            let graph = live.as_ref().map(|l| evidence::TaskGraph::of(l.value));
            (live, graph)
        },
    );
    let mut judge = Judge {
        plan,
        journal: &journal,
        findings: judge.findings,
    };
    let check_journal = || {
        let mut checks = Judge {
            plan,
            journal: &journal,
            findings: Vec::new(),
        };
        crate::profile::time("record journal", || {
            checks.journal(live.as_ref(), graph.as_ref(), two_cores)
        });
        checks.findings
    };
    let derived = match live.as_ref().zip(graph.as_ref()) {
        Some((live, graph)) => Some(crate::profile::time("record derive", || {
            judge.derive(live, graph, depth, two_cores, check_journal)
        })),
        None => {
            judge.findings.extend(check_journal());
            None
        }
    };
    // A snapshot holding the projection's bytes is JSON: only another one is read as such.
    let agrees = derived
        .as_ref()
        .is_some_and(|d| d.snapshot == SnapshotAgreement::Agrees);
    judge.snapshot_document(agrees);
    let mut findings = judge.findings;
    crate::rules::conformance::add_fix_hints(&mut findings, &plan.dir);
    Judged { findings, derived }
}

static AMENDMENT_TAG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"amendment to revision \d+ contract ([0-9a-f]{64})").unwrap());

/// The contract revision an amendment written by the public ledger introduces, from its note
/// (the tag [`amendment::tag`] writes).
pub fn amendment_tag<'e>(event: &'e Event) -> Option<&'e str> {
    let note = event.str("note")?;
    AMENDMENT_TAG
        .captures(note)
        .and_then(|c| c.get(1))
        .map(|m| m.as_str())
}

impl<'p> Judge<'p> {
    fn file(&self, name: &str) -> String {
        self.plan.dir.join(name).display().to_string()
    }

    fn push(&mut self, code: Code, name: &str, message: impl Into<String>) -> &mut Finding {
        let finding = Finding::error(code, self.file(name), message);
        self.findings.push(finding);
        self.findings.last_mut().expect("just pushed")
    }

    /// A file that cannot be read: an error, or unverified when the OS refused the read.
    fn unreadable(&mut self, name: &str, failure: &ReadFailure, message: String) {
        let finding = self.push(Code::Unreadable, name, message);
        if failure.is_unverifiable() {
            finding.severity = Severity::Unverified;
        }
    }

    /// A JSON document's read problem as a finding; its value when it has one.
    fn read<'d>(&mut self, doc: &'d Doc) -> Option<&'d Value> {
        match doc.read() {
            Ok(value) => Some(value),
            Err(DocProblem::Unreadable(failure)) => {
                self.unreadable(&doc.name, failure, failure.to_string());
                None
            }
            Err(DocProblem::NotJson(e)) => {
                self.push(Code::NotJson, &doc.name, e.message.clone()).path = Some(e.path.clone());
                None
            }
        }
    }

    /// A document's schema violations as findings; whether there were none.
    fn schema(&mut self, doc: &Doc, schema: RecordSchema, value: &Value) -> bool {
        self.schema_violations(doc, validate_record(schema, value))
    }

    /// [`Judge::schema`] of violations already found.
    fn schema_violations(&mut self, doc: &Doc, violations: Vec<Violation>) -> bool {
        for violation in &violations {
            self.push(Code::SchemaViolation, &doc.name, violation.message.clone())
                .path = Some(violation.path.clone());
        }
        violations.is_empty()
    }

    /// Every contract file judged; the live one returned when it can be trusted. With
    /// `two_cores`, a contract's id is computed while its schema and rules are checked.
    fn contracts(&mut self, two_cores: bool) -> Option<Live<'p>> {
        let plan = self.plan;
        if let Some(why) = &plan.chain_unlisted {
            self.push(Code::Unreadable, crate::plan::record::CHAIN, why.clone());
        }
        if plan.first_contract.is_none() && plan.chain.is_empty() && plan.draft {
            let draft = crate::plan::record::DRAFT;
            let finding = self.push(
                Code::RecordContractMissing,
                crate::plan::record::CONTRACT,
                format!("is not stamped yet: the plan holds only its draft, {draft}, which nobody approved (rule 19)"),
            );
            let dir = crate::term::path_word(&plan.dir);
            let draft_path = crate::term::path_word(&plan.dir.join(draft));
            finding.hint = Some(format!(
                "write each `To be written before approval: ...` of {draft_path}, then stamp and approve it: `dwp init {dir} --contract {draft_path} --by NAME --note FILE`"
            ));
            return None;
        }
        if plan.first_contract.is_none() && plan.chain.is_empty() {
            self.push(
                Code::RecordContractMissing,
                crate::plan::record::CONTRACT,
                "is missing, and there is no contracts/ chain: materialization stopped after the manifest (rule 3)",
            );
            return None;
        }
        let live_name = plan.live_contract().map(|doc| doc.name.as_str());
        let mut live = None;
        let mut live_breaks = Vec::new();
        for doc in plan.contract_files() {
            let Some(value) = self.read(doc) else {
                continue;
            };
            let is_live = Some(doc.name.as_str()) == live_name;
            let generation = match url_generation(value.field("schema"), "plan-contract") {
                UrlGeneration::Known(generation) => generation,
                UrlGeneration::Newer(n) => {
                    self.push(
                        Code::NewerSpec,
                        &doc.name,
                        format!("uses plan-contract v{n}, newer than this dwp knows (v6, v7): no claim is made"),
                    )
                    .severity = Severity::Unverified;
                    continue;
                }
                UrlGeneration::Unknown => {
                    self.push(
                        Code::UnknownSchema,
                        &doc.name,
                        format!(
                            "`schema` {} is no plan-contract URL of a record generation (v6, v7)",
                            events::shown(value.field("schema"))
                        ),
                    )
                    .path = Some("$.schema".into());
                    continue;
                }
            };
            let schema = match generation {
                RecordGeneration::V6 => RecordSchema::ContractV6,
                RecordGeneration::V7 => RecordSchema::ContractV7,
            };
            let ((violations, breaks), stamp) = join(
                two_cores,
                || {
                    let violations = validate_record(schema, value);
                    // The rules are said only of a live contract that fits its schema.
                    let breaks =
                        (is_live && violations.is_empty()).then(|| contract::rule_breaks(value));
                    (violations, breaks)
                },
                || contract::stamp_mismatch(value),
            );
            let valid = self.schema_violations(doc, violations);
            if let Some((stamped, computed)) = stamp {
                self.push(
                    Code::ContractId,
                    &doc.name,
                    format!("is stamped {stamped}, but its canonical bytes hash to {computed}: a contract is never edited in place (rule 1)"),
                )
                .path = Some("$.contract_id".into());
            }
            if is_live && valid {
                live = Some(Live {
                    doc,
                    value,
                    generation,
                });
            }
            if is_live {
                live_breaks = breaks.unwrap_or_default();
            }
        }
        if let Some(live) = &live {
            for message in live_breaks {
                self.push(Code::ContractRules, &live.doc.name, message);
            }
        }
        self.chain();
        live
    }

    fn chain(&mut self) {
        let plan = self.plan;
        if plan.chain.is_empty() {
            return;
        }
        let revisions: Vec<contract::Revision> = plan
            .chain
            .iter()
            .filter_map(|doc| {
                Some(contract::Revision {
                    name: &doc.name,
                    contract: doc.value()?,
                })
            })
            .collect();
        let first = plan.first_contract.as_ref().and_then(Doc::value);
        for (name, message) in contract::chain_breaks(first, &revisions) {
            self.push(Code::RevisionChain, &name, message);
        }
    }

    /// manifest.json: readable, valid, and pairing with the live contract (rules 16, 26, 29).
    fn manifest(&mut self, live: Option<&Live>) {
        let plan = self.plan;
        let name = crate::plan::record::MANIFEST;
        let Some(doc) = &plan.manifest else {
            if plan.draft && live.is_none() {
                // A plan of its draft alone: its manifest comes with the stamp (DWP100 says so).
                return;
            }
            self.push(
                Code::Unreadable,
                name,
                "file not found: a record plan's manifest is written first, before its contract (rule 19)",
            );
            return;
        };
        let Some(value) = self.read(doc) else {
            return;
        };
        let generation = match url_generation(value.field("schema"), "plan-manifest") {
            UrlGeneration::Known(generation) => generation,
            UrlGeneration::Newer(n) => {
                self.push(
                    Code::NewerSpec,
                    name,
                    format!("uses plan-manifest v{n}, newer than this dwp knows (v6, v7): no claim is made"),
                )
                .severity = Severity::Unverified;
                return;
            }
            UrlGeneration::Unknown => {
                self.push(
                    Code::ManifestPairing,
                    name,
                    format!("`schema` {} is no record-plan manifest URL, yet the folder holds a contract: a plan's records are never of two eras (rule 17)", events::shown(value.field("schema"))),
                )
                .path = Some("$.schema".into());
                return;
            }
        };
        let schema = match generation {
            RecordGeneration::V6 => RecordSchema::ManifestV6,
            RecordGeneration::V7 => RecordSchema::ManifestV7,
        };
        if !self.schema(doc, schema, value) {
            return;
        }
        let Some(live) = live else {
            return;
        };
        if generation != live.generation {
            self.push(
                Code::ManifestPairing,
                name,
                format!(
                    "is {} but the live contract is {}: a plan keeps its generation for life (rule 26)",
                    generation.label(),
                    live.generation.label()
                ),
            )
            .path = Some("$.schema".into());
        }
        let pointer = value
            .pointer("/contract/id")
            .and_then(Value::as_str)
            .unwrap_or("");
        // A revision goes by its stamp (as every record citing it does) or its computed id.
        let is_revision = plan
            .contract_files()
            .filter_map(Doc::value)
            .any(|contract| {
                contract::effective_id(contract).as_str() == Some(pointer)
                    || contract::computed_id(contract) == pointer
            });
        if !is_revision {
            self.push(
                Code::ManifestPairing,
                name,
                format!(
                    "points at contract {pointer}, which is no revision of this plan's contract"
                ),
            )
            .path = Some("$.contract.id".into());
        }
        let contract_plan = live.value.field("plan").and_then(Value::as_str);
        let manifest_plan = value.field("plan").and_then(Value::as_str);
        if manifest_plan != contract_plan {
            self.push(
                Code::ManifestPairing,
                name,
                format!(
                    "names plan {}, the contract {}",
                    manifest_plan.unwrap_or("?"),
                    contract_plan.unwrap_or("?")
                ),
            )
            .path = Some("$.plan".into());
        }
        if let (Some(folder), Some(contract_plan)) = (plan.folder_name(), contract_plan)
            && folder != contract_plan
        {
            self.push(
                Code::ManifestPairing,
                name,
                format!("the folder is named {folder}, the contract's plan {contract_plan}"),
            )
            .hint = Some(format!(
                "a plan's name is written once, in its contract: give the folder its name back ({contract_plan})"
            ));
        }
    }

    /// The journal's framing and each event (rules 10, 11, 15, 29).
    fn journal(
        &mut self,
        live: Option<&Live>,
        graph: Option<&evidence::TaskGraph>,
        two_cores: bool,
    ) {
        let journal = self.journal;
        for segment in journal.segments {
            if let Some(failure) = segment.unreadable() {
                self.unreadable(&segment.name, failure, failure.to_string());
            }
        }
        let expect = events::Expect {
            generation: live.map(|l| l.generation),
            plan: live
                .and_then(|l| l.value.field("plan"))
                .and_then(Value::as_str),
        };
        let dir = &self.plan.dir;
        let place = |file: usize| dir.join(journal.file_name(file)).display().to_string();
        self.findings
            .extend(journal_findings(journal, &expect, place, two_cores));
        if let Some(graph) = graph {
            for event in &journal.events {
                self.declared_gate(event, graph);
            }
        }
    }

    fn event_finding(&mut self, event: &Event, code: Code, message: String) -> &mut Finding {
        let name = self.journal.file_name(event.file).to_owned();
        let finding = self.push(code, &name, message);
        finding.line = Some(event.line);
        finding
    }

    /// A gate run proves a criterion its task declares in the live contract.
    fn declared_gate(&mut self, event: &Event, graph: &evidence::TaskGraph) {
        if event.kind() != Some("gate_run") {
            return;
        }
        let (Some(task), Some(criterion)) = (event.str("task"), event.str("criterion")) else {
            return;
        };
        let message = match graph.criteria.get(task) {
            None => format!(
                "gate_run seq {} is for {task}, which is no task of the live contract",
                event.seq()
            ),
            Some(declared) if !declared.contains(&criterion) => format!(
                "gate_run seq {} proves {criterion}, which {task} does not declare in its gate_intent",
                event.seq()
            ),
            Some(_) => return,
        };
        self.event_finding(event, Code::UndeclaredGate, message);
    }

    /// The derived state, and at [`Depth::Everything`] what the records say together: the
    /// projection on one core; on the other, `check_journal` (each event on its own, whose
    /// findings come first) and the checks of events against the task graph and the gate logs.
    fn derive(
        &mut self,
        live: &Live,
        graph: &evidence::TaskGraph,
        depth: Depth,
        two_cores: bool,
        check_journal: impl FnOnce() -> Vec<Finding> + Send,
    ) -> Derived {
        let cross = depth.cross();
        let plan = self.plan;
        let journal = self.journal;
        let events = &journal.events;
        let contract_id = contract::effective_id(live.value);
        let torn = !journal.torn.is_empty();
        let project = || {
            let archives = journal
                .archives()
                .map(|(name, (first, last))| (name, first, last))
                .collect();
            let inputs = projection::Inputs {
                contract: live.value,
                contract_id: &contract_id,
                generation: live.generation,
                archives,
            };
            let projection =
                crate::profile::time("record projection", || projection::project(&inputs, events));
            let agreement = crate::profile::time("record snapshot", || {
                snapshot_agreement(plan, &projection, torn)
            });
            // The approval's digest reads every markdown file: read while the other core checks
            // the events, not after.
            if depth.digests() && events.iter().any(|e| e.kind() == Some("approval")) {
                plan.markdown();
            }
            (projection, agreement)
        };
        let check_events = || match cross {
            true => event_checks(plan, events, graph),
            false => Vec::new(),
        };
        let ((projection, agreement), (journal_findings, mut at_events)) =
            join(two_cores, project, || (check_journal(), check_events()));
        self.findings.extend(journal_findings);
        let mut derived = Derived {
            generation: live.generation,
            contract_file: live.doc.name.clone(),
            revision: live.value.field("revision").cloned().unwrap_or(Value::Null),
            title: live
                .value
                .field("title")
                .and_then(Value::as_str)
                .map(str::to_owned),
            graph: task_shapes(live.value),
            approval: None,
            snapshot: agreement,
            open_delegations: Vec::new(),
            events: events.len(),
            torn,
            end: JournalEnd::of(journal),
            invariants: invariant::latest(live.value, events),
            projection,
            contract_id,
        };
        derived.approval = crate::profile::time("record approval", || {
            self.approval(&derived.contract_id, depth)
        });
        self.snapshot_findings(agreement, cross);
        for (index, event_id, task) in evidence::open_delegations(events) {
            derived
                .open_delegations
                .push((event_id.clone(), task.clone()));
            at_events.push((
                index,
                Code::OpenDelegation,
                format!("delegation {event_id} of {task} is still launched: never collected or cancelled"),
            ));
        }
        if cross {
            at_events.sort_by_key(|(index, code, _)| (*index, *code));
            for (index, code, message) in at_events {
                let severity = match code {
                    Code::OpenDelegation => Severity::Advisory,
                    _ => Severity::Error,
                };
                self.event_finding(&events[index], code, message).severity = severity;
            }
        }
        derived
    }

    /// The latest approval citing the live contract (rule 19), and whether the markdown it
    /// approved is still the markdown (rule 20).
    fn approval(&mut self, live_id: &Value, depth: Depth) -> Option<Approval> {
        let cross = depth.cross();
        let cited = self.journal.events.iter().rfind(|e| {
            e.kind() == Some("approval")
                && e.value.get("contract_id").is_some_and(|id| id == live_id)
        });
        let Some(event) = cited else {
            if cross {
                self.push(
                    Code::NoApproval,
                    crate::plan::record::JOURNAL,
                    format!("no approval event cites the live contract id {}: nothing opens the plan's tasks (rule 19)", live_id.as_str().unwrap_or("?")),
                );
            }
            return None;
        };
        let digest = depth
            .digests()
            .then(|| markdown_digest(self.plan))
            .flatten();
        if cross {
            self.unreadable_markdown();
        }
        let recorded = event.str("plan_digest");
        let digest_matches = digest.as_ref().map(|d| recorded == Some(d.as_str()));
        if cross && digest_matches == Some(false) {
            self.event_finding(
                event,
                Code::ApprovalDigest,
                format!(
                    "the approval at seq {} digests the markdown as {}, the markdown now hashes to {}",
                    event.seq(),
                    recorded.unwrap_or("?"),
                    digest.as_deref().unwrap_or("?")
                ),
            )
            .severity = Severity::Advisory;
        }
        let field = |key: &str| event.value.get(key).map_or(Value::Null, Json::to_value);
        Some(Approval {
            seq: field("seq"),
            authority: field("authority"),
            mechanism: field("mechanism"),
            digest_matches,
        })
    }

    /// A markdown file that cannot be read leaves the approval's digest unchecked: said, never
    /// skipped.
    fn unreadable_markdown(&mut self) {
        for (name, read) in self.plan.markdown() {
            if let Err(failure) = read {
                let message =
                    format!("{failure}: the approval's digest of the markdown cannot be checked");
                self.unreadable(name, failure, message);
            }
        }
    }

    /// state.json as a document: readable, and one strict JSON document. Its content is the
    /// projection's to judge (DWP113), and only `verify` compares it.
    fn snapshot_document(&mut self, agrees: bool) {
        let name = crate::plan::record::SNAPSHOT;
        match &self.plan.snapshot {
            Some(Err(failure)) => self.unreadable(name, failure, failure.to_string()),
            Some(Ok(bytes)) if !agrees => {
                if let Err(e) = crate::plan::json::parse_strict(bytes) {
                    self.push(Code::NotJson, name, e.message).path = Some(e.path);
                }
            }
            _ => {}
        }
    }

    fn snapshot_findings(&mut self, agreement: SnapshotAgreement, cross: bool) {
        let message = match agreement {
            SnapshotAgreement::Missing => "is missing: the journal has not been projected yet",
            SnapshotAgreement::Stale => {
                "is stale against the journal: it is not the snapshot the journal projects"
            }
            _ => return,
        };
        if cross {
            let name = crate::plan::record::SNAPSHOT;
            self.push(Code::SnapshotStale, name, message).severity = Severity::Advisory;
        }
    }
}

/// How `state.json` stands against the projection's bytes.
fn snapshot_agreement(plan: &RecordPlan, projection: &Projection, torn: bool) -> SnapshotAgreement {
    match (&plan.snapshot, torn) {
        (_, true) => SnapshotAgreement::NotCompared,
        (None, false) => SnapshotAgreement::Missing,
        (Some(Err(_)), false) => SnapshotAgreement::NotCompared,
        (Some(Ok(bytes)), false) if bytes.as_slice() == projection.bytes() => {
            SnapshotAgreement::Agrees
        }
        (Some(Ok(_)), false) => SnapshotAgreement::Stale,
    }
}

/// What the events say against the task graph and the gate logs (`verify` only): early starts,
/// foreign evidence, and each observed gate's log.
fn event_checks(
    plan: &RecordPlan,
    events: &[Event],
    graph: &evidence::TaskGraph,
) -> Vec<evidence::EventFinding> {
    let mut at_events = crate::profile::time("record early starts", || {
        evidence::early_starts(events, graph)
    });
    at_events.extend(crate::profile::time("record foreign", || {
        evidence::foreign_evidence(events)
    }));
    let gates = evidence::observed_gates(events);
    let paths: Vec<String> = gates.iter().map(|(_, path)| path.clone()).collect();
    let logs = crate::profile::time("record read logs", || plan.read_logs(&paths));
    at_events.extend(evidence::log_findings(events, &gates, logs));
    at_events
}

/// The findings of one journal, judged in its plan or on its own (`dwp validate FILE`): each
/// tear, a live file without its final newline, positions that go back, and each event judged
/// against `expect`; `place` names the file an event or a tear is in.
fn journal_findings(
    journal: &Journal,
    expect: &events::Expect,
    place: impl Fn(usize) -> String + Sync,
    two_cores: bool,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    for torn in &journal.torn {
        let message = if journal.segments[torn.file].range.is_some() {
            format!(
                "is corrupt at byte {} ({}): archived history is never repaired in place",
                torn.offset, torn.cause
            )
        } else {
            format!(
                "has a torn tail at byte {} ({}): reported, never repaired by a reader",
                torn.offset, torn.cause
            )
        };
        findings.push(Finding::error(Code::TornJournal, place(torn.file), message).line(torn.line));
    }
    if journal.unframed {
        let live = journal
            .segments
            .iter()
            .position(|s| s.range.is_none())
            .unwrap_or(0);
        let message = "its last event is complete but lacks the final newline";
        findings.push(
            Finding::error(Code::JournalFraming, place(live), message).severity(Severity::Advisory),
        );
    }
    let judge = |event: &Event| event_findings(event, expect, &place);
    match two_cores {
        true => {
            use rayon::prelude::*;
            let judged: Vec<Vec<Finding>> = journal.events.par_iter().map(judge).collect();
            findings.extend(judged.into_iter().flatten());
        }
        false => findings.extend(journal.events.iter().flat_map(judge)),
    }
    findings
}

/// One event's findings: its position, its shape and its trust.
fn event_findings(
    event: &Event,
    expect: &events::Expect,
    place: &impl Fn(usize) -> String,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let at = |code: Code, message: String| {
        Finding::error(code, place(event.file), message).line(event.line)
    };
    if let Some(before) = event.not_above {
        findings.push(at(
            Code::SeqOrder,
            format!(
                "seq {} does not rise above {before}: positions never go backwards (rule 10)",
                event.seq()
            ),
        ));
    }
    let problems = events::check_fields(&event.value, expect);
    let mut invalid = problems.invalid;
    if let Some(strict) = &event.lenient {
        invalid.insert(0, format!("is not strict JSON ({strict})"));
    }
    if !invalid.is_empty() {
        let kind = event.kind().unwrap_or("event");
        let more = match invalid.len() {
            n if n > 3 => format!(" (and {} more)", n - 3),
            _ => String::new(),
        };
        invalid.truncate(3);
        let message = format!("{kind} seq {}: {}{more}", event.seq(), invalid.join("; "));
        findings.push(at(Code::InvalidEvent, message));
    }
    if let Some(message) = problems.agent_observed {
        findings.push(at(
            Code::AgentObserved,
            format!("seq {} {message} (rule 11)", event.seq()),
        ));
    }
    findings
}

/// The projection of `plan`'s journal under its live `contract`, as `derived` names it, judging
/// nothing: for a writer that judged the plan when it opened it and each event it appended
/// since (`steps::record_writer`).
pub fn project_again(plan: &RecordPlan, derived: &Derived, contract: &Value) -> Projection {
    let arena = bumpalo::Bump::new();
    let journal = plan.journal(&arena);
    let archives = journal
        .archives()
        .map(|(name, (first, last))| (name, first, last))
        .collect();
    let inputs = projection::Inputs {
        contract,
        contract_id: &derived.contract_id,
        generation: derived.generation,
        archives,
    };
    projection::project(&inputs, &journal.events)
}

/// sha256 of the plan's top-level markdown, sorted by name and concatenated: what an approval
/// digests. `None` when a file could not be read.
pub fn markdown_digest(plan: &RecordPlan) -> Option<String> {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for (_, read) in plan.markdown() {
        hasher.update(read.as_ref().ok()?);
    }
    Some(format!("{:x}", hasher.finalize()))
}

fn task_shapes(contract: &Value) -> Vec<TaskShape> {
    let tasks = contract.field("tasks").and_then(Value::as_array);
    tasks
        .into_iter()
        .flatten()
        .map(|task| TaskShape {
            id: task
                .field("id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            prerequisites: task
                .field("prerequisites")
                .and_then(Value::as_array)
                .map(|p| {
                    p.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            parallel_safe: task.field("parallel_safe").and_then(Value::as_bool) == Some(true),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unread_plan() -> RecordPlan {
        RecordPlan::unlisted("PLAN_x_y".as_ref(), "permission denied".into())
    }

    /// Every record plan among the conformance fixtures.
    fn record_fixture_plans() -> Vec<std::path::PathBuf> {
        let fixtures =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance-fixtures");
        let cases = std::fs::read_dir(fixtures).unwrap();
        let plans = cases.filter_map(|case| std::fs::read_dir(case.unwrap().path()).ok());
        let mut found: Vec<_> = plans
            .flatten()
            .map(|plan| plan.unwrap().path())
            .filter(|dir| crate::plan::record::is_record_plan(dir))
            .collect();
        found.sort();
        found
    }

    /// Every record fixture judged on one core and on two: the same findings, in the same
    /// order, and the same projection.
    #[test]
    fn two_cores_judge_a_record_plan_exactly_as_one_does() {
        let plans = record_fixture_plans();
        for dir in &plans {
            let plan = RecordPlan::load(dir);
            let one = judge_on(&plan, Depth::Everything, false);
            let two = judge_on(&plan, Depth::Everything, true);
            let shown = |j: &Judged| format!("{:?}", j.findings);
            assert_eq!(shown(&one), shown(&two), "{}", dir.display());
            let bytes = |j: &Judged| j.derived.as_ref().map(|d| d.projection.bytes().to_vec());
            assert_eq!(bytes(&one), bytes(&two), "{}", dir.display());
        }
        let judged = plans.len();
        assert!(judged >= 25, "only {judged} record fixtures judged");
    }

    /// A writer's judgement finds what `dwp validate` finds and derives the same state, with
    /// one difference: it leaves the approval's markdown digest uncompared (`None`).
    #[test]
    fn a_writers_judgement_is_validate_without_the_markdown_digest() {
        let mut approved = 0;
        for dir in record_fixture_plans() {
            let (full, to_write) = (
                validate(&RecordPlan::load(&dir)),
                validate_to_write(&RecordPlan::load(&dir)),
            );
            let shown = |j: &Judged| format!("{:?}", j.findings);
            assert_eq!(shown(&full), shown(&to_write), "{}", dir.display());
            let (Some(full), Some(to_write)) = (full.derived, to_write.derived) else {
                continue;
            };
            assert_eq!(full.projection.bytes(), to_write.projection.bytes());
            assert_eq!(full.end, to_write.end, "{}", dir.display());
            let digests = |d: &Derived| d.approval.as_ref().map(|a| a.digest_matches);
            if let Some(compared) = digests(&full) {
                assert!(compared.is_some(), "{}", dir.display());
                assert_eq!(digests(&to_write), Some(None), "{}", dir.display());
                approved += 1;
            }
        }
        assert!(approved >= 10, "only {approved} approved record fixtures");
    }

    /// The seq a writer numbers its next event with is above every seq read and every seq an
    /// archive's name declares, though the archive holds fewer (the journal's seq never goes
    /// back, rule 10); a tear and a missing final newline are told apart by file.
    #[test]
    fn where_the_journal_ends_is_above_the_events_and_the_archives_names() {
        use crate::plan::record::journal::{Segment, archive_range};
        let archive = |name: &str, bytes: &[u8]| Segment {
            name: name.to_owned(),
            range: archive_range(name),
            read: Ok(bytes.to_vec()),
        };
        let end = |segments: &[Segment]| {
            JournalEnd::of(&Journal::frame(segments, &bumpalo::Bump::new(), None))
        };
        let named_above = [
            archive(
                "journal-archive-000001-000040.ndjson",
                b"{\"seq\":1}\n{\"seq\":2}\n",
            ),
            Segment::live(b"{\"seq\":3}\n{\"seq\":4}".to_vec()),
        ];
        let found = end(&named_above);
        assert_eq!(found.next_seq, 41, "above the archive's declared last seq");
        assert_eq!(
            (found.archive_tear, found.live_tear, found.unframed),
            (None, None, true)
        );

        let torn = [
            archive(
                "journal-archive-000001-000002.ndjson",
                b"{\"seq\":1}\n{\"seq\n",
            ),
            Segment::live(b"{\"seq\":3}\n{\"seq\":7}\n{\"se".to_vec()),
        ];
        let found = end(&torn);
        assert_eq!(found.next_seq, 8, "above the highest event read");
        let archive_tear = found.archive_tear.map(|(name, offset, _)| (name, offset));
        assert_eq!(
            archive_tear,
            Some(("journal-archive-000001-000002.ndjson".into(), 10))
        );
        assert_eq!(found.live_tear.map(|(offset, _)| offset), Some(20));
        assert!(
            !found.unframed,
            "a torn end is a tear, not a missing newline"
        );
    }

    #[test]
    fn a_plan_folder_that_cannot_be_listed_is_unverified_never_missing_its_files() {
        for judged in [validate(&unread_plan()), verify(&unread_plan())] {
            assert!(judged.derived.is_none());
            let codes: Vec<(Code, Severity)> = judged
                .findings
                .iter()
                .map(|f| (f.code, f.severity))
                .collect();
            assert_eq!(codes, [(Code::Unreadable, Severity::Unverified)]);
        }
    }
}
