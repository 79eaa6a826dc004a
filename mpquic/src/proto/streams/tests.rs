//! Stream layer tests: shared helpers and one named test per rejection rule (checking the transport error
//! code). Behaviour tests are in `behaviour`, property tests in `proptests`.

#![allow(clippy::disallowed_methods)] // tests take a wall-clock base instant once

use std::time::Instant;

use bytes::Bytes;

use super::*;
use crate::proto::error::{TransportError, TransportErrorCode};
use crate::proto::frame::{Frame, ResetStream, StopSending, decode_frames};

mod behaviour;
mod proptests;
mod reassembly;
mod windows;

pub(super) fn v(x: u64) -> VarInt {
    VarInt::from_u64(x).unwrap()
}

pub(super) fn t0() -> Instant {
    Instant::now()
}

pub(super) fn params(c: &StreamsConfig) -> TransportParameters {
    let mut p = TransportParameters::default();
    c.apply_to(&mut p);
    p
}

/// A client and a server that exchanged transport parameters.
pub(super) fn pair(client: StreamsConfig, server: StreamsConfig) -> (Streams, Streams) {
    let mut c = Streams::new(Side::Client, client.clone());
    let mut s = Streams::new(Side::Server, server.clone());
    c.set_peer_params(&params(&server));
    s.set_peer_params(&params(&client));
    (c, s)
}

pub(super) fn small(window: u64) -> StreamsConfig {
    StreamsConfig {
        max_bidi_streams: 4,
        max_uni_streams: 4,
        stream_window_bidi_local: window,
        stream_window_bidi_remote: window,
        stream_window_uni: window,
        max_stream_window: window,
        conn_window: 4 * window,
        max_conn_window: 4 * window,
        send_buffer: 1 << 20,
        ..StreamsConfig::default()
    }
}

pub(super) fn sid(side: Side, dir: Dir, index: u64) -> StreamId {
    StreamId::new(side, dir, index).unwrap()
}

/// Delivers a control frame through the codec, as a connection would.
pub(super) fn deliver_control(to: &mut Streams, f: &StreamControlFrame) -> Result<(), TransportError> {
    let mut buf = Vec::new();
    f.encode(&mut buf);
    assert_eq!(buf.len(), f.encoded_len());
    let frame = decode_frames(&buf).next().unwrap().unwrap();
    match frame {
        Frame::MaxData(m) => to.on_max_data(m),
        Frame::MaxStreamData { id, max } => to.on_max_stream_data(id, max)?,
        Frame::MaxStreams { dir, count } => to.on_max_streams(dir, count),
        Frame::DataBlocked(l) => to.on_data_blocked(l),
        Frame::StreamDataBlocked { id, limit } => to.on_stream_data_blocked(id, limit)?,
        Frame::StreamsBlocked { dir, limit } => to.on_streams_blocked(dir, limit),
        Frame::ResetStream(r) => to.on_reset_stream(&r)?,
        Frame::StopSending(s) => to.on_stop_sending(&s)?,
        other => panic!("unexpected {other:?}"),
    }
    Ok(())
}

/// Delivers a STREAM frame through the codec (zero-copy from the "packet").
pub(super) fn deliver_stream(to: &mut Streams, f: &StreamFrame) -> Result<(), TransportError> {
    let mut buf = Vec::new();
    f.encode(&mut buf, true);
    assert_eq!(buf.len(), f.encoded_len(true));
    let payload = Bytes::from(buf);
    let frame = decode_frames(&payload).next().unwrap().unwrap();
    let Frame::Stream(s) = frame else { panic!() };
    to.on_stream_frame(&s, &payload, t0())
}

/// Moves every frame from `a` to `b` and acknowledges it; returns how many frames moved.
pub(super) fn flush(a: &mut Streams, b: &mut Streams) -> usize {
    let mut n = 0;
    while let Some(f) = a.poll_control_frame(1200) {
        deliver_control(b, &f).unwrap();
        a.on_control_frame_acked(&f);
        n += 1;
    }
    while let Some(f) = a.write_stream_frame(1200) {
        deliver_stream(b, &f).unwrap();
        a.on_stream_frame_acked(f.record());
        n += 1;
    }
    n
}

pub(super) fn read_all(
    s: &mut Streams,
    id: StreamId,
    now: Instant,
) -> (Vec<u8>, Result<Option<Bytes>, ReadError>) {
    let mut out = Vec::new();
    loop {
        match s.read(id, usize::MAX, now) {
            Ok(Some(b)) => out.extend_from_slice(&b),
            r => return (out, r),
        }
    }
}

pub(super) fn controls(s: &mut Streams) -> Vec<StreamControlFrame> {
    std::iter::from_fn(|| s.poll_control_frame(1200)).collect()
}

pub(super) fn code(r: Result<(), TransportError>) -> TransportErrorCode {
    r.unwrap_err().code
}

pub(super) const SSE: TransportErrorCode = TransportErrorCode::STREAM_STATE_ERROR;
pub(super) const FCE: TransportErrorCode = TransportErrorCode::FLOW_CONTROL_ERROR;
pub(super) const FSE: TransportErrorCode = TransportErrorCode::FINAL_SIZE_ERROR;

// ----- rejection rules -----

#[test]
fn rfc9000_19_8_stream_frame_for_send_only_stream_is_stream_state_error() {
    let (mut c, _) = pair(small(1000), small(1000));
    let id = c.open_uni().unwrap();
    let e = c
        .on_stream_data(id, 0, Bytes::from_static(b"x"), false, t0())
        .unwrap_err();
    assert_eq!(e.code, SSE);
    assert_eq!(e.frame_type, Some(0x0a));
}

#[test]
fn rfc9000_19_8_stream_frame_for_unopened_local_stream_is_stream_state_error() {
    let (mut c, _) = pair(small(1000), small(1000));
    let id = sid(Side::Client, Dir::Bi, 0);
    assert_eq!(code(c.on_stream_data(id, 0, Bytes::new(), true, t0())), SSE);
    c.open_bi().unwrap();
    c.on_stream_data(id, 0, Bytes::new(), true, t0()).unwrap();
}

#[test]
fn rfc9000_19_4_reset_stream_for_send_only_stream_is_stream_state_error() {
    let (mut c, _) = pair(small(1000), small(1000));
    let id = c.open_uni().unwrap();
    let f = ResetStream {
        id: id.to_varint(),
        error_code: v(1),
        final_size: v(0),
    };
    let e = c.on_reset_stream(&f).unwrap_err();
    assert_eq!((e.code, e.frame_type), (SSE, Some(0x04)));
}

#[test]
fn rfc9000_19_5_stop_sending_for_receive_only_stream_is_stream_state_error() {
    let (_, mut s) = pair(small(1000), small(1000));
    // A client-initiated unidirectional stream is receive-only for the server.
    let f = StopSending {
        id: sid(Side::Client, Dir::Uni, 0).to_varint(),
        error_code: v(1),
    };
    let e = s.on_stop_sending(&f).unwrap_err();
    assert_eq!((e.code, e.frame_type), (SSE, Some(0x05)));
}

#[test]
fn rfc9000_19_5_stop_sending_for_unopened_local_stream_is_stream_state_error() {
    let (_, mut s) = pair(small(1000), small(1000));
    let f = StopSending {
        id: sid(Side::Server, Dir::Bi, 0).to_varint(),
        error_code: v(1),
    };
    assert_eq!(code(s.on_stop_sending(&f)), SSE);
}

#[test]
fn rfc9000_19_10_max_stream_data_for_receive_only_stream_is_stream_state_error() {
    let (_, mut s) = pair(small(1000), small(1000));
    let id = sid(Side::Client, Dir::Uni, 0).to_varint();
    let e = s.on_max_stream_data(id, v(5000)).unwrap_err();
    assert_eq!((e.code, e.frame_type), (SSE, Some(0x11)));
}

#[test]
fn rfc9000_19_10_max_stream_data_for_unopened_local_stream_is_stream_state_error() {
    let (mut c, _) = pair(small(1000), small(1000));
    let id = sid(Side::Client, Dir::Uni, 0).to_varint();
    assert_eq!(code(c.on_max_stream_data(id, v(5000))), SSE);
}

#[test]
fn rfc9000_19_13_stream_data_blocked_for_send_only_stream_is_stream_state_error() {
    let (mut c, _) = pair(small(1000), small(1000));
    let id = c.open_uni().unwrap();
    let e = c.on_stream_data_blocked(id.to_varint(), v(0)).unwrap_err();
    assert_eq!((e.code, e.frame_type), (SSE, Some(0x15)));
}

#[test]
fn rfc9000_4_6_stream_above_advertised_limit_is_stream_limit_error() {
    let (_, mut s) = pair(small(1000), small(1000));
    // We advertised 4 client bidi streams: indices 0..=3.
    s.on_stream_data(sid(Side::Client, Dir::Bi, 3), 0, Bytes::new(), false, t0())
        .unwrap();
    let e = s
        .on_stream_data(sid(Side::Client, Dir::Bi, 4), 0, Bytes::new(), false, t0())
        .unwrap_err();
    assert_eq!(e.code, TransportErrorCode::STREAM_LIMIT_ERROR);
    // Every frame that opens streams is checked.
    let e = s
        .on_max_stream_data(sid(Side::Client, Dir::Bi, 7).to_varint(), v(1))
        .unwrap_err();
    assert_eq!(e.code, TransportErrorCode::STREAM_LIMIT_ERROR);
    let f = ResetStream {
        id: sid(Side::Client, Dir::Uni, 4).to_varint(),
        error_code: v(0),
        final_size: v(0),
    };
    assert_eq!(
        code(s.on_reset_stream(&f)),
        TransportErrorCode::STREAM_LIMIT_ERROR
    );
}

#[test]
fn rfc9000_4_1_data_beyond_max_stream_data_is_flow_control_error() {
    let (_, mut s) = pair(small(1000), small(1000));
    let id = sid(Side::Client, Dir::Bi, 0);
    s.on_stream_data(id, 0, Bytes::from(vec![0; 1000]), false, t0())
        .unwrap();
    let e = s
        .on_stream_data(id, 1000, Bytes::from_static(b"x"), false, t0())
        .unwrap_err();
    assert_eq!(e.code, FCE);
}

#[test]
fn rfc9000_4_1_data_beyond_max_data_is_flow_control_error() {
    let (_, mut s) = pair(small(1000), small(1000));
    // Connection window 4000 over streams of window 1000: the fifth kilobyte breaks it. Gaps count too:
    // the highest offset received is what is charged.
    for i in 0..4 {
        s.on_stream_data(
            sid(Side::Client, Dir::Uni, i),
            999,
            Bytes::from_static(b"x"),
            false,
            t0(),
        )
        .unwrap();
    }
    let e = s
        .on_stream_data(
            sid(Side::Client, Dir::Bi, 0),
            0,
            Bytes::from_static(b"x"),
            false,
            t0(),
        )
        .unwrap_err();
    assert_eq!(e.code, FCE);
}

#[test]
fn rfc9000_4_5_final_size_change_is_final_size_error() {
    let (_, mut s) = pair(small(1000), small(1000));
    let id = sid(Side::Client, Dir::Uni, 0);
    s.on_stream_data(id, 0, Bytes::from_static(b"abc"), true, t0())
        .unwrap();
    // The same final size again is fine.
    s.on_stream_data(id, 1, Bytes::from_static(b"bc"), true, t0())
        .unwrap();
    let e = s
        .on_stream_data(id, 0, Bytes::from_static(b"ab"), true, t0())
        .unwrap_err();
    assert_eq!((e.code, e.frame_type), (FSE, Some(0x0b)));
}

#[test]
fn rfc9000_4_5_data_beyond_final_size_is_final_size_error() {
    let (_, mut s) = pair(small(1000), small(1000));
    let id = sid(Side::Client, Dir::Uni, 0);
    s.on_stream_data(id, 0, Bytes::from_static(b"abc"), true, t0())
        .unwrap();
    assert_eq!(
        code(s.on_stream_data(id, 3, Bytes::from_static(b"d"), false, t0())),
        FSE
    );
}

#[test]
fn rfc9000_4_5_final_size_below_received_data_is_final_size_error() {
    let (_, mut s) = pair(small(1000), small(1000));
    let id = sid(Side::Client, Dir::Uni, 0);
    s.on_stream_data(id, 10, Bytes::from_static(b"abc"), false, t0())
        .unwrap();
    assert_eq!(
        code(s.on_stream_data(id, 0, Bytes::from_static(b"ab"), true, t0())),
        FSE
    );
    let f = ResetStream {
        id: id.to_varint(),
        error_code: v(0),
        final_size: v(12),
    };
    assert_eq!(code(s.on_reset_stream(&f)), FSE);
}

#[test]
fn rfc9000_4_5_reset_stream_changing_final_size_is_final_size_error() {
    let (_, mut s) = pair(small(1000), small(1000));
    let id = sid(Side::Client, Dir::Uni, 0);
    s.on_stream_data(id, 0, Bytes::from_static(b"abc"), true, t0())
        .unwrap();
    let mut f = ResetStream {
        id: id.to_varint(),
        error_code: v(7),
        final_size: v(4),
    };
    assert_eq!(code(s.on_reset_stream(&f)), FSE);
    f.final_size = v(3);
    s.on_reset_stream(&f).unwrap();
    // A duplicate RESET_STREAM is harmless.
    s.on_reset_stream(&f).unwrap();
}

#[test]
fn rfc9000_4_1_reset_final_size_beyond_limit_is_flow_control_error() {
    let (_, mut s) = pair(small(1000), small(1000));
    let f = ResetStream {
        id: sid(Side::Client, Dir::Uni, 0).to_varint(),
        error_code: v(0),
        final_size: v(1001),
    };
    assert_eq!(code(s.on_reset_stream(&f)), FCE);
}

#[test]
fn frames_for_closed_streams_are_ignored() {
    let (mut c, mut s) = pair(small(1000), small(1000));
    let id = c.open_uni().unwrap();
    c.write(id, Bytes::from_static(b"hi")).unwrap();
    c.finish(id).unwrap();
    flush(&mut c, &mut s);
    assert_eq!(s.accept_uni(), Some(id));
    let (data, end) = read_all(&mut s, id, t0());
    assert_eq!((data.as_slice(), end), (&b"hi"[..], Ok(None)));
    // Fully read: the stream is gone; retransmissions are ignored.
    s.on_stream_data(id, 0, Bytes::from_static(b"hi"), true, t0())
        .unwrap();
    assert_eq!(s.stream_count(), 0);
    assert_eq!(s.read(id, 10, t0()), Err(ReadError::ClosedStream));
}
