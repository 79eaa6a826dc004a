//! A peer that goes silent mid-transfer for good (every link of its flow down, never up again) is given up
//! one idle timeout after its last packet (RFC 9000 §10.1), plus at most one PTO, in virtual time: uploads
//! and downloads, over one path and over two.
//!
//! The end that sends the data keeps sending into the silence (what its windows allow, then PTO probes with
//! exponential backoff). Only its first ack-eliciting packet after the last packet it received restarts its
//! idle timer, and that packet leaves at the latest one PTO after the last receipt (its PTO timer sends it if
//! nothing else does); so the connection ends between `idle` and `idle + PTO` after the last receipt. The
//! end that receives the data sends only acknowledgements into the silence and ends one idle timeout after
//! its last receipt. Before the idle timer followed the RFC's rule, every probe restarted it and the sender
//! ended only when a backed-off PTO interval outgrew the idle timeout: about twice the idle timeout after
//! the silence.

use std::time::Duration;

use mpquic::proto::connection::Connection;
use mpquic_netsim::engine::Engine;
use mpquic_netsim::engine::paths::pto;
use mpquic_netsim::{Scenario, SimTime};

/// Idle timeout of the scenarios.
const IDLE: Duration = Duration::from_secs(3);
/// When the links go down.
const SILENCE_AT: Duration = Duration::from_secs(2);
/// The simulator is advanced in steps of this length while waiting for the close.
const STEP: Duration = Duration::from_millis(2);

/// A client with `paths` interfaces (one disjoint 20 Mbit/s / 10 ms link each) sending (`download`: receiving)
/// a bulk transfer; every link goes down for good at [`SILENCE_AT`].
fn scenario(paths: usize, download: bool) -> Scenario {
    let mut text = format!(
        r#"
[scenario]
name = "dead-peer"
duration = "20s"
sample_interval = "100ms"
seed = 5
idle_timeout = "{}s"

[nodes.client]
kind = "host"
interfaces = [{}]

[nodes.server]
kind = "host"
interfaces = [{}]
"#,
        IDLE.as_secs(),
        (0..paths)
            .map(|k| format!(r#"{{ name = "i{k}" }}"#))
            .collect::<Vec<_>>()
            .join(", "),
        (0..paths)
            .map(|k| format!(r#"{{ name = "i{k}" }}"#))
            .collect::<Vec<_>>()
            .join(", "),
    );
    for k in 0..paths {
        text.push_str(&format!(
            r#"
[links.p{k}]
between = ["client.i{k}", "server.i{k}"]
rate_bps = 20_000_000
delay = "10ms"
"#
        ));
    }
    text.push_str(&format!(
        r#"
[[flows]]
name = "f"
from = "client"
to = "server"
cc = "cubic"
direction = "{}"
paths = [{}]
"#,
        if download { "download" } else { "upload" },
        (0..paths)
            .map(|k| format!(r#"{{ route = ["p{k}"] }}"#))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    for k in 0..paths {
        text.push_str(&format!(
            r#"
[[events]]
at = "{}s"
link = "p{k}"
action = "down"
"#,
            SILENCE_AT.as_secs()
        ));
    }
    Scenario::from_toml_str(&text).unwrap()
}

/// What one end saw: its last receipt, its largest path PTO then, and when its connection closed.
#[derive(Debug, Default, Clone, Copy)]
struct End {
    packets_received: u64,
    last_rx: Duration,
    pto: Duration,
    closed: Option<Duration>,
}

impl End {
    fn observe(&mut self, now: Duration, c: Option<&Connection>) {
        let Some(c) = c else { return };
        if self.closed.is_some() {
            return;
        }
        if c.is_closed() {
            self.closed = Some(now);
            return;
        }
        let r = c.stats().packets_received;
        if r != self.packets_received {
            self.packets_received = r;
            self.last_rx = now;
            self.pto = c
                .paths()
                .into_iter()
                .filter_map(|p| c.path_stats(p))
                .map(|s| pto(&s))
                .max()
                .unwrap_or_default();
        }
    }
}

/// Runs the scenario and returns the data sender's end and the receiver's.
fn run(paths: usize, download: bool) -> (End, End) {
    let mut engine = Engine::new(scenario(paths, download)).unwrap();
    let mut client = End::default();
    let mut server = End::default();
    let mut t = Duration::ZERO;
    while t < Duration::from_secs(20) && (client.closed.is_none() || server.closed.is_none()) {
        t += STEP;
        engine.run_until(SimTime::from_duration(t)).unwrap();
        let flow = engine.flow(0).unwrap();
        client.observe(t, flow.client_connection());
        server.observe(t, flow.server_connection());
    }
    let flow = engine.flow(0).unwrap();
    assert!(
        flow.delivered() > 1_000_000,
        "the transfer did not run: {}",
        flow.delivered()
    );
    if download {
        (server, client)
    } else {
        (client, server)
    }
}

fn check(paths: usize, download: bool) {
    let (sender, receiver) = run(paths, download);
    let case = format!(
        "{paths} path(s), {}",
        if download { "download" } else { "upload" }
    );
    for (who, end) in [("sender", sender), ("receiver", receiver)] {
        let closed = end
            .closed
            .unwrap_or_else(|| panic!("{case}: the {who} never closed: {end:?}"));
        assert!(
            end.last_rx >= SILENCE_AT && end.last_rx <= SILENCE_AT + Duration::from_millis(100),
            "{case}: {who} {end:?}"
        );
        let waited = closed - end.last_rx;
        eprintln!(
            "{case}: the {who} closed {waited:?} after its last receipt (PTO {:?})",
            end.pto
        );
        // Observed every STEP: the close and the last receipt are known to within one step each.
        assert!(
            waited + STEP >= IDLE && waited <= IDLE + end.pto + STEP,
            "{case}: the {who} closed {waited:?} after its last receipt (idle {IDLE:?}, PTO {:?})",
            end.pto
        );
    }
}

#[test]
fn a_dead_peer_is_given_up_within_idle_plus_one_pto_single_path_upload() {
    check(1, false);
}

#[test]
fn a_dead_peer_is_given_up_within_idle_plus_one_pto_single_path_download() {
    check(1, true);
}

#[test]
fn a_dead_peer_is_given_up_within_idle_plus_one_pto_multipath_upload() {
    check(2, false);
}

#[test]
fn a_dead_peer_is_given_up_within_idle_plus_one_pto_multipath_download() {
    check(2, true);
}

/// `scenario.idle_timeout` is 0 (none) or within [1 ms, 1 h]; other values are rejected with the field and
/// the value named.
#[test]
fn idle_timeout_out_of_range_is_rejected() {
    let text = |idle: &str| {
        let s = scenario(1, false);
        toml::to_string(&s)
            .unwrap()
            .replace(r#"idle_timeout = "3s""#, &format!(r#"idle_timeout = "{idle}""#))
    };
    for ok in ["0", "1ms", "30s", "3600s"] {
        let s = Scenario::from_toml_str(&text(ok)).unwrap();
        assert_eq!(
            s.scenario.idle_timeout,
            mpquic_netsim::units::parse_duration(ok).unwrap()
        );
    }
    for bad in ["500us", "3601s"] {
        let err = Scenario::from_toml_str(&text(bad)).unwrap_err().to_string();
        assert!(
            err.contains("scenario.idle_timeout") && err.contains("out of range"),
            "{bad}: {err}"
        );
    }
}
