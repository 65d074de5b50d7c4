//! The one writer of a record plan's journal (docs/record-plans.md, "Writing a record plan").
//!
//! Opening it takes the plan's lock (`.ledger.lock`, the public ledger's own, so the two
//! writers exclude each other), reads the plan once under it, and refuses a plan whose live
//! contract it cannot judge: dwp never writes events under a contract it could not read. It
//! then mends the live journal as the public ledger does on opening it for writing, each mend
//! recorded by a `journal_repair` event and a PROGRESS.md line:
//!
//! - a torn tail (the first line that is not UTF-8 JSON, with everything after it) is cut at
//!   that line's start;
//! - a final event complete but without its newline gets the newline back.
//!
//! A torn archive is history: it is never repaired in place, and nothing is written. Every
//! event appended after that is judged by the reader's own checks ([`crate::rules::record::mint`])
//! and numbered above every seq of the archives and the live file.
//!
//! An amendment also writes the contract's revisions under the same lock
//! ([`RecordWriter::commit_files`]), and its approval cites the revision it stages before that
//! revision is live ([`RecordWriter::append_citing`]); finishing projects `state.json` from the
//! plan as it then stands.

use crate::error::{Error, Result};
use crate::plan::record::{JOURNAL, RecordGeneration, RecordPlan};
use crate::rules::record::Derived;
use crate::rules::record::mint::{self, Live, Minted};
use crate::steps::commit::{Change, commit};
use crate::store::journal_file::JournalFile;
use crate::store::lock_dir::{self, LockGuard};
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A mend of the live journal, as recorded.
#[derive(Debug, Clone, Serialize)]
pub struct Repair {
    /// The `journal_repair` event's seq.
    pub seq: i64,
    /// Where the journal was cut (a torn tail) or where the newline went (a framing mend).
    pub byte_offset: u64,
    pub cause: String,
}

/// An approval appended, or found.
#[derive(Debug, Clone)]
pub struct Approved {
    pub seq: i64,
    /// The same approval was already there: nothing was written.
    pub found: bool,
    pub plan_digest: String,
}

/// What finishing a writer did to `state.json`.
#[derive(Debug, Clone)]
pub struct Projected {
    /// The projection was written (it differed from the file).
    pub written: bool,
    /// sha256 of `state.json` before and after (empty: there was none).
    pub old_sha256: String,
    pub new_sha256: String,
}

/// The writer of one record plan, holding its lock.
pub struct RecordWriter {
    pub plan_dir: PathBuf,
    /// The plan as read under the lock, once mended, and what it derives: what a verb judges
    /// before it appends (appends do not change these).
    plan: RecordPlan,
    derived: Derived,
    journal: JournalFile,
    contract: Value,
    contract_id: String,
    generation: RecordGeneration,
    next_seq: i64,
    /// What opening the writer mended.
    pub repairs: Vec<Repair>,
    /// The lines appended (the snapshot is projected again from them on finishing).
    appended: Vec<u8>,
    /// Whether files other than the journal were written (the plan is read again on finishing).
    rewritten: bool,
    /// Released last: every field above is done with the files by then.
    lock: LockGuard,
}

impl RecordWriter {
    /// Take the lock of the record plan at `plan_dir` (waiting up to `wait`), read the plan and
    /// mend its live journal.
    pub fn open(plan_dir: &Path, wait: Duration) -> Result<RecordWriter> {
        Self::open_checked(plan_dir, wait, |_| Ok(()))
    }

    /// [`RecordWriter::open`], with `check` judging the plan as read under the lock before
    /// anything is written (a caller's compare-and-swap).
    pub fn open_checked(
        plan_dir: &Path,
        wait: Duration,
        check: impl FnOnce(&RecordPlan) -> Result<()>,
    ) -> Result<RecordWriter> {
        let lock = lock_dir::acquire(&lock_dir::ledger_target(plan_dir), wait)?;
        // A multi-file write of dwp's killed half way is completed before anything is read.
        crate::store::intent::complete_pending(plan_dir)?;
        let plan = RecordPlan::load(plan_dir);
        let journal_path = plan_dir.join(JOURNAL);
        let (journal, bytes) = JournalFile::read_locked(&journal_path, plan_dir, &lock)?;
        let live_read = plan.journal_files.iter().find(|s| s.range.is_none());
        let as_loaded = live_read.and_then(|s| s.read.as_ref().ok());
        if as_loaded.map_or(!bytes.is_empty(), |loaded| *loaded != bytes) {
            return Err(changed_while_read(&journal_path));
        }
        let judged = crate::rules::record::validate_to_write(&plan);
        let Some(derived) = judged.derived else {
            return Err(unjudgeable(plan_dir, &judged.findings, NO_EVENT));
        };
        let contract = live_contract(&plan, &derived.contract_file)?;
        check(&plan)?;
        let mut writer = RecordWriter {
            plan_dir: plan_dir.to_path_buf(),
            journal,
            contract,
            contract_id: derived.contract_id.as_str().unwrap_or_default().to_owned(),
            generation: derived.generation,
            next_seq: 1,
            repairs: Vec::new(),
            appended: Vec::new(),
            rewritten: false,
            // Set once the journal is mended (the mend reads the plan while it appends).
            plan: RecordPlan::unlisted(plan_dir, String::new()),
            derived,
            lock,
        };
        writer.mend(&plan)?;
        writer.plan = plan;
        if !writer.repairs.is_empty() {
            writer.read_again()?;
        }
        Ok(writer)
    }

    /// The plan as read under the lock (after the mends), and what it derives.
    pub fn plan(&self) -> (&RecordPlan, &Derived) {
        (&self.plan, &self.derived)
    }

    /// The live contract.
    pub fn contract(&self) -> &Value {
        &self.contract
    }

    /// Read the plan again after a mend: its journal must be the bytes this writer left.
    fn read_again(&mut self) -> Result<()> {
        let plan = RecordPlan::load(&self.plan_dir);
        let live = plan.journal_files.iter().find(|s| s.range.is_none());
        let length = live.and_then(|s| s.read.as_ref().ok()).map_or(0, Vec::len);
        if length as u64 != self.journal.len() {
            return Err(changed_while_read(&self.plan_dir.join(JOURNAL)));
        }
        let judged = crate::rules::record::validate_to_write(&plan);
        let Some(derived) = judged.derived else {
            return Err(unjudgeable(&self.plan_dir, &judged.findings, NO_EVENT));
        };
        (self.plan, self.derived) = (plan, derived);
        Ok(())
    }

    /// The seq the next event appended gets (a gate log is named after its event's seq, and
    /// written before it).
    pub fn next_seq(&self) -> i64 {
        self.next_seq
    }

    /// The live contract's id.
    pub fn contract_id(&self) -> &str {
        &self.contract_id
    }

    /// Append the event of `kind` carrying `payload`, written by `actor`, durably; returns it.
    /// A `gate_run` is refused here: [`RecordWriter::append_gate_run`] is its only way in.
    pub fn append(
        &mut self,
        kind: &str,
        payload: Map<String, Value>,
        actor: Value,
        note: Option<&str>,
    ) -> Result<Value> {
        if kind == "gate_run" {
            return Err(Error::rejected(
                self.journal_name(),
                "a gate_run is appended only by dwp run, once it ran the command and wrote its log (rule 22); nothing was written",
            ));
        }
        let id = self.contract_id.clone();
        self.append_minted(&id, kind, payload, actor, note)
    }

    /// [`RecordWriter::append`] of an event citing `contract_id` instead of the live contract:
    /// only an amendment's approval, which cites the revision it stages before that revision
    /// goes live (rule 24). Judged as every event is, under the live contract.
    pub fn append_citing(
        &mut self,
        contract_id: &str,
        kind: &str,
        payload: Map<String, Value>,
        actor: Value,
        note: Option<&str>,
    ) -> Result<Value> {
        if kind == "gate_run" {
            return self.append(kind, payload, actor, note);
        }
        self.append_minted(contract_id, kind, payload, actor, note)
    }

    /// Judge the event [`RecordWriter::append_citing`] would append, writing nothing: a writer
    /// of several steps judges each event before its first write.
    pub fn judge_event(
        &self,
        contract_id: &str,
        kind: &str,
        payload: &Map<String, Value>,
        actor: &Value,
        note: Option<&str>,
    ) -> Result<()> {
        let minted = self.mint_next(contract_id, kind, payload.clone(), actor.clone(), note);
        minted.map(|_| ())
    }

    /// Write `change`, files of the plan other than its journal (an amendment's revisions of
    /// the contract), under this writer's lock; finishing reads the plan again, so `state.json`
    /// is projected from the files as they then stand.
    pub fn commit_files(&mut self, change: Change) -> Result<()> {
        let journal = self.plan_dir.join(JOURNAL);
        if change.edits().iter().any(|edit| edit.path() == journal) {
            return Err(Error::rejected(
                self.journal_name(),
                "is written by its events only; nothing was written",
            ));
        }
        self.rewritten = true;
        commit(change)
    }

    /// Append the `gate_run` of a gate dwp itself ran (as the public ledger's gate executor, the
    /// only producer of observed gate evidence), written by dwp: refused unless the log its
    /// `evidence_path` names is already a file of the plan, so no event cites a missing log.
    pub fn append_gate_run(&mut self, payload: Map<String, Value>) -> Result<Value> {
        self.append_observed("gate_run", payload)
    }

    /// Append the `observation` evaluating an invariant by a check dwp itself ran, as
    /// [`RecordWriter::append_gate_run`] appends a gate's: written by dwp, citing its log.
    pub fn append_evaluation(&mut self, payload: Map<String, Value>) -> Result<Value> {
        self.append_observed("observation", payload)
    }

    fn append_observed(&mut self, kind: &str, payload: Map<String, Value>) -> Result<Value> {
        let log = payload.get("evidence_path").and_then(Value::as_str);
        let present = log.is_some_and(|log| {
            let path = self.plan_dir.join(log);
            crate::store::entry(&path, &self.plan_dir).ok() == Some(crate::store::Entry::File)
        });
        if !present {
            return Err(Error::rejected(
                self.journal_name(),
                format!(
                    "a {kind} must cite its log, written first, and {} is no file of the plan; nothing was written",
                    log.unwrap_or("(none)")
                ),
            ));
        }
        let id = self.contract_id.clone();
        self.append_minted(&id, kind, payload, mint::helper(), None)
    }

    fn append_minted(
        &mut self,
        contract_id: &str,
        kind: &str,
        payload: Map<String, Value>,
        actor: Value,
        note: Option<&str>,
    ) -> Result<Value> {
        let Minted { event, line } = self.mint_next(contract_id, kind, payload, actor, note)?;
        self.journal.append(&line)?;
        self.next_seq += 1;
        self.appended.extend_from_slice(&line);
        Ok(event)
    }

    /// The next event, citing `contract_id`, numbered and judged, not yet written.
    fn mint_next(
        &self,
        contract_id: &str,
        kind: &str,
        payload: Map<String, Value>,
        actor: Value,
        note: Option<&str>,
    ) -> Result<Minted> {
        let ts = crate::clock::now_rfc3339();
        let live = Live {
            contract: &self.contract,
            id: contract_id.to_owned(),
            generation: self.generation,
        };
        mint::mint(&live, self.next_seq, &ts, kind, payload, actor, note)
            .map_err(|why| Error::rejected(self.journal_name(), why))
    }

    /// Write `state.json` as the journal projects it, when it is not that already (the ledger
    /// leaves it to its `project` verb; dwp keeps the snapshot the journal's, so a writer killed
    /// between an append and the projection is made whole by the next one), then release the
    /// lock.
    pub fn finish(mut self) -> Result<Projected> {
        // Events alone appended: the plan as read, each event judged as it was appended, is
        // the plan now (the journal file refuses an append behind the lock), so it is projected
        // again without being read or judged again. Other files written: read it again.
        let appended = std::mem::take(&mut self.appended);
        if !self.rewritten && !appended.is_empty() && self.plan.extend_live(&appended) {
            self.derived.projection =
                crate::rules::record::project_again(&self.plan, &self.derived, &self.contract);
        } else if self.rewritten || !appended.is_empty() {
            self.read_again()?;
        }
        let snapshot = self.plan.snapshot.as_ref().and_then(|s| s.as_ref().ok());
        let bytes = self.derived.projection.bytes().to_vec();
        let projected = Projected {
            written: snapshot != Some(&bytes),
            old_sha256: snapshot
                .map(|s| crate::store::sha256_hex(s))
                .unwrap_or_default(),
            new_sha256: crate::store::sha256_hex(&bytes),
        };
        if projected.written {
            let mut change = Change::new(&self.plan_dir, "dwp: project state.json");
            let path = self.plan_dir.join(crate::plan::record::SNAPSHOT);
            change.write(&path, snapshot.map(Vec::as_slice), bytes);
            commit(change)?;
        }
        let RecordWriter { journal, lock, .. } = self;
        drop(journal);
        lock.release()?;
        Ok(projected)
    }

    fn journal_name(&self) -> String {
        self.plan_dir.join(JOURNAL).display().to_string()
    }

    /// Append a human's approval of the live contract as the plan's markdown stands (rules 19,
    /// 20): `by`, `mechanism`, the markdown's digest, and `marker` (the note's) as its note;
    /// the same approval already there is found, not written again. Refused, writing nothing,
    /// when the plan has no markdown or a markdown file cannot be read.
    pub fn approve(&mut self, by: &str, mechanism: &str, marker: &str) -> Result<Approved> {
        use crate::rules::record::transitions;
        let digest = self.plan_digest()?;
        refuse_placeholders(&self.plan_dir, self.plan.markdown())?;
        let payload = transitions::approval_payload(by, mechanism, &digest);
        let actor = serde_json::json!({"kind": "human", "identity": by});
        let arena = bumpalo::Bump::new();
        let journal = self.plan.journal(&arena);
        let found = transitions::same_event(
            &journal.events,
            "approval",
            &payload,
            &actor,
            &self.contract_id,
        );
        drop(journal);
        let seq = match found {
            Some(seq) => seq,
            None => {
                let event = self.append("approval", payload, actor, Some(marker))?;
                event.get("seq").and_then(Value::as_i64).unwrap_or_default()
            }
        };
        Ok(Approved {
            seq,
            found: found.is_some(),
            plan_digest: digest,
        })
    }

    /// The digest of the plan's markdown an approval records (rule 20); refused, naming why,
    /// when the plan has no markdown or a markdown file cannot be read.
    pub fn plan_digest(&self) -> Result<String> {
        let plan = &self.plan;
        if plan.markdown().is_empty() {
            return Err(Error::rejected(
                self.plan_dir.display().to_string(),
                "holds no markdown (*.md): an approval digests the plan the authority approved, and a folder of records alone is not approvable (rule 20); nothing was written",
            ));
        }
        let Some(digest) = crate::rules::record::markdown_digest(plan) else {
            return Err(Error::rejected(
                self.plan_dir.display().to_string(),
                "a markdown file of the plan cannot be read, so nothing can say what was approved; nothing was written",
            )
            .with_hint(format!(
                "`dwp verify {}` names it",
                crate::term::path_word(&self.plan_dir)
            )));
        };
        Ok(digest)
    }

    /// Number events above every seq read, then cut a torn live tail or restore a lost final
    /// newline, each with its `journal_repair` event and PROGRESS.md line.
    fn mend(&mut self, plan: &RecordPlan) -> Result<()> {
        let end = self.derived.end.clone();
        self.next_seq = end.next_seq;
        if let Some((archive, offset, cause)) = end.archive_tear {
            return Err(Error::rejected(
                plan.dir.join(archive).display().to_string(),
                format!(
                    "is corrupt at byte {offset} ({cause}): archived history is never repaired in place; nothing was written"
                ),
            )
            .with_hint("restore the archive from an exported copy of the plan"));
        }
        let (live_tear, unframed) = (end.live_tear, end.unframed);
        let live = plan.journal_files.iter().find(|s| s.range.is_none());
        let old = live
            .and_then(|s| s.read.as_ref().ok())
            .cloned()
            .unwrap_or_default();
        match live_tear {
            Some((offset, cause)) => {
                let kept = old[..offset].to_vec();
                self.replace_journal(&old, kept, offset as u64, &cause, mint::TORN_NOTE)
            }
            None if unframed => {
                let mut framed = old.clone();
                framed.push(b'\n');
                let offset = old.len() as u64;
                self.replace_journal(
                    &old,
                    framed,
                    offset,
                    mint::FRAMING_CAUSE,
                    mint::FRAMING_NOTE,
                )
            }
            None => Ok(()),
        }
    }

    /// Mend the live journal `old`: `kept` (its bytes up to the mend) followed by the
    /// `journal_repair` event, written with the event's PROGRESS.md line as one change. The
    /// journal is replaced whole (atomically) rather than cut and appended to, so no kill leaves
    /// a cut without its record or a record without its cut: the intent record of the change
    /// makes the two files land together, completed by the next writer if a kill interrupts.
    fn replace_journal(
        &mut self,
        old: &[u8],
        kept: Vec<u8>,
        byte_offset: u64,
        cause: &str,
        note: &str,
    ) -> Result<()> {
        let payload = mint::repair_payload(byte_offset, cause);
        let id = self.contract_id.clone();
        let Minted { event, line } =
            self.mint_next(&id, "journal_repair", payload, mint::helper(), Some(note))?;
        let seq = event.get("seq").and_then(Value::as_i64).unwrap_or_default();
        let ts = event.get("ts").and_then(Value::as_str).unwrap_or_default();
        let mut mended = kept;
        mended.extend_from_slice(&line);
        let path = self.plan_dir.join(JOURNAL);
        let mut change = Change::new(&self.plan_dir, "dwp: journal repair");
        change.write(&path, Some(old), mended.clone());
        change.append(
            &self.plan_dir.join(PROGRESS),
            &repair_line(ts, byte_offset, cause, seq),
        );
        commit(change)?;
        // The journal is a new file now: this writer appends to it, as it left it.
        let (journal, bytes) = JournalFile::read_locked(&path, &self.plan_dir, &self.lock)?;
        if bytes != mended {
            return Err(changed_while_read(&path));
        }
        self.journal = journal;
        self.next_seq += 1;
        // Replaced, not appended to: finishing reads the plan again.
        self.rewritten = true;
        self.repairs.push(Repair {
            seq,
            byte_offset,
            cause: cause.to_owned(),
        });
        Ok(())
    }
}

const PROGRESS: &str = "PROGRESS.md";

/// The PROGRESS.md line of a repair.
fn repair_line(ts: &str, byte_offset: u64, cause: &str, seq: i64) -> String {
    format!(
        "- {ts} dwp: {JOURNAL} mended at byte {byte_offset} ({}); recorded as journal_repair at seq {seq}",
        crate::term::inert_line(cause)
    )
}

fn live_contract(plan: &RecordPlan, name: &str) -> Result<Value> {
    let docs = plan.first_contract.iter().chain(&plan.chain);
    docs.filter(|doc| doc.name == name)
        .find_map(|doc| doc.value().cloned())
        .ok_or_else(|| {
            Error::rejected(
                plan.dir.join(name).display().to_string(),
                "cannot be read as the live contract",
            )
        })
}

fn changed_while_read(path: &Path) -> Error {
    Error::rejected(
        path.display().to_string(),
        "changed while dwp read it under the plan's lock: another writer ignores the lock; nothing was written",
    )
}

/// The plan's live contract cannot be judged: `refusal` (what is not done), why (the first
/// error found), and its hint: that error's own step when it names one (the `dwp init` that
/// stamps a draft), else the command that lists every problem.
pub fn unjudgeable(plan_dir: &Path, findings: &[crate::findings::Finding], refusal: &str) -> Error {
    let first = findings
        .iter()
        .find(|f| f.severity == crate::findings::Severity::Error);
    let why = first
        .map(|f| format!("{}: {}", f.file, f.message))
        .unwrap_or_else(|| "its live contract cannot be read".into());
    let hint = first.and_then(|f| f.hint.clone()).unwrap_or_else(|| {
        format!(
            "`dwp validate {}` lists every problem of the plan's records",
            crate::term::path_word(plan_dir)
        )
    });
    Error::rejected(plan_dir.display().to_string(), format!("{refusal} ({why})")).with_hint(hint)
}

/// What a writer refuses under a contract it cannot judge.
const NO_EVENT: &str = "dwp writes no event under a contract it cannot judge";

/// Refuse, writing nothing, an approval of markdown that still holds a placeholder `dwp new`
/// wrote for its author (`To be written before approval: ...`): what is approved is written.
pub fn refuse_placeholders(
    plan_dir: &Path,
    markdown: &[crate::plan::record::MarkdownFile],
) -> Result<()> {
    let files = markdown
        .iter()
        .filter_map(|(name, bytes)| Some((name.as_str(), bytes.as_deref().ok()?)));
    let Some((file, line, text)) = crate::rules::record::draft::placeholder_in_markdown(files)
    else {
        return Ok(());
    };
    Err(Error::rejected(
        plan_dir.join(&file).display().to_string(),
        format!(
            "line {line} still holds a placeholder (`{}`): what is approved must be written first; nothing was written",
            crate::term::inert_line(&text)
        ),
    )
    .with_hint(format!(
        "write line {line} of {}, then run this again",
        crate::term::path_word(&plan_dir.join(&file))
    )))
}

/// The public ledger's human-authority marker for the note at `path` (rule 12).
pub fn human_marker(path: &Path) -> Result<String> {
    let note = read_given_file(
        path,
        "note the human wrote (the approval's authority marker)",
    )?;
    let digest = crate::store::sha256_hex(&note);
    Ok(crate::rules::record::transitions::human_marker(
        &path.display().to_string(),
        &digest,
    ))
}

/// A file the caller names (a note, a contract draft), wherever it is: a regular file, read
/// whole; `what` names it in the refusal.
pub fn read_given_file(path: &Path, what: &str) -> Result<Vec<u8>> {
    crate::store::read_given(path).map_err(|failure| {
        Error::rejected(
            path.display().to_string(),
            format!("the {what} cannot be read ({failure})"),
        )
    })
}
