//! The engine: real mpquic connections over simulated links.
//!
//! Quick by design (CI runs them at opt-level 1): small rates, short durations.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod dead_peer;
mod loss_accounting;
mod multipath;
mod pacing;
mod paper_intent;
mod pmtud;
mod reinjection;
mod schedulers;
mod tunnel;
mod validation;
mod workloads;

use std::time::Duration;

use mpquic_netsim::engine::Engine;
use mpquic_netsim::output::json::to_json;
use mpquic_netsim::results::FlowResult;
use mpquic_netsim::scenario::Direction;
use mpquic_netsim::{Scenario, SimTime};

/// One client, one server, one link `bn` of `rate_bps` / `delay_ms`, queue `queue`, one flow per `cc`.
fn dumbbell(rate_bps: u64, delay_ms: u64, queue: &str, duration_s: f64, ccs: &[&str]) -> Scenario {
    let mut text = format!(
        r#"
[scenario]
name = "test"
duration = "{duration_s}s"
sample_interval = "50ms"
seed = 7

[nodes.r1]
kind = "router"
[nodes.r2]
kind = "router"
[nodes.server]
kind = "host"
interfaces = [{{ name = "eth0" }}]

[links.out]
between = ["r2", "server.eth0"]
rate_bps = 10_000_000_000
delay = "0"
queue = {{ kind = "packets", packets = 100000 }}

[links.bn]
between = ["r1", "r2"]
rate_bps = {rate_bps}
delay = "{delay_ms}ms"
queue = {queue}
"#
    );
    for (i, cc) in ccs.iter().enumerate() {
        text.push_str(&format!(
            r#"
[nodes.c{i}]
kind = "host"
interfaces = [{{ name = "eth0" }}]

[links.a{i}]
between = ["c{i}.eth0", "r1"]
rate_bps = 10_000_000_000
delay = "0"
queue = {{ kind = "packets", packets = 100000 }}

[[flows]]
name = "f{i}"
from = "c{i}"
to = "server"
cc = "{cc}"
paths = [{{ route = ["a{i}", "bn", "out"] }}]
"#
        ));
    }
    Scenario::from_toml_str(&text).unwrap()
}

/// Bytes the forward direction of `bn` delivered between `t1` and `t2` (seconds), on the wire.
fn wire_bytes_between(engine: &mut Engine, t1: f64, t2: f64) -> u64 {
    engine
        .run_until(SimTime::from_duration(Duration::from_secs_f64(t1)))
        .unwrap();
    let a = engine
        .link_stats("bn", Direction::Forward)
        .unwrap()
        .delivered
        .bytes;
    engine
        .run_until(SimTime::from_duration(Duration::from_secs_f64(t2)))
        .unwrap();
    engine
        .link_stats("bn", Direction::Forward)
        .unwrap()
        .delivered
        .bytes
        - a
}

/// One flow on a lossless 20 Mbit/s / 10 ms link with a one-BDP queue fills the link after slow start.
///
/// Closed form: BDP = 20 Mbit/s × 20 ms = 50 kB ≈ 42 packets of 1,228 wire bytes; slow start from 10 packets
/// doubles per RTT and overshoots BDP + queue (≈ 84 packets) after ⌈log2(84/10)⌉ + 1 = 5 RTTs = 100 ms;
/// recovery from the overshoot takes a few RTTs more. From 1 s on, with a queue of one BDP, a loss-based
/// controller never drains the queue (window ≥ BDP after a multiplicative decrease of at most ½ of
/// 2·BDP), so the link is busy: delivered wire bytes ≥ 95 % of rate × time.
#[test]
fn single_flow_fills_a_lossless_link_after_slow_start() {
    for cc in ["cubic", "newreno"] {
        let rate = 20_000_000u64;
        let s = dumbbell(rate, 10, r#"{ kind = "bdp", multiple = 1.0 }"#, 3.0, &[cc]);
        let mut engine = Engine::new(s).unwrap();
        let bytes = wire_bytes_between(&mut engine, 1.0, 3.0);
        let capacity = rate as f64 / 8.0 * 2.0;
        let util = bytes as f64 / capacity;
        assert!(util >= 0.95, "{cc}: link utilisation {util:.3} < 0.95");
        let out = engine.finish();
        // Goodput over the whole run (handshake and slow start included) is close to the payload rate.
        let goodput = out.result.flows[0].goodput_bps.unwrap();
        assert!(goodput > 0.85 * rate as f64, "{cc}: goodput {goodput}");
    }
}

/// A saturated drop-tail queue adds queue/rate to the RTT: with 50 packets of 1,228 wire bytes at 10 Mbit/s
/// the standing queue can reach 49.1 ms, so the smoothed RTT samples rise from the 20 ms base towards
/// 20 + 49.1 ms, within one packet time (0.98 ms) plus the ack delay bound above, and never exceed it.
#[test]
fn queueing_delay_on_a_saturated_drop_tail_link_is_queue_over_rate() {
    let rate = 10_000_000u64;
    let packets = 50u64;
    let s = dumbbell(
        rate,
        10,
        &format!(r#"{{ kind = "packets", packets = {packets} }}"#),
        4.0,
        &["newreno"],
    );
    let out = Engine::run(s).unwrap();
    let wire = 1200.0 + 28.0;
    let packet_time = wire * 8.0 / rate as f64;
    let queue_delay = packets as f64 * packet_time;
    let base = 0.020;
    let srtt: Vec<f64> = out.series[0].srtt_secs();
    let max = srtt.iter().copied().fold(0.0, f64::max);
    // The queue fills: the RTT rises to base + queue/rate (within a packet time and the 25 ms max ack delay
    // the receiver may add to a sample, which srtt smooths).
    assert!(
        max >= base + queue_delay - 2.0 * packet_time - 0.005,
        "max srtt {max:.4} s, expected ≈ {:.4} s",
        base + queue_delay
    );
    assert!(
        max <= base + queue_delay + packet_time + 0.025,
        "max srtt {max:.4} s exceeds base + queue/rate {:.4} s",
        base + queue_delay
    );
    // Samples after the start are never below the base RTT.
    assert!(srtt.iter().skip(2).all(|&r| r >= base - 1e-4), "{srtt:?}");

    // The sender's window, as sampled from the connection: NewReno fills pipe + queue before its first loss,
    // (BDP 25 000 B + 50 packets of 1 200 B) ≈ 85 000 B of UDP payload (slow start overshoots it before the
    // loss is detected, hence the wide upper bound), then halves; ssthresh appears after the first loss.
    let samples = &out.series[0].samples;
    let max_cwnd = samples.iter().map(|x| x.cwnd).max().unwrap();
    let pipe_and_queue = (rate as f64 / 8.0 * base) + packets as f64 * 1200.0;
    assert!(
        (max_cwnd as f64) > 0.8 * pipe_and_queue && (max_cwnd as f64) < 2.5 * pipe_and_queue,
        "max cwnd {max_cwnd} B vs pipe + queue {pipe_and_queue} B"
    );
    assert!(samples.iter().any(|x| x.bytes_in_flight > 0));
    assert!(samples.iter().any(|x| x.cc.iter().any(|(k, _)| k == "ssthresh")));
}

/// Two NewReno flows with equal RTTs share one bottleneck fairly.
#[test]
fn two_newreno_flows_share_a_bottleneck_fairly() {
    let s = dumbbell(
        10_000_000,
        10,
        r#"{ kind = "bdp", multiple = 1.0 }"#,
        20.0,
        &["newreno", "newreno"],
    );
    let out = Engine::run(s).unwrap();
    let jain = out.result.jain_flows.unwrap();
    let g: Vec<f64> = out.result.flows.iter().map(|f| f.goodput_bps.unwrap()).collect();
    assert!(jain >= 0.95, "Jain's index {jain:.4}, goodputs {g:?}");
    assert!(g.iter().sum::<f64>() > 0.85 * 10e6, "{g:?}");
}

/// Two runs of the same scenario give identical JSON; another seed changes the lossy run.
#[test]
fn same_seed_same_json() {
    let text = std::fs::read_to_string(format!(
        "{}/scenarios/competition_quick.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
    .replace(r#"duration = "5s""#, r#"duration = "2s""#);
    let s = Scenario::from_toml_str(&text).unwrap();
    let a = Engine::run(s.clone()).unwrap();
    let b = Engine::run(s.clone()).unwrap();
    let ja = to_json(&a.result).unwrap();
    assert_eq!(ja, to_json(&b.result).unwrap());
    assert_eq!(a.series, b.series);
    let mut other = s;
    other.scenario.seed = 99;
    let c = Engine::run(other).unwrap();
    assert_ne!(a.result.flows[0].retransmissions, 0);
    assert_ne!(
        (
            a.result.flows[0].delivered_bytes,
            a.result.flows[0].retransmissions
        ),
        (
            c.result.flows[0].delivered_bytes,
            c.result.flows[0].retransmissions
        )
    );
}

/// A flow with `bytes` completes, its active time ends at completion, and a link outage is survived.
#[test]
fn sized_flow_completes_and_outage_is_survived() {
    let mut s = dumbbell(
        20_000_000,
        5,
        r#"{ kind = "bdp", multiple = 1.0 }"#,
        3.0,
        &["cubic"],
    );
    s.flows[0].bytes = Some(1_000_000);
    let out = Engine::run(s.clone()).unwrap();
    let f = &out.result.flows[0];
    assert_eq!(f.delivered_bytes, 1_000_000);
    assert!(f.active_s > 0.4 && f.active_s < 1.5, "active {}", f.active_s);

    let mut s = dumbbell(
        20_000_000,
        5,
        r#"{ kind = "bdp", multiple = 1.0 }"#,
        3.0,
        &["cubic"],
    );
    let events: Vec<mpquic_netsim::scenario::EventSpec> = toml::from_str::<toml::Table>(
        r#"
e = [{ at = "1s", link = "bn", action = "down" }, { at = "1.5s", link = "bn", action = "up" }]
"#,
    )
    .unwrap()["e"]
        .clone()
        .try_into()
        .unwrap();
    s.events = events;
    let mut engine = Engine::new(s).unwrap();
    engine.run_until(SimTime::from_millis(1000)).unwrap();
    let before = engine.delivered(0).unwrap();
    engine.run_until(SimTime::from_millis(1500)).unwrap();
    let during = engine.delivered(0).unwrap() - before;
    engine.run_until(SimTime::MAX).unwrap();
    let out = engine.finish();
    let after = out.result.flows[0].delivered_bytes;
    // Nothing beyond what was already in flight crosses a down link; the flow recovers afterwards.
    assert!(during < 200_000, "{during} bytes during the outage");
    assert!(after > before + 1_000_000, "no recovery: {before} then {after}");
}

/// A dual-homed client and server joined by two disjoint links, one CUBIC flow over both with scheduler
/// `sched` for `duration_s`, seed `seed`, and the extra flow keys `extra`. `fast` and `slow` are the two
/// links' extra keys (rate, delay, loss).
pub(crate) fn two_links(
    fast: &str,
    slow: &str,
    sched: &str,
    duration_s: f64,
    seed: u64,
    extra: &str,
) -> FlowResult {
    let text = format!(
        r#"
[scenario]
name = "two_links"
duration = "{duration_s}s"
sample_interval = "100ms"
seed = {seed}

[nodes.client]
kind = "host"
interfaces = [{{ name = "a" }}, {{ name = "b" }}]

[nodes.server]
kind = "host"
interfaces = [{{ name = "a" }}, {{ name = "b" }}]

[links.fast]
between = ["client.a", "server.a"]
{fast}

[links.slow]
between = ["client.b", "server.b"]
{slow}

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
    let s = Scenario::from_toml_str(&text).unwrap();
    Engine::run(s).unwrap().result.flows[0].clone()
}
