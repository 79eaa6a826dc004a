//! The connection's congestion-event count (`PathStats::congestion_events`, `ConnectionStats::congestion_events`)
//! against an independent observer: the window reductions of NewReno, which keeps its own recovery period
//! (RFC 9002 §7.3.2) and halves its window once per period.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::harness::Pair;
use super::transfer::pattern;
use crate::cc::PathId;
use crate::proto::connection::{CcFactory, TransportConfig};

/// A 3 MB upload at 3 % random loss (seeded): every strict decrease of the client's window, watched after
/// every step of the pair, is one congestion event, and nothing else is. A step delivers what arrives at one
/// instant, and a second period cannot begin at the instant the first began (it needs a loss of a packet
/// sent after that instant), so two reductions never fall into one step.
#[test]
fn congestion_events_are_the_window_reductions_of_newreno() {
    let transport = TransportConfig {
        congestion_controller_factory: Some(CcFactory(Arc::new(|| {
            crate::cc::registry::build("newreno").unwrap()
        }))),
        ..TransportConfig::default()
    };
    let mut p = Pair::new(None, transport, 11);
    p.delay = Duration::from_millis(10);
    p.handshake();
    p.loss = 0.03;
    let data = pattern(3_000_000, 5);
    let c = p.client.conn();
    let id = c.open_uni().unwrap();
    let (mut sent, mut got, mut fin) = (0usize, 0usize, false);
    let mut window = c.path_stats(PathId(0)).unwrap().cwnd;
    let mut reductions = 0u64;
    let done = p.drive_until(Duration::from_secs(120), |p| {
        let now = p.now;
        let c = p.client.conn();
        while sent < data.len() {
            match c.write(
                id,
                Bytes::copy_from_slice(&data[sent..(sent + 65_536).min(data.len())]),
            ) {
                Ok(n) if n > 0 => sent += n,
                _ => break,
            }
        }
        if sent == data.len() && !fin {
            c.finish(id).unwrap();
            fin = true;
        }
        let w = c.path_stats(PathId(0)).unwrap().cwnd;
        if w < window {
            reductions += 1;
        }
        window = w;
        let s = p.server.conn();
        while let Ok(Some(b)) = s.read(id, usize::MAX, now) {
            got += b.len();
        }
        got == data.len()
    });
    assert!(done, "upload incomplete: {got} of {} bytes", data.len());
    let path = p.client.conn().path_stats(PathId(0)).unwrap();
    let stats = p.client.conn().stats();
    assert!(
        stats.packets_lost > reductions,
        "{} lost, {reductions} reductions",
        stats.packets_lost
    );
    assert!(reductions >= 5, "too few losses to test: {reductions}");
    assert_eq!(path.congestion_events, reductions);
    assert_eq!(stats.congestion_events, reductions);
}
