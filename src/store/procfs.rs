//! What dwp reads of `/proc` (Linux), and whether a process exists: when a process started and
//! in which boot (the writer lock judges its owner by them), and which processes are the
//! children of one (the leftovers of a command `dwp run` or `dwp loop prove` ran, adopted by
//! dwp as their subreaper). Each answers `None` or nothing where `/proc` cannot be read.

use std::fs;
use std::time::{Duration, SystemTime};

/// Whether any process has this pid (a zombie counts until it is reaped; one of another user
/// counts too).
pub fn process_exists(pid: i32) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(e) => e != rustix::io::Errno::SRCH,
    }
}

/// Field `n` (numbered as proc(5) numbers them, from 1) of `/proc/<pid>/stat`, for a field after
/// the command name, which ends at the last `)` (a name may hold spaces and parentheses).
fn stat_field(pid: i64, n: usize) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after_comm) = stat.rsplit_once(')')?;
    // After the name come field 3 (state) onwards.
    after_comm
        .split_whitespace()
        .nth(n.checked_sub(3)?)?
        .parse()
        .ok()
}

/// When a process started, in clock ticks since boot (field 22, starttime). Unlike a
/// wall-clock time it is exact and never moves with the clock.
pub fn process_start_ticks(pid: i32) -> Option<u64> {
    stat_field(pid.into(), 22)
}

/// This boot's id.
pub fn boot_id() -> Option<String> {
    let id = fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(id.trim().to_owned()).filter(|id| !id.is_empty())
}

/// When a process started, as a wall-clock time: its start ticks after the boot time.
pub fn process_start_time(pid: i32) -> Option<SystemTime> {
    let ticks = process_start_ticks(pid)?;
    let boot = fs::read_to_string("/proc/stat").ok()?;
    let boot_secs: u64 = boot
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    let per_second = rustix::param::clock_ticks_per_second().max(1);
    let since_boot = Duration::from_millis(ticks * 1000 / per_second);
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(boot_secs) + since_boot)
}

/// The pids whose parent (field 4, ppid) is `parent` (a process that ends while it is read is
/// left out).
pub fn children_of(parent: u32) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| stat_field((*pid).into(), 4) == Some(parent.into()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_a_start_and_is_its_parents_child() {
        let me = std::process::id();
        assert!(process_exists(me as i32));
        assert!(process_start_ticks(me as i32).is_some());
        let parent = stat_field(me.into(), 4).expect("a parent") as u32;
        assert!(children_of(parent).contains(&me));
    }
}
