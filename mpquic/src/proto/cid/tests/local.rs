//! The issuer of our connection IDs ([`LocalCids`]).

use super::{TestRng, assert_err, cid, issuer, key, lazy_issuer, path_ids, retire};
use crate::cc::PathId;
use crate::proto::TransportErrorCode;
use crate::proto::cid::{CidConfigError, CidInfo, LocalCids, RoutingUpdate};
use crate::proto::frame::FrameType;
use crate::proto::packet::connection_id::ConnectionId;
use crate::proto::transport_params::Side;

const PV: TransportErrorCode = TransportErrorCode::PROTOCOL_VIOLATION;

/// Sends every pending frame (marking it sent) and returns them.
fn drain(l: &mut LocalCids) -> Vec<crate::proto::cid::IssuedCid> {
    let mut out = Vec::new();
    while let Some(f) = l.next_pending() {
        l.on_sent(f.path_id, f.sequence);
        out.push(f);
    }
    out
}

#[test]
fn handshake_scid_is_path0_sequence0_and_preferred_address_is_sequence1() {
    let mut rng = TestRng(1);
    let mut l = LocalCids::new(8, key(), cid(&[0xaa; 8]), true).unwrap();
    assert_eq!(
        l.lookup(&cid(&[0xaa; 8])),
        Some(CidInfo {
            path_id: PathId(0),
            sequence: 0
        })
    );
    let (pa, token) = l.issue_preferred_address(&mut |b| rng.fill(b)).unwrap();
    assert_eq!(
        l.lookup(&pa),
        Some(CidInfo {
            path_id: PathId(0),
            sequence: 1
        })
    );
    assert_eq!(token, key().token(&pa));
    assert_eq!(l.reset_token(PathId(0), 1), Some(token));
    // Only once.
    assert!(l.issue_preferred_address(&mut |b| rng.fill(b)).is_none());
    // Neither is announced in a frame.
    assert_eq!(l.pending_len(), 0);
}

#[test]
fn cid_length_above_20_bytes_is_rejected() {
    let long = LocalCids::new(21, key(), ConnectionId::EMPTY, false);
    assert_eq!(long.unwrap_err(), CidConfigError::TooLong);
}

#[test]
fn one_cid_length_for_every_cid_issued() {
    // RFC 9000 §10.3.2: the same connection ID length for all connections.
    let r = LocalCids::new(8, key(), cid(&[1; 4]), false);
    assert_eq!(r.unwrap_err(), CidConfigError::LengthMismatch);
}

#[test]
fn multipath_requires_non_zero_length_cids() {
    // draft-ietf-quic-multipath-21 §2: non-zero-length Source and Destination Connection IDs.
    let r = LocalCids::new(0, key(), ConnectionId::EMPTY, true);
    assert_eq!(r.unwrap_err(), CidConfigError::ZeroLengthWithMultipath);
}

#[test]
fn zero_length_cids_issue_nothing() {
    let mut rng = TestRng(1);
    let mut l = LocalCids::new(0, key(), ConnectionId::EMPTY, false).unwrap();
    l.set_peer_params(8, false);
    let paths = path_ids(Side::Server, None, None);
    assert_eq!(l.replenish(&paths, &mut |b| rng.fill(b)), 0);
    assert!(l.issue_preferred_address(&mut |b| rng.fill(b)).is_none());
    assert!(!l.rotate(PathId(0), &mut |b| rng.fill(b)));
}

#[test]
fn nothing_issued_before_the_peer_limit_is_known() {
    let mut rng = TestRng(1);
    let mut l = LocalCids::new(8, key(), cid(&[0xaa; 8]), false).unwrap();
    let paths = path_ids(Side::Server, None, None);
    assert_eq!(l.replenish(&paths, &mut |b| rng.fill(b)), 0);
}

#[test]
fn sequence_numbers_increase_by_one_per_path() {
    // RFC 9000 §5.1.1: "The sequence number on each newly issued connection ID MUST increase by 1", in each
    // path's own space (draft-ietf-quic-multipath-21 §2).
    let mut rng = TestRng(2);
    let mut l = issuer(3, true);
    let paths = path_ids(Side::Server, Some(2), Some(2));
    assert_eq!(l.replenish(&paths, &mut |b| rng.fill(b)), 2 + 3 + 3);
    for p in 0..3 {
        let seqs: Vec<u64> = l.active(PathId(p)).map(|(s, _)| s).collect();
        assert_eq!(seqs, vec![0, 1, 2], "path {p}");
    }
    // Every CID is distinct and routes to its path.
    let frames = drain(&mut l);
    assert_eq!(frames.len(), 8);
    for f in &frames {
        assert_eq!(
            l.lookup(&f.cid),
            Some(CidInfo {
                path_id: f.path_id,
                sequence: f.sequence
            })
        );
        assert_eq!(f.reset_token, key().token(&f.cid));
        assert_eq!(f.cid.len(), 8);
    }
}

#[test]
fn never_provide_more_cids_than_the_peer_limit_per_path() {
    // RFC 9000 §5.1.1: "An endpoint MUST NOT provide more connection IDs than the peer's limit." Per path
    // under multipath (draft-ietf-quic-multipath-21 §2).
    let mut rng = TestRng(3);
    let mut l = issuer(2, true);
    l.set_cids_per_path(16);
    let paths = path_ids(Side::Server, Some(3), Some(5));
    l.replenish(&paths, &mut |b| rng.fill(b));
    for p in 0..=3 {
        assert_eq!(l.available_count(PathId(p)), 2, "path {p}");
    }
    // Replenishing again issues nothing.
    assert_eq!(l.replenish(&paths, &mut |b| rng.fill(b)), 0);
}

#[test]
fn no_cids_issued_above_the_peer_max_path_id() {
    // draft-ietf-quic-multipath-21 §3: never issue CIDs above the peer's MAX_PATH_ID / initial_max_path_id.
    let mut rng = TestRng(4);
    let mut l = issuer(2, true);
    let mut paths = path_ids(Side::Server, Some(5), Some(1));
    l.replenish(&paths, &mut |b| rng.fill(b));
    assert!(l.has_cids(PathId(1)));
    assert!(!l.has_cids(PathId(2)));
    // MAX_PATH_ID from the peer makes more path IDs usable.
    paths.handle_max_path_id(PathId(3)).unwrap();
    l.replenish(&paths, &mut |b| rng.fill(b));
    assert!(l.has_cids(PathId(3)));
    assert!(!l.has_cids(PathId(4)));
}

#[test]
fn single_path_sends_new_connection_id_for_path0_only() {
    let mut rng = TestRng(5);
    let mut l = issuer(4, false);
    let paths = path_ids(Side::Client, None, Some(3));
    l.replenish(&paths, &mut |b| rng.fill(b));
    let frames = drain(&mut l);
    assert_eq!(frames.len(), 3);
    for f in &frames {
        assert_eq!(f.path_id, PathId(0));
        assert_eq!(f.frame().ty(), FrameType::NEW_CONNECTION_ID);
        assert_eq!(f.frame().path_id, None);
    }
}

#[test]
fn multipath_sends_path_new_connection_id_for_path0_too() {
    // draft-ietf-quic-multipath-21 §2: endpoints SHOULD use the PATH_ variants for path 0 too.
    let mut rng = TestRng(6);
    let mut l = issuer(2, true);
    let paths = path_ids(Side::Client, Some(1), Some(1));
    l.replenish(&paths, &mut |b| rng.fill(b));
    let frames = drain(&mut l);
    assert!(frames.iter().any(|f| f.path_id == PathId(0)));
    for f in &frames {
        assert_eq!(f.frame().ty(), FrameType::PATH_NEW_CONNECTION_ID);
        assert_eq!(f.frame().path_id, Some(f.path_id));
    }
}

#[test]
fn retire_of_a_sequence_number_never_issued_is_protocol_violation() {
    // RFC 9000 §19.16: "Receipt of a RETIRE_CONNECTION_ID frame containing a sequence number greater than any
    // previously sent to the peer MUST be treated as a connection error of type PROTOCOL_VIOLATION."
    let mut rng = TestRng(7);
    let mut l = issuer(2, false);
    let paths = path_ids(Side::Server, None, None);
    l.replenish(&paths, &mut |b| rng.fill(b));
    let dcid = cid(&[0xaa; 8]);
    let r = l.handle_retire(&retire(None, 2), &dcid, &paths, &mut |b| rng.fill(b));
    assert_err(r, PV, FrameType::RETIRE_CONNECTION_ID);
    // Same on a path we never issued for, in multipath.
    let mut l = issuer(2, true);
    let paths = path_ids(Side::Server, Some(3), Some(1));
    l.replenish(&paths, &mut |b| rng.fill(b));
    let r = l.handle_retire(&retire(Some(3), 0), &dcid, &paths, &mut |b| rng.fill(b));
    assert_err(r, PV, FrameType::PATH_RETIRE_CONNECTION_ID);
}

#[test]
fn retire_of_the_cid_the_frame_was_sent_to_is_protocol_violation() {
    // RFC 9000 §19.16: "The sequence number specified in a RETIRE_CONNECTION_ID frame MUST NOT refer to the
    // Destination Connection ID field of the packet in which the frame is contained. The peer MAY treat this
    // as a connection error of type PROTOCOL_VIOLATION."
    let mut rng = TestRng(8);
    let mut l = issuer(2, true);
    let paths = path_ids(Side::Server, Some(1), Some(1));
    l.replenish(&paths, &mut |b| rng.fill(b));
    let (seq, dcid) = l.active(PathId(1)).next().unwrap();
    let r = l.handle_retire(&retire(Some(1), seq), &dcid, &paths, &mut |b| rng.fill(b));
    assert_err(r, PV, FrameType::PATH_RETIRE_CONNECTION_ID);
    // The same CID on another path's packet is fine.
    let other = cid(&[0xaa; 8]);
    l.handle_retire(&retire(Some(1), seq), &other, &paths, &mut |b| rng.fill(b))
        .unwrap();
}

#[test]
fn retire_issues_a_replacement_and_routing_updates() {
    let mut rng = TestRng(9);
    let mut l = issuer(2, true);
    let paths = path_ids(Side::Server, Some(1), Some(1));
    l.replenish(&paths, &mut |b| rng.fill(b));
    drain(&mut l);
    while l.poll_routing_update().is_some() {}
    let (seq, old) = l.active(PathId(1)).next().unwrap();
    let dcid = cid(&[0xaa; 8]);
    l.handle_retire(&retire(Some(1), seq), &dcid, &paths, &mut |b| rng.fill(b))
        .unwrap();
    assert_eq!(l.lookup(&old), None);
    assert_eq!(l.available_count(PathId(1)), 2);
    let new = l.next_pending().unwrap();
    assert_eq!((new.path_id, new.sequence), (PathId(1), 2));
    assert_eq!(l.poll_routing_update(), Some(RoutingUpdate::Removed { cid: old }));
    assert_eq!(
        l.poll_routing_update(),
        Some(RoutingUpdate::Added {
            cid: new.cid,
            info: CidInfo {
                path_id: PathId(1),
                sequence: 2
            }
        })
    );
    // A retransmitted retire changes nothing.
    l.handle_retire(&retire(Some(1), seq), &dcid, &paths, &mut |b| rng.fill(b))
        .unwrap();
    assert_eq!(l.available_count(PathId(1)), 2);
    assert_eq!(l.pending_len(), 1);
}

#[test]
fn retire_for_a_path_above_our_max_is_protocol_violation() {
    // draft-ietf-quic-multipath-21 §2: a path ID above the advertised maximum is a PROTOCOL_VIOLATION.
    let mut rng = TestRng(10);
    let mut l = issuer(2, true);
    let paths = path_ids(Side::Server, Some(1), Some(4));
    let r = l.handle_retire(&retire(Some(2), 0), &cid(&[0xaa; 8]), &paths, &mut |b| {
        rng.fill(b)
    });
    assert_err(r, PV, FrameType::PATH_RETIRE_CONNECTION_ID);
}

#[test]
fn path_retire_without_multipath_is_protocol_violation() {
    let mut rng = TestRng(11);
    let mut l = issuer(2, false);
    let paths = path_ids(Side::Server, None, None);
    let r = l.handle_retire(&retire(Some(0), 0), &cid(&[1; 8]), &paths, &mut |b| rng.fill(b));
    assert_err(r, PV, FrameType::PATH_RETIRE_CONNECTION_ID);
}

#[test]
fn retire_for_an_abandoned_path_is_ignored_and_not_replaced() {
    let mut rng = TestRng(12);
    let mut l = issuer(2, true);
    let mut paths = path_ids(Side::Server, Some(2), Some(2));
    l.replenish(&paths, &mut |b| rng.fill(b));
    drain(&mut l);
    paths.abandon(PathId(1));
    l.abandon(PathId(1));
    // Even a never-issued sequence number: the path is gone, the frame is dropped.
    l.handle_retire(&retire(Some(1), 99), &cid(&[0xaa; 8]), &paths, &mut |b| {
        rng.fill(b)
    })
    .unwrap();
    assert_eq!(l.pending_len(), 0);
    assert_eq!(
        l.replenish(&paths, &mut |b| rng.fill(b)),
        0,
        "path 3 waits for the peer's MAX_PATH_ID"
    );
    paths.handle_max_path_id(PathId(3)).unwrap();
    assert_eq!(
        l.replenish(&paths, &mut |b| rng.fill(b)),
        2,
        "only the new path ID 3"
    );
    assert!(l.has_cids(PathId(3)));
    assert!(!l.has_cids(PathId(1)));
    // Its CIDs stay routable until forgotten.
    let (_, c) = l.active(PathId(1)).next().unwrap();
    assert_eq!(l.lookup(&c).map(|i| i.path_id), Some(PathId(1)));
    l.forget_path(PathId(1));
    assert_eq!(l.lookup(&c), None);
}

#[test]
fn rotate_sets_retire_prior_to_and_may_exceed_the_limit_temporarily() {
    // RFC 9000 §5.1.1: connection IDs may temporarily exceed the peer's limit if the frame also requires the
    // retirement of the excess through Retire Prior To.
    let mut rng = TestRng(13);
    let mut l = issuer(2, true);
    let paths = path_ids(Side::Server, Some(1), Some(1));
    l.replenish(&paths, &mut |b| rng.fill(b));
    drain(&mut l);
    assert!(l.rotate(PathId(1), &mut |b| rng.fill(b)));
    let frames = drain(&mut l);
    assert_eq!(frames.len(), 2);
    for f in &frames {
        assert_eq!(f.retire_prior_to, 2);
        assert!(f.sequence >= f.retire_prior_to);
    }
    assert_eq!(l.active_count(PathId(1)), 4);
    assert_eq!(l.available_count(PathId(1)), 2);
    // A second rotation waits for the peer to retire the old ones.
    assert!(!l.rotate(PathId(1), &mut |b| rng.fill(b)));
    let dcid = cid(&[0xaa; 8]);
    for seq in 0..2 {
        l.handle_retire(&retire(Some(1), seq), &dcid, &paths, &mut |b| rng.fill(b))
            .unwrap();
    }
    assert_eq!(l.pending_len(), 0, "retiring old CIDs needs no replacement");
    assert!(l.rotate(PathId(1), &mut |b| rng.fill(b)));
}

#[test]
fn rotate_retires_unsent_cids_on_the_spot() {
    let mut rng = TestRng(14);
    let mut l = issuer(3, false);
    let paths = path_ids(Side::Server, None, None);
    l.replenish(&paths, &mut |b| rng.fill(b));
    assert_eq!(l.pending_len(), 2);
    assert!(l.rotate(PathId(0), &mut |b| rng.fill(b)));
    // Sequences 1 and 2 were never sent: gone; the handshake CID (0) waits for the peer.
    let seqs: Vec<u64> = l.active(PathId(0)).map(|(s, _)| s).collect();
    assert_eq!(seqs, vec![0, 3, 4, 5]);
    assert!(drain(&mut l).iter().all(|f| f.retire_prior_to == 3));
}

#[test]
fn lost_frame_is_requeued_only_while_its_cid_is_active() {
    let mut rng = TestRng(15);
    let mut l = issuer(3, false);
    let paths = path_ids(Side::Server, None, None);
    l.replenish(&paths, &mut |b| rng.fill(b));
    let frames = drain(&mut l);
    l.on_lost(PathId(0), frames[0].sequence);
    l.on_lost(PathId(0), frames[0].sequence);
    assert_eq!(l.pending_len(), 1, "idempotent");
    assert_eq!(l.next_pending(), Some(frames[0]));
    l.on_sent(PathId(0), frames[0].sequence);
    // Retired by the peer: a later loss report does not resurrect it.
    l.handle_retire(
        &retire(None, frames[0].sequence),
        &cid(&[0xaa; 8]),
        &paths,
        &mut |b| rng.fill(b),
    )
    .unwrap();
    let replacement = drain(&mut l);
    assert_eq!(replacement.len(), 1);
    l.on_lost(PathId(0), frames[0].sequence);
    assert_eq!(l.pending_len(), 0);
    // Never issued: ignored.
    l.on_lost(PathId(7), 0);
    assert_eq!(l.pending_len(), 0);
}

#[test]
fn lookup_routes_a_packet_to_the_path_of_its_dcid() {
    let mut rng = TestRng(16);
    let mut l = issuer(2, true);
    let paths = path_ids(Side::Server, Some(2), Some(2));
    l.replenish(&paths, &mut |b| rng.fill(b));
    for p in 0..3 {
        for (seq, c) in l.active(PathId(p)).collect::<Vec<_>>() {
            assert_eq!(
                l.lookup(&c),
                Some(CidInfo {
                    path_id: PathId(p),
                    sequence: seq
                })
            );
        }
    }
    assert_eq!(l.lookup(&cid(&[0x55; 8])), None);
}

#[test]
fn preissued_path_ids_are_capped_whatever_the_maxima() {
    let mut rng = TestRng(17);
    let mut l = issuer(2, true);
    let paths = path_ids(Side::Server, Some(u32::MAX), Some(u32::MAX));
    let n = l.replenish(&paths, &mut |b| rng.fill(b));
    assert_eq!(n, 1 + 2 * (crate::proto::cid::local::MAX_PREISSUED_PATHS - 1));
    assert!(!l.has_cids(PathId(crate::proto::cid::local::MAX_PREISSUED_PATHS as u32)));
}

#[test]
fn unused_path_ids_get_one_cid_until_a_path_uses_them() {
    // draft-ietf-quic-multipath-21 §3: at least one connection ID for every unused path ID up to the smaller
    // of both maxima. Path 0 is in use from the start: it gets min(peer limit 4, DEFAULT_CIDS_PER_PATH 4) = 4,
    // i.e. 3 besides the handshake CID; path IDs 1..=7 get DEFAULT_UNUSED_PATH_CIDS = 1 each: 3 + 7 = 10
    // (eagerly it would be 3 + 7 × 4 = 31).
    let mut rng = TestRng(21);
    let mut l = lazy_issuer(4, true);
    let paths = path_ids(Side::Server, Some(7), Some(7));
    assert_eq!(l.replenish(&paths, &mut |b| rng.fill(b)), 3 + 7);
    assert_eq!(l.available_count(PathId(0)), 4);
    for p in 1..=7 {
        assert_eq!(l.available_count(PathId(p)), 1, "path {p}");
        assert!(l.has_cids(PathId(p)), "path {p} can be opened");
    }
    assert_eq!(drain(&mut l).len(), 10);
    // A path uses path ID 3: it is topped up to 4 (3 more, sequence numbers 1, 2, 3); the others stay at 1.
    l.mark_in_use(PathId(3));
    assert_eq!(l.replenish(&paths, &mut |b| rng.fill(b)), 3);
    let seqs: Vec<u64> = l.active(PathId(3)).map(|(s, _)| s).collect();
    assert_eq!(seqs, vec![0, 1, 2, 3]);
    assert_eq!(l.available_count(PathId(4)), 1);
    // Retiring the only CID of an unused path ID replaces it with one, not with the full number.
    let first = l.active(PathId(5)).next().unwrap().1;
    l.handle_retire(&retire(Some(5), 0), &cid(&[0xaa; 8]), &paths, &mut |b| {
        rng.fill(b)
    })
    .unwrap();
    assert_eq!(l.lookup(&first), None);
    assert_eq!(l.available_count(PathId(5)), 1);
    // A path ID without connection IDs cannot be marked (nothing to top up, no state created).
    l.mark_in_use(PathId(9));
    assert_eq!(l.active_count(PathId(9)), 0);
}

#[test]
fn unused_path_share_never_exceeds_the_per_path_target() {
    // set_unused_path_cids(6) with cids_per_path 4 and a peer limit of 8: unused path IDs get min(6, 4) = 4.
    let mut rng = TestRng(22);
    let mut l = lazy_issuer(8, true);
    l.set_unused_path_cids(6);
    let paths = path_ids(Side::Server, Some(1), Some(1));
    assert_eq!(l.replenish(&paths, &mut |b| rng.fill(b)), 3 + 4);
    // And 0 is taken as 1: draft-ietf-quic-multipath-21 §3 asks for at least one.
    let mut l = lazy_issuer(8, true);
    l.set_unused_path_cids(0);
    assert_eq!(l.replenish(&paths, &mut |b| rng.fill(b)), 3 + 1);
}
