//! mpquic's side of a run: endpoints, configuration, the second path, sender and receiver.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mpquic::runtime::{self as mp, PathId, PathStatus, TransportConfig};

use crate::common::{
    Certs, LOCAL2, READ_MAX, Received, Res, Settings, check, next_chunk, rustls_client, rustls_server,
};

/// mpquic's transport configuration: `TransportConfig::default()` unless the run pins the datagram size (then
/// CUBIC and `max_udp_payload` = that size).
pub(crate) fn transport(s: &Settings) -> TransportConfig {
    let mut t = TransportConfig::default();
    if let Some(mtu) = s.pinned_mtu {
        t.congestion_controller = "cubic".to_owned();
        t.max_udp_payload = mtu;
        t.mtu_discovery = None;
    }
    if let Some(b) = s.send_buffer {
        t.streams.send_buffer = b;
    }
    if let Some(p) = s.pacer_max_burst {
        t.recovery.pacer_max_burst_packets = p;
    }
    if let Some(sched) = s.scheduler {
        t.scheduler = sched.to_owned();
    }
    t
}

pub(crate) fn server(c: &Certs, s: &Settings) -> Res<mp::Endpoint> {
    let config = mp::ServerConfig {
        tls: rustls_server(c)?,
        transport: transport(s),
    };
    Ok(mp::Endpoint::server(config, s.bind())?)
}

pub(crate) fn client(c: &Certs, s: &Settings) -> Res<mp::Endpoint> {
    let ep = mp::Endpoint::client(s.bind())?;
    ep.set_default_client_config(mp::ClientConfig {
        tls: rustls_client(c)?,
        transport: transport(s),
    });
    Ok(ep)
}

pub(crate) async fn connect(client: &mp::Endpoint, server: SocketAddr) -> Res<mp::Connection> {
    Ok(client
        .connect(server, "localhost")?
        .await
        .map_err(|e| format!("connect: {e:?}"))?)
}

/// Accepts one connection and completes its handshake (concurrently with the client's `connect`).
pub(crate) async fn accept(server: &mp::Endpoint) -> Res<mp::Connection> {
    let incoming = server.accept().await.ok_or("no incoming connection")?;
    Ok(incoming.await.map_err(|e| format!("accept: {e:?}"))?)
}

/// Client: opens path 1 from [`LOCAL2`] to the server and waits until it is validated.
pub(crate) async fn open_second_path(conn: &mp::Connection, client_port: u16, server: SocketAddr) -> Res<()> {
    let local = SocketAddr::new(LOCAL2, client_port);
    let id = conn
        .open_path_when_ready(Some(local), server, PathStatus::Available, Duration::from_secs(5))
        .await
        .map_err(|e| format!("open_path: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(5);
    while !conn.path_stats(id).is_some_and(|p| p.validated) {
        if Instant::now() > deadline {
            return Err("path 1 not validated within 5 s".into());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    Ok(())
}

pub(crate) async fn send(conn: &mp::Connection, pattern: &Bytes, total: u64) -> Res<()> {
    let mut s = conn.open_uni().await.map_err(|e| format!("open_uni: {e:?}"))?;
    if std::env::var_os("BULK_TRACE").is_some() {
        let c = conn.clone();
        tokio::spawn(async move {
            while c.close_reason().is_none() {
                tokio::time::sleep(Duration::from_millis(100)).await;
                for p in c.all_path_stats() {
                    eprintln!(
                        "path {}: cwnd {} B, in flight {} B, pacing {:?} B/s, srtt {:?}, min_rtt {:?}, {} packets sent",
                        p.path.0, p.cwnd, p.bytes_in_flight, p.pacing_rate, p.srtt, p.min_rtt, p.packets_sent
                    );
                }
            }
        });
    }
    let mut sent = 0;
    while sent < total {
        let chunk = next_chunk(pattern, sent, total);
        sent += chunk.len() as u64;
        s.write_chunk(chunk).await?;
    }
    s.finish()?;
    Ok(())
}

pub(crate) async fn receive(conn: &mp::Connection, pattern: &Bytes, verify: bool) -> Res<Received> {
    let mut r = conn
        .accept_uni()
        .await
        .map_err(|e| format!("accept_uni: {e:?}"))?;
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

/// Packets sent and declared lost, and the share of the bytes sent on path 1 (in the two-path runs).
pub(crate) fn sender_stats(conn: &mp::Connection) -> (u64, u64, Option<f64>) {
    let st = conn.stats();
    let bytes = |p| conn.path_stats(PathId(p)).map_or(0, |s| s.bytes_sent);
    let (b0, b1) = (bytes(0), bytes(1));
    let share = (b1 > 0).then(|| b1 as f64 / (b0 + b1).max(1) as f64);
    (st.packets_sent, st.packets_lost, share)
}

/// The connection's socket counters in one line: system calls, datagrams per GSO batch, flush turns.
pub(crate) fn transmit_summary(conn: &mp::Connection) -> String {
    let t = conn.transmit_stats();
    format!(
        "{} datagrams in {} sends ({:.1} per send, {} single), {} turns ({:.1} datagrams per turn), {} lane switches, {} would-block",
        t.datagrams,
        t.batches,
        t.mean_segments(),
        t.single_datagram_batches,
        t.turns,
        t.datagrams as f64 / t.turns.max(1) as f64,
        t.lane_switches,
        t.would_block,
    )
}
