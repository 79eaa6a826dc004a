//! One connection's life at either end: set the TUN MTU from the connection's datagram limit, run the
//! forwarding tasks of the chosen mode, print a status report every `--interval`, and end with the
//! connection (or the first task that fails).
//!
//! The client chooses the mode. In stream mode it opens one bidirectional stream at once and writes an empty
//! record on it; the server forwards in datagram mode until such a stream arrives, then moves its TUN → peer
//! direction onto the stream. Both ends always read datagrams (keep-alives travel as datagrams).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mpquic::runtime::{Connection, ConnectionError};
use tokio::task::{AbortHandle, JoinSet};
use tun_rs::AsyncDevice;

use super::cli::{DeviceArgs, Mode};
use super::forward::{self, Link};
use super::stats::{Counters, Reporter, Snapshot, status_text};
use super::{TunnelError, device, framing};
use crate::clock;

/// Which end runs the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The client, in its mode.
    Client(Mode),
    /// The server, which follows the client's mode.
    Server,
}

/// How a session ended.
#[derive(Debug)]
pub struct Ended {
    /// The counters at the end.
    pub counters: Snapshot,
    /// Why the connection ended.
    pub reason: ConnectionError,
}

/// Sets the TUN MTU from the connection's datagram limit; returns it.
fn apply_mtu(conn: &Connection, tun: &AsyncDevice, name: &str) -> Result<usize, TunnelError> {
    let limit = conn.max_datagram_size().ok_or(TunnelError::NoDatagrams)?;
    let mtu = framing::tun_mtu(limit).min(usize::from(u16::MAX));
    if mtu < framing::MIN_TUN_MTU {
        return Err(TunnelError::Usage(format!(
            "the connection carries datagrams of at most {limit} bytes: a TUN MTU of {mtu} is below {}; raise \
             --mtu",
            framing::MIN_TUN_MTU
        )));
    }
    let mtu16 = u16::try_from(mtu).unwrap_or(u16::MAX);
    if tun.mtu().ok() != Some(mtu16) {
        device::set_mtu(tun, name, mtu16)?;
    }
    Ok(mtu)
}

/// Runs the tunnel over `conn` until the connection ends or a task fails.
pub async fn run(
    conn: Connection,
    tun: Arc<AsyncDevice>,
    tun_name: &str,
    device: &DeviceArgs,
    role: Role,
) -> Result<Ended, TunnelError> {
    let mtu = apply_mtu(&conn, &tun, tun_name)?;
    tracing::info!("tunnel up on {tun_name}, MTU {mtu}");
    let link = Link {
        conn: conn.clone(),
        tun,
        tun_name: tun_name.to_owned(),
        mtu: Arc::new(AtomicUsize::new(mtu)),
        counters: Arc::new(Counters::default()),
    };
    let mut tasks = JoinSet::new();
    tasks.spawn(forward::keepalive(conn.clone()));
    tasks.spawn(forward::datagrams_to_tun(
        link.clone(),
        device.reorder_window,
        device.hold(),
    ));
    let mut datagram_sender: Option<AbortHandle> = None;
    match role {
        Role::Client(Mode::Stream) => {
            let (mut send, recv) = conn.open_bi().await?;
            let mut hello = Vec::new();
            framing::encode_record(&[], &mut hello);
            send.write_all(&hello)
                .await
                .map_err(|e| TunnelError::Peer(format!("cannot open the packet stream: {e}")))?;
            tasks.spawn(forward::tun_to_stream(link.clone(), send));
            tasks.spawn(forward::stream_to_tun(link.clone(), recv));
        }
        Role::Client(Mode::Datagram) | Role::Server => {
            datagram_sender = Some(tasks.spawn(forward::tun_to_datagrams(link.clone())));
        }
    }
    let mut await_stream = role == Role::Server;

    let start = clock::now();
    let mut reporter = Reporter::default();
    let period = Duration::from_secs_f64(if device.interval > 0.0 {
        device.interval
    } else {
        3600.0
    });
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    let report = |reporter: &mut Reporter, end: Option<&ConnectionError>| {
        let status = reporter.status(
            start.elapsed().as_secs_f64(),
            link.counters.snapshot(),
            &conn.all_path_stats(),
            link.mtu.load(Ordering::Relaxed),
        );
        if device.json {
            let mut v = serde_json::to_value(&status).unwrap_or_default();
            if let (Some(e), Some(map)) = (end, v.as_object_mut()) {
                map.insert("end".to_owned(), serde_json::Value::String(e.to_string()));
            }
            println!("{v}");
        } else {
            print!("{}", status_text(&status));
            if let Some(e) = end {
                println!("connection ended: {e}");
            }
        }
    };

    let reason = loop {
        tokio::select! {
            reason = conn.closed() => break reason,
            done = tasks.join_next() => match done {
                Some(Ok(Err(e))) => {
                    conn.close(mpquic::runtime::VarInt::from_u32(1), e.to_string().as_bytes());
                    return Err(e);
                }
                Some(Ok(Ok(()))) | Some(Err(_)) => {}
                None => break conn.closed().await,
            },
            accepted = conn.accept_bi(), if await_stream => {
                await_stream = false;
                if let Ok((send, recv)) = accepted {
                    tracing::info!("the client chose stream mode");
                    if let Some(h) = datagram_sender.take() {
                        h.abort();
                    }
                    tasks.spawn(forward::tun_to_stream(link.clone(), send));
                    tasks.spawn(forward::stream_to_tun(link.clone(), recv));
                }
            }
            _ = ticker.tick(), if device.interval > 0.0 => report(&mut reporter, None),
        }
    };
    tasks.abort_all();
    report(&mut reporter, Some(&reason));
    Ok(Ended {
        counters: link.counters.snapshot(),
        reason,
    })
}
