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
