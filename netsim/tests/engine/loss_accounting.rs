//! Loss accounting against the network's own counters: every packet a bottleneck drops is one packet a
//! sender declares lost, and the run's results report both sides.
//!
//! Two single-path flows of 3 MB each (CUBIC and NewReno) share a 20 Mbit/s / 10 ms bottleneck with a short
//! drop-tail queue (half a bandwidth-delay product) and 0.5 % random loss in the data direction; the access
//! links are ten times faster and never drop, and nothing reorders packets. Both flows complete, so every
//! drop has been detected by the end (a transfer completes only once its lost data was sent again and
//! acknowledged). Without reordering no loss is declared spuriously, so the senders' lost packets (the
//! flows' retransmissions) must equal the bottleneck's drops (queue full plus random loss) exactly.

use mpquic_netsim::engine::Engine;
use mpquic_netsim::scenario::Direction;
use mpquic_netsim::{Scenario, SimTime};

const TEXT: &str = r#"
[scenario]
name = "loss_accounting"
duration = "30s"
seed = 5
crypto = "null"

[nodes.c1]
kind = "host"
interfaces = [{ name = "eth0", address = "10.0.1.1" }]

[nodes.c2]
kind = "host"
interfaces = [{ name = "eth0", address = "10.0.2.1" }]

[nodes.r1]
kind = "router"

[nodes.server]
kind = "host"
interfaces = [{ name = "eth0", address = "10.0.9.1" }]

[links.a1]
between = ["c1.eth0", "r1"]
rate_bps = 200_000_000
delay = "0"
queue = { kind = "packets", packets = 10000 }

[links.a2]
between = ["c2.eth0", "r1"]
rate_bps = 200_000_000
delay = "0"
queue = { kind = "packets", packets = 10000 }

[links.bn]
between = ["r1", "server.eth0"]
rate_bps = 20_000_000
delay = "10ms"
loss = { kind = "bernoulli", p = 0.005 }
queue = { kind = "bdp", multiple = 0.5 }
reverse = { loss = { kind = "none" } }

[[flows]]
name = "a"
from = "c1"
to = "server"
cc = "cubic"
bytes = 3_000_000
paths = [{ route = ["a1", "bn"] }]

[[flows]]
name = "b"
from = "c2"
to = "server"
cc = "newreno"
bytes = 3_000_000
paths = [{ route = ["a2", "bn"] }]
"#;

#[test]
fn declared_losses_are_the_bottleneck_drops_and_events_group_them() {
    let s = Scenario::from_toml_str(TEXT).unwrap();
    let mut e = Engine::new(s).unwrap();
    e.run_until(SimTime::from_duration(std::time::Duration::from_secs(30)))
        .unwrap();
    assert!(e.flow(0).unwrap().completed_at().is_some(), "flow a incomplete");
    assert!(e.flow(1).unwrap().completed_at().is_some(), "flow b incomplete");
    let bn = *e.link_stats("bn", Direction::Forward).unwrap();
    let out = e.finish();
    let r = &out.result;
    let [a, b] = [&r.flows[0], &r.flows[1]];
    let declared = a.retransmissions + b.retransmissions;
    // Both kinds of drop happened, and the senders declared exactly these packets lost.
    assert!(
        bn.dropped_queue_full.packets > 0 && bn.dropped_loss.packets > 0,
        "{bn:?}"
    );
    assert_eq!(declared, bn.dropped_queue_full.packets + bn.dropped_loss.packets);
    // The results' bottleneck entry carries the link's counters.
    assert_eq!(r.bottlenecks.len(), 1);
    assert_eq!(r.bottlenecks[0].dropped_queue_full, bn.dropped_queue_full.packets);
    assert_eq!(r.bottlenecks[0].dropped_loss, bn.dropped_loss.packets);
    // Congestion events: at least one per flow, never more than its lost packets, and fewer in all (a
    // queue overflow loses several packets of a window at once).
    for f in [a, b] {
        assert!((1..=f.retransmissions).contains(&f.congestion_events), "{f:?}");
    }
    assert!(a.congestion_events + b.congestion_events < declared);
}
