//! Two `dwp lock recover` on one dead lock while writers take the freed lock (what the lock-held
//! hint leads every waiting agent to do): no update is lost and no live writer's lock is moved.
//! `strace` delays the syscalls that decide the interleaving, so the race runs the same way
//! every time.

use crate::common;
use dwp::synth::SynthPlan;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The unit of the interleaving: long enough for a debug build of dwp to start and finish a
/// small update on a loaded machine.
const STEP: Duration = Duration::from_millis(1500);

/// A plan with task 1 in progress, ready to take gate records, and a lock whose owner (a
/// process of this host that has exited) is provably dead.
fn plan_under_a_dead_lock(root: &Path) -> PathBuf {
    let plan = SynthPlan::new("PLAN_recovery_race", 3).write(root).unwrap();
    let run = common::dwp_in(
        root,
        &[
            "update",
            plan.to_str().unwrap(),
            "--task",
            "1",
            "--status",
            "in_progress",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut exited = Command::new("true").spawn().unwrap();
    let dead_pid = exited.id();
    exited.wait().unwrap();
    let lock = plan.join("state.json.lock");
    std::fs::create_dir(&lock).unwrap();
    let owner = serde_json::json!({
        "pid": dead_pid,
        "host": dwp::store::lock_dir::host_name(),
        "command": "dwp update (killed)",
        "started_at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    });
    std::fs::write(lock.join("owner.json"), owner.to_string()).unwrap();
    plan
}

/// `dwp ARGS` spawned, its output kept; under `strace` with `inject` (a syscall-injection
/// expression) when one is given.
fn spawn<S: AsRef<std::ffi::OsStr>>(args: &[S], inject: Option<String>) -> Child {
    let mut dwp = common::dwp();
    dwp.args(args);
    let mut command = match inject {
        Some(inject) => dwp.wrapped("strace", ["-f", "-qq", "-o", "/dev/null", "-e", &inject]),
        None => dwp.command(),
    };
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    command.spawn().expect("spawn dwp")
}

/// A delay of `step` steps on entry to the syscalls `calls` (`when`: which of them, default
/// every one).
fn delay(calls: &str, steps: u32, when: Option<u32>) -> String {
    let micros = (STEP * steps).as_micros();
    let when = when.map(|n| format!(":when={n}")).unwrap_or_default();
    format!("inject={calls}:delay_enter={micros}{when}")
}

/// How a spawned run ended, and when (since `start`).
struct Ended {
    code: i32,
    output: String,
    at: Duration,
}

/// Wait for each child, recording when each one ended.
fn wait_all(children: Vec<(&'static str, Child)>, start: Instant) -> Vec<(&'static str, Ended)> {
    let mut pending: Vec<(&str, Child)> = children;
    let mut ended = Vec::new();
    let deadline = start + STEP * 40;
    while !pending.is_empty() {
        assert!(Instant::now() < deadline, "the runs did not end");
        let mut still = Vec::new();
        for (name, mut child) in pending {
            match child.try_wait().unwrap() {
                Some(_) => {
                    let at = start.elapsed();
                    let out = child.wait_with_output().unwrap();
                    ended.push((
                        name,
                        Ended {
                            code: out.status.code().unwrap_or(-1),
                            output: format!(
                                "{}{}",
                                String::from_utf8_lossy(&out.stdout),
                                String::from_utf8_lossy(&out.stderr)
                            ),
                            at,
                        },
                    ));
                }
                None => still.push((name, child)),
            }
        }
        pending = still;
        std::thread::sleep(Duration::from_millis(10));
    }
    ended
}

fn gate_commands(plan: &Path) -> Vec<String> {
    let state: Value = common::state_of(plan);
    common::task_of(&state, 1)["gates"]
        .as_array()
        .map(|gates| {
            gates
                .iter()
                .map(|g| g["command"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The interleaving (in steps): recoverer B judges the dead lock, and its rename is held back
/// one step (each of its renames is); recoverer A runs meanwhile; writer 1 then takes the freed
/// lock and is held two steps between reading state.json and writing it (its first fsync);
/// writer 2 arrives while B's rename has landed and before its second rename (the old code's
/// put-back). A recovery that moved writer 1's lock would let writer 2 in while writer 1 holds
/// it, and writer 1, writing the state it read before, would erase writer 2's gate. Which writer
/// goes first is left to the machine's speed; that both gates land is not.
#[test]
fn two_recoverers_of_one_dead_lock_never_move_a_live_writers_lock_nor_lose_an_update() {
    if !common::strace_available("the lock-recovery race test") {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let plan = plan_under_a_dead_lock(root.path());
    let path = plan.to_str().unwrap();
    let recover = ["lock", "recover", path];
    let gate = |n: u32| format!("check-writer-{n}|0|{n} passed, 0 failed");
    let (gate_1, gate_2) = (gate(1), gate(2));
    let update = |gate: &str| -> Vec<String> {
        [
            "update",
            path,
            "--task",
            "1",
            "--status",
            "in_progress",
            "--gate",
            gate,
        ]
        .into_iter()
        .chain(["--wait", "60"])
        .map(str::to_owned)
        .collect()
    };
    let (update_1, update_2) = (update(&gate_1), update(&gate_2));

    let start = Instant::now();
    let mut children = vec![(
        "recoverer B",
        spawn(&recover, Some(delay("rename", 1, None))),
    )];
    std::thread::sleep(STEP / 3);
    children.push(("recoverer A", spawn(&recover, None)));
    std::thread::sleep(STEP / 3);
    children.push((
        "writer 1",
        spawn(&update_1, Some(delay("fsync", 2, Some(1)))),
    ));
    std::thread::sleep(STEP * 4 / 3 - start.elapsed().min(STEP * 4 / 3));
    children.push(("writer 2", spawn(&update_2, None)));
    let ended = wait_all(children, start);

    let report = ended
        .iter()
        .map(|(name, e)| format!("{name}: exit {} at {:.1?}\n{}", e.code, e.at, e.output))
        .collect::<Vec<_>>()
        .join("\n");
    let of = |who: &str| &ended.iter().find(|(name, _)| *name == who).unwrap().1;
    for writer in ["writer 1", "writer 2"] {
        assert_eq!(of(writer).code, 0, "{writer} failed:\n{report}");
    }
    let gates = gate_commands(&plan);
    for gate in ["check-writer-1", "check-writer-2"] {
        assert!(
            gates.iter().any(|g| g == gate),
            "an update was lost: {gate} is not in state.json (gates: {gates:?}):\n{report}"
        );
    }
    // A recovery that moved a live lock says so when it finds the lock changed hands.
    for recoverer in ["recoverer A", "recoverer B"] {
        assert!(
            !of(recoverer).output.contains("changed hands"),
            "{recoverer} moved a live writer's lock:\n{report}"
        );
    }
    assert!(
        std::fs::symlink_metadata(plan.join("state.json.lock")).is_err(),
        "a lock was left behind:\n{report}"
    );
}
