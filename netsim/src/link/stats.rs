//! Counters of what a link did with the packets offered to it.
//!
//! Invariant (checked by the property tests): every offered packet is counted exactly once as delivered or
//! under one drop reason, so `offered = delivered + dropped_queue_full + dropped_loss + dropped_down + dropped_too_large` in both
//! packets and bytes. Duplicates and corruptions are counted on the side (a duplicated packet is one
//! delivered packet plus one `duplicated`). "Delivered" means scheduled for delivery when offered; losses
//! that the caller inflicts later (see [`super::Link::outage_since`]) are not seen here.

/// A number of packets and their total size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketCount {
    /// Packets.
    pub packets: u64,
    /// Bytes (wire length).
    pub bytes: u64,
}

impl PacketCount {
    pub(crate) fn add(&mut self, len: u64) {
        self.packets = self.packets.saturating_add(1);
        self.bytes = self.bytes.saturating_add(len);
    }
}

/// Cumulative counters of a link since it was created.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets offered to [`super::Link::enqueue`].
    pub offered: PacketCount,
    /// Packets scheduled for delivery (originals only).
    pub delivered: PacketCount,
    /// Packets refused by the drop-tail queue.
    pub dropped_queue_full: PacketCount,
    /// Packets lost by the loss model.
    pub dropped_loss: PacketCount,
    /// Packets offered while the link was down.
    pub dropped_down: PacketCount,
    /// Packets larger than the link's MTU.
    pub dropped_too_large: PacketCount,
    /// Extra copies delivered by duplication.
    pub duplicated: PacketCount,
    /// Delivered packets with a flipped bit.
    pub corrupted: PacketCount,
    /// Largest backlog in bytes seen just after accepting a packet.
    pub max_queue_bytes: u64,
    /// Largest backlog in packets seen just after accepting a packet.
    pub max_queue_packets: u64,
}

impl LinkStats {
    /// All packets dropped, whatever the reason.
    pub fn dropped(&self) -> PacketCount {
        let mut total = self.dropped_queue_full;
        for c in [self.dropped_loss, self.dropped_down, self.dropped_too_large] {
            total.packets = total.packets.saturating_add(c.packets);
            total.bytes = total.bytes.saturating_add(c.bytes);
        }
        total
    }
}
