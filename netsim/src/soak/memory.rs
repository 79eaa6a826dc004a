//! Memory measurement for the soak test: a counting global allocator and the process's resident set size.
//!
//! - [`CountingAlloc`] forwards every call to the backing allocator ([`Backing`]: jemalloc, or the system
//!   allocator where jemalloc does not build) and, once [`start_counting`] was called,
//!   keeps two counters: the bytes currently allocated (live heap) and the highest value that reached. A
//!   binary opts in with `#[global_allocator] static ALLOC: CountingAlloc = CountingAlloc;` (`mpquic-sim`
//!   does, and its `soak` command starts counting before it builds anything); until both happened
//!   [`live_heap`] and [`peak_heap`] return `None`. The counts are what the program asked for (the layout's
//!   size), not what the allocator reserved around it, from the moment counting started: a block allocated
//!   before and freed after lowers the live count by its size (the count is signed and reads as at least 0).
//!
//!   Counting is off by default because it is not free: every allocation and free then does an atomic
//!   read-modify-write on one shared counter, and the worker threads of `mpquic-sim study --jobs 2` pass that
//!   counter's cache line back and forth between the cores. Measured on the 2-core machine
//!   (`mpquic-sim study e --quick --jobs 2`, user CPU seconds, medians of alternating runs): 22.9 counting
//!   against 20.6 with the system allocator alone (five runs each), then 22.6 counting against 21.6 with
//!   counting off and 21.8 with the system allocator alone (four runs each): 4–10 %. With counting off the
//!   allocator adds one read of a flag that is never written, which the cores share without traffic.
//! - **Why jemalloc.** The simulator allocated and freed per packet when this was measured (received copies,
//!   frame records, the tunnel's inner datagrams; the last two are reused since, docs/simulator-speed.md,
//!   "Fourteenth pass"), and glibc's allocator costs measurably more CPU time there than jemalloc
//!   (`tikv-jemallocator`). Measured on the 2-core machine, the two binaries alternated
//!   (docs/simulator-speed.md, "Ninth pass"): the tunnel study's quick variant (`study e --quick --jobs 1`)
//!   ≈ 10 % less user time, study B's ≈ 4 % less, the single-flow bench and study D4 unchanged; every result
//!   byte-identical (the allocator never decides anything the simulation reads). mimalloc, tried the same
//!   way, gained ≈ 5 % on the tunnel study for 65 % more resident memory (jemalloc: 6 % more).
//! - [`rss`] reads `VmRSS` and `VmHWM` (peak) from `/proc/self/status` (Linux; `None` elsewhere): what the
//!   process really holds, allocator overhead and freed-but-kept memory included.
//!
//! This is the workspace's only `unsafe` code outside dependencies: implementing [`GlobalAlloc`] is
//! `unsafe` by definition. Each method only forwards its arguments to [`Backing`] unchanged and updates
//! atomic counters; it never touches the memory.

#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

/// The allocator [`CountingAlloc`] forwards to: jemalloc (see the module documentation for why).
#[cfg(not(target_env = "msvc"))]
pub type Backing = tikv_jemallocator::Jemalloc;
/// The allocator [`CountingAlloc`] forwards to: the system's, where jemalloc does not build (MSVC).
#[cfg(target_env = "msvc")]
pub type Backing = std::alloc::System;

/// The one instance of [`Backing`] (a unit struct).
#[cfg(not(target_env = "msvc"))]
const BACKING: Backing = tikv_jemallocator::Jemalloc;
/// The one instance of [`Backing`] (a unit struct).
#[cfg(target_env = "msvc")]
const BACKING: Backing = std::alloc::System;

/// Bytes currently allocated through [`CountingAlloc`] since counting started (signed: see the module
/// documentation).
static LIVE: AtomicI64 = AtomicI64::new(0);
/// The highest value [`LIVE`] reached (since the last [`reset_peak`]).
static PEAK: AtomicI64 = AtomicI64::new(0);
/// Whether [`CountingAlloc`] is the global allocator and counting (it has counted an allocation).
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// Whether [`start_counting`] was called.
static COUNTING: AtomicBool = AtomicBool::new(false);

/// Starts counting allocations (see the module documentation): call it before the allocations to be
/// counted, in practice first thing in the program.
pub fn start_counting() {
    COUNTING.store(true, Ordering::Relaxed);
}

/// Whether allocations are counted.
fn counting() -> bool {
    COUNTING.load(Ordering::Relaxed)
}

/// A global allocator that counts live bytes (see the module documentation).
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingAlloc;

/// A layout size as a signed count (sizes never exceed `isize::MAX`).
fn signed(by: usize) -> i64 {
    i64::try_from(by).unwrap_or(i64::MAX)
}

fn grow(by: usize) {
    let by = signed(by);
    let now = LIVE.fetch_add(by, Ordering::Relaxed).saturating_add(by);
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

/// [`Backing`] answered an allocation of `size` bytes with `p`: counted when it succeeded and counting is on.
fn allocated(p: *mut u8, size: usize) {
    if !p.is_null() && counting() {
        installed();
        grow(size);
    }
}

fn shrink(by: usize) {
    LIVE.fetch_sub(signed(by), Ordering::Relaxed);
}

// SAFETY: every method passes its arguments unchanged to `BACKING`, which upholds `GlobalAlloc`'s contract;
// the counters are plain atomics and never touch the memory.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        let p = unsafe { BACKING.alloc(layout) };
        allocated(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds `alloc_zeroed`'s contract.
        let p = unsafe { BACKING.alloc_zeroed(layout) };
        allocated(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; `ptr` was allocated by this allocator (that is, by `BACKING`) with
        // `layout`, as the caller guarantees.
        unsafe { BACKING.dealloc(ptr, layout) };
        if counting() {
            shrink(layout.size());
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds `realloc`'s contract.
        let p = unsafe { BACKING.realloc(ptr, layout, new_size) };
        if !p.is_null() && counting() {
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
        .then(|| u64::try_from(LIVE.load(Ordering::Relaxed)).unwrap_or(0))
}

/// The most bytes allocated at once since the start (or the last [`reset_peak`]), if [`CountingAlloc`] is
/// the global allocator.
pub fn peak_heap() -> Option<u64> {
    INSTALLED
        .load(Ordering::Relaxed)
        .then(|| u64::try_from(PEAK.load(Ordering::Relaxed)).unwrap_or(0))
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
