//! Tunnel flows: inner connections carried as DATAGRAMs of an outer multipath connection.

use mpquic_netsim::Scenario;
use mpquic_netsim::engine::Engine;
use mpquic_netsim::scenario::Direction;

/// Two disjoint 20 Mbit/s / 10 ms paths; path 2 loses `loss` of the packets in both directions; one tunnel
/// flow with outer controller `outer`, scheduler `sched` and the inner flows `inner` (TOML array).
fn tunnel(loss: f64, outer: &str, sched: &str, inner: &str, duration_s: u32) -> Scenario {
    Scenario::from_toml_str(&tunnel_text(loss, outer, sched, inner, duration_s)).unwrap()
}

/// The text of [`tunnel`].
fn tunnel_text(loss: f64, outer: &str, sched: &str, inner: &str, duration_s: u32) -> String {
    format!(
        r#"
[scenario]
name = "tunnel"
duration = "{duration_s}s"
seed = 3
crypto = "null"

[nodes.client]
kind = "host"
interfaces = [{{ name = "a" }}, {{ name = "b" }}]

[nodes.server]
kind = "host"
interfaces = [{{ name = "a" }}, {{ name = "b" }}]

[links.p1]
between = ["client.a", "server.a"]
rate_bps = 20_000_000
delay = "10ms"

[links.p2]
between = ["client.b", "server.b"]
rate_bps = 20_000_000
delay = "10ms"
loss = {{ kind = "bernoulli", p = {loss} }}

[[flows]]
name = "tun"
from = "client"
to = "server"
cc = "{outer}"
sched = "{sched}"
paths = [{{ route = ["p1"] }}, {{ route = ["p2"] }}]

[flows.tunnel]
inner = {inner}
"#
    )
}

/// Every inner byte arrives intact across a lossy path: two inner flows (CUBIC and BBR, 1 MB each) through
/// an uncontrolled tunnel whose second path loses 3 % both ways. The receivers check every byte against the
/// sender's pattern (a mismatch fails the run with `EngineError::Corrupted`), so completing means each inner
/// connection delivered exactly its 1 MB up to its FIN; the outer connection never retransmits a
/// DATAGRAM, so the losses must show up as the inner senders' retransmissions.
#[test]
fn a_tunnel_flow_carries_every_inner_byte_intact_across_path_loss() {
    let inner =
        r#"[{ name = "a", cc = "cubic", bytes = 1_000_000 }, { name = "b", cc = "bbr", bytes = 1_000_000 }]"#;
    let s = tunnel(0.03, "none", "weighted:0=1,1=1", inner, 20);
    let mut engine = Engine::new(s).unwrap();
    engine
        .run_until(mpquic_netsim::SimTime::from_duration(
            std::time::Duration::from_secs(20),
        ))
        .unwrap();
    let flow = engine.flow(0).unwrap();
    let t = flow.tunnel().unwrap();
    assert_eq!(t.inner_read(), [("a", 1_000_000), ("b", 1_000_000)]);
    assert_eq!(t.inner_fin(), [Some(1_000_000), Some(1_000_000)]);
    assert!(flow.completed_at().is_some());
    assert_eq!(flow.delivered(), 2_000_000);
    let stats = t.stats();
    assert_eq!(stats.malformed, 0);
    // ≈ 2 × 1 MB / 1200 B ≈ 1700 data packets, half of them over path 2: ≈ 25 lost at 3 %.
    assert!(stats.encapsulated[0] > 1700, "{stats:?}");
    let lost: u64 = t
        .inner_senders()
        .iter()
        .map(|c| c.unwrap().stats().packets_lost)
        .sum();
    assert!(lost >= 10, "inner senders declared only {lost} packets lost");
    let p2 = engine.link_stats("p2", Direction::Forward).unwrap();
    assert!(p2.dropped_loss.packets >= 10, "{p2:?}");
    // The reorder buffer gave up the lost packets' gaps by the hold (300 ms) or released them late.
    assert!(stats.reorder[0].skipped_timeout > 0, "{stats:?}");
    // The inner senders' congestion events: at least one (losses on path 2), at most one per lost packet.
    let events: u64 = t
        .inner_senders()
        .iter()
        .map(|c| c.unwrap().stats().congestion_events)
        .sum();
    assert!((1..=lost).contains(&events), "{events} events, {lost} lost");
    let out = engine.finish();
    let r = &out.result.flows[0];
    assert_eq!(r.delivered_bytes, 2_000_000);
    assert_eq!(r.retransmissions, lost);
    assert_eq!(r.congestion_events, events);
    // The results carry the tunnel's own counters, direction by direction.
    let tr = r.tunnel.as_ref().unwrap();
    assert_eq!((tr.refused, tr.malformed), (stats.refused, 0));
    assert_eq!(tr.to_server.encapsulated, stats.encapsulated[0]);
    assert_eq!(tr.to_client.encapsulated, stats.encapsulated[1]);
    assert_eq!(tr.to_server.reorder, stats.reorder[0]);
    assert_eq!(tr.to_client.reorder, stats.reorder[1]);
    // Both inner flows, each with its sender's RTTs: both paths are 10 ms each way, so no round trip is
    // shorter than 20 ms.
    let names: Vec<_> = tr.inner.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    for i in &tr.inner {
        let (min, srtt) = (i.min_rtt_ms.unwrap(), i.srtt_ms.unwrap());
        assert!((20.0..100.0).contains(&min) && min <= srtt, "{i:?}");
        assert!(i.cc_state.is_some() && i.cc["cwnd"] >= 2400.0, "{i:?}");
    }
    // BBR reports its minimum-RTT estimate (seconds), which no sample can undercut.
    assert!(tr.inner[1].cc["rt_prop"] >= tr.inner[1].min_rtt_ms.unwrap() / 1e3 - 1e-9);
    let json = serde_json::to_value(r).unwrap();
    assert_eq!(
        json["tunnel"]["to_server"]["skipped_timeout"],
        stats.reorder[0].skipped_timeout
    );
}

/// Static weights split the outer packets by hand-computed counts. With `weighted:0=3,1=1` smooth weighted
/// round-robin sends, of every 4 consecutive decisions while both paths can send, 3 on path 0 and 1 on path
/// 1; the uncontrolled outer connection always can. The forward packets are the DATAGRAM packets plus a few
/// the scheduler does not place (the handshake's on path 0; path 1's validation), so path 0 carries 3/4 of
/// them within a handful: measured against N = all forward packets, |p0 − 3N/4| ≤ 15.
#[test]
fn static_weights_split_the_tunnel_packets_three_to_one() {
    let inner = r#"[{ name = "a", cc = "cubic", bytes = 1_000_000 }]"#;
    let s = tunnel(0.0, "none", "weighted:0=3,1=1", inner, 5);
    let out = Engine::new(s).map(|mut e| {
        e.run_until(mpquic_netsim::SimTime::from_duration(
            std::time::Duration::from_secs(5),
        ))
        .unwrap();
        let p0 = e.link_stats("p1", Direction::Forward).unwrap().offered.packets;
        let p1 = e.link_stats("p2", Direction::Forward).unwrap().offered.packets;
        (p0, p1, e.flow(0).unwrap().tunnel().unwrap().inner_fin())
    });
    let (p0, p1, fin) = out.unwrap();
    assert_eq!(fin, [Some(1_000_000)]);
    let n = p0 + p1;
    // 1 MB / ≈ 1170 B per inner packet ≈ 855 data packets, plus the inner handshake.
    assert!(n > 850, "{p0} + {p1}");
    let expected = 3 * n / 4;
    assert!(
        p0.abs_diff(expected) <= 15,
        "path 0 {p0} packets, expected ≈ {expected} of {n}"
    );
}

/// With an outer controller (LIA) and minRTT the tunnel still delivers everything, and losses on path 2 no
/// longer come from the outer window: the outer connection slows down path 2 itself.
#[test]
fn a_tunnel_with_an_outer_controller_delivers_everything() {
    let inner = r#"[{ name = "a", cc = "cubic", bytes = 1_000_000 }]"#;
    let s = tunnel(0.02, "lia", "minrtt", inner, 10);
    let out = Engine::run(s).unwrap();
    assert_eq!(out.result.flows[0].delivered_bytes, 1_000_000);
}

/// Scenario errors name the tunnel's fields.
#[test]
fn bad_tunnel_keys_are_named() {
    let text = tunnel_text(0.0, "none", "weighted", r#"[{ name = "a", cc = "cubic" }]"#, 1);
    Scenario::from_toml_str(&text).unwrap();
    let bad = text.replace("[flows.tunnel]", "[flows.tunnel]\nreorder_window = 70000");
    let err = Scenario::from_toml_str(&bad).unwrap_err();
    assert_eq!(err.field(), Some("flows[0].tunnel.reorder_window"), "{err}");
    let bad = text.replace("[flows.tunnel]", "[flows.tunnel]\nreorder_hold = \"0s\"");
    let err = Scenario::from_toml_str(&bad).unwrap_err();
    assert_eq!(err.field(), Some("flows[0].tunnel.reorder_hold"), "{err}");
    let bad = text.replace(
        "[flows.tunnel]",
        "receiver = { read_rate = \"1Mbit/s\" }\n[flows.tunnel]",
    );
    let err = Scenario::from_toml_str(&bad).unwrap_err();
    assert_eq!(err.field(), Some("flows[0].tunnel"), "{err}");
    // `cc = "none"` is for tunnel flows only.
    let end = text.find("[flows.tunnel]").unwrap();
    let err = Scenario::from_toml_str(&text[..end]).unwrap_err();
    assert_eq!(err.field(), Some("flows[0].cc"), "{err}");
}

/// Why BBR collapses through the uncontrolled tunnel when path 2 is much slower: path 1 10 ms and path 2
/// 50 ms one way, weights 1:1, 100 Mbit/s each. Every data packet that the reorder buffer releases waits
/// for the slow path, so the inner RTT of the flow is 50 ms plus 10 or 50 ms for the acknowledgement (half of
/// them cross path 2, and the client's reorder buffer makes the others wait for them); but a sample taken when the path-1 half of a pair needs no wait (the first packets, or an
/// acknowledgement that overtakes nothing) measures ≈ 2 × 10 ms, and BBR keeps the minimum as its
/// propagation delay for 10 s. Its window, 2 × bandwidth × rt_prop, then covers only ≈ 40 % of the real
/// RTT, each round delivers less than the last estimate, and the bandwidth estimate decays. Checked: the
/// inner BBR's rt_prop stays below 25 ms while its smoothed RTT is above 60 ms and 2.5 × rt_prop, and the
/// flow carries under 10 % of the pair in its last 4 s (measured: rt_prop 20.1 ms, smoothed RTT 73.1 ms,
/// 1.5 Mbit/s).
#[test]
fn bbr_underestimates_the_round_trip_through_a_tunnel_with_unequal_paths() {
    let text = tunnel_text(
        0.0,
        "none",
        "weighted:0=1,1=1",
        r#"[{ name = "a", cc = "bbr" }]"#,
        8,
    )
    .replace("rate_bps = 20_000_000", "rate_bps = 100_000_000")
    .replacen(
        "[links.p2]\nbetween = [\"client.b\", \"server.b\"]\nrate_bps = 100_000_000\ndelay = \"10ms\"",
        "[links.p2]\nbetween = [\"client.b\", \"server.b\"]\nrate_bps = 100_000_000\ndelay = \"50ms\"",
        1,
    );
    assert!(text.contains("delay = \"50ms\""));
    let mut e = Engine::new(Scenario::from_toml_str(&text).unwrap()).unwrap();
    let at = |s| mpquic_netsim::SimTime::from_duration(std::time::Duration::from_secs(s));
    e.run_until(at(4)).unwrap();
    let before = e.delivered(0).unwrap();
    e.run_until(at(8)).unwrap();
    let after = e.delivered(0).unwrap();
    let t = e.flow(0).unwrap().tunnel().unwrap();
    let conn = t.inner_senders()[0].unwrap();
    let path = conn.path_stats(conn.paths()[0]).unwrap();
    let m = path.cc.as_ref().unwrap();
    // BBR reports rt_prop in seconds.
    let rt_prop_ms = m.extra("rt_prop").unwrap() * 1000.0;
    assert!(rt_prop_ms > 0.0 && rt_prop_ms < 25.0, "rt_prop {rt_prop_ms} ms");
    let srtt_ms = path.srtt.as_secs_f64() * 1000.0;
    assert!(
        srtt_ms > 60.0 && srtt_ms > 2.5 * rt_prop_ms,
        "srtt {srtt_ms} ms, rt_prop {rt_prop_ms} ms"
    );
    let mbps = (after - before) as f64 * 8.0 / 4.0 / 1e6;
    assert!(mbps < 20.0, "{mbps} Mbit/s in the last 4 s");
}
