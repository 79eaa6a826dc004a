//! The quinn 0.11 endpoint: single path (multipath cases are unsupported, exit 127); the server sends a Retry
//! to every client whose address is not validated yet in the retry case. quinn writes no qlog here and counts
//! no key updates; it reports its bytes as path 0 and RETIRE_CONNECTION_ID frames received.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use super::{Conn, drive_client, serve_connection, tls};
use crate::cases::TestCase;
use crate::env::EndpointEnv;
use crate::error::InteropError;
use crate::report::{PathLine, flag};

fn conn_err(e: impl std::fmt::Display) -> InteropError {
    InteropError::Connection(e.to_string())
}

/// A quinn connection.
#[derive(Clone)]
pub struct QuinnConn(quinn::Connection);

impl Conn for QuinnConn {
    type Send = quinn::SendStream;
    type Recv = quinn::RecvStream;

    async fn open_bi(&self) -> Result<(quinn::SendStream, quinn::RecvStream), InteropError> {
        self.0.open_bi().await.map_err(conn_err)
    }

    async fn accept_bi(&self) -> Option<(quinn::SendStream, quinn::RecvStream)> {
        self.0.accept_bi().await.ok()
    }

    async fn closed(&self) {
        let e = self.0.closed().await;
        tracing::info!("connection closed: {e}");
    }

    fn key_update(&self) -> bool {
        self.0.force_key_update();
        true
    }

    fn abandon_path(&self, _id: u64) -> Result<(), InteropError> {
        Err(conn_err("quinn is single-path"))
    }

    fn set_backup(&self, _id: u64) -> bool {
        false
    }

    fn rotate_cids(&self) -> bool {
        false
    }

    fn paths(&self) -> Vec<PathLine> {
        let s = self.0.stats();
        vec![PathLine {
            id: 0,
            sent: s.udp_tx.bytes,
            received: s.udp_rx.bytes,
            abandoned: false,
            backup: false,
        }]
    }

    fn facts(&self) -> Vec<(&'static str, String)> {
        let s = self.0.stats();
        vec![
            ("multipath", flag(false)),
            ("retired_cids", s.frame_rx.retire_connection_id.to_string()),
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
    let ep = quinn::Endpoint::client(bind).map_err(|e| InteropError::io("client socket", e))?;
    let crypto =
        quinn::crypto::rustls::QuicClientConfig::with_initial(tls::client(env, case)?, tls::initial_suite()?)
            .map_err(|e| InteropError::Tls(e.to_string()))?;
    let config = quinn::ClientConfig::new(Arc::new(crypto));
    let conn = ep
        .connect_with(config, server, &host)
        .map_err(conn_err)?
        .await
        .map_err(conn_err)?;
    let result = drive_client(QuinnConn(conn.clone()), env, case).await;
    conn.close(0u32.into(), b"done");
    let _ = tokio::time::timeout(Duration::from_secs(2), ep.wait_idle()).await;
    result
}

/// The server role: serves until killed.
pub async fn server(env: &EndpointEnv, case: TestCase) -> Result<(), InteropError> {
    let crypto =
        quinn::crypto::rustls::QuicServerConfig::with_initial(tls::server(env, case)?, tls::initial_suite()?)
            .map_err(|e| InteropError::Tls(e.to_string()))?;
    let config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    let ep = quinn::Endpoint::server(config, env.listen_addr)
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
                    serve_connection(QuinnConn(conn), www, case, extra).await;
                }
                Err(e) => tracing::warn!("handshake failed: {e}"),
            }
        });
    }
    Ok(())
}
