//! The invariants of [`PathSet`] (see its module documentation), checked on hand-built sequences: paths
//! opened with and without the peer's connection IDs, validated, abandoned, deleted after their 3 PTO,
//! connection IDs rotated by the peer, PATH_ABANDON frames sent and lost, redundant copies queued and taken.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::cc::PathId;
use crate::proto::ack_tracker::AckConfig;
use crate::proto::cid::{LocalCids, PathIds, RemoteCids, ResetKey};
use crate::proto::coding::VarInt;
use crate::proto::connection::frames_out::{FrameRecord, Records};
use crate::proto::connection::path_set::{OpenRefused, PathSet};
use crate::proto::connection::paths::Path;
use crate::proto::frame::NewConnectionId;
use crate::proto::packet::ConnectionId;
use crate::proto::recovery::{PathRecovery, RecoveryConfig};
use crate::proto::transport_params::Side;

/// An arbitrary start instant (time is an input: nothing here reads the clock again).
fn t0() -> Instant {
    #[allow(clippy::disallowed_methods)] // virtual time starts at an arbitrary instant
    let t = Instant::now();
    t
}

fn addr() -> SocketAddr {
    "192.0.2.1:4433".parse().unwrap()
}

/// An 8-byte connection ID filled with `b`.
fn cid(b: u8) -> ConnectionId {
    ConnectionId::new(&[b; 8]).unwrap()
}

/// A client's set after a handshake that negotiated multipath with path IDs 0..=4 on both sides; the peer's
/// handshake connection ID is `cid(0xA0)`.
fn set() -> PathSet {
    let path0 = Path::handshake_path(
        addr(),
        cid(0xA0),
        RecoveryConfig::default(),
        AckConfig::default(),
        false,
        1200,
    );
    let mut ids = PathIds::new(Side::Client, Some(4));
    ids.set_peer_initial(Some(4));
    let mut local = LocalCids::new(8, ResetKey::new(&[7; 32]), cid(0x10), true).unwrap();
    local.set_peer_params(4, true);
    let mut remote = RemoteCids::new(cid(0xA0), 4);
    remote.set_multipath(true);
    PathSet::new(path0, ids, local, remote)
}

/// The peer issues `cid(b)` with sequence number `seq` (and Retire Prior To `rpt`) for `path`.
fn peer_issues(s: &mut PathSet, path: u32, seq: u64, rpt: u64, b: u8) {
    let id = [b; 8];
    let f = NewConnectionId {
        path_id: Some(PathId(path)),
        sequence: VarInt::from_u64(seq).unwrap(),
        retire_prior_to: VarInt::from_u64(rpt).unwrap(),
        id: &id,
        reset_token: [b; 16],
    };
    s.remote_cids.handle_new_cid(&f, &s.ids).unwrap();
}

/// An unvalidated path `id` sending with `remote_cid`.
fn path(id: u32, remote_cid: ConnectionId) -> Path {
    let recovery = PathRecovery::new(PathId(id), RecoveryConfig::default());
    Path::new(
        PathId(id),
        addr(),
        remote_cid,
        recovery,
        AckConfig::default(),
        false,
        false,
        1200,
    )
}

/// `s` with path `id` opened on the peer's connection ID `cid(b)` (sequence 0).
fn open(s: &mut PathSet, id: u32, b: u8) {
    peer_issues(s, id, 0, 0, b);
    s.open(path(id, cid(b))).unwrap();
}

#[test]
fn a_path_opens_only_with_the_peers_current_connection_id() {
    let mut s = set();
    // No connection ID from the peer for path 1 yet.
    assert_eq!(
        s.open(path(1, cid(0xB1))),
        Err(OpenRefused::NoRemoteCid(PathId(1)))
    );
    assert!(!s.contains(&PathId(1)));
    peer_issues(&mut s, 1, 0, 0, 0xB1);
    // A connection ID the peer did not give for path 1 is refused too.
    assert_eq!(
        s.open(path(1, cid(0xC1))),
        Err(OpenRefused::NoRemoteCid(PathId(1)))
    );
    s.open(path(1, cid(0xB1))).unwrap();
    assert_eq!(s.get(&PathId(1)).unwrap().remote_cid, cid(0xB1));
    // The connection ID is in use: its reset token (0xB1 × 16) now counts for Stateless Reset detection.
    assert!(s.remote_cids.reset_tokens().any(|t| t.0 == [0xB1; 16]));
    // The same ID twice is refused, and the first path is untouched.
    assert_eq!(s.open(path(1, cid(0xB1))), Err(OpenRefused::Exists(PathId(1))));
    assert_eq!(s.len(), 2);
}

#[test]
fn an_abandoned_path_id_is_never_reused() {
    let mut s = set();
    open(&mut s, 1, 0xB1);
    let t0 = t0();
    let lost = s
        .abandon(PathId(1), t0 + Duration::from_millis(30), None)
        .unwrap();
    assert!(lost.is_empty(), "nothing was in flight");
    // The ID is consumed in the three tables.
    assert!(s.ids.is_abandoned(PathId(1)));
    assert_eq!(s.remote_cids.current(PathId(1)), None);
    assert!(!s.local_cids.has_cids(PathId(1)));
    // Abandoning it again does nothing.
    assert!(s.abandon(PathId(1), t0 + Duration::from_secs(9), None).is_none());
    assert_eq!(
        s.get(&PathId(1)).unwrap().abandoned_at,
        Some(t0 + Duration::from_millis(30))
    );
    // After its deletion, a new path on ID 1 is refused even with a connection ID that looks current: the
    // peer's late PATH_NEW_CONNECTION_ID for the consumed ID is ignored.
    assert_eq!(s.remove_expired(t0 + Duration::from_millis(30)), vec![PathId(1)]);
    peer_issues(&mut s, 1, 5, 0, 0xB5);
    assert_eq!(s.remote_cids.current(PathId(1)), None);
    assert_eq!(s.open(path(1, cid(0xB5))), Err(OpenRefused::Consumed(PathId(1))));
    assert!(!s.contains(&PathId(1)));
}

#[test]
fn an_abandoned_path_leaves_the_live_set_and_the_schedulers_choice() {
    let mut s = set();
    open(&mut s, 1, 0xB1);
    let p = s.get_mut(&PathId(1)).unwrap();
    p.validated = true;
    p.path_response = Some([1; 8]);
    assert_eq!(s.live().collect::<Vec<_>>(), vec![PathId(0), PathId(1)]);
    // Path 0 (the client's handshake path, validated) and path 1 can stand in for each other.
    assert!(s.other_validated(PathId(0)));
    assert!(s.other_validated(PathId(1)));
    s.abandon(PathId(1), t0(), Some(VarInt::ZERO)).unwrap();
    assert_eq!(s.live().collect::<Vec<_>>(), vec![PathId(0)]);
    assert!(!s.is_live(&PathId(1)));
    assert!(
        !s.other_validated(PathId(0)),
        "only the abandoned path 1 was another validated path"
    );
    let p = s.get(&PathId(1)).unwrap();
    assert!(p.path_response.is_none() && p.challenge.is_none() && p.alt.is_none());
    // The scheduler still sees both, in ID order, path 1 marked abandoned.
    let cc = crate::cc::registry::build("cubic").unwrap();
    let mut views = vec![crate::sched::PathView::new(9, 0, Duration::ZERO)];
    s.fill_views(cc.as_ref(), t0(), &mut views);
    assert_eq!(
        views.iter().map(|v| (v.id, v.abandoned)).collect::<Vec<_>>(),
        vec![(PathId(0), false), (PathId(1), true)]
    );
}

#[test]
fn the_abandon_queue_holds_consumed_path_ids_only() {
    let mut s = set();
    open(&mut s, 1, 0xB1);
    open(&mut s, 2, 0xB2);
    let now = t0();
    // Abandoned without a frame (the path failed validation before it was used; no frame asked for).
    s.abandon(PathId(2), now, None).unwrap();
    assert_eq!(s.next_abandon_frame(), None);
    s.abandon(PathId(1), now, Some(VarInt::from_u32(7))).unwrap();
    assert_eq!(s.next_abandon_frame(), Some((PathId(1), VarInt::from_u32(7))));
    s.abandon_frame_sent();
    assert_eq!(s.next_abandon_frame(), None);
    // The frame was lost: it is queued again for the consumed ID 1, but a loss report naming path 3, which
    // was never abandoned, queues nothing.
    s.on_abandon_frame_lost(PathId(3), VarInt::from_u32(7));
    assert_eq!(s.next_abandon_frame(), None);
    s.on_abandon_frame_lost(PathId(1), VarInt::from_u32(7));
    assert_eq!(s.next_abandon_frame(), Some((PathId(1), VarInt::from_u32(7))));
}

#[test]
fn only_abandoned_paths_are_deleted_and_only_at_their_time() {
    let mut s = set();
    open(&mut s, 1, 0xB1);
    open(&mut s, 2, 0xB2);
    let t0 = t0();
    assert_eq!(
        s.remove_expired(t0 + Duration::from_secs(3600)),
        Vec::<PathId>::new()
    );
    s.abandon(PathId(2), t0 + Duration::from_millis(50), None)
        .unwrap();
    s.abandon(PathId(1), t0 + Duration::from_millis(30), None)
        .unwrap();
    assert_eq!(s.deletion_deadline(), Some(t0 + Duration::from_millis(30)));
    assert_eq!(
        s.remove_expired(t0 + Duration::from_millis(29)),
        Vec::<PathId>::new()
    );
    assert_eq!(s.remove_expired(t0 + Duration::from_millis(30)), vec![PathId(1)]);
    assert_eq!(s.deletion_deadline(), Some(t0 + Duration::from_millis(50)));
    assert_eq!(s.remove_expired(t0 + Duration::from_millis(60)), vec![PathId(2)]);
    assert_eq!(s.ids().collect::<Vec<_>>(), vec![PathId(0)]);
    assert_eq!(s.deletion_deadline(), None);
}

#[test]
fn a_path_id_the_peer_abandons_unopened_is_consumed() {
    let mut s = set();
    open(&mut s, 1, 0xB1);
    s.consume_unopened(PathId(3));
    assert!(s.ids.is_abandoned(PathId(3)));
    assert!(!s.contains(&PathId(3)));
    // A path that exists is abandoned through `abandon`, not this: nothing changes.
    s.consume_unopened(PathId(1));
    assert!(!s.ids.is_abandoned(PathId(1)));
    assert!(s.is_live(&PathId(1)));
    assert_eq!(s.remote_cids.current(PathId(1)), Some(cid(0xB1)));
}

#[test]
fn paths_follow_the_peers_current_connection_id() {
    let mut s = set();
    open(&mut s, 1, 0xB1);
    // The peer issues sequence 1 and retires everything below it (RFC 9000 §5.1.2).
    peer_issues(&mut s, 1, 1, 1, 0xC1);
    assert_eq!(s.get(&PathId(1)).unwrap().remote_cid, cid(0xB1), "not synced yet");
    s.sync_remote_cids();
    assert_eq!(s.get(&PathId(1)).unwrap().remote_cid, cid(0xC1));
    assert_eq!(s.get(&PathId(0)).unwrap().remote_cid, cid(0xA0));
    // The server's first Initial names a new handshake connection ID (RFC 9000 §7.2).
    s.set_initial_remote_cid(PathId(0), cid(0xA7));
    assert_eq!(s.get(&PathId(0)).unwrap().remote_cid, cid(0xA7));
    assert_eq!(s.remote_cids.current(PathId(0)), Some(cid(0xA7)));
}

#[test]
fn paths_iterate_in_id_order_whatever_the_opening_order() {
    let mut s = set();
    open(&mut s, 3, 0xB3);
    open(&mut s, 1, 0xB1);
    assert_eq!(s.ids().collect::<Vec<_>>(), vec![PathId(0), PathId(1), PathId(3)]);
    assert_eq!(s.values().map(|p| p.id).collect::<Vec<_>>(), s.id_list());
    assert_eq!(
        s.after(Some(PathId(1))).map(|p| p.id).collect::<Vec<_>>(),
        vec![PathId(3)]
    );
    assert_eq!(s.after(None).count(), 3);
    // 8-byte connection IDs everywhere.
    assert_eq!(s.max_remote_cid_len(), 8);
}

#[test]
fn redundant_copies_are_bounded_and_go_to_usable_paths_only() {
    let mut s = set();
    open(&mut s, 1, 0xB1);
    open(&mut s, 2, 0xB2);
    let records: Records = vec![FrameRecord::HandshakeDone];
    // Copies for paths 1, 2 and 5 (unknown), at most 2 kept: the oldest (path 1) goes.
    s.set_duplicate_on([PathId(1), PathId(2), PathId(5)]);
    assert!(s.duplicating());
    s.queue_duplicates(&records, 2);
    assert!(!s.duplicating(), "queuing takes the packet's copy targets");
    assert_eq!(s.duplicates_len(), 2);
    assert_eq!(s.next_duplicate(|_| true).map(|(p, _)| p), Some(PathId(2)));
    // The copy for path 5, not in the set, is dropped.
    assert_eq!(s.next_duplicate(|_| true).map(|(p, _)| p), None);
    assert_eq!(s.duplicates_len(), 0);
    // A copy whose path cannot send now is dropped on the way to the next usable one.
    s.set_duplicate_on([PathId(1), PathId(2)]);
    s.queue_duplicates(&records, 64);
    assert_eq!(
        s.next_duplicate(|p| p.id != PathId(1)).map(|(p, r)| (p, r.len())),
        Some((PathId(2), 1))
    );
    assert_eq!(s.duplicates_len(), 0);
    // Abandoned paths are not usable by the sender's test; their copies go the same way.
    s.set_duplicate_on([PathId(2)]);
    s.queue_duplicates(&records, 64);
    s.abandon(PathId(2), t0(), None).unwrap();
    assert_eq!(s.next_duplicate(|p| p.abandoned_at.is_none()), None);
}

#[test]
fn path_status_numbers_count_up_and_a_lost_one_is_resent_only_while_latest() {
    let mut s = set();
    open(&mut s, 1, 0xB1);
    let write = |s: &mut PathSet, end: usize| {
        let (mut buf, mut records, mut ack_eliciting) = (Vec::new(), Records::new(), false);
        s.write_frames(&mut buf, end, &mut records, &mut ack_eliciting);
        assert_eq!(ack_eliciting, !records.is_empty());
        assert_eq!(buf.is_empty(), records.is_empty());
        records
    };
    let p = s.get_mut(&PathId(1)).unwrap();
    p.status = crate::sched::PathStatus::Backup;
    p.status_pending = true;
    assert!(s.has_frames());
    // No room (2 bytes cannot hold the frame's type, path ID and sequence number): it keeps waiting.
    assert_eq!(write(&mut s, 2), Records::new());
    assert!(s.has_frames());
    let status = |seq| FrameRecord::PathStatus { path: PathId(1), seq };
    assert_eq!(write(&mut s, 1000), vec![status(0)]);
    assert!(!s.has_frames());
    // Lost while still the latest: sent again, with the next sequence number.
    s.on_status_frame_lost(PathId(1), 0);
    assert!(s.has_frames());
    assert_eq!(write(&mut s, 1000), vec![status(1)]);
    // Sequence 0 lost late: superseded by 1, nothing to send.
    s.on_status_frame_lost(PathId(1), 0);
    assert!(!s.has_frames());
    // An abandoned path sends no PATH_STATUS: only its PATH_ABANDON and the MAX_PATH_ID that replaces its ID
    // (initial maximum 4, one ID consumed: 5).
    s.get_mut(&PathId(1)).unwrap().status_pending = true;
    s.abandon(PathId(1), t0(), Some(VarInt::ZERO)).unwrap();
    assert_eq!(
        write(&mut s, 1000),
        vec![
            FrameRecord::PathAbandon {
                path: PathId(1),
                code: VarInt::ZERO
            },
            FrameRecord::MaxPathId(PathId(5))
        ]
    );
    s.on_status_frame_lost(PathId(1), 1);
    assert!(!s.has_frames());
}

#[test]
fn control_and_ack_paths_avoid_abandoned_and_unvalidated_paths() {
    use crate::proto::connection::AckPathPolicy::{LowestRtt, SamePath};
    let mut s = set();
    open(&mut s, 1, 0xB1);
    open(&mut s, 2, 0xB2);
    s.get_mut(&PathId(2)).unwrap().validated = true;
    // Path 0 (the client's validated handshake path) carries the connection's frames.
    assert_eq!(s.control_path(), PathId(0));
    // SamePath: a validated path acknowledges on itself, the unvalidated path 1 on the control path.
    assert_eq!(s.ack_target(PathId(2), SamePath), PathId(2));
    assert_eq!(s.ack_target(PathId(1), SamePath), PathId(0));
    // LowestRtt: no RTT sample anywhere, so every validated path has the initial RTT; the lowest ID wins.
    assert_eq!(s.ack_target(PathId(1), LowestRtt), PathId(0));
    s.abandon(PathId(0), t0(), Some(VarInt::ZERO)).unwrap();
    // Path 0 abandoned: the lowest live validated path takes over; path 1 is not validated.
    assert_eq!(s.control_path(), PathId(2));
    assert_eq!(s.ack_target(PathId(1), SamePath), PathId(2));
    assert_eq!(s.ack_target(PathId(0), LowestRtt), PathId(2));
    assert!(!s.suspect(PathId(2)), "no PTO fired");
    // Without multipath every path acknowledges on itself.
    let mut single = PathSet::new(
        Path::handshake_path(
            addr(),
            cid(0xA0),
            RecoveryConfig::default(),
            AckConfig::default(),
            false,
            1200,
        ),
        PathIds::new(Side::Client, None),
        LocalCids::new(8, ResetKey::new(&[7; 32]), cid(0x10), false).unwrap(),
        RemoteCids::new(cid(0xA0), 4),
    );
    assert_eq!(single.ack_target(PathId(3), SamePath), PathId(3));
    assert_eq!(
        single.open(path(1, cid(0xA0))),
        Err(OpenRefused::NoRemoteCid(PathId(1)))
    );
}
