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
//!
//! ## qlog
//! Set [`TransportConfig::qlog`](proto::connection::TransportConfig::qlog) to a
//! [`QlogFactory`](proto::connection::QlogFactory) (for files, `runtime::qlog_directory(dir)`) and each
//! connection writes a qlog trace: **qlog 0.3** JSON-SEQ (draft-ietf-quic-qlog-main-schema and
//! draft-ietf-quic-qlog-quic-events, qlog 0.3 revisions), as quiche's `qlog` crate 0.16 reads it, for the
//! **qvis** viewer and any tool built on that crate. The multipath information (draft-ietf-quic-multipath-21)
//! is carried in documented extensions: a `path_id` field in packet headers and path-level events, the
//! multipath frames (`path_ack`, `path_abandon`, ...), and the events `multipath:path_updated` and
//! `mpquic:reassembly_updated`. The test `tests/qlog_compat.rs` (feature `qlog-compat`) reads every record
//! of a lossy two-path transfer, a migration, a path abandon and a 0-RTT resumption with that crate and
//! checks the extensions against their schemas; the repository's `docs/qlog.md` lists them.
#![cfg_attr(feature = "runtime", doc = "")]
#![cfg_attr(feature = "runtime", doc = include_str!("runtime_examples.md"))]
#![deny(missing_docs)]

pub mod proto;
#[cfg(feature = "runtime")]
pub mod runtime;

pub use mpquic_cc as cc;
pub use mpquic_sched as sched;
