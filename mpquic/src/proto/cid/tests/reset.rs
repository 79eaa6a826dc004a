//! Stateless reset tokens from a static key (RFC 9000 §10.3.2): AES-CMAC (RFC 4493) under a key derived with
//! HKDF-Expand (RFC 5869).

use super::{TestRng, cid, key};
use crate::proto::cid::ResetKey;
use crate::proto::cid::reset::Cmac;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// RFC 4493 §4 test vectors (K = 2b7e1516 28aed2a6 abf71588 09cf4f3c; the message prefixes of 0, 16 and
/// 40 bytes are Examples 1, 2 and 3), plus a 20-byte prefix (the longest connection ID, two blocks with a
/// padded last one) computed independently with Python's `cryptography` package
/// (`CMAC(algorithms.AES(K)).update(M[:20]).finalize()`).
#[test]
fn rfc4493_aes_cmac_vectors() {
    let k: [u8; 16] = hex("2b7e151628aed2a6abf7158809cf4f3c").try_into().unwrap();
    let m = hex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411");
    let cmac = Cmac::new(k);
    for (len, tag) in [
        (0, "bb1d6929e95937287fa37d129b756746"),
        (16, "070a16b46b4d4144f79bdd9dd04a287c"),
        (20, "7d85449ea6ea19c823a7bf78837dfade"),
        (40, "dfa66747de9ae63030ca32611497c827"),
    ] {
        assert_eq!(cmac.mac(&m[..len]).to_vec(), hex(tag), "{len}-byte message");
    }
}

/// The whole derivation, checked against an independent computation (Python's `cryptography` package):
/// `k = HKDFExpand(SHA256(), 16, b"mpquic stateless reset").derive(secret)` = 663355bf ba6034da 83f5320f
/// baa56aaf, then `CMAC(AES(k))` of the connection ID.
#[test]
fn token_is_aes_cmac_of_the_cid_under_the_hkdf_expanded_key() {
    let k = key(); // secret = b"a static key of thirty-two bytes"
    let cmac = Cmac::new(hex("663355bfba6034da83f5320fbaa56aaf").try_into().unwrap());
    for (c, token) in [
        (vec![1, 2, 3, 4, 5, 6, 7, 8], "731df2cc47ebdfbc61587db5b16a8dc3"),
        ((0..20).collect::<Vec<u8>>(), "6aa8ee7262d6038354a066a0833f97c1"),
    ] {
        assert_eq!(k.token(&cid(&c)).0.to_vec(), hex(token));
        assert_eq!(cmac.mac(&c).to_vec(), hex(token));
    }
}

#[test]
fn endpoint_that_lost_state_recomputes_the_same_token() {
    // RFC 9000 §10.3.2: the static-key design lets an endpoint without connection state produce the token.
    let c = cid(&[9; 8]);
    let before = key().token(&c);
    let restarted = ResetKey::new(b"a static key of thirty-two bytes");
    assert_eq!(restarted.token(&c), before);
    // A clone shares the key.
    assert_eq!(restarted.clone().token(&c), before);
}

#[test]
fn tokens_differ_per_cid_and_per_key() {
    let k = key();
    assert_ne!(k.token(&cid(&[1; 8])), k.token(&cid(&[2; 8])));
    // Different lengths are different inputs (CMAC pads a partial block with 10*, so a prefix differs).
    assert_ne!(k.token(&cid(&[1; 8])), k.token(&cid(&[1; 9])));
    assert_ne!(k.token(&cid(&[0; 16])), k.token(&cid(&[0; 15])));
    let mut rng = TestRng(7);
    let other = ResetKey::random(&mut |b| rng.fill(b));
    assert_ne!(other.token(&cid(&[1; 8])), k.token(&cid(&[1; 8])));
    // A one-bit change in the secret changes the token.
    let mut secret = *b"a static key of thirty-two bytes";
    secret[31] ^= 1;
    assert_ne!(
        ResetKey::new(&secret).token(&cid(&[1; 8])),
        k.token(&cid(&[1; 8]))
    );
}

#[test]
fn debug_does_not_print_the_key() {
    assert_eq!(format!("{:?}", key()), "ResetKey(..)");
}
