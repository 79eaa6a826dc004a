//! HighSpeed TCP (RFC 3649, Floyd 2003; Linux `net/ipv4/tcp_highspeed.c`) as a single-path
//! [`PathController`], run uncoupled per path.
//!
//! HighSpeed TCP changes Reno's response function above `Low_Window` segments so that a window of
//! `High_Window` segments is sustained at loss rate `High_P`: per RTT the window grows by `a(w)` segments and
//! on congestion it keeps `1 − b(w)` of itself, with `a` and `b` read off the response function
//! `w = 0.12/p^0.835` (RFC 3649 §5).
//!
//! Formulas (RFC 3649 §5 and Appendix A; `w = cwnd/mss` in segments, `ln` the natural logarithm):
//! * `w ≤ Low_Window`: `a = 1`, `b = 0.5` (standard TCP).
//! * otherwise, with `f = (ln w − ln Low_Window)/(ln High_Window − ln Low_Window)`:
//!   `b(w) = (High_Decrease − 0.5)·f + 0.5`,
//!   `p(w) = exp(ln Low_P + f·(ln High_P − ln Low_P))`,
//!   `a(w) = w²·p(w)·2·b(w)/(2 − b(w))`.
//! * per acknowledged packet of `bytes` in congestion avoidance: `cwnd += a(w)·mss·bytes/cwnd`;
//! * on congestion (once per RFC 9002 recovery period): `ssthresh = cwnd·(1 − b(w))`,
//!   `cwnd = max(ssthresh, 2·mss)`.
//!
//! Constants (RFC 3649): `Low_Window = 38`, `High_Window = 83000`, `High_P = 10⁻⁷`, `High_Decrease = 0.1`,
//! `Low_P = 10⁻³` (the loss rate at which standard TCP's `1.2/√p` gives 38 segments).
//!
//! Choices:
//! * `a(w)` and `b(w)` are computed from the formulas (real-valued) on every ACK rather than looked up in a
//!   table (Linux's `hstcp_aimd_vals` holds the RFC's Appendix B table, 73 rows, with integer `a`).
//! * `w` is capped at `High_Window` when evaluating them, so `b` never falls below `High_Decrease` and `a`
//!   stops at `a(High_Window) ≈ 72.5`, as Linux's table ends there (the RFC leaves larger windows open).
//! * Just above `Low_Window` the formula gives `a` slightly below 1 (0.96 at 38.01 segments); `a` is raised to
//!   1 so HighSpeed is never less aggressive than standard TCP.
//! * RFC 3742 limited slow start, which RFC 3649 recommends alongside, is not implemented: slow start,
//!   recovery, persistent congestion, the app-limited rule and pacing are RFC 9002's ([`RenoWindow`]).

use std::time::Instant;

use crate::params::Params;
use crate::window::DEFAULT_MAX_WINDOW;
use crate::{
    AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathController,
    PathControllerFactory, RenoWindow, SentEvent, Uncoupled,
};

/// Registry name.
pub const NAME: &str = "highspeed";

/// RFC 3649 `Low_Window` (segments).
pub const DEFAULT_LOW_WINDOW: f64 = 38.0;

/// RFC 3649 `High_Window` (segments).
pub const DEFAULT_HIGH_WINDOW: f64 = 83_000.0;

/// RFC 3649 `High_P`.
pub const DEFAULT_HIGH_P: f64 = 1e-7;

/// RFC 3649 `High_Decrease`.
pub const DEFAULT_HIGH_DECREASE: f64 = 0.1;

/// RFC 3649 `Low_P`: standard TCP's loss rate at `Low_Window`.
pub const LOW_P: f64 = 1e-3;

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &[
    "low_window",
    "high_window",
    "high_p",
    "high_decrease",
    "max_window",
];

/// Builds the controller from registry parameters.
///
/// * `low_window` in `[1, 10^4]` segments (default 38), `high_window` in `[low_window + 1, 10^8]` (83000);
/// * `high_p` in `[10⁻¹², 10⁻⁴]` (10⁻⁷); `high_decrease` in `[0.01, 0.5]` (0.1);
/// * `max_window`: largest window in bytes, in `[1, 2^32]`.
pub fn from_params(params: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
    Ok(Box::new(Uncoupled::new(HighSpeedConfig::from_params(params)?)))
}

/// HighSpeed TCP's configuration; also the [`PathControllerFactory`] of [`HighSpeed`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HighSpeedConfig {
    /// Standard TCP at or below this window, segments.
    pub low_window: f64,
    /// The window sustained at `high_p`, segments.
    pub high_window: f64,
    /// Loss rate at `high_window`.
    pub high_p: f64,
    /// Decrease fraction at `high_window`.
    pub high_decrease: f64,
    /// Largest window in bytes.
    pub max_window: u64,
}

impl Default for HighSpeedConfig {
    fn default() -> Self {
        HighSpeedConfig {
            low_window: DEFAULT_LOW_WINDOW,
            high_window: DEFAULT_HIGH_WINDOW,
            high_p: DEFAULT_HIGH_P,
            high_decrease: DEFAULT_HIGH_DECREASE,
            max_window: DEFAULT_MAX_WINDOW,
        }
    }
}

impl HighSpeedConfig {
    /// Reads the parameters listed in [`from_params`].
    pub fn from_params(params: &mut Params) -> Result<HighSpeedConfig, CcError> {
        let low_window = params.f64("low_window", DEFAULT_LOW_WINDOW, 1.0, 1e4)?;
        let high_window = params.f64(
            "high_window",
            DEFAULT_HIGH_WINDOW.max(low_window + 1.0),
            low_window + 1.0,
            1e8,
        )?;
        Ok(HighSpeedConfig {
            low_window,
            high_window,
            high_p: params.f64("high_p", DEFAULT_HIGH_P, 1e-12, 1e-4)?,
            high_decrease: params.f64("high_decrease", DEFAULT_HIGH_DECREASE, 0.01, 0.5)?,
            max_window: params.u64("max_window", DEFAULT_MAX_WINDOW, 1, DEFAULT_MAX_WINDOW)?,
        })
    }

    /// `(a(w), b(w))` for a window of `w` segments (module doc).
    pub fn a_b(&self, w: f64) -> (f64, f64) {
        if w.is_nan() || w <= self.low_window || self.high_window <= self.low_window {
            return (1.0, 0.5);
        }
        let w = w.min(self.high_window);
        let f = (w.ln() - self.low_window.ln()) / (self.high_window.ln() - self.low_window.ln());
        let b = ((self.high_decrease - 0.5) * f + 0.5).clamp(self.high_decrease.min(0.5), 0.5);
        let p = (LOW_P.ln() + f * (self.high_p.ln() - LOW_P.ln())).exp();
        let a = w * w * p * 2.0 * b / (2.0 - b);
        (if a.is_finite() { a.max(1.0) } else { 1.0 }, b)
    }
}

impl PathControllerFactory for HighSpeedConfig {
    type Controller = HighSpeed;

    fn name(&self) -> &'static str {
        NAME
    }

    fn build(&self, _now: Instant, max_datagram_size: u16) -> HighSpeed {
        HighSpeed::new(*self, max_datagram_size)
    }
}

/// One path's HighSpeed TCP controller.
#[derive(Clone, Debug)]
pub struct HighSpeed {
    config: HighSpeedConfig,
    window: RenoWindow,
}

impl HighSpeed {
    /// A controller at the start of slow start.
    pub fn new(config: HighSpeedConfig, max_datagram_size: u16) -> Self {
        HighSpeed {
            config,
            window: RenoWindow::with_max_window(max_datagram_size, config.max_window),
        }
    }

    /// The underlying RFC 9002 window.
    pub fn reno(&self) -> &RenoWindow {
        &self.window
    }
}

impl PathController for HighSpeed {
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.window.on_packet_sent(ev);
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        let config = self.config;
        self.window.on_ack(ev, |w, p| {
            let (a, _) = config.a_b(w.cwnd_packets());
            a * w.reno_increase(p)
        });
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        let (_, b) = self.config.a_b(self.window.cwnd_packets());
        self.window.on_congestion(ev, 1.0 - b);
    }

    fn on_max_datagram_size(&mut self, max_datagram_size: u16) {
        self.window.set_max_datagram_size(max_datagram_size);
    }

    fn window(&self) -> u64 {
        self.window.window()
    }

    fn pacing_rate(&self) -> Option<u64> {
        self.window.pacing_rate()
    }

    /// The state without building the metrics (they allocate their extras): read after every acknowledgement.
    fn state(&self) -> &'static str {
        self.window.state()
    }

    fn metrics(&self) -> CcMetrics {
        let (a, b) = self.config.a_b(self.window.cwnd_packets());
        self.window.metrics(vec![
            Metric { name: "a", value: a },
            Metric { name: "b", value: b },
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PathId;
    use crate::test_support::{ack, build_spec, close, loss, ms, t0};

    #[test]
    fn a_and_b_match_rfc3649_table() {
        let c = HighSpeedConfig::default();
        // RFC 3649 Appendix B: (w, a(w), b(w)) with a rounded to an integer and b to two digits.
        for (w, a_table, b_table) in [
            (118.0, 2.0, 0.44),
            (221.0, 3.0, 0.41),
            (347.0, 4.0, 0.38),
            (1058.0, 8.0, 0.33),
            (1529.0, 10.0, 0.31),
        ] {
            let (a, b) = c.a_b(w);
            assert!(a >= a_table && a < a_table + 0.2, "a({w}) = {a}, table {a_table}");
            assert!(close(b, b_table, 0.006), "b({w}) = {b}, table {b_table}");
        }
        // Standard TCP at and below Low_Window.
        assert_eq!(c.a_b(38.0), (1.0, 0.5));
        assert_eq!(c.a_b(10.0), (1.0, 0.5));
        // At High_Window: b = 0.1, p = 10⁻⁷, a = 83000²·10⁻⁷·0.2/1.9 = 72.515789; capped beyond.
        let (a, b) = c.a_b(83_000.0);
        assert!(close(a, 72.515_789, 1e-5) && close(b, 0.1, 1e-12), "{a} {b}");
        assert_eq!(c.a_b(200_000.0), c.a_b(83_000.0));
    }

    #[test]
    fn loss_keeps_one_minus_b_and_growth_is_a_per_rtt() {
        let t = t0();
        let mut c = HighSpeed::new(HighSpeedConfig::default(), 1000);
        // Slow start to 1058 segments, then a loss: b(1058) = 0.5 − 0.4·ln(1058/38)/ln(83000/38) = 0.326945,
        // cwnd = 1058000·(1 − 0.326945) = 712091.94.
        ack(&mut c, t + ms(100), t, 1048, 1000, ms(100));
        assert_eq!(c.window(), 1_058_000);
        c.on_congestion(&loss(t + ms(150), t + ms(100)));
        assert!(close(c.reno().cwnd(), 712_091.94, 0.01), "{}", c.reno().cwnd());
        // At w = 712.09 segments a = 6.373868: one packet adds 6.373868·1000·1000/712091.94 = 8.950905 bytes.
        ack(&mut c, t + ms(300), t + ms(200), 1, 1000, ms(100));
        assert!(close(c.reno().cwnd(), 712_100.89, 0.01), "{}", c.reno().cwnd());
        assert!(close(c.metrics().extra("b").unwrap(), 0.347_542, 1e-5));
    }

    #[test]
    fn small_windows_behave_as_newreno() {
        let t = t0();
        let mut c = HighSpeed::new(HighSpeedConfig::default(), 1200);
        c.on_congestion(&loss(t + ms(100), t));
        assert_eq!(c.window(), 6000); // 12000·0.5
        ack(&mut c, t + ms(300), t + ms(200), 1, 1200, ms(100));
        assert_eq!(c.window(), 6240); // + 1200·1200/6000
    }

    #[test]
    fn from_params_accepts_known_and_rejects_bad_params() {
        let t = t0();
        let mut cc = build_spec(
            "highspeed:low_window=5,high_window=1000,high_p=1e-6,high_decrease=0.2",
            from_params,
            PARAMS,
        )
        .unwrap();
        cc.on_path_added(PathId(0), t, 1000);
        cc.on_congestion(&loss(t + ms(100), t));
        // w = 10 > 5: b = 0.5 − 0.3·ln 2/ln 200 = 0.460752 → 10000·0.539248 = 5392.48.
        assert_eq!(cc.window(PathId(0)), 5392);
        assert!(matches!(
            build_spec("highspeed:low_window=50,high_window=40", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build_spec("highspeed:a=1", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::UnknownParameter { .. }))
        ));
    }
}
