//! qlog over the pair harness: both sides log into in-memory buffers during a two-path transfer with loss,
//! and every record must parse, come in time order, and agree with the connection's own counters.

use std::collections::BTreeSet;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::harness::{Pair, SERVER, addr};
use super::migration::transfer_with;
use crate::cc::PathId;
use crate::proto::coding::VarInt;
use crate::proto::connection::{ConnectionStats, QlogFactory, TransportConfig};
use crate::proto::transport_params::Side;
use crate::sched::PathStatus;

const CLIENT2: &str = "10.0.1.1:5555";

/// A writer into a buffer the test keeps.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The client's and the server's logs.
#[derive(Clone, Default)]
struct Logs {
    client: Shared,
    server: Shared,
}

impl Logs {
    fn factory(&self) -> QlogFactory {
        let logs = self.clone();
        QlogFactory::new(move |ctx| {
            let w = match ctx.side {
                Side::Client => logs.client.clone(),
                Side::Server => logs.server.clone(),
            };
            Some(Box::new(w) as Box<dyn Write + Send>)
        })
    }
}

/// Splits a JSON-SEQ log into its records, each parsed (panics on anything that is not RFC 7464 JSON).
fn records(buf: &Shared) -> Vec<Value> {
    let bytes = buf.0.lock().unwrap().clone();
    assert_eq!(
        bytes.first(),
        Some(&0x1e),
        "the log starts with a record separator"
    );
    bytes
        .split(|b| *b == 0x1e)
        .skip(1)
        .map(|r| {
            assert_eq!(r.last(), Some(&b'\n'), "each record ends with a newline");
            serde_json::from_slice(r).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(r)))
        })
        .collect()
}

fn named<'a>(events: &'a [Value], name: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    events.iter().filter(move |e| e["name"] == name)
}

/// What a side's connection reported before it was dropped.
struct Expect {
    stats: ConnectionStats,
    cwnd: Vec<(PathId, u64)>,
}

fn expect(c: &mut crate::proto::connection::Connection) -> Expect {
    let cwnd = c
        .paths()
        .into_iter()
        .map(|p| (p, c.path_stats(p).unwrap().cwnd))
        .collect();
    Expect {
        stats: c.stats(),
        cwnd,
    }
}

/// Checks one side's log against its connection; returns the events.
fn check(log: &Shared, side: &str, e: &Expect) -> Vec<Value> {
    let recs = records(log);
    let header = &recs[0];
    assert_eq!(header["qlog_version"], "0.3");
    assert_eq!(header["qlog_format"], "JSON-SEQ");
    assert_eq!(header["trace"]["vantage_point"]["type"], side);
    assert_eq!(header["trace"]["common_fields"]["time_format"], "relative");
    assert!(header["trace"]["common_fields"]["ODCID"].is_string());
    let events = recs[1..].to_vec();
    let mut last = 0.0;
    for ev in &events {
        let t = ev["time"].as_f64().expect("time");
        assert!(t >= last, "{side}: time goes back from {last} to {t}: {ev}");
        last = t;
        assert!(ev["name"].as_str().is_some_and(|n| n.contains(':')), "{ev}");
        assert!(ev["data"].is_object(), "{ev}");
    }
    let sent = named(&events, "transport:packet_sent").count() as u64;
    assert_eq!(sent, e.stats.packets_sent, "{side}: packet_sent events");
    let received = named(&events, "transport:packet_received").count() as u64;
    assert_eq!(
        received, e.stats.packets_received,
        "{side}: packet_received events"
    );
    let lost = named(&events, "recovery:packet_lost").count() as u64;
    assert_eq!(lost, e.stats.packets_lost, "{side}: packet_lost events");
    for ev in named(&events, "recovery:packet_lost") {
        let trigger = ev["data"]["trigger"].as_str().unwrap();
        assert!(
            ["reordering_threshold", "time_threshold"].contains(&trigger),
            "{ev}"
        );
        assert!(ev["data"]["header"]["packet_number"].is_u64());
    }
    // Both paths carried packets, and each packet says which.
    let paths: BTreeSet<u64> = named(&events, "transport:packet_sent")
        .map(|ev| ev["data"]["header"]["path_id"].as_u64().unwrap())
        .collect();
    assert_eq!(paths, BTreeSet::from([0, 1]), "{side}: paths of the packets sent");
    // The last metrics of each path carry its final window.
    for (path, cwnd) in &e.cwnd {
        let m = named(&events, "recovery:metrics_updated")
            .filter(|ev| ev["data"]["path_id"] == u64::from(path.0))
            .last()
            .unwrap_or_else(|| panic!("{side}: no metrics for path {path:?}"));
        assert_eq!(m["data"]["congestion_window"], *cwnd, "{side}: {m}");
        assert!(m["data"]["smoothed_rtt"].as_f64().unwrap() > 0.0);
    }
    let states: Vec<&str> = named(&events, "connectivity:connection_state_updated")
        .map(|ev| ev["data"]["new"].as_str().unwrap())
        .collect();
    assert!(states.contains(&"handshake_confirmed"), "{side}: {states:?}");
    let owners: Vec<&Value> = named(&events, "transport:parameters_set")
        .map(|ev| &ev["data"]["owner"])
        .collect();
    assert_eq!(owners, ["local", "remote"], "{side}");
    for ev in named(&events, "transport:parameters_set") {
        assert_eq!(ev["data"]["initial_max_path_id"], 4, "{ev}");
    }
    let path1: Vec<&str> = named(&events, "multipath:path_updated")
        .filter(|ev| ev["data"]["path_id"] == 1)
        .map(|ev| ev["data"]["state"].as_str().unwrap())
        .collect();
    assert_eq!(path1.first(), Some(&"new"), "{side}: {path1:?}");
    assert!(path1.contains(&"validated"), "{side}: {path1:?}");
    events
}

/// The frames of every packet_sent event.
fn sent_frames(events: &[Value]) -> Vec<&Value> {
    named(events, "transport:packet_sent")
        .flat_map(|ev| ev["data"]["frames"].as_array().unwrap())
        .collect()
}

#[test]
fn qlog_of_a_two_path_transfer_with_loss_matches_the_connection() {
    let logs = Logs::default();
    let transport = TransportConfig {
        initial_max_path_id: Some(4),
        qlog: Some(logs.factory()),
        ..TransportConfig::default()
    };
    let mut p = Pair::new(None, transport, 77);
    p.client_extra_addrs.push(addr(CLIENT2));
    p.handshake();
    super::multipath::open_second_path(&mut p, Duration::from_secs(2));
    p.loss = 0.03;
    transfer_with(&mut p, 400_000, 1, |_| {});
    p.loss = 0.0;
    p.run_for(Duration::from_millis(500));
    let now = p.now;
    p.client.conn().close(now, VarInt::from_u32(7), "done".into());
    p.run_for(Duration::from_secs(3));
    let (ce, se) = (expect(p.client.conn()), expect(p.server.conn()));
    assert!(
        ce.stats.packets_lost + se.stats.packets_lost > 0,
        "the harness dropped nothing"
    );
    // Dropping the connections flushes the logs.
    drop(p);
    let client = check(&logs.client, "client", &ce);
    let server = check(&logs.server, "server", &se);

    let client_states: Vec<&str> = named(&client, "connectivity:connection_state_updated")
        .map(|ev| ev["data"]["new"].as_str().unwrap())
        .collect();
    assert_eq!(
        client_states,
        ["handshake_completed", "handshake_confirmed", "closing", "closed"]
    );
    let server_states: Vec<&str> = named(&server, "connectivity:connection_state_updated")
        .map(|ev| ev["data"]["new"].as_str().unwrap())
        .collect();
    assert!(
        server_states.ends_with(&["draining", "closed"]),
        "{server_states:?}"
    );

    // Frame details: STREAM frames with their fields, PATH_ACKs with ranges, and the close.
    let frames = sent_frames(&client);
    let stream = frames
        .iter()
        .find(|f| f["frame_type"] == "stream")
        .expect("a STREAM frame");
    for k in ["stream_id", "offset", "length"] {
        assert!(stream[k].is_u64(), "{stream}");
    }
    assert!(stream["fin"].is_boolean());
    assert!(
        frames
            .iter()
            .any(|f| f["frame_type"] == "stream" && f["fin"] == true)
    );
    let path_ack = sent_frames(&server)
        .into_iter()
        .find(|f| f["frame_type"] == "path_ack" && f["path_id"] == 1)
        .expect("a PATH_ACK for path 1");
    let ranges = path_ack["acked_ranges"].as_array().unwrap();
    assert!(!ranges.is_empty());
    for r in ranges {
        assert!(r[0].as_u64().unwrap() <= r[1].as_u64().unwrap(), "{path_ack}");
    }
    assert!(frames.iter().any(|f| f["frame_type"] == "crypto"));
    assert!(frames.iter().any(|f| f["frame_type"] == "path_challenge"));
    let close = frames
        .iter()
        .find(|f| f["frame_type"] == "connection_close")
        .expect("CONNECTION_CLOSE");
    assert_eq!(close["error_space"], "application_error");
    assert_eq!(close["reason"], "done");
    let received = named(&server, "transport:packet_received")
        .flat_map(|ev| ev["data"]["frames"].as_array().unwrap())
        .any(|f| f["frame_type"] == "connection_close" && f["error_code"] == 7);
    assert!(received, "the server logged the close it received");
}

#[test]
fn abandoned_path_is_logged_and_its_packets_count_as_lost() {
    let logs = Logs::default();
    let transport = TransportConfig {
        initial_max_path_id: Some(4),
        qlog: Some(logs.factory()),
        ..TransportConfig::default()
    };
    let mut p = Pair::new(None, transport, 78);
    p.client_extra_addrs.push(addr(CLIENT2));
    p.handshake();
    let now = p.now;
    p.client
        .conn()
        .open_path(now, Some(addr(CLIENT2)), addr(SERVER), PathStatus::Backup)
        .unwrap();
    transfer_with(&mut p, 300_000, 100_000, |p| {
        p.blackholed.push(addr(CLIENT2));
        let now = p.now;
        p.client
            .conn()
            .close_path(
                now,
                PathId(1),
                crate::proto::frame::PathAbandon::APPLICATION_ABANDON_PATH,
            )
            .unwrap();
    });
    p.run_for(Duration::from_secs(3));
    let stats = p.client.conn().stats();
    drop(p);
    let events: Vec<Value> = records(&logs.client).split_off(1);
    let path1: Vec<&str> = named(&events, "multipath:path_updated")
        .filter(|ev| ev["data"]["path_id"] == 1)
        .map(|ev| ev["data"]["state"].as_str().unwrap())
        .collect();
    assert_eq!(path1.first(), Some(&"new"));
    assert!(path1.contains(&"backup"), "{path1:?}");
    assert!(path1.ends_with(&["abandoned", "closed"]), "{path1:?}");
    let lost = named(&events, "recovery:packet_lost").count() as u64;
    assert_eq!(lost, stats.packets_lost);
    let mut last = 0.0;
    for ev in &events {
        let t = ev["time"].as_f64().unwrap();
        assert!(t >= last);
        last = t;
    }
}

#[test]
fn a_qlog_writer_that_fails_does_not_affect_the_connection() {
    struct Broken;
    impl Write for Broken {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("broken"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Err(std::io::Error::other("broken"))
        }
    }
    let transport = TransportConfig {
        qlog: Some(QlogFactory::new(|_| {
            Some(Box::new(std::io::BufWriter::with_capacity(1, Broken)))
        })),
        ..TransportConfig::default()
    };
    let mut p = Pair::new(None, transport, 79);
    p.handshake();
    transfer_with(&mut p, 200_000, 1, |_| {});
    assert!(p.client.conn().qlog.is_none() && p.server.conn().qlog.is_none());
}
