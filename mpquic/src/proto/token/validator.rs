//! The server's decision for a client Initial that would start a new connection, from the token it carries
//! (RFC 9000 §8.1.2, §8.1.3): proceed (with or without a validated address), send a Retry, close with
//! INVALID_TOKEN, or drop.
//!
//! Decision table (`require_retry` from [`TokenConfig`]):
//!
//! | token in the Initial                          | decision                                              |
//! |-----------------------------------------------|-------------------------------------------------------|
//! | none                                          | `SendRetry` if `require_retry`, else `Proceed`        |
//! | valid Retry token                             | `Proceed`, address validated, ODCID and Retry SCID    |
//! | Retry token, invalid for any reason           | `Close` with INVALID_TOKEN                            |
//! | valid NEW_TOKEN token                         | `Proceed`, address validated                          |
//! | NEW_TOKEN or unknown token, invalid           | as if there were no token                             |
//!
//! A client-chosen Destination Connection ID shorter than 8 bytes gives `Drop`.
//!
//! The validator is stateless and reads no clock: `now` is an input, in the same epoch as the tokens'.

use std::net::SocketAddr;
use std::time::Duration;

use super::{
    NONCE_LEN, NewToken, OpenedToken, RetryToken, SealedToken, TokenError, TokenKey, TokenKind, canonical_ip,
    token_id,
};
use crate::proto::error::{TransportError, TransportErrorCode};
use crate::proto::packet::ConnectionId;

/// RFC 9000 §7.2: "This Destination Connection ID MUST be at least 8 bytes in length."
pub const MIN_INITIAL_DCID_LEN: usize = 8;

/// Token policy of a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenConfig {
    /// Send a Retry to every client whose address no token validates (e.g. under load, or always).
    pub require_retry: bool,
    /// How long a Retry token is accepted (RFC 9000 §8.1.4: "Servers SHOULD ensure that tokens sent in Retry
    /// packets are only accepted for a short time, as they are returned immediately by clients."). Default 15 s.
    pub retry_token_lifetime: Duration,
    /// How long a NEW_TOKEN token is accepted (RFC 9000 §8.1.3: "a token SHOULD have an expiration time").
    /// Default 24 h.
    pub new_token_lifetime: Duration,
    /// How far in the future a token's issue time may lie (clocks of servers sharing a key drift). Default 2 s.
    pub max_clock_skew: Duration,
}

impl Default for TokenConfig {
    fn default() -> Self {
        TokenConfig {
            require_retry: false,
            retry_token_lifetime: Duration::from_secs(15),
            new_token_lifetime: Duration::from_secs(24 * 60 * 60),
            max_clock_skew: Duration::from_secs(2),
        }
    }
}

/// What the server does with a client Initial that would start a new connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitialDecision {
    /// Start the handshake.
    Proceed(ValidatedInitial),
    /// Answer with a Retry packet carrying a fresh Retry token (see `proto::stateless`), keep no state.
    SendRetry,
    /// The Initial carries a Retry token that is not valid: answer with an Initial packet holding
    /// CONNECTION_CLOSE with this INVALID_TOKEN error, keep no state (RFC 9000 §8.1.2: "a server has not
    /// established any state for the connection at this point and so does not enter the closing period").
    Close {
        /// The INVALID_TOKEN error to send.
        error: TransportError,
        /// Why the token was rejected (for logs and statistics).
        cause: TokenError,
    },
    /// Discard the packet silently.
    Drop {
        /// The rule the packet breaks.
        reason: &'static str,
    },
}

/// The outcome of a successful decision: what the new connection needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValidatedInitial {
    /// Whether a token proved that the client owns its address: if so, the anti-amplification limit
    /// (RFC 9000 §8.1) no longer applies.
    pub address_validated: bool,
    /// The server's original_destination_connection_id transport parameter: the Destination Connection ID of
    /// the client's first Initial (from the Retry token after a Retry, else this Initial's).
    pub original_dcid: ConnectionId,
    /// The server's retry_source_connection_id transport parameter: set only after a Retry.
    pub retry_scid: Option<ConnectionId>,
    /// The nonce of an accepted NEW_TOKEN token, unique per token, for an optional replay filter.
    pub token_id: Option<[u8; NONCE_LEN]>,
    /// Why a token was ignored (a NEW_TOKEN token that did not validate, or a token this server did not make).
    pub ignored_token: Option<TokenError>,
}

/// Issues and checks tokens, and decides what to do with client Initials.
#[derive(Debug)]
pub struct TokenValidator {
    key: TokenKey,
    config: TokenConfig,
}

impl TokenValidator {
    /// A validator sealing with `key` under `config`.
    pub fn new(key: TokenKey, config: TokenConfig) -> Self {
        TokenValidator { key, config }
    }

    /// The policy.
    pub fn config(&self) -> &TokenConfig {
        &self.config
    }

    /// Turns Retry on or off (e.g. when the server comes under load).
    pub fn set_require_retry(&mut self, require: bool) {
        self.config.require_retry = require;
    }

    /// The key.
    pub fn key(&self) -> &TokenKey {
        &self.key
    }

    /// A Retry token for a client at `client_addr` whose first Initial had Destination Connection ID
    /// `original_dcid`, answered by a Retry with Source Connection ID `retry_scid`.
    pub fn issue_retry_token(
        &self,
        client_addr: SocketAddr,
        original_dcid: ConnectionId,
        retry_scid: ConnectionId,
        nonce: [u8; NONCE_LEN],
        now: Duration,
    ) -> Result<SealedToken, TokenError> {
        let token = RetryToken {
            client_addr,
            original_dcid,
            retry_scid,
            issued: now,
        };
        self.key.seal_retry(&token, nonce)
    }

    /// A NEW_TOKEN token for a client at `client_addr` (only the IP address goes in).
    pub fn issue_new_token(
        &self,
        client_addr: SocketAddr,
        nonce: [u8; NONCE_LEN],
        now: Duration,
    ) -> Result<SealedToken, TokenError> {
        let token = NewToken {
            client_ip: client_addr.ip(),
            issued: now,
        };
        self.key.seal_new_token(&token, nonce)
    }

    /// Opens and checks a Retry token presented by `remote` in an Initial with Destination Connection ID `dcid`.
    pub fn validate_retry_token(
        &self,
        token: &[u8],
        remote: SocketAddr,
        dcid: &ConnectionId,
        now: Duration,
    ) -> Result<RetryToken, TokenError> {
        let OpenedToken::Retry(t) = self.key.open(token)? else {
            return Err(TokenError::WrongKind);
        };
        self.check_age(t.issued, now, self.config.retry_token_lifetime)?;
        if canonical_ip(t.client_addr.ip()) != canonical_ip(remote.ip())
            || t.client_addr.port() != remote.port()
        {
            return Err(TokenError::AddressMismatch);
        }
        // RFC 9000 §17.2.5.2: "A client sets the Destination Connection ID field of this Initial packet to the
        // value from the Source Connection ID field in the Retry packet." A token used under another DCID was
        // not returned by the client that received the Retry.
        if &t.retry_scid != dcid {
            return Err(TokenError::ConnectionIdMismatch);
        }
        Ok(t)
    }

    /// Opens and checks a NEW_TOKEN token presented by `remote`.
    pub fn validate_new_token(
        &self,
        token: &[u8],
        remote: SocketAddr,
        now: Duration,
    ) -> Result<NewToken, TokenError> {
        let OpenedToken::NewToken(t) = self.key.open(token)? else {
            return Err(TokenError::WrongKind);
        };
        self.check_age(t.issued, now, self.config.new_token_lifetime)?;
        // RFC 9000 §8.1.4: "If the client IP address has changed, the server MUST adhere to the
        // anti-amplification limit": a token from another IP does not validate the address.
        if canonical_ip(t.client_ip) != canonical_ip(remote.ip()) {
            return Err(TokenError::AddressMismatch);
        }
        Ok(t)
    }

    fn check_age(&self, issued: Duration, now: Duration, lifetime: Duration) -> Result<(), TokenError> {
        if issued > now.saturating_add(self.config.max_clock_skew) {
            return Err(TokenError::IssuedInFuture);
        }
        if now.saturating_sub(issued) >= lifetime {
            return Err(TokenError::Expired);
        }
        Ok(())
    }

    /// Decides what to do with a client Initial that matches no connection: Destination Connection ID `dcid`,
    /// Token field `token` (empty when absent), from `remote`, at `now`.
    ///
    /// Call it only for Initials that would create a connection (RFC 9000 §8.1.3: "When a server receives an
    /// Initial packet with an address validation token, it MUST attempt to validate the token, unless it has
    /// already completed address validation."), after the datagram-size check of RFC 9000 §14.1.
    pub fn decide(
        &self,
        dcid: &ConnectionId,
        token: &[u8],
        remote: SocketAddr,
        now: Duration,
    ) -> InitialDecision {
        if TokenKind::of(token) == Some(TokenKind::Retry) {
            return match self.validate_retry_token(token, remote, dcid, now) {
                Ok(t) => InitialDecision::Proceed(ValidatedInitial {
                    address_validated: true,
                    original_dcid: t.original_dcid,
                    retry_scid: Some(t.retry_scid),
                    token_id: None,
                    ignored_token: None,
                }),
                // RFC 9000 §8.1.2: "If a server receives a client Initial that contains an invalid Retry token but
                // is otherwise valid, it knows the client will not accept another Retry token. [...] the server
                // SHOULD immediately close (Section 10.2) the connection with an INVALID_TOKEN error."
                Err(cause) => InitialDecision::Close {
                    error: TransportError::new(TransportErrorCode::INVALID_TOKEN, cause.reason()),
                    cause,
                },
            };
        }
        // Without a valid Retry token, the DCID is the client's own choice.
        // RFC 9000 §7.2: "This Destination Connection ID MUST be at least 8 bytes in length."
        if dcid.len() < MIN_INITIAL_DCID_LEN {
            return InitialDecision::Drop {
                reason: "client Initial DCID shorter than 8 bytes",
            };
        }
        let mut ignored_token = None;
        if !token.is_empty() {
            match self.validate_new_token(token, remote, now) {
                Ok(_) => {
                    return InitialDecision::Proceed(ValidatedInitial {
                        address_validated: true,
                        original_dcid: *dcid,
                        retry_scid: None,
                        token_id: token_id(token),
                        ignored_token: None,
                    });
                }
                // RFC 9000 §8.1.3: "If the token is invalid, then the server SHOULD proceed as if the client did
                // not have a validated address, including potentially sending a Retry packet."
                Err(e) => ignored_token = Some(e),
            }
        }
        if self.config.require_retry {
            return InitialDecision::SendRetry;
        }
        InitialDecision::Proceed(ValidatedInitial {
            address_validated: false,
            original_dcid: *dcid,
            retry_scid: None,
            token_id: None,
            ignored_token,
        })
    }
}
