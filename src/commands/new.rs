//! `dwp new PLAN_name --tasks TITLE...`: a conformant plan skeleton, Full or Lite, that
//! `dwp verify` accepts as it stands: a README with the Standard line (the newest standard dwp
//! knows), Goal, Context, Plan Variables (Approval `pending`: approval is the user's, recorded
//! by `dwp approve`), the task list and `Plan Status: 0/N`; one record per task with every
//! required section and an empty Completion & Log; a Final Review appended as the last task
//! unless the last title is one; then manifest.json, state.json, PROGRESS.md, PROMPTS.md and
//! analysis_results/ through the materialization `dwp init` uses
//! ([`crate::steps::materialize`]).
//!
//! The folder is built whole beside its destination and renamed into place at the end
//! ([`crate::store::staging`]): an existing folder is never written into, and a run killed
//! half way leaves only a hidden staging folder, which is no plan (its name is none) and which
//! the next `dwp new` of the same name removes.

use crate::error::{Error, Result};
use crate::plan::markdown::normalize_title;
use crate::plan::model::{Approval, PlanFormat};
use crate::steps::commit::Change;
use crate::steps::materialize::{Creator, Materialize};
use crate::store;
use crate::term::shell_word;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What `dwp new` is asked to make.
#[derive(Debug, Clone)]
pub struct NewRequest {
    pub format: PlanFormat,
    pub tasks: Vec<String>,
    pub title: Option<String>,
    pub goal: Option<String>,
    pub context: Option<String>,
    pub creator: Creator,
}

/// One task of the new plan.
#[derive(Debug, Clone, Serialize)]
pub struct NewTask {
    pub id: u64,
    pub title: String,
    /// Its record: `N.task_slug.md` (Full) or `README.md#task-N` (Lite).
    pub record: String,
}

/// What `dwp new` made.
#[derive(Debug, Clone, Serialize)]
pub struct NewOutcome {
    pub plan: String,
    /// The folder as the caller named it.
    pub path: String,
    pub format: PlanFormat,
    pub standard: String,
    pub approval: Approval,
    pub tasks: Vec<NewTask>,
    /// Whether dwp appended the Final Review (the last title given was not one).
    pub final_review_added: bool,
    /// Goal and Context still hold the placeholder text (no `--goal` / `--context`).
    pub placeholders: Vec<&'static str>,
    pub manifest_sha256: String,
    pub state_sha256: String,
    /// The `dwp` lines that come next, in order.
    pub run: Vec<String>,
}

const GOAL_PLACEHOLDER: &str = "To be written before approval: what this plan achieves, in one or two sentences a reviewer can check.";
const CONTEXT_PLACEHOLDER: &str = "To be written before approval: why this work is needed now, what exists today, and what is out of scope.";

/// The title the Final Review gets when dwp appends it.
const FINAL_REVIEW: &str = "Final review";

/// Make the plan `given` names as `request` says: at a repository root a bare plan name means
/// `.dwp/plans/NAME` ([`destination`]), any other path the folder it names.
pub fn new(given: &Path, request: &NewRequest) -> Result<NewOutcome> {
    let name = plan_name(given)?;
    let target = destination(given);
    let target = target.as_path();
    let (titles, final_review_added) = titles(&request.tasks)?;
    check_texts(&request.title, &request.goal, &request.context)?;
    let tasks = plan_tasks(&titles, request.format);
    let standard = crate::rules::conformance::NEWEST_STANDARD;
    let readme = readme(&name, request, &tasks, standard);
    check_reads_back(&readme, &tasks)?;
    let init = make_folder(given, target, |staging| {
        build(staging, &name, request, &tasks, &readme)
    })?;
    let path = target.display().to_string();
    let word = shell_word(&path).into_owned();
    let mut placeholders = Vec::new();
    if request.goal.is_none() {
        placeholders.push("Goal");
    }
    if request.context.is_none() {
        placeholders.push("Context");
    }
    Ok(NewOutcome {
        plan: name,
        path,
        format: request.format,
        standard: standard.to_owned(),
        approval: init.approval,
        tasks,
        final_review_added,
        placeholders,
        manifest_sha256: init.manifest_sha256,
        state_sha256: init.state_sha256,
        run: vec![
            format!("dwp approve {word} --by NAME"),
            format!("dwp next {word}"),
        ],
    })
}

/// What `dwp new --generation v7` is asked to make.
#[derive(Debug, Clone)]
pub struct RecordNewRequest {
    pub tasks: Vec<String>,
    pub title: Option<String>,
    pub goal: Option<String>,
    pub context: Option<String>,
}

/// One task of a new record plan: its id, the criterion its gate is evidence for, its file.
#[derive(Debug, Clone, Serialize)]
pub struct RecordNewTask {
    pub id: String,
    pub criterion: String,
    pub title: String,
    pub file: String,
}

/// What `dwp new --generation v7` made.
#[derive(Debug, Clone, Serialize)]
pub struct RecordNewOutcome {
    pub plan: String,
    /// The folder as the caller named it.
    pub path: String,
    pub generation: &'static str,
    pub tasks: Vec<RecordNewTask>,
    /// The contract draft, in the plan folder.
    pub draft: String,
    /// Where the placeholders the author replaces before approval stand.
    pub placeholders: Vec<String>,
    /// The `dwp` lines that come next, in order.
    pub run: Vec<String>,
}

/// Make the record plan (DWP v7) `given` names: its markdown and a contract draft
/// ([`crate::rules::record::draft`]), written whole as [`new`] writes a plan. Nothing is
/// stamped or approved: `dwp init --contract` does both once the author wrote the draft.
pub fn new_record(given: &Path, request: &RecordNewRequest) -> Result<RecordNewOutcome> {
    use crate::rules::record::draft;
    let name = plan_name(given)?;
    let target = destination(given);
    let target = target.as_path();
    let titles = task_titles(&request.tasks)?;
    check_texts(&request.title, &request.goal, &request.context)?;
    let tasks = draft::tasks(&titles).map_err(|why| Error::Usage(format!("--tasks: {why}")))?;
    let title = request.title.clone().unwrap_or_else(|| title_of(&name));
    let (goal, context) = (request.goal.as_deref(), request.context.as_deref());
    let now = crate::clock::now_rfc3339();
    let contract = draft::contract(&name, &title, goal, &tasks, &now);
    let mut files = vec![
        (
            "README.md".to_owned(),
            draft::readme(&title, goal, context, &tasks),
        ),
        ("PROGRESS.md".to_owned(), draft::progress()),
    ];
    for task in &tasks {
        files.push((format!("{}.md", task.id), draft::task_file(task)));
    }
    let mut contract_bytes = crate::plan::pyjson::pretty(&contract);
    contract_bytes.push(b'\n');
    make_folder(given, target, |staging| {
        let mut change = Change::new(staging, "dwp new");
        for (file, text) in files {
            change.new_file(&staging.join(file), text.into_bytes());
        }
        change.new_file(&staging.join(draft::DRAFT), contract_bytes);
        crate::steps::commit::commit(change)
    })?;
    let path = target.display().to_string();
    let word = shell_word(&path).into_owned();
    let draft_path = target.join(draft::DRAFT).display().to_string();
    let mut placeholders = vec![draft::DRAFT.to_owned()];
    if goal.is_none() || context.is_none() {
        placeholders.push("README.md".to_owned());
    }
    placeholders.extend(tasks.iter().map(|t| format!("{}.md", t.id)));
    Ok(RecordNewOutcome {
        plan: name,
        path,
        generation: "v7",
        tasks: tasks
            .into_iter()
            .map(|t| RecordNewTask {
                file: format!("{}.md", t.id),
                id: t.id,
                criterion: t.criterion,
                title: t.title,
            })
            .collect(),
        draft: draft::DRAFT.to_owned(),
        placeholders,
        run: vec![
            format!(
                "dwp init {word} --contract {} --by NAME --note FILE",
                shell_word(&draft_path)
            ),
            format!("dwp next {word}"),
        ],
    })
}

/// Make the folder `target` (`given`, resolved by [`destination`]) whole: built by `build` in a
/// staging folder beside it, renamed into place at the end. An existing folder is refused,
/// never written into; a build that fails leaves nothing.
fn make_folder<T>(
    given: &Path,
    target: &Path,
    build: impl FnOnce(&Path) -> Result<T>,
) -> Result<T> {
    if target != given {
        make_plan_home()?;
    }
    if store::staging::exists(target)? {
        return Err(Error::rejected(
            target.display().to_string(),
            "already exists: dwp new makes a new folder and never writes into one",
        )
        .with_hint(format!(
            "name a folder that does not exist yet; if this one is a plan, `dwp next {}` says what comes next in it",
            crate::term::path_word(target)
        )));
    }
    let staging = store::staging::begin(target)?;
    let built = match build(&staging) {
        Ok(built) => built,
        Err(error) => {
            store::staging::discard(&staging);
            return Err(error);
        }
    };
    if !store::staging::finish(&staging, target)? {
        store::staging::discard(&staging);
        return Err(Error::rejected(
            target.display().to_string(),
            "appeared while the plan was being made: it was left as it is",
        )
        .with_hint("name another folder"));
    }
    Ok(built)
}

/// The markdown written into the staging folder, then materialized there under the plan's name.
fn build(
    staging: &Path,
    name: &str,
    request: &NewRequest,
    tasks: &[NewTask],
    readme_text: &str,
) -> Result<crate::steps::materialize::InitOutcome> {
    // Every file is new in a folder no one else sees until it is renamed into place.
    let mut skeleton = Change::new(staging, "dwp new");
    let results = staging.join("analysis_results");
    skeleton.create_dir(&results);
    skeleton.new_file(&results.join(".gitkeep"), Vec::new());
    if request.format == PlanFormat::Full {
        for task in tasks {
            let text = task_record(task, tasks.len(), "#", "##", "Completion & Log");
            skeleton.new_file(&staging.join(&task.record), text.into_bytes());
        }
    }
    skeleton.new_file(&staging.join("README.md"), readme_text.as_bytes().to_vec());
    crate::steps::commit::commit(skeleton)?;
    crate::steps::materialize::materialize(
        staging,
        &Materialize {
            creator: &request.creator,
            standard: None,
            name: Some(name),
            by: "dwp new",
            dry_run: false,
        },
    )
}

/// Where the plan `given` names is made: at a repository root (the current folder holds `.git`
/// or `.dwp/plans/`, [`crate::plan::is_repository_root`]) a bare name, one component with no
/// `./`, is made under `.dwp/plans/`, where `verify --all`, `status` and a command without a
/// PLAN argument find it; anything else is the path as given.
fn destination(given: &Path) -> PathBuf {
    use std::path::Component;
    let bare = matches!(
        given.components().collect::<Vec<_>>().as_slice(),
        [Component::Normal(_)]
    );
    match given.to_str() {
        Some(name) if bare && crate::plan::is_repository_root(Path::new(".")) => {
            crate::plan::plan_home(Path::new(""), name)
        }
        _ => given.to_path_buf(),
    }
}

/// `.dwp/plans/` in the current folder, made when it is missing (after every check passed).
fn make_plan_home() -> Result<()> {
    let dwp = Path::new(".dwp");
    store::create_dir(dwp, Path::new(""))?;
    store::create_dir(&dwp.join("plans"), dwp)
}

/// The last component of `target`, which must be a plan name.
fn plan_name(target: &Path) -> Result<String> {
    let name = target
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if !crate::plan::is_plan_name(name) {
        return Err(Error::Usage(format!(
            "`{}` is not a plan name: the folder's name must match {} (PLAN_ then 2 to 5 lower-case words joined by `_`, e.g. PLAN_payment_webhooks)",
            target.display(),
            crate::plan::PLAN_NAME_PATTERN
        )));
    }
    Ok(name.to_owned())
}

/// Whether a title names the Final Review (the rule `dwp verify` applies).
fn is_final_review(title: &str) -> bool {
    title.to_lowercase().contains("final review")
}

/// The titles as given, with the Final Review appended unless the last one is it; a Final
/// Review anywhere else is refused (the Final Review closes the plan).
fn titles(given: &[String]) -> Result<(Vec<String>, bool)> {
    let mut titles = task_titles(given)?;
    if let Some(index) = titles[..titles.len() - 1]
        .iter()
        .position(|t| is_final_review(t))
    {
        return Err(Error::Usage(format!(
            "--tasks: task {} `{}` is a Final Review but not the last task: the Final Review closes the plan (dwp appends one when the last title is not)",
            index + 1,
            given[index]
        )));
    }
    let added = !titles.last().is_some_and(|t| is_final_review(t));
    if added {
        titles.push(FINAL_REVIEW.to_owned());
    }
    Ok((titles, added))
}

/// The titles as given, each one line of text, its decorations removed.
fn task_titles(given: &[String]) -> Result<Vec<String>> {
    if given.is_empty() {
        return Err(Error::Usage("--tasks takes at least one title".to_owned()));
    }
    let mut titles = Vec::new();
    for (index, title) in given.iter().enumerate() {
        check_text("--tasks", title)?;
        if title.contains('\n') {
            return Err(Error::Usage(format!(
                "--tasks: task {} `{}` spans lines: a title is one line",
                index + 1,
                title.replace('\n', "\\n")
            )));
        }
        let normal = normalize_title(title.trim());
        if normal.is_empty() {
            return Err(Error::Usage(format!(
                "--tasks: task {} `{title}` has no title left once decorations are removed",
                index + 1
            )));
        }
        titles.push(normal);
    }
    Ok(titles)
}

/// `--title`, `--goal` and `--context`, each when given.
fn check_texts(
    title: &Option<String>,
    goal: &Option<String>,
    context: &Option<String>,
) -> Result<()> {
    for (flag, text) in [("--title", title), ("--goal", goal), ("--context", context)] {
        if let Some(text) = text {
            check_text(flag, text)?;
        }
    }
    Ok(())
}

/// Text given on the command line: no control character but the newline and the tab.
fn check_text(flag: &str, text: &str) -> Result<()> {
    if text.trim().is_empty() {
        return Err(Error::Usage(format!(
            "{flag} takes text, not an empty value"
        )));
    }
    if text
        .chars()
        .any(|c| crate::term::is_active(c) && c != '\n' && c != '\t')
    {
        return Err(Error::Usage(format!(
            "{flag} `{}` holds a control character",
            crate::term::inert_line(text)
        )));
    }
    Ok(())
}

/// `Add retry queue` → `add_retry_queue` (at most five words); `task` when nothing is left.
fn slug(title: &str) -> String {
    let words: Vec<String> = title
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(5)
        .map(str::to_ascii_lowercase)
        .collect();
    if words.is_empty() {
        "task".to_owned()
    } else {
        words.join("_")
    }
}

fn plan_tasks(titles: &[String], format: PlanFormat) -> Vec<NewTask> {
    titles
        .iter()
        .enumerate()
        .map(|(index, title)| {
            let id = index as u64 + 1;
            let record = match format {
                PlanFormat::Full => format!("{id}.task_{}.md", slug(title)),
                PlanFormat::Lite => format!("README.md#task-{id}"),
            };
            NewTask {
                id,
                title: title.clone(),
                record,
            }
        })
        .collect()
}

/// `PLAN_payment_webhooks` → `Payment webhooks`.
fn title_of(name: &str) -> String {
    let words = name.trim_start_matches("PLAN_").replace('_', " ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => words,
    }
}

fn readme(name: &str, request: &NewRequest, tasks: &[NewTask], standard: &str) -> String {
    let title = request.title.clone().unwrap_or_else(|| title_of(name));
    let goal = request.goal.as_deref().unwrap_or(GOAL_PLACEHOLDER).trim();
    let context = request
        .context
        .as_deref()
        .unwrap_or(CONTEXT_PLACEHOLDER)
        .trim();
    let mut text = format!(
        "# {title}\n\n**Standard:** DWP spec {standard}\n\n## Goal\n\n{goal}\n\n## Context\n\n{context}\n\n\
         ## Plan Variables\n\n| Variable | Value |\n|---|---|\n| Plan Format | {} |\n\
         | Materialization | ready |\n| Approval | pending |\n| Rigor | standard |\n\
         | Archetype | individual |\n\n## Tasks\n\nPlan Status: 0/{}\n\n",
        request.format,
        tasks.len()
    );
    for task in tasks {
        let link = match request.format {
            PlanFormat::Full => format!("[{0}]({0})", task.record),
            PlanFormat::Lite => format!("[#task-{0}](#task-{0})", task.id),
        };
        let _ = writeln!(text, "- [ ] Task {}: {} — {link}", task.id, task.title);
    }
    if request.format == PlanFormat::Lite {
        for task in tasks {
            text.push('\n');
            text.push_str(&task_record(
                task,
                tasks.len(),
                "##",
                "###",
                "Completion log",
            ));
        }
    }
    text
}

/// A task's record: its heading (`# Task N: Title`, or `## Task N: Title {#task-N}` in a Lite
/// README), every section `dwp verify` asks for, and a log with its fields still to fill.
fn task_record(task: &NewTask, count: usize, top: &str, section: &str, log: &str) -> String {
    let anchor = match top {
        "#" => String::new(),
        _ => format!(" {{#task-{}}}", task.id),
    };
    let last = task.id as usize == count;
    let (context, goal, surface, criteria) = if last {
        (
            "Closes the plan: every task's acceptance criteria are checked again against the work as it stands, the security review is brought up to date, and the outcome records are mined for reusable skills.",
            "The plan is published only when the evidence supports every completed task.",
            "- `analysis_results/SECURITY_REVIEW.md`\n- this plan's README.md and PROGRESS.md",
            "- the security review (`analysis_results/SECURITY_REVIEW.md`) records no unresolved critical finding\n\
             - the final-state validation of the code and of this plan's records passes\n\
             - skills candidates from the outcome records are reconciled (kept, merged or dropped, with a reason)",
        )
    } else {
        (
            "To be written before approval: what this task builds on and why it comes at this point.",
            "To be written before approval: what is true once this task is done.",
            "- to be named before approval: the files and modules this task changes",
            "- to be written before approval: each criterion one a reviewer can check",
        )
    };
    format!(
        "{top} Task {id}: {title}{anchor}\n\n{section} Context\n\n{context}\n\n{section} Goal\n\n{goal}\n\n\
         {section} Touched Surface\n\n{surface}\n\n{section} Acceptance Criteria\n\n{criteria}\n\n\
         {section} Validation\n\n- to be listed before approval: each command that proves this task, in backticks (`dwp next` reads them)\n\n\
         {section} {log}\n\nStatus: pending\nTimestamp:\nGate record:\nSkills disposition:\nDocumentation decision:\n",
        id = task.id,
        title = task.title,
    )
}

/// The README reads back as written: tasks 1..N with their titles, Goal and Context, and the
/// Lite records; text given on the command line cannot have broken its structure.
fn check_reads_back(text: &str, tasks: &[NewTask]) -> Result<()> {
    let readme = crate::plan::markdown::parse_readme(text);
    let read: Vec<(u64, Option<String>)> = readme
        .index
        .iter()
        .map(|e| (e.id, e.title.clone()))
        .collect();
    let wanted: Vec<(u64, Option<String>)> = tasks
        .iter()
        .map(|t| (t.id, Some(t.title.clone())))
        .collect();
    let sections = [&readme.goal, &readme.context].iter().all(|s| {
        s.as_ref()
            .is_some_and(|s| !crate::plan::markdown::is_blank(&s.body))
    });
    if read != wanted || !readme.index_problems.is_empty() || !sections {
        return Err(Error::Usage(
            "the titles, --title, --goal or --context hold markdown that changes the README's structure (a heading, a list or a task line): give plain text"
                .to_owned(),
        ));
    }
    Ok(())
}
