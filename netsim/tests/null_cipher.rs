//! The null cipher (`scenario.crypto = "null"`) through mpquic's own TLS session and key-update code: a
//! real TLS 1.3 handshake with the simulator's configurations, then Handshake and 1-RTT packets that travel
//! in the clear, open at the peer, are rejected when a byte is flipped, and survive key updates in both
//! directions. The same steps with `aes128gcm` show the payload encrypted, so the option takes effect.
//! (That whole runs give identical results with either cipher is `equivalence.rs`.)

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use mpquic::cc::PathId;
use mpquic::proto::connection::TransportConfig;
use mpquic::proto::crypto::{
    AeadLimits, CipherSuite, CryptoError, KeyChange, KeyUpdateEvent, Keys, OneRttKeys, TlsSession,
};
use mpquic::proto::packet_number;
use mpquic_netsim::engine::tls::{Material, SERVER_NAME};
use mpquic_netsim::scenario::Crypto;

const PAYLOAD: &[u8] = b"a short-header payload, long enough for the header-protection sample";

struct Peer {
    tls: TlsSession,
    handshake: Option<Keys>,
    one_rtt: Option<Box<OneRttKeys>>,
    /// The length of every handshake flight this peer wrote.
    flights: Vec<usize>,
}

/// Moves every handshake byte `from` has to `to`, keeping the keys `from` gets.
fn pump(from: &mut Peer, to: &mut Peer) -> bool {
    let mut moved = false;
    loop {
        let mut buf = Vec::new();
        let change = from.tls.write_handshake(&mut buf);
        if !buf.is_empty() {
            moved = true;
            from.flights.push(buf.len());
            to.tls.read_handshake(&buf).unwrap();
        }
        match change {
            None => return moved,
            Some(KeyChange::Handshake(keys)) => from.handshake = Some(keys),
            Some(KeyChange::OneRtt(keys)) => from.one_rtt = Some(keys),
        }
        moved = true;
    }
}

/// A completed handshake between a client and a server configured as the simulator configures them.
fn handshake(crypto: Crypto) -> (Peer, Peer) {
    let material = Material::new(crypto).unwrap();
    let (client, server) = material.configs(&TransportConfig::default()).unwrap();
    let new = |tls| Peer {
        tls,
        handshake: None,
        one_rtt: None,
        flights: Vec::new(),
    };
    let mut c = new(TlsSession::client(client.tls, SERVER_NAME, b"client tp".to_vec()).unwrap());
    let mut s = new(TlsSession::server(server.tls.clone(), b"server tp".to_vec()).unwrap());
    for _ in 0..16 {
        let a = pump(&mut c, &mut s);
        let b = pump(&mut s, &mut c);
        if !a && !b {
            break;
        }
    }
    assert!(!c.tls.is_handshaking() && !s.tls.is_handshaking());
    assert_eq!(c.tls.cipher_suite(), Some(CipherSuite::Aes128Gcm));
    (c, s)
}

/// A protected short-header packet (4-byte packet number, the sender's Key Phase).
fn build(from: &mut OneRttKeys, path: PathId, pn: u64) -> Vec<u8> {
    let first = 0x40 | (u8::from(from.key_phase()) << 2) | 0x03;
    let mut packet = vec![first];
    packet.extend_from_slice(&packet_number::truncate(pn, 4).to_be_bytes());
    packet.extend_from_slice(PAYLOAD);
    packet.resize(packet.len() + 16, 0);
    from.seal(path, pn, &mut packet, 5).unwrap();
    from.local_header().apply(&mut packet, 1).unwrap();
    packet
}

/// Removes header protection and opens: the key-update event, if any.
fn receive(
    to: &mut OneRttKeys,
    path: PathId,
    mut packet: Vec<u8>,
    largest: Option<u64>,
) -> Result<Option<KeyUpdateEvent>, CryptoError> {
    let field = to.remote_header().remove(&mut packet, 1)?;
    let key_phase = packet[0] & 0x04 != 0;
    let pn = packet_number::decode(field.truncated, field.len, largest);
    let opened = to.open(path, pn, key_phase, &mut packet, 1 + field.len)?;
    assert_eq!(&packet[5..5 + opened.len], PAYLOAD);
    Ok(opened.event)
}

#[test]
fn null_packets_are_clear_open_at_the_peer_and_reject_a_flipped_byte() {
    let (mut c, mut s) = handshake(Crypto::Null);
    // Handshake level: sealed in the clear, opened by the peer.
    let (ch, sh) = (c.handshake.as_ref().unwrap(), s.handshake.as_ref().unwrap());
    let mut packet = b"\xe0header-and-pn".to_vec();
    let header_len = packet.len();
    packet.extend_from_slice(PAYLOAD);
    packet.resize(packet.len() + 16, 0);
    ch.local
        .packet
        .seal(PathId(0), 7, &mut packet, header_len)
        .unwrap();
    assert_eq!(&packet[header_len..header_len + PAYLOAD.len()], PAYLOAD);
    let mut copy = packet.clone();
    assert_eq!(
        sh.remote.packet.open(PathId(0), 7, &mut copy, header_len),
        Ok(PAYLOAD.len())
    );

    // 1-RTT: the payload stays readable on the wire, and the header in the clear (null mask).
    let (cr, sr) = (c.one_rtt.as_mut().unwrap(), s.one_rtt.as_mut().unwrap());
    assert_eq!(cr.limits(), AeadLimits::AES_GCM);
    let packet = build(cr, PathId(0), 1);
    assert_eq!(&packet[5..5 + PAYLOAD.len()], PAYLOAD);
    assert_eq!(&packet[1..5], &[0, 0, 0, 1]);
    assert_eq!(receive(sr, PathId(0), packet.clone(), None), Ok(None));

    // A flipped byte anywhere after the packet number (payload or tag) is rejected, every time.
    for i in [5, 20, packet.len() - 16, packet.len() - 1] {
        let mut bad = packet.clone();
        bad[i] ^= 0x10;
        assert_eq!(
            receive(sr, PathId(0), bad, Some(1)),
            Err(CryptoError::AuthenticationFailed),
            "byte {i}"
        );
    }
    // A flipped packet-number bit makes it another packet number: rejected too.
    let mut bad = packet;
    bad[4] ^= 0x02;
    assert_eq!(
        receive(sr, PathId(0), bad, Some(1)),
        Err(CryptoError::AuthenticationFailed)
    );
}

#[test]
fn null_keys_update_in_both_directions() {
    let (mut c, mut s) = handshake(Crypto::Null);
    let (cr, sr) = (c.one_rtt.as_mut().unwrap(), s.one_rtt.as_mut().unwrap());
    cr.set_handshake_confirmed();
    sr.set_handshake_confirmed();
    let p = PathId(0);
    assert_eq!(receive(sr, p, build(cr, p, 0), None), Ok(None));
    let old = build(cr, p, 1);

    // The client updates: generation 1, answered by the server.
    cr.initiate_update().unwrap();
    assert_eq!(cr.generation(), 1);
    assert_eq!(
        receive(sr, p, build(cr, p, 2), Some(0)),
        Ok(Some(KeyUpdateEvent::PeerInitiated))
    );
    assert_eq!(sr.generation(), 1);
    assert_eq!(
        receive(cr, p, build(sr, p, 0), None),
        Ok(Some(KeyUpdateEvent::NewKeysReceived))
    );
    cr.on_packet_acked(p, 2);
    sr.on_packet_acked(p, 0);

    // Generation 0's packet opens with the previous keys, then not once they are discarded: the
    // generations' keys differ (their IVs are part of the tag).
    assert_eq!(receive(sr, p, old.clone(), Some(2)), Ok(None));
    sr.discard_previous_keys();
    assert_eq!(
        receive(sr, p, old, Some(2)),
        Err(CryptoError::AuthenticationFailed)
    );

    // Then the server updates: generation 2 (the same Key Phase bit as generation 0).
    sr.initiate_update().unwrap();
    assert_eq!(sr.generation(), 2);
    assert_eq!(
        receive(cr, p, build(sr, p, 1), Some(0)),
        Ok(Some(KeyUpdateEvent::PeerInitiated))
    );
    assert_eq!(cr.generation(), 2);
    assert_eq!(
        receive(sr, p, build(cr, p, 3), Some(2)),
        Ok(Some(KeyUpdateEvent::NewKeysReceived))
    );
}

/// Every handshake message has the same length with either cipher (the null provider offers the same
/// suites in the same order), so no packet's contents shift: a ClientHello offering fewer suites is shorter,
/// and a retransmitted one sharing a datagram with a 1-RTT packet leaves that packet more room.
#[test]
fn handshake_flights_have_the_same_lengths_with_either_cipher() {
    let (rc, rs) = handshake(Crypto::Aes128gcm);
    let (nc, ns) = handshake(Crypto::Null);
    assert!(
        rc.flights.len() >= 2 && rs.flights.len() >= 2,
        "{:?} {:?}",
        rc.flights,
        rs.flights
    );
    assert_eq!(nc.flights, rc.flights);
    assert_eq!(ns.flights, rs.flights);
}

#[test]
fn real_cipher_encrypts_the_same_packet() {
    let (mut c, _) = handshake(Crypto::Aes128gcm);
    let packet = build(c.one_rtt.as_mut().unwrap(), PathId(0), 1);
    assert_ne!(&packet[5..5 + PAYLOAD.len()], PAYLOAD);
}
