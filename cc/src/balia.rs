//! BALIA, the Balanced Linked Adaptation algorithm (Peng, Walid, Hwang, Low, "Multipath TCP: Analysis, Design,
//! and Implementation", IEEE/ACM Transactions on Networking 24(1), 2016; Linux `mptcp_balia.c`).
//!
//! Each path keeps a [`RenoWindow`] (RFC 9002 §7 slow start, recovery period, persistent congestion); BALIA
//! changes only the congestion-avoidance increase and the decrease factor. With `x_k = w_k/τ_k` (`w_k` the
//! window of path `k` in packets, `τ_k` its RTT) and `α_r = max_k x_k / x_r`:
//!
//! * increase per packet acknowledged on `r`: `Δw_r = (x_r/τ_r)/(Σ_k x_k)² · (1+α_r)/2 · (4+α_r)/5` packets;
//! * decrease on a new recovery period: `w_r ← w_r − (w_r/2)·min(α_r, 1.5)`, i.e. `beta = 1 − min(α_r, 1.5)/2`
//!   given to [`RenoWindow::on_congestion`].
//!
//! Choices where the sources are silent or where this port deliberately differs from Linux:
//! * **Real-valued**, not the Linux integer form: α is a real number (Linux truncates it to an integer, so its
//!   decrease `md` is either `w/2` or `0.75·w`), and the increase is a fraction of a packet per acknowledged packet
//!   instead of a "one packet every `ai` ACKs" counter (Linux MPTCP v0.x gives the Linux values for comparison; the
//!   unit tests quote them).
//! * **Packet windows** (`units=packets`, the default): windows are kept in bytes, `W_k = MSS_k·w_k`, and
//!   each path's rate is counted in its own packets, `x_k = W_k/(MSS_k·τ_k)` packets/s, as the paper's
//!   `w_k` and Linux's `snd_cwnd` are. A packet of `b` bytes acknowledged on `r` counts as `b/MSS_r`
//!   packets, so the window grows by `Δbytes = MSS_r · (b/MSS_r) · Δw_r = b · (x_r/τ_r)/(Σ_k x_k)² ·
//!   (1+α_r)/2 · (4+α_r)/5`. With one path (α = 1) this is `b·MSS/W`, NewReno's RFC 9002 §7.3.3 increase.
//! * **Byte windows** (`units=bytes`, the form of earlier versions of this crate): rates are
//!   `X_k = W_k/τ_k` bytes/s, i.e. every window is counted in packets of the updated path's MSS
//!   (`x_k = X_k/MSS_r`): `α_r = max_k X_k / X_r` and `Δbytes = b · MSS_r · (X_r/τ_r)/(Σ_k X_k)² ·
//!   (1+α_r)/2 · (4+α_r)/5`. The two forms agree when every path has the same MSS; when they differ the byte
//!   form sees a larger-MSS path as faster (paths of 10 packets of 1200 and of 1400 bytes at equal RTTs:
//!   `α_0 = 1.167` in bytes, 1 in packets).
//! * `τ_k` is the path's smoothed RTT as of its latest event. **Paths without an RTT sample** (no ACK or
//!   congestion event seen yet, or a zero smoothed RTT) are left out of the sums and the maximum; they count
//!   neither for the other paths nor, when they are the path updated, do they use the coupled formulas: such a
//!   path uses NewReno's increase and `beta = 0.5`.
//! * **One path, exactly NewReno**: when no *other* path has an RTT sample, the path uses
//!   [`RenoWindow::reno_increase`] and [`LOSS_REDUCTION_FACTOR`] directly, so floating-point rounding cannot
//!   make it differ from NewReno.
//! * The window used for `x_k` is the current window (RenoWindow reduces it at the start of the recovery
//!   period, so it is never inflated as TCP's is during fast retransmit; RFC 6356's `ssthresh` rule is moot).
//! * The decrease uses the RTT snapshot of the congestion event for the path that lost (`τ_r`).
//!
//! Metrics: `alpha` (`α_r` in the configured units) and `x_rate` (`W_r/τ_r` in bytes/s in both forms).

use crate::params::Params;
use crate::window::{DEFAULT_MAX_WINDOW, LOSS_REDUCTION_FACTOR};
use crate::{
    AckEvent, AckedPacket, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathId,
    PathMap, RenoWindow, SentEvent,
};
use std::time::Instant;

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &["max_window", "units"];

/// Largest value accepted for `max_window` (1 TiB): windows stay exact in an `f64`.
const MAX_WINDOW_LIMIT: u64 = 1 << 40;

/// Builds the controller from registry parameters (consumes the keys it knows; the registry rejects the rest).
///
/// * `max_window`: upper bound on every path's window, in bytes (default 4 GiB).
/// * `units`: `packets` (default: the paper's and Linux's packet windows) or `bytes` (rates from byte windows;
///   see the module documentation).
pub fn from_params(params: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
    let config = BaliaConfig {
        max_window: params.u64("max_window", DEFAULT_MAX_WINDOW, 1, MAX_WINDOW_LIMIT)?,
        units: match params.choice("units", "packets", &["packets", "bytes"])? {
            "bytes" => RateUnits::Bytes,
            _ => RateUnits::Packets,
        },
    };
    Ok(Box::new(Balia::new(config)))
}

/// The unit in which BALIA counts windows when it computes the rates `x_k`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RateUnits {
    /// Each path's window in its own packets, `W_k/MSS_k` (Peng et al.; Linux `snd_cwnd`).
    #[default]
    Packets,
    /// Byte windows, i.e. every window in packets of the updated path's MSS.
    Bytes,
}

/// Configuration of [`Balia`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaliaConfig {
    /// Upper bound on each path's window, in bytes (never below the minimum window `2·MSS`).
    pub max_window: u64,
    /// Units of the rates (default: packets).
    pub units: RateUnits,
}

impl Default for BaliaConfig {
    fn default() -> Self {
        BaliaConfig {
            max_window: DEFAULT_MAX_WINDOW,
            units: RateUnits::Packets,
        }
    }
}

/// The BALIA coupled controller: one [`RenoWindow`] per path, coupled increase and decrease (Peng et al., IEEE/ACM ToN
/// 2016; Linux `mptcp_balia.c`).
#[derive(Clone, Debug)]
pub struct Balia {
    config: BaliaConfig,
    paths: PathMap<RenoWindow>,
}

/// The other paths' contribution to BALIA's sums, for the path being updated.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Others {
    /// `Σ x_k` over the other paths with an RTT sample, in the configured units per second.
    sum_x: f64,
    /// `max x_k` over the same paths.
    max_x: f64,
    /// How many other paths have an RTT sample.
    count: usize,
}

/// `X = W/τ` in bytes/s for a window of `cwnd` bytes and a smoothed RTT of `tau` seconds (`None` without a
/// usable RTT).
fn rate(cwnd: f64, tau: f64) -> Option<f64> {
    let x = cwnd / tau;
    (tau > 0.0 && x.is_finite()).then_some(x)
}

/// A path's `X_k` in bytes/s, if it has an RTT sample.
fn path_rate(w: &RenoWindow) -> Option<f64> {
    rate(w.cwnd(), w.srtt()?.as_secs_f64())
}

/// The window of `w` in the units the rates count: its own packets, or bytes.
fn unit_window(w: &RenoWindow, units: RateUnits) -> f64 {
    match units {
        RateUnits::Packets => w.cwnd() / w.max_datagram_size() as f64,
        RateUnits::Bytes => w.cwnd(),
    }
}

/// A path's `x_k` in the configured units per second, if it has an RTT sample.
fn unit_rate(w: &RenoWindow, units: RateUnits) -> Option<f64> {
    rate(unit_window(w, units), w.srtt()?.as_secs_f64())
}

/// BALIA's `α_r = max_k X_k / X_r` for a path of rate `x_r` (bytes/s) given the other paths.
fn alpha(x_r: f64, others: &Others) -> f64 {
    others.max_x.max(x_r) / x_r
}

/// The increase factor `(1+α)/2 · (4+α)/5` (1 when α = 1).
fn alpha_factor(alpha: f64) -> f64 {
    (1.0 + alpha) / 2.0 * (4.0 + alpha) / 5.0
}

/// The decrease factor `beta = 1 − min(α, 1.5)/2`: `w − (w/2)·min(α, 1.5) = w·beta` (Peng et al., IEEE/ACM ToN 2016;
/// Linux `mptcp_balia.c`).
fn beta(alpha: f64) -> f64 {
    1.0 - alpha.min(1.5) / 2.0
}

/// The congestion-avoidance increase in bytes for `packet` on the path of window `w` (byte mapping in the
/// module doc), or `None` when the path has no usable RTT.
fn increase(w: &RenoWindow, packet: &AckedPacket, others: &Others, units: RateUnits) -> Option<f64> {
    let tau = w.srtt()?.as_secs_f64();
    let x_r = rate(unit_window(w, units), tau)?;
    let sum = others.sum_x + x_r;
    // Packets: Δbytes = b·Δw_r. Bytes: the rates are MSS_r times those in packets of MSS_r, so Δw_r gains
    // a factor MSS_r.
    let scale = match units {
        RateUnits::Packets => 1.0,
        RateUnits::Bytes => w.max_datagram_size() as f64,
    };
    let delta = packet.bytes as f64 * scale * (x_r / tau) / (sum * sum) * alpha_factor(alpha(x_r, others));
    delta.is_finite().then_some(delta)
}

impl Balia {
    /// A BALIA controller with no paths yet.
    pub fn new(config: BaliaConfig) -> Self {
        Balia {
            config,
            paths: PathMap::new(),
        }
    }

    /// The window state of `path`.
    pub fn path(&self, path: PathId) -> Option<&RenoWindow> {
        self.paths.get(path)
    }

    /// Sums and maximum of `x_k` over the paths other than `path` that have an RTT sample.
    fn others(&self, path: PathId) -> Others {
        let units = self.config.units;
        self.paths
            .iter()
            .filter(|(id, _)| *id != path)
            .filter_map(|(_, w)| unit_rate(w, units))
            .fold(Others::default(), |acc, x| Others {
                sum_x: acc.sum_x + x,
                max_x: acc.max_x.max(x),
                count: acc.count + 1,
            })
    }

    /// `α_r` and `X_r` (bytes/s) of `path` as of its latest event (α = 1 and X = 0 without an RTT sample).
    fn alpha_and_rate(&self, path: PathId) -> (f64, f64) {
        let Some(w) = self.paths.get(path) else {
            return (1.0, 0.0);
        };
        match (unit_rate(w, self.config.units), path_rate(w)) {
            (Some(x), Some(bytes_rate)) => (alpha(x, &self.others(path)), bytes_rate),
            _ => (1.0, 0.0),
        }
    }
}

impl CongestionController for Balia {
    fn name(&self) -> &'static str {
        "balia"
    }

    fn on_path_added(&mut self, path: PathId, _now: Instant, max_datagram_size: u16) {
        self.paths.insert(
            path,
            RenoWindow::with_max_window(max_datagram_size, self.config.max_window),
        );
    }

    fn on_path_removed(&mut self, path: PathId) {
        self.paths.remove(path);
    }

    fn on_max_datagram_size(&mut self, path: PathId, max_datagram_size: u16) {
        if let Some(w) = self.paths.get_mut(path) {
            w.set_max_datagram_size(max_datagram_size);
        }
    }

    fn on_packet_sent(&mut self, ev: &SentEvent) {
        if let Some(w) = self.paths.get_mut(ev.path) {
            w.on_packet_sent(ev);
        }
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        // The other paths do not change while this ACK is processed: compute their sums once.
        let others = self.others(ev.path);
        let units = self.config.units;
        let Some(w) = self.paths.get_mut(ev.path) else {
            return;
        };
        if others.count == 0 {
            // BALIA (Peng et al., IEEE/ACM ToN 2016; Linux `mptcp_balia.c`) with α = 1 is NewReno; use its very code so
            // one path is NewReno bit for bit.
            w.on_ack(ev, RenoWindow::reno_increase);
        } else {
            // RenoWindow updates srtt from the event before calling the closure, and the closure sees the
            // window as grown by the previous packets of this ACK.
            w.on_ack(ev, |w, p| {
                increase(w, p, &others, units).unwrap_or_else(|| w.reno_increase(p))
            });
        }
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        let others = self.others(ev.path);
        let Some(w) = self.paths.get_mut(ev.path) else {
            return;
        };
        let own = rate(unit_window(w, self.config.units), ev.rtt.smoothed.as_secs_f64());
        let beta = match own {
            Some(x_r) if others.count > 0 => beta(alpha(x_r, &others)),
            _ => LOSS_REDUCTION_FACTOR,
        };
        w.on_congestion(ev, beta);
    }

    fn window(&self, path: PathId) -> u64 {
        self.paths.get(path).map_or(0, RenoWindow::window)
    }

    fn pacing_rate(&self, path: PathId) -> Option<u64> {
        self.paths.get(path).and_then(RenoWindow::pacing_rate)
    }

    /// The state without building the metrics (they allocate their extras): read after every acknowledgement.
    fn state(&self, path: PathId) -> Option<&'static str> {
        self.paths.get(path).map(RenoWindow::state)
    }

    fn metrics(&self, path: PathId) -> Option<CcMetrics> {
        let w = self.paths.get(path)?;
        let (alpha, x_rate) = self.alpha_and_rate(path);
        Some(w.metrics(vec![
            Metric {
                name: "alpha",
                value: alpha,
            },
            Metric {
                name: "x_rate",
                value: x_rate,
            },
        ]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RttSnapshot, params::Spec};
    use std::time::Duration;

    #[allow(clippy::disallowed_methods)] // test set-up needs a base instant
    fn t0() -> Instant {
        Instant::now()
    }

    const MSS: u16 = 1460;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn ack_ev<'a>(
        path: u32,
        now: Instant,
        rtt: Duration,
        packets: &'a [AckedPacket],
        app_limited: bool,
    ) -> AckEvent<'a> {
        AckEvent {
            path: PathId(path),
            now,
            rtt: RttSnapshot::from_rtt(rtt),
            packets,
            prior_bytes_in_flight: 0,
            bytes_in_flight: 0,
            app_limited,
            rate_sample: None,
        }
    }

    fn loss_ev(path: u32, now: Instant, sent: Instant, rtt: Duration) -> CongestionEvent {
        CongestionEvent {
            path: PathId(path),
            now,
            sent_time: sent,
            lost_bytes: 1460,
            bytes_in_flight: 0,
            persistent_congestion: false,
            ecn: false,
            rtt: RttSnapshot::from_rtt(rtt),
        }
    }

    /// Two paths in congestion avoidance: path 0 with 10 packets and an RTT of 20 ms, path 1 with 20 packets
    /// and 50 ms (the Linux MPTCP v0.x test vector), RTTs made known through application-limited (non-growing) ACKs.
    fn two_paths(t0: Instant) -> Balia {
        let mut b = Balia::new(BaliaConfig::default());
        b.on_path_added(PathId(0), t0, MSS);
        b.on_path_added(PathId(1), t0, MSS);
        for (id, pkts, rtt) in [(0, 10.0, 20), (1, 20.0, 50)] {
            let w = b.paths.get_mut(PathId(id)).unwrap();
            w.set_cwnd(pkts * 1460.0);
            w.set_ssthresh(pkts * 1460.0); // cwnd == ssthresh: congestion avoidance
            let p = [AckedPacket {
                bytes: 1460,
                time_sent: t0,
            }];
            b.on_ack(&ack_ev(id, t0 + ms(rtt), ms(rtt), &p, true));
        }
        assert_eq!(b.window(PathId(0)), 14_600);
        assert_eq!(b.window(PathId(1)), 29_200);
        b
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6 * b.abs().max(1.0)
    }

    #[test]
    fn two_path_increase_matches_hand_computation() {
        let t0 = t0();
        // In packets: x0 = 10/0.02 = 500 pkt/s, x1 = 20/0.05 = 400 pkt/s, Σx = 900, max = 500;
        // α0 = 500/500 = 1, α1 = 500/400 = 1.25.
        // Δw0 = (500/0.02)/900² · (2/2)·(5/5) = 25000/810000 = 5/162 ≈ 0.030864 pkt per packet acked,
        //       i.e. one packet per 32.4 ACKs (Linux integer `ai` = 32, Linux MPTCP v0.x, `net/mptcp/mptcp_*.c`: the
        //       floor). Δw1 = (400/0.05)/900² · (2.25/2)·(5.25/5) = 8000/810000 · 1.18125 = 9450/810000 = 7/600
        //       ≈ 0.011667, i.e. one packet per 85.71 ACKs (Linux `ai` = 85: the floor).
        // In bytes (one full 1460-byte packet): Δbytes = 1460 · Δw.
        let b = two_paths(t0);
        let m0 = b.metrics(PathId(0)).unwrap();
        let m1 = b.metrics(PathId(1)).unwrap();
        assert!(close(m0.extra("alpha").unwrap(), 1.0));
        assert!(close(m1.extra("alpha").unwrap(), 1.25));
        // x_rate in bytes/s: 14600/0.02 = 730000, 29200/0.05 = 584000.
        assert!(close(m0.extra("x_rate").unwrap(), 730_000.0));
        assert!(close(m1.extra("x_rate").unwrap(), 584_000.0));

        let p = [AckedPacket {
            bytes: 1460,
            time_sent: t0 + ms(100),
        }];
        let mut b0 = b.clone();
        b0.on_ack(&ack_ev(0, t0 + ms(120), ms(20), &p, false));
        let w0 = b0.path(PathId(0)).unwrap().cwnd();
        assert!(close(w0, 14_600.0 + 1460.0 * 5.0 / 162.0), "{w0}"); // +45.0617
        let mut b1 = b.clone();
        b1.on_ack(&ack_ev(1, t0 + ms(150), ms(50), &p, false));
        let w1 = b1.path(PathId(1)).unwrap().cwnd();
        assert!(close(w1, 29_200.0 + 1460.0 * 7.0 / 600.0), "{w1}"); // +17.0333
        // A half-size packet counts as half a packet acknowledged: +8.5167.
        let half = [AckedPacket {
            bytes: 730,
            time_sent: t0 + ms(100),
        }];
        let mut b2 = b.clone();
        b2.on_ack(&ack_ev(1, t0 + ms(150), ms(50), &half, false));
        let w2 = b2.path(PathId(1)).unwrap().cwnd();
        assert!(close(w2, 29_200.0 + 730.0 * 7.0 / 600.0), "{w2}");
    }

    #[test]
    fn two_path_decrease_matches_hand_computation() {
        let t0 = t0();
        let b = two_paths(t0);
        // Path 0: α0 = 1 → md = (w/2)·1 = 5 pkts → w = 5 pkts = 7300 bytes (beta 0.5). Linux md = 5 too.
        let mut b0 = b.clone();
        b0.on_congestion(&loss_ev(0, t0 + ms(200), t0 + ms(150), ms(20)));
        assert_eq!(b0.window(PathId(0)), 7300);
        assert_eq!(b0.path(PathId(0)).unwrap().ssthresh(), 7300.0);
        assert_eq!(b0.window(PathId(1)), 29_200); // the other path is untouched
        // Path 1: α1 = 1.25 → md = (20/2)·min(1.25, 1.5) = 12.5 pkts → w = 7.5 pkts = 10950 bytes
        // (beta = 1 − 1.25/2 = 0.375). Linux truncates α to 1 and gets md = 10 (Linux MPTCP v0.x,
        // `net/mptcp/mptcp_*.c`).
        let mut b1 = b.clone();
        b1.on_congestion(&loss_ev(1, t0 + ms(200), t0 + ms(150), ms(50)));
        let w1 = b1.path(PathId(1)).unwrap();
        assert!(close(w1.cwnd(), 10_950.0), "{}", w1.cwnd());
        assert!(close(w1.ssthresh(), 10_950.0));
        // α is capped at 1.5: if path 1's loss reports τ1 = 200 ms, x1 = 29200/0.2 = 146000 B/s,
        // α1 = 730000/146000 = 5 → min(5, 1.5) = 1.5 → beta = 1 − 0.75 = 0.25 → 29200 · 0.25 = 7300.
        let mut b2 = b.clone();
        b2.on_congestion(&loss_ev(1, t0 + ms(200), t0 + ms(150), ms(200)));
        assert!(close(b2.path(PathId(1)).unwrap().cwnd(), 7300.0));
    }

    /// Path 0 with a 1200-byte MSS, path 1 with 1400 bytes, both 10 packets (12000 and 14000 bytes) in
    /// congestion avoidance at an RTT of 50 ms.
    fn mixed_mss(units: RateUnits) -> (Balia, Instant) {
        let t0 = t0();
        let mut b = Balia::new(BaliaConfig {
            units,
            ..BaliaConfig::default()
        });
        for (id, mss) in [(0, 1200u16), (1, 1400)] {
            b.on_path_added(PathId(id), t0, mss);
            let w = b.paths.get_mut(PathId(id)).unwrap();
            w.set_cwnd(10.0 * f64::from(mss));
            w.set_ssthresh(10.0 * f64::from(mss));
            let p = [AckedPacket {
                bytes: u64::from(mss),
                time_sent: t0,
            }];
            b.on_ack(&ack_ev(id, t0 + ms(50), ms(50), &p, true));
        }
        (b, t0)
    }

    #[test]
    fn paths_with_different_mss_count_packets_as_the_paper_does() {
        let one = |mss: u64, t0: Instant| {
            [AckedPacket {
                bytes: mss,
                time_sent: t0 + ms(10),
            }]
        };
        // Packets (the paper, Linux `snd_cwnd`): x0 = 10/0.05 = 200 pkt/s = x1 → α0 = α1 = 1, Σx = 400.
        // Δw = (200/0.05)/400² · 1 = 4000/160000 = 0.025 packet per packet acknowledged, so a full packet adds
        // 1200·0.025 = 30 bytes on path 0 and 1400·0.025 = 35 bytes on path 1. A loss halves (α = 1).
        let (b, t0) = mixed_mss(RateUnits::Packets);
        assert_eq!(b.metrics(PathId(0)).unwrap().extra("alpha"), Some(1.0));
        assert_eq!(b.metrics(PathId(1)).unwrap().extra("alpha"), Some(1.0));
        // x_rate stays in bytes/s: 12000/0.05 = 240000.
        assert!(close(
            b.metrics(PathId(0)).unwrap().extra("x_rate").unwrap(),
            240_000.0
        ));
        let mut b0 = b.clone();
        b0.on_ack(&ack_ev(0, t0 + ms(60), ms(50), &one(1200, t0), false));
        assert!(close(b0.path(PathId(0)).unwrap().cwnd(), 12_030.0));
        let mut b1 = b.clone();
        b1.on_ack(&ack_ev(1, t0 + ms(60), ms(50), &one(1400, t0), false));
        assert!(close(b1.path(PathId(1)).unwrap().cwnd(), 14_035.0));
        let mut b2 = b.clone();
        b2.on_congestion(&loss_ev(0, t0 + ms(70), t0 + ms(60), ms(50)));
        assert_eq!(b2.window(PathId(0)), 6000);

        // Bytes: X0 = 12000/0.05 = 240000 B/s, X1 = 14000/0.05 = 280000 B/s, ΣX = 520000;
        // α0 = 280000/240000 = 7/6 = 1.1667, α1 = 1.
        // Path 0: (1+α)/2·(4+α)/5 = (13/12)·(31/30) = 403/360 = 1.119444;
        // Δbytes = 1200·1200·(240000/0.05)/520000² · 403/360 = 1.44e6·4.8e6/2.704e11 · 1.119444
        //        = 25.56213 · 1.119444 = 28.61538 (= 372/13).
        // Path 1: 1400·1400·(280000/0.05)/520000² · 1 = 1.96e6·5.6e6/2.704e11 = 40.59172.
        // Loss on path 0: beta = 1 − (7/6)/2 = 5/12 → 12000·5/12 = 5000.
        let (b, t0) = mixed_mss(RateUnits::Bytes);
        assert!(close(
            b.metrics(PathId(0)).unwrap().extra("alpha").unwrap(),
            7.0 / 6.0
        ));
        assert_eq!(b.metrics(PathId(1)).unwrap().extra("alpha"), Some(1.0));
        let mut b0 = b.clone();
        b0.on_ack(&ack_ev(0, t0 + ms(60), ms(50), &one(1200, t0), false));
        assert!(close(b0.path(PathId(0)).unwrap().cwnd(), 12_000.0 + 372.0 / 13.0));
        let mut b1 = b.clone();
        b1.on_ack(&ack_ev(1, t0 + ms(60), ms(50), &one(1400, t0), false));
        let w1 = b1.path(PathId(1)).unwrap().cwnd();
        assert!((w1 - 14_040.591_72).abs() < 1e-4, "{w1}");
        let mut b2 = b.clone();
        b2.on_congestion(&loss_ev(0, t0 + ms(70), t0 + ms(60), ms(50)));
        assert_eq!(b2.window(PathId(0)), 5000);
    }

    /// A small deterministic generator for event sequences (xorshift64).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// Drives `cc` (path 0, plus an extra path 1 that never gets an RTT sample when `idle_path`) and a bare
    /// NewReno [`RenoWindow`] with the same long event sequence; they must agree bit for bit.
    fn same_as_newreno(idle_path: bool) {
        let t0 = t0();
        let mut cc = Balia::new(BaliaConfig::default());
        cc.on_path_added(PathId(0), t0, 1200);
        if idle_path {
            cc.on_path_added(PathId(1), t0, 1200);
        }
        let mut reno = RenoWindow::new(1200);
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let mut now = t0;
        let mut reductions = 0;
        for _ in 0..5000 {
            now += ms(1 + rng.next(20));
            let rtt = ms(10 + rng.next(190));
            let sent = now.checked_sub(ms(rng.next(300))).unwrap_or(t0).max(t0);
            match rng.next(100) {
                0..=79 => {
                    let n = 1 + rng.next(4) as usize;
                    let packets: Vec<AckedPacket> = (0..n)
                        .map(|i| AckedPacket {
                            bytes: 600 + 600 * (i as u64 % 2),
                            time_sent: sent,
                        })
                        .collect();
                    let ev = ack_ev(0, now, rtt, &packets, rng.next(10) == 0);
                    cc.on_ack(&ev);
                    reno.on_ack(&ev, RenoWindow::reno_increase);
                }
                80..=97 => {
                    let sev = SentEvent {
                        path: PathId(0),
                        now,
                        bytes: 1200,
                        bytes_in_flight: rng.next(50_000),
                        app_limited: false,
                    };
                    cc.on_packet_sent(&sev);
                    reno.on_packet_sent(&sev);
                }
                _ => {
                    let mut ev = loss_ev(0, now, sent, rtt);
                    ev.persistent_congestion = rng.next(20) == 0;
                    cc.on_congestion(&ev);
                    if reno.on_congestion(&ev, LOSS_REDUCTION_FACTOR) {
                        reductions += 1;
                    }
                }
            }
            let w = cc.path(PathId(0)).unwrap();
            assert_eq!(w.cwnd().to_bits(), reno.cwnd().to_bits());
            assert_eq!(w.ssthresh().to_bits(), reno.ssthresh().to_bits());
            assert_eq!(cc.metrics(PathId(0)).unwrap().extra("alpha"), Some(1.0));
        }
        // The sequence exercised both growth regimes and many reductions.
        assert!(reductions > 20, "{reductions}");
        assert!(reno.ssthresh().is_finite());
    }

    #[test]
    fn one_path_is_newreno_exactly() {
        same_as_newreno(false);
    }

    #[test]
    fn a_path_without_rtt_sample_is_left_out() {
        same_as_newreno(true);
    }

    #[test]
    fn from_params_accepts_and_rejects() {
        let mut p = Params::new(
            "balia",
            Spec::parse("balia:max_window=100000,units=bytes", "algorithm")
                .unwrap()
                .params,
        );
        let cc = from_params(&mut p).unwrap();
        assert_eq!(cc.name(), "balia");
        p.finish(PARAMS).unwrap();
        let mut p = Params::empty("balia");
        assert!(from_params(&mut p).is_ok());
        for bad in [
            "balia:max_window=0",
            "balia:max_window=-3",
            "balia:max_window=x",
            "balia:units=bits",
        ] {
            let mut p = Params::new("balia", Spec::parse(bad, "algorithm").unwrap().params);
            assert!(
                matches!(
                    from_params(&mut p),
                    Err(CcError::Spec(crate::SpecError::BadValue { .. }))
                ),
                "{bad}"
            );
        }
        // Unknown keys are left for the registry to reject.
        let mut p = Params::new(
            "balia",
            Spec::parse("balia:beta=0.5", "algorithm").unwrap().params,
        );
        assert!(from_params(&mut p).is_ok());
        assert!(p.finish(PARAMS).is_err());
    }

    #[test]
    fn max_window_caps_and_unknown_paths_are_ignored() {
        let t0 = t0();
        let mut cc = Balia::new(BaliaConfig {
            max_window: 13_000,
            ..BaliaConfig::default()
        });
        cc.on_path_added(PathId(0), t0, 1200);
        assert_eq!(cc.window(PathId(0)), 12_000);
        let p = [AckedPacket {
            bytes: 1200,
            time_sent: t0,
        }; 3];
        cc.on_ack(&ack_ev(0, t0 + ms(10), ms(10), &p, false));
        assert_eq!(cc.window(PathId(0)), 13_000);
        cc.on_ack(&ack_ev(7, t0 + ms(10), ms(10), &p, false));
        cc.on_congestion(&loss_ev(7, t0 + ms(10), t0, ms(10)));
        assert_eq!(cc.window(PathId(7)), 0);
        assert!(cc.metrics(PathId(7)).is_none());
        // Zero RTTs never produce NaN.
        cc.on_path_added(PathId(1), t0, 1200);
        cc.on_ack(&ack_ev(1, t0, Duration::ZERO, &p, false));
        cc.on_congestion(&loss_ev(1, t0 + ms(1), t0, Duration::ZERO));
        for id in [0, 1] {
            let m = cc.metrics(PathId(id)).unwrap();
            assert!(m.extras.iter().all(|e| e.value.is_finite()));
            assert!(m.cwnd >= 2400);
        }
    }
}
