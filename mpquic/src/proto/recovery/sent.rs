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
//! Invariants: `outstanding`, `ack_eliciting_outstanding`, `in_flight_bytes` and `skipped` always equal the
//! counts over the slots (checked by `debug_check` in tests).

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
    skipped: usize,
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
            skipped: 0,
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
        self.skipped += 1;
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
        if self.skipped == 0 {
            return false;
        }
        let Some((a, b)) = self.indices(lo, hi) else {
            return false;
        };
        self.slots.range(a..=b).any(|s| matches!(s, Slot::Skipped))
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
        self.slots.iter().filter_map(|s| match s {
            Slot::Outstanding(p) => Some(p),
            _ => None,
        })
    }

    /// Marks every packet of `lo..=hi` acknowledged and calls `f` with what each held, in increasing order.
    /// Numbers outside the map are ignored (the caller validated them).
    pub fn ack_range(&mut self, lo: u64, hi: u64, mut f: impl FnMut(u64, AckedSlot<T>)) {
        let Some((a, b)) = self.indices(lo, hi) else {
            return;
        };
        let base = self.base;
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
                    AckedSlot::Spurious(t)
                }
                Slot::Acked | Slot::Skipped => AckedSlot::Duplicate,
            };
            f(pn, found);
        }
    }

    /// Declares lost every outstanding packet numbered at most `upto` for which `is_lost` says so, in
    /// increasing order; each leaves a tombstone.
    pub fn drain_lost(
        &mut self,
        upto: u64,
        mut is_lost: impl FnMut(u64, &SentPacket<T>) -> bool,
    ) -> Vec<(u64, SentPacket<T>)> {
        let mut lost = Vec::new();
        let Some((a, b)) = self.indices(0, upto) else {
            return lost;
        };
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
                lost.push((pn, p));
            }
        }
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
        self.outstanding = 0;
        self.ack_eliciting_outstanding = 0;
        self.in_flight_bytes = 0;
        self.skipped = 0;
        out
    }

    /// Forgets finished slots at the front: acknowledged and skipped ones, and tombstones of packets sent
    /// before `now - keep_lost`.
    pub fn trim(&mut self, now: Instant, keep_lost: Duration) {
        while let Some(front) = self.slots.front() {
            match front {
                Slot::Outstanding(_) => break,
                Slot::Lost(t) if t.time_sent.checked_add(keep_lost).is_none_or(|e| e > now) => break,
                Slot::Skipped => self.skipped -= 1,
                Slot::Lost(_) | Slot::Acked => {}
            }
            self.slots.pop_front();
            self.base += 1;
        }
    }

    /// Recomputes the counters from the slots and compares (tests only).
    #[cfg(test)]
    pub(crate) fn debug_check(&self) {
        let mut out = 0;
        let mut ae = 0;
        let mut bytes = 0u64;
        let mut skipped = 0;
        for s in &self.slots {
            match s {
                Slot::Outstanding(p) => {
                    out += 1;
                    ae += usize::from(p.ack_eliciting);
                    if p.in_flight {
                        bytes += u64::from(p.size);
                    }
                }
                Slot::Skipped => skipped += 1,
                _ => {}
            }
        }
        assert_eq!(out, self.outstanding);
        assert_eq!(ae, self.ack_eliciting_outstanding);
        assert_eq!(bytes, self.in_flight_bytes);
        assert_eq!(skipped, self.skipped);
    }
}
