//! noq's side of a run (its API mirrors quinn 0.11's, plus multipath): endpoints, configuration, the second
//! path, sender and receiver.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::common::{
    Certs, LOCAL2, NOQ_PATHS, READ_MAX, Received, Res, Settings, check, next_chunk, rustls_client,
    rustls_server,
};

/// noq's transport configuration: its defaults (path-MTU discovery on, its default controller, multipath
/// off) unless the run pins the datagram size (then `initial_mtu` = that size, discovery off, CUBIC); the
/// two-path runs offer multipath.
fn transport(s: &Settings) -> Arc<noq::TransportConfig> {
    let mut t = noq::TransportConfig::default();
    if let Some(mtu) = s.pinned_mtu {
        t.congestion_controller_factory(Arc::new(noq::congestion::CubicConfig::default()))
            .initial_mtu(mtu)
            .mtu_discovery_config(None);
    }
    if s.two_paths {
        t.max_concurrent_multipath_paths(NOQ_PATHS);
    }
    Arc::new(t)
}

pub(crate) fn server(c: &Certs, s: &Settings) -> Res<noq::Endpoint> {
    let crypto = noq::crypto::rustls::QuicServerConfig::try_from(rustls_server(c)?)?;
    let mut config = noq::ServerConfig::with_crypto(Arc::new(crypto));
    config.transport_config(transport(s));
    // noq's server answers from the address it was reached at only if bound to it: always 127.0.0.1.
    Ok(noq::Endpoint::server(
        config,
        SocketAddr::from(([127, 0, 0, 1], 0)),
    )?)
}

pub(crate) fn client(c: &Certs, s: &Settings) -> Res<noq::Endpoint> {
    let crypto = noq::crypto::rustls::QuicClientConfig::try_from(rustls_client(c)?)?;
    let mut config = noq::ClientConfig::new(Arc::new(crypto));
    config.transport_config(transport(s));
    let ep = noq::Endpoint::client(s.bind())?;
    ep.set_default_client_config(config);
    Ok(ep)
}

pub(crate) async fn connect(client: &noq::Endpoint, server: SocketAddr) -> Res<noq::Connection> {
    Ok(client.connect(server, "localhost")?.await?)
}

/// Accepts one connection and completes its handshake (concurrently with the client's `connect`).
pub(crate) async fn accept(server: &noq::Endpoint) -> Res<noq::Connection> {
    Ok(server.accept().await.ok_or("no incoming connection")?.await?)
}

/// Client: opens path 1 from [`LOCAL2`] to the server (retrying while the server's path-1 connection IDs
/// have not arrived) and waits until it is validated.
pub(crate) async fn open_second_path(conn: &noq::Connection, server: SocketAddr) -> Res<()> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let tuple = noq::FourTuple::new(server, Some(LOCAL2));
        match tokio::time::timeout(
            Duration::from_secs(5),
            conn.open_path(tuple, noq::PathStatus::Available),
        )
        .await
        {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(noq::PathError::RemoteCidsExhausted)) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            Ok(Err(e)) => return Err(format!("noq open_path: {e}").into()),
            Err(_) => return Err("noq open_path: no answer within 5 s".into()),
        }
    }
}

pub(crate) async fn send(conn: &noq::Connection, pattern: &Bytes, total: u64) -> Res<()> {
    let mut s = conn.open_uni().await?;
    let mut sent = 0;
    while sent < total {
        let chunk = next_chunk(pattern, sent, total);
        sent += chunk.len() as u64;
        s.write_chunk(chunk).await?;
    }
    s.finish()?;
    Ok(())
}

pub(crate) async fn receive(conn: &noq::Connection, pattern: &Bytes, verify: bool) -> Res<Received> {
    let mut r = conn.accept_uni().await?;
    let mut bytes = 0u64;
    let mut intact = true;
    while let Some(chunk) = r.read_chunk(READ_MAX).await? {
        intact &= check(pattern, bytes, &chunk, verify);
        bytes += chunk.len() as u64;
    }
    Ok(Received {
        bytes,
        intact,
        end: Instant::now(),
    })
}

/// Packets sent and declared lost, and the share of the UDP bytes sent on path 1 (in the two-path runs).
pub(crate) fn sender_stats(conn: &noq::Connection) -> (u64, u64, Option<f64>) {
    let st = conn.stats();
    let bytes = |p: u32| {
        conn.path_stats(noq::PathId::from(p))
            .map_or(0, |s| s.udp_tx.bytes)
    };
    let (b0, b1) = (bytes(0), bytes(1));
    let share = (b1 > 0).then(|| b1 as f64 / (b0 + b1).max(1) as f64);
    (st.sent_packets, st.lost_packets, share)
}
