//! A plan's markdown as read from its folder: README.md and every task record its index names,
//! read strictly through the store, with the files that could not be read listed, never
//! skipped. The one loader of plan markdown for every command and rule.

use crate::error::{Error, Result};
use crate::plan::LoadedPlan;
use crate::plan::markdown::{self, Readme, TaskRecord};
use crate::plan::model::Task;
use crate::store;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A plan's markdown: the README and every task record it indexes.
#[derive(Debug, Clone)]
pub struct PlanMarkdown {
    pub readme_path: PathBuf,
    pub readme: Readme,
    /// Task records by id: Full task files, or Lite inline sections.
    pub records: BTreeMap<u64, (PathBuf, TaskRecord)>,
    /// Task files the index names that could not be read.
    pub unreadable: Vec<Unreadable>,
    /// The `N.task_*.md` files of the plan folder, sorted (listed once, for every rule that
    /// needs the folder's inventory).
    pub task_files: Vec<String>,
    /// Full tasks whose README still holds an inline `## Task N … {#task-N}` section (a
    /// Lite-to-Full promotion's leftover): the task file is the record, the section is never
    /// judged in its place.
    pub superseded_sections: Vec<u64>,
}

/// What every rule and writer hints for an item of the task list dwp cannot read (DWP049).
pub const UNREADABLE_ITEM_HINT: &str = "write it as `- [ ] Task N: Title` (see docs/plan-markdown.md), or move it out of the task list";

impl PlanMarkdown {
    /// The task file of an index entry: the file its line links, else the folder's one
    /// `N.task_*.md` of its number.
    pub fn task_file(&self, entry: &markdown::IndexEntry) -> Option<String> {
        linked_file(&entry.links)
            .or_else(|| file_numbered(&self.task_files, entry.id))
            .map(str::to_owned)
    }

    /// The title of an index entry: the line's, else its record's heading.
    pub fn title(&self, entry: &markdown::IndexEntry) -> Option<String> {
        entry.title.clone().or_else(|| {
            self.records
                .get(&entry.id)
                .and_then(|(_, r)| r.title.clone())
        })
    }

    /// [`PlanMarkdown::title`], or a refusal: a writer never invents a title.
    pub fn require_title(&self, entry: &markdown::IndexEntry) -> Result<String> {
        self.title(entry).ok_or_else(|| {
            Error::rejected(
                format!("{}:{}", self.readme_path.display(), entry.line),
                format!(
                    "task {} has no title: neither its index line nor its record's heading gives one",
                    entry.id
                ),
            )
            .with_hint(format!("write `Task {}: Title` on its index line", entry.id))
        })
    }

    /// A writer derives nothing from markdown it could not read whole: the first task file
    /// that could not be read stops it.
    pub fn require_readable(&self) -> Result<()> {
        let first = self
            .unreadable
            .iter()
            .find(|u| u.kind != UnreadableKind::Missing);
        match first {
            None => Ok(()),
            Some(u) => Err(Error::rejected(
                u.path.display().to_string(),
                format!(
                    "task {}'s file {}: dwp derives nothing from markdown it cannot read",
                    u.id, u.why
                ),
            )
            .with_hint(
                "make it a readable UTF-8 regular file of the plan folder, then run this again",
            )),
        }
    }

    /// A state is derived only from a task list read whole and numbered 1..N in order.
    pub fn check_index(&self) -> Result<()> {
        let place = self.readme_path.display().to_string();
        if let Some(problem) = self.readme.index_problems.first() {
            return Err(Error::rejected(
                format!("{place}:{}", problem.line),
                format!(
                    "{}: dwp derives no state from a task list it cannot read whole",
                    problem.message
                ),
            )
            .with_hint(UNREADABLE_ITEM_HINT));
        }
        let ids: Vec<u64> = self.readme.index.iter().map(|e| e.id).collect();
        let expected: Vec<u64> = (1..=ids.len() as u64).collect();
        if ids.is_empty() || ids != expected {
            return Err(Error::rejected(
                place,
                format!("the README index lists tasks {ids:?}, not 1..N in order: no state can be derived from it"),
            )
            .with_hint("fix the task list in README.md first; the markdown is the source of truth"));
        }
        Ok(())
    }
}

/// The rule `dwp init` and `dwp verify` share for a Full task's file: it carries its task's
/// number (`N.task_slug.md` for task N). A line whose file is another task's (`Task 2` linking
/// `3.task_final_review.md`: an index that skips an id) is what the message says; `None` when
/// the numbers agree.
pub fn misnumbered_file(entry: &markdown::IndexEntry, file: &str) -> Option<String> {
    let name = file.rsplit('/').next().unwrap_or(file);
    let number = name.split_once(".task_").map(|(n, _)| n)?;
    (number != entry.id.to_string()).then(|| {
        format!(
            "task {}'s line links `{file}`, the file of task {number}: a task's file carries its number (`{}.task_slug.md`), so the index skips or repeats a task",
            entry.id, entry.id
        )
    })
}

/// A task file the index names that could not be read.
#[derive(Debug, Clone)]
pub struct Unreadable {
    pub id: u64,
    pub path: PathBuf,
    pub why: String,
    pub kind: UnreadableKind,
}

/// Why a task file could not be read, as the rules weigh it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnreadableKind {
    /// Not there: the inventory's finding (DWP054).
    Missing,
    /// The path leads outside the plan folder (DWP055).
    Escapes,
    /// The OS refused the read (permissions...): nothing can be claimed either way.
    Refused,
    /// There, but not a readable UTF-8 regular file within the size limit.
    Invalid,
}

impl UnreadableKind {
    fn of(failure: &store::ReadFailure) -> Self {
        match failure {
            store::ReadFailure::Missing => UnreadableKind::Missing,
            store::ReadFailure::Escapes(_) => UnreadableKind::Escapes,
            failure if failure.is_unverifiable() => UnreadableKind::Refused,
            _ => UnreadableKind::Invalid,
        }
    }
}

/// The task file an index entry links to (Full), if any.
pub fn linked_file(links: &[String]) -> Option<&str> {
    links
        .iter()
        .map(|l| l.split('#').next().unwrap_or(l))
        .find(|l| l.ends_with(".md") && l.contains(".task_"))
}

/// Read and parse each task file of `wanted` (id, path), in order, on every core from 256 files
/// on (`store::read_each`): its record, its text kept in `plan` for every later read of it. A
/// file with no task heading is still the task's record: one that lacks every section, which
/// the section rules report.
fn read_task_files(
    plan: &LoadedPlan,
    wanted: &[(u64, PathBuf)],
) -> Vec<std::result::Result<TaskRecord, store::ReadFailure>> {
    // A file the plan already holds (read, or as the change being planned leaves it) is
    // parsed from those bytes; the others are read, then kept for every later read of them.
    let kept: Vec<Option<std::result::Result<String, store::ReadFailure>>> = wanted
        .iter()
        .map(|(_, path)| plan.is_read(path).then(|| plan.read_text(path)))
        .collect();
    let (folder, plan_dir) = (plan.folder(), plan.dir());
    let read = |path: &PathBuf| match folder {
        Some(folder) => folder.read_text(path),
        None => store::read_text(path, plan_dir),
    };
    let items: Vec<_> = wanted.iter().zip(kept).collect();
    let parsed = store::read_each(&items, |((id, path), kept)| {
        let text = match kept {
            Some(Ok(text)) => Ok(text.clone()),
            Some(Err(failure)) => Err(failure.clone_kind()),
            None => read(path),
        };
        text.map(|text| {
            let record =
                markdown::parse_task_file(&text).unwrap_or_else(|| TaskRecord::headless(*id));
            (record, text)
        })
    });
    wanted
        .iter()
        .zip(parsed)
        .map(|((_, path), result)| {
            result.map(|(record, text)| {
                plan.keep_read(path, text);
                record
            })
        })
        .collect()
}

/// The `N.task_*.md` files in the plan folder, sorted.
fn task_files_in(plan: &LoadedPlan) -> Vec<String> {
    match &*plan.list(plan.dir()) {
        Ok(entries) => entries
            .iter()
            .map(|(name, _)| name)
            .filter(|n| {
                n.contains(".task_")
                    && n.ends_with(".md")
                    && n.starts_with(|c: char| c.is_ascii_digit())
            })
            .cloned()
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The one task file of the folder numbered `id`, for an index item that names none.
fn file_numbered(files: &[String], id: u64) -> Option<&str> {
    let prefix = format!("{id}.task_");
    let mut found = files.iter().filter(|f| f.starts_with(&prefix));
    match (found.next(), found.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// Read README.md and the task records it indexes (an index item without a link reads the
/// folder's one task file of its number). A README that cannot be read is an error naming it.
pub fn read_markdown(plan_dir: &Path) -> Result<PlanMarkdown> {
    load_markdown(plan_dir)
        .map_err(|failure| failure.into_error("read", &plan_dir.join("README.md")))
}

/// [`read_markdown`], with the README's read failure as it is, for the checker to weigh.
pub fn load_markdown(plan_dir: &Path) -> std::result::Result<PlanMarkdown, store::ReadFailure> {
    LoadedPlan::open(plan_dir).into_markdown()
}

/// The markdown of `plan` whose README parses to `readme`: every task record its index names
/// (an index item without a link reads the folder's one task file of its number), each read
/// strictly (UTF-8, a regular file inside the plan); a task file that cannot be read is listed
/// in [`PlanMarkdown::unreadable`], never skipped.
pub(crate) fn markdown_of(plan: &LoadedPlan, readme: Readme) -> PlanMarkdown {
    let plan_dir = plan.dir();
    let readme_path = plan_dir.join("README.md");
    let mut records = BTreeMap::new();
    let mut unreadable = Vec::new();
    let task_files = task_files_in(plan);
    let files = if readme.inline_tasks.is_empty() {
        task_files.as_slice()
    } else {
        &[]
    };
    // Each task's first inline section, looked up by id (a 10,000-task index is not searched
    // once per task).
    let mut sections = std::collections::HashMap::with_capacity(readme.inline_tasks.len());
    for record in &readme.inline_tasks {
        sections.entry(record.id).or_insert(record);
    }
    let inline = |id: u64| sections.get(&id).copied();
    // A Full task's record is its file, whatever the README still holds: the file a line links,
    // or, in a plan declared Full, the folder's one file of its number. A line of a task without
    // a file reads its inline section, else (no Lite section at all) the folder's numbered file.
    let full = std::cell::OnceCell::new();
    let declared_full = || *full.get_or_init(|| declared_full(plan, &readme));
    let mut wanted = Vec::new();
    let mut superseded_sections = Vec::new();
    for entry in &readme.index {
        let section = inline(entry.id);
        let file = linked_file(&entry.links).or_else(|| match section {
            None => file_numbered(files, entry.id),
            Some(_) => file_numbered(&task_files, entry.id).filter(|_| declared_full()),
        });
        match (file, section) {
            (Some(file), section) => {
                if section.is_some() {
                    superseded_sections.push(entry.id);
                }
                wanted.push((entry.id, plan_dir.join(file)));
            }
            (None, Some(record)) => {
                records
                    .entry(entry.id)
                    .or_insert_with(|| (readme_path.clone(), record.clone()));
            }
            (None, None) => {}
        }
    }
    superseded_sections.sort_unstable();
    superseded_sections.dedup();
    let read = read_task_files(plan, &wanted);
    // In index order, as if read one by one: a later line of a task already read adds nothing.
    for ((id, path), result) in wanted.into_iter().zip(read) {
        if records.contains_key(&id) {
            continue;
        }
        match result {
            Ok(record) => {
                records.insert(id, (path, record));
            }
            Err(failure) => unreadable.push(Unreadable {
                id,
                why: failure.to_string(),
                kind: UnreadableKind::of(&failure),
                path,
            }),
        }
    }
    // An inline section no index line names is still a record (the index rules report it).
    let indexed: std::collections::HashSet<u64> = readme.index.iter().map(|e| e.id).collect();
    for record in &readme.inline_tasks {
        if !indexed.contains(&record.id) {
            records
                .entry(record.id)
                .or_insert_with(|| (readme_path.clone(), record.clone()));
        }
    }
    PlanMarkdown {
        readme_path,
        readme,
        records,
        unreadable,
        task_files,
        superseded_sections,
    }
}

/// Whether the plan says it is Full: its README's Plan Format variable, else its state's
/// `format` (asked only for a task with both an inline section and a numbered file).
fn declared_full(plan: &LoadedPlan, readme: &Readme) -> bool {
    match readme.variable("Plan Format") {
        Some(format) => format
            .value
            .trim_matches(['*', '`', ' '])
            .to_ascii_lowercase()
            .starts_with("full"),
        None => plan
            .state()
            .is_ok_and(|s| s.doc.format == Some(crate::plan::model::PlanFormat::Full)),
    }
}

/// A task's markdown record and the text it was read from.
pub struct TaskSource {
    pub path: PathBuf,
    pub text: String,
    pub record: TaskRecord,
    /// Lite: the record is a section of README.md.
    pub inline: bool,
}

/// The markdown record of `task` in `plan`: its Full task file, or its Lite section of
/// README.md, and the text it was read from.
pub fn read_task_source(plan: &LoadedPlan, task: &Task) -> Result<TaskSource> {
    let locator = task.locator_value().unwrap_or_default();
    let inline = locator.starts_with('#');
    let path = if inline {
        plan.dir().join("README.md")
    } else {
        plan.dir().join(locator)
    };
    let place = path.display().to_string();
    let text = plan.read_text(&path).map_err(|failure| match failure {
        store::ReadFailure::Io(e) => Error::io("read", &path, e),
        failure @ store::ReadFailure::NotUtf8 { .. } => failure.into_error("read", &path),
        other => Error::rejected(&place, format!("the record of task {}: {other}", task.id)),
    })?;
    let record = if inline {
        markdown::parse_readme(&text)
            .inline_tasks
            .into_iter()
            .find(|r| r.id == task.id)
    } else {
        markdown::parse_task_file(&text).filter(|r| r.id == task.id)
    };
    let Some(record) = record else {
        let wanted = if inline {
            format!("a `## Task {0}: ... {{#task-{0}}}` section", task.id)
        } else {
            format!("a `# Task {}: ...` heading", task.id)
        };
        return Err(Error::rejected(
            place,
            format!("has no record of task {}: {wanted} is missing", task.id),
        ));
    };
    Ok(TaskSource {
        path,
        text,
        record,
        inline,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan large enough to be read on every core gives what reading one file after another
    /// gives: every record under its id, a headless file as a headless record, and an unreadable
    /// file listed under its own id.
    #[test]
    fn task_files_read_in_parallel_keep_their_ids_and_failures() {
        let root = tempfile::tempdir().unwrap();
        let tasks = store::READ_IN_PARALLEL_FROM + 44;
        let dir = crate::synth::SynthPlan::new("PLAN_many_files", tasks)
            .write(root.path())
            .unwrap();
        let name = |id: usize| {
            if id == tasks {
                format!("{id}.task_final_review.md")
            } else {
                format!("{id}.task_synthetic_{id}.md")
            }
        };
        std::fs::write(dir.join(name(7)), "no heading here\n").unwrap();
        std::fs::remove_file(dir.join(name(250))).unwrap();
        std::fs::create_dir(dir.join(name(250))).unwrap();
        let md = load_markdown(&dir).unwrap();
        assert_eq!(md.records.len(), tasks - 1);
        for (id, (path, record)) in &md.records {
            assert_eq!(*path, dir.join(name(*id as usize)));
            assert_eq!(record.id, *id, "the record of {}", path.display());
        }
        let unreadable: Vec<u64> = md.unreadable.iter().map(|u| u.id).collect();
        assert_eq!(unreadable, [250]);
        assert_eq!(md.records[&7].1, TaskRecord::headless(7));
    }
}
