//! [`RouteTable`]: the endpoint's map from the Destination Connection ID of a received datagram to the
//! connection it belongs to, with a one-entry cache of the last hit in front of the hash map.
//!
//! Every datagram of an established connection carries one of the connection IDs we issued, and a run of
//! datagrams usually carries the same one (a peer changes connection ID only on migration, on a new path or
//! when we retire it). The cache answers those with one comparison of two connection IDs instead of a keyed
//! SipHash of the ID and a probe of the table, which was about 350 instructions per datagram.
//!
//! Hash flooding: the map keeps the standard library's randomly keyed SipHash, because some of its keys are
//! chosen by peers (a client chooses the Destination Connection ID of its first Initial, and the server routes
//! it until the handshake ends), so an unkeyed or weakly keyed hash would let a peer fill one bucket chain.
//! The cache holds one entry and is consulted by plain equality, so it adds no collision behaviour of its
//! own: a lookup costs at most one comparison more than the map's. It is cleared by every insertion and
//! removal, so it never answers with a route the map no longer holds or has since changed.

use std::collections::HashMap;

use crate::proto::packet::ConnectionId;

/// Connection IDs routed to values of type `H` (the endpoint's connection handles), with a cached last hit.
#[derive(Debug)]
pub struct RouteTable<H> {
    map: HashMap<ConnectionId, H>,
    /// The last connection ID found by [`RouteTable::get`] and its value, equal to the map's entry for it.
    last: Option<(ConnectionId, H)>,
}

impl<H> Default for RouteTable<H> {
    fn default() -> Self {
        RouteTable {
            map: HashMap::new(),
            last: None,
        }
    }
}

impl<H: Copy> RouteTable<H> {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value routed for `cid`; remembers a hit, so that the next lookup of the same ID skips the hash.
    pub fn get(&mut self, cid: &ConnectionId) -> Option<H> {
        if let Some((c, h)) = &self.last {
            if c == cid {
                return Some(*h);
            }
        }
        let h = *self.map.get(cid)?;
        self.last = Some((*cid, h));
        Some(h)
    }

    /// Whether `cid` is routed (does not touch the cache).
    pub fn contains_key(&self, cid: &ConnectionId) -> bool {
        self.map.contains_key(cid)
    }

    /// Routes `cid` to `h`, replacing an earlier route of the same ID.
    pub fn insert(&mut self, cid: ConnectionId, h: H) {
        self.last = None;
        self.map.insert(cid, h);
    }

    /// Removes the route of `cid`, returning its value.
    pub fn remove(&mut self, cid: &ConnectionId) -> Option<H> {
        self.last = None;
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

    fn cid(b: u8) -> ConnectionId {
        ConnectionId::new(&[b; 8]).unwrap()
    }

    #[test]
    fn lookups_agree_with_the_map_through_inserts_and_removals() {
        let mut t: RouteTable<usize> = RouteTable::new();
        assert_eq!(t.get(&cid(1)), None);
        t.insert(cid(1), 10);
        t.insert(cid(2), 20);
        // First lookup fills the cache, the second is answered by it: both 10.
        assert_eq!(t.get(&cid(1)), Some(10));
        assert_eq!(t.get(&cid(1)), Some(10));
        assert_eq!(t.last, Some((cid(1), 10)));
        // A different ID misses the cache, then replaces it.
        assert_eq!(t.get(&cid(2)), Some(20));
        assert_eq!(t.last, Some((cid(2), 20)));
        // Re-routing the cached ID must not leave the old value in the cache.
        t.insert(cid(2), 21);
        assert_eq!(t.last, None);
        assert_eq!(t.get(&cid(2)), Some(21));
        // Removing the cached ID must make it unknown at once.
        assert_eq!(t.remove(&cid(2)), Some(21));
        assert_eq!(t.get(&cid(2)), None);
        assert_eq!(t.last, None, "a miss fills nothing");
        assert_eq!(t.len(), 1);
        assert!(t.contains_key(&cid(1)));
        assert!(!t.contains_key(&cid(2)));
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
}
