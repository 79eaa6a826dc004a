//! Protocol rules broken on purpose: frames not allowed in a packet type, optimistic ACKs, Version
//! Negotiation handling by the client.

use std::time::Duration;

use super::cids::{closed_with, lost};
use super::harness::Pair;
use crate::proto::coding::VarInt;
use crate::proto::connection::{ConnectionError, Event, TransportConfig};
use crate::proto::error::TransportErrorCode;
use crate::proto::frame::{Frame, Stream, encode_ack};
use crate::proto::packet::{ConnectionId, VERSION_1, VersionNegotiation};

#[test]
fn rfc9000_12_4_stream_frame_in_initial_packet_is_protocol_violation() {
    // RFC 9000 §12.4: "An endpoint MUST treat receipt of a frame in a packet type that is not permitted as a
    // connection error of type PROTOCOL_VIOLATION."
    let mut p = Pair::new(None, TransportConfig::default(), 50);
    let mut f = Vec::new();
    Frame::Stream(Stream {
        id: VarInt::ZERO,
        offset: VarInt::ZERO,
        fin: false,
        data: b"too early",
    })
    .encode(&mut f);
    p.client.conn().inject_initial_frame_for_test(f);
    assert!(p.drive_until(Duration::from_secs(5), |p| lost(&p.client.events).is_some()));
    match lost(&p.client.events) {
        Some(ConnectionError::ConnectionClosed { code, frame_type, .. }) => {
            assert_eq!(code, TransportErrorCode::PROTOCOL_VIOLATION);
            assert_eq!(frame_type & !0x07, 0x08);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn rfc9000_13_1_ack_of_never_sent_packet_is_protocol_violation() {
    // RFC 9000 §13.1: "An endpoint SHOULD treat receipt of an acknowledgment for a packet it did not send as a
    // connection error of type PROTOCOL_VIOLATION, if it is able to detect the condition." (optimistic ACK)
    let mut p = Pair::new(None, TransportConfig::default(), 51);
    p.handshake();
    let mut f = Vec::new();
    encode_ack(&mut f, None, VarInt::ZERO, &[1_000_000..=1_000_000], None).unwrap();
    p.client.conn().inject_raw_frame_for_test(f);
    assert!(p.drive_until(Duration::from_secs(5), |p| lost(&p.client.events).is_some()));
    assert_eq!(
        closed_with(&p.client.events),
        Some(TransportErrorCode::PROTOCOL_VIOLATION)
    );
    assert_eq!(
        closed_with(&p.server.events),
        Some(TransportErrorCode::PROTOCOL_VIOLATION)
    );
}

/// The client's first Initial (not delivered) and its DCID/SCID.
fn first_initial(p: &mut Pair) -> (ConnectionId, ConnectionId) {
    let mut buf = Vec::new();
    let now = p.now;
    let conn = p.client.conn();
    let t = conn.poll_transmit(now, &mut buf).unwrap();
    assert!(t.size >= 1200);
    let dcid_len = usize::from(buf[5]);
    let dcid = ConnectionId::new(&buf[6..6 + dcid_len]).unwrap();
    let scid_len = usize::from(buf[6 + dcid_len]);
    let scid = ConnectionId::new(&buf[7 + dcid_len..7 + dcid_len + scid_len]).unwrap();
    (dcid, scid)
}

#[test]
fn rfc9000_6_2_version_negotiation_without_our_version_abandons() {
    let mut p = Pair::new(None, TransportConfig::default(), 52);
    let (dcid, scid) = first_initial(&mut p);
    let mut vn = Vec::new();
    assert!(VersionNegotiation::encode(
        scid.as_slice(),
        dcid.as_slice(),
        &[0x1a2a_3a4a, 0xff00_001d],
        0,
        &mut vn
    ));
    let now = p.now;
    let server = super::harness::addr(super::harness::SERVER);
    p.client.conn().handle_datagram(now, None, server, None, &mut vn);
    let mut events = Vec::new();
    while let Some(e) = p.client.conn().poll_event() {
        events.push(e);
    }
    assert_eq!(
        events,
        vec![Event::ConnectionLost(ConnectionError::VersionMismatch {
            offered: vec![0x1a2a_3a4a, 0xff00_001d]
        })]
    );
    assert!(p.client.conn().is_drained());
}

#[test]
fn rfc9000_6_2_version_negotiation_listing_our_version_is_ignored() {
    let mut p = Pair::new(None, TransportConfig::default(), 53);
    let (dcid, scid) = first_initial(&mut p);
    let mut vn = Vec::new();
    assert!(VersionNegotiation::encode(
        scid.as_slice(),
        dcid.as_slice(),
        &[0x1a2a_3a4a, VERSION_1],
        0,
        &mut vn
    ));
    let now = p.now;
    let server = super::harness::addr(super::harness::SERVER);
    p.client.conn().handle_datagram(now, None, server, None, &mut vn);
    assert!(!p.client.conn().is_closed());
    assert!(p.client.conn().poll_event().is_none());
    // The Initial we swallowed is retransmitted by the PTO and the handshake completes.
    p.handshake();
}
