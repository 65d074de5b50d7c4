//! The README's task index: the checkbox items of the task list section (docs/plan-markdown.md).
//!
//! The section is the first heading named like a task list (`## Tasks`, `## Task List`,
//! `## 4. Task List & Links`, ...) up to the next heading of its level or above, sub-headings
//! (`### Phase 1`) included. Every item in it is read, whatever its bullet (`-`, `*`, `+`, `1.`)
//! and wherever its link sits: on the line, as the title's link text, in parentheses, or on a
//! `See:` continuation line. An item of the section that dwp cannot read as a task (a checkbox
//! naming no task number, a task line without a checkbox) is a problem, never skipped; items
//! nested under a task (sub-steps) are not tasks. Without such a heading, the index is the first
//! list holding a `Task N` checkbox, as before. Checkboxes outside the index are strays.

use super::document::{Document, Item};
use super::sections::{numbered_line, task_line};
use super::{Checkbox, IndexEntry, IndexProblem, Marker, Readme};

/// A heading that names the task list: its words are `task(s)` and at most `list`, `index`,
/// `checklist`, `links`, `and`.
fn is_task_list_key(key: &str) -> bool {
    let words: Vec<&str> = key
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    matches!(words.first(), Some(&"task" | &"tasks"))
        && words.iter().all(|w| {
            matches!(
                *w,
                "task" | "tasks" | "list" | "index" | "checklist" | "links" | "link" | "and"
            )
        })
}

/// A marker written as text (`[~]`, `[-]`, `[/]`): pulldown-cmark only knows `[ ]`, `[x]`, `[X]`.
fn text_marker(text: &str) -> Option<(Marker, &str)> {
    let rest = text.trim_start().strip_prefix('[')?;
    let mut chars = rest.char_indices();
    let (_, c) = chars.next()?;
    let (close, _) = chars.next().filter(|(_, c)| *c == ']')?;
    (c != ' ').then(|| (Marker::Other(format!("[{c}]")), &rest[close + 1..]))
}

/// The item's checkbox and the text after it.
fn checkbox(item: &Item) -> (Option<Marker>, &str) {
    match &item.marker {
        Some(marker) => (Some(marker.clone()), item.head.as_str()),
        None => match text_marker(&item.head) {
            Some((marker, rest)) => (Some(marker), rest),
            None => (None, item.head.as_str()),
        },
    }
}

/// What an item's head says: `Task N: Title`, `N. Title` (when `numbered` forms are read), or,
/// with nothing but a link to a task file, the file's number.
fn parse_head(head: &str, links: &[String], numbered: bool) -> Option<(u64, Option<String>)> {
    if let Some(task) = task_line(head) {
        return Some(task);
    }
    if let Some((id, title)) = numbered_line(head) {
        let links_own_file = links.iter().any(|l| file_number(l) == Some(id));
        if numbered || links_own_file {
            return Some((id, title));
        }
    }
    let blank = super::title::normalize_title(head).is_empty();
    let files: Vec<u64> = links.iter().filter_map(|l| file_number(l)).collect();
    match files.as_slice() {
        [id] if blank => Some((*id, None)),
        _ => None,
    }
}

/// `3` of `3.task_x.md` (or `tasks/3.task_x.md`).
fn file_number(link: &str) -> Option<u64> {
    let name = link.split('#').next()?.rsplit('/').next()?;
    let digits = name.bytes().take_while(u8::is_ascii_digit).count();
    if !name[digits..].starts_with(".task_") {
        return None;
    }
    name[..digits].parse().ok()
}

/// Whether an ancestor of `items[index]` is a checkbox or a task line (so this one is a
/// sub-step of it).
fn under_a_task(items: &[Item], index: usize) -> bool {
    let mut parent = items[index].parent;
    while let Some(p) = parent {
        let (marker, head) = checkbox(&items[p]);
        if marker.is_some() || task_line(head).is_some() {
            return true;
        }
        parent = items[p].parent;
    }
    false
}

/// Read the index, the index problems and the strays into `readme`.
pub(super) fn read_index(doc: &Document, readme: &mut Readme) {
    let items = &doc.outline.items;
    let headings = &doc.outline.headings;
    let section = headings
        .iter()
        .position(|h| is_task_list_key(&h.key))
        .map(|i| {
            let end = super::sections::section_end(headings, i, doc.text.len());
            (
                headings[i].range.end,
                end,
                doc.lines.of(headings[i].range.start),
            )
        });
    let candidate: Vec<bool> = match section {
        Some((start, end, line)) => {
            readme.task_list_line = Some(line);
            (0..items.len())
                .map(|i| (start..end).contains(&items[i].range.start) && !under_a_task(items, i))
                .collect()
        }
        None => fallback_list(items),
    };
    let numbered = section.is_some();
    for (index, item) in items.iter().enumerate() {
        let (marker, head) = checkbox(item);
        let line = doc.lines.of(item.range.start);
        let parsed = if candidate[index] {
            parse_head(head, &item.links, numbered)
        } else {
            None
        };
        match (marker, parsed) {
            (Some(marker), Some((id, title))) => {
                readme.index_line.get_or_insert(line);
                if doc.is_dedented(line) {
                    readme.index_in_code.push(line);
                }
                readme.index.push(IndexEntry {
                    id,
                    title,
                    marker,
                    links: item.links.clone(),
                    line,
                });
            }
            (Some(_), None) if candidate[index] => readme.index_problems.push(IndexProblem {
                message: format!(
                    "`{}` is a checkbox in the task list that names no task number",
                    head.trim()
                ),
                line,
                task: None,
            }),
            (Some(marker), None) => readme.strays.push(Checkbox {
                marker,
                text: head.trim().to_owned(),
                line,
            }),
            (None, Some((id, _))) => readme.index_problems.push(IndexProblem {
                message: format!("task {id}'s line in the task list has no checkbox"),
                line,
                task: Some(id),
            }),
            (None, None) => {}
        }
    }
}

/// Without a task list heading: the items of the first list that holds a `Task N` checkbox.
fn fallback_list(items: &[Item]) -> Vec<bool> {
    let first = items.iter().enumerate().find(|(i, item)| {
        let (marker, head) = checkbox(item);
        marker.is_some() && !under_a_task(items, *i) && task_line(head).is_some()
    });
    let Some((_, first)) = first else {
        return vec![false; items.len()];
    };
    items
        .iter()
        .map(|i| i.list == first.list && i.parent == first.parent)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_list_headings() {
        for key in [
            "tasks",
            "task list",
            "task list and links",
            "task index",
            "task checklist",
        ] {
            assert!(is_task_list_key(key), "{key}");
        }
        for key in ["tasks done", "subtasks", "goal", "task 1: x", "notes"] {
            assert!(!is_task_list_key(key), "{key}");
        }
    }

    #[test]
    fn file_numbers() {
        assert_eq!(file_number("3.task_x.md"), Some(3));
        assert_eq!(file_number("tasks/12.task_x.md"), Some(12));
        assert_eq!(file_number("#task-3"), None);
        assert_eq!(file_number("README.md"), None);
    }
}
