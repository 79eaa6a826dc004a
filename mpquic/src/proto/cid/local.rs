//! [`LocalCids`]: the connection IDs this endpoint issues to its peer, per path ID.
//!
//! Each path ID has its own sequence-number space (draft-ietf-quic-multipath-21 §2: sequence numbers and
//! Retire Prior To are per path). Path 0 starts with the handshake Source Connection ID (sequence 0) and, on
//! a server, the preferred_address connection ID (sequence 1). After the handshake the issuer tops every path
//! ID in use up to the peer's active_connection_id_limit (per path, RFC 9000 §5.1.1 with
//! draft-ietf-quic-multipath-21 §2), gives every unused path ID fewer (one by default, the draft's minimum; see
//! [`LocalCids::set_unused_path_cids`]) and tops a path ID up once a path uses it
//! ([`LocalCids::mark_in_use`]), replaces connection IDs the peer retires, and can force rotation with Retire
//! Prior To.
//!
//! Why few connection IDs for unused path IDs: each one costs an HMAC for its reset token, a frame, an entry
//! in both ends' routing tables and an entry in the peer's store, and a connection offering path IDs 0–7 with
//! four connection IDs each issued 31 at every handshake, most never used (about a sixth of the handshake's
//! CPU time). A path ID needs one connection ID from each side to be opened; spares for migration within a
//! path matter only once the path exists.
//!
//! Output: frames to send ([`LocalCids::next_pending`], idempotent: a lost frame is queued again with
//! [`LocalCids::on_lost`] only if its connection ID is still active), and routing updates for the endpoint's
//! connection-ID table ([`LocalCids::poll_routing_update`]). [`LocalCids::lookup`] maps a received packet's
//! Destination Connection ID to its path ID and sequence number: in multipath, that path ID is the packet's path.
//!
//! Randomness is an input: every method that creates connection IDs takes `fill: &mut dyn FnMut(&mut [u8])`,
//! which must fill the slice with unpredictable bytes (adapt any `rand_core::RngCore` with
//! `&mut |b: &mut [u8]| rng.fill_bytes(b)`). A closure keeps the core free of an RNG dependency and lets an
//! endpoint that encodes routing information in its connection IDs write it in the closure.
//!
//! Invariants: every active connection ID is in the lookup table and vice versa; per path, the connection IDs
//! at or above Retire Prior To never exceed the peer's limit; every pending frame names an active connection ID
//! at or above its path's Retire Prior To.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use crate::cc::PathId;
use crate::proto::coding::VarInt;
use crate::proto::error::TransportError;
use crate::proto::frame::{FrameType, NewConnectionId, RetireConnectionId};
use crate::proto::packet::connection_id::{ConnectionId, MAX_CID_SIZE};
use crate::proto::packet::stateless_reset::ResetToken;

use super::path_ids::{PathDisposition, PathIds};
use super::reset::ResetKey;
use super::{CidInfo, RoutingUpdate};

/// How many connection IDs the issuer keeps available per path by default (fewer if the peer's
/// active_connection_id_limit is lower).
pub const DEFAULT_CIDS_PER_PATH: u64 = 4;

/// How many connection IDs each path ID that no path uses yet gets by default (draft-ietf-quic-multipath-21
/// §3 asks for at least one for every unused path ID up to the smaller of both maxima).
pub const DEFAULT_UNUSED_PATH_CIDS: u64 = 1;

/// At most this many path IDs get connection IDs ahead of use, whatever the negotiated maxima (a local safety
/// net: both maxima are normally small).
pub const MAX_PREISSUED_PATHS: usize = 256;

/// How many times a freshly drawn connection ID that collides with one of this connection's is redrawn.
const MAX_DRAWS: usize = 8;

/// A connection ID we issued, with what a (PATH_)NEW_CONNECTION_ID frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IssuedCid {
    /// The path the connection ID belongs to.
    pub path_id: PathId,
    /// Its sequence number in that path's space.
    pub sequence: u64,
    /// The path's Retire Prior To at the time the frame is built (≤ `sequence`).
    pub retire_prior_to: u64,
    /// The connection ID.
    pub cid: ConnectionId,
    /// Its stateless reset token.
    pub reset_token: ResetToken,
    /// Whether the frame is PATH_NEW_CONNECTION_ID (multipath negotiated) rather than NEW_CONNECTION_ID.
    pub path_frame: bool,
}

impl IssuedCid {
    /// The frame announcing this connection ID: NEW_CONNECTION_ID for path 0 in single-path mode,
    /// PATH_NEW_CONNECTION_ID for every path once multipath is negotiated (draft-ietf-quic-multipath-21 §2:
    /// endpoints SHOULD use the PATH_ variants for path 0 too).
    pub fn frame(&self) -> NewConnectionId<'_> {
        NewConnectionId {
            path_id: self.path_frame.then_some(self.path_id),
            sequence: varint(self.sequence),
            retire_prior_to: varint(self.retire_prior_to),
            id: self.cid.as_slice(),
            reset_token: self.reset_token.0,
        }
    }
}

/// A sequence number as a varint. Our own sequence numbers count issued CIDs and never approach 2^62.
fn varint(v: u64) -> VarInt {
    VarInt::from_u64(v).unwrap_or(VarInt::MAX)
}

/// The issuer was configured with a connection-ID length it cannot use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CidConfigError {
    /// RFC 9000 §17.2: at most 20 bytes in QUIC version 1.
    #[error("connection ID length above 20 bytes")]
    TooLong,
    /// RFC 9000 §10.3.2: one connection-ID length for every connection ID the endpoint issues.
    #[error("handshake connection ID length differs from the configured length")]
    LengthMismatch,
    /// draft-ietf-quic-multipath-21 §2: multipath requires non-zero-length connection IDs.
    #[error("multipath offered with zero-length connection IDs")]
    ZeroLengthWithMultipath,
}

#[derive(Debug, Clone, Default)]
struct LocalPath {
    /// Issued and not retired by the peer: sequence → (CID, token).
    active: BTreeMap<u64, (ConnectionId, ResetToken)>,
    /// The sequence number the next CID of this path gets.
    next_seq: u64,
    /// The largest Retire Prior To we sent for this path.
    retire_prior_to: u64,
    /// The path was abandoned: no new CIDs, frames about it ignored.
    abandoned: bool,
    /// A path uses this path ID (path 0 always): it gets the full target, not the unused-path-ID share.
    in_use: bool,
}

impl LocalPath {
    /// Active CIDs the peer may keep (at or above Retire Prior To): what its limit counts.
    fn live(&self) -> usize {
        self.active.range(self.retire_prior_to..).count()
    }
}

/// Hashes the connection IDs of [`LocalCids`], looked up for every received packet. The keys are IDs we
/// drew at random, so a multiplicative hash over 8-byte words is enough (a peer cannot make them collide:
/// it only looks IDs up) and much cheaper than SipHash.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct CidHasher(u64);

impl Hasher for CidHasher {
    fn finish(&self) -> u64 {
        // The multiply leaves the entropy in the high bits; the table indexes with the low ones.
        self.0.rotate_left(26)
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in words.by_ref() {
            self.write_u64(u64::from_le_bytes(<[u8; 8]>::try_from(w).unwrap_or_default()));
        }
        let mut last = [0u8; 8];
        let rest = words.remainder();
        if let Some(dst) = last.get_mut(..rest.len()).filter(|d| !d.is_empty()) {
            dst.copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(last));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = self.0.wrapping_add(n).wrapping_mul(0xf135_7aea_2e62_a9c5);
    }
}

/// The connection IDs this endpoint issued, per path ID.
#[derive(Debug, Clone)]
pub struct LocalCids {
    cid_len: usize,
    key: ResetKey,
    cids_per_path: u64,
    /// Connection IDs per path ID that no path uses yet (at most `cids_per_path`).
    unused_path_cids: u64,
    /// The peer's active_connection_id_limit (per path), once its transport parameters are known.
    peer_limit: Option<u64>,
    multipath: bool,
    paths: BTreeMap<PathId, LocalPath>,
    by_cid: HashMap<ConnectionId, CidInfo, BuildHasherDefault<CidHasher>>,
    /// (Path, sequence) of CIDs whose (PATH_)NEW_CONNECTION_ID frame is to be sent.
    pending: BTreeSet<(PathId, u64)>,
    updates: VecDeque<RoutingUpdate>,
}

impl LocalCids {
    /// An issuer of `cid_len`-byte connection IDs whose handshake Source Connection ID is `handshake_scid`
    /// (path 0, sequence 0). `multipath_offered` says whether we send initial_max_path_id.
    pub fn new(
        cid_len: usize,
        key: ResetKey,
        handshake_scid: ConnectionId,
        multipath_offered: bool,
    ) -> Result<Self, CidConfigError> {
        if cid_len > MAX_CID_SIZE {
            return Err(CidConfigError::TooLong);
        }
        // RFC 9000 §10.3.2: "An endpoint that uses this design MUST either use the same connection ID length
        // for all connections or encode the length of the connection ID such that it can be recovered without
        // state."
        if handshake_scid.len() != cid_len {
            return Err(CidConfigError::LengthMismatch);
        }
        // draft-ietf-quic-multipath-21 §2: "When advertising the initial_max_path_id transport parameter, the
        // endpoint MUST use non-zero-length Source and Destination Connection IDs."
        if multipath_offered && cid_len == 0 {
            return Err(CidConfigError::ZeroLengthWithMultipath);
        }
        let mut this = LocalCids {
            cid_len,
            key,
            cids_per_path: DEFAULT_CIDS_PER_PATH,
            unused_path_cids: DEFAULT_UNUSED_PATH_CIDS,
            peer_limit: None,
            multipath: false,
            paths: BTreeMap::new(),
            by_cid: HashMap::default(),
            pending: BTreeSet::new(),
            updates: VecDeque::new(),
        };
        let token = this.key.token(&handshake_scid);
        this.insert(PathId(0), handshake_scid, token);
        this.mark_in_use(PathId(0));
        Ok(this)
    }

    /// Keep `n` (at least 1) connection IDs available per path instead of [`DEFAULT_CIDS_PER_PATH`] (still
    /// capped by the peer's limit).
    pub fn set_cids_per_path(&mut self, n: u64) {
        self.cids_per_path = n.max(1);
    }

    /// Give every path ID that no path uses yet `n` (at least 1) connection IDs instead of
    /// [`DEFAULT_UNUSED_PATH_CIDS`] (never more than a path in use gets). `u64::MAX` issues the full number for
    /// every path ID up front.
    pub fn set_unused_path_cids(&mut self, n: u64) {
        self.unused_path_cids = n.max(1);
    }

    /// A path uses `path` (opened by us or by the peer): from now on [`Self::replenish`] tops it up to the full
    /// number of connection IDs. Does nothing for a path ID without connection IDs (forgotten, or never
    /// issued: a path cannot use those).
    pub fn mark_in_use(&mut self, path: PathId) {
        if let Some(state) = self.paths.get_mut(&path) {
            state.in_use = true;
        }
    }

    /// The configured connection-ID length.
    pub fn cid_len(&self) -> usize {
        self.cid_len
    }

    /// Issues the preferred_address connection ID (server only, before the handshake): path 0, sequence 1
    /// (draft-ietf-quic-multipath-21 §2: the preferred_address connection ID belongs to path ID 0; RFC 9000 §5.1.1:
    /// "If the preferred_address transport parameter is sent, the sequence number of the supplied connection ID
    /// is 1.").
    /// `None` if it was already issued, or with zero-length connection IDs.
    pub fn issue_preferred_address(
        &mut self,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Option<(ConnectionId, ResetToken)> {
        let path0 = self.paths.get(&PathId(0))?;
        if self.cid_len == 0 || path0.next_seq != 1 {
            return None;
        }
        let cid = self.draw(fill)?;
        let token = self.key.token(&cid);
        let sequence = self.insert(PathId(0), cid, token);
        // The endpoint routes it from the start: the client may use it as soon as the handshake is confirmed.
        self.updates.push_back(RoutingUpdate::Added {
            cid,
            info: CidInfo {
                path_id: PathId(0),
                sequence,
            },
        });
        Some((cid, token))
    }

    /// Records the peer's transport parameters: its active_connection_id_limit (RFC 9000 §18.2, ≥ 2, applies
    /// per path under multipath) and whether multipath was negotiated.
    pub fn set_peer_params(&mut self, active_connection_id_limit: u64, multipath: bool) {
        self.peer_limit = Some(active_connection_id_limit);
        self.multipath = multipath;
    }

    /// Whether frames are the PATH_ variants.
    pub fn multipath(&self) -> bool {
        self.multipath
    }

    /// How many CIDs `path` gets: our target (smaller while no path uses it), within the peer's limit.
    fn target(&self, path: PathId) -> usize {
        let in_use = self.paths.get(&path).is_some_and(|s| s.in_use);
        let ours = if in_use {
            self.cids_per_path
        } else {
            self.unused_path_cids.min(self.cids_per_path)
        };
        let limit = self.peer_limit.unwrap_or(0).min(ours);
        usize::try_from(limit).unwrap_or(usize::MAX)
    }

    /// Issues connection IDs until every live path ID of `paths` (path 0 only without multipath) has its
    /// target number (the full number for path IDs in use, see [`Self::mark_in_use`], fewer for the others). Returns how many were issued. Does nothing before the peer's transport parameters are
    /// known, or with zero-length connection IDs.
    ///
    /// draft-ietf-quic-multipath-21 §3: endpoints issue at least one connection ID for every unused path ID up
    /// to the smaller of both maxima, and MUST NOT issue connection IDs for path IDs above the peer's
    /// maximum: [`PathIds::live_path_ids`] stops at `min(local, peer)`.
    pub fn replenish(&mut self, paths: &PathIds, fill: &mut dyn FnMut(&mut [u8])) -> usize {
        let ids: Vec<PathId> = if self.multipath {
            paths.live_path_ids().take(MAX_PREISSUED_PATHS).collect()
        } else {
            vec![PathId(0)]
        };
        ids.into_iter().map(|p| self.top_up(p, fill)).sum()
    }

    /// Issues connection IDs for `path` until it has the target number.
    fn top_up(&mut self, path: PathId, fill: &mut dyn FnMut(&mut [u8])) -> usize {
        if self.cid_len == 0 || self.peer_limit.is_none() {
            return 0;
        }
        let target = self.target(path);
        let mut issued = 0;
        loop {
            let state = self.paths.entry(path).or_default();
            // RFC 9000 §5.1.1: "An endpoint MUST NOT provide more connection IDs than the peer's limit."
            if state.abandoned || state.live() >= target {
                return issued;
            }
            let Some(cid) = self.draw(fill) else {
                return issued;
            };
            let token = self.key.token(&cid);
            let seq = self.insert(path, cid, token);
            self.pending.insert((path, seq));
            self.updates.push_back(RoutingUpdate::Added {
                cid,
                info: CidInfo {
                    path_id: path,
                    sequence: seq,
                },
            });
            issued += 1;
        }
    }

    /// Draws a connection ID not used by this connection yet.
    fn draw(&self, fill: &mut dyn FnMut(&mut [u8])) -> Option<ConnectionId> {
        let mut bytes = [0u8; MAX_CID_SIZE];
        let buf = bytes.get_mut(..self.cid_len)?;
        for _ in 0..MAX_DRAWS {
            fill(buf);
            let cid = ConnectionId::new(buf)?;
            if !self.by_cid.contains_key(&cid) {
                return Some(cid);
            }
        }
        None
    }

    /// Records a new CID of `path` with the next sequence number; returns that number.
    fn insert(&mut self, path: PathId, cid: ConnectionId, token: ResetToken) -> u64 {
        let state = self.paths.entry(path).or_default();
        let seq = state.next_seq;
        // RFC 9000 §5.1.1: "The sequence number on each newly issued connection ID MUST increase by 1."
        state.next_seq = seq.saturating_add(1);
        state.active.insert(seq, (cid, token));
        self.by_cid.insert(
            cid,
            CidInfo {
                path_id: path,
                sequence: seq,
            },
        );
        seq
    }

    /// Forces the peer off every connection ID of `path` it has now: issues the target number of new ones
    /// whose frames carry Retire Prior To = the first new sequence number. Returns `false` (doing nothing) if
    /// the path has no state, is abandoned, a previous rotation is still waiting for the peer's retirements,
    /// or connection IDs are zero-length.
    ///
    /// RFC 9000 §5.1.1: "An endpoint MAY send connection IDs that temporarily exceed a peer's limit if the
    /// NEW_CONNECTION_ID frame also requires the retirement of any excess, by including a sufficiently large
    /// value in the Retire Prior To field."
    pub fn rotate(&mut self, path: PathId, fill: &mut dyn FnMut(&mut [u8])) -> bool {
        if self.cid_len == 0 || self.peer_limit.is_none() {
            return false;
        }
        let Some(state) = self.paths.get_mut(&path) else {
            return false;
        };
        let outstanding = state.active.range(..state.retire_prior_to).next().is_some();
        if state.abandoned || outstanding {
            return false;
        }
        state.retire_prior_to = state.next_seq;
        let rpt = state.retire_prior_to;
        // CIDs whose frame was never sent are retired on the spot: the peer cannot retire what it never saw.
        let unsent: Vec<u64> = self
            .pending
            .range((path, 0)..(path, rpt))
            .map(|(_, s)| *s)
            .collect();
        for seq in unsent {
            self.pending.remove(&(path, seq));
            self.remove(path, seq);
        }
        self.top_up(path, fill) > 0
    }

    /// Removes an active CID and reports it to the routing table.
    fn remove(&mut self, path: PathId, seq: u64) {
        let Some(state) = self.paths.get_mut(&path) else {
            return;
        };
        if let Some((cid, _)) = state.active.remove(&seq) {
            self.by_cid.remove(&cid);
            self.updates.push_back(RoutingUpdate::Removed { cid });
        }
        self.pending.remove(&(path, seq));
    }

    /// Handles (PATH_)RETIRE_CONNECTION_ID from the peer, received in a packet whose Destination Connection ID
    /// is `packet_dcid`, and issues a replacement (draft-ietf-quic-multipath-21 §2: PATH_RETIRE_CONNECTION_ID
    /// also asks for fresh CIDs on that path unless it is abandoned; RFC 9000 §5.1.1: an endpoint "SHOULD
    /// ensure that its peer has a sufficient number of available and unused connection IDs").
    pub fn handle_retire(
        &mut self,
        frame: &RetireConnectionId,
        packet_dcid: &ConnectionId,
        paths: &PathIds,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), TransportError> {
        let ty = frame.ty();
        let path = match paths.check_frame_path(frame.path_id, ty)? {
            PathDisposition::Process(p) => p,
            PathDisposition::Ignore => return Ok(()),
        };
        let seq = frame.sequence.into_inner();
        let next_seq = self.paths.get(&path).map_or(0, |s| s.next_seq);
        // RFC 9000 §19.16: "Receipt of a RETIRE_CONNECTION_ID frame containing a sequence number greater than
        // any previously sent to the peer MUST be treated as a connection error of type PROTOCOL_VIOLATION."
        if seq >= next_seq {
            return Err(TransportError::protocol_violation(
                "retiring a connection ID sequence number never issued",
            )
            .with_frame(ty.0));
        }
        // RFC 9000 §19.16: "The sequence number specified in a RETIRE_CONNECTION_ID frame MUST NOT refer to the
        // Destination Connection ID field of the packet in which the frame is contained. The peer MAY treat
        // this as a connection error of type PROTOCOL_VIOLATION."
        if self.by_cid.get(packet_dcid)
            == Some(&CidInfo {
                path_id: path,
                sequence: seq,
            })
        {
            return Err(TransportError::protocol_violation(
                "retiring the connection ID the packet was sent to",
            )
            .with_frame(ty.0));
        }
        // Retiring an already retired sequence number is a retransmission: nothing to do.
        self.remove(path, seq);
        self.top_up(path, fill);
        Ok(())
    }

    /// Stops issuing connection IDs for an abandoned path and drops its unsent frames. Its connection IDs stay
    /// routable (draft-ietf-quic-multipath-21 §3: the receiver of PATH_ABANDON SHOULD keep CID state for 3 PTO)
    /// until [`Self::forget_path`].
    pub fn abandon(&mut self, path: PathId) {
        if let Some(state) = self.paths.get_mut(&path) {
            state.abandoned = true;
        }
        let unsent: Vec<_> = self
            .pending
            .range((path, 0)..=(path, u64::MAX))
            .copied()
            .collect();
        for key in unsent {
            self.pending.remove(&key);
        }
    }

    /// Forgets every connection ID of `path` (after abandonment plus 3 PTO).
    pub fn forget_path(&mut self, path: PathId) {
        self.abandon(path);
        if let Some(state) = self.paths.remove(&path) {
            for (cid, _) in state.active.into_values() {
                self.by_cid.remove(&cid);
                self.updates.push_back(RoutingUpdate::Removed { cid });
            }
        }
    }

    /// The path and sequence number of one of our active connection IDs: the path a received packet with
    /// this Destination Connection ID belongs to.
    pub fn lookup(&self, cid: &ConnectionId) -> Option<CidInfo> {
        self.by_cid.get(cid).copied()
    }

    /// The sequence number the next connection ID of `path` would get (`None` if nothing was issued for it).
    pub fn next_sequence(&self, path: PathId) -> Option<u64> {
        self.paths.get(&path).map(|s| s.next_seq)
    }

    /// Whether `path` has a connection ID the peer may use (issued, active, at or above Retire Prior To).
    pub fn has_cids(&self, path: PathId) -> bool {
        self.paths
            .get(&path)
            .is_some_and(|s| !s.abandoned && s.live() > 0)
    }

    /// Number of connection IDs of `path` the peer may keep using: active and at or above Retire Prior To. This
    /// is what the peer's active_connection_id_limit counts, and never exceeds it.
    pub fn available_count(&self, path: PathId) -> usize {
        self.paths.get(&path).map_or(0, LocalPath::live)
    }

    /// Number of active connection IDs of `path` (including those waiting for the peer's retirement).
    pub fn active_count(&self, path: PathId) -> usize {
        self.paths.get(&path).map_or(0, |s| s.active.len())
    }

    /// The active connection IDs of `path` in sequence order.
    pub fn active(&self, path: PathId) -> impl Iterator<Item = (u64, ConnectionId)> + '_ {
        self.paths
            .get(&path)
            .into_iter()
            .flat_map(|s| s.active.iter().map(|(seq, (cid, _))| (*seq, *cid)))
    }

    /// The frame waiting to be sent first, if any (call [`Self::on_sent`] once it is in a packet).
    #[inline]
    pub fn next_pending(&self) -> Option<IssuedCid> {
        // The length check first, inlined at the caller: this is asked for every packet built, and `first`
        // walks the tree to its leftmost leaf even when the set is empty.
        if self.pending.is_empty() {
            return None;
        }
        self.first_pending()
    }

    /// [`Self::next_pending`] with frames pending.
    fn first_pending(&self) -> Option<IssuedCid> {
        let &(path, seq) = self.pending.first()?;
        self.issued(path, seq)
    }

    /// The (PATH_)NEW_CONNECTION_ID frame for (`path`, `seq`) went into a packet.
    pub fn on_sent(&mut self, path: PathId, seq: u64) {
        self.pending.remove(&(path, seq));
    }

    /// The (PATH_)NEW_CONNECTION_ID frame for (`path`, `seq`) was lost: queue it again if the connection ID is
    /// still active, at or above Retire Prior To, and its path is not abandoned.
    pub fn on_lost(&mut self, path: PathId, seq: u64) {
        let resend = self
            .paths
            .get(&path)
            .is_some_and(|s| !s.abandoned && seq >= s.retire_prior_to && s.active.contains_key(&seq));
        if resend {
            self.pending.insert((path, seq));
        }
    }

    /// Number of frames waiting to be sent.
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// The frame contents for an active connection ID, with the path's current Retire Prior To.
    fn issued(&self, path: PathId, seq: u64) -> Option<IssuedCid> {
        let state = self.paths.get(&path)?;
        let (cid, reset_token) = *state.active.get(&seq)?;
        Some(IssuedCid {
            path_id: path,
            sequence: seq,
            retire_prior_to: state.retire_prior_to.min(seq),
            cid,
            reset_token,
            path_frame: self.multipath,
        })
    }

    /// The stateless reset token of one of our active connection IDs.
    pub fn reset_token(&self, path: PathId, seq: u64) -> Option<ResetToken> {
        self.paths.get(&path)?.active.get(&seq).map(|(_, t)| *t)
    }

    /// The next change to report to the endpoint's connection-ID routing table. Drain after every call that
    /// issues or retires connection IDs.
    pub fn poll_routing_update(&mut self) -> Option<RoutingUpdate> {
        self.updates.pop_front()
    }

    /// The type of the frames this issuer sends: PATH_NEW_CONNECTION_ID once multipath is negotiated.
    pub fn frame_type(&self) -> FrameType {
        if self.multipath {
            FrameType::PATH_NEW_CONNECTION_ID
        } else {
            FrameType::NEW_CONNECTION_ID
        }
    }
}
