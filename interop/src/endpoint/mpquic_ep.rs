//! The mpquic endpoint: `mpquic::runtime` with its defaults (multipath offered, initial_max_path_id 7), qlog to
//! `QLOGDIR`, Retry required by the server in the retry case, extra paths opened by the client from
//! `CLIENT_PATHS` once the handshake is confirmed and validated before any request is sent.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mpquic::proto::frame::PathAbandon;
use mpquic::runtime::{self as mp, PathEvent, PathId, PathStatus};

use super::{Conn, drive_client, serve_connection, tls};
use crate::cases::TestCase;
use crate::env::EndpointEnv;
use crate::error::InteropError;
use crate::report::{PathLine, flag};

/// How long the client waits for an extra path to open and validate.
const PATH_WAIT: Duration = Duration::from_secs(10);

fn transport(env: &EndpointEnv) -> mp::TransportConfig {
    let mut t = mp::TransportConfig::default();
    if let Some(cc) = &env.mpquic_cc {
        t.congestion_controller.clone_from(cc);
    }
    if let Some(s) = &env.mpquic_scheduler {
        t.scheduler.clone_from(s);
    }
    if let Some(on) = env.mpquic_reinjection {
        t.reinjection.enabled = on;
    }
    if env.mpquic_pmtud == Some(false) {
        t.mtu_discovery = None;
    }
    if let Some(dir) = &env.qlogdir {
        t.qlog = Some(mp::qlog_directory(dir.clone()));
    }
    t
}

fn conn_err(e: impl std::fmt::Display) -> InteropError {
    InteropError::Connection(e.to_string())
}

/// An mpquic connection with what its path events told us.
#[derive(Clone)]
pub struct MpConn {
    conn: mp::Connection,
    peer_backup: Arc<AtomicBool>,
}

impl MpConn {
    fn new(conn: mp::Connection) -> MpConn {
        let peer_backup = Arc::new(AtomicBool::new(false));
        let (c, pb) = (conn.clone(), peer_backup.clone());
        tokio::spawn(async move {
            while let Ok(ev) = c.path_event().await {
                tracing::debug!(?ev, "path event");
                if let PathEvent::StatusChanged {
                    status: PathStatus::Backup,
                    local: false,
                    ..
                } = ev
                {
                    pb.store(true, Ordering::Relaxed);
                }
            }
        });
        MpConn { conn, peer_backup }
    }
}

fn path_id(id: u64) -> PathId {
    PathId(u32::try_from(id).unwrap_or(u32::MAX))
}

impl Conn for MpConn {
    type Send = mp::SendStream;
    type Recv = mp::RecvStream;

    async fn open_bi(&self) -> Result<(mp::SendStream, mp::RecvStream), InteropError> {
        self.conn.open_bi().await.map_err(conn_err)
    }

    async fn accept_bi(&self) -> Option<(mp::SendStream, mp::RecvStream)> {
        self.conn.accept_bi().await.ok()
    }

    async fn closed(&self) {
        let e = self.conn.closed().await;
        tracing::info!("connection closed: {e}");
    }

    fn key_update(&self) -> bool {
        self.conn.force_key_update()
    }

    fn abandon_path(&self, id: u64) -> Result<(), InteropError> {
        self.conn
            .close_path(path_id(id), PathAbandon::APPLICATION_ABANDON_PATH)
            .map_err(conn_err)
    }

    /// mpquic keeps one status per path and follows the peer's PATH_STATUS frames itself, so the server does not
    /// mark the path on its own: mp-path-status then checks that it honours the client's PATH_STATUS_BACKUP.
    fn set_backup(&self, id: u64) -> bool {
        self.conn.path_stats(path_id(id)).is_some()
    }

    fn rotate_cids(&self) -> bool {
        let mut any = false;
        for s in self.conn.all_path_stats() {
            if !s.abandoned {
                any |= self.conn.rotate_path_cids(s.path);
            }
        }
        any
    }

    fn paths(&self) -> Vec<PathLine> {
        self.conn
            .all_path_stats()
            .into_iter()
            .map(|s| PathLine {
                id: u64::from(s.path.0),
                sent: s.bytes_sent,
                received: s.bytes_received,
                abandoned: s.abandoned,
                backup: s.backup,
            })
            .collect()
    }

    fn facts(&self) -> Vec<(&'static str, String)> {
        let mut f = vec![
            ("multipath", flag(self.conn.multipath())),
            ("retry", flag(self.conn.retried())),
            ("key_updates", self.conn.stats().key_updates.to_string()),
            ("peer_backup", flag(self.peer_backup.load(Ordering::Relaxed))),
        ];
        if let Some(s) = self.conn.cipher_suite() {
            f.push(("cipher", tls::suite_name(s).to_owned()));
        }
        f.extend(transfer_facts(&self.conn));
        f
    }
}

/// The connection's transfer statistics (informational keys of the summary line): packets, losses, flow
/// control as the sender saw it (time blocked on the peer's credit) and as the receiver gave it (credit
/// updates, the longest time due credit stayed unsent), path 0's final datagram size and smoothed RTT.
fn transfer_facts(conn: &mp::Connection) -> Vec<(&'static str, String)> {
    let s = conn.stats();
    let mut f = vec![
        ("packets_sent", s.packets_sent.to_string()),
        ("packets_received", s.packets_received.to_string()),
        ("packets_lost", s.packets_lost.to_string()),
        ("fc_blocked_us", s.flow.send_blocked_time.as_micros().to_string()),
        ("fc_blocked_episodes", s.flow.send_blocked_episodes.to_string()),
        ("credit_updates", s.flow.credit_updates.to_string()),
        (
            "credit_unsent_max_us",
            s.flow.credit_due_unsent_max.as_micros().to_string(),
        ),
    ];
    if let Some(p) = conn.path_stats(PathId(0)) {
        f.push(("mtu", p.mtu.to_string()));
        f.push(("srtt_us", p.srtt.as_micros().to_string()));
    }
    f
}

/// Opens the extra paths of `CLIENT_PATHS` and waits until each is validated.
async fn open_paths(
    conn: &mp::Connection,
    env: &EndpointEnv,
    server: SocketAddr,
    case: TestCase,
) -> Result<(), InteropError> {
    for p in &env.client_paths {
        let local = SocketAddr::new(p.local, 0);
        let remote = p.remote.unwrap_or(server);
        let id = conn
            .open_path_when_ready(Some(local), remote, PathStatus::Available, PATH_WAIT)
            .await
            .map_err(|e| conn_err(format!("open_path {local} → {remote}: {e}")))?;
        tokio::time::timeout(PATH_WAIT, async {
            loop {
                match conn.path_event().await {
                    Ok(PathEvent::Validated { path }) if path == id => return Ok(()),
                    Ok(PathEvent::Abandoned { path }) if path == id => {
                        return Err(conn_err(format!("path {id} abandoned before validation")));
                    }
                    Ok(_) => {}
                    Err(e) => return Err(conn_err(e)),
                }
            }
        })
        .await
        .map_err(|_| InteropError::Timeout(format!("validation of path {id}")))??;
        if case == TestCase::MpPathStatus {
            conn.set_path_status(id, PathStatus::Backup).map_err(conn_err)?;
        }
        tracing::info!(%id, %local, %remote, "path validated");
    }
    Ok(())
}

/// The client role.
pub async fn client(env: &EndpointEnv, case: TestCase) -> Result<(), InteropError> {
    let (server, host) = env.server()?;
    let bind: SocketAddr = if server.is_ipv4() {
        SocketAddr::from(([0, 0, 0, 0], 0))
    } else {
        SocketAddr::from(([0u16; 8], 0))
    };
    let ep = mp::Endpoint::client(bind).map_err(|e| InteropError::io("client socket", e))?;
    let config = mp::ClientConfig {
        tls: tls::client(env, case)?,
        transport: transport(env),
    };
    let conn = ep
        .connect_with(&config, server, &host)
        .map_err(conn_err)?
        .await
        .map_err(conn_err)?;
    if case.second_path() {
        open_paths(&conn, env, server, case).await?;
    }
    let result = drive_client(MpConn::new(conn.clone()), env, case).await;
    conn.close(0u32.into(), b"done");
    let _ = tokio::time::timeout(Duration::from_secs(2), ep.wait_idle()).await;
    result
}

/// The server role: serves until killed.
pub async fn server(env: &EndpointEnv, case: TestCase) -> Result<(), InteropError> {
    let config = mp::ServerConfig {
        tls: tls::server(env, case)?,
        transport: transport(env),
    };
    let ep = mp::Endpoint::server(config, env.listen_addr)
        .map_err(|e| InteropError::io(format!("listening on {}", env.listen_addr), e))?;
    if case == TestCase::Retry {
        ep.set_require_retry(true);
    }
    println!("interop: listening={}", ep.local_addr());
    while let Some(connecting) = ep.accept().await {
        let (www, env_case) = (env.www.clone(), case);
        tokio::spawn(async move {
            match connecting.await {
                Ok(conn) => serve_connection(MpConn::new(conn), www, env_case, Vec::new()).await,
                Err(e) => tracing::warn!("handshake failed: {e}"),
            }
        });
    }
    Ok(())
}
