//! The TLS session wrapper: an in-memory handshake between a client and a server.

use super::{CLIENT_TP, Peer, SERVER_TP, peers, run_handshake};
use crate::cc::PathId;
use crate::proto::crypto::{
    AeadLimits, CipherSuite, Keys, Level, OneRttKeys, SelfSigned, TlsOptions, TlsSession, client_config,
    client_config_dangerous_skip_verification, server_config,
};
use crate::proto::error::TransportErrorCode;

fn mpq() -> TlsOptions {
    TlsOptions::with_alpn(b"mpq")
}

/// Seals a small packet with `from`'s send key and opens it with `to`'s receive key.
fn exchange_level(from: &Keys, to: &Keys) {
    let mut packet = b"\xe0header-and-pn".to_vec();
    let header_len = packet.len();
    packet.extend_from_slice(b"hello over the handshake level");
    packet.resize(packet.len() + 16, 0);
    from.local
        .packet
        .seal(PathId(0), 0, &mut packet, header_len)
        .unwrap();
    let len = to
        .remote
        .packet
        .open(PathId(0), 0, &mut packet, header_len)
        .unwrap();
    assert_eq!(
        &packet[header_len..header_len + len],
        b"hello over the handshake level"
    );
}

/// Seals a 1-RTT packet on `path` and opens it at the other side.
fn exchange_one_rtt(from: &mut OneRttKeys, to: &mut OneRttKeys, path: PathId, pn: u64) {
    let mut packet = vec![0x40, 1, 2, 3, 4];
    packet.extend_from_slice(b"one-rtt payload");
    packet.resize(packet.len() + 16, 0);
    from.seal(path, pn, &mut packet, 5).unwrap();
    let opened = to.open(path, pn, from.key_phase(), &mut packet, 5).unwrap();
    assert_eq!(&packet[5..5 + opened.len], b"one-rtt payload");
}

fn assert_complete(client: &mut Peer, server: &mut Peer) {
    assert!(!client.tls.is_handshaking());
    assert!(!server.tls.is_handshaking());
    assert_eq!(client.tls.write_level(), Level::OneRtt);
    assert_eq!(server.tls.write_level(), Level::OneRtt);
    exchange_level(
        client.handshake.as_ref().unwrap(),
        server.handshake.as_ref().unwrap(),
    );
    exchange_level(
        server.handshake.as_ref().unwrap(),
        client.handshake.as_ref().unwrap(),
    );
    let c = client.one_rtt.as_mut().unwrap();
    let s = server.one_rtt.as_mut().unwrap();
    exchange_one_rtt(c, s, PathId(0), 0);
    exchange_one_rtt(s, c, PathId(0), 0);
    exchange_one_rtt(c, s, PathId(5), 0);
}

#[test]
fn handshake_with_verification_alpn_and_transport_parameters() {
    let (mut client, mut server) = peers(&mpq(), &mpq());
    assert!(client.tls.is_client());
    assert!(!server.tls.is_client());
    assert_eq!(client.tls.write_level(), Level::Initial);
    run_handshake(&mut client, &mut server).unwrap();
    assert_complete(&mut client, &mut server);
    assert_eq!(client.tls.alpn_protocol(), Some(&b"mpq"[..]));
    assert_eq!(server.tls.alpn_protocol(), Some(&b"mpq"[..]));
    assert_eq!(client.tls.peer_transport_params(), Some(SERVER_TP));
    assert_eq!(server.tls.peer_transport_params(), Some(CLIENT_TP));
    assert_eq!(server.tls.server_name(), Some("localhost"));
    assert_eq!(client.tls.peer_certificates().map(|c| c.len()), Some(1));
    assert_eq!(client.tls.cipher_suite(), Some(CipherSuite::Aes128Gcm));
    assert_eq!(client.one_rtt.as_ref().unwrap().limits(), AeadLimits::AES_GCM);
    assert!(format!("{:?}", client.tls).contains("OneRtt"));
}

#[test]
fn chacha20_only_handshake() {
    let opts = TlsOptions {
        cipher_suites: vec![CipherSuite::ChaCha20Poly1305],
        ..mpq()
    };
    let (mut client, mut server) = peers(&opts, &opts);
    run_handshake(&mut client, &mut server).unwrap();
    assert_complete(&mut client, &mut server);
    assert_eq!(client.tls.cipher_suite(), Some(CipherSuite::ChaCha20Poly1305));
    assert_eq!(server.tls.cipher_suite(), Some(CipherSuite::ChaCha20Poly1305));
    assert_eq!(
        server.one_rtt.as_ref().unwrap().limits(),
        AeadLimits::CHACHA20_POLY1305
    );
}

#[test]
fn aes256_only_handshake() {
    let opts = TlsOptions {
        cipher_suites: vec![CipherSuite::Aes256Gcm],
        ..mpq()
    };
    let (mut client, mut server) = peers(&opts, &opts);
    run_handshake(&mut client, &mut server).unwrap();
    assert_complete(&mut client, &mut server);
    assert_eq!(client.tls.cipher_suite(), Some(CipherSuite::Aes256Gcm));
}

#[test]
fn disjoint_cipher_suites_fail_with_a_crypto_error() {
    let client_opts = TlsOptions {
        cipher_suites: vec![CipherSuite::ChaCha20Poly1305],
        ..mpq()
    };
    let server_opts = TlsOptions {
        cipher_suites: vec![CipherSuite::Aes128Gcm],
        ..mpq()
    };
    let (mut client, mut server) = peers(&client_opts, &server_opts);
    let err = run_handshake(&mut client, &mut server).unwrap_err();
    // handshake_failure (40).
    assert_eq!(err.error.code, TransportErrorCode::crypto(40));
}

#[test]
fn rfc9001_8_1_no_common_alpn_closes_with_no_application_protocol() {
    let (mut client, mut server) = peers(&TlsOptions::with_alpn(b"a"), &TlsOptions::with_alpn(b"b"));
    let err = run_handshake(&mut client, &mut server).unwrap_err();
    // RFC 9001 §8.1: "no_application_protocol TLS alert (QUIC error code 0x0178)".
    assert_eq!(err.error.code, TransportErrorCode(0x178));
}

#[test]
fn untrusted_certificate_is_rejected() {
    let presented = SelfSigned::generate(&["localhost"]).unwrap();
    let trusted = SelfSigned::generate(&["localhost"]).unwrap();
    let client_cfg = client_config(trusted.root_store().unwrap(), &mpq()).unwrap();
    let server_cfg = server_config(vec![presented.cert.clone()], presented.key.clone_key(), &mpq()).unwrap();
    let mut client = Peer::new(TlsSession::client(client_cfg, "localhost", Vec::new()).unwrap());
    let mut server = Peer::new(TlsSession::server(server_cfg, Vec::new()).unwrap());
    let err = run_handshake(&mut client, &mut server).unwrap_err();
    assert!((0x100..=0x1ff).contains(&err.error.code.0), "{err}");
    assert!(client.one_rtt.is_none());
}

#[test]
fn wrong_server_name_is_rejected() {
    let cert = SelfSigned::generate(&["localhost"]).unwrap();
    let client_cfg = client_config(cert.root_store().unwrap(), &mpq()).unwrap();
    let server_cfg = server_config(vec![cert.cert.clone()], cert.key.clone_key(), &mpq()).unwrap();
    let mut client = Peer::new(TlsSession::client(client_cfg, "example.com", Vec::new()).unwrap());
    let mut server = Peer::new(TlsSession::server(server_cfg, Vec::new()).unwrap());
    assert!(run_handshake(&mut client, &mut server).is_err());
}

#[test]
fn dangerous_skip_verification_accepts_an_unknown_certificate() {
    let cert = SelfSigned::generate(&["server.test"]).unwrap();
    let client_cfg = client_config_dangerous_skip_verification(&mpq()).unwrap();
    let server_cfg = server_config(vec![cert.cert.clone()], cert.key.clone_key(), &mpq()).unwrap();
    let mut client = Peer::new(TlsSession::client(client_cfg, "anything.example", Vec::new()).unwrap());
    let mut server = Peer::new(TlsSession::server(server_cfg, Vec::new()).unwrap());
    run_handshake(&mut client, &mut server).unwrap();
    assert_complete(&mut client, &mut server);
}

#[test]
fn invalid_server_name_is_an_error() {
    let cfg = client_config_dangerous_skip_verification(&mpq()).unwrap();
    assert!(TlsSession::client(cfg, "not a name!", Vec::new()).is_err());
}

#[test]
fn garbage_handshake_bytes_are_an_error() {
    // An oversized handshake message: rustls raises no alert, so the session reports PROTOCOL_VIOLATION.
    let (_, mut server) = peers(&mpq(), &mpq());
    let err = server
        .tls
        .read_handshake(&[0x01, 0xff, 0xff, 0xff, 0x01, 0x02])
        .unwrap_err();
    assert_eq!(err.error.code, TransportErrorCode::PROTOCOL_VIOLATION, "{err}");
    // A malformed ClientHello draws a TLS alert: CRYPTO_ERROR.
    let (_, mut server) = peers(&mpq(), &mpq());
    let err = server
        .tls
        .read_handshake(&[0x01, 0x00, 0x00, 0x04, 0x03, 0x03, 0x00, 0x00])
        .unwrap_err();
    assert!((0x100..=0x1ff).contains(&err.error.code.0), "{err}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    #[test]
    fn arbitrary_handshake_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)) {
        let (mut client, mut server) = peers(&mpq(), &mpq());
        let _ = server.tls.read_handshake(&bytes);
        let mut buf = Vec::new();
        let _ = server.tls.write_handshake(&mut buf);
        // The client, after sending its ClientHello, gets garbage in place of the server's flight.
        let _ = client.tls.write_handshake(&mut buf);
        let _ = client.tls.read_handshake(&bytes);
    }
}
