//! Payload protection (RFC 9001 §5.3) with the multipath nonce (draft-ietf-quic-multipath-21, "Nonce Calculation").
//!
//! A packet is sealed in place: the header (up to and including the Packet Number field, before header
//! protection) is the associated data, the payload is encrypted where it lies and the 16-byte tag fills the
//! last bytes of the buffer. The nonce is the IV XOR the 96-bit big-endian value
//! `path_id (32 bits) ‖ 0b00 ‖ packet_number (62 bits)`. For path ID 0 that equals RFC 9001's nonce
//! (IV XOR packet number), so one code path serves Initial, Handshake, single-path and multipath 1-RTT packets.

use std::fmt;

use super::CryptoError;
use crate::cc::PathId;
use crate::proto::packet_number::MAX_PACKET_NUMBER;

/// One direction's packet-protection (AEAD) key and IV.
pub struct PacketKey {
    inner: Box<dyn rustls::quic::PacketKey>,
}

/// The AEAD nonce for `pn` on `path` (draft-ietf-quic-multipath-21, "Nonce Calculation"): `iv` XOR (path ID ‖ 0b00 ‖ pn).
pub fn multipath_nonce(iv: &[u8; 12], path: PathId, pn: u64) -> [u8; 12] {
    let mut nonce = *iv;
    let path_bytes = path.0.to_be_bytes();
    let pn_bytes = (pn & MAX_PACKET_NUMBER).to_be_bytes();
    for (n, b) in nonce.iter_mut().zip(path_bytes.iter().chain(pn_bytes.iter())) {
        *n ^= b;
    }
    nonce
}

impl PacketKey {
    /// Wraps a rustls packet key.
    pub fn new(inner: Box<dyn rustls::quic::PacketKey>) -> Self {
        PacketKey { inner }
    }

    /// Length of the AEAD tag that follows the ciphertext (16 for every TLS 1.3 suite).
    pub fn tag_len(&self) -> usize {
        self.inner.tag_len()
    }

    /// How many packets this key may protect (RFC 9001 §6.6).
    pub fn confidentiality_limit(&self) -> u64 {
        self.inner.confidentiality_limit()
    }

    /// How many forged packets the connection may reject before it must close (RFC 9001 §6.6).
    pub fn integrity_limit(&self) -> u64 {
        self.inner.integrity_limit()
    }

    /// Seals `packet` in place for packet number `pn` on `path`.
    ///
    /// `packet` is the header (`header_len` bytes, the associated data), then the plaintext payload, then
    /// [`tag_len`](Self::tag_len) bytes of room that receive the tag.
    pub fn seal(
        &self,
        path: PathId,
        pn: u64,
        packet: &mut [u8],
        header_len: usize,
    ) -> Result<(), CryptoError> {
        if pn > MAX_PACKET_NUMBER {
            return Err(CryptoError::PacketNumberOutOfRange);
        }
        let payload_end = packet
            .len()
            .checked_sub(self.tag_len())
            .filter(|end| *end >= header_len)
            .ok_or(CryptoError::TooShortForTag)?;
        let (rest, tag_room) = packet
            .split_at_mut_checked(payload_end)
            .ok_or(CryptoError::TooShortForTag)?;
        let (header, payload) = rest
            .split_at_mut_checked(header_len)
            .ok_or(CryptoError::TooShortForTag)?;
        let tag = self
            .inner
            .encrypt_in_place_for_path(path.0, pn, header, payload)
            .map_err(|_| CryptoError::EncryptionFailed)?;
        let tag = tag.as_ref();
        if tag.len() != tag_room.len() {
            return Err(CryptoError::EncryptionFailed);
        }
        tag_room.copy_from_slice(tag);
        Ok(())
    }

    /// Opens `packet` in place for packet number `pn` on `path` and returns the plaintext length: the payload
    /// is then `packet[header_len..header_len + len]`.
    ///
    /// `packet` is the header (header protection already removed), then the ciphertext and its tag. On failure
    /// the payload bytes are unspecified and the packet must be dropped.
    pub fn open(
        &self,
        path: PathId,
        pn: u64,
        packet: &mut [u8],
        header_len: usize,
    ) -> Result<usize, CryptoError> {
        if pn > MAX_PACKET_NUMBER {
            return Err(CryptoError::PacketNumberOutOfRange);
        }
        if packet.len() < header_len.saturating_add(self.tag_len()) {
            return Err(CryptoError::TooShortForTag);
        }
        let (header, payload) = packet
            .split_at_mut_checked(header_len)
            .ok_or(CryptoError::TooShortForTag)?;
        let plain = self
            .inner
            .decrypt_in_place_for_path(path.0, pn, header, payload)
            .map_err(|_| CryptoError::AuthenticationFailed)?;
        Ok(plain.len())
    }
}

impl fmt::Debug for PacketKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PacketKey")
            .field("tag_len", &self.tag_len())
            .finish_non_exhaustive()
    }
}
