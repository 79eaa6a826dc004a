//! NewReno as specified for QUIC: RFC 9002 §7 and Appendix B.
//!
//! All of the machinery (slow start, the recovery period, the multiplicative decrease, persistent congestion,
//! the app-limited rule of §7.8 and pacing at `1.25 · cwnd / smoothed_rtt`, §7.7) lives in [`RenoWindow`];
//! this module only supplies the congestion-avoidance increase `mds · acked / cwnd` (§7.3.3) and the decrease
//! factor `kLossReductionFactor = 0.5` (§7.3.2).
//!
//! Choices where the RFC is silent or leaves a choice:
//! * ECN-CE is handled exactly like a loss (§7.3.2 allows nothing else), with the same recovery-period rule.
//! * The decrease is immediate (no PRR), which §7.3.2 allows.
//! * `beta` is configurable for experiments; RFC 9002 fixes it at 0.5 (the default).

use std::time::Instant;

use crate::params::Params;
use crate::window::{DEFAULT_MAX_WINDOW, LOSS_REDUCTION_FACTOR};
use crate::{
    AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, PathController,
    PathControllerFactory, RenoWindow, SentEvent, Uncoupled,
};

/// Registry name.
pub const NAME: &str = "newreno";

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &["beta", "max_window"];

/// Builds the controller from registry parameters (consumes the keys it knows; the registry rejects the rest).
///
/// * `beta`: multiplicative decrease factor in `[0.05, 0.95]` (default 0.5, RFC 9002 `kLossReductionFactor`).
/// * `max_window`: largest window in bytes, in `[1, 2^32]` (default 2^32; never below `2 · mds`).
pub fn from_params(params: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
    let config = NewRenoConfig {
        beta: params.f64("beta", LOSS_REDUCTION_FACTOR, 0.05, 0.95)?,
        max_window: params.u64("max_window", DEFAULT_MAX_WINDOW, 1, DEFAULT_MAX_WINDOW)?,
    };
    Ok(Box::new(Uncoupled::new(config)))
}

/// NewReno configuration; also the [`PathControllerFactory`] that builds one [`NewReno`] per path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewRenoConfig {
    /// Multiplicative decrease factor: `ssthresh = cwnd · beta` on congestion (RFC 9002: 0.5).
    pub beta: f64,
    /// Largest window in bytes (raised to `2 · mds` if smaller).
    pub max_window: u64,
}

impl Default for NewRenoConfig {
    fn default() -> Self {
        NewRenoConfig {
            beta: LOSS_REDUCTION_FACTOR,
            max_window: DEFAULT_MAX_WINDOW,
        }
    }
}

impl PathControllerFactory for NewRenoConfig {
    type Controller = NewReno;

    fn name(&self) -> &'static str {
        NAME
    }

    fn build(&self, _now: Instant, max_datagram_size: u16) -> NewReno {
        NewReno::new(*self, max_datagram_size)
    }
}

/// One path's NewReno controller.
#[derive(Clone, Debug)]
pub struct NewReno {
    window: RenoWindow,
    beta: f64,
}

impl NewReno {
    /// A controller at the start of slow start with the RFC 9002 initial window.
    pub fn new(config: NewRenoConfig, max_datagram_size: u16) -> Self {
        NewReno {
            window: RenoWindow::with_max_window(max_datagram_size, config.max_window),
            beta: config.beta,
        }
    }

    /// The underlying RFC 9002 window state.
    pub fn reno_window(&self) -> &RenoWindow {
        &self.window
    }
}

impl PathController for NewReno {
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.window.on_packet_sent(ev);
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        // RFC 9002 §7.3.3: "cwnd += max_datagram_size * acked_packet.sent_bytes / cwnd".
        self.window.on_ack(ev, RenoWindow::reno_increase);
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        // RFC 9002 §7.3.2 / §7.6.2; loss and ECN-CE alike.
        self.window.on_congestion(ev, self.beta);
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

    fn metrics(&self) -> CcMetrics {
        self.window.metrics(Vec::new())
    }

    fn state(&self) -> &'static str {
        self.window.state()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::{AckedPacket, PathId, RttSnapshot};

    #[allow(clippy::disallowed_methods)] // test set-up needs a base instant
    fn t0() -> Instant {
        Instant::now()
    }

    fn rtt() -> RttSnapshot {
        RttSnapshot::from_rtt(Duration::from_millis(100))
    }

    fn ack(c: &mut NewReno, now: Instant, sent: Instant, n: usize, app_limited: bool) {
        let packets = vec![
            AckedPacket {
                bytes: 1200,
                time_sent: sent
            };
            n
        ];
        c.on_ack(&AckEvent {
            path: PathId(0),
            now,
            rtt: rtt(),
            packets: &packets,
            prior_bytes_in_flight: 1200 * n as u64,
            bytes_in_flight: 0,
            app_limited,
            rate_sample: None,
        });
    }

    fn loss(now: Instant, sent: Instant, persistent: bool, ecn: bool) -> CongestionEvent {
        CongestionEvent {
            path: PathId(0),
            now,
            sent_time: sent,
            lost_bytes: if ecn { 0 } else { 1200 },
            bytes_in_flight: 0,
            persistent_congestion: persistent,
            ecn,
            rtt: rtt(),
        }
    }

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn slow_start_grows_by_bytes_acked() {
        let t = t0();
        let mut c = NewReno::new(NewRenoConfig::default(), 1200);
        assert_eq!(c.window(), 12_000); // RFC 9002 kInitialWindow = min(10·1200, max(14720, 2400))
        ack(&mut c, t + ms(100), t, 5, false);
        // 12000 + 5·1200 = 18000
        assert_eq!(c.window(), 18_000);
        assert_eq!(c.metrics().state, "slow_start");
        // pacing 1.25 · 18000 / 0.1 s = 225000 B/s
        assert_eq!(c.pacing_rate(), Some(225_000));
    }

    #[test]
    fn halves_and_grows_one_mss_per_window_in_congestion_avoidance() {
        let t = t0();
        let mut c = NewReno::new(NewRenoConfig::default(), 1200);
        c.on_congestion(&loss(t + ms(100), t, false, false));
        // ssthresh = 12000·0.5 = 6000, cwnd = max(6000, 2400) = 6000
        assert_eq!(c.window(), 6000);
        assert_eq!(c.metrics().ssthresh, Some(6000));
        assert_eq!(c.metrics().state, "recovery");
        // Ack one window (5 packets) sent after recovery began; per packet cwnd += 1200·1200/cwnd:
        // 6000 + 240 = 6240; + 1440000/6240 = 230.769 → 6470.769; + 222.540 → 6693.309;
        // + 215.138 → 6908.447; + 208.440 → 7116.887. Just under one MSS for the window (7200).
        ack(&mut c, t + ms(300), t + ms(150), 5, false);
        assert_eq!(c.window(), 7116);
        assert_eq!(c.metrics().state, "congestion_avoidance");
    }

    #[test]
    fn recovery_period_suppresses_second_reduction() {
        let t = t0();
        let mut c = NewReno::new(NewRenoConfig::default(), 1200);
        c.on_congestion(&loss(t + ms(100), t + ms(10), false, false));
        assert_eq!(c.window(), 6000);
        // Lost packet sent before the recovery period began (t+50 ms <= t+100 ms): ignored.
        c.on_congestion(&loss(t + ms(120), t + ms(50), false, false));
        assert_eq!(c.window(), 6000);
        // Acks of packets sent before recovery began do not grow the window.
        ack(&mut c, t + ms(130), t + ms(60), 3, false);
        assert_eq!(c.window(), 6000);
        // A loss of a packet sent after recovery began reduces again: 6000·0.5 = 3000.
        c.on_congestion(&loss(t + ms(300), t + ms(150), false, false));
        assert_eq!(c.window(), 3000);
    }

    #[test]
    fn persistent_congestion_collapses_to_minimum_window() {
        let t = t0();
        let mut c = NewReno::new(NewRenoConfig::default(), 1200);
        c.on_congestion(&loss(t + ms(1000), t, true, false));
        // kMinimumWindow = 2·1200; ssthresh keeps the halved value 6000, so slow start resumes.
        assert_eq!(c.window(), 2400);
        assert_eq!(c.metrics().ssthresh, Some(6000));
        ack(&mut c, t + ms(1200), t + ms(1100), 1, false);
        assert_eq!(c.window(), 3600); // slow start: 2400 + 1200
    }

    #[test]
    fn app_limited_acks_do_not_grow_the_window() {
        let t = t0();
        let mut c = NewReno::new(NewRenoConfig::default(), 1200);
        ack(&mut c, t + ms(100), t, 5, true);
        assert_eq!(c.window(), 12_000);
        c.on_congestion(&loss(t + ms(200), t + ms(10), false, false));
        ack(&mut c, t + ms(400), t + ms(300), 5, true);
        assert_eq!(c.window(), 6000);
    }

    #[test]
    fn ecn_ce_is_handled_like_loss() {
        let t = t0();
        let mut c = NewReno::new(NewRenoConfig::default(), 1200);
        c.on_congestion(&loss(t + ms(100), t, false, true));
        assert_eq!(c.window(), 6000); // 12000 · 0.5
        // A second CE report for a packet sent before recovery began is ignored.
        c.on_congestion(&loss(t + ms(110), t + ms(50), false, true));
        assert_eq!(c.window(), 6000);
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
        let mut cc = build("newreno:beta=0.7,max_window=100000").unwrap();
        assert_eq!(cc.name(), "newreno");
        let t = t0();
        cc.on_path_added(PathId(0), t, 1200);
        cc.on_congestion(&loss(t + ms(100), t, false, false));
        assert_eq!(cc.window(PathId(0)), 8400); // 12000 · 0.7
        assert!(build("newreno").is_ok());
        assert!(matches!(
            build("newreno:beta=1.5"),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build("newreno:beta=x"),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build("newreno:max_window=0"),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build("newreno:c=0.4"),
            Err(CcError::Spec(crate::SpecError::UnknownParameter { .. }))
        ));
    }

    #[test]
    fn max_window_caps_growth() {
        let t = t0();
        let mut c = NewReno::new(
            NewRenoConfig {
                max_window: 15_000,
                ..NewRenoConfig::default()
            },
            1200,
        );
        ack(&mut c, t + ms(100), t, 10, false);
        assert_eq!(c.window(), 15_000);
    }
}
