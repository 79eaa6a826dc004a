//! Counting congestion events the way RFC 9002 defines a recovery period, whatever the controller does.
//!
//! Loss detection reports a [`crate::cc::CongestionEvent`] for every pass that declares packets lost and
//! for every ECN-CE increase; a window-based controller reduces its window only for the first of those
//! that concerns a packet sent after its current recovery period began (RFC 9002 §7.3.2: a loss or ECN-CE
//! mark starts a recovery period, which ends once a packet sent during it is acknowledged; Appendix B.8
//! `OnCongestionEvent` ignores events for packets sent before the period began). [`CongestionEpisodes`]
//! applies that rule on its own, so the count means the same thing for every controller, also for those
//! that keep no recovery period (BBR, the delay-based ones): how many separate congestion signals the path
//! received, as MPTCP and TCP studies count "loss events" rather than lost packets (a burst of ten lost
//! packets in one round trip is one event).

use std::time::Instant;

/// Congestion events of one path that began a new recovery period (module documentation).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CongestionEpisodes {
    count: u64,
    /// When the current recovery period began (`congestion_recovery_start_time` of RFC 9002 Appendix B);
    /// `None` before the first event and after persistent congestion.
    start: Option<Instant>,
}

impl CongestionEpisodes {
    /// A congestion event at `now` for the newest affected packet, sent at `sent_time`. Counts it when that
    /// packet was sent after the current recovery period began (RFC 9002 Appendix B.8). Persistent
    /// congestion (RFC 9002 §7.6.2) ends the period: Appendix B.8 resets the start time to 0, so the next
    /// event counts again.
    pub fn on_event(&mut self, now: Instant, sent_time: Instant, persistent_congestion: bool) {
        // RFC 9002 Appendix B.8 `InCongestionRecovery`: sent_time <= congestion_recovery_start_time.
        if self.start.is_none_or(|s| sent_time > s) {
            self.count = self.count.saturating_add(1);
            self.start = Some(now);
        }
        if persistent_congestion {
            self.start = None;
        }
    }

    /// Events that began a recovery period so far.
    pub fn count(&self) -> u64 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn at(base: Instant, ms: u64) -> Instant {
        base + Duration::from_millis(ms)
    }

    #[allow(clippy::disallowed_methods)] // the tests' time starts at an arbitrary instant
    fn start() -> Instant {
        Instant::now()
    }

    #[test]
    fn losses_of_one_round_trip_are_one_event() {
        let t = start();
        let mut e = CongestionEpisodes::default();
        // A burst lost at 100 ms, detected in three passes (packets sent at 60, 62, 64 ms).
        e.on_event(at(t, 100), at(t, 60), false);
        e.on_event(at(t, 101), at(t, 62), false);
        e.on_event(at(t, 103), at(t, 64), false);
        assert_eq!(e.count(), 1);
        // A packet sent at exactly the period's start still belongs to it (<=).
        e.on_event(at(t, 140), at(t, 100), false);
        assert_eq!(e.count(), 1);
        // The first loss of a packet sent after the period began starts a second one.
        e.on_event(at(t, 150), at(t, 101), false);
        assert_eq!(e.count(), 2);
    }

    #[test]
    fn persistent_congestion_ends_the_period() {
        let t = start();
        let mut e = CongestionEpisodes::default();
        e.on_event(at(t, 500), at(t, 300), true);
        assert_eq!(e.count(), 1);
        // Sent before the event at 500 ms, but the period ended with the persistent congestion.
        e.on_event(at(t, 510), at(t, 320), false);
        assert_eq!(e.count(), 2);
        e.on_event(at(t, 520), at(t, 330), false);
        assert_eq!(e.count(), 2);
    }
}
