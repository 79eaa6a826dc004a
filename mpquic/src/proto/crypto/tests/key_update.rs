//! 1-RTT key update (RFC 9001 §6) through [`OneRttKeys`], with the multipath per-path packet numbers.

use super::{one_rtt_pair, protect};
use crate::cc::PathId;
use crate::proto::crypto::{
    AeadLimits, CryptoError, IntegrityCounter, KeyUpdateBlocked, KeyUpdateEvent, OneRttKeys, Opened,
    TlsOptions,
};
use crate::proto::error::TransportErrorCode;
use crate::proto::packet_number;

const PAYLOAD: &[u8] = b"short header payload, long enough to sample";

fn pair() -> (OneRttKeys, OneRttKeys) {
    let (mut c, mut s) = one_rtt_pair(&TlsOptions::with_alpn(b"mpq"));
    c.set_handshake_confirmed();
    s.set_handshake_confirmed();
    (c, s)
}

/// A protected short-header packet: no DCID, a 4-byte packet number, the sender's Key Phase.
fn build(from: &mut OneRttKeys, path: PathId, pn: u64) -> Vec<u8> {
    let first = 0x40 | (u8::from(from.key_phase()) << 2) | 0x03;
    let mut packet = vec![first];
    packet.extend_from_slice(&(packet_number::truncate(pn, 4)).to_be_bytes());
    packet.extend_from_slice(PAYLOAD);
    packet.resize(packet.len() + 16, 0);
    from.seal(path, pn, &mut packet, 5).unwrap();
    protect(from.local_header(), &mut packet, 1);
    packet
}

/// Removes header protection, reads the Key Phase and opens the packet.
fn receive(
    to: &mut OneRttKeys,
    path: PathId,
    mut packet: Vec<u8>,
    largest: Option<u64>,
) -> Result<Opened, CryptoError> {
    let field = to.remote_header().remove(&mut packet, 1)?;
    let key_phase = packet[0] & 0x04 != 0;
    let pn = packet_number::decode(field.truncated, field.len, largest);
    let opened = to.open(path, pn, key_phase, &mut packet, 1 + field.len)?;
    assert_eq!(&packet[5..5 + opened.len], PAYLOAD);
    Ok(opened)
}

#[test]
fn key_update_initiated_by_client() {
    let (mut c, mut s) = pair();
    let p0 = PathId(0);
    assert_eq!(
        receive(&mut s, p0, build(&mut c, p0, 0), None).unwrap().event,
        None
    );
    let delayed = build(&mut c, p0, 1); // sent with generation 0, delivered late

    c.initiate_update().unwrap();
    assert!(c.key_phase());
    assert_eq!(c.generation(), 1);
    let opened = receive(&mut s, p0, build(&mut c, p0, 2), Some(0)).unwrap();
    assert_eq!(opened.event, Some(KeyUpdateEvent::PeerInitiated));
    assert!(s.key_phase());
    assert_eq!(s.generation(), 1);

    // The server answers with the new keys: the client has its confirmation.
    let opened = receive(&mut c, p0, build(&mut s, p0, 0), None).unwrap();
    assert_eq!(opened.event, Some(KeyUpdateEvent::NewKeysReceived));
    assert_eq!(
        receive(&mut c, p0, build(&mut s, p0, 1), Some(0)).unwrap().event,
        None
    );

    // The delayed generation-0 packet still opens with the previous keys, until they are retired.
    assert!(s.has_previous_keys());
    receive(&mut s, p0, delayed.clone(), Some(2)).unwrap();
    s.discard_previous_keys();
    assert_eq!(
        receive(&mut s, p0, delayed, Some(2)),
        Err(CryptoError::AuthenticationFailed)
    );
}

#[test]
fn key_update_initiated_by_server_then_by_client() {
    let (mut c, mut s) = pair();
    let p1 = PathId(1);
    receive(&mut c, p1, build(&mut s, p1, 0), None).unwrap();
    s.initiate_update().unwrap();
    assert_eq!(
        receive(&mut c, p1, build(&mut s, p1, 1), Some(0)).unwrap().event,
        Some(KeyUpdateEvent::PeerInitiated)
    );
    // Both directions moved: the client's next packet uses the new phase and opens at the server.
    assert!(c.key_phase());
    assert_eq!(
        receive(&mut s, p1, build(&mut c, p1, 0), None).unwrap().event,
        Some(KeyUpdateEvent::NewKeysReceived)
    );

    // The client may update once a packet it sent with the current keys is acknowledged.
    assert_eq!(c.initiate_update(), Err(KeyUpdateBlocked::NotAcknowledged));
    c.on_packet_acked(p1, 0);
    c.initiate_update().unwrap();
    assert!(!c.key_phase());
    assert_eq!(c.generation(), 2);
    assert_eq!(
        receive(&mut s, p1, build(&mut c, p1, 1), Some(0)).unwrap().event,
        Some(KeyUpdateEvent::PeerInitiated)
    );
    assert_eq!(s.generation(), 2);
    receive(&mut c, p1, build(&mut s, p1, 2), Some(1)).unwrap();
}

#[test]
fn rfc9001_6_1_no_key_update_before_handshake_confirmed() {
    let (mut c, _) = one_rtt_pair(&TlsOptions::with_alpn(b"mpq"));
    assert_eq!(c.update_permitted(), Err(KeyUpdateBlocked::HandshakeNotConfirmed));
    assert_eq!(c.initiate_update(), Err(KeyUpdateBlocked::HandshakeNotConfirmed));
    assert_eq!(c.generation(), 0);
}

#[test]
fn rfc9001_6_1_no_second_key_update_before_ack_of_current_phase() {
    let (mut c, mut s) = pair();
    let p0 = PathId(0);
    let p2 = PathId(2);
    receive(&mut s, p0, build(&mut c, p0, 0), None).unwrap();
    c.on_packet_acked(p0, 0);
    c.initiate_update().unwrap();
    assert_eq!(c.initiate_update(), Err(KeyUpdateBlocked::NotAcknowledged));
    // An acknowledgment of a packet sent before the update does not count.
    c.on_packet_acked(p0, 0);
    assert_eq!(c.update_permitted(), Err(KeyUpdateBlocked::NotAcknowledged));
    // Nor does one on a path that carried no packet with the current keys.
    c.on_packet_acked(p2, 100);
    assert_eq!(c.update_permitted(), Err(KeyUpdateBlocked::NotAcknowledged));
    receive(&mut s, p0, build(&mut c, p0, 1), Some(0)).unwrap();
    c.on_packet_acked(p0, 1);
    assert_eq!(c.update_permitted(), Ok(()));
}

#[test]
fn rfc9001_6_4_old_keys_never_open_a_packet_numbered_above_newer_ones() {
    let (mut c, mut s) = pair();
    let p0 = PathId(0);
    receive(&mut s, p0, build(&mut c, p0, 0), None).unwrap();
    let old5 = build(&mut c, p0, 5);
    let old7 = build(&mut c, p0, 7); // generation 0, but numbered above the first new-keys packet
    c.initiate_update().unwrap();
    receive(&mut s, p0, build(&mut c, p0, 6), Some(0)).unwrap();
    assert_eq!(s.generation(), 1);
    // 5 < 6: previous keys, fine.
    receive(&mut s, p0, old5, Some(6)).unwrap();
    // 7 > 6 with the old phase: only the next keys are tried; it does not open and changes nothing.
    assert_eq!(
        receive(&mut s, p0, old7, Some(6)),
        Err(CryptoError::AuthenticationFailed)
    );
    assert_eq!(s.generation(), 1);
}

#[test]
fn rfc9001_5_5_failed_key_update_trigger_is_discarded() {
    let (mut c, mut s) = pair();
    let p0 = PathId(0);
    receive(&mut s, p0, build(&mut c, p0, 0), None).unwrap();
    c.initiate_update().unwrap();
    let mut forged = build(&mut c, p0, 1);
    let last = forged.len() - 1;
    forged[last] ^= 1;
    assert_eq!(
        receive(&mut s, p0, forged, Some(0)),
        Err(CryptoError::AuthenticationFailed)
    );
    assert_eq!(s.generation(), 0);
    assert!(!s.key_phase());
    // The genuine packet still triggers the update.
    receive(&mut s, p0, build(&mut c, p0, 2), Some(0)).unwrap();
    assert_eq!(s.generation(), 1);
}

#[test]
fn old_phase_packets_on_another_path_use_previous_keys() {
    let (mut c, mut s) = pair();
    let (p0, p1) = (PathId(0), PathId(1));
    receive(&mut s, p0, build(&mut c, p0, 0), None).unwrap();
    // Path 1 has its own packet-number space: a high number there is not "newer" than path 0's.
    let late_on_p1 = build(&mut c, p1, 1000);
    c.initiate_update().unwrap();
    receive(&mut s, p0, build(&mut c, p0, 1), Some(0)).unwrap();
    receive(&mut s, p1, late_on_p1, None).unwrap();
    // Once path 1 carried a new-keys packet, a higher old-phase number there is not opened with old keys.
    receive(&mut s, p1, build(&mut c, p1, 1001), Some(1000)).unwrap();
    s.on_path_removed(p1);
    assert_eq!(s.generation(), 1);
}

#[test]
fn wrong_path_or_tampering_fails_without_state_change() {
    let (mut c, mut s) = pair();
    let packet = build(&mut c, PathId(3), 0);
    assert_eq!(
        receive(&mut s, PathId(4), packet.clone(), None),
        Err(CryptoError::AuthenticationFailed)
    );
    assert_eq!(s.generation(), 0);
    let mut tampered = packet.clone();
    tampered[10] ^= 0x55;
    assert_eq!(
        receive(&mut s, PathId(3), tampered, None),
        Err(CryptoError::AuthenticationFailed)
    );
    receive(&mut s, PathId(3), packet, None).unwrap();
}

#[test]
fn rfc9001_6_6_confidentiality_limit_stops_sealing_until_update() {
    let (mut c, _) = pair();
    let limit = c.limits().confidentiality;
    c.set_sealed_for_test(c.limits().update_threshold() - 1);
    assert!(!c.wants_update());
    build(&mut c, PathId(0), 0);
    assert!(c.wants_update());
    c.set_sealed_for_test(limit);
    let mut packet = vec![0x43, 0, 0, 0, 1];
    packet.resize(40, 0);
    assert_eq!(
        c.seal(PathId(0), 1, &mut packet, 5),
        Err(CryptoError::ConfidentialityLimitReached)
    );
    c.initiate_update().unwrap();
    assert_eq!(c.sealed_with_current_key(), 0);
    assert!(c.seal(PathId(0), 1, &mut packet, 5).is_ok());
}

#[test]
fn rfc9001_6_6_integrity_limit_closes_with_aead_limit_reached() {
    let mut counter = IntegrityCounter::new(AeadLimits {
        confidentiality: 10,
        integrity: 3,
    });
    for _ in 0..3 {
        counter.on_auth_failure().unwrap();
    }
    let err = counter.on_auth_failure().unwrap_err();
    assert_eq!(err.code, TransportErrorCode::AEAD_LIMIT_REACHED);
    assert_eq!(counter.failures(), 4);
    let mut default = IntegrityCounter::default();
    default.set_limits(AeadLimits::CHACHA20_POLY1305);
    assert!(default.on_auth_failure().is_ok());
}

#[test]
fn next_keys_are_derived_lazily_on_the_deadline_the_connection_sets() {
    let (mut c, _) = pair();
    // Not derived at the handshake.
    assert!(!c.has_next_keys());
    assert_eq!(c.next_keys_deadline(), None);
    #[allow(clippy::disallowed_methods)] // an origin for the deadlines
    let t0 = std::time::Instant::now();
    let pto = std::time::Duration::from_millis(30);
    c.defer_next_keys_until(t0 + pto);
    assert_eq!(c.next_keys_deadline(), Some(t0 + pto));
    // A later deadline does not postpone an earlier one; an earlier one replaces it.
    c.defer_next_keys_until(t0 + 2 * pto);
    assert_eq!(c.next_keys_deadline(), Some(t0 + pto));
    c.defer_next_keys_until(t0 + pto / 2);
    assert_eq!(c.next_keys_deadline(), Some(t0 + pto / 2));
    c.prepare_next_keys();
    assert!(c.has_next_keys());
    assert_eq!(c.next_keys_deadline(), None);
    // Nothing left to defer once derived.
    c.defer_next_keys_until(t0 + pto);
    assert_eq!(c.next_keys_deadline(), None);
    // A key update uses them; the generation after has no keys and no deadline until the connection sets one.
    c.initiate_update().unwrap();
    assert_eq!(c.generation(), 1);
    assert!(!c.has_next_keys());
    assert_eq!(c.next_keys_deadline(), None);
}

#[test]
fn rfc9001_6_3_next_keys_derived_for_a_failed_trigger_are_kept() {
    let (mut c, mut s) = pair();
    let p0 = PathId(0);
    receive(&mut s, p0, build(&mut c, p0, 0), None).unwrap();
    #[allow(clippy::disallowed_methods)] // an origin for the deadline
    let t0 = std::time::Instant::now();
    s.defer_next_keys_until(t0 + std::time::Duration::from_secs(1));
    // A packet of the current phase needs no next keys.
    receive(&mut s, p0, build(&mut c, p0, 1), Some(0)).unwrap();
    assert!(!s.has_next_keys());
    // An apparent key update that does not authenticate: dropped, no update, but the keys derived to try it
    // are kept ("Once generated, the next set of packet protection keys SHOULD be kept, even if the packet
    // that was received was subsequently discarded.") and the deadline is gone.
    c.initiate_update().unwrap();
    let mut forged = build(&mut c, p0, 2);
    let last = forged.len() - 1;
    forged[last] ^= 1;
    assert_eq!(
        receive(&mut s, p0, forged, Some(1)),
        Err(CryptoError::AuthenticationFailed)
    );
    assert_eq!((s.generation(), s.key_phase()), (0, false));
    assert!(s.has_next_keys());
    assert_eq!(s.next_keys_deadline(), None);
    // The genuine update opens with those same keys.
    let opened = receive(&mut s, p0, build(&mut c, p0, 3), Some(1)).unwrap();
    assert_eq!(opened.event, Some(KeyUpdateEvent::PeerInitiated));
    assert_eq!((s.generation(), s.key_phase()), (1, true));
}

/// A peer that initiates a second key update as soon as RFC 9001 §6.1 lets it, checked step by step against
/// the rules, with none of the next keys derived in advance (the connection's deadline never fires here):
/// - §6.1: the server may initiate after the handshake is confirmed (gen 0 → 1).
/// - §6.2: the client, on the first packet that opens with the next keys, updates its send keys too and
///   answers (its acknowledgment goes out in a generation-1 packet).
/// - §6.1: "An endpoint MUST NOT initiate a subsequent key update unless it has received an acknowledgment
///   for a packet that was sent protected with keys from the current key phase": the server waits for the
///   acknowledgment of its first generation-1 packet, then updates again at once (gen 1 → 2).
/// - §6.2 last paragraph: the client has sent a generation-1 packet acknowledging the trigger, so this
///   second update is legitimate (not the "updated keys twice without awaiting confirmation" case) and it
///   follows, with the generation-2 keys derived when the first generation-2 packet arrives.
/// - §6.5: a delayed generation-1 packet numbered below the first generation-2 packet still opens with the
///   previous keys; one numbered above it is only tried with the next keys and is rejected.
#[test]
fn rfc9001_6_peer_updates_twice_in_a_row_as_soon_as_allowed() {
    let (mut c, mut s) = pair();
    let p0 = PathId(0);
    // Generation 0 traffic both ways.
    receive(&mut c, p0, build(&mut s, p0, 0), None).unwrap();
    receive(&mut s, p0, build(&mut c, p0, 0), None).unwrap();

    // First update by the server.
    s.initiate_update().unwrap();
    assert_eq!(s.generation(), 1);
    let opened = receive(&mut c, p0, build(&mut s, p0, 1), Some(0)).unwrap();
    assert_eq!(opened.event, Some(KeyUpdateEvent::PeerInitiated));
    assert_eq!((c.generation(), c.key_phase()), (1, true));
    // Not allowed again before an acknowledgment of a generation-1 packet.
    assert_eq!(s.initiate_update(), Err(KeyUpdateBlocked::NotAcknowledged));
    let delayed_gen1 = build(&mut s, p0, 2);
    let late_gen1 = build(&mut s, p0, 4);

    // The client's acknowledgment travels in a generation-1 packet: the server's first new-keys packet.
    let opened = receive(&mut s, p0, build(&mut c, p0, 1), Some(0)).unwrap();
    assert_eq!(opened.event, Some(KeyUpdateEvent::NewKeysReceived));
    s.on_packet_acked(p0, 1);

    // Second update by the server, as soon as allowed.
    s.initiate_update().unwrap();
    assert_eq!((s.generation(), s.key_phase()), (2, false));
    assert!(!c.has_next_keys());
    let opened = receive(&mut c, p0, build(&mut s, p0, 3), Some(1)).unwrap();
    assert_eq!(opened.event, Some(KeyUpdateEvent::PeerInitiated));
    assert_eq!((c.generation(), c.key_phase()), (2, false));
    // §6.5: 2 < 3 (the first generation-2 packet): previous keys.
    receive(&mut c, p0, delayed_gen1, Some(3)).unwrap();
    // 4 > 3 with the old phase: tried with the (now derived) generation-3 keys only, rejected, no update.
    assert_eq!(
        receive(&mut c, p0, late_gen1, Some(3)),
        Err(CryptoError::AuthenticationFailed)
    );
    assert_eq!(c.generation(), 2);
    assert!(c.has_next_keys());
    // Both sides agree on generation 2 in both directions.
    assert_eq!(
        receive(&mut s, p0, build(&mut c, p0, 2), Some(1)).unwrap().event,
        Some(KeyUpdateEvent::NewKeysReceived)
    );
    receive(&mut c, p0, build(&mut s, p0, 5), Some(3)).unwrap();
}
