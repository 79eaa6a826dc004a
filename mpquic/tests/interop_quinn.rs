//! Interoperability over loopback: mpquic's runtime against quinn 0.11 in both roles, and against itself.
//!
//! Each scenario: handshake (ALPN "mpquic-test", a self-signed certificate trusted explicitly), a 10 MB
//! echo on one bidirectional stream checked with SHA-256, three parallel streams of 2, 3 and 5 MB hashed by
//! the server, 1000 small echo streams, a datagram each way, and an application close whose code and reason
//! the server must see. Every test is bounded by a timeout. Two more tests send 2 MB through a UDP relay that
//! drops 2 % and 10 % of the datagrams in both directions, and check the data arrives intact.
//!
//! Logs: `RUST_LOG=mpquic=debug,quinn=debug cargo test -p mpquic --test interop_quinn -- --nocapture`.

// Test code: helpers outside `#[test]` functions fail loudly too.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use mpquic::proto::crypto::{CipherSuite, TlsOptions, client_config, server_config};
use mpquic::runtime::{self as mp, TransportConfig, VarInt};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

const ALPN: &[u8] = b"mpquic-test";
const TIMEOUT: Duration = Duration::from_secs(60);
const CLOSE_CODE: u32 = 42;
const CLOSE_REASON: &[u8] = b"bye";

fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
}

struct Certs {
    cert: CertificateDer<'static>,
    key: PrivatePkcs8KeyDer<'static>,
}

fn certs() -> Certs {
    let c = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    Certs {
        cert: c.cert.der().clone(),
        key: PrivatePkcs8KeyDer::from(c.signing_key.serialize_der()),
    }
}

fn rustls_server(c: &Certs) -> Arc<rustls::ServerConfig> {
    server_config(
        vec![c.cert.clone()],
        PrivateKeyDer::Pkcs8(c.key.clone_key()),
        &TlsOptions::with_alpn(ALPN),
    )
    .unwrap()
}

fn rustls_client(c: &Certs) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(c.cert.clone()).unwrap();
    client_config(roots, &TlsOptions::with_alpn(ALPN)).unwrap()
}

fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

// ----- endpoints -----

fn mp_server(c: &Certs) -> mp::Endpoint {
    mp::Endpoint::server(
        mp::ServerConfig {
            tls: rustls_server(c),
            transport: TransportConfig::default(),
        },
        loopback(),
    )
    .unwrap()
}

fn mp_client(c: &Certs) -> mp::Endpoint {
    let ep = mp::Endpoint::client(loopback()).unwrap();
    ep.set_default_client_config(mp::ClientConfig {
        tls: rustls_client(c),
        transport: TransportConfig::default(),
    });
    ep
}

fn quinn_server(c: &Certs) -> quinn::Endpoint {
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(rustls_server(c)).unwrap();
    quinn::Endpoint::server(quinn::ServerConfig::with_crypto(Arc::new(crypto)), loopback()).unwrap()
}

fn quinn_client(c: &Certs) -> quinn::Endpoint {
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(rustls_client(c)).unwrap();
    let mut ep = quinn::Endpoint::client(loopback()).unwrap();
    ep.set_default_client_config(quinn::ClientConfig::new(Arc::new(crypto)));
    ep
}

// ----- one connection interface over both implementations -----

trait TestConn: Clone + Send + Sync + 'static {
    type S: AsyncWrite + Unpin + Send + 'static;
    type R: AsyncRead + Unpin + Send + 'static;
    fn open_bi(&self) -> impl Future<Output = (Self::S, Self::R)> + Send;
    fn accept_bi(&self) -> impl Future<Output = Option<(Self::S, Self::R)>> + Send;
    fn send_dgram(&self, b: Bytes) -> Result<(), String>;
    fn read_dgram(&self) -> impl Future<Output = Option<Bytes>> + Send;
    fn close(&self, code: u32, reason: &[u8]);
    /// The close as "app <code> <reason>" for application closes, otherwise the error's debug form.
    fn closed(&self) -> impl Future<Output = String> + Send;
}

impl TestConn for mp::Connection {
    type S = mp::SendStream;
    type R = mp::RecvStream;
    async fn open_bi(&self) -> (mp::SendStream, mp::RecvStream) {
        mp::Connection::open_bi(self).await.unwrap()
    }
    async fn accept_bi(&self) -> Option<(mp::SendStream, mp::RecvStream)> {
        mp::Connection::accept_bi(self).await.ok()
    }
    fn send_dgram(&self, b: Bytes) -> Result<(), String> {
        self.send_datagram(b).map_err(|e| format!("{e:?}"))
    }
    async fn read_dgram(&self) -> Option<Bytes> {
        self.read_datagram().await.ok()
    }
    fn close(&self, code: u32, reason: &[u8]) {
        mp::Connection::close(self, VarInt::from_u32(code), reason);
    }
    async fn closed(&self) -> String {
        match mp::Connection::closed(self).await {
            mp::ConnectionError::ApplicationClosed { code, reason } => {
                format!("app {} {}", code.into_inner(), String::from_utf8_lossy(&reason))
            }
            e => format!("{e:?}"),
        }
    }
}

impl TestConn for quinn::Connection {
    type S = quinn::SendStream;
    type R = quinn::RecvStream;
    async fn open_bi(&self) -> (quinn::SendStream, quinn::RecvStream) {
        quinn::Connection::open_bi(self).await.unwrap()
    }
    async fn accept_bi(&self) -> Option<(quinn::SendStream, quinn::RecvStream)> {
        quinn::Connection::accept_bi(self).await.ok()
    }
    fn send_dgram(&self, b: Bytes) -> Result<(), String> {
        self.send_datagram(b).map_err(|e| format!("{e:?}"))
    }
    async fn read_dgram(&self) -> Option<Bytes> {
        self.read_datagram().await.ok()
    }
    fn close(&self, code: u32, reason: &[u8]) {
        quinn::Connection::close(self, quinn::VarInt::from_u32(code), reason);
    }
    async fn closed(&self) -> String {
        match quinn::Connection::closed(self).await {
            quinn::ConnectionError::ApplicationClosed(a) => {
                format!(
                    "app {} {}",
                    a.error_code.into_inner(),
                    String::from_utf8_lossy(&a.reason)
                )
            }
            e => format!("{e:?}"),
        }
    }
}

// ----- the scenario -----

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// Server side of one stream: first byte `E` = echo everything, `H` = reply with the SHA-256 of the rest.
async fn serve_stream<S: AsyncWrite + Unpin, R: AsyncRead + Unpin>(mut send: S, mut recv: R) {
    let mut cmd = [0u8; 1];
    if recv.read_exact(&mut cmd).await.is_err() {
        return;
    }
    match cmd[0] {
        b'E' => {
            tokio::io::copy(&mut recv, &mut send).await.unwrap();
        }
        b'H' => {
            let mut h = Sha256::new();
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = recv.read(&mut buf).await.unwrap();
                if n == 0 {
                    break;
                }
                h.update(&buf[..n]);
            }
            send.write_all(&h.finalize()).await.unwrap();
        }
        other => panic!("unknown command {other}"),
    }
    send.shutdown().await.unwrap();
}

/// Serves one connection until it closes; returns how it closed.
async fn serve<C: TestConn>(conn: C) -> String {
    let c = conn.clone();
    let datagrams = tokio::spawn(async move {
        while let Some(d) = c.read_dgram().await {
            // The client may close right after reading its echo.
            let _ = c.send_dgram(d);
        }
    });
    let c = conn.clone();
    let streams = tokio::spawn(async move {
        while let Some((s, r)) = c.accept_bi().await {
            tokio::spawn(serve_stream(s, r));
        }
    });
    let reason = conn.closed().await;
    datagrams.abort();
    streams.abort();
    reason
}

/// A server endpoint that can accept one connection and run [`serve`] on it.
trait ServeOne: Send + 'static {
    /// Accepts one connection and serves it; returns how it ended.
    fn serve_one(self) -> impl Future<Output = String> + Send;
}

impl ServeOne for mp::Endpoint {
    async fn serve_one(self) -> String {
        serve(self.accept().await.unwrap().await.unwrap()).await
    }
}

impl ServeOne for quinn::Endpoint {
    async fn serve_one(self) -> String {
        serve(self.accept().await.unwrap().await.unwrap()).await
    }
}

/// Spawns a task that accepts one connection on `server` and serves it.
fn serve_one<E: ServeOne>(server: E) -> tokio::task::JoinHandle<String> {
    tokio::spawn(server.serve_one())
}

/// Like [`serve_one`] for an mpquic server, then waits for the endpoint to become idle.
fn serve_one_then_idle(server: mp::Endpoint) -> tokio::task::JoinHandle<String> {
    tokio::spawn(async move {
        let reason = serve(server.accept().await.unwrap().await.unwrap()).await;
        server.wait_idle().await;
        reason
    })
}

async fn echo<C: TestConn>(conn: &C, data: &[u8]) -> Vec<u8> {
    let (mut s, mut r) = conn.open_bi().await;
    let write = async {
        s.write_all(b"E").await.unwrap();
        s.write_all(data).await.unwrap();
        s.shutdown().await.unwrap();
    };
    let read = async {
        let mut v = Vec::with_capacity(data.len());
        r.read_to_end(&mut v).await.unwrap();
        v
    };
    tokio::join!(write, read).1
}

async fn hashed<C: TestConn>(conn: C, data: Vec<u8>) {
    let (mut s, mut r) = conn.open_bi().await;
    s.write_all(b"H").await.unwrap();
    s.write_all(&data).await.unwrap();
    s.shutdown().await.unwrap();
    let mut digest = Vec::new();
    r.read_to_end(&mut digest).await.unwrap();
    assert_eq!(digest, sha256(&data), "SHA-256 of a {} byte stream", data.len());
}

/// The client side of the scenario.
async fn client_scenario<C: TestConn>(conn: C) {
    // 10 MB echoed on one bidirectional stream.
    let big = pattern(10 * 1024 * 1024, 7);
    let echoed = echo(&conn, &big).await;
    assert_eq!(echoed.len(), big.len());
    assert_eq!(sha256(&echoed), sha256(&big), "10 MB echo");
    tracing::info!("10 MB echo ok");

    // 2 + 3 + 5 MB on three parallel streams.
    let mut set = tokio::task::JoinSet::new();
    for (mb, seed) in [(2, 1u8), (3, 2), (5, 3)] {
        set.spawn(hashed(conn.clone(), pattern(mb * 1024 * 1024, seed)));
    }
    while let Some(r) = set.join_next().await {
        r.unwrap();
    }
    tracing::info!("parallel streams ok");

    // 1000 small streams (more than the peer's concurrency limit: MAX_STREAMS must keep them flowing).
    let mut set = tokio::task::JoinSet::new();
    for i in 0..1000u32 {
        let conn = conn.clone();
        set.spawn(async move {
            let msg = format!("small stream {i}").into_bytes();
            assert_eq!(echo(&conn, &msg).await, msg);
        });
    }
    while let Some(r) = set.join_next().await {
        r.unwrap();
    }
    tracing::info!("1000 small streams ok");

    // A datagram each way (the server echoes it); retried in case one is lost.
    let mut got = None;
    for _ in 0..10 {
        conn.send_dgram(Bytes::from_static(b"ping")).unwrap();
        if let Ok(d) = tokio::time::timeout(Duration::from_millis(500), conn.read_dgram()).await {
            got = d;
            break;
        }
    }
    assert_eq!(got.as_deref(), Some(&b"ping"[..]), "datagram echo");
    tracing::info!("datagram ok");

    conn.close(CLOSE_CODE, CLOSE_REASON);
}

fn expected_close() -> String {
    format!("app {CLOSE_CODE} {}", String::from_utf8_lossy(CLOSE_REASON))
}

async fn bounded<F: Future<Output = ()>>(f: F) {
    init_tracing();
    tokio::time::timeout(TIMEOUT, f).await.expect("test timed out");
}

// ----- tests -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpquic_client_quinn_server() {
    bounded(async {
        let c = certs();
        let server = quinn_server(&c);
        let addr = server.local_addr().unwrap();
        let srv = tokio::spawn(async move {
            let conn = server.accept().await.unwrap().await.unwrap();
            assert_eq!(
                conn.handshake_data()
                    .and_then(|h| h.downcast::<quinn::crypto::rustls::HandshakeData>().ok())
                    .and_then(|h| h.protocol),
                Some(ALPN.to_vec())
            );
            let reason = serve(conn).await;
            server.wait_idle().await;
            reason
        });
        let client = mp_client(&c);
        let conn = client.connect(addr, "localhost").unwrap().await.unwrap();
        assert_eq!(conn.remote_address(), addr);
        client_scenario(conn.clone()).await;
        assert_eq!(srv.await.unwrap(), expected_close());
        tracing::info!(stats = ?conn.stats(), rtt = ?conn.rtt(), "mpquic client vs quinn server");
        assert!(conn.stats().packets_sent > 0);
        client.wait_idle().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quinn_client_mpquic_server() {
    bounded(async {
        let c = certs();
        let server = mp_server(&c);
        let addr = server.local_addr();
        let srv = serve_one_then_idle(server);
        let client = quinn_client(&c);
        let conn = client.connect(addr, "localhost").unwrap().await.unwrap();
        client_scenario(conn).await;
        assert_eq!(srv.await.unwrap(), expected_close());
        client.wait_idle().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpquic_to_mpquic() {
    bounded(async {
        let c = certs();
        let server = mp_server(&c);
        let addr = server.local_addr();
        let srv = serve_one_then_idle(server);
        let client = mp_client(&c);
        let conn = client.connect(addr, "localhost").unwrap().await.unwrap();
        client_scenario(conn.clone()).await;
        assert_eq!(srv.await.unwrap(), expected_close());
        assert_eq!(conn.closed().await, mp::ConnectionError::LocallyClosed);
        tracing::info!(stats = ?conn.stats(), "mpquic client vs mpquic server");
        client.wait_idle().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_to_nothing_fails_on_close() {
    bounded(async {
        let c = certs();
        let client = mp_client(&c);
        // A port with nobody behind it: the handshake never completes; closing the endpoint ends it.
        let dead = std::net::UdpSocket::bind(loopback()).unwrap();
        let addr = dead.local_addr().unwrap();
        drop(dead);
        let connecting = client.connect(addr, "localhost").unwrap();
        let c2 = client.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            c2.close(VarInt::from_u32(0), b"");
        });
        assert!(connecting.await.is_err());
        tokio::time::timeout(Duration::from_secs(10), client.wait_idle())
            .await
            .expect("endpoint idle after close");
    })
    .await;
}

/// An mpquic pair: (client endpoint, client connection, server endpoint, server connection).
async fn mp_pair() -> (mp::Endpoint, mp::Connection, mp::Endpoint, mp::Connection) {
    let c = certs();
    let server = mp_server(&c);
    let addr = server.local_addr();
    let client = mp_client(&c);
    let connecting = client.connect(addr, "localhost").unwrap();
    let (client_conn, incoming) = tokio::join!(connecting, server.accept());
    let server_conn = incoming.unwrap().await.unwrap();
    (client, client_conn.unwrap(), server, server_conn)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpquic_uni_stream_reset_and_stop() {
    bounded(async {
        let (client, cc, server, sc) = mp_pair().await;

        // A unidirectional stream, read to its end.
        let mut s = cc.open_uni().await.unwrap();
        s.write_all(b"one way").await.unwrap();
        s.finish().unwrap();
        let mut r = sc.accept_uni().await.unwrap();
        assert_eq!(r.read_to_end(100).await.unwrap(), b"one way");

        // A reset is seen by the reader with its code.
        let (mut s, _r) = cc.open_bi().await.unwrap();
        s.write_all(b"partial").await.unwrap();
        let (_s2, mut r2) = sc.accept_bi().await.unwrap();
        let mut first = [0u8; 7];
        r2.read_exact(&mut first).await.unwrap();
        s.reset(VarInt::from_u32(7)).unwrap();
        loop {
            match r2.read_chunk(1024).await {
                Ok(Some(_)) => continue,
                Err(mp::ReadError::Reset(code)) => {
                    assert_eq!(code, VarInt::from_u32(7));
                    break;
                }
                other => panic!("expected a reset, got {other:?}"),
            }
        }

        // STOP_SENDING is seen by the writer with its code.
        let (mut s, _r) = cc.open_bi().await.unwrap();
        s.write_all(b"x").await.unwrap();
        let (_s3, mut r3) = sc.accept_bi().await.unwrap();
        r3.stop(VarInt::from_u32(9)).unwrap();
        let chunk = vec![0u8; 64 * 1024];
        let err = loop {
            if let Err(e) = s.write_all(&chunk).await {
                break e;
            }
        };
        assert_eq!(err, mp::WriteError::Stopped(VarInt::from_u32(9)));

        // A longer stream than read_to_end allows.
        let (mut s, _r) = cc.open_bi().await.unwrap();
        s.write_all(&[1u8; 200]).await.unwrap();
        s.finish().unwrap();
        let (_s4, mut r4) = sc.accept_bi().await.unwrap();
        assert_eq!(r4.read_to_end(100).await, Err(mp::ReadError::TooLong));

        // Endpoint close: the peer sees the code and reason, both endpoints become idle.
        server.close(VarInt::from_u32(3), b"shutting down");
        assert_eq!(
            cc.closed().await,
            mp::ConnectionError::ApplicationClosed {
                code: VarInt::from_u32(3),
                reason: Bytes::from_static(b"shutting down"),
            }
        );
        assert!(server.accept().await.is_none());
        server.wait_idle().await;
        client.wait_idle().await;
        assert_eq!(server.open_connections(), 0);
        assert_eq!(client.open_connections(), 0);
    })
    .await;
}

// ----- random loss through a relay -----

/// A UDP relay on loopback between one client and `server` that drops each datagram, in either direction, with
/// probability `loss` (a seeded xorshift, so a failure can be replayed). Returns the address clients connect to.
async fn lossy_relay(server: SocketAddr, loss: f64, seed: u64) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let front = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let back = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = front.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut state = seed | 1;
        let mut lose = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % 1_000_000) as f64 / 1e6 < loss
        };
        let mut client = None;
        let (mut up, mut down) = (vec![0u8; 65_536], vec![0u8; 65_536]);
        loop {
            tokio::select! {
                r = front.recv_from(&mut up) => {
                    let Ok((n, from)) = r else { return };
                    client = Some(from);
                    if !lose() {
                        let _ = back.send_to(&up[..n], server).await;
                    }
                }
                r = back.recv_from(&mut down) => {
                    let Ok((n, _)) = r else { return };
                    if let (Some(c), false) = (client, lose()) {
                        let _ = front.send_to(&down[..n], c).await;
                    }
                }
            }
        }
    });
    (addr, task)
}

/// Under loss the peer's single CONNECTION_CLOSE may be dropped (RFC 9000 §10.2: it is not retransmitted
/// unless packets keep arriving), so the server sees either the application close or its idle timeout.
fn assert_closed_or_idle(reason: &str) {
    assert!(
        reason == expected_close() || reason.contains("TimedOut"),
        "unexpected end: {reason}"
    );
}

/// The mpquic side of the lossy tests: a short idle timeout bounds the wait when the close is lost.
fn lossy_transport() -> TransportConfig {
    TransportConfig {
        max_idle_timeout: Duration::from_secs(3),
        ..TransportConfig::default()
    }
}

/// 2 MB hashed by the server and a close, through the lossy relay.
async fn lossy_client<C: TestConn>(conn: C) {
    hashed(conn.clone(), pattern(2 * 1024 * 1024, 9)).await;
    conn.close(CLOSE_CODE, CLOSE_REASON);
}

async fn lossy_mpquic_client_quinn_server(loss: f64) {
    let c = certs();
    let server = quinn_server(&c);
    let (relay, task) = lossy_relay(server.local_addr().unwrap(), loss, 0x5eed).await;
    let srv = serve_one(server);
    let client = mp::Endpoint::client(loopback()).unwrap();
    client.set_default_client_config(mp::ClientConfig {
        tls: rustls_client(&c),
        transport: lossy_transport(),
    });
    let conn = client.connect(relay, "localhost").unwrap().await.unwrap();
    lossy_client(conn.clone()).await;
    assert_closed_or_idle(&srv.await.unwrap());
    tracing::info!(loss, stats = ?conn.stats(), "mpquic client vs quinn server through a lossy relay");
    // ~1 800 data packets went up: at 2 % some were certainly dropped and repaired.
    assert!(
        conn.stats().packets_lost > 0,
        "the relay dropped nothing: {:?}",
        conn.stats()
    );
    task.abort();
}

async fn lossy_quinn_client_mpquic_server(loss: f64) {
    let c = certs();
    let server = mp::Endpoint::server(
        mp::ServerConfig {
            tls: rustls_server(&c),
            transport: lossy_transport(),
        },
        loopback(),
    )
    .unwrap();
    let (relay, task) = lossy_relay(server.local_addr(), loss, 0xfeed).await;
    let srv = serve_one(server);
    let client = quinn_client(&c);
    let conn = client.connect(relay, "localhost").unwrap().await.unwrap();
    lossy_client(conn).await;
    assert_closed_or_idle(&srv.await.unwrap());
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_percent_loss_both_directions_data_intact() {
    bounded(async {
        lossy_mpquic_client_quinn_server(0.02).await;
        lossy_quinn_client_mpquic_server(0.02).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_percent_loss_both_directions_data_intact() {
    bounded(async {
        lossy_mpquic_client_quinn_server(0.10).await;
        lossy_quinn_client_mpquic_server(0.10).await;
    })
    .await;
}

// ----- ChaCha20 only, and key updates initiated by mpquic -----

fn chacha_only() -> TlsOptions {
    TlsOptions {
        alpn_protocols: vec![ALPN.to_vec()],
        cipher_suites: vec![CipherSuite::ChaCha20Poly1305],
        early_data: false,
    }
}

/// mpquic client offering only ChaCha20-Poly1305 (so a completed handshake proves it was chosen) and
/// initiating a key update every 1000 packets, against a quinn server: 10 MB hashed, several key updates.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chacha20_only_with_mpquic_key_updates_against_quinn_server() {
    bounded(async {
        let c = certs();
        let server = quinn_server(&c);
        let addr = server.local_addr().unwrap();
        let srv = serve_one(server);
        let mut roots = rustls::RootCertStore::empty();
        roots.add(c.cert.clone()).unwrap();
        let client = mp::Endpoint::client(loopback()).unwrap();
        client.set_default_client_config(mp::ClientConfig {
            tls: client_config(roots, &chacha_only()).unwrap(),
            transport: TransportConfig {
                key_update_interval: Some(1000),
                ..TransportConfig::default()
            },
        });
        let conn = client.connect(addr, "localhost").unwrap().await.unwrap();
        hashed(conn.clone(), pattern(10 * 1024 * 1024, 5)).await;
        // ~9 000 packets sent at one update per 1 000 (each waits for the previous one to be acknowledged).
        assert!(conn.stats().key_updates >= 2, "{:?}", conn.stats());
        conn.close(VarInt::from_u32(CLOSE_CODE), CLOSE_REASON);
        assert_eq!(srv.await.unwrap(), expected_close());
        client.wait_idle().await;
    })
    .await;
}

/// quinn client (offering every suite; quinn needs AES-128-GCM available for its Initial packets) against an
/// mpquic server that accepts only ChaCha20-Poly1305, so the completed handshake proves ChaCha20 was chosen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chacha20_only_mpquic_server_against_quinn_client() {
    bounded(async {
        let c = certs();
        let tls = server_config(
            vec![c.cert.clone()],
            PrivateKeyDer::Pkcs8(c.key.clone_key()),
            &chacha_only(),
        )
        .unwrap();
        let server = mp::Endpoint::server(
            mp::ServerConfig {
                tls,
                transport: TransportConfig::default(),
            },
            loopback(),
        )
        .unwrap();
        let addr = server.local_addr();
        let srv = serve_one(server);
        let client = quinn_client(&c);
        let conn = client.connect(addr, "localhost").unwrap().await.unwrap();
        hashed(conn.clone(), pattern(3 * 1024 * 1024, 6)).await;
        conn.close(quinn::VarInt::from_u32(CLOSE_CODE), CLOSE_REASON);
        assert_eq!(srv.await.unwrap(), expected_close());
        client.wait_idle().await;
    })
    .await;
}

// ----- Retry -----

/// quinn client against an mpquic server that requires a Retry: the handshake can only complete if quinn accepted
/// our Retry (integrity tag, new connection ID) and echoed the token, which the server then validated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_required_by_mpquic_server_quinn_client() {
    bounded(async {
        let c = certs();
        let server = mp_server(&c);
        server.set_require_retry(true);
        let addr = server.local_addr();
        let srv = serve_one(server);
        let client = quinn_client(&c);
        let conn = client.connect(addr, "localhost").unwrap().await.unwrap();
        hashed(conn.clone(), pattern(1024 * 1024, 4)).await;
        conn.close(quinn::VarInt::from_u32(CLOSE_CODE), CLOSE_REASON);
        assert_eq!(srv.await.unwrap(), expected_close());
        client.wait_idle().await;
    })
    .await;
}

/// mpquic client against a quinn server that answers the first Initial with a Retry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_sent_by_quinn_server_mpquic_client() {
    bounded(async {
        let c = certs();
        let server = quinn_server(&c);
        let addr = server.local_addr().unwrap();
        let srv = tokio::spawn(async move {
            let first = server.accept().await.unwrap();
            assert!(!first.remote_address_validated());
            first.retry().unwrap();
            let second = server.accept().await.unwrap();
            assert!(
                second.remote_address_validated(),
                "the retried Initial carries quinn's token"
            );
            let conn = second.await.unwrap();
            serve(conn).await
        });
        let client = mp_client(&c);
        let conn = client.connect(addr, "localhost").unwrap().await.unwrap();
        assert!(conn.retried());
        hashed(conn.clone(), pattern(1024 * 1024, 3)).await;
        conn.close(VarInt::from_u32(CLOSE_CODE), CLOSE_REASON);
        assert_eq!(srv.await.unwrap(), expected_close());
        client.wait_idle().await;
    })
    .await;
}
