//! Stateless Reset (RFC 9000 §10.3): building one from a token and random bytes, and recognising one by the
//! 16-byte token at the end of a datagram, compared in constant time.

use bytes::BufMut;

/// Size of a stateless reset token (RFC 9000 §10.3).
pub const RESET_TOKEN_SIZE: usize = 16;

/// RFC 9000 §10.3: "The resulting minimum size of 21 bytes": 5 bytes (the two fixed bits and at least 38
/// unpredictable bits) and the token.
pub const MIN_STATELESS_RESET_SIZE: usize = 5 + RESET_TOKEN_SIZE;

/// A stateless reset token. Equality is constant time.
#[derive(Clone, Copy, Eq, Default)]
pub struct ResetToken(pub [u8; RESET_TOKEN_SIZE]);

impl ResetToken {
    /// Compares without branching on the bytes (RFC 9000 §10.3.1: "When comparing a datagram to stateless
    /// reset token values, endpoints MUST perform the comparison without leaking information about the value
    /// of the token.").
    pub fn ct_eq(&self, other: &[u8; RESET_TOKEN_SIZE]) -> bool {
        let diff = self.0.iter().zip(other).fold(0u8, |acc, (a, b)| acc | (a ^ b));
        std::hint::black_box(diff) == 0
    }
}

impl PartialEq for ResetToken {
    fn eq(&self, other: &Self) -> bool {
        self.ct_eq(&other.0)
    }
}

impl std::hash::Hash for ResetToken {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl std::fmt::Debug for ResetToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Secret-ish: do not print the value.
        f.write_str("ResetToken(..)")
    }
}

/// How large a Stateless Reset sent in answer to a `received_len`-byte packet may be, at most `max_len`, or
/// `None` when no Stateless Reset may be sent.
pub fn stateless_reset_size(received_len: usize, max_len: usize) -> Option<usize> {
    // RFC 9000 §10.3.3: "An endpoint MUST ensure that every Stateless Reset that it sends is smaller than the
    // packet that triggered it, unless it maintains other means to prevent looping." This also satisfies
    // RFC 9000 §10.3: "An endpoint MUST NOT send a Stateless Reset that is three times or more larger than the
    // packet it receives", and the §10.3 SHOULD to answer packets of 43 bytes or less one byte shorter.
    let size = received_len.checked_sub(1)?.min(max_len);
    // RFC 9000 §10.3: the Unpredictable Bits field "needs to include at least 38 bits of data".
    (size >= MIN_STATELESS_RESET_SIZE).then_some(size)
}

/// Writes a `size`-byte Stateless Reset (RFC 9000 §10.3, Figure 10) ending in `token`. `random` supplies the
/// unpredictable bits: `size - 16` bytes are used (the low 6 bits of the first one go into the first byte);
/// missing bytes are zero, so give enough. Returns `false` (writing nothing) if `size` is below 21.
pub fn encode_stateless_reset<B: BufMut>(
    token: &ResetToken,
    random: &[u8],
    size: usize,
    buf: &mut B,
) -> bool {
    if size < MIN_STATELESS_RESET_SIZE {
        return false;
    }
    let unpredictable = size - RESET_TOKEN_SIZE;
    let mut random = random.iter().copied().chain(std::iter::repeat(0));
    // RFC 9000 §10.3: "Endpoints MUST send Stateless Resets formatted as a packet with a short header."
    // Header form 0, fixed bit 1, the rest unpredictable.
    buf.put_u8(0x40 | (random.next().unwrap_or(0) & 0x3f));
    for _ in 1..unpredictable {
        buf.put_u8(random.next().unwrap_or(0));
    }
    buf.put_slice(&token.0);
    true
}

/// The last 16 bytes of `datagram`, if it is long enough to be a Stateless Reset.
pub fn trailing_token(datagram: &[u8]) -> Option<&[u8; RESET_TOKEN_SIZE]> {
    if datagram.len() < MIN_STATELESS_RESET_SIZE {
        return None;
    }
    datagram.get(datagram.len() - RESET_TOKEN_SIZE..)?.try_into().ok()
}

/// Which of `tokens` the datagram ends with, if any (RFC 9000 §10.3.1). Every token is compared in constant
/// time and the loop does not stop early. Callers pass only tokens of connection IDs they have used and not
/// retired (RFC 9000 §10.3.1: "An endpoint MUST NOT check for any stateless reset tokens associated with
/// connection IDs it has not used or for connection IDs that have been retired.").
///
/// RFC 9000 §10.3: "endpoints MUST treat any packet ending in a valid stateless reset token as a Stateless
/// Reset, as other QUIC versions might allow the use of a long header": the header form is not looked at.
pub fn find_stateless_reset<'t, I>(datagram: &[u8], tokens: I) -> Option<usize>
where
    I: IntoIterator<Item = &'t ResetToken>,
{
    let tail = trailing_token(datagram)?;
    let mut found = None;
    for (i, token) in tokens.into_iter().enumerate() {
        if token.ct_eq(tail) && found.is_none() {
            found = Some(i);
        }
    }
    found
}
