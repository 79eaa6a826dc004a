//! `mpquic-netem`: a user-space UDP link emulator for machines without `tc netem`.
//!
//! The emulator relays datagrams between one client and one server over N emulated paths. Path `k` has a
//! *front* socket (the address the client sends to) and its own *back* socket (an ephemeral port facing the
//! server), so the server sees one distinct 4-tuple per path:
//!
//! ```text
//! client ──▶ front k ──[uplink k: Link]──▶ back k ──▶ server
//! client ◀── front k ◀──[downlink k: Link]── back k ◀── server
//! ```
//!
//! Each direction of each path is an independent [`mpquic_netsim::link::Link`] (rate, queue, delay, jitter,
//! loss, impairments, up/down), the simulator's own model, with its own seed; the emulator only maps real
//! time onto simulated time ([`clock`]) and sends each datagram at the arrival time the model gives
//! ([`relay`]). Server → client datagrams go to the last client address seen on that path's front socket.
//!
//! Library use (the perf demo and the interop runner start it in-process):
//!
//! ```no_run
//! # async fn demo() -> Result<(), mpquic_tools::netem::NetemError> {
//! use std::time::Duration;
//! use mpquic_netsim::link::LinkConfig;
//! use mpquic_tools::netem::{Emulator, EmulatorConfig, PathConfig};
//!
//! let link = LinkConfig::new(40_000_000, Duration::from_millis(10));
//! let config = EmulatorConfig::new("127.0.0.1:4433".parse().unwrap())
//!     .with_path(PathConfig::symmetric("127.0.0.1:0".parse().unwrap(), link.clone()))
//!     .with_path(PathConfig::symmetric("127.0.0.1:0".parse().unwrap(), link));
//! let handle = Emulator::start(config).await?;
//! let fronts = handle.front_addrs(); // where the client sends, path by path
//! handle.set_up(1, false)?;          // path 1 down, both directions
//! let counters = handle.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! Modules: [`config`] (the library's input), [`spec`] and [`units`] (the command-line syntax), [`file`](mod@file)
//! (the TOML file), [`emulator`] (start, handle, controller), [`direction`] (one direction's state),
//! [`relay`] (the socket tasks), [`control`] (schedule and control port), [`stats`] (counters), [`clock`],
//! [`cli`] (the binary).

pub mod cli;
pub mod clock;
pub mod config;
pub mod control;
pub mod direction;
pub mod emulator;
pub mod error;
pub mod file;
pub mod relay;
pub mod spec;
pub mod stats;
pub mod units;

pub use config::{Direction, EmulatorConfig, PathConfig, PathSelector, ScheduledEvent};
pub use emulator::{Controller, Emulator, EmulatorHandle};
pub use error::NetemError;
pub use stats::{Count, DirectionCounters, PathCounters};
