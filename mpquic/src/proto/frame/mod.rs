//! The frame codec: every frame of RFC 9000 §19, DATAGRAM (RFC 9221 §4) and the frames of
//! draft-ietf-quic-multipath-21 (PATH_ACK, PATH_ABANDON, PATH_STATUS_*, PATH_NEW/RETIRE_CONNECTION_ID,
//! MAX_PATH_ID, PATHS_BLOCKED, PATH_CIDS_BLOCKED).
//!
//! Decoding is zero-copy: a [`Frame<'a>`] borrows the data it carries (STREAM, CRYPTO, DATAGRAM, tokens,
//! connection IDs, reason phrases, ACK ranges) from the decrypted packet payload. [`decode_frames`] yields the
//! frames of a payload in order and stops at the first malformed one with a [`TransportError`] that carries the
//! code, the frame type and a static reason. Every field rule that can be checked without connection state is
//! checked here (lengths, limits, ACK range underflow); rules that need state (stream direction, path limits,
//! role) are the connection's.
//!
//! Encoding writes into any [`BufMut`]; [`Frame::encoded_len`] predicts the exact size. STREAM and DATAGRAM
//! frames are written with an explicit length by [`Frame::encode`]; the packet builder can omit it for the last
//! frame of a packet through [`Stream::encode`] / [`Datagram::encode`].
//!
//! Families: [`ack`] (ACK, PATH_ACK), [`stream`] (data, stream control and flow control), [`conn`] (connection
//! IDs, tokens, path validation, closing) and [`multipath`] (the remaining multipath frames).

use std::fmt;

use bytes::BufMut;

use crate::cc::PathId;
use crate::proto::coding::{Decoder, VarInt};
use crate::proto::error::TransportError;

pub mod ack;
pub mod conn;
pub mod multipath;
pub mod stream;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

pub use ack::{Ack, AckFields, AckIter, AckRangesError, EcnCounts, ack_encoded_len, encode_ack};
pub use conn::{ApplicationClose, ConnectionClose, NewConnectionId, RetireConnectionId};
pub use multipath::{PathAbandon, PathCidsBlocked, PathStatus};
pub use stream::{Crypto, Datagram, Dir, ResetStream, StopSending, Stream};

/// A frame type: a variable-length integer at the start of every frame (RFC 9000 §12.4).
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FrameType(pub u64);

macro_rules! frame_types {
    ($($name:ident = $value:expr, $doc:literal;)*) => {
        impl FrameType {
            $(#[doc = $doc] pub const $name: FrameType = FrameType($value);)*

            /// The frame type's name in its specification (STREAM for all of 0x08–0x0f), if it is known.
            pub fn name(self) -> Option<&'static str> {
                match self.0 {
                    $($value => Some(stringify!($name)),)*
                    0x09..=0x0f => Some("STREAM"),
                    _ => None,
                }
            }
        }
    };
}

frame_types! {
    PADDING = 0x00, "PADDING (RFC 9000 §19.1).";
    PING = 0x01, "PING (RFC 9000 §19.2).";
    ACK = 0x02, "ACK without ECN counts (RFC 9000 §19.3).";
    ACK_ECN = 0x03, "ACK with ECN counts (RFC 9000 §19.3).";
    RESET_STREAM = 0x04, "RESET_STREAM (RFC 9000 §19.4).";
    STOP_SENDING = 0x05, "STOP_SENDING (RFC 9000 §19.5).";
    CRYPTO = 0x06, "CRYPTO (RFC 9000 §19.6).";
    NEW_TOKEN = 0x07, "NEW_TOKEN (RFC 9000 §19.7).";
    STREAM = 0x08, "STREAM with no flag bits set; 0x08–0x0f are all STREAM (RFC 9000 §19.8).";
    MAX_DATA = 0x10, "MAX_DATA (RFC 9000 §19.9).";
    MAX_STREAM_DATA = 0x11, "MAX_STREAM_DATA (RFC 9000 §19.10).";
    MAX_STREAMS_BIDI = 0x12, "MAX_STREAMS for bidirectional streams (RFC 9000 §19.11).";
    MAX_STREAMS_UNI = 0x13, "MAX_STREAMS for unidirectional streams (RFC 9000 §19.11).";
    DATA_BLOCKED = 0x14, "DATA_BLOCKED (RFC 9000 §19.12).";
    STREAM_DATA_BLOCKED = 0x15, "STREAM_DATA_BLOCKED (RFC 9000 §19.13).";
    STREAMS_BLOCKED_BIDI = 0x16, "STREAMS_BLOCKED for bidirectional streams (RFC 9000 §19.14).";
    STREAMS_BLOCKED_UNI = 0x17, "STREAMS_BLOCKED for unidirectional streams (RFC 9000 §19.14).";
    NEW_CONNECTION_ID = 0x18, "NEW_CONNECTION_ID (RFC 9000 §19.15).";
    RETIRE_CONNECTION_ID = 0x19, "RETIRE_CONNECTION_ID (RFC 9000 §19.16).";
    PATH_CHALLENGE = 0x1a, "PATH_CHALLENGE (RFC 9000 §19.17).";
    PATH_RESPONSE = 0x1b, "PATH_RESPONSE (RFC 9000 §19.18).";
    CONNECTION_CLOSE = 0x1c, "CONNECTION_CLOSE signalling a QUIC-layer error (RFC 9000 §19.19).";
    APPLICATION_CLOSE = 0x1d, "CONNECTION_CLOSE signalling an application error (RFC 9000 §19.19, type 0x1d).";
    HANDSHAKE_DONE = 0x1e, "HANDSHAKE_DONE (RFC 9000 §19.20).";
    DATAGRAM = 0x30, "DATAGRAM without a Length field (RFC 9221 §4).";
    DATAGRAM_LEN = 0x31, "DATAGRAM with a Length field (RFC 9221 §4).";
    PATH_ACK = 0x3e, "PATH_ACK without ECN counts (draft-ietf-quic-multipath-21).";
    PATH_ACK_ECN = 0x3f, "PATH_ACK with ECN counts (draft-ietf-quic-multipath-21).";
    PATH_ABANDON = 0x3e75, "PATH_ABANDON (draft-ietf-quic-multipath-21).";
    PATH_STATUS_BACKUP = 0x3e76, "PATH_STATUS_BACKUP (draft-ietf-quic-multipath-21).";
    PATH_STATUS_AVAILABLE = 0x3e77, "PATH_STATUS_AVAILABLE (draft-ietf-quic-multipath-21).";
    PATH_NEW_CONNECTION_ID = 0x3e78, "PATH_NEW_CONNECTION_ID (draft-ietf-quic-multipath-21).";
    PATH_RETIRE_CONNECTION_ID = 0x3e79, "PATH_RETIRE_CONNECTION_ID (draft-ietf-quic-multipath-21).";
    MAX_PATH_ID = 0x3e7a, "MAX_PATH_ID (draft-ietf-quic-multipath-21).";
    PATHS_BLOCKED = 0x3e7b, "PATHS_BLOCKED (draft-ietf-quic-multipath-21).";
    PATH_CIDS_BLOCKED = 0x3e7c, "PATH_CIDS_BLOCKED (draft-ietf-quic-multipath-21).";
}

impl FrameType {
    /// Whether this is one of the multipath frame types (draft-ietf-quic-multipath-21).
    pub fn is_multipath(self) -> bool {
        matches!(self.0, 0x3e | 0x3f | 0x3e75..=0x3e7c)
    }

    /// Whether a frame of this type may be carried in a packet of `kind` (RFC 9000 §12.4, Table 3;
    /// multipath frames only in 1-RTT packets). Unknown types are allowed nowhere.
    pub fn allowed_in(self, kind: PacketKind) -> bool {
        use PacketKind::*;
        match self.0 {
            // PADDING, PING: IH01. CONNECTION_CLOSE 0x1c: ih01.
            0x00 | 0x01 | 0x1c => true,
            // ACK, CRYPTO: IH_1.
            0x02 | 0x03 | 0x06 => kind != ZeroRtt,
            // NEW_TOKEN, PATH_RESPONSE, HANDSHAKE_DONE: ___1.
            0x07 | 0x1b | 0x1e => kind == OneRtt,
            // RFC 9000 §12.4 note on Table 3: "only a CONNECTION_CLOSE frame of type 0x1c can appear in
            // Initial or Handshake packets"; the rest of Table 3's __01 frames; and DATAGRAM, which RFC 9221
            // confines to 0-RTT and 1-RTT packets.
            0x04 | 0x05 | 0x08..=0x1a | 0x1d | 0x30 | 0x31 => matches!(kind, ZeroRtt | OneRtt),
            // draft-ietf-quic-multipath-21: the multipath frames are only allowed in 1-RTT packets.
            _ if self.is_multipath() => kind == OneRtt,
            _ => false,
        }
    }
}

impl fmt::Debug for FrameType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name}({:#x})", self.0),
            None => write!(f, "{:#x}", self.0),
        }
    }
}

impl fmt::Display for FrameType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// The kinds of packet that carry frames (RFC 9000 §12.4, Table 3 columns I, H, 0, 1).
#[derive(Debug, Copy, Clone, PartialEq, Eq, Hash)]
pub enum PacketKind {
    /// Initial packet (long header, type 0x00).
    Initial,
    /// 0-RTT packet (long header, type 0x01).
    ZeroRtt,
    /// Handshake packet (long header, type 0x02).
    Handshake,
    /// 1-RTT packet (short header).
    OneRtt,
}

/// One decoded frame, borrowing any data it carries from the packet payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A run of consecutive PADDING frames (each one byte 0x00), coalesced; the count is ≥ 1.
    Padding(usize),
    /// PING.
    Ping,
    /// ACK (0x02/0x03) or, with a path ID, PATH_ACK (0x3e/0x3f).
    Ack(Ack<'a>),
    /// RESET_STREAM.
    ResetStream(ResetStream),
    /// STOP_SENDING.
    StopSending(StopSending),
    /// CRYPTO.
    Crypto(Crypto<'a>),
    /// NEW_TOKEN: the token (never empty).
    NewToken(&'a [u8]),
    /// STREAM (0x08–0x0f).
    Stream(Stream<'a>),
    /// MAX_DATA: the connection-level limit in bytes.
    MaxData(VarInt),
    /// MAX_STREAM_DATA.
    MaxStreamData {
        /// Stream ID.
        id: VarInt,
        /// The stream-level limit in bytes.
        max: VarInt,
    },
    /// MAX_STREAMS (bidi 0x12 / uni 0x13).
    MaxStreams {
        /// Which stream type the limit applies to.
        dir: Dir,
        /// Cumulative number of streams (≤ 2^60).
        count: VarInt,
    },
    /// DATA_BLOCKED: the connection-level limit at which the sender is blocked.
    DataBlocked(VarInt),
    /// STREAM_DATA_BLOCKED.
    StreamDataBlocked {
        /// Stream ID.
        id: VarInt,
        /// The stream-level limit at which the sender is blocked.
        limit: VarInt,
    },
    /// STREAMS_BLOCKED (bidi 0x16 / uni 0x17).
    StreamsBlocked {
        /// Which stream type is blocked.
        dir: Dir,
        /// The stream limit at the time the frame was sent (≤ 2^60).
        limit: VarInt,
    },
    /// NEW_CONNECTION_ID or, with a path ID, PATH_NEW_CONNECTION_ID.
    NewConnectionId(NewConnectionId<'a>),
    /// RETIRE_CONNECTION_ID or, with a path ID, PATH_RETIRE_CONNECTION_ID.
    RetireConnectionId(RetireConnectionId),
    /// PATH_CHALLENGE: 8 bytes of entropy.
    PathChallenge([u8; 8]),
    /// PATH_RESPONSE: the echoed 8 bytes.
    PathResponse([u8; 8]),
    /// CONNECTION_CLOSE of type 0x1c (transport error).
    ConnectionClose(ConnectionClose<'a>),
    /// CONNECTION_CLOSE of type 0x1d (application error).
    ApplicationClose(ApplicationClose<'a>),
    /// HANDSHAKE_DONE.
    HandshakeDone,
    /// DATAGRAM (0x30/0x31).
    Datagram(Datagram<'a>),
    /// PATH_ABANDON.
    PathAbandon(PathAbandon),
    /// PATH_STATUS_BACKUP or PATH_STATUS_AVAILABLE.
    PathStatus(PathStatus),
    /// MAX_PATH_ID: the largest path ID the sender allows.
    MaxPathId(PathId),
    /// PATHS_BLOCKED: the peer's maximum path ID that blocks the sender.
    PathsBlocked(PathId),
    /// PATH_CIDS_BLOCKED.
    PathCidsBlocked(PathCidsBlocked),
}

impl Frame<'_> {
    /// The frame's type as [`Frame::encode`] writes it (STREAM and DATAGRAM with their Length bit set).
    pub fn ty(&self) -> FrameType {
        match self {
            Frame::Padding(_) => FrameType::PADDING,
            Frame::Ping => FrameType::PING,
            Frame::Ack(a) => a.ty(),
            Frame::ResetStream(_) => FrameType::RESET_STREAM,
            Frame::StopSending(_) => FrameType::STOP_SENDING,
            Frame::Crypto(_) => FrameType::CRYPTO,
            Frame::NewToken(_) => FrameType::NEW_TOKEN,
            Frame::Stream(s) => s.ty(true),
            Frame::MaxData(_) => FrameType::MAX_DATA,
            Frame::MaxStreamData { .. } => FrameType::MAX_STREAM_DATA,
            Frame::MaxStreams { dir: Dir::Bi, .. } => FrameType::MAX_STREAMS_BIDI,
            Frame::MaxStreams { dir: Dir::Uni, .. } => FrameType::MAX_STREAMS_UNI,
            Frame::DataBlocked(_) => FrameType::DATA_BLOCKED,
            Frame::StreamDataBlocked { .. } => FrameType::STREAM_DATA_BLOCKED,
            Frame::StreamsBlocked { dir: Dir::Bi, .. } => FrameType::STREAMS_BLOCKED_BIDI,
            Frame::StreamsBlocked { dir: Dir::Uni, .. } => FrameType::STREAMS_BLOCKED_UNI,
            Frame::NewConnectionId(f) => f.ty(),
            Frame::RetireConnectionId(f) => f.ty(),
            Frame::PathChallenge(_) => FrameType::PATH_CHALLENGE,
            Frame::PathResponse(_) => FrameType::PATH_RESPONSE,
            Frame::ConnectionClose(_) => FrameType::CONNECTION_CLOSE,
            Frame::ApplicationClose(_) => FrameType::APPLICATION_CLOSE,
            Frame::HandshakeDone => FrameType::HANDSHAKE_DONE,
            Frame::Datagram(_) => FrameType::DATAGRAM_LEN,
            Frame::PathAbandon(_) => FrameType::PATH_ABANDON,
            Frame::PathStatus(s) => s.ty(),
            Frame::MaxPathId(_) => FrameType::MAX_PATH_ID,
            Frame::PathsBlocked(_) => FrameType::PATHS_BLOCKED,
            Frame::PathCidsBlocked(_) => FrameType::PATH_CIDS_BLOCKED,
        }
    }

    /// Whether the frame elicits an acknowledgement: every frame except PADDING, ACK, PATH_ACK and
    /// CONNECTION_CLOSE (RFC 9002 §2 "Ack-eliciting frames"; PATH_ACK is an ACK, draft-ietf-quic-multipath-21).
    pub fn is_ack_eliciting(&self) -> bool {
        !matches!(
            self,
            Frame::Padding(_) | Frame::Ack(_) | Frame::ConnectionClose(_) | Frame::ApplicationClose(_)
        )
    }

    /// Whether the frame is a probing frame (RFC 9000 §9.1: PATH_CHALLENGE, PATH_RESPONSE,
    /// NEW_CONNECTION_ID and PADDING). PATH_NEW_CONNECTION_ID, the multipath replacement of
    /// NEW_CONNECTION_ID, is treated as probing too.
    pub fn is_probing(&self) -> bool {
        matches!(
            self,
            Frame::Padding(_) | Frame::PathChallenge(_) | Frame::PathResponse(_) | Frame::NewConnectionId(_)
        )
    }

    /// Whether the frame may be carried in a packet of `kind` (RFC 9000 §12.4, Table 3).
    pub fn allowed_in(&self, kind: PacketKind) -> bool {
        self.ty().allowed_in(kind)
    }

    /// [`Frame::allowed_in`] as the error the connection reports.
    pub fn check_allowed_in(&self, kind: PacketKind) -> Result<(), TransportError> {
        // RFC 9000 §12.4: "An endpoint MUST treat receipt of a frame in a packet type that is not permitted as
        // a connection error of type PROTOCOL_VIOLATION."
        // draft-ietf-quic-multipath-21: multipath frames in any packet but 1-RTT are a PROTOCOL_VIOLATION.
        if self.allowed_in(kind) {
            Ok(())
        } else {
            Err(
                TransportError::protocol_violation("frame not permitted in this packet type")
                    .with_frame(self.ty().0),
            )
        }
    }

    /// The exact number of bytes [`Frame::encode`] writes.
    pub fn encoded_len(&self) -> usize {
        match self {
            Frame::Padding(n) => *n,
            Frame::Ping | Frame::HandshakeDone => 1,
            Frame::Ack(a) => a.encoded_len(),
            Frame::ResetStream(f) => f.encoded_len(),
            Frame::StopSending(f) => f.encoded_len(),
            Frame::Crypto(f) => f.encoded_len(),
            Frame::NewToken(t) => 1 + len_varint(t.len()).size() + t.len(),
            Frame::Stream(s) => s.encoded_len(true),
            Frame::MaxData(v) | Frame::DataBlocked(v) => varints_len(self.ty(), &[*v]),
            Frame::MaxStreams { count: v, .. } | Frame::StreamsBlocked { limit: v, .. } => {
                varints_len(self.ty(), &[*v])
            }
            Frame::MaxStreamData { id, max: v } | Frame::StreamDataBlocked { id, limit: v } => {
                varints_len(self.ty(), &[*id, *v])
            }
            Frame::NewConnectionId(f) => f.encoded_len(),
            Frame::RetireConnectionId(f) => f.encoded_len(),
            Frame::PathChallenge(_) | Frame::PathResponse(_) => 1 + 8,
            Frame::ConnectionClose(f) => f.encoded_len(),
            Frame::ApplicationClose(f) => f.encoded_len(),
            Frame::Datagram(f) => f.encoded_len(true),
            Frame::PathAbandon(f) => f.encoded_len(),
            Frame::PathStatus(f) => f.encoded_len(),
            Frame::MaxPathId(p) | Frame::PathsBlocked(p) => varints_len(self.ty(), &[VarInt::from(p.0)]),
            Frame::PathCidsBlocked(f) => f.encoded_len(),
        }
    }

    /// Writes the frame (STREAM and DATAGRAM with an explicit Length field).
    pub fn encode<B: BufMut>(&self, buf: &mut B) {
        let ty = self.ty();
        match self {
            Frame::Padding(n) => buf.put_bytes(0, *n),
            Frame::Ping | Frame::HandshakeDone => ty.encode(buf),
            Frame::Ack(a) => a.encode(buf),
            Frame::ResetStream(f) => f.encode(buf),
            Frame::StopSending(f) => f.encode(buf),
            Frame::Crypto(f) => f.encode(buf),
            Frame::NewToken(t) => {
                ty.encode(buf);
                put_prefixed(buf, t);
            }
            Frame::Stream(s) => s.encode(buf, true),
            Frame::MaxData(v) | Frame::DataBlocked(v) => put_varints(buf, ty, &[*v]),
            Frame::MaxStreams { count: v, .. } | Frame::StreamsBlocked { limit: v, .. } => {
                put_varints(buf, ty, &[*v])
            }
            Frame::MaxStreamData { id, max: v } | Frame::StreamDataBlocked { id, limit: v } => {
                put_varints(buf, ty, &[*id, *v])
            }
            Frame::NewConnectionId(f) => f.encode(buf),
            Frame::RetireConnectionId(f) => f.encode(buf),
            Frame::PathChallenge(data) | Frame::PathResponse(data) => {
                ty.encode(buf);
                buf.put_slice(data);
            }
            Frame::ConnectionClose(f) => f.encode(buf),
            Frame::ApplicationClose(f) => f.encode(buf),
            Frame::Datagram(f) => f.encode(buf, true),
            Frame::PathAbandon(f) => f.encode(buf),
            Frame::PathStatus(f) => f.encode(buf),
            Frame::MaxPathId(p) | Frame::PathsBlocked(p) => put_varints(buf, ty, &[VarInt::from(p.0)]),
            Frame::PathCidsBlocked(f) => f.encode(buf),
        }
    }
}

impl FrameType {
    /// Writes the type (shortest encoding, RFC 9000 §12.4).
    pub fn encode<B: BufMut>(self, buf: &mut B) {
        // Every FrameType constructed by this module is a known type, far below 2^62.
        VarInt::from_u64(self.0).unwrap_or(VarInt::MAX).encode(buf);
    }

    /// Encoded size of the type.
    pub fn size(self) -> usize {
        VarInt::size_of(self.0).unwrap_or(8)
    }
}

/// The frames of a decrypted packet payload, in order; see [`decode_frames`].
///
/// After the first error the iterator is fused: it yields the error once and then `None`.
#[derive(Debug, Clone)]
pub struct FrameIter<'a> {
    d: Decoder<'a>,
    failed: bool,
}

/// Iterates over the frames of `payload`. Each item is a frame or the [`TransportError`] that ends the
/// iteration (FRAME_ENCODING_ERROR for malformed and unknown frames, RFC 9000 §12.4).
pub fn decode_frames(payload: &[u8]) -> FrameIter<'_> {
    FrameIter {
        d: Decoder::new(payload),
        failed: false,
    }
}

impl<'a> FrameIter<'a> {
    /// The bytes not decoded yet.
    pub fn remaining(&self) -> &'a [u8] {
        self.d.rest()
    }
}

impl<'a> Iterator for FrameIter<'a> {
    type Item = Result<Frame<'a>, TransportError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.d.is_empty() {
            return None;
        }
        let r = decode_one(&mut self.d);
        self.failed = r.is_err();
        Some(r)
    }
}

impl std::iter::FusedIterator for FrameIter<'_> {}

/// Decodes one frame at the cursor.
fn decode_one<'a>(d: &mut Decoder<'a>) -> Result<Frame<'a>, TransportError> {
    let before = d.remaining();
    let ty = FrameType(
        d.varint()
            .map_err(|_| TransportError::frame_encoding("frame type truncated"))?
            .into_inner(),
    );
    let used = before.saturating_sub(d.remaining());
    // RFC 9000 §12.4: "a frame type MUST use the shortest possible encoding. [...] An endpoint MAY treat the
    // receipt of a frame type that uses a longer encoding than necessary as a connection error of type
    // PROTOCOL_VIOLATION."
    if used != ty.size() {
        return Err(TransportError::protocol_violation("frame type not minimally encoded").with_frame(ty.0));
    }
    decode_body(ty, d).map_err(|e| e.with_frame(ty.0))
}

/// Decodes the body of a frame of type `ty`.
fn decode_body<'a>(ty: FrameType, d: &mut Decoder<'a>) -> Result<Frame<'a>, TransportError> {
    Ok(match ty.0 {
        0x00 => {
            let zeros = d.rest().iter().take_while(|b| **b == 0).count();
            d.bytes(zeros)?;
            Frame::Padding(zeros.saturating_add(1))
        }
        0x01 => Frame::Ping,
        0x02 | 0x03 | 0x3e | 0x3f => Frame::Ack(Ack::decode(ty, d)?),
        0x04..=0x06 | 0x08..=0x17 | 0x30 | 0x31 => stream::decode(ty, d)?,
        0x07 | 0x18..=0x1e | 0x3e78 | 0x3e79 => conn::decode(ty, d)?,
        0x3e75..=0x3e77 | 0x3e7a..=0x3e7c => multipath::decode(ty, d)?,
        // RFC 9000 §12.4: "An endpoint MUST treat the receipt of a frame of unknown type as a connection error
        // of type FRAME_ENCODING_ERROR."
        _ => return Err(TransportError::frame_encoding("unknown frame type")),
    })
}

/// A length as a varint (saturating: no buffer reaches 2^62 bytes).
pub(crate) fn len_varint(n: usize) -> VarInt {
    VarInt::try_from(n).unwrap_or(VarInt::MAX)
}

/// Writes a varint length prefix and the bytes.
pub(crate) fn put_prefixed<B: BufMut>(buf: &mut B, data: &[u8]) {
    len_varint(data.len()).encode(buf);
    buf.put_slice(data);
}

/// Writes a frame made of its type and varint fields.
pub(crate) fn put_varints<B: BufMut>(buf: &mut B, ty: FrameType, fields: &[VarInt]) {
    ty.encode(buf);
    for f in fields {
        f.encode(buf);
    }
}

/// Size of a frame made of its type and varint fields.
pub(crate) fn varints_len(ty: FrameType, fields: &[VarInt]) -> usize {
    fields.iter().fold(ty.size(), |n, f| n + f.size())
}
