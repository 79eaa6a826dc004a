//! The store of the peer's connection IDs ([`RemoteCids`]).

use super::{assert_err, cid, new_cid, path_ids, store};
use crate::cc::PathId;
use crate::proto::TransportErrorCode;
use crate::proto::cid::RemoteCids;
use crate::proto::frame::{FrameType, RetireConnectionId};
use crate::proto::packet::connection_id::ConnectionId;
use crate::proto::packet::stateless_reset::ResetToken;
use crate::proto::transport_params::Side;

const PV: TransportErrorCode = TransportErrorCode::PROTOCOL_VIOLATION;
const LIMIT: TransportErrorCode = TransportErrorCode::CONNECTION_ID_LIMIT_ERROR;

/// Takes every queued RETIRE frame (marking it sent).
fn retires(r: &mut RemoteCids) -> Vec<RetireConnectionId> {
    let mut out = Vec::new();
    while let Some(f) = r.next_retire() {
        let path = f.path_id.unwrap_or(PathId(0));
        r.on_retire_sent(path, f.sequence.into_inner());
        out.push(f);
    }
    out
}

#[test]
fn new_cid_while_the_peer_uses_zero_length_cids_is_protocol_violation() {
    // RFC 9000 §19.15: "An endpoint that is sending packets with a zero-length Destination Connection ID MUST
    // treat receipt of a NEW_CONNECTION_ID frame as a connection error of type PROTOCOL_VIOLATION."
    let mut r = RemoteCids::new(ConnectionId::EMPTY, 4);
    let paths = path_ids(Side::Client, None, None);
    let r1 = r.handle_new_cid(&new_cid(None, 1, 0, &[1; 8], 1), &paths);
    assert_err(r1, PV, FrameType::NEW_CONNECTION_ID);
}

#[test]
fn same_sequence_with_a_different_cid_is_protocol_violation() {
    // RFC 9000 §19.15: "if a sequence number is used for different connection IDs, the endpoint MAY treat that
    // receipt as a connection error of type PROTOCOL_VIOLATION."
    let mut r = store(4, false);
    let paths = path_ids(Side::Client, None, None);
    r.handle_new_cid(&new_cid(None, 1, 0, &[1; 8], 1), &paths)
        .unwrap();
    let e = r.handle_new_cid(&new_cid(None, 1, 0, &[2; 8], 1), &paths);
    assert_err(e, PV, FrameType::NEW_CONNECTION_ID);
}

#[test]
fn same_sequence_with_a_different_reset_token_is_protocol_violation() {
    // RFC 9000 §19.15: "repeats a previously issued connection ID with a different Stateless Reset Token".
    let mut r = store(4, true);
    let paths = path_ids(Side::Client, Some(2), Some(2));
    r.handle_new_cid(&new_cid(Some(1), 0, 0, &[1; 8], 1), &paths)
        .unwrap();
    let e = r.handle_new_cid(&new_cid(Some(1), 0, 0, &[1; 8], 2), &paths);
    assert_err(e, PV, FrameType::PATH_NEW_CONNECTION_ID);
}

#[test]
fn same_cid_with_a_different_sequence_or_path_is_protocol_violation() {
    // RFC 9000 §19.15: "repeats a previously issued connection ID with [...] a different Sequence Number";
    // CIDs are unique across the connection's paths (draft-ietf-quic-multipath-21 §3).
    let mut r = store(4, true);
    let paths = path_ids(Side::Client, Some(2), Some(2));
    r.handle_new_cid(&new_cid(Some(1), 0, 0, &[1; 8], 1), &paths)
        .unwrap();
    let e = r.handle_new_cid(&new_cid(Some(1), 1, 0, &[1; 8], 1), &paths);
    assert_err(e, PV, FrameType::PATH_NEW_CONNECTION_ID);
    let e = r.handle_new_cid(&new_cid(Some(2), 0, 0, &[1; 8], 1), &paths);
    assert_err(e, PV, FrameType::PATH_NEW_CONNECTION_ID);
    // The handshake CID too.
    let e = r.handle_new_cid(&new_cid(Some(2), 0, 0, &[0xbb; 8], 1), &paths);
    assert_err(e, PV, FrameType::PATH_NEW_CONNECTION_ID);
}

#[test]
fn a_retransmitted_frame_is_idempotent() {
    let mut r = store(2, false);
    let paths = path_ids(Side::Client, None, None);
    let f = new_cid(None, 1, 0, &[1; 8], 1);
    r.handle_new_cid(&f, &paths).unwrap();
    r.handle_new_cid(&f, &paths).unwrap();
    assert_eq!(r.active_count(PathId(0)), 2);
}

#[test]
fn exceeding_active_connection_id_limit_is_connection_id_limit_error() {
    // RFC 9000 §5.1.1: "if the number of active connection IDs exceeds the value advertised in its
    // active_connection_id_limit transport parameter, an endpoint MUST close the connection with an error of
    // type CONNECTION_ID_LIMIT_ERROR." The handshake CID counts.
    let mut r = store(2, false);
    let paths = path_ids(Side::Client, None, None);
    r.handle_new_cid(&new_cid(None, 1, 0, &[1; 8], 1), &paths)
        .unwrap();
    let e = r.handle_new_cid(&new_cid(None, 2, 0, &[2; 8], 2), &paths);
    assert_err(e, LIMIT, FrameType::NEW_CONNECTION_ID);
}

#[test]
fn active_connection_id_limit_applies_per_path() {
    // draft-ietf-quic-multipath-21 §2: active_connection_id_limit applies per path.
    let mut r = store(2, true);
    let paths = path_ids(Side::Client, Some(2), Some(2));
    r.handle_new_cid(&new_cid(Some(0), 1, 0, &[1; 8], 1), &paths)
        .unwrap();
    for p in 1..=2u8 {
        r.handle_new_cid(
            &new_cid(Some(u32::from(p)), 0, 0, &[p, 0, 0, 0, 0, 0, 0, 0], 1),
            &paths,
        )
        .unwrap();
        r.handle_new_cid(
            &new_cid(Some(u32::from(p)), 1, 0, &[p, 1, 0, 0, 0, 0, 0, 0], 1),
            &paths,
        )
        .unwrap();
    }
    let e = r.handle_new_cid(&new_cid(Some(2), 2, 0, &[2, 2, 0, 0, 0, 0, 0, 0], 1), &paths);
    assert_err(e, LIMIT, FrameType::PATH_NEW_CONNECTION_ID);
}

#[test]
fn retire_prior_to_retires_older_cids_before_adding_the_new_one() {
    // RFC 9000 §5.1.2: retire "before adding the newly provided connection ID to the set of active connection
    // IDs": at the limit, a frame that retires everything older is accepted.
    let mut r = store(2, false);
    let paths = path_ids(Side::Client, None, None);
    r.handle_new_cid(&new_cid(None, 1, 0, &[1; 8], 1), &paths)
        .unwrap();
    r.handle_new_cid(&new_cid(None, 2, 2, &[2; 8], 2), &paths)
        .unwrap();
    assert_eq!(r.active_count(PathId(0)), 1);
    assert_eq!(r.current(PathId(0)), Some(cid(&[2; 8])));
    let frames = retires(&mut r);
    let seqs: Vec<u64> = frames.iter().map(|f| f.sequence.into_inner()).collect();
    assert_eq!(seqs, vec![0, 1]);
    assert!(frames.iter().all(|f| f.ty() == FrameType::RETIRE_CONNECTION_ID));
}

#[test]
fn sequence_below_retire_prior_to_is_retired_immediately() {
    // RFC 9000 §19.15: a sequence number below a previously received Retire Prior To is retired at once.
    let mut r = store(4, true);
    let paths = path_ids(Side::Client, Some(1), Some(1));
    r.handle_new_cid(&new_cid(Some(1), 3, 3, &[3; 8], 3), &paths)
        .unwrap();
    r.handle_new_cid(&new_cid(Some(1), 1, 0, &[1; 8], 1), &paths)
        .unwrap();
    assert_eq!(r.active_count(PathId(1)), 1);
    let frames = retires(&mut r);
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0].ty(), FrameType::PATH_RETIRE_CONNECTION_ID);
    assert_eq!(
        (frames[0].path_id, frames[0].sequence.into_inner()),
        (Some(PathId(1)), 1)
    );
}

#[test]
fn new_cid_for_a_path_above_our_max_is_protocol_violation() {
    // draft-ietf-quic-multipath-21 §2: a path ID above the advertised maximum is a PROTOCOL_VIOLATION.
    let mut r = store(2, true);
    let paths = path_ids(Side::Client, Some(2), Some(9));
    let e = r.handle_new_cid(&new_cid(Some(3), 0, 0, &[1; 8], 1), &paths);
    assert_err(e, PV, FrameType::PATH_NEW_CONNECTION_ID);
}

#[test]
fn path_new_cid_without_multipath_is_protocol_violation() {
    let mut r = store(2, false);
    let paths = path_ids(Side::Client, Some(2), None);
    let e = r.handle_new_cid(&new_cid(Some(0), 1, 0, &[1; 8], 1), &paths);
    assert_err(e, PV, FrameType::PATH_NEW_CONNECTION_ID);
}

#[test]
fn new_cid_for_an_abandoned_path_is_ignored() {
    // draft-ietf-quic-multipath-21 §2: frames for a path the receiver no longer processes are ignored.
    let mut r = store(2, true);
    let mut paths = path_ids(Side::Client, Some(2), Some(2));
    r.handle_new_cid(&new_cid(Some(1), 0, 0, &[1; 8], 1), &paths)
        .unwrap();
    paths.abandon(PathId(1));
    r.abandon(PathId(1));
    assert!(!r.has_cids(PathId(1)));
    r.handle_new_cid(&new_cid(Some(1), 1, 0, &[2; 8], 1), &paths)
        .unwrap();
    assert!(!r.has_cids(PathId(1)));
    assert_eq!(r.next_retire(), None, "abandoning retires implicitly");
}

#[test]
fn plain_new_connection_id_is_accepted_for_path0_under_multipath() {
    // draft-ietf-quic-multipath-21 §2: endpoints MUST accept NEW_CONNECTION_ID (path 0) after negotiation.
    let mut r = store(4, true);
    let paths = path_ids(Side::Client, Some(2), Some(2));
    r.handle_new_cid(&new_cid(None, 1, 0, &[1; 8], 1), &paths)
        .unwrap();
    r.handle_new_cid(&new_cid(Some(0), 2, 0, &[2; 8], 2), &paths)
        .unwrap();
    assert_eq!(r.active_count(PathId(0)), 3);
}

#[test]
fn too_many_pending_retirements_is_connection_id_limit_error() {
    // RFC 9000 §5.1.2: an endpoint "MAY choose to treat having connection IDs in need of retirement that exceed
    // this limit as a connection error of type CONNECTION_ID_LIMIT_ERROR". A peer that retires everything with
    // each new CID, while our RETIRE frames go unacknowledged, hits the cap (4 × limit, at least 8).
    let mut r = store(2, false);
    let paths = path_ids(Side::Client, None, None);
    let mut err = None;
    for seq in 1..100u64 {
        let id = [seq as u8; 8];
        match r.handle_new_cid(&new_cid(None, seq, seq, &id, seq as u8), &paths) {
            Ok(()) => assert!(r.retiring_len() <= 8),
            Err(e) => {
                err = Some((seq, e));
                break;
            }
        }
    }
    let (seq, e) = err.expect("the cap must trip");
    assert_eq!(e.code, LIMIT);
    assert_eq!(seq, 9);
    // Acknowledged retirements free the budget.
    let mut r = store(2, false);
    for seq in 1..100u64 {
        let id = [seq as u8; 8];
        r.handle_new_cid(&new_cid(None, seq, seq, &id, seq as u8), &paths)
            .unwrap();
        for f in retires(&mut r) {
            r.on_retire_acked(PathId(0), f.sequence.into_inner());
        }
    }
    assert_eq!(r.retiring_len(), 0);
}

#[test]
fn retire_frames_are_retransmitted_until_acknowledged() {
    let mut r = store(2, true);
    let paths = path_ids(Side::Client, Some(1), Some(1));
    r.handle_new_cid(&new_cid(Some(1), 0, 0, &[1; 8], 1), &paths)
        .unwrap();
    r.handle_new_cid(&new_cid(Some(1), 1, 1, &[2; 8], 2), &paths)
        .unwrap();
    let f = retires(&mut r);
    assert_eq!(f.len(), 1);
    assert_eq!(r.next_retire(), None);
    r.on_retire_lost(PathId(1), 0);
    assert_eq!(r.next_retire(), Some(f[0]));
    r.on_retire_sent(PathId(1), 0);
    r.on_retire_acked(PathId(1), 0);
    r.on_retire_lost(PathId(1), 0);
    assert_eq!(r.next_retire(), None);
    assert_eq!(r.retiring_len(), 0);
}

#[test]
fn rotation_retires_the_current_cid_and_switches_to_the_next() {
    let mut r = store(4, true);
    let paths = path_ids(Side::Client, Some(1), Some(1));
    assert_eq!(r.rotate(PathId(1)), None, "no CIDs at all");
    r.handle_new_cid(&new_cid(Some(1), 0, 0, &[1; 8], 1), &paths)
        .unwrap();
    assert_eq!(r.rotate(PathId(1)), None, "no spare CID");
    r.handle_new_cid(&new_cid(Some(1), 2, 0, &[3; 8], 3), &paths)
        .unwrap();
    assert_eq!(r.current(PathId(1)), Some(cid(&[1; 8])));
    assert_eq!(r.rotate(PathId(1)), Some(cid(&[3; 8])));
    assert_eq!(r.current(PathId(1)), Some(cid(&[3; 8])));
    // Sequence 1 arriving late is below the CID in use: retired at once rather than displacing it.
    r.handle_new_cid(&new_cid(Some(1), 1, 0, &[2; 8], 2), &paths)
        .unwrap();
    assert_eq!(r.current(PathId(1)), Some(cid(&[3; 8])));
    let seqs: Vec<u64> = retires(&mut r).iter().map(|f| f.sequence.into_inner()).collect();
    assert_eq!(seqs, vec![0, 1]);
}

#[test]
fn reset_tokens_are_those_of_used_cids_only() {
    // RFC 9000 §10.3.1: "An endpoint MUST NOT check for any stateless reset tokens associated with connection
    // IDs it has not used or for connection IDs that have been retired."
    let mut r = store(4, true);
    let paths = path_ids(Side::Client, Some(1), Some(1));
    assert_eq!(r.reset_tokens().count(), 0, "handshake CID has no token yet");
    r.set_initial_reset_token(ResetToken([9; 16]));
    assert_eq!(r.reset_tokens().collect::<Vec<_>>(), vec![ResetToken([9; 16])]);
    r.handle_new_cid(&new_cid(Some(1), 0, 0, &[1; 8], 1), &paths)
        .unwrap();
    r.handle_new_cid(&new_cid(Some(1), 1, 0, &[2; 8], 2), &paths)
        .unwrap();
    assert_eq!(r.reset_tokens().count(), 1, "path 1 not used yet");
    r.start_using(PathId(1));
    assert_eq!(r.reset_tokens().count(), 2);
    assert!(r.reset_tokens().any(|t| t == ResetToken([1; 16])));
    r.rotate(PathId(1));
    assert!(r.reset_tokens().any(|t| t == ResetToken([2; 16])));
    assert!(!r.reset_tokens().any(|t| t == ResetToken([1; 16])), "retired");
}

#[test]
fn preferred_address_cid_is_path0_sequence1_and_counts_against_the_limit() {
    let mut r = store(2, false);
    let paths = path_ids(Side::Client, None, None);
    r.insert_preferred_address(cid(&[5; 8]), ResetToken([5; 16]));
    assert_eq!(r.active_count(PathId(0)), 2);
    let e = r.handle_new_cid(&new_cid(None, 2, 0, &[6; 8], 6), &paths);
    assert_err(e, LIMIT, FrameType::NEW_CONNECTION_ID);
}

#[test]
fn cids_blocked_reports_the_next_expected_sequence() {
    let mut r = store(4, true);
    let paths = path_ids(Side::Client, Some(2), Some(2));
    assert_eq!(r.cids_blocked(PathId(2)).next_sequence.into_inner(), 0);
    r.handle_new_cid(&new_cid(Some(2), 0, 0, &[1; 8], 1), &paths)
        .unwrap();
    r.handle_new_cid(&new_cid(Some(2), 1, 1, &[2; 8], 2), &paths)
        .unwrap();
    let f = r.cids_blocked(PathId(2));
    assert_eq!((f.path_id, f.next_sequence.into_inner()), (PathId(2), 2));
}
