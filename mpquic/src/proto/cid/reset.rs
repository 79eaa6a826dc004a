//! Stateless reset tokens derived from a static key and the connection ID (RFC 9000 §10.3.2), so that an
//! endpoint that lost all state of a connection can still compute the token it once issued for a connection ID
//! and send a Stateless Reset that the peer will recognise.
//!
//! token = first 16 bytes of HMAC-SHA256(static key, connection ID). The key is secret and shared by every
//! connection of one endpoint; it never leaves this type (its `Debug` does not print it).

use ring::hmac;

use crate::proto::packet::connection_id::ConnectionId;
use crate::proto::packet::stateless_reset::{RESET_TOKEN_SIZE, ResetToken};

/// Length of the static key [`ResetKey::random`] draws, in bytes: the HMAC-SHA256 output length (RFC 2104 §3:
/// keys shorter than the output length are "strongly discouraged").
pub const RESET_KEY_SIZE: usize = 32;

/// The endpoint-wide static key that stateless reset tokens are derived from.
#[derive(Clone)]
pub struct ResetKey(hmac::Key);

impl ResetKey {
    /// A key from secret bytes (give at least [`RESET_KEY_SIZE`] random bytes; the same bytes give the same
    /// tokens, which is the point: an endpoint that restarts with the same secret recognises its old CIDs).
    pub fn new(secret: &[u8]) -> Self {
        ResetKey(hmac::Key::new(hmac::HMAC_SHA256, secret))
    }

    /// A fresh key from [`RESET_KEY_SIZE`] bytes of `fill` (the caller's random source).
    pub fn random(fill: &mut dyn FnMut(&mut [u8])) -> Self {
        let mut secret = [0u8; RESET_KEY_SIZE];
        fill(&mut secret);
        Self::new(&secret)
    }

    /// The stateless reset token of `cid`.
    ///
    /// RFC 9000 §10.3.2: "A single static key can be used across all connections to the same endpoint to
    /// generate proof-of-possession tokens by using a pseudorandom function that takes a static key and the
    /// connection ID chosen by the endpoint (see Section 5.1) as input. An endpoint could use HMAC \[RFC2104\]
    /// (for example, HMAC(static_key, connection_id)) [...]. The output of this function is truncated to 16
    /// bytes to produce the stateless reset token for that connection." And: "An endpoint that loses state can
    /// use the same method to generate a valid stateless reset token."
    ///
    /// RFC 9000 §10.3.2: "An endpoint that uses this design MUST either use the same connection ID length for
    /// all connections or encode the length of the connection ID such that it can be recovered without state."
    /// The connection-ID issuer ([`super::LocalCids`]) uses one configured length for every CID it issues.
    pub fn token(&self, cid: &ConnectionId) -> ResetToken {
        let tag = hmac::sign(&self.0, cid.as_slice());
        let mut token = [0u8; RESET_TOKEN_SIZE];
        // SHA-256 output is 32 bytes, so the prefix always exists; `zip` keeps this panic-free regardless.
        for (t, b) in token.iter_mut().zip(tag.as_ref()) {
            *t = *b;
        }
        ResetToken(token)
    }
}

impl std::fmt::Debug for ResetKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ResetKey(..)")
    }
}
