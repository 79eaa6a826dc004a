//! TCP-NV (Lawrence Brakmo, "TCP-NV: An Update to TCP-Vegas", 2010; Linux `net/ipv4/tcp_nv.c`, whose
//! behaviour this module follows) as a single-path [`PathController`], run uncoupled per path.
//!
//! NV is Vegas's successor for data centres: instead of comparing expected and actual throughput once per
//! RTT with one sample, it measures the **rate** `in_flight / avg_rtt` on every acknowledgement, keeps the
//! largest rate of the current evaluation period, and once per round trip asks how many packets that rate
//! needs at the path's minimum RTT. A window much above that (more than `pad` packets queued) is reduced in
//! proportion to the excess.
//!
//! **As implemented** (windows in packets of the path's maximum datagram size `mss`, RTTs in seconds):
//! * Per ACK, outside recovery and with bytes in flight: the averaged RTT
//!   `avg = rtt_factor·rtt + (1 − rtt_factor)·avg_prev` (the first sample is taken as is; `rtt_factor = 0`
//!   disables the average), the rate `rate = in_flight/avg` (bytes/s), `max_rate = max(max_rate, rate)`, one
//!   more evaluation sample (`eval_calls`, at most 255), and `min_rtt = min(min_rtt, avg)`.
//! * **Minimum RTT over a window**: a second minimum `min_rtt_new` is kept alongside; 2 s after the path
//!   starts and then every `reset_period·(384 + r)/512` (`r` a random byte, so 0.75 to 1.25 periods) the
//!   active `min_rtt` becomes `min_rtt_new` and `min_rtt_new` starts over: `min_rtt` is the smallest averaged
//!   RTT of the last one or two periods.
//! * **Once per round** (an ACK of a packet sent at or after the round began; the next round begins then),
//!   with `rtt_cnt` counting rounds since the last decision: `cwnd_by_slope = max_rate·min_rtt/mss`,
//!   `max_win = cwnd_by_slope + pad`.
//!   * `cwnd > max_win` (congestion): no decision before `rtt_min_cnt` rounds; in slow start (`ssthresh`
//!     never set) none before `ssthresh_eval_min_calls` samples; otherwise none before `dec_eval_min_calls`
//!     samples, but growth stops once more than `stop_rtt_cnt` rounds passed. The decision: growth stops,
//!     `ssthresh = ssthresh_factor·max_win`, and `cwnd −= max(2, (cwnd − max_win)·cong_dec_mult)` if
//!     `cwnd − max_win > 2`, else `cwnd = max_win` (if `cong_dec_mult > 0`); a positive growth factor drops
//!     to 0.
//!   * `cwnd ≤ max_win − pad_buffer` (no congestion): after `inc_eval_min_calls` samples growth is allowed;
//!     every `growth_rate_neg + 1` such decisions raise a negative growth factor by one (and every
//!     `growth_rate_pos + 1` a non-negative one, if `growth_rate_pos > 0`).
//!   * in between: nothing. After a decision the samples, round count and `max_rate` start over and the
//!     window is at least `min_cwnd` packets.
//! * **Growth** (only while allowed and not application-limited): slow start as RFC 9002; in congestion
//!   avoidance one packet per `cnt` packets acknowledged, `cnt = cwnd·2^(−f)` for a growth factor `f < 0`
//!   (slower than Reno after losses) and `cnt = max(4, cwnd/2^f)` for `f ≥ 0` (Reno at `f = 0`).
//! * **Loss** (a new RFC 9002 recovery period, ECN-CE included): `ssthresh = cwnd·loss_dec_factor` and the
//!   window drops to it ([`RenoWindow`]); growth stops and the NV state is reset when the recovery ends
//!   (samples, rounds, averaged RTT, `max_rate`; not `min_rtt`). Persistent congestion (Linux's `TCP_CA_Loss`)
//!   also lowers the growth factor by one (to at most −8; a positive one first drops to 0).
//! * ACKs processed during recovery neither measure nor grow (Linux's `tcpnv_acked` skips every state but
//!   Open and Disorder).
//!
//! Defaults are Linux's: `pad` 10, `pad_buffer` 2, `reset_period` 5 s, `min_cwnd` 2, `cong_dec_mult`
//! 38/128 = 0.296875 (Linux's integer form of 30 %), `ssthresh_factor` 1 (8/8), `rtt_factor` 0.5 (128/256),
//! `loss_dec_factor` 0.5 (512/1024), `growth_rate_neg` 8, `growth_rate_pos` 0, `dec_eval_min_calls` 60,
//! `inc_eval_min_calls` 20, `ssthresh_eval_min_calls` 30, `stop_rtt_cnt` 10, `rtt_min_cnt` 2.
//!
//! Deviations from Linux (QUIC has no byte sequence numbers, and this crate's windows are real-valued):
//! * `in_flight` is the ACK's `prior_bytes_in_flight` (bytes in flight when the ACK arrived); Linux uses the
//!   bytes in flight when the newest acknowledged packet was sent, which a window-limited sender keeps
//!   about equal.
//! * Real-valued: `cwnd_by_slope`, the decrease and the window are not truncated to whole packets.
//! * Linux's TSO/LRO heuristic (a per-connection minimum window raised when only one ACK arrives per round)
//!   is left out: QUIC has no segmentation offload in its congestion control; rounds are delimited as in
//!   [`crate::vegas`] instead of by `snd_una` passing `snd_nxt`.
//! * The random byte of the minimum-RTT period comes from a SplitMix64 generator seeded with `seed` and the
//!   path's index (the n-th path built), so runs are reproducible.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::bbr::rng::SplitMix64;
use crate::params::Params;
use crate::window::DEFAULT_MAX_WINDOW;
use crate::{
    AckEvent, CcError, CcMetrics, CongestionController, CongestionEvent, Metric, PathController,
    PathControllerFactory, RenoWindow, SentEvent, Uncoupled,
};

/// Registry name.
pub const NAME: &str = "nv";

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &[
    "pad",
    "pad_buffer",
    "reset_period",
    "min_cwnd",
    "cong_dec_mult",
    "ssthresh_factor",
    "rtt_factor",
    "loss_dec_factor",
    "growth_rate_neg",
    "growth_rate_pos",
    "dec_eval_min_calls",
    "inc_eval_min_calls",
    "ssthresh_eval_min_calls",
    "stop_rtt_cnt",
    "rtt_min_cnt",
    "seed",
    "max_window",
];

/// Delay before the first switch of the minimum RTT (Linux: `jiffies + 2 * HZ` at init).
const FIRST_MIN_RTT_RESET: Duration = Duration::from_secs(2);

/// Lowest growth factor (Linux: `cwnd_growth_factor > -8`).
const MIN_GROWTH_FACTOR: i32 = -8;

/// Highest growth factor (a shift of a window: beyond 30 the window of any real path is below 4 packets).
const MAX_GROWTH_FACTOR: i32 = 30;

/// Counters saturate here (Linux keeps them in `u8`).
const COUNTER_MAX: u32 = 255;

/// Largest accepted threshold in packets.
const MAX_PACKETS: f64 = 1e6;

/// Builds the controller from registry parameters (consumes the keys it knows; the registry rejects the rest).
///
/// Ranges: `pad`, `pad_buffer` in `[0, 10^6]` packets; `reset_period` in `[1, 3600000]` ms; `min_cwnd` in
/// `[2, 10^6]` packets; `cong_dec_mult`, `rtt_factor` in `[0, 1]`; `ssthresh_factor` in `[0, 32]`;
/// `loss_dec_factor` in `[0.01, 1]`; the counts (`growth_rate_*`, `*_eval_min_calls`, `stop_rtt_cnt`,
/// `rtt_min_cnt`) in `[0, 255]`; `seed` any `u64`; `max_window` in `[1, 2^32]` bytes.
pub fn from_params(params: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
    Ok(Box::new(Uncoupled::new(NvFactory::new(NvConfig::from_params(
        params,
    )?))))
}

/// TCP-NV's configuration (defaults: Linux's, listed in the module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NvConfig {
    /// Packets allowed queued above the window the rate needs.
    pub pad: f64,
    /// No growth decision unless the window is this many packets below `cwnd_by_slope + pad`.
    pub pad_buffer: f64,
    /// Period of the minimum-RTT window (randomised to 0.75–1.25 of it).
    pub reset_period: Duration,
    /// NV never decreases the window below this many packets.
    pub min_cwnd: f64,
    /// Fraction of the excess `cwnd − max_win` removed by a congestion decision.
    pub cong_dec_mult: f64,
    /// `ssthresh = ssthresh_factor · max_win` on a congestion decision.
    pub ssthresh_factor: f64,
    /// Weight of a new RTT sample in the averaged RTT (0: no averaging).
    pub rtt_factor: f64,
    /// Window kept on loss.
    pub loss_dec_factor: f64,
    /// No-congestion decisions (plus one) that raise a negative growth factor (0: never).
    pub growth_rate_neg: u32,
    /// No-congestion decisions (plus one) that raise a non-negative growth factor (0: never).
    pub growth_rate_pos: u32,
    /// Samples needed before a congestion decision outside slow start.
    pub dec_eval_min_calls: u32,
    /// Samples needed before a no-congestion decision.
    pub inc_eval_min_calls: u32,
    /// Samples needed before a congestion decision in slow start.
    pub ssthresh_eval_min_calls: u32,
    /// Rounds without a decision after which growth stops while the window is above `max_win`.
    pub stop_rtt_cnt: u32,
    /// Rounds needed before a congestion decision.
    pub rtt_min_cnt: u32,
    /// Seed of the generator of the minimum-RTT period.
    pub seed: u64,
    /// Upper bound on the window, bytes.
    pub max_window: u64,
}

impl Default for NvConfig {
    fn default() -> Self {
        NvConfig {
            pad: 10.0,
            pad_buffer: 2.0,
            reset_period: Duration::from_secs(5),
            min_cwnd: 2.0,
            cong_dec_mult: 38.0 / 128.0,
            ssthresh_factor: 1.0,
            rtt_factor: 0.5,
            loss_dec_factor: 0.5,
            growth_rate_neg: 8,
            growth_rate_pos: 0,
            dec_eval_min_calls: 60,
            inc_eval_min_calls: 20,
            ssthresh_eval_min_calls: 30,
            stop_rtt_cnt: 10,
            rtt_min_cnt: 2,
            seed: 0,
            max_window: DEFAULT_MAX_WINDOW,
        }
    }
}

impl NvConfig {
    /// Reads the parameters listed in [`from_params`].
    pub fn from_params(params: &mut Params) -> Result<NvConfig, CcError> {
        let d = NvConfig::default();
        let count = |params: &mut Params, key: &str, default: u32| -> Result<u32, CcError> {
            let v = params.u64(key, u64::from(default), 0, u64::from(COUNTER_MAX))?;
            Ok(u32::try_from(v).unwrap_or(COUNTER_MAX))
        };
        Ok(NvConfig {
            pad: params.f64("pad", d.pad, 0.0, MAX_PACKETS)?,
            pad_buffer: params.f64("pad_buffer", d.pad_buffer, 0.0, MAX_PACKETS)?,
            reset_period: params.millis(
                "reset_period",
                d.reset_period,
                Duration::from_millis(1),
                Duration::from_secs(3600),
            )?,
            min_cwnd: params.f64("min_cwnd", d.min_cwnd, 2.0, MAX_PACKETS)?,
            cong_dec_mult: params.f64("cong_dec_mult", d.cong_dec_mult, 0.0, 1.0)?,
            ssthresh_factor: params.f64("ssthresh_factor", d.ssthresh_factor, 0.0, 32.0)?,
            rtt_factor: params.f64("rtt_factor", d.rtt_factor, 0.0, 1.0)?,
            loss_dec_factor: params.f64("loss_dec_factor", d.loss_dec_factor, 0.01, 1.0)?,
            growth_rate_neg: count(params, "growth_rate_neg", d.growth_rate_neg)?,
            growth_rate_pos: count(params, "growth_rate_pos", d.growth_rate_pos)?,
            dec_eval_min_calls: count(params, "dec_eval_min_calls", d.dec_eval_min_calls)?,
            inc_eval_min_calls: count(params, "inc_eval_min_calls", d.inc_eval_min_calls)?,
            ssthresh_eval_min_calls: count(params, "ssthresh_eval_min_calls", d.ssthresh_eval_min_calls)?,
            stop_rtt_cnt: count(params, "stop_rtt_cnt", d.stop_rtt_cnt)?,
            rtt_min_cnt: count(params, "rtt_min_cnt", d.rtt_min_cnt)?,
            seed: params.u64("seed", d.seed, 0, u64::MAX)?,
            max_window: params.u64("max_window", d.max_window, 1, DEFAULT_MAX_WINDOW)?,
        })
    }
}

/// Builds one [`Nv`] per path; the n-th path's generator is seeded with `(seed, n)`.
#[derive(Debug)]
pub struct NvFactory {
    config: NvConfig,
    built: AtomicU64,
}

impl NvFactory {
    /// A factory for `config`.
    pub fn new(config: NvConfig) -> Self {
        NvFactory {
            config,
            built: AtomicU64::new(0),
        }
    }
}

impl PathControllerFactory for NvFactory {
    type Controller = Nv;

    fn name(&self) -> &'static str {
        NAME
    }

    fn build(&self, now: Instant, max_datagram_size: u16) -> Nv {
        let index = self.built.fetch_add(1, Ordering::Relaxed);
        Nv::new(self.config, now, max_datagram_size, index)
    }
}

/// The congestion-avoidance increase in bytes for `bytes` acknowledged at a window of `cwnd` bytes and a
/// growth factor `f`: one packet per `cnt` packets, `cnt = cwnd·2^(−f)` (`f < 0`) or `max(4, cwnd/2^f)`
/// (`f ≥ 0`), in packets of `mss` bytes (`tcpnv_cong_avoid`).
pub fn ca_increase(cwnd: f64, bytes: f64, mss: f64, growth_factor: i32) -> f64 {
    let cwnd_packets = cwnd / mss;
    let scale = 2f64.powi(growth_factor.clamp(MIN_GROWTH_FACTOR, MAX_GROWTH_FACTOR));
    let cnt = if growth_factor < 0 {
        cwnd_packets / scale
    } else {
        (cwnd_packets / scale).max(4.0)
    };
    let inc = bytes / cnt;
    if inc.is_finite() { inc } else { 0.0 }
}

/// One path's TCP-NV controller.
#[derive(Clone, Debug)]
pub struct Nv {
    config: NvConfig,
    window: RenoWindow,
    rng: SplitMix64,
    growth_factor: i32,
    allow_growth: bool,
    /// Reset the NV state when the current recovery ends.
    reset_pending: bool,
    eval_calls: u32,
    rtt_cnt: u32,
    no_cong_cnt: u32,
    /// Averaged RTT, seconds (`None`: no sample since the last reset).
    avg_rtt: Option<f64>,
    min_rtt: Option<f64>,
    min_rtt_new: Option<f64>,
    min_rtt_reset_at: Instant,
    /// Largest rate of the evaluation period, bytes/s.
    max_rate: f64,
    round_start: Instant,
    /// `max_win` of the latest round evaluation, packets (0 before any).
    max_win: f64,
}

impl Nv {
    /// A controller for the `index`-th path, which starts at `now`.
    pub fn new(config: NvConfig, now: Instant, max_datagram_size: u16, index: u64) -> Self {
        Nv {
            config,
            window: RenoWindow::with_max_window(max_datagram_size, config.max_window),
            rng: SplitMix64::new(config.seed, index),
            growth_factor: 0,
            allow_growth: true,
            reset_pending: false,
            eval_calls: 0,
            rtt_cnt: 0,
            no_cong_cnt: 0,
            avg_rtt: None,
            min_rtt: None,
            min_rtt_new: None,
            min_rtt_reset_at: now.checked_add(FIRST_MIN_RTT_RESET).unwrap_or(now),
            max_rate: 0.0,
            round_start: now,
            max_win: 0.0,
        }
    }

    /// The underlying RFC 9002 window.
    pub fn reno(&self) -> &RenoWindow {
        &self.window
    }

    /// The current growth factor.
    pub fn growth_factor(&self) -> i32 {
        self.growth_factor
    }

    /// Whether the window may grow.
    pub fn allow_growth(&self) -> bool {
        self.allow_growth
    }

    /// The active minimum RTT in seconds.
    pub fn min_rtt(&self) -> Option<f64> {
        self.min_rtt
    }

    /// When the minimum RTT switches next.
    pub fn min_rtt_reset_at(&self) -> Instant {
        self.min_rtt_reset_at
    }

    /// `tcpnv_reset`: the evaluation starts over (the minimum RTT and the growth factor are kept).
    fn reset(&mut self, now: Instant) {
        self.reset_pending = false;
        self.no_cong_cnt = 0;
        self.rtt_cnt = 0;
        self.avg_rtt = None;
        self.max_rate = 0.0;
        self.round_start = now;
        self.eval_calls = 0;
    }

    /// `tcpnv_acked`: the per-ACK measurement and, once per round, the decision.
    fn measure(&mut self, ev: &AckEvent<'_>) {
        let in_flight = ev.prior_bytes_in_flight as f64;
        if in_flight <= 0.0 {
            return;
        }
        // Linux adds nothing, but a zero sample must not divide by zero: 1 µs at least.
        let sample = ev.rtt.latest.as_secs_f64().max(1e-6);
        let f = self.config.rtt_factor;
        let avg = if f > 0.0 {
            let avg = self.avg_rtt.map_or(sample, |last| sample * f + last * (1.0 - f));
            self.avg_rtt = Some(avg);
            avg
        } else {
            sample
        };
        let rate = in_flight / avg;
        if rate.is_finite() {
            self.max_rate = self.max_rate.max(rate);
        }
        self.eval_calls = (self.eval_calls + 1).min(COUNTER_MAX);
        self.min_rtt = Some(self.min_rtt.map_or(avg, |m| m.min(avg)));
        self.min_rtt_new = Some(self.min_rtt_new.map_or(avg, |m| m.min(avg)));
        if ev.now >= self.min_rtt_reset_at {
            // tcp_nv.c: the active minimum becomes the one collected since the last switch; the next switch
            // comes after reset_period · (384 + rand)/512, rand a random byte.
            self.min_rtt = self.min_rtt_new.take().or(self.min_rtt);
            let r = (self.rng.next_u64() & 0xff) as f64;
            let next = self.config.reset_period.mul_f64((384.0 + r) / 512.0);
            self.min_rtt_reset_at = ev.now.checked_add(next).unwrap_or(ev.now);
        }
        let round_end = ev.largest_time_sent().is_some_and(|t| t >= self.round_start);
        if !round_end {
            return;
        }
        self.round_start = ev.now;
        self.rtt_cnt = (self.rtt_cnt + 1).min(COUNTER_MAX);
        self.decide();
    }

    /// The once-per-round decision of `tcpnv_acked`.
    fn decide(&mut self) {
        let c = self.config;
        let mss = self.window.max_datagram_size() as f64;
        let min_rtt = self.min_rtt.unwrap_or(0.0);
        let cwnd_by_slope = self.max_rate * min_rtt / mss;
        let max_win = cwnd_by_slope + c.pad;
        self.max_win = max_win;
        let cwnd = self.window.cwnd() / mss;
        if cwnd > max_win {
            if self.rtt_cnt < c.rtt_min_cnt {
                return;
            } else if self.window.ssthresh().is_infinite() {
                if self.eval_calls < c.ssthresh_eval_min_calls {
                    return;
                }
            } else if self.eval_calls < c.dec_eval_min_calls {
                if self.allow_growth && self.rtt_cnt > c.stop_rtt_cnt {
                    self.allow_growth = false;
                }
                return;
            }
            // Congested: stop growing, set ssthresh from the rate, remove part of the excess.
            self.allow_growth = false;
            self.window.set_ssthresh(c.ssthresh_factor * max_win * mss);
            let excess = cwnd - max_win;
            if excess > 2.0 {
                let dec = (excess * c.cong_dec_mult).max(2.0);
                self.window.set_cwnd((cwnd - dec) * mss);
            } else if c.cong_dec_mult > 0.0 {
                self.window.set_cwnd(max_win * mss);
            }
            if self.growth_factor > 0 {
                self.growth_factor = 0;
            }
            self.no_cong_cnt = 0;
        } else if cwnd <= max_win - c.pad_buffer {
            if self.eval_calls < c.inc_eval_min_calls {
                return;
            }
            self.allow_growth = true;
            self.no_cong_cnt = (self.no_cong_cnt + 1).min(COUNTER_MAX);
            if self.growth_factor < 0 && c.growth_rate_neg > 0 && self.no_cong_cnt > c.growth_rate_neg {
                self.growth_factor += 1;
                self.no_cong_cnt = 0;
            } else if self.growth_factor >= 0 && c.growth_rate_pos > 0 && self.no_cong_cnt > c.growth_rate_pos
            {
                self.growth_factor = (self.growth_factor + 1).min(MAX_GROWTH_FACTOR);
                self.no_cong_cnt = 0;
            }
        } else {
            return;
        }
        self.eval_calls = 0;
        self.rtt_cnt = 0;
        self.max_rate = 0.0;
        if self.window.cwnd() < c.min_cwnd * mss {
            self.window.set_cwnd(c.min_cwnd * mss);
        }
    }
}

impl PathController for Nv {
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.window.on_packet_sent(ev);
    }

    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        if self.window.in_recovery() {
            // Not in TCP_CA_Open: no measurement and no growth (RenoWindow grows nothing in recovery).
            self.window.on_ack(ev, |_, _| 0.0);
            if !self.window.in_recovery() && self.reset_pending {
                // tcpnv_state(TCP_CA_Open) with nv_reset set.
                self.reset(ev.now);
            }
            return;
        }
        if !ev.packets.is_empty() {
            self.measure(ev);
        }
        let (allow, factor) = (self.allow_growth, self.growth_factor);
        self.window.on_ack_with(ev, |w, p, slow_start| {
            if !allow {
                0.0
            } else if slow_start {
                p.bytes as f64
            } else {
                ca_increase(w.cwnd(), p.bytes as f64, w.max_datagram_size() as f64, factor)
            }
        });
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        let reduced = self.window.on_congestion(ev, self.config.loss_dec_factor);
        if !(reduced || ev.persistent_congestion) {
            return;
        }
        // tcpnv_state(TCP_CA_Recovery / TCP_CA_CWR / TCP_CA_Loss).
        self.reset_pending = true;
        self.allow_growth = false;
        if ev.persistent_congestion {
            // TCP_CA_Loss: back to Reno's rate, then slower if allowed.
            if self.growth_factor > 0 {
                self.growth_factor = 0;
            }
            if self.config.growth_rate_neg > 0 && self.growth_factor > MIN_GROWTH_FACTOR {
                self.growth_factor -= 1;
            }
            // RFC 9002 §7.6.2: the collapse ends the recovery period: open again at once.
            self.reset(ev.now);
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
                name: "min_rtt",
                value: self.min_rtt.unwrap_or(0.0),
            },
            Metric {
                name: "avg_rtt",
                value: self.avg_rtt.unwrap_or(0.0),
            },
            Metric {
                name: "max_rate",
                value: self.max_rate,
            },
            Metric {
                name: "max_win",
                value: self.max_win,
            },
            Metric {
                name: "growth_factor",
                value: f64::from(self.growth_factor),
            },
            Metric {
                name: "allow_growth",
                value: f64::from(u8::from(self.allow_growth)),
            },
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Spec;
    use crate::test_support::{ms, t0};
    use crate::{AckedPacket, PathId, RttSnapshot};

    const MSS: u16 = 1000;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6 * b.abs().max(1.0)
    }

    /// An ACK at `now` of one 1000-byte packet sent at `sent`, RTT `rtt`, `in_flight` bytes in flight before.
    fn ack(nv: &mut Nv, now: Instant, sent: Instant, rtt: Duration, in_flight: u64) {
        let p = [AckedPacket {
            bytes: 1000,
            time_sent: sent,
        }];
        nv.on_ack(&AckEvent {
            path: PathId(0),
            now,
            rtt: RttSnapshot::from_rtt(rtt),
            packets: &p,
            prior_bytes_in_flight: in_flight,
            bytes_in_flight: in_flight.saturating_sub(1000),
            app_limited: false,
            rate_sample: None,
        });
    }

    fn congestion(now: Instant, sent: Instant, persistent: bool) -> CongestionEvent {
        CongestionEvent {
            path: PathId(0),
            now,
            sent_time: sent,
            lost_bytes: 1000,
            bytes_in_flight: 0,
            persistent_congestion: persistent,
            ecn: false,
            rtt: RttSnapshot::from_rtt(ms(100)),
        }
    }

    /// ACK number `k` (from 1) of a steady path: at t0 + 100 + 10·(k − 1) ms, of a packet sent 100 ms before,
    /// RTT 100 ms, 10 000 bytes in flight.
    fn steady(nv: &mut Nv, t0: Instant, k: u64) {
        let now = t0 + ms(100 + 10 * (k - 1));
        ack(nv, now, now - ms(100), ms(100), 10_000);
    }

    #[test]
    fn slow_start_ends_with_a_rate_based_decrease() {
        let t0 = t0();
        let mut nv = Nv::new(NvConfig::default(), t0, MSS, 0);
        // Every ACK: avg RTT 100 ms (the average of equal samples), rate = 10 000/0.1 = 100 000 B/s,
        // min_rtt 0.1 s → cwnd_by_slope = 100 000·0.1/1000 = 10 packets, max_win = 10 + pad 10 = 20.
        // ACK 1 (sent at t0 = the round start) ends round 1: 10 ≤ 20 − 2 but 1 sample < 20: no decision.
        steady(&mut nv, t0, 1);
        assert!(close(nv.metrics().extra("max_win").unwrap(), 20.0));
        assert_eq!(nv.reno().cwnd(), 11_000.0); // slow start +1 packet per packet
        // ACK 11 (sent at 100 ms) ends round 2 at cwnd 20: neither above 20 nor ≤ 18: nothing.
        // ACK 21 ends round 3 at cwnd 30 > 20, 3 rounds ≥ 2, slow start and 21 samples < 30: nothing.
        for k in 2..=30 {
            steady(&mut nv, t0, k);
        }
        assert_eq!(nv.reno().cwnd(), 40_000.0);
        assert!(nv.reno().ssthresh().is_infinite());
        // ACK 31 ends round 4 with 31 samples ≥ 30: congestion. ssthresh = 1·20 packets; the excess
        // 40 − 20 = 20 > 2 → dec = max(2, 20·38/128) = 5.9375 → cwnd = 34.0625 packets; growth stops.
        steady(&mut nv, t0, 31);
        assert_eq!(nv.reno().ssthresh(), 20_000.0);
        assert!(close(nv.reno().cwnd(), 34_062.5));
        assert!(!nv.allow_growth());
        // No growth afterwards. Outside slow start a decision needs 60 samples: rounds end at ACKs 41, 51,
        // …; the first with 60 samples since the decision (ACKs 32..91) is ACK 91: excess 14.0625 →
        // dec = 14.0625·38/128 = 4.1748046875 → cwnd = 29.8876953125 packets.
        for k in 32..=90 {
            steady(&mut nv, t0, k);
            assert!(close(nv.reno().cwnd(), 34_062.5), "{k}");
        }
        steady(&mut nv, t0, 91);
        assert!(close(nv.reno().cwnd(), 29_887.695_312_5), "{}", nv.reno().cwnd());
    }

    #[test]
    fn a_no_congestion_decision_resumes_growth_after_a_loss() {
        let t0 = t0();
        let mut nv = Nv::new(NvConfig::default(), t0, MSS, 0);
        steady(&mut nv, t0, 1); // 11 000
        // Loss at 105 ms: ssthresh = cwnd = 11 000·0.5 = 5500; growth stops until NV decides otherwise.
        nv.on_congestion(&congestion(t0 + ms(105), t0 + ms(50), false));
        assert_eq!(nv.reno().cwnd(), 5500.0);
        assert!(!nv.allow_growth());
        // The ACK (at 200 ms) of a packet sent after the loss ends recovery: the NV state is reset and a
        // new round starts at 200 ms. ACKs every 10 ms from 210 ms, of packets sent 100 ms before.
        ack(&mut nv, t0 + ms(200), t0 + ms(150), ms(100), 10_000);
        assert!(!nv.reno().in_recovery());
        // max_win = 20 again; cwnd 5.5 ≤ 18. The round ends at 300 ms (ACK of the packet sent at 200 ms)
        // with 10 samples < 20: no decision, no growth. The next at 400 ms has 20 samples: no congestion,
        // growth allowed; that very ACK grows the window in congestion avoidance (cwnd = ssthresh), growth
        // factor 0: cnt = max(4, 5.5) = 5.5 packets → +1000/5.5 = 181.818 bytes.
        for i in 1..=19 {
            let now = t0 + ms(200 + 10 * i);
            ack(&mut nv, now, now - ms(100), ms(100), 10_000);
            assert_eq!(nv.reno().cwnd(), 5500.0, "{i}");
        }
        let now = t0 + ms(400);
        ack(&mut nv, now, now - ms(100), ms(100), 10_000);
        assert!(nv.allow_growth());
        assert!(close(nv.reno().cwnd(), 5500.0 + 1000.0 / 5.5));
    }

    #[test]
    fn increase_follows_the_growth_factor_and_persistent_congestion_lowers_it() {
        // cwnd 20 packets of 1000 bytes, one packet acknowledged:
        // f = −1: cnt = 20·2 = 40 → 25 bytes; f = 0: cnt = max(4, 20) = 20 → 50 bytes (Reno);
        // f = 2: cnt = max(4, 5) = 5 → 200 bytes; f = 3: cnt = max(4, 2.5) = 4 → 250 bytes.
        for (f, inc) in [(-1, 25.0), (0, 50.0), (2, 200.0), (3, 250.0), (-3, 6.25)] {
            assert!(close(ca_increase(20_000.0, 1000.0, 1000.0, f), inc), "{f}");
        }
        let t0 = t0();
        let mut nv = Nv::new(NvConfig::default(), t0, MSS, 0);
        nv.on_congestion(&congestion(t0 + ms(10), t0, true));
        assert_eq!(nv.growth_factor(), -1);
        assert_eq!(nv.reno().cwnd(), 2000.0); // RFC 9002 minimum window
        nv.on_congestion(&congestion(t0 + ms(20), t0 + ms(15), true));
        assert_eq!(nv.growth_factor(), -2);
        // A plain loss leaves the growth factor alone.
        nv.on_congestion(&congestion(t0 + ms(30), t0 + ms(25), false));
        assert_eq!(nv.growth_factor(), -2);
        // With growth_rate_neg = 0 the factor never goes negative.
        let mut nv = Nv::new(
            NvConfig {
                growth_rate_neg: 0,
                ..NvConfig::default()
            },
            t0,
            MSS,
            0,
        );
        nv.on_congestion(&congestion(t0 + ms(10), t0, true));
        assert_eq!(nv.growth_factor(), 0);
    }

    #[test]
    fn min_rtt_switches_over_a_randomised_period() {
        let t0 = t0();
        let mut nv = Nv::new(NvConfig::default(), t0, MSS, 0);
        // One ACK every 100 ms, RTT 100 ms until 1.9 s, 150 ms from 2.0 s; the averaged RTT at 2.0 s is
        // 0.5·150 + 0.5·100 = 125 ms, at 2.1 s 137.5 ms, then it approaches 150 ms.
        // At 2.0 s (t0 + 2 s, the first switch): min_rtt = min_rtt_new = 100 ms; min_rtt_new starts over
        // and is 137.5 ms from 2.1 s on. The next switch: the generator seeded (0, path 0) first gives
        // 0xE220A8397B1DCDAF, whose low byte is 0xAF = 175 → 5 s·(384 + 175)/512 = 5.458984375 s → at
        // 7.458984375 s, i.e. on the ACK at 7.5 s; from then min_rtt = 137.5 ms.
        for i in 1..=75u64 {
            let now = t0 + ms(100 * i);
            let rtt = if i < 20 { 100 } else { 150 };
            ack(&mut nv, now, now - ms(100), ms(rtt), 10_000);
            let expected = if i < 75 { 0.1 } else { 0.1375 };
            assert!(close(nv.min_rtt().unwrap(), expected), "{i}: {:?}", nv.min_rtt());
            if i == 20 {
                assert_eq!(nv.min_rtt_reset_at(), now + Duration::from_nanos(5_458_984_375));
            }
        }
        // Another seed gives another period, deterministically.
        let mut a = Nv::new(
            NvConfig {
                seed: 7,
                ..NvConfig::default()
            },
            t0,
            MSS,
            0,
        );
        let mut b = Nv::new(
            NvConfig {
                seed: 7,
                ..NvConfig::default()
            },
            t0,
            MSS,
            0,
        );
        for nv in [&mut a, &mut b] {
            ack(nv, t0 + ms(2000), t0 + ms(1900), ms(100), 10_000);
        }
        assert_eq!(a.min_rtt_reset_at(), b.min_rtt_reset_at());
        let period = a.min_rtt_reset_at() - (t0 + ms(2000));
        assert!(period >= ms(3750) && period < ms(6250), "{period:?}");
    }

    #[test]
    fn recovery_acks_do_not_measure_and_app_limited_acks_do_not_grow() {
        let t0 = t0();
        let mut nv = Nv::new(NvConfig::default(), t0, MSS, 0);
        nv.on_congestion(&congestion(t0 + ms(10), t0 + ms(5), false));
        ack(&mut nv, t0 + ms(20), t0 + ms(1), ms(100), 10_000); // sent before the loss: still in recovery
        assert!(nv.reno().in_recovery());
        assert_eq!(nv.metrics().extra("avg_rtt"), Some(0.0));
        assert_eq!(nv.min_rtt(), None);
        // An application-limited ACK is measured (RFC 9002 §7.8 only forbids growth) but does not grow.
        let mut nv = Nv::new(NvConfig::default(), t0, MSS, 0);
        let p = [AckedPacket {
            bytes: 1000,
            time_sent: t0,
        }];
        nv.on_ack(&AckEvent {
            path: PathId(0),
            now: t0 + ms(100),
            rtt: RttSnapshot::from_rtt(ms(100)),
            packets: &p,
            prior_bytes_in_flight: 5000,
            bytes_in_flight: 4000,
            app_limited: true,
            rate_sample: None,
        });
        assert_eq!(nv.reno().cwnd(), 10_000.0);
        assert!(close(nv.metrics().extra("max_rate").unwrap(), 50_000.0)); // 5000 bytes / 0.1 s
        // Nothing divides by zero with zero RTTs or nothing in flight.
        let mut nv = Nv::new(NvConfig::default(), t0, MSS, 0);
        for i in 1..100 {
            let now = t0 + ms(10 * i);
            ack(
                &mut nv,
                now,
                now - ms(5),
                Duration::ZERO,
                if i % 3 == 0 { 0 } else { 5000 },
            );
        }
        let m = nv.metrics();
        assert!(m.extras.iter().all(|e| e.value.is_finite()), "{m:?}");
        assert!(m.cwnd >= 2000);
    }

    #[test]
    fn from_params_accepts_and_rejects() {
        let parse = |s: &str| Params::new("nv", Spec::parse(s, "algorithm").unwrap().params);
        let mut p = parse(
            "nv:pad=5,pad_buffer=1,reset_period=2000,min_cwnd=4,cong_dec_mult=0.3,ssthresh_factor=0.5,\
             rtt_factor=0.25,loss_dec_factor=0.8,growth_rate_neg=4,growth_rate_pos=2,dec_eval_min_calls=30,\
             inc_eval_min_calls=10,ssthresh_eval_min_calls=15,stop_rtt_cnt=5,rtt_min_cnt=1,seed=9,\
             max_window=100000",
        );
        let cfg = NvConfig::from_params(&mut p).unwrap();
        p.finish(PARAMS).unwrap();
        assert_eq!(cfg.reset_period, ms(2000));
        assert_eq!((cfg.growth_rate_pos, cfg.seed), (2, 9));
        assert!(from_params(&mut Params::empty("nv")).is_ok());
        for bad in [
            "nv:pad=-1",
            "nv:min_cwnd=1",
            "nv:cong_dec_mult=1.5",
            "nv:rtt_factor=nan",
            "nv:loss_dec_factor=0",
            "nv:dec_eval_min_calls=256",
            "nv:reset_period=0",
            "nv:max_window=0",
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
}
