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
//! TCP-NV, CDG, TCP-LP) implement the smaller [`PathController`] trait and are lifted by [`Uncoupled`], which runs one
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
//! ## Your own controller, outside this crate
//! Implement the trait, describe the algorithm with [`registry::AlgorithmInfo::new`] and add it with
//! [`registry::register`]: from then on [`registry::build`] builds it from a specification string like a
//! built-in one, so mpquic's `TransportConfig::congestion_controller`, the tools' `--cc` flags and simulator
//! scenarios accept it. A single-path AIMD controller whose decrease factor is a parameter:
//!
//! ```
//! use std::time::{Duration, Instant};
//! use mpquic_cc::params::Params;
//! use mpquic_cc::registry::{self, AlgorithmInfo, Coupling};
//! use mpquic_cc::{
//!     AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, PathControllerFactory, PathController,
//!     PathId, RttSnapshot, SentEvent, Uncoupled,
//! };
//!
//! /// Additive increase (one datagram per window acknowledged), multiplicative decrease by `beta`, at most
//! /// once per recovery period (RFC 9002 §7.3.2).
//! #[derive(Debug)]
//! struct Aimd { beta: f64, mds: u64, window: u64, recovery_start: Option<Instant> }
//!
//! impl PathController for Aimd {
//!     fn on_packet_sent(&mut self, _: &SentEvent) {}
//!     fn on_ack(&mut self, ev: &AckEvent<'_>) {
//!         let in_recovery = ev.largest_time_sent().zip(self.recovery_start).is_some_and(|(t, r)| t <= r);
//!         if !in_recovery {
//!             self.window += self.mds * ev.bytes_acked() / self.window;
//!         }
//!     }
//!     fn on_congestion(&mut self, ev: &CongestionEvent) {
//!         if self.recovery_start.is_some_and(|r| ev.sent_time <= r) {
//!             return; // already reduced for this round trip
//!         }
//!         self.recovery_start = Some(ev.now);
//!         self.window = ((self.window as f64 * self.beta) as u64).max(2 * self.mds);
//!     }
//!     fn on_max_datagram_size(&mut self, mds: u16) { self.mds = u64::from(mds); }
//!     fn window(&self) -> u64 { self.window }
//!     fn pacing_rate(&self) -> Option<u64> { None }
//!     fn metrics(&self) -> CcMetrics {
//!         CcMetrics { cwnd: self.window, state: "aimd", ..CcMetrics::default() }
//!     }
//! }
//!
//! /// Builds one `Aimd` per path.
//! #[derive(Debug)]
//! struct AimdFactory { beta: f64 }
//!
//! impl PathControllerFactory for AimdFactory {
//!     type Controller = Aimd;
//!     fn name(&self) -> &'static str { "aimd" }
//!     fn build(&self, _now: Instant, mds: u16) -> Aimd {
//!         let mds = u64::from(mds);
//!         Aimd { beta: self.beta, mds, window: 10 * mds, recovery_start: None }
//!     }
//! }
//!
//! /// `aimd` or `aimd:beta=0.7`; the getter range-checks the value and names the key in its error.
//! fn build_aimd(p: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
//!     let beta = p.f64("beta", 0.5, 0.1, 0.9)?;
//!     Ok(Box::new(Uncoupled::new(AimdFactory { beta })))
//! }
//!
//! registry::register(AlgorithmInfo::new(
//!     "aimd",
//!     &[],
//!     "additive increase, multiplicative decrease by `beta`",
//!     Coupling::Uncoupled,
//!     &["beta"],
//!     build_aimd,
//! ))?;
//!
//! let mut cc = registry::build("aimd:beta=0.7")?;
//! assert_eq!(cc.name(), "aimd");
//! # #[allow(clippy::disallowed_methods)]
//! let t0 = Instant::now(); // a real connection passes its own clock readings
//! cc.on_path_added(PathId(0), t0, 1200);
//! assert_eq!(cc.window(PathId(0)), 12_000); // 10 datagrams of 1200 bytes
//! cc.on_congestion(&CongestionEvent {
//!     path: PathId(0),
//!     now: t0 + Duration::from_millis(50),
//!     sent_time: t0,
//!     lost_bytes: 1200,
//!     bytes_in_flight: 6000,
//!     persistent_congestion: false,
//!     ecn: false,
//!     rtt: RttSnapshot::from_rtt(Duration::from_millis(30)),
//! });
//! assert_eq!(cc.window(PathId(0)), 8_400); // 12000 × 0.7
//! // The specification is checked like a built-in one's.
//! assert!(registry::build("aimd:beta=2").is_err());
//! assert!(registry::build("aimd:gamma=1").is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Units: bytes, bytes per second, and caller-supplied [`std::time::Instant`]s. Each module cites the RFC, paper
//! or Linux kernel file it follows and lists its deviations.

#![deny(missing_docs)]

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

/// The crate README's examples, compiled and run as doctests so that the page crates.io shows stays correct.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
