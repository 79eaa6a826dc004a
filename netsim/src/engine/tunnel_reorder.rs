//! The tunnel's framing and its receiver's reorder buffer.
//!
//! **Framing.** Each inner UDP datagram travels as the payload of one DATAGRAM frame (RFC 9221) of the outer
//! connection, behind a [`HEADER_LEN`]-byte header: the inner flow's index (16 bits) and the tunnel
//! sequence number of this direction (64 bits, from 0; no wrap in any run), both big-endian. It plays the
//! part of GRE's key and sequence number fields (RFC 2890 §2) in MPT-GRE's GRE-in-UDP (RFC 8086) packets.
//!
//! **Reorder buffer** (one per direction, at the receiving tunnel end, shared by every inner flow as GRE's
//! sequence numbers are per tunnel). Packet `next` is released as soon as it arrives, with every held packet
//! that follows it without a gap. A packet beyond a gap is held until:
//! - the gap fills: everything up to the next gap is released;
//! - the hold ends: the hold runs from the arrival of the lowest-numbered held packet; at its end the gap is
//!   given up (its sequence numbers count as skipped) and release resumes from that packet;
//! - the window overflows: holding one more than `window` packets gives up the lowest gap at once.
//!
//! A packet numbered below `next` (its gap was given up, or a duplicate) is *late* and released at once: the
//! transport above copes with reordering and a late packet is worth more than a drop. With a window of 0
//! there is no buffer: every packet is released as it arrives. At most `window` packets are held.
//!
//! The buffer is generic over what it holds: the simulated tunnel holds [`Released`] (inner flow, datagram),
//! the real tunnel (`mpquic-tunnel` in `mpquic-tools`) the same buffer with its IP packets, so the two
//! behave alike by construction.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Bytes of the tunnel header before each inner datagram.
pub const HEADER_LEN: usize = 10;

/// Writes the header for inner flow `inner` and sequence number `seq` followed by `payload`.
pub fn encode(inner: u16, seq: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    encode_into(inner, seq, payload, &mut out);
    out
}

/// [`encode`] appended to `out` (the simulated tunnel writes into one buffer shared by many datagrams).
pub fn encode_into(inner: u16, seq: u64, payload: &[u8], out: &mut impl bytes::BufMut) {
    out.put_u16(inner);
    out.put_u64(seq);
    out.put_slice(payload);
}

/// Splits a tunnel datagram into (inner flow, sequence number, inner datagram); `None` if it is shorter
/// than the header.
pub fn decode(data: &[u8]) -> Option<(u16, u64, &[u8])> {
    let (inner, rest) = data.split_first_chunk::<2>()?;
    let (seq, payload) = rest.split_first_chunk::<8>()?;
    Some((u16::from_be_bytes(*inner), u64::from_be_bytes(*seq), payload))
}

/// What a reorder buffer did, counted since it was made.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReorderStats {
    /// Packets released in sequence (including those released after a gap was given up).
    pub in_order: u64,
    /// Packets that arrived ahead of a gap and were held.
    pub held: u64,
    /// Packets numbered below the next expected one, released at once.
    pub late: u64,
    /// Sequence numbers given up because the hold ended.
    pub skipped_timeout: u64,
    /// Sequence numbers given up because the window overflowed.
    pub skipped_overflow: u64,
    /// The most packets held at once.
    pub max_held: u64,
}

/// A packet released by the buffer: the inner flow's index and its datagram.
pub type Released = (u16, Vec<u8>);

/// The reorder buffer of one direction (module documentation), holding packets of type `T`.
#[derive(Debug)]
pub struct ReorderBuffer<T = Released> {
    window: usize,
    hold: Duration,
    /// The next sequence number to release.
    next: u64,
    /// Held packets by sequence number, with their arrival time; never more than `window`.
    held: BTreeMap<u64, (T, Instant)>,
    stats: ReorderStats,
}

impl<T> ReorderBuffer<T> {
    /// A buffer holding at most `window` packets (0: none) for `hold`.
    pub fn new(window: usize, hold: Duration) -> ReorderBuffer<T> {
        ReorderBuffer {
            window,
            hold,
            next: 0,
            held: BTreeMap::new(),
            stats: ReorderStats::default(),
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> ReorderStats {
        self.stats
    }

    /// Packets held now.
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// Whether no packet is held.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// When the hold of the lowest-numbered held packet ends (`None`: nothing held).
    pub fn deadline(&self) -> Option<Instant> {
        self.held.first_key_value().map(|(_, (_, at))| *at + self.hold)
    }

    /// Takes packet `seq`, arrived at `now`; appends what can be released now to `out`, in order.
    pub fn push(&mut self, seq: u64, packet: T, now: Instant, out: &mut Vec<T>) {
        if self.window == 0 {
            self.stats.in_order = self.stats.in_order.saturating_add(1);
            out.push(packet);
            return;
        }
        if seq < self.next {
            self.stats.late = self.stats.late.saturating_add(1);
            out.push(packet);
            return;
        }
        if seq == self.next {
            self.stats.in_order = self.stats.in_order.saturating_add(1);
            out.push(packet);
            self.next = seq.saturating_add(1);
            self.drain(out);
        } else if let std::collections::btree_map::Entry::Vacant(e) = self.held.entry(seq) {
            e.insert((packet, now));
            self.stats.held = self.stats.held.saturating_add(1);
            if self.held.len() > self.window {
                self.give_up_first_gap(false, out);
            }
            self.stats.max_held = self.stats.max_held.max(self.held.len() as u64);
        }
        // A duplicate of a held packet is dropped: the held copy is released once.
        self.expire(now, out);
    }

    /// Gives up every gap whose hold has ended at `now`; appends the released packets to `out`.
    pub fn expire(&mut self, now: Instant, out: &mut Vec<T>) {
        // Asked in every pass of the tunnel: with nothing held there is no deadline to compute.
        if self.held.is_empty() {
            return;
        }
        while self.deadline().is_some_and(|d| d <= now) {
            self.give_up_first_gap(true, out);
        }
    }

    /// Skips to the lowest held packet and releases from there.
    fn give_up_first_gap(&mut self, timeout: bool, out: &mut Vec<T>) {
        let Some(&first) = self.held.keys().next() else {
            return;
        };
        let skipped = first.saturating_sub(self.next);
        if timeout {
            self.stats.skipped_timeout = self.stats.skipped_timeout.saturating_add(skipped);
        } else {
            self.stats.skipped_overflow = self.stats.skipped_overflow.saturating_add(skipped);
        }
        self.next = first;
        self.drain(out);
    }

    /// Releases held packets from `next` on while they follow without a gap.
    fn drain(&mut self, out: &mut Vec<T>) {
        while let Some(entry) = self.held.first_entry() {
            if *entry.key() != self.next {
                break;
            }
            let (packet, _) = entry.remove();
            out.push(packet);
            self.stats.in_order = self.stats.in_order.saturating_add(1);
            self.next = self.next.saturating_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )]

    use super::*;

    fn pkt(seq: u64) -> Released {
        (0, vec![seq as u8])
    }

    fn seqs(out: &[Released]) -> Vec<u8> {
        out.iter().map(|(_, d)| d[0]).collect()
    }

    #[test]
    fn header_round_trips_and_short_datagrams_are_refused() {
        let d = encode(0x0102, 0x0304_0506_0708_090a, b"xyz");
        assert_eq!(d, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, b'x', b'y', b'z']);
        assert_eq!(decode(&d), Some((0x0102, 0x0304_0506_0708_090a, &b"xyz"[..])));
        assert_eq!(decode(&d[..10]), Some((0x0102, 0x0304_0506_0708_090a, &b""[..])));
        assert_eq!(decode(&d[..9]), None);
        assert_eq!(decode(&[]), None);
    }

    #[test]
    fn a_gap_holds_later_packets_until_it_fills() {
        let t0 = crate::engine::clock::Clock::new().instant(crate::time::SimTime::ZERO);
        let mut r = ReorderBuffer::new(1600, Duration::from_millis(300));
        let mut out = Vec::new();
        // Arrival order 0, 2, 3, 1, 4: 0 goes at once, 2 and 3 wait for 1, then 1 2 3 together, then 4.
        r.push(0, pkt(0), t0, &mut out);
        assert_eq!(seqs(&out), [0]);
        r.push(2, pkt(2), t0, &mut out);
        r.push(3, pkt(3), t0, &mut out);
        assert_eq!(seqs(&out), [0]);
        assert_eq!(r.len(), 2);
        assert_eq!(r.deadline(), Some(t0 + Duration::from_millis(300)));
        r.push(1, pkt(1), t0 + Duration::from_millis(10), &mut out);
        assert_eq!(seqs(&out), [0, 1, 2, 3]);
        r.push(4, pkt(4), t0, &mut out);
        assert_eq!(seqs(&out), [0, 1, 2, 3, 4]);
        let s = r.stats();
        assert_eq!((s.in_order, s.held, s.late, s.max_held), (5, 2, 0, 2));
        assert!(r.is_empty());
    }

    #[test]
    fn the_hold_gives_a_gap_up_and_a_late_packet_passes_at_once() {
        let t0 = crate::engine::clock::Clock::new().instant(crate::time::SimTime::ZERO);
        let hold = Duration::from_millis(300);
        let mut r = ReorderBuffer::new(1600, hold);
        let mut out = Vec::new();
        r.push(2, pkt(2), t0, &mut out);
        r.push(4, pkt(4), t0 + Duration::from_millis(100), &mut out);
        // 1 ns before the hold of packet 2 ends nothing moves.
        r.expire(t0 + hold - Duration::from_nanos(1), &mut out);
        assert!(out.is_empty());
        // At t0 + 300 ms gap {0, 1} is given up: 2 goes; 4 waits on 3, its own hold ends at t0 + 400 ms.
        r.expire(t0 + hold, &mut out);
        assert_eq!(seqs(&out), [2]);
        assert_eq!(r.deadline(), Some(t0 + Duration::from_millis(400)));
        r.expire(t0 + Duration::from_millis(400), &mut out);
        assert_eq!(seqs(&out), [2, 4]);
        // 0 and 3 arrive late: passed on at once.
        r.push(0, pkt(0), t0 + Duration::from_millis(500), &mut out);
        r.push(3, pkt(3), t0 + Duration::from_millis(500), &mut out);
        assert_eq!(seqs(&out), [2, 4, 0, 3]);
        let s = r.stats();
        assert_eq!((s.skipped_timeout, s.late, s.in_order), (3, 2, 2));
    }

    #[test]
    fn overflow_gives_up_the_lowest_gap_at_once() {
        let t0 = crate::engine::clock::Clock::new().instant(crate::time::SimTime::ZERO);
        let mut r = ReorderBuffer::new(3, Duration::from_secs(1));
        let mut out = Vec::new();
        // 0 is missing; 1, 2, 3 fill the window of 3; 5 is the fourth held: gap {0} is given up, 1 2 3 go,
        // 5 stays (4 missing).
        for s in [1, 2, 3, 5] {
            r.push(s, pkt(s), t0, &mut out);
        }
        assert_eq!(seqs(&out), [1, 2, 3]);
        assert_eq!(r.len(), 1);
        let s = r.stats();
        assert_eq!((s.skipped_overflow, s.max_held), (1, 3));
    }

    #[test]
    fn window_zero_releases_in_arrival_order_and_duplicates_of_held_packets_go_once() {
        let t0 = crate::engine::clock::Clock::new().instant(crate::time::SimTime::ZERO);
        let mut r = ReorderBuffer::new(0, Duration::from_secs(1));
        let mut out = Vec::new();
        for s in [3, 1, 2] {
            r.push(s, pkt(s), t0, &mut out);
        }
        assert_eq!(seqs(&out), [3, 1, 2]);
        let mut r = ReorderBuffer::new(10, Duration::from_secs(1));
        let mut out = Vec::new();
        for s in [2, 2, 1, 0] {
            r.push(s, pkt(s), t0, &mut out);
        }
        assert_eq!(seqs(&out), [0, 1, 2]);
    }
}
