//! Receive windows and receiver statistics over the pair harness: with every window policy and a slow
//! (then stalled) reader on a lossy link, the sender stays within the advertised limits, the receiver never
//! buffers more than it advertised, and the limits never decrease; the `mpquic:reassembly_updated` qlog
//! event carries the connection's own figures, rate-bounded.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;

use super::harness::Pair;
use super::transfer::{pattern, sha};
use crate::proto::connection::{QlogFactory, TransportConfig};
use crate::proto::streams::{ReassemblyStats, StreamId, StreamsConfig, WindowPolicy};
use crate::proto::transport_params::Side;

const KIB: u64 = 1024;

/// What the receiving side has seen so far.
#[derive(Default)]
struct Receiver {
    id: Option<StreamId>,
    data: Vec<u8>,
    fin: bool,
    /// The stream and connection limits last seen.
    limits: (u64, u64),
}

/// The server reads at most `budget` bytes of the client's stream now, then checks the flow-control
/// invariants: limits never decrease, nothing is buffered beyond them, and without a read no new credit.
fn read_and_check(p: &mut Pair, r: &mut Receiver, budget: usize) {
    if p.server.conns.len() != 1 {
        return;
    }
    let now = p.now;
    let events = format!("{:?}", p.server.events);
    let conn = p.server.conn();
    assert!(!conn.is_closed(), "the server closed the connection: {events}");
    if r.id.is_none() {
        r.id = conn.accept_uni();
    }
    let Some(id) = r.id else { return };
    let mut left = budget;
    let before = r.data.len();
    while left > 0 && !r.fin {
        match conn.read(id, left, now) {
            Ok(Some(b)) => {
                left -= b.len();
                r.data.extend_from_slice(&b);
            }
            Ok(None) => r.fin = true,
            Err(_) => break,
        }
    }
    if r.fin {
        return;
    }
    let streams = &conn.streams;
    let consumed = r.data.len() as u64;
    let limit = streams.recv_limit(id).unwrap_or(r.limits.0);
    let conn_limit = streams.conn_recv_limit();
    assert!(
        limit >= r.limits.0 && conn_limit >= r.limits.1,
        "a limit decreased"
    );
    if r.data.len() == before && r.limits.0 > 0 {
        assert_eq!((limit, conn_limit), r.limits, "new credit without a read");
    }
    r.limits = (limit, conn_limit);
    let buffered = streams.read_buffered(id).unwrap_or(0);
    assert!(
        buffered <= limit - consumed,
        "{buffered} buffered beyond the stream window"
    );
    assert!(
        buffered <= conn_limit - consumed,
        "{buffered} buffered beyond the connection window"
    );
}

/// Sends `size` bytes on a client stream to a server reading `rate` bytes per 10 ms, stalling for 600 ms
/// after the first 300 000 bytes; returns the server's receiver statistics.
fn slow_reader_transfer(policy: WindowPolicy, seed: u64) -> (ReassemblyStats, u64) {
    let streams = StreamsConfig {
        window_policy: policy,
        stream_window_uni: 64 * KIB,
        min_stream_window: 16 * KIB,
        max_stream_window: 512 * KIB,
        conn_window: 96 * KIB,
        min_conn_window: 16 * KIB,
        max_conn_window: 1024 * KIB,
        ..StreamsConfig::default()
    };
    let transport = TransportConfig {
        streams,
        ..TransportConfig::default()
    };
    let mut p = Pair::new(None, transport, seed);
    p.handshake();
    p.loss = 0.02;
    let size = 1_200_000;
    let data = pattern(size, 3);
    let id = p.client.conn().open_uni().unwrap();
    let mut sent = 0;
    let mut r = Receiver::default();
    let mut next_read = p.now;
    let mut stall_until = None;
    let mut max_window = 0u64;
    // Virtual time moves in 2 ms steps: the reader's schedule is not a harness event, and a flow-controlled
    // sender with nothing in flight would otherwise let the harness jump to the idle timeout.
    let end = p.now + Duration::from_secs(60);
    let mut step = |p: &mut Pair| {
        while sent < size {
            let end = (sent + 64 * 1024).min(size);
            match p
                .client
                .conn()
                .write(id, Bytes::copy_from_slice(&data[sent..end]))
            {
                Ok(n) if n > 0 => sent += n,
                _ => break,
            }
        }
        if sent == size {
            let _ = p.client.conn().finish(id);
        }
        if r.data.len() >= 300_000 && stall_until.is_none() {
            stall_until = Some(p.now + Duration::from_millis(600));
        }
        let stalled = stall_until.is_some_and(|t| p.now < t);
        let budget = if p.now >= next_read && !stalled {
            next_read = p.now + Duration::from_millis(10);
            // 40 000 B per 10 ms: 4 MB/s.
            40_000
        } else {
            0
        };
        read_and_check(p, &mut r, budget);
        if let Some(id) = r.id.filter(|_| p.server.conns.len() == 1) {
            if let Some(w) = p.server.conn().streams.recv_window(id) {
                max_window = max_window.max(w);
            }
        }
        r.fin
    };
    while !step(&mut p) && p.now < end {
        p.run_for(Duration::from_millis(2));
    }
    assert!(r.fin, "{policy}: transfer incomplete: {} of {size}", r.data.len());
    assert_eq!(sha(&r.data), sha(&data), "{policy}: data corrupted");
    (p.server.conn().stats().reassembly, max_window)
}

#[test]
fn sender_stays_within_the_limits_with_every_policy_and_a_slow_reader() {
    for (k, policy) in [WindowPolicy::Fixed, WindowPolicy::Auto, WindowPolicy::Linux]
        .into_iter()
        .enumerate()
    {
        let (stats, max_window) = slow_reader_transfer(policy, 40 + k as u64);
        assert_eq!(
            stats.bytes, 1_200_000,
            "{policy}: every byte became readable once"
        );
        assert_eq!(stats.unread_bytes, 0);
        assert!(stats.out_of_order > 0, "{policy}: the loss reordered nothing");
        // The receiver never held more than the largest stream window it used (one stream).
        assert!(
            stats.max_unread_bytes <= max_window,
            "{policy}: {} unread > window {max_window}",
            stats.max_unread_bytes
        );
        match policy {
            WindowPolicy::Fixed => assert_eq!(max_window, 64 * KIB),
            _ => assert!(
                max_window > 64 * KIB && max_window <= 512 * KIB,
                "{policy}: {max_window}"
            ),
        }
    }
}

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

/// The events of a JSON-SEQ log (after the header), each parsed.
fn events(buf: &Shared) -> Vec<Value> {
    let bytes = buf.0.lock().unwrap().clone();
    bytes
        .split(|b| *b == 0x1e)
        .skip(2)
        .map(|r| serde_json::from_slice(r).unwrap())
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[test]
fn qlog_reassembly_event_carries_the_connection_figures() {
    let log = Shared::default();
    let server_log = log.clone();
    let transport = TransportConfig {
        qlog: Some(QlogFactory::new(move |ctx| {
            (ctx.side == Side::Server).then(|| Box::new(server_log.clone()) as Box<dyn Write + Send>)
        })),
        ..TransportConfig::default()
    };
    let mut p = Pair::new(None, transport, 91);
    p.handshake();
    p.loss = 0.03;
    let size = 600_000;
    let data = pattern(size, 5);
    let id = p.client.conn().open_uni().unwrap();
    let mut sent = 0;
    let mut r = Receiver::default();
    let ok = p.drive_until(Duration::from_secs(60), |p| {
        while sent < size {
            let end = (sent + 64 * 1024).min(size);
            match p
                .client
                .conn()
                .write(id, Bytes::copy_from_slice(&data[sent..end]))
            {
                Ok(n) if n > 0 => sent += n,
                _ => break,
            }
        }
        if sent == size {
            let _ = p.client.conn().finish(id);
        }
        read_and_check(p, &mut r, usize::MAX);
        r.fin
    });
    assert!(ok && sha(&r.data) == sha(&data), "transfer failed");
    p.loss = 0.0;
    p.run_for(Duration::from_millis(200));
    let stats = p.server.conn().stats().reassembly;
    let (window, limit) = (
        p.server.conn().streams.conn_recv_window(),
        p.server.conn().streams.conn_recv_limit(),
    );
    assert!(stats.out_of_order > 0 && stats.hol_delay_max > Duration::ZERO);
    drop(p);
    let evs = events(&log);
    let re: Vec<&Value> = evs
        .iter()
        .filter(|e| e["name"] == "mpquic:reassembly_updated")
        .collect();
    assert!(re.len() >= 2, "{} records", re.len());
    // The record written when the connection was dropped carries exactly its final figures.
    let last = &re.last().unwrap()["data"];
    for (k, v) in [
        ("out_of_order_bytes", stats.out_of_order_bytes),
        ("max_out_of_order_bytes", stats.max_out_of_order_bytes),
        ("unread_bytes", stats.unread_bytes),
        ("max_unread_bytes", stats.max_unread_bytes),
        ("bytes", stats.bytes),
        ("out_of_order", stats.out_of_order),
        ("recv_window", window),
        ("max_data", limit),
    ] {
        assert_eq!(last[k], v, "{k}: {last}");
    }
    assert_eq!(last["bytes"], size as u64);
    for (k, v) in [
        ("hol_delay_mean", stats.hol_delay_mean),
        ("hol_delay_p95", stats.hol_delay_p95),
        ("hol_delay_max", stats.hol_delay_max),
    ] {
        assert!((last[k].as_f64().unwrap() - ms(v)).abs() < 1e-6, "{k}: {last}");
    }
    // Rate-bounded: records at least 10 ms apart (the one at the drop excepted); written on change only;
    // counters and peaks never go back.
    for w in re.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        assert_ne!(a["data"], b["data"], "a record without a change");
        for k in [
            "bytes",
            "out_of_order",
            "max_unread_bytes",
            "max_out_of_order_bytes",
        ] {
            assert!(a["data"][k].as_u64() <= b["data"][k].as_u64(), "{k} went back");
        }
    }
    let times: Vec<f64> = re.iter().map(|e| e["time"].as_f64().unwrap()).collect();
    for w in times[..times.len() - 1].windows(2) {
        assert!(w[1] - w[0] >= 10.0 - 1e-9, "records {} and {} ms", w[0], w[1]);
    }
}
