//! `mpquic-perf`: an iperf-like throughput tool for multipath QUIC.
//!
//! The server ([`server`]) answers streams; the client ([`client`]) connects, opens one path per `--path`,
//! runs `-P` streams for `-t` seconds or `-n` bytes in either direction, and reports per path and in total
//! ([`report`]): data carried, goodput, congestion window, smoothed RTT and retransmissions per interval, and a
//! summary, as text or JSON in iperf3's layout ([`iperf3`]). Every byte is checked against a pattern ([`pattern`]), so a reported goodput is
//! data that arrived intact and in order. The protocol on the wire is in [`wire`].

pub mod cli;
pub mod client;
pub mod display;
pub mod iperf3;
pub mod pattern;
pub mod report;
pub mod server;
pub mod stream;
pub mod tls;
pub mod wire;

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use mpquic::proto::connection::TransportConfig;
use mpquic::runtime::{ConnectError, ConnectionError, ReadError, WriteError};

use cli::{Cli, ClientArgs, Command, ServerArgs};
use client::ClientOptions;
use display::Display;
use server::{Server, ServerOptions};
use wire::{Amount, Direction};

/// Everything that can end a perf run.
#[derive(Debug, thiserror::Error)]
pub enum PerfError {
    /// Inconsistent options.
    #[error("{0}")]
    Usage(String),
    /// A file or directory named on the command line cannot be used (certificate, key, CA, qlog
    /// directory); the message names the option and the file.
    #[error("{0}")]
    File(String),
    /// TLS set-up (the self-signed certificate, the system's roots).
    #[error("TLS: {0}")]
    Tls(String),
    /// A socket operation, naming the address.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, with the address (`cannot bind 10.0.0.9:4433 (--bind)`).
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Reading a stream through its `AsyncRead` interface failed.
    #[error("stream read: {0}")]
    StreamIo(#[from] std::io::Error),
    /// The handshake failed; the message says why in words (see [`tls::explain_handshake_failure`]).
    #[error("handshake failed: {0}")]
    Handshake(String),
    /// Starting the connection.
    #[error("connect: {0}")]
    Connect(#[from] ConnectError),
    /// The connection ended.
    #[error("connection: {0}")]
    Connection(#[from] ConnectionError),
    /// A stream write failed.
    #[error("write: {0}")]
    Write(#[from] WriteError),
    /// A stream read failed.
    #[error("read: {0}")]
    Read(#[from] ReadError),
    /// A malformed perf request.
    #[error("{0}")]
    Wire(#[from] wire::WireError),
    /// A byte did not match the pattern.
    #[error("data corrupted at stream offset {offset}")]
    Corrupt {
        /// First offset of the bad read.
        offset: u64,
    },
    /// The receiver got fewer bytes than were sent.
    #[error("receiver got {got} of {expected} bytes")]
    Short {
        /// Bytes sent.
        expected: u64,
        /// Bytes received.
        got: u64,
    },
    /// Something took too long.
    #[error("timed out waiting for the {0}")]
    Timeout(&'static str),
    /// A task failed.
    #[error("task: {0}")]
    Task(String),
}

/// The transport configuration of both roles: controller, scheduler, enough path IDs for `paths` paths, and
/// qlog output.
pub fn transport_config(
    cc: &str,
    scheduler: &str,
    paths: usize,
    qlog: Option<&Path>,
) -> Result<TransportConfig, PerfError> {
    let mut t = TransportConfig {
        congestion_controller: cc.to_owned(),
        scheduler: scheduler.to_owned(),
        ..TransportConfig::default()
    };
    let wanted = u32::try_from(paths.saturating_sub(1)).unwrap_or(u32::MAX);
    t.initial_max_path_id = t.initial_max_path_id.map(|m| m.max(wanted));
    if let Some(dir) = qlog {
        // Fail now rather than at the first connection if the directory cannot be made.
        std::fs::create_dir_all(dir).map_err(|e| {
            PerfError::File(format!(
                "--qlog {}: cannot create the directory: {e}",
                dir.display()
            ))
        })?;
        t.qlog = Some(mpquic::runtime::qlog_directory(dir));
    }
    Ok(t)
}

/// Runs the command line; returns the process's exit code: 0 success, 1 failure (a socket, the handshake,
/// the transfer), 2 bad usage (inconsistent options, or a file named by an option that cannot be used).
pub async fn main_with(cli: Cli) -> ExitCode {
    let result = match cli.command {
        Command::Server(a) => run_server(a).await,
        Command::Client(a) => run_client(a).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ (PerfError::Usage(_) | PerfError::File(_))) => {
            eprintln!("mpquic-perf: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("mpquic-perf: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run_server(a: ServerArgs) -> Result<(), PerfError> {
    let (tls, _) = tls::server(a.certificate.files())?;
    let server = Server::bind(
        ServerOptions {
            bind: a.bind,
            cc: a.transport.cc,
            scheduler: a.transport.scheduler,
            one_off: a.one_off,
            json: a.json,
            quiet: false,
        },
        tls,
        a.transport.qlog.as_deref(),
    )?;
    if !a.json {
        println!("mpquic-perf server listening on {}", server.local_addr());
    }
    tokio::select! {
        _ = server.serve() => Ok(()),
        r = tokio::signal::ctrl_c() => r.map_err(|source| PerfError::Io {
            what: "cannot wait for Ctrl-C".to_owned(),
            source,
        }),
    }
}

async fn run_client(a: ClientArgs) -> Result<(), PerfError> {
    cli::check_paths(a.server, &a.paths).map_err(PerfError::Usage)?;
    let tls = tls::client(a.trust.trust())?;
    let direction = if a.reverse {
        Direction::Download
    } else {
        Direction::Upload
    };
    let amount = match a.bytes {
        Some(n) => Amount::Bytes(n),
        None => Amount::Time(Duration::from_secs_f64(a.time)),
    };
    let options = ClientOptions {
        server: a.server,
        server_name: a.trust.name(),
        direction,
        amount,
        streams: a.parallel,
        paths: a.paths.iter().map(|p| (p.local, p.remote, p.backup)).collect(),
        cc: a.transport.cc.clone(),
        scheduler: a.transport.scheduler.clone(),
        interval: a.interval,
    };
    let mut display = if a.json {
        Display::quiet(direction)
    } else {
        let target = match amount {
            Amount::Bytes(n) => n,
            Amount::Time(d) => (d.as_secs_f64() * 10.0) as u64,
        };
        Display::text(
            direction,
            !a.no_progress && std::io::stdout().is_terminal(),
            Some(target),
        )
    };
    let result = client::run(&options, tls, a.transport.qlog.as_deref(), &mut display).await;
    display.finish();
    let report = result?;
    if a.json {
        let json = serde_json::to_string_pretty(&iperf3::to_iperf3(&report))
            .map_err(|e| PerfError::Task(e.to_string()))?;
        println!("{json}");
    } else {
        print!("{}", report::summary_text(&report));
    }
    Ok(())
}
