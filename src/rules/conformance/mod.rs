//! The conformance rules of `dwp verify` (and of `dwp finalize`'s candidate): whether a plan's
//! records tell the truth, mechanically, wherever the records allow it. They never execute a
//! stored gate command and never change a file.
//!
//! [`plan_rules`] composes the rules other modules own, structure (`validate`), desync
//! (`crate::rules::desync::compare`), evidence truth (`evidence`), with its own: the plan files, the
//! declared standard, Goal and Context, timestamp order, the publication marker, a completed
//! plan's security review and publication receipt, a dead writer's lock and a pending approval,
//! the Full task-file inventory and Lite anchors, and amendments; the task-by-task markdown
//! rules (sections, log status, Final Review) live in [`tasks`]. A plan without a state layer
//! is judged too, on its markdown alone ([`markdown_only_rules`]).

mod tasks;

pub use tasks::Era;

use crate::findings::{Code, Finding, Severity};
use crate::plan::markdown::is_blank;
use crate::plan::model::{Approval, Generation, Materialization, SchemaId, State, TaskStatus};
use crate::plan::{LoadedPlan, PlanPaths};
use crate::rules::evidence::{self, GateProblem};
use std::path::Path;

/// The newest DWP standard (major version) this dwp knows.
pub const KNOWN_STANDARD_MAJOR: u64 = 5;

/// The newest DWP standard this dwp knows, in full: the one `dwp new` writes plans under.
pub const NEWEST_STANDARD: &str = "5.0.0";

/// The DWP standard's series: 2.x and 4.x historical, 5.x current. There is no 1.x or 3.x
/// standard (the public reference checker's `SPEC_SERIES`).
pub const DWP_SERIES: [u64; 3] = [2, 4, 5];

/// Whether `version` (X.Y.Z) is of a DWP standard series.
pub fn is_dwp_standard(version: &str) -> bool {
    tasks::version(version).is_some_and(|(major, _, _)| DWP_SERIES.contains(&major))
}

/// A completed task whose evidence does not back it is reworked the way the plan-state spec
/// reopens work: an amendment in its log (only the user can word its criterion, observation and
/// reason: TEXT), then the reopening update; `dwp next` then prints the `dwp run` line that
/// records its gate as observed evidence, and the completion.
const REWORK_HINT: &str = "its completion needs a passing run: reopen it through an amendment, `dwp amend PLAN --task N --original TEXT --observed TEXT --disposition failed-gate --reason TEXT --authority evidence --affected N`, then `dwp update PLAN --task N --status in_progress --reopen-reason TEXT`; `dwp next PLAN` prints the run that records its gate";

/// The command (or edit) that fixes a finding of this code, for findings that carry no more
/// specific hint: every verify finding names its next step. `PLAN` and `--task N` stand for the
/// finding's plan and task ([`add_fix_hints`] writes them in); a command in backticks is one
/// dwp accepts as written (`tests/interface/hints.rs` parses every one the fixtures print).
pub fn fix_hint(code: Code) -> &'static str {
    use Code::*;
    match code {
        Unreadable | NotJson | UnknownSchema | SchemaViolation | Unrepresentable => {
            "restore the file from the plan's history; `dwp validate PLAN` shows every problem"
        }
        NewerSpec | NewerStandard => "upgrade dwp to a version that knows this standard",
        RecordContractMissing => {
            "restore contract.json from the plan's export or history: a record plan's contract is written once, right after its manifest; `dwp validate PLAN` shows every problem"
        }
        ContractId | RevisionChain | ManifestPairing => {
            "manifest and contracts are written once, never edited: restore the file from the plan's export or history; a change of contract is a new revision under contracts/ with its own approval"
        }
        ContractRules => {
            "correct the contract by amendment (a new revision under contracts/, approved); `dwp validate PLAN` lists every rule it breaks"
        }
        TornJournal => {
            "a torn line of journal.ndjson is a write cut short: `dwp reconcile PLAN --write` cuts it and records a journal_repair event (so does the plan's next journal write); a corrupt archive (journal-archive-*.ndjson) is never repaired: restore it from the plan's export"
        }
        JournalFraming => {
            "nothing is lost: `dwp reconcile PLAN --write` restores the newline and records a journal_repair event (so does the plan's next journal write)"
        }
        InvalidEvent | SeqOrder => {
            "the journal is append-only: if it was edited, restore it from the plan's export or history; a correction is a new event, never an edit"
        }
        AgentObserved => {
            "observed evidence comes only from a run the plan's gate runner executed: run the gate again through it; an agent's own report is recorded as asserted"
        }
        UndeclaredGate => {
            "a gate run proves a criterion its task declares: run a declared gate, or amend the contract to declare this one"
        }
        NoApproval => {
            "record the approval of the live contract before work starts: `dwp approve PLAN --by NAME --note FILE`, by the person who approves it"
        }
        ApprovalDigest => {
            "the markdown changed after the approval: if the change is substantive, have the plan approved again (`dwp approve PLAN --by NAME --note FILE`)"
        }
        SnapshotStale => {
            "state.json is derived from the journal: `dwp reconcile PLAN --write` projects it again"
        }
        GateLogMissing | GateLogExit => {
            "a gate log is never edited or moved: restore it from the plan's export or history, or run the gate again on the task at work"
        }
        StartedEarly => {
            "a task starts once its prerequisites are completed: `dwp next PLAN` lists the tasks ready now"
        }
        ForeignEvidence => {
            "each task's gates prove that task: run the gate for this task so that its own log is recorded"
        }
        OpenDelegation => "collect or cancel the delegation before the task completes",
        TaskIds | TaskCount | CompletedCount | DuplicateLocator | LocatorId | LocatorFormat
        | StatusNotDerived | BlockerTask | CheckpointTask | TerminalCheckpoint
        | CompletedWithoutTime | Timestamp => {
            "regenerate state.json from the markdown with `dwp reconcile PLAN --write`"
        }
        PlanIdentity => {
            "a plan's name is written once (manifest `name`, state `plan`): give the folder its name back, or restore the file that changed from the plan's history"
        }
        GenerationPair | FormatDemoted => {
            "restore the document that changed from the plan's history (a v1 pair converts with `dwp migrate PLAN --to v5`)"
        }
        PromotionState | NotMaterialized => {
            "finish (or undo) the materialization or promotion the plan's PROGRESS.md records; `dwp init PLAN` materializes only a plan with no manifest.json yet"
        }
        StateAhead | MarkdownAhead | TitleDrift | MissingInState | MissingInMarkdown
        | CompletedCountDrift | ApprovalDrift => {
            "the markdown wins: `dwp reconcile PLAN --write` regenerates state.json from it"
        }
        OrderDrift => crate::rules::desync::ORDER_HINT,
        TaskOrder => {
            "tasks run in order: complete the earlier task first, or put the later one back with `dwp update PLAN --task N --status pending`"
        }
        PlanStatusCount | OddMarker | PlanStatusConflict | NoProgressCount => {
            "edit the README (`[ ]`/`[x]` markers, `Plan Status: X/N`), then `dwp verify PLAN` again"
        }
        MissingPlanFile | MissingSection | TaskSection | FinalReview => {
            "author the missing part in the markdown, then `dwp verify PLAN` again"
        }
        InlineLeftover => {
            "the task file is the record: move anything the README's section holds that the file lacks into the file, delete the section, then `dwp verify PLAN` again"
        }
        TaskFileInventory | LocatorEscapes | LiteAnchor => {
            "make the README links and task files agree (and state.json's locators, where the plan has one), then `dwp verify PLAN` again"
        }
        FailingGate
        | LogPointer
        | CompletedWithoutGates
        | NeverRan
        | ZeroSelection
        | InvalidatedEvidence
        | UnexecutedScenario => REWORK_HINT,
        LogStillPending => "fill the task log's Status line from the recorded evidence",
        TimestampOrder => {
            "set the clock right, then record the transition again with dwp update (state.json keeps the times it is given)"
        }
        AmendmentFields
        | AmendmentAuthority
        | AmendmentOrder
        | DeferredDestination
        | SkippedWithoutAuthority => "record amendments with dwp amend, never by hand",
        PublicationInProgress => "inspect it, then `dwp finalize PLAN --recover`",
        InterruptedWrite => "the next writer completes it: `dwp reconcile PLAN --write` does",
        MissingReceipt | ReceiptMismatch | MalformedReceipt => {
            "publish (or republish) with `dwp finalize PLAN`; `dwp finalize PLAN --check` lists changes"
        }
        SecurityReview => "update analysis_results/SECURITY_REVIEW.md, then `dwp finalize PLAN`",
        UnfilledLog => "fill the task log before publication, then `dwp finalize PLAN`",
        NotComplete => "complete every task with dwp update before publishing",
        DeadLock => "inspect it with `dwp lock status PLAN`, then `dwp lock recover PLAN`",
        ApprovalPending => {
            "record the user's approval before work starts: `dwp approve PLAN --by NAME`"
        }
        ActiveBlocker => {
            "provide what it needs, then `dwp update PLAN --task N --resolve-blocker --status in_progress`"
        }
        UnreadableIndexLine => crate::plan::records::UNREADABLE_ITEM_HINT,
        NotAStandard => {
            "correct the README's `**Standard:** DWP spec X.Y.Z` line (a 2.x, 4.x or 5.x standard)"
        }
        NoStateLayer => "materialize the state layer with `dwp init PLAN`",
        IndexInCode => "remove the four-space indent of the task list so it renders as a list",
        UnmetContract => {
            "`dwp contract check PLAN --task N` lists what is unmet; make those file changes, then stop again: the Stop hook records the contract met"
        }
        GateLog => {
            "a log dwp kept is never edited, and every record is judged against its log: restore its bytes from the plan's history; on a task at work, a new run through dwp (dwp run PLAN --task N -- and the gate's command) records clean evidence"
        }
        ObservedLogGone => {
            "a log dwp kept is never moved or removed, and every record is judged against its log: restore it from the plan's history; on a task at work, a new run through dwp (dwp run PLAN --task N -- and the gate's command) records clean evidence"
        }
        OrphanGateLog => {
            "no record names this log: remove it, or run the gate again through dwp on the task at work to record a run (dwp run with --task and the gate's command)"
        }
        AssertedGate => {
            "observed evidence is required: reopen the task through an amendment on the user's word (dwp amend with --invalidate and the gate's command), then record the gate as dwp observes it (dwp run with --task and that command)"
        }
    }
}

/// Every rule beyond `dwp validate`'s, judged against `state`: the plan's own (read from disk
/// by [`verify_plan`]) or, for `dwp finalize`, the candidate about to be published. A plan
/// without a state layer (neither JSON file) is judged on its markdown.
pub fn plan_rules(
    plan: &LoadedPlan,
    manifest_version: Option<&str>,
    state: Option<&State>,
) -> Vec<Finding> {
    let paths = &plan.paths;
    let mut findings = plan_files(plan);
    let markdown = match plan.markdown() {
        Ok(md) => Some(md),
        // A missing README is DWP050, the inventory's.
        Err(crate::store::ReadFailure::Missing) => None,
        Err(failure) => {
            // No markdown rule can be checked: an OS refusal makes no claim (UNVERIFIED); a
            // README that is not a readable UTF-8 file of the plan is an error. Never silence.
            let readme = paths.dir.join("README.md");
            findings.push(unreadable_file(
                &readme,
                "README.md",
                failure,
                "no markdown rule was checked",
            ));
            None
        }
    };
    let readme_standard = markdown.and_then(|m| m.readme.standard.as_ref());
    let declared = readme_standard
        .map(|s| s.version.as_str())
        .or(manifest_version);
    let era = Era::of(state, declared);
    if let Some(md) = markdown {
        findings.extend(readme_rules(paths, &md.readme, era));
        findings.extend(unreadable_records(md));
        findings.extend(superseded_sections(md));
    }
    findings.extend(standard_rule(paths, readme_standard, manifest_version));
    match (state, markdown) {
        (Some(state), Some(md)) => {
            let readme_approval = md.readme.approval();
            let _rules = crate::profile::stage("state rules");
            findings.extend(state_rules(plan, state, readme_approval));
            findings.extend(timestamp_order(paths, state, crate::clock::now()));
            findings.extend(task_order(paths, state, era));
            drop(_rules);
            let _desync = crate::profile::stage("desync");
            let readme = md.readme_path.display().to_string();
            // Every box checked and the state not completed: reconcile refuses to complete the
            // plan, since that is publication; finalize is the step that works from here.
            let all_checked = state.status != crate::plan::model::PlanStatus::Completed
                && !md.readme.index.is_empty()
                && md.readme.index.iter().all(|e| e.marker.is_done());
            findings.extend(
                crate::rules::desync::compare_in(md, state, era)
                    .iter()
                    .map(|d| {
                        let finding = d.finding(&readme);
                        match finding.code {
                            Code::MarkdownAhead | Code::CompletedCountDrift if all_checked => {
                                finding.hint(crate::rules::desync::ALL_CHECKED_HINT)
                            }
                            _ => finding,
                        }
                    }),
            );
            drop(_desync);
            findings.extend(crate::profile::time("evidence rules", || {
                evidence_rules(plan, state, era)
            }));
            findings.extend(observed_gate_rules(plan, state));
            findings.extend(unmet_contracts(plan, state));
            if requires_observed_evidence(&md.readme) {
                findings.extend(asserted_gates(paths, state));
            }
            findings.extend(crate::profile::time("inventory rules", || {
                inventory_rules(plan, state, md)
            }));
            let _tasks = crate::profile::stage("task rules");
            let views = tasks::views_from_state(state);
            findings.extend(task_rules(&views, md, era, readme_standard));
            findings.extend(unexecuted_scenarios(paths, state, md));
        }
        (Some(state), None) => {
            findings.extend(state_rules(plan, state, None));
            findings.extend(timestamp_order(paths, state, crate::clock::now()));
            findings.extend(task_order(paths, state, era));
            findings.extend(evidence_rules(plan, state, era));
            findings.extend(observed_gate_rules(plan, state));
            findings.extend(unmet_contracts(plan, state));
        }
        (None, Some(md)) if plan.has_no_state_layer() => {
            findings.extend(markdown_only_rules(plan, md, era));
        }
        (None, _) => {}
    }
    let _publication = crate::profile::stage("publication rules");
    findings.extend(publication_rules(plan));
    findings.extend(interrupted_write(plan));
    if let Some(state) = state.filter(|s| s.status == crate::plan::model::PlanStatus::Completed) {
        if let Some(md) = markdown {
            findings.extend(publication_logs(state, md, declared));
        }
        findings.extend(security_review(plan));
        findings.extend(receipt_rules(plan, state, declared));
    }
    findings
}

/// A plan file that is there but could not be read, as a finding: UNVERIFIED when the OS
/// refused the read (nothing can be claimed either way), an error otherwise (a symlink leaving
/// the plan, a special file, an oversized file, invalid UTF-8).
fn unreadable_file(
    path: &Path,
    name: &str,
    failure: &crate::store::ReadFailure,
    lost: &str,
) -> Finding {
    unreadable(
        path,
        format!("{failure}, so {lost}"),
        &format!("make {name} a readable UTF-8 regular file of the plan folder"),
        failure.is_unverifiable(),
    )
}

/// DWP001: `refused` (the OS refused the read) is UNVERIFIED, anything else an error; the hint
/// names the repair, then `dwp verify` again.
fn unreadable(path: &Path, message: String, repair: &str, refused: bool) -> Finding {
    let finding = Finding::error(Code::Unreadable, path.display().to_string(), message)
        .hint(format!("{repair}, then `dwp verify PLAN` again"));
    if refused {
        finding.severity(Severity::Unverified)
    } else {
        finding
    }
}

/// DWP055 when the task file at `path` (or a folder on its way) leads outside the plan folder.
fn escaping_symlink(path: &Path, place: crate::store::Place, task: u64) -> Option<Finding> {
    (place == crate::store::Place::Outside).then(|| {
        Finding::error(
            Code::LocatorEscapes,
            path.display().to_string(),
            format!("task {task}'s file is a symlink leaving the plan folder"),
        )
        .task(task)
    })
}

/// Task files the index names that are there but could not be read: none of their rules was
/// checked. The OS refusing the read makes no claim (UNVERIFIED); a task file that is not a
/// regular file, or is too large, is an error. A file that is not there is the inventory's
/// finding, and a symlink leaving the plan is DWP055's.
fn unreadable_records(md: &crate::plan::records::PlanMarkdown) -> Vec<Finding> {
    md.unreadable
        .iter()
        .filter(|u| {
            use crate::plan::records::UnreadableKind::{Invalid, Refused};
            matches!(u.kind, Invalid | Refused)
        })
        .map(|u| {
            unreadable(
                &u.path,
                format!(
                    "task {}'s file {}, so none of its rules was checked",
                    u.id, u.why
                ),
                "make it a readable UTF-8 regular file of the plan folder",
                u.kind == crate::plan::records::UnreadableKind::Refused,
            )
            .task(u.id)
        })
        .collect()
}

/// DWP076: a Full task whose README still holds its inline section (a Lite-to-Full
/// promotion's leftover). The file is judged; the section is reported,
/// since a reader of the README would take it for the record.
fn superseded_sections(md: &crate::plan::records::PlanMarkdown) -> Vec<Finding> {
    let readme = md.readme_path.display().to_string();
    md.superseded_sections
        .iter()
        .filter_map(|id| md.readme.inline_tasks.iter().find(|r| r.id == *id))
        .map(|section| {
            let file = md
                .readme
                .index
                .iter()
                .find(|e| e.id == section.id)
                .and_then(|e| md.task_file(e))
                .unwrap_or_else(|| "its task file".to_owned());
            Finding::error(
                Code::InlineLeftover,
                &readme,
                format!(
                    "task {id}'s record is its task file `{file}`, but the README still holds a `## Task {id}` section: dwp judges the file, never the section",
                    id = section.id
                ),
            )
            .task(section.id)
            .line(Some(section.line))
            .severity(Severity::Advisory)
        })
        .collect()
}

/// The task-by-task markdown rules every plan gets, with or without a state.
fn task_rules(
    views: &[tasks::TaskView],
    md: &crate::plan::records::PlanMarkdown,
    era: Era,
    standard: Option<&crate::plan::markdown::Standard>,
) -> Vec<Finding> {
    let mut findings = tasks::log_status_rule(views, md);
    findings.extend(amendment_rules(views, md));
    findings.extend(tasks::section_rules(views, md, era));
    findings.extend(tasks::final_review(views, md, era, standard));
    findings
}

/// A plan without a state layer, judged on its markdown (the plan-state spec: the layer is something a plan
/// MAY carry, REQUIRED in a workspace without git): the missing layer (an advisory in a git
/// work tree, an error outside one), the index (1..N, Plan Status, markers, unreadable items),
/// the task files it names, and every task-by-task rule with the boxes as the statuses.
pub fn markdown_only_rules(
    plan: &LoadedPlan,
    md: &crate::plan::records::PlanMarkdown,
    era: Era,
) -> Vec<Finding> {
    let dir = plan.dir().display().to_string();
    let mut no_layer = Finding::error(
        Code::NoStateLayer,
        &dir,
        "the plan has no state layer (manifest.json, state.json)",
    )
    .hint(materialize_hint(plan.dir()));
    if plan.in_git_work_tree() {
        no_layer = no_layer.severity(Severity::Advisory);
        no_layer
            .message
            .push_str(": optional in a git work tree, recommended for new plans");
    } else {
        no_layer
            .message
            .push_str(": REQUIRED outside a git work tree (state.json carries the recovery information the git log would)");
    }
    let readme = md.readme_path.display().to_string();
    let mut findings = vec![no_layer];
    findings.extend(
        crate::rules::desync::markdown_desync_in(md, era)
            .iter()
            .map(|d| d.finding(&readme)),
    );
    findings.extend(markdown_inventory(plan, md));
    let views = tasks::views_from_markdown(md);
    findings.extend(task_rules(&views, md, era, md.readme.standard.as_ref()));
    let (done, total) = md.readme.box_counts();
    if total > 0 && done == total {
        findings.extend(security_review(plan));
    }
    findings.extend(dead_lock(plan));
    findings
}

/// What verify hints, and init, for an index line linking another task's file.
const MISNUMBERED_HINT: &str = "number the README's task list and its task files 1..N in order (a file and its link renamed together), then `dwp verify PLAN` again";

/// A markdown-only plan's task files: each index item's file exists in the plan folder (Full),
/// every `N.task_*.md` of the folder is indexed; Lite: one `{#task-N}` section per task.
fn markdown_inventory(plan: &LoadedPlan, md: &crate::plan::records::PlanMarkdown) -> Vec<Finding> {
    let paths = &plan.paths;
    let readme = md.readme_path.display().to_string();
    let lite = !md.readme.inline_tasks.is_empty()
        && md
            .readme
            .index
            .iter()
            .all(|e| crate::plan::records::linked_file(&e.links).is_none());
    let mut findings = Vec::new();
    if lite {
        for entry in &md.readme.index {
            findings.extend(lite_anchor_problems(
                md,
                entry.id,
                &format!("#task-{}", entry.id),
                Some(entry),
            ));
        }
        return findings;
    }
    let mut named = std::collections::HashSet::new();
    for entry in &md.readme.index {
        let problem = match &md.task_file(entry) {
            None => Some(format!(
                "task {}'s line names no task file and the folder has none numbered {}",
                entry.id, entry.id
            )),
            Some(file) => {
                named.insert(file.clone());
                let path = paths.dir.join(file);
                let place = plan.place(&path);
                findings.extend(escaping_symlink(&path, place, entry.id));
                // A file that is there but cannot be read is `unreadable_records`' finding.
                let there = place != crate::store::Place::Missing;
                if there {
                    // The rule `dwp init` refuses the plan by.
                    findings.extend(crate::plan::records::misnumbered_file(entry, file).map(
                        |message| {
                            Finding::error(Code::TaskFileInventory, &readme, message)
                                .task(entry.id)
                                .line(entry.line)
                                .hint(MISNUMBERED_HINT)
                        },
                    ));
                    None
                } else {
                    Some(format!(
                        "task {}'s line links `{file}`, which is not a file of the plan",
                        entry.id
                    ))
                }
            }
        };
        if let Some(message) = problem {
            findings.push(
                Finding::error(Code::TaskFileInventory, &readme, message)
                    .task(entry.id)
                    .line(entry.line),
            );
        }
    }
    for name in &md.task_files {
        if !named.contains(name) {
            findings.push(Finding::error(
                Code::TaskFileInventory,
                paths.dir.join(name).display().to_string(),
                format!("`{name}` is a task file the README's task list does not name"),
            ));
        }
    }
    findings
}

/// Give every finding without a hint its code's (with the task filled in).
pub fn add_fix_hints(findings: &mut [Finding], plan_dir: &Path) {
    for finding in findings.iter_mut().filter(|f| f.hint.is_none()) {
        finding.hint = Some(fix_hint(finding.code).to_owned());
    }
    name_the_plan(findings, plan_dir);
}

/// While an interrupted multi-file write's record is there, the files disagree by design (a
/// half-done `dwp init` leaves PROGRESS.md without state.json, say), so the step every other
/// finding names waits for its completion: a `dwp init` there would refuse the files the record
/// is about to finish. The hint names the completion instead (a dead lock's and a publication
/// marker's own steps complete the record too, and stay).
pub fn defer_to_interrupted_write(plan: &LoadedPlan, findings: &mut [Finding]) {
    let record = plan.paths.dir.join(crate::store::intent::INTENT);
    if plan.place(&record) == crate::store::Place::Missing {
        return;
    }
    let own_step = |code| {
        matches!(
            code,
            Code::InterruptedWrite | Code::DeadLock | Code::PublicationInProgress
        )
    };
    for finding in findings.iter_mut().filter(|f| !own_step(f.code)) {
        finding.hint = Some(
            "an interrupted write is pending (`.dwp-intent.json`): complete it first with `dwp reconcile --write PLAN`, then look again"
                .to_owned(),
        );
    }
}

/// The one finding on a plan argument that names nothing: no folder, no file, not even a
/// dangling link, so no file of a plan is reported missing one by one.
pub fn no_such_plan(target: &Path) -> Finding {
    Finding::error(
        Code::Unreadable,
        target.display().to_string(),
        "no such plan folder or file",
    )
}

/// How a plan without a state layer gets one: `dwp init`, which takes the folder's name as the
/// plan's, so a folder whose name is not a plan name is renamed first.
fn materialize_hint(dir: &Path) -> String {
    let name = dir.file_name().map(|n| n.to_string_lossy());
    match name.is_some_and(|name| crate::plan::is_plan_name(&name)) {
        true => format!("materialize it with `dwp init {}`", crate::term::path_word(dir)),
        false => "rename the folder to a plan name (PLAN_ then 2 to 5 lower-case words joined by `_`), then run `dwp init` on it".to_owned(),
    }
}

/// Write the finding's plan and task into its hint, where it says `PLAN` and `--task N`, so the
/// command it names runs as printed.
pub fn name_the_plan(findings: &mut [Finding], plan_dir: &Path) {
    let plan = crate::term::path_word(plan_dir);
    let plan_word = regex::Regex::new(r"\bPLAN\b").expect("a fixed pattern");
    for finding in findings {
        let Some(hint) = finding.hint.take() else {
            continue;
        };
        let hint = match finding.task {
            Some(task) => hint
                .replace("--task N", &format!("--task {task}"))
                .replace("--affected N", &format!("--affected {task}"))
                .replace("--drop-task N", &format!("--drop-task {task}")),
            None => hint,
        };
        // NoExpand: a `$` in the folder's name is text, not a capture group reference.
        let named = plan_word.replace_all(&hint, regex::NoExpand(&plan));
        finding.hint = Some(named.into_owned());
    }
}

/// A published plan's task logs carry a filled `Skills disposition:`, and the Final Review's
/// a `Documentation decision:` (the plan-state spec's "Verified plan publication": "the finished task logs
/// (each carrying its Skills disposition and, in the Final Review, its Documentation
/// decision)"). That sentence is of the 5.0.0 standard: for a plan declaring an earlier one the
/// finding is an advisory.
fn publication_logs(
    state: &State,
    md: &crate::plan::records::PlanMarkdown,
    declared: Option<&str>,
) -> Vec<Finding> {
    let severity = if is_publication_era(state, declared) {
        Severity::Error
    } else {
        Severity::Advisory
    };
    let last = state.tasks.last().map(|t| t.id);
    let mut findings = Vec::new();
    for task in &state.tasks {
        let Some((path, record)) = md.records.get(&task.id) else {
            continue;
        };
        let Some(log) = &record.log else {
            continue; // no log at all is DWP057
        };
        let mut wanted = vec![("Skills disposition", &log.skills_disposition)];
        if Some(task.id) == last {
            wanted.push(("Documentation decision", &log.documentation_decision));
        }
        for (label, line) in wanted {
            if line.as_ref().is_none_or(|l| is_blank(&l.value)) {
                findings.push(
                    Finding::error(
                        Code::UnfilledLog,
                        path.display().to_string(),
                        format!("task {}'s log has no filled `{label}:` line", task.id),
                    )
                    .task(task.id)
                    .hint(format!(
                        "fill `{label}:` in task {}'s Completion & Log",
                        task.id
                    ))
                    .line(line.as_ref().map(|l| l.line).or(Some(log.line)))
                    .severity(severity),
                );
            }
        }
    }
    findings
}

/// Whether a plan is of the publication era (DWP spec 5.0.0, which introduced the finalizer and
/// its receipt): its declared standard is 5.x or later, or, declaring none, its state is v5.
fn is_publication_era(state: &State, declared: Option<&str>) -> bool {
    match declared.and_then(tasks::version) {
        Some((major, _, _)) => major >= 5,
        None => matches!(
            SchemaId::parse(&state.schema),
            SchemaId::Known(_, Generation::V5)
        ),
    }
}

fn plan_files(plan: &LoadedPlan) -> Vec<Finding> {
    use crate::store::{Place, ReadFailure};
    let paths = &plan.paths;
    let mut findings = Vec::new();
    let missing = |path: &Path, name: &str| {
        let finding = Finding::error(
            Code::MissingPlanFile,
            path.display().to_string(),
            format!("{name} is missing: every plan carries it"),
        );
        match name {
            "README.md" => finding.hint("restore the file from the plan's history"),
            _ => finding.hint(missing_file_hint(plan, path, name)),
        }
    };
    // The README is read whole by the markdown rules, which report what else is wrong with it.
    let readme = paths.dir.join("README.md");
    if plan.place(&readme) == Place::Missing {
        findings.push(missing(&readme, "README.md"));
    }
    for name in ["PROGRESS.md", "PROMPTS.md"] {
        let path = paths.dir.join(name);
        match plan.read_text(&path) {
            Ok(_) => {}
            Err(ReadFailure::Missing) => findings.push(missing(&path, name)),
            Err(failure) => {
                findings.push(unreadable_file(&path, name, &failure, "it was not checked"))
            }
        }
    }
    let results = paths.dir.join("analysis_results");
    match plan.place(&results) {
        Place::Missing => findings.push(missing_results(plan, &results)),
        Place::Outside => findings.push(unreadable(
            &results,
            "analysis_results/ leads outside the plan folder (through a symlink): nothing in it was checked".into(),
            "replace the symlink with a real analysis_results/ folder of the plan",
            false,
        )),
        Place::File | Place::Other if !plan.is_folder(&results) => findings.push(unreadable(
            &results,
            "analysis_results/ is not a folder: nothing in it was checked".into(),
            "replace it with a real analysis_results/ folder of the plan",
            false,
        )),
        Place::File | Place::Other => {}
    }
    findings
}

fn missing_results(plan: &LoadedPlan, results: &Path) -> Finding {
    let finding = Finding::error(
        Code::MissingPlanFile,
        results.display().to_string(),
        "analysis_results/ is missing: every plan carries it",
    );
    // git keeps no empty folder: a clone of a plan whose analysis_results/ was still empty
    // lacks it, through no fault of the plan.
    if plan.in_git_work_tree() {
        let folder = crate::term::path_word(results);
        let keep = crate::term::path_word(&results.join(".gitkeep"));
        finding.severity(Severity::Advisory).hint(format!(
            "create it with a `.gitkeep` file inside, so git keeps it: `mkdir {folder} && touch {keep}`"
        ))
    } else {
        finding.hint(missing_file_hint(plan, results, "analysis_results/"))
    }
}

/// What creates a plan file (PROGRESS.md, PROMPTS.md, analysis_results/) that is missing: `dwp
/// init`, which creates them, while the plan has no state layer; else, since init materializes
/// only such a plan, the shell command that creates it as `dwp init` would.
fn missing_file_hint(plan: &LoadedPlan, path: &Path, name: &str) -> String {
    let layer = [&plan.paths.state, &plan.paths.manifest]
        .iter()
        .any(|p| plan.place(p) != crate::store::Place::Missing);
    if !layer {
        let dir = plan.dir();
        let named = dir
            .file_name()
            .is_some_and(|n| crate::plan::is_plan_name(&n.to_string_lossy()));
        return match named {
            true => format!(
                "`dwp init {}` creates it, with the state layer the plan lacks",
                crate::term::path_word(dir)
            ),
            false => materialize_hint(dir),
        };
    }
    let word = crate::term::path_word(path);
    match name {
        "PROGRESS.md" => format!(
            "create it with its heading (dwp's writers add their entries below): `printf '# Progress\\n' > {word}`"
        ),
        "PROMPTS.md" => format!("create it with its heading: `printf '# Prompts\\n' > {word}`"),
        _ => format!("create the folder: `mkdir {word}`"),
    }
}

/// The README's own rules: Goal and Context (advisories for a legacy plan), a partial
/// materialization (`Plan Status: materializing`), a task list indented as code.
fn readme_rules(
    paths: &PlanPaths,
    readme: &crate::plan::markdown::Readme,
    era: Era,
) -> Vec<Finding> {
    let file = paths.dir.join("README.md").display().to_string();
    let mut findings = Vec::new();
    for (name, section) in [("Goal", &readme.goal), ("Context", &readme.context)] {
        if section.as_ref().is_none_or(|s| is_blank(&s.body)) {
            let finding = Finding::error(
                Code::MissingSection,
                &file,
                format!("the README has no {name} (or it is empty)"),
            )
            .line(section.as_ref().map(|s| s.line));
            findings.push(era.weigh(finding));
        }
    }
    if let Some(status) = &readme.plan_status
        && status.value == crate::plan::markdown::PlanStatusValue::Materializing
    {
        findings.push(
            Finding::error(
                Code::NotMaterialized,
                &file,
                "the README says `Plan Status: materializing`: a partial materialization, never executed or published",
            )
            .line(status.line)
            .hint("complete the materialization (every task file, then `Plan Status: 0/N`), or discard it"),
        );
    }
    findings.extend(plan_status_conflicts(&file, readme));
    findings.extend(no_progress_count(&file, readme, era));
    if let Some(&line) = readme.index_in_code.first() {
        findings.push(
            Finding::error(
                Code::IndexInCode,
                &file,
                format!(
                    "{} task list item(s) are indented four spaces, which renders as code: dwp reads them as the task list",
                    readme.index_in_code.len()
                ),
            )
            .line(line)
            .severity(Severity::Advisory),
        );
    }
    findings
}

/// DWP077: a further `Plan Status:` line (or row) that says otherwise than the first, the one
/// dwp reads: a reader of the README cannot tell which one is true.
fn plan_status_conflicts(file: &str, readme: &crate::plan::markdown::Readme) -> Vec<Finding> {
    let Some(first) = &readme.plan_status else {
        return Vec::new();
    };
    let (done, total) = readme.box_counts();
    readme
        .more_plan_status
        .iter()
        .filter(|other| other.value != first.value)
        .map(|other| {
            Finding::error(
                Code::PlanStatusConflict,
                file,
                format!(
                    "this `Plan Status:` line says {} but the one on line {} says {}: dwp reads the first",
                    other.value, first.line, first.value
                ),
            )
            .line(other.line)
            .hint(format!(
                "keep one `Plan Status:` line, with the count of the checked boxes ({done}/{total}), then `dwp verify PLAN` again"
            ))
        })
        .collect()
}

/// DWP078: a legacy plan whose README records no progress count, neither a `Plan Status:` line
/// nor a count in its Plan Status / Notes section (a current plan without the line is DWP046).
fn no_progress_count(
    file: &str,
    readme: &crate::plan::markdown::Readme,
    era: Era,
) -> Option<Finding> {
    let counted = readme.plan_status.is_some() || readme.notes_count.is_some();
    if era == Era::Current || counted || readme.index.is_empty() {
        return None;
    }
    let (done, total) = readme.box_counts();
    Some(
        Finding::error(
            Code::NoProgressCount,
            file,
            format!("the README records no progress count: no `Plan Status: X/N` line and none in a Plan Status / Notes section (the boxes say {done}/{total})"),
        )
        .line(readme.task_list_line.or(readme.index_line))
        .hint(format!("write `Plan Status: {done}/{total} completed` in the README's task list, then `dwp verify PLAN` again"))
        .severity(Severity::Advisory),
    )
}

/// The declared standard: the README's `**Standard:**` line, else the manifest's `spec_version`.
/// A major version newer than dwp knows, or one it cannot read, makes the plan UNVERIFIED.
fn standard_rule(
    paths: &PlanPaths,
    readme_standard: Option<&crate::plan::markdown::Standard>,
    manifest_version: Option<&str>,
) -> Option<Finding> {
    let (version, mut finding) = match (readme_standard, manifest_version) {
        (Some(standard), _) => {
            let finding = Finding::error(
                Code::NewerStandard,
                paths.dir.join("README.md").display().to_string(),
                String::new(),
            )
            .line(standard.line);
            (standard.version.as_str(), finding)
        }
        (None, Some(version)) => (
            version,
            Finding::error(
                Code::NewerStandard,
                paths.manifest.display().to_string(),
                String::new(),
            )
            .at("$.spec_version"),
        ),
        (None, None) => return None,
    };
    let major = version
        .split('.')
        .next()
        .and_then(|m| m.parse::<u64>().ok());
    finding.message = match major {
        Some(major) if major > KNOWN_STANDARD_MAJOR => format!(
            "declares DWP spec {version}, newer than this dwp knows (up to {KNOWN_STANDARD_MAJOR}.x): no claim is made"
        ),
        Some(major) if !DWP_SERIES.contains(&major) => {
            finding.code = Code::NotAStandard;
            finding.message = format!(
                "declares DWP spec {version}, which is not a DWP standard: the series are 2.x and 4.x (historical) and 5.x (current); there is no 1.x or 3.x"
            );
            return Some(finding);
        }
        Some(_) => return None,
        None => format!("the declared standard `{version}` is not a version dwp can read"),
    };
    Some(finding.severity(Severity::Unverified))
}

fn state_rules(
    plan: &LoadedPlan,
    state: &State,
    readme_approval: Option<Approval>,
) -> Vec<Finding> {
    let file = plan.paths.state.display().to_string();
    let mut findings = Vec::new();
    if let Some(m) = state.materialization
        && m != Materialization::Ready
    {
        findings.push(
            Finding::error(
                Code::NotMaterialized,
                &file,
                format!("materialization is {m}, not ready"),
            )
            .at("$.materialization"),
        );
    }
    if state.promotion.value().is_some()
        && state.materialization != Some(Materialization::Promoting)
    {
        findings.push(
            Finding::error(
                Code::NotMaterialized,
                &file,
                "a Lite-to-Full promotion is unresolved",
            )
            .at("$.promotion"),
        );
    }
    // An absent approval is the README's Approval row, else pending (never approved). A v1
    // state has no approval field, and a completed plan has no work left to approve.
    let v1 = state.format.is_none();
    let completed = state.status == crate::plan::model::PlanStatus::Completed;
    if !v1
        && !completed
        && state
            .approval
            .or(readme_approval)
            .unwrap_or(Approval::Pending)
            == Approval::Pending
    {
        findings.push(
            Finding::error(
                Code::ApprovalPending,
                &file,
                "the plan is not approved (approval pending)",
            )
            .at("$.approval")
            .severity(Severity::Advisory),
        );
    }
    if let Some(blocker) = state.blocked.value() {
        let needs = blocker
            .needs
            .as_deref()
            .map(|n| format!("; needs: {n}"))
            .unwrap_or_default();
        findings.push(
            Finding::error(
                Code::ActiveBlocker,
                &file,
                format!(
                    "task {} is blocked since {}: {}{needs}",
                    blocker.task, blocker.since, blocker.reason
                ),
            )
            .at("$.blocked")
            .task(blocker.task)
            .severity(Severity::Advisory),
        );
    }
    findings.extend(dead_lock(plan));
    findings
}

/// DWP090 (advisory): the writer lock is held by a process that is gone. A plan without a state
/// layer has one too when a `dwp init` was killed holding it.
fn dead_lock(plan: &LoadedPlan) -> Option<Finding> {
    let info = plan.lock_holder().filter(|info| info.liveness.is_gone())?;
    Some(
        Finding::error(
            Code::DeadLock,
            info.path.display().to_string(),
            format!("the writer lock is held by {}", info.describe()),
        )
        .severity(Severity::Advisory)
        .hint("inspect it with `dwp lock status PLAN`, then `dwp lock recover PLAN`"),
    )
}

/// Each completed task whose file contract the Stop hook last found unmet (DWP097): its ladder
/// (`ledger/task-N.check.json`, docs/hooks.md) counts failures and records no `met`. The hook
/// holds a completed task to its contract, but its third failure lets the stop through (the
/// updater will not block a completed task): this finding keeps such a plan from passing.
fn unmet_contracts(plan: &LoadedPlan, state: &State) -> Vec<Finding> {
    use serde_json::Value;
    let ledger = plan.dir().join("ledger");
    if plan.place(&ledger) == crate::store::Place::Missing {
        return Vec::new();
    }
    let mut findings = Vec::new();
    for task in state
        .tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Completed)
    {
        let path = ledger.join(format!("task-{}.check.json", task.id));
        // No ladder: no Stop check has failed. One that cannot be read or parsed is said so,
        // never taken as met.
        let read = plan.read(&path);
        let bytes = match &*read {
            Ok(bytes) => bytes,
            Err(crate::store::ReadFailure::Missing) => continue,
            Err(failure) => {
                let lost = "whether the Stop hook let its contract through unmet is not known";
                findings.push(unreadable_file(&path, "it", failure, lost).task(task.id));
                continue;
            }
        };
        let Ok(ladder) = serde_json::from_slice::<Value>(bytes) else {
            findings.push(
                Finding::error(
                    Code::NotJson,
                    path.display().to_string(),
                    format!("task {}'s Stop-check ladder is not JSON, so whether the Stop hook let its contract through unmet is not known", task.id),
                )
                .task(task.id)
                .hint(format!(
                    "remove it and stop again (the Stop hook writes it anew): `dwp contract check PLAN --task {}` shows the contract's state",
                    task.id
                )),
            );
            continue;
        };
        let failures = ladder["consecutive_failures"].as_u64().unwrap_or(0);
        if failures == 0 || !ladder["met"].is_null() {
            continue;
        }
        let last: Vec<&str> = ladder["last_failure"]
            .as_array()
            .map(|lines| lines.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        findings.push(
            Finding::error(
                Code::UnmetContract,
                path.display().to_string(),
                format!(
                    "task {} is completed, but its file contract failed the last {failures} Stop checks: {}",
                    task.id,
                    last.join("; ")
                ),
            )
            .task(task.id)
            .hint(format!(
                "`dwp contract check PLAN --task {}` lists what is unmet; make those file changes, then stop again: the Stop hook records the contract met",
                task.id
            )),
        );
    }
    findings
}

/// Evidence truth of every completed task (shared rules: [`crate::rules::evidence`]). A legacy plan's
/// completed task without any gate record is an advisory: gate records came with the current
/// state layer, and the reference asks them only of a v2/v5 state.
fn evidence_rules(plan: &LoadedPlan, state: &State, era: Era) -> Vec<Finding> {
    let file = plan.paths.state.display().to_string();
    let mut findings = Vec::new();
    for (index, task) in state.tasks.iter().enumerate() {
        if task.status != TaskStatus::Completed {
            continue;
        }
        let at = format!("$.tasks[{index}].gates");
        if task.gates().is_empty() {
            findings.push(
                era.weigh(
                    Finding::error(
                        Code::CompletedWithoutGates,
                        &file,
                        format!("task {} is completed without gate evidence", task.id),
                    )
                    .at(&at)
                    .task(task.id),
                ),
            );
        }
        for (command, problem) in evidence::completion_problems(task.gates(), plan) {
            let code = match problem {
                // Every observed record, latest or not, is checked by `observed_gate_rules`.
                GateProblem::Provenance(_) => continue,
                GateProblem::Invalidated => Code::InvalidatedEvidence,
                GateProblem::AdmitsNeverRan(_) => Code::NeverRan,
                GateProblem::ZeroSelection(_) => Code::ZeroSelection,
                GateProblem::LogEscapes(_) | GateProblem::LogMissing(_) => Code::LogPointer,
                _ => Code::FailingGate,
            };
            findings.push(
                Finding::error(
                    code,
                    &file,
                    format!(
                        "task {} is completed but its gate `{command}` {}",
                        task.id,
                        problem.describe()
                    ),
                )
                .at(&at)
                .task(task.id),
            );
        }
    }
    findings
}

/// The plan variable that makes asserted-only gates of completed tasks a finding (DWP069), as
/// `dwp verify --strict-evidence` does: `| Gate Evidence | observed |`.
pub const EVIDENCE_VARIABLE: &str = "Gate Evidence";

/// Whether the README's Plan Variables require observed evidence ([`EVIDENCE_VARIABLE`] reads
/// `observed`).
pub fn requires_observed_evidence(readme: &crate::plan::markdown::Readme) -> bool {
    readme.variable(EVIDENCE_VARIABLE).is_some_and(|v| {
        v.value
            .trim_matches(|c: char| c == '`' || c == '*' || c.is_whitespace())
            .to_ascii_lowercase()
            .starts_with("observed")
    })
}

/// Every gate record dwp observed (`dwp run`), of every task, latest or not, held against its
/// log ([`crate::rules::observed::provenance_problems`]): a log edited after the run, or one
/// that ran another command, ended otherwise, shows another summary, or is not where and when
/// dwp would have written it, is DWP068; a log gone (missing, a symlink, outside the plan) is
/// DWP037; one the OS refuses to read is DWP001, unverified. Then the logs no record points at
/// (DWP038).
///
/// An error for the latest record of its command, which backs (or will back) the task; an
/// advisory for one a later run of the same command superseded: history was altered, but no
/// completion rests on it, so the new run the hint names clears the error.
pub fn observed_gate_rules(plan: &LoadedPlan, state: &State) -> Vec<Finding> {
    let file = plan.paths.state.display().to_string();
    let mut findings = Vec::new();
    for (index, task) in state.tasks.iter().enumerate() {
        let reported_as_pointer = reported_log_pointers(task);
        let latest = evidence::latest_per_command(task.gates());
        for (at, gate) in task.gates().iter().enumerate() {
            let superseded = !latest.iter().any(|g| std::ptr::eq(*g, gate));
            let weigh = |finding: Finding| match superseded {
                true => finding.severity(Severity::Advisory),
                false => finding,
            };
            let Some(mark) = gate
                .evidence
                .as_deref()
                .and_then(crate::rules::observed::mark)
            else {
                continue;
            };
            let place = format!("$.tasks[{index}].gates[{at}].evidence");
            let covered = reported_as_pointer.iter().any(|g| std::ptr::eq(*g, gate));
            if let Some(finding) = gone_log(plan, &file, task.id, gate, mark.log, covered) {
                let lead = "a log dwp kept is never moved or removed, and every record is judged against its log: restore it from the plan's history; ";
                let hint = rerun_hint(plan, task, gate, lead, superseded);
                findings.push(weigh(finding.at(place).hint(hint)));
                continue;
            }
            let path = plan.dir().join(mark.log);
            if let Err(failure) = &*plan.read(&path)
                && failure.is_unverifiable()
            {
                // The OS refused: nothing is claimed either way (UNVERIFIED), never silence.
                let message = format!(
                    "{failure}, so task {}'s gate `{}` was not checked against it",
                    task.id, gate.command
                );
                let repair =
                    "let dwp read the log (its permissions), leaving its bytes as they are";
                findings.push(unreadable(&path, message, repair, true).task(task.id));
                continue;
            }
            for why in crate::rules::observed::provenance_problems(gate, Some(task.id), plan) {
                findings.push(weigh(
                    Finding::error(
                        Code::GateLog,
                        &file,
                        format!(
                            "task {}'s gate `{}` was observed by dwp, but {why}",
                            task.id, gate.command
                        ),
                    )
                    .at(&place)
                    .task(task.id)
                    .hint(rerun_hint(
                        plan,
                        task,
                        gate,
                        "a log dwp kept is never edited, and every record is judged against its log: restore its bytes from the plan's history; ",
                        superseded,
                    )),
                ));
            }
        }
    }
    findings.extend(orphan_gate_logs(plan, state));
    findings
}

/// The step that records `gate`'s run again, after `lead`, from the state its task is in:
/// `dwp run` with the gate's own command for a task at work; the start first for a pending one;
/// for a completed or skipped task, which `dwp run` refuses, the amendment that reopens it. A
/// superseded record needs no new run: a later one backs the task.
fn rerun_hint(
    plan: &LoadedPlan,
    task: &crate::plan::model::Task,
    gate: &crate::plan::model::Gate,
    lead: &str,
    superseded: bool,
) -> String {
    if superseded {
        return format!(
            "{lead}a later run of `{}` backs task {}, so this record is history and no completion rests on it",
            gate.command, task.id
        );
    }
    let word = crate::term::path_word(plan.dir());
    let id = task.id;
    let run = match crate::rules::observed::run_line(&word, id, &gate.command) {
        Some(line) => format!("`{line}`"),
        None => format!("dwp run {word} --task {id} -- and the gate's command"),
    };
    match task.status {
        TaskStatus::InProgress | TaskStatus::Blocked => {
            format!("{lead}a new run through dwp records clean evidence: {run}")
        }
        TaskStatus::Pending => format!(
            "{lead}a new run through dwp records clean evidence once the task is started: `dwp update {word} --task {id} --status in_progress`, then {run}"
        ),
        status => format!(
            "{lead}task {id} is {status}, and dwp run records only on a task at work (dwp amend with --invalidate reopens it, on the user's word)"
        ),
    }
}

/// The records whose missing or escaping `log=` the evidence rules report (DWP064): a
/// completed task's latest record of each command.
fn reported_log_pointers(task: &crate::plan::model::Task) -> Vec<&crate::plan::model::Gate> {
    if task.status == TaskStatus::Completed {
        evidence::latest_per_command(task.gates())
    } else {
        Vec::new()
    }
}

/// DWP037: the log of an observed record is gone: missing, a symlink where dwp wrote a file (to
/// a copy of its bytes, say), or outside the plan folder. A missing or escaping log the evidence
/// rules already report (`covered`, DWP064) is left to them.
fn gone_log(
    plan: &LoadedPlan,
    file: &str,
    task: u64,
    gate: &crate::plan::model::Gate,
    log: &str,
    covered: bool,
) -> Option<Finding> {
    let path = plan.dir().join(log);
    let what = if let Some(link) = symlink_on_the_way(plan, log) {
        if link == log {
            "is a symlink, not the file dwp wrote".to_owned()
        } else {
            format!("is reached through the symlink `{link}`, not the folder dwp wrote it in")
        }
    } else {
        match plan.place(&path) {
            crate::store::Place::Missing if !covered => "is missing".to_owned(),
            crate::store::Place::Outside if !covered => "leads outside the plan folder".to_owned(),
            _ => return None,
        }
    };
    Some(
        Finding::error(
            Code::ObservedLogGone,
            file,
            format!(
                "task {task}'s gate `{}` was observed by dwp, but its log `{log}` {what}: nothing backs the record",
                gate.command
            ),
        )
        .task(task),
    )
}

/// The first part of the relative path `log` (a folder on its way, or the log itself) that is
/// a symlink: dwp writes its logs as regular files in real folders of the plan.
fn symlink_on_the_way(plan: &LoadedPlan, log: &str) -> Option<String> {
    let mut at = plan.dir().to_path_buf();
    let mut walked = Vec::new();
    for part in log.split('/').filter(|p| !p.is_empty() && *p != ".") {
        if part == ".." {
            return None;
        }
        at.push(part);
        walked.push(part);
        if plan.entry(&at) == Some(crate::store::Entry::Symlink) {
            return Some(walked.join("/"));
        }
    }
    None
}

/// DWP038 (advisory): every file under `analysis_results/gates/` that no gate record's `log=`
/// names: what a `dwp run` stopped between writing its log and recording it leaves (the temp
/// files of an interrupted write aside).
fn orphan_gate_logs(plan: &LoadedPlan, state: &State) -> Vec<Finding> {
    let gates = plan.dir().join(crate::rules::observed::GATES_DIR);
    let listed = plan.list(&gates);
    let Ok(entries) = &*listed else {
        return Vec::new();
    };
    let recorded: std::collections::HashSet<&str> = state
        .tasks
        .iter()
        .flat_map(|t| t.gates())
        .flat_map(|g| evidence::log_pointers(g.evidence.as_deref().unwrap_or("")))
        .collect();
    entries
        .iter()
        .filter(|(name, kind)| {
            *kind != crate::store::Entry::Directory && !crate::store::atomic::is_temp_name(name)
        })
        .filter_map(|(name, _)| {
            let relative = format!("{}/{name}", crate::rules::observed::GATES_DIR);
            (!recorded.contains(relative.as_str())).then(|| {
                let path = gates.join(name);
                let finding = Finding::error(
                    Code::OrphanGateLog,
                    path.display().to_string(),
                    "no gate record points at this log: a `dwp run` stopped between writing its log and recording it leaves one",
                )
                .severity(Severity::Advisory)
                .hint(format!(
                    "nothing records this run: remove the log (`rm {}`); to record a run, run the gate again through dwp on the task at work (dwp run with --task and the gate's command)",
                    crate::term::shell_word(&path.display().to_string())
                ));
                // The task a log's name gives (`task-N-...`) fills in the hint's `--task N`.
                match crate::rules::observed::task_of_log_name(name) {
                    Some(task) => finding.task(task),
                    None => finding,
                }
            })
        })
        .collect()
}

/// DWP069: every completed task whose latest record of a command was asserted (`dwp update
/// --gate`), not observed by dwp. Reported only when the plan asks for observed evidence (the
/// Plan Variable) or `dwp verify --strict-evidence` does.
pub fn asserted_gates(paths: &PlanPaths, state: &State) -> Vec<Finding> {
    let file = paths.state.display().to_string();
    let mut findings = Vec::new();
    for (index, task) in state.tasks.iter().enumerate() {
        if task.status != TaskStatus::Completed {
            continue;
        }
        for gate in evidence::latest_per_command(task.gates()) {
            if crate::rules::observed::is_observed(gate) {
                continue;
            }
            findings.push(
                Finding::error(
                    Code::AssertedGate,
                    &file,
                    format!(
                        "task {} is completed on gate `{}`, which was asserted, not observed by dwp",
                        task.id, gate.command
                    ),
                )
                .at(format!("$.tasks[{index}].gates"))
                .task(task.id),
            );
        }
    }
    findings
}

/// Lite: task `id` has exactly one `## Task N ... {#task-N}` section with the anchor its locator
/// names, and its index line, when it links an anchor, links that one (the reference requires
/// the anchor exactly once, not a link to it: a line without a link is fine).
fn lite_anchor_problems(
    md: &crate::plan::records::PlanMarkdown,
    id: u64,
    value: &str,
    entry: Option<&crate::plan::markdown::IndexEntry>,
) -> Vec<Finding> {
    let readme = md.readme_path.display().to_string();
    let anchor = value.trim_start_matches('#');
    let sections: Vec<_> = md
        .readme
        .inline_tasks
        .iter()
        .filter(|r| r.id == id)
        .collect();
    let problem = match sections.as_slice() {
        [] => Some(format!(
            "task {id} has no `## Task {id} ... {{#{anchor}}}` section"
        )),
        [one] if one.anchor.as_deref() != Some(anchor) => Some(format!(
            "task {id}'s section is anchored `{}`, not `{anchor}`",
            one.anchor.as_deref().unwrap_or("(none)")
        )),
        [_] => None,
        _ => Some(format!("task {id} has {} sections", sections.len())),
    };
    let anchors: Vec<&String> = entry
        .map(|e| e.links.iter().filter(|l| l.starts_with('#')).collect())
        .unwrap_or_default();
    let wrong_link = anchors
        .iter()
        .find(|l| l.as_str() != value)
        .map(|l| format!("the index line of task {id} links `{l}`, not its own anchor `{value}`"));
    problem
        .into_iter()
        .chain(wrong_link)
        .map(|message| {
            Finding::error(Code::LiteAnchor, &readme, message)
                .task(id)
                .line(entry.map(|e| e.line))
        })
        .collect()
}

/// Full plans: every file locator names a task file inside the plan folder that the README links
/// from the task's index line, and every `N.task_*.md` in the folder is in the state. Lite
/// plans: [`lite_anchor_problems`].
fn inventory_rules(
    plan: &LoadedPlan,
    state: &State,
    md: &crate::plan::records::PlanMarkdown,
) -> Vec<Finding> {
    let paths = &plan.paths;
    let readme = md.readme_path.display().to_string();
    let state_file = paths.state.display().to_string();
    let mut findings = Vec::new();
    let mut named = std::collections::HashSet::new();
    // The first index line of each task, looked up by id (a 10,000-task index is not searched
    // once per task).
    let mut entries = std::collections::HashMap::with_capacity(md.readme.index.len());
    for entry in &md.readme.index {
        entries.entry(entry.id).or_insert(entry);
    }
    for (index, task) in state.tasks.iter().enumerate() {
        let Some(value) = task.locator_value() else {
            continue;
        };
        let entry = entries.get(&task.id).copied();
        if value.starts_with('#') {
            findings.extend(lite_anchor_problems(md, task.id, value, entry));
            continue;
        }
        named.insert(value.to_owned());
        let path = paths.dir.join(value);
        // A file the markdown reader just read, through the same resolution beneath the plan
        // folder, is a regular file inside it: no second look.
        let read = md
            .records
            .get(&task.id)
            .is_some_and(|(read, _)| *read == path);
        match (!read).then(|| plan.place(&path)) {
            Some(crate::store::Place::Missing) => findings.push(
                Finding::error(
                    Code::TaskFileInventory,
                    &state_file,
                    format!("task {}'s file `{value}` does not exist", task.id),
                )
                .at(format!("$.tasks[{index}]"))
                .task(task.id),
            ),
            Some(place) => findings.extend(escaping_symlink(&path, place, task.id)),
            None => {}
        }
        if let Some(entry) = entry
            && crate::plan::records::linked_file(&entry.links).is_some_and(|l| l != value)
        {
            findings.push(
                Finding::error(
                    Code::TaskFileInventory,
                    &readme,
                    format!(
                        "task {}'s index line links `{}` but state.json locates it at `{value}`",
                        task.id,
                        crate::plan::records::linked_file(&entry.links).unwrap_or("")
                    ),
                )
                .task(task.id)
                .line(entry.line),
            );
        }
    }
    if state.format != Some(crate::plan::model::PlanFormat::Lite) {
        for name in md.task_files.iter().filter(|n| !named.contains(*n)) {
            findings.push(Finding::error(
                Code::TaskFileInventory,
                paths.dir.join(name).display().to_string(),
                format!("`{name}` is a task file the state does not list"),
            ));
        }
    }
    findings
}

/// The fields every amendment block carries (docs/CONFORMANCE.md, DWP070); `Revised
/// criterion` is required only for a revised criterion.
const AMENDMENT_FIELDS: [&str; 8] = [
    "Original criterion",
    "Observed",
    "Disposition",
    "Reason",
    "Authority",
    "Affected tasks",
    "Evidence invalidated",
    "Evidence preserved",
];

/// Amendments: every field, a known authority, numbers 1..n in order, dates that are dates and
/// never go backwards, a deferred requirement's destination that exists, and a skipped task
/// removed from scope by the user.
fn amendment_rules(
    views: &[tasks::TaskView],
    md: &crate::plan::records::PlanMarkdown,
) -> Vec<Finding> {
    let exists = |n: u64| views.iter().any(|v| v.id == n);
    let mut findings = Vec::new();
    for (id, (path, record)) in &md.records {
        let file = path.display().to_string();
        let at = |line: usize, code: Code, message: String| {
            Finding::error(code, &file, message).task(*id).line(line)
        };
        let mut previous_date: Option<chrono::NaiveDate> = None;
        for (position, amendment) in record.amendments.iter().enumerate() {
            let label = format!(
                "amendment {}",
                amendment.number.map_or("?".into(), |n| n.to_string())
            );
            let expected = position as u64 + 1;
            if amendment.number != Some(expected) {
                findings.push(at(amendment.line, Code::AmendmentOrder, format!("{label} of task {id} should be amendment {expected}: amendments are numbered in order")));
            }
            match chrono::NaiveDate::parse_from_str(&amendment.date, "%Y-%m-%d") {
                Err(_) => findings.push(at(
                    amendment.line,
                    Code::AmendmentOrder,
                    format!(
                        "{label} of task {id} is dated `{}`, not YYYY-MM-DD",
                        amendment.date
                    ),
                )),
                Ok(date) => {
                    if previous_date.is_some_and(|p| date < p) {
                        findings.push(at(amendment.line, Code::AmendmentOrder, format!("{label} of task {id} is dated {date}, before the amendment above it: amendments are never backdated")));
                    }
                    previous_date = Some(date);
                }
            }
            let disposition = amendment
                .field("Disposition")
                .map(|d| d.value.to_lowercase())
                .unwrap_or_default();
            let mut required: Vec<&str> = AMENDMENT_FIELDS.to_vec();
            if disposition.starts_with("revised criterion") {
                required.push("Revised criterion");
            }
            let missing: Vec<&str> = required
                .into_iter()
                .filter(|f| amendment.field(f).is_none())
                .collect();
            if !missing.is_empty() {
                findings.push(at(
                    amendment.line,
                    Code::AmendmentFields,
                    format!("{label} of task {id} lacks {}", missing.join(", ")),
                ));
            }
            if let Some(authority) = amendment.field("Authority") {
                let word = authority
                    .value
                    .split(|c: char| !c.is_alphanumeric())
                    .find(|w| !w.is_empty())
                    .unwrap_or("")
                    .to_lowercase();
                if !matches!(word.as_str(), "user" | "developer" | "evidence") {
                    findings.push(at(
                        authority.line,
                        Code::AmendmentAuthority,
                        format!(
                            "{label} of task {id} has authority `{}`: user, developer or evidence",
                            authority.value
                        ),
                    ));
                }
            }
            if disposition.starts_with("deferred requirement") {
                let text = [
                    amendment.field("Destination"),
                    amendment.field("Disposition"),
                    amendment.field("Revised criterion"),
                ]
                .into_iter()
                .flatten()
                .map(|f| f.value.clone())
                .collect::<Vec<_>>()
                .join(" ");
                let destination = task_numbers(&text).into_iter().find(|n| *n != *id);
                if destination.is_none_or(|n| !exists(n)) {
                    findings.push(at(
                        amendment.line,
                        Code::DeferredDestination,
                        format!(
                            "{label} of task {id} defers a requirement to {}",
                            destination.map_or("no task".into(), |n| format!(
                                "task {n}, which does not exist"
                            ))
                        ),
                    ));
                }
            }
        }
    }
    for task in views.iter().filter(|t| t.status == TaskStatus::Skipped) {
        let removed = md.records.get(&task.id).is_some_and(|(_, record)| {
            record.amendments.iter().any(|a| {
                a.field("Authority")
                    .is_some_and(|f| f.value.trim().to_lowercase().starts_with("user"))
            })
        });
        if !removed {
            findings.push(
                Finding::error(
                    Code::SkippedWithoutAuthority,
                    md.records.get(&task.id).map_or(md.readme_path.display().to_string(), |(p, _)| p.display().to_string()),
                    format!("task {} is skipped without an amendment in which the user removed it from scope", task.id),
                )
                .task(task.id)
                .hint("record the user's amendment with dwp amend (--authority user), or reopen the task"),
            );
        }
    }
    findings
}

/// An unexecuted scenario contributes no passing evidence (spec: "Evidence truth and
/// amendments"): a latest, passing, not-invalidated gate record of the task whose command an
/// `unexecuted scenario` amendment names (in backticks, outside `Evidence invalidated`) is
/// reported.
fn unexecuted_scenarios(
    paths: &PlanPaths,
    state: &State,
    md: &crate::plan::records::PlanMarkdown,
) -> Vec<Finding> {
    let file = paths.state.display().to_string();
    let mut findings = Vec::new();
    for (index, task) in state.tasks.iter().enumerate() {
        let Some((_, record)) = md.records.get(&task.id) else {
            continue;
        };
        for gate in evidence::standing_passes(task.gates()) {
            let unexecuted = record.amendments.iter().find(|a| {
                a.field("Disposition").is_some_and(|d| {
                    d.value
                        .to_lowercase()
                        .trim_start_matches('*')
                        .starts_with("unexecuted scenario")
                }) && a
                    .fields
                    .iter()
                    .filter(|(name, _)| !name.eq_ignore_ascii_case("Evidence invalidated"))
                    .any(|(_, f)| quoted(&f.value).any(|c| c == gate.command))
            });
            if let Some(amendment) = unexecuted {
                findings.push(
                    Finding::error(
                        Code::UnexecutedScenario,
                        &file,
                        format!(
                            "task {}'s gate `{}` passes, but amendment {} records its scenario as unexecuted: an unexecuted scenario is no passing evidence",
                            task.id,
                            gate.command,
                            amendment.number.map_or("?".into(), |n| n.to_string())
                        ),
                    )
                    .at(format!("$.tasks[{index}].gates"))
                    .task(task.id),
                );
            }
        }
    }
    findings
}

/// The spans of `text` in backticks.
fn quoted(text: &str) -> impl Iterator<Item = &str> {
    text.split('`').skip(1).step_by(2).map(str::trim)
}

/// `a`, `a and b`, `a, b and c`.
pub(crate) fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The task numbers a text names: `task 5`, `Task 5`, `#task-5`.
fn task_numbers(text: &str) -> Vec<u64> {
    let lower = text.to_lowercase();
    let mut numbers = Vec::new();
    for (at, _) in lower.match_indices("task") {
        let rest = lower[at + 4..].trim_start_matches([' ', '-', '#']);
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(n) = digits.parse() {
            numbers.push(n);
        }
    }
    numbers
}

/// Clock skew tolerated before a timestamp counts as "in the future".
const FUTURE_SKEW_SECONDS: i64 = 300;

/// How much later than `updated_at` a timestamp of the same write may be. The public reference
/// updater reads the clock once for `updated_at` and again, microseconds later, for each gate's
/// `last_run` and for `checkpoint.at`; timestamps are compared at the second, and one second
/// covers a write that straddles a second's boundary.
const SAME_WRITE_SECONDS: i64 = 1;

/// Tasks run in order, the rule `dwp update` enforces ([`crate::rules::invariants::out_of_order`]):
/// two tasks in progress at once, or a task completed while an earlier one is open (and not
/// reopened by an amendment), is a state no guarded update writes (a hand edit, or a reconcile
/// that reopened an earlier task). The hint
/// names the update that restores the order from this state.
fn task_order(paths: &PlanPaths, state: &State, era: Era) -> Vec<Finding> {
    let file = paths.state.display().to_string();
    let plan = crate::term::path_word(&paths.dir);
    let mut findings = Vec::new();
    for (index, task, open) in crate::rules::invariants::out_of_order(state) {
        let (later, earlier) = (task.id, open.id);
        let hint = match task.status {
            TaskStatus::InProgress => format!(
                "put task {later} back until task {earlier} is completed: `dwp update {plan} --task {later} --status pending`"
            ),
            _ => format!(
                "complete task {earlier} first (`dwp update {plan} --task {earlier} --status in_progress`, then `--status completed` with its gate and `--tick`): tasks run in order"
            ),
        };
        findings.push(era.weigh(
            Finding::error(
                Code::TaskOrder,
                &file,
                format!(
                    "task {later} is {} while task {earlier} before it is {}: tasks run in order",
                    task.status, open.status
                ),
            )
            .at(format!("$.tasks[{index}].status"))
            .task(later)
            .hint(hint),
        ));
    }
    findings
}

/// Completed after started; nothing after `updated_at`; nothing in the future (`now`).
fn timestamp_order(
    paths: &PlanPaths,
    state: &State,
    now: chrono::DateTime<chrono::Utc>,
) -> Vec<Finding> {
    use crate::clock::parse_rfc3339;
    let file = paths.state.display().to_string();
    let mut findings = Vec::new();
    let updated =
        parse_rfc3339(&state.updated_at).map(|u| u + chrono::Duration::seconds(SAME_WRITE_SECONDS));
    let horizon = now + chrono::Duration::seconds(FUTURE_SKEW_SECONDS);
    let mut check = |stamp: &crate::plan::model::Timestamp| {
        let text = stamp.text;
        let Some(time) = parse_rfc3339(text) else {
            return;
        };
        let problem = if time > horizon {
            Some(format!("`{text}` is in the future"))
        } else if updated.is_some_and(|u| time > u) {
            Some(format!(
                "`{text}` is after updated_at `{}`",
                state.updated_at
            ))
        } else {
            None
        };
        if let Some(message) = problem {
            let mut finding = Finding::error(Code::TimestampOrder, &file, message).at(stamp.path());
            finding.task = stamp.task;
            findings.push(finding);
        }
    };
    for stamp in state.timestamps() {
        check(&stamp);
    }
    for (index, task) in state.tasks.iter().enumerate() {
        let started = task.started_at.as_deref().and_then(parse_rfc3339);
        let completed = task.completed_at.as_deref().and_then(parse_rfc3339);
        if let (Some(started), Some(completed)) = (started, completed)
            && completed < started
        {
            findings.push(
                Finding::error(
                    Code::TimestampOrder,
                    &file,
                    format!(
                        "task {} completed ({}) before it started ({})",
                        task.id,
                        task.completed_at.as_deref().unwrap_or(""),
                        task.started_at.as_deref().unwrap_or("")
                    ),
                )
                .at(format!("$.tasks[{index}].completed_at"))
                .task(task.id),
            );
        }
    }
    findings
}

/// A completed plan carries a security review with no open critical finding. "Open critical" is
/// read line by line: a line naming both "critical" and "open" (a table row `| critical | open |`,
/// `Severity: critical, status: open`), unless it says there is none ("No open critical ...").
fn security_review(plan: &LoadedPlan) -> Vec<Finding> {
    let path = plan
        .dir()
        .join("analysis_results")
        .join("SECURITY_REVIEW.md");
    let file = path.display().to_string();
    let text = match plan.read_text(&path) {
        Ok(text) => text,
        Err(crate::store::ReadFailure::Missing) => {
            return vec![
                Finding::error(
                    Code::SecurityReview,
                    file,
                    "a completed plan has no security review",
                )
                .hint("write analysis_results/SECURITY_REVIEW.md in the Final Review"),
            ];
        }
        Err(failure) => {
            return vec![unreadable_file(
                &path,
                "analysis_results/SECURITY_REVIEW.md",
                &failure,
                "the security review was not checked",
            )];
        }
    };
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            let lower = line.to_lowercase();
            let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).collect();
            words.contains(&"critical")
                && words.contains(&"open")
                && !words.contains(&"no")
                && !words.contains(&"none")
        })
        .map(|(index, line)| {
            Finding::error(
                Code::SecurityReview,
                &file,
                format!("records an open critical finding: {}", line.trim()),
            )
            .hint("close or accept it with recorded authority before publication")
            .line(index + 1)
        })
        .collect()
}

/// The receipt rules on their own (`dwp finalize --check`), for any state.
pub fn receipt_findings(plan: &LoadedPlan, state: &State) -> Vec<Finding> {
    receipt_rules(plan, state, None)
}

/// A completed plan carries a receipt whose hashes still match the files: the state's bytes,
/// the reference digest over the plan's artifacts, and (dwp's receipts) each listed artifact's
/// own sha256. Receipts came with DWP spec 5.0.0: a plan of that era without one is an error,
/// a v2 plan of an earlier standard gets an advisory (the reference says the same), and v1
/// plans predate receipts altogether. A receipt that is there is always checked.
fn receipt_rules(plan: &LoadedPlan, state: &State, declared: Option<&str>) -> Vec<Finding> {
    let paths = &plan.paths;
    let path = paths.dir.join(crate::rules::receipt::RECEIPT);
    let file = path.display().to_string();
    let read = plan.read(&path);
    let bytes = match &*read {
        Ok(bytes) => bytes,
        Err(crate::store::ReadFailure::Missing) if state.format.is_none() => return Vec::new(),
        Err(crate::store::ReadFailure::Missing) => {
            let missing = Finding::error(
                Code::MissingReceipt,
                file,
                "the plan is completed but has no publication receipt",
            )
            .hint("publish with `dwp finalize PLAN`, which checks every artifact and writes it");
            return vec![if is_publication_era(state, declared) {
                missing
            } else {
                missing.severity(Severity::Advisory)
            }];
        }
        Err(failure) => {
            return vec![unreadable_file(
                &path,
                crate::rules::receipt::RECEIPT,
                failure,
                "the publication receipt was not checked",
            )];
        }
    };
    let receipt = match crate::plan::json::parse_strict(bytes) {
        Ok(value) => value,
        Err(e) => return vec![Finding::error(Code::MalformedReceipt, file, e.message).at(e.path)],
    };
    let violations = crate::rules::receipt::schema_violations(&receipt);
    if !violations.is_empty() {
        return violations
            .into_iter()
            .map(|v| Finding::error(Code::MalformedReceipt, &file, v.message).at(v.path))
            .collect();
    }
    let mut findings = Vec::new();
    let mismatch = |path: &str, message: String| {
        Finding::error(Code::ReceiptMismatch, &file, message)
            .at(path)
            .hint("an artifact changed after publication: review the change, then republish with `dwp finalize PLAN`")
    };
    let state_sha = match &*plan.read(&paths.state) {
        Ok(bytes) => crate::store::sha256_hex(bytes),
        Err(_) => String::new(),
    };
    if receipt["state_sha256"] != state_sha.as_str() {
        findings.push(mismatch(
            "$.state_sha256",
            "state.json changed since publication".into(),
        ));
    }
    if receipt["artifacts_sha256"] != crate::rules::receipt::artifacts_digest(plan, state).as_str()
    {
        findings.push(mismatch(
            "$.artifacts_sha256",
            "the plan's artifacts changed since publication".into(),
        ));
    }
    for (index, artifact) in receipt["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let name = artifact["path"].as_str().unwrap_or_default();
        if !is_inside_relative(name) {
            findings.push(
                Finding::error(
                    Code::MalformedReceipt,
                    &file,
                    format!("lists `{name}`, a path leaving the plan folder"),
                )
                .at(format!("$.artifacts[{index}].path")),
            );
            continue;
        }
        let now = match &*plan.read(&paths.dir.join(name)) {
            Ok(bytes) => Some(crate::store::sha256_hex(bytes)),
            Err(_) => None,
        };
        if artifact["sha256"].as_str() != now.as_deref() {
            findings.push(mismatch(
                &format!("$.artifacts[{index}].sha256"),
                format!("{name} changed since publication"),
            ));
        }
    }
    findings.extend(added_results(plan, &receipt).into_iter().map(|name| {
        Finding::error(
            Code::ReceiptMismatch,
            &file,
            format!("{name} was added after publication: the receipt does not cover it"),
        )
        .at("$.artifacts")
        .hint("a file was added after publication: review it, then republish with `dwp finalize PLAN`, whose receipt covers it")
    }));
    findings
}

/// The files under `analysis_results/` a dwp receipt (one listing `artifacts`) does not list:
/// added after publication. A receipt without the list (the reference's) names no file, and a
/// folder that cannot be listed adds nothing here (reading it is publication's refusal).
fn added_results(plan: &LoadedPlan, receipt: &serde_json::Value) -> Vec<String> {
    let Some(listed) = receipt["artifacts"].as_array() else {
        return Vec::new();
    };
    let listed: std::collections::HashSet<&str> =
        listed.iter().filter_map(|a| a["path"].as_str()).collect();
    let mut added: Vec<String> = crate::rules::receipt::results_files(plan)
        .unwrap_or_default()
        .into_iter()
        .filter(|name| !listed.contains(name.as_str()))
        .collect();
    added.sort();
    added
}

/// A relative path that stays inside its folder: no root, no `..`, not empty.
fn is_inside_relative(path: &str) -> bool {
    use std::path::Component;
    !path.is_empty()
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// A multi-file write that was killed half way leaves its intent record: until a writer
/// completes it, the files disagree with each other by design, so nothing is conformant.
fn interrupted_write(plan: &LoadedPlan) -> Option<Finding> {
    let paths = &plan.paths;
    let record = paths.dir.join(crate::store::intent::INTENT);
    if plan.place(&record) == crate::store::Place::Missing {
        return None;
    }
    let what = match plan.pending_intent() {
        Ok(Some(intent)) => format!("`{}` of {}", intent.command, intent.started_at),
        _ => "a write".to_owned(),
    };
    Some(
        Finding::error(
            Code::InterruptedWrite,
            record.display().to_string(),
            format!("{what} was interrupted: the files it changes may disagree until it is completed"),
        )
        .hint(format!(
            "every writer completes it before its own work: `dwp reconcile --write {}` does, then brings state.json in line with the markdown",
            crate::term::path_word(&paths.dir)
        )),
    )
}

fn publication_rules(plan: &LoadedPlan) -> Vec<Finding> {
    let marker = plan.dir().join(crate::plan::FINALIZING_MARKER);
    if plan.place(&marker) != crate::store::Place::Missing {
        return vec![
            Finding::error(
                Code::PublicationInProgress,
                marker.display().to_string(),
                "a publication was interrupted: nothing is conformant until it is recovered",
            )
            .hint("inspect it, then `dwp finalize PLAN --recover` against the same candidate"),
        ];
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hint's `PLAN` becomes the folder as one shell word, a `$` in it text (the replacement
    /// once read `$IFS` as a capture group and dropped it: `PLAN_a${IFS}b` shown as `PLAN_ab`).
    #[test]
    fn the_plan_a_hint_names_is_one_shell_word_with_its_dollar_kept() {
        let mut findings = [
            Finding::error(Code::InterruptedWrite, "f", "m").hint("run `dwp verify PLAN` again")
        ];
        name_the_plan(&mut findings, Path::new("/p/PLAN_a${IFS}b c"));
        let hint = findings[0].hint.as_deref().unwrap();
        assert_eq!(hint, "run `dwp verify '/p/PLAN_a${IFS}b c'` again");
    }
}
