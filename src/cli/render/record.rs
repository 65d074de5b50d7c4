//! What dwp shows of a record plan (DWP v6/v7), as human text or its JSON document: the status
//! and the ready set the journal derives, and the facts `verify` states beside its findings.

use super::plan::paint_status;
use super::{Stamp, print_keyed};
use crate::rules::record::SnapshotAgreement;
use crate::rules::record::view::{ReadyAction, ReadySet, RecordFacts, RecordStatus};
use crate::term::{Inert, Paint, count, inert_line};
use serde_json::Value;
use std::io::Write;

/// A JSON value as a line shows it: a string bare, anything else as JSON.
fn bare(value: &Value) -> String {
    match value {
        Value::String(s) => inert_line(s).into_owned(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

fn snapshot_words(snapshot: SnapshotAgreement) -> &'static str {
    match snapshot {
        SnapshotAgreement::Agrees => "state.json agrees with the journal",
        SnapshotAgreement::Stale => "state.json is stale against the journal",
        SnapshotAgreement::Missing => "state.json not projected yet",
        SnapshotAgreement::NotCompared => "state.json not compared",
    }
}

pub(super) fn status<W: Write>(out: &mut Inert<W>, status: &RecordStatus, json: Option<Stamp>) {
    if let Some(stamp) = json {
        print_keyed(out, "status", stamp, status);
        return;
    }
    let title = status
        .title
        .as_deref()
        .map(|t| format!(" · {}", inert_line(t)))
        .unwrap_or_default();
    let _ = write!(out, "{}{title} · ", status.plan);
    paint_status(out, status.status.word());
    let _ = writeln!(
        out,
        " · {}/{} tasks completed (derived from gate evidence)",
        status.completed, status.total
    );
    let _ = writeln!(
        out,
        "  record plan {}: contract revision {} ({}), {}; {}",
        status.generation,
        bare(&status.contract.revision),
        inert_line(&status.contract.file),
        count(status.events as u64, "journal event", "journal events"),
        snapshot_words(status.snapshot)
    );
    if status.torn {
        let _ = out.paint("  the journal has a torn tail:", Paint::Bad);
        let _ = writeln!(out, " shown as the events before it derive it");
    }
    match &status.approval {
        Some(approval) => {
            let drift = match approval.digest_matches {
                Some(false) => "; the markdown changed since",
                None => "; the markdown could not be read to compare",
                Some(true) => "",
            };
            let _ = writeln!(
                out,
                "  approval: seq {} by {} ({}){drift}",
                bare(&approval.seq),
                bare(&approval.authority),
                bare(&approval.mechanism)
            );
        }
        None => {
            let _ = out.paint("  approval: none cites the live contract", Paint::Bad);
            let _ = writeln!(out);
        }
    }
    for task in &status.tasks {
        let _ = write!(out, "  {:<24} ", inert_line(&task.id));
        paint_status(out, &format!("{:<11}", task.status.word()));
        let _ = writeln!(out, " {}", bare(&task.title));
        for criterion in &task.criteria {
            let state = if criterion.satisfied {
                format!(
                    "satisfied at seq {} ({})",
                    bare(&criterion.via_seq),
                    bare(&criterion.trust)
                )
            } else if criterion.stale_seqs.is_empty() {
                "open".to_owned()
            } else {
                let stale: Vec<String> = criterion.stale_seqs.iter().map(bare).collect();
                format!("open (runs that no longer count: seq {})", stale.join(", "))
            };
            let _ = writeln!(out, "      {}: {state}", bare(&criterion.criterion));
        }
    }
    for invariant in &status.invariants {
        let state = match &invariant.latest {
            Some(latest) => format!(
                "{} at seq {} ({})",
                if latest.passed { "passed" } else { "failed" },
                latest.seq,
                latest.trust.as_deref().unwrap_or("no trust")
            ),
            None => "never evaluated".to_owned(),
        };
        let _ = writeln!(
            out,
            "  invariant {}: {}",
            inert_line(&invariant.id),
            inert_line(&state)
        );
    }
    for delegation in &status.open_delegations {
        let _ = writeln!(
            out,
            "  delegation {} of {} is open",
            inert_line(&delegation.id),
            inert_line(&delegation.task)
        );
    }
}

pub(super) fn next<W: Write>(out: &mut Inert<W>, set: &ReadySet, json: Option<Stamp>) {
    if let Some(stamp) = json {
        print_keyed(out, "next", stamp, set);
        return;
    }
    let _ = write!(out, "{} · ", set.plan);
    paint_status(out, set.status.word());
    let _ = writeln!(
        out,
        " · {}/{} tasks completed · record plan {}",
        set.completed, set.total, set.generation
    );
    match set.action {
        ReadyAction::Done => {
            let _ = writeln!(out, "every task is completed");
            return;
        }
        ReadyAction::Approve => {
            let _ = out.paint("no approval cites the live contract:", Paint::Bad);
            let _ = writeln!(out, " nothing opens the tasks until one does");
            if let Some(step) = &set.approve_step {
                let _ = writeln!(out, "approve it (the approver's name and note):\n  {step}");
            }
        }
        ReadyAction::Work => {}
    }
    let parallel = set.ready.iter().filter(|t| t.parallel_safe).count();
    let _ = out.paint("ready:", Paint::Strong);
    let _ = writeln!(
        out,
        " {} task{}{}",
        set.ready.len(),
        if set.ready.len() == 1 { "" } else { "s" },
        if parallel > 1 {
            format!(" ({parallel} parallel-safe: several agents may take those at once)")
        } else {
            String::new()
        }
    );
    for task in &set.ready {
        let _ = write!(out, "  {:<24} ", inert_line(&task.id));
        paint_status(out, &format!("{:<11}", task.status.word()));
        let safe = if task.parallel_safe {
            " · parallel-safe"
        } else {
            ""
        };
        let open: Vec<String> = task.open_criteria.iter().map(bare).collect();
        let open = if open.is_empty() {
            String::new()
        } else {
            format!(" · open: {}", open.join(", "))
        };
        let _ = writeln!(out, " {}{safe}{open}", bare(&task.title));
    }
    for task in &set.waiting {
        let _ = writeln!(
            out,
            "  {:<24} waits for {}",
            inert_line(&task.id),
            task.waits_for.join(", ")
        );
    }
    let steps: Vec<&String> = set.ready.iter().flat_map(|t| &t.steps).collect();
    if set.action == ReadyAction::Work && !steps.is_empty() {
        let _ = writeln!(out, "run next:");
        for step in steps {
            let _ = writeln!(out, "  {}", inert_line(step));
        }
    }
    // An open criterion whose declared check is no one-argv command gets no line to run as
    // printed: say what to run instead of nothing.
    let working = set.action == ReadyAction::Work;
    for task in set.ready.iter().filter(|_| working) {
        for criterion in task.unprintable.iter().map(|c| inert_line(c)) {
            let _ = writeln!(
                out,
                "criterion {criterion} of {}: its declared check is no one-argv command; run it with dwp run {} --task {} --criterion {criterion} -- <its check>",
                inert_line(&task.id),
                crate::term::shell_word(&set.path),
                inert_line(&task.id)
            );
        }
    }
    for invariant in &set.invariants_to_evaluate {
        let state = match &invariant.latest {
            Some(latest) if latest.passed => format!(
                "passed last at seq {}, before a task in progress started",
                latest.seq
            ),
            Some(latest) => format!("failed at seq {}", latest.seq),
            None => "never evaluated".to_owned(),
        };
        let _ = writeln!(
            out,
            "invariant {}: {state}; a task's completion is confirmed only once it passed in the task's attempt: run its check with dwp run {} --invariant {} -- <its check>",
            inert_line(&invariant.id),
            crate::term::shell_word(&set.path),
            inert_line(&invariant.id)
        );
    }
}

/// The passing facts of a record plan's verdict, under its header.
pub(super) fn facts<W: Write>(out: &mut Inert<W>, facts: &RecordFacts) {
    let _ = writeln!(
        out,
        "  record plan {}: live contract {} (revision {}), {}",
        facts.generation,
        inert_line(&facts.contract.file),
        bare(&facts.contract.revision),
        count(facts.events as u64, "journal event", "journal events")
    );
    let approval = if facts.approved {
        "an approval cites the live contract id"
    } else {
        "no approval cites the live contract id"
    };
    let _ = writeln!(out, "  {approval}; {}", snapshot_words(facts.snapshot));
    let _ = writeln!(
        out,
        "  {}/{} tasks completed (derived from gate evidence)",
        facts.completed, facts.total
    );
}

pub(super) fn reconcile<W: Write>(
    out: &mut Inert<W>,
    report: &crate::commands::reconcile::RecordReconcileReport,
    json: Option<Stamp>,
) {
    if let Some(stamp) = json {
        print_keyed(out, "reconcile", stamp, report);
        return;
    }
    mended(out, &report.repairs);
    let plan = std::path::Path::new(&report.plan);
    if report.written {
        let _ = out.paint("reconciled:", Paint::Good);
        let _ = writeln!(
            out,
            " {} · state.json regenerated from the journal · sha256 {}",
            report.plan, report.new_sha256
        );
    } else if report.in_sync {
        let _ = out.paint("in sync:", Paint::Good);
        let _ = writeln!(
            out,
            " {} · state.json is the journal's projection · sha256 {}",
            report.plan, report.new_sha256
        );
    } else if let Some(what) = &report.to_mend {
        let _ = out.paint("to mend:", Paint::Bad);
        let _ = writeln!(
            out,
            " {} · its journal has {} (`dwp reconcile {} --write` mends it, records a journal_repair and regenerates state.json)",
            report.plan,
            inert_line(what),
            crate::term::path_word(plan)
        );
    } else {
        let _ = out.paint("stale:", Paint::Bad);
        let _ = writeln!(
            out,
            " {} · state.json is not the journal's projection (the journal wins: `dwp reconcile {} --write` regenerates it)",
            report.plan,
            crate::term::path_word(plan)
        );
    }
}

pub(super) fn update<W: Write>(
    out: &mut Inert<W>,
    report: &crate::commands::update::RecordUpdateReport,
    json: Option<Stamp>,
) {
    use crate::commands::update::RecordTransition;
    if let Some(stamp) = json {
        print_keyed(out, "update", stamp, report);
        return;
    }
    mended(out, &report.repairs);
    let seq = report.seq.map(|s| s.to_string()).unwrap_or_default();
    match (report.transition, report.unchanged) {
        (RecordTransition::Start, false) => {
            let _ = out.paint(&format!("{} started", report.task), Paint::Good);
            let _ = writeln!(out, " · task_start at seq {seq} · {}", report.plan);
        }
        (RecordTransition::Start, true) => {
            let _ = out.paint(&format!("{} already started", report.task), Paint::Muted);
            let _ = writeln!(
                out,
                " · the task_start at seq {seq} has this work tree: nothing written · {}",
                report.plan
            );
        }
        (RecordTransition::Complete, _) => {
            let _ = out.paint(&format!("{} completed", report.task), Paint::Good);
            let _ = writeln!(
                out,
                " · derived from its gate evidence: nothing written · {}",
                report.plan
            );
        }
    }
}

pub(super) fn approve<W: Write>(
    out: &mut Inert<W>,
    report: &crate::commands::approve::RecordApproveReport,
    json: Option<Stamp>,
) {
    if let Some(stamp) = json {
        print_keyed(out, "approve", stamp, report);
        return;
    }
    let short: String = report.contract_id.chars().take(12).collect();
    if report.unchanged {
        let _ = out.paint("already approved:", Paint::Muted);
    } else {
        let _ = out.paint("approved:", Paint::Good);
    }
    let _ = writeln!(
        out,
        " {} · contract {short} by {} ({}) · approval at seq {} · markdown digest {}",
        report.plan,
        inert_line(&report.authority),
        report.mechanism,
        report.seq,
        report.plan_digest
    );
}

pub(super) fn init<W: Write>(
    out: &mut Inert<W>,
    report: &crate::commands::init::RecordInitReport,
    json: Option<Stamp>,
) {
    use crate::steps::record_materialize::Step;
    if let Some(stamp) = json {
        print_keyed(out, "init", stamp, report);
        return;
    }
    let word = |step: Step| match step {
        Step::Written => "written",
        Step::Found => "found",
    };
    let short: String = report.contract_id.chars().take(12).collect();
    let _ = out.paint("materialized:", Paint::Good);
    let _ = writeln!(
        out,
        " {} · record plan {} · manifest.json {} · contract.json {short} {} · approval at seq {} {}",
        report.plan,
        report.generation,
        word(report.manifest),
        word(report.contract),
        report.approval_seq,
        word(report.approval)
    );
}

pub(super) fn new<W: Write>(
    out: &mut Inert<W>,
    outcome: &crate::commands::new::RecordNewOutcome,
    json: Option<Stamp>,
) {
    if let Some(stamp) = json {
        print_keyed(out, "new", stamp, outcome);
        return;
    }
    let count = outcome.tasks.len();
    let _ = write!(out, "{} ", inert_line(&outcome.path));
    let _ = out.paint("created:", Paint::Good);
    let _ = writeln!(
        out,
        " record plan {} (markdown and a contract draft, not yet stamped or approved), {count} task{}",
        outcome.generation,
        if count == 1 { "" } else { "s" }
    );
    for task in &outcome.tasks {
        let _ = writeln!(
            out,
            "  {} · {}: {} ({})",
            task.id,
            task.criterion,
            inert_line(&task.title),
            task.file
        );
    }
    let _ = writeln!(
        out,
        "write before approval (placeholders `To be written before approval: ...` stand there now): {}; then the user stamps and approves it with a note of theirs, and `dwp next` says what to run:",
        outcome.placeholders.join(", ")
    );
    for line in &outcome.run {
        let _ = writeln!(out, "  {}", inert_line(line));
    }
}

pub(super) fn run<W: Write>(
    out: &mut Inert<W>,
    report: &crate::commands::run::RecordRunReport,
    json: Option<Stamp>,
) {
    if let Some(stamp) = json {
        print_keyed(out, "run", stamp, report);
        return;
    }
    mended(out, &report.repairs);
    let verdict = match report.exit_code {
        0 => ("passes", Paint::Good),
        _ => ("fails", Paint::Bad),
    };
    let (subject, check) = match (&report.task, &report.criterion, &report.invariant) {
        (Some(task), Some(criterion), _) => (format!("{task} · {criterion}"), "gate"),
        (_, _, Some(invariant)) => (invariant.clone(), "check"),
        _ => (String::new(), "command"),
    };
    let _ = write!(
        out,
        "{subject} · {check} `{}` ",
        inert_line(&report.command)
    );
    let _ = out.paint(verdict.0, verdict.1);
    let _ = writeln!(
        out,
        " ({}) · observed by dwp · {} at seq {}",
        report.ended, report.event, report.seq
    );
    if let Some(criterion) = &report.criterion {
        let state = match (report.satisfied, report.exit_code) {
            (true, _) => "satisfied by this run",
            (false, 0) => "open: it does not accept observed evidence",
            (false, _) => "open: this run did not pass",
        };
        let _ = writeln!(out, "  {criterion}: {state}");
    }
    if let Some(statement) = &report.statement {
        let _ = writeln!(out, "  recorded: {}", inert_line(statement));
    }
    let _ = writeln!(out, "  ran in: {}", inert_line(&report.cwd));
    let log = std::path::Path::new(&report.plan).join(&report.log);
    let kept = if report.truncated {
        ", the tail of each kept"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "  log: {} ({} bytes of stdout, {} of stderr{kept}) sha256 {}",
        inert_line(&log.display().to_string()),
        report.stdout_bytes,
        report.stderr_bytes,
        report.log_sha256
    );
}

pub(super) fn amend<W: Write>(
    out: &mut Inert<W>,
    report: &crate::commands::amend::RecordAmendReport,
    json: Option<Stamp>,
) {
    use crate::steps::record_materialize::Step;
    if let Some(stamp) = json {
        print_keyed(out, "amend", stamp, report);
        return;
    }
    mended(out, &report.repairs);
    let short = |id: &str| id.chars().take(12).collect::<String>();
    let Some(steps) = &report.steps else {
        let _ = out.paint("unchanged:", Paint::Muted);
        let _ = writeln!(
            out,
            " {} · the live contract (revision {}, {} {}) already is this draft: nothing written",
            report.plan,
            report.revision,
            report.contract_file,
            short(&report.contract_id)
        );
        return;
    };
    let word = |step: Step| match step {
        Step::Written => "written",
        Step::Found => "found",
    };
    let _ = out.paint("amended:", Paint::Good);
    let _ = writeln!(
        out,
        " {} · revision {} contract {} (parent {}) · by {} ({})",
        report.plan,
        report.revision,
        short(&report.contract_id),
        short(report.parent_contract_id.as_deref().unwrap_or("-")),
        inert_line(&report.authority),
        report.mechanism.as_deref().unwrap_or("-")
    );
    let pending = crate::plan::record::pending_file(report.revision);
    let seq = |seq: Option<i64>| seq.map_or("-".to_owned(), |s| s.to_string());
    let _ = writeln!(
        out,
        "  {} {} (contract.json's bytes begin the chain) · {pending} {}",
        crate::plan::record::revision_file(1),
        word(steps.chain),
        word(steps.pending)
    );
    let _ = writeln!(
        out,
        "  amendment at seq {} {} · approval of the new revision at seq {} {} · {} live",
        seq(report.amendment_seq),
        word(steps.amendment),
        seq(report.approval_seq),
        word(steps.approval),
        report.contract_file
    );
    let listed = |ids: &[String]| match ids {
        [] => "none".to_owned(),
        ids => inert_line(&ids.join(", ")).into_owned(),
    };
    let _ = writeln!(
        out,
        "  evidence invalidated: {} (earlier gate runs no longer count) · affected tasks: {}",
        listed(&report.invalidated),
        listed(&report.affected_tasks)
    );
}

/// One line per mend the journal's writer made on opening it (a torn tail cut, a newline put
/// back), each recorded by a `journal_repair` event and a PROGRESS.md line.
fn mended<W: Write>(out: &mut Inert<W>, repairs: &[crate::steps::record_writer::Repair]) {
    for repair in repairs {
        let _ = out.paint("mended:", Paint::Unsure);
        let _ = writeln!(
            out,
            " journal.ndjson at byte {} ({}) · journal_repair at seq {} · PROGRESS.md appended",
            repair.byte_offset,
            inert_line(&repair.cause),
            repair.seq
        );
    }
}
