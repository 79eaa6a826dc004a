//! qlog through the tokio runtime: a loopback transfer with [`qlog_directory`] leaves one `.sqlog` file per
//! side, named after the original destination connection ID, and every record of both parses.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::{certs, init_tracing, pattern, rustls_client, rustls_server, sha256};
use mpquic::runtime::{self as mp, TransportConfig, qlog_directory};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const SIZE: usize = 1024 * 1024;

/// Splits a JSON-SEQ file into its parsed records.
fn records(bytes: &[u8]) -> Vec<serde_json::Value> {
    assert_eq!(bytes.first(), Some(&0x1e));
    bytes
        .split(|b| *b == 0x1e)
        .skip(1)
        .map(|r| serde_json::from_slice(r).unwrap())
        .collect()
}

async fn transfer(dir: &std::path::Path) {
    let transport = TransportConfig {
        qlog: Some(qlog_directory(dir)),
        ..TransportConfig::default()
    };
    let c = certs();
    let server = mp::Endpoint::server(
        mp::ServerConfig {
            tls: rustls_server(&c),
            transport: transport.clone(),
        },
        common::loopback(),
    )
    .unwrap();
    let server_addr = server.local_addr();
    let srv = {
        let server = server.clone();
        tokio::spawn(async move {
            let conn = server.accept().await.unwrap().await.unwrap();
            let (mut s, mut r) = conn.accept_bi().await.unwrap();
            let mut data = Vec::new();
            AsyncReadExt::read_to_end(&mut r, &mut data).await.unwrap();
            s.write_all(&sha256(&data)).await.unwrap();
            s.shutdown().await.unwrap();
            conn.closed().await;
        })
    };
    let client = mp::Endpoint::client(common::loopback()).unwrap();
    client.set_default_client_config(mp::ClientConfig {
        tls: rustls_client(&c),
        transport,
    });
    let conn = client
        .connect(
            SocketAddr::from(([127, 0, 0, 1], server_addr.port())),
            "localhost",
        )
        .unwrap()
        .await
        .unwrap();
    let data = pattern(SIZE, 9);
    let (mut s, mut r) = conn.open_bi().await.unwrap();
    s.write_all(&data).await.unwrap();
    s.shutdown().await.unwrap();
    let mut digest = Vec::new();
    AsyncReadExt::read_to_end(&mut r, &mut digest).await.unwrap();
    assert_eq!(digest, sha256(&data));
    conn.close(0u32.into(), b"done");
    srv.await.unwrap();
    drop(conn);
    client.wait_idle().await;
    server.wait_idle().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qlog_directory_writes_one_parsable_file_per_side() {
    init_tracing();
    let dir = std::env::temp_dir().join(format!("mpquic-qlog-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    tokio::time::timeout(Duration::from_secs(60), transfer(&dir))
        .await
        .unwrap();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(files.len(), 2, "{files:?}");
    let odcid = files[0].strip_suffix("_client.sqlog").expect("a client file");
    assert_eq!(files[1], format!("{odcid}_server.sqlog"));
    for (file, side) in files.iter().zip(["client", "server"]) {
        let recs = records(&std::fs::read(dir.join(file)).unwrap());
        assert_eq!(recs[0]["qlog_format"], "JSON-SEQ");
        assert_eq!(recs[0]["trace"]["vantage_point"]["type"], side);
        assert_eq!(recs[0]["trace"]["common_fields"]["ODCID"], odcid);
        let count = |name: &str| recs.iter().filter(|r| r["name"] == name).count();
        // The client uploads 1 MiB (over 700 packets of at most 1452 bytes, the size path MTU discovery
        // reaches on loopback); the server mostly acknowledges.
        let (sent, received) = (count("transport:packet_sent"), count("transport:packet_received"));
        let data_packets = if side == "client" { sent } else { received };
        assert!(data_packets > 700, "{side}: {sent} sent, {received} received");
        // Discovery raised the path MTU from 1200 to 1452 on each side, with one probe.
        let mtu: Vec<_> = recs
            .iter()
            .filter(|r| r["name"] == "connectivity:mtu_updated")
            .map(|r| {
                (
                    r["data"]["old"].as_u64(),
                    r["data"]["new"].as_u64(),
                    r["data"]["done"].as_bool(),
                )
            })
            .collect();
        assert_eq!(mtu, vec![(Some(1200), Some(1452), Some(true))], "{side}");
        assert!(
            sent > 10 && received > 10,
            "{side}: {sent} sent, {received} received"
        );
        assert!(count("recovery:metrics_updated") > 0, "{side}");
        // The close reached the log: it was flushed when the connection drained.
        let last_state = recs
            .iter()
            .rfind(|r| r["name"] == "connectivity:connection_state_updated")
            .unwrap();
        assert_eq!(last_state["data"]["new"], "closed", "{side}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
