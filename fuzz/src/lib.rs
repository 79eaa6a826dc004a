//! Fuzz targets of mpquic. Each module is one target: its `run(data)` feeds arbitrary bytes to one part of
//! the sans-IO core and checks properties beyond "does not panic" (round trips, invariants, exact delivery).
//!
//! The same functions serve three callers: the libFuzzer binaries in `fuzz_targets/` (built only by
//! `cargo fuzz`, feature `libfuzzer`), the corpus replay test (`tests/corpus.rs`, stable, part of
//! `cargo test --workspace`), and the seed generator (`examples/seed_corpus.rs`). See `fuzz/README.md`.
//!
//! A property violation is reported by panicking (`assert!`), which is what libFuzzer and the test harness
//! both catch.

// Panicking is how a fuzz target reports a violated property; the workspace's other lints stay on.
#![allow(clippy::panic)]

pub mod ack_ranges;
pub mod connection;
pub mod endpoint;
pub mod frame;
pub mod input;
pub mod packet;
pub mod pair;
pub mod seeds;
pub mod stream_reassembly;
pub mod transport_params;

/// The body of a fuzz target.
pub type Target = fn(&[u8]);

/// Every target, by the name of its binary and corpus directory.
pub const TARGETS: &[(&str, Target)] = &[
    ("packet", packet::run),
    ("frame", frame::run),
    ("transport_params", transport_params::run),
    ("ack_ranges", ack_ranges::run),
    ("stream_reassembly", stream_reassembly::run),
    ("endpoint", endpoint::run),
    ("connection", connection::run),
];

/// The instant virtual time starts at in every target (time is an input of the sans-IO core; only its
/// differences matter).
pub fn base_instant() -> std::time::Instant {
    static BASE: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    #[allow(clippy::disallowed_methods)] // virtual time starts at an arbitrary instant
    *BASE.get_or_init(std::time::Instant::now)
}
