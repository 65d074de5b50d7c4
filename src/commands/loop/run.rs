//! Running one command item: argv (no shell), in the worktree, with only the environment it is
//! given (see [`super::environment`]), stdin closed, stdout and stderr together into one capture, and a timeout after which the whole process group is killed (a
//! test runner's children must not outlive the proof).

use std::ffi::OsString;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The most output kept per command: the tail is where the verdict is.
pub const MAX_OUTPUT_BYTES: u64 = 16 * 1024 * 1024;

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    Exited(i32),
    Signalled(i32),
    TimedOut(Duration),
    /// The program could not be started (not found, not executable).
    NotStarted(String),
}

#[derive(Debug, Clone)]
pub struct RunResult {
    pub ending: Ending,
    /// stdout and stderr as they interleaved, at most the last [`MAX_OUTPUT_BYTES`].
    pub output: Vec<u8>,
}

impl RunResult {
    pub fn passed(&self) -> bool {
        self.ending == Ending::Exited(0)
    }

    pub fn exit_code(&self) -> Option<i64> {
        match self.ending {
            Ending::Exited(code) => Some(i64::from(code)),
            _ => None,
        }
    }
}

/// Run `argv` in `cwd` with exactly `env`, capturing into an unnamed temp file in `scratch` (no
/// pipe to fill up).
pub fn run(
    argv: &[String],
    cwd: &Path,
    env: &[(String, OsString)],
    timeout: Duration,
    scratch: &Path,
) -> std::io::Result<RunResult> {
    let mut capture = tempfile::tempfile_in(scratch)?;
    let Some((program, args)) = argv.split_first() else {
        return Ok(not_started("empty argv".into()));
    };
    let mut command = Command::new(program);
    command
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(name, value)| (name, value)))
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(capture.try_clone()?)
        .stderr(capture.try_clone()?)
        .process_group(0);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return Ok(not_started(e.to_string())),
    };
    let ending = wait(&mut child, timeout)?;
    Ok(RunResult {
        ending,
        output: tail(&mut capture)?,
    })
}

fn not_started(reason: String) -> RunResult {
    RunResult {
        ending: Ending::NotStarted(reason),
        output: Vec::new(),
    }
}

/// Poll until exit or timeout; the interval grows from 5 ms to 100 ms so a quick command
/// costs little and a long one wakes rarely.
fn wait(child: &mut std::process::Child, timeout: Duration) -> std::io::Result<Ending> {
    use std::os::unix::process::ExitStatusExt;
    let started = Instant::now();
    let mut interval = Duration::from_millis(5);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(match (status.code(), status.signal()) {
                (Some(code), _) => Ending::Exited(code),
                (None, Some(signal)) => Ending::Signalled(signal),
                (None, None) => Ending::Signalled(0),
            });
        }
        if started.elapsed() >= timeout {
            let group = rustix::process::Pid::from_child(child);
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
            let _ = child.kill();
            child.wait()?;
            return Ok(Ending::TimedOut(timeout));
        }
        std::thread::sleep(interval.min(timeout.saturating_sub(started.elapsed())));
        interval = (interval * 2).min(Duration::from_millis(100));
    }
}

fn tail(capture: &mut std::fs::File) -> std::io::Result<Vec<u8>> {
    let len = capture.seek(SeekFrom::End(0))?;
    capture.seek(SeekFrom::Start(len.saturating_sub(MAX_OUTPUT_BYTES)))?;
    let mut bytes = Vec::new();
    capture.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The one-line summary of a run: its last non-blank output line, at most 200 characters.
pub fn last_line(output: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(output);
    let line = text.lines().rev().map(str::trim).find(|l| !l.is_empty())?;
    let mut summary: String = line.chars().filter(|c| !c.is_control()).take(200).collect();
    if line.chars().count() > 200 {
        summary.push('…');
    }
    Some(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only PATH, so that `echo` and `sleep` are found.
    fn path() -> Vec<(String, OsString)> {
        std::env::var_os("PATH")
            .map(|p| ("PATH".to_owned(), p))
            .into_iter()
            .collect()
    }

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn argv_is_not_a_shell_line() {
        let dir = tempfile::tempdir().unwrap();
        let result = run(
            &argv(&["echo", "a && b; $HOME"]),
            dir.path(),
            &path(),
            Duration::from_secs(10),
            dir.path(),
        )
        .unwrap();
        assert!(result.passed());
        assert_eq!(result.output, b"a && b; $HOME\n");
    }

    #[test]
    fn the_timeout_kills_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let result = run(
            &argv(&["sleep", "30"]),
            dir.path(),
            &path(),
            Duration::from_millis(300),
            dir.path(),
        )
        .unwrap();
        assert_eq!(result.ending, Ending::TimedOut(Duration::from_millis(300)));
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_program_that_does_not_exist_is_not_started() {
        let dir = tempfile::tempdir().unwrap();
        let result = run(
            &argv(&["dwp-no-such-program"]),
            dir.path(),
            &path(),
            Duration::from_secs(5),
            dir.path(),
        )
        .unwrap();
        assert!(matches!(result.ending, Ending::NotStarted(_)));
        assert!(!result.passed());
    }

    #[test]
    fn the_summary_is_the_last_non_blank_line() {
        assert_eq!(
            last_line(b"compiling\n42 passed; 0 failed\n\n").as_deref(),
            Some("42 passed; 0 failed")
        );
        assert_eq!(last_line(b"  \n"), None);
    }
}
