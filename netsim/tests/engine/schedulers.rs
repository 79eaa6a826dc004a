//! Schedulers against a bounded receiver: the two claims of the scheduler literature the simulator must
//! reproduce once receivers are realistic.

use mpquic_netsim::results::FlowResult;

use super::two_links;

/// One 6 s CUBIC bulk flow (seed 2) with scheduler `sched` and the extra flow keys `extra` over two disjoint
/// links with a 1:8 RTT ratio, `fast` (20 Mbit/s, 5 ms one way) and `slow` (20 Mbit/s, 40 ms), each with a
/// one-BDP queue and no loss.
fn flow(sched: &str, extra: &str) -> FlowResult {
    two_links(
        "rate_bps = 20_000_000\ndelay = \"5ms\"",
        "rate_bps = 20_000_000\ndelay = \"40ms\"",
        sched,
        6.0,
        2,
        extra,
    )
}

/// BLEST's setting: a receive buffer of about twice the fast path's BDP on paths with a 1:8 RTT ratio. Fast
/// path 20 Mbit/s / 10 ms RTT (BDP 25 kB), slow path 20 Mbit/s / 80 ms RTT, a fixed 50 kB window (stream and
/// connection), CUBIC, 6 s of bulk.
///
/// minRTT sends on the slow path whenever the fast path's window is full; each byte sent there arrives
/// 40 − 5 = 35 ms after a byte sent at the same time on the fast path, and the fast path's bytes sent after it
/// wait that long in the reassembly buffer: p95 head-of-line delay ≈ 35 ms (the histogram's bucket reads
/// 33.6 ms), and the slow path's bytes hold the small window for a whole 80 ms round trip, so goodput falls
/// far below the fast path's own rate. BLEST (Ferlin, Alay, Mehani, Boreli, "BLEST: Blocking
/// estimation-based MPTCP scheduler for heterogeneous networks", IFIP Networking 2016) estimates that the
/// fast path could send more than the window leaves during one slow-path RTT and waits: it keeps to the fast
/// path, nothing waits above a gap, and the fast path alone carries ≈ 20 × 1160/1228 = 18.9 Mbit/s.
///
/// ECF (Lim, Nahum, Towsley, Gibbens, "ECF: An MPTCP path scheduler to manage heterogeneous paths", ACM
/// CoNEXT 2017) decides on `k`, the data waiting to be sent (Linux counts the meta socket's write queue, which
/// the receive window does not shorten; so does the connection). A bulk sender's backlog is megabytes, so
/// `(k / cwnd_f) · rtt_f ≫ rtt_s` and ECF uses the slow path exactly when minRTT does: in bulk it *is* minRTT,
/// as its paper reports for long transfers. Its gain is for transfers whose remaining data the fast path
/// finishes sooner: see the next test.
///
/// Bounds: minRTT's and ECF's p95 HoL ≥ 0.8 × 35 ms; BLEST's < 5 ms and its goodput ≥ 0.9 × 18.9 Mbit/s,
/// above minRTT's. Measured: minRTT and ECF 33.6 ms / 10.59 Mbit/s; BLEST 0 ms / 18.35 Mbit/s.
#[test]
fn blest_cuts_head_of_line_delay_against_minrtt_with_a_small_window_and_ecf_is_minrtt_in_bulk() {
    let window = r#"receiver = { policy = "fixed", window = "50kB", conn_window = "50kB" }"#;
    let run = |sched: &str| flow(sched, window);
    let minrtt = run("minrtt");
    let m = minrtt.receiver.clone().unwrap();
    println!("minrtt: {:.2} Mbit/s, {m:?}", minrtt.goodput_bps.unwrap() / 1e6);
    assert!(m.hol_delay_p95_ms >= 0.8 * 35.0, "{m:?}");
    let ecf = run("ecf");
    let e = ecf.receiver.clone().unwrap();
    println!("ecf: {:.2} Mbit/s, {e:?}", ecf.goodput_bps.unwrap() / 1e6);
    assert!(e.hol_delay_p95_ms >= 0.8 * 35.0, "ecf: {e:?}");
    let blest = run("blest");
    let r = blest.receiver.clone().unwrap();
    let g = blest.goodput_bps.unwrap();
    println!("blest: {:.2} Mbit/s, {r:?}", g / 1e6);
    assert!(r.hol_delay_p95_ms < 5.0, "blest: {r:?}");
    assert!(g >= 0.9 * 20e6 * 1160.0 / 1228.0, "blest: {g}");
    assert!(g > minrtt.goodput_bps.unwrap());
}

/// ECF's setting: objects that the fast path finishes sooner than the slow path's one-way delay would allow.
/// The same paths and 50 kB window, a download of 100 kB objects one at a time (20 ms think time).
///
/// ECF with `k` ≤ 100 kB: the fast path's window-limited rate (15/16 × 50 kB per 10 ms = 37.5 Mbit/s) is
/// above its link, so it moves the object at the link's payload rate, 20 × 1160/1228 = 18.9 Mbit/s:
/// 100 kB × 8 / 18.9 Mbit/s = 42.3 ms, plus the request's 5 ms and the last byte's 5 ms one way: FCT ≈
/// 52.3 ms, and no byte waits above a gap. minRTT spills part of each object onto the slow path once the fast
/// window is full, so each object's last bytes arrive 40 ms one way later: FCT ≥ 40 + 40 = 80 ms (request and
/// slow one-way delay) for an object that used the slow path, and p95 HoL ≈ 35 ms. Bounds: ECF's p50 FCT
/// within 10 % of 52.3 ms, its p95 HoL < 5 ms, minRTT's p50 FCT ≥ 80 ms. Measured: ECF 52.3 ms / 0 ms,
/// minRTT 100.9 ms / 33.6 ms.
#[test]
fn ecf_keeps_objects_the_fast_path_finishes_sooner_off_the_slow_path() {
    let extra = r#"kind = "requests"
direction = "download"
requests = { sizes = ["100kB"], gap = "20ms" }
receiver = { policy = "fixed", window = "50kB", conn_window = "50kB" }"#;
    let run = |sched: &str| flow(sched, extra);
    let (minrtt, ecf) = (run("minrtt"), run("ecf"));
    let (mo, eo) = (minrtt.objects.clone().unwrap(), ecf.objects.clone().unwrap());
    let (mr, er) = (minrtt.receiver.clone().unwrap(), ecf.receiver.clone().unwrap());
    println!("minrtt: {mo:?} {mr:?}\necf: {eo:?} {er:?}");
    assert!((eo.fct_p50_ms.unwrap() / 52.3 - 1.0).abs() < 0.10, "ecf: {eo:?}");
    assert!(er.hol_delay_p95_ms < 5.0, "ecf: {er:?}");
    assert!(mo.fct_p50_ms.unwrap() >= 80.0, "minrtt: {mo:?}");
    assert!(mr.hol_delay_p95_ms >= 0.8 * 35.0, "minrtt: {mr:?}");
}
