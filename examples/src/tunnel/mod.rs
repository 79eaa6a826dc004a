//! `mpquic-tunnel`: a multipath IP tunnel over QUIC, which bonds several paths for applications that know
//! nothing of QUIC.
//!
//! Each end creates a TUN device ([`device`]); the client connects to the server over every `--path` (one
//! multipath QUIC connection, draft-ietf-quic-multipath), and each IP packet read from a TUN device travels to
//! the other end in one QUIC DATAGRAM frame (RFC 9221) with a sequence number, or as a length-prefixed record
//! on one stream (`--mode stream`): see [`framing`] for the bytes and the MTU arithmetic. The scheduler and
//! congestion controller of the connection decide which path carries each packet. The receiving end can put
//! packets back in order ([`reorder`]) before writing them to its TUN device. A packet too large for one
//! DATAGRAM frame is answered the way a router answers it, with ICMP "fragmentation needed" or ICMPv6 "packet
//! too big" ([`icmp`]), so that the sender's path MTU discovery adapts.
//!
//! Modules: [`cli`] (options), [`device`] (the TUN device), [`framing`], [`reorder`], [`icmp`], [`forward`]
//! (the tasks that move packets), [`session`] (one connection's life and status reports), [`stats`],
//! [`client`], [`server`].

pub mod cli;
pub mod client;
pub mod device;
pub mod forward;
pub mod framing;
pub mod icmp;
pub mod reorder;
pub mod server;
pub mod session;
pub mod stats;

use std::process::ExitCode;

use mpquic::proto::connection::TransportConfig;
use mpquic::runtime::{ConnectError, ConnectionError};

use crate::perf::PerfError;
use cli::{Cli, Command, DeviceArgs};

/// The application protocol (ALPN) of the tunnel.
pub const ALPN: &[u8] = b"mpquic-tunnel";

/// Everything that can end a tunnel.
#[derive(Debug, thiserror::Error)]
pub enum TunnelError {
    /// Inconsistent options.
    #[error("{0}")]
    Usage(String),
    /// A file named by an option cannot be used (certificate, key, CA, qlog directory).
    #[error("{0}")]
    File(String),
    /// The process may not create a TUN device (no CAP_NET_ADMIN, no /dev/net/tun).
    #[error("{0}")]
    Privilege(String),
    /// A socket or device operation.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Certificates, sockets, the handshake: the errors `mpquic-perf` reports the same way.
    #[error("{0}")]
    Perf(PerfError),
    /// Starting the connection.
    #[error("connect: {0}")]
    Connect(#[from] ConnectError),
    /// The connection ended.
    #[error("connection ended: {0}")]
    Connection(#[from] ConnectionError),
    /// The peer does not accept DATAGRAM frames.
    #[error("the peer does not accept QUIC datagrams (RFC 9221); is it an mpquic-tunnel?")]
    NoDatagrams,
    /// The peer broke the tunnel's framing.
    #[error("peer: {0}")]
    Peer(String),
}

impl From<PerfError> for TunnelError {
    fn from(e: PerfError) -> Self {
        match e {
            PerfError::Usage(s) => TunnelError::Usage(s),
            PerfError::File(s) => TunnelError::File(s),
            other => TunnelError::Perf(other),
        }
    }
}

/// The transport configuration of both ends: controller, scheduler, path IDs and qlog as in `mpquic-perf`,
/// packets of the UDP payload that `--mtu` leaves ([`framing::udp_payload`]) on every path, and no path MTU
/// search (the TUN MTU is derived from the packet size, so it must not change under the tunnel's feet).
pub fn transport_config(
    device: &DeviceArgs,
    paths: usize,
    ipv6: bool,
) -> Result<TransportConfig, TunnelError> {
    let mut t = crate::perf::transport_config(
        &device.transport.cc,
        &device.transport.scheduler,
        paths,
        device.transport.qlog.as_deref(),
    )?;
    let payload = framing::udp_payload(usize::from(device.mtu), ipv6);
    t.max_udp_payload = u16::try_from(payload).unwrap_or(u16::MAX);
    t.mtu_discovery = None;
    Ok(t)
}

/// The TUN MTU expected before the handshake, for `--mtu` over IPv4 or IPv6 (the connection's own figure
/// replaces it once connected).
pub fn estimated_tun_mtu(link_mtu: u16, ipv6: bool) -> u16 {
    let mtu = framing::tun_mtu(framing::datagram_payload(framing::udp_payload(
        usize::from(link_mtu),
        ipv6,
    )));
    u16::try_from(mtu).unwrap_or(u16::MAX)
}

/// Runs the command line; returns the exit code: 0 after Ctrl-C or SIGTERM, 1 on a failure at run time, 2 for
/// bad usage or missing privileges.
pub async fn main_with(cli: Cli) -> ExitCode {
    let result = match cli.command {
        Command::Server(a) => server::run(a).await,
        Command::Client(a) => client::run(a).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ (TunnelError::Usage(_) | TunnelError::File(_) | TunnelError::Privilege(_))) => {
            eprintln!("mpquic-tunnel: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("mpquic-tunnel: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Waits for Ctrl-C or SIGTERM.
pub async fn stop_signal() -> Result<(), TunnelError> {
    let io = |what: &str| {
        let what = what.to_owned();
        move |source| TunnelError::Io { what, source }
    };
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(io("cannot wait for SIGTERM"))?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.map_err(io("cannot wait for Ctrl-C")),
        _ = term.recv() => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_follows_the_documented_arithmetic() {
        assert_eq!(estimated_tun_mtu(1500, false), 1432);
        assert_eq!(estimated_tun_mtu(1500, true), 1412);
        // The smallest --mtu: 1280 − 28 − 29 − 3 − 8 = 1212.
        assert_eq!(estimated_tun_mtu(1280, false), 1212);
    }
}
