//! Durability of `dwp::store::write_atomic`, checked against real processes:
//!
//! - a writer killed with SIGKILL at a random instant leaves the old bytes or the new bytes, never
//!   a torn file, and its leftover temp file is removed by the next successful write;
//! - the syscalls happen in the documented order (fsync temp, rename over the target, fsync the
//!   directory), as seen by `strace`;
//! - concurrent writers in one process never expose a mix of payloads to a reader.
//!
//! Child processes are this test binary re-executed on one `#[ignore]`d test
//! (`child_store_writer_loop`, `child_store_single_write`), selected by an environment variable;
//! without that variable the child tests return at once, so `--include-ignored` stays harmless.

use crate::common::strace_available;
use dwp::store::atomic::leftover_temps;

/// The folder a target is written in: the root its path must stay inside.
fn dwp_parent(target: &Path) -> &Path {
    target.parent().expect("a target in a folder")
}
use dwp::store::{json_file_bytes, write_atomic};
use dwp::synth::SynthPlan;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Environment variable naming the target of the looping child writer.
const CHILD_LOOP_ENV: &str = "DWP_DURABILITY_CHILD_TARGET";
/// Environment variable naming the target of the single-write child (traced by strace).
const CHILD_ONCE_ENV: &str = "DWP_DURABILITY_STRACE_TARGET";
/// Printed by the looping child after its first completed write.
const READY: &str = "DWP_DURABILITY_CHILD_READY";
const TARGET_NAME: &str = "state.json";
/// How many times the crash test kills a writer.
const KILLS: usize = 220;

/// Tasks in the crash test's plan: large enough that a write takes a while, so that a kill
/// often lands between creating the temp file and renaming it.
const CRASH_TASKS: usize = 1250;

/// Payload A: canonical state of a 1,250-task plan, all pending (about 256 KiB).
fn payload_a() -> Vec<u8> {
    json_file_bytes(&SynthPlan::new("PLAN_crash_test", CRASH_TASKS).state())
}

/// Payload B: the same plan with its first 112 tasks completed (about 300 KiB).
fn payload_b() -> Vec<u8> {
    json_file_bytes(
        &SynthPlan::new("PLAN_crash_test", CRASH_TASKS)
            .completed(112)
            .state(),
    )
}

/// Re-execute this test binary on exactly one ignored child test.
fn child_command(test_name: &str) -> Command {
    let exe = std::env::current_exe().expect("path of the test binary");
    let mut command = Command::new(exe);
    command.args(child_args(test_name));
    command
}

/// libtest's arguments that run exactly the ignored test `test_name` of this module: `--exact`
/// takes its full name in the test binary, the module path without the crate's name.
fn child_args(test_name: &str) -> [String; 5] {
    let (_crate, module) = module_path!()
        .split_once("::")
        .expect("a module of the test binary");
    [
        "--exact".to_owned(),
        format!("{module}::{test_name}"),
        "--nocapture".to_owned(),
        "--ignored".to_owned(),
        "--test-threads=1".to_owned(),
    ]
}

/// Kills (SIGKILL) and reaps the child if the parent test fails before doing so itself.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Child side of the crash test: write A and B alternately, forever, until SIGKILLed.
#[test]
#[ignore = "child process of a_sigkilled_writer_leaves_old_or_new_bytes_and_the_next_write_sweeps_its_temp"]
fn child_store_writer_loop() {
    let Some(target) = std::env::var_os(CHILD_LOOP_ENV) else {
        return;
    };
    let target = PathBuf::from(target);
    let payloads = [payload_a(), payload_b()];
    // Start with the payload the target does not hold, so the first write really writes.
    let current = fs::read(&target).unwrap_or_default();
    let mut next = usize::from(current == payloads[0]);
    write_atomic(&target, dwp_parent(&target), &payloads[next]).expect("first write");
    let mut stdout = std::io::stdout();
    // On a line of its own: libtest may already have printed "test ... " without a newline.
    writeln!(stdout, "\n{READY}").expect("stdout");
    stdout.flush().expect("stdout");
    loop {
        next = 1 - next;
        write_atomic(&target, dwp_parent(&target), &payloads[next]).expect("looping write");
    }
}

/// Child side of the strace test: exactly one write of new bytes.
#[test]
#[ignore = "child process of a_write_fsyncs_the_temp_file_then_renames_it_then_fsyncs_the_folder"]
fn child_store_single_write() {
    let Some(target) = std::env::var_os(CHILD_ONCE_ENV) else {
        return;
    };
    let outcome = write_atomic(
        Path::new(&target),
        dwp_parent(Path::new(&target)),
        b"{\"new\": true}\n",
    )
    .expect("write");
    assert!(outcome.changed);
}

#[test]
fn a_sigkilled_writer_leaves_old_or_new_bytes_and_the_next_write_sweeps_its_temp() {
    let started = Instant::now();
    let a = payload_a();
    let b = payload_b();
    assert_ne!(a, b);
    serde_json::from_slice::<serde_json::Value>(&a).expect("A is JSON");
    serde_json::from_slice::<serde_json::Value>(&b).expect("B is JSON");
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join(TARGET_NAME);
    write_atomic(&target, dwp_parent(&target), &a).unwrap();

    let mut landed_mid_write = 0;
    let mut left_a = 0;
    let mut left_b = 0;
    for kill in 0..KILLS {
        let mut child = child_command("child_store_writer_loop");
        child
            .env(CHILD_LOOP_ENV, &target)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = KillOnDrop(child.spawn().expect("spawn the child writer"));
        let stdout = child.0.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        loop {
            match lines.next() {
                Some(Ok(line)) if line.trim() == READY => break,
                Some(Ok(_)) => {}
                Some(Err(e)) => panic!("kill {kill}: reading the child's stdout: {e}"),
                None => panic!(
                    "kill {kill}: the child writer exited before writing once: {:?}",
                    child.0.wait()
                ),
            }
        }
        std::thread::sleep(Duration::from_micros(fastrand::u64(0..15_000)));
        child.0.kill().expect("SIGKILL the child writer");
        let status = child.0.wait().expect("reap the child writer");
        assert!(!status.success(), "kill {kill}: the child was not killed");
        drop(child);

        let bytes = fs::read(&target)
            .unwrap_or_else(|e| panic!("kill {kill}: the target is unreadable: {e}"));
        if let Err(e) = serde_json::from_slice::<serde_json::Value>(&bytes) {
            panic!(
                "kill {kill}: the target is not JSON ({} bytes): {e}",
                bytes.len()
            );
        }
        let holds_a = bytes == a;
        assert!(
            holds_a || bytes == b,
            "kill {kill}: the target ({} bytes) is neither payload A ({} bytes) nor B ({} bytes)",
            bytes.len(),
            a.len(),
            b.len()
        );
        if holds_a {
            left_a += 1;
        } else {
            left_b += 1;
        }

        if !leftover_temps(dir.path(), TARGET_NAME).is_empty() {
            landed_mid_write += 1;
        }
        // The other payload, so this write really happens (an unchanged write touches nothing,
        // the sweep included).
        let other = if holds_a { &b } else { &a };
        let outcome =
            write_atomic(&target, dwp_parent(&target), other).expect("the write after a kill");
        assert!(outcome.changed);
        let left = leftover_temps(dir.path(), TARGET_NAME);
        assert!(
            left.is_empty(),
            "kill {kill}: temp files survived the next successful write: {left:?}"
        );
    }
    eprintln!(
        "store durability: {KILLS} SIGKILLs of a writer alternating {} and {} bytes; \
         {landed_mid_write} landed mid-write (left a temp file); the target then held A {left_a} \
         times and B {left_b} times; {:.1?}",
        a.len(),
        b.len(),
        started.elapsed()
    );
    assert!(
        landed_mid_write > 0,
        "no kill landed between creating the temp file and renaming it"
    );
}

/// The decoded fd path of `fsync(3</a/b>)` or `fdatasync(3</a/b>)`.
fn synced_path(call: &str) -> Option<&str> {
    let args = call
        .strip_prefix("fsync(")
        .or_else(|| call.strip_prefix("fdatasync("))?;
    let start = args.find('<')? + 1;
    let end = start + args[start..].find(">)")?;
    Some(&args[start..end])
}

/// Source and destination of `rename("a", "b")`, `renameat(AT_FDCWD</x>, "a", AT_FDCWD</x>,
/// "b")` or `renameat2(..., 0)`, as full paths: a name relative to a folder descriptor
/// (`renameat(4</plan>, "a", 4</plan>, "b")`, as `strace -y` prints it) is joined to that
/// folder's path.
fn renamed_paths(call: &str) -> Option<(String, String)> {
    let args = ["rename(", "renameat(", "renameat2("]
        .iter()
        .find_map(|p| call.strip_prefix(p))?;
    let mut paths = Vec::new();
    let mut folder: Option<&str> = None;
    let mut rest = args;
    while paths.len() < 2 {
        let quote = rest.find('"')?;
        // A `</dir>` before the quoted name is the folder it is relative to.
        let before = &rest[..quote];
        if let (Some(open), Some(close)) = (before.rfind('<'), before.rfind('>')) {
            folder = Some(&before[open + 1..close]);
        }
        let after = &rest[quote + 1..];
        let end = after.find('"')?;
        let name = &after[..end];
        paths.push(match folder.take() {
            Some(dir) if !name.starts_with('/') && !dir.is_empty() => format!("{dir}/{name}"),
            _ => name.to_owned(),
        });
        rest = &after[end + 1..];
    }
    let second = paths.pop()?;
    Some((paths.pop()?, second))
}

#[test]
fn a_write_fsyncs_the_temp_file_then_renames_it_then_fsyncs_the_folder() {
    if !strace_available("the syscall-order test") {
        return;
    }

    let dir = tempfile::tempdir().unwrap();
    // strace -y prints resolved paths: compare against the canonical folder.
    let folder = fs::canonicalize(dir.path()).unwrap();
    let target = folder.join(TARGET_NAME);
    fs::write(&target, b"{\"old\": true}\n").unwrap();
    let trace = folder.join("strace.out");

    let exe = std::env::current_exe().unwrap();
    let output = Command::new("strace")
        .args([
            "-f",
            "-y",
            "-e",
            "trace=fsync,fdatasync,rename,renameat,renameat2",
        ])
        .arg("-o")
        .arg(&trace)
        .arg(&exe)
        .args(child_args("child_store_single_write"))
        .env(CHILD_ONCE_ENV, &target)
        .stdin(Stdio::null())
        .output()
        .expect("run strace");
    assert!(
        output.status.success(),
        "strace on the child writer failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("1 passed"),
        "the child test did not run:\n{}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert_eq!(fs::read(&target).unwrap(), b"{\"new\": true}\n");

    let text = fs::read_to_string(&trace).unwrap();
    // With -f every line starts with the pid: drop it, keep the call.
    let calls: Vec<&str> = text
        .lines()
        .map(|line| {
            let line = line.trim_start();
            match line.split_once(' ') {
                Some((pid, rest)) if pid.bytes().all(|c| c.is_ascii_digit()) => rest.trim_start(),
                _ => line,
            }
        })
        .collect();
    let succeeded = |call: &str| call.trim_end().ends_with("= 0");
    let temp_prefix = format!(".{TARGET_NAME}.dwp-tmp.");
    let is_temp = |path: &str| {
        Path::new(path).parent() == Some(folder.as_path())
            && Path::new(path)
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&temp_prefix))
    };

    let (temp_sync, temp) = calls
        .iter()
        .enumerate()
        .find_map(|(i, call)| {
            synced_path(call)
                .filter(|p| is_temp(p) && succeeded(call))
                .map(|p| (i, p))
        })
        .unwrap_or_else(|| panic!("no fsync of a temp file in the trace:\n{text}"));
    let target_str = target.to_str().unwrap();
    let rename = calls
        .iter()
        .enumerate()
        .skip(temp_sync + 1)
        .find(|(_, call)| {
            renamed_paths(call) == Some((temp.to_owned(), target_str.to_owned())) && succeeded(call)
        })
        .map(|(i, _)| i)
        .unwrap_or_else(|| {
            panic!("no rename of {temp} onto {target_str} after its fsync:\n{text}")
        });
    let folder_str = folder.to_str().unwrap();
    let dir_sync = calls
        .iter()
        .enumerate()
        .skip(rename + 1)
        .find(|(_, call)| synced_path(call) == Some(folder_str) && succeeded(call))
        .map(|(i, _)| i)
        .unwrap_or_else(|| panic!("no fsync of {folder_str} after the rename:\n{text}"));
    eprintln!(
        "strace of one write:\n{}\n{}\n{}",
        calls[temp_sync], calls[rename], calls[dir_sync]
    );
}

#[test]
fn concurrent_writers_never_expose_a_torn_or_mixed_file() {
    const WRITERS: usize = 4;
    const WRITES_EACH: usize = 50;
    let payloads: Arc<Vec<Vec<u8>>> = Arc::new(
        (0..WRITERS)
            .map(|i| {
                json_file_bytes(
                    &SynthPlan::new(&format!("PLAN_concurrent_{i}"), 40 + 20 * i).state(),
                )
            })
            .collect(),
    );
    let dir = tempfile::tempdir().unwrap();
    let target = Arc::new(dir.path().join(TARGET_NAME));
    write_atomic(&target, dwp_parent(&target), &payloads[0]).unwrap();

    let done = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(WRITERS + 1));
    let reader = {
        let (payloads, target, done, start) = (
            Arc::clone(&payloads),
            Arc::clone(&target),
            Arc::clone(&done),
            Arc::clone(&start),
        );
        std::thread::spawn(move || {
            start.wait();
            let mut reads = 0usize;
            let mut seen = vec![0usize; payloads.len()];
            loop {
                // Read once more after the writers finish, so the last state is checked too.
                let last = done.load(Ordering::Acquire);
                let bytes = fs::read(&*target).expect("the target is always present");
                if let Err(e) = serde_json::from_slice::<serde_json::Value>(&bytes) {
                    panic!("read {reads}: the target is not JSON: {e}");
                }
                let which = payloads
                    .iter()
                    .position(|p| *p == bytes)
                    .unwrap_or_else(|| {
                        panic!("read {reads}: {} bytes matching no payload", bytes.len())
                    });
                seen[which] += 1;
                reads += 1;
                if last {
                    return (reads, seen);
                }
            }
        })
    };
    let writers: Vec<_> = (0..WRITERS)
        .map(|i| {
            let (payloads, target, start) = (
                Arc::clone(&payloads),
                Arc::clone(&target),
                Arc::clone(&start),
            );
            std::thread::spawn(move || {
                start.wait();
                for _ in 0..WRITES_EACH {
                    write_atomic(&target, dwp_parent(&target), &payloads[i])
                        .expect("a concurrent write");
                }
            })
        })
        .collect();
    // The reader waits at the barrier too, so it starts with the writers.
    for writer in writers {
        writer.join().expect("writer thread");
    }
    done.store(true, Ordering::Release);
    let (reads, seen) = reader.join().expect("reader thread");
    eprintln!(
        "concurrent writers: {WRITERS}x{WRITES_EACH} writes, {reads} reads, all whole; \
         reads per payload {seen:?}"
    );
    assert!(reads > 1);
    assert!(leftover_temps(dir.path(), TARGET_NAME).is_empty());
}

/// Under a file-size limit (`ulimit -f`) too small for the new state, dwp is not killed by
/// SIGXFSZ halfway: the write fails (EFBIG), dwp exits 4 saying so, and leaves no temp file,
/// no lock and the plan's bytes as they were.
#[test]
fn a_file_size_limit_fails_the_write_cleanly_instead_of_killing_dwp() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = SynthPlan::new("PLAN_fsize_limit", 3)
        .write(tmp.path())
        .unwrap();
    let state = fs::read(plan.join("state.json")).unwrap();
    assert!(state.len() > 1024, "the state outgrows a 1-block limit");
    let before = crate::common::snapshot(&plan);
    let dwp = assert_cmd::cargo::cargo_bin("dwp");
    let output = Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 1 && exec \"$0\" update \"$1\" --task 1 --status in_progress")
        .arg(&dwp)
        .arg(&plan)
        .env_remove("HOME")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(4),
        "{:?} {stderr}",
        output.status
    );
    assert!(stderr.contains("File too large"), "{stderr}");
    assert!(
        leftover_temps(&plan, "state.json").is_empty(),
        "a temp file was left"
    );
    assert!(!plan.join("state.json.lock").exists(), "the lock was left");
    assert_eq!(crate::common::snapshot(&plan), before, "written");
}
