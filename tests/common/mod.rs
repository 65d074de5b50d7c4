//! Helpers shared by the integration tests that drive the real binary.
//!
//! - Running `dwp`: [`dwp()`] starts a [`Dwp`] builder at the test clock ([`NOW`], through
//!   `DWP_TEST_NOW`) with `HOME` removed; [`Dwp::at`], [`Dwp::in_dir`], [`Dwp::env`],
//!   [`Dwp::stdin`], [`Dwp::timeout`], [`Dwp::inherit_home`] and [`Dwp::without_clock`] change
//!   that. It ends in [`Dwp::run`] (a lossy [`Run`]), [`Dwp::run_utf8`] (a [`Run`] that must be
//!   UTF-8 and must exit), [`Dwp::output`] (the raw `Output`), [`Dwp::assert`] (`assert_cmd`'s
//!   assertions), [`Dwp::command`] (a
//!   `std::process::Command` to spawn) or [`Dwp::wrapped`] (the same run under another program,
//!   such as `strace`). [`dwp_in`] is the short form of a run in a folder.
//! - [`Run`]: the exit code, stdout and stderr of one process, with [`Run::json`] and
//!   [`Run::message`].
//! - Plans: [`Plan`], a plan folder written by a `SynthPlan` in its own temporary folder, with
//!   readers and editors of its files; [`copy_plan`] and [`copy_tree`] copy a folder.
//! - Proving nothing was written: [`snapshot`] (every file's bytes), [`tree_digest`] (every
//!   entry, folders and symlinks included, as a digest) and [`changed_paths`] (what differs
//!   between two of them).
//! - Reports: [`verify_codes`], the sorted finding codes of a `dwp verify --json` document.
//! - Documented command lines: [`examples`] reads and runs them (help, README, docs).
//! - Editing and hashing: [`edit`], a replacement in a file that must hold the text replaced;
//!   [`sha256_hex`].

#![allow(dead_code)]

pub mod examples;

use dwp::synth::SynthPlan;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;
use tempfile::TempDir;

/// The clock every test runs at (the `updated_at` of the example plan).
pub const NOW: &str = "2026-06-09T16:42:10Z";

// ---------------------------------------------------------------------------------------------
// Running dwp
// ---------------------------------------------------------------------------------------------

/// What one `dwp` process did.
#[derive(Debug)]
pub struct Run {
    /// The exit code; -1 when the process was killed by a signal.
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The output read lossily; a process killed by a signal has the code -1.
    pub fn lossy(output: &Output) -> Run {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// The output, which must be UTF-8 from a process that exited (not killed by a signal).
    pub fn utf8(output: Output) -> Run {
        Run {
            code: output
                .status
                .code()
                .expect("exit code (not killed by a signal)"),
            stdout: String::from_utf8(output.stdout).expect("utf-8 stdout"),
            stderr: String::from_utf8(output.stderr).expect("utf-8 stderr"),
        }
    }

    /// stdout as the one JSON document of `--json`.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON document ({e}); exit {}\nstdout: {}\nstderr: {}",
                self.code, self.stdout, self.stderr
            )
        })
    }

    /// The first line of stderr: `dwp <command>: WHAT (PLACE)`.
    pub fn message(&self) -> &str {
        self.stderr.lines().next().unwrap_or("")
    }

    /// Every word in stderr (a refusal's message and hint say what they must).
    pub fn assert_stderr_says(&self, words: &[&str]) {
        for word in words {
            assert!(
                self.stderr.contains(word),
                "expected {word:?} in:\n{}",
                self.stderr
            );
        }
    }
}

/// A `dwp` invocation being built; see [`dwp()`].
pub struct Dwp {
    args: Vec<OsString>,
    clock: Option<String>,
    keep_home: bool,
    envs: Vec<(OsString, Option<OsString>)>,
    dir: Option<PathBuf>,
    stdin: Option<Vec<u8>>,
    timeout: Option<Duration>,
}

/// `dwp` at the test clock ([`NOW`]), with `HOME` removed, in the test's working directory.
pub fn dwp() -> Dwp {
    Dwp {
        args: Vec::new(),
        clock: Some(NOW.to_owned()),
        keep_home: false,
        envs: Vec::new(),
        dir: None,
        stdin: None,
        timeout: None,
    }
}

/// `dwp ARGS` in `dir`, at the test clock, with no home directory (read lossily).
pub fn dwp_in(dir: &Path, args: &[&str]) -> Run {
    dwp().in_dir(dir).args(args).run()
}

impl Dwp {
    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Dwp {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I, S>(&mut self, args: I) -> &mut Dwp
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// The clock `now` instead of [`NOW`].
    pub fn at(&mut self, now: &str) -> &mut Dwp {
        self.clock = Some(now.to_owned());
        self
    }

    /// No `DWP_TEST_NOW` set by the test (the caller's environment decides).
    pub fn without_clock(&mut self) -> &mut Dwp {
        self.clock = None;
        self
    }

    /// Keep the caller's `HOME` instead of removing it.
    pub fn inherit_home(&mut self) -> &mut Dwp {
        self.keep_home = true;
        self
    }

    /// `HOME` set to `home`.
    pub fn home(&mut self, home: impl AsRef<OsStr>) -> &mut Dwp {
        self.env("HOME", home)
    }

    /// One more variable, set after the clock and `HOME`.
    pub fn env(&mut self, name: &str, value: impl AsRef<OsStr>) -> &mut Dwp {
        self.envs
            .push((name.into(), Some(value.as_ref().to_owned())));
        self
    }

    /// One variable removed, after the clock and `HOME`.
    pub fn env_remove(&mut self, name: &str) -> &mut Dwp {
        self.envs.push((name.into(), None));
        self
    }

    /// Run in `dir`.
    pub fn in_dir(&mut self, dir: impl AsRef<Path>) -> &mut Dwp {
        self.dir = Some(dir.as_ref().to_owned());
        self
    }

    /// Write `text` to stdin (for [`Dwp::run`], [`Dwp::run_utf8`] and [`Dwp::output`]).
    pub fn stdin(&mut self, text: impl Into<Vec<u8>>) -> &mut Dwp {
        self.stdin = Some(text.into());
        self
    }

    /// Kill the process after `limit` (for [`Dwp::run`], [`Dwp::run_utf8`] and
    /// [`Dwp::output`]); a killed process has no exit code.
    pub fn timeout(&mut self, limit: Duration) -> &mut Dwp {
        self.timeout = Some(limit);
        self
    }

    /// The environment and folder of the run on `command`.
    fn configure(&self, command: &mut std::process::Command) {
        if let Some(now) = &self.clock {
            command.env("DWP_TEST_NOW", now);
        }
        if !self.keep_home {
            command.env_remove("HOME");
        }
        // Stage timings go to stderr: only a test that asks for them gets them.
        command.env_remove("DWP_PROFILE");
        for (name, value) in &self.envs {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
        if let Some(dir) = &self.dir {
            command.current_dir(dir);
        }
    }

    /// The run as a `std::process::Command` (stdin and timeout are the caller's).
    pub fn command(&self) -> std::process::Command {
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("dwp"));
        command.args(&self.args);
        self.configure(&mut command);
        command
    }

    /// `PROGRAM PROGRAM_ARGS... dwp ARGS...` with the run's environment and folder (a run under
    /// `strace`, say).
    pub fn wrapped<I, S>(&self, program: &str, program_args: I) -> std::process::Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = std::process::Command::new(program);
        command
            .args(program_args)
            .arg(assert_cmd::cargo::cargo_bin("dwp"))
            .args(&self.args);
        self.configure(&mut command);
        command
    }

    /// The run as an `assert_cmd` command, with the stdin and timeout given.
    fn assert_cmd(&self) -> assert_cmd::Command {
        let mut command = assert_cmd::Command::from_std(self.command());
        if let Some(stdin) = &self.stdin {
            command.write_stdin(stdin.clone());
        }
        if let Some(limit) = self.timeout {
            command.timeout(limit);
        }
        command
    }

    /// Run to the end with the stdin and timeout given.
    pub fn output(&self) -> Output {
        self.assert_cmd().output().expect("run dwp")
    }

    /// Run to the end, for `assert_cmd`'s assertions.
    pub fn assert(&self) -> assert_cmd::assert::Assert {
        self.assert_cmd().assert()
    }

    /// Run; the output read lossily.
    pub fn run(&self) -> Run {
        Run::lossy(&self.output())
    }

    /// Run; the output must be UTF-8 and the process must exit.
    pub fn run_utf8(&self) -> Run {
        Run::utf8(self.output())
    }
}

// ---------------------------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------------------------

/// A synthetic plan folder in its own temporary directory.
pub struct Plan {
    _root: TempDir,
    pub dir: PathBuf,
}

impl Plan {
    pub fn from_synth(synth: SynthPlan) -> Plan {
        let root = tempfile::tempdir().expect("temp dir");
        let dir = synth.write(root.path()).expect("write synthetic plan");
        Plan { _root: root, dir }
    }

    /// The temporary folder holding the plan folder.
    pub fn root(&self) -> &Path {
        self.dir.parent().expect("the plan folder has a parent")
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    pub fn read(&self, name: &str) -> String {
        fs::read_to_string(self.path(name)).unwrap_or_else(|e| panic!("read {name}: {e}"))
    }

    pub fn write(&self, name: &str, text: &str) {
        fs::write(self.path(name), text).unwrap_or_else(|e| panic!("write {name}: {e}"));
    }

    /// Rewrite the file `name` by hand (fixture set-up, not through dwp).
    pub fn edit(&self, name: &str, edit: impl FnOnce(String) -> String) {
        let text = self.read(name);
        self.write(name, &edit(text));
    }

    /// The JSON document `name`.
    pub fn json(&self, name: &str) -> Value {
        let bytes = fs::read(self.path(name)).unwrap_or_else(|e| panic!("read {name}: {e}"));
        serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{name} is not JSON: {e}"))
    }

    pub fn state(&self) -> Value {
        self.json("state.json")
    }

    /// Rewrite state.json by hand, pretty-printed with a final newline.
    pub fn edit_state(&self, edit: impl FnOnce(&mut Value)) {
        let mut state = self.state();
        edit(&mut state);
        let mut bytes = serde_json::to_vec_pretty(&state).expect("serialize");
        bytes.push(b'\n');
        fs::write(self.path("state.json"), bytes).expect("write state.json");
    }
}

/// Copy a folder: files and folders, hidden ones included.
pub fn copy_plan(from: &Path, to: &Path) {
    copy_tree(from, to, &[]);
}

/// Copy a folder, leaving out every entry named in `skip` (at any depth).
pub fn copy_tree(from: &Path, to: &Path, skip: &[&str]) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if skip.iter().any(|s| name == *s) {
            continue;
        }
        let target = to.join(&name);
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target, skip);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Nothing written
// ---------------------------------------------------------------------------------------------

/// Every file under `dir` (recursively) with its bytes, keyed by its path below `dir`; an
/// absent `dir` is empty.
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

/// Every entry under `dir`, keyed by its path below `dir`, with a digest: a file's sha256, a
/// folder marker, a symlink's target (never followed), or the type of a special file (never
/// opened). Any change of content, type or name changes the map.
pub fn tree_digest(dir: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        for entry in fs::read_dir(dir).expect("readable dir") {
            let path = entry.expect("entry").path();
            let meta = fs::symlink_metadata(&path).expect("stat");
            let digest = if meta.file_type().is_symlink() {
                format!("-> {}", fs::read_link(&path).expect("readlink").display())
            } else if meta.is_dir() {
                walk(base, &path, out);
                "dir".to_owned()
            } else if meta.is_file() {
                format!("{:x}", Sha256::digest(fs::read(&path).expect("read")))
            } else {
                format!("special {:?}", meta.file_type())
            };
            out.insert(
                path.strip_prefix(base).expect("inside").to_path_buf(),
                digest,
            );
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The paths whose entry differs between two maps of a folder (added, removed or changed),
/// sorted.
pub fn changed_paths<V: PartialEq>(
    before: &BTreeMap<PathBuf, V>,
    after: &BTreeMap<PathBuf, V>,
) -> Vec<PathBuf> {
    before
        .keys()
        .chain(after.keys())
        .filter(|path| before.get(*path) != after.get(*path))
        .cloned()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Reports and edits
// ---------------------------------------------------------------------------------------------

/// The sorted finding codes of a `dwp verify --json` document (every plan of it).
pub fn verify_codes(report: &Value) -> Vec<String> {
    let mut codes: Vec<String> = report["plans"]
        .as_array()
        .unwrap_or_else(|| panic!("no plans in the report: {report:#}"))
        .iter()
        .flat_map(|p| {
            p["findings"]
                .as_array()
                .unwrap_or_else(|| panic!("no findings in the plan: {p:#}"))
                .iter()
        })
        .map(|f| f["code"].as_str().expect("a finding's code").to_owned())
        .collect();
    codes.sort();
    codes
}

/// The lowercase hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// Replace `from` by `to` in the file at `path`, asserting it was there.
pub fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} lacks {from:?}", path.display());
    std::fs::write(path, text.replace(from, to)).unwrap();
}

/// Every `.rs` file under `dir`, recursively (the source checks of `tests/safety/layers.rs` and
/// `tests/safety/store_only.rs`).
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Lines dwp prints for the user to run
// ---------------------------------------------------------------------------------------------

/// The `dwp ...` lines of a human output, in order (each printed on its own line, indented).
pub fn printed_dwp_lines(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("dwp "))
        .map(str::to_owned)
        .collect()
}

/// Run `line`, a `dwp ...` line as dwp printed it, through `sh -c` in `dir` with this build's
/// `dwp` first on `PATH` and the test clock; `NAME` and `EVIDENCE` are filled in as a user
/// would (`Ada`, `12 passed, 0 failed`), nothing else is changed.
pub fn run_printed(line: &str, dir: &Path) -> Run {
    let bin = assert_cmd::cargo::cargo_bin("dwp");
    let bin_dir = bin.parent().expect("the binary's folder");
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .expect("PATH");
    let line = line
        .replace("--by NAME", "--by Ada")
        .replace("EVIDENCE", "12 passed, 0 failed");
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(&line)
        .current_dir(dir)
        .env("PATH", path)
        .env("DWP_TEST_NOW", NOW)
        .env_remove("HOME")
        .output()
        .expect("run sh");
    Run::lossy(&output)
}

/// Fill task `id`'s Completion & Log in `file` (its task file, or a Lite README) as the agent
/// does before completing it: Status completed, a skills disposition and a documentation
/// decision.
pub fn fill_task_log(file: &Path, id: u64) {
    let text = fs::read_to_string(file).unwrap();
    let heading = format!("Task {id}: ");
    let start = text
        .lines()
        .scan(0, |at, line| {
            let here = *at;
            *at += line.len() + 1;
            Some((here, line))
        })
        .find(|(_, line)| line.starts_with('#') && line.contains(&heading))
        .map(|(at, _)| at)
        .unwrap_or_else(|| panic!("no heading of task {id} in {}", file.display()));
    let (head, record) = text.split_at(start);
    let record = record
        .replacen("Status: pending", "Status: completed", 1)
        .replacen("Skills disposition:\n", "Skills disposition: none\n", 1)
        .replacen(
            "Documentation decision:\n",
            "Documentation decision: no change needed\n",
            1,
        );
    fs::write(file, format!("{head}{record}")).unwrap();
}

/// A revised-criterion amendment of task 2 with user authority: the arguments after
/// `dwp amend PLAN`.
pub const AMEND_TASK_2: [&str; 18] = [
    "--task",
    "2",
    "--original",
    "o",
    "--observed",
    "x",
    "--disposition",
    "revised criterion",
    "--revised",
    "r",
    "--reason",
    "why",
    "--authority",
    "user",
    "--affected",
    "2",
    "--agent",
    "a2",
];

/// `git ARGS` in `dir`, with no user or system configuration and a fixed identity; its
/// trimmed stdout. A failing git fails the test.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}
