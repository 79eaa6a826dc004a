//! Path MTU discovery over simulated links with an MTU (`mtu` on a link, `mtu_discovery = true` on the
//! flow): each path settles at the largest size the search reaches under its link's MTU, each path of a
//! multipath flow at its own, and a link whose MTU shrinks mid-transfer (a black hole) is detected, the path
//! falls back to 1200 bytes and searches again, and every byte arrives (the receiver checks the pattern).
//!
//! A link's `mtu` counts the IP packet: UDP payload + 28 bytes of IPv4 and UDP headers. So `mtu = 1428`
//! carries UDP payloads up to 1400 bytes and `mtu = 1308` up to 1280.
//!
//! The sizes the search reaches (upper bound 1452, binary search between the largest acknowledged size `lo`
//! and the smallest failed one `hi`, next = lo + (hi − lo)/2, done when fewer than 20 sizes remain untested):
//! - payload ≤ 1400: 1452 ✗, 1326 ✓, 1389 ✓, 1420 ✗, 1404 ✗ (1403 − 1389 = 14 < 20): **1389**;
//! - payload ≤ 1280: 1452 ✗, 1326 ✗, 1263 ✓, 1294 ✗, 1278 ✓ (1293 − 1278 = 15 < 20): **1278**;
//! - no limit: 1452 ✓ at once: **1452**.

use mpquic::cc::PathId;
use mpquic::proto::connection::Connection;
use mpquic_netsim::engine::Engine;
use mpquic_netsim::scenario::Direction;
use mpquic_netsim::{Scenario, SimTime};

/// A client and a server joined by one 20 Mbit/s / 10 ms link per entry of `mtus` (its `mtu`, if any), a
/// flow of `bytes` over all of them with discovery on (`discovery`), and `events` appended as written.
fn scenario(mtus: &[Option<u32>], bytes: u64, discovery: bool, events: &str) -> Scenario {
    let ifaces = (0..mtus.len())
        .map(|k| format!(r#"{{ name = "i{k}" }}"#))
        .collect::<Vec<_>>()
        .join(", ");
    let mut text = format!(
        r#"
[scenario]
name = "pmtud"
duration = "30s"
sample_interval = "100ms"
seed = 11

[nodes.client]
kind = "host"
interfaces = [{ifaces}]

[nodes.server]
kind = "host"
interfaces = [{ifaces}]
"#
    );
    for (k, mtu) in mtus.iter().enumerate() {
        let mtu = mtu.map(|m| format!("mtu = {m}\n")).unwrap_or_default();
        text.push_str(&format!(
            r#"
[links.p{k}]
between = ["client.i{k}", "server.i{k}"]
rate_bps = 20_000_000
delay = "10ms"
{mtu}"#
        ));
    }
    let paths = (0..mtus.len())
        .map(|k| format!(r#"{{ route = ["p{k}"] }}"#))
        .collect::<Vec<_>>()
        .join(", ");
    text.push_str(&format!(
        r#"
[[flows]]
name = "f"
from = "client"
to = "server"
cc = "cubic"
bytes = {bytes}
mtu_discovery = {discovery}
paths = [{paths}]
{events}"#
    ));
    Scenario::from_toml_str(&text).unwrap()
}

fn mtu(c: Option<&Connection>, path: u32) -> u16 {
    c.and_then(|c| c.path_stats(PathId(path))).map_or(0, |s| s.mtu)
}

/// Runs until the flow completes (at most the scenario's 30 s) and checks every byte arrived.
fn run_to_completion(s: Scenario, bytes: u64) -> Engine {
    let mut engine = Engine::new(s).unwrap();
    let mut t = SimTime::ZERO;
    while engine.flow(0).unwrap().completed_at().is_none() && t < engine.end() {
        t = t.saturating_add(std::time::Duration::from_millis(100));
        engine.run_until(t).unwrap();
    }
    let flow = engine.flow(0).unwrap();
    assert!(
        flow.completed_at().is_some(),
        "the flow did not complete: {} B",
        flow.delivered()
    );
    assert_eq!(flow.delivered(), bytes);
    engine
}

#[test]
fn a_path_of_1400_bytes_settles_at_1389_on_both_ends() {
    let bytes = 5_000_000;
    let engine = run_to_completion(scenario(&[Some(1428)], bytes, true, ""), bytes);
    let flow = engine.flow(0).unwrap();
    assert_eq!(mtu(flow.client_connection(), 0), 1389);
    assert_eq!(mtu(flow.server_connection(), 0), 1389);
    // The failed probes (1452, 1420 and 1404, three of each) were dropped by the link, in each direction.
    let dropped = |d| engine.link_stats("p0", d).unwrap().dropped_too_large.packets;
    assert_eq!(dropped(Direction::Forward), 9);
    assert_eq!(dropped(Direction::Reverse), 9);
    assert_eq!(flow.client_connection().unwrap().stats().mtu_black_holes, 0);
}

#[test]
fn without_discovery_the_path_stays_at_1200() {
    let bytes = 1_000_000;
    let engine = run_to_completion(scenario(&[Some(1428)], bytes, false, ""), bytes);
    let flow = engine.flow(0).unwrap();
    assert_eq!(mtu(flow.client_connection(), 0), 1200);
    assert_eq!(
        engine
            .link_stats("p0", Direction::Forward)
            .unwrap()
            .dropped_too_large
            .packets,
        0
    );
}

#[test]
fn each_path_of_a_multipath_flow_settles_at_its_own_mtu() {
    let bytes = 8_000_000;
    let engine = run_to_completion(scenario(&[Some(1428), Some(1308)], bytes, true, ""), bytes);
    let flow = engine.flow(0).unwrap();
    for c in [flow.client_connection(), flow.server_connection()] {
        assert_eq!(mtu(c, 0), 1389);
        assert_eq!(mtu(c, 1), 1278);
    }
}

#[test]
fn a_black_hole_mid_transfer_falls_back_and_searches_again() {
    // 20 MB at 20 Mbit/s take about 8 s; the link's MTU drops from none to 1308 (UDP payload 1280) at 2 s,
    // while 1452-byte packets flow.
    let bytes = 20_000_000;
    let events = r#"
[[events]]
at = "2s"
link = "p0"
action = "set"
set = { mtu = 1308 }
"#;
    let mut engine = Engine::new(scenario(&[None], bytes, true, events)).unwrap();
    engine
        .run_until(SimTime::from_duration(std::time::Duration::from_millis(1900)))
        .unwrap();
    let flow = engine.flow(0).unwrap();
    assert_eq!(mtu(flow.client_connection(), 0), 1452, "before the black hole");
    let mut t = engine.now();
    while engine.flow(0).unwrap().completed_at().is_none() && t < engine.end() {
        t = t.saturating_add(std::time::Duration::from_millis(100));
        engine.run_until(t).unwrap();
    }
    let flow = engine.flow(0).unwrap();
    assert!(
        flow.completed_at().is_some(),
        "the flow did not complete: {} B",
        flow.delivered()
    );
    assert_eq!(flow.delivered(), bytes);
    eprintln!(
        "black hole at 2 s: flow complete at {:?}, {} packets lost",
        flow.completed_at(),
        flow.lost_packets()
    );
    let client = flow.client_connection().unwrap();
    assert!(!client.is_closed(), "the connection survived");
    assert_eq!(client.stats().mtu_black_holes, 1);
    assert_eq!(
        mtu(flow.client_connection(), 0),
        1278,
        "searched again under the new MTU"
    );
}
