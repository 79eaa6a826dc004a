//! Many handshakes at once through one server endpoint and one client endpoint over loopback: the receive
//! tasks then see batches with several connections in their handshake and leave those datagrams to the
//! connections' drivers (the runtime's parallel handshake path), while established connections in the same
//! batches are processed by the receive task itself. Every connection must complete and echo its data intact
//! (SHA-256 checked), with multipath offered (the default) and off, and both endpoints must end idle.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::Duration;

use common::{certs, init_tracing, pattern, rustls_client, rustls_server, sha256};
use mpquic::runtime::{self as mp, TransportConfig, VarInt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Connections started together (more than a receive batch of 32 datagrams holds).
const CONNS: usize = 48;

fn transport(multipath: bool) -> TransportConfig {
    let mut t = TransportConfig::default();
    if !multipath {
        t.initial_max_path_id = None;
    }
    t
}

async fn run(multipath: bool) {
    init_tracing();
    let c = certs();
    let server = mp::Endpoint::server(
        mp::ServerConfig {
            tls: rustls_server(&c),
            transport: transport(multipath),
        },
        common::loopback(),
    )
    .unwrap();
    let addr = server.local_addr();
    let acceptor = {
        let server = server.clone();
        tokio::spawn(async move {
            let mut served = Vec::new();
            for _ in 0..CONNS {
                let connecting = server.accept().await.unwrap();
                served.push(tokio::spawn(async move {
                    let conn = connecting.await.unwrap();
                    let (mut s, mut r) = conn.accept_bi().await.unwrap();
                    let mut data = Vec::new();
                    AsyncReadExt::read_to_end(&mut r, &mut data).await.unwrap();
                    s.write_all(&sha256(&data)).await.unwrap();
                    s.shutdown().await.unwrap();
                    let _ = conn.closed().await;
                }));
            }
            for s in served {
                s.await.unwrap();
            }
        })
    };
    let client = mp::Endpoint::client(common::loopback()).unwrap();
    client.set_default_client_config(mp::ClientConfig {
        tls: rustls_client(&c),
        transport: transport(multipath),
    });
    let mut tasks = Vec::new();
    for i in 0..CONNS {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let conn = client.connect(addr, "localhost").unwrap().await.unwrap();
            // Different sizes and contents per connection: a datagram delivered to the wrong connection or
            // out of order would show in the digest.
            let data = pattern(1000 + 97 * i, u8::try_from(i).unwrap());
            let (mut s, mut r) = conn.open_bi().await.unwrap();
            s.write_all(&data).await.unwrap();
            s.shutdown().await.unwrap();
            let mut echoed = Vec::new();
            AsyncReadExt::read_to_end(&mut r, &mut echoed).await.unwrap();
            assert_eq!(echoed, sha256(&data), "connection {i}: echo");
            conn.close(VarInt::from_u32(0), b"");
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    acceptor.await.unwrap();
    client.wait_idle().await;
    server.wait_idle().await;
    assert_eq!(client.open_connections(), 0);
    assert_eq!(server.open_connections(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_handshakes_multipath_offered() {
    tokio::time::timeout(Duration::from_secs(60), run(true))
        .await
        .expect("timed out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_handshakes_single_path() {
    tokio::time::timeout(Duration::from_secs(60), run(false))
        .await
        .expect("timed out");
}
