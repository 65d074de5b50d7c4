//! A new v7 record plan as `dwp new --generation v7` writes it (docs/record-plans.md, "Writing a
//! record plan"): its markdown (README.md with the task list, PROGRESS.md, one file per task)
//! and a contract draft, `contract.draft.json`, that `dwp init --contract` stamps and approves.
//! A contract is never edited once stamped (rule 20), so dwp writes a draft, not a contract:
//! every field only the plan's author can say (the outcome, each criterion and its check, the
//! paths and programs in scope, the authority) holds a placeholder, `To be written before
//! approval: ...`, and an approval is refused while one stands in the draft or the markdown
//! ([`placeholder_in_json`], [`placeholder_in_markdown`]).

use serde_json::{Value, json};

pub use crate::plan::record::DRAFT;

/// One task of the new plan: its id and the criterion its gate is evidence for, both from its
/// title (`T-<slug>`, `AC-<slug>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftTask {
    pub id: String,
    pub criterion: String,
    pub title: String,
}

/// The tasks of `titles`, in order, each id unique (a repeated slug gets `-2`, `-3`, ...);
/// refused, naming the title, when one has no letter or digit to make an id of.
pub fn tasks(titles: &[String]) -> Result<Vec<DraftTask>, String> {
    let mut tasks: Vec<DraftTask> = Vec::new();
    for title in titles {
        let base = slug(title);
        if base.is_empty() {
            return Err(format!(
                "the task title {title:?} has no letter or digit to make its id (T-...) of"
            ));
        }
        let mut id = base.clone();
        let mut n = 1;
        while tasks.iter().any(|t| t.id == format!("T-{id}")) {
            n += 1;
            id = format!("{base}-{n}");
        }
        tasks.push(DraftTask {
            id: format!("T-{id}"),
            criterion: format!("AC-{id}"),
            title: title.trim().to_owned(),
        });
    }
    Ok(tasks)
}

/// The contract's id grammar (`[a-z0-9]+(-[a-z0-9]+)*`) made of a title: ASCII letters and
/// digits lower-cased, every other run one `-`, at most five words.
fn slug(title: &str) -> String {
    let lowered = title.to_ascii_lowercase();
    let words = lowered
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty());
    words.take(5).collect::<Vec<_>>().join("-")
}

/// What the author writes before approval, and what dwp writes in its place until then.
fn todo(what: &str) -> String {
    format!("To be written before approval: {what}")
}

/// The contract draft of the plan `plan` titled `title`: the v7 schema, revision 1, created
/// `now`; each task after the one before it (the order given), one criterion each accepting
/// observed evidence (what `dwp run` records); `goal`, when given, is the outcome's statement.
pub fn contract(
    plan: &str,
    title: &str,
    goal: Option<&str>,
    tasks: &[DraftTask],
    now: &str,
) -> Value {
    let criteria: Vec<Value> = tasks
        .iter()
        .map(|t| {
            json!({
                "id": t.criterion,
                "statement": todo(&format!("what is true once {} is done", t.id)),
                "observable_check": todo(&format!("what the check of {} shows when it holds", t.criterion)),
                "accepted_evidence": ["observed"],
            })
        })
        .collect();
    let entries: Vec<Value> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let prerequisites: Vec<&str> = tasks[..i].last().map(|p| p.id.as_str()).into_iter().collect();
            json!({
                "id": t.id,
                "title": t.title,
                "prerequisites": prerequisites,
                "touched_surface": [todo(&format!("a path {} changes", t.id))],
                "gate_intent": [{
                    "criterion": t.criterion,
                    "check": todo(&format!("the command that shows {} holds (its program one of the allowed_command_classes)", t.criterion)),
                }],
            })
        })
        .collect();
    json!({
        "schema": crate::plan::record::RecordGeneration::V7.url("plan-contract"),
        "spec_version": "7.0.0",
        "plan": plan,
        "title": title,
        "revision": 1,
        "created_at": now,
        "outcome": {
            "statement": goal.map_or_else(|| todo("what this plan achieves, in a sentence a reviewer can check"), str::to_owned),
            "success_definition": todo("how a reviewer tells the outcome was reached"),
            "out_of_scope": [],
        },
        "acceptance": {"criteria": criteria},
        "invariants": [],
        "scope": {
            "allowed_paths": [todo("a path this plan may change (one per entry)")],
            "allowed_command_classes": [todo("a program the checks run (one per entry, e.g. cargo)")],
            "forbidden_operations": [todo("an operation this plan must never perform")],
        },
        "authorization": {
            "mechanism": "plan_authorship",
            "authority": todo("who authorizes this plan"),
            "timestamp": now,
            "boundaries": todo("what the authorization covers, and what it does not"),
            "consent_checkpoints": [],
        },
        "permissions": {
            "granted": ["gate_command_exec", "fs_write_repo_scope"],
            "not_granted": ["network_access", "git_operations"],
        },
        "dependencies": [],
        "resource_envelope": {
            "limits": [{"id": "wall_clock_h", "limit": 8, "unit": "hours", "enforcement": "advisory"}],
        },
        "tasks": entries,
    })
}

/// The plan's README.md: its title, Goal, Context, the task list and where the contract draft is.
pub fn readme(
    title: &str,
    goal: Option<&str>,
    context: Option<&str>,
    tasks: &[DraftTask],
) -> String {
    let goal = goal.map_or_else(
        || todo("what this plan achieves, in one or two sentences a reviewer can check."),
        str::to_owned,
    );
    let context = context.map_or_else(
        || todo("why this work is needed now, what exists today, and what is out of scope."),
        str::to_owned,
    );
    let mut text =
        format!("# {title}\n\n## Goal\n\n{goal}\n\n## Context\n\n{context}\n\n## Tasks\n\n");
    for task in tasks {
        text.push_str(&format!(
            "- {}: {} ([{}.md]({}.md))\n",
            task.id, task.title, task.id, task.id
        ));
    }
    text.push_str(&format!(
        "\n## Contract\n\nThe contract is drafted in `{DRAFT}` (DWP v7): its criteria, checks, scope and authority are written before approval; `dwp init --contract` stamps it and records the approval.\n"
    ));
    text
}

/// A task's file: its title, and what the author writes before approval.
pub fn task_file(task: &DraftTask) -> String {
    format!(
        "# {}: {}\n\n## Objective\n\n{}\n\n## Validation\n\n`{}` is evidenced by its check in the contract, run through `dwp run --task {} --criterion {}`.\n",
        task.id,
        task.title,
        todo("what this task changes, and how a reviewer sees it is done."),
        task.criterion,
        task.id,
        task.criterion,
    )
}

/// PROGRESS.md, before anything happened.
pub fn progress() -> String {
    "# Progress\n\nNothing beyond the journal yet.\n".to_owned()
}

/// Whether `text` is a placeholder the author must replace (`To be written before approval:
/// ...`), as [`crate::plan::markdown::is_placeholder`] says of a markdown line.
fn is_placeholder(text: &str) -> bool {
    crate::plan::markdown::is_placeholder(text)
}

/// The first placeholder in a JSON document: its JSON path (`$.scope.allowed_paths[0]`) and text.
pub fn placeholder_in_json(value: &Value) -> Option<(String, String)> {
    fn walk(value: &Value, path: &mut String) -> Option<(String, String)> {
        match value {
            Value::String(text) if is_placeholder(text) => Some((path.clone(), text.clone())),
            Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let found = walk(item, path);
                path.truncate(len);
                found
            }),
            Value::Object(map) => map.iter().find_map(|(key, item)| {
                let len = path.len();
                path.push('.');
                path.push_str(key);
                let found = walk(item, path);
                path.truncate(len);
                found
            }),
            _ => None,
        }
    }
    walk(value, &mut "$".to_owned())
}

/// The first placeholder line of the markdown files `(name, bytes)`: the file, its 1-based line
/// and the line.
pub fn placeholder_in_markdown<'a>(
    files: impl IntoIterator<Item = (&'a str, &'a [u8])>,
) -> Option<(String, usize, String)> {
    files.into_iter().find_map(|(name, bytes)| {
        let text = String::from_utf8_lossy(bytes);
        let mut lines = text.lines().enumerate();
        lines
            .find(|(_, line)| is_placeholder(line))
            .map(|(i, line)| (name.to_owned(), i + 1, line.trim().to_owned()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn titles(titles: &[&str]) -> Vec<String> {
        titles.iter().map(|t| (*t).to_owned()).collect()
    }

    #[test]
    fn ids_follow_the_contract_grammar_and_never_repeat() {
        let tasks = tasks(&titles(&[
            "List the pages",
            "Convert the API docs!",
            "list the pages",
        ]))
        .unwrap();
        let ids: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "T-list-the-pages",
                "T-convert-the-api-docs",
                "T-list-the-pages-2"
            ]
        );
        assert_eq!(tasks[1].criterion, "AC-convert-the-api-docs");
        assert!(super::tasks(&titles(&["¿?"])).unwrap_err().contains("¿?"));
    }

    #[test]
    fn the_draft_orders_the_tasks_and_holds_a_placeholder_where_the_author_writes() {
        let tasks = tasks(&titles(&["First", "Second"])).unwrap();
        let draft = contract(
            "PLAN_docs_move",
            "Docs move",
            None,
            &tasks,
            "2026-12-07T00:00:00Z",
        );
        assert_eq!(draft["tasks"][1]["prerequisites"], json!(["T-first"]));
        assert_eq!(draft["tasks"][0]["prerequisites"], json!([]));
        let (path, _) = placeholder_in_json(&draft).unwrap();
        assert!(path.starts_with("$."), "{path}");
    }

    #[test]
    fn a_draft_with_every_placeholder_written_has_none_left() {
        let tasks = tasks(&titles(&["Only"])).unwrap();
        let draft = contract(
            "PLAN_docs_move",
            "Docs move",
            Some("Docs live in docs/."),
            &tasks,
            "now",
        );
        let written = draft
            .to_string()
            .replace("To be written before approval: ", "Written: ");
        let written: Value = serde_json::from_str(&written).unwrap();
        assert_eq!(placeholder_in_json(&written), None);
    }

    #[test]
    fn a_placeholder_line_is_found_with_its_file_and_line() {
        let readme = readme(
            "Docs move",
            None,
            Some("Why."),
            &tasks(&titles(&["Only"])).unwrap(),
        );
        let found = placeholder_in_markdown([("README.md", readme.as_bytes())]).unwrap();
        assert_eq!((found.0.as_str(), found.1), ("README.md", 5));
        let done = "# Title\n\nWritten.\n";
        assert_eq!(
            placeholder_in_markdown([("README.md", done.as_bytes())]),
            None
        );
    }
}
