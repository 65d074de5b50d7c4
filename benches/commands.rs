//! Benchmarks of the commands agents call most: `dwp update` (issue #3) and `dwp reconcile`
//! (issue #4). `harness = false`: a plain `main` that measures and prints tables.
//!
//! Run: `cargo build --release && cargo bench --bench commands` (see `docs/PERFORMANCE.md`).
//! `DWP_BENCH_QUICK=1` runs a few iterations of everything; `DWP_BENCH_DIR` picks the folder the
//! plans are written to (fsync cost depends on its filesystem).
//!
//! - update: median latency of one in-process `dwp::commands::update::update` (lock, read, validate,
//!   apply, validate, durable write, unlock) next to the floor (plain write + fsync + rename +
//!   fsync dir of the same bytes), measured interleaved in one run; and the median wall time
//!   of the release binary; on Full v5 plans of 10, 1,000 and 10,000 tasks.
//! - contention: 8 threads each running the release binary 25 times (`--wait 30`) against one
//!   plan, adding distinct gate records: total time, updates per second, all 200 present.
//! - reconcile: median of the check on Full plans of 100, 1,000 and 10,000 tasks, in-process and
//!   through the binary.
//! - verify: median of `dwp verify` on one Full plan of 100, 1,000 and 10,000 tasks (in-process
//!   and binary), and of `dwp verify --all` on a workspace of 1,000 plans of 10 tasks, on every
//!   core and pinned to one (`taskset -c 0`), to show the parallel speed-up.

use dwp::commands::reconcile::{ReconcileRequest, reconcile};
use dwp::commands::update::{UpdateRequest, update};
use dwp::plan::model::TaskStatus;
use dwp::synth::SynthPlan;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn quick() -> bool {
    std::env::var("DWP_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0")
}

fn median_ms(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1000.0
}

fn release_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?.parent()?;
    let binary = dir.join("dwp");
    binary.exists().then_some(binary)
}

fn bench_root() -> tempfile::TempDir {
    match std::env::var_os("DWP_BENCH_DIR") {
        Some(dir) => tempfile::tempdir_in(dir).expect("DWP_BENCH_DIR is writable"),
        None => tempfile::tempdir().expect("temp dir"),
    }
}

/// A Full v5 plan of `tasks` tasks, half completed, the next one in progress.
fn plan_in_progress(root: &Path, name: &str, tasks: usize) -> PathBuf {
    let plan = SynthPlan::new(name, tasks)
        .completed(tasks / 2)
        .write(root)
        .expect("write plan");
    let start = UpdateRequest {
        task: tasks as u64 / 2 + 1,
        status: Some(TaskStatus::InProgress),
        ..UpdateRequest::default()
    };
    update(&plan, &start).expect("start the next task");
    plan
}

fn floor_write(target: &Path, bytes: &[u8]) {
    let dir = target.parent().unwrap();
    let temp = dir.join(".floor.tmp");
    let mut file = File::create(&temp).unwrap();
    file.write_all(bytes).unwrap();
    file.sync_all().unwrap();
    fs::rename(&temp, target).unwrap();
    File::open(dir).unwrap().sync_all().unwrap();
}

fn bench_update(root: &Path) {
    println!("## dwp update (Full v5 plans, half completed; median of N runs)\n");
    println!("| tasks | N | update in-process (ms) | floor (ms) | ratio | binary (ms) |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for tasks in [10usize, 1_000, 10_000] {
        let plan = plan_in_progress(root, &format!("PLAN_bench_update_n{tasks}"), tasks);
        let current = tasks as u64 / 2 + 1;
        let runs = if quick() {
            5
        } else if tasks >= 10_000 {
            40
        } else {
            150
        };
        let floor_target = root.join(format!("floor-{tasks}.json"));
        let (mut ours, mut floor) = (Vec::new(), Vec::new());
        for i in 0..runs {
            // Each run changes bytes: the checkpoint note alternates.
            let request = UpdateRequest {
                task: current,
                status: Some(TaskStatus::InProgress),
                checkpoint_note: Some(format!("bench note {}", i % 2)),
                ..UpdateRequest::default()
            };
            let started = Instant::now();
            let outcome = update(&plan, &request).expect("update");
            ours.push(started.elapsed());
            assert!(outcome.changed);
            let bytes = fs::read(plan.join("state.json")).unwrap();
            let started = Instant::now();
            floor_write(&floor_target, &bytes);
            floor.push(started.elapsed());
        }
        let binary = release_binary().map(|dwp| {
            let samples: Vec<Duration> = (0..runs.min(60))
                .map(|i| {
                    let started = Instant::now();
                    let status = Command::new(&dwp)
                        .arg("update")
                        .arg(&plan)
                        .args(["--task", &current.to_string(), "--status", "in_progress"])
                        .args(["--checkpoint-note", &format!("binary note {}", i % 2)])
                        .stdout(Stdio::null())
                        .status()
                        .unwrap();
                    assert!(status.success());
                    started.elapsed()
                })
                .collect();
            median_ms(samples)
        });
        let (ours, floor) = (median_ms(ours), median_ms(floor));
        let binary = binary.map_or("(no release binary)".into(), |ms| format!("{ms:.2}"));
        println!(
            "| {tasks} | {runs} | {ours:.2} | {floor:.2} | {:.2}x | {binary} |",
            ours / floor
        );
    }
    println!();
}

fn bench_contention(root: &Path) {
    let Some(dwp) = release_binary() else {
        println!("## contention: skipped (run `cargo build --release` first)\n");
        return;
    };
    let (writers, each) = if quick() { (8, 3) } else { (8, 25) };
    let plan = plan_in_progress(root, "PLAN_bench_contention", 100);
    let started = Instant::now();
    let threads: Vec<_> = (0..writers)
        .map(|w| {
            let (dwp, plan) = (dwp.clone(), plan.clone());
            std::thread::spawn(move || {
                for r in 0..each {
                    let status = Command::new(&dwp)
                        .arg("update")
                        .arg(&plan)
                        .args(["--task", "51", "--status", "in_progress", "--wait", "30"])
                        .args(["--gate", &format!("check-w{w}-r{r}|0|{r} passed, 0 failed")])
                        .stdout(Stdio::null())
                        .status()
                        .unwrap();
                    assert!(status.success());
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let elapsed = started.elapsed();
    let state: serde_json::Value =
        serde_json::from_slice(&fs::read(plan.join("state.json")).unwrap()).unwrap();
    let records = state["tasks"][50]["gates"].as_array().map_or(0, Vec::len);
    let total = writers * each;
    assert_eq!(records, total, "every update is in the state");
    println!("## contention: {writers} processes x {each} `dwp update --wait 30` on one plan\n");
    println!(
        "{total} updates, all {records} records present, {:.2} s, {:.0} updates/s\n",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64()
    );
}

/// One table row per plan size: the median of `check` in process (which asserts the plan is
/// clean) and of `dwp COMMAND PLAN` through the release binary, on Full v5 plans half completed.
fn plan_size_table(
    root: &Path,
    command: &str,
    title: &str,
    runs_by_size: [(usize, usize); 3],
    check: impl Fn(&Path),
) {
    println!("## {title} (Full v5 plans, half completed; median of N runs)\n");
    println!("| tasks | N | in-process (ms) | per 1,000 tasks (ms) | binary (ms) |");
    println!("|---:|---:|---:|---:|---:|");
    for (tasks, runs) in runs_by_size {
        let plan = SynthPlan::new(&format!("PLAN_bench_{command}_n{tasks}"), tasks)
            .completed(tasks / 2)
            .write(root)
            .expect("write plan");
        let runs = if quick() { 3 } else { runs };
        let samples: Vec<Duration> = (0..runs)
            .map(|_| {
                let started = Instant::now();
                check(&plan);
                started.elapsed()
            })
            .collect();
        let ms = median_ms(samples);
        let binary = release_binary().map(|dwp| {
            median_ms(
                (0..runs.min(30))
                    .map(|_| time_binary(&dwp, &[command.as_ref(), plan.as_os_str()], None))
                    .collect(),
            )
        });
        let binary = binary.map_or("(no release binary)".into(), |ms| format!("{ms:.2}"));
        println!(
            "| {tasks} | {runs} | {ms:.2} | {:.2} | {binary} |",
            ms * 1000.0 / tasks as f64
        );
    }
    println!();
}

fn bench_reconcile(root: &Path) {
    let sizes = [(100, 100), (1_000, 100), (10_000, 20)];
    plan_size_table(root, "reconcile", "dwp reconcile (check)", sizes, |plan| {
        let report = reconcile(plan, &ReconcileRequest::default()).expect("reconcile");
        assert!(report.in_sync, "synthetic plans are in sync");
    });
}

fn bench_verify(root: &Path) {
    let sizes = [(100, 60), (1_000, 60), (10_000, 15)];
    plan_size_table(root, "verify", "dwp verify", sizes, |plan| {
        let report = dwp::commands::verify::verify_plan(plan, false);
        assert!(report.findings.is_empty(), "{:?}", report.findings);
    });

    let workspace = root.join("workspace");
    let plans = workspace.join(".dwp").join("plans");
    fs::create_dir_all(&plans).unwrap();
    let count = if quick() { 100 } else { 1_000 };
    for index in 0..count {
        SynthPlan::new(&format!("PLAN_bench_workspace_{index:04}"), 10)
            .completed(index % 10)
            .write(&plans)
            .expect("write plan");
    }
    let Some(dwp) = release_binary() else {
        println!("(no release binary: workspace skipped)\n");
        return;
    };
    let runs = if quick() { 2 } else { 7 };
    let args = ["verify".as_ref(), "--all".as_ref(), workspace.as_os_str()];
    // Once with --json: every plan was verified, and every one is conformant.
    let output = Command::new(&dwp)
        .args(args)
        .arg("--json")
        .output()
        .expect("dwp runs");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let plans = report["verify"]["plans"].as_array().expect("plans");
    assert_eq!(
        plans.len(),
        count,
        "every plan of the workspace is verified"
    );
    assert!(plans.iter().all(|p| p["verdict"] == "CONFORMANT"));
    let parallel = median_ms((0..runs).map(|_| time_binary(&dwp, &args, None)).collect());
    let pinned = has_taskset().then(|| {
        median_ms(
            (0..runs)
                .map(|_| time_binary(&dwp, &args, Some("0")))
                .collect(),
        )
    });
    println!("## dwp verify --all (a workspace of {count} plans of 10 tasks; median of {runs})\n");
    println!("| cores | binary (ms) | per plan (ms) |");
    println!("|---|---:|---:|");
    println!(
        "| all ({}) | {parallel:.0} | {:.2} |",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        parallel / count as f64
    );
    if let Some(pinned) = pinned {
        println!(
            "| one (`taskset -c 0`) | {pinned:.0} | {:.2} |",
            pinned / count as f64
        );
        println!("\nspeed-up on all cores: {:.2}x\n", pinned / parallel);
    }
}

/// Wall time of one run of the release binary (optionally pinned with `taskset -c CPUS`); it
/// must succeed.
fn time_binary(dwp: &Path, args: &[&std::ffi::OsStr], cpus: Option<&str>) -> Duration {
    let mut command = match cpus {
        Some(cpus) => {
            let mut c = Command::new("taskset");
            c.args(["-c", cpus]).arg(dwp);
            c
        }
        None => Command::new(dwp),
    };
    let started = Instant::now();
    let status = command.args(args).stdout(Stdio::null()).status().unwrap();
    let took = started.elapsed();
    assert!(status.success(), "{dwp:?} {args:?} failed");
    took
}

fn has_taskset() -> bool {
    Command::new("taskset")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wants = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    let root = bench_root();
    if wants("update") {
        bench_update(root.path());
    }
    if wants("contention") {
        bench_contention(root.path());
    }
    if wants("reconcile") {
        bench_reconcile(root.path());
    }
    if wants("verify") {
        bench_verify(root.path());
    }
}
