//! The simulator's cost-free cipher (`crypto = "null"` in a scenario's `[scenario]` section): a rustls
//! [`CryptoProvider`] whose only TLS 1.3 suite is TLS_AES_128_GCM_SHA256 with its QUIC packet protection
//! replaced by a cheap check that encrypts nothing.
//!
//! What stays real: the whole TLS handshake (key exchange, certificate, signatures, HKDF, the TLS records
//! inside CRYPTO frames), the Initial keys (derived by mpquic itself from the connection ID, always real
//! AES-128-GCM, RFC 9001 §5.2) and Retry integrity tags. What changes: the Handshake, 0-RTT and 1-RTT packet
//! keys and their header-protection keys, which rustls builds from the negotiated suite's
//! [`quic::Algorithm`], here [`NullQuic`]:
//! - **packet protection**: the payload is left in the clear and the 16-byte tag (the AEAD tag's size,
//!   RFC 9001 §5.3, so every packet has its real length) is a checksum of the header and payload XORed
//!   with the AEAD nonce (the key's IV XOR path ID and packet number, draft-ietf-quic-multipath-21 "Nonce
//!   Calculation"). Opening recomputes it and rejects any mismatch, so a packet with any single bit flipped
//!   anywhere, opened with the wrong key (another level, direction or key-update generation: their IVs
//!   differ) or for the wrong packet number is rejected, as real AEAD rejects it. The checksum is an XOR
//!   of 64-bit words (every bit of the packet lands in one bit of the sum), a few dozen instructions for a
//!   full-sized packet against AES-GCM's work over every byte;
//! - **header protection**: the mask is all zeros (RFC 9001 §5.4.1 applied with a null mask): the first
//!   byte and packet number travel in the clear; the sample is still required (16 bytes), so the length
//!   rules of RFC 9001 §5.4.2 are unchanged.
//!
//! The AEAD limits (RFC 9001 §6.6) are AES-128-GCM's, so key updates happen at the same packet counts as
//! with the real cipher, and the suite keeps AES-128-GCM's code point so that every handshake message has
//! the same size. Results of a run therefore do not depend on the cipher; the equivalence tests check it.
//!
//! Safety: this module exists only in the simulator crate. The provider is installed only by
//! [`super::tls::Material`] when the scenario file asks for it; nothing in mpquic, its runtime, or any
//! packet a peer sends can select it, and an endpoint using it could not talk to a real one (its tags are
//! not AES-GCM tags).

use std::sync::{Arc, LazyLock};

use rustls::crypto::cipher::{AeadKey, Iv, Nonce};
use rustls::crypto::{CipherSuiteCommon, CryptoProvider};
use rustls::quic::{self, Tag};
use rustls::{Error, SupportedCipherSuite, Tls13CipherSuite};

/// The AEAD tag length (RFC 9001 §5.3: every TLS 1.3 suite has a 16-byte tag).
pub const TAG_LEN: usize = 16;

/// The header-protection sample length (RFC 9001 §5.4.2: 16 bytes for every suite).
const SAMPLE_LEN: usize = 16;

/// The longest Packet Number field (RFC 9000 §17.1).
const MAX_PN_LEN: usize = 4;

/// AES-128-GCM's limits (RFC 9001 §6.6): 2^23 packets per key, 2^52 forgeries.
const CONFIDENTIALITY_LIMIT: u64 = 1 << 23;
const INTEGRITY_LIMIT: u64 = 1 << 52;

/// The QUIC algorithm of the null suite.
#[derive(Debug)]
pub struct NullQuic;

static NULL_QUIC: NullQuic = NullQuic;

impl quic::Algorithm for NullQuic {
    fn packet_key(&self, _key: AeadKey, iv: Iv) -> Box<dyn quic::PacketKey> {
        Box::new(NullPacketKey { iv })
    }

    fn header_protection_key(&self, _key: AeadKey) -> Box<dyn quic::HeaderProtectionKey> {
        Box::new(NullHeaderKey)
    }

    fn aead_key_len(&self) -> usize {
        // AES-128: the key schedule derives keys of the real suite's length (RFC 9001 §5.1).
        16
    }
}

/// The real TLS_AES_128_GCM_SHA256 of rustls's ring provider, whose handshake parts the null suite reuses.
fn real_aes128() -> Option<&'static Tls13CipherSuite> {
    match rustls::crypto::ring::cipher_suite::TLS13_AES_128_GCM_SHA256 {
        SupportedCipherSuite::Tls13(suite) => Some(suite),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// The null suite: AES-128-GCM's handshake parts and code point, [`NullQuic`] packet protection.
static NULL_SUITE: LazyLock<Option<Tls13CipherSuite>> = LazyLock::new(|| {
    real_aes128().map(|real| Tls13CipherSuite {
        common: CipherSuiteCommon {
            suite: real.common.suite,
            hash_provider: real.common.hash_provider,
            confidentiality_limit: real.common.confidentiality_limit,
        },
        hkdf_provider: real.hkdf_provider,
        aead_alg: real.aead_alg,
        quic: Some(&NULL_QUIC),
    })
});

/// Why the null provider could not be built (never expected: the ring provider always has AES-128-GCM).
#[derive(Debug, thiserror::Error)]
#[error("the TLS 1.3 suite AES-128-GCM is missing from the ring provider")]
pub struct MissingSuite;

/// The null-cipher provider: rustls's ring provider with the null suite as its only cipher suite.
pub fn provider() -> Result<Arc<CryptoProvider>, MissingSuite> {
    let suite = NULL_SUITE.as_ref().ok_or(MissingSuite)?;
    Ok(Arc::new(CryptoProvider {
        cipher_suites: vec![SupportedCipherSuite::Tls13(suite)],
        ..rustls::crypto::ring::default_provider()
    }))
}

/// XOR of `bytes` taken as little-endian 64-bit words from position `start` of the packet (a word's bit
/// `8 · (p mod 8) + b` holds bit `b` of the byte at packet position `p`), so that the checksum of a packet
/// does not depend on where the header ends.
fn fold(bytes: &[u8], start: usize) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    let mut sum = 0u64;
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        sum ^= u64::from_le_bytes(w);
    }
    let mut tail = [0u8; 8];
    for (t, b) in tail.iter_mut().zip(chunks.remainder()) {
        *t = *b;
    }
    sum ^= u64::from_le_bytes(tail);
    // Byte i of `bytes` sits at packet position start + i: rotate byte lanes by start mod 8.
    let shift = u32::try_from((start % 8) * 8).unwrap_or(0);
    sum.rotate_left(shift)
}

/// A null packet key: the tag is [`tag`] of the packet, the payload is not transformed.
struct NullPacketKey {
    iv: Iv,
}

impl NullPacketKey {
    /// The tag of a packet with `header` and plaintext `payload`, sent on `path` with number `pn`: the
    /// checksum of header and payload in both halves, XORed with the nonce (12 bytes, then its first 4
    /// again), and the payload length in the last word so that a truncated packet differs too.
    fn tag(&self, path: u32, pn: u64, header: &[u8], payload: &[u8]) -> [u8; TAG_LEN] {
        let sum = fold(header, 0) ^ fold(payload, header.len());
        let nonce = Nonce::for_path(path, &self.iv, pn).0;
        let mut tag = [0u8; TAG_LEN];
        let (a, b) = tag.split_at_mut(8);
        a.copy_from_slice(&sum.to_le_bytes());
        let len = (payload.len() as u64) << 32 ^ (header.len() as u64);
        b.copy_from_slice(&len.to_le_bytes());
        for (t, n) in tag.iter_mut().zip(nonce.iter().chain(nonce.iter())) {
            *t ^= n;
        }
        tag
    }

    fn open<'a>(&self, path: u32, pn: u64, header: &[u8], payload: &'a mut [u8]) -> Result<&'a [u8], Error> {
        let plain_len = payload.len().checked_sub(TAG_LEN).ok_or(Error::DecryptError)?;
        let (plain, tag) = payload.split_at(plain_len);
        if self.tag(path, pn, header, plain).as_slice() != tag {
            return Err(Error::DecryptError);
        }
        payload.get(..plain_len).ok_or(Error::DecryptError)
    }
}

impl quic::PacketKey for NullPacketKey {
    fn encrypt_in_place(&self, packet_number: u64, header: &[u8], payload: &mut [u8]) -> Result<Tag, Error> {
        self.encrypt_in_place_for_path(0, packet_number, header, payload)
    }

    fn encrypt_in_place_for_path(
        &self,
        path_id: u32,
        packet_number: u64,
        header: &[u8],
        payload: &mut [u8],
    ) -> Result<Tag, Error> {
        Ok(Tag::from(&self.tag(path_id, packet_number, header, payload)[..]))
    }

    fn decrypt_in_place<'a>(
        &self,
        packet_number: u64,
        header: &[u8],
        payload: &'a mut [u8],
    ) -> Result<&'a [u8], Error> {
        self.open(0, packet_number, header, payload)
    }

    fn decrypt_in_place_for_path<'a>(
        &self,
        path_id: u32,
        packet_number: u64,
        header: &[u8],
        payload: &'a mut [u8],
    ) -> Result<&'a [u8], Error> {
        self.open(path_id, packet_number, header, payload)
    }

    fn tag_len(&self) -> usize {
        TAG_LEN
    }

    fn confidentiality_limit(&self) -> u64 {
        CONFIDENTIALITY_LIMIT
    }

    fn integrity_limit(&self) -> u64 {
        INTEGRITY_LIMIT
    }
}

/// A null header-protection key: the mask is all zeros, so nothing changes, but the sample and the
/// packet-number length are checked as for a real key.
struct NullHeaderKey;

impl NullHeaderKey {
    fn check(sample: &[u8], packet_number: &[u8]) -> Result<(), Error> {
        if sample.len() != SAMPLE_LEN || packet_number.len() > MAX_PN_LEN {
            return Err(Error::General(
                "header protection: bad sample or packet number length".into(),
            ));
        }
        Ok(())
    }
}

impl quic::HeaderProtectionKey for NullHeaderKey {
    fn encrypt_in_place(
        &self,
        sample: &[u8],
        _first: &mut u8,
        packet_number: &mut [u8],
    ) -> Result<(), Error> {
        NullHeaderKey::check(sample, packet_number)
    }

    fn decrypt_in_place(
        &self,
        sample: &[u8],
        _first: &mut u8,
        packet_number: &mut [u8],
    ) -> Result<(), Error> {
        NullHeaderKey::check(sample, packet_number)
    }

    fn sample_len(&self) -> usize {
        SAMPLE_LEN
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use super::*;
    use rustls::quic::{Algorithm, PacketKey};

    fn key(iv: u8) -> Box<dyn PacketKey> {
        NullQuic.packet_key(AeadKey::from([7u8; 32]), Iv::from([iv; 12]))
    }

    /// A 60-byte packet: 20 header bytes, 24 payload bytes, the 16-byte tag.
    fn sealed(key: &dyn PacketKey, path: u32, pn: u64) -> Vec<u8> {
        let mut packet: Vec<u8> = (0..60u8).collect();
        let (header, rest) = packet.split_at_mut(20);
        let (payload, tag) = rest.split_at_mut(24);
        let t = key.encrypt_in_place_for_path(path, pn, header, payload).unwrap();
        tag.copy_from_slice(t.as_ref());
        packet
    }

    fn open(
        key: &dyn PacketKey,
        path: u32,
        pn: u64,
        packet: &mut [u8],
        header_len: usize,
    ) -> Result<usize, Error> {
        let (header, payload) = packet.split_at_mut(header_len);
        key.decrypt_in_place_for_path(path, pn, header, payload)
            .map(<[u8]>::len)
    }

    #[test]
    fn seal_leaves_the_payload_and_open_returns_it() {
        let k = key(1);
        let mut packet = sealed(&*k, 3, 1000);
        let clear: Vec<u8> = (0..44u8).collect();
        assert_eq!(packet[..44], clear[..]);
        assert_eq!(open(&*k, 3, 1000, &mut packet, 20), Ok(24));
        assert_eq!(packet[..44], clear[..]);
    }

    #[test]
    fn every_single_bit_flip_is_rejected() {
        let k = key(1);
        let packet = sealed(&*k, 0, 5);
        for bit in 0..packet.len() * 8 {
            let mut bad = packet.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            assert!(
                open(&*k, 0, 5, &mut bad, 20).is_err(),
                "bit {bit} flipped was accepted"
            );
        }
    }

    #[test]
    fn checksum_does_not_depend_on_the_header_split_but_the_length_word_does() {
        // The same bytes split after 20 or after 21 bytes: the checksum word is equal, the length word
        // differs, so a packet whose Packet Number length bits were corrupted is still rejected.
        let k = key(1);
        let mut packet = sealed(&*k, 0, 5);
        let bytes: Vec<u8> = (0..44u8).collect();
        assert_eq!(
            fold(&bytes[..20], 0) ^ fold(&bytes[20..], 20),
            fold(&bytes[..21], 0) ^ fold(&bytes[21..], 21)
        );
        assert!(open(&*k, 0, 5, &mut packet, 21).is_err());
    }

    #[test]
    fn wrong_key_packet_number_or_path_is_rejected() {
        let k = key(1);
        let packet = sealed(&*k, 2, 77);
        assert!(open(&*key(2), 2, 77, &mut packet.clone(), 20).is_err());
        assert!(open(&*k, 2, 78, &mut packet.clone(), 20).is_err());
        assert!(open(&*k, 1, 77, &mut packet.clone(), 20).is_err());
        assert!(open(&*k, 2, 77, &mut packet[..59].to_vec(), 20).is_err());
        assert!(open(&*k, 2, 77, &mut packet.clone(), 20).is_ok());
    }

    #[test]
    fn fold_places_each_byte_by_its_packet_position() {
        // Byte 0x01 at packet position 9 lands in lane 1 (bits 8..16) whatever the split.
        assert_eq!(fold(&[0x01], 9), 0x0100);
        assert_eq!(fold(&[0, 0x01], 8), 0x0100);
        assert_eq!(fold(&[0xaa, 0, 0, 0, 0, 0, 0, 0, 0x55], 0), 0xff);
    }

    #[test]
    fn header_protection_changes_nothing_and_checks_lengths() {
        let hp = NullQuic.header_protection_key(AeadKey::from([0u8; 32]));
        let mut first = 0x43;
        let mut pn = [1, 2, 3, 4];
        hp.encrypt_in_place(&[9; 16], &mut first, &mut pn).unwrap();
        assert_eq!((first, pn), (0x43, [1, 2, 3, 4]));
        hp.decrypt_in_place(&[9; 16], &mut first, &mut pn).unwrap();
        assert_eq!((first, pn), (0x43, [1, 2, 3, 4]));
        assert!(hp.encrypt_in_place(&[9; 15], &mut first, &mut pn).is_err());
        assert!(hp.decrypt_in_place(&[9; 16], &mut first, &mut [0; 5]).is_err());
    }

    #[test]
    fn provider_offers_the_null_suite_under_aes_128_gcm_code_point() {
        let p = provider().unwrap();
        assert_eq!(p.cipher_suites.len(), 1);
        assert_eq!(
            p.cipher_suites[0].suite(),
            rustls::CipherSuite::TLS13_AES_128_GCM_SHA256
        );
    }
}
