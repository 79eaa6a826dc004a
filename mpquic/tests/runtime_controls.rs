//! Runtime calls the interop endpoints rely on, mpquic to mpquic over loopback: `cipher_suite` reports the
//! negotiated suite, `force_key_update` starts a key update both sides count, and `rotate_path_cids` moves
//! path 0 to a fresh connection ID of the server while data keeps flowing (SHA-256 checked).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::Duration;

use common::{certs, init_tracing, pattern, rustls_client, rustls_server, sha256};
use mpquic::proto::crypto::CipherSuite;
use mpquic::runtime::{self as mp, PathId, TransportConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const WAIT: Duration = Duration::from_secs(10);

/// Retries `f` every few milliseconds until it returns `true`; panics with `what` after [`WAIT`].
async fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !f() {
        assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Uploads `len` bytes on a fresh stream and checks the SHA-256 the server echoes.
async fn round_trip(conn: &mp::Connection, len: usize, seed: u8) {
    let data = pattern(len, seed);
    let (mut s, mut r) = conn.open_bi().await.unwrap();
    s.write_all(&data).await.unwrap();
    s.shutdown().await.unwrap();
    let mut echoed = Vec::new();
    AsyncReadExt::read_to_end(&mut r, &mut echoed).await.unwrap();
    assert_eq!(echoed, sha256(&data));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cipher_key_update_and_cid_rotation() {
    tokio::time::timeout(Duration::from_secs(60), async {
        init_tracing();
        let c = certs();
        let server = mp::Endpoint::server(
            mp::ServerConfig {
                tls: rustls_server(&c),
                transport: TransportConfig::default(),
            },
            common::loopback(),
        )
        .unwrap();
        let addr = server.local_addr();
        let srv = tokio::spawn(async move {
            let conn = server.accept().await.unwrap().await.unwrap();
            while let Ok((mut s, mut r)) = conn.accept_bi().await {
                let mut data = Vec::new();
                AsyncReadExt::read_to_end(&mut r, &mut data).await.unwrap();
                s.write_all(&sha256(&data)).await.unwrap();
                s.shutdown().await.unwrap();
            }
            conn.stats()
        });
        let client = mp::Endpoint::client(common::loopback()).unwrap();
        client.set_default_client_config(mp::ClientConfig {
            tls: rustls_client(&c),
            transport: TransportConfig::default(),
        });
        let conn = client.connect(addr, "localhost").unwrap().await.unwrap();
        assert_eq!(conn.cipher_suite(), Some(CipherSuite::Aes128Gcm));
        round_trip(&conn, 100_000, 1).await;

        eventually("a key update to start", || conn.force_key_update()).await;
        round_trip(&conn, 500_000, 2).await;
        assert!(conn.stats().key_updates >= 1, "{:?}", conn.stats());

        eventually("a spare connection ID of the server for path 0", || {
            conn.rotate_path_cids(PathId(0))
        })
        .await;
        round_trip(&conn, 500_000, 3).await;
        eventually("a second rotation", || conn.rotate_path_cids(PathId(0))).await;
        round_trip(&conn, 500_000, 4).await;

        conn.close(0u32.into(), b"done");
        let server_stats = srv.await.unwrap();
        assert!(
            server_stats.key_updates >= 1,
            "the server saw no key update: {server_stats:?}"
        );
        client.wait_idle().await;
    })
    .await
    .expect("test timed out");
}
