//! The ranges a scenario must stay within, beyond the per-field rules of the link model
//! ([`crate::link::limits`]).
//!
//! A scenario file is untrusted input: each bound below keeps a run's memory and event count finite and
//! known before it starts, so that `mpquic-sim validate` rejects what `mpquic-sim run` could not survive.
//! The table of every limit, with the reasoning, is `docs/limits.md`; `netsim/SCENARIOS.md` lists each
//! field's range next to it.
//!
//! | what | range |
//! |---|---|
//! | `scenario.duration` | > 0 and ≤ [`MAX_DURATION`] (24 h) |
//! | `scenario.sample_interval` | > 0, ≤ the duration, at most [`MAX_SAMPLES_PER_PATH`] instants over the duration, and at most [`MAX_SAMPLES`] samples over every path of every flow |
//! | `scenario.abandon_path_after_ptos` | 0 to [`MAX_ABANDON_PTOS`] |
//! | hosts, interfaces per host | 1 to [`MAX_HOSTS`], 1 to [`MAX_INTERFACES`] (the engine's `10.0.h.i` addresses) |
//! | nodes, links | at most [`MAX_NODES`], 1 to [`MAX_LINKS`] |
//! | flows, paths per flow | 1 to [`MAX_FLOWS`], 1 to [`MAX_PATHS_PER_FLOW`] (the transport's path cap) |
//! | `flows[i].bytes` | 1 to [`MAX_FLOW_BYTES`] |
//! | events | at most [`MAX_EVENTS`] |
//! | sweep runs (values of every axis multiplied, times the seeds) | 1 to [`MAX_SWEEP_RUNS`] |

use std::time::Duration;

/// The longest simulated run: one day.
pub const MAX_DURATION: Duration = Duration::from_secs(86_400);
/// The most sampling instants of one path's time series (`⌈duration / sample_interval⌉`).
pub const MAX_SAMPLES_PER_PATH: u64 = 100_000;
/// The most samples of a whole run: sampling instants × the paths of every flow. A sample is about 100 to
/// 300 bytes (its controller metrics included), so this keeps the time series under about 600 MB.
pub const MAX_SAMPLES: u64 = 2_000_000;
/// The largest dead-path threshold, in PTOs (0 disables the policy).
pub const MAX_ABANDON_PTOS: u32 = 1_000;
/// The most hosts: the engine numbers hosts' default addresses `10.0.h.i` with `h` from 1 to 254.
pub const MAX_HOSTS: usize = 254;
/// The most interfaces of one host (`i` of `10.0.h.i`, from 1 to 254).
pub const MAX_INTERFACES: usize = 254;
/// The most nodes (hosts and routers).
pub const MAX_NODES: usize = 10_000;
/// The most links (each is two link directions).
pub const MAX_LINKS: usize = 10_000;
/// The most flows. A flow costs about 160 KiB once its connection has run (`docs/soak.md`), so this keeps
/// a run under about 1 GB of connection state.
pub const MAX_FLOWS: usize = 5_000;
/// The most paths of one flow: the transport's default cap on path states at once (`max_paths`, 16).
pub const MAX_PATHS_PER_FLOW: usize = 16;
/// The largest transfer of one flow: 1 TB.
pub const MAX_FLOW_BYTES: u64 = 1_000_000_000_000;
/// The most scheduled events.
pub const MAX_EVENTS: usize = 1_000_000;
/// The most runs one sweep expands to (each run holds its own copy of the scenario).
pub const MAX_SWEEP_RUNS: usize = 10_000;
