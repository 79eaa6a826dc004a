//! Stream-related control frames (RFC 9000 §19.4, §19.5, §19.9–§19.14): what is pending and what was sent.
//!
//! Pending frames are flags and a set keyed by (kind, stream), never a queue of values: asking twice for the
//! same frame queues it once, and the value is read when the frame is built, so a lost MAX_DATA is re-sent
//! with the *current* limit. The set holds at most four entries per live stream, so the peer cannot grow it
//! beyond the stream limits we advertise.

use std::collections::BTreeSet;

use bytes::BufMut;

use super::id::StreamId;
use crate::proto::coding::VarInt;
use crate::proto::frame::{Dir, Frame, ResetStream, StopSending};

/// A control frame produced by [`Streams::poll_control_frame`](super::Streams::poll_control_frame). The
/// connection keeps it with the sent packet and hands it back on acknowledgement or loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamControlFrame {
    /// MAX_DATA (RFC 9000 §19.9).
    MaxData(u64),
    /// MAX_STREAM_DATA (RFC 9000 §19.10).
    MaxStreamData {
        /// Stream ID.
        id: StreamId,
        /// New stream limit.
        max: u64,
    },
    /// MAX_STREAMS (RFC 9000 §19.11).
    MaxStreams {
        /// Stream type.
        dir: Dir,
        /// New cumulative stream count.
        count: u64,
    },
    /// DATA_BLOCKED (RFC 9000 §19.12).
    DataBlocked(u64),
    /// STREAM_DATA_BLOCKED (RFC 9000 §19.13).
    StreamDataBlocked {
        /// Stream ID.
        id: StreamId,
        /// The limit we are blocked at.
        limit: u64,
    },
    /// STREAMS_BLOCKED (RFC 9000 §19.14).
    StreamsBlocked {
        /// Stream type.
        dir: Dir,
        /// The stream limit we are blocked at.
        limit: u64,
    },
    /// RESET_STREAM (RFC 9000 §19.4).
    ResetStream {
        /// Stream ID.
        id: StreamId,
        /// Application error code.
        error_code: VarInt,
        /// Final size.
        final_size: u64,
    },
    /// STOP_SENDING (RFC 9000 §19.5).
    StopSending {
        /// Stream ID.
        id: StreamId,
        /// Application error code.
        error_code: VarInt,
    },
}

/// A count or offset as a varint; all are below 2^62 by construction (saturates otherwise).
fn v(x: u64) -> VarInt {
    VarInt::from_u64(x).unwrap_or(VarInt::MAX)
}

impl StreamControlFrame {
    /// The frame for the codec.
    pub fn to_frame(&self) -> Frame<'static> {
        match *self {
            StreamControlFrame::MaxData(max) => Frame::MaxData(v(max)),
            StreamControlFrame::MaxStreamData { id, max } => Frame::MaxStreamData {
                id: id.to_varint(),
                max: v(max),
            },
            StreamControlFrame::MaxStreams { dir, count } => Frame::MaxStreams { dir, count: v(count) },
            StreamControlFrame::DataBlocked(limit) => Frame::DataBlocked(v(limit)),
            StreamControlFrame::StreamDataBlocked { id, limit } => Frame::StreamDataBlocked {
                id: id.to_varint(),
                limit: v(limit),
            },
            StreamControlFrame::StreamsBlocked { dir, limit } => {
                Frame::StreamsBlocked { dir, limit: v(limit) }
            }
            StreamControlFrame::ResetStream {
                id,
                error_code,
                final_size,
            } => Frame::ResetStream(ResetStream {
                id: id.to_varint(),
                error_code,
                final_size: v(final_size),
            }),
            StreamControlFrame::StopSending { id, error_code } => Frame::StopSending(StopSending {
                id: id.to_varint(),
                error_code,
            }),
        }
    }

    /// Exact encoded size.
    pub fn encoded_len(&self) -> usize {
        self.to_frame().encoded_len()
    }

    /// Writes the frame.
    pub fn encode<B: BufMut>(&self, buf: &mut B) {
        self.to_frame().encode(buf);
    }
}

/// The per-stream control frames, in the order they are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum PerStream {
    /// RESET_STREAM: the values live in the send stream.
    ResetStream,
    /// STOP_SENDING: the code lives in the receive stream.
    StopSending,
    /// MAX_STREAM_DATA: the current advertised limit of the receive stream.
    MaxStreamData,
    /// STREAM_DATA_BLOCKED: the send stream's current limit, if still blocked.
    StreamDataBlocked,
}

/// Which control frames are due.
#[derive(Debug, Default)]
pub(crate) struct PendingControl {
    /// MAX_DATA with the current connection limit.
    pub(crate) max_data: bool,
    /// MAX_STREAMS with the current limit, per direction.
    pub(crate) max_streams: [bool; 2],
    /// DATA_BLOCKED at this limit.
    pub(crate) data_blocked: Option<u64>,
    /// STREAMS_BLOCKED at this limit, per direction.
    pub(crate) streams_blocked: [Option<u64>; 2],
    /// Per-stream frames.
    pub(crate) per_stream: BTreeSet<(PerStream, StreamId)>,
}

impl PendingControl {
    /// Whether anything may be due (entries for streams that went away are dropped when polled).
    pub(crate) fn is_empty(&self) -> bool {
        !self.max_data
            && self.max_streams == [false; 2]
            && self.data_blocked.is_none()
            && self.streams_blocked == [None; 2]
            && self.per_stream.is_empty()
    }
}
