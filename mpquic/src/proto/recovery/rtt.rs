//! The RTT estimator of one path (RFC 9002 §5): `latest_rtt`, `min_rtt`, `smoothed_rtt` and `rttvar`.
//!
//! Multipath (draft-ietf-quic-multipath-21) keeps one estimator per path: packets of one path never feed the
//! estimator of another (RFC 9002 §5.3: "Packets sent on other paths do not contribute RTT samples to the
//! current path").
//!
//! The estimator takes the acknowledgment delay the caller has already decided to use (see
//! [`super::PathRecovery`], which ignores it for Initial packets and caps it by `max_ack_delay` once the
//! handshake is confirmed, RFC 9002 §5.3) and applies the rule that keeps `min_rtt` honest:
//! `min_rtt` is the minimum of raw samples, never reduced by the acknowledgment delay.
//!
//! Arithmetic is done in nanoseconds with `u128` and saturates, so no sample (however absurd the peer's
//! reported delay) can overflow or panic.

use std::time::{Duration, Instant};

use crate::cc::RttSnapshot;

/// RFC 9002 §6.1.2 `kGranularity`: the timer granularity, 1 ms (RECOMMENDED).
pub const GRANULARITY: Duration = Duration::from_millis(1);

/// RFC 9002 §6.2.2 `kInitialRtt`: "When no previous RTT is available, the initial RTT SHOULD be set to
/// 333 milliseconds."
pub const INITIAL_RTT: Duration = Duration::from_millis(333);

/// One path's RTT estimator (RFC 9002 §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RttEstimator {
    initial: Duration,
    latest: Duration,
    smoothed: Duration,
    var: Duration,
    min: Duration,
    first_sample: Option<Instant>,
    /// `smoothed + max(4·var, kGranularity)`, kept up to date by every change of `smoothed` or `var`: the
    /// PTO is computed for every packet sent and every ACK, the RTT changes once per ACK at most.
    pto_base: Duration,
}

impl Default for RttEstimator {
    fn default() -> Self {
        Self::new(INITIAL_RTT)
    }
}

fn nanos(d: Duration) -> u128 {
    d.as_nanos()
}

fn from_nanos(n: u128) -> Duration {
    let secs = u64::try_from(n / 1_000_000_000).unwrap_or(u64::MAX);
    // The remainder is below 10^9 and fits in u32.
    let sub = u32::try_from(n % 1_000_000_000).unwrap_or(0);
    Duration::new(secs, sub)
}

impl RttEstimator {
    /// An estimator before any sample (RFC 9002 §5.3: "smoothed_rtt = kInitialRtt, rttvar = kInitialRtt / 2").
    /// `latest_rtt` and `min_rtt` start at `initial_rtt` too, so that they are meaningful before a sample.
    pub fn new(initial_rtt: Duration) -> Self {
        let mut rtt = RttEstimator {
            initial: initial_rtt,
            latest: initial_rtt,
            smoothed: initial_rtt,
            var: initial_rtt / 2,
            min: initial_rtt,
            first_sample: None,
            pto_base: Duration::ZERO,
        };
        rtt.refresh_pto_base();
        rtt
    }

    fn refresh_pto_base(&mut self) {
        self.pto_base = self
            .smoothed
            .saturating_add(self.var.saturating_mul(4).max(GRANULARITY));
    }

    /// Forgets every sample and starts again from the initial RTT (RFC 9000 §9.4: a validated 4-tuple change).
    pub fn reset(&mut self) {
        *self = Self::new(self.initial);
    }

    /// The most recent raw sample (`latest_rtt`; the initial RTT before any sample).
    pub fn latest(&self) -> Duration {
        self.latest
    }

    /// `smoothed_rtt`.
    pub fn smoothed(&self) -> Duration {
        self.smoothed
    }

    /// `rttvar`.
    pub fn var(&self) -> Duration {
        self.var
    }

    /// `min_rtt`: the smallest raw sample (the initial RTT before any sample).
    pub fn min(&self) -> Duration {
        self.min
    }

    /// When the first sample was taken, if one was (`first_rtt_sample` of RFC 9002 Appendix A).
    pub fn first_sample_time(&self) -> Option<Instant> {
        self.first_sample
    }

    /// Whether at least one sample was taken.
    pub fn has_sample(&self) -> bool {
        self.first_sample.is_some()
    }

    /// RFC 9002 §6.2.1 without `max_ack_delay` and backoff: `smoothed_rtt + max(4·rttvar, kGranularity)`.
    pub fn pto_base(&self) -> Duration {
        self.pto_base
    }

    /// RFC 9002 §6.1.2 time threshold: `max(kTimeThreshold · max(smoothed_rtt, latest_rtt), kGranularity)` with
    /// `kTimeThreshold = 9/8`. "this time threshold MUST be set to at least the local timer granularity".
    pub fn loss_delay(&self) -> Duration {
        let base = nanos(self.smoothed.max(self.latest));
        from_nanos(base.saturating_mul(9) / 8).max(GRANULARITY)
    }

    /// Persistent congestion was established: `min_rtt` restarts from the newest sample (RFC 9002 §5.2).
    pub fn on_persistent_congestion(&mut self) {
        if self.first_sample.is_some() {
            self.min = self.latest;
        }
    }

    /// The state as the congestion controller sees it.
    pub fn snapshot(&self) -> RttSnapshot {
        RttSnapshot {
            latest: self.latest,
            smoothed: self.smoothed,
            rttvar: self.var,
            min: self.min,
        }
    }

    /// Takes the sample `latest_rtt` at `now`, with the acknowledgment delay `ack_delay` the caller decided to
    /// use (already zero for Initial packets and already capped by `max_ack_delay` after handshake
    /// confirmation).
    ///
    /// RFC 9002 §5.3 and Appendix A.7 (`UpdateRtt`):
    /// * first sample: `min_rtt = smoothed_rtt = latest_rtt`, `rttvar = latest_rtt / 2`;
    /// * then `min_rtt = min(min_rtt, latest_rtt)` (raw sample), `adjusted_rtt = latest_rtt - ack_delay` only if
    ///   `latest_rtt >= min_rtt + ack_delay`, `rttvar = 3/4·rttvar + 1/4·|smoothed_rtt - adjusted_rtt|`,
    ///   `smoothed_rtt = 7/8·smoothed_rtt + 1/8·adjusted_rtt`.
    ///
    /// `rttvar` is updated with the *previous* `smoothed_rtt`, as in Appendix A.7 and RFC 6298 §2.3 (the prose
    /// of §5.3 lists the `smoothed_rtt` line first; the appendix is the normative-looking pseudocode and
    /// matches TCP).
    pub fn update(&mut self, now: Instant, latest_rtt: Duration, ack_delay: Duration) {
        self.latest = latest_rtt;
        if self.first_sample.is_none() {
            self.first_sample = Some(now);
            self.min = latest_rtt;
            self.smoothed = latest_rtt;
            self.var = latest_rtt / 2;
            self.refresh_pto_base();
            return;
        }
        // RFC 9002 §5.2: "min_rtt MUST be set to the lesser of min_rtt and latest_rtt" (the raw sample: the
        // acknowledgment delay never lowers min_rtt).
        self.min = self.min.min(latest_rtt);
        // RFC 9002 §5.3: an endpoint "MUST NOT subtract the acknowledgment delay from the RTT sample if the
        // resulting value is smaller than the min_rtt."
        let adjusted = match self.min.checked_add(ack_delay) {
            Some(floor) if latest_rtt >= floor => latest_rtt.saturating_sub(ack_delay),
            _ => latest_rtt,
        };
        let var_sample = nanos(self.smoothed.abs_diff(adjusted));
        self.var = from_nanos(nanos(self.var).saturating_mul(3).saturating_add(var_sample) / 4);
        self.smoothed = from_nanos(
            nanos(self.smoothed)
                .saturating_mul(7)
                .saturating_add(nanos(adjusted))
                / 8,
        );
        self.refresh_pto_base();
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
    fn initial_state_follows_rfc9002_section_5_3() {
        let r = RttEstimator::default();
        assert_eq!(r.smoothed(), ms(333));
        assert_eq!(r.var(), Duration::from_micros(166_500));
        assert!(!r.has_sample());
        // PTO before any sample: 333 + 4 · 166.5 = 999 ms (RFC 9002 §6.2.2: "handshakes starting with a PTO of
        // 1 second").
        assert_eq!(r.pto_base(), ms(999));
    }

    /// Hand-computed sequence (RFC 9002 §5.3 formulas, rttvar updated with the previous smoothed_rtt):
    ///
    /// | sample | ack_delay | min | adjusted | rttvar                           | smoothed                    |
    /// |--------|-----------|-----|----------|----------------------------------|-----------------------------|
    /// | 100    | 0         | 100 | —        | 50                               | 100                         |
    /// | 120    | 10        | 100 | 110      | 3/4·50 + 1/4·10 = 40             | 7/8·100 + 1/8·110 = 101.25  |
    /// | 80     | 0         | 80  | 80       | 3/4·40 + 1/4·21.25 = 35.3125     | 7/8·101.25 + 10 = 98.59375  |
    /// | 90     | 20        | 80  | 90 (*)   | 3/4·35.3125 + 1/4·8.59375 = 28.6328125 | 7/8·98.59375 + 11.25 = 97.51953125 |
    ///
    /// (*) 90 < min 80 + delay 20, so the delay is not subtracted.
    #[test]
    fn hand_computed_sample_sequence() {
        let t0 = t0();
        let mut r = RttEstimator::default();
        r.update(t0, ms(100), ms(7)); // the first sample ignores the delay
        assert_eq!(
            (r.min(), r.smoothed(), r.var(), r.latest()),
            (ms(100), ms(100), ms(50), ms(100))
        );
        assert_eq!(r.first_sample_time(), Some(t0));
        r.update(t0 + ms(1), ms(120), ms(10));
        assert_eq!(r.min(), ms(100));
        assert_eq!(r.var(), ms(40));
        assert_eq!(r.smoothed(), Duration::from_micros(101_250));
        r.update(t0 + ms(2), ms(80), ms(0));
        assert_eq!(r.min(), ms(80));
        assert_eq!(r.var(), Duration::from_nanos(35_312_500));
        assert_eq!(r.smoothed(), Duration::from_nanos(98_593_750));
        r.update(t0 + ms(3), ms(90), ms(20));
        assert_eq!(r.var(), Duration::from_nanos(28_632_812));
        assert_eq!(r.smoothed(), Duration::from_nanos(97_519_531));
        assert_eq!(r.latest(), ms(90));
        // RFC 9002 §5.2: min_rtt is the lesser of min_rtt and latest_rtt: 80 stays after the 90 ms sample.
        assert_eq!(r.min(), ms(80));
        // The first-sample time does not move.
        assert_eq!(r.first_sample_time(), Some(t0));
        // loss delay = 9/8 · max(97.519531, 90) ms.
        assert_eq!(r.loss_delay(), Duration::from_nanos(97_519_531 * 9 / 8));
    }

    #[test]
    fn ack_delay_not_subtracted_when_result_below_min_rtt() {
        let t0 = t0();
        let mut r = RttEstimator::default();
        r.update(t0, ms(50), ms(0));
        // A sample of 60 ms with a 40 ms delay: adjusted would be 20 ms, below min_rtt 50 → not subtracted;
        // min_rtt stays 50 (the raw sample is larger).
        r.update(t0, ms(60), ms(40));
        assert_eq!(r.min(), ms(50));
        // smoothed = 7/8·50 + 1/8·60 = 51.25 (delay not subtracted).
        assert_eq!(r.smoothed(), Duration::from_micros(51_250));
    }

    #[test]
    fn absurd_ack_delay_saturates() {
        let t0 = t0();
        let mut r = RttEstimator::default();
        r.update(t0, ms(10), Duration::MAX);
        r.update(t0, ms(10), Duration::MAX);
        r.update(t0, Duration::MAX, Duration::MAX);
        assert!(r.pto_base() >= r.smoothed());
        let _ = r.loss_delay();
        r.reset();
        assert_eq!(r, RttEstimator::default());
        // Before any sample, persistent congestion keeps min_rtt at the initial RTT.
        r.on_persistent_congestion();
        assert_eq!(r.min(), INITIAL_RTT);
        r.update(t0, ms(40), Duration::ZERO);
        r.update(t0, ms(90), Duration::ZERO);
        r.on_persistent_congestion();
        assert_eq!(r.min(), ms(90));
    }

    #[test]
    fn loss_delay_is_at_least_granularity() {
        let t0 = t0();
        let mut r = RttEstimator::default();
        r.update(t0, Duration::from_micros(100), Duration::ZERO);
        assert_eq!(r.loss_delay(), GRANULARITY);
        assert_eq!(r.pto_base(), Duration::from_micros(100) + GRANULARITY);
    }
}
