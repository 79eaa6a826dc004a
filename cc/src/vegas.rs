//! TCP Vegas (Brakmo, Peterson, IEEE JSAC 1995; Linux `net/ipv4/tcp_vegas.c`) as a single-path
//! [`PathController`], and [`VegasPath`], the per-path Vegas machinery that wVegas ([`crate::wvegas`]: Cao, Xu, Fu,
//! IEEE ICNP 2012) reuses.
//!
//! Once per round trip, Vegas compares the expected rate `cwnd/base_rtt` with the actual rate `cwnd/rtt` and
//! expresses the difference as packets queued in the network:
//! `diff = cwnd·(rtt − base_rtt)/rtt` (packets), `target = cwnd·base_rtt/rtt`.
//! * slow start: if `diff > gamma`, leave it: `cwnd = min(cwnd, target + 1)`, `ssthresh = min(ssthresh,
//!   cwnd − 1)`; otherwise grow as usual;
//! * congestion avoidance: `diff > beta` → `cwnd −= 1` (and `ssthresh = min(ssthresh, cwnd − 1)`),
//!   `diff < alpha` → `cwnd += 1` (packets of the maximum datagram size);
//! * optional queue-drain rule of wVegas (Cao, Xu, Fu, IEEE ICNP 2012, step 3), off in classic Vegas;
//! * clamp to `[2 packets, max_window]`.
//!
//! Losses, ECN-CE and persistent congestion use [`RenoWindow`] (RFC 9002 §7: one halving per recovery period,
//! collapse to the minimum window on persistent congestion).
//!
//! Choices where the sources are silent, or where this port differs from Linux:
//! * **Rounds.** Linux ends a round when the ACK passes `beg_snd_nxt` (the next sequence number at the start of
//!   the round). QUIC has no byte sequence, so a round ends with the first ACK, not application-limited, that
//!   acknowledges a packet sent at or after the round began; the round that follows begins at that ACK's
//!   `now`. The first round begins when the path is added.
//! * **RTT samples**: one per ACK event, the event's `latest_rtt`, raised to 1 µs if zero (Linux adds 1 µs to
//!   every sample for the same reason). `base_rtt` is the minimum sample ever seen (never reset).
//! * **Round statistic**: `rtt_stat = min` (Linux `tcp_vegas.c`, the default) or `avg` (the mean of the round's
//!   samples, as `mptcp_wvegas.c` does). A param.
//! * **diff** is divided by `rtt` (Brakmo and Peterson; Cao, Xu, Fu, IEEE ICNP 2012); Linux `tcp_vegas.c` divides by
//!   `base_rtt`. Real-valued: windows are fractional packets, no integer truncation.
//! * **Reno fallback**: when a round ends with at most 2 samples, that ACK is handled as NewReno would handle
//!   it (slow start or the RFC 9002 §7.3.3 increase), as Linux calls `tcp_reno_cong_avoid` once per such round.
//! * Within a round, slow start grows by the acknowledged bytes (RFC 9002 §7.3.1); congestion avoidance does
//!   not grow: Vegas changes the window only at the end of a round.
//! * **Recovery**: Vegas is off while a recovery period lasts (Linux runs it only in `TCP_CA_Open`): no growth;
//!   samples still lower `base_rtt`. A new round begins when recovery ends and after persistent congestion.
//! * **Application-limited ACKs** only collect RTT samples: Linux calls `cong_avoid` only when cwnd-limited.
//! * Linux ends each Vegas round with `ssthresh = tcp_current_ssthresh()`, i.e. `max(ssthresh, ¾·cwnd)`; the
//!   wVegas paper does not list it and it is omitted: ssthresh changes only on congestion and by the rules above. So a
//!   drain that takes cwnd below ssthresh re-enters slow start (Linux does too, unless ¾ of the old cwnd
//!   is below the drained one).
//! * **Queue drain** (when `drain` is on; Cao, Xu, Fu, IEEE ICNP 2012): `q = rtt − base_rtt`; `queue_delay` is the
//!   smallest `q` seen since the last drain (0 = none yet); if `q ≥ 2·queue_delay`, `cwnd = cwnd·base_rtt/(2·rtt)` and
//!   `queue_delay = 0`. Applied in congestion avoidance only, after the ±1 step. Deviation from Linux: a round
//!   with `q = 0` never drains (Linux would then halve the window every round on a path with a perfectly stable
//!   RTT, because `0 ≥ 2·0`). Like `mptcp_wvegas.c`, which resets `queue_delay` whenever the path returns to
//!   `TCP_CA_Open`, `queue_delay` is forgotten when a recovery period ends and after persistent congestion.

use std::time::{Duration, Instant};

use crate::params::Params;
use crate::window::{DEFAULT_MAX_WINDOW, LOSS_REDUCTION_FACTOR};
use crate::{
    AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathController,
    PathControllerFactory, RenoWindow, SentEvent, Uncoupled,
};

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &["alpha", "beta", "gamma", "rtt_stat", "drain", "max_window"];

/// Largest threshold accepted (packets).
const MAX_THRESHOLD: f64 = 1e6;

/// Largest value accepted for `max_window` (1 TiB).
const MAX_WINDOW_LIMIT: u64 = 1 << 40;

/// The smallest RTT sample used (Linux adds 1 µs to every sample so that no RTT is zero).
const MIN_RTT_SAMPLE: Duration = Duration::from_micros(1);

/// Builds the controller from registry parameters (consumes the keys it knows; the registry rejects the rest).
///
/// `alpha`, `beta`, `gamma` in packets (defaults 2, 4, 1; `alpha ≤ beta`), `rtt_stat` = `min` | `avg`, `drain`
/// (bool, default off), `max_window` in bytes.
pub fn from_params(params: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
    let d = VegasConfig::default();
    let alpha = params.f64("alpha", d.alpha, 0.0, MAX_THRESHOLD)?;
    let beta = params.f64("beta", d.beta.max(alpha), 0.0, MAX_THRESHOLD)?;
    if beta < alpha {
        return Err(CcError::Spec(crate::SpecError::BadValue {
            name: "vegas".to_string(),
            key: "beta".to_string(),
            value: beta.to_string(),
            expected: format!("a number not below alpha ({alpha})"),
        }));
    }
    let config = VegasConfig {
        alpha,
        beta,
        gamma: params.f64("gamma", d.gamma, 0.0, MAX_THRESHOLD)?,
        rtt_stat: match params.choice("rtt_stat", "min", &["min", "avg"])? {
            "avg" => RttStat::Avg,
            _ => RttStat::Min,
        },
        drain: params.bool("drain", d.drain)?,
        max_window: params.u64("max_window", d.max_window, 1, MAX_WINDOW_LIMIT)?,
    };
    Ok(Box::new(Uncoupled::new(config)))
}

/// Which RTT of a round Vegas compares with `base_rtt`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RttStat {
    /// The smallest sample of the round (Linux `tcp_vegas.c`).
    #[default]
    Min,
    /// The mean of the round's samples (Linux `mptcp_wvegas.c`).
    Avg,
}

/// Configuration of Vegas; also the [`PathControllerFactory`] of [`Vegas`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VegasConfig {
    /// Grow by one packet per round when fewer than `alpha` packets are queued (Linux default 2).
    pub alpha: f64,
    /// Shrink by one packet per round when more than `beta` packets are queued (Linux default 4).
    pub beta: f64,
    /// Leave slow start when more than `gamma` packets are queued (Linux default 1).
    pub gamma: f64,
    /// The RTT of a round: its minimum (default) or its mean.
    pub rtt_stat: RttStat,
    /// Apply wVegas's queue-drain rule (Cao, Xu, Fu, IEEE ICNP 2012, step 3); off in classic Vegas.
    pub drain: bool,
    /// Upper bound on the window, in bytes.
    pub max_window: u64,
}

impl Default for VegasConfig {
    fn default() -> Self {
        VegasConfig {
            alpha: 2.0,
            beta: 4.0,
            gamma: 1.0,
            rtt_stat: RttStat::Min,
            drain: false,
            max_window: DEFAULT_MAX_WINDOW,
        }
    }
}

impl VegasConfig {
    /// The per-round rules other than the congestion-avoidance thresholds.
    pub fn rule(&self) -> VegasRule {
        VegasRule {
            gamma: self.gamma,
            rtt_stat: self.rtt_stat,
            drain: self.drain,
        }
    }
}

impl PathControllerFactory for VegasConfig {
    type Controller = Vegas;

    fn name(&self) -> &'static str {
        "vegas"
    }

    fn build(&self, now: Instant, max_datagram_size: u16) -> Vegas {
        Vegas::new(*self, now, max_datagram_size)
    }
}

/// The per-round rules shared by Vegas and wVegas, apart from the congestion-avoidance thresholds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VegasRule {
    /// Slow-start exit threshold, packets.
    pub gamma: f64,
    /// Which RTT of the round to use.
    pub rtt_stat: RttStat,
    /// Whether the queue-drain rule applies.
    pub drain: bool,
}

/// What a path measured over a completed round, given to the threshold callback of [`VegasPath::on_ack`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VegasRound {
    /// The window at the end of the round, before any change, bytes.
    pub cwnd: f64,
    /// The round's RTT ([`RttStat`]).
    pub rtt: Duration,
    /// The smallest RTT ever seen on the path.
    pub base_rtt: Duration,
    /// Packets queued: `cwnd·(rtt − base_rtt)/rtt`, in packets.
    pub diff: f64,
}

/// RTT samples of the current round.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct RoundSamples {
    count: u64,
    sum: Duration,
    min: Option<Duration>,
}

impl RoundSamples {
    fn add(&mut self, rtt: Duration) {
        self.count = self.count.saturating_add(1);
        self.sum = self.sum.saturating_add(rtt);
        self.min = Some(self.min.map_or(rtt, |m| m.min(rtt)));
    }

    fn avg(&self) -> Option<Duration> {
        let n = u32::try_from(self.count).unwrap_or(u32::MAX);
        self.sum.checked_div(n)
    }
}

/// One path's Vegas state: a [`RenoWindow`] plus the per-round delay measurements (see the module doc).
#[derive(Clone, Debug)]
pub struct VegasPath {
    reno: RenoWindow,
    base_rtt: Option<Duration>,
    round_start: Instant,
    round: RoundSamples,
    /// Smallest queueing delay since the last drain; zero = none yet (Linux convention).
    queue_delay: Duration,
    diff: f64,
    rtt_avg: Option<Duration>,
}

impl VegasPath {
    /// A path in slow start whose first round begins at `now`.
    pub fn new(now: Instant, max_datagram_size: u16, max_window: u64) -> Self {
        VegasPath {
            reno: RenoWindow::with_max_window(max_datagram_size, max_window),
            base_rtt: None,
            round_start: now,
            round: RoundSamples::default(),
            queue_delay: Duration::ZERO,
            diff: 0.0,
            rtt_avg: None,
        }
    }

    /// The underlying RFC 9002 window.
    pub fn reno(&self) -> &RenoWindow {
        &self.reno
    }

    /// The smallest RTT sample ever seen.
    pub fn base_rtt(&self) -> Option<Duration> {
        self.base_rtt
    }

    /// `diff` (packets queued) of the last completed round that had enough samples.
    pub fn diff(&self) -> f64 {
        self.diff
    }

    /// Mean RTT of the last completed round that had enough samples.
    pub fn rtt_avg(&self) -> Option<Duration> {
        self.rtt_avg
    }

    /// The queue-drain rule's smallest queueing delay since the last drain (zero: none).
    pub fn queue_delay(&self) -> Duration {
        self.queue_delay
    }

    /// RTT samples collected so far in the current round (0 right after a round ended or restarted, and
    /// during recovery, when no samples are collected).
    pub fn round_samples(&self) -> u64 {
        self.round.count
    }

    /// Records a sent packet.
    pub fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.reno.on_packet_sent(ev);
    }

    /// Adopts a new maximum datagram size.
    pub fn on_max_datagram_size(&mut self, max_datagram_size: u16) {
        self.reno.set_max_datagram_size(max_datagram_size);
    }

    fn restart_round(&mut self, now: Instant) {
        self.round_start = now;
        self.round = RoundSamples::default();
    }

    /// Back to the open state (recovery ended, or persistent congestion collapsed the window): a new round,
    /// and the drain rule forgets its queueing delay (`mptcp_wvegas.c`'s `wvegas_enable` on `TCP_CA_Open`
    /// sets `queue_delay = 0`).
    fn reopen(&mut self, now: Instant) {
        self.restart_round(now);
        self.queue_delay = Duration::ZERO;
    }

    /// Updates srtt and bytes in flight from `ev` without growing the window.
    fn bookkeeping(&mut self, ev: &AckEvent<'_>) {
        let quiet = AckEvent {
            app_limited: true,
            ..*ev
        };
        self.reno.on_ack(&quiet, |_, _| 0.0);
    }

    /// Processes an ACK. At the end of a round in congestion avoidance, `thresholds(round)` gives
    /// `(alpha, beta)`: the window shrinks by a packet if `diff > beta`, grows by one if `diff < alpha`.
    pub fn on_ack(
        &mut self,
        ev: &AckEvent<'_>,
        rule: &VegasRule,
        thresholds: impl FnOnce(&VegasRound) -> (f64, f64),
    ) {
        if ev.packets.is_empty() {
            self.bookkeeping(ev);
            return;
        }
        let sample = ev.rtt.latest.max(MIN_RTT_SAMPLE);
        let base = self.base_rtt.map_or(sample, |b| b.min(sample));
        self.base_rtt = Some(base);
        if self.reno.in_recovery() {
            // Vegas is off during recovery; RenoWindow ends it when a packet sent after its start is acked.
            self.reno.on_ack(ev, |_, _| 0.0);
            if !self.reno.in_recovery() {
                self.reopen(ev.now);
            }
            return;
        }
        self.round.add(sample);
        let round_end = !ev.app_limited && ev.largest_time_sent().is_some_and(|t| t >= self.round_start);
        if !round_end {
            // Inside a round only slow start grows (the closure is the congestion-avoidance increase: none).
            self.reno.on_ack(ev, |_, _| 0.0);
            return;
        }
        let samples = std::mem::take(&mut self.round);
        self.round_start = ev.now;
        if samples.count <= 2 {
            // Too few samples for a delay estimate: behave as NewReno for this ACK (tcp_vegas.c).
            self.reno.on_ack(ev, RenoWindow::reno_increase);
            return;
        }
        let avg = samples.avg().unwrap_or(sample);
        let rtt = match rule.rtt_stat {
            RttStat::Min => samples.min.unwrap_or(sample),
            RttStat::Avg => avg,
        }
        .max(base);
        self.rtt_avg = Some(avg);
        // Whole nanoseconds as f64 (exact below 2⁵³ ns ≈ 104 days), multiplied before dividing, so that
        // ratios of round numbers are exact (a `diff` of exactly `alpha` is not off by one ulp).
        let (rtt_ns, base_ns) = (rtt.as_nanos() as f64, base.as_nanos() as f64);
        let cwnd = self.reno.cwnd();
        let mss = self.reno.max_datagram_size() as f64;
        let diff = cwnd * (rtt_ns - base_ns) / (rtt_ns * mss);
        self.diff = diff;
        if self.reno.in_slow_start() {
            if diff > rule.gamma {
                // Leave slow start: cwnd = min(cwnd, target + 1), ssthresh = min(ssthresh, cwnd − 1).
                let target = cwnd * base_ns / rtt_ns;
                self.reno.set_cwnd(cwnd.min(target + mss));
                self.reno
                    .set_ssthresh(self.reno.ssthresh().min(self.reno.cwnd() - mss));
                self.bookkeeping(ev);
            } else {
                self.reno.on_ack(ev, |_, _| 0.0);
            }
            return;
        }
        let round = VegasRound {
            cwnd,
            rtt,
            base_rtt: base,
            diff,
        };
        let (alpha, beta) = thresholds(&round);
        let mut new_cwnd = cwnd;
        if diff > beta {
            new_cwnd -= mss;
            self.reno.set_ssthresh(self.reno.ssthresh().min(new_cwnd - mss));
        } else if diff < alpha {
            new_cwnd += mss;
        }
        if rule.drain {
            // wVegas step 3 (Cao, Xu, Fu, IEEE ICNP 2012; `mptcp_wvegas.c`): drain the queue when it doubled since its
            // smallest value.
            let q = rtt.saturating_sub(base);
            if self.queue_delay.is_zero() || self.queue_delay > q {
                self.queue_delay = q;
            }
            if !q.is_zero() && q >= self.queue_delay.saturating_mul(2) {
                new_cwnd = new_cwnd * base_ns / (2.0 * rtt_ns);
                self.queue_delay = Duration::ZERO;
            }
        }
        // set_cwnd clamps to [2 packets, max_window].
        self.reno.set_cwnd(new_cwnd);
        self.bookkeeping(ev);
    }

    /// Loss or ECN-CE: NewReno's halving once per recovery period, persistent congestion; a new round begins.
    pub fn on_congestion(&mut self, ev: &CongestionEvent) {
        let reduced = self.reno.on_congestion(ev, LOSS_REDUCTION_FACTOR);
        if ev.persistent_congestion {
            // RFC 9002 §7.6.2: the recovery period ends with the collapse: open again.
            self.reopen(ev.now);
        } else if reduced {
            self.restart_round(ev.now);
        }
    }

    /// The Vegas metrics: `base_rtt` (s), `diff` (packets), `rtt_avg` (s), then `extra`.
    pub fn metrics(&self, extra: &[Metric]) -> CcMetrics {
        let mut extras = vec![
            Metric {
                name: "base_rtt",
                value: self.base_rtt.map_or(0.0, |d| d.as_secs_f64()),
            },
            Metric {
                name: "diff",
                value: self.diff,
            },
            Metric {
                name: "rtt_avg",
                value: self.rtt_avg.map_or(0.0, |d| d.as_secs_f64()),
            },
        ];
        extras.extend_from_slice(extra);
        self.reno.metrics(extras)
    }
}

/// Single-path TCP Vegas.
#[derive(Clone, Debug)]
pub struct Vegas {
    config: VegasConfig,
    path: VegasPath,
}

impl Vegas {
    /// A Vegas controller for a path that starts at `now`.
    pub fn new(config: VegasConfig, now: Instant, max_datagram_size: u16) -> Self {
        Vegas {
            config,
            path: VegasPath::new(now, max_datagram_size, config.max_window),
        }
    }

    /// The per-path Vegas state.
    pub fn state(&self) -> &VegasPath {
        &self.path
    }
}

impl PathController for Vegas {
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.path.on_packet_sent(ev);
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        let (alpha, beta) = (self.config.alpha, self.config.beta);
        self.path.on_ack(ev, &self.config.rule(), |_| (alpha, beta));
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        self.path.on_congestion(ev);
    }

    fn on_max_datagram_size(&mut self, max_datagram_size: u16) {
        self.path.on_max_datagram_size(max_datagram_size);
    }

    fn window(&self) -> u64 {
        self.path.reno().window()
    }

    fn pacing_rate(&self) -> Option<u64> {
        self.path.reno().pacing_rate()
    }

    /// The state without building the metrics (they allocate their extras): read after every acknowledgement.
    fn state(&self) -> &'static str {
        self.path.reno().state()
    }

    fn metrics(&self) -> CcMetrics {
        self.path.metrics(&[])
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::params::Spec;
    use crate::{AckedPacket, PathId, RttSnapshot};

    #[allow(clippy::disallowed_methods)] // test set-up needs a base instant
    pub(crate) fn t0() -> Instant {
        Instant::now()
    }

    pub(crate) fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// An ACK of one 1000-byte packet sent at `sent`, processed at `now`, with an RTT sample `rtt`.
    pub(crate) fn ack_one(
        path: u32,
        now: Instant,
        sent: Instant,
        rtt: Duration,
        f: impl FnOnce(&AckEvent<'_>),
    ) {
        let p = [AckedPacket {
            bytes: 1000,
            time_sent: sent,
        }];
        f(&AckEvent {
            path: PathId(path),
            now,
            rtt: RttSnapshot::from_rtt(rtt),
            packets: &p,
            prior_bytes_in_flight: 1000,
            bytes_in_flight: 0,
            app_limited: false,
            rate_sample: None,
        });
    }

    pub(crate) fn loss(path: u32, now: Instant, sent: Instant, persistent: bool) -> CongestionEvent {
        CongestionEvent {
            path: PathId(path),
            now,
            sent_time: sent,
            lost_bytes: 1000,
            bytes_in_flight: 0,
            persistent_congestion: persistent,
            ecn: false,
            rtt: RttSnapshot::from_rtt(ms(100)),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    struct Harness {
        t0: Instant,
        v: Vegas,
    }

    impl Harness {
        fn new(config: VegasConfig) -> Self {
            let t0 = t0();
            Harness {
                t0,
                v: Vegas::new(config, t0, 1000),
            }
        }
        fn at(&self, t: u64) -> Instant {
            self.t0 + ms(t)
        }
        /// ACK at `now` of a packet sent at `sent` (ms since t0), RTT sample `rtt` ms.
        fn ack(&mut self, now: u64, sent: u64, rtt: u64) {
            let (now, sent) = (self.at(now), self.at(sent));
            let v = &mut self.v;
            ack_one(0, now, sent, ms(rtt), |ev| v.on_ack(ev));
        }
        /// A round that began at `start`: samples `rtts` on ACKs at start+10, start+20, … of packets sent before
        /// `start`, the last of which (sent at `start`) ends the round at `start + 100`.
        fn round(&mut self, start: u64, rtts: &[u64]) {
            let (last, inner) = rtts.split_last().unwrap();
            for (i, rtt) in inner.iter().enumerate() {
                self.ack(start + 10 * (i as u64 + 1), start - 1, *rtt);
            }
            self.ack(start + 100, start, *last);
        }
        fn cwnd(&self) -> f64 {
            self.v.state().reno().cwnd()
        }
        fn ssthresh(&self) -> f64 {
            self.v.state().reno().ssthresh()
        }
        /// Loss at `now` of a packet sent at t0 + 0, then the ACK (at `now + 100`, RTT 100 ms) of a packet sent
        /// after recovery began, which ends recovery: congestion avoidance with a new round starting at
        /// `now + 100`.
        fn enter_ca(&mut self, now: u64) {
            let l = loss(0, self.at(now), self.at(0), false);
            self.v.on_congestion(&l);
            assert!(self.v.state().reno().in_recovery());
            self.ack(now + 100, now + 1, 100);
            assert!(!self.v.state().reno().in_recovery());
        }
    }

    #[test]
    fn slow_start_exit_with_min_and_avg_rtt() {
        for (stat, exits) in [(RttStat::Min, false), (RttStat::Avg, true)] {
            let mut h = Harness::new(VegasConfig {
                rtt_stat: stat,
                ..VegasConfig::default()
            });
            assert_eq!(h.cwnd(), 10_000.0); // RFC 9002 initial window: 10 · 1000
            // Round 0 (from t0) ends on the first ACK with 1 sample: Reno fallback, slow start +1000.
            h.ack(100, 0, 100);
            assert_eq!(h.cwnd(), 11_000.0);
            // Round 1 (from 100 ms): two ACKs inside the round grow by slow start (+1000 each) ...
            h.ack(110, 1, 100);
            h.ack(120, 2, 120);
            assert_eq!(h.cwnd(), 13_000.0);
            // ... and the ACK of a packet sent at 100 ms ends it with 3 samples (100, 120, 140 ms).
            h.ack(200, 100, 140);
            let m = h.v.metrics();
            assert!(close(m.extra("base_rtt").unwrap(), 0.1));
            assert!(close(m.extra("rtt_avg").unwrap(), 0.12)); // (100+120+140)/3
            if exits {
                // avg = 120 ms: diff = 13·(120−100)/120 = 2.1667 > gamma = 1 → leave slow start:
                // target = 13000·100/120 = 10833.33; cwnd = min(13000, 10833.33 + 1000) = 11833.33;
                // ssthresh = 11833.33 − 1000 = 10833.33.
                assert!(close(m.extra("diff").unwrap(), 13.0 * 20.0 / 120.0));
                assert!(close(h.cwnd(), 13_000.0 * 100.0 / 120.0 + 1000.0), "{}", h.cwnd());
                assert!(close(h.ssthresh(), 13_000.0 * 100.0 / 120.0));
                assert_eq!(m.state, "congestion_avoidance");
            } else {
                // min = 100 ms = base: diff = 0 ≤ gamma → slow start goes on: +1000.
                assert_eq!(m.extra("diff").unwrap(), 0.0);
                assert_eq!(h.cwnd(), 14_000.0);
                assert_eq!(m.state, "slow_start");
            }
        }
    }

    #[test]
    fn congestion_avoidance_per_rtt_updates() {
        let mut h = Harness::new(VegasConfig::default()); // alpha 2, beta 4, min RTT
        h.enter_ca(50); // cwnd 10000·0.5 = 5000 = ssthresh; base = 100 ms; round starts at 150 ms
        assert_eq!(h.cwnd(), 5000.0);
        // Round from 150: samples 100, 125, 150; min 100 = base → diff = 0 < alpha 2 → +1 pkt.
        h.ack(160, 149, 100);
        h.ack(170, 149, 125);
        assert_eq!(h.cwnd(), 5000.0); // no growth inside a round in congestion avoidance
        h.ack(250, 150, 150);
        assert_eq!(h.cwnd(), 6000.0);
        // Round from 250: min 150 → diff = 6·(150−100)/150 = 2.0: not < 2, not > 4 → unchanged.
        h.round(250, &[150, 160, 200]);
        assert!(close(h.v.metrics().extra("diff").unwrap(), 2.0));
        assert_eq!(h.cwnd(), 6000.0);
        // Round from 350: min 250 → diff = 6·150/250 = 3.6 → unchanged.
        h.round(350, &[270, 260, 250]);
        assert_eq!(h.cwnd(), 6000.0);
        // Round from 450: min 300 → diff = 6·200/300 = 4.0: not > beta 4 → unchanged.
        h.round(450, &[300, 300, 310]);
        assert_eq!(h.cwnd(), 6000.0);
        // Round from 550: min 400 → diff = 6·300/400 = 4.5 > 4 → −1 pkt = 5000;
        // ssthresh = min(5000, 5000 − 1000) = 4000.
        h.round(550, &[400, 420, 440]);
        assert!(close(h.v.metrics().extra("diff").unwrap(), 4.5));
        assert_eq!(h.cwnd(), 5000.0);
        assert_eq!(h.ssthresh(), 4000.0);
        // Round from 650: min 100 → diff 0 → +1 = 6000.
        h.round(650, &[100, 100, 100]);
        assert_eq!(h.cwnd(), 6000.0);
    }

    #[test]
    fn reno_fallback_with_too_few_samples() {
        let mut h = Harness::new(VegasConfig::default());
        h.enter_ca(50); // cwnd 5000, round from 150 ms
        // Only 2 samples in the round (huge RTTs, which Vegas would answer with −1): the round-ending ACK gets
        // NewReno's increase instead: mss·bytes/cwnd = 1000·1000/5000 = 200.
        h.ack(160, 149, 900);
        h.ack(250, 150, 900);
        assert_eq!(h.cwnd(), 5200.0);
        // With 3 samples the same RTTs give diff = 5.2·800/900 = 4.62 > 4 → −1 pkt.
        h.round(250, &[900, 900, 900]);
        assert!(close(h.cwnd(), 4200.0));
    }

    #[test]
    fn app_limited_acks_do_not_end_rounds() {
        let mut h = Harness::new(VegasConfig::default());
        h.enter_ca(50);
        let p = [AckedPacket {
            bytes: 1000,
            time_sent: h.at(200),
        }];
        let ev = AckEvent {
            path: PathId(0),
            now: h.at(300),
            rtt: RttSnapshot::from_rtt(ms(100)),
            packets: &p,
            prior_bytes_in_flight: 0,
            bytes_in_flight: 0,
            app_limited: true,
            rate_sample: None,
        };
        h.v.on_ack(&ev);
        h.v.on_ack(&ev);
        assert_eq!(h.cwnd(), 5000.0);
        // The round goes on and ends on the next non-limited ACK, with 3 samples: diff 0 → +1.
        h.ack(310, 200, 100);
        assert_eq!(h.cwnd(), 6000.0);
    }

    #[test]
    fn losses_halve_once_per_recovery_and_persistent_congestion_collapses() {
        let mut h = Harness::new(VegasConfig::default());
        h.enter_ca(50);
        h.round(150, &[100, 100, 100]); // +1 → 6000
        assert_eq!(h.cwnd(), 6000.0);
        // Loss at 300 of a packet sent at 200: 6000·0.5 = 3000 = ssthresh.
        h.v.on_congestion(&loss(0, h.at(300), h.at(200), false));
        assert_eq!(h.cwnd(), 3000.0);
        assert_eq!(h.ssthresh(), 3000.0);
        // A second loss of a packet sent before recovery began is ignored.
        h.v.on_congestion(&loss(0, h.at(310), h.at(250), false));
        assert_eq!(h.cwnd(), 3000.0);
        // ACKs of packets sent before recovery began neither grow the window nor end a round.
        h.ack(320, 290, 100);
        h.ack(330, 290, 100);
        h.ack(340, 290, 100);
        assert_eq!(h.cwnd(), 3000.0);
        assert!(h.v.state().reno().in_recovery());
        // Persistent congestion: minimum window 2 · 1000.
        h.v.on_congestion(&loss(0, h.at(400), h.at(350), true));
        assert_eq!(h.cwnd(), 2000.0);
        assert_eq!(h.ssthresh(), 1500.0);
    }

    #[test]
    fn drain_rule_when_enabled() {
        let mut h = Harness::new(VegasConfig {
            alpha: 10.0,
            beta: 10.0,
            rtt_stat: RttStat::Avg,
            drain: true,
            ..VegasConfig::default()
        });
        h.enter_ca(50); // cwnd 5000, base 100 ms
        // avg 110: diff = 5·10/110 = 0.45 < 10 → 6000; q = 10 ms → queue_delay = 10 ms; 10 ≥ 20? no.
        h.round(150, &[110, 110, 110]);
        assert_eq!(h.cwnd(), 6000.0);
        assert_eq!(h.v.state().queue_delay(), ms(10));
        // avg 125: diff = 6·25/125 = 1.2 → 7000; q = 25 ≥ 2·10 → drain: 7000·100/(2·125) = 2800.
        h.round(250, &[125, 125, 125]);
        assert!(close(h.cwnd(), 2800.0), "{}", h.cwnd());
        assert_eq!(h.v.state().queue_delay(), Duration::ZERO);
        // The drain left cwnd (2800) below ssthresh (5000): slow start again (as in mptcp_wvegas.c). The two
        // ACKs inside the next round grow it by 1000 each (4800); at the round's end avg 130 →
        // diff = 4.8·30/130 = 1.108 > gamma 1 → exit: target = 4800·100/130 = 3692.31;
        // cwnd = min(4800, 3692.31 + 1000) = 4692.31; ssthresh = min(5000, 3692.31) = 3692.31.
        h.round(350, &[130, 130, 130]);
        assert!(close(h.cwnd(), 4800.0 * 100.0 / 130.0 + 1000.0), "{}", h.cwnd());
        assert!(close(h.ssthresh(), 4800.0 * 100.0 / 130.0));
        // avg 100 = base: q = 0 → diff 0 → +1 = 5692.31 and no drain (Linux would halve: 0 ≥ 2·0).
        h.round(450, &[100, 100, 100]);
        assert!(close(h.cwnd(), 4800.0 * 100.0 / 130.0 + 2000.0));
        // avg 150: diff = 5.69·50/150 = 1.9 → +1 = 6692.31; q = 50 ms becomes queue_delay, no drain.
        h.round(550, &[150, 150, 150]);
        assert!(close(h.cwnd(), 4800.0 * 100.0 / 130.0 + 3000.0));
        assert_eq!(h.v.state().queue_delay(), ms(50));
    }

    #[test]
    fn from_params_accepts_and_rejects() {
        let parse = |s: &str| Params::new("vegas", Spec::parse(s, "algorithm").unwrap().params);
        let mut p = parse("vegas:alpha=3,beta=6,gamma=0.5,rtt_stat=avg,drain=on,max_window=50000");
        let cc = from_params(&mut p).unwrap();
        assert_eq!(cc.name(), "vegas");
        p.finish(PARAMS).unwrap();
        assert!(from_params(&mut Params::empty("vegas")).is_ok());
        // alpha above the default beta raises beta's default with it.
        assert!(from_params(&mut parse("vegas:alpha=10")).is_ok());
        for bad in [
            "vegas:alpha=5,beta=4",
            "vegas:alpha=-1",
            "vegas:gamma=x",
            "vegas:rtt_stat=median",
            "vegas:drain=maybe",
            "vegas:max_window=0",
        ] {
            assert!(
                matches!(
                    from_params(&mut parse(bad)),
                    Err(CcError::Spec(crate::SpecError::BadValue { .. }))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn zero_rtts_and_empty_acks_are_harmless() {
        let mut h = Harness::new(VegasConfig::default());
        for t in 1..50 {
            h.ack(t * 10, t * 10 - 5, 0);
        }
        let ev = AckEvent {
            path: PathId(0),
            now: h.at(600),
            rtt: RttSnapshot::from_rtt(Duration::ZERO),
            packets: &[],
            prior_bytes_in_flight: 0,
            bytes_in_flight: 0,
            app_limited: false,
            rate_sample: None,
        };
        h.v.on_ack(&ev);
        let m = h.v.metrics();
        assert!(m.extras.iter().all(|e| e.value.is_finite()));
        assert!(h.cwnd().is_finite() && h.cwnd() >= 2000.0);
    }
}
