//! The tunnel client: creates its TUN device, connects to the server over the first path, opens the
//! others (as `mpquic-perf client` does), and forwards until it is stopped. When the connection ends or
//! cannot be made (the server restarted, a network outage longer than the idle timeout), it connects again
//! after a wait that starts at 1 s and doubles up to `--reconnect-max`, keeping its TUN device, so that the
//! applications' routes and sockets survive; `--no-reconnect` exits instead. Errors that a new attempt
//! cannot fix (an untrusted certificate, a peer without datagram support, bad options) end the client.

use std::time::Duration;

use mpquic::proto::connection::ClientConfig;
use mpquic::runtime::{Connection, Endpoint, VarInt};

use super::cli::{ClientArgs, Mode};
use super::session::{self, Role};
use super::{ALPN, TunnelError, device, estimated_tun_mtu, stop_signal, transport_config};
use crate::perf::client::{bind_address_for, open_paths_for};
use crate::perf::{PerfError, cli::check_paths, tls};

/// The first wait before connecting again.
const FIRST_WAIT: Duration = Duration::from_secs(1);

/// Runs `mpquic-tunnel client`.
pub async fn run(a: ClientArgs) -> Result<(), TunnelError> {
    check_paths(a.server, &a.paths).map_err(TunnelError::Usage)?;
    let paths: Vec<_> = a.paths.iter().map(|p| (p.local, p.remote, p.backup)).collect();
    let local = bind_address_for(a.server, &paths)?;
    let ipv6 = a.server.is_ipv6();
    let transport = transport_config(&a.device, paths.len(), ipv6)?;
    let tls = tls::client_with_alpn(a.trust.trust(), ALPN)?;
    let config = ClientConfig { tls, transport };
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
    let max_wait = Duration::from_secs(a.reconnect_max);
    let mut wait = FIRST_WAIT;
    let mut current: Option<Connection> = None;
    let lifetime = async {
        loop {
            let conn = match connect(&endpoint, &config, first_remote, &a.trust.name()).await {
                Ok(c) => c,
                Err(e) if a.no_reconnect || !retryable(&e) => return Err(e),
                Err(e) => {
                    eprintln!("mpquic-tunnel: {e}; connecting again in {} s", wait.as_secs());
                    tokio::time::sleep(wait).await;
                    wait = next_wait(wait, max_wait);
                    continue;
                }
            };
            wait = FIRST_WAIT;
            current = Some(conn.clone());
            if !a.device.json {
                println!(
                    "mpquic-tunnel client: connected to {first_remote}, {} path(s), {} mode, device {}",
                    paths.len().max(1),
                    match a.mode {
                        Mode::Datagram => "datagram",
                        Mode::Stream => "stream",
                    },
                    a.device.tun
                );
            }
            let opener = tokio::spawn(open_paths_for(
                conn.clone(),
                a.server,
                paths.clone(),
                endpoint.local_addr().port(),
            ));
            let ended = session::run(conn, tun.clone(), &a.device.tun, &a.device, Role::Client(a.mode)).await;
            opener.abort();
            let e = match ended {
                Ok(ended) => TunnelError::Connection(ended.reason),
                Err(e) => e,
            };
            if a.no_reconnect || !retryable(&e) {
                return Err(e);
            }
            eprintln!("mpquic-tunnel: {e}; connecting again in {} s", wait.as_secs());
            tokio::time::sleep(wait).await;
            wait = next_wait(wait, max_wait);
        }
    };
    let result = tokio::select! {
        r = lifetime => r,
        r = stop_signal() => r,
    };
    if let Some(conn) = current {
        conn.close(VarInt::from_u32(0), b"client stopping");
    }
    let _ = tokio::time::timeout(Duration::from_secs(1), endpoint.wait_idle()).await;
    result
}

/// One connection attempt, with a 10 s limit on the handshake.
async fn connect(
    endpoint: &Endpoint,
    config: &ClientConfig,
    remote: std::net::SocketAddr,
    name: &str,
) -> Result<Connection, TunnelError> {
    let connecting = endpoint.connect_with(config, remote, name)?;
    tokio::time::timeout(Duration::from_secs(10), connecting)
        .await
        .map_err(|_| TunnelError::from(PerfError::Timeout("handshake")))?
        .map_err(|e| match tls::explain_handshake_failure(&e) {
            Some(words) => TunnelError::from(PerfError::Handshake(words)),
            None => TunnelError::Connection(e),
        })
}

/// Whether connecting again can help: the connection ended or timed out, or the peer broke the framing
/// (a new connection starts clean). Bad options, files, privileges, TLS trust failures and a peer that
/// does not take datagrams stay as they are.
pub fn retryable(e: &TunnelError) -> bool {
    match e {
        TunnelError::Connection(_) | TunnelError::Peer(_) | TunnelError::Io { .. } => true,
        TunnelError::Perf(PerfError::Timeout(_)) => true,
        TunnelError::Usage(_)
        | TunnelError::File(_)
        | TunnelError::Privilege(_)
        | TunnelError::Perf(_)
        | TunnelError::Connect(_)
        | TunnelError::NoDatagrams => false,
    }
}

/// The wait after `wait`: doubled, at most `max`.
pub fn next_wait(wait: Duration, max: Duration) -> Duration {
    wait.saturating_mul(2).min(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_the_maximum() {
        let max = Duration::from_secs(30);
        let mut w = FIRST_WAIT;
        let mut seen = Vec::new();
        for _ in 0..7 {
            seen.push(w.as_secs());
            w = next_wait(w, max);
        }
        assert_eq!(seen, [1, 2, 4, 8, 16, 30, 30]);
        assert_eq!(
            next_wait(Duration::from_secs(1), Duration::from_secs(1)),
            Duration::from_secs(1)
        );
    }

    #[test]
    fn only_what_a_new_attempt_can_fix_is_retried() {
        assert!(retryable(&TunnelError::Perf(PerfError::Timeout("handshake"))));
        assert!(retryable(&TunnelError::Peer("bad record".into())));
        assert!(!retryable(&TunnelError::Perf(PerfError::Handshake(
            "untrusted".into()
        ))));
        assert!(!retryable(&TunnelError::NoDatagrams));
        assert!(!retryable(&TunnelError::Usage("x".into())));
        assert!(!retryable(&TunnelError::Privilege("x".into())));
    }
}
