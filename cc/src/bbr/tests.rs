//! Scripted-sample tests of BBRv1 (hand-computed values; mds = 1000 B so IW = 10 000 B, MinPipeCwnd =
//! 4000 B, kMinimumWindow = 2000 B). The harness is shared with the C-MPBBR tests.

use std::time::{Duration, Instant};

use super::*;
use crate::params::{Params, Spec};
use crate::{AckedPacket, PathId, RttSnapshot};

pub(crate) const MDS: u16 = 1000;

#[allow(clippy::disallowed_methods)] // test set-up needs a base instant
pub(crate) fn t0() -> Instant {
    Instant::now()
}

pub(crate) fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// One scripted acknowledgement.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ack {
    pub path: PathId,
    pub at_ms: u64,
    pub acked: u64,
    pub prior_inflight: u64,
    pub inflight: u64,
    /// Delivery rate of the sample; `None` = no sample.
    pub rate: Option<u64>,
    pub rtt_ms: u64,
    /// Send time of the acknowledged packet (default: `at_ms - rtt_ms`).
    pub sent_ms: Option<u64>,
    pub lost: u64,
    /// The sample's `prior_delivered` is the total before this ack (a new round), else 0.
    pub new_round: bool,
}

impl Ack {
    pub(crate) fn at(at_ms: u64) -> Ack {
        Ack {
            path: PathId(0),
            at_ms,
            acked: 1000,
            prior_inflight: 50_000,
            inflight: 49_000,
            rate: Some(1_000_000),
            rtt_ms: 110,
            sent_ms: None,
            lost: 0,
            new_round: true,
        }
    }
}

/// Keeps the delivered counter of a path and builds events.
pub(crate) struct Script {
    pub t0: Instant,
    pub delivered: u64,
}

impl Script {
    pub(crate) fn new(t0: Instant) -> Self {
        Script { t0, delivered: 0 }
    }

    pub(crate) fn feed(&mut self, a: Ack, f: impl FnOnce(&AckEvent<'_>)) {
        let now = self.t0 + ms(a.at_ms);
        let sent = self.t0 + ms(a.sent_ms.unwrap_or(a.at_ms.saturating_sub(a.rtt_ms)));
        let prior_delivered = if a.new_round { self.delivered } else { 0 };
        self.delivered += a.acked;
        let packets = [AckedPacket {
            bytes: a.acked,
            time_sent: sent,
        }];
        let rs = a.rate.map(|rate| RateSample {
            delivery_rate: rate,
            delivered: a.acked,
            interval: ms(a.rtt_ms),
            prior_delivered,
            total_delivered: self.delivered,
            rtt: ms(a.rtt_ms),
            is_app_limited: false,
            prior_in_flight: a.prior_inflight,
            newly_acked: a.acked,
            newly_lost: a.lost,
        });
        let ev = AckEvent {
            path: a.path,
            now,
            rtt: RttSnapshot::from_rtt(ms(a.rtt_ms)),
            packets: &packets,
            prior_bytes_in_flight: a.prior_inflight,
            bytes_in_flight: a.inflight,
            app_limited: false,
            rate_sample: rs,
        };
        f(&ev);
    }
}

/// A seed whose first ProbeBW draw is `r` (so the first phase is `(8 - r) % 8`).
pub(crate) fn seed_with_first_draw(r: u64) -> u64 {
    (0u64..)
        .find(|&s| rng::SplitMix64::new(s, 0).next_u64() % 7 == r)
        .unwrap()
}

/// The Startup → Drain → ProbeBW script shared by several tests, as (ack, expected mode after it).
/// Rates double each round until 1 MB/s, RTT 100 ms; every ack is a new round.
pub(crate) fn startup_script() -> Vec<Ack> {
    let rates = [
        100_000, 200_000, 400_000, 800_000, 1_000_000, 1_000_000, 1_000_000, 1_000_000,
    ];
    let mut v: Vec<Ack> = rates
        .iter()
        .enumerate()
        .map(|(i, &rate)| Ack {
            at_ms: 100 * (i as u64 + 1),
            acked: rate / 10,
            prior_inflight: 200_000,
            inflight: 200_000,
            rate: Some(rate),
            rtt_ms: 100,
            ..Ack::at(0)
        })
        .collect();
    // r9 at 900 ms: inflight drops to 106 000 B = BBRInflight(1.0) → ProbeBW.
    v.push(Ack {
        at_ms: 900,
        acked: 100_000,
        prior_inflight: 200_000,
        inflight: 106_000,
        rate: Some(1_000_000),
        rtt_ms: 100,
        ..Ack::at(0)
    });
    v
}

/// A BBR driven by [`startup_script`] into ProbeBW phase 0 at 900 ms.
fn in_probe_bw(t0: Instant) -> (Bbr, Script) {
    let mut b = Bbr::new(t0, MDS, seed_with_first_draw(0), 0, DEFAULT_MAX_WINDOW);
    let mut s = Script::new(t0);
    for a in startup_script() {
        s.feed(a, |ev| b.on_ack(ev));
    }
    assert_eq!(b.mode(), BbrMode::ProbeBw);
    assert_eq!(b.cycle_index(), 0);
    (b, s)
}

#[test]
fn startup_drain_probe_bw_transitions_and_targets() {
    let t0 = t0();
    let mut b = Bbr::new(t0, MDS, seed_with_first_draw(0), 0, DEFAULT_MAX_WINDOW);
    // Initial pacing: high_gain · IW / 1 ms = 2.8853900817779268 · 10 000 / 0.001 = 28 853 900.8 B/s.
    assert_eq!(b.pacing_rate(), Some(28_853_900));
    assert_eq!(b.window(), 10_000);
    let mut s = Script::new(t0);
    let script = startup_script();
    let mut it = script.into_iter();

    // r1: bw 100 kB/s, RTprop 100 ms. First RTT sample re-initialises pacing from SRTT:
    // 2.88539 · 10 000 / 0.1 = 288 539.0; 2.88539 · 100 000 = 288 539.0 is not larger: 288 539.
    // Quantum: 288.5 B < floor 2 packets (rate ≥ 150 000 B/s) = 2000.
    // Target = ceil(2.88539 · 100 000 · 0.1) + 3 · 2000 = ceil(28 853.9) + 6000 = 34 854.
    // cwnd 10 000 < target: cwnd += 10 000 → 20 000.
    s.feed(it.next().unwrap(), |ev| b.on_ack(ev));
    assert_eq!(b.mode(), BbrMode::Startup);
    assert_eq!(b.round_count(), 1);
    assert_eq!(b.btl_bw(), 100_000.0);
    assert_eq!(b.rt_prop(), Some(ms(100)));
    assert_eq!(b.pacing_rate(), Some(288_539));
    assert_eq!(b.send_quantum(), 2000);
    assert_eq!(b.target_cwnd(), 34_854);
    assert_eq!(b.window(), 20_000);
    assert_eq!((b.full_bw(), b.full_bw_count()), (100_000.0, 0));

    // r2..r5: each round's BtlBw ≥ 1.25 · full_bw (200k ≥ 125k, 400k ≥ 250k, 800k ≥ 500k,
    // 1M ≥ 1M exactly), so full_bw follows and the count stays 0. cwnd keeps growing by acked:
    // 20 000 + 20 000 + 40 000 + 80 000 + 100 000 = 260 000 (each time below the target).
    for _ in 0..4 {
        s.feed(it.next().unwrap(), |ev| b.on_ack(ev));
        assert_eq!(b.full_bw_count(), 0);
    }
    assert_eq!(b.full_bw(), 1_000_000.0);
    assert_eq!(b.window(), 260_000);
    // Startup pacing = 2.88539 · 1 000 000 = 2 885 390.08 B/s; quantum = 2885 B.
    assert_eq!(b.pacing_rate(), Some(2_885_390));
    assert_eq!(b.send_quantum(), 2885);

    // r6, r7: no 25 % growth: count 1, 2. r6: target = ceil(288 539.008) + 3 · 2885 = 297 195 > 260 000,
    // cwnd → 360 000; r7: 360 000 ≥ target and delivered ≥ IW: no growth.
    s.feed(it.next().unwrap(), |ev| b.on_ack(ev));
    assert_eq!((b.full_bw_count(), b.mode()), (1, BbrMode::Startup));
    s.feed(it.next().unwrap(), |ev| b.on_ack(ev));
    assert_eq!((b.full_bw_count(), b.mode()), (2, BbrMode::Startup));
    assert_eq!(b.window(), 360_000);

    // r8: count 3 → pipe full → Drain (pacing gain ln2/2, cwnd gain 2/ln2). Inflight 200 000 is above
    // BBRInflight(1) = 100 000 + 3 · 2885 = 108 655, so Drain stays. Pacing = 0.34657 · 1M = 346 573.6
    // (lowered: the pipe is full); quantum 2000; target = 288 540 + 6000 = 294 540 and cwnd = min(360 000 +
    // 100 000, 294 540).
    s.feed(it.next().unwrap(), |ev| b.on_ack(ev));
    assert!(b.filled_pipe());
    assert_eq!(b.mode(), BbrMode::Drain);
    assert_eq!(b.pacing_rate(), Some(346_573));
    assert_eq!(b.target_cwnd(), 294_540);
    assert_eq!(b.window(), 294_540);

    // r9: inflight 106 000 ≤ BBRInflight(1) = 100 000 + 3 · 2000 → ProbeBW, phase 0 (seed chosen so the
    // draw is 0: index 7 - 0 = 7, advanced to 0). Pacing 1.25 · 1M = 1 250 000; quantum 2000;
    // target = 2 · 1M · 0.1 + 6000 = 206 000 = cwnd.
    s.feed(it.next().unwrap(), |ev| b.on_ack(ev));
    assert_eq!(b.mode(), BbrMode::ProbeBw);
    assert_eq!(b.cycle_index(), 0);
    assert_eq!((b.pacing_gain(), b.cwnd_gain()), (1.25, 2.0));
    assert_eq!(b.pacing_rate(), Some(1_250_000));
    assert_eq!(b.target_cwnd(), 206_000);
    assert_eq!(b.window(), 206_000);
    let m = b.metrics();
    assert_eq!(m.state, "probe_bw");
    assert_eq!(m.extra("btl_bw"), Some(1_000_000.0));
    assert_eq!(m.extra("rt_prop"), Some(0.1));
    assert_eq!(m.extra("round_count"), Some(9.0));
    assert_eq!(m.extra("full_bw_count"), Some(3.0));
    assert_eq!(m.extra("cycle_index"), Some(0.0));
    assert_eq!(m.ssthresh, None);
}

#[test]
fn probe_bw_gain_cycle_advance_rules() {
    let t0 = t0();
    let (mut b, mut s) = in_probe_bw(t0);
    // Phase 0 (gain 5/4, stamp 900 ms) ends when full length (> RTprop = 100 ms) AND prior_inflight ≥
    // BBRInflight(1.25) = 125 000 + 6000 = 131 000 (or losses).
    let step = |b: &mut Bbr, s: &mut Script, at_ms, prior_inflight| {
        s.feed(
            Ack {
                prior_inflight,
                ..Ack::at(at_ms)
            },
            |ev| b.on_ack(ev),
        );
        b.cycle_index()
    };
    assert_eq!(step(&mut b, &mut s, 950, 140_000), 0); // 50 ms: not full length
    assert_eq!(step(&mut b, &mut s, 1001, 130_000), 0); // full length, 130 000 < 131 000
    assert_eq!(step(&mut b, &mut s, 1002, 131_000), 1); // full length and 131 000 ≥ 131 000
    // Phase 1 (gain 3/4, stamp 1002): pacing 750 000; ends at full length OR prior_inflight ≤
    // BBRInflight(1) = 106 000.
    assert_eq!(b.pacing_rate(), Some(750_000));
    assert_eq!(b.window(), 206_000);
    assert_eq!(step(&mut b, &mut s, 1010, 120_000), 1);
    assert_eq!(step(&mut b, &mut s, 1020, 106_000), 2);
    // Phase 2 (gain 1, stamp 1020): time only, > RTprop.
    assert_eq!(b.pacing_rate(), Some(1_000_000));
    assert_eq!(step(&mut b, &mut s, 1120, 0), 2); // exactly 100 ms: not > RTprop
    assert_eq!(step(&mut b, &mut s, 1121, 0), 3);
    // Phases 3..7 and back to 0, one per 101 ms.
    for (k, idx) in [4, 5, 6, 7, 0].into_iter().enumerate() {
        assert_eq!(step(&mut b, &mut s, 1121 + 101 * (k as u64 + 1), 0), idx);
    }
    assert_eq!(b.pacing_gain(), 1.25);
    // Phase 0 again (stamp 1626): a loss at full length ends it even with little in flight.
    s.feed(
        Ack {
            prior_inflight: 10_000,
            lost: 1000,
            ..Ack::at(1727)
        },
        |ev| b.on_ack(ev),
    );
    assert_eq!(b.cycle_index(), 1);
}

#[test]
fn random_initial_phase_is_never_the_drain_phase() {
    let t0 = t0();
    let mut seen = [false; 8];
    for seed in 0..200 {
        let mut b = Bbr::new(t0, MDS, seed, 0, DEFAULT_MAX_WINDOW);
        b.enter_probe_bw(t0);
        seen[b.cycle_index()] = true;
        // Same seed, same phase.
        let mut c = Bbr::new(t0, MDS, seed, 0, DEFAULT_MAX_WINDOW);
        c.enter_probe_bw(t0);
        assert_eq!(b.cycle_index(), c.cycle_index());
    }
    // Phases 2..7 and 0 all occur; phase 1 (3/4) never.
    assert_eq!(seen, [true, false, true, true, true, true, true, true]);
}

#[test]
fn probe_rtt_after_ten_seconds_then_back_to_probe_bw() {
    let t0 = t0();
    let (mut b, mut s) = in_probe_bw(t0);
    // RTprop = 100 ms stamped at 900 ms; ProbeBW acks carry 110 ms RTTs, which do not refresh it.
    s.feed(Ack::at(5000), |ev| b.on_ack(ev));
    assert_eq!(b.rt_prop(), Some(ms(100)));
    s.feed(Ack::at(10_900), |ev| b.on_ack(ev));
    assert_eq!(b.mode(), BbrMode::ProbeBw); // 10 900 is not > 900 + 10 000
    let cwnd_before = b.window();
    assert_eq!(cwnd_before, 206_000);
    // 10 901 ms: expired → RTprop = 110 ms, enter ProbeRTT; prior_cwnd = 206 000; cwnd capped at 4 packets.
    s.feed(Ack::at(10_901), |ev| b.on_ack(ev));
    assert_eq!(b.mode(), BbrMode::ProbeRtt);
    assert_eq!(b.rt_prop(), Some(ms(110)));
    assert_eq!((b.pacing_gain(), b.cwnd_gain()), (1.0, 1.0));
    assert_eq!(b.window(), 4000);
    // Target with gain 1 = 1M · 0.11 + 6000 = 116 000; pacing 1.0 · 1M.
    assert_eq!(b.target_cwnd(), 116_000);
    assert_eq!(b.pacing_rate(), Some(1_000_000));
    assert_eq!(b.metrics().state, "probe_rtt");
    // 10 950: inflight 4000 ≤ 4 packets → done at 11 150 and a round must also pass.
    s.feed(
        Ack {
            inflight: 4000,
            ..Ack::at(10_950)
        },
        |ev| b.on_ack(ev),
    );
    // 11 151: 200 ms passed but no round yet (not a new round) → stay.
    s.feed(
        Ack {
            inflight: 4000,
            new_round: false,
            ..Ack::at(11_151)
        },
        |ev| b.on_ack(ev),
    );
    assert_eq!(b.mode(), BbrMode::ProbeRtt);
    assert_eq!(b.window(), 4000);
    // 11 160: a round ends → exit to ProbeBW (pipe filled); cwnd restored to 206 000, then
    // min(206 000 + 1000, target = 2 · 1M · 0.11 + 6000 = 226 000) = 207 000.
    s.feed(
        Ack {
            inflight: 4000,
            ..Ack::at(11_160)
        },
        |ev| b.on_ack(ev),
    );
    assert_eq!(b.mode(), BbrMode::ProbeBw);
    assert_ne!(b.cycle_index(), 1);
    assert_eq!(b.cwnd_gain(), 2.0);
    assert_eq!(b.target_cwnd(), 226_000);
    assert_eq!(b.window(), 207_000);
}

#[test]
fn probe_rtt_needs_two_hundred_ms() {
    let t0 = t0();
    let (mut b, mut s) = in_probe_bw(t0);
    s.feed(Ack::at(10_901), |ev| b.on_ack(ev));
    s.feed(
        Ack {
            inflight: 4000,
            ..Ack::at(10_950)
        },
        |ev| b.on_ack(ev),
    );
    // Round done at 11 000, but 11 150 is not > 10 950 + 200.
    for at in [11_000, 11_150] {
        s.feed(
            Ack {
                inflight: 4000,
                ..Ack::at(at)
            },
            |ev| b.on_ack(ev),
        );
        assert_eq!(b.mode(), BbrMode::ProbeRtt, "at {at}");
    }
    s.feed(
        Ack {
            inflight: 4000,
            new_round: false,
            ..Ack::at(11_151)
        },
        |ev| b.on_ack(ev),
    );
    assert_eq!(b.mode(), BbrMode::ProbeBw);
}

#[test]
fn fast_recovery_packet_conservation_and_restore() {
    let t0 = t0();
    let (mut b, mut s) = in_probe_bw(t0);
    let loss = |now: u64, sent: u64, lost: u64, inflight: u64, persistent: bool| CongestionEvent {
        path: PathId(0),
        now: t0 + ms(now),
        sent_time: t0 + ms(sent),
        lost_bytes: lost,
        bytes_in_flight: inflight,
        persistent_congestion: persistent,
        ecn: false,
        rtt: RttSnapshot::from_rtt(ms(110)),
    };
    // New recovery period at 950: prior_cwnd = 206 000; cwnd = inflight + 1 packet = 150 000 + 1000.
    b.on_congestion(&loss(950, 920, 2000, 150_000, false));
    assert!(b.in_recovery());
    assert_eq!(b.window(), 151_000);
    // Ack of an old packet (sent 850), same round: conservation: cwnd = max(151 000, 150 000 + 3000).
    s.feed(
        Ack {
            acked: 3000,
            inflight: 150_000,
            sent_ms: Some(850),
            new_round: false,
            ..Ack::at(960)
        },
        |ev| b.on_ack(ev),
    );
    assert_eq!(b.window(), 153_000);
    assert!(b.in_recovery());
    // A loss of a packet sent before the period began: cwnd = max(153 000 - 5000, 1 packet) = 148 000,
    // conservation keeps ≥ inflight 140 000.
    b.on_congestion(&loss(970, 900, 5000, 140_000, false));
    assert_eq!(b.window(), 148_000);
    // ECN-CE is ignored.
    b.on_congestion(&CongestionEvent {
        ecn: true,
        lost_bytes: 0,
        ..loss(971, 960, 0, 140_000, false)
    });
    assert_eq!(b.window(), 148_000);
    // Ack of a packet sent at 1000 (after 950): recovery ends, cwnd = max(148 000, 206 000), then
    // min(206 000 + 1000, target 206 000) = 206 000.
    s.feed(
        Ack {
            sent_ms: Some(1000),
            ..Ack::at(1050)
        },
        |ev| b.on_ack(ev),
    );
    assert!(!b.in_recovery());
    assert_eq!(b.window(), 206_000);
    // After the period, a late loss of a packet sent before it began (940 ≤ 950) starts no new one.
    b.on_congestion(&loss(1060, 940, 1000, 150_000, false));
    assert!(!b.in_recovery());
    assert_eq!(b.window(), 205_000); // only the lost bytes are subtracted: 206 000 - 1000
}

/// A loss event for the path of [`in_probe_bw`]: detected at `now` ms, newest lost packet sent at `sent` ms.
fn loss_at(t0: Instant, now: u64, sent: u64, lost: u64, inflight: u64) -> CongestionEvent {
    CongestionEvent {
        path: PathId(0),
        now: t0 + ms(now),
        sent_time: t0 + ms(sent),
        lost_bytes: lost,
        bytes_in_flight: inflight,
        persistent_congestion: false,
        ecn: false,
        rtt: RttSnapshot::from_rtt(ms(110)),
    }
}

#[test]
fn losses_in_every_round_trip_extend_one_episode_and_the_window_grows() {
    // In ProbeBW after the startup script: BtlBw 1 MB/s, RTprop 100 ms, phase 0 (pacing gain 5/4, send
    // quantum max(1.25 MB/s · 1 ms, 2 packets) = 2000 B), target = 2 · 1 MB/s · 0.1 s + 3 · 2000 = 206 000 B
    // = cwnd.
    let t0 = t0();
    let (mut b, mut s) = in_probe_bw(t0);
    assert_eq!(b.window(), 206_000);
    // 950: the episode opens: prior_cwnd = 206 000, cwnd = inflight + 1 packet = 151 000, conservation.
    b.on_congestion(&loss_at(t0, 950, 920, 2000, 150_000));
    assert!(b.in_recovery());
    assert_eq!(b.window(), 151_000);
    // 1045: a packet sent at 990 (after the episode opened) is lost. It would open a new RFC 9002 recovery
    // period, but the episode is not over: it is extended (mark 1045) with no new cut to inflight + 1
    // packet: cwnd = max(151 000 - 1000, inflight 148 000 under conservation) = 150 000.
    b.on_congestion(&loss_at(t0, 1045, 990, 1000, 148_000));
    assert!(b.in_recovery());
    assert_eq!(b.window(), 150_000);
    // 1050: ack of a packet sent at 1000 (before the mark 1045: the episode goes on) that starts a round:
    // conservation ends after its round, the window grows again: min(150 000 + 1000, 206 000) = 151 000.
    s.feed(
        Ack {
            sent_ms: Some(1000),
            ..Ack::at(1050)
        },
        |ev| b.on_ack(ev),
    );
    assert!(b.in_recovery());
    assert_eq!(b.window(), 151_000);
    // 1060: 5000 B acknowledged in the same round: min(151 000 + 5000, 206 000) = 156 000, above the
    // 150 000 in flight (conservation would have held it at inflight + acked = 155 000).
    s.feed(
        Ack {
            acked: 5000,
            inflight: 150_000,
            sent_ms: Some(1010),
            new_round: false,
            ..Ack::at(1060)
        },
        |ev| b.on_ack(ev),
    );
    assert_eq!(b.window(), 156_000);
    // 1070: a further loss (sent 1020) extends the episode to 1070; only its bytes are subtracted, no
    // conservation floor: 156 000 - 1000 = 155 000.
    b.on_congestion(&loss_at(t0, 1070, 1020, 1000, 150_000));
    assert!(b.in_recovery());
    assert_eq!(b.window(), 155_000);
    // 1180: ack of a packet sent at 1100, after the latest loss (1070): a round trip without loss, the
    // episode ends and restores max(155 000, prior 206 000) = 206 000, then min(206 000 + 1000, 206 000).
    s.feed(
        Ack {
            sent_ms: Some(1100),
            new_round: false,
            ..Ack::at(1180)
        },
        |ev| b.on_ack(ev),
    );
    assert!(!b.in_recovery());
    assert_eq!(b.window(), 206_000);
    // 1190: a late loss of a packet sent at 1060, before the mark 1070 (but after the episode opened at
    // 950): no new episode, 206 000 - 1000 = 205 000.
    b.on_congestion(&loss_at(t0, 1190, 1060, 1000, 150_000));
    assert!(!b.in_recovery());
    assert_eq!(b.window(), 205_000);
    // 1250: a loss of a packet sent at 1150, after the mark: a new episode, cwnd = 120 000 + 1000.
    b.on_congestion(&loss_at(t0, 1250, 1150, 2000, 120_000));
    assert!(b.in_recovery());
    assert_eq!(b.window(), 121_000);
}

#[test]
fn a_loss_on_the_acknowledgement_that_would_end_the_episode_extends_it() {
    // The connection reports an acknowledgement's losses before its acknowledged packets (RFC 9002
    // Appendix A.7 `OnAckReceived`). Same start as above: episode opened at 950 with cwnd 151 000.
    let t0 = t0();
    let (mut b, mut s) = in_probe_bw(t0);
    b.on_congestion(&loss_at(t0, 950, 920, 2000, 150_000));
    assert_eq!(b.window(), 151_000);
    // 1060: this acknowledgement declares a packet sent at 990 lost (mark → 1060; no new cut to inflight
    // + 1 packet = 141 000; conservation: max(151 000 - 1000, 140 000) = 150 000) and acknowledges one sent
    // at 1000, which would have ended the episode without that loss. 1000 ≤ 1060: the episode goes on,
    // nothing is restored. The ack starts a round (prior_delivered ≥ the delivered count at 950), so
    // conservation ends: min(150 000 + 1000, 206 000).
    b.on_congestion(&loss_at(t0, 1060, 990, 1000, 140_000));
    assert_eq!(b.window(), 150_000);
    s.feed(
        Ack {
            sent_ms: Some(1000),
            ..Ack::at(1060)
        },
        |ev| b.on_ack(ev),
    );
    assert!(b.in_recovery());
    assert_eq!(b.window(), 151_000);
    // 1170: ack of a packet sent at 1065 with no loss: the episode ends, max(151 000, 206 000) = 206 000.
    s.feed(
        Ack {
            sent_ms: Some(1065),
            new_round: false,
            ..Ack::at(1170)
        },
        |ev| b.on_ack(ev),
    );
    assert!(!b.in_recovery());
    assert_eq!(b.window(), 206_000);
}

#[test]
fn persistent_congestion_collapses_then_restores() {
    let t0 = t0();
    let (mut b, mut s) = in_probe_bw(t0);
    b.on_congestion(&CongestionEvent {
        path: PathId(0),
        now: t0 + ms(950),
        sent_time: t0 + ms(700),
        lost_bytes: 50_000,
        bytes_in_flight: 0,
        persistent_congestion: true,
        ecn: false,
        rtt: RttSnapshot::from_rtt(ms(110)),
    });
    // RTO: cwnd to the minimum window 2 · 1000.
    assert_eq!(b.window(), 2000);
    // Old packet acked: min(2000 + 1000, 206 000) = 3000, raised to MinPipeCwnd 4000.
    s.feed(
        Ack {
            sent_ms: Some(800),
            ..Ack::at(960)
        },
        |ev| b.on_ack(ev),
    );
    assert_eq!(b.window(), 4000);
    // A packet sent after the RTO acked: restore max(4000, prior 206 000), capped by the target.
    s.feed(
        Ack {
            sent_ms: Some(1000),
            ..Ack::at(1100)
        },
        |ev| b.on_ack(ev),
    );
    assert_eq!(b.window(), 206_000);
}

#[test]
fn idle_restart_paces_at_btl_bw_and_skips_probe_rtt() {
    let t0 = t0();
    let (mut b, mut s) = in_probe_bw(t0);
    assert_eq!(b.pacing_rate(), Some(1_250_000));
    // Sending resumes app-limited with nothing in flight: pace at 1.0 · BtlBw.
    b.on_packet_sent(&SentEvent {
        path: PathId(0),
        now: t0 + ms(10_950),
        bytes: 1000,
        bytes_in_flight: 1000,
        app_limited: true,
    });
    assert_eq!(b.pacing_rate(), Some(1_000_000));
    // The next ack finds RTprop expired but idle_restart set: no ProbeRTT (RTprop is re-stamped).
    s.feed(Ack::at(11_000), |ev| b.on_ack(ev));
    assert_eq!(b.mode(), BbrMode::ProbeBw);
    assert_eq!(b.rt_prop(), Some(ms(110)));
}

#[test]
fn without_rate_samples_the_window_stays_near_initial() {
    let t0 = t0();
    let mut b = Bbr::new(t0, MDS, 1, 0, DEFAULT_MAX_WINDOW);
    let mut s = Script::new(t0);
    // No bandwidth estimate: target = IW = 10 000. Ack 1 (5000 B): delivered 5000 < IW → cwnd 15 000.
    // Later acks: cwnd ≥ target and delivered ≥ IW → unchanged.
    for at in [100, 200, 300, 400] {
        s.feed(
            Ack {
                acked: 5000,
                rate: None,
                rtt_ms: 100,
                ..Ack::at(at)
            },
            |ev| b.on_ack(ev),
        );
    }
    assert_eq!(b.window(), 15_000);
    assert_eq!(b.btl_bw(), 0.0);
    assert_eq!(b.round_count(), 0);
    assert_eq!(b.mode(), BbrMode::Startup);
    // Pacing initialised from SRTT: 2.88539 · 10 000 / 0.1 = 288 539.
    assert_eq!(b.pacing_rate(), Some(288_539));
}

#[test]
fn robust_against_degenerate_events() {
    let t0 = t0();
    let mut b = Bbr::new(t0, MDS, 0, 0, DEFAULT_MAX_WINDOW);
    let mut s = Script::new(t0);
    // Zero RTT, huge rate and byte counts, acks before any send.
    s.feed(
        Ack {
            acked: u64::MAX / 2,
            rate: Some(u64::MAX),
            rtt_ms: 0,
            prior_inflight: u64::MAX,
            inflight: u64::MAX,
            ..Ack::at(0)
        },
        |ev| b.on_ack(ev),
    );
    assert!(b.window() >= 2000 && b.window() <= DEFAULT_MAX_WINDOW);
    b.on_congestion(&CongestionEvent {
        path: PathId(0),
        now: t0,
        sent_time: t0,
        lost_bytes: u64::MAX,
        bytes_in_flight: u64::MAX,
        persistent_congestion: false,
        ecn: false,
        rtt: RttSnapshot::from_rtt(Duration::ZERO),
    });
    assert!(b.window() >= 2000 && b.window() <= DEFAULT_MAX_WINDOW);
    assert!(b.pacing_rate().is_some());
    b.on_max_datagram_size(1);
    assert!(b.window() >= 2);
}

#[test]
fn from_params_accepts_seed_and_rejects_bad_values() {
    let mut p = Params::new("bbr", Spec::parse("bbr:seed=42", "algorithm").unwrap().params);
    let cc = from_params(&mut p).unwrap();
    p.finish(PARAMS).unwrap();
    assert_eq!(cc.name(), "bbr");
    let mut p = Params::empty("bbr");
    assert!(from_params(&mut p).is_ok());
    for bad in ["bbr:seed=-1", "bbr:seed=abc", "bbr:seed=1.5"] {
        let mut p = Params::new("bbr", Spec::parse(bad, "algorithm").unwrap().params);
        assert!(
            matches!(
                from_params(&mut p),
                Err(CcError::Spec(crate::SpecError::BadValue { .. }))
            ),
            "{bad}"
        );
    }
    let mut p = Params::new("bbr", Spec::parse("bbr:gain=2", "algorithm").unwrap().params);
    from_params(&mut p).unwrap();
    assert!(matches!(
        p.finish(PARAMS),
        Err(crate::SpecError::UnknownParameter { .. })
    ));
}

#[test]
fn uncoupled_paths_get_distinct_seed_streams() {
    let t0 = t0();
    let config = BbrConfig::new(9);
    let a = config.build(t0, MDS);
    let b = config.build(t0, MDS);
    assert_eq!(a.rng.clone().next_u64(), rng::SplitMix64::new(9, 0).next_u64());
    assert_eq!(b.rng.clone().next_u64(), rng::SplitMix64::new(9, 1).next_u64());
}
