//! The set of paths of a connection and everything that is about the set rather than one path: the path
//! states by ID, the path-ID bookkeeping (negotiated maximum, consumed IDs), the connection IDs issued and
//! received per path, the queue of PATH_ABANDON frames to send, the redundant copies waiting for their
//! path, and the views the scheduler gets.
//!
//! [`Path`](super::paths::Path) is one path's state; [`PathSet`] owns them all and keeps these invariants:
//!
//! 1. **Keys.** Every path is stored under its own ID (`map[id].id == id`), and iteration is in path-ID order.
//! 2. **IDs are never reused.** A path is only added for an ID that holds no path and was never consumed
//!    (draft-ietf-quic-multipath-21 §3: path IDs are not reused); abandoning a path consumes its ID for good
//!    in the path-ID table and in both connection-ID tables ([`PathSet::abandon`]).
//! 3. **A path has the peer's connection ID.** A path is added only with the peer's current connection ID
//!    for its ID, which is then in use (draft-ietf-quic-multipath-21 §3: a path needs connection IDs from
//!    both sides); [`PathSet::sync_remote_cids`] keeps every path on the peer's current one afterwards.
//! 4. **Abandoned paths leave the live set.** An abandoned path is not in [`PathSet::live`], carries no
//!    validation, alternative probe or PATH_RESPONSE any more, has nothing in flight, and its scheduler
//!    view says so ([`PathSet::fill_views`]). Its state lingers until its deletion time (3 PTO,
//!    draft-ietf-quic-multipath-21 §3) and only then leaves the set ([`PathSet::remove_expired`]): only
//!    abandoned paths are ever removed.
//! 5. **The abandon queue names consumed path IDs.** Every PATH_ABANDON waiting to be sent is for a path ID
//!    this set consumed (so it can never announce the abandonment of a path still in use).
//! 6. **PATH_STATUS frames count up.** Each path's PATH_STATUS sequence numbers strictly increase
//!    (draft-ietf-quic-multipath-21 §3), only live paths send them, and a lost one is sent again only while
//!    it is still the path's latest ([`PathSet::on_status_frame_lost`]).
//! 7. **Redundant copies are bounded and only go to usable paths.** At most the configured number of copies
//!    wait (the oldest goes first); a copy is handed out only for a path that is in the set and usable now,
//!    others are dropped.
//!
//! The choices made over the whole set live here too: the control path that carries connection-level frames
//! (path 0 while it is usable, else the lowest live validated path that is not suspect), the path that
//! carries each path's acknowledgements ([`AckPathPolicy`]), the paths suspected of having failed, and the
//! PATH_ABANDON, MAX_PATH_ID, PATHS_BLOCKED and PATH_STATUS frames to send.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::cc::{CongestionController, PathId};
use crate::proto::cid::{LocalCids, PathIds, RemoteCids};
use crate::proto::coding::VarInt;
use crate::proto::frame::{Frame, PathStatus as PathStatusFrame};
use crate::proto::packet::ConnectionId;
use crate::proto::recovery::{PacketRecord, SpaceId};
use crate::sched::{PathStatus, PathView};

use super::config::AckPathPolicy;
use super::frames_out::{FrameRecord, Records};
use super::path_map::PathMap;
use super::paths::{POTENTIALLY_FAILED_PTOS, Path};

/// Why [`PathSet::open`] refused a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(super) enum OpenRefused {
    /// A path with this ID exists already.
    #[error("path {0:?} exists")]
    Exists(PathId),
    /// The ID was consumed by an abandoned path (path IDs are never reused).
    #[error("path ID {0:?} was consumed")]
    Consumed(PathId),
    /// The path does not use the peer's current connection ID for its ID (or the peer gave none).
    #[error("path {0:?} has no connection ID of the peer")]
    NoRemoteCid(PathId),
}

/// The paths of a connection and their shared bookkeeping (see the module documentation for the invariants).
#[derive(Debug)]
pub(super) struct PathSet {
    /// The path states, in path-ID order.
    map: PathMap,
    /// Path-ID bookkeeping (path 0 only until multipath is negotiated). Path IDs are consumed through
    /// [`PathSet::abandon`] and [`PathSet::consume_unopened`], not directly.
    pub(super) ids: PathIds,
    /// The connection IDs we issued, per path.
    pub(super) local_cids: LocalCids,
    /// The connection IDs the peer issued, per path.
    pub(super) remote_cids: RemoteCids,
    /// PATH_ABANDON frames to send: (path, error code), sent last first.
    pending_abandon: Vec<(PathId, VarInt)>,
    /// Redundant scheduling: the paths the STREAM frames of the packet being built are repeated on.
    duplicate_on: Vec<PathId>,
    /// STREAM frames to repeat on another path (redundant scheduling), oldest first.
    duplicates: VecDeque<(PathId, Records)>,
}

impl PathSet {
    /// The set at connection start: the handshake path `path0` and the tables it was built with.
    pub(super) fn new(path0: Path, ids: PathIds, local_cids: LocalCids, remote_cids: RemoteCids) -> Self {
        let mut map = PathMap::default();
        map.insert(path0);
        PathSet {
            map,
            ids,
            local_cids,
            remote_cids,
            pending_abandon: Vec::new(),
            duplicate_on: Vec::new(),
            duplicates: VecDeque::new(),
        }
    }

    // ----- lookups and iteration -----

    /// The path `id`.
    #[inline]
    pub(super) fn get(&self, id: &PathId) -> Option<&Path> {
        self.map.get(id)
    }

    /// The path `id`, to change.
    #[inline]
    pub(super) fn get_mut(&mut self, id: &PathId) -> Option<&mut Path> {
        self.map.get_mut(id)
    }

    /// Whether path `id` is in the set (abandoned or not).
    #[inline]
    pub(super) fn contains(&self, id: &PathId) -> bool {
        self.map.contains_key(id)
    }

    /// Number of paths, abandoned ones that linger included.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.map.len()
    }

    /// The paths in path-ID order.
    #[inline]
    pub(super) fn values(&self) -> impl Iterator<Item = &Path> + '_ {
        self.map.values()
    }

    /// The paths in path-ID order, to change.
    #[inline]
    pub(super) fn values_mut(&mut self) -> impl Iterator<Item = &mut Path> + '_ {
        self.map.values_mut()
    }

    /// The path IDs in order.
    #[inline]
    pub(super) fn ids(&self) -> impl Iterator<Item = PathId> + '_ {
        self.map.keys().copied()
    }

    /// The path IDs in order, collected (for loops that change the connection while they walk the paths).
    #[inline]
    pub(super) fn id_list(&self) -> Vec<PathId> {
        self.ids().collect()
    }

    /// The paths after `after` (all of them for `None`), in path-ID order.
    #[inline]
    pub(super) fn after(&self, after: Option<PathId>) -> impl Iterator<Item = &Path> + '_ {
        self.map.after(after)
    }

    /// The IDs of the paths not abandoned, in order.
    #[inline]
    pub(super) fn live(&self) -> impl Iterator<Item = PathId> + '_ {
        self.map
            .values()
            .filter(|p| p.abandoned_at.is_none())
            .map(|p| p.id)
    }

    /// Whether path `id` exists and is not abandoned.
    #[inline]
    pub(super) fn is_live(&self, id: &PathId) -> bool {
        self.map.get(id).is_some_and(|p| p.abandoned_at.is_none())
    }

    /// Whether a path other than `id` is live and validated: one that could carry the connection without `id`.
    #[inline]
    pub(super) fn other_validated(&self, id: PathId) -> bool {
        self.map
            .values()
            .any(|p| p.id != id && p.abandoned_at.is_none() && p.validated)
    }

    /// Whether `path` counts as potentially failed (consecutive PTOs, [`POTENTIALLY_FAILED_PTOS`]) while
    /// another validated path is alive: its data goes elsewhere, and its PTO probes carry no data.
    #[inline]
    pub(super) fn suspect(&self, path: PathId) -> bool {
        self.map.get(&path).is_some_and(|p| self.suspect_path(p))
    }

    /// [`Self::suspect`] for a path at hand: its PTO count first (almost always below the threshold), the
    /// walk over the other paths only when it is not.
    #[inline]
    fn suspect_path(&self, p: &Path) -> bool {
        p.recovery.pto_count() >= POTENTIALLY_FAILED_PTOS && self.other_validated(p.id)
    }

    /// The path that carries connection-level control frames: path 0, or the lowest live path once path 0 is
    /// abandoned.
    #[inline]
    pub(super) fn control_path(&self) -> PathId {
        let usable = |p: &&Path| p.abandoned_at.is_none() && (p.validated || p.id == PathId(0));
        // A path that looks failed (consecutive PTOs while another works) carries no connection-level frames:
        // a MAX_DATA stuck on a dead handshake path would stall every path.
        // Without a validated path (the last validated one was abandoned while another is still being
        // validated), any live path: ACKs and control frames on an unvalidated path stay within the 3×
        // anti-amplification limit (RFC 9000 §8.1), whereas an abandoned or deleted path 0 would take them
        // nowhere, and the ACK timer would stay expired for ever.
        self.map
            .values()
            .filter(usable)
            .find(|p| !self.suspect_path(p))
            .or_else(|| self.map.values().find(usable))
            .or_else(|| self.map.values().find(|p| p.abandoned_at.is_none()))
            .map_or(PathId(0), |p| p.id)
    }

    /// The path that carries the acknowledgements of `path`'s packets under `policy`.
    #[inline]
    pub(super) fn ack_target(&self, path: PathId, policy: AckPathPolicy) -> PathId {
        if !self.ids.multipath() {
            return path;
        }
        let usable = |p: &&Path| p.abandoned_at.is_none() && p.validated;
        match policy {
            AckPathPolicy::SamePath => {
                if self.map.get(&path).is_some_and(|p| usable(&p)) {
                    path
                } else {
                    self.control_path()
                }
            }
            AckPathPolicy::LowestRtt => self
                .map
                .values()
                .filter(usable)
                .min_by_key(|p| (p.recovery.rtt().smoothed(), p.id))
                .map_or(path, |p| p.id),
        }
    }

    /// The first path after `after` (in ID order) with packets to acknowledge in a packet sent on `on`
    /// (draft-ietf-quic-multipath-21 §5: once multipath is negotiated, PATH_ACKs may travel on any path).
    #[inline]
    pub(super) fn next_to_ack(
        &self,
        after: Option<PathId>,
        on: PathId,
        policy: AckPathPolicy,
    ) -> Option<PathId> {
        let multipath = self.ids.multipath();
        self.after(after)
            .find(|p| {
                p.ack.has_new_packets() && (p.id == on || (multipath && self.ack_target(p.id, policy) == on))
            })
            .map(|p| p.id)
    }

    /// The largest current PTO of the application space across paths.
    #[inline]
    pub(super) fn largest_pto(&self) -> Duration {
        self.map
            .values()
            .map(|p| p.recovery.pto(SpaceId::Data))
            .max()
            .unwrap_or_default()
    }

    /// The largest smoothed RTT of the live paths with an RTT sample.
    #[inline]
    pub(super) fn slowest_live_srtt(&self) -> Option<Duration> {
        self.map
            .values()
            .filter(|p| p.abandoned_at.is_none() && p.recovery.rtt().has_sample())
            .map(|p| p.recovery.rtt().smoothed())
            .max()
    }

    /// The smallest maximum UDP payload of the paths.
    #[inline]
    pub(super) fn min_mtu(&self) -> Option<u16> {
        self.map.values().map(|p| p.mtu).min()
    }

    /// Path validations in flight: live paths whose current 4-tuple is being validated.
    #[inline]
    pub(super) fn validations_in_flight(&self) -> usize {
        self.map
            .values()
            .filter(|p| p.challenge.is_some() && p.abandoned_at.is_none())
            .count()
    }

    /// The longest connection ID of the peer that a path sends with (0 without paths).
    #[inline]
    pub(super) fn max_remote_cid_len(&self) -> usize {
        self.map.values().map(|p| p.remote_cid.len()).max().unwrap_or(0)
    }

    // ----- adding and abandoning paths -----

    /// Adds `path`, which must use the peer's current connection ID for its ID (invariants 2 and 3); the
    /// connection ID is then in use. Nothing changes on refusal.
    pub(super) fn open(&mut self, path: Path) -> Result<(), OpenRefused> {
        let id = path.id;
        if self.map.contains_key(&id) {
            return Err(OpenRefused::Exists(id));
        }
        // draft-ietf-quic-multipath-21 §3: path IDs are never reused.
        if self.ids.is_abandoned(id) {
            return Err(OpenRefused::Consumed(id));
        }
        // draft-ietf-quic-multipath-21 §3: a path needs connection IDs from both sides.
        if self.remote_cids.current(id) != Some(path.remote_cid) {
            return Err(OpenRefused::NoRemoteCid(id));
        }
        self.map.insert(path);
        self.remote_cids.start_using(id);
        Ok(())
    }

    /// Abandons live path `id`: its state is deleted at `delete_at`; its validation, alternative probe and
    /// pending PATH_RESPONSE are dropped; a PATH_ABANDON with `frame`'s error code is queued if `frame` is
    /// set; and its ID is consumed (no more connection IDs for it from either side). Returns the packets it
    /// still had in flight, which count as lost ("Packets still unacknowledged when path state is deleted
    /// count as lost", draft-ietf-quic-multipath-21 §3), or `None` if the path is unknown or already
    /// abandoned.
    pub(super) fn abandon(
        &mut self,
        id: PathId,
        delete_at: Instant,
        frame: Option<VarInt>,
    ) -> Option<Vec<PacketRecord<Records>>> {
        let p = self.map.get_mut(&id).filter(|p| p.abandoned_at.is_none())?;
        p.abandoned_at = Some(delete_at);
        p.challenge = None;
        p.alt = None;
        p.path_response = None;
        let lost = p.recovery.abandon();
        if let Some(code) = frame {
            self.pending_abandon.push((id, code));
        }
        self.consume_id(id);
        Some(lost)
    }

    /// The peer abandoned path ID `id` that never had a path here: the ID is consumed all the same, and as
    /// there is no state to linger its slot is released at once.
    pub(super) fn consume_unopened(&mut self, id: PathId) {
        if self.map.contains_key(&id) {
            return;
        }
        self.consume_id(id);
        // `ConnectionLimits::max_paths`: no path state stays, so one more path ID may be granted.
        self.ids.release();
    }

    /// Path `id` is used up for good: no more connection IDs for it from either side (path IDs are never
    /// reused, draft-ietf-quic-multipath-21 §3).
    fn consume_id(&mut self, id: PathId) {
        self.ids.abandon(id);
        self.local_cids.abandon(id);
        self.remote_cids.abandon(id);
    }

    /// The earliest time an abandoned path's state may be deleted.
    #[inline]
    pub(super) fn deletion_deadline(&self) -> Option<Instant> {
        self.map.values().filter_map(|p| p.abandoned_at).min()
    }

    /// Deletes the abandoned paths whose deletion time has come, releases their path-ID slots and forgets our
    /// connection IDs of them (the routing updates wait in `local_cids`). Returns their IDs in order.
    pub(super) fn remove_expired(&mut self, now: Instant) -> Vec<PathId> {
        let due: Vec<_> = self
            .map
            .values()
            .filter(|p| p.abandoned_at.is_some_and(|t| now >= t))
            .map(|p| p.id)
            .collect();
        for &id in &due {
            self.map.remove(&id);
            // `ConnectionLimits::max_paths`: a path state is gone, so one more path ID may be granted.
            self.ids.release();
            self.local_cids.forget_path(id);
        }
        due
    }

    // ----- the PATH_ABANDON queue -----

    /// The PATH_ABANDON frame to send next (call [`Self::abandon_frame_sent`] once it is in a packet).
    #[inline]
    pub(super) fn next_abandon_frame(&self) -> Option<(PathId, VarInt)> {
        self.pending_abandon.last().copied()
    }

    /// The frame of [`Self::next_abandon_frame`] went into a packet.
    #[inline]
    pub(super) fn abandon_frame_sent(&mut self) {
        self.pending_abandon.pop();
    }

    /// A PATH_ABANDON frame for `path` was lost: send it again (draft-ietf-quic-multipath-21 §3: PATH_ABANDON is
    /// retransmitted like other frames). Only a consumed path ID can have been abandoned (invariant 5).
    pub(super) fn on_abandon_frame_lost(&mut self, path: PathId, code: VarInt) {
        if self.ids.is_abandoned(path) {
            self.pending_abandon.push((path, code));
        }
    }

    // ----- multipath frames -----

    /// Whether connection-level multipath frames wait to be sent.
    #[inline]
    pub(super) fn has_frames(&self) -> bool {
        !self.pending_abandon.is_empty()
            || self.ids.has_pending_frames()
            || self
                .map
                .values()
                .any(|p| p.status_pending && p.abandoned_at.is_none())
    }

    /// Writes PATH_ABANDON, MAX_PATH_ID, PATHS_BLOCKED and PATH_STATUS frames that wait, within `end`.
    pub(super) fn write_frames(
        &mut self,
        buf: &mut Vec<u8>,
        end: usize,
        records: &mut Records,
        ack_eliciting: &mut bool,
    ) {
        let fits = |f: &Frame<'_>, buf: &Vec<u8>| f.encoded_len() <= end.saturating_sub(buf.len());
        while let Some((path, code)) = self.next_abandon_frame() {
            let f = Frame::PathAbandon(crate::proto::frame::PathAbandon {
                path_id: path,
                error_code: code,
            });
            if !fits(&f, buf) {
                return;
            }
            self.abandon_frame_sent();
            f.encode(buf);
            records.push(FrameRecord::PathAbandon { path, code });
            *ack_eliciting = true;
        }
        if let Some(max) = self.ids.poll_max_path_id() {
            let f = Frame::MaxPathId(max);
            if !fits(&f, buf) {
                self.ids.on_max_path_id_lost(max);
                return;
            }
            f.encode(buf);
            records.push(FrameRecord::MaxPathId(max));
            *ack_eliciting = true;
        }
        if let Some(max) = self.ids.poll_paths_blocked() {
            let f = Frame::PathsBlocked(max);
            if !fits(&f, buf) {
                self.ids.on_paths_blocked_lost(max);
                return;
            }
            f.encode(buf);
            records.push(FrameRecord::PathsBlocked(max));
            *ack_eliciting = true;
        }
        for p in self.map.values_mut() {
            if !p.status_pending || p.abandoned_at.is_some() {
                continue;
            }
            // draft-ietf-quic-multipath-21 §3: one sequence-number space per path, strictly increasing.
            let sequence = p.status_seq_out;
            let f = Frame::PathStatus(PathStatusFrame {
                path_id: p.id,
                sequence: crate::proto::coding::VarInt::from_u64(sequence)
                    .unwrap_or(crate::proto::coding::VarInt::MAX),
                available: p.status == PathStatus::Available,
            });
            if !fits(&f, buf) {
                return;
            }
            f.encode(buf);
            p.status_seq_out += 1;
            p.status_pending = false;
            records.push(FrameRecord::PathStatus {
                path: p.id,
                seq: sequence,
            });
            *ack_eliciting = true;
        }
    }

    /// A PATH_STATUS frame with `seq` for `path` was lost: "after loss, resend only if still the latest status".
    pub(super) fn on_status_frame_lost(&mut self, path: PathId, seq: u64) {
        if let Some(p) = self.map.get_mut(&path) {
            if p.abandoned_at.is_none() && p.status_seq_out == seq + 1 {
                p.status_pending = true;
            }
        }
    }

    // ----- connection IDs -----

    /// Points every path at the peer's current connection ID for it, which is then in use (invariant 3).
    pub(super) fn sync_remote_cids(&mut self) {
        for p in self.map.values_mut() {
            if let Some(cid) = self.remote_cids.current(p.id) {
                if cid != p.remote_cid {
                    p.remote_cid = cid;
                }
                self.remote_cids.start_using(p.id);
            }
        }
    }

    /// The handshake's connection ID of the peer changed (its first Initial's Source Connection ID, or a
    /// Retry's): path `path` sends with it from now on.
    pub(super) fn set_initial_remote_cid(&mut self, path: PathId, cid: ConnectionId) {
        if let Some(p) = self.map.get_mut(&path) {
            p.remote_cid = cid;
        }
        self.remote_cids.set_initial(cid);
    }

    /// Issues connection IDs up to the peer's limits for every path ID connection IDs should exist for; a
    /// path ID is in use (gets the full share) once a path on it is validated.
    pub(super) fn issue_local_cids(&mut self, fill: &mut dyn FnMut(&mut [u8])) {
        // A path ID is in use once a path on it is validated (not while validation may still fail: the path ID
        // would be consumed with its spares unused).
        for p in self.map.values() {
            if p.validated {
                self.local_cids.mark_in_use(p.id);
            }
        }
        self.local_cids.replenish(&self.ids, fill);
    }

    // ----- the scheduler's view -----

    /// Fills `views` with the scheduler's view of every path, in path-ID order (abandoned ones are marked so).
    #[inline]
    pub(super) fn fill_views(&self, cc: &dyn CongestionController, now: Instant, views: &mut Vec<PathView>) {
        views.clear();
        views.extend(self.map.values().map(|p| p.view(cc, now)));
        if views.iter().filter(|v| !v.abandoned).count() < 2 {
            // With a single path there is nothing to prefer: its PTO probes and the data they carry decide.
            for v in views.iter_mut() {
                v.potentially_failed = false;
            }
        }
    }

    // ----- redundant copies -----

    /// The packet being built is not repeated anywhere (yet).
    #[inline]
    pub(super) fn clear_duplicate_on(&mut self) {
        self.duplicate_on.clear();
    }

    /// The STREAM frames of the packet being built are to be repeated on `paths`.
    #[inline]
    pub(super) fn set_duplicate_on(&mut self, paths: impl IntoIterator<Item = PathId>) {
        self.duplicate_on = paths.into_iter().collect();
    }

    /// Whether the packet being built is to be repeated on other paths.
    #[inline]
    pub(super) fn duplicating(&self) -> bool {
        !self.duplicate_on.is_empty()
    }

    /// Queues a copy of `streams` for every path the packet being built is repeated on, keeping at most `cap`
    /// copies (`ConnectionLimits::duplicates`: beyond it the oldest goes; the original is in flight anyway).
    #[inline]
    pub(super) fn queue_duplicates(&mut self, streams: &Records, cap: usize) {
        for p in std::mem::take(&mut self.duplicate_on) {
            if self.duplicates.len() >= cap {
                self.duplicates.pop_front();
            }
            self.duplicates.push_back((p, streams.clone()));
        }
    }

    /// The oldest copy whose path is in the set and `usable`; older copies for other paths are dropped.
    #[inline]
    pub(super) fn next_duplicate(&mut self, usable: impl Fn(&Path) -> bool) -> Option<(PathId, Records)> {
        while let Some((p, records)) = self.duplicates.pop_front() {
            if self.map.get(&p).is_some_and(&usable) {
                return Some((p, records));
            }
        }
        None
    }

    /// Number of copies waiting.
    #[cfg(test)]
    pub(super) fn duplicates_len(&self) -> usize {
        self.duplicates.len()
    }
}

/// Tests read a path as `conn.paths[&id]`, as they did when the paths were a map.
#[cfg(test)]
impl std::ops::Index<&PathId> for PathSet {
    type Output = Path;

    #[allow(clippy::expect_used)]
    fn index(&self, id: &PathId) -> &Path {
        self.map.get(id).expect("no path with this ID")
    }
}
