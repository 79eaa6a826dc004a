//! Side A's issuer wired to side B's store through the frame codec (encode → decode), over three paths:
//! issuance, rotation by either side, retirement with replacement, and path abandonment with MAX_PATH_ID.

use super::{TestRng, cid, key, path_ids, round_trip};
use crate::cc::PathId;
use crate::proto::cid::{LocalCids, PathIds, RemoteCids};
use crate::proto::frame::{Frame, decode_frames};
use crate::proto::transport_params::Side;

/// A (client) issues connection IDs; B (server) stores them and retires them.
struct Pair {
    a_local: LocalCids,
    a_paths: PathIds,
    b_remote: RemoteCids,
    b_paths: PathIds,
    rng: TestRng,
}

impl Pair {
    fn new(limit: u64) -> Self {
        let scid_a = cid(&[0xa0; 8]);
        let mut a_local = LocalCids::new(8, key(), scid_a, true).unwrap();
        a_local.set_peer_params(limit, true);
        let mut b_remote = RemoteCids::new(scid_a, limit);
        b_remote.set_multipath(true);
        Pair {
            a_local,
            a_paths: path_ids(Side::Client, Some(2), Some(2)),
            b_remote,
            b_paths: path_ids(Side::Server, Some(2), Some(2)),
            rng: TestRng(42),
        }
    }

    fn replenish(&mut self) -> usize {
        let rng = &mut self.rng;
        self.a_local.replenish(&self.a_paths, &mut |b| rng.fill(b))
    }

    /// Carries every pending (PATH_)NEW_CONNECTION_ID from A to B.
    fn deliver_new(&mut self) -> usize {
        let mut n = 0;
        while let Some(issued) = self.a_local.next_pending() {
            let bytes = round_trip(&Frame::NewConnectionId(issued.frame()));
            self.a_local.on_sent(issued.path_id, issued.sequence);
            for frame in decode_frames(&bytes) {
                let Frame::NewConnectionId(f) = frame.unwrap() else {
                    panic!("not a NEW_CONNECTION_ID frame");
                };
                assert_eq!(f.path_id, Some(issued.path_id), "PATH_ variant for every path");
                self.b_remote.handle_new_cid(&f, &self.b_paths).unwrap();
            }
            n += 1;
        }
        n
    }

    /// Carries every queued RETIRE from B to A, in packets sent to B's current CID of path 0.
    fn deliver_retire(&mut self) -> usize {
        let mut n = 0;
        while let Some(r) = self.b_remote.next_retire() {
            let path = r.path_id.unwrap_or(PathId(0));
            let seq = r.sequence.into_inner();
            self.b_remote.on_retire_sent(path, seq);
            let bytes = round_trip(&Frame::RetireConnectionId(r));
            let dcid = self.b_remote.current(PathId(0)).unwrap();
            for frame in decode_frames(&bytes) {
                let Frame::RetireConnectionId(f) = frame.unwrap() else {
                    panic!("not a RETIRE_CONNECTION_ID frame");
                };
                let rng = &mut self.rng;
                self.a_local
                    .handle_retire(&f, &dcid, &self.a_paths, &mut |b| rng.fill(b))
                    .unwrap();
            }
            self.b_remote.on_retire_acked(path, seq);
            n += 1;
        }
        n
    }

    fn settle(&mut self) {
        while self.deliver_new() + self.deliver_retire() > 0 {}
    }

    /// B's current CID of every path routes, at A, to that path; both sides agree on the counts.
    fn check(&self, paths: &[u32]) {
        for &p in paths {
            let p = PathId(p);
            let current = self.b_remote.current(p).unwrap();
            assert_eq!(self.a_local.lookup(&current).map(|i| i.path_id), Some(p));
            assert_eq!(
                self.b_remote.active_count(p),
                self.a_local.available_count(p),
                "{p}"
            );
        }
    }
}

#[test]
fn three_paths_issue_rotate_retire_over_the_codec() {
    let mut pair = Pair::new(3);
    // Path 0 (in use) gets the peer's limit of 3 (it has the handshake CID: 2 more); the unused path IDs 1 and
    // 2 get the default share of 1 each.
    assert_eq!(pair.replenish(), 2 + 1 + 1);
    pair.settle();
    pair.check(&[0, 1, 2]);
    // Paths now use path IDs 1 and 2: each is topped up to 3 (2 more each).
    pair.a_local.mark_in_use(PathId(1));
    pair.a_local.mark_in_use(PathId(2));
    assert_eq!(pair.replenish(), 2 + 2);
    pair.settle();
    pair.check(&[0, 1, 2]);
    assert!(pair.b_remote.has_cids(PathId(1)) && pair.b_remote.has_cids(PathId(2)));

    // A forces rotation of path 1: B retires the old CIDs and moves on; A's old CIDs stop routing.
    let old: Vec<_> = pair.a_local.active(PathId(1)).map(|(_, c)| c).collect();
    let rng = &mut pair.rng;
    assert!(pair.a_local.rotate(PathId(1), &mut |b| rng.fill(b)));
    pair.settle();
    pair.check(&[0, 1, 2]);
    for c in &old {
        assert_eq!(pair.a_local.lookup(c), None);
    }
    let rng = &mut pair.rng;
    assert!(
        pair.a_local.rotate(PathId(1), &mut |b| rng.fill(b)),
        "previous rotation complete"
    );

    // B rotates on its own on path 2: A replaces the retired CID.
    pair.settle();
    let before = pair.b_remote.current(PathId(2)).unwrap();
    pair.b_remote.start_using(PathId(2));
    let after = pair.b_remote.rotate(PathId(2)).unwrap();
    assert_ne!(before, after);
    pair.settle();
    pair.check(&[0, 1, 2]);
    assert_eq!(pair.b_remote.current(PathId(2)), Some(after));
    assert_eq!(pair.a_local.lookup(&before), None);
}

#[test]
fn abandoned_path_is_replaced_by_a_fresh_path_id_through_max_path_id() {
    let mut pair = Pair::new(2);
    pair.replenish();
    pair.settle();
    // Both abandon path 1 (PATH_ABANDON exchange not modelled here).
    for p in [&mut pair.a_paths, &mut pair.b_paths] {
        p.abandon(PathId(1));
    }
    pair.a_local.abandon(PathId(1));
    pair.b_remote.abandon(PathId(1));
    // Each side raises its maximum and tells the other with MAX_PATH_ID.
    let a_max = pair.a_paths.poll_max_path_id().unwrap();
    let b_max = pair.b_paths.poll_max_path_id().unwrap();
    for (max, to) in [(a_max, &mut pair.b_paths), (b_max, &mut pair.a_paths)] {
        let bytes = round_trip(&Frame::MaxPathId(max));
        let Some(Ok(Frame::MaxPathId(v))) = decode_frames(&bytes).next() else {
            panic!("not MAX_PATH_ID");
        };
        to.handle_max_path_id(v).unwrap();
    }
    assert_eq!(
        pair.replenish(),
        1,
        "path 3 only, one connection ID while no path uses it"
    );
    pair.settle();
    pair.check(&[0, 2, 3]);
    assert!(!pair.b_remote.has_cids(PathId(1)));
    pair.a_local.forget_path(PathId(1));
    assert_eq!(pair.a_local.active_count(PathId(1)), 0);
}
