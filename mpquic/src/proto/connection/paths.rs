//! Per-path state: addresses, the peer's connection ID, loss recovery (packet-number space, RTT, pacing),
//! the receive-side ACK state of the path's application space, and anti-amplification accounting.
//!
//! Every path is keyed by its [`PathId`]; path 0 is the handshake path and also carries the Initial and
//! Handshake spaces in its recovery. Nothing here assumes a single path.

use std::net::SocketAddr;
use std::time::Instant;

use crate::cc::{CongestionController, PathId};
use crate::proto::ack_tracker::{AckConfig, AckTracker, SpaceKind};
use crate::proto::packet::ConnectionId;
use crate::proto::recovery::{PathRecovery, RecoveryConfig};
use crate::sched::{PathStatus, PathView};

use super::frames_out::Records;

/// Consecutive PTOs after which a path counts as potentially failed for the scheduler.
pub(super) const POTENTIALLY_FAILED_PTOS: u32 = 2;

/// One network path of the connection.
#[derive(Debug)]
pub(super) struct Path {
    pub(super) id: PathId,
    pub(super) remote: SocketAddr,
    pub(super) local: Option<SocketAddr>,
    pub(super) remote_cid: ConnectionId,
    pub(super) recovery: PathRecovery<Records>,
    pub(super) ack: AckTracker,
    /// Whether the peer's address is validated (RFC 9000 §8.1); until then the 3× limit applies to a server.
    pub(super) validated: bool,
    /// We are the server (the anti-amplification limit is the server's, RFC 9000 §8.1).
    pub(super) is_server: bool,
    pub(super) bytes_received: u64,
    pub(super) bytes_sent: u64,
    /// STREAM frame payload bytes sent (retransmissions included) and received (duplicates included) here.
    pub(super) stream_bytes_sent: u64,
    pub(super) stream_bytes_received: u64,
    /// STREAM frame payload bytes of packets sent here that the peer acknowledged.
    pub(super) stream_bytes_acked: u64,
    /// Packets sent, received (decrypted) and declared lost on this path.
    pub(super) packets_sent: u64,
    pub(super) packets_received: u64,
    pub(super) packets_lost: u64,
    /// Bytes of the packets declared lost.
    pub(super) bytes_lost: u64,
    /// The recovery's congestion-event count already added to the connection's total.
    pub(super) congestion_events_counted: u64,
    /// The sequence number of our next PATH_STATUS frame for this path.
    pub(super) status_seq_out: u64,
    /// A PATH_STATUS frame with the current status waits to be sent.
    pub(super) status_pending: bool,
    /// The maximum UDP payload sent on this path: `TransportConfig::max_udp_payload` at first, then what path
    /// MTU discovery found (`pmtud`).
    pub(super) mtu: u16,
    /// Path MTU discovery of this path, created once the path may probe (`None` while it may not, or when
    /// discovery is off).
    pub(super) pmtud: Option<super::pmtud::Pmtud>,
    pub(super) status: PathStatus,
    /// PATH_CHALLENGE data to echo in a PATH_RESPONSE on this path (one slot: a newer challenge replaces an
    /// older one, which bounds the work a peer can ask for).
    pub(super) path_response: Option<[u8; 8]>,
    /// Where that PATH_RESPONSE goes (the challenge's source address), from which local address (the one the
    /// challenge arrived on) and how many bytes it may take (3× the datagram that carried the challenge, RFC
    /// 9000 §8.1).
    pub(super) response_to: Option<(SocketAddr, Option<SocketAddr>, u64)>,
    /// Our path validation in progress (RFC 9000 §8.2).
    pub(super) challenge: Option<super::migration::Challenge>,
    /// Validation of another 4-tuple for this path while it keeps its current one (preferred address, previous
    /// address after a migration).
    pub(super) alt: Option<super::alt_path::AltProbe>,
    /// The last validated peer address, to return to if validation of a new one fails (RFC 9000 §9.3.2).
    pub(super) prev_remote: Option<SocketAddr>,
    /// Path validations that succeeded (tests, diagnostics).
    pub(super) validations: u64,
    /// Our validation of this new path waits for a slot (`ConnectionLimits::path_validations`).
    pub(super) validation_deferred: bool,
    /// Abandoned (PATH_ABANDON sent or received): the state is deleted at this time (3 PTO later).
    pub(super) abandoned_at: Option<Instant>,
    /// The highest PATH_STATUS sequence number received for this path.
    pub(super) peer_status_seq: Option<u64>,
    /// ECN marking and validation.
    pub(super) ecn: super::ecn::EcnPath,
}

impl Path {
    /// Path 0 at connection start.
    pub(super) fn handshake_path(
        remote: SocketAddr,
        remote_cid: ConnectionId,
        recovery: RecoveryConfig,
        ack: AckConfig,
        is_server: bool,
        mtu: u16,
    ) -> Self {
        let recovery = PathRecovery::new_handshake_path(recovery, is_server);
        // A client trusts the address it chose to contact.
        Self::new(
            PathId(0),
            remote,
            remote_cid,
            recovery,
            ack,
            is_server,
            !is_server,
            mtu,
        )
    }

    /// A path with its own recovery state; `validated` says whether its peer address is already trusted.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        id: PathId,
        remote: SocketAddr,
        remote_cid: ConnectionId,
        recovery: PathRecovery<Records>,
        ack: AckConfig,
        is_server: bool,
        validated: bool,
        mtu: u16,
    ) -> Self {
        Path {
            id,
            remote,
            local: None,
            remote_cid,
            recovery,
            ack: AckTracker::new(SpaceKind::Data, ack),
            validated,
            is_server,
            bytes_received: 0,
            bytes_sent: 0,
            stream_bytes_sent: 0,
            stream_bytes_received: 0,
            stream_bytes_acked: 0,
            packets_sent: 0,
            packets_received: 0,
            packets_lost: 0,
            bytes_lost: 0,
            congestion_events_counted: 0,
            status_seq_out: 0,
            status_pending: false,
            mtu,
            pmtud: None,
            status: PathStatus::Available,
            path_response: None,
            response_to: None,
            challenge: None,
            alt: None,
            prev_remote: None,
            validations: 0,
            validation_deferred: false,
            ecn: super::ecn::EcnPath::default(),
            peer_status_seq: None,
            abandoned_at: None,
        }
    }

    /// Whether `remote` (reached from our `local`, if known) is this path's current 4-tuple.
    pub(super) fn is_current(&self, remote: SocketAddr, local: Option<SocketAddr>) -> bool {
        remote == self.remote && (local.is_none() || self.local.is_none() || local == self.local)
    }

    /// How many more bytes we may send before the peer's address is validated.
    pub(super) fn amplification_budget(&self) -> u64 {
        if self.validated || !self.is_server {
            return u64::MAX;
        }
        // RFC 9000 §8.1: "Prior to validating the client address, servers MUST NOT send more than three times
        // as many bytes as the number of bytes they have received."
        self.bytes_received
            .saturating_mul(3)
            .saturating_sub(self.bytes_sent)
    }

    /// Whether the congestion window admits one more full-sized packet.
    pub(super) fn cwnd_allows(&self, cc: &dyn CongestionController) -> bool {
        self.recovery
            .bytes_in_flight()
            .saturating_add(u64::from(self.mtu))
            <= cc.window(self.id)
    }

    /// The scheduler's view of this path.
    pub(super) fn view(&self, cc: &dyn CongestionController, now: Instant) -> PathView {
        let rtt = self.recovery.rtt();
        let mut v = PathView::new(self.id.0, cc.window(self.id), rtt.smoothed());
        v.validated = self.validated;
        v.abandoned = self.abandoned_at.is_some();
        // Two consecutive PTOs without an acknowledgement: the path may have failed (Linux MPTCP's
        // `mptcp_is_available`); the scheduler prefers other paths until an ACK arrives on it again.
        v.potentially_failed = self.recovery.pto_count() >= POTENTIALLY_FAILED_PTOS;
        v.status = self.status;
        v.bytes_in_flight = self.recovery.bytes_in_flight();
        v.rttvar = rtt.var();
        v.min_rtt = rtt.min();
        v.mss = u64::from(self.mtu);
        // LLHD's goodput and STTF's growth model.
        v.delivery_rate = self.recovery.delivery_rate();
        v.in_slow_start = self.recovery.in_slow_start();
        // The connection places one packet at a time: nothing is queued per path. Its backlog is the view's
        // `bytes_waiting`.
        v.queued_bytes = 0;
        v.pacing_budget = match self.recovery.next_send_time(now, u64::from(self.mtu), cc) {
            Some(t) if t > now => Some(0),
            _ => None,
        };
        v
    }
}
