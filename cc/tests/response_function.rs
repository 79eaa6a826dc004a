//! Response functions of NewReno, CUBIC and HighSpeed TCP (RFC 3649, see its test) under deterministic periodic
//! loss; NewReno and CUBIC are checked against the table of the Coupled CUBIC study (Lee et al., CSSE 2023, Table 1;
//! Eqs. (8)–(9)): average window in packets at RTT 100 ms, C = 0.4, β_cubic = 0.7.
//!
//! | p     | Reno | CUBIC |
//! |-------|------|-------|
//! | 1e-3  |   38 |    38 |
//! | 1e-4  |  120 |   187 |
//! | 1e-5  |  379 |  1054 |
//! | 1e-6  | 1200 |  5926 |
//!
//! Model: ACK-clocked rounds of one RTT. Each round sends `floor(cwnd / MSS)` MSS-sized packets; every
//! `1/p`-th packet (counted over the whole run) is lost. One RTT later all the other packets of the round are
//! acknowledged in one [`AckEvent`] and, if the round lost a packet, one [`CongestionEvent`] follows. The next
//! round is sent 1 µs after that, i.e. after the recovery period began. The window is averaged over rounds
//! (time average), from the `WARMUP`-th loss to the `WARMUP + MEASURE`-th, so whole loss cycles are averaged.
//!
//! Measured (default CUBIC: fast convergence on): NewReno 38.2 / 121.9 / 386.8 / 1224.2 packets (the
//! sawtooth's exact average is √(3/(2p)) = 38.7 / 122.5 / 387.3 / 1224.7), CUBIC 39.7 / 168.2 / 943.9 /
//! 5366.6, i.e. CUBIC is 9–10 % below the table at p ≤ 1e-4. That is the loss model, not the implementation:
//! the table is the equilibrium in which every loss hits the window exactly at `W_max` (one cycle = K
//! seconds, `(3+β)/4 · W_max` average). Under *deterministic* loss CUBIC approaches that equilibrium only
//! algebraically slowly: a cycle that ends δ seconds past K raises `W_max` by just `C·δ³`. After the
//! slow-start overshoot, fast convergence pushes `W_max` ~12 % below the equilibrium (p = 1e-5: 1000 vs
//! 1146 packets), from where it creeps up by about one packet per cycle (traced while writing this test);
//! without fast convergence `W_max` creeps down from above just as slowly (1476 packets after 40 losses at
//! p = 1e-5). The 15 % tolerance therefore stays; NewReno, whose sawtooth converges geometrically, is within
//! 2 %.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::disallowed_methods,
    missing_docs
)]

use std::time::{Duration, Instant};

use mpquic_cc::cubic::{Cubic, CubicConfig};
use mpquic_cc::newreno::{NewReno, NewRenoConfig};
use mpquic_cc::{AckEvent, AckedPacket, CongestionEvent, PathController, PathId, RttSnapshot, SentEvent};

const MSS: u64 = 1200;
const RTT: Duration = Duration::from_millis(100);
const WARMUP: u64 = 20;
const MEASURE: u64 = 20;

/// Average window in packets of `ctrl` under one loss every `one_in` packets.
fn average_window(ctrl: &mut dyn PathController, one_in: u64) -> f64 {
    average_window_after(ctrl, one_in, WARMUP)
}

/// Like [`average_window`], measuring from the `warmup`-th loss.
fn average_window_after(ctrl: &mut dyn PathController, one_in: u64, warmup: u64) -> f64 {
    let t0 = Instant::now();
    let rtt = RttSnapshot::from_rtt(RTT);
    let mut sent_total: u64 = 0;
    let mut losses: u64 = 0;
    let mut sum = 0.0;
    let mut rounds = 0u64;
    let mut packets = Vec::new();
    for round in 0u32.. {
        let cwnd = ctrl.window();
        let n = (cwnd / MSS).max(1);
        if losses >= warmup {
            sum += cwnd as f64 / MSS as f64;
            rounds += 1;
        }
        let sent_at = t0 + RTT * round + Duration::from_micros(1);
        let acked_at = t0 + RTT * (round + 1);
        // Packets sent_total+1 ..= sent_total+n; those divisible by one_in are lost.
        let lost = (sent_total + n) / one_in - sent_total / one_in;
        sent_total += n;
        ctrl.on_packet_sent(&SentEvent {
            path: PathId(0),
            now: sent_at,
            bytes: MSS,
            bytes_in_flight: n * MSS,
            app_limited: false,
        });
        packets.clear();
        packets.resize(
            (n - lost) as usize,
            AckedPacket {
                bytes: MSS,
                time_sent: sent_at,
            },
        );
        ctrl.on_ack(&AckEvent {
            path: PathId(0),
            now: acked_at,
            rtt,
            packets: &packets,
            prior_bytes_in_flight: n * MSS,
            bytes_in_flight: lost * MSS,
            app_limited: false,
            rate_sample: None,
        });
        if lost > 0 {
            ctrl.on_congestion(&CongestionEvent {
                path: PathId(0),
                now: acked_at,
                sent_time: sent_at,
                lost_bytes: lost * MSS,
                bytes_in_flight: 0,
                persistent_congestion: false,
                ecn: false,
                rtt,
            });
            losses += 1;
            if losses >= warmup + MEASURE {
                break;
            }
        }
    }
    sum / rounds as f64
}

fn check(name: &str, measured: f64, expected: f64) {
    let err = (measured - expected).abs() / expected;
    eprintln!(
        "{name}: measured {measured:.1} packets, table {expected}, error {:.1} %",
        err * 100.0
    );
    assert!(
        err <= 0.15,
        "{name}: measured {measured:.1}, expected {expected} ± 15 %"
    );
}

#[test]
fn newreno_matches_reno_response_function() {
    for (one_in, expected) in [
        (1_000, 38.0),
        (10_000, 120.0),
        (100_000, 379.0),
        (1_000_000, 1200.0),
    ] {
        let mut c = NewReno::new(NewRenoConfig::default(), MSS as u16);
        check(
            &format!("newreno p=1/{one_in}"),
            average_window(&mut c, one_in),
            expected,
        );
    }
}

#[test]
fn cubic_matches_cubic_response_function() {
    for (one_in, expected) in [
        (1_000, 38.0),
        (10_000, 187.0),
        (100_000, 1054.0),
        (1_000_000, 5926.0),
    ] {
        let mut c = Cubic::new(CubicConfig::default(), MSS as u16);
        check(
            &format!("cubic p=1/{one_in}"),
            average_window(&mut c, one_in),
            expected,
        );
    }
}

/// HighSpeed TCP (RFC 3649 §5): the average window follows `w = 0.12/p^0.835` above `Low_Window`: 262.4
/// packets at p = 10⁻⁴ and 1795.5 at p = 10⁻⁵ (from the formula; RFC 3649 §5 gives p = 10⁻⁷ at 83000 packets).
///
/// The response function is the equilibrium of `a(w)`, `b(w)` (RFC 3649 Appendix A: `a = w²·p·2b/(2 − b)` is
/// exactly the AIMD balance for an average window `w`). Convergence from the slow-start overshoot (tens of
/// thousands of packets at the first loss) is slow, because each loss removes only `b(w)` ≈ 0.1–0.3 of the
/// window: after 20 losses the average at p = 10⁻⁵ is still 48 % high, after 100 it is within 1 % (traced while
/// writing this test; at p = 10⁻⁶ after 200 losses: 12411 vs 12280). Hence the longer warm-up and 5 %.
#[test]
fn highspeed_matches_rfc3649_response_function() {
    use mpquic_cc::highspeed::{HighSpeed, HighSpeedConfig};
    for (one_in, expected) in [(10_000, 262.4), (100_000, 1795.5)] {
        let mut c = HighSpeed::new(HighSpeedConfig::default(), MSS as u16);
        let measured = average_window_after(&mut c, one_in, 100);
        check(&format!("highspeed p=1/{one_in}"), measured, expected);
        assert!(
            (measured - expected).abs() / expected <= 0.05,
            "highspeed p=1/{one_in}: {measured:.1} vs {expected}"
        );
    }
}
