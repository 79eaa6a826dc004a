//! The pacer's cap on its bucket at high rates (`pacer_max_burst` on a flow, mpquic's
//! `RecoveryConfig::pacer_max_burst_packets`): after an idle period a capped sender opens with a burst small
//! enough for a short drop-tail queue, an uncapped one overflows it.
//!
//! Set-up: the client reaches the server through a 10 Gbit/s access link and a 1 Gbit/s / 1 ms bottleneck
//! whose drop-tail queue holds 40 packets; it uploads objects of 512 KiB one after the other with 20 ms of
//! think time between them (the `requests` workload), so that every object starts with a full bucket.
//!
//! Why an opening burst overflows without the cap and not with it (1200-byte datagrams, 1228 bytes on the
//! wire):
//! - the bottleneck serves one packet in 1228 · 8 / 10^9 s = 9.8 µs while the access link delivers one in
//!   0.98 µs, so a burst of `b` packets leaves `b − ⌈b/10⌉` of them queued when its last one arrives;
//! - without the cap the bucket holds `rate · 1 ms` = 1.25 · cwnd · 1 ms / srtt ≈ 0.62 · cwnd (srtt ≈
//!   2.02 ms on an idle bottleneck): more than 44 packets, which queue more than 40, whenever cwnd exceeds
//!   71 packets, well below the path's BDP + queue (1 Gbit/s · 2 ms / 1228 B ≈ 204 packets, + 40);
//! - with a cap of 32 packets, which applies from the path's first congestion event on (the slow start of
//!   the first object overflows the queue), the bucket holds max(32 packets, cwnd/16), and cwnd/16 > 32
//!   packets would need cwnd > 512 packets, twice BDP + queue: the burst is at most 32 packets, of which at
//!   most 32 − 4 = 28 are queued (< 40), so an opening burst loses nothing.
//!
//! What is left are the drops of a window above BDP + queue, which pacing does not prevent (the rate is
//! 1.25 · cwnd / srtt): the second object starts with the window slow start left behind, and CUBIC takes a
//! few objects to bring it down. The run is deterministic; over objects 3 to 10 the bottleneck drops 52
//! packets without the cap (37 in object 3, 14 in object 4, 1 in object 6) and 4 with it (all in object
//! 3); objects 1 and 2 drop 224 packets without the cap and 98 with it.

use mpquic_netsim::engine::Engine;
use mpquic_netsim::scenario::Direction;
use mpquic_netsim::{Scenario, SimTime};

/// The set-up above with `count` objects and `pacer_max_burst = cap`.
fn scenario(count: u32, cap: u32) -> Scenario {
    let text = format!(
        r#"
[scenario]
name = "pacing"
duration = "3s"
sample_interval = "100ms"
seed = 7

[nodes.r1]
kind = "router"
[nodes.c]
kind = "host"
interfaces = [{{ name = "eth0" }}]
[nodes.s]
kind = "host"
interfaces = [{{ name = "eth0" }}]

[links.a]
between = ["c.eth0", "r1"]
rate_bps = 10_000_000_000
delay = "0"
queue = {{ kind = "packets", packets = 100000 }}

[links.bn]
between = ["r1", "s.eth0"]
rate_bps = 1_000_000_000
delay = "1ms"
queue = {{ kind = "packets", packets = 40 }}

[[flows]]
name = "f"
kind = "requests"
requests = {{ sizes = ["512KiB"], gap = "20ms", count = {count} }}
from = "c"
to = "s"
cc = "cubic"
pacer_max_burst = {cap}
paths = [{{ route = ["a", "bn"] }}]
"#
    );
    Scenario::from_toml_str(&text).unwrap()
}

/// Packets the bottleneck's queue dropped in a run of `count` objects, which must all complete.
fn queue_drops(count: u32, cap: u32) -> u64 {
    let mut engine = Engine::new(scenario(count, cap)).unwrap();
    let end = engine.end();
    let mut t = SimTime::ZERO;
    while engine.flow(0).unwrap().completed_at().is_none() && t < end {
        t = t.saturating_add(std::time::Duration::from_millis(50));
        engine.run_until(t).unwrap();
    }
    assert!(
        engine.flow(0).unwrap().completed_at().is_some(),
        "{count} objects did not complete (cap {cap})"
    );
    engine
        .link_stats("bn", Direction::Forward)
        .unwrap()
        .dropped_queue_full
        .packets
}

/// Drops during objects 3 to 10: a run of 10 objects minus a run of 2 (same seed, so the same first two).
fn drops_after_warm_up(cap: u32) -> u64 {
    let two = queue_drops(2, cap);
    let ten = queue_drops(10, cap);
    assert!(ten >= two);
    ten - two
}

#[test]
fn the_cap_keeps_the_opening_burst_within_a_short_queue() {
    let capped = drops_after_warm_up(32);
    let uncapped = drops_after_warm_up(0);
    // 52 and 4 drops (see the module documentation): a tenth is a margin, not a measurement.
    assert!(uncapped >= 40, "uncapped: {uncapped} drops");
    assert!(capped * 10 <= uncapped, "capped: {capped}, uncapped: {uncapped}");
}

#[test]
fn the_cap_is_off_in_the_simulator_unless_a_flow_asks() {
    let plain = Scenario::from_toml_str(&one_link_flow("")).unwrap();
    assert_eq!(plain.flows[0].pacer_max_burst, 0);
    let max = Scenario::from_toml_str(&one_link_flow("pacer_max_burst = 65536")).unwrap();
    assert_eq!(max.flows[0].pacer_max_burst, 65_536);
    // Out of range: the error names the field and the value.
    let e = Scenario::from_toml_str(&one_link_flow("pacer_max_burst = 65537"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("flows[0].pacer_max_burst") && e.contains("65537"),
        "{e}"
    );
}

/// A one-link scenario whose flow carries `key` (a line of TOML, or nothing).
fn one_link_flow(key: &str) -> String {
    format!(
        r#"
[scenario]
name = "pacing"
duration = "1s"

[nodes.c]
kind = "host"
interfaces = [{{ name = "eth0" }}]
[nodes.s]
kind = "host"
interfaces = [{{ name = "eth0" }}]

[links.bn]
between = ["c.eth0", "s.eth0"]
rate_bps = 1_000_000_000
delay = "1ms"

[[flows]]
name = "f"
from = "c"
to = "s"
cc = "cubic"
{key}
paths = [{{ route = ["bn"] }}]
"#
    )
}
