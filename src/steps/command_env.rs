//! What a command `dwp loop prove` or `dwp run` runs may see of dwp's own environment: a minimal
//! set by default, plus the names the caller lists with `--pass-env NAME`.
//!
//! dwp runs where the harness runs, and the harness's environment holds its secrets (tokens, API
//! keys); the commands come from the configuration and the contract, and their output lands in
//! `.ak-loop/logs/` or a plan's `analysis_results/gates/`, which the worker and every reviewer read. So nothing is passed unless it is
//! in [`DEFAULT_PASSED`] or named. `HOME` is a private empty folder unless `--pass-env HOME`: a
//! real home holds credentials (`~/.netrc`, `~/.cargo/credentials.toml`, `~/.npmrc`); the
//! private one is 0700 and a killed run's is swept later (`store::private_home`). The names
//! passed (never the values) are recorded in each proof's `env`.
//!
//! A private `HOME` hides the toolchains a version manager installed under the real one
//! (rustup: "could not choose a version of cargo"), so [`TOOLCHAIN_HOMES`] are passed: each one
//! dwp's environment sets, or else its default folder under the real `HOME` when that exists.
//! Each names where a manager keeps its tools, and none is a secret:
//! - `RUSTUP_HOME` (`~/.rustup`): toolchains and the default-toolchain setting; rustup keeps no
//!   credentials.
//! - `CARGO_HOME` (`~/.cargo`): installed binaries, the registry and git caches (without them a
//!   gate downloads every crate again, or fails offline), and `config.toml`. It also holds
//!   `credentials.toml`, which cargo reads only to talk to a registry as the user (`publish`,
//!   `yank`, `owner`, `login`), never prints, and never reads to build or test; a gate that wants
//!   it can name its path without dwp's help (a private `HOME` is no sandbox), so passing the
//!   folder adds no reach, only the caches.
//! - `PYENV_ROOT` (`~/.pyenv`): pyenv's interpreters and shims.
//! - `NVM_DIR` (`~/.nvm`): nvm's node versions (the one in use is on `PATH` already).
//!
//! [`TOOLCHAIN_SELECTORS`] are passed when set: they pick a version or an environment
//! (`RUSTUP_TOOLCHAIN`, `PYENV_VERSION`, `VIRTUAL_ENV`), and hold a name or a path.

use crate::error::{Error, Result};
use std::ffi::OsString;

/// Passed when set: enough to find programs, speak the locale and find a scratch folder.
pub const DEFAULT_PASSED: &[&str] = &["PATH", "LANG", "LC_ALL", "TMPDIR"];

/// Where a version manager keeps its tools, and that folder's default name under `HOME`.
pub const TOOLCHAIN_HOMES: &[(&str, &str)] = &[
    ("RUSTUP_HOME", ".rustup"),
    ("CARGO_HOME", ".cargo"),
    ("PYENV_ROOT", ".pyenv"),
    ("NVM_DIR", ".nvm"),
];

/// Passed when set: which version or environment a manager picks.
pub const TOOLCHAIN_SELECTORS: &[&str] = &["RUSTUP_TOOLCHAIN", "PYENV_VERSION", "VIRTUAL_ENV"];

/// The environment of every command of one `dwp loop prove` (or of one `dwp run`).
pub struct CommandEnv {
    /// Name and value of each variable passed from dwp's environment, sorted by name.
    passed: Vec<(String, OsString)>,
    /// The private `HOME`, unless `HOME` itself is passed; removed when the run ends.
    home: Option<tempfile::TempDir>,
}

impl CommandEnv {
    /// The default set and `pass` (names checked), with the values dwp has now. A name that is
    /// not set is not passed, and not recorded.
    pub fn new(pass: &[String]) -> Result<CommandEnv> {
        for name in pass {
            check_name(name)?;
        }
        let mut names: Vec<&str> = DEFAULT_PASSED
            .iter()
            .chain(TOOLCHAIN_SELECTORS)
            .copied()
            .chain(pass.iter().map(String::as_str))
            .collect();
        names.sort_unstable();
        names.dedup();
        let mut passed: Vec<(String, OsString)> = names
            .into_iter()
            .filter_map(|name| std::env::var_os(name).map(|value| (name.to_owned(), value)))
            .collect();
        passed.extend(toolchain_homes(&passed));
        passed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let home = if passed.iter().any(|(name, _)| name == "HOME") {
            None
        } else {
            let dir = crate::store::private_home::create()
                .map_err(|e| Error::io("create a private HOME", &std::env::temp_dir(), e))?;
            Some(dir)
        };
        Ok(CommandEnv { passed, home })
    }

    /// Every variable the command gets, the private `HOME` included.
    pub fn vars(&self) -> Vec<(String, OsString)> {
        let mut vars = self.passed.clone();
        if let Some(home) = &self.home {
            vars.push(("HOME".into(), home.path().into()));
        }
        vars
    }

    /// The names passed from dwp's environment, for the proof (the private `HOME` is not one).
    pub fn names(&self) -> Vec<String> {
        self.passed.iter().map(|(name, _)| name.clone()).collect()
    }
}

/// Each of [`TOOLCHAIN_HOMES`] not already in `passed`: its value in dwp's environment, or else
/// its default folder under the real `HOME` when that folder exists.
fn toolchain_homes(passed: &[(String, OsString)]) -> Vec<(String, OsString)> {
    let real_home = std::env::var_os("HOME").filter(|home| !home.is_empty());
    TOOLCHAIN_HOMES
        .iter()
        .filter(|(name, _)| !passed.iter().any(|(passed, _)| passed == name))
        .filter_map(|&(name, folder)| {
            let value = std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .or_else(|| {
                    let default = std::path::Path::new(real_home.as_ref()?).join(folder);
                    default.is_dir().then(|| default.into_os_string())
                })?;
            Some((name.to_owned(), value))
        })
        .collect()
}

/// A variable name as `--pass-env` takes it: not empty, no `=` and no NUL.
fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.contains(['=', '\0']) {
        return Err(Error::Usage(format!(
            "--pass-env `{name}` is not a variable name (one name, no `=`)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_with_a_value_is_refused() {
        assert!(CommandEnv::new(&["TOKEN=x".into()]).is_err());
        assert!(CommandEnv::new(&[String::new()]).is_err());
    }

    #[test]
    fn home_is_private_unless_passed() {
        let env = CommandEnv::new(&[]).unwrap();
        let home = env.vars().into_iter().find(|(n, _)| n == "HOME").unwrap().1;
        assert_ne!(Some(&home), std::env::var_os("HOME").as_ref());
        assert!(!env.names().contains(&"HOME".to_owned()));
    }
}
