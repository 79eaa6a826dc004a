//! `CongestionController::on_penalize`: the default treats a penalty as a congestion event without loss, for
//! every registered algorithm (coupled ones included), and the windows of NewReno and CUBIC drop by their
//! own decrease factors (hand-computed below).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::disallowed_methods,
    missing_docs
)]

use std::time::{Duration, Instant};

use mpquic_cc::{
    AckEvent, AckedPacket, CongestionController, CongestionEvent, PathId, RttSnapshot, SentEvent, registry,
};

const MSS: u64 = 1200;
const RTT: Duration = Duration::from_millis(40);

/// Two paths; path 0 sends and is fully acknowledged for `rounds` round trips (slow start from the initial
/// window); path 1 stays at its initial window. Returns the time after the last round.
fn grow(cc: &mut dyn CongestionController, t0: Instant, rounds: u32) -> Instant {
    cc.on_path_added(PathId(0), t0, MSS as u16);
    cc.on_path_added(PathId(1), t0, MSS as u16);
    let mut now = t0;
    for _ in 0..rounds {
        let w = cc.window(PathId(0));
        let n = w / MSS;
        for k in 0..n {
            cc.on_packet_sent(&SentEvent {
                path: PathId(0),
                now,
                bytes: MSS,
                bytes_in_flight: (k + 1) * MSS,
                app_limited: false,
            });
        }
        let sent = now;
        now += RTT;
        let packets: Vec<AckedPacket> = (0..n)
            .map(|_| AckedPacket {
                bytes: MSS,
                time_sent: sent,
            })
            .collect();
        cc.on_ack(&AckEvent {
            path: PathId(0),
            now,
            rtt: RttSnapshot::from_rtt(RTT),
            packets: &packets,
            prior_bytes_in_flight: n * MSS,
            bytes_in_flight: 0,
            app_limited: false,
            rate_sample: None,
        });
    }
    now
}

/// The penalty the connection sends: a congestion signal without loss, opening a new recovery period, with
/// at most half the window counted in flight.
fn penalty(path: u32, now: Instant, in_flight: u64) -> CongestionEvent {
    CongestionEvent {
        path: PathId(path),
        now,
        sent_time: now,
        lost_bytes: 0,
        bytes_in_flight: in_flight,
        persistent_congestion: false,
        ecn: false,
        rtt: RttSnapshot::from_rtt(RTT),
    }
}

#[test]
fn default_penalty_is_the_congestion_response_for_every_algorithm() {
    for algo in registry::list() {
        let t0 = Instant::now();
        let mut a = registry::build(algo.name).unwrap();
        let mut b = registry::build(algo.name).unwrap();
        let now = grow(a.as_mut(), t0, 6);
        grow(b.as_mut(), t0, 6);
        let before = (a.window(PathId(0)), a.window(PathId(1)));
        let ev = penalty(0, now, before.0 / 2);
        a.on_penalize(&ev);
        b.on_congestion(&ev);
        let after = (a.window(PathId(0)), a.window(PathId(1)));
        assert_eq!(after, (b.window(PathId(0)), b.window(PathId(1))), "{}", algo.name);
        assert!(
            after.0 <= before.0,
            "{}: penalty grew the window {before:?} -> {after:?}",
            algo.name
        );
        assert!(
            after.0 >= 2 * MSS,
            "{}: window {} below 2 packets",
            algo.name,
            after.0
        );
    }
}

#[test]
fn newreno_halves_and_cubic_scales_by_beta() {
    // Six slow-start rounds from the initial window min(10·MSS, max(14 720, 2·MSS)) = 12 000 bytes (RFC 9002
    // §7.2) double it six times: 768 000 bytes; nothing in flight when penalised.
    for (name, factor) in [("newreno", 0.5), ("cubic", 0.7)] {
        let t0 = Instant::now();
        let mut cc = registry::build(name).unwrap();
        let now = grow(cc.as_mut(), t0, 6);
        let before = cc.window(PathId(0));
        assert_eq!(before, 768_000, "{name}");
        cc.on_penalize(&penalty(0, now, 0));
        let expected = (before as f64 * factor) as u64;
        assert!(
            cc.window(PathId(0)).abs_diff(expected) <= 1,
            "{name}: {} != {expected}",
            cc.window(PathId(0))
        );
        // Path 1 is untouched.
        assert_eq!(cc.window(PathId(1)), 12_000, "{name}");
        // A second penalty within the same recovery period (signal sent before it began) changes nothing:
        // the connection's once-per-RTT rule and the controller's recovery period agree.
        let w = cc.window(PathId(0));
        let mut again = penalty(0, now + Duration::from_millis(1), 0);
        again.sent_time = now - Duration::from_millis(1);
        cc.on_penalize(&again);
        assert_eq!(cc.window(PathId(0)), w, "{name}");
    }
}
