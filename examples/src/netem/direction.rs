//! One direction of one path: the link model plus the datagrams it holds until their arrival time.
//!
//! [`DirectionState::offer`] runs a received datagram through the [`Link`] and, unless dropped, files it
//! (and its duplicate, if any) under its arrival time; [`DirectionState::take_due`] hands out, in arrival
//! order, every datagram whose time has come. Nothing here touches a socket or a clock: time is a
//! [`SimTime`] given by the caller, so this is tested without either.
//!
//! Invariants: `held_bytes` is the sum of the payload sizes in `held`, and never exceeds [`MAX_HELD_BYTES`]
//! (a datagram that would exceed it is dropped as a queue drop; the link model's queue limit normally keeps
//! far below it, this cap only bounds memory against extreme configurations). Going down purges `held`:
//! an outage destroys what is queued or in flight, as in the simulator.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use mpquic_netsim::link::{Delivery, DropReason, Link};
use mpquic_netsim::time::SimTime;

use super::stats::DirectionCounters;

/// The most payload bytes one direction holds at once (64 MiB).
pub const MAX_HELD_BYTES: usize = 64 << 20;

/// A datagram waiting for its arrival time.
#[derive(Debug)]
struct Held {
    at: SimTime,
    /// Order of filing, so that equal times leave in the order the link gave them.
    seq: u64,
    corrupted: bool,
    duplicate: bool,
    payload: Vec<u8>,
}

impl PartialEq for Held {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Held {}

impl PartialOrd for Held {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Held {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// The state of one direction (see the module documentation).
#[derive(Debug)]
pub struct DirectionState {
    link: Link,
    /// Bytes added to each payload to get its wire size.
    overhead: usize,
    held: BinaryHeap<Reverse<Held>>,
    held_bytes: usize,
    seq: u64,
    counters: DirectionCounters,
}

impl DirectionState {
    /// A direction running `link`, charging `overhead` bytes of headers per datagram.
    pub fn new(link: Link, overhead: usize) -> DirectionState {
        DirectionState {
            link,
            overhead,
            held: BinaryHeap::new(),
            held_bytes: 0,
            seq: 0,
            counters: DirectionCounters::default(),
        }
    }

    /// Runs a datagram received at `now` through the link. Returns the earliest arrival time now held if it
    /// changed (the sender must wake up earlier), `None` otherwise.
    pub fn offer(&mut self, now: SimTime, mut payload: Vec<u8>) -> Option<SimTime> {
        let len = payload.len();
        self.counters.received.add(len);
        if self.held_bytes.saturating_add(len) > MAX_HELD_BYTES && self.link.is_up() {
            self.counters.dropped_queue.add(len);
            return None;
        }
        let before = self.next_due();
        let arrival = match self
            .link
            .enqueue(now, len.saturating_add(self.overhead), &mut payload)
        {
            Delivery::Deliver(arrival) => arrival,
            Delivery::Dropped { reason } => {
                match reason {
                    DropReason::QueueFull => self.counters.dropped_queue.add(len),
                    DropReason::Loss => self.counters.dropped_loss.add(len),
                    DropReason::Down => self.counters.dropped_down.add(len),
                    // A link `mtu` (none unless configured): counted with the losses.
                    DropReason::TooLarge => self.counters.dropped_loss.add(len),
                }
                return None;
            }
        };
        if let Some(at) = arrival.duplicate_at {
            if self.held_bytes.saturating_add(2 * len) <= MAX_HELD_BYTES {
                let copy = payload.clone();
                self.hold(at, arrival.corrupted, true, copy);
            }
        }
        self.hold(arrival.at, arrival.corrupted, false, payload);
        let after = self.next_due();
        if after == before { None } else { after }
    }

    fn hold(&mut self, at: SimTime, corrupted: bool, duplicate: bool, payload: Vec<u8>) {
        self.seq = self.seq.wrapping_add(1);
        self.held_bytes = self.held_bytes.saturating_add(payload.len());
        self.held.push(Reverse(Held {
            at,
            seq: self.seq,
            corrupted,
            duplicate,
            payload,
        }));
    }

    /// Moves every datagram due at `now` into `out`, in arrival order, and counts them as forwarded (a
    /// failed send is then reported through [`DirectionState::send_failed`]). Returns the next arrival time
    /// still held.
    pub fn take_due(&mut self, now: SimTime, out: &mut Vec<Vec<u8>>) -> Option<SimTime> {
        while let Some(Reverse(first)) = self.held.peek() {
            if first.at > now {
                break;
            }
            let Some(Reverse(held)) = self.held.pop() else {
                break;
            };
            let len = held.payload.len();
            self.held_bytes = self.held_bytes.saturating_sub(len);
            if held.duplicate {
                self.counters.duplicated.add(len);
            } else {
                self.counters.forwarded.add(len);
                if held.corrupted {
                    self.counters.corrupted.add(len);
                }
            }
            out.push(held.payload);
        }
        self.next_due()
    }

    /// Counts a datagram handed out by [`DirectionState::take_due`] that could not be sent: it moves from
    /// `forwarded` to `dropped_other`.
    pub fn send_failed(&mut self, len: usize) {
        let forwarded = &mut self.counters.forwarded;
        forwarded.packets = forwarded.packets.saturating_sub(1);
        forwarded.bytes = forwarded.bytes.saturating_sub(len as u64);
        self.counters.dropped_other.add(len);
    }

    /// Counts a datagram received that has nowhere to go (no client address yet).
    pub fn undeliverable(&mut self, len: usize) {
        self.counters.received.add(len);
        self.counters.dropped_other.add(len);
    }

    /// The earliest arrival time held.
    pub fn next_due(&self) -> Option<SimTime> {
        self.held.peek().map(|Reverse(h)| h.at)
    }

    /// Brings the link up or down at `now`; going down destroys every datagram held.
    pub fn set_up(&mut self, now: SimTime, up: bool) {
        self.link.set_up(now, up);
        if !up {
            for Reverse(held) in self.held.drain() {
                if !held.duplicate {
                    self.counters.dropped_down.add(held.payload.len());
                }
            }
            self.held_bytes = 0;
        }
    }

    /// Whether the link is up.
    pub fn is_up(&self) -> bool {
        self.link.is_up()
    }

    /// The link model, to change its parameters (`set_rate`, `set_delay`, …).
    pub fn link_mut(&mut self) -> &mut Link {
        &mut self.link
    }

    /// The counters so far.
    pub fn counters(&self) -> DirectionCounters {
        self.counters
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use mpquic_netsim::link::{LinkConfig, QueueLimit};

    use super::*;

    fn state(rate_bps: u64, delay_ms: u64, queue: u64) -> DirectionState {
        let config = LinkConfig::new(rate_bps, Duration::from_millis(delay_ms))
            .with_queue(QueueLimit::Packets { packets: queue });
        DirectionState::new(Link::new(config, 1).unwrap(), 28)
    }

    #[test]
    fn held_until_arrival_in_order() {
        // 972 + 28 bytes at 8 Mbit/s: 1 ms each on the wire, plus 10 ms.
        let mut d = state(8_000_000, 10, 100);
        assert_eq!(
            d.offer(SimTime::ZERO, vec![1; 972]),
            Some(SimTime::from_millis(11))
        );
        assert_eq!(d.offer(SimTime::ZERO, vec![2; 972]), None);
        let mut out = Vec::new();
        assert_eq!(
            d.take_due(SimTime::from_millis(10), &mut out),
            Some(SimTime::from_millis(11))
        );
        assert!(out.is_empty());
        assert_eq!(d.take_due(SimTime::from_millis(12), &mut out), None);
        assert_eq!(out, vec![vec![1; 972], vec![2; 972]]);
        assert_eq!(d.counters().forwarded.packets, 2);
        assert_eq!(d.counters().forwarded.bytes, 2 * 972);
    }

    #[test]
    fn queue_overflow_is_counted() {
        let mut d = state(1_000_000, 0, 3);
        for _ in 0..10 {
            let _ = d.offer(SimTime::ZERO, vec![0; 1000]);
        }
        let c = d.counters();
        assert_eq!(c.received.packets, 10);
        assert_eq!(c.dropped_queue.packets, 7);
    }

    #[test]
    fn going_down_destroys_what_is_held() {
        let mut d = state(8_000_000, 10, 100);
        let _ = d.offer(SimTime::ZERO, vec![0; 100]);
        d.set_up(SimTime::from_millis(1), false);
        let _ = d.offer(SimTime::from_millis(2), vec![0; 100]);
        let mut out = Vec::new();
        assert_eq!(d.take_due(SimTime::from_millis(100), &mut out), None);
        assert!(out.is_empty());
        assert_eq!(d.counters().dropped_down.packets, 2);
        d.set_up(SimTime::from_millis(3), true);
        let _ = d.offer(SimTime::from_millis(3), vec![0; 100]);
        let _ = d.take_due(SimTime::from_millis(100), &mut out);
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn duplicates_and_corruption_are_counted_on_the_side() {
        use mpquic_netsim::link::Impairments;
        let config = LinkConfig::new(8_000_000, Duration::from_millis(1)).with_impairments(Impairments {
            corruption: 1.0,
            duplication: 1.0,
        });
        let mut d = DirectionState::new(Link::new(config, 1).unwrap(), 28);
        let _ = d.offer(SimTime::ZERO, vec![0; 100]);
        let mut out = Vec::new();
        let _ = d.take_due(SimTime::from_millis(10), &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0], out[1], "the copy carries the same (corrupted) bytes");
        assert_eq!(out[0].iter().map(|b| b.count_ones()).sum::<u32>(), 1);
        let c = d.counters();
        assert_eq!(
            (c.forwarded.packets, c.duplicated.packets, c.corrupted.packets),
            (1, 1, 1)
        );
    }
}
