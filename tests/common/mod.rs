//! Helpers shared by the integration tests that drive the real binary: the one home of what
//! more than one test module needs (each `tests/<area>/main.rs` declares it once).
//!
//! - Running `dwp`: [`dwp()`] starts a [`Dwp`] builder at the test clock ([`NOW`], through
//!   `DWP_TEST_NOW`) with `HOME` removed; [`Dwp::at`], [`Dwp::in_dir`], [`Dwp::env`],
//!   [`Dwp::stdin`], [`Dwp::timeout`], [`Dwp::inherit_home`], [`Dwp::fixed_width`] and
//!   [`Dwp::without_clock`] change that, and [`Dwp::on_plan`] puts a plan folder after the
//!   subcommand. It ends in [`Dwp::run`] (a lossy [`Run`]), [`Dwp::run_utf8`] (a [`Run`] that
//!   must be UTF-8 and must exit), [`Dwp::output`] (the raw `Output`), [`Dwp::assert`]
//!   (`assert_cmd`'s assertions), [`Dwp::command`] (a `std::process::Command` to spawn) or
//!   [`Dwp::wrapped`] (the same run under another program, such as `strace`; see
//!   [`strace_available`]). [`dwp_in`] is the short form of a run in a folder.
//! - [`Run`]: the exit code, stdout and stderr of one process, with [`Run::json`] and
//!   [`Run::message`].
//! - Refusals: [`refused`] (a refused command that changed no entry of the plan:
//!   [`Run::assert_refusal`] and [`writing_nothing`]), [`Run::assert_place`] and
//!   [`Run::assert_hinted`].
//! - Plans: [`Plan`], a plan folder written by a `SynthPlan` in its own temporary folder, with
//!   readers and editors of its files, [`Plan::dwp`] and [`Plan::verify_codes`]; [`written`] and
//!   [`publishable`] write one; [`read_json`], [`state_of`], [`edit_state`] and [`task_of`] read
//!   and edit a state by path; [`copy_plan`] and [`copy_tree`] copy a folder.
//! - The repository: [`repo_root`], the conformance fixtures ([`fixture`], [`fixture_plans`],
//!   [`fixture_copy`]), [`files_under`], [`rust_files`], [`fuzz_dir`] and [`readme_table`].
//! - Proving nothing was written: [`snapshot`] (every file's bytes), [`tree_digest`] (every
//!   entry, folders and symlinks included, as a digest) and [`changed_paths`] (what differs
//!   between two of them).
//! - Reports: [`verify_codes`], the sorted finding codes of a `dwp verify --json` document;
//!   [`field_strs`] and [`owned_strs`] read a JSON array's strings.
//! - Documented command lines: [`examples`] reads and runs them (help, README, docs).
//! - Editing and hashing: [`edit`], a replacement in a file that must hold the text replaced;
//!   [`sha256_hex`].

#![allow(dead_code)]

pub mod examples;
pub mod hints;

use dwp::plan::model::PlanFormat;
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

/// The repository the tests run from (the crate's folder): its fixtures, documents and sources.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

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
        .hints_checked()
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
        .hints_checked()
    }

    /// This run, once every `dwp ...` command its hints name is one dwp accepts as printed
    /// ([`hints::check`]): every state any test produces walks the hints printed there.
    fn hints_checked(self) -> Run {
        hints::check(&self.stdout, &self.stderr);
        self
    }

    /// stdout as the one JSON document of `--json`, which must match `dwp schema output`
    /// ([`assert_output_schema`]): every document a test reads is held to the schema.
    pub fn json(&self) -> Value {
        let document = serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON document ({e}); exit {}\nstdout: {}\nstderr: {}",
                self.code, self.stdout, self.stderr
            )
        });
        assert_output_schema(&document);
        document
    }

    /// The payload of [`Run::json`]'s document: the value under its command's key (`verify`,
    /// `lock_status`, `finalize_check`: the command's words joined by `_`, flags' dashes dropped).
    pub fn payload(&self) -> Value {
        payload(&self.json()).clone()
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

/// The output schema (`schemas/output.schema.json`), compiled once per test binary.
pub fn output_validator() -> &'static jsonschema::Validator {
    static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let schema: Value = serde_json::from_str(dwp::plan::schemas::OUTPUT.text).unwrap();
        jsonschema::draft202012::new(&schema).expect("the output schema compiles")
    })
}

/// `document` matches `dwp schema output`, its payload included: a field no schema describes
/// fails the test that printed it.
pub fn assert_output_schema(document: &Value) {
    let problems: Vec<String> = output_validator()
        .iter_errors(document)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        problems.is_empty(),
        "the document does not match schemas/output.schema.json: {problems:#?}\n{document:#}"
    );
}

/// `text` as one `--json` document, held to `dwp schema output` ([`assert_output_schema`]).
pub fn document(text: &str) -> Value {
    let document = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}):\n{text}"));
    assert_output_schema(&document);
    document
}

/// The payload of a `--json` document: the value under its command's key (`verify`,
/// `lock_status`, `finalize_check`: the command's words joined by `_`, flags' dashes dropped).
pub fn payload(document: &Value) -> &Value {
    let command = document["command"].as_str().unwrap_or_default();
    let key: Vec<&str> = command
        .split_whitespace()
        .map(|word| word.trim_start_matches('-'))
        .collect();
    &document[key.join("_").as_str()]
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

    /// `COMMAND PLAN ARGS...` for `command` = `[COMMAND, ARGS...]`: the plan folder in second
    /// place, where every command on one plan takes it.
    pub fn on_plan(&mut self, plan: impl AsRef<Path>, command: &[&str]) -> &mut Dwp {
        self.arg(command[0]).arg(plan.as_ref()).args(&command[1..])
    }

    /// No `COLUMNS` or `LINES` from the caller: output laid out for no terminal, whatever runs
    /// the tests.
    pub fn fixed_width(&mut self) -> &mut Dwp {
        self.env_remove("COLUMNS").env_remove("LINES")
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
        // Stage timings go to stderr: only a test that asks for them gets them; colour forced
        // by the caller's environment would paint what the tests read.
        command
            .env_remove("DWP_PROFILE")
            .env_remove("CLICOLOR_FORCE");
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

/// A synthetic plan written in a temporary folder of its own: the folder, and the plan folder in
/// it.
pub fn written(synth: SynthPlan) -> (TempDir, PathBuf) {
    let root = tempfile::tempdir().expect("temp dir");
    let dir = synth.write(root.path()).expect("write synthetic plan");
    (root, dir)
}

/// `name`, `tasks` tasks, ready to publish (every task completed, the reviews written), written
/// in `root` in `format`: the plan folder.
pub fn publishable(root: &Path, name: &str, tasks: usize, format: PlanFormat) -> PathBuf {
    SynthPlan::new(name, tasks)
        .format(format)
        .ready_to_publish()
        .write(root)
        .expect("write synthetic plan")
}

impl Plan {
    pub fn from_synth(synth: SynthPlan) -> Plan {
        let (root, dir) = written(synth);
        Plan { _root: root, dir }
    }

    /// [`publishable`] in a temporary folder of its own.
    pub fn publishable(name: &str, tasks: usize, format: PlanFormat) -> Plan {
        let root = tempfile::tempdir().expect("temp dir");
        let dir = publishable(root.path(), name, tasks, format);
        Plan { _root: root, dir }
    }

    /// `dwp COMMAND PLAN ARGS...` for `command` = `[COMMAND, ARGS...]`, at the test clock with no
    /// home directory; the output must be UTF-8.
    pub fn dwp(&self, command: &[&str]) -> Run {
        dwp().on_plan(&self.dir, command).run_utf8()
    }

    /// The sorted finding codes of `dwp --json verify PLAN EXTRA...` at the test clock.
    pub fn verify_codes(&self, extra: &[&str]) -> Vec<String> {
        let run = dwp()
            .args(["--json", "verify"])
            .arg(&self.dir)
            .args(extra)
            .run_utf8();
        verify_codes(&run.json())
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
        edit_state(&self.dir, edit);
    }
}

/// The JSON document at `path`.
pub fn read_json(path: &Path) -> Value {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// The state.json of the plan folder `plan`.
pub fn state_of(plan: &Path) -> Value {
    read_json(&plan.join("state.json"))
}

/// Rewrite the state.json of the plan folder `plan` by hand, in the bytes dwp writes
/// (pretty-printed, a final newline).
pub fn edit_state(plan: &Path, edit: impl FnOnce(&mut Value)) {
    let mut state = state_of(plan);
    edit(&mut state);
    fs::write(plan.join("state.json"), dwp::store::json_file_bytes(&state))
        .expect("write state.json");
}

/// The task `id` of a state (found by its id).
pub fn task_of(state: &Value, id: u64) -> &Value {
    state["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("no task {id} in state"))
}

/// `conformance-fixtures/PATH`: a fixture's case folder (`CASE`) or its plan (`CASE/PLAN_x`).
pub fn fixture(path: &str) -> PathBuf {
    repo_root().join("conformance-fixtures").join(path)
}

/// Every plan folder of the conformance fixtures (`conformance-fixtures/CASE/PLAN_x`), by case
/// and plan name.
pub fn fixture_plans() -> Vec<PathBuf> {
    let mut plans = Vec::new();
    for case in fs::read_dir(repo_root().join("conformance-fixtures")).unwrap() {
        let case = case.unwrap().path();
        let Ok(entries) = fs::read_dir(&case) else {
            continue;
        };
        plans.extend(entries.map(|e| e.unwrap().path()).filter(|p| p.is_dir()));
    }
    plans.sort();
    plans
}

/// A copy of the plan of the conformance fixture `case` in a temporary folder: (the folder, the
/// plan's name).
pub fn fixture_copy(case: &str) -> (TempDir, String) {
    let root = tempfile::tempdir().unwrap();
    let plan = fs::read_dir(fixture(case))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .expect("the fixture's plan folder");
    let plan_name = plan.file_name().unwrap().to_string_lossy().into_owned();
    copy_plan(&plan, &root.path().join(&plan_name));
    (root, plan_name)
}

/// [`fixture_copy`] as (the temporary folder, the plan's path).
pub fn fixture_plan(case: &str) -> (TempDir, PathBuf) {
    let (root, name) = fixture_copy(case);
    let plan = root.path().join(name);
    (root, plan)
}

/// A record plan's live journal, each line read as one JSON event.
pub fn journal_events(plan: &Path) -> Vec<Value> {
    let text = fs::read_to_string(plan.join("journal.ndjson")).unwrap();
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
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
// Refusals
// ---------------------------------------------------------------------------------------------

impl Run {
    /// The message is followed by its hint, the second line of stderr: `  hint: ...`.
    pub fn assert_hinted(&self) {
        assert!(
            self.stderr
                .lines()
                .nth(1)
                .is_some_and(|l| l.starts_with("  hint: ")),
            "the message should be followed by its hint:\n{}",
            self.stderr
        );
    }

    /// The message ends with `(… PLACE)`: the place names the file and JSON path, or the flag.
    pub fn assert_place(&self, place: &str) {
        let message = self.message();
        assert!(
            message.ends_with(&format!("{place})")),
            "message should name the place `{place}`:\n{}",
            self.stderr
        );
    }

    /// A refusal as every command prints one: exit `code`; on stderr the one-line message
    /// `dwp COMMAND: WHAT (PLACE)` (a usage error, exit 2, names no place) and every one of
    /// `words`; nothing on stdout.
    pub fn assert_refusal(&self, command: &str, code: i32, words: &[&str]) {
        assert_eq!(
            self.code, code,
            "dwp {command} should exit {code}\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        assert!(
            self.message().starts_with(&format!("dwp {command}: ")),
            "stderr should start with `dwp {command}: `:\n{}",
            self.stderr
        );
        if code != 2 {
            assert!(
                self.message().ends_with(')'),
                "the message should end with its (place):\n{}",
                self.stderr
            );
        }
        self.assert_stderr_says(words);
        assert!(
            self.stdout.is_empty(),
            "a refusal prints nothing on stdout:\n{}",
            self.stdout
        );
    }
}

/// The run of `act`, which must leave every entry under `dir` as it was (files, folders and
/// symlinks: [`tree_digest`]), so no lock or temporary file behind either; `what` names the run
/// in a failure.
pub fn writing_nothing(dir: &Path, what: &str, act: impl FnOnce() -> Run) -> Run {
    let before = tree_digest(dir);
    let run = act();
    let changed = changed_paths(&before, &tree_digest(dir));
    assert!(
        changed.is_empty(),
        "{what} changed {changed:?} in {}\nstdout:\n{}\nstderr:\n{}",
        dir.display(),
        run.stdout,
        run.stderr
    );
    run
}

/// The run of `act`, a `dwp COMMAND` on the plan folder `plan` that must be refused
/// ([`Run::assert_refusal`]) with not one entry of the plan changed ([`writing_nothing`]).
pub fn refused(
    plan: &Path,
    command: &str,
    code: i32,
    words: &[&str],
    act: impl FnOnce() -> Run,
) -> Run {
    let run = writing_nothing(plan, &format!("a refused dwp {command}"), act);
    run.assert_refusal(command, code, words);
    run
}

// ---------------------------------------------------------------------------------------------
// Reports and edits
// ---------------------------------------------------------------------------------------------

/// The sorted finding codes of a `dwp verify --json` document or its payload (every plan).
pub fn verify_codes(document: &Value) -> Vec<String> {
    let report = match document.get("command") {
        Some(_) => payload(document),
        None => document,
    };
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

/// The string field `key` of every object of the JSON array `items`, in order.
pub fn field_strs<'a>(items: &'a Value, key: &str) -> Vec<&'a str> {
    items
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {items:#}"))
        .iter()
        .map(|item| {
            item[key]
                .as_str()
                .unwrap_or_else(|| panic!("no string `{key}` in {item:#}"))
        })
        .collect()
}

/// The strings of the JSON array `items`, in order.
pub fn owned_strs(items: &Value) -> Vec<String> {
    items
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {items:#}"))
        .iter()
        .map(|item| item.as_str().expect("a string").to_owned())
        .collect()
}

/// The body rows, as written, of the first table whose header row starts with `header`
/// (`| code`) after the heading `heading` (`## Exit codes`) of README.md.
pub fn readme_table(heading: &str, header: &str) -> Vec<String> {
    let readme = fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    let section = readme
        .split(heading)
        .nth(1)
        .unwrap_or_else(|| panic!("no `{heading}` section in README.md"));
    section
        .lines()
        .skip_while(|l| !l.starts_with(header))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(str::to_owned)
        .collect()
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

/// Every regular file under `dir`, recursively, sorted; none when `dir` does not exist.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return files;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => files.extend(files_under(&path)),
            Ok(t) if t.is_file() => files.push(path),
            _ => {}
        }
    }
    files.sort();
    files
}

/// Every `.rs` file under `dir`, recursively (the source checks of `tests/safety/layers.rs`,
/// `tests/safety/store_only.rs` and `tests/interface/flag_names.rs`).
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    assert!(dir.is_dir(), "{} is not a folder", dir.display());
    out.extend(
        files_under(dir)
            .into_iter()
            .filter(|path| path.extension().is_some_and(|e| e == "rs")),
    );
}

/// The fuzz corpora and their kept crashes, `fuzz/`.
pub fn fuzz_dir() -> PathBuf {
    repo_root().join("fuzz")
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

/// A folder holding one executable script `name` (`#!/bin/sh` then `body`), and `PATH` with
/// that folder first: a tool (`cargo`, say) that does what a test needs, run by name.
pub fn tool_on_path(name: &str, body: &str) -> (TempDir, String) {
    let tools = tempfile::tempdir().expect("temp dir");
    let tool = tools.path().join(name);
    fs::write(&tool, format!("#!/bin/sh\n{body}\n")).expect("write the tool");
    let mut mode = fs::metadata(&tool).expect("the tool").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut mode, 0o755);
    fs::set_permissions(&tool, mode).expect("make the tool executable");
    let path = format!(
        "{}:{}",
        tools.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (tools, path)
}

/// The first backticked `dwp ...` command of the `hint:` line `run` printed on stderr, as text.
pub fn hint_command(run: &Run) -> String {
    let hint = run
        .stderr
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("hint: "))
        .unwrap_or_else(|| panic!("no hint: {run:?}"));
    hints::commands_in(hint)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no `dwp ...` command in the hint: {hint}"))
}

/// Run `line`, a `dwp ...` line as dwp printed it, through `sh -c` in `dir` with this build's
/// `dwp` first on `PATH` and the test clock; `--by NAME` is filled in as a user would (`Ada`),
/// nothing else is changed.
pub fn run_printed(line: &str, dir: &Path) -> Run {
    let bin = assert_cmd::cargo::cargo_bin("dwp");
    let bin_dir = bin.parent().expect("the binary's folder");
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .expect("PATH");
    let line = line.replace("--by NAME", "--by Ada");
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

/// Whether `strace` runs here. A test that needs it and finds none is skipped (`what` names it
/// on stderr), except under CI, where it fails: CI installs strace (`.ci/run`).
pub fn strace_available(what: &str) -> bool {
    let found = std::process::Command::new("strace")
        .arg("-V")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "strace is not on PATH, and CI requires {what} to run: install strace \
             (apt-get install strace)"
        );
        eprintln!("note: strace is not on PATH; skipping {what}");
    }
    found
}

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
