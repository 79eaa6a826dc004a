//! Stateless reset tokens derived from a static key and the connection ID (RFC 9000 §10.3.2), so that an
//! endpoint that lost all state of a connection can still compute the token it once issued for a connection ID
//! and send a Stateless Reset that the peer will recognise.
//!
//! token = AES-CMAC(K, connection ID) (RFC 4493; with a 128-bit key this is AES-CMAC-PRF-128 of RFC 4615),
//! where K = HKDF-Expand(secret, "mpquic stateless reset", 16) (RFC 5869 §2.3, the endpoint's random secret
//! used as the pseudorandom key). The CMAC output is exactly the 16 bytes of a token.
//!
//! Why CMAC rather than HMAC-SHA256: every connection ID an endpoint issues needs a token, and a handshake
//! that offers multipath issues ten of them on each side. With the AES key schedule and the two CMAC subkeys
//! prepared once per endpoint, a token of a connection ID of up to 16 bytes costs one AES block encryption
//! (two up to the 20-byte maximum), where HMAC-SHA256 costs two SHA-256 compressions: about 3 % of a
//! handshake's instructions before. AES-CMAC is a pseudorandom function as long as AES is a pseudorandom
//! permutation (Iwata and Kurosawa, "OMAC: One-Key CBC MAC", FSE 2003; the standard RFC 4615 builds its PRF
//! on it), which is what RFC 9000 §10.3.2 asks for: without the static key the tokens are unpredictable. The
//! tokens are only ever computed and checked by the endpoint that issued them (the peer stores them), so the
//! function is a local choice that does not affect interoperability.
//!
//! The secret and K are secret and shared by every connection of one endpoint; they never leave this type (its
//! `Debug` does not print them). AES runs on the `aes` crate, which uses AES-NI where the CPU has it and a
//! constant-time bitsliced implementation elsewhere.

use std::sync::Arc;

use aes::Aes128Enc;
use aes::cipher::{BlockEncrypt, KeyInit};
use ring::hmac;

use crate::proto::packet::connection_id::ConnectionId;
use crate::proto::packet::stateless_reset::{RESET_TOKEN_SIZE, ResetToken};

/// Length of the secret [`ResetKey::random`] draws, in bytes: the HKDF-SHA256 pseudorandom-key length
/// (RFC 5869 §2.2: "a pseudorandom key (of HashLen octets)").
pub const RESET_KEY_SIZE: usize = 32;

/// The HKDF-Expand `info` that turns the endpoint's secret into the CMAC key.
const KEY_INFO: &[u8] = b"mpquic stateless reset";

/// AES block size, CMAC output size and token size, in bytes.
const BLOCK: usize = RESET_TOKEN_SIZE;

/// The endpoint-wide static key that stateless reset tokens are derived from. Cloning shares it.
#[derive(Clone)]
pub struct ResetKey(Arc<Cmac>);

impl ResetKey {
    /// A key from secret bytes (give at least [`RESET_KEY_SIZE`] random bytes; the same bytes give the same
    /// tokens, which is the point: an endpoint that restarts with the same secret recognises its old CIDs).
    pub fn new(secret: &[u8]) -> Self {
        // RFC 5869 §2.3 with L = 16 ≤ HashLen: OKM = T(1) = HMAC-Hash(PRK, info | 0x01), first 16 bytes.
        let mut t1 = hmac::Context::with_key(&hmac::Key::new(hmac::HMAC_SHA256, secret));
        t1.update(KEY_INFO);
        t1.update(&[0x01]);
        let tag = t1.sign();
        let mut key = [0u8; BLOCK];
        // SHA-256 output is 32 bytes, so the prefix always exists; `zip` keeps this panic-free regardless.
        for (k, b) in key.iter_mut().zip(tag.as_ref()) {
            *k = *b;
        }
        ResetKey(Arc::new(Cmac::new(key)))
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
    /// connection ID chosen by the endpoint (see Section 5.1) as input. [...] The output of this function is
    /// truncated to 16 bytes to produce the stateless reset token for that connection." And: "An endpoint
    /// that loses state can use the same method to generate a valid stateless reset token."
    ///
    /// RFC 9000 §10.3.2: "An endpoint that uses this design MUST either use the same connection ID length for
    /// all connections or encode the length of the connection ID such that it can be recovered without state."
    /// The connection-ID issuer ([`super::LocalCids`]) uses one configured length for every CID it issues.
    pub fn token(&self, cid: &ConnectionId) -> ResetToken {
        ResetToken(self.0.mac(cid.as_slice()))
    }
}

impl std::fmt::Debug for ResetKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ResetKey(..)")
    }
}

/// AES-128-CMAC (RFC 4493) with the key schedule and both subkeys prepared.
pub(crate) struct Cmac {
    cipher: Aes128Enc,
    /// Subkey for a complete last block.
    k1: [u8; BLOCK],
    /// Subkey for a padded last block.
    k2: [u8; BLOCK],
}

impl Cmac {
    /// RFC 4493 §2.3, Generate_Subkey: L = AES-128(K, 0^128); K1 = L << 1, K2 = K1 << 1, each XORed with
    /// Rb = 0x87 in its last byte when the bit shifted out was 1.
    pub(crate) fn new(key: [u8; BLOCK]) -> Self {
        let cipher = Aes128Enc::new(&key.into());
        let mut l = [0u8; BLOCK];
        encrypt(&cipher, &mut l);
        let k1 = double(&l);
        let k2 = double(&k1);
        Cmac { cipher, k1, k2 }
    }

    /// RFC 4493 §2.4, AES-CMAC(K, M) of any length.
    pub(crate) fn mac(&self, message: &[u8]) -> [u8; BLOCK] {
        // Step 3-4: the last block is the final 1..=16 bytes (none for an empty message); a complete one is
        // XORed with K1, a partial one is padded with 10* and XORed with K2.
        let last_len = match message.len() % BLOCK {
            0 if !message.is_empty() => BLOCK,
            r => r,
        };
        let (head, last) = message.split_at(message.len() - last_len);
        let mut x = [0u8; BLOCK];
        // Step 6: X := AES(K, X xor M_i) for every block but the last.
        for block in head.chunks_exact(BLOCK) {
            xor_into(&mut x, block);
            encrypt(&self.cipher, &mut x);
        }
        let mut m_last = [0u8; BLOCK];
        let subkey = if last_len == BLOCK {
            &self.k1
        } else {
            // padding(x) = x || 10^i
            if let Some(b) = m_last.get_mut(last_len) {
                *b = 0x80;
            }
            &self.k2
        };
        for (m, b) in m_last.iter_mut().zip(last) {
            *m = *b;
        }
        xor_into(&mut m_last, subkey);
        // Step 6, last block: T := AES(K, M_last xor X).
        xor_into(&mut x, &m_last);
        encrypt(&self.cipher, &mut x);
        x
    }
}

/// One AES block encryption in place.
fn encrypt(cipher: &Aes128Enc, block: &mut [u8; BLOCK]) {
    let mut b = aes::Block::from(*block);
    cipher.encrypt_block(&mut b);
    *block = b.into();
}

/// `x ^= y` over the common length.
fn xor_into(x: &mut [u8; BLOCK], y: &[u8]) {
    for (a, b) in x.iter_mut().zip(y) {
        *a ^= *b;
    }
}

/// Multiplication by x in GF(2^128) as RFC 4493 §2.3 writes it: a left shift by one bit of the big-endian
/// block, XORing Rb = 0x87 into the last byte if the most significant bit was set.
fn double(block: &[u8; BLOCK]) -> [u8; BLOCK] {
    let v = u128::from_be_bytes(*block);
    let carry = v >> 127;
    ((v << 1) ^ (carry * 0x87)).to_be_bytes()
}
