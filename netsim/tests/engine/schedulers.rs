//! Schedulers against a bounded receiver: the two claims of the scheduler literature the simulator must
//! reproduce once receivers are realistic.

use mpquic_netsim::Scenario;
use mpquic_netsim::engine::Engine;
use mpquic_netsim::results::FlowResult;

/// A dual-homed client and server joined by two disjoint links with a 1:8 RTT ratio, `fast` (20 Mbit/s,
/// 5 ms one way) and `slow` (20 Mbit/s, 40 ms), each with a one-BDP queue and no loss, and one 6 s CUBIC
/// bulk flow over both with scheduler `sched` and the extra flow keys `extra`.
fn two_paths(sched: &str, extra: &str) -> Scenario {
    let text = format!(
        r#"
[scenario]
name = "sched"
duration = "6s"
sample_interval = "100ms"
seed = 2

[nodes.client]
kind = "host"
interfaces = [{{ name = "a" }}, {{ name = "b" }}]

[nodes.server]
kind = "host"
interfaces = [{{ name = "a" }}, {{ name = "b" }}]

[links.fast]
between = ["client.a", "server.a"]
rate_bps = 20_000_000
delay = "5ms"

[links.slow]
between = ["client.b", "server.b"]
rate_bps = 20_000_000
delay = "40ms"

[[flows]]
name = "mp"
from = "client"
to = "server"
cc = "cubic"
sched = "{sched}"
paths = [{{ route = ["fast"] }}, {{ route = ["slow"] }}]
{extra}
"#
    );
    Scenario::from_toml_str(&text).unwrap()
}

fn flow(s: Scenario) -> FlowResult {
    Engine::run(s).unwrap().result.flows[0].clone()
}

/// BLEST's and ECF's setting: a receive buffer of about twice the fast path's BDP on paths with a 1:8 RTT
/// ratio. Fast path 20 Mbit/s / 10 ms RTT (BDP 25 kB), slow path 20 Mbit/s / 80 ms RTT, a fixed 50 kB
/// window (stream and connection), CUBIC, 6 s.
///
/// minRTT sends on the slow path whenever the fast path's window is full; each byte sent there arrives
/// 40 − 5 = 35 ms after a byte sent at the same time on the fast path, and the fast path's bytes sent after it
/// wait that long in the reassembly buffer: p95 head-of-line delay ≈ 35 ms (the histogram's bucket reads
/// 34.5 ms), and the slow path's bytes hold the small window for a whole 80 ms round trip, so goodput falls
/// to 8.4 Mbit/s. BLEST (Ferlin, Alay, Mehani, Boreli, "BLEST: Blocking estimation-based MPTCP scheduler
/// for heterogeneous networks", IFIP Networking 2016) estimates that the fast path could send more than the
/// window leaves during one slow-path RTT and waits; ECF (Lim, Nahum, Towsley, Gibbens, "ECF: An MPTCP path
/// scheduler to manage heterogeneous paths", ACM CoNEXT 2017) finds the fast path finishes sooner: both keep
/// to the fast path, nothing waits above a gap, and the fast path alone carries ≈ 20 × 1160/1228 =
/// 18.9 Mbit/s. Bounds: minRTT's p95 HoL ≥ 0.8 × 35 ms; BLEST's and ECF's < 5 ms and their goodput
/// ≥ 0.9 × 18.9 Mbit/s, above minRTT's. Measured: minRTT 34.5 ms / 8.37 Mbit/s; BLEST and ECF 0 ms /
/// 18.83 Mbit/s.
#[test]
fn blest_and_ecf_cut_head_of_line_delay_against_minrtt_with_a_small_window() {
    let window = r#"receiver = { policy = "fixed", window = "50kB", conn_window = "50kB" }"#;
    let run = |sched: &str| flow(two_paths(sched, window));
    let minrtt = run("minrtt");
    let m = minrtt.receiver.clone().unwrap();
    println!("minrtt: {:.2} Mbit/s, {m:?}", minrtt.goodput_bps.unwrap() / 1e6);
    assert!(m.hol_delay_p95_ms >= 0.8 * 35.0, "{m:?}");
    for sched in ["blest", "ecf"] {
        let f = run(sched);
        let r = f.receiver.clone().unwrap();
        let g = f.goodput_bps.unwrap();
        println!("{sched}: {:.2} Mbit/s, {r:?}", g / 1e6);
        assert!(r.hol_delay_p95_ms < 5.0, "{sched}: {r:?}");
        assert!(r.hol_delay_p95_ms < m.hol_delay_p95_ms);
        assert!(g >= 0.9 * 20e6 * 1160.0 / 1228.0, "{sched}: {g}");
        assert!(g > minrtt.goodput_bps.unwrap());
    }
}
