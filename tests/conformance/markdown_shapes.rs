//! One test per shape of plan markdown found in public plans, the public templates and the
//! public reference's own test plans (docs/plan-markdown.md lists them with their sources).
//! The fixtures here are written for these tests, in the shape found, never copied.
//!
//! Each test reads a README (or a task file) through `dwp::plan::markdown` and checks exactly what
//! the reader takes from it: task ids, titles (or none), boxes, links, problems, sections.

use dwp::plan::markdown::{Marker, PlanStatusValue, Readme, parse_readme, parse_task_file};

/// (id, title, done, links) of every index entry.
fn index(readme: &Readme) -> Vec<(u64, Option<&str>, bool, Vec<&str>)> {
    readme
        .index
        .iter()
        .map(|e| {
            (
                e.id,
                e.title.as_deref(),
                e.marker.is_done(),
                e.links.iter().map(String::as_str).collect(),
            )
        })
        .collect()
}

fn readme_with(task_list: &str) -> Readme {
    let text = format!(
        "# Plan: Shapes\n\n**Standard:** DWP spec 5.0.0\n\n## 1. Goal\n\nRead it.\n\n## 2. Context\n\nA repo.\n\n\
         {task_list}\n\n## 5. Execution Rules\n\n- one task at a time\n"
    );
    let readme = parse_readme(&text);
    assert!(
        readme.index_problems.is_empty(),
        "{:?}",
        readme.index_problems
    );
    readme
}

/// What every two-task README below must read: task 1 done, task 2 open, each with its file.
fn two() -> Vec<(u64, Option<&'static str>, bool, Vec<&'static str>)> {
    vec![
        (
            1,
            Some("Install the parser"),
            true,
            vec!["1.task_install_parser.md"],
        ),
        (
            2,
            Some("Final Review"),
            false,
            vec!["2.task_final_review.md"],
        ),
    ]
}

#[test]
fn see_line_under_the_item_is_a_link_not_part_of_the_title() {
    let readme = readme_with(
        "## 4. Task List & Links\n\n\
         - [x] Task 1: Install the parser\n      See: [1.task_install_parser.md](./1.task_install_parser.md)\n\
         - [ ] Task 2: Final Review\n      See: [2.task_final_review.md](./2.task_final_review.md)\n\n\
         Plan Status: 1/2 completed",
    );
    assert_eq!(index(&readme), two());
    assert_eq!(
        readme.plan_status.unwrap().value,
        PlanStatusValue::Count { done: 1, total: 2 }
    );
}

#[test]
fn see_lines_with_blank_lines_between_items() {
    let readme = readme_with(
        "## 4. Task List & Links\n\nThe agent must execute tasks **in order**.\n\n\
         - [x] Task 1: Install the parser\n      See: [1.task_install_parser.md](./1.task_install_parser.md)\n\n\
         - [ ] Task 2: Final Review\n      See: [2.task_final_review.md](./2.task_final_review.md)\n",
    );
    assert_eq!(index(&readme), two());
}

#[test]
fn see_line_after_a_blank_line_renders_as_code_but_still_names_the_file() {
    let readme = readme_with(
        "## Task List\n\n- [x] Task 1: Install the parser\n\n      See: [1.task_install_parser.md](./1.task_install_parser.md)\n\n\
         - [ ] Task 2: Final Review\n\n      See: [2.task_final_review.md](./2.task_final_review.md)\n",
    );
    assert_eq!(index(&readme), two());
}

#[test]
fn see_line_naming_the_file_in_a_code_span() {
    let readme = readme_with(
        "## Tasks\n\n- [x] Task 1: Install the parser\n      See: `1.task_install_parser.md` (written first)\n\
         - [ ] Task 2: Final Review\n      See: `2.task_final_review.md`\n",
    );
    assert_eq!(index(&readme), two());
}

#[test]
fn bold_task_label_with_a_status_emoji() {
    let readme = readme_with(
        "## 4. Task List\n\n- [x] **Task 1:** Install the parser ✅\n      See: [1.task_install_parser.md](./1.task_install_parser.md)\n\n\
         - [ ] **Task 2:** Final Review\n      See: [2.task_final_review.md](./2.task_final_review.md)\n",
    );
    assert_eq!(index(&readme), two());
}

#[test]
fn no_title_at_all_gives_no_title() {
    let readme = readme_with(
        "## Tasks\n\n- [x] Task 1\n      See: [1.task_install_parser.md](./1.task_install_parser.md)\n\
         - [ ] Task 2\n      See: [2.task_final_review.md](./2.task_final_review.md)\n",
    );
    assert_eq!(
        index(&readme),
        [
            (1, None, true, vec!["1.task_install_parser.md"]),
            (2, None, false, vec!["2.task_final_review.md"]),
        ]
    );
}

#[test]
fn no_title_and_no_link() {
    let readme = readme_with("## Tasks\n\n- [x] Task 1\n- [ ] Task 2\n");
    assert_eq!(
        index(&readme),
        [(1, None, true, vec![]), (2, None, false, vec![])]
    );
}

#[test]
fn title_as_the_link_text() {
    let readme = readme_with(
        "## Tasks\n\n- [x] Task 1: [Install the parser](./1.task_install_parser.md)\n\
         - [ ] Task 2: [Final Review](./2.task_final_review.md)\n",
    );
    assert_eq!(index(&readme), two());
}

#[test]
fn link_after_the_title_with_and_without_dot_slash() {
    for dot in ["", "./"] {
        let readme = readme_with(&format!(
            "## Tasks\n\n- [x] Task 1: Install the parser — [1.task_install_parser.md]({dot}1.task_install_parser.md)\n\
             - [ ] Task 2: Final Review — [2.task_final_review.md]({dot}2.task_final_review.md)\n"
        ));
        assert_eq!(index(&readme), two(), "{dot:?}");
    }
}

#[test]
fn link_in_parentheses_after_the_title() {
    let readme = readme_with(
        "## Tasks\n\n- [x] Task 1: Install the parser ([1.task_install_parser.md](1.task_install_parser.md))\n\
         - [ ] Task 2: Final Review ([2.task_final_review.md](2.task_final_review.md))\n",
    );
    assert_eq!(index(&readme), two());
}

#[test]
fn the_whole_item_is_one_link_numbered_without_the_word_task() {
    let readme = readme_with(
        "## Task List\n\n- [x] [1. Install the parser](1.task_install_parser.md)\n\
         - [ ] [2. Final Review](2.task_final_review.md)\n",
    );
    assert_eq!(index(&readme), two());
}

#[test]
fn numbered_item_with_an_arrow_to_a_bare_file_name() {
    let readme = readme_with(
        "## 4. Task List & Links\n\n- [x] 1. Install the parser          → 1.task_install_parser.md\n\
         - [ ] 2. Final Review                → 2.task_final_review.md\n",
    );
    assert_eq!(index(&readme), two());
}

#[test]
fn numbered_item_with_a_path_in_a_code_span() {
    let readme = readme_with(
        "## Task List\n\n- [x] 1. `tasks/1.task_install_parser.md` — Install the parser\n\
         - [ ] 2. `tasks/2.task_final_review.md` — Final Review\n",
    );
    assert_eq!(
        index(&readme),
        [
            (
                1,
                Some("Install the parser"),
                true,
                vec!["tasks/1.task_install_parser.md"]
            ),
            (
                2,
                Some("Final Review"),
                false,
                vec!["tasks/2.task_final_review.md"]
            ),
        ]
    );
}

#[test]
fn star_plus_and_ordered_bullets() {
    for (a, b) in [("* ", "* "), ("+ ", "+ "), ("1. ", "2. "), ("1) ", "2) ")] {
        let readme = readme_with(&format!(
            "## Tasks\n\n{a}[x] Task 1: Install the parser — [1.task_install_parser.md](1.task_install_parser.md)\n\
             {b}[ ] Task 2: Final Review — [2.task_final_review.md](2.task_final_review.md)\n"
        ));
        assert_eq!(index(&readme), two(), "{a:?}");
    }
}

#[test]
fn sub_headings_inside_the_task_list_section() {
    let readme = readme_with(
        "## 4. Task List & Links\n\n### Phase 1: Parser (Tasks 1-1)\n\n\
         - [x] Task 1: Install the parser\n      See: [1.task_install_parser.md](./1.task_install_parser.md)\n\n\
         ### Phase 2 — Wrap up\n\n\
         - [ ] Task 2: Final Review\n      See: [2.task_final_review.md](./2.task_final_review.md)\n",
    );
    assert_eq!(index(&readme), two());
}

#[test]
fn decorations_after_the_title_are_not_the_title() {
    let readme = readme_with(
        "## Tasks\n\n- [x] Task 1: Install the parser (2h) ✅ — [1.task_install_parser.md](1.task_install_parser.md)\n\
         - [ ] Task 2: Final Review (~30 min) ⏳ — [2.task_final_review.md](2.task_final_review.md)\n",
    );
    assert_eq!(index(&readme), two());
}

#[test]
fn a_descriptive_parenthetical_is_part_of_the_title() {
    let readme = readme_with(
        "## Tasks\n\n- [ ] Task 1: Write docs (EN + ES)\n      See: [1.task_docs.md](./1.task_docs.md)\n",
    );
    assert_eq!(
        readme.index[0].title.as_deref(),
        Some("Write docs (EN + ES)")
    );
}

#[test]
fn titles_with_colons_dashes_and_code_are_kept_whole() {
    let readme = readme_with(
        "## Tasks\n\n- [ ] Task 1: Certificate page: print — download `--pdf` — [1.task_cert.md](1.task_cert.md)\n",
    );
    assert_eq!(
        readme.index[0].title.as_deref(),
        Some("Certificate page: print — download `--pdf`")
    );
}

#[test]
fn lite_index_lines_link_their_anchor_or_nothing() {
    let records = "\n\n## Task 1: Install the parser {#task-1}\n\n### Goal\n\nG.\n\n## Task 2: Final Review {#task-2}\n\n### Goal\n\nG.\n";
    for lines in [
        "- [x] Task 1: Install the parser — [#task-1](#task-1)\n- [ ] Task 2: Final Review — [#task-2](#task-2)",
        "- [x] Task 1: Install the parser\n- [ ] Task 2: Final Review",
        "- [x] Task 1: Install the parser — (immutable anchor: #task-1)\n- [ ] Task 2: Final Review — (immutable anchor: #task-2)",
    ] {
        let readme = parse_readme(&format!(
            "# Plan\n\n## Goal\n\nG.\n\n## Context\n\nC.\n\n## Task List\n\n{lines}{records}"
        ));
        let got: Vec<(u64, Option<&str>, bool)> = readme
            .index
            .iter()
            .map(|e| (e.id, e.title.as_deref(), e.marker.is_done()))
            .collect();
        assert_eq!(
            got,
            [
                (1, Some("Install the parser"), true),
                (2, Some("Final Review"), false)
            ],
            "{lines}"
        );
        assert_eq!(readme.inline_tasks.len(), 2);
        assert_eq!(readme.inline_tasks[1].anchor.as_deref(), Some("task-2"));
    }
}

#[test]
fn lite_task_list_after_the_records_at_the_end_of_the_file() {
    let readme = parse_readme(
        "# Plan\n\n## Goal\n\nG.\n\n## Context\n\nC.\n\n## Task 1: Install the parser {#task-1}\n\n**Goal:** G.\n\n\
         ## Task 2 {#task-2}\n\n**Goal:** G.\n\n## Task List\n\n- [x] Task 1: Install the parser\n- [ ] Task 2: Final Review\n",
    );
    assert_eq!(readme.index.len(), 2);
    assert_eq!(
        readme.inline_tasks[1].title, None,
        "`## Task 2 {{#task-2}}` has no title"
    );
    assert_eq!(
        readme.goal.unwrap().body,
        "G.",
        "the plan's Goal, not task 1's"
    );
}

#[test]
fn an_index_indented_four_spaces_is_read_and_flagged() {
    let readme = readme_with(
        "## Tasks\n\n    - [x] Task 1: Install the parser — [1.task_install_parser.md](1.task_install_parser.md)\n\
         \x20   - [ ] Task 2: Final Review — [2.task_final_review.md](2.task_final_review.md)\n",
    );
    assert_eq!(index(&readme), two());
    assert_eq!(readme.index_in_code.len(), 2);
}

#[test]
fn a_readme_indented_until_its_second_item_is_read_whole() {
    // A heredoc artifact: everything up to the first item is indented four spaces.
    let text = "    # Plan\n\n    ## Goal\n    G.\n\n    ## Tasks\n    - [x] Task 1: Install the parser\n      See: [1.task_install_parser.md](./1.task_install_parser.md)\n\
                - [ ] Task 2: Final Review\n      See: [2.task_final_review.md](./2.task_final_review.md)\n\n    Plan Status: 1/2 completed\n";
    let readme = parse_readme(text);
    assert_eq!(index(&readme), two());
    assert_eq!(readme.index[0].line, 7);
    assert_eq!(readme.index[1].line, 9);
    assert!(!readme.index_in_code.is_empty());
}

#[test]
fn what_the_task_list_holds_but_is_not_a_task_is_reported() {
    let readme = parse_readme(
        "# Plan\n\n## Tasks\n\n- [x] Task 1: Install the parser — [1.task_a.md](1.task_a.md)\n\
         - [ ] Update the changelog\n- Task 2: Final Review — [2.task_b.md](2.task_b.md)\n\
         - a note about ordering\n",
    );
    assert_eq!(readme.index.len(), 1);
    let problems: Vec<usize> = readme.index_problems.iter().map(|p| p.line).collect();
    assert_eq!(problems, [6, 7], "{:?}", readme.index_problems);
}

#[test]
fn sub_steps_under_a_task_are_not_tasks() {
    let readme = readme_with(
        "## Tasks\n\n- [x] Task 1: Install the parser — [1.task_install_parser.md](1.task_install_parser.md)\n\
         \x20 - [x] Task 1.1: pick a version\n  - [ ] write the lockfile\n\
         - [ ] Task 2: Final Review — [2.task_final_review.md](2.task_final_review.md)\n",
    );
    assert_eq!(index(&readme), two());
}

#[test]
fn checklists_outside_the_task_list_are_strays() {
    let readme = readme_with(
        "## Tasks\n\n- [x] Task 1: Install the parser — [1.task_install_parser.md](1.task_install_parser.md)\n\
         - [ ] Task 2: Final Review — [2.task_final_review.md](2.task_final_review.md)\n\n\
         ## Execution Checklist\n\n- [x] 9. Commit: \"feat: parser - Task 1 of PLAN_shapes\"\n- [ ] Task 2 reviewed\n\n\
         > **Agent rule:** work on the first unchecked `[ ]` task.",
    );
    assert_eq!(index(&readme), two());
    assert_eq!(readme.strays.len(), 2);
}

#[test]
fn fenced_examples_inside_the_task_list_are_ignored() {
    let readme = readme_with(
        "## Tasks\n\n```markdown\n- [x] Task 9: an example\n```\n\n\
         - [x] Task 1: Install the parser — [1.task_install_parser.md](1.task_install_parser.md)\n\
         - [ ] Task 2: Final Review — [2.task_final_review.md](2.task_final_review.md)\n",
    );
    assert_eq!(index(&readme), two());
}

#[test]
fn odd_markers_are_read_as_not_done() {
    let readme = readme_with(
        "## Tasks\n\n- [~] Task 1: Install the parser — [1.task_install_parser.md](1.task_install_parser.md)\n",
    );
    assert_eq!(readme.index[0].marker, Marker::Other("[~]".into()));
    assert_eq!(readme.index[0].title.as_deref(), Some("Install the parser"));
}

#[test]
fn plan_status_lines() {
    for (line, want) in [
        (
            "Plan Status: 1/2",
            PlanStatusValue::Count { done: 1, total: 2 },
        ),
        (
            "Plan Status: 1/2 completed",
            PlanStatusValue::Count { done: 1, total: 2 },
        ),
        (
            "**Plan Status:** 1 / 2",
            PlanStatusValue::Count { done: 1, total: 2 },
        ),
        (
            "> Plan Status: 1/2",
            PlanStatusValue::Count { done: 1, total: 2 },
        ),
        ("Plan Status: materializing", PlanStatusValue::Materializing),
        (
            "| Plan Status | 1/2 |\n|---|---|",
            PlanStatusValue::Count { done: 1, total: 2 },
        ),
    ] {
        let readme = parse_readme(&format!("# Plan\n\n{line}\n"));
        assert_eq!(readme.plan_status.map(|s| s.value), Some(want), "{line}");
    }
    // Other progress lines are not the Plan Status line.
    for line in ["- Completed: 1/2", "**Overall Progress:** 1/2 tasks (50%)"] {
        assert_eq!(
            parse_readme(&format!("# Plan\n\n{line}\n")).plan_status,
            None
        );
    }
}

#[test]
fn standard_lines() {
    for line in [
        "**Standard:** DWP spec 2.3.0",
        "Standard: DWP spec 2.3.0",
        "| **Standard:** DWP spec 2.3.0 | |\n|---|---|",
        "| Standard | DWP spec 2.3.0 |\n|---|---|",
    ] {
        let readme = parse_readme(&format!("# Plan\n\n{line}\n"));
        assert_eq!(
            readme.standard.map(|s| s.version).as_deref(),
            Some("2.3.0"),
            "{line}"
        );
    }
}

#[test]
fn plan_sections_numbered_decorated_or_labelled() {
    for goal in [
        "## 1. Goal\n\nShip it.",
        "## Goal (what)\n\nShip it.",
        "## 🎯 Goal\n\nShip it.",
        "**Goal:** Ship it.",
        "**Goal**: Ship it.",
        "**Goal:**\nShip it.",
    ] {
        let readme = parse_readme(&format!("# Plan\n\n{goal}\n\n## Context\n\nC.\n"));
        assert_eq!(
            readme.goal.map(|g| g.body).as_deref(),
            Some("Ship it."),
            "{goal}"
        );
    }
}

const TASK_FULL: &str = "# Task 3: Add the retry queue\n\n## 1. Context\n\nWhy.\n\n## 2. Read Before Starting\n\n- x\n\n\
    ## 3. Goal\n\nWhat.\n\n## 4. Touched Surface\n\n- src/q.rs\n\n## 5. Instructions\n\n1. do\n\n\
    ## 6. Acceptance Criteria\n\n- [ ] retried\n\n## 7. Outputs\n\nnone\n\n## 8. Validation\n\n- `cargo test`\n\n\
    ## 9. Rollback\n\nrevert\n\n## 10. Execution Checklist\n\n- [ ] 9. Commit: \"Task 3 of PLAN_x\"\n\n\
    ## 11. Completion & Log (filled by the agent)\n\n- **Status:** pending.\n- **Timestamp:**\n- **Gate record:**\n- **Skills disposition:**\n";

#[test]
fn numbered_task_sections_and_the_templates_log_heading() {
    let record = parse_task_file(TASK_FULL).unwrap();
    for name in [
        "Context",
        "Goal",
        "Touched Surface",
        "Acceptance Criteria",
        "Validation",
    ] {
        assert!(record.section(name).is_some(), "{name}");
    }
    let log = record.log.unwrap();
    assert_eq!(log.status_word().as_deref(), Some("pending"));
}

#[test]
fn task_records_written_with_bold_labels() {
    let record = parse_task_file(
        "# Task 1: Tiny\n\n**Context:** a repo.\n**Goal**: make it work\nacross two lines.\n\n\
         **Touched Surface:** src/a.rs\n\n**Acceptance Criteria:**\n- works\n\n**Validation:** `make test`\n\n\
         **Completion log:** Status: in progress · Skills disposition: none\n",
    )
    .unwrap();
    assert_eq!(
        record.section("Goal").unwrap().body,
        "make it work\nacross two lines."
    );
    assert_eq!(
        record.section("Acceptance Criteria").unwrap().body,
        "- works"
    );
    let log = record.log.unwrap();
    assert_eq!(log.status_word().as_deref(), Some("in_progress"));
    assert_eq!(log.skills_disposition.unwrap().value, "none");
}

#[test]
fn log_status_lines_in_every_emphasis_case_and_punctuation() {
    for (line, want) in [
        ("Status: pending.", Some("pending")),
        ("**Status:** Pending", Some("pending")),
        ("- **Status:** **PENDING**", Some("pending")),
        ("Status: `pending`;", Some("pending")),
        ("**Status:** ✅ Complete", Some("completed")),
        (
            "- **Status:** (completed / blocked / failed validation)",
            None,
        ),
        ("- **Status:**", None),
    ] {
        let record =
            parse_task_file(&format!("# Task 1: T\n\n## Completion & Log\n\n{line}\n")).unwrap();
        assert_eq!(record.log.unwrap().status_word().as_deref(), want, "{line}");
    }
}

#[test]
fn completion_log_and_completion_and_log_are_one_section() {
    for heading in [
        "## Completion & Log",
        "## Completion log",
        "### Completion and Log",
        "## 8. Completion &amp; Log",
    ] {
        let record =
            parse_task_file(&format!("# Task 1: T\n\n{heading}\n\nStatus: completed\n")).unwrap();
        assert_eq!(
            record.log.and_then(|l| l.status_word()).as_deref(),
            Some("completed"),
            "{heading}"
        );
    }
}
