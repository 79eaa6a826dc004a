//! An in-memory client/server pair for tests and fuzzing (`cfg(test)` or feature `testing`): a client
//! endpoint and a server endpoint joined by a link with a fixed one-way delay, optional seeded random loss
//! and the impairments the connection tests need (NAT rebinding, black holes, spoofed sources, ECN
//! bleaching and marking). Time is virtual: it only advances to the next timer or arrival.
//!
//! The connection tests (`proto::connection::tests`), the fuzz targets (the `mpquic-fuzz` crate) and the
//! qlog compatibility test build on [`Pair`]. Each side of the pair is a [`Node`]: the always-compiled
//! sans-IO [`Host`](crate::proto::host::Host) (an endpoint and its connections: routing, timers, endpoint
//! events, transmits), which the simulator (`mpquic-netsim`) also drives for both ends of every flow, plus
//! what only tests want (events collected in order, a panicking accessor, a check of the deferred-accept
//! contract). The link, its impairments and the virtual clock are this module's own; the simulator has
//! its own network of links and queues instead.
//!
//! Nothing here is used by the library itself.

mod node;
mod pair;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

pub use node::{Node, Outgoing};
pub use pair::{Captured, ClientTransmit, Pair};

use crate::proto::connection::ConnectError;
use crate::proto::connection::{ClientConfig, ServerConfig, TransportConfig};
use crate::proto::crypto::{CipherSuite, SelfSigned, TlsOptions, client_config, server_config};

/// The client's address.
pub const CLIENT: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 4433);
/// The client's second address (its second interface, for a second path).
pub const CLIENT2: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 1, 1)), 4433);
/// The server's address.
pub const SERVER: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), 443);

/// Why a pair could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The self-signed certificate could not be made.
    #[error("certificate: {0}")]
    Certificate(#[from] rcgen::Error),
    /// rustls refused the configuration.
    #[error("TLS configuration: {0}")]
    Tls(#[from] rustls::Error),
    /// The client endpoint refused to connect.
    #[error("connect: {0}")]
    Connect(#[from] ConnectError),
}

/// Client and server configurations over a fresh self-signed certificate for `localhost`, ALPN `mpq`, with
/// `transport` on both sides and, when given, only the cipher suite `suite`.
pub fn configs(
    suite: Option<CipherSuite>,
    transport: TransportConfig,
) -> Result<(ClientConfig, ServerConfig), HarnessError> {
    let cert = SelfSigned::generate(&["localhost"])?;
    let mut opts = TlsOptions::with_alpn(b"mpq");
    if let Some(s) = suite {
        opts.cipher_suites = vec![s];
    }
    let roots = cert.root_store()?;
    let server = server_config(vec![cert.cert.clone()], cert.key.clone_key(), &opts)?;
    let client = client_config(roots, &opts)?;
    Ok((
        ClientConfig {
            tls: client,
            transport: transport.clone(),
        },
        ServerConfig {
            tls: server,
            transport,
        },
    ))
}
