//! Stateless server responses for the endpoint: the packets a server sends without creating connection state.
//!
//! - [`retry_packet`]: a Retry (RFC 9000 §17.2.5) with its integrity tag (RFC 9001 §5.8);
//! - [`invalid_token_close_packet`]: an Initial packet carrying CONNECTION_CLOSE (INVALID_TOKEN), the answer to
//!   an invalid Retry token (RFC 9000 §8.1.2);
//! - [`stateless_reset_packet`]: a Stateless Reset (RFC 9000 §10.3) answering a short-header packet for no
//!   known connection, with its token derived from the connection ID by [`ResetKey`] (RFC 9000 §10.3.2);
//! - [`StatelessResponder`]: the above behind a [`ResponseLimiter`], with the token policy
//!   ([`TokenValidator`]), which is what the endpoint holds.
//!
//! Everything is pure: inputs are bytes, addresses, keys, randomness and `now` (a [`Duration`] since the
//! server's epoch, the same as the tokens'); output is appended to a `Vec<u8>`.
//!
//! Rate limiting: each of these packets costs the server work and answers packets anyone can forge, so an
//! endpoint must bound how many it sends. [`ResponseLimiter`] is the hook: it is asked before each response and
//! may refuse (the datagram is then dropped). [`ResponseBucket`] is a global token bucket; per-source limits
//! (by IP prefix) can be built on the same trait. The limiter is not asked when a response is impossible
//! anyway, so refused attempts do not drain it. Endpoint duties not covered here: at most one Retry and one
//! Version Negotiation per datagram (RFC 9000 §17.2.5.1 and §17.2.1), and sending a Stateless Reset only for
//! packets that match no connection.

use std::net::SocketAddr;
use std::time::Duration;

pub use crate::proto::cid::ResetKey;
use thiserror::Error;

use crate::cc::PathId;
use crate::proto::coding::VarInt;
use crate::proto::crypto::{Keys, Side, retry_integrity_tag};
use crate::proto::error::TransportError;
use crate::proto::frame::ConnectionClose;
use crate::proto::packet::{
    ConnectionId, DecodedPacket, MAX_CID_SIZE, MIN_STATELESS_RESET_SIZE, OutgoingHeader, PacketDecodeError,
    PacketType, PartialDecode, VersionNegotiation, check_initial_datagram_size, encode_retry,
    encode_stateless_reset, stateless_reset_size,
};
use crate::proto::token::{InitialDecision, NONCE_LEN, TokenValidator};

/// Why no stateless response was produced. Every case means: send nothing, drop the datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum NoResponse {
    /// The rate limiter refused.
    #[error("rate limited")]
    RateLimited,
    /// The incoming packet does not warrant this response; the reason names the rule.
    #[error("no response: {0}")]
    NotApplicable(&'static str),
    /// A key or the AEAD failed (a build problem, not a peer's fault).
    #[error("crypto failure")]
    Crypto,
}

/// The kind of a stateless response, for the limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResponseKind {
    /// A Retry packet.
    Retry,
    /// An Initial carrying CONNECTION_CLOSE with INVALID_TOKEN.
    InvalidTokenClose,
    /// A Stateless Reset.
    StatelessReset,
    /// A Version Negotiation packet.
    VersionNegotiation,
}

/// Decides whether a stateless response may be sent now.
pub trait ResponseLimiter {
    /// Whether a response of `kind` to `remote` may be sent at `now`; `true` consumes budget.
    fn allow(&mut self, kind: ResponseKind, remote: SocketAddr, now: Duration) -> bool;
}

/// A limiter that allows everything (tests, or an endpoint that limits elsewhere).
#[derive(Debug, Clone, Copy, Default)]
pub struct Unlimited;

impl ResponseLimiter for Unlimited {
    fn allow(&mut self, _: ResponseKind, _: SocketAddr, _: Duration) -> bool {
        true
    }
}

/// A token bucket shared by all kinds and sources: `burst` responses at once, refilled at `per_second`.
#[derive(Debug, Clone)]
pub struct ResponseBucket {
    /// Capacity, in thousandths of a response.
    capacity_milli: u64,
    /// Refill rate, responses per second (= thousandths per millisecond).
    per_second: u64,
    available_milli: u64,
    last: Duration,
}

impl ResponseBucket {
    /// A full bucket of `burst` responses refilled at `per_second` responses per second.
    pub fn new(burst: u32, per_second: u32) -> Self {
        let capacity_milli = u64::from(burst) * 1000;
        ResponseBucket {
            capacity_milli,
            per_second: u64::from(per_second),
            available_milli: capacity_milli,
            last: Duration::ZERO,
        }
    }
}

impl ResponseLimiter for ResponseBucket {
    fn allow(&mut self, _: ResponseKind, _: SocketAddr, now: Duration) -> bool {
        let elapsed_ms = u64::try_from(now.saturating_sub(self.last).as_millis()).unwrap_or(u64::MAX);
        if now > self.last {
            self.last = now;
        }
        self.available_milli = self
            .available_milli
            .saturating_add(elapsed_ms.saturating_mul(self.per_second))
            .min(self.capacity_milli);
        if self.available_milli >= 1000 {
            self.available_milli -= 1000;
            true
        } else {
            false
        }
    }
}

/// Appends a Retry packet answering a client Initial with Destination Connection ID `initial_dcid` and Source
/// Connection ID `initial_scid`: it carries `token` and the server's new connection ID `retry_scid`, and ends
/// with the integrity tag computed over `initial_dcid` (RFC 9001 §5.8). `unused` fills the 4 unused bits.
pub fn retry_packet(
    initial_dcid: &ConnectionId,
    initial_scid: &ConnectionId,
    retry_scid: &ConnectionId,
    token: &[u8],
    unused: u8,
    out: &mut Vec<u8>,
) -> Result<(), NoResponse> {
    // RFC 9000 §17.2.5.1: "This value MUST NOT be equal to the Destination Connection ID field of the packet
    // sent by the client."
    if retry_scid == initial_dcid {
        return Err(NoResponse::NotApplicable("Retry SCID equals the client's DCID"));
    }
    // RFC 9000 §17.2.5.2: "A client MUST discard a Retry packet with a zero-length Retry Token field."
    if token.is_empty() {
        return Err(NoResponse::NotApplicable("empty Retry token"));
    }
    let start = out.len();
    // RFC 9000 §17.2.5.1: "The server populates the Destination Connection ID with the connection ID that the
    // client included in the Source Connection ID of the Initial packet."
    encode_retry(initial_scid, retry_scid, token, unused, out);
    let body = out.get(start..).unwrap_or(&[]);
    let tag = retry_integrity_tag(initial_dcid, body).map_err(|_| NoResponse::Crypto)?;
    out.extend_from_slice(&tag);
    Ok(())
}

/// Appends an Initial packet (packet number 0, Initial keys of `initial_dcid`) carrying a CONNECTION_CLOSE of
/// type 0x1c with `error`, answering a client Initial with Destination Connection ID `initial_dcid` and Source
/// Connection ID `initial_scid`. The server's Source Connection ID is `initial_dcid`.
pub fn invalid_token_close_packet(
    initial_dcid: &ConnectionId,
    initial_scid: &ConnectionId,
    error: &TransportError,
    out: &mut Vec<u8>,
) -> Result<(), NoResponse> {
    let keys = Keys::initial(initial_dcid, Side::Server).map_err(|_| NoResponse::Crypto)?;
    let start = out.len();
    let header = OutgoingHeader::Initial {
        dcid: initial_scid,
        scid: initial_dcid,
        token: &[],
    };
    let pe = header.encode(0, 1, out);
    let frame = ConnectionClose {
        error_code: VarInt::from_u64(error.code.0).unwrap_or(VarInt::MAX),
        frame_type: VarInt::from_u64(error.frame_type.unwrap_or(0)).unwrap_or(VarInt::MAX),
        reason: error.reason.as_bytes(),
    };
    frame.encode(out);
    let tag_len = keys.local.packet.tag_len();
    // RFC 9001 §5.4.2: pad (PADDING frames are zero bytes) so that the header-protection sample exists.
    let len = (out.len() - start + tag_len).max(pe.min_packet_len());
    out.resize(start + len, 0);
    let packet = out.get_mut(start..).ok_or(NoResponse::Crypto)?;
    pe.set_length(packet, len).map_err(|_| NoResponse::Crypto)?;
    keys.local
        .packet
        .seal(PathId(0), 0, packet, pe.header_len())
        .map_err(|_| NoResponse::Crypto)?;
    keys.local
        .header
        .apply(packet, pe.pn_offset())
        .map_err(|_| NoResponse::Crypto)?;
    Ok(())
}

/// The smallest Stateless Reset this module sends when the triggering packet allows more: large enough to pass
/// for a short-header packet with a 20-byte connection ID.
pub const IDEAL_MIN_RESET_SIZE: usize = MIN_STATELESS_RESET_SIZE + MAX_CID_SIZE;

/// Appends a Stateless Reset answering `datagram`, a datagram starting with a short-header packet that matches
/// no connection, whose Destination Connection ID is `local_cid_len` bytes. At most `max_len` bytes.
///
/// `random` supplies the randomness: its first two bytes choose the size between [`IDEAL_MIN_RESET_SIZE`] and
/// the largest allowed, the rest fills the unpredictable bits (give `max_len + 2` bytes; missing ones are 0).
pub fn stateless_reset_packet(
    datagram: &[u8],
    local_cid_len: usize,
    key: &ResetKey,
    random: &[u8],
    max_len: usize,
    out: &mut Vec<u8>,
) -> Result<(), NoResponse> {
    let (cid, largest) = reset_target(datagram, local_cid_len, max_len)?;
    let size = if largest <= IDEAL_MIN_RESET_SIZE {
        largest
    } else {
        let r = random
            .get(..2)
            .and_then(|b| <[u8; 2]>::try_from(b).ok())
            .map_or(0, u16::from_be_bytes);
        IDEAL_MIN_RESET_SIZE + usize::from(r) % (largest - IDEAL_MIN_RESET_SIZE + 1)
    };
    let fill = random.get(2..).unwrap_or(&[]);
    if !encode_stateless_reset(&key.token(&cid), fill, size, out) {
        return Err(NoResponse::NotApplicable("Stateless Reset below 21 bytes"));
    }
    Ok(())
}

/// The connection ID to derive the token from and the largest allowed Stateless Reset, if `datagram` may be
/// answered with one.
fn reset_target(
    datagram: &[u8],
    local_cid_len: usize,
    max_len: usize,
) -> Result<(ConnectionId, usize), NoResponse> {
    // RFC 9000 §10.3.2: an endpoint deriving tokens from connection IDs "cannot provide a zero-length
    // connection ID".
    if local_cid_len == 0 {
        return Err(NoResponse::NotApplicable("zero-length connection IDs"));
    }
    let cid = match DecodedPacket::decode(datagram, local_cid_len) {
        Ok(DecodedPacket::Protected(p)) if p.packet_type() == PacketType::OneRtt => *p.dcid(),
        // Too short for a header-protection sample: RFC 9000 §10.3: "Endpoints MUST discard packets that are
        // too small to be valid QUIC packets."
        _ => return Err(NoResponse::NotApplicable("not a valid short-header packet")),
    };
    // RFC 9000 §10.3.3: "An endpoint MUST ensure that every Stateless Reset that it sends is smaller than the
    // packet that triggered it"; stateless_reset_size also keeps the 21-byte minimum.
    let largest = stateless_reset_size(datagram.len(), max_len).ok_or(NoResponse::NotApplicable(
        "packet too small to answer with a Stateless Reset",
    ))?;
    Ok((cid, largest))
}

/// The randomness a Retry needs.
#[derive(Debug, Clone, Copy)]
pub struct RetryRandom {
    /// The server's new connection ID (the Retry's Source Connection ID).
    pub retry_scid: ConnectionId,
    /// The token's nonce.
    pub nonce: [u8; NONCE_LEN],
    /// The Retry's 4 unused bits.
    pub unused: u8,
}

/// The stateless half of a server endpoint: token policy, reset key and response limiter.
#[derive(Debug)]
pub struct StatelessResponder<L: ResponseLimiter = Unlimited> {
    /// The token policy and key.
    pub validator: TokenValidator,
    /// The stateless reset key.
    pub reset_key: ResetKey,
    /// The response limiter.
    pub limiter: L,
    /// Length of the connection IDs this endpoint issues.
    pub local_cid_len: usize,
    /// Largest Stateless Reset to send.
    pub max_reset_len: usize,
}

impl<L: ResponseLimiter> StatelessResponder<L> {
    /// Decides what to do with the client Initial `initial` (the first packet of `datagram`) from `remote`.
    /// Applies the 1200-byte rule first (RFC 9000 §14.1, [`check_initial_datagram_size`]).
    pub fn decide(
        &self,
        datagram: &[u8],
        initial: &PartialDecode,
        remote: SocketAddr,
        now: Duration,
    ) -> InitialDecision {
        if initial.packet_type() != PacketType::Initial {
            return InitialDecision::Drop {
                reason: "not an Initial packet",
            };
        }
        if let Err(PacketDecodeError::Invalid(reason)) = check_initial_datagram_size(datagram.len()) {
            return InitialDecision::Drop { reason };
        }
        self.validator
            .decide(initial.dcid(), initial.token(datagram), remote, now)
    }

    /// Appends a Retry answering the client Initial `initial` from `remote` (after [`decide`](Self::decide)
    /// said [`InitialDecision::SendRetry`]).
    pub fn retry(
        &mut self,
        initial: &PartialDecode,
        remote: SocketAddr,
        random: &RetryRandom,
        now: Duration,
        out: &mut Vec<u8>,
    ) -> Result<(), NoResponse> {
        let scid = initial
            .scid()
            .ok_or(NoResponse::NotApplicable("not a long header"))?;
        if initial.packet_type() != PacketType::Initial {
            return Err(NoResponse::NotApplicable("not an Initial packet"));
        }
        // RFC 9000 §17.2.5.1: "This value MUST NOT be equal to the Destination Connection ID field of the packet
        // sent by the client." Checked before the limiter so that the refusal costs no budget.
        if &random.retry_scid == initial.dcid() {
            return Err(NoResponse::NotApplicable("Retry SCID equals the client's DCID"));
        }
        if !self.limiter.allow(ResponseKind::Retry, remote, now) {
            return Err(NoResponse::RateLimited);
        }
        let token = self
            .validator
            .issue_retry_token(remote, *initial.dcid(), random.retry_scid, random.nonce, now)
            .map_err(|_| NoResponse::Crypto)?;
        retry_packet(
            initial.dcid(),
            scid,
            &random.retry_scid,
            &token,
            random.unused,
            out,
        )
    }

    /// Appends an Initial closing with `error` in answer to the client Initial `initial` from `remote`: the
    /// INVALID_TOKEN close after [`decide`](Self::decide) said [`InitialDecision::Close`], or a
    /// CONNECTION_REFUSED one (RFC 9000 §5.2.2).
    pub fn initial_close(
        &mut self,
        initial: &PartialDecode,
        remote: SocketAddr,
        error: &TransportError,
        now: Duration,
        out: &mut Vec<u8>,
    ) -> Result<(), NoResponse> {
        let scid = initial
            .scid()
            .ok_or(NoResponse::NotApplicable("not a long header"))?;
        if !self.limiter.allow(ResponseKind::InvalidTokenClose, remote, now) {
            return Err(NoResponse::RateLimited);
        }
        invalid_token_close_packet(initial.dcid(), scid, error, out)
    }

    /// Appends a Stateless Reset answering `datagram` from `remote`, which matched no connection. `random`: see
    /// [`stateless_reset_packet`].
    pub fn stateless_reset(
        &mut self,
        datagram: &[u8],
        remote: SocketAddr,
        random: &[u8],
        now: Duration,
        out: &mut Vec<u8>,
    ) -> Result<(), NoResponse> {
        // Checked before the limiter so that packets that get no answer cost no budget.
        reset_target(datagram, self.local_cid_len, self.max_reset_len)?;
        if !self.limiter.allow(ResponseKind::StatelessReset, remote, now) {
            return Err(NoResponse::RateLimited);
        }
        stateless_reset_packet(
            datagram,
            self.local_cid_len,
            &self.reset_key,
            random,
            self.max_reset_len,
            out,
        )
    }

    /// Appends a Version Negotiation packet listing `supported`, answering `datagram` from `remote` whose first
    /// packet carries an unsupported version ([`VersionNegotiation::respond`] applies the rules). `random`
    /// fills the unused bits.
    pub fn version_negotiation(
        &mut self,
        datagram: &[u8],
        supported: &[u32],
        remote: SocketAddr,
        random: u8,
        now: Duration,
        out: &mut Vec<u8>,
    ) -> Result<(), NoResponse> {
        let start = out.len();
        VersionNegotiation::respond(datagram, supported, random, out).map_err(|e| match e {
            PacketDecodeError::Invalid(reason) => NoResponse::NotApplicable(reason),
            PacketDecodeError::UnsupportedVersion { .. } => NoResponse::NotApplicable("unsupported version"),
        })?;
        if !self.limiter.allow(ResponseKind::VersionNegotiation, remote, now) {
            out.truncate(start);
            return Err(NoResponse::RateLimited);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr};

    use proptest::prelude::*;

    use super::*;
    use crate::proto::packet::{VERSION_1, find_stateless_reset};
    use crate::proto::token::{TokenConfig, TokenKey};

    fn remote() -> SocketAddr {
        SocketAddr::new(IpAddr::V4(Ipv4Addr::new(203, 0, 113, 9)), 443)
    }

    fn responder<L: ResponseLimiter>(limiter: L) -> StatelessResponder<L> {
        StatelessResponder {
            validator: TokenValidator::new(TokenKey::new(&[3; 32]).unwrap(), TokenConfig::default()),
            reset_key: ResetKey::new(&[4; 32]),
            limiter,
            local_cid_len: 8,
            max_reset_len: 1200,
        }
    }

    /// A short-header packet of `len` bytes to connection ID `[0x11; 8]`.
    fn short_packet(len: usize) -> Vec<u8> {
        let mut p = vec![0x41];
        p.extend_from_slice(&[0x11; 8]);
        p.resize(len, 0x5a);
        p
    }

    #[test]
    fn reset_token_is_a_keyed_function_of_the_cid() {
        let k = ResetKey::new(&[4; 32]);
        let a = ConnectionId::new(&[1; 8]).unwrap();
        let b = ConnectionId::new(&[2; 8]).unwrap();
        assert_eq!(k.token(&a), k.token(&a));
        assert_ne!(k.token(&a), k.token(&b));
        assert_ne!(ResetKey::new(&[5; 32]).token(&a), k.token(&a));
    }

    #[test]
    fn stateless_reset_is_recognised_by_the_peer() {
        let mut r = responder(Unlimited);
        let incoming = short_packet(200);
        let mut out = Vec::new();
        r.stateless_reset(&incoming, remote(), &[0xff; 300], Duration::ZERO, &mut out)
            .unwrap();
        // RFC 9000 §10.3.3: smaller than the packet that triggered it.
        assert!(out.len() < incoming.len());
        assert!(out.len() >= IDEAL_MIN_RESET_SIZE);
        assert_eq!(out[0] & 0xc0, 0x40);
        let token = r.reset_key.token(&ConnectionId::new(&[0x11; 8]).unwrap());
        assert_eq!(find_stateless_reset(&out, [&token]), Some(0));
    }

    #[test]
    fn rfc9000_10_3_3_reset_is_smaller_than_the_trigger() {
        let key = ResetKey::new(&[4; 32]);
        for len in 0..120 {
            let incoming = short_packet(len.max(1));
            let mut out = Vec::new();
            match stateless_reset_packet(&incoming, 8, &key, &[0xff; 200], 1200, &mut out) {
                Ok(()) => {
                    assert!(out.len() < incoming.len(), "{len}");
                    assert!(out.len() >= MIN_STATELESS_RESET_SIZE);
                }
                Err(NoResponse::NotApplicable(_)) => {
                    assert!(out.is_empty());
                    // Too small for a valid packet with an 8-byte CID (1 + 8 + 4 + 16 bytes).
                    assert!(incoming.len() < 29, "{len}");
                }
                Err(e) => panic!("{e:?}"),
            }
        }
    }

    #[test]
    fn reset_size_is_randomised_within_bounds() {
        let key = ResetKey::new(&[4; 32]);
        let incoming = short_packet(1200);
        let mut sizes = std::collections::HashSet::new();
        for r in 0..=255u8 {
            let mut out = Vec::new();
            stateless_reset_packet(&incoming, 8, &key, &[r, r.wrapping_mul(7)], 100, &mut out).unwrap();
            assert!((IDEAL_MIN_RESET_SIZE..=100).contains(&out.len()));
            sizes.insert(out.len());
        }
        assert!(sizes.len() > 10);
    }

    #[test]
    fn no_reset_for_long_headers_or_zero_length_cids() {
        let key = ResetKey::new(&[4; 32]);
        let mut long = short_packet(200);
        long[0] = 0xc0;
        long[1..5].copy_from_slice(&VERSION_1.to_be_bytes());
        let mut out = Vec::new();
        assert!(stateless_reset_packet(&long, 8, &key, &[], 1200, &mut out).is_err());
        assert!(stateless_reset_packet(&short_packet(200), 0, &key, &[], 1200, &mut out).is_err());
        assert!(out.is_empty());
    }

    #[test]
    fn limiter_refuses_and_inapplicable_packets_cost_nothing() {
        let mut r = responder(ResponseBucket::new(2, 1));
        let mut out = Vec::new();
        let t = Duration::from_secs(10);
        // Too small: refused without touching the bucket.
        for _ in 0..5 {
            assert!(matches!(
                r.stateless_reset(&short_packet(20), remote(), &[], t, &mut out),
                Err(NoResponse::NotApplicable(_))
            ));
        }
        let big = short_packet(100);
        assert!(r.stateless_reset(&big, remote(), &[], t, &mut out).is_ok());
        assert!(r.stateless_reset(&big, remote(), &[], t, &mut out).is_ok());
        assert_eq!(
            r.stateless_reset(&big, remote(), &[], t, &mut out),
            Err(NoResponse::RateLimited)
        );
        // One more per second.
        let t = t + Duration::from_millis(1000);
        assert!(r.stateless_reset(&big, remote(), &[], t, &mut out).is_ok());
        assert_eq!(
            r.stateless_reset(&big, remote(), &[], t, &mut out),
            Err(NoResponse::RateLimited)
        );
    }

    #[test]
    fn bucket_caps_at_burst_and_survives_time_going_backwards() {
        let mut b = ResponseBucket::new(3, 1000);
        let a = remote();
        let t = Duration::from_secs(100);
        for _ in 0..3 {
            assert!(b.allow(ResponseKind::Retry, a, t));
        }
        assert!(!b.allow(ResponseKind::Retry, a, t));
        assert!(!b.allow(ResponseKind::Retry, a, Duration::ZERO));
        let later = t + Duration::from_secs(3600);
        for _ in 0..3 {
            assert!(b.allow(ResponseKind::Retry, a, later));
        }
        assert!(!b.allow(ResponseKind::Retry, a, later));
    }

    #[test]
    fn rfc9000_17_2_5_1_retry_scid_must_differ_from_client_dcid() {
        let dcid = ConnectionId::new(&[1; 8]).unwrap();
        let scid = ConnectionId::new(&[2; 8]).unwrap();
        let mut out = Vec::new();
        assert_eq!(
            retry_packet(&dcid, &scid, &dcid, b"tok", 0, &mut out),
            Err(NoResponse::NotApplicable("Retry SCID equals the client's DCID"))
        );
        assert!(retry_packet(&dcid, &scid, &scid, b"", 0, &mut out).is_err());
        assert!(out.is_empty());
        retry_packet(
            &dcid,
            &scid,
            &ConnectionId::new(&[3; 8]).unwrap(),
            b"tok",
            0,
            &mut out,
        )
        .unwrap();
        assert!(crate::proto::crypto::verify_retry_integrity(&dcid, &out));
    }

    #[test]
    fn version_negotiation_through_the_limiter() {
        let mut r = responder(ResponseBucket::new(1, 0));
        let mut dgram = vec![0xc0, 0x1a, 0x2a, 0x3a, 0x4a, 8];
        dgram.extend_from_slice(&[1; 8]);
        dgram.push(4);
        dgram.extend_from_slice(&[2; 4]);
        dgram.resize(1200, 0);
        let mut out = Vec::new();
        r.version_negotiation(&dgram, &[VERSION_1], remote(), 0, Duration::ZERO, &mut out)
            .unwrap();
        assert!(!out.is_empty());
        let n = out.len();
        assert_eq!(
            r.version_negotiation(&dgram, &[VERSION_1], remote(), 0, Duration::ZERO, &mut out),
            Err(NoResponse::RateLimited)
        );
        assert_eq!(out.len(), n);
        assert!(matches!(
            r.version_negotiation(&dgram[..100], &[VERSION_1], remote(), 0, Duration::ZERO, &mut out),
            Err(NoResponse::NotApplicable(_))
        ));
    }

    proptest! {
        #[test]
        fn arbitrary_datagrams_never_panic(
            dgram in proptest::collection::vec(any::<u8>(), 0..1500),
            random in proptest::collection::vec(any::<u8>(), 0..64),
            now in any::<u64>(),
        ) {
            let mut r = responder(ResponseBucket::new(10, 10));
            let now = Duration::from_millis(now);
            let mut out = Vec::new();
            if r.stateless_reset(&dgram, remote(), &random, now, &mut out).is_ok() {
                prop_assert!(out.len() < dgram.len());
            }
            let _ = r.version_negotiation(&dgram, &[VERSION_1], remote(), 0, now, &mut out);
            if let Ok(DecodedPacket::Protected(pd)) = DecodedPacket::decode(&dgram, 8) {
                let d = r.decide(&dgram, &pd, remote(), now);
                let random = RetryRandom { retry_scid: ConnectionId::new(&[9; 8]).unwrap(), nonce: [0; 12], unused: 0 };
                match d {
                    InitialDecision::SendRetry => { let _ = r.retry(&pd, remote(), &random, now, &mut out); }
                    InitialDecision::Close { error, .. } => {
                        let _ = r.initial_close(&pd, remote(), &error, now, &mut out);
                    }
                    _ => {}
                }
            }
        }
    }
}
