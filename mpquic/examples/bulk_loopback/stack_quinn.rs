//! quinn's side of a run (single path only: quinn 0.11 has no multipath): endpoints, configuration, sender
//! and receiver.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;

use crate::common::{
    Certs, READ_MAX, Received, Res, Settings, check, next_chunk, rustls_client, rustls_server,
};

/// quinn's transport configuration: its defaults (path-MTU discovery on, CUBIC) unless the run pins the
/// datagram size (then `initial_mtu` = that size, discovery off, CUBIC).
fn transport(s: &Settings) -> Arc<quinn::TransportConfig> {
    let mut t = quinn::TransportConfig::default();
    if let Some(mtu) = s.pinned_mtu {
        t.congestion_controller_factory(Arc::new(quinn::congestion::CubicConfig::default()))
            .initial_mtu(mtu)
            .mtu_discovery_config(None);
    }
    Arc::new(t)
}

pub(crate) fn server(c: &Certs, s: &Settings) -> Res<quinn::Endpoint> {
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(rustls_server(c)?)?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    config.transport_config(transport(s));
    Ok(quinn::Endpoint::server(config, s.bind())?)
}

pub(crate) fn client(c: &Certs, s: &Settings) -> Res<quinn::Endpoint> {
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(rustls_client(c)?)?;
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    config.transport_config(transport(s));
    let mut ep = quinn::Endpoint::client(s.bind())?;
    ep.set_default_client_config(config);
    Ok(ep)
}

pub(crate) async fn connect(client: &quinn::Endpoint, server: SocketAddr) -> Res<quinn::Connection> {
    Ok(client.connect(server, "localhost")?.await?)
}

/// Accepts one connection and completes its handshake (concurrently with the client's `connect`).
pub(crate) async fn accept(server: &quinn::Endpoint) -> Res<quinn::Connection> {
    Ok(server.accept().await.ok_or("no incoming connection")?.await?)
}

pub(crate) async fn send(conn: &quinn::Connection, pattern: &Bytes, total: u64) -> Res<()> {
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

pub(crate) async fn receive(conn: &quinn::Connection, pattern: &Bytes, verify: bool) -> Res<Received> {
    let mut r = conn.accept_uni().await?;
    let mut bytes = 0u64;
    let mut intact = true;
    while let Some(chunk) = r.read_chunk(READ_MAX, true).await? {
        intact &= chunk.offset == bytes && check(pattern, bytes, &chunk.bytes, verify);
        bytes += chunk.bytes.len() as u64;
    }
    Ok(Received {
        bytes,
        intact,
        end: Instant::now(),
    })
}

/// Packets sent and declared lost.
pub(crate) fn sender_stats(conn: &quinn::Connection) -> (u64, u64, Option<f64>) {
    let st = conn.stats().path;
    (st.sent_packets, st.lost_packets, None)
}
