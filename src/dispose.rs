//! Large read-only trees left to the OS when the process ends, instead of freed one allocation
//! at a time just before it does.
//!
//! A `dwp` process runs one command and exits. A 1,000-task record plan's contract and
//! projection are hundreds of thousands of small allocations; freeing them costs milliseconds
//! that the exit does at once. The binary opts in at start ([`free_nothing_at_exit`], as a
//! compiler's "disable free" mode does); a library caller (the tests) keeps the default, and
//! everything is dropped as usual. A budget bounds what is kept, so `verify --all` over many
//! plans never holds more than a few plans' worth (docs/PERFORMANCE.md).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

static AT_EXIT: AtomicBool = AtomicBool::new(false);
static KEPT: AtomicUsize = AtomicUsize::new(0);

/// Bytes of files read, summed over what is kept: a kept tree holds a few times the bytes of
/// the files it was read from.
const BUDGET: usize = 64 << 20;

/// Leave what [`dispose`] is given to the OS from now on (the binary's `main`).
pub fn free_nothing_at_exit() {
    AT_EXIT.store(true, Ordering::Relaxed);
}

/// Drop `value`, read from `size` bytes of files; or, once [`free_nothing_at_exit`] was
/// called and the budget allows, leave it to the OS. Only for memory: never a value whose drop
/// does something besides freeing (a lock, a file, a temporary folder).
pub fn dispose<T>(value: T, size: usize) {
    let kept_before = KEPT.fetch_add(size, Ordering::Relaxed);
    if AT_EXIT.load(Ordering::Relaxed) && kept_before + size <= BUDGET {
        std::mem::forget(value);
    } else {
        drop(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_library_caller_frees_what_it_disposes() {
        // The tests never call `free_nothing_at_exit`.
        let shared = Arc::new(());
        dispose(Arc::clone(&shared), 1);
        assert_eq!(Arc::strong_count(&shared), 1, "dropped");
    }
}
