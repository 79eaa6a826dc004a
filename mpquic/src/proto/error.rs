//! Transport errors (RFC 9000 §20.1 and draft-ietf-quic-multipath-21 §4): the code a CONNECTION_CLOSE carries
//! when the peer breaks a rule, with the frame type that triggered it and a static reason.
//!
//! Errors are allocation-free: the reason is a `&'static str` naming the rule that was broken.

use std::fmt;

use thiserror::Error;

use crate::proto::coding::UnexpectedEnd;

/// A QUIC transport error code (RFC 9000 §20.1).
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct TransportErrorCode(pub u64);

macro_rules! codes {
    ($($name:ident = $value:expr, $doc:literal;)*) => {
        impl TransportErrorCode {
            $(#[doc = $doc] pub const $name: TransportErrorCode = TransportErrorCode($value);)*

            /// The code's name in the RFC, if it has one.
            pub fn name(self) -> Option<&'static str> {
                match self.0 {
                    $($value => Some(stringify!($name)),)*
                    0x0100..=0x01ff => Some("CRYPTO_ERROR"),
                    _ => None,
                }
            }
        }
    };
}

codes! {
    NO_ERROR = 0x00, "An endpoint uses this with CONNECTION_CLOSE to close the connection without error.";
    INTERNAL_ERROR = 0x01, "The endpoint encountered an internal error and cannot continue.";
    CONNECTION_REFUSED = 0x02, "The server refused to accept a new connection.";
    FLOW_CONTROL_ERROR = 0x03, "The peer sent more data than the advertised flow-control limits allow.";
    STREAM_LIMIT_ERROR = 0x04, "The peer opened more streams than allowed.";
    STREAM_STATE_ERROR = 0x05, "A frame was received for a stream in a state that does not permit it.";
    FINAL_SIZE_ERROR = 0x06, "A stream's final size changed or data went beyond it.";
    FRAME_ENCODING_ERROR = 0x07, "A frame was badly formatted.";
    TRANSPORT_PARAMETER_ERROR = 0x08, "Transport parameters were malformed, invalid, absent or repeated.";
    CONNECTION_ID_LIMIT_ERROR = 0x09, "The peer provided more connection IDs than active_connection_id_limit.";
    PROTOCOL_VIOLATION = 0x0a, "The peer broke a protocol rule not covered by a more specific code.";
    INVALID_TOKEN = 0x0b, "A server received a client Initial with an invalid token.";
    APPLICATION_ERROR = 0x0c, "The application or application protocol caused the connection to close.";
    CRYPTO_BUFFER_EXCEEDED = 0x0d, "The peer sent more CRYPTO data than can be buffered.";
    KEY_UPDATE_ERROR = 0x0e, "An error in key update was detected.";
    AEAD_LIMIT_REACHED = 0x0f, "The AEAD confidentiality or integrity limit was reached.";
    NO_VIABLE_PATH = 0x10, "No network path is able to support QUIC.";
}

impl TransportErrorCode {
    /// CRYPTO_ERROR (0x0100–0x01ff) carrying a TLS alert (RFC 9001 §4.8).
    pub fn crypto(alert: u8) -> TransportErrorCode {
        TransportErrorCode(0x100 | u64::from(alert))
    }
}

impl fmt::Debug for TransportErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name}({:#x})", self.0),
            None => write!(f, "{:#x}", self.0),
        }
    }
}

impl fmt::Display for TransportErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A broken rule: what CONNECTION_CLOSE (type 0x1c) reports to the peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("{code}: {reason}{}", frame_type.map(|t| format!(" (frame type {t:#x})")).unwrap_or_default())]
pub struct TransportError {
    /// The error code.
    pub code: TransportErrorCode,
    /// The type of the frame that triggered the error, if a frame did.
    pub frame_type: Option<u64>,
    /// Which rule was broken.
    pub reason: &'static str,
}

impl TransportError {
    /// An error with `code` and `reason`, not tied to a frame.
    pub const fn new(code: TransportErrorCode, reason: &'static str) -> Self {
        TransportError {
            code,
            frame_type: None,
            reason,
        }
    }

    /// The same error, attributed to frame type `frame_type`.
    pub const fn with_frame(mut self, frame_type: u64) -> Self {
        self.frame_type = Some(frame_type);
        self
    }

    /// FRAME_ENCODING_ERROR.
    pub const fn frame_encoding(reason: &'static str) -> Self {
        Self::new(TransportErrorCode::FRAME_ENCODING_ERROR, reason)
    }

    /// PROTOCOL_VIOLATION.
    pub const fn protocol_violation(reason: &'static str) -> Self {
        Self::new(TransportErrorCode::PROTOCOL_VIOLATION, reason)
    }

    /// TRANSPORT_PARAMETER_ERROR.
    pub const fn transport_parameter(reason: &'static str) -> Self {
        Self::new(TransportErrorCode::TRANSPORT_PARAMETER_ERROR, reason)
    }
}

impl From<UnexpectedEnd> for TransportError {
    /// A truncated frame is a FRAME_ENCODING_ERROR (RFC 9000 §12.4).
    fn from(_: UnexpectedEnd) -> Self {
        TransportError::frame_encoding("frame truncated")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_rfc9000_section_20_1() {
        assert_eq!(TransportErrorCode::FRAME_ENCODING_ERROR.0, 0x07);
        assert_eq!(TransportErrorCode::PROTOCOL_VIOLATION.0, 0x0a);
        assert_eq!(TransportErrorCode::NO_VIABLE_PATH.0, 0x10);
        assert_eq!(TransportErrorCode::crypto(0x2a).0, 0x12a);
        assert_eq!(TransportErrorCode::crypto(0x2a).name(), Some("CRYPTO_ERROR"));
        assert_eq!(
            format!("{:?}", TransportErrorCode(0x08)),
            "TRANSPORT_PARAMETER_ERROR(0x8)"
        );
        let e = TransportError::frame_encoding("bad").with_frame(0x1c);
        assert_eq!(e.to_string(), "FRAME_ENCODING_ERROR(0x7): bad (frame type 0x1c)");
    }
}
