//! Memory measurement for the soak test: a counting global allocator and the process's resident set size.
//!
//! - [`CountingAlloc`] forwards every call to the system allocator and keeps two counters: the bytes
//!   currently allocated (live heap) and the highest value that reached. A binary opts in with
//!   `#[global_allocator] static ALLOC: CountingAlloc = CountingAlloc;` (`mpquic-sim` does); until then
//!   [`live_heap`] and [`peak_heap`] return `None`. The counts are what the program asked for (the layout's
//!   size), not what the allocator reserved around it.
//! - [`rss`] reads `VmRSS` and `VmHWM` (peak) from `/proc/self/status` (Linux; `None` elsewhere): what the
//!   process really holds, allocator overhead and freed-but-kept memory included.
//!
//! This is the workspace's only `unsafe` code outside dependencies: implementing [`GlobalAlloc`] is
//! `unsafe` by definition. Each method only forwards its arguments to [`System`] unchanged and updates
//! atomic counters; it never touches the memory.

#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Bytes currently allocated through [`CountingAlloc`].
static LIVE: AtomicU64 = AtomicU64::new(0);
/// The highest value [`LIVE`] reached (since the last [`reset_peak`]).
static PEAK: AtomicU64 = AtomicU64::new(0);
/// Whether [`CountingAlloc`] is the global allocator (it has served an allocation).
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// A global allocator that counts live bytes (see the module documentation).
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingAlloc;

fn grow(by: usize) {
    let now = LIVE
        .fetch_add(by as u64, Ordering::Relaxed)
        .saturating_add(by as u64);
    // Most allocations set no new peak: a plain load decides, and only a new peak pays for the
    // read-modify-write (`fetch_max` keeps it right when threads race).
    if now > PEAK.load(Ordering::Relaxed) {
        PEAK.fetch_max(now, Ordering::Relaxed);
    }
}

/// Marks the allocator installed; a plain load first, so that the flag's cache line is written once.
fn installed() {
    if !INSTALLED.load(Ordering::Relaxed) {
        INSTALLED.store(true, Ordering::Relaxed);
    }
}

fn shrink(by: usize) {
    LIVE.fetch_sub(by as u64, Ordering::Relaxed);
}

// SAFETY: every method passes its arguments unchanged to `System`, which upholds `GlobalAlloc`'s contract;
// the counters are plain atomics and never touch the memory.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            installed();
            grow(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds `alloc_zeroed`'s contract.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            installed();
            grow(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; `ptr` was allocated by this allocator (that is, by `System`) with
        // `layout`, as the caller guarantees.
        unsafe { System.dealloc(ptr, layout) };
        shrink(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds `realloc`'s contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grow(new_size - layout.size());
            } else {
                shrink(layout.size() - new_size);
            }
        }
        p
    }
}

/// Bytes currently allocated, if [`CountingAlloc`] is the global allocator.
pub fn live_heap() -> Option<u64> {
    INSTALLED
        .load(Ordering::Relaxed)
        .then(|| LIVE.load(Ordering::Relaxed))
}

/// The most bytes allocated at once since the start (or the last [`reset_peak`]), if [`CountingAlloc`] is
/// the global allocator.
pub fn peak_heap() -> Option<u64> {
    INSTALLED
        .load(Ordering::Relaxed)
        .then(|| PEAK.load(Ordering::Relaxed))
}

/// Starts a new peak measurement from the current live count.
pub fn reset_peak() {
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// The process's resident set size now and at its peak, in bytes (`VmRSS`, `VmHWM` of `/proc/self/status`);
/// `None` where that file does not exist.
pub fn rss() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.trim().strip_suffix("kB"))
            .and_then(|kb| kb.trim().parse::<u64>().ok())
            .map(|kb| kb.saturating_mul(1024))
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}
