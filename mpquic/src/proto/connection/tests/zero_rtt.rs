//! Session resumption and 0-RTT (RFC 9001 §4.6, RFC 9000 §7.4.1, §12.4, §17.2.3): a first connection gets a
//! ticket, a second one resumes, with or without early data, accepted or rejected.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::cids::{closed_with, lost};
use super::harness::Pair;
use super::transfer::{Flow, pattern, pump, sha};
use crate::proto::coding::VarInt;
use crate::proto::connection::{
    ClientConfig, ConnectionError, Event, HandshakeKind, ServerConfig, TransportConfig,
};
use crate::proto::crypto::{SelfSigned, TlsOptions, client_config, server_config};
use crate::proto::error::TransportErrorCode;
use crate::proto::frame::{Frame, RetireConnectionId};
use crate::proto::packet::{DecodedPacket, PacketType};

/// Client and server configurations, with 0-RTT on both sides when `early_data`.
fn configs(early_data: bool, transport: TransportConfig) -> (ClientConfig, ServerConfig) {
    let cert = SelfSigned::generate(&["localhost"]).unwrap();
    let mut opts = TlsOptions::with_alpn(b"mpq");
    opts.early_data = early_data;
    let server = server_config(vec![cert.cert.clone()], cert.key.clone_key(), &opts).unwrap();
    let client = client_config(cert.root_store().unwrap(), &opts).unwrap();
    (
        ClientConfig {
            tls: client,
            transport: transport.clone(),
        },
        ServerConfig {
            tls: server,
            transport,
        },
    )
}

/// A pair whose first connection completed and delivered the server's session tickets to the client, then
/// started a second connection (against `second_server` if given).
fn resumed_pair(
    early_data: bool,
    seed: u64,
    second_server: impl FnOnce(&ServerConfig) -> Option<ServerConfig>,
) -> Pair {
    let (cc, sc) = configs(early_data, TransportConfig::default());
    let next = second_server(&sc);
    let mut p = Pair::from_configs(cc, sc, seed);
    p.handshake();
    assert_eq!(p.client.conn().handshake_kind(), Some(HandshakeKind::Full));
    assert_eq!(p.server.conn().handshake_kind(), Some(HandshakeKind::Full));
    // The NewSessionTicket messages travel in 1-RTT CRYPTO frames after the handshake.
    p.run_for(Duration::from_millis(200));
    p.reconnect(next, seed ^ 0xabc);
    p
}

/// The long-header packet types of a datagram, in order.
fn packet_types(datagram: &[u8]) -> Vec<PacketType> {
    let mut out = Vec::new();
    let mut rest = datagram;
    while !rest.is_empty() {
        let Ok(DecodedPacket::Protected(pd)) = DecodedPacket::decode(rest, 8) else {
            break;
        };
        out.push(pd.packet_type());
        if pd.is_empty() || pd.len() > rest.len() {
            break;
        }
        rest = &rest[pd.len()..];
    }
    out
}

/// Opens a stream on the client, writes `data` and finishes it; returns when the server has read it all.
fn send_and_check(p: &mut Pair, data: &[u8]) {
    let mut fc = Flow::default();
    let mut fs = Flow::default();
    let ok = p.drive_until(Duration::from_secs(20), |p| {
        pump(p, true, &mut fc, data);
        if p.server.conns.len() == 1 {
            pump(p, false, &mut fs, b"");
        }
        fs.fin_seen
    });
    assert!(ok, "server got {} of {} bytes", fs.received.len(), data.len());
    assert_eq!(sha(&fs.received), sha(data), "client → server data corrupted");
}

#[test]
fn resumed_handshake_without_early_data() {
    let mut p = resumed_pair(false, 300, |_| None);
    assert!(!p.client.conn().is_zero_rtt_available());
    assert!(!p.client.conn().zero_rtt_offered());
    p.client_sent = Some(Vec::new());
    p.handshake();
    assert_eq!(p.client.conn().handshake_kind(), Some(HandshakeKind::Resumed));
    assert_eq!(p.server.conn().handshake_kind(), Some(HandshakeKind::Resumed));
    let sent = p.client_sent.take().unwrap();
    assert!(
        sent.iter()
            .all(|d| !packet_types(d).contains(&PacketType::ZeroRtt)),
        "no 0-RTT packet without early data"
    );
    send_and_check(&mut p, &pattern(10_000, 3));
}

#[test]
fn rfc9001_4_6_zero_rtt_accepted_data_delivered_in_0rtt_packets() {
    let mut p = resumed_pair(true, 301, |_| None);
    p.client_sent = Some(Vec::new());
    assert!(p.client.conn().is_zero_rtt_available());
    let data = pattern(6_000, 7);
    let conn = p.client.conn();
    let id = conn
        .open_bi()
        .expect("remembered stream limit allows a stream in 0-RTT");
    assert_eq!(conn.write(id, Bytes::copy_from_slice(&data)).unwrap(), data.len());
    conn.finish(id).unwrap();
    conn.send_datagram(Bytes::from_static(b"early datagram")).unwrap();
    // The server reads the whole stream before the client's Finished reaches it: the data came in 0-RTT.
    let mut fs = Flow::default();
    let mut before_handshake = None;
    let ok = p.drive_until(Duration::from_secs(5), |p| {
        if p.server.conns.len() == 1 {
            pump(p, false, &mut fs, b"");
            if fs.fin_seen && before_handshake.is_none() {
                before_handshake = Some(p.server.conn().is_handshaking());
            }
        }
        fs.fin_seen
    });
    assert!(ok, "server got {} bytes", fs.received.len());
    assert_eq!(sha(&fs.received), sha(&data));
    assert_eq!(
        before_handshake,
        Some(true),
        "0-RTT data is readable before the handshake completes"
    );
    assert_eq!(
        p.server.conn().recv_datagram().as_deref(),
        Some(&b"early datagram"[..])
    );
    p.handshake();
    assert_eq!(
        p.client.conn().handshake_kind(),
        Some(HandshakeKind::ZeroRttAccepted)
    );
    assert_eq!(
        p.server.conn().handshake_kind(),
        Some(HandshakeKind::ZeroRttAccepted)
    );
    assert!(p.client.conn().zero_rtt_packets() >= 5);
    assert!(p.server.conn().zero_rtt_packets() >= 5);
    // RFC 9001 §4.9.3: the client discards its 0-RTT keys once it has 1-RTT keys.
    assert!(!p.client.conn().is_zero_rtt_available());
    // On the wire: the first datagram coalesces Initial and 0-RTT (RFC 9000 §12.2); 0-RTT packets are long
    // headers of type 0x01 (RFC 9000 §17.2.3).
    let sent = p.client_sent.take().unwrap();
    assert_eq!(
        packet_types(&sent[0]),
        vec![PacketType::Initial, PacketType::ZeroRtt]
    );
    let zero_rtt = sent
        .iter()
        .flat_map(|d| packet_types(d))
        .filter(|t| *t == PacketType::ZeroRtt)
        .count();
    assert!(zero_rtt >= 5, "{zero_rtt} 0-RTT packets");
    // 0-RTT packets were acknowledged in 1-RTT: nothing is left to repeat, and more data flows normally.
    send_and_check(&mut p, &pattern(50_000, 8));
    assert_eq!(p.client.conn().stats().packets_lost, 0);
}

#[test]
fn rfc9001_4_6_2_zero_rtt_rejected_data_sent_again_in_1rtt() {
    // The second server shares the session cache (resumption works) but no longer accepts early data.
    let mut p = resumed_pair(true, 302, |sc| {
        let mut tls = (*sc.tls).clone();
        tls.max_early_data_size = 0;
        Some(ServerConfig {
            tls: Arc::new(tls),
            transport: sc.transport.clone(),
        })
    });
    p.client_sent = Some(Vec::new());
    assert!(p.client.conn().is_zero_rtt_available());
    let data = pattern(40_000, 9);
    send_and_check(&mut p, &data);
    p.handshake();
    assert_eq!(
        p.client.conn().handshake_kind(),
        Some(HandshakeKind::ZeroRttRejected)
    );
    assert_eq!(
        p.server.conn().handshake_kind(),
        Some(HandshakeKind::ZeroRttRejected)
    );
    assert!(
        p.client.conn().zero_rtt_packets() > 0,
        "the client did send 0-RTT"
    );
    assert_eq!(p.server.conn().zero_rtt_packets(), 0, "the server processed none");
    let sent = p.client_sent.take().unwrap();
    assert!(
        sent.iter()
            .any(|d| packet_types(d).contains(&PacketType::ZeroRtt))
    );
    assert!(lost(&p.client.events).is_none());
    assert!(lost(&p.server.events).is_none());
}

#[test]
fn rfc9001_4_6_2_zero_rtt_rejected_by_full_handshake() {
    // A server that does not know the ticket (a fresh session cache): a full handshake, early data rejected.
    let mut p = resumed_pair(true, 303, |sc| {
        let mut tls = (*sc.tls).clone();
        tls.session_storage = rustls::server::ServerSessionMemoryCache::new(16);
        Some(ServerConfig {
            tls: Arc::new(tls),
            transport: sc.transport.clone(),
        })
    });
    assert!(p.client.conn().is_zero_rtt_available());
    let data = pattern(30_000, 5);
    send_and_check(&mut p, &data);
    p.handshake();
    assert_eq!(
        p.client.conn().handshake_kind(),
        Some(HandshakeKind::ZeroRttRejected)
    );
    assert_eq!(
        p.server.conn().handshake_kind(),
        Some(HandshakeKind::ZeroRttRejected)
    );
    assert!(lost(&p.client.events).is_none());
}

#[test]
fn rfc9000_12_4_forbidden_frame_in_0rtt_is_protocol_violation() {
    // RFC 9000 §12.4: "An endpoint MUST treat receipt of a frame in a packet type that is not permitted as a
    // connection error of type PROTOCOL_VIOLATION." HANDSHAKE_DONE is 1-RTT only.
    let mut p = resumed_pair(true, 304, |_| None);
    let mut f = Vec::new();
    Frame::HandshakeDone.encode(&mut f);
    p.client.conn().inject_zero_rtt_frame_for_test(f);
    assert!(p.drive_until(Duration::from_secs(5), |p| lost(&p.client.events).is_some()));
    match lost(&p.client.events) {
        Some(ConnectionError::ConnectionClosed { code, frame_type, .. }) => {
            assert_eq!(code, TransportErrorCode::PROTOCOL_VIOLATION);
            assert_eq!(frame_type, 0x1e);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        closed_with(&p.server.events),
        Some(TransportErrorCode::PROTOCOL_VIOLATION)
    );
}

#[test]
fn rfc9000_12_5_retire_connection_id_in_0rtt_is_protocol_violation() {
    // RFC 9000 §12.5: RETIRE_CONNECTION_ID cannot be sent in 0-RTT; "A server MAY treat receipt of these frames
    // in 0-RTT packets as a connection error of type PROTOCOL_VIOLATION."
    let mut p = resumed_pair(true, 305, |_| None);
    let mut f = Vec::new();
    Frame::RetireConnectionId(RetireConnectionId {
        path_id: None,
        sequence: VarInt::ZERO,
    })
    .encode(&mut f);
    p.client.conn().inject_zero_rtt_frame_for_test(f);
    assert!(p.drive_until(Duration::from_secs(5), |p| lost(&p.client.events).is_some()));
    match lost(&p.client.events) {
        Some(ConnectionError::ConnectionClosed { code, frame_type, .. }) => {
            assert_eq!(code, TransportErrorCode::PROTOCOL_VIOLATION);
            assert_eq!(frame_type, 0x19);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn rfc9000_7_4_1_server_reducing_remembered_limits_is_protocol_violation() {
    // RFC 9000 §7.4.1: "a server that accepts 0-RTT data MUST NOT set values for the following parameters ...
    // that are smaller than the remembered values". The second server keeps the session cache (and accepts
    // early data) but advertises a smaller initial_max_data.
    let mut p = resumed_pair(true, 306, |sc| {
        let mut transport = sc.transport.clone();
        transport.streams.conn_window /= 2;
        Some(ServerConfig {
            tls: sc.tls.clone(),
            transport,
        })
    });
    let conn = p.client.conn();
    let id = conn.open_uni().unwrap();
    conn.write(id, Bytes::from_static(b"request")).unwrap();
    assert!(p.drive_until(Duration::from_secs(5), |p| lost(&p.client.events).is_some()));
    match lost(&p.client.events) {
        Some(ConnectionError::TransportError(e)) => {
            assert_eq!(e.code, TransportErrorCode::PROTOCOL_VIOLATION);
            assert!(e.reason.contains("initial_max_data"), "{}", e.reason);
        }
        other => panic!("{other:?}"),
    }
    assert!(p.drive_until(Duration::from_secs(5), |p| lost(&p.server.events).is_some()));
    assert_eq!(
        closed_with(&p.server.events),
        Some(TransportErrorCode::PROTOCOL_VIOLATION)
    );
}

#[test]
fn rfc9000_7_4_1_server_raising_limits_is_fine() {
    let mut p = resumed_pair(true, 307, |sc| {
        let mut transport = sc.transport.clone();
        transport.streams.conn_window *= 2;
        Some(ServerConfig {
            tls: sc.tls.clone(),
            transport,
        })
    });
    send_and_check(&mut p, &pattern(20_000, 4));
    p.handshake();
    assert_eq!(
        p.client.conn().handshake_kind(),
        Some(HandshakeKind::ZeroRttAccepted)
    );
    assert!(
        !p.client
            .events
            .iter()
            .any(|(_, e)| matches!(e, Event::ConnectionLost(_)))
    );
}

#[test]
fn rfc9000_17_2_3_zero_rtt_data_sent_again_after_retry() {
    // RFC 9000 §17.2.3: "A client SHOULD attempt to resend data in 0-RTT packets after it sends a new Initial
    // packet." A fresh server endpoint (it cannot read the NEW_TOKEN token of the first one) requires a Retry;
    // the 0-RTT packets of the first flight are dropped with the Initial they came with.
    let mut p = resumed_pair(true, 308, |sc| Some(sc.clone()));
    p.server.ep.set_require_retry(true);
    assert!(p.client.conn().is_zero_rtt_available());
    send_and_check(&mut p, &pattern(8_000, 6));
    p.handshake();
    assert!(p.client.conn().retried());
    assert_eq!(
        p.client.conn().handshake_kind(),
        Some(HandshakeKind::ZeroRttAccepted)
    );
    assert!(p.server.conn().zero_rtt_packets() > 0);
}
