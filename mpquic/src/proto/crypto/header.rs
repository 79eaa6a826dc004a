//! Header protection (RFC 9001 §5.4): the first byte's low bits and the packet-number bytes are masked with
//! bytes derived from a sample of the ciphertext.
//!
//! The sample starts 4 bytes after the start of the Packet Number field, whatever its real length
//! (RFC 9001 §5.4.2), so a protected packet must hold at least `pn_offset + 4 + sample_len` bytes. Long headers
//! mask the 4 low bits of the first byte, short headers the 5 low bits (which include the Key Phase bit). The
//! mask is computed by the suite's header-protection cipher (AES-ECB or ChaCha20, RFC 9001 §5.4.3–5.4.4).
//! Header protection keys are never updated by a key update (RFC 9001 §6.1).

use std::fmt;

use super::CryptoError;

/// The longest Packet Number field (RFC 9000 §17.1).
const MAX_PN_LEN: usize = 4;

/// One direction's header-protection key.
pub struct HeaderKey {
    inner: Box<dyn rustls::quic::HeaderProtectionKey>,
}

/// The Packet Number field as it was before protection: its length and its truncated value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketNumberField {
    /// Length of the field in bytes, 1 to 4 (the first byte's two low bits plus one).
    pub len: usize,
    /// The truncated packet number, to be expanded with [`crate::proto::packet_number::decode`].
    pub truncated: u32,
}

impl HeaderKey {
    /// Wraps a rustls header-protection key.
    pub fn new(inner: Box<dyn rustls::quic::HeaderProtectionKey>) -> Self {
        HeaderKey { inner }
    }

    /// The length of the ciphertext sample, 16 for every TLS 1.3 suite.
    pub fn sample_len(&self) -> usize {
        self.inner.sample_len()
    }

    /// The smallest protected packet this key can process, given where its packet number starts.
    pub fn min_packet_len(&self, pn_offset: usize) -> usize {
        pn_offset
            .saturating_add(MAX_PN_LEN)
            .saturating_add(self.sample_len())
    }

    /// Applies header protection to `packet`, a whole packet whose payload is already sealed and whose
    /// Packet Number field starts at `pn_offset`. The packet-number length is read from the (still clear)
    /// first byte.
    pub fn apply(&self, packet: &mut [u8], pn_offset: usize) -> Result<(), CryptoError> {
        let (first, pn, sample) = self.split(packet, pn_offset)?;
        let pn_len = usize::from(*first & 0x03) + 1;
        let pn = pn.get_mut(..pn_len).ok_or(CryptoError::TooShortForSample)?;
        self.inner
            .encrypt_in_place(sample, first, pn)
            .map_err(|_| CryptoError::TooShortForSample)
    }

    /// Removes header protection from `packet`, whose Packet Number field starts at `pn_offset`, and returns
    /// that field. Afterwards the first byte and the packet-number bytes are in the clear; the bytes after
    /// the real packet number (the start of the ciphertext) are untouched.
    pub fn remove(&self, packet: &mut [u8], pn_offset: usize) -> Result<PacketNumberField, CryptoError> {
        let (first, pn, sample) = self.split(packet, pn_offset)?;
        // rustls unmasks only as many packet-number bytes as the unmasked first byte announces.
        self.inner
            .decrypt_in_place(sample, first, pn)
            .map_err(|_| CryptoError::TooShortForSample)?;
        let len = usize::from(*first & 0x03) + 1;
        let truncated = pn
            .iter()
            .take(len)
            .fold(0u32, |acc, b| (acc << 8) | u32::from(*b));
        Ok(PacketNumberField { len, truncated })
    }

    /// Splits `packet` into the first byte, the 4 bytes from `pn_offset` and the sample after them.
    fn split<'a>(
        &self,
        packet: &'a mut [u8],
        pn_offset: usize,
    ) -> Result<(&'a mut u8, &'a mut [u8], &'a [u8]), CryptoError> {
        // RFC 9001 §5.4.2: "in sampling the packet ciphertext for header protection, the Packet Number field
        // is assumed to be 4 bytes long". A packet too short for the sample cannot be unprotected: drop it.
        if pn_offset == 0 || packet.len() < self.min_packet_len(pn_offset) {
            return Err(CryptoError::TooShortForSample);
        }
        let (head, rest) = packet
            .split_at_mut_checked(pn_offset)
            .ok_or(CryptoError::TooShortForSample)?;
        let first = head.first_mut().ok_or(CryptoError::TooShortForSample)?;
        let (pn, after) = rest
            .split_at_mut_checked(MAX_PN_LEN)
            .ok_or(CryptoError::TooShortForSample)?;
        let sample = after
            .get(..self.sample_len())
            .ok_or(CryptoError::TooShortForSample)?;
        Ok((first, pn, sample))
    }
}

impl fmt::Debug for HeaderKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HeaderKey")
            .field("sample_len", &self.sample_len())
            .finish_non_exhaustive()
    }
}
