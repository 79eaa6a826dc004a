//! Coupled CUBIC (Lee, Kim, Kwon, Han, CSSE 45(1), 2023): CUBIC on large-BDP paths, LIA
//! (RFC 6356) on small-BDP paths, coupled through LIA's α in which each CUBIC path appears as a
//! *virtual Reno window*.
//!
//! Per event (Lee et al., CSSE 2023, flowchart; "α1 and α2 are calculated iteratively as the algorithm goes on"):
//! 1. For each large-BDP (CUBIC) path, `VirtualW_RENO = √(1.5/RTT)·(W/k)^{2/3}` with `W` its CUBIC window in
//!    packets, `RTT` its smoothed RTT in seconds and `k = (C(3+β)/(4(1−β)))^{1/4}` (= 1.0538 for C = 0.4,
//!    β = 0.7; the paper rounds it to 1.054). This is the p-free closed form of Eqs. (8)–(10) of Coupled CUBIC (Lee et
//!    al., CSSE 2023).
//! 2. `α1` = LIA's Eq. (1) `Σw · max(w/rtt²) / (Σ w/rtt)²` over the virtual Reno windows of the CUBIC paths
//!    and the real windows of the LIA paths.
//! 3. A CUBIC path's window is `√α1 · W_CUBIC` (Eq. 11). Its CUBIC state evolves exactly as
//!    [`crate::cubic`]'s on the same events; only the window the path may use is scaled.
//! 4. Variant `a1`: the LIA paths increase with `α1` (and the `Σw` of step 2). Variant `a2`: `α2` = Eq. (1)
//!    recomputed with the *virtual LIA window* `VirtualW_RENO·√α1` for the CUBIC paths, and the LIA paths
//!    increase with `α2` (and that set's `Σw`).
//! 5. LIA paths: `w_r += min(α·bytes·MSS/Σw, bytes·MSS/w_r)` per acknowledged packet in congestion
//!    avoidance, RFC 9002 slow start / recovery / halving on congestion (a [`RenoWindow`]).
//!
//! Choices where the paper is silent (this project's, documented here and reported in metrics):
//! * **Classification** (the paper says only "if the path BDP is large"): with `classify=auto` a path is
//!   large-BDP when its BDP estimate is at least `large_bdp_packets` packets (default
//!   [`DEFAULT_LARGE_BDP_PACKETS`] = 1000, between the study's 100 Mbps/20 ms path, ≈ 171 packets of 1460
//!   bytes, and its 500 Mbps/100 ms path, ≈ 4280), and stops being one when the estimate falls below
//!   [`HYSTERESIS`] × that threshold. The estimate is `max delivery rate × min RTT / MSS` when the connection
//!   supplies rate samples (max over the last 5–10 s, [`RATE_BUCKET`] buckets), else the path's window in
//!   packets. It is re-evaluated after each event of the path. `classify=cubic` / `classify=lia` force it.
//! * On a switch CUBIC → LIA the LIA window starts at the CUBIC path's (scaled) window; on LIA → CUBIC the
//!   CUBIC state restarts like a first slow-start exit (`K = 0`, `W_max = cwnd_epoch`).
//! * The scale `√α1` is capped at 1, i.e. `√min(α1, 1)` (for steps 3 and 4): a CUBIC path is never more
//!   aggressive than plain CUBIC, as LIA's `min(…, 1/w_r)` never lets a LIA path beat Reno. `α1` itself is
//!   reported uncapped. The paper's Eq. (11) scales by `√α1` without a cap: parameter `cap_scale=off` runs
//!   that form (when `α1 > 1` a CUBIC path's window is then `√α1 · W_CUBIC`, above plain CUBIC's, still
//!   clamped to `max_window`). The default stays capped.
//! * α, α2 and the sums are recomputed at the start of every acknowledgement (with the acking path's new
//!   RTT) and after every event; paths without an RTT sample are left out of them. With one path (or one
//!   path with an RTT sample) α1 = α2 = 1 and the scale is exactly 1: a lone large-BDP path runs exactly
//!   [`crate::cubic`] and a lone small-BDP path exactly [`crate::newreno`].
//! * RFC 6356's refinements for inflated windows during fast retransmit and for app-limited subflows are not
//!   applied: RFC 9002 reduces at once, and app-limited paths do not grow.
//! * A CUBIC path's state sees the path's real events. Since the path only sends `√α1·W_CUBIC`, its ACK
//!   clock (slow-start growth and the per-ACK approach to CUBIC's time-based target) runs at that rate: the
//!   CUBIC curve itself (K, `W_max`) is unchanged, but the window lags it a little more than plain CUBIC's.
//!   `ssthresh` is reported scaled like the window.
//!
//! Metrics extras (per path): `alpha1`, `alpha2` (connection-wide), `virtual_reno_cwnd` (bytes: the window
//! the path contributes to α1, i.e. `VirtualW_RENO` for a CUBIC path and the real window for a LIA path),
//! `virtual_lia_cwnd` (bytes: the same for α2), `cubic_scale` (`√min(α1, 1)`, or `√α1` with `cap_scale=off`,
//! on CUBIC paths; 1 on LIA paths),
//! `large_bdp` (0/1), `bdp_packets` (the classification estimate), then CUBIC's `w_max`, `k`, `w_est`,
//! `cwnd_prior` (meaningful on CUBIC paths only).

use std::time::{Duration, Instant};

use crate::cubic::{CubicConfig, CubicWindow};
use crate::lia;
use crate::params::Params;
use crate::window::LOSS_REDUCTION_FACTOR;
use crate::{
    AckEvent, AckedPacket, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathId,
    PathMap, RenoWindow, SentEvent,
};

/// Registry name.
pub const NAME: &str = "ccubic";

/// Default large-BDP threshold in packets (see the module documentation).
pub const DEFAULT_LARGE_BDP_PACKETS: u64 = 1000;

/// A large-BDP path becomes small-BDP again when its BDP estimate falls below this fraction of the threshold.
pub const HYSTERESIS: f64 = 0.5;

/// Length of one bucket of the windowed maximum of the delivery rate (the max spans the current and previous
/// bucket: 5 to 10 s).
pub const RATE_BUCKET: Duration = Duration::from_secs(5);

/// Smallest RTT used in α, in seconds (guards against division by zero).
const MIN_RTT_SECS: f64 = 1e-6;

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &[
    "variant",
    "classify",
    "large_bdp_packets",
    "c",
    "beta",
    "fast_convergence",
    "max_window",
    "cap_scale",
];

/// Builds the controller from registry parameters (consumes the keys it knows; the registry rejects the rest).
///
/// * `variant`: `a1` (default) or `a2` (see the module documentation).
/// * `classify`: `auto` (default), `cubic` or `lia`.
/// * `large_bdp_packets`: large-BDP threshold in packets, in `[1, 2^32]` (default 1000).
/// * `cap_scale`: cap the CUBIC paths' scale at 1, `√min(α1, 1)` (default on), or scale by the paper's
///   uncapped `√α1` (off).
/// * `c`, `beta`, `fast_convergence`, `max_window`: as for [`crate::cubic`].
pub fn from_params(params: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
    let variant = match params.choice("variant", "a1", &["a1", "a2"])? {
        "a2" => Variant::A2,
        _ => Variant::A1,
    };
    let classify = match params.choice("classify", "auto", &["auto", "cubic", "lia"])? {
        "cubic" => Classify::Cubic,
        "lia" => Classify::Lia,
        _ => Classify::Auto,
    };
    let large_bdp_packets = params.u64("large_bdp_packets", DEFAULT_LARGE_BDP_PACKETS, 1, 1 << 32)?;
    let cap_scale = params.bool("cap_scale", true)?;
    let cubic = CubicConfig::from_params(params)?;
    Ok(Box::new(CCubic::new(CCubicConfig {
        cubic,
        variant,
        classify,
        large_bdp_packets,
        cap_scale,
    })))
}

/// Which α drives the small-BDP (LIA) paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Variant {
    /// `α1`: computed with the CUBIC paths' virtual Reno windows.
    #[default]
    A1,
    /// `α2`: recomputed with the CUBIC paths' virtual LIA windows `VirtualW_RENO·√α1`.
    A2,
}

/// How paths are classified as large-BDP (CUBIC) or small-BDP (LIA).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Classify {
    /// By the BDP estimate against `large_bdp_packets`, with hysteresis.
    #[default]
    Auto,
    /// Every path runs CUBIC.
    Cubic,
    /// Every path runs LIA.
    Lia,
}

/// Coupled CUBIC's configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CCubicConfig {
    /// CUBIC parameters of the large-BDP paths (`C`, `β`, fast convergence) and the window cap of all paths.
    pub cubic: CubicConfig,
    /// Which α drives the LIA paths.
    pub variant: Variant,
    /// Path classification rule.
    pub classify: Classify,
    /// Large-BDP threshold in packets (for [`Classify::Auto`]).
    pub large_bdp_packets: u64,
    /// Scale the CUBIC paths by `√min(α1, 1)` (true, the default) or by the paper's uncapped `√α1`.
    pub cap_scale: bool,
}

impl Default for CCubicConfig {
    fn default() -> Self {
        CCubicConfig {
            cubic: CubicConfig::default(),
            variant: Variant::A1,
            classify: Classify::Auto,
            large_bdp_packets: DEFAULT_LARGE_BDP_PACKETS,
            cap_scale: true,
        }
    }
}

/// `(C(3+β)/(4(1−β)))^{1/4}`: the coefficient of CUBIC's response function `W = k·(RTT/p)^{3/4}` (Lee et al., CSSE 2023
/// Eq. 9; 1.0538 for C = 0.4, β = 0.7).
pub fn cubic_response_coefficient(c: f64, beta: f64) -> f64 {
    (c * (3.0 + beta) / (4.0 * (1.0 - beta))).powf(0.25)
}

/// Coupled CUBIC (Lee et al., CSSE 2023) `VirtualW_RENO = √(1.5/RTT)·(W/k)^{2/3}`, in packets, for a CUBIC window of
/// `w_cubic_packets` packets at `rtt_secs` seconds (`k` from [`cubic_response_coefficient`]). 0 for non-positive
/// inputs.
pub fn virtual_reno_packets(w_cubic_packets: f64, rtt_secs: f64, c: f64, beta: f64) -> f64 {
    virtual_reno_packets_with(w_cubic_packets, rtt_secs, cubic_response_coefficient(c, beta))
}

/// [`virtual_reno_packets`] with the coefficient `k` computed beforehand (it depends on the configuration
/// only, and the controller evaluates this at every acknowledgement).
fn virtual_reno_packets_with(w_cubic_packets: f64, rtt_secs: f64, k: f64) -> f64 {
    if w_cubic_packets.is_nan()
        || w_cubic_packets <= 0.0
        || rtt_secs.is_nan()
        || rtt_secs <= 0.0
        || k.is_nan()
        || k <= 0.0
    {
        return 0.0;
    }
    let v = (1.5 / rtt_secs).sqrt() * (w_cubic_packets / k).powf(2.0 / 3.0);
    if v.is_finite() { v } else { 0.0 }
}

/// LIA's α (RFC 6356 §3, Eq. 1) over `(window, rtt)` pairs, computed by [`crate::lia::alpha`].
/// Returns `(α, Σw, number of pairs)`; α is 1 when it is undefined. The pairs are walked, not collected (this
/// runs twice per acknowledgement).
fn lia_alpha(paths: impl Iterator<Item = (f64, f64)> + Clone) -> (f64, f64, usize) {
    let samples = paths.map(|(cwnd, rtt)| lia::PathSample { cwnd, rtt });
    let alpha = lia::alpha_of(samples.clone()).filter(|a| *a > 0.0).unwrap_or(1.0);
    (alpha, lia::cwnd_total_of(samples.clone()), samples.count())
}

/// RFC 6356 per-packet increase in bytes ([`crate::lia::increase`]); NewReno's when the total is unusable.
fn lia_increase(alpha: f64, sum_w: f64, w: &RenoWindow, packet: &AckedPacket) -> f64 {
    if sum_w.is_nan() || sum_w <= 0.0 {
        return w.reno_increase(packet);
    }
    let mss = w.max_datagram_size() as f64;
    lia::increase(alpha, packet.bytes as f64, mss, sum_w, w.cwnd())
}

#[derive(Clone, Debug)]
struct PathState {
    cubic: CubicWindow,
    large_bdp: bool,
    srtt: Option<f64>,
    min_rtt: Option<f64>,
    rate_cur: u64,
    rate_prev: u64,
    bucket_start: Option<Instant>,
    bdp_packets: f64,
    /// The path's window in α1's set (virtual Reno window for CUBIC paths), bytes.
    w1: f64,
    /// The path's window in α2's set (virtual LIA window for CUBIC paths), bytes.
    w2: f64,
    /// What [`CongestionController::window`] answers, computed after every change of the controller's
    /// state (the connection asks several times per packet).
    window: u64,
    /// What [`CongestionController::pacing_rate`] answers, computed with `window`.
    pacing_rate: Option<u64>,
}

impl PathState {
    fn mss(&self) -> f64 {
        self.cubic.reno().max_datagram_size() as f64
    }

    fn update_rate(&mut self, now: Instant, rate: u64) {
        match self.bucket_start {
            Some(start) if now.saturating_duration_since(start) < RATE_BUCKET => {}
            Some(start) => {
                let elapsed = now.saturating_duration_since(start);
                self.rate_prev = if elapsed < RATE_BUCKET.saturating_mul(2) {
                    self.rate_cur
                } else {
                    0
                };
                self.rate_cur = 0;
                self.bucket_start = Some(now);
            }
            None => self.bucket_start = Some(now),
        }
        self.rate_cur = self.rate_cur.max(rate);
    }

    fn max_rate(&self) -> u64 {
        self.rate_cur.max(self.rate_prev)
    }

    /// The window in use: the CUBIC window scaled by `scale` on a large-BDP path (within the window's
    /// bounds), the path's own window otherwise.
    fn actual_cwnd(&self, scale: f64) -> f64 {
        let cwnd = self.cubic.cwnd();
        if self.large_bdp && scale != 1.0 {
            let w = self.cubic.reno();
            (cwnd * scale).max(w.min_window()).min(w.max_window())
        } else {
            cwnd
        }
    }

    /// Recomputes the answers of `window` and `pacing_rate` from the path's state and `scale`.
    fn refresh(&mut self, scale: f64) {
        let actual = self.actual_cwnd(scale);
        self.window = if self.large_bdp && scale != 1.0 {
            actual as u64
        } else {
            self.cubic.window()
        };
        self.pacing_rate = self.cubic.pacing_rate_for(actual);
    }
}

/// Coupled CUBIC over all paths of a connection.
#[derive(Clone, Debug)]
pub struct CCubic {
    config: CCubicConfig,
    paths: PathMap<PathState>,
    alpha1: f64,
    alpha2: f64,
    sum1: f64,
    sum2: f64,
    /// `√min(α1, 1)` (or `√α1` uncapped), exactly 1 with at most one path in α.
    scale: f64,
    /// Paths in α (those with an RTT sample).
    n_alpha: usize,
    /// [`cubic_response_coefficient`] of the configuration's `C` and `β`.
    k: f64,
}

impl CCubic {
    /// A controller with no paths yet.
    pub fn new(config: CCubicConfig) -> Self {
        CCubic {
            config,
            paths: PathMap::new(),
            alpha1: 1.0,
            alpha2: 1.0,
            sum1: 0.0,
            sum2: 0.0,
            scale: 1.0,
            n_alpha: 0,
            k: cubic_response_coefficient(config.cubic.c, config.cubic.beta),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &CCubicConfig {
        &self.config
    }

    /// Current `α1` (uncapped).
    pub fn alpha1(&self) -> f64 {
        self.alpha1
    }

    /// Current `α2`.
    pub fn alpha2(&self) -> f64 {
        self.alpha2
    }

    /// The factor applied to the CUBIC windows, `√min(α1, 1)` (or `√α1` with [`CCubicConfig::cap_scale`]
    /// off).
    pub fn cubic_scale(&self) -> f64 {
        self.scale
    }

    /// Whether `path` is currently classified large-BDP (runs CUBIC).
    pub fn is_large_bdp(&self, path: PathId) -> Option<bool> {
        self.paths.get(path).map(|p| p.large_bdp)
    }

    /// The CUBIC state of `path` (its window is the unscaled `W_CUBIC`).
    pub fn cubic_window(&self, path: PathId) -> Option<&CubicWindow> {
        self.paths.get(path).map(|p| &p.cubic)
    }

    /// Recomputes the virtual windows, α1, α2, the sums and the scale from every path's state, and each
    /// path's window and pacing rate. Every change of the controller's state that can move them ends here,
    /// so the answers of `window` and `pacing_rate` are always those of the current state.
    fn recompute(&mut self) {
        let k = self.k;
        for (_, ps) in self.paths.iter_mut() {
            ps.w1 = match ps.srtt {
                Some(rtt) if ps.large_bdp => {
                    let mss = ps.mss();
                    virtual_reno_packets_with(ps.cubic.cwnd() / mss, rtt.max(MIN_RTT_SECS), k) * mss
                }
                _ => ps.cubic.cwnd(),
            };
        }
        let rtt_of = |ps: &PathState| ps.srtt.map(|r| r.max(MIN_RTT_SECS));
        let (a1, s1, n) = lia_alpha(
            self.paths
                .values()
                .filter_map(|ps| rtt_of(ps).map(|r| (ps.w1, r))),
        );
        self.n_alpha = n;
        if n <= 1 {
            self.alpha1 = 1.0;
            self.scale = 1.0;
        } else {
            self.alpha1 = a1;
            // Coupled CUBIC (Lee et al., CSSE 2023) Eq. (11): W = √α1 · W_CUBIC; capped at 1 by default.
            self.scale = if self.config.cap_scale {
                a1.min(1.0).sqrt()
            } else {
                a1.sqrt()
            };
        }
        self.sum1 = s1;
        let scale = self.scale;
        for (_, ps) in self.paths.iter_mut() {
            ps.w2 = if ps.large_bdp { ps.w1 * scale } else { ps.w1 };
        }
        let (a2, s2, _) = lia_alpha(
            self.paths
                .values()
                .filter_map(|ps| rtt_of(ps).map(|r| (ps.w2, r))),
        );
        self.alpha2 = if n <= 1 { 1.0 } else { a2 };
        self.sum2 = s2;
        for (_, ps) in self.paths.iter_mut() {
            ps.refresh(scale);
        }
    }

    /// Re-evaluates the classification of `path` (module documentation) and switches its mode if needed.
    fn classify(&mut self, path: PathId) {
        let threshold = self.config.large_bdp_packets as f64;
        let classify = self.config.classify;
        let Some(actual) = self.paths.get(path).map(|ps| ps.actual_cwnd(self.scale)) else {
            return;
        };
        let Some(ps) = self.paths.get_mut(path) else {
            return;
        };
        let mss = ps.mss();
        ps.bdp_packets = match ps.min_rtt {
            Some(min_rtt) if ps.max_rate() > 0 => ps.max_rate() as f64 * min_rtt / mss,
            _ => actual / mss,
        };
        let want = match classify {
            Classify::Cubic => true,
            Classify::Lia => false,
            Classify::Auto if ps.large_bdp => ps.bdp_packets >= threshold * HYSTERESIS,
            Classify::Auto => ps.bdp_packets >= threshold,
        };
        if want == ps.large_bdp {
            return;
        }
        if want {
            ps.cubic.restart();
        } else {
            ps.cubic.reno_mut().set_cwnd(actual);
        }
        ps.large_bdp = want;
    }
}

impl CongestionController for CCubic {
    fn name(&self) -> &'static str {
        NAME
    }

    fn on_path_added(&mut self, path: PathId, _now: Instant, max_datagram_size: u16) {
        let cubic = CubicWindow::new(&self.config.cubic, max_datagram_size);
        let packets = cubic.reno().cwnd_packets();
        let large_bdp = match self.config.classify {
            Classify::Cubic => true,
            Classify::Lia => false,
            Classify::Auto => packets >= self.config.large_bdp_packets as f64,
        };
        self.paths.insert(
            path,
            PathState {
                cubic,
                large_bdp,
                srtt: None,
                min_rtt: None,
                rate_cur: 0,
                rate_prev: 0,
                bucket_start: None,
                bdp_packets: packets,
                w1: 0.0,
                w2: 0.0,
                window: 0,
                pacing_rate: None,
            },
        );
        self.recompute();
    }

    fn on_path_removed(&mut self, path: PathId) {
        self.paths.remove(path);
        self.recompute();
    }

    fn on_max_datagram_size(&mut self, path: PathId, max_datagram_size: u16) {
        if let Some(ps) = self.paths.get_mut(path) {
            ps.cubic.set_max_datagram_size(max_datagram_size);
            self.recompute();
        }
    }

    fn on_packet_sent(&mut self, ev: &SentEvent) {
        if let Some(ps) = self.paths.get_mut(ev.path) {
            // Bytes in flight enter neither the window nor the pacing rate: the stored answers stay right
            // (the test `stored_window_and_pacing_rate_follow_every_event` checks it).
            ps.cubic.on_packet_sent(ev);
        }
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        let Some(ps) = self.paths.get_mut(ev.path) else {
            return;
        };
        ps.srtt = Some(ev.rtt.smoothed.as_secs_f64());
        ps.min_rtt = Some(ev.rtt.min.as_secs_f64());
        if let Some(rs) = ev.rate_sample {
            ps.update_rate(ev.now, rs.delivery_rate);
        }
        self.recompute();
        let (alpha, sum) = match self.config.variant {
            Variant::A1 => (self.alpha1, self.sum1),
            Variant::A2 => (self.alpha2, self.sum2),
        };
        let single = self.n_alpha <= 1;
        let Some(ps) = self.paths.get_mut(ev.path) else {
            return;
        };
        if ps.large_bdp {
            ps.cubic.on_ack(ev);
        } else if single {
            // One path: exactly NewReno (RFC 9002 §7.3.3).
            ps.cubic.reno_mut().on_ack(ev, RenoWindow::reno_increase);
        } else {
            ps.cubic
                .reno_mut()
                .on_ack(ev, |w, p| lia_increase(alpha, sum, w, p));
        }
        self.classify(ev.path);
        self.recompute();
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        let Some(ps) = self.paths.get_mut(ev.path) else {
            return;
        };
        ps.srtt = Some(ev.rtt.smoothed.as_secs_f64());
        ps.min_rtt = Some(ev.rtt.min.as_secs_f64());
        if ps.large_bdp {
            ps.cubic.on_congestion(ev);
        } else {
            // RFC 6356: the decrease is unchanged from standard TCP (halving; RFC 9002 §7.3.2).
            ps.cubic.reno_mut().on_congestion(ev, LOSS_REDUCTION_FACTOR);
        }
        self.classify(ev.path);
        self.recompute();
    }

    fn window(&self, path: PathId) -> u64 {
        self.paths.get(path).map_or(0, |ps| ps.window)
    }

    fn pacing_rate(&self, path: PathId) -> Option<u64> {
        self.paths.get(path).and_then(|ps| ps.pacing_rate)
    }

    /// The state without building the metrics (they allocate their extras): read after every acknowledgement.
    fn state(&self, path: PathId) -> Option<&'static str> {
        self.paths.get(path).map(|ps| ps.cubic.reno().state())
    }

    fn metrics(&self, path: PathId) -> Option<CcMetrics> {
        let ps = self.paths.get(path)?;
        let reno = ps.cubic.reno();
        let scale = if ps.large_bdp { self.scale } else { 1.0 };
        let actual = ps.actual_cwnd(self.scale);
        let mut extras = vec![
            Metric {
                name: "alpha1",
                value: self.alpha1,
            },
            Metric {
                name: "alpha2",
                value: self.alpha2,
            },
            Metric {
                name: "virtual_reno_cwnd",
                value: ps.w1,
            },
            Metric {
                name: "virtual_lia_cwnd",
                value: ps.w2,
            },
            Metric {
                name: "cubic_scale",
                value: scale,
            },
            Metric {
                name: "large_bdp",
                value: if ps.large_bdp { 1.0 } else { 0.0 },
            },
            Metric {
                name: "bdp_packets",
                value: ps.bdp_packets,
            },
        ];
        extras.extend(ps.cubic.extras());
        Some(CcMetrics {
            cwnd: self.window(path),
            ssthresh: reno
                .ssthresh()
                .is_finite()
                .then(|| (reno.ssthresh() * scale) as u64),
            pacing_rate: ps.cubic.pacing_rate_for(actual),
            state: reno.state(),
            extras,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cubic::CubicConfig;
    use crate::newreno::NewRenoConfig;
    use crate::params::Spec;
    use crate::{RateSample, RttSnapshot, Uncoupled};

    #[allow(clippy::disallowed_methods)] // test set-up needs a base instant
    fn t0() -> Instant {
        Instant::now()
    }

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    fn build(s: &str) -> Result<Box<dyn CongestionController>, CcError> {
        let spec = Spec::parse(s, "algorithm")?;
        let mut p = Params::new(&spec.name, spec.params);
        let cc = from_params(&mut p)?;
        p.finish(PARAMS)?;
        Ok(cc)
    }

    #[allow(clippy::too_many_arguments)]
    fn ack(
        cc: &mut dyn CongestionController,
        path: u32,
        now: Instant,
        sent: Instant,
        n: usize,
        bytes: u64,
        rtt: Duration,
        rate: Option<u64>,
    ) {
        let packets = vec![
            AckedPacket {
                bytes,
                time_sent: sent
            };
            n
        ];
        cc.on_ack(&AckEvent {
            path: PathId(path),
            now,
            rtt: RttSnapshot::from_rtt(rtt),
            packets: &packets,
            prior_bytes_in_flight: bytes * n as u64,
            bytes_in_flight: 0,
            app_limited: false,
            rate_sample: rate.map(|r| RateSample {
                delivery_rate: r,
                delivered: bytes * n as u64,
                interval: rtt,
                prior_delivered: 0,
                total_delivered: bytes * n as u64,
                rtt,
                is_app_limited: false,
                prior_in_flight: bytes * n as u64,
                newly_acked: bytes * n as u64,
                newly_lost: 0,
            }),
        });
    }

    fn loss(path: u32, now: Instant, sent: Instant, rtt: Duration) -> CongestionEvent {
        CongestionEvent {
            path: PathId(path),
            now,
            sent_time: sent,
            lost_bytes: 1200,
            bytes_in_flight: 0,
            persistent_congestion: false,
            ecn: false,
            rtt: RttSnapshot::from_rtt(rtt),
        }
    }

    /// A deterministic pseudo-random event sequence (64-bit LCG), applied to every controller in `ccs`;
    /// `check` runs after each event.
    fn random_events(
        ccs: &mut [&mut dyn CongestionController],
        paths: &[u32],
        steps: usize,
        mut check: impl FnMut(&[&mut dyn CongestionController], u32),
    ) {
        let t = t0();
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move |m: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % m.max(1)
        };
        for &p in paths {
            for cc in ccs.iter_mut() {
                cc.on_path_added(PathId(p), t, 1200);
            }
        }
        let mut now = t;
        for _ in 0..steps {
            now += Duration::from_micros(next(50_000));
            let path = paths[next(paths.len() as u64 + 1) as usize % paths.len()];
            let path = if next(50) == 0 { 99 } else { path }; // sometimes an unknown path
            let rtt = ms(next(300)); // zero RTTs included
            let snap = RttSnapshot::from_rtt(rtt);
            let back = Duration::from_micros(next(400_000));
            let sent = now.checked_sub(back).unwrap_or(now);
            let kind = next(20);
            let n = next(40) as usize + 1;
            let packets = vec![
                AckedPacket {
                    bytes: 1200,
                    time_sent: sent
                };
                n
            ];
            let rate = (next(3) == 0).then(|| RateSample {
                delivery_rate: next(200_000_000),
                delivered: 0,
                interval: rtt,
                prior_delivered: 0,
                total_delivered: 0,
                rtt,
                is_app_limited: false,
                prior_in_flight: 0,
                newly_acked: 0,
                newly_lost: 0,
            });
            for cc in ccs.iter_mut() {
                match kind {
                    0..=12 => cc.on_ack(&AckEvent {
                        path: PathId(path),
                        now,
                        rtt: snap,
                        packets: &packets,
                        prior_bytes_in_flight: 1200 * n as u64,
                        bytes_in_flight: 0,
                        app_limited: kind == 12,
                        rate_sample: rate,
                    }),
                    13..=17 => cc.on_congestion(&CongestionEvent {
                        path: PathId(path),
                        now,
                        sent_time: sent,
                        lost_bytes: if kind == 17 { 0 } else { 1200 },
                        bytes_in_flight: 0,
                        persistent_congestion: kind == 16 && n < 4,
                        ecn: kind == 17,
                        rtt: snap,
                    }),
                    _ => cc.on_packet_sent(&SentEvent {
                        path: PathId(path),
                        now,
                        bytes: 1200,
                        bytes_in_flight: 1200 * n as u64,
                        app_limited: false,
                    }),
                }
            }
            check(ccs, path);
        }
    }

    fn assert_same(ccs: &[&mut dyn CongestionController], path: u32) {
        let (a, b) = (&ccs[0], &ccs[1]);
        let p = PathId(path);
        assert_eq!(a.window(p), b.window(p));
        assert_eq!(a.pacing_rate(p), b.pacing_rate(p));
        let (ma, mb) = (a.metrics(p), b.metrics(p));
        assert_eq!(ma.is_some(), mb.is_some());
        if let (Some(ma), Some(mb)) = (ma, mb) {
            assert_eq!((ma.cwnd, ma.ssthresh, ma.state), (mb.cwnd, mb.ssthresh, mb.state));
            for name in ["w_max", "k", "w_est"] {
                if let (Some(x), Some(y)) = (ma.extra(name), mb.extra(name)) {
                    assert_eq!(x.to_bits(), y.to_bits(), "{name}");
                }
            }
        }
    }

    #[test]
    fn one_large_bdp_path_is_exactly_cubic() {
        // (With `classify=auto` the random rate samples, some with zero RTT, would reclassify the path.)
        for spec in [
            "ccubic:classify=cubic",
            "ccubic:classify=cubic,variant=a2,fast_convergence=on",
        ] {
            let mut cubic: Box<dyn CongestionController> = Box::new(Uncoupled::new(CubicConfig::default()));
            let mut cc = build(spec).unwrap();
            random_events(&mut [&mut cubic, &mut cc], &[0], 20_000, assert_same);
            assert_eq!(cc.metrics(PathId(0)).unwrap().extra("large_bdp"), Some(1.0));
            assert_eq!(cc.metrics(PathId(0)).unwrap().extra("cubic_scale"), Some(1.0));
        }
    }

    #[test]
    fn one_small_bdp_path_is_exactly_newreno() {
        let mut reno: Box<dyn CongestionController> = Box::new(Uncoupled::new(NewRenoConfig::default()));
        let mut cc = build("ccubic:classify=lia").unwrap();
        random_events(&mut [&mut reno, &mut cc], &[0], 20_000, assert_same);
    }

    #[test]
    fn random_events_keep_windows_bounded_and_finite() {
        for spec in [
            "ccubic",
            "ccubic:variant=a2,large_bdp_packets=50",
            "ccubic:classify=cubic",
        ] {
            let mut cc = build(spec).unwrap();
            let mut dummy: Box<dyn CongestionController> = Box::new(Uncoupled::new(NewRenoConfig::default()));
            random_events(&mut [&mut cc, &mut dummy], &[0, 1, 2], 10_000, |ccs, _| {
                for p in 0..3 {
                    let w = ccs[0].window(PathId(p));
                    assert!((2400..=1 << 32).contains(&w), "{w}");
                    let m = ccs[0].metrics(PathId(p)).unwrap();
                    assert!(m.extras.iter().all(|e| e.value.is_finite()), "{m:?}");
                }
                assert_eq!(ccs[0].window(PathId(99)), 0);
            });
        }
    }

    /// A Coupled CUBIC whose `window` and `pacing_rate` check the stored answers against the formula applied
    /// to the state at the moment of the call (the way they were computed before answers were stored).
    #[derive(Debug)]
    struct Recomputing(CCubic);

    impl Recomputing {
        fn fresh(&self, path: PathId) -> (u64, Option<u64>) {
            let cc = &self.0;
            cc.paths.get(path).map_or((0, None), |ps| {
                let actual = if ps.large_bdp && cc.scale != 1.0 {
                    let w = ps.cubic.reno();
                    (ps.cubic.cwnd() * cc.scale)
                        .max(w.min_window())
                        .min(w.max_window())
                } else {
                    ps.cubic.cwnd()
                };
                let window = if ps.large_bdp && cc.scale != 1.0 {
                    actual as u64
                } else {
                    ps.cubic.window()
                };
                (window, ps.cubic.pacing_rate_for(actual))
            })
        }
    }

    impl CongestionController for Recomputing {
        fn name(&self) -> &'static str {
            self.0.name()
        }
        fn on_path_added(&mut self, path: PathId, now: Instant, mds: u16) {
            self.0.on_path_added(path, now, mds)
        }
        fn on_path_removed(&mut self, path: PathId) {
            self.0.on_path_removed(path)
        }
        fn on_max_datagram_size(&mut self, path: PathId, mds: u16) {
            self.0.on_max_datagram_size(path, mds)
        }
        fn on_packet_sent(&mut self, ev: &SentEvent) {
            self.0.on_packet_sent(ev)
        }
        fn on_ack(&mut self, ev: &AckEvent<'_>) {
            self.0.on_ack(ev)
        }
        fn on_congestion(&mut self, ev: &CongestionEvent) {
            self.0.on_congestion(ev)
        }
        fn window(&self, path: PathId) -> u64 {
            let w = self.0.window(path);
            assert_eq!(w, self.fresh(path).0, "stored window of {path:?}");
            w
        }
        fn pacing_rate(&self, path: PathId) -> Option<u64> {
            let r = self.0.pacing_rate(path);
            assert_eq!(r, self.fresh(path).1, "stored pacing rate of {path:?}");
            r
        }
        fn metrics(&self, path: PathId) -> Option<CcMetrics> {
            self.0.metrics(path)
        }
    }

    #[test]
    fn stored_window_and_pacing_rate_follow_every_event() {
        let default = CCubicConfig::default();
        for config in [
            default,
            CCubicConfig {
                variant: Variant::A2,
                large_bdp_packets: 50,
                ..default
            },
            CCubicConfig {
                classify: Classify::Cubic,
                ..default
            },
        ] {
            let spec = format!("{config:?}");
            let mut cc = Recomputing(CCubic::new(config));
            let mut dummy: Box<dyn CongestionController> = Box::new(Uncoupled::new(NewRenoConfig::default()));
            let mut scaled = 0;
            random_events(&mut [&mut cc, &mut dummy], &[0, 1, 2], 10_000, |ccs, _| {
                for p in [0, 1, 2, 99] {
                    ccs[0].window(PathId(p));
                    ccs[0].pacing_rate(PathId(p));
                }
                scaled += usize::from(
                    ccs[0]
                        .metrics(PathId(0))
                        .is_some_and(|m| m.extras.iter().any(|e| e.name == "cubic_scale" && e.value != 1.0)),
                );
            });
            // The scaled branch (a large-BDP path with α1 < 1) was taken, not only the plain one.
            assert!(scaled > 0, "{spec}: the scale never left 1");
            cc.on_max_datagram_size(PathId(1), 1400);
            cc.on_path_removed(PathId(2));
            for p in [0, 1, 2] {
                cc.window(PathId(p));
                cc.pacing_rate(PathId(p));
            }
        }
    }

    /// Path 0: CUBIC window 5950 packets at RTT r0; path 1: LIA window 68 packets (in congestion avoidance)
    /// at RTT r1. MSS 1200, classification by window (threshold 1000 packets).
    fn two_paths(spec: &str, r0: Duration, r1: Duration) -> (Box<dyn CongestionController>, Instant) {
        let t = t0();
        let mut cc = build(spec).unwrap();
        cc.on_path_added(PathId(0), t, 1200);
        cc.on_path_added(PathId(1), t, 1200);
        // Slow start: 10 + 5940 = 5950 packets ≥ 1000 → large BDP.
        ack(cc.as_mut(), 0, t + r0, t, 5940, 1200, r0, None);
        // 10 + 126 = 136 packets, then a loss halves it to 68 (congestion avoidance).
        ack(cc.as_mut(), 1, t + r1, t, 126, 1200, r1, None);
        cc.on_congestion(&loss(1, t + r1 + ms(1), t + ms(1), r1));
        assert_eq!(cc.window(PathId(1)), 68 * 1200);
        (cc, t)
    }

    #[test]
    fn alpha1_alpha2_and_scale_by_hand() {
        // k = (0.4·3.7/(4·0.3))^{1/4} = 1.233333^{1/4} = 1.053829.
        assert!(close(cubic_response_coefficient(0.4, 0.7), 1.053_829, 1e-6));
        // Coupled CUBIC (Lee et al., CSSE 2023) check: W = 5926, RTT 0.1 → √15·(5926/1.053829)^{2/3} =
        // 3.872983·316.2278 = 1224.73.
        assert!(close(virtual_reno_packets(5926.0, 0.1, 0.4, 0.7), 1224.729, 1e-3));

        // Example A (the paper's averages: CUBIC 5950 packets at RTT 0.2 s, LIA 68 at 0.04 s).
        // VirtualW_RENO = √(1.5/0.2)·(5950/1.053829)^{2/3} = 2.738613·317.0700 = 868.3508.
        // w/rtt²: 868.3508/0.04 = 21708.77, 68/0.0016 = 42500 → max 42500.
        // Σw = 936.3508; Σw/rtt = 4341.754 + 1700 = 6041.754, squared 36502792.
        // α1 = 936.3508·42500/36502792 = 1.090188 > 1, so the scale √min(α1, 1) = 1 and α2 = α1.
        let (cc, _) = two_paths("ccubic", ms(200), ms(40));
        let m = cc.metrics(PathId(0)).unwrap();
        assert!(close(
            m.extra("virtual_reno_cwnd").unwrap() / 1200.0,
            868.3508,
            1e-3
        ));
        assert!(close(m.extra("alpha1").unwrap(), 1.090_188, 1e-6));
        assert!(close(m.extra("alpha2").unwrap(), 1.090_188, 1e-6));
        assert_eq!(m.extra("cubic_scale"), Some(1.0));
        assert_eq!(m.extra("large_bdp"), Some(1.0));
        assert_eq!(cc.window(PathId(0)), 5950 * 1200);
        assert_eq!(cc.metrics(PathId(1)).unwrap().extra("large_bdp"), Some(0.0));

        // Example B: RTTs 0.1 s and 0.02 s.
        // VirtualW_RENO = √15·317.0700 = 1228.0334; w/rtt²: 122803.3 and 68/0.0004 = 170000 (max);
        // Σw = 1296.0334; Σw/rtt = 12280.334 + 3400 = 15680.334, squared 245872873;
        // α1 = 1296.0334·170000/245872873 = 0.896096; scale = √0.896096 = 0.946623;
        // path 0 window = 0.946623·5950 = 5632.409 packets = 6758891 bytes.
        // Virtual LIA window = 1228.0334·0.946623 = 1162.4849; w/rtt²: 116248.5 and 170000 (max);
        // Σw = 1230.4849; Σw/rtt = 11624.849 + 3400 = 15024.849, squared 225746088;
        // α2 = 1230.4849·170000/225746088 = 0.926627.
        for variant in ["a1", "a2"] {
            let (mut cc, t) = two_paths(&format!("ccubic:variant={variant}"), ms(100), ms(20));
            let m = cc.metrics(PathId(0)).unwrap();
            assert!(close(m.extra("alpha1").unwrap(), 0.896_096, 1e-6));
            assert!(close(m.extra("alpha2").unwrap(), 0.926_627, 1e-6));
            assert!(close(m.extra("cubic_scale").unwrap(), 0.946_623, 1e-6));
            assert!(close(
                m.extra("virtual_lia_cwnd").unwrap() / 1200.0,
                1162.4849,
                1e-3
            ));
            assert_eq!(cc.window(PathId(0)), 6_758_891);
            assert_eq!(m.cwnd, 6_758_891);
            // One LIA ack of a packet sent after path 1's recovery began (cwnd 81600 bytes):
            // a1: min(α1·1200·1200/(Σw1·1200), 1200·1200/81600) = min(0.896096·1200/1296.0334, 17.647)
            //     = 0.829697 bytes;
            // a2: min(0.926627·1200/1230.4849, 17.647) = 0.903670 bytes. The variants differ only here.
            ack(cc.as_mut(), 1, t + ms(100), t + ms(50), 1, 1200, ms(20), None);
            let inc = cc.metrics(PathId(1)).unwrap().extra("virtual_reno_cwnd").unwrap() - 81_600.0;
            let expected = if variant == "a1" { 0.829_697 } else { 0.903_670 };
            assert!(close(inc, expected, 1e-5), "{variant}: {inc}");
        }
    }

    #[test]
    fn uncapped_scale_follows_the_paper() {
        // Example A of `alpha1_alpha2_and_scale_by_hand` (α1 = 1.090188 > 1) with the paper's uncapped scale:
        // scale = √1.090188 = 1.044121; path 0's window = 1.044121·5950 packets·1200 = 7455022 bytes.
        // Virtual LIA window = 868.3508·1.044121 = 906.6631; w/rtt²: 906.6631/0.04 = 22666.58 and
        // 68/0.0016 = 42500 (max); Σw = 974.6631; Σw/rtt = 4533.315 + 1700 = 6233.315, squared 38854219;
        // α2 = 974.6631·42500/38854219 = 1.066118.
        let (cc, _) = two_paths("ccubic:cap_scale=off", ms(200), ms(40));
        let m = cc.metrics(PathId(0)).unwrap();
        assert!(close(m.extra("alpha1").unwrap(), 1.090_188, 1e-6));
        assert!(close(m.extra("cubic_scale").unwrap(), 1.044_121, 1e-6));
        assert!(close(m.extra("alpha2").unwrap(), 1.066_118, 1e-6));
        assert!(close(
            m.extra("virtual_lia_cwnd").unwrap() / 1200.0,
            906.6631,
            1e-3
        ));
        assert_eq!(cc.window(PathId(0)), 7_455_022);
        // The capped default keeps plain CUBIC's window there (scale 1), and α < 1 gives the same scale
        // either way (Example B: 0.946623).
        let (cc, _) = two_paths("ccubic:cap_scale=on", ms(200), ms(40));
        assert_eq!(cc.window(PathId(0)), 5950 * 1200);
        let (cc, _) = two_paths("ccubic:cap_scale=off", ms(100), ms(20));
        let m = cc.metrics(PathId(0)).unwrap();
        assert!(close(m.extra("cubic_scale").unwrap(), 0.946_623, 1e-6));
        assert_eq!(cc.window(PathId(0)), 6_758_891);
    }

    #[test]
    fn classification_follows_the_configured_threshold() {
        let t = t0();
        // 500 Mbps = 62.5e6 B/s over min RTT 100 ms, MSS 1460: 62.5e6·0.1/1460 = 4280.8 packets;
        // 100 Mbps = 12.5e6 B/s over 20 ms: 12.5e6·0.02/1460 = 171.2 packets.
        for (threshold, big, small) in [(1000, 1.0, 0.0), (100, 1.0, 1.0), (5000, 0.0, 0.0)] {
            let mut cc = build(&format!("ccubic:large_bdp_packets={threshold}")).unwrap();
            cc.on_path_added(PathId(0), t, 1460);
            cc.on_path_added(PathId(1), t, 1460);
            ack(cc.as_mut(), 0, t + ms(100), t, 1, 1460, ms(100), Some(62_500_000));
            ack(cc.as_mut(), 1, t + ms(20), t, 1, 1460, ms(20), Some(12_500_000));
            let m0 = cc.metrics(PathId(0)).unwrap();
            assert!(close(m0.extra("bdp_packets").unwrap(), 4280.82, 1e-2));
            assert_eq!(m0.extra("large_bdp"), Some(big), "threshold {threshold}");
            let m1 = cc.metrics(PathId(1)).unwrap();
            assert!(close(m1.extra("bdp_packets").unwrap(), 171.23, 1e-2));
            assert_eq!(m1.extra("large_bdp"), Some(small), "threshold {threshold}");
        }
        // Forced classification ignores the estimate.
        let mut cc = build("ccubic:classify=lia").unwrap();
        cc.on_path_added(PathId(0), t, 1460);
        ack(cc.as_mut(), 0, t + ms(100), t, 1, 1460, ms(100), Some(62_500_000));
        assert_eq!(cc.metrics(PathId(0)).unwrap().extra("large_bdp"), Some(0.0));
        let mut cc = build("ccubic:classify=cubic").unwrap();
        cc.on_path_added(PathId(0), t, 1460);
        assert_eq!(cc.metrics(PathId(0)).unwrap().extra("large_bdp"), Some(1.0));
    }

    #[test]
    fn classification_has_hysteresis_and_a_window_fallback() {
        let t = t0();
        let mut cc = build("ccubic").unwrap();
        cc.on_path_added(PathId(0), t, 1460);
        let large = |cc: &dyn CongestionController| cc.metrics(PathId(0)).unwrap().extra("large_bdp");
        ack(cc.as_mut(), 0, t + ms(100), t, 1, 1460, ms(100), Some(62_500_000));
        assert_eq!(large(cc.as_ref()), Some(1.0));
        // t+6 s: new 5 s bucket; the max still covers the previous one (62.5e6 B/s): stays large.
        ack(
            cc.as_mut(),
            0,
            t + ms(6000),
            t,
            1,
            1460,
            ms(100),
            Some(10_000_000),
        );
        assert_eq!(large(cc.as_ref()), Some(1.0));
        // t+12 s: max = 10e6 B/s → 10e6·0.1/1460 = 684.9 packets: below 1000 but above 0.5·1000 → still large.
        ack(
            cc.as_mut(),
            0,
            t + ms(12_000),
            t,
            1,
            1460,
            ms(100),
            Some(10_000_000),
        );
        assert_eq!(large(cc.as_ref()), Some(1.0));
        // A new path with the same estimate is small-BDP.
        cc.on_path_added(PathId(1), t, 1460);
        ack(
            cc.as_mut(),
            1,
            t + ms(12_000),
            t,
            1,
            1460,
            ms(100),
            Some(10_000_000),
        );
        assert_eq!(cc.metrics(PathId(1)).unwrap().extra("large_bdp"), Some(0.0));
        // t+18 s and t+24 s: max falls to 4e6 B/s → 274.0 packets < 500 → small-BDP.
        ack(
            cc.as_mut(),
            0,
            t + ms(18_000),
            t,
            1,
            1460,
            ms(100),
            Some(4_000_000),
        );
        ack(
            cc.as_mut(),
            0,
            t + ms(24_000),
            t,
            1,
            1460,
            ms(100),
            Some(4_000_000),
        );
        assert_eq!(large(cc.as_ref()), Some(0.0));

        // Without rate samples the window is the estimate: threshold 20 packets, initial window 10 packets
        // (mds 1200) → small; after 10 packets of slow start (20 packets) → large.
        let mut cc = build("ccubic:large_bdp_packets=20").unwrap();
        cc.on_path_added(PathId(0), t, 1200);
        assert_eq!(large(cc.as_ref()), Some(0.0));
        ack(cc.as_mut(), 0, t + ms(50), t, 10, 1200, ms(50), None);
        assert_eq!(large(cc.as_ref()), Some(1.0));
    }

    #[test]
    fn from_params_accepts_known_and_rejects_bad_params() {
        let cc = build("ccubic:variant=a2,classify=cubic,large_bdp_packets=500,c=0.5,beta=0.75").unwrap();
        assert_eq!(cc.name(), "ccubic");
        assert!(build("ccubic").is_ok());
        assert!(build("ccubic:fast_convergence=off,max_window=1000000").is_ok());
        assert!(build("ccubic:cap_scale=off").is_ok());
        assert!(matches!(
            build("ccubic:cap_scale=2"),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build("ccubic:variant=a3"),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build("ccubic:classify=bbr"),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build("ccubic:large_bdp_packets=0"),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build("ccubic:beta=2"),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build("ccubic:alpha=1"),
            Err(CcError::Spec(crate::SpecError::UnknownParameter { .. }))
        ));
    }
}
