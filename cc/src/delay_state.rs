//! The delay-state machinery shared by D-LIA and D-OLIA (Lubna, Mahmud, Kim, Cho, "D-OLIA", Sensors 21:5764,
//! 2021): the delay-state estimator (the paper's Algorithm 1) and the dynamic decrease
//! (Algorithm 2), wrapped around a coupled loss-based controller ([`Lia`] or [`Olia`]) whose increase is kept
//! unchanged.
//!
//! **Estimator** ([`DelayEstimator`], per path, on every ACK with the ACK's latest RTT sample): track
//! `RTT_min`, `RTT_max` and `num_ack`; when `num_ack > 2` and `now > next_update`, set
//! `RTT_mid = (RTT_min + RTT_max)/2`, restart `RTT_min = RTT_max = RTT_curr`, `num_ack = 1`,
//! `next_update = now + probe period` (0.5 s). The paper's prose says "more than three ACKs"; its pseudocode,
//! followed here, says `> 2`.
//!
//! **Decrease** (on a congestion signal that starts a new RFC 9002 recovery period, i.e. when
//! [`RenoWindow::will_reduce`]): the path is *congested* iff `RTT_curr > RTT_mid` and
//! `RTT_curr > RTT_prev` (the RTT at the previous decrease); a congested path halves. Otherwise the dynamic
//! factor of [`dynamic_beta`]: `γ = min(cwnd_prev/cwnd, 1)`, `β = factor·γ + (1−factor)·β_prev` clamped to
//! `[β_min, β_max]` (paper: factor 0.25, `[0.5, 0.9]`), `cwnd = β·cwnd` (via ssthresh, RFC 9002 style, floored
//! at the minimum window). Afterwards `cwnd_prev = ` the window after the decrease, `β_prev = β`,
//! `RTT_prev = RTT_curr`.
//!
//! Choices where the paper is silent (Lubna et al., Sensors 2021), each a [`DelayConfig`] field and registry parameter:
//! * `halving_updates_state` (default true): the halving branch also sets `β_prev = 0.5` and
//!   `cwnd_prev = ` the halved window (the state always describes the latest decrease). With `false` only
//!   `RTT_prev` is updated there (the paper only says RTT_prev is updated after every decrease).
//! * Units of the initial values: `cwnd_prev = 1` is read as one packet (`cwnd_prev_init` packets × MSS,
//!   default 1); `RTT_prev = 1` as 1 µs (the kernel's `rtt_us` unit), i.e. below any real RTT;
//!   `RTT_min = 9999` as "+∞" (no sample yet).
//! * `halve_before_mid` (default true): before the first `RTT_mid` exists (fewer than three ACKs on the
//!   path) a loss counts as congested and halves, like the base algorithm; a zero-initialised kernel
//!   `RTT_mid` would behave the same way. With `false` such a loss takes the dynamic branch.
//! * `RTT_curr` is the latest RTT sample (`latest_rtt`) of the ACK or congestion event.
//! * The window used in `γ` and decreased is the current `cwnd` (QUIC does not inflate it in recovery).
//! * After a persistent-congestion collapse `cwnd_prev` is the collapsed (minimum) window.
//! * ECN-CE signals are treated like losses.
//! * `always_dynamic` (D-LIA's `decrease=dynamic`; default off): every decrease takes the dynamic branch and
//!   the path is never judged congested. The estimator still runs (its `RTT_mid` is reported) but does not
//!   decide anything.
//!
//! Increase, slow start, recovery and persistent congestion are the base controller's (so RFC 9002's). With
//! one path D-LIA and D-OLIA therefore grow exactly like NewReno but do not decrease like it (unless
//! `β_min = β_max = 0.5`, which makes every decrease a halving).

use std::time::{Duration, Instant};

use crate::lia::Lia;
use crate::olia::Olia;
use crate::window::LOSS_REDUCTION_FACTOR;
use crate::{
    AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathId, PathMap, RenoWindow,
    SentEvent,
};

/// Parameter keys of [`DelayConfig::from_params`].
pub const DELAY_PARAMS: &[&str] = &[
    "probe_period",
    "beta_init",
    "beta_min",
    "beta_max",
    "factor",
    "cwnd_prev_init",
    "halving_updates_state",
    "halve_before_mid",
];

/// Configuration of the delay-state estimator and of the dynamic decrease.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DelayConfig {
    /// RTT-probe period between `RTT_mid` updates (paper: 0.5 s). Parameter `probe_period`, milliseconds.
    pub probe_period: Duration,
    /// Initial `β_prev` (paper: 0.5). Parameter `beta_init`.
    pub beta_init: f64,
    /// Lower clamp of the dynamic β (paper: 0.5). Parameter `beta_min`.
    pub beta_min: f64,
    /// Upper clamp of the dynamic β (paper: 0.9). Parameter `beta_max`.
    pub beta_max: f64,
    /// Weight of `γ` in the dynamic β (paper: 0.25; `β_prev` gets `1 − factor`). Parameter `factor`.
    pub factor: f64,
    /// Initial `cwnd_prev` in packets of the path's MSS (paper: 1). Parameter `cwnd_prev_init`.
    pub cwnd_prev_init: f64,
    /// Whether the halving branch also updates `β_prev` (to 0.5) and `cwnd_prev`. Parameter
    /// `halving_updates_state`.
    pub halving_updates_state: bool,
    /// Whether a loss before the first `RTT_mid` counts as congested (halve). Parameter `halve_before_mid`.
    pub halve_before_mid: bool,
    /// Whether every decrease uses the dynamic β, never the congested-state halving (D-LIA as the D-OLIA
    /// paper describes it). Default false: the congested/less-congested switch of D-OLIA. D-LIA's parameter
    /// `decrease=dynamic` sets it; D-OLIA does not offer it.
    pub always_dynamic: bool,
}

impl Default for DelayConfig {
    fn default() -> Self {
        DelayConfig {
            probe_period: Duration::from_millis(500),
            beta_init: 0.5,
            beta_min: 0.5,
            beta_max: 0.9,
            factor: 0.25,
            cwnd_prev_init: 1.0,
            halving_updates_state: true,
            halve_before_mid: true,
            always_dynamic: false,
        }
    }
}

impl DelayConfig {
    /// Reads the keys of [`DELAY_PARAMS`] for `algorithm` (missing keys keep the paper's defaults).
    pub fn from_params(algorithm: &str, params: &mut crate::params::Params) -> Result<DelayConfig, CcError> {
        let d = DelayConfig::default();
        let config = DelayConfig {
            probe_period: params.millis(
                "probe_period",
                d.probe_period,
                Duration::from_millis(1),
                Duration::from_secs(60),
            )?,
            beta_init: params.f64("beta_init", d.beta_init, 0.0, 1.0)?,
            beta_min: params.f64("beta_min", d.beta_min, 0.01, 1.0)?,
            beta_max: params.f64("beta_max", d.beta_max, 0.01, 1.0)?,
            factor: params.f64("factor", d.factor, 0.0, 1.0)?,
            cwnd_prev_init: params.f64("cwnd_prev_init", d.cwnd_prev_init, 0.0, 1e9)?,
            halving_updates_state: params.bool("halving_updates_state", d.halving_updates_state)?,
            halve_before_mid: params.bool("halve_before_mid", d.halve_before_mid)?,
            always_dynamic: d.always_dynamic,
        };
        if config.beta_min > config.beta_max {
            return Err(CcError::Spec(crate::SpecError::BadValue {
                name: algorithm.to_string(),
                key: "beta_min".to_string(),
                value: config.beta_min.to_string(),
                expected: format!("a number not above beta_max ({})", config.beta_max),
            }));
        }
        Ok(config)
    }
}

/// D-OLIA Algorithm 2: `γ = min(cwnd_prev/cwnd, 1)`, `β = factor·γ + (1−factor)·β_prev`, clamped to
/// `[beta_min, beta_max]`. Degenerate inputs (non-positive or non-finite windows) give `γ = 1`.
pub fn dynamic_beta(cwnd_prev: f64, cwnd: f64, beta_prev: f64, config: &DelayConfig) -> f64 {
    let ratio = cwnd_prev / cwnd;
    let gamma = if ratio.is_finite() && ratio >= 0.0 {
        ratio.min(1.0)
    } else {
        1.0
    };
    let beta = config.factor * gamma + (1.0 - config.factor) * beta_prev;
    if beta.is_finite() {
        beta.clamp(config.beta_min, config.beta_max)
    } else {
        config.beta_min
    }
}

/// D-OLIA's state test: congested iff `rtt_curr > rtt_mid` and `rtt_curr > rtt_prev`; without an
/// `rtt_mid` yet, `halve_before_mid` decides.
pub fn is_congested(
    rtt_curr: Duration,
    rtt_mid: Option<Duration>,
    rtt_prev: Duration,
    halve_before_mid: bool,
) -> bool {
    match rtt_mid {
        None => halve_before_mid,
        Some(mid) => rtt_curr > mid && rtt_curr > rtt_prev,
    }
}

/// D-OLIA Algorithm 1: the per-path delay-state estimator (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelayEstimator {
    probe_period: Duration,
    /// `None` is the paper's initial 9999: larger than any sample.
    rtt_min: Option<Duration>,
    rtt_max: Duration,
    num_ack: u64,
    /// `None` is the paper's initial 0: earlier than any `now`.
    next_update: Option<Instant>,
    rtt_mid: Option<Duration>,
}

impl DelayEstimator {
    /// A fresh estimator with the given probe period.
    pub fn new(probe_period: Duration) -> Self {
        DelayEstimator {
            probe_period,
            rtt_min: None,
            rtt_max: Duration::ZERO,
            num_ack: 0,
            next_update: None,
            rtt_mid: None,
        }
    }

    /// Feeds one ACK's RTT sample at `now`; returns whether `RTT_mid` was recomputed.
    pub fn on_ack(&mut self, now: Instant, rtt: Duration) -> bool {
        self.rtt_min = Some(self.rtt_min.map_or(rtt, |m| m.min(rtt)));
        self.rtt_max = self.rtt_max.max(rtt);
        self.num_ack = self.num_ack.saturating_add(1);
        let due = self.next_update.is_none_or(|t| now > t);
        if self.num_ack > 2 && due {
            let min = self.rtt_min.unwrap_or(rtt);
            // (min + max)/2 without overflow: min ≤ max.
            self.rtt_mid = Some(min + (self.rtt_max - min) / 2);
            self.rtt_min = Some(rtt);
            self.rtt_max = rtt;
            self.num_ack = 1;
            self.next_update = Some(now.checked_add(self.probe_period).unwrap_or(now));
            true
        } else {
            false
        }
    }

    /// `RTT_mid`, once computed.
    pub fn rtt_mid(&self) -> Option<Duration> {
        self.rtt_mid
    }

    /// `RTT_min` of the current probe period (`None` before any sample).
    pub fn rtt_min(&self) -> Option<Duration> {
        self.rtt_min
    }

    /// `RTT_max` of the current probe period.
    pub fn rtt_max(&self) -> Duration {
        self.rtt_max
    }

    /// ACKs counted in the current probe period.
    pub fn num_ack(&self) -> u64 {
        self.num_ack
    }
}

/// A coupled controller built on [`RenoWindow`]s whose decrease factor can be chosen per congestion event:
/// the base of [`DelayCoupled`].
pub trait RenoCoupled: CongestionController {
    /// The window state of `path`.
    fn reno_window(&self, path: PathId) -> Option<&RenoWindow>;
    /// The base algorithm's congestion response with decrease factor `beta`; returns whether a new recovery
    /// period started.
    fn on_congestion_with_beta(&mut self, ev: &CongestionEvent, beta: f64) -> bool;
}

impl RenoCoupled for Lia {
    fn reno_window(&self, path: PathId) -> Option<&RenoWindow> {
        Lia::reno_window(self, path)
    }
    fn on_congestion_with_beta(&mut self, ev: &CongestionEvent, beta: f64) -> bool {
        Lia::on_congestion_with_beta(self, ev, beta)
    }
}

impl RenoCoupled for Olia {
    fn reno_window(&self, path: PathId) -> Option<&RenoWindow> {
        Olia::reno_window(self, path)
    }
    fn on_congestion_with_beta(&mut self, ev: &CongestionEvent, beta: f64) -> bool {
        Olia::on_congestion_with_beta(self, ev, beta)
    }
}

/// Per-path state of the dynamic decrease.
#[derive(Clone, Copy, Debug)]
struct DelayPath {
    estimator: DelayEstimator,
    beta_prev: f64,
    cwnd_prev: f64,
    rtt_prev: Duration,
    /// Factor of the latest decrease (initially `beta_init`), for metrics.
    last_beta: f64,
    last_congested: bool,
}

/// A base controller's increase with D-OLIA's delay-state estimator and dynamic decrease: D-LIA over
/// [`Lia`], D-OLIA over [`Olia`]. See the module documentation.
#[derive(Clone, Debug)]
pub struct DelayCoupled<B> {
    name: &'static str,
    base: B,
    config: DelayConfig,
    paths: PathMap<DelayPath>,
}

impl<B: RenoCoupled> DelayCoupled<B> {
    /// Wraps `base`, reporting `name` as the registry name.
    pub fn new(name: &'static str, base: B, config: DelayConfig) -> Self {
        DelayCoupled {
            name,
            base,
            config,
            paths: PathMap::new(),
        }
    }

    /// The base controller.
    pub fn base(&self) -> &B {
        &self.base
    }

    /// The window state of `path`.
    pub fn reno_window(&self, path: PathId) -> Option<&RenoWindow> {
        self.base.reno_window(path)
    }

    /// The delay-state estimator of `path`.
    pub fn estimator(&self, path: PathId) -> Option<&DelayEstimator> {
        self.paths.get(path).map(|p| &p.estimator)
    }

    /// `β_prev` of `path`.
    pub fn beta_prev(&self, path: PathId) -> Option<f64> {
        self.paths.get(path).map(|p| p.beta_prev)
    }

    /// `cwnd_prev` of `path`, in bytes.
    pub fn cwnd_prev(&self, path: PathId) -> Option<f64> {
        self.paths.get(path).map(|p| p.cwnd_prev)
    }
}

impl<B: RenoCoupled> CongestionController for DelayCoupled<B> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn on_path_added(&mut self, path: PathId, now: Instant, max_datagram_size: u16) {
        self.base.on_path_added(path, now, max_datagram_size);
        let mss = f64::from(max_datagram_size.max(1));
        self.paths.insert(
            path,
            DelayPath {
                estimator: DelayEstimator::new(self.config.probe_period),
                beta_prev: self.config.beta_init,
                cwnd_prev: self.config.cwnd_prev_init * mss,
                rtt_prev: Duration::from_micros(1),
                last_beta: self.config.beta_init,
                last_congested: false,
            },
        );
    }

    fn on_path_removed(&mut self, path: PathId) {
        self.base.on_path_removed(path);
        self.paths.remove(path);
    }

    fn on_max_datagram_size(&mut self, path: PathId, max_datagram_size: u16) {
        self.base.on_max_datagram_size(path, max_datagram_size);
    }

    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.base.on_packet_sent(ev);
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        self.base.on_ack(ev);
        if let Some(p) = self.paths.get_mut(ev.path) {
            p.estimator.on_ack(ev.now, ev.rtt.latest);
        }
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        let Some(window) = self.base.reno_window(ev.path) else {
            return;
        };
        let (reduce, cwnd) = (window.will_reduce(ev), window.cwnd());
        let Some(p) = self.paths.get_mut(ev.path) else {
            return;
        };
        if !reduce {
            // Same recovery period: no decrease (persistent congestion is still handled by the base).
            self.base.on_congestion_with_beta(ev, LOSS_REDUCTION_FACTOR);
            return;
        }
        let rtt_curr = ev.rtt.latest;
        let congested = !self.config.always_dynamic
            && is_congested(
                rtt_curr,
                p.estimator.rtt_mid(),
                p.rtt_prev,
                self.config.halve_before_mid,
            );
        let beta = if congested {
            LOSS_REDUCTION_FACTOR
        } else {
            dynamic_beta(p.cwnd_prev, cwnd, p.beta_prev, &self.config)
        };
        self.base.on_congestion_with_beta(ev, beta);
        let after = self.base.reno_window(ev.path).map_or(cwnd, |w| w.cwnd());
        if !congested || self.config.halving_updates_state {
            p.cwnd_prev = after;
            p.beta_prev = beta;
        }
        p.rtt_prev = rtt_curr;
        p.last_beta = beta;
        p.last_congested = congested;
    }

    fn window(&self, path: PathId) -> u64 {
        self.base.window(path)
    }

    fn pacing_rate(&self, path: PathId) -> Option<u64> {
        self.base.pacing_rate(path)
    }

    /// The base's state, without building the metrics (they allocate their extras): read after every
    /// acknowledgement.
    fn state(&self, path: PathId) -> Option<&'static str> {
        self.paths.get(path)?;
        self.base.state(path)
    }

    fn metrics(&self, path: PathId) -> Option<CcMetrics> {
        let mut m = self.base.metrics(path)?;
        let p = self.paths.get(path)?;
        m.extras.extend([
            Metric {
                name: "rtt_mid",
                value: p.estimator.rtt_mid().map_or(0.0, |d| d.as_secs_f64()),
            },
            Metric {
                name: "beta",
                value: p.last_beta,
            },
            Metric {
                name: "congested",
                value: f64::from(u8::from(p.last_congested)),
            },
        ]);
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dlia::{self, DLiaConfig};
    use crate::dolia::{self, DOliaConfig};
    use crate::lia::test_support::*;
    use crate::params::{Params, Spec};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn estimator_updates_rtt_mid_after_three_acks_and_each_probe_period() {
        let t0 = t0();
        let mut e = DelayEstimator::new(ms(500));
        assert!(!e.on_ack(t0, ms(100)));
        assert!(!e.on_ack(t0 + ms(10), ms(120)));
        assert_eq!(e.rtt_mid(), None);
        // Third ACK: num_ack = 3 > 2 and next_update = 0: RTT_mid = (80 + 120)/2 = 100 ms; restart at 80 ms.
        assert!(e.on_ack(t0 + ms(20), ms(80)));
        assert_eq!(e.rtt_mid(), Some(ms(100)));
        assert_eq!((e.rtt_min(), e.rtt_max(), e.num_ack()), (Some(ms(80)), ms(80), 1));
        // next_update = t0 + 520 ms: no update before (nor at) it, however many ACKs.
        assert!(!e.on_ack(t0 + ms(100), ms(200)));
        assert!(!e.on_ack(t0 + ms(200), ms(60)));
        assert!(!e.on_ack(t0 + ms(300), ms(90)));
        assert!(!e.on_ack(t0 + ms(520), ms(100)));
        assert_eq!(e.rtt_mid(), Some(ms(100)));
        // After it: min 60, max 200 over the period → RTT_mid = 130 ms; next_update = t0 + 1021 ms.
        assert!(e.on_ack(t0 + ms(521), ms(70)));
        assert_eq!(e.rtt_mid(), Some(ms(130)));
        // Long after the period, the count still needs to exceed 2: ACK 2 of the new period does not update,
        // ACK 3 does: (min(70, 50, 90) + max(70, 50, 90))/2 = (50 + 90)/2 = 70 ms.
        assert!(!e.on_ack(t0 + ms(2000), ms(50)));
        assert!(e.on_ack(t0 + ms(2001), ms(90)));
        assert_eq!(e.rtt_mid(), Some(ms(70)));
    }

    #[test]
    fn dynamic_beta_sequence_in_the_less_congested_state() {
        let c = DelayConfig::default();
        // β = 0.25·min(cwnd_prev/cwnd, 1) + 0.75·β_prev, clamped to [0.5, 0.9].
        // 1: cwnd_prev 1200 (1 packet), cwnd 24 000: γ = 0.05, 0.0125 + 0.375 = 0.3875 → 0.5.
        assert_eq!(dynamic_beta(1200.0, 24_000.0, 0.5, &c), 0.5);
        // 2: γ = 1: 0.25 + 0.75·0.5 = 0.625.
        assert_eq!(dynamic_beta(12_000.0, 12_000.0, 0.5, &c), 0.625);
        // 3: γ = 1: 0.25 + 0.75·0.625 = 0.71875.   4: 0.25 + 0.75·0.71875 = 0.7890625.
        // 5: 0.25 + 0.75·0.7890625 = 0.841796875. 6: 0.25 + 0.75·0.841796875 = 0.88134765625.
        // 7: 0.25 + 0.75·0.88134765625 = 0.9110107421875 → 0.9.
        let mut beta = 0.625;
        for expected in [0.71875, 0.7890625, 0.841796875, 0.88134765625, 0.9, 0.9] {
            beta = dynamic_beta(5000.0, 5000.0, beta, &c);
            assert!(close(beta, expected), "{beta} != {expected}");
        }
        // The window grew since the last decrease: cwnd_prev 12 000, cwnd 16 000, β_prev 0.625:
        // γ = 0.75, β = 0.1875 + 0.46875 = 0.65625.
        assert_eq!(dynamic_beta(12_000.0, 16_000.0, 0.625, &c), 0.65625);
        // Degenerate window: γ = 1.
        assert_eq!(dynamic_beta(1.0, 0.0, 0.5, &c), 0.625);
    }

    #[test]
    fn congestion_test() {
        let mid = Some(ms(100));
        assert!(is_congested(ms(150), mid, ms(120), true));
        assert!(!is_congested(ms(150), mid, ms(150), true)); // not above the RTT of the last decrease
        assert!(!is_congested(ms(90), mid, ms(10), true)); // below RTT_mid
        assert!(!is_congested(ms(100), mid, ms(10), true)); // equal is not above
        assert!(is_congested(ms(90), None, ms(10), true));
        assert!(!is_congested(ms(90), None, ms(10), false));
    }

    /// One path (MSS 1200) at 24 000 bytes with RTT_mid = 100 ms: an ACK of 8 packets then two of one
    /// (slow start 12 000 → 21 600 → 22 800 → 24 000), all with RTT 100 ms.
    fn one_path(mut cc: Box<dyn CongestionController>, t0: Instant) -> Box<dyn CongestionController> {
        cc.on_path_added(PathId(0), t0, 1200);
        ack(&mut *cc, 0, t0 + ms(100), t0, 8, ms(100));
        ack(&mut *cc, 0, t0 + ms(101), t0, 1, ms(100));
        ack(&mut *cc, 0, t0 + ms(102), t0, 1, ms(100));
        assert_eq!(cc.window(PathId(0)), 24_000);
        assert_eq!(cc.metrics(PathId(0)).unwrap().extra("rtt_mid"), Some(0.1));
        cc
    }

    fn dolia_with(spec: &str) -> Box<dyn CongestionController> {
        let s = Spec::parse(spec, "algorithm").unwrap();
        let mut p = Params::new(&s.name, s.params);
        let cc = dolia::from_params(&mut p).unwrap();
        p.finish(dolia::PARAMS).unwrap();
        cc
    }

    /// Loss number `i` (each starts a new recovery period) with latest RTT `rtt`.
    fn nth_loss(cc: &mut dyn CongestionController, t0: Instant, i: u64, rtt: Duration) {
        loss(cc, 0, t0 + ms(1000 * i), t0 + ms(1000 * i - 1), rtt);
    }

    fn cwnd_f(cc: &DelayCoupled<Olia>) -> f64 {
        cc.reno_window(PathId(0)).unwrap().cwnd()
    }

    #[test]
    fn less_congested_losses_follow_the_beta_sequence() {
        let t0 = t0();
        let mut cc = dolia::new(DOliaConfig::default());
        cc.on_path_added(PathId(0), t0, 1200);
        ack(&mut cc, 0, t0 + ms(100), t0, 8, ms(100));
        ack(&mut cc, 0, t0 + ms(101), t0, 1, ms(100));
        ack(&mut cc, 0, t0 + ms(102), t0, 1, ms(100));
        assert_eq!(cc.estimator(PathId(0)).unwrap().rtt_mid(), Some(ms(100)));
        assert_eq!(cc.cwnd_prev(PathId(0)), Some(1200.0));
        // RTT 80 ms < RTT_mid: less congested each time; no ACK between losses, so cwnd = cwnd_prev after
        // the first one.
        // 1: γ = 1200/24 000 = 0.05 → β = 0.3875 → 0.5: 24 000 → 12 000.
        nth_loss(&mut cc, t0, 1, ms(80));
        assert_eq!(cwnd_f(&cc), 12_000.0);
        assert_eq!(
            (cc.beta_prev(PathId(0)), cc.cwnd_prev(PathId(0))),
            (Some(0.5), Some(12_000.0))
        );
        // 2: γ = 1, β = 0.625: 12 000 → 7500.
        nth_loss(&mut cc, t0, 2, ms(80));
        assert_eq!(cwnd_f(&cc), 7500.0);
        assert_eq!(cc.beta_prev(PathId(0)), Some(0.625));
        // 3: β = 0.71875: 7500 → 5390.625.
        nth_loss(&mut cc, t0, 3, ms(80));
        assert_eq!(cwnd_f(&cc), 5390.625);
        // 4: β = 0.7890625: 5390.625 → 4253.5858154296875.
        nth_loss(&mut cc, t0, 4, ms(80));
        assert!(close(cwnd_f(&cc), 5390.625 * 0.7890625));
        let m = cc.metrics(PathId(0)).unwrap();
        assert_eq!(
            (m.extra("beta"), m.extra("congested")),
            (Some(0.7890625), Some(0.0))
        );
        assert_eq!(m.extra("epsilon"), Some(0.0)); // the base algorithm's extras are kept
        assert_eq!(cc.name(), "dolia");
    }

    #[test]
    fn congested_loss_halves_and_sets_rtt_prev() {
        let t0 = t0();
        let mut cc = one_path(dolia_with("dolia"), t0);
        // RTT 150 ms > RTT_mid 100 ms and > RTT_prev (1 µs): congested, halve 24 000 → 12 000.
        nth_loss(&mut *cc, t0, 1, ms(150));
        assert_eq!(cc.window(PathId(0)), 12_000);
        let m = cc.metrics(PathId(0)).unwrap();
        assert_eq!((m.extra("beta"), m.extra("congested")), (Some(0.5), Some(1.0)));
        // Again 150 ms: not above RTT_prev = 150 ms, so less congested. The halving updated the state
        // (cwnd_prev 12 000, β_prev 0.5): γ = 1, β = 0.625: 12 000 → 7500.
        nth_loss(&mut *cc, t0, 2, ms(150));
        assert_eq!(cc.window(PathId(0)), 7500);
        assert_eq!(cc.metrics(PathId(0)).unwrap().extra("congested"), Some(0.0));
    }

    #[test]
    fn halving_may_leave_beta_state_alone() {
        let t0 = t0();
        let mut cc = one_path(dolia_with("dolia:halving_updates_state=false"), t0);
        nth_loss(&mut *cc, t0, 1, ms(150)); // congested: 24 000 → 12 000, cwnd_prev stays 1200, β_prev 0.5
        assert_eq!(cc.window(PathId(0)), 12_000);
        // Less congested: γ = 1200/12 000 = 0.1, β = 0.025 + 0.375 = 0.4 → 0.5: 12 000 → 6000.
        nth_loss(&mut *cc, t0, 2, ms(150));
        assert_eq!(cc.window(PathId(0)), 6000);
    }

    #[test]
    fn losses_before_rtt_mid() {
        let t0 = t0();
        let spec_halve = "dolia:beta_init=0.9";
        let spec_dynamic = "dolia:beta_init=0.9,halve_before_mid=false";
        for (spec, expected) in [(spec_halve, 6000), (spec_dynamic, 8400)] {
            let mut cc = dolia_with(spec);
            cc.on_path_added(PathId(0), t0, 1200);
            // No ACK yet, no RTT_mid. Halve: 12 000 → 6000. Dynamic: γ = 1200/12 000 = 0.1,
            // β = 0.025 + 0.75·0.9 = 0.7: 12 000 → 8400.
            nth_loss(&mut *cc, t0, 1, ms(100));
            assert_eq!(cc.window(PathId(0)), expected, "{spec}");
        }
    }

    #[test]
    fn no_decrease_within_a_recovery_period() {
        let t0 = t0();
        let mut cc = one_path(dolia_with("dolia"), t0);
        nth_loss(&mut *cc, t0, 1, ms(80));
        let beta = cc.metrics(PathId(0)).unwrap().extra("beta");
        // A packet sent before the period began: no decrease and no change of the β state.
        loss(&mut *cc, 0, t0 + ms(1500), t0 + ms(999), ms(300));
        assert_eq!(cc.window(PathId(0)), 12_000);
        let m = cc.metrics(PathId(0)).unwrap();
        assert_eq!((m.extra("beta"), m.extra("congested")), (beta, Some(0.0)));
    }

    #[test]
    fn dlia_uses_the_same_decrease_over_lia() {
        let t0 = t0();
        let mut cc = dlia::new(DLiaConfig::default());
        cc.on_path_added(PathId(0), t0, 1200);
        ack(&mut cc, 0, t0 + ms(100), t0, 8, ms(100));
        ack(&mut cc, 0, t0 + ms(101), t0, 1, ms(100));
        ack(&mut cc, 0, t0 + ms(102), t0, 1, ms(100));
        nth_loss(&mut cc, t0, 1, ms(80));
        nth_loss(&mut cc, t0, 2, ms(80));
        assert_eq!(cc.window(PathId(0)), 7500); // 24 000 ·0.5 ·0.625, as for D-OLIA
        assert_eq!(cc.name(), "dlia");
        let m = cc.metrics(PathId(0)).unwrap();
        let names: Vec<&str> = m.extras.iter().map(|x| x.name).collect();
        assert_eq!(names, ["alpha", "cwnd_total", "rtt_mid", "beta", "congested"]);
    }

    #[test]
    fn dlia_decrease_dynamic_never_halves() {
        let t0 = t0();
        let build = |spec: &str| {
            let s = Spec::parse(spec, "algorithm").unwrap();
            let mut p = Params::new(&s.name, s.params);
            let cc = dlia::from_params(&mut p).unwrap();
            p.finish(dlia::PARAMS).unwrap();
            cc
        };
        for (spec, first, second) in [
            // The switch (default): RTT 150 ms > RTT_mid 100 ms and > RTT_prev 1 µs → congested, halve:
            // 24 000 → 12 000 (β_prev 0.5, cwnd_prev 12 000). Second loss at 150 ms, not above RTT_prev:
            // dynamic, γ = 1, β = 0.25 + 0.75·0.5 = 0.625 → 7500.
            ("dlia", 12_000, 7500),
            ("dlia:decrease=switch", 12_000, 7500),
            // Always dynamic: first loss γ = 1200/24 000 = 0.05, β = 0.0125 + 0.375 = 0.3875 → clamped 0.5:
            // 12 000 (congested = 0). Second: γ = 12 000/12 000 = 1, β = 0.625 → 7500. Now with beta_min
            // 0.6: first β = 0.3875 → 0.6: 24 000 → 14 400; second γ = 1, β = 0.25 + 0.75·0.6 = 0.7:
            // 14 400 → 10 080.
            ("dlia:decrease=dynamic", 12_000, 7500),
            ("dlia:decrease=dynamic,beta_min=0.6", 14_400, 10_080),
        ] {
            let mut cc = one_path(build(spec), t0);
            nth_loss(&mut *cc, t0, 1, ms(150));
            assert_eq!(cc.window(PathId(0)), first, "{spec}");
            let congested = cc.metrics(PathId(0)).unwrap().extra("congested");
            let dynamic = spec.contains("dynamic");
            assert_eq!(congested, Some(if dynamic { 0.0 } else { 1.0 }), "{spec}");
            nth_loss(&mut *cc, t0, 2, ms(150));
            assert_eq!(cc.window(PathId(0)), second, "{spec}");
        }
        // With beta_min 0.6 the switch still halves the congested loss: 24 000 → 12 000, then β = 0.625
        // (clamp [0.6, 0.9] leaves it): 7500.
        let mut cc = one_path(build("dlia:beta_min=0.6"), t0);
        nth_loss(&mut *cc, t0, 1, ms(150));
        assert_eq!(cc.window(PathId(0)), 12_000);
        nth_loss(&mut *cc, t0, 2, ms(150));
        assert_eq!(cc.window(PathId(0)), 7500);
        // Bad values are rejected; D-OLIA has no `decrease` key.
        let s = Spec::parse("dlia:decrease=always", "algorithm").unwrap();
        assert!(matches!(
            dlia::from_params(&mut Params::new(&s.name, s.params)),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(!dolia::PARAMS.contains(&"decrease"));
    }

    #[test]
    fn from_params_accepts_and_rejects() {
        type Build = fn(&mut Params) -> Result<Box<dyn CongestionController>, CcError>;
        let builders: [(Build, &[&str]); 2] = [
            (dlia::from_params, dlia::PARAMS),
            (dolia::from_params, dolia::PARAMS),
        ];
        for (build, params) in builders {
            assert!(DELAY_PARAMS.iter().all(|k| params.contains(k)));
            let run = |spec: &str| {
                let s = Spec::parse(spec, "algorithm").unwrap();
                let mut p = Params::new(&s.name, s.params);
                build(&mut p).and_then(|cc| p.finish(params).map(|()| cc).map_err(CcError::from))
            };
            let ok = run(
                "x:max_window=100000,probe_period=250,beta_init=0.6,beta_min=0.6,beta_max=0.8,factor=0.5,\
                 cwnd_prev_init=2,halving_updates_state=no,halve_before_mid=off",
            );
            assert!(ok.is_ok());
            assert!(matches!(
                run("x:beta_min=0.9,beta_max=0.6"),
                Err(CcError::Spec(crate::SpecError::BadValue { .. }))
            ));
            assert!(matches!(
                run("x:factor=2"),
                Err(CcError::Spec(crate::SpecError::BadValue { .. }))
            ));
            assert!(matches!(
                run("x:probe_period=0"),
                Err(CcError::Spec(crate::SpecError::BadValue { .. }))
            ));
            assert!(matches!(
                run("x:halve_before_mid=maybe"),
                Err(CcError::Spec(crate::SpecError::BadValue { .. }))
            ));
            assert!(matches!(
                run("x:gamma=1"),
                Err(CcError::Spec(crate::SpecError::UnknownParameter { .. }))
            ));
        }
    }
}
