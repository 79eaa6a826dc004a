//! Session resumption and 0-RTT against quinn 0.11 over loopback, in both roles.
//!
//! Each test makes a first connection (a full handshake that leaves a session ticket in the client's rustls
//! configuration), then a second one that resumes the session through `Connecting::into_0rtt`: the client
//! opens a stream and sends its request before the handshake completes, the server answers with the request's
//! SHA-256 and a known response, and both sides check that 0-RTT was accepted.
//!
//! Logs: `RUST_LOG=mpquic=debug,quinn=debug cargo test -p mpquic --test interop_zero_rtt -- --nocapture`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use common::{
    ALPN, Certs, certs, init_tracing, loopback, pattern, rustls_client_with, rustls_server_with, sha256,
};
use mpquic::proto::crypto::TlsOptions;
use mpquic::runtime::{self as mp, HandshakeKind, TransportConfig, VarInt};

const TIMEOUT: Duration = Duration::from_secs(30);
const REQUEST_LEN: usize = 3_000;
const RESPONSE_LEN: usize = 20_000;

fn early_opts() -> TlsOptions {
    let mut o = TlsOptions::with_alpn(ALPN);
    o.early_data = true;
    o
}

fn request(n: u8) -> Vec<u8> {
    pattern(REQUEST_LEN, n)
}

/// What the server sends back: the request's SHA-256, then a response that depends on the request's first byte.
fn response_for(req: &[u8]) -> Vec<u8> {
    let mut out = sha256(req).to_vec();
    out.extend_from_slice(&pattern(
        RESPONSE_LEN,
        req.first().copied().unwrap_or(0).wrapping_add(100),
    ));
    out
}

// ----- mpquic client, quinn server -----

fn quinn_server(c: &Certs) -> quinn::Endpoint {
    let crypto =
        quinn::crypto::rustls::QuicServerConfig::try_from(rustls_server_with(c, &early_opts())).unwrap();
    quinn::Endpoint::server(quinn::ServerConfig::with_crypto(Arc::new(crypto)), loopback()).unwrap()
}

/// Serves `n` connections; reports, per connection, whether quinn took the request stream from 0-RTT
/// packets (`RecvStream::is_0rtt`: accepted while the handshake was in progress). quinn 0.11's server-side
/// `ZeroRttAccepted` cannot tell: it resolves to quinn-proto's `accepted_0rtt()`, which only a client sets.
fn spawn_quinn_server(ep: quinn::Endpoint, n: usize) -> tokio::task::JoinHandle<Vec<bool>> {
    tokio::spawn(async move {
        let mut accepted = Vec::new();
        for _ in 0..n {
            let connecting = ep.accept().await.unwrap().accept().unwrap();
            // Server side of quinn's into_0rtt: always succeeds (0.5-RTT); streams opened in 0-RTT are accepted now.
            let (conn, zero_rtt) = connecting.into_0rtt().unwrap();
            let (mut send, mut recv) = conn.accept_bi().await.unwrap();
            accepted.push(recv.is_0rtt());
            let req = recv.read_to_end(1 << 20).await.unwrap();
            send.write_all(&response_for(&req)).await.unwrap();
            send.finish().unwrap();
            let _ = zero_rtt.await;
            // The client closes once it has the response.
            let _ = conn.closed().await;
        }
        accepted
    })
}

async fn mp_request(conn: &mp::Connection, req: &[u8]) -> Vec<u8> {
    let (mut send, mut recv) = conn.open_bi().await.unwrap();
    send.write_all(req).await.unwrap();
    send.finish().unwrap();
    recv.read_to_end(1 << 20).await.unwrap()
}

#[tokio::test]
async fn mpquic_client_sends_0rtt_request_to_quinn_server() {
    init_tracing();
    let c = certs();
    let server = quinn_server(&c);
    let addr: SocketAddr = server.local_addr().unwrap();
    let served = spawn_quinn_server(server, 2);
    let client = mp::Endpoint::client(loopback()).unwrap();
    client.set_default_client_config(mp::ClientConfig {
        tls: rustls_client_with(&c, &early_opts()),
        transport: TransportConfig::default(),
    });
    tokio::time::timeout(TIMEOUT, async {
        // 1. A full handshake; the ticket arrives after it.
        let connecting = client.connect(addr, "localhost").unwrap();
        let connecting = match connecting.into_0rtt() {
            Ok(_) => panic!("no ticket yet: 0-RTT must not be available"),
            Err(c) => c,
        };
        let conn = connecting.await.unwrap();
        assert_eq!(conn.handshake_kind(), Some(HandshakeKind::Full));
        let req = request(1);
        assert_eq!(mp_request(&conn, &req).await, response_for(&req));
        tokio::time::sleep(Duration::from_millis(100)).await;
        conn.close(VarInt::from_u32(0), b"done");

        // 2. Resumption with the request in 0-RTT.
        let connecting = client.connect(addr, "localhost").unwrap();
        let (conn, accepted) = connecting
            .into_0rtt()
            .unwrap_or_else(|_| panic!("a ticket allowing early data is stored: 0-RTT must be available"));
        assert_eq!(conn.handshake_kind(), None, "still handshaking");
        let req = request(2);
        let resp = mp_request(&conn, &req).await;
        assert_eq!(sha256(&resp), sha256(&response_for(&req)), "response corrupted");
        assert!(accepted.await, "quinn accepted our 0-RTT");
        assert_eq!(conn.handshake_kind(), Some(HandshakeKind::ZeroRttAccepted));
        conn.close(VarInt::from_u32(0), b"done");
    })
    .await
    .expect("timed out");
    let accepted = tokio::time::timeout(TIMEOUT, served).await.unwrap().unwrap();
    assert_eq!(
        accepted,
        vec![false, true],
        "quinn got the request in 0-RTT on the second connection only"
    );
}

// ----- quinn client, mpquic server -----

fn quinn_client(c: &Certs) -> quinn::Endpoint {
    let crypto =
        quinn::crypto::rustls::QuicClientConfig::try_from(rustls_client_with(c, &early_opts())).unwrap();
    let mut ep = quinn::Endpoint::client(loopback()).unwrap();
    ep.set_default_client_config(quinn::ClientConfig::new(Arc::new(crypto)));
    ep
}

/// Serves `n` connections; reports, per connection, how the handshake went and whether the request stream
/// was accepted before the handshake completed.
fn spawn_mp_server(
    ep: mp::Endpoint,
    n: usize,
) -> tokio::task::JoinHandle<Vec<(Option<HandshakeKind>, bool)>> {
    tokio::spawn(async move {
        let mut seen = Vec::new();
        for _ in 0..n {
            let connecting = ep.accept().await.unwrap();
            let (conn, zero_rtt) = connecting.into_0rtt().unwrap();
            let (mut send, mut recv) = conn.accept_bi().await.unwrap();
            let early = conn.handshake_kind().is_none();
            let req = recv.read_to_end(1 << 20).await.unwrap();
            send.write_all(&response_for(&req)).await.unwrap();
            send.finish().unwrap();
            let accepted = zero_rtt.await;
            let kind = conn.handshake_kind();
            assert_eq!(accepted, kind == Some(HandshakeKind::ZeroRttAccepted));
            seen.push((kind, early));
            let _ = conn.closed().await;
        }
        seen
    })
}

async fn quinn_request(conn: &quinn::Connection, req: &[u8]) -> Vec<u8> {
    let (mut send, mut recv) = conn.open_bi().await.unwrap();
    send.write_all(req).await.unwrap();
    send.finish().unwrap();
    recv.read_to_end(1 << 20).await.unwrap()
}

#[tokio::test]
async fn quinn_client_sends_0rtt_request_to_mpquic_server() {
    init_tracing();
    let c = certs();
    let server = mp::Endpoint::server(
        mp::ServerConfig {
            tls: rustls_server_with(&c, &early_opts()),
            transport: TransportConfig::default(),
        },
        loopback(),
    )
    .unwrap();
    let addr = server.local_addr();
    let served = spawn_mp_server(server, 2);
    let client = quinn_client(&c);
    tokio::time::timeout(TIMEOUT, async {
        let conn = client.connect(addr, "localhost").unwrap().await.unwrap();
        let req = request(3);
        assert_eq!(quinn_request(&conn, &req).await, response_for(&req));
        tokio::time::sleep(Duration::from_millis(100)).await;
        conn.close(quinn::VarInt::from_u32(0), b"done");

        let connecting = client.connect(addr, "localhost").unwrap();
        let (conn, accepted) = connecting
            .into_0rtt()
            .unwrap_or_else(|_| panic!("quinn has a ticket from mpquic allowing 0-RTT"));
        let req = request(4);
        let resp = quinn_request(&conn, &req).await;
        assert_eq!(sha256(&resp), sha256(&response_for(&req)), "response corrupted");
        assert!(accepted.await, "mpquic accepted quinn's 0-RTT");
        conn.close(quinn::VarInt::from_u32(0), b"done");
    })
    .await
    .expect("timed out");
    let seen = tokio::time::timeout(TIMEOUT, served).await.unwrap().unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].0, Some(HandshakeKind::Full));
    assert_eq!(seen[1].0, Some(HandshakeKind::ZeroRttAccepted));
    assert!(
        seen[1].1,
        "the 0-RTT request stream was accepted before the handshake completed"
    );
}

#[tokio::test]
async fn mpquic_pair_resumes_without_early_data() {
    init_tracing();
    let c = certs();
    let opts = TlsOptions::with_alpn(ALPN);
    let server = mp::Endpoint::server(
        mp::ServerConfig {
            tls: rustls_server_with(&c, &opts),
            transport: TransportConfig::default(),
        },
        loopback(),
    )
    .unwrap();
    let addr = server.local_addr();
    let served = spawn_mp_server(server, 2);
    let client = mp::Endpoint::client(loopback()).unwrap();
    client.set_default_client_config(mp::ClientConfig {
        tls: rustls_client_with(&c, &opts),
        transport: TransportConfig::default(),
    });
    tokio::time::timeout(TIMEOUT, async {
        for (i, want) in [HandshakeKind::Full, HandshakeKind::Resumed]
            .into_iter()
            .enumerate()
        {
            let connecting = client.connect(addr, "localhost").unwrap();
            let connecting = match connecting.into_0rtt() {
                Ok(_) => panic!("early data is off: no 0-RTT"),
                Err(c) => c,
            };
            let conn = connecting.await.unwrap();
            assert_eq!(conn.handshake_kind(), Some(want));
            let req = request(10 + i as u8);
            assert_eq!(mp_request(&conn, &req).await, response_for(&req));
            tokio::time::sleep(Duration::from_millis(100)).await;
            conn.close(VarInt::from_u32(0), b"done");
        }
    })
    .await
    .expect("timed out");
    let seen = tokio::time::timeout(TIMEOUT, served).await.unwrap().unwrap();
    assert_eq!(seen[0].0, Some(HandshakeKind::Full));
    assert_eq!(seen[1].0, Some(HandshakeKind::Resumed));
}
