//! AEAD usage limits (RFC 9001 §6.6), counted across all paths of a connection.
//!
//! Two counters: packets protected with the current 1-RTT send key (the confidentiality limit; reset by a
//! key update, kept inside [`super::OneRttKeys`]), and received packets that failed authentication across the
//! whole connection, every level and every key (the integrity limit, [`IntegrityCounter`], owned by the
//! connection). Multipath changes nothing but the scope: every path uses the same keys, so every path counts.
//!
//! Limits per suite (RFC 9001 §6.6 and Appendix B): AES-128-GCM and AES-256-GCM, 2^23 packets and 2^52 forgeries;
//! ChaCha20-Poly1305, no practical confidentiality limit and 2^36 forgeries. The numbers come from the
//! provider's packet keys.

use super::PacketKey;
use crate::proto::error::{TransportError, TransportErrorCode};

/// The AEAD limits of one suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AeadLimits {
    /// Packets one key may protect.
    pub confidentiality: u64,
    /// Forged packets a connection may reject.
    pub integrity: u64,
}

impl AeadLimits {
    /// AES-128-GCM and AES-256-GCM (RFC 9001 §6.6).
    pub const AES_GCM: AeadLimits = AeadLimits {
        confidentiality: 1 << 23,
        integrity: 1 << 52,
    };
    /// ChaCha20-Poly1305 (RFC 9001 §6.6: its confidentiality limit exceeds the number of possible packets).
    pub const CHACHA20_POLY1305: AeadLimits = AeadLimits {
        confidentiality: u64::MAX,
        integrity: 1 << 36,
    };

    /// The limits the provider attaches to `key`.
    pub fn of(key: &PacketKey) -> AeadLimits {
        AeadLimits {
            confidentiality: key.confidentiality_limit(),
            integrity: key.integrity_limit(),
        }
    }

    /// The send count at which a key update should start, leaving room for the update to complete: three
    /// quarters of the confidentiality limit.
    pub fn update_threshold(&self) -> u64 {
        self.confidentiality - self.confidentiality / 4
    }
}

/// Counts received packets that failed authentication, across every path, level and key.
#[derive(Debug, Clone)]
pub struct IntegrityCounter {
    limit: u64,
    failures: u64,
}

impl IntegrityCounter {
    /// A counter for the limit of the negotiated suite (AES-GCM's until the handshake picks one).
    pub fn new(limits: AeadLimits) -> Self {
        IntegrityCounter {
            limit: limits.integrity,
            failures: 0,
        }
    }

    /// Lowers the limit to `limits` once the suite is known (the counter keeps its count).
    pub fn set_limits(&mut self, limits: AeadLimits) {
        self.limit = limits.integrity;
    }

    /// How many packets failed authentication so far.
    pub fn failures(&self) -> u64 {
        self.failures
    }

    /// Records one packet that failed authentication.
    pub fn on_auth_failure(&mut self) -> Result<(), TransportError> {
        self.failures = self.failures.saturating_add(1);
        // RFC 9001 §6.6: "If the total number of received packets that fail authentication within the
        // connection, across all keys, exceeds the integrity limit for the selected AEAD, the endpoint MUST
        // immediately close the connection with a connection error of type AEAD_LIMIT_REACHED and not process
        // any more packets."
        if self.failures > self.limit {
            return Err(TransportError::new(
                TransportErrorCode::AEAD_LIMIT_REACHED,
                "integrity limit: too many packets failed authentication",
            ));
        }
        Ok(())
    }
}

impl Default for IntegrityCounter {
    fn default() -> Self {
        IntegrityCounter::new(AeadLimits::AES_GCM)
    }
}
