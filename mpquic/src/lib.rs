//! # mpquic: multipath QUIC
//!
//! QUIC (RFC 9000, 9001, 9002) with the multipath extension (draft-ietf-quic-multipath-21), whose two new
//! decisions are pluggable: how much each path may carry (a coupled congestion controller from
//! [`mpquic_cc`]) and which path carries each packet (a scheduler from [`mpquic_sched`]).
//!
//! - [`proto`]: the sans-IO core (codec, packets, crypto, streams, recovery, and the
//!   [`Connection`](proto::connection::Connection) and [`Endpoint`](proto::endpoint::Endpoint) that tie them
//!   together); no sockets, no clocks.
//! - [`runtime`]: runs the core on tokio over UDP, with an API close to quinn's (see its example).

pub mod proto;
pub mod runtime;

pub use mpquic_cc as cc;
pub use mpquic_sched as sched;
