//! Connection-level frames: NEW_CONNECTION_ID (RFC 9000 §19.15) and PATH_NEW_CONNECTION_ID,
//! RETIRE_CONNECTION_ID (§19.16) and PATH_RETIRE_CONNECTION_ID (draft-ietf-quic-multipath-21), NEW_TOKEN
//! (§19.7), PATH_CHALLENGE / PATH_RESPONSE (§19.17–§19.18), CONNECTION_CLOSE (§19.19) and HANDSHAKE_DONE
//! (§19.20). PING and PADDING carry no fields and live in the parent module.
//!
//! Connection IDs, tokens and reason phrases are borrowed from the payload.

use bytes::BufMut;

use super::{Frame, FrameType, len_varint, multipath, put_prefixed};
use crate::cc::PathId;
use crate::proto::coding::{Decoder, VarInt};
use crate::proto::error::TransportError;

/// The longest connection ID QUIC version 1 allows, in bytes (RFC 9000 §17.2).
pub const MAX_CID_SIZE: usize = 20;

/// Size of a stateless reset token (RFC 9000 §10.3).
pub const RESET_TOKEN_SIZE: usize = 16;

/// NEW_CONNECTION_ID (`path_id` = `None`) or PATH_NEW_CONNECTION_ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewConnectionId<'a> {
    /// The path the connection ID belongs to (PATH_NEW_CONNECTION_ID); `None` means the plain frame, which
    /// applies to path 0.
    pub path_id: Option<PathId>,
    /// Sequence Number (per path).
    pub sequence: VarInt,
    /// Retire Prior To (≤ `sequence`).
    pub retire_prior_to: VarInt,
    /// The connection ID (1..=20 bytes).
    pub id: &'a [u8],
    /// Stateless Reset Token.
    pub reset_token: [u8; RESET_TOKEN_SIZE],
}

impl NewConnectionId<'_> {
    /// NEW_CONNECTION_ID or PATH_NEW_CONNECTION_ID.
    pub fn ty(&self) -> FrameType {
        if self.path_id.is_some() {
            FrameType::PATH_NEW_CONNECTION_ID
        } else {
            FrameType::NEW_CONNECTION_ID
        }
    }

    /// Exact encoded size.
    pub fn encoded_len(&self) -> usize {
        self.ty().size()
            + self.path_id.map_or(0, |p| VarInt::from(p.0).size())
            + self.sequence.size()
            + self.retire_prior_to.size()
            + 1
            + self.id.len()
            + RESET_TOKEN_SIZE
    }

    /// Writes the frame. The connection ID must be 1..=20 bytes long.
    pub fn encode<B: BufMut>(&self, buf: &mut B) {
        debug_assert!((1..=MAX_CID_SIZE).contains(&self.id.len()));
        self.ty().encode(buf);
        if let Some(p) = self.path_id {
            VarInt::from(p.0).encode(buf);
        }
        self.sequence.encode(buf);
        self.retire_prior_to.encode(buf);
        buf.put_u8(self.id.len() as u8);
        buf.put_slice(self.id);
        buf.put_slice(&self.reset_token);
    }
}

/// RETIRE_CONNECTION_ID (`path_id` = `None`) or PATH_RETIRE_CONNECTION_ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RetireConnectionId {
    /// The path of the retired connection ID (PATH_RETIRE_CONNECTION_ID); `None` means path 0.
    pub path_id: Option<PathId>,
    /// Sequence number of the connection ID being retired.
    pub sequence: VarInt,
}

impl RetireConnectionId {
    /// RETIRE_CONNECTION_ID or PATH_RETIRE_CONNECTION_ID.
    pub fn ty(&self) -> FrameType {
        if self.path_id.is_some() {
            FrameType::PATH_RETIRE_CONNECTION_ID
        } else {
            FrameType::RETIRE_CONNECTION_ID
        }
    }

    /// Exact encoded size.
    pub fn encoded_len(&self) -> usize {
        self.ty().size() + self.path_id.map_or(0, |p| VarInt::from(p.0).size()) + self.sequence.size()
    }

    /// Writes the frame.
    pub fn encode<B: BufMut>(&self, buf: &mut B) {
        self.ty().encode(buf);
        if let Some(p) = self.path_id {
            VarInt::from(p.0).encode(buf);
        }
        self.sequence.encode(buf);
    }
}

/// CONNECTION_CLOSE of type 0x1c: an error at the QUIC layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionClose<'a> {
    /// Transport error code (RFC 9000 §20.1).
    pub error_code: VarInt,
    /// Type of the frame that triggered the error, 0 when unknown.
    pub frame_type: VarInt,
    /// Reason Phrase (should be UTF-8; not checked).
    pub reason: &'a [u8],
}

impl ConnectionClose<'_> {
    /// Exact encoded size.
    pub fn encoded_len(&self) -> usize {
        1 + self.error_code.size()
            + self.frame_type.size()
            + len_varint(self.reason.len()).size()
            + self.reason.len()
    }

    /// Writes the frame.
    pub fn encode<B: BufMut>(&self, buf: &mut B) {
        FrameType::CONNECTION_CLOSE.encode(buf);
        self.error_code.encode(buf);
        self.frame_type.encode(buf);
        put_prefixed(buf, self.reason);
    }
}

/// CONNECTION_CLOSE of type 0x1d: an application error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApplicationClose<'a> {
    /// Application Protocol Error Code.
    pub error_code: VarInt,
    /// Reason Phrase (should be UTF-8; not checked).
    pub reason: &'a [u8],
}

impl ApplicationClose<'_> {
    /// Exact encoded size.
    pub fn encoded_len(&self) -> usize {
        1 + self.error_code.size() + len_varint(self.reason.len()).size() + self.reason.len()
    }

    /// Writes the frame.
    pub fn encode<B: BufMut>(&self, buf: &mut B) {
        FrameType::APPLICATION_CLOSE.encode(buf);
        self.error_code.encode(buf);
        put_prefixed(buf, self.reason);
    }
}

/// Decodes the Length, Connection ID and Stateless Reset Token of (PATH_)NEW_CONNECTION_ID.
fn decode_new_cid<'a>(path_id: Option<PathId>, d: &mut Decoder<'a>) -> Result<Frame<'a>, TransportError> {
    let sequence = d.varint()?;
    let retire_prior_to = d.varint()?;
    // RFC 9000 §19.15: "The value in the Retire Prior To field MUST be less than or equal to the value in the
    // Sequence Number field. Receiving a value in the Retire Prior To field that is greater than that in the
    // Sequence Number field MUST be treated as a connection error of type FRAME_ENCODING_ERROR."
    // (PATH_NEW_CONNECTION_ID keeps the field definitions of NEW_CONNECTION_ID, draft-ietf-quic-multipath-21.)
    if retire_prior_to > sequence {
        return Err(TransportError::frame_encoding(
            "Retire Prior To greater than Sequence Number",
        ));
    }
    let len = usize::from(d.u8()?);
    // RFC 9000 §19.15: "Values less than 1 and greater than 20 are invalid and MUST be treated as a connection
    // error of type FRAME_ENCODING_ERROR."
    if !(1..=MAX_CID_SIZE).contains(&len) {
        return Err(TransportError::frame_encoding(
            "connection ID length not in 1..=20",
        ));
    }
    let id = d.bytes(len)?;
    let reset_token = d.array()?;
    Ok(Frame::NewConnectionId(NewConnectionId {
        path_id,
        sequence,
        retire_prior_to,
        id,
        reset_token,
    }))
}

/// Decodes the body of a frame of this family.
pub(super) fn decode<'a>(ty: FrameType, d: &mut Decoder<'a>) -> Result<Frame<'a>, TransportError> {
    Ok(match ty {
        FrameType::NEW_TOKEN => {
            let token = d.varint_prefixed()?;
            // RFC 9000 §19.7: "A client MUST treat receipt of a NEW_TOKEN frame with an empty Token field as a
            // connection error of type FRAME_ENCODING_ERROR."
            if token.is_empty() {
                return Err(TransportError::frame_encoding("empty NEW_TOKEN token"));
            }
            Frame::NewToken(token)
        }
        FrameType::NEW_CONNECTION_ID => decode_new_cid(None, d)?,
        FrameType::PATH_NEW_CONNECTION_ID => decode_new_cid(Some(multipath::decode_path_id(d)?), d)?,
        FrameType::RETIRE_CONNECTION_ID => Frame::RetireConnectionId(RetireConnectionId {
            path_id: None,
            sequence: d.varint()?,
        }),
        FrameType::PATH_RETIRE_CONNECTION_ID => {
            let path_id = Some(multipath::decode_path_id(d)?);
            Frame::RetireConnectionId(RetireConnectionId {
                path_id,
                sequence: d.varint()?,
            })
        }
        FrameType::PATH_CHALLENGE => Frame::PathChallenge(d.array()?),
        FrameType::PATH_RESPONSE => Frame::PathResponse(d.array()?),
        FrameType::CONNECTION_CLOSE => {
            let error_code = d.varint()?;
            let frame_type = d.varint()?;
            let reason = d.varint_prefixed().map_err(|_| reason_too_long())?;
            Frame::ConnectionClose(ConnectionClose {
                error_code,
                frame_type,
                reason,
            })
        }
        FrameType::APPLICATION_CLOSE => {
            let error_code = d.varint()?;
            let reason = d.varint_prefixed().map_err(|_| reason_too_long())?;
            Frame::ApplicationClose(ApplicationClose { error_code, reason })
        }
        FrameType::HANDSHAKE_DONE => Frame::HandshakeDone,
        _ => return Err(TransportError::frame_encoding("unknown frame type")),
    })
}

/// RFC 9000 §19.19: "Because a CONNECTION_CLOSE frame cannot be split between packets, any limits on packet
/// size will also limit the space available for a reason phrase." A length beyond the packet is malformed.
fn reason_too_long() -> TransportError {
    TransportError::frame_encoding("CONNECTION_CLOSE reason phrase exceeds the packet")
}
