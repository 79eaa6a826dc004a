//! Reuse of the frame-record vectors of sent packets.
//!
//! Every packet the connection builds keeps a [`Records`] vector in its path's recovery state until it is
//! acknowledged or declared lost. Allocating a fresh vector per packet and freeing it per acknowledgement cost
//! one `malloc` and one `free` per packet; instead, the vector of an acknowledged packet, emptied, goes into
//! this pool and the next packet built takes it. The pool is bounded ([`RecordsPool::MAX_VECTORS`] vectors of
//! at most [`RecordsPool::MAX_CAPACITY`] records each), so it never holds more than a few tens of kilobytes
//! whatever the peer acknowledges; vectors beyond the bounds are simply freed.

use super::frames_out::Records;

/// A bounded stack of empty [`Records`] vectors.
#[derive(Debug, Default)]
pub(super) struct RecordsPool {
    spare: Vec<Records>,
}

impl RecordsPool {
    /// The most vectors kept: more than one acknowledgement usually releases before the next packets are built
    /// (an ACK frame covers a few packets; with delayed ACKs, two to ten).
    pub(super) const MAX_VECTORS: usize = 64;
    /// The largest capacity (in records) of a vector kept: a packet usually carries one to four records; a
    /// vector that grew for a packet full of small control frames is freed rather than kept.
    pub(super) const MAX_CAPACITY: usize = 16;

    /// An empty vector: a kept one if there is one, else a new one (which allocates on its first push only).
    pub(super) fn take(&mut self) -> Records {
        self.spare.pop().unwrap_or_default()
    }

    /// Keeps `records`, emptied, for a later [`RecordsPool::take`], within the bounds; a vector that never
    /// allocated is not worth keeping.
    pub(super) fn give(&mut self, mut records: Records) {
        let cap = records.capacity();
        if cap == 0 || cap > Self::MAX_CAPACITY || self.spare.len() >= Self::MAX_VECTORS {
            return;
        }
        records.clear();
        self.spare.push(records);
    }

    /// The number of vectors kept.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.spare.len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use super::super::frames_out::FrameRecord;
    use super::*;

    #[test]
    fn reuses_an_emptied_vector() {
        let mut pool = RecordsPool::default();
        let mut r = pool.take();
        assert_eq!(
            r.capacity(),
            0,
            "an empty pool hands out a vector that has not allocated"
        );
        r.push(FrameRecord::HandshakeDone);
        r.push(FrameRecord::NewToken);
        let cap = r.capacity();
        pool.give(r);
        assert_eq!(pool.len(), 1);
        let again = pool.take();
        assert!(again.is_empty(), "a kept vector comes back empty");
        assert_eq!(again.capacity(), cap, "the same allocation comes back");
        assert_eq!(pool.len(), 0);
    }

    #[test]
    fn bounds_what_it_keeps() {
        let mut pool = RecordsPool::default();
        pool.give(Records::new());
        assert_eq!(pool.len(), 0, "a vector without an allocation is not kept");
        pool.give(Records::with_capacity(RecordsPool::MAX_CAPACITY + 1));
        assert_eq!(pool.len(), 0, "an oversized vector is freed");
        for _ in 0..RecordsPool::MAX_VECTORS + 5 {
            pool.give(Records::with_capacity(2));
        }
        assert_eq!(
            pool.len(),
            RecordsPool::MAX_VECTORS,
            "at most MAX_VECTORS are kept"
        );
    }
}
