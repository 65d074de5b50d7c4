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

use crate::error::{Error, Result};
use crate::plan::record::{Event, JOURNAL, Journal, RecordGeneration, RecordPlan};
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
    /// Whether an event was appended (the snapshot is projected again on finishing).
    appended: bool,
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
        let judged = crate::rules::record::validate(&plan);
        let Some(derived) = judged.derived else {
            return Err(unjudgeable(plan_dir, &judged.findings));
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
            appended: false,
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
        let judged = crate::rules::record::validate(&plan);
        let Some(derived) = judged.derived else {
            return Err(unjudgeable(&self.plan_dir, &judged.findings));
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
        self.append_minted(kind, payload, actor, note)
    }

    /// Append the `gate_run` of a gate dwp itself ran (as the public ledger's gate executor, the
    /// only producer of observed gate evidence), written by dwp: refused unless the log its
    /// `evidence_path` names is already a file of the plan, so no event cites a missing log.
    pub fn append_gate_run(&mut self, payload: Map<String, Value>) -> Result<Value> {
        let log = payload.get("evidence_path").and_then(Value::as_str);
        let present = log.is_some_and(|log| {
            let path = self.plan_dir.join(log);
            crate::store::entry(&path, &self.plan_dir).ok() == Some(crate::store::Entry::File)
        });
        if !present {
            return Err(Error::rejected(
                self.journal_name(),
                format!(
                    "a gate_run must cite its log, written first, and {} is no file of the plan; nothing was written",
                    log.unwrap_or("(none)")
                ),
            ));
        }
        self.append_minted("gate_run", payload, mint::helper(), None)
    }

    fn append_minted(
        &mut self,
        kind: &str,
        payload: Map<String, Value>,
        actor: Value,
        note: Option<&str>,
    ) -> Result<Value> {
        let ts = crate::clock::now_rfc3339();
        let live = Live {
            contract: &self.contract,
            id: self.contract_id.clone(),
            generation: self.generation,
        };
        let Minted { event, line } =
            mint::mint(&live, self.next_seq, &ts, kind, payload, actor, note)
                .map_err(|why| Error::rejected(self.journal_name(), why))?;
        self.journal.append(&line)?;
        self.next_seq += 1;
        self.appended = true;
        Ok(event)
    }

    /// Project `state.json` again when anything was appended (the ledger leaves that to its
    /// `project` verb; dwp keeps the snapshot the journal's), then release the lock.
    pub fn finish(self) -> Result<Projected> {
        let project = self.appended;
        self.close(project)
    }

    /// [`RecordWriter::finish`], projecting `state.json` whether or not anything was appended.
    pub fn finish_projecting(self) -> Result<Projected> {
        self.close(true)
    }

    fn close(mut self, project: bool) -> Result<Projected> {
        if self.appended {
            self.read_again()?;
        }
        let snapshot = self.plan.snapshot.as_ref().and_then(|s| s.as_ref().ok());
        let old_sha256 = snapshot
            .map(|s| crate::store::sha256_hex(s))
            .unwrap_or_default();
        let mut projected = Projected {
            written: false,
            new_sha256: old_sha256.clone(),
            old_sha256,
        };
        if project {
            let bytes = self.derived.projection.bytes();
            projected.new_sha256 = crate::store::sha256_hex(&bytes);
            if snapshot != Some(&bytes) {
                let mut change = Change::new(&self.plan_dir, "dwp: project state.json");
                let path = self.plan_dir.join(crate::plan::record::SNAPSHOT);
                change.write(&path, snapshot.map(Vec::as_slice), bytes);
                commit(change)?;
                projected.written = true;
            }
        }
        let RecordWriter { journal, lock, .. } = self;
        drop(journal);
        lock.release()?;
        Ok(projected)
    }

    fn journal_name(&self) -> String {
        self.plan_dir.join(JOURNAL).display().to_string()
    }

    /// Number events above every seq read, then cut a torn live tail or restore a lost final
    /// newline, each with its `journal_repair` event and PROGRESS.md line.
    fn mend(&mut self, plan: &RecordPlan) -> Result<()> {
        let arena = bumpalo::Bump::new();
        let journal = plan.journal(&arena);
        self.note_unnoted_repairs(plan, &journal)?;
        let archive_top = journal.archives().map(|(_, (_, last))| last).max();
        let highest = journal.events.iter().filter_map(|e| e.integer_seq()).max();
        let floor = archive_top.map_or(0, |top| i64::try_from(top).unwrap_or(i64::MAX));
        self.next_seq = highest.unwrap_or(0).max(floor) + 1;
        if let Some(torn) = journal
            .torn
            .iter()
            .find(|t| journal.segments[t.file].range.is_some())
        {
            return Err(Error::rejected(
                plan.dir.join(journal.file_name(torn.file)).display().to_string(),
                format!(
                    "is corrupt at byte {} ({}): archived history is never repaired in place; nothing was written",
                    torn.offset, torn.cause
                ),
            )
            .with_hint("restore the archive from an exported copy of the plan"));
        }
        let live_tear = journal
            .torn
            .first()
            .map(|t| (t.offset as u64, t.cause.clone()));
        let unframed = journal.unframed;
        drop(journal);
        if let Some((offset, cause)) = live_tear {
            self.journal.truncate(offset)?;
            self.record_repair(offset, &cause, mint::TORN_NOTE)?;
        } else if unframed {
            let offset = self.journal.len();
            self.journal.append(b"\n")?;
            self.record_repair(offset, mint::FRAMING_CAUSE, mint::FRAMING_NOTE)?;
        }
        Ok(())
    }

    /// The event is appended first and its PROGRESS.md line after: a kill between the two
    /// leaves an event without its line, which the next writer adds
    /// ([`RecordWriter::note_unnoted_repairs`]); never a line for an event that is not there.
    fn record_repair(&mut self, byte_offset: u64, cause: &str, note: &str) -> Result<()> {
        let payload = mint::repair_payload(byte_offset, cause);
        let event = self.append("journal_repair", payload, mint::helper(), Some(note))?;
        let seq = event.get("seq").and_then(Value::as_i64).unwrap_or_default();
        let ts = event.get("ts").and_then(Value::as_str).unwrap_or_default();
        let mut change = Change::new(&self.plan_dir, "dwp: journal repair");
        change.append(
            &self.plan_dir.join(PROGRESS),
            &repair_line(ts, byte_offset, cause, seq),
        );
        commit(change)?;
        self.repairs.push(Repair {
            seq,
            byte_offset,
            cause: cause.to_owned(),
        });
        Ok(())
    }
}

impl RecordWriter {
    /// Add the PROGRESS.md line of each `journal_repair` dwp appended whose line is missing (a
    /// writer killed between the two).
    fn note_unnoted_repairs(&self, plan: &RecordPlan, journal: &Journal) -> Result<()> {
        let progress = plan.markdown().iter().find(|file| file.0 == PROGRESS);
        let Some((_, Ok(text))) = progress else {
            return Ok(());
        };
        let text = String::from_utf8_lossy(text);
        let mut change = Change::new(&self.plan_dir, "dwp: journal repair");
        for event in journal.events.iter().filter(|e| is_dwp_repair(e)) {
            let seq = event.seq();
            let noted = format!("recorded as journal_repair at seq {seq}");
            if text.lines().any(|line| line.ends_with(&noted)) {
                continue;
            }
            let offset = event.value.get("byte_offset").and_then(|v| v.as_i64());
            let line = repair_line(
                event.str("ts").unwrap_or_default(),
                offset
                    .and_then(|o| u64::try_from(o).ok())
                    .unwrap_or_default(),
                event.str("cause").unwrap_or_default(),
                seq,
            );
            change.append(&self.plan_dir.join(PROGRESS), &line);
        }
        commit(change)
    }
}

const PROGRESS: &str = "PROGRESS.md";

/// The PROGRESS.md line of a repair: written from the event alone, so the next writer can
/// write it again when a kill lost it.
fn repair_line(ts: &str, byte_offset: u64, cause: &str, seq: i64) -> String {
    format!(
        "- {ts} dwp: {JOURNAL} mended at byte {byte_offset} ({}); recorded as journal_repair at seq {seq}",
        crate::term::inert_line(cause)
    )
}

/// A `journal_repair` dwp itself appended.
fn is_dwp_repair(event: &Event) -> bool {
    let actor = event.value.get("actor").and_then(|a| a.get("identity"));
    event.kind() == Some("journal_repair")
        && actor
            .and_then(|identity| identity.as_str())
            .is_some_and(|identity| identity.starts_with("dwp/"))
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

/// The plan's live contract cannot be judged: name why, and the command that shows the rest.
fn unjudgeable(plan_dir: &Path, findings: &[crate::findings::Finding]) -> Error {
    let why = findings
        .iter()
        .find(|f| f.severity == crate::findings::Severity::Error)
        .map(|f| format!("{}: {}", f.file, f.message))
        .unwrap_or_else(|| "its live contract cannot be read".into());
    Error::rejected(
        plan_dir.display().to_string(),
        format!("dwp writes no event under a contract it cannot judge ({why})"),
    )
    .with_hint(format!(
        "`dwp validate {}` lists every problem of the plan's records",
        crate::term::path_word(plan_dir)
    ))
}
