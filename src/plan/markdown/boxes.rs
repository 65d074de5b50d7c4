//! The one edit dwp makes to a README's task list: a task's box ticked (`dwp update --tick`) or
//! unticked (`dwp amend` reopening a completed task), with `Plan Status: X/N` recounted from the
//! boxes. Only the box and the count change; every other byte, line ending included, stays.

use super::{Marker, PlanStatusValue, Readme, edit_line, parse_readme};

/// `readme` with task `id`'s box set to `done` and the Plan Status count following the boxes;
/// the same text when the box already says so. A task the index does not list, or a box holding
/// a marker other than `[ ]` / `[x]`, is an error naming it: dwp does not guess what `[~]` means.
pub fn set_box(readme: &str, id: u64, done: bool) -> Result<String, String> {
    set_box_in(readme, &parse_readme(readme), id, done)
}

/// [`set_box`] with `readme` already parsed (`parsed`, its [`parse_readme`]), for a caller that
/// asks the index more than this.
pub fn set_box_in(readme: &str, parsed: &Readme, id: u64, done: bool) -> Result<String, String> {
    let Some(position) = parsed.index.iter().position(|e| e.id == id) else {
        return Err(format!("the task list has no box for task {id}"));
    };
    let entry = &parsed.index[position];
    let (from, to): (&[&str], &str) = match (&entry.marker, done) {
        (Marker::Done, true) | (Marker::Open, false) => return Ok(readme.to_owned()),
        (Marker::Open, true) => (&["[ ]"], "[x]"),
        (Marker::Done, false) => (&["[x]", "[X]"], "[ ]"),
        (Marker::Other(marker), _) => {
            return Err(format!(
                "task {id}'s box holds `{marker}` (line {}), which dwp does not read as open or done",
                entry.line
            ));
        }
    };
    let ticked = edit_line(readme, entry.line, |line| {
        let at = from
            .iter()
            .filter_map(|marker| line.find(marker))
            .min()
            .expect("the index read this box on this line");
        format!("{}{to}{}", &line[..at], &line[at + 3..])
    });
    let Some(status) = &parsed.plan_status else {
        return Ok(ticked);
    };
    let PlanStatusValue::Count {
        done: written,
        total,
    } = status.value
    else {
        return Ok(ticked);
    };
    // Only the box of `entry` changed (open to done, or back), so the count follows from the
    // parse already made (a second parse of a 10,000-task README costs about 14 ms); debug
    // builds check it against a parse of the edited text.
    let boxes = done_boxes(parsed) + usize::from(done) - usize::from(entry.marker.is_done());
    debug_assert_eq!(boxes, done_boxes(&parse_readme(&ticked)), "the recount");
    // `2/7`, `2 / 7`: the count as the line writes it, recounted.
    let count = regex::Regex::new(&format!(r"\b{written}(\s*)/(\s*){total}\b"))
        .expect("a pattern of digits");
    // Every `Plan Status:` line that agreed with the first is recounted with it, so a tick
    // never makes two lines disagree (DWP077).
    let agreeing = std::iter::once(status.line).chain(
        parsed
            .more_plan_status
            .iter()
            .filter(|other| other.value == status.value)
            .map(|other| other.line),
    );
    Ok(agreeing.fold(ticked, |text, line_no| {
        edit_line(&text, line_no, |line| {
            count
                .replacen(line, 1, format!("{boxes}${{1}}/${{2}}{total}"))
                .into_owned()
        })
    }))
}

/// How many boxes of the index say done.
fn done_boxes(parsed: &Readme) -> usize {
    parsed.index.iter().filter(|e| e.marker.is_done()).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    const README: &str = "# Plan\r\n\r\n**Plan Status:** 1 / 3 tasks\r\n\r\n## Task List\r\n\r\n\
        - [x] Task 1: One ([file](./1.task_one.md))\r\n\
        - [ ] Task 2: Two, with [ ] in its title ([file](./2.task_two.md))\r\n\
        - [ ] Task 3: Three ([file](./3.task_three.md))\r\n";

    #[test]
    fn ticking_changes_the_box_and_the_count_and_nothing_else() {
        let ticked = set_box(README, 2, true).unwrap();
        assert_eq!(
            ticked,
            README
                .replace("1 / 3 tasks", "2 / 3 tasks")
                .replace("- [ ] Task 2: Two, with [ ]", "- [x] Task 2: Two, with [ ]")
        );
        assert_eq!(set_box(&ticked, 2, true).unwrap(), ticked, "ticking twice");
        assert_eq!(
            set_box(&ticked, 2, false).unwrap(),
            README,
            "unticking undoes it"
        );
    }

    #[test]
    fn the_recount_counts_every_box_as_a_parse_of_the_edited_text_does() {
        // A task listed twice: only its first box is ticked, the second counts as it is.
        let twice = format!("{README}- [x] Task 2: Two again\r\n");
        let ticked = set_box(&twice, 2, true).unwrap();
        assert!(ticked.contains("**Plan Status:** 3 / 3 tasks"), "{ticked}");
        assert_eq!(done_boxes(&parse_readme(&ticked)), 3);
        // A stray checkbox outside the task list is not a box of the index.
        let stray = format!("{README}\r\n## Notes\r\n\r\n- [x] remember the docs\r\n");
        let ticked = set_box(&stray, 3, true).unwrap();
        assert!(ticked.contains("**Plan Status:** 2 / 3 tasks"), "{ticked}");
    }

    #[test]
    fn a_box_dwp_cannot_read_or_a_task_not_listed_is_refused() {
        let odd = README.replace("- [ ] Task 3", "- [~] Task 3");
        assert!(set_box(&odd, 3, true).unwrap_err().contains("`[~]`"));
        assert!(set_box(README, 9, true).unwrap_err().contains("task 9"));
    }

    #[test]
    fn a_plan_status_that_is_not_a_count_is_left_as_it_is() {
        let words = README.replace("1 / 3 tasks", "in progress");
        let ticked = set_box(&words, 3, true).unwrap();
        assert!(ticked.contains("**Plan Status:** in progress"));
        assert!(ticked.contains("- [x] Task 3"));
    }
}
