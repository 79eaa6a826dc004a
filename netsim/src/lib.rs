//! `mpquic-netsim`: a deterministic network simulator for mpquic.
//!
//! This first part is the **link model** ([`link`]): one direction of a link with a serialisation rate, a
//! drop-tail queue (bytes, packets or a multiple of the BDP), propagation delay with jitter (order-preserving or
//! reordering), Bernoulli and Gilbert–Elliott loss, corruption, duplication, and an up/down state, all
//! changeable over time. It is a pure, deterministic state machine: time is supplied by the caller as a
//! [`SimTime`], randomness comes from seeded generators owned by the link, and payloads stay in the caller's
//! buffers.
//!
//! The link model is written once for two users: the virtual-time simulator of this crate and a future
//! real-socket emulator (`mpquic-netem`), which maps its clock onto [`SimTime`] and sends each datagram at
//! the arrival time the link returns.
//!
//! Next (issue 5): the discrete-event engine over virtual time, the topology (hosts with several interfaces,
//! routers, shared bottlenecks, cross traffic), scheduled events, TOML scenarios in `netsim/scenarios/`
//! (the studies of `references/scenarios.md`), and results (summary, JSON, CSV, plots).

pub mod link;
pub mod time;
pub mod units;

pub use link::{Arrival, Delivery, DropReason, Link, LinkConfig, LinkStats};
pub use time::SimTime;
