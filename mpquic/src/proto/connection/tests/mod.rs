//! Connection tests over an in-process, virtual-time pair harness.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod attacks;
#[cfg(feature = "runtime")]
mod batched_sends;
mod cids;
mod close;
mod congestion_events;
mod ecn;
mod fuzz;
mod handshake;
mod harness;
mod idle;
mod limits;
mod migration;
mod multipath;
mod path_limits;
mod path_map;
mod path_set;
mod pmtud;
mod probes;
mod qlog;
mod random;
mod receive_windows;
mod reinjection;
mod reset;
mod retry;
mod rules;
mod sched_reuse;
mod scheduler_inputs;
mod transfer;
mod zero_rtt;
