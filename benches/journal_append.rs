//! The cost of dwp's journal append against the durable-write floor, in one process, round by
//! round (docs/PERFORMANCE.md, "A record plan's journal append"). `harness = false`: a plain
//! `main`.
//!
//! Each round appends one event line to the plan's live `journal.ndjson` twice, in an order that
//! alternates, and cuts the file back to its first length after each (untimed), so every append
//! meets the journal as it was given:
//!
//! - the floor: open the journal to append, read it whole (the next seq is above its last
//!   line's), write the line, `fdatasync`, close; what `benches/append_floor.c` does as a
//!   process;
//! - dwp's store: take the plan's lock (`.ledger.lock`, the public ledger's), open and read the
//!   journal under it (`JournalFile::read_locked`), append the line (the collision check, the
//!   write, `fdatasync`), release the lock. Judging the event is the rules' work, not the
//!   append's: the whole `dwp update` rows of the same page measure it.
//!
//! It prints each one's median and the median of the per-round ratio (store / floor), and the
//! median of the lock alone (taken and released, nothing appended) beside them.
//!
//! Run: `cargo bench --bench journal_append --no-run`, then the printed executable with
//! `PLAN_DIR ROUNDS`, the plan on the disk whose `fdatasync` is to be measured.

use dwp::store::journal_file::JournalFile;
use dwp::store::lock_dir;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// A journal line of the size a gate's refusal has, numbered `seq`.
fn line(seq: u64) -> Vec<u8> {
    format!(
        "{{\"actor\":{{\"identity\":\"dwp\",\"kind\":\"helper\"}},\"contract_id\":\"{}\",\"plan\":\"PLAN_bench\",\"reason\":\"criteria without in-window accepted evidence: AC-bench\",\"schema\":\"https://deepworkplan.com/schema/journal-event/v7.json\",\"seq\":{seq},\"stage\":\"gate\",\"subject\":\"T-bench\",\"ts\":\"2026-12-07T00:00:00Z\",\"type\":\"refusal\"}}\n",
        "0".repeat(64)
    )
    .into_bytes()
}

/// The seq after the last line's of `bytes` (its line count: only the length matters here).
fn next_seq(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|b| **b == b'\n').count() as u64 + 1
}

fn floor(journal: &Path) -> Duration {
    let started = Instant::now();
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .open(journal)
        .expect("the journal opens");
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).expect("the journal reads");
    file.write_all(&line(next_seq(&bytes)))
        .expect("the line is written");
    file.sync_data().expect("fdatasync");
    drop(file);
    started.elapsed()
}

fn store(plan: &Path, journal: &Path) -> Duration {
    let started = Instant::now();
    let lock = lock_dir::acquire(&lock_dir::ledger_target(plan), Duration::ZERO)
        .expect("the plan's lock is free");
    let (mut file, bytes) = JournalFile::read_locked(journal, plan, &lock).expect("it reads");
    file.append(&line(next_seq(&bytes))).expect("it appends");
    drop(file);
    lock.release().expect("the lock is released");
    started.elapsed()
}

fn lock_alone(plan: &Path) -> Duration {
    let started = Instant::now();
    let lock = lock_dir::acquire(&lock_dir::ledger_target(plan), Duration::ZERO)
        .expect("the plan's lock is free");
    lock.release().expect("the lock is released");
    started.elapsed()
}

/// Cut the journal back to `length` bytes and make that durable, untimed.
fn cut(journal: &Path, length: u64) {
    let file = File::options().write(true).open(journal).expect("it opens");
    file.set_len(length).expect("it is cut");
    file.sync_all().expect("fsync");
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let (Some(plan), Some(rounds)) = (args.first(), args.get(1).and_then(|r| r.parse().ok()))
    else {
        eprintln!("usage: journal_append PLAN_DIR ROUNDS");
        std::process::exit(2);
    };
    let plan = Path::new(plan);
    let journal = plan.join("journal.ndjson");
    let length = std::fs::metadata(&journal)
        .expect("the plan has a journal")
        .len();
    let events = next_seq(&std::fs::read(&journal).expect("it reads")) - 1;
    let (mut floors, mut stores, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let mut locks = Vec::new();
    for round in 0..rounds {
        let timed = |store_first: bool| {
            let took = match store_first {
                true => store(plan, &journal),
                false => floor(&journal),
            };
            cut(&journal, length);
            took.as_secs_f64() * 1e3
        };
        let (store_ms, floor_ms) = match round % 2 == 0 {
            true => (timed(true), timed(false)),
            false => {
                let floor_ms = timed(false);
                (timed(true), floor_ms)
            }
        };
        locks.push(lock_alone(plan).as_secs_f64() * 1e3);
        floors.push(floor_ms);
        stores.push(store_ms);
        ratios.push(store_ms / floor_ms);
    }
    println!("journal of {events} events ({length} bytes), {rounds} rounds");
    println!("  floor          {:8.3} ms median", median(floors));
    println!("  dwp's store    {:8.3} ms median", median(stores));
    println!(
        "  store / floor  {:8.2}x (median of the rounds' ratios)",
        median(ratios)
    );
    println!("  the lock alone {:8.3} ms median", median(locks));
}
