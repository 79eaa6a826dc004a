//! Connection IDs of a connection, through [`crate::proto::cid`]: the ones we issue (`LocalCids`: topped up
//! to the peer's active_connection_id_limit with NEW_CONNECTION_ID for the path IDs our paths use, one for each
//! unused path ID, replaced on RETIRE_CONNECTION_ID), the ones
//! the peer issued (`RemoteCids`: stored, retired on Retire Prior To, rotated on demand), and the routing
//! updates the endpoint needs ([`EndpointEvent::NewCid`] / [`EndpointEvent::RetiredCid`]).

use crate::cc::PathId;
use crate::proto::cid::RoutingUpdate;
use crate::proto::error::TransportError;
use crate::proto::frame::{Frame, NewConnectionId, RetireConnectionId};
use crate::proto::packet::ConnectionId;

use super::frames_out::{FrameRecord, Records};
use super::{Connection, EndpointEvent};

/// Bound on remembered announced reset tokens (older ones are announced again if ever used again).
const MAX_ANNOUNCED_TOKENS: usize = 16;

impl Connection {
    /// Reports every routing change of our connection IDs to the endpoint.
    pub(super) fn flush_routing_updates(&mut self) {
        while let Some(u) = self.paths.local_cids.poll_routing_update() {
            self.endpoint_events.push_back(match u {
                RoutingUpdate::Added { cid, .. } => EndpointEvent::NewCid(cid),
                RoutingUpdate::Removed { cid } => EndpointEvent::RetiredCid(cid),
            });
        }
    }

    /// Issues connection IDs up to the peer's active_connection_id_limit (once 1-RTT keys are in use) for the
    /// path IDs our validated paths use, and the smaller unused-path-ID share for the others.
    pub(super) fn issue_cids(&mut self) {
        if !self.handshake_complete || self.peer_params.is_none() {
            return;
        }
        let rng = &mut self.rng;
        self.paths.issue_local_cids(&mut |b| rng.fill(b));
        self.flush_routing_updates();
    }

    /// Points every path at the peer's current connection ID for it.
    pub(super) fn sync_remote_cids(&mut self) {
        self.paths.sync_remote_cids();
        self.announce_reset_tokens();
    }

    /// Tells the endpoint about reset tokens of peer connection IDs we started using, so that it routes a
    /// Stateless Reset (whose connection ID is random) to us.
    pub(super) fn announce_reset_tokens(&mut self) {
        let Some(remote) = self.paths.get(&PathId(0)).map(|p| p.remote) else {
            return;
        };
        let tokens: Vec<_> = self.paths.remote_cids.reset_tokens().collect();
        for token in tokens {
            if !self.announced_tokens.contains(&token) {
                if self.announced_tokens.len() >= MAX_ANNOUNCED_TOKENS {
                    self.announced_tokens.remove(0);
                }
                self.announced_tokens.push(token);
                self.endpoint_events
                    .push_back(EndpointEvent::ResetToken { remote, token });
            }
        }
    }

    /// NEW_CONNECTION_ID (or its PATH_ variant) from the peer.
    pub(super) fn on_new_cid_frame(&mut self, f: &NewConnectionId<'_>) -> Result<(), TransportError> {
        let set = &mut self.paths;
        set.remote_cids.handle_new_cid(f, &set.ids)?;
        self.sync_remote_cids();
        Ok(())
    }

    /// RETIRE_CONNECTION_ID (or its PATH_ variant) from the peer, in a packet sent to `dcid`.
    pub(super) fn on_retire_cid_frame(
        &mut self,
        f: &RetireConnectionId,
        dcid: &ConnectionId,
    ) -> Result<(), TransportError> {
        let rng = &mut self.rng;
        let set = &mut self.paths;
        set.local_cids
            .handle_retire(f, dcid, &set.ids, &mut |b| rng.fill(b))?;
        self.flush_routing_updates();
        Ok(())
    }

    /// Switches `path` to the next connection ID the peer gave us, retiring the one in use (RFC 9000 §5.1.2),
    /// e.g. before migrating. Returns `false` if the peer gave us no spare connection ID.
    pub fn rotate_remote_cid(&mut self, path: PathId) -> bool {
        let rotated = self.paths.remote_cids.rotate(path).is_some();
        if rotated {
            self.sync_remote_cids();
        }
        rotated
    }

    /// Issues fresh connection IDs for `path` and asks the peer (Retire Prior To) to retire the older ones.
    /// Returns `false` if nothing changed (no peer parameters yet, or a previous rotation is still pending).
    pub fn rotate_local_cids(&mut self, path: PathId) -> bool {
        if self.peer_params.is_none() {
            return false;
        }
        let rng = &mut self.rng;
        let rotated = self.paths.local_cids.rotate(path, &mut |b| rng.fill(b));
        self.flush_routing_updates();
        rotated
    }

    /// The connection ID the peer currently uses to reach us is one of these (tests, diagnostics): our active
    /// connection IDs of `path`.
    pub fn local_cids(&self, path: PathId) -> Vec<ConnectionId> {
        self.paths.local_cids.active(path).map(|(_, c)| c).collect()
    }

    /// The connection ID we send to on `path`.
    pub fn remote_cid(&self, path: PathId) -> Option<ConnectionId> {
        self.paths.get(&path).map(|p| p.remote_cid)
    }

    /// How many connection IDs the peer gave us for `path` (including the one in use).
    pub fn remote_cid_count(&self, path: PathId) -> usize {
        self.paths.remote_cids.active_count(path)
    }

    /// Writes pending NEW_CONNECTION_ID and RETIRE_CONNECTION_ID frames.
    pub(super) fn write_cid_frames(
        &mut self,
        buf: &mut Vec<u8>,
        end: usize,
        records: &mut Records,
        ack_eliciting: &mut bool,
    ) {
        while let Some(issued) = self.paths.local_cids.next_pending() {
            let frame = Frame::NewConnectionId(issued.frame());
            if frame.encoded_len() > end.saturating_sub(buf.len()) {
                break;
            }
            frame.encode(buf);
            self.paths.local_cids.on_sent(issued.path_id, issued.sequence);
            records.push(FrameRecord::NewCid {
                path: issued.path_id,
                seq: issued.sequence,
            });
            *ack_eliciting = true;
        }
        while let Some(retire) = self.paths.remote_cids.next_retire() {
            let frame = Frame::RetireConnectionId(retire);
            if frame.encoded_len() > end.saturating_sub(buf.len()) {
                break;
            }
            frame.encode(buf);
            let path = retire.path_id.unwrap_or(PathId(0));
            let seq = retire.sequence.into_inner();
            self.paths.remote_cids.on_retire_sent(path, seq);
            records.push(FrameRecord::RetireCid { path, seq });
            *ack_eliciting = true;
        }
    }

    /// Whether CID frames wait to be sent.
    pub(super) fn has_cid_frames(&self) -> bool {
        self.paths.local_cids.next_pending().is_some() || self.paths.remote_cids.next_retire().is_some()
    }
}
