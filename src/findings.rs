//! Findings: what `validate` (and later `verify`, `reconcile`, `finalize`) report about a plan.
//!
//! Every finding carries a stable code (`DWP###`), a severity, the file, a JSON path or line
//! where known, the task where known, a message and a hint. Codes are never renumbered; they are
//! documented, with the rule each enforces, in `docs/CONFORMANCE.md`.

use serde::Serialize;

macro_rules! codes {
    ($($variant:ident = $number:literal, $summary:literal;)+) => {
        /// The stable finding codes.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $($variant),+
        }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$variant),+];

            pub fn number(self) -> u16 {
                match self { $(Code::$variant => $number),+ }
            }

            /// The code's position in [`Code::ALL`] (declaration order).
            pub fn index(self) -> usize {
                self as usize
            }

            /// One line saying what the code means.
            pub fn summary(self) -> &'static str {
                match self { $(Code::$variant => $summary),+ }
            }
        }
    };
}

codes! {
    Unreadable = 1, "the file cannot be read: missing, not a regular file, a symlink leaving the plan folder, or too large";
    NotJson = 2, "not exactly one strict JSON document: syntax, byte order mark, invalid UTF-8, trailing data or a duplicate key";
    UnknownSchema = 3, "`schema` is missing, not a dwp-known plan schema URL, or names the other kind of document";
    NewerSpec = 4, "the document is from a newer schema generation than this dwp knows: no claim is made";
    SchemaViolation = 10, "the document does not match its JSON Schema";
    Unrepresentable = 11, "a value the schema accepts but dwp cannot hold exactly (an integer beyond 64 bits)";
    TaskIds = 20, "task ids are not 1..N in order";
    TaskCount = 21, "`task_count` differs from the number of task entries";
    CompletedCount = 22, "`completed_count` differs from the number of completed tasks";
    DuplicateLocator = 23, "two tasks share a locator";
    LocatorId = 24, "a locator does not agree with its task id (`#task-N` / `N.task_slug.md`)";
    LocatorFormat = 25, "a locator kind does not agree with `format` (lite → inline, full → file)";
    StatusNotDerived = 26, "plan `status` is not the one derived from the tasks and the blocker";
    BlockerTask = 27, "the active blocker does not name a blocked task";
    CheckpointTask = 28, "the checkpoint names a task that does not exist";
    TerminalCheckpoint = 29, "a completed plan's checkpoint is not `{task: last id, step: \"done\"}`";
    PlanIdentity = 30, "the folder name, manifest `name` and state `plan` disagree";
    GenerationPair = 31, "manifest and state are of different schema generations";
    Timestamp = 32, "a date-time field is not RFC 3339";
    PromotionState = 33, "`promotion` and `materialization` disagree (a promotion object exactly while promoting)";
    FormatDemoted = 34, "the state is lite but the manifest was created full: plans promote lite to full, never back";
    CompletedWithoutTime = 35, "a completed task has no `completed_at`";
    TaskOrder = 36, "a task is in progress, blocked or completed while an earlier task is neither completed nor skipped (tasks run in order)";
    ObservedLogGone = 37, "a gate observed by dwp whose log is gone: missing, replaced by a symlink, or outside the plan folder";
    OrphanGateLog = 38, "a log under analysis_results/gates/ that no gate record points at: a dwp run stopped before recording it (advisory)";
    StateAhead = 40, "state ahead: state.json says completed, the README box is unchecked (the state is stale)";
    MarkdownAhead = 41, "markdown ahead: the README box is checked, state.json does not say completed";
    TitleDrift = 42, "a task's title differs between the README index and state.json";
    MissingInState = 43, "a task of the README index has no entry in state.json";
    MissingInMarkdown = 44, "a task of state.json is missing from the README index";
    OrderDrift = 45, "the README index does not list tasks 1..N in order";
    PlanStatusCount = 46, "the README has no `Plan Status: X/N` line, or it disagrees with the boxes";
    CompletedCountDrift = 47, "`completed_count` disagrees with the checked README boxes";
    OddMarker = 48, "a task checkbox uses a marker other than `[ ]`, `[x]`, `[X]` (read as not done)";
    UnreadableIndexLine = 49, "the README's task list cannot be read whole: an item naming no task number, a task without a checkbox, or no task list at all";
    MissingPlanFile = 50, "README.md, PROGRESS.md, PROMPTS.md or analysis_results/ is missing";
    NotMaterialized = 51, "materialization is not ready, or a promotion is unresolved";
    NewerStandard = 52, "the declared standard is newer than this dwp knows (or unreadable): no claim is made";
    MissingSection = 53, "the README has no Goal or no Context";
    TaskFileInventory = 54, "Full task files disagree with the state inventory or the README links";
    LocatorEscapes = 55, "a task file is a symlink leaving the plan folder";
    TaskSection = 57, "a task record lacks a required section, or it is empty";
    FinalReview = 58, "the Final Review is not the last task, or its record does not name its security, final-state and skills parts";
    NotAStandard = 59, "the declared standard is not a DWP standard (2.x and 4.x historical, 5.x current; there is no 1.x or 3.x)";
    LiteAnchor = 56, "Lite anchors are duplicated, or do not match their task headings or the index links";
    FailingGate = 60, "a completed task's latest gate record fails, has no exit code 0, or no evidence";
    InvalidatedEvidence = 61, "a completed task relies on evidence invalidated by refine";
    NeverRan = 62, "a passing gate record whose own evidence admits the check never ran";
    ZeroSelection = 63, "a passing gate record whose evidence shows the check selected nothing";
    LogPointer = 64, "a gate's `log=` pointer leaves the plan folder or names a missing file";
    LogStillPending = 65, "a completed task whose task log still reads `Status: pending`";
    CompletedWithoutGates = 66, "a completed task without any gate record";
    TimestampOrder = 67, "timestamps out of order: completed before started, after `updated_at`, or in the future";
    GateLog = 68, "a gate observed by dwp whose log does not back it: edited after the run, or another command, ending or summary";
    AssertedGate = 69, "a completed task's gate was asserted, not observed by dwp (only with --strict-evidence or the Gate Evidence plan variable)";
    AmendmentFields = 70, "an amendment block lacks a field the spec requires";
    AmendmentAuthority = 71, "an amendment's authority is not user, developer or evidence";
    AmendmentOrder = 72, "amendments are not numbered 1..n in order, or their dates go backwards or are not dates";
    DeferredDestination = 73, "a deferred requirement names no existing destination task";
    SkippedWithoutAuthority = 74, "a skipped task has no amendment with user authority removing it from scope";
    UnexecutedScenario = 75, "a passing gate record stands for a scenario an amendment records as unexecuted";
    InlineLeftover = 76, "a Full task still has an inline `## Task N … {#task-N}` section in the README: its task file is the record, the section is not judged (advisory)";
    PlanStatusConflict = 77, "the README has two `Plan Status:` lines that disagree";
    NoProgressCount = 78, "a legacy plan's README records no progress count: no `Plan Status: X/N` line and none in its Plan Status / Notes section (advisory)";
    PublicationInProgress = 80, "`.finalizing.json` is present: an interrupted publication awaits recovery";
    MissingReceipt = 81, "a completed v2/v5 plan has no analysis_results/FINALIZATION.json";
    ReceiptMismatch = 82, "the receipt's hashes no longer match the files (an artifact changed after publication)";
    SecurityReview = 83, "a completed plan lacks analysis_results/SECURITY_REVIEW.md, or it records an open critical finding";
    MalformedReceipt = 84, "analysis_results/FINALIZATION.json is not a receipt (JSON or schema)";
    UnfilledLog = 85, "a completed plan's task log has no filled `Skills disposition:` or `Documentation decision:` line";
    NotComplete = 86, "a publication candidate with a task that is not completed";
    InterruptedWrite = 87, "`.dwp-intent.json` is present: a multi-file write was interrupted, and the next writer completes it";
    DeadLock = 90, "the writer lock is held by a process that is gone (advisory)";
    ApprovalPending = 91, "the plan is not approved (advisory)";
    ActiveBlocker = 92, "the plan is blocked: the blocker's task, reason and needs (advisory)";
    NoStateLayer = 93, "the plan carries no state layer (manifest.json, state.json): advisory in a git work tree, an error outside one";
    IndexInCode = 94, "the task list is indented four spaces, which renders as code: dwp reads it as markdown (advisory)";
    UnmetContract = 97, "a completed task whose file contract the Stop hook last found unmet (ledger/task-N.check.json)";
    ApprovalDrift = 39, "the README's Approval row and state.json's `approval` disagree";
    RecordContractMissing = 100, "a record plan (v6/v7) without a contract: its manifest points at a contract that is not there (rule 3)";
    ContractId = 101, "a contract file's stamped `contract_id` is not the sha256 of its canonical bytes (rule 1)";
    ContractRules = 102, "the live contract breaks a rule its schema cannot say: unique ids, a prerequisite DAG, declared criteria, disjoint permissions, limits, closable criteria (rules 4, 5, 7, 8)";
    RevisionChain = 103, "the contract revision chain is broken: not contiguous, a wrong parent, a revision changing nothing, or the plan or generation changed (rule 2)";
    ManifestPairing = 104, "manifest.json does not pair with the live contract: an id that is no revision of it, another generation, or another plan (rules 16, 26, 29)";
    TornJournal = 105, "the journal has a line that is not UTF-8 JSON (a torn append, reported and never repaired), or an archive segment is corrupt";
    JournalFraming = 106, "the journal's last event lacks its final newline: complete, but unframed (advisory)";
    InvalidEvent = 107, "a journal event is not valid for its type and generation (rules 15, 29)";
    AgentObserved = 108, "an event claims `observed` trust from an actor that cannot execute a check (rule 11)";
    SeqOrder = 109, "journal positions go backwards: `seq` is not strictly increasing, or the live journal does not continue above its archives (rule 10)";
    UndeclaredGate = 110, "a gate run for a task or criterion the live contract does not declare";
    NoApproval = 111, "no approval event cites the live contract id (rule 19)";
    ApprovalDigest = 112, "the plan's markdown changed since the approval of the live contract (its `plan_digest`) (advisory)";
    SnapshotStale = 113, "state.json is missing or is not the snapshot the journal projects (advisory)";
    GateLogMissing = 114, "an observed gate run's log is missing, unreadable or outside the plan folder";
    GateLogExit = 115, "an observed gate run's log does not end with the exit code the journal records";
    StartedEarly = 116, "a task started before its prerequisites were completed";
    ForeignEvidence = 117, "a gate run cites a log another task's gate produced";
    OpenDelegation = 118, "a v7 delegation is still open: launched, never collected or cancelled (advisory)";
}

impl Code {
    /// `DWP001` form.
    pub fn id(self) -> String {
        format!("DWP{:03}", self.number())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.id())
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DWP{:03}", self.number())
    }
}

/// How much a finding weighs in the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The plan is not valid / not conformant.
    Error,
    /// Could not be checked: no claim either way.
    Unverified,
    /// Worth a look; fails only under `--strict`.
    Advisory,
}

/// One reported problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub code: Code,
    pub severity: Severity,
    /// The file as the user named it (plan folder joined with the artifact name), relative to
    /// the current directory when under it (`cli::from_here`).
    pub file: String,
    /// JSON path (`$.tasks[2].status`) for JSON artifacts.
    pub path: Option<String>,
    /// 1-based line (markdown artifacts; `verify` also places JSON paths).
    pub line: Option<usize>,
    pub task: Option<u64>,
    pub message: String,
    /// What to do next (every `verify` finding has one).
    pub hint: Option<String>,
}

impl Finding {
    pub fn error(code: Code, file: impl Into<String>, message: impl Into<String>) -> Finding {
        Finding {
            code,
            severity: Severity::Error,
            file: file.into(),
            path: None,
            line: None,
            task: None,
            message: message.into(),
            hint: None,
        }
    }

    pub fn at(mut self, path: impl Into<String>) -> Finding {
        self.path = Some(path.into());
        self
    }

    pub fn task(mut self, id: u64) -> Finding {
        self.task = Some(id);
        self
    }

    /// The 1-based line, where known.
    pub fn line(mut self, line: impl Into<Option<usize>>) -> Finding {
        self.line = line.into();
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Finding {
        self.hint = Some(hint.into());
        self
    }

    pub fn severity(mut self, severity: Severity) -> Finding {
        self.severity = severity;
        self
    }

    /// `file: $.path: message`, the human form.
    pub fn render(&self) -> String {
        let mut out = self.file.clone();
        if let Some(line) = self.line {
            out.push_str(&format!(":{line}"));
        }
        out.push_str(": ");
        if let Some(path) = &self.path {
            out.push_str(path);
            out.push_str(": ");
        }
        out.push_str(&self.message);
        out
    }
}

/// The verdict a list of findings gives: definite errors first, then anything unverified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Valid,
    Invalid,
    Unverified,
}

impl Verdict {
    pub fn of(findings: &[Finding]) -> Verdict {
        Verdict::weigh(findings, false)
    }

    /// The one folding of findings into a verdict: errors (and, with `strict`, advisories)
    /// first, then anything that could not be checked.
    pub fn weigh(findings: &[Finding], strict: bool) -> Verdict {
        let counts = |f: &Finding| {
            f.severity == Severity::Error || (strict && f.severity == Severity::Advisory)
        };
        if findings.iter().any(counts) {
            Verdict::Invalid
        } else if findings.iter().any(|f| f.severity == Severity::Unverified) {
            Verdict::Unverified
        } else {
            Verdict::Valid
        }
    }

    /// The worst of several verdicts: any invalid one, else any unverified one, else valid.
    pub fn worst(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
        verdicts
            .into_iter()
            .max_by_key(|v| match v {
                Verdict::Valid => 0,
                Verdict::Unverified => 1,
                Verdict::Invalid => 2,
            })
            .unwrap_or(Verdict::Valid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_render_with_three_digits() {
        let mut numbers: Vec<u16> = Code::ALL.iter().map(|c| c.number()).collect();
        numbers.sort_unstable();
        numbers.dedup();
        assert_eq!(numbers.len(), Code::ALL.len());
        assert_eq!(Code::Unreadable.id(), "DWP001");
        assert_eq!(Code::Timestamp.to_string(), "DWP032");
    }

    #[test]
    fn a_codes_index_is_its_position_in_all_the_sarif_rule_index() {
        for (position, code) in Code::ALL.iter().enumerate() {
            assert_eq!(code.index(), position, "{code:?}");
        }
    }

    #[test]
    fn an_error_outweighs_an_unverified_check() {
        let unverified = Finding::error(Code::NewerSpec, "f", "m").severity(Severity::Unverified);
        let error = Finding::error(Code::TaskIds, "f", "m");
        assert_eq!(Verdict::of(&[]), Verdict::Valid);
        assert_eq!(
            Verdict::of(std::slice::from_ref(&unverified)),
            Verdict::Unverified
        );
        assert_eq!(Verdict::of(&[unverified, error]), Verdict::Invalid);
    }
}
