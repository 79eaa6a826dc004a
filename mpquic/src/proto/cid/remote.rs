//! [`RemoteCids`]: the connection IDs the peer issued to us, per path ID, which we use as Destination
//! Connection IDs.
//!
//! Per path: the active connection IDs by sequence number, a floor below which every sequence number is retired
//! (the largest Retire Prior To received, raised further by our own rotations), and whether we have used the
//! path (only the reset tokens of connection IDs we used are checked for Stateless Resets, RFC 9000 §10.3.1).
//! The connection ID in use on a path is always the lowest active one: rotation retires it and moves to the next.
//!
//! RETIRE frames go through a queue with an acknowledgement state; the number of retirements waiting to be sent
//! or acknowledged is capped per path (RFC 9000 §5.1.2), so a peer that keeps issuing and retiring connection
//! IDs cannot grow our state: it gets CONNECTION_ID_LIMIT_ERROR, as in quinn.
//!
//! Memory: at most `active_connection_id_limit` connection IDs and `4 × limit` retirements per path, for path IDs
//! up to our own maximum path ID.

use std::collections::BTreeMap;

use crate::cc::PathId;
use crate::proto::coding::VarInt;
use crate::proto::error::{TransportError, TransportErrorCode};
use crate::proto::frame::{FrameType, NewConnectionId, PathCidsBlocked, RetireConnectionId};
use crate::proto::packet::connection_id::ConnectionId;
use crate::proto::packet::stateless_reset::ResetToken;

use super::path_ids::{PathDisposition, PathIds};

/// Retirements (queued or unacknowledged) allowed per path, as a multiple of our active_connection_id_limit.
/// RFC 9000 §5.1.2 asks for at least twice the limit.
pub const RETIRE_LIMIT_FACTOR: u64 = 4;

/// Lower bound of the per-path retirement cap, whatever the limit.
const MIN_RETIRE_LIMIT: u64 = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RetireState {
    /// To be sent.
    Queued,
    /// In flight, not acknowledged yet.
    Sent,
}

#[derive(Debug, Clone, Default)]
struct RemotePath {
    /// Active connection IDs: sequence → (CID, reset token). Only path 0's handshake CID lacks a token (the
    /// client's, or the server's before its transport parameters arrive).
    active: BTreeMap<u64, (ConnectionId, Option<ResetToken>)>,
    /// Every sequence number below this is retired.
    retired_below: u64,
    /// One past the largest sequence number received.
    next_expected: u64,
    /// We have sent packets on this path with its current connection ID.
    in_use: bool,
}

/// The connection IDs the peer issued to us, per path ID.
#[derive(Debug, Clone)]
pub struct RemoteCids {
    /// Our active_connection_id_limit (per path under multipath).
    limit: u64,
    multipath: bool,
    /// The peer uses zero-length connection IDs: we send packets with an empty Destination Connection ID.
    zero_length: bool,
    paths: BTreeMap<PathId, RemotePath>,
    retiring: BTreeMap<(PathId, u64), RetireState>,
}

impl RemoteCids {
    /// The store of a connection whose first Destination Connection ID from the peer is `initial_dcid`
    /// (path 0, sequence 0: the peer's handshake Source Connection ID), with our `active_connection_id_limit`.
    pub fn new(initial_dcid: ConnectionId, active_connection_id_limit: u64) -> Self {
        let mut path0 = RemotePath {
            next_expected: 1,
            in_use: true,
            ..RemotePath::default()
        };
        path0.active.insert(0, (initial_dcid, None));
        RemoteCids {
            limit: active_connection_id_limit.max(1),
            multipath: false,
            zero_length: initial_dcid.is_empty(),
            paths: BTreeMap::from([(PathId(0), path0)]),
            retiring: BTreeMap::new(),
        }
    }

    /// Replaces the handshake connection ID (a client learns the server's Source Connection ID from its first
    /// Initial, or from a Retry).
    pub fn set_initial(&mut self, dcid: ConnectionId) {
        self.zero_length = dcid.is_empty();
        if let Some(path0) = self.paths.get_mut(&PathId(0)) {
            path0.active.insert(0, (dcid, None));
        }
    }

    /// Records the server's stateless_reset_token transport parameter: the token of sequence 0 on path 0.
    pub fn set_initial_reset_token(&mut self, token: ResetToken) {
        if let Some((_, t)) = self.paths.get_mut(&PathId(0)).and_then(|p| p.active.get_mut(&0)) {
            *t = Some(token);
        }
    }

    /// Adds the server's preferred_address connection ID: path 0, sequence 1 (RFC 9000 §5.1.1;
    /// draft-ietf-quic-multipath-21 §2: it belongs to path ID 0).
    pub fn insert_preferred_address(&mut self, cid: ConnectionId, token: ResetToken) {
        if let Some(path0) = self.paths.get_mut(&PathId(0)) {
            path0.active.entry(1).or_insert((cid, Some(token)));
            path0.next_expected = path0.next_expected.max(2);
        }
    }

    /// Records whether multipath was negotiated (RETIRE frames become PATH_RETIRE_CONNECTION_ID).
    pub fn set_multipath(&mut self, multipath: bool) {
        self.multipath = multipath;
    }

    fn retire_limit(&self) -> u64 {
        self.limit
            .saturating_mul(RETIRE_LIMIT_FACTOR)
            .max(MIN_RETIRE_LIMIT)
    }

    fn retiring_on(&self, path: PathId) -> usize {
        self.retiring.range((path, 0)..=(path, u64::MAX)).count()
    }

    /// Queues the retirement of (`path`, `seq`) unless it is already queued or in flight.
    fn queue_retire(&mut self, path: PathId, seq: u64) {
        self.retiring.entry((path, seq)).or_insert(RetireState::Queued);
    }

    /// Handles NEW_CONNECTION_ID (path 0) or PATH_NEW_CONNECTION_ID.
    pub fn handle_new_cid(
        &mut self,
        frame: &NewConnectionId<'_>,
        paths: &PathIds,
    ) -> Result<(), TransportError> {
        let ty = frame.ty();
        let pv = |reason| Err(TransportError::protocol_violation(reason).with_frame(ty.0));
        // RFC 9000 §19.15: "An endpoint that is sending packets with a zero-length Destination Connection ID
        // MUST treat receipt of a NEW_CONNECTION_ID frame as a connection error of type PROTOCOL_VIOLATION."
        if self.zero_length {
            return pv("NEW_CONNECTION_ID while the peer uses zero-length connection IDs");
        }
        let path = match paths.check_frame_path(frame.path_id, ty)? {
            PathDisposition::Process(p) => p,
            PathDisposition::Ignore => return Ok(()),
        };
        let Some(cid) = ConnectionId::new(frame.id) else {
            return Err(
                TransportError::frame_encoding("connection ID longer than 20 bytes").with_frame(ty.0),
            );
        };
        let token = ResetToken(frame.reset_token);
        let seq = frame.sequence.into_inner();
        let rpt = frame.retire_prior_to.into_inner();

        // RFC 9000 §19.15: "If an endpoint receives a NEW_CONNECTION_ID frame that repeats a previously issued
        // connection ID with a different Stateless Reset Token field value or a different Sequence Number field
        // value, or if a sequence number is used for different connection IDs, the endpoint MAY treat that
        // receipt as a connection error of type PROTOCOL_VIOLATION." Connection IDs are unique across the
        // connection's paths (draft-ietf-quic-multipath-21 §3), so the check spans every path.
        let mut duplicate = false;
        for (p, state) in &self.paths {
            for (s, (c, t)) in &state.active {
                let same_slot = *p == path && *s == seq;
                if same_slot && (*c != cid || t.is_some_and(|t| t != token)) {
                    return pv("sequence number reused for a different connection ID or reset token");
                }
                if !same_slot && *c == cid {
                    return pv("connection ID repeated with a different path or sequence number");
                }
                duplicate |= same_slot;
            }
        }

        let limit = self.limit;
        let state = self.paths.entry(path).or_default();
        state.next_expected = state.next_expected.max(seq.saturating_add(1));
        // RFC 9000 §5.1.2: "Upon receipt of an increased Retire Prior To field, the peer MUST stop using the
        // corresponding connection IDs and retire them with RETIRE_CONNECTION_ID frames before adding the newly
        // provided connection ID to the set of active connection IDs."
        let mut to_retire: Vec<u64> = state.active.range(..rpt).map(|(s, _)| *s).collect();
        for s in &to_retire {
            state.active.remove(s);
        }
        state.retired_below = state.retired_below.max(rpt);
        if seq < state.retired_below {
            // RFC 9000 §19.15: "If a NEW_CONNECTION_ID frame is received that has a sequence number less than the
            // Retire Prior To of a previously received NEW_CONNECTION_ID frame, the endpoint MUST immediately send
            // a corresponding RETIRE_CONNECTION_ID frame that retires the newly received connection ID, unless it
            // has already done so for that sequence number." (Also for sequence numbers below our own rotations.)
            if !duplicate {
                to_retire.push(seq);
            }
        } else if !duplicate {
            state.active.insert(seq, (cid, Some(token)));
        }
        let active = u64::try_from(state.active.len()).unwrap_or(u64::MAX);
        for s in to_retire {
            self.queue_retire(path, s);
        }
        // RFC 9000 §5.1.1: "After processing a NEW_CONNECTION_ID frame and adding and retiring active connection
        // IDs, if the number of active connection IDs exceeds the value advertised in its
        // active_connection_id_limit transport parameter, an endpoint MUST close the connection with an error of
        // type CONNECTION_ID_LIMIT_ERROR." (Per path under multipath, draft-ietf-quic-multipath-21 §2.)
        if active > limit {
            return Err(
                limit_error("more active connection IDs than active_connection_id_limit").with_frame(ty.0),
            );
        }
        // RFC 9000 §5.1.2: "An endpoint SHOULD limit the number of connection IDs it has retired locally for
        // which RETIRE_CONNECTION_ID frames have not yet been acknowledged. An endpoint SHOULD allow for sending
        // and tracking a number of RETIRE_CONNECTION_ID frames of at least twice the value of the
        // active_connection_id_limit transport parameter. An endpoint MUST NOT forget a connection ID without
        // retiring it, though it MAY choose to treat having connection IDs in need of retirement that exceed
        // this limit as a connection error of type CONNECTION_ID_LIMIT_ERROR."
        if u64::try_from(self.retiring_on(path)).unwrap_or(u64::MAX) > self.retire_limit() {
            return Err(limit_error("too many connection IDs waiting for retirement").with_frame(ty.0));
        }
        Ok(())
    }

    /// The connection ID to send on `path` with (the lowest active one), if the peer gave us any.
    pub fn current(&self, path: PathId) -> Option<ConnectionId> {
        self.current_entry(path).map(|(_, cid)| cid)
    }

    fn current_entry(&self, path: PathId) -> Option<(u64, ConnectionId)> {
        self.paths
            .get(&path)?
            .active
            .first_key_value()
            .map(|(s, (c, _))| (*s, *c))
    }

    /// The connection ID [`Self::rotate`] would switch `path` to (the second-lowest active one), if any.
    pub fn spare(&self, path: PathId) -> Option<ConnectionId> {
        self.paths.get(&path)?.active.values().nth(1).map(|(c, _)| *c)
    }

    /// Whether the peer issued an unused connection ID for `path` (a client needs one to open the path).
    pub fn has_cids(&self, path: PathId) -> bool {
        self.paths.get(&path).is_some_and(|s| !s.active.is_empty())
    }

    /// Number of active connection IDs of `path`.
    pub fn active_count(&self, path: PathId) -> usize {
        self.paths.get(&path).map_or(0, |s| s.active.len())
    }

    /// Marks `path` as used with its current connection ID: its reset token now counts for Stateless Reset
    /// detection, and later-arriving lower sequence numbers no longer displace it.
    pub fn start_using(&mut self, path: PathId) {
        let Some((seq, _)) = self.current_entry(path) else {
            return;
        };
        if let Some(state) = self.paths.get_mut(&path) {
            state.in_use = true;
            state.retired_below = state.retired_below.max(seq);
        }
    }

    /// Switches `path` to its next connection ID, retiring the current one (RFC 9000 §5.1.2: "An endpoint can
    /// change the connection ID it uses for a peer to another available one at any time"). Returns the new
    /// connection ID, or `None` (nothing changed) if there is no spare one or too many retirements are pending.
    pub fn rotate(&mut self, path: PathId) -> Option<ConnectionId> {
        if u64::try_from(self.retiring_on(path)).unwrap_or(u64::MAX) >= self.retire_limit() {
            return None;
        }
        let state = self.paths.get_mut(&path)?;
        let mut seqs = state.active.keys().copied();
        let (old, next) = (seqs.next()?, seqs.next()?);
        state.active.remove(&old);
        state.retired_below = state.retired_below.max(next);
        let cid = state.active.get(&next).map(|(c, _)| *c);
        self.queue_retire(path, old);
        cid
    }

    /// Forgets every connection ID of an abandoned path without RETIRE frames (draft-ietf-quic-multipath-21
    /// §3: the endpoint abandoning a path treats the peer's connection IDs of that path as retired at once).
    pub fn abandon(&mut self, path: PathId) {
        self.paths.remove(&path);
        let keys: Vec<_> = self
            .retiring
            .range((path, 0)..=(path, u64::MAX))
            .map(|(k, _)| *k)
            .collect();
        for key in keys {
            self.retiring.remove(&key);
        }
    }

    /// The reset tokens to compare a datagram's tail against: those of the current connection ID of every path
    /// we used. RFC 9000 §10.3.1: "An endpoint MUST NOT check for any stateless reset tokens associated with
    /// connection IDs it has not used or for connection IDs that have been retired."
    pub fn reset_tokens(&self) -> impl Iterator<Item = ResetToken> + '_ {
        self.paths
            .values()
            .filter(|s| s.in_use)
            .filter_map(|s| s.active.first_key_value().and_then(|(_, (_, t))| *t))
    }

    /// The first RETIRE frame waiting to be sent (call [`Self::on_retire_sent`] once it is in a packet).
    #[inline]
    pub fn next_retire(&self) -> Option<RetireConnectionId> {
        // The length check first, inlined at the caller: this is asked for every packet built, and an
        // iterator over the map walks the tree to both ends even when it is empty.
        if self.retiring.is_empty() {
            return None;
        }
        self.first_retire()
    }

    /// [`Self::next_retire`] with retirements recorded.
    fn first_retire(&self) -> Option<RetireConnectionId> {
        self.retiring
            .iter()
            .find(|(_, st)| **st == RetireState::Queued)
            .map(|((path, seq), _)| RetireConnectionId {
                path_id: self.multipath.then_some(*path),
                sequence: VarInt::from_u64(*seq).unwrap_or(VarInt::MAX),
            })
    }

    /// The RETIRE frame for (`path`, `seq`) went into a packet.
    pub fn on_retire_sent(&mut self, path: PathId, seq: u64) {
        if let Some(st) = self.retiring.get_mut(&(path, seq)) {
            *st = RetireState::Sent;
        }
    }

    /// The RETIRE frame for (`path`, `seq`) was acknowledged: the retirement is complete.
    pub fn on_retire_acked(&mut self, path: PathId, seq: u64) {
        self.retiring.remove(&(path, seq));
    }

    /// The RETIRE frame for (`path`, `seq`) was lost: queue it again.
    pub fn on_retire_lost(&mut self, path: PathId, seq: u64) {
        if let Some(st) = self.retiring.get_mut(&(path, seq)) {
            *st = RetireState::Queued;
        }
    }

    /// Number of retirements queued or in flight.
    pub fn retiring_len(&self) -> usize {
        self.retiring.len()
    }

    /// The PATH_CIDS_BLOCKED frame to send when we want to use `path` but the peer gave us no connection ID for
    /// it: Next Sequence Number is the one after the largest we received.
    pub fn cids_blocked(&self, path: PathId) -> PathCidsBlocked {
        let next = self.paths.get(&path).map_or(0, |s| s.next_expected);
        PathCidsBlocked {
            path_id: path,
            next_sequence: VarInt::from_u64(next).unwrap_or(VarInt::MAX),
        }
    }

    /// The frame type RETIRE frames from this store have.
    pub fn retire_frame_type(&self) -> FrameType {
        if self.multipath {
            FrameType::PATH_RETIRE_CONNECTION_ID
        } else {
            FrameType::RETIRE_CONNECTION_ID
        }
    }
}

fn limit_error(reason: &'static str) -> TransportError {
    TransportError::new(TransportErrorCode::CONNECTION_ID_LIMIT_ERROR, reason)
}
