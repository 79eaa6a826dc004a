//! # mpquic: multipath QUIC
//!
//! QUIC (RFC 9000, 9001, 9002) with the multipath extension (draft-ietf-quic-multipath-21), whose two new
//! decisions are pluggable: how much each path may carry (a coupled congestion controller from
//! [`mpquic_cc`]) and which path carries each packet (a scheduler from [`mpquic_sched`]).
//!
//! - [`proto`]: the sans-IO core (codec, packets, crypto, streams, recovery, and the
//!   [`Connection`](proto::connection::Connection) and [`Endpoint`](proto::endpoint::Endpoint) that tie them
//!   together); no sockets, no clocks.
#![cfg_attr(
    feature = "runtime",
    doc = " - [`runtime`]: runs the core on tokio over UDP, with an API close to quinn's."
)]
#![cfg_attr(
    not(feature = "runtime"),
    doc = " - `runtime`: runs the core on tokio over UDP, with an API close to quinn's."
)]
//!
//! The `runtime` feature (on by default) builds `runtime` and pulls in tokio and quinn-udp. Without it
//! (`default-features = false`, as the simulator and the fuzz targets use the crate) only the sans-IO core is
//! built, with neither tokio nor sockets.
#![cfg_attr(feature = "runtime", doc = "")]
#![cfg_attr(feature = "runtime", doc = include_str!("runtime_examples.md"))]

pub mod proto;
#[cfg(feature = "runtime")]
pub mod runtime;

pub use mpquic_cc as cc;
pub use mpquic_sched as sched;
