//! Path MTU discovery against quinn 0.11 and noq over loopback, in both roles, at every stack's defaults.
//!
//! Loopback carries datagrams far above 1452 bytes, and every stack here searches up to 1452 by default
//! (mpquic's `MtuDiscoveryConfig::upper_bound`, quinn's and noq's `MtuDiscoveryConfig::upper_bound`), while
//! every side advertises a max_udp_payload_size of at least 1452 (mpquic and noq 65527, quinn 1472 or more).
//! So each side ends at exactly 1452: mpquic's `PathStats::mtu` and the peer's own statistic
//! (`path.current_mtu`). Each test then moves 4 MB one way on one stream, mpquic sending, checked byte for
//! byte by the receiver, and checks that mpquic's datagrams averaged above 1300 bytes (the runtime sent
//! datagrams of the discovered size): the peer sends only ACKs and mpquic nearly only full packets, so the
//! average is close to 1452, whereas 1200-byte datagrams cannot average above 1200.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{certs, init_tracing, loopback, pattern, rustls_client, rustls_server};
use mpquic::runtime::{self as mp, PathId, TransportConfig};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

const TIMEOUT: Duration = Duration::from_secs(60);
/// Every stack's default upper bound.
const EXPECTED_MTU: u16 = 1452;
const BYTES: usize = 4_000_000;
const SEED: u8 = 7;

fn mp_server(c: &common::Certs) -> mp::Endpoint {
    mp::Endpoint::server(
        mp::ServerConfig {
            tls: rustls_server(c),
            transport: TransportConfig::default(),
        },
        loopback(),
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

/// The server side of the one stream: `U` = the client uploads `BYTES` of the pattern, checked here byte
/// for byte, answered "ok" or "bad"; `D` = the server sends `BYTES` of the pattern.
async fn serve<S: AsyncWrite + Unpin, R: AsyncRead + Unpin>(mut send: S, mut recv: R) {
    let mut cmd = [0u8; 1];
    recv.read_exact(&mut cmd).await.unwrap();
    match &cmd {
        b"U" => {
            let mut got = Vec::new();
            recv.read_to_end(&mut got).await.unwrap();
            let ok = got == pattern(BYTES, SEED);
            send.write_all(if ok { b"ok" } else { b"bad" }).await.unwrap();
        }
        b"D" => {
            // The request ends with the client's FIN: read it before answering, so that `recv` is not
            // dropped unfinished (which sends STOP_SENDING and fails the client's `shutdown` when that
            // arrives first).
            let mut rest = Vec::new();
            recv.read_to_end(&mut rest).await.unwrap();
            assert!(rest.is_empty(), "bytes after the command");
            send.write_all(&pattern(BYTES, SEED)).await.unwrap();
        }
        other => panic!("unknown command {other:?}"),
    }
    send.shutdown().await.unwrap();
}

/// The client side: `upload` sends the pattern and expects "ok", otherwise it downloads the pattern and
/// compares it byte for byte.
async fn fetch<S: AsyncWrite + Unpin, R: AsyncRead + Unpin>(mut send: S, mut recv: R, upload: bool) {
    if upload {
        send.write_all(b"U").await.unwrap();
        send.write_all(&pattern(BYTES, SEED)).await.unwrap();
        send.shutdown().await.unwrap();
        let mut answer = Vec::new();
        recv.read_to_end(&mut answer).await.unwrap();
        assert_eq!(answer, b"ok", "the server saw different bytes");
    } else {
        send.write_all(b"D").await.unwrap();
        send.shutdown().await.unwrap();
        let mut got = Vec::new();
        recv.read_to_end(&mut got).await.unwrap();
        assert!(got == pattern(BYTES, SEED), "downloaded bytes differ");
    }
}

/// Polls `mtu` until it reports `EXPECTED_MTU` (discovery runs right after the handshake).
async fn wait_mtu(what: &str, mtu: impl Fn() -> u16) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while mtu() != EXPECTED_MTU {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: MTU {} after 10 s",
            mtu()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn mp_mtu(conn: &mp::Connection) -> u16 {
    conn.path_stats(PathId(0)).map_or(0, |s| s.mtu)
}

/// mpquic's datagrams averaged more than 1200 bytes: the runtime sent the discovered size.
fn assert_large_datagrams(conn: &mp::Connection) {
    let s = conn.path_stats(PathId(0)).unwrap();
    let avg = s.bytes_sent / s.packets_sent.max(1);
    assert!(
        avg > 1300,
        "mpquic sent {} B in {} packets: {avg} B on average",
        s.bytes_sent,
        s.packets_sent
    );
}

async fn bounded<F: std::future::Future<Output = ()>>(f: F) {
    init_tracing();
    tokio::time::timeout(TIMEOUT, f).await.expect("test timed out");
}

/// The mpquic server's half: serves one connection's request, waits for discovery, and returns the MTU it
/// reached (its address, and the task that yields that MTU).
fn spawn_mpquic_server(c: &common::Certs) -> (std::net::SocketAddr, tokio::task::JoinHandle<u16>) {
    let server = mp_server(c);
    let addr = server.local_addr();
    let srv = tokio::spawn(async move {
        let conn = server.accept().await.unwrap().await.unwrap();
        let (send, recv) = conn.accept_bi().await.unwrap();
        serve(send, recv).await;
        wait_mtu("mpquic server", || mp_mtu(&conn)).await;
        // The client closes once it has read everything: all of it was sent.
        let _ = conn.closed().await;
        assert_large_datagrams(&conn);
        let mtu = mp_mtu(&conn);
        drop(conn);
        server.wait_idle().await;
        mtu
    });
    (addr, srv)
}

/// The mpquic client's half against the server at `addr` (whose task `peer` yields the MTU it reached):
/// waits for discovery, uploads (`upload`) or downloads, checks both sides reached [`EXPECTED_MTU`].
async fn mpquic_client_run(
    c: &common::Certs,
    addr: std::net::SocketAddr,
    upload: bool,
    peer: tokio::task::JoinHandle<u16>,
) {
    let client = mp_client(c);
    let conn = client.connect(addr, "localhost").unwrap().await.unwrap();
    wait_mtu("mpquic client", || mp_mtu(&conn)).await;
    let (send, recv) = conn.open_bi().await.unwrap();
    fetch(send, recv, upload).await;
    assert_eq!(mp_mtu(&conn), EXPECTED_MTU);
    if upload {
        assert_large_datagrams(&conn);
    }
    conn.close(mp::VarInt::from_u32(0), b"done");
    assert_eq!(peer.await.unwrap(), EXPECTED_MTU);
    client.wait_idle().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpquic_client_quinn_server_both_discover_1452() {
    bounded(async {
        let c = certs();
        let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(rustls_server(&c)).unwrap();
        let server =
            quinn::Endpoint::server(quinn::ServerConfig::with_crypto(Arc::new(crypto)), loopback()).unwrap();
        let addr = server.local_addr().unwrap();
        let srv = tokio::spawn(async move {
            let conn = server.accept().await.unwrap().await.unwrap();
            let (send, recv) = conn.accept_bi().await.unwrap();
            serve(send, recv).await;
            wait_mtu("quinn server", || conn.stats().path.current_mtu).await;
            let mtu = conn.stats().path.current_mtu;
            conn.closed().await;
            mtu
        });
        mpquic_client_run(&c, addr, true, srv).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quinn_client_mpquic_server_both_discover_1452() {
    bounded(async {
        let c = certs();
        let (addr, srv) = spawn_mpquic_server(&c);
        let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(rustls_client(&c)).unwrap();
        let mut client = quinn::Endpoint::client(loopback()).unwrap();
        client.set_default_client_config(quinn::ClientConfig::new(Arc::new(crypto)));
        let conn = client.connect(addr, "localhost").unwrap().await.unwrap();
        wait_mtu("quinn client", || conn.stats().path.current_mtu).await;
        let (send, recv) = conn.open_bi().await.unwrap();
        fetch(send, recv, false).await;
        assert_eq!(conn.stats().path.current_mtu, EXPECTED_MTU);
        conn.close(quinn::VarInt::from_u32(0), b"done");
        assert_eq!(srv.await.unwrap(), EXPECTED_MTU);
        client.wait_idle().await;
    })
    .await;
}

fn noq_mtu(conn: &noq::Connection) -> u16 {
    conn.path_stats(noq::PathId::ZERO).map_or(0, |s| s.current_mtu)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpquic_client_noq_server_both_discover_1452() {
    bounded(async {
        let c = certs();
        let crypto = noq::crypto::rustls::QuicServerConfig::try_from(rustls_server(&c)).unwrap();
        let server =
            noq::Endpoint::server(noq::ServerConfig::with_crypto(Arc::new(crypto)), loopback()).unwrap();
        let addr = server.local_addr().unwrap();
        let srv = tokio::spawn(async move {
            let conn = server.accept().await.unwrap().await.unwrap();
            let (send, recv) = conn.accept_bi().await.unwrap();
            serve(send, recv).await;
            wait_mtu("noq server", || noq_mtu(&conn)).await;
            let mtu = noq_mtu(&conn);
            conn.closed().await;
            mtu
        });
        mpquic_client_run(&c, addr, true, srv).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn noq_client_mpquic_server_both_discover_1452() {
    bounded(async {
        let c = certs();
        let (addr, srv) = spawn_mpquic_server(&c);
        let crypto = noq::crypto::rustls::QuicClientConfig::try_from(rustls_client(&c)).unwrap();
        let client = noq::Endpoint::client(loopback()).unwrap();
        client.set_default_client_config(noq::ClientConfig::new(Arc::new(crypto)));
        let conn = client.connect(addr, "localhost").unwrap().await.unwrap();
        wait_mtu("noq client", || noq_mtu(&conn)).await;
        let (send, recv) = conn.open_bi().await.unwrap();
        fetch(send, recv, false).await;
        assert_eq!(noq_mtu(&conn), EXPECTED_MTU);
        conn.close(noq::VarInt::from_u32(0), b"done");
        assert_eq!(srv.await.unwrap(), EXPECTED_MTU);
        client.wait_idle().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpquic_to_mpquic_both_discover_1452() {
    bounded(async {
        let c = certs();
        let (addr, srv) = spawn_mpquic_server(&c);
        mpquic_client_run(&c, addr, false, srv).await;
    })
    .await;
}
