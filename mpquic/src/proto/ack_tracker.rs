//! The receive side of one packet-number space: which packets arrived, when to acknowledge them, and the ACK
//! or PATH_ACK frame that says so.
//!
//! A connection holds one [`AckTracker`] for Initial, one for Handshake and, with multipath, one per path ID
//! for application data (0-RTT and 1-RTT share the space of path 0; draft-ietf-quic-multipath-21: PATH_ACK
//! acknowledges the 0-RTT and 1-RTT packets of one path's packet-number space).
//!
//! The calling contract, per received packet that was successfully unprotected:
//! 1. [`AckTracker::is_duplicate`] before processing the frames: a duplicate is dropped, unprocessed;
//! 2. [`AckTracker::on_packet_received`] with the receive time, whether it was ack-eliciting, and the ECN
//!    codepoint of its IP header;
//! 3. [`AckTracker::ack_deadline`] feeds the connection's timer; when it has passed (or
//!    [`AckTracker::ack_eliciting_pending`] says an outgoing packet should carry an ACK anyway),
//!    [`AckTracker::write_ack`] writes the frame;
//! 4. when a packet that carried an ACK frame is itself acknowledged, [`AckTracker::on_ack_frame_acked`] with
//!    that frame's Largest Acknowledged lets the tracker forget the ranges below (RFC 9000 §13.2.4).
//!
//! State is bounded: at most [`AckConfig::max_ranges`] ranges are kept (the lowest are dropped first), plus a
//! few counters. A packet number below the tracked window ([`AckTracker::floor`]) is treated as a duplicate,
//! so no packet is ever processed twice (RFC 9000 §13.2.3).
//!
//! When to acknowledge (RFC 9000 §13.2.1, §13.2.2), for an **ack-eliciting** packet: immediately in the
//! Initial and Handshake spaces, for a packet below the largest ack-eliciting one received, for a packet
//! above it with missing packets in between, for a CE-marked packet, and once
//! [`AckConfig::ack_eliciting_threshold`] ack-eliciting packets are waiting; otherwise within
//! [`AckConfig::max_ack_delay`]. A non-ack-eliciting packet never sets a deadline: it is acknowledged along
//! with the next ACK sent for another reason.

use std::time::{Duration, Instant};

use bytes::BufMut;

use crate::cc::PathId;
use crate::proto::coding::VarInt;
use crate::proto::frame::{AckFields, EcnCounts};
use crate::proto::range_set::RangeSet;

/// Which packet-number space a tracker serves: it decides whether ack-eliciting packets are acknowledged at
/// once (Initial, Handshake) or may be delayed (application data).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpaceKind {
    /// Initial packets.
    Initial,
    /// Handshake packets.
    Handshake,
    /// 0-RTT and 1-RTT packets of one path (path 0 without multipath).
    Data,
}

/// The ECN codepoint of a received IP packet's header (RFC 3168 §5; the two low bits of the TOS / traffic
/// class byte).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum EcnCodepoint {
    /// Not-ECT (0b00), or ECN not readable on this platform.
    #[default]
    NotEct,
    /// ECT(1) (0b01).
    Ect1,
    /// ECT(0) (0b10).
    Ect0,
    /// CE, Congestion Experienced (0b11).
    Ce,
}

impl EcnCodepoint {
    /// The codepoint of the two low bits of `tos` (the IPv4 TOS or IPv6 Traffic Class byte).
    pub fn from_bits(tos: u8) -> Self {
        match tos & 0b11 {
            0b01 => EcnCodepoint::Ect1,
            0b10 => EcnCodepoint::Ect0,
            0b11 => EcnCodepoint::Ce,
            _ => EcnCodepoint::NotEct,
        }
    }

    /// The two-bit value of the codepoint.
    pub fn bits(self) -> u8 {
        match self {
            EcnCodepoint::NotEct => 0b00,
            EcnCodepoint::Ect1 => 0b01,
            EcnCodepoint::Ect0 => 0b10,
            EcnCodepoint::Ce => 0b11,
        }
    }
}

/// Settings of an [`AckTracker`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckConfig {
    /// The max_ack_delay this endpoint advertised (RFC 9000 §18.2; default 25 ms): the longest an
    /// ack-eliciting 0-RTT/1-RTT packet waits for its acknowledgement.
    pub max_ack_delay: Duration,
    /// An ACK is sent at once when this many ack-eliciting packets wait for one (RFC 9000 §13.2.2: "A
    /// receiver SHOULD send an ACK frame after receiving at least two ack-eliciting packets."; default 2). 0
    /// and 1 both mean "acknowledge every ack-eliciting packet at once".
    pub ack_eliciting_threshold: u64,
    /// Most ranges remembered (at least 1; default 64). When exceeded, the lowest ranges are forgotten and
    /// packets below them are treated as duplicates.
    pub max_ranges: usize,
}

impl Default for AckConfig {
    fn default() -> Self {
        AckConfig {
            max_ack_delay: Duration::from_millis(25),
            ack_eliciting_threshold: 2,
            max_ranges: 64,
        }
    }
}

/// What [`AckTracker::write_ack`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckWritten {
    /// The frame's Largest Acknowledged: remember it with the sent packet, and pass it to
    /// [`AckTracker::on_ack_frame_acked`] when that packet is acknowledged.
    pub largest: u64,
    /// Bytes written.
    pub len: usize,
    /// Number of ranges acknowledged (the ACK Range Count plus one).
    pub ranges: usize,
    /// Whether older ranges were left out to fit the size limit.
    pub truncated: bool,
}

/// The receive-side acknowledgement state of one packet-number space; see the [module documentation](self).
#[derive(Debug, Clone)]
pub struct AckTracker {
    kind: SpaceKind,
    config: AckConfig,
    /// Packet numbers received and not yet forgotten.
    received: RangeSet,
    /// Largest packet number received, and when: kept even when every range is forgotten.
    largest: Option<(u64, Instant)>,
    /// Largest ack-eliciting packet number received.
    largest_ack_eliciting: Option<u64>,
    /// Ack-eliciting packets received since the last ACK written.
    ack_eliciting_since_ack: u64,
    /// Whether any packet was received since the last ACK written.
    new_since_ack: bool,
    /// Whether an ACK should go out without delay.
    immediate: bool,
    /// When an ACK must go out at the latest; `Some` iff an ack-eliciting packet waits for one.
    deadline: Option<Instant>,
    /// ECT(0), ECT(1), CE counts of the packets processed.
    ecn: [u64; 3],
    /// Reused storage for the (Gap, ACK Range Length) pairs of the frame being written.
    scratch: Vec<(VarInt, VarInt)>,
}

impl AckTracker {
    /// A tracker for a space of `kind`, with nothing received.
    pub fn new(kind: SpaceKind, config: AckConfig) -> Self {
        AckTracker {
            kind,
            config,
            received: RangeSet::with_max_ranges(config.max_ranges),
            largest: None,
            largest_ack_eliciting: None,
            ack_eliciting_since_ack: 0,
            new_since_ack: false,
            immediate: false,
            deadline: None,
            ecn: [0; 3],
            scratch: Vec::new(),
        }
    }

    /// The kind of space served.
    pub fn kind(&self) -> SpaceKind {
        self.kind
    }

    /// The settings.
    pub fn config(&self) -> &AckConfig {
        &self.config
    }

    /// Whether packet `pn` must be dropped unprocessed: it was received already, or it is below the tracked
    /// window ([`AckTracker::floor`]), or it is beyond the packet-number space (≥ 2^62) and cannot be
    /// acknowledged.
    pub fn is_duplicate(&self, pn: u64) -> bool {
        // RFC 9000 §13.2.3: "A receiver MUST retain an ACK Range unless it can ensure that it will not
        // subsequently accept packets with numbers in that range. Maintaining a minimum packet number that
        // increases as ranges are discarded is one way to achieve this with minimal state."
        pn < self.received.floor() || pn > VarInt::MAX.into_inner() || self.received.contains(pn)
    }

    /// Records packet `pn`, received at `now` with the IP-header ECN codepoint `ecn`, after it was processed.
    /// Returns false, and changes nothing, for a duplicate ([`AckTracker::is_duplicate`]).
    pub fn on_packet_received(
        &mut self,
        now: Instant,
        pn: u64,
        ack_eliciting: bool,
        ecn: EcnCodepoint,
    ) -> bool {
        if self.is_duplicate(pn) {
            return false;
        }
        // RFC 9000 §13.4.1: "ECN counts are only incremented when QUIC packets from the received IP packet
        // are processed. As such, duplicate QUIC packets are not processed and do not increase ECN counts".
        let slot = match ecn {
            EcnCodepoint::Ect0 => self.ecn.get_mut(0),
            EcnCodepoint::Ect1 => self.ecn.get_mut(1),
            EcnCodepoint::Ce => self.ecn.get_mut(2),
            EcnCodepoint::NotEct => None,
        };
        if let Some(c) = slot {
            *c = c.saturating_add(1);
        }
        let floor = self.received.floor();
        self.received.insert(pn);
        if self.largest.is_none_or(|(l, _)| pn > l) {
            self.largest = Some((pn, now));
        }
        self.new_since_ack = true;
        if !ack_eliciting {
            // RFC 9000 §13.2.1: "An endpoint MUST NOT send a non-ack-eliciting packet in response to a
            // non-ack-eliciting packet, even if there are packet gaps that precede the received packet."
            // No deadline: the packet is acknowledged along with the next ACK sent for another reason.
            return true;
        }
        let prev = self.largest_ack_eliciting;
        self.largest_ack_eliciting = Some(prev.map_or(pn, |l| l.max(pn)));
        self.ack_eliciting_since_ack = self.ack_eliciting_since_ack.saturating_add(1);
        // RFC 9000 §13.2.1: "In order to assist loss detection at the sender, an endpoint SHOULD generate and
        // send an ACK frame without delay when it receives an ack-eliciting packet either: when the received
        // packet has a packet number less than another ack-eliciting packet that has been received, or when
        // the packet has a packet number larger than the highest-numbered ack-eliciting packet that has been
        // received and there are missing packets between that packet and this packet."
        let out_of_order = match prev {
            Some(l) if pn < l => true,
            // Packets below the floor were received or are treated as such: they are not missing.
            Some(l) => {
                let lo = l.saturating_add(1).max(floor);
                lo < pn && !self.received.contains_all(lo..=pn - 1)
            }
            None => false,
        };
        let immediate =
            // RFC 9000 §13.2.1: "An endpoint MUST acknowledge all ack-eliciting Initial and Handshake packets
            // immediately and all ack-eliciting 0-RTT and 1-RTT packets within its advertised max_ack_delay".
            self.kind != SpaceKind::Data
            || out_of_order
            // RFC 9000 §13.2.1: "packets marked with the ECN Congestion Experienced (CE) codepoint in the IP
            // header SHOULD be acknowledged immediately, to reduce the peer's response time to congestion
            // events."
            || ecn == EcnCodepoint::Ce
            // RFC 9000 §13.2.2: "A receiver SHOULD send an ACK frame after receiving at least two
            // ack-eliciting packets."
            || self.ack_eliciting_since_ack >= self.config.ack_eliciting_threshold;
        let due = if immediate {
            self.immediate = true;
            now
        } else {
            now.checked_add(self.config.max_ack_delay).unwrap_or(now)
        };
        self.deadline = Some(self.deadline.map_or(due, |d| d.min(due)));
        true
    }

    /// When an ACK frame must be sent at the latest: `Some` iff an ack-eliciting packet waits for its
    /// acknowledgement. A deadline at or before the current time means "now".
    pub fn ack_deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Whether an ACK frame is due at `now` (the deadline has passed): the connection sends one, in an
    /// ACK-only packet if it has nothing else to send.
    pub fn ack_due(&self, now: Instant) -> bool {
        self.deadline.is_some_and(|d| d <= now)
    }

    /// Whether a packet received since the last ACK calls for an ACK without delay.
    pub fn wants_immediate_ack(&self) -> bool {
        self.immediate
    }

    /// Whether ack-eliciting packets wait for an acknowledgement. RFC 9000 §13.2.1: "An endpoint SHOULD send
    /// an ACK frame with other frames when there are new ack-eliciting packets to acknowledge."
    pub fn ack_eliciting_pending(&self) -> bool {
        self.deadline.is_some()
    }

    /// Whether any packet (ack-eliciting or not) arrived since the last ACK frame was written. RFC 9000
    /// §13.2.1: "When only non-ack-eliciting packets need to be acknowledged, an endpoint MAY choose not to
    /// send an ACK frame with outgoing frames until an ack-eliciting packet has been received."
    pub fn has_new_packets(&self) -> bool {
        self.new_since_ack
    }

    /// The largest packet number received, kept even after every range is forgotten.
    pub fn largest_received(&self) -> Option<u64> {
        self.largest.map(|(pn, _)| pn)
    }

    /// When the largest packet number was received.
    pub fn largest_received_time(&self) -> Option<Instant> {
        self.largest.map(|(_, t)| t)
    }

    /// The packet numbers that the next ACK frame would acknowledge (before any truncation to a size limit).
    pub fn ranges(&self) -> &RangeSet {
        &self.received
    }

    /// Packet numbers below this are treated as duplicates: their ranges were forgotten.
    pub fn floor(&self) -> u64 {
        self.received.floor()
    }

    /// The ECN counts to report, or `None` while every packet processed was Not-ECT (the frame is then a
    /// plain ACK / PATH_ACK).
    pub fn ecn_counts(&self) -> Option<EcnCounts> {
        // RFC 9000 §13.4.1: "Even if an endpoint does not set an ECT field in packets it sends, the endpoint
        // MUST provide feedback about ECN markings it receives, if these are accessible."
        if self.ecn == [0; 3] {
            return None;
        }
        let [ect0, ect1, ce] = self.ecn.map(|c| VarInt::from_u64(c).unwrap_or(VarInt::MAX));
        Some(EcnCounts { ect0, ect1, ce })
    }

    /// The ACK Delay field for an ACK sent at `now`: the time since the largest packet was received, in
    /// microseconds, divided by 2^`ack_delay_exponent` (RFC 9000 §19.3; exponents above 20 are invalid, RFC
    /// 9000 §18.2, and are treated as 20).
    pub fn ack_delay(&self, now: Instant, ack_delay_exponent: u8) -> VarInt {
        let Some((_, t)) = self.largest else {
            return VarInt::ZERO;
        };
        // RFC 9000 §13.2.5: "An endpoint MUST NOT include delays that it does not control when populating the
        // ACK Delay field in an ACK frame." The receive time given to `on_packet_received` is the caller's
        // promise that it excludes such delays.
        let micros = u64::try_from(now.saturating_duration_since(t).as_micros()).unwrap_or(u64::MAX);
        VarInt::from_u64(micros >> ack_delay_exponent.min(20)).unwrap_or(VarInt::MAX)
    }

    /// Writes an ACK frame (`path_id` = `None`) or a PATH_ACK frame for `path_id`, of at most `max_len`
    /// bytes, acknowledging the largest ranges that fit (RFC 9000 §13.2.3: "If it does not, then older ranges
    /// (those with the smallest packet numbers) are omitted."), with ECN counts once any packet carried an
    /// ECT or CE mark. Returns `None`, writing nothing, if nothing is to be acknowledged or the smallest
    /// frame does not fit. Writing resets the acknowledgement timer: the caller must send the packet.
    pub fn write_ack<B: BufMut>(
        &mut self,
        now: Instant,
        path_id: Option<PathId>,
        ack_delay_exponent: u8,
        buf: &mut B,
        max_len: usize,
    ) -> Option<AckWritten> {
        let mut ranges = self.received.iter_desc();
        let (smallest, largest) = ranges.next()?.into_inner();
        // RFC 9000 §13.2.3: "A receiver SHOULD include an ACK Range containing the largest received packet
        // number in every ACK frame." The largest range is never dropped, so this holds.
        debug_assert_eq!(Some(largest), self.largest_received());
        // Received packet numbers are at most VarInt::MAX (`is_duplicate`), so these never fail.
        let fields = AckFields {
            path_id,
            largest: VarInt::from_u64(largest).ok()?,
            delay: self.ack_delay(now, ack_delay_exponent),
            first_range: VarInt::from_u64(largest.saturating_sub(smallest)).ok()?,
            ecn: self.ecn_counts(),
        };
        // Size with the first range only: the ACK Range Count (0) takes one byte.
        let fixed = fields.len_without_ranges();
        if fixed + 1 > max_len {
            return None;
        }
        // One pass over the ranges, largest first: each becomes its (Gap, ACK Range Length) pair as long as
        // the frame, with the Range Count it then needs, fits in `max_len`.
        let mut pairs_len = 0usize;
        let mut smallest = smallest;
        self.scratch.clear();
        let mut truncated = false;
        for r in ranges {
            let (start, end) = r.into_inner();
            // Ranges are disjoint and non-adjacent: smallest ≥ end + 2.
            let gap = VarInt::from_u64(smallest.saturating_sub(end).saturating_sub(2));
            let len = VarInt::from_u64(end.saturating_sub(start));
            let (Ok(gap), Ok(len)) = (gap, len) else {
                truncated = true;
                break;
            };
            let pair = gap.size() + len.size();
            let count = VarInt::size_of(self.scratch.len() as u64 + 1).unwrap_or(8);
            if fixed + count + pairs_len + pair > max_len {
                truncated = true;
                break;
            }
            pairs_len += pair;
            smallest = start;
            self.scratch.push((gap, len));
        }
        let count = VarInt::from_u64(self.scratch.len() as u64).unwrap_or(VarInt::MAX);
        let before = buf.remaining_mut();
        fields.encode(buf, count, self.scratch.iter().copied());
        let len = before.saturating_sub(buf.remaining_mut());
        debug_assert_eq!(len, fixed + count.size() + pairs_len);
        let written = AckWritten {
            largest,
            len,
            ranges: self.scratch.len() + 1,
            truncated,
        };
        // RFC 9000 §13.2.1: "Since packets containing only ACK frames are not congestion controlled, an
        // endpoint MUST NOT send more than one such packet in response to receiving an ack-eliciting packet."
        // The deadline is cleared until the next ack-eliciting packet.
        self.reset_pending();
        Some(written)
    }

    /// A packet carrying an ACK frame whose Largest Acknowledged was `largest_acked` was itself acknowledged:
    /// the peer knows every packet up to it was received, so those ranges are forgotten and packets up to
    /// `largest_acked` are treated as duplicates from now on (RFC 9000 §13.2.4: "When a packet containing an
    /// ACK frame is acknowledged, the receiver can stop acknowledging packets less than or equal to the
    /// Largest Acknowledged field in the sent ACK frame.").
    pub fn on_ack_frame_acked(&mut self, largest_acked: u64) {
        self.received.remove_below(largest_acked.saturating_add(1));
        if self.received.is_empty() {
            // Nothing left to acknowledge: any packet still waiting was at or below `largest_acked` and is
            // forgotten with its range.
            self.reset_pending();
        }
    }

    fn reset_pending(&mut self) {
        self.ack_eliciting_since_ack = 0;
        self.new_since_ack = false;
        self.immediate = false;
        self.deadline = None;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;
    use crate::proto::frame::{Frame, decode_frames};

    const MS: Duration = Duration::from_millis(1);

    #[allow(clippy::disallowed_methods)] // tests need an origin for time
    fn t0() -> Instant {
        Instant::now()
    }

    fn data() -> AckTracker {
        AckTracker::new(SpaceKind::Data, AckConfig::default())
    }

    fn recv(t: &mut AckTracker, now: Instant, pn: u64) -> bool {
        t.on_packet_received(now, pn, true, EcnCodepoint::NotEct)
    }

    fn ranges(t: &AckTracker) -> Vec<(u64, u64)> {
        t.ranges().iter_desc().map(|r| r.into_inner()).collect()
    }

    fn write(
        t: &mut AckTracker,
        now: Instant,
        path: Option<PathId>,
        max_len: usize,
    ) -> (Vec<u8>, Option<AckWritten>) {
        let mut buf = Vec::new();
        let w = t.write_ack(now, path, 3, &mut buf, max_len);
        (buf, w)
    }

    /// Decodes one ACK frame: (path, largest, delay, ranges largest first, ECN).
    #[allow(clippy::type_complexity)]
    fn decode(bytes: &[u8]) -> (Option<PathId>, u64, u64, Vec<(u64, u64)>, Option<EcnCounts>) {
        let frames: Vec<_> = decode_frames(bytes).collect::<Result<_, _>>().unwrap();
        assert_eq!(frames.len(), 1);
        let Frame::Ack(a) = &frames[0] else {
            panic!("{frames:?}")
        };
        let rs = a.iter().map(|r| r.into_inner()).collect();
        (a.path_id, a.largest.into_inner(), a.delay.into_inner(), rs, a.ecn)
    }

    // ---- When to acknowledge ------------------------------------------------------------------------------

    #[test]
    fn in_order_packets_delay_until_the_second() {
        let t0 = t0();
        let mut t = data();
        assert_eq!(t.ack_deadline(), None);
        recv(&mut t, t0, 0);
        assert_eq!(t.ack_deadline(), Some(t0 + 25 * MS));
        assert!(!t.wants_immediate_ack());
        assert!(!t.ack_due(t0 + 24 * MS));
        assert!(t.ack_due(t0 + 25 * MS));
        // The second ack-eliciting packet: at once (threshold 2).
        recv(&mut t, t0 + 3 * MS, 1);
        assert!(t.wants_immediate_ack());
        assert_eq!(t.ack_deadline(), Some(t0 + 3 * MS));
        write(&mut t, t0 + 3 * MS, None, 1200).1.unwrap();
        assert_eq!(t.ack_deadline(), None);
        // The count restarts after an ACK.
        recv(&mut t, t0 + 4 * MS, 2);
        assert_eq!(t.ack_deadline(), Some(t0 + 29 * MS));
        assert!(!t.wants_immediate_ack());
    }

    #[test]
    fn configurable_threshold() {
        let t0 = t0();
        let cfg = AckConfig {
            ack_eliciting_threshold: 4,
            max_ack_delay: 10 * MS,
            ..AckConfig::default()
        };
        let mut t = AckTracker::new(SpaceKind::Data, cfg);
        for pn in 0..3 {
            recv(&mut t, t0 + pn as u32 * MS, pn);
            assert!(!t.wants_immediate_ack(), "pn {pn}");
        }
        // The deadline stays that of the first packet waiting.
        assert_eq!(t.ack_deadline(), Some(t0 + 10 * MS));
        recv(&mut t, t0 + 3 * MS, 3);
        assert!(t.wants_immediate_ack());
        assert_eq!(t.ack_deadline(), Some(t0 + 3 * MS));

        let mut every = AckTracker::new(
            SpaceKind::Data,
            AckConfig {
                ack_eliciting_threshold: 1,
                ..cfg
            },
        );
        recv(&mut every, t0, 0);
        assert!(every.wants_immediate_ack());
    }

    #[test]
    fn rfc9000_13_2_1_initial_and_handshake_acknowledged_immediately() {
        let t0 = t0();
        for kind in [SpaceKind::Initial, SpaceKind::Handshake] {
            let mut t = AckTracker::new(kind, AckConfig::default());
            recv(&mut t, t0, 0);
            assert!(t.wants_immediate_ack(), "{kind:?}");
            assert_eq!(t.ack_deadline(), Some(t0));
            assert!(t.ack_due(t0));
        }
        // Breaking the rule on purpose: the same packet in the Data space would wait max_ack_delay.
        let mut t = data();
        recv(&mut t, t0, 0);
        assert!(!t.ack_due(t0));
    }

    #[test]
    fn rfc9000_13_2_1_data_acknowledged_within_max_ack_delay() {
        let t0 = t0();
        let mut t = data();
        recv(&mut t, t0, 0);
        t.on_packet_received(t0 + MS, 1, false, EcnCodepoint::NotEct);
        // Never later than max_ack_delay after the first ack-eliciting packet, whatever else arrives.
        assert_eq!(t.ack_deadline(), Some(t0 + 25 * MS));
        assert!(t.ack_due(t0 + 25 * MS));
    }

    #[test]
    fn out_of_order_packet_acknowledged_immediately() {
        let t0 = t0();
        let mut t = data();
        recv(&mut t, t0, 0);
        recv(&mut t, t0, 1);
        write(&mut t, t0, None, 1200).1.unwrap();
        recv(&mut t, t0 + MS, 3); // 2 missing: gap
        assert!(t.wants_immediate_ack());
        write(&mut t, t0 + MS, None, 1200).1.unwrap();
        recv(&mut t, t0 + 2 * MS, 2); // below the largest ack-eliciting: reordered
        assert!(t.wants_immediate_ack());
        write(&mut t, t0 + 2 * MS, None, 1200).1.unwrap();
        recv(&mut t, t0 + 3 * MS, 4); // in order, no gap
        assert!(!t.wants_immediate_ack());
        assert_eq!(t.ack_deadline(), Some(t0 + 28 * MS));
    }

    #[test]
    fn gap_filled_by_non_ack_eliciting_packets_is_not_a_gap() {
        let t0 = t0();
        let mut t = data();
        recv(&mut t, t0, 0);
        write(&mut t, t0, None, 1200).1.unwrap();
        t.on_packet_received(t0, 1, false, EcnCodepoint::NotEct);
        t.on_packet_received(t0, 2, false, EcnCodepoint::NotEct);
        recv(&mut t, t0, 3);
        assert!(!t.wants_immediate_ack());
        // A real gap above the largest ack-eliciting packet.
        recv(&mut t, t0, 5);
        assert!(t.wants_immediate_ack());
    }

    #[test]
    fn first_packet_with_lower_numbers_missing_is_delayed() {
        // RFC 9000 §13.2.1 compares with ack-eliciting packets already received: with none, no gap rule.
        let t0 = t0();
        let mut t = data();
        recv(&mut t, t0, 7);
        assert!(!t.wants_immediate_ack());
    }

    #[test]
    fn ce_marked_packet_acknowledged_immediately() {
        let t0 = t0();
        let mut t = data();
        assert!(t.on_packet_received(t0, 0, true, EcnCodepoint::Ce));
        assert!(t.wants_immediate_ack());
        assert!(t.ack_due(t0));
    }

    #[test]
    fn rfc9000_13_2_1_non_ack_eliciting_never_triggers_an_ack() {
        let t0 = t0();
        for kind in [SpaceKind::Initial, SpaceKind::Handshake, SpaceKind::Data] {
            let mut t = AckTracker::new(kind, AckConfig::default());
            // Gaps, reordering and CE marks: none of them may make an ACK-only packet go out.
            for (pn, ecn) in [
                (5, EcnCodepoint::Ce),
                (0, EcnCodepoint::NotEct),
                (9, EcnCodepoint::Ce),
            ] {
                assert!(t.on_packet_received(t0, pn, false, ecn));
            }
            assert_eq!(t.ack_deadline(), None, "{kind:?}");
            assert!(!t.ack_due(t0 + Duration::from_secs(10)));
            assert!(!t.wants_immediate_ack());
            assert!(!t.ack_eliciting_pending());
            // They are still acknowledged when an ACK goes out for another reason.
            assert!(t.has_new_packets());
            let (bytes, w) = write(&mut t, t0, None, 1200);
            assert_eq!(w.unwrap().ranges, 3);
            assert_eq!(decode(&bytes).3, [(9, 9), (5, 5), (0, 0)]);
            assert!(!t.has_new_packets());
        }
    }

    #[test]
    fn rfc9000_13_2_1_one_ack_only_packet_per_ack_eliciting_packet() {
        let t0 = t0();
        let mut t = AckTracker::new(SpaceKind::Initial, AckConfig::default());
        recv(&mut t, t0, 0);
        assert!(t.ack_due(t0));
        write(&mut t, t0, None, 1200).1.unwrap();
        // Breaking the rule on purpose would mean sending another ACK-only packet: nothing asks for one.
        assert!(!t.ack_due(t0 + Duration::from_secs(1)));
        assert_eq!(t.ack_deadline(), None);
        assert!(!t.has_new_packets());
        // A duplicate does not re-arm it either.
        assert!(!recv(&mut t, t0, 0));
        assert_eq!(t.ack_deadline(), None);
        // The ranges are still there for the next ACK (it may piggyback on other frames).
        assert_eq!(ranges(&t), [(0, 0)]);
    }

    // ---- The frame ----------------------------------------------------------------------------------------

    fn hand_example(path: Option<PathId>) -> (Vec<u8>, AckWritten) {
        let t0 = t0();
        let mut t = data();
        for pn in [0, 1, 2, 5, 6, 7, 8] {
            recv(&mut t, t0, pn);
        }
        recv(&mut t, t0 + MS, 9);
        // 8 ms after pn 9 arrived, exponent 3: 8000 µs / 8 = 1000.
        let mut buf = Vec::new();
        let w = t.write_ack(t0 + 9 * MS, path, 3, &mut buf, 1200).unwrap();
        (buf, w)
    }

    #[test]
    fn ack_frame_hand_example() {
        // Received 0..=2 and 5..=9: Largest 9, ACK Delay 1000 (0x43e8), Range Count 1, First ACK Range 4
        // (9..=5), Gap 1 (5 - 2 - 2: packets 3 and 4 missing), ACK Range Length 2 (2..=0).
        let (bytes, w) = hand_example(None);
        assert_eq!(bytes, [0x02, 0x09, 0x43, 0xe8, 0x01, 0x04, 0x01, 0x02]);
        assert_eq!(
            w,
            AckWritten {
                largest: 9,
                len: 8,
                ranges: 2,
                truncated: false
            }
        );
        assert_eq!(decode(&bytes), (None, 9, 1000, vec![(5, 9), (0, 2)], None));
        // The same as PATH_ACK for path 3.
        let (bytes, w) = hand_example(Some(PathId(3)));
        assert_eq!(bytes, [0x3e, 0x03, 0x09, 0x43, 0xe8, 0x01, 0x04, 0x01, 0x02]);
        assert_eq!(w.len, 9);
        let (path, largest, delay, rs, ecn) = decode(&bytes);
        assert_eq!(
            (path, largest, delay, rs, ecn),
            (Some(PathId(3)), 9, 1000, vec![(5, 9), (0, 2)], None)
        );
    }

    #[test]
    fn ack_delay_scaling() {
        let t0 = t0();
        let mut t = data();
        assert_eq!(t.ack_delay(t0, 3), VarInt::ZERO);
        recv(&mut t, t0, 0);
        assert_eq!(t.ack_delay(t0 + 8 * MS, 0).into_inner(), 8000);
        assert_eq!(t.ack_delay(t0 + 8 * MS, 3).into_inner(), 1000);
        assert_eq!(t.ack_delay(t0 + 8 * MS, 20).into_inner(), 0);
        assert_eq!(t.ack_delay(t0 + Duration::from_secs(2), 200).into_inner(), 1); // exponent capped at 20
        assert_eq!(t.ack_delay(t0 - MS, 3), VarInt::ZERO); // clock before the receive time
        // The delay is measured from the largest packet, not from a reordered later one.
        recv(&mut t, t0 + 4 * MS, 10);
        recv(&mut t, t0 + 6 * MS, 5);
        assert_eq!(t.ack_delay(t0 + 8 * MS, 0).into_inner(), 4000);
    }

    #[test]
    fn one_pass_writer_matches_the_range_encoder() {
        // The tracker computes the Gap/ACK Range pairs itself; its bytes must be those `encode_ack` writes for
        // the same ranges, with PATH_ACK, ECN counts and gaps and lengths of one, two and four bytes.
        let t0 = t0();
        let mut t = data();
        // Ranges, largest first: 100_000..=100_070 (First ACK Range 70: 2 bytes), 90_000..=90_000 (Gap
        // 100_000 - 90_000 - 2 = 9_998: 2 bytes, length 0), 5..=9 (Gap 90_000 - 9 - 2 = 89_989: 4 bytes,
        // length 4), 0..=2 (Gap 5 - 2 - 2 = 1, length 2).
        let pns = (100_000..=100_070).chain([90_000]).chain(5..=9).chain(0..=2);
        for pn in pns {
            t.on_packet_received(t0, pn, true, EcnCodepoint::Ect0);
        }
        let (bytes, w) = write(&mut t, t0 + 8 * MS, Some(PathId(2)), 1200);
        let w = w.unwrap();
        let mut want = Vec::new();
        let ranges = [100_000..=100_070, 90_000..=90_000, 5..=9, 0..=2];
        let ecn = EcnCounts {
            ect0: VarInt::from_u32(80),
            ..EcnCounts::default()
        };
        // ACK Delay 8 ms = 8000 µs >> 3 = 1000.
        crate::proto::frame::encode_ack(
            &mut want,
            Some(PathId(2)),
            VarInt::from_u32(1000),
            &ranges,
            Some(&ecn),
        )
        .unwrap();
        assert_eq!(bytes, want);
        // Type 0x3f 1 byte, path 2 1, largest 100_070 4, delay 1000 2, count 3 1, first 70 2, pairs
        // 2+1, 4+1, 1+1, ECN counts 80 (71 + 1 + 5 + 3 packets, all ECT(0)), 0, 0: 2+1+1. 25 bytes.
        assert_eq!(bytes.len(), 25);
        assert_eq!(bytes[0], 0x3f);
        assert_eq!(
            (w.largest, w.len, w.ranges, w.truncated),
            (100_070, bytes.len(), 4, false)
        );
    }

    #[test]
    fn truncation_keeps_the_largest_ranges() {
        let t0 = t0();
        let mut t = data();
        // 20 single-packet ranges: 0, 2, 4, ..., 38.
        for pn in (0..40).step_by(2) {
            recv(&mut t, t0, pn);
        }
        let (full, w) = write(&mut t, t0, None, 1200);
        assert_eq!(w.unwrap().ranges, 20);
        // type, largest, delay, count, first = 5 bytes; each further range 2 bytes.
        assert_eq!(full.len(), 5 + 19 * 2);
        for max_len in [5, 6, 7, 9, 10, 20] {
            let (bytes, w) = write(&mut t, t0, None, max_len);
            let w = w.unwrap();
            assert!(bytes.len() <= max_len);
            assert_eq!(w.len, bytes.len());
            assert_eq!(w.ranges, 1 + (max_len - 5) / 2);
            assert!(w.truncated);
            let got = decode(&bytes).3;
            let want: Vec<_> = ranges(&t).into_iter().take(w.ranges).collect();
            assert_eq!(got, want);
            assert_eq!(got[0], (38, 38));
        }
        // Not even the first range fits.
        let (bytes, w) = write(&mut t, t0, None, 4);
        assert_eq!((bytes.len(), w), (0, None));
    }

    #[test]
    fn truncation_counts_a_growing_range_count() {
        // Range Count 63 takes one byte, 64 takes two: the limit must account for it.
        let t0 = t0();
        let cfg = AckConfig {
            max_ranges: 200,
            ..AckConfig::default()
        };
        let mut t = AckTracker::new(SpaceKind::Data, cfg);
        for pn in (0..200).step_by(2) {
            recv(&mut t, t0, pn);
        }
        let (full, _) = write(&mut t, t0, None, 1200);
        let first_len = 1 + 2 + 1; // type, largest 198 (2 bytes), delay
        assert_eq!(full.len(), first_len + 2 + 1 + 99 * 2);
        // Exactly 63 further ranges with a one-byte count: first_len + 1 + 1 + 63 * 2.
        let (bytes, w) = write(&mut t, t0, None, first_len + 2 + 63 * 2);
        assert_eq!(w.unwrap().ranges, 64);
        assert_eq!(bytes.len(), first_len + 2 + 63 * 2);
        // One more byte is not enough for a 64th further range (count grows to 2 bytes, pair is 2 bytes).
        let (bytes, w) = write(&mut t, t0, None, first_len + 2 + 63 * 2 + 2);
        assert_eq!(w.unwrap().ranges, 64);
        assert_eq!(decode(&bytes).3.len(), 64);
        let (bytes, w) = write(&mut t, t0, None, first_len + 3 + 64 * 2);
        assert_eq!(w.unwrap().ranges, 65);
        assert_eq!(bytes.len(), first_len + 3 + 64 * 2);
    }

    #[test]
    fn nothing_received_writes_nothing() {
        let mut t = data();
        let (bytes, w) = write(&mut t, t0(), None, 1200);
        assert_eq!((bytes.len(), w), (0, None));
    }

    // ---- Duplicates, pruning, bounds ----------------------------------------------------------------------

    #[test]
    fn duplicates_are_detected() {
        let t0 = t0();
        let mut t = data();
        assert!(!t.is_duplicate(3));
        assert!(recv(&mut t, t0, 3));
        assert!(t.is_duplicate(3));
        assert!(!recv(&mut t, t0 + MS, 3));
        assert!(!t.is_duplicate(2));
        assert!(t.is_duplicate(1 << 62)); // beyond the packet-number space
        assert!(!t.on_packet_received(t0, u64::MAX, true, EcnCodepoint::NotEct));
        assert_eq!(t.largest_received(), Some(3));
        assert_eq!(t.largest_received_time(), Some(t0));
    }

    #[test]
    fn pruning_forgets_acknowledged_ranges() {
        let t0 = t0();
        let mut t = data();
        for pn in [0, 1, 2, 5, 6, 9] {
            recv(&mut t, t0, pn);
        }
        let (_, w) = write(&mut t, t0, None, 1200);
        let sent_largest = w.unwrap().largest;
        assert_eq!(sent_largest, 9);
        recv(&mut t, t0, 10);
        recv(&mut t, t0, 12);
        // The ACK frame that acknowledged up to 5 was acknowledged (an older one, say).
        t.on_ack_frame_acked(5);
        assert_eq!(ranges(&t), [(12, 12), (9, 10), (6, 6)]);
        assert_eq!(t.floor(), 6);
        t.on_ack_frame_acked(sent_largest);
        assert_eq!(ranges(&t), [(12, 12), (10, 10)]);
        // An older ACK-of-ACK arriving late changes nothing.
        t.on_ack_frame_acked(2);
        assert_eq!(ranges(&t), [(12, 12), (10, 10)]);
        // A packet in a forgotten range that was never received is now a duplicate, 11 is not.
        assert!(t.is_duplicate(7));
        assert!(!t.is_duplicate(11));
    }

    #[test]
    fn rfc9000_13_2_3_must_retain_range_unless_never_accepted_again() {
        let t0 = t0();
        let mut t = data();
        for pn in 0..5 {
            recv(&mut t, t0, pn);
        }
        let (_, w) = write(&mut t, t0, None, 1200);
        t.on_ack_frame_acked(w.unwrap().largest);
        assert!(t.ranges().is_empty());
        // Breaking the rule on purpose: re-delivering a forgotten packet. It must not be accepted again.
        for pn in 0..5 {
            assert!(t.is_duplicate(pn), "pn {pn}");
            assert!(!recv(&mut t, t0, pn));
        }
        assert!(t.ranges().is_empty());
        assert_eq!(t.ack_deadline(), None);
    }

    #[test]
    fn rfc9000_13_2_3_must_retain_largest_received_after_discarding_ranges() {
        let t0 = t0();
        let mut t = data();
        recv(&mut t, t0, 41);
        t.on_ack_frame_acked(41);
        assert!(t.ranges().is_empty());
        assert_eq!(t.largest_received(), Some(41));
        // And the next ACK still carries only what is new.
        recv(&mut t, t0, 42);
        let (bytes, _) = write(&mut t, t0, None, 1200);
        assert_eq!(decode(&bytes).3, [(42, 42)]);
    }

    #[test]
    fn pruning_everything_clears_a_pending_ack() {
        let t0 = t0();
        let mut t = data();
        recv(&mut t, t0, 5);
        write(&mut t, t0, None, 1200).1.unwrap();
        recv(&mut t, t0, 3); // reordered, after the ACK up to 5 was sent
        assert!(t.ack_eliciting_pending());
        t.on_ack_frame_acked(5);
        assert!(!t.ack_eliciting_pending());
        assert_eq!(write(&mut t, t0, None, 1200).1, None);
    }

    #[test]
    fn range_bound_drops_lowest_and_treats_them_as_duplicates() {
        let t0 = t0();
        let cfg = AckConfig {
            max_ranges: 3,
            ..AckConfig::default()
        };
        let mut t = AckTracker::new(SpaceKind::Data, cfg);
        for pn in [0, 2, 4, 6, 8] {
            recv(&mut t, t0, pn);
        }
        assert_eq!(ranges(&t), [(8, 8), (6, 6), (4, 4)]);
        assert_eq!(t.floor(), 3);
        assert!(t.is_duplicate(0) && t.is_duplicate(1) && t.is_duplicate(2));
        assert!(!t.is_duplicate(3) && !t.is_duplicate(5));
        assert!(recv(&mut t, t0, 5));
        assert_eq!(ranges(&t), [(8, 8), (4, 6)]);
    }

    // ---- ECN ----------------------------------------------------------------------------------------------

    #[test]
    fn ecn_codepoint_bits() {
        for bits in 0..4u8 {
            assert_eq!(EcnCodepoint::from_bits(bits).bits(), bits);
            assert_eq!(EcnCodepoint::from_bits(0xfc | bits).bits(), bits);
        }
        assert_eq!(EcnCodepoint::from_bits(0b10), EcnCodepoint::Ect0);
        assert_eq!(EcnCodepoint::from_bits(0b01), EcnCodepoint::Ect1);
    }

    #[test]
    fn ecn_counts_are_reported() {
        let t0 = t0();
        let mut t = data();
        t.on_packet_received(t0, 0, true, EcnCodepoint::NotEct);
        assert_eq!(t.ecn_counts(), None);
        let (bytes, _) = write(&mut t, t0, None, 1200);
        assert_eq!(bytes[0], 0x02); // plain ACK while nothing was marked
        let marks = [
            EcnCodepoint::Ect0,
            EcnCodepoint::Ect0,
            EcnCodepoint::Ect1,
            EcnCodepoint::Ce,
            EcnCodepoint::NotEct,
        ];
        for (pn, ecn) in (1..).zip(marks) {
            t.on_packet_received(t0, pn, pn % 2 == 0, ecn);
        }
        let want = EcnCounts {
            ect0: VarInt::from_u32(2),
            ect1: VarInt::from_u32(1),
            ce: VarInt::from_u32(1),
        };
        assert_eq!(t.ecn_counts(), Some(want));
        let (bytes, _) = write(&mut t, t0, None, 1200);
        assert_eq!(bytes[0], 0x03); // ACK_ECN
        assert_eq!(decode(&bytes).4, Some(want));
        assert_eq!(bytes[bytes.len() - 3..], [2, 1, 1]);
        let (bytes, _) = {
            recv(&mut t, t0, 9);
            write(&mut t, t0, Some(PathId(1)), 1200)
        };
        assert_eq!(bytes[0], 0x3f); // PATH_ACK_ECN
    }

    #[test]
    fn rfc9000_13_4_1_duplicates_do_not_increase_ecn_counts() {
        let t0 = t0();
        let mut t = data();
        assert!(t.on_packet_received(t0, 0, true, EcnCodepoint::Ce));
        // Breaking the rule on purpose: the same packet again, with a mark.
        assert!(!t.on_packet_received(t0, 0, true, EcnCodepoint::Ce));
        assert!(!t.on_packet_received(t0, 0, true, EcnCodepoint::Ect0));
        let ecn = t.ecn_counts().unwrap();
        assert_eq!(
            (ecn.ect0, ecn.ect1, ecn.ce),
            (VarInt::ZERO, VarInt::ZERO, VarInt::from_u32(1))
        );
    }

    // ---- Properties ---------------------------------------------------------------------------------------

    #[derive(Debug, Clone)]
    enum Op {
        Recv {
            pn: u64,
            eliciting: bool,
            ecn: u8,
            dt: u64,
        },
        Write {
            max_len: usize,
            path: Option<u32>,
            exp: u8,
        },
        AckOfAck(usize),
    }

    fn any_op() -> impl Strategy<Value = Op> {
        prop_oneof![
            8 => (0u64..300, any::<bool>(), 0u8..4, 0u64..5000).prop_map(|(pn, eliciting, ecn, dt)| Op::Recv {
                pn,
                eliciting,
                ecn,
                dt
            }),
            2 => (prop_oneof![0usize..12, 12usize..64, Just(1200)], proptest::option::of(0u32..5), 0u8..25)
                .prop_map(|(max_len, path, exp)| Op::Write { max_len, path, exp }),
            1 => any::<usize>().prop_map(Op::AckOfAck),
        ]
    }

    fn kind() -> impl Strategy<Value = SpaceKind> {
        prop_oneof![
            Just(SpaceKind::Initial),
            Just(SpaceKind::Handshake),
            Just(SpaceKind::Data)
        ]
    }

    proptest! {
        /// Random receive orders, ACKs and ACK-of-ACKs: never panics; the tracked set is exactly the packets
        /// processed at or above the floor, within the range bound; every frame decodes to the tracker's
        /// largest ranges, has the predicted length and fits its limit; ECN counts match the processed
        /// packets.
        #[test]
        fn random_receive_orders(
            kind in kind(),
            max_ranges in prop_oneof![Just(64usize), 1usize..8],
            threshold in 0u64..4,
            ops in proptest::collection::vec(any_op(), 0..200),
        ) {
            let t0 = t0();
            let cfg = AckConfig { max_ranges, ack_eliciting_threshold: threshold, ..AckConfig::default() };
            let mut t = AckTracker::new(kind, cfg);
            let mut now = t0;
            let mut processed = BTreeSet::new();
            let mut ecn = [0u64; 3];
            let mut sent_largest = Vec::new();
            let mut ever_pruned = false;
            let mut ever_exceeded = false;
            for op in ops {
                match op {
                    Op::Recv { pn, eliciting, ecn: bits, dt } => {
                        now += Duration::from_micros(dt);
                        let dup = t.is_duplicate(pn);
                        prop_assert!(!processed.contains(&pn) || dup);
                        prop_assert_eq!(dup, processed.contains(&pn) || pn < t.floor());
                        let ecn_bits = EcnCodepoint::from_bits(bits);
                        let accepted = t.on_packet_received(now, pn, eliciting, ecn_bits);
                        prop_assert_eq!(accepted, !dup);
                        if accepted {
                            processed.insert(pn);
                            let mut model = crate::proto::range_set::RangeSet::new();
                            for &x in &processed {
                                model.insert(x);
                            }
                            ever_exceeded |= model.len() > max_ranges;
                            match bits {
                                0b10 => ecn[0] += 1,
                                0b01 => ecn[1] += 1,
                                0b11 => ecn[2] += 1,
                                _ => {}
                            }
                            if eliciting {
                                let d = t.ack_deadline().unwrap();
                                prop_assert!(d <= now + cfg.max_ack_delay);
                            }
                        }
                    }
                    Op::Write { max_len, path, exp } => {
                        let path = path.map(PathId);
                        let want: Vec<_> = t.ranges().iter_desc().map(|r| r.into_inner()).collect();
                        let delay = t.ack_delay(now, exp);
                        let mut buf = Vec::new();
                        match t.write_ack(now, path, exp, &mut buf, max_len) {
                            None => {
                                prop_assert!(buf.is_empty());
                                prop_assert!(want.is_empty() || max_len < 24);
                            }
                            Some(w) => {
                                prop_assert_eq!(w.len, buf.len());
                                prop_assert!(buf.len() <= max_len);
                                let (p, largest, d, got, e) = decode(&buf);
                                prop_assert_eq!(p, path);
                                prop_assert_eq!(largest, w.largest);
                                prop_assert_eq!(Some(largest), t.largest_received());
                                prop_assert_eq!(d, delay.into_inner());
                                prop_assert_eq!(got.len(), w.ranges);
                                prop_assert_eq!(&got[..], &want[..w.ranges]);
                                prop_assert_eq!(w.truncated, w.ranges < want.len());
                                prop_assert_eq!(e, t.ecn_counts());
                                prop_assert_eq!(t.ack_deadline(), None);
                                sent_largest.push(w.largest);
                            }
                        }
                    }
                    Op::AckOfAck(i) => {
                        if !sent_largest.is_empty() {
                            t.on_ack_frame_acked(sent_largest[i % sent_largest.len()]);
                            ever_pruned = true;
                        }
                    }
                }
                let floor = t.floor();
                let want: Vec<u64> = processed.range(floor..).copied().collect();
                let got: Vec<u64> = t.ranges().iter().flatten().collect();
                prop_assert_eq!(got, want);
                prop_assert!(t.ranges().len() <= max_ranges);
                prop_assert_eq!(t.largest_received(), processed.last().copied());
                if !ever_pruned && !ever_exceeded {
                    prop_assert_eq!(floor, 0);
                }
                let counts = t.ecn_counts().map(|e| [e.ect0, e.ect1, e.ce].map(VarInt::into_inner));
                prop_assert_eq!(counts.unwrap_or([0; 3]), ecn);
            }
        }
    }
}
