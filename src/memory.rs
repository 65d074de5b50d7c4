//! Transparent huge pages for a short process (docs/PERFORMANCE.md "Third pass";
//! docs/DECISIONS.md "Huge pages off for a short process").
//!
//! mimalloc marks its arenas for huge pages, and the kernel zeroes a whole 2 MiB page the first
//! time any byte of it is touched. A dwp process on a plan of ordinary size touches a few MiB
//! spread over several such pages (9 for an update of 1,000 tasks), so it pays for zeroing
//! memory it never uses: without them that update takes 16% less time. A process that loads a
//! large state (4 MiB at 10,000 tasks) uses most of what it touches, and there huge pages save
//! thousands of page faults (without them, 1 to 11% more time). So, once the arguments are
//! parsed, [`start`] turns huge pages off for the process, and they are turned back on, as the
//! process inherited them, when it reads a large file ([`LARGE_FILE`]) and before it starts
//! another program: the setting is inherited across fork and exec, and a test suite dwp runs
//! must get the machine's own. Not before the arguments: memory touched with huge pages off
//! keeps small pages for the rest of the process, and the command-line parser's is about 2 MiB
//! that a large state's allocations then fill (480 more page faults for an update of 10,000
//! tasks, 4% more time for 8 writers on such a plan).

use std::sync::atomic::{AtomicBool, Ordering};

/// From this size on, a file read is large enough for huge pages to pay (a state of about
/// 2,500 tasks).
pub const LARGE_FILE: u64 = 1 << 20;

/// Whether [`start`] turned huge pages off (so that [`as_inherited`] turns them back on).
static TURNED_OFF: AtomicBool = AtomicBool::new(false);

/// Turn huge pages off for this process, unless they already were: `main` does it once the
/// arguments are parsed. On a kernel without the setting nothing changes.
pub fn start() {
    if rustix::thread::transparent_huge_pages_are_disabled() == Ok(false)
        && rustix::thread::disable_transparent_huge_pages(true).is_ok()
    {
        TURNED_OFF.store(true, Ordering::Relaxed);
    }
}

/// Huge pages as the process inherited them: before a large read, and before starting another
/// program.
pub fn as_inherited() {
    if TURNED_OFF.swap(false, Ordering::Relaxed) {
        let _ = rustix::thread::disable_transparent_huge_pages(false);
    }
}

/// [`as_inherited`] when a file of `len` bytes is about to be read.
pub fn before_reading(len: u64) {
    if len >= LARGE_FILE {
        as_inherited();
    }
}
