//! The two controller traits and the adapter between them.
//!
//! * [`CongestionController`] is what a connection holds: **one object per connection** that owns the state of
//!   every path, because coupled algorithms (LIA, OLIA, …) need all paths at once.
//! * [`PathController`] is the smaller trait of a single-path algorithm (NewReno, CUBIC, BBR, …): it sees the
//!   events of one path only.
//! * [`Uncoupled`] lifts a [`PathController`] into a [`CongestionController`] by running one independent
//!   instance per path: what Linux MPTCP and every other multipath QUIC stack do today.

use std::fmt;
use std::time::Instant;

use crate::{AckEvent, CcMetrics, CongestionEvent, PathAdvice, PathId, PathMap, SentEvent};

/// A congestion controller for a whole (possibly multipath) connection.
///
/// # Calling contract
/// * `on_path_added` before any event of that path; events for unknown paths are ignored.
/// * `on_packet_sent` for every packet that counts in bytes in flight (ack-eliciting or padded; RFC 9002 §7),
///   including PTO probes, which the connection may send beyond the window.
/// * `on_ack` once per acknowledgement frame that newly acknowledged in-flight packets of a path, with all those
///   packets; `on_congestion` once per loss-detection pass that declared packets of a path lost (or per ECN-CE
///   increase).
/// * `window` and `pacing_rate` may be read at any time; the connection must not let a path's bytes in flight
///   exceed its window except for probes.
///
/// Implementations never panic on any sequence of events and keep every window within
/// `[2 · max_datagram_size, max window]`.
pub trait CongestionController: Send + fmt::Debug {
    /// The registry name of the algorithm (`"olia"`, `"cubic"`, …).
    fn name(&self) -> &'static str;

    /// A path was added to the connection: when the connection creates it (before its validation completes), or
    /// for path 0 at connection start.
    fn on_path_added(&mut self, path: PathId, now: Instant, max_datagram_size: u16);

    /// A path was abandoned or closed: its state is discarded and it no longer counts in coupled sums.
    fn on_path_removed(&mut self, path: PathId);

    /// The path's maximum datagram size changed (PMTU discovery).
    fn on_max_datagram_size(&mut self, path: PathId, max_datagram_size: u16);

    /// A packet counting in bytes in flight was sent.
    fn on_packet_sent(&mut self, ev: &SentEvent);

    /// In-flight packets were newly acknowledged.
    fn on_ack(&mut self, ev: &AckEvent<'_>);

    /// Packets were declared lost, or the peer reported new ECN-CE marks.
    fn on_congestion(&mut self, ev: &CongestionEvent);

    /// The connection penalises `path`: a packet it carries holds back data that other paths already
    /// delivered (opportunistic retransmission re-sent it elsewhere), so the path should send less. Linux
    /// MPTCP halves the path's window (Raiciu et al., "How Hard Can It Be? Designing and Implementing a
    /// Deployable Multipath TCP", NSDI 2012, §4.2); the connection calls this at most once per smoothed RTT of
    /// the path. `ev` describes the penalty as a congestion signal without loss (`lost_bytes` 0, `ecn` false,
    /// `sent_time` = `now`, so it opens a new recovery period) whose `bytes_in_flight` is at most half the
    /// path's window (so that a controller sizing its window from what is in flight, as BBR's packet
    /// conservation does, also lands near half).
    ///
    /// The default treats it as that congestion event ([`CongestionController::on_congestion`]): every
    /// algorithm reduces the path's window by its own decrease rule (NewReno halves, CUBIC multiplies by 0.7,
    /// BBR conserves what is in flight), and a coupled algorithm updates its shared state as for any loss.
    fn on_penalize(&mut self, ev: &CongestionEvent) {
        self.on_congestion(ev)
    }

    /// The congestion window of `path` in bytes (0 for an unknown path).
    fn window(&self, path: PathId) -> u64;

    /// The pacing rate of `path` in bytes per second, if the algorithm paces.
    fn pacing_rate(&self, path: PathId) -> Option<u64>;

    /// The internal variables of `path` (`None` for an unknown path).
    fn metrics(&self, path: PathId) -> Option<CcMetrics>;

    /// The state machine state of `path` (`"slow_start"`, `"startup"`, …; `None` for an unknown path): the
    /// `state` of [`CongestionController::metrics`] without building the rest, for callers that read it after
    /// every acknowledgement.
    fn state(&self, path: PathId) -> Option<&'static str> {
        self.metrics(path).map(|m| m.state)
    }

    /// Advice about the paths (such as closing one that does not help), if the algorithm gives any. Poll after
    /// feeding events; each piece of advice is returned once.
    fn poll_path_advice(&mut self) -> Option<PathAdvice> {
        None
    }
}

impl CongestionController for Box<dyn CongestionController> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn on_path_added(&mut self, path: PathId, now: Instant, max_datagram_size: u16) {
        (**self).on_path_added(path, now, max_datagram_size)
    }
    fn on_path_removed(&mut self, path: PathId) {
        (**self).on_path_removed(path)
    }
    fn on_max_datagram_size(&mut self, path: PathId, max_datagram_size: u16) {
        (**self).on_max_datagram_size(path, max_datagram_size)
    }
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        (**self).on_packet_sent(ev)
    }
    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        (**self).on_ack(ev)
    }
    fn on_congestion(&mut self, ev: &CongestionEvent) {
        (**self).on_congestion(ev)
    }
    fn on_penalize(&mut self, ev: &CongestionEvent) {
        (**self).on_penalize(ev)
    }
    fn window(&self, path: PathId) -> u64 {
        (**self).window(path)
    }
    fn pacing_rate(&self, path: PathId) -> Option<u64> {
        (**self).pacing_rate(path)
    }
    fn metrics(&self, path: PathId) -> Option<CcMetrics> {
        (**self).metrics(path)
    }
    fn state(&self, path: PathId) -> Option<&'static str> {
        (**self).state(path)
    }
    fn poll_path_advice(&mut self) -> Option<PathAdvice> {
        (**self).poll_path_advice()
    }
}

/// A single-path congestion controller: sees only the events of its own path.
///
/// The `path` field of the events it receives is that of its path and can be ignored.
pub trait PathController: Send + fmt::Debug {
    /// A packet counting in bytes in flight was sent.
    fn on_packet_sent(&mut self, ev: &SentEvent);
    /// In-flight packets were newly acknowledged.
    fn on_ack(&mut self, ev: &AckEvent<'_>);
    /// Packets were declared lost, or new ECN-CE marks were reported.
    fn on_congestion(&mut self, ev: &CongestionEvent);
    /// The maximum datagram size changed.
    fn on_max_datagram_size(&mut self, max_datagram_size: u16);
    /// Congestion window in bytes.
    fn window(&self) -> u64;
    /// Pacing rate in bytes per second, if the algorithm paces.
    fn pacing_rate(&self) -> Option<u64>;
    /// Internal variables.
    fn metrics(&self) -> CcMetrics;
    /// The state machine state: the `state` of [`PathController::metrics`] without building the rest.
    fn state(&self) -> &'static str {
        self.metrics().state
    }
}

/// Builds the [`PathController`] of a new path: the configuration of a single-path algorithm.
pub trait PathControllerFactory: Send + fmt::Debug {
    /// The controller it builds.
    type Controller: PathController;
    /// Registry name of the algorithm.
    fn name(&self) -> &'static str;
    /// A fresh controller for a path that starts at `now`.
    fn build(&self, now: Instant, max_datagram_size: u16) -> Self::Controller;
}

/// Runs one independent single-path controller per path: no coupling.
#[derive(Debug)]
pub struct Uncoupled<F: PathControllerFactory> {
    factory: F,
    paths: PathMap<F::Controller>,
}

impl<F: PathControllerFactory> Uncoupled<F> {
    /// One controller per path, each built by `factory`.
    pub fn new(factory: F) -> Self {
        Uncoupled {
            factory,
            paths: PathMap::new(),
        }
    }

    /// The single-path controller of `path`.
    pub fn path(&self, path: PathId) -> Option<&F::Controller> {
        self.paths.get(path)
    }
}

impl<F: PathControllerFactory> CongestionController for Uncoupled<F> {
    fn name(&self) -> &'static str {
        self.factory.name()
    }

    fn on_path_added(&mut self, path: PathId, now: Instant, max_datagram_size: u16) {
        self.paths
            .insert(path, self.factory.build(now, max_datagram_size));
    }

    fn on_path_removed(&mut self, path: PathId) {
        self.paths.remove(path);
    }

    fn on_max_datagram_size(&mut self, path: PathId, max_datagram_size: u16) {
        if let Some(p) = self.paths.get_mut(path) {
            p.on_max_datagram_size(max_datagram_size);
        }
    }

    fn on_packet_sent(&mut self, ev: &SentEvent) {
        if let Some(p) = self.paths.get_mut(ev.path) {
            p.on_packet_sent(ev);
        }
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        if let Some(p) = self.paths.get_mut(ev.path) {
            p.on_ack(ev);
        }
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        if let Some(p) = self.paths.get_mut(ev.path) {
            p.on_congestion(ev);
        }
    }

    fn window(&self, path: PathId) -> u64 {
        self.paths.get(path).map_or(0, |p| p.window())
    }

    fn pacing_rate(&self, path: PathId) -> Option<u64> {
        self.paths.get(path).and_then(|p| p.pacing_rate())
    }

    fn metrics(&self, path: PathId) -> Option<CcMetrics> {
        self.paths.get(path).map(|p| p.metrics())
    }

    fn state(&self, path: PathId) -> Option<&'static str> {
        self.paths.get(path).map(|p| p.state())
    }
}
