//! Attacks over the pair harness: a peer floods RETIRE_CONNECTION_ID, exhausts stream IDs, sends
//! out-of-order stream data up to and past the window, never reads, or replays a stateless-reset trigger with
//! a retired connection ID. Each checks the error code or the drop, and that state stays bounded.
//! (`docs/proto-connection.md`, "Attacks tested", maps every attack of the issue to its test.)

use std::time::Duration;

use bytes::Bytes;

use super::cids::{closed_with, lost, short_packet_to};
use super::harness::{Pair, SERVER, addr};
use crate::cc::PathId;
use crate::proto::coding::VarInt;
use crate::proto::connection::TransportConfig;
use crate::proto::endpoint::DatagramEvent;
use crate::proto::error::TransportErrorCode;
use crate::proto::frame::{Dir, Frame, RetireConnectionId, Stream};
use crate::proto::streams::{StreamId, StreamsConfig, WriteError};
use crate::proto::transport_params::Side;

fn retire(seq: u64, out: &mut Vec<u8>) {
    Frame::RetireConnectionId(RetireConnectionId {
        path_id: None,
        sequence: VarInt::from_u64(seq).unwrap(),
    })
    .encode(out);
}

/// RETIRE_CONNECTION_ID flood: the client rotates to a fresh server connection ID every 50 ms (each rotation
/// retires the old one, and the server issues a replacement, RFC 9000 §5.1.2) and also retires, again, every
/// sequence number it retired before. Repeats are retransmissions the server must ignore (issuing a
/// replacement for each would push the client past its active_connection_id_limit, RFC 9000 §5.1.1); the
/// server keeps at most the client's limit (4) of connection IDs issued and routed. Retiring a sequence
/// number never issued is PROTOCOL_VIOLATION (RFC 9000 §19.16): `cids::rfc9000_19_16_retire_of_unissued_
/// sequence_is_protocol_violation`.
#[test]
fn a_retire_connection_id_flood_keeps_issued_connection_ids_bounded() {
    let mut p = Pair::new(None, TransportConfig::default(), 210);
    p.handshake();
    p.run_for(Duration::from_millis(500));
    let routes = p.server.ep.route_count();
    let mut rotations = 0;
    for _ in 0..60 {
        if p.client.conn().rotate_remote_cid(PathId(0)) {
            rotations += 1;
        }
        let lowest = p
            .server
            .conn()
            .paths
            .local_cids
            .active(PathId(0))
            .map(|(seq, _)| seq)
            .min()
            .unwrap();
        let mut f = Vec::new();
        for seq in 0..lowest {
            retire(seq, &mut f);
        }
        if !f.is_empty() {
            p.client.conn().inject_raw_frame_for_test(f);
        }
        p.run_for(Duration::from_millis(50));
        let s = p.server.conn();
        assert!(s.paths.local_cids.active_count(PathId(0)) <= 4);
        assert!(s.paths.local_cids.pending_len() <= 4);
        assert!(
            p.server.ep.route_count() <= routes,
            "{} routes",
            p.server.ep.route_count()
        );
        assert!(p.client.conn().remote_cid_count(PathId(0)) <= 4);
    }
    assert!(rotations >= 50, "only {rotations} rotations");
    assert!(lost(&p.client.events).is_none() && lost(&p.server.events).is_none());
}

/// RFC 9000 §4.6: "An endpoint that receives a frame with a stream ID exceeding the limit it has sent MUST
/// treat this as a connection error of type STREAM_LIMIT_ERROR". The server allows 100 bidirectional
/// streams: stream index 99 is fine, index 100 is not.
#[test]
fn rfc9000_4_6_a_stream_beyond_max_streams_is_stream_limit_error() {
    let mut p = Pair::new(None, TransportConfig::default(), 211);
    p.handshake();
    let last = StreamId::new(Side::Client, Dir::Bi, 99).unwrap();
    p.client.conn().inject_stream_frame_for_test(last, b"ok");
    p.run_for(Duration::from_millis(200));
    assert!(lost(&p.server.events).is_none());
    assert_eq!(
        p.server.conn().streams.stream_count(),
        100,
        "lower streams open implicitly"
    );
    let beyond = StreamId::new(Side::Client, Dir::Bi, 100).unwrap();
    p.client.conn().inject_stream_frame_for_test(beyond, b"too many");
    assert!(p.drive_until(Duration::from_secs(5), |p| lost(&p.client.events).is_some()));
    assert_eq!(
        closed_with(&p.client.events),
        Some(TransportErrorCode::STREAM_LIMIT_ERROR)
    );
}

/// Stream-ID exhaustion: a client keeps opening unidirectional streams at the server's limit (10), 300 in
/// all. The server's stream state never exceeds the limit: MAX_STREAMS is raised only as streams close
/// (RFC 9000 §4.6), so the client waits for credit instead of piling up streams.
#[test]
fn a_peer_opening_streams_at_the_limit_keeps_stream_state_bounded() {
    let transport = TransportConfig {
        streams: StreamsConfig {
            max_uni_streams: 10,
            ..StreamsConfig::default()
        },
        ..TransportConfig::default()
    };
    let mut p = Pair::new(None, transport, 212);
    p.handshake();
    let (mut opened, mut done) = (0, 0);
    let mut most = 0;
    let ok = p.drive_until(Duration::from_secs(60), |p| {
        let c = p.client.conn();
        while opened < 300 {
            let Some(id) = c.open_uni() else { break };
            c.write(id, Bytes::from_static(&[7; 100])).unwrap();
            c.finish(id).unwrap();
            opened += 1;
        }
        let now = p.now;
        let s = p.server.conn();
        most = most.max(s.streams.stream_count());
        assert!(
            s.streams.stream_count() <= 10,
            "{} streams",
            s.streams.stream_count()
        );
        while let Some(id) = s.accept_uni() {
            let _ = id;
        }
        for index in 0..300 {
            let id = StreamId::new(Side::Client, Dir::Uni, index).unwrap();
            loop {
                match s.read(id, usize::MAX, now) {
                    Ok(Some(_)) => {}
                    Ok(None) => {
                        done += 1;
                        break;
                    }
                    Err(_) => break,
                }
            }
        }
        done >= 300
    });
    assert!(ok, "{opened} opened, {done} read to the end");
    assert_eq!(most, 10, "the client never reached the limit");
}

/// A STREAM frame carrying the single byte `byte` at `offset` of stream `id`.
fn one_byte_frame(id: crate::proto::streams::StreamId, offset: u64, byte: u8) -> Vec<u8> {
    let mut f = Vec::new();
    Frame::Stream(Stream {
        id: id.to_varint(),
        offset: VarInt::from_u64(offset).unwrap(),
        fin: false,
        data: &[byte],
    })
    .encode(&mut f);
    f
}

/// The client sends one-byte STREAM frames on `id` at `offsets` (byte `byte(offset)`), 120 frames per
/// packet, then lets the pair settle.
fn send_one_byte_frames(
    p: &mut Pair,
    id: crate::proto::streams::StreamId,
    offsets: impl Iterator<Item = u64>,
    byte: impl Fn(u64) -> u8,
) {
    for batch in offsets.collect::<Vec<_>>().chunks(120) {
        let f: Vec<u8> = batch
            .iter()
            .flat_map(|&o| one_byte_frame(id, o, byte(o)))
            .collect();
        p.client.conn().inject_raw_frame_for_test(f);
        p.run_for(Duration::from_millis(2));
    }
    p.run_for(Duration::from_millis(100));
}

/// Out-of-order stream data: the client sends one byte out of every two, up to the end of the server's
/// 16 KiB stream window, then one byte beyond it. Everything within the window is buffered (at most the
/// window, in at most window/2 fragments); the byte beyond is FLOW_CONTROL_ERROR (RFC 9000 §4.1).
#[test]
fn rfc9000_4_1_out_of_order_stream_data_is_buffered_only_within_the_window() {
    let window = 16 * 1024u64;
    let transport = TransportConfig {
        streams: StreamsConfig {
            stream_window_bidi_remote: window,
            stream_window_bidi_local: window,
            ..StreamsConfig::default()
        },
        ..TransportConfig::default()
    };
    let mut p = Pair::new(None, transport, 213);
    p.handshake();
    let id = p.client.conn().open_bi().unwrap();
    // Offsets 1, 3, 5, …: nothing is readable, every byte is its own fragment.
    send_one_byte_frames(&mut p, id, (1..window).step_by(2), |_| 0x5a);
    assert!(lost(&p.server.events).is_none());
    let s = p.server.conn();
    assert_eq!(s.streams.read_buffered(id), Some(window / 2));
    assert!(s.streams.recv_window(id).unwrap() <= window);
    p.client
        .conn()
        .inject_raw_frame_for_test(one_byte_frame(id, window, 0x5a));
    assert!(p.drive_until(Duration::from_secs(5), |p| lost(&p.client.events).is_some()));
    assert_eq!(
        closed_with(&p.client.events),
        Some(TransportErrorCode::FLOW_CONTROL_ERROR)
    );
}

/// RFC 9000 §21.6: one byte out of every two within the window is within flow control but commits a
/// fragment per byte. With `recv_fragments: 1000`, the server closes with PROTOCOL_VIOLATION at the 1001st
/// fragment, having counted exactly 1000 before. The same 3000 bytes sent in order, one byte per frame, merge
/// into a few fragments: no error, and the stream reads back intact.
#[test]
fn rfc9000_21_6_stream_fragments_beyond_the_limit_are_protocol_violation() {
    let transport = || TransportConfig {
        limits: crate::proto::connection::ConnectionLimits {
            recv_fragments: 1000,
            ..Default::default()
        },
        ..TransportConfig::default()
    };
    // In order, one byte per frame: merged, nothing lost.
    let mut p = Pair::new(None, transport(), 215);
    p.handshake();
    let id = p.client.conn().open_bi().unwrap();
    send_one_byte_frames(&mut p, id, 0..3000, |o| o as u8);
    assert!(lost(&p.server.events).is_none());
    let s = p.server.conn();
    assert!(
        s.streams.recv_fragments() <= 3,
        "{} fragments",
        s.streams.recv_fragments()
    );
    let mut got = Vec::new();
    let now = p.now;
    while let Ok(Some(b)) = p.server.conn().streams.read(id, usize::MAX, now) {
        got.extend_from_slice(&b);
    }
    assert_eq!(got, (0..3000u64).map(|o| o as u8).collect::<Vec<_>>());
    assert_eq!(p.server.conn().streams.recv_fragments(), 0);

    // Out of order with gaps: one fragment per byte, up to the limit and one beyond.
    let mut p = Pair::new(None, transport(), 216);
    p.handshake();
    let id = p.client.conn().open_bi().unwrap();
    send_one_byte_frames(&mut p, id, (0..1000).map(|i| 1 + 2 * i), |_| 0x5a);
    assert!(lost(&p.server.events).is_none());
    assert_eq!(p.server.conn().streams.recv_fragments(), 1000);
    p.client
        .conn()
        .inject_raw_frame_for_test(one_byte_frame(id, 2001, 0x5a));
    assert!(p.drive_until(Duration::from_secs(5), |p| lost(&p.client.events).is_some()));
    assert_eq!(
        closed_with(&p.client.events),
        Some(TransportErrorCode::PROTOCOL_VIOLATION)
    );
}

/// A peer that never reads: the client tries to write 50 MB on one stream while the server's application
/// accepts the stream and never reads it. The server buffers at most its stream window (no auto-tuning
/// without reads), the client at most its send buffer; once both are full the client stops sending data
/// (only flow-control signalling remains) and nothing grows, until the idle timeout closes the connection.
#[test]
fn a_peer_that_never_reads_keeps_both_sides_within_flow_control() {
    let mut p = Pair::new(None, TransportConfig::default(), 214);
    p.handshake();
    let streams = StreamsConfig::default();
    let big = Bytes::from(vec![0x42u8; 50 * 1024 * 1024]);
    let id = p.client.conn().open_bi().unwrap();
    let mut written = 0usize;
    let check = |p: &mut Pair, written: &mut usize| {
        let c = p.client.conn();
        match c.write(id, big.slice(*written..)) {
            Ok(n) => *written += n,
            Err(WriteError::Blocked) => {}
            Err(e) => panic!("{e:?}"),
        }
        let sent_buffered = c.streams.send_buffered(id).unwrap();
        assert!(
            sent_buffered <= streams.send_buffer,
            "client buffers {sent_buffered} B"
        );
        let s = p.server.conn();
        while s.accept_bi().is_some() {}
        let buffered = s.streams.read_buffered(id).unwrap_or(0);
        let window = s.streams.recv_window(id).unwrap_or(0);
        assert!(
            window <= streams.stream_window_bidi_remote,
            "window grew to {window} B"
        );
        assert!(
            buffered <= window,
            "server buffers {buffered} B, window {window} B"
        );
        assert!(s.streams.conn_recv_window() <= streams.conn_window);
    };
    // Steps of 10 ms (the harness's `drive_until` would jump to the idle timeout once nothing moves).
    for _ in 0..500 {
        check(&mut p, &mut written);
        p.run_for(Duration::from_millis(10));
    }
    let before = p.client.conn().stats();
    for _ in 0..2000 {
        check(&mut p, &mut written);
        p.run_for(Duration::from_millis(10));
    }
    let after = p.client.conn().stats();
    assert_eq!(
        p.server.conn().streams.read_buffered(id),
        Some(streams.stream_window_bidi_remote),
        "the window is full"
    );
    assert!(
        written as u64 <= streams.stream_window_bidi_remote + streams.send_buffer,
        "the client took {written} B"
    );
    // 20 s with full windows (within the 30 s idle timeout): a few STREAM_DATA_BLOCKED at most, no data.
    let sent = after.bytes_sent - before.bytes_sent;
    assert!(sent < 20_000, "the client sent {sent} B while blocked");
    assert!(
        !p.client.conn().is_closed() && !p.server.conn().is_closed(),
        "{:?} {:?} at {:?}",
        lost(&p.client.events),
        lost(&p.server.events),
        after.bytes_sent
    );
}

/// Stateless-reset oracle (RFC 9000 §10.3.1): after the client retires a connection ID, the server endpoint
/// no longer knows it and answers a packet for it with a Stateless Reset; the client must not act on the
/// token of a retired connection ID ("MUST NOT check for any stateless reset tokens [...] for connection IDs
/// that have been retired"), so an attacker who saw the old connection ID cannot kill the connection with
/// it. (No reset for a live connection ID and at most one smaller reset per trigger:
/// `reset::rfc9000_10_3_no_stateless_reset_for_a_known_cid`, rate limit:
/// `reset::rfc9000_10_3_stateless_resets_are_rate_limited`.)
#[test]
fn rfc9000_10_3_1_a_reset_for_a_retired_connection_id_does_not_kill_the_connection() {
    let mut p = Pair::new(None, TransportConfig::default(), 215);
    p.handshake();
    p.run_for(Duration::from_millis(500));
    let old = p.client.conn().remote_cid(PathId(0)).unwrap();
    assert!(p.client.conn().rotate_remote_cid(PathId(0)));
    p.run_for(Duration::from_millis(500));
    let mut trigger = short_packet_to(&old);
    let now = p.now;
    let client = addr(super::harness::CLIENT);
    let Some(DatagramEvent::Response(t, reset)) = p.server.ep.handle(now, None, client, None, &mut trigger)
    else {
        panic!("the retired connection ID is still routed");
    };
    let mut reset = reset[..t.size].to_vec();
    match p.client.ep.handle(now, None, addr(SERVER), None, &mut reset) {
        Some(DatagramEvent::Known(h)) => {
            let c = p.client.conns.get_mut(&h).unwrap();
            c.handle_datagram(now, None, addr(SERVER), None, &mut reset);
        }
        None => {}
        other => panic!("{other:?}"),
    }
    p.run_for(Duration::from_millis(500));
    assert!(lost(&p.client.events).is_none(), "{:?}", lost(&p.client.events));
    assert!(!p.client.conn().is_closed());
}
