//! The same plan written in every shape of plan markdown dwp reads (docs/plan-markdown.md) must
//! read the same and be judged the same, and the writers must keep exactly what it records:
//!
//! - a differential test renders one plan model in every index shape and every section shape
//!   and asserts the same parsed index (through `dwp::plan::markdown`) and the same verdict (through
//!   `dwp verify`), apart from the one advisory a shape itself calls for;
//! - every index shape goes through `dwp reconcile --write` and `dwp init`, and the state.json
//!   they write is byte for byte the one the canonical shape gives: titles, locators, boxes and
//!   gates survive exactly.

use crate::common::{dwp_in, edit, verify_codes};
use dwp::synth::SynthPlan;
use std::path::{Path, PathBuf};

/// One task of the plan model.
#[derive(Debug, Clone)]
struct Task {
    id: u64,
    title: String,
    /// The task file (Full) or `#task-N` (Lite).
    target: String,
    done: bool,
}

/// A way of writing the task list section.
struct IndexShape {
    name: &'static str,
    /// Whether the shape writes the title (else no title drift can be claimed).
    titled: bool,
    lite: bool,
    /// The whole task list section, heading included.
    render: fn(&[Task], &str) -> String,
    /// Codes the shape itself calls for (an advisory).
    codes: &'static [&'static str],
}

fn mark(task: &Task) -> char {
    if task.done { 'x' } else { ' ' }
}

fn lines(tasks: &[Task], line: impl Fn(&Task) -> String) -> String {
    tasks.iter().map(line).collect::<Vec<_>>().join("\n")
}

/// `template` with `{mark}`, `{id}`, `{title}` and `{target}` replaced by the task's box,
/// number, title and target (in one pass, so a title never expands a placeholder): one index
/// item written as a shape writes it.
fn fill(template: &str, task: &Task) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open..];
        let (value, skip) = [
            ("{mark}", mark(task).to_string()),
            ("{id}", task.id.to_string()),
            ("{title}", task.title.clone()),
            ("{target}", task.target.clone()),
        ]
        .into_iter()
        .find(|(name, _)| after.starts_with(name))
        .map(|(name, value)| (value, name.len()))
        .unwrap_or_else(|| ("{".to_owned(), 1));
        out.push_str(&value);
        rest = &after[skip..];
    }
    out.push_str(rest);
    out
}

/// The section `heading`, the items (`item` filled for each task, one a line), then `status`.
fn items_then_status(heading: &str, tasks: &[Task], status: &str, item: &str) -> String {
    format!(
        "{heading}\n\n{}\n\n{status}",
        lines(tasks, |t| fill(item, t))
    )
}

/// The section `heading`, `status`, then the items (`item` filled for each task, one a line).
fn status_then_items(heading: &str, tasks: &[Task], status: &str, item: &str) -> String {
    format!(
        "{heading}\n\n{status}\n\n{}",
        lines(tasks, |t| fill(item, t))
    )
}

/// A Full shape that writes the titles and calls for no advisory of its own (most of them).
const fn full(name: &'static str, render: fn(&[Task], &str) -> String) -> IndexShape {
    IndexShape {
        name,
        titled: true,
        lite: false,
        render,
        codes: &[],
    }
}

/// A Lite shape that calls for no advisory of its own; `titled` if it writes the titles.
const fn lite(name: &'static str, titled: bool, render: fn(&[Task], &str) -> String) -> IndexShape {
    IndexShape {
        name,
        titled,
        lite: true,
        render,
        codes: &[],
    }
}

/// An item with its title and a `See:` line linking the task file below it.
const SEE_LINE: &str = "- [{mark}] Task {id}: {title}\n      See: [{target}](./{target})";

/// dwp's own item: title, em dash, the target as link text and link.
const EM_DASH_LINK: &str = "- [{mark}] Task {id}: {title} — [{target}]({target})";

const FULL_SHAPES: &[IndexShape] = &[
    full("em dash link (dwp's own)", |t, s| {
        status_then_items("## Tasks", t, s, EM_DASH_LINK)
    }),
    full("See: line", |t, s| {
        items_then_status("## 4. Task List & Links", t, s, SEE_LINE)
    }),
    full("See: line, blank lines between items", |t, s| {
        format!(
            "## 4. Task List & Links\n\nThe agent must execute tasks **in order**.\n\n{}\n\n{s}",
            t.iter()
                .map(|t| fill(SEE_LINE, t))
                .collect::<Vec<_>>()
                .join("\n\n")
        )
    }),
    full("See: line with a code span", |t, s| {
        items_then_status(
            "## Task List",
            t,
            s,
            "- [{mark}] Task {id}: {title}\n      See: `{target}`",
        )
    }),
    full("bold label with a status emoji", |t, s| {
        format!(
            "## 4. Task List\n\n{}\n\n{s}",
            lines(t, |t| {
                let emoji = if t.done { " ✅" } else { "" };
                fill(
                    &format!(
                        "- [{{mark}}] **Task {{id}}:** {{title}}{emoji}\n      See: [{{target}}](./{{target}})"
                    ),
                    t,
                )
            })
        )
    }),
    IndexShape {
        titled: false,
        ..full("no title, See: line", |t, s| {
            items_then_status(
                "## Tasks",
                t,
                s,
                "- [{mark}] Task {id}\n      See: [{target}](./{target})",
            )
        })
    },
    IndexShape {
        titled: false,
        ..full("no title, no link", |t, s| {
            items_then_status("## Tasks", t, s, "- [{mark}] Task {id}")
        })
    },
    full("title as the link text", |t, s| {
        items_then_status(
            "## Tasks",
            t,
            s,
            "- [{mark}] Task {id}: [{title}](./{target})",
        )
    }),
    full("link with ./", |t, s| {
        items_then_status(
            "## Tasks",
            t,
            s,
            "- [{mark}] Task {id}: {title} — [{target}](./{target})",
        )
    }),
    full("link in parentheses", |t, s| {
        items_then_status(
            "## Tasks",
            t,
            s,
            "- [{mark}] Task {id}: {title} ([{target}]({target}))",
        )
    }),
    full("the whole item one link", |t, s| {
        items_then_status("## Task List", t, s, "- [{mark}] [{id}. {title}]({target})")
    }),
    full("numbered, arrow to a bare file name", |t, s| {
        format!(
            "## 4. Task List & Links\n\n{}\n\n{s}",
            lines(t, |t| fill(
                &format!("- [{{mark}}] {{id}}. {:<24} → {{target}}", t.title),
                t
            ))
        )
    }),
    full("* bullets", |t, s| {
        items_then_status(
            "## Tasks",
            t,
            s,
            "* [{mark}] Task {id}: {title} — [{target}]({target})",
        )
    }),
    full("+ bullets", |t, s| {
        items_then_status(
            "## Tasks",
            t,
            s,
            "+ [{mark}] Task {id}: {title} — [{target}]({target})",
        )
    }),
    full("ordered list", |t, s| {
        items_then_status(
            "## Tasks",
            t,
            s,
            "{id}. [{mark}] Task {id}: {title} — [{target}]({target})",
        )
    }),
    full("sub-headings inside the section", |t, s| {
        let (first, rest) = t.split_at(t.len() / 2);
        let item = |t: &Task| fill(SEE_LINE, t);
        format!(
            "## 4. Task List & Links\n\n{s}\n\n### Phase 1: Build (Tasks 1-{})\n\n{}\n\n### Phase 2 — Close\n\n{}",
            first.len(),
            lines(first, item),
            lines(rest, item)
        )
    }),
    full("decorations after the title", |t, s| {
        format!(
            "## Tasks\n\n{}\n\n{s}",
            lines(t, |t| {
                let emoji = if t.done { " ✅" } else { " ⏳" };
                fill(
                    &format!(
                        "- [{{mark}}] Task {{id}}: {{title}} (2h){emoji} — [{{target}}]({{target}})"
                    ),
                    t,
                )
            })
        )
    }),
    IndexShape {
        codes: &["DWP094"],
        ..full("indented four spaces", |t, s| {
            status_then_items(
                "## Tasks",
                t,
                s,
                "    - [{mark}] Task {id}: {title} — [{target}]({target})",
            )
        })
    },
];

const LITE_SHAPES: &[IndexShape] = &[
    lite("lite: anchor link (dwp's own)", true, |t, s| {
        status_then_items("## Tasks", t, s, EM_DASH_LINK)
    }),
    lite("lite: no link", true, |t, s| {
        items_then_status("## Task List", t, s, "- [{mark}] Task {id}: {title}")
    }),
    lite("lite: immutable anchor note", true, |t, s| {
        items_then_status(
            "## Task List",
            t,
            s,
            "- [{mark}] Task {id}: {title} — (immutable anchor: {target})",
        )
    }),
    lite("lite: no title", false, |t, s| {
        items_then_status("## Task List", t, s, "- [{mark}] Task {id}")
    }),
];

/// A way of writing the sections of the task records and of the README.
struct SectionShape {
    name: &'static str,
    /// Rewrites a synthetic task record (`### Context` ... `## Completion & Log`).
    task: fn(&str) -> String,
    /// Rewrites the README's `## Goal` / `## Context`.
    readme: fn(&str) -> String,
}

const SECTIONS: [&str; 5] = [
    "Context",
    "Goal",
    "Touched Surface",
    "Acceptance Criteria",
    "Validation",
];

/// The heading of the log in a synthetic record: Full task files and Lite sections differ.
fn log_heading(text: &str) -> &'static str {
    if text.contains("### Completion log\n") {
        "### Completion log"
    } else {
        "## Completion & Log"
    }
}

const SECTION_SHAPES: &[SectionShape] = &[
    SectionShape {
        name: "plain headings",
        task: |t| t.to_owned(),
        readme: |t| t.to_owned(),
    },
    SectionShape {
        name: "numbered headings",
        task: |t| {
            let mut out = t.to_owned();
            for (n, name) in SECTIONS.iter().enumerate() {
                out = out.replace(
                    &format!("### {name}\n"),
                    &format!("### {}. {name}\n", n + 1),
                );
            }
            let log = log_heading(t);
            let (hashes, name) = log.split_once(' ').unwrap();
            out.replace(&format!("{log}\n"), &format!("{hashes} 6. {name}\n"))
        },
        readme: |t| {
            t.replace("## Goal\n", "## 1. Goal\n")
                .replace("## Context\n", "## 2. Context\n")
        },
    },
    SectionShape {
        name: "the template's log heading, bold bullets, trailing periods",
        task: |t| {
            let log = log_heading(t);
            let (hashes, name) = log.split_once(' ').unwrap();
            t.replace(
                &format!("{log}\n"),
                &format!("{hashes} 11. {name} (filled by the agent)\n"),
            )
            .replace("Status: completed\n", "- **Status:** completed.\n")
            .replace("Status: pending\n", "- **Status:** pending.\n")
        },
        readme: |t| t.to_owned(),
    },
    SectionShape {
        name: "decorated headings",
        task: |t| {
            let mut out = t.to_owned();
            for name in SECTIONS {
                out = out.replace(
                    &format!("### {name}\n"),
                    &format!("### 📌 {name} (as planned)\n"),
                );
            }
            let log = log_heading(t);
            let (hashes, _) = log.split_once(' ').unwrap();
            out.replace(
                &format!("{log}\n"),
                &format!("{hashes} ✅ Completion log\n"),
            )
        },
        readme: |t| {
            t.replace("## Goal\n", "## 🎯 Goal (what)\n")
                .replace("## Context\n", "## Context (where)\n")
        },
    },
    SectionShape {
        name: "bold labels",
        task: |t| {
            let mut out = t.to_owned();
            for name in SECTIONS {
                out = out.replace(&format!("### {name}\n\n"), &format!("**{name}:**\n"));
            }
            out.replace("## Completion & Log\n\n", "**Completion & Log:**\n")
        },
        readme: |t| {
            t.replace("## Goal\n\n", "**Goal:** ")
                .replace("## Context\n\n", "**Context**: ")
        },
    },
];

/// A synthetic plan under test: its folder, the README the generator wrote, and how it is
/// written.
struct Plan {
    dir: PathBuf,
    tasks: Vec<Task>,
    synthetic_readme: String,
    shape: &'static IndexShape,
    sections: &'static SectionShape,
}

/// A clean synthetic plan of 4 tasks, 2 completed, written in `shape` and `sections`.
fn plan(root: &Path, shape: &'static IndexShape, sections: &'static SectionShape) -> Plan {
    let format = if shape.lite {
        dwp::plan::model::PlanFormat::Lite
    } else {
        dwp::plan::model::PlanFormat::Full
    };
    let dir = SynthPlan::new("PLAN_shape_under_test", 4)
        .completed(2)
        .format(format)
        .write(root)
        .unwrap();
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("state.json")).unwrap()).unwrap();
    let tasks: Vec<Task> = state["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| Task {
            id: t["id"].as_u64().unwrap(),
            title: t["title"].as_str().unwrap().to_owned(),
            target: t["locator"]["value"].as_str().unwrap().to_owned(),
            done: t["status"] == "completed",
        })
        .collect();
    let plan = Plan {
        synthetic_readme: std::fs::read_to_string(dir.join("README.md")).unwrap(),
        dir,
        tasks,
        shape,
        sections,
    };
    plan.write_readme();
    for task in plan.tasks.iter().filter(|_| !shape.lite) {
        let path = plan.dir.join(&task.target);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, (sections.task)(&text)).unwrap();
    }
    plan
}

impl Plan {
    /// The generator's README with its task list (from `## Tasks` to the first Lite record, or
    /// the end) in the plan's shape, and its sections in the plan's section shape.
    fn write_readme(&self) {
        let text = &self.synthetic_readme;
        let start = text.find("## Tasks\n").unwrap();
        let end = text.find("\n## Task 1").map_or(text.len(), |e| e + 1);
        let done = self.tasks.iter().filter(|t| t.done).count();
        let status = format!("Plan Status: {done}/{} completed", self.tasks.len());
        let section = (self.shape.render)(&self.tasks, &status);
        let rest = &text[end..];
        let tail = if rest.is_empty() {
            String::new()
        } else {
            format!("\n{rest}")
        };
        let readme = format!("{}{section}\n{tail}", &text[..start]);
        let readme = (self.sections.readme)(&(self.sections.task)(&readme));
        std::fs::write(self.dir.join("README.md"), readme).unwrap();
    }
}

fn shapes() -> impl Iterator<Item = &'static IndexShape> {
    FULL_SHAPES.iter().chain(LITE_SHAPES)
}

#[test]
fn every_index_shape_and_section_shape_reads_the_same_and_is_judged_the_same() {
    let mut failures = Vec::new();
    for shape in shapes() {
        for sections in SECTION_SHAPES
            .iter()
            .filter(|s| !shape.lite || s.name != "bold labels")
        {
            let root = tempfile::tempdir().unwrap();
            let Plan { dir, tasks, .. } = plan(root.path(), shape, sections);
            let case = format!("[{} × {}]", shape.name, sections.name);
            let readme = dwp::plan::markdown::parse_readme(
                &std::fs::read_to_string(dir.join("README.md")).unwrap(),
            );
            let read: Vec<(u64, Option<String>, bool, Option<String>)> = readme
                .index
                .iter()
                .map(|e| {
                    let target = if shape.lite {
                        Some(format!("#task-{}", e.id))
                    } else {
                        dwp::plan::records::linked_file(&e.links).map(str::to_owned)
                    };
                    (e.id, e.title.clone(), e.marker.is_done(), target)
                })
                .collect();
            let wanted: Vec<(u64, Option<String>, bool, Option<String>)> = tasks
                .iter()
                .map(|t| {
                    let target =
                        (shape.lite || shape.name != "no title, no link").then(|| t.target.clone());
                    (t.id, shape.titled.then(|| t.title.clone()), t.done, target)
                })
                .collect();
            if read != wanted || !readme.index_problems.is_empty() {
                failures.push(format!(
                    "{case}: read {read:?}, problems {:?}, want {wanted:?}",
                    readme.index_problems
                ));
            }
            let run = dwp_in(root.path(), &["verify", "PLAN_shape_under_test", "--json"]);
            let codes = verify_codes(&run.json());
            let want_exit = 0;
            if codes != shape.codes || run.code != want_exit {
                failures.push(format!(
                    "{case}: verify exit {} codes {codes:?}, want {want_exit} {:?}\n{}",
                    run.code, shape.codes, run.stdout
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Check task 3's box and record its completion in its log, as an agent does in the markdown.
fn complete_task_three_in_markdown(plan: &mut Plan) {
    plan.tasks[2].done = true;
    plan.write_readme();
    let record = if plan.shape.lite {
        plan.dir.join("README.md")
    } else {
        plan.dir.join(&plan.tasks[2].target)
    };
    let log = "Status: completed\nTimestamp: 2026-06-09T15:40:00Z\nGate record: cargo test → 13 passed, 0 failed\n\
               Skills disposition: none\nDocumentation decision: no change needed\n";
    // Tasks 1 and 2 are completed: task 3's is the first pending log of its record.
    edit(&record, "Status: pending\n", "\u{0}");
    let text = std::fs::read_to_string(&record).unwrap();
    let text = text
        .replacen('\u{0}', log, 1)
        .replace('\u{0}', "Status: pending\n");
    std::fs::write(&record, text).unwrap();
}

/// Every task of `state` has the title and locator of the plan model's task: what each writer
/// must keep, whatever the shape it read.
fn assert_titles_and_locators_kept(shape: &IndexShape, tasks: &[Task], state: &serde_json::Value) {
    for (task, json) in tasks.iter().zip(state["tasks"].as_array().unwrap()) {
        assert_eq!(json["title"], task.title.as_str(), "[{}] title", shape.name);
        assert_eq!(
            json["locator"]["value"],
            task.target.as_str(),
            "[{}] locator",
            shape.name
        );
    }
}

fn state_bytes(dir: &Path) -> Vec<u8> {
    std::fs::read(dir.join("state.json")).unwrap()
}

#[test]
fn reconcile_write_keeps_titles_locators_boxes_and_gates_in_every_shape() {
    for family in [FULL_SHAPES, LITE_SHAPES] {
        let mut canonical: Option<Vec<u8>> = None;
        for shape in family {
            let root = tempfile::tempdir().unwrap();
            let mut plan = plan(root.path(), shape, &SECTION_SHAPES[0]);
            let dir = plan.dir.clone();
            let before = state_bytes(&dir);
            let check = dwp_in(
                root.path(),
                &["reconcile", "PLAN_shape_under_test", "--json"],
            );
            assert_eq!(
                check.code, 0,
                "[{}] in sync before the edit:\n{}",
                shape.name, check.stdout
            );
            let write = dwp_in(
                root.path(),
                &["reconcile", "PLAN_shape_under_test", "--write"],
            );
            assert_eq!(write.code, 0, "[{}]\n{}", shape.name, write.stderr);
            assert_eq!(
                state_bytes(&dir),
                before,
                "[{}] a plan in sync is never rewritten",
                shape.name
            );

            complete_task_three_in_markdown(&mut plan);
            let tasks = &plan.tasks;
            let write = dwp_in(
                root.path(),
                &["reconcile", "PLAN_shape_under_test", "--write"],
            );
            assert_eq!(
                write.code, 0,
                "[{}]\n{}{}",
                shape.name, write.stdout, write.stderr
            );
            let after = state_bytes(&dir);
            let state: serde_json::Value = serde_json::from_slice(&after).unwrap();
            assert_titles_and_locators_kept(shape, tasks, &state);
            for (task, json) in tasks.iter().zip(state["tasks"].as_array().unwrap()) {
                assert_eq!(
                    json["status"] == "completed",
                    task.done,
                    "[{}] box of task {}",
                    shape.name,
                    task.id
                );
            }
            assert_eq!(
                state["tasks"][2]["gates"][0]["command"], "cargo test",
                "[{}]",
                shape.name
            );
            assert_eq!(
                state["tasks"][0]["gates"],
                serde_json::from_slice::<serde_json::Value>(&before).unwrap()["tasks"][0]["gates"]
            );
            match &canonical {
                None => canonical = Some(after),
                Some(bytes) => assert_eq!(
                    String::from_utf8_lossy(&after),
                    String::from_utf8_lossy(bytes),
                    "[{}] writes another state than the canonical shape",
                    shape.name
                ),
            }
        }
    }
}

#[test]
fn init_materializes_every_shape_to_the_same_state() {
    for family in [FULL_SHAPES, LITE_SHAPES] {
        let mut canonical: Option<(Vec<u8>, Vec<u8>)> = None;
        for shape in family {
            let root = tempfile::tempdir().unwrap();
            let Plan { dir, tasks, .. } = plan(root.path(), shape, &SECTION_SHAPES[0]);
            let synthetic_state = state_bytes(&dir);
            std::fs::remove_file(dir.join("state.json")).unwrap();
            std::fs::remove_file(dir.join("manifest.json")).unwrap();
            let run = dwp_in(root.path(), &["init", "PLAN_shape_under_test"]);
            assert_eq!(
                run.code, 0,
                "[{}]\n{}{}",
                shape.name, run.stdout, run.stderr
            );
            let state: serde_json::Value = serde_json::from_slice(&state_bytes(&dir)).unwrap();
            assert_titles_and_locators_kept(shape, &tasks, &state);
            for (task, json) in tasks.iter().zip(state["tasks"].as_array().unwrap()) {
                let status = if task.done { "completed" } else { "pending" };
                assert_eq!(
                    json["status"], status,
                    "[{}] box of task {}",
                    shape.name, task.id
                );
            }
            // The completed tasks take their log's gate record (with no invented exit code).
            let synthetic: serde_json::Value = serde_json::from_slice(&synthetic_state).unwrap();
            for index in 0..2 {
                let gate = &state["tasks"][index]["gates"][0];
                let recorded = &synthetic["tasks"][index]["gates"][0];
                assert_eq!(gate["command"], recorded["command"], "[{}]", shape.name);
                assert_eq!(gate["evidence"], recorded["evidence"], "[{}]", shape.name);
                assert_eq!(
                    gate["exit_code"],
                    serde_json::Value::Null,
                    "[{}]",
                    shape.name
                );
            }
            let written = (
                state_bytes(&dir),
                std::fs::read(dir.join("manifest.json")).unwrap(),
            );
            match &canonical {
                None => canonical = Some(written),
                Some(first) => assert!(
                    written == *first,
                    "[{}] init wrote another state or manifest",
                    shape.name
                ),
            }
        }
    }
}

#[test]
fn the_edit_helper_refuses_an_edit_that_does_not_apply() {
    // The helper used above refuses an edit that would not apply: a shape test never passes
    // vacuously on an unchanged file.
    let root = tempfile::tempdir().unwrap();
    let plan = plan(root.path(), &FULL_SHAPES[0], &SECTION_SHAPES[0]);
    let result =
        std::panic::catch_unwind(|| edit(&plan.dir.join("README.md"), "no such text", "x"));
    assert!(result.is_err());
}
