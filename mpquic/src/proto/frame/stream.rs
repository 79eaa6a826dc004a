//! Data and flow-control frames: STREAM (RFC 9000 §19.8), CRYPTO (§19.6), DATAGRAM (RFC 9221 §4),
//! RESET_STREAM (§19.4), STOP_SENDING (§19.5), MAX_DATA, MAX_STREAM_DATA, MAX_STREAMS, DATA_BLOCKED,
//! STREAM_DATA_BLOCKED and STREAMS_BLOCKED (§19.9–§19.14).
//!
//! Data is borrowed from the payload. Offsets are checked at decode time so that offset + length never exceeds
//! 2^62 − 1, and stream counts never exceed 2^60.

use bytes::BufMut;

use super::{Frame, FrameType, len_varint, put_prefixed};
use crate::proto::coding::{Decoder, VarInt};
use crate::proto::error::TransportError;

/// The largest stream count a MAX_STREAMS or STREAMS_BLOCKED frame may carry (RFC 9000 §19.11, §19.14).
pub const MAX_STREAM_COUNT: u64 = 1 << 60;

/// The stream type a MAX_STREAMS / STREAMS_BLOCKED frame applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dir {
    /// Bidirectional streams.
    Bi,
    /// Unidirectional streams.
    Uni,
}

/// STREAM frame type bit: the frame ends the stream (RFC 9000 §19.8).
const FIN_BIT: u64 = 0x01;
/// STREAM frame type bit: a Length field is present.
const LEN_BIT: u64 = 0x02;
/// STREAM frame type bit: an Offset field is present.
const OFF_BIT: u64 = 0x04;

/// A STREAM frame (types 0x08–0x0f).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stream<'a> {
    /// Stream ID.
    pub id: VarInt,
    /// Byte offset of `data` in the stream.
    pub offset: VarInt,
    /// Whether this frame carries the end of the stream.
    pub fin: bool,
    /// Stream data.
    pub data: &'a [u8],
}

impl Stream<'_> {
    /// The frame type: the OFF bit set iff the offset is not 0, the LEN bit iff `with_len`.
    pub fn ty(&self, with_len: bool) -> FrameType {
        let mut ty = FrameType::STREAM.0;
        if self.offset != VarInt::ZERO {
            ty |= OFF_BIT;
        }
        if with_len {
            ty |= LEN_BIT;
        }
        if self.fin {
            ty |= FIN_BIT;
        }
        FrameType(ty)
    }

    /// Size of everything but the data.
    pub fn header_len(&self, with_len: bool) -> usize {
        1 + self.id.size()
            + if self.offset != VarInt::ZERO {
                self.offset.size()
            } else {
                0
            }
            + if with_len {
                len_varint(self.data.len()).size()
            } else {
                0
            }
    }

    /// Exact encoded size.
    pub fn encoded_len(&self, with_len: bool) -> usize {
        self.header_len(with_len) + self.data.len()
    }

    /// Writes the frame; without `with_len` the data runs to the end of the packet, so the frame must be last.
    pub fn encode<B: BufMut>(&self, buf: &mut B, with_len: bool) {
        debug_assert!(
            self.offset.into_inner().saturating_add(self.data.len() as u64) <= VarInt::MAX.into_inner()
        );
        self.ty(with_len).encode(buf);
        self.id.encode(buf);
        if self.offset != VarInt::ZERO {
            self.offset.encode(buf);
        }
        if with_len {
            put_prefixed(buf, self.data);
        } else {
            buf.put_slice(self.data);
        }
    }
}

/// A CRYPTO frame (type 0x06).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Crypto<'a> {
    /// Byte offset of `data` in the crypto stream of the packet's encryption level.
    pub offset: VarInt,
    /// Handshake data.
    pub data: &'a [u8],
}

impl Crypto<'_> {
    /// Size of everything but the data.
    pub fn header_len(&self) -> usize {
        1 + self.offset.size() + len_varint(self.data.len()).size()
    }

    /// Exact encoded size.
    pub fn encoded_len(&self) -> usize {
        self.header_len() + self.data.len()
    }

    /// Writes the frame.
    pub fn encode<B: BufMut>(&self, buf: &mut B) {
        FrameType::CRYPTO.encode(buf);
        self.offset.encode(buf);
        put_prefixed(buf, self.data);
    }
}

/// A DATAGRAM frame (types 0x30/0x31, RFC 9221 §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Datagram<'a> {
    /// The application datagram.
    pub data: &'a [u8],
}

impl Datagram<'_> {
    /// Exact encoded size.
    pub fn encoded_len(&self, with_len: bool) -> usize {
        1 + if with_len {
            len_varint(self.data.len()).size()
        } else {
            0
        } + self.data.len()
    }

    /// Writes the frame; without `with_len` (type 0x30) the data runs to the end of the packet.
    pub fn encode<B: BufMut>(&self, buf: &mut B, with_len: bool) {
        if with_len {
            FrameType::DATAGRAM_LEN.encode(buf);
            put_prefixed(buf, self.data);
        } else {
            FrameType::DATAGRAM.encode(buf);
            buf.put_slice(self.data);
        }
    }
}

/// A RESET_STREAM frame (type 0x04).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResetStream {
    /// Stream ID.
    pub id: VarInt,
    /// Application Protocol Error Code.
    pub error_code: VarInt,
    /// Final size of the stream in bytes.
    pub final_size: VarInt,
}

impl ResetStream {
    /// Exact encoded size.
    pub fn encoded_len(&self) -> usize {
        super::varints_len(
            FrameType::RESET_STREAM,
            &[self.id, self.error_code, self.final_size],
        )
    }

    /// Writes the frame.
    pub fn encode<B: BufMut>(&self, buf: &mut B) {
        super::put_varints(
            buf,
            FrameType::RESET_STREAM,
            &[self.id, self.error_code, self.final_size],
        );
    }
}

/// A STOP_SENDING frame (type 0x05).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StopSending {
    /// Stream ID.
    pub id: VarInt,
    /// Application Protocol Error Code.
    pub error_code: VarInt,
}

impl StopSending {
    /// Exact encoded size.
    pub fn encoded_len(&self) -> usize {
        super::varints_len(FrameType::STOP_SENDING, &[self.id, self.error_code])
    }

    /// Writes the frame.
    pub fn encode<B: BufMut>(&self, buf: &mut B) {
        super::put_varints(buf, FrameType::STOP_SENDING, &[self.id, self.error_code]);
    }
}

/// Checks that data at `offset` of length `len` ends at or below 2^62 − 1.
fn check_end(offset: VarInt, len: usize, reason: &'static str) -> Result<(), TransportError> {
    match offset.into_inner().checked_add(len as u64) {
        Some(end) if end <= VarInt::MAX.into_inner() => Ok(()),
        _ => Err(TransportError::frame_encoding(reason)),
    }
}

/// Checks a MAX_STREAMS / STREAMS_BLOCKED count.
fn check_count(count: VarInt, reason: &'static str) -> Result<VarInt, TransportError> {
    if count.into_inner() > MAX_STREAM_COUNT {
        Err(TransportError::frame_encoding(reason))
    } else {
        Ok(count)
    }
}

/// Decodes the body of a frame of this family.
pub(super) fn decode<'a>(ty: FrameType, d: &mut Decoder<'a>) -> Result<Frame<'a>, TransportError> {
    let dir = if ty.0 & 1 == 0 { Dir::Bi } else { Dir::Uni };
    Ok(match ty {
        FrameType::RESET_STREAM => Frame::ResetStream(ResetStream {
            id: d.varint()?,
            error_code: d.varint()?,
            final_size: d.varint()?,
        }),
        FrameType::STOP_SENDING => Frame::StopSending(StopSending {
            id: d.varint()?,
            error_code: d.varint()?,
        }),
        FrameType::CRYPTO => {
            let offset = d.varint()?;
            let data = d.varint_prefixed()?;
            // RFC 9000 §19.6: "The largest offset delivered on a stream -- the sum of the offset and data
            // length -- cannot exceed 2^62-1. Receipt of a frame that exceeds this limit MUST be treated as a
            // connection error of type FRAME_ENCODING_ERROR or CRYPTO_BUFFER_EXCEEDED."
            check_end(offset, data.len(), "CRYPTO offset + length exceeds 2^62-1")?;
            Frame::Crypto(Crypto { offset, data })
        }
        FrameType::MAX_DATA => Frame::MaxData(d.varint()?),
        FrameType::MAX_STREAM_DATA => Frame::MaxStreamData {
            id: d.varint()?,
            max: d.varint()?,
        },
        // RFC 9000 §19.11: "This value cannot exceed 2^60, as it is not possible to encode stream IDs larger
        // than 2^62-1. Receipt of a frame that permits opening of a stream larger than this limit MUST be
        // treated as a connection error of type FRAME_ENCODING_ERROR."
        FrameType::MAX_STREAMS_BIDI | FrameType::MAX_STREAMS_UNI => Frame::MaxStreams {
            dir,
            count: check_count(d.varint()?, "MAX_STREAMS above 2^60")?,
        },
        FrameType::DATA_BLOCKED => Frame::DataBlocked(d.varint()?),
        FrameType::STREAM_DATA_BLOCKED => Frame::StreamDataBlocked {
            id: d.varint()?,
            limit: d.varint()?,
        },
        // RFC 9000 §19.14: "This value cannot exceed 2^60, as it is not possible to encode stream IDs larger
        // than 2^62-1. Receipt of a frame that encodes a larger stream ID MUST be treated as a connection error
        // of type STREAM_LIMIT_ERROR or FRAME_ENCODING_ERROR."
        FrameType::STREAMS_BLOCKED_BIDI | FrameType::STREAMS_BLOCKED_UNI => Frame::StreamsBlocked {
            dir,
            limit: check_count(d.varint()?, "STREAMS_BLOCKED above 2^60")?,
        },
        FrameType::DATAGRAM => Frame::Datagram(Datagram { data: d.take_rest() }),
        FrameType::DATAGRAM_LEN => Frame::Datagram(Datagram {
            data: d.varint_prefixed()?,
        }),
        FrameType(0x08..=0x0f) => {
            let id = d.varint()?;
            let offset = if ty.0 & OFF_BIT != 0 {
                d.varint()?
            } else {
                VarInt::ZERO
            };
            let data = if ty.0 & LEN_BIT != 0 {
                d.varint_prefixed()?
            } else {
                d.take_rest()
            };
            // RFC 9000 §19.8: "The largest offset delivered on a stream -- the sum of the offset and data
            // length -- cannot exceed 2^62-1, as it is not possible to provide flow control credit for that
            // data. Receipt of a frame that exceeds this limit MUST be treated as a connection error of type
            // FRAME_ENCODING_ERROR or FLOW_CONTROL_ERROR."
            check_end(offset, data.len(), "STREAM offset + length exceeds 2^62-1")?;
            Frame::Stream(Stream {
                id,
                offset,
                fin: ty.0 & FIN_BIT != 0,
                data,
            })
        }
        _ => return Err(TransportError::frame_encoding("unknown frame type")),
    })
}
