//! Retry and address-validation tokens (RFC 9000 §8.1, §17.2.5; RFC 9001 §5.8).

use std::time::Duration;

use super::cids::lost;
use super::harness::{CLIENT, Pair, SERVER, addr};
use crate::proto::connection::{ConnectionError, Event, TransportConfig};
use crate::proto::endpoint::DatagramEvent;
use crate::proto::error::TransportErrorCode;

fn retry_pair(seed: u64) -> Pair {
    let mut p = Pair::new(None, TransportConfig::default(), seed);
    p.server.ep.set_require_retry(true);
    p
}

fn client_initial(p: &mut Pair) -> Vec<u8> {
    let mut buf = Vec::new();
    let now = p.now;
    let t = p.client.conn().poll_transmit(now, &mut buf).unwrap();
    buf.truncate(t.size);
    buf
}

fn server_answer(p: &mut Pair, from: &str, datagram: &[u8]) -> Vec<u8> {
    let now = p.now;
    let mut d = datagram.to_vec();
    match p.server.ep.handle(now, None, addr(from), None, &mut d) {
        Some(DatagramEvent::Response(t, out)) => {
            assert_eq!(t.remote, addr(from));
            out
        }
        other => panic!("expected a stateless response, got {other:?}"),
    }
}

fn to_client(p: &mut Pair, datagram: &[u8]) {
    let now = p.now;
    let mut d = datagram.to_vec();
    p.client
        .conn()
        .handle_datagram(now, None, addr(SERVER), None, &mut d);
}

/// Offset and length of the Token field of a long-header Initial.
fn token_span(initial: &[u8]) -> (usize, usize) {
    let dcid_len = usize::from(initial[5]);
    let scid_len = usize::from(initial[6 + dcid_len]);
    let at = 7 + dcid_len + scid_len;
    let first = initial[at];
    let vlen = 1usize << (first >> 6);
    let mut len = u64::from(first & 0x3f);
    for b in &initial[at + 1..at + vlen] {
        len = (len << 8) | u64::from(*b);
    }
    (at + vlen, len as usize)
}

#[test]
fn rfc9000_8_1_2_handshake_with_retry_required() {
    let mut p = retry_pair(60);
    p.handshake();
    assert!(p.client.conn().retried());
    assert!(p.server.conn().retried());
    assert_eq!(p.server.ep.connection_count(), 1);
    assert!(lost(&p.client.events).is_none());
}

#[test]
fn rfc9000_17_2_5_2_only_one_retry_is_accepted() {
    let mut p = retry_pair(61);
    let initial = client_initial(&mut p);
    let retry1 = server_answer(&mut p, CLIENT, &initial);
    let retry2 = server_answer(&mut p, CLIENT, &initial);
    assert_ne!(retry1, retry2, "each Retry has a fresh SCID");
    to_client(&mut p, &retry1);
    assert!(p.client.conn().retried());
    let dcid = p.client.conn().remote_cid(crate::cc::PathId(0)).unwrap();
    // RFC 9000 §17.2.5.2: "it MUST discard any subsequent Retry packets that it receives."
    to_client(&mut p, &retry2);
    assert_eq!(p.client.conn().remote_cid(crate::cc::PathId(0)), Some(dcid));
    // The new Initial carries the token and goes to the Retry's SCID; the handshake completes.
    let initial2 = client_initial(&mut p);
    let (_, token_len) = token_span(&initial2);
    assert!(token_len > 0);
    let now = p.now;
    let mut d = initial2.clone();
    match p.server.ep.handle(now, None, addr(CLIENT), None, &mut d) {
        Some(DatagramEvent::NewConnection(h, c)) => {
            p.server.conns.insert(h, *c);
        }
        other => panic!("{other:?}"),
    }
    p.handshake();
}

#[test]
fn rfc9001_5_8_retry_with_bad_integrity_tag_is_discarded() {
    let mut p = retry_pair(62);
    let initial = client_initial(&mut p);
    let mut retry = server_answer(&mut p, CLIENT, &initial);
    *retry.last_mut().unwrap() ^= 1;
    to_client(&mut p, &retry);
    assert!(!p.client.conn().retried());
}

fn retried_initial(p: &mut Pair) -> Vec<u8> {
    let initial = client_initial(p);
    let retry = server_answer(p, CLIENT, &initial);
    to_client(p, &retry);
    assert!(p.client.conn().retried());
    client_initial(p)
}

fn expect_invalid_token(p: &mut Pair, close: &[u8]) {
    to_client(p, close);
    let mut events = Vec::new();
    while let Some(e) = p.client.conn().poll_event() {
        events.push(e);
    }
    let code = events.iter().find_map(|e| match e {
        Event::ConnectionLost(ConnectionError::ConnectionClosed { code, .. }) => Some(*code),
        _ => None,
    });
    assert_eq!(code, Some(TransportErrorCode::INVALID_TOKEN), "{events:?}");
}

#[test]
fn rfc9000_8_1_2_retry_token_replayed_from_another_address_is_invalid_token() {
    let mut p = retry_pair(63);
    let initial2 = retried_initial(&mut p);
    // The same Initial, token included, from another address: the token names the original address.
    let close = server_answer(&mut p, "10.0.0.99:5555", &initial2);
    assert_eq!(p.server.ep.connection_count(), 0);
    expect_invalid_token(&mut p, &close);
}

/// RFC 9000 §8.1.4: "Tokens sent in Retry packets SHOULD include information that allows the server to verify
/// that the source IP address and port in client packets remain constant" and are "only accepted for a short
/// time": the same Initial, from the same address, 16 s later (the lifetime is 15 s) is refused.
#[test]
fn rfc9000_8_1_4_expired_retry_token_is_invalid_token() {
    let mut p = retry_pair(67);
    let initial2 = retried_initial(&mut p);
    p.now += Duration::from_secs(16);
    let close = server_answer(&mut p, CLIENT, &initial2);
    assert_eq!(p.server.ep.connection_count(), 0);
    expect_invalid_token(&mut p, &close);
}

/// Retry token replay: the Initial carrying a valid token, replayed from the same address after
/// the server created the connection, is routed to that connection (no second connection, no new state).
#[test]
fn rfc9000_8_1_2_a_replayed_retry_token_creates_no_second_connection() {
    let mut p = retry_pair(68);
    let initial2 = retried_initial(&mut p);
    let now = p.now;
    let mut d = initial2.clone();
    match p.server.ep.handle(now, None, addr(CLIENT), None, &mut d) {
        Some(DatagramEvent::NewConnection(h, c)) => {
            p.server.conns.insert(h, *c);
        }
        other => panic!("{other:?}"),
    }
    for _ in 0..5 {
        let mut d = initial2.clone();
        let ev = p.server.ep.handle(now, None, addr(CLIENT), None, &mut d);
        assert!(matches!(ev, Some(DatagramEvent::Known(_))), "{ev:?}");
    }
    assert_eq!(p.server.ep.connection_count(), 1);
    assert_eq!(p.server.ep.handshakes_in_progress(), 1);
}

#[test]
fn rfc9000_8_1_2_forged_retry_token_is_invalid_token() {
    let mut p = retry_pair(64);
    let mut initial2 = retried_initial(&mut p);
    let (at, len) = token_span(&initial2);
    assert!(len > 8);
    initial2[at + len / 2] ^= 0x55;
    let close = server_answer(&mut p, CLIENT, &initial2);
    assert_eq!(p.server.ep.connection_count(), 0);
    expect_invalid_token(&mut p, &close);
}

#[test]
fn rfc9000_8_1_3_new_token_lets_the_next_connection_skip_retry() {
    let mut p = Pair::new(None, TransportConfig::default(), 65);
    p.handshake();
    p.run_for(Duration::from_millis(500));
    assert_eq!(p.client.ep.stored_tokens(), 1, "NEW_TOKEN not stored");
    // Second connection, with Retry now required: the stored token validates the address instead.
    p.server.ep.set_require_retry(true);
    let cc = p.client_config.clone();
    let now = p.now;
    let (h, c) = p.client.ep.connect(now, &cc, addr(SERVER), "localhost").unwrap();
    assert_eq!(p.client.ep.stored_tokens(), 0, "the token is used once");
    p.client.conns.insert(h, c);
    let ok = p.drive_until(Duration::from_secs(5), |p| {
        p.client.conns.get(&h).is_some_and(|c| !c.is_handshaking())
    });
    assert!(ok, "{:?}", p.client.events);
    assert!(!p.client.conns[&h].retried());
    assert_eq!(p.server.conns.len(), 2);
}

#[test]
fn rfc9000_7_3_retry_forged_by_an_attacker_fails_the_transport_parameter_check() {
    // The Retry integrity key is public, so an on-path attacker can forge a Retry the client accepts; the
    // server's original_destination_connection_id then no longer matches what the client sent (RFC 9000 §7.3:
    // "The values provided by a peer for these transport parameters MUST match the values that an endpoint
    // used in the Destination and Source Connection ID fields of Initial packets that it sent").
    let mut p = Pair::new(None, TransportConfig::default(), 66);
    let initial = client_initial(&mut p);
    let dcid_len = usize::from(initial[5]);
    let dcid = crate::proto::packet::ConnectionId::new(&initial[6..6 + dcid_len]).unwrap();
    let scid_len = usize::from(initial[6 + dcid_len]);
    let scid =
        crate::proto::packet::ConnectionId::new(&initial[7 + dcid_len..7 + dcid_len + scid_len]).unwrap();
    let forged_scid = crate::proto::packet::ConnectionId::new(&[0x42; 8]).unwrap();
    let mut retry = Vec::new();
    crate::proto::stateless::retry_packet(&dcid, &scid, &forged_scid, b"forged token", 0, &mut retry)
        .unwrap();
    to_client(&mut p, &retry);
    assert!(p.client.conn().retried());
    assert!(p.drive_until(Duration::from_secs(5), |p| lost(&p.client.events).is_some()));
    match lost(&p.client.events) {
        Some(ConnectionError::TransportError(e)) => {
            assert_eq!(e.code, TransportErrorCode::TRANSPORT_PARAMETER_ERROR)
        }
        other => panic!("{other:?}"),
    }
}
