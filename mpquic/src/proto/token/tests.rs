//! Token sealing, validation decisions, the client token store, and the whole Retry flow between a client and a
//! stateless server.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use bytes::Bytes;
use proptest::prelude::*;

use super::*;
use crate::cc::PathId;
use crate::proto::crypto::{Keys, Side, verify_retry_integrity};
use crate::proto::error::{TransportError, TransportErrorCode};
use crate::proto::frame::{Frame, decode_frames};
use crate::proto::packet::{DecodedPacket, MIN_INITIAL_DATAGRAM_SIZE, OutgoingHeader, PartialDecode};
use crate::proto::stateless::{
    ResetKey, RetryRandom, StatelessResponder, Unlimited, invalid_token_close_packet,
};

const SECRET: [u8; SECRET_LEN] = [7; SECRET_LEN];
const NONCE: [u8; NONCE_LEN] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
const T0: Duration = Duration::from_secs(1_700_000_000);

fn key() -> TokenKey {
    TokenKey::new(&SECRET).unwrap()
}

fn cid(b: &[u8]) -> ConnectionId {
    ConnectionId::new(b).unwrap()
}

fn client() -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)), 4433)
}

fn validator(require_retry: bool) -> TokenValidator {
    TokenValidator::new(
        key(),
        TokenConfig {
            require_retry,
            ..TokenConfig::default()
        },
    )
}

fn retry_token() -> RetryToken {
    RetryToken {
        client_addr: client(),
        original_dcid: cid(&[0xaa; 8]),
        retry_scid: cid(&[0xbb; 16]),
        issued: T0,
    }
}

fn ms(d: Duration) -> Duration {
    Duration::from_millis(d.as_millis() as u64)
}

// ---------------------------------------------------------------------------------------------------------
// Sealing and opening

#[test]
fn retry_token_round_trip() {
    let sealed = key().seal_retry(&retry_token(), NONCE).unwrap();
    assert_eq!(TokenKind::of(&sealed), Some(TokenKind::Retry));
    assert_eq!(sealed.id(), NONCE);
    assert!(sealed.len() <= MAX_TOKEN_LEN);
    assert_eq!(key().open(&sealed), Ok(OpenedToken::Retry(retry_token())));
}

#[test]
fn largest_retry_token_is_max_token_len() {
    let t = RetryToken {
        client_addr: SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), 1),
        original_dcid: cid(&[1; 20]),
        retry_scid: cid(&[2; 20]),
        issued: T0,
    };
    let sealed = key().seal_retry(&t, NONCE).unwrap();
    assert_eq!(sealed.len(), MAX_TOKEN_LEN);
    assert_eq!(key().open(&sealed), Ok(OpenedToken::Retry(t)));
}

#[test]
fn new_token_round_trip() {
    let t = NewToken {
        client_ip: IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)),
        issued: T0,
    };
    let sealed = key().seal_new_token(&t, NONCE).unwrap();
    assert_eq!(TokenKind::of(&sealed), Some(TokenKind::NewToken));
    assert_eq!(key().open(&sealed), Ok(OpenedToken::NewToken(t)));
}

#[test]
fn ipv4_mapped_addresses_are_canonical() {
    let mapped = SocketAddr::new(IpAddr::V6(Ipv4Addr::new(192, 0, 2, 1).to_ipv6_mapped()), 4433);
    let v = validator(false);
    let token = v
        .issue_retry_token(mapped, cid(&[0xaa; 8]), cid(&[0xbb; 16]), NONCE, T0)
        .unwrap();
    assert!(
        v.validate_retry_token(&token, client(), &cid(&[0xbb; 16]), T0)
            .is_ok()
    );
}

#[test]
fn every_flipped_bit_is_rejected() {
    let sealed = key().seal_retry(&retry_token(), NONCE).unwrap();
    for i in 0..sealed.len() {
        for bit in 0..8 {
            let mut t = sealed.to_vec();
            t[i] ^= 1 << bit;
            let r = key().open(&t);
            assert!(
                matches!(r, Err(TokenError::Unauthenticated | TokenError::UnknownKind)),
                "byte {i} bit {bit}: {r:?}"
            );
        }
    }
}

#[test]
fn truncated_tokens_are_rejected() {
    let sealed = key().seal_retry(&retry_token(), NONCE).unwrap();
    for len in 0..sealed.len() {
        let r = key().open(&sealed[..len]);
        assert!(
            matches!(r, Err(TokenError::Truncated | TokenError::Unauthenticated)),
            "{len}: {r:?}"
        );
    }
}

#[test]
fn extended_token_is_rejected() {
    let mut t = key()
        .seal_new_token(
            &NewToken {
                client_ip: client().ip(),
                issued: T0,
            },
            NONCE,
        )
        .unwrap()
        .to_vec();
    t.push(0);
    assert_eq!(key().open(&t), Err(TokenError::Unauthenticated));
}

#[test]
fn wrong_key_is_rejected() {
    let sealed = key().seal_retry(&retry_token(), NONCE).unwrap();
    let other = TokenKey::new(&[8; SECRET_LEN]).unwrap();
    assert_eq!(other.open(&sealed), Err(TokenError::Unauthenticated));
}

#[test]
fn kind_byte_is_authenticated() {
    // RFC 9000 §8.1.1: "A token sent in a NEW_TOKEN frame or a Retry packet MUST be constructed in a way that
    // allows the server to identify how it was provided to a client." Relabelling the kind breaks the tag.
    let mut t = key().seal_retry(&retry_token(), NONCE).unwrap().to_vec();
    t[0] = b'N';
    assert_eq!(key().open(&t), Err(TokenError::Unauthenticated));
}

#[test]
fn too_long_token_is_rejected_before_opening() {
    let mut t = vec![b'R'; MAX_TOKEN_LEN + 1];
    t[1..13].copy_from_slice(&NONCE);
    assert_eq!(key().open(&t), Err(TokenError::TooLong));
    assert_eq!(key().open(&vec![b'R'; 1 << 16]), Err(TokenError::TooLong));
}

#[test]
fn unknown_kind_is_rejected() {
    assert_eq!(key().open(&[0x42; 40]), Err(TokenError::UnknownKind));
    assert_eq!(key().open(&[]), Err(TokenError::Truncated));
}

#[test]
fn rfc9000_8_1_3_new_tokens_are_unique() {
    // RFC 9000 §8.1.3: "A server MUST ensure that every NEW_TOKEN frame it sends is unique across all clients":
    // the same contents under different nonces give different tokens.
    let t = NewToken {
        client_ip: client().ip(),
        issued: T0,
    };
    let a = key().seal_new_token(&t, NONCE).unwrap();
    let b = key().seal_new_token(&t, [9; NONCE_LEN]).unwrap();
    assert_ne!(a.as_slice(), b.as_slice());
}

// ---------------------------------------------------------------------------------------------------------
// Validation

#[test]
fn retry_token_validates_within_lifetime() {
    let v = validator(false);
    let token = key().seal_retry(&retry_token(), NONCE).unwrap();
    let scid = cid(&[0xbb; 16]);
    let lifetime = v.config().retry_token_lifetime;
    assert_eq!(
        v.validate_retry_token(&token, client(), &scid, T0),
        Ok(retry_token())
    );
    assert!(
        v.validate_retry_token(&token, client(), &scid, T0 + lifetime - Duration::from_millis(1))
            .is_ok()
    );
}

#[test]
fn rfc9000_8_1_4_retry_tokens_are_only_accepted_for_a_short_time() {
    let v = validator(false);
    let token = key().seal_retry(&retry_token(), NONCE).unwrap();
    let scid = cid(&[0xbb; 16]);
    let lifetime = v.config().retry_token_lifetime;
    assert_eq!(
        v.validate_retry_token(&token, client(), &scid, T0 + lifetime),
        Err(TokenError::Expired)
    );
    assert_eq!(
        v.validate_retry_token(&token, client(), &scid, T0 + Duration::from_secs(3600)),
        Err(TokenError::Expired)
    );
}

#[test]
fn token_from_the_future_is_rejected() {
    let v = validator(false);
    let token = key().seal_retry(&retry_token(), NONCE).unwrap();
    let scid = cid(&[0xbb; 16]);
    assert!(
        v.validate_retry_token(&token, client(), &scid, T0 - Duration::from_secs(1))
            .is_ok()
    );
    assert_eq!(
        v.validate_retry_token(&token, client(), &scid, T0 - Duration::from_secs(3)),
        Err(TokenError::IssuedInFuture)
    );
    assert_eq!(
        v.validate_retry_token(&token, client(), &scid, Duration::ZERO),
        Err(TokenError::IssuedInFuture)
    );
}

#[test]
fn rfc9000_8_1_4_retry_token_checks_ip_and_port() {
    // RFC 9000 §8.1.4: "Tokens sent in Retry packets SHOULD include information that allows the server to
    // verify that the source IP address and port in client packets remain constant."
    let v = validator(false);
    let token = key().seal_retry(&retry_token(), NONCE).unwrap();
    let scid = cid(&[0xbb; 16]);
    let other_port = SocketAddr::new(client().ip(), 4434);
    let other_ip = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 2)), 4433);
    assert_eq!(
        v.validate_retry_token(&token, other_port, &scid, T0),
        Err(TokenError::AddressMismatch)
    );
    assert_eq!(
        v.validate_retry_token(&token, other_ip, &scid, T0),
        Err(TokenError::AddressMismatch)
    );
}

#[test]
fn rfc9000_17_2_5_2_retry_token_under_another_dcid_is_rejected() {
    let v = validator(false);
    let token = key().seal_retry(&retry_token(), NONCE).unwrap();
    assert_eq!(
        v.validate_retry_token(&token, client(), &cid(&[0xcc; 16]), T0),
        Err(TokenError::ConnectionIdMismatch)
    );
}

#[test]
fn rfc9000_8_1_4_new_token_checks_ip_only() {
    // RFC 9000 §8.1.4: "Tokens sent in NEW_TOKEN frames MUST include information that allows the server to
    // verify that the client IP address has not changed from when the token was issued."
    let v = validator(false);
    let token = v.issue_new_token(client(), NONCE, T0).unwrap();
    let new_port = SocketAddr::new(client().ip(), 50000);
    assert!(
        v.validate_new_token(&token, new_port, T0 + Duration::from_secs(3600))
            .is_ok()
    );
    let other_ip = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(198, 51, 100, 7)), 4433);
    assert_eq!(
        v.validate_new_token(&token, other_ip, T0),
        Err(TokenError::AddressMismatch)
    );
    let lifetime = v.config().new_token_lifetime;
    assert_eq!(
        v.validate_new_token(&token, client(), T0 + lifetime),
        Err(TokenError::Expired)
    );
}

#[test]
fn tokens_of_the_other_kind_are_rejected() {
    let v = validator(false);
    let new = v.issue_new_token(client(), NONCE, T0).unwrap();
    let retry = key().seal_retry(&retry_token(), NONCE).unwrap();
    assert_eq!(
        v.validate_retry_token(&new, client(), &cid(&[0xbb; 16]), T0),
        Err(TokenError::WrongKind)
    );
    assert_eq!(
        v.validate_new_token(&retry, client(), T0),
        Err(TokenError::WrongKind)
    );
}

// ---------------------------------------------------------------------------------------------------------
// Decisions

const CLIENT_DCID: [u8; 8] = [0xaa; 8];

#[test]
fn no_token_proceeds_or_retries_by_policy() {
    let dcid = cid(&CLIENT_DCID);
    assert_eq!(
        validator(false).decide(&dcid, &[], client(), T0),
        InitialDecision::Proceed(ValidatedInitial {
            address_validated: false,
            original_dcid: dcid,
            retry_scid: None,
            token_id: None,
            ignored_token: None,
        })
    );
    assert_eq!(
        validator(true).decide(&dcid, &[], client(), T0),
        InitialDecision::SendRetry
    );
    let mut v = validator(false);
    v.set_require_retry(true);
    assert_eq!(v.decide(&dcid, &[], client(), T0), InitialDecision::SendRetry);
}

#[test]
fn valid_retry_token_proceeds_with_odcid_and_retry_scid() {
    let v = validator(true);
    let token = key().seal_retry(&retry_token(), NONCE).unwrap();
    assert_eq!(
        v.decide(&cid(&[0xbb; 16]), &token, client(), T0 + Duration::from_secs(1)),
        InitialDecision::Proceed(ValidatedInitial {
            address_validated: true,
            original_dcid: cid(&CLIENT_DCID),
            retry_scid: Some(cid(&[0xbb; 16])),
            token_id: None,
            ignored_token: None,
        })
    );
}

#[test]
fn rfc9000_8_1_2_invalid_retry_token_closes_with_invalid_token() {
    // RFC 9000 §8.1.2: "the server SHOULD immediately close (Section 10.2) the connection with an INVALID_TOKEN
    // error."
    let v = validator(false);
    let token = key().seal_retry(&retry_token(), NONCE).unwrap();
    let scid = cid(&[0xbb; 16]);
    let expired = T0 + Duration::from_secs(60);
    let mut tampered = token.to_vec();
    *tampered.last_mut().unwrap() ^= 1;
    let other = SocketAddr::new(client().ip(), 1);
    let cases: [(&[u8], SocketAddr, Duration, TokenError); 5] = [
        (&token, client(), expired, TokenError::Expired),
        (&tampered, client(), T0, TokenError::Unauthenticated),
        (&token, other, T0, TokenError::AddressMismatch),
        (&token[..20], client(), T0, TokenError::Truncated),
        (&[b'R'; 200], client(), T0, TokenError::TooLong),
    ];
    for (token, remote, now, cause) in cases {
        let d = v.decide(&scid, token, remote, now);
        let InitialDecision::Close { error, cause: c } = d else {
            panic!("{cause:?}: {d:?}")
        };
        assert_eq!(c, cause);
        assert_eq!(error.code, TransportErrorCode::INVALID_TOKEN);
        assert_eq!(error.reason, cause.reason());
    }
}

#[test]
fn rfc9000_8_1_3_invalid_new_token_proceeds_as_if_no_token() {
    // RFC 9000 §8.1.3: "If the token is invalid, then the server SHOULD proceed as if the client did not have a
    // validated address, including potentially sending a Retry packet."
    let dcid = cid(&CLIENT_DCID);
    let v = validator(false);
    let token = v.issue_new_token(client(), NONCE, T0).unwrap();
    let late = T0 + Duration::from_secs(2 * 24 * 3600);
    let InitialDecision::Proceed(p) = v.decide(&dcid, &token, client(), late) else {
        panic!("expected Proceed")
    };
    assert!(!p.address_validated);
    assert_eq!(p.ignored_token, Some(TokenError::Expired));
    // Garbage from another server, and oversized garbage.
    for junk in [&[0x42u8; 50][..], &[b'N'; 5000][..]] {
        let InitialDecision::Proceed(p) = v.decide(&dcid, junk, client(), T0) else {
            panic!("expected Proceed")
        };
        assert!(!p.address_validated);
        assert!(p.ignored_token.is_some());
    }
    // With Retry required, the server sends a Retry instead.
    assert_eq!(
        validator(true).decide(&dcid, &token, client(), late),
        InitialDecision::SendRetry
    );
}

#[test]
fn valid_new_token_validates_the_address() {
    let dcid = cid(&CLIENT_DCID);
    let v = validator(true);
    let token = v.issue_new_token(client(), NONCE, T0).unwrap();
    let later = SocketAddr::new(client().ip(), 60000);
    assert_eq!(
        v.decide(&dcid, &token, later, T0 + Duration::from_secs(3600)),
        InitialDecision::Proceed(ValidatedInitial {
            address_validated: true,
            original_dcid: dcid,
            retry_scid: None,
            token_id: Some(NONCE),
            ignored_token: None,
        })
    );
}

#[test]
fn rfc9000_7_2_client_dcid_shorter_than_8_bytes_is_dropped() {
    let v = validator(false);
    assert!(matches!(
        v.decide(&cid(&[1; 7]), &[], client(), T0),
        InitialDecision::Drop { .. }
    ));
    // After a Retry, the DCID is the server's choice and may be short.
    let t = RetryToken {
        retry_scid: cid(&[3; 4]),
        ..retry_token()
    };
    let token = key().seal_retry(&t, NONCE).unwrap();
    assert!(matches!(
        v.decide(&cid(&[3; 4]), &token, client(), T0),
        InitialDecision::Proceed(_)
    ));
}

// ---------------------------------------------------------------------------------------------------------
// The Retry flow, packets and all

fn responder(require_retry: bool) -> StatelessResponder {
    StatelessResponder {
        validator: validator(require_retry),
        reset_key: ResetKey::new(&[5; 32]),
        limiter: Unlimited,
        local_cid_len: 16,
        max_reset_len: 1200,
    }
}

/// A client Initial datagram (padded to 1200 bytes, protected with the Initial keys of `dcid`).
fn client_initial(dcid: &ConnectionId, scid: &ConnectionId, token: &[u8]) -> Vec<u8> {
    let keys = Keys::initial(dcid, Side::Client).unwrap();
    let mut p = Vec::new();
    let pe = OutgoingHeader::Initial { dcid, scid, token }.encode(0, 1, &mut p);
    p.resize(MIN_INITIAL_DATAGRAM_SIZE, 0); // PADDING frames, then room for the tag
    let len = p.len();
    pe.set_length(&mut p, len).unwrap();
    keys.local
        .packet
        .seal(PathId(0), 0, &mut p, pe.header_len())
        .unwrap();
    keys.local.header.apply(&mut p, pe.pn_offset()).unwrap();
    p
}

fn partial(datagram: &[u8]) -> PartialDecode {
    match DecodedPacket::decode(datagram, 16).unwrap() {
        DecodedPacket::Protected(p) => p,
        other => panic!("not protected: {other:?}"),
    }
}

#[test]
fn retry_flow_end_to_end() {
    let mut server = responder(true);
    let client_scid = cid(&[0xc1; 8]);
    let odcid = cid(&CLIENT_DCID);

    // 1. The client's first Initial, without token: the server asks for a Retry.
    let first = client_initial(&odcid, &client_scid, &[]);
    let pd = partial(&first);
    assert_eq!(
        server.decide(&first, &pd, client(), T0),
        InitialDecision::SendRetry
    );
    let random = RetryRandom {
        retry_scid: cid(&[0x5e; 16]),
        nonce: NONCE,
        unused: 0x0a,
    };
    let mut retry = Vec::new();
    server.retry(&pd, client(), &random, T0, &mut retry).unwrap();

    // 2. The client accepts the Retry: it is addressed to its SCID and its integrity tag verifies.
    let DecodedPacket::Retry(r) = DecodedPacket::decode(&retry, 8).unwrap() else {
        panic!("not a Retry")
    };
    r.check_client_may_accept(&client_scid, false).unwrap();
    assert!(verify_retry_integrity(&odcid, &retry));
    assert!(!verify_retry_integrity(&cid(&[0; 8]), &retry));
    assert_eq!(r.scid, random.retry_scid);

    // 3. Its next Initial goes to the Retry's SCID with the token; the server accepts it.
    let second = client_initial(&r.scid, &client_scid, r.token);
    let pd = partial(&second);
    assert_eq!(pd.token(&second), r.token);
    let later = T0 + Duration::from_millis(80);
    assert_eq!(
        server.decide(&second, &pd, client(), later),
        InitialDecision::Proceed(ValidatedInitial {
            address_validated: true,
            original_dcid: odcid,
            retry_scid: Some(random.retry_scid),
            token_id: None,
            ignored_token: None,
        })
    );

    // 4. The same Initial from another port, or after the lifetime, is closed with INVALID_TOKEN.
    let moved = SocketAddr::new(client().ip(), 9999);
    let InitialDecision::Close { error, .. } = server.decide(&second, &pd, moved, later) else {
        panic!("expected Close")
    };
    assert_eq!(error.code, TransportErrorCode::INVALID_TOKEN);
    assert!(matches!(
        server.decide(&second, &pd, client(), T0 + Duration::from_secs(16)),
        InitialDecision::Close {
            cause: TokenError::Expired,
            ..
        }
    ));
}

#[test]
fn retry_flow_invalid_token_close_reaches_the_client() {
    let mut server = responder(true);
    let client_scid = cid(&[0xc1; 8]);
    let retry_scid = cid(&[0x5e; 16]);
    // A client returning a forged Retry token.
    let mut forged = key().seal_retry(&retry_token(), NONCE).unwrap().to_vec();
    forged[20] ^= 0xff;
    let initial = client_initial(&retry_scid, &client_scid, &forged);
    let pd = partial(&initial);
    let InitialDecision::Close { error, cause } = server.decide(&initial, &pd, client(), T0) else {
        panic!("expected Close")
    };
    assert_eq!(cause, TokenError::Unauthenticated);
    let mut out = Vec::new();
    server.initial_close(&pd, client(), &error, T0, &mut out).unwrap();
    assert!(out.len() <= 3 * initial.len());

    // The client opens it with the Initial keys of the DCID it used, and finds CONNECTION_CLOSE(INVALID_TOKEN).
    let keys = Keys::initial(&retry_scid, Side::Client).unwrap();
    let pd = partial(&out);
    assert_eq!(pd.dcid(), &client_scid);
    pd.check_received_by_client().unwrap();
    let len = pd.len();
    let pn_offset = pd.pn_offset();
    let packet = &mut out[..len];
    let pn = keys.remote.header.remove(packet, pn_offset).unwrap();
    let header_len = pn_offset + pn.len;
    let plain = keys.remote.packet.open(PathId(0), 0, packet, header_len).unwrap();
    let frames: Vec<_> = decode_frames(&packet[header_len..header_len + plain])
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(frames.iter().any(|f| matches!(
        f,
        Frame::ConnectionClose(c) if c.error_code.into_inner() == TransportErrorCode::INVALID_TOKEN.0
    )));
}

#[test]
fn invalid_token_close_packet_is_well_formed_for_short_reason() {
    let error = TransportError::new(TransportErrorCode::INVALID_TOKEN, "");
    let mut out = vec![0xee; 3]; // appends after existing bytes
    invalid_token_close_packet(&cid(&[1; 8]), &cid(&[]), &error, &mut out).unwrap();
    assert_eq!(&out[..3], &[0xee; 3]);
    let pd = partial(&out[3..]);
    assert_eq!(pd.len(), out.len() - 3);
}

#[test]
fn initial_in_small_datagram_is_dropped() {
    let server = responder(true);
    let mut d = client_initial(&cid(&CLIENT_DCID), &cid(&[1; 8]), &[]);
    let pd = partial(&d);
    d.truncate(1199);
    // The packet's Length now exceeds the datagram, but the decision must still refuse a small datagram.
    assert!(matches!(
        server.decide(&d, &pd, client(), T0),
        InitialDecision::Drop { .. }
    ));
}

// ---------------------------------------------------------------------------------------------------------
// Client token store

#[test]
fn store_takes_each_token_once_newest_first() {
    let mut s = LruTokenStore::default();
    s.insert("a.example", Bytes::from_static(b"one"));
    s.insert("a.example", Bytes::from_static(b"two"));
    assert_eq!(s.take("b.example"), None);
    assert_eq!(s.take("a.example"), Some(Bytes::from_static(b"two")));
    assert_eq!(s.take("a.example"), Some(Bytes::from_static(b"one")));
    assert_eq!(s.take("a.example"), None);
    assert!(s.is_empty());
}

#[test]
fn rfc9000_19_7_store_discards_duplicates() {
    let mut s = LruTokenStore::default();
    s.insert("a", Bytes::from_static(b"tok"));
    s.insert("a", Bytes::from_static(b"tok"));
    assert_eq!(s.take("a"), Some(Bytes::from_static(b"tok")));
    assert_eq!(s.take("a"), None);
}

#[test]
fn store_is_bounded() {
    let mut s = LruTokenStore::new(2, 2, 8);
    for t in [&b"1"[..], b"2", b"3"] {
        s.insert("a", Bytes::copy_from_slice(t));
    }
    s.insert("a", Bytes::from_static(b"too long!"));
    s.insert("a", Bytes::new());
    s.insert("b", Bytes::from_static(b"b"));
    let _ = s.take("c"); // a miss does not refresh anything
    s.insert("a", Bytes::from_static(b"4")); // "a" is now the most recent
    s.insert("c", Bytes::from_static(b"c")); // evicts "b"
    assert_eq!(s.len(), 2);
    assert_eq!(s.take("b"), None);
    assert_eq!(s.take("a"), Some(Bytes::from_static(b"4")));
    assert_eq!(s.take("a"), Some(Bytes::from_static(b"3")));
    assert_eq!(s.take("a"), None);
    assert_eq!(s.take("c"), Some(Bytes::from_static(b"c")));
    let mut none = LruTokenStore::new(0, 0, 0);
    none.insert("a", Bytes::from_static(b"x"));
    assert!(none.is_empty());
}

// ---------------------------------------------------------------------------------------------------------
// Property tests

fn arb_cid() -> impl Strategy<Value = ConnectionId> {
    proptest::collection::vec(any::<u8>(), 0..=20).prop_map(|b| ConnectionId::new(&b).unwrap())
}

fn arb_addr() -> impl Strategy<Value = SocketAddr> {
    prop_oneof![
        (any::<[u8; 4]>(), any::<u16>()).prop_map(|(ip, port)| SocketAddr::new(IpAddr::from(ip), port)),
        (any::<[u8; 16]>(), any::<u16>())
            .prop_map(|(ip, port)| { SocketAddr::new(IpAddr::V6(Ipv6Addr::from(ip)).to_canonical(), port) }),
    ]
}

proptest! {
    #[test]
    fn retry_token_seal_open_round_trip(
        addr in arb_addr(), odcid in arb_cid(), scid in arb_cid(), issued in any::<u64>(), nonce in any::<[u8; 12]>(),
    ) {
        let t = RetryToken { client_addr: addr, original_dcid: odcid, retry_scid: scid, issued: Duration::from_millis(issued) };
        let sealed = key().seal_retry(&t, nonce).unwrap();
        let ip_len = if addr.is_ipv4() { 4 } else { 16 };
        prop_assert_eq!(sealed.len(), 1 + 12 + 8 + 1 + ip_len + 2 + 2 + odcid.len() + scid.len() + 16);
        prop_assert_eq!(key().open(&sealed), Ok(OpenedToken::Retry(t)));
    }

    #[test]
    fn new_token_seal_open_round_trip(addr in arb_addr(), issued_ns in any::<u64>(), nonce in any::<[u8; 12]>()) {
        let t = NewToken { client_ip: addr.ip(), issued: Duration::from_nanos(issued_ns) };
        let sealed = key().seal_new_token(&t, nonce).unwrap();
        let ip_len = if addr.is_ipv4() { 4 } else { 16 };
        prop_assert_eq!(sealed.len(), 1 + 12 + 8 + 1 + ip_len + 16);
        // Times are kept in milliseconds.
        prop_assert_eq!(key().open(&sealed), Ok(OpenedToken::NewToken(NewToken { issued: ms(t.issued), ..t })));
    }

    #[test]
    fn arbitrary_tokens_never_panic(
        token in proptest::collection::vec(any::<u8>(), 0..300),
        first in prop_oneof![Just(b'R'), Just(b'N'), any::<u8>()],
        dcid in arb_cid(), addr in arb_addr(), now in any::<u64>(), require_retry in any::<bool>(),
    ) {
        let mut token = token;
        if let Some(b) = token.first_mut() { *b = first; }
        prop_assert!(key().open(&token).is_err());
        let d = validator(require_retry).decide(&dcid, &token, addr, Duration::from_millis(now));
        let validated = matches!(d, InitialDecision::Proceed(ValidatedInitial { address_validated: true, .. }));
        prop_assert!(!validated);
        if first == b'R' && !token.is_empty() {
            let is_close = matches!(d, InitialDecision::Close { .. });
            prop_assert!(is_close);
        }
    }

    #[test]
    fn tampered_tokens_never_validate(
        pos in any::<prop::sample::Index>(), mask in 1u8.., addr in arb_addr(), odcid in arb_cid(),
    ) {
        let v = validator(false);
        let scid = cid(&[9; 8]);
        let token = v.issue_retry_token(addr, odcid, scid, NONCE, T0).unwrap();
        let mut t = token.to_vec();
        let i = pos.index(t.len());
        t[i] ^= mask;
        prop_assert!(v.validate_retry_token(&t, addr, &scid, T0).is_err());
    }
}
