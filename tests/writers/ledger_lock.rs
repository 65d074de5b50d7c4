//! A record plan's lock is the public ledger's own `.ledger.lock`, so that dwp and the ledger,
//! writing the same plan, exclude each other: `dwp lock status` and `dwp lock recover` read the
//! ledger's owner record (`{epoch_ts, host, identity, pid, ts}`, no `command`, no `started_at`)
//! as a present owner, judge it by its process and never by its age, and every lock dwp takes
//! carries the fields the ledger needs to honour it. A stand-in of the ledger's own acquire,
//! run by python3, checks the last from the ledger's side.

use crate::common::{
    Run, changed_paths, dwp_in, fixture_copy, hint_command, tree_digest, writing_nothing,
};
use dwp::store::lock_dir::{LEDGER_LOCK, ledger_target, try_acquire};
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use tempfile::TempDir;

/// A record plan (DWP v7, in progress) in its own temporary folder.
fn record_plan() -> (TempDir, PathBuf) {
    let (root, name) = fixture_copy("record-valid-v7-in-progress");
    let plan = root.path().join(name);
    (root, plan)
}

fn ledger_lock(plan: &Path) -> PathBuf {
    plan.join(LEDGER_LOCK)
}

/// `dwp lock SUB PLAN ARGS...` run from the plan's parent.
fn lock(sub: &str, plan: &Path, args: &[&str]) -> Run {
    let mut all = vec!["lock", sub, plan.to_str().expect("utf-8 path")];
    all.extend(args);
    dwp_in(plan.parent().expect("parent"), &all)
}

/// `time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())` now, `seconds_ago` back.
fn ledger_ts(seconds_ago: i64) -> String {
    (chrono::Utc::now() - chrono::Duration::seconds(seconds_ago))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// `time.time()`, `seconds_ago` back, as Python prints a float.
fn ledger_epoch(seconds_ago: i64) -> String {
    format!("{}.5", chrono::Utc::now().timestamp() - seconds_ago)
}

/// The ledger's `owner.json` for `pid` on `host`, in the bytes its `json.dump(payload, fh,
/// sort_keys=True)` writes.
fn ledger_owner(pid: u32, host: &str, ts: &str, epoch_ts: &str) -> String {
    format!(
        r#"{{"epoch_ts": {epoch_ts}, "host": "{host}", "identity": "dwp-ledger/7.0 pid:{pid}", "pid": {pid}, "ts": "{ts}"}}"#
    )
}

/// Lay the ledger's lock as its acquire does (`mkdir`, then `owner.json`), naming `pid` on this
/// host; returns the bytes written.
fn lay_ledger_lock(plan: &Path, pid: u32, ts: &str, epoch_ts: &str) -> String {
    let owner = ledger_owner(pid, &dwp::store::lock_dir::host_name(), ts, epoch_ts);
    fs::create_dir(ledger_lock(plan)).expect("create .ledger.lock");
    fs::write(ledger_lock(plan).join("owner.json"), &owner).expect("write owner.json");
    owner
}

/// A pid no process has: a short process's, once it has been waited for.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().expect("spawn true");
    let pid = child.id();
    child.wait().expect("wait for true");
    pid
}

/// A live process of this test's (`sleep`), killed and reaped when dropped.
struct Sleeper(Child);

impl Sleeper {
    fn start() -> Sleeper {
        Sleeper(
            Command::new("sleep")
                .arg("60")
                .spawn()
                .expect("spawn sleep"),
        )
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn progress(plan: &Path) -> String {
    fs::read_to_string(plan.join("PROGRESS.md")).expect("PROGRESS.md")
}

// ---------------------------------------------------------------------------------------------
// dwp reads the ledger's lock
// ---------------------------------------------------------------------------------------------

#[test]
fn a_free_record_plan_is_reported_by_the_ledgers_lock() {
    // Rule: a record plan's lock is `.ledger.lock`; status reads it and writes nothing.
    let (_root, plan) = record_plan();
    let run = writing_nothing(&plan, "dwp lock status", || lock("status", &plan, &[]));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with("free: "), "{run:?}");
    assert!(run.stdout.contains(LEDGER_LOCK), "{run:?}");
    let json = lock("status", &plan, &["--json"]).payload();
    assert_eq!(json["held"], false, "{json:#}");
    assert!(
        json["lock"].as_str().unwrap().ends_with(LEDGER_LOCK),
        "{json:#}"
    );
}

#[test]
fn lock_status_names_the_ledgers_live_owner() {
    // Rule: the ledger's record is a present owner, named by its identity, judged alive.
    let (_root, plan) = record_plan();
    let sleeper = Sleeper::start();
    let pid = sleeper.pid();
    lay_ledger_lock(&plan, pid, &ledger_ts(0), &ledger_epoch(0));

    let run = writing_nothing(&plan, "dwp lock status", || lock("status", &plan, &[]));
    assert_eq!(run.code, 0, "{run:?}");
    let first = run.stdout.lines().next().unwrap_or_default();
    assert!(first.starts_with("held: "), "{run:?}");
    assert!(first.contains(LEDGER_LOCK), "{run:?}");
    assert!(first.contains(&format!("pid {pid} ")), "{run:?}");
    assert!(
        first.contains(&format!("`dwp-ledger/7.0 pid:{pid}`")),
        "{run:?}"
    );
    assert!(first.ends_with(", alive)"), "{run:?}");

    let json = lock("status", &plan, &["--json"]).payload();
    let holder = &json["holder"];
    assert_eq!(holder["record"], "present", "{json:#}");
    assert_eq!(holder["liveness"], "alive", "{json:#}");
    assert_eq!(holder["owner"]["pid"], pid, "{json:#}");
    assert_eq!(
        holder["owner"]["identity"],
        format!("dwp-ledger/7.0 pid:{pid}"),
        "{json:#}"
    );
    assert!(holder["owner"]["epoch_ts"].is_number(), "{json:#}");
}

#[test]
fn lock_status_says_a_dead_ledger_owner_is_gone() {
    // Rule: a pid no process has on this host is a dead owner.
    let (_root, plan) = record_plan();
    let pid = dead_pid();
    lay_ledger_lock(&plan, pid, &ledger_ts(5), &ledger_epoch(5));
    let run = lock("status", &plan, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains(&format!("pid {pid} ")), "{run:?}");
    assert!(run.stdout.contains("process gone"), "{run:?}");
    let json = lock("status", &plan, &["--json"]).payload();
    assert_eq!(json["holder"]["liveness"], "dead", "{json:#}");
}

// ---------------------------------------------------------------------------------------------
// dwp recovers the ledger's lock only when its owner is provably gone
// ---------------------------------------------------------------------------------------------

#[test]
fn lock_recover_removes_a_dead_ledger_owners_lock() {
    // Rule: a lock whose owner is provably gone is removed, and nothing else changes.
    let (_root, plan) = record_plan();
    lay_ledger_lock(&plan, dead_pid(), &ledger_ts(5), &ledger_epoch(5));
    let before = tree_digest(&plan);
    let run = lock("recover", &plan, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("removed: its owner process is gone"),
        "{run:?}"
    );
    assert!(!ledger_lock(&plan).exists(), "{run:?}");
    let changed = changed_paths(&before, &tree_digest(&plan));
    assert!(
        changed.iter().all(|p| p.starts_with(LEDGER_LOCK)),
        "only the lock went: {changed:?}"
    );
}

#[test]
fn lock_recover_never_removes_a_live_ledger_owners_lock_however_old() {
    // Rule: age alone never proves an owner dead; the ledger would break this lock (its
    // epoch_ts is an hour old), dwp does not, even forced.
    let (_root, plan) = record_plan();
    let sleeper = Sleeper::start();
    let laid = lay_ledger_lock(&plan, sleeper.pid(), &ledger_ts(0), &ledger_epoch(3_600));
    let before = progress(&plan);
    for args in [&[][..], &["--force", "--reason", "looks stale"][..]] {
        let run = writing_nothing(&plan, "a refused dwp lock recover", || {
            lock("recover", &plan, args)
        });
        assert_eq!(run.code, 3, "{args:?}: {run:?}");
        assert!(run.stderr.contains("alive"), "{args:?}: {run:?}");
        let kept = fs::read_to_string(ledger_lock(&plan).join("owner.json")).unwrap();
        assert_eq!(kept, laid, "the ledger's bytes are untouched");
    }
    assert_eq!(progress(&plan), before, "nothing recorded");
}

#[test]
fn lock_recover_force_on_a_record_plan_records_why_and_takes_the_ledgers_lock() {
    // Rule: another host's lock is removed only when forced, its reason appended to
    // PROGRESS.md, and the writer that completes that entry takes the ledger's lock, not
    // state.json.lock (held here by this test: taking it would wait 30 s and fail).
    let (_root, plan) = record_plan();
    let owner = ledger_owner(4242, "another-host", &ledger_ts(60), &ledger_epoch(60));
    fs::create_dir(ledger_lock(&plan)).unwrap();
    fs::write(ledger_lock(&plan).join("owner.json"), &owner).unwrap();

    let refused = lock("recover", &plan, &[]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(refused.stderr.contains("another host"), "{refused:?}");
    let hinted = hint_command(&refused);
    assert!(hinted.contains("--force --reason TEXT"), "{hinted}");
    assert!(ledger_lock(&plan).exists(), "kept without --force");

    let state_lock = try_acquire(&plan.join("state.json")).expect("hold state.json.lock");
    let before = progress(&plan);
    let forced = lock(
        "recover",
        &plan,
        &["--force", "--reason", "the other host is down"],
    );
    assert_eq!(forced.code, 0, "{forced:?}");
    assert!(forced.stdout.contains("removed: forced"), "{forced:?}");
    assert!(!ledger_lock(&plan).exists(), "removed");
    let after = progress(&plan);
    let added = after.strip_prefix(before.as_str()).expect("appended");
    assert_eq!(added.lines().count(), 1, "one line: {added}");
    assert!(added.contains("the other host is down"), "{added}");
    assert!(added.contains("dwp-ledger/7.0 pid:4242"), "{added}");
    assert!(
        !plan.join(".dwp-intent.json").exists(),
        "the entry completed"
    );
    drop(state_lock);
}

// ---------------------------------------------------------------------------------------------
// The ledger honours dwp's lock
// ---------------------------------------------------------------------------------------------

#[test]
fn the_lock_dwp_takes_carries_the_ledgers_fields() {
    // Rule: the ledger breaks a lock whose record lacks a numeric epoch_ts or an int pid, so
    // dwp's record carries identity, pid, ts, epoch_ts (now) and host.
    let (_root, plan) = record_plan();
    let guard = try_acquire(&ledger_target(&plan)).expect("take the ledger's lock");
    assert_eq!(guard.path(), ledger_lock(&plan));
    let owner: Value =
        serde_json::from_slice(&fs::read(ledger_lock(&plan).join("owner.json")).unwrap()).unwrap();
    let pid = std::process::id();
    assert_eq!(owner["pid"], pid, "{owner:#}");
    assert_eq!(
        owner["host"],
        dwp::store::lock_dir::host_name(),
        "{owner:#}"
    );
    let identity = owner["identity"].as_str().expect("identity");
    assert!(identity.starts_with("dwp/"), "{owner:#}");
    assert!(identity.ends_with(&format!(" pid:{pid}")), "{owner:#}");
    let ts = owner["ts"].as_str().expect("ts");
    chrono::NaiveDateTime::parse_from_str(ts, "%Y-%m-%dT%H:%M:%SZ").expect("the ledger's ts");
    let epoch = owner["epoch_ts"].as_f64().expect("a number");
    let now = chrono::Utc::now().timestamp() as f64;
    assert!((now - epoch).abs() < 5.0, "{owner:#}");
    drop(guard);
    assert!(!ledger_lock(&plan).exists(), "released");
}

/// A stand-in of the ledger's `CooperativeLock.acquire`: `mkdir`; on an existing lock, its
/// stale rules (no readable record, `epoch_ts` missing or over 900 s old, or an int `pid` not
/// its own that `os.kill(pid, 0)` finds gone) break it with `rmtree` and retry once; else it
/// refuses with the ledger's message. Once acquired it prints `acquired` and keeps the lock.
const LEDGER_ACQUIRE: &str = r#"
import json, os, shutil, sys, time
lock = sys.argv[1]

def owner():
    try:
        with open(os.path.join(lock, 'owner.json')) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None

def stale(info):
    if not isinstance(info, dict):
        return True
    try:
        if time.time() - float(info.get('epoch_ts', 0)) > 900:
            return True
    except (TypeError, ValueError):
        return True
    pid = info.get('pid')
    if isinstance(pid, int) and pid != os.getpid():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            pass
    return False

for attempt in range(2):
    try:
        os.mkdir(lock)
    except FileExistsError:
        info = owner()
        if attempt == 0 and stale(info):
            shutil.rmtree(lock, ignore_errors=True)
            continue
        info = info if isinstance(info, dict) else {}
        sys.exit('another writer holds the plan lock: %s (started %s)'
                 % (info.get('identity'), info.get('ts')))
    payload = {'identity': 'dwp-ledger/7.0 pid:%d' % os.getpid(), 'pid': os.getpid(),
               'ts': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
               'epoch_ts': time.time(), 'host': os.uname().nodename}
    with open(os.path.join(lock, 'owner.json'), 'w') as fh:
        json.dump(payload, fh, sort_keys=True)
    print('acquired')
    sys.exit(0)
sys.exit('the lock was taken again while it was broken')
"#;

/// Run the ledger's acquire on `lock`; python3 is required (the test fails without it).
fn ledger_acquire(lock: &Path) -> Run {
    let output = Command::new("python3")
        .args(["-c", LEDGER_ACQUIRE])
        .arg(lock)
        .output()
        .unwrap_or_else(|e| {
            panic!("python3 is required for this test (it stands in for the ledger): {e}")
        });
    Run::lossy(&output)
}

#[test]
fn the_ledger_refuses_a_lock_dwp_holds_and_breaks_it_once_its_owner_is_dead() {
    // Rule: the ledger treats dwp's lock as held while its owner runs (the record satisfies
    // its stale rules), and breaks it only once the record names a dead pid.
    let (_root, plan) = record_plan();
    let guard = try_acquire(&ledger_target(&plan)).expect("take the ledger's lock");
    let owner_file = ledger_lock(&plan).join("owner.json");
    let held = fs::read(&owner_file).unwrap();
    let record: Value = serde_json::from_slice(&held).unwrap();

    let refused = ledger_acquire(&ledger_lock(&plan));
    assert_eq!(refused.code, 1, "{refused:?}");
    let expected = format!(
        "another writer holds the plan lock: {} (started {})",
        record["identity"].as_str().unwrap(),
        record["ts"].as_str().unwrap()
    );
    assert_eq!(refused.stderr.trim_end(), expected, "{refused:?}");
    assert_eq!(
        fs::read(&owner_file).unwrap(),
        held,
        "dwp's lock is untouched"
    );

    // The same record naming a dead pid: the ledger breaks it and takes the lock.
    let mut dead = record.clone();
    dead["pid"] = dead_pid().into();
    fs::write(&owner_file, serde_json::to_vec(&dead).unwrap()).unwrap();
    let taken = ledger_acquire(&ledger_lock(&plan));
    assert_eq!(taken.code, 0, "{taken:?}");
    assert_eq!(taken.stdout.trim(), "acquired", "{taken:?}");
    let now: Value = serde_json::from_slice(&fs::read(&owner_file).unwrap()).unwrap();
    assert!(
        now["identity"]
            .as_str()
            .unwrap()
            .starts_with("dwp-ledger/7.0 "),
        "{now:#}"
    );

    // dwp's guard finds its lock taken from it and leaves the ledger's alone.
    drop(guard);
    assert!(owner_file.is_file(), "the ledger's lock stays");
    let status = lock("status", &plan, &["--json"]).payload();
    assert_eq!(status["holder"]["record"], "present", "{status:#}");
}

// ---------------------------------------------------------------------------------------------
// dwp's writer honours the ledger's lock
// ---------------------------------------------------------------------------------------------

// Issue #33, lock interop: while the ledger holds a record plan's lock, dwp's journal writer
// writes nothing, and says who holds it.
#[test]
fn the_record_writer_writes_nothing_while_the_ledger_holds_the_lock() {
    let (_root, plan) = record_plan();
    // A snapshot the writer would regenerate, were the plan free.
    fs::write(plan.join("state.json"), b"{}\n").expect("stale state.json");
    let sleeper = Sleeper::start();
    lay_ledger_lock(&plan, sleeper.pid(), &ledger_ts(1), &ledger_epoch(1));
    let path = plan.to_str().expect("utf-8 path");
    let run = writing_nothing(&plan, "dwp reconcile --write", || {
        dwp_in(
            plan.parent().expect("parent"),
            &["reconcile", path, "--write", "--wait", "0"],
        )
    });
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(run.stderr.contains("dwp-ledger/7.0"), "{}", run.stderr);
    assert!(run.stderr.contains(LEDGER_LOCK), "{}", run.stderr);
}
