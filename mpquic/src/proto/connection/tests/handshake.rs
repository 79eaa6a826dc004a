//! Handshake tests.

use std::time::Duration;

use super::harness::Pair;
use crate::proto::connection::{Event, TransportConfig};
use crate::proto::crypto::CipherSuite;

#[test]
fn handshake_completes() {
    let mut p = Pair::new(None, TransportConfig::default(), 1);
    p.handshake();
    assert!(
        p.client
            .events
            .iter()
            .any(|(_, e)| *e == Event::HandshakeCompleted)
    );
    assert!(
        p.server
            .events
            .iter()
            .any(|(_, e)| *e == Event::HandshakeConfirmed)
    );
    assert!(!p.client.conn().is_handshaking());
    assert!(!p.server.conn().is_handshaking());
    // Nothing left to do but idle: no runaway traffic.
    let before = p.delivered;
    p.drive_until(Duration::from_secs(1), |_| false);
    assert!(
        p.delivered - before < 10,
        "{} datagrams after the handshake",
        p.delivered - before
    );
}

#[test]
fn handshake_with_each_cipher_suite() {
    for suite in CipherSuite::ALL {
        let mut p = Pair::new(Some(suite), TransportConfig::default(), 2);
        p.handshake();
        assert_eq!(p.client.conn().cipher_suite(), Some(suite));
        assert_eq!(p.server.conn().cipher_suite(), Some(suite));
    }
}

#[test]
fn handshake_survives_loss() {
    for seed in 0..5 {
        let mut p = Pair::new(None, TransportConfig::default(), 100 + seed);
        p.loss = 0.2;
        p.handshake();
    }
}

#[test]
fn path_stats_report_the_handshake_path() {
    let mut p = Pair::new(None, TransportConfig::default(), 7);
    p.handshake();
    let conn = p.client.conn();
    assert_eq!(conn.paths(), vec![crate::cc::PathId(0)]);
    assert!(conn.path_stats(crate::cc::PathId(1)).is_none());
    let s = conn.path_stats(crate::cc::PathId(0)).unwrap();
    assert!(s.validated && !s.backup);
    let cc = s.cc.clone().unwrap();
    assert_eq!(s.cwnd, cc.cwnd);
    assert!(s.cwnd >= 2 * 1200, "{s:?}");
    // The harness link delays every datagram 10 ms each way: the smallest RTT sample is 20 ms plus the peer's
    // ACK delay (at most max_ack_delay, 25 ms).
    assert!(
        s.min_rtt >= Duration::from_millis(20) && s.min_rtt <= Duration::from_millis(45),
        "{s:?}"
    );
    assert!(s.bytes_sent > 0 && s.bytes_received > 0);
}
