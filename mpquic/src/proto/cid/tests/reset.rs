//! Stateless reset tokens from a static key (RFC 9000 §10.3.2).

use ring::hmac;

use super::{TestRng, cid, key};
use crate::proto::cid::ResetKey;

#[test]
fn token_is_truncated_hmac_sha256_of_the_cid() {
    let secret = b"a static key of thirty-two bytes";
    let c = cid(&[1, 2, 3, 4, 5, 6, 7, 8]);
    let tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, secret), &c);
    assert_eq!(key().token(&c).0[..], tag.as_ref()[..16]);
}

#[test]
fn endpoint_that_lost_state_recomputes_the_same_token() {
    // RFC 9000 §10.3.2: the static-key design lets an endpoint without connection state produce the token.
    let c = cid(&[9; 8]);
    let before = key().token(&c);
    let restarted = ResetKey::new(b"a static key of thirty-two bytes");
    assert_eq!(restarted.token(&c), before);
}

#[test]
fn tokens_differ_per_cid_and_per_key() {
    let k = key();
    assert_ne!(k.token(&cid(&[1; 8])), k.token(&cid(&[2; 8])));
    // Different lengths are different inputs.
    assert_ne!(k.token(&cid(&[1; 8])), k.token(&cid(&[1; 9])));
    let mut rng = TestRng(7);
    let other = ResetKey::random(&mut |b| rng.fill(b));
    assert_ne!(other.token(&cid(&[1; 8])), k.token(&cid(&[1; 8])));
}

#[test]
fn debug_does_not_print_the_key() {
    assert_eq!(format!("{:?}", key()), "ResetKey(..)");
}
