//! BBRv1 for one path: draft-cardwell-iccrg-bbr-congestion-control-00 as Linux `tcp_bbr.c` implements it, with windows
//! in bytes (the draft's QUIC notes: `MinPipeCwnd = 4·max_datagram_size`).
//!
//! The model: `BtlBw` is the windowed max of delivery-rate samples over 10 packet-timed rounds
//! ([`filter::WindowedMaxFilter`]), `RTprop` the min RTT over 10 s. The state machine: Startup (gain
//! `2/ln 2`), full-pipe detection (3 rounds without 25 % growth), Drain (gain `ln 2/2`), ProbeBW (8-phase gain
//! cycle `[5/4, 3/4, 1×6]`, random initial phase that is never the 3/4 one), ProbeRTT (cwnd 4 packets for
//! ≥ 200 ms and ≥ 1 round when RTprop is 10 s old). Control: `pacing_rate = pacing_gain·BtlBw` (raised only
//! before the pipe is filled), send quantum, `target_cwnd = cwnd_gain·BtlBw·RTprop + 3·send_quantum`.
//!
//! Inputs: delivery-rate samples come in [`AckEvent::rate_sample`] (the connection runs
//! [`crate::DeliveryRateEstimator`]); RTprop is fed from `ev.rtt.latest`.
//!
//! Choices where draft-00 is silent, or differs from Linux `tcp_bbr.c`:
//! * **No rate sample** (`rate_sample == None`: the connection does not estimate rates, or the estimator
//!   discarded the sample because its interval was shorter than min_rtt): as Linux does for an invalid
//!   sample, BtlBw and the round counter are not updated and full-pipe detection is skipped, but RTprop, the
//!   state machine and the cwnd rules still run. With no bandwidth estimate at all, BBRInflight returns the
//!   initial window (as draft-00 does without an RTT sample), so the window stays near its initial value.
//! * **Recovery** (draft-00 §4.2.3.4) mapped to QUIC: a loss episode plays the part of TCP's fast recovery.
//!   A congestion event outside an episode that starts a new RFC 9002 recovery period (the lost packet was
//!   sent after the previous episode's mark) opens one: `prior_cwnd = save()`, `cwnd = inflight + 1
//!   packet`, packet conservation on for one round. Every loss subtracts the lost bytes (`cwnd = max(cwnd -
//!   lost, 1 packet)`), and a loss during an episode extends it: the episode's mark moves to the loss. The
//!   episode ends when a packet sent after its mark is acknowledged, i.e. after a round trip in which no loss
//!   was detected: `cwnd = max(cwnd, prior_cwnd)`. The draft ends recovery "by repairing all losses", which
//!   TCP's recovery point does and RFC 9002's period (over one round trip after its first loss) does not:
//!   with losses in every round trip, ending the episode with the period would open a new one every round
//!   trip, each cutting the window to what is in flight and conserving packets for a further round, so the
//!   window could never grow above the flight and BBR could not probe (the rule QUIC BBRv1 implementations
//!   derived from Chromium's `bbr_sender.cc` use too: recovery ends when a packet sent after the latest loss
//!   is acknowledged with no new loss). Persistent congestion is the RTO: `prior_cwnd = save()`, `cwnd` to
//!   the minimum, and the same exit rule. The draft's "1 packet" minimum is raised to RFC 9002's
//!   `kMinimumWindow = 2·mds` (the crate-wide floor).
//! * ECN-CE signals are ignored (BBRv1 has no ECN response).
//! * "Treat samples as app-limited while in ProbeRTT" (the draft sets the estimator's `C.app_limited`, which
//!   the connection owns): BBR keeps its own copy of that mark (`delivered + inflight`, refreshed on every ACK
//!   in ProbeRTT, cleared once delivered passes it) and treats samples as app-limited while it is set.
//! * Pacing has no 1 % margin and the target has no Linux quantization (even rounding, +2 packets,
//!   ACK-aggregation) and no long-term (policer) model: draft-00 has none of them.
//! * Idle restart: a packet sent app-limited with nothing in flight sets `idle_restart` (and in ProbeBW
//!   paces at 1.0·BtlBw); any ACK clears it after the ProbeRTT check, as in draft-00.
//! * The random initial ProbeBW phase comes from a SplitMix64 generator seeded from [`BbrConfig::seed`] and the
//!   index of the path (0 for the first path built), so runs are reproducible.
//!
//! For coupled use (C-MPBBR: Mahmud et al., IEEE Access 2020) the per-ACK work is split into [`Bbr::update_model`] and
//! [`Bbr::update_control`]; the latter takes a divisor for the bandwidth used for pacing and the target cwnd
//! (`bw_used = BtlBw / divisor`) without touching the max filter. [`PathController::on_ack`] runs both with
//! divisor 1.

pub mod filter;
pub(crate) mod rng;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::window::{DEFAULT_MAX_WINDOW, initial_window, minimum_window};
use crate::{
    AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathController,
    PathControllerFactory, RateSample, SentEvent, Uncoupled,
};
use filter::WindowedMaxFilter;
use rng::SplitMix64;

/// Startup pacing and cwnd gain, `2/ln 2` ≈ 2.885 (draft-00 §4.3.2.1).
pub const HIGH_GAIN: f64 = 2.0 / std::f64::consts::LN_2;
/// Drain pacing gain, `1/HIGH_GAIN` (draft-00 §4.3.3).
pub const DRAIN_GAIN: f64 = std::f64::consts::LN_2 / 2.0;
/// ProbeBW cwnd gain (draft-00 §4.3.4).
pub const PROBE_BW_CWND_GAIN: f64 = 2.0;
/// ProbeBW pacing-gain cycle (draft-00 §4.3.4.2).
pub const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// `BtlBwFilterLen`: rounds covered by the BtlBw max filter.
pub const BTL_BW_FILTER_LEN: u64 = 10;
/// `RTpropFilterLen`.
pub const RTPROP_FILTER_LEN: Duration = Duration::from_secs(10);
/// `ProbeRTTDuration`.
pub const PROBE_RTT_DURATION: Duration = Duration::from_millis(200);
/// `BBRMinPipeCwnd` in packets of the maximum datagram size.
pub const MIN_PIPE_CWND_PACKETS: u64 = 4;
/// Full-pipe detection: BtlBw must grow by this factor within a round...
pub const FULL_BW_THRESH: f64 = 1.25;
/// ...or after this many rounds the pipe is full.
pub const FULL_BW_COUNT: u32 = 3;
/// Send-quantum floor switches from 1 to 2 packets at 1.2 Mbit/s, in bytes per second.
const SEND_QUANTUM_LOW_RATE: f64 = 1.2e6 / 8.0;
/// Send-quantum cap (64 KB).
const SEND_QUANTUM_MAX: f64 = 65_536.0;

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &["seed"];

/// Builds the controller from registry parameters (consumes the keys it knows; the registry rejects the rest).
pub fn from_params(params: &mut crate::params::Params) -> Result<Box<dyn CongestionController>, CcError> {
    let seed = params.u64("seed", 0, 0, u64::MAX)?;
    Ok(Box::new(Uncoupled::new(BbrConfig::new(seed))))
}

/// Configuration of BBRv1 (also its [`PathControllerFactory`]).
#[derive(Debug)]
pub struct BbrConfig {
    /// Seed of the generator that picks the random initial ProbeBW phase (draft-00 §4.3.4.3).
    pub seed: u64,
    /// Upper bound on the window in bytes.
    pub max_window: u64,
    /// Number of paths built so far: the n-th path's generator is seeded with `(seed, n)`.
    built: AtomicU64,
}

impl BbrConfig {
    /// Default configuration with the given seed.
    pub fn new(seed: u64) -> Self {
        BbrConfig {
            seed,
            max_window: DEFAULT_MAX_WINDOW,
            built: AtomicU64::new(0),
        }
    }
}

impl Default for BbrConfig {
    fn default() -> Self {
        Self::new(0)
    }
}

impl Clone for BbrConfig {
    fn clone(&self) -> Self {
        BbrConfig {
            seed: self.seed,
            max_window: self.max_window,
            built: AtomicU64::new(self.built.load(Ordering::Relaxed)),
        }
    }
}

impl PathControllerFactory for BbrConfig {
    type Controller = Bbr;

    fn name(&self) -> &'static str {
        "bbr"
    }

    fn build(&self, now: Instant, max_datagram_size: u16) -> Bbr {
        let index = self.built.fetch_add(1, Ordering::Relaxed);
        Bbr::new(now, max_datagram_size, self.seed, index, self.max_window)
    }
}

/// BBR's state machine (draft-00 §4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BbrMode {
    /// Exponential search for the bottleneck bandwidth.
    Startup,
    /// Draining the queue Startup built.
    Drain,
    /// Steady state: cycling the pacing gain around 1.
    ProbeBw,
    /// Cwnd cut to 4 packets to measure RTprop.
    ProbeRtt,
}

impl BbrMode {
    /// Metric name of the state.
    pub fn name(self) -> &'static str {
        match self {
            BbrMode::Startup => "startup",
            BbrMode::Drain => "drain",
            BbrMode::ProbeBw => "probe_bw",
            BbrMode::ProbeRtt => "probe_rtt",
        }
    }
}

/// BBRv1 state of one path (a [`PathController`]).
#[derive(Clone, Debug)]
pub struct Bbr {
    mds: u64,
    max_window: u64,
    mode: BbrMode,
    // Model.
    btl_bw_filter: WindowedMaxFilter,
    rt_prop: Option<Duration>,
    rtprop_stamp: Instant,
    rtprop_expired: bool,
    // Rounds.
    delivered: u64,
    next_round_delivered: u64,
    round_count: u64,
    round_start: bool,
    // Full pipe.
    filled_pipe: bool,
    full_bw: f64,
    full_bw_count: u32,
    // Gains and cycle.
    pacing_gain: f64,
    cwnd_gain: f64,
    cycle_index: usize,
    cycle_stamp: Instant,
    rng: SplitMix64,
    // ProbeRTT and idle.
    probe_rtt_done_stamp: Option<Instant>,
    probe_rtt_round_done: bool,
    idle_restart: bool,
    /// BBR's copy of `C.app_limited` set during ProbeRTT (0 = not set).
    app_limited_mark: u64,
    // Control.
    has_seen_rtt: bool,
    pacing_rate: f64,
    send_quantum: u64,
    cwnd: u64,
    prior_cwnd: u64,
    target_cwnd: u64,
    bw_used: f64,
    // Recovery.
    in_recovery: bool,
    /// When the current (or latest) loss episode began or was last extended by a loss: it ends once a packet
    /// sent after this is acknowledged, and losses of packets sent before it open no new episode.
    recovery_mark: Option<Instant>,
    packet_conservation: bool,
    restore_pending: bool,
}

impl Bbr {
    /// A path starting at `now` in Startup; `seed` and `path_index` seed the ProbeBW phase generator.
    pub fn new(now: Instant, max_datagram_size: u16, seed: u64, path_index: u64, max_window: u64) -> Self {
        let mds = u64::from(max_datagram_size).max(1);
        let max_window = max_window.max(minimum_window(mds));
        let cwnd = initial_window(mds).min(max_window);
        let mut bbr = Bbr {
            mds,
            max_window,
            mode: BbrMode::Startup,
            btl_bw_filter: WindowedMaxFilter::new(),
            rt_prop: None,
            rtprop_stamp: now,
            rtprop_expired: false,
            delivered: 0,
            next_round_delivered: 0,
            round_count: 0,
            round_start: false,
            filled_pipe: false,
            full_bw: 0.0,
            full_bw_count: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            cycle_index: 0,
            cycle_stamp: now,
            rng: SplitMix64::new(seed, path_index),
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            idle_restart: false,
            app_limited_mark: 0,
            has_seen_rtt: false,
            pacing_rate: 0.0,
            send_quantum: mds,
            cwnd,
            prior_cwnd: 0,
            target_cwnd: cwnd,
            bw_used: 0.0,
            in_recovery: false,
            recovery_mark: None,
            packet_conservation: false,
            restore_pending: false,
        };
        bbr.init_pacing_rate(None);
        bbr
    }

    // ----- accessors -------------------------------------------------------------------------------------

    /// The state machine's state.
    pub fn mode(&self) -> BbrMode {
        self.mode
    }
    /// `BtlBw` in bytes per second (0 before the first sample).
    pub fn btl_bw(&self) -> f64 {
        self.btl_bw_filter.get()
    }
    /// `RTprop`, if an RTT was sampled.
    pub fn rt_prop(&self) -> Option<Duration> {
        self.rt_prop
    }
    /// Current pacing gain.
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }
    /// Current cwnd gain.
    pub fn cwnd_gain(&self) -> f64 {
        self.cwnd_gain
    }
    /// ProbeBW gain-cycle phase (0 = the 5/4 phase).
    pub fn cycle_index(&self) -> usize {
        self.cycle_index
    }
    /// Packet-timed rounds counted so far.
    pub fn round_count(&self) -> u64 {
        self.round_count
    }
    /// Whether Startup has filled the pipe.
    pub fn filled_pipe(&self) -> bool {
        self.filled_pipe
    }
    /// `full_bw` of full-pipe detection (bytes per second).
    pub fn full_bw(&self) -> f64 {
        self.full_bw
    }
    /// Rounds without 25 % BtlBw growth.
    pub fn full_bw_count(&self) -> u32 {
        self.full_bw_count
    }
    /// Bytes delivered on the path (as reported by the rate samples).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }
    /// Send quantum in bytes.
    pub fn send_quantum(&self) -> u64 {
        self.send_quantum
    }
    /// Target cwnd of the latest ACK, in bytes.
    pub fn target_cwnd(&self) -> u64 {
        self.target_cwnd
    }
    /// The bandwidth the latest control update used (`BtlBw / divisor`).
    pub fn bw_used(&self) -> f64 {
        self.bw_used
    }
    /// Pacing rate in bytes per second, with its fraction.
    pub fn pacing_rate_f64(&self) -> f64 {
        self.pacing_rate
    }
    /// Whether the path is in a (fast or RTO) recovery period.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    /// Maximum datagram size in bytes.
    pub fn max_datagram_size(&self) -> u64 {
        self.mds
    }

    fn min_pipe_cwnd(&self) -> u64 {
        MIN_PIPE_CWND_PACKETS.saturating_mul(self.mds)
    }

    fn initial_cwnd(&self) -> u64 {
        initial_window(self.mds)
    }

    fn clamp_cwnd(&self, cwnd: u64) -> u64 {
        cwnd.clamp(minimum_window(self.mds), self.max_window)
    }

    /// `BBRInflight(gain)` with bandwidth `bw`: `gain·bw·RTprop + 3·send_quantum`, or the initial window
    /// without an RTT sample or a bandwidth estimate.
    fn inflight(&self, bw: f64, gain: f64) -> u64 {
        let Some(rt_prop) = self.rt_prop else {
            return self.initial_cwnd();
        };
        if bw <= 0.0 {
            return self.initial_cwnd();
        }
        let bdp = (gain * bw * rt_prop.as_secs_f64()).ceil();
        // `as` saturates; bdp is finite and non-negative here.
        let bdp = if bdp.is_finite() { bdp as u64 } else { u64::MAX };
        bdp.saturating_add(self.send_quantum.saturating_mul(3))
    }

    // ----- model (draft-00 §4.1, §4.3) ---------------------------------------------------------------------

    /// The model half of the per-ACK work (draft-00 `BBRUpdateModelAndState`): BtlBw and rounds, gain cycle,
    /// full pipe, Drain, RTprop, ProbeRTT.
    pub fn update_model(&mut self, ev: &AckEvent<'_>) {
        let acked = ev.bytes_acked();
        if self.in_recovery
            && ev
                .largest_time_sent()
                .is_some_and(|t| self.recovery_mark.is_none_or(|s| t > s))
        {
            // A packet sent after the episode's latest loss was acknowledged (this acknowledgement detected
            // no loss: a loss would have moved the mark to now): a round trip without loss, so the losses
            // are taken as repaired. draft-00 §4.2.3.4: "Upon exiting loss recovery (RTO recovery or Fast
            // Recovery), either by repairing all losses or undoing recovery, BBR restores the best-known cwnd
            // value we had upon entering loss recovery" (applied in `set_cwnd`). The mark is kept: losses of
            // packets sent before it still open no new episode (RFC 9002 §7.3.2).
            self.in_recovery = false;
            self.packet_conservation = false;
            self.restore_pending = true;
        }
        let rs = ev.rate_sample.map(|mut rs| {
            if self.app_limited_mark != 0 && rs.total_delivered > self.app_limited_mark {
                self.app_limited_mark = 0;
            }
            rs.is_app_limited |= self.app_limited_mark != 0 || self.mode == BbrMode::ProbeRtt;
            rs
        });
        self.delivered = match &rs {
            Some(rs) => rs.total_delivered,
            None => self.delivered.saturating_add(acked),
        };
        self.round_start = false;
        if let Some(rs) = &rs {
            self.update_btl_bw(rs);
        }
        self.check_cycle_phase(ev, rs.as_ref());
        if let Some(rs) = &rs {
            self.check_full_pipe(rs);
        }
        self.check_drain(ev);
        self.update_rtprop(ev);
        self.check_probe_rtt(ev);
    }

    /// `BBRUpdateRound` + `BBRUpdateBtlBw`.
    fn update_btl_bw(&mut self, rs: &RateSample) {
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = self.delivered;
            self.round_count = self.round_count.saturating_add(1);
            self.round_start = true;
            // Linux `bbr_update_bw`: packet conservation lasts one round.
            self.packet_conservation = false;
        }
        let rate = rs.delivery_rate as f64;
        if rate >= self.btl_bw() || !rs.is_app_limited {
            self.btl_bw_filter
                .update(BTL_BW_FILTER_LEN, self.round_count, rate);
        }
    }

    /// `BBRCheckCyclePhase` / `BBRIsNextCyclePhase`.
    fn check_cycle_phase(&mut self, ev: &AckEvent<'_>, rs: Option<&RateSample>) {
        if self.mode != BbrMode::ProbeBw {
            return;
        }
        let rt_prop = self.rt_prop.unwrap_or(Duration::ZERO);
        let is_full_length = ev.now.saturating_duration_since(self.cycle_stamp) > rt_prop;
        let losses = rs.is_some_and(|rs| rs.newly_lost > 0);
        let prior_inflight = ev.prior_bytes_in_flight;
        let bw = self.btl_bw();
        let next = if self.pacing_gain == 1.0 {
            is_full_length
        } else if self.pacing_gain > 1.0 {
            is_full_length && (losses || prior_inflight >= self.inflight(bw, self.pacing_gain))
        } else {
            is_full_length || prior_inflight <= self.inflight(bw, 1.0)
        };
        if next {
            self.advance_cycle_phase(ev.now);
        }
    }

    fn advance_cycle_phase(&mut self, now: Instant) {
        self.cycle_stamp = now;
        self.cycle_index = (self.cycle_index + 1) % PACING_GAIN_CYCLE.len();
        self.pacing_gain = PACING_GAIN_CYCLE.get(self.cycle_index).copied().unwrap_or(1.0);
    }

    /// `BBRCheckFullPipe`.
    fn check_full_pipe(&mut self, rs: &RateSample) {
        if self.filled_pipe || !self.round_start || rs.is_app_limited {
            return;
        }
        if self.btl_bw() >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = self.btl_bw();
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count = self.full_bw_count.saturating_add(1);
        if self.full_bw_count >= FULL_BW_COUNT {
            self.filled_pipe = true;
        }
    }

    /// `BBRCheckDrain`.
    fn check_drain(&mut self, ev: &AckEvent<'_>) {
        if self.mode == BbrMode::Startup && self.filled_pipe {
            self.mode = BbrMode::Drain;
            self.pacing_gain = DRAIN_GAIN;
            self.cwnd_gain = HIGH_GAIN;
        }
        if self.mode == BbrMode::Drain && ev.bytes_in_flight <= self.inflight(self.btl_bw(), 1.0) {
            self.enter_probe_bw(ev.now);
        }
    }

    /// `BBREnterProbeBW`: random phase among all but the 3/4 one.
    fn enter_probe_bw(&mut self, now: Instant) {
        self.mode = BbrMode::ProbeBw;
        self.pacing_gain = 1.0;
        self.cwnd_gain = PROBE_BW_CWND_GAIN;
        // cycle_index = BBRGainCycleLen - 1 - random_int_between(0, 6), then advance: 2..=7 or 0, never 1.
        let r = usize::try_from(self.rng.next_u64() % 7).unwrap_or(0);
        self.cycle_index = PACING_GAIN_CYCLE.len() - 1 - r;
        self.advance_cycle_phase(now);
    }

    fn enter_startup(&mut self) {
        self.mode = BbrMode::Startup;
        self.pacing_gain = HIGH_GAIN;
        self.cwnd_gain = HIGH_GAIN;
    }

    /// `BBRUpdateRTprop`.
    fn update_rtprop(&mut self, ev: &AckEvent<'_>) {
        self.rtprop_expired = self
            .rtprop_stamp
            .checked_add(RTPROP_FILTER_LEN)
            .is_some_and(|deadline| ev.now > deadline);
        let rtt = ev.rtt.latest;
        if self.rt_prop.is_none_or(|p| rtt <= p) || self.rtprop_expired {
            self.rt_prop = Some(rtt);
            self.rtprop_stamp = ev.now;
        }
    }

    /// `BBRCheckProbeRTT` / `BBRHandleProbeRTT`.
    fn check_probe_rtt(&mut self, ev: &AckEvent<'_>) {
        if self.mode != BbrMode::ProbeRtt && self.rtprop_expired && !self.idle_restart {
            self.mode = BbrMode::ProbeRtt;
            self.pacing_gain = 1.0;
            self.cwnd_gain = 1.0;
            self.prior_cwnd = self.save_cwnd();
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == BbrMode::ProbeRtt {
            // Ignore low-rate samples during ProbeRTT (draft: C.app_limited = delivered + inflight ?: 1).
            self.app_limited_mark = self.delivered.saturating_add(ev.bytes_in_flight).max(1);
            match self.probe_rtt_done_stamp {
                None if ev.bytes_in_flight <= self.min_pipe_cwnd() => {
                    self.probe_rtt_done_stamp =
                        Some(ev.now.checked_add(PROBE_RTT_DURATION).unwrap_or(ev.now));
                    self.probe_rtt_round_done = false;
                    self.next_round_delivered = self.delivered;
                }
                None => {}
                Some(done) => {
                    if self.round_start {
                        self.probe_rtt_round_done = true;
                    }
                    if self.probe_rtt_round_done && ev.now > done {
                        self.rtprop_stamp = ev.now;
                        self.restore_cwnd();
                        // BBRExitProbeRTT.
                        if self.filled_pipe {
                            self.enter_probe_bw(ev.now);
                        } else {
                            self.enter_startup();
                        }
                    }
                }
            }
        }
        self.idle_restart = false;
    }

    /// `BBRSaveCwnd`.
    fn save_cwnd(&self) -> u64 {
        if !self.in_recovery && self.mode != BbrMode::ProbeRtt {
            self.cwnd
        } else {
            self.prior_cwnd.max(self.cwnd)
        }
    }

    /// `BBRRestoreCwnd`.
    fn restore_cwnd(&mut self) {
        self.cwnd = self.clamp_cwnd(self.cwnd.max(self.prior_cwnd));
    }

    // ----- control (draft-00 §4.2) -------------------------------------------------------------------------

    /// The control half of the per-ACK work (draft-00 `BBRUpdateControlParameters`): pacing rate, send
    /// quantum and cwnd, computed from `bw_used = BtlBw / bw_divisor` (a divisor below 1 or not finite counts
    /// as 1). The max filter is not changed.
    pub fn update_control(&mut self, ev: &AckEvent<'_>, bw_divisor: f64) {
        let divisor = if bw_divisor.is_finite() && bw_divisor > 1.0 {
            bw_divisor
        } else {
            1.0
        };
        self.bw_used = self.btl_bw() / divisor;
        if !self.has_seen_rtt && !ev.rtt.smoothed.is_zero() {
            self.init_pacing_rate(Some(ev.rtt.smoothed));
        }
        self.set_pacing_rate_with_gain(self.bw_used, self.pacing_gain);
        self.set_send_quantum();
        self.set_cwnd(ev);
    }

    /// `BBRInitPacingRate`: `high_gain · InitialCwnd / (SRTT or 1 ms)`.
    fn init_pacing_rate(&mut self, srtt: Option<Duration>) {
        let rtt = match srtt {
            Some(s) if !s.is_zero() => {
                self.has_seen_rtt = true;
                s
            }
            _ => Duration::from_millis(1),
        };
        self.pacing_rate = HIGH_GAIN * self.initial_cwnd() as f64 / rtt.as_secs_f64();
    }

    /// `BBRSetPacingRateWithGain`: only raise the rate until the pipe is filled.
    fn set_pacing_rate_with_gain(&mut self, bw: f64, gain: f64) {
        let rate = gain * bw;
        if rate.is_finite() && (self.filled_pipe || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        }
    }

    /// `BBRSetSendQuantum`: `max(min(rate · 1 ms, 64 KB), 1 or 2 packets)`.
    fn set_send_quantum(&mut self) {
        let floor = if self.pacing_rate < SEND_QUANTUM_LOW_RATE {
            self.mds
        } else {
            self.mds.saturating_mul(2)
        };
        let q = (self.pacing_rate * 0.001).min(SEND_QUANTUM_MAX);
        let q = if q.is_finite() && q > 0.0 { q as u64 } else { 0 };
        self.send_quantum = q.max(floor);
    }

    /// `BBRSetCwnd` with `BBRModulateCwndForRecovery` and `BBRModulateCwndForProbeRTT`.
    fn set_cwnd(&mut self, ev: &AckEvent<'_>) {
        let acked = ev.bytes_acked();
        self.target_cwnd = self.inflight(self.bw_used, self.cwnd_gain);
        let mut cwnd = self.cwnd;
        if self.restore_pending {
            self.restore_pending = false;
            cwnd = cwnd.max(self.prior_cwnd);
        }
        if self.packet_conservation {
            cwnd = cwnd.max(ev.bytes_in_flight.saturating_add(acked));
        } else {
            if self.filled_pipe {
                cwnd = cwnd.saturating_add(acked).min(self.target_cwnd);
            } else if cwnd < self.target_cwnd || self.delivered < self.initial_cwnd() {
                cwnd = cwnd.saturating_add(acked);
            }
            cwnd = cwnd.max(self.min_pipe_cwnd());
        }
        if self.mode == BbrMode::ProbeRtt {
            cwnd = cwnd.min(self.min_pipe_cwnd());
        }
        self.cwnd = self.clamp_cwnd(cwnd);
    }

    // ----- events ------------------------------------------------------------------------------------------

    fn handle_sent(&mut self, ev: &SentEvent) {
        // BBRHandleRestartFromIdle: sending resumes from idle (nothing was in flight) while app-limited.
        if ev.app_limited && ev.bytes_in_flight <= ev.bytes {
            self.idle_restart = true;
            if self.mode == BbrMode::ProbeBw {
                self.set_pacing_rate_with_gain(self.btl_bw(), 1.0);
            }
        }
    }

    fn handle_congestion(&mut self, ev: &CongestionEvent) {
        if ev.ecn {
            return; // BBRv1 does not respond to ECN-CE.
        }
        if ev.persistent_congestion {
            // draft-00 §4.2.3.4 "Upon retransmission timeout": save, then cwnd = 1 packet (here: the minimum
            // window). The recovery period lasts until a packet sent from now on is acknowledged.
            self.prior_cwnd = self.save_cwnd();
            self.cwnd = minimum_window(self.mds);
            self.in_recovery = true;
            self.recovery_mark = Some(ev.now);
            self.packet_conservation = false;
            self.restore_pending = false;
        } else if self.in_recovery {
            // A further loss during the episode (whatever the packet's send time) extends it: the losses
            // are not repaired yet, so the draft's fast recovery goes on (no new window cut, no new
            // conservation round). cwnd = max(cwnd - lost, 1 packet); conservation keeps at least what is
            // in flight.
            let mut cwnd = self.cwnd.saturating_sub(ev.lost_bytes).max(self.mds);
            if self.packet_conservation {
                cwnd = cwnd.max(ev.bytes_in_flight);
            }
            self.cwnd = cwnd;
            self.recovery_mark = Some(ev.now);
        } else if self.recovery_mark.is_none_or(|s| ev.sent_time > s) {
            // RFC 9002 §7.3.2: a new recovery period = draft-00 "upon entering Fast Recovery".
            self.prior_cwnd = self.save_cwnd();
            self.cwnd = ev.bytes_in_flight.saturating_add(self.mds);
            self.in_recovery = true;
            self.recovery_mark = Some(ev.now);
            self.packet_conservation = true;
            self.restore_pending = false;
            // Conservation lasts one round: a round starting now (Linux `bbr_set_cwnd_to_recover_or_restore`).
            self.next_round_delivered = self.delivered;
        } else {
            // After the episode, a late loss of a packet sent before its mark: no new episode; the lost
            // bytes are still subtracted (draft-00 `BBRModulateCwndForRecovery`), cwnd = max(cwnd - lost,
            // 1 packet).
            self.cwnd = self.cwnd.saturating_sub(ev.lost_bytes).max(self.mds);
        }
        if self.mode == BbrMode::ProbeRtt {
            self.cwnd = self.cwnd.min(self.min_pipe_cwnd());
        }
        self.cwnd = self.clamp_cwnd(self.cwnd);
    }

    /// BBR's metrics; `extras` are appended after BBR's own.
    pub fn metrics_with(&self, mut extras: Vec<Metric>) -> CcMetrics {
        let mut all = vec![
            Metric {
                name: "btl_bw",
                value: self.btl_bw(),
            },
            Metric {
                name: "rt_prop",
                value: self.rt_prop.map_or(0.0, |d| d.as_secs_f64()),
            },
            Metric {
                name: "pacing_gain",
                value: self.pacing_gain,
            },
            Metric {
                name: "cwnd_gain",
                value: self.cwnd_gain,
            },
            Metric {
                name: "round_count",
                value: self.round_count as f64,
            },
            Metric {
                name: "full_bw",
                value: self.full_bw,
            },
            Metric {
                name: "full_bw_count",
                value: f64::from(self.full_bw_count),
            },
            Metric {
                name: "cycle_index",
                value: self.cycle_index as f64,
            },
            Metric {
                name: "target_cwnd",
                value: self.target_cwnd as f64,
            },
            Metric {
                name: "send_quantum",
                value: self.send_quantum as f64,
            },
        ];
        all.append(&mut extras);
        CcMetrics {
            cwnd: self.cwnd,
            ssthresh: None,
            pacing_rate: Some(self.pacing_rate_u64()),
            state: self.mode.name(),
            extras: all,
        }
    }

    fn pacing_rate_u64(&self) -> u64 {
        // `as` saturates; the rate is finite and non-negative.
        self.pacing_rate as u64
    }
}

impl PathController for Bbr {
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.handle_sent(ev);
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        self.update_model(ev);
        self.update_control(ev, 1.0);
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        self.handle_congestion(ev);
    }

    fn on_max_datagram_size(&mut self, max_datagram_size: u16) {
        self.mds = u64::from(max_datagram_size).max(1);
        self.max_window = self.max_window.max(minimum_window(self.mds));
        self.cwnd = self.clamp_cwnd(self.cwnd);
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate_u64())
    }

    fn metrics(&self) -> CcMetrics {
        self.metrics_with(Vec::new())
    }

    fn state(&self) -> &'static str {
        self.mode.name()
    }
}

#[cfg(test)]
pub(crate) mod tests;
