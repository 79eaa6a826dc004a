//! Multipath (draft-ietf-quic-multipath-21): negotiation through initial_max_path_id, the path a datagram
//! belongs to (the path ID of its Destination Connection ID), paths the client opens
//! ([`Connection::open_path`]) and the server learns of, and the multipath frames that concern path IDs
//! (PATH_ACK is handled with ACK; the connection-ID frames in `cids`; the PATH_ABANDON, MAX_PATH_ID,
//! PATHS_BLOCKED and PATH_STATUS frames we send are written by `path_set`).
//!
//! Once multipath is negotiated every 1-RTT packet of a path uses that path's packet-number space and the
//! path ID in its AEAD nonce, and acknowledgements are PATH_ACK frames (sent on the path they acknowledge).

use std::net::SocketAddr;
use std::time::Instant;

use crate::cc::PathId;
use crate::proto::cid::{OpenPathError, PathDisposition};
use crate::proto::error::TransportError;
use crate::proto::frame::{PathCidsBlocked, PathStatus as PathStatusFrame};
use crate::proto::recovery::PathRecovery;
use crate::proto::transport_params::Side;
use crate::sched::{PathEvent, PathStatus};

use super::Connection;
use super::paths::Path;

impl Connection {
    /// Whether both sides sent initial_max_path_id (draft-ietf-quic-multipath-21 §2).
    pub fn multipath(&self) -> bool {
        self.paths.ids.multipath()
    }

    /// The path ID a datagram's first packet names: the path of a short header's Destination Connection ID;
    /// long headers (and unknown connection IDs) belong to path 0.
    pub(super) fn datagram_path(&self, data: &[u8]) -> PathId {
        let Some(first) = data.first() else {
            return PathId(0);
        };
        // RFC 9000 §17.3: a short header has the Header Form bit clear; its DCID follows the first byte.
        if first & 0x80 != 0 || !self.multipath() {
            return PathId(0);
        }
        let len = self.local_cid.len();
        data.get(1..1 + len)
            .and_then(crate::proto::packet::ConnectionId::new)
            .and_then(|cid| self.paths.local_cids.lookup(&cid))
            .map_or(PathId(0), |info| info.path_id)
    }

    /// Server: a datagram arrived for path `id`, which we do not know yet (the client opened it,
    /// draft-ietf-quic-multipath-21 §3). Creates it, unvalidated, and starts validating the client's address
    /// on it. Returns `false` if the datagram must be dropped.
    pub(super) fn accept_new_path(
        &mut self,
        now: Instant,
        id: PathId,
        remote: SocketAddr,
        local: Option<SocketAddr>,
    ) -> bool {
        if self.side != Side::Server || !self.multipath() || self.paths.contains(&id) {
            return false;
        }
        // draft-ietf-quic-multipath-21 §2: a path ID above our maximum is never granted (we issued no
        // connection ID for it; frames naming it are a PROTOCOL_VIOLATION in `check_frame_path`).
        if self.paths.ids.is_abandoned(id) || id > self.paths.ids.local_max() {
            return false;
        }
        // draft-ietf-quic-multipath-21 §3: a path needs connection IDs from both sides.
        let Some(remote_cid) = self.paths.remote_cids.current(id) else {
            return false;
        };
        if !self.insert_path(now, id, remote, local, remote_cid) {
            return false;
        }
        // `ConnectionLimits::path_validations`: at the cap our validation of the path waits for a slot
        // (draft-ietf-quic-multipath-21 §5: pace concurrent validations). Meanwhile the path only answers the
        // client's PATH_CHALLENGE and acknowledges, within the 3× anti-amplification limit (RFC 9000 §8.1).
        if self.validations_in_flight() >= self.config.limits.path_validations() {
            tracing::debug!(path = id.0, "path validation deferred: validations at the limit");
            if let Some(p) = self.paths.get_mut(&id) {
                p.validation_deferred = true;
            }
        } else {
            self.start_path_validation(now, id);
        }
        self.events
            .push_back(super::Event::PathOpened { path: id, remote });
        true
    }

    /// Opens a new path from `local` (our address, `None`: the socket's default) to `remote` (client only,
    /// after the handshake is confirmed): the next path ID with a connection ID from each side, validated with
    /// PATH_CHALLENGE before data is scheduled on it.
    pub fn open_path(
        &mut self,
        now: Instant,
        local: Option<SocketAddr>,
        remote: SocketAddr,
        status: PathStatus,
    ) -> Result<PathId, OpenPathError> {
        self.sched_input();
        if self.side != Side::Client {
            return Err(OpenPathError::NotClient);
        }
        if !self.multipath() || !self.handshake_confirmed || self.state.is_closed() {
            return Err(OpenPathError::NotNegotiated);
        }
        // `ConnectionLimits::path_validations` (draft-ietf-quic-multipath-21 §5: pace concurrent validations).
        let in_flight = self.validations_in_flight();
        if in_flight >= self.config.limits.path_validations() {
            return Err(OpenPathError::ValidationsInProgress(in_flight));
        }
        let set = &mut self.paths;
        let (remote_cids, local_cids) = (&set.remote_cids, &set.local_cids);
        let id = set
            .ids
            .open_path(|p| remote_cids.has_cids(p) && local_cids.has_cids(p))?;
        let remote_cid = set
            .remote_cids
            .current(id)
            .ok_or(OpenPathError::NoConnectionIds(id))?;
        if !self.insert_path(now, id, remote, local, remote_cid) {
            return Err(OpenPathError::NoConnectionIds(id));
        }
        if let Some(p) = self.paths.get_mut(&id) {
            p.status = status;
        }
        self.start_path_validation(now, id);
        self.issue_cids();
        Ok(id)
    }

    /// Adds the unvalidated path `id` to `remote` with the peer's connection ID `remote_cid` (its current one
    /// for `id`), and tells the controller and the scheduler. `false` if the set refused it (see
    /// [`PathSet::open`](super::path_set::PathSet::open)).
    fn insert_path(
        &mut self,
        now: Instant,
        id: PathId,
        remote: SocketAddr,
        local: Option<SocketAddr>,
        remote_cid: crate::proto::packet::ConnectionId,
    ) -> bool {
        let mtu = self.config.max_udp_payload;
        let mut recovery = PathRecovery::new(id, self.config.recovery);
        if let Some(mad) = self.peer_params.as_ref().map(|pp| pp.max_ack_delay.into_inner()) {
            recovery.set_max_ack_delay(now, std::time::Duration::from_millis(mad));
        }
        let is_server = self.side == Side::Server;
        let mut p = Path::new(
            id,
            remote,
            remote_cid,
            recovery,
            self.config.ack,
            is_server,
            false,
            mtu,
        );
        p.local = local;
        if let Err(e) = self.paths.open(p) {
            tracing::debug!(path = id.0, "path not added: {e}");
            return false;
        }
        self.cc.on_path_added(id, now, mtu);
        self.sched.on_path_event(&PathEvent::Added(id));
        true
    }

    /// PATH_STATUS_AVAILABLE / PATH_STATUS_BACKUP from the peer.
    pub(super) fn on_path_status_frame(&mut self, f: &PathStatusFrame) -> Result<(), TransportError> {
        let PathDisposition::Process(id) = self.paths.ids.check_frame_path(Some(f.path_id), f.ty())? else {
            return Ok(());
        };
        let Some(p) = self.paths.get_mut(&id) else {
            return Ok(());
        };
        // draft-ietf-quic-multipath-21 §3: "ignore a frame whose number is ≤ the highest seen for that path".
        let seq = f.sequence.into_inner();
        if p.peer_status_seq.is_some_and(|s| seq <= s) {
            return Ok(());
        }
        p.peer_status_seq = Some(seq);
        let status = if f.available {
            PathStatus::Available
        } else {
            PathStatus::Backup
        };
        if p.status != status {
            p.status = status;
            self.sched.on_path_event(&PathEvent::StatusChanged(id, status));
            self.events
                .push_back(super::Event::PathStatusChanged { path: id, status });
        }
        Ok(())
    }

    /// MAX_PATH_ID from the peer: more path IDs may get connection IDs.
    pub(super) fn on_max_path_id_frame(&mut self, max: PathId) -> Result<(), TransportError> {
        self.paths.ids.handle_max_path_id(max)?;
        self.issue_cids();
        Ok(())
    }

    /// PATHS_BLOCKED from the peer (informational, checked).
    pub(super) fn on_paths_blocked_frame(&mut self, max: PathId) -> Result<(), TransportError> {
        self.paths.ids.handle_paths_blocked(max)?;
        Ok(())
    }

    /// PATH_CIDS_BLOCKED from the peer (informational, checked).
    pub(super) fn on_path_cids_blocked_frame(&mut self, f: &PathCidsBlocked) -> Result<(), TransportError> {
        let next = self.paths.local_cids.next_sequence(f.path_id);
        self.paths.ids.check_path_cids_blocked(f, next)?;
        Ok(())
    }
}

/// Why [`Connection::close_path`] refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ClosePathError {
    /// Multipath was not negotiated.
    #[error("multipath not negotiated")]
    NotNegotiated,
    /// No such path, or it is already abandoned.
    #[error("unknown or abandoned path")]
    UnknownPath,
    /// No other path is validated and not abandoned: this one cannot be abandoned yet (close the connection
    /// instead, or wait until another path is validated).
    #[error("the last validated path cannot be abandoned")]
    LastPath,
}

impl Connection {
    /// Abandons `path` with PATH_ABANDON carrying `error_code` (draft-ietf-quic-multipath-21 §3): the peer's
    /// connection IDs of the path are retired at once, every unacknowledged packet of the path counts as lost
    /// and its frames are rescheduled on the surviving paths, and the path's state is kept 3 PTO for late
    /// packets.
    pub fn close_path(
        &mut self,
        now: Instant,
        path: PathId,
        error_code: crate::proto::coding::VarInt,
    ) -> Result<(), ClosePathError> {
        self.sched_input();
        if !self.multipath() {
            return Err(ClosePathError::NotNegotiated);
        }
        if !self.paths.is_live(&path) {
            return Err(ClosePathError::UnknownPath);
        }
        // Another path must be able to carry the connection: abandoning the only validated path while the
        // others are still being validated would leave nothing to send on (and the peer, if our PATH_ABANDON
        // reaches it first, closes the connection: draft-ietf-quic-multipath-21 §3).
        if !self.paths.other_validated(path) {
            return Err(ClosePathError::LastPath);
        }
        self.abandon_path(now, path, Some(error_code));
        Ok(())
    }

    /// PATH_ABANDON from the peer: we answer with our own (draft-ietf-quic-multipath-21 §3: "The receiver
    /// replies with its own PATH_ABANDON") and abandon the path; if it was the last one, the connection closes.
    pub(super) fn on_path_abandon_frame(
        &mut self,
        now: Instant,
        f: &crate::proto::frame::PathAbandon,
    ) -> Result<(), TransportError> {
        let crate::proto::cid::PathDisposition::Process(id) = self
            .paths
            .ids
            .check_frame_path(Some(f.path_id), crate::proto::frame::FrameType::PATH_ABANDON)?
        else {
            return Ok(());
        };
        let Some(p) = self.paths.get(&id) else {
            // A path we never used: its ID is consumed all the same, and there is no state to linger.
            self.paths.consume_unopened(id);
            self.issue_cids();
            return Ok(());
        };
        if p.abandoned_at.is_some() {
            return Ok(());
        }
        self.abandon_path(now, id, Some(crate::proto::coding::VarInt::ZERO));
        if self.paths.live().next().is_none() {
            // draft-ietf-quic-multipath-21 §3: "If the last path is abandoned, the receiver SHOULD send
            // CONNECTION_CLOSE".
            self.close_with_error(
                now,
                TransportError::new(
                    crate::proto::error::TransportErrorCode::NO_ERROR,
                    "last path abandoned",
                ),
            );
        }
        Ok(())
    }

    /// After a PTO on `path`: once it counts as potentially failed and another validated path is alive, every
    /// frame still in flight on it is queued again, so that the scheduler moves it to the working paths
    /// (Linux MPTCP's reinjection); whatever the failed path later delivers is acknowledged twice at worst.
    pub(super) fn reinject_if_failed(&mut self, path: PathId) {
        if !self.paths.suspect(path) {
            return;
        }
        let in_flight = self.outstanding_records(path, crate::proto::recovery::SpaceId::Data, usize::MAX);
        for records in in_flight {
            self.on_records_lost(records);
        }
    }

    /// Path validation of `id` failed: abandon it with PATH_UNSTABLE_OR_POOR, unless it is the last path.
    pub(super) fn abandon_unvalidated_path(&mut self, now: Instant, id: PathId) {
        if self.paths.live().any(|p| p != id) {
            self.abandon_path(
                now,
                id,
                Some(crate::proto::frame::PathAbandon::PATH_UNSTABLE_OR_POOR),
            );
        } else {
            // The last path: there is nothing to fall back to, so validate it again (a link that was down may
            // be back); the idle timeout ends the connection if the path never answers (RFC 9000 §10.1).
            self.start_path_validation(now, id);
        }
    }

    fn abandon_path(&mut self, now: Instant, id: PathId, frame: Option<crate::proto::coding::VarInt>) {
        let three_pto = self.three_pto();
        let Some(lost) = self.paths.abandon(id, now + three_pto, frame) else {
            return;
        };
        // "Packets still unacknowledged when path state is deleted count as lost": their frames go to the
        // surviving paths.
        self.qlog_packets_lost(now, id, &lost, Some(super::qlog::PATH_ABANDONED));
        self.stats.packets_lost += lost.len() as u64;
        for r in lost {
            self.on_records_lost(r.frames);
        }
        self.start_deferred_validations(now);
        self.cc.on_path_removed(id);
        self.sched.on_path_event(&PathEvent::Abandoned(id));
        self.events.push_back(super::Event::PathAbandoned { path: id });
        self.issue_cids();
    }

    /// The earliest time an abandoned path's state may be deleted.
    pub(super) fn abandoned_path_timeout(&self) -> Option<Instant> {
        self.paths.deletion_deadline()
    }

    /// Deletes abandoned paths whose 3 PTO have passed.
    pub(super) fn on_abandoned_path_timeout(&mut self, now: Instant) {
        let due = self.paths.remove_expired(now);
        self.flush_routing_updates();
        for &id in &due {
            self.sched.on_path_event(&PathEvent::Removed(id));
            self.events.push_back(super::Event::PathClosed { path: id });
        }
        if !due.is_empty() {
            // Path IDs granted by `release` need connection IDs.
            self.issue_cids();
        }
    }
}

impl Connection {
    /// Marks `path` available or backup and tells the peer with PATH_STATUS_AVAILABLE / PATH_STATUS_BACKUP
    /// (draft-ietf-quic-multipath-21 §3; advisory for the peer's scheduler, binding for ours).
    pub fn set_path_status(&mut self, path: PathId, status: PathStatus) -> Result<(), ClosePathError> {
        self.sched_input();
        if !self.multipath() {
            return Err(ClosePathError::NotNegotiated);
        }
        let Some(p) = self.paths.get_mut(&path).filter(|p| p.abandoned_at.is_none()) else {
            return Err(ClosePathError::UnknownPath);
        };
        p.status = status;
        p.status_pending = true;
        self.sched.on_path_event(&PathEvent::StatusChanged(path, status));
        Ok(())
    }

    /// Counts the packets of `path` declared lost, and the congestion events its recovery counted since
    /// the last call (called after every ACK and loss timeout of the path).
    pub(super) fn count_lost(
        &mut self,
        path: PathId,
        lost: &[crate::proto::recovery::PacketRecord<super::frames_out::Records>],
    ) {
        self.qlog_packets_lost(self.last_now, path, lost, None);
        self.stats.packets_lost += lost.len() as u64;
        if let Some(p) = self.paths.get_mut(&path) {
            p.packets_lost += lost.len() as u64;
            p.bytes_lost += lost.iter().map(|r| u64::from(r.size)).sum::<u64>();
            let events = p.recovery.congestion_events();
            let new = events.saturating_sub(p.congestion_events_counted);
            p.congestion_events_counted = events;
            self.stats.congestion_events = self.stats.congestion_events.saturating_add(new);
        }
    }
}
