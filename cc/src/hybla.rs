//! TCP Hybla (Caini, Firrincieli, "TCP Hybla: a TCP enhancement for heterogeneous networks", International
//! Journal of Satellite Communications and Networking 22(5), 2004; Linux `net/ipv4/tcp_hybla.c`) as a
//! single-path [`PathController`], run uncoupled per path.
//!
//! Hybla removes Reno's bias against long RTTs: it makes a flow of round-trip time `RTT` grow, per unit of
//! time, like a Reno flow with the reference round-trip time `RTT0`, by scaling both increases with
//! `ρ = RTT/RTT0`.
//!
//! Formulas (`mss` = `max_datagram_size`; per acknowledged packet of `bytes`, i.e. per `bytes/mss` segments):
//! * `ρ = max(RTT/RTT0, 1)`, `RTT0 = 25 ms`;
//! * slow start: `cwnd += (2^ρ − 1)·bytes`, i.e. `2^ρ − 1` segments per segment acknowledged (Reno: 1), but
//!   never beyond `ssthresh` (Linux clamps the slow-start window to `ssthresh`);
//! * congestion avoidance: `cwnd += ρ²·mss·bytes/cwnd`, i.e. `ρ²/cwnd` segments per segment (Reno: `1/cwnd`);
//!   at `RTT = 100 ms` that is 16 times Reno's growth per RTT;
//! * on congestion: Reno's halving (once per RFC 9002 recovery period), as the paper and Linux
//!   (`tcp_reno_ssthresh`) keep it.
//!
//! Choices where the paper is vague (Linux's behaviour unless noted):
//! * `RTT` is the smallest smoothed RTT seen on the path (Linux recomputes ρ when `srtt` falls below the
//!   smallest seen), so queueing does not inflate ρ; before the first sample `ρ = 1`.
//! * `ρ < 1` (paths shorter than `RTT0`) is raised to 1, as in Linux: Hybla never grows slower than Reno.
//! * The slow-start exponent is capped at 16 (Linux `min(rho, 16)`), so the increase stays finite.
//! * Real-valued `ρ` and increases (Linux uses fixed point with 1/8 and 1/128 resolution).
//! * Recovery, persistent congestion, the app-limited rule and pacing are RFC 9002's ([`RenoWindow`]); the
//!   paper also recommends pacing and SACK, which QUIC has.

use std::time::{Duration, Instant};

use crate::params::Params;
use crate::window::{DEFAULT_MAX_WINDOW, LOSS_REDUCTION_FACTOR};
use crate::{
    AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathController,
    PathControllerFactory, RenoWindow, SentEvent, Uncoupled,
};

/// Registry name.
pub const NAME: &str = "hybla";

/// The reference round-trip time `RTT0` (paper and Linux: 25 ms).
pub const DEFAULT_RTT0: Duration = Duration::from_millis(25);

/// Largest exponent of the slow-start increase (Linux).
const MAX_SLOW_START_EXPONENT: f64 = 16.0;

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &["rtt0", "max_window"];

/// Builds the controller from registry parameters.
///
/// * `rtt0`: reference RTT in milliseconds, in `[1, 10000]` (default 25).
/// * `max_window`: largest window in bytes, in `[1, 2^32]`.
pub fn from_params(params: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
    Ok(Box::new(Uncoupled::new(HyblaConfig::from_params(params)?)))
}

/// Hybla's configuration; also the [`PathControllerFactory`] of [`Hybla`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HyblaConfig {
    /// The reference round-trip time `RTT0`.
    pub rtt0: Duration,
    /// Largest window in bytes.
    pub max_window: u64,
}

impl Default for HyblaConfig {
    fn default() -> Self {
        HyblaConfig {
            rtt0: DEFAULT_RTT0,
            max_window: DEFAULT_MAX_WINDOW,
        }
    }
}

impl HyblaConfig {
    /// Reads `rtt0` and `max_window`.
    pub fn from_params(params: &mut Params) -> Result<HyblaConfig, CcError> {
        Ok(HyblaConfig {
            rtt0: params.millis(
                "rtt0",
                DEFAULT_RTT0,
                Duration::from_millis(1),
                Duration::from_secs(10),
            )?,
            max_window: params.u64("max_window", DEFAULT_MAX_WINDOW, 1, DEFAULT_MAX_WINDOW)?,
        })
    }

    /// `ρ = max(rtt/RTT0, 1)`.
    pub fn rho(&self, rtt: Duration) -> f64 {
        let r0 = self.rtt0.as_secs_f64();
        if r0 <= 0.0 {
            return 1.0;
        }
        (rtt.as_secs_f64() / r0).max(1.0)
    }
}

impl PathControllerFactory for HyblaConfig {
    type Controller = Hybla;

    fn name(&self) -> &'static str {
        NAME
    }

    fn build(&self, _now: Instant, max_datagram_size: u16) -> Hybla {
        Hybla::new(*self, max_datagram_size)
    }
}

/// One path's Hybla controller.
#[derive(Clone, Debug)]
pub struct Hybla {
    config: HyblaConfig,
    window: RenoWindow,
    /// Smallest smoothed RTT seen.
    min_srtt: Option<Duration>,
}

impl Hybla {
    /// A controller at the start of slow start.
    pub fn new(config: HyblaConfig, max_datagram_size: u16) -> Self {
        Hybla {
            config,
            window: RenoWindow::with_max_window(max_datagram_size, config.max_window),
            min_srtt: None,
        }
    }

    /// The underlying RFC 9002 window.
    pub fn reno(&self) -> &RenoWindow {
        &self.window
    }

    /// The current `ρ` (1 before the first RTT sample).
    pub fn rho(&self) -> f64 {
        self.min_srtt.map_or(1.0, |r| self.config.rho(r))
    }
}

impl PathController for Hybla {
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.window.on_packet_sent(ev);
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        let srtt = ev.rtt.smoothed;
        self.min_srtt = Some(self.min_srtt.map_or(srtt, |m| m.min(srtt)));
        let rho = self.rho();
        let ss_factor = 2f64.powf(rho.min(MAX_SLOW_START_EXPONENT)) - 1.0;
        self.window.on_ack_with(ev, |w, p, slow_start| {
            if slow_start {
                (ss_factor * p.bytes as f64).min(w.ssthresh() - w.cwnd())
            } else {
                rho * rho * w.reno_increase(p)
            }
        });
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        self.window.on_congestion(ev, LOSS_REDUCTION_FACTOR);
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
        self.window.metrics(vec![Metric {
            name: "rho",
            value: self.rho(),
        }])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PathId;
    use crate::test_support::{ack, build_spec, loss, ms, t0};

    /// Slow start with one ACK of one packet at `rtt`, then a loss and one CA ACK of one packet: returns the
    /// window after the slow-start ACK, after the loss, and after the CA ACK.
    fn run(rtt_ms: u64) -> (u64, u64, u64) {
        let t = t0();
        let mut c = Hybla::new(HyblaConfig::default(), 1000);
        ack(&mut c, t + ms(rtt_ms), t, 1, 1000, ms(rtt_ms));
        let ss = c.window();
        c.on_congestion(&loss(t + ms(rtt_ms + 1), t + ms(1)));
        let after_loss = c.window();
        ack(
            &mut c,
            t + ms(3 * rtt_ms),
            t + ms(2 * rtt_ms),
            1,
            1000,
            ms(rtt_ms),
        );
        (ss, after_loss, c.window())
    }

    #[test]
    fn at_100_ms_grows_16_times_faster_than_reno_in_ca() {
        // ρ = 100/25 = 4. Slow start: 10000 + (2⁴ − 1)·1000 = 25000. Loss: 12500.
        // CA: ρ² = 16 times Reno's 1000·1000/12500 = 80, so +1280 → 13780.
        assert_eq!(run(100), (25_000, 12_500, 13_780));
    }

    #[test]
    fn at_50_ms_rho_is_two() {
        // ρ = 2: slow start +3·1000 = 13000; loss 6500; CA + 4·1000·1000/6500 = 615.38 → 7115.
        assert_eq!(run(50), (13_000, 6500, 7115));
    }

    #[test]
    fn at_or_below_rtt0_hybla_is_reno() {
        // ρ = 1: slow start +1000 = 11000; loss 5500; CA + 1000·1000/5500 = 181.8 → 5681.
        assert_eq!(run(25), (11_000, 5500, 5681));
        assert_eq!(run(10), (11_000, 5500, 5681));
    }

    #[test]
    fn slow_start_stops_at_ssthresh() {
        let t = t0();
        let mut c = Hybla::new(HyblaConfig::default(), 1000);
        c.on_congestion(&crate::test_support::persistent_loss(t + ms(10), t));
        // cwnd 2000 (minimum), ssthresh 5000: slow start at ρ = 4 would add 15000 but stops at 5000.
        assert_eq!(c.window(), 2000);
        ack(&mut c, t + ms(200), t + ms(100), 1, 1000, ms(100));
        assert_eq!(c.window(), 5000);
    }

    #[test]
    fn from_params_accepts_known_and_rejects_bad_params() {
        let t = t0();
        let mut cc = build_spec("hybla:rtt0=50,max_window=100000", from_params, PARAMS).unwrap();
        cc.on_path_added(PathId(0), t, 1000);
        // ρ = 100/50 = 2: slow start +3000.
        ack_cc(cc.as_mut(), t);
        assert_eq!(cc.window(PathId(0)), 13_000);
        assert!(matches!(
            build_spec("hybla:rtt0=0", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::BadValue { .. }))
        ));
        assert!(matches!(
            build_spec("hybla:rho=2", from_params, PARAMS),
            Err(CcError::Spec(crate::SpecError::UnknownParameter { .. }))
        ));
    }

    fn ack_cc(cc: &mut dyn CongestionController, t: Instant) {
        crate::test_support::ack_event(t + ms(100), t, 1, 1000, ms(100), |ev| cc.on_ack(ev));
    }
}
