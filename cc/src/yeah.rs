//! YeAH-TCP (Baiocchi, Castellani, Vacirca, "YeAH-TCP: Yet Another Highspeed TCP", PFLDnet 2007; Linux
//! `net/ipv4/tcp_yeah.c`) as a single-path [`PathController`], run uncoupled per path.
//!
//! YeAH switches between a *fast* mode, where it grows like Scalable TCP, and a *slow* mode, where it grows
//! like Reno, according to a Vegas-style estimate of its own packets queued at the bottleneck. When that queue
//! exceeds `Q_max` it removes it without waiting for a loss (precautionary decongestion), and at a loss it
//! removes only the queue it estimates instead of halving, unless it has been competing with Reno flows.
//!
//! Formulas, once per round trip from the round's RTT samples (`RTT_min` = the round's smallest, `RTT_base` =
//! the smallest ever; windows in segments of `mss` = `max_datagram_size`):
//! * `Q = cwnd·(RTT_min − RTT_base)/RTT_min` (segments queued), `L = (RTT_min − RTT_base)/RTT_base`;
//! * slow mode if `Q > Q_max` or `L > 1/φ`: if also `Q > Q_max` and `cwnd > reno_count`, precautionary
//!   decongestion `cwnd −= min(Q/γ, cwnd/2^ε)`, `cwnd = max(cwnd, reno_count)`, `ssthresh = cwnd`; then
//!   `reno_count = max(cwnd/2, 2)` if `reno_count ≤ 2` else `reno_count + 1`, and `doing_reno_now += 1`;
//! * fast mode otherwise: `fast_count += 1` (after more than `ζ` fast rounds `reno_count = 2`),
//!   `doing_reno_now = 0`;
//! * increase per acknowledged packet of `bytes` in congestion avoidance: fast mode
//!   `cwnd += mss·bytes/min(cwnd, 100·mss)` (Scalable TCP, [`crate::scalable`]), slow mode Reno's
//!   `mss·bytes/cwnd`;
//! * on loss (once per RFC 9002 recovery period): if `doing_reno_now < ρ`, `reduction = max(min(Q_last,
//!   max(cwnd/2, 2)), cwnd/2^δ)`, else `reduction = max(cwnd/2, 2)`; `cwnd = max(cwnd − reduction, 2)`;
//!   `fast_count = 0`, `reno_count = max(reno_count/2, 2)`.
//!
//! Constants (Linux; the paper's defaults): `Q_max = 80` (`TCP_YEAH_ALPHA`), `φ = 8`, `ρ = 16`, `γ = 1`,
//! `ε = 1`, `δ = 3`, `ζ = 50`, Scalable's 100-segment increase counter.
//!
//! Choices:
//! * Rounds: QUIC has no `snd_nxt`, so a round ends with the first ACK of a packet sent after the round began
//!   ([`crate::vegas`]'s rule); a round's statistics are used only if it has more than 2 samples (Linux) and
//!   the path is neither in recovery nor application-limited at its end (Linux runs `cong_avoid` only in the
//!   open state and returns early when not cwnd-limited). Within an ACK the increase comes first, then the
//!   round's rules, as in Linux.
//! * Real-valued windows and queue estimates instead of Linux's integers; the minimum window is RFC 9002's
//!   `2·mss` (`reno_count` is at least 2 segments, so decongestion never goes below it).
//! * ECN-CE is handled as a loss. Persistent congestion collapses the window ([`RenoWindow`]) and starts a new
//!   round. Slow start, the app-limited rule and pacing are RFC 9002's.

use std::time::Instant;

use crate::params::Params;
use crate::round::RttRounds;
use crate::window::DEFAULT_MAX_WINDOW;
use crate::{
    AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathController,
    PathControllerFactory, RenoWindow, SentEvent, Uncoupled,
};

/// Registry name.
pub const NAME: &str = "yeah";

/// Scalable TCP's increase counter in fast mode (Linux `TCP_SCALABLE_AI_CNT`).
const SCALABLE_AI_CNT: f64 = 100.0;

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &[
    "q_max",
    "phi",
    "rho",
    "gamma",
    "epsilon",
    "delta",
    "zeta",
    "max_window",
];

/// Builds the controller from registry parameters.
///
/// * `q_max`: queue threshold in segments, in `[1, 10^6]` (80); `phi` in `[1, 1000]` (8);
/// * `rho`: slow rounds before a loss halves, in `[0, 10^6]` (16); `gamma` in `[1, 1000]` (1);
/// * `epsilon`, `delta`: exponents in `[0, 10]` (1, 3); `zeta`: fast rounds that reset `reno_count` (50);
/// * `max_window`: largest window in bytes.
pub fn from_params(params: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
    Ok(Box::new(Uncoupled::new(YeahConfig::from_params(params)?)))
}

/// YeAH's configuration; also the [`PathControllerFactory`] of [`Yeah`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct YeahConfig {
    /// `Q_max`: largest queue (segments) tolerated in fast mode.
    pub q_max: f64,
    /// `φ`: slow mode when the queueing delay exceeds `RTT_base/φ`.
    pub phi: f64,
    /// `ρ`: slow rounds after which a loss halves.
    pub rho: u64,
    /// `γ`: fraction of the queue removed by decongestion is `1/γ`.
    pub gamma: f64,
    /// `ε`: decongestion removes at most `cwnd/2^ε`.
    pub epsilon: u32,
    /// `δ`: a loss removes at least `cwnd/2^δ`.
    pub delta: u32,
    /// `ζ`: fast rounds after which `reno_count` resets.
    pub zeta: u64,
    /// Largest window in bytes.
    pub max_window: u64,
}

impl Default for YeahConfig {
    fn default() -> Self {
        YeahConfig {
            q_max: 80.0,
            phi: 8.0,
            rho: 16,
            gamma: 1.0,
            epsilon: 1,
            delta: 3,
            zeta: 50,
            max_window: DEFAULT_MAX_WINDOW,
        }
    }
}

impl YeahConfig {
    /// Reads the parameters listed in [`from_params`].
    pub fn from_params(params: &mut Params) -> Result<YeahConfig, CcError> {
        let d = YeahConfig::default();
        let exp = |v: u64| u32::try_from(v).unwrap_or(10);
        Ok(YeahConfig {
            q_max: params.f64("q_max", d.q_max, 1.0, 1e6)?,
            phi: params.f64("phi", d.phi, 1.0, 1000.0)?,
            rho: params.u64("rho", d.rho, 0, 1_000_000)?,
            gamma: params.f64("gamma", d.gamma, 1.0, 1000.0)?,
            epsilon: exp(params.u64("epsilon", u64::from(d.epsilon), 0, 10)?),
            delta: exp(params.u64("delta", u64::from(d.delta), 0, 10)?),
            zeta: params.u64("zeta", d.zeta, 1, 1_000_000)?,
            max_window: params.u64("max_window", DEFAULT_MAX_WINDOW, 1, DEFAULT_MAX_WINDOW)?,
        })
    }
}

impl PathControllerFactory for YeahConfig {
    type Controller = Yeah;

    fn name(&self) -> &'static str {
        NAME
    }

    fn build(&self, now: Instant, max_datagram_size: u16) -> Yeah {
        Yeah::new(*self, now, max_datagram_size)
    }
}

/// One path's YeAH controller.
#[derive(Clone, Debug)]
pub struct Yeah {
    config: YeahConfig,
    window: RenoWindow,
    rounds: RttRounds,
    /// Queue estimate of the last round with enough samples, segments.
    last_q: f64,
    /// Consecutive slow-mode rounds (0 = fast mode).
    doing_reno_now: u64,
    /// Segments; at least 2.
    reno_count: f64,
    fast_count: u64,
}

impl Yeah {
    /// A controller for a path that starts at `now`.
    pub fn new(config: YeahConfig, now: Instant, max_datagram_size: u16) -> Self {
        Yeah {
            config,
            window: RenoWindow::with_max_window(max_datagram_size, config.max_window),
            rounds: RttRounds::new(now),
            last_q: 0.0,
            doing_reno_now: 0,
            reno_count: 2.0,
            fast_count: 0,
        }
    }

    /// The underlying RFC 9002 window.
    pub fn reno(&self) -> &RenoWindow {
        &self.window
    }

    /// Whether the path is in fast (Scalable) mode.
    pub fn fast_mode(&self) -> bool {
        self.doing_reno_now == 0
    }

    /// The queue estimate of the last round, segments.
    pub fn queue(&self) -> f64 {
        self.last_q
    }

    /// `reno_count`, segments.
    pub fn reno_count(&self) -> f64 {
        self.reno_count
    }

    fn end_of_round(&mut self, rtt_min: f64, base: f64) {
        let mss = self.window.max_datagram_size() as f64;
        let cwnd = self.window.cwnd_packets();
        let queue = cwnd * (rtt_min - base) / rtt_min;
        if !queue.is_finite() {
            return;
        }
        let c = self.config;
        if queue > c.q_max || rtt_min - base > base / c.phi {
            if queue > c.q_max && cwnd > self.reno_count {
                let reduction = (queue / c.gamma).min(cwnd / 2f64.powi(c.epsilon as i32));
                let new = (cwnd - reduction).max(self.reno_count);
                self.window.set_cwnd(new * mss);
                self.window.set_ssthresh(self.window.cwnd());
            }
            self.reno_count = if self.reno_count <= 2.0 {
                (self.window.cwnd_packets() / 2.0).max(2.0)
            } else {
                self.reno_count + 1.0
            };
            self.doing_reno_now = self.doing_reno_now.saturating_add(1);
        } else {
            self.fast_count = self.fast_count.saturating_add(1);
            if self.fast_count > c.zeta {
                self.reno_count = 2.0;
                self.fast_count = 0;
            }
            self.doing_reno_now = 0;
        }
        self.last_q = queue;
    }
}

impl PathController for Yeah {
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.window.on_packet_sent(ev);
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        let fast = self.fast_mode();
        self.window.on_ack(ev, |w, p| {
            if fast {
                let mss = w.max_datagram_size() as f64;
                mss * p.bytes as f64 / w.cwnd().min(SCALABLE_AI_CNT * mss)
            } else {
                w.reno_increase(p)
            }
        });
        if let Some(stats) = self.rounds.on_ack(ev)
            && stats.count > 2
            && !ev.app_limited
            && !self.window.in_recovery()
            && let Some(base) = self.rounds.base()
        {
            self.end_of_round(stats.min.as_secs_f64(), base.as_secs_f64());
        }
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        if !self.window.will_reduce(ev) {
            self.window.on_congestion(ev, 1.0);
            return;
        }
        let cwnd = self.window.cwnd_packets();
        let half = (cwnd / 2.0).max(2.0);
        let reduction = if self.doing_reno_now < self.config.rho {
            self.last_q
                .min(half)
                .max(cwnd / 2f64.powi(self.config.delta as i32))
        } else {
            half
        };
        let new = (cwnd - reduction).max(2.0);
        let beta = if cwnd > 0.0 { new / cwnd } else { 0.5 };
        self.fast_count = 0;
        self.reno_count = (self.reno_count / 2.0).max(2.0);
        self.window.on_congestion(ev, beta);
        if ev.persistent_congestion {
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
                name: "queue",
                value: self.last_q,
            },
            Metric {
                name: "fast_mode",
                value: if self.fast_mode() { 1.0 } else { 0.0 },
            },
            Metric {
                name: "reno_count",
                value: self.reno_count,
            },
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PathId;
    use crate::test_support::{ack, build_spec, close, loss, ms, t0};

    /// ACKs at start+10, +20 of packets sent at start−1 and at start+100 of one sent at `start` (ends the round
    /// that began at `start`), with RTTs `rtts`.
    fn round(c: &mut Yeah, t: Instant, start: u64, rtts: [u64; 3]) {
        ack(c, t + ms(start + 10), t + ms(start - 1), 1, 1000, ms(rtts[0]));
        ack(c, t + ms(start + 20), t + ms(start - 1), 1, 1000, ms(rtts[1]));
        ack(c, t + ms(start + 100), t + ms(start), 1, 1000, ms(rtts[2]));
    }

    /// Slow start to 200 segments, a loss with no queue, and a round without queueing (still in recovery).
    fn setup() -> (Yeah, Instant) {
        let t = t0();
        let mut c = Yeah::new(YeahConfig::default(), t, 1000);
        ack(&mut c, t + ms(100), t, 190, 1000, ms(100));
        assert_eq!(c.window(), 200_000);
        // Loss in fast mode with Q_last = 0: reduction = max(min(0, 100), 200/2³) = 25 segments → 175 segments.
        c.on_congestion(&loss(t + ms(150), t + ms(100)));
        assert_eq!(c.window(), 175_000);
        round(&mut c, t, 100, [100, 100, 100]);
        assert_eq!(c.window(), 175_000);
        assert!(c.fast_mode());
        (c, t)
    }

    #[test]
    fn fast_mode_grows_like_scalable_tcp() {
        let (mut c, t) = setup();
        // Each packet: 1000·1000/min(175000, 100000) = 10 bytes (0.01 segment).
        round(&mut c, t, 200, [100, 100, 100]);
        assert_eq!(c.window(), 175_030);
        assert!(c.fast_mode());
        assert_eq!(c.queue(), 0.0);
    }

    #[test]
    fn queueing_delay_above_base_over_phi_switches_to_reno_and_a_loss_removes_the_queue() {
        let (mut c, t) = setup();
        // Three fast-mode ACKs (+10 each) → 175030; the round's RTT_min 120 ms: Q = 175.03·20/120 = 29.171667
        // < 80 but the delay 20 ms > 100/8 ms: slow mode, no decongestion, reno_count = 175.03/2 = 87.515.
        round(&mut c, t, 200, [120, 120, 120]);
        assert_eq!(c.window(), 175_030);
        assert!(!c.fast_mode());
        assert!(close(c.queue(), 29.171_667, 1e-6));
        assert!(close(c.reno_count(), 87.515, 1e-9));
        // Slow mode grows like Reno: + 1000·1000/175030 = 5.713306 → 175035.713306.
        ack(&mut c, t + ms(310), t + ms(299), 1, 1000, ms(120));
        assert!(close(c.reno().cwnd(), 175_035.713_306, 1e-6));
        // Loss after 1 < ρ slow rounds: reduction = max(min(29.171667, 87.52), 175.04/8 = 21.88) = 29.171667
        // segments → 175035.713306 − 29171.667 = 145864.047.
        c.on_congestion(&loss(t + ms(320), t + ms(305)));
        assert!(close(c.reno().cwnd(), 145_864.047, 1e-3), "{}", c.reno().cwnd());
        assert!(close(c.reno_count(), 43.7575, 1e-9)); // max(87.515/2, 2)
    }

    #[test]
    fn a_queue_above_q_max_is_removed_without_a_loss() {
        let (mut c, t) = setup();
        // Round end at 175030 bytes with RTT_min 200 ms: Q = 175.03·100/200 = 87.515 > 80 → decongestion:
        // cwnd −= min(87.515, 175.03/2) → 87.515 segments = ssthresh; reno_count = 87.515/2 = 43.7575.
        round(&mut c, t, 200, [200, 200, 200]);
        assert!(close(c.reno().cwnd(), 87_515.0, 1e-6), "{}", c.reno().cwnd());
        assert!(close(c.reno().ssthresh(), 87_515.0, 1e-6));
        assert!(close(c.reno_count(), 43.7575, 1e-9));
        assert!(!c.fast_mode());
    }

    #[test]
    fn after_rho_slow_rounds_a_loss_halves() {
        let (mut c, t) = setup();
        // 16 slow rounds (delay 20 ms > 12.5 ms, queue < 80): doing_reno_now = 16 = ρ.
        for i in 0..16 {
            round(&mut c, t, 200 + 100 * i, [120, 120, 120]);
        }
        let before = c.reno().cwnd();
        c.on_congestion(&loss(t + ms(1900), t + ms(1850)));
        assert!(close(c.reno().cwnd(), before / 2.0, 1e-9));
    }

    #[test]
    fn from_params_accepts_known_and_rejects_bad_params() {
        let mut cc = build_spec(
            "yeah:q_max=40,phi=4,rho=8,gamma=2,epsilon=2,delta=2,zeta=10,max_window=1000000",
            from_params,
            PARAMS,
        )
        .unwrap();
        let t = t0();
        cc.on_path_added(PathId(0), t, 1000);
        // delta = 2: a loss with no queue removes cwnd/4: 10000 → 7500.
        cc.on_congestion(&loss(t + ms(100), t));
        assert_eq!(cc.window(PathId(0)), 7500);
        assert!(matches!(
            build_spec("yeah:q_max=0", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build_spec("yeah:alpha=80", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::UnknownParameter { .. }))
        ));
    }
}
