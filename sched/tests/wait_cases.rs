//! ECF and BLEST: hand-computed cases where waiting for the fast path finishes sooner (the decision is
//! `Wait`) and the opposite cases (send on the slow path); ECF's hysteresis bit and BLEST's λ adaptation;
//! and the per-scheduler rules of OTIAS, STTF, LLHD and DAPS on small constructed views.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

mod common;

use common::{ms, path, t0};
use mpquic_sched::schedulers::{Blest, Ecf, Llhd, Otias, Sttf};
use mpquic_sched::{ConnView, Decision, PathId, PathView, Scheduler, SentInfo, registry};

const MSS: u64 = 1200;

/// Fast path 0: srtt 10 ms, rttvar 1 ms, cwnd 10 packets, window full. Slow path 1: srtt `slow_ms`,
/// rttvar `slow_var` ms, cwnd 10 packets, idle.
fn fast_full_slow_free(slow_ms: u64, slow_var: u64) -> [PathView; 2] {
    let mut fast = path(0, 10 * MSS, 10, 1);
    fast.bytes_in_flight = 10 * MSS;
    [fast, path(1, 10 * MSS, slow_ms, slow_var)]
}

fn view(paths: &[PathView], k: u64, credit: u64) -> ConnView<'_> {
    let mut v = ConnView::new(paths, MSS);
    v.bytes_waiting = k;
    v.flow_credit = credit;
    v
}

#[test]
fn ecf_waits_when_the_fast_path_finishes_sooner() {
    // k = 24 000 B = 2 fast windows. δ = max(1, 5) = 5 ms.
    // n = 1 + max(k, cwnd_f)/cwnd_f = 1 + 2 = 3; n·srtt_f = 30 ms < (1 + 0)(100 + 5) = 105 ms: waiting is
    // faster. Slow share: max(k, cwnd_s)/cwnd_s · srtt_s = 2 · 100 = 200 ms ≥ 2·10 + 5 = 25 ms → Wait.
    let paths = fast_full_slow_free(100, 5);
    let mut ecf = Ecf::default();
    assert_eq!(
        ecf.select_send(&view(&paths, 24_000, u64::MAX), t0()),
        Decision::Wait
    );
    assert!(ecf.waiting());
}

#[test]
fn ecf_sends_on_the_slow_path_when_that_finishes_sooner() {
    // Slow path 12 ms, rttvar 1 ms: δ = 1 ms. n·srtt_f = 30 ms ≥ (12 + 1) = 13 ms → send on path 1.
    let paths = fast_full_slow_free(12, 1);
    let mut ecf = Ecf::default();
    assert_eq!(
        ecf.select_send(&view(&paths, 24_000, u64::MAX), t0()),
        Decision::Path(PathId(1))
    );
    // Same slow path as the waiting case (100 ms) but much data waiting: k = 240 000 B = 20 windows,
    // n = 21, n·srtt_f = 210 ms ≥ 105 ms → the slow path helps, send on it.
    let paths = fast_full_slow_free(100, 5);
    assert_eq!(
        ecf.select_send(&view(&paths, 240_000, u64::MAX), t0()),
        Decision::Path(PathId(1))
    );
    assert!(!ecf.waiting());
}

#[test]
fn ecf_hysteresis_keeps_waiting_within_beta() {
    // k = 132 000 B = 11 windows: n = 12, n·srtt_f = 120 ms. Without the waiting bit 120 ≥ 105 → send slow;
    // with it the bound is (1 + 0.25)·105 = 131.25 ms > 120 ms, and the slow share 11·100 = 1100 ms ≥ 25 ms
    // → keep waiting.
    let paths = fast_full_slow_free(100, 5);
    let mut fresh = Ecf::default();
    assert_eq!(
        fresh.select_send(&view(&paths, 132_000, u64::MAX), t0()),
        Decision::Path(PathId(1))
    );
    let mut waiting = Ecf::default();
    assert_eq!(
        waiting.select_send(&view(&paths, 24_000, u64::MAX), t0()),
        Decision::Wait
    );
    assert_eq!(
        waiting.select_send(&view(&paths, 132_000, u64::MAX), t0()),
        Decision::Wait
    );
    // Beyond 131.25 ms (k = 14 windows, n = 15, 150 ms) the bit clears and the slow path is used.
    assert_eq!(
        waiting.select_send(&view(&paths, 168_000, u64::MAX), t0()),
        Decision::Path(PathId(1))
    );
    assert!(!waiting.waiting());
}

#[test]
fn ecf_and_blest_use_the_fast_path_when_it_has_room() {
    let paths = [path(0, 10 * MSS, 10, 1), path(1, 10 * MSS, 100, 5)];
    assert_eq!(
        Ecf::default().select_send(&view(&paths, 24_000, 0), t0()),
        Decision::Path(PathId(0))
    );
    assert_eq!(
        Blest::default().select_send(&view(&paths, 24_000, 0), t0()),
        Decision::Path(PathId(0))
    );
}

#[test]
fn blest_waits_when_the_slow_path_would_block_the_send_window() {
    // srtt_f = 10 ms, srtt_s = 40 ms: r = 4. X = (cwnd_f + MSS·(r − 1)/2)·r = (12 000 + 1 800)·4 = 55 200 B;
    // λ·X = 1.2 · 55 200 = 66 240 B. SW = credit + Σ in flight = 20 000 + 12 000 = 32 000 B;
    // SW − (in flight_s + MSS_s) = 32 000 − 1 200 = 30 800 B < 66 240 B → Wait.
    let paths = fast_full_slow_free(40, 2);
    let mut blest = Blest::default();
    assert_eq!(
        blest.select_send(&view(&paths, 24_000, 20_000), t0()),
        Decision::Wait
    );
}

#[test]
fn blest_sends_on_the_slow_path_when_the_window_is_large_enough() {
    // Credit 100 000 B: SW = 112 000 B, 112 000 − 1 200 = 110 800 B ≥ 66 240 B → send on path 1.
    let paths = fast_full_slow_free(40, 2);
    let mut blest = Blest::default();
    assert_eq!(
        blest.select_send(&view(&paths, 24_000, 100_000), t0()),
        Decision::Path(PathId(1))
    );
    // Boundary: λ·X = 66 240 exactly fits when credit = 66 240 + 1 200 − 12 000 = 55 440.
    assert_eq!(
        blest.select_send(&view(&paths, 24_000, 55_440), t0()),
        Decision::Path(PathId(1))
    );
    assert_eq!(
        blest.select_send(&view(&paths, 24_000, 55_439), t0()),
        Decision::Wait
    );
}

#[test]
fn blest_lambda_adapts_once_per_slow_rtt_within_bounds() {
    let paths = fast_full_slow_free(40, 2); // slow min RTT = 40 ms (PathView::new sets min_rtt = srtt)
    let start = t0();
    let mut b = Blest::default();
    let v = view(&paths, 24_000, 100_000);
    b.select_send(&v, start); // first evaluation: starts the clock
    assert!((b.lambda() - 1.2).abs() < 1e-9);
    // A receive-buffer retransmission (retransmission while flow-control blocked) raises λ by 0.04, once the
    // slow path's RTT has passed.
    b.on_sent(&SentInfo {
        path: PathId(0),
        bytes: MSS,
        now: start,
        retransmission: true,
        flow_blocked: true,
    });
    b.select_send(&v, start + ms(39));
    assert!((b.lambda() - 1.2).abs() < 1e-9, "updated before one slow RTT");
    b.select_send(&v, start + ms(40));
    assert!((b.lambda() - 1.24).abs() < 1e-9);
    // No event: −0.01 per slow RTT.
    b.select_send(&v, start + ms(80));
    assert!((b.lambda() - 1.23).abs() < 1e-9);
    // Clamped to [1.0, 1.3].
    let mut t = start + ms(80);
    for _ in 0..10 {
        t += ms(40);
        b.on_sent(&SentInfo {
            path: PathId(0),
            bytes: MSS,
            now: t,
            retransmission: true,
            flow_blocked: true,
        });
        b.select_send(&v, t);
    }
    assert!((b.lambda() - 1.3).abs() < 1e-9);
    for _ in 0..100 {
        t += ms(40);
        b.select_send(&v, t);
    }
    assert!((b.lambda() - 1.0).abs() < 1e-9);
    // A retransmission that was not flow-control blocked is not a HoL event.
    t += ms(40);
    b.on_sent(&SentInfo {
        path: PathId(0),
        bytes: MSS,
        now: t,
        retransmission: true,
        flow_blocked: false,
    });
    t += ms(40);
    b.select_send(&v, t);
    assert!((b.lambda() - 1.0).abs() < 1e-9);
}

#[test]
fn otias_waits_for_a_full_fast_path_that_still_arrives_first() {
    // Fast: cwnd 12 000, 12 000 in flight, srtt 10 ms: T = ((1 200 − 0)/12 000 + 0.5)·10 = 6 ms.
    // Slow: idle, srtt 40 ms: room for the packet, no round to wait: T = 0.5·40 = 20 ms > 6 ms → wait.
    let paths = fast_full_slow_free(40, 2);
    assert_eq!(
        Otias.select_send(&ConnView::new(&paths, MSS), t0()),
        Decision::Wait
    );
    assert!((Otias::arrival_estimate(&paths[0], MSS) - 0.006).abs() < 1e-9);
    assert!((Otias::arrival_estimate(&paths[1], MSS) - 0.020).abs() < 1e-9);
    // A backlog of 24 000 B (two fast windows) with a slow window of 48 000 B: T_f = (2 + 0.5)·10 = 25 ms,
    // T_s = 0.5·40 = 20 ms → slow. With 12 000 B: T_f = 15 ms < 20 ms → wait.
    let mut paths = fast_full_slow_free(40, 2);
    paths[1].cwnd = 48_000;
    let mut v = ConnView::new(&paths, MSS);
    v.bytes_waiting = 24_000;
    assert_eq!(Otias.select_send(&v, t0()), Decision::Path(PathId(1)));
    v.bytes_waiting = 12_000;
    assert_eq!(Otias.select_send(&v, t0()), Decision::Wait);
}

#[test]
fn sttf_estimates_rounds_of_window_growth() {
    // Room for the packet: srtt/2.
    let p = path(0, 12_000, 40, 1);
    assert_eq!(Sttf::transfer_time(&p, MSS), ms(20));
    // Full window, 6 000 B queued, congestion avoidance: need 7 200 B; round 1 window = 13 200 B → 1 round:
    // 40 + 20 = 60 ms.
    let mut q = path(1, 12_000, 40, 1);
    q.bytes_in_flight = 12_000;
    q.queued_bytes = 6_000;
    assert_eq!(Sttf::transfer_time(&q, MSS), ms(60));
    // 30 000 B queued: need 31 200; round 1: 13 200 (18 000 left), round 2: 14 400 (3 600 left), round 3:
    // 15 600 ≥ 3 600 → 3 rounds: 120 + 20 = 140 ms. In slow start: 24 000 then 48 000 → 2 rounds, 100 ms.
    q.queued_bytes = 30_000;
    assert_eq!(Sttf::transfer_time(&q, MSS), ms(140));
    q.in_slow_start = true;
    assert_eq!(Sttf::transfer_time(&q, MSS), ms(100));
    // Fast full path (10 ms, 1 round → 15 ms) beats an idle 40 ms path (20 ms): wait for it.
    let paths = fast_full_slow_free(40, 2);
    assert_eq!(
        Sttf.select_send(&ConnView::new(&paths, MSS), t0()),
        Decision::Wait
    );
    // An idle 25 ms path (12.5 ms) beats it.
    let paths = fast_full_slow_free(25, 2);
    assert_eq!(
        Sttf.select_send(&ConnView::new(&paths, MSS), t0()),
        Decision::Path(PathId(1))
    );
}

#[test]
fn llhd_weighs_normalised_goodput_against_rtt() {
    // Path 0: 10 ms, 1 MB/s; path 1: 50 ms, 4 MB/s. RTT_max = 50 ms, GP_max = 4 MB/s.
    // β = 0.001: γ0 = 0.25 + 0.001·5 = 0.255, γ1 = 1 + 0.001·1 = 1.001 → path 1.
    // β = 1:     γ0 = 0.25 + 5 = 5.25,     γ1 = 1 + 1 = 2 → path 0.
    let mut p0 = path(0, 12_000, 10, 1);
    p0.delivery_rate = Some(1_000_000);
    let mut p1 = path(1, 12_000, 50, 1);
    p1.delivery_rate = Some(4_000_000);
    let paths = [p0, p1];
    let v = ConnView::new(&paths, MSS);
    assert_eq!(Llhd::default().select_send(&v, t0()), Decision::Path(PathId(1)));
    assert_eq!(Llhd::new(1.0).select_send(&v, t0()), Decision::Path(PathId(0)));
    // Without rate samples it is minRTT.
    let paths = [path(0, 12_000, 30, 1), path(1, 12_000, 20, 1)];
    assert_eq!(
        Llhd::default().select_send(&ConnView::new(&paths, MSS), t0()),
        Decision::Path(PathId(1))
    );
}

#[test]
fn daps_follows_its_plan_and_waits_for_the_planned_path() {
    // One-way delays 4 ms and 8 ms (srtt 8 and 16 ms, step 4 ms): plan = [0×2, 0×2, 1×3] (see daps.rs).
    let p0 = PathView::new(0, 2 * MSS, ms(8));
    let p1 = PathView::new(1, 3 * MSS, ms(16));
    let paths = [p0.clone(), p1.clone()];
    let v = ConnView::new(&paths, MSS);
    let mut d = registry::build("daps").unwrap();
    let seq: Vec<Decision> = (0..7).map(|_| d.select_send(&v, t0())).collect();
    let want: Vec<Decision> = [0, 0, 0, 0, 1, 1, 1].map(|i| Decision::Path(PathId(i))).to_vec();
    assert_eq!(seq, want);
    // Next plan starts with path 0; if it is full, DAPS waits rather than send out of order on path 1.
    let mut full = p0;
    full.bytes_in_flight = 2 * MSS;
    let paths = [full, p1];
    assert_eq!(d.select_send(&ConnView::new(&paths, MSS), t0()), Decision::Wait);
}

#[test]
fn registry_lists_every_required_scheduler_and_rejects_bad_specs() {
    let names = registry::names();
    for want in [
        "minrtt",
        "roundrobin",
        "weighted",
        "redundant",
        "backup",
        "single",
        "blest",
        "ecf",
        "otias",
        "sttf",
        "llhd",
        "daps",
    ] {
        assert!(names.contains(&want), "{want} missing");
    }
    assert_eq!(registry::DEFAULT, "minrtt");
    let err = registry::build("fastest").unwrap_err().to_string();
    assert!(
        err.starts_with("unknown scheduler `fastest`; valid names: minrtt, roundrobin"),
        "{err}"
    );
    let err = registry::build("blest:lamda=1.2").unwrap_err().to_string();
    assert_eq!(
        err,
        "`blest` has no parameter `lamda`; valid parameters: lambda, min, max, increase, decrease, adapt"
    );
    let err = registry::build("blest:lambda=2").unwrap_err().to_string();
    assert_eq!(
        err,
        "`blest`: bad value `2` for `lambda`: expected a number in [1, 1.3]"
    );
    let err = registry::build("weighted:1=x").unwrap_err().to_string();
    assert_eq!(
        err,
        "`weighted`: bad value `x` for `1`: expected an integer in [0, 1000000]"
    );
    assert!(registry::build("weighted:1=3,2=1").is_ok());
    assert!(registry::build("blest:lambda=1.2").is_ok());
    assert!(registry::build("minrtt:x=1").is_err());
    assert!(registry::build("ecf:beta=0.25").is_ok());
    assert!(registry::build(":").is_err());
}
