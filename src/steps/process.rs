//! Running one command: argv (no shell), in the given folder, with only the environment it is
//! given (see [`super::command_env`]), stdin closed, stdout and stderr captured together (or
//! apart, for a record plan's gate log), and a timeout after which the whole process group is killed (a test runner's
//! children must not outlive the proof), and with it every process the command left that
//! escaped the group (`setsid`, a daemon): dwp is their subreaper (`PR_SET_CHILD_SUBREAPER`), so
//! an orphan is re-parented to dwp, not to init, and killed by [`kill_leftovers`].
//!
//! Three captures: [`run`] into an unnamed temp file, the last [`MAX_OUTPUT_BYTES`] kept (`dwp
//! loop prove`); [`run_teed`] through a pipe, every byte written to a sink as it comes (the
//! terminal) and the last `bound` bytes kept (`dwp run`); [`run_teed_apart`], the same through
//! one pipe for stdout and one for stderr, each stream's tail kept on its own (`dwp run` on a
//! record plan, whose log shows the two in sections of their own).

use std::ffi::OsString;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The most output kept per command: the tail is where the verdict is.
pub const MAX_OUTPUT_BYTES: u64 = 16 * 1024 * 1024;

/// Ignore SIGXFSZ in dwp, so that a write over the file-size limit (`ulimit -f`) fails with
/// EFBIG, which dwp reports (exit 4) after removing its temp file and releasing its lock,
/// rather than killing dwp between the two. Called first in `main`, before any thread.
pub fn ignore_file_size_signal() {
    // SAFETY: SIG_IGN installs no handler code; the call races with no thread.
    unsafe {
        // std and rustix have no way to set a signal's disposition: libc's `signal(2)`.
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

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
    /// Every byte the command printed.
    pub total: u64,
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
    let mut command = isolated(program, args, cwd, env);
    command
        .stdout(capture.try_clone()?)
        .stderr(capture.try_clone()?);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return Ok(not_started(e.to_string())),
    };
    let ending = wait(&mut child, timeout)?;
    let (output, total) = tail(&mut capture)?;
    Ok(RunResult {
        ending,
        output,
        total,
    })
}

/// `program` with `args` in `cwd`, with exactly `env`, stdin closed, in a process group of its
/// own (so a timeout kills its children too); where its output goes is the caller's.
fn isolated(program: &str, args: &[String], cwd: &Path, env: &[(String, OsString)]) -> Command {
    // Failing (not Linux, an old kernel), leftovers that left the group are not contained.
    let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
    let mut command = Command::new(program);
    command
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(name, value)| (name, value)))
        .current_dir(cwd)
        .stdin(Stdio::null())
        .process_group(0);
    // SAFETY: between fork and exec only `signal(2)`, which is async-signal-safe: the command
    // gets SIGXFSZ's default back (an ignored signal stays ignored across exec).
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_DFL);
            Ok(())
        });
    }
    command
}

/// A run whose output was teed: streamed to a sink as it came, its tail kept.
#[derive(Debug, Clone)]
pub struct Teed {
    pub ending: Ending,
    /// The last `bound` bytes of stdout and stderr as they interleaved.
    pub tail: Vec<u8>,
    /// Every byte the command printed.
    pub total: u64,
}

/// A run whose stdout and stderr were teed apart: both streamed to one sink as they came, each
/// stream's own tail kept (a log that shows them in two sections).
#[derive(Debug, Clone)]
pub struct TeedApart {
    pub ending: Ending,
    pub stdout: Captured,
    pub stderr: Captured,
}

/// How long the output may still drain once the command has exited (its leftover children
/// may hold the pipe open); then the process group is killed.
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// Run `argv` in `cwd` with exactly `env`, stdout and stderr into one pipe whose bytes are
/// written to `sink` as they arrive and whose last `bound` bytes are kept. A sink that fails
/// (a closed terminal) stops being written to; the capture goes on.
pub fn run_teed(
    argv: &[String],
    cwd: &Path,
    env: &[(String, OsString)],
    timeout: Duration,
    sink: Box<dyn std::io::Write + Send>,
    bound: usize,
) -> std::io::Result<Teed> {
    let Some((program, args)) = argv.split_first() else {
        return Ok(not_teed("empty argv".into()));
    };
    let (reader, writer) = std::io::pipe()?;
    let mut command = isolated(program, args, cwd, env);
    command.stdout(writer.try_clone()?).stderr(writer);
    let spawned = command.spawn();
    // The parent's ends of the pipe's write side go with the command: only the child's remain,
    // so the reader sees the end of the output when the child's group is done with it.
    drop(command);
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => return Ok(not_teed(e.to_string())),
    };
    let (ending, mut captured) = watch(&mut child, timeout, vec![reader], sink, bound)?;
    let Captured { tail, total } = captured.pop().unwrap_or_default();
    Ok(Teed {
        ending,
        tail,
        total,
    })
}

/// [`run_teed`] with stdout and stderr in two pipes: every chunk of either written to `sink` as
/// it arrives (the two interleaved as they come), the last `bound` bytes of each kept apart. A
/// command that could not be started has no output, only its ending.
pub fn run_teed_apart(
    argv: &[String],
    cwd: &Path,
    env: &[(String, OsString)],
    timeout: Duration,
    sink: Box<dyn std::io::Write + Send>,
    bound: usize,
) -> std::io::Result<TeedApart> {
    let not_started = |reason: String| TeedApart {
        ending: Ending::NotStarted(reason),
        stdout: Captured::default(),
        stderr: Captured::default(),
    };
    let Some((program, args)) = argv.split_first() else {
        return Ok(not_started("empty argv".into()));
    };
    let (out_reader, out_writer) = std::io::pipe()?;
    let (err_reader, err_writer) = std::io::pipe()?;
    let mut command = isolated(program, args, cwd, env);
    command.stdout(out_writer).stderr(err_writer);
    let spawned = command.spawn();
    // As in `run_teed`: only the child's write ends may keep the pipes open.
    drop(command);
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => return Ok(not_started(e.to_string())),
    };
    let readers = vec![out_reader, err_reader];
    let (ending, captured) = watch(&mut child, timeout, readers, sink, bound)?;
    let mut streams = captured.into_iter();
    Ok(TeedApart {
        ending,
        stdout: streams.next().unwrap_or_default(),
        stderr: streams.next().unwrap_or_default(),
    })
}

/// Pump each of `readers` to `sink` (one thread each) until the command ends or times out, then
/// let them drain; leftover children still holding a pipe then are killed with the group.
/// Returns how the command ended and what each reader kept, in the readers' order.
fn watch(
    child: &mut std::process::Child,
    timeout: Duration,
    readers: Vec<std::io::PipeReader>,
    sink: Box<dyn std::io::Write + Send>,
    bound: usize,
) -> std::io::Result<(Ending, Vec<Captured>)> {
    use std::sync::{Arc, Mutex};
    // One sink for every pump; `None` once a write to it failed.
    let sink = Arc::new(Mutex::new(Some(sink)));
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let mut captures = Vec::with_capacity(readers.len());
    for reader in readers {
        let captured = Arc::new(Mutex::new(Captured::default()));
        let (filling, sink, done) = (Arc::clone(&captured), Arc::clone(&sink), done_tx.clone());
        std::thread::spawn(move || {
            pump(reader, &sink, bound, &filling);
            let _ = done.send(());
        });
        captures.push(captured);
    }
    let ending = wait(child, timeout)?;
    let open = drain(&done_rx, captures.len());
    if open > 0 {
        // Leftover children hold a pipe: the group goes, as at a timeout.
        let group = rustix::process::Pid::from_child(child);
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        kill_leftovers();
        // A process dwp could not kill may still hold a pipe: what was read so far is kept,
        // and its pump is left to end with dwp.
        drain(&done_rx, open);
    }
    let kept = captures
        .iter()
        .map(|captured| {
            let mut captured =
                std::mem::take(&mut *captured.lock().unwrap_or_else(|e| e.into_inner()));
            if captured.tail.len() > bound {
                captured.tail.drain(..captured.tail.len() - bound);
            }
            captured
        })
        .collect();
    Ok((ending, kept))
}

/// Wait up to [`DRAIN_GRACE`] for `open` pumps to finish; returns how many are still open.
fn drain(done: &std::sync::mpsc::Receiver<()>, mut open: usize) -> usize {
    let deadline = Instant::now() + DRAIN_GRACE;
    while open > 0 {
        let left = deadline.saturating_duration_since(Instant::now());
        if done.recv_timeout(left).is_err() {
            break;
        }
        open -= 1;
    }
    open
}

/// What a pump has read of one stream so far: its last bytes, and how many there were.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    /// The last bytes (at most the run's bound once it ended).
    pub tail: Vec<u8>,
    /// Every byte the stream carried.
    pub total: u64,
}

/// The sink every pump of one run writes to; `None` once a write failed (a closed terminal).
type SharedSink = std::sync::Mutex<Option<Box<dyn std::io::Write + Send>>>;

/// Read the pipe to its end: every chunk to `sink` (until it fails), the last `bound` bytes kept
/// in `captured` (at most twice that between trims).
fn pump(
    mut reader: std::io::PipeReader,
    sink: &SharedSink,
    bound: usize,
    captured: &std::sync::Mutex<Captured>,
) {
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        {
            let mut sink = sink.lock().unwrap_or_else(|e| e.into_inner());
            let failed = sink.as_mut().is_some_and(|out| {
                out.write_all(&chunk[..n])
                    .and_then(|()| out.flush())
                    .is_err()
            });
            if failed {
                *sink = None;
            }
        }
        let mut captured = captured.lock().unwrap_or_else(|e| e.into_inner());
        captured.total += n as u64;
        captured.tail.extend_from_slice(&chunk[..n]);
        if captured.tail.len() > bound.saturating_mul(2).max(1) {
            let excess = captured.tail.len() - bound;
            captured.tail.drain(..excess);
        }
    }
}

fn not_teed(reason: String) -> Teed {
    let message = format!("dwp: the command could not be started: {reason}\n");
    Teed {
        ending: Ending::NotStarted(reason),
        total: message.len() as u64,
        tail: message.into_bytes(),
    }
}

fn not_started(reason: String) -> RunResult {
    RunResult {
        ending: Ending::NotStarted(reason),
        output: Vec::new(),
        total: 0,
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
            kill_leftovers();
            return Ok(Ending::TimedOut(timeout));
        }
        std::thread::sleep(interval.min(timeout.saturating_sub(started.elapsed())));
        interval = (interval * 2).min(Duration::from_millis(100));
    }
}

/// How long dwp goes on killing the processes a command left: each kill re-parents the killed
/// one's children to dwp, which kills them in turn.
const LEFTOVER_GRACE: Duration = Duration::from_secs(2);

/// Kill and reap every child dwp has once the command is done with (the processes that left
/// its group, re-parented to dwp as their subreaper), until none is left or
/// [`LEFTOVER_GRACE`] has passed.
fn kill_leftovers() {
    use rustix::process::{Pid, Signal, WaitOptions};
    let started = Instant::now();
    loop {
        let children = crate::store::procfs::children_of(std::process::id());
        if children.is_empty() || started.elapsed() >= LEFTOVER_GRACE {
            return;
        }
        for pid in children.iter().filter_map(|pid| Pid::from_raw(*pid as i32)) {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
            let _ = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The last [`MAX_OUTPUT_BYTES`] of the capture, and its whole length.
fn tail(capture: &mut std::fs::File) -> std::io::Result<(Vec<u8>, u64)> {
    let len = capture.seek(SeekFrom::End(0))?;
    capture.seek(SeekFrom::Start(len.saturating_sub(MAX_OUTPUT_BYTES)))?;
    let mut bytes = Vec::new();
    capture.read_to_end(&mut bytes)?;
    Ok((bytes, len))
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
        let _one = crate::one_child_at_a_time();
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
        let _one = crate::one_child_at_a_time();
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
        let _one = crate::one_child_at_a_time();
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

    /// A sink the test can read after the run.
    #[derive(Clone, Default)]
    struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Shared {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_teed_run_streams_everything_and_keeps_the_tail() {
        let _one = crate::one_child_at_a_time();
        let dir = tempfile::tempdir().unwrap();
        let sink = Shared::default();
        let script = "for i in 1 2 3 4 5; do echo line$i; done; echo err >&2; exit 3";
        let result = run_teed(
            &argv(&["sh", "-c", script]),
            dir.path(),
            &path(),
            Duration::from_secs(10),
            Box::new(sink.clone()),
            10,
        )
        .unwrap();
        assert_eq!(result.ending, Ending::Exited(3));
        let streamed = sink.0.lock().unwrap().clone();
        assert_eq!(streamed, b"line1\nline2\nline3\nline4\nline5\nerr\n");
        assert_eq!(result.total, streamed.len() as u64);
        assert_eq!(result.tail, b"line5\nerr\n");
    }

    #[test]
    fn a_run_teed_apart_streams_both_and_keeps_each_tail_on_its_own() {
        let _one = crate::one_child_at_a_time();
        let dir = tempfile::tempdir().unwrap();
        let sink = Shared::default();
        let script = "echo out1; echo err1 >&2; echo out2; exit 4";
        let result = run_teed_apart(
            &argv(&["sh", "-c", script]),
            dir.path(),
            &path(),
            Duration::from_secs(10),
            Box::new(sink.clone()),
            5,
        )
        .unwrap();
        assert_eq!(result.ending, Ending::Exited(4));
        assert_eq!(result.stdout.tail, b"out2\n");
        assert_eq!(result.stdout.total, 10);
        assert_eq!(result.stderr.tail, b"err1\n");
        assert_eq!(result.stderr.total, 5);
        let streamed = sink.0.lock().unwrap().clone();
        assert_eq!(streamed.len(), 15);
        let missing = run_teed_apart(
            &argv(&["dwp-no-such-program"]),
            dir.path(),
            &path(),
            Duration::from_secs(5),
            Box::new(std::io::sink()),
            5,
        )
        .unwrap();
        assert!(matches!(missing.ending, Ending::NotStarted(_)));
    }

    #[test]
    fn a_teed_run_does_not_wait_for_leftover_children_holding_the_pipe() {
        let _one = crate::one_child_at_a_time();
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let result = run_teed(
            &argv(&["sh", "-c", "sleep 30 & echo started"]),
            dir.path(),
            &path(),
            Duration::from_secs(10),
            Box::new(std::io::sink()),
            1024,
        )
        .unwrap();
        assert_eq!(result.ending, Ending::Exited(0));
        assert_eq!(result.tail, b"started\n");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn the_summary_is_the_last_non_blank_line() {
        let _one = crate::one_child_at_a_time();
        assert_eq!(
            last_line(b"compiling\n42 passed; 0 failed\n\n").as_deref(),
            Some("42 passed; 0 failed")
        );
        assert_eq!(last_line(b"  \n"), None);
    }
}
