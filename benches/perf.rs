//! dwp performance benchmark (`harness = false`: a plain `main` that measures and prints tables).
//!
//! Run: `cargo build --release && cargo bench --bench perf` (see `docs/PERFORMANCE.md`).
//!
//! - `DWP_BENCH_QUICK=1`: a few iterations of everything, for cheap smoke runs.
//! - `DWP_BENCH_DIR=/some/dir`: where the synthetic plans are written (default: the system temp
//!   dir). fsync cost depends on the filesystem under it, so the run prints its type.
//! - One optional argument filters the sections by substring: `validate`, `split`, `binary`,
//!   `store` (e.g. `cargo bench --bench perf -- store`).
//!
//! Every plan is a Full v5 plan from `dwp::synth` of 10, 1,000 and 10,000 tasks, half completed.
//! Times are medians of many iterations; the store write is reported next to its floor (the bare
//! temp/fsync/rename/fsync-dir sequence) measured interleaved in the same run, so the ratio does
//! not depend on how fast this particular disk happened to be.

use dwp::plan::json::parse_strict;
use dwp::plan::model::{DocKind, Generation, State};
use dwp::plan::{Loaded, PlanPaths};
use dwp::rules::invariants;
use dwp::store::{json_file_bytes, read_artifact, sha256_hex, write_atomic};
use dwp::synth::SynthPlan;
use serde::Deserialize;
use std::fs::{self, File};
use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SIZES: [usize; 3] = [10, 1_000, 10_000];
/// Issue 2: `validate` of a 10,000-task state under 50 ms.
const VALIDATE_TARGET_MS: f64 = 50.0;
/// Issue 2: a store write within 1.5x of the floor.
const STORE_TARGET_RATIO: f64 = 1.5;

struct Config {
    quick: bool,
    filter: Option<String>,
}

impl Config {
    fn from_env() -> Config {
        let quick = std::env::var("DWP_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
        // cargo passes `--bench`; anything not starting with `-` is the filter.
        let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
        Config { quick, filter }
    }

    fn wants(&self, section: &str) -> bool {
        self.filter.as_deref().is_none_or(|f| section.contains(f))
    }

    /// Iterations of an in-process validate (or one of its steps) of `n` tasks.
    fn validate_iters(&self, n: usize) -> usize {
        match (self.quick, n) {
            (true, _) => 5,
            (false, 0..=100) => 500,
            (false, 101..=1_000) => 200,
            _ => 40,
        }
    }

    /// Spawns of the release binary on a plan of `n` tasks.
    fn binary_iters(&self, n: usize) -> usize {
        match (self.quick, n) {
            (true, _) => 3,
            (false, 0..=1_000) => 50,
            _ => 30,
        }
    }

    /// Rounds of interleaved store/floor writes for a plan of `n` tasks.
    fn store_rounds(&self, n: usize) -> usize {
        match (self.quick, n) {
            (true, _) => 4,
            (false, 0..=1_000) => 100,
            _ => 40,
        }
    }
}

/// Median, p90 and min of a set of samples.
#[derive(Clone, Copy)]
struct Stats {
    median: Duration,
    p90: Duration,
    min: Duration,
    n: usize,
}

impl Stats {
    fn of(mut samples: Vec<Duration>) -> Stats {
        assert!(!samples.is_empty(), "no samples");
        samples.sort();
        let n = samples.len();
        let median = if n % 2 == 1 {
            samples[n / 2]
        } else {
            (samples[n / 2 - 1] + samples[n / 2]) / 2
        };
        let p90 = samples[(n * 9).div_ceil(10) - 1];
        Stats {
            median,
            p90,
            min: samples[0],
            n,
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median_of(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    let n = samples.len();
    if n % 2 == 1 {
        samples[n / 2]
    } else {
        (samples[n / 2 - 1] + samples[n / 2]) / 2.0
    }
}

/// Time `iters` calls of `f` (after one untimed warm-up call).
fn bench<T>(iters: usize, mut f: impl FnMut() -> T) -> Stats {
    black_box(f());
    let samples = (0..iters)
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed()
        })
        .collect();
    Stats::of(samples)
}

/// Like [`bench`], but with an untimed setup producing the input of each timed call, so that
/// consuming steps (typing a `Value`) are measured without the clone that feeds them.
fn bench_with<I, T>(
    iters: usize,
    mut setup: impl FnMut() -> I,
    mut f: impl FnMut(I) -> T,
) -> Stats {
    black_box(f(setup()));
    let samples = (0..iters)
        .map(|_| {
            let input = setup();
            let start = Instant::now();
            let out = f(input);
            let elapsed = start.elapsed();
            drop(black_box(out));
            elapsed
        })
        .collect();
    Stats::of(samples)
}

/// One synthetic plan folder on disk.
struct Fixture {
    tasks: usize,
    dir: PathBuf,
    state_bytes: usize,
}

fn fixtures(root: &Path) -> Vec<Fixture> {
    SIZES
        .iter()
        .map(|&n| {
            let dir = SynthPlan::new(&format!("PLAN_bench_{n}"), n)
                .completed(n / 2)
                .write(root)
                .expect("write the synthetic plan");
            let state_bytes = fs::metadata(dir.join("state.json"))
                .expect("state.json")
                .len() as usize;
            Fixture {
                tasks: n,
                dir,
                state_bytes,
            }
        })
        .collect()
}

/// The filesystem type under `path`, as `df -T` reports it.
fn filesystem_type(path: &Path) -> String {
    Command::new("df")
        .arg("--output=fstype")
        .arg(path)
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.lines().nth(1).map(|l| l.trim().to_owned()))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Minor page faults of this process so far (`/proc/self/stat`, field 10): memory the
/// allocator returned to the kernel and takes back costs a fault per page touched again.
fn minor_faults() -> Option<u64> {
    let stat = fs::read_to_string("/proc/self/stat").ok()?;
    let after_name = &stat[stat.rfind(')')? + 2..];
    after_name.split_whitespace().nth(7)?.parse().ok()
}

/// `/proc/loadavg`'s first three fields: other work on the machine skews every figure.
fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_owned())
}

fn kib(bytes: usize) -> String {
    format!("{:.0} KiB", bytes as f64 / 1024.0)
}

fn main() {
    let config = Config::from_env();
    let base = std::env::var_os("DWP_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    fs::create_dir_all(&base).expect("create the bench directory");
    let root = tempfile::Builder::new()
        .prefix("dwp-bench.")
        .tempdir_in(&base)
        .expect("create a temp dir for the bench");
    println!("# dwp perf benchmark");
    println!();
    println!(
        "plans under {} (filesystem: {}){}{}",
        root.path().display(),
        filesystem_type(root.path()),
        if config.quick {
            "; QUICK mode (DWP_BENCH_QUICK): few iterations, figures are rough"
        } else {
            ""
        },
        config
            .filter
            .as_deref()
            .map(|f| format!("; filter `{f}`"))
            .unwrap_or_default(),
    );
    println!("load average at start: {}", load_average());
    if std::env::var_os("DWP_BENCH_KEEP").is_some() {
        println!(
            "DWP_BENCH_KEEP: the plans stay under {} for profiling",
            root.path().display()
        );
    }
    let plans = fixtures(root.path());

    let mut validate_10k = None;
    let mut binary_10k = None;
    if config.wants("validate") {
        validate_10k = bench_validate(&config, &plans);
    }
    if config.wants("binary") {
        binary_10k = bench_binary(&config, &plans);
    }
    if config.wants("split") {
        bench_split(&config, &plans);
    }
    let mut ratios = Vec::new();
    if config.wants("store") {
        ratios = bench_store(&config, &plans, root.path());
    }

    if std::env::var_os("DWP_BENCH_KEEP").is_some() {
        let _ = root.keep();
    }

    println!();
    println!("## Targets (issue 2)");
    println!();
    println!("load average at end: {}", load_average());
    println!();
    if let Some(stats) = validate_10k {
        let median = ms(stats.median);
        println!(
            "- validate, 10,000 tasks, in process: median {median:.2} ms vs target < {VALIDATE_TARGET_MS} ms: {}",
            verdict(median < VALIDATE_TARGET_MS)
        );
    }
    if let Some(stats) = binary_10k {
        let median = ms(stats.median);
        println!(
            "- validate, 10,000 tasks, whole binary (process spawn included): median {median:.2} ms vs target < {VALIDATE_TARGET_MS} ms: {}",
            verdict(median < VALIDATE_TARGET_MS)
        );
    }
    for (tasks, ratio) in &ratios {
        println!(
            "- store write, {tasks} tasks: {ratio:.2}x the floor vs target <= {STORE_TARGET_RATIO}x: {}",
            verdict(*ratio <= STORE_TARGET_RATIO)
        );
    }
}

fn verdict(met: bool) -> &'static str {
    if met { "MET" } else { "MISSED" }
}

/// `dwp::commands::validate::validate(plan_dir)` in process. Returns the 10,000-task figures.
fn bench_validate(config: &Config, plans: &[Fixture]) -> Option<Stats> {
    println!();
    println!(
        "## validate (in process: `dwp::commands::validate::validate(&plan_dir)`, schemas already compiled)"
    );
    println!();
    println!(
        "| tasks | state.json | iterations | median ms | p90 ms | min ms | minor page faults per validate |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    let mut ten_k = None;
    for plan in plans {
        let result = dwp::commands::validate::validate(&plan.dir);
        assert!(
            result.findings.is_empty(),
            "the synthetic plan of {} tasks must be valid: {:#?}",
            plan.tasks,
            result.findings
        );
        let faults_before = minor_faults();
        let stats = bench(config.validate_iters(plan.tasks), || {
            let result = dwp::commands::validate::validate(&plan.dir);
            assert!(result.findings.is_empty());
            result
        });
        let faults = match (faults_before, minor_faults()) {
            (Some(before), Some(after)) => {
                format!("{}", (after - before) / (stats.n as u64 + 1))
            }
            _ => "n/a".to_owned(),
        };
        println!(
            "| {} | {} | {} | {:.3} | {:.3} | {:.3} | {faults} |",
            plan.tasks,
            kib(plan.state_bytes),
            stats.n,
            ms(stats.median),
            ms(stats.p90),
            ms(stats.min)
        );
        if plan.tasks == 10_000 {
            ten_k = Some(stats);
        }
    }
    ten_k
}

/// The release binary next to this bench executable: `target/release/deps/perf-*` → `target/release/dwp`.
fn release_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join("dwp");
    bin.is_file().then_some(bin)
}

/// `target/release/dwp validate <plan>` as a process. Returns the 10,000-task figures.
fn bench_binary(config: &Config, plans: &[Fixture]) -> Option<Stats> {
    println!();
    println!(
        "## validate (whole binary: `target/release/dwp validate <plan>`, spawned, wall time)"
    );
    println!();
    let Some(bin) = release_binary() else {
        println!(
            "NOTE: no release binary next to the bench executable; run `cargo build --release` first \
             (with the same CARGO_TARGET_DIR). Skipped."
        );
        return None;
    };
    let run = |args: &[&std::ffi::OsStr]| {
        let status = Command::new(&bin)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("spawn the dwp binary");
        assert!(status.success(), "`dwp {args:?}` failed: {status}");
    };
    let startup = bench(config.binary_iters(10), || run(&["--version".as_ref()]));
    println!("binary: {}", bin.display());
    println!(
        "process floor (`dwp --version`): median {:.3} ms, p90 {:.3} ms ({} runs)",
        ms(startup.median),
        ms(startup.p90),
        startup.n
    );
    println!();
    println!("| tasks | runs | median ms | p90 ms | min ms | median minus process floor ms |");
    println!("|---:|---:|---:|---:|---:|---:|");
    let mut ten_k = None;
    for plan in plans {
        let stats = bench(config.binary_iters(plan.tasks), || {
            run(&["validate".as_ref(), plan.dir.as_os_str()])
        });
        println!(
            "| {} | {} | {:.3} | {:.3} | {:.3} | {:.3} |",
            plan.tasks,
            stats.n,
            ms(stats.median),
            ms(stats.p90),
            ms(stats.min),
            ms(stats.median.saturating_sub(startup.median))
        );
        if plan.tasks == 10_000 {
            ten_k = Some(stats);
        }
    }
    ten_k
}

/// Where validate's time goes: each step of loading `state.json`, timed alone.
fn bench_split(config: &Config, plans: &[Fixture]) {
    println!();
    println!("## Split of validate (state.json steps timed alone, medians in ms)");
    println!();
    println!(
        "Steps of `validate` in order: read → `json::parse_strict` → `schema::validate` → typing \
         (`serde_path_to_error::deserialize::<State>(&value)`, as `plan.rs` does) → sha256 → \
         `invariants::check_state`; plus the manifest (all steps) and dropping the `Value` and \
         `State`. Columns after `sum` are references, not part of validate."
    );
    println!();
    println!(
        "| tasks | validate | read | parse_strict | schema | typing | sha256 | invariants | manifest | drop Value | drop State | sum | schema is_valid | typing, no path tracking | from_slice::<Value> | from_value::<State> | from_slice::<State> |"
    );
    println!(
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    let state_validator = {
        let text = dwp::plan::schemas::embedded(DocKind::State, Generation::V5).text;
        dwp::plan::schemas::compile(&serde_json::from_str(text).unwrap()).unwrap()
    };
    let mut shapes = Vec::new();
    for plan in plans {
        let iters = config.validate_iters(plan.tasks);
        let paths = PlanPaths::new(&plan.dir);
        let bytes = read_artifact(&paths.state, &paths.dir).expect("read state.json");
        let value = parse_strict(&bytes).expect("state.json is JSON");
        assert!(dwp::plan::schemas::validate(DocKind::State, Generation::V5, &value).is_empty());
        let state: State = serde_path_to_error::deserialize(&value).expect("state.json types");
        let loaded = Loaded {
            path: paths.state.clone(),
            file: paths.state.display().to_string(),
            bytes: bytes.clone(),
            sha256: sha256_hex(&bytes),
            generation: Generation::V5,
            doc: state.clone(),
        };
        assert!(invariants::check_state(&loaded).is_empty());

        let whole = bench(iters, || dwp::commands::validate::validate(&plan.dir));
        let read = bench(iters, || read_artifact(&paths.state, &paths.dir).unwrap());
        let parse = bench(iters, || parse_strict(&bytes).unwrap());
        let schema = bench(iters, || {
            let violations = dwp::plan::schemas::validate(DocKind::State, Generation::V5, &value);
            assert!(violations.is_empty());
            violations
        });
        let typing = bench(iters, || {
            serde_path_to_error::deserialize::<_, State>(&value).unwrap()
        });
        let sha = bench(iters, || sha256_hex(&bytes));
        let checks = bench(iters, || {
            let found = invariants::check_state(&loaded);
            assert!(found.is_empty());
            found
        });
        let manifest = bench(iters, || {
            let m = dwp::plan::load_manifest(&paths).unwrap();
            assert!(invariants::check_manifest(&m).is_empty());
            m
        });
        let drop_value = bench_with(iters, || value.clone(), drop);
        let drop_state = bench_with(iters, || state.clone(), drop);
        let parts = [
            read, parse, schema, typing, sha, checks, manifest, drop_value, drop_state,
        ];
        let sum: f64 = parts.iter().map(|s| ms(s.median)).sum();
        let is_valid = bench(iters, || assert!(state_validator.is_valid(&value)));
        let plain_typing = bench(iters, || State::deserialize(&value).unwrap());
        shapes.push((plan.tasks, Shape::of(&value)));
        let loose = bench(iters, || {
            serde_json::from_slice::<serde_json::Value>(&bytes).unwrap()
        });
        let from_value = bench_with(
            iters,
            || value.clone(),
            |v| serde_json::from_value::<State>(v).unwrap(),
        );
        let direct = bench(iters, || serde_json::from_slice::<State>(&bytes).unwrap());
        let mut row = format!("| {} | {:.3} |", plan.tasks, ms(whole.median));
        for part in parts {
            row.push_str(&format!(" {:.3} |", ms(part.median)));
        }
        row.push_str(&format!(" {sum:.3} |"));
        for reference in [is_valid, plain_typing, loose, from_value, direct] {
            row.push_str(&format!(" {:.3} |", ms(reference.median)));
        }
        println!("{row}");
    }

    println!();
    for (tasks, shape) in shapes {
        println!(
            "{tasks} tasks: the parsed state.json holds {} JSON values: {} objects ({} keys), {} arrays, {} strings.",
            shape.values, shape.objects, shape.keys, shape.arrays, shape.strings
        );
    }

    // Once per process (first use of each validator): what the binary pays on every run.
    let compile_iters = if config.quick { 2 } else { 20 };
    let compile = |kind| {
        let text = dwp::plan::schemas::embedded(kind, Generation::V5).text;
        bench(compile_iters, || {
            let schema: serde_json::Value = serde_json::from_str(text).unwrap();
            dwp::plan::schemas::compile(&schema).unwrap()
        })
    };
    let (state_schema, manifest_schema) = (compile(DocKind::State), compile(DocKind::Manifest));
    println!();
    println!(
        "Schema compilation, paid once per process on first use (in the binary's time, not in the in-process rows): \
         state v5 median {:.3} ms, manifest v5 median {:.3} ms ({} runs each).",
        ms(state_schema.median),
        ms(manifest_schema.median),
        state_schema.n
    );
}

/// How many nodes a JSON value holds: what parsing, schema checking and dropping walk over.
#[derive(Default)]
struct Shape {
    values: usize,
    objects: usize,
    keys: usize,
    arrays: usize,
    strings: usize,
}

impl Shape {
    fn of(value: &serde_json::Value) -> Shape {
        let mut shape = Shape::default();
        shape.visit(value);
        shape
    }

    fn visit(&mut self, value: &serde_json::Value) {
        use serde_json::Value;
        self.values += 1;
        match value {
            Value::Object(map) => {
                self.objects += 1;
                self.keys += map.len();
                map.values().for_each(|v| self.visit(v));
            }
            Value::Array(items) => {
                self.arrays += 1;
                items.iter().for_each(|v| self.visit(v));
            }
            Value::String(_) => self.strings += 1,
            _ => {}
        }
    }
}

/// What `write_atomic` does after every write to remove dead writers' temp files: list the
/// folder and match each name against the temp prefix (the same loop as `store::atomic`).
fn sweep(dir: &Path, file_name: &str) -> usize {
    let prefix = format!(".{file_name}.dwp-tmp.");
    fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.strip_prefix(&prefix).is_some())
        })
        .count()
}

/// The bare durable replace: what any correct atomic write must at least do.
fn floor_write(dir: &Path, tmp: &Path, target: &Path, bytes: &[u8]) {
    let mut file = File::create(tmp).expect("create the floor temp file");
    file.write_all(bytes).expect("write");
    file.sync_all().expect("fsync");
    drop(file);
    fs::rename(tmp, target).expect("rename");
    File::open(dir)
        .and_then(|d| d.sync_all())
        .expect("fsync dir");
}

/// `dwp::store::write_atomic` vs the floor, interleaved. Returns (tasks, store/floor) per size.
fn bench_store(config: &Config, plans: &[Fixture], root: &Path) -> Vec<(usize, f64)> {
    println!();
    println!(
        "## Store write vs floor (interleaved in one run; every write changes bytes; medians in ms)"
    );
    println!();
    println!(
        "floor = `File::create(tmp)` + `write_all` + `sync_all` + `rename(tmp, target)` + \
         `File::open(dir)?.sync_all()`. store (plan dir) = `write_atomic(plan/state.json)` in the \
         plan folder with its N task files (the real case); store (bare dir) = the same write in \
         a folder holding only that file. Consecutive writes alternate between two canonical \
         states of equal length that differ in the checkpoint note, so each one replaces bytes. The last three columns time alone the store's own extra work on \
         these bytes: hashing them, reading the old file back to compare (same length), and the \
         sweep of the folder for dead writers' temp files that follows every write."
    );
    println!();
    println!(
        "| tasks | bytes | rounds | floor median | floor p90 | store median | store p90 | store/floor | paired ratio median | store (bare dir) median | bare/floor | sha256 | read+compare | folder sweep |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut ratios = Vec::new();
    for plan in plans {
        let payload = |note: &str| {
            let mut state = SynthPlan::new(&format!("PLAN_bench_{}", plan.tasks), plan.tasks)
                .completed(plan.tasks / 2)
                .state();
            state
                .checkpoint
                .value_mut()
                .expect("half completed: a checkpoint")
                .note = Some(note.to_owned());
            json_file_bytes(&state)
        };
        let payloads = [payload("bench write A"), payload("bench write B")];
        assert_eq!(payloads[0].len(), payloads[1].len());
        assert_ne!(payloads[0], payloads[1]);

        let store_target = plan.dir.join("state.json");
        let floor_target = plan.dir.join("floor.json");
        let floor_tmp = plan.dir.join(".floor.json.tmp");
        let bare_dir = root.join(format!("bare_{}", plan.tasks));
        fs::create_dir_all(&bare_dir).expect("bare dir");
        let bare_target = bare_dir.join("state.json");
        // Start every target on payload B so the first timed write (A) changes bytes.
        for target in [&store_target, &floor_target, &bare_target] {
            fs::write(target, &payloads[1]).expect("seed target");
        }

        let rounds = config.store_rounds(plan.tasks);
        let (mut floor, mut store, mut bare) = (Vec::new(), Vec::new(), Vec::new());
        let mut paired = Vec::new();
        // Two untimed warm-up rounds, then timed rounds; the order of the three writes rotates.
        for round in 0..rounds + 2 {
            let bytes = &payloads[round % 2];
            let mut times = [Duration::ZERO; 3];
            for k in 0..3 {
                let which = (round + k) % 3;
                let start = Instant::now();
                match which {
                    0 => floor_write(&plan.dir, &floor_tmp, &floor_target, bytes),
                    1 => {
                        let outcome =
                            write_atomic(&store_target, &plan.dir, bytes).expect("store write");
                        assert!(outcome.changed, "every store write must change bytes");
                    }
                    _ => {
                        let outcome = write_atomic(
                            &bare_target,
                            bare_target.parent().expect("a folder"),
                            bytes,
                        )
                        .expect("bare store write");
                        assert!(outcome.changed);
                    }
                }
                times[which] = start.elapsed();
            }
            if round >= 2 {
                floor.push(times[0]);
                store.push(times[1]);
                bare.push(times[2]);
                paired.push(times[1].as_secs_f64() / times[0].as_secs_f64());
            }
        }
        // The store's own extra work on these bytes, timed alone.
        let iters = config.validate_iters(plan.tasks);
        let sha = bench(iters, || sha256_hex(&payloads[0]));
        let compare = bench(iters, || fs::read(&store_target).unwrap() == payloads[0]);
        let swept = bench(iters, || sweep(&plan.dir, "state.json"));

        let (floor, store, bare) = (Stats::of(floor), Stats::of(store), Stats::of(bare));
        let ratio = ms(store.median) / ms(floor.median);
        println!(
            "| {} | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.2}x | {:.2}x | {:.3} | {:.2}x | {:.3} | {:.3} | {:.3} |",
            plan.tasks,
            kib(payloads[0].len()),
            floor.n,
            ms(floor.median),
            ms(floor.p90),
            ms(store.median),
            ms(store.p90),
            ratio,
            median_of(&mut paired),
            ms(bare.median),
            ms(bare.median) / ms(floor.median),
            ms(sha.median),
            ms(compare.median),
            ms(swept.median),
        );
        ratios.push((plan.tasks, ratio));
    }
    ratios
}
