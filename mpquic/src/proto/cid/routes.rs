//! [`RouteTable`]: the endpoint's map from the Destination Connection ID of a received datagram to the
//! connection it belongs to, with a small cache of the last hits in front of the hash map.
//!
//! Every datagram of an established connection carries one of the connection IDs we issued, and the
//! datagrams of a connection carry few different ones: one per path (draft-ietf-quic-multipath-21 gives
//! every path its own connection IDs, so a connection that sends over two paths at once alternates between
//! two of them), and a new one only on migration or when we retire one. The cache answers those with a
//! comparison of connection IDs instead of a keyed SipHash of the ID and a probe of the table, which was
//! about 350 instructions per datagram. It holds [`CACHE_SLOTS`] entries, replaced in turn, so a connection
//! with up to that many active paths (or that many connections sending in turn) is answered from it.
//!
//! Hash flooding: the map keeps the standard library's randomly keyed SipHash, because some of its keys are
//! chosen by peers (a client chooses the Destination Connection ID of its first Initial, and the server routes
//! it until the handshake ends), so an unkeyed or weakly keyed hash would let a peer fill one bucket chain.
//! The cache is consulted by plain equality, so it adds no collision behaviour of its own: a lookup costs at
//! most [`CACHE_SLOTS`] comparisons more than the map's. Every entry equals the map's entry for its ID:
//! inserting or removing an ID drops that ID's cache entry, so the cache never answers with a route the map
//! no longer holds or has since changed.

use std::collections::HashMap;

use crate::proto::packet::ConnectionId;

/// Entries of the cache in front of the map: enough for a connection sending over four paths at once.
pub const CACHE_SLOTS: usize = 4;

/// Connection IDs routed to values of type `H` (the endpoint's connection handles), with the last hits cached.
#[derive(Debug)]
pub struct RouteTable<H> {
    map: HashMap<ConnectionId, H>,
    /// Connection IDs found by [`RouteTable::get`] and their values, each equal to the map's entry for it.
    cache: [Option<(ConnectionId, H)>; CACHE_SLOTS],
    /// The slot the next miss fills (slots are replaced in turn).
    next: usize,
}

impl<H> Default for RouteTable<H> {
    fn default() -> Self {
        RouteTable {
            map: HashMap::new(),
            cache: [const { None }; CACHE_SLOTS],
            next: 0,
        }
    }
}

impl<H: Copy> RouteTable<H> {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value routed for `cid`; remembers a hit, so that the next lookups of the same ID skip the hash.
    pub fn get(&mut self, cid: &ConnectionId) -> Option<H> {
        for (c, h) in self.cache.iter().flatten() {
            if c == cid {
                return Some(*h);
            }
        }
        let h = *self.map.get(cid)?;
        if let Some(slot) = self.cache.get_mut(self.next) {
            *slot = Some((*cid, h));
        }
        self.next = (self.next + 1) % CACHE_SLOTS;
        Some(h)
    }

    /// Drops the cache entry of `cid`, if it has one.
    fn forget(&mut self, cid: &ConnectionId) {
        for slot in &mut self.cache {
            if slot.as_ref().is_some_and(|(c, _)| c == cid) {
                *slot = None;
            }
        }
    }

    /// Whether `cid` is routed (does not touch the cache).
    pub fn contains_key(&self, cid: &ConnectionId) -> bool {
        self.map.contains_key(cid)
    }

    /// Routes `cid` to `h`, replacing an earlier route of the same ID.
    pub fn insert(&mut self, cid: ConnectionId, h: H) {
        self.forget(&cid);
        self.map.insert(cid, h);
    }

    /// Removes the route of `cid`, returning its value.
    pub fn remove(&mut self, cid: &ConnectionId) -> Option<H> {
        self.forget(cid);
        self.map.remove(cid)
    }

    /// Number of routed connection IDs.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no connection ID is routed.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use proptest::prelude::*;

    fn cid(b: u8) -> ConnectionId {
        ConnectionId::new(&[b; 8]).unwrap()
    }

    /// The value the cache holds for `c`, if it holds one.
    fn cached(t: &RouteTable<usize>, c: &ConnectionId) -> Option<usize> {
        t.cache.iter().flatten().find(|(k, _)| k == c).map(|(_, h)| *h)
    }

    #[test]
    fn lookups_agree_with_the_map_through_inserts_and_removals() {
        let mut t: RouteTable<usize> = RouteTable::new();
        assert_eq!(t.get(&cid(1)), None);
        t.insert(cid(1), 10);
        t.insert(cid(2), 20);
        // First lookup fills the cache, the second is answered by it: both 10.
        assert_eq!(t.get(&cid(1)), Some(10));
        assert_eq!(cached(&t, &cid(1)), Some(10));
        assert_eq!(t.get(&cid(1)), Some(10));
        // A different ID takes the next slot; the first stays cached (two paths sending in turn).
        assert_eq!(t.get(&cid(2)), Some(20));
        assert_eq!(cached(&t, &cid(2)), Some(20));
        assert_eq!(cached(&t, &cid(1)), Some(10));
        // Re-routing a cached ID must not leave the old value in the cache, nor drop the others.
        t.insert(cid(2), 21);
        assert_eq!(cached(&t, &cid(2)), None);
        assert_eq!(cached(&t, &cid(1)), Some(10));
        assert_eq!(t.get(&cid(2)), Some(21));
        // Removing a cached ID must make it unknown at once.
        assert_eq!(t.remove(&cid(2)), Some(21));
        assert_eq!(cached(&t, &cid(2)), None);
        assert_eq!(t.get(&cid(2)), None);
        assert_eq!(cached(&t, &cid(2)), None, "a miss fills nothing");
        assert_eq!(t.len(), 1);
        assert!(t.contains_key(&cid(1)));
        assert!(!t.contains_key(&cid(2)));
    }

    #[test]
    fn slots_are_replaced_in_turn() {
        let mut t: RouteTable<usize> = RouteTable::new();
        for b in 0..=u8::try_from(CACHE_SLOTS).unwrap() {
            t.insert(cid(b), usize::from(b));
        }
        // Fill every slot, then one more ID: it replaces the oldest, the others stay.
        for b in 0..u8::try_from(CACHE_SLOTS).unwrap() {
            assert_eq!(t.get(&cid(b)), Some(usize::from(b)));
        }
        let extra = u8::try_from(CACHE_SLOTS).unwrap();
        assert_eq!(t.get(&cid(extra)), Some(usize::from(extra)));
        assert_eq!(cached(&t, &cid(0)), None);
        for b in 1..=extra {
            assert_eq!(cached(&t, &cid(b)), Some(usize::from(b)));
        }
    }

    #[test]
    fn ids_differing_only_in_length_are_different_routes() {
        // A cached 8-byte ID of zeros must not answer for the 4-byte ID of zeros (or the empty ID).
        let mut t: RouteTable<usize> = RouteTable::new();
        t.insert(ConnectionId::new(&[0; 8]).unwrap(), 1);
        assert_eq!(t.get(&ConnectionId::new(&[0; 8]).unwrap()), Some(1));
        assert_eq!(t.get(&ConnectionId::new(&[0; 4]).unwrap()), None);
        assert_eq!(t.get(&ConnectionId::EMPTY), None);
        assert!(!t.is_empty());
    }

    /// One step of a random workload: route, unroute or look up one of a few IDs.
    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8, usize),
        Remove(u8),
        Get(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        // Eight IDs for four slots, so lookups both hit and miss the cache and evict entries.
        prop_oneof![
            (0u8..8, 0usize..4).prop_map(|(c, h)| Op::Insert(c, h)),
            (0u8..8).prop_map(Op::Remove),
            (0u8..8).prop_map(Op::Get),
            (0u8..8).prop_map(Op::Get),
        ]
    }

    proptest! {
        /// Whatever the sequence of routes, removals and lookups, every answer is the plain map's.
        #[test]
        fn answers_are_the_maps(ops in proptest::collection::vec(op(), 0..200)) {
            let mut t: RouteTable<usize> = RouteTable::new();
            let mut reference: std::collections::HashMap<ConnectionId, usize> = Default::default();
            for o in ops {
                match o {
                    Op::Insert(c, h) => {
                        t.insert(cid(c), h);
                        reference.insert(cid(c), h);
                    }
                    Op::Remove(c) => prop_assert_eq!(t.remove(&cid(c)), reference.remove(&cid(c))),
                    Op::Get(c) => prop_assert_eq!(t.get(&cid(c)), reference.get(&cid(c)).copied()),
                }
                prop_assert_eq!(t.len(), reference.len());
            }
        }
    }
}
