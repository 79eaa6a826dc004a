//! wVegas, weighted Vegas (Cao, Xu, Fu, "Delay-based congestion control for multipath TCP", IEEE ICNP 2012;
//! Linux `mptcp_wvegas.c`): a delay-based coupled controller.
//!
//! Every path runs the per-path Vegas machinery of [`crate::vegas::VegasPath`] (rounds, `base_rtt`, `diff`,
//! slow-start exit on `diff > gamma`, queue-drain rule, RFC 9002 halving on loss, clamp to
//! `[2 packets, max_window]`) with the round's **mean** RTT and the drain rule on. The coupling is the
//! congestion-avoidance threshold: one `alpha_r` per path, used for both directions (`diff > alpha_r` → −1
//! packet, `diff < alpha_r` → +1 packet), recomputed when `diff ≥ alpha_r` as
//! `alpha_r = max(2, weight_r · total_alpha)`, `weight_r = rate_r / Σ_k rate_k`, `rate_r = cwnd_r / rtt_r`
//! (bytes/s, with the round's mean RTT, measured before the ±1 step).
//!
//! As in Linux:
//! * `alpha_r` starts at `initial_alpha`, `weight_r` at 1, and `alpha_r` is recomputed only when
//!   `diff ≥ alpha_r`; each path stores the rate of its last recomputation (`instant_rate`).
//! * `Σ_k rate_k` sums the stored rates of the paths that have at least one RTT sample in their **current**
//!   round (`mptcp_wvegas_weight`: `sampled_rtt > 0`), the updated path included (its rate is fresh). A path
//!   that has just ended or restarted its round, or is in recovery (no samples are collected then), does not
//!   count, whatever rate it stored. If the sum or the path's own rate is 0, `weight_r` keeps its old value.
//! * A congestion signal zeroes the path's stored rate (Linux zeroes `instant_rate` on `CA_EVENT_LOSS`).
//! * When the path returns to the open state (its recovery period ends, or persistent congestion collapses
//!   the window and ends recovery at once), `alpha_r = initial_alpha`, `weight_r = 1`, the stored rate is 0
//!   and the drain rule's `queue_delay` is 0: `wvegas_enable`, which Linux calls on every entry into
//!   `TCP_CA_Open`. `base_rtt` is kept, as in Linux.
//!
//! Choices where the sources are silent, or where this port differs from Linux:
//! * Real-valued: `weight_r` and `alpha_r` are not truncated to integers (Linux: `weight·10 ≫ 16`), windows
//!   are fractional packets. The floor 2 is Linux's constant.
//! * The rate is zeroed on every congestion signal that reaches the path (loss, ECN-CE, persistent
//!   congestion), not only on a retransmission timeout: the open-state reset zeroes it when the recovery
//!   ends anyway, and a path in recovery collects no samples, so it would not count in the sum either way.
//! * Linux's `mptcp_sk_can_send` filter is the set of current paths (removed paths are forgotten).
//! * Everything else (round detection, RTT samples, recovery, app-limited ACKs, `q = 0` never draining) is as
//!   documented in [`crate::vegas`].
//!
//! **One path is exactly Vegas.** With one path, `weight = rate/rate = 1` and a recomputed `alpha` is
//! `A = max(2, total_alpha)`. If `initial_alpha ≤ A`, the lazy update gives the same step as a fixed threshold
//! `A`: when `diff < alpha_r ≤ A` both grow; otherwise `alpha_r` becomes `A` before the comparison (also after
//! each reset to `initial_alpha`). So one-path wVegas produces exactly the windows of Vegas with
//! `alpha = beta = A`, `gamma` equal, `rtt_stat = avg` and `drain = true`
//! ([`WvegasConfig::equivalent_vegas`]); the two share [`VegasPath`], so no formula is duplicated.

use std::time::Instant;

use crate::params::Params;
use crate::vegas::{RttStat, VegasConfig, VegasPath, VegasRule};
use crate::window::DEFAULT_MAX_WINDOW;
use crate::{
    AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathId, PathMap, SentEvent,
};

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &["total_alpha", "initial_alpha", "gamma", "max_window"];

/// Linux's floor on a path's `alpha` (packets).
pub const MIN_ALPHA: f64 = 2.0;

/// Largest threshold accepted (packets).
const MAX_THRESHOLD: f64 = 1e6;

/// Largest value accepted for `max_window` (1 TiB).
const MAX_WINDOW_LIMIT: u64 = 1 << 40;

/// Builds the controller from registry parameters (consumes the keys it knows; the registry rejects the rest).
///
/// `total_alpha` (packets, default 10), `initial_alpha` (packets, default 2), `gamma` (packets, default 1),
/// `max_window` (bytes).
pub fn from_params(params: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
    let d = WvegasConfig::default();
    let config = WvegasConfig {
        total_alpha: params.f64("total_alpha", d.total_alpha, 0.0, MAX_THRESHOLD)?,
        initial_alpha: params.f64("initial_alpha", d.initial_alpha, 0.0, MAX_THRESHOLD)?,
        gamma: params.f64("gamma", d.gamma, 0.0, MAX_THRESHOLD)?,
        max_window: params.u64("max_window", d.max_window, 1, MAX_WINDOW_LIMIT)?,
    };
    Ok(Box::new(Wvegas::new(config)))
}

/// Configuration of [`Wvegas`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WvegasConfig {
    /// Packets the whole connection aims to keep queued, shared among paths by weight (Linux 10).
    pub total_alpha: f64,
    /// Each path's `alpha` until its first recomputation (Linux 2).
    pub initial_alpha: f64,
    /// Slow-start exit threshold in packets (Linux 1).
    pub gamma: f64,
    /// Upper bound on each path's window, in bytes.
    pub max_window: u64,
}

impl Default for WvegasConfig {
    fn default() -> Self {
        WvegasConfig {
            total_alpha: 10.0,
            initial_alpha: 2.0,
            gamma: 1.0,
            max_window: DEFAULT_MAX_WINDOW,
        }
    }
}

impl WvegasConfig {
    /// The Vegas configuration whose windows one-path wVegas reproduces exactly (module doc), valid when
    /// `initial_alpha ≤ max(2, total_alpha)`.
    pub fn equivalent_vegas(&self) -> VegasConfig {
        let a = self.total_alpha.max(MIN_ALPHA);
        VegasConfig {
            alpha: a,
            beta: a,
            gamma: self.gamma,
            rtt_stat: RttStat::Avg,
            drain: true,
            max_window: self.max_window,
        }
    }

    fn rule(&self) -> VegasRule {
        VegasRule {
            gamma: self.gamma,
            rtt_stat: RttStat::Avg,
            drain: true,
        }
    }
}

/// One path of wVegas: Vegas state plus its share of `total_alpha`.
#[derive(Clone, Debug)]
struct WvegasPath {
    vegas: VegasPath,
    alpha: f64,
    /// `cwnd/rtt` at the last recomputation of `alpha`, bytes/s (0: never, or zeroed by a congestion signal
    /// or the open-state reset).
    rate: f64,
    weight: f64,
}

impl WvegasPath {
    /// `wvegas_enable` (Linux, on entry into `TCP_CA_Open`): the coupling state starts over; the Vegas state
    /// reset its round and `queue_delay` itself.
    fn reopen(&mut self, initial_alpha: f64) {
        self.alpha = initial_alpha;
        self.weight = 1.0;
        self.rate = 0.0;
    }
}

/// The wVegas coupled controller (wVegas (Cao, Xu, Fu, IEEE ICNP 2012; Linux `mptcp_wvegas.c`)).
#[derive(Clone, Debug)]
pub struct Wvegas {
    config: WvegasConfig,
    paths: PathMap<WvegasPath>,
}

impl Wvegas {
    /// A wVegas controller with no paths yet.
    pub fn new(config: WvegasConfig) -> Self {
        Wvegas {
            config,
            paths: PathMap::new(),
        }
    }

    /// The Vegas state of `path`.
    pub fn path(&self, path: PathId) -> Option<&VegasPath> {
        self.paths.get(path).map(|p| &p.vegas)
    }

    /// The rate `path` stored at its last recomputation of `alpha`, bytes/s (0: none stored).
    pub fn stored_rate(&self, path: PathId) -> Option<f64> {
        self.paths.get(path).map(|p| p.rate)
    }
}

impl CongestionController for Wvegas {
    fn name(&self) -> &'static str {
        "wvegas"
    }

    fn on_path_added(&mut self, path: PathId, now: Instant, max_datagram_size: u16) {
        self.paths.insert(
            path,
            WvegasPath {
                vegas: VegasPath::new(now, max_datagram_size, self.config.max_window),
                alpha: self.config.initial_alpha,
                rate: 0.0,
                weight: 1.0,
            },
        );
    }

    fn on_path_removed(&mut self, path: PathId) {
        self.paths.remove(path);
    }

    fn on_max_datagram_size(&mut self, path: PathId, max_datagram_size: u16) {
        if let Some(p) = self.paths.get_mut(path) {
            p.vegas.on_max_datagram_size(max_datagram_size);
        }
    }

    fn on_packet_sent(&mut self, ev: &SentEvent) {
        if let Some(p) = self.paths.get_mut(ev.path) {
            p.vegas.on_packet_sent(ev);
        }
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        // mptcp_wvegas_weight: only the paths with an RTT sample in their current round (`sampled_rtt > 0`)
        // count; the updated path is added with its fresh rate below.
        let other_rates: f64 = self
            .paths
            .iter()
            .filter(|(id, p)| *id != ev.path && p.vegas.round_samples() > 0)
            .map(|(_, p)| p.rate)
            .sum();
        let rule = self.config.rule();
        let (total_alpha, initial_alpha) = (self.config.total_alpha, self.config.initial_alpha);
        let Some(path) = self.paths.get_mut(ev.path) else {
            return;
        };
        let was_in_recovery = path.vegas.reno().in_recovery();
        let WvegasPath {
            vegas,
            alpha,
            rate,
            weight,
        } = path;
        vegas.on_ack(ev, &rule, |round| {
            if round.diff >= *alpha {
                // mptcp_wvegas.c: rate = cwnd/rtt, weight = rate/Σ rate, alpha = max(2, weight·total_alpha).
                let r = round.cwnd / round.rtt.as_secs_f64();
                *rate = if r.is_finite() { r } else { 0.0 };
                let total = other_rates + *rate;
                if total > 0.0 && *rate > 0.0 {
                    *weight = *rate / total;
                }
                *alpha = (*weight * total_alpha).max(MIN_ALPHA);
            }
            (*alpha, *alpha)
        });
        if was_in_recovery && !path.vegas.reno().in_recovery() {
            // mptcp_wvegas_state(TCP_CA_Open) → wvegas_enable.
            path.reopen(initial_alpha);
        }
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        let initial_alpha = self.config.initial_alpha;
        if let Some(p) = self.paths.get_mut(ev.path) {
            p.vegas.on_congestion(ev);
            // mptcp_wvegas_cwnd_event(CA_EVENT_LOSS): instant_rate = 0.
            p.rate = 0.0;
            if ev.persistent_congestion {
                // The collapse ends the recovery period (RFC 9002 §7.6.2): the path is open again.
                p.reopen(initial_alpha);
            }
        }
    }

    fn window(&self, path: PathId) -> u64 {
        self.paths.get(path).map_or(0, |p| p.vegas.reno().window())
    }

    fn pacing_rate(&self, path: PathId) -> Option<u64> {
        self.paths.get(path).and_then(|p| p.vegas.reno().pacing_rate())
    }

    /// The state without building the metrics (they allocate their extras): read after every acknowledgement.
    fn state(&self, path: PathId) -> Option<&'static str> {
        self.paths.get(path).map(|p| p.vegas.reno().state())
    }

    fn metrics(&self, path: PathId) -> Option<CcMetrics> {
        let p = self.paths.get(path)?;
        Some(p.vegas.metrics(&[
            Metric {
                name: "alpha",
                value: p.alpha,
            },
            Metric {
                name: "weight",
                value: p.weight,
            },
            Metric {
                name: "queue_delay",
                value: p.vegas.queue_delay().as_secs_f64(),
            },
        ]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Spec;
    use crate::vegas::Vegas;
    use crate::vegas::tests::{ack_one, loss, ms, t0};
    use crate::{AckedPacket, PathController, RttSnapshot};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    struct Harness {
        t0: Instant,
        w: Wvegas,
    }

    impl Harness {
        fn new(paths: u32) -> Self {
            let t0 = t0();
            let mut w = Wvegas::new(WvegasConfig::default());
            for id in 0..paths {
                w.on_path_added(PathId(id), t0, 1000);
            }
            Harness { t0, w }
        }
        fn at(&self, t: u64) -> Instant {
            self.t0 + ms(t)
        }
        fn ack(&mut self, path: u32, now: u64, sent: u64, rtt: u64) {
            let (now, sent) = (self.at(now), self.at(sent));
            let w = &mut self.w;
            ack_one(path, now, sent, ms(rtt), |ev| w.on_ack(ev));
        }
        /// A round of `path` that began at `start` with samples `rtts`, ended at `start + 100`.
        fn round(&mut self, path: u32, start: u64, rtts: &[u64]) {
            let (last, inner) = rtts.split_last().unwrap();
            for (i, rtt) in inner.iter().enumerate() {
                self.ack(path, start + 10 * (i as u64 + 1), start - 1, *rtt);
            }
            self.ack(path, start + 100, start, *last);
        }
        /// Loss on `path` at `now`, then an ACK with RTT `base` ms that ends recovery: congestion avoidance at
        /// 5000 bytes, base RTT `base`, a new round from `now + 100`.
        fn enter_ca(&mut self, path: u32, now: u64, base: u64) {
            let l = loss(path, self.at(now), self.at(0), false);
            self.w.on_congestion(&l);
            self.ack(path, now + 100, now + 1, base);
            assert_eq!(self.cwnd(path), 5000.0);
        }
        fn cwnd(&self, path: u32) -> f64 {
            self.w.path(PathId(path)).unwrap().reno().cwnd()
        }
        fn extra(&self, path: u32, name: &str) -> f64 {
            self.w.metrics(PathId(path)).unwrap().extra(name).unwrap()
        }
    }

    #[test]
    fn two_path_weights_and_alphas() {
        let mut h = Harness::new(2);
        h.enter_ca(0, 50, 100); // path 0: 5000 bytes, base 100 ms, round from 150
        h.enter_ca(1, 50, 50); // path 1: 5000 bytes, base 50 ms, round from 150
        assert_eq!(h.extra(0, "alpha"), 2.0); // initial_alpha
        // Path 1 first: avg 100 → diff = 5·(100−50)/100 = 2.5 ≥ alpha 2 → recompute:
        // rate1 = 5000/0.1 = 50000 B/s; path 0 has no rate yet → weight1 = 1 → alpha1 = max(2, 10) = 10;
        // diff 2.5 < 10 → +1 pkt = 6000.
        h.round(1, 150, &[100, 100, 100]);
        assert_eq!(h.extra(1, "weight"), 1.0);
        assert_eq!(h.extra(1, "alpha"), 10.0);
        assert_eq!(h.cwnd(1), 6000.0);
        // Path 1's new round (from 250) gets a sample, so its stored rate counts in path 0's sum
        // (mptcp_wvegas_weight sums the paths with `sampled_rtt > 0`).
        h.ack(1, 250, 200, 60);
        // Path 0: avg 200 → diff = 5·100/200 = 2.5 ≥ 2 → rate0 = 5000/0.2 = 25000 B/s;
        // weight0 = 25000/(25000 + 50000) = 1/3 → alpha0 = max(2, 10/3) = 3.333; 2.5 < 3.333 → +1 = 6000.
        // Drain: q = 100 ms sets queue_delay = 100 ms; 100 ≥ 200? no.
        h.round(0, 150, &[200, 200, 200]);
        assert!(close(h.extra(0, "weight"), 1.0 / 3.0));
        assert!(close(h.extra(0, "alpha"), 10.0 / 3.0));
        assert_eq!(h.cwnd(0), 6000.0);
        assert!(close(h.extra(0, "queue_delay"), 0.1));
        // Path 0 again: avg 250 → diff = 6·150/250 = 3.6 ≥ 3.333 → rate0 = 6000/0.25 = 24000;
        // weight0 = 24000/(24000 + 50000) = 0.32432 → alpha0 = 3.2432; 3.6 > 3.2432 → −1 pkt = 5000;
        // ssthresh = min(5000, 5000 − 1000) = 4000. Drain: q = 150 < 2·100 → none.
        h.round(0, 250, &[250, 250, 250]);
        assert!(close(h.extra(0, "weight"), 24.0 / 74.0));
        assert!(close(h.extra(0, "alpha"), 240.0 / 74.0));
        assert_eq!(h.cwnd(0), 5000.0);
        assert_eq!(h.w.path(PathId(0)).unwrap().reno().ssthresh(), 4000.0);
        // Path 1 again, diff below its alpha 10: no recomputation (weight stays 1), +1 = 7000. (Its round from
        // 250 has 4 samples of 60 ms, the one above included.)
        h.round(1, 250, &[60, 60, 60]); // diff = 6·10/60 = 1
        assert_eq!(h.extra(1, "weight"), 1.0);
        assert_eq!(h.cwnd(1), 7000.0);
        // Path 1's round from 350 gets a sample, so it counts again.
        h.ack(1, 360, 300, 60);
        // Path 0: avg 300 → diff = 5·200/300 = 3.333 ≥ 3.2432 → rate0 = 5000/0.3 = 16666.7;
        // weight0 = 16666.7/66666.7 = 0.25 → alpha0 = max(2, 2.5) = 2.5; 3.333 > 2.5 → −1 = 4000.
        // Drain: q = 200 ≥ 2·100 → cwnd = 4000·100/(2·300) = 666.7 → clamped to 2 pkts = 2000.
        h.round(0, 350, &[300, 300, 300]);
        assert!(close(h.extra(0, "weight"), 0.25));
        assert!(close(h.extra(0, "alpha"), 2.5));
        assert_eq!(h.cwnd(0), 2000.0);
        assert_eq!(h.extra(0, "queue_delay"), 0.0);
        // The drain left cwnd (2000) below ssthresh (4000 → min(4000, 4000 − 1000) = 3000): slow start again,
        // as in Linux. avg 1000 → diff = 2·900/1000 = 1.8 > gamma 1 → slow-start exit:
        // cwnd = min(2000, 2000·100/1000 + 1000 = 1200) → clamped to 2000; ssthresh = min(3000, 1000) = 1000.
        h.round(0, 450, &[1000, 1000, 1000]);
        assert_eq!(h.cwnd(0), 2000.0);
        assert_eq!(h.w.path(PathId(0)).unwrap().reno().ssthresh(), 1000.0);
        // Congestion avoidance: diff = 1.8 < alpha 2.5 → no recomputation, +1 = 3000.
        h.round(0, 550, &[1000, 1000, 1000]);
        assert_eq!(h.cwnd(0), 3000.0);
        // A path with a small share gets the floor 2: diff = 3·0.9 = 2.7 ≥ 2.5 → rate0 = 3000/1 = 3000;
        // weight0 = 3000/(3000 + 50000) = 0.0566 → alpha0 = max(2, 0.566) = 2; 2.7 > 2 → −1 = 2000.
        h.round(0, 650, &[1000, 1000, 1000]);
        assert!(close(h.extra(0, "weight"), 3.0 / 53.0));
        assert_eq!(h.extra(0, "alpha"), 2.0);
        assert_eq!(h.cwnd(0), 2000.0);
        // Removing path 1 leaves its rate out: path 0 alone gets weight 1 at its next recomputation.
        h.w.on_path_removed(PathId(1));
        h.round(0, 750, &[1000, 1000, 1000]); // diff = 2·0.9 = 1.8 < 2: +1 = 3000, no recomputation
        h.round(0, 850, &[1000, 1000, 1000]); // diff = 3·0.9 = 2.7 ≥ 2 → weight 1, alpha 10 → +1
        assert_eq!(h.extra(0, "weight"), 1.0);
        assert_eq!(h.extra(0, "alpha"), 10.0);
        assert_eq!(h.cwnd(0), 4000.0);
    }

    #[test]
    fn stale_rates_do_not_count_and_recovery_resets_the_coupling() {
        let mut h = Harness::new(2);
        h.enter_ca(0, 50, 100); // path 0: 5000 bytes, base 100 ms, round from 150
        h.enter_ca(1, 50, 50); // path 1: 5000 bytes, base 50 ms, round from 150
        assert_eq!(h.extra(0, "weight"), 1.0); // Linux starts weight at 1 (2^16 scaled)
        // Path 1: avg 100 → diff = 5·50/100 = 2.5 ≥ 2 → rate1 = 5000/0.1 = 50000 B/s, weight 1, alpha 10;
        // +1 → 6000. Drain: q = 50 ms → queue_delay 50 ms. Its next round begins at 250, without samples.
        h.round(1, 150, &[100, 100, 100]);
        assert_eq!(h.w.stored_rate(PathId(1)), Some(50_000.0));
        assert!(close(h.extra(1, "queue_delay"), 0.05));
        // Path 0: avg 200 → diff = 5·100/200 = 2.5 ≥ 2 → rate0 = 25000 B/s. Path 1 stored 50000 B/s but has no
        // sample in its current round, so it does not count: weight0 = 25000/25000 = 1, alpha0 = 10 (summing
        // the stale rate would give 1/3 and 3.333); 2.5 < 10 → +1 = 6000. queue_delay = 100 ms.
        h.round(0, 150, &[200, 200, 200]);
        assert_eq!(h.extra(0, "weight"), 1.0);
        assert_eq!(h.extra(0, "alpha"), 10.0);
        assert_eq!(h.cwnd(0), 6000.0);
        assert!(close(h.extra(0, "queue_delay"), 0.1));
        // A loss on path 1 zeroes its stored rate (CA_EVENT_LOSS) and halves it: 3000.
        h.ack(1, 260, 200, 60);
        h.w.on_congestion(&loss(1, h.at(270), h.at(200), false));
        assert_eq!(h.w.stored_rate(PathId(1)), Some(0.0));
        assert_eq!(h.cwnd(1), 3000.0);
        assert_eq!(h.extra(1, "alpha"), 10.0); // unchanged until the path is open again
        // The ACK of a packet sent after the loss ends recovery: back to TCP_CA_Open, wvegas_enable resets
        // alpha to initial_alpha 2, weight to 1, the rate and queue_delay to 0; base_rtt (50 ms) stays.
        h.ack(1, 370, 271, 80);
        assert_eq!(h.extra(1, "alpha"), 2.0);
        assert_eq!(h.extra(1, "weight"), 1.0);
        assert_eq!(h.extra(1, "queue_delay"), 0.0);
        assert!(close(h.extra(1, "base_rtt"), 0.05));
        assert_eq!(h.cwnd(1), 3000.0);
        // Path 0 likewise: loss at 300 (6000 → 3000), recovery ends at 400; alpha 10 → 2, queue_delay 0.1 → 0.
        h.w.on_congestion(&loss(0, h.at(300), h.at(260), false));
        h.ack(0, 400, 301, 100);
        assert_eq!(h.extra(0, "alpha"), 2.0);
        assert_eq!(h.extra(0, "queue_delay"), 0.0);
        assert_eq!(h.w.stored_rate(PathId(0)), Some(0.0));
        // The reset alpha applies: path 0's next round (from 400) avg 160 → diff = 3·60/160 = 1.125 < 2 → +1
        // = 4000 (with the old alpha 10 too), queue_delay = 60 ms; then avg 200 → diff = 4·100/200 = 2 ≥ 2 →
        // rate0 = 4000/0.2 = 20000; path 1 has no sample in its round (from 370) → weight 1, alpha 10;
        // 2 < 10 → +1 = 5000; q = 100 ms < 2·60 → no drain.
        h.round(0, 400, &[160, 160, 160]);
        assert_eq!(h.cwnd(0), 4000.0);
        assert_eq!(h.extra(0, "alpha"), 2.0);
        h.round(0, 500, &[200, 200, 200]);
        assert_eq!(h.extra(0, "alpha"), 10.0);
        assert_eq!(h.w.stored_rate(PathId(0)), Some(20_000.0));
        assert_eq!(h.cwnd(0), 5000.0);
        // Persistent congestion collapses path 0 to 2 packets and opens it again at once: reset.
        h.w.on_congestion(&loss(0, h.at(700), h.at(650), true));
        assert_eq!(h.cwnd(0), 2000.0);
        assert_eq!(h.extra(0, "alpha"), 2.0);
        assert_eq!(h.w.stored_rate(PathId(0)), Some(0.0));
        assert!(!h.w.path(PathId(0)).unwrap().reno().in_recovery());
    }

    /// xorshift64, for a long deterministic event sequence.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    #[test]
    fn one_path_is_equivalent_vegas_exactly() {
        let t0 = t0();
        let config = WvegasConfig::default();
        let mut w = Wvegas::new(config);
        w.on_path_added(PathId(0), t0, 1200);
        let mut v = Vegas::new(config.equivalent_vegas(), t0, 1200);
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut now = t0;
        let mut last_sent = t0;
        let (mut windows, mut drains, mut recomputes) = (std::collections::BTreeSet::new(), 0, 0);
        let mut prev_alpha = config.initial_alpha;
        for _ in 0..20_000 {
            now += ms(1 + rng.next(10));
            // A slowly varying RTT: a base of 40–60 ms plus a queue of 0–80 ms.
            let rtt = ms(40 + rng.next(20) + rng.next(80));
            match rng.next(100) {
                0..=59 => {
                    let n = 1 + rng.next(3) as usize;
                    let sent = if rng.next(4) == 0 {
                        last_sent
                    } else {
                        now.checked_sub(ms(rng.next(150))).unwrap_or(t0).max(t0)
                    };
                    let packets: Vec<AckedPacket> = (0..n)
                        .map(|_| AckedPacket {
                            bytes: 1200,
                            time_sent: sent,
                        })
                        .collect();
                    let ev = AckEvent {
                        path: PathId(0),
                        now,
                        rtt: RttSnapshot::from_rtt(rtt),
                        packets: &packets,
                        prior_bytes_in_flight: 0,
                        bytes_in_flight: 0,
                        app_limited: rng.next(20) == 0,
                        rate_sample: None,
                    };
                    let before = v.state().queue_delay();
                    w.on_ack(&ev);
                    v.on_ack(&ev);
                    if !before.is_zero() && v.state().queue_delay().is_zero() {
                        drains += 1;
                    }
                }
                60..=98 => {
                    last_sent = now;
                    let ev = SentEvent {
                        path: PathId(0),
                        now,
                        bytes: 1200,
                        bytes_in_flight: 0,
                        app_limited: false,
                    };
                    w.on_packet_sent(&ev);
                    v.on_packet_sent(&ev);
                }
                _ => {
                    if rng.next(3) == 0 {
                        let sent = now.checked_sub(ms(rng.next(100))).unwrap_or(t0).max(t0);
                        let mut ev = loss(0, now, sent, rng.next(30) == 0);
                        ev.rtt = RttSnapshot::from_rtt(rtt);
                        w.on_congestion(&ev);
                        v.on_congestion(&ev);
                    }
                }
            }
            let (a, b) = (w.path(PathId(0)).unwrap(), v.state());
            assert_eq!(a.reno().cwnd().to_bits(), b.reno().cwnd().to_bits());
            assert_eq!(a.reno().ssthresh().to_bits(), b.reno().ssthresh().to_bits());
            assert_eq!(a.diff().to_bits(), b.diff().to_bits());
            windows.insert(a.reno().cwnd().to_bits());
            let alpha = w.metrics(PathId(0)).unwrap().extra("alpha").unwrap();
            assert!(alpha == 2.0 || alpha == 10.0, "{alpha}");
            if alpha != prev_alpha {
                recomputes += 1;
                prev_alpha = alpha;
            }
        }
        // The sequence went through many windows and drained queues; alpha went from 2 to 10 and back to 2
        // at each return to the open state.
        assert!(windows.len() > 100, "{}", windows.len());
        assert!(drains > 5, "{drains}");
        assert!(recomputes > 2, "{recomputes}");
    }

    #[test]
    fn from_params_accepts_and_rejects() {
        let parse = |s: &str| Params::new("wvegas", Spec::parse(s, "algorithm").unwrap().params);
        let mut p = parse("wvegas:total_alpha=20,initial_alpha=3,gamma=2,max_window=80000");
        assert_eq!(from_params(&mut p).unwrap().name(), "wvegas");
        p.finish(PARAMS).unwrap();
        assert!(from_params(&mut Params::empty("wvegas")).is_ok());
        for bad in [
            "wvegas:total_alpha=-1",
            "wvegas:initial_alpha=nan",
            "wvegas:gamma=inf",
            "wvegas:max_window=0",
        ] {
            assert!(
                matches!(
                    from_params(&mut parse(bad)),
                    Err(CcError::Spec(crate::SpecError::BadValue { .. }))
                ),
                "{bad}"
            );
        }
        let mut p = parse("wvegas:alpha=3");
        assert!(from_params(&mut p).is_ok());
        assert!(p.finish(PARAMS).is_err());
    }

    #[test]
    fn unknown_paths_and_zero_rtts_are_harmless() {
        let mut h = Harness::new(1);
        h.ack(9, 10, 0, 100);
        h.w.on_congestion(&loss(9, h.at(10), h.at(0), true));
        assert_eq!(h.w.window(PathId(9)), 0);
        for t in 1..40 {
            h.ack(0, t * 10, t * 10 - 5, 0);
        }
        let m = h.w.metrics(PathId(0)).unwrap();
        assert!(m.extras.iter().all(|e| e.value.is_finite()));
        assert!(m.cwnd >= 2000);
    }
}
