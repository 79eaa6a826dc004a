//! OLIA, the Opportunistic Linked Increases Algorithm (Khalili et al., IEEE/ACM ToN 2013), as specified in
//! cc.md §5 after the Linux `mptcp_olia.c` and the mp-quic `olia.go` port, on QUIC's byte-counted windows.
//!
//! Each path keeps a [`RenoWindow`], so slow start, the recovery period, the halving on loss, persistent
//! congestion and the app-limited rule are exactly RFC 9002's. OLIA replaces the congestion-avoidance
//! increase. Per ACK on path `r`, in packets (cc.md §5):
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

use crate::lia::{PathSample, max_window_param, rtt_secs};
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

/// OLIA's sets `B`, `M` and `α_r` for every path (cc.md §5), in the order given.
///
/// `n` is the number of usable paths (finite window and `ℓ`, positive RTT); unusable entries get the default
/// role (α = 0, in no set). `α_r = 1/(n·|B\M|)` for `r ∈ B\M`, `−1/(n·|M|)` for `r ∈ M` when `B\M ≠ ∅`,
/// and 0 otherwise.
pub fn roles(paths: &[OliaPath]) -> Vec<OliaRole> {
    let ok: Vec<&OliaPath> = paths.iter().filter(|p| usable(p)).collect();
    let n = ok.len() as f64;
    let max_cwnd = ok.iter().map(|p| p.cwnd).fold(f64::NEG_INFINITY, f64::max);
    let quality = |p: &OliaPath| p.inter_loss / (p.rtt * p.rtt);
    let best = ok.iter().map(|p| quality(p)).fold(f64::NEG_INFINITY, f64::max);
    let mut out: Vec<OliaRole> = paths
        .iter()
        .map(|p| {
            if usable(p) {
                OliaRole {
                    epsilon: 0.0,
                    in_best: quality(p) == best,
                    in_max: p.cwnd == max_cwnd,
                }
            } else {
                OliaRole::default()
            }
        })
        .collect();
    let b_not_m = out.iter().filter(|r| r.in_best && !r.in_max).count() as f64;
    let m = out.iter().filter(|r| r.in_max).count() as f64;
    if b_not_m > 0.0 {
        for r in &mut out {
            if r.in_best && !r.in_max {
                r.epsilon = 1.0 / (n * b_not_m);
            } else if r.in_max {
                r.epsilon = -1.0 / (n * m);
            }
        }
    }
    out
}

/// OLIA's increase of path `r` in bytes (negative for a decrease) for `bytes` acknowledged bytes:
/// `bytes · mss · [cwnd_r / (cwnd_r + Σ_{p≠r} cwnd_p · rtt_r/rtt_p)² + epsilon / cwnd_r]`.
///
/// `others` are the other paths (windows in bytes, RTTs in seconds); unusable ones are skipped. Returns 0
/// for degenerate inputs (non-positive window or RTT).
pub fn increase(bytes: f64, mss: f64, cwnd_r: f64, rtt_r: f64, others: &[PathSample], epsilon: f64) -> f64 {
    if !(cwnd_r > 0.0 && rtt_r > 0.0 && cwnd_r.is_finite() && rtt_r.is_finite()) {
        return 0.0;
    }
    let den = cwnd_r
        + others
            .iter()
            .filter(|p| p.cwnd.is_finite() && p.cwnd >= 0.0 && p.rtt.is_finite() && p.rtt > 0.0)
            .map(|p| p.cwnd * rtt_r / p.rtt)
            .sum::<f64>();
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

    /// Paths with an RTT sample, as OLIA sees them (`path`'s RTT replaced by `over` when given).
    fn olia_paths(&self, over: Option<(PathId, Duration)>) -> Vec<(PathId, OliaPath)> {
        self.paths
            .iter()
            .filter_map(|(id, p)| {
                let rtt = match over {
                    Some((path, rtt)) if path == id => Some(rtt),
                    _ => p.window.srtt(),
                };
                Some((
                    id,
                    OliaPath {
                        cwnd: p.crt_cwnd(),
                        rtt: rtt_secs(rtt)?,
                        inter_loss: p.inter_loss() as f64,
                    },
                ))
            })
            .collect()
    }

    /// The role of `path` among the current paths.
    fn role(&self, path: PathId, over: Option<(PathId, Duration)>) -> OliaRole {
        let all = self.olia_paths(over);
        let list: Vec<OliaPath> = all.iter().map(|(_, p)| *p).collect();
        all.iter()
            .zip(roles(&list))
            .find(|((id, _), _)| *id == path)
            .map(|(_, r)| r)
            .unwrap_or_default()
    }

    /// RFC 9002 congestion response with decrease factor `beta` (0.5 for OLIA itself), after OLIA's loss
    /// bookkeeping; returns whether a new recovery period started.
    pub(crate) fn on_congestion_with_beta(&mut self, ev: &CongestionEvent, beta: f64) -> bool {
        let Some(p) = self.paths.get_mut(ev.path) else {
            return false;
        };
        if p.window.will_reduce(ev) && p.since_loss != 0 {
            // cc.md §5: loss1 = loss2, loss2 = loss3 (only if loss3 ≠ loss2).
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
        let epsilon = self.role(ev.path, over).epsilon;
        let rtt_r = rtt_secs(Some(ev.rtt.smoothed)).unwrap_or(crate::lia::MIN_RTT_SECS);
        let others: Vec<PathSample> = self
            .olia_paths(over)
            .into_iter()
            .filter(|(id, _)| *id != ev.path)
            .map(|(_, p)| PathSample {
                cwnd: p.cwnd,
                rtt: p.rtt,
            })
            .collect();
        let Some(p) = self.paths.get_mut(ev.path) else {
            return;
        };
        let mut pending_decrease = 0.0_f64;
        p.window.on_ack(ev, |w, packet| {
            let cwnd = (w.cwnd() - pending_decrease).max(w.min_window());
            let step = increase(
                packet.bytes as f64,
                w.max_datagram_size() as f64,
                cwnd,
                rtt_r,
                &others,
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
        // cc.md §5: standard halving.
        self.on_congestion_with_beta(ev, LOSS_REDUCTION_FACTOR);
    }

    fn window(&self, path: PathId) -> u64 {
        self.paths.get(path).map_or(0, |p| p.window.window())
    }

    fn pacing_rate(&self, path: PathId) -> Option<u64> {
        self.paths.get(path).and_then(|p| p.window.pacing_rate())
    }

    fn metrics(&self, path: PathId) -> Option<CcMetrics> {
        let p = self.paths.get(path)?;
        let role = self.role(path, None);
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
