//! Benchmarks of the file contract (issue #8). `harness = false`: a plain `main` that measures
//! and prints Markdown tables.
//!
//! Run: `cargo build --release && cargo bench --bench contract` (see `docs/PERFORMANCE.md`).
//! `DWP_BENCH_QUICK=1` runs a few iterations; `DWP_BENCH_DIR` picks the folder the repositories
//! are written to (fsync cost depends on its filesystem); a filter word runs one section
//! (`record`, `check`).
//!
//! - record: median wall time of the release binary `dwp contract record`, from a PostToolUse
//!   payload on stdin and from `--path`, on plans of 10 and 10,000 tasks; next to it, measured
//!   interleaved: the process floor (`dwp --version`), the in-process read of the plan name and
//!   task statuses, the in-process append (OS lock, one write, fsync, unlock) and its floor (a
//!   plain append and fsync of the same line).
//! - check: median of `check` on a task declaring 200 files (4 KiB each, one required symbol,
//!   each edited and recorded), in process and through the release binary.

use dwp::commands::contract::Op;
use dwp::commands::contract::check::{CheckOutcome, check};
use dwp::commands::contract::format::Entry;
use dwp::commands::contract::ledger::append;
use dwp::commands::update::{UpdateRequest, update};
use dwp::plan::model::TaskStatus;
use dwp::synth::SynthPlan;
use std::fs::{self, OpenOptions};
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

fn p90_ms(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples[samples.len() * 9 / 10].as_secs_f64() * 1000.0
}

fn release_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let binary = exe.parent()?.parent()?.join("dwp");
    binary.exists().then_some(binary)
}

fn bench_root() -> tempfile::TempDir {
    match std::env::var_os("DWP_BENCH_DIR") {
        Some(dir) => tempfile::tempdir_in(dir).expect("DWP_BENCH_DIR is writable"),
        None => tempfile::tempdir().expect("temp dir"),
    }
}

/// A repository `root/name` holding `.dwp/plans/PLAN_name` with `tasks` tasks, half completed
/// and the next in progress. Returns (repository root, plan folder, task in progress).
fn repo(root: &Path, name: &str, tasks: usize) -> (PathBuf, PathBuf, u64) {
    let repo = fs::canonicalize(root).unwrap().join(name);
    let plans = repo.join(".dwp/plans");
    fs::create_dir_all(&plans).unwrap();
    let plan = SynthPlan::new(&format!("PLAN_bench_{name}"), tasks)
        .completed(tasks / 2)
        .write(&plans)
        .expect("write plan");
    let task = tasks as u64 / 2 + 1;
    let start = UpdateRequest {
        task,
        status: Some(TaskStatus::InProgress),
        ..UpdateRequest::default()
    };
    update(&plan, &start).expect("start the task");
    fs::create_dir_all(repo.join("src")).unwrap();
    (repo, plan, task)
}

fn run_binary(dwp: &Path, args: &[&str], cwd: &Path, stdin: Option<&[u8]>) -> Duration {
    let started = Instant::now();
    let mut child = Command::new(dwp)
        .args(args)
        .current_dir(cwd)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    if let Some(bytes) = stdin {
        child.stdin.take().unwrap().write_all(bytes).unwrap();
    }
    let status = child.wait().unwrap();
    let elapsed = started.elapsed();
    assert!(status.success(), "dwp {args:?} failed");
    elapsed
}

fn bench_record(root: &Path) {
    println!("## dwp contract record (median / p90 of N runs, ms)\n");
    let Some(dwp) = release_binary() else {
        println!("skipped: run `cargo build --release` first\n");
        return;
    };
    println!(
        "| tasks | N | binary, payload on stdin | binary, --path | `dwp --version` | in-process state read | in-process append | floor (append + fsync) |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for tasks in [10usize, 10_000] {
        let (repo, plan, task) = repo(root, &format!("record_n{tasks}"), tasks);
        fs::write(repo.join("src/a.rs"), "fn a() {}\n").unwrap();
        let plan_arg = plan.to_str().unwrap();
        let runs = if quick() { 5 } else { 200 };
        let payload = serde_json::json!({
            "session_id": "bench", "cwd": repo, "hook_event_name": "PostToolUse",
            "tool_name": "Edit", "tool_input": {"file_path": repo.join("src/a.rs"),
            "old_string": "a", "new_string": "b"}, "tool_response": {"success": true}
        })
        .to_string();
        let (mut by_payload, mut by_flag, mut ours, mut floor) = (vec![], vec![], vec![], vec![]);
        let (mut startup, mut state_read) = (vec![], vec![]);
        let ledger = plan
            .join("ledger")
            .join(format!("task-{task}.ledger.jsonl"));
        let floor_path = repo.join("floor.jsonl");
        for _ in 0..runs {
            by_payload.push(run_binary(
                &dwp,
                &["contract", "record", plan_arg],
                &repo,
                Some(payload.as_bytes()),
            ));
            by_flag.push(run_binary(
                &dwp,
                &[
                    "contract", "record", plan_arg, "--path", "src/a.rs", "--op", "modify",
                    "--tool", "Edit",
                ],
                &repo,
                None,
            ));
            startup.push(run_binary(&dwp, &["--version"], &repo, None));
            let started = Instant::now();
            let tasks_read = dwp::commands::contract::PlanTasks::load_quick(&plan).unwrap();
            state_read.push(started.elapsed());
            assert_eq!(tasks_read.select(None).unwrap(), Some(task));
            let entry = Entry {
                ts: "2026-06-09T16:42:10Z".into(),
                tool: "Edit".into(),
                path: "src/a.rs".into(),
                op: Op::Modify,
                task_id: task,
                plan: format!("PLAN_bench_record_n{tasks}"),
                session: Some("bench".into()),
            };
            let started = Instant::now();
            append(&plan, &ledger, &entry).unwrap();
            ours.push(started.elapsed());
            let mut line = serde_json::to_vec(&entry).unwrap();
            line.push(b'\n');
            let started = Instant::now();
            let mut file = OpenOptions::new()
                .append(true)
                .create(true)
                .open(&floor_path)
                .unwrap();
            file.write_all(&line).unwrap();
            file.sync_data().unwrap();
            floor.push(started.elapsed());
        }
        let cell = |s: Vec<Duration>| format!("{:.2} / {:.2}", median_ms(s.clone()), p90_ms(s));
        println!(
            "| {tasks} | {runs} | {} | {} | {} | {} | {} | {} |",
            cell(by_payload),
            cell(by_flag),
            cell(startup),
            cell(state_read),
            cell(ours),
            cell(floor)
        );
    }
    println!();
}

fn bench_check(root: &Path) {
    const FILES: usize = 200;
    println!(
        "## dwp contract check, a task declaring {FILES} files (median / p90 of N runs, ms)\n"
    );
    let (repo, plan, task) = repo(root, "check_200", 10);
    let body: String = (0..100)
        .map(|i| format!("fn helper_{i}() -> u32 {{ {i} }}\n"))
        .collect();
    let mut specs = Vec::new();
    for i in 0..FILES {
        fs::write(repo.join(format!("src/f{i}.rs")), &body).unwrap();
        specs.push(format!("src/f{i}.rs:symbol_{i}"));
    }
    let mut request = dwp::commands::contract::declare::DeclareRequest {
        task,
        modify: specs,
        ..Default::default()
    };
    request.root = Some(repo.clone());
    dwp::commands::contract::declare::declare(&plan, &request).expect("declare");
    let ledger = plan
        .join("ledger")
        .join(format!("task-{task}.ledger.jsonl"));
    for i in 0..FILES {
        fs::write(
            repo.join(format!("src/f{i}.rs")),
            format!("{body}pub fn symbol_{i}() {{}}\n"),
        )
        .unwrap();
        let entry = Entry {
            ts: "2026-06-09T16:42:10Z".into(),
            tool: "Edit".into(),
            path: format!("src/f{i}.rs"),
            op: Op::Modify,
            task_id: task,
            plan: "PLAN_bench_check_200".into(),
            session: None,
        };
        append(&plan, &ledger, &entry).unwrap();
    }
    let runs = if quick() { 5 } else { 100 };
    let mut ours = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        let (outcome, _) = check(&plan, None).expect("check");
        ours.push(started.elapsed());
        assert!(
            matches!(outcome, CheckOutcome::Checked(ref r) if r.passed && r.expectations.len() == FILES)
        );
    }
    let binary = release_binary().map(|dwp| {
        let samples: Vec<Duration> = (0..runs)
            .map(|_| {
                run_binary(
                    &dwp,
                    &["contract", "check", plan.to_str().unwrap()],
                    &repo,
                    None,
                )
            })
            .collect();
        format!("{:.2} / {:.2}", median_ms(samples.clone()), p90_ms(samples))
    });
    println!("| files | N | in process | binary |");
    println!("|---:|---:|---:|---:|");
    println!(
        "| {FILES} | {runs} | {:.2} / {:.2} | {} |\n",
        median_ms(ours.clone()),
        p90_ms(ours),
        binary.unwrap_or_else(|| "(no release binary)".into())
    );
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wants = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    let root = bench_root();
    if wants("record") {
        bench_record(root.path());
    }
    if wants("check") {
        bench_check(root.path());
    }
}
