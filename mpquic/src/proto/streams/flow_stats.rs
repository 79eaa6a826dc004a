//! Flow-control statistics: how long the sender waited for credit, and how long credit the receiver's
//! update rule had made due waited before it left in a packet. See [`FlowControlStats`].
//!
//! Together they tell a sender that waits because the application reads slowly (the receiver has no
//! credit to give) from one that waits because credit was due and not sent (a runtime that does not flush
//! after a read, say): the first shows as blocked time on the sender only, the second as a long
//! [`FlowControlStats::credit_due_unsent_max`] on the receiver.

use std::time::{Duration, Instant};

/// Flow-control statistics of a connection (RFC 9000 §4), both as a sender and as a receiver.
///
/// Sender: the connection is *blocked on flow control* while some stream has data written and never sent
/// that stream or connection credit holds back, and no stream can send anything. An episode starts at the
/// first moment the connection sees this (after a packet that used the last credit, or a write into
/// exhausted credit) and ends when a MAX_DATA / MAX_STREAM_DATA lets data go again (or the data goes away,
/// e.g. by a reset).
///
/// Receiver: credit is *due* from the moment the window's update rule says a MAX_DATA / MAX_STREAM_DATA must
/// be sent (after the application consumed data, [`WindowPolicy`](super::WindowPolicy)) until an
/// ack-eliciting packet carrying the last due credit frame is sent. A runtime that sends due credit as soon
/// as the application's read made it due keeps this near zero.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlowControlStats {
    /// Sender: total time blocked on flow control.
    pub send_blocked_time: Duration,
    /// Sender: the longest single blocked episode (one still running counts up to the last time the
    /// connection saw).
    pub send_blocked_max: Duration,
    /// Sender: blocked episodes started.
    pub send_blocked_episodes: u64,
    /// Receiver: MAX_DATA / MAX_STREAM_DATA episodes (credit made due, then sent).
    pub credit_updates: u64,
    /// Receiver: the longest time credit stayed due and unsent.
    pub credit_due_unsent_max: Duration,
    /// Receiver: total time some credit was due and unsent.
    pub credit_due_unsent_time: Duration,
}

/// The bookkeeping behind [`FlowControlStats`], owned by [`Streams`](super::Streams).
#[derive(Debug, Clone, Default)]
pub(crate) struct FlowBook {
    stats: FlowControlStats,
    /// The latest time the stream layer was told (any event that carries a time).
    clock: Option<Instant>,
    /// Sender: start of the running blocked episode.
    blocked_since: Option<Instant>,
    /// Receiver: since when credit is due and unsent.
    due_since: Option<Instant>,
    /// Receiver: a credit frame was handed to the packet builder since the last sent packet.
    handed_out: bool,
}

impl FlowBook {
    /// Advances the clock (times never go backwards) and returns it.
    pub(crate) fn tick(&mut self, now: Option<Instant>) -> Option<Instant> {
        if let Some(now) = now {
            self.clock = Some(self.clock.map_or(now, |c| c.max(now)));
        }
        self.clock
    }

    /// The sender's state is now `blocked` (evaluated by the caller) at the current clock.
    pub(crate) fn set_blocked(&mut self, blocked: bool) {
        let Some(now) = self.clock else {
            return;
        };
        match (blocked, self.blocked_since) {
            (true, None) => {
                self.blocked_since = Some(now);
                self.stats.send_blocked_episodes = self.stats.send_blocked_episodes.saturating_add(1);
            }
            (false, Some(since)) => {
                let d = now.saturating_duration_since(since);
                self.stats.send_blocked_time = self.stats.send_blocked_time.saturating_add(d);
                self.stats.send_blocked_max = self.stats.send_blocked_max.max(d);
                self.blocked_since = None;
            }
            _ => {}
        }
    }

    /// Receiver: the update rule made credit due at `now` (a running episode keeps its start).
    pub(crate) fn credit_due(&mut self, now: Instant) {
        self.tick(Some(now));
        if self.due_since.is_none() {
            self.due_since = Some(now);
        }
    }

    /// Receiver: whether some credit is due and unsent.
    pub(crate) fn credit_pending(&self) -> bool {
        self.due_since.is_some()
    }

    /// Receiver: a MAX_DATA / MAX_STREAM_DATA frame was handed to the packet builder.
    pub(crate) fn credit_handed_out(&mut self) {
        self.handed_out = true;
    }

    /// An ack-eliciting packet was sent at `now`; `still_due` says whether credit frames remain pending.
    /// The due episode ends when the packet carried a credit frame and none is left.
    pub(crate) fn packet_sent(&mut self, now: Instant, still_due: bool) {
        self.tick(Some(now));
        let handed_out = std::mem::take(&mut self.handed_out);
        if still_due {
            return;
        }
        if let Some(since) = self.due_since.take() {
            if handed_out {
                let d = now.saturating_duration_since(since);
                self.stats.credit_updates = self.stats.credit_updates.saturating_add(1);
                self.stats.credit_due_unsent_max = self.stats.credit_due_unsent_max.max(d);
                self.stats.credit_due_unsent_time = self.stats.credit_due_unsent_time.saturating_add(d);
            }
        }
    }

    /// The figures, with running episodes counted up to the clock.
    pub(crate) fn stats(&self) -> FlowControlStats {
        let mut s = self.stats;
        if let (Some(now), Some(since)) = (self.clock, self.blocked_since) {
            s.send_blocked_max = s.send_blocked_max.max(now.saturating_duration_since(since));
        }
        if let (Some(now), Some(since)) = (self.clock, self.due_since) {
            s.credit_due_unsent_max = s.credit_due_unsent_max.max(now.saturating_duration_since(since));
        }
        s
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests take a wall-clock base instant once
mod tests {
    use super::*;

    #[test]
    fn blocked_episodes_add_up_and_keep_the_longest() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut b = FlowBook::default();
        // Without a clock nothing can be timed.
        b.set_blocked(true);
        assert_eq!(b.stats(), FlowControlStats::default());
        b.tick(Some(t0));
        b.set_blocked(true);
        b.tick(Some(t0 + ms(3)));
        b.set_blocked(true); // still the same episode
        b.tick(Some(t0 + ms(5)));
        b.set_blocked(false);
        b.tick(Some(t0 + ms(10)));
        b.set_blocked(true);
        b.tick(Some(t0 + ms(12)));
        b.set_blocked(false);
        // A time from the past does not move the clock back.
        b.tick(Some(t0));
        let s = b.stats();
        assert_eq!(s.send_blocked_episodes, 2);
        assert_eq!(s.send_blocked_time, ms(5 + 2));
        assert_eq!(s.send_blocked_max, ms(5));
        // A running episode shows in the maximum up to the clock.
        b.set_blocked(true);
        b.tick(Some(t0 + ms(20)));
        assert_eq!(b.stats().send_blocked_max, ms(8));
        assert_eq!(b.stats().send_blocked_time, ms(7));
    }

    #[test]
    fn credit_is_due_until_a_packet_carries_the_last_frame() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut b = FlowBook::default();
        b.credit_due(t0);
        b.credit_due(t0 + ms(1)); // keeps the first start
        // A packet without the credit frame does not end it.
        b.packet_sent(t0 + ms(2), true);
        b.credit_handed_out();
        // Carried one frame, another still pending: still due.
        b.packet_sent(t0 + ms(3), true);
        b.credit_handed_out();
        b.packet_sent(t0 + ms(4), false);
        let s = b.stats();
        assert_eq!((s.credit_updates, s.credit_due_unsent_max), (1, ms(4)));
        b.credit_due(t0 + ms(10));
        b.credit_handed_out();
        b.packet_sent(t0 + ms(11), false);
        let s = b.stats();
        assert_eq!(s.credit_updates, 2);
        assert_eq!(s.credit_due_unsent_max, ms(4));
        assert_eq!(s.credit_due_unsent_time, ms(5));
        // Due and never sent: the maximum grows with the clock.
        b.credit_due(t0 + ms(20));
        b.tick(Some(t0 + ms(30)));
        assert_eq!(b.stats().credit_due_unsent_max, ms(10));
    }
}
