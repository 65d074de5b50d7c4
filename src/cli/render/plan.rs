//! The renderers of the plan commands (validate, update, amend, approve, init, migrate, lock,
//! reconcile, status, next, new, verify, finalize): each writes one outcome as human text or as its JSON document.

use super::{Format, Stamp, envelope, print_json, print_keyed};
use crate::commands::amend::AmendOutcome;
use crate::commands::approve::{ApproveOutcome, ReadmeEdit};
use crate::commands::init::InitOutcome;
use crate::commands::migrate::MigrateOutcome;
use crate::commands::new::NewOutcome;
use crate::commands::next::{Action, NextOutcome};
use crate::commands::reconcile::ReconcileReport;
use crate::commands::status::{LineSummary, PlanLine, Summary};
use crate::commands::update::{BoxNote, UpdateOutcome};
use crate::commands::validate::Validation;
use crate::findings::{Finding, Verdict};
use crate::plan::model::TaskStatus;
use crate::store::lock_dir::{LockInfo, Recovery};
use crate::term::{Inert, Paint, inert_line};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

fn write_findings<W: Write>(out: &mut Inert<W>, findings: &[Finding]) {
    for finding in findings {
        let _ = writeln!(out, "{}", finding.render());
        if let Some(hint) = &finding.hint {
            hint_line(out, "  ", hint);
        }
    }
}

pub(super) fn validate<W: Write>(out: &mut Inert<W>, results: &[Validation], json: Option<Stamp>) {
    let verdict = Verdict::worst(results.iter().map(Validation::verdict));
    if let Some(stamp) = json {
        let findings: Vec<&Finding> = results.iter().flat_map(|r| &r.findings).collect();
        let targets: Vec<_> = results
            .iter()
            .map(|r| json!({"target": r.target, "verdict": r.verdict(), "summary": r.summary}))
            .collect();
        let document = envelope(
            "validate",
            stamp,
            json!({
            "verdict": verdict,
            "targets": targets,
            "findings": findings}),
        );
        print_json(out, &document);
    } else {
        for result in results {
            write_findings(out, &result.findings);
            let count = result.findings.len();
            let plural = if count == 1 { "" } else { "s" };
            let _ = match result.verdict() {
                Verdict::Valid => {
                    let _ = out.paint("valid:", Paint::Good);
                    writeln!(out, " {}", result.summary)
                }
                Verdict::Invalid => {
                    let _ = out.paint("invalid:", Paint::Bad);
                    writeln!(out, " {} ({count} problem{plural})", result.target)
                }
                Verdict::Unverified => {
                    let _ = out.paint("UNVERIFIED:", Paint::Unsure);
                    writeln!(
                        out,
                        " {} (a check could not be made; no claim either way)",
                        result.target
                    )
                }
            };
        }
    }
}

pub(super) fn run<W: Write>(
    out: &mut Inert<W>,
    run: &crate::commands::run::RunOutcome,
    json: Option<Stamp>,
) {
    if run.ran_no_tests {
        let mut err = super::super::stderr();
        let _ = write!(err, "dwp run: ");
        let _ = err.paint("warning:", Paint::Unsure);
        let _ = writeln!(
            err,
            " `{}` exited 0 but ran no tests, so the gate is recorded as failing (summary: {}; log {})",
            run.gate.command,
            run.summary
                .as_deref()
                .unwrap_or(crate::rules::observed::NO_OUTPUT),
            run.log
        );
        if let Some(hint) = &run.hint {
            super::super::write_hint(&mut err, "  ", hint);
        }
    }
    if let Some(stamp) = json {
        print_keyed(out, "run", stamp, run);
        return;
    }
    let verdict = match run.gate.passes {
        true => ("passes", Paint::Good),
        false => ("fails", Paint::Bad),
    };
    let nothing = if !run.gate.passes && run.gate.exit_code == Some(0) {
        ", but it selected or ran no test"
    } else {
        ""
    };
    let _ = write!(out, "task {} · gate `{}` ", run.task, run.gate.command);
    let _ = out.paint(verdict.0, verdict.1);
    let _ = writeln!(out, " ({}{nothing}) · observed by dwp", run.ended);
    let _ = writeln!(
        out,
        "  summary: {}",
        run.summary
            .as_deref()
            .unwrap_or(crate::rules::observed::NO_OUTPUT)
    );
    let kept = if run.truncated {
        format!("{} bytes, the tail kept", run.output_bytes)
    } else {
        format!("{} bytes", run.output_bytes)
    };
    let _ = writeln!(out, "  ran in: {}", run.cwd.display());
    // The log from where the user stands (the plan folder's own name for it inside the plan).
    let log = match run.plan_dir.as_os_str() == "." {
        true => PathBuf::from(&run.log),
        false => run.plan_dir.join(&run.log),
    };
    let _ = writeln!(
        out,
        "  log: {} ({kept}) sha256 {}",
        log.display(),
        run.log_sha256
    );
    let _ = writeln!(out, "  state.json sha256 {}", run.new_sha256);
}

pub(super) fn update<W: Write>(
    out: &mut Inert<W>,
    outcome: &UpdateOutcome,
    target: &Path,
    gates_from: &[crate::commands::r#loop::gates::GateNote],
    json: Option<Stamp>,
) {
    let asserted: Vec<String> = gates_from
        .iter()
        .filter_map(|note| {
            Some(format!(
                "outcome {} of {} is recorded as an asserted gate (`{}`): {}",
                note.outcome,
                note.file,
                note.command,
                note.why.as_deref()?
            ))
        })
        .collect();
    super::warn("update", &asserted);
    if outcome.markdown == Some(BoxNote::Unchecked) {
        let plan = crate::term::path_word(target);
        let id = outcome.task;
        super::warn(
            "update",
            &[format!(
                "task {id} is completed in state.json but its README box is unchecked, so the plan is not conformant: tick it with `dwp update {plan} --task {id} --status completed --tick`; if the task is not done, `dwp reconcile {plan} --write` reopens it in state"
            )],
        );
    }
    if let Some(stamp) = json {
        // The outcome's fields, and what became of each `--gates-from` outcome when any.
        let mut payload = json!(outcome);
        if !gates_from.is_empty() {
            payload["gates_from"] = json!(gates_from);
        }
        print_keyed(out, "update", stamp, payload);
        return;
    }
    if let Some(diff) = &outcome.diff {
        let _ = write!(out, "{diff}");
    }
    let suffix = match (outcome.changed, outcome.dry_run) {
        (false, _) => " (no change)",
        (true, true) => " (dry run: nothing written)",
        (true, false) => "",
    };
    let _ = write!(out, "task {} → ", outcome.task);
    paint_status(out, outcome.status.as_str());
    let _ = writeln!(
        out,
        " · {}/{} completed · plan {} · sha256 {}{suffix}",
        outcome.completed_count, outcome.task_count, outcome.plan_status, outcome.new_sha256
    );
    if outcome.markdown == Some(BoxNote::Ticked) {
        let _ = writeln!(
            out,
            "README.md: task {}'s box ticked, Plan Status recounted",
            outcome.task
        );
    }
    if let Some(file) = &outcome.log_filled {
        let _ = writeln!(
            out,
            "{file}: task {}'s Completion & Log: Status, Timestamp and Gate record written where they were not",
            outcome.task
        );
    }
    for note in gates_from {
        if let (Some(log), Some(sha256)) = (&note.log, &note.log_sha256) {
            let _ = writeln!(
                out,
                "  gate `{}` observed by dwp (outcome {}): log {log} sha256 {sha256}",
                note.command, note.outcome
            );
        }
    }
    if let Some(receipt) = &outcome.receipt {
        let _ = out.paint("plan published", Paint::Good);
        let _ = writeln!(out, " · receipt {receipt}");
    }
}

pub(super) fn amend<W: Write>(out: &mut Inert<W>, outcome: &AmendOutcome, json: Option<Stamp>) {
    if let Some(stamp) = json {
        print_keyed(out, "amend", stamp, outcome);
        return;
    }
    if outcome.dry_run {
        dry_run(out, outcome.diff.as_deref());
        return;
    }
    let verb = if outcome.appended {
        "appended to"
    } else {
        "already in (not appended again)"
    };
    let _ = writeln!(
        out,
        "amendment {} of task {} ({}, {}, authority {}) {verb} {}; mirrored in PROGRESS.md",
        outcome.number,
        outcome.task,
        outcome.date,
        outcome.disposition.as_str(),
        outcome.authority.as_str(),
        outcome.record
    );
    if !outcome.invalidated.is_empty() {
        let commands: Vec<String> = outcome
            .invalidated
            .iter()
            .map(|c| format!("`{c}`"))
            .collect();
        let _ = out.paint("evidence invalidated:", Paint::Unsure);
        let _ = writeln!(out, " {}", commands.join(", "));
    }
    let change = if outcome.state_changed {
        ""
    } else {
        " (no change)"
    };
    let _ = write!(out, "task {} → ", outcome.task);
    paint_status(out, outcome.status.as_str());
    let _ = writeln!(out, " · sha256 {}{change}", outcome.sha256);
    match (&outcome.superseded_receipt, &outcome.republish) {
        (Some(aside), Some(republish)) => {
            let _ = writeln!(
                out,
                "the amendment changed files the publication receipt covers: it moved to {aside}; `{republish}` publishes the plan again"
            );
        }
        (Some(aside), None) => {
            let _ = writeln!(
                out,
                "the plan is no longer completed: its publication receipt moved to {aside}; `dwp finalize` writes a new one when it is completed again"
            );
        }
        _ => {}
    }
}

pub(super) fn approve<W: Write>(out: &mut Inert<W>, outcome: &ApproveOutcome, json: Option<Stamp>) {
    if let Some(stamp) = json {
        print_keyed(out, "approve", stamp, outcome);
        return;
    }
    if let Some(diff) = &outcome.diff {
        let _ = write!(out, "{diff}");
    }
    if !outcome.changed {
        let _ = writeln!(
            out,
            "{} is already {}: state.json and {}:{} agree · sha256 {} (no change)",
            outcome.plan, outcome.approval, outcome.readme, outcome.readme_line, outcome.new_sha256
        );
        return;
    }
    let previous = outcome
        .previous
        .map_or("absent".to_owned(), |a| a.to_string());
    let readme = match outcome.readme_edit {
        ReadmeEdit::Unchanged => "already says so",
        ReadmeEdit::Updated => "updated",
        ReadmeEdit::Inserted => "added",
    };
    let suffix = if outcome.dry_run {
        " (dry run: nothing written)"
    } else {
        ""
    };
    let _ = write!(out, "{} ", outcome.plan);
    let _ = out.paint(&outcome.approval.to_string(), Paint::Good);
    let _ = writeln!(
        out,
        " by {} at {} · state.json approval {previous} → {} · Approval row {readme} ({}:{}) · PROGRESS.md appended · sha256 {}{suffix}",
        outcome.by,
        outcome.at,
        outcome.approval,
        outcome.readme,
        outcome.readme_line,
        outcome.new_sha256
    );
}

pub(super) fn init<W: Write>(out: &mut Inert<W>, outcome: &InitOutcome, json: Option<Stamp>) {
    if let Some(stamp) = json {
        print_keyed(out, "init", stamp, outcome);
        return;
    }
    if outcome.dry_run {
        dry_run(out, outcome.diff.as_deref());
        return;
    }
    let _ = write!(out, "{} ", outcome.plan);
    let _ = out.paint("materialized:", Paint::Good);
    let _ = writeln!(
        out,
        " v5, DWP spec {}{}, {}, {} tasks ({} completed as the README's boxes record), {}, {}, approval {}",
        outcome.spec_version,
        if outcome.standard_from == "README" {
            ""
        } else {
            " (assumed from --standard: the README declares none)"
        },
        outcome.plan_format,
        outcome.task_count,
        outcome.completed,
        outcome.archetype,
        outcome.rigor,
        outcome.approval
    );
    let _ = writeln!(
        out,
        "manifest.json sha256 {} · state.json sha256 {}",
        outcome.manifest_sha256, outcome.state_sha256
    );
    if !outcome.created.is_empty() {
        let _ = writeln!(
            out,
            "created (absent before): {}",
            outcome.created.join(", ")
        );
    }
    if !outcome.completed_without_gates.is_empty() {
        let _ = writeln!(
            out,
            "completed without a recorded gate (the log has no `Gate record:` line): task {}; `dwp verify` will ask for evidence",
            id_list(&outcome.completed_without_gates)
        );
    }
    if !outcome.completed_at_init.is_empty() {
        let _ = writeln!(
            out,
            "completed at the time of `dwp init` (the log has no readable `Timestamp:` line): task {}",
            id_list(&outcome.completed_at_init)
        );
    }
    if outcome.task_count > 0 && outcome.completed == outcome.task_count {
        let _ = writeln!(
            out,
            "every box is checked: the plan is complete in the markdown. `dwp verify {plan}` lists what its publication still needs; `dwp finalize {plan}` publishes it with a receipt once it is conformant",
            plan = crate::term::shell_word(&outcome.path)
        );
    }
}

/// A writer's `--dry-run`: the diff of every file it would write, and that nothing was.
fn dry_run(out: &mut impl Write, diff: Option<&str>) {
    let _ = write!(out, "{}", diff.unwrap_or_default());
    let _ = writeln!(out, "dry run: every check passed, nothing written");
}

/// `1, 3, 4`.
fn id_list(ids: &[u64]) -> String {
    ids.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn migrate<W: Write>(out: &mut Inert<W>, outcome: &MigrateOutcome, json: Option<Stamp>) {
    if let Some(stamp) = json {
        print_keyed(out, "migrate", stamp, outcome);
        return;
    }
    if outcome.dry_run {
        dry_run(out, outcome.diff.as_deref());
        return;
    }
    let (word, what) = match outcome.changed {
        true => (
            ("migrated", Paint::Good),
            format!(
                " {} → {} (recorded in PROGRESS.md)",
                outcome.from, outcome.to
            ),
        ),
        false => (
            ("is already", Paint::Muted),
            format!(" {} (no change)", outcome.to),
        ),
    };
    let _ = write!(out, "{} ", outcome.plan);
    let _ = out.paint(word.0, word.1);
    let _ = writeln!(
        out,
        "{what} · manifest.json sha256 {} · state.json sha256 {}",
        outcome.manifest_sha256, outcome.state_sha256
    );
}

pub(super) fn lock_status<W: Write>(
    out: &mut Inert<W>,
    lock: &Path,
    info: Option<&LockInfo>,
    json: Option<Stamp>,
) {
    if let Some(stamp) = json {
        let document = envelope(
            "lock status",
            stamp,
            json!({
            "lock": lock,
            "held": info.is_some(),
            "holder": info}),
        );
        print_json(out, &document);
        return;
    }
    let _ = match info {
        None => {
            let _ = out.paint("free:", Paint::Good);
            writeln!(out, " {} is not held", lock.display())
        }
        Some(info) => {
            let _ = out.paint("held:", Paint::Unsure);
            let _ = writeln!(out, " {} by {}", lock.display(), info.describe());
            match &info.owner_problem {
                Some(problem) => writeln!(out, "  {problem}"),
                None => Ok(()),
            }
        }
    };
}

pub(super) fn lock_recover<W: Write>(
    out: &mut Inert<W>,
    lock: &Path,
    recovery: Option<&Recovery>,
    json: Option<Stamp>,
) {
    if let Some(stamp) = json {
        let document = envelope(
            "lock recover",
            stamp,
            json!({
            "lock": lock,
            "removed": recovery.is_some(),
            "recovery": recovery}),
        );
        print_json(out, &document);
        return;
    }
    let _ = match recovery {
        None => {
            let _ = out.paint("free:", Paint::Good);
            writeln!(out, " {} is not held; nothing to recover", lock.display())
        }
        Some(r) => {
            let _ = writeln!(
                out,
                "inspected: {} held by {}",
                lock.display(),
                r.inspected.describe()
            );
            let _ = out.paint("removed:", Paint::Good);
            writeln!(out, " {}", r.grounds)
        }
    };
}

pub(super) fn reconcile<W: Write>(
    out: &mut Inert<W>,
    report: &ReconcileReport,
    write: bool,
    json: Option<Stamp>,
) {
    if let Some(stamp) = json {
        print_keyed(out, "reconcile", stamp, report);
        return;
    }
    for d in &report.desync {
        let line = d.line.map(|l| format!(":{l}")).unwrap_or_default();
        let task = d.task.map(|t| format!("task {t}: ")).unwrap_or_default();
        let _ = writeln!(
            out,
            "{}{line}: {task}{}: {}",
            report.readme, d.direction, d.message
        );
    }
    if let Some(diff) = &report.diff {
        let _ = write!(out, "{diff}");
    }
    for d in &report.remaining {
        let line = d.line.map(|l| format!(":{l}")).unwrap_or_default();
        let _ = writeln!(
            out,
            "  still to fix in the markdown: {}{line}: {}",
            report.readme, d.message
        );
    }
    let changed_tasks = |out: &mut dyn Write| {
        for change in &report.changes {
            let _ = writeln!(
                out,
                "  task {}: {} — {}",
                change.task, change.direction, change.what
            );
        }
    };
    if report.dry_run && !report.changes.is_empty() {
        changed_tasks(out);
        let _ = writeln!(out, "dry run: every check passed, nothing written");
        return;
    }
    if report.written {
        changed_tasks(out);
        let _ = out.paint("reconciled:", Paint::Good);
        let _ = writeln!(
            out,
            " {} · state.json regenerated from the markdown · PROGRESS.md appended · sha256 {}",
            report.plan, report.new_sha256
        );
        if let Some(aside) = &report.superseded_receipt {
            let next = match &report.republish {
                Some(republish) => format!("`{republish}` publishes the plan again"),
                None => "`dwp finalize` writes a new one when it is completed again".to_owned(),
            };
            let _ = writeln!(
                out,
                "the state the publication receipt covers changed: the receipt moved to {aside}; {next}"
            );
        }
    } else if report.in_sync || write {
        let _ = out.paint("in sync:", Paint::Good);
        let _ = writeln!(
            out,
            " {} · state.json follows the markdown · sha256 {}",
            report.plan, report.new_sha256
        );
    } else {
        let plan = Path::new(&report.readme)
            .parent()
            .filter(|dir| !dir.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let next = match write {
            true => String::new(),
            false => format!(
                " (the markdown wins: `dwp reconcile {} --write` regenerates state.json)",
                crate::term::path_word(plan)
            ),
        };
        let _ = out.paint("desync:", Paint::Bad);
        let _ = writeln!(
            out,
            " {} · {}{next}",
            report.plan,
            crate::term::count(report.desync.len() as u64, "disagreement", "disagreements")
        );
    }
}

/// A task's or a plan's status word (padded or not), in its colour (`pending` plain).
pub(super) fn paint_status<W: Write>(out: &mut Inert<W>, status: &str) {
    let _ = match status_paint(status.trim_end()) {
        Some(paint) => out.paint(status, paint),
        None => out.write_all(status.as_bytes()),
    };
}

fn status_paint(status: &str) -> Option<Paint> {
    match status {
        "completed" => Some(Paint::Good),
        "in_progress" => Some(Paint::Unsure),
        "blocked" => Some(Paint::Bad),
        "skipped" => Some(Paint::Muted),
        _ => None,
    }
}

/// `INDENT hint: TEXT`, the prefix painted.
fn hint_line<W: Write>(out: &mut Inert<W>, indent: &str, hint: &str) {
    let _ = write!(out, "{indent}");
    let _ = out.paint("hint:", Paint::Hint);
    let _ = writeln!(out, " {hint}");
}

fn progress_bar(done: u64, total: u64) -> String {
    const WIDTH: u64 = 20;
    let filled = (done * WIDTH).checked_div(total).unwrap_or(0).min(WIDTH);
    format!(
        "[{}{}] {done}/{total}",
        "#".repeat(filled as usize),
        ".".repeat((WIDTH - filled) as usize)
    )
}

/// Most tasks a `--json` summary lists, so its size stays bounded on huge plans.
const JSON_TASK_LIMIT: usize = 50;

pub(super) fn status<W: Write>(out: &mut Inert<W>, summary: &Summary, json: Option<Stamp>) {
    if let Some(stamp) = json {
        let open: Vec<_> = summary
            .tasks
            .iter()
            .filter(|t| crate::commands::status::is_open(t.status))
            .take(JSON_TASK_LIMIT)
            .collect();
        let desync = summary
            .desync
            .as_ref()
            .map(|d| json!({"count": d.len(), "first": d.iter().take(10).collect::<Vec<_>>()}));
        let mut payload = json!({
            "plan": summary.plan,
            "source": summary.source,
            "title": summary.title,
            "status": summary.status,
            "completed": summary.completed,
            "total": summary.total,
            "current": summary.current,
            "checkpoint": summary.checkpoint,
            "blocker": summary.blocker,
            "open_tasks": open,
            "open_tasks_omitted": summary.tasks.iter().filter(|t| crate::commands::status::is_open(t.status)).count().saturating_sub(JSON_TASK_LIMIT),
            "desync": desync});
        if let Some(lock) = &summary.lock {
            payload["lock"] = json!(lock);
        }
        if let Some(why) = &summary.ignored_state {
            payload["ignored_state"] = json!(why);
        }
        print_keyed(out, "status", stamp, payload);
        return;
    }
    // Each field read from the plan stays on its line (a newline in a title is `\u000a`).
    let status = summary.status.as_str();
    let title = summary.title.as_deref().unwrap_or(&summary.plan);
    let _ = out.paint(&inert_line(title), Paint::Strong);
    let _ = writeln!(out, " — {}", summary.plan);
    paint_status(out, status);
    let _ = writeln!(out, " {}", progress_bar(summary.completed, summary.total));
    if let Some(current) = &summary.current {
        let _ = writeln!(
            out,
            "current: task {}: {}",
            current.id,
            inert_line(&current.title)
        );
    }
    if let Some(c) = &summary.checkpoint {
        let step = c
            .step
            .as_deref()
            .map(|s| format!(" at {}", inert_line(s)))
            .unwrap_or_default();
        let note = c
            .note
            .as_deref()
            .map(|n| format!(": {}", inert_line(n)))
            .unwrap_or_default();
        let _ = writeln!(out, "checkpoint: task {}{step} ({}){note}", c.task, c.at);
    }
    if let Some(lock) = &summary.lock {
        let gone = match lock.gone {
            true => format!(
                "; its owner is gone: `dwp lock recover {}` removes it",
                crate::term::path_word(&summary.dir)
            ),
            false => String::new(),
        };
        let _ = writeln!(out, "lock: held by {}{gone}", inert_line(&lock.holder));
    }
    if let Some(b) = &summary.blocker {
        let needs = b
            .needs
            .as_deref()
            .map(|n| format!("; needs: {}", inert_line(n)))
            .unwrap_or_default();
        let _ = out.paint("BLOCKED", Paint::Alarm);
        let _ = writeln!(
            out,
            " task {} since {}: {}{needs}",
            b.task,
            b.since,
            inert_line(&b.reason)
        );
    }
    let _ = writeln!(out);
    for task in &summary.tasks {
        status_task_line(out, task);
    }
    let _ = writeln!(out);
    if let Some(why) = &summary.ignored_state {
        let _ = writeln!(out, "{why}");
    } else if summary.source == crate::commands::status::Source::Markdown {
        let _ = writeln!(
            out,
            "no state layer: shown from the markdown (`dwp init` materializes manifest.json and state.json)"
        );
    }
    let _ = match &summary.desync {
        None => writeln!(out, "desync: not checked (README.md could not be read)"),
        Some(d) if d.is_empty() && summary.source == crate::commands::status::Source::Markdown => {
            writeln!(out, "the task list reads clean")
        }
        Some(d) if d.is_empty() => writeln!(out, "markdown and state agree"),
        Some(d) => {
            let first = &d[0];
            let (word, what, next) = match summary.source {
                crate::commands::status::Source::State => {
                    ("desync", ["disagreement", "disagreements"], "dwp reconcile")
                }
                crate::commands::status::Source::Markdown => {
                    ("task list", ["problem", "problems"], "dwp verify")
                }
            };
            let _ = out.paint(word, Paint::Bad);
            writeln!(
                out,
                ": {}, first: {}{}: {} ({next})",
                crate::term::count(d.len() as u64, what[0], what[1]),
                first.direction,
                first
                    .line
                    .map(|l| format!(" at README.md:{l}"))
                    .unwrap_or_default(),
                first.message
            )
        }
    };
}

/// `   3  in_progress  Title  [cargo test pass, make lint FAIL]`.
fn status_task_line<W: Write>(out: &mut Inert<W>, task: &crate::commands::status::TaskSummary) {
    let status = task.status.as_str();
    let _ = write!(out, "{:>4}  ", task.id);
    // Pad before colouring: escape codes would count as width.
    paint_status(out, &format!("{status:<11}"));
    let _ = write!(out, "  {}", inert_line(&task.title));
    for (i, gate) in task.gates.iter().enumerate() {
        let _ = write!(
            out,
            "{}{} ",
            if i == 0 { "  [" } else { ", " },
            inert_line(&gate.command)
        );
        let _ = match (gate.invalidated, gate.passes) {
            (true, _) => out.paint("invalidated", Paint::Muted),
            (false, true) => out.paint("pass", Paint::Good),
            (false, false) => out.paint("FAIL", Paint::Bad),
        };
        if gate.observed {
            let _ = write!(out, " (observed)");
        }
    }
    let _ = writeln!(out, "{}", if task.gates.is_empty() { "" } else { "]" });
}

pub(super) fn status_all<W: Write>(out: &mut Inert<W>, lines: &[PlanLine], json: Option<Stamp>) {
    if let Some(stamp) = json {
        let plans: Vec<_> = lines.iter().map(|l| match &l.summary {
            Ok(LineSummary::Plan(s)) => json!({"plan": s.plan, "status": s.status, "completed": s.completed, "total": s.total,
                "current": s.current.as_ref().map(|c| c.id), "blocked": s.blocker.is_some(),
                "desync": s.desync.as_ref().map(Vec::len)}),
            Ok(LineSummary::Record(r)) => json!({"plan": r.plan, "status": r.status, "completed": r.completed,
                "total": r.total, "current": null, "blocked": false, "desync": null, "generation": r.generation}),
            Err(e) => json!({"dir": l.dir, "error": e.to_string()}),
        }).collect();
        print_json(out, &envelope("status", stamp, json!({ "plans": plans })));
        return;
    }
    if lines.is_empty() {
        let _ = writeln!(out, "no plans under .dwp/plans/");
    }
    for line in lines {
        let name = &line.name;
        let _ = match &line.summary {
            Ok(LineSummary::Record(r)) => {
                let _ = write!(out, "{name:<40} ");
                paint_status(out, &format!("{:<11}", r.status.word()));
                let working: Vec<&str> = r
                    .tasks
                    .iter()
                    .filter(|t| {
                        t.status == crate::rules::record::projection::TaskStatus::InProgress
                    })
                    .map(|t| t.id.as_str())
                    .collect();
                writeln!(
                    out,
                    " {:>7}  record plan {}{}",
                    format!("{}/{}", r.completed, r.total),
                    r.generation,
                    if working.is_empty() {
                        String::new()
                    } else {
                        format!(", at work: {}", working.join(", "))
                    }
                )
            }
            Ok(LineSummary::Plan(s)) => {
                let current = s
                    .current
                    .as_ref()
                    .map(|c| format!("task {}: {}", c.id, c.title))
                    .unwrap_or_default();
                let desync = match &s.desync {
                    Some(d) if !d.is_empty() => format!("  desync {}", d.len()),
                    _ => String::new(),
                };
                let _ = write!(out, "{name:<40} ");
                paint_status(out, &format!("{:<11}", s.status.as_str()));
                writeln!(
                    out,
                    " {:>7}  {current}{desync}",
                    format!("{}/{}", s.completed, s.total)
                )
            }
            // One short line: `dwp status PLAN` or `dwp verify PLAN` tells the whole of it.
            Err(e) => {
                let first = e.to_string();
                let first = first.lines().next().unwrap_or_default();
                let _ = write!(out, "{name:<40} ");
                let _ = out.paint("invalid:", Paint::Bad);
                writeln!(out, " {}", crate::steps::updater::truncate(first, 100))
            }
        };
    }
}

pub(super) fn verify<W: Write>(
    out: &mut Inert<W>,
    reports: &[crate::commands::verify::PlanReport],
    format: Format,
    strict: bool,
    all: bool,
    stamp: Stamp,
) {
    use crate::commands::verify::VerifyVerdict;
    let verdict = VerifyVerdict::worst(reports.iter().map(|r| r.verdict));
    match format {
        Format::Json => {
            let document = envelope(
                "verify",
                stamp,
                json!({
                "verdict": verdict,
                "plans": reports}),
            );
            print_json(out, &document);
        }
        Format::Sarif => {
            let cwd = std::env::current_dir().ok();
            // Buffered: the serializer writes token by token, a log of many findings in one pass.
            let mut buffered = std::io::BufWriter::with_capacity(1 << 16, &mut *out);
            let _ = super::sarif::write_log(&mut buffered, reports, strict, cwd.as_deref())
                .and_then(|()| buffered.flush());
        }
        Format::Human | Format::Markdown => {
            if reports.is_empty() {
                let _ = writeln!(out, "no plans to verify");
            }
            // One plan is always shown; of many, the ones with something to say. A workspace's
            // (`--all`) or many plans end with the count, one line a CI log is read by.
            let many = reports.len() > 1;
            for report in reports.iter().filter(|r| !many || !r.findings.is_empty()) {
                verify_plan_text(out, report);
            }
            if many || all {
                let _ = writeln!(out, "{}", verify_summary(reports));
            }
        }
    }
}

/// `1,500 plans: 1,497 conformant, 3 not conformant, 0 unverified` (`1 plan: ...`).
fn verify_summary(reports: &[crate::commands::verify::PlanReport]) -> String {
    use crate::commands::verify::VerifyVerdict;
    let count = |verdict: VerifyVerdict| reports.iter().filter(|r| r.verdict == verdict).count();
    format!(
        "{} {}: {} conformant, {} not conformant, {} unverified",
        thousands(reports.len()),
        if reports.len() == 1 { "plan" } else { "plans" },
        thousands(count(VerifyVerdict::Conformant)),
        thousands(count(VerifyVerdict::NotConformant)),
        thousands(count(VerifyVerdict::Unverified))
    )
}

/// `1500` as `1,500`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// One plan: a header with the verdict and counts, then each finding as
/// `file:line: severity CODE: $.json.path: message` and its hint, grouped by file (the findings
/// arrive sorted by file and line).
fn verify_plan_text<W: Write>(out: &mut Inert<W>, report: &crate::commands::verify::PlanReport) {
    use crate::commands::verify::VerifyVerdict;
    use crate::findings::Severity;
    let count = |severity: Severity, one: &str, many: &str| {
        let n = report
            .findings
            .iter()
            .filter(|f| f.severity == severity)
            .count();
        (n > 0).then(|| format!("{n} {}", if n == 1 { one } else { many }))
    };
    let counts: Vec<String> = [
        count(Severity::Error, "error", "errors"),
        count(
            Severity::Unverified,
            "unverified check",
            "unverified checks",
        ),
        count(Severity::Advisory, "advisory", "advisories"),
    ]
    .into_iter()
    .flatten()
    .collect();
    let counts = if counts.is_empty() {
        String::new()
    } else {
        format!(" ({})", counts.join(", "))
    };
    let verdict = match report.verdict {
        VerifyVerdict::Conformant => Paint::Good,
        VerifyVerdict::NotConformant => Paint::Bad,
        VerifyVerdict::Unverified => Paint::Unsure,
    };
    let _ = write!(out, "{}: ", report.plan);
    let _ = out.paint(report.verdict.word(), verdict);
    let _ = writeln!(out, "{counts}");
    if let Some(facts) = &report.record {
        super::record::facts(out, facts);
    }
    let mut previous_file: Option<&str> = None;
    for finding in &report.findings {
        if previous_file.is_some_and(|f| f != finding.file) {
            let _ = writeln!(out);
        }
        previous_file = Some(&finding.file);
        let line = finding.line.map(|l| format!(":{l}")).unwrap_or_default();
        let severity = match finding.severity {
            Severity::Error => ("error", Paint::Bad),
            Severity::Advisory => ("advisory", Paint::Unsure),
            Severity::Unverified => ("unverified", Paint::Unsure),
        };
        // Most messages already name their task; say it only where they do not.
        let task = finding
            .task
            .filter(|t| !finding.message.contains(&format!("task {t}")))
            .map(|t| format!("task {t}: "))
            .unwrap_or_default();
        let path = finding
            .path
            .as_deref()
            .map(|p| format!("{p}: "))
            .unwrap_or_default();
        let _ = write!(out, "  {}{line}: ", finding.file);
        let _ = out.paint(severity.0, severity.1);
        let _ = writeln!(out, " {}: {path}{task}{}", finding.code, finding.message);
        if let Some(hint) = &finding.hint {
            hint_line(out, "    ", hint);
        }
    }
}

pub(super) fn finalize<W: Write>(
    out: &mut Inert<W>,
    publication: &crate::steps::publication::Publication,
    recover: bool,
    json: Option<Stamp>,
) {
    use crate::steps::publication::PublicationVerdict;
    if let Some(stamp) = json {
        let command = if recover {
            "finalize --recover"
        } else {
            "finalize"
        };
        print_keyed(out, command, stamp, publication);
        return;
    }
    if let Some(marker) = &publication.recovered_from {
        let _ = writeln!(
            out,
            "interrupted publication found: started {} by pid {} on {}, candidate sha256 {}, state {}",
            marker.started_at,
            marker.pid,
            marker.host,
            marker.candidate_sha256,
            if marker.state_already_published {
                "already published"
            } else {
                "not yet published"
            }
        );
    }
    let (word, paint, why) = match publication.verdict {
        PublicationVerdict::Published => ("PUBLISHED", Paint::Good, ""),
        PublicationVerdict::Refused => ("REFUSED", Paint::Alarm, " (nothing written)"),
        PublicationVerdict::Unverified => ("UNVERIFIED", Paint::Unsure, " (nothing claimed)"),
    };
    let _ = write!(out, "{}: ", publication.plan);
    let _ = out.paint(word, paint);
    let _ = writeln!(out, "{why}");
    if let Some(receipt) = &publication.receipt {
        let _ = writeln!(
            out,
            "  state.json sha256 {}\n  receipt {receipt}",
            publication.state_sha256.as_deref().unwrap_or("")
        );
    }
    for finding in &publication.findings {
        let _ = writeln!(out, "  {} {}", finding.code, finding.render());
        if let Some(hint) = &finding.hint {
            hint_line(out, "    ", hint);
        }
    }
}

pub(super) fn finalize_check<W: Write>(
    out: &mut Inert<W>,
    target: &Path,
    findings: &[Finding],
    json: Option<Stamp>,
) {
    if let Some(stamp) = json {
        let document = envelope(
            "finalize --check",
            stamp,
            json!({
            "plan": target.display().to_string(),
            "findings": findings}),
        );
        print_json(out, &document);
        return;
    }
    let _ = write!(out, "{}: ", target.display());
    if findings.is_empty() {
        let _ = out.paint("the receipt matches", Paint::Good);
        let _ = writeln!(out, " every artifact it covers");
    } else {
        let _ = out.paint("changed since publication", Paint::Bad);
        let _ = writeln!(out);
        write_findings(out, findings);
    }
}

pub(super) fn next<W: Write>(out: &mut Inert<W>, outcome: &NextOutcome, json: Option<Stamp>) {
    if let Some(stamp) = json {
        print_keyed(out, "next", stamp, outcome);
        return;
    }
    let _ = write!(out, "{} · ", outcome.plan);
    paint_status(out, outcome.status.as_str());
    let _ = writeln!(
        out,
        " · {}/{} completed · approval {}",
        outcome.completed, outcome.total, outcome.approval
    );
    if let Some(task) = &outcome.task {
        let _ = out.paint("next:", Paint::Strong);
        let _ = write!(out, " task {}: {} (", task.id, inert_line(&task.title));
        paint_status(out, task.status.as_str());
        let _ = writeln!(out, ")");
        if let Some(record) = &task.record {
            let _ = writeln!(out, "  record: {}", inert_line(record));
        }
        if task.validation.is_empty() {
            let _ = writeln!(out, "  validation: none listed");
        } else {
            let _ = writeln!(out, "  validation:");
            for command in &task.validation {
                let _ = writeln!(out, "    {}", inert_line(command));
            }
        }
        for note in &task.validation_notes {
            let _ = writeln!(out, "  to check: {}", inert_line(note));
        }
        for command in &task.by_hand {
            let _ = writeln!(
                out,
                "  by hand (a shell line, which dwp run does not split): {}",
                inert_line(command)
            );
        }
        for command in &task.observed {
            let _ = writeln!(out, "  passed under dwp run: {}", inert_line(command));
        }
    }
    if let Some(blocker) = &outcome.blocker {
        let needs = blocker
            .needs
            .as_deref()
            .map(|n| format!("; needs: {}", inert_line(n)))
            .unwrap_or_default();
        let _ = out.paint("BLOCKED:", Paint::Alarm);
        let _ = writeln!(
            out,
            " task {} since {}: {}{needs}",
            blocker.task,
            blocker.since,
            inert_line(&blocker.reason)
        );
    }
    for o in &outcome.out_of_order {
        let _ = out.paint("OUT OF ORDER", Paint::Alarm);
        let _ = writeln!(
            out,
            " (DWP036): task {} is {} while task {} before it is {}: tasks run in order",
            o.task, o.status, o.before, o.before_status
        );
    }
    let _ = writeln!(out, "{}", next_words(outcome));
    for line in &outcome.run {
        let _ = writeln!(out, "  {}", inert_line(line));
    }
}

/// What the lines of `dwp next` do, in words.
fn next_words(outcome: &NextOutcome) -> String {
    let task = outcome.task.as_ref();
    let then = match task.map(|t| t.status) {
        Some(TaskStatus::InProgress) => completion_words(task, !outcome.run.is_empty()),
        Some(TaskStatus::Blocked) => "once it has what it needs, resolve the blocker:".into(),
        Some(_) => "start it:".into(),
        None => String::new(),
    };
    match outcome.action {
        Action::Materialize => {
            "no state layer: read from the markdown; materialize manifest.json and state.json, then ask again:".into()
        }
        Action::Approve => format!(
            "the plan is not approved: no task may change before the user's approval (NAME: who approved); then {then}"
        ),
        Action::Start | Action::Complete | Action::ResolveBlocker => then,
        Action::RestoreOrder => format!(
            "put each later task in progress back to pending, then {then}"
        ),
        Action::Finalize => {
            "every task is completed, and the plan has no publication receipt: publish it:".into()
        }
        Action::Done => "the plan is completed and published: nothing left to do".into(),
        Action::NothingOpen => {
            "no task is open, yet the plan is not completed: skipped work never completes a plan".into()
        }
    }
}

fn completion_words(task: Option<&crate::commands::next::NextTask>, lines: bool) -> String {
    if !lines {
        return "no run of its validation can be recorded: list the command that checks it in its Validation section (in backticks, words dwp runs without a shell: a script, say), then ask again".into();
    }
    let last = task.is_some_and(|t| t.last);
    // `--tick` fills the log's Status, Timestamp and Gate record; the rest is the agent's.
    let log = if last {
        "its Skills disposition and Documentation decision, and analysis_results/SECURITY_REVIEW.md"
    } else {
        "its Skills disposition"
    };
    let publish = if last {
        "; completing the last task publishes the plan"
    } else {
        ""
    };
    format!(
        "run its validation through dwp, which records what each run printed; once they pass, write {log} (`--tick` fills the log's Status, Timestamp and Gate record) and complete it{publish}:"
    )
}

pub(super) fn new<W: Write>(out: &mut Inert<W>, outcome: &NewOutcome, json: Option<Stamp>) {
    if let Some(stamp) = json {
        print_keyed(out, "new", stamp, outcome);
        return;
    }
    let count = outcome.tasks.len();
    let added = if outcome.final_review_added {
        " (the Final Review appended)"
    } else {
        ""
    };
    let _ = write!(out, "{} ", outcome.path);
    let _ = out.paint("created:", Paint::Good);
    let _ = writeln!(
        out,
        " {}, DWP spec {}, {count} task{}{added}, approval {}",
        outcome.format,
        outcome.standard,
        if count == 1 { "" } else { "s" },
        outcome.approval
    );
    for task in &outcome.tasks {
        let _ = writeln!(
            out,
            "  task {}: {} ({})",
            task.id,
            inert_line(&task.title),
            task.record
        );
    }
    let _ = writeln!(
        out,
        "manifest.json sha256 {} · state.json sha256 {}",
        outcome.manifest_sha256, outcome.state_sha256
    );
    let mut todo = vec![
        "each task's Context, Goal, Touched Surface, Acceptance Criteria and Validation commands"
            .to_owned(),
    ];
    if !outcome.placeholders.is_empty() {
        todo.insert(
            0,
            format!("the plan's {}", outcome.placeholders.join(" and ")),
        );
    }
    let _ = writeln!(
        out,
        "write before approval (placeholders stand there now): {}; then the user approves it, and `dwp next` says what to run:",
        todo.join("; ")
    );
    for line in &outcome.run {
        let _ = writeln!(out, "  {}", inert_line(line));
    }
}
