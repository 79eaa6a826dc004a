//! Path-ID flow control (draft-ietf-quic-multipath-21 §2 and §3, frames MAX_PATH_ID, PATHS_BLOCKED and
//! PATH_CIDS_BLOCKED): how many path IDs each side allows, which path IDs are used up, which one the client
//! opens next, and the checks every frame naming a path ID goes through.
//!
//! Invariants:
//! - both maxima only grow, and never exceed 2^32 − 1 (they are [`PathId`]s, i.e. `u32`s);
//! - a path ID is opened at most once and, once abandoned, stays abandoned (path IDs enter the AEAD nonce and
//!   are never reused);
//! - memory is bounded: abandoned IDs are kept as ranges, and there are at most as many ranges as path IDs that
//!   are not abandoned below the local maximum (the local window, our configuration);
//! - path states are bounded by `max_states` (`ConnectionLimits::max_paths`): every path state has an ID at
//!   most `local_max`, so the states in use plus the abandoned ones still lingering number at most
//!   `local_max + 1 − released`; our maximum only grows while that stays within `max_states`.

use std::collections::BTreeMap;

use crate::cc::PathId;
use crate::proto::error::TransportError;
use crate::proto::frame::{FrameType, PathCidsBlocked};
use crate::proto::transport_params::Side;

/// What to do with a frame that names a path ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathDisposition {
    /// Process the frame for this path.
    Process(PathId),
    /// The path was abandoned: drop the frame silently.
    Ignore,
}

/// Why a path could not be opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OpenPathError {
    /// Only the client opens paths (draft-ietf-quic-multipath-21 §3).
    #[error("only the client opens paths")]
    NotClient,
    /// Multipath was not negotiated (or the handshake is not confirmed yet, or the connection is closed).
    #[error("multipath not negotiated or not ready")]
    NotNegotiated,
    /// The next path ID is above the peer's maximum; a PATHS_BLOCKED frame has been queued.
    #[error("the peer's maximum path ID {0:?} is reached")]
    BlockedByPeer(PathId),
    /// The next path ID is above our own maximum.
    #[error("our maximum path ID {0:?} is reached")]
    BlockedLocally(PathId),
    /// One side has no connection ID for the next path ID yet.
    #[error("no connection ID for path {0:?} yet")]
    NoConnectionIds(PathId),
    /// This many path validations are in flight already (`ConnectionLimits::path_validations`); retry once
    /// one ends.
    #[error("{0} path validations in flight already")]
    ValidationsInProgress(usize),
}

/// Path-ID limits of both sides and the set of path IDs used up.
#[derive(Debug, Clone)]
pub struct PathIds {
    side: Side,
    /// Our initial_max_path_id, `None` if we do not offer multipath.
    local_initial: Option<PathId>,
    /// The largest path ID we currently allow (initial_max_path_id, then MAX_PATH_ID).
    local_max: PathId,
    /// The peer's initial_max_path_id, once its transport parameters are known.
    peer_initial: Option<PathId>,
    /// The largest path ID the peer currently allows.
    peer_max: PathId,
    /// Abandoned path IDs as disjoint inclusive ranges, start → end.
    abandoned: BTreeMap<u32, u32>,
    /// Number of abandoned path IDs (each one raises our maximum by one, see [`PathIds::abandon`]).
    abandoned_count: u64,
    /// Number of abandoned path IDs whose path state is deleted (or never existed), see [`PathIds::release`].
    released_count: u64,
    /// Path states we keep at once (`ConnectionLimits::max_paths`, at least 1).
    max_states: u64,
    /// The next path ID the client opens (path IDs are opened in increasing order and never reused).
    next_open: u64,
    /// A MAX_PATH_ID frame carrying `local_max` is waiting to be sent.
    max_path_id_pending: bool,
    /// A PATHS_BLOCKED frame carrying this value is waiting to be sent.
    paths_blocked_pending: Option<PathId>,
    /// The peer maximum we last reported as blocking (so PATHS_BLOCKED goes out once per limit).
    paths_blocked_reported: Option<PathId>,
}

impl PathIds {
    /// Path-ID state of a `side` endpoint that advertises `local_initial_max_path_id` (`None`: no multipath).
    pub fn new(side: Side, local_initial_max_path_id: Option<u32>) -> Self {
        let local_initial = local_initial_max_path_id.map(PathId);
        PathIds {
            side,
            local_initial,
            local_max: local_initial.unwrap_or(PathId(0)),
            peer_initial: None,
            peer_max: PathId(0),
            abandoned: BTreeMap::new(),
            abandoned_count: 0,
            released_count: 0,
            max_states: u64::MAX,
            next_open: 1,
            max_path_id_pending: false,
            paths_blocked_pending: None,
            paths_blocked_reported: None,
        }
    }

    /// Caps the path states kept at once (`ConnectionLimits::max_paths`): our maximum path ID never exceeds
    /// `max_states − 1 + released` (see the module invariants). Set it before the handshake; the
    /// initial_max_path_id we advertise must already respect it.
    pub fn set_max_states(&mut self, max_states: usize) {
        self.max_states = u64::try_from(max_states.max(1)).unwrap_or(u64::MAX);
    }

    /// Records the peer's initial_max_path_id transport parameter (`None` when it is absent).
    pub fn set_peer_initial(&mut self, peer_initial_max_path_id: Option<u32>) {
        self.peer_initial = peer_initial_max_path_id.map(PathId);
        // draft-ietf-quic-multipath-21 §2: sending initial_max_path_id "is equivalent to sending a MAX_PATH_ID
        // frame with the same value".
        self.peer_max = self.peer_initial.unwrap_or(PathId(0));
    }

    /// Whether both sides offered multipath (draft-ietf-quic-multipath-21 §2: "If either of the endpoints does
    /// not advertise the initial_max_path_id transport parameter, then the endpoints MUST NOT use any frame or
    /// mechanism defined in this document.").
    pub fn multipath(&self) -> bool {
        self.local_initial.is_some() && self.peer_initial.is_some()
    }

    /// The largest path ID we allow.
    pub fn local_max(&self) -> PathId {
        self.local_max
    }

    /// The largest path ID the peer allows.
    pub fn peer_max(&self) -> PathId {
        self.peer_max
    }

    /// The largest path ID both sides allow: connection IDs are issued for every path ID up to it
    /// (draft-ietf-quic-multipath-21 §3). Path 0 only without multipath.
    pub fn usable_max(&self) -> PathId {
        if self.multipath() {
            self.local_max.min(self.peer_max)
        } else {
            PathId(0)
        }
    }

    /// The path IDs connection IDs should exist for on both sides: every path ID up to [`Self::usable_max`]
    /// that is not abandoned, in increasing order (abandoned ranges are skipped, not walked).
    pub fn live_path_ids(&self) -> impl Iterator<Item = PathId> + '_ {
        let max = u64::from(self.usable_max().0);
        let mut next = 0u64;
        std::iter::from_fn(move || {
            while next <= max {
                let id = u32::try_from(next).ok()?;
                match self.abandoned.range(..=id).next_back() {
                    Some((_, &end)) if end >= id => next = u64::from(end) + 1,
                    _ => {
                        next += 1;
                        return Some(PathId(id));
                    }
                }
            }
            None
        })
    }

    /// Whether `path` was abandoned.
    pub fn is_abandoned(&self, path: PathId) -> bool {
        self.abandoned
            .range(..=path.0)
            .next_back()
            .is_some_and(|(_, end)| *end >= path.0)
    }

    /// The checks every received frame naming a path ID goes through. `path_id` is `None` for the RFC 9000
    /// frames that implicitly name path 0 (NEW_CONNECTION_ID, RETIRE_CONNECTION_ID, ACK).
    pub fn check_frame_path(
        &self,
        path_id: Option<PathId>,
        frame_type: FrameType,
    ) -> Result<PathDisposition, TransportError> {
        let err = |reason| Err(TransportError::protocol_violation(reason).with_frame(frame_type.0));
        let path = match path_id {
            // draft-ietf-quic-multipath-21 §2: without negotiation the endpoints "MUST NOT use any frame or
            // mechanism defined in this document"; a multipath frame then breaks the protocol.
            Some(_) if !self.multipath() => return err("multipath frame without multipath negotiated"),
            Some(p) => p,
            None => PathId(0),
        };
        // draft-ietf-quic-multipath-21 §2 (frames; paraphrased): a frame carrying a path ID above the maximum
        // path ID the receiver advertised is a connection error of type PROTOCOL_VIOLATION.
        if path > self.local_max {
            return err("path ID above the advertised maximum");
        }
        // draft-ietf-quic-multipath-21 §2 (frames): frames for a path the receiver no longer processes, e.g.
        // because it was abandoned, are silently ignored.
        if self.is_abandoned(path) {
            return Ok(PathDisposition::Ignore);
        }
        Ok(PathDisposition::Process(path))
    }

    /// Handles MAX_PATH_ID. Values above 2^32 − 1 never reach this point: the frame decoder rejects them
    /// with PROTOCOL_VIOLATION.
    pub fn handle_max_path_id(&mut self, max: PathId) -> Result<(), TransportError> {
        let ty = FrameType::MAX_PATH_ID.0;
        if !self.multipath() {
            return Err(
                TransportError::protocol_violation("MAX_PATH_ID without multipath negotiated").with_frame(ty),
            );
        }
        // draft-ietf-quic-multipath-21 (MAX_PATH_ID frame): "The Maximum Path ID value MUST NOT be lower than
        // the value advertised in the initial_max_path_id transport parameter. Receipt of an invalid Maximum
        // Path ID value MUST be treated as a connection error of type PROTOCOL_VIOLATION."
        if self.peer_initial.is_some_and(|initial| max < initial) {
            return Err(
                TransportError::protocol_violation("MAX_PATH_ID below initial_max_path_id").with_frame(ty),
            );
        }
        // draft-ietf-quic-multipath-21 (MAX_PATH_ID frame): "MAX_PATH_ID frames that do not increase the path
        // limit MUST be ignored."
        if max > self.peer_max {
            self.peer_max = max;
            if self.paths_blocked_pending.is_some_and(|b| b < max) {
                self.paths_blocked_pending = None;
            }
        }
        Ok(())
    }

    /// Handles PATHS_BLOCKED. Returns whether raising our maximum would unblock the peer (the frame is
    /// informational; this type does not raise the maximum on its own).
    pub fn handle_paths_blocked(&mut self, max: PathId) -> Result<bool, TransportError> {
        let ty = FrameType::PATHS_BLOCKED.0;
        if !self.multipath() {
            return Err(
                TransportError::protocol_violation("PATHS_BLOCKED without multipath negotiated")
                    .with_frame(ty),
            );
        }
        // draft-ietf-quic-multipath-21 (PATHS_BLOCKED frame): "Receipt of a value that is higher than the local
        // maximum value MUST be treated as a connection error of type PROTOCOL_VIOLATION."
        if max > self.local_max {
            return Err(
                TransportError::protocol_violation("PATHS_BLOCKED above our maximum path ID").with_frame(ty),
            );
        }
        // "If the received value is lower than the currently allowed maximum value, this frame can be ignored."
        Ok(max == self.local_max)
    }

    /// Validates PATH_CIDS_BLOCKED. `next_issued` is the sequence number of the next connection ID we would
    /// issue for the frame's path (`None` if we never issued one for it, i.e. 0).
    /// Returns the path to issue connection IDs for, or `None` when the frame is to be ignored.
    pub fn check_path_cids_blocked(
        &self,
        frame: &PathCidsBlocked,
        next_issued: Option<u64>,
    ) -> Result<Option<PathId>, TransportError> {
        let ty = FrameType::PATH_CIDS_BLOCKED;
        let path = match self.check_frame_path(Some(frame.path_id), ty)? {
            PathDisposition::Process(p) => p,
            PathDisposition::Ignore => return Ok(None),
        };
        // draft-ietf-quic-multipath-21 (PATH_CIDS_BLOCKED frame; paraphrased): a Next Sequence Number higher
        // than the sequence number of the next connection ID the receiver would issue for that path is a
        // connection error of type PROTOCOL_VIOLATION.
        if frame.next_sequence.into_inner() > next_issued.unwrap_or(0) {
            return Err(TransportError::protocol_violation(
                "PATH_CIDS_BLOCKED Next Sequence Number above the next connection ID we would issue",
            )
            .with_frame(ty.0));
        }
        Ok(Some(path))
    }

    /// Records that `path` was abandoned (by either side). Its ID is used up for good; to keep the number of
    /// usable path IDs constant, our maximum grows by one and a MAX_PATH_ID frame is queued
    /// (draft-ietf-quic-multipath-21 §3: endpoints send MAX_PATH_ID when path IDs are used up).
    /// Returns `false` if it was already abandoned.
    /// The raise waits while it would let the path states (lingering abandoned ones included) exceed
    /// `max_states`: [`PathIds::release`] resumes it.
    pub fn abandon(&mut self, path: PathId) -> bool {
        if !self.insert_abandoned(path.0) {
            return false;
        }
        self.abandoned_count = self.abandoned_count.saturating_add(1);
        self.replenish();
        true
    }

    /// The state of an abandoned path was deleted (its 3 PTO passed), or never existed: one more path ID may
    /// be granted if abandonments are waiting for it.
    pub fn release(&mut self) {
        if self.released_count < self.abandoned_count {
            self.released_count += 1;
            self.replenish();
        }
    }

    /// Raises our maximum to replace abandoned path IDs, within the path-state cap: at most
    /// `initial + abandoned` and at most `max_states − 1 + released`.
    fn replenish(&mut self) {
        let Some(initial) = self.local_initial else {
            return;
        };
        let wanted = u64::from(initial.0).saturating_add(self.abandoned_count);
        let cap = self
            .max_states
            .saturating_sub(1)
            .saturating_add(self.released_count);
        let target = PathId(u32::try_from(wanted.min(cap)).unwrap_or(u32::MAX));
        self.raise_local_max(target);
    }

    /// Raises our maximum path ID to `max` (no effect if it is not higher) and queues MAX_PATH_ID.
    pub fn raise_local_max(&mut self, max: PathId) {
        if self.local_initial.is_some() && max > self.local_max {
            self.local_max = max;
            self.max_path_id_pending = self.multipath();
        }
    }

    /// Whether a MAX_PATH_ID or PATHS_BLOCKED frame waits to be sent (without taking it: the packet builder asks
    /// this before deciding a packet is worth building, then takes the frames with [`PathIds::poll_max_path_id`]
    /// and [`PathIds::poll_paths_blocked`]).
    pub fn has_pending_frames(&self) -> bool {
        self.max_path_id_pending || self.paths_blocked_pending.is_some()
    }

    /// The MAX_PATH_ID value to send, if one is pending (taking it clears the flag).
    pub fn poll_max_path_id(&mut self) -> Option<PathId> {
        std::mem::take(&mut self.max_path_id_pending).then_some(self.local_max)
    }

    /// A MAX_PATH_ID frame carrying `sent` was lost: send it again unless a larger value superseded it.
    pub fn on_max_path_id_lost(&mut self, sent: PathId) {
        if sent == self.local_max && self.multipath() {
            self.max_path_id_pending = true;
        }
    }

    /// The PATHS_BLOCKED value to send, if one is pending.
    pub fn poll_paths_blocked(&mut self) -> Option<PathId> {
        self.paths_blocked_pending.take()
    }

    /// A PATHS_BLOCKED frame carrying `sent` was lost: send it again if the peer's limit still blocks us.
    pub fn on_paths_blocked_lost(&mut self, sent: PathId) {
        if sent == self.peer_max && u64::from(self.peer_max.0) < self.next_open {
            self.paths_blocked_pending = Some(sent);
        }
    }

    /// The next path ID the client would open, without opening it.
    pub fn next_path_id(&self) -> Option<PathId> {
        u32::try_from(self.next_open).ok().map(PathId)
    }

    /// Opens the next path (client only). `has_cids(path)` says whether both sides issued connection IDs for
    /// `path` (draft-ietf-quic-multipath-21 §3: the client needs unused CIDs of the same unused path ID from
    /// both sides). Path IDs are handed out in increasing order and never twice.
    pub fn open_path(&mut self, has_cids: impl Fn(PathId) -> bool) -> Result<PathId, OpenPathError> {
        if self.side != Side::Client {
            return Err(OpenPathError::NotClient);
        }
        if !self.multipath() {
            return Err(OpenPathError::NotNegotiated);
        }
        let Some(path) = self.next_path_id() else {
            return Err(OpenPathError::BlockedByPeer(self.peer_max));
        };
        // draft-ietf-quic-multipath-21 (PATHS_BLOCKED frame; paraphrased): sent when an endpoint would like to
        // open a new path but the peer's maximum path ID does not allow it.
        if path > self.peer_max {
            if self.paths_blocked_reported != Some(self.peer_max) {
                self.paths_blocked_reported = Some(self.peer_max);
                self.paths_blocked_pending = Some(self.peer_max);
            }
            return Err(OpenPathError::BlockedByPeer(self.peer_max));
        }
        if path > self.local_max {
            return Err(OpenPathError::BlockedLocally(self.local_max));
        }
        if !has_cids(path) {
            return Err(OpenPathError::NoConnectionIds(path));
        }
        self.next_open = self.next_open.saturating_add(1);
        Ok(path)
    }

    /// Adds `id` to the abandoned ranges; `false` if it was there already.
    fn insert_abandoned(&mut self, id: u32) -> bool {
        if self.is_abandoned(PathId(id)) {
            return false;
        }
        let mut start = id;
        let mut end = id;
        // Merge with the range ending just below.
        let below = id
            .checked_sub(1)
            .and_then(|b| self.abandoned.range(..=b).next_back().filter(|(_, e)| **e == b))
            .map(|(s, _)| *s);
        if let Some(s) = below {
            self.abandoned.remove(&s);
            start = s;
        }
        // Merge with the range starting just above.
        if let Some(e) = id.checked_add(1).and_then(|a| self.abandoned.remove(&a)) {
            end = e;
        }
        self.abandoned.insert(start, end);
        true
    }

    /// Number of ranges the abandoned set is stored as (for the memory-bound tests).
    #[cfg(test)]
    pub(crate) fn abandoned_ranges(&self) -> usize {
        self.abandoned.len()
    }
}
