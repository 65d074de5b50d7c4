//! The CI integrations dwp documents are real: the `dwp-verify` hook of `.pre-commit-hooks.yaml`
//! and the `dwp verify` commands of the GitHub Actions workflow in `docs/ci.md` are read from
//! those files and run, so the documents cannot drift from what the binary accepts.

use crate::common;
use dwp::synth::SynthPlan;
use serde_json::Value;
use std::path::Path;

/// A repository root with two plans under `.dwp/plans/`; `broken` unchecks a box of the second
/// (state ahead: a desync finding).
fn workspace(broken: bool) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let plans = root.path().join(".dwp/plans");
    std::fs::create_dir_all(&plans).unwrap();
    SynthPlan::new("PLAN_ci_first", 3)
        .completed(1)
        .write(&plans)
        .unwrap();
    let second = SynthPlan::new("PLAN_ci_second", 4)
        .completed(2)
        .write(&plans)
        .unwrap();
    if broken {
        let readme = second.join("README.md");
        let text = std::fs::read_to_string(&readme).unwrap();
        std::fs::write(&readme, text.replacen("- [x] Task 2", "- [ ] Task 2", 1)).unwrap();
    }
    root
}

/// Run `dwp ARGS...` (the words after `dwp` in a documented command line) in `dir`.
fn run_documented(words: &[String], dir: &Path) -> (i32, Vec<u8>) {
    assert_eq!(words[0], "dwp", "a documented dwp command: {words:?}");
    let output = common::dwp()
        .inherit_home()
        .in_dir(dir)
        .args(&words[1..])
        .output();
    (output.status.code().unwrap(), output.stdout)
}

fn words(line: &str) -> Vec<String> {
    line.split_whitespace()
        .take_while(|w| !w.starts_with('>') && !w.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_pre_commit_hook_runs_dwp_verify_on_the_workspace() {
    let text = std::fs::read_to_string(common::repo_root().join(".pre-commit-hooks.yaml")).unwrap();
    let hooks: Vec<Value> = serde_saphyr::from_str(&text).expect("the hooks file is YAML");
    let hook = hooks
        .iter()
        .find(|h| h["id"] == "dwp-verify")
        .expect("a dwp-verify hook");
    assert_eq!(hook["language"], "rust", "pre-commit builds dwp with cargo");
    assert_eq!(hook["pass_filenames"], false, "dwp finds the plans itself");
    let entry = words(hook["entry"].as_str().unwrap());
    assert_eq!(run_documented(&entry, workspace(false).path()).0, 0);
    assert_eq!(run_documented(&entry, workspace(true).path()).0, 1);
}

#[test]
fn the_documented_github_workflow_uploads_sarif_from_verify_all() {
    let doc = std::fs::read_to_string(common::repo_root().join("docs/ci.md")).unwrap();
    let start = doc
        .find("```yaml\n# .github/workflows/dwp.yml")
        .expect("the workflow block");
    let body = &doc[start + "```yaml\n".len()..];
    let workflow_text = &body[..body.find("```").unwrap()];
    let workflow: Value = serde_saphyr::from_str(workflow_text).expect("the workflow is YAML");
    let steps = workflow["jobs"]["verify"]["steps"].as_array().unwrap();
    let upload = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("github/codeql-action/upload-sarif"))
        })
        .expect("an upload-sarif step");
    assert_eq!(
        upload["if"], "always()",
        "findings are uploaded whatever the verdict"
    );
    let sarif_file = upload["with"]["sarif_file"].as_str().unwrap();

    let commands: Vec<Vec<String>> = steps
        .iter()
        .filter_map(|s| s["run"].as_str())
        .flat_map(str::lines)
        .map(str::trim)
        .filter(|l| l.starts_with("dwp verify"))
        .map(words)
        .collect();
    let sarif_command = commands
        .iter()
        .find(|c| c.windows(2).any(|w| w == ["--format", "sarif"]))
        .expect("a dwp verify --format sarif step");
    assert!(
        sarif_command.contains(&"--all".to_owned()),
        "{sarif_command:?}"
    );
    assert!(
        workflow_text.contains(&format!("> {sarif_file}")),
        "the SARIF command writes the uploaded file"
    );

    for broken in [false, true] {
        let root = workspace(broken);
        let (code, stdout) = run_documented(sarif_command, root.path());
        assert_eq!(code, i32::from(broken), "the verdict's exit code");
        let log: Value = serde_json::from_slice(&stdout).expect("SARIF is JSON");
        assert_eq!(log["version"], "2.1.0");
        let results = log["runs"][0]["results"].as_array().unwrap();
        assert_eq!(results.is_empty(), !broken);
        for result in results {
            let uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap();
            assert!(
                uri.starts_with(".dwp/plans/PLAN_ci_second/"),
                "relative to the checkout: {uri}"
            );
        }
    }
}

/// The README's exit-code table is `Exit::TABLE`, row for row (the table `--help` prints).
#[test]
fn the_readme_exit_code_table_is_the_one_the_binary_uses() {
    let rows: Vec<(u8, String)> = common::readme_table("## Exit codes", "| code")
        .iter()
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells[1].parse().unwrap(), cells[2].to_owned())
        })
        .collect();
    let table: Vec<(u8, String)> = dwp::error::Exit::TABLE
        .iter()
        .map(|(exit, meaning)| (exit.code(), (*meaning).to_owned()))
        .collect();
    assert_eq!(rows, table);
    let help = dwp::error::Exit::help_text();
    for (code, meaning) in &table {
        assert!(help.contains(&format!("  {code}  {meaning}")), "{help}");
    }
}

/// The pre-commit configuration docs/ci.md shows is pinned to something that exists: a local
/// hook running the installed dwp, whose entry passes on a conformant workspace and fails on a
/// broken one.
#[test]
fn the_documented_pre_commit_config_is_a_local_hook_that_runs() {
    let doc = std::fs::read_to_string(common::repo_root().join("docs/ci.md")).unwrap();
    let start = doc
        .find("```yaml\n# .pre-commit-config.yaml")
        .expect("the pre-commit block");
    let body = &doc[start + "```yaml\n".len()..];
    let config: Value = serde_saphyr::from_str(&body[..body.find("```").unwrap()]).unwrap();
    let repos = config["repos"].as_array().unwrap();
    assert_eq!(repos.len(), 1);
    assert_eq!(
        repos[0]["repo"], "local",
        "no URL or rev that may not exist"
    );
    assert!(repos[0].get("rev").is_none());
    let hook = &repos[0]["hooks"][0];
    assert_eq!(hook["id"], "dwp-verify");
    assert_eq!(hook["language"], "system", "the installed binary");
    assert_eq!(hook["pass_filenames"], false);
    let entry = words(hook["entry"].as_str().unwrap());
    assert_eq!(run_documented(&entry, workspace(false).path()).0, 0);
    assert_eq!(run_documented(&entry, workspace(true).path()).0, 1);
}

/// What a user of the repository sees: both license files the crate's license names, and a
/// changelog with an Unreleased section.
#[test]
fn the_license_files_and_the_changelog_exist() {
    let manifest = std::fs::read_to_string(common::repo_root().join("Cargo.toml")).unwrap();
    assert!(manifest.contains("license = \"MIT OR Apache-2.0\""));
    let mit = std::fs::read_to_string(common::repo_root().join("LICENSE-MIT")).unwrap();
    assert!(
        mit.starts_with("MIT License") && mit.contains("Copyright (c) 2026 the dwp developers")
    );
    let apache = std::fs::read_to_string(common::repo_root().join("LICENSE-APACHE")).unwrap();
    assert!(apache.contains("Apache License") && apache.contains("Version 2.0, January 2004"));
    assert!(apache.contains("END OF TERMS AND CONDITIONS"));
    let changelog = std::fs::read_to_string(common::repo_root().join("CHANGELOG.md")).unwrap();
    assert!(changelog.contains("## [Unreleased]"));
}
