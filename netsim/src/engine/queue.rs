//! The event queue: a min-heap of keys `(SimTime, seq)` over a slab of events, with FIFO lanes.
//!
//! Invariant: events pop in time order, and events due at the same instant pop in the order they were
//! pushed (`seq` is a counter that only grows), so a run never depends on the heap's internal tie-breaking.
//!
//! Two things keep the per-event cost low when thousands of datagrams are in flight:
//! - **Slab.** The heap holds only small keys (time, sequence number, slot); the events themselves (a
//!   datagram in flight is over a hundred bytes) stay in a slab whose free slots are reused.
//! - **Lanes.** Arrivals at the far end of one link come in the order they were sent (a FIFO serialiser and
//!   a constant delay), so [`EventQueue::push_lane`] keeps them in a per-lane FIFO of which only the front
//!   is in the heap. The heap then holds about one key per link instead of one per datagram. An event that
//!   would be due before the back of its lane (jitter that reorders, a duplicate) goes into the heap on its
//!   own, so the pop order is exactly the order of a single heap over every event.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use crate::time::SimTime;

/// `Key::lane` of an event that is in the heap on its own.
const NO_LANE: u32 = u32::MAX;

/// The key of one queued event: when, in which order, where the event is in the slab, and its lane.
#[derive(Clone, Copy, Debug)]
struct Key {
    at: SimTime,
    seq: u64,
    slot: usize,
    lane: u32,
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.seq == other.seq
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    /// Reversed, so that [`BinaryHeap`] (a max-heap) pops the earliest key first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

/// A deterministic priority queue of timed events (see the module documentation).
#[derive(Debug)]
pub struct EventQueue<T> {
    /// Events on their own, and the front of every non-empty lane.
    heap: BinaryHeap<Key>,
    /// Per lane, its events in `(at, seq)` order; the front one is also in `heap`.
    lanes: Vec<VecDeque<Key>>,
    /// The events, by slot; `None` for a free slot.
    slots: Vec<Option<T>>,
    /// Free slots, reused last-freed first.
    free: Vec<usize>,
    seq: u64,
    len: usize,
}

impl<T> Default for EventQueue<T> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            lanes: Vec::new(),
            slots: Vec::new(),
            free: Vec::new(),
            seq: 0,
            len: 0,
        }
    }
}

impl<T> EventQueue<T> {
    /// Stores `item` and returns its key (not yet queued anywhere).
    fn store(&mut self, at: SimTime, item: T) -> Key {
        let seq = self.seq;
        self.seq = self.seq.wrapping_add(1);
        self.len = self.len.saturating_add(1);
        let slot = match self.free.pop() {
            Some(slot) => {
                if let Some(s) = self.slots.get_mut(slot) {
                    *s = Some(item);
                }
                slot
            }
            None => {
                self.slots.push(Some(item));
                self.slots.len().saturating_sub(1)
            }
        };
        Key {
            at,
            seq,
            slot,
            lane: NO_LANE,
        }
    }

    /// Queues `item` at `at`.
    pub fn push(&mut self, at: SimTime, item: T) {
        let key = self.store(at, item);
        self.heap.push(key);
    }

    /// Queues `item` at `at` in lane `lane` (a link's arrivals): cheaper than [`EventQueue::push`] when a
    /// lane's events are mostly pushed in time order; the pop order is the same.
    pub fn push_lane(&mut self, at: SimTime, lane: usize, item: T) {
        let mut key = self.store(at, item);
        let Some(lane_id) = u32::try_from(lane).ok().filter(|&l| l != NO_LANE) else {
            self.heap.push(key);
            return;
        };
        if self.lanes.len() <= lane {
            self.lanes.resize_with(lane.saturating_add(1), VecDeque::new);
        }
        let Some(queue) = self.lanes.get_mut(lane) else {
            self.heap.push(key);
            return;
        };
        if queue.back().is_some_and(|back| back.at > at) {
            // Out of order for the lane: on its own.
            self.heap.push(key);
            return;
        }
        key.lane = lane_id;
        if queue.is_empty() {
            self.heap.push(key);
        }
        queue.push_back(key);
    }

    /// When the earliest event is due.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|k| k.at)
    }

    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<(SimTime, T)> {
        let mut top = self.heap.peek_mut()?;
        let key = *top;
        // The next event of the lane replaces the popped key in place: one sift-down instead of a pop
        // (sift to the bottom and back up) followed by a push. Keys are unique, so the order is the same.
        let next = if key.lane == NO_LANE {
            None
        } else {
            self.lanes.get_mut(key.lane as usize).and_then(|queue| {
                queue.pop_front();
                queue.front().copied()
            })
        };
        match next {
            Some(next) => *top = next,
            None => {
                std::collections::binary_heap::PeekMut::pop(top);
            }
        }
        let item = self.slots.get_mut(key.slot).and_then(Option::take)?;
        self.free.push(key.slot);
        self.len = self.len.saturating_sub(1);
        Some((key.at, item))
    }

    /// Number of queued events.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_order_then_push_order() {
        let mut q = EventQueue::default();
        q.push(SimTime::from_millis(5), "c");
        q.push(SimTime::from_millis(1), "a");
        q.push(SimTime::from_millis(5), "d");
        q.push(SimTime::from_millis(1), "b");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, x)| x)).collect();
        assert_eq!(order, ["a", "b", "c", "d"]);
        assert!(q.is_empty());
    }

    #[test]
    fn slots_are_reused_and_order_holds_across_reuse() {
        let mut q = EventQueue::default();
        for i in 0..4u64 {
            q.push(SimTime::from_millis(10 - i), i);
        }
        assert_eq!(q.pop(), Some((SimTime::from_millis(7), 3)));
        assert_eq!(q.pop(), Some((SimTime::from_millis(8), 2)));
        // Two freed slots are reused; ties still pop in push order.
        q.push(SimTime::from_millis(9), 10);
        q.push(SimTime::from_millis(9), 11);
        q.push(SimTime::from_millis(9), 12);
        assert_eq!(q.slots.len(), 5);
        assert_eq!(q.len(), 5);
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, x)| x)).collect();
        assert_eq!(order, [1, 10, 11, 12, 0]);
    }

    #[test]
    fn lanes_pop_in_the_same_order_as_one_heap() {
        // Pseudo-random times, lanes and kinds (in lane or not), including out-of-order pushes into a lane
        // and ties; interleaved pops. The reference is a plain heap over (at, seq).
        let mut q = EventQueue::default();
        let mut reference = std::collections::BTreeMap::new();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut now = 0u64;
        let mut seq = 0u64;
        let mut popped = Vec::new();
        let mut expected = Vec::new();
        for _ in 0..5000 {
            let r = next();
            if r % 3 == 0 {
                if let Some((at, item)) = q.pop() {
                    popped.push((at, item));
                    let (&(t, s), _) = reference.iter().next().unwrap();
                    reference.remove(&(t, s));
                    expected.push((SimTime::from_micros(t), s));
                    now = t;
                }
                continue;
            }
            let at = now + (r >> 8) % 50;
            let lane = ((r >> 20) % 5) as usize;
            if (r >> 30) % 4 == 0 {
                q.push(SimTime::from_micros(at), seq);
            } else {
                q.push_lane(SimTime::from_micros(at), lane, seq);
            }
            reference.insert((at, seq), ());
            seq += 1;
        }
        while let Some(e) = q.pop() {
            popped.push(e);
            let (&(t, s), _) = reference.iter().next().unwrap();
            reference.remove(&(t, s));
            expected.push((SimTime::from_micros(t), s));
        }
        assert_eq!(popped, expected);
        assert!(q.is_empty() && reference.is_empty());
    }
}
