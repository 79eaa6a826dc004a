//! Property tests: random interleavings of issuance, rotation, loss, reordering and retirement between an honest
//! pair never fail and keep both sides within their limits; arbitrary frames from a hostile peer never panic and
//! never push state past the limits.

use proptest::prelude::*;

use super::{TestRng, cid, key, path_ids, vi};
use crate::cc::PathId;
use crate::proto::cid::{LocalCids, PathIds, RemoteCids};
use crate::proto::frame::{FrameType, NewConnectionId, PathCidsBlocked, RetireConnectionId};
use crate::proto::transport_params::Side;

const PATHS: u32 = 3;

#[derive(Debug, Clone)]
enum Op {
    Replenish,
    RotateLocal(u32),
    RotateRemote(u32),
    /// Deliver the n-th in-flight NEW frame (reordering), or lose it.
    DeliverNew(usize, bool),
    /// Deliver the n-th in-flight RETIRE frame, or lose it.
    DeliverRetire(usize, bool),
    SendNew,
    SendRetire,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::Replenish),
        (0..PATHS).prop_map(Op::RotateLocal),
        (0..PATHS).prop_map(Op::RotateRemote),
        (0..8usize, any::<bool>()).prop_map(|(i, l)| Op::DeliverNew(i, l)),
        (0..8usize, any::<bool>()).prop_map(|(i, l)| Op::DeliverRetire(i, l)),
        Just(Op::SendNew),
        Just(Op::SendRetire),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn honest_pair_with_loss_and_reordering_never_fails(limit in 2u64..5, ops in prop::collection::vec(op(), 0..200)) {
        let mut rng = TestRng(limit);
        let scid = cid(&[0xa0; 8]);
        let mut local = LocalCids::new(8, key(), scid, true).unwrap();
        local.set_peer_params(limit, true);
        let mut remote = RemoteCids::new(scid, limit);
        remote.set_multipath(true);
        let a_paths = path_ids(Side::Client, Some(PATHS - 1), Some(PATHS - 1));
        let b_paths = path_ids(Side::Server, Some(PATHS - 1), Some(PATHS - 1));
        let mut new_in_flight: Vec<crate::proto::cid::IssuedCid> = Vec::new();
        let mut retire_in_flight: Vec<RetireConnectionId> = Vec::new();
        for op in ops {
            match op {
                Op::Replenish => { local.replenish(&a_paths, &mut |b| rng.fill(b)); }
                Op::RotateLocal(p) => { local.rotate(PathId(p), &mut |b| rng.fill(b)); }
                Op::RotateRemote(p) => { remote.rotate(PathId(p)); }
                Op::SendNew => {
                    if let Some(f) = local.next_pending() {
                        local.on_sent(f.path_id, f.sequence);
                        new_in_flight.push(f);
                    }
                }
                Op::SendRetire => {
                    if let Some(f) = remote.next_retire() {
                        remote.on_retire_sent(f.path_id.unwrap_or(PathId(0)), f.sequence.into_inner());
                        retire_in_flight.push(f);
                    }
                }
                Op::DeliverNew(i, lost) => {
                    if new_in_flight.is_empty() { continue; }
                    let f = new_in_flight.remove(i % new_in_flight.len());
                    if lost {
                        local.on_lost(f.path_id, f.sequence);
                    } else {
                        remote.handle_new_cid(&f.frame(), &b_paths).unwrap();
                    }
                }
                Op::DeliverRetire(i, lost) => {
                    if retire_in_flight.is_empty() { continue; }
                    let f = retire_in_flight.remove(i % retire_in_flight.len());
                    let path = f.path_id.unwrap_or(PathId(0));
                    if lost {
                        remote.on_retire_lost(path, f.sequence.into_inner());
                    } else {
                        let dcid = remote.current(PathId(0)).unwrap();
                        local.handle_retire(&f, &dcid, &a_paths, &mut |b| rng.fill(b)).unwrap();
                        remote.on_retire_acked(path, f.sequence.into_inner());
                    }
                }
            }
            for p in 0..PATHS {
                let p = PathId(p);
                prop_assert!(local.available_count(p) as u64 <= limit);
                // Rotation waits for the previous one: at most one generation awaits retirement.
                prop_assert!(local.active_count(p) as u64 <= 2 * limit);
                prop_assert!(remote.active_count(p) as u64 <= limit);
                // Everything B holds is still routable at A.
                if let Some(c) = remote.current(p) {
                    prop_assert_eq!(local.lookup(&c).map(|i| i.path_id), Some(p));
                }
            }
            prop_assert!(remote.retiring_len() as u64 <= 4 * limit.max(2) * u64::from(PATHS));
        }
    }

    #[test]
    fn hostile_frames_never_panic_nor_exceed_limits(
        limit in 2u64..5,
        multipath in any::<bool>(),
        frames in prop::collection::vec(
            (0u8..5, 0u32..6, 0u64..40, 0u64..40, prop::collection::vec(any::<u8>(), 1..21), any::<u8>()),
            0..150,
        ),
    ) {
        let mut rng = TestRng(limit);
        let scid = cid(&[0xa0; 8]);
        let mut local = LocalCids::new(8, key(), scid, multipath).unwrap();
        local.set_peer_params(limit, multipath);
        let mut remote = RemoteCids::new(cid(&[0xb0; 8]), limit);
        remote.set_multipath(multipath);
        let mut paths: PathIds = if multipath {
            path_ids(Side::Server, Some(3), Some(3))
        } else {
            path_ids(Side::Server, None, None)
        };
        local.replenish(&paths, &mut |b| rng.fill(b));
        for (kind, path, seq, rpt, id, token) in frames {
            let path_id = if multipath || path % 2 == 1 { Some(PathId(path)) } else { None };
            let result = match kind {
                0 => {
                    let f = NewConnectionId {
                        path_id,
                        sequence: vi(seq.max(rpt)),
                        retire_prior_to: vi(rpt.min(seq)),
                        id: &id,
                        reset_token: [token; 16],
                    };
                    remote.handle_new_cid(&f, &paths)
                }
                1 => {
                    let f = RetireConnectionId { path_id, sequence: vi(seq) };
                    local.handle_retire(&f, &scid, &paths, &mut |b| rng.fill(b))
                }
                2 => paths.handle_max_path_id(PathId(path)),
                3 => {
                    let f = PathCidsBlocked { path_id: PathId(path), next_sequence: vi(seq) };
                    paths.check_path_cids_blocked(&f, local.next_sequence(PathId(path))).map(|_| ())
                }
                _ => {
                    if paths.check_frame_path(path_id, FrameType::PATH_ABANDON).is_ok() {
                        paths.abandon(PathId(path));
                        local.abandon(PathId(path));
                        remote.abandon(PathId(path));
                    }
                    Ok(())
                }
            };
            if let Err(e) = result {
                prop_assert!(e.frame_type.is_some());
                break;
            }
            local.replenish(&paths, &mut |b| rng.fill(b));
            for p in 0..6 {
                let p = PathId(p);
                prop_assert!(local.available_count(p) as u64 <= limit);
                prop_assert!(local.active_count(p) as u64 <= 2 * limit);
                prop_assert!(remote.active_count(p) as u64 <= limit);
            }
            prop_assert!(remote.retiring_len() as u64 <= 8u64.max(4 * limit) * 6);
        }
    }
}
