//! `dwp new PLAN --generation v7` (issue #33, docs/record-plans.md "Writing a record plan"): a
//! v7 record plan's markdown and its contract draft, `contract.draft.json`, with a placeholder
//! wherever only the author can write; nothing stamped or approved. `verify` and `next` name the
//! step that comes next (`dwp init --contract`), which refuses, writing nothing, while a
//! placeholder stands in the draft or the markdown (a stamped contract is never edited, rule
//! 20), and once they are written makes the plan: manifest, contract, approval (rule 19).

use crate::common::{Run, dwp, hint_command, refused, run_printed, writing_nothing};
use serde_json::Value;
use std::path::{Path, PathBuf};

const PLACEHOLDER: &str = "To be written before approval: ";

fn dwp_in(folder: &Path, args: &[&str]) -> Run {
    dwp().in_dir(folder).args(args).run_utf8()
}

/// A new v7 plan `PLAN_docs_site_move` of two tasks in a fresh folder, and the note its
/// approver wrote: (the folder, the plan).
fn new_plan(extra: &[&str]) -> (tempfile::TempDir, PathBuf, Run) {
    let root = tempfile::tempdir().unwrap();
    let args = [
        &[
            "new",
            "PLAN_docs_site_move",
            "--generation",
            "v7",
            "--tasks",
            "List the wiki pages",
            "Convert the guides",
        ][..],
        extra,
    ]
    .concat();
    let run = dwp_in(root.path(), &args);
    std::fs::write(root.path().join("note.md"), "Approved as written.\n").unwrap();
    let plan = root.path().join("PLAN_docs_site_move");
    (root, plan, run)
}

/// The stamp and approval of the draft, by its approver with the note they wrote.
const INIT: [&str; 8] = [
    "init",
    "PLAN_docs_site_move",
    "--contract",
    "PLAN_docs_site_move/contract.draft.json",
    "--by",
    "ann",
    "--note",
    "note.md",
];

/// What the author writes: every placeholder of the draft and the markdown replaced, the
/// checks a python3 script of the repository that passes.
fn write_placeholders(root: &Path, plan: &Path) {
    let draft = plan.join("contract.draft.json");
    let mut contract: Value = serde_json::from_slice(&std::fs::read(&draft).unwrap()).unwrap();
    contract["scope"]["allowed_command_classes"] = serde_json::json!(["python3"]);
    contract["scope"]["allowed_paths"] = serde_json::json!(["docs/"]);
    for task in contract["tasks"].as_array_mut().unwrap() {
        task["touched_surface"] = serde_json::json!(["docs/"]);
        task["gate_intent"][0]["check"] = "python3 check.py".into();
    }
    let written = contract.to_string().replace(PLACEHOLDER, "");
    std::fs::write(&draft, written).unwrap();
    for entry in std::fs::read_dir(plan).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            let text = std::fs::read_to_string(&path).unwrap();
            std::fs::write(&path, text.replace(PLACEHOLDER, "")).unwrap();
        }
    }
    std::fs::write(root.join("check.py"), "print('holds')\n").unwrap();
}

#[test]
fn new_v7_writes_the_markdown_and_a_contract_draft_holding_its_placeholders() {
    let (_root, plan, run) = new_plan(&["--goal", "The docs live in docs/site.", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.payload();
    assert_eq!(report["generation"], "v7");
    assert_eq!(report["tasks"][0]["id"], "T-list-the-wiki-pages");
    assert_eq!(report["tasks"][1]["criterion"], "AC-convert-the-guides");
    let mut names: Vec<String> = std::fs::read_dir(&plan)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "PROGRESS.md",
            "README.md",
            "T-convert-the-guides.md",
            "T-list-the-wiki-pages.md",
            "contract.draft.json"
        ],
        "markdown and a draft: no manifest, no contract, no journal"
    );
    let draft: Value =
        serde_json::from_slice(&std::fs::read(plan.join("contract.draft.json")).unwrap()).unwrap();
    assert_eq!(
        draft["schema"],
        "https://deepworkplan.com/schema/plan-contract/v7.json"
    );
    assert_eq!(draft["plan"], "PLAN_docs_site_move");
    assert_eq!(draft["outcome"]["statement"], "The docs live in docs/site.");
    assert_eq!(
        draft["tasks"][1]["prerequisites"],
        serde_json::json!(["T-list-the-wiki-pages"])
    );
    assert!(draft.get("contract_id").is_none(), "a draft is not stamped");
    let text = draft.to_string();
    assert!(text.contains(PLACEHOLDER), "{text}");
}

// Rule 19: a draft is no plan yet; what verify and next print is the step that makes it one.
#[test]
fn rule_19_verify_and_next_name_the_stamp_and_approval_of_the_draft() {
    let (root, plan, run) = new_plan(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let verify = dwp_in(root.path(), &["verify", "PLAN_docs_site_move", "--json"]);
    assert_eq!(verify.code, 1);
    let codes = crate::common::verify_codes(&verify.json());
    assert_eq!(codes, ["DWP100"], "one finding, the draft's");
    let next = dwp_in(root.path(), &["next", "PLAN_docs_site_move"]);
    assert_eq!(next.code, 1);
    let hint = hint_command(&next);
    assert!(
        hint.starts_with(
            "dwp init PLAN_docs_site_move --contract PLAN_docs_site_move/contract.draft.json"
        ),
        "{hint}"
    );
    // Run as printed (NAME and FILE being the approver's), it refuses while a placeholder stands.
    let printed = hint.replace("NAME", "ann").replace("FILE", "note.md");
    let refusal = writing_nothing(&plan, "an init of a draft with placeholders", || {
        run_printed(&printed, root.path())
    });
    assert_eq!(refusal.code, 1, "{}", refusal.stderr);
    assert!(
        refusal.stderr.contains("still holds a placeholder at $.")
            && refusal
                .stderr
                .contains("(PLAN_docs_site_move/contract.draft.json)"),
        "{}",
        refusal.stderr
    );
    // Once the author wrote them, the same line makes the plan, and it is CONFORMANT.
    write_placeholders(root.path(), &plan);
    let made = run_printed(&printed, root.path());
    assert_eq!(made.code, 0, "{}", made.stderr);
    let verify = dwp_in(root.path(), &["verify", "PLAN_docs_site_move"]);
    assert!(verify.stdout.contains(": CONFORMANT"), "{}", verify.stdout);
    let next = dwp_in(root.path(), &["next", "PLAN_docs_site_move", "--json"]);
    let steps = &next.payload()["ready"][0]["steps"];
    assert_eq!(
        steps[0],
        "dwp update PLAN_docs_site_move --task T-list-the-wiki-pages --status in_progress"
    );
}

// Rule 19, and a hint is a promise: a writer asked to record on a plan holding only its draft
// writes nothing, runs nothing, and names the step that makes the plan, which runs as printed.
#[test]
fn rule_19_a_writer_on_the_draft_refuses_and_names_the_stamp_and_approval() {
    let (root, plan, run) = new_plan(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    const TASK: &str = "T-list-the-wiki-pages";
    let start: &[&str] = &[
        "update",
        "PLAN_docs_site_move",
        "--task",
        TASK,
        "--status",
        "in_progress",
    ];
    let gate: &[&str] = &[
        "run",
        "PLAN_docs_site_move",
        "--task",
        TASK,
        "--criterion",
        "AC-list-the-wiki-pages",
        "--",
        "true",
    ];
    let mut hints = Vec::new();
    for args in [start, gate] {
        let refusal = writing_nothing(&plan, "a writer on a draft", || dwp_in(root.path(), args));
        assert_eq!(refusal.code, 1, "{}", refusal.stderr);
        assert!(
            refusal.stderr.contains("cannot judge"),
            "{}",
            refusal.stderr
        );
        hints.push(hint_command(&refusal));
    }
    for hint in &hints {
        assert!(
            hint.starts_with(
                "dwp init PLAN_docs_site_move --contract PLAN_docs_site_move/contract.draft.json"
            ),
            "{hint}"
        );
    }
    write_placeholders(root.path(), &plan);
    let printed = hints[0].replace("NAME", "ann").replace("FILE", "note.md");
    let made = run_printed(&printed, root.path());
    assert_eq!(made.code, 0, "{}", made.stderr);
    let started = dwp_in(root.path(), start);
    assert_eq!(started.code, 0, "{}", started.stderr);
}

// Rule 20: what is approved is written; a placeholder left in the markdown is refused before
// anything is written, naming its file and line.
#[test]
fn rule_20_init_refuses_markdown_still_holding_a_placeholder() {
    let (root, plan, _) = new_plan(&[]);
    write_placeholders(root.path(), &plan);
    let task = plan.join("T-convert-the-guides.md");
    let text = std::fs::read_to_string(&task).unwrap();
    std::fs::write(&task, format!("{text}\n{PLACEHOLDER}the rollback.\n")).unwrap();
    let run = refused(
        &plan,
        "init",
        1,
        &["T-convert-the-guides.md", "still holds a placeholder"],
        || dwp_in(root.path(), &INIT),
    );
    assert!(run.stderr.contains("hint: write line"), "{}", run.stderr);
}

#[test]
fn a_v5_flag_with_v7_or_another_generation_is_a_usage_error_and_nothing_is_made() {
    for extra in [
        &["--format", "lite"][..],
        &["--agent", "codex"],
        &["--generation", "v6"],
    ] {
        let root = tempfile::tempdir().unwrap();
        let mut args = vec!["new", "PLAN_docs_site_move", "--tasks", "One"];
        if extra[0] != "--generation" {
            args.extend(["--generation", "v7"]);
        }
        args.extend(extra);
        let run = dwp_in(root.path(), &args);
        assert_eq!(run.code, 2, "{extra:?}: {}", run.stderr);
        assert!(
            !root.path().join("PLAN_docs_site_move").exists(),
            "{extra:?} made the plan"
        );
    }
}

#[test]
fn a_title_with_nothing_to_make_an_id_of_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let run = dwp_in(
        root.path(),
        &[
            "new",
            "PLAN_docs_site_move",
            "--generation",
            "v7",
            "--tasks",
            "¿¿",
        ],
    );
    run.assert_refusal("new", 2, &["no letter or digit"]);
    assert!(!root.path().join("PLAN_docs_site_move").exists());
}

// At a repository root a bare name is made under `.dwp/plans/`, where a command given no plan
// finds it, and its hints name it there.
#[test]
fn at_a_repository_root_the_draft_is_made_under_dwp_plans_and_found_there() {
    let repo = tempfile::tempdir().unwrap();
    crate::common::git(repo.path(), &["init", "--quiet"]);
    let made = dwp_in(
        repo.path(),
        &[
            "new",
            "PLAN_docs_site_move",
            "--generation",
            "v7",
            "--tasks",
            "One",
        ],
    );
    assert_eq!(made.code, 0, "{}", made.stderr);
    let home = repo.path().join(".dwp/plans/PLAN_docs_site_move");
    assert!(
        home.join("contract.draft.json").is_file(),
        "{}",
        made.stdout
    );
    let next = dwp_in(repo.path(), &["next"]);
    assert_eq!(next.code, 1);
    assert!(
        hint_command(&next).starts_with(
            "dwp init .dwp/plans/PLAN_docs_site_move --contract .dwp/plans/PLAN_docs_site_move/contract.draft.json"
        ),
        "{}",
        next.stderr
    );
}

// `next` prints a line to run for an open criterion only when its declared check is one argv;
// for one that needs a shell it says what to run instead of nothing, and that line, its check
// filled in, records the evidence.
#[test]
fn next_names_the_run_of_an_open_criterion_whose_check_needs_a_shell() {
    let (root, plan, run) = new_plan(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    write_placeholders(root.path(), &plan);
    let draft = plan.join("contract.draft.json");
    let text = std::fs::read_to_string(&draft).unwrap();
    let shell = text.replace("\"python3 check.py\"", "\"python3 check.py && echo done\"");
    std::fs::write(&draft, shell).unwrap();
    assert_eq!(dwp_in(root.path(), &INIT).code, 0);
    let task = "T-list-the-wiki-pages";
    let start = [
        "update",
        "PLAN_docs_site_move",
        "--task",
        task,
        "--status",
        "in_progress",
    ];
    assert_eq!(dwp_in(root.path(), &start).code, 0);
    let next = dwp_in(root.path(), &["next", "PLAN_docs_site_move"]);
    let said = next
        .stdout
        .lines()
        .find(|l| l.starts_with("criterion AC-list-the-wiki-pages of T-list-the-wiki-pages"))
        .unwrap_or_else(|| panic!("no line for the open criterion:\n{}", next.stdout));
    let line = said.split("run it with ").nth(1).unwrap();
    let printed = line.replace("<its check>", "python3 check.py");
    let ran = run_printed(&printed, root.path());
    assert_eq!(ran.code, 0, "{printed}: {}", ran.stderr);
    let next = dwp_in(root.path(), &["next", "PLAN_docs_site_move"]);
    assert!(
        !next.stdout.contains("criterion AC-list-the-wiki-pages"),
        "{}",
        next.stdout
    );
}
