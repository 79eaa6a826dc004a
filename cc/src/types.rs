//! The vocabulary every controller shares: path identifiers, the events a connection feeds in (packet sent,
//! acknowledgement, congestion) and the metrics a controller exposes.
//!
//! Units: sizes and windows are in **bytes**, rates in **bytes per second**, times are [`Instant`]s supplied by
//! the caller (the crate never reads a clock).
//!
//! [`PathId`] is `mpquic-types`' (re-exported here): the schedulers and the connection name a path by the same
//! type.

use std::time::{Duration, Instant};

pub use mpquic_types::PathId;

/// The RTT estimator's state for one path (RFC 9002 §5) at the moment of an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RttSnapshot {
    /// The most recent RTT sample (`latest_rtt`).
    pub latest: Duration,
    /// `smoothed_rtt`.
    pub smoothed: Duration,
    /// `rttvar`.
    pub rttvar: Duration,
    /// `min_rtt`.
    pub min: Duration,
}

impl RttSnapshot {
    /// A snapshot in which every estimate equals `rtt` (rttvar is half of it, as after a first sample,
    /// RFC 9002 §5.3).
    pub fn from_rtt(rtt: Duration) -> Self {
        RttSnapshot {
            latest: rtt,
            smoothed: rtt,
            rttvar: rtt / 2,
            min: rtt,
        }
    }
}

/// A packet that counts towards bytes in flight was sent on `path` (RFC 9002 §7: ack-eliciting or padded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentEvent {
    /// Path the packet was sent on.
    pub path: PathId,
    /// Send time.
    pub now: Instant,
    /// Size of the packet in bytes.
    pub bytes: u64,
    /// Bytes in flight on this path **after** the packet was sent.
    pub bytes_in_flight: u64,
    /// The sender was application- or flow-control-limited (not congestion- or pacing-limited) when it sent
    /// this packet (RFC 9002 §7.8).
    pub app_limited: bool,
}

/// One newly acknowledged in-flight packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckedPacket {
    /// Size of the packet in bytes.
    pub bytes: u64,
    /// When it was sent.
    pub time_sent: Instant,
}

/// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation), produced once per acknowledgement by
/// the connection's [`crate::DeliveryRateEstimator`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateSample {
    /// Delivery rate in bytes per second (`delivered / interval`).
    pub delivery_rate: u64,
    /// Bytes delivered over the sample's interval.
    pub delivered: u64,
    /// The interval over which `delivered` was measured.
    pub interval: Duration,
    /// Total bytes delivered on the path when the newest acknowledged packet was sent (`P.delivered`).
    pub prior_delivered: u64,
    /// Total bytes delivered on the path, including this acknowledgement (`C.delivered`).
    pub total_delivered: u64,
    /// RTT of the newest acknowledged packet.
    pub rtt: Duration,
    /// The sample was taken while the sender was application-limited: it may underestimate the path.
    pub is_app_limited: bool,
    /// Bytes in flight before this acknowledgement was processed.
    pub prior_in_flight: u64,
    /// Bytes newly acknowledged by this acknowledgement.
    pub newly_acked: u64,
    /// Bytes newly declared lost while processing this acknowledgement.
    pub newly_lost: u64,
}

/// An acknowledgement (one ACK or PATH_ACK frame) that newly acknowledged in-flight packets of `path`.
#[derive(Clone, Copy, Debug)]
pub struct AckEvent<'a> {
    /// Path whose packet-number space the packets belong to.
    pub path: PathId,
    /// When the acknowledgement was processed.
    pub now: Instant,
    /// The path's RTT estimator after this acknowledgement updated it.
    pub rtt: RttSnapshot,
    /// The newly acknowledged in-flight packets, in packet-number order.
    pub packets: &'a [AckedPacket],
    /// Bytes in flight on the path before the packets were removed.
    pub prior_bytes_in_flight: u64,
    /// Bytes in flight on the path after the packets were removed.
    pub bytes_in_flight: u64,
    /// The sender was application- or flow-control-limited (RFC 9002 §7.8): the window must not grow.
    pub app_limited: bool,
    /// Delivery-rate sample for this acknowledgement, when the connection estimates one.
    pub rate_sample: Option<RateSample>,
}

impl AckEvent<'_> {
    /// Total bytes newly acknowledged.
    pub fn bytes_acked(&self) -> u64 {
        self.packets.iter().map(|p| p.bytes).sum()
    }

    /// Send time of the most recently sent acknowledged packet.
    pub fn largest_time_sent(&self) -> Option<Instant> {
        self.packets.iter().map(|p| p.time_sent).max()
    }
}

/// Loss of in-flight packets or an increase of the peer's ECN-CE count on `path` (RFC 9002 §7.3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CongestionEvent {
    /// Path the signal concerns.
    pub path: PathId,
    /// When the signal was detected.
    pub now: Instant,
    /// Send time of the newest lost packet, or for ECN-CE of the largest acknowledged packet. Packets sent
    /// before the current recovery period began do not start a new one (RFC 9002 §7.3.2).
    pub sent_time: Instant,
    /// Bytes declared lost (0 for a pure ECN-CE signal).
    pub lost_bytes: u64,
    /// Bytes in flight on the path after the lost packets were removed.
    pub bytes_in_flight: u64,
    /// The loss establishes persistent congestion (RFC 9002 §7.6): collapse to the minimum window.
    pub persistent_congestion: bool,
    /// The signal is an ECN-CE count increase, not a loss (RFC 9002 §7.1).
    pub ecn: bool,
    /// The path's RTT estimator when the signal was detected.
    pub rtt: RttSnapshot,
}

/// A named internal variable of a controller, for plots and logs (`alpha`, `rtt_mid`, `btl_bw`, …).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Metric {
    /// Short `snake_case` name, stable across releases.
    pub name: &'static str,
    /// Value, in the unit the name documents (bytes, bytes/s, seconds or a plain number).
    pub value: f64,
}

/// What a controller exposes about one path: the window, the threshold, and algorithm-specific variables.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CcMetrics {
    /// Congestion window in bytes.
    pub cwnd: u64,
    /// Slow-start threshold in bytes; `None` while it is infinite.
    pub ssthresh: Option<u64>,
    /// Pacing rate in bytes per second, if the controller paces.
    pub pacing_rate: Option<u64>,
    /// The controller's state machine state (`"slow_start"`, `"recovery"`, `"probe_bw"`, …).
    pub state: &'static str,
    /// Algorithm-specific variables, in a fixed order per algorithm.
    pub extras: Vec<Metric>,
}

impl CcMetrics {
    /// Looks up an extra metric by name.
    pub fn extra(&self, name: &str) -> Option<f64> {
        self.extras.iter().find(|m| m.name == name).map(|m| m.value)
    }
}

/// Advice a controller gives the connection about its paths, polled with
/// [`crate::CongestionController::poll_path_advice`]. The connection decides whether to follow it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathAdvice {
    /// The path does not help the connection (e.g. C-MPBBR's multipath-benefit check, Mahmud et al., IEEE Access 2020):
    /// close it (in QUIC: send PATH_ABANDON).
    Close {
        /// The path to close.
        path: PathId,
        /// Which rule advised it, for logs.
        reason: &'static str,
    },
}
