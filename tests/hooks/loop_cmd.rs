//! `dwp loop` through the real binary: one test per rule of seeds 000, 001 and 004 and of issue
//! #7, named after the rule.
//!
//! Every refusal is checked three ways: exit 1, the one-line message `dwp loop SUB: WHAT (FILE:
//! FIELD)` followed by `  hint: ...`, and the bytes under `.ak-loop/` unchanged (hashed before and
//! after). Changed files come from a real git repository built in the test, or from a list. The
//! clock is fixed and HOME points into the test's own temporary folder.

use crate::common;
use crate::common::{Dwp, NOW, Run, copy_tree, read_json, sha256_hex, snapshot};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;
use tempfile::TempDir;

// ---------------------------------------------------------------------------------------------
// Fixtures and assertions
// ---------------------------------------------------------------------------------------------

/// A worktree in its own temporary folder, with a HOME beside it.
struct Work {
    root: TempDir,
    dir: PathBuf,
}

impl Work {
    fn empty() -> Work {
        let root = tempfile::tempdir().expect("temp dir");
        let dir = root.path().join("worktree");
        fs::create_dir_all(&dir).unwrap();
        fs::create_dir_all(root.path().join("home")).unwrap();
        Work { root, dir }
    }

    /// A copy of `examples/loop-worktree` (without any `.ak-loop/` a local run left there).
    fn example() -> Work {
        let work = Work::empty();
        let source = common::repo_root().join("examples/loop-worktree");
        copy_tree(&source, &work.dir, &[".ak-loop"]);
        work
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.join(relative)
    }

    /// A path of the worktree as dwp prints it, run in the temporary folder: from there.
    fn shown(&self, relative: &str) -> String {
        Path::new("worktree").join(relative).display().to_string()
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }

    /// A file beside the worktree (a config or contract the harness holds).
    fn outside(&self, name: &str, text: &str) -> PathBuf {
        let path = self.root.path().join(name);
        fs::write(&path, text).unwrap();
        path
    }

    /// `dwp` at the test clock in the temporary folder, with HOME beside the worktree and git
    /// reading no system or global configuration.
    fn dwp(&self) -> Dwp {
        let mut command = common::dwp();
        command
            .home(self.root.path().join("home"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .in_dir(self.root.path());
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.dwp().args(args).output()
    }

    /// `loop SUB WORKTREE --config CONFIG EXTRA...`: the arguments every run of `dod` and
    /// `prove` starts with.
    fn loop_args(&self, sub: &str, config: &Path, extra: &[&str]) -> Vec<String> {
        let mut args = vec![
            "loop".to_string(),
            sub.into(),
            self.s(&self.dir),
            "--config".into(),
            self.s(config),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    }

    /// `dwp loop SUB WORKTREE --config CONFIG EXTRA...`.
    fn run_loop(&self, sub: &str, config: &Path, extra: &[&str]) -> Output {
        self.dwp().args(self.loop_args(sub, config, extra)).output()
    }

    fn s(&self, path: &Path) -> String {
        path.display().to_string()
    }

    /// Every file under `.ak-loop/` with its bytes.
    fn loop_hashes(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        snapshot(&self.path(".ak-loop"))
    }

    fn json(&self, relative: &str) -> Value {
        read_json(&self.path(relative))
    }

    fn git(&self, args: &[&str]) {
        common::git(&self.dir, args);
    }

    /// Every change staged and committed as `message`.
    fn commit_all(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }

    /// A git repository on `main` whose first commit, `base`, holds `files` (path, text).
    fn repository_with(&self, files: &[(&str, &str)]) {
        self.git(&["init", "-q", "-b", "main"]);
        for (path, text) in files {
            self.write(path, text);
        }
        self.commit_all("base");
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The payload of the one `--json` document on stdout (the document held to its schema).
fn json_out(output: &Output) -> Value {
    common::payload(&document_out(output)).clone()
}

/// The one `--json` document on stdout, held to `dwp schema output`.
fn document_out(output: &Output) -> Value {
    common::document(&stdout(output))
}

/// Exit 1 and exactly `dwp loop SUB: ... (PLACE)` + `  hint: ...` on stderr, with every needle.
fn assert_refused(output: &Output, sub: &str, needles: &[&str]) {
    let run = Run::lossy(output);
    run.assert_refusal(&format!("loop {sub}"), 1, needles);
    run.assert_hinted();
    assert_eq!(
        run.stderr.lines().count(),
        2,
        "one error line and one hint: {}",
        run.stderr
    );
}

const COMMAND_CONFIG: &str = "dod:\n  items:\n    - {id: tests, description: The tests pass, kind: command, command: [cargo, test]}\n    - {id: lint, description: Lint is clean, kind: command, command: [cargo, clippy]}\n";

/// A frozen contract of two outcomes beside the worktree.
fn frozen_contract(work: &Work) -> PathBuf {
    let path = work.outside(
        "contract.json",
        r#"{"outcomes": [
            {"id": "o1", "description": "Report totals are right"},
            {"id": "o2", "description": "Export keeps the order"}]}"#,
    );
    let out = work.run(&["loop", "freeze", &work.s(&path)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    path
}

fn proof(id: &str, status: &str, evidence: &str) -> Value {
    json!({"id": id, "status": status, "evidence": evidence})
}

fn dod_json(
    work: &Work,
    config: &Path,
    contract: Option<&Path>,
    extra: &[&str],
) -> (Output, Value) {
    let contract = contract.map(|path| work.s(path));
    let mut flags: Vec<&str> = contract
        .iter()
        .flat_map(|path| ["--contract", path.as_str()])
        .collect();
    flags.extend(extra);
    let output = work
        .dwp()
        .arg("--json")
        .args(work.loop_args("dod", config, &flags))
        .output();
    let document = json_out(&output);
    (output, document)
}

fn item<'a>(document: &'a Value, id: &str) -> &'a Value {
    document["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == id)
        .unwrap_or_else(|| panic!("no item {id} in {document:#}"))
}

// ---------------------------------------------------------------------------------------------
// dwp loop artifacts (seed 000)
// ---------------------------------------------------------------------------------------------

#[test]
fn artifacts_a_missing_required_file_is_named_by_its_path() {
    let work = Work::empty();
    let out = work.run(&["loop", "artifacts", &work.s(&work.dir)]);
    assert_eq!(out.status.code(), Some(1));
    let expected = format!(
        "missing  {}: required, write it",
        work.shown(".ak-loop/verify.json")
    );
    assert!(stdout(&out).contains(&expected), "{}", stdout(&out));
    assert!(
        stdout(&out).starts_with("artifacts: missing"),
        "{}",
        stdout(&out)
    );

    let out = work.run(&["--json", "loop", "artifacts", &work.s(&work.dir)]);
    assert_eq!(document_out(&out)["command"], "loop artifacts");
    let document = json_out(&out);
    assert_eq!(document["verdict"], "missing");
    assert_eq!(
        document["artifacts"][1]["path"],
        work.shown(".ak-loop/verify.json")
    );
    assert_eq!(document["artifacts"][1]["status"], "missing");
    // dod.json is not required by default: absent, not missing.
    assert_eq!(document["artifacts"][2]["status"], "absent");
}

#[test]
fn artifacts_present_but_invalid_is_worse_than_absent_with_json_paths() {
    let work = Work::empty();
    // verify.json missing AND dod.json invalid: the verdict is invalid, not missing.
    work.write(
        ".ak-loop/dod.json",
        r#"{"project": [{"id": "tests", "status": "ok", "evidence": "fine"}]}"#,
    );
    let out = work.run(&[
        "loop",
        "artifacts",
        &work.s(&work.dir),
        "--require",
        "verify,dod",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.starts_with("artifacts: invalid"), "{text}");
    assert!(
        text.contains("present but does not match the schema (worse than absent)"),
        "{text}"
    );
    assert!(text.contains("$.project[0].status"), "{text}");

    let document = json_out(&work.run(&[
        "--json",
        "loop",
        "artifacts",
        &work.s(&work.dir),
        "--require",
        "verify,dod",
    ]));
    assert_eq!(document["verdict"], "invalid");
    assert_eq!(
        document["artifacts"][2]["mismatches"][0]["path"],
        "$.project[0].status"
    );
}

#[test]
fn artifacts_malformed_json_is_invalid_not_missing() {
    let work = Work::empty();
    work.write(".ak-loop/verify.json", "{\"ranAt\": ");
    let document = json_out(&work.run(&["--json", "loop", "artifacts", &work.s(&work.dir)]));
    assert_eq!(document["verdict"], "invalid");
    assert_eq!(document["artifacts"][1]["status"], "invalid");
}

#[test]
fn artifacts_no_worktree_is_skipped_exit_0_and_says_so() {
    let work = Work::empty();
    let out = work.run(&["loop", "artifacts", "--no-worktree"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out)
            .contains("skipped — no worktree (--no-worktree): the artifact gate is left out"),
        "{}",
        stdout(&out)
    );
    let out = work.run(&["--json", "loop", "artifacts", "--no-worktree"]);
    assert_eq!(document_out(&out)["ok"], true);
    let document = json_out(&out);
    assert_eq!(document["verdict"], "skipped");
    assert!(
        document["note"]
            .as_str()
            .unwrap()
            .contains("nothing was checked")
    );
}

#[test]
fn artifacts_plan_md_is_required_only_when_a_plan_was_approved() {
    let work = Work::empty();
    work.write(".ak-loop/verify.json", r#"{"ranAt": "2026-06-09T16:00:00Z", "command": "make test", "exitCode": 0, "outcomes": []}"#);
    let out = work.run(&["loop", "artifacts", &work.s(&work.dir)]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let out = work.run(&["loop", "artifacts", &work.s(&work.dir), "--plan-approved"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains(&format!("missing  {}", work.shown(".ak-loop/plan.md"))),
        "{}",
        stdout(&out)
    );
    work.write(".ak-loop/plan.md", "# Plan\n\nFollowed as approved.\n");
    let out = work.run(&["loop", "artifacts", &work.s(&work.dir), "--plan-approved"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

// ---------------------------------------------------------------------------------------------
// dwp loop dod (seeds 001, 004)
// ---------------------------------------------------------------------------------------------

#[test]
fn dod_missing_and_failed_are_never_conflated_prove_it_versus_fix_it() {
    let work = Work::empty();
    let config = work.outside("loop.config.yaml", COMMAND_CONFIG);
    work.write(
        ".ak-loop/dod.json",
        &json!({"project": [proof("lint", "failed", "3 warnings")]}).to_string(),
    );
    let (out, document) = dod_json(&work, &config, None, &[]);
    assert_eq!(out.status.code(), Some(1));
    let tests = item(&document, "tests");
    assert_eq!(tests["verdict"], "missing");
    assert_eq!(tests["instruction"], "prove it");
    let lint = item(&document, "lint");
    assert_eq!(lint["verdict"], "failed");
    assert_eq!(lint["instruction"], "fix it");
    assert_eq!(lint["evidence"], "3 warnings");
    assert_eq!(
        document["summary"],
        json!({"total": 2, "proven": 0, "missing": 1, "failed": 1})
    );

    let human = work.run_loop("dod", &config, &[]);
    let text = stdout(&human);
    assert!(
        text.contains("prove it: no proof in .ak-loop/dod.json"),
        "{text}"
    );
    assert!(
        text.contains("fix it: 3 warnings [dod.json, written by the worker]"),
        "{text}"
    );
}

#[test]
fn dod_verify_json_evidence_counts_when_dod_json_is_silent() {
    let work = Work::empty();
    let config = work.outside("loop.config.yaml", "dod: {}\n");
    let contract = frozen_contract(&work);
    work.write(
        ".ak-loop/dod.json",
        &json!({"outcomes": [proof("o2", "passed", "order kept: 12 passed")]}).to_string(),
    );
    work.write(
        ".ak-loop/verify.json",
        &json!({"ranAt": "2026-06-09T16:00:00Z", "command": "pnpm test", "exitCode": 0,
                "outcomes": [proof("o1", "passed", "42 passed | 0 failed")]})
        .to_string(),
    );
    let (out, document) = dod_json(&work, &config, Some(&contract), &[]);
    assert_eq!(out.status.code(), Some(0), "{document:#}");
    assert_eq!(item(&document, "o1")["verdict"], "proven");
    assert_eq!(
        item(&document, "o1")["source"],
        ".ak-loop/verify.json, written by the worker".replace(".ak-loop/", "")
    );
    assert_eq!(
        item(&document, "o2")["source"],
        "dod.json, written by the worker"
    );
}

#[test]
fn dod_json_wins_where_both_files_speak() {
    let work = Work::empty();
    let config = work.outside("loop.config.yaml", "dod: {}\n");
    let contract = frozen_contract(&work);
    work.write(
        ".ak-loop/dod.json",
        &json!({"outcomes": [proof("o1", "failed", "totals off by one"), proof("o2", "passed", "order kept")]}).to_string(),
    );
    work.write(
        ".ak-loop/verify.json",
        &json!({"ranAt": "2026-06-09T16:00:00Z", "command": "pnpm test", "exitCode": 1,
                "outcomes": [proof("o1", "passed", "42 passed"), proof("o2", "failed", "1 failed")]})
        .to_string(),
    );
    let (out, document) = dod_json(&work, &config, Some(&contract), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(item(&document, "o1")["verdict"], "failed");
    assert_eq!(item(&document, "o1")["evidence"], "totals off by one");
    assert_eq!(item(&document, "o2")["verdict"], "proven");
    assert_eq!(item(&document, "o2")["evidence"], "order kept");
}

#[test]
fn dod_exits_0_only_when_every_item_of_both_lists_is_proven() {
    let work = Work::empty();
    let config = work.outside("loop.config.yaml", COMMAND_CONFIG);
    let contract = frozen_contract(&work);
    let all = json!({"project": [proof("tests", "passed", "12 passed"), proof("lint", "passed", "clean")],
                     "outcomes": [proof("o1", "passed", "ok"), proof("o2", "passed", "ok")]});
    work.write(".ak-loop/dod.json", &all.to_string());
    let (out, document) = dod_json(&work, &config, Some(&contract), &[]);
    assert_eq!(out.status.code(), Some(0), "{document:#}");
    assert_eq!(document["verdict"], "done");
    // The issue's list alone holds the merge back.
    let mut one_short = all.clone();
    one_short["outcomes"].as_array_mut().unwrap().pop();
    work.write(".ak-loop/dod.json", &one_short.to_string());
    let (out, document) = dod_json(&work, &config, Some(&contract), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(item(&document, "o2")["verdict"], "missing");
}

#[test]
fn dod_a_project_with_no_dod_items_still_gets_the_issues_list_enforced() {
    let work = Work::empty();
    let config = work.outside(
        "loop.config.yaml",
        "delivery:\n  merge:\n    requireHumanApproval: true\n",
    );
    let contract = frozen_contract(&work);
    let (out, document) = dod_json(&work, &config, Some(&contract), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(document["summary"]["missing"], 2);
}

#[test]
fn dod_a_proof_of_another_command_than_the_items_is_missing_not_proven() {
    let work = Work::empty();
    let config = work.outside("loop.config.yaml", COMMAND_CONFIG);
    let mut stale = proof("tests", "passed", "3 passed");
    stale["command"] = json!(["cargo", "test", "--lib"]);
    work.write(
        ".ak-loop/dod.json",
        &json!({"project": [stale]}).to_string(),
    );
    let (_, document) = dod_json(&work, &config, None, &[]);
    let tests = item(&document, "tests");
    assert_eq!(tests["verdict"], "missing");
    assert!(
        tests["evidence"]
            .as_str()
            .unwrap()
            .contains("the proof ran `cargo test --lib`, the item runs `cargo test`"),
        "{tests}"
    );
}

#[test]
fn dod_no_manual_kind_is_a_configuration_error_naming_the_item() {
    let work = Work::empty();
    let config = work.outside(
        "loop.config.yaml",
        "dod:\n  items:\n    - {id: tests, description: t, kind: command, command: ['true']}\n    - {id: eyeball, description: Someone looked at it, kind: manual}\n",
    );
    let out = work.run_loop("dod", &config, &[]);
    assert_refused(
        &out,
        "dod",
        &[
            "item `eyeball` has kind `manual`",
            "loop.config.yaml: $.dod.items[1].kind",
            "there is no manual kind",
        ],
    );
}

#[test]
fn dod_a_frozen_contract_edited_after_dispatch_is_refused() {
    let work = Work::empty();
    let config = work.outside("loop.config.yaml", "dod: {}\n");
    let contract = frozen_contract(&work);
    // Reformatting and reordering keys keeps the stamp: the hash is over canonical JSON.
    let mut document: Value = serde_json::from_slice(&fs::read(&contract).unwrap()).unwrap();
    let reordered = json!({"digest": document["digest"], "outcomes": [
        {"description": "Report totals are right", "id": "o1"},
        {"description": "Export keeps the order", "id": "o2"}]});
    fs::write(&contract, reordered.to_string()).unwrap();
    let (out, _) = dod_json(&work, &config, Some(&contract), &[]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "judged (items missing), not refused: {}",
        stderr(&out)
    );
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    // Moving the bar is refused.
    document["outcomes"][0]["description"] = json!("Report totals are roughly right");
    fs::write(&contract, document.to_string()).unwrap();
    let out = work.run_loop("dod", &config, &["--contract", &work.s(&contract)]);
    assert_refused(
        &out,
        "dod",
        &[
            "the contract changed after dispatch",
            "contract.json: $.outcomes",
        ],
    );
    // And freezing it again does not launder the edit.
    let out = work.run(&["loop", "freeze", &work.s(&contract)]);
    assert_refused(&out, "freeze", &["the contract changed after dispatch"]);
}

#[test]
fn dod_an_unfrozen_contract_is_refused() {
    let work = Work::empty();
    let config = work.outside("loop.config.yaml", "dod: {}\n");
    let contract = work.outside(
        "contract.json",
        r#"{"outcomes": [{"id": "o1", "description": "x"}]}"#,
    );
    let out = work.run_loop("dod", &config, &["--contract", &work.s(&contract)]);
    assert_refused(
        &out,
        "dod",
        &[
            "the contract is not frozen",
            "contract.json: $.digest",
            "dwp loop freeze",
        ],
    );
}

#[test]
fn dod_an_invalid_proof_file_is_refused_as_worse_than_absent() {
    let work = Work::empty();
    let config = work.outside("loop.config.yaml", COMMAND_CONFIG);
    work.write(
        ".ak-loop/dod.json",
        r#"{"project": [{"id": "tests", "status": "passed"}]}"#,
    );
    let out = work.run_loop("dod", &config, &[]);
    assert_refused(
        &out,
        "dod",
        &[
            "present but does not match the schema, which is worse than absent",
            "dod.json: $.project[0]",
        ],
    );
}

const CHANGE_CONFIG: &str = "dod:\n  items:\n    - {id: docs, description: The docs are updated, kind: file-changed, glob: 'docs/**'}\n    - {id: changelog, description: The changelog is updated, kind: file-changed, glob: CHANGELOG.md}\n    - {id: no-todo, description: No TODO in changed sources, kind: pattern-absent, pattern: 'TODO|FIXME', paths: ['src/**']}\n";

#[test]
fn dod_file_changed_and_pattern_absent_are_decided_from_a_real_git_repository() {
    let work = Work::empty();
    let config = work.outside("loop.config.yaml", CHANGE_CONFIG);
    work.repository_with(&[
        ("src/lib.rs", "pub fn a() {}\n"),
        ("notes.txt", "TODO outside src is not scanned\n"),
    ]);
    work.git(&["checkout", "-q", "-b", "feature"]);
    work.write("docs/guide.md", "# Guide\n");
    work.write("src/lib.rs", "pub fn a() {}\n\n// TODO: b\npub fn b() {}\n");
    work.write("notes.txt", "TODO still outside src\n");
    work.commit_all("feature");

    let (out, document) = dod_json(&work, &config, None, &["--changed-from", "main"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(item(&document, "docs")["verdict"], "proven");
    assert_eq!(
        item(&document, "docs")["evidence"],
        "`docs/guide.md` changed"
    );
    assert_eq!(item(&document, "changelog")["verdict"], "failed");
    assert_eq!(item(&document, "no-todo")["verdict"], "failed");
    assert_eq!(
        item(&document, "no-todo")["evidence"],
        "`src/lib.rs` line 3 matches `TODO|FIXME`"
    );
    assert_eq!(document["changed"]["count"], 3);

    work.write("src/lib.rs", "pub fn a() {}\npub fn b() {}\n");
    work.write("CHANGELOG.md", "- b\n");
    work.commit_all("fix");
    let (out, document) = dod_json(&work, &config, None, &["--changed-from", "main"]);
    assert_eq!(out.status.code(), Some(0), "{document:#}");
    assert_eq!(
        item(&document, "no-todo")["evidence"],
        "`TODO|FIXME` absent from 1 changed file"
    );
}

#[test]
fn dod_changed_from_measures_from_the_merge_base_not_from_a_moved_base() {
    let work = Work::empty();
    let config = work.outside("loop.config.yaml", CHANGE_CONFIG);
    work.repository_with(&[("src/lib.rs", "base\n")]);
    work.git(&["checkout", "-q", "-b", "feature"]);
    work.write("CHANGELOG.md", "- x\n");
    work.commit_all("feature");
    // main moves on after the branch: its docs change is not the pull request's.
    work.git(&["checkout", "-q", "main"]);
    work.write("docs/main-only.md", "x\n");
    work.commit_all("main moves");
    work.git(&["checkout", "-q", "feature"]);
    let (_, document) = dod_json(&work, &config, None, &["--changed-from", "main"]);
    assert_eq!(item(&document, "docs")["verdict"], "failed", "{document:#}");
    assert_eq!(item(&document, "changelog")["verdict"], "proven");
}

#[test]
fn dod_changed_files_from_a_list_and_without_one_the_items_are_missing() {
    let work = Work::empty();
    let config = work.outside("loop.config.yaml", CHANGE_CONFIG);
    work.write("src/a.rs", "fn a() {} // FIXME\n");
    let list = work.outside("changed.txt", "docs/guide.md\n./src/a.rs\nCHANGELOG.md\n");
    let (_, document) = dod_json(&work, &config, None, &["--changed-files", &work.s(&list)]);
    assert_eq!(item(&document, "docs")["verdict"], "proven");
    // A listed file that is not on disk (deleted) contains nothing.
    assert_eq!(item(&document, "changelog")["verdict"], "proven");
    assert_eq!(item(&document, "no-todo")["verdict"], "failed");
    assert_eq!(item(&document, "no-todo")["instruction"], "fix it");

    let (out, document) = dod_json(&work, &config, None, &[]);
    assert_eq!(out.status.code(), Some(1));
    for id in ["docs", "changelog", "no-todo"] {
        assert_eq!(item(&document, id)["verdict"], "missing", "{id}");
        assert!(
            item(&document, id)["evidence"]
                .as_str()
                .unwrap()
                .contains("--changed-from REV or --changed-files FILE")
        );
    }
}

#[test]
fn dod_a_changed_path_escaping_the_worktree_is_refused() {
    let work = Work::empty();
    let config = work.outside("loop.config.yaml", CHANGE_CONFIG);
    let list = work.outside("changed.txt", "docs/a.md\n../secrets/key.rs\n");
    let out = work.run_loop("dod", &config, &["--changed-files", &work.s(&list)]);
    assert_refused(
        &out,
        "dod",
        &[
            "`../secrets/key.rs` escapes the worktree",
            "changed.txt: line 2",
        ],
    );
    // A symlink inside the worktree that leads out is not followed either.
    let secret = work.outside("secret.rs", "TODO\n");
    fs::create_dir_all(work.path("src")).unwrap();
    std::os::unix::fs::symlink(&secret, work.path("src/link.rs")).unwrap();
    let list = work.outside("changed2.txt", "src/link.rs\n");
    let out = work.run_loop("dod", &config, &["--changed-files", &work.s(&list)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("outside the worktree"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn dod_changed_from_an_unknown_revision_is_refused() {
    let work = Work::empty();
    let config = work.outside("loop.config.yaml", CHANGE_CONFIG);
    work.repository_with(&[("a", "a\n")]);
    let out = work.run_loop("dod", &config, &["--changed-from", "no-such-branch"]);
    assert_refused(
        &out,
        "dod",
        &["`no-such-branch` is not a commit", "--changed-from"],
    );
}

// ---------------------------------------------------------------------------------------------
// Bad input: refused naming file and field, nothing written
// ---------------------------------------------------------------------------------------------

fn anchor_bomb() -> String {
    let mut yaml = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for n in 1..9u8 {
        let (prev, name) = ((b'a' + n - 1) as char, (b'a' + n) as char);
        yaml.push_str(&format!("{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
    }
    yaml.push_str("dod: {items: []}\n");
    yaml
}

#[test]
fn bad_configuration_is_refused_naming_file_and_field_and_nothing_is_written() {
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        ("anchor bomb", anchor_bomb(), vec!["loop.config.yaml: $", "not YAML dwp accepts"]),
        ("duplicate keys", "dod:\n  items: []\n  items: []\n".into(), vec!["loop.config.yaml: $", "duplicate"]),
        ("unknown field", "dod:\n  items:\n    - {id: t, description: t, kind: command, command: ['true'], retries: 3}\n".into(), vec!["$.dod.items[0]", "retries"]),
        ("wrong type", "dod:\n  items:\n    - {id: t, description: t, kind: command, command: 'cargo test'}\n".into(), vec!["$.dod.items[0].command", "not of type"]),
        ("glob", "dod:\n  items:\n    - {id: g, description: g, kind: file-changed, glob: 'src/{a,b'}\n".into(), vec!["$.dod.items[0].glob", "the glob does not compile"]),
        ("regex", "dod:\n  items:\n    - {id: r, description: r, kind: pattern-absent, pattern: '(TODO'}\n".into(), vec!["$.dod.items[0].pattern", "the regex does not compile"]),
        ("escaping path", "dod:\n  items:\n    - {id: r, description: r, kind: pattern-absent, pattern: x, paths: ['/etc/**']}\n".into(), vec!["$.dod.items[0].paths[0]", "escapes the worktree"]),
        ("kind field missing", "dod:\n  items:\n    - {id: t, description: t, kind: file-changed}\n".into(), vec!["$.dod.items[0]", "glob"]),
        ("unsafe id", "dod:\n  items:\n    - {id: ../x, description: t, kind: command, command: ['true']}\n".into(), vec!["$.dod.items[0].id"]),
    ];
    for (case, yaml, needles) in cases {
        let work = Work::example();
        let config = work.write("loop.config.yaml", &yaml);
        work.write(".ak-loop/dod.json", r#"{"project": []}"#);
        let before = work.loop_hashes();
        let out = work.run_loop("prove", &config, &[]);
        assert_refused(&out, "prove", &needles);
        assert_eq!(work.loop_hashes(), before, "{case}: nothing written");
        let out = work.run_loop("dod", &config, &[]);
        assert_refused(&out, "dod", &needles);
    }
}

#[test]
fn bad_contract_json_is_refused_naming_file_and_field_and_nothing_is_written() {
    let cases = [
        ("malformed", "{\"outcomes\": [", "contract.json: $"),
        (
            "duplicate key",
            r#"{"outcomes": [{"id": "o1", "id": "o2", "description": "x"}]}"#,
            "duplicate",
        ),
        (
            "unknown field",
            r#"{"outcomes": [{"id": "o1", "description": "x", "weight": 2}]}"#,
            "$.outcomes[0]",
        ),
        (
            "wrong type",
            r#"{"outcomes": [{"id": "o1", "description": "x", "check": "make test"}]}"#,
            "$.outcomes[0].check",
        ),
        (
            "escaping id",
            r#"{"outcomes": [{"id": "../../x", "description": "x"}]}"#,
            "$.outcomes[0].id",
        ),
    ];
    for (case, text, needle) in cases {
        let work = Work::example();
        let contract = work.outside("contract.json", text);
        let before = fs::read(&contract).unwrap();
        let out = work.run(&["loop", "freeze", &work.s(&contract)]);
        assert_eq!(out.status.code(), Some(1), "{case}");
        let err = stderr(&out);
        assert!(
            err.starts_with("dwp loop freeze: ") && err.contains(needle),
            "{case}: {err}"
        );
        assert_eq!(
            fs::read(&contract).unwrap(),
            before,
            "{case}: the contract is untouched"
        );
        let out = work.run_loop(
            "prove",
            &work.path("loop.config.yaml"),
            &["--contract", &work.s(&contract)],
        );
        assert_eq!(out.status.code(), Some(1), "{case}");
        assert!(work.loop_hashes().is_empty(), "{case}: prove wrote nothing");
    }
}

// ---------------------------------------------------------------------------------------------
// dwp loop prove (the worker's side) and the sample worktree
// ---------------------------------------------------------------------------------------------

/// `dwp loop SUB` on the example worktree with its own config and contract, then `extra`.
fn run_example(work: &Work, sub: &str, extra: &[&str]) -> Output {
    let contract = work.s(&work.path("contract.json"));
    let mut flags = vec!["--contract", &contract];
    flags.extend(extra);
    work.run_loop(sub, &work.path("loop.config.yaml"), &flags)
}

fn prove_example(work: &Work, extra: &[&str]) -> Output {
    run_example(work, "prove", extra)
}

fn dod_example(work: &Work, format: &str) -> Output {
    let changed = work.s(&work.path("changed.txt"));
    run_example(
        work,
        "dod",
        &["--changed-files", &changed, "--format", format],
    )
}

#[test]
fn prove_then_dod_on_the_example_worktree_is_all_proven() {
    let work = Work::example();
    let out = prove_example(&work, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stdout(&out).starts_with("proved 4 items: 4 passed, 0 failed"),
        "{}",
        stdout(&out)
    );
    let out = dod_example(&work, "markdown");
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    insta::assert_snapshot!("dod_markdown_all_proven", stdout(&out));
    // Stable across runs: proving again and judging again gives the same table.
    prove_example(&work, &[]);
    assert_eq!(stdout(&dod_example(&work, "markdown")), stdout(&out));
    let artifacts = work.run(&[
        "loop",
        "artifacts",
        &work.s(&work.dir),
        "--require",
        "verify,dod",
    ]);
    assert_eq!(artifacts.status.code(), Some(0), "{}", stdout(&artifacts));
}

#[test]
fn prove_breaking_one_command_fails_it_and_proves_the_rest() {
    let work = Work::example();
    work.write("src/greeting.txt", "goodbye\n");
    let out = prove_example(&work, &[]);
    assert_eq!(out.status.code(), Some(1), "a red proof is a finding");
    assert!(
        stdout(&out).contains("3 passed, 1 failed"),
        "{}",
        stdout(&out)
    );
    let out = dod_example(&work, "json");
    assert_eq!(out.status.code(), Some(1));
    let document = json_out(&out);
    for row in document["items"].as_array().unwrap() {
        let expected = if row["id"] == "greeting" {
            "failed"
        } else {
            "proven"
        };
        assert_eq!(row["verdict"], expected, "{row}");
    }
    assert!(
        item(&document, "greeting")["evidence"]
            .as_str()
            .unwrap()
            .starts_with("exit 1"),
        "{document:#}"
    );
    insta::assert_snapshot!(
        "dod_markdown_one_failed",
        stdout(&dod_example(&work, "markdown"))
    );
}

#[test]
fn prove_marks_what_dwp_observed_and_saves_the_full_output() {
    let work = Work::example();
    prove_example(&work, &[]);
    let dod = work.json(".ak-loop/dod.json");
    let greeting = &dod["project"][1];
    assert_eq!(greeting["id"], "greeting");
    assert_eq!(greeting["observedBy"], "dwp");
    assert_eq!(
        greeting["command"],
        json!(["grep", "-n", "hello, loop", "src/greeting.txt"])
    );
    assert_eq!(greeting["exitCode"], 0);
    assert_eq!(greeting["at"], NOW);
    assert_eq!(greeting["log"], ".ak-loop/logs/project-greeting.log");
    assert_eq!(
        greeting["evidence"],
        "exit 0: 1:hello, loop (output: .ak-loop/logs/project-greeting.log)"
    );
    assert_eq!(
        fs::read_to_string(work.path(".ak-loop/logs/project-greeting.log")).unwrap(),
        "1:hello, loop\n"
    );
    let verify = work.json(".ak-loop/verify.json");
    assert_eq!(verify["ranAt"], NOW);
    assert_eq!(verify["exitCode"], 0);
    assert_eq!(verify["outcomes"].as_array().unwrap().len(), 2);
    assert_eq!(verify["outcomes"][0]["observedBy"], "dwp");

    // A hand-written proof reads differently from an observed one.
    let mut hand = dod.clone();
    hand["project"][0] = proof("readme", "passed", "I checked, it is there");
    fs::write(work.path(".ak-loop/dod.json"), hand.to_string()).unwrap();
    let document = json_out(&dod_example(&work, "json"));
    assert_eq!(
        item(&document, "readme")["source"],
        "dod.json, written by the worker"
    );
    assert_eq!(
        item(&document, "greeting")["source"],
        "dod.json, observed by dwp"
    );
}

#[test]
fn prove_item_reproves_one_and_keeps_the_other_proofs() {
    let work = Work::example();
    prove_example(&work, &[]);
    work.write("src/greeting.txt", "goodbye\n");
    let out = prove_example(&work, &["--item", "greeting"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).starts_with("proved 1 items: 0 passed, 1 failed"),
        "{}",
        stdout(&out)
    );
    let dod = work.json(".ak-loop/dod.json");
    assert_eq!(dod["project"][0]["status"], "passed", "readme kept");
    assert_eq!(dod["project"][1]["status"], "failed");
    assert_eq!(dod["outcomes"].as_array().unwrap().len(), 2);
    let out = prove_example(&work, &["--item", "docs-updated"]);
    assert_refused(
        &out,
        "prove",
        &["item `docs-updated` is a file-changed item, not a command"],
    );
    let out = prove_example(&work, &["--item", "nope"]);
    assert_refused(
        &out,
        "prove",
        &["no command item or contract check has id `nope`"],
    );
}

#[test]
fn prove_a_command_past_its_timeout_is_failed() {
    let work = Work::empty();
    let config = work.outside("loop.config.yaml", "dod:\n  items:\n    - {id: slow, description: s, kind: command, command: [sleep, '30']}\n    - {id: absent, description: a, kind: command, command: [dwp-no-such-program]}\n");
    let started = std::time::Instant::now();
    let out = work.run_loop("prove", &config, &["--timeout", "0.5"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(1));
    let dod = work.json(".ak-loop/dod.json");
    assert_eq!(dod["project"][0]["status"], "failed");
    assert!(
        dod["project"][0]["evidence"]
            .as_str()
            .unwrap()
            .starts_with("timed out after 0.5s"),
        "{dod:#}"
    );
    assert!(dod["project"][0].get("exitCode").is_none());
    assert_eq!(dod["project"][1]["status"], "failed");
    assert!(
        dod["project"][1]["evidence"]
            .as_str()
            .unwrap()
            .starts_with("could not start `dwp-no-such-program`"),
        "{dod:#}"
    );
}

/// A command that exits 0 but ran no test proves nothing: the proof is failed, as `dwp run`
/// records and `dwp verify` judges the same output (DWP063), so `loop dod` and the plan agree.
#[test]
fn prove_a_command_that_ran_no_test_is_failed_as_the_plan_judges_it() {
    let work = Work::empty();
    let config = work.outside(
        "loop.config.yaml",
        "dod:\n  items:\n    - {id: none, description: n, kind: command, command: [sh, -c, 'echo running 0 tests; echo \"test result: ok. 0 passed; 0 failed; 0 ignored\"']}\n    - {id: some, description: s, kind: command, command: [sh, -c, 'echo 3 passed, 0 failed']}\n",
    );
    let out = work.run_loop("prove", &config, &[]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let dod = work.json(".ak-loop/dod.json");
    assert_eq!(dod["project"][0]["status"], "failed", "{dod:#}");
    assert_eq!(dod["project"][0]["exitCode"], 0);
    let evidence = dod["project"][0]["evidence"].as_str().unwrap();
    assert!(
        evidence.starts_with("exit 0 but no test ran: "),
        "{evidence}"
    );
    assert!(dwp::rules::evidence::zero_selection(evidence).is_some());
    assert_eq!(dod["project"][1]["status"], "passed", "{dod:#}");
}

#[test]
fn prove_refuses_to_overwrite_an_invalid_proof_file() {
    let work = Work::example();
    work.write(
        ".ak-loop/verify.json",
        r#"{"ranAt": "now", "command": "x", "exitCode": 0, "outcomes": []}"#,
    );
    let before = work.loop_hashes();
    let out = prove_example(&work, &[]);
    assert_refused(
        &out,
        "prove",
        &[
            "present but does not match the schema",
            "verify.json: $.ranAt",
        ],
    );
    assert_eq!(work.loop_hashes(), before);
}

#[test]
fn freeze_stamps_the_digest_once_and_is_idempotent() {
    let work = Work::empty();
    let contract = work.outside(
        "contract.json",
        r#"{"outcomes": [{"id": "o1", "description": "x", "check": ["true"]}]}"#,
    );
    let first = json_out(&work.run(&["--json", "loop", "freeze", &work.s(&contract)]));
    assert_eq!(first["changed"], true);
    let digest = first["digest"].as_str().unwrap().to_owned();
    // sha256 over the canonical JSON of the outcomes (keys sorted, no whitespace).
    let canonical = br#"[{"check":["true"],"description":"x","id":"o1"}]"#;
    assert_eq!(digest, sha256_hex(canonical));
    let bytes = fs::read(&contract).unwrap();
    let again = json_out(&work.run(&["--json", "loop", "freeze", &work.s(&contract)]));
    assert_eq!(again["changed"], false);
    assert_eq!(again["digest"], digest.as_str());
    assert_eq!(fs::read(&contract).unwrap(), bytes);
}

// ---------------------------------------------------------------------------------------------
// dwp update --gates-from: one evidence trail for the loop and the plan
// ---------------------------------------------------------------------------------------------

/// A plan of three tasks, the first completed, beside the worktree: its path.
fn gates_plan(work: &Work) -> String {
    let plan = dwp::synth::SynthPlan::new("PLAN_loop_gates", 3)
        .completed(1)
        .write(work.root.path())
        .unwrap();
    work.s(&plan)
}

/// `dwp update PLAN --task 2 --status STATUS --gates-from VERIFY`.
fn update_task_2_from(work: &Work, plan: &str, status: &str, verify: &str) -> Output {
    work.run(&[
        "update",
        plan,
        "--task",
        "2",
        "--status",
        status,
        "--gates-from",
        verify,
    ])
}

/// A plan of three tasks one step from publication (task 3 in progress), beside the
/// worktree: its path.
fn publishable_gates_plan(work: &Work) -> String {
    let plan = dwp::synth::SynthPlan::new("PLAN_loop_observed", 3)
        .ready_to_publish()
        .write(work.root.path())
        .unwrap();
    work.s(&plan)
}

/// `dwp --json update PLAN --task 3 --status STATUS --gates-from VERIFY`.
fn update_task_3_from(work: &Work, plan: &str, status: &str, verify: &str) -> Output {
    work.run(&[
        "--json",
        "update",
        plan,
        "--task",
        "3",
        "--status",
        status,
        "--gates-from",
        verify,
    ])
}

/// The issue's rule: `update --gates-from` (loop proofs) and `dwp run` produce the same
/// observed-gate shape, which verify holds against the log copied into the plan.
#[test]
fn update_gates_from_records_loop_proofs_as_observed_gates_like_dwp_run() {
    let work = Work::example();
    prove_example(&work, &[]);
    // loop prove keeps what the copy needs: the output's hash, the ending, the bytes printed.
    let proof = &work.json(".ak-loop/verify.json")["outcomes"][1];
    let output = fs::read(work.path(".ak-loop/logs/issue-o2.log")).unwrap();
    assert_eq!(proof["logSha256"], sha256_hex(&output), "{proof:#}");
    assert_eq!(proof["ended"], "exit 0");
    assert_eq!(proof["outputBytes"], output.len());
    let plan = publishable_gates_plan(&work);
    let verify = work.s(&work.path(".ak-loop/verify.json"));
    let out = update_task_3_from(&work, &plan, "in_progress", &verify);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let document = json_out(&out);
    let notes = document["gates_from"].as_array().unwrap();
    assert_eq!(notes.len(), 2, "{document:#}");
    let state: Value =
        serde_json::from_slice(&fs::read(Path::new(&plan).join("state.json")).unwrap()).unwrap();
    let gates = state["tasks"][2]["gates"].as_array().unwrap();
    for (i, (id, command)) in [
        ("o1", "test -s src/greeting.txt"),
        ("o2", "grep -q greeting CHANGELOG.md"),
    ]
    .into_iter()
    .enumerate()
    {
        let note = &notes[i];
        assert_eq!(note["outcome"], id);
        assert_eq!(note["recorded"], "observed", "{note:#}");
        let log = note["log"].as_str().unwrap();
        assert!(
            log.starts_with(&format!(
                "analysis_results/gates/task-3-{}-",
                command.split(' ').next().unwrap()
            )),
            "{log}"
        );
        let kept = fs::read(Path::new(&plan).join(log)).unwrap();
        let sha = sha256_hex(&kept);
        assert_eq!(note["log_sha256"], sha);
        // The shape of `dwp run`: the same header, the same evidence, the same fields.
        let text = String::from_utf8(kept).unwrap();
        assert!(
            text.starts_with(&format!(
                "dwp gate log 1\ntask: 3\ncommand: {command}\nfinished: {NOW}\nended: exit 0\noutput: 0 bytes, all kept\n----\n"
            )),
            "{text}"
        );
        let gate = gates
            .iter()
            .rev()
            .find(|g| g["command"] == command)
            .unwrap();
        assert_eq!(gate["passes"], true);
        assert_eq!(gate["exit_code"], 0);
        assert_eq!(gate["last_run"], NOW);
        assert_eq!(
            gate["evidence"],
            format!("(no output) (observed by dwp: exit 0; log={log} sha256={sha})")
        );
    }
    // verify holds the records against the copies; status marks them observed.
    let report = document_out(&work.run(&["--json", "verify", &plan]));
    let codes = common::verify_codes(&report);
    assert!(!codes.contains(&"DWP068".to_owned()), "{report:#}");
    let status = json_out(&work.run(&["--json", "status", &plan]));
    let current = status["current"]["gates"].as_array().unwrap();
    assert!(
        current
            .iter()
            .filter(|g| g["command"] == "test -s src/greeting.txt")
            .all(|g| g["observed"] == true),
        "{status:#}"
    );
    // The completion publishes; the receipt lists the loop's gates as observed.
    let out = work.run(&["update", &plan, "--task", "3", "--status", "completed"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let receipt: Value = serde_json::from_slice(
        &fs::read(Path::new(&plan).join("analysis_results/FINALIZATION.json")).unwrap(),
    )
    .unwrap();
    let listed: Vec<(String, String)> = receipt["gates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["task"] == 3)
        .map(|g| {
            (
                g["command"].as_str().unwrap().to_owned(),
                g["evidence"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for command in ["test -s src/greeting.txt", "grep -q greeting CHANGELOG.md"] {
        assert!(
            listed.contains(&(command.to_owned(), "observed".to_owned())),
            "{listed:?}"
        );
    }
}

/// The copy is of what was observed: a loop output edited after the run no longer hashes to
/// the recorded `logSha256`, and nothing is written.
#[test]
fn update_gates_from_a_loop_output_edited_after_the_run_is_refused_and_writes_nothing() {
    let work = Work::example();
    prove_example(&work, &[]);
    let log = work.path(".ak-loop/logs/issue-o1.log");
    fs::write(&log, "42 passed\n").unwrap();
    let plan = publishable_gates_plan(&work);
    let before = snapshot(Path::new(&plan));
    let verify = work.s(&work.path(".ak-loop/verify.json"));
    let out = work.run(&[
        "update",
        &plan,
        "--task",
        "3",
        "--status",
        "in_progress",
        "--gates-from",
        &verify,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let message = stderr(&out);
    let first = message.lines().next().unwrap();
    assert!(
        first.starts_with("dwp update: the output `.ak-loop/logs/issue-o1.log` has sha256 ")
            && first.ends_with(&format!("({verify}: $.outcomes[0].logSha256)")),
        "{message}"
    );
    assert_eq!(snapshot(Path::new(&plan)), before, "nothing is written");
    // The hint's step works as printed (verify.json records the prove command that wrote it):
    // prove again, then the same update records the gates.
    let hint = message
        .lines()
        .find_map(|l| l.trim().strip_prefix("hint: "))
        .unwrap();
    let step = hint.split('`').nth(1).unwrap();
    assert!(
        step.starts_with("dwp loop prove ") && step.ends_with(" --item o1"),
        "{step}"
    );
    assert!(
        !step.contains(['\'', '"']),
        "plain words, no quoting: {step}"
    );
    let words: Vec<&str> = step.split(' ').skip(1).collect();
    let again = work.run(&words);
    assert_eq!(again.status.code(), Some(0), "{step}: {}", stderr(&again));
    let out = update_task_3_from(&work, &plan, "in_progress", &verify);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_out(&out)["gates_from"][0]["recorded"], "observed");
}

/// A verify.json from before the output was hashed keeps nothing to copy: its outcomes are
/// recorded as asserted, as they were, and the output says so.
#[test]
fn update_gates_from_an_old_verify_json_without_an_output_hash_records_asserted_gates() {
    let work = Work::example();
    prove_example(&work, &[]);
    let mut old = work.json(".ak-loop/verify.json");
    for outcome in old["outcomes"].as_array_mut().unwrap() {
        let outcome = outcome.as_object_mut().unwrap();
        for field in ["logSha256", "ended", "outputBytes"] {
            outcome.remove(field);
        }
    }
    let verify = work.write(".ak-loop/verify.json", &old.to_string());
    let plan = publishable_gates_plan(&work);
    let out = update_task_3_from(&work, &plan, "in_progress", &work.s(&verify));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "dwp update: warning: outcome o1 of "
        ) && stderr(&out).contains("is recorded as an asserted gate (`test -s src/greeting.txt`): its output was kept without a hash (no `logSha256`"),
        "{}",
        stderr(&out)
    );
    let document = json_out(&out);
    assert_eq!(
        document["gates_from"][0]["recorded"], "asserted",
        "{document:#}"
    );
    let state: Value =
        serde_json::from_slice(&fs::read(Path::new(&plan).join("state.json")).unwrap()).unwrap();
    let gate = state["tasks"][2]["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["command"] == "test -s src/greeting.txt")
        .unwrap()
        .clone();
    assert!(
        gate["evidence"]
            .as_str()
            .unwrap()
            .ends_with("(.ak-loop/verify.json outcome o1)"),
        "{gate}"
    );
    assert!(!Path::new(&plan).join("analysis_results/gates").exists());
}

#[test]
fn update_gates_from_a_failed_outcome_cannot_complete_the_task() {
    let work = Work::example();
    work.write("CHANGELOG.md", "# Changelog\n");
    prove_example(&work, &[]);
    let plan = gates_plan(&work);
    work.run(&["update", &plan, "--task", "2", "--status", "in_progress"]);
    let state = fs::read(Path::new(&plan).join("state.json")).unwrap();
    let verify = work.s(&work.path(".ak-loop/verify.json"));
    let out = update_task_2_from(&work, &plan, "completed", &verify);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert_eq!(
        fs::read(Path::new(&plan).join("state.json")).unwrap(),
        state
    );
    // The logs written for the refused update are removed again.
    let gates_dir = Path::new(&plan).join("analysis_results/gates");
    assert!(
        fs::read_dir(&gates_dir).map_or(true, |mut d| d.next().is_none()),
        "{gates_dir:?}"
    );
}

#[test]
fn update_gates_from_an_invalid_verify_json_is_refused() {
    let work = Work::example();
    let verify = work.write(
        ".ak-loop/verify.json",
        r#"{"ranAt": "2026-06-09T16:00:00Z", "command": "x", "exitCode": "0", "outcomes": []}"#,
    );
    let plan = gates_plan(&work);
    let out = update_task_2_from(&work, &plan, "in_progress", &work.s(&verify));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("verify.json: $.exitCode"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn dod_changed_from_counts_uncommitted_edits_of_tracked_files() {
    let work = Work::empty();
    let config = work.outside("loop.config.yaml", CHANGE_CONFIG);
    work.repository_with(&[("src/lib.rs", "base\n")]);
    work.write("src/lib.rs", "base\n// FIXME uncommitted\n");
    let (_, document) = dod_json(&work, &config, None, &["--changed-from", "main"]);
    assert_eq!(
        item(&document, "no-todo")["verdict"],
        "failed",
        "{document:#}"
    );
    assert_eq!(
        item(&document, "no-todo")["evidence"],
        "`src/lib.rs` line 2 matches `TODO|FIXME`"
    );
}

#[test]
fn prove_accepts_an_unfrozen_contract_but_not_an_edited_frozen_one() {
    let work = Work::example();
    let contract = work.path("contract.json");
    let mut document = work.json("contract.json");
    document.as_object_mut().unwrap().remove("digest");
    fs::write(&contract, document.to_string()).unwrap();
    let out = prove_example(&work, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = work.run(&["loop", "freeze", &work.s(&contract)]);
    assert_eq!(out.status.code(), Some(0));
    let mut frozen = work.json("contract.json");
    frozen["outcomes"][1]["check"] = json!(["true"]);
    fs::write(&contract, frozen.to_string()).unwrap();
    let before = work.loop_hashes();
    let out = prove_example(&work, &[]);
    assert_refused(&out, "prove", &["the contract changed after dispatch"]);
    assert_eq!(work.loop_hashes(), before);
}

#[test]
fn artifacts_an_empty_plan_md_is_invalid_and_an_optional_invalid_file_counts() {
    let work = Work::empty();
    work.write(".ak-loop/verify.json", r#"{"ranAt": "2026-06-09T16:00:00Z", "command": "make test", "exitCode": 0, "outcomes": []}"#);
    work.write(".ak-loop/plan.md", "  \n");
    let document = json_out(&work.run(&["--json", "loop", "artifacts", &work.s(&work.dir)]));
    assert_eq!(
        document["verdict"], "invalid",
        "plan.md is not required here, but present and empty"
    );
    assert_eq!(
        document["artifacts"][0]["mismatches"][0]["message"],
        "is empty"
    );
}

#[test]
fn dod_changed_from_in_a_worktree_below_the_repository_root_is_relative_to_the_worktree() {
    let work = Work::empty();
    work.repository_with(&[
        ("pkg/src/lib.rs", "base\n"),
        ("docs/root-level.md", "base\n"),
    ]);
    work.write("pkg/docs/guide.md", "# Guide\n");
    work.write("docs/root-level.md", "changed outside the worktree\n");
    work.commit_all("change");
    let config = work.outside("loop.config.yaml", CHANGE_CONFIG);
    let package = Work {
        root: tempfile::tempdir().unwrap(),
        dir: work.path("pkg"),
    };
    fs::create_dir_all(package.root.path().join("home")).unwrap();
    let (_, document) = dod_json(&package, &config, None, &["--changed-from", "HEAD~1"]);
    assert_eq!(
        item(&document, "docs")["evidence"],
        "`docs/guide.md` changed",
        "{document:#}"
    );
    assert_eq!(
        document["changed"]["count"], 1,
        "the root's docs/ is outside the worktree"
    );
}

#[test]
fn dod_changed_from_runs_nothing_the_worktrees_git_config_names() {
    use std::os::unix::fs::PermissionsExt;
    let work = Work::empty();
    let config = work.outside("loop.config.yaml", CHANGE_CONFIG);
    work.repository_with(&[("src/lib.rs", "base\n")]);
    let marker = work.root.path().join("hook-ran");
    let hook = work.outside(
        "hook.sh",
        &format!("#!/bin/sh\ntouch '{}'\nexit 1\n", marker.display()),
    );
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    work.git(&["config", "core.fsmonitor", &work.s(&hook)]);
    work.write("src/lib.rs", "changed\n");
    let (_, document) = dod_json(&work, &config, None, &["--changed-from", "main"]);
    assert_eq!(document["changed"]["count"], 1, "{document:#}");
    assert!(!marker.exists(), "the worktree's fsmonitor hook ran");
}

// ---------------------------------------------------------------------------------------------
// dwp loop dod --changed-from runs no program the worktree's git configuration names (#13)
// ---------------------------------------------------------------------------------------------

/// A commit that is nowhere: reading it makes a partial clone fetch it lazily.
const MISSING_COMMIT: &str = "1111111111111111111111111111111111111111";

/// A worktree on `main` whose `src/lib.rs` is changed and whose `src/same.rs` was touched
/// (stat-dirty, same bytes: `git diff` then hashes it, and refreshes the index), and a program
/// that leaves a marker beside the worktree when anything runs it.
struct Hostile {
    work: Work,
    config: PathBuf,
    program: String,
    marker: PathBuf,
}

impl Hostile {
    fn new() -> Hostile {
        use std::os::unix::fs::PermissionsExt;
        let work = Work::empty();
        let config = work.outside("loop.config.yaml", CHANGE_CONFIG);
        work.repository_with(&[("src/lib.rs", "base\n"), ("src/same.rs", "same\n")]);
        let marker = work.root.path().join("ran");
        let program = work.outside(
            "program.sh",
            &format!(
                "#!/bin/sh\necho \"$0 $*\" >> '{}'\nexit 1\n",
                marker.display()
            ),
        );
        fs::set_permissions(&program, fs::Permissions::from_mode(0o755)).unwrap();
        work.write("src/lib.rs", "changed\n");
        let touched = fs::File::options()
            .write(true)
            .open(work.path("src/same.rs"))
            .unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
        touched.set_modified(later).unwrap();
        let program = work.s(&program);
        Hostile {
            work,
            config,
            program,
            marker,
        }
    }

    fn config(&self, key: &str, value: &str) {
        self.work.git(&["config", key, value]);
    }

    /// A partial clone whose promisor remote is `url`: a missing object is fetched from it.
    fn promisor(&self, url: &str) {
        self.config("extensions.partialClone", "origin");
        self.config("remote.origin.promisor", "true");
        self.config("remote.origin.url", url);
    }

    /// `dwp loop dod --changed-from main`: the one changed file is found, nothing ran.
    fn assert_changed_and_nothing_ran(&self) {
        let (out, document) = dod_json(&self.work, &self.config, None, &["--changed-from", "main"]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert_eq!(document["changed"]["count"], 1, "{document:#}");
        assert_eq!(
            item(&document, "no-todo")["evidence"],
            "`TODO|FIXME` absent from 1 changed file",
            "{document:#}"
        );
        self.assert_nothing_ran();
    }

    /// `--changed-from` a commit the partial clone lacks: refused, nothing fetched, nothing ran.
    fn assert_no_fetch(&self) {
        let out = self
            .work
            .run_loop("dod", &self.config, &["--changed-from", MISSING_COMMIT]);
        self.assert_nothing_ran();
        assert_refused(&out, "dod", &["is not a commit", "--changed-from"]);
    }

    fn assert_nothing_ran(&self) {
        assert!(
            !self.marker.exists(),
            "the worktree's git configuration ran a program: {}",
            fs::read_to_string(&self.marker).unwrap_or_default()
        );
    }
}

#[test]
fn dod_changed_from_runs_no_clean_filter_named_in_gitattributes() {
    let hostile = Hostile::new();
    hostile.config("filter.x.clean", &hostile.program);
    hostile.work.write(".gitattributes", "* filter=x\n");
    hostile.assert_changed_and_nothing_ran();
}

#[test]
fn dod_changed_from_runs_no_required_process_filter() {
    let hostile = Hostile::new();
    hostile.config("filter.x.process", &hostile.program);
    hostile.config("filter.x.required", "true");
    hostile.work.write(".gitattributes", "*.rs filter=x\n");
    hostile.assert_changed_and_nothing_ran();
}

#[test]
fn dod_changed_from_runs_no_filter_named_in_info_attributes() {
    let hostile = Hostile::new();
    hostile.config("filter.Odd.Name.clean", &hostile.program);
    hostile
        .work
        .write(".git/info/attributes", "* filter=Odd.Name\n");
    hostile.assert_changed_and_nothing_ran();
}

#[test]
fn dod_changed_from_runs_no_textconv_or_diff_driver_command() {
    let hostile = Hostile::new();
    hostile.config("diff.x.textconv", &hostile.program);
    hostile.config("diff.x.command", &hostile.program);
    hostile.work.write(".gitattributes", "* diff=x\n");
    hostile.assert_changed_and_nothing_ran();
}

#[test]
fn dod_changed_from_runs_no_external_diff() {
    let hostile = Hostile::new();
    hostile.config("diff.external", &hostile.program);
    hostile.assert_changed_and_nothing_ran();
}

#[test]
fn dod_changed_from_runs_no_fsmonitor_hook() {
    let hostile = Hostile::new();
    hostile.config("core.fsmonitor", &hostile.program);
    hostile.assert_changed_and_nothing_ran();
}

#[test]
fn dod_changed_from_runs_no_pager() {
    let hostile = Hostile::new();
    hostile.config("core.pager", &hostile.program);
    hostile.config("pager.diff", "true");
    hostile.config("pager.rev-parse", "true");
    hostile.assert_changed_and_nothing_ran();
}

#[test]
fn dod_changed_from_runs_no_hook_of_the_repository() {
    let hostile = Hostile::new();
    let hook = hostile.work.path(".git/hooks/post-index-change");
    fs::copy(&hostile.program, &hook).unwrap();
    hostile.assert_changed_and_nothing_ran();
}

#[test]
fn dod_changed_from_runs_no_hook_of_a_configured_hooks_path() {
    let hostile = Hostile::new();
    let hooks = hostile.work.root.path().join("hooks");
    fs::create_dir_all(&hooks).unwrap();
    fs::copy(&hostile.program, hooks.join("post-index-change")).unwrap();
    hostile.config("core.hooksPath", &hostile.work.s(&hooks));
    hostile.assert_changed_and_nothing_ran();
}

#[test]
fn dod_changed_from_runs_no_ssh_command_of_a_lazy_fetch() {
    let hostile = Hostile::new();
    hostile.promisor("ssh://example.invalid/repo.git");
    hostile.config("core.sshCommand", &hostile.program);
    hostile.assert_no_fetch();
}

#[test]
fn dod_changed_from_runs_no_remote_helper_of_a_lazy_fetch() {
    let hostile = Hostile::new();
    hostile.promisor(&format!("ext::{} %S", hostile.program));
    hostile.config("protocol.ext.allow", "always");
    hostile.assert_no_fetch();
}

#[test]
fn dod_changed_from_runs_no_credential_helper_of_a_lazy_fetch() {
    let hostile = Hostile::new();
    let server = unauthorized_server();
    hostile.promisor(&format!("http://{server}/repo.git"));
    hostile.config("credential.helper", &hostile.program);
    hostile.config("core.askPass", &hostile.program);
    hostile.assert_no_fetch();
}

#[test]
fn dod_changed_from_runs_nothing_an_included_config_file_names() {
    let hostile = Hostile::new();
    let hooks = hostile.work.root.path().join("hooks");
    fs::create_dir_all(&hooks).unwrap();
    fs::copy(&hostile.program, hooks.join("post-index-change")).unwrap();
    let included = hostile.work.outside(
        "included.config",
        &format!(
            "[core]\n\tfsmonitor = {p}\n\thooksPath = {h}\n\tattributesFile = {a}\n[filter \"x\"]\n\tclean = {p}\n",
            p = hostile.program,
            h = hooks.display(),
            a = hostile.work.root.path().join("attributes").display(),
        ),
    );
    hostile.work.outside("attributes", "* filter=x\n");
    hostile.config("include.path", &hostile.work.s(&included));
    hostile.assert_changed_and_nothing_ran();
}

/// An HTTP server on localhost that answers every request 401 (asks for credentials).
fn unauthorized_server() -> std::net::SocketAddr {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut buffer = [0u8; 8192];
            let _ = stream.read(&mut buffer);
            let _ = stream.write_all(
                b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"x\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    address
}

// ---------------------------------------------------------------------------------------------
// dwp loop prove runs commands with a minimal environment (#13)
// ---------------------------------------------------------------------------------------------

const ENV_CONFIG: &str = "dod:\n  items:\n    - {id: env, description: The environment is printed, kind: command, command: [env]}\n";

/// `dwp loop prove` of one item that prints its environment into its log, with two secrets in
/// dwp's own environment; returns the output, the log and the proof.
fn prove_env(extra: &[&str]) -> (Output, String, Value) {
    let work = Work::empty();
    let config = work.outside("loop.config.yaml", ENV_CONFIG);
    let out = work
        .dwp()
        .env("DWP_SECRET_TOKEN", "hunter2-token")
        .env("DWP_OTHER_SECRET", "hunter3-other")
        .args(work.loop_args("prove", &config, extra))
        .output();
    let log = fs::read_to_string(work.path(".ak-loop/logs/project-env.log")).unwrap_or_default();
    let proof = work.json(".ak-loop/dod.json")["project"][0].clone();
    let home = work.s(&work.root.path().join("home"));
    assert!(
        !log.contains(&format!("HOME={home}\n")),
        "dwp's HOME reached the command: {log}"
    );
    (out, log, proof)
}

/// What a command may see: the basics, the toolchain managers' folders and their selectors
/// (docs/loop.md, trust model).
const MINIMAL_SET: &[&str] = &[
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "RUSTUP_HOME",
    "CARGO_HOME",
    "PYENV_ROOT",
    "NVM_DIR",
    "RUSTUP_TOOLCHAIN",
    "PYENV_VERSION",
    "VIRTUAL_ENV",
];

#[test]
fn prove_passes_none_of_dwps_environment_beyond_the_minimal_set() {
    let (out, log, proof) = prove_env(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !log.contains("hunter2-token"),
        "a secret reached the log: {log}"
    );
    assert!(
        !log.contains("DWP_"),
        "dwp's own variables reached the log: {log}"
    );
    assert!(log.contains("PATH="), "PATH is passed: {log}");
    assert!(
        log.contains("HOME="),
        "HOME is a private empty folder: {log}"
    );
    let names: Vec<&str> = log
        .lines()
        .filter_map(|l| l.split_once('=').map(|(name, _)| name))
        .collect();
    for name in &names {
        assert!(
            MINIMAL_SET.contains(name),
            "{name} is not in the minimal set: {log}"
        );
    }
    let recorded: Vec<&str> = proof["env"]
        .as_array()
        .unwrap_or_else(|| panic!("the proof records the names passed: {proof:#}"))
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(recorded.contains(&"PATH"), "{proof:#}");
    assert!(
        !recorded.contains(&"HOME"),
        "HOME is dwp's own, not passed: {proof:#}"
    );
}

#[test]
fn prove_pass_env_passes_exactly_the_named_variable_and_the_proof_records_its_name() {
    let (out, log, proof) = prove_env(&["--pass-env", "DWP_SECRET_TOKEN"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(log.contains("DWP_SECRET_TOKEN=hunter2-token\n"), "{log}");
    assert!(
        !log.contains("hunter3-other"),
        "an unnamed secret reached the log: {log}"
    );
    assert!(
        proof["env"]
            .as_array()
            .is_some_and(|names| names.contains(&json!("DWP_SECRET_TOKEN"))
                && !names.contains(&json!("DWP_OTHER_SECRET"))),
        "{proof:#}"
    );
    let values = serde_json::to_string(&proof).unwrap();
    assert!(
        !values.contains("hunter2-token"),
        "a value was recorded: {values}"
    );
}
