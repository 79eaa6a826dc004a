//! The keys of one encryption level, and the Initial keys (RFC 9001 §5.2).
//!
//! Initial keys are derived from the Destination Connection ID of the client's first Initial packet with
//! HKDF-SHA256 and the version-1 salt, and always use AES-128-GCM whatever the negotiated suite. Both sides
//! derive the same two secrets; `Side` says which one protects what we send.

use rustls::quic::Version;

use super::{CryptoError, HeaderKey, PacketKey, Side};

/// The largest connection ID in QUIC version 1 (RFC 9000 §17.2).
pub const MAX_CID_LEN: usize = 20;

/// Header and packet keys for one direction.
#[derive(Debug)]
pub struct DirectionalKeys {
    /// Header protection.
    pub header: HeaderKey,
    /// Payload protection.
    pub packet: PacketKey,
}

/// The keys of one encryption level (Initial or Handshake): `local` protects what we send, `remote` opens
/// what the peer sends.
#[derive(Debug)]
pub struct Keys {
    /// Keys for packets we send.
    pub local: DirectionalKeys,
    /// Keys for packets we receive.
    pub remote: DirectionalKeys,
}

impl Keys {
    /// The QUIC version 1 Initial keys for the client's first Destination Connection ID `dcid`, as seen by
    /// `side` (RFC 9001 §5.2).
    pub fn initial(dcid: &[u8], side: Side) -> Result<Keys, CryptoError> {
        // RFC 9000 §17.2: "In QUIC version 1, this value MUST NOT exceed 20 bytes. Endpoints that receive a
        // version 1 long header with a value larger than 20 MUST drop the packet."
        if dcid.len() > MAX_CID_LEN {
            return Err(CryptoError::ConnectionIdTooLong);
        }
        let suite = initial_suite()?;
        Ok(Keys::from_rustls(suite.keys(dcid, side, Version::V1)))
    }

    /// Wraps keys handed out by rustls.
    pub fn from_rustls(keys: rustls::quic::Keys) -> Keys {
        Keys {
            local: DirectionalKeys::from_rustls(keys.local),
            remote: DirectionalKeys::from_rustls(keys.remote),
        }
    }
}

impl DirectionalKeys {
    /// Wraps one direction's keys handed out by rustls.
    pub fn from_rustls(keys: rustls::quic::DirectionalKeys) -> DirectionalKeys {
        DirectionalKeys {
            header: HeaderKey::new(keys.header),
            packet: PacketKey::new(keys.packet),
        }
    }
}

/// The suite of Initial packets: TLS_AES_128_GCM_SHA256 (RFC 9001 §5.2).
fn initial_suite() -> Result<rustls::quic::Suite, CryptoError> {
    match rustls::crypto::ring::cipher_suite::TLS13_AES_128_GCM_SHA256 {
        rustls::SupportedCipherSuite::Tls13(suite) => suite.quic_suite().ok_or(CryptoError::SuiteUnavailable),
        #[allow(unreachable_patterns)]
        _ => Err(CryptoError::SuiteUnavailable),
    }
}
