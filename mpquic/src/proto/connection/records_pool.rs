//! Reuse of the frame-record vectors of sent packets.
//!
//! Every packet the connection builds keeps a [`Records`] vector in its path's recovery state until it is
//! acknowledged or declared lost. Allocating a fresh vector per packet and freeing it per acknowledgement cost
//! one `malloc` and one `free` per packet; instead, the vector of an acknowledged or lost packet, emptied, goes
//! into this pool and the next packet built takes it.
//!
//! # Bound
//! The pool keeps every vector it is given that has allocated and has at most
//! [`RecordsPool::MAX_CAPACITY`] records of room (a vector that grew for a packet full of small control frames
//! is freed). It needs no count of its own: every packet takes its vector from the pool and a new vector is
//! made only when the pool is empty (the vectors of packets sent without records never allocate and are not
//! kept), so the vectors that exist at any time, in the pool and in packets, are never more than the most
//! packets the connection once had in its sent-packet maps at the same time, and the pool holds at most that
//! many. That number is
//! the sender's own (its congestion windows and what it chose to send), never the peer's: an acknowledgement
//! only moves vectors from packets into the pool. A bound below it (64 vectors, until 2026-11-28) freed the
//! vectors that one acknowledgement of many packets returned beyond it, and the packets built next allocated
//! them again: in an IP tunnel at 1 Gbit/s, whose receiver acknowledges the bursts its reorder buffer
//! releases, that was one allocation per packet or two.

use super::frames_out::Records;

/// A bounded stack of empty [`Records`] vectors.
#[derive(Debug, Default)]
pub(super) struct RecordsPool {
    spare: Vec<Records>,
}

impl RecordsPool {
    /// The largest capacity (in records) of a vector kept: a packet usually carries one to four records; a
    /// vector that grew for a packet full of small control frames is freed rather than kept.
    pub(super) const MAX_CAPACITY: usize = 16;

    /// An empty vector: a kept one if there is one, else a new one (which allocates on its first push only).
    pub(super) fn take(&mut self) -> Records {
        self.spare.pop().unwrap_or_default()
    }

    /// Keeps `records`, emptied, for a later [`RecordsPool::take`] (see the module documentation for the
    /// bound); a vector that never allocated is not worth keeping.
    pub(super) fn give(&mut self, mut records: Records) {
        let cap = records.capacity();
        if cap == 0 || cap > Self::MAX_CAPACITY {
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
    }

    #[test]
    fn holds_no_more_vectors_than_were_out_at_once() {
        // A sender with 300 packets in flight, acknowledged all at once, then 300 more built: the second
        // window allocates nothing, and the pool never holds more than the 300 vectors that exist.
        let mut pool = RecordsPool::default();
        let mut in_flight: Vec<Records> = Vec::new();
        for round in 0..3 {
            for _ in 0..300 {
                let mut r = pool.take();
                assert!(
                    round == 0 || r.capacity() > 0,
                    "round {round}: a vector of the window before is reused"
                );
                r.push(FrameRecord::HandshakeDone);
                in_flight.push(r);
            }
            for r in in_flight.drain(..) {
                pool.give(r);
            }
            assert_eq!(
                pool.len(),
                300,
                "round {round}: every vector of the window comes back"
            );
        }
    }
}
