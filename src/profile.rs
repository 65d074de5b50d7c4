//! Stage timings for `DWP_PROFILE=1`: where one command's time goes (docs/PERFORMANCE.md).
//!
//! Code marks a stage with [`stage`] (a guard timed until dropped) or [`add`] (a duration it
//! measured itself, for a stage interleaved with others in a loop). With the variable unset a
//! stage costs one check of a cached flag; with it set, `cli` prints [`report`] on stderr as
//! the command ends: each stage once, in the order first seen, with its total and count.
//! Stages may nest (the write includes its fsync), so the lines do not add up to the total.

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Whether `DWP_PROFILE` asks for timings (read once).
pub fn enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED
        .get_or_init(|| std::env::var_os("DWP_PROFILE").is_some_and(|v| !v.is_empty() && v != "0"))
}

/// When the command began (set by [`start`]), for the total.
static STARTED: OnceLock<Instant> = OnceLock::new();

/// Every timed stage: name, total, count.
static STAGES: Mutex<Vec<(&'static str, Duration, u32)>> = Mutex::new(Vec::new());

/// Mark the start of the command (the first thing `main` does).
pub fn start() {
    if enabled() {
        let _ = STARTED.set(Instant::now());
    }
}

/// A stage timed from now until the guard is dropped.
#[must_use = "the stage ends when this guard is dropped"]
pub struct Stage {
    name: &'static str,
    started: Option<Instant>,
}

/// Time the stage `name` until the returned guard is dropped.
pub fn stage(name: &'static str) -> Stage {
    Stage {
        name,
        started: enabled().then(Instant::now),
    }
}

/// Time `work` as the stage `name`.
pub fn time<T>(name: &'static str, work: impl FnOnce() -> T) -> T {
    let _stage = stage(name);
    work()
}

/// The clock reading for a stage measured by hand, or nothing when timings are off.
pub fn now() -> Option<Instant> {
    enabled().then(Instant::now)
}

/// Add the time since `since` (from [`now`]) to the stage `name`.
pub fn add(name: &'static str, since: Option<Instant>) {
    if let Some(since) = since {
        record(name, since.elapsed());
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        if let Some(started) = self.started {
            record(self.name, started.elapsed());
        }
    }
}

fn record(name: &'static str, took: Duration) {
    let mut stages = STAGES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    match stages.iter_mut().find(|(seen, _, _)| *seen == name) {
        Some((_, total, count)) => {
            *total += took;
            *count += 1;
        }
        None => stages.push((name, took, 1)),
    }
}

/// The timings as lines for stderr, or nothing when `DWP_PROFILE` is unset.
pub fn report() -> Option<String> {
    let started = STARTED.get()?;
    let total = started.elapsed();
    let stages = STAGES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut text = String::from("dwp profile (ms, from main; stages may nest):\n");
    for (name, took, count) in stages.iter() {
        let times = if *count > 1 {
            format!("  ({count} times)")
        } else {
            String::new()
        };
        text.push_str(&format!("  {name:<22} {:>9.3}{times}\n", ms(*took)));
    }
    text.push_str(&format!("  {:<22} {:>9.3}\n", "total", ms(total)));
    Some(text)
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stage_is_recorded_once_with_its_total_and_count() {
        record("unit-test-stage", Duration::from_millis(2));
        record("unit-test-stage", Duration::from_millis(3));
        let stages = STAGES.lock().unwrap();
        let (_, total, count) = stages
            .iter()
            .find(|(name, _, _)| *name == "unit-test-stage")
            .unwrap();
        assert_eq!((*total, *count), (Duration::from_millis(5), 2));
    }
}
