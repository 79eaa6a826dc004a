//! Scalable TCP (Kelly, "Scalable TCP: improving performance in highspeed wide area networks", ACM CCR 33(2),
//! 2003; Linux `net/ipv4/tcp_scalable.c`) as a single-path [`PathController`], run uncoupled per path.
//!
//! Multiplicative increase, multiplicative decrease: the window grows by a fixed fraction `a` of a segment per
//! segment acknowledged, so by `a·cwnd` per RTT (1 % with `a = 0.01`), and shrinks by the fraction `b` on
//! congestion, so recovery from a loss takes a number of RTTs independent of the window.
//!
//! Formulas (windows in bytes, `mss` = `max_datagram_size`):
//! * congestion avoidance, per acknowledged packet of `bytes`: `cwnd += mss·bytes / min(cwnd, mss/a)`. This is
//!   Linux's `tcp_cong_avoid_ai(tp, min(cwnd, 100), acked)`, i.e. "one segment every `min(cwnd, 100)` segments
//!   acknowledged": Kelly's `cwnd += a` per ACK above `1/a = 100` segments, NewReno's `1/cwnd` below, so a small
//!   window is never less aggressive than Reno.
//! * congestion (loss or ECN-CE), once per RFC 9002 recovery period: `ssthresh = cwnd·(1 − b)`,
//!   `cwnd = max(ssthresh, 2·mss)`; Kelly's `b = 0.125` (Linux `cwnd − cwnd>>3`).
//!
//! Constants: `a = 0.01` (Linux `TCP_SCALABLE_AI_CNT = 100`), `b = 0.125` (Linux `TCP_SCALABLE_MD_SCALE = 3`).
//!
//! Choices: slow start, the recovery period, persistent congestion (collapse to `2·mss`), the app-limited rule
//! and pacing are RFC 9002's ([`RenoWindow`]). Increases are real-valued byte counts instead of Linux's integer
//! counter (`snd_cwnd_cnt`).

use std::time::Instant;

use crate::params::Params;
use crate::window::DEFAULT_MAX_WINDOW;
use crate::{
    AckEvent, AckedPacket, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathController,
    PathControllerFactory, RenoWindow, SentEvent, Uncoupled,
};

/// Registry name.
pub const NAME: &str = "scalable";

/// Kelly's additive increase per segment acknowledged, in segments (Linux: 1/100).
pub const DEFAULT_A: f64 = 0.01;

/// Kelly's decrease fraction (Linux: 1/8).
pub const DEFAULT_B: f64 = 0.125;

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &["a", "b", "max_window"];

/// Builds the controller from registry parameters.
///
/// * `a`: increase per segment acknowledged, in segments, in `[0.0001, 1]` (default 0.01).
/// * `b`: decrease fraction in `[0.01, 0.9]` (default 0.125).
/// * `max_window`: largest window in bytes, in `[1, 2^32]` (default 2^32; never below `2·mds`).
pub fn from_params(params: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
    Ok(Box::new(Uncoupled::new(ScalableConfig::from_params(params)?)))
}

/// Scalable TCP's configuration; also the [`PathControllerFactory`] of [`Scalable`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScalableConfig {
    /// Increase per segment acknowledged, in segments.
    pub a: f64,
    /// Decrease fraction: the window keeps `1 − b` of itself on congestion.
    pub b: f64,
    /// Largest window in bytes.
    pub max_window: u64,
}

impl Default for ScalableConfig {
    fn default() -> Self {
        ScalableConfig {
            a: DEFAULT_A,
            b: DEFAULT_B,
            max_window: DEFAULT_MAX_WINDOW,
        }
    }
}

impl ScalableConfig {
    /// Reads `a`, `b` and `max_window` (see [`from_params`]).
    pub fn from_params(params: &mut Params) -> Result<ScalableConfig, CcError> {
        Ok(ScalableConfig {
            a: params.f64("a", DEFAULT_A, 0.0001, 1.0)?,
            b: params.f64("b", DEFAULT_B, 0.01, 0.9)?,
            max_window: params.u64("max_window", DEFAULT_MAX_WINDOW, 1, DEFAULT_MAX_WINDOW)?,
        })
    }
}

impl PathControllerFactory for ScalableConfig {
    type Controller = Scalable;

    fn name(&self) -> &'static str {
        NAME
    }

    fn build(&self, _now: Instant, max_datagram_size: u16) -> Scalable {
        Scalable::new(*self, max_datagram_size)
    }
}

/// One path's Scalable TCP controller.
#[derive(Clone, Debug)]
pub struct Scalable {
    config: ScalableConfig,
    window: RenoWindow,
}

impl Scalable {
    /// A controller at the start of slow start.
    pub fn new(config: ScalableConfig, max_datagram_size: u16) -> Self {
        Scalable {
            config,
            window: RenoWindow::with_max_window(max_datagram_size, config.max_window),
        }
    }

    /// The underlying RFC 9002 window.
    pub fn reno(&self) -> &RenoWindow {
        &self.window
    }

    /// `mss·bytes / min(cwnd, mss/a)`.
    fn increase(a: f64, w: &RenoWindow, p: &AckedPacket) -> f64 {
        let mss = w.max_datagram_size() as f64;
        mss * p.bytes as f64 / w.cwnd().min(mss / a)
    }
}

impl PathController for Scalable {
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.window.on_packet_sent(ev);
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        let a = self.config.a;
        self.window.on_ack(ev, |w, p| Self::increase(a, w, p));
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        self.window.on_congestion(ev, 1.0 - self.config.b);
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
        self.window.metrics(vec![Metric {
            name: "cwnd_packets",
            value: self.window.cwnd_packets(),
        }])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PathId;
    use crate::test_support::{ack, build_spec, close, loss, ms, t0};

    #[test]
    fn loss_keeps_seven_eighths() {
        let t = t0();
        let mut c = Scalable::new(ScalableConfig::default(), 1200);
        c.on_congestion(&loss(t + ms(100), t));
        // 12000 · 0.875 = 10500
        assert_eq!(c.window(), 10_500);
        assert_eq!(c.metrics().ssthresh, Some(10_500));
        // Below 100 segments the increase is Reno's: 1200·1200/10500 = 137.142857 per packet.
        ack(&mut c, t + ms(300), t + ms(200), 1, 1200, ms(100));
        assert!(close(c.reno().cwnd(), 10_637.142_857, 1e-5));
    }

    #[test]
    fn grows_one_percent_per_rtt_above_100_segments() {
        let t = t0();
        let mut c = Scalable::new(ScalableConfig::default(), 1000);
        // Slow start 10000 + 190·1000 = 200000 (200 segments), loss → 175000 (175 segments).
        ack(&mut c, t + ms(100), t, 190, 1000, ms(100));
        assert_eq!(c.window(), 200_000);
        c.on_congestion(&loss(t + ms(150), t + ms(100)));
        assert_eq!(c.window(), 175_000);
        // One window of acks (175 packets): each adds 1000·1000/min(175000, 100000) = 10 bytes = 0.01 segment,
        // so the window grows by 1750 bytes = 1 % of 175000.
        ack(&mut c, t + ms(300), t + ms(200), 175, 1000, ms(100));
        assert_eq!(c.window(), 176_750);
        // Another loss: 176750 · 0.875 = 154656.25.
        c.on_congestion(&loss(t + ms(400), t + ms(250)));
        assert!(close(c.reno().cwnd(), 154_656.25, 1e-9));
    }

    #[test]
    fn from_params_accepts_known_and_rejects_bad_params() {
        let t = t0();
        let mut cc = build_spec("scalable:a=0.02,b=0.5,max_window=100000", from_params, PARAMS).unwrap();
        assert_eq!(cc.name(), "scalable");
        cc.on_path_added(PathId(0), t, 1200);
        cc.on_congestion(&loss(t + ms(100), t));
        assert_eq!(cc.window(PathId(0)), 6000); // 12000 · (1 − 0.5)
        assert!(matches!(
            build_spec("scalable:b=1", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build_spec("scalable:c=1", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::UnknownParameter { .. }))
        ));
    }
}
