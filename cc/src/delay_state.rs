//! The delay-state machinery shared by D-LIA and D-OLIA (Lubna, Mahmud, Kim, Cho, "D-OLIA", Sensors 21:5764,
//! 2021; cc.md §9): the delay-state estimator (the paper's Algorithm 1) and the dynamic decrease
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
//! Choices where the paper is silent (cc.md §9), each a [`DelayConfig`] field and registry parameter:
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
        };
        if config.beta_min > config.beta_max {
            return Err(CcError::BadValue {
                algorithm: algorithm.to_string(),
                key: "beta_min".to_string(),
                value: config.beta_min.to_string(),
                expected: format!("a number not above beta_max ({})", config.beta_max),
            });
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
        let congested = is_congested(
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
