//! # mpquic-cc: congestion control for multipath QUIC
//!
//! Every congestion controller of mpquic, behind one trait, usable on its own (this crate depends on no other
//! mpquic crate).
//!
//! A multipath connection makes two decisions per packet that a single-path one does not: *how much* each
//! path may carry, and *which* path carries the packet. This crate answers the first. Because the coupled
//! algorithms of the multipath literature (LIA, OLIA, BALIA, wVegas, Coupled CUBIC, C-MPBBR, D-LIA, D-OLIA)
//! need the state of every path at once, the trait a connection holds, [`CongestionController`], is **per
//! connection**: one object owns all paths.
//!
//! Single-path algorithms (NewReno, CUBIC, Vegas, BBRv1, and the controllers the published multipath studies
//! run uncoupled on each subflow: BIC, Westwood+, HighSpeed, Hybla, Illinois, H-TCP, Scalable TCP, Veno, YeAH,
//! TCP-LP) implement the smaller [`PathController`] trait and are lifted by [`Uncoupled`], which runs one
//! independent instance per path.
//!
//! ## Using a controller
//! Build one by name with [`registry::build`] (`"cubic"`, `"olia"`, `"ccubic:variant=a2"`; see
//! [`registry::list`]), then feed it events:
//!
//! ```
//! use std::time::{Duration, Instant};
//! use mpquic_cc::{registry, AckEvent, AckedPacket, PathId, RttSnapshot, SentEvent};
//!
//! # #[allow(clippy::disallowed_methods)]
//! let t0 = Instant::now(); // a real connection passes its own clock readings
//! let mut cc = registry::build("lia").unwrap();
//! cc.on_path_added(PathId(0), t0, 1200);
//! cc.on_path_added(PathId(1), t0, 1200);
//! cc.on_packet_sent(&SentEvent { path: PathId(1), now: t0, bytes: 1200, bytes_in_flight: 1200, app_limited: false });
//! let acked = [AckedPacket { bytes: 1200, time_sent: t0 }];
//! cc.on_ack(&AckEvent {
//!     path: PathId(1),
//!     now: t0 + Duration::from_millis(30),
//!     rtt: RttSnapshot::from_rtt(Duration::from_millis(30)),
//!     packets: &acked,
//!     prior_bytes_in_flight: 1200,
//!     bytes_in_flight: 0,
//!     app_limited: false,
//!     rate_sample: None,
//! });
//! assert_eq!(cc.window(PathId(1)), 12_000 + 1200); // slow start: +1 packet per packet acknowledged
//! ```
//!
//! ## Writing a new controller
//! * **Single-path**: implement [`PathController`] (react to sent/ack/congestion events of one path, report a
//!   window, optionally a pacing rate, and [`CcMetrics`]) and a [`PathControllerFactory`] that builds one per
//!   path; wrap the factory in [`Uncoupled`] to get a [`CongestionController`]. If the algorithm is a variant
//!   of NewReno, reuse [`RenoWindow`]: it implements RFC 9002's slow start, recovery period, decrease and
//!   persistent congestion, and takes the congestion-avoidance increase as a closure.
//! * **Coupled**: implement [`CongestionController`] directly, keep per-path state in a [`PathMap`] (it
//!   iterates in path-ID order, so results are deterministic) and compute the shared quantities (α, totals)
//!   from it on each event. The loss-based coupled controllers here all keep a [`RenoWindow`] per path, so with
//!   one path they behave exactly like NewReno.
//! * Rules every controller keeps: never panic on any event sequence (events for unknown paths are ignored),
//!   keep windows finite and within `[2·mds, max window]`, read no clock (time comes in the events), and be
//!   deterministic. The property tests in `tests/properties.rs` check these for every registered algorithm;
//!   add yours to [`registry`] and they check it too.
//!
//! Units: bytes, bytes per second, and caller-supplied [`std::time::Instant`]s. Each module cites the RFC, paper
//! or Linux kernel file it follows and lists its deviations.

pub mod balia;
pub mod bbr;
pub mod bic;
pub mod ccubic;
pub mod cdg;
pub mod cmpbbr;
mod controller;
pub mod cubic;
pub mod delay_state;
pub mod delivery_rate;
pub mod dlia;
pub mod dolia;
mod error;
pub mod highspeed;
pub mod htcp;
pub mod hybla;
pub mod illinois;
pub mod lia;
pub mod lp;
pub mod newreno;
pub mod nv;
pub mod olia;
pub mod params;
mod path_map;
pub mod registry;
mod round;
pub mod scalable;
#[cfg(test)]
mod test_support;
mod types;
pub mod vegas;
pub mod veno;
pub mod westwood;
pub mod window;
pub mod wvegas;
pub mod yeah;

pub use controller::{CongestionController, PathController, PathControllerFactory, Uncoupled};
pub use delivery_rate::{DeliveryRateEstimator, PacketDeliveryState};
pub use error::CcError;
pub use mpquic_types::SpecError;
pub use path_map::PathMap;
pub use types::{
    AckEvent, AckedPacket, CcMetrics, CongestionEvent, Metric, PathAdvice, PathId, RateSample, RttSnapshot,
    SentEvent,
};
pub use window::RenoWindow;
