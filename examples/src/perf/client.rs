//! The perf client: connects, opens the requested paths, runs the streams, samples every path's statistics
//! at each interval and builds the [`Report`].

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mpquic::proto::connection::{ClientConfig, TransportConfig};
use mpquic::runtime::{Connection, Endpoint, PathEvent, PathStatus, VarInt};
use tokio::io::AsyncReadExt;
use tokio::sync::Mutex;
use tokio::task::JoinSet;

use super::display::Display;
use super::pattern::MAX_CHUNK;
use super::report::{
    Interval, PathEventRecord, ReceiverFigures, Report, Sampler, TestParams, Total, bps, summarize,
};
use super::stream::{receive_pattern, send_pattern};
use super::wire::{Amount, Direction, Request};
use super::{PerfError, transport_config};
use crate::clock;

/// What the client does, independent of the command line.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// The server's address (the handshake path's remote unless the first path names one).
    pub server: SocketAddr,
    /// Name the server's certificate is checked against.
    pub server_name: String,
    /// Upload or download.
    pub direction: Direction,
    /// Total bytes (split over the streams) or duration.
    pub amount: Amount,
    /// Parallel streams.
    pub streams: u16,
    /// `(local, remote, backup)` per path; empty: one path to `server`.
    pub paths: Vec<(SocketAddr, Option<SocketAddr>, bool)>,
    /// Controller, scheduler (this side's).
    pub cc: String,
    /// Scheduler spec.
    pub scheduler: String,
    /// Seconds between interval samples (0: none).
    pub interval: f64,
}

/// Where the client's endpoint binds: one socket serves every path, so paths that share one local address
/// get that address, and paths from several addresses get the wildcard address of their family.
fn bind_address(o: &ClientOptions) -> Result<SocketAddr, PerfError> {
    bind_address_for(o.server, &o.paths)
}

/// [`bind_address`] for a server address and `(local, remote, backup)` paths (shared with `mpquic-tunnel`).
pub fn bind_address_for(
    server: SocketAddr,
    paths: &[(SocketAddr, Option<SocketAddr>, bool)],
) -> Result<SocketAddr, PerfError> {
    let v4 = server.is_ipv4();
    let unspecified = if v4 {
        IpAddr::V4(Ipv4Addr::UNSPECIFIED)
    } else {
        IpAddr::V6(Ipv6Addr::UNSPECIFIED)
    };
    let Some((first, ..)) = paths.first() else {
        return Ok(SocketAddr::new(unspecified, 0));
    };
    let ports: Vec<u16> = paths.iter().map(|p| p.0.port()).filter(|&p| p != 0).collect();
    if ports.windows(2).any(|w| w.first() != w.last()) {
        return Err(PerfError::Usage(
            "paths share one UDP socket: give every LOCAL the same port, or none".to_owned(),
        ));
    }
    let port = ports.first().copied().unwrap_or(0);
    if paths.iter().any(|p| p.0.is_ipv4() != v4) {
        return Err(PerfError::Usage(
            "every path's LOCAL must be of the server address's family".to_owned(),
        ));
    }
    if paths.iter().all(|p| p.0.ip() == first.ip()) {
        Ok(SocketAddr::new(first.ip(), port))
    } else {
        Ok(SocketAddr::new(unspecified, port))
    }
}

/// Runs a transfer and returns its report; `display` shows intervals and progress as they happen.
pub async fn run(
    options: &ClientOptions,
    tls: Arc<rustls::ClientConfig>,
    qlog: Option<&std::path::Path>,
    display: &mut Display,
) -> Result<Report, PerfError> {
    let transport: TransportConfig =
        transport_config(&options.cc, &options.scheduler, options.paths.len(), qlog)?;
    let local = bind_address(options)?;
    let endpoint = Endpoint::client(local).map_err(|source| PerfError::Io {
        what: if options.paths.is_empty() {
            format!("cannot bind the client socket to {local}")
        } else {
            format!("cannot bind the client socket to {local} (the LOCAL of --path)")
        },
        source,
    })?;
    let first_remote = options.paths.first().and_then(|p| p.1).unwrap_or(options.server);
    let t0 = clock::now();
    let connecting = endpoint.connect_with(
        &ClientConfig { tls, transport },
        first_remote,
        &options.server_name,
    )?;
    let conn = tokio::time::timeout(Duration::from_secs(10), connecting)
        .await
        .map_err(|_| PerfError::Timeout("handshake"))?
        .map_err(|e| match super::tls::explain_handshake_failure(&e) {
            Some(words) => PerfError::Handshake(words),
            None => PerfError::Connection(e),
        })?;
    let handshake_ms = t0.elapsed().as_secs_f64() * 1e3;
    let start = clock::now();
    let started_unix = clock::unix_now();
    let events = Arc::new(Mutex::new(Vec::new()));
    let watcher = tokio::spawn(watch_paths(conn.clone(), start, events.clone()));
    let opener = tokio::spawn(open_paths(
        conn.clone(),
        options.clone(),
        endpoint.local_addr().port(),
    ));

    let moved = Arc::new(AtomicU64::new(0));
    let mut streams = JoinSet::new();
    for i in 0..options.streams {
        let amount = match options.amount {
            Amount::Bytes(n) => {
                let k = u64::from(options.streams);
                Amount::Bytes(n / k + u64::from(u64::from(i) < n % k))
            }
            time => time,
        };
        let req = Request {
            direction: options.direction,
            amount,
        };
        streams.spawn(transfer(conn.clone(), req, start, moved.clone()));
    }

    let mut sampler = Sampler::new(options.direction);
    let mut intervals = Vec::new();
    let mut last = 0.0f64;
    let tick = Duration::from_millis(100);
    let mut total = 0u64;
    let mut verified = true;
    let mut first_error = None;
    loop {
        tokio::select! {
            done = streams.join_next() => match done {
                None => break,
                Some(Ok(Ok(n))) => total += n,
                Some(Ok(Err(e))) => {
                    verified &= !matches!(e, PerfError::Corrupt { .. });
                    first_error.get_or_insert(e);
                    streams.abort_all();
                }
                Some(Err(e)) => { first_error.get_or_insert(PerfError::Task(e.to_string())); }
            },
            () = tokio::time::sleep(tick) => {}
        }
        let elapsed = start.elapsed().as_secs_f64();
        let so_far = moved.load(Ordering::Relaxed);
        let position = match options.amount {
            Amount::Bytes(_) => so_far,
            Amount::Time(_) => (elapsed * 10.0) as u64,
        };
        display.progress(elapsed, &conn.all_path_stats(), position);
        if options.interval > 0.0 && elapsed - last >= options.interval {
            let paths = sampler.sample(&conn.all_path_stats(), elapsed - last);
            let i = Interval::of(
                last,
                elapsed,
                paths,
                ReceiverFigures::from(&conn.stats().reassembly),
            );
            display.interval(&i);
            intervals.push(i);
            last = elapsed;
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    // One snapshot for the last interval and the summary, so that the intervals add up to the summary's
    // path figures exactly (an acknowledgement arriving in between would otherwise count in one only).
    let stats = conn.all_path_stats();
    // The last, shorter interval: from the last sample to the end of the transfer (every byte is delivered by
    // now), unless it is empty.
    if options.interval > 0.0 && seconds > last {
        let paths = sampler.sample(&stats, seconds - last);
        if paths.iter().any(|p| p.bytes > 0) {
            let i = Interval::of(
                last,
                seconds,
                paths,
                ReceiverFigures::from(&conn.stats().reassembly),
            );
            display.interval(&i);
            intervals.push(i);
        }
    }
    opener.abort();
    watcher.abort();
    let receiver = ReceiverFigures::from(&conn.stats().reassembly);
    let multipath = conn.multipath();
    conn.close(VarInt::from_u32(0), b"done");
    let _ = tokio::time::timeout(Duration::from_secs(2), endpoint.wait_idle()).await;
    if let Some(e) = first_error {
        return Err(e);
    }
    let events = events.lock().await.clone();
    Ok(Report {
        server: options.server,
        started_unix,
        test: TestParams {
            duration: match options.amount {
                Amount::Time(d) => d.as_secs_f64(),
                Amount::Bytes(_) => 0.0,
            },
            bytes: match options.amount {
                Amount::Bytes(n) => n,
                Amount::Time(_) => 0,
            },
            blksize: MAX_CHUNK as u64,
            interval: options.interval,
        },
        direction: options.direction,
        streams: options.streams,
        cc: options.cc.clone(),
        scheduler: options.scheduler.clone(),
        multipath,
        handshake_ms,
        intervals,
        events,
        paths: summarize(&stats, options.direction, seconds),
        total: Total {
            bytes: total,
            seconds,
            goodput_bps: bps(total, seconds),
            verified,
        },
        receiver,
    })
}

/// Opens every path after the first (each waits for the server's connection IDs of its path ID).
async fn open_paths(conn: Connection, options: ClientOptions, port: u16) {
    open_paths_for(conn, options.server, options.paths, port).await;
}

/// Opens every path of `paths` after the first from the endpoint's `port`, each to its remote or `server`
/// (shared with `mpquic-tunnel`).
pub async fn open_paths_for(
    conn: Connection,
    server: SocketAddr,
    paths: Vec<(SocketAddr, Option<SocketAddr>, bool)>,
    port: u16,
) {
    for &(local, remote, backup) in paths.iter().skip(1) {
        let local = SocketAddr::new(local.ip(), port);
        let remote = remote.unwrap_or(server);
        let status = if backup {
            PathStatus::Backup
        } else {
            PathStatus::Available
        };
        if let Err(e) = conn
            .open_path_when_ready(Some(local), remote, status, Duration::from_secs(5))
            .await
        {
            tracing::warn!("path {local} -> {remote} not opened: {e}");
        }
    }
}

async fn watch_paths(conn: Connection, start: Instant, out: Arc<Mutex<Vec<PathEventRecord>>>) {
    while let Ok(e) = conn.path_event().await {
        let event = match e {
            PathEvent::Opened { .. } => "opened",
            PathEvent::Validated { .. } => "validated",
            PathEvent::StatusChanged {
                status: PathStatus::Backup,
                ..
            } => "backup",
            PathEvent::StatusChanged { .. } => "available",
            PathEvent::Abandoned { .. } => "abandoned",
            PathEvent::Closed { .. } => "closed",
            PathEvent::PeerAddressChanged { .. } => "peer-address-changed",
        };
        let path = e.path();
        out.lock().await.push(PathEventRecord {
            at: start.elapsed().as_secs_f64(),
            event: event.to_owned(),
            path: path.0,
        });
    }
}

/// One stream's transfer; returns the bytes the receiver got, checked.
async fn transfer(
    conn: Connection,
    req: Request,
    start: Instant,
    moved: Arc<AtomicU64>,
) -> Result<u64, PerfError> {
    let (mut send, mut recv) = conn.open_bi().await?;
    send.write_all(&req.encode()).await?;
    match req.direction {
        Direction::Upload => {
            let offset = send_pattern(&mut send, req.amount, start, &moved).await?;
            send.finish()?;
            let mut count = [0u8; 8];
            recv.read_exact(&mut count).await?;
            let received = u64::from_be_bytes(count);
            if received != offset {
                return Err(PerfError::Short {
                    expected: offset,
                    got: received,
                });
            }
            Ok(received)
        }
        Direction::Download => {
            send.finish()?;
            let received = receive_pattern(&mut recv, &moved).await?;
            if let Amount::Bytes(n) = req.amount {
                if received != n {
                    return Err(PerfError::Short {
                        expected: n,
                        got: received,
                    });
                }
            }
            Ok(received)
        }
    }
}
