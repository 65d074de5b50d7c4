//! Record plans (DWP v6 and v7): a plan whose truth is an append-only journal of events under a
//! content-addressed contract, with `state.json` a snapshot derived from them
//! (docs/record-plans.md).
//!
//! This module finds such a plan ([`is_record_plan`]) and reads each of its files at most once,
//! through the store ([`RecordPlan::load`]): the manifest, every contract file and the
//! journal's files (archived segments and the live file) with the plan, their parsing when first
//! asked for, so that a large plan's contract and journal are parsed on two cores
//! ([`Doc::read`], [`RecordPlan::journal`]: framed as the public tooling frames it, a torn tail
//! reported and never repaired). The plan's markdown ([`RecordPlan::markdown`]) and gate logs
//! ([`RecordPlan::read_logs`]) are read when a rule asks. What the records mean is
//! `crate::rules::record`'s.

pub mod journal;
pub mod value;

use crate::plan::json::{JsonError, parse_strict};
use crate::store::{self, Entry, ReadFailure};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use journal::{Event, Journal, Segment, Torn};
pub use value::{Json, Object};

/// The two record-plan generations. A plan keeps its generation for life; it is read from the
/// live contract's `schema` URL, never from a version string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RecordGeneration {
    V6,
    V7,
}

const BASE: &str = "https://deepworkplan.com/schema/";

impl RecordGeneration {
    pub fn number(self) -> u32 {
        match self {
            RecordGeneration::V6 => 6,
            RecordGeneration::V7 => 7,
        }
    }

    fn from_number(number: u32) -> Option<RecordGeneration> {
        match number {
            6 => Some(RecordGeneration::V6),
            7 => Some(RecordGeneration::V7),
            _ => None,
        }
    }

    /// `v6` or `v7`.
    pub fn label(self) -> &'static str {
        match self {
            RecordGeneration::V6 => "v6",
            RecordGeneration::V7 => "v7",
        }
    }

    /// The URL of a record document of this generation (`plan-contract`, `plan-manifest`,
    /// `journal-event`).
    pub fn url(self, document: &str) -> String {
        format!("{BASE}{document}/v{}.json", self.number())
    }

    /// The helper identity the public ledger writes for this generation (`generated_by`).
    pub fn ledger_identity(self) -> &'static str {
        match self {
            RecordGeneration::V6 => "dwp-ledger/6.0",
            RecordGeneration::V7 => "dwp-ledger/7.0",
        }
    }
}

/// The URL of the derived snapshot, the same for v6 and v7.
pub const SNAPSHOT_URL: &str = "https://deepworkplan.com/schema/plan-snapshot/v6.json";

/// What a record document's `schema` URL says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlGeneration {
    Known(RecordGeneration),
    /// A generation of the same document newer than v7: no claim can be made.
    Newer(u32),
    /// Missing, not a string, another document's URL, or an older generation.
    Unknown,
}

/// The generation a `schema` value names for `document` (`plan-contract`, `plan-manifest`,
/// `journal-event`).
pub fn url_generation(schema: Option<&Value>, document: &str) -> UrlGeneration {
    let Some(url) = schema.and_then(Value::as_str) else {
        return UrlGeneration::Unknown;
    };
    let number = url
        .strip_prefix(BASE)
        .and_then(|rest| rest.strip_prefix(document))
        .and_then(|rest| rest.strip_prefix("/v"))
        .and_then(|rest| rest.strip_suffix(".json"))
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse::<u32>().ok());
    match number {
        Some(n) => match RecordGeneration::from_number(n) {
            Some(generation) => UrlGeneration::Known(generation),
            None if n > 7 => UrlGeneration::Newer(n),
            None => UrlGeneration::Unknown,
        },
        None => UrlGeneration::Unknown,
    }
}

/// The files of a record plan, by name inside the plan folder.
pub const MANIFEST: &str = "manifest.json";
pub const CONTRACT: &str = "contract.json";
pub const CHAIN: &str = "contracts";
pub const JOURNAL: &str = "journal.ndjson";
pub const SNAPSHOT: &str = "state.json";
/// The contract draft `dwp new --generation v7` writes, which `dwp init --contract` stamps.
pub const DRAFT: &str = "contract.draft.json";

/// The chain's file of revision `n` (`contracts/contract.r2.json`).
pub fn revision_file(n: i64) -> String {
    format!("{CHAIN}/contract.r{n}.json")
}

/// Where an amendment stages revision `n` before it goes live: not a `*.json` name, so never
/// read as a revision (`contracts/.contract.r2.json.pending`).
pub fn pending_file(n: i64) -> String {
    format!("{CHAIN}/.contract.r{n}.json.pending")
}

/// Whether `dir` is a record plan (rule 16 of docs/record-plans.md): it holds a `contract.json`
/// or a `contracts/` chain, or a `manifest.json` carrying a contract pointer (written first, so
/// that a plan whose materialization stopped before its contract is still found), or the
/// contract draft `dwp new --generation v7` wrote. Detected by its artifacts, never by a
/// version string.
pub fn is_record_plan(dir: &Path) -> bool {
    let present = |name: &str| !store::is_absent(&dir.join(name));
    if present(CONTRACT) || present(CHAIN) || present(DRAFT) {
        return true;
    }
    let Ok(bytes) = store::read_artifact(&dir.join(MANIFEST), dir) else {
        return false;
    };
    // A lenient read: detection must not depend on the manifest being strictly valid.
    let Ok(manifest) = serde_json::from_slice::<Value>(&bytes) else {
        return false;
    };
    manifest.get("contract").is_some_and(Value::is_object)
}

/// Why a JSON document of the plan could not be taken.
#[derive(Debug)]
pub enum DocProblem {
    Unreadable(ReadFailure),
    NotJson(JsonError),
}

/// One JSON document of the plan: its name inside the plan folder, and its value or why not.
/// Its bytes are read with the plan; they are parsed when first asked for, so that a large
/// contract is parsed on the core that judges it.
#[derive(Debug)]
pub struct Doc {
    /// The path inside the plan folder (`contracts/contract.r2.json`).
    pub name: String,
    bytes: Vec<u8>,
    read: OnceLock<Result<Value, DocProblem>>,
}

impl Doc {
    fn load(dir: &Path, name: &str) -> Doc {
        let (bytes, read) = match store::read_artifact(&dir.join(name), dir) {
            Ok(bytes) => (bytes, OnceLock::new()),
            Err(failure) => (
                Vec::new(),
                OnceLock::from(Err(DocProblem::Unreadable(failure))),
            ),
        };
        Doc {
            name: name.to_owned(),
            bytes,
            read,
        }
    }

    /// Its value, or why it has none.
    pub fn read(&self) -> &Result<Value, DocProblem> {
        self.read
            .get_or_init(|| parse_strict(&self.bytes).map_err(DocProblem::NotJson))
    }

    pub fn value(&self) -> Option<&Value> {
        self.read().as_ref().ok()
    }

    /// The bytes read, when they are a JSON document (an amendment copies `contract.json`'s
    /// bytes as they are).
    pub fn bytes(&self) -> Option<&[u8]> {
        self.value().map(|_| self.bytes.as_slice())
    }
}

/// A top-level markdown file: its name and its bytes, or why they could not be read.
pub type MarkdownFile = (String, Result<Vec<u8>, ReadFailure>);

/// A record plan as read.
#[derive(Debug)]
pub struct RecordPlan {
    pub dir: PathBuf,
    /// `manifest.json`, when something stands at that name.
    pub manifest: Option<Doc>,
    /// `contract.json`, when something stands at that name.
    pub first_contract: Option<Doc>,
    /// `contracts/*.json` (hidden pending drafts are not `*.json` names and stay out), by name.
    pub chain: Vec<Doc>,
    /// `contracts/` stands but cannot be listed.
    pub chain_unlisted: Option<String>,
    /// The journal's files (archives by name, then the live file), framed by
    /// [`RecordPlan::journal`].
    pub journal_files: Vec<Segment>,
    /// `state.json`'s bytes, when something stands at that name.
    pub snapshot: Option<Result<Vec<u8>, ReadFailure>>,
    /// The plan's top-level `*.md` files, sorted by name.
    pub markdown_names: Vec<String>,
    /// Their bytes, read when first asked for ([`RecordPlan::markdown`]).
    markdown: OnceLock<Vec<MarkdownFile>>,
    /// Why the plan folder itself could not be listed: nothing of it was read.
    pub unlisted: Option<String>,
    /// A contract draft `dwp new --generation v7` wrote (`contract.draft.json`) stands in the
    /// folder, not yet stamped by `dwp init --contract`.
    pub draft: bool,
}

impl RecordPlan {
    /// Read the record plan at `dir`: every record file, once.
    pub fn load(dir: &Path) -> RecordPlan {
        let listing = match store::list_entries(dir, dir) {
            Ok(listing) => listing,
            Err(e) => return RecordPlan::unlisted(dir, e.to_string()),
        };
        let stands = |name: &str| listing.iter().any(|(n, _)| n == name);
        let (chain, chain_unlisted) = if stands(CHAIN) {
            load_chain(dir)
        } else {
            (Vec::new(), None)
        };
        let archives: Vec<String> = listing
            .iter()
            .filter(|(name, _)| journal::archive_range(name).is_some())
            .map(|(name, _)| name.clone())
            .collect();
        let markdown_names = markdown_names(&listing);
        RecordPlan {
            dir: dir.to_path_buf(),
            manifest: stands(MANIFEST).then(|| Doc::load(dir, MANIFEST)),
            first_contract: stands(CONTRACT).then(|| Doc::load(dir, CONTRACT)),
            chain,
            chain_unlisted,
            journal_files: crate::profile::time("read journal", || {
                journal::read_segments(dir, &archives, stands(JOURNAL))
            }),
            snapshot: stands(SNAPSHOT).then(|| store::read_artifact(&dir.join(SNAPSHOT), dir)),
            markdown_names,
            markdown: OnceLock::new(),
            unlisted: None,
            draft: stands(DRAFT),
        }
    }

    /// A plan of no file, when its folder cannot be listed.
    pub fn unlisted(dir: &Path, why: String) -> RecordPlan {
        RecordPlan {
            dir: dir.to_path_buf(),
            manifest: None,
            first_contract: None,
            chain: Vec::new(),
            chain_unlisted: None,
            journal_files: Vec::new(),
            snapshot: None,
            markdown_names: Vec::new(),
            markdown: OnceLock::new(),
            unlisted: Some(why),
            draft: false,
        }
    }

    /// The top-level markdown files with their bytes, sorted by name (read on first call).
    pub fn markdown(&self) -> &[MarkdownFile] {
        self.markdown.get_or_init(|| {
            let _stage = crate::profile::stage("read markdown");
            let names = self.markdown_names.iter().cloned();
            names
                .zip(read_files(&self.dir, &self.markdown_names))
                .collect()
        })
    }

    /// Add `bytes`, appended by this process's writer, to the live journal as read: `false`
    /// (nothing done) when the live file was not read whole at loading.
    pub fn extend_live(&mut self, bytes: &[u8]) -> bool {
        let live = self.journal_files.iter_mut().find(|s| s.range.is_none());
        match live.map(|s| &mut s.read) {
            Some(Ok(read)) => {
                read.extend_from_slice(bytes);
                true
            }
            _ => false,
        }
    }

    /// The journal's events, read from its files.
    pub fn journal<'a>(&'a self, arena: &'a bumpalo::Bump) -> Journal<'a> {
        crate::profile::time("frame journal", || {
            Journal::frame(&self.journal_files, arena, None)
        })
    }

    /// [`RecordPlan::journal`], a large file's second half read on another core into `helper`.
    pub fn journal_on_two_cores<'a>(
        &'a self,
        arena: &'a bumpalo::Bump,
        helper: &'a mut bumpalo::Bump,
    ) -> Journal<'a> {
        crate::profile::time("frame journal", || {
            Journal::frame(&self.journal_files, arena, Some(helper))
        })
    }

    /// About how many bytes of files the plan was read from: its journal, contracts, manifest
    /// and snapshot.
    pub fn size(&self) -> usize {
        let docs = self
            .manifest
            .iter()
            .chain(&self.first_contract)
            .chain(&self.chain);
        let snapshot = self.snapshot.as_ref().and_then(|s| s.as_ref().ok());
        self.journal_len()
            + docs.map(|d| d.bytes.len()).sum::<usize>()
            + snapshot.map_or(0, Vec::len)
    }

    /// How many bytes of journal were read.
    pub fn journal_len(&self) -> usize {
        let files = self.journal_files.iter();
        files
            .filter_map(|s| s.read.as_ref().ok())
            .map(Vec::len)
            .sum()
    }

    /// The folder's own name (`PLAN_x`).
    pub fn folder_name(&self) -> Option<String> {
        crate::plan::PlanPaths::new(&self.dir).folder_name()
    }

    /// Every contract file: `contract.json` first, then the chain by name.
    pub fn contract_files(&self) -> impl Iterator<Item = &Doc> {
        self.first_contract.iter().chain(self.chain.iter())
    }

    /// The live contract: the chain file with the highest integer `revision` (the first of
    /// equals, by name), else `contract.json`. `None` when neither can be read as an object.
    pub fn live_contract(&self) -> Option<&Doc> {
        let mut best: Option<(&Doc, i64)> = None;
        for doc in &self.chain {
            let Some(revision) = doc.value().and_then(|v| v.get("revision")).and_then(as_int)
            else {
                continue;
            };
            if best.is_none_or(|(_, top)| revision > top) {
                best = Some((doc, revision));
            }
        }
        match best {
            Some((doc, _)) => Some(doc),
            None => self.first_contract.as_ref(),
        }
    }

    /// The bytes of each of `paths` (relative to the plan folder, as an `evidence_path` is
    /// written), read beneath the plan folder: a path leaving it is refused as an escape.
    pub fn read_logs(&self, paths: &[String]) -> Vec<Result<Vec<u8>, ReadFailure>> {
        read_files(&self.dir, paths)
    }
}

/// The bytes of each of `names` (relative to `dir`), through one handle on the folder; when the
/// folder itself cannot be opened, each read says why on its own.
fn read_files(dir: &Path, names: &[String]) -> Vec<Result<Vec<u8>, ReadFailure>> {
    store::read_artifacts(dir, names).unwrap_or_else(|_| {
        let each = names.iter();
        each.map(|name| store::read_artifact(&dir.join(name), dir))
            .collect()
    })
}

/// An integer JSON value that is no bool (the public tooling's `type(x) is int`).
pub fn as_int(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) if !n.is_f64() => n.as_i64(),
        _ => None,
    }
}

/// An integer of an event that is no bool nor a float ([`as_int`] of a [`Json`]).
pub fn json_int(value: &Json) -> Option<i64> {
    match value {
        Json::Number(_) if !value.is_f64() => value.as_i64(),
        _ => None,
    }
}

/// The plan's top-level markdown files in a listing of its folder, by name: what an approval
/// digests.
fn markdown_names(listing: &[(String, Entry)]) -> Vec<String> {
    let files = listing.iter();
    files
        .filter(|(name, kind)| name.ends_with(".md") && *kind != Entry::Directory)
        .map(|(name, _)| name.clone())
        .collect()
}

/// The top-level markdown of the folder `dir`, what an approval digests (rule 20), with its
/// bytes, sorted by name; none when the folder cannot be listed. Nothing else of it is read.
pub fn read_markdown(dir: &Path) -> Vec<MarkdownFile> {
    let names = store::list_entries(dir, dir)
        .map(|listing| markdown_names(&listing))
        .unwrap_or_default();
    let read = read_files(dir, &names);
    names.into_iter().zip(read).collect()
}

fn load_chain(dir: &Path) -> (Vec<Doc>, Option<String>) {
    let folder = dir.join(CHAIN);
    match store::list_entries(&folder, dir) {
        Ok(entries) => {
            let docs = entries
                .into_iter()
                .filter(|(name, _)| name.ends_with(".json"))
                .map(|(name, _)| Doc::load(dir, &format!("{CHAIN}/{name}")))
                .collect();
            (docs, None)
        }
        Err(e) => (Vec::new(), Some(e.to_string())),
    }
}
