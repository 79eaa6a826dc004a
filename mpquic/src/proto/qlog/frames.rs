//! Frames as qlog `QuicFrame` objects (draft-ietf-quic-qlog-quic-events-03 names, lowercase `frame_type`),
//! decoded again from a packet's plaintext payload: the send and receive paths hand over the bytes they
//! already have, and nothing is decoded unless qlog is on.
//!
//! The multipath frames (draft-ietf-quic-multipath-21) follow the same pattern: `path_ack` (with `path_id`
//! and `acked_ranges`), `path_abandon`, `path_status_backup` / `path_status_available`,
//! `path_new_connection_id`, `path_retire_connection_id`, `max_path_id`, `paths_blocked`,
//! `path_cids_blocked`.

use std::time::Duration;

use crate::proto::frame::{Ack, Dir, Frame, decode_frames};

use super::json::{Arr, Obj};

/// The `raw_frame_type` written for a frame whose type could not be decoded: 0x21, the smallest frame type
/// RFC 9000 §19 does not define and no extension used here defines either.
const UNDECODED_FRAME_TYPE: u64 = 0x21;

/// Writes one object per frame of `payload`; a frame that does not decode ends the list with an `unknown`
/// entry. `ack_delay_exponent` scales the ACK Delay fields (the sender's exponent).
pub(crate) fn write_frames(a: &mut Arr<'_>, payload: &[u8], ack_delay_exponent: u8) {
    for frame in decode_frames(payload) {
        match frame {
            Ok(f) => a.obj(|o| write_frame(o, &f, ack_delay_exponent)),
            Err(e) => {
                // qlog 0.3 `UnknownFrame`: `raw_frame_type` is required; a frame whose type did not even
                // decode is logged with the reserved type 0x21 (RFC 9000 §12.4 leaves it undefined).
                a.obj(|o| {
                    o.str("frame_type", "unknown");
                    o.u64("raw_frame_type", e.frame_type.unwrap_or(UNDECODED_FRAME_TYPE));
                });
                break;
            }
        }
    }
}

fn dir(d: Dir) -> &'static str {
    match d {
        Dir::Bi => "bidirectional",
        Dir::Uni => "unidirectional",
    }
}

fn write_ack(o: &mut Obj<'_>, ack: &Ack<'_>, ack_delay_exponent: u8) {
    match ack.path_id {
        Some(p) => {
            o.str("frame_type", "path_ack");
            o.u64("path_id", u64::from(p.0));
        }
        None => o.str("frame_type", "ack"),
    }
    let delay_us = ack
        .delay
        .into_inner()
        .checked_shl(u32::from(ack_delay_exponent))
        .unwrap_or(u64::MAX);
    o.ms("ack_delay", Duration::from_micros(delay_us));
    // qlog lists ranges smallest first, each as [smallest, largest].
    let ranges: Vec<_> = ack.iter().collect();
    o.arr("acked_ranges", |a| {
        for r in ranges.iter().rev() {
            a.arr(|a| {
                a.u64(*r.start());
                a.u64(*r.end());
            });
        }
    });
    if let Some(e) = ack.ecn {
        o.u64("ect0", e.ect0.into_inner());
        o.u64("ect1", e.ect1.into_inner());
        o.u64("ce", e.ce.into_inner());
    }
}

fn path_frame(o: &mut Obj<'_>, path: Option<crate::cc::PathId>, plain: &str, multipath: &str) {
    match path {
        Some(p) => {
            o.str("frame_type", multipath);
            o.u64("path_id", u64::from(p.0));
        }
        None => o.str("frame_type", plain),
    }
}

fn write_frame(o: &mut Obj<'_>, f: &Frame<'_>, ack_delay_exponent: u8) {
    match f {
        Frame::Padding(n) => {
            // qlog 0.3 `PaddingFrame`: `payload_length` is required; both are the padding bytes.
            o.str("frame_type", "padding");
            o.u64("length", *n as u64);
            o.u64("payload_length", *n as u64);
        }
        Frame::Ping => o.str("frame_type", "ping"),
        Frame::Ack(ack) => write_ack(o, ack, ack_delay_exponent),
        Frame::ResetStream(r) => {
            o.str("frame_type", "reset_stream");
            o.u64("stream_id", r.id.into_inner());
            o.u64("error_code", r.error_code.into_inner());
            o.u64("final_size", r.final_size.into_inner());
        }
        Frame::StopSending(s) => {
            o.str("frame_type", "stop_sending");
            o.u64("stream_id", s.id.into_inner());
            o.u64("error_code", s.error_code.into_inner());
        }
        Frame::Crypto(c) => {
            o.str("frame_type", "crypto");
            o.u64("offset", c.offset.into_inner());
            o.u64("length", c.data.len() as u64);
        }
        Frame::NewToken(t) => {
            o.str("frame_type", "new_token");
            // qlog 0.3 `Token`: the bytes go in `raw` (a `RawInfo`).
            o.obj("token", |o| {
                o.obj("raw", |o| {
                    o.u64("length", t.len() as u64);
                    o.hex("data", t);
                })
            });
        }
        Frame::Stream(s) => {
            o.str("frame_type", "stream");
            o.u64("stream_id", s.id.into_inner());
            o.u64("offset", s.offset.into_inner());
            o.u64("length", s.data.len() as u64);
            o.bool("fin", s.fin);
        }
        Frame::MaxData(v) => {
            o.str("frame_type", "max_data");
            o.u64("maximum", v.into_inner());
        }
        Frame::MaxStreamData { id, max } => {
            o.str("frame_type", "max_stream_data");
            o.u64("stream_id", id.into_inner());
            o.u64("maximum", max.into_inner());
        }
        Frame::MaxStreams { dir: d, count } => {
            o.str("frame_type", "max_streams");
            o.str("stream_type", dir(*d));
            o.u64("maximum", count.into_inner());
        }
        Frame::DataBlocked(v) => {
            o.str("frame_type", "data_blocked");
            o.u64("limit", v.into_inner());
        }
        Frame::StreamDataBlocked { id, limit } => {
            o.str("frame_type", "stream_data_blocked");
            o.u64("stream_id", id.into_inner());
            o.u64("limit", limit.into_inner());
        }
        Frame::StreamsBlocked { dir: d, limit } => {
            o.str("frame_type", "streams_blocked");
            o.str("stream_type", dir(*d));
            o.u64("limit", limit.into_inner());
        }
        Frame::NewConnectionId(n) => {
            path_frame(o, n.path_id, "new_connection_id", "path_new_connection_id");
            o.u64("sequence_number", n.sequence.into_inner());
            o.u64("retire_prior_to", n.retire_prior_to.into_inner());
            o.u64("connection_id_length", n.id.len() as u64);
            o.hex("connection_id", n.id);
            o.hex("stateless_reset_token", &n.reset_token);
        }
        Frame::RetireConnectionId(r) => {
            path_frame(o, r.path_id, "retire_connection_id", "path_retire_connection_id");
            o.u64("sequence_number", r.sequence.into_inner());
        }
        Frame::PathChallenge(d) => {
            o.str("frame_type", "path_challenge");
            o.hex("data", d);
        }
        Frame::PathResponse(d) => {
            o.str("frame_type", "path_response");
            o.hex("data", d);
        }
        Frame::ConnectionClose(c) => {
            // `error_space` spelled as quiche's qlog crate reads it (`transport_error`, `application_error`);
            // the error code is numeric, so there is no separate raw code.
            o.str("frame_type", "connection_close");
            o.str("error_space", "transport_error");
            o.u64("error_code", c.error_code.into_inner());
            o.str("reason", &String::from_utf8_lossy(c.reason));
            o.u64("trigger_frame_type", c.frame_type.into_inner());
        }
        Frame::ApplicationClose(c) => {
            o.str("frame_type", "connection_close");
            o.str("error_space", "application_error");
            o.u64("error_code", c.error_code.into_inner());
            o.str("reason", &String::from_utf8_lossy(c.reason));
        }
        Frame::HandshakeDone => o.str("frame_type", "handshake_done"),
        Frame::Datagram(d) => {
            o.str("frame_type", "datagram");
            o.u64("length", d.data.len() as u64);
        }
        Frame::PathAbandon(p) => {
            o.str("frame_type", "path_abandon");
            o.u64("path_id", u64::from(p.path_id.0));
            o.u64("error_code", p.error_code.into_inner());
        }
        Frame::PathStatus(s) => {
            let ty = if s.available {
                "path_status_available"
            } else {
                "path_status_backup"
            };
            o.str("frame_type", ty);
            o.u64("path_id", u64::from(s.path_id.0));
            o.u64("path_status_sequence_number", s.sequence.into_inner());
        }
        Frame::MaxPathId(p) => {
            o.str("frame_type", "max_path_id");
            o.u64("maximum_path_id", u64::from(p.0));
        }
        Frame::PathsBlocked(p) => {
            o.str("frame_type", "paths_blocked");
            o.u64("maximum_path_id", u64::from(p.0));
        }
        Frame::PathCidsBlocked(b) => {
            o.str("frame_type", "path_cids_blocked");
            o.u64("path_id", u64::from(b.path_id.0));
            o.u64("next_sequence_number", b.next_sequence.into_inner());
        }
    }
}
