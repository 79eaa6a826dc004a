//! The tokio runtime: sockets, timers and tasks around the sans-IO core ([`crate::proto`]), with an API
//! close to quinn's.
//!
//! - [`Endpoint`]: one UDP socket (through `quinn-udp`: GSO/GRO batching, ECN, destination addresses),
//!   [`Endpoint::client`] / [`Endpoint::server`], [`Endpoint::connect`] → [`Connecting`] → [`Connection`],
//!   [`Endpoint::accept`], [`Endpoint::close`] and [`Endpoint::wait_idle`] for a clean shutdown.
//! - [`Connection`]: [`open_bi`](Connection::open_bi), [`open_uni`](Connection::open_uni),
//!   [`accept_bi`](Connection::accept_bi), [`accept_uni`](Connection::accept_uni),
//!   [`send_datagram`](Connection::send_datagram), [`read_datagram`](Connection::read_datagram),
//!   [`close`](Connection::close), [`closed`](Connection::closed), [`stats`](Connection::stats),
//!   [`remote_address`](Connection::remote_address).
//! - [`SendStream`] implements tokio's `AsyncWrite` (plus [`finish`](SendStream::finish),
//!   [`reset`](SendStream::reset)); [`RecvStream`] implements `AsyncRead` (plus
//!   [`read_to_end`](RecvStream::read_to_end), [`stop`](RecvStream::stop)).
//!
//! # Architecture
//! Each endpoint has one receive task that routes datagrams through the core endpoint; each connection has
//! one driver task owning its timer (`sleep_until(poll_timeout)`) and its transmits. The core connection sits
//! behind an `Arc<Mutex<..>>` shared with the application handles, which register wakers for stream
//! readiness, accepts, datagrams and the end of the connection. The runtime is the one place that reads the
//! clock (`clock.rs`) and seeds the core's random generators from the operating system.
//!
//! One socket per endpoint is enough for a single path. Multipath (issue 6) needs the local address each
//! datagram arrived on, to map it to a path: quinn-udp's `RecvMeta::dst_ip` gives it and is already passed to
//! the core as the datagram's local address.
//!
//! # Example
//! ```
//! use std::sync::Arc;
//! use mpquic::proto::connection::{ClientConfig, ServerConfig, TransportConfig};
//! use mpquic::proto::crypto::{client_config, server_config, TlsOptions};
//! use mpquic::proto::VarInt;
//! use mpquic::runtime::Endpoint;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // A self-signed certificate, trusted explicitly by the client.
//! let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()])?;
//! let cert_der = cert.cert.der().clone();
//! let key = rustls::pki_types::PrivatePkcs8KeyDer::from(cert.signing_key.serialize_der());
//! let options = TlsOptions::with_alpn(b"example");
//! let server_tls = server_config(vec![cert_der.clone()], key.into(), &options)?;
//! let mut roots = rustls::RootCertStore::empty();
//! roots.add(cert_der)?;
//! let client_tls = client_config(roots, &options)?;
//!
//! let server = Endpoint::server(
//!     ServerConfig { tls: server_tls, transport: TransportConfig::default() },
//!     "127.0.0.1:0".parse()?,
//! )?;
//! let server_addr = server.local_addr();
//! tokio::spawn(async move {
//!     while let Some(connecting) = server.accept().await {
//!         let Ok(conn) = connecting.await else { continue };
//!         // Echo every bidirectional stream.
//!         while let Ok((mut send, mut recv)) = conn.accept_bi().await {
//!             let _ = tokio::io::copy(&mut recv, &mut send).await;
//!             let _ = send.finish();
//!         }
//!     }
//! });
//!
//! let client = Endpoint::client("127.0.0.1:0".parse()?)?;
//! client.set_default_client_config(ClientConfig { tls: client_tls, transport: TransportConfig::default() });
//! // (`ConnectionError` does not implement `std::error::Error` yet, hence the `{:?}`.)
//! let conn = client.connect(server_addr, "localhost")?.await.map_err(|e| format!("{e:?}"))?;
//! let (mut send, mut recv) = conn.open_bi().await.map_err(|e| format!("{e:?}"))?;
//! send.write_all(b"hello").await?;
//! send.finish()?;
//! let echoed = recv.read_to_end(1024).await?;
//! assert_eq!(echoed, b"hello");
//! conn.close(VarInt::from_u32(0), b"done");
//! client.wait_idle().await;
//! # Ok(())
//! # }
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! #     tokio::runtime::Builder::new_multi_thread().enable_all().build()?.block_on(run())
//! # }
//! ```

mod clock;
mod connection;
mod endpoint;
mod socket;
mod streams;

pub use connection::{Connecting, Connection};
pub use endpoint::{ConnectError, Endpoint};
pub use streams::{ReadError, RecvStream, SendStream, WriteError};

pub use crate::proto::coding::VarInt;
pub use crate::proto::connection::{
    ClientConfig, ConnectionError, ConnectionStats, SendDatagramError, ServerConfig, TransportConfig,
};
pub use crate::proto::streams::StreamId;
