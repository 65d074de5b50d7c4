//! The cooperative writer lock: a `state.json.lock` directory, placed in one atomic step.
//!
//! The public reference updater uses the same directory name, so dwp and that tooling exclude
//! each other. dwp also records an `owner.json` inside (pid, host, command line, when the lock was
//! taken, and the process's own start in clock ticks since boot with the boot's id) so a lock left
//! by a killed writer can be judged: same host and the process gone, or its pid now belonging to
//! a process that did not start when the owner did, means the owner is provably dead. A live pid
//! is the owner only when the record proves it; a record that cannot (a start in the future) is
//! *unproven* and yields to `--force`. The guard removes the directory on every exit path the
//! process controls, panics included (unwinding runs `Drop`). Nothing protects against an editor
//! that ignores the lock; the spec claims no more.
//!
//! # A record plan's lock: the ledger's own
//!
//! A record plan (DWP v6/v7) is written by the public ledger, whose lock is the directory
//! `.ledger.lock` in the plan folder ([`LEDGER_LOCK`]), made with `mkdir`, with an `owner.json`
//! of `identity`, `pid`, `ts` (`%Y-%m-%dT%H:%M:%SZ`), `epoch_ts` (epoch seconds, a float) and
//! `host`. dwp locks a record plan with that same directory ([`ledger_target`]), so the two
//! exclude each other, and both read the other's record:
//!
//! - dwp reads the ledger's record as a present owner, its `identity` standing for the command
//!   and its `ts` for when the lock was taken ([`Owner::parse`]), and judges it as it judges an
//!   older dwp's record (by that time, having no start ticks). Its owner is gone only when that
//!   is proven (the pid gone from this host, or reused); never because the lock is old.
//! - The ledger breaks a lock as stale when its record is missing or unparseable, its `epoch_ts`
//!   is missing or over 900 s old, or its `pid` runs nowhere on the ledger's host. So every lock
//!   dwp takes carries those five fields too, taken at the same instant as `started_at`. A dwp
//!   writer holding a record plan's lock past 900 s would lose it to the ledger; its guard then
//!   finds the path no longer names its directory and leaves what stands there alone.
//!
//! # Moving a lock directory: why no live writer's lock is ever moved
//!
//! Two processes move a lock directory away from its path: its owner releasing it, and `dwp lock
//! recover` removing one whose owner is gone. Several recoverers may run at once (the lock-held
//! hint tells every waiting agent to recover), while writers take the freed path. A rename by
//! path is not conditional, so a recoverer that judged lock A dead and then renames the path may
//! move lock B, a live writer's, placed since: B's writer and a third one then both write, and
//! one update is lost. The protocol that excludes it:
//!
//! 1. A mover opens the directory (`O_DIRECTORY | O_NOFOLLOW`) and works from that descriptor
//!    on: what it reads (`owner.json`) is that directory's, whatever happens to the path, and
//!    the open descriptor keeps the directory's inode number from being reused.
//! 2. It *claims* the directory: an exclusive `flock` on the descriptor, which the kernel drops
//!    when the process exits or is killed, so no claim outlives its holder.
//! 3. Under the claim it checks that the path still names that directory (same device and
//!    inode), judges the owner from the record read through the descriptor (a recoverer refuses
//!    a live one; an owner knows it is itself), and only then renames the path to a fresh name
//!    of its own (`{lock}.recovering.{pid}.{random}`, or `released`), then removes that.
//!
//! Invariant: *a lock directory leaves its path only through a process that holds its claim and,
//! under it, saw the path name it.* Between that check and the rename nothing else can move it:
//! every mover needs the claim, held here; its owner is dead (recovery) or is this process
//! (release); and nothing can be renamed over the path while a non-empty directory stands there
//! (a lock is placed with `RENAME_NOREPLACE`, or by `mkdir`, which fail on an existing path). So
//! the directory renamed is the one judged, at the moment of its removal. A recoverer that
//! claims a directory which already left the path (a second recoverer of the same dead lock)
//! sees the path name another directory or none, touches nothing, and judges what is there now
//! (a live writer's lock: refused). Nothing is ever renamed back over the path: a directory
//! found aside that is not the one claimed (only a process ignoring this protocol could cause
//! it) is put back with `RENAME_NOREPLACE` or left where it is. A released guard whose lock was
//! taken from it (a forced recovery of a live writer, which the caller swore was gone) finds
//! the path no longer names its directory and leaves alone what is there.
//!
//! Where the filesystem refuses `flock`, nothing proves a recovery exclusive, and `dwp lock
//! recover` refuses rather than guess.

use super::procfs;
use crate::error::{Error, Result};
use crate::term::inert_line;
use chrono::Utc;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// File inside the lock directory that names its owner.
pub const OWNER_FILE: &str = "owner.json";

/// The lock directory that guards `target` (`state.json` → `state.json.lock`).
pub fn lock_dir(target: &Path) -> PathBuf {
    let mut name = target.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    target.with_file_name(name)
}

/// The public ledger's lock directory in a record plan's folder: the lock of the whole plan.
pub const LEDGER_LOCK: &str = ".ledger.lock";

/// The target whose lock ([`lock_dir`]) is the record plan at `plan_dir`'s [`LEDGER_LOCK`], the
/// ledger's own: dwp takes it to write a record plan, so that dwp and the ledger exclude each
/// other. `.ledger` names no file; it only gives the lock its name, as `state.json` does.
pub fn ledger_target(plan_dir: &Path) -> PathBuf {
    plan_dir.join(".ledger")
}

/// How the ledger writes `ts` (Python's `time.strftime` of UTC).
const LEDGER_TS: &str = "%Y-%m-%dT%H:%M:%SZ";

/// Who holds a lock, as recorded in `owner.json`: dwp's record, or the public ledger's (module
/// doc), read by [`Owner::parse`]. `start_ticks` and `boot_id` came later: a record without them
/// (an older dwp's, or the ledger's) is judged by `started_at` alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Owner {
    pub pid: u32,
    pub host: String,
    /// The command line that took the lock; the ledger's record, which has none, its `identity`.
    #[serde(default)]
    pub command: String,
    /// When the lock was taken (RFC 3339); the ledger's record, which has none, its `ts`.
    #[serde(default)]
    pub started_at: String,
    /// When the process started, in clock ticks since boot (`/proc/<pid>/stat` field 22).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_ticks: Option<u64>,
    /// The boot those ticks count from (`/proc/sys/kernel/random/boot_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_id: Option<String>,
    /// The ledger's name for the writer: `dwp-ledger/7.0 pid:1234`, or dwp's `dwp/VERSION pid:N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    /// When the lock was taken, as the ledger writes it (`2026-12-07T08:00:00Z`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<String>,
    /// The same instant in epoch seconds, a float: the ledger breaks a lock whose record lacks
    /// it as stale. dwp never judges by it (age proves no owner dead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch_ts: Option<serde_json::Number>,
}

impl Owner {
    fn of_this_process() -> Owner {
        let pid = std::process::id();
        // Real time, never the test clock: liveness compares it with process start times, and
        // the ledger compares `epoch_ts` with its own clock. One instant for all three fields.
        let now = Utc::now();
        Owner {
            pid,
            host: host_name(),
            command: command_line(),
            started_at: crate::clock::rfc3339(now),
            start_ticks: i32::try_from(pid)
                .ok()
                .and_then(procfs::process_start_ticks),
            boot_id: procfs::boot_id(),
            identity: Some(format!("dwp/{} pid:{pid}", env!("CARGO_PKG_VERSION"))),
            ts: Some(now.format(LEDGER_TS).to_string()),
            // Microseconds, as the ledger's `time.time()`; written as a JSON float.
            epoch_ts: serde_json::Number::from_f64(now.timestamp_micros() as f64 / 1e6),
        }
    }

    /// Read an owner record, dwp's or the ledger's. The ledger's has no `command` and no
    /// `started_at`: its `identity` and `ts` stand for them, here and only here, so every
    /// reader of an [`Owner`] sees both filled. A record with neither of a pair is not one dwp
    /// understands.
    pub fn parse(bytes: &[u8]) -> std::result::Result<Owner, String> {
        let mut owner: Owner = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        fill(
            &mut owner.command,
            owner.identity.as_ref(),
            "command",
            "identity",
        )?;
        fill(&mut owner.started_at, owner.ts.as_ref(), "started_at", "ts")?;
        Ok(owner)
    }
}

/// `field`, when the record left it out, from `fallback` (the ledger's name for it).
fn fill(
    field: &mut String,
    fallback: Option<&String>,
    name: &str,
    fallback_name: &str,
) -> std::result::Result<(), String> {
    match (field.is_empty(), fallback) {
        (false, _) => Ok(()),
        (true, Some(value)) => {
            field.clone_from(value);
            Ok(())
        }
        (true, None) => Err(format!("neither `{name}` nor `{fallback_name}` is given")),
    }
}

/// How far in the future a recorded `started_at` may lie (clock steps between writer and
/// reader) before the record is not believed.
const FUTURE_SLACK: Duration = Duration::from_secs(60);

/// Whether a lock's owner still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Liveness {
    /// Same host, the pid runs and is the process that wrote the record (same start ticks in
    /// the same boot; for a record without them, it started before the lock was taken).
    Alive,
    /// Same host, no process has that pid.
    Dead,
    /// Same host, the pid runs but is a different process: it started at other ticks, in
    /// another boot, or after the lock was taken.
    PidReused,
    /// Same host, the pid runs, but the record cannot be believed (`started_at` in the future or
    /// not a date-time): nothing proves that process is the owner, nor that the owner is gone.
    Unproven,
    /// Recorded by another host: cannot be checked from here.
    OtherHost,
    /// No owner record (the reference tooling writes none, or a writer is still starting).
    Unknown,
}

impl Liveness {
    /// The owner is provably gone.
    pub fn is_gone(self) -> bool {
        matches!(self, Liveness::Dead | Liveness::PidReused)
    }
}

/// What `owner.json` in a held lock is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Record {
    /// Read and understood: [`LockInfo::owner`] holds it.
    Present,
    /// No `owner.json` (the reference tooling writes none).
    Absent,
    /// There, but not an owner record dwp understands.
    Malformed,
    /// There, but it could not be read.
    Unreadable,
}

impl Record {
    /// The record as a noun, for a lock whose owner is not known.
    fn noun(self) -> &'static str {
        match self {
            Record::Present => "an owner record",
            Record::Absent => "no owner record",
            Record::Malformed => "a malformed owner record",
            Record::Unreadable => "an unreadable owner record",
        }
    }
}

/// What inspecting a held lock found.
#[derive(Debug, Clone, Serialize)]
pub struct LockInfo {
    pub path: PathBuf,
    /// Whether `owner.json` is there and understood.
    pub record: Record,
    pub owner: Option<Owner>,
    /// Why `owner.json` could not be used, when it exists but is unreadable or malformed.
    pub owner_problem: Option<String>,
    /// Seconds since the owner recorded the lock (or since the directory was created).
    pub age_seconds: Option<u64>,
    pub liveness: Liveness,
    /// Which directory this was: a record of its removal names it ([`Identity`]).
    #[serde(skip)]
    pub identity: Option<Identity>,
}

/// Which lock directory, exactly: its device and inode, its modification time (a bare
/// directory's is when it was made) and the sha256 of its `owner.json` (`None`: it had none).
/// An interrupted `dwp lock recover --force` records the identity of the lock it removes, so
/// that completing it removes that lock and no later one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    pub dev: u64,
    pub ino: u64,
    pub modified: String,
    pub owner_sha256: Option<String>,
}

impl LockInfo {
    /// One line naming the owner, its age and whether it runs.
    pub fn describe(&self) -> String {
        let age = self
            .age_seconds
            .map(|s| format!(", {} old", human_age(s)))
            .unwrap_or_default();
        let alive = match self.liveness {
            Liveness::Alive => "alive",
            Liveness::Dead => "process gone",
            Liveness::PidReused => "process gone, pid reused",
            Liveness::Unproven => "pid runs, but the record does not prove it is the owner",
            Liveness::OtherHost => "on another host, cannot check",
            Liveness::Unknown => "owner unknown",
        };
        match &self.owner {
            // The command and host come from a file anyone can write: one line, no controls
            // (this text also goes into PROGRESS.md).
            Some(o) => format!(
                "pid {} on {} (`{}`{age}, {alive})",
                o.pid,
                inert_line(&o.host),
                inert_line(&o.command)
            ),
            None => format!("{}{age} ({alive})", self.record.noun()),
        }
    }
}

/// A held lock. Dropping it releases the lock.
#[derive(Debug)]
pub struct LockGuard {
    dir: PathBuf,
    /// This process's lock directory, held open; `None` once released.
    own: Option<Opened>,
}

impl LockGuard {
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Release now and report a failure to do so (Drop can only ignore it).
    pub fn release(mut self) -> Result<()> {
        match self.own.take() {
            Some(own) => release(&self.dir, &own),
            None => Ok(()),
        }
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        if let Some(own) = self.own.take() {
            let _ = release(&self.dir, &own);
        }
    }
}

/// Release: under the claim of its own directory, and only while the path still names it (the
/// module's protocol), rename it aside in one step (so it never lingers without its owner
/// record), then delete what was moved.
fn release(dir: &Path, own: &Opened) -> Result<()> {
    match own.claim() {
        Ok(()) => {}
        // Held past the wait: a mover is stuck; the lock stays, for `dwp lock recover`.
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
            return Err(Error::io("claim lock for release", dir, e));
        }
        // No `flock` on this filesystem: no recovery can claim the lock either (it refuses
        // there), so the owner is its only mover and releases it unclaimed.
        Err(_) => {}
    }
    if !own
        .is_at(dir)
        .map_err(|e| Error::io("release lock", dir, e))?
    {
        // Taken from this process (a forced recovery): what stands there now is not ours.
        return Ok(());
    }
    let aside = aside_dir(dir, "released");
    fs::rename(dir, &aside).map_err(|e| Error::io("release lock", dir, e))?;
    fs::remove_dir_all(&aside).map_err(|e| Error::io("remove released lock", &aside, e))
}

/// A lock directory held open: the descriptor names this directory whatever later happens to
/// its path, and keeps its inode number from being reused while it is open.
#[derive(Debug)]
struct Opened {
    fd: std::os::fd::OwnedFd,
    dev: u64,
    ino: u64,
}

/// How long a mover waits for another's claim on a lock directory: claims last a few
/// syscalls (a judgement and a rename), so waiting this long means the holder is stuck.
const CLAIM_WAIT: Duration = Duration::from_secs(5);

impl Opened {
    fn open(dir: &Path) -> io::Result<Opened> {
        use rustix::fs::{Mode, OFlags};
        let fd = rustix::fs::open(
            dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let stat = rustix::fs::fstat(&fd)?;
        Ok(Opened {
            fd,
            dev: stat.st_dev,
            ino: stat.st_ino,
        })
    }

    /// Whether `path` names this directory.
    fn is_at(&self, path: &Path) -> io::Result<bool> {
        match rustix::fs::lstat(path) {
            Ok(stat) => Ok(stat.st_dev == self.dev && stat.st_ino == self.ino),
            Err(rustix::io::Errno::NOENT) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Claim this directory: the exclusive `flock` every mover holds (the module's protocol),
    /// waited for up to [`CLAIM_WAIT`]; dropped with the descriptor, by exit or kill.
    fn claim(&self) -> io::Result<()> {
        use rustix::fs::FlockOperation;
        let deadline = Instant::now() + CLAIM_WAIT;
        loop {
            match rustix::fs::flock(&self.fd, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(()),
                Err(rustix::io::Errno::WOULDBLOCK) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(rustix::io::Errno::WOULDBLOCK) => {
                    return Err(io::Error::new(
                        io::ErrorKind::WouldBlock,
                        "another process has held its claim on this lock directory for 5 s",
                    ));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Its `owner.json`, read through the descriptor: this directory's, not the path's.
    fn owner_bytes(&self) -> io::Result<Vec<u8>> {
        use rustix::fs::{Mode, OFlags};
        let fd = rustix::fs::openat(
            &self.fd,
            OWNER_FILE,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut fs::File::from(fd), &mut bytes)?;
        Ok(bytes)
    }

    /// Its identity, with its `owner.json` as read.
    fn identity(&self, owner: Option<&[u8]>) -> io::Result<Identity> {
        let stat = rustix::fs::fstat(&self.fd)?;
        Ok(Identity {
            dev: self.dev,
            ino: self.ino,
            modified: format!("{}.{:09}", stat.st_mtime, stat.st_mtime_nsec),
            owner_sha256: owner.map(super::sha256_hex),
        })
    }
}

/// The identity of the lock directory at `dir` now (`None`: there is none).
pub fn identity_at(dir: &Path) -> Result<Option<Identity>> {
    let opened = match Opened::open(dir) {
        Ok(opened) => opened,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("inspect lock", dir, e)),
    };
    let owner = match opened.owner_bytes() {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io("inspect lock", dir, e)),
    };
    opened
        .identity(owner.as_deref())
        .map(Some)
        .map_err(|e| Error::io("inspect lock", dir, e))
}

/// Take the lock on `target` once, or report who holds it.
///
/// The lock directory is built aside with its `owner.json` and renamed into place with
/// `RENAME_NOREPLACE`, so it never exists without its owner record: a writer killed at any
/// instant leaves either no lock or a lock whose owner can be judged. Where the filesystem lacks
/// that flag, a plain `mkdir` (the reference tooling's own method) takes the lock instead.
pub fn try_acquire(target: &Path) -> Result<LockGuard> {
    let dir = lock_dir(target);
    let owner = crate::store::json_file_bytes(&Owner::of_this_process());
    let staging = aside_dir(&dir, "staging");
    fs::create_dir(&staging).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => Error::rejected(
            target.display().to_string(),
            "the plan folder does not exist",
        ),
        _ => Error::io("create lock", &staging, e),
    })?;
    // Opened before it is placed: the guard holds this directory, whatever its path names later.
    let opened =
        match fs::write(staging.join(OWNER_FILE), &owner).and_then(|()| Opened::open(&staging)) {
            Ok(opened) => opened,
            Err(e) => {
                let _ = fs::remove_dir_all(&staging);
                return Err(Error::io("write lock owner", &staging, e));
            }
        };
    let placed = place_without_replacing(&staging, &dir);
    if !matches!(placed, Ok(Placement::Placed)) {
        let _ = fs::remove_dir_all(&staging);
    }
    match placed? {
        Placement::Placed => {
            return Ok(LockGuard {
                dir,
                own: Some(opened),
            });
        }
        Placement::Held => return Err(held_error(target, dir)),
        Placement::Unsupported => {}
    }
    // No RENAME_NOREPLACE here: fall back to mkdir, then record the owner.
    match fs::create_dir(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Err(held_error(target, dir)),
        Err(e) => return Err(Error::io("create lock", &dir, e)),
    }
    let own = Opened::open(&dir).map_err(|e| Error::io("create lock", &dir, e))?;
    let guard = LockGuard {
        dir,
        own: Some(own),
    };
    fs::write(guard.dir.join(OWNER_FILE), &owner)
        .map_err(|e| Error::io("write lock owner", &guard.dir, e))?;
    Ok(guard)
}

enum Placement {
    Placed,
    Held,
    /// The filesystem cannot rename without replacing.
    Unsupported,
}

/// Rename `staging` to `dir` unless `dir` exists, atomically.
fn place_without_replacing(staging: &Path, dir: &Path) -> Result<Placement> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    match renameat_with(CWD, staging, CWD, dir, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(Placement::Placed),
        Err(rustix::io::Errno::EXIST | rustix::io::Errno::NOTEMPTY) => Ok(Placement::Held),
        Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => Ok(Placement::Unsupported),
        Err(e) => Err(Error::io("place lock", dir, e.into())),
    }
}

fn held_error(target: &Path, dir: PathBuf) -> Error {
    let owner = inspect(target).ok().flatten().map(|i| i.describe());
    Error::LockHeld {
        lock: dir,
        owner,
        live: false,
    }
}

/// Stages a lock directory passes through beside the lock itself, named
/// `{lock}.{stage}.{pid}.{random}` so leftovers of killed processes can be recognised.
pub(crate) const STAGES: [&str; 3] = ["staging", "released", "recovering"];

fn aside_dir(dir: &Path, stage: &str) -> PathBuf {
    dir.with_file_name(format!(
        "{}.{stage}.{}.{:08x}",
        dir.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id(),
        fastrand::u32(..)
    ))
}

/// The longest a waiting writer sleeps between two looks at a held lock. A held lock is
/// looked at with one `stat` (taking it builds and places a directory), so looking often costs
/// little, and a writer done in 20 ms is not followed by 100 ms of nobody writing.
const LONGEST_WAIT_STEP: Duration = Duration::from_millis(8);

/// Take the lock, retrying a held lock with jittered exponential backoff for up to `wait`.
/// While the lock directory stands, a waiter only looks at it; it tries to take the lock once
/// the directory is gone (or the time is up, to report the holder).
pub fn acquire(target: &Path, wait: Duration) -> Result<LockGuard> {
    let deadline = Instant::now() + wait;
    let dir = lock_dir(target);
    let mut backoff = Duration::from_millis(1);
    let pause = |backoff: &mut Duration| {
        let jittered = backoff.mul_f64(0.5 + fastrand::f64());
        let remaining = deadline.saturating_duration_since(Instant::now());
        std::thread::sleep(jittered.min(remaining));
        *backoff = (*backoff * 2).min(LONGEST_WAIT_STEP);
    };
    loop {
        if Instant::now() < deadline && fs::symlink_metadata(&dir).is_ok() {
            pause(&mut backoff);
            continue;
        }
        match try_acquire(target) {
            Err(Error::LockHeld { .. }) if Instant::now() < deadline => pause(&mut backoff),
            other => return other,
        }
    }
}

/// Inspect the lock on `target`: `None` when it is free.
pub fn inspect(target: &Path) -> Result<Option<LockInfo>> {
    let dir = lock_dir(target);
    match Opened::open(&dir) {
        Ok(opened) => inspect_opened(&dir, &opened).map(Some),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("inspect lock", &dir, e)),
    }
}

/// What the lock directory `opened` (found at `dir`) holds: read through its descriptor, so
/// that it is this directory's record whatever its path names meanwhile.
fn inspect_opened(dir: &Path, opened: &Opened) -> Result<LockInfo> {
    let read = opened.owner_bytes();
    let (record, owner, owner_problem) = match &read {
        Ok(bytes) => match Owner::parse(bytes) {
            Ok(owner) => (Record::Present, Some(owner), None),
            Err(e) => (
                Record::Malformed,
                None,
                Some(format!("{OWNER_FILE} is malformed: {e}")),
            ),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => (Record::Absent, None, None),
        Err(e) => (
            Record::Unreadable,
            None,
            Some(format!("{OWNER_FILE} cannot be read: {e}")),
        ),
    };
    let identity = opened
        .identity(read.as_deref().ok())
        .map_err(|e| Error::io("inspect lock", dir, e))?;
    let made = identity
        .modified
        .split_once('.')
        .and_then(|(secs, _)| secs.parse::<u64>().ok())
        .map(|secs| SystemTime::UNIX_EPOCH + Duration::from_secs(secs));
    let since = owner
        .as_ref()
        .and_then(|o| crate::clock::parse_rfc3339(&o.started_at))
        .map(SystemTime::from)
        .or(made);
    let age_seconds = since
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .map(|d| d.as_secs());
    let liveness = owner.as_ref().map_or(Liveness::Unknown, liveness_of);
    Ok(LockInfo {
        path: dir.to_path_buf(),
        record,
        owner,
        owner_problem,
        age_seconds,
        liveness,
        identity: Some(identity),
    })
}

fn liveness_of(owner: &Owner) -> Liveness {
    if owner.host != host_name() {
        return Liveness::OtherHost;
    }
    let Ok(pid) = i32::try_from(owner.pid) else {
        return Liveness::Dead;
    };
    if !procfs::process_exists(pid) {
        return Liveness::Dead;
    }
    let Some(recorded) = crate::clock::parse_rfc3339(&owner.started_at).map(SystemTime::from)
    else {
        return Liveness::Unproven;
    };
    // No writer records a time it has not reached: such a record proves nothing.
    if recorded > SystemTime::now() + FUTURE_SLACK {
        return Liveness::Unproven;
    }
    match owner.start_ticks {
        Some(ticks) => same_process(pid, ticks, owner.boot_id.as_deref()),
        None => started_before(pid, recorded),
    }
}

/// An age for people: `42s`, `3m 5s`, `4h 12m`, `2d 3h`: the two largest units.
pub fn human_age(seconds: u64) -> String {
    let (days, hours, minutes) = (seconds / 86_400, seconds / 3_600 % 24, seconds / 60 % 60);
    match (days, hours, minutes) {
        (0, 0, 0) => format!("{seconds}s"),
        (0, 0, m) => format!("{m}m {}s", seconds % 60),
        (0, h, m) => format!("{h}h {m}m"),
        (d, h, _) => format!("{d}d {h}h"),
    }
}

/// A record with start ticks: the live pid is the owner only if it started at those ticks in
/// the same boot. Where `/proc` cannot be read, the running pid is all there is to go on.
fn same_process(pid: i32, ticks: u64, boot: Option<&str>) -> Liveness {
    if let (Some(recorded), Some(current)) = (boot, procfs::boot_id())
        && recorded != current
    {
        return Liveness::PidReused;
    }
    match procfs::process_start_ticks(pid) {
        Some(live) if live != ticks => Liveness::PidReused,
        _ => Liveness::Alive,
    }
}

/// A record without start ticks (an older dwp's): `started_at` has second precision and is
/// written after the process starts, so a process that started more than a second after it
/// cannot be the one that wrote it.
fn started_before(pid: i32, recorded: SystemTime) -> Liveness {
    match procfs::process_start_time(pid) {
        Some(started) if started > recorded + Duration::from_secs(1) => Liveness::PidReused,
        _ => Liveness::Alive,
    }
}

/// What `dwp lock recover` found and did.
#[derive(Debug, Clone, Serialize)]
pub struct Recovery {
    pub inspected: LockInfo,
    /// Why removal was allowed.
    pub grounds: String,
}

/// On what grounds `dwp lock recover` may remove a lock besides a provably gone owner.
#[derive(Debug, Clone, Copy, Default)]
pub struct Grounds<'a> {
    /// A lock without an owner record at least this old.
    pub older_than: Option<Duration>,
    /// The caller confirmed no writer remains (across hosts, say).
    pub force: bool,
    /// The lock an interrupted `dwp lock recover --force` recorded removing: completing that
    /// removal needs no new confirmation.
    pub recorded: Option<&'a Identity>,
}

/// How many times recovery judges the lock again when the one it opened left its path before
/// it could claim it (another recoverer removed it; a writer may have taken the path since).
const JUDGEMENTS: usize = 3;

/// Remove the lock on `target` only when its owner is provably gone (same host, process dead or
/// pid reused), or it has no owner record and is at least `older_than` old, or `force` (the
/// caller confirmed no writer remains, e.g. across hosts), or it is the lock an interrupted
/// forced recovery recorded removing. `Ok(None)`: there was no lock.
///
/// The removal follows the module's protocol: the directory is opened, claimed, found still at
/// its path and judged from its own record, and only then renamed aside and deleted, so no live
/// writer's lock is ever moved. `before_removal` runs under the claim, with the dead owner's
/// lock still keeping every writer out.
pub fn recover(
    target: &Path,
    grounds: Grounds,
    before_removal: impl FnOnce(&LockInfo) -> Result<()>,
) -> Result<Option<Recovery>> {
    let dir = lock_dir(target);
    for _ in 0..JUDGEMENTS {
        let opened = match Opened::open(&dir) {
            Ok(opened) => opened,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("inspect lock", &dir, e)),
        };
        opened.claim().map_err(|e| claim_error(&dir, e))?;
        if !opened
            .is_at(&dir)
            .map_err(|e| Error::io("inspect lock", &dir, e))?
        {
            // It left its path before the claim (another recovery): judge what is there now.
            continue;
        }
        let info = inspect_opened(&dir, &opened)?;
        let grounds = recovery_grounds(&info, grounds)?;
        before_removal(&info)?;
        remove_claimed(&dir, &opened)?;
        // A killed writer may also have left a temp file or a lock set aside: clear those too.
        if let (Some(folder), Some(name)) =
            (target.parent(), target.file_name().and_then(|n| n.to_str()))
        {
            super::atomic::sweep_leftovers(folder, name);
        }
        return Ok(Some(Recovery {
            inspected: info,
            grounds,
        }));
    }
    Err(Error::LockHeld {
        lock: dir,
        owner: Some("writers that took it in turn while it was being recovered".into()),
        live: true,
    })
}

/// A claim that could not be had: another process holds it too long, or the filesystem has
/// no `flock`, so nothing proves the removal exclusive.
fn claim_error(dir: &Path, e: io::Error) -> Error {
    if e.kind() == io::ErrorKind::WouldBlock {
        return Error::LockHeld {
            lock: dir.to_path_buf(),
            owner: Some("another process recovering or releasing it".into()),
            live: true,
        };
    }
    Error::io("claim lock", dir, e).with_hint(format!(
        "this filesystem refuses advisory locks, so no recovery can be proven exclusive: once no writer remains, remove `{}` by hand",
        dir.display()
    ))
}

/// Rename the claimed directory `opened`, found at `dir`, aside to a name of this process's,
/// check that what moved is it, and delete it. Should something else have moved (only a
/// process ignoring the protocol could cause it), it goes back only onto a free path.
fn remove_claimed(dir: &Path, opened: &Opened) -> Result<()> {
    let aside = aside_dir(dir, "recovering");
    fs::rename(dir, &aside).map_err(|e| Error::io("move lock aside", dir, e))?;
    if !opened
        .is_at(&aside)
        .map_err(|e| Error::io("move lock aside", &aside, e))?
    {
        let _ = place_without_replacing(&aside, dir);
        return Err(Error::LockHeld {
            lock: dir.to_path_buf(),
            owner: Some("a new writer (the lock changed hands during recovery)".into()),
            live: true,
        });
    }
    fs::remove_dir_all(&aside).map_err(|e| Error::io("remove lock", &aside, e))
}

fn recovery_grounds(info: &LockInfo, grounds: Grounds) -> Result<String> {
    let Grounds {
        older_than,
        force,
        recorded,
    } = grounds;
    let refuse = |why: String| Error::rejected(info.path.display().to_string(), why);
    let plan = match info.path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => crate::term::path_word(dir),
        _ => ".".to_owned(),
    };
    if recorded.is_some() && recorded == info.identity.as_ref() && info.liveness != Liveness::Alive
    {
        return Ok("an interrupted `dwp lock recover --force` recorded its removal".into());
    }
    if force && info.liveness != Liveness::Alive {
        return Ok("forced by the caller, who confirmed no writer remains".into());
    }
    // Even --force never removes a lock whose owner this host can see running.
    match info.liveness {
        Liveness::Dead => Ok("its owner process is gone".into()),
        Liveness::PidReused => Ok("its owner process is gone (the pid now belongs to a later process)".into()),
        Liveness::Alive => Err(Error::LockHeld {
            lock: info.path.clone(),
            owner: Some(info.describe()),
            live: true,
        }),
        Liveness::OtherHost => Err(refuse(format!(
            "held by {}: a process on another host cannot be checked from here",
            info.describe()
        ))
        .with_hint(format!("confirm on that host that no writer remains, then `dwp lock recover {plan} --force --reason TEXT`"))),
        Liveness::Unproven => Err(refuse(format!(
            "held by {}: its owner can be proven neither alive nor gone",
            info.describe()
        ))
        .with_hint(format!("confirm that no writer remains, then `dwp lock recover {plan} --force --reason TEXT`"))),
        Liveness::Unknown => match (older_than, info.age_seconds) {
            (Some(min), Some(age)) if age >= min.as_secs() => Ok(format!(
                "{} and {} old (at least the {}s given)",
                info.record.noun(),
                human_age(age),
                min.as_secs()
            )),
            (Some(min), age) => Err(refuse(format!(
                "{} and only {} old, under the {}s given",
                info.record.noun(),
                human_age(age.unwrap_or(0)),
                min.as_secs()
            ))),
            (None, _) => Err(refuse(format!(
                "{}: {}",
                info.describe(),
                match info.record {
                    Record::Absent => "a writer of the reference tooling, or one still starting, cannot be judged",
                    _ => "its owner cannot be judged",
                }
            ))
            .with_hint(format!("once no writer is active, `dwp lock recover {plan} --older-than SECONDS`"))),
        },
    }
}

/// This machine's node name, as recorded in lock owners.
pub fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// This process's command line as one string, arguments with spaces or quotes single-quoted.
fn command_line() -> String {
    std::env::args()
        .map(|arg| {
            if !arg.is_empty()
                && arg
                    .chars()
                    .all(|c| !c.is_whitespace() && c != '\'' && c != '"')
            {
                arg
            } else {
                format!("'{}'", arg.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_are_told_in_the_two_largest_units() {
        assert_eq!(human_age(42), "42s");
        assert_eq!(human_age(185), "3m 5s");
        assert_eq!(human_age(15_154), "4h 12m");
        assert_eq!(human_age(15_154_895), "175d 9h");
        assert_eq!(human_age(0), "0s");
    }

    #[test]
    fn the_lock_is_exclusive_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state.json");
        let guard = try_acquire(&state).unwrap();
        let info = inspect(&state).unwrap().expect("held");
        assert_eq!(info.liveness, Liveness::Alive);
        assert_eq!(info.owner.as_ref().unwrap().pid, std::process::id());
        let second = try_acquire(&state).unwrap_err();
        assert!(matches!(second, Error::LockHeld { .. }), "{second}");
        assert_eq!(second.exit(), crate::error::Exit::Contention);
        drop(guard);
        assert!(!lock_dir(&state).exists());
        assert!(inspect(&state).unwrap().is_none());
    }

    #[test]
    fn the_lock_is_released_when_the_holder_panics() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state.json");
        let result = std::panic::catch_unwind(|| {
            let _guard = try_acquire(&state).unwrap();
            panic!("writer failed mid-update");
        });
        assert!(result.is_err());
        assert!(!lock_dir(&state).exists());
    }

    #[test]
    fn a_bare_lock_directory_blocks_and_has_unknown_owner() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state.json");
        fs::create_dir(lock_dir(&state)).unwrap();
        let err = try_acquire(&state).unwrap_err();
        assert!(err.to_string().contains("no owner record"), "{err}");
        let info = inspect(&state).unwrap().unwrap();
        assert_eq!(info.liveness, Liveness::Unknown);
        assert!(
            lock_dir(&state).exists(),
            "a lock dwp does not own is never removed"
        );
    }

    #[test]
    fn a_dead_or_reused_pid_is_judged_gone() {
        let dead = Owner {
            pid: 999_999_999,
            host: host_name(),
            command: "dwp update".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            start_ticks: None,
            boot_id: None,
            identity: None,
            ts: None,
            epoch_ts: None,
        };
        assert_eq!(liveness_of(&dead), Liveness::Dead);
        // pid 1 runs, but started long after this recorded time.
        let reused = Owner {
            pid: 1,
            started_at: "1990-01-01T00:00:00Z".into(),
            ..dead.clone()
        };
        assert_eq!(liveness_of(&reused), Liveness::PidReused);
        let elsewhere = Owner {
            host: format!("{}-elsewhere", host_name()),
            ..dead
        };
        assert_eq!(liveness_of(&elsewhere), Liveness::OtherHost);
    }

    fn this_process(started_at: &str, start_ticks: Option<u64>) -> Owner {
        Owner {
            started_at: started_at.into(),
            start_ticks,
            ..Owner::of_this_process()
        }
    }

    #[test]
    fn a_live_pid_is_the_owner_only_when_the_record_proves_it() {
        let now = crate::clock::rfc3339(Utc::now());
        let ticks = procfs::process_start_ticks(std::process::id() as i32).expect("/proc");
        assert_eq!(
            liveness_of(&this_process(&now, Some(ticks))),
            Liveness::Alive
        );
        assert_eq!(
            liveness_of(&this_process(&now, Some(ticks + 1))),
            Liveness::PidReused
        );
        // A record that no real writer could have made.
        for started_at in ["2099-01-01T00:00:00Z", "yesterday"] {
            assert_eq!(
                liveness_of(&this_process(started_at, Some(ticks))),
                Liveness::Unproven,
                "{started_at}"
            );
        }
        // An older dwp's record: judged by started_at alone.
        assert_eq!(liveness_of(&this_process(&now, None)), Liveness::Alive);
    }

    #[test]
    fn the_owner_record_carries_the_process_start() {
        let owner = Owner::of_this_process();
        assert_eq!(
            owner.start_ticks,
            procfs::process_start_ticks(std::process::id() as i32)
        );
        assert!(owner.start_ticks.is_some() && owner.boot_id.is_some());
        // Older records (four fields) still read.
        let old =
            r#"{"pid": 7, "host": "h", "command": "c", "started_at": "2026-01-01T00:00:00Z"}"#;
        let old: Owner = serde_json::from_str(old).expect("an older record");
        assert_eq!(old.start_ticks, None);
    }

    /// The ledger's record as its `json.dump(payload, fh, sort_keys=True)` writes it.
    fn ledger_record(pid: u32, ts: &str, epoch_ts: &str) -> Vec<u8> {
        format!(
            r#"{{"epoch_ts": {epoch_ts}, "host": "{}", "identity": "dwp-ledger/7.0 pid:{pid}", "pid": {pid}, "ts": "{ts}"}}"#,
            host_name()
        )
        .into_bytes()
    }

    #[test]
    fn the_ledgers_record_is_a_present_owner_named_by_its_identity() {
        let owner = Owner::parse(&ledger_record(
            999_999_999,
            "2026-12-07T08:00:00Z",
            "1796630400.123456",
        ))
        .expect("the ledger's record");
        assert_eq!(owner.command, "dwp-ledger/7.0 pid:999999999");
        assert_eq!(owner.started_at, "2026-12-07T08:00:00Z");
        assert_eq!(
            owner.epoch_ts.as_ref().unwrap().to_string(),
            "1796630400.123456"
        );
        // Rule: a pid gone from this host is a dead owner.
        assert_eq!(liveness_of(&owner), Liveness::Dead);
    }

    #[test]
    fn the_ledgers_live_owner_is_alive_whatever_its_age() {
        // This process, recorded now, with an `epoch_ts` a day old: the ledger would break it
        // as stale; dwp judges the process, never the age.
        let now = Utc::now();
        let record = ledger_record(
            std::process::id(),
            &now.format(LEDGER_TS).to_string(),
            &format!("{}.5", now.timestamp() - 86_400),
        );
        let owner = Owner::parse(&record).expect("the ledger's record");
        assert_eq!(liveness_of(&owner), Liveness::Alive);
        // A `ts` no writer could have written yet proves nothing.
        let future = ledger_record(std::process::id(), "2099-01-01T00:00:00Z", "4070908800.0");
        let owner = Owner::parse(&future).expect("the ledger's record");
        assert_eq!(liveness_of(&owner), Liveness::Unproven);
    }

    #[test]
    fn a_record_naming_neither_command_nor_identity_is_malformed() {
        let bare = r#"{"pid": 7, "host": "h", "started_at": "2026-01-01T00:00:00Z"}"#;
        let why = Owner::parse(bare.as_bytes()).unwrap_err();
        assert!(
            why.contains("`command`") && why.contains("`identity`"),
            "{why}"
        );
        let unknown = r#"{"pid": 7, "host": "h", "identity": "x", "ts": "t", "extra": 1}"#;
        assert!(
            Owner::parse(unknown.as_bytes()).is_err(),
            "unknown fields stay refused"
        );
    }

    #[test]
    fn the_written_record_carries_the_ledgers_fields() {
        let bytes = crate::store::json_file_bytes(&Owner::of_this_process());
        let record: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let pid = std::process::id();
        assert_eq!(record["pid"], pid, "{record}");
        assert_eq!(record["host"], host_name(), "{record}");
        let identity = format!("dwp/{} pid:{pid}", env!("CARGO_PKG_VERSION"));
        assert_eq!(record["identity"], identity.as_str(), "{record}");
        let ts = record["ts"].as_str().expect("ts");
        let parsed = chrono::NaiveDateTime::parse_from_str(ts, LEDGER_TS).expect(ts);
        // The ledger reads `float(epoch_ts)`: a JSON float, the same instant as `ts`.
        let epoch = &record["epoch_ts"];
        assert!(epoch.is_f64(), "{record}");
        let epoch = epoch.as_f64().unwrap();
        assert!(
            (epoch - Utc::now().timestamp() as f64).abs() < 5.0,
            "{record}"
        );
        assert_eq!(
            epoch.floor() as i64,
            parsed.and_utc().timestamp(),
            "{record}"
        );
        assert_eq!(record["started_at"], ts, "one instant: {record}");
        // And dwp reads its own record back whole.
        assert_eq!(Owner::parse(&bytes).unwrap().identity, Some(identity));
    }

    #[test]
    fn a_record_plans_lock_is_the_ledgers_directory() {
        let plan = Path::new("plans/PLAN_x");
        assert_eq!(lock_dir(&ledger_target(plan)), plan.join(LEDGER_LOCK));
    }

    #[test]
    fn waiting_acquires_once_the_holder_releases() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state.json");
        let guard = try_acquire(&state).unwrap();
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            drop(guard);
        });
        let second = acquire(&state, Duration::from_secs(5)).unwrap();
        releaser.join().unwrap();
        drop(second);
        assert!(!lock_dir(&state).exists());
    }
}
