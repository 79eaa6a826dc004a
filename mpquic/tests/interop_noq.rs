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

mod common;

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

// ----- mpquic -----

fn mp_transport() -> mpc::TransportConfig {
    mpc::TransportConfig {
        initial_max_path_id: Some(MAX_PATH_ID),
        ..mpc::TransportConfig::default()
    }
}

fn ecn_to_bits(e: Option<EcnCodepoint>) -> u8 {
    match e {
        None | Some(EcnCodepoint::NotEct) => 0,
        Some(EcnCodepoint::Ect1) => 0b01,
        Some(EcnCodepoint::Ect0) => 0b10,
        Some(EcnCodepoint::Ce) => 0b11,
    }
}

fn bits_to_ecn(b: u8) -> Option<EcnCodepoint> {
    match b & 0b11 {
        0b01 => Some(EcnCodepoint::Ect1),
        0b10 => Some(EcnCodepoint::Ect0),
        0b11 => Some(EcnCodepoint::Ce),
        _ => None,
    }
}

struct MpPeer {
    ep: mpe::Endpoint,
    conns: HashMap<mpe::ConnectionHandle, mpc::Connection>,
    addrs: Vec<SocketAddr>,
    events: Vec<mpc::Event>,
    pending: Vec<Dgram>,
    established: bool,
    buf: Vec<u8>,
}

impl MpPeer {
    fn client(
        now: Instant,
        seed: u64,
        addrs: Vec<SocketAddr>,
        server: SocketAddr,
        c: &common::Certs,
    ) -> MpPeer {
        let cfg = mpc::ClientConfig {
            tls: rustls_client(c),
            transport: mp_transport(),
        };
        let mut ep = mpe::Endpoint::new(mpe::EndpointConfig { seed, cid_len: 8 }, None);
        let (h, conn) = ep.connect(now, &cfg, server, "localhost").unwrap();
        let mut conns = HashMap::new();
        conns.insert(h, conn);
        MpPeer::new(ep, conns, addrs)
    }

    fn server(seed: u64, addrs: Vec<SocketAddr>, c: &common::Certs) -> MpPeer {
        let cfg = mpc::ServerConfig {
            tls: rustls_server(c),
            transport: mp_transport(),
        };
        let ep = mpe::Endpoint::new(mpe::EndpointConfig { seed, cid_len: 8 }, Some(Arc::new(cfg)));
        MpPeer::new(ep, HashMap::new(), addrs)
    }

    fn new(
        ep: mpe::Endpoint,
        conns: HashMap<mpe::ConnectionHandle, mpc::Connection>,
        addrs: Vec<SocketAddr>,
    ) -> MpPeer {
        MpPeer {
            ep,
            conns,
            addrs,
            events: Vec::new(),
            pending: Vec::new(),
            established: false,
            buf: Vec::new(),
        }
    }

    fn conn(&self) -> Option<&mpc::Connection> {
        self.conns.values().next()
    }

    fn conn_mut(&mut self) -> Option<&mut mpc::Connection> {
        self.conns.values_mut().next()
    }
}

fn mp_stream(id: u64) -> StreamId {
    StreamId::from_varint(VarInt::from_u64(id).unwrap())
}

impl Peer for MpPeer {
    fn name(&self) -> &'static str {
        "mpquic"
    }

    fn owns(&self, a: SocketAddr) -> bool {
        self.addrs.contains(&a)
    }

    fn transmit(&mut self, now: Instant, out: &mut Vec<Dgram>) {
        out.append(&mut self.pending);
        let default = self.addrs[0];
        for c in self.conns.values_mut() {
            while let Some(t) = c.poll_transmit(now, &mut self.buf) {
                let seg = t.segment_size.unwrap_or(t.size).max(1);
                for chunk in self.buf[..t.size].chunks(seg) {
                    out.push(Dgram {
                        at: now,
                        from: t.local.unwrap_or(default),
                        to: t.remote,
                        ecn: ecn_to_bits(t.ecn),
                        data: chunk.to_vec(),
                    });
                }
                assert!(out.len() < 100_000, "mpquic: runaway sender");
            }
        }
    }

    fn receive(&mut self, now: Instant, mut d: Dgram) {
        let ecn = bits_to_ecn(d.ecn);
        match self.ep.handle(now, Some(d.to), d.from, ecn, &mut d.data) {
            Some(mpe::DatagramEvent::Known(h)) => {
                if let Some(c) = self.conns.get_mut(&h) {
                    c.handle_datagram(now, Some(d.to), d.from, ecn, &mut d.data);
                }
            }
            Some(mpe::DatagramEvent::NewConnection(h, c)) => {
                self.conns.insert(h, *c);
            }
            Some(mpe::DatagramEvent::Response(t, data)) => self.pending.push(Dgram {
                at: now,
                from: t.local.unwrap_or(d.to),
                to: t.remote,
                ecn: ecn_to_bits(t.ecn),
                data: data[..t.size].to_vec(),
            }),
            None => {}
        }
    }

    fn timeout(&self) -> Option<Instant> {
        self.conns.values().filter_map(|c| c.poll_timeout()).min()
    }

    fn on_timeout(&mut self, now: Instant) {
        for c in self.conns.values_mut() {
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
        }
    }

    fn poll_events(&mut self) {
        for (h, c) in self.conns.iter_mut() {
            while let Some(e) = c.poll_event() {
                let server = c.side() == mpquic::proto::transport_params::Side::Server;
                match e {
                    mpc::Event::HandshakeConfirmed => self.established = true,
                    mpc::Event::HandshakeCompleted if server => self.established = true,
                    _ => {}
                }
                if !matches!(e, mpc::Event::Stream(_)) {
                    self.events.push(e);
                }
            }
            while let Some(e) = c.poll_endpoint_event() {
                self.ep.handle_event(*h, e);
            }
        }
    }

    fn established(&self) -> bool {
        self.established
    }

    fn closed(&self) -> Option<String> {
        self.events.iter().find_map(|e| match e {
            mpc::Event::ConnectionLost(err) => Some(format!("{err:?}")),
            _ => None,
        })
    }

    fn multipath(&self) -> bool {
        self.conn().is_some_and(|c| c.multipath())
    }

    fn open_bi(&mut self) -> Option<u64> {
        self.conn_mut()?.open_bi().map(|s| s.into_inner())
    }

    fn accept_bi(&mut self) -> Option<u64> {
        self.conn_mut()?.accept_bi().map(|s| s.into_inner())
    }

    fn write(&mut self, id: u64, data: &[u8]) -> usize {
        let c = self.conn_mut().unwrap();
        match c.write(mp_stream(id), Bytes::copy_from_slice(data)) {
            Ok(n) => n,
            Err(WriteError::Blocked) => 0,
            Err(e) => panic!("mpquic write: {e:?}"),
        }
    }

    fn finish(&mut self, id: u64) {
        self.conn_mut().unwrap().finish(mp_stream(id)).unwrap();
    }

    fn read(&mut self, now: Instant, id: u64, out: &mut Vec<u8>) -> bool {
        let c = self.conns.values_mut().next().unwrap();
        loop {
            match c.read(mp_stream(id), usize::MAX, now) {
                Ok(Some(b)) => out.extend_from_slice(&b),
                Ok(None) => return true,
                Err(ReadError::Blocked) => return false,
                Err(e) => panic!("mpquic read: {e:?}"),
            }
        }
    }

    fn open_path(&mut self, now: Instant, local: SocketAddr, remote: SocketAddr) -> Result<u32, String> {
        let c = self.conn_mut().ok_or("no connection")?;
        c.open_path(now, Some(local), remote, PathStatus::Available)
            .map(|p| p.0)
            .map_err(|e| format!("{e:?}"))
    }

    fn close_path(&mut self, now: Instant, id: u32) -> Result<(), String> {
        let c = self.conn_mut().ok_or("no connection")?;
        c.close_path(now, PathId(id), PathAbandon::APPLICATION_ABANDON_PATH)
            .map_err(|e| format!("{e:?}"))
    }

    fn set_backup(&mut self, id: u32) -> Result<(), String> {
        let c = self.conn_mut().ok_or("no connection")?;
        c.set_path_status(PathId(id), mpquic::sched::PathStatus::Backup)
            .map_err(|e| format!("{e:?}"))
    }

    fn paths(&self) -> Vec<u32> {
        self.conn()
            .map(|c| c.paths().into_iter().map(|p| p.0).collect())
            .unwrap_or_default()
    }

    fn path_validated(&mut self, id: u32) -> bool {
        self.conn()
            .and_then(|c| c.path_stats(PathId(id)))
            .is_some_and(|s| s.validated)
    }

    fn path_bytes(&mut self, id: u32) -> Option<(u64, u64)> {
        let s = self.conn()?.path_stats(PathId(id))?;
        Some((s.bytes_sent, s.bytes_received))
    }

    fn peer_says_backup(&self, id: u32) -> bool {
        self.conn()
            .and_then(|c| c.path_stats(PathId(id)))
            .is_some_and(|s| s.backup)
    }

    fn saw_abandoned(&self, id: u32) -> bool {
        self.events
            .iter()
            .any(|e| *e == mpc::Event::PathAbandoned { path: PathId(id) })
    }

    fn rtt(&mut self, id: u32) -> Option<Duration> {
        self.conn()?.path_stats(PathId(id)).map(|s| s.srtt)
    }

    fn lost(&mut self) -> u64 {
        self.conn().map_or(0, |c| c.stats().packets_lost)
    }

    fn summary(&mut self) -> String {
        self.conn().map_or(String::new(), |c| format!("{:?}", c.stats()))
    }

    fn as_mp(&mut self) -> Option<&mut MpPeer> {
        Some(self)
    }
}

// ----- noq -----

/// Connection IDs from a seeded counter, so runs are reproducible.
struct SeqCids(u64);

impl noq_proto::ConnectionIdGenerator for SeqCids {
    fn generate_cid(&mut self) -> noq_proto::ConnectionId {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        noq_proto::ConnectionId::new(&self.0.to_be_bytes())
    }

    fn cid_len(&self) -> usize {
        8
    }

    fn cid_lifetime(&self) -> Option<Duration> {
        None
    }
}

/// noq's transport settings: multipath on with the same initial_max_path_id as mpquic, then `tweak`.
fn noq_transport(tweak: fn(&mut noq_proto::TransportConfig)) -> Arc<noq_proto::TransportConfig> {
    let mut t = noq_proto::TransportConfig::default();
    t.max_concurrent_multipath_paths(MAX_PATH_ID + 1);
    tweak(&mut t);
    Arc::new(t)
}

fn noq_endpoint(seed: u64, server: Option<Arc<noq_proto::ServerConfig>>) -> noq_proto::Endpoint {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &seed.to_be_bytes());
    let mut cfg = noq_proto::EndpointConfig::new(Arc::new(key));
    cfg.cid_generator(Arc::new(move || Box::new(SeqCids(seed))));
    let mut rng_seed = [0u8; 32];
    rng_seed[..8].copy_from_slice(&seed.to_be_bytes());
    cfg.rng_seed(Some(rng_seed));
    noq_proto::Endpoint::new(Arc::new(cfg), server, true)
}

/// noq's path IDs are opaque outside the crate except through `Display`.
fn noq_path(p: noq_proto::PathId) -> u32 {
    p.to_string().parse().unwrap()
}

struct NoqPeer {
    ep: noq_proto::Endpoint,
    conns: HashMap<noq_proto::ConnectionHandle, noq_proto::Connection>,
    addrs: Vec<SocketAddr>,
    events: Vec<noq_proto::Event>,
    pending: Vec<Dgram>,
    established: bool,
    is_client: bool,
    buf: Vec<u8>,
}

impl NoqPeer {
    fn client(
        now: Instant,
        seed: u64,
        addrs: Vec<SocketAddr>,
        server: SocketAddr,
        c: &common::Certs,
        tweak: fn(&mut noq_proto::TransportConfig),
    ) -> NoqPeer {
        let crypto = noq_proto::crypto::rustls::QuicClientConfig::try_from(rustls_client(c)).unwrap();
        let mut cfg = noq_proto::ClientConfig::new(Arc::new(crypto));
        cfg.transport_config(noq_transport(tweak));
        let mut ep = noq_endpoint(seed, None);
        let (h, conn) = ep.connect(now, cfg, server, "localhost").unwrap();
        let mut p = NoqPeer::new(ep, addrs, true);
        p.conns.insert(h, conn);
        p
    }

    fn server(
        seed: u64,
        addrs: Vec<SocketAddr>,
        c: &common::Certs,
        tweak: fn(&mut noq_proto::TransportConfig),
    ) -> NoqPeer {
        let crypto = noq_proto::crypto::rustls::QuicServerConfig::try_from(rustls_server(c)).unwrap();
        let mut cfg = noq_proto::ServerConfig::with_crypto(Arc::new(crypto));
        cfg.transport_config(noq_transport(tweak));
        NoqPeer::new(noq_endpoint(seed, Some(Arc::new(cfg))), addrs, false)
    }

    fn new(ep: noq_proto::Endpoint, addrs: Vec<SocketAddr>, is_client: bool) -> NoqPeer {
        NoqPeer {
            ep,
            conns: HashMap::new(),
            addrs,
            events: Vec::new(),
            pending: Vec::new(),
            established: false,
            is_client,
            buf: Vec::new(),
        }
    }

    fn conn(&self) -> Option<&noq_proto::Connection> {
        self.conns.values().next()
    }

    fn conn_mut(&mut self) -> Option<&mut noq_proto::Connection> {
        self.conns.values_mut().next()
    }

    /// Endpoint events of every connection, and the connection events they produce.
    fn endpoint_events(&mut self) {
        for (h, c) in self.conns.iter_mut() {
            while let Some(e) = c.poll_endpoint_events() {
                if let Some(ce) = self.ep.handle_event(*h, e) {
                    c.handle_event(ce);
                }
            }
        }
    }

    fn local_addr(&self, ip: Option<std::net::IpAddr>) -> SocketAddr {
        ip.and_then(|ip| self.addrs.iter().find(|a| a.ip() == ip).copied())
            .unwrap_or(self.addrs[0])
    }

    fn push_transmit(&mut self, now: Instant, t: &noq_proto::Transmit, buf: &[u8], out: &mut Vec<Dgram>) {
        let from = self.local_addr(t.src_ip);
        let seg = t.segment_size.unwrap_or(t.size).max(1);
        for chunk in buf[..t.size].chunks(seg) {
            out.push(Dgram {
                at: now,
                from,
                to: t.destination,
                ecn: t.ecn.map_or(0, |e| e as u8),
                data: chunk.to_vec(),
            });
        }
    }
}

impl Peer for NoqPeer {
    fn name(&self) -> &'static str {
        "noq"
    }

    fn owns(&self, a: SocketAddr) -> bool {
        self.addrs.contains(&a)
    }

    fn transmit(&mut self, now: Instant, out: &mut Vec<Dgram>) {
        out.append(&mut self.pending);
        self.endpoint_events();
        let mut buf = std::mem::take(&mut self.buf);
        let handles: Vec<_> = self.conns.keys().copied().collect();
        for h in handles {
            loop {
                buf.clear();
                let Some(t) = self
                    .conns
                    .get_mut(&h)
                    .unwrap()
                    .poll_transmit(now, NonZeroUsize::MIN, &mut buf)
                else {
                    break;
                };
                self.push_transmit(now, &t, &buf, out);
                assert!(out.len() < 100_000, "noq: runaway sender");
            }
        }
        self.buf = buf;
        self.endpoint_events();
    }

    fn receive(&mut self, now: Instant, d: Dgram) {
        let path = noq_proto::FourTuple::new(d.from, Some(d.to.ip()));
        let ecn = noq_proto::EcnCodepoint::from_bits(d.ecn);
        let mut buf = Vec::new();
        match self
            .ep
            .handle(now, path, ecn, BytesMut::from(&d.data[..]), &mut buf)
        {
            Some(noq_proto::DatagramEvent::ConnectionEvent(h, e)) => {
                if let Some(c) = self.conns.get_mut(&h) {
                    c.handle_event(e);
                }
            }
            Some(noq_proto::DatagramEvent::NewConnection(incoming)) => {
                let mut buf = Vec::new();
                match self.ep.accept(incoming, now, &mut buf, None) {
                    Ok((h, c)) => {
                        self.conns.insert(h, c);
                    }
                    Err(e) => {
                        if let Some(t) = e.response {
                            let mut out = Vec::new();
                            self.push_transmit(now, &t, &buf, &mut out);
                            self.pending.extend(out);
                        }
                        panic!("noq refused the connection: {:?}", e.cause);
                    }
                }
            }
            Some(noq_proto::DatagramEvent::Response(t)) => {
                let mut out = Vec::new();
                self.push_transmit(now, &t, &buf, &mut out);
                self.pending.extend(out);
            }
            None => {}
        }
        self.endpoint_events();
    }

    fn timeout(&self) -> Option<Instant> {
        self.conns.values().filter_map(|c| c.poll_timeout()).min()
    }

    fn on_timeout(&mut self, now: Instant) {
        for c in self.conns.values_mut() {
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
        }
        self.endpoint_events();
    }

    fn poll_events(&mut self) {
        for c in self.conns.values_mut() {
            while let Some(e) = c.poll() {
                match &e {
                    noq_proto::Event::HandshakeConfirmed => self.established = true,
                    noq_proto::Event::Connected if !self.is_client => self.established = true,
                    _ => {}
                }
                if !matches!(e, noq_proto::Event::Stream(_)) {
                    self.events.push(e);
                }
            }
        }
    }

    fn established(&self) -> bool {
        self.established
    }

    fn closed(&self) -> Option<String> {
        self.events.iter().find_map(|e| match e {
            noq_proto::Event::ConnectionLost { reason } => Some(format!("{reason:?}")),
            _ => None,
        })
    }

    fn multipath(&self) -> bool {
        self.conn().is_some_and(|c| c.is_multipath_negotiated())
    }

    fn open_bi(&mut self) -> Option<u64> {
        self.conn_mut()?.streams().open(noq_proto::Dir::Bi).map(u64::from)
    }

    fn accept_bi(&mut self) -> Option<u64> {
        self.conn_mut()?
            .streams()
            .accept(noq_proto::Dir::Bi)
            .map(u64::from)
    }

    fn write(&mut self, id: u64, data: &[u8]) -> usize {
        let c = self.conn_mut().unwrap();
        let id = noq_proto::StreamId::from(noq_proto::VarInt::from_u64(id).unwrap());
        match c.send_stream(id).write(data) {
            Ok(n) => n,
            Err(noq_proto::WriteError::Blocked) => 0,
            Err(e) => panic!("noq write: {e:?}"),
        }
    }

    fn finish(&mut self, id: u64) {
        let c = self.conn_mut().unwrap();
        let id = noq_proto::StreamId::from(noq_proto::VarInt::from_u64(id).unwrap());
        c.send_stream(id).finish().unwrap();
    }

    fn read(&mut self, _now: Instant, id: u64, out: &mut Vec<u8>) -> bool {
        let c = self.conn_mut().unwrap();
        let id = noq_proto::StreamId::from(noq_proto::VarInt::from_u64(id).unwrap());
        let mut rs = c.recv_stream(id);
        let mut chunks = rs.read(true).unwrap();
        let fin = loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => out.extend_from_slice(&chunk.bytes),
                Ok(None) => break true,
                Err(noq_proto::ReadError::Blocked) => break false,
                Err(e) => panic!("noq read: {e:?}"),
            }
        };
        let _ = chunks.finalize();
        fin
    }

    fn open_path(&mut self, now: Instant, local: SocketAddr, remote: SocketAddr) -> Result<u32, String> {
        let c = self.conn_mut().ok_or("no connection")?;
        let tuple = noq_proto::FourTuple::new(remote, Some(local.ip()));
        c.open_path(tuple, noq_proto::PathStatus::Available, now)
            .map(noq_path)
            .map_err(|e| format!("{e:?}"))
    }

    fn close_path(&mut self, now: Instant, id: u32) -> Result<(), String> {
        let c = self.conn_mut().ok_or("no connection")?;
        c.close_path(
            now,
            noq_proto::PathId::from(id),
            noq_proto::VarInt::from_u32(0x3e),
        )
        .map_err(|e| format!("{e:?}"))
    }

    fn set_backup(&mut self, id: u32) -> Result<(), String> {
        let c = self.conn_mut().ok_or("no connection")?;
        c.set_path_status(noq_proto::PathId::from(id), noq_proto::PathStatus::Backup)
            .map(|_| ())
            .map_err(|e| format!("{e:?}"))
    }

    fn paths(&self) -> Vec<u32> {
        self.conn()
            .map(|c| c.paths().into_iter().map(noq_path).collect())
            .unwrap_or_default()
    }

    fn path_validated(&mut self, id: u32) -> bool {
        self.events.iter().any(|e| {
            matches!(e, noq_proto::Event::Path(noq_proto::PathEvent::Established { id: p, .. })
                if noq_path(*p) == id)
        })
    }

    fn path_bytes(&mut self, id: u32) -> Option<(u64, u64)> {
        let s = self.conn_mut()?.path_stats(noq_proto::PathId::from(id))?;
        Some((s.udp_tx.bytes, s.udp_rx.bytes))
    }

    fn peer_says_backup(&self, id: u32) -> bool {
        self.conn()
            .and_then(|c| c.remote_path_status(noq_proto::PathId::from(id)))
            == Some(noq_proto::PathStatus::Backup)
    }

    fn saw_abandoned(&self, id: u32) -> bool {
        self.events.iter().any(|e| {
            matches!(e, noq_proto::Event::Path(noq_proto::PathEvent::Abandoned { id: p, .. })
                if noq_path(*p) == id)
        })
    }

    fn rtt(&mut self, id: u32) -> Option<Duration> {
        self.conn_mut()?
            .path_stats(noq_proto::PathId::from(id))
            .map(|s| s.rtt)
    }

    fn lost(&mut self) -> u64 {
        self.conn_mut().map_or(0, |c| c.stats().lost_packets)
    }

    fn summary(&mut self) -> String {
        let Some(c) = self.conn_mut() else {
            return String::new();
        };
        let s = c.stats();
        format!(
            "sent_packets {} lost_packets {} frame_tx {:?} frame_rx {:?}",
            s.sent_packets, s.lost_packets, s.frame_tx, s.frame_rx
        )
    }

    fn as_noq(&mut self) -> Option<&mut NoqPeer> {
        Some(self)
    }
}

// ----- the link and the world -----

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// mpquic client, noq server.
    MpClient,
    /// noq client, mpquic server.
    NoqClient,
}

struct World {
    now: Instant,
    client: Box<dyn Peer>,
    server: Box<dyn Peer>,
    role: Role,
    delay: Duration,
    loss: f64,
    rng: Rng,
    link: Vec<Dgram>,
    /// Datagrams to these addresses are lost.
    blackholed: Vec<SocketAddr>,
    /// Bytes put on the link, by (source, destination).
    sent: HashMap<(SocketAddr, SocketAddr), u64>,
    /// A NAT in front of the client: client source address → the address the server sees.
    nat: HashMap<SocketAddr, SocketAddr>,
    /// A side closed the connection on purpose: closes no longer fail the test.
    closing: bool,
}

impl World {
    fn new(role: Role, seed: u64) -> World {
        World::with_noq(role, seed, |_| {})
    }

    /// A world whose noq endpoint's transport settings are adjusted by `tweak`.
    fn with_noq(role: Role, seed: u64, tweak: fn(&mut noq_proto::TransportConfig)) -> World {
        init_tracing();
        #[allow(clippy::disallowed_methods)] // virtual time starts at an arbitrary instant
        let now = Instant::now();
        let c = certs();
        let client_addrs = vec![addr(CLIENT), addr(CLIENT2)];
        let server_addrs = vec![addr(SERVER)];
        let (client, server): (Box<dyn Peer>, Box<dyn Peer>) = match role {
            Role::MpClient => (
                Box::new(MpPeer::client(now, seed, client_addrs, addr(SERVER), &c)),
                Box::new(NoqPeer::server(seed ^ 0x5555, server_addrs, &c, tweak)),
            ),
            Role::NoqClient => (
                Box::new(NoqPeer::client(now, seed, client_addrs, addr(SERVER), &c, tweak)),
                Box::new(MpPeer::server(seed ^ 0x5555, server_addrs, &c)),
            ),
        };
        World {
            now,
            client,
            server,
            role,
            delay: Duration::from_millis(10),
            loss: 0.0,
            rng: Rng::new(seed.wrapping_mul(31).wrapping_add(7)),
            link: Vec::new(),
            blackholed: Vec::new(),
            sent: HashMap::new(),
            nat: HashMap::new(),
            closing: false,
        }
    }

    /// The mpquic side.
    fn mp(&mut self) -> &mut dyn Peer {
        match self.role {
            Role::MpClient => self.client.as_mut(),
            Role::NoqClient => self.server.as_mut(),
        }
    }

    /// The noq side.
    fn noq(&mut self) -> &mut dyn Peer {
        match self.role {
            Role::MpClient => self.server.as_mut(),
            Role::NoqClient => self.client.as_mut(),
        }
    }

    fn mpp(&mut self) -> &mut MpPeer {
        self.mp().as_mp().unwrap()
    }

    fn noqp(&mut self) -> &mut NoqPeer {
        self.noq().as_noq().unwrap()
    }

    /// noq's frame counters (received, sent).
    fn noq_frames(&mut self) -> (noq_proto::FrameStats, noq_proto::FrameStats) {
        let s = self.noqp().conn_mut().unwrap().stats();
        (s.frame_rx, s.frame_tx)
    }

    fn lose(&mut self) -> bool {
        if self.loss <= 0.0 {
            return false;
        }
        let r = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        r < self.loss
    }

    fn flush(&mut self) {
        let mut out = Vec::new();
        self.client.transmit(self.now, &mut out);
        self.server.transmit(self.now, &mut out);
        for mut d in out {
            if let Some(outside) = self.nat.get(&d.from) {
                d.from = *outside;
            }
            *self.sent.entry((d.from, d.to)).or_default() += d.data.len() as u64;
            if self.blackholed.contains(&d.to) || self.lose() {
                continue;
            }
            d.at = self.now + self.delay;
            self.link.push(d);
        }
        self.client.poll_events();
        self.server.poll_events();
    }

    fn check_open(&self) {
        if self.closing {
            return;
        }
        for p in [&self.client, &self.server] {
            if let Some(why) = p.closed() {
                panic!("{} connection closed: {why}", p.name());
            }
        }
    }

    fn next_time(&self) -> Option<Instant> {
        [
            self.link.iter().map(|d| d.at).min(),
            self.client.timeout(),
            self.server.timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Sends, advances to the next event, fires timers, delivers. Returns false when nothing is left to do.
    fn step(&mut self) -> bool {
        self.flush();
        let Some(t) = self.next_time() else {
            return false;
        };
        self.now = self.now.max(t);
        let now = self.now;
        if self.client.timeout().is_some_and(|t| t <= now) {
            self.client.on_timeout(now);
        }
        if self.server.timeout().is_some_and(|t| t <= now) {
            self.server.on_timeout(now);
        }
        let (due, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.link)
            .into_iter()
            .partition(|d| d.at <= now);
        self.link = rest;
        for mut d in due {
            // Only the current NAT mappings translate back; datagrams to an old mapping are lost.
            if let Some((inside, _)) = self.nat.iter().find(|(_, o)| **o == d.to) {
                d.to = *inside;
            } else if self.nat.contains_key(&d.to) {
                continue;
            }
            if self.client.owns(d.to) {
                self.client.receive(now, d);
            } else if self.server.owns(d.to) {
                self.server.receive(now, d);
            }
        }
        self.client.poll_events();
        self.server.poll_events();
        true
    }

    /// Steps until `done` holds (true), or `max` of virtual time passes (false). Fails at once if a connection
    /// closes.
    fn drive_until(&mut self, max: Duration, mut done: impl FnMut(&mut World) -> bool) -> bool {
        let end = self.now + max;
        for _ in 0..2_000_000 {
            self.check_open();
            if done(self) {
                return true;
            }
            if !self.step() || self.now > end {
                self.check_open();
                return done(self);
            }
        }
        false
    }

    /// Steps while there is work due before `now + d`.
    fn run_for(&mut self, d: Duration) {
        let end = self.now + d;
        for _ in 0..2_000_000 {
            self.flush();
            self.check_open();
            match self.next_time() {
                Some(t) if t <= end => {}
                _ => break,
            }
            self.step();
        }
        self.now = self.now.max(end);
    }

    fn handshake(&mut self) {
        let ok = self.drive_until(Duration::from_secs(5), |w| {
            w.client.established() && w.server.established()
        });
        assert!(ok, "handshake did not complete");
    }

    /// Link bytes from `from` to `to`.
    fn sent(&self, from: &str, to: &str) -> u64 {
        self.sent.get(&(addr(from), addr(to))).copied().unwrap_or(0)
    }

    /// The client opens path 1 from `CLIENT2`; both sides validate it.
    fn open_second_path(&mut self) -> u32 {
        // The path-1 connection IDs travel after the handshake.
        self.run_for(Duration::from_millis(50));
        let now = self.now;
        let id = self
            .client
            .open_path(now, addr(CLIENT2), addr(SERVER))
            .unwrap_or_else(|e| panic!("{} client could not open a path: {e}", self.client.name()));
        assert_eq!(id, 1);
        let ok = self.drive_until(Duration::from_secs(3), |w| {
            w.client.path_validated(id) && w.server.path_validated(id)
        });
        assert!(
            ok,
            "path 1 not validated: client ({}) {}, server ({}) {}",
            self.client.name(),
            self.client.path_validated(id),
            self.server.name(),
            self.server.path_validated(id)
        );
        id
    }
}

/// One direction of a transfer on one bidirectional stream.
#[derive(Default)]
struct Flow {
    id: Option<u64>,
    sent: usize,
    fin_sent: bool,
    received: Vec<u8>,
    fin_seen: bool,
}

fn pump(p: &mut dyn Peer, now: Instant, f: &mut Flow, data: &[u8], opener: bool) {
    if f.id.is_none() {
        f.id = if opener { p.open_bi() } else { p.accept_bi() };
    }
    let Some(id) = f.id else { return };
    while f.sent < data.len() {
        let n = p.write(id, &data[f.sent..(f.sent + 256 * 1024).min(data.len())]);
        if n == 0 {
            break;
        }
        f.sent += n;
    }
    if f.sent == data.len() && !f.fin_sent {
        p.finish(id);
        f.fin_sent = true;
    }
    if !f.fin_seen {
        f.fin_seen = p.read(now, id, &mut f.received);
    }
}

/// `size` bytes each way on one bidirectional stream the client opens; `at(w)` runs once when the server has
/// received `trigger` bytes. Checks both directions with SHA-256.
fn transfer(w: &mut World, size: usize, trigger: usize, mut at: impl FnMut(&mut World)) {
    let a = pattern(size, 1);
    let b = pattern(size, 2);
    let mut fc = Flow::default();
    let mut fs = Flow::default();
    let mut fired = false;
    let ok = w.drive_until(Duration::from_secs(30), |w| {
        let now = w.now;
        pump(w.client.as_mut(), now, &mut fc, &a, true);
        pump(w.server.as_mut(), now, &mut fs, &b, false);
        if !fired && fs.received.len() >= trigger {
            fired = true;
            at(w);
        }
        fc.fin_seen && fs.fin_seen
    });
    assert!(fired, "trigger never reached");
    assert!(
        ok,
        "transfer incomplete: client ({}) got {} of {size}, server ({}) got {} of {size}",
        w.client.name(),
        fc.received.len(),
        w.server.name(),
        fs.received.len()
    );
    assert_eq!(sha256(&fs.received), sha256(&a), "client → server data corrupted");
    assert_eq!(sha256(&fc.received), sha256(&b), "server → client data corrupted");
}

/// Prints what each side and the link say about each path (for the report, `--nocapture`).
fn report(w: &mut World, what: &str) {
    let mut lines = vec![format!("[{what}] role {:?}", w.role)];
    for (label, p) in [("client", &mut w.client), ("server", &mut w.server)] {
        for id in p.paths() {
            lines.push(format!(
                "  {label} {} path {id}: (sent, received) = {:?}, srtt {:?}",
                p.name(),
                p.path_bytes(id),
                p.rtt(id)
            ));
        }
        lines.push(format!(
            "  {label} {} lost {}: {}",
            p.name(),
            p.lost(),
            p.summary()
        ));
    }
    let mut tuples: Vec<_> = w.sent.iter().collect();
    tuples.sort();
    for ((from, to), n) in tuples {
        lines.push(format!("  link {from} -> {to}: {n} bytes"));
    }
    eprintln!("{}", lines.join("\n"));
}

// ----- (a) negotiation -----

fn negotiation(role: Role) {
    let mut w = World::new(role, 1);
    w.handshake();
    assert!(w.mp().multipath(), "mpquic did not negotiate multipath");
    assert!(w.noq().multipath(), "noq did not negotiate multipath");
    // Both sides stay up while the post-handshake frames (PATH_NEW_CONNECTION_ID, PATH_ACK) flow.
    w.run_for(Duration::from_millis(500));
    assert_eq!(w.mp().paths(), vec![0]);
}

#[test]
fn mpc_multipath_negotiated() {
    negotiation(Role::MpClient);
}

#[test]
fn noqc_multipath_negotiated() {
    negotiation(Role::NoqClient);
}

// ----- (b) one path -----

fn single_path(role: Role) {
    let mut w = World::new(role, 2);
    w.handshake();
    transfer(&mut w, MB2, 0, |_| {});
    report(&mut w, "single path");
    assert_eq!(w.sent(CLIENT2, SERVER), 0);
    assert_eq!(w.sent(SERVER, CLIENT2), 0);
    assert!(w.sent(CLIENT, SERVER) > MB2 as u64);
    assert!(w.sent(SERVER, CLIENT) > MB2 as u64);
}

#[test]
fn mpc_single_path_transfer() {
    single_path(Role::MpClient);
}

#[test]
fn noqc_single_path_transfer() {
    single_path(Role::NoqClient);
}

// ----- (c) a second path -----

fn second_path(role: Role) {
    let mut w = World::new(role, 3);
    w.handshake();
    let id = w.open_second_path();
    transfer(&mut w, MB2, 0, |_| {});
    report(&mut w, "second path");
    let (sent, received) = w.mp().path_bytes(id).expect("mpquic has no state for path 1");
    assert!(
        sent > 0 && received > 0,
        "mpquic path 1: sent {sent}, received {received}"
    );
    // Whatever the schedulers did, the second 4-tuple carried traffic both ways.
    assert!(w.sent(CLIENT2, SERVER) > 0 && w.sent(SERVER, CLIENT2) > 0);
}

#[test]
fn mpc_second_path_validated_and_used() {
    second_path(Role::MpClient);
}

#[test]
fn noqc_second_path_validated_and_used() {
    second_path(Role::NoqClient);
}

// ----- (d) PATH_ABANDON mid-transfer -----

fn abandon(role: Role, by_client: bool) {
    let mut w = World::new(role, 4);
    w.handshake();
    let id = w.open_second_path();
    transfer(&mut w, MB2, 500_000, |w| {
        let now = w.now;
        let p = if by_client {
            w.client.as_mut()
        } else {
            w.server.as_mut()
        };
        p.close_path(now, id)
            .unwrap_or_else(|e| panic!("{} close_path: {e}", p.name()));
    });
    report(&mut w, "abandon");
    let ok = w.drive_until(Duration::from_secs(2), |w| {
        w.client.saw_abandoned(id) && w.server.saw_abandoned(id)
    });
    assert!(
        ok,
        "abandonment not seen by both: client {}, server {}",
        w.client.saw_abandoned(id),
        w.server.saw_abandoned(id)
    );
    // Both sides drop the path state after 3 PTO and the connection stays up on path 0.
    w.run_for(Duration::from_secs(2));
    assert_eq!(w.mp().paths(), vec![0], "mpquic kept the abandoned path");
    let before = w.sent(CLIENT2, SERVER) + w.sent(SERVER, CLIENT2);
    transfer(&mut w, 100_000, 0, |_| {});
    assert_eq!(
        w.sent(CLIENT2, SERVER) + w.sent(SERVER, CLIENT2),
        before,
        "traffic on the abandoned path"
    );
}

#[test]
fn mpc_client_abandons_path_mid_transfer() {
    abandon(Role::MpClient, true);
}

#[test]
fn mpc_server_abandons_path_mid_transfer() {
    abandon(Role::MpClient, false);
}

#[test]
fn noqc_client_abandons_path_mid_transfer() {
    abandon(Role::NoqClient, true);
}

#[test]
fn noqc_server_abandons_path_mid_transfer() {
    abandon(Role::NoqClient, false);
}

// ----- (e) PATH_STATUS -----

/// noq marks path 1 backup; mpquic records the peer's status (mpquic cannot send PATH_STATUS: no API).
fn noq_sends_backup(role: Role) {
    let mut w = World::new(role, 5);
    w.handshake();
    let id = w.open_second_path();
    w.noq().set_backup(id).unwrap();
    let ok = w.drive_until(Duration::from_secs(1), |w| w.mp().peer_says_backup(id));
    assert!(ok, "mpquic did not take PATH_STATUS_BACKUP into account");
    assert!(w.noq_frames().1.path_status_backup >= 1);
    // With path 0 alive, mpquic's scheduler keeps data off the backup path: what mpquic sends there during a
    // 500 kB transfer is acknowledgements of noq's packets on it, if any, at most.
    let (mp_sent_before, _) = w.mp().path_bytes(id).unwrap();
    transfer(&mut w, 500_000, 0, |_| {});
    report(&mut w, "backup");
    let (mp_sent_after, _) = w.mp().path_bytes(id).unwrap();
    assert!(
        mp_sent_after - mp_sent_before < 50_000,
        "mpquic sent {} bytes on the backup path",
        mp_sent_after - mp_sent_before
    );
}

#[test]
fn mpc_noq_server_marks_path_backup() {
    noq_sends_backup(Role::MpClient);
}

#[test]
fn noqc_noq_client_marks_path_backup() {
    noq_sends_backup(Role::NoqClient);
}

/// mpquic marks path 1 backup with PATH_STATUS_BACKUP: noq records it, and mpquic's own scheduler keeps its
/// data off that path. (The status is advisory, draft-21 §3: noq 1.4 still schedules its own data on a path
/// its peer marked backup, so only mpquic's direction is checked.)
fn mpquic_sends_backup(role: Role) {
    let mut w = World::new(role, 15);
    w.handshake();
    let id = w.open_second_path();
    w.mp().set_backup(id).unwrap();
    let ok = w.drive_until(Duration::from_secs(1), |w| w.noq().peer_says_backup(id));
    assert!(ok, "noq did not take mpquic's PATH_STATUS_BACKUP into account");
    assert!(w.noq_frames().0.path_status_backup >= 1);
    let (mp_sent_before, _) = w.mp().path_bytes(id).unwrap();
    transfer(&mut w, 500_000, 0, |_| {});
    report(&mut w, "backup set by mpquic");
    let (mp_sent_after, _) = w.mp().path_bytes(id).unwrap();
    assert!(
        mp_sent_after - mp_sent_before < 50_000,
        "mpquic sent {} bytes on the path it marked backup",
        mp_sent_after - mp_sent_before
    );
}

#[test]
fn mpc_mpquic_client_marks_path_backup() {
    mpquic_sends_backup(Role::MpClient);
}

#[test]
fn noqc_mpquic_server_marks_path_backup() {
    mpquic_sends_backup(Role::NoqClient);
}

// ----- (f) connection-ID rotation on path 1 -----

fn cid_rotation(role: Role) {
    let mut w = World::new(role, 6);
    w.handshake();
    let id = w.open_second_path();
    for round in 0..3 {
        let c = w.mpp().conn_mut().unwrap();
        let before = c.remote_cid(PathId(id)).unwrap();
        assert!(
            c.rotate_remote_cid(PathId(id)),
            "round {round}: no spare connection ID from noq for path 1"
        );
        assert!(
            c.rotate_local_cids(PathId(id)),
            "round {round}: mpquic could not issue new CIDs"
        );
        assert_ne!(c.remote_cid(PathId(id)).unwrap(), before);
        transfer(&mut w, 300_000, 0, |_| {});
    }
    report(&mut w, "cid rotation");
    let (rx, _) = w.noq_frames();
    assert!(
        rx.path_retire_connection_id >= 3,
        "noq saw {} PATH_RETIRE_CONNECTION_ID",
        rx.path_retire_connection_id
    );
    let (sent, received) = w.mp().path_bytes(id).unwrap();
    assert!(sent > 0 && received > 0);
}

#[test]
fn mpc_cid_rotation_on_second_path() {
    cid_rotation(Role::MpClient);
}

#[test]
fn noqc_cid_rotation_on_second_path() {
    cid_rotation(Role::NoqClient);
}

// ----- more: loss, abandoning path 0, key update, path-ID churn, a second path on the same 4-tuple -----

/// Two paths and 2 % random loss in both directions: PATH_ACK ranges with gaps, retransmission across paths.
fn lossy_two_paths(role: Role) {
    let mut w = World::new(role, 7);
    w.handshake();
    let id = w.open_second_path();
    w.loss = 0.02;
    transfer(&mut w, 1_000_000, 0, |_| {});
    report(&mut w, "2% loss");
    assert!(w.mp().lost() > 0 && w.noq().lost() > 0, "the link lost nothing?");
    let (sent, received) = w.mp().path_bytes(id).unwrap();
    assert!(sent > 0 && received > 0);
}

#[test]
fn mpc_two_paths_with_loss() {
    lossy_two_paths(Role::MpClient);
}

#[test]
fn noqc_two_paths_with_loss() {
    lossy_two_paths(Role::NoqClient);
}

/// Path 0 (the handshake path) is abandoned mid-transfer; the transfer completes on path 1, and a second one
/// runs on path 1 alone.
fn abandon_path0(role: Role, by_client: bool) {
    let mut w = World::new(role, 8);
    w.handshake();
    let id = w.open_second_path();
    transfer(&mut w, 1_000_000, 300_000, |w| {
        let now = w.now;
        let p = if by_client {
            w.client.as_mut()
        } else {
            w.server.as_mut()
        };
        p.close_path(now, 0)
            .unwrap_or_else(|e| panic!("{} close_path(0): {e}", p.name()));
    });
    report(&mut w, "abandon path 0");
    let ok = w.drive_until(Duration::from_secs(2), |w| {
        w.client.saw_abandoned(0) && w.server.saw_abandoned(0)
    });
    assert!(ok, "abandonment of path 0 not seen by both");
    w.run_for(Duration::from_secs(2));
    assert_eq!(w.mp().paths(), vec![id], "mpquic paths after abandoning path 0");
    let before = w.sent(CLIENT, SERVER) + w.sent(SERVER, CLIENT);
    transfer(&mut w, 300_000, 0, |_| {});
    assert_eq!(
        w.sent(CLIENT, SERVER) + w.sent(SERVER, CLIENT),
        before,
        "traffic on the abandoned path 0"
    );
}

#[test]
fn mpc_client_abandons_path0() {
    abandon_path0(Role::MpClient, true);
}

#[test]
fn mpc_server_abandons_path0() {
    abandon_path0(Role::MpClient, false);
}

#[test]
fn noqc_client_abandons_path0() {
    abandon_path0(Role::NoqClient, true);
}

#[test]
fn noqc_server_abandons_path0() {
    abandon_path0(Role::NoqClient, false);
}

/// A 1-RTT key update in the middle of a transfer on two paths (the path ID is in the nonce of both
/// generations), initiated by mpquic or by noq.
fn key_update(role: Role, by_mp: bool) {
    let mut w = World::new(role, 9);
    w.handshake();
    let id = w.open_second_path();
    let gen_before = w.mpp().conn().unwrap().key_generation();
    transfer(&mut w, 1_000_000, 300_000, |w| {
        if by_mp {
            assert!(w.mpp().conn_mut().unwrap().force_key_update());
        } else {
            w.noqp().conn_mut().unwrap().force_key_update();
        }
    });
    report(&mut w, "key update");
    assert!(
        w.mpp().conn().unwrap().key_generation() > gen_before,
        "mpquic's key generation did not move"
    );
    let (sent, received) = w.mp().path_bytes(id).unwrap();
    assert!(sent > 0 && received > 0);
}

#[test]
fn mpc_key_update_by_mpquic() {
    key_update(Role::MpClient, true);
}

#[test]
fn mpc_key_update_by_noq() {
    key_update(Role::MpClient, false);
}

#[test]
fn noqc_key_update_by_mpquic() {
    key_update(Role::NoqClient, true);
}

#[test]
fn noqc_key_update_by_noq() {
    key_update(Role::NoqClient, false);
}

/// The client opens, uses and abandons a path six times: path IDs 1..=6 go beyond initial_max_path_id (4),
/// so each side must raise its limit with MAX_PATH_ID as path IDs are used up.
fn path_churn(role: Role) {
    let mut w = World::new(role, 10);
    w.handshake();
    w.run_for(Duration::from_millis(50));
    for expected in 1..=6u32 {
        let now = w.now;
        let id = w
            .client
            .open_path(now, addr(CLIENT2), addr(SERVER))
            .unwrap_or_else(|e| {
                report(&mut w, "churn");
                panic!("{} client could not open path {expected}: {e}", w.client.name())
            });
        assert_eq!(id, expected);
        let ok = w.drive_until(Duration::from_secs(3), |w| {
            w.client.path_validated(id) && w.server.path_validated(id)
        });
        assert!(ok, "path {id} not validated");
        transfer(&mut w, 100_000, 0, |_| {});
        let now = w.now;
        w.client.close_path(now, id).unwrap();
        let ok = w.drive_until(Duration::from_secs(2), |w| {
            w.client.saw_abandoned(id) && w.server.saw_abandoned(id)
        });
        assert!(ok, "abandonment of path {id} not seen by both");
        w.run_for(Duration::from_secs(1));
    }
    report(&mut w, "churn");
}

#[test]
fn mpc_path_ids_beyond_initial_max() {
    path_churn(Role::MpClient);
}

#[test]
fn noqc_path_ids_beyond_initial_max() {
    path_churn(Role::NoqClient);
}

/// Path 1 uses the same 4-tuple as path 0 (draft-ietf-quic-multipath-21 §3: several paths may share a
/// 4-tuple; they differ by path ID).
fn same_tuple(role: Role) {
    let mut w = World::new(role, 11);
    w.handshake();
    w.run_for(Duration::from_millis(50));
    let now = w.now;
    let id = w
        .client
        .open_path(now, addr(CLIENT), addr(SERVER))
        .unwrap_or_else(|e| panic!("{} client could not open a path: {e}", w.client.name()));
    let ok = w.drive_until(Duration::from_secs(3), |w| {
        w.client.path_validated(id) && w.server.path_validated(id)
    });
    assert!(ok, "path {id} on path 0's 4-tuple not validated");
    transfer(&mut w, 1_000_000, 0, |_| {});
    report(&mut w, "same 4-tuple");
    let (sent, received) = w.mp().path_bytes(id).unwrap();
    assert!(sent > 0 && received > 0);
    assert_eq!(w.sent(CLIENT2, SERVER), 0);
}

#[test]
fn mpc_second_path_on_same_tuple() {
    same_tuple(Role::MpClient);
}

#[test]
fn noqc_second_path_on_same_tuple() {
    same_tuple(Role::NoqClient);
}

/// A NAT in front of the client's second interface rebinds mid-transfer: path 1's 4-tuple changes
/// (draft-ietf-quic-multipath-21 §3: an RFC 9000 migration within that path ID). The server validates the new
/// address and the transfer completes.
fn rebinding_on_path1(role: Role) {
    let mut w = World::new(role, 12);
    w.handshake();
    let id = w.open_second_path();
    transfer(&mut w, 1_000_000, 300_000, |w| {
        w.nat.insert(addr(CLIENT2), addr(CLIENT2_NAT));
    });
    report(&mut w, "rebinding on path 1");
    assert!(
        w.sent(CLIENT2_NAT, SERVER) > 0,
        "nothing sent through the new mapping"
    );
    assert!(
        w.sent(SERVER, CLIENT2_NAT) > 0,
        "the server never answered on the rebound 4-tuple"
    );
    let before = w.sent(SERVER, CLIENT2_NAT);
    transfer(&mut w, 300_000, 0, |_| {});
    assert!(
        w.sent(SERVER, CLIENT2_NAT) > before,
        "the server does not use path 1 at its new address"
    );
    if role == Role::NoqClient {
        let s = w.mp().path_bytes(id);
        assert!(s.is_some());
        let remote = w.mpp().conn().unwrap().path_stats(PathId(id)).unwrap().remote;
        assert_eq!(remote, addr(CLIENT2_NAT), "mpquic server's path 1 remote");
    }
}

#[test]
fn mpc_nat_rebinding_on_second_path() {
    rebinding_on_path1(Role::MpClient);
}

#[test]
fn noqc_nat_rebinding_on_second_path() {
    rebinding_on_path1(Role::NoqClient);
}

/// The client opens path 1 but the server's answers never reach `CLIENT2`: validation fails and the client
/// abandons the path (draft-ietf-quic-multipath-21 §3: "the client still sends PATH_ABANDON"); the connection
/// carries on over path 0.
fn validation_failure(role: Role) {
    // noq gives up on a path only through its path idle timeout (off by default). Only the noq client gets one:
    // a noq server would also abandon the idle path 0 and, with path 1 gone, end the connection.
    let mut w = match role {
        Role::NoqClient => World::with_noq(role, 13, |t| {
            t.default_path_max_idle_timeout(Some(Duration::from_secs(3)));
        }),
        Role::MpClient => World::new(role, 13),
    };
    w.handshake();
    w.run_for(Duration::from_millis(50));
    w.blackholed.push(addr(CLIENT2));
    let now = w.now;
    let id = w.client.open_path(now, addr(CLIENT2), addr(SERVER)).unwrap();
    let ok = w.drive_until(Duration::from_secs(10), |w| w.client.saw_abandoned(id));
    report(&mut w, "validation failure");
    assert!(ok, "{} client did not give up on path {id}", w.client.name());
    assert!(!w.client.path_validated(id));
    // The server learns of it (if it created the path at all) and forgets it after 3 PTO (of a path that
    // only ever saw backed-off probes: seconds).
    let ok = w.drive_until(Duration::from_secs(20), |w| w.mp().paths() == vec![0]);
    assert!(ok, "mpquic still holds the failed path: {:?}", w.mp().paths());
    assert!(w.noq_frames().0.path_abandon + w.noq_frames().1.path_abandon >= 1);
    transfer(&mut w, 200_000, 0, |_| {});
}

#[test]
fn mpc_path_validation_failure() {
    validation_failure(Role::MpClient);
}

#[test]
fn noqc_path_validation_failure() {
    validation_failure(Role::NoqClient);
}

/// Two paths, 20 s of silence (under both idle timeouts), then a transfer; then mpquic closes the connection
/// and noq sees the application close.
fn idle_then_close(role: Role) {
    let mut w = World::new(role, 14);
    w.handshake();
    let id = w.open_second_path();
    w.run_for(Duration::from_secs(20));
    transfer(&mut w, 200_000, 0, |_| {});
    assert!(w.mp().paths().contains(&id), "path 1 was lost while idle");
    let now = w.now;
    w.closing = true;
    w.mpp()
        .conn_mut()
        .unwrap()
        .close(now, VarInt::from_u32(7), Bytes::from_static(b"bye"));
    w.run_for(Duration::from_millis(200));
    let why = w.noq().closed().expect("noq did not see the close");
    assert!(
        why.contains("ApplicationClosed") && why.contains('7'),
        "noq saw {why}"
    );
}

#[test]
fn mpc_idle_then_application_close() {
    idle_then_close(Role::MpClient);
}

#[test]
fn noqc_idle_then_application_close() {
    idle_then_close(Role::NoqClient);
}
