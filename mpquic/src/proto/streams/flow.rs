//! Flow control (RFC 9000 §4): the credit the peer gave us ([`SendCredit`]) and the window we give the peer
//! ([`RecvWindow`]), each used once per stream and once for the connection.
//!
//! The new limit is always `consumed + window` (counted from what the application consumed). When it is
//! sent depends on the [`WindowUpdate`] rule ([`RecvWindow::update_due`]): by default as soon as it would
//! raise the limit by an eighth of the window, the way a TCP receiver's window moves with every ACK
//! ([`WindowUpdate::Eighth`]); or once less than half the window is left ([`WindowUpdate::Half`]). With the
//! half-window rule a window-limited sender receives credit in half-window steps and gets only
//! `window / (2 RTT)`; with eighth steps it gets about `15/16 · window / RTT`. How the window grows depends
//! on its [`WindowPolicy`]:
//! - `Auto`: each time the application has consumed another half window, the time that took is compared
//!   with two round trips; less means the consumer drains the window faster than the peer can refill it
//!   across one round trip, so the window limits throughput; it doubles, up to a configured maximum. A slow
//!   consumer never grows the window, so memory follows the application's reading rate. This is the
//!   scheme of quiche and Chromium. The round trip counts as at least [`AUTO_RTT_FLOOR`]: credit crosses
//!   both hosts' schedulers as well as the network, so on a sub-millisecond path (loopback, a LAN) a
//!   window sized on the network RTT alone cannot absorb a reader that pauses for a millisecond (a disk
//!   write). Under [`WindowUpdate::Half`] the rule reads the spacing of the half-window updates instead,
//!   unfloored (the rule before eighth-window updates became the default).
//! - `Linux`: dynamic right-sizing after Linux's `tcp_rcv_space_adjust` ([`RecvWindow::consume`]).
//! - `Fixed`: the window never changes.

use std::time::{Duration, Instant};

use super::policy::{WindowPolicy, WindowUpdate};

/// Credit granted by the peer: we may send up to `max` bytes (or streams) in total.
#[derive(Debug, Clone)]
pub(crate) struct SendCredit {
    /// The peer's limit.
    max: u64,
    /// How much of it is used.
    used: u64,
    /// The limit at which we last reported being blocked, so each limit is reported once.
    blocked_reported: Option<u64>,
}

impl SendCredit {
    /// Credit up to `max`.
    pub(crate) fn new(max: u64) -> Self {
        SendCredit {
            max,
            used: 0,
            blocked_reported: None,
        }
    }

    /// The peer's current limit.
    pub(crate) fn max(&self) -> u64 {
        self.max
    }

    /// How much is used.
    pub(crate) fn used(&self) -> u64 {
        self.used
    }

    /// What is left.
    pub(crate) fn available(&self) -> u64 {
        self.max.saturating_sub(self.used)
    }

    /// Applies a new limit from the peer; returns whether it raised the limit.
    ///
    /// RFC 9000 §4.1: "A receiver MUST ignore any MAX_STREAM_DATA or MAX_DATA frames that do not increase flow
    /// control limits." (and §4.6 likewise for MAX_STREAMS: "MAX_STREAMS frames that do not increase the stream
    /// limit MUST be ignored").
    pub(crate) fn raise(&mut self, max: u64) -> bool {
        if max > self.max {
            self.max = max;
            true
        } else {
            false
        }
    }

    /// Uses `n` units; the caller never uses more than [`SendCredit::available`].
    pub(crate) fn consume(&mut self, n: u64) {
        debug_assert!(n <= self.available());
        self.used = self.used.saturating_add(n);
    }

    /// If the credit is exhausted and that was not reported at this limit yet, the limit to report in a
    /// *_BLOCKED frame (RFC 9000 §4.1: "A sender SHOULD send a STREAM_DATA_BLOCKED or DATA_BLOCKED frame to
    /// indicate to the receiver that it has data to write but is blocked by flow control limits").
    pub(crate) fn take_blocked(&mut self) -> Option<u64> {
        if self.available() == 0 && self.blocked_reported != Some(self.max) {
            self.blocked_reported = Some(self.max);
            Some(self.max)
        } else {
            None
        }
    }

    /// Whether we are still blocked at `limit` (a lost *_BLOCKED frame is only worth re-sending then).
    pub(crate) fn blocked_at(&self, limit: u64) -> bool {
        self.max == limit && self.available() == 0
    }
}

/// Why received data breaks a [`RecvWindow`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WindowExceeded;

/// Linux's cushion added to twice the measured consumption: 16 segments (`16 * tp->advmss` in
/// `tcp_rcv_space_adjust`), with QUIC's smallest maximum datagram size (RFC 9000 §14: 1200 bytes) as the
/// segment.
pub(crate) const LINUX_CUSHION: u64 = 16 * 1200;

/// The shortest round trip [`WindowPolicy::Auto`] reckons with under [`WindowUpdate::Eighth`]: RFC 9002
/// §6.1.2's timer granularity (kGranularity, 1 ms), the resolution at which either host can be expected to
/// act on a timer or a wake-up.
pub(crate) const AUTO_RTT_FLOOR: Duration = Duration::from_millis(1);

/// The dynamic right-sizing state of [`WindowPolicy::Linux`].
#[derive(Debug, Clone, Copy, Default)]
struct RightSizing {
    /// When the current measurement started and what was consumed then (`None` before the first read).
    start: Option<(Instant, u64)>,
    /// The largest consumption measured over one RTT so far (Linux's `rcvq_space.space`).
    space: u64,
}

/// The window we advertise to the peer.
#[derive(Debug, Clone)]
pub(crate) struct RecvWindow {
    /// The limit the peer knows (or will know once the pending update is sent).
    advertised: u64,
    /// The highest offset received (stream) or the sum of those (connection).
    received: u64,
    /// What the application consumed (read or discarded).
    consumed: u64,
    /// Current window size.
    window: u64,
    /// Auto-tuning cap.
    max_window: u64,
    /// The floor of [`WindowPolicy::Linux`] (unused by the other policies).
    min_window: u64,
    /// How the window grows.
    policy: WindowPolicy,
    /// When the advertised limit must move ([`RecvWindow::update_due`]).
    update: WindowUpdate,
    /// [`WindowPolicy::Auto`]'s measurement: when the current half window of consumption started and what
    /// was consumed then (`None` before the first timed read); under [`WindowUpdate::Half`], when the last
    /// update was made due.
    epoch: Option<(Instant, u64)>,
    /// [`WindowPolicy::Linux`]'s measurement.
    sizing: RightSizing,
}

impl RecvWindow {
    /// A window of `window` bytes that auto-tunes up to `max_window`, with the [`WindowPolicy::Auto`]
    /// policy.
    #[cfg(test)]
    pub(crate) fn new(window: u64, max_window: u64) -> Self {
        Self::with_policy(WindowPolicy::Auto, window, 0, max_window)
    }

    /// The initial window a `policy` starts from for a configured initial `window`: the Linux policy
    /// raises it to `min_window` (the others ignore the minimum).
    pub(crate) fn initial(policy: WindowPolicy, window: u64, min_window: u64) -> u64 {
        match policy {
            WindowPolicy::Linux => window.max(min_window),
            WindowPolicy::Fixed | WindowPolicy::Auto => window,
        }
    }

    /// A window that starts at `window` (raised to `min_window` under [`WindowPolicy::Linux`]) and grows as
    /// `policy` says, up to `max_window` (raised to the initial window if smaller).
    pub(crate) fn with_policy(policy: WindowPolicy, window: u64, min_window: u64, max_window: u64) -> Self {
        let window = Self::initial(policy, window, min_window);
        RecvWindow {
            advertised: window,
            received: 0,
            consumed: 0,
            window,
            max_window: max_window.max(window),
            min_window,
            policy,
            update: WindowUpdate::Eighth,
            epoch: None,
            sizing: RightSizing::default(),
        }
    }

    /// The same window with the update rule `update` (default [`WindowUpdate::Eighth`]).
    pub(crate) fn with_update(mut self, update: WindowUpdate) -> Self {
        self.update = update;
        self
    }

    /// The advertised limit.
    pub(crate) fn advertised(&self) -> u64 {
        self.advertised
    }

    /// The highest offset (or total) received.
    pub(crate) fn received(&self) -> u64 {
        self.received
    }

    /// The current window size.
    pub(crate) fn window(&self) -> u64 {
        self.window
    }

    /// How the window grows.
    pub(crate) fn policy(&self) -> WindowPolicy {
        self.policy
    }

    /// Records that the peer's data now reaches `end`; an error if that exceeds the advertised limit.
    /// Returns how much `received` grew.
    pub(crate) fn receive_up_to(&mut self, end: u64) -> Result<u64, WindowExceeded> {
        if end > self.advertised {
            return Err(WindowExceeded);
        }
        let grew = end.saturating_sub(self.received);
        self.received = self.received.max(end);
        Ok(grew)
    }

    /// Adds `n` to the received total (connection level); an error if that exceeds the advertised limit.
    pub(crate) fn receive_more(&mut self, n: u64) -> Result<(), WindowExceeded> {
        let end = self.received.checked_add(n).ok_or(WindowExceeded)?;
        self.receive_up_to(end).map(|_| ())
    }

    /// Records that the application consumed `n` more bytes. `now` (when known) and `rtt` drive
    /// auto-tuning. Returns whether the advertised limit was raised (a MAX_DATA / MAX_STREAM_DATA is due).
    ///
    /// When the update is due: see [`RecvWindow::update_due`].
    pub(crate) fn consume(&mut self, n: u64, now: Option<Instant>, rtt: Duration) -> bool {
        self.consumed = self.consumed.saturating_add(n).min(self.received);
        match (self.policy, self.update, now) {
            (WindowPolicy::Linux, _, Some(now)) => self.right_size(now, rtt),
            (WindowPolicy::Auto, WindowUpdate::Eighth, Some(now)) => self.auto_tune(now, rtt),
            _ => {}
        }
        if !self.update_due() {
            return false;
        }
        if let (WindowPolicy::Auto, WindowUpdate::Half, Some(now)) = (self.policy, self.update, now) {
            // Half-window updates: they follow each other within two RTTs when the consumer drains half a
            // window that fast.
            if let Some((last, _)) = self.epoch {
                if now.saturating_duration_since(last) < rtt.saturating_mul(2) {
                    self.window = self.window.saturating_mul(2).min(self.max_window);
                }
            }
            self.epoch = Some((now, self.consumed));
        }
        self.advertise()
    }

    /// [`WindowPolicy::Auto`] with eighth-window updates: each time the application has consumed another
    /// half window, the time that took is compared with two round trips (`rtt`, at least
    /// [`AUTO_RTT_FLOOR`]); less means the window limits the transfer, and it doubles (up to the maximum).
    fn auto_tune(&mut self, now: Instant, rtt: Duration) {
        let Some((start, mark)) = self.epoch else {
            self.epoch = Some((now, self.consumed));
            return;
        };
        if self.consumed.saturating_sub(mark) < self.window / 2 {
            return;
        }
        if now.saturating_duration_since(start) < rtt.max(AUTO_RTT_FLOOR).saturating_mul(2) {
            self.window = self.window.saturating_mul(2).min(self.max_window);
        }
        self.epoch = Some((now, self.consumed));
    }

    /// Whether a new limit is worth a MAX_DATA / MAX_STREAM_DATA frame now.
    ///
    /// - [`WindowUpdate::Eighth`]: the new limit would be at least an eighth of the window above the
    ///   advertised one (quinn's threshold for its stream windows). A window-limited sender then never
    ///   waits for more than an eighth of the window of credit, so a window `W` carries about `15/16 · W`
    ///   per round trip instead of `W / 2`, close to a TCP receiver whose window moves with every
    ///   acknowledgement.
    /// - [`WindowUpdate::Half`]: less than half the window is left. Fewer frames, but the sender waits for
    ///   half-window steps.
    fn update_due(&self) -> bool {
        match self.update {
            WindowUpdate::Half => self.advertised.saturating_sub(self.consumed) < self.window / 2,
            WindowUpdate::Eighth => {
                let new = self.consumed.saturating_add(self.window);
                new.saturating_sub(self.advertised) >= (self.window / 8).max(1)
            }
        }
    }

    /// Raises the advertised limit to `consumed + window` if that is higher; returns whether it rose.
    fn advertise(&mut self) -> bool {
        let new = self.consumed.saturating_add(self.window);
        if new > self.advertised {
            self.advertised = new;
            true
        } else {
            false
        }
    }

    /// [`WindowPolicy::Linux`]: once per `rtt`, measures what the application consumed since the previous
    /// measurement; a measurement above every earlier one sets the window to twice it plus
    /// [`LINUX_CUSHION`] (never smaller than the window was, never above the maximum).
    ///
    /// This is Linux's `tcp_rcv_space_adjust` (net/ipv4/tcp_input.c): "copied = bytes received in previous
    /// RTT, our base window. To cope with packet losses, we need a 2x factor", `rcvwin = (copied << 1) +
    /// 16 * advmss`, measured against `rcvq_space.space` (the largest earlier measurement) and applied only
    /// when it raises `sk_rcvbuf`. Linux adds a further term for a sender in slow start (up to another 2x
    /// of the window per RTT); it is left out so that a reader's steady rate `r` settles the window at
    /// `2 r RTT` plus the cushion.
    fn right_size(&mut self, now: Instant, rtt: Duration) {
        let Some((start, seq)) = self.sizing.start else {
            self.sizing.start = Some((now, self.consumed));
            return;
        };
        if now.saturating_duration_since(start) < rtt {
            return;
        }
        let copied = self.consumed.saturating_sub(seq);
        if copied > self.sizing.space {
            let target = copied
                .saturating_mul(2)
                .saturating_add(LINUX_CUSHION)
                .min(self.max_window);
            self.window = self.window.max(target);
            self.sizing.space = copied;
        }
        self.sizing.start = Some((now, self.consumed));
    }

    /// Raises the window to at least `window` (capped at the maximum), e.g. to keep the connection window
    /// above a stream window that grew. A [`WindowPolicy::Fixed`] window does not move.
    pub(crate) fn ensure_window(&mut self, window: u64) {
        if self.policy != WindowPolicy::Fixed {
            self.window = self.window.max(window.min(self.max_window));
        }
    }

    /// Changes the policy and the maximum at run time. [`WindowPolicy::Fixed`] sets the window to
    /// `max_window` from now on; the others keep the current window, cut to `max_window` (and raised to the
    /// floor under [`WindowPolicy::Linux`]). The advertised limit never decreases: when `consumed + window`
    /// is above it, it is raised now and `true` returned (an update is due).
    pub(crate) fn set_policy(&mut self, policy: WindowPolicy, max_window: u64) -> bool {
        self.policy = policy;
        self.max_window = max_window;
        self.window = match policy {
            WindowPolicy::Fixed => max_window,
            WindowPolicy::Auto => self.window.min(max_window),
            WindowPolicy::Linux => self.window.max(self.min_window).min(max_window),
        };
        self.advertise()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_credit_ignores_non_increasing_limits() {
        let mut c = SendCredit::new(100);
        assert!(!c.raise(100));
        assert!(!c.raise(50));
        assert_eq!(c.max(), 100);
        c.consume(100);
        assert_eq!(c.take_blocked(), Some(100));
        assert_eq!(c.take_blocked(), None, "each limit is reported once");
        assert!(c.blocked_at(100));
        assert!(c.raise(150));
        assert!(!c.blocked_at(100));
        assert_eq!(c.available(), 50);
        assert_eq!(c.used(), 100);
    }

    #[allow(clippy::disallowed_methods)] // tests need an origin for time
    fn t0() -> Instant {
        Instant::now()
    }

    #[test]
    fn half_rule_updates_once_less_than_half_is_left() {
        let mut w = RecvWindow::new(100, 100).with_update(WindowUpdate::Half);
        w.receive_up_to(100).unwrap();
        assert_eq!(w.receive_up_to(101), Err(WindowExceeded));
        // 50 left: not below half yet.
        assert!(!w.consume(50, None, Duration::ZERO));
        assert_eq!(w.advertised(), 100);
        // 49 left: update to consumed + window.
        assert!(w.consume(1, None, Duration::ZERO));
        assert_eq!(w.advertised(), 151);
    }

    #[test]
    fn eighth_rule_updates_once_the_limit_rises_by_an_eighth() {
        // Window 800: an update is due once consumed + 800 is at least 100 above the advertised 800.
        let mut w = RecvWindow::new(800, 800);
        w.receive_up_to(800).unwrap();
        assert!(!w.consume(99, None, Duration::ZERO));
        assert_eq!(w.advertised(), 800);
        assert!(w.consume(1, None, Duration::ZERO));
        assert_eq!(w.advertised(), 900);
        // The next one 100 further on.
        assert!(!w.consume(99, None, Duration::ZERO));
        assert!(w.consume(1, None, Duration::ZERO));
        assert_eq!(w.advertised(), 1000);
    }

    #[test]
    fn auto_doubles_per_half_window_consumed_within_two_floored_rtts() {
        let t = t0();
        let ms = Duration::from_millis;
        // Window 1000 (max 8000), a 100 µs RTT: the floor makes it 1 ms, so half a window (500 bytes)
        // consumed within 2 ms doubles the window.
        let mut w = RecvWindow::new(1000, 8000);
        w.receive_up_to(1000).unwrap();
        let rtt = Duration::from_micros(100);
        // The first timed read starts the measurement at (t, 100).
        w.consume(100, Some(t), rtt);
        assert_eq!(w.window(), 1000);
        // 499 more at 1.5 ms: 499 since the mark, not yet half a window.
        w.consume(499, Some(t + Duration::from_micros(1500)), rtt);
        assert_eq!(w.window(), 1000);
        // 1 more at 1.9 ms: 500 since the mark within 2 ms (2 × max(100 µs, 1 ms)): doubles to 2000.
        // Unfloored (2 × 100 µs) it would not have.
        w.consume(1, Some(t + Duration::from_micros(1900)), rtt);
        assert_eq!(w.window(), 2000);
        assert_eq!(w.advertised(), 600 + 2000);
        // The mark is now (1.9 ms, 600). Another half window (1000) consumed 2 ms later: not within
        // 2 ms, the window stays.
        w.receive_up_to(2600).unwrap();
        w.consume(1000, Some(t + ms(2) + Duration::from_micros(1900)), rtt);
        assert_eq!(w.window(), 2000);
        // A 30 ms RTT: 1000 bytes (half of 2000) in 59 ms doubles, in 60 ms does not.
        let rtt = ms(30);
        let mark = t + ms(2) + Duration::from_micros(1900);
        w.receive_up_to(3600).unwrap();
        w.consume(1000, Some(mark + ms(59)), rtt);
        assert_eq!(w.window(), 4000);
        w.receive_up_to(w.advertised()).unwrap();
        w.consume(2000, Some(mark + ms(59) + ms(60)), rtt);
        assert_eq!(w.window(), 4000);
    }

    #[test]
    fn auto_with_half_updates_keeps_the_unfloored_spacing_rule() {
        // Under the half rule the doubling reads the time between updates against 2 RTT, unfloored.
        let t = t0();
        let us = Duration::from_micros;
        let mut w = RecvWindow::new(1000, 8000).with_update(WindowUpdate::Half);
        w.receive_up_to(1000).unwrap();
        // 499 left < 500: the first update, nothing to compare with.
        assert!(w.consume(501, Some(t), us(100)));
        assert_eq!((w.window(), w.advertised()), (1000, 1501));
        // The next one 250 µs later with a 100 µs RTT: not within 200 µs, no doubling (the eighth rule's
        // 1 ms floor would have doubled it).
        w.receive_up_to(1501).unwrap();
        assert!(w.consume(501, Some(t + us(250)), us(100)));
        assert_eq!((w.window(), w.advertised()), (1000, 2002));
        // The next one 150 µs later with a 1 ms RTT: within 2 ms, doubles before advertising.
        w.receive_up_to(2002).unwrap();
        assert!(w.consume(501, Some(t + us(400)), Duration::from_millis(1)));
        assert_eq!((w.window(), w.advertised()), (2000, 1503 + 2000));
    }
}
