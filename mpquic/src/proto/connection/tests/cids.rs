//! Connection IDs: issuing up to the peer's limit, routing, rotation, retirement and the errors of cid/.

use std::time::Duration;

use bytes::Bytes;

use super::harness::Pair;
use crate::cc::PathId;
use crate::proto::coding::VarInt;
use crate::proto::connection::{ConnectionError, Event, TransportConfig};
use crate::proto::endpoint::{ConnectionHandle, DatagramEvent};
use crate::proto::error::TransportErrorCode;
use crate::proto::frame::{Frame, NewConnectionId, RetireConnectionId};
use crate::proto::packet::ConnectionId;

pub fn lost(events: &[(ConnectionHandle, Event)]) -> Option<ConnectionError> {
    events.iter().find_map(|(_, e)| match e {
        Event::ConnectionLost(r) => Some(r.clone()),
        _ => None,
    })
}

/// The transport error code the peer closed `events`' connection with (as seen by the closing side's peer).
pub fn closed_with(events: &[(ConnectionHandle, Event)]) -> Option<TransportErrorCode> {
    match lost(events)? {
        ConnectionError::ConnectionClosed { code, .. } => Some(code),
        ConnectionError::TransportError(e) => Some(e.code),
        _ => None,
    }
}

/// A short-header packet to `cid`, big enough to be answered by a Stateless Reset.
pub fn short_packet_to(cid: &ConnectionId) -> Vec<u8> {
    let mut p = vec![0x40 | 0x01];
    p.extend_from_slice(cid.as_slice());
    p.resize(100, 0xab);
    p
}

fn routed(p: &mut Pair, cid: &ConnectionId) -> bool {
    let mut pkt = short_packet_to(cid);
    let now = p.now;
    let from = super::harness::addr(super::harness::CLIENT);
    matches!(
        p.server.ep.handle(now, None, from, None, &mut pkt),
        Some(DatagramEvent::Known(_))
    )
}

fn echo(p: &mut Pair) {
    let c = p.client.conn();
    let id = c.open_bi().unwrap();
    c.write(id, Bytes::from_static(b"ping")).unwrap();
    c.finish(id).unwrap();
    let ok = p.drive_until(Duration::from_secs(5), |p| {
        let s = p.server.conn();
        while let Some(sid) = s.accept_bi() {
            let _ = sid;
        }
        s.read(id, 100, p.now).ok().flatten().is_some()
    });
    assert!(
        ok,
        "stream data did not arrive {:?} {:?}",
        lost(&p.client.events),
        lost(&p.server.events)
    );
}

#[test]
fn rfc9000_5_1_1_new_connection_ids_up_to_active_connection_id_limit() {
    let mut p = Pair::new(None, TransportConfig::default(), 30);
    p.handshake();
    p.run_for(Duration::from_millis(500));
    // Our limit is 4 on both sides: each side holds 4 of the peer's connection IDs.
    assert_eq!(p.client.conn().remote_cid_count(PathId(0)), 4);
    assert_eq!(p.server.conn().remote_cid_count(PathId(0)), 4);
    let server_cids = p.server.conn().local_cids(PathId(0));
    assert_eq!(server_cids.len(), 4);
    for c in &server_cids {
        assert!(routed(&mut p, c), "server endpoint does not route {c:?}");
    }
}

#[test]
fn rfc9000_5_1_2_rotated_cid_is_routed_and_the_old_one_retired() {
    let mut p = Pair::new(None, TransportConfig::default(), 31);
    p.handshake();
    p.run_for(Duration::from_millis(500));
    let old = p.client.conn().remote_cid(PathId(0)).unwrap();
    assert!(p.client.conn().rotate_remote_cid(PathId(0)));
    let new = p.client.conn().remote_cid(PathId(0)).unwrap();
    assert_ne!(old, new);
    echo(&mut p);
    p.run_for(Duration::from_millis(500));
    // RETIRE_CONNECTION_ID reached the server: the old CID is no longer routed, a replacement was issued.
    assert!(!routed(&mut p, &old));
    assert!(routed(&mut p, &new));
    assert!(!p.server.conn().local_cids(PathId(0)).contains(&old));
    assert_eq!(p.client.conn().remote_cid_count(PathId(0)), 4);
    assert!(lost(&p.client.events).is_none() && lost(&p.server.events).is_none());
}

#[test]
fn rfc9000_5_1_2_retire_prior_to_makes_the_peer_switch() {
    let mut p = Pair::new(None, TransportConfig::default(), 32);
    p.handshake();
    p.run_for(Duration::from_millis(500));
    let before = p.server.conn().local_cids(PathId(0));
    assert!(p.server.conn().rotate_local_cids(PathId(0)));
    p.run_for(Duration::from_millis(500));
    let in_use = p.client.conn().remote_cid(PathId(0)).unwrap();
    assert!(
        !before.contains(&in_use),
        "client still uses a CID below Retire Prior To"
    );
    echo(&mut p);
    for c in &before {
        assert!(!routed(&mut p, c));
    }
    assert!(lost(&p.client.events).is_none() && lost(&p.server.events).is_none());
}

#[test]
fn rfc9000_19_16_retire_of_unissued_sequence_is_protocol_violation() {
    let mut p = Pair::new(None, TransportConfig::default(), 33);
    p.handshake();
    let mut f = Vec::new();
    Frame::RetireConnectionId(RetireConnectionId {
        path_id: None,
        sequence: VarInt::from_u32(1000),
    })
    .encode(&mut f);
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

#[test]
fn rfc9000_5_1_1_more_cids_than_the_limit_is_connection_id_limit_error() {
    let mut p = Pair::new(None, TransportConfig::default(), 34);
    p.handshake();
    p.run_for(Duration::from_millis(500));
    // The server already holds 4 client CIDs (its limit): a fifth without retirement breaks the limit.
    let mut f = Vec::new();
    Frame::NewConnectionId(NewConnectionId {
        path_id: None,
        sequence: VarInt::from_u32(50),
        retire_prior_to: VarInt::ZERO,
        id: &[9; 8],
        reset_token: [7; 16],
    })
    .encode(&mut f);
    p.client.conn().inject_raw_frame_for_test(f);
    assert!(p.drive_until(Duration::from_secs(5), |p| lost(&p.client.events).is_some()));
    assert_eq!(
        closed_with(&p.client.events),
        Some(TransportErrorCode::CONNECTION_ID_LIMIT_ERROR)
    );
}
