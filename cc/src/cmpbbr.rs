//! C-MPBBR, the coupled multipath BBR of Mahmud, Lubna, Song and Cho (IEEE Access 2020), as confirmed from the
//! authors' kernel module `mptcp_c-mpbbr.c` (github.com/imtiaztee/C-MPBBR, commit 7371f83) and summarised in
//! cc.md §10.
//!
//! Each path runs this crate's BBRv1 ([`crate::bbr::Bbr`], cc.md §3); the coupling, run on every ACK of a
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

    /// The multipath-benefit check for an ACK of `me` (cc.md §10 item 3).
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

    /// N_shared estimation for an ACK of `me` in ProbeBW phase 3 (cc.md §10 item 1).
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
mod tests {}
