//! The noq 1.4 endpoint: noq's defaults plus multipath (`max_concurrent_multipath_paths(8)`); the server sends a
//! Retry to every client whose address is not validated yet in the retry case; the client opens the extra
//! paths of `CLIENT_PATHS` (noq's `open_path` resolves once the path is validated). noq writes no qlog and
//! counts no key updates; it reports multipath, RETIRE_CONNECTION_ID frames received, PATH_STATUS_BACKUP
//! received and per-path bytes (its `Path` handles keep their statistics after the path is abandoned).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{Conn, drive_client, serve_connection, tls};
use crate::cases::TestCase;
use crate::env::EndpointEnv;
use crate::error::InteropError;
use crate::report::{PathLine, flag};

/// Paths noq accepts and opens at once.
const MAX_PATHS: u32 = 8;
/// How long the client keeps trying to open an extra path.
const PATH_WAIT: Duration = Duration::from_secs(10);

fn conn_err(e: impl std::fmt::Display) -> InteropError {
    InteropError::Connection(e.to_string())
}

/// noq abandons a path that has been silent this long (applies to every path of a multipath connection,
/// path 0 included: longer than blackhole's 2 s outages).
const PATH_IDLE: Duration = Duration::from_secs(5);
/// Keep-alive on every path, so that a healthy idle path (a backup one) does not reach [`PATH_IDLE`].
const PATH_KEEP_ALIVE: Duration = Duration::from_secs(1);

/// noq's defaults, multipath, and a path idle timeout: without one noq keeps the data it lost on a dead path
/// for that path and the transfer stalls (mp-failover with noq sending).
fn transport() -> Arc<noq::TransportConfig> {
    let mut t = noq::TransportConfig::default();
    t.max_concurrent_multipath_paths(MAX_PATHS)
        .default_path_max_idle_timeout(Some(PATH_IDLE))
        .default_path_keep_alive_interval(Some(PATH_KEEP_ALIVE));
    Arc::new(t)
}

/// A noq connection and the handles of every path seen so far.
#[derive(Clone)]
pub struct NoqConn {
    conn: noq::Connection,
    paths: Arc<Mutex<BTreeMap<u64, noq::Path>>>,
}

impl NoqConn {
    fn new(conn: noq::Connection) -> NoqConn {
        NoqConn {
            conn,
            paths: Arc::default(),
        }
    }

    fn handle(&self, id: u64) -> Option<noq::Path> {
        let id32 = u32::try_from(id).ok()?;
        self.conn.path(noq::PathId::from(id32))
    }
}

impl Conn for NoqConn {
    type Send = noq::SendStream;
    type Recv = noq::RecvStream;

    async fn open_bi(&self) -> Result<(noq::SendStream, noq::RecvStream), InteropError> {
        self.conn.open_bi().await.map_err(conn_err)
    }

    async fn accept_bi(&self) -> Option<(noq::SendStream, noq::RecvStream)> {
        self.conn.accept_bi().await.ok()
    }

    async fn closed(&self) {
        let e = self.conn.closed().await;
        tracing::info!("connection closed: {e}");
    }

    fn key_update(&self) -> bool {
        self.conn.force_key_update();
        true
    }

    fn abandon_path(&self, id: u64) -> Result<(), InteropError> {
        let p = self.handle(id).ok_or_else(|| conn_err(format!("no path {id}")))?;
        p.close().map_err(conn_err)
    }

    fn set_backup(&self, id: u64) -> bool {
        self.handle(id)
            .is_some_and(|p| p.set_status(noq::PathStatus::Backup).is_ok())
    }

    fn rotate_cids(&self) -> bool {
        false
    }

    fn paths(&self) -> Vec<PathLine> {
        let Ok(mut known) = self.paths.lock() else {
            return Vec::new();
        };
        for id in 0..u64::from(MAX_PATHS) * 2 {
            if let std::collections::btree_map::Entry::Vacant(e) = known.entry(id)
                && let Some(p) = self.handle(id)
            {
                e.insert(p);
            }
        }
        known
            .iter()
            .map(|(id, p)| {
                let s = p.stats();
                let status = p.status();
                PathLine {
                    id: *id,
                    sent: s.udp_tx.bytes,
                    received: s.udp_rx.bytes,
                    abandoned: status.is_err(),
                    backup: matches!(status, Ok(noq::PathStatus::Backup)),
                }
            })
            .collect()
    }

    fn facts(&self) -> Vec<(&'static str, String)> {
        let s = self.conn.stats();
        vec![
            ("multipath", flag(self.conn.is_multipath_enabled())),
            (
                "retired_cids",
                (s.frame_rx.retire_connection_id + s.frame_rx.path_retire_connection_id).to_string(),
            ),
            ("peer_backup", flag(s.frame_rx.path_status_backup > 0)),
            // Transfer statistics (informational): as the mpquic endpoint reports them where noq counts the
            // same thing; credit updates are the MAX_DATA and MAX_STREAM_DATA frames sent.
            ("packets_sent", s.sent_packets.to_string()),
            ("datagrams_received", s.udp_rx.datagrams.to_string()),
            ("packets_lost", s.lost_packets.to_string()),
            (
                "credit_updates",
                (s.frame_tx.max_data + s.frame_tx.max_stream_data).to_string(),
            ),
        ]
    }
}

/// The client role.
pub async fn client(env: &EndpointEnv, case: TestCase) -> Result<(), InteropError> {
    let (server, host) = env.server()?;
    let bind: SocketAddr = if server.is_ipv4() {
        SocketAddr::from(([0, 0, 0, 0], 0))
    } else {
        SocketAddr::from(([0u16; 8], 0))
    };
    let ep = noq::Endpoint::client(bind).map_err(|e| InteropError::io("client socket", e))?;
    let crypto =
        noq::crypto::rustls::QuicClientConfig::with_initial(tls::client(env, case)?, tls::initial_suite()?)
            .map_err(|e| InteropError::Tls(e.to_string()))?;
    let mut config = noq::ClientConfig::new(Arc::new(crypto));
    config.transport_config(transport());
    let conn = ep
        .connect_with(config, server, &host)
        .map_err(conn_err)?
        .await
        .map_err(conn_err)?;
    if case.second_path() {
        for p in &env.client_paths {
            let tuple = noq::FourTuple::new(p.remote.unwrap_or(server), Some(p.local));
            // Opened available, then marked backup: noq sends PATH_STATUS_BACKUP only for a change of status.
            let status = noq::PathStatus::Available;
            let deadline = tokio::time::Instant::now() + PATH_WAIT;
            let path = loop {
                let r = tokio::time::timeout(PATH_WAIT, conn.open_path(tuple, status))
                    .await
                    .map_err(|_| InteropError::Timeout("noq open_path".to_owned()))?;
                match r {
                    Ok(path) => break path,
                    Err(noq::PathError::RemoteCidsExhausted) if tokio::time::Instant::now() < deadline => {
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                    Err(e) => return Err(conn_err(format!("open_path: {e}"))),
                }
            };
            if case == TestCase::MpPathStatus {
                path.set_status(noq::PathStatus::Backup).map_err(conn_err)?;
            }
            tracing::info!(id = %path.id(), local = %p.local, "path validated");
        }
    }
    let result = drive_client(NoqConn::new(conn.clone()), env, case).await;
    conn.close(0u32.into(), b"done");
    let _ = tokio::time::timeout(Duration::from_secs(2), ep.wait_idle()).await;
    result
}

/// The server role: serves until killed.
pub async fn server(env: &EndpointEnv, case: TestCase) -> Result<(), InteropError> {
    let crypto =
        noq::crypto::rustls::QuicServerConfig::with_initial(tls::server(env, case)?, tls::initial_suite()?)
            .map_err(|e| InteropError::Tls(e.to_string()))?;
    let mut config = noq::ServerConfig::with_crypto(Arc::new(crypto));
    config.transport_config(transport());
    let ep = noq::Endpoint::server(config, env.listen_addr)
        .map_err(|e| InteropError::io(format!("listening on {}", env.listen_addr), e))?;
    let local = ep
        .local_addr()
        .map_err(|e| InteropError::io("local address", e))?;
    println!("interop: listening={local}");
    while let Some(incoming) = ep.accept().await {
        let retried = incoming.remote_address_validated();
        if case == TestCase::Retry && !retried {
            if let Err(e) = incoming.retry() {
                tracing::warn!("retry: {e}");
            }
            continue;
        }
        let www = env.www.clone();
        tokio::spawn(async move {
            match incoming.await {
                Ok(conn) => {
                    let extra = vec![("retry", flag(retried))];
                    serve_connection(NoqConn::new(conn), www, case, extra).await;
                }
                Err(e) => tracing::warn!("handshake failed: {e}"),
            }
        });
    }
    Ok(())
}
