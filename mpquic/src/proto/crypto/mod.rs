//! Packet protection (RFC 9001 §5, §6) and the TLS handshake glue, over `rustls::quic` with the ring provider.
//!
//! What lives here, one concern per file:
//! - [`header`]: header protection, applied and removed in place (RFC 9001 §5.4);
//! - [`packet`]: AEAD payload protection in place, with the multipath nonce (draft-ietf-quic-multipath-21, "Nonce Calculation":
//!   nonce = IV XOR (path ID (32 bits) ‖ 0b00 ‖ packet number (62 bits)); for path 0 this is RFC 9001's nonce);
//! - [`initial`]: the key sets of one encryption level, and the Initial keys derived from the client's first
//!   Destination Connection ID (RFC 9001 §5.2);
//! - [`key_update`]: the 1-RTT keys with key update (RFC 9001 §6), which the connection drives;
//! - [`limits`]: AEAD confidentiality and integrity limits (RFC 9001 §6.6), counted across all paths;
//! - [`retry`]: the Retry Integrity Tag (RFC 9001 §5.8);
//! - [`tls`]: a TLS 1.3 session over `rustls::quic::Connection` and the configuration helpers.
//!
//! Nothing here reads a clock or a socket. Failures to unprotect a packet are reported as [`CryptoError`]: the
//! connection drops such packets (RFC 9001 §5.5) and feeds the failure to the integrity-limit counter.

pub mod header;
pub mod initial;
pub mod key_update;
pub mod limits;
pub mod packet;
pub mod retry;
pub mod tls;

#[cfg(test)]
mod tests;

use thiserror::Error;

pub use header::{HeaderKey, PacketNumberField};
pub use initial::{DirectionalKeys, Keys};
pub use key_update::{KeyUpdateBlocked, KeyUpdateEvent, OneRttKeys, Opened};
pub use limits::{AeadLimits, IntegrityCounter};
pub use packet::{PacketKey, multipath_nonce};
pub use retry::{RETRY_TAG_LEN, retry_integrity_tag, verify_retry_integrity};
pub use rustls::Side;
pub use tls::{
    CipherSuite, HandshakeError, KeyChange, Level, SelfSigned, TlsOptions, TlsSession, client_config,
    client_config_dangerous_skip_verification, client_config_with_provider, server_config,
    server_config_with_provider,
};

/// Why packet protection could not be applied or removed. The connection drops the packet; none of these is
/// a transport error by itself (RFC 9001 §5.5), except through the integrity limit ([`IntegrityCounter`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum CryptoError {
    /// The packet is too short to hold the header-protection sample (RFC 9001 §5.4.2).
    #[error("packet too short for the header protection sample")]
    TooShortForSample,
    /// The packet is too short to hold its header and the AEAD tag.
    #[error("packet too short for the AEAD tag")]
    TooShortForTag,
    /// The AEAD tag did not verify: wrong key, wrong path ID, wrong packet number or tampered bytes.
    #[error("packet authentication failed")]
    AuthenticationFailed,
    /// The AEAD refused to seal (payload longer than the algorithm allows).
    #[error("packet encryption failed")]
    EncryptionFailed,
    /// The packet number is larger than 2^62 − 1 and cannot enter the nonce (RFC 9000 §12.3).
    #[error("packet number out of range")]
    PacketNumberOutOfRange,
    /// The keys of the current phase protected as many packets as the confidentiality limit allows
    /// (RFC 9001 §6.6): update the keys, or close with AEAD_LIMIT_REACHED.
    #[error("confidentiality limit reached")]
    ConfidentialityLimitReached,
    /// A connection ID longer than 20 bytes (RFC 9000 §17.2).
    #[error("connection ID longer than 20 bytes")]
    ConnectionIdTooLong,
    /// The crypto provider lacks QUIC support for a needed suite (a build problem, not a peer's fault).
    #[error("cipher suite unavailable for QUIC")]
    SuiteUnavailable,
}
