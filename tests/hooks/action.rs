//! The GitHub Action at the repository root (`action.yml`) and the release that feeds it
//! (`.github/workflows/release.yml`), as far as this machine can run them: GitHub itself cannot
//! run here, so the action's steps, the scripts under `scripts/action/`, run as the runner would
//! run them (the step's environment, `GITHUB_OUTPUT` and `GITHUB_PATH` as files) with the test
//! build of dwp first on `PATH`. The download of a release needs the network: the install
//! script's test seam `DWP_ACTION_DOWNLOAD_DIR` serves the assets `scripts/release/pack.sh` and
//! `scripts/release/checksums.sh` made from the test build, so the asset names, the checksum
//! check and the unpacking are the ones a release gets. The workflows, the action's metadata and
//! the Dockerfile are checked for their structure (`.ci/run` validates the workflows and the
//! action's metadata against their public JSON Schemas too); `docker build` cannot run here (no daemon, no registry to pull the
//! base images from), so the image is never built by these tests.

use crate::common;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What one action step did: its exit code, its log and the outputs it wrote.
#[derive(Debug)]
struct Step {
    code: i32,
    stdout: String,
    stderr: String,
    outputs: BTreeMap<String, String>,
    path_added: String,
    /// `RUNNER_TEMP`, where the install step installs: kept as long as the step.
    _runner_temp: tempfile::TempDir,
}

/// The folder of the test build of dwp, put first on `PATH` as the install step would.
fn dwp_bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_dwp"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Run `scripts/action/SCRIPT` in `dir` with the runner's environment (nothing inherited but
/// `PATH`, the test build first) and `env` on top.
fn run_step(script: &str, dir: &Path, env: &[(&str, &str)]) -> Step {
    let runner = tempfile::tempdir().unwrap();
    let output_file = runner.path().join("github_output");
    let path_file = runner.path().join("github_path");
    std::fs::write(&output_file, "").unwrap();
    std::fs::write(&path_file, "").unwrap();
    let path = format!(
        "{}:{}",
        dwp_bin_dir().display(),
        std::env::var("PATH").unwrap()
    );
    let mut command = Command::new("bash");
    command
        .arg(common::repo_root().join("scripts/action").join(script))
        .current_dir(dir)
        .env_clear()
        .env("PATH", path)
        .env("DWP_TEST_NOW", common::NOW)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", &output_file)
        .env("GITHUB_PATH", &path_file)
        .env("GITHUB_ACTION_PATH", common::repo_root())
        .env("RUNNER_TEMP", runner.path())
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64");
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("bash runs");
    let outputs = std::fs::read_to_string(&output_file)
        .unwrap()
        .lines()
        .map(|l| {
            let (name, value) = l.split_once('=').expect("NAME=value");
            (name.to_owned(), value.to_owned())
        })
        .collect();
    Step {
        code: output.status.code().unwrap(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
        outputs,
        path_added: std::fs::read_to_string(&path_file).unwrap(),
        _runner_temp: runner,
    }
}

/// A git repository holding, under `.dwp/plans/`, the plan of each conformance fixture named.
fn repository_with(cases: &[&str]) -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    common::git(repo.path(), &["init", "--quiet"]);
    for case in cases {
        let plan = std::fs::read_dir(common::fixture(case))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.is_dir())
            .unwrap();
        let name = plan.file_name().unwrap();
        common::copy_plan(&plan, &repo.path().join(".dwp/plans").join(name));
    }
    repo
}

/// The verify step in `repo` with the SARIF log in it; the step and the log.
fn verify_step(repo: &Path, env: &[(&str, &str)]) -> (Step, Value) {
    let sarif = repo.join("out/dwp.sarif");
    let mut env = env.to_vec();
    let sarif_text = sarif.to_str().unwrap();
    env.push(("DWP_SARIF_FILE", sarif_text));
    let step = run_step("verify.sh", repo, &env);
    let log = serde_json::from_slice(&std::fs::read(&sarif).unwrap()).expect("SARIF is JSON");
    assert_eq!(step.outputs["sarif-file"], sarif_text, "{step:?}");
    (step, log)
}

fn results(log: &Value) -> &Vec<Value> {
    assert_eq!(log["version"], "2.1.0");
    log["runs"][0]["results"].as_array().unwrap()
}

#[test]
fn the_action_passes_a_repository_with_no_plans_with_an_empty_sarif_log() {
    let repo = repository_with(&[]);
    let (step, log) = verify_step(repo.path(), &[]);
    assert_eq!(step.code, 0, "{step:?}");
    assert_eq!(step.outputs["exit"], "0");
    assert_eq!(step.outputs["verdict"], "CONFORMANT");
    assert!(results(&log).is_empty(), "{log:#}");
    assert!(step.stdout.contains("no plans to verify"), "{step:?}");
}

#[test]
fn the_action_passes_a_conformant_plan() {
    let repo = repository_with(&["valid-full-v5"]);
    let (step, log) = verify_step(repo.path(), &[("DWP_ROOT", ".")]);
    assert_eq!(step.code, 0, "{step:?}");
    assert_eq!(step.outputs["exit"], "0");
    assert_eq!(step.outputs["verdict"], "CONFORMANT");
    assert!(results(&log).is_empty(), "{log:#}");
    assert!(step.stdout.contains("1 plan: 1 conformant"), "{step:?}");
}

/// The step fails with dwp's exit code, the SARIF log holds the findings relative to the
/// checkout (what code scanning needs), and the job log has them as text.
#[test]
fn the_action_fails_a_non_conformant_plan_with_exit_1_and_its_findings() {
    let repo = repository_with(&["valid-full-v5", "reconcile-completed-count-drift"]);
    let (step, log) = verify_step(repo.path(), &[]);
    assert_eq!(step.code, 1, "{step:?}");
    assert_eq!(step.outputs["exit"], "1");
    assert_eq!(step.outputs["verdict"], "NOT CONFORMANT");
    let codes: BTreeSet<&str> = results(&log)
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    assert_eq!(codes, BTreeSet::from(["DWP022", "DWP047"]), "{log:#}");
    for result in results(&log) {
        let uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap();
        assert!(
            uri.starts_with(".dwp/plans/"),
            "relative to the checkout: {uri}"
        );
    }
    assert!(
        step.stdout.contains("DWP047"),
        "the findings as text: {step:?}"
    );
    assert!(
        step.stdout
            .contains("::error title=dwp verify::NOT CONFORMANT (exit 1)"),
        "{step:?}"
    );
}

/// `strict: true` fails on an advisory (a blocked task) that passes without it; a value other
/// than true or false is the workflow's mistake, refused before dwp runs.
#[test]
fn strict_fails_the_action_on_an_advisory() {
    let repo = repository_with(&["valid-blocked-v5"]);
    let (relaxed, log) = verify_step(repo.path(), &[("DWP_STRICT", "false")]);
    assert_eq!(relaxed.code, 0, "{relaxed:?}");
    assert_eq!(results(&log).len(), 1, "the advisory is reported: {log:#}");
    let (strict, _) = verify_step(repo.path(), &[("DWP_STRICT", "true")]);
    assert_eq!(strict.code, 1, "{strict:?}");
    assert_eq!(strict.outputs["exit"], "1");
    assert_eq!(strict.outputs["verdict"], "NOT CONFORMANT");

    let wrong = run_step("verify.sh", repo.path(), &[("DWP_STRICT", "yes")]);
    assert_eq!(wrong.code, 2, "{wrong:?}");
    assert!(wrong.stderr.contains("strict is 'yes'"), "{wrong:?}");
}

/// Bash that sources the install script and runs `body` (its functions, no download).
fn install_functions(body: &str) -> String {
    let script = common::repo_root().join("scripts/action/install.sh");
    let output = Command::new("bash")
        .arg("-c")
        .arg(format!("source '{}'\n{body}", script.display()))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// Each runner GitHub hosts for Linux and macOS gets the asset built for it; one dwp ships no
/// binary for gets none, and the action builds from source there.
#[test]
fn the_install_script_names_the_release_asset_of_each_runner() {
    let runners = [
        ("Linux", "X64", "dwp-x86_64-unknown-linux-musl.tar.gz"),
        ("Linux", "ARM64", "dwp-aarch64-unknown-linux-musl.tar.gz"),
        ("macOS", "X64", "dwp-x86_64-apple-darwin.tar.gz"),
        ("macOS", "ARM64", "dwp-aarch64-apple-darwin.tar.gz"),
        ("Windows", "X64", ""),
        ("Linux", "ARM", ""),
    ];
    for (os, arch, asset) in runners {
        let named = install_functions(&format!(
            "t=$(dwp_target {os} {arch}); if [ -n \"$t\" ]; then dwp_asset_name \"$t\"; fi"
        ));
        assert_eq!(named.trim(), asset, "{os}/{arch}");
    }
    // The release: the input, else the action's ref when it is a version tag, else latest.
    for (version, reference, tag) in [
        ("", "v1.2.3", "v1.2.3"),
        ("", "v1", "latest"),
        ("", "main", "latest"),
        ("", "", "latest"),
        ("0.4.0", "v1.2.3", "v0.4.0"),
        ("v0.4.0", "main", "v0.4.0"),
        ("latest", "v1.2.3", "latest"),
    ] {
        let chosen = install_functions(&format!("dwp_release_tag '{version}' '{reference}'"));
        assert_eq!(chosen.trim(), tag, "version {version:?}, ref {reference:?}");
    }
    let repository = install_functions(
        "GITHUB_ACTION_PATH=/home/runner/work/_actions/someone/dwp/v1 dwp_repository",
    );
    assert_eq!(repository.trim(), "someone/dwp");
}

/// Release assets made from the test build, as the release workflow makes them: the runner's
/// `dwp-<target>.tar.gz` by `scripts/release/pack.sh`, `SHA256SUMS` by
/// `scripts/release/checksums.sh`.
fn release_assets(target: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let scripts = common::repo_root().join("scripts/release");
    let packed = Command::new("bash")
        .arg(scripts.join("pack.sh"))
        .args([target, env!("CARGO_BIN_EXE_dwp")])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(packed.status.success(), "{packed:?}");
    let summed = Command::new("bash")
        .arg(scripts.join("checksums.sh"))
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(summed.status.success(), "{summed:?}");
    dir
}

/// A `cargo` first on `PATH` that records its arguments in `cargo.args` beside it and installs
/// the test build where `--root` says: the source build, without building.
fn fake_cargo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let cargo = dir.path().join("cargo");
    std::fs::write(
        &cargo,
        format!(
            "#!/usr/bin/env bash\necho \"$@\" > '{}'\nwhile [ \"$1\" != --root ]; do shift; done\nmkdir -p \"$2/bin\" && cp '{}' \"$2/bin/dwp\"\n",
            dir.path().join("cargo.args").display(),
            env!("CARGO_BIN_EXE_dwp"),
        ),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&cargo)
        .status()
        .unwrap();
    dir
}

/// The install step with the release served from `downloads` and `cargo` faked; the step, the
/// fake cargo's arguments (when it ran) and the installed binary (when there is one).
fn install_step(downloads: &Path, env: &[(&str, &str)]) -> (Step, Option<String>, Option<Vec<u8>>) {
    let cargo = fake_cargo();
    let work = tempfile::tempdir().unwrap();
    let path = format!(
        "{}:{}",
        cargo.path().display(),
        std::env::var("PATH").unwrap()
    );
    let mut all = vec![
        ("PATH", path.as_str()),
        ("DWP_ACTION_DOWNLOAD_DIR", downloads.to_str().unwrap()),
        ("DWP_ACTION_REPOSITORY", "someone/dwp"),
    ];
    all.extend_from_slice(env);
    let step = run_step("install.sh", work.path(), &all);
    let cargo_args = std::fs::read_to_string(cargo.path().join("cargo.args")).ok();
    let installed = step.outputs.get("path").map(|p| std::fs::read(p).unwrap());
    (step, cargo_args, installed)
}

#[test]
fn the_install_script_installs_the_release_asset_whose_checksum_matches() {
    let downloads = release_assets("x86_64-unknown-linux-musl");
    let (step, cargo, installed) = install_step(downloads.path(), &[("DWP_VERSION", "v0.1.0")]);
    assert_eq!(step.code, 0, "{step:?}");
    assert_eq!(step.outputs["source"], "release");
    assert_eq!(cargo, None, "nothing built");
    assert_eq!(
        installed.unwrap(),
        std::fs::read(env!("CARGO_BIN_EXE_dwp")).unwrap(),
        "the packed binary"
    );
    let bin = Path::new(&step.outputs["path"]).parent().unwrap();
    assert_eq!(step.path_added, format!("{}\n", bin.display()));
    assert!(step.outputs["version"].starts_with("dwp "), "{step:?}");
    assert!(
        step.stdout
            .contains("installed dwp-x86_64-unknown-linux-musl.tar.gz of someone/dwp v0.1.0"),
        "{step:?}"
    );
}

/// A download whose sha256 is not the one SHA256SUMS lists, or that SHA256SUMS does not list,
/// is refused: nothing installed, nothing on PATH, and no source build in its place.
#[test]
fn the_install_script_refuses_a_tampered_asset() {
    let downloads = release_assets("aarch64-unknown-linux-musl");
    let asset = downloads
        .path()
        .join("dwp-aarch64-unknown-linux-musl.tar.gz");
    let mut bytes = std::fs::read(&asset).unwrap();
    bytes.extend_from_slice(b"tampered");
    std::fs::write(&asset, bytes).unwrap();
    let (step, cargo, installed) = install_step(downloads.path(), &[("RUNNER_ARCH", "ARM64")]);
    assert_eq!(step.code, 1, "{step:?}");
    assert!(step.stderr.contains("SHA256SUMS says"), "{step:?}");
    assert!(step.stderr.contains(": refused"), "{step:?}");
    assert_eq!((cargo, installed), (None, None), "{step:?}");
    assert_eq!(step.path_added, "");

    let sums = downloads.path().join("SHA256SUMS");
    std::fs::write(&sums, "0000  dwp-x86_64-apple-darwin.tar.gz\n").unwrap();
    let (step, cargo, installed) = install_step(downloads.path(), &[("RUNNER_ARCH", "ARM64")]);
    assert_eq!(step.code, 1, "{step:?}");
    assert!(
        step.stderr
            .contains("SHA256SUMS lists dwp-aarch64-unknown-linux-musl.tar.gz 0 times"),
        "{step:?}"
    );
    assert_eq!((cargo, installed), (None, None), "{step:?}");
}

/// No asset for the runner (32-bit ARM Linux), or a release without the runner's asset: the
/// action builds its own source with `cargo install --locked --path $GITHUB_ACTION_PATH`.
#[test]
fn the_install_script_builds_the_actions_source_when_no_asset_matches() {
    let downloads = release_assets("x86_64-unknown-linux-musl");
    for env in [[("RUNNER_ARCH", "ARM")], [("RUNNER_ARCH", "ARM64")]] {
        let (step, cargo, installed) = install_step(downloads.path(), &env);
        assert_eq!(step.code, 0, "{env:?}: {step:?}");
        assert_eq!(step.outputs["source"], "cargo");
        let root = Path::new(&step.outputs["path"])
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .to_owned();
        assert_eq!(
            cargo.unwrap().trim(),
            format!(
                "install --locked --path {} --root {}",
                common::repo_root().display(),
                root.display()
            )
        );
        assert!(installed.is_some());
        assert!(
            step.stdout.contains("::notice::no prebuilt dwp"),
            "{step:?}"
        );
    }
}

/// dwp uses Unix file APIs and does not build for Windows: a Windows runner is told to use a
/// Linux one before anything is downloaded or built.
#[test]
fn the_install_script_refuses_a_windows_runner_with_a_hint() {
    let downloads = release_assets("x86_64-unknown-linux-musl");
    let (step, cargo, installed) = install_step(downloads.path(), &[("RUNNER_OS", "Windows")]);
    assert_eq!(step.code, 1, "{step:?}");
    assert!(step.stderr.contains("not Windows"), "{step:?}");
    assert!(
        step.stderr.contains("hint: run the job on a Linux runner"),
        "{step:?}"
    );
    assert_eq!((cargo, installed), (None, None));
}

fn yaml(path: &str) -> Value {
    let text = std::fs::read_to_string(common::repo_root().join(path)).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{path} is not YAML: {e}"))
}

/// The names `NAME` a script writes to `GITHUB_OUTPUT` (`echo "NAME=...`).
fn outputs_written(script: &str) -> BTreeSet<String> {
    let text =
        std::fs::read_to_string(common::repo_root().join("scripts/action").join(script)).unwrap();
    text.lines()
        .filter_map(|l| {
            l.trim()
                .split_once("echo \"")?
                .1
                .split_once('=')
                .map(|(n, _)| n)
        })
        .filter(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        .map(str::to_owned)
        .collect()
}

/// action.yml is the composite action the tests above run: its inputs (with the defaults
/// docs/ci.md promises), outputs read from steps that write them, the two scripts, and the
/// upload of the SARIF log that an input turns off; every input it declares is used.
#[test]
fn the_action_metadata_runs_the_scripts_the_tests_run() {
    let action = yaml("action.yml");
    let text = std::fs::read_to_string(common::repo_root().join("action.yml")).unwrap();
    let inputs = action["inputs"].as_object().unwrap();
    for (input, default) in [
        ("root", "."),
        ("strict", "false"),
        ("sarif-file", ""),
        ("upload-sarif", "true"),
        ("version", ""),
    ] {
        assert_eq!(inputs[input]["default"], default, "input {input}");
    }
    for input in inputs.keys() {
        assert!(
            text.contains(&format!("${{{{ inputs.{input} }}}}"))
                || text.contains(&format!("inputs.{input} ==")),
            "input {input} is used"
        );
    }
    assert_eq!(action["runs"]["using"], "composite");
    let steps = action["runs"]["steps"].as_array().unwrap();
    let step = |id: &str| steps.iter().find(|s| s["id"] == id).unwrap();
    for (id, script) in [("install", "install.sh"), ("verify", "verify.sh")] {
        assert_eq!(step(id)["shell"], "bash");
        assert_eq!(
            step(id)["run"],
            format!("bash \"$GITHUB_ACTION_PATH/scripts/action/{script}\""),
        );
    }
    for (name, output) in action["outputs"].as_object().unwrap() {
        let value = output["value"].as_str().unwrap();
        let (id, written) = value
            .strip_prefix("${{ steps.")
            .and_then(|v| v.strip_suffix(" }}"))
            .and_then(|v| v.split_once(".outputs."))
            .unwrap_or_else(|| panic!("output {name}: {value}"));
        let script = format!("{id}.sh");
        assert!(
            outputs_written(&script).contains(written),
            "output {name}: {script} writes {written}"
        );
    }
    let upload = steps
        .iter()
        .find(|s| s["uses"] == "github/codeql-action/upload-sarif@v3")
        .expect("the SARIF upload");
    let condition = upload["if"].as_str().unwrap();
    assert!(condition.starts_with("always() && inputs.upload-sarif == 'true'"));
    assert_eq!(
        upload["with"]["sarif_file"],
        "${{ steps.verify.outputs.sarif-file }}"
    );
}

fn workflow_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(common::repo_root().join(".github/workflows"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

/// Every workflow parses and has the shape GitHub runs (triggers, jobs of steps, each step a
/// `uses` pinned to a major version or a `run`), and every script a step runs exists:
/// what the JSON Schemas `.ci/run` validates them against cannot say.
#[test]
fn the_workflows_are_jobs_of_steps_that_run_files_of_the_repository() {
    let files = workflow_files();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for expected in ["ci.yml", "fuzz.yml", "release.yml"] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    for file in files {
        let name = file.display();
        let text = std::fs::read_to_string(&file).unwrap();
        let workflow: Value = serde_saphyr::from_str(&text).unwrap();
        assert!(workflow["on"].is_object(), "{name}: triggers");
        for (id, job) in workflow["jobs"].as_object().unwrap() {
            assert!(job["runs-on"].is_string(), "{name}: {id} runs-on");
            for step in job["steps"].as_array().unwrap() {
                let uses = step["uses"].as_str();
                assert!(uses.is_some() != step["run"].is_string(), "{name}: {step}");
                if let Some(uses) = uses {
                    let version = uses.split_once('@').map(|(_, v)| v).unwrap_or("");
                    assert!(
                        version == "stable"
                            || (version.starts_with('v') && version[1..].parse::<u32>().is_ok()),
                        "{name}: {uses} pinned to a major version"
                    );
                }
                for word in step["run"].as_str().unwrap_or("").split_whitespace() {
                    if word.starts_with("scripts/") || word.starts_with(".ci/") {
                        assert!(common::repo_root().join(word).is_file(), "{name}: {word}");
                    }
                }
            }
        }
    }
}

/// The release builds exactly the targets the action downloads, packs them with the script the
/// tests above install from, and attaches SHA256SUMS.
#[test]
fn the_release_builds_every_asset_the_action_downloads() {
    let release = yaml(".github/workflows/release.yml");
    let tags = release["on"]["push"]["tags"].as_array().unwrap();
    assert_eq!(tags, &[Value::from("v*")]);
    let built: BTreeSet<String> = release["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["target"].as_str().unwrap().to_owned())
        .collect();
    let downloaded: BTreeSet<String> = install_functions(
        "for r in Linux/X64 Linux/ARM64 macOS/X64 macOS/ARM64; do dwp_target ${r%/*} ${r#*/}; done",
    )
    .lines()
    .map(str::to_owned)
    .collect();
    assert_eq!(built, downloaded);
    let text =
        std::fs::read_to_string(common::repo_root().join(".github/workflows/release.yml")).unwrap();
    assert!(
        text.contains(
            "bash scripts/release/pack.sh \"$TARGET\" \"target/$TARGET/release/dwp\" dist"
        )
    );
    assert!(text.contains("bash scripts/release/checksums.sh dist"));
    assert!(text.contains("dist/SHA256SUMS"));
}

/// The scheduled fuzz workflow runs every target of fuzz/Cargo.toml through .ci/fuzz, one job
/// each, for longer than .ci/run's 30 seconds.
#[test]
fn the_fuzz_workflow_runs_every_fuzz_target() {
    let fuzz = yaml(".github/workflows/fuzz.yml");
    assert!(fuzz["on"]["schedule"][0]["cron"].is_string());
    assert!(fuzz["on"].get("workflow_dispatch").is_some());
    let job = &fuzz["jobs"]["fuzz"];
    let matrix: BTreeSet<&str> = job["strategy"]["matrix"]["target"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let manifest = std::fs::read_to_string(common::repo_root().join("fuzz/Cargo.toml")).unwrap();
    let targets: BTreeSet<&str> = manifest
        .split("[[bin]]")
        .skip(1)
        .map(|bin| bin.split('"').nth(1).unwrap())
        .collect();
    assert_eq!(matrix, targets);
    let run = job["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["run"] == "bash .ci/fuzz")
        .expect("a step running .ci/fuzz");
    assert_eq!(run["env"]["FUZZ_TARGETS"], "${{ matrix.target }}");
    assert!(
        run["env"]["FUZZ_SECONDS"]
            .as_str()
            .unwrap()
            .contains("3600")
    );
}

/// The Dockerfile builds with `--locked` in a musl stage and ships the binary alone from
/// scratch. Structure only: `docker build` cannot run on this machine (no daemon, and no
/// registry to pull `rust:1-alpine` from), so the image itself is untested here.
#[test]
fn the_container_image_is_the_static_binary_alone() {
    let dockerfile = std::fs::read_to_string(common::repo_root().join("Dockerfile")).unwrap();
    let instructions: Vec<&str> = dockerfile
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    let froms: Vec<&&str> = instructions
        .iter()
        .filter(|l| l.starts_with("FROM "))
        .collect();
    assert_eq!(froms.len(), 2, "multi-stage");
    assert!(froms[0].contains("alpine"), "a musl build stage");
    assert_eq!(*froms[1], "FROM scratch");
    assert!(dockerfile.contains("cargo build --release --locked --bin dwp"));
    assert!(dockerfile.contains("COPY --from=build /src/target/release/dwp /dwp"));
    assert!(dockerfile.contains("ENTRYPOINT [\"/dwp\"]"));
    let ignored = std::fs::read_to_string(common::repo_root().join(".dockerignore")).unwrap();
    for entry in ["target", "fuzz/corpus", "fuzz/artifacts", ".git"] {
        assert!(
            ignored.lines().any(|l| l == entry),
            ".dockerignore: {entry}"
        );
    }
}

/// The workflow docs/ci.md shows uses the action with inputs it declares, with the permission
/// the upload needs; the targets docs/ci.md lists are the ones the release builds.
#[test]
fn the_documented_action_workflow_passes_inputs_the_action_declares() {
    let doc = std::fs::read_to_string(common::repo_root().join("docs/ci.md")).unwrap();
    let start = doc
        .find("```yaml\n# .github/workflows/plans.yml")
        .expect("the workflow using the action");
    let body = &doc[start + "```yaml\n".len()..];
    let workflow: Value = serde_saphyr::from_str(&body[..body.find("```").unwrap()]).unwrap();
    assert_eq!(workflow["permissions"]["security-events"], "write");
    let step = workflow["jobs"]["verify"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("OWNER/dwp@"))
        })
        .expect("a step using the action");
    let action = yaml("action.yml");
    for input in step["with"].as_object().unwrap().keys() {
        assert!(action["inputs"].get(input).is_some(), "input {input}");
    }
    let release = yaml(".github/workflows/release.yml");
    for built in release["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap()
    {
        let target = built["target"].as_str().unwrap();
        assert!(
            doc.contains(&format!("`{target}`")),
            "docs/ci.md lists {target}"
        );
    }
}
