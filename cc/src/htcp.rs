//! H-TCP (Leith, Shorten, "H-TCP: TCP for high-speed and long-distance networks", PFLDnet 2004;
//! draft-leith-tcp-htcp-06; Linux `net/ipv4/tcp_htcp.c`) as a single-path [`PathController`], run uncoupled
//! per path.
//!
//! H-TCP's increase depends on the time `Δ` elapsed since the last congestion event: Reno-like for the first
//! `Δ_L = 1 s`, then growing quadratically with `Δ`, so that a flow quickly claims bandwidth on a long fat
//! path but stays friendly on short ones. Its backoff adapts to the path's buffering through `RTT_min/RTT_max`.
//!
//! Formulas (`Δ` in seconds since the last congestion event; `mss` = `max_datagram_size`):
//! * `α(Δ) = 1` for `Δ ≤ Δ_L`, else `α(Δ) = 1 + 10·(Δ − Δ_L) + ((Δ − Δ_L)/2)²`;
//! * RTT scaling (on by default): `α ← α·clamp(RTT_min/RTT_ref, 0.1, 2)` with `RTT_ref = 100 ms` (Linux's
//!   `scale`, clamped to `[0.5, 10]·8`, is the inverse ratio);
//! * fairness with the adaptive backoff: `α ← 2·(1 − β)·α` (draft §3, Linux `alpha = 2·factor·(1 − β)`);
//! * per acknowledged packet in congestion avoidance: `cwnd += α·mss·bytes/cwnd`;
//! * adaptive backoff at a congestion event: `β = clamp(RTT_min/RTT_max, β_min, β_max)` with
//!   `β_min = 0.5`, `β_max = 0.8`; `ssthresh = cwnd·β`, `cwnd = max(ssthresh, 2·mss)` (once per RFC 9002
//!   recovery period); `Δ` restarts from 0 at the event;
//! * bandwidth switch (on by default): if the maximum throughput measured in the last congestion epoch differs
//!   from the previous epoch's by more than 20 % (Linux: `5·maxB ∉ [4·old_maxB, 6·old_maxB]`), `β = 0.5`.
//!
//! Constants: `Δ_L = 1 s`, `β_min = 0.5`, `β_max = 0.8`, `RTT_ref = 100 ms` (Linux; the draft leaves the
//! reference RTT open).
//!
//! Choices (Linux's behaviour where the draft is vague):
//! * The first congestion event always uses `β = 0.5` (Linux `modeswitch`: the adaptive backoff starts from
//!   the second event); it also needs `RTT_min > 10 ms`.
//! * `RTT_min` is the smallest RTT sample ever seen. `RTT_max` grows only outside recovery and only by samples
//!   at most 20 ms above it (filters spikes); after each backoff it fades to `RTT_min + 0.95·(RTT_max −
//!   RTT_min)`. Samples are the events' `latest_rtt`.
//! * Throughput: bytes acknowledged outside recovery over an interval of at least `RTT_min` once about a
//!   window (`cwnd − α·mss`) has been acknowledged; within 3·`RTT_min` of a backoff a sample resets the
//!   estimate, later ones are averaged `B ← (3B + b)/4` and `maxB = max(maxB, B)`.
//! * `Δ` counts from the start of the path until the first congestion event (Linux: from initialisation).
//! * α is evaluated on every acknowledged packet (Linux recomputes it after each one-segment increment), real
//!   valued. Linux's undo of `last_cong` on spurious recovery has no QUIC counterpart and is omitted.
//! * Slow start, recovery, persistent congestion, the app-limited rule and pacing are RFC 9002's
//!   ([`RenoWindow`]).

use std::time::{Duration, Instant};

use crate::params::Params;
use crate::window::DEFAULT_MAX_WINDOW;
use crate::{
    AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathController,
    PathControllerFactory, RenoWindow, SentEvent, Uncoupled,
};

/// Registry name.
pub const NAME: &str = "htcp";

/// `RTT_max` only grows by samples at most this far above it (Linux).
const MAX_RTT_STEP: Duration = Duration::from_millis(20);

/// The adaptive backoff needs `RTT_min` above this (Linux).
const MIN_RTT_FOR_ADAPTIVE: Duration = Duration::from_millis(10);

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &[
    "delta_l",
    "beta_min",
    "beta_max",
    "rtt_scaling",
    "rtt_ref",
    "bandwidth_switch",
    "max_window",
];

/// Builds the controller from registry parameters.
///
/// * `delta_l`: `Δ_L` in milliseconds, in `[0, 60000]` (default 1000);
/// * `beta_min ≤ beta_max` in `[0.1, 0.95]` (0.5, 0.8);
/// * `rtt_scaling` (on), `rtt_ref` in milliseconds (100), `bandwidth_switch` (on);
/// * `max_window`: largest window in bytes.
pub fn from_params(params: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
    Ok(Box::new(Uncoupled::new(HtcpConfig::from_params(params)?)))
}

/// `α(Δ) = 1 + 10·(Δ − Δ_L) + ((Δ − Δ_L)/2)²` above `Δ_L`, 1 below (seconds), before RTT scaling and the
/// `2(1 − β)` factor.
pub fn alpha_of_delta(delta: f64, delta_l: f64) -> f64 {
    if delta.is_nan() || delta <= delta_l {
        return 1.0;
    }
    let d = delta - delta_l;
    1.0 + 10.0 * d + (d / 2.0) * (d / 2.0)
}

/// H-TCP's configuration; also the [`PathControllerFactory`] of [`Htcp`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HtcpConfig {
    /// `Δ_L`: Reno-like growth for this long after a congestion event.
    pub delta_l: Duration,
    /// Smallest backoff factor.
    pub beta_min: f64,
    /// Largest backoff factor.
    pub beta_max: f64,
    /// Scale α by `RTT_min/rtt_ref`.
    pub rtt_scaling: bool,
    /// The reference RTT of the scaling.
    pub rtt_ref: Duration,
    /// Use `β_min` when the throughput changed by more than 20 % between congestion epochs.
    pub bandwidth_switch: bool,
    /// Largest window in bytes.
    pub max_window: u64,
}

impl Default for HtcpConfig {
    fn default() -> Self {
        HtcpConfig {
            delta_l: Duration::from_secs(1),
            beta_min: 0.5,
            beta_max: 0.8,
            rtt_scaling: true,
            rtt_ref: Duration::from_millis(100),
            bandwidth_switch: true,
            max_window: DEFAULT_MAX_WINDOW,
        }
    }
}

impl HtcpConfig {
    /// Reads the parameters listed in [`from_params`].
    pub fn from_params(params: &mut Params) -> Result<HtcpConfig, CcError> {
        let d = HtcpConfig::default();
        let c = HtcpConfig {
            delta_l: params.millis("delta_l", d.delta_l, Duration::ZERO, Duration::from_secs(60))?,
            beta_min: params.f64("beta_min", d.beta_min, 0.1, 0.95)?,
            beta_max: params.f64("beta_max", d.beta_max, 0.1, 0.95)?,
            rtt_scaling: params.bool("rtt_scaling", d.rtt_scaling)?,
            rtt_ref: params.millis(
                "rtt_ref",
                d.rtt_ref,
                Duration::from_millis(1),
                Duration::from_secs(10),
            )?,
            bandwidth_switch: params.bool("bandwidth_switch", d.bandwidth_switch)?,
            max_window: params.u64("max_window", DEFAULT_MAX_WINDOW, 1, DEFAULT_MAX_WINDOW)?,
        };
        if c.beta_min > c.beta_max {
            return Err(CcError::Spec(crate::SpecError::BadValue {
                name: NAME.to_string(),
                key: "beta_min".to_string(),
                value: c.beta_min.to_string(),
                expected: format!("a number not above beta_max ({})", c.beta_max),
            }));
        }
        Ok(c)
    }
}

impl PathControllerFactory for HtcpConfig {
    type Controller = Htcp;

    fn name(&self) -> &'static str {
        NAME
    }

    fn build(&self, now: Instant, max_datagram_size: u16) -> Htcp {
        Htcp::new(*self, now, max_datagram_size)
    }
}

/// Throughput measurement for the bandwidth switch (bytes per second).
#[derive(Clone, Debug)]
struct Throughput {
    bytes: u64,
    since: Instant,
    bi: f64,
    max_b: f64,
    old_max_b: f64,
}

/// One path's H-TCP controller.
#[derive(Clone, Debug)]
pub struct Htcp {
    config: HtcpConfig,
    window: RenoWindow,
    last_cong: Instant,
    min_rtt: Option<Duration>,
    max_rtt: Duration,
    beta: f64,
    modeswitch: bool,
    tput: Throughput,
    alpha: f64,
}

impl Htcp {
    /// A controller for a path that starts at `now`.
    pub fn new(config: HtcpConfig, now: Instant, max_datagram_size: u16) -> Self {
        Htcp {
            config,
            window: RenoWindow::with_max_window(max_datagram_size, config.max_window),
            last_cong: now,
            min_rtt: None,
            max_rtt: Duration::ZERO,
            beta: config.beta_min,
            modeswitch: false,
            tput: Throughput {
                bytes: 0,
                since: now,
                bi: 0.0,
                max_b: 0.0,
                old_max_b: 0.0,
            },
            alpha: 1.0,
        }
    }

    /// The underlying RFC 9002 window.
    pub fn reno(&self) -> &RenoWindow {
        &self.window
    }

    /// The backoff factor the next congestion event starts from (the last one computed).
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// `RTT_max` as currently tracked.
    pub fn max_rtt(&self) -> Duration {
        self.max_rtt
    }

    /// The effective α at `now`: `2·(1 − β)·α(Δ)·RTT scaling` segments per RTT.
    pub fn alpha_at(&self, now: Instant) -> f64 {
        let delta = now.saturating_duration_since(self.last_cong).as_secs_f64();
        let mut a = alpha_of_delta(delta, self.config.delta_l.as_secs_f64());
        if self.config.rtt_scaling
            && let Some(min) = self.min_rtt
        {
            let r = self.config.rtt_ref.as_secs_f64();
            if r > 0.0 {
                a *= (min.as_secs_f64() / r).clamp(0.1, 2.0);
            }
        }
        let alpha = 2.0 * (1.0 - self.beta) * a;
        if alpha.is_finite() && alpha > 0.0 {
            alpha
        } else {
            1.0
        }
    }

    fn measure(&mut self, ev: &AckEvent<'_>) {
        let sample = ev.rtt.latest;
        if !sample.is_zero() {
            let min = self.min_rtt.map_or(sample, |m| m.min(sample));
            self.min_rtt = Some(min);
            if !self.window.in_recovery() {
                self.max_rtt = self.max_rtt.max(min);
                if sample > self.max_rtt && sample <= self.max_rtt + MAX_RTT_STEP {
                    self.max_rtt = sample;
                }
            }
        }
        let t = &mut self.tput;
        if self.window.in_recovery() {
            t.bytes = 0;
            t.since = ev.now;
            return;
        }
        t.bytes = t.bytes.saturating_add(ev.bytes_acked());
        let Some(min_rtt) = self.min_rtt.filter(|m| !m.is_zero()) else {
            return;
        };
        let mss = self.window.max_datagram_size() as f64;
        let elapsed = ev.now.saturating_duration_since(t.since);
        if (t.bytes as f64) < self.window.cwnd() - self.alpha.max(1.0) * mss || elapsed < min_rtt {
            return;
        }
        let cur = t.bytes as f64 / elapsed.as_secs_f64();
        let since_cong = ev.now.saturating_duration_since(self.last_cong).as_secs_f64();
        if since_cong / min_rtt.as_secs_f64() <= 3.0 {
            t.bi = cur;
            t.max_b = cur;
        } else {
            t.bi = (3.0 * t.bi + cur) / 4.0;
            t.max_b = t.max_b.max(t.bi);
        }
        t.bytes = 0;
        t.since = ev.now;
    }

    /// Linux `htcp_beta_update` and the fading of `RTT_max`.
    fn update_beta(&mut self) {
        if self.config.bandwidth_switch {
            let (max_b, old) = (self.tput.max_b, self.tput.old_max_b);
            self.tput.old_max_b = max_b;
            if !(5.0 * max_b >= 4.0 * old && 5.0 * max_b <= 6.0 * old) {
                self.beta = self.config.beta_min;
                self.modeswitch = false;
                self.fade_max_rtt();
                return;
            }
        }
        match self.min_rtt {
            Some(min) if self.modeswitch && min > MIN_RTT_FOR_ADAPTIVE && !self.max_rtt.is_zero() => {
                let ratio = min.as_secs_f64() / self.max_rtt.as_secs_f64();
                self.beta = ratio.clamp(self.config.beta_min, self.config.beta_max);
            }
            _ => {
                self.beta = self.config.beta_min;
                self.modeswitch = true;
            }
        }
        self.fade_max_rtt();
    }

    fn fade_max_rtt(&mut self) {
        if let Some(min) = self.min_rtt
            && self.max_rtt > min
        {
            self.max_rtt = min + (self.max_rtt - min).mul_f64(0.95);
        }
    }
}

impl PathController for Htcp {
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.window.on_packet_sent(ev);
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        self.measure(ev);
        let alpha = self.alpha_at(ev.now);
        self.alpha = alpha;
        self.window.on_ack(ev, |w, p| alpha * w.reno_increase(p));
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        if self.window.will_reduce(ev) {
            self.update_beta();
            self.last_cong = ev.now;
            self.tput.bytes = 0;
            self.tput.since = ev.now;
        }
        self.window.on_congestion(ev, self.beta);
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
                name: "alpha",
                value: self.alpha,
            },
            Metric {
                name: "beta",
                value: self.beta,
            },
            Metric {
                name: "min_rtt",
                value: self.min_rtt.map_or(0.0, |d| d.as_secs_f64()),
            },
            Metric {
                name: "max_rtt",
                value: self.max_rtt.as_secs_f64(),
            },
            Metric {
                name: "max_b",
                value: self.tput.max_b,
            },
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PathId;
    use crate::test_support::{ack, build_spec, close, loss, ms, t0};

    #[test]
    fn alpha_of_delta_matches_the_draft() {
        assert_eq!(alpha_of_delta(0.5, 1.0), 1.0);
        assert_eq!(alpha_of_delta(1.0, 1.0), 1.0);
        // Δ = 2 s: 1 + 10·1 + (1/2)² = 11.25; Δ = 3 s: 1 + 20 + 1 = 22; Δ = 11 s: 1 + 100 + 25 = 126.
        assert_eq!(alpha_of_delta(2.0, 1.0), 11.25);
        assert_eq!(alpha_of_delta(3.0, 1.0), 22.0);
        assert_eq!(alpha_of_delta(11.0, 1.0), 126.0);
    }

    /// Slow start to 40 segments (RTT 100 ms), first loss at 150 ms: β = 0.5 → 20 segments.
    fn setup(config: HtcpConfig) -> (Htcp, Instant) {
        let t = t0();
        let mut c = Htcp::new(config, t, 1000);
        ack(&mut c, t + ms(100), t, 30, 1000, ms(100));
        c.on_congestion(&loss(t + ms(150), t + ms(100)));
        assert_eq!(c.window(), 20_000);
        assert_eq!(c.beta(), 0.5);
        (c, t)
    }

    #[test]
    fn two_seconds_after_a_loss_alpha_is_11_25_segments_per_rtt() {
        let (mut c, t) = setup(HtcpConfig::default());
        // Δ = 2150 − 150 ms = 2 s: α = 2·(1 − 0.5)·11.25·(100 ms/100 ms) = 11.25 →
        // + 11.25·1000·1000/20000 = 562.5.
        let mut scaled = c.clone();
        ack(&mut c, t + ms(2150), t + ms(2050), 1, 1000, ms(100));
        assert!(close(c.reno().cwnd(), 20_562.5, 1e-9), "{}", c.reno().cwnd());
        // RTT scaling: RTT_min 50 ms halves α: + 281.25.
        ack(&mut scaled, t + ms(2150), t + ms(2050), 1, 1000, ms(50));
        assert!(close(scaled.reno().cwnd(), 20_281.25, 1e-9));
    }

    #[test]
    fn within_delta_l_the_increase_is_renos() {
        let (mut c, t) = setup(HtcpConfig::default());
        // Δ = 0.5 s ≤ 1 s: α = 2·0.5·1 = 1 → + 1000·1000/20000 = 50.
        ack(&mut c, t + ms(650), t + ms(550), 1, 1000, ms(100));
        assert!(close(c.reno().cwnd(), 20_050.0, 1e-9));
    }

    #[test]
    fn adaptive_backoff_uses_min_over_max_rtt() {
        // Without the bandwidth switch: the slow-start ACK's throughput sample would otherwise make the first
        // event reset `modeswitch` (see the next test).
        let (mut c, t) = setup(HtcpConfig {
            bandwidth_switch: false,
            ..HtcpConfig::default()
        });
        // Ends recovery (sampled while in recovery: RTT_max unchanged) …
        ack(&mut c, t + ms(300), t + ms(200), 1, 1000, ms(120));
        // … then RTT_max follows samples at most 20 ms above it: 120, 135; 200 is a spike and is ignored.
        ack(&mut c, t + ms(310), t + ms(210), 1, 1000, ms(120));
        ack(&mut c, t + ms(320), t + ms(220), 1, 1000, ms(135));
        ack(&mut c, t + ms(330), t + ms(230), 1, 1000, ms(200));
        assert_eq!(c.max_rtt(), ms(135));
        let before = c.reno().cwnd();
        c.on_congestion(&loss(t + ms(500), t + ms(400)));
        // β = 100/135 = 0.740741; RTT_max fades to 100 + 0.95·35 = 133.25 ms.
        assert!(close(c.beta(), 100.0 / 135.0, 1e-12));
        assert!(close(c.reno().cwnd(), before * 100.0 / 135.0, 1e-6));
        assert_eq!(c.max_rtt(), Duration::from_micros(133_250));
        // Within Δ_L the increase is 2·(1 − 0.740741) = 0.518519 times Reno's.
        let cwnd = c.reno().cwnd();
        ack(&mut c, t + ms(700), t + ms(600), 1, 1000, ms(100));
        assert!(close(c.reno().cwnd() - cwnd, 0.518_519 * 1e6 / cwnd, 1e-4));
    }

    #[test]
    fn beta_is_clamped_and_a_throughput_change_switches_to_beta_min() {
        for (switch, beta) in [(false, 0.8), (true, 0.5)] {
            let (mut c, t) = setup(HtcpConfig {
                bandwidth_switch: switch,
                ..HtcpConfig::default()
            });
            // The slow-start epoch measured 30000 B / 0.1 s = 300000 B/s. Out of recovery at 300 ms (the interval
            // restarts), then 20 packets acked 100 ms later: 20000 B / 0.1 s = 200000 B/s, within 3·RTT_min of
            // the backoff, so maxB = 200000: 5·200000 ∉ [4·300000, 6·300000], a change of more than 20 %.
            ack(&mut c, t + ms(300), t + ms(200), 1, 1000, ms(100));
            ack(&mut c, t + ms(400), t + ms(300), 20, 1000, ms(100));
            assert!(close(c.metrics().extra("max_b").unwrap(), 200_000.0, 1e-6));
            c.on_congestion(&loss(t + ms(500), t + ms(450)));
            // All RTTs 100 ms: RTT_min/RTT_max = 1, clamped to β_max = 0.8 unless the switch fires.
            assert_eq!(c.beta(), beta, "switch {switch}");
        }
    }

    #[test]
    fn from_params_accepts_known_and_rejects_bad_params() {
        let t = t0();
        let mut cc = build_spec(
            "htcp:delta_l=500,beta_min=0.6,beta_max=0.9,rtt_scaling=off,rtt_ref=50,bandwidth_switch=off",
            from_params,
            PARAMS,
        )
        .unwrap();
        cc.on_path_added(PathId(0), t, 1000);
        cc.on_congestion(&loss(t + ms(100), t));
        assert_eq!(cc.window(PathId(0)), 6000); // first event: β_min = 0.6
        assert!(matches!(
            build_spec("htcp:beta_min=0.9,beta_max=0.8", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build_spec("htcp:alpha=1", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::UnknownParameter { .. }))
        ));
    }
}
