//! CUBIC (RFC 9438) with the adaptations RFC 9438 gives for QUIC (byte-counted windows), on top of the RFC 9002 window machinery.
//!
//! Slow start, the recovery period (RFC 9002 §7.3.2: one reduction per period, no growth for packets sent
//! before it began), persistent congestion (§7.6.2) and the app-limited rule (§7.8) come from [`RenoWindow`];
//! this module supplies CUBIC's congestion-avoidance increase and its decrease:
//!
//! * Windows are in bytes: `W_cubic(t) = C·MSS·(t − K)³ + W_max` and `K = ∛((W_max − cwnd_epoch)/(C·MSS))`
//!   (RFC 9438 §4.2 with RFC 9438's byte form); `C = 0.4`, `β_cubic = 0.7`.
//! * Per acknowledged packet in congestion avoidance (§4.3–§4.5): `W_est += α·MSS·bytes/cwnd` with
//!   `α = α_cubic = 3(1−β)/(1+β)` until `W_est ≥ cwnd_prior` and 1 after; if `W_cubic(t) < W_est` the window
//!   is set to `W_est` (Reno-friendly region), otherwise it grows by `(target − cwnd)·bytes/cwnd` with
//!   `target = clamp(W_cubic(t + RTT), cwnd, 1.5·cwnd)` and `RTT = smoothed_rtt`.
//! * On congestion (§4.6, §4.7), unless the recovery-period rule suppresses it: fast convergence (on by default)
//!   `W_max = cwnd·(1+β)/2` if `cwnd < W_max`, else `W_max = cwnd`; `cwnd_prior = cwnd`;
//!   `ssthresh = max(cwnd·β, 2·MSS)`, `cwnd = max(ssthresh, 2·MSS)`. The new epoch starts on the next
//!   congestion-avoidance ACK (`t_epoch = now`, `cwnd_epoch = cwnd`, `W_est = cwnd_epoch`, K recomputed).
//! * Pacing at `1.25·cwnd/smoothed_rtt` (RFC 9002 §7.7).
//!
//! Choices where the sources are silent or leave a choice (all documented in RFC 9438 unless noted):
//! * The decrease uses `cwnd`, not the flight size (§4.6 allows either; neqo uses cwnd).
//! * The minimum window is `2·MSS` after both loss and ECN-CE (RFC 9002), not RFC 9438's 1·SMSS after ECE.
//! * Persistent congestion maps to §4.8 (timeout): the window collapses to the minimum (RenoWindow), and the
//!   first congestion-avoidance epoch afterwards uses `K = 0`, `W_max = cwnd_epoch`.
//! * First exit from slow start without a loss (W_max undefined): `K = 0`, `W_max = cwnd_epoch` (neqo).
//! * If an epoch starts with `cwnd_epoch ≥ W_max` (possible after an app-limited restart in the convex
//!   region), `W_max` is raised to `cwnd_epoch` and `K = 0`, so the curve starts at the current window instead
//!   of below it (this project's choice, as neqo).
//! * App-limited acknowledgements (§5.8, RFC 9002 §7.8) do not grow the window and end the epoch, so the next
//!   epoch starts when the flow is window-limited again and `t` excludes the idle time (neqo).
//! * `cwnd_prior` is 0 until the first reduction, so `α = 1` in the Reno-friendly estimate until then.
//! * HyStart++ (RFC 9406) is not implemented: slow start is RFC 9002's.
//! * The Coupled CUBIC study (Lee, Kim, Kwon, Han, CSSE 45(1), 2023) writes CUBIC with β as the *reduction* fraction;
//!   this module follows RFC 9438's β = 0.7 (multiplicative factor), as RFC 9438 prescribes.

use std::time::Instant;

use crate::params::Params;
use crate::window::{DEFAULT_MAX_WINDOW, window_pacing_rate};
use crate::{
    AckEvent, AckedPacket, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathController,
    PathControllerFactory, RenoWindow, SentEvent, Uncoupled,
};

/// Registry name.
pub const NAME: &str = "cubic";

/// RFC 9438 §5.1 `C` (segments / s³).
pub const DEFAULT_C: f64 = 0.4;

/// RFC 9438 §4.6 `β_cubic`.
pub const DEFAULT_BETA: f64 = 0.7;

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &["c", "beta", "fast_convergence", "max_window"];

/// Builds the controller from registry parameters (consumes the keys it knows; the registry rejects the rest).
///
/// * `c`: the cubic constant `C` in `[0.01, 10]` (default 0.4).
/// * `beta`: `β_cubic` in `[0.05, 0.95]` (default 0.7).
/// * `fast_convergence`: RFC 9438 §4.7 (default on).
/// * `max_window`: largest window in bytes, in `[1, 2^32]` (default 2^32; never below `2 · mds`).
pub fn from_params(params: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
    Ok(Box::new(Uncoupled::new(CubicConfig::from_params(params)?)))
}

/// `K = ∛((W_max − cwnd_epoch)/(C·MSS))` in seconds (RFC 9438 §4.2, byte form of RFC 9438); 0 when
/// `cwnd_epoch ≥ W_max`. Windows in bytes (or in packets with `mss = 1`).
pub fn cubic_k(w_max: f64, cwnd_epoch: f64, c: f64, mss: f64) -> f64 {
    let num = w_max - cwnd_epoch;
    let den = c * mss;
    if num.is_nan() || num <= 0.0 || den.is_nan() || den <= 0.0 {
        return 0.0;
    }
    let k = (num / den).cbrt();
    if k.is_finite() { k } else { 0.0 }
}

/// `W_cubic(t) = C·MSS·(t − K)³ + W_max` (RFC 9438 §4.2, byte form); `t` and `k` in seconds, windows in
/// bytes (or packets with `mss = 1`).
pub fn w_cubic(t: f64, k: f64, w_max: f64, c: f64, mss: f64) -> f64 {
    let d = t - k;
    c * mss * d * d * d + w_max
}

/// RFC 9438 §4.3 `α_cubic = 3(1 − β)/(1 + β)`: the additive increase that makes an AIMD flow with decrease
/// factor `β` as aggressive on average as Reno.
pub fn alpha_cubic(beta: f64) -> f64 {
    3.0 * (1.0 - beta) / (1.0 + beta)
}

/// CUBIC's configuration; also the [`PathControllerFactory`] that builds one [`Cubic`] per path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicConfig {
    /// The cubic constant `C` in segments/s³ (RFC 9438: 0.4).
    pub c: f64,
    /// `β_cubic`, the multiplicative decrease factor (RFC 9438: 0.7).
    pub beta: f64,
    /// RFC 9438 §4.7 fast convergence (SHOULD be on).
    pub fast_convergence: bool,
    /// Largest window in bytes (raised to `2 · mds` if smaller).
    pub max_window: u64,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            c: DEFAULT_C,
            beta: DEFAULT_BETA,
            fast_convergence: true,
            max_window: DEFAULT_MAX_WINDOW,
        }
    }
}

impl CubicConfig {
    /// Reads `c`, `beta`, `fast_convergence` and `max_window` (see [`from_params`]).
    pub fn from_params(params: &mut Params) -> Result<CubicConfig, CcError> {
        Ok(CubicConfig {
            c: params.f64("c", DEFAULT_C, 0.01, 10.0)?,
            beta: params.f64("beta", DEFAULT_BETA, 0.05, 0.95)?,
            fast_convergence: params.bool("fast_convergence", true)?,
            max_window: params.u64("max_window", DEFAULT_MAX_WINDOW, 1, DEFAULT_MAX_WINDOW)?,
        })
    }
}

impl PathControllerFactory for CubicConfig {
    type Controller = Cubic;

    fn name(&self) -> &'static str {
        NAME
    }

    fn build(&self, _now: Instant, max_datagram_size: u16) -> Cubic {
        Cubic::new(*self, max_datagram_size)
    }
}

/// The CUBIC-specific state of one path (kept apart from the [`RenoWindow`] so the increase closure can
/// borrow it mutably while the window is updated).
#[derive(Clone, Debug)]
struct CubicState {
    c: f64,
    beta: f64,
    alpha_cubic: f64,
    fast_convergence: bool,
    /// `W_max` in bytes; `None` until the first reduction, or when the next epoch must use `K = 0` and
    /// `W_max = cwnd_epoch` (persistent congestion, first exit from slow start).
    w_max: Option<f64>,
    /// `K` of the current (or last) epoch, seconds.
    k: f64,
    /// `cwnd_prior` in bytes (0 until the first reduction).
    cwnd_prior: f64,
    /// `W_est` in bytes.
    w_est: f64,
    /// `(t_epoch, cwnd_epoch)` of the current congestion-avoidance epoch.
    epoch: Option<(Instant, f64)>,
}

impl CubicState {
    /// RFC 9438 §4.2–§4.5: the increase in bytes for one acknowledged packet in congestion avoidance.
    fn ca_increase(&mut self, w: &RenoWindow, packet: &AckedPacket, now: Instant, srtt: f64) -> f64 {
        let mss = w.max_datagram_size() as f64;
        let cwnd = w.cwnd();
        let bytes = packet.bytes as f64;
        if cwnd <= 0.0 {
            return 0.0;
        }
        let (t_epoch, _cwnd_epoch) = match self.epoch {
            Some(e) => e,
            None => {
                // A new congestion-avoidance stage begins (§4.6 last step, §4.8, first slow-start exit).
                match self.w_max {
                    Some(w_max) if w_max > cwnd => {
                        self.k = cubic_k(w_max, cwnd, self.c, mss);
                    }
                    _ => {
                        self.w_max = Some(cwnd);
                        self.k = 0.0;
                    }
                }
                self.w_est = cwnd;
                self.epoch = Some((now, cwnd));
                (now, cwnd)
            }
        };
        let w_max = self.w_max.unwrap_or(cwnd);
        let t = now.saturating_duration_since(t_epoch).as_secs_f64();
        // §4.3: W_est += α·segments_acked/cwnd (in bytes: α·MSS·bytes/cwnd), α = α_cubic below cwnd_prior.
        let alpha = if self.w_est < self.cwnd_prior {
            self.alpha_cubic
        } else {
            1.0
        };
        let w_est = self.w_est + alpha * mss * bytes / cwnd;
        if w_est.is_finite() {
            self.w_est = w_est.min(w.max_window());
        }
        let w_t = w_cubic(t, self.k, w_max, self.c, mss);
        if w_t < self.w_est {
            // §4.3 Reno-friendly region: cwnd = W_est.
            return (self.w_est - cwnd).max(0.0);
        }
        // §4.4/§4.5: target = clamp(W_cubic(t + RTT), cwnd, 1.5·cwnd); cwnd += (target − cwnd)/cwnd per segment.
        let target = w_cubic(t + srtt, self.k, w_max, self.c, mss)
            .max(cwnd)
            .min(1.5 * cwnd);
        let inc = (target - cwnd) * bytes / cwnd;
        if inc.is_finite() { inc.max(0.0) } else { 0.0 }
    }
}

/// One path's CUBIC window: a [`RenoWindow`] (slow start, recovery period, persistent congestion) plus
/// CUBIC's state. Reused per path by Coupled CUBIC.
#[derive(Clone, Debug)]
pub struct CubicWindow {
    window: RenoWindow,
    state: CubicState,
}

impl CubicWindow {
    /// A path at the start of slow start with the RFC 9002 initial window.
    pub fn new(config: &CubicConfig, max_datagram_size: u16) -> Self {
        let beta = if config.beta.is_finite() {
            config.beta.clamp(0.01, 0.99)
        } else {
            DEFAULT_BETA
        };
        let c = if config.c.is_finite() && config.c > 0.0 {
            config.c
        } else {
            DEFAULT_C
        };
        CubicWindow {
            window: RenoWindow::with_max_window(max_datagram_size, config.max_window),
            state: CubicState {
                c,
                beta,
                alpha_cubic: alpha_cubic(beta),
                fast_convergence: config.fast_convergence,
                w_max: None,
                k: 0.0,
                cwnd_prior: 0.0,
                w_est: 0.0,
                epoch: None,
            },
        }
    }

    /// The underlying RFC 9002 window.
    pub fn reno(&self) -> &RenoWindow {
        &self.window
    }

    /// The underlying RFC 9002 window, mutably. CUBIC's state does not see changes made through it; call
    /// [`CubicWindow::restart`] before CUBIC takes over again.
    pub fn reno_mut(&mut self) -> &mut RenoWindow {
        &mut self.window
    }

    /// Forgets the epoch and `W_max`: the next congestion-avoidance ACK starts an epoch with `K = 0` and
    /// `W_max = cwnd_epoch` (as after the first slow-start exit), and `cwnd_prior` is cleared.
    pub fn restart(&mut self) {
        self.state.epoch = None;
        self.state.w_max = None;
        self.state.k = 0.0;
        self.state.cwnd_prior = 0.0;
    }

    /// The window in bytes, with its fraction.
    pub fn cwnd(&self) -> f64 {
        self.window.cwnd()
    }

    /// The window in whole bytes.
    pub fn window(&self) -> u64 {
        self.window.window()
    }

    /// `W_max` in bytes (`None` while undefined).
    pub fn w_max(&self) -> Option<f64> {
        self.state.w_max
    }

    /// `K` of the current or last epoch, in seconds.
    pub fn k(&self) -> f64 {
        self.state.k
    }

    /// `W_est` in bytes.
    pub fn w_est(&self) -> f64 {
        self.state.w_est
    }

    /// `cwnd_prior` in bytes (0 before the first reduction).
    pub fn cwnd_prior(&self) -> f64 {
        self.state.cwnd_prior
    }

    /// Start time and `cwnd_epoch` of the current congestion-avoidance epoch.
    pub fn epoch(&self) -> Option<(Instant, f64)> {
        self.state.epoch
    }

    /// Records a sent packet.
    pub fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.window.on_packet_sent(ev);
    }

    /// Processes an acknowledgement (slow start or CUBIC's congestion-avoidance increase).
    pub fn on_ack(&mut self, ev: &AckEvent<'_>) {
        if ev.app_limited {
            // RFC 9438 §5.8: no growth while app-limited (RenoWindow skips it) and t excludes the idle time:
            // the epoch restarts when the flow is window-limited again.
            self.state.epoch = None;
        }
        let now = ev.now;
        let srtt = ev.rtt.smoothed.as_secs_f64();
        let state = &mut self.state;
        self.window.on_ack(ev, |w, p| state.ca_increase(w, p, now, srtt));
    }

    /// RFC 9438 §4.6–§4.8 with RFC 9002's recovery period. Returns whether the window was reduced.
    pub fn on_congestion(&mut self, ev: &CongestionEvent) -> bool {
        let st = &mut self.state;
        if self.window.will_reduce(ev) {
            let cwnd = self.window.cwnd();
            // §4.7 fast convergence, applied before the reduction.
            st.w_max = Some(match st.w_max {
                Some(w_max) if st.fast_convergence && cwnd < w_max => cwnd * (1.0 + st.beta) / 2.0,
                _ => cwnd,
            });
            st.cwnd_prior = cwnd;
        }
        let reduced = self.window.on_congestion(ev, st.beta);
        if reduced {
            // §4.6: ssthresh = max(ssthresh, 2) (2·MSS here, RFC 9002's minimum window).
            let ssthresh = self.window.ssthresh().max(self.window.min_window());
            self.window.set_ssthresh(ssthresh);
            st.epoch = None;
        }
        if ev.persistent_congestion {
            // §4.8 mapped from RTO to persistent congestion: the next epoch uses K = 0, W_max = cwnd_epoch.
            st.epoch = None;
            st.w_max = None;
        }
        reduced
    }

    /// Adopts a new maximum datagram size.
    pub fn set_max_datagram_size(&mut self, max_datagram_size: u16) {
        self.window.set_max_datagram_size(max_datagram_size);
    }

    /// CUBIC's extras: `w_max` (bytes, 0 while undefined), `k` (s), `w_est` (bytes), `cwnd_prior` (bytes).
    pub fn extras(&self) -> Vec<Metric> {
        vec![
            Metric {
                name: "w_max",
                value: self.state.w_max.unwrap_or(0.0),
            },
            Metric {
                name: "k",
                value: self.state.k,
            },
            Metric {
                name: "w_est",
                value: self.state.w_est,
            },
            Metric {
                name: "cwnd_prior",
                value: self.state.cwnd_prior,
            },
        ]
    }

    /// Pacing rate for a window of `cwnd` bytes at this path's smoothed RTT.
    pub fn pacing_rate_for(&self, cwnd: f64) -> Option<u64> {
        window_pacing_rate(cwnd, self.window.srtt())
    }
}

/// One path's CUBIC controller.
#[derive(Clone, Debug)]
pub struct Cubic {
    inner: CubicWindow,
}

impl Cubic {
    /// A controller at the start of slow start.
    pub fn new(config: CubicConfig, max_datagram_size: u16) -> Self {
        Cubic {
            inner: CubicWindow::new(&config, max_datagram_size),
        }
    }

    /// The CUBIC window state.
    pub fn cubic_window(&self) -> &CubicWindow {
        &self.inner
    }
}

impl PathController for Cubic {
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.inner.on_packet_sent(ev);
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        self.inner.on_ack(ev);
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        self.inner.on_congestion(ev);
    }

    fn on_max_datagram_size(&mut self, max_datagram_size: u16) {
        self.inner.set_max_datagram_size(max_datagram_size);
    }

    fn window(&self) -> u64 {
        self.inner.window()
    }

    fn pacing_rate(&self) -> Option<u64> {
        self.inner.reno().pacing_rate()
    }

    fn metrics(&self) -> CcMetrics {
        self.inner.reno().metrics(self.inner.extras())
    }

    fn state(&self) -> &'static str {
        self.inner.reno().state()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::{PathId, RttSnapshot};

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

    fn ack(c: &mut Cubic, now: Instant, sent: Instant, n: usize, bytes: u64, rtt_ms: u64) {
        let packets = vec![
            AckedPacket {
                bytes,
                time_sent: sent
            };
            n
        ];
        c.on_ack(&AckEvent {
            path: PathId(0),
            now,
            rtt: RttSnapshot::from_rtt(ms(rtt_ms)),
            packets: &packets,
            prior_bytes_in_flight: bytes * n as u64,
            bytes_in_flight: 0,
            app_limited: false,
            rate_sample: None,
        });
    }

    fn loss(now: Instant, sent: Instant) -> CongestionEvent {
        loss_pc(now, sent, false)
    }

    fn loss_pc(now: Instant, sent: Instant, persistent: bool) -> CongestionEvent {
        CongestionEvent {
            path: PathId(0),
            now,
            sent_time: sent,
            lost_bytes: 1200,
            bytes_in_flight: 0,
            persistent_congestion: persistent,
            ecn: false,
            rtt: RttSnapshot::from_rtt(ms(100)),
        }
    }

    #[test]
    fn k_and_w_cubic_match_hand_computed_values() {
        // W_max = 100 packets, cwnd_epoch = 70, C = 0.4 (packet units: mss = 1).
        // K = ∛(30/0.4) = ∛75 = 4.217163
        let k = cubic_k(100.0, 70.0, 0.4, 1.0);
        assert!(close(k, 4.217_163, 1e-6), "{k}");
        // W(0) = 0.4·(−K)³ + 100 = −0.4·75 + 100 = 70
        assert!(close(w_cubic(0.0, k, 100.0, 0.4, 1.0), 70.0, 1e-9));
        // W(2) = 0.4·(2 − 4.217163)³ + 100 = 0.4·(−2.217163)³ + 100 = 0.4·(−10.899161) + 100 = 95.640336
        assert!(close(w_cubic(2.0, k, 100.0, 0.4, 1.0), 95.640_336, 1e-5));
        // W(K) = W_max = 100
        assert!(close(w_cubic(k, k, 100.0, 0.4, 1.0), 100.0, 1e-12));
        // W(6) = 0.4·(1.782837)³ + 100 = 0.4·5.666758 + 100 = 102.266703
        assert!(close(w_cubic(6.0, k, 100.0, 0.4, 1.0), 102.266_703, 1e-5));
        // Bytes: the same curve scaled by MSS = 1200 (K unchanged).
        assert!(close(cubic_k(120_000.0, 84_000.0, 0.4, 1200.0), k, 1e-9));
        assert!(close(
            w_cubic(2.0, k, 120_000.0, 0.4, 1200.0),
            95.640_336 * 1200.0,
            1e-2
        ));
        // K = 0 when cwnd_epoch ≥ W_max.
        assert_eq!(cubic_k(50.0, 70.0, 0.4, 1.0), 0.0);
        // α_cubic = 3·0.3/1.7 = 0.529412
        assert!(close(alpha_cubic(0.7), 0.529_412, 1e-6));
    }

    /// Slow start to 100 packets (mds 1200), one loss, then CUBIC growth at chosen times.
    #[test]
    fn decrease_by_beta_then_cubic_growth_through_the_controller() {
        let t = t0();
        let mut c = Cubic::new(CubicConfig::default(), 1200);
        // Slow start: 12000 + 90·1200 = 120000 = 100 packets.
        ack(&mut c, t + ms(100), t, 90, 1200, 100);
        assert_eq!(c.window(), 120_000);
        c.on_congestion(&loss(t + ms(200), t + ms(100)));
        // β = 0.7: ssthresh = cwnd = 84000 (70 packets); W_max = 120000 (first loss: no fast convergence).
        assert_eq!(c.window(), 84_000);
        assert_eq!(c.metrics().ssthresh, Some(84_000));
        assert_eq!(c.metrics().extra("w_max"), Some(120_000.0));
        assert_eq!(c.metrics().extra("cwnd_prior"), Some(120_000.0));
        // First CA ack (1 packet sent after recovery began) at te = t+400 ms starts the epoch:
        // K = ∛((120000 − 84000)/(0.4·1200)) = ∛75 = 4.217163 s; W_est = 84000 + α_cubic·1200·1200/84000
        //   = 84000 + 0.529412·17.142857 = 84009.075630; W_cubic(0) = 84000 < W_est → cwnd = W_est.
        let te = t + ms(400);
        ack(&mut c, te, t + ms(300), 1, 1200, 100);
        let m = c.metrics();
        assert!(close(m.extra("k").unwrap(), 4.217_163, 1e-6));
        assert!(close(m.extra("w_est").unwrap(), 84_009.075_630, 1e-5));
        assert!(close(c.cubic_window().cwnd(), 84_009.075_630, 1e-5));
        // Second ack at te + 2 s: W_est += 0.529412·1440000/84009.075630 = 9.074650 → 84018.150280.
        // W_cubic(2) = 480·(2 − 4.217163)³ + 120000 = 480·(−10.899161) + 120000 = 114768.403 > W_est, so
        // target = W_cubic(2.1) = 480·(−2.117163)³ + 120000 = 480·(−9.489932) + 120000 = 115444.833
        // (within [cwnd, 1.5·cwnd]); cwnd += (115444.833 − 84009.076)·1200/84009.076 = 449.034 → 84458.109.
        ack(&mut c, te + ms(2000), te + ms(1900), 1, 1200, 100);
        assert!(close(c.cubic_window().w_est(), 84_018.150_280, 1e-4));
        assert!(
            close(c.cubic_window().cwnd(), 84_458.109, 1e-2),
            "{}",
            c.cubic_window().cwnd()
        );
        // Pacing: 1.25·84458.109/0.1 = 1055726 B/s.
        assert_eq!(c.pacing_rate(), Some(1_055_726));
    }

    #[test]
    fn target_is_clamped_to_one_and_a_half_cwnd() {
        let t = t0();
        let mut c = Cubic::new(CubicConfig::default(), 1200);
        ack(&mut c, t + ms(100), t, 90, 1200, 100);
        c.on_congestion(&loss(t + ms(200), t + ms(100)));
        let te = t + ms(400);
        ack(&mut c, te, t + ms(300), 1, 1200, 100); // cwnd = 84009.075630 (see above)
        // At te + 20 s: W_cubic(20.1) = 480·(15.882837)³ + 120000 = 2043204 > 1.5·cwnd = 126013.613,
        // so cwnd += (126013.613 − 84009.076)·1200/84009.076 = 0.5·1200 = 600 → 84609.076.
        ack(&mut c, te + ms(20_000), te + ms(19_900), 1, 1200, 100);
        assert!(close(c.cubic_window().cwnd(), 84_609.075_630, 1e-4));
    }

    /// W_max = 10000, loss → 7000, one CA ack (mds 1000, RTT 10 ms): the Reno-friendly estimate wins.
    fn reno_friendly_setup(fast_convergence: bool) -> (Cubic, Instant) {
        let t = t0();
        let mut c = Cubic::new(
            CubicConfig {
                fast_convergence,
                ..CubicConfig::default()
            },
            1000,
        );
        assert_eq!(c.window(), 10_000);
        c.on_congestion(&loss(t + ms(10), t));
        assert_eq!(c.window(), 7000); // 10000·0.7
        ack(&mut c, t + ms(30), t + ms(20), 1, 1000, 10);
        (c, t)
    }

    #[test]
    fn reno_friendly_region_takes_over_at_small_windows_and_short_rtts() {
        let (c, _) = reno_friendly_setup(true);
        // K = ∛(3000/(0.4·1000)) = ∛7.5 = 1.957434 s; W_cubic(0) = 7000.
        // W_est = 7000 + α_cubic·1000·1000/7000 = 7000 + 0.529412·142.857143 = 7075.630252 > W_cubic(0)
        // → cwnd = W_est. (The cubic rule alone would give target W_cubic(0.01) = 400·(−1.947434)³ + 10000
        // = 7045.74 and cwnd = 7000 + 45.74·1000/7000 = 7006.53.)
        assert!(close(c.cubic_window().cwnd(), 7_075.630_252, 1e-5));
        assert!(close(c.metrics().extra("k").unwrap(), 1.957_434, 1e-6));
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        for (fc, w_max, cwnd) in [
            // cwnd = 7075.630252 < W_max = 10000: W_max = 7075.630252·(1 + 0.7)/2 = 6014.285714,
            // cwnd = 7075.630252·0.7 = 4952.941176.
            (true, 6_014.285_714, 4_952.941_176),
            // Without fast convergence W_max = cwnd = 7075.630252.
            (false, 7_075.630_252, 4_952.941_176),
        ] {
            let (mut c, t) = reno_friendly_setup(fc);
            c.on_congestion(&loss(t + ms(40), t + ms(25)));
            let m = c.metrics();
            assert!(
                close(m.extra("w_max").unwrap(), w_max, 1e-5),
                "{fc}: {:?}",
                m.extra("w_max")
            );
            assert!(close(c.cubic_window().cwnd(), cwnd, 1e-5));
            assert!(close(m.extra("cwnd_prior").unwrap(), 7_075.630_252, 1e-5));
        }
    }

    #[test]
    fn recovery_period_suppresses_reduction_and_keeps_w_max() {
        let t = t0();
        let mut c = Cubic::new(CubicConfig::default(), 1200);
        c.on_congestion(&loss(t + ms(100), t + ms(10)));
        assert_eq!(c.window(), 8400); // 12000·0.7
        // A packet sent before recovery began (t+50 ms ≤ t+100 ms) is lost: nothing changes.
        c.on_congestion(&loss(t + ms(150), t + ms(50)));
        assert_eq!(c.window(), 8400);
        assert_eq!(c.metrics().extra("w_max"), Some(12_000.0));
        // Acks of packets sent before recovery began neither grow the window nor start an epoch.
        ack(&mut c, t + ms(160), t + ms(60), 3, 1200, 100);
        assert_eq!(c.window(), 8400);
        assert!(c.cubic_window().epoch().is_none());
        assert_eq!(c.metrics().state, "recovery");
    }

    #[test]
    fn persistent_congestion_restarts_with_k_zero() {
        let t = t0();
        let mut c = Cubic::new(CubicConfig::default(), 1200);
        c.on_congestion(&loss_pc(t + ms(1000), t, true));
        // cwnd = 2·1200; ssthresh = 12000·0.7 = 8400: slow start resumes.
        assert_eq!(c.window(), 2400);
        assert_eq!(c.metrics().ssthresh, Some(8400));
        // Slow start 2400 → 8400 with 5 packets; the 6th packet is acked in CA and starts the epoch with
        // K = 0 and W_max = cwnd_epoch = 8400.
        ack(&mut c, t + ms(1200), t + ms(1100), 5, 1200, 100);
        assert_eq!(c.window(), 8400);
        ack(&mut c, t + ms(1300), t + ms(1200), 1, 1200, 100);
        let m = c.metrics();
        assert_eq!(m.extra("k"), Some(0.0));
        assert_eq!(m.extra("w_max"), Some(8400.0));
        assert_eq!(c.cubic_window().epoch().map(|e| e.1), Some(8400.0));
    }

    #[test]
    fn app_limited_acks_do_not_grow_and_restart_the_epoch() {
        let (mut c, t) = reno_friendly_setup(true);
        let before = c.cubic_window().cwnd();
        let epoch = c.cubic_window().epoch();
        assert!(epoch.is_some());
        let packets = [AckedPacket {
            bytes: 1000,
            time_sent: t + ms(40),
        }];
        c.on_ack(&AckEvent {
            path: PathId(0),
            now: t + ms(5000),
            rtt: RttSnapshot::from_rtt(ms(10)),
            packets: &packets,
            prior_bytes_in_flight: 1000,
            bytes_in_flight: 0,
            app_limited: true,
            rate_sample: None,
        });
        assert_eq!(c.cubic_window().cwnd(), before);
        assert!(c.cubic_window().epoch().is_none());
        // The next window-limited ack starts a new epoch at its own time with cwnd_epoch = cwnd.
        ack(&mut c, t + ms(5010), t + ms(5000), 1, 1000, 10);
        let (start, cwnd_epoch) = c.cubic_window().epoch().unwrap();
        assert_eq!(start, t + ms(5010));
        assert_eq!(cwnd_epoch, before);
    }

    #[test]
    fn from_params_accepts_known_and_rejects_bad_params() {
        use crate::params::Spec;
        let build = |s: &str| {
            let spec = Spec::parse(s, "algorithm").unwrap();
            let mut p = Params::new(&spec.name, spec.params);
            let cc = from_params(&mut p)?;
            p.finish(PARAMS)?;
            Ok::<_, CcError>(cc)
        };
        let mut cc = build("cubic:c=0.8,beta=0.8,fast_convergence=off,max_window=50000").unwrap();
        assert_eq!(cc.name(), "cubic");
        let t = t0();
        cc.on_path_added(PathId(0), t, 1200);
        cc.on_congestion(&loss(t + ms(100), t));
        assert_eq!(cc.window(PathId(0)), 9600); // 12000·0.8
        assert!(build("cubic").is_ok());
        assert!(matches!(
            build("cubic:beta=1"),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build("cubic:c=0"),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build("cubic:fast_convergence=maybe"),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build("cubic:hystart=on"),
            Err(CcError::Spec(crate::SpecError::UnknownParameter { .. }))
        ));
    }
}
