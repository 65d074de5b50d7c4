//! Helpers shared by the integration tests that drive the real binary: a run of `dwp` with the
//! test clock and no `$HOME`, and a snapshot of a folder's bytes to prove a refusal wrote
//! nothing.

#![allow(dead_code)]

use assert_cmd::Command;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The clock every test runs at (the `updated_at` of the example plan).
pub const NOW: &str = "2026-06-09T16:42:10Z";

/// What one `dwp` process did.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// stdout as the one JSON document of `--json`.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", self.stdout, self.stderr))
    }
}

/// `dwp ARGS` in `dir`, at the test clock, with no home directory.
pub fn dwp_in(dir: &Path, args: &[&str]) -> Run {
    let output = Command::cargo_bin("dwp")
        .expect("the dwp binary")
        .current_dir(dir)
        .env("DWP_TEST_NOW", NOW)
        .env_remove("HOME")
        .args(args)
        .output()
        .expect("run dwp");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Every file under `dir` (recursively) with its bytes.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(_) => {
                    let bytes = std::fs::read(&path).unwrap_or_default();
                    files.insert(path.strip_prefix(dir).unwrap().to_path_buf(), bytes);
                }
                Err(_) => {}
            }
        }
    }
    files
}

/// The sorted finding codes of a `dwp verify --json` document.
pub fn verify_codes(report: &serde_json::Value) -> Vec<String> {
    let mut codes: Vec<String> = report["plans"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|p| p["findings"].as_array().into_iter().flatten())
        .map(|f| f["code"].as_str().unwrap_or_default().to_owned())
        .collect();
    codes.sort();
    codes
}

/// Replace `from` by `to` in the file at `path`, asserting it was there.
pub fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} lacks {from:?}", path.display());
    std::fs::write(path, text.replace(from, to)).unwrap();
}
