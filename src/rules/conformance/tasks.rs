//! The rules `dwp verify` judges task by task on the markdown: required sections, the log's
//! `Status:` line, the Final Review, and, for a plan without a state layer, the task files its
//! index names. They read a [`TaskView`] per task, taken from state.json when the plan has one
//! and from its markdown when it has none (the box says completed or not; the log says the
//! rest), so one rule serves both kinds of plan.
//!
//! Plans are judged against the shape of their era (docs/CONFORMANCE.md, "Eras"): a plan with a
//! v2/v5 state or declaring DWP spec 2.4.0 or later is *current*; a markdown-only or v1 plan
//! declaring an earlier standard (or none) is *legacy*, accepted against the shape it was
//! written under, as the public reference checker accepts it.

use crate::findings::{Code, Finding, Severity};
use crate::plan::markdown::{TaskRecord, is_blank};
use crate::plan::model::{Generation, SchemaId, State, TaskStatus};
use crate::plan::records::PlanMarkdown;

/// Which shape a plan is judged against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// Written before the v2 state layer (2.4.0): the three-task ending is accepted, and only
    /// Validation is a required task section (the rest are advisories).
    Legacy,
    Current,
}

impl Era {
    /// The declared standard decides (a plan is judged by the standard it was written under,
    /// whatever state layer `dwp init` or `dwp migrate` later gave it); a plan that declares
    /// none is current when it has a v2/v5 state.
    pub fn of(state: Option<&State>, standard: Option<&str>) -> Era {
        let current = match standard.and_then(version) {
            Some(declared) => declared >= (2, 4, 0),
            None => state.is_some_and(|s| {
                matches!(SchemaId::parse(&s.schema), SchemaId::Known(_, g) if g >= Generation::V2)
            }),
        };
        if current { Era::Current } else { Era::Legacy }
    }

    /// Errors of the current shape are advisories for a legacy plan.
    pub fn weigh(self, finding: Finding) -> Finding {
        match self {
            Era::Current => finding,
            Era::Legacy => finding.severity(Severity::Advisory),
        }
    }
}

/// `X.Y.Z` as numbers.
pub fn version(text: &str) -> Option<(u64, u64, u64)> {
    let mut parts = text.split('.').map(|p| p.parse::<u64>().ok());
    let v = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some(v)
}

/// What the rules need of one task.
#[derive(Debug, Clone)]
pub struct TaskView {
    pub id: u64,
    pub title: String,
    pub status: TaskStatus,
    /// The task file (Full), when known.
    pub file: Option<String>,
}

impl TaskView {
    fn started(&self) -> bool {
        matches!(
            self.status,
            TaskStatus::InProgress | TaskStatus::Completed | TaskStatus::Blocked
        )
    }
}

pub fn views_from_state(state: &State) -> Vec<TaskView> {
    state
        .tasks
        .iter()
        .map(|t| TaskView {
            id: t.id,
            title: t.title.clone(),
            status: t.status,
            file: t
                .locator_value()
                .filter(|v| !v.starts_with('#'))
                .map(str::to_owned),
        })
        .collect()
}

/// A markdown-only plan's tasks ([`crate::rules::desync::markdown_only_status`]).
pub fn views_from_markdown(md: &PlanMarkdown) -> Vec<TaskView> {
    md.readme
        .index
        .iter()
        .map(|entry| {
            let record = md.records.get(&entry.id);
            TaskView {
                id: entry.id,
                title: md.title(entry).unwrap_or_default(),
                status: crate::rules::desync::markdown_only_status(entry, record.map(|(_, r)| r)),
                file: md.task_file(entry),
            }
        })
        .collect()
}

/// Every task record carries Goal, Touched Surface, Acceptance Criteria and Validation; a task
/// still to run also Context (a completed record stays as authored); a started task a log with
/// a `Status:` line. Legacy plans: Validation is required, the rest are advisories.
pub fn section_rules(views: &[TaskView], md: &PlanMarkdown, era: Era) -> Vec<Finding> {
    let mut findings = Vec::new();
    for view in views {
        let Some((path, record)) = md.records.get(&view.id) else {
            continue; // a missing record is the inventory's finding
        };
        let file = path.display().to_string();
        let finding = |name: &str, problem: String| {
            let finding = Finding::error(
                Code::TaskSection,
                &file,
                format!("task {} {problem}", view.id),
            )
            .task(view.id)
            .line(record.line);
            if name == "Validation" {
                finding
            } else {
                era.weigh(finding)
            }
        };
        for name in [
            "Context",
            "Goal",
            "Touched Surface",
            "Acceptance Criteria",
            "Validation",
        ] {
            if name == "Context" && view.status == TaskStatus::Completed {
                continue;
            }
            match record.section(name) {
                None => findings.push(finding(name, format!("has no {name} section"))),
                Some(s) if is_blank(&s.body) => {
                    findings.push(finding(name, format!("has an empty {name} section")))
                }
                Some(_) => {}
            }
        }
        if view.started() {
            match &record.log {
                None => findings.push(finding(
                    "log",
                    format!("is {} but has no Completion & Log section", view.status),
                )),
                Some(log) if log.status.is_none() => findings.push(finding(
                    "log",
                    format!("is {} but its log has no `Status:` line", view.status),
                )),
                Some(_) => {}
            }
        }
    }
    findings
}

/// A completed task whose own log still reads `Status: pending` (any emphasis, case or trailing
/// punctuation): the plan-state spec names this contradiction.
pub fn log_status_rule(views: &[TaskView], md: &PlanMarkdown) -> Vec<Finding> {
    let mut findings = Vec::new();
    for view in views.iter().filter(|v| v.status == TaskStatus::Completed) {
        let Some((path, record)) = md.records.get(&view.id) else {
            continue;
        };
        let Some(status) = record.log.as_ref().and_then(|l| l.status.as_ref()) else {
            continue;
        };
        if crate::plan::markdown::status_word(&status.value).as_deref() == Some("pending") {
            findings.push(
                Finding::error(
                    Code::LogStillPending,
                    path.display().to_string(),
                    format!(
                        "task {} is completed but its log still reads `Status: {}`",
                        view.id, status.value
                    ),
                )
                .task(view.id)
                .line(status.line),
            );
        }
    }
    findings
}

/// The parts a Final Review record names: each is a set of words, one of which must appear.
const FINAL_REVIEW_PARTS: [(&str, &[&str]); 3] = [
    ("security", &["security"]),
    (
        "final-state",
        &[
            "final-state",
            "final state",
            "full validation",
            "full suite",
            "full gate",
            "complete applicable",
        ],
    ),
    ("skills", &["skill"]),
];

/// The title says so; a task with no title (`- [x] Task 7` and a heading without one) is
/// judged by its file name (`N.task_final_review.md`), as the reference judges every task.
fn is_final_review(view: &TaskView) -> bool {
    if view.title.is_empty() {
        view.file
            .as_deref()
            .is_some_and(|f| f.contains(".task_final_review"))
    } else {
        view.title.to_lowercase().contains("final review")
    }
}

/// The pre-2.3.0 ending: security review, skills & agents discovery, executive report, last.
fn legacy_ending(views: &[TaskView]) -> bool {
    let [.., security, skills, report] = views else {
        return false;
    };
    let named = |view: &TaskView, file: &str, words: &[&str]| {
        let title = view.title.to_lowercase();
        view.file.as_deref().is_some_and(|f| f.contains(file))
            || words.iter().all(|w| title.contains(w))
    };
    named(security, ".task_security_review", &["security", "review"])
        && named(
            skills,
            ".task_skills_agents_discovery",
            &["skills", "discovery"],
        )
        && named(report, ".task_executive_report", &["executive", "report"])
}

/// The Final Review is the last task, the only one, and its record names its security,
/// final-state and skills parts. A legacy plan may end with the three tasks of its era instead
/// (unless it declares 2.3.0 or later without a migration note).
pub fn final_review(
    views: &[TaskView],
    md: &PlanMarkdown,
    era: Era,
    standard: Option<&crate::plan::markdown::Standard>,
) -> Vec<Finding> {
    let Some(last) = views.last() else {
        return Vec::new();
    };
    let readme = md.readme_path.display().to_string();
    let located = |id: u64, message: String| {
        Finding::error(Code::FinalReview, &readme, message)
            .task(id)
            .line(md.readme.index.iter().find(|e| e.id == id).map(|e| e.line))
    };
    let mut findings: Vec<Finding> = views[..views.len() - 1]
        .iter()
        .filter(|v| is_final_review(v))
        .map(|v| {
            located(
                v.id,
                format!(
                    "task {} is a Final Review but not the last task: the Final Review closes the plan",
                    v.id
                ),
            )
        })
        .collect();
    if !is_final_review(last) {
        if era == Era::Legacy && findings.is_empty() && legacy_ending(views) {
            findings.extend(legacy_ending_declared_new(md, standard, last.id));
            return findings;
        }
        findings.push(located(
            last.id,
            format!(
                "the last task, task {} ({}), is not the Final Review",
                last.id, last.title
            ),
        ));
        return findings;
    }
    let Some((path, record)) = md.records.get(&last.id) else {
        return findings; // a missing record is the inventory's finding
    };
    findings.extend(final_review_parts(path, record, last.id));
    findings
}

/// A plan declaring 2.3.0 or later ends with a single Final Review, unless its Standard line
/// records a migration.
fn legacy_ending_declared_new(
    md: &PlanMarkdown,
    standard: Option<&crate::plan::markdown::Standard>,
    last: u64,
) -> Option<Finding> {
    let standard = standard?;
    let declared_new = version(&standard.version).is_some_and(|v| v >= (2, 3, 0));
    let migrated = standard
        .suffix
        .as_deref()
        .is_some_and(|s| s.contains("migrated from"));
    (declared_new && !migrated).then(|| {
        Finding::error(
            Code::FinalReview,
            md.readme_path.display().to_string(),
            format!(
                "the plan declares DWP spec {} but ends with the pre-2.3.0 three tasks: a plan of 2.3.0 or later ends with a single Final Review",
                standard.version
            ),
        )
        .task(last)
        .line(standard.line)
    })
}

fn final_review_parts(path: &std::path::Path, record: &TaskRecord, id: u64) -> Option<Finding> {
    let text = std::iter::once(record.title.as_deref().unwrap_or(""))
        .chain(record.sections.iter().map(|s| s.body.as_str()))
        .collect::<Vec<_>>()
        .join("\n")
        .to_lowercase();
    let missing: Vec<&str> = FINAL_REVIEW_PARTS
        .iter()
        .filter(|(_, words)| !words.iter().any(|w| text.contains(w)))
        .map(|(part, _)| *part)
        .collect();
    (!missing.is_empty()).then(|| {
        Finding::error(
            Code::FinalReview,
            path.display().to_string(),
            format!(
                "the Final Review (task {id}) does not name its {} part{}",
                super::and_list(&missing),
                if missing.len() > 1 { "s" } else { "" }
            ),
        )
        .task(id)
        .line(record.line)
    })
}
