//! Tools built on mpquic: `mpquic-perf` (an iperf-like client and server that measures multipath goodput per
//! path), `mpquic-netem` (a user-space UDP relay emulating N paths with the simulator's link model, for machines
//! without `tc netem`), `mpquic-tunnel` (a multipath IP tunnel over QUIC between two TUN devices) and the
//! end-to-end demo that starts perf and netem on loopback.

pub mod cli_exit;
pub mod clock;
pub mod demo;
pub mod netem;
pub mod perf;
pub mod tunnel;
