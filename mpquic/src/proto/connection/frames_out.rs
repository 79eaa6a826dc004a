//! Frame records kept with each sent packet, and what their acknowledgement or loss does.
//!
//! Every ack-eliciting frame the connection sends is described by a [`FrameRecord`] stored with the packet in
//! the path's recovery state. When the packet is acknowledged the record releases state (stream buffers, ACK
//! ranges); when it is lost, the record re-arms whatever must be sent again, connection-wide, so the scheduler
//! may repair it on any path.

use crate::cc::PathId;
use crate::proto::crypto::Level;
use crate::proto::streams::{StreamControlFrame, StreamFrameRecord};

use super::Connection;
use super::spaces::level_index;

/// What one frame of a sent packet carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum FrameRecord {
    /// STREAM data.
    Stream(StreamFrameRecord),
    /// A stream or flow-control frame.
    Control(StreamControlFrame),
    /// CRYPTO data of a level.
    Crypto { level: Level, offset: u64, len: u64 },
    /// An ACK frame for a long-header space (`path` = `None`) or for a path's application space.
    Ack {
        level: Level,
        path: PathId,
        largest: u64,
    },
    /// HANDSHAKE_DONE.
    HandshakeDone,
    /// NEW_CONNECTION_ID for one of our connection IDs.
    NewCid { path: PathId, seq: u64 },
    /// NEW_TOKEN.
    NewToken,
    /// RETIRE_CONNECTION_ID for one of the peer's connection IDs.
    RetireCid { path: PathId, seq: u64 },
    /// PATH_ABANDON (draft-ietf-quic-multipath-21 §3: "retransmitted if lost").
    PathAbandon {
        path: PathId,
        code: crate::proto::coding::VarInt,
    },
    /// MAX_PATH_ID with this value.
    MaxPathId(PathId),
    /// PATHS_BLOCKED with this value.
    PathsBlocked(PathId),
    /// PATH_STATUS_* for `path` with sequence number `seq`.
    PathStatus { path: PathId, seq: u64 },
}

/// The records of one packet.
pub(super) type Records = Vec<FrameRecord>;

impl Connection {
    /// A packet carrying `records` was acknowledged; returns the STREAM payload bytes among them (the path's
    /// acknowledged-bytes counter).
    pub(super) fn on_records_acked(&mut self, mut records: Records) -> u64 {
        let mut stream_bytes = 0u64;
        for r in records.drain(..) {
            match r {
                FrameRecord::Stream(s) => {
                    stream_bytes = stream_bytes.saturating_add(s.len);
                    self.streams.on_stream_frame_acked(s);
                }
                FrameRecord::Control(c) => self.streams.on_control_frame_acked(&c),
                FrameRecord::Ack { level, path, largest } => match level {
                    Level::Initial | Level::Handshake => {
                        if let Some(space) = self.spaces.get_mut(level) {
                            space.ack.on_ack_frame_acked(largest);
                        }
                    }
                    Level::ZeroRtt | Level::OneRtt => {
                        if let Some(p) = self.paths.get_mut(&path) {
                            p.ack.on_ack_frame_acked(largest);
                        }
                    }
                },
                FrameRecord::RetireCid { path, seq } => self.paths.remote_cids.on_retire_acked(path, seq),
                FrameRecord::Crypto { .. }
                | FrameRecord::PathAbandon { .. }
                | FrameRecord::MaxPathId(_)
                | FrameRecord::PathsBlocked(_)
                | FrameRecord::PathStatus { .. }
                | FrameRecord::HandshakeDone
                | FrameRecord::NewCid { .. }
                | FrameRecord::NewToken => {}
            }
        }
        self.records_pool.give(records);
        stream_bytes
    }

    /// A packet carrying `records` was declared lost: re-arm what must be sent again. The emptied vector goes
    /// back to the pool, as an acknowledged packet's does.
    pub(super) fn on_records_lost(&mut self, mut records: Records) {
        for r in records.drain(..) {
            match r {
                FrameRecord::Stream(s) => self.streams.on_stream_frame_lost(s),
                FrameRecord::Control(c) => self.streams.on_control_frame_lost(&c),
                FrameRecord::Crypto { level, offset, len } => {
                    if let Some(c) = self.crypto.get_mut(level_index(level)) {
                        c.on_lost(offset, len);
                    }
                }
                FrameRecord::HandshakeDone => self.handshake_done_pending = true,
                FrameRecord::NewToken => self.on_new_token_lost(),
                FrameRecord::NewCid { path, seq } => self.paths.local_cids.on_lost(path, seq),
                FrameRecord::RetireCid { path, seq } => self.paths.remote_cids.on_retire_lost(path, seq),
                FrameRecord::PathAbandon { path, code } => self.paths.on_abandon_frame_lost(path, code),
                FrameRecord::MaxPathId(max) => self.paths.ids.on_max_path_id_lost(max),
                FrameRecord::PathsBlocked(max) => self.paths.ids.on_paths_blocked_lost(max),
                FrameRecord::PathStatus { path, seq } => self.paths.on_status_frame_lost(path, seq),
                FrameRecord::Ack { .. } => {}
            }
        }
        self.records_pool.give(records);
    }
}
