//! A record plan's journal under contention (issue #33): eight dwp writers appending 25 events
//! each lose none and tear none; and dwp's writers and the public ledger's, taking turns at the
//! same `.ledger.lock`, interleave whole events with no seq taken twice.

use crate::common;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `dwp` at the test clock with the caller's HOME, to spawn.
fn dwp() -> Command {
    common::dwp().inherit_home().command()
}

/// A v7 record plan with a task started whose criterion has no evidence: each `dwp update
/// --status completed` of it appends one refusal.
fn record_plan() -> (tempfile::TempDir, PathBuf) {
    let (root, name) = common::fixture_copy("record-valid-v7-in-progress");
    let plan = root.path().join(name);
    (root, plan)
}

/// One refused completion: one `refusal` event appended, waiting for the lock as long as needed.
fn refused_completion(plan: &Path) -> Result<(), String> {
    let output = dwp()
        .args([
            "update",
            plan.to_str().unwrap(),
            "--task",
            "T-convert-guides",
        ])
        .args(["--status", "completed", "--wait", "60"])
        .output()
        .unwrap();
    match output.status.code() {
        Some(1) if String::from_utf8_lossy(&output.stderr).contains("is not complete") => Ok(()),
        _ => Err(String::from_utf8_lossy(&output.stderr).into_owned()),
    }
}

/// `count` dwp writers at once, 25 refused completions each: what failed.
fn dwp_writers(plan: &Path, count: usize) -> Vec<String> {
    let writers: Vec<_> = (0..count)
        .map(|_| {
            let plan = plan.to_path_buf();
            std::thread::spawn(move || {
                (0..25)
                    .filter_map(|_| refused_completion(&plan).err())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect()
}

/// Every line of the journal, each of which must be a JSON event.
fn events(plan: &Path) -> Vec<Value> {
    let bytes = std::fs::read(plan.join("journal.ndjson")).unwrap();
    assert!(bytes.ends_with(b"\n"), "the journal ends with a whole line");
    bytes
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            serde_json::from_slice(line)
                .unwrap_or_else(|e| panic!("a torn line ({e}): {}", String::from_utf8_lossy(line)))
        })
        .collect()
}

/// The journal's seqs run 1, 2, 3, ... with none taken twice and none skipped.
fn assert_contiguous(events: &[Value]) {
    let seqs: Vec<i64> = events.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    let expected: Vec<i64> = (1..=seqs.len() as i64).collect();
    assert_eq!(seqs, expected, "seq strictly increasing, one apart");
}

fn assert_conformant(plan: &Path) {
    let run = dwp()
        .args(["verify", plan.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}");
    assert!(
        stdout.contains("state.json agrees with the journal"),
        "{stdout}"
    );
    assert!(!plan.join(".ledger.lock").exists());
}

#[test]
fn eight_concurrent_record_writers_lose_no_event_and_tear_none() {
    let (_root, plan) = record_plan();
    let before = events(&plan).len();
    let failures = dwp_writers(&plan, 8);
    assert!(failures.is_empty(), "writers failed: {failures:#?}");
    let events = events(&plan);
    assert_eq!(
        events.len(),
        before + 200,
        "every one of the 200 events is there"
    );
    assert_contiguous(&events);
    assert_conformant(&plan);
}

/// A stand-in of the public ledger's writer (its `CooperativeLock` and `_append_raw`): take
/// `.ledger.lock` by `mkdir` with its owner record, judge a held lock as the ledger does (stale
/// when its record has no `epoch_ts` or an old one, or its pid is gone), append one
/// `observation` numbered after the last seq, framed as the ledger frames it, and release. It
/// retries a held lock where the ledger would refuse, and waits for an owner record not written
/// yet (where the ledger would break the lock), so that only dwp's side is under test.
const LEDGER: &str = r#"
import json, os, shutil, sys, time
plan, contract_id, writes = sys.argv[1], sys.argv[2], int(sys.argv[3])
lock = os.path.join(plan, '.ledger.lock')
def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
def stale(info):
    try:
        age = time.time() - float(info.get('epoch_ts', 0))
    except (TypeError, ValueError):
        return True
    pid = info.get('pid')
    return age > 900 or (isinstance(pid, int) and pid != os.getpid() and not alive(pid))
def acquire():
    while True:
        try:
            os.mkdir(lock)
        except FileExistsError:
            try:
                with open(os.path.join(lock, 'owner.json'), encoding='utf-8') as fh:
                    info = json.load(fh)
            except (OSError, ValueError):
                time.sleep(0.002)
                continue
            if stale(info):
                shutil.rmtree(lock, ignore_errors=True)
            else:
                time.sleep(0.002)
            continue
        with open(os.path.join(lock, 'owner.json'), 'w', encoding='utf-8') as fh:
            json.dump({'identity': 'dwp-ledger/7.0 pid:%d' % os.getpid(), 'pid': os.getpid(),
                       'ts': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
                       'epoch_ts': time.time(), 'host': os.uname().nodename}, fh, sort_keys=True)
        return
journal = os.path.join(plan, 'journal.ndjson')
for n in range(writes):
    acquire()
    try:
        with open(journal, 'rb') as fh:
            last = max(json.loads(line)['seq'] for line in fh.read().split(b'\n') if line.strip())
        event = {'schema': 'https://deepworkplan.com/schema/journal-event/v7.json',
                 'type': 'observation', 'seq': last + 1, 'ts': '2026-06-09T16:42:10Z',
                 'plan': os.path.basename(plan), 'contract_id': contract_id,
                 'actor': {'kind': 'agent', 'identity': 'ledger-stand-in'},
                 'statement': 'ledger write %d of pid %d' % (n, os.getpid()), 'trust': 'asserted'}
        with open(journal, 'ab') as fh:
            fh.write((json.dumps(event, sort_keys=True, separators=(',', ':')) + '\n').encode())
            fh.flush()
            os.fsync(fh.fileno())
    finally:
        shutil.rmtree(lock, ignore_errors=True)
"#;

/// Run the ledger's stand-in: `writes` observations appended to `plan`.
fn ledger_writer(plan: &Path, contract_id: &str, writes: usize) -> std::process::Child {
    Command::new("python3")
        .args(["-c", LEDGER, plan.to_str().unwrap(), contract_id])
        .arg(writes.to_string())
        .spawn()
        .unwrap_or_else(|e| panic!("python3 is required (it stands in for the ledger): {e}"))
}

// Lock interop under load: dwp's writers and the ledger's exclude each other through the one
// `.ledger.lock`, so their events interleave whole, numbered without a gap or a repeat.
#[test]
fn dwp_and_the_ledger_writing_at_once_interleave_whole_events() {
    let (_root, plan) = record_plan();
    let before = events(&plan);
    let contract_id = before[0]["contract_id"].as_str().unwrap().to_owned();
    let ledgers: Vec<_> = (0..4)
        .map(|_| ledger_writer(&plan, &contract_id, 25))
        .collect();
    let failures = dwp_writers(&plan, 4);
    for mut ledger in ledgers {
        assert!(ledger.wait().unwrap().success(), "a ledger stand-in failed");
    }
    assert!(failures.is_empty(), "dwp writers failed: {failures:#?}");
    let events = events(&plan);
    assert_eq!(events.len(), before.len() + 200);
    assert_contiguous(&events);
    let count = |kind: &str| {
        events[before.len()..]
            .iter()
            .filter(|e| e["type"] == kind)
            .count()
    };
    assert_eq!((count("refusal"), count("observation")), (100, 100));
    // The ledger leaves state.json to its own `project`: dwp's next write makes it agree.
    let write = dwp()
        .args(["reconcile", plan.to_str().unwrap(), "--write"])
        .output()
        .unwrap();
    assert!(
        write.status.success(),
        "{}",
        String::from_utf8_lossy(&write.stderr)
    );
    assert_conformant(&plan);
}
