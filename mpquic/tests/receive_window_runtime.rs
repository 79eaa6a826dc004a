//! Receive windows through the runtime, mpquic to mpquic over loopback: a server with the Linux policy
//! changes one stream to a fixed window with `RecvStream::set_receive_window`, reads an upload slowly, and
//! its connection statistics report every byte with the unread peak within that window.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::Duration;

use common::{certs, init_tracing, pattern, rustls_client, rustls_server, sha256};
use mpquic::runtime::{self as mp, SetWindowError, StreamsConfig, TransportConfig, WindowPolicy};
use tokio::io::AsyncWriteExt;

const FIXED: u64 = 96 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_window_set_at_run_time_bounds_what_the_server_buffers() {
    tokio::time::timeout(Duration::from_secs(60), async {
        init_tracing();
        let c = certs();
        let transport = TransportConfig {
            streams: StreamsConfig {
                window_policy: WindowPolicy::Linux,
                ..StreamsConfig::default()
            },
            ..TransportConfig::default()
        };
        let server = mp::Endpoint::server(
            mp::ServerConfig {
                tls: rustls_server(&c),
                transport: transport.clone(),
            },
            common::loopback(),
        )
        .unwrap();
        let addr = server.local_addr();
        let srv = tokio::spawn(async move {
            let conn = server.accept().await.unwrap().await.unwrap();
            let mut r = conn.accept_uni().await.unwrap();
            assert_eq!(
                r.set_receive_window(0, WindowPolicy::Fixed),
                Err(SetWindowError::InvalidWindow(0))
            );
            r.set_receive_window(FIXED, WindowPolicy::Fixed).unwrap();
            let mut data = Vec::new();
            let mut buf = vec![0u8; 16 * 1024];
            // A slow reader: 16 KiB per millisecond at most.
            while let Some(n) = r.read(&mut buf).await.unwrap() {
                data.extend_from_slice(&buf[..n]);
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            assert_eq!(
                r.set_receive_window(FIXED, WindowPolicy::Auto),
                Err(SetWindowError::ClosedStream),
                "the stream is read to its end"
            );
            (sha256(&data), data.len(), conn.stats().reassembly)
        });
        let client = mp::Endpoint::client(common::loopback()).unwrap();
        client.set_default_client_config(mp::ClientConfig {
            tls: rustls_client(&c),
            transport,
        });
        let conn = client.connect(addr, "localhost").unwrap().await.unwrap();
        let data = pattern(1_000_000, 9);
        let mut s = conn.open_uni().await.unwrap();
        s.write_all(&data).await.unwrap();
        s.shutdown().await.unwrap();
        let (digest, len, stats) = srv.await.unwrap();
        assert_eq!((digest, len), (sha256(&data), data.len()));
        assert_eq!(stats.bytes, 1_000_000, "{stats:?}");
        assert_eq!(stats.unread_bytes, 0);
        // The first bytes may arrive before the change, under the initial 256 KiB window; after it the
        // fixed window bounds the buffer.
        assert!(stats.max_unread_bytes <= 256 * 1024, "{stats:?}");
        conn.close(mp::VarInt::from_u32(0), b"done");
    })
    .await
    .unwrap();
}
