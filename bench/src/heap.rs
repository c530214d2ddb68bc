//! A counting global allocator: live heap bytes and their high-water mark, for the cache
//! memory measurement. A thin wrapper around the system allocator (no crate needed); counting
//! is off until [`enable`] so the other subcommands (the controllers whose time and RSS are
//! measured) pay only one relaxed load per allocation.
//!
//! The counts are the bytes the program asked for (`Layout::size`), not what the allocator
//! reserved for them (size classes, headers, fragmentation): the cost of a data structure, not
//! of one allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

static ENABLED: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

/// The system allocator, counting live bytes once [`enable`]d.
pub struct Counting;

fn add(delta: isize) {
    if ENABLED.load(Ordering::Relaxed) {
        let live = LIVE.fetch_add(delta, Ordering::Relaxed) + delta;
        PEAK.fetch_max(live, Ordering::Relaxed);
    }
}

fn signed(size: usize) -> isize {
    isize::try_from(size).unwrap_or(isize::MAX)
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged and only
// updates counters, so `System`'s guarantees carry over.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is; the caller upholds `GlobalAlloc::alloc`'s contract.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            add(signed(layout.size()));
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            add(signed(layout.size()));
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as `alloc`; `ptr` was allocated by `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        add(-signed(layout.size()));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `alloc`; `ptr` was allocated by `System` with `layout`.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            add(signed(new_size) - signed(layout.size()));
        }
        new
    }
}

/// Starts counting. Blocks allocated earlier and freed later make the count drift down by
/// their size: use differences of [`live`] only.
pub fn enable() {
    ENABLED.store(true, Ordering::SeqCst);
}

/// Live heap bytes (relative to an arbitrary origin, see [`enable`]).
#[must_use]
pub fn live() -> isize {
    LIVE.load(Ordering::SeqCst)
}

/// The highest [`live`] value since the last [`reset_peak`].
#[must_use]
pub fn peak() -> isize {
    PEAK.load(Ordering::SeqCst)
}

/// Restarts the high-water mark from the current live bytes.
pub fn reset_peak() {
    PEAK.store(LIVE.load(Ordering::SeqCst), Ordering::SeqCst);
}
