//! The tokio runtime: sockets, timers and tasks around the sans-IO core ([`crate::proto`]), with an API
//! close to quinn's.
//!
//! - [`Endpoint`]: one UDP socket (through `quinn-udp`: GSO/GRO batching, ECN, destination addresses),
//!   [`Endpoint::client`] / [`Endpoint::server`], [`Endpoint::connect`] → [`Connecting`] → [`Connection`],
//!   [`Endpoint::accept`], [`Endpoint::close`] and [`Endpoint::wait_idle`] for a clean shutdown;
//!   [`Connecting::into_0rtt`] uses a connection before its handshake completes (0-RTT on a resumed
//!   session), with [`ZeroRttAccepted`] telling whether the server accepted it.
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
//! one driver task owning its timer (`sleep_until(poll_timeout)`). The core connection sits behind an
//! `Arc<Mutex<..>>` shared with the application handles, which register wakers for stream readiness,
//! accepts, datagrams and the end of the connection. Transmits are flushed by whichever task fed the core
//! (the receive task after a batch, a stream write); the driver is woken only for an earlier timer, a full
//! socket, a long burst or the end of the connection. The runtime is the one place that reads the
//! clock (`clock.rs`) and seeds the core's random generators from the operating system.
//!
//! One socket per endpoint is enough for a single path. Multipath needs the local address each
//! datagram arrived on, to map it to a path: quinn-udp's `RecvMeta::dst_ip` gives it and is already passed to
//! the core as the datagram's local address.
//!
//! qlog: set [`TransportConfig::qlog`] to [`qlog_directory`] to get one `.sqlog` file per connection and
//! side.
//!
//! The crate documentation ([`crate`]) has a complete client/server example.

mod clock;
mod connection;
mod endpoint;
mod paths;
mod qlog;
mod shared;
mod socket;
mod streams;

pub use connection::{Connecting, Connection, ZeroRttAccepted};
// For the core's tests that send through the runtime's batching (`proto::connection::tests::batched_sends`).
pub use endpoint::{ConnectError, Endpoint};
pub use paths::PathEvent;
pub use qlog::{QlogContext, QlogFactory, qlog_directory};
#[cfg(test)]
pub(crate) use shared::{configure_send_batch, write_turn};
pub use socket::TransmitStats;
#[cfg(test)]
pub(crate) use socket::{Outgoing, ecn_from_udp};
pub use streams::{ReadError, RecvStream, SendStream, WriteError};

pub use crate::cc::PathId;
pub use crate::proto::cid::OpenPathError;
pub use crate::proto::coding::VarInt;
pub use crate::proto::connection::ClosePathError;
pub use crate::proto::connection::{
    ClientConfig, ConnectionError, ConnectionLimits, ConnectionStats, HandshakeKind, PathStats,
    PreferredAddressConfig, SendDatagramError, ServerConfig, TransportConfig,
};
pub use crate::proto::endpoint::EndpointLimits;
pub use crate::proto::streams::{
    FlowControlStats, ReassemblyStats, SetWindowError, StreamId, StreamsConfig, StreamsConfigError,
    WindowPolicy, WindowUpdate,
};
pub use crate::sched::PathStatus;
