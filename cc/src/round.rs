//! Round-trip bookkeeping shared by the delay-based single-path controllers (Illinois, YeAH): the RTT samples
//! of the current round and the minimum ever seen.
//!
//! Linux ends a round when an ACK passes the `snd_nxt` recorded at the start of the round. QUIC has no byte
//! sequence, so here (as in [`crate::vegas`]) a round ends with the first ACK event that acknowledges a packet
//! sent at or after the round began; the next round begins at that ACK's `now`. The first round begins when
//! the path is added. The round-ending ACK's own sample belongs to the round it ends.
//!
//! Samples are the event's `latest_rtt`, raised to 1 µs (Linux adds 1 µs to every sample so that none is zero).
//! Invariant: `base` is the smallest sample ever recorded, and every statistic of a round is ≥ `base`.

use std::time::{Duration, Instant};

use crate::AckEvent;

/// The smallest RTT sample used.
pub(crate) const MIN_RTT_SAMPLE: Duration = Duration::from_micros(1);

/// The RTT statistics of one completed round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RoundStats {
    /// Number of samples.
    pub count: u64,
    /// Smallest sample of the round.
    pub min: Duration,
    /// Largest sample of the round.
    pub max: Duration,
    /// Mean of the round's samples.
    pub avg: Duration,
}

/// The current round and the smallest RTT ever seen.
#[derive(Clone, Debug)]
pub(crate) struct RttRounds {
    start: Instant,
    count: u64,
    sum: Duration,
    min: Option<Duration>,
    max: Option<Duration>,
    base: Option<Duration>,
}

impl RttRounds {
    /// The first round begins at `now`.
    pub fn new(now: Instant) -> Self {
        RttRounds {
            start: now,
            count: 0,
            sum: Duration::ZERO,
            min: None,
            max: None,
            base: None,
        }
    }

    /// The smallest RTT sample ever recorded.
    pub fn base(&self) -> Option<Duration> {
        self.base
    }

    /// Forgets the samples of the current round; a new round begins at `now`.
    pub fn restart(&mut self, now: Instant) {
        self.start = now;
        self.count = 0;
        self.sum = Duration::ZERO;
        self.min = None;
        self.max = None;
    }

    /// Records the sample of `ev` (if it acknowledges anything) and returns the statistics of the round it ends,
    /// if it ends one.
    pub fn on_ack(&mut self, ev: &AckEvent<'_>) -> Option<RoundStats> {
        let largest_sent = ev.largest_time_sent()?;
        let sample = ev.rtt.latest.max(MIN_RTT_SAMPLE);
        self.base = Some(self.base.map_or(sample, |b| b.min(sample)));
        self.count = self.count.saturating_add(1);
        self.sum = self.sum.saturating_add(sample);
        self.min = Some(self.min.map_or(sample, |m| m.min(sample)));
        self.max = Some(self.max.map_or(sample, |m| m.max(sample)));
        if largest_sent < self.start {
            return None;
        }
        let n = u32::try_from(self.count).unwrap_or(u32::MAX);
        let stats = RoundStats {
            count: self.count,
            min: self.min.unwrap_or(sample),
            max: self.max.unwrap_or(sample),
            avg: self.sum.checked_div(n).unwrap_or(sample),
        };
        self.restart(ev.now);
        Some(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{ack_event, ms, t0};

    #[test]
    fn a_round_ends_with_the_ack_of_a_packet_sent_after_it_began() {
        let t = t0();
        let mut r = RttRounds::new(t);
        // Packets sent before the round began (t − 1 ms does not exist, so the round began at t + 5 ms).
        r.restart(t + ms(5));
        assert_eq!(
            ack_event(t + ms(10), t, 1, 1000, ms(100), |ev| r.on_ack(ev)),
            None
        );
        assert_eq!(
            ack_event(t + ms(20), t, 1, 1000, ms(140), |ev| r.on_ack(ev)),
            None
        );
        let stats = ack_event(t + ms(30), t + ms(5), 1, 1000, ms(120), |ev| r.on_ack(ev)).unwrap();
        // Samples 100, 140, 120: min 100, max 140, mean 120.
        assert_eq!(stats.count, 3);
        assert_eq!((stats.min, stats.max, stats.avg), (ms(100), ms(140), ms(120)));
        assert_eq!(r.base(), Some(ms(100)));
        // The next round began at t + 30 ms: a packet sent at t + 20 ms does not end it.
        assert_eq!(
            ack_event(t + ms(40), t + ms(20), 1, 1000, ms(90), |ev| r.on_ack(ev)),
            None
        );
        assert_eq!(r.base(), Some(ms(90)));
    }
}
