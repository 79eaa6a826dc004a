//! The engine: real mpquic connections over simulated links.
//!
//! Quick by design (CI runs them at opt-level 1): small rates, short durations.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use mpquic_netsim::engine::Engine;
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

#[test]
fn smoke() {
    let s = dumbbell(
        20_000_000,
        10,
        r#"{ kind = "bdp", multiple = 1.0 }"#,
        2.0,
        &["cubic"],
    );
    let out = Engine::run(s).unwrap();
    println!("{:?}", out.stats);
    println!("{}", mpquic_netsim::output::table::summary(&out.result));
    let _ = (Direction::Forward, SimTime::ZERO);
}
