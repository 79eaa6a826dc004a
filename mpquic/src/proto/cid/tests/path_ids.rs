//! Path-ID flow control ([`PathIds`]).

use super::{assert_err, path_ids, vi};
use crate::cc::PathId;
use crate::proto::TransportErrorCode;
use crate::proto::cid::{OpenPathError, PathDisposition, PathIds};
use crate::proto::frame::{FrameType, PathCidsBlocked, decode_frames};
use crate::proto::transport_params::Side;

const PV: TransportErrorCode = TransportErrorCode::PROTOCOL_VIOLATION;

#[test]
fn max_path_id_above_2_32_minus_1_is_protocol_violation() {
    // draft-ietf-quic-multipath-21 (MAX_PATH_ID): the value MUST NOT exceed 2^32-1; an invalid value is a
    // PROTOCOL_VIOLATION. Such a value cannot even become a PathId: the frame decoder rejects it.
    let mut buf = Vec::new();
    FrameType::MAX_PATH_ID.encode(&mut buf);
    vi(1 << 32).encode(&mut buf);
    let e = decode_frames(&buf).next().unwrap();
    assert_err(e, PV, FrameType::MAX_PATH_ID);
}

#[test]
fn max_path_id_below_initial_max_path_id_is_protocol_violation() {
    // draft-ietf-quic-multipath-21 (MAX_PATH_ID): "The Maximum Path ID value MUST NOT be lower than the value
    // advertised in the initial_max_path_id transport parameter."
    let mut p = path_ids(Side::Client, Some(3), Some(4));
    assert_err(p.handle_max_path_id(PathId(3)), PV, FrameType::MAX_PATH_ID);
    p.handle_max_path_id(PathId(4)).unwrap();
}

#[test]
fn max_path_id_that_does_not_increase_the_limit_is_ignored() {
    // draft-ietf-quic-multipath-21 (MAX_PATH_ID): "MAX_PATH_ID frames that do not increase the path limit MUST
    // be ignored."
    let mut p = path_ids(Side::Client, Some(3), Some(1));
    p.handle_max_path_id(PathId(6)).unwrap();
    p.handle_max_path_id(PathId(4)).unwrap();
    assert_eq!(p.peer_max(), PathId(6));
    assert_eq!(p.usable_max(), PathId(3));
}

#[test]
fn multipath_frames_without_negotiation_are_protocol_violation() {
    // draft-ietf-quic-multipath-21 §2: without both initial_max_path_id parameters, no frame of the extension.
    let mut p = path_ids(Side::Client, Some(3), None);
    assert!(!p.multipath());
    assert_err(p.handle_max_path_id(PathId(4)), PV, FrameType::MAX_PATH_ID);
    assert_err(p.handle_paths_blocked(PathId(0)), PV, FrameType::PATHS_BLOCKED);
    let e = p.check_frame_path(Some(PathId(0)), FrameType::PATH_ABANDON);
    assert_err(e, PV, FrameType::PATH_ABANDON);
    // The RFC 9000 frames name path 0.
    assert_eq!(
        p.check_frame_path(None, FrameType::NEW_CONNECTION_ID),
        Ok(PathDisposition::Process(PathId(0)))
    );
}

#[test]
fn frame_for_a_path_above_our_max_is_protocol_violation() {
    // draft-ietf-quic-multipath-21 §2: a path ID above the advertised maximum is a PROTOCOL_VIOLATION.
    let p = path_ids(Side::Server, Some(2), Some(8));
    let e = p.check_frame_path(Some(PathId(3)), FrameType::PATH_ACK);
    assert_err(e, PV, FrameType::PATH_ACK);
    assert_eq!(
        p.check_frame_path(Some(PathId(2)), FrameType::PATH_ACK),
        Ok(PathDisposition::Process(PathId(2)))
    );
}

#[test]
fn frame_for_an_abandoned_path_is_ignored() {
    let mut p = path_ids(Side::Server, Some(2), Some(2));
    assert!(p.abandon(PathId(1)));
    assert!(!p.abandon(PathId(1)));
    assert_eq!(
        p.check_frame_path(Some(PathId(1)), FrameType::PATH_STATUS_AVAILABLE),
        Ok(PathDisposition::Ignore)
    );
}

#[test]
fn paths_blocked_above_our_max_is_protocol_violation() {
    // draft-ietf-quic-multipath-21 (PATHS_BLOCKED): "Receipt of a value that is higher than the local maximum
    // value MUST be treated as a connection error of type PROTOCOL_VIOLATION."
    let mut p = path_ids(Side::Server, Some(2), Some(2));
    assert_err(p.handle_paths_blocked(PathId(3)), PV, FrameType::PATHS_BLOCKED);
    assert_eq!(p.handle_paths_blocked(PathId(2)), Ok(true));
    assert_eq!(p.handle_paths_blocked(PathId(1)), Ok(false), "stale: ignored");
}

#[test]
fn path_cids_blocked_above_the_next_sequence_is_protocol_violation() {
    // draft-ietf-quic-multipath-21 (PATH_CIDS_BLOCKED): a Next Sequence Number above the sequence number of the
    // next connection ID the receiver would issue is a PROTOCOL_VIOLATION.
    let p = path_ids(Side::Server, Some(2), Some(2));
    let f = |path, next| PathCidsBlocked {
        path_id: PathId(path),
        next_sequence: vi(next),
    };
    assert_eq!(p.check_path_cids_blocked(&f(1, 3), Some(3)), Ok(Some(PathId(1))));
    let e = p.check_path_cids_blocked(&f(1, 4), Some(3));
    assert_err(e, PV, FrameType::PATH_CIDS_BLOCKED);
    let e = p.check_path_cids_blocked(&f(2, 1), None);
    assert_err(e, PV, FrameType::PATH_CIDS_BLOCKED);
    let e = p.check_path_cids_blocked(&f(3, 0), None);
    assert_err(e, PV, FrameType::PATH_CIDS_BLOCKED);
}

#[test]
fn only_the_client_opens_paths() {
    // draft-ietf-quic-multipath-21 §3: "Only the client opens paths."
    let mut p = path_ids(Side::Server, Some(2), Some(2));
    assert_eq!(p.open_path(|_| true), Err(OpenPathError::NotClient));
    let mut p = path_ids(Side::Client, Some(2), None);
    assert_eq!(p.open_path(|_| true), Err(OpenPathError::NotNegotiated));
}

#[test]
fn path_ids_are_never_reused() {
    // draft-ietf-quic-multipath-21 §3: "IDs are never reused (they enter the nonce)."
    let mut p = path_ids(Side::Client, Some(3), Some(3));
    assert_eq!(p.open_path(|_| true), Ok(PathId(1)));
    assert_eq!(p.open_path(|_| true), Ok(PathId(2)));
    p.abandon(PathId(1));
    assert_eq!(p.open_path(|_| true), Ok(PathId(3)));
    assert!(p.is_abandoned(PathId(1)));
    assert!(!p.live_path_ids().any(|x| x == PathId(1)));
}

#[test]
fn opening_a_path_needs_cids_from_both_sides() {
    let mut p = path_ids(Side::Client, Some(3), Some(3));
    assert_eq!(
        p.open_path(|_| false),
        Err(OpenPathError::NoConnectionIds(PathId(1)))
    );
    assert_eq!(p.open_path(|x| x == PathId(1)), Ok(PathId(1)));
}

#[test]
fn paths_blocked_is_sent_once_when_the_peer_limit_blocks_a_new_path() {
    // draft-ietf-quic-multipath-21 (PATHS_BLOCKED): sent when an endpoint would like to open a new path but
    // the peer's maximum path ID prevents it.
    let mut p = path_ids(Side::Client, Some(5), Some(1));
    assert_eq!(p.open_path(|_| true), Ok(PathId(1)));
    assert_eq!(
        p.open_path(|_| true),
        Err(OpenPathError::BlockedByPeer(PathId(1)))
    );
    assert_eq!(
        p.open_path(|_| true),
        Err(OpenPathError::BlockedByPeer(PathId(1)))
    );
    assert!(p.has_pending_frames());
    assert_eq!(p.poll_paths_blocked(), Some(PathId(1)));
    assert!(!p.has_pending_frames());
    assert_eq!(p.poll_paths_blocked(), None, "once per limit");
    p.on_paths_blocked_lost(PathId(1));
    assert_eq!(p.poll_paths_blocked(), Some(PathId(1)));
    // Raised: a lost PATHS_BLOCKED for the old limit is not resent.
    p.handle_max_path_id(PathId(2)).unwrap();
    p.on_paths_blocked_lost(PathId(1));
    assert_eq!(p.poll_paths_blocked(), None);
    assert_eq!(p.open_path(|_| true), Ok(PathId(2)));
}

#[test]
fn our_own_limit_blocks_too() {
    let mut p = path_ids(Side::Client, Some(1), Some(5));
    assert_eq!(p.open_path(|_| true), Ok(PathId(1)));
    assert_eq!(
        p.open_path(|_| true),
        Err(OpenPathError::BlockedLocally(PathId(1)))
    );
    assert_eq!(p.poll_paths_blocked(), None);
}

#[test]
fn abandoning_raises_our_max_and_queues_max_path_id() {
    // draft-ietf-quic-multipath-21 §3: MAX_PATH_ID when path IDs are used up.
    let mut p = path_ids(Side::Server, Some(2), Some(2));
    assert_eq!(p.poll_max_path_id(), None);
    assert!(!p.has_pending_frames());
    p.abandon(PathId(1));
    assert_eq!(p.local_max(), PathId(3));
    assert!(p.has_pending_frames());
    assert_eq!(p.poll_max_path_id(), Some(PathId(3)));
    assert!(!p.has_pending_frames());
    assert_eq!(p.poll_max_path_id(), None);
    p.on_max_path_id_lost(PathId(3));
    p.abandon(PathId(2));
    assert_eq!(p.poll_max_path_id(), Some(PathId(4)));
    // A lost older value is superseded.
    p.on_max_path_id_lost(PathId(3));
    assert_eq!(p.poll_max_path_id(), None);
    // Usable IDs: 0, 3 and (once the peer raises its max) 4.
    assert_eq!(p.live_path_ids().collect::<Vec<_>>(), vec![PathId(0)]);
    p.handle_max_path_id(PathId(4)).unwrap();
    assert_eq!(
        p.live_path_ids().collect::<Vec<_>>(),
        vec![PathId(0), PathId(3), PathId(4)]
    );
}

#[test]
fn max_states_holds_back_replacements_until_lingering_states_are_released() {
    // `ConnectionLimits::max_paths` = 3 with initial_max_path_id 2: paths 0, 1 and 2 fill the cap. Each
    // abandoned path lingers (3 PTO) before its state is deleted, so its replacement ID waits for `release`.
    let mut p = path_ids(Side::Server, Some(2), Some(7));
    p.set_max_states(3);
    p.abandon(PathId(1));
    assert_eq!(p.local_max(), PathId(2), "path 1 still lingers");
    assert_eq!(p.poll_max_path_id(), None);
    p.abandon(PathId(2));
    assert_eq!(p.local_max(), PathId(2));
    p.release();
    assert_eq!(p.local_max(), PathId(3));
    assert_eq!(p.poll_max_path_id(), Some(PathId(3)));
    p.release();
    assert_eq!(p.local_max(), PathId(4));
    // Nothing more is owed: a release without an abandonment grants nothing.
    p.release();
    assert_eq!(p.local_max(), PathId(4));
    // Without a cap the replacement is immediate (the default of `PathIds` itself).
    let mut q = path_ids(Side::Server, Some(2), Some(7));
    q.abandon(PathId(1));
    assert_eq!(q.local_max(), PathId(3));
}

#[test]
fn abandoned_path_ids_use_bounded_memory() {
    // A client that keeps opening and abandoning paths while path 1 stays open: one range, not one entry each.
    let mut p = path_ids(Side::Server, Some(1), Some(1));
    for id in 2..10_000u32 {
        p.abandon(PathId(id));
    }
    assert_eq!(p.abandoned_ranges(), 1);
    p.abandon(PathId(0));
    assert_eq!(p.abandoned_ranges(), 2);
    p.abandon(PathId(1));
    assert_eq!(p.abandoned_ranges(), 1);
    assert!(p.is_abandoned(PathId(5000)));
    assert!(!p.is_abandoned(PathId(10_000)));
    // Merging at the top of the range of u32.
    let mut q = PathIds::new(Side::Server, Some(u32::MAX));
    q.abandon(PathId(u32::MAX));
    q.abandon(PathId(u32::MAX - 1));
    assert_eq!(q.abandoned_ranges(), 1);
}

#[test]
fn usable_max_is_the_smaller_maximum() {
    let p = path_ids(Side::Server, Some(2), Some(7));
    assert_eq!(p.usable_max(), PathId(2));
    let p = path_ids(Side::Server, Some(9), Some(7));
    assert_eq!(p.usable_max(), PathId(7));
    let p = path_ids(Side::Server, None, Some(7));
    assert_eq!(p.usable_max(), PathId(0));
}

#[test]
fn live_path_ids_skip_abandoned_ranges() {
    let mut p = path_ids(Side::Server, Some(10), Some(u32::MAX));
    for id in [1, 2, 3, 5, 9, 10] {
        p.abandon(PathId(id));
    }
    // Our maximum grew by one per abandoned ID: 16.
    assert_eq!(p.usable_max(), PathId(16));
    let live: Vec<u32> = p.live_path_ids().map(|x| x.0).collect();
    assert_eq!(live, vec![0, 4, 6, 7, 8, 11, 12, 13, 14, 15, 16]);
    // The largest maxima end the iteration without overflow.
    let q = path_ids(Side::Server, Some(u32::MAX), Some(u32::MAX));
    assert_eq!(q.live_path_ids().nth(1000), Some(PathId(1000)));
}
