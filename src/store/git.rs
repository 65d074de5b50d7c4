//! The one way dwp runs git: reads of a repository whose owner dwp does not trust.
//!
//! `dwp loop dod --changed-from` reads a worker's worktree, and everything in it is the worker's,
//! `.git/config` and `.gitattributes` included. git can run programs named there: filter
//! drivers (`clean`, `smudge`, `process`), textconv and external diff drivers, the fsmonitor
//! hook, hooks (`post-index-change` fires when `git diff` refreshes the index), the pager, and,
//! through a lazy fetch of a partial clone, `core.sshCommand`, credential helpers, `core.askPass`
//! and remote helpers (`ext::`). A read must run none of them, so every git dwp starts:
//!
//! - gets a cleared environment: `PATH`, a private empty `HOME`, no system or global config or
//!   attributes, no terminal prompt, no optional index writes, no lazy fetch, no transport at all
//!   (`GIT_ALLOW_PROTOCOL` names none), and `LC_ALL=C` for stable messages;
//! - gets command-line configuration (`GIT_CONFIG_COUNT`), which wins over every file, includes
//!   (`include.path`, `includeIf`) too: no hooks, no fsmonitor, no attributes file, no pager, no
//!   askpass, no credential helper, no signature checks;
//! - gets every filter and diff driver the repository's configuration defines (found with `git
//!   config`, which follows includes) overridden to no command, and not required.
//!
//! What stays: a file a filter would normalize (Git LFS, say) that was touched but not changed
//! counts as changed, since its raw bytes are hashed. A process still rewriting the worktree's
//! configuration between the enumeration and the read could slip a new driver in: dwp judges a
//! worktree at rest (docs/DECISIONS.md, "Running git").

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The environment of every git dwp starts (besides `PATH` and `HOME`).
const ENV: &[(&str, &str)] = &[
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_ATTR_NOSYSTEM", "1"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_ASKPASS", ""),
    ("GIT_PAGER", "cat"),
    ("PAGER", "cat"),
    // No opportunistic index write, so no post-index-change hook either.
    ("GIT_OPTIONAL_LOCKS", "0"),
    // A partial clone's missing object is never fetched (git >= 2.44) ...
    ("GIT_NO_LAZY_FETCH", "1"),
    // ... and no transport is allowed for any fetch: no ssh, helper or credential prompt.
    ("GIT_ALLOW_PROTOCOL", "none"),
    ("LC_ALL", "C"),
];

/// Configuration that wins over the repository's own, includes included.
const OVERRIDES: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.attributesFile", "/dev/null"),
    ("core.pager", "cat"),
    ("core.askPass", ""),
    ("core.quotepath", "off"),
    // An empty value resets the list of helpers.
    ("credential.helper", ""),
    ("protocol.allow", "never"),
    ("diff.external", ""),
    ("log.showSignature", "false"),
    ("submodule.recurse", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
];

/// The driver keys that name a program, and what they are set to instead.
const DRIVER_KEYS: &[(&str, &[(&str, &str)])] = &[
    (
        "filter",
        &[
            ("clean", ""),
            ("smudge", ""),
            ("process", ""),
            // A required filter with no command would fail the read instead.
            ("required", "false"),
        ],
    ),
    ("diff", &[("command", ""), ("textconv", "")]),
];

/// The full hash of the commit `rev` names (`HEAD`, a branch, a tag, a short hash) in the
/// repository `dir` is in; nothing when there is no repository, git, or such a commit.
pub fn resolve_commit(dir: &Path, rev: &str) -> Option<String> {
    if rev.is_empty() || rev.starts_with('-') {
        return None;
    }
    let output = Git::open(dir).ok()?.verify_commit(rev).ok()?;
    let hash = String::from_utf8(output.stdout).ok()?.trim().to_owned();
    (output.status.success() && hash.len() == 40).then_some(hash)
}

/// The state of the work tree `dir` is in, as the public ledger fingerprints a task's start:
/// the commit `HEAD` names (`none` without a repository or a commit) and `git status
/// --porcelain`, trimmed (empty when clean, or when git cannot say). An untracked record-plan
/// lock directory (`.ledger.lock/`, the writer's own while it fingerprints) is no work and is
/// left out, where the ledger would count it and call every start dirty.
pub fn start_fingerprint(dir: &Path) -> (String, String) {
    let revision = resolve_commit(dir, "HEAD").unwrap_or_else(|| "none".to_owned());
    let status = Git::open(dir)
        .and_then(|git| git.output(["status", "--porcelain"]))
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .unwrap_or_default();
    let lines = status.lines().filter(|line| !is_lock_directory(line));
    let kept: Vec<&str> = lines.collect();
    (revision, kept.join("\n").trim().to_owned())
}

/// A porcelain line naming an untracked `.ledger.lock/` directory.
fn is_lock_directory(line: &str) -> bool {
    let Some(path) = line.strip_prefix("?? ") else {
        return false;
    };
    let path = path.trim_matches('"');
    path == ".ledger.lock/" || path.ends_with("/.ledger.lock/")
}

/// git in one repository folder, defanged (see the module documentation).
pub struct Git {
    dir: PathBuf,
    home: tempfile::TempDir,
    overrides: Vec<(OsString, OsString)>,
}

impl Git {
    /// Prepare git for `dir`: a private HOME, and the repository's drivers found and overridden.
    pub fn open(dir: &Path) -> std::io::Result<Git> {
        let mut git = Git {
            dir: dir.to_path_buf(),
            home: tempfile::tempdir()?,
            overrides: OVERRIDES
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v)))
                .collect(),
        };
        let drivers = git.configured_drivers()?;
        git.overrides.extend(drivers);
        Ok(git)
    }

    /// `git -C DIR` with the defanged environment and configuration; stdin closed.
    pub fn command(&self) -> Command {
        let mut command = Command::new("git");
        command.env_clear();
        if let Some(path) = std::env::var_os("PATH") {
            command.env("PATH", path);
        }
        command
            .env("HOME", self.home.path())
            .envs(ENV.iter().copied());
        command.env("GIT_CONFIG_COUNT", self.overrides.len().to_string());
        for (i, (key, value)) in self.overrides.iter().enumerate() {
            command
                .env(format!("GIT_CONFIG_KEY_{i}"), key)
                .env(format!("GIT_CONFIG_VALUE_{i}"), value);
        }
        command.arg("--no-pager").arg("-C").arg(&self.dir);
        command.stdin(Stdio::null());
        command
    }

    /// `git rev-parse --verify` of the commit `rev` names: its full hash on stdout, or failure.
    pub fn verify_commit(&self, rev: &str) -> std::io::Result<Output> {
        self.output([
            "rev-parse".to_owned(),
            "--verify".into(),
            "--quiet".into(),
            "--end-of-options".into(),
            format!("{rev}^{{commit}}"),
        ])
    }

    /// Run `git ARGS` and collect its output.
    pub fn output<I, S>(&self, args: I) -> std::io::Result<Output>
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.command()
            .args(args.into_iter().map(Into::into))
            .output()
    }

    /// Every `filter.X.*` and `diff.X.*` key that names a program, overridden. Reading the
    /// configuration runs nothing; `git config` follows includes as the read itself will.
    fn configured_drivers(&self) -> std::io::Result<Vec<(OsString, OsString)>> {
        let listed = self.output([
            "config",
            "--includes",
            "--name-only",
            "-z",
            "--get-regexp",
            r"^(filter|diff)\.",
        ])?;
        // Exit 1: no such key, nothing to override.
        if !listed.status.success() && listed.status.code() != Some(1) {
            return Err(std::io::Error::other(format!(
                "git config failed: {}",
                String::from_utf8_lossy(&listed.stderr).trim()
            )));
        }
        let mut overrides: Vec<(OsString, OsString)> = Vec::new();
        for key in listed.stdout.split(|b| *b == 0) {
            for pair in driver_overrides(key) {
                if !overrides.iter().any(|(k, _)| *k == pair.0) {
                    overrides.push(pair);
                }
            }
        }
        Ok(overrides)
    }
}

/// The overrides that defang the driver a configuration key belongs to (none for other keys).
fn driver_overrides(key: &[u8]) -> Vec<(OsString, OsString)> {
    let Some((section, driver)) = driver_of(key) else {
        return Vec::new();
    };
    DRIVER_KEYS
        .iter()
        .filter(|(name, _)| name.as_bytes() == section)
        .flat_map(|(_, keys)| keys.iter())
        .map(|(variable, value)| {
            let mut key = section.to_vec();
            key.push(b'.');
            key.extend_from_slice(driver);
            key.push(b'.');
            key.extend_from_slice(variable.as_bytes());
            (OsString::from_vec(key), OsString::from(value))
        })
        .collect()
}

/// `filter.X.clean` → `(filter, X)`; keys without a subsection (`diff.external`) → `None`.
/// Bytes, not text: a driver's name need not be UTF-8, and its override must match it exactly.
fn driver_of(key: &[u8]) -> Option<(&[u8], &[u8])> {
    let first = key.iter().position(|b| *b == b'.')?;
    let last = key.iter().rposition(|b| *b == b'.')?;
    (last > first + 1).then(|| (&key[..first], &key[first + 1..last]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_driver_is_the_subsection_dots_included() {
        let pair = |a: &'static str, b: &'static str| Some((a.as_bytes(), b.as_bytes()));
        assert_eq!(driver_of(b"filter.lfs.clean"), pair("filter", "lfs"));
        assert_eq!(driver_of(b"filter.a.b.process"), pair("filter", "a.b"));
        assert_eq!(driver_of(b"diff.external"), None);
        assert_eq!(driver_of(b""), None);
    }
}
