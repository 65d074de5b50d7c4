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

use crate::error::{Error, Result};
use std::ffi::OsString;

/// Passed when set: enough to find programs, speak the locale and find a scratch folder.
pub const DEFAULT_PASSED: &[&str] = &["PATH", "LANG", "LC_ALL", "TMPDIR"];

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
            .copied()
            .chain(pass.iter().map(String::as_str))
            .collect();
        names.sort_unstable();
        names.dedup();
        let passed: Vec<(String, OsString)> = names
            .into_iter()
            .filter_map(|name| std::env::var_os(name).map(|value| (name.to_owned(), value)))
            .collect();
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
