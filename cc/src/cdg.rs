//! CDG, the CAIA Delay-Gradient algorithm (David A. Hayes, Grenville Armitage, "Revisiting TCP Congestion
//! Control using Delay Gradients", IFIP Networking 2011; Linux `net/ipv4/tcp_cdg.c`, whose behaviour this
//! module follows) as a single-path [`PathController`], run uncoupled per path.
//!
//! CDG reacts to the *gradient* of the delay rather than to its level: once per round trip it compares the
//! smallest and the largest RTT of the round with those of the previous round. A rising minimum means a
//! queue is building; CDG then backs off **with a probability** that grows with the gradient, so that flows
//! sharing a queue do not all back off together. Two heuristics let it coexist with loss-based flows: a
//! shadow window remembers the window that delay backoffs gave up, and backoffs that do not lower the delay
//! are recognised as ineffective and stopped.
//!
//! **As implemented** (RTTs in nanoseconds, windows in bytes, `mss` the path's maximum datagram size):
//! * Every ACK with an RTT sample updates the round's `rtt_min` and `rtt_max`, also during recovery.
//! * **Once per round** (an ACK, outside recovery, of a packet sent at or after the round began; the round
//!   that follows begins then), if the round has samples and the previous one had too: `g_min = rtt_min −
//!   rtt_min_prev`, `g_max = rtt_max − rtt_max_prev`, pushed into a ring of the last `window` gradients whose
//!   sums `G_min`, `G_max` are kept. The gradient is `grad = G_min` if `G_min > 0`, else `G_max`; until the
//!   ring has filled once, `grad = grad·window/n` with `n` gradients in it (extrapolation). The paper's
//!   smoothed gradient is `g = grad/window` (the mean of the window's gradients).
//! * **Probabilistic backoff**: if `grad > 0`, back off with probability `P = 1 − e^(−g/G)` (`G` = 3 ms;
//!   Linux writes it `1 − e^(−grad·backoff_factor)` with `backoff_factor = 1000/(G·window)` rounded to 42,
//!   i.e. `G` = 2.976 ms), drawn from a SplitMix64 generator seeded with `seed` and the path's index.
//! * **Ineffective backoff** (`use_ineff` = 5, 0 to disable): every backoff drawn counts; after more than
//!   `use_ineff` of them the delay signal is ignored until a gradient sum `G_min` or `G_max` of −32 µs or less
//!   shows a backoff lowered the delay, which zeroes the count.
//! * **Backoff**: `shadow = max(shadow, cwnd)`, then a window reduction (Linux's `TCP_CA_CWR`) as a new RFC
//!   9002 recovery period starting now: `ssthresh = cwnd·backoff_beta` (`backoff_beta` = 724/1024 =
//!   0.70703125, Linux's integer form of 0.7071 ≈ √½),
//!   `cwnd = max(ssthresh, 2·mss)`. That ACK does not grow the window.
//! * **End of a recovery period** (Linux's `CA_EVENT_COMPLETE_CWR`, after a backoff or a loss): the state
//!   becomes unknown and a new round begins, with the samples collected during the recovery as the previous
//!   round's.
//! * **Growth**: NewReno (RFC 9002 slow start and congestion avoidance); every byte of growth also grows the
//!   shadow window. An application-limited ACK does not grow the window and lowers the shadow window to it.
//! * **Loss** (a new recovery period, ECN-CE included): `ssthresh` is `cwnd·backoff_beta` during a backoff's
//!   reduction; `cwnd` itself (no reduction) if `use_tolerance` and the queue was judged not full; otherwise
//!   `shadow = min(shadow/2, cwnd)` and `ssthresh = max(2·mss, shadow, cwnd/2)` with `use_shadow` (default),
//!   `max(2·mss, cwnd/2)` without; the window drops to it.
//! * **Loss tolerance** (`use_tolerance`, default off): gradient sums rounded to 64 µs units; `G_min > 0`
//!   and `G_max ≤ 0` mark the queue full, `G_min > 0` and `G_max > 0`, or `G_max < 0`, not full.
//!
//! Defaults are Linux's: `window` 8, `backoff_beta` 724/1024, `use_ineff` 5, `use_shadow` on, `use_tolerance`
//! off; `g` is the paper's 3 ms.
//!
//! Deviations from Linux:
//! * Slow start is RFC 9002's, without HyStart (Linux runs a HyStart variant in slow start), and without
//!   Hayes's delayed-ACK filter (QUIC acknowledgement frames carry many packets; every ACK's latest RTT
//!   counts).
//! * Rounds are delimited as in [`crate::vegas`] (QUIC has no `snd_nxt`); the backoff reduction is
//!   immediate, not spread by proportional rate reduction.
//! * Real-valued probability and windows; RTTs are integer nanoseconds, so the gradient sums are exact.
//! * After persistent congestion (the window collapses and recovery ends at once, RFC 9002 §7.6.2) the state
//!   is reset as at the end of a recovery period.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::bbr::rng::SplitMix64;
use crate::params::Params;
use crate::window::DEFAULT_MAX_WINDOW;
use crate::{
    AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathController,
    PathControllerFactory, RenoWindow, SentEvent, Uncoupled,
};

/// Registry name.
pub const NAME: &str = "cdg";

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &[
    "window",
    "g",
    "backoff_beta",
    "use_ineff",
    "use_shadow",
    "use_tolerance",
    "seed",
    "max_window",
];

/// Largest gradient window (Linux: a power of two ≤ 256).
pub const MAX_GRADIENT_WINDOW: u64 = 256;

/// A gradient sum at or below this (−32 µs) shows that a backoff lowered the delay.
const EFFECTUAL_NS: i64 = -32_000;

/// The rounding unit of the loss-tolerance heuristic (64 µs).
const TOLERANCE_UNIT_NS: f64 = 64_000.0;

/// Builds the controller from registry parameters (consumes the keys it knows; the registry rejects the rest).
///
/// * `window`: gradients averaged, a power of two in `[1, 256]` (default 8);
/// * `g`: the scale `G` of the backoff probability in milliseconds, in `[0.001, 10^6]` (default 3);
/// * `backoff_beta`: window kept by a delay backoff, in `[0.01, 1]` (default 724/1024 = 0.70703125);
/// * `use_ineff`: backoffs without effect before the delay signal is ignored, in `[0, 65535]` (default 5;
///   0 disables the heuristic);
/// * `use_shadow` (default on), `use_tolerance` (default off): the two loss heuristics;
/// * `seed`: seed of the backoff generator (default 0); `max_window`: largest window in bytes.
pub fn from_params(params: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
    Ok(Box::new(Uncoupled::new(CdgFactory::new(CdgConfig::from_params(
        params,
    )?))))
}

/// CDG's configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CdgConfig {
    /// Number of gradients averaged (power of two, 1 to 256).
    pub window: usize,
    /// The scale `G` of `P = 1 − e^(−g/G)`.
    pub g: Duration,
    /// Window kept by a delay backoff.
    pub backoff_beta: f64,
    /// Ineffective-backoff threshold (0: off).
    pub use_ineff: u32,
    /// Shadow-window heuristic on loss.
    pub use_shadow: bool,
    /// Loss-tolerance heuristic.
    pub use_tolerance: bool,
    /// Seed of the backoff generator.
    pub seed: u64,
    /// Largest window, bytes.
    pub max_window: u64,
}

impl Default for CdgConfig {
    fn default() -> Self {
        CdgConfig {
            window: 8,
            g: Duration::from_millis(3),
            backoff_beta: 724.0 / 1024.0,
            use_ineff: 5,
            use_shadow: true,
            use_tolerance: false,
            seed: 0,
            max_window: DEFAULT_MAX_WINDOW,
        }
    }
}

impl CdgConfig {
    /// Reads the parameters listed in [`from_params`].
    pub fn from_params(params: &mut Params) -> Result<CdgConfig, CcError> {
        let d = CdgConfig::default();
        let window = params.u64("window", d.window as u64, 1, MAX_GRADIENT_WINDOW)?;
        if !window.is_power_of_two() {
            return Err(CcError::Spec(crate::SpecError::BadValue {
                name: NAME.to_string(),
                key: "window".to_string(),
                value: window.to_string(),
                expected: "a power of two in [1, 256]".to_string(),
            }));
        }
        let g_ms = params.f64("g", 3.0, 0.001, 1e6)?;
        Ok(CdgConfig {
            window: usize::try_from(window).unwrap_or(d.window),
            g: Duration::from_secs_f64(g_ms / 1000.0),
            backoff_beta: params.f64("backoff_beta", d.backoff_beta, 0.01, 1.0)?,
            use_ineff: u32::try_from(params.u64("use_ineff", u64::from(d.use_ineff), 0, 65_535)?)
                .unwrap_or(d.use_ineff),
            use_shadow: params.bool("use_shadow", d.use_shadow)?,
            use_tolerance: params.bool("use_tolerance", d.use_tolerance)?,
            seed: params.u64("seed", d.seed, 0, u64::MAX)?,
            max_window: params.u64("max_window", d.max_window, 1, DEFAULT_MAX_WINDOW)?,
        })
    }
}

/// Builds one [`Cdg`] per path; the n-th path's generator is seeded with `(seed, n)`.
#[derive(Debug)]
pub struct CdgFactory {
    config: CdgConfig,
    built: AtomicU64,
}

impl CdgFactory {
    /// A factory for `config`.
    pub fn new(config: CdgConfig) -> Self {
        CdgFactory {
            config,
            built: AtomicU64::new(0),
        }
    }
}

impl PathControllerFactory for CdgFactory {
    type Controller = Cdg;

    fn name(&self) -> &'static str {
        NAME
    }

    fn build(&self, now: Instant, max_datagram_size: u16) -> Cdg {
        let index = self.built.fetch_add(1, Ordering::Relaxed);
        Cdg::new(self.config, now, max_datagram_size, index)
    }
}

/// CDG's view of the bottleneck queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CdgState {
    /// Nothing known (after a reduction ends).
    Unknown,
    /// The queue is not full (loss tolerance).
    NonFull,
    /// The queue is full (loss tolerance).
    Full,
    /// A delay backoff's reduction is under way.
    Backoff,
}

impl CdgState {
    fn code(self) -> f64 {
        match self {
            CdgState::Unknown => 0.0,
            CdgState::NonFull => 1.0,
            CdgState::Full => 2.0,
            CdgState::Backoff => 3.0,
        }
    }
}

/// A minimum and a maximum RTT (or their gradients), nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct MinMax {
    min: i64,
    max: i64,
}

/// `P = 1 − e^(−g/G)` with `g = grad/window` for a gradient `grad` (the window's sum, extrapolated).
pub fn backoff_probability(grad: Duration, window: usize, g: Duration) -> f64 {
    let x = grad.as_secs_f64() / (window.max(1) as f64 * g.as_secs_f64());
    if x.is_nan() { 0.0 } else { 1.0 - (-x).exp() }
}

/// One path's CDG controller.
#[derive(Clone, Debug)]
pub struct Cdg {
    config: CdgConfig,
    window: RenoWindow,
    rng: SplitMix64,
    state: CdgState,
    /// The current round's RTT range (`None`: no sample yet).
    rtt: Option<MinMax>,
    rtt_prev: Option<MinMax>,
    gradients: Vec<MinMax>,
    gsum: MinMax,
    tail: usize,
    gfilled: bool,
    round_start: Instant,
    shadow: f64,
    backoff_cnt: u32,
    /// Smoothed gradient `grad/window` of the latest round, nanoseconds, and its backoff probability.
    last_gradient: f64,
    last_probability: f64,
}

impl Cdg {
    /// A controller for the `index`-th path, which starts at `now`.
    pub fn new(config: CdgConfig, now: Instant, max_datagram_size: u16, index: u64) -> Self {
        let window = RenoWindow::with_max_window(max_datagram_size, config.max_window);
        let shadow = window.cwnd();
        let slots = config.window.clamp(1, MAX_GRADIENT_WINDOW as usize);
        Cdg {
            config: CdgConfig {
                window: slots,
                ..config
            },
            window,
            rng: SplitMix64::new(config.seed, index),
            state: CdgState::Unknown,
            rtt: None,
            rtt_prev: None,
            gradients: vec![MinMax::default(); slots],
            gsum: MinMax::default(),
            tail: 0,
            gfilled: false,
            round_start: now,
            shadow,
            backoff_cnt: 0,
            last_gradient: 0.0,
            last_probability: 0.0,
        }
    }

    /// The underlying RFC 9002 window.
    pub fn reno(&self) -> &RenoWindow {
        &self.window
    }

    /// The shadow window, bytes.
    pub fn shadow_window(&self) -> f64 {
        self.shadow
    }

    /// The queue state.
    pub fn cdg_state(&self) -> CdgState {
        self.state
    }

    /// Backoffs counted since the last effectual one.
    pub fn backoff_count(&self) -> u32 {
        self.backoff_cnt
    }

    fn add_sample(&mut self, rtt: Duration) {
        let ns = i64::try_from(rtt.as_nanos()).unwrap_or(i64::MAX);
        if ns <= 0 {
            return;
        }
        self.rtt = Some(match self.rtt {
            None => MinMax { min: ns, max: ns },
            Some(r) => MinMax {
                min: r.min.min(ns),
                max: r.max.max(ns),
            },
        });
    }

    /// `tcp_cdg_grad`: pushes this round's gradients and returns `grad` in nanoseconds.
    fn gradient(&mut self, rtt: MinMax, prev: MinMax) -> i64 {
        let g = MinMax {
            min: rtt.min.saturating_sub(prev.min),
            max: rtt.max.saturating_sub(prev.max),
        };
        let window = self.gradients.len().max(1);
        let slot = self.gradients.get(self.tail).copied().unwrap_or_default();
        self.gsum.min = self.gsum.min.saturating_add(g.min).saturating_sub(slot.min);
        self.gsum.max = self.gsum.max.saturating_add(g.max).saturating_sub(slot.max);
        if let Some(s) = self.gradients.get_mut(self.tail) {
            *s = g;
        }
        self.tail = (self.tail + 1) % window;
        let (gmin, gmax) = (self.gsum.min, self.gsum.max);
        let mut grad = if gmin > 0 { gmin } else { gmax };
        if !self.gfilled {
            if self.tail == 0 {
                self.gfilled = true;
            } else {
                // Extrapolate the missing values of the window.
                grad = grad.saturating_mul(window as i64) / self.tail as i64;
            }
        }
        if gmin <= EFFECTUAL_NS || gmax <= EFFECTUAL_NS {
            // A backoff was effectual: the delay came down.
            self.backoff_cnt = 0;
        }
        if self.config.use_tolerance {
            let (min_u, max_u) = (
                (gmin as f64 / TOLERANCE_UNIT_NS).round(),
                (gmax as f64 / TOLERANCE_UNIT_NS).round(),
            );
            if min_u > 0.0 && max_u <= 0.0 {
                self.state = CdgState::Full;
            } else if (min_u > 0.0 && max_u > 0.0) || max_u < 0.0 {
                self.state = CdgState::NonFull;
            }
        }
        grad
    }

    /// `tcp_cdg_backoff`: draws the backoff; on success reduces the window (a new recovery period).
    fn backoff(&mut self, ev: &AckEvent<'_>, grad: i64) -> bool {
        let grad = Duration::from_nanos(u64::try_from(grad).unwrap_or(0));
        let p = backoff_probability(grad, self.gradients.len(), self.config.g);
        self.last_probability = p;
        // A uniform number in [0, 1): back off when it is not below e^(−x) = 1 − P.
        let u = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        if u < 1.0 - p {
            return false;
        }
        let reduction = CongestionEvent {
            path: ev.path,
            now: ev.now,
            sent_time: ev.now,
            lost_bytes: 0,
            bytes_in_flight: ev.bytes_in_flight,
            persistent_congestion: false,
            ecn: true,
            rtt: ev.rtt,
        };
        if !self.window.will_reduce(&reduction) {
            return false;
        }
        if self.config.use_ineff > 0 {
            self.backoff_cnt = self.backoff_cnt.saturating_add(1);
            if self.backoff_cnt > self.config.use_ineff {
                return false;
            }
        }
        self.shadow = self.shadow.max(self.window.cwnd());
        self.state = CdgState::Backoff;
        self.window.on_congestion(&reduction, self.config.backoff_beta);
        self.window.on_ack(ev, |_, _| 0.0);
        true
    }

    /// `CA_EVENT_COMPLETE_CWR`: a new round whose predecessor is what recovery collected.
    fn complete_reduction(&mut self, now: Instant) {
        self.state = CdgState::Unknown;
        self.round_start = now;
        self.rtt_prev = self.rtt.take().or(self.rtt_prev);
    }

    /// `tcp_cdg_ssthresh`: the threshold a congestion signal sets, bytes.
    fn loss_ssthresh(&mut self) -> f64 {
        let cwnd = self.window.cwnd();
        let two = 2.0 * self.window.max_datagram_size() as f64;
        if self.state == CdgState::Backoff {
            return (cwnd * self.config.backoff_beta).max(two);
        }
        if self.state == CdgState::NonFull && self.config.use_tolerance {
            return cwnd;
        }
        self.shadow = (self.shadow / 2.0).min(cwnd);
        if self.config.use_shadow {
            two.max(self.shadow).max(cwnd / 2.0)
        } else {
            two.max(cwnd / 2.0)
        }
    }
}

impl PathController for Cdg {
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.window.on_packet_sent(ev);
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        if !ev.packets.is_empty() {
            self.add_sample(ev.rtt.latest);
        }
        if self.window.in_recovery() {
            self.window.on_ack(ev, |_, _| 0.0);
            if !self.window.in_recovery() {
                self.complete_reduction(ev.now);
            }
            return;
        }
        let round_end = ev.largest_time_sent().is_some_and(|t| t >= self.round_start);
        if round_end && let Some(rtt) = self.rtt {
            let grad = self.rtt_prev.map(|prev| self.gradient(rtt, prev));
            self.round_start = ev.now;
            self.rtt_prev = self.rtt.take();
            if let Some(grad) = grad {
                self.last_gradient = grad as f64 / self.gradients.len().max(1) as f64;
                if grad > 0 && self.backoff(ev, grad) {
                    return;
                }
            }
        }
        if ev.app_limited {
            self.shadow = self.shadow.min(self.window.cwnd());
            self.window.on_ack(ev, |_, _| 0.0);
            return;
        }
        let before = self.window.cwnd();
        self.window.on_ack(ev, RenoWindow::reno_increase);
        let incr = self.window.cwnd() - before;
        if incr > 0.0 {
            self.shadow += incr;
        }
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        if !self.window.will_reduce(ev) {
            if ev.persistent_congestion {
                self.window.on_congestion(ev, 1.0);
                self.complete_reduction(ev.now);
            } else {
                self.window.on_congestion(ev, 1.0);
            }
            return;
        }
        let cwnd = self.window.cwnd();
        let target = self.loss_ssthresh();
        let beta = if cwnd > 0.0 { target / cwnd } else { 1.0 };
        self.window.on_congestion(ev, beta);
        self.window.set_ssthresh(target);
        if ev.persistent_congestion {
            self.complete_reduction(ev.now);
        } else {
            self.window.set_cwnd(target);
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
                name: "gradient",
                value: self.last_gradient / 1e9,
            },
            Metric {
                name: "backoff_probability",
                value: self.last_probability,
            },
            Metric {
                name: "shadow_wnd",
                value: self.shadow,
            },
            Metric {
                name: "backoff_cnt",
                value: f64::from(self.backoff_cnt),
            },
            Metric {
                name: "cdg_state",
                value: self.state.code(),
            },
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Spec;
    use crate::test_support::{ms, t0};
    use crate::{AckedPacket, PathId, RttSnapshot};

    const MSS: u16 = 1000;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6 * b.abs().max(1.0)
    }

    fn cdg(spec: &str, t0: Instant) -> Cdg {
        let s = Spec::parse(spec, "algorithm").unwrap();
        let mut p = Params::new(&s.name, s.params);
        let config = CdgConfig::from_params(&mut p).unwrap();
        p.finish(PARAMS).unwrap();
        Cdg::new(config, t0, MSS, 0)
    }

    /// An ACK at t0 + `now` ms of one 1000-byte packet sent at t0 + `sent` ms with an RTT of `rtt` ms.
    fn ack_at(c: &mut Cdg, t0: Instant, now: u64, sent: u64, rtt: u64, app_limited: bool) {
        let p = [AckedPacket {
            bytes: 1000,
            time_sent: t0 + ms(sent),
        }];
        c.on_ack(&AckEvent {
            path: PathId(0),
            now: t0 + ms(now),
            rtt: RttSnapshot::from_rtt(ms(rtt)),
            packets: &p,
            prior_bytes_in_flight: 1000,
            bytes_in_flight: 0,
            app_limited,
            rate_sample: None,
        });
    }

    fn ack(c: &mut Cdg, t0: Instant, now: u64, sent: u64, rtt: u64) {
        ack_at(c, t0, now, sent, rtt, false);
    }

    fn loss(c: &mut Cdg, t0: Instant, now: u64, sent: u64) {
        c.on_congestion(&CongestionEvent {
            path: PathId(0),
            now: t0 + ms(now),
            sent_time: t0 + ms(sent),
            lost_bytes: 1000,
            bytes_in_flight: 0,
            persistent_congestion: false,
            ecn: false,
            rtt: RttSnapshot::from_rtt(ms(100)),
        });
    }

    #[test]
    fn backoff_probability_by_hand() {
        // g = grad/window: 32 ms/8 = 4 ms → P = 1 − e^(−4/3) = 0.736403; 24 ms/8 = 3 ms → 1 − e^(−1) =
        // 0.632121; nothing for a zero gradient.
        assert!(close(backoff_probability(ms(32), 8, ms(3)), 0.736_402_861_9));
        assert!(close(backoff_probability(ms(24), 8, ms(3)), 0.632_120_558_8));
        assert_eq!(backoff_probability(Duration::ZERO, 8, ms(3)), 0.0);
    }

    /// Round 1 (one sample of 100 ms at 100 ms), round 2 with samples 104, 118 and 110 ms ending at 200 ms.
    fn two_rounds(c: &mut Cdg, t0: Instant) {
        ack(c, t0, 100, 0, 100);
        ack(c, t0, 110, 10, 104);
        ack(c, t0, 120, 20, 118);
        ack(c, t0, 200, 100, 110);
    }

    #[test]
    fn gradient_backoff_and_shadow_window_by_hand() {
        let t0 = t0();
        for shadow in [true, false] {
            // G = 1 µs makes P = 1 − e^(−4000) = 1: every positive gradient backs off.
            let mut c = cdg(&format!("cdg:g=0.001,use_shadow={shadow}"), t0);
            assert_eq!(c.shadow_window(), 10_000.0);
            // Slow start: 10 000 + 3 packets = 13 000 before round 2 ends; the shadow window follows.
            // Round 2: rtt_min 104 − 100 = +4 ms, rtt_max 118 − 100 = +18 ms. One gradient in a window of 8:
            // grad = G_min = 4 ms extrapolated ×8/1 = 32 ms; smoothed g = 4 ms. Backoff: shadow =
            // max(13 000, 13 000); cwnd = ssthresh = 13 000·724/1024 = 9191.40625.
            two_rounds(&mut c, t0);
            let m = c.metrics();
            assert!(close(m.extra("gradient").unwrap(), 0.004));
            assert_eq!(m.extra("backoff_probability"), Some(1.0));
            assert_eq!(m.extra("cdg_state"), Some(3.0)); // backoff
            assert!(close(c.reno().cwnd(), 9_191.406_25));
            assert_eq!(c.shadow_window(), 13_000.0);
            assert_eq!(c.backoff_count(), 1);
            // The reduction lasts until a packet sent after it is acknowledged (at 300 ms); no growth before.
            ack(&mut c, t0, 210, 150, 105);
            assert!(close(c.reno().cwnd(), 9_191.406_25));
            ack(&mut c, t0, 300, 201, 106);
            assert_eq!(c.cdg_state(), CdgState::Unknown);
            assert!(close(c.reno().cwnd(), 9_191.406_25));
            // A loss: shadow = min(13 000/2, 9191.40625) = 6500; ssthresh = max(2000, 6500,
            // 9191.40625/2 = 4595.703125) = 6500 with the shadow window, 4595.703125 without.
            loss(&mut c, t0, 310, 305);
            let expected = if shadow { 6500.0 } else { 4_595.703_125 };
            assert!(close(c.reno().cwnd(), expected), "{shadow}: {}", c.reno().cwnd());
            assert!(close(c.reno().ssthresh(), expected));
            assert_eq!(c.shadow_window(), 6500.0);
        }
        // An application-limited ACK lowers the shadow window to the window: after the backoff above,
        // 13 000 → 9191.40625.
        let mut c = cdg("cdg:g=0.001", t0);
        two_rounds(&mut c, t0);
        ack(&mut c, t0, 300, 201, 106);
        ack_at(&mut c, t0, 310, 205, 106, true);
        assert!(close(c.shadow_window(), 9_191.406_25));
        assert!(close(c.reno().cwnd(), 9_191.406_25));
    }

    #[test]
    fn ineffective_backoffs_are_ignored_until_the_delay_falls() {
        let t0 = t0();
        // One gradient per window (window = 1): grad = this round's gradient; G = 1 µs: P = 1.
        let mut c = cdg("cdg:window=1,g=0.001", t0);
        ack(&mut c, t0, 100, 0, 100); // round 1: 100 ms
        // Round i ends at 100 + 100·i ms with RTT 100 + i ms: gradient +1 ms. A backoff's reduction ends on
        // the ACK 10 ms later (same RTT), which makes that RTT the previous round's.
        let cycle = |c: &mut Cdg, i: u64, rtt: u64| -> bool {
            let t = 100 + 100 * i;
            ack(c, t0, t, t - 50, rtt);
            let backed_off = c.reno().in_recovery();
            if backed_off {
                ack(c, t0, t + 10, t + 5, rtt);
                assert!(!c.reno().in_recovery());
            }
            backed_off
        };
        for i in 1..=5 {
            assert!(cycle(&mut c, i, 100 + i), "{i}");
            assert_eq!(c.backoff_count(), i as u32);
        }
        // The sixth backoff in a row exceeds use_ineff = 5: ignored, the window grows instead.
        let w = c.reno().cwnd();
        assert!(!cycle(&mut c, 6, 106));
        assert_eq!(c.backoff_count(), 6);
        assert!(c.reno().cwnd() > w);
        // The delay falls by 1 ms: G_min = G_max = −1 ms ≤ −32 µs → the count is reset; grad < 0: no backoff.
        assert!(!cycle(&mut c, 7, 105));
        assert_eq!(c.backoff_count(), 0);
        // Rising again: backoffs resume.
        assert!(cycle(&mut c, 8, 106));
        assert_eq!(c.backoff_count(), 1);
        // With use_ineff = 0 there is no limit.
        let mut c = cdg("cdg:window=1,g=0.001,use_ineff=0", t0);
        ack(&mut c, t0, 100, 0, 100);
        for i in 1..=8 {
            let t = 100 + 100 * i;
            ack(&mut c, t0, t, t - 50, 100 + i);
            assert!(c.reno().in_recovery(), "{i}");
            ack(&mut c, t0, t + 10, t + 5, 100 + i);
        }
    }

    #[test]
    fn backoffs_happen_with_the_computed_probability() {
        // The first gradient of two_rounds (32 ms extrapolated in a window of 8) with G = 3 ms backs off with
        // P = 1 − e^(−4/3) = 0.7364. Over 2000 paths (2000 generator streams) the share that backs off is
        // within 3 standard deviations (√(0.7364·0.2636/2000) = 0.0099) of it.
        let t0 = t0();
        let factory = CdgFactory::new(CdgConfig::default());
        let mut backed_off = 0;
        for _ in 0..2000 {
            let mut c = factory.build(t0, MSS);
            two_rounds(&mut c, t0);
            assert!(close(
                c.metrics().extra("backoff_probability").unwrap(),
                0.736_402_861_9
            ));
            if c.reno().in_recovery() {
                backed_off += 1;
                assert!(close(c.reno().cwnd(), 9_191.406_25));
            } else {
                assert_eq!(c.reno().cwnd(), 14_000.0); // grew instead
            }
        }
        let share = f64::from(backed_off) / 2000.0;
        assert!((share - 0.7364).abs() < 0.03, "{share}");
        // Deterministic: the same seed and path index give the same decision.
        let (mut a, mut b) = (
            CdgFactory::new(CdgConfig::default()).build(t0, MSS),
            CdgFactory::new(CdgConfig::default()).build(t0, MSS),
        );
        two_rounds(&mut a, t0);
        two_rounds(&mut b, t0);
        assert_eq!(a.reno().cwnd().to_bits(), b.reno().cwnd().to_bits());
    }

    #[test]
    fn loss_tolerance_keeps_the_window_when_the_queue_is_not_full() {
        let t0 = t0();
        for (tolerance, expected) in [(true, 14_000.0), (false, 7000.0)] {
            let mut c = cdg(&format!("cdg:window=1,use_tolerance={tolerance}"), t0);
            // Round 1: 110 ms. Round 2: 100, 108, 105 ms → G_min = −10 ms, G_max = −2 ms: no backoff
            // (grad = G_max < 0); in 64 µs units both are negative → not full. Slow start: 14 000.
            ack(&mut c, t0, 100, 0, 110);
            ack(&mut c, t0, 110, 10, 100);
            ack(&mut c, t0, 120, 20, 108);
            ack(&mut c, t0, 200, 100, 105);
            assert_eq!(c.reno().cwnd(), 14_000.0);
            // Loss: with tolerance, ssthresh = cwnd (no reduction); without, shadow = min(14 000/2, 14 000)
            // = 7000 and ssthresh = max(2000, 7000, 7000).
            loss(&mut c, t0, 210, 205);
            assert_eq!(c.reno().cwnd(), expected, "{tolerance}");
            let state = if tolerance { 1.0 } else { 0.0 };
            assert_eq!(c.metrics().extra("cdg_state"), Some(state));
        }
    }

    #[test]
    fn from_params_accepts_and_rejects() {
        let parse = |s: &str| Params::new("cdg", Spec::parse(s, "algorithm").unwrap().params);
        let mut p = parse(
            "cdg:window=16,g=2.5,backoff_beta=0.8,use_ineff=3,use_shadow=off,use_tolerance=on,seed=4,\
             max_window=100000",
        );
        let config = CdgConfig::from_params(&mut p).unwrap();
        p.finish(PARAMS).unwrap();
        assert_eq!(config.window, 16);
        assert_eq!(config.g, Duration::from_micros(2500));
        assert!(from_params(&mut Params::empty("cdg")).is_ok());
        for bad in [
            "cdg:window=6",
            "cdg:window=512",
            "cdg:window=0",
            "cdg:g=0",
            "cdg:backoff_beta=1.5",
            "cdg:use_ineff=-1",
            "cdg:use_shadow=maybe",
            "cdg:max_window=0",
        ] {
            assert!(
                matches!(
                    from_params(&mut parse(bad)),
                    Err(CcError::Spec(crate::SpecError::BadValue { .. }))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn zero_rtts_and_persistent_congestion_are_harmless() {
        let t0 = t0();
        let mut c = cdg("cdg", t0);
        for i in 1..50 {
            ack(&mut c, t0, 10 * i, 10 * i - 5, 0);
        }
        c.on_congestion(&CongestionEvent {
            path: PathId(0),
            now: t0 + ms(600),
            sent_time: t0 + ms(590),
            lost_bytes: 1000,
            bytes_in_flight: 0,
            persistent_congestion: true,
            ecn: false,
            rtt: RttSnapshot::from_rtt(ms(100)),
        });
        assert_eq!(c.reno().cwnd(), 2000.0);
        assert!(!c.reno().in_recovery());
        let m = c.metrics();
        assert!(m.extras.iter().all(|e| e.value.is_finite()), "{m:?}");
    }
}
