//! The vocabulary every scheduler shares: path identifiers, the read-only views a connection passes in
//! ([`PathView`], [`ConnView`]), the [`Decision`] a scheduler returns, and the events it is told about.
//!
//! Units: sizes and windows are in **bytes**, rates in **bytes per second**, times are [`Duration`]s and
//! caller-supplied [`Instant`]s (the crate never reads a clock).
//!
//! Invariant kept here: the per-path availability test of Linux MPTCP's `mptcp_is_available` exists once, in
//! [`PathView::can_send`]; every scheduler and [`crate::validate`] use it.
//!
//! [`PathId`] and [`PathStatus`] are `mpquic-types`' (re-exported here): the controllers and the connection
//! name a path by the same type.

use std::time::{Duration, Instant};

pub use mpquic_types::{PathId, PathStatus};

/// A read-only snapshot of one path, built by the connection each time it asks the scheduler.
#[derive(Clone, Debug, PartialEq)]
pub struct PathView {
    /// The path.
    pub id: PathId,
    /// Path validation succeeded (RFC 9000 §8.2; draft-ietf-quic-multipath-21 §3.1). Unvalidated paths never
    /// carry scheduled packets (PATH_CHALLENGE/RESPONSE are sent by the connection, not scheduled).
    pub validated: bool,
    /// Available or backup.
    pub status: PathStatus,
    /// The path was abandoned (PATH_ABANDON sent or received, draft-ietf-quic-multipath-21 §3.4).
    pub abandoned: bool,
    /// The connection suspects the path is broken: a PTO fired with no acknowledgement since, persistent
    /// congestion, or an RTO-loss-like state (Linux MPTCP's `pf` and `TCP_CA_Loss` in `mptcp_is_available`). Such a
    /// path is not scheduled; the connection's own PTO probes (RFC 9002 §6.2.4) are not scheduled either and keep
    /// testing it.
    pub potentially_failed: bool,
    /// Congestion window in bytes.
    pub cwnd: u64,
    /// Bytes in flight on this path (RFC 9002 §2).
    pub bytes_in_flight: u64,
    /// The controller is in slow start (its window doubles per round trip; used by STTF's growth model). A
    /// connection sets it from the controller's state: slow start, or BBR's Startup.
    pub in_slow_start: bool,
    /// `smoothed_rtt` (RFC 9002 §5.3); before the first sample, the initial RTT the connection uses.
    pub srtt: Duration,
    /// `rttvar` (RFC 9002 §5.3).
    pub rttvar: Duration,
    /// `min_rtt` (RFC 9002 §5.2).
    pub min_rtt: Duration,
    /// Delivery rate in bytes per second (draft-cheng-iccrg-delivery-rate-estimation), if a sample exists:
    /// the latest sample, where an application-limited sample below the current value is ignored (used by
    /// LLHD as the path's goodput).
    pub delivery_rate: Option<u64>,
    /// Bytes the pacer lets go right now; `None` when the path is not paced.
    pub pacing_budget: Option<u64>,
    /// Maximum datagram size of the path in bytes (the "MSS" of the MPTCP literature).
    pub mss: u64,
    /// Bytes already assigned to this path but not yet sent (MPTCP's per-subflow queue; OTIAS and STTF count
    /// it ahead of the packet). A connection that places packets one at a time has no such queue and passes
    /// 0: its backlog is [`ConnView::bytes_waiting`], which OTIAS and STTF use as the kernel's send queue.
    pub queued_bytes: u64,
}

impl PathView {
    /// A validated, available, idle path with the given window and RTT (rttvar = srtt/2, min RTT = srtt,
    /// MSS 1200, no pacer, no rate sample): a convenient starting point for tests and examples.
    pub fn new(id: u32, cwnd: u64, srtt: Duration) -> Self {
        PathView {
            id: PathId(id),
            validated: true,
            status: PathStatus::Available,
            abandoned: false,
            potentially_failed: false,
            cwnd,
            bytes_in_flight: 0,
            in_slow_start: false,
            srtt,
            rttvar: srtt / 2,
            min_rtt: srtt,
            delivery_rate: None,
            pacing_budget: None,
            mss: 1200,
            queued_bytes: 0,
        }
    }

    /// Validated, not abandoned and not potentially failed: the "definitely available" part of Linux MPTCP's
    /// `mptcp_is_available`.
    pub fn is_alive(&self) -> bool {
        self.validated && !self.abandoned && !self.potentially_failed
    }

    /// Free congestion window in bytes (`cwnd − bytes_in_flight`, 0 when over).
    pub fn room(&self) -> u64 {
        self.cwnd.saturating_sub(self.bytes_in_flight)
    }

    /// The shared availability test of Linux MPTCP's `mptcp_is_available` (QUIC mapping): the path is alive,
    /// `bytes_in_flight + size ≤ cwnd`, and the pacer allows `size` bytes now.
    ///
    /// Every built-in scheduler returns only paths for which this holds, and [`crate::validate`] checks it.
    pub fn can_send(&self, size: u64) -> bool {
        self.is_alive()
            && self.bytes_in_flight.saturating_add(size) <= self.cwnd
            && self.pacing_budget.is_none_or(|b| b >= size)
    }

    /// The path can send `size` bytes now, or will be able to without any path event: either it has bytes
    /// in flight (an acknowledgement will free window) or only the pacer holds it back. A scheduler that
    /// decides to [`Decision::Wait`] for a path waits only for paths of which this is true, so a wait always
    /// ends.
    pub fn may_send(&self, size: u64) -> bool {
        self.is_alive() && (self.bytes_in_flight > 0 || size <= self.cwnd)
    }
}

/// A read-only snapshot of the connection around the packet being placed.
#[derive(Clone, Copy, Debug)]
pub struct ConnView<'a> {
    /// Every path the connection knows (abandoned and unvalidated ones included), preferably sorted by
    /// path ID. Schedulers break every tie by path ID, so the order does not change decisions.
    pub paths: &'a [PathView],
    /// Size in bytes of the packet to place: what [`PathView::can_send`] checks against cwnd and pacer.
    pub packet_size: u64,
    /// The packet carries retransmitted frames (the connection called
    /// [`Scheduler::select_retrans`](crate::Scheduler::select_retrans)).
    pub is_retransmission: bool,
    /// For a retransmission, the paths its frames were already sent on (Linux MPTCP's `mptcp_is_available`: a
    /// reinjected segment prefers a path it has not been sent on). Empty for new data.
    pub sent_on: &'a [PathId],
    /// The connection's backlog: bytes of stream data waiting to be packetised (written and not yet sent on
    /// any path, whether or not flow control lets it go now, or lost and queued again), plus queued
    /// datagrams, including the data of this packet: the counterpart of Linux MPTCP's meta-socket write
    /// queue. ECF's `k`, OTIAS's unsent data and the send queue STTF spreads over the paths.
    pub bytes_waiting: u64,
    /// Connection-level flow-control credit: the peer's MAX_DATA minus the stream data sent so far
    /// (RFC 9000 §4.1). BLEST's send window is derived from it (see [`crate::schedulers::Blest`]).
    pub flow_credit: u64,
    /// Bytes of lost frames queued for retransmission and not yet resent.
    pub retransmit_queue: u64,
    /// Packets of `packet_size` the sender groups into one batch to one destination (with GSO, one system
    /// call); 1 when it sends datagram by datagram (the default, and the simulator). A scheduler that rotates
    /// paths may give each path a turn of at least this many packets, so that its batches fill.
    pub batch_packets: u64,
}

impl<'a> ConnView<'a> {
    /// A view for a new-data packet of `packet_size` bytes with nothing else waiting and unlimited
    /// flow-control credit.
    pub fn new(paths: &'a [PathView], packet_size: u64) -> Self {
        ConnView {
            paths,
            packet_size,
            is_retransmission: false,
            sent_on: &[],
            bytes_waiting: packet_size,
            flow_credit: u64::MAX,
            retransmit_queue: 0,
            batch_packets: 1,
        }
    }

    /// The view of path `id`, if the connection knows it.
    pub fn path(&self, id: PathId) -> Option<&'a PathView> {
        self.paths.iter().find(|p| p.id == id)
    }

    /// Sum of the bytes in flight over every path.
    pub fn total_bytes_in_flight(&self) -> u64 {
        self.paths
            .iter()
            .fold(0u64, |acc, p| acc.saturating_add(p.bytes_in_flight))
    }
}

/// What the scheduler wants done with the packet. See the crate documentation for what the sender does with
/// each variant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Send the packet on this path.
    Path(PathId),
    /// **Duplicate** the packet's frames on every listed path (redundant scheduling, Linux MPTCP's redundant scheduler
    /// (`mptcp_redundant.c`)): each path gets its own packet carrying the same frames. It never means "stripe different
    /// data over these paths" (the ambiguity upstream Linux MPTCP's scheduler interface ran into). The list is
    /// non-empty, has no duplicates and is in path-ID order.
    Paths(Vec<PathId>),
    /// Deliberately idle although a path could send (ECF, BLEST, strict rotations): send nothing now, do
    /// **not** fall back to another path, and ask again on the next acknowledgement, loss, path event or
    /// pacer release.
    Wait,
    /// No eligible path can send now (all windows full, paced out, or no path alive). Ask again on the next
    /// acknowledgement, loss, path event or pacer release.
    Blocked,
}

impl Decision {
    /// The paths the packet goes on (empty for [`Decision::Wait`] and [`Decision::Blocked`]).
    pub fn paths(&self) -> &[PathId] {
        match self {
            Decision::Path(p) => std::slice::from_ref(p),
            Decision::Paths(v) => v,
            Decision::Wait | Decision::Blocked => &[],
        }
    }

    /// The packet is sent now (on one or several paths).
    pub fn sends(&self) -> bool {
        !self.paths().is_empty()
    }
}

/// A packet the connection sent after a decision (or on its own: probes, ACK-only packets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentInfo {
    /// Path it went on.
    pub path: PathId,
    /// Size in bytes.
    pub bytes: u64,
    /// Send time.
    pub now: Instant,
    /// It carried stream data sent again (lost, or repeated by a probe or a redundant copy).
    pub retransmission: bool,
    /// Connection-level flow control was exhausted when it was sent: the credit left (the peer's MAX_DATA
    /// minus the stream data sent) was below one packet, so no new data could follow it on any path. A
    /// retransmission sent in that state is the send-window-blocked retransmission that raises BLEST's λ
    /// (see [`crate::schedulers::Blest`]).
    pub flow_blocked: bool,
}

/// Newly acknowledged bytes on a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckInfo {
    /// The path.
    pub path: PathId,
    /// Bytes newly acknowledged.
    pub bytes: u64,
    /// Time the acknowledgement was processed.
    pub now: Instant,
    /// The RTT sample it produced, if any.
    pub rtt: Option<Duration>,
}

/// Bytes declared lost on a path (RFC 9002 §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LossInfo {
    /// The path.
    pub path: PathId,
    /// Bytes declared lost.
    pub bytes: u64,
    /// Time the loss was detected.
    pub now: Instant,
}

/// A change in the set of paths or their state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathEvent {
    /// A path was opened (not yet validated).
    Added(PathId),
    /// Path validation succeeded.
    Validated(PathId),
    /// PATH_STATUS_AVAILABLE / PATH_STATUS_BACKUP was sent or received (draft-ietf-quic-multipath-21 §3.3).
    StatusChanged(PathId, PathStatus),
    /// The path was abandoned (draft-ietf-quic-multipath-21 §3.4).
    Abandoned(PathId),
    /// The path's state was discarded; its ID will not be seen again.
    Removed(PathId),
}

impl PathEvent {
    /// The path the event concerns.
    pub fn path(&self) -> PathId {
        match *self {
            PathEvent::Added(p)
            | PathEvent::Validated(p)
            | PathEvent::StatusChanged(p, _)
            | PathEvent::Abandoned(p)
            | PathEvent::Removed(p) => p,
        }
    }
}
