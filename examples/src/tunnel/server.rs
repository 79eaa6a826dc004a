//! The tunnel server: creates its TUN device, listens, and forwards for one client at a time; a new
//! connection replaces the current one (a client that restarted), and the server keeps listening after a
//! connection ends.

use std::sync::Arc;
use std::time::Duration;

use mpquic::proto::connection::ServerConfig;
use mpquic::runtime::{Connection, Endpoint, VarInt};
use tokio::task::JoinHandle;
use tun_rs::AsyncDevice;

use super::cli::{DeviceArgs, ServerArgs};
use super::session::{self, Role};
use super::{ALPN, TunnelError, device, estimated_tun_mtu, stop_signal, transport_config};
use crate::perf::{PerfError, tls};

/// Runs `mpquic-tunnel server`.
pub async fn run(a: ServerArgs) -> Result<(), TunnelError> {
    let ipv6 = a.bind.is_ipv6();
    let transport = transport_config(&a.device, 0, ipv6)?;
    let (tls, _) = tls::server_with_alpn(a.certificate.files(), ALPN)?;
    let tun = device::open(
        &a.device.tun,
        a.device.address,
        estimated_tun_mtu(a.device.mtu, ipv6),
    )?;
    let endpoint = Endpoint::server(ServerConfig { tls, transport }, a.bind).map_err(|source| {
        TunnelError::from(PerfError::Io {
            what: format!("cannot bind {} (--bind)", a.bind),
            source,
        })
    })?;
    if !a.device.json {
        println!(
            "mpquic-tunnel server listening on {}, device {}",
            endpoint.local_addr(),
            a.device.tun
        );
    }
    let result = tokio::select! {
        r = serve(&endpoint, tun, Arc::new(a.device)) => r,
        r = stop_signal() => r,
    };
    endpoint.close(VarInt::from_u32(0), b"server stopping");
    let _ = tokio::time::timeout(Duration::from_secs(1), endpoint.wait_idle()).await;
    result
}

async fn serve(
    endpoint: &Endpoint,
    tun: Arc<AsyncDevice>,
    device: Arc<DeviceArgs>,
) -> Result<(), TunnelError> {
    let mut current: Option<(Connection, JoinHandle<Result<(), TunnelError>>)> = None;
    while let Some(connecting) = endpoint.accept().await {
        let conn = match connecting.await {
            Ok(c) => c,
            Err(e) => {
                tracing::info!("handshake failed: {e}");
                continue;
            }
        };
        if let Some((old, task)) = current.take() {
            tracing::info!("{} replaces {}", conn.remote_address(), old.remote_address());
            old.close(VarInt::from_u32(0), b"replaced by a new connection");
            task.abort();
            let _ = task.await;
        }
        if !device.json {
            println!("client {} connected", conn.remote_address());
        }
        let (tun, device, name) = (tun.clone(), device.clone(), device.tun.clone());
        let c = conn.clone();
        let task = tokio::spawn(async move {
            match session::run(c, tun, &name, &device, Role::Server).await {
                Ok(_) => Ok(()),
                Err(e) => {
                    eprintln!("mpquic-tunnel: {e}");
                    Err(e)
                }
            }
        });
        current = Some((conn, task));
    }
    Ok(())
}
