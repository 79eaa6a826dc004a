//! What every stack shares: certificates and TLS configurations, the pattern data and its check, the
//! settings of a run (defaults or pinned), and the receiver's report.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Instant;

use bytes::Bytes;

pub(crate) use crate::tls::{Certs, Res, rustls_client, rustls_server};

const ALPN: &[u8] = b"bulk";
/// Length of the pattern buffer every written chunk is a slice of.
pub(crate) const PATTERN_LEN: usize = 1 << 20;
/// Largest chunk asked of `read_chunk`.
pub(crate) const READ_MAX: usize = 1 << 20;
/// The client's second address in the two-path runs (path 1; path 0 runs from 127.0.0.1).
pub(crate) const LOCAL2: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
/// Path IDs noq accepts in the two-path runs (mpquic's default initial_max_path_id 7: 8 paths).
pub(crate) const NOQ_PATHS: u32 = 8;

/// How each stack is configured in a run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    /// `None`: every stack at its defaults (its own controller; path-MTU discovery where the stack has it).
    /// `Some(m)`: every stack sends `m`-byte UDP payloads with path-MTU discovery off, and runs CUBIC.
    pub(crate) pinned_mtu: Option<u16>,
    /// mpquic's per-stream send buffer (`StreamsConfig::send_buffer`), if not the default.
    pub(crate) send_buffer: Option<u64>,
    /// mpquic's pacer cap (`RecoveryConfig::pacer_max_burst_packets`), if not the default.
    pub(crate) pacer_max_burst: Option<u32>,
    /// mpquic's scheduler, if not the default.
    pub(crate) scheduler: Option<&'static str>,
    /// Two-path run: noq offers multipath (mpquic always does by default) and sockets bind the wildcard
    /// address so that the client can send from [`LOCAL2`].
    pub(crate) two_paths: bool,
}

impl Settings {
    /// Where an endpoint binds: 127.0.0.1, or the wildcard address for the two-path runs.
    pub(crate) fn bind(&self) -> SocketAddr {
        if self.two_paths {
            SocketAddr::from(([0, 0, 0, 0], 0))
        } else {
            SocketAddr::from(([127, 0, 0, 1], 0))
        }
    }
}

/// The server's address to connect to: its port on 127.0.0.1 (it may be bound to the wildcard address).
pub(crate) fn server_addr(bound: SocketAddr) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], bound.port()))
}

/// A fresh self-signed certificate for `localhost` (ALPN `bulk`).
pub(crate) fn certs() -> Res<Certs> {
    crate::tls::certs(ALPN)
}

pub(crate) fn pattern() -> Bytes {
    (0..PATTERN_LEN)
        .map(|i| (i as u8).wrapping_mul(31) ^ (i >> 8) as u8)
        .collect::<Vec<u8>>()
        .into()
}

/// The next chunk to write at stream offset `sent`: a slice of the pattern, never copied.
pub(crate) fn next_chunk(pattern: &Bytes, sent: u64, total: u64) -> Bytes {
    let pos = (sent % PATTERN_LEN as u64) as usize;
    let left = usize::try_from(total - sent).unwrap_or(usize::MAX);
    let len = (PATTERN_LEN - pos).min(left);
    pattern.slice(pos..pos + len)
}

/// What the receiver saw.
pub(crate) struct Received {
    pub(crate) bytes: u64,
    /// Every byte matched the pattern (always true without verification).
    pub(crate) intact: bool,
    pub(crate) end: Instant,
}

/// Compares (with `verify`) one received chunk at stream offset `offset` with the pattern.
pub(crate) fn check(pattern: &Bytes, offset: u64, mut chunk: &[u8], verify: bool) -> bool {
    if !verify {
        return true;
    }
    let mut pos = (offset % PATTERN_LEN as u64) as usize;
    while !chunk.is_empty() {
        let n = chunk.len().min(PATTERN_LEN - pos);
        let (head, rest) = chunk.split_at(n);
        if pattern.get(pos..pos + n) != Some(head) {
            return false;
        }
        chunk = rest;
        pos = 0;
    }
    true
}
