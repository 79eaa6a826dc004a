//! # mpquic-sched: which path carries the next packet
//!
//! Every packet scheduler of mpquic behind one trait, [`Scheduler`], usable on its own (this crate depends on
//! no other mpquic crate). A multipath connection decides per packet *how much* each path may carry (the
//! congestion controller, crate `mpquic-cc`) and *which* path carries it: this crate answers the second.
//! Each module cites the paper or Linux MPTCP kernel file it follows and lists its deviations.
//!
//! ## Using a scheduler
//! Build one by name with [`registry::build`] (`"minrtt"`, `"weighted:1=3,2=1"`, `"blest:lambda=1.2"`; see
//! [`registry::list`]). Each time the connection could send a packet it builds a read-only [`ConnView`]
//! (connection-level state plus one [`PathView`] per path) and asks:
//!
//! ```
//! use std::time::{Duration, Instant};
//! use mpquic_sched::{registry, validate, ConnView, Decision, PathId, PathView};
//!
//! # #[allow(clippy::disallowed_methods)]
//! let now = Instant::now(); // a real connection passes its own clock readings
//! let mut sched = registry::build("minrtt").unwrap();
//! let mut wifi = PathView::new(0, 12_000, Duration::from_millis(20));
//! let lte = PathView::new(1, 12_000, Duration::from_millis(60));
//! wifi.bytes_in_flight = 12_000; // window full
//! let paths = [wifi, lte];
//! let view = ConnView::new(&paths, 1200);
//! let decision = sched.select_send(&view, now);
//! assert_eq!(decision, Decision::Path(PathId(1)));
//! assert!(validate(&decision, &view).is_ok());
//! ```
//!
//! ## What each decision means for the sender
//! * [`Decision::Path`]: build the packet and send it on that path; then report it with
//!   [`Scheduler::on_sent`].
//! * [`Decision::Paths`]: **duplicate**: send the same frames in one packet on each listed path (redundant
//!   scheduling). It never means striping different data over the paths.
//! * [`Decision::Wait`]: the scheduler idles **on purpose** although some path has room (ECF and BLEST wait
//!   for the fast path; strict rotations wait for the path whose turn it is). Send nothing; do **not** fall
//!   back to another path on your own; ask again on the next acknowledgement, loss, path event or pacer
//!   release. A built-in scheduler only waits for a path that will be able to send without a path event
//!   ([`PathView::may_send`]), so a wait always ends.
//! * [`Decision::Blocked`]: no eligible path can send (windows full, pacers empty, no path alive). Send
//!   nothing and ask again on the same triggers. Probes the connection sends on its own (PTO probes,
//!   PATH_CHALLENGE, ACK-only packets) are not scheduled.
//!
//! Retransmitted frames go through [`Scheduler::select_retrans`] (with [`ConnView::sent_on`] naming the paths
//! they already used), new data through [`Scheduler::select_send`]; [`select`] dispatches on
//! [`ConnView::is_retransmission`]. A decision is a commitment: stateful schedulers advance their rotation or
//! hysteresis when they decide, so the connection must send what it asked about. mpquic's connection asks
//! when data waits and carries out every path decision with a data packet: if the datagram it is building
//! must go on another path (an acknowledgement or probe due there), the decision is kept for the next
//! datagram instead of being dropped. [`validate`] checks a
//! decision against the view; built-in schedulers always pass it (a property test checks every registered
//! scheduler over random views), so it matters for user-supplied schedulers.
//!
//! ## Writing a scheduler
//! Implement [`Scheduler`]: a name, [`Scheduler::select_send`], and whichever callbacks you need (all
//! default to no-ops; `select_retrans` defaults to `select_send`). Start from [`ConnView::eligible`]: it
//! applies the rules every scheduler shares (Linux MPTCP's `mptcp_is_available`): backup paths only when no available
//! path is alive, and retransmissions prefer paths they were not sent on. Choose among
//! [`Eligible::sendable`] (the paths you may return); use [`Eligible::paths`] for paths worth waiting for
//! and [`Eligible::idle`] to say "not now".
//!
//! ```
//! use std::time::Instant;
//! use mpquic_sched::{ConnView, Decision, Scheduler};
//!
//! /// Sends on the eligible path with the most free window.
//! #[derive(Debug, Default)]
//! struct MostRoom;
//!
//! impl Scheduler for MostRoom {
//!     fn name(&self) -> &'static str { "mostroom" }
//!     fn select_send(&mut self, conn: &ConnView<'_>, _now: Instant) -> Decision {
//!         let Some(e) = conn.eligible() else { return Decision::Blocked };
//!         match e.sendable().max_by_key(|p| (p.room(), std::cmp::Reverse(p.id))) {
//!             Some(p) => Decision::Path(p.id),
//!             None => Decision::Blocked,
//!         }
//!     }
//! }
//! ```
//!
//! Rules every scheduler keeps: return only paths for which [`PathView::can_send`] holds; read no clock
//! (`now` is an input) and use no unseeded randomness; iterate state in path-ID order (`BTreeMap`, sorted
//! vectors), so that the same inputs give the same decisions; never panic on any view or event sequence.
//! Per-connection and per-path state lives in the scheduler object; the callbacks keep it current.
//! A stateless scheduler whose answer only depends on which paths can send (minRTT, for one) may return
//! `true` from [`Scheduler::reuses_decisions`]: the connection then reuses its last path for the next
//! packets of the same instant without asking, until an event changes what it sees. A scheduler whose
//! state moves with every answer but knows its next answers (round-robin within a turn) may say for how
//! many packets with [`Scheduler::reusable_answers`], and hears of each reused one through
//! [`Scheduler::on_answer_reused`].
//!
//! ## Your own scheduler, outside this crate
//! Register it with [`registry::register`]: from then on [`registry::build`] builds it from a specification
//! string like a built-in one, so mpquic's `TransportConfig::scheduler`, the tools' `--scheduler` flags and
//! simulator scenarios accept it. The builder takes its parameters from [`params::Params`] with the same
//! typed, range-checked getters the built-in schedulers use, and rejects unknown keys with
//! [`params::Params::finish`]:
//!
//! ```
//! use std::time::{Duration, Instant};
//! use mpquic_sched::params::Params;
//! use mpquic_sched::{registry, validate, ConnView, Decision, PathId, PathView, SchedError, Scheduler};
//!
//! /// Prefers paths with at least `min_room` bytes of free window, lowest RTT first; without one, the
//! /// sendable path with the most room.
//! #[derive(Debug)]
//! struct Roomy { min_room: u64 }
//!
//! impl Scheduler for Roomy {
//!     fn name(&self) -> &'static str { "roomy" }
//!     fn select_send(&mut self, conn: &ConnView<'_>, _now: Instant) -> Decision {
//!         let Some(e) = conn.eligible() else { return Decision::Blocked };
//!         let roomy = e.sendable().filter(|p| p.room() >= self.min_room).min_by_key(|p| (p.srtt, p.id));
//!         let fallback = || e.sendable().max_by_key(|p| (p.room(), std::cmp::Reverse(p.id)));
//!         match roomy.or_else(fallback) {
//!             Some(p) => Decision::Path(p.id),
//!             None => Decision::Blocked,
//!         }
//!     }
//! }
//!
//! /// `roomy` or `roomy:min_room=<bytes>` (1200 to 1 MB, default 4800).
//! fn build_roomy(mut p: Params) -> Result<Box<dyn Scheduler>, SchedError> {
//!     let min_room = p.u64("min_room", 4800, 1200, 1_000_000)?;
//!     p.finish(&["min_room"])?;
//!     Ok(Box::new(Roomy { min_room }))
//! }
//!
//! registry::register("roomy", "lowest RTT among paths with room to spare", &["min_room"], build_roomy)?;
//!
//! let mut sched = registry::build("roomy:min_room=6000")?;
//! assert_eq!(sched.name(), "roomy");
//! assert!(registry::names().contains(&"roomy"));
//! // Path 0: 20 ms, 4800 bytes free; path 1: 60 ms, 12000 bytes free. Only path 1 has 6000 bytes to spare.
//! let mut fast = PathView::new(0, 12_000, Duration::from_millis(20));
//! fast.bytes_in_flight = 7_200;
//! let slow = PathView::new(1, 12_000, Duration::from_millis(60));
//! let paths = [fast, slow];
//! let view = ConnView::new(&paths, 1200);
//! # #[allow(clippy::disallowed_methods)]
//! let now = Instant::now(); // a real connection passes its own clock readings
//! let decision = sched.select_send(&view, now);
//! assert_eq!(decision, Decision::Path(PathId(1)));
//! assert!(validate(&decision, &view).is_ok());
//! // With the default (4800 bytes) both qualify and the faster path wins.
//! let mut sched = registry::build("roomy")?;
//! assert_eq!(sched.select_send(&view, now), Decision::Path(PathId(0)));
//! // The specification is checked like a built-in one's.
//! assert!(registry::build("roomy:min_room=10").is_err());
//! assert!(registry::build("roomy:max_room=1").is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Units: bytes, bytes per second, [`std::time::Duration`]s and caller-supplied [`std::time::Instant`]s.

#![deny(missing_docs)]

mod eligible;
mod error;
pub mod params;
pub mod registry;
mod scheduler;
pub mod schedulers;
mod types;

pub use eligible::{Eligible, fastest, validate};
pub use error::{InvalidDecision, SchedError};
pub use mpquic_types::SpecError;
pub use scheduler::{Scheduler, select};
pub use types::{AckInfo, ConnView, Decision, LossInfo, PathEvent, PathId, PathStatus, PathView, SentInfo};

/// The crate README's examples, compiled and run as doctests so that the page crates.io shows stays correct.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
