//! LIA, the Linked Increases Algorithm of RFC 6356, on QUIC's byte-counted windows.
//!
//! Each path keeps a [`RenoWindow`], so slow start, the recovery period, the halving on loss, persistent
//! congestion and the app-limited rule are exactly RFC 9002's (RFC 9002 §7 and Appendix B). LIA changes only the
//! congestion-avoidance increase: for every newly acknowledged packet of `bytes` bytes on path `r`,
//!
//! `cwnd_r += min(alpha · bytes · MSS_r / cwnd_total, bytes · MSS_r / cwnd_r)`   (RFC 6356 §3)
//!
//! `alpha = cwnd_total · max_i(cwnd_i / rtt_i²) / (Σ_i cwnd_i / rtt_i)²`, computed by [`alpha`] in the
//! numerically safe form RFC 6356 §4 recommends. The second term of the `min` is NewReno's increase
//! ([`RenoWindow::reno_increase`]), so LIA never grows a path faster than uncoupled NewReno would.
//!
//! Choices where RFC 6356 leaves room or where QUIC differs from TCP:
//! * **When α is computed.** Once per acknowledgement event (one ACK frame), from the state before the
//!   event (RFC 6356 §4 allows computing it less often than per ACK). Within the event the increase is
//!   applied packet by packet, as RFC 9002 does, with `cwnd_r` and `cwnd_total` the current values (the
//!   acknowledged path's growth so far included).
//! * **RTT.** `rtt_i` is the smoothed RTT of the latest event of path `i` (the acknowledged path uses the
//!   event's own snapshot). Paths without any RTT sample yet are left out of α, `cwnd_total` and the sums;
//!   an RTT of zero is taken as 1 µs so nothing divides by zero.
//! * **Recovery.** RFC 6356 uses `ssthresh_i` for subflows in fast retransmit because TCP inflates cwnd
//!   there. RFC 9002 does not inflate the window during recovery (cwnd already equals ssthresh), so cwnd is
//!   used.
//! * **App-limited paths** (RFC 6356 §4) count `min(bytes_in_flight_i, cwnd_i)` in the sums; a path is
//!   app-limited when its latest sent or acknowledgement event said so.
//! * **One path.** With a single path the increase is [`RenoWindow::reno_increase`] itself, so LIA's windows
//!   are bit-for-bit NewReno's (α would be 1 up to rounding).

use std::time::{Duration, Instant};

use crate::window::{DEFAULT_MAX_WINDOW, LOSS_REDUCTION_FACTOR};
use crate::{
    AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathId, PathMap, RenoWindow,
    SentEvent,
};

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &["max_window"];

/// Smallest RTT used in the coupled formulas, in seconds (an RTT of zero becomes this).
pub const MIN_RTT_SECS: f64 = 1e-6;

/// One path as the coupled formulas see it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathSample {
    /// Window in bytes (or packets: the formulas that take it are unit-free as long as all paths agree).
    pub cwnd: f64,
    /// Round-trip time in seconds (must be positive).
    pub rtt: f64,
}

fn usable(p: &PathSample) -> bool {
    p.cwnd.is_finite() && p.cwnd >= 0.0 && p.rtt.is_finite() && p.rtt > 0.0
}

/// RFC 6356 §3 `alpha = cwnd_total · max_i(cwnd_i/rtt_i²) / (Σ_i cwnd_i/rtt_i)²`.
///
/// Computed in the numerically safe form of RFC 6356 §4, `cwnd_total · cwnd_m / (Σ_i rtt_m · cwnd_i /
/// rtt_i)²` where `m` maximises `cwnd_i / rtt_i²` (the first such path on a tie: any maximiser gives the same
/// value). Its denominator is at least `cwnd_m²`, so `alpha ≤ cwnd_total / cwnd_m` is finite. Samples with
/// a non-finite or negative window or a non-positive RTT are ignored. `None` when no usable sample has a
/// positive window.
pub fn alpha(paths: &[PathSample]) -> Option<f64> {
    alpha_of(paths.iter().copied())
}

/// [`alpha`] over the samples `paths` yields (it is walked twice), for callers that do not hold them in a
/// slice (the controllers compute it at every acknowledgement, without collecting the samples).
pub(crate) fn alpha_of(paths: impl Iterator<Item = PathSample> + Clone) -> Option<f64> {
    let mut best: Option<PathSample> = None;
    let mut best_ratio = 0.0;
    let mut total = 0.0;
    for p in paths.clone().filter(usable) {
        total += p.cwnd;
        let ratio = p.cwnd / (p.rtt * p.rtt);
        if ratio > best_ratio {
            best_ratio = ratio;
            best = Some(p);
        }
    }
    let best = best?;
    let denominator: f64 = paths.filter(usable).map(|p| best.rtt * p.cwnd / p.rtt).sum();
    let a = total * best.cwnd / (denominator * denominator);
    (a.is_finite() && a >= 0.0).then_some(a)
}

/// Sum of the usable samples' windows (`cwnd_total` of RFC 6356).
pub fn cwnd_total(paths: &[PathSample]) -> f64 {
    cwnd_total_of(paths.iter().copied())
}

/// [`cwnd_total`] over the samples `paths` yields.
pub(crate) fn cwnd_total_of(paths: impl Iterator<Item = PathSample>) -> f64 {
    paths.filter(usable).map(|p| p.cwnd).sum()
}

/// RFC 6356 §3 increase of path `r` in bytes for `bytes` newly acknowledged bytes:
/// `min(alpha · bytes · mss / cwnd_total, bytes · mss / cwnd_r)`. Returns 0 for degenerate inputs.
pub fn increase(alpha: f64, bytes: f64, mss: f64, cwnd_total: f64, cwnd_r: f64) -> f64 {
    let coupled = alpha * bytes * mss / cwnd_total;
    let reno = mss * bytes / cwnd_r;
    let inc = coupled.min(reno);
    if inc.is_finite() && inc > 0.0 { inc } else { 0.0 }
}

/// Configuration of [`Lia`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiaConfig {
    /// Upper bound on every path's window, in bytes.
    pub max_window: u64,
}

impl Default for LiaConfig {
    fn default() -> Self {
        LiaConfig {
            max_window: DEFAULT_MAX_WINDOW,
        }
    }
}

/// Reads the parameters shared by the coupled loss-based controllers (`max_window`, in bytes).
pub(crate) fn max_window_param(params: &mut crate::params::Params) -> Result<u64, CcError> {
    Ok(params.u64("max_window", DEFAULT_MAX_WINDOW, 2400, 1 << 40)?)
}

/// Builds the controller from registry parameters (consumes the keys it knows; the registry rejects the rest).
pub fn from_params(params: &mut crate::params::Params) -> Result<Box<dyn CongestionController>, CcError> {
    let max_window = max_window_param(params)?;
    Ok(Box::new(Lia::new(LiaConfig { max_window })))
}

/// The RTT of a path in seconds for the coupled formulas (`None` without a sample).
pub(crate) fn rtt_secs(rtt: Option<Duration>) -> Option<f64> {
    rtt.map(|d| d.as_secs_f64().max(MIN_RTT_SECS))
}

/// [`rtt_secs`] of path `id`, whose smoothed RTT is `srtt`, unless `over` gives another RTT for it (the
/// acknowledgement being processed carries a newer one than the window holds).
pub(crate) fn sample_rtt(
    id: PathId,
    srtt: Option<Duration>,
    over: Option<(PathId, Duration)>,
) -> Option<f64> {
    match over {
        Some((path, rtt)) if path == id => rtt_secs(Some(rtt)),
        _ => rtt_secs(srtt),
    }
}

#[derive(Clone, Debug)]
struct LiaPath {
    window: RenoWindow,
    app_limited: bool,
}

impl LiaPath {
    /// The window counted in the coupled sums: RFC 6356 §4 `min(flight, cwnd)` for app-limited paths.
    fn effective_cwnd(&self) -> f64 {
        if self.app_limited {
            self.window.cwnd().min(self.window.bytes_in_flight() as f64)
        } else {
            self.window.cwnd()
        }
    }
}

/// LIA (RFC 6356): see the module documentation.
#[derive(Clone, Debug)]
pub struct Lia {
    config: LiaConfig,
    paths: PathMap<LiaPath>,
}

impl Lia {
    /// A controller with no paths yet.
    pub fn new(config: LiaConfig) -> Self {
        Lia {
            config,
            paths: PathMap::new(),
        }
    }

    /// The RFC 9002 window state of `path` (for tests and composed controllers).
    pub fn reno_window(&self, path: PathId) -> Option<&RenoWindow> {
        self.paths.get(path).map(|p| &p.window)
    }

    /// The samples of every path with an RTT sample (in path order), with the RTT of `over.0` replaced by
    /// `over.1`.
    fn samples(
        &self,
        over: Option<(PathId, Duration)>,
    ) -> impl Iterator<Item = (PathId, PathSample)> + Clone + '_ {
        self.paths.iter().filter_map(move |(id, p)| {
            Some((
                id,
                PathSample {
                    cwnd: p.effective_cwnd(),
                    rtt: sample_rtt(id, p.window.srtt(), over)?,
                },
            ))
        })
    }

    /// α and `cwnd_total` as they stand (for metrics).
    fn current_alpha(&self) -> (Option<f64>, f64) {
        let samples = self.samples(None).map(|(_, s)| s);
        (alpha_of(samples.clone()), cwnd_total_of(samples))
    }

    /// RFC 9002 congestion response with decrease factor `beta` (0.5 for LIA itself); returns whether a new
    /// recovery period started.
    pub(crate) fn on_congestion_with_beta(&mut self, ev: &CongestionEvent, beta: f64) -> bool {
        match self.paths.get_mut(ev.path) {
            Some(p) => p.window.on_congestion(ev, beta),
            None => false,
        }
    }
}

impl CongestionController for Lia {
    fn name(&self) -> &'static str {
        "lia"
    }

    fn on_path_added(&mut self, path: PathId, _now: Instant, max_datagram_size: u16) {
        self.paths.insert(
            path,
            LiaPath {
                window: RenoWindow::with_max_window(max_datagram_size, self.config.max_window),
                app_limited: false,
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
            p.app_limited = ev.app_limited;
        }
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        let single = self.paths.len() == 1;
        // α once per acknowledgement event, from the state before it (with this event's RTT for the path).
        let mut coupled = None;
        if !single {
            if let Some(p) = self.paths.get_mut(ev.path) {
                p.app_limited = ev.app_limited;
            }
            let samples = self.samples(Some((ev.path, ev.rtt.smoothed)));
            // Σ over the other paths; the acknowledged path's own (growing) window is added per packet.
            let others = cwnd_total_of(samples.clone().filter(|(id, _)| *id != ev.path).map(|(_, s)| s));
            coupled = alpha_of(samples.map(|(_, s)| s)).map(|a| (a, others));
        }
        let Some(p) = self.paths.get_mut(ev.path) else {
            return;
        };
        p.app_limited = ev.app_limited;
        match coupled {
            // One path, or no usable α: exactly NewReno.
            None => p.window.on_ack(ev, RenoWindow::reno_increase),
            Some((a, others)) => p.window.on_ack(ev, |w, packet| {
                let reno = w.reno_increase(packet);
                let coupled = a * packet.bytes as f64 * w.max_datagram_size() as f64 / (others + w.cwnd());
                // RFC 6356 §3: the min of the coupled and the uncoupled increase.
                if coupled.is_finite() && coupled >= 0.0 {
                    coupled.min(reno)
                } else {
                    reno
                }
            }),
        }
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        // RFC 6356 §3: the decrease is unchanged (halving, RFC 9002 §7.3.2).
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
        let (a, total) = self.current_alpha();
        Some(p.window.metrics(vec![
            Metric {
                name: "alpha",
                value: a.unwrap_or(1.0),
            },
            Metric {
                name: "cwnd_total",
                value: total,
            },
        ]))
    }
}

/// Helpers shared by the unit tests of the coupled loss-based controllers.
#[cfg(test)]
pub(crate) mod test_support {
    use std::time::{Duration, Instant};

    use crate::{AckEvent, AckedPacket, CongestionController, CongestionEvent, PathId, RttSnapshot};

    /// MSS of every test path.
    pub const MSS: u64 = 1200;

    #[allow(clippy::disallowed_methods)] // test set-up needs a base instant
    pub fn t0() -> Instant {
        Instant::now()
    }

    pub fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    /// Acknowledges `n` packets of [`MSS`] bytes sent at `sent` on `path`, with every RTT estimate `rtt`.
    pub fn ack(
        cc: &mut dyn CongestionController,
        path: u32,
        now: Instant,
        sent: Instant,
        n: usize,
        rtt: Duration,
    ) {
        let packets = vec![
            AckedPacket {
                bytes: MSS,
                time_sent: sent,
            };
            n
        ];
        cc.on_ack(&AckEvent {
            path: PathId(path),
            now,
            rtt: RttSnapshot::from_rtt(rtt),
            packets: &packets,
            prior_bytes_in_flight: MSS * n as u64,
            bytes_in_flight: 0,
            app_limited: false,
            rate_sample: None,
        });
    }

    /// A loss on `path` detected at `now` of a packet sent at `sent`, with every RTT estimate `rtt`.
    pub fn loss(cc: &mut dyn CongestionController, path: u32, now: Instant, sent: Instant, rtt: Duration) {
        cc.on_congestion(&CongestionEvent {
            path: PathId(path),
            now,
            sent_time: sent,
            lost_bytes: MSS,
            bytes_in_flight: 0,
            persistent_congestion: false,
            ecn: false,
            rtt: RttSnapshot::from_rtt(rtt),
        });
    }

    /// Adds `path` and brings it into congestion avoidance with `cwnd = ssthresh = target` bytes (in
    /// recovery): slow start from 12 000 to `2·target` with one ACK of `(2·target − 12 000)/1200` packets at
    /// `t0 + rtt`, then a loss at `t0 + rtt + 1 ms` halves it. Later packets must be sent after that.
    pub fn setup_ca(cc: &mut dyn CongestionController, path: u32, t0: Instant, target: u64, rtt: Duration) {
        cc.on_path_added(PathId(path), t0, MSS as u16);
        let n = ((2 * target - 12_000) / MSS) as usize;
        ack(cc, path, t0 + rtt, t0, n, rtt);
        assert_eq!(cc.window(PathId(path)), 2 * target);
        loss(cc, path, t0 + rtt + ms(1), t0 + rtt, rtt);
        assert_eq!(cc.window(PathId(path)), target);
    }

    /// When fresh packets (sent after every set-up loss) are sent and acknowledged.
    pub fn fresh(t0: Instant) -> (Instant, Instant) {
        (t0 + Duration::from_secs(11), t0 + Duration::from_secs(10))
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use crate::params::{Params, Spec};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    fn cwnd(cc: &Lia, path: u32) -> f64 {
        cc.reno_window(PathId(path)).unwrap().cwnd()
    }

    /// Two paths: 10 packets / 20 ms and 20 packets / 50 ms (the Linux MPTCP v0.x test vector), in CA.
    fn two_paths() -> (Lia, Instant) {
        let t0 = t0();
        let mut cc = Lia::new(LiaConfig::default());
        setup_ca(&mut cc, 0, t0, 12_000, ms(20));
        setup_ca(&mut cc, 1, t0, 24_000, ms(50));
        (cc, t0)
    }

    #[test]
    fn alpha_of_two_paths_matches_hand_computation() {
        // cwnd/rtt²: 10/0.02² = 25 000 (max), 20/0.05² = 8 000; Σ cwnd/rtt = 500 + 400 = 900.
        // α = 30 · 25 000 / 900² = 750 000 / 810 000 = 25/27 = 0.925 925…
        let pkts = [
            PathSample {
                cwnd: 10.0,
                rtt: 0.02,
            },
            PathSample {
                cwnd: 20.0,
                rtt: 0.05,
            },
        ];
        assert!(close(alpha(&pkts).unwrap(), 25.0 / 27.0));
        // Unit-free: the same windows in bytes give the same α.
        let bytes = pkts.map(|p| PathSample {
            cwnd: p.cwnd * 1200.0,
            ..p
        });
        assert!(close(alpha(&bytes).unwrap(), 25.0 / 27.0));
        assert!(close(cwnd_total(&bytes), 36_000.0));
        // 1/α · Σw = 30 / 0.9259 = 32.4 ACKs per packet of growth (Linux MPTCP v0.x, `net/mptcp/mptcp_*.c`: Linux's N =
        // 32).
        assert!((30.0 / alpha(&pkts).unwrap() - 32.4).abs() < 1e-9);
    }

    #[test]
    fn alpha_edge_cases() {
        assert_eq!(alpha(&[]), None);
        // One path: α = w·w/(w)² = 1.
        let one = [PathSample { cwnd: 7.0, rtt: 0.3 }];
        assert!(close(alpha(&one).unwrap(), 1.0));
        // Unusable samples (zero RTT, NaN window) are ignored; an all-zero window set has no α.
        let bad = [
            PathSample { cwnd: 5.0, rtt: 0.0 },
            PathSample {
                cwnd: f64::NAN,
                rtt: 0.1,
            },
        ];
        assert_eq!(alpha(&bad), None);
        assert_eq!(alpha(&[PathSample { cwnd: 0.0, rtt: 0.1 }]), None);
        // Extreme but valid values stay finite: α ≤ cwnd_total / cwnd_m.
        let extreme = [
            PathSample { cwnd: 4e9, rtt: 1e-6 },
            PathSample {
                cwnd: 2400.0,
                rtt: 100.0,
            },
        ];
        let a = alpha(&extreme).unwrap();
        assert!(a.is_finite() && a <= (4e9 + 2400.0) / 4e9 + 1e-12);
    }

    #[test]
    fn per_ack_increase_on_each_of_two_paths() {
        let (cc, t0) = two_paths();
        let (now, sent) = fresh(t0);
        // Path 0: min(α·MSS·MSS/Σw, MSS·MSS/w_0) = min(25/27 · 1 440 000/36 000, 1 440 000/12 000)
        //       = min(25/27 · 40, 120) = 37.037 bytes: one packet (1200 B) per 32.4 ACKs.
        let mut c0 = cc.clone();
        ack(&mut c0, 0, now, sent, 1, ms(20));
        assert!(close(cwnd(&c0, 0), 12_000.0 + 25.0 / 27.0 * 40.0));
        assert!(close(1200.0 / (cwnd(&c0, 0) - 12_000.0), 32.4));
        assert!(!c0.reno_window(PathId(0)).unwrap().in_recovery());
        // Path 1: min(37.037, 1 440 000/24 000 = 60) = 37.037 bytes: also one packet per 32.4 ACKs.
        let mut c1 = cc.clone();
        ack(&mut c1, 1, now, sent, 1, ms(50));
        assert!(close(cwnd(&c1, 1), 24_000.0 + 25.0 / 27.0 * 40.0));
        // Both below uncoupled NewReno's 120 and 60 bytes.
        assert_eq!(
            increase(25.0 / 27.0, 1200.0, 1200.0, 36_000.0, 12_000.0),
            25.0 / 27.0 * 40.0
        );
        let m = cc.metrics(PathId(0)).unwrap();
        assert!(close(m.extra("alpha").unwrap(), 25.0 / 27.0));
        assert_eq!(m.extra("cwnd_total"), Some(36_000.0));
    }

    #[test]
    fn two_packets_in_one_ack_use_the_current_windows() {
        let (mut cc, t0) = two_paths();
        let (now, sent) = fresh(t0);
        ack(&mut cc, 0, now, sent, 2, ms(20));
        // α = 25/27 for the whole event; first packet: 25/27·1 440 000/36 000 = 37.037 (w0 = 12 037.037);
        // second: 25/27·1 440 000/36 037.037 = 36.999 (the total grew by the first step).
        let first = 25.0 / 27.0 * 40.0;
        let second = 25.0 / 27.0 * 1_440_000.0 / (36_000.0 + first);
        assert!(close(cwnd(&cc, 0), 12_000.0 + first + second));
    }

    #[test]
    fn increase_is_capped_by_newreno() {
        // Path 0: 100 packets / 1 s, path 1: 10 packets / 10 ms. cwnd/rtt²: 100 and 100 000 (max);
        // Σ cwnd/rtt = 100 + 1000 = 1100; α = 110 · 100 000 / 1100² = 9.0909.
        // Path 0: α·MSS²/Σw = 9.0909 · 1 440 000/132 000 = 99.17 > MSS²/w_0 = 1 440 000/120 000 = 12:
        // NewReno's 12 bytes wins.
        let t0 = t0();
        let mut cc = Lia::new(LiaConfig::default());
        setup_ca(&mut cc, 0, t0, 120_000, ms(1000));
        setup_ca(&mut cc, 1, t0, 12_000, ms(10));
        let (now, sent) = fresh(t0);
        ack(&mut cc, 0, now, sent, 1, ms(1000));
        assert_eq!(cwnd(&cc, 0), 120_012.0);
        assert!(close(
            alpha(&[
                PathSample {
                    cwnd: 100.0,
                    rtt: 1.0
                },
                PathSample {
                    cwnd: 10.0,
                    rtt: 0.01
                }
            ])
            .unwrap(),
            110.0 * 100_000.0 / 1_210_000.0
        ));
    }

    #[test]
    fn app_limited_paths_count_their_bytes_in_flight() {
        let (mut cc, t0) = two_paths();
        let (now, sent) = fresh(t0);
        // Path 1 is app-limited with 6000 bytes in flight: it counts min(6000, 24 000) = 6000.
        cc.on_packet_sent(&SentEvent {
            path: PathId(1),
            now: sent,
            bytes: 1200,
            bytes_in_flight: 6000,
            app_limited: true,
        });
        // cwnd/rtt²: 12 000/0.0004 = 3e7 (max), 6000/0.0025 = 2.4e6; Σ cwnd/rtt = 600 000 + 120 000 = 720 000;
        // α = 18 000 · 3e7 / 720 000² = 25/24; increase = min(25/24 · 1 440 000/18 000, 120) = 83.333.
        ack(&mut cc, 0, now, sent, 1, ms(20));
        assert!(close(cwnd(&cc, 0), 12_000.0 + 25.0 / 24.0 * 80.0));
    }

    #[test]
    fn paths_without_rtt_sample_are_left_out() {
        let (mut cc, t0) = two_paths();
        cc.on_path_added(PathId(2), t0, 1200); // never acknowledged: no RTT sample
        let (now, sent) = fresh(t0);
        ack(&mut cc, 0, now, sent, 1, ms(20));
        // Same as without path 2: 12 000 + 25/27 · 40.
        assert!(close(cwnd(&cc, 0), 12_000.0 + 25.0 / 27.0 * 40.0));
        assert_eq!(
            cc.metrics(PathId(0)).unwrap().extra("cwnd_total"),
            Some(36_000.0 + 25.0 / 27.0 * 40.0)
        );
    }

    #[test]
    fn one_path_is_newreno() {
        let t0 = t0();
        let mut cc = Lia::new(LiaConfig::default());
        setup_ca(&mut cc, 0, t0, 12_000, ms(20));
        let (now, sent) = fresh(t0);
        ack(&mut cc, 0, now, sent, 3, ms(20));
        // NewReno per packet: +1 440 000/w: 12 000 → 12 120 → 12 238.81… → 12 356.48…
        let mut w = 12_000.0_f64;
        for _ in 0..3 {
            w += 1200.0 * 1200.0 / w;
        }
        assert_eq!(cwnd(&cc, 0).to_bits(), w.to_bits());
        assert_eq!(cc.name(), "lia");
    }

    #[test]
    fn events_for_unknown_paths_and_zero_rtt_are_harmless() {
        let (mut cc, t0) = two_paths();
        let (now, sent) = fresh(t0);
        ack(&mut cc, 9, now, sent, 1, ms(20));
        loss(&mut cc, 9, now, sent, ms(20));
        assert_eq!(cc.window(PathId(9)), 0);
        assert!(cc.metrics(PathId(9)).is_none());
        ack(&mut cc, 1, now, sent, 1, Duration::ZERO);
        let w = cwnd(&cc, 1);
        assert!(w.is_finite() && w > 24_000.0 && w <= 24_060.0);
        cc.on_path_removed(PathId(0));
        assert_eq!(cc.window(PathId(0)), 0);
    }

    #[test]
    fn from_params_accepts_and_rejects() {
        let build = |spec: &str| {
            let s = Spec::parse(spec, "algorithm").unwrap();
            let mut p = Params::new(&s.name, s.params);
            from_params(&mut p).and_then(|cc| p.finish(PARAMS).map(|()| cc).map_err(CcError::from))
        };
        let cc = build("lia").unwrap();
        assert_eq!(cc.name(), "lia");
        let mut cc = build("lia:max_window=20000").unwrap();
        let t0 = t0();
        cc.on_path_added(PathId(0), t0, 1200);
        ack(&mut cc, 0, t0 + ms(10), t0, 50, ms(10));
        assert_eq!(cc.window(PathId(0)), 20_000);
        assert!(matches!(
            build("lia:max_window=abc"),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build("lia:max_window=10"),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build("lia:beta=0.7"),
            Err(CcError::Spec(crate::SpecError::UnknownParameter { .. }))
        ));
    }
}
