//! The multipath frames of draft-ietf-quic-multipath-21 not shared with an RFC 9000 codec: PATH_ABANDON,
//! PATH_STATUS_BACKUP / PATH_STATUS_AVAILABLE, MAX_PATH_ID, PATHS_BLOCKED and PATH_CIDS_BLOCKED. (PATH_ACK lives
//! with ACK in [`super::ack`], PATH_NEW/RETIRE_CONNECTION_ID with their RFC 9000 twins in [`super::conn`].)
//!
//! Path IDs are varints on the wire but 32-bit values by definition: a path ID above 2^32 − 1 is rejected at
//! decode time. Checks that need the negotiated limits (path ID above the advertised maximum, MAX_PATH_ID below
//! initial_max_path_id) are the connection's.

use bytes::BufMut;

use super::{Frame, FrameType, put_varints, varints_len};
use crate::cc::PathId;
use crate::proto::coding::{Decoder, VarInt};
use crate::proto::error::TransportError;

/// Reads a path ID: a varint that must fit in 32 bits.
pub(super) fn decode_path_id(d: &mut Decoder<'_>) -> Result<PathId, TransportError> {
    // draft-ietf-quic-multipath-21: the maximum path ID cannot exceed 2^32-1 (it enters the 96-bit AEAD nonce
    // as 32 bits), and a frame naming a path ID above the advertised maximum is a PROTOCOL_VIOLATION; a path ID
    // above 2^32-1 is therefore always one.
    let v = d.varint()?.into_inner();
    u32::try_from(v)
        .map(PathId)
        .map_err(|_| TransportError::protocol_violation("path ID above 2^32-1"))
}

fn path_varint(p: PathId) -> VarInt {
    VarInt::from(p.0)
}

/// PATH_ABANDON (type 0x3e75).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PathAbandon {
    /// The path being abandoned.
    pub path_id: PathId,
    /// Why: NO_ERROR or one of the codes below (draft-ietf-quic-multipath-21, error codes).
    pub error_code: VarInt,
}

impl PathAbandon {
    /// The application asked to abandon the path.
    pub const APPLICATION_ABANDON_PATH: VarInt = VarInt::from_u32(0x3e);
    /// The endpoint lacks the resources to keep the path.
    pub const PATH_RESOURCE_LIMIT_REACHED: VarInt = VarInt::from_u32(0x3e75);
    /// The path is unstable or performs poorly.
    pub const PATH_UNSTABLE_OR_POOR: VarInt = VarInt::from_u32(0x3e76);
    /// No connection ID is available for the path.
    pub const NO_CID_AVAILABLE_FOR_PATH: VarInt = VarInt::from_u32(0x3e77);

    /// Exact encoded size.
    pub fn encoded_len(&self) -> usize {
        varints_len(
            FrameType::PATH_ABANDON,
            &[path_varint(self.path_id), self.error_code],
        )
    }

    /// Writes the frame.
    pub fn encode<B: BufMut>(&self, buf: &mut B) {
        put_varints(
            buf,
            FrameType::PATH_ABANDON,
            &[path_varint(self.path_id), self.error_code],
        );
    }
}

/// PATH_STATUS_BACKUP (0x3e76) or PATH_STATUS_AVAILABLE (0x3e77).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PathStatus {
    /// The path the status applies to.
    pub path_id: PathId,
    /// Path Status Sequence Number (per path, increasing).
    pub sequence: VarInt,
    /// `true` for PATH_STATUS_AVAILABLE, `false` for PATH_STATUS_BACKUP.
    pub available: bool,
}

impl PathStatus {
    /// PATH_STATUS_AVAILABLE or PATH_STATUS_BACKUP.
    pub fn ty(&self) -> FrameType {
        if self.available {
            FrameType::PATH_STATUS_AVAILABLE
        } else {
            FrameType::PATH_STATUS_BACKUP
        }
    }

    /// Exact encoded size.
    pub fn encoded_len(&self) -> usize {
        varints_len(self.ty(), &[path_varint(self.path_id), self.sequence])
    }

    /// Writes the frame.
    pub fn encode<B: BufMut>(&self, buf: &mut B) {
        put_varints(buf, self.ty(), &[path_varint(self.path_id), self.sequence]);
    }
}

/// PATH_CIDS_BLOCKED (type 0x3e7c).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PathCidsBlocked {
    /// The path that lacks connection IDs.
    pub path_id: PathId,
    /// Next Sequence Number: the sequence number of the next connection ID the sender expects.
    pub next_sequence: VarInt,
}

impl PathCidsBlocked {
    /// Exact encoded size.
    pub fn encoded_len(&self) -> usize {
        varints_len(
            FrameType::PATH_CIDS_BLOCKED,
            &[path_varint(self.path_id), self.next_sequence],
        )
    }

    /// Writes the frame.
    pub fn encode<B: BufMut>(&self, buf: &mut B) {
        put_varints(
            buf,
            FrameType::PATH_CIDS_BLOCKED,
            &[path_varint(self.path_id), self.next_sequence],
        );
    }
}

/// Decodes the body of a frame of this family.
pub(super) fn decode<'a>(ty: FrameType, d: &mut Decoder<'a>) -> Result<Frame<'a>, TransportError> {
    Ok(match ty {
        FrameType::PATH_ABANDON => Frame::PathAbandon(PathAbandon {
            path_id: decode_path_id(d)?,
            error_code: d.varint()?,
        }),
        FrameType::PATH_STATUS_BACKUP | FrameType::PATH_STATUS_AVAILABLE => Frame::PathStatus(PathStatus {
            path_id: decode_path_id(d)?,
            sequence: d.varint()?,
            available: ty == FrameType::PATH_STATUS_AVAILABLE,
        }),
        // draft-ietf-quic-multipath-21 (MAX_PATH_ID): the value MUST NOT exceed 2^32-1; an invalid Maximum
        // Path ID is a connection error of type PROTOCOL_VIOLATION. (The lower bound, initial_max_path_id,
        // is checked by the connection.)
        FrameType::MAX_PATH_ID => Frame::MaxPathId(decode_path_id(d)?),
        // PATHS_BLOCKED above the receiver's maximum is a PROTOCOL_VIOLATION; above 2^32-1 it always is.
        FrameType::PATHS_BLOCKED => Frame::PathsBlocked(decode_path_id(d)?),
        FrameType::PATH_CIDS_BLOCKED => Frame::PathCidsBlocked(PathCidsBlocked {
            path_id: decode_path_id(d)?,
            next_sequence: d.varint()?,
        }),
        _ => return Err(TransportError::frame_encoding("unknown frame type")),
    })
}
