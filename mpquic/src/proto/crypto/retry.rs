//! The Retry Integrity Tag (RFC 9001 §5.8).
//!
//! The tag is the AES-128-GCM tag of an empty plaintext, under a key and nonce fixed by the RFC, with the
//! Retry pseudo-packet as associated data: the Original Destination Connection ID's length (one byte), that
//! ID, then the Retry packet without its tag. It proves that the Retry was sent by someone who saw the client's
//! Initial; it is not authentication. Verification compares tags in constant time (the AEAD's own check).

use ring::aead;

use super::CryptoError;
use super::initial::MAX_CID_LEN;

/// Length of the Retry Integrity Tag.
pub const RETRY_TAG_LEN: usize = 16;

/// RFC 9001 §5.8: the QUIC version 1 Retry key.
const RETRY_KEY: [u8; 16] = [
    0xbe, 0x0c, 0x69, 0x0b, 0x9f, 0x66, 0x57, 0x5a, 0x1d, 0x76, 0x6b, 0x54, 0xe3, 0x68, 0xc8, 0x4e,
];
/// RFC 9001 §5.8: the QUIC version 1 Retry nonce.
const RETRY_NONCE: [u8; 12] = [
    0x46, 0x15, 0x99, 0xd3, 0x5d, 0x63, 0x2b, 0xf2, 0x23, 0x98, 0x25, 0xbb,
];

/// The Retry pseudo-packet (RFC 9001 §5.8): ODCID length, ODCID, then the Retry packet without its tag.
fn pseudo_packet(odcid: &[u8], retry_without_tag: &[u8]) -> Result<Vec<u8>, CryptoError> {
    let odcid_len = u8::try_from(odcid.len()).map_err(|_| CryptoError::ConnectionIdTooLong)?;
    if odcid.len() > MAX_CID_LEN {
        return Err(CryptoError::ConnectionIdTooLong);
    }
    let mut pseudo = Vec::with_capacity(1 + odcid.len() + retry_without_tag.len());
    pseudo.push(odcid_len);
    pseudo.extend_from_slice(odcid);
    pseudo.extend_from_slice(retry_without_tag);
    Ok(pseudo)
}

fn retry_key() -> Result<aead::LessSafeKey, CryptoError> {
    aead::UnboundKey::new(&aead::AES_128_GCM, &RETRY_KEY)
        .map(aead::LessSafeKey::new)
        .map_err(|_| CryptoError::SuiteUnavailable)
}

/// The Retry Integrity Tag of `retry_without_tag` (every byte of the Retry packet before the tag), for the
/// Destination Connection ID `odcid` of the client's Initial that the Retry answers.
pub fn retry_integrity_tag(
    odcid: &[u8],
    retry_without_tag: &[u8],
) -> Result<[u8; RETRY_TAG_LEN], CryptoError> {
    let pseudo = pseudo_packet(odcid, retry_without_tag)?;
    let tag = retry_key()?
        .seal_in_place_separate_tag(
            aead::Nonce::assume_unique_for_key(RETRY_NONCE),
            aead::Aad::from(pseudo.as_slice()),
            &mut [],
        )
        .map_err(|_| CryptoError::EncryptionFailed)?;
    let mut out = [0u8; RETRY_TAG_LEN];
    for (o, t) in out.iter_mut().zip(tag.as_ref()) {
        *o = *t;
    }
    Ok(out)
}

/// Whether `retry_packet` (a whole Retry packet, tag included) carries a valid Retry Integrity Tag for the
/// client's original Destination Connection ID `odcid`.
///
/// RFC 9000 §17.2.5.2: "Clients MUST discard Retry packets that have a Retry Integrity Tag that cannot be
/// validated". A `false` here means: drop the packet.
pub fn verify_retry_integrity(odcid: &[u8], retry_packet: &[u8]) -> bool {
    let Some(split) = retry_packet.len().checked_sub(RETRY_TAG_LEN) else {
        return false;
    };
    let (body, tag) = retry_packet.split_at(split);
    let (Ok(pseudo), Ok(key)) = (pseudo_packet(odcid, body), retry_key()) else {
        return false;
    };
    // Opening an empty ciphertext checks the tag in constant time.
    let mut tag = tag.to_vec();
    key.open_in_place(
        aead::Nonce::assume_unique_for_key(RETRY_NONCE),
        aead::Aad::from(pseudo.as_slice()),
        &mut tag,
    )
    .is_ok()
}
