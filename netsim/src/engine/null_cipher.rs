//! The simulator's cost-free cipher (`crypto = "null"` in a scenario's `[scenario]` section): a rustls
//! [`CryptoProvider`] whose TLS 1.3 suites are the three real ones (TLS_AES_128_GCM_SHA256, the one
//! negotiated, then TLS_AES_256_GCM_SHA384 and TLS_CHACHA20_POLY1305_SHA256) with their QUIC packet
//! protection replaced by a cheap check that encrypts nothing.
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
//! The AEAD limits (RFC 9001 §6.6) are the real suite's, so key updates happen at the same packet counts as
//! with the real cipher, and the suites keep their code points and order so that every handshake message
//! has the same size (a ClientHello offering one suite is 4 bytes shorter, and under heavy loss a
//! retransmitted ClientHello shares its datagram with a 1-RTT packet, which then carried 4 more bytes of
//! stream data). Results of a run therefore do not depend on the cipher; the equivalence tests check it.
//!
//! Safety: this module exists only in the simulator crate. The provider is installed only by
//! [`super::tls::Material`] when the scenario file asks for it; nothing in mpquic, its runtime, or any
//! packet a peer sends can select it, and an endpoint using it could not talk to a real one (its tags are
//! not AES-GCM tags).

use std::sync::{Arc, LazyLock};

use rustls::crypto::cipher::{AeadKey, Iv};
use rustls::crypto::{CipherSuiteCommon, CryptoProvider};
use rustls::quic::{self, Tag};
use rustls::{Error, SupportedCipherSuite, Tls13CipherSuite};

/// The AEAD tag length (RFC 9001 §5.3: every TLS 1.3 suite has a 16-byte tag).
pub const TAG_LEN: usize = 16;

/// The header-protection sample length (RFC 9001 §5.4.2: 16 bytes for every suite).
const SAMPLE_LEN: usize = 16;

/// The longest Packet Number field (RFC 9000 §17.1).
const MAX_PN_LEN: usize = 4;

/// The QUIC algorithm of a null suite: the key length of the real suite it stands for (the key schedule
/// derives keys of that length, RFC 9001 §5.1) and that suite's AEAD limits (RFC 9001 §6.6).
#[derive(Debug)]
pub struct NullQuic {
    key_len: usize,
    limits: Limits,
}

/// Packets one key may protect and forgeries a connection may reject.
#[derive(Clone, Copy, Debug)]
struct Limits {
    confidentiality: u64,
    integrity: u64,
}

/// AES-128-GCM and AES-256-GCM (RFC 9001 §6.6): 2^23 packets per key, 2^52 forgeries.
const AES_GCM_LIMITS: Limits = Limits {
    confidentiality: 1 << 23,
    integrity: 1 << 52,
};

/// ChaCha20-Poly1305 (RFC 9001 §6.6): no practical confidentiality limit, 2^36 forgeries.
const CHACHA_LIMITS: Limits = Limits {
    confidentiality: u64::MAX,
    integrity: 1 << 36,
};

static NULL_AES_128: NullQuic = NullQuic {
    key_len: 16,
    limits: AES_GCM_LIMITS,
};
static NULL_AES_256: NullQuic = NullQuic {
    key_len: 32,
    limits: AES_GCM_LIMITS,
};
static NULL_CHACHA20: NullQuic = NullQuic {
    key_len: 32,
    limits: CHACHA_LIMITS,
};

impl quic::Algorithm for NullQuic {
    fn packet_key(&self, _key: AeadKey, iv: Iv) -> Box<dyn quic::PacketKey> {
        Box::new(NullPacketKey::new(&iv, self.limits))
    }

    fn header_protection_key(&self, _key: AeadKey) -> Box<dyn quic::HeaderProtectionKey> {
        Box::new(NullHeaderKey)
    }

    fn aead_key_len(&self) -> usize {
        self.key_len
    }
}

/// A TLS 1.3 suite of rustls's ring provider.
fn real(suite: SupportedCipherSuite) -> Option<&'static Tls13CipherSuite> {
    match suite {
        SupportedCipherSuite::Tls13(suite) => Some(suite),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// `real` with its QUIC packet protection replaced by `quic`; code point, hash, HKDF and the
/// handshake's record protection stay the real suite's.
fn null_of(real: &'static Tls13CipherSuite, quic: &'static NullQuic) -> Tls13CipherSuite {
    Tls13CipherSuite {
        common: CipherSuiteCommon {
            suite: real.common.suite,
            hash_provider: real.common.hash_provider,
            confidentiality_limit: real.common.confidentiality_limit,
        },
        hkdf_provider: real.hkdf_provider,
        aead_alg: real.aead_alg,
        quic: Some(quic),
    }
}

/// The null suites, in the order mpquic offers the real ones (AES-128-GCM, AES-256-GCM,
/// ChaCha20-Poly1305): the ClientHello then lists the same code points as a real client's and has the
/// same size, so every handshake message, and every packet that carries or shares a datagram with one,
/// has its real length. The handshake picks the first, as it does with the real suites.
static NULL_SUITES: LazyLock<Option<[Tls13CipherSuite; 3]>> = LazyLock::new(|| {
    use rustls::crypto::ring::cipher_suite as cs;
    Some([
        null_of(real(cs::TLS13_AES_128_GCM_SHA256)?, &NULL_AES_128),
        null_of(real(cs::TLS13_AES_256_GCM_SHA384)?, &NULL_AES_256),
        null_of(real(cs::TLS13_CHACHA20_POLY1305_SHA256)?, &NULL_CHACHA20),
    ])
});

/// Why the null provider could not be built (never expected: the ring provider has every TLS 1.3 suite).
#[derive(Debug, thiserror::Error)]
#[error("a TLS 1.3 suite is missing from the ring provider")]
pub struct MissingSuite;

/// The null-cipher provider: rustls's ring provider with the null suites as its only cipher suites.
pub fn provider() -> Result<Arc<CryptoProvider>, MissingSuite> {
    let suites = NULL_SUITES.as_ref().ok_or(MissingSuite)?;
    Ok(Arc::new(CryptoProvider {
        cipher_suites: suites.iter().map(SupportedCipherSuite::Tls13).collect(),
        ..rustls::crypto::ring::default_provider()
    }))
}

/// XOR of `bytes` taken as little-endian 64-bit words from position `start` of the packet (a word's bit
/// `8 · (p mod 8) + b` holds bit `b` of the byte at packet position `p`), so that the checksum of a packet
/// does not depend on where the header ends.
///
/// The bulk runs over 64-byte blocks into eight independent words, which the compiler turns into wide
/// vector XORs (about two instructions per 16 bytes); the last partial word is assembled byte by byte
/// rather than through a copy into a zeroed buffer (a `memcpy` call per packet).
fn fold(bytes: &[u8], start: usize) -> u64 {
    let mut blocks = bytes.chunks_exact(64);
    let mut acc = [0u64; 8];
    for block in &mut blocks {
        for (a, w) in acc.iter_mut().zip(block.chunks_exact(8)) {
            *a ^= word(w);
        }
    }
    let mut sum = acc.iter().fold(0, |s, a| s ^ a);
    let mut words = blocks.remainder().chunks_exact(8);
    for w in &mut words {
        sum ^= word(w);
    }
    for (i, b) in words.remainder().iter().enumerate() {
        sum ^= u64::from(*b) << (8 * i);
    }
    // Byte i of `bytes` sits at packet position start + i: rotate byte lanes by start mod 8.
    let shift = u32::try_from((start % 8) * 8).unwrap_or(0);
    sum.rotate_left(shift)
}

/// The little-endian value of an 8-byte chunk (`chunks_exact(8)` only yields such chunks).
fn word(chunk: &[u8]) -> u64 {
    u64::from_le_bytes(<[u8; 8]>::try_from(chunk).unwrap_or_default())
}

/// The AEAD nonce of `pn` on `path` as two little-endian words (bytes 0..8 and 8..12 of the nonce): the
/// IV XOR the 96-bit big-endian `path ‖ 0b00 ‖ pn` (draft-ietf-quic-multipath-21, "Nonce Calculation"),
/// the value rustls's `Nonce::for_path` builds byte by byte. The IV's words are read once per key.
fn nonce_words(iv: (u64, u32), path: u32, pn: u64) -> (u64, u32) {
    // Nonce bytes 0..4 are the path ID (big-endian), bytes 4..12 the packet number (big-endian).
    let path_be = u64::from(path.swap_bytes());
    let pn_be = pn.swap_bytes();
    let low = iv.0 ^ path_be ^ (pn_be << 32);
    let high = iv.1 ^ (pn_be >> 32) as u32;
    (low, high)
}

/// A null packet key: the tag is [`NullPacketKey::tag`] of the packet, the payload is not transformed.
struct NullPacketKey {
    /// The IV as little-endian words: bytes 0..8 and 8..12.
    iv: (u64, u32),
    limits: Limits,
}

impl NullPacketKey {
    fn new(iv: &Iv, limits: Limits) -> Self {
        let iv = iv.as_ref();
        let mut low = [0u8; 8];
        let mut high = [0u8; 4];
        for (d, s) in low.iter_mut().chain(high.iter_mut()).zip(iv) {
            *d = *s;
        }
        NullPacketKey {
            iv: (u64::from_le_bytes(low), u32::from_le_bytes(high)),
            limits,
        }
    }

    /// The tag of a packet with `header` and plaintext `payload`, sent on `path` with number `pn`: the
    /// checksum of header and payload in both halves, XORed with the nonce (12 bytes, then its first 4
    /// again), and the payload length in the last word so that a truncated packet differs too.
    fn tag(&self, path: u32, pn: u64, header: &[u8], payload: &[u8]) -> [u8; TAG_LEN] {
        let sum = fold(header, 0) ^ fold(payload, header.len());
        let (n_low, n_high) = nonce_words(self.iv, path, pn);
        let len = (payload.len() as u64) << 32 ^ (header.len() as u64);
        // Tag bytes 0..8: checksum XOR nonce bytes 0..8; bytes 8..16: lengths XOR nonce bytes 8..12, 0..4.
        let a = sum ^ n_low;
        let b = len ^ (u64::from(n_high) | (n_low << 32));
        let mut tag = [0u8; TAG_LEN];
        let (ta, tb) = tag.split_at_mut(8);
        ta.copy_from_slice(&a.to_le_bytes());
        tb.copy_from_slice(&b.to_le_bytes());
        tag
    }

    fn open<'a>(&self, path: u32, pn: u64, header: &[u8], payload: &'a mut [u8]) -> Result<&'a [u8], Error> {
        // `let … else`, not `ok_or(Error::…)`: that builds (and drops) an error value for every packet.
        let Some(plain_len) = payload.len().checked_sub(TAG_LEN) else {
            return Err(Error::DecryptError);
        };
        let (plain, tag) = payload.split_at(plain_len);
        if self.tag(path, pn, header, plain).as_slice() != tag {
            return Err(Error::DecryptError);
        }
        match payload.get(..plain_len) {
            Some(plain) => Ok(plain),
            None => Err(Error::DecryptError),
        }
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
        self.limits.confidentiality
    }

    fn integrity_limit(&self) -> u64 {
        self.limits.integrity
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
        NULL_AES_128.packet_key(AeadKey::from([7u8; 32]), Iv::from([iv; 12]))
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
    fn nonce_words_are_rustls_multipath_nonce() {
        // The words must be the 12 bytes of rustls's nonce (IV XOR path ‖ pn, big-endian), read as
        // little-endian words: bytes 0..8 and 8..12.
        let iv_bytes: [u8; 12] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0xfe];
        let iv = Iv::from(iv_bytes);
        let key = NullPacketKey::new(&iv, AES_GCM_LIMITS);
        for (path, pn) in [
            (0u32, 0u64),
            (3, 1000),
            (0x0102_0304, (1 << 62) - 1),
            (u32::MAX, 0x1234_5678_9abc),
        ] {
            let n = rustls::crypto::cipher::Nonce::for_path(path, &iv, pn).0;
            let (low, high) = nonce_words(key.iv, path, pn);
            assert_eq!(low.to_le_bytes(), n[..8], "path {path} pn {pn}");
            assert_eq!(high.to_le_bytes(), n[8..], "path {path} pn {pn}");
        }
    }

    #[test]
    fn fold_matches_the_word_by_word_definition() {
        // Against a direct reading of the definition: byte at packet position p lands in bits
        // 8 · (p mod 8) .. of the sum. Lengths around the 64-byte blocks and every start offset.
        let bytes: Vec<u8> = (0..300u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for len in [0, 1, 7, 8, 9, 63, 64, 65, 127, 128, 135, 300] {
            for start in 0..9 {
                let want = bytes[..len]
                    .iter()
                    .enumerate()
                    .fold(0u64, |s, (i, b)| s ^ (u64::from(*b) << (8 * ((start + i) % 8))));
                assert_eq!(fold(&bytes[..len], start), want, "len {len} start {start}");
            }
        }
    }

    #[test]
    fn header_protection_changes_nothing_and_checks_lengths() {
        let hp = NULL_AES_128.header_protection_key(AeadKey::from([0u8; 32]));
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
    fn provider_offers_null_suites_under_the_real_code_points_in_mpquic_order() {
        use rustls::CipherSuite as Cs;
        let p = provider().unwrap();
        let ids: Vec<Cs> = p.cipher_suites.iter().map(|s| s.suite()).collect();
        assert_eq!(
            ids,
            [
                Cs::TLS13_AES_128_GCM_SHA256,
                Cs::TLS13_AES_256_GCM_SHA384,
                Cs::TLS13_CHACHA20_POLY1305_SHA256
            ]
        );
        let limits = |q: &NullQuic| {
            let k = q.packet_key(AeadKey::from([0u8; 32]), Iv::from([0u8; 12]));
            (q.aead_key_len(), k.confidentiality_limit(), k.integrity_limit())
        };
        assert_eq!(limits(&NULL_AES_128), (16, 1 << 23, 1 << 52));
        assert_eq!(limits(&NULL_AES_256), (32, 1 << 23, 1 << 52));
        assert_eq!(limits(&NULL_CHACHA20), (32, u64::MAX, 1 << 36));
    }
}
