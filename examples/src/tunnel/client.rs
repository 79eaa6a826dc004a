//! The tunnel client: creates its TUN device, connects to the server over the first path, opens the
//! others (as `mpquic-perf client` does), and forwards until the connection ends or it is stopped.

use std::time::Duration;

use mpquic::proto::connection::ClientConfig;
use mpquic::runtime::{Endpoint, VarInt};

use super::cli::ClientArgs;
use super::session::{self, Role};
use super::{ALPN, TunnelError, device, estimated_tun_mtu, stop_signal, transport_config};
use crate::perf::client::{bind_address_for, open_paths_for};
use crate::perf::{PerfError, cli::check_paths, tls};

/// Runs `mpquic-tunnel client`.
pub async fn run(a: ClientArgs) -> Result<(), TunnelError> {
    check_paths(a.server, &a.paths).map_err(TunnelError::Usage)?;
    let paths: Vec<_> = a.paths.iter().map(|p| (p.local, p.remote, p.backup)).collect();
    let local = bind_address_for(a.server, &paths)?;
    let ipv6 = a.server.is_ipv6();
    let transport = transport_config(&a.device, paths.len(), ipv6)?;
    let tls = tls::client_with_alpn(a.trust.trust(), ALPN)?;
    // The device first: missing privileges are reported before anything goes on the network.
    let tun = device::open(
        &a.device.tun,
        a.device.address,
        estimated_tun_mtu(a.device.mtu, ipv6),
    )?;
    let endpoint = Endpoint::client(local).map_err(|source| {
        TunnelError::from(PerfError::Io {
            what: format!("cannot bind the client socket to {local}"),
            source,
        })
    })?;
    let first_remote = paths.first().and_then(|p| p.1).unwrap_or(a.server);
    let connecting =
        endpoint.connect_with(&ClientConfig { tls, transport }, first_remote, &a.trust.name())?;
    let conn = tokio::time::timeout(Duration::from_secs(10), connecting)
        .await
        .map_err(|_| TunnelError::from(PerfError::Timeout("handshake")))?
        .map_err(|e| match tls::explain_handshake_failure(&e) {
            Some(words) => TunnelError::from(PerfError::Handshake(words)),
            None => TunnelError::Connection(e),
        })?;
    if !a.device.json {
        println!(
            "mpquic-tunnel client: connected to {first_remote}, {} path(s), {} mode, device {}",
            paths.len().max(1),
            match a.mode {
                super::cli::Mode::Datagram => "datagram",
                super::cli::Mode::Stream => "stream",
            },
            a.device.tun
        );
    }
    let opener = tokio::spawn(open_paths_for(
        conn.clone(),
        a.server,
        paths,
        endpoint.local_addr().port(),
    ));
    let result = tokio::select! {
        r = session::run(conn.clone(), tun, &a.device.tun, &a.device, Role::Client(a.mode)) => {
            r.and_then(|ended| Err(TunnelError::Connection(ended.reason)))
        }
        r = stop_signal() => r,
    };
    opener.abort();
    conn.close(VarInt::from_u32(0), b"client stopping");
    let _ = tokio::time::timeout(Duration::from_secs(1), endpoint.wait_idle()).await;
    result
}
