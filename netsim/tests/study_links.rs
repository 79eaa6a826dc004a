//! The two link models the studies' testbeds had, end to end through the engine:
//! - `delay_on = "forward"`: the delay on one direction only, so a link's `delay` is the round trip it adds
//!   (a Dummynet pipe on the data path);
//! - `loss = { kind = "burst", … }`: loss events that drop runs of packets, as a qdisc dropping GSO/TSO
//!   super-packets does, at the configured average rate.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use mpquic_netsim::Scenario;
use mpquic_netsim::engine::Engine;
use mpquic_netsim::results::RunResult;
use mpquic_netsim::scenario::Direction;

/// One client, one server, one link `bn` of 10 Mbit/s written with `link` (delay, `delay_on`, loss), a
/// flow `f` of `kind` (its TOML lines).
fn scenario(link: &str, flow: &str, duration: &str) -> Scenario {
    Scenario::from_toml_str(&scenario_text(link, flow, duration)).unwrap()
}

fn scenario_text(link: &str, flow: &str, duration: &str) -> String {
    format!(
        r#"
[scenario]
name = "links"
duration = "{duration}"
sample_interval = "100ms"
seed = 3

[nodes.c]
kind = "host"
interfaces = [{{ name = "eth0" }}]
[nodes.s]
kind = "host"
interfaces = [{{ name = "eth0" }}]

[links.bn]
between = ["c.eth0", "s.eth0"]
rate_bps = 10_000_000
{link}

[[flows]]
name = "f"
from = "c"
to = "s"
{flow}
paths = [{{ route = ["bn"] }}]
"#
    )
}

/// Small objects far apart: the mean smoothed RTT is the path's round trip plus a millisecond of
/// serialisation (a 1,228-byte packet takes 0.98 ms at 10 Mbit/s), without queueing.
const PINGS: &str = r#"cc = "cubic"
kind = "requests"
requests = { sizes = ["1KiB"], gap = "100ms", count = 30 }"#;

fn rtt_ms(link: &str) -> f64 {
    let r = Engine::run(scenario(link, PINGS, "6s")).unwrap().result;
    r.flows[0].paths[0].rtt_mean_ms.unwrap()
}

#[test]
fn delay_on_one_direction_makes_delay_the_round_trip() {
    let one_way = rtt_ms(
        r#"delay = "100ms"
delay_on = "forward""#,
    );
    let reverse_only = rtt_ms(
        r#"delay = "100ms"
delay_on = "reverse""#,
    );
    let both = rtt_ms(r#"delay = "100ms""#);
    let split = rtt_ms(r#"delay = "50ms""#);
    // By hand: 100 ms + serialisation of a data packet (≈ 1 ms) and of an acknowledgement (< 0.1 ms); the
    // smoothed RTT starts at the handshake's sample, so allow [100, 106] ms.
    for (what, rtt) in [
        ("forward", one_way),
        ("reverse", reverse_only),
        ("50 ms both", split),
    ] {
        assert!((100.0..106.0).contains(&rtt), "{what}: {rtt} ms");
    }
    assert!((200.0..206.0).contains(&both), "100 ms both ways: {both} ms");
}

#[test]
fn delay_on_sizes_a_bdp_queue_by_the_round_trip_it_adds() {
    // 10 Mbit/s × 100 ms = 125,000 bytes, whichever way the 100 ms round trip is built; `delay = 100ms` on
    // both directions would make it 250,000. The bulk flow fills the queue, so its peak shows the limit.
    let bulk = r#"cc = "cubic""#;
    let peak = |link: &str| {
        let mut engine = Engine::new(scenario(link, bulk, "8s")).unwrap();
        let end = engine.end();
        engine.run_until(end).unwrap();
        engine
            .link_stats("bn", Direction::Forward)
            .unwrap()
            .max_queue_bytes
    };
    let one_way = peak(
        r#"delay = "100ms"
delay_on = "forward""#,
    );
    let split = peak(r#"delay = "50ms""#);
    let both = peak(r#"delay = "100ms""#);
    assert!(one_way <= 125_000 && one_way > 100_000, "one way: {one_way}");
    assert!(split <= 125_000 && split > 100_000, "50 ms both ways: {split}");
    assert!(both > 125_000 && both <= 250_000, "100 ms both ways: {both}");
}

#[test]
fn delay_on_is_validated_with_the_field_named() {
    let error = |link: &str| {
        Scenario::from_toml_str(&scenario_text(link, r#"cc = "cubic""#, "1s"))
            .unwrap_err()
            .to_string()
    };
    let message = error("delay = \"10ms\"\ndelay_on = \"sideways\"");
    assert!(
        message.contains("delay_on") && message.contains("sideways"),
        "{message}"
    );
    let message = error("delay = \"10ms\"\ndelay_on = \"forward\"\nreverse = { delay = \"5ms\" }");
    assert!(
        message.contains("links.bn.reverse.delay") && message.contains("5ms"),
        "{message}"
    );
    let message =
        error("delay = \"0ms\"\ndelay_on = \"forward\"\nqueue = { kind = \"packets\", packets = 10 }");
    assert!(message.contains("links.bn.delay_on"), "{message}");
}

fn bulk(loss: &str) -> (RunResult, f64) {
    let link = format!("delay = \"10ms\"\nloss = {loss}\nreverse = {{ loss = {{ kind = \"none\" }} }}");
    let mut engine = Engine::new(scenario(&link, r#"cc = "cubic""#, "20s")).unwrap();
    let end = engine.end();
    engine.run_until(end).unwrap();
    let stats = engine.link_stats("bn", Direction::Forward).unwrap();
    #[allow(clippy::cast_precision_loss)]
    let rate = stats.dropped_loss.packets as f64 / stats.offered.packets as f64;
    (engine.finish().result, rate)
}

#[test]
fn burst_loss_keeps_the_rate_and_costs_a_loss_based_flow_less() {
    let (random, random_rate) = bulk(r#"{ kind = "bernoulli", p = 0.01 }"#);
    let (bursts, burst_rate) = bulk(r#"{ kind = "burst", p = 0.01, burst = 10 }"#);
    // Both lose ≈ 1 % of what reaches the loss stage. ≈ 20,000 packets are offered (10 Mbit/s for 20 s);
    // Bernoulli: σ of the rate √(0.01 · 0.99 / 20,000) ≈ 0.07 %; bursts of 10: ≈ 20 events, σ of the count
    // ≈ √20 ≈ 4.5, i.e. 22 % of the rate: allow ± 0.3 % and ± 0.6 % (≈ 4 and 2.7 σ) around 1 %. The sender
    // offers less with Bernoulli loss (CUBIC backs off ten times as often), which does not change the rate.
    assert!((random_rate - 0.01).abs() < 0.003, "Bernoulli: {random_rate}");
    assert!((burst_rate - 0.01).abs() < 0.006, "bursts: {burst_rate}");
    // A burst is one congestion event (one window reduction per round trip), so at the same rate CUBIC
    // sees ten times fewer events: by Mathis (rate ∝ 1/√events) ≈ √10 ≈ 3 × the goodput, capped by the link.
    let g = |r: &RunResult| r.flows[0].goodput_bps.unwrap();
    assert!(
        g(&bursts) > 1.5 * g(&random),
        "bursts {} vs random {}",
        g(&bursts),
        g(&random)
    );
}
