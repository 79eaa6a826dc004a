//! C-MPBBR, the coupled multipath BBR of Mahmud, Lubna, Song and Cho (IEEE Access 2020), as confirmed from the
//! authors' kernel module `mptcp_c-mpbbr.c` (github.com/imtiaztee/C-MPBBR, commit 7371f83) and summarised in
//! C-MPBBR (Mahmud et al., IEEE Access 2020).
//!
//! Each path runs this crate's BBRv1 ([`crate::bbr::Bbr`]); the coupling, run on every ACK of a
//! path between BBR's model update and its control update (the order of the authors' `mpbbr_main`), is:
//! 1. **Multipath-benefit check** (`mpbbr_check_multipath_benefit`): when the path is in ProbeBW with
//!    `cycle_idx == 3`, `total` = Σ over paths with BtlBw > 0 of their average delivery rate, `best`/`low` =
//!    the paths with the largest/smallest BtlBw. If `best·(1 − benefit_threshold) > total && N_shared < 2 &&
//!    #paths > 1 && best ≠ low`, the path's `stop_count` grows, otherwise (and on every ACK outside phase 3)
//!    it resets to 0. When it reaches `benefit_count` on an ACK of the lowest-bandwidth path, the controller
//!    advises closing that path ([`CongestionController::poll_path_advice`] → [`PathAdvice::Close`]), once
//!    per path.
//! 2. **N_shared estimation** (`mpbbr_probe_number_of_sf_in_same_bottleneck`), in ProbeBW with
//!    `cycle_idx == 3`: `n` = number of paths (self included, BtlBw = 0 skipped) whose BtlBw is within
//!    `[(1 − similarity)·bw_self, (1 + similarity)·bw_self]`; hysteresis: `N = n` if `n > 1 && last > 1`,
//!    `N = last` if `n == 1 && last > 1`, else 1; then `last = max(n, 1)`.
//! 3. **Rate and window division**: in ProbeBW with `cycle_idx > 1` (the six cruise phases)
//!    `bw_used = BtlBw / N_shared` feeds both the pacing rate and the target cwnd; elsewhere `bw_used = BtlBw`.
//!    The max filter keeps undivided samples.
//!
//! Choices:
//! * **Base BBR.** The authors' base is the Linux-4.9 BBR (no pacing margin, `≤` min-RTT update, +2 packets
//!   in the 5/4 phase, integer packets, long-term policer model). We use OUR BBRv1 (draft-00) instead, so that
//!   with ONE path C-MPBBR produces exactly the windows and pacing rates of `"bbr"` (with one path `n = 1`,
//!   `N_shared = 1` and the divisor is exactly 1.0). The differences are documented in [`crate::bbr`].
//! * **Average delivery rate of the benefit check.** The authors use the average rate since the start of the
//!   path's long-term (policer) sampling interval, `(delivered − lt_last_delivered)/(now − lt_last_stamp)`.
//!   Our BBR has no long-term model, so the interval is the path's whole life: bytes delivered since the path
//!   was added divided by the time since then (0 when no time has passed).
//! * The authors' percentage arithmetic is integer; ours is `f64` with inclusive bounds.
//! * Ties: `best` is the first path (in path-ID order) with the largest BtlBw and `low` the first with the
//!   smallest, so with all paths equal `best == low` and the check never fires.
//! * The n-th path added gets the n-th stream of the ProbeBW phase generator of `seed`, as in `"bbr"`.

use std::collections::VecDeque;
use std::time::Instant;

use crate::bbr::{Bbr, BbrMode};
use crate::window::DEFAULT_MAX_WINDOW;
use crate::{
    AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathAdvice, PathController,
    PathId, PathMap, SentEvent,
};

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &[
    "similarity",
    "benefit_threshold",
    "benefit_count",
    "benefit_check",
    "seed",
];

/// Builds the controller from registry parameters (consumes the keys it knows; the registry rejects the rest).
pub fn from_params(params: &mut crate::params::Params) -> Result<Box<dyn CongestionController>, CcError> {
    let d = CmpBbrConfig::default();
    let config = CmpBbrConfig {
        similarity: params.f64("similarity", d.similarity, 0.0, 0.99)?,
        benefit_threshold: params.f64("benefit_threshold", d.benefit_threshold, 0.0, 1.0)?,
        benefit_count: u32::try_from(params.u64(
            "benefit_count",
            u64::from(d.benefit_count),
            1,
            u64::from(u32::MAX),
        )?)
        .unwrap_or(u32::MAX),
        benefit_check: params.bool("benefit_check", d.benefit_check)?,
        seed: params.u64("seed", d.seed, 0, u64::MAX)?,
        max_window: d.max_window,
    };
    Ok(Box::new(CmpBbr::new(config)))
}

/// Configuration of C-MPBBR.
#[derive(Clone, Debug, PartialEq)]
pub struct CmpBbrConfig {
    /// Relative bandwidth tolerance of the shared-bottleneck heuristic (the authors' `alpha = 20` %).
    pub similarity: f64,
    /// The multipath-benefit check fires when `best·(1 − benefit_threshold) > total` (authors: 40 %).
    pub benefit_threshold: f64,
    /// Consecutive qualifying ACKs before closing the lowest-bandwidth path is advised (authors: 5).
    pub benefit_count: u32,
    /// Whether the multipath-benefit check runs at all.
    pub benefit_check: bool,
    /// Seed of the ProbeBW phase generator (as `"bbr"`'s `seed`).
    pub seed: u64,
    /// Upper bound on each path's window in bytes.
    pub max_window: u64,
}

impl Default for CmpBbrConfig {
    fn default() -> Self {
        CmpBbrConfig {
            similarity: 0.2,
            benefit_threshold: 0.4,
            benefit_count: 5,
            benefit_check: true,
            seed: 0,
            max_window: DEFAULT_MAX_WINDOW,
        }
    }
}

/// Per-path coupling state around the path's BBR.
#[derive(Clone, Debug)]
struct CmpPath {
    bbr: Bbr,
    /// `num_of_sf_in_btlneck`.
    n_shared: u32,
    /// `last_number_of_identical_sf`.
    last_n: u32,
    /// `stop_multipath_count`.
    stop_count: u32,
    /// When the path was added (start of its average-delivery-rate interval).
    start: Instant,
    close_advised: bool,
}

impl CmpPath {
    fn avg_delivery_rate(&self, now: Instant) -> f64 {
        let t = now.saturating_duration_since(self.start).as_secs_f64();
        if t > 0.0 {
            self.bbr.delivered() as f64 / t
        } else {
            0.0
        }
    }

    fn in_cruise(&self) -> bool {
        self.bbr.mode() == BbrMode::ProbeBw && self.bbr.cycle_index() > 1
    }

    fn divisor(&self) -> u32 {
        if self.in_cruise() { self.n_shared.max(1) } else { 1 }
    }
}

/// The C-MPBBR coupled controller.
#[derive(Debug)]
pub struct CmpBbr {
    config: CmpBbrConfig,
    paths: PathMap<CmpPath>,
    built: u64,
    advice: VecDeque<PathAdvice>,
}

impl CmpBbr {
    /// A controller with no paths yet.
    pub fn new(config: CmpBbrConfig) -> Self {
        CmpBbr {
            config,
            paths: PathMap::new(),
            built: 0,
            advice: VecDeque::new(),
        }
    }

    /// The BBR state of `path`.
    pub fn bbr(&self, path: PathId) -> Option<&Bbr> {
        self.paths.get(path).map(|p| &p.bbr)
    }

    /// `N_shared` of `path` (1 for an unknown path).
    pub fn n_shared(&self, path: PathId) -> u32 {
        self.paths.get(path).map_or(1, |p| p.n_shared)
    }

    /// The multipath-benefit check for an ACK of `me` (C-MPBBR (Mahmud et al., IEEE Access 2020) item 3).
    fn check_benefit(&mut self, me: PathId, now: Instant) {
        let Some(p) = self.paths.get(me) else {
            return;
        };
        let in_phase3 = p.bbr.mode() == BbrMode::ProbeBw && p.bbr.cycle_index() == 3;
        let n_shared = p.n_shared;
        let mut total = 0.0;
        let mut count = 0u32;
        let mut best: Option<(PathId, f64)> = None;
        let mut low: Option<(PathId, f64)> = None;
        if in_phase3 {
            for (id, q) in self.paths.iter() {
                let bw = q.bbr.btl_bw();
                if bw <= 0.0 {
                    continue;
                }
                total += q.avg_delivery_rate(now);
                count += 1;
                if best.is_none_or(|(_, b)| bw > b) {
                    best = Some((id, bw));
                }
                if low.is_none_or(|(_, l)| bw < l) {
                    low = Some((id, bw));
                }
            }
        }
        let best_bw = best.map_or(0.0, |(_, b)| b);
        let qualifies = best_bw * (1.0 - self.config.benefit_threshold) > total
            && n_shared < 2
            && count > 1
            && best.map(|(id, _)| id) != low.map(|(id, _)| id);
        let limit = self.config.benefit_count;
        let Some(p) = self.paths.get_mut(me) else {
            return;
        };
        p.stop_count = if qualifies {
            p.stop_count.saturating_add(1)
        } else {
            0
        };
        if p.stop_count >= limit && count > 1 && low.map(|(id, _)| id) == Some(me) && !p.close_advised {
            p.close_advised = true;
            self.advice.push_back(PathAdvice::Close {
                path: me,
                reason: "c-mpbbr multipath-benefit check: the lowest-bandwidth path does not help",
            });
        }
    }

    /// N_shared estimation for an ACK of `me` in ProbeBW phase 3 (C-MPBBR (Mahmud et al., IEEE Access 2020) item 1).
    fn estimate_n_shared(&mut self, me: PathId) {
        let Some(p) = self.paths.get(me) else {
            return;
        };
        if !(p.bbr.mode() == BbrMode::ProbeBw && p.bbr.cycle_index() == 3) {
            return;
        }
        let bw_self = p.bbr.btl_bw();
        let lower = bw_self * (1.0 - self.config.similarity);
        let upper = bw_self * (1.0 + self.config.similarity);
        let n = self
            .paths
            .values()
            .map(|q| q.bbr.btl_bw())
            .filter(|&bw| bw > 0.0 && bw >= lower && bw <= upper)
            .count();
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        let Some(p) = self.paths.get_mut(me) else {
            return;
        };
        p.n_shared = if n > 1 && p.last_n > 1 {
            n
        } else if n == 1 && p.last_n > 1 {
            p.last_n
        } else {
            1
        };
        p.last_n = n.max(1);
    }
}

impl CongestionController for CmpBbr {
    fn name(&self) -> &'static str {
        "c-mpbbr"
    }

    fn on_path_added(&mut self, path: PathId, now: Instant, max_datagram_size: u16) {
        let bbr = Bbr::new(
            now,
            max_datagram_size,
            self.config.seed,
            self.built,
            self.config.max_window,
        );
        self.built = self.built.saturating_add(1);
        self.paths.insert(
            path,
            CmpPath {
                bbr,
                n_shared: 1,
                last_n: 1,
                stop_count: 0,
                start: now,
                close_advised: false,
            },
        );
    }

    fn on_path_removed(&mut self, path: PathId) {
        self.paths.remove(path);
        self.advice
            .retain(|a| !matches!(a, PathAdvice::Close { path: p, .. } if *p == path));
    }

    fn on_max_datagram_size(&mut self, path: PathId, max_datagram_size: u16) {
        if let Some(p) = self.paths.get_mut(path) {
            p.bbr.on_max_datagram_size(max_datagram_size);
        }
    }

    fn on_packet_sent(&mut self, ev: &SentEvent) {
        if let Some(p) = self.paths.get_mut(ev.path) {
            p.bbr.on_packet_sent(ev);
        }
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        let Some(p) = self.paths.get_mut(ev.path) else {
            return;
        };
        p.bbr.update_model(ev);
        if self.config.benefit_check {
            self.check_benefit(ev.path, ev.now);
        }
        self.estimate_n_shared(ev.path);
        if let Some(p) = self.paths.get_mut(ev.path) {
            let divisor = p.divisor();
            p.bbr.update_control(ev, f64::from(divisor));
        }
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        if let Some(p) = self.paths.get_mut(ev.path) {
            p.bbr.on_congestion(ev);
        }
    }

    fn window(&self, path: PathId) -> u64 {
        self.paths.get(path).map_or(0, |p| p.bbr.window())
    }

    fn pacing_rate(&self, path: PathId) -> Option<u64> {
        self.paths.get(path).and_then(|p| p.bbr.pacing_rate())
    }

    /// The state without building the metrics (they allocate their extras): read after every acknowledgement.
    fn state(&self, path: PathId) -> Option<&'static str> {
        self.paths.get(path).map(|p| PathController::state(&p.bbr))
    }

    fn metrics(&self, path: PathId) -> Option<CcMetrics> {
        self.paths.get(path).map(|p| {
            p.bbr.metrics_with(vec![
                Metric {
                    name: "n_shared",
                    value: f64::from(p.n_shared),
                },
                Metric {
                    name: "bw_used",
                    value: p.bbr.bw_used(),
                },
            ])
        })
    }

    fn poll_path_advice(&mut self) -> Option<PathAdvice> {
        self.advice.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bbr::BbrConfig;
    use crate::bbr::tests::{Ack, MDS, Script, ms, seed_with_first_draw, startup_script, t0};
    use crate::params::{Params, Spec};
    use crate::{RttSnapshot, Uncoupled};

    fn cmp(seed: u64) -> CmpBbr {
        CmpBbr::new(CmpBbrConfig {
            seed,
            ..CmpBbrConfig::default()
        })
    }

    /// Drives path 0 of `cc` through the startup script into ProbeBW phase 0 at 900 ms, then through the
    /// advance rules to phase 3 at 1121 ms (as in the BBR cycle test). Returns the path's script.
    fn path0_to_phase3(cc: &mut CmpBbr, t0: Instant) -> Script {
        let mut s = Script::new(t0);
        for a in startup_script() {
            s.feed(a, |ev| cc.on_ack(ev));
        }
        assert_eq!(cc.bbr(PathId(0)).unwrap().cycle_index(), 0);
        for (at, prior) in [(1002, 131_000), (1020, 106_000), (1121, 0)] {
            s.feed(
                Ack {
                    prior_inflight: prior,
                    ..Ack::at(at)
                },
                |ev| cc.on_ack(ev),
            );
        }
        assert_eq!(cc.bbr(PathId(0)).unwrap().cycle_index(), 3);
        s
    }

    /// One ack on path 1 carrying a rate sample of `rate` (sets its BtlBw; path 1 stays in Startup).
    fn path1_bw(cc: &mut CmpBbr, t0: Instant, rate: u64) {
        let mut s = Script::new(t0);
        s.feed(
            Ack {
                path: PathId(1),
                rate: Some(rate),
                ..Ack::at(100)
            },
            |ev| cc.on_ack(ev),
        );
    }

    #[test]
    fn one_path_is_exactly_bbr() {
        let t0 = t0();
        let seed = 12345;
        let mut bbr = Uncoupled::new(BbrConfig::new(seed));
        let mut c = cmp(seed);
        bbr.on_path_added(PathId(0), t0, MDS);
        c.on_path_added(PathId(0), t0, MDS);
        // A long pseudo-random script (LCG), mixing rate changes, RTT jitter, round starts, missing samples,
        // losses, persistent congestion and idle restarts.
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut rnd = |n: u64| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % n
        };
        let mut s = Script::new(t0);
        let mut at = 0u64;
        let mut states = std::collections::BTreeSet::new();
        for i in 0..4000u64 {
            at += 1 + rnd(20);
            let base = [1_000_000u64, 3_000_000, 500_000, 2_000_000][(i / 1000) as usize % 4];
            let r = rnd(100);
            if r < 2 {
                let ev = CongestionEvent {
                    path: PathId(0),
                    now: t0 + ms(at),
                    sent_time: t0 + ms(at.saturating_sub(rnd(300))),
                    lost_bytes: 1000 * (1 + rnd(5)),
                    bytes_in_flight: rnd(300_000),
                    persistent_congestion: rnd(10) == 0,
                    ecn: rnd(5) == 0,
                    rtt: RttSnapshot::from_rtt(ms(100)),
                };
                bbr.on_congestion(&ev);
                c.on_congestion(&ev);
            } else if r < 4 {
                let ev = SentEvent {
                    path: PathId(0),
                    now: t0 + ms(at),
                    bytes: 1000,
                    bytes_in_flight: 1000,
                    app_limited: true,
                };
                bbr.on_packet_sent(&ev);
                c.on_packet_sent(&ev);
            } else {
                let inflight = rnd(400_000);
                let a = Ack {
                    at_ms: at,
                    acked: 1000 * (1 + rnd(10)),
                    prior_inflight: inflight + 5000,
                    inflight,
                    rate: (rnd(20) != 0).then(|| base / 2 + rnd(base)),
                    // The base RTT creeps up, so RTprop expires now and then (ProbeRTT).
                    rtt_ms: 100 + i / 50 + rnd(10),
                    sent_ms: Some(at.saturating_sub(100 + rnd(200))),
                    lost: if rnd(30) == 0 { 1000 } else { 0 },
                    new_round: rnd(4) == 0,
                    path: PathId(0),
                };
                s.feed(a, |ev| {
                    bbr.on_ack(ev);
                    c.on_ack(ev);
                });
            }
            assert_eq!(bbr.window(PathId(0)), c.window(PathId(0)), "step {i}");
            assert_eq!(bbr.pacing_rate(PathId(0)), c.pacing_rate(PathId(0)), "step {i}");
            let (mb, mc) = (bbr.metrics(PathId(0)).unwrap(), c.metrics(PathId(0)).unwrap());
            assert_eq!(mb.state, mc.state);
            assert_eq!(mb.extras[..], mc.extras[..mb.extras.len()], "step {i}");
            assert_eq!(mc.extra("n_shared"), Some(1.0));
            states.insert(mb.state);
        }
        // The script is meaningful: every state was visited.
        assert_eq!(
            states.into_iter().collect::<Vec<_>>(),
            vec!["drain", "probe_bw", "probe_rtt", "startup"]
        );
        assert_eq!(c.poll_path_advice(), None);
    }

    #[test]
    fn equal_bandwidth_paths_share_after_hysteresis_and_halve_cruise() {
        let t0 = t0();
        let mut c = cmp(seed_with_first_draw(0));
        c.on_path_added(PathId(0), t0, MDS);
        c.on_path_added(PathId(1), t0, MDS);
        // Path 1's BtlBw is 1 100 000 B/s: within [0.8, 1.2] · 1 000 000 of path 0.
        path1_bw(&mut c, t0, 1_100_000);
        let mut s = path0_to_phase3(&mut c, t0);
        // First evaluation in phase 3 (ack at 1121): n = 2 but last = 1 → N = 1, last = 2. No division:
        // pacing 1.0 · 1M.
        assert_eq!(c.n_shared(PathId(0)), 1);
        assert_eq!(c.pacing_rate(PathId(0)), Some(1_000_000));
        // Second evaluation (1130): n = 2 and last = 2 → N = 2. Cruise phase 3 > 1, so bw_used = 1M / 2 =
        // 500 000: pacing = 1.0 · 500 000; quantum max(500, 2 packets) = 2000; target = 2 · 500 000 · 0.1 +
        // 3 · 2000 = 106 000; cwnd = min(206 000 + 1000, 106 000).
        s.feed(Ack::at(1130), |ev| c.on_ack(ev));
        assert_eq!(c.n_shared(PathId(0)), 2);
        assert_eq!(c.pacing_rate(PathId(0)), Some(500_000));
        assert_eq!(c.bbr(PathId(0)).unwrap().target_cwnd(), 106_000);
        assert_eq!(c.window(PathId(0)), 106_000);
        let m = c.metrics(PathId(0)).unwrap();
        assert_eq!(m.extra("n_shared"), Some(2.0));
        assert_eq!(m.extra("bw_used"), Some(500_000.0));
        assert_eq!(m.extra("btl_bw"), Some(1_000_000.0)); // the filter keeps the undivided sample
        // Phases 4..7 (advance every > 100 ms from 1121): still divided by N = 2.
        for (k, idx) in [4usize, 5, 6, 7].into_iter().enumerate() {
            s.feed(Ack::at(1121 + 101 * (k as u64 + 1)), |ev| c.on_ack(ev));
            assert_eq!(c.bbr(PathId(0)).unwrap().cycle_index(), idx);
            assert_eq!(c.pacing_rate(PathId(0)), Some(500_000));
            assert_eq!(c.window(PathId(0)), 106_000);
        }
        // Phase 0 (1.25, at 1626): full BtlBw again: pacing 1.25 · 1M; target 2 · 1M · 0.1 + 6000 =
        // 206 000; cwnd = min(106 000 + 1000, 206 000) = 107 000.
        s.feed(Ack::at(1626), |ev| c.on_ack(ev));
        assert_eq!(c.bbr(PathId(0)).unwrap().cycle_index(), 0);
        assert_eq!(c.pacing_rate(PathId(0)), Some(1_250_000));
        assert_eq!(c.bbr(PathId(0)).unwrap().target_cwnd(), 206_000);
        assert_eq!(c.window(PathId(0)), 107_000);
        // All BtlBws equal-ish: best (path 1, 1.1M) and low (path 0) differ, but N_shared = 2 blocks the
        // benefit check.
        assert_eq!(c.poll_path_advice(), None);
    }

    #[test]
    fn different_bandwidth_paths_do_not_share() {
        let t0 = t0();
        let mut c = cmp(seed_with_first_draw(0));
        c.on_path_added(PathId(0), t0, MDS);
        c.on_path_added(PathId(1), t0, MDS);
        // Path 1 at 1 300 000 B/s is outside [800 000, 1 200 000]: n = 1 every time, N stays 1.
        path1_bw(&mut c, t0, 1_300_000);
        let mut s = path0_to_phase3(&mut c, t0);
        for at in [1130, 1140, 1150] {
            s.feed(Ack::at(at), |ev| c.on_ack(ev));
            assert_eq!(c.n_shared(PathId(0)), 1);
            assert_eq!(c.pacing_rate(PathId(0)), Some(1_000_000));
            assert_eq!(c.window(PathId(0)), 206_000);
        }
    }

    #[test]
    fn benefit_check_advises_closing_the_lowest_path_once() {
        let t0 = t0();
        let mut c = cmp(seed_with_first_draw(0));
        c.on_path_added(PathId(0), t0, MDS);
        c.on_path_added(PathId(1), t0, MDS);
        // Path 1: BtlBw 10 MB/s from one 1000 B ack. Path 0: BtlBw 1 MB/s, delivered 650 000 B by 900 ms
        // (10k + 20k + 40k + 80k + 5 · 100k) plus 1000 B per later ack.
        path1_bw(&mut c, t0, 10_000_000);
        let mut s = path0_to_phase3(&mut c, t0);
        // At 1121 ms (path 0 enters phase 3): total = (653 000 + 1000) / 1.121 ≈ 583 408 B/s;
        // best · (1 - 0.4) = 6 000 000 > total, N_shared(0) = 1 < 2, 2 paths, best (1) ≠ low (0): count 1.
        // Acks at 1130, 1140, 1150 → counts 2, 3, 4: no advice yet.
        for at in [1130, 1140, 1150] {
            s.feed(Ack::at(at), |ev| c.on_ack(ev));
            assert_eq!(c.poll_path_advice(), None, "at {at}");
        }
        // An ack of path 1 (Startup, not in phase 3) resets only path 1's own count.
        path1_bw(&mut c, t0, 10_000_000);
        // 1160: count 5 on the lowest path → advise closing it, once.
        s.feed(Ack::at(1160), |ev| c.on_ack(ev));
        assert!(matches!(
            c.poll_path_advice(),
            Some(PathAdvice::Close { path: PathId(0), .. })
        ));
        assert_eq!(c.poll_path_advice(), None);
        s.feed(Ack::at(1170), |ev| c.on_ack(ev));
        assert_eq!(c.poll_path_advice(), None);
    }

    #[test]
    fn benefit_check_can_be_disabled_and_needs_consecutive_acks() {
        let t0 = t0();
        let mut c = CmpBbr::new(CmpBbrConfig {
            seed: seed_with_first_draw(0),
            benefit_check: false,
            ..CmpBbrConfig::default()
        });
        c.on_path_added(PathId(0), t0, MDS);
        c.on_path_added(PathId(1), t0, MDS);
        path1_bw(&mut c, t0, 10_000_000);
        let mut s = path0_to_phase3(&mut c, t0);
        for at in [1130, 1140, 1150, 1160, 1170] {
            s.feed(Ack::at(at), |ev| c.on_ack(ev));
        }
        assert_eq!(c.poll_path_advice(), None);

        // Enabled, but phase 3 ends after 4 qualifying acks (1121..1150; 1222 advances to phase 4 and
        // resets the count), and the next phase 3 is a whole cycle away.
        let mut c = cmp(seed_with_first_draw(0));
        c.on_path_added(PathId(0), t0, MDS);
        c.on_path_added(PathId(1), t0, MDS);
        path1_bw(&mut c, t0, 10_000_000);
        let mut s = path0_to_phase3(&mut c, t0);
        for at in [1130, 1140, 1150, 1222] {
            s.feed(Ack::at(at), |ev| c.on_ack(ev));
        }
        assert_eq!(c.bbr(PathId(0)).unwrap().cycle_index(), 4);
        assert_eq!(c.paths.get(PathId(0)).unwrap().stop_count, 0);
        assert_eq!(c.poll_path_advice(), None);
    }

    #[test]
    fn unknown_paths_and_removal_are_harmless() {
        let t0 = t0();
        let mut c = cmp(0);
        let mut s = Script::new(t0);
        s.feed(
            Ack {
                path: PathId(7),
                ..Ack::at(10)
            },
            |ev| c.on_ack(ev),
        );
        assert_eq!(c.window(PathId(7)), 0);
        assert_eq!(c.metrics(PathId(7)), None);
        c.on_path_added(PathId(7), t0, MDS);
        assert_eq!(c.window(PathId(7)), 10_000);
        c.on_path_removed(PathId(7));
        assert_eq!(c.pacing_rate(PathId(7)), None);
        assert_eq!(c.name(), "c-mpbbr");
    }

    #[test]
    fn from_params_good_and_bad() {
        let spec = "c-mpbbr:similarity=0.3,benefit_threshold=0.5,benefit_count=3,benefit_check=off,seed=9";
        let mut p = Params::new("c-mpbbr", Spec::parse(spec, "algorithm").unwrap().params);
        let cc = from_params(&mut p).unwrap();
        p.finish(PARAMS).unwrap();
        assert_eq!(cc.name(), "c-mpbbr");
        assert!(from_params(&mut Params::empty("c-mpbbr")).is_ok());
        for bad in [
            "c-mpbbr:similarity=1.5",
            "c-mpbbr:similarity=-0.1",
            "c-mpbbr:benefit_threshold=2",
            "c-mpbbr:benefit_count=0",
            "c-mpbbr:benefit_check=maybe",
            "c-mpbbr:seed=x",
        ] {
            let mut p = Params::new("c-mpbbr", Spec::parse(bad, "algorithm").unwrap().params);
            assert!(
                matches!(
                    from_params(&mut p),
                    Err(CcError::Spec(crate::SpecError::BadValue { .. }))
                ),
                "{bad}"
            );
        }
        let mut p = Params::new(
            "c-mpbbr",
            Spec::parse("c-mpbbr:alpha=20", "algorithm").unwrap().params,
        );
        from_params(&mut p).unwrap();
        assert!(matches!(
            p.finish(PARAMS),
            Err(crate::SpecError::UnknownParameter { .. })
        ));
    }
}
