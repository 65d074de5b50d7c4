//! Every performance target of issue 16, each with its measured figure and met/missed.
//! `harness = false`: a plain `main` that measures and prints Markdown tables.
//!
//! Run: `cargo build --release && cargo bench --bench targets` (see `docs/PERFORMANCE.md`).
//! `DWP_BENCH_QUICK=1` runs a few iterations of everything; `DWP_BENCH_DIR` picks the folder the
//! plans are written to (fsync cost depends on its filesystem); a word as first argument runs
//! only the sections whose name contains it (`update`, `verify`, `terminal`, `validate`,
//! `startup`, `contention`, `growth`). `DWP_BENCH_REFERENCE_VERIFY` (a command with `{plan}`,
//! e.g. `python3 /path/check.py {plan}`) adds the reference checker to the verify section.
//! `DWP_BENCH_BINARY` times another `dwp` binary, e.g. the one `cargo dist` builds
//! (`target/x86_64-unknown-linux-gnu/release/dwp`).
//!
//! Every figure but `validate`'s is the wall time of a whole process (`target/release/dwp`, found
//! from this executable's path), timed with `Instant` around `Command::output()` (`status()` with
//! null stdio for `startup`); figures are medians of interleaved runs (A, B, A, B...) after one
//! untimed warm-up round. The floor is `benches/floor.c`, compiled here with `cc` into
//! `target/release/bench-floor`: read state.json, SHA-256 it, write a temp file (O_EXCL), fsync,
//! rename, fsync the folder; what no durable writer can skip. Without `cc` (or OpenSSL) the
//! floor-relative rows say "skipped". Files put back between rounds are written and fsynced
//! untimed, so no timed fsync flushes them.
//!
//! - update: `dwp update` start and complete (with a gate) of task n/2+1 on Full plans of 10,
//!   100, 1,000 and 10,000 tasks, half completed, against the floor on the same state.json.
//! - verify: `dwp verify` of one plan of 1,000 and 10,000 tasks (absolute stand-ins for the
//!   reference checker, or the ratio to it), and `dwp verify --all` of 1,000 plans of 20 tasks.
//! - terminal: the close of a plan of 1,000 and 10,000 tasks, by `dwp update --tick` of the last
//!   task and by `dwp finalize`, each publishing; the plan folder is put back between rounds.
//!   Each close is also set against `benches/publication_floor.c` (compiled into
//!   `target/release/bench-publication-floor`), the least a crash-safe publication does with no
//!   check: every artifact read and hashed before and after, the marker, the state and the
//!   receipt each written durably. Its own ratio to the floor is a context row, marked when it
//!   is already above the terminal line's limit.
//! - validate: `dwp::commands::validate::validate` of 10,000 tasks in process against reading and
//!   parsing the state with `serde_json` alone; the binary's wall time for information.
//! - startup: `dwp --version` next to an empty C program (process start on this machine).
//! - contention: 8 threads x 25 `dwp update --wait 60` adding gate records to one task of a
//!   10,000-task plan; total wall time, and every record present.
//! - growth: the 10,000/1,000 ratio of the medians above.

use dwp::synth::SynthPlan;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Display;
use std::fs::{self, File};
use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The gate recorded by every completion.
const GATE: &str = "cargo test|0|12 passed; 0 failed";
const CRATE_DIR: &str = env!("CARGO_MANIFEST_DIR");

// ---------------------------------------------------------------------------------------------
// Verdicts and tables
// ---------------------------------------------------------------------------------------------

enum Verdict {
    Met,
    Missed,
    /// Not measured, and why.
    Skipped(String),
    /// Measured nothing because the setup failed (e.g. the plan is not conformant).
    Failed(String),
    /// A figure printed for context, not a target.
    Info,
    /// A floor that is already above the target's limit: no program can meet that target here.
    Unreachable,
}

impl Verdict {
    fn of(met: bool) -> Verdict {
        if met { Verdict::Met } else { Verdict::Missed }
    }
}

impl Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Met => f.write_str("met"),
            Verdict::Missed => f.write_str("**missed**"),
            Verdict::Skipped(why) => write!(f, "skipped ({why})"),
            Verdict::Failed(why) => write!(f, "**{why}**"),
            Verdict::Info => f.write_str("(context)"),
            Verdict::Unreachable => f.write_str("**the limit is below this floor**"),
        }
    }
}

/// One line of a section's table: a target and what was measured against it.
struct Row {
    what: String,
    runs: usize,
    /// The medians the figure comes from.
    detail: String,
    figure: String,
    target: String,
    verdict: Verdict,
}

impl Row {
    /// A ratio `value` that must not exceed `limit` (times `of`, e.g. "the floor").
    fn ratio(what: String, runs: usize, detail: String, value: f64, limit: f64, of: &str) -> Row {
        Row {
            what,
            runs,
            detail,
            figure: format!("{value:.2}x"),
            target: format!("≤ {limit}x {of}").trim_end().to_owned(),
            verdict: Verdict::of(value <= limit),
        }
    }

    /// A time `value_ms` against `limit_ms`.
    fn time(what: String, runs: usize, detail: String, value_ms: f64, limit_ms: f64) -> Row {
        Row {
            what,
            runs,
            detail,
            figure: format!("{} ms", ms(value_ms)),
            target: format!("≤ {limit_ms} ms"),
            verdict: Verdict::of(value_ms <= limit_ms),
        }
    }

    /// A target that was not measured.
    fn not_measured(what: String, target: String, verdict: Verdict) -> Row {
        Row {
            what,
            runs: 0,
            detail: String::new(),
            figure: "—".to_owned(),
            target,
            verdict,
        }
    }
}

fn print_table(rows: &[Row]) {
    println!("| target line | N | measured (medians) | figure | target | verdict |");
    println!("|---|---:|---|---:|---|---|");
    for row in rows {
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            row.what,
            match row.runs {
                0 => "—".to_owned(),
                n => n.to_string(),
            },
            row.detail,
            row.figure,
            row.target,
            row.verdict
        );
    }
    println!();
}

fn print_summary(sections: &[(&str, Vec<Row>)]) {
    println!("## Summary: every target of issue 16\n");
    println!("| section | target line | figure | target | verdict |");
    println!("|---|---|---:|---|---|");
    for (section, rows) in sections {
        for row in rows.iter().filter(|r| !matches!(r.verdict, Verdict::Info)) {
            println!(
                "| {section} | {} | {} | {} | {} |",
                row.what, row.figure, row.target, row.verdict
            );
        }
    }
    println!();
}

/// `10000` as `10,000`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// A time in milliseconds, with as many decimals as make sense.
fn ms(value: f64) -> String {
    match value {
        v if v < 10.0 => format!("{v:.2}"),
        v if v < 100.0 => format!("{v:.1}"),
        v => format!("{v:.0}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Measuring
// ---------------------------------------------------------------------------------------------

/// The median of `samples`, in milliseconds.
fn median(mut samples: Vec<Duration>) -> f64 {
    assert!(!samples.is_empty(), "no samples");
    samples.sort();
    let n = samples.len();
    let middle = if n % 2 == 1 {
        samples[n / 2]
    } else {
        (samples[n / 2 - 1] + samples[n / 2]) / 2
    };
    middle.as_secs_f64() * 1e3
}

/// `rounds` timed rounds after one untimed warm-up; each round returns one time per step. The
/// samples of each step.
fn interleave<const K: usize>(
    rounds: usize,
    mut round: impl FnMut() -> [Duration; K],
) -> [Vec<Duration>; K] {
    round();
    let mut samples: [Vec<Duration>; K] = std::array::from_fn(|_| Vec::with_capacity(rounds));
    for _ in 0..rounds {
        for (step, took) in round().into_iter().enumerate() {
            samples[step].push(took);
        }
    }
    samples
}

/// Wall time of one whole process, and what it printed.
fn timed(command: &mut Command) -> (Duration, Output) {
    let started = Instant::now();
    let output = command.output().expect("the program starts");
    (started.elapsed(), output)
}

/// Wall time of one whole process, which must exit 0.
fn timed_ok(command: &mut Command) -> Duration {
    let (took, output) = timed(command);
    assert!(output.status.success(), "{}", failure(command, &output));
    took
}

fn failure(command: &Command, output: &Output) -> String {
    format!(
        "{command:?} exited {}\nstdout: {}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stdout).trim(),
        String::from_utf8_lossy(&output.stderr).trim()
    )
}

// ---------------------------------------------------------------------------------------------
// The bench: knobs, programs, plans
// ---------------------------------------------------------------------------------------------

struct Bench {
    quick: bool,
    filter: Option<String>,
    root: tempfile::TempDir,
    dwp: Option<PathBuf>,
    /// `benches/floor.c`, compiled; why not, when `cc` failed.
    floor: Result<PathBuf, String>,
    /// `benches/publication_floor.c`, compiled: the terminal rows' second yardstick.
    publication_floor: Result<PathBuf, String>,
    /// `int main(void){return 0;}`, compiled.
    empty: Result<PathBuf, String>,
    /// Medians other sections' rows feed the growth section: (line, tasks) → ms.
    medians: HashMap<(&'static str, usize), f64>,
}

impl Bench {
    fn new() -> Bench {
        let quick = std::env::var("DWP_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
        // cargo passes `--bench`; anything not starting with `-` is the filter.
        let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
        let root = match std::env::var_os("DWP_BENCH_DIR") {
            Some(dir) => tempfile::tempdir_in(dir).expect("DWP_BENCH_DIR is writable"),
            None => tempfile::tempdir().expect("temp dir"),
        };
        let tools = release_dir();
        let empty_source = root.path().join("empty.c");
        fs::write(&empty_source, "int main(void) { return 0; }\n").expect("write empty.c");
        Bench {
            quick,
            filter,
            dwp: std::env::var_os("DWP_BENCH_BINARY")
                .map(PathBuf::from)
                .or_else(|| Some(tools.join("dwp")))
                .filter(|p| p.is_file()),
            floor: compile(
                &Path::new(CRATE_DIR).join("benches/floor.c"),
                &tools.join("bench-floor"),
                &["-lcrypto"],
            ),
            publication_floor: compile(
                &Path::new(CRATE_DIR).join("benches/publication_floor.c"),
                &tools.join("bench-publication-floor"),
                &["-pthread", "-lcrypto"],
            ),
            empty: compile(&empty_source, &tools.join("bench-empty"), &[]),
            root,
            medians: HashMap::new(),
        }
    }

    fn wants(&self, section: &str) -> bool {
        self.filter.as_deref().is_none_or(|f| section.contains(f))
    }

    /// `full` rounds, or `quick` in quick mode.
    fn rounds(&self, full: usize, quick: usize) -> usize {
        if self.quick { quick } else { full }
    }

    fn dir(&self) -> &Path {
        self.root.path()
    }

    /// A command running the release binary with `args`.
    fn dwp(&self, args: &[&str], plan: &Path) -> Command {
        let mut command = Command::new(self.dwp.as_ref().expect("checked by main"));
        command.arg(args[0]).arg(plan).args(&args[1..]);
        command
    }

    /// One run of the publication floor on `plan`; zero (never reported) when it did not
    /// compile.
    fn time_publication_floor(&self, plan: &Path) -> Duration {
        match &self.publication_floor {
            Ok(floor) => timed_ok(Command::new(floor).arg(plan)),
            Err(_) => Duration::ZERO,
        }
    }

    /// One run of the floor on `state`; zero (never reported) when it did not compile.
    fn time_floor(&self, state: &Path) -> Duration {
        match &self.floor {
            Ok(floor) => timed_ok(Command::new(floor).arg(state)),
            Err(_) => Duration::ZERO,
        }
    }

    /// `took` (`label`, ms) over the floor's median against `limit`; skipped without a floor.
    fn floor_row(
        &self,
        what: String,
        runs: usize,
        label: &str,
        took: f64,
        floor: Vec<Duration>,
        limit: f64,
    ) -> Row {
        let Err(why) = &self.floor else {
            let floor = median(floor);
            let detail = format!("{label} {} ms, floor {} ms", ms(took), ms(floor));
            return Row::ratio(what, runs, detail, took / floor, limit, "the floor");
        };
        Row {
            what,
            runs,
            detail: format!("{label} {} ms, no floor", ms(took)),
            figure: "skipped".to_owned(),
            target: format!("≤ {limit}x the floor"),
            verdict: Verdict::Skipped(format!("no floor: {}", why.lines().next().unwrap_or(""))),
        }
    }

    /// A Full v5 plan of `tasks` tasks with the first `completed` completed.
    fn plan(&self, name: &str, tasks: usize, completed: usize) -> PathBuf {
        SynthPlan::new(name, tasks)
            .completed(completed)
            .write(self.dir())
            .expect("write the plan")
    }
}

/// `target/release`: this executable is `target/release/deps/targets-*`.
fn release_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("own path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/release/deps")
        .to_path_buf()
}

/// `cc -O2 -o OUT SOURCE LIBS`: the executable, or why not.
fn compile(source: &Path, out: &Path, libs: &[&str]) -> Result<PathBuf, String> {
    let output = Command::new("cc")
        .arg("-O2")
        .arg("-o")
        .arg(out)
        .arg(source)
        .args(libs)
        .output()
        .map_err(|e| format!("cc could not run: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cc {} failed: {}",
            source.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(out.to_path_buf())
}

/// Write `bytes` to `path` and fsync it (untimed restores).
fn write_synced(path: &Path, bytes: &[u8]) {
    let mut file = File::create(path).expect("create");
    file.write_all(bytes).expect("write");
    file.sync_all().expect("fsync");
}

// ---------------------------------------------------------------------------------------------
// The machine note
// ---------------------------------------------------------------------------------------------

/// Line `line` (0-based) of what a program prints, or `unknown`.
fn nth_line(line: usize, program: &str, args: &[&str], dir: &Path) -> String {
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|text| text.lines().nth(line).map(|l| l.trim().to_owned()))
        .unwrap_or_else(|| "unknown".to_owned())
}

fn first_line(program: &str, args: &[&str], dir: &Path) -> String {
    nth_line(0, program, args, dir)
}

fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_owned())
}

fn cpu_model() -> String {
    fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, model)| model.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

fn print_machine(bench: &Bench) {
    let here = Path::new(CRATE_DIR);
    let dirty = !Command::new("git")
        .args(["diff", "--quiet", "HEAD"])
        .current_dir(here)
        .status()
        .is_ok_and(|s| s.success());
    println!("# dwp: the targets of issue 16\n");
    println!("- nproc: {}", first_line("nproc", &[], here));
    println!("- CPU: {}", cpu_model());
    let plans = bench.dir().to_string_lossy();
    println!(
        "- plans under {plans} (filesystem: `stat -f -c %T` {}, `df` {})",
        first_line("stat", &["-f", "-c", "%T", &plans], here),
        nth_line(1, "df", &["--output=fstype", &plans], here)
    );
    println!("- load average at start: {}", load_average());
    println!("- {}", first_line("rustc", &["-V"], here));
    println!(
        "- commit: {}{}",
        first_line("git", &["rev-parse", "--short", "HEAD"], here),
        if dirty {
            " (with uncommitted changes)"
        } else {
            ""
        }
    );
    match &bench.dwp {
        Some(dwp) => println!("- binary: {}", dwp.display()),
        None => println!("- binary: none; run `cargo build --release` first (binary rows skipped)"),
    }
    match &bench.floor {
        Ok(floor) => println!("- floor: {} (from benches/floor.c)", floor.display()),
        Err(why) => println!("- floor: none, floor-relative rows skipped: {why}"),
    }
    match &bench.publication_floor {
        Ok(floor) => println!(
            "- publication floor: {} (from benches/publication_floor.c)",
            floor.display()
        ),
        Err(why) => println!("- publication floor: none, its context rows skipped: {why}"),
    }
    if bench.quick {
        println!("- QUICK mode (DWP_BENCH_QUICK): a few rounds, figures are rough");
    }
    if let Some(filter) = &bench.filter {
        println!("- filter: `{filter}`");
    }
    println!();
}

// ---------------------------------------------------------------------------------------------
// update
// ---------------------------------------------------------------------------------------------

fn section_update(bench: &mut Bench) -> Vec<Row> {
    let sizes = [
        (10, 60, 1.3),
        (100, 60, 1.3),
        (1_000, 40, 1.5),
        (10_000, 15, 2.0),
    ];
    let mut rows = Vec::new();
    for (tasks, full, limit) in sizes {
        rows.extend(update_rows(bench, tasks, bench.rounds(full, 3), limit));
    }
    rows
}

/// Start, then complete, task n/2+1 of a plan half completed, each followed by the floor on the
/// same state.json; the pristine state put back before every round.
fn update_rows(bench: &mut Bench, tasks: usize, rounds: usize, limit: f64) -> Vec<Row> {
    let plan = bench.plan(&format!("PLAN_bench_update_n{tasks}"), tasks, tasks / 2);
    let state = plan.join("state.json");
    let pristine = fs::read(&state).expect("state.json");
    let task = (tasks / 2 + 1).to_string();
    let start = ["update", "--task", &task, "--status", "in_progress"];
    let complete = [
        "update",
        "--task",
        &task,
        "--status",
        "completed",
        "--gate",
        GATE,
    ];
    let [started, floor_a, completed, floor_b] = interleave(rounds, || {
        write_synced(&state, &pristine);
        [
            timed_ok(&mut bench.dwp(&start, &plan)),
            bench.time_floor(&state),
            timed_ok(&mut bench.dwp(&complete, &plan)),
            bench.time_floor(&state),
        ]
    });
    let floor = [floor_a, floor_b].concat();
    let (started, completed) = (median(started), median(completed));
    bench
        .medians
        .insert(("update (complete)", tasks), completed);
    [("start", started), ("complete", completed)]
        .into_iter()
        .map(|(verb, took)| {
            let what = format!("`dwp update` ({verb}), {} tasks", thousands(tasks));
            bench.floor_row(what, rounds, verb, took, floor.clone(), limit)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// verify
// ---------------------------------------------------------------------------------------------

fn section_verify(bench: &mut Bench) -> Vec<Row> {
    let reference = std::env::var("DWP_BENCH_REFERENCE_VERIFY").ok();
    if reference.is_none() {
        println!(
            "The reference checker is not in this repository: the rows hold the absolute \
             stand-ins for \"≥ 20x faster than the reference\" (set DWP_BENCH_REFERENCE_VERIFY \
             to measure the ratio).\n"
        );
    }
    let mut rows = Vec::new();
    for (tasks, full, limit) in [(1_000, 40, 18.0), (10_000, 10, 400.0)] {
        let plan = bench.plan(&format!("PLAN_bench_verify_n{tasks}"), tasks, tasks / 2);
        let rounds = bench.rounds(full, 3);
        rows.extend(verify_rows(
            bench,
            &plan,
            tasks,
            rounds,
            limit,
            reference.as_deref(),
        ));
    }
    rows.push(verify_all_row(bench));
    rows
}

/// `dwp verify PLAN` against its stand-in limit, and against the reference when one is given.
fn verify_rows(
    bench: &mut Bench,
    plan: &Path,
    tasks: usize,
    rounds: usize,
    limit: f64,
    reference: Option<&str>,
) -> Vec<Row> {
    let what = format!("`dwp verify`, {} tasks", thousands(tasks));
    let target = format!("≤ {limit} ms");
    if let Err(why) = runs_ok(&mut bench.dwp(&["verify"], plan)) {
        println!("{why}\n");
        return vec![Row::not_measured(
            what,
            target,
            Verdict::Failed("not conformant".into()),
        )];
    }
    let Some(template) = reference else {
        let [ours] = interleave(rounds, || [timed_ok(&mut bench.dwp(&["verify"], plan))]);
        let ours = median(ours);
        bench.medians.insert(("verify", tasks), ours);
        return vec![Row::time(
            what,
            rounds,
            format!("{} ms", ms(ours)),
            ours,
            limit,
        )];
    };
    let versus = format!("reference / `dwp verify`, {} tasks", thousands(tasks));
    if let Err(why) = runs_ok(&mut reference_command(template, plan)) {
        println!("{why}\n");
        let failed = Verdict::Failed("the reference failed".into());
        return vec![Row::not_measured(versus, "≥ 20x".into(), failed)];
    }
    let [ours, theirs] = interleave(rounds, || {
        [
            timed_ok(&mut bench.dwp(&["verify"], plan)),
            timed_ok(&mut reference_command(template, plan)),
        ]
    });
    let (ours, theirs) = (median(ours), median(theirs));
    bench.medians.insert(("verify", tasks), ours);
    let detail = format!("dwp {} ms, reference {} ms", ms(ours), ms(theirs));
    vec![
        Row::time(what, rounds, detail.clone(), ours, limit),
        Row {
            what: versus,
            runs: rounds,
            detail,
            figure: format!("{:.1}x", theirs / ours),
            target: "≥ 20x".to_owned(),
            verdict: Verdict::of(theirs / ours >= 20.0),
        },
    ]
}

/// Run once, untimed: `Err` with what it printed unless it exits 0.
fn runs_ok(command: &mut Command) -> Result<(), String> {
    let (_, output) = timed(command);
    if output.status.success() {
        Ok(())
    } else {
        Err(failure(command, &output))
    }
}

/// The `DWP_BENCH_REFERENCE_VERIFY` template, split on whitespace, `{plan}` replaced.
fn reference_command(template: &str, plan: &Path) -> Command {
    let plan = plan.to_string_lossy();
    let mut words = template
        .split_whitespace()
        .map(|w| w.replace("{plan}", &plan));
    let mut command = Command::new(
        words
            .next()
            .expect("DWP_BENCH_REFERENCE_VERIFY is a command"),
    );
    command.args(words);
    command
}

/// `dwp verify --all WS` of 1,000 plans of 20 tasks, every core busy.
fn verify_all_row(bench: &mut Bench) -> Row {
    let (count, tasks) = (1_000, 20);
    let what = format!(
        "`dwp verify --all`, {} plans of {tasks} tasks, on both cores",
        thousands(count)
    );
    let workspace = bench.dir().join("workspace");
    let plans = workspace.join(".dwp").join("plans");
    fs::create_dir_all(&plans).expect("workspace");
    for index in 0..count {
        SynthPlan::new(&format!("PLAN_bench_ws_{index:04}"), tasks)
            .completed(index % tasks)
            .write(&plans)
            .expect("write plan");
    }
    if let Err(why) = every_plan_conformant(bench, &workspace, count) {
        println!("{why}\n");
        return Row::not_measured(
            what,
            "≤ 250 ms".into(),
            Verdict::Failed("not conformant".into()),
        );
    }
    let rounds = bench.rounds(15, 2);
    let [all] = interleave(rounds, || {
        [timed_ok(&mut bench.dwp(&["verify", "--all"], &workspace))]
    });
    let all = median(all);
    Row::time(what, rounds, format!("{} ms", ms(all)), all, 250.0)
}

/// `dwp verify --all WS --json` exits 0 and reports `count` plans, every one conformant.
fn every_plan_conformant(bench: &Bench, workspace: &Path, count: usize) -> Result<(), String> {
    let mut command = bench.dwp(&["verify", "--all", "--json"], workspace);
    let (_, output) = timed(&mut command);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("{e}: {}", failure(&command, &output)))?;
    let plans = report["verify"]["plans"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let conformant = plans
        .iter()
        .filter(|p| p["verdict"] == "CONFORMANT")
        .count();
    if output.status.success() && plans.len() == count && conformant == count {
        Ok(())
    } else {
        Err(format!(
            "{} of {count} plans reported, {conformant} conformant\n{}",
            plans.len(),
            failure(&command, &output)
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// terminal
// ---------------------------------------------------------------------------------------------

/// Every file and folder under a plan folder: relative path → bytes (`None`: a folder).
type Tree = BTreeMap<PathBuf, Option<Vec<u8>>>;

fn snapshot(dir: &Path) -> Tree {
    let mut tree = Tree::new();
    let mut folders = vec![PathBuf::new()];
    while let Some(folder) = folders.pop() {
        for entry in fs::read_dir(dir.join(&folder)).expect("list the plan folder") {
            let entry = entry.expect("entry");
            let path = folder.join(entry.file_name());
            if entry.file_type().expect("file type").is_dir() {
                tree.insert(path.clone(), None);
                folders.push(path);
            } else {
                tree.insert(path.clone(), Some(fs::read(entry.path()).expect("read")));
            }
        }
    }
    tree
}

/// Put `dir` back as `pristine` (untimed, fsynced): remove what is new, rewrite what changed.
/// The paths it touched.
fn restore(dir: &Path, pristine: &Tree) -> Vec<String> {
    let now = snapshot(dir);
    let mut touched = Vec::new();
    for (path, entry) in now.iter().filter(|(p, _)| !pristine.contains_key(*p)) {
        let full = dir.join(path);
        // A new file inside a new folder is already gone with it.
        let _ = match entry {
            Some(_) => fs::remove_file(full),
            None => fs::remove_dir_all(full),
        };
        touched.push(format!("{} (new)", path.display()));
    }
    for (path, entry) in pristine.iter().filter(|(p, e)| now.get(*p) != Some(*e)) {
        match entry {
            Some(bytes) => write_synced(&dir.join(path), bytes),
            None => fs::create_dir_all(dir.join(path)).expect("folder"),
        }
        touched.push(path.display().to_string());
    }
    File::open(dir)
        .and_then(|d| d.sync_all())
        .expect("fsync the plan folder");
    touched
}

fn section_terminal(bench: &mut Bench) -> Vec<Row> {
    let mut rows = Vec::new();
    for (tasks, full, limit) in [(1_000, 15, 3.0), (10_000, 5, 5.0)] {
        let rounds = bench.rounds(full, 2);
        let last = tasks.to_string();
        let tick = tick_ready_plan(bench, tasks);
        let args = [
            "update",
            "--task",
            &last,
            "--status",
            "completed",
            "--gate",
            GATE,
            "--tick",
        ];
        let close = Close {
            line: "terminal (update --tick)",
            args: &args,
            tasks,
            rounds,
            limit,
        };
        rows.push(close.row(bench, &tick));
        let finalize = bench.plan(&format!("PLAN_bench_finalize_n{tasks}"), tasks, tasks);
        let close = Close {
            line: "terminal (finalize)",
            args: &["finalize"],
            tasks,
            rounds,
            limit,
        };
        rows.push(close.row(bench, &finalize));
        rows.extend(publication_floor_row(
            bench, &finalize, tasks, rounds, limit,
        ));
    }
    rows
}

/// The publication floor against the floor on one plan: how much of the terminal line's limit a
/// publication that checks nothing already takes. None without either floor.
fn publication_floor_row(
    bench: &Bench,
    plan: &Path,
    tasks: usize,
    rounds: usize,
    limit: f64,
) -> Option<Row> {
    if bench.floor.is_err() || bench.publication_floor.is_err() {
        return None;
    }
    let pristine = snapshot(plan);
    let state = plan.join("state.json");
    let [publication, floor] = interleave(rounds, || {
        restore(plan, &pristine);
        [bench.time_publication_floor(plan), bench.time_floor(&state)]
    });
    restore(plan, &pristine);
    let (publication, floor) = (median(publication), median(floor));
    let ratio = publication / floor;
    Some(Row {
        what: format!("publication floor (no check), {} tasks", thousands(tasks)),
        runs: rounds,
        detail: format!(
            "publication floor {} ms, floor {} ms",
            ms(publication),
            ms(floor)
        ),
        figure: format!("{ratio:.2}x"),
        target: format!("the terminal limit, ≤ {limit}x the floor"),
        verdict: if ratio > limit {
            Verdict::Unreachable
        } else {
            Verdict::Info
        },
    })
}

/// Tasks 1..N-1 completed, N in progress with a passing gate, the markdown authored as done but
/// for task N's box and the Plan Status count, which `--tick` writes (as tests/writers/tick.rs).
fn tick_ready_plan(bench: &Bench, tasks: usize) -> PathBuf {
    let plan = SynthPlan::new(&format!("PLAN_bench_tick_n{tasks}"), tasks)
        .ready_to_publish()
        .write(bench.dir())
        .expect("write the plan");
    let readme = plan.join("README.md");
    let text = fs::read_to_string(&readme).expect("README.md");
    let unticked = text
        .replace(
            &format!("- [x] Task {tasks}:"),
            &format!("- [ ] Task {tasks}:"),
        )
        .replace(
            &format!("Plan Status: {tasks}/{tasks}"),
            &format!("Plan Status: {}/{tasks}", tasks - 1),
        );
    assert_ne!(
        text, unticked,
        "the last box and the Plan Status are authored"
    );
    fs::write(&readme, unticked).expect("write README.md");
    plan
}

/// One way to close a plan, timed against the floor on its state.json.
struct Close<'a> {
    /// The growth section's name for it.
    line: &'static str,
    args: &'a [&'a str],
    tasks: usize,
    rounds: usize,
    limit: f64,
}

impl Close<'_> {
    fn row(&self, bench: &mut Bench, plan: &Path) -> Row {
        let what = format!("{}, {} tasks", self.line, thousands(self.tasks));
        let pristine = snapshot(plan);
        if let Err(why) = self.publishes(bench, plan) {
            println!("{why}\n");
            let failed = Verdict::Failed("did not publish".into());
            let target = format!("≤ {}x the floor", self.limit);
            return Row::not_measured(what, target, failed);
        }
        println!(
            "{}, {} tasks, wrote: {}\n",
            self.line,
            thousands(self.tasks),
            restore(plan, &pristine).join(", ")
        );
        let state = plan.join("state.json");
        let [closed, floor, publication] = interleave(self.rounds, || {
            restore(plan, &pristine);
            let closed = timed_ok(&mut bench.dwp(self.args, plan));
            let floor = bench.time_floor(&state);
            restore(plan, &pristine);
            [closed, floor, bench.time_publication_floor(plan)]
        });
        restore(plan, &pristine);
        let closed = median(closed);
        bench.medians.insert((self.line, self.tasks), closed);
        let mut row = bench.floor_row(what, self.rounds, "close", closed, floor, self.limit);
        if bench.publication_floor.is_ok() {
            let publication = median(publication);
            row.detail += &format!(
                ", publication floor {} ms ({:.2}x of it)",
                ms(publication),
                closed / publication
            );
        }
        row
    }

    /// One untimed run: it exits 0 and writes the receipt.
    fn publishes(&self, bench: &Bench, plan: &Path) -> Result<(), String> {
        runs_ok(&mut bench.dwp(self.args, plan))?;
        let receipt = plan.join("analysis_results/FINALIZATION.json");
        match receipt.is_file() {
            true => Ok(()),
            false => Err(format!("{}: exit 0 but no receipt", self.line)),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// validate
// ---------------------------------------------------------------------------------------------

/// Wall time of `f`, without dropping what it returns.
fn time<T>(f: impl FnOnce() -> T) -> Duration {
    let started = Instant::now();
    let out = black_box(f());
    let took = started.elapsed();
    drop(out);
    took
}

fn section_validate(bench: &mut Bench) -> Vec<Row> {
    let rounds = bench.rounds(30, 3);
    let mut rows = Vec::new();
    let mut plan = PathBuf::new();
    for tasks in [1_000, 10_000] {
        plan = bench.plan(&format!("PLAN_bench_validate_n{tasks}"), tasks, tasks / 2);
        let [binary] = interleave(rounds, || [timed_ok(&mut bench.dwp(&["validate"], &plan))]);
        let binary = median(binary);
        bench.medians.insert(("validate (binary)", tasks), binary);
        rows.push(Row {
            what: format!(
                "`dwp validate`, {} tasks, binary wall time",
                thousands(tasks)
            ),
            runs: rounds,
            detail: String::new(),
            figure: format!("{} ms", ms(binary)),
            target: "(information)".to_owned(),
            verdict: Verdict::Info,
        });
    }
    rows.push(validate_in_process_row(&plan, rounds));
    rows
}

/// `validate` of the 10,000-task plan in process against `serde_json` reading and parsing it.
fn validate_in_process_row(plan: &Path, rounds: usize) -> Row {
    let what = "`dwp validate`, 10,000 tasks, in process".to_owned();
    let findings = dwp::commands::validate::validate(plan).findings;
    if !findings.is_empty() {
        println!("{findings:#?}\n");
        let target = "≤ 2.5x serde_json read + parse".to_owned();
        return Row::not_measured(what, target, Verdict::Failed("not valid".into()));
    }
    let state = plan.join("state.json");
    let [ours, serde] = interleave(rounds, || {
        [
            time(|| dwp::commands::validate::validate(plan)),
            time(|| {
                let bytes = fs::read(&state).expect("state.json");
                serde_json::from_slice::<serde_json::Value>(&bytes).expect("JSON")
            }),
        ]
    });
    let (ours, serde) = (median(ours), median(serde));
    let detail = format!("validate {} ms, serde_json {} ms", ms(ours), ms(serde));
    let of = "serde_json read + parse";
    Row::ratio(what, rounds, detail, ours / serde, 2.5, of)
}

// ---------------------------------------------------------------------------------------------
// startup
// ---------------------------------------------------------------------------------------------

/// Wall time of one process with null stdio, which must exit 0.
fn timed_quiet(command: &mut Command) -> Duration {
    let started = Instant::now();
    let status = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("the program starts");
    let took = started.elapsed();
    assert!(status.success(), "{command:?} exited {status}");
    took
}

fn section_startup(bench: &mut Bench) -> Vec<Row> {
    let rounds = bench.rounds(200, 20);
    let dwp = bench.dwp.clone().expect("checked by main");
    let empty = bench.empty.clone();
    let [version, start] = interleave(rounds, || {
        [
            timed_quiet(Command::new(&dwp).arg("--version")),
            empty
                .as_ref()
                .map_or(Duration::ZERO, |e| timed_quiet(&mut Command::new(e))),
        ]
    });
    let version = median(version);
    let mut rows = vec![Row::time(
        "`dwp --version`, wall".to_owned(),
        rounds,
        format!("{} ms", ms(version)),
        version,
        1.2,
    )];
    rows.push(match &empty {
        Ok(_) => {
            let start = median(start);
            Row {
                what: "empty C program (process start here)".to_owned(),
                runs: rounds,
                detail: String::new(),
                figure: format!("{} ms", ms(start)),
                target: "(information)".to_owned(),
                verdict: Verdict::Info,
            }
        }
        Err(why) => Row::not_measured(
            "empty C program (process start here)".to_owned(),
            "(information)".to_owned(),
            Verdict::Skipped(why.clone()),
        ),
    });
    rows
}

// ---------------------------------------------------------------------------------------------
// contention
// ---------------------------------------------------------------------------------------------

fn section_contention(bench: &mut Bench) -> Vec<Row> {
    let (threads, each) = if bench.quick { (8, 2) } else { (8, 25) };
    let tasks = 10_000;
    let task = (tasks / 2 + 1).to_string();
    let plan = bench.plan(&format!("PLAN_bench_contention_n{tasks}"), tasks, tasks / 2);
    timed_ok(&mut bench.dwp(
        &["update", "--task", &task, "--status", "in_progress"],
        &plan,
    ));
    let started = Instant::now();
    let failures: Vec<String> = std::thread::scope(|scope| {
        let (bench, plan, task) = (&*bench, &plan, &task);
        let workers: Vec<_> = (0..threads)
            .map(|thread| scope.spawn(move || writer(bench, plan, task, thread, each)))
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("worker"))
            .collect()
    });
    let wall = started.elapsed().as_secs_f64();
    if let Some(first) = failures.first() {
        println!("{} updates failed; the first:\n{first}\n", failures.len());
    }
    let total = threads * each;
    let expected: BTreeSet<String> = (0..threads)
        .flat_map(|t| (0..each).map(move |i| format!("cmd-{t}-{i}")))
        .collect();
    let present = gate_commands(&plan, tasks / 2)
        .intersection(&expected)
        .count();
    vec![
        Row {
            what: format!(
                "{threads} x {each} `dwp update --wait 60`, {} tasks, wall",
                thousands(tasks)
            ),
            runs: total,
            detail: format!(
                "{:.0} updates/s, {} failed",
                total as f64 / wall,
                failures.len()
            ),
            figure: format!("{wall:.2} s"),
            target: "≤ 6 s".to_owned(),
            verdict: Verdict::of(wall <= 6.0),
        },
        Row {
            what: "every gate record present afterwards".to_owned(),
            runs: total,
            detail: format!("{present} of {total} records in state.json"),
            figure: format!("{present}/{total}"),
            target: format!("{total}/{total}"),
            verdict: Verdict::of(present == total),
        },
    ]
}

/// One writer thread: `each` updates adding gate `cmd-THREAD-I`; what every failure printed.
fn writer(bench: &Bench, plan: &Path, task: &str, thread: usize, each: usize) -> Vec<String> {
    (0..each)
        .filter_map(|i| {
            let gate = format!("cmd-{thread}-{i}|0|1 passed");
            let args = ["update", "--task", task, "--status", "in_progress"];
            let mut command = bench.dwp(&args, plan);
            command.args(["--gate", &gate, "--wait", "60"]);
            runs_ok(&mut command).err()
        })
        .collect()
}

/// The gate commands recorded on task `index` (0-based) of the plan's state.json.
fn gate_commands(plan: &Path, index: usize) -> BTreeSet<String> {
    let bytes = fs::read(plan.join("state.json")).expect("state.json");
    let state: serde_json::Value = serde_json::from_slice(&bytes).expect("JSON");
    state["tasks"][index]["gates"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .filter_map(|g| g["command"].as_str().map(str::to_owned))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// growth
// ---------------------------------------------------------------------------------------------

fn section_growth(bench: &mut Bench) -> Vec<Row> {
    let lines = [
        ("update (complete)", "update"),
        ("verify", "verify"),
        ("validate (binary)", "validate"),
        ("terminal (update --tick)", "terminal"),
        ("terminal (finalize)", "terminal"),
    ];
    lines
        .into_iter()
        .map(|(line, section)| {
            let what = format!("{line}: 10,000 / 1,000 tasks");
            let medians = |tasks| bench.medians.get(&(line, tasks)).copied();
            match (medians(1_000), medians(10_000)) {
                (Some(small), Some(large)) => {
                    let detail = format!("{} ms → {} ms", ms(small), ms(large));
                    Row::ratio(what, 0, detail, large / small, 11.0, "")
                }
                _ => Row::not_measured(
                    what,
                    "≤ 11x".to_owned(),
                    Verdict::Skipped(format!("needs the {section} section in this run")),
                ),
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------------------------

type Section = fn(&mut Bench) -> Vec<Row>;

fn main() {
    let mut bench = Bench::new();
    print_machine(&bench);
    let sections: [(&str, &str, Section); 7] = [
        (
            "update",
            "update: start and complete vs the floor",
            section_update,
        ),
        (
            "verify",
            "verify: one plan, and a workspace with --all",
            section_verify,
        ),
        (
            "terminal",
            "terminal: closing a plan (publication) vs the floor",
            section_terminal,
        ),
        (
            "validate",
            "validate: in process vs serde_json alone",
            section_validate,
        ),
        ("startup", "startup: `dwp --version`", section_startup),
        (
            "contention",
            "contention: 8 writers on one plan",
            section_contention,
        ),
        (
            "growth",
            "growth: 10,000 / 1,000 tasks, from the medians above",
            section_growth,
        ),
    ];
    let mut done = Vec::new();
    for (name, title, run) in sections {
        if !bench.wants(name) {
            continue;
        }
        println!("## {title}\n");
        let rows = if bench.dwp.is_none() && name != "growth" {
            let missing = Verdict::Skipped("no release binary".into());
            vec![Row::not_measured(name.to_owned(), "—".into(), missing)]
        } else {
            run(&mut bench)
        };
        print_table(&rows);
        done.push((name, rows));
    }
    println!("load average at end: {}\n", load_average());
    print_summary(&done);
}
