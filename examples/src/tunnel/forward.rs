//! The forwarding tasks of one connection, the same at both ends: TUN device → connection (with "too big"
//! answers), keep-alives, and connection → TUN device (through the reorder buffer in datagram mode), in
//! either [`Mode`](super::cli::Mode).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use mpquic::proto::connection::SendDatagramError;
use mpquic::runtime::{Connection, RecvStream, SendStream};
use tokio::io::AsyncReadExt;
use tun_rs::AsyncDevice;

use super::cli::MAX_LINK_MTU;
use super::framing::{self, FrameError};
use super::icmp::too_big_reply;
use super::reorder::{self, ReorderBuffer};
use super::stats::Counters;
use super::{TunnelError, device};
use crate::clock;

/// How often an idle end sends a keep-alive, well within the 30 s idle timeout.
pub const KEEPALIVE: Duration = Duration::from_secs(10);

/// The largest packet a TUN read can return (the IPv4 and IPv6 length fields are 16 bits).
const READ_BUFFER: usize = 65_536;

/// What the forwarding tasks share.
#[derive(Clone)]
pub struct Link {
    /// The connection.
    pub conn: Connection,
    /// The TUN device.
    pub tun: Arc<AsyncDevice>,
    /// Its name, for messages.
    pub tun_name: String,
    /// The largest packet the tunnel carries now (the TUN MTU).
    pub mtu: Arc<AtomicUsize>,
    /// Counters.
    pub counters: Arc<Counters>,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("tun_name", &self.tun_name)
            .field("mtu", &self.mtu)
            .field("counters", &self.counters)
            .finish_non_exhaustive()
    }
}

impl Link {
    /// Answers (or drops) a packet larger than `limit`.
    async fn too_big(&self, packet: &[u8], limit: usize) {
        match too_big_reply(packet, limit) {
            Some(reply) => {
                self.counters.too_big_answered.fetch_add(1, Ordering::Relaxed);
                if self.tun.send(&reply).await.is_err() {
                    self.counters.tun_write_failed.fetch_add(1, Ordering::Relaxed);
                }
            }
            None => {
                self.counters.too_big_dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Re-reads the connection's datagram limit after it refused a packet, and follows it with the TUN MTU.
    fn refresh_mtu(&self) -> usize {
        let Some(limit) = self.conn.max_datagram_size() else {
            // Closing, or no datagrams after all: the sender stops on its own at the next packet.
            return self.mtu.load(Ordering::Relaxed);
        };
        let limit = framing::tun_mtu(limit).min(usize::from(u16::MAX));
        let old = self.mtu.swap(limit, Ordering::Relaxed);
        if old != limit && limit >= framing::MIN_TUN_MTU {
            tracing::info!("datagram limit changed: TUN MTU {old} -> {limit}");
            if let Err(e) = device::set_mtu(
                &self.tun,
                &self.tun_name,
                u16::try_from(limit).unwrap_or(u16::MAX),
            ) {
                tracing::warn!("{e}");
            }
        }
        limit
    }

    /// The next packet from the TUN device that fits the tunnel's MTU; larger ones are answered (or dropped)
    /// as [`Link::too_big`] says and skipped.
    async fn next_packet<'b>(&self, buf: &'b mut [u8]) -> Result<&'b [u8], TunnelError> {
        loop {
            let n = self.read_tun(buf).await?;
            let limit = self.mtu.load(Ordering::Relaxed);
            if n > limit {
                self.too_big(buf.get(..n).unwrap_or_default(), limit).await;
                continue;
            }
            return Ok(buf.get(..n).unwrap_or_default());
        }
    }

    async fn read_tun(&self, buf: &mut [u8]) -> Result<usize, TunnelError> {
        let n = self.tun.recv(buf).await.map_err(|source| TunnelError::Io {
            what: format!("cannot read from {}", self.tun_name),
            source,
        })?;
        self.counters.from_tun.add(n);
        Ok(n)
    }

    async fn write_tun(&self, packet: &[u8]) {
        match self.tun.send(packet).await {
            Ok(_) => self.counters.to_tun.add(packet.len()),
            // The kernel refuses what is not an IP packet: count it, keep going.
            Err(e) => {
                tracing::debug!("TUN write of {} bytes refused: {e}", packet.len());
                self.counters.tun_write_failed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// TUN device → DATAGRAM frames, numbered from 0, until the connection closes.
pub async fn tun_to_datagrams(link: Link) -> Result<(), TunnelError> {
    let mut buf = vec![0u8; READ_BUFFER];
    let mut seq = 0u64;
    loop {
        let packet = link.next_packet(&mut buf).await?;
        match link.conn.send_datagram(framing::encode_datagram(seq, packet)) {
            Ok(()) => {
                seq += 1;
                link.counters.sent.add(packet.len());
            }
            Err(SendDatagramError::TooLarge) => {
                let limit = link.refresh_mtu();
                link.too_big(packet, limit).await;
            }
            Err(SendDatagramError::Closed) => return Ok(()),
            Err(SendDatagramError::Unsupported) => return Err(TunnelError::NoDatagrams),
        }
    }
}

/// Sends a keep-alive datagram every [`KEEPALIVE`] (both modes: the stream may be idle too), so that an idle
/// tunnel outlives the idle timeout.
pub async fn keepalive(conn: Connection) -> Result<(), TunnelError> {
    let mut tick = tokio::time::interval(KEEPALIVE);
    loop {
        tick.tick().await;
        match conn.send_datagram(framing::keepalive()) {
            Err(SendDatagramError::Closed) => return Ok(()),
            Err(SendDatagramError::Unsupported) => return Err(TunnelError::NoDatagrams),
            Ok(()) | Err(SendDatagramError::TooLarge) => {}
        }
    }
}

/// DATAGRAM frames → TUN device, through a reorder buffer of `window` packets (0: none) and `hold`.
pub async fn datagrams_to_tun(link: Link, window: usize, hold: Duration) -> Result<(), TunnelError> {
    let mut reorder = (window > 0).then(|| reorder::buffer(window, hold));
    let mut out: Vec<Bytes> = Vec::new();
    loop {
        let deadline = reorder.as_ref().and_then(ReorderBuffer::deadline);
        let datagram = tokio::select! {
            d = link.conn.read_datagram() => match d {
                Ok(d) => Some(d),
                Err(_) => return Ok(()),
            },
            () = sleep_until(deadline), if deadline.is_some() => None,
        };
        let now = clock::now();
        match (datagram, reorder.as_mut()) {
            (None, Some(r)) => r.expire(now, &mut out),
            (None, None) => {}
            (Some(d), r) => match framing::decode_datagram(&d) {
                Ok(None) => {}
                Ok(Some((seq, packet))) => {
                    link.counters.received.add(packet.len());
                    match r {
                        Some(r) => r.push(seq, packet, now, &mut out),
                        None => out.push(packet),
                    }
                }
                Err(e) => {
                    tracing::debug!("{e}");
                    link.counters.malformed.fetch_add(1, Ordering::Relaxed);
                }
            },
        }
        if let Some(r) = &reorder {
            if let Ok(mut s) = link.counters.reorder.lock() {
                *s = r.stats();
            }
        }
        for packet in out.drain(..) {
            link.write_tun(&packet).await;
        }
    }
}

async fn sleep_until(deadline: Option<std::time::Instant>) {
    if let Some(d) = deadline {
        tokio::time::sleep_until(d.into()).await;
    }
}

/// TUN device → length-prefixed records on `send`, until the stream or the connection ends.
pub async fn tun_to_stream(link: Link, mut send: SendStream) -> Result<(), TunnelError> {
    let mut buf = vec![0u8; READ_BUFFER];
    let mut record = Vec::with_capacity(READ_BUFFER + 2);
    loop {
        let packet = link.next_packet(&mut buf).await?;
        record.clear();
        framing::encode_record(packet, &mut record);
        if send.write_all(&record).await.is_err() {
            return Ok(());
        }
        link.counters.sent.add(packet.len());
    }
}

/// Length-prefixed records on `recv` → TUN device; a record longer than the MTU ends the tunnel.
pub async fn stream_to_tun(link: Link, mut recv: RecvStream) -> Result<(), TunnelError> {
    let mut buf = vec![0u8; READ_BUFFER];
    loop {
        let mut len = [0u8; 2];
        if recv.read_exact(&mut len).await.is_err() {
            return Ok(());
        }
        // The peer's TUN MTU may differ from ours, but it never exceeds the largest --mtu.
        let len = framing::check_record_len(u16::from_be_bytes(len), usize::from(MAX_LINK_MTU))
            .map_err(|e: FrameError| TunnelError::Peer(e.to_string()))?;
        if len == 0 {
            continue;
        }
        let Some(packet) = buf.get_mut(..len) else {
            return Err(TunnelError::Peer(format!("stream record of {len} bytes")));
        };
        if recv.read_exact(packet).await.is_err() {
            return Ok(());
        }
        link.counters.received.add(len);
        link.write_tun(packet).await;
    }
}
