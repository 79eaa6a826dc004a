//! OLIA, the Opportunistic Linked Increases Algorithm (Khalili et al., IEEE/ACM ToN 2013), as specified in
//! OLIA (Khalili et al., IEEE/ACM ToN 2013; Linux `mptcp_olia.c`) after the Linux `mptcp_olia.c` and the mp-quic
//! `olia.go` port, on QUIC's byte-counted windows.
//!
//! Each path keeps a [`RenoWindow`], so slow start, the recovery period, the halving on loss, persistent
//! congestion and the app-limited rule are exactly RFC 9002's. OLIA replaces the congestion-avoidance
//! increase. Per ACK on path `r`, in packets (Khalili et al., IEEE/ACM ToN 2013; Linux `mptcp_olia.c`):
//!
//! `w_r += (w_r/rtt_r²) / (Σ_p w_p/rtt_p)² + α_r/w_r`
//!
//! **Byte mapping.** With `W = w · MSS_r` in bytes, one acknowledged packet of `MSS_r` bytes adds
//! `MSS_r · Δw` bytes, and a packet of `bytes` bytes counts as `bytes / MSS_r` packets, so
//! `ΔW_r = bytes · MSS_r · [W_r / (Σ_p W_p · rtt_r/rtt_p)² + α_r / W_r]` (see [`increase`]; the first term is
//! the safe form of `(W_r/rtt_r²)/(Σ W_p/rtt_p)²`). With one path and `α = 0` this is NewReno's
//! `bytes · MSS / W`. Windows of all paths enter the sums in bytes, so paths with different MSS are compared
//! by bytes.
//!
//! * `ℓ_r = max(ℓ1_r, ℓ2_r)` from byte counters as the mp-quic port keeps them: `ℓ1` = bytes acknowledged on
//!   `r` since its last loss, `ℓ2` = bytes acknowledged between its previous two losses. A loss shifts the
//!   counters when it starts a new recovery period (Linux: on entering Recovery) and bytes were acknowledged
//!   since the previous one (Linux's `loss3 ≠ loss2`).
//! * `M` = paths with the largest window, where a path in recovery counts its ssthresh (Linux's
//!   `crt_cwnd`; in QUIC cwnd already equals ssthresh in recovery unless the minimum window raised it). The
//!   same `crt_cwnd` is used in the denominator's sum; the path's own `w_r` is its current window.
//! * `B` = paths maximising `ℓ_r/rtt_r²` (exact ties).
//! * `α_r = +1/(n·|B\M|)` on `B\M`, `−1/(n·|M|)` on `M` when `B\M ≠ ∅`, else 0 (see [`roles`]).
//! * A negative `α_r` can shrink the window (Linux's `cnt ≤ −1023` branch), never below the minimum window.
//!   When such a decrease takes the window below ssthresh, ssthresh follows it down so the path stays in
//!   congestion avoidance. (Linux re-enters slow start there but caps slow start at ssthresh, so the dip is
//!   undone within an ACK or two; RFC 9002's slow start has no such cap and would instead jump a whole packet
//!   above the decreased window, turning OLIA's decrease into a faster increase.)
//!
//! Choices where the sources are silent:
//! * `B`, `M` and `α` are computed once per acknowledgement event (after adding its bytes to `ℓ1`); the
//!   increase is applied per acknowledged packet with the current window of the path (Linux moves a counter
//!   once per ACK; RFC 9002 processes packets). Negative steps of one event are summed and applied at its end.
//! * Paths without an RTT sample are left out of every set, sum and of `n` (Linux skips `srtt = 0`). An RTT
//!   of zero is taken as 1 µs. RTT is the smoothed RTT.
//! * No app-limited adjustment of other paths' windows (Linux has none for OLIA).
//! * With one path the increase is [`RenoWindow::reno_increase`] itself: bit-for-bit NewReno.

use std::time::{Duration, Instant};

use crate::lia::{PathSample, max_window_param, rtt_secs, sample_rtt};
use crate::window::{DEFAULT_MAX_WINDOW, LOSS_REDUCTION_FACTOR};
use crate::{
    AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathId, PathMap, RenoWindow,
    SentEvent,
};

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &["max_window"];

/// One path as OLIA's set computation sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OliaPath {
    /// Window used for `M` (ssthresh while in recovery), in bytes.
    pub cwnd: f64,
    /// Smoothed RTT in seconds (positive).
    pub rtt: f64,
    /// `ℓ_r`: the smoothed number of bytes between losses.
    pub inter_loss: f64,
}

/// A path's place in OLIA's sets and its `α_r`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OliaRole {
    /// `α_r` (the Linux code's `epsilon`).
    pub epsilon: f64,
    /// The path is in `B` (maximises `ℓ/rtt²`).
    pub in_best: bool,
    /// The path is in `M` (largest window).
    pub in_max: bool,
}

fn usable(p: &OliaPath) -> bool {
    p.cwnd.is_finite() && p.rtt.is_finite() && p.rtt > 0.0 && p.inter_loss.is_finite()
}

/// OLIA's sets `B`, `M` and `α_r` for every path (Khalili et al., IEEE/ACM ToN 2013; Linux `mptcp_olia.c`), in the
/// order given.
///
/// `n` is the number of usable paths (finite window and `ℓ`, positive RTT); unusable entries get the default
/// role (α = 0, in no set). `α_r = 1/(n·|B\M|)` for `r ∈ B\M`, `−1/(n·|M|)` for `r ∈ M` when `B\M ≠ ∅`,
/// and 0 otherwise.
pub fn roles(paths: &[OliaPath]) -> Vec<OliaRole> {
    (0..paths.len())
        .map(|i| role_of(paths.iter().copied().enumerate(), &i))
        .collect()
}

/// The role of the path keyed `target` among `paths` (key and path, in order), as [`roles`] gives it,
/// without allocating: two walks over the paths (the connection asks on every acknowledgement).
pub fn role_of<K: PartialEq>(paths: impl Iterator<Item = (K, OliaPath)> + Clone, target: &K) -> OliaRole {
    let quality = |p: &OliaPath| p.inter_loss / (p.rtt * p.rtt);
    let (mut n, mut max_cwnd, mut best) = (0.0_f64, f64::NEG_INFINITY, f64::NEG_INFINITY);
    for (_, p) in paths.clone().filter(|(_, p)| usable(p)) {
        n += 1.0;
        max_cwnd = max_cwnd.max(p.cwnd);
        best = best.max(quality(&p));
    }
    let role = |p: &OliaPath| OliaRole {
        epsilon: 0.0,
        in_best: quality(p) == best,
        in_max: p.cwnd == max_cwnd,
    };
    let (mut b_not_m, mut m, mut mine) = (0.0_f64, 0.0_f64, None);
    for (key, p) in paths {
        let r = if usable(&p) { role(&p) } else { OliaRole::default() };
        if r.in_best && !r.in_max {
            b_not_m += 1.0;
        }
        if r.in_max {
            m += 1.0;
        }
        if mine.is_none() && key == *target {
            mine = Some(r);
        }
    }
    let mut r = mine.unwrap_or_default();
    if b_not_m > 0.0 {
        if r.in_best && !r.in_max {
            r.epsilon = 1.0 / (n * b_not_m);
        } else if r.in_max {
            r.epsilon = -1.0 / (n * m);
        }
    }
    r
}

/// OLIA's increase of path `r` in bytes (negative for a decrease) for `bytes` acknowledged bytes:
/// `bytes · mss · [cwnd_r / (cwnd_r + Σ_{p≠r} cwnd_p · rtt_r/rtt_p)² + epsilon / cwnd_r]`.
///
/// `others` are the other paths (windows in bytes, RTTs in seconds); unusable ones are skipped. Returns 0
/// for degenerate inputs (non-positive window or RTT).
pub fn increase(bytes: f64, mss: f64, cwnd_r: f64, rtt_r: f64, others: &[PathSample], epsilon: f64) -> f64 {
    increase_with(
        bytes,
        mss,
        cwnd_r,
        rtt_r,
        others_term(rtt_r, others.iter().copied()),
        epsilon,
    )
}

/// `Σ_{p≠r} cwnd_p · rtt_r/rtt_p` over `others`, skipping unusable ones: the part of [`increase`]'s
/// denominator that does not change while one path's acknowledgement is processed.
pub fn others_term(rtt_r: f64, others: impl Iterator<Item = PathSample>) -> f64 {
    others
        .filter(|p| p.cwnd.is_finite() && p.cwnd >= 0.0 && p.rtt.is_finite() && p.rtt > 0.0)
        .map(|p| p.cwnd * rtt_r / p.rtt)
        .sum::<f64>()
}

/// [`increase`] with the other paths' term computed beforehand ([`others_term`]).
pub fn increase_with(bytes: f64, mss: f64, cwnd_r: f64, rtt_r: f64, others_term: f64, epsilon: f64) -> f64 {
    if !(cwnd_r > 0.0 && rtt_r > 0.0 && cwnd_r.is_finite() && rtt_r.is_finite()) {
        return 0.0;
    }
    let den = cwnd_r + others_term;
    let inc = bytes * mss * (cwnd_r / (den * den) + epsilon / cwnd_r);
    if inc.is_finite() { inc } else { 0.0 }
}

/// Configuration of [`Olia`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OliaConfig {
    /// Upper bound on every path's window, in bytes.
    pub max_window: u64,
}

impl Default for OliaConfig {
    fn default() -> Self {
        OliaConfig {
            max_window: DEFAULT_MAX_WINDOW,
        }
    }
}

/// Builds the controller from registry parameters (consumes the keys it knows; the registry rejects the rest).
pub fn from_params(params: &mut crate::params::Params) -> Result<Box<dyn CongestionController>, CcError> {
    let max_window = max_window_param(params)?;
    Ok(Box::new(Olia::new(OliaConfig { max_window })))
}

#[derive(Clone, Debug)]
struct OliaPathState {
    window: RenoWindow,
    /// `ℓ1`: bytes acknowledged since the last loss (Linux `loss3 − loss2`).
    since_loss: u64,
    /// `ℓ2`: bytes acknowledged between the previous two losses (Linux `loss2 − loss1`).
    between_losses: u64,
}

impl OliaPathState {
    fn inter_loss(&self) -> u64 {
        self.since_loss.max(self.between_losses)
    }

    /// Linux `crt_cwnd`: ssthresh while in recovery, else cwnd.
    fn crt_cwnd(&self) -> f64 {
        if self.window.in_recovery() {
            self.window.ssthresh()
        } else {
            self.window.cwnd()
        }
    }
}

/// OLIA: see the module documentation.
#[derive(Clone, Debug)]
pub struct Olia {
    config: OliaConfig,
    paths: PathMap<OliaPathState>,
}

impl Olia {
    /// A controller with no paths yet.
    pub fn new(config: OliaConfig) -> Self {
        Olia {
            config,
            paths: PathMap::new(),
        }
    }

    /// The RFC 9002 window state of `path` (for tests and composed controllers).
    pub fn reno_window(&self, path: PathId) -> Option<&RenoWindow> {
        self.paths.get(path).map(|p| &p.window)
    }

    /// `ℓ_r` of `path` in bytes.
    pub fn inter_loss_bytes(&self, path: PathId) -> Option<u64> {
        self.paths.get(path).map(OliaPathState::inter_loss)
    }

    /// Paths with an RTT sample, as OLIA sees them (`path`'s RTT replaced by `over` when given), in path
    /// order.
    fn olia_paths(
        &self,
        over: Option<(PathId, Duration)>,
    ) -> impl Iterator<Item = (PathId, OliaPath)> + Clone + '_ {
        self.paths.iter().filter_map(move |(id, p)| {
            Some((
                id,
                OliaPath {
                    cwnd: p.crt_cwnd(),
                    rtt: sample_rtt(id, p.window.srtt(), over)?,
                    inter_loss: p.inter_loss() as f64,
                },
            ))
        })
    }

    /// RFC 9002 congestion response with decrease factor `beta` (0.5 for OLIA itself), after OLIA's loss
    /// bookkeeping; returns whether a new recovery period started.
    pub(crate) fn on_congestion_with_beta(&mut self, ev: &CongestionEvent, beta: f64) -> bool {
        let Some(p) = self.paths.get_mut(ev.path) else {
            return false;
        };
        if p.window.will_reduce(ev) && p.since_loss != 0 {
            // OLIA (Khalili et al., IEEE/ACM ToN 2013; Linux `mptcp_olia.c`): loss1 = loss2, loss2 = loss3 (only if
            // loss3 ≠ loss2).
            p.between_losses = p.since_loss;
            p.since_loss = 0;
        }
        p.window.on_congestion(ev, beta)
    }
}

impl CongestionController for Olia {
    fn name(&self) -> &'static str {
        "olia"
    }

    fn on_path_added(&mut self, path: PathId, _now: Instant, max_datagram_size: u16) {
        self.paths.insert(
            path,
            OliaPathState {
                window: RenoWindow::with_max_window(max_datagram_size, self.config.max_window),
                since_loss: 0,
                between_losses: 0,
            },
        );
    }

    fn on_path_removed(&mut self, path: PathId) {
        self.paths.remove(path);
    }

    fn on_max_datagram_size(&mut self, path: PathId, max_datagram_size: u16) {
        if let Some(p) = self.paths.get_mut(path) {
            p.window.set_max_datagram_size(max_datagram_size);
        }
    }

    fn on_packet_sent(&mut self, ev: &SentEvent) {
        if let Some(p) = self.paths.get_mut(ev.path) {
            p.window.on_packet_sent(ev);
        }
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        let single = self.paths.len() == 1;
        let Some(p) = self.paths.get_mut(ev.path) else {
            return;
        };
        // mp-quic: loss3 += ackedBytes on every acknowledgement.
        p.since_loss = p.since_loss.saturating_add(ev.bytes_acked());
        if single {
            p.window.on_ack(ev, RenoWindow::reno_increase);
            return;
        }
        let over = Some((ev.path, ev.rtt.smoothed));
        let epsilon = role_of(self.olia_paths(over), &ev.path).epsilon;
        let rtt_r = rtt_secs(Some(ev.rtt.smoothed)).unwrap_or(crate::lia::MIN_RTT_SECS);
        // The other paths do not change while this acknowledgement is processed: their term of the
        // denominator is computed once.
        let others = others_term(
            rtt_r,
            self.olia_paths(over)
                .filter(|(id, _)| *id != ev.path)
                .map(|(_, p)| PathSample {
                    cwnd: p.cwnd,
                    rtt: p.rtt,
                }),
        );
        let Some(p) = self.paths.get_mut(ev.path) else {
            return;
        };
        let mut pending_decrease = 0.0_f64;
        p.window.on_ack(ev, |w, packet| {
            let cwnd = (w.cwnd() - pending_decrease).max(w.min_window());
            let step = increase_with(
                packet.bytes as f64,
                w.max_datagram_size() as f64,
                cwnd,
                rtt_r,
                others,
                epsilon,
            );
            if step < 0.0 {
                // RenoWindow only applies positive steps: keep the decrease for the end of the event.
                pending_decrease -= step;
                0.0
            } else {
                step
            }
        });
        if pending_decrease > 0.0 {
            let cwnd = p.window.cwnd() - pending_decrease;
            p.window.set_cwnd(cwnd);
            if p.window.cwnd() < p.window.ssthresh() {
                // Keep the path in congestion avoidance: see the module documentation.
                let cwnd = p.window.cwnd();
                p.window.set_ssthresh(cwnd);
            }
        }
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        // OLIA (Khalili et al., IEEE/ACM ToN 2013; Linux `mptcp_olia.c`): standard halving.
        self.on_congestion_with_beta(ev, LOSS_REDUCTION_FACTOR);
    }

    fn window(&self, path: PathId) -> u64 {
        self.paths.get(path).map_or(0, |p| p.window.window())
    }

    fn pacing_rate(&self, path: PathId) -> Option<u64> {
        self.paths.get(path).and_then(|p| p.window.pacing_rate())
    }

    /// The state without building the metrics (they allocate their extras): read after every acknowledgement.
    fn state(&self, path: PathId) -> Option<&'static str> {
        self.paths.get(path).map(|p| p.window.state())
    }

    fn metrics(&self, path: PathId) -> Option<CcMetrics> {
        let p = self.paths.get(path)?;
        let role = role_of(self.olia_paths(None), &path);
        Some(p.window.metrics(vec![
            Metric {
                name: "epsilon",
                value: role.epsilon,
            },
            Metric {
                name: "inter_loss_bytes",
                value: p.inter_loss() as f64,
            },
            Metric {
                name: "in_best",
                value: f64::from(u8::from(role.in_best)),
            },
            Metric {
                name: "in_max",
                value: f64::from(u8::from(role.in_max)),
            },
        ]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lia::test_support::*;
    use crate::params::{Params, Spec};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    fn cwnd(cc: &Olia, path: u32) -> f64 {
        cc.reno_window(PathId(path)).unwrap().cwnd()
    }

    fn op(cwnd: f64, rtt: f64, inter_loss: f64) -> OliaPath {
        OliaPath {
            cwnd,
            rtt,
            inter_loss,
        }
    }

    #[test]
    fn per_ack_steps_match_the_linux_test_vector() {
        // Linux MPTCP v0.x, `net/mptcp/mptcp_*.c`: (10 pkts, 20 ms) ∈ B\M and (20 pkts, 50 ms) ∈ M, n = 2, so α = +1/2
        // and −1/2. Path 0: 10/(10 + 20·0.02/0.05)² + 0.5/10 = 10/18² + 1/20 = 10/324 + 1/20 = 524/6480 = 0.080 864…
        //         ×1024 = 82.80 (Linux counter: +82 per ACK).
        let s0 = increase(
            1.0,
            1.0,
            10.0,
            0.02,
            &[PathSample {
                cwnd: 20.0,
                rtt: 0.05,
            }],
            0.5,
        );
        assert!(close(s0, 524.0 / 6480.0));
        assert!((s0 * 1024.0 - 82.8).abs() < 0.01);
        // Path 1: 20/(20 + 10·0.05/0.02)² − 0.5/20 = 20/45² − 1/40 = 20/2025 − 1/40 = −1225/81 000
        //         = −0.015 123…, ×1024 = −15.49 (Linux: −15).
        let s1 = increase(
            1.0,
            1.0,
            20.0,
            0.05,
            &[PathSample {
                cwnd: 10.0,
                rtt: 0.02,
            }],
            -0.5,
        );
        assert!(close(s1, -1225.0 / 81_000.0));
        assert!((s1 * 1024.0 + 15.49).abs() < 0.01);
        // In bytes (MSS 1200, one 1200-byte packet): 1200 × the packet value.
        let b0 = increase(
            1200.0,
            1200.0,
            12_000.0,
            0.02,
            &[PathSample {
                cwnd: 24_000.0,
                rtt: 0.05,
            }],
            0.5,
        );
        assert!(close(b0, 1200.0 * 524.0 / 6480.0));
        // Degenerate inputs give no step.
        assert_eq!(increase(1.0, 1.0, 0.0, 0.02, &[], 0.5), 0.0);
        assert_eq!(increase(1.0, 1.0, 10.0, 0.0, &[], 0.5), 0.0);
    }

    #[test]
    fn roles_of_two_paths() {
        // ℓ/rtt²: 1000/0.0004 = 2.5e6 (best) vs 1000/0.0025 = 4e5; largest window: path 1.
        // B = {0}, M = {1}, B\M = {0}: α0 = 1/(2·1), α1 = −1/(2·1).
        let r = roles(&[op(10.0, 0.02, 1000.0), op(20.0, 0.05, 1000.0)]);
        assert_eq!(
            r,
            vec![
                OliaRole {
                    epsilon: 0.5,
                    in_best: true,
                    in_max: false
                },
                OliaRole {
                    epsilon: -0.5,
                    in_best: false,
                    in_max: true
                },
            ]
        );
    }

    #[test]
    fn roles_when_best_is_also_max() {
        // Path 0 has both the largest window and the best ℓ/rtt²: B\M = ∅, every α is 0.
        let r = roles(&[op(20.0, 0.02, 1000.0), op(10.0, 0.05, 1000.0)]);
        assert!(r.iter().all(|x| x.epsilon == 0.0));
        assert!(r[0].in_best && r[0].in_max && !r[1].in_best && !r[1].in_max);
    }

    #[test]
    fn roles_with_ties_and_several_paths() {
        // Paths 0 and 1 tie for best (1000/0.02² each), path 2 has the largest window.
        // n = 3, |B\M| = 2, |M| = 1: α0 = α1 = 1/(3·2) = 1/6, α2 = −1/(3·1) = −1/3.
        let r = roles(&[
            op(10.0, 0.02, 1000.0),
            op(10.0, 0.02, 1000.0),
            op(30.0, 0.05, 500.0),
        ]);
        let eps: Vec<f64> = r.iter().map(|x| x.epsilon).collect();
        assert!(close(eps[0], 1.0 / 6.0) && close(eps[1], 1.0 / 6.0) && close(eps[2], -1.0 / 3.0));
        // Two paths share the largest window: |M| = 2, each gets −1/(3·2) = −1/6; path 0 ∈ B\M gets 1/3.
        let r = roles(&[
            op(10.0, 0.01, 5000.0),
            op(20.0, 0.05, 100.0),
            op(20.0, 0.05, 100.0),
        ]);
        let eps: Vec<f64> = r.iter().map(|x| x.epsilon).collect();
        assert!(close(eps[0], 1.0 / 3.0) && close(eps[1], -1.0 / 6.0) && close(eps[2], -1.0 / 6.0));
        // An unusable entry (zero RTT) is in no set and does not count in n: as the two-path case.
        let r = roles(&[op(10.0, 0.02, 1000.0), op(99.0, 0.0, 1e9), op(20.0, 0.05, 1000.0)]);
        assert_eq!(r[1], OliaRole::default());
        assert_eq!((r[0].epsilon, r[2].epsilon), (0.5, -0.5));
        assert!(roles(&[]).is_empty());
    }

    /// The two paths of the test vector in bytes: 12 000 B / 20 ms and 24 000 B / 50 ms, both in recovery
    /// right after a halving. ℓ: path 0 acknowledged 10 packets (12 000 B) before its loss, path 1 30 packets
    /// (36 000 B): ℓ/rtt² = 12 000/0.0004 = 3e7 (best) vs 36 000/0.0025 = 1.44e7; M = {1} (ssthresh 24 000).
    fn two_paths() -> (Olia, Instant) {
        let t0 = t0();
        let mut cc = Olia::new(OliaConfig::default());
        setup_ca(&mut cc, 0, t0, 12_000, ms(20));
        setup_ca(&mut cc, 1, t0, 24_000, ms(50));
        (cc, t0)
    }

    #[test]
    fn controller_applies_positive_and_negative_steps_in_bytes() {
        let (cc, t0) = two_paths();
        assert_eq!(cc.inter_loss_bytes(PathId(0)), Some(12_000));
        assert_eq!(cc.inter_loss_bytes(PathId(1)), Some(36_000));
        let m0 = cc.metrics(PathId(0)).unwrap();
        assert_eq!(m0.extra("epsilon"), Some(0.5));
        assert_eq!((m0.extra("in_best"), m0.extra("in_max")), (Some(1.0), Some(0.0)));
        let m1 = cc.metrics(PathId(1)).unwrap();
        assert_eq!(m1.extra("epsilon"), Some(-0.5));
        assert_eq!((m1.extra("in_best"), m1.extra("in_max")), (Some(0.0), Some(1.0)));
        assert_eq!(m1.extra("inter_loss_bytes"), Some(36_000.0));

        let (now, sent) = fresh(t0);
        // Path 0 ∈ B\M: +1200 · 524/6480 = +97.037 bytes (0.0809 packets).
        let mut c0 = cc.clone();
        ack(&mut c0, 0, now, sent, 1, ms(20));
        assert!(close(cwnd(&c0, 0), 12_000.0 + 1200.0 * 524.0 / 6480.0));
        // Path 1 ∈ M: 1200 · (−1225/81 000) = −18.148 bytes; ssthresh follows the window down.
        let mut c1 = cc.clone();
        ack(&mut c1, 1, now, sent, 1, ms(50));
        let expected = 24_000.0 - 1200.0 * 1225.0 / 81_000.0;
        assert!(close(cwnd(&c1, 1), expected));
        let w1 = c1.reno_window(PathId(1)).unwrap();
        assert_eq!(w1.ssthresh(), w1.cwnd());
        assert!(!w1.in_slow_start());
        // ℓ1 of path 1 grew by 1200 but ℓ = max(1200, 36 000) is unchanged.
        assert_eq!(c1.inter_loss_bytes(PathId(1)), Some(36_000));
    }

    #[test]
    fn negative_steps_stop_at_the_minimum_window() {
        let t0 = t0();
        let mut cc = Olia::new(OliaConfig::default());
        // Path 0 (10 ms): 100 packets acknowledged (ℓ = 120 000 B), then six losses in new recovery periods
        // with nothing acknowledged between them: 132 000 → 66 000 → … → 4125 → 2400 (the minimum).
        cc.on_path_added(PathId(0), t0, 1200);
        ack(&mut cc, 0, t0 + ms(10), t0, 100, ms(10));
        for i in 1..=6 {
            loss(&mut cc, 0, t0 + ms(100 * i), t0 + ms(100 * i - 1), ms(10));
        }
        assert_eq!(cwnd(&cc, 0), 2400.0);
        assert_eq!(cc.inter_loss_bytes(PathId(0)), Some(120_000));
        // Path 1 (100 ms): one loss, 12 000 → 6000 = ssthresh, in CA.
        cc.on_path_added(PathId(1), t0, 1200);
        loss(&mut cc, 1, t0 + ms(50), t0, ms(100));
        // 60 packets acknowledged on path 1: ℓ1 = 72 000 B, ℓ/rtt² = 7.2e6 < path 0's 1.2e9, so B = {0},
        // M = {1}, α1 = −1/2. First step: 1 440 000 · (6000/(6000 + 2400·0.1/0.01)² − 0.5/6000)
        // = 1 440 000 · (6.67e-6 − 8.33e-5) = −110.4 B, and steps grow as the window shrinks, so 60 packets
        // would remove more than the 3600 B above the minimum: the window stops at 2400 and ssthresh follows.
        let (now, sent) = fresh(t0);
        ack(&mut cc, 1, now, sent, 60, ms(100));
        assert_eq!(cwnd(&cc, 1), 2400.0);
        assert_eq!(cc.reno_window(PathId(1)).unwrap().ssthresh(), 2400.0);
        // Still α1 = −1/2: path 0 is in recovery, so M compares its ssthresh (2062.5) with 2400.
        assert_eq!(cc.metrics(PathId(1)).unwrap().extra("epsilon"), Some(-0.5));
    }

    #[test]
    fn loss_intervals_shift_only_when_bytes_were_acknowledged() {
        let (mut cc, t0) = two_paths();
        let (now, sent) = fresh(t0);
        ack(&mut cc, 0, now, sent, 2, ms(20)); // ℓ1 = 2400, ℓ2 = 12 000
        assert_eq!(cc.inter_loss_bytes(PathId(0)), Some(12_000));
        // New recovery period: ℓ2 = 2400, ℓ1 = 0 → ℓ = 2400.
        loss(&mut cc, 0, now + ms(1), now, ms(20));
        assert_eq!(cc.inter_loss_bytes(PathId(0)), Some(2_400));
        // Another new period with nothing acknowledged since (Linux's loss3 == loss2): no shift.
        loss(&mut cc, 0, now + ms(3), now + ms(2), ms(20));
        assert_eq!(cc.inter_loss_bytes(PathId(0)), Some(2_400));
        // A loss inside the current period (packet sent before it began) does not shift either.
        ack(&mut cc, 0, now + ms(4), now + ms(1), 1, ms(20)); // sent before the period: ℓ1 still counts it
        loss(&mut cc, 0, now + ms(5), now + ms(2), ms(20));
        assert_eq!(cc.inter_loss_bytes(PathId(0)), Some(2_400));
    }

    #[test]
    fn one_path_is_newreno() {
        let t0 = t0();
        let mut cc = Olia::new(OliaConfig::default());
        setup_ca(&mut cc, 0, t0, 12_000, ms(20));
        let (now, sent) = fresh(t0);
        ack(&mut cc, 0, now, sent, 3, ms(20));
        let mut w = 12_000.0_f64;
        for _ in 0..3 {
            w += 1200.0 * 1200.0 / w;
        }
        assert_eq!(cwnd(&cc, 0).to_bits(), w.to_bits());
        assert_eq!(cc.name(), "olia");
    }

    #[test]
    fn from_params_accepts_and_rejects() {
        let build = |spec: &str| {
            let s = Spec::parse(spec, "algorithm").unwrap();
            let mut p = Params::new(&s.name, s.params);
            from_params(&mut p).and_then(|cc| p.finish(PARAMS).map(|()| cc).map_err(CcError::from))
        };
        assert_eq!(build("olia").unwrap().name(), "olia");
        assert!(build("olia:max_window=1000000").is_ok());
        assert!(matches!(
            build("olia:max_window=-1"),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build("olia:scale=10"),
            Err(CcError::Spec(crate::SpecError::UnknownParameter { .. }))
        ));
    }
}
