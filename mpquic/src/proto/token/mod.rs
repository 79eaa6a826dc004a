//! Address-validation tokens (RFC 9000 §8.1): the server's Retry tokens and NEW_TOKEN tokens, sealed with a
//! server-only AEAD key, the server's decision for an incoming Initial, and the client's store of NEW_TOKEN
//! tokens.
//!
//! What this module owns:
//! - [`TokenKey`]: seals and opens tokens with AES-256-GCM under a server secret. A sealed token is
//!   `kind (1) ‖ nonce (12) ‖ AEAD(payload) ‖ tag (16)`; the kind byte is the associated data, so a Retry token
//!   cannot be passed off as a NEW_TOKEN token or the other way round. The 96-bit nonce is random and supplied
//!   by the caller (randomness is an input): with random nonces, one key should seal fewer than 2^32 tokens
//!   (NIST SP 800-38D §8.3), so rotate the secret well before that (e.g. daily).
//! - [`RetryToken`] (client address and port, original Destination Connection ID, Retry Source Connection ID,
//!   issue time) and [`NewToken`] (client IP address and issue time): the payloads.
//! - [`validator`]: [`TokenValidator`], which turns the token of a client Initial into an [`InitialDecision`]
//!   (proceed, send a Retry, close with INVALID_TOKEN, or drop), with lifetimes from [`TokenConfig`].
//! - [`store`]: the client side, [`TokenStore`] and the bounded in-memory [`LruTokenStore`].
//!
//! Time is an input: token times are [`Duration`]s since an epoch the server chooses (the UNIX epoch, read by
//! the runtime, is the natural one: NEW_TOKEN tokens must outlive a server restart, and servers sharing a key
//! must share the epoch). They are stored in milliseconds.
//!
//! Invariants: opening reads untrusted bytes, never panics and never allocates: a token longer than
//! [`MAX_TOKEN_LEN`] (the longest this module produces) is rejected before any work, and the in-place AEAD
//! operations run on stack buffers. Addresses are compared in canonical form (an IPv4-mapped IPv6 address
//! equals its IPv4 address), so a dual-stack socket does not invalidate tokens.
//!
//! Replay (RFC 9000 §8.1.4: "servers MUST ensure that replay of tokens is prevented or limited"): this module
//! limits replay by lifetime (short for Retry tokens, longer for NEW_TOKEN tokens) and by binding each token to
//! the client address. It does not make NEW_TOKEN tokens single-use (RFC 9000 §8.1.4: they "SHOULD NOT be
//! accepted multiple times"); a server that wants this can feed [`ValidatedInitial::token_id`] (the token's
//! unique nonce) to a time-bucketed Bloom filter or set spanning the NEW_TOKEN lifetime and reject repeats.

pub mod store;
pub mod validator;

#[cfg(test)]
mod tests;

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use ring::aead;
use thiserror::Error;

use crate::proto::coding::{Decoder, UnexpectedEnd};
use crate::proto::packet::{ConnectionId, MAX_CID_SIZE};

pub use store::{LruTokenStore, TokenStore};
pub use validator::{InitialDecision, TokenConfig, TokenValidator, ValidatedInitial};

/// Length of the random nonce each token carries (AES-256-GCM's 96-bit nonce).
pub const NONCE_LEN: usize = 12;
/// Length of the AEAD tag at the end of each token.
pub const TAG_LEN: usize = 16;
/// Length of the server secret a [`TokenKey`] is made from.
pub const SECRET_LEN: usize = 32;

/// Kind byte of a Retry token.
const KIND_RETRY: u8 = b'R';
/// Kind byte of a NEW_TOKEN token.
const KIND_NEW_TOKEN: u8 = b'N';

/// Bytes before the ciphertext: kind and nonce.
const PREFIX_LEN: usize = 1 + NONCE_LEN;
/// Issue time in milliseconds.
const TIME_LEN: usize = 8;
/// Address family byte and an IPv6 address (the longer of the two).
const MAX_IP_LEN: usize = 1 + 16;
/// Longest Retry payload: time, IP, port, two length-prefixed connection IDs.
const MAX_RETRY_PAYLOAD: usize = TIME_LEN + MAX_IP_LEN + 2 + 2 * (1 + MAX_CID_SIZE);
/// Longest NEW_TOKEN payload: time and IP.
const MAX_NEW_TOKEN_PAYLOAD: usize = TIME_LEN + MAX_IP_LEN;
/// Longest payload of either kind.
const MAX_PAYLOAD: usize = MAX_RETRY_PAYLOAD;

/// The longest token this module produces (98 bytes). Longer tokens are rejected without being looked at.
pub const MAX_TOKEN_LEN: usize = PREFIX_LEN + MAX_PAYLOAD + TAG_LEN;

/// How a token reached the client (RFC 9000 §8.1.1: "A token sent in a NEW_TOKEN frame or a Retry packet MUST
/// be constructed in a way that allows the server to identify how it was provided to a client."): the first
/// byte of every token says it, in the clear (RFC 9000 §8.1.3: "Information that allows the server to
/// distinguish between tokens from Retry and NEW_TOKEN MAY be accessible to entities other than the server.").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenKind {
    /// Sent in a Retry packet (RFC 9000 §8.1.2).
    Retry,
    /// Sent in a NEW_TOKEN frame (RFC 9000 §8.1.3).
    NewToken,
}

impl TokenKind {
    /// The kind a token claims by its first byte, or `None` for a token this server did not make.
    pub fn of(token: &[u8]) -> Option<TokenKind> {
        match *token.first()? {
            KIND_RETRY => Some(TokenKind::Retry),
            KIND_NEW_TOKEN => Some(TokenKind::NewToken),
            _ => None,
        }
    }

    const fn byte(self) -> u8 {
        match self {
            TokenKind::Retry => KIND_RETRY,
            TokenKind::NewToken => KIND_NEW_TOKEN,
        }
    }
}

/// Why a token was not accepted. None of these is an error of this server: the validator maps them to a
/// decision ([`InitialDecision`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum TokenError {
    /// Longer than [`MAX_TOKEN_LEN`]: not made by this module.
    #[error("token too long")]
    TooLong,
    /// Shorter than the kind byte, nonce and tag.
    #[error("token truncated")]
    Truncated,
    /// The first byte names no token kind this server issues.
    #[error("unknown token kind")]
    UnknownKind,
    /// The token is of the other kind than the one expected.
    #[error("wrong token kind")]
    WrongKind,
    /// The AEAD tag did not verify: forged, tampered with, truncated, or sealed under another key.
    #[error("token authentication failed")]
    Unauthenticated,
    /// Authentic but not laid out as this module writes tokens (a format change between server versions).
    #[error("malformed token payload")]
    Malformed,
    /// Older than its lifetime.
    #[error("token expired")]
    Expired,
    /// Issued later than `now` plus the allowed clock skew.
    #[error("token issued in the future")]
    IssuedInFuture,
    /// Issued to another client address (Retry: IP and port; NEW_TOKEN: IP).
    #[error("token issued to another address")]
    AddressMismatch,
    /// A Retry token presented in an Initial whose Destination Connection ID is not the Retry's Source
    /// Connection ID.
    #[error("Retry token used with another connection ID")]
    ConnectionIdMismatch,
    /// The AEAD refused to seal or the key could not be built (a build problem, not a peer's fault).
    #[error("token sealing failed")]
    SealFailed,
}

impl TokenError {
    /// A static description, for the reason of a [`TransportError`](crate::proto::TransportError).
    pub const fn reason(self) -> &'static str {
        match self {
            TokenError::TooLong => "invalid Retry token: too long",
            TokenError::Truncated => "invalid Retry token: truncated",
            TokenError::UnknownKind => "invalid Retry token: unknown kind",
            TokenError::WrongKind => "invalid Retry token: wrong kind",
            TokenError::Unauthenticated => "invalid Retry token: authentication failed",
            TokenError::Malformed => "invalid Retry token: malformed",
            TokenError::Expired => "invalid Retry token: expired",
            TokenError::IssuedInFuture => "invalid Retry token: issued in the future",
            TokenError::AddressMismatch => "invalid Retry token: address mismatch",
            TokenError::ConnectionIdMismatch => "invalid Retry token: connection ID mismatch",
            TokenError::SealFailed => "token sealing failed",
        }
    }
}

impl From<UnexpectedEnd> for TokenError {
    fn from(_: UnexpectedEnd) -> Self {
        TokenError::Malformed
    }
}

/// The contents of a Retry token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryToken {
    /// The client's address and port the Retry was sent to (RFC 9000 §8.1.4: "Tokens sent in Retry packets
    /// SHOULD include information that allows the server to verify that the source IP address and port in
    /// client packets remain constant.").
    pub client_addr: SocketAddr,
    /// The Destination Connection ID of the client's first Initial: the server's
    /// original_destination_connection_id transport parameter.
    pub original_dcid: ConnectionId,
    /// The Source Connection ID of the Retry: the server's retry_source_connection_id transport parameter,
    /// and the Destination Connection ID of the client's next Initial.
    pub retry_scid: ConnectionId,
    /// When the token was issued, since the server's epoch (kept in milliseconds).
    pub issued: Duration,
}

/// The contents of a NEW_TOKEN token. No connection ID: RFC 9000 §8.1.3: "A token issued with NEW_TOKEN MUST
/// NOT include information that would allow values to be linked by an observer to the connection on which it
/// was issued." (the address below is encrypted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewToken {
    /// The client's IP address (RFC 9000 §8.1.4: "Tokens sent in NEW_TOKEN frames MUST include information
    /// that allows the server to verify that the client IP address has not changed from when the token was
    /// issued."). The port is left out: a new connection comes from a new port.
    pub client_ip: IpAddr,
    /// When the token was issued, since the server's epoch (kept in milliseconds).
    pub issued: Duration,
}

/// An opened token of either kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenedToken {
    /// A Retry token.
    Retry(RetryToken),
    /// A NEW_TOKEN token.
    NewToken(NewToken),
}

/// A sealed token, held inline (at most [`MAX_TOKEN_LEN`] bytes): put it in a Retry packet or a NEW_TOKEN frame.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SealedToken {
    len: usize,
    bytes: [u8; MAX_TOKEN_LEN],
}

impl SealedToken {
    /// The token's bytes.
    pub fn as_slice(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or(&[])
    }

    /// The random nonce, unique per token: an identifier for replay filters.
    pub fn id(&self) -> [u8; NONCE_LEN] {
        token_id(self.as_slice()).unwrap_or([0; NONCE_LEN])
    }
}

impl std::ops::Deref for SealedToken {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for SealedToken {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl fmt::Debug for SealedToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SealedToken({} bytes)", self.len)
    }
}

/// The nonce of a token (its unique identifier), if the token is long enough to have one.
pub fn token_id(token: &[u8]) -> Option<[u8; NONCE_LEN]> {
    token.get(1..PREFIX_LEN)?.try_into().ok()
}

/// The server's token key: AES-256-GCM under a secret only the server (or the servers that cooperate behind
/// one address) knows (RFC 9000 §8.1.4: "the token MUST be covered by integrity protection against
/// modification or falsification by clients" ... "Only the server requires access to the integrity protection
/// key for tokens.").
pub struct TokenKey {
    key: aead::LessSafeKey,
}

impl TokenKey {
    /// A key from a 32-byte secret (draw it from a CSPRNG; share it between the servers behind one address).
    pub fn new(secret: &[u8; SECRET_LEN]) -> Result<Self, TokenError> {
        aead::UnboundKey::new(&aead::AES_256_GCM, secret)
            .map(|k| TokenKey {
                key: aead::LessSafeKey::new(k),
            })
            .map_err(|_| TokenError::SealFailed)
    }

    /// Seals a Retry token with the random `nonce`.
    pub fn seal_retry(&self, token: &RetryToken, nonce: [u8; NONCE_LEN]) -> Result<SealedToken, TokenError> {
        let mut payload = Writer::<MAX_RETRY_PAYLOAD>::new();
        payload.put(&millis(token.issued).to_be_bytes())?;
        put_ip(&mut payload, token.client_addr.ip())?;
        payload.put(&token.client_addr.port().to_be_bytes())?;
        put_cid(&mut payload, &token.original_dcid)?;
        put_cid(&mut payload, &token.retry_scid)?;
        self.seal(TokenKind::Retry, nonce, payload.as_slice())
    }

    /// Seals a NEW_TOKEN token with the random `nonce`. RFC 9000 §8.1.3: "A server MUST ensure that every
    /// NEW_TOKEN frame it sends is unique across all clients": a fresh random nonce per token makes it so.
    pub fn seal_new_token(
        &self,
        token: &NewToken,
        nonce: [u8; NONCE_LEN],
    ) -> Result<SealedToken, TokenError> {
        let mut payload = Writer::<MAX_NEW_TOKEN_PAYLOAD>::new();
        payload.put(&millis(token.issued).to_be_bytes())?;
        put_ip(&mut payload, token.client_ip)?;
        self.seal(TokenKind::NewToken, nonce, payload.as_slice())
    }

    fn seal(
        &self,
        kind: TokenKind,
        nonce: [u8; NONCE_LEN],
        payload: &[u8],
    ) -> Result<SealedToken, TokenError> {
        let mut out = SealedToken {
            len: 0,
            bytes: [0; MAX_TOKEN_LEN],
        };
        let body_end = PREFIX_LEN + payload.len();
        let len = body_end + TAG_LEN;
        let (prefix, rest) = out
            .bytes
            .get_mut(..len)
            .ok_or(TokenError::SealFailed)?
            .split_at_mut_checked(PREFIX_LEN)
            .ok_or(TokenError::SealFailed)?;
        let (body, tag_room) = rest
            .split_at_mut_checked(payload.len())
            .ok_or(TokenError::SealFailed)?;
        if let Some((k, n)) = prefix.split_first_mut() {
            *k = kind.byte();
            n.copy_from_slice(&nonce);
        }
        body.copy_from_slice(payload);
        let tag = self
            .key
            .seal_in_place_separate_tag(
                aead::Nonce::assume_unique_for_key(nonce),
                aead::Aad::from([kind.byte()]),
                body,
            )
            .map_err(|_| TokenError::SealFailed)?;
        tag_room.copy_from_slice(tag.as_ref());
        out.len = len;
        Ok(out)
    }

    /// Opens a token of either kind. Checks only authenticity and layout: lifetimes and addresses are the
    /// validator's ([`TokenValidator`]). Never allocates; a token over [`MAX_TOKEN_LEN`] bytes is rejected
    /// before anything else.
    pub fn open(&self, token: &[u8]) -> Result<OpenedToken, TokenError> {
        if token.len() > MAX_TOKEN_LEN {
            return Err(TokenError::TooLong);
        }
        let kind = TokenKind::of(token).ok_or(if token.is_empty() {
            TokenError::Truncated
        } else {
            TokenError::UnknownKind
        })?;
        let nonce = token_id(token).ok_or(TokenError::Truncated)?;
        let sealed = token.get(PREFIX_LEN..).ok_or(TokenError::Truncated)?;
        if sealed.len() < TAG_LEN {
            return Err(TokenError::Truncated);
        }
        let mut buf = [0u8; MAX_PAYLOAD + TAG_LEN];
        let buf = buf.get_mut(..sealed.len()).ok_or(TokenError::TooLong)?;
        buf.copy_from_slice(sealed);
        let plain = self
            .key
            .open_in_place(
                aead::Nonce::assume_unique_for_key(nonce),
                aead::Aad::from([kind.byte()]),
                buf,
            )
            .map_err(|_| TokenError::Unauthenticated)?;
        let mut d = Decoder::new(plain);
        let issued = Duration::from_millis(d.u64()?);
        let opened = match kind {
            TokenKind::Retry => {
                let ip = get_ip(&mut d)?;
                let port = d.u16()?;
                let original_dcid = ConnectionId::decode_with_len(&mut d)?.ok_or(TokenError::Malformed)?;
                let retry_scid = ConnectionId::decode_with_len(&mut d)?.ok_or(TokenError::Malformed)?;
                OpenedToken::Retry(RetryToken {
                    client_addr: SocketAddr::new(ip, port),
                    original_dcid,
                    retry_scid,
                    issued,
                })
            }
            TokenKind::NewToken => OpenedToken::NewToken(NewToken {
                client_ip: get_ip(&mut d)?,
                issued,
            }),
        };
        if !d.is_empty() {
            return Err(TokenError::Malformed);
        }
        Ok(opened)
    }
}

impl fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenKey(..)")
    }
}

/// `d` in whole milliseconds, saturating.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// `ip` with IPv4-mapped IPv6 addresses turned into IPv4.
pub(crate) fn canonical_ip(ip: IpAddr) -> IpAddr {
    ip.to_canonical()
}

fn put_ip<const N: usize>(w: &mut Writer<N>, ip: IpAddr) -> Result<(), TokenError> {
    match canonical_ip(ip) {
        IpAddr::V4(v4) => {
            w.put(&[4])?;
            w.put(&v4.octets())
        }
        IpAddr::V6(v6) => {
            w.put(&[6])?;
            w.put(&v6.octets())
        }
    }
}

fn get_ip(d: &mut Decoder<'_>) -> Result<IpAddr, TokenError> {
    match d.u8()? {
        4 => Ok(IpAddr::V4(Ipv4Addr::from(d.array::<4>()?))),
        6 => Ok(IpAddr::V6(Ipv6Addr::from(d.array::<16>()?))),
        _ => Err(TokenError::Malformed),
    }
}

fn put_cid<const N: usize>(w: &mut Writer<N>, cid: &ConnectionId) -> Result<(), TokenError> {
    let len = u8::try_from(cid.len()).map_err(|_| TokenError::SealFailed)?;
    w.put(&[len])?;
    w.put(cid.as_slice())
}

/// A fixed-capacity byte writer on the stack that reports overflow instead of panicking.
struct Writer<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> Writer<N> {
    fn new() -> Self {
        Writer { buf: [0; N], len: 0 }
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(), TokenError> {
        let end = self.len.checked_add(bytes.len()).ok_or(TokenError::SealFailed)?;
        self.buf
            .get_mut(self.len..end)
            .ok_or(TokenError::SealFailed)?
            .copy_from_slice(bytes);
        self.len = end;
        Ok(())
    }

    fn as_slice(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }
}
