//! TLS 1.3 session resumption through the runtime over loopback, with rustls' defaults on both sides: the
//! server sends two session tickets per connection (`ServerConfig::send_tls13_tickets`, kept in its in-memory
//! session cache) and the client keeps up to 8 tickets per server name in its in-memory store, shared by
//! every connection of its `ClientConfig`.
//!
//! One connection: connect, send one byte on a bidirectional stream, read the server's echo, close. Whether it
//! resumed is read from both ends' `Connection::handshake_kind` (rustls' `handshake_kind`), not inferred.
//!
//! - Sequential: each connection after the first resumes with a ticket of the one before, and that
//!   connection's two tickets are in the store by the time its echo has been read (the server sends them in
//!   its first 1-RTT flight, before the echo).
//! - Concurrent: `TASKS` client tasks each open connections one after the other. The first `TASKS` connections
//!   start before any ticket exists; every later one starts after its own task's previous connection left two
//!   tickets, so the store (one ticket taken per connection, two given) stays non-empty unless tickets from
//!   many connections arrive in one burst and overflow its 8 places before the connections they were meant
//!   for start. The client's receive task used to process a whole receive batch (up to 32 datagrams) itself,
//!   inserting the tickets of every connection in it before any of the application tasks those datagrams
//!   woke could start its next connection: 20-45 % of the later connections then found the store empty.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{certs, init_tracing, rustls_client, rustls_server};
use mpquic::runtime::{self as mp, HandshakeKind, TransportConfig, VarInt};

const TIMEOUT: Duration = Duration::from_secs(120);
/// The byte each connection sends and expects back.
const PING: u8 = 0x5a;

/// rustls' default client store (`ClientSessionMemoryCache`, as `ClientConfig` builds it by default), counting
/// the tickets it is given.
#[derive(Debug)]
struct CountingStore {
    inner: rustls::client::ClientSessionMemoryCache,
    inserted: AtomicUsize,
}

impl rustls::client::ClientSessionStore for CountingStore {
    fn set_kx_hint(&self, name: rustls::pki_types::ServerName<'static>, group: rustls::NamedGroup) {
        self.inner.set_kx_hint(name, group);
    }
    fn kx_hint(&self, name: &rustls::pki_types::ServerName<'_>) -> Option<rustls::NamedGroup> {
        self.inner.kx_hint(name)
    }
    fn set_tls12_session(
        &self,
        name: rustls::pki_types::ServerName<'static>,
        value: rustls::client::Tls12ClientSessionValue,
    ) {
        self.inner.set_tls12_session(name, value);
    }
    fn tls12_session(
        &self,
        name: &rustls::pki_types::ServerName<'_>,
    ) -> Option<rustls::client::Tls12ClientSessionValue> {
        self.inner.tls12_session(name)
    }
    fn remove_tls12_session(&self, name: &rustls::pki_types::ServerName<'static>) {
        self.inner.remove_tls12_session(name);
    }
    fn insert_tls13_ticket(
        &self,
        name: rustls::pki_types::ServerName<'static>,
        value: rustls::client::Tls13ClientSessionValue,
    ) {
        self.inserted.fetch_add(1, Ordering::SeqCst);
        self.inner.insert_tls13_ticket(name, value);
    }
    fn take_tls13_ticket(
        &self,
        name: &rustls::pki_types::ServerName<'static>,
    ) -> Option<rustls::client::Tls13ClientSessionValue> {
        self.inner.take_tls13_ticket(name)
    }
}

struct World {
    server: mp::Endpoint,
    client: mp::Endpoint,
    addr: SocketAddr,
    store: Arc<CountingStore>,
    /// How each accepted connection's handshake went, on the server's side.
    server_kinds: Arc<std::sync::Mutex<Vec<Option<HandshakeKind>>>>,
    acceptor: tokio::task::JoinHandle<()>,
}

fn world() -> World {
    init_tracing();
    let c = certs();
    let server_tls = rustls_server(&c);
    // rustls' defaults, which the test relies on.
    assert_eq!(server_tls.send_tls13_tickets, 2);
    let server = mp::Endpoint::server(
        mp::ServerConfig {
            tls: server_tls,
            transport: TransportConfig::default(),
        },
        common::loopback(),
    )
    .unwrap();
    let store = Arc::new(CountingStore {
        // rustls' default size (`Resumption::default()`): 256 entries, 8 tickets per server name.
        inner: rustls::client::ClientSessionMemoryCache::new(256),
        inserted: AtomicUsize::new(0),
    });
    let mut client_tls = (*rustls_client(&c)).clone();
    client_tls.resumption = rustls::client::Resumption::store(store.clone());
    let client = mp::Endpoint::client(common::loopback()).unwrap();
    client.set_default_client_config(mp::ClientConfig {
        tls: Arc::new(client_tls),
        transport: TransportConfig::default(),
    });
    let addr = server.local_addr();
    let server_kinds = Arc::new(std::sync::Mutex::new(Vec::new()));
    let acceptor = {
        let server = server.clone();
        let kinds = server_kinds.clone();
        tokio::spawn(async move {
            while let Some(incoming) = server.accept().await {
                let kinds = kinds.clone();
                tokio::spawn(async move {
                    let conn = incoming.await.unwrap();
                    kinds.lock().unwrap().push(conn.handshake_kind());
                    let (mut send, mut recv) = conn.accept_bi().await.unwrap();
                    let data = recv.read_to_end(16).await.unwrap();
                    send.write_all(&data).await.unwrap();
                    send.finish().unwrap();
                    let _ = conn.closed().await;
                });
            }
        })
    };
    World {
        server,
        client,
        addr,
        store,
        server_kinds,
        acceptor,
    }
}

/// One connection; returns the client's handshake kind and the tickets in the store once the echo was read.
async fn one(
    client: &mp::Endpoint,
    addr: SocketAddr,
    store: &CountingStore,
) -> (Option<HandshakeKind>, usize) {
    let conn = client.connect(addr, "localhost").unwrap().await.unwrap();
    let kind = conn.handshake_kind();
    let (mut send, mut recv) = conn.open_bi().await.unwrap();
    send.write_all(&[PING]).await.unwrap();
    send.finish().unwrap();
    let echo = recv.read_to_end(16).await.unwrap();
    assert_eq!(echo, [PING]);
    let inserted = store.inserted.load(Ordering::SeqCst);
    conn.close(VarInt::from_u32(0), b"");
    (kind, inserted)
}

async fn shut_down(w: World) {
    w.client.close(VarInt::from_u32(0), b"done");
    w.server.close(VarInt::from_u32(0), b"done");
    let _ = tokio::time::timeout(Duration::from_secs(5), w.client.wait_idle()).await;
    let _ = tokio::time::timeout(Duration::from_secs(5), w.server.wait_idle()).await;
    w.acceptor.abort();
}

fn count(kinds: &[Option<HandshakeKind>], kind: HandshakeKind) -> usize {
    kinds.iter().filter(|k| **k == Some(kind)).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequential_connections_resume() {
    const N: usize = 20;
    let w = world();
    let mut kinds = Vec::new();
    tokio::time::timeout(TIMEOUT, async {
        for i in 0..N {
            let (kind, inserted) = one(&w.client, w.addr, &w.store).await;
            // This connection's two tickets (and every earlier one's) arrived before its echo: the server
            // sends them right after the client's Finished, ahead of the echo.
            assert!(
                inserted >= 2 * (i + 1),
                "connection {i}: {inserted} tickets after its echo"
            );
            kinds.push(kind);
        }
    })
    .await
    .expect("timed out");
    // The first connection has no ticket to use; each later one resumes with a ticket of the one before.
    assert_eq!(kinds.first(), Some(&Some(HandshakeKind::Full)));
    assert_eq!(count(&kinds, HandshakeKind::Resumed), N - 1, "client: {kinds:?}");
    let server_kinds = w.server_kinds.lock().unwrap().clone();
    assert_eq!(server_kinds.len(), N);
    assert_eq!(
        count(&server_kinds, HandshakeKind::Resumed),
        N - 1,
        "server: {server_kinds:?}"
    );
    assert_eq!(w.store.inserted.load(Ordering::SeqCst), 2 * N);
    shut_down(w).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_connections_resume() {
    /// Client tasks, each opening connections one after the other: as many as a receive batch holds
    /// datagrams, so that batches carry the tickets of many connections.
    const TASKS: usize = 32;
    /// Connections in all.
    const N: usize = 6 * TASKS;
    let w = world();
    let left = Arc::new(AtomicUsize::new(N));
    let kinds = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for _ in 0..TASKS {
        let (client, addr, store) = (w.client.clone(), w.addr, w.store.clone());
        let (left, kinds) = (left.clone(), kinds.clone());
        tasks.push(tokio::spawn(async move {
            while left
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
            {
                let (kind, _) = one(&client, addr, &store).await;
                kinds.lock().unwrap().push(kind);
            }
        }));
    }
    tokio::time::timeout(TIMEOUT, async {
        for t in tasks {
            t.await.unwrap();
        }
    })
    .await
    .expect("timed out");
    let kinds = kinds.lock().unwrap().clone();
    assert_eq!(kinds.len(), N);
    let resumed = count(&kinds, HandshakeKind::Resumed);
    assert_eq!(resumed + count(&kinds, HandshakeKind::Full), N, "{kinds:?}");
    // The first TASKS connections start before any ticket exists (a few may start late enough to find one);
    // every later one can find a ticket: at least N - TASKS = 160 could resume. Allow a tenth of those to
    // miss; with a receive batch's tickets stored at once, 88-127 of the 160 resumed.
    let could = N - TASKS;
    println!("{resumed} of {N} connections resumed ({could} could at least)");
    assert!(
        resumed * 10 >= could * 9,
        "{resumed} of {N} connections resumed, {could} could at least"
    );
    // The server agrees with the client on every connection.
    let server_kinds = w.server_kinds.lock().unwrap().clone();
    assert_eq!(server_kinds.len(), N);
    assert_eq!(count(&server_kinds, HandshakeKind::Resumed), resumed);
    assert_eq!(w.store.inserted.load(Ordering::SeqCst), 2 * N);
    shut_down(w).await;
}
