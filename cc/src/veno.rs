//! TCP Veno (Fu, Liew, "TCP Veno: TCP enhancement for transmission over wireless access networks", IEEE JSAC
//! 21(2), 2003; Linux `net/ipv4/tcp_veno.c`) as a single-path [`PathController`], run uncoupled per path.
//!
//! Veno uses Vegas's estimate of the packets queued in the network, the backlog `N`, to tell random
//! (wireless) losses from congestive ones: a loss with a small backlog is taken as random and cuts the window
//! by only a fifth; a large backlog also slows the increase down.
//!
//! Formulas (`mss` = `max_datagram_size`, windows in bytes, `N` in segments):
//! * `N = (cwnd/mss)·(RTT − BaseRTT)/RTT`, the Vegas backlog (`(Expected − Actual)·BaseRTT`), recomputed on
//!   every acknowledgement with that ACK's RTT sample; `BaseRTT` = the smallest sample ever seen;
//! * congestion avoidance, per acknowledged packet of `bytes`: `N < β`: `cwnd += mss·bytes/cwnd` (Reno, one
//!   segment per RTT); `N ≥ β`: `cwnd += mss·bytes/(2·cwnd)` (one segment every other RTT: the paper's
//!   "increase by one every other ACK" of the per-ACK `1/cwnd` increase);
//! * on loss (once per RFC 9002 recovery period): `N < β` (random loss): `ssthresh = cwnd·4/5`; otherwise
//!   (congestive loss): `ssthresh = cwnd/2`; then `cwnd = max(ssthresh, 2·mss)`.
//!
//! Constants: `β = 3` segments (paper and Linux `beta = 3 << V_PARAM_SHIFT`), random-loss factor 4/5,
//! congestive factor 1/2.
//!
//! Choices (Linux's behaviour where the paper is vague, unless noted):
//! * `N` uses each ACK's latest RTT sample (Linux resets `minrtt` on every `cong_avoid` call, so it too
//!   works from the latest samples); real-valued, not Linux's `<< 1` fixed point.
//! * Until 3 RTT samples have been seen, the increase is Reno's (Linux `cntrtt <= 2`); `N` starts at 0, so a
//!   loss before any sample is treated as random (Linux's zero-initialised `diff`).
//! * "Every other ACK" becomes half the per-byte increase, the same growth without a toggle (Linux keeps an
//!   `inc` flag and adds one segment every second window); slow start is RFC 9002's, unchanged by `N`.
//! * An ECN-CE mark is never a random loss: it always halves (this project's choice; the paper has no ECN).
//! * Recovery, persistent congestion, the app-limited rule and pacing are RFC 9002's ([`RenoWindow`]).

use std::time::{Duration, Instant};

use crate::params::Params;
use crate::window::{DEFAULT_MAX_WINDOW, LOSS_REDUCTION_FACTOR};
use crate::{
    AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathController,
    PathControllerFactory, RenoWindow, SentEvent, Uncoupled,
};

/// Registry name.
pub const NAME: &str = "veno";

/// The backlog threshold `β` in segments (paper and Linux: 3).
pub const DEFAULT_BETA: f64 = 3.0;

/// The window kept after a random loss (4/5).
pub const DEFAULT_RANDOM_LOSS_FACTOR: f64 = 0.8;

/// Samples needed before Veno's rules apply (Linux: more than 2).
const MIN_SAMPLES: u64 = 3;

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &["beta", "random_loss_factor", "max_window"];

/// Builds the controller from registry parameters.
///
/// * `beta`: backlog threshold in segments, in `[0, 10^6]` (default 3);
/// * `random_loss_factor`: window kept after a random loss, in `[0.5, 1]` (default 0.8);
/// * `max_window`: largest window in bytes.
pub fn from_params(params: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
    Ok(Box::new(Uncoupled::new(VenoConfig::from_params(params)?)))
}

/// Veno's configuration; also the [`PathControllerFactory`] of [`Veno`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VenoConfig {
    /// Backlog threshold, segments.
    pub beta: f64,
    /// Window kept after a random loss.
    pub random_loss_factor: f64,
    /// Largest window in bytes.
    pub max_window: u64,
}

impl Default for VenoConfig {
    fn default() -> Self {
        VenoConfig {
            beta: DEFAULT_BETA,
            random_loss_factor: DEFAULT_RANDOM_LOSS_FACTOR,
            max_window: DEFAULT_MAX_WINDOW,
        }
    }
}

impl VenoConfig {
    /// Reads the parameters listed in [`from_params`].
    pub fn from_params(params: &mut Params) -> Result<VenoConfig, CcError> {
        Ok(VenoConfig {
            beta: params.f64("beta", DEFAULT_BETA, 0.0, 1e6)?,
            random_loss_factor: params.f64("random_loss_factor", DEFAULT_RANDOM_LOSS_FACTOR, 0.5, 1.0)?,
            max_window: params.u64("max_window", DEFAULT_MAX_WINDOW, 1, DEFAULT_MAX_WINDOW)?,
        })
    }
}

impl PathControllerFactory for VenoConfig {
    type Controller = Veno;

    fn name(&self) -> &'static str {
        NAME
    }

    fn build(&self, _now: Instant, max_datagram_size: u16) -> Veno {
        Veno::new(*self, max_datagram_size)
    }
}

/// One path's Veno controller.
#[derive(Clone, Debug)]
pub struct Veno {
    config: VenoConfig,
    window: RenoWindow,
    base_rtt: Option<Duration>,
    samples: u64,
    /// The backlog `N` of the latest sample, segments.
    backlog: f64,
}

impl Veno {
    /// A controller at the start of slow start.
    pub fn new(config: VenoConfig, max_datagram_size: u16) -> Self {
        Veno {
            config,
            window: RenoWindow::with_max_window(max_datagram_size, config.max_window),
            base_rtt: None,
            samples: 0,
            backlog: 0.0,
        }
    }

    /// The underlying RFC 9002 window.
    pub fn reno(&self) -> &RenoWindow {
        &self.window
    }

    /// The backlog `N` of the latest sample, in segments.
    pub fn backlog(&self) -> f64 {
        self.backlog
    }
}

impl PathController for Veno {
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.window.on_packet_sent(ev);
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        if !ev.packets.is_empty() && !ev.rtt.latest.is_zero() {
            let rtt = ev.rtt.latest;
            let base = self.base_rtt.map_or(rtt, |b| b.min(rtt));
            self.base_rtt = Some(base);
            self.samples = self.samples.saturating_add(1);
            let (rtt_s, base_s) = (rtt.as_secs_f64(), base.as_secs_f64());
            let n = self.window.cwnd_packets() * (rtt_s - base_s) / rtt_s;
            if n.is_finite() {
                self.backlog = n;
            }
        }
        let slow = self.samples >= MIN_SAMPLES && self.backlog >= self.config.beta;
        self.window.on_ack(ev, |w, p| {
            let reno = w.reno_increase(p);
            if slow { reno / 2.0 } else { reno }
        });
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        let beta = if !ev.ecn && self.backlog < self.config.beta {
            self.config.random_loss_factor
        } else {
            LOSS_REDUCTION_FACTOR
        };
        self.window.on_congestion(ev, beta);
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
        self.window.metrics(vec![
            Metric {
                name: "backlog",
                value: self.backlog,
            },
            Metric {
                name: "base_rtt",
                value: self.base_rtt.map_or(0.0, |d| d.as_secs_f64()),
            },
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PathId;
    use crate::test_support::{ack, build_spec, close, loss, ms, t0};

    /// Three slow-start ACKs of 10 packets (samples 100, 100, `last` ms): 10000 → 40000.
    fn setup(last: u64) -> (Veno, Instant) {
        let t = t0();
        let mut c = Veno::new(VenoConfig::default(), 1000);
        ack(&mut c, t + ms(100), t, 10, 1000, ms(100));
        ack(&mut c, t + ms(110), t, 10, 1000, ms(100));
        ack(&mut c, t + ms(120), t, 10, 1000, ms(last));
        assert_eq!(c.window(), 40_000);
        (c, t)
    }

    #[test]
    fn random_loss_keeps_four_fifths() {
        let (mut c, t) = setup(100);
        assert_eq!(c.backlog(), 0.0); // RTT = BaseRTT
        c.on_congestion(&loss(t + ms(150), t + ms(100)));
        assert_eq!(c.window(), 32_000); // 40000·4/5
    }

    #[test]
    fn congestive_loss_halves() {
        let (mut c, t) = setup(150);
        // N = 30 segments (window before that ACK)·(150 − 100)/150 = 10 ≥ 3.
        assert!(close(c.backlog(), 10.0, 1e-9));
        c.on_congestion(&loss(t + ms(150), t + ms(100)));
        assert_eq!(c.window(), 20_000);
    }

    #[test]
    fn ecn_ce_always_halves() {
        let (mut c, t) = setup(100);
        c.on_congestion(&CongestionEvent {
            ecn: true,
            lost_bytes: 0,
            ..loss(t + ms(150), t + ms(100))
        });
        assert_eq!(c.window(), 20_000);
    }

    #[test]
    fn increase_is_halved_when_the_backlog_reaches_beta() {
        let (mut c, t) = setup(100);
        c.on_congestion(&loss(t + ms(150), t + ms(100)));
        let mut slow = c.clone();
        // RTT 100 = BaseRTT: N = 0 < 3 → Reno: + 1000·1000/32000 = 31.25.
        ack(&mut c, t + ms(300), t + ms(200), 1, 1000, ms(100));
        assert!(close(c.reno().cwnd(), 32_031.25, 1e-9));
        // RTT 125: N = 32·25/125 = 6.4 ≥ 3 → half of Reno: + 15.625.
        ack(&mut slow, t + ms(300), t + ms(200), 1, 1000, ms(125));
        assert!(close(slow.backlog(), 6.4, 1e-9));
        assert!(close(slow.reno().cwnd(), 32_015.625, 1e-9));
        // RTT 109: N = 32.03125·9/109 = 2.645 < 3 → Reno's increase.
        let mut edge = c.clone();
        ack(&mut edge, t + ms(310), t + ms(210), 1, 1000, ms(109));
        assert!(edge.backlog() < 3.0);
        assert!(close(
            edge.reno().cwnd() - c.reno().cwnd(),
            1e6 / c.reno().cwnd(),
            1e-9
        ));
    }

    #[test]
    fn from_params_accepts_known_and_rejects_bad_params() {
        let t = t0();
        let mut cc = build_spec(
            "veno:beta=5,random_loss_factor=0.9,max_window=100000",
            from_params,
            PARAMS,
        )
        .unwrap();
        cc.on_path_added(PathId(0), t, 1000);
        cc.on_congestion(&loss(t + ms(100), t));
        assert_eq!(cc.window(PathId(0)), 9000);
        assert!(matches!(
            build_spec("veno:random_loss_factor=0.2", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build_spec("veno:alpha=1", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::UnknownParameter { .. }))
        ));
    }
}
