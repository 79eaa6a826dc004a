//! Multipath through the tokio runtime, mpquic to mpquic over loopback: both endpoints on wildcard sockets,
//! the client opens a second path from 127.0.0.2, both paths carry data, path events reach both sides, and a
//! path closed mid-transfer leaves the data intact (SHA-256).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::{certs, init_tracing, pattern, rustls_client, rustls_server, sha256};
use mpquic::runtime::{self as mp, PathEvent, PathId, PathStatus, TransportConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const SIZE: usize = 8 * 1024 * 1024;

/// Round-robin: on loopback nothing limits either path, so under the default minRTT the split follows
/// whichever window fills first and a path the scheduler seldom needs does not grow its window (RFC 9002
/// §7.8); round-robin makes "both paths carry the upload" a property of the scheduler.
fn transport() -> TransportConfig {
    TransportConfig {
        initial_max_path_id: Some(4),
        scheduler: "roundrobin".to_owned(),
        ..TransportConfig::default()
    }
}

fn wildcard() -> SocketAddr {
    "0.0.0.0:0".parse().unwrap()
}

/// A server that echoes the SHA-256 of one uploaded stream and reports the path events it saw.
fn server(c: &common::Certs) -> (mp::Endpoint, u16) {
    let ep = mp::Endpoint::server(
        mp::ServerConfig {
            tls: rustls_server(c),
            transport: transport(),
        },
        wildcard(),
    )
    .unwrap();
    let port = ep.local_addr().port();
    (ep, port)
}

async fn next_event(conn: &mp::Connection, want: impl Fn(&PathEvent) -> bool) -> PathEvent {
    loop {
        let ev = conn.path_event().await.unwrap();
        if want(&ev) {
            return ev;
        }
    }
}

async fn run(close_second_path: bool) {
    init_tracing();
    let c = certs();
    let (server, port) = server(&c);
    let srv = tokio::spawn(async move {
        let conn = server.accept().await.unwrap().await.unwrap();
        let events = conn.clone();
        let watcher = tokio::spawn(async move {
            let mut seen = Vec::new();
            while let Ok(ev) = events.path_event().await {
                seen.push(ev);
            }
            seen
        });
        let (mut s, mut r) = conn.accept_bi().await.unwrap();
        let mut data = Vec::new();
        AsyncReadExt::read_to_end(&mut r, &mut data).await.unwrap();
        s.write_all(&sha256(&data)).await.unwrap();
        s.shutdown().await.unwrap();
        let stats = conn.all_path_stats();
        conn.closed().await;
        (data.len(), stats, watcher.await.unwrap())
    });
    let client = mp::Endpoint::client(wildcard()).unwrap();
    client.set_default_client_config(mp::ClientConfig {
        tls: rustls_client(&c),
        transport: transport(),
    });
    let server_addr = SocketAddr::from(([127, 0, 0, 1], port));
    let conn = client.connect(server_addr, "localhost").unwrap().await.unwrap();
    assert!(conn.multipath());
    // The path-1 connection IDs (and HANDSHAKE_DONE) arrive just after the handshake: open_path fails until
    // then, and open_path_when_ready waits for them.
    // Port 0: the endpoint's port.
    let local2 = SocketAddr::from(([127, 0, 0, 2], 0));
    let id = conn
        .open_path_when_ready(
            Some(local2),
            server_addr,
            PathStatus::Available,
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    assert_eq!(id, PathId(1));
    next_event(&conn, |e| *e == PathEvent::Validated { path: id }).await;

    let data = pattern(SIZE, 3);
    let (mut s, mut r) = conn.open_bi().await.unwrap();
    s.write_all(&data[..SIZE / 2]).await.unwrap();
    if close_second_path {
        conn.close_path(id, mp::VarInt::from_u32(0x3e)).unwrap();
        next_event(&conn, |e| *e == PathEvent::Abandoned { path: id }).await;
    }
    s.write_all(&data[SIZE / 2..]).await.unwrap();
    s.shutdown().await.unwrap();
    let mut digest = Vec::new();
    AsyncReadExt::read_to_end(&mut r, &mut digest).await.unwrap();
    assert_eq!(digest, sha256(&data), "SHA-256 of the upload");
    let stats = conn.all_path_stats();
    conn.close(0u32.into(), b"done");
    let (n, server_stats, server_events) = srv.await.unwrap();
    assert_eq!(n, SIZE);
    assert!(
        server_events.contains(&PathEvent::Validated { path: id }),
        "{server_events:?}"
    );
    assert!(
        server_events
            .iter()
            .any(|e| matches!(e, PathEvent::Opened { path, remote }
        if *path == id && *remote == SocketAddr::new(local2.ip(), client.local_addr().port())))
    );
    let on = |v: &[mp::PathStats], p: PathId| v.iter().find(|s| s.path == p).map(|s| s.bytes_received);
    if close_second_path {
        assert!(
            server_events.contains(&PathEvent::Abandoned { path: id }),
            "{server_events:?}"
        );
    } else {
        // Both paths carried a real share of the upload.
        let (b0, b1) = (
            on(&server_stats, PathId(0)).unwrap(),
            on(&server_stats, id).unwrap(),
        );
        assert!(
            b0 > SIZE as u64 / 20 && b1 > SIZE as u64 / 20,
            "path 0 {b0} B, path 1 {b1} B"
        );
        assert!(stats.iter().all(|s| s.validated));
    }
    client.wait_idle().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_paths_carry_an_upload() {
    tokio::time::timeout(Duration::from_secs(60), run(false))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_path_mid_transfer_keeps_the_data_intact() {
    tokio::time::timeout(Duration::from_secs(60), run(true))
        .await
        .unwrap();
}
