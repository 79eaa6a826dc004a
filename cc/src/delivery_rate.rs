//! Delivery-rate estimation for one path, per draft-cheng-iccrg-delivery-rate-estimation (the algorithm of
//! Linux `tcp_rate.c`), mapped to QUIC (the BBRv1 draft's QUIC notes).
//!
//! The connection's recovery layer owns one [`DeliveryRateEstimator`] per path and calls it as follows:
//! * [`DeliveryRateEstimator::on_packet_sent`] for every packet that counts in bytes in flight, with the bytes
//!   in flight **before** the packet; it returns the [`PacketDeliveryState`] to store with the sent packet;
//! * [`DeliveryRateEstimator::on_app_limited`] when the sender finds it has nothing to send although the window
//!   has room (the draft's `CheckIfApplicationLimited`);
//! * for each acknowledgement: [`DeliveryRateEstimator::on_packet_acked`] for every newly acknowledged packet,
//!   then [`DeliveryRateEstimator::on_packets_lost`] for the packets loss detection declared lost while
//!   processing it, then [`DeliveryRateEstimator::generate_sample`], whose result goes into
//!   [`crate::AckEvent::rate_sample`].
//!
//! Choices where the draft is silent or TCP-specific:
//! * "No packets in flight" (`SND.NXT == SND.UNA`) is `bytes_in_flight_before_send == 0`.
//! * QUIC never acknowledges a packet twice, so the draft's `P.delivered_time = 0` marking (against SACK then
//!   cumulative ACK) is not needed.
//! * The newest packet of an acknowledgement (the one the sample is based on) is the one sent last; among
//!   packets with the same send time, the last one passed in (packet-number order), as in Linux.
//! * A sample whose interval is zero yields no rate (the draft leaves `delivery_rate` undefined): `None`.
//! * `RateSample::rtt` is the RTT of the newest acknowledged packet (`now - P.sent_time`).
//!
//! Arithmetic is saturating and the rate is computed in `u128`, so no byte count or time can overflow.

use std::time::{Duration, Instant};

use crate::RateSample;

/// The per-packet snapshot the connection stores with each sent packet (the draft's `P.delivered`,
/// `P.delivered_time`, `P.first_sent_time`, `P.is_app_limited`, plus the send time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketDeliveryState {
    /// `C.delivered` when the packet was sent: bytes delivered on the path so far.
    pub delivered: u64,
    /// `C.delivered_time` when the packet was sent.
    pub delivered_time: Instant,
    /// `C.first_sent_time` when the packet was sent: the send time of the start of the current flight.
    pub first_sent_time: Instant,
    /// The packet was sent while the path was application-limited.
    pub is_app_limited: bool,
    /// When the packet was sent.
    pub sent_time: Instant,
}

/// The sample being built from the packets of one acknowledgement (the draft's `rs` before generation).
///
/// The elapsed times are kept as their end points and computed once, when the sample is generated: most
/// packets of an acknowledgement replace the pending sample before that.
#[derive(Clone, Copy, Debug)]
struct PendingSample {
    prior_delivered: u64,
    is_app_limited: bool,
    /// `rs.send_elapsed` = `newest_sent_time − first_sent_time`.
    first_sent_time: Instant,
    /// `rs.ack_elapsed` = `acked_at − prior_delivered_time`.
    acked_at: Instant,
    prior_delivered_time: Instant,
    newest_sent_time: Instant,
}

impl PendingSample {
    fn send_elapsed(&self) -> Duration {
        self.newest_sent_time
            .saturating_duration_since(self.first_sent_time)
    }

    fn ack_elapsed(&self) -> Duration {
        self.acked_at.saturating_duration_since(self.prior_delivered_time)
    }
}

/// Per-path delivery-rate estimator (the draft's connection state `C.*`).
#[derive(Clone, Debug, Default)]
pub struct DeliveryRateEstimator {
    /// `C.delivered`: total bytes delivered.
    delivered: u64,
    /// `C.delivered_time`: when `delivered` last changed (or the flight started).
    delivered_time: Option<Instant>,
    /// `C.first_sent_time`: send time of the newest packet acknowledged so far (or the flight start).
    first_sent_time: Option<Instant>,
    /// `C.app_limited`: 0 when not application-limited, else the `delivered` value that ends the bubble.
    app_limited: u64,
    /// `C.lost`: total bytes declared lost.
    lost: u64,
    pending: Option<PendingSample>,
    newly_acked: u64,
    newly_lost: u64,
}

impl DeliveryRateEstimator {
    /// A fresh estimator for a new path.
    pub fn new() -> Self {
        Self::default()
    }

    /// `C.delivered`: total bytes delivered (acknowledged) on the path.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// `C.lost`: total bytes declared lost on the path.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// Whether the path is currently marked application-limited (`C.app_limited != 0`).
    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// The draft's `SendPacket`: snapshot of the delivery state for a packet sent at `now`, when
    /// `bytes_in_flight_before_send` bytes were already in flight on the path.
    pub fn on_packet_sent(&mut self, now: Instant, bytes_in_flight_before_send: u64) -> PacketDeliveryState {
        // Draft §3.2: "if (SND.NXT == SND.UNA) C.first_sent_time = C.delivered_time = Now()": a new flight
        // starts, so the send and ack intervals are measured from here.
        if bytes_in_flight_before_send == 0 || self.first_sent_time.is_none() {
            self.first_sent_time = Some(now);
            self.delivered_time = Some(now);
        }
        PacketDeliveryState {
            delivered: self.delivered,
            delivered_time: self.delivered_time.unwrap_or(now),
            first_sent_time: self.first_sent_time.unwrap_or(now),
            is_app_limited: self.app_limited != 0,
            sent_time: now,
        }
    }

    /// The draft's `CheckIfApplicationLimited` conclusion: the sender is application-limited with
    /// `bytes_in_flight` in flight; packets sent until the bubble is delivered are marked app-limited.
    /// `C.app_limited = (C.delivered + C.pipe) ? : 1`.
    pub fn on_app_limited(&mut self, bytes_in_flight: u64) {
        self.app_limited = self.delivered.saturating_add(bytes_in_flight).max(1);
    }

    /// The draft's `UpdateRateSample`: a packet of `bytes` bytes, sent with snapshot `p`, was acknowledged at
    /// `now`.
    pub fn on_packet_acked(&mut self, now: Instant, p: &PacketDeliveryState, bytes: u64) {
        self.delivered = self.delivered.saturating_add(bytes);
        self.delivered_time = Some(now);
        self.newly_acked = self.newly_acked.saturating_add(bytes);
        // Update the sample from the newest packet (the one sent last).
        let newest = self.pending.is_none_or(|rs| p.sent_time >= rs.newest_sent_time);
        if newest {
            self.pending = Some(PendingSample {
                prior_delivered: p.delivered,
                is_app_limited: p.is_app_limited,
                first_sent_time: p.first_sent_time,
                acked_at: now,
                prior_delivered_time: p.delivered_time,
                newest_sent_time: p.sent_time,
            });
            self.first_sent_time = Some(p.sent_time);
        }
    }

    /// Packets totalling `bytes` were declared lost (`C.lost += bytes`); reported in the next sample's
    /// `newly_lost`.
    pub fn on_packets_lost(&mut self, bytes: u64) {
        self.lost = self.lost.saturating_add(bytes);
        self.newly_lost = self.newly_lost.saturating_add(bytes);
    }

    /// The draft's `GenerateRateSample`, once per acknowledgement after its packets were passed to
    /// [`Self::on_packet_acked`].
    ///
    /// `prior_in_flight` is the bytes in flight before the acknowledgement was processed; `min_rtt` is the
    /// path's minimum RTT (RFC 9002 `min_rtt`), if known. Returns `None` when nothing was delivered, when the
    /// interval is zero, or when the interval is shorter than `min_rtt` (draft §3.3: "no reliable sample").
    pub fn generate_sample(
        &mut self,
        now: Instant,
        prior_in_flight: u64,
        min_rtt: Option<Duration>,
    ) -> Option<RateSample> {
        // Clear the app-limited mark once the bubble has been delivered.
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let newly_acked = std::mem::take(&mut self.newly_acked);
        let newly_lost = std::mem::take(&mut self.newly_lost);
        let rs = self.pending.take()?;
        // Draft §3.3: "rs.interval = max(rs.send_elapsed, rs.ack_elapsed)": the slower of the send and ack
        // rates bounds the delivery rate (protects against ACK compression and against send bursts).
        let interval = rs.send_elapsed().max(rs.ack_elapsed());
        let delivered = self.delivered.saturating_sub(rs.prior_delivered);
        // Draft §3.3: "if (rs.interval < MinRTT(tp)) ... return false /* no reliable sample */".
        if min_rtt.is_some_and(|m| interval < m) || interval.is_zero() {
            return None;
        }
        let rate = u128::from(delivered) * 1_000_000_000 / interval.as_nanos().max(1);
        Some(RateSample {
            delivery_rate: u64::try_from(rate).unwrap_or(u64::MAX),
            delivered,
            interval,
            prior_delivered: rs.prior_delivered,
            total_delivered: self.delivered,
            rtt: now.saturating_duration_since(rs.newest_sent_time),
            is_app_limited: rs.is_app_limited,
            prior_in_flight,
            newly_acked,
            newly_lost,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(clippy::disallowed_methods)] // test set-up needs a base instant
    fn t0() -> Instant {
        Instant::now()
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn ten_packets_one_ms_apart_acked_fifty_ms_later() {
        let t0 = t0();
        let mut e = DeliveryRateEstimator::new();
        let mut sent = Vec::new();
        for i in 0..10u64 {
            sent.push(e.on_packet_sent(t0 + ms(i), i * 1200));
        }
        // Every packet of the first flight snapshots delivered = 0 and delivered_time = first_sent_time = t0.
        assert!(
            sent.iter()
                .all(|p| p.delivered == 0 && p.delivered_time == t0 && p.first_sent_time == t0)
        );
        // Packet i is acknowledged alone at i + 50 ms.
        let mut rates = Vec::new();
        for (i, p) in sent.iter().enumerate() {
            let now = t0 + ms(50 + i as u64);
            e.on_packet_acked(now, p, 1200);
            let prior = (10 - i as u64) * 1200;
            let s = e.generate_sample(now, prior, Some(ms(50))).expect("sample");
            assert_eq!(s.newly_acked, 1200);
            assert_eq!(s.prior_delivered, 0);
            assert_eq!(s.total_delivered, 1200 * (i as u64 + 1));
            assert_eq!(s.rtt, ms(50));
            assert_eq!(s.prior_in_flight, prior);
            rates.push(s);
        }
        // Packet 0 at 50 ms: send_elapsed 0, ack_elapsed 50 ms: 1200 B / 0.050 s = 24 000 B/s.
        assert_eq!(rates[0].interval, ms(50));
        assert_eq!(rates[0].delivery_rate, 24_000);
        // Packet 9 at 59 ms: send_elapsed 9 ms, ack_elapsed 59 ms, delivered 12 000 B:
        // 12 000 / 0.059 = 203 389.8 → 203 389 B/s.
        assert_eq!(rates[9].interval, ms(59));
        assert_eq!(rates[9].delivered, 12_000);
        assert_eq!(rates[9].delivery_rate, 203_389);
        assert!(!rates[9].is_app_limited);

        // Second flight: 10 packets sent 1 ms apart from 60 ms (nothing in flight at 60 ms, so a new flight
        // starts: first_sent_time = delivered_time = 60 ms), all acknowledged by ONE ack at 110 ms.
        let mut sent2 = Vec::new();
        for i in 0..10u64 {
            sent2.push(e.on_packet_sent(t0 + ms(60 + i), i * 1200));
        }
        assert!(sent2.iter().all(|p| p.delivered == 12_000));
        let now = t0 + ms(110);
        for p in &sent2 {
            e.on_packet_acked(now, p, 1200);
        }
        let s = e.generate_sample(now, 12_000, Some(ms(50))).unwrap();
        // Newest packet (sent at 69 ms): send_elapsed = 69 - 60 = 9 ms, ack_elapsed = 110 - 60 = 50 ms.
        // delivered = 24 000 - 12 000 = 12 000 B over 50 ms = 240 000 B/s; rtt = 110 - 69 = 41 ms.
        assert_eq!(s.interval, ms(50));
        assert_eq!(s.delivered, 12_000);
        assert_eq!(s.delivery_rate, 240_000);
        assert_eq!(s.rtt, ms(41));
        assert_eq!(s.newly_acked, 12_000);
        assert_eq!(s.total_delivered, 24_000);
    }

    /// Builds the ACK-compression scenario: returns the estimator with P5 acknowledged at 60 ms and not yet
    /// sampled.
    fn ack_compression(t0: Instant) -> DeliveryRateEstimator {
        let mut e = DeliveryRateEstimator::new();
        // P0..P4 sent at 0..4 ms (flight starts at 0: delivered 0, delivered_time 0, first_sent 0).
        let p: Vec<_> = (0..5u64)
            .map(|i| e.on_packet_sent(t0 + ms(i), i * 1200))
            .collect();
        // P0 acked at 50 ms: delivered 1200, delivered_time 50, first_sent_time = P0.sent = 0.
        e.on_packet_acked(t0 + ms(50), &p[0], 1200);
        assert!(e.generate_sample(t0 + ms(50), 6000, None).is_some());
        // P5 sent at 50 ms with P1..P4 in flight: delivered 1200, delivered_time 50, first_sent_time 0.
        let p5 = e.on_packet_sent(t0 + ms(50), 4800);
        assert_eq!(
            (p5.delivered, p5.delivered_time, p5.first_sent_time),
            (1200, t0 + ms(50), t0)
        );
        // P1..P4 acked at 51..54 ms (delivered becomes 6000).
        for (i, pk) in p.iter().enumerate().skip(1) {
            let now = t0 + ms(50 + i as u64);
            e.on_packet_acked(now, pk, 1200);
            e.generate_sample(now, 6000, None);
        }
        // P5 acked at 60 ms: delivered 7200.
        e.on_packet_acked(t0 + ms(60), &p5, 1200);
        e
    }

    #[test]
    fn interval_is_max_of_send_and_ack_elapsed() {
        let t0 = t0();
        let mut e = ack_compression(t0);
        let s = e.generate_sample(t0 + ms(60), 1200, Some(ms(50))).unwrap();
        // send_elapsed = 50 - 0 = 50 ms, ack_elapsed = 60 - 50 = 10 ms: interval = max = 50 ms.
        // delivered = 7200 - 1200 = 6000 B: 6000 / 0.050 = 120 000 B/s (the ack rate alone, 6000 / 0.010 =
        // 600 000 B/s, would overestimate by 5×).
        assert_eq!(s.interval, ms(50));
        assert_eq!(s.delivered, 6000);
        assert_eq!(s.delivery_rate, 120_000);
        assert_eq!(s.rtt, ms(10));
    }

    #[test]
    fn samples_shorter_than_min_rtt_are_discarded() {
        let t0 = t0();
        let mut e = ack_compression(t0);
        // Same sample (interval 50 ms) with min_rtt 60 ms: 50 < 60, no reliable sample.
        assert_eq!(e.generate_sample(t0 + ms(60), 1200, Some(ms(60))), None);
        // The sample is consumed: asking again without new acks yields nothing.
        assert_eq!(e.generate_sample(t0 + ms(60), 0, None), None);
        // Nothing acknowledged at all: no sample.
        let mut fresh = DeliveryRateEstimator::new();
        assert_eq!(fresh.generate_sample(t0, 0, None), None);
    }

    #[test]
    fn app_limited_marking_and_clearing() {
        let t0 = t0();
        let mut e = DeliveryRateEstimator::new();
        let a = e.on_packet_sent(t0, 0);
        let b = e.on_packet_sent(t0 + ms(1), 1200);
        assert!(!a.is_app_limited && !b.is_app_limited);
        // The sender runs out of data with 2400 B in flight and delivered = 0: C.app_limited = 0 + 2400.
        e.on_app_limited(2400);
        assert!(e.is_app_limited());
        let c = e.on_packet_sent(t0 + ms(2), 2400);
        assert!(c.is_app_limited);
        // a and b acked at 40/41 ms: delivered 2400, not > 2400, so still app-limited; their samples are not.
        e.on_packet_acked(t0 + ms(40), &a, 1200);
        assert!(!e.generate_sample(t0 + ms(40), 3600, None).unwrap().is_app_limited);
        e.on_packet_acked(t0 + ms(41), &b, 1200);
        assert!(!e.generate_sample(t0 + ms(41), 2400, None).unwrap().is_app_limited);
        assert!(e.is_app_limited());
        let d = e.on_packet_sent(t0 + ms(42), 1200);
        assert!(d.is_app_limited);
        // c acked at 42 ms: delivered 3600 > 2400, the bubble is gone; c's own sample is app-limited.
        e.on_packet_acked(t0 + ms(42), &c, 1200);
        let s = e.generate_sample(t0 + ms(42), 2400, None).unwrap();
        assert!(s.is_app_limited);
        assert!(!e.is_app_limited());
        let f = e.on_packet_sent(t0 + ms(43), 1200);
        assert!(!f.is_app_limited);
        // With nothing delivered and nothing in flight, the mark is 1, never 0 (draft: "? : 1").
        let mut g = DeliveryRateEstimator::new();
        g.on_app_limited(0);
        assert!(g.is_app_limited());
    }

    #[test]
    fn losses_are_reported_once_and_counted() {
        let t0 = t0();
        let mut e = DeliveryRateEstimator::new();
        let a = e.on_packet_sent(t0, 0);
        e.on_packet_sent(t0 + ms(1), 1200);
        e.on_packet_acked(t0 + ms(30), &a, 1200);
        e.on_packets_lost(1200);
        let s = e.generate_sample(t0 + ms(30), 2400, None).unwrap();
        assert_eq!((s.newly_acked, s.newly_lost), (1200, 1200));
        assert_eq!(e.lost(), 1200);
        assert_eq!(e.delivered(), 1200);
        // Huge byte counts saturate instead of overflowing.
        e.on_packets_lost(u64::MAX);
        assert_eq!(e.lost(), u64::MAX);
        let p = e.on_packet_sent(t0 + ms(31), 0);
        e.on_packet_acked(t0 + ms(60), &p, u64::MAX);
        let s = e.generate_sample(t0 + ms(60), 0, None).unwrap();
        assert_eq!(s.total_delivered, u64::MAX);
        assert_eq!(s.newly_lost, u64::MAX);
    }
}
