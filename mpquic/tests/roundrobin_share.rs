//! Round-robin over two loopback paths through the runtime: the runtime groups datagrams for GSO per
//! destination and tells the scheduler its batch, so round-robin's turns last one batch; that must leave
//! the per-path share of the data what the scheduler decided. With strict turns (`cwnd_limited=false`)
//! the paths take alternate turns, so the STREAM bytes of the two paths must agree within a bound derived
//! below.

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

const SIZE: usize = 16 * 1024 * 1024;

fn transport(scheduler: &str) -> TransportConfig {
    TransportConfig {
        initial_max_path_id: Some(4),
        scheduler: scheduler.to_owned(),
        ..TransportConfig::default()
    }
}

fn wildcard() -> SocketAddr {
    "0.0.0.0:0".parse().unwrap()
}

/// Uploads [`SIZE`] bytes over two paths (127.0.0.1 and 127.0.0.2) under `scheduler`; returns the client's
/// `stream_bytes_sent` of path 0 and path 1.
async fn upload(scheduler: &str) -> (u64, u64) {
    init_tracing();
    let c = certs();
    let server = mp::Endpoint::server(
        mp::ServerConfig {
            tls: rustls_server(&c),
            transport: transport(scheduler),
        },
        wildcard(),
    )
    .unwrap();
    let port = server.local_addr().port();
    let srv = tokio::spawn(async move {
        let conn = server.accept().await.unwrap().await.unwrap();
        let (mut s, mut r) = conn.accept_bi().await.unwrap();
        let mut data = Vec::new();
        AsyncReadExt::read_to_end(&mut r, &mut data).await.unwrap();
        s.write_all(&sha256(&data)).await.unwrap();
        s.shutdown().await.unwrap();
        conn.closed().await;
    });
    let client = mp::Endpoint::client(wildcard()).unwrap();
    client.set_default_client_config(mp::ClientConfig {
        tls: rustls_client(&c),
        transport: transport(scheduler),
    });
    let server_addr = SocketAddr::from(([127, 0, 0, 1], port));
    let conn = client.connect(server_addr, "localhost").unwrap().await.unwrap();
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
    loop {
        if conn.path_event().await.unwrap() == (PathEvent::Validated { path: id }) {
            break;
        }
    }
    let data = pattern(SIZE, 7);
    let (mut s, mut r) = conn.open_bi().await.unwrap();
    s.write_all(&data).await.unwrap();
    s.shutdown().await.unwrap();
    let mut digest = Vec::new();
    AsyncReadExt::read_to_end(&mut r, &mut digest).await.unwrap();
    assert_eq!(digest, sha256(&data), "SHA-256 of the upload");
    let p0 = conn.path_stats(PathId(0)).unwrap();
    let p1 = conn.path_stats(PathId(1)).unwrap();
    conn.close(mp::VarInt::from_u32(0), b"done");
    srv.await.unwrap();
    eprintln!(
        "{scheduler}: path 0 {} stream bytes in {} packets ({} lost), path 1 {} in {} ({} lost)",
        p0.stream_bytes_sent,
        p0.packets_sent,
        p0.packets_lost,
        p1.stream_bytes_sent,
        p1.packets_sent,
        p1.packets_lost
    );
    (p0.stream_bytes_sent, p1.stream_bytes_sent)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_round_robin_splits_an_upload_evenly_over_two_paths() {
    let (p0, p1) = tokio::time::timeout(Duration::from_secs(120), upload("roundrobin:cwnd_limited=false"))
        .await
        .unwrap();
    let total = p0 + p1;
    assert!(total >= SIZE as u64, "{total}");
    // The bound. Strict turns give the paths alternate turns (retransmissions take turns like new data), and
    // with the runtime's GSO batches a turn is one batch (`ConnView::batch_packets`: at most 64,000 bytes of
    // datagrams), so the paths' data differ by at most one turn: 64,000 bytes. A data packet's STREAM payload
    // is the datagram less the short header and AEAD tag, less whatever other frames share the packet: on an
    // upload those are the client's ACKs of the server's few ack-eliciting packets (MAX_DATA and
    // MAX_STREAM_DATA, about one per half window consumed: 16 MiB / 128 KiB = 128 stream updates, as many
    // connection ones) and path management frames, each at most ~64 bytes. One turn plus 512 such frames
    // of 64 bytes is 64,000 + 32,768 bytes, 0.58 % of 16 MiB; the assertion allows 0.6 %.
    let diff = p0.abs_diff(p1);
    assert!(
        diff * 1000 <= total * 6,
        "path 0 {p0} and path 1 {p1} stream bytes differ by {diff} ({:.3} %)",
        diff as f64 * 100.0 / total as f64
    );
}
