//! Close, idle timeout and protocol-violation tests.

use std::time::Duration;

use bytes::Bytes;

use super::harness::Pair;
use crate::proto::coding::VarInt;
use crate::proto::connection::{ConnectionError, Event, TransportConfig};
use crate::proto::error::TransportErrorCode;

fn lost(events: &[(crate::proto::endpoint::ConnectionHandle, Event)]) -> Option<ConnectionError> {
    events.iter().find_map(|(_, e)| match e {
        Event::ConnectionLost(r) => Some(r.clone()),
        _ => None,
    })
}

#[test]
fn application_close_with_code_and_reason_seen_by_peer() {
    let mut p = Pair::new(None, TransportConfig::default(), 10);
    p.handshake();
    let now = p.now;
    p.client
        .conn()
        .close(now, VarInt::from_u32(42), Bytes::from_static(b"bye"));
    let ok = p.drive_until(Duration::from_secs(5), |p| lost(&p.server.events).is_some());
    assert!(ok);
    assert_eq!(
        lost(&p.server.events),
        Some(ConnectionError::ApplicationClosed {
            code: VarInt::from_u32(42),
            reason: Bytes::from_static(b"bye"),
        })
    );
    assert_eq!(lost(&p.client.events), Some(ConnectionError::LocallyClosed));
    // Both drain and the endpoints forget them.
    p.drive_until(Duration::from_secs(10), |p| {
        p.client.conn().is_drained() && p.server.conn().is_drained()
    });
    assert!(p.client.conn().is_drained() && p.server.conn().is_drained());
    assert_eq!(p.server.ep.connection_count(), 0);
    assert_eq!(p.client.ep.connection_count(), 0);
}

#[test]
fn idle_timeout_closes_both_sides() {
    let transport = TransportConfig {
        max_idle_timeout: Duration::from_secs(2),
        ..TransportConfig::default()
    };
    let mut p = Pair::new(None, transport, 11);
    p.handshake();
    let start = p.now;
    let ok = p.drive_until(Duration::from_secs(10), |p| {
        p.client.conn().is_drained() && p.server.conn().is_drained()
    });
    assert!(ok);
    assert!(p.now - start >= Duration::from_secs(2));
    assert_eq!(lost(&p.client.events), Some(ConnectionError::TimedOut));
    assert_eq!(lost(&p.server.events), Some(ConnectionError::TimedOut));
}

#[test]
fn peer_stream_frame_on_its_receive_only_stream_is_stream_state_error() {
    // RFC 9000 §19.8: "An endpoint MUST terminate the connection with error STREAM_STATE_ERROR if it receives
    // a STREAM frame for a locally initiated stream that has not yet been created, or for a send-only stream."
    let mut p = Pair::new(None, TransportConfig::default(), 12);
    p.handshake();
    // The server opens a unidirectional stream (send-only for it); the client then "sends" on it, which we
    // inject by writing a STREAM frame for that ID from the client: client-side, the stream is receive-only,
    // so we open the same ID from the client's streams manager through a raw write.
    let s = p.server.conn();
    let id = s.open_uni().unwrap();
    s.write(id, Bytes::from_static(b"hello")).unwrap();
    p.drive_until(Duration::from_secs(1), |p| p.client.conn().accept_uni().is_some());
    // Forge: make the client send a STREAM frame on the server's uni stream.
    p.client.conn().inject_stream_frame_for_test(id, b"not allowed");
    let ok = p.drive_until(Duration::from_secs(5), |p| lost(&p.client.events).is_some());
    assert!(ok);
    match lost(&p.client.events) {
        Some(ConnectionError::ConnectionClosed { code, frame_type, .. }) => {
            assert_eq!(code, TransportErrorCode::STREAM_STATE_ERROR);
            assert_eq!(frame_type & !0x07, 0x08);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(matches!(
        lost(&p.server.events),
        Some(ConnectionError::TransportError(e)) if e.code == TransportErrorCode::STREAM_STATE_ERROR
    ));
}
