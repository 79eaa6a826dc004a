//! # mpquic: multipath QUIC
//!
//! QUIC (RFC 9000, 9001, 9002) with the multipath extension (draft-ietf-quic-multipath-21), whose two new
//! decisions are pluggable: how much each path may carry (a coupled congestion controller from
//! [`mpquic_cc`]) and which path carries each packet (a scheduler from [`mpquic_sched`]).
//!
//! - [`proto`]: the sans-IO core (codec, packets, crypto, streams, recovery, and the
//!   [`Connection`](proto::connection::Connection) and [`Endpoint`](proto::endpoint::Endpoint) that tie them
//!   together); no sockets, no clocks.
//! - [`runtime`]: runs the core on tokio over UDP, with an API close to quinn's.
//!
//! ## In five lines
//! A client uploads over two paths: the handshake path, and one from a second interface. (The README shows
//! these lines; this copy is compiled.)
//!
//! ```no_run
//! # use std::time::Duration;
//! # use mpquic::runtime::{Endpoint, PathStatus};
//! # async fn run(config: mpquic::proto::connection::ClientConfig, server: std::net::SocketAddr, data: Vec<u8>)
//! #     -> Result<(), Box<dyn std::error::Error>> {
//! let client = Endpoint::client("0.0.0.0:0".parse()?)?;                         // one socket for every path
//! let conn = client.connect_with(&config, server, "example.com")?.await?;        // multipath is on by default
//! let second = Some("10.64.0.7:0".parse()?);                                     // e.g. the 5G interface
//! conn.open_path_when_ready(second, server, PathStatus::Available, Duration::from_secs(3)).await?;
//! conn.open_uni().await?.write_all(&data).await?;                                // the scheduler spreads it
//! # Ok(())
//! # }
//! ```
//!
//! ## Example: a client and a server over loopback
//! The server echoes every bidirectional stream; the client sends "hello" and reads it back.
//!
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
//! let conn = client.connect(server_addr, "localhost")?.await?;
//! let (mut send, mut recv) = conn.open_bi().await?;
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
//!
//! ## Example: two paths
//! Multipath is negotiated by default (`TransportConfig::initial_max_path_id`). One socket bound to the
//! wildcard address serves every path; here the client's second path leaves from 127.0.0.2 (Linux routes all
//! of 127.0.0.0/8 to the loopback interface). The client uploads 1 MB over both paths with the coupled
//! controller OLIA and the default minRTT scheduler, then closes its second path and uploads again.
//!
//! ```
//! use std::net::SocketAddr;
//! use mpquic::proto::connection::{ClientConfig, ServerConfig, TransportConfig};
//! use mpquic::proto::crypto::{client_config, server_config, TlsOptions};
//! use mpquic::proto::VarInt;
//! use mpquic::runtime::{Endpoint, PathEvent, PathId, PathStatus};
//! use tokio::io::AsyncWriteExt;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! # let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()])?;
//! # let cert_der = cert.cert.der().clone();
//! # let key = rustls::pki_types::PrivatePkcs8KeyDer::from(cert.signing_key.serialize_der());
//! # let options = TlsOptions::with_alpn(b"example");
//! # let server_tls = server_config(vec![cert_der.clone()], key.into(), &options)?;
//! # let mut roots = rustls::RootCertStore::empty();
//! # roots.add(cert_der)?;
//! # let client_tls = client_config(roots, &options)?;
//! let transport = TransportConfig { congestion_controller: "olia".into(), ..TransportConfig::default() };
//! let server = Endpoint::server(
//!     ServerConfig { tls: server_tls, transport: transport.clone() },
//!     "0.0.0.0:0".parse()?,
//! )?;
//! let server_addr = SocketAddr::from(([127, 0, 0, 1], server.local_addr().port()));
//! tokio::spawn(async move {
//!     while let Some(connecting) = server.accept().await {
//!         let Ok(conn) = connecting.await else { continue };
//!         // Answer each stream with the number of bytes it carried.
//!         while let Ok((mut send, mut recv)) = conn.accept_bi().await {
//!             let n = recv.read_to_end(usize::MAX).await.map_or(0, |d| d.len() as u64);
//!             let _ = send.write_all(&n.to_be_bytes()).await;
//!             let _ = send.finish();
//!         }
//!     }
//! });
//!
//! let client = Endpoint::client("0.0.0.0:0".parse()?)?;
//! client.set_default_client_config(ClientConfig { tls: client_tls, transport });
//! let conn = client.connect(server_addr, "localhost")?.await?;
//! assert!(conn.multipath());
//! // The server's connection IDs for path 1 arrive just after the handshake.
//! let second = SocketAddr::from(([127, 0, 0, 2], client.local_addr().port()));
//! let path = loop {
//!     match conn.open_path(Some(second), server_addr, PathStatus::Available) {
//!         Ok(path) => break path,
//!         Err(_) => tokio::time::sleep(std::time::Duration::from_millis(5)).await,
//!     }
//! };
//! while conn.path_event().await? != (PathEvent::Validated { path }) {}
//!
//! async fn upload(conn: &mpquic::runtime::Connection, len: usize) -> Result<u64, Box<dyn std::error::Error>> {
//!     let (mut send, mut recv) = conn.open_bi().await?;
//!     send.write_all(&vec![7u8; len]).await?;
//!     send.finish()?;
//!     let reply = recv.read_to_end(8).await?;
//!     Ok(u64::from_be_bytes(reply.as_slice().try_into()?))
//! }
//! assert_eq!(upload(&conn, 1 << 20).await?, 1 << 20);
//! for stats in conn.all_path_stats() {
//!     println!("path {:?}: {} bytes sent, srtt {:?}", stats.path, stats.bytes_sent, stats.srtt);
//! }
//!
//! // Abandon the second path (PATH_ABANDON); its unacknowledged data goes on path 0.
//! conn.close_path(path, VarInt::from_u32(0))?;
//! assert_eq!(upload(&conn, 1 << 20).await?, 1 << 20);
//! assert!(conn.paths().contains(&PathId(0)));
//! conn.close(VarInt::from_u32(0), b"done");
//! client.wait_idle().await;
//! # Ok(())
//! # }
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! #     tokio::runtime::Builder::new_multi_thread().enable_all().build()?.block_on(run())
//! # }
//! ```

pub mod proto;
pub mod runtime;

pub use mpquic_cc as cc;
pub use mpquic_sched as sched;
