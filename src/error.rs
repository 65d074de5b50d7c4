//! The error type of every dwp operation, and the one place that maps it to an exit code:
//! [`Exit::TABLE`] is the exit-code table that `--help` prints and the README repeats
//! (`tests/hooks/ci_integration.rs` holds the README to it).

use std::path::{Path, PathBuf};

/// Exit codes (docs/DECISIONS.md, "Exit codes, verdicts and JSON").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Ok,
    Rejected,
    Usage,
    Contention,
    Io,
    Unverified,
    /// Only `dwp contract check --hook`: the Stop hook protocol blocks a stop with exit 2.
    BlockStop,
    /// Only `dwp run`: the exit code of the command it ran (see [`Exit::RUN_TEXT`]).
    Command(u8),
}

impl Exit {
    /// Every exit code with what it means, in the order `--help` and the README list them.
    pub const TABLE: [(Exit, &'static str); 7] = [
        (Exit::Ok, "success: valid, conformant, written"),
        (Exit::Rejected, "rejected or findings: nothing was written"),
        (Exit::Usage, "usage error"),
        (
            Exit::BlockStop,
            "contract check --hook: the stop is blocked (the Stop hook protocol), reason on stderr",
        ),
        (
            Exit::Contention,
            "contention: the lock is held or the snapshot moved; re-read and retry",
        ),
        (
            Exit::Io,
            "I/O failure (disk full, fsync failed): nothing claimed",
        ),
        (
            Exit::Unverified,
            "UNVERIFIED: a check could not be made, so no claim either way",
        ),
    ];

    /// How `dwp run` exits, besides the table: the command's own code is passed on.
    pub const RUN_TEXT: &'static str = "dwp run exits with the code of the command it ran (0 too when it ran no test: the\n  gate is recorded as failing, with a warning), 124 timed out, 128+N killed by\n  signal N, 127 not started; or 3 and 4 as above";

    /// The table as `--help` prints it.
    pub fn help_text() -> String {
        let mut text = String::from("Exit codes:");
        for (exit, meaning) in Exit::TABLE {
            text.push_str(&format!("\n  {}  {meaning}", exit.code()));
        }
        text.push_str(&format!("\n  {}", Exit::RUN_TEXT));
        text
    }

    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Rejected => 1,
            Exit::Usage | Exit::BlockStop => 2,
            Exit::Contention => 3,
            Exit::Io => 4,
            Exit::Unverified => 5,
            Exit::Command(code) => code,
        }
    }
}

/// Every way a dwp operation can fail. Each variant carries where it happened and, where a next
/// step exists, a hint naming it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Malformed or refused input: nothing was written.
    #[error("{message} ({place})")]
    Rejected {
        message: String,
        place: String,
        hint: Option<String>,
    },
    /// Wrong use of the command line that clap could not catch.
    #[error("{0}")]
    Usage(String),
    /// The cooperative lock is held by another writer. `live`: `dwp lock recover` saw its
    /// owner running, so waiting is the only way on.
    #[error("{lock} is held{}", owner_suffix(.owner))]
    LockHeld {
        lock: PathBuf,
        owner: Option<String>,
        live: bool,
    },
    /// `--expected-sha256` no longer matches the bytes on disk.
    #[error("the snapshot moved: expected sha256 {expected}, found {actual} ({path})")]
    SnapshotMoved {
        path: PathBuf,
        expected: String,
        actual: String,
    },
    /// The operating system refused a read or a write.
    #[error("{op} failed: {source} ({})", .path.display())]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
        /// What to do next, when it is more than retrying (a publication that left its marker).
        hint: Option<String>,
    },
    /// A check could not be made; no claim either way.
    #[error("UNVERIFIED: {message} ({place})")]
    Unverified { message: String, place: String },
}

fn owner_suffix(owner: &Option<String>) -> String {
    match owner {
        Some(owner) => format!(" by {owner}"),
        None => " (no owner record: a writer that does not record one, or one still starting)"
            .to_string(),
    }
}

impl Error {
    /// The exit code for this error: the only place the mapping is made.
    pub fn exit(&self) -> Exit {
        match self {
            Error::Rejected { .. } => Exit::Rejected,
            Error::Usage(_) => Exit::Usage,
            Error::LockHeld { .. } | Error::SnapshotMoved { .. } => Exit::Contention,
            Error::Io { .. } => Exit::Io,
            Error::Unverified { .. } => Exit::Unverified,
        }
    }

    /// The kind of failure, one word per exit code's cause: `rejected`, `usage`, `contention`,
    /// `io`, `unverified` (the `kind` of a JSON error document).
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Rejected { .. } => "rejected",
            Error::Usage(_) => "usage",
            Error::LockHeld { .. } | Error::SnapshotMoved { .. } => "contention",
            Error::Io { .. } => "io",
            Error::Unverified { .. } => "unverified",
        }
    }

    /// Where it failed: the file (and JSON path or line) or the lock; a usage error is the
    /// command line's.
    pub fn place(&self) -> String {
        match self {
            Error::Rejected { place, .. } | Error::Unverified { place, .. } => place.clone(),
            Error::Usage(_) => "command line".to_owned(),
            Error::LockHeld { lock, .. } => lock.display().to_string(),
            Error::SnapshotMoved { path, .. } | Error::Io { path, .. } => {
                path.display().to_string()
            }
        }
    }

    /// What to do next, when there is something to do.
    pub fn hint(&self) -> Option<String> {
        self.hint_for(false)
    }

    /// [`Error::hint`] for a command that has `--wait` (`can_wait`): a held lock is then retried
    /// with it. Only such a command is told to use the flag.
    pub fn hint_for(&self, can_wait: bool) -> Option<String> {
        match self {
            Error::Rejected { hint, .. } => hint.clone(),
            Error::LockHeld { lock, live, .. } => {
                let plan = match lock.parent() {
                    Some(dir) if !dir.as_os_str().is_empty() => crate::term::path_word(dir),
                    _ => ".".to_owned(),
                };
                let retry = match can_wait {
                    true => "retry with --wait SECONDS to wait for its release",
                    false => "retry once it is released",
                };
                Some(if *live {
                    format!(
                        "its owner is running, and recovery never takes a live writer's lock: let it finish (`dwp lock status {plan}` shows it)"
                    )
                } else {
                    format!(
                        "{retry}; if its owner is gone, `dwp lock status {plan}` then `dwp lock recover {plan}`"
                    )
                })
            }
            Error::SnapshotMoved { .. } => {
                Some("re-read state.json and retry with its current sha256".into())
            }
            Error::Io {
                hint: Some(hint), ..
            } => Some(hint.clone()),
            Error::Io { .. } => Some("nothing was claimed; fix the cause and retry".into()),
            Error::Unverified { .. } | Error::Usage(_) => None,
        }
    }

    pub fn rejected(place: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Rejected {
            message: message.into(),
            place: place.into(),
            hint: None,
        }
    }

    pub fn with_hint(mut self, text: impl Into<String>) -> Error {
        if let Error::Rejected { hint, .. } | Error::Io { hint, .. } = &mut self {
            *hint = Some(text.into());
        }
        self
    }

    /// Refuse a text field longer than `max` characters (the schema's limit, or a record's).
    pub fn check_length(place: &str, value: &str, max: usize) -> Result<()> {
        let length = value.chars().count();
        if length > max {
            return Err(Error::rejected(
                place,
                format!("is {length} characters; at most {max} are allowed"),
            ));
        }
        Ok(())
    }

    pub fn io(op: &'static str, path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            op,
            path: path.to_path_buf(),
            source,
            hint: None,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
