//! QUIC version 1 packets on the wire (RFC 9000 §17, RFC 8999 invariants, RFC 9001 §5.4 and §5.8 layout).
//!
//! What this module owns:
//! - [`header`]: long headers (Initial, 0-RTT, Handshake) and short (1-RTT) headers, parsed in two steps
//!   because header protection hides the low bits of the first byte and the packet number:
//!   [`PartialDecode`] reads what is visible (type, version, CIDs, token, Length) and says where the
//!   header-protection sample and the packet number are; after `crypto` has computed the mask,
//!   [`PartialDecode::remove_protection`] (or [`PartialDecode::finish`]) yields the full [`Header`].
//!   Building goes the other way: [`OutgoingHeader::encode`] writes the header into any `BufMut` with a
//!   placeholder Length and returns a [`PartialEncode`] that patches the Length once the payload is known and
//!   applies the header-protection mask.
//! - [`datagram`]: splitting a datagram into coalesced packets (RFC 9000 §12.2) and the 1200-byte Initial
//!   datagram rule (RFC 9000 §14.1).
//! - [`version_negotiation`], [`retry`], [`stateless_reset`]: the packets without packet protection.
//!
//! Invariants: every parser takes untrusted bytes, never panics, and returns [`PacketDecodeError`]. Header
//! errors never close a connection: a packet whose header cannot be parsed is dropped (RFC 9000 §12.2 keeps
//! the other packets of the datagram alive when they can still be found). The only header rule that becomes a
//! connection error is the reserved-bits check, and only after packet protection is removed
//! ([`Header::check_reserved_bits`]).

pub mod connection_id;
pub mod datagram;
pub mod header;
pub mod retry;
pub mod stateless_reset;
pub mod version_negotiation;

use thiserror::Error;

pub use connection_id::{ConnectionId, MAX_CID_SIZE};
pub use datagram::{
    CoalescedPackets, MIN_INITIAL_DATAGRAM_SIZE, check_initial_datagram_size, initial_padding_needed,
};
pub use header::{
    DecodedPacket, HP_SAMPLE_LEN, Header, LongType, OutgoingHeader, PacketType, PartialDecode, PartialEncode,
};
pub use retry::{RETRY_INTEGRITY_TAG_LEN, RetryPacket, encode_retry, retry_pseudo_packet};
pub use stateless_reset::{
    MIN_STATELESS_RESET_SIZE, RESET_TOKEN_SIZE, ResetToken, encode_stateless_reset, find_stateless_reset,
    stateless_reset_size,
};
pub use version_negotiation::{VersionNegotiation, VnDisposition, is_reserved_version};

/// QUIC version 1 (RFC 9000 §15).
pub const VERSION_1: u32 = 0x0000_0001;

/// The version field value that marks a Version Negotiation packet (RFC 9000 §17.2.1).
pub const VERSION_NEGOTIATION: u32 = 0;

/// Why a packet was not accepted. Every variant means "drop this packet" except where noted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum PacketDecodeError {
    /// A long header with a version this endpoint does not speak. A server may answer with a Version
    /// Negotiation packet ([`VersionNegotiation::respond`]); a client drops it.
    #[error("unsupported QUIC version {version:#010x}")]
    UnsupportedVersion {
        /// The version the packet carries.
        version: u32,
    },
    /// The packet is malformed or breaks a rule whose consequence is to drop it; the reason names the rule.
    #[error("invalid packet: {0}")]
    Invalid(&'static str),
}

impl PacketDecodeError {
    /// Shorthand for [`PacketDecodeError::Invalid`].
    pub(crate) const fn invalid(reason: &'static str) -> Self {
        PacketDecodeError::Invalid(reason)
    }
}

impl From<crate::proto::coding::UnexpectedEnd> for PacketDecodeError {
    fn from(_: crate::proto::coding::UnexpectedEnd) -> Self {
        PacketDecodeError::Invalid("packet truncated")
    }
}

/// Why a packet could not be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum PacketEncodeError {
    /// The packet is longer than its 2-byte Length field can describe (16383 bytes after the field).
    #[error("packet too long for its Length field")]
    TooLong,
    /// The buffer given to a patching function is shorter than the header it should patch.
    #[error("buffer shorter than the encoded header")]
    BufferTooShort,
    /// The packet is shorter than header protection needs for its sample (RFC 9001 §5.4.2).
    #[error("packet too short for the header-protection sample")]
    TooShortForSample,
}

#[cfg(test)]
mod tests;
