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
//! Around it:
//! - [`engine`]: the event-driven engine that runs real mpquic connections over the simulated links in
//!   virtual time, deterministically from one seed (single-path flows for now);
//! - [`scenario`]: the TOML scenario format (topology of hosts, routers and links; flows with several paths;
//!   scheduled link events; parameter sweeps), its validation with errors that name the bad field, and
//!   sweep expansion. The format is documented in `netsim/SCENARIOS.md`; scenarios ship in
//!   `netsim/scenarios/`;
//! - [`metrics`]: the studies' metrics as pure functions and the fixed-interval time-series recorder;
//! - [`results`]: one run's per-flow, per-path and per-bottleneck results;
//! - [`output`]: summary and sweep tables, JSON, CSV time series and SVG/PNG plots;
//! - [`study`]: whole published studies (manifests listing scenario files and variants), run in one go
//!   and written up as markdown reports;
//! - [`bench`]: the speed benchmark's reference case (`mpquic-sim bench`);
//! - [`soak`]: the soak test, a thousand connections with random path churn, loss and outages for ten
//!   simulated minutes, every transfer checked, memory per connection measured.

pub mod bench;
pub mod engine;
pub mod link;
pub mod metrics;
pub mod output;
pub mod progress;
pub mod results;
pub mod scenario;
pub mod shard;
pub mod soak;
pub mod study;
pub mod time;
pub mod units;

pub use link::{Arrival, Delivery, DropReason, Link, LinkConfig, LinkStats};
pub use scenario::{Scenario, ScenarioError};
pub use time::SimTime;
