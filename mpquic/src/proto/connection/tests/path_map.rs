//! [`PathMap`] against the map it replaced: random sequences of insertions (new IDs and replacements),
//! removals, lookups and ordered walks give the same answers as a `BTreeMap` keyed by path ID.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use proptest::prelude::*;

use crate::cc::PathId;
use crate::proto::ack_tracker::AckConfig;
use crate::proto::connection::path_map::PathMap;
use crate::proto::connection::paths::Path;
use crate::proto::packet::ConnectionId;
use crate::proto::recovery::{PathRecovery, RecoveryConfig};

/// A path `id` whose peer connection ID carries `tag`, so that a replaced path can be told apart.
fn path(id: u32, tag: u8) -> Path {
    let addr: SocketAddr = "192.0.2.1:4433".parse().unwrap();
    Path::new(
        PathId(id),
        addr,
        ConnectionId::new(&[tag; 8]).unwrap(),
        PathRecovery::new(PathId(id), RecoveryConfig::default()),
        AckConfig::default(),
        false,
        false,
        1200,
    )
}

fn tag(p: &Path) -> u8 {
    p.remote_cid.as_ref().first().copied().unwrap()
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u32, u8),
    Remove(u32),
    Get(u32),
    After(Option<u32>),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u32..12, any::<u8>()).prop_map(|(id, t)| Op::Insert(id, t)),
        (0u32..12).prop_map(Op::Remove),
        (0u32..12).prop_map(Op::Get),
        proptest::option::of(0u32..12).prop_map(Op::After),
    ]
}

proptest! {
    #[test]
    fn answers_as_a_btree_map_keyed_by_path_id(ops in proptest::collection::vec(op(), 1..60)) {
        let mut map = PathMap::default();
        let mut reference: BTreeMap<PathId, u8> = BTreeMap::new();
        for op in ops {
            match op {
                Op::Insert(id, t) => {
                    let old = map.insert(path(id, t)).map(|p| tag(&p));
                    prop_assert_eq!(old, reference.insert(PathId(id), t));
                }
                Op::Remove(id) => {
                    let old = map.remove(&PathId(id)).map(|p| tag(&p));
                    prop_assert_eq!(old, reference.remove(&PathId(id)));
                }
                Op::Get(id) => {
                    prop_assert_eq!(map.get(&PathId(id)).map(tag), reference.get(&PathId(id)).copied());
                    prop_assert_eq!(map.contains_key(&PathId(id)), reference.contains_key(&PathId(id)));
                    if let Some(p) = map.get_mut(&PathId(id)) {
                        prop_assert_eq!(p.id, PathId(id));
                    }
                }
                Op::After(after) => {
                    use std::ops::Bound::{Excluded, Unbounded};
                    let got: Vec<_> = map.after(after.map(PathId)).map(|p| (p.id, tag(p))).collect();
                    let want: Vec<_> = reference
                        .range((after.map(PathId).map_or(Unbounded, Excluded), Unbounded))
                        .map(|(k, v)| (*k, *v))
                        .collect();
                    prop_assert_eq!(got, want);
                }
            }
            // The walks are in path-ID order and each path sits under its own ID.
            let walked: Vec<_> = map.values().map(|p| (p.id, tag(p))).collect();
            let want: Vec<_> = reference.iter().map(|(k, v)| (*k, *v)).collect();
            prop_assert_eq!(&walked, &want);
            prop_assert_eq!(map.keys().copied().collect::<Vec<_>>(), reference.keys().copied().collect::<Vec<_>>());
            prop_assert_eq!(map.len(), reference.len());
            prop_assert_eq!(map.values_mut().count(), reference.len());
        }
    }
}
