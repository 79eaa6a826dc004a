//! TCP-Illinois (Liu, Başar, Srikant, "TCP-Illinois: a loss and delay-based congestion control algorithm for
//! high-speed networks", VALUETOOLS 2006 / Performance Evaluation 65(6–7), 2008; Linux
//! `net/ipv4/tcp_illinois.c`) as a single-path [`PathController`], run uncoupled per path.
//!
//! Illinois is loss-based (it reacts to losses only) but uses queueing delay to choose *how much*: far from
//! congestion (small average queueing delay) it grows fast and backs off little; near congestion it grows
//! slowly and halves. The result is a concave window curve.
//!
//! Formulas (once per round trip, from the round's RTT samples; `base` = the smallest RTT ever seen, `max` =
//! the largest; delays in seconds):
//! * `d_m = max − base` (maximum queueing delay), `d_a = avg − base` (the round's average queueing delay);
//!   `d1 = 0.01·d_m`, `d2 = 0.1·d_m`, `d3 = 0.8·d_m`;
//! * `α = α_max` if `d_a ≤ d1`, else `α = κ1/(κ2 + d_a)` with `κ1 = (d_m − d1)·α_min·α_max/(α_max − α_min)`,
//!   `κ2 = (d_m − d1)·α_min/(α_max − α_min) − d1`, so `α(d1) = α_max` and `α(d_m) = α_min`;
//! * `β = β_min` if `d_a ≤ d2`, `β_max` if `d_a ≥ d3`, linear in between:
//!   `β = β_min + (β_max − β_min)·(d_a − d2)/(d3 − d2)`;
//! * below `win_thresh` segments `α = 1`, `β = 1/2` (Reno);
//! * per acknowledged packet in congestion avoidance: `cwnd += α·mss·bytes/cwnd` (α segments per RTT);
//! * on congestion (once per RFC 9002 recovery period): `ssthresh = cwnd·(1 − β)`, `cwnd = max(ssthresh, 2·mss)`.
//!
//! Constants (paper and Linux): `α_min = 0.3`, `α_max = 10`, `β_min = 1/8`, `β_max = 1/2`, `win_thresh = 15`
//! segments, `θ = 5` rounds, `d1, d2, d3 = 0.01, 0.1, 0.8` of `d_m`.
//!
//! Choices (Linux's behaviour where the paper is vague):
//! * Once the delay has been above `d1`, `α` returns to `α_max` only after `θ` consecutive rounds at or below
//!   `d1` (Linux `rtt_low`/`rtt_above`; the paper's "wait for a few RTTs"); in the meantime it keeps its value.
//! * Initial values: `α = α_max`, `β = 1/2` (Linux `tcp_illinois_init`); persistent congestion (Linux
//!   `TCP_CA_Loss`) resets them to `α = 1`, `β = 1/2` and forgets the low/above history. `base` and `max` are
//!   never aged (Linux: "TODO: age max_rtt?").
//! * Rounds: QUIC has no `snd_nxt`, so a round ends with the first ACK of a packet sent after the round began
//!   ([`crate::vegas`]'s rule). α and β are updated at every round end, also during recovery and when
//!   application-limited (Linux updates them in `cong_avoid`, which also runs when not cwnd-limited).
//! * RTT samples are the events' `latest_rtt` (Linux: every ACK's sample); real-valued α, β and increases.
//! * Slow start, the recovery period, the app-limited rule and pacing are RFC 9002's ([`RenoWindow`]).

use std::time::{Duration, Instant};

use crate::params::Params;
use crate::round::{MIN_RTT_SAMPLE, RttRounds};
use crate::window::DEFAULT_MAX_WINDOW;
use crate::{
    AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathController,
    PathControllerFactory, RenoWindow, SentEvent, Uncoupled,
};

/// Registry name.
pub const NAME: &str = "illinois";

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &[
    "alpha_min",
    "alpha_max",
    "beta_min",
    "beta_max",
    "win_thresh",
    "theta",
    "d1",
    "d2",
    "d3",
    "max_window",
];

/// Builds the controller from registry parameters.
///
/// * `alpha_min`, `alpha_max`: increase per RTT in segments, `0 < alpha_min < alpha_max ≤ 100` (0.3, 10);
/// * `beta_min`, `beta_max`: decrease fractions, `0 < beta_min ≤ beta_max ≤ 0.9` (0.125, 0.5);
/// * `win_thresh`: Reno below this many segments (15); `theta`: low-delay rounds before `alpha_max` (5);
/// * `d1 < d2 < d3`: delay thresholds as fractions of the maximum queueing delay (0.01, 0.1, 0.8);
/// * `max_window`: largest window in bytes.
pub fn from_params(params: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
    Ok(Box::new(Uncoupled::new(IllinoisConfig::from_params(params)?)))
}

/// Illinois's configuration; also the [`PathControllerFactory`] of [`Illinois`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IllinoisConfig {
    /// Smallest increase per RTT, segments.
    pub alpha_min: f64,
    /// Largest increase per RTT, segments.
    pub alpha_max: f64,
    /// Smallest decrease fraction.
    pub beta_min: f64,
    /// Largest decrease fraction.
    pub beta_max: f64,
    /// Reno (α = 1, β = 1/2) below this window, segments.
    pub win_thresh: f64,
    /// Low-delay rounds before α returns to `alpha_max`.
    pub theta: u32,
    /// `d1` as a fraction of the maximum queueing delay.
    pub d1: f64,
    /// `d2` as a fraction of the maximum queueing delay.
    pub d2: f64,
    /// `d3` as a fraction of the maximum queueing delay.
    pub d3: f64,
    /// Largest window in bytes.
    pub max_window: u64,
}

impl Default for IllinoisConfig {
    fn default() -> Self {
        IllinoisConfig {
            alpha_min: 0.3,
            alpha_max: 10.0,
            beta_min: 0.125,
            beta_max: 0.5,
            win_thresh: 15.0,
            theta: 5,
            d1: 0.01,
            d2: 0.1,
            d3: 0.8,
            max_window: DEFAULT_MAX_WINDOW,
        }
    }
}

fn bad(key: &str, value: f64, expected: &str) -> CcError {
    CcError::Spec(crate::SpecError::BadValue {
        name: NAME.to_string(),
        key: key.to_string(),
        value: value.to_string(),
        expected: expected.to_string(),
    })
}

impl IllinoisConfig {
    /// Reads the parameters listed in [`from_params`].
    pub fn from_params(params: &mut Params) -> Result<IllinoisConfig, CcError> {
        let d = IllinoisConfig::default();
        let c = IllinoisConfig {
            alpha_min: params.f64("alpha_min", d.alpha_min, 0.01, 100.0)?,
            alpha_max: params.f64("alpha_max", d.alpha_max, 0.01, 100.0)?,
            beta_min: params.f64("beta_min", d.beta_min, 0.01, 0.9)?,
            beta_max: params.f64("beta_max", d.beta_max, 0.01, 0.9)?,
            win_thresh: params.f64("win_thresh", d.win_thresh, 0.0, 1e6)?,
            theta: u32::try_from(params.u64("theta", u64::from(d.theta), 1, 1000)?).unwrap_or(d.theta),
            d1: params.f64("d1", d.d1, 0.0, 1.0)?,
            d2: params.f64("d2", d.d2, 0.0, 1.0)?,
            d3: params.f64("d3", d.d3, 0.0, 1.0)?,
            max_window: params.u64("max_window", DEFAULT_MAX_WINDOW, 1, DEFAULT_MAX_WINDOW)?,
        };
        if c.alpha_min >= c.alpha_max {
            return Err(bad("alpha_min", c.alpha_min, "a number below alpha_max"));
        }
        if c.beta_min > c.beta_max {
            return Err(bad("beta_min", c.beta_min, "a number not above beta_max"));
        }
        if !(c.d1 < c.d2 && c.d2 < c.d3) {
            return Err(bad("d2", c.d2, "d1 < d2 < d3"));
        }
        Ok(c)
    }

    /// `α` for average queueing delay `da` and maximum `dm` (seconds), ignoring the `θ` rule: `alpha_max` at or
    /// below `d1`, else `κ1/(κ2 + da)`.
    pub fn alpha_of(&self, da: f64, dm: f64) -> f64 {
        let d1 = self.d1 * dm;
        if da <= d1 {
            return self.alpha_max;
        }
        // (dm − d1)·α_max / ((dm − d1) + (da − d1)·(α_max − α_min)/α_min) = κ1/(κ2 + da).
        let (dm1, da1) = (dm - d1, da - d1);
        let den = dm1 + da1 * (self.alpha_max - self.alpha_min) / self.alpha_min;
        let alpha = self.alpha_max * dm1 / den;
        if alpha.is_finite() {
            alpha.clamp(self.alpha_min, self.alpha_max)
        } else {
            self.alpha_min
        }
    }

    /// `β` for average queueing delay `da` and maximum `dm` (seconds).
    pub fn beta_of(&self, da: f64, dm: f64) -> f64 {
        let (d2, d3) = (self.d2 * dm, self.d3 * dm);
        if da <= d2 {
            self.beta_min
        } else if da >= d3 || d3 <= d2 {
            self.beta_max
        } else {
            self.beta_min + (self.beta_max - self.beta_min) * (da - d2) / (d3 - d2)
        }
    }
}

impl PathControllerFactory for IllinoisConfig {
    type Controller = Illinois;

    fn name(&self) -> &'static str {
        NAME
    }

    fn build(&self, now: Instant, max_datagram_size: u16) -> Illinois {
        Illinois::new(*self, now, max_datagram_size)
    }
}

/// One path's Illinois controller.
#[derive(Clone, Debug)]
pub struct Illinois {
    config: IllinoisConfig,
    window: RenoWindow,
    rounds: RttRounds,
    max_rtt: Duration,
    alpha: f64,
    beta: f64,
    rtt_above: bool,
    rtt_low: u32,
    /// Average queueing delay of the last round, seconds.
    da: f64,
}

impl Illinois {
    /// A controller for a path that starts at `now`.
    pub fn new(config: IllinoisConfig, now: Instant, max_datagram_size: u16) -> Self {
        Illinois {
            config,
            window: RenoWindow::with_max_window(max_datagram_size, config.max_window),
            rounds: RttRounds::new(now),
            max_rtt: Duration::ZERO,
            alpha: config.alpha_max,
            beta: 0.5,
            rtt_above: false,
            rtt_low: 0,
            da: 0.0,
        }
    }

    /// The underlying RFC 9002 window.
    pub fn reno(&self) -> &RenoWindow {
        &self.window
    }

    /// Current `(α, β)`.
    pub fn alpha_beta(&self) -> (f64, f64) {
        (self.alpha, self.beta)
    }

    /// Linux `update_params`, at the end of a round with average RTT `avg`.
    fn update_params(&mut self, avg: Duration) {
        if self.window.cwnd_packets() < self.config.win_thresh {
            self.alpha = 1.0;
            self.beta = 0.5;
            return;
        }
        let base = self.rounds.base().unwrap_or(avg);
        let dm = self.max_rtt.saturating_sub(base).as_secs_f64();
        let da = avg.saturating_sub(base).as_secs_f64();
        self.da = da;
        self.alpha = if da <= self.config.d1 * dm {
            if !self.rtt_above {
                self.config.alpha_max
            } else {
                self.rtt_low = self.rtt_low.saturating_add(1);
                if self.rtt_low < self.config.theta {
                    self.alpha
                } else {
                    self.rtt_low = 0;
                    self.rtt_above = false;
                    self.config.alpha_max
                }
            }
        } else {
            self.rtt_above = true;
            self.config.alpha_of(da, dm)
        };
        self.beta = self.config.beta_of(da, dm);
    }
}

impl PathController for Illinois {
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.window.on_packet_sent(ev);
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        if !ev.packets.is_empty() {
            self.max_rtt = self.max_rtt.max(ev.rtt.latest.max(MIN_RTT_SAMPLE));
        }
        if let Some(stats) = self.rounds.on_ack(ev) {
            self.update_params(stats.avg);
        }
        let alpha = self.alpha;
        self.window.on_ack(ev, |w, p| alpha * w.reno_increase(p));
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        self.window.on_congestion(ev, 1.0 - self.beta);
        if ev.persistent_congestion {
            self.alpha = 1.0;
            self.beta = 0.5;
            self.rtt_low = 0;
            self.rtt_above = false;
            self.rounds.restart(ev.now);
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
                name: "avg_queue_delay",
                value: self.da,
            },
            Metric {
                name: "base_rtt",
                value: self.rounds.base().map_or(0.0, |d| d.as_secs_f64()),
            },
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PathId;
    use crate::test_support::{ack, build_spec, close, loss, ms, persistent_loss, t0};

    #[test]
    fn alpha_and_beta_as_functions_of_queueing_delay() {
        let c = IllinoisConfig::default();
        let dm = 0.1; // 100 ms maximum queueing delay: d1 = 1 ms, d2 = 10 ms, d3 = 80 ms.
        assert_eq!(c.alpha_of(0.0, dm), 10.0);
        assert_eq!(c.alpha_of(0.001, dm), 10.0);
        // da = 50 ms: 10·0.099/(0.099 + 0.049·9.7/0.3) = 0.99/1.683333 = 0.588119.
        assert!(close(c.alpha_of(0.05, dm), 0.588_119, 1e-6));
        assert!(close(c.alpha_of(0.1, dm), 0.3, 1e-12));
        assert_eq!(c.beta_of(0.005, dm), 0.125);
        // da = 45 ms: 0.125 + 0.375·(45 − 10)/(80 − 10) = 0.3125.
        assert!(close(c.beta_of(0.045, dm), 0.3125, 1e-12));
        assert_eq!(c.beta_of(0.08, dm), 0.5);
        assert_eq!(c.beta_of(0.09, dm), 0.5);
        // No queueing at all (dm = 0): fastest increase, smallest decrease.
        assert_eq!((c.alpha_of(0.0, 0.0), c.beta_of(0.0, 0.0)), (10.0, 0.125));
    }

    /// Slow start to 40 segments (round 1 ends at 100 ms), loss at 150 ms → 20 segments, and a round from
    /// 100 ms to 200 ms with RTTs 100 ms: α = 10, β = 1/8.
    fn setup() -> (Illinois, Instant) {
        let t = t0();
        let mut c = Illinois::new(IllinoisConfig::default(), t, 1000);
        ack(&mut c, t + ms(100), t, 30, 1000, ms(100));
        assert_eq!(c.window(), 40_000);
        // Round 1 ended at a window of 10 segments < 15: Reno's β = 1/2.
        assert_eq!(c.alpha_beta(), (1.0, 0.5));
        c.on_congestion(&loss(t + ms(150), t + ms(100)));
        assert_eq!(c.window(), 20_000);
        round(&mut c, t, 100, &[100, 100, 100]);
        assert_eq!(c.alpha_beta(), (10.0, 0.125));
        (c, t)
    }

    /// A round that began at `start` ms: ACKs at start+10, +20, … of packets sent at start−1 with the given
    /// RTTs, the last one (of a packet sent at `start`) at start+100 ends it.
    fn round(c: &mut Illinois, t: Instant, start: u64, rtts: &[u64]) {
        let (last, inner) = rtts.split_last().unwrap();
        for (i, rtt) in inner.iter().enumerate() {
            ack(
                c,
                t + ms(start + 10 * (i as u64 + 1)),
                t + ms(start - 1),
                1,
                1000,
                ms(*rtt),
            );
        }
        ack(c, t + ms(start + 100), t + ms(start), 1, 1000, ms(*last));
    }

    #[test]
    fn without_queueing_grows_ten_segments_per_rtt_and_backs_off_one_eighth() {
        let (mut c, t) = setup();
        // The round's packets were sent before recovery began: no growth yet. A packet sent at 199 ms ends
        // recovery: + α·1000·1000/20000 = 10·50 = 500 (ten times Reno).
        assert_eq!(c.window(), 20_000);
        ack(&mut c, t + ms(210), t + ms(199), 1, 1000, ms(100));
        assert_eq!(c.window(), 20_500);
        // Loss: cwnd·(1 − 1/8) = 17937.5.
        c.on_congestion(&loss(t + ms(250), t + ms(205)));
        assert!(close(c.reno().cwnd(), 17_937.5, 1e-9));
    }

    #[test]
    fn at_high_queueing_delay_alpha_is_min_and_loss_halves_then_theta_rounds_to_recover() {
        let (mut c, t) = setup();
        // Round from 200 ms with RTTs 200 ms: base 100, max 200 → dm = 100 ms, da = 100 ms ≥ d3 = 80 ms.
        round(&mut c, t, 200, &[200, 200, 200]);
        let (alpha, beta) = c.alpha_beta();
        assert!(close(alpha, 0.3, 1e-12) && beta == 0.5, "{alpha} {beta}");
        let mut lossy = c.clone();
        let before = lossy.reno().cwnd();
        lossy.on_congestion(&loss(t + ms(310), t + ms(305)));
        assert!(close(lossy.reno().cwnd(), before * 0.5, 1e-9));
        // Rounds without queueing: β = 1/8 at once, α stays 0.3 for θ − 1 = 4 rounds, 10 on the 5th.
        for (i, start) in [300, 400, 500, 600].into_iter().enumerate() {
            round(&mut c, t, start, &[100, 100, 100]);
            let (alpha, beta) = c.alpha_beta();
            assert!(
                close(alpha, 0.3, 1e-12) && beta == 0.125,
                "round {i}: {alpha} {beta}"
            );
        }
        round(&mut c, t, 700, &[100, 100, 100]);
        assert_eq!(c.alpha_beta(), (10.0, 0.125));
    }

    #[test]
    fn persistent_congestion_resets_to_reno_parameters() {
        let (mut c, t) = setup();
        c.on_congestion(&persistent_loss(t + ms(1000), t + ms(500)));
        assert_eq!(c.window(), 2000);
        assert_eq!(c.alpha_beta(), (1.0, 0.5));
    }

    #[test]
    fn from_params_accepts_known_and_rejects_bad_params() {
        let mut cc = build_spec(
            "illinois:alpha_min=0.5,alpha_max=8,beta_min=0.2,beta_max=0.4,win_thresh=10,theta=3,d1=0.02,d2=0.2,d3=0.7",
            from_params,
            PARAMS,
        )
        .unwrap();
        cc.on_path_added(PathId(0), t0(), 1200);
        assert_eq!(cc.window(PathId(0)), 12_000);
        for bad in [
            "illinois:alpha_min=20",
            "illinois:beta_min=0.6",
            "illinois:d1=0.5",
            "illinois:theta=0",
        ] {
            assert!(
                matches!(
                    build_spec(bad, from_params, PARAMS),
                    Err(CcError::Spec(crate::SpecError::BadValue { .. }))
                ),
                "{bad}"
            );
        }
        assert!(matches!(
            build_spec("illinois:d4=1", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::UnknownParameter { .. }))
        ));
    }
}
