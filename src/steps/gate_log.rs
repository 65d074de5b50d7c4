//! Keeping a run dwp observed in the plan: its log under
//! `analysis_results/gates/`, and the observed gate record that points at it. `dwp run` and
//! `dwp update --gates-from` (a `dwp loop prove` run copied into the plan) both record through
//! [`record`], in the change they commit under the plan's lock; the log format, the summary and the evidence string are
//! `rules::observed`'s.

use crate::error::{Error, Result};
use crate::plan::LoadedPlan;
use crate::plan::model::Gate;
use crate::rules::observed::{self, Ending, LogHeader, Observation};
use crate::steps::commit::Change;
use crate::store;
use std::path::Path;

/// A run dwp observed, before it is kept in a plan: what ran, when it finished, how it ended,
/// and its output (every byte it printed counted in `total`, the last ones in `output`).
#[derive(Debug, Clone)]
pub struct ObservedRun {
    pub argv: Vec<String>,
    pub finished: String,
    pub ending: Ending,
    pub total: u64,
    pub output: Vec<u8>,
}

impl ObservedRun {
    /// The command as its gate records it.
    pub fn command(&self) -> String {
        crate::term::display_argv(&self.argv)
    }

    /// The log, summary and verdict of this run, for `task`.
    pub fn observation(&self, task: u64) -> Observation {
        observed::observe(
            LogHeader {
                task,
                command: self.command(),
                finished: self.finished.clone(),
                ending: self.ending.clone(),
                total: self.total,
            },
            &self.output,
        )
    }
}

/// How a run of [`crate::steps::process`] ended, as a log and an observed gate say it.
pub fn ending(ending: &crate::steps::process::Ending) -> Ending {
    use crate::steps::process::Ending as Ran;
    match ending {
        Ran::Exited(code) => Ending::Exited(i64::from(*code)),
        Ran::Signalled(signal) => Ending::Signalled(*signal),
        Ran::TimedOut(limit) => Ending::TimedOut(limit.as_secs()),
        Ran::NotStarted(_) => Ending::NotStarted,
    }
}

/// A log kept in the plan: its name relative to the plan folder and its sha256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenLog {
    pub name: String,
    pub sha256: String,
}

/// A run kept: its log, the gate record pointing at it, and what the log shows.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub log: WrittenLog,
    pub gate: Gate,
    pub observation: Observation,
}

/// Keep `run` as a log of `task` in `plan`: its log added to `change` (under
/// `analysis_results/gates/`, a name no other log has: a second run in the same second gets
/// `-2`, `-3`...) and set in `plan` as the change leaves it, and its observed gate record
/// built. Nothing is written until the change is committed.
pub fn record(
    plan: &mut LoadedPlan,
    change: &mut Change,
    task: u64,
    run: &ObservedRun,
) -> Recorded {
    let observation = run.observation(task);
    let dir = plan.dir().to_path_buf();
    let base = observed::log_name(task, &run.argv, &run.finished);
    let stem = base.trim_end_matches(".log");
    let mut name = format!("{}/{base}", observed::GATES_DIR);
    let mut n = 1;
    // A name that leads out of the plan is no log's: the commit refuses it, rather than this
    // loop looking for a free name forever.
    while matches!(
        plan.place(&dir.join(&name)),
        store::Place::File | store::Place::Other
    ) {
        n += 1;
        name = format!("{}/{stem}-{n}.log", observed::GATES_DIR);
    }
    let path = dir.join(&name);
    change.create_dir(&dir.join("analysis_results"));
    change.create_dir(&dir.join(observed::GATES_DIR));
    change.new_file(&path, observation.bytes.clone());
    plan.set_file(&path, observation.bytes.clone());
    let log = WrittenLog {
        sha256: store::sha256_hex(&observation.bytes),
        name,
    };
    Recorded {
        gate: observation.gate(&log.name, &log.sha256),
        log,
        observation,
    }
}

/// Refuse, before a command runs, a plan where its log could not be kept: `analysis_results/`
/// or `analysis_results/gates/` a symlink or not a folder, or a folder dwp may not write in
/// (the plan folder itself too: the state and the intent record are written there). A gate
/// is not run to be thrown away, and a refusal leaves no folder behind.
pub fn check_log_folder(plan: &LoadedPlan) -> Result<()> {
    check_folders(
        plan.dir(),
        &["analysis_results", observed::GATES_DIR],
        |path| plan.entry(path),
    )
}

/// [`check_log_folder`] for the folders `names` of the plan at `dir`, each inside the one
/// before (a record plan's `gates` and `gates/<task>`), `entry` saying what stands at a path.
pub fn check_folders(
    dir: &Path,
    names: &[&str],
    entry: impl Fn(&Path) -> Option<store::Entry>,
) -> Result<()> {
    let mut deepest = dir.to_path_buf();
    for name in names {
        let path = dir.join(name);
        let what = match entry(&path) {
            Some(store::Entry::Directory) => {
                deepest = path;
                continue;
            }
            Some(store::Entry::Missing) | None => break,
            Some(store::Entry::Symlink) => {
                "a symlink: a gate's log is kept in a folder of the plan itself"
            }
            Some(store::Entry::File) => "a file, not a folder",
            Some(store::Entry::Other(kind)) => kind,
        };
        return Err(Error::rejected(
            path.display().to_string(),
            format!("`{name}` is {what}: dwp cannot keep the gate's log there, so the command is not run"),
        )
        .with_hint(format!(
            "move it aside (`mv {} {}.moved`), then run the gate again: dwp creates the folder",
            path.display(),
            path.display()
        )));
    }
    for folder in [dir, deepest.as_path()] {
        store::check_writable_folder(folder, dir).map_err(|e| {
            e.with_hint(format!(
                "let the user dwp runs as write in it (`chmod u+w {}`, or run as its owner), then run the gate again",
                folder.display()
            ))
        })?;
    }
    Ok(())
}
