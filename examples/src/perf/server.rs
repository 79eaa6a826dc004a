//! The perf server: accepts connections, answers every stream's [`Request`], and reports each connection
//! when it ends (text, or one JSON line per connection).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mpquic::proto::connection::ServerConfig;
use mpquic::runtime::{Connection, ConnectionError, Endpoint, RecvStream, SendStream};
use serde::Serialize;
use tokio::io::AsyncReadExt;
use tokio::task::JoinSet;

use super::report::{ReceiverFigures, bps, fmt_bytes, fmt_rate, receiver_line};
use super::stream::{receive_pattern, send_pattern};
use super::wire::{Direction, Request};
use super::{PerfError, transport_config};
use crate::clock;

/// A server's options, independent of the command line.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Where to listen.
    pub bind: SocketAddr,
    /// Controller for what the server sends.
    pub cc: String,
    /// Scheduler for what the server sends.
    pub scheduler: String,
    /// Stop after one connection.
    pub one_off: bool,
    /// Report connections as JSON lines.
    pub json: bool,
    /// Print nothing (in-process use).
    pub quiet: bool,
}

/// One path of a finished connection, seen by the server.
#[derive(Debug, Clone, Serialize)]
pub struct ServerPath {
    /// Path ID.
    pub path: u32,
    /// The client's address on it.
    pub remote: SocketAddr,
    /// STREAM payload bytes received on it.
    pub stream_bytes_received: u64,
    /// STREAM payload bytes sent on it.
    pub stream_bytes_sent: u64,
    /// Packets the server sent on it and declared lost.
    pub retransmissions: u64,
}

/// A finished connection, seen by the server.
#[derive(Debug, Clone, Serialize)]
pub struct ServerReport {
    /// The client's handshake address.
    pub client: SocketAddr,
    /// Seconds from the handshake to the close.
    pub seconds: f64,
    /// Application bytes received and checked.
    pub bytes_received: u64,
    /// Application bytes sent.
    pub bytes_sent: u64,
    /// Per path.
    pub paths: Vec<ServerPath>,
    /// The server's receive side at the close (meaningful for uploads).
    pub receiver: ReceiverFigures,
    /// Why it ended, if not cleanly.
    pub error: Option<String>,
}

/// A bound perf server.
#[derive(Debug)]
pub struct Server {
    endpoint: Endpoint,
    options: ServerOptions,
}

impl Server {
    /// Binds the server.
    pub fn bind(
        options: ServerOptions,
        tls: Arc<rustls::ServerConfig>,
        qlog: Option<&std::path::Path>,
    ) -> Result<Server, PerfError> {
        let transport = transport_config(&options.cc, &options.scheduler, 0, qlog)?;
        let endpoint = Endpoint::server(ServerConfig { tls, transport }, options.bind).map_err(|source| {
            PerfError::Io {
                what: format!("cannot bind {} (--bind)", options.bind),
                source,
            }
        })?;
        Ok(Server { endpoint, options })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.endpoint.local_addr()
    }

    /// Serves until the endpoint closes (or after one connection with `one_off`); returns the reports.
    pub async fn serve(self) -> Vec<ServerReport> {
        let mut conns = JoinSet::new();
        let mut reports = Vec::new();
        while let Some(connecting) = self.endpoint.accept().await {
            let options = self.options.clone();
            let handle = async move {
                let conn = match connecting.await {
                    Ok(c) => c,
                    Err(e) => {
                        tracing::info!("handshake failed: {e}");
                        return None;
                    }
                };
                let report = serve_connection(conn).await;
                print_report(&report, &options);
                Some(report)
            };
            if self.options.one_off {
                reports.extend(handle.await);
                break;
            }
            conns.spawn(handle);
            while let Some(done) = conns.try_join_next() {
                reports.extend(done.ok().flatten());
            }
        }
        while let Some(done) = conns.join_next().await {
            reports.extend(done.ok().flatten());
        }
        self.endpoint
            .close(mpquic::runtime::VarInt::from_u32(0), b"server stopping");
        let _ = tokio::time::timeout(Duration::from_secs(1), self.endpoint.wait_idle()).await;
        reports
    }
}

fn print_report(r: &ServerReport, options: &ServerOptions) {
    if options.quiet {
        return;
    }
    if options.json {
        if let Ok(line) = serde_json::to_string(r) {
            println!("{line}");
        }
        return;
    }
    let moved = r.bytes_received.max(r.bytes_sent);
    println!(
        "connection from {}: received {}, sent {} in {:.2} s ({}){}",
        r.client,
        fmt_bytes(r.bytes_received),
        fmt_bytes(r.bytes_sent),
        r.seconds,
        fmt_rate(bps(moved, r.seconds)),
        r.error
            .as_ref()
            .map_or(String::new(), |e| format!(", ended by: {e}"))
    );
    for p in &r.paths {
        println!(
            "  [P{}] {}: received {}, sent {}, retx {}",
            p.path,
            p.remote,
            fmt_bytes(p.stream_bytes_received),
            fmt_bytes(p.stream_bytes_sent),
            p.retransmissions
        );
    }
    if r.bytes_received > 0 {
        println!("  {}", receiver_line("RCV", &r.receiver));
    }
}

async fn serve_connection(conn: Connection) -> ServerReport {
    let start = clock::now();
    let received = Arc::new(AtomicU64::new(0));
    let sent = Arc::new(AtomicU64::new(0));
    let mut streams = JoinSet::new();
    let mut error = None;
    let closed = loop {
        tokio::select! {
            accepted = conn.accept_bi() => match accepted {
                Ok((send, recv)) => {
                    streams.spawn(serve_stream(send, recv, received.clone(), sent.clone()));
                }
                Err(e) => break e,
            },
            Some(Ok(Err(e))) = streams.join_next(), if !streams.is_empty() => {
                tracing::warn!("stream failed: {e}");
                error.get_or_insert(e.to_string());
            }
        }
    };
    streams.abort_all();
    let stats = conn.all_path_stats();
    let receiver = ReceiverFigures::from(&conn.stats().reassembly);
    ServerReport {
        client: conn.remote_address(),
        seconds: start.elapsed().as_secs_f64(),
        bytes_received: received.load(Ordering::Relaxed),
        bytes_sent: sent.load(Ordering::Relaxed),
        paths: stats
            .iter()
            .map(|s| ServerPath {
                path: s.path.0,
                remote: s.remote,
                stream_bytes_received: s.stream_bytes_received,
                stream_bytes_sent: s.stream_bytes_sent,
                retransmissions: s.packets_lost,
            })
            .collect(),
        receiver,
        // The client ends a run with an application close of code 0; anything else is worth reporting.
        error: error.or_else(|| match closed {
            ConnectionError::ApplicationClosed { code, .. } if code.into_inner() == 0 => None,
            e => Some(e.to_string()),
        }),
    }
}

async fn serve_stream(
    mut send: SendStream,
    mut recv: RecvStream,
    received: Arc<AtomicU64>,
    sent: Arc<AtomicU64>,
) -> Result<(), PerfError> {
    let mut head = [0u8; Request::LEN];
    recv.read_exact(&mut head).await?;
    let req = Request::decode(&head)?;
    match req.direction {
        Direction::Upload => {
            let n = receive_pattern(&mut recv, &received).await?;
            send.write_all(&n.to_be_bytes()).await?;
            send.finish()?;
        }
        Direction::Download => {
            let start = clock::now();
            send_pattern(&mut send, req.amount, start, &sent).await?;
            send.finish()?;
        }
    }
    Ok(())
}
