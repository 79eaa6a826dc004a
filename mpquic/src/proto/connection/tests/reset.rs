//! Stateless reset (RFC 9000 §10.3): the endpoint answers packets for unknown connection IDs, the peer
//! detects the reset token and drains.

use std::time::Duration;

use bytes::Bytes;

use super::cids::{lost, short_packet_to};
use super::harness::{CLIENT, Pair, addr};
use crate::cc::PathId;
use crate::proto::connection::{ConnectionError, EndpointEvent, TransportConfig};
use crate::proto::endpoint::DatagramEvent;

fn forget_server_connection(p: &mut Pair) {
    let h = *p.server.conns.keys().next().unwrap();
    p.server.conns.remove(&h);
    p.server.ep.handle_event(h, EndpointEvent::Drained);
    assert_eq!(p.server.ep.connection_count(), 0);
}

fn client_sends(p: &mut Pair) {
    let c = p.client.conn();
    let id = c.open_bi().unwrap();
    c.write(id, Bytes::from_static(b"anyone there?")).unwrap();
}

#[test]
fn rfc9000_10_3_1_stateless_reset_after_server_forgets_the_connection() {
    let mut p = Pair::new(None, TransportConfig::default(), 40);
    p.handshake();
    p.run_for(Duration::from_millis(500));
    forget_server_connection(&mut p);
    client_sends(&mut p);
    assert!(p.drive_until(Duration::from_secs(5), |p| lost(&p.client.events).is_some()));
    assert_eq!(lost(&p.client.events), Some(ConnectionError::Reset));
    assert!(p.client.conn().is_closed());
    // RFC 9000 §10.3.1: "not send any further packets on this connection".
    let mut buf = Vec::new();
    let now = p.now;
    assert!(p.client.conn().poll_transmit(now, &mut buf).is_none());
}

#[test]
fn rfc9000_10_3_1_stateless_reset_for_a_rotated_cid() {
    let mut p = Pair::new(None, TransportConfig::default(), 41);
    p.handshake();
    p.run_for(Duration::from_millis(500));
    // The client now uses a CID from NEW_CONNECTION_ID: its token came in that frame.
    assert!(p.client.conn().rotate_remote_cid(PathId(0)));
    p.run_for(Duration::from_millis(500));
    forget_server_connection(&mut p);
    client_sends(&mut p);
    assert!(p.drive_until(Duration::from_secs(5), |p| lost(&p.client.events).is_some()));
    assert_eq!(lost(&p.client.events), Some(ConnectionError::Reset));
}

#[test]
fn rfc9000_10_3_no_stateless_reset_for_a_known_cid() {
    let mut p = Pair::new(None, TransportConfig::default(), 42);
    p.handshake();
    p.run_for(Duration::from_millis(200));
    let now = p.now;
    for cid in p.server.conn().local_cids(PathId(0)) {
        let mut pkt = short_packet_to(&cid);
        let ev = p.server.ep.handle(now, None, addr(CLIENT), None, &mut pkt);
        assert!(matches!(ev, Some(DatagramEvent::Known(_))), "{ev:?}");
    }
    // An unknown CID gets a reset, smaller than the trigger (RFC 9000 §10.3.3).
    let mut pkt = short_packet_to(&crate::proto::packet::ConnectionId::new(&[0xee; 8]).unwrap());
    let len = pkt.len();
    match p.server.ep.handle(now, None, addr(CLIENT), None, &mut pkt) {
        Some(DatagramEvent::Response(t, _)) => assert!(t.size < len),
        other => panic!("{other:?}"),
    }
}

#[test]
fn rfc9000_10_3_stateless_resets_are_rate_limited() {
    let mut p = Pair::new(None, TransportConfig::default(), 43);
    let now = p.now;
    let mut answered = 0;
    for i in 0..1000u32 {
        let mut cid = [0xdd; 8];
        cid[..4].copy_from_slice(&i.to_be_bytes());
        let mut pkt = short_packet_to(&crate::proto::packet::ConnectionId::new(&cid).unwrap());
        if let Some(DatagramEvent::Response(..)) = p.server.ep.handle(now, None, addr(CLIENT), None, &mut pkt)
        {
            answered += 1;
        }
    }
    assert!(answered > 0 && answered < 1000, "{answered}");
}
