//! TCP Westwood+ (Mascolo, Casetti, Gerla, Sanadidi, Wang, "TCP Westwood: bandwidth estimation for enhanced
//! transport over wireless links", MobiCom 2001; Grieco, Mascolo, "Performance evaluation and comparison of
//! Westwood+, New Reno, and Vegas TCP congestion control", ACM CCR 34(2), 2004; Linux
//! `net/ipv4/tcp_westwood.c`) as a single-path [`PathController`], run uncoupled per path.
//!
//! Westwood+ keeps Reno's increase but, after a congestion event, sets the window to the bandwidth-delay
//! product it has measured instead of halving blindly, so random (non-congestive) losses cost little.
//!
//! Formulas (bytes, seconds):
//! * bandwidth samples, once per RTT (Westwood+; the original Westwood sampled every ACK): the bytes
//!   acknowledged during an interval `Δ` that lasts longer than `max(RTT, 50 ms)`, `b_k = bytes/Δ`;
//! * low-pass filter (Linux, two cascaded 7/8 EWMAs): `bw_ns ← 7/8·bw_ns + 1/8·b_k`,
//!   `BWE ← 7/8·BWE + 1/8·bw_ns`; the first sample initialises both;
//! * on congestion (loss or ECN-CE, once per RFC 9002 recovery period):
//!   `ssthresh = max(BWE·RTT_min, 2·mss)`, `cwnd = min(cwnd, ssthresh)` (the paper's rule after three
//!   duplicate ACKs; Linux reaches the same window at the end of recovery, `CA_EVENT_COMPLETE_CWR`);
//! * persistent congestion (the paper's and Linux's timeout): `ssthresh = max(BWE·RTT_min, 2·mss)` and the
//!   window collapses to `2·mss` (RFC 9002's minimum; TCP's one segment);
//! * increase: Reno's (RFC 9002 slow start and `mss·bytes/cwnd` in congestion avoidance).
//!
//! Choices where the sources are vague or differ:
//! * `RTT` for the sampling interval is the latest RTT sample (Linux `w->rtt`); `RTT_min` is the smallest
//!   sample ever seen. Linux forgets `RTT_min` after a timeout (`reset_rtt_min`); here it is never reset.
//! * As in Linux, the bytes of the ACK that closes an interval count towards the next one.
//! * Every acknowledgement counts, including application-limited ones (Linux counts all ACKed bytes).
//! * Before the first bandwidth sample a congestion event halves the window (NewReno), since `BWE` is unknown.
//! * If `BWE·RTT_min` exceeds the window, the window stays and `ssthresh` is set above it, so slow start
//!   resumes up to the estimate (the paper's rule; Linux would raise `cwnd` to `ssthresh` at once).
//! * Pacing is RFC 9002's `1.25·cwnd/srtt` ([`RenoWindow`]).

use std::time::{Duration, Instant};

use crate::params::Params;
use crate::window::{DEFAULT_MAX_WINDOW, LOSS_REDUCTION_FACTOR};
use crate::{
    AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathController,
    PathControllerFactory, RenoWindow, SentEvent, Uncoupled,
};

/// Registry name.
pub const NAME: &str = "westwood";

/// Shortest bandwidth-sampling interval (Linux `TCP_WESTWOOD_RTT_MIN`, 50 ms).
pub const DEFAULT_MIN_INTERVAL: Duration = Duration::from_millis(50);

/// Weight of the old value in each low-pass stage (Linux: 7/8).
pub const DEFAULT_FILTER_GAIN: f64 = 0.875;

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &["min_interval", "filter_gain", "max_window"];

/// Builds the controller from registry parameters.
///
/// * `min_interval`: shortest sampling interval in milliseconds, in `[1, 10000]` (default 50).
/// * `filter_gain`: weight of the old estimate in each filter stage, in `[0, 0.999]` (default 0.875).
/// * `max_window`: largest window in bytes, in `[1, 2^32]`.
pub fn from_params(params: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
    Ok(Box::new(Uncoupled::new(WestwoodConfig::from_params(params)?)))
}

/// Westwood+'s configuration; also the [`PathControllerFactory`] of [`Westwood`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WestwoodConfig {
    /// Shortest bandwidth-sampling interval.
    pub min_interval: Duration,
    /// Weight of the old value in each of the two filter stages.
    pub filter_gain: f64,
    /// Largest window in bytes.
    pub max_window: u64,
}

impl Default for WestwoodConfig {
    fn default() -> Self {
        WestwoodConfig {
            min_interval: DEFAULT_MIN_INTERVAL,
            filter_gain: DEFAULT_FILTER_GAIN,
            max_window: DEFAULT_MAX_WINDOW,
        }
    }
}

impl WestwoodConfig {
    /// Reads the parameters listed in [`from_params`].
    pub fn from_params(params: &mut Params) -> Result<WestwoodConfig, CcError> {
        Ok(WestwoodConfig {
            min_interval: params.millis(
                "min_interval",
                DEFAULT_MIN_INTERVAL,
                Duration::from_millis(1),
                Duration::from_secs(10),
            )?,
            filter_gain: params.f64("filter_gain", DEFAULT_FILTER_GAIN, 0.0, 0.999)?,
            max_window: params.u64("max_window", DEFAULT_MAX_WINDOW, 1, DEFAULT_MAX_WINDOW)?,
        })
    }
}

impl PathControllerFactory for WestwoodConfig {
    type Controller = Westwood;

    fn name(&self) -> &'static str {
        NAME
    }

    fn build(&self, now: Instant, max_datagram_size: u16) -> Westwood {
        Westwood::new(*self, now, max_datagram_size)
    }
}

/// One path's Westwood+ controller.
#[derive(Clone, Debug)]
pub struct Westwood {
    config: WestwoodConfig,
    window: RenoWindow,
    /// Start of the current sampling interval.
    interval_start: Instant,
    /// Bytes acknowledged in the current interval.
    bytes: u64,
    /// First filter stage, bytes/s (`None` before the first sample).
    bw_ns: Option<f64>,
    /// The bandwidth estimate `BWE`, bytes/s.
    bwe: Option<f64>,
    rtt_min: Option<Duration>,
}

impl Westwood {
    /// A controller for a path that starts at `now`.
    pub fn new(config: WestwoodConfig, now: Instant, max_datagram_size: u16) -> Self {
        Westwood {
            config,
            window: RenoWindow::with_max_window(max_datagram_size, config.max_window),
            interval_start: now,
            bytes: 0,
            bw_ns: None,
            bwe: None,
            rtt_min: None,
        }
    }

    /// The underlying RFC 9002 window.
    pub fn reno(&self) -> &RenoWindow {
        &self.window
    }

    /// The bandwidth estimate in bytes per second.
    pub fn bandwidth_estimate(&self) -> Option<f64> {
        self.bwe
    }

    /// The smallest RTT sample seen.
    pub fn rtt_min(&self) -> Option<Duration> {
        self.rtt_min
    }

    /// `max(BWE·RTT_min, 2·mss)` in bytes, once both are known.
    pub fn bdp_estimate(&self) -> Option<f64> {
        let bdp = self.bwe? * self.rtt_min?.as_secs_f64();
        bdp.is_finite().then(|| bdp.max(self.window.min_window()))
    }

    fn sample_bandwidth(&mut self, now: Instant, rtt: Duration) {
        let delta = now.saturating_duration_since(self.interval_start);
        if rtt.is_zero() || delta <= rtt.max(self.config.min_interval) {
            return;
        }
        let sample = self.bytes as f64 / delta.as_secs_f64();
        let g = self.config.filter_gain;
        let (bw_ns, bwe) = match (self.bw_ns, self.bwe) {
            (Some(bw_ns), Some(bwe)) => {
                let bw_ns = g * bw_ns + (1.0 - g) * sample;
                (bw_ns, g * bwe + (1.0 - g) * bw_ns)
            }
            _ => (sample, sample),
        };
        if bw_ns.is_finite() && bwe.is_finite() {
            self.bw_ns = Some(bw_ns);
            self.bwe = Some(bwe);
        }
        self.bytes = 0;
        self.interval_start = now;
    }
}

impl PathController for Westwood {
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.window.on_packet_sent(ev);
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        let rtt = ev.rtt.latest;
        if !rtt.is_zero() {
            self.rtt_min = Some(self.rtt_min.map_or(rtt, |m| m.min(rtt)));
        }
        self.sample_bandwidth(ev.now, rtt);
        self.bytes = self.bytes.saturating_add(ev.bytes_acked());
        self.window.on_ack(ev, RenoWindow::reno_increase);
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        let Some(target) = self.bdp_estimate() else {
            self.window.on_congestion(ev, LOSS_REDUCTION_FACTOR);
            return;
        };
        let cwnd = self.window.cwnd();
        let beta = if cwnd > 0.0 { (target / cwnd).min(1.0) } else { 1.0 };
        let reduced = self.window.on_congestion(ev, beta);
        if reduced || ev.persistent_congestion {
            self.window.set_ssthresh(target);
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
                name: "bwe",
                value: self.bwe.unwrap_or(0.0),
            },
            Metric {
                name: "rtt_min",
                value: self.rtt_min.map_or(0.0, |d| d.as_secs_f64()),
            },
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PathId;
    use crate::test_support::{ack, build_spec, close, loss, ms, persistent_loss, t0};

    #[test]
    fn ssthresh_after_loss_is_bandwidth_times_min_rtt() {
        let t = t0();
        let mut c = Westwood::new(WestwoodConfig::default(), t, 1200);
        // 10 packets at 50 ms (RTT 80 ms: interval 50 ≤ 80, no sample), 10 at 101 ms (RTT 100 ms: 101 > 100,
        // sample = the first 12000 bytes / 0.101 s = 118811.881 B/s). Slow start: 12000 + 20·1200 = 36000.
        ack(&mut c, t + ms(50), t, 10, 1200, ms(80));
        assert_eq!(c.bandwidth_estimate(), None);
        ack(&mut c, t + ms(101), t, 10, 1200, ms(100));
        assert!(close(c.bandwidth_estimate().unwrap(), 118_811.881, 1e-3));
        assert_eq!(c.window(), 36_000);
        // Loss: ssthresh = 118811.881 B/s · 0.080 s = 9504.950 bytes; cwnd = min(36000, ssthresh).
        c.on_congestion(&loss(t + ms(150), t + ms(101)));
        assert!(close(c.reno().cwnd(), 9504.950, 1e-3), "{}", c.reno().cwnd());
        assert!(close(c.reno().ssthresh(), 9504.950, 1e-3));
        // Congestion avoidance afterwards is Reno's: + 1200·1200/9504.950.
        ack(&mut c, t + ms(300), t + ms(200), 1, 1200, ms(100));
        assert!(
            close(c.reno().cwnd(), 9504.950 + 151.500, 1e-3),
            "{}",
            c.reno().cwnd()
        );
    }

    #[test]
    fn the_estimate_is_low_pass_filtered() {
        let t = t0();
        let mut c = Westwood::new(WestwoodConfig::default(), t, 1200);
        ack(&mut c, t + ms(50), t, 10, 1200, ms(100));
        ack(&mut c, t + ms(101), t, 10, 1200, ms(100)); // b1 = 12000/0.101 = 118811.881
        // Next interval from 101 ms: 12000 bytes (the 101 ms ACK's), closed at 203 ms: b2 = 12000/0.102 =
        // 117647.059. bw_ns = 7/8·118811.881 + 1/8·117647.059 = 118666.278;
        // BWE = 7/8·118811.881 + 1/8·118666.278 = 118793.681.
        ack(&mut c, t + ms(203), t + ms(101), 1, 1200, ms(100));
        assert!(close(c.bandwidth_estimate().unwrap(), 118_793.681, 1e-3));
    }

    #[test]
    fn an_estimate_above_the_window_resumes_slow_start() {
        let t = t0();
        let mut c = Westwood::new(WestwoodConfig::default(), t, 1200);
        // No estimate yet: the first loss halves, 12000 → 6000, and a recovery period begins at 1 ms.
        c.on_congestion(&loss(t + ms(1), t));
        assert_eq!(c.window(), 6000);
        // 100 packets sent before recovery began are acked at 50 ms, one more at 101 ms (RTT 100 ms): no growth,
        // but the sample 120000 bytes / 0.101 s = 1188118.812 B/s.
        ack(&mut c, t + ms(50), t, 100, 1200, ms(100));
        ack(&mut c, t + ms(101), t, 1, 1200, ms(100));
        assert_eq!(c.window(), 6000);
        assert!(close(c.bandwidth_estimate().unwrap(), 1_188_118.812, 1e-3));
        // A new loss: BWE·RTT_min = 118811.881 bytes > cwnd: the window stays, ssthresh goes above it.
        c.on_congestion(&loss(t + ms(150), t + ms(120)));
        assert_eq!(c.window(), 6000);
        assert!(close(c.reno().ssthresh(), 118_811.881, 1e-3));
        assert!(c.reno().in_slow_start());
        // Persistent congestion: the window collapses to 2·1200, ssthresh keeps the estimate.
        c.on_congestion(&persistent_loss(t + ms(2000), t + ms(1000)));
        assert_eq!(c.window(), 2400);
        assert!(close(c.reno().ssthresh(), 118_811.881, 1e-3));
    }

    #[test]
    fn without_an_estimate_a_loss_halves() {
        let t = t0();
        let mut c = Westwood::new(WestwoodConfig::default(), t, 1200);
        c.on_congestion(&loss(t + ms(100), t));
        assert_eq!(c.window(), 6000);
    }

    #[test]
    fn from_params_accepts_known_and_rejects_bad_params() {
        assert!(
            build_spec(
                "westwood:min_interval=20,filter_gain=0.5,max_window=9999",
                from_params,
                PARAMS
            )
            .is_ok()
        );
        let mut cc = build_spec("westwood", from_params, PARAMS).unwrap();
        cc.on_path_added(PathId(0), t0(), 1200);
        assert_eq!(cc.window(PathId(0)), 12_000);
        assert!(matches!(
            build_spec("westwood:filter_gain=1", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build_spec("westwood:beta=1", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::UnknownParameter { .. }))
        ));
    }
}
