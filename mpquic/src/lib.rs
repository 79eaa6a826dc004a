//! # mpquic: multipath QUIC
//!
//! QUIC (RFC 9000, 9001, 9002) with the multipath extension (draft-ietf-quic-multipath-21), whose two new
//! decisions are pluggable: how much each path may carry (a coupled congestion controller from
//! [`mpquic_cc`]) and which path carries each packet (a scheduler from [`mpquic_sched`]).
//!
//! The crate is being built bottom-up. Today it holds the wire-level foundations of the sans-IO core in
//! [`proto`]: variable-length integers and the panic-free codec primitives every parser uses, and
//! packet-number encoding; the sans-IO [`proto::connection::Connection`] and [`proto::endpoint::Endpoint`];
//! and [`runtime`], which runs them on tokio with an API close to quinn's (see its example).

pub mod proto;
pub mod runtime;

pub use mpquic_cc as cc;
pub use mpquic_sched as sched;
