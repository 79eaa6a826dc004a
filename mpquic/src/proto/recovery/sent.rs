//! The sent-packet map of one packet-number space: every packet sent and not yet forgotten, by packet number.
//!
//! # Representation
//! A `VecDeque` of slots indexed by `pn - base`. Packet numbers of one space are allocated by this map in
//! increasing order (the connection reads [`SentPackets::next_pn`] to build the header, then records the packet
//! with [`SentPackets::push`]), so they are dense: recording is a `push_back`, finding a packet from an ACK
//! range is an index computation, and acknowledged packets leave from the front (`pop_front`) because ACKs
//! mostly advance in order. A `BTreeMap` would cost a node allocation and `O(log n)` per packet for nothing this
//! access pattern needs.
//!
//! A slot is `Outstanding` (sent, waiting), `Acked`, `Lost` (a tombstone: metadata kept for a while to
//! recognise a late ACK as a spurious loss) or `Skipped` (a packet number the connection deliberately did not
//! use, RFC 9000 §21.4; an ACK for it proves the peer acknowledges packets it never received).
//!
//! # Bounds
//! The deque spans from the oldest slot still needed to the next packet number. Finished slots (acked, skipped,
//! expired tombstones) are removed from the front by [`SentPackets::trim`]; every outstanding packet is
//! eventually acknowledged or declared lost, so the span is bounded by what the sender itself put in flight
//! plus the tombstone retention time. The peer controls none of it: ACK ranges are clamped to the span before
//! any work, so the work of an ACK is bounded by the span and the number of ranges.
//!
//! # Cost per ACK
//! Lost tombstones hold the front of the deque for a few PTO periods, and every slot acknowledged after them
//! stays until they go: at 1 Gbit/s that is thousands of slots. So that the work per ACK does not grow with
//! them, the map keeps three indexes beside the slots: `first_out`, below which no packet is outstanding (it
//! only moves forward, so keeping it costs amortised O(1) per packet), and the sorted packet numbers of the
//! tombstones and of the skipped slots. Loss detection and acknowledgement start at `first_out`, the few
//! tombstones or skipped numbers in an ACK range are found by binary search.
//!
//! Invariants: `outstanding`, `ack_eliciting_outstanding` and `in_flight_bytes` always equal the counts over
//! the slots, `lost` and `skipped` list exactly the numbers of the `Lost` and `Skipped` slots in increasing
//! order, and no slot below `first_out` is outstanding (checked by `debug_check` in tests).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::cc::PacketDeliveryState;

/// A sent packet that is neither acknowledged nor declared lost.
#[derive(Debug, Clone)]
pub struct SentPacket<T> {
    /// When it was sent.
    pub time_sent: Instant,
    /// Its size in bytes (the whole QUIC packet, as counted in bytes in flight).
    pub size: u16,
    /// It contains a frame other than ACK, PADDING and CONNECTION_CLOSE (RFC 9002 §2).
    pub ack_eliciting: bool,
    /// It counts in bytes in flight (ack-eliciting or padded, RFC 9002 §2).
    pub in_flight: bool,
    /// The sender was application-limited when it sent the packet (RFC 9002 §7.8).
    pub app_limited: bool,
    /// The delivery-rate snapshot taken when it was sent (in-flight packets only).
    pub delivery: Option<PacketDeliveryState>,
    /// What the connection put in it, handed back when it is acknowledged or lost.
    pub frames: T,
}

/// What is kept of a packet declared lost, to recognise a late acknowledgement (a spurious loss).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LostTombstone {
    /// When the packet was sent.
    pub time_sent: Instant,
    /// Its size in bytes.
    pub size: u16,
    /// It counted in bytes in flight.
    pub in_flight: bool,
}

#[derive(Debug)]
enum Slot<T> {
    Outstanding(SentPacket<T>),
    Lost(LostTombstone),
    Acked,
    Skipped,
}

/// What acknowledging one packet number found.
#[derive(Debug)]
pub enum AckedSlot<T> {
    /// The packet was outstanding: it is newly acknowledged.
    Newly(SentPacket<T>),
    /// The packet had been declared lost: the loss was spurious.
    Spurious(LostTombstone),
    /// Already acknowledged, or forgotten.
    Duplicate,
}

/// The sent packets of one packet-number space.
#[derive(Debug)]
pub struct SentPackets<T> {
    base: u64,
    slots: VecDeque<Slot<T>>,
    outstanding: usize,
    ack_eliciting_outstanding: usize,
    in_flight_bytes: u64,
    /// No packet numbered below this is outstanding (`base ≤ first_out ≤ next_pn`).
    first_out: u64,
    /// Packet numbers of the `Lost` slots, increasing.
    lost: VecDeque<u64>,
    /// Packet numbers of the `Skipped` slots, increasing.
    skipped: VecDeque<u64>,
}

impl<T> Default for SentPackets<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> SentPackets<T> {
    /// An empty map whose first packet number is 0.
    pub fn new() -> Self {
        SentPackets {
            base: 0,
            slots: VecDeque::new(),
            outstanding: 0,
            ack_eliciting_outstanding: 0,
            in_flight_bytes: 0,
            first_out: 0,
            lost: VecDeque::new(),
            skipped: VecDeque::new(),
        }
    }

    /// The packet number the next packet of this space will carry.
    pub fn next_pn(&self) -> u64 {
        self.base.saturating_add(self.slots.len() as u64)
    }

    /// Records `packet` under [`Self::next_pn`] and returns that number.
    pub fn push(&mut self, packet: SentPacket<T>) -> u64 {
        let pn = self.next_pn();
        self.outstanding += 1;
        if packet.ack_eliciting {
            self.ack_eliciting_outstanding += 1;
        }
        if packet.in_flight {
            self.in_flight_bytes += u64::from(packet.size);
        }
        self.slots.push_back(Slot::Outstanding(packet));
        pn
    }

    /// Leaves the next packet number unused (RFC 9000 §21.4) and returns it.
    pub fn skip(&mut self) -> u64 {
        let pn = self.next_pn();
        self.skipped.push_back(pn);
        self.slots.push_back(Slot::Skipped);
        pn
    }

    /// Packets neither acknowledged nor declared lost.
    pub fn outstanding(&self) -> usize {
        self.outstanding
    }

    /// Outstanding ack-eliciting packets.
    pub fn ack_eliciting_outstanding(&self) -> usize {
        self.ack_eliciting_outstanding
    }

    /// Bytes of outstanding in-flight packets.
    pub fn in_flight_bytes(&self) -> u64 {
        self.in_flight_bytes
    }

    /// Number of slots kept (the span from the oldest slot still needed to the next packet number).
    pub fn span(&self) -> usize {
        self.slots.len()
    }

    /// The outstanding packet `pn`, if it is one.
    pub fn get(&self, pn: u64) -> Option<&SentPacket<T>> {
        match self.slot(pn)? {
            Slot::Outstanding(p) => Some(p),
            _ => None,
        }
    }

    fn index(&self, pn: u64) -> Option<usize> {
        usize::try_from(pn.checked_sub(self.base)?).ok()
    }

    fn slot(&self, pn: u64) -> Option<&Slot<T>> {
        self.slots.get(self.index(pn)?)
    }

    /// Clamps `lo..=hi` to the packet numbers held, as slot indices.
    fn indices(&self, lo: u64, hi: u64) -> Option<(usize, usize)> {
        let lo = lo.max(self.base);
        let hi = hi.min(self.next_pn().checked_sub(1)?);
        if lo > hi {
            return None;
        }
        Some((self.index(lo)?, self.index(hi)?))
    }

    /// Whether a skipped packet number lies in `lo..=hi`.
    pub fn contains_skipped(&self, lo: u64, hi: u64) -> bool {
        first_at_least(&self.skipped, lo).is_some_and(|pn| pn <= hi)
    }

    /// The index of `first_out`.
    fn first_out_index(&self) -> usize {
        self.index(self.first_out).unwrap_or(0)
    }

    /// Moves `first_out` past the slots that are no longer outstanding. Amortised O(1): it never moves back.
    fn advance_first_out(&mut self) {
        let mut i = self.first_out_index();
        while let Some(s) = self.slots.get(i) {
            if matches!(s, Slot::Outstanding(_)) {
                break;
            }
            i += 1;
        }
        self.first_out = self.base + i as u64;
    }

    /// Whether a packet in `lo..hi` (exclusive bounds on both sides) has been acknowledged.
    pub fn any_acked_between(&self, lo: u64, hi: u64) -> bool {
        let (Some(lo), Some(hi)) = (lo.checked_add(1), hi.checked_sub(1)) else {
            return false;
        };
        let Some((a, b)) = self.indices(lo, hi) else {
            return false;
        };
        self.slots.range(a..=b).any(|s| matches!(s, Slot::Acked))
    }

    /// The outstanding packets (neither acknowledged nor declared lost), oldest first.
    pub fn outstanding_packets(&self) -> impl Iterator<Item = &SentPacket<T>> {
        self.slots
            .range(self.first_out_index()..)
            .filter_map(|s| match s {
                Slot::Outstanding(p) => Some(p),
                _ => None,
            })
    }

    /// Marks every packet of `lo..=hi` acknowledged and calls `f` with what each held, in increasing order.
    /// Numbers outside the map are ignored (the caller validated them).
    pub fn ack_range(&mut self, lo: u64, hi: u64, f: impl FnMut(u64, AckedSlot<T>)) {
        self.ack_range_from(lo, hi, &mut TombstoneCursor::default(), f);
    }

    /// [`SentPackets::ack_range`] for the ranges of one ACK frame, given largest first with one `cursor`: the
    /// tombstones at or above `lo` are then found by stepping down from where the previous range stopped
    /// (the few lost packets of the gap between the two ranges) instead of by a binary search per range.
    pub fn ack_range_from(
        &mut self,
        lo: u64,
        hi: u64,
        cursor: &mut TombstoneCursor,
        mut f: impl FnMut(u64, AckedSlot<T>),
    ) {
        let Some((a, b)) = self.indices(lo, hi) else {
            return;
        };
        let base = self.base;
        // Below `first_out` only a tombstone can change state; the slots skipped here would all be duplicates.
        let mut a = a.max(self.first_out_index());
        let first_lost = self.lost_at_least(lo, cursor);
        if let Some(i) = self.lost.get(first_lost).and_then(|&pn| self.index(pn)) {
            a = a.min(i);
        }
        if a > b {
            return;
        }
        for (i, slot) in self.slots.range_mut(a..=b).enumerate() {
            let pn = base + (a + i) as u64;
            let found = match slot {
                Slot::Outstanding(_) => match std::mem::replace(slot, Slot::Acked) {
                    Slot::Outstanding(p) => {
                        self.outstanding -= 1;
                        if p.ack_eliciting {
                            self.ack_eliciting_outstanding -= 1;
                        }
                        if p.in_flight {
                            self.in_flight_bytes -= u64::from(p.size);
                        }
                        AckedSlot::Newly(p)
                    }
                    _ => AckedSlot::Duplicate,
                },
                Slot::Lost(t) => {
                    let t = *t;
                    *slot = Slot::Acked;
                    remove_sorted(&mut self.lost, pn);
                    AckedSlot::Spurious(t)
                }
                Slot::Acked | Slot::Skipped => AckedSlot::Duplicate,
            };
            f(pn, found);
        }
        self.advance_first_out();
    }

    /// The index in `lost` of the first tombstone at or above `lo` (`lost.len()` if none), and the cursor moved
    /// there. Every tombstone at or above the cursor's index is at or above the `lo` it was left at (removals
    /// by [`SentPackets::ack_range_from`] only take tombstones at or above that index), so for a lower `lo` the
    /// answer is at or below the index: a walk down of at most [`TombstoneCursor::WALK`] steps finds it, or a
    /// binary search when the gap holds more tombstones.
    fn lost_at_least(&self, lo: u64, cursor: &mut TombstoneCursor) -> usize {
        let mut j = match cursor.lo {
            Some(prev) if lo < prev => cursor.index.min(self.lost.len()),
            _ => self.lost.len(),
        };
        let mut steps = 0;
        while let Some(&pn) = j.checked_sub(1).and_then(|i| self.lost.get(i)) {
            if pn < lo {
                break;
            }
            if steps == TombstoneCursor::WALK {
                j = self.lost.partition_point(|&x| x < lo);
                break;
            }
            steps += 1;
            j -= 1;
        }
        *cursor = TombstoneCursor {
            lo: Some(lo),
            index: j,
        };
        j
    }

    /// Declares lost every outstanding packet numbered at most `upto` for which `is_lost` says so, in
    /// increasing order; each leaves a tombstone.
    pub fn drain_lost(
        &mut self,
        upto: u64,
        mut is_lost: impl FnMut(u64, &SentPacket<T>) -> bool,
    ) -> Vec<(u64, SentPacket<T>)> {
        let mut lost = Vec::new();
        let Some((_, b)) = self.indices(0, upto) else {
            return lost;
        };
        // No outstanding packet below `first_out`.
        let a = self.first_out_index();
        if a > b {
            return lost;
        }
        let base = self.base;
        for (i, slot) in self.slots.range_mut(a..=b).enumerate() {
            let pn = base + (a + i) as u64;
            let Slot::Outstanding(p) = slot else {
                continue;
            };
            if !is_lost(pn, p) {
                continue;
            }
            let tomb = LostTombstone {
                time_sent: p.time_sent,
                size: p.size,
                in_flight: p.in_flight,
            };
            if let Slot::Outstanding(p) = std::mem::replace(slot, Slot::Lost(tomb)) {
                self.outstanding -= 1;
                if p.ack_eliciting {
                    self.ack_eliciting_outstanding -= 1;
                }
                if p.in_flight {
                    self.in_flight_bytes -= u64::from(p.size);
                }
                insert_sorted(&mut self.lost, pn);
                lost.push((pn, p));
            }
        }
        self.advance_first_out();
        lost
    }

    /// Removes every outstanding packet (for a discarded space or an abandoned path), in increasing order.
    pub fn drain_all(&mut self) -> Vec<(u64, SentPacket<T>)> {
        let base = self.base;
        let next = self.next_pn();
        let out = std::mem::take(&mut self.slots)
            .into_iter()
            .enumerate()
            .filter_map(|(i, s)| match s {
                Slot::Outstanding(p) => Some((base + i as u64, p)),
                _ => None,
            })
            .collect();
        self.base = next;
        self.first_out = next;
        self.outstanding = 0;
        self.ack_eliciting_outstanding = 0;
        self.in_flight_bytes = 0;
        self.lost.clear();
        self.skipped.clear();
        out
    }

    /// Forgets finished slots at the front: acknowledged and skipped ones, and tombstones of packets sent
    /// before `now - keep_lost`.
    pub fn trim(&mut self, now: Instant, keep_lost: Duration) {
        while let Some(front) = self.slots.front() {
            match front {
                Slot::Outstanding(_) => break,
                Slot::Lost(t) if t.time_sent.checked_add(keep_lost).is_none_or(|e| e > now) => break,
                Slot::Skipped => {
                    self.skipped.pop_front();
                }
                Slot::Lost(_) => {
                    self.lost.pop_front();
                }
                Slot::Acked => {}
            }
            self.slots.pop_front();
            self.base += 1;
        }
        self.first_out = self.first_out.max(self.base);
    }

    /// Recomputes the counters from the slots and compares (tests only).
    #[cfg(test)]
    pub(crate) fn debug_check(&self) {
        let mut out = 0;
        let mut ae = 0;
        let mut bytes = 0u64;
        let mut skipped = VecDeque::new();
        let mut lost = VecDeque::new();
        let mut first_out = None;
        for (i, s) in self.slots.iter().enumerate() {
            let pn = self.base + i as u64;
            match s {
                Slot::Outstanding(p) => {
                    out += 1;
                    ae += usize::from(p.ack_eliciting);
                    if p.in_flight {
                        bytes += u64::from(p.size);
                    }
                    first_out.get_or_insert(pn);
                }
                Slot::Skipped => skipped.push_back(pn),
                Slot::Lost(_) => lost.push_back(pn),
                Slot::Acked => {}
            }
        }
        assert_eq!(out, self.outstanding);
        assert_eq!(ae, self.ack_eliciting_outstanding);
        assert_eq!(bytes, self.in_flight_bytes);
        assert_eq!(skipped, self.skipped);
        assert_eq!(lost, self.lost);
        assert!(self.first_out >= self.base && self.first_out <= self.next_pn());
        assert!(first_out.is_none_or(|f| f >= self.first_out));
    }
}

/// Where [`SentPackets::ack_range_from`] stopped in the sorted list of tombstones, carried from one range of an
/// ACK frame to the next, lower one. A fresh cursor (or one given a range that is not below its last one)
/// starts from the end of the list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TombstoneCursor {
    /// The `lo` of the last range, if any.
    lo: Option<u64>,
    /// The index of the first tombstone at or above `lo`.
    index: usize,
}

impl TombstoneCursor {
    /// Tombstones stepped over before falling back to a binary search.
    const WALK: usize = 8;
}

/// The first number of the increasing `list` that is at least `pn`. The usual query (an acknowledgement of
/// recent packets, tombstones and skipped numbers all older) is answered by the last element alone, without
/// the binary search over the deque's two halves.
fn first_at_least(list: &VecDeque<u64>, pn: u64) -> Option<u64> {
    match list.back() {
        None => None,
        Some(&last) if last < pn => None,
        Some(_) => list.get(list.partition_point(|&x| x < pn)).copied(),
    }
}

/// Inserts `pn` into the increasing `list` (at the end in the usual case: losses are declared in order).
fn insert_sorted(list: &mut VecDeque<u64>, pn: u64) {
    if list.back().is_none_or(|&last| last < pn) {
        list.push_back(pn);
    } else {
        let i = list.partition_point(|&x| x < pn);
        list.insert(i, pn);
    }
}

/// Removes `pn` from the increasing `list`, if there.
fn remove_sorted(list: &mut VecDeque<u64>, pn: u64) {
    let i = list.partition_point(|&x| x < pn);
    if list.get(i) == Some(&pn) {
        list.remove(i);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    #[allow(clippy::disallowed_methods)] // tests need an origin for time
    fn t0() -> Instant {
        Instant::now()
    }

    /// 40 packets, 0..=39; then 3, 10..=19, 25 and 30 declared lost (13 tombstones, indices 0..=12 of
    /// `lost`: 3 at 0, 10..=19 at 1..=10, 25 at 11, 30 at 12).
    fn map_with_tombstones() -> SentPackets<()> {
        let t0 = t0();
        let mut sent = SentPackets::new();
        for _ in 0..40 {
            sent.push(SentPacket {
                time_sent: t0,
                size: 1200,
                ack_eliciting: true,
                in_flight: true,
                app_limited: false,
                delivery: None,
                frames: (),
            });
        }
        let lost = sent.drain_lost(39, |pn, _| {
            pn == 3 || (10..=19).contains(&pn) || pn == 25 || pn == 30
        });
        assert_eq!(lost.len(), 13);
        sent
    }

    #[test]
    fn tombstone_cursor_steps_down_through_the_ranges_of_a_frame() {
        let sent = map_with_tombstones();
        let mut c = TombstoneCursor::default();
        // (lo of the range, index of the first tombstone at or above it), largest range first:
        // 31: none above 30 → 13 (the list's length); 26: 30 → 12; 20: 25 → 11; 4: ten tombstones
        // (10..=19) lie between 4 and 20, more than the walk of 8, so the binary search answers 10 → 1;
        // 0: 3 → 0.
        for (lo, want) in [(31, 13), (26, 12), (20, 11), (4, 1), (0, 0)] {
            assert_eq!(sent.lost_at_least(lo, &mut c), want, "lo {lo}");
            assert_eq!(c.index, want);
            // The binary search over the whole list agrees.
            assert_eq!(sent.lost.partition_point(|&x| x < lo), want);
        }
        // A range not below the last one restarts from the end: lo 21 → 25 at index 11.
        assert_eq!(sent.lost_at_least(21, &mut c), 11);
    }

    #[test]
    fn ranges_of_one_frame_with_a_cursor_ack_as_without() {
        // Ranges 36..=39, 22..=26 (holds tombstone 25: a spurious loss), 5..=12 (10, 11, 12 spurious, 5..=9
        // newly acknowledged), 0..=1, largest first.
        let ranges = [(36, 39), (22, 26), (5, 12), (0, 1)];
        let mut with = map_with_tombstones();
        let mut without = map_with_tombstones();
        let mut c = TombstoneCursor::default();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let tag = |pn: u64, s: AckedSlot<()>| match s {
            AckedSlot::Newly(_) => (pn, 'n'),
            AckedSlot::Spurious(_) => (pn, 's'),
            AckedSlot::Duplicate => (pn, 'd'),
        };
        for (lo, hi) in ranges {
            with.ack_range_from(lo, hi, &mut c, |pn, s| a.push(tag(pn, s)));
            without.ack_range(lo, hi, |pn, s| b.push(tag(pn, s)));
        }
        assert_eq!(a, b);
        let spurious: Vec<u64> = a.iter().filter(|(_, k)| *k == 's').map(|(pn, _)| *pn).collect();
        assert_eq!(spurious, [25, 10, 11, 12]);
        // Left: 3, 13..=19 and 30.
        assert_eq!(with.lost, [3, 13, 14, 15, 16, 17, 18, 19, 30]);
        assert_eq!(with.lost, without.lost);
        with.debug_check();
    }
}
