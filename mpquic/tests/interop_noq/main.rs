//! Multipath interoperability with noq (noq-proto 1.4, draft-ietf-quic-multipath-21, the reference peer):
//! mpquic's sans-IO core (`proto::endpoint::Endpoint` + `proto::connection::Connection`) and noq-proto's,
//! joined by an in-memory link in virtual time, in both roles.
//!
//! The link delivers each datagram to the endpoint owning its destination address after a fixed one-way delay,
//! optionally dropping datagrams with a seeded generator, and counts the bytes of every (source, destination)
//! pair so that which 4-tuples carried traffic is known independently of either stack's statistics. The client
//! has two addresses (`CLIENT`, `CLIENT2`), the server one (`SERVER`).
//!
//! Cases, each with mpquic as client and noq as server (`mpc_`) and the other way round (`noqc_`):
//! (a) multipath is negotiated on both sides; (b) 2 MB each way on one bidirectional stream over path 0 only,
//! checked with SHA-256; (c) the client opens path 1 from its second address, both sides validate it, then a
//! transfer in both directions; (d) PATH_ABANDON of path 1 by the client and by the server in the middle of a
//! transfer, which completes on path 0; (e) PATH_STATUS_BACKUP sent by noq, and by mpquic;
//! (f) connection-ID rotation on path 1 initiated by mpquic (PATH_RETIRE_CONNECTION_ID and
//! PATH_NEW_CONNECTION_ID with Retire Prior To), then a transfer. Beyond those: 2 % loss on two paths, abandoning
//! path 0, key updates by either side, path IDs beyond initial_max_path_id (MAX_PATH_ID), a second path on path
//! 0's 4-tuple, NAT rebinding of path 1, a path whose validation fails, idle then application close. Results and
//! the mpquic bugs these tests found (fixed): `docs/interop-noq.md`.
//!
//! Determinism: virtual time, a seeded link, seeded connection IDs and endpoint generators on both sides.
//! TLS randomness (rustls) and noq's GREASE transport parameter are not seeded; nothing here depends on them.
//!
//! Logs: `RUST_LOG=mpquic=debug,noq_proto=debug cargo test -p mpquic --test interop_noq -- --nocapture`.

// Test code: helpers outside `#[test]` functions fail loudly too.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

/// The same case in both roles: `$mpc` with mpquic as the client (noq serves), `$noqc` with noq as the client.
macro_rules! both_roles {
    ($mpc:ident, $noqc:ident, $case:expr) => {
        #[test]
        fn $mpc() {
            ($case)(Role::MpClient)
        }

        #[test]
        fn $noqc() {
            ($case)(Role::NoqClient)
        }
    };
}

mod cases;
#[path = "../common/mod.rs"]
mod common;
mod more_cases;
mod mp_peer;
mod noq_peer;
mod reinjection;
mod reset;
mod world;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use common::{certs, init_tracing, pattern, rustls_client, rustls_server, sha256};
use mpquic::cc::PathId;
use mpquic::proto::ack_tracker::EcnCodepoint;
use mpquic::proto::coding::VarInt;
use mpquic::proto::connection::{self as mpc, Rng};
use mpquic::proto::endpoint as mpe;
use mpquic::proto::frame::PathAbandon;
use mpquic::proto::streams::{ReadError, StreamId, WriteError};
use mpquic::sched::PathStatus;

use mp_peer::*;
use noq_peer::*;
use world::*;

const CLIENT: &str = "10.0.0.1:4433";
const CLIENT2: &str = "10.0.1.1:5555";
const SERVER: &str = "10.0.0.2:443";
/// `CLIENT2` as the server sees it after a NAT rebinding.
const CLIENT2_NAT: &str = "192.0.2.7:6000";
/// initial_max_path_id both sides offer (noq: `max_concurrent_multipath_paths` = this + 1).
const MAX_PATH_ID: u32 = 4;
const MB2: usize = 2_000_000;

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// One datagram on the link.
#[derive(Debug, Clone)]
struct Dgram {
    at: Instant,
    from: SocketAddr,
    to: SocketAddr,
    /// ECN bits (0b00 Not-ECT, 0b01 ECT(1), 0b10 ECT(0), 0b11 CE).
    ecn: u8,
    data: Vec<u8>,
}

/// The application's view of one endpoint with one connection, whichever stack implements it.
trait Peer {
    fn name(&self) -> &'static str;
    fn owns(&self, a: SocketAddr) -> bool;
    /// Everything the endpoint has to send now (with `at` unset: the link sets it).
    fn transmit(&mut self, now: Instant, out: &mut Vec<Dgram>);
    fn receive(&mut self, now: Instant, d: Dgram);
    fn timeout(&self) -> Option<Instant>;
    fn on_timeout(&mut self, now: Instant);
    /// Drains application events into the peer's log.
    fn poll_events(&mut self);
    /// Client: handshake confirmed; server: handshake complete.
    fn established(&self) -> bool;
    /// Why the connection closed, if it did.
    fn closed(&self) -> Option<String>;
    fn multipath(&self) -> bool;
    fn open_bi(&mut self) -> Option<u64>;
    fn accept_bi(&mut self) -> Option<u64>;
    fn write(&mut self, id: u64, data: &[u8]) -> usize;
    fn finish(&mut self, id: u64);
    /// Reads what is available; `true` once the end of the stream was read.
    fn read(&mut self, now: Instant, id: u64, out: &mut Vec<u8>) -> bool;
    fn open_path(&mut self, now: Instant, local: SocketAddr, remote: SocketAddr) -> Result<u32, String>;
    fn close_path(&mut self, now: Instant, id: u32) -> Result<(), String>;
    /// Sends PATH_STATUS_BACKUP for `id`.
    fn set_backup(&mut self, id: u32) -> Result<(), String>;
    fn paths(&self) -> Vec<u32>;
    fn path_validated(&mut self, id: u32) -> bool;
    /// UDP payload bytes (sent, received) on a path, as the stack counts them.
    fn path_bytes(&mut self, id: u32) -> Option<(u64, u64)>;
    /// Whether the peer told us `id` is a backup path.
    fn peer_says_backup(&self, id: u32) -> bool;
    /// Whether the stack reported `id` abandoned.
    fn saw_abandoned(&self, id: u32) -> bool;
    /// Smoothed RTT of a path.
    fn rtt(&mut self, id: u32) -> Option<Duration>;
    /// Packets declared lost, over the connection.
    fn lost(&mut self) -> u64;
    /// Counters worth printing.
    fn summary(&mut self) -> String;
    fn as_mp(&mut self) -> Option<&mut MpPeer> {
        None
    }
    fn as_noq(&mut self) -> Option<&mut NoqPeer> {
        None
    }
}
