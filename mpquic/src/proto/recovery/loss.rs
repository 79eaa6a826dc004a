//! Loss detection (RFC 9002 §6): the packet and time thresholds, the probe timeout and persistent congestion
//! (§7.6), as pure functions over one packet-number space's [`SentPackets`] and the path's [`RttEstimator`].
//!
//! [`super::PathRecovery`] calls them and turns their results into congestion-controller events; keeping the
//! rules here, free of connection state, lets the tests check each against hand-computed numbers.

use std::time::{Duration, Instant};

use super::rtt::{GRANULARITY, RttEstimator};
use super::sent::{SentPacket, SentPackets};

/// RFC 9002 §6.1.1 `kPacketThreshold`: "The RECOMMENDED initial value for the packet reordering threshold
/// (kPacketThreshold) is 3 ... implementations SHOULD NOT use a packet threshold less than 3".
pub const PACKET_THRESHOLD: u64 = 3;

/// RFC 9002 §7.6.1 `kPersistentCongestionThreshold` (RECOMMENDED 3).
pub const PERSISTENT_CONGESTION_THRESHOLD: u32 = 3;

/// Largest PTO backoff exponent applied: beyond `2^16` the period is far past any idle timeout.
const MAX_BACKOFF_EXPONENT: u32 = 16;

/// The packets a loss-detection pass declared lost, and the time at which the next one may be (the loss
/// timer of RFC 9002 §6.1.2).
#[derive(Debug)]
pub struct DetectedLoss<T> {
    /// Packets declared lost, in packet-number order.
    pub lost: Vec<(u64, SentPacket<T>)>,
    /// When the earliest packet not yet lost will cross the time threshold, if any packet below the largest
    /// acknowledged is still outstanding.
    pub loss_time: Option<Instant>,
}

/// RFC 9002 §6.1 / Appendix A.10 `DetectAndRemoveLostPackets` for one space.
///
/// A packet numbered at most `largest_acked` is lost if it was sent at least the time threshold ago
/// (§6.1.2: "max(kTimeThreshold * max(smoothed_rtt, latest_rtt), kGranularity)") or if `packet_threshold` packets
/// after it were acknowledged (§6.1.1: "the packet ... was sent kPacketThreshold packets before an acknowledged
/// packet"). For the others, §6.1.2: "If packets sent prior to the largest acknowledged packet cannot yet be
/// declared lost, then a timer SHOULD be set for the remaining time": `loss_time` is that timer.
pub fn detect_lost<T>(
    sent: &mut SentPackets<T>,
    largest_acked: Option<u64>,
    now: Instant,
    rtt: &RttEstimator,
    packet_threshold: u64,
) -> DetectedLoss<T> {
    let Some(largest_acked) = largest_acked else {
        return DetectedLoss {
            lost: Vec::new(),
            loss_time: None,
        };
    };
    let loss_delay = rtt.loss_delay();
    // Packets sent at or before this instant are lost by time; `None` when `now` is too close to the clock's
    // origin for any packet to be that old.
    let lost_send_time = now.checked_sub(loss_delay);
    let mut loss_time: Option<Instant> = None;
    let lost = sent.drain_lost(largest_acked, |pn, p| {
        let by_time = lost_send_time.is_some_and(|t| p.time_sent <= t);
        let by_count = largest_acked >= pn.saturating_add(packet_threshold);
        if by_time || by_count {
            return true;
        }
        if let Some(t) = p.time_sent.checked_add(loss_delay) {
            loss_time = Some(loss_time.map_or(t, |l| l.min(t)));
        }
        false
    });
    DetectedLoss { lost, loss_time }
}

/// RFC 9002 §6.2.1 PTO period: `(smoothed_rtt + max(4·rttvar, kGranularity) + max_ack_delay) · 2^pto_count`.
///
/// `max_ack_delay` is zero for the Initial and Handshake spaces ("the max_ack_delay in the PTO period
/// computation is set to 0"). The result saturates at [`Duration::MAX`]. It is at least `kGranularity`
/// ("The PTO period MUST be at least kGranularity").
pub fn pto_period(rtt: &RttEstimator, max_ack_delay: Duration, pto_count: u32) -> Duration {
    let base = rtt.pto_base().saturating_add(max_ack_delay).max(GRANULARITY);
    if pto_count == 0 {
        // No backoff (the usual case): skip the multiplication by 1 and its normalisation.
        return base;
    }
    base.saturating_mul(1 << pto_count.min(MAX_BACKOFF_EXPONENT))
}

/// RFC 9002 §7.6.1 persistent congestion duration:
/// `(smoothed_rtt + max(4·rttvar, kGranularity) + max_ack_delay) · kPersistentCongestionThreshold`, with
/// `max_ack_delay` "irrespective of the packet number spaces in which losses are established".
pub fn persistent_congestion_duration(rtt: &RttEstimator, max_ack_delay: Duration) -> Duration {
    rtt.pto_base()
        .saturating_add(max_ack_delay)
        .saturating_mul(PERSISTENT_CONGESTION_THRESHOLD)
}

/// What [`persistent_congestion`] needs to know about one lost packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LostInfo {
    /// Packet number.
    pub pn: u64,
    /// Send time.
    pub time_sent: Instant,
    /// Whether it was ack-eliciting.
    pub ack_eliciting: bool,
}

/// RFC 9002 §7.6.2: whether the packets declared lost by one pass (in packet-number order) establish
/// persistent congestion.
///
/// "A sender establishes persistent congestion after the receipt of an acknowledgment if two packets that are
/// ack-eliciting are declared lost, and: across all packet number spaces, none of the packets sent between the
/// send times of these two packets are acknowledged; the duration between the send times of these two packets
/// exceeds the persistent congestion duration (Section 7.6.1); and a prior RTT sample existed when these two
/// packets were sent." `acked_between(a, b)` says whether a packet numbered strictly between `a` and `b` was
/// acknowledged. Only the space that was acknowledged is considered (the MAY of §7.6.2); packets lost earlier
/// do not break a run, acknowledged ones do.
pub fn persistent_congestion(
    lost: impl IntoIterator<Item = LostInfo>,
    first_rtt_sample: Option<Instant>,
    duration: Duration,
    mut acked_between: impl FnMut(u64, u64) -> bool,
) -> bool {
    // §7.6.2: "The persistent congestion period SHOULD NOT start until there is at least one RTT sample."
    let Some(first_sample) = first_rtt_sample else {
        return false;
    };
    let mut run_start: Option<Instant> = None;
    let mut prev: Option<u64> = None;
    for p in lost {
        if prev.is_some_and(|prev| acked_between(prev, p.pn)) {
            run_start = None;
        }
        prev = Some(p.pn);
        // "These two packets MUST be ack-eliciting" and sent after the first RTT sample.
        if !p.ack_eliciting || p.time_sent <= first_sample {
            continue;
        }
        match run_start {
            None => run_start = Some(p.time_sent),
            Some(start) => {
                if p.time_sent.saturating_duration_since(start) > duration {
                    return true;
                }
            }
        }
    }
    false
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

    fn packet(t: Instant, ack_eliciting: bool) -> SentPacket<u64> {
        SentPacket {
            time_sent: t,
            size: 1200,
            ack_eliciting,
            in_flight: true,
            app_limited: false,
            delivery: None,
            frames: 0,
        }
    }

    fn rtt_100ms(t0: Instant) -> RttEstimator {
        let mut r = RttEstimator::default();
        r.update(t0, ms(100), Duration::ZERO);
        r
    }

    #[test]
    fn packet_threshold_declares_three_behind_lost() {
        let t0 = t0();
        let mut sent = SentPackets::new();
        for i in 0..6 {
            sent.push(packet(t0 + ms(i), true));
        }
        // Packet 5 acknowledged at 10 ms (far below the 112.5 ms time threshold): packets 0, 1 and 2 are 3 or
        // more behind (5 ≥ pn + 3) and lost; 3 and 4 wait for the timer.
        sent.ack_range(5, 5, |_, _| {});
        let r = rtt_100ms(t0);
        let d = detect_lost(&mut sent, Some(5), t0 + ms(10), &r, PACKET_THRESHOLD);
        let lost: Vec<u64> = d.lost.iter().map(|(pn, _)| *pn).collect();
        assert_eq!(lost, [0, 1, 2]);
        // Loss timer: packet 3 sent at 3 ms + 9/8 · 100 ms = 115.5 ms.
        assert_eq!(d.loss_time, Some(t0 + ms(3) + Duration::from_micros(112_500)));
        sent.debug_check();
        assert_eq!(sent.outstanding(), 2);
    }

    #[test]
    fn time_threshold_declares_old_packets_lost() {
        let t0 = t0();
        let mut sent = SentPackets::new();
        sent.push(packet(t0, true)); // 0
        sent.push(packet(t0 + ms(50), true)); // 1
        sent.push(packet(t0 + ms(60), true)); // 2
        sent.ack_range(2, 2, |_, _| {});
        let r = rtt_100ms(t0);
        // At 112.5 ms, packet 0 (sent at 0) is exactly 9/8 · 100 ms old: lost (`<=`); packet 1 is not.
        let now = t0 + Duration::from_micros(112_500);
        let d = detect_lost(&mut sent, Some(2), now, &r, PACKET_THRESHOLD);
        assert_eq!(d.lost.len(), 1);
        assert_eq!(d.lost[0].0, 0);
        assert_eq!(d.loss_time, Some(t0 + ms(50) + Duration::from_micros(112_500)));
        // Just before its deadline packet 1 survives; at it, it is lost.
        let d = detect_lost(&mut sent, Some(2), t0 + ms(162), &r, PACKET_THRESHOLD);
        assert!(d.lost.is_empty());
        let d = detect_lost(
            &mut sent,
            Some(2),
            t0 + ms(50) + Duration::from_micros(112_500),
            &r,
            3,
        );
        assert_eq!(d.lost.len(), 1);
        assert_eq!(d.loss_time, None);
        // Packets above the largest acknowledged are never declared lost.
        sent.push(packet(t0, true));
        let d = detect_lost(&mut sent, Some(2), t0 + ms(10_000), &r, 3);
        assert!(d.lost.is_empty());
        // Nothing acknowledged yet: nothing is lost.
        let d = detect_lost(&mut sent, None, t0 + ms(10_000), &r, 3);
        assert!(d.lost.is_empty() && d.loss_time.is_none());
    }

    #[test]
    fn pto_value_and_backoff_by_hand() {
        let t0 = t0();
        // Before any sample: 333 + 4 · 166.5 = 999 ms; the Initial space adds no max_ack_delay.
        let r = RttEstimator::default();
        assert_eq!(pto_period(&r, Duration::ZERO, 0), ms(999));
        assert_eq!(pto_period(&r, Duration::ZERO, 1), ms(1998));
        // After a 100 ms sample: 100 + 4 · 50 + 25 = 325 ms, then 650, 1300, 2600.
        let r = rtt_100ms(t0);
        let mad = ms(25);
        assert_eq!(pto_period(&r, mad, 0), ms(325));
        assert_eq!(pto_period(&r, mad, 1), ms(650));
        assert_eq!(pto_period(&r, mad, 2), ms(1300));
        assert_eq!(pto_period(&r, mad, 3), ms(2600));
        // Tiny RTT: rttvar term floored at kGranularity.
        let mut tiny = RttEstimator::default();
        tiny.update(t0, Duration::from_micros(10), Duration::ZERO);
        assert_eq!(pto_period(&tiny, Duration::ZERO, 0), Duration::from_micros(1010));
        // Huge backoff saturates instead of overflowing.
        assert!(pto_period(&r, Duration::MAX, u32::MAX) == Duration::MAX);
        assert_eq!(pto_period(&r, mad, u32::MAX), ms(325) * (1 << 16));
    }

    #[test]
    fn pto_period_is_at_least_granularity() {
        // A zero RTT sample gives smoothed_rtt = rttvar = 0: the PTO is kGranularity, not zero.
        let mut r = RttEstimator::default();
        r.update(t0(), Duration::ZERO, Duration::ZERO);
        assert_eq!(pto_period(&r, Duration::ZERO, 0), GRANULARITY);
        assert_eq!(r.loss_delay(), GRANULARITY);
    }

    fn info(pn: u64, t: Instant, ack_eliciting: bool) -> LostInfo {
        LostInfo {
            pn,
            time_sent: t,
            ack_eliciting,
        }
    }

    fn secs(t0: Instant, s: f64) -> Instant {
        t0 + Duration::from_secs_f64(s)
    }

    /// RFC 9002 §7.6.3 example: smoothed_rtt 1 s, rttvar 0, max_ack_delay 0 → persistent congestion duration
    /// 3 · (1 s + kGranularity) = 3.003 s. Packet 1 sent at 0 is acknowledged at 1.2 s (the first RTT
    /// sample); packets 2–7 sent at 1..6 s and the PTO probes 8 (8 s) and 9 (12 s); the ACK of 9 at 12.2 s
    /// declares 2–8 lost. Packet 2 (1 s) was sent before the first sample, so the period runs from packet 3
    /// (2 s) to packet 8 (8 s): 6 s > 3.003 s.
    #[test]
    fn persistent_congestion_rfc9002_example() {
        let t0 = t0();
        let duration = 3 * (Duration::from_secs(1) + GRANULARITY);
        assert_eq!(duration, Duration::from_millis(3003));
        let lost: Vec<LostInfo> = (2..=7)
            .map(|pn| info(pn, secs(t0, (pn - 1) as f64), true))
            .chain([info(8, secs(t0, 8.0), true)])
            .collect();
        let first_sample = Some(secs(t0, 1.2));
        assert!(persistent_congestion(
            lost.clone(),
            first_sample,
            duration,
            |_, _| false
        ));
        // Same losses with packet 5 acknowledged: the longest run without an ACK is 6 (5 s) .. 8 (8 s) = 3 s,
        // not more than 3.003 s.
        let without5: Vec<LostInfo> = lost.iter().copied().filter(|p| p.pn != 5).collect();
        let acked_5 = |a: u64, b: u64| a < 5 && 5 < b;
        assert!(!persistent_congestion(
            without5.clone(),
            first_sample,
            duration,
            acked_5
        ));
        // With a shorter duration (2.5 s) the run 6..8 is enough.
        assert!(persistent_congestion(without5, first_sample, ms(2500), acked_5));
        // No RTT sample: never.
        assert!(!persistent_congestion(lost.clone(), None, duration, |_, _| false));
        // A first sample after all of them: never.
        assert!(!persistent_congestion(
            lost.clone(),
            Some(secs(t0, 9.0)),
            duration,
            |_, _| false
        ));
    }

    #[test]
    fn persistent_congestion_needs_two_ack_eliciting_endpoints() {
        let t0 = t0();
        let first = Some(t0);
        let d = ms(3000);
        // The span 1 s .. 5 s exceeds 3 s, but the last packet is not ack-eliciting: only 1 s .. 3 s counts.
        let lost = [
            info(1, secs(t0, 1.0), true),
            info(2, secs(t0, 3.0), true),
            info(3, secs(t0, 5.0), false),
        ];
        assert!(!persistent_congestion(lost, first, d, |_, _| false));
        // Exactly the duration is not enough ("exceeds").
        let lost = [info(1, secs(t0, 1.0), true), info(2, secs(t0, 4.0), true)];
        assert!(!persistent_congestion(lost, first, d, |_, _| false));
        let lost = [info(1, secs(t0, 1.0), true), info(2, secs(t0, 4.001), true)];
        assert!(persistent_congestion(lost, first, d, |_, _| false));
        // One packet is never enough.
        assert!(!persistent_congestion(
            [info(1, secs(t0, 1.0), true)],
            first,
            d,
            |_, _| false
        ));
    }

    #[test]
    fn persistent_congestion_duration_by_hand() {
        let t0 = t0();
        // srtt 100, rttvar 50, max_ack_delay 25: (100 + 200 + 25) · 3 = 975 ms.
        assert_eq!(persistent_congestion_duration(&rtt_100ms(t0), ms(25)), ms(975));
    }
}
