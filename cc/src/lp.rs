//! TCP-LP, low priority (Kuzmanovic, Knightly, "TCP-LP: a distributed algorithm for low priority data
//! transfer", IEEE INFOCOM 2003; Linux `net/ipv4/tcp_lp.c`) as a single-path [`PathController`], run
//! uncoupled per path.
//!
//! TCP-LP uses the spare capacity of a path without disturbing the other (best-effort) flows: it infers
//! congestion *early*, from a rise of the one-way delay, before losses occur, and backs off hard: it halves
//! its window at the first early indication and, if another comes within the inference time, collapses it.
//!
//! Formulas (delays in seconds):
//! * smoothed one-way delay `sowd ← 7/8·sowd + 1/8·d` (the first sample initialises it); `d_min`, `d_max` the
//!   smallest and largest delays, with Linux's rule that `d_max` trails the largest sample by one ("always
//!   forget the max of the max": a sample above both `d_max` and the reserve `d_max_rsv` moves the reserve
//!   into `d_max` and becomes the new reserve);
//! * early congestion indication when `sowd > d_min + δ·(d_max − d_min)`, `δ = 0.15`; then `d_min = sowd`,
//!   `d_max = d_max_rsv = 2·sowd` (Linux) and:
//!   - within the inference time `3·RTT` of the previous indication: `cwnd = 2·mss` (the paper's and Linux's one
//!     segment, raised to RFC 9002's minimum window);
//!   - otherwise `cwnd = cwnd/2`;
//!   - `ssthresh = min(ssthresh, cwnd)`;
//! * while within the inference time of the last indication the window does not grow; otherwise it grows as
//!   NewReno (RFC 9002 slow start and `mss·bytes/cwnd`);
//! * losses and ECN-CE: NewReno's halving once per RFC 9002 recovery period, persistent congestion as RFC 9002.
//!
//! Constants: `δ = 0.15` (Linux `15/100`; the paper's threshold), inference time `3·RTT` (Linux
//! `inference = 3·(now − tsecr)`).
//!
//! Choices and deviations:
//! * **No one-way delay.** QUIC carries no TCP timestamps and the receiver's clock is unknown, so the delay
//!   signal is the RTT sample (`latest_rtt`) of each acknowledgement: the "one-way delay" includes the reverse
//!   path, so queueing on the ACK path is also taken as congestion. (Linux needs timestamps and the peer's
//!   clock rate; without them it never infers.)
//! * The threshold test is `sowd ≤ threshold` for "within threshold" (Linux uses `<`, which fires at the very
//!   first sample, when `d_min = d_max = sowd`).
//! * The ACK that triggers an indication does not grow the window (in Linux, the ACK whose indication starts
//!   the inference still gets Reno's increase); setting `ssthresh` ends slow start (Linux leaves `ssthresh`,
//!   but does not grow during the inference time either). The inference time uses the latest RTT sample.
//! * Windows never fall below RFC 9002's minimum of `2·mss` (TCP-LP collapses to one segment).
//! * Pacing is RFC 9002's ([`RenoWindow`]).

use std::time::{Duration, Instant};

use crate::params::Params;
use crate::window::{DEFAULT_MAX_WINDOW, LOSS_REDUCTION_FACTOR};
use crate::{
    AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathController,
    PathControllerFactory, RenoWindow, SentEvent, Uncoupled,
};

/// Registry name.
pub const NAME: &str = "lp";

/// The threshold `δ` (fraction of the delay range).
pub const DEFAULT_DELTA: f64 = 0.15;

/// The inference time in RTTs.
pub const DEFAULT_INFERENCE_RTTS: f64 = 3.0;

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &["delta", "inference_rtts", "max_window"];

/// Builds the controller from registry parameters.
///
/// * `delta`: threshold as a fraction of the delay range, in `[0, 1]` (default 0.15);
/// * `inference_rtts`: inference time in RTTs, in `[0, 100]` (default 3);
/// * `max_window`: largest window in bytes.
pub fn from_params(params: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
    Ok(Box::new(Uncoupled::new(LpConfig::from_params(params)?)))
}

/// TCP-LP's configuration; also the [`PathControllerFactory`] of [`Lp`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LpConfig {
    /// Early indication above `d_min + delta·(d_max − d_min)`.
    pub delta: f64,
    /// The inference time, in RTTs.
    pub inference_rtts: f64,
    /// Largest window in bytes.
    pub max_window: u64,
}

impl Default for LpConfig {
    fn default() -> Self {
        LpConfig {
            delta: DEFAULT_DELTA,
            inference_rtts: DEFAULT_INFERENCE_RTTS,
            max_window: DEFAULT_MAX_WINDOW,
        }
    }
}

impl LpConfig {
    /// Reads the parameters listed in [`from_params`].
    pub fn from_params(params: &mut Params) -> Result<LpConfig, CcError> {
        Ok(LpConfig {
            delta: params.f64("delta", DEFAULT_DELTA, 0.0, 1.0)?,
            inference_rtts: params.f64("inference_rtts", DEFAULT_INFERENCE_RTTS, 0.0, 100.0)?,
            max_window: params.u64("max_window", DEFAULT_MAX_WINDOW, 1, DEFAULT_MAX_WINDOW)?,
        })
    }
}

impl PathControllerFactory for LpConfig {
    type Controller = Lp;

    fn name(&self) -> &'static str {
        NAME
    }

    fn build(&self, _now: Instant, max_datagram_size: u16) -> Lp {
        Lp::new(*self, max_datagram_size)
    }
}

/// One path's TCP-LP controller.
#[derive(Clone, Debug)]
pub struct Lp {
    config: LpConfig,
    window: RenoWindow,
    sowd: Option<f64>,
    d_min: f64,
    d_max: f64,
    d_max_rsv: f64,
    last_indication: Option<Instant>,
    inference: Duration,
    indications: u64,
}

impl Lp {
    /// A controller at the start of slow start.
    pub fn new(config: LpConfig, max_datagram_size: u16) -> Self {
        Lp {
            config,
            window: RenoWindow::with_max_window(max_datagram_size, config.max_window),
            sowd: None,
            d_min: f64::INFINITY,
            d_max: 0.0,
            d_max_rsv: 0.0,
            last_indication: None,
            inference: Duration::ZERO,
            indications: 0,
        }
    }

    /// The underlying RFC 9002 window.
    pub fn reno(&self) -> &RenoWindow {
        &self.window
    }

    /// The smoothed delay, seconds.
    pub fn sowd(&self) -> Option<f64> {
        self.sowd
    }

    /// Early congestion indications so far.
    pub fn indications(&self) -> u64 {
        self.indications
    }

    fn within_inference(&self, now: Instant) -> bool {
        self.last_indication
            .is_some_and(|d| now.saturating_duration_since(d) < self.inference)
    }

    /// Linux `tcp_lp_rtt_sample` and the threshold test of `tcp_lp_pkts_acked`; returns whether the sample
    /// is an early congestion indication.
    fn sample(&mut self, d: f64) -> bool {
        self.d_min = self.d_min.min(d);
        if d > self.d_max {
            if d > self.d_max_rsv {
                self.d_max = if self.d_max_rsv == 0.0 { d } else { self.d_max_rsv };
                self.d_max_rsv = d;
            } else {
                self.d_max = d;
            }
        }
        let sowd = self.sowd.map_or(d, |s| s + (d - s) / 8.0);
        self.sowd = Some(sowd);
        sowd > self.d_min + self.config.delta * (self.d_max - self.d_min)
    }
}

impl PathController for Lp {
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.window.on_packet_sent(ev);
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        let rtt = ev.rtt.latest;
        if !ev.packets.is_empty() && !rtt.is_zero() {
            self.inference = rtt.mul_f64(self.config.inference_rtts);
            let within_inference = self.within_inference(ev.now);
            if self.sample(rtt.as_secs_f64())
                && let Some(sowd) = self.sowd
            {
                self.d_min = sowd;
                self.d_max = 2.0 * sowd;
                self.d_max_rsv = 2.0 * sowd;
                let cwnd = if within_inference {
                    self.window.min_window()
                } else {
                    self.window.cwnd() / 2.0
                };
                self.window.set_cwnd(cwnd);
                self.window
                    .set_ssthresh(self.window.ssthresh().min(self.window.cwnd()));
                self.last_indication = Some(ev.now);
                self.indications = self.indications.saturating_add(1);
            }
        }
        if self.within_inference(ev.now) {
            self.window.on_ack_with(ev, |_, _, _| 0.0);
        } else {
            self.window.on_ack(ev, RenoWindow::reno_increase);
        }
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        self.window.on_congestion(ev, LOSS_REDUCTION_FACTOR);
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
                name: "sowd",
                value: self.sowd.unwrap_or(0.0),
            },
            Metric {
                name: "owd_min",
                value: if self.d_min.is_finite() { self.d_min } else { 0.0 },
            },
            Metric {
                name: "owd_max",
                value: self.d_max,
            },
            Metric {
                name: "indications",
                value: self.indications as f64,
            },
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PathId;
    use crate::test_support::{ack, build_spec, close, loss, ms, t0};

    /// ACK at 100 ms (RTT 100 ms: no indication, slow start 10000 → 11000), ACK at 200 ms with RTT 200 ms:
    /// d_max trails at 100 ms, sowd = 0.1 + 0.1/8 = 0.1125 > 0.1 + 0.15·0 → first indication: halve to 5500.
    fn setup() -> (Lp, Instant) {
        let t = t0();
        let mut c = Lp::new(LpConfig::default(), 1000);
        ack(&mut c, t + ms(100), t, 1, 1000, ms(100));
        assert_eq!(c.window(), 11_000);
        assert_eq!(c.indications(), 0);
        ack(&mut c, t + ms(200), t + ms(100), 1, 1000, ms(200));
        assert!(close(c.sowd().unwrap(), 0.1125, 1e-12));
        assert_eq!(c.indications(), 1);
        assert_eq!(c.window(), 5500);
        assert_eq!(c.metrics().ssthresh, Some(5500));
        (c, t)
    }

    #[test]
    fn a_second_indication_within_the_inference_time_yields_the_path() {
        let (mut c, t) = setup();
        // After the first: d_min = 0.1125, d_max = 0.225. At 300 ms, RTT 300 ms: sowd = 0.1125 + 0.1875/8 =
        // 0.1359375 > 0.1125 + 0.15·0.1125 = 0.129375, 100 ms after the first (< 3·300 ms): minimum window.
        ack(&mut c, t + ms(300), t + ms(200), 1, 1000, ms(300));
        assert!(close(c.sowd().unwrap(), 0.135_937_5, 1e-12));
        assert_eq!(c.indications(), 2);
        assert_eq!(c.window(), 2000);
    }

    #[test]
    fn a_second_indication_after_the_inference_time_halves_again() {
        let (mut c, t) = setup();
        // The same sample 1 s after the first indication (> 3·300 ms): halve, 5500 → 2750.
        ack(&mut c, t + ms(1200), t + ms(1100), 1, 1000, ms(300));
        assert_eq!(c.indications(), 2);
        assert_eq!(c.window(), 2750);
    }

    #[test]
    fn the_threshold_is_fifteen_percent_of_the_delay_range() {
        let (c, t) = setup();
        // d_min = 0.1125, d_max = 0.225: threshold 0.1125 + 0.15·0.1125 = 0.129375. Outside the inference time:
        // RTT 240 ms → sowd = 0.1125 + 0.1275/8 = 0.1284375: below, no indication (Reno growth instead);
        // RTT 270 ms → sowd = 0.1125 + 0.1575/8 = 0.1321875: above (it would not be with δ = 0.2), halve.
        let mut below = c.clone();
        ack(&mut below, t + ms(1200), t + ms(1100), 1, 1000, ms(240));
        assert_eq!(below.indications(), 1);
        assert_eq!(below.window(), 5681);
        let mut above = c;
        ack(&mut above, t + ms(1200), t + ms(1100), 1, 1000, ms(270));
        assert_eq!(above.indications(), 2);
        assert_eq!(above.window(), 2750);
    }

    #[test]
    fn no_growth_during_the_inference_time() {
        let (mut c, t) = setup();
        // 50 ms later, RTT 100 ms: sowd = 0.1125 − 0.0125/8 = 0.1109375 ≤ threshold (d_min drops to 0.1): no
        // indication, but within 3·100 ms of the first: the window stays.
        ack(&mut c, t + ms(250), t + ms(150), 1, 1000, ms(100));
        assert_eq!(c.indications(), 1);
        assert_eq!(c.window(), 5500);
        // 400 ms after it, outside the inference time: Reno's increase 1000·1000/5500 = 181.8 → 5681.
        ack(&mut c, t + ms(600), t + ms(500), 1, 1000, ms(100));
        assert_eq!(c.indications(), 1);
        assert_eq!(c.window(), 5681);
    }

    #[test]
    fn with_a_flat_delay_it_is_newreno() {
        let t = t0();
        let mut c = Lp::new(LpConfig::default(), 1200);
        for i in 1..=5 {
            ack(&mut c, t + ms(100 * i), t + ms(100 * (i - 1)), 1, 1200, ms(100));
        }
        assert_eq!(c.indications(), 0);
        assert_eq!(c.window(), 18_000); // slow start 12000 + 5·1200
        c.on_congestion(&loss(t + ms(600), t + ms(550)));
        assert_eq!(c.window(), 9000);
    }

    #[test]
    fn from_params_accepts_known_and_rejects_bad_params() {
        let mut cc = build_spec(
            "lp:delta=0.3,inference_rtts=5,max_window=100000",
            from_params,
            PARAMS,
        )
        .unwrap();
        cc.on_path_added(PathId(0), t0(), 1000);
        assert_eq!(cc.window(PathId(0)), 10_000);
        assert!(matches!(
            build_spec("lp:delta=2", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build_spec("lp:beta=1", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::UnknownParameter { .. }))
        ));
    }
}
