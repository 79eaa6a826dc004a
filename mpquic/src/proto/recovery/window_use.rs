//! Whether a path uses its congestion window (RFC 9002 §7.8).
//!
//! RFC 9002 §7.8: "When bytes in flight is smaller than the congestion window and sending is not pacing
//! limited, the congestion window is underutilized. This can happen due to insufficient application data or
//! flow control limits. When this occurs, the congestion window SHOULD NOT be increased in either slow start
//! or congestion avoidance."
//!
//! The connection marks packets it sends with nothing more to send as application-limited; that misses a
//! sender that always has data but cannot put it on the wire as fast as the window allows (a CPU-bound
//! sender on a fast link, a scheduler that prefers another path, a receiver's flow-control window that
//! opens in small steps). Such a path's window would grow with every acknowledgement, without bound and
//! without ever being tested by the network, and would then let a burst of that size out the moment the
//! sender speeds up. A window is therefore also counted as under-utilised while the most data in flight over
//! the current and the previous round trip stayed below half of it. Half, not all: a window that slow start
//! has just doubled is only half used by the flight that earned it, and a sender that fills its window in
//! paced steps reaches it only at the end of each round; in both cases the window is in use. The window
//! then stays within about twice the largest flight the path has carried (Linux TCP bounds its window with
//! the same idea, `tcp_is_cwnd_limited`).
//!
//! A round ends when a packet sent after it began is acknowledged.

use std::time::Instant;

/// The most data in flight in the current and the previous round trip of one path.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WindowUse {
    /// Packets sent at or after this instant belong to the current round (`None`: nothing sent yet).
    round_start: Option<Instant>,
    /// Largest bytes in flight after a send in the current round.
    current: u64,
    /// The same for the previous round.
    previous: u64,
}

impl WindowUse {
    /// An in-flight packet was sent at `now`, leaving `bytes_in_flight` in flight.
    pub(crate) fn on_sent(&mut self, now: Instant, bytes_in_flight: u64) {
        self.round_start.get_or_insert(now);
        self.current = self.current.max(bytes_in_flight);
    }

    /// An acknowledgement processed at `now` newly acknowledged packets, the newest of them sent at
    /// `newest_sent`: if that packet was sent in the current round, the round is over.
    pub(crate) fn on_ack(&mut self, now: Instant, newest_sent: Instant) {
        if self.round_start.is_some_and(|start| newest_sent >= start) {
            self.previous = self.current;
            self.current = 0;
            self.round_start = Some(now);
        }
    }

    /// The window `cwnd` is under-utilised: less than half of it was in flight at any time in this round and
    /// the previous one.
    pub(crate) fn under_utilised(&self, cwnd: u64) -> bool {
        self.current.max(self.previous).saturating_mul(2) < cwnd
    }

    /// Largest bytes in flight over the current and the previous round.
    #[cfg(test)]
    pub(crate) fn max_in_flight(&self) -> u64 {
        self.current.max(self.previous)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[allow(clippy::disallowed_methods)] // test set-up needs a base instant
    fn t0() -> Instant {
        Instant::now()
    }

    #[test]
    fn half_a_window_in_flight_counts_as_used_by_hand() {
        let t0 = t0();
        let ms = Duration::from_millis;
        let mut w = WindowUse::default();
        // Nothing sent yet: any window is under-utilised.
        assert!(w.under_utilised(12_000));
        // Round 1 (starts at t0): up to 6 000 B in flight.
        w.on_sent(t0, 1_200);
        w.on_sent(t0 + ms(1), 6_000);
        assert!(!w.under_utilised(12_000), "6 000 B is half of 12 000 B");
        assert!(w.under_utilised(12_001));
        // The first packet (sent at t0, when round 1 began) is acknowledged: round 2 starts at t0 + 10 ms and
        // round 1's 6 000 B stay as the previous round.
        w.on_ack(t0 + ms(10), t0);
        assert_eq!(w.max_in_flight(), 6_000);
        w.on_sent(t0 + ms(11), 2_400);
        assert!(!w.under_utilised(12_000));
        // An ACK of a round-1 packet (sent at t0 + 1 ms, before round 2 began) changes nothing.
        w.on_ack(t0 + ms(12), t0 + ms(1));
        assert_eq!(w.max_in_flight(), 6_000);
        // The round-2 packet is acknowledged: round 1 is forgotten, round 2's 2 400 B remain.
        w.on_ack(t0 + ms(20), t0 + ms(11));
        assert_eq!(w.max_in_flight(), 2_400);
        assert!(w.under_utilised(12_000));
        assert!(!w.under_utilised(4_800));
    }
}
