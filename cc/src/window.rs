//! The RFC 9002 §7 window machinery shared by NewReno and every coupled loss-based controller (LIA, OLIA,
//! BALIA, D-LIA, D-OLIA): slow start, the recovery period, the multiplicative decrease and persistent
//! congestion.
//!
//! [`RenoWindow`] keeps one path's window. Algorithms differ only in the congestion-avoidance increase (a
//! closure given to [`RenoWindow::on_ack`]) and in the decrease factor (given to
//! [`RenoWindow::on_congestion`]), so with one path a coupled algorithm runs the very same code as NewReno.
//!
//! Invariants: the window is a finite number of bytes in `[minimum_window, max_window]`; the slow-start
//! threshold is finite or `+∞`.

use std::time::{Duration, Instant};

use crate::{AckEvent, AckedPacket, CcMetrics, CongestionEvent, SentEvent};

/// RFC 9002 §7.3.2 `kLossReductionFactor`.
pub const LOSS_REDUCTION_FACTOR: f64 = 0.5;

/// RFC 9002 §7.7: pace at `N · cwnd / smoothed_rtt` with a small `N` ≥ 1.
pub const PACING_GAIN: f64 = 1.25;

/// Default upper bound on any window, in bytes (4 GiB): far above any path's BDP, small enough that
/// arithmetic on windows cannot overflow.
pub const DEFAULT_MAX_WINDOW: u64 = 1 << 32;

/// RFC 9002 §7.2 `kInitialWindow`: `min(10 · mds, max(14720, 2 · mds))`.
pub fn initial_window(max_datagram_size: u64) -> u64 {
    (10 * max_datagram_size).min(14_720.max(2 * max_datagram_size))
}

/// RFC 9002 §7.2 `kMinimumWindow`: `2 · mds`.
pub fn minimum_window(max_datagram_size: u64) -> u64 {
    2 * max_datagram_size
}

/// RFC 9002 §7.7 pacing rate `N · cwnd / srtt` in bytes per second (`None` before the first RTT sample).
pub fn window_pacing_rate(cwnd: f64, srtt: Option<Duration>) -> Option<u64> {
    let srtt = srtt?.as_secs_f64();
    if srtt <= 0.0 {
        return None;
    }
    let rate = PACING_GAIN * cwnd / srtt;
    // `as` saturates for values beyond u64; the window is bounded so this is exact in practice.
    rate.is_finite().then_some(rate as u64)
}

/// One path's RFC 9002 window state.
#[derive(Clone, Debug)]
pub struct RenoWindow {
    max_datagram_size: u64,
    cwnd: f64,
    ssthresh: f64,
    /// RFC 9002 `congestion_recovery_start_time`; `None` is the pseudocode's 0.
    recovery_start: Option<Instant>,
    /// No packet sent after `recovery_start` has been acknowledged yet.
    in_recovery: bool,
    srtt: Option<Duration>,
    latest_rtt: Option<Duration>,
    bytes_in_flight: u64,
    max_window: f64,
}

impl RenoWindow {
    /// A path at the start of slow start, with the RFC 9002 initial window.
    pub fn new(max_datagram_size: u16) -> Self {
        Self::with_max_window(max_datagram_size, DEFAULT_MAX_WINDOW)
    }

    /// Like [`RenoWindow::new`], with the window capped at `max_window` bytes.
    pub fn with_max_window(max_datagram_size: u16, max_window: u64) -> Self {
        let mds = u64::from(max_datagram_size).max(1);
        let max_window = (max_window.max(minimum_window(mds))) as f64;
        RenoWindow {
            max_datagram_size: mds,
            cwnd: (initial_window(mds) as f64).min(max_window),
            ssthresh: f64::INFINITY,
            recovery_start: None,
            in_recovery: false,
            srtt: None,
            latest_rtt: None,
            bytes_in_flight: 0,
            max_window,
        }
    }

    /// Maximum datagram size in bytes.
    pub fn max_datagram_size(&self) -> u64 {
        self.max_datagram_size
    }

    /// The window in bytes, with its fraction.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// The window in whole bytes.
    pub fn window(&self) -> u64 {
        self.cwnd as u64
    }

    /// The window in packets of the maximum datagram size (with fraction).
    pub fn cwnd_packets(&self) -> f64 {
        self.cwnd / self.max_datagram_size as f64
    }

    /// The slow-start threshold in bytes (`+∞` until the first congestion event).
    pub fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    /// `kMinimumWindow` for this path, in bytes.
    pub fn min_window(&self) -> f64 {
        minimum_window(self.max_datagram_size) as f64
    }

    /// The largest window allowed, in bytes.
    pub fn max_window(&self) -> f64 {
        self.max_window
    }

    /// Whether the path is in slow start (`cwnd < ssthresh`).
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Whether the path is in a recovery period (entered on congestion, left when a packet sent after its start
    /// is acknowledged).
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// Smoothed RTT of the latest event, if any.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// Latest RTT sample of the latest event, if any.
    pub fn latest_rtt(&self) -> Option<Duration> {
        self.latest_rtt
    }

    /// Bytes in flight as of the latest event.
    pub fn bytes_in_flight(&self) -> u64 {
        self.bytes_in_flight
    }

    /// RFC 9002 §7.3.2: a congestion signal about a packet sent at `sent_time` is ignored when that packet was
    /// sent before the current recovery period began.
    pub fn sent_during_recovery(&self, sent_time: Instant) -> bool {
        self.recovery_start.is_some_and(|start| sent_time <= start)
    }

    /// Whether `ev` would start a new recovery period (and so reduce the window).
    pub fn will_reduce(&self, ev: &CongestionEvent) -> bool {
        !self.sent_during_recovery(ev.sent_time)
    }

    /// Sets the window, clamped to `[min_window, max_window]`; non-finite values are ignored.
    pub fn set_cwnd(&mut self, cwnd: f64) {
        if cwnd.is_finite() {
            self.cwnd = cwnd.clamp(self.min_window(), self.max_window);
        }
    }

    /// Sets the slow-start threshold (non-negative, `+∞` allowed; NaN is ignored).
    pub fn set_ssthresh(&mut self, ssthresh: f64) {
        if !ssthresh.is_nan() {
            self.ssthresh = ssthresh.max(0.0);
        }
    }

    /// Adopts a new maximum datagram size; the window keeps its byte value but never falls below the new
    /// minimum.
    pub fn set_max_datagram_size(&mut self, max_datagram_size: u16) {
        self.max_datagram_size = u64::from(max_datagram_size).max(1);
        self.max_window = self.max_window.max(self.min_window());
        self.set_cwnd(self.cwnd);
    }

    /// Records a sent packet (bytes in flight only; sending never changes the window).
    pub fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.bytes_in_flight = ev.bytes_in_flight;
    }

    /// RFC 9002 §7.3.1–§7.3.3 and Appendix B.5: processes each acknowledged packet in turn.
    ///
    /// A packet grows the window only if the sender was not application-limited (§7.8) and the packet was sent
    /// after the recovery period began. In slow start the window grows by the packet's size; in congestion
    /// avoidance by `ca_increase(self, packet)` bytes, which for NewReno is `mds · size / cwnd`.
    pub fn on_ack(
        &mut self,
        ev: &AckEvent<'_>,
        mut ca_increase: impl FnMut(&RenoWindow, &AckedPacket) -> f64,
    ) {
        self.on_ack_with(ev, |w, p, slow_start| {
            if slow_start {
                p.bytes as f64
            } else {
                ca_increase(w, p)
            }
        });
    }

    /// Like [`RenoWindow::on_ack`], but the increase of slow start is also the caller's:
    /// `increase(self, packet, in_slow_start)` gives the bytes to add for each packet that may grow the window
    /// (Hybla's `2^ρ − 1` segments per segment acknowledged, for instance). The recovery-period and
    /// app-limited rules are the same.
    pub fn on_ack_with(
        &mut self,
        ev: &AckEvent<'_>,
        mut increase: impl FnMut(&RenoWindow, &AckedPacket, bool) -> f64,
    ) {
        self.bytes_in_flight = ev.bytes_in_flight;
        self.srtt = Some(ev.rtt.smoothed);
        self.latest_rtt = Some(ev.rtt.latest);
        for packet in ev.packets {
            if self.sent_during_recovery(packet.time_sent) {
                // RFC 9002 §7.3.2: no growth for packets sent before the recovery period began.
                continue;
            }
            // RFC 9002 §7.3.3: recovery ends when a packet sent during it is acknowledged.
            self.in_recovery = false;
            if ev.app_limited {
                // RFC 9002 §7.8: the window SHOULD NOT grow while under-utilised.
                continue;
            }
            let increase = increase(self, packet, self.in_slow_start());
            if increase.is_finite() && increase > 0.0 {
                self.set_cwnd(self.cwnd + increase);
            }
        }
    }

    /// The NewReno congestion-avoidance increase for `packet`: `mds · size / cwnd` (RFC 9002 §7.3.3).
    pub fn reno_increase(&self, packet: &AckedPacket) -> f64 {
        self.max_datagram_size as f64 * packet.bytes as f64 / self.cwnd
    }

    /// RFC 9002 §7.3.2 `OnCongestionEvent` followed by §7.6.2 persistent congestion.
    ///
    /// Unless the signal concerns a packet sent before the current recovery period began, a new period starts,
    /// `ssthresh = cwnd · beta` and `cwnd = max(ssthresh, kMinimumWindow)`. Persistent congestion then
    /// collapses the window to the minimum and ends the recovery period. Returns whether a new recovery period
    /// started.
    pub fn on_congestion(&mut self, ev: &CongestionEvent, beta: f64) -> bool {
        self.bytes_in_flight = ev.bytes_in_flight;
        self.srtt = Some(ev.rtt.smoothed);
        self.latest_rtt = Some(ev.rtt.latest);
        let beta = if beta.is_finite() {
            beta.clamp(0.0, 1.0)
        } else {
            LOSS_REDUCTION_FACTOR
        };
        let reduced = self.will_reduce(ev);
        if reduced {
            self.recovery_start = Some(ev.now);
            self.in_recovery = true;
            self.ssthresh = self.cwnd * beta;
            self.set_cwnd(self.ssthresh.max(self.min_window()));
        }
        if ev.persistent_congestion {
            // RFC 9002 §7.6.2: "the sender's congestion window MUST be reduced to the minimum congestion
            // window", and the recovery period ends (Appendix B.8 sets the start time to 0).
            self.set_cwnd(self.min_window());
            self.recovery_start = None;
            self.in_recovery = false;
        }
        reduced
    }

    /// RFC 9002 §7.7 pacing rate for the current window.
    pub fn pacing_rate(&self) -> Option<u64> {
        window_pacing_rate(self.cwnd, self.srtt)
    }

    /// `"slow_start"`, `"recovery"` or `"congestion_avoidance"`.
    pub fn state(&self) -> &'static str {
        if self.in_recovery {
            "recovery"
        } else if self.in_slow_start() {
            "slow_start"
        } else {
            "congestion_avoidance"
        }
    }

    /// Metrics with the window, threshold, pacing rate and state filled in, and `extras` appended.
    pub fn metrics(&self, extras: Vec<crate::Metric>) -> CcMetrics {
        CcMetrics {
            cwnd: self.window(),
            ssthresh: self.ssthresh.is_finite().then_some(self.ssthresh as u64),
            pacing_rate: self.pacing_rate(),
            state: self.state(),
            extras,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PathId, RttSnapshot};

    #[test]
    fn initial_and_minimum_windows_follow_rfc9002() {
        assert_eq!(initial_window(1200), 12_000);
        assert_eq!(initial_window(1472), 14_720);
        assert_eq!(initial_window(1500), 14_720);
        assert_eq!(initial_window(9000), 18_000);
        assert_eq!(minimum_window(1200), 2400);
    }

    #[allow(clippy::disallowed_methods)] // test set-up needs a base instant
    fn t0() -> Instant {
        Instant::now()
    }

    #[test]
    fn recovery_period_suppresses_second_reduction_and_growth() {
        let t0 = t0();
        let rtt = RttSnapshot::from_rtt(Duration::from_millis(100));
        let mut w = RenoWindow::new(1200);
        let loss = |now: Instant, sent: Instant| CongestionEvent {
            path: PathId(0),
            now,
            sent_time: sent,
            lost_bytes: 1200,
            bytes_in_flight: 0,
            persistent_congestion: false,
            ecn: false,
            rtt,
        };
        assert!(w.on_congestion(&loss(t0 + Duration::from_secs(1), t0), 0.5));
        assert_eq!(w.window(), 6000);
        assert_eq!(w.ssthresh(), 6000.0);
        // A loss of a packet sent before recovery started is ignored.
        assert!(!w.on_congestion(
            &loss(t0 + Duration::from_secs(2), t0 + Duration::from_millis(900)),
            0.5
        ));
        assert_eq!(w.window(), 6000);
        // Acking a packet sent before recovery started does not grow the window nor end recovery.
        let old = [AckedPacket {
            bytes: 1200,
            time_sent: t0 + Duration::from_millis(500),
        }];
        let ack = |packets: &[AckedPacket], now| {
            let ev = AckEvent {
                path: PathId(0),
                now,
                rtt,
                packets,
                prior_bytes_in_flight: 1200,
                bytes_in_flight: 0,
                app_limited: false,
                rate_sample: None,
            };
            let mut w2 = w.clone();
            w2.on_ack(&ev, RenoWindow::reno_increase);
            w2
        };
        let w_old = ack(&old, t0 + Duration::from_secs(2));
        assert_eq!(w_old.window(), 6000);
        assert!(w_old.in_recovery());
        // A packet sent after the start ends recovery and grows by mds·size/cwnd = 1200·1200/6000 = 240.
        let new = [AckedPacket {
            bytes: 1200,
            time_sent: t0 + Duration::from_millis(1100),
        }];
        let w_new = ack(&new, t0 + Duration::from_secs(2));
        assert_eq!(w_new.window(), 6240);
        assert!(!w_new.in_recovery());
    }

    #[test]
    fn persistent_congestion_collapses_to_minimum() {
        let t0 = t0();
        let mut w = RenoWindow::new(1200);
        w.on_congestion(
            &CongestionEvent {
                path: PathId(0),
                now: t0 + Duration::from_secs(1),
                sent_time: t0,
                lost_bytes: 12_000,
                bytes_in_flight: 0,
                persistent_congestion: true,
                ecn: false,
                rtt: RttSnapshot::from_rtt(Duration::from_millis(50)),
            },
            LOSS_REDUCTION_FACTOR,
        );
        assert_eq!(w.window(), 2400);
        assert_eq!(w.ssthresh(), 6000.0);
        assert!(w.in_slow_start());
        assert!(!w.sent_during_recovery(t0));
    }
}
