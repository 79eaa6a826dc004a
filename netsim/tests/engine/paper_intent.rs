//! Schedulers against their papers' intent, under the conditions their papers used: DAPS and OTIAS aim at
//! in-order arrival over paths of very different delays with a bounded receiver; the redundant scheduler
//! aims at short flows over a lossy path. Each test states the model its thresholds come from, and where a
//! scheduler does not do what its paper intends, pins the mechanism that stops it.

use mpquic_netsim::results::{FlowResult, ReceiverResult};

use super::two_links;

/// Fast path 20 Mbit/s / 5 ms one way, slow path 20 Mbit/s / 40 ms (a 1:8 RTT ratio), default one-BDP
/// queues, no loss; a bulk upload for 6 s into a fixed 100 kB receive window (stream and connection), four
/// times the fast path's BDP (20 Mbit/s × 10 ms = 25 kB).
fn heterogeneous(sched: &str) -> (FlowResult, ReceiverResult) {
    let f = two_links(
        "rate_bps = 20_000_000\ndelay = \"5ms\"",
        "rate_bps = 20_000_000\ndelay = \"40ms\"",
        sched,
        6.0,
        1,
        r#"receiver = { policy = "fixed", window = "100kB", conn_window = "100kB" }"#,
    );
    let rx = f.receiver.clone().unwrap();
    println!(
        "{sched}: {:.2} Mbit/s (fast {:.2}, slow {:.2}), {rx:?}",
        f.goodput_bps.unwrap() / 1e6,
        f.paths[0].goodput_bps.unwrap_or(0.0) / 1e6,
        f.paths[1].goodput_bps.unwrap_or(0.0) / 1e6
    );
    (f, rx)
}

/// One-way delay difference of the two paths of [`heterogeneous`], ms: bytes sent on the fast path just
/// after a byte sent on the slow one wait this long above its gap.
const DELAY_GAP_MS: f64 = 40.0 - 5.0;

/// OTIAS (Yang, Wang, Amer, "Out-of-order transmission for in-order arrival scheduling for multipath
/// TCP", IEEE AINA Workshops 2014) sends each packet on the path where it arrives first, waiting for a full
/// path when that still wins, so that data arrives in order.
///
/// Hand calculation. The backlog OTIAS weighs is at most the receive window's credit, 100 kB. Behind the
/// full fast window it drains at the fast path's payload rate, 20 Mbit/s × 1160/1228 = 2.36 MB/s, so the
/// last of 100 kB leaves within 42 ms and arrives ≈ 5 ms later, sooner than anything sent on the slow path
/// (≥ 40 ms one way, and OTIAS's estimate there is at least srtt_s/2 ≈ 44 ms with the slow path's queue):
/// OTIAS keeps to the fast path, and data arrives in order. minRTT instead sends on the slow path whenever
/// the fast window is full, so a slow packet is nearly always in flight and nearly every fast byte arrives
/// above its gap: its out-of-order fraction is about the fast path's share of the bytes (measured 0.88),
/// its waits spread over [0, 35 ms] (p95 ≈ 0.95 × 35 ms).
///
/// Bounds: OTIAS's out-of-order fraction < 0.1 (the initial window's packets may go both ways before the
/// estimates exist) against minRTT's > 0.5; OTIAS's p95 head-of-line delay below one fast round trip
/// (10 ms, plus its queue: < 15 ms) and below minRTT's (> 0.8 × 35 ms); its reassembly peak below minRTT's.
/// Measured: OTIAS 0.054 / 2.6 ms / 47.7 kB against minRTT 0.885 / 29.4 ms / 72.1 kB.
///
/// Before the arrival estimate was clamped at srtt/2 (a packet the window lets go now waits no round), an
/// idle slow path with a large window got a negative estimate and won against the fast path for small
/// backlogs: with this 100 kB window OTIAS put 1.6 Mbit/s on the slow path (out-of-order fraction 0.18),
/// and with a 50 kB window 6.0 of its 8.4 Mbit/s (0.48, worse than minRTT).
#[test]
fn otias_delivers_in_order_where_minrtt_does_not() {
    let (_, m) = heterogeneous("minrtt");
    let (f, o) = heterogeneous("otias");
    assert!(m.out_of_order_fraction.unwrap() > 0.5, "{m:?}");
    assert!(m.hol_delay_p95_ms > 0.8 * DELAY_GAP_MS, "{m:?}");
    assert!(o.out_of_order_fraction.unwrap() < 0.1, "{o:?}");
    assert!(o.hol_delay_p95_ms < 15.0, "{o:?}");
    assert!(o.hol_delay_p95_ms < m.hol_delay_p95_ms);
    assert!(o.reassembly_peak_bytes < m.reassembly_peak_bytes, "{o:?} {m:?}");
    // Keeping to the fast path costs nothing here: it alone carries ≈ 18.9 Mbit/s of payload.
    assert!(f.goodput_bps.unwrap() > 0.9 * 20e6 * 1160.0 / 1228.0, "{f:?}");
}

/// DAPS (Kuhn, Lochin, Mifdaoui, Sarwar, Mehani, Boreli, "DAPS: Intelligent delay-aware packet scheduling
/// for multipath transport", IEEE ICC 2014) plans which path carries which packet so that they arrive in
/// order. Here it does not achieve in-order arrival, and the reason is in the transport, not in the plan.
///
/// The plan (see `mpquic_sched::schedulers::Daps`): one-way delays srtt/2 in 4 ms steps, fast ≈ 16 ms / 2
/// → 2 steps, slow ≈ 89 ms / 2 → 11 steps; hyperperiod lcm(2, 11) = 22 steps; the fast path sends a window
/// at every even tick (arriving at 2, 4, …, 22), the slow path a window at ticks 0 and 11 (arriving at 11 and
/// 22). In arrival order: five fast windows, a slow window, six fast windows, a slow window. The paper
/// sends the slow window at tick 0 carrying the sequence numbers that come after the five fast windows: the
/// slow path transmits out of order so that everything arrives in order. The connection hands stream data
/// out in offset order, so a per-packet scheduler can only say which path carries the *next* bytes: the slow
/// window goes out when the walk reaches it, after five fast windows, and the fast windows that follow it
/// overtake it by the delay difference, 35 ms. So:
/// - fewer bytes arrive out of order than with minRTT, which keeps a slow packet in flight nearly always:
///   only the fast bytes sent within 35 ms after each of the two slow windows per plan of eleven fast
///   windows (≥ 11 fast round trips of ≥ 10 ms) wait, at most 2 × 35 / 110 ≈ 0.64 of the fast windows and
///   in practice less (the 100 kB window stalls the fast path during part of each wait). Bound: DAPS's
///   out-of-order fraction below half of minRTT's (≈ 0.88, see the OTIAS test);
/// - but each slow window still holds the fast path's later bytes for the whole delay difference: DAPS's
///   longest head-of-line wait ≥ 0.8 × 35 ms, and the reassembly buffer fills as far as with minRTT (peak
///   ≥ 0.8 × minRTT's): the bounded receiver sees the same blocking episodes, fewer of them.
///
/// Measured: out-of-order fraction 0.242 (minRTT 0.885), HoL mean 4.1 ms (22.5), max 51.4 ms (33.7),
/// reassembly peak 83.7 kB (72.1 kB).
#[test]
fn daps_cannot_reorder_transmissions_so_its_slow_batches_still_block() {
    let (_, m) = heterogeneous("minrtt");
    let (_, d) = heterogeneous("daps");
    let (fm, fd) = (m.out_of_order_fraction.unwrap(), d.out_of_order_fraction.unwrap());
    assert!(fd < 0.5 * fm, "daps {d:?} minrtt {m:?}");
    assert!(
        d.hol_delay_mean_ms < m.hol_delay_mean_ms,
        "daps {d:?} minrtt {m:?}"
    );
    assert!(d.hol_delay_max_ms >= 0.8 * DELAY_GAP_MS, "{d:?}");
    assert!(
        d.reassembly_peak_bytes as f64 >= 0.8 * m.reassembly_peak_bytes as f64,
        "daps {d:?} minrtt {m:?}"
    );
}

/// The redundant scheduler sends every packet on every path with room, trading capacity for latency
/// (Frömmgen, Erbshäußer, Buchmann, Zimmermann, Wehrle, "ReMP TCP: Low latency multipath TCP", IEEE ICC
/// 2016): short flows over a lossy path should complete sooner than with minRTT.
///
/// Setup: a lossy path (20 Mbit/s, 10 ms one way, 5 % loss on the data direction) and a clean one
/// (20 Mbit/s, 15 ms), 10 kB uploads one at a time with 50 ms between them, 6 s, seeds 1–3. A 10 kB object
/// is 9 datagrams, 10,000 × 1228/1160 = 10,586 B on the wire: 4.23 ms at 20 Mbit/s.
/// - Redundant: every datagram also goes on the clean path, which loses none, so the object is read at the
///   latest when the clean path's copy of its last datagram arrives: 15 + 4.23 = 19.23 ms (the initial
///   window, 10 datagrams, takes a whole object). Bound: p95 ≤ 1.05 × 19.23 ms.
/// - minRTT puts the object on the lossy path (10 ms). 1 − 0.95⁹ = 37 % of the objects lose a datagram;
///   its loss is learnt from the acknowledgement of a later datagram, at least one lossy round trip (20 ms)
///   after it left, and the repeat takes at least 10 ms more: such an object takes ≥ 30 ms. With more than
///   5 % of the objects there, p95 ≥ 30 ms.
///
/// Measured: redundant p95 19.2 ms in every seed; minRTT 60.0 / 37.5 / 54.8 ms.
#[test]
fn redundant_cuts_the_tail_of_short_transfers_over_a_lossy_path() {
    let run = |sched: &str, seed: u64| {
        let f = two_links(
            "rate_bps = 20_000_000\ndelay = \"10ms\"\nloss = { kind = \"bernoulli\", p = 0.05 }\nreverse = { loss = { kind = \"none\" } }",
            "rate_bps = 20_000_000\ndelay = \"15ms\"",
            sched,
            6.0,
            seed,
            "kind = \"requests\"\ndirection = \"upload\"\nrequests = { sizes = [\"10kB\"], gap = \"50ms\" }",
        );
        let o = f.objects.clone().unwrap();
        println!("{sched} seed {seed}: {o:?}");
        o
    };
    let wire_ms = 10_000.0 * 1228.0 / 1160.0 * 8.0 / 20e6 * 1e3;
    let redundant_bound = 15.0 + wire_ms;
    for seed in 1..=3 {
        let m = run("minrtt", seed);
        let r = run("redundant", seed);
        // Enough objects for a p95 to mean something (each takes ≥ 10 ms plus the 50 ms gap).
        assert!(m.count >= 40 && r.count >= 40, "{m:?} {r:?}");
        let (pm, pr) = (m.fct_p95_ms.unwrap(), r.fct_p95_ms.unwrap());
        assert!(
            pr <= 1.05 * redundant_bound,
            "seed {seed}: redundant p95 {pr} > {redundant_bound}"
        );
        assert!(pm >= 30.0, "seed {seed}: minrtt p95 {pm}");
        assert!(pr < pm);
    }
}
