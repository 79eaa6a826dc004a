//! Connection migration against quinn 0.11 over loopback (RFC 9000 §9): a quinn client that rebinds its
//! socket mid-transfer (NAT rebinding as seen by an mpquic server), an mpquic client that rebinds its socket
//! mid-transfer against a quinn server (active migration with a fresh connection ID), and an mpquic client that
//! moves to a quinn server's preferred address (RFC 9000 §9.6). Every transfer is checked with SHA-256.
//!
//! The preferred-address test needs a second loopback address (127.0.0.2), which Linux routes to `lo`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::net::{SocketAddr, SocketAddrV4};
use std::sync::Arc;
use std::time::Duration;

use common::{certs, init_tracing, loopback, pattern, rustls_client, rustls_server, sha256};
use mpquic::runtime::{self as mp, TransportConfig};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

const TIMEOUT: Duration = Duration::from_secs(60);
const SIZE: usize = 6 * 1024 * 1024;

async fn bounded<F: std::future::Future<Output = ()>>(f: F) {
    init_tracing();
    tokio::time::timeout(TIMEOUT, f).await.expect("test timed out");
}

/// Server side: reads the whole stream and answers with its SHA-256.
async fn hash_stream<S: AsyncWrite + Unpin, R: AsyncRead + Unpin>(mut send: S, mut recv: R) -> usize {
    let mut data = Vec::new();
    recv.read_to_end(&mut data).await.unwrap();
    send.write_all(&sha256(&data)).await.unwrap();
    send.shutdown().await.unwrap();
    data.len()
}

/// Client side: writes `data`, calling `midway` once a third is written, and checks the server's hash.
async fn upload<S: AsyncWrite + Unpin, R: AsyncRead + Unpin>(
    mut send: S,
    mut recv: R,
    data: &[u8],
    midway: impl FnOnce(),
) {
    let third = data.len() / 3;
    send.write_all(&data[..third]).await.unwrap();
    send.flush().await.unwrap();
    // Let the first third get under way before the address changes.
    tokio::time::sleep(Duration::from_millis(50)).await;
    midway();
    send.write_all(&data[third..]).await.unwrap();
    send.shutdown().await.unwrap();
    let mut digest = Vec::new();
    recv.read_to_end(&mut digest).await.unwrap();
    assert_eq!(digest, sha256(data), "SHA-256 of the uploaded stream");
}

fn mp_server_with(c: &common::Certs, transport: TransportConfig, bind: SocketAddr) -> mp::Endpoint {
    mp::Endpoint::server(
        mp::ServerConfig {
            tls: rustls_server(c),
            transport,
        },
        bind,
    )
    .unwrap()
}

fn mp_client(c: &common::Certs) -> mp::Endpoint {
    let ep = mp::Endpoint::client(loopback()).unwrap();
    ep.set_default_client_config(mp::ClientConfig {
        tls: rustls_client(c),
        transport: TransportConfig::default(),
    });
    ep
}

fn quinn_client(c: &common::Certs) -> quinn::Endpoint {
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(rustls_client(c)).unwrap();
    let mut ep = quinn::Endpoint::client(loopback()).unwrap();
    ep.set_default_client_config(quinn::ClientConfig::new(Arc::new(crypto)));
    ep
}

fn quinn_server_config(c: &common::Certs) -> quinn::ServerConfig {
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(rustls_server(c)).unwrap();
    quinn::ServerConfig::with_crypto(Arc::new(crypto))
}

/// quinn's client moves to a new UDP port mid-transfer; the mpquic server follows it (validating the new
/// address) and the data arrives intact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quinn_client_rebinds_mid_transfer_mpquic_server_follows() {
    bounded(async {
        let c = certs();
        let server = mp_server_with(&c, TransportConfig::default(), loopback());
        let addr = server.local_addr();
        let srv = tokio::spawn(async move {
            let conn = server.accept().await.unwrap().await.unwrap();
            let (s, r) = conn.accept_bi().await.unwrap();
            let n = hash_stream(s, r).await;
            let remote = conn.remote_address();
            let validated = conn.path_stats(mp::PathId(0)).unwrap().validated;
            conn.closed().await;
            (n, remote, validated)
        });
        let client = quinn_client(&c);
        let conn = client.connect(addr, "localhost").unwrap().await.unwrap();
        let before = client.local_addr().unwrap();
        let (s, r) = conn.open_bi().await.unwrap();
        let data = pattern(SIZE, 7);
        upload(s, r, &data, || {
            client
                .rebind(std::net::UdpSocket::bind(loopback()).unwrap())
                .unwrap();
        })
        .await;
        let after = client.local_addr().unwrap();
        assert_ne!(before, after);
        conn.close(0u32.into(), b"done");
        let (n, remote, validated) = srv.await.unwrap();
        assert_eq!(n, SIZE);
        assert_eq!(remote, after, "the mpquic server did not follow the rebinding");
        assert!(validated, "the new client address was not validated");
        client.wait_idle().await;
    })
    .await;
}

/// The mpquic client moves to a new UDP port mid-transfer (active migration with a fresh connection ID); the
/// quinn server follows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpquic_client_rebinds_mid_transfer_quinn_server_follows() {
    bounded(async {
        let c = certs();
        let server = quinn::Endpoint::server(quinn_server_config(&c), loopback()).unwrap();
        let addr = server.local_addr().unwrap();
        let srv = tokio::spawn(async move {
            let conn = server.accept().await.unwrap().await.unwrap();
            let (s, r) = conn.accept_bi().await.unwrap();
            let n = hash_stream(s, r).await;
            let remote = conn.remote_address();
            conn.closed().await;
            server.wait_idle().await;
            (n, remote)
        });
        let client = mp_client(&c);
        let conn = client.connect(addr, "localhost").unwrap().await.unwrap();
        let before = client.local_addr();
        let (s, r) = conn.open_bi().await.unwrap();
        let data = pattern(SIZE, 8);
        upload(s, r, &data, || client.rebind(loopback()).unwrap()).await;
        let after = client.local_addr();
        assert_ne!(before, after);
        let path = conn.path_stats(mp::PathId(0)).unwrap();
        assert_eq!(path.local, Some(after), "the client did not migrate its path");
        conn.close(0u32.into(), b"done");
        let (n, remote) = srv.await.unwrap();
        assert_eq!(n, SIZE);
        assert_eq!(remote, after, "the quinn server did not follow the migration");
        client.wait_idle().await;
    })
    .await;
}

/// A quinn server offers 127.0.0.2 as its preferred address; the mpquic client validates it after the
/// handshake and moves there, and the transfer completes intact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpquic_client_moves_to_quinn_servers_preferred_address() {
    bounded(async {
        let c = certs();
        // Bound to the wildcard address so that it also receives at 127.0.0.2.
        let socket = std::net::UdpSocket::bind("0.0.0.0:0").unwrap();
        let port = socket.local_addr().unwrap().port();
        let preferred = SocketAddrV4::new([127, 0, 0, 2].into(), port);
        let mut config = quinn_server_config(&c);
        config.preferred_address_v4(Some(preferred));
        let server = quinn::Endpoint::new(
            quinn::EndpointConfig::default(),
            Some(config),
            socket,
            Arc::new(quinn::TokioRuntime),
        )
        .unwrap();
        let srv = tokio::spawn(async move {
            let conn = server.accept().await.unwrap().await.unwrap();
            let (s, r) = conn.accept_bi().await.unwrap();
            let n = hash_stream(s, r).await;
            conn.closed().await;
            server.wait_idle().await;
            n
        });
        let client = mp_client(&c);
        let original: SocketAddr = SocketAddr::from(([127, 0, 0, 1], port));
        let conn = client.connect(original, "localhost").unwrap().await.unwrap();
        let (s, r) = conn.open_bi().await.unwrap();
        let data = pattern(SIZE, 9);
        upload(s, r, &data, || {}).await;
        assert_eq!(
            conn.remote_address(),
            SocketAddr::V4(preferred),
            "the client did not move to the preferred address"
        );
        conn.close(0u32.into(), b"done");
        assert_eq!(srv.await.unwrap(), SIZE);
        client.wait_idle().await;
    })
    .await;
}
