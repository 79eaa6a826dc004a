//! BIC-TCP (Xu, Harfoush, Rhee, "Binary Increase Congestion Control for Fast, Long Distance Networks",
//! IEEE INFOCOM 2004; Linux `net/ipv4/tcp_bic.c`) as a single-path [`PathController`], run uncoupled per path.
//!
//! After a loss the window lies between `min = β·W_max` (where it restarts) and `W_max` (where it lost): BIC
//! binary-searches that interval, jumping each RTT to the midpoint, with jumps capped at `S_max` (additive
//! increase far from `W_max`) and at least `S_min`. Once past `W_max` it probes for a new maximum, slowly at
//! first and then faster ("max probing", the mirror image of the search).
//!
//! Formulas (per RTT, in segments; `w = cwnd/mss`, `W_max` in segments):
//! * `w ≤ low_window`: `inc = 1` (Reno; Linux `cnt = cwnd` when `cwnd ≤ low_window`).
//! * no `W_max` yet (no loss, or after persistent congestion): `inc = S_max` (Linux: `last_max_cwnd = 0`).
//! * binary search, `w < W_max`: `inc = clamp((W_max − w)/2, S_min, S_max)` — the jump to the midpoint
//!   `(W_max + w)/2` of the paper, since the current window is the search's lower end.
//! * max probing, `w ≥ W_max`: `inc = min(w − W_max + 1, S_max)`: 1, 2, 4, 8, … segments per RTT, each RTT
//!   doubling the distance to `W_max` as the paper's max probing does (`ss_cwnd` 1, 2, 4, …), then `S_max`.
//! * per acknowledged packet of `bytes`: `cwnd += inc·mss·bytes/cwnd` (so `inc` segments per window acked).
//! * on congestion (once per RFC 9002 recovery period): fast convergence `W_max = w·(1 + β)/2` if `w < W_max`,
//!   else `W_max = w`; then `ssthresh = cwnd·β` (`cwnd·0.5` if `w ≤ low_window`), `cwnd = max(ssthresh, 2·mss)`.
//!
//! Constants (defaults): `β = 0.8` (Linux `beta = 819/1024`; the paper's decrease fraction 0.125 corresponds
//! to β = 0.875), `low_window = 14` segments (Linux and the paper), `S_max = 16` segments (Linux
//! `max_increment`; the paper uses 32), `S_min = 0.01` segments (the paper), fast convergence on.
//!
//! Choices where the sources differ or are silent:
//! * The binary search jumps to the midpoint (divisor 2) as in the paper; Linux divides the distance by
//!   `BICTCP_B = 4` and replaces `S_min` by a 0.2-segment "smooth part" near `W_max`.
//! * Max probing is the stateless `w − W_max + 1` above, which reproduces the paper's 1, 2, 4, … sequence;
//!   Linux uses `(w − W_max)/(B − 1)` with 0.2 segments in the first `B` segments.
//! * Linux's delayed-ACK ratio correction and its "at least 5 % per RTT when `W_max = 0`" clamp are omitted.
//! * Persistent congestion forgets `W_max` (Linux resets on `TCP_CA_Loss`); slow start, recovery, the
//!   app-limited rule and pacing are RFC 9002's ([`RenoWindow`]).

use std::time::Instant;

use crate::params::Params;
use crate::window::DEFAULT_MAX_WINDOW;
use crate::{
    AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathController,
    PathControllerFactory, RenoWindow, SentEvent, Uncoupled,
};

/// Registry name.
pub const NAME: &str = "bic";

/// Linux `beta = 819/1024`.
pub const DEFAULT_BETA: f64 = 819.0 / 1024.0;

/// Below this window (segments) BIC behaves as Reno.
pub const DEFAULT_LOW_WINDOW: f64 = 14.0;

/// Largest increase per RTT, segments (Linux `max_increment`).
pub const DEFAULT_SMAX: f64 = 16.0;

/// Smallest increase per RTT during the binary search, segments (the paper).
pub const DEFAULT_SMIN: f64 = 0.01;

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &[
    "beta",
    "low_window",
    "smax",
    "smin",
    "fast_convergence",
    "max_window",
];

/// Builds the controller from registry parameters.
///
/// * `beta`: decrease factor in `[0.5, 0.95]` (default 819/1024 ≈ 0.8).
/// * `low_window`: Reno below this many segments, in `[0, 10^6]` (default 14).
/// * `smax`, `smin`: largest and smallest increase per RTT in segments (defaults 16 and 0.01; `smin ≤ smax`).
/// * `fast_convergence`: default on.
/// * `max_window`: largest window in bytes, in `[1, 2^32]`.
pub fn from_params(params: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
    Ok(Box::new(Uncoupled::new(BicConfig::from_params(params)?)))
}

/// BIC's configuration; also the [`PathControllerFactory`] of [`Bic`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BicConfig {
    /// Multiplicative decrease factor above `low_window`.
    pub beta: f64,
    /// Reno below this window, segments.
    pub low_window: f64,
    /// Largest increase per RTT, segments.
    pub smax: f64,
    /// Smallest increase per RTT in the binary search, segments.
    pub smin: f64,
    /// Lower `W_max` when a loss comes before the previous maximum was reached.
    pub fast_convergence: bool,
    /// Largest window in bytes.
    pub max_window: u64,
}

impl Default for BicConfig {
    fn default() -> Self {
        BicConfig {
            beta: DEFAULT_BETA,
            low_window: DEFAULT_LOW_WINDOW,
            smax: DEFAULT_SMAX,
            smin: DEFAULT_SMIN,
            fast_convergence: true,
            max_window: DEFAULT_MAX_WINDOW,
        }
    }
}

impl BicConfig {
    /// Reads the parameters listed in [`from_params`].
    pub fn from_params(params: &mut Params) -> Result<BicConfig, CcError> {
        let smax = params.f64("smax", DEFAULT_SMAX, 0.01, 1e6)?;
        let smin = params.f64("smin", DEFAULT_SMIN.min(smax), 0.0001, 1e6)?;
        if smin > smax {
            return Err(CcError::Spec(crate::SpecError::BadValue {
                name: NAME.to_string(),
                key: "smin".to_string(),
                value: smin.to_string(),
                expected: format!("a number not above smax ({smax})"),
            }));
        }
        Ok(BicConfig {
            beta: params.f64("beta", DEFAULT_BETA, 0.5, 0.95)?,
            low_window: params.f64("low_window", DEFAULT_LOW_WINDOW, 0.0, 1e6)?,
            smax,
            smin,
            fast_convergence: params.bool("fast_convergence", true)?,
            max_window: params.u64("max_window", DEFAULT_MAX_WINDOW, 1, DEFAULT_MAX_WINDOW)?,
        })
    }

    /// BIC's increase per RTT in segments for a window of `w` segments and a maximum `w_max` (segments; `None`
    /// when unknown). See the module doc.
    pub fn increase_per_rtt(&self, w: f64, w_max: Option<f64>) -> f64 {
        if w <= self.low_window {
            return 1.0;
        }
        match w_max {
            None => self.smax,
            Some(w_max) if w < w_max => ((w_max - w) / 2.0).clamp(self.smin, self.smax),
            Some(w_max) => (w - w_max + 1.0).min(self.smax),
        }
    }
}

impl PathControllerFactory for BicConfig {
    type Controller = Bic;

    fn name(&self) -> &'static str {
        NAME
    }

    fn build(&self, _now: Instant, max_datagram_size: u16) -> Bic {
        Bic::new(*self, max_datagram_size)
    }
}

/// One path's BIC controller.
#[derive(Clone, Debug)]
pub struct Bic {
    config: BicConfig,
    window: RenoWindow,
    /// `W_max` in bytes, `None` until the first reduction and after persistent congestion.
    w_max: Option<f64>,
}

impl Bic {
    /// A controller at the start of slow start.
    pub fn new(config: BicConfig, max_datagram_size: u16) -> Self {
        Bic {
            config,
            window: RenoWindow::with_max_window(max_datagram_size, config.max_window),
            w_max: None,
        }
    }

    /// The underlying RFC 9002 window.
    pub fn reno(&self) -> &RenoWindow {
        &self.window
    }

    /// `W_max` in bytes.
    pub fn w_max(&self) -> Option<f64> {
        self.w_max
    }
}

impl PathController for Bic {
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.window.on_packet_sent(ev);
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        let (config, w_max) = (&self.config, self.w_max);
        self.window.on_ack(ev, |w, p| {
            let mss = w.max_datagram_size() as f64;
            let inc = config.increase_per_rtt(w.cwnd() / mss, w_max.map(|m| m / mss));
            inc * mss * p.bytes as f64 / w.cwnd()
        });
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        let mss = self.window.max_datagram_size() as f64;
        let cwnd = self.window.cwnd();
        let mut beta = self.config.beta;
        if self.window.will_reduce(ev) {
            self.w_max = Some(match self.w_max {
                Some(w_max) if self.config.fast_convergence && cwnd < w_max => {
                    cwnd * (1.0 + self.config.beta) / 2.0
                }
                _ => cwnd,
            });
            if cwnd / mss <= self.config.low_window {
                beta = 0.5;
            }
        }
        self.window.on_congestion(ev, beta);
        if ev.persistent_congestion {
            self.w_max = None;
        }
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
            name: "w_max",
            value: self.w_max.unwrap_or(0.0),
        }])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PathId;
    use crate::test_support::{ack, build_spec, close, loss, ms, persistent_loss, t0};

    #[test]
    fn increase_per_rtt_follows_binary_search_and_max_probing() {
        let c = BicConfig::default();
        // Binary search: half the distance to W_max, capped at S_max = 16, at least S_min = 0.01.
        assert_eq!(c.increase_per_rtt(80.0, Some(100.0)), 10.0);
        assert_eq!(c.increase_per_rtt(160.0, Some(200.0)), 16.0);
        assert_eq!(c.increase_per_rtt(99.99, Some(100.0)), 0.01);
        // Max probing: 1, 2, 4, 8 segments per RTT at distances 0, 1, 3, 7; then S_max.
        assert_eq!(c.increase_per_rtt(100.0, Some(100.0)), 1.0);
        assert_eq!(c.increase_per_rtt(101.0, Some(100.0)), 2.0);
        assert_eq!(c.increase_per_rtt(103.0, Some(100.0)), 4.0);
        assert_eq!(c.increase_per_rtt(107.0, Some(100.0)), 8.0);
        assert_eq!(c.increase_per_rtt(130.0, Some(100.0)), 16.0);
        // Reno at or below low_window = 14; S_max while W_max is unknown.
        assert_eq!(c.increase_per_rtt(14.0, Some(100.0)), 1.0);
        assert_eq!(c.increase_per_rtt(50.0, None), 16.0);
    }

    #[test]
    fn loss_then_jump_towards_the_midpoint() {
        let t = t0();
        let mut c = Bic::new(BicConfig::default(), 1000);
        // Slow start 10000 + 90·1000 = 100000 (100 segments); loss: W_max = 100000, cwnd = 100000·819/1024.
        ack(&mut c, t + ms(100), t, 90, 1000, ms(100));
        c.on_congestion(&loss(t + ms(150), t + ms(100)));
        let cwnd = 100_000.0 * 819.0 / 1024.0; // 79980.46875
        assert!(close(c.reno().cwnd(), cwnd, 1e-9));
        assert_eq!(c.w_max(), Some(100_000.0));
        // Midpoint (100 + 79.98046875)/2 = 89.990234375 → inc = 10.009765625 segments per RTT;
        // one 1000-byte packet adds 10.009765625·1000·1000/79980.46875 = 125.152625.
        ack(&mut c, t + ms(300), t + ms(200), 1, 1000, ms(100));
        assert!(
            close(c.reno().cwnd(), cwnd + 125.152_625, 1e-5),
            "{}",
            c.reno().cwnd()
        );
    }

    #[test]
    fn fast_convergence_and_smax() {
        let t = t0();
        let config = BicConfig {
            beta: 0.8,
            ..BicConfig::default()
        };
        let mut c = Bic::new(config, 1000);
        // 200 segments, loss → 160 segments, W_max 200: inc = min(20, 16) = 16 → 16·10^6/160000 = 100 bytes.
        ack(&mut c, t + ms(100), t, 190, 1000, ms(100));
        c.on_congestion(&loss(t + ms(150), t + ms(100)));
        assert_eq!(c.window(), 160_000);
        ack(&mut c, t + ms(300), t + ms(200), 1, 1000, ms(100));
        assert!(close(c.reno().cwnd(), 160_100.0, 1e-9));
        // Loss below W_max: fast convergence W_max = 160100·1.8/2 = 144090, cwnd = 160100·0.8 = 128080.
        c.on_congestion(&loss(t + ms(400), t + ms(250)));
        assert!(close(c.w_max().unwrap(), 144_090.0, 1e-9));
        assert!(close(c.reno().cwnd(), 128_080.0, 1e-9));
        // inc = (144.09 − 128.08)/2 = 8.005 segments → 8.005·10^6/128080 = 62.5 bytes per packet.
        ack(&mut c, t + ms(600), t + ms(500), 1, 1000, ms(100));
        assert!(close(c.reno().cwnd(), 128_142.5, 1e-9));
    }

    #[test]
    fn small_windows_halve_and_persistent_congestion_forgets_w_max() {
        let t = t0();
        let mut c = Bic::new(BicConfig::default(), 1200);
        c.on_congestion(&loss(t + ms(100), t));
        // 10 segments ≤ low_window 14: Reno's halving, 12000 → 6000.
        assert_eq!(c.window(), 6000);
        c.on_congestion(&persistent_loss(t + ms(2000), t + ms(1000)));
        assert_eq!(c.window(), 2400);
        assert_eq!(c.w_max(), None);
    }

    #[test]
    fn from_params_accepts_known_and_rejects_bad_params() {
        let t = t0();
        let mut cc = build_spec("bic:beta=0.5,low_window=0,smax=32,smin=0.1", from_params, PARAMS).unwrap();
        cc.on_path_added(PathId(0), t, 1200);
        cc.on_congestion(&loss(t + ms(100), t));
        assert_eq!(cc.window(PathId(0)), 6000);
        assert!(build_spec("bic:fast_convergence=off,max_window=50000", from_params, PARAMS).is_ok());
        assert!(matches!(
            build_spec("bic:smin=20", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build_spec("bic:beta=0.2", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build_spec("bic:b=4", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::UnknownParameter { .. }))
        ));
    }
}
