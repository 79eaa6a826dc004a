//! Tunnel flows: inner single-path connections carried inside the DATAGRAM frames of a flow's outer
//! (multipath) connection (scenario side: [`crate::scenario::tunnel`]).
//!
//! The outer connection is the flow's own client and server connection ([`super::flow`]): it opens the
//! scenario's paths, and its controller (or none, [`super::tunnel_cc`]) and scheduler decide when and on
//! which path each DATAGRAM leaves. A tunnel flow's application is this module instead of a bulk stream:
//!
//! - **Inner flows.** Each is a client endpoint and a server endpoint of its own, each driven through a
//!   [`Host`] like a flow's ends, at two virtual addresses inside the tunnel ([`INNER_CLIENT`],
//!   [`INNER_SERVER`]); the server keeps the first connection it accepts. One real mpquic connection
//!   between them with the inner flow's controller, on one path, carrying one bulk stream in the flow's
//!   `direction` with the same sender and checking receiver as a bulk flow (pattern bytes, a mismatch fails
//!   the run). They start once the outer handshake is complete at both ends (the outer client can send
//!   DATAGRAMs and the server has its connection), all at once.
//! - **Encapsulation.** Every UDP datagram an inner connection sends goes, behind the tunnel header
//!   ([`super::tunnel_reorder`]: inner index, sequence number of the direction), into one DATAGRAM of the
//!   outer connection at the same end; a datagram the outer connection refuses (not yet able to send
//!   DATAGRAMs) is dropped and counted, like a packet a tunnel endpoint drops. The outer connection queues
//!   at most `ConnectionLimits::datagrams_out` (1024) DATAGRAMs and drops the oldest beyond: with an outer
//!   controller that is the tunnel's queue.
//! - **Decapsulation.** At the far end, each received DATAGRAM goes through the direction's reorder buffer
//!   and then to the inner endpoint it names. A datagram shorter than the header or naming no inner flow is
//!   dropped and counted.
//! - **Timers.** The earliest of the inner connections' timers and the reorder buffers' hold deadlines joins
//!   the flow's timer ([`Tunnel::poll_timeout`]).
//!
//! The outer connection's datagrams are larger than other flows' by the encapsulation: its
//! `max_udp_payload` is [`OUTER_MAX_UDP_PAYLOAD`], so that an inner datagram of 1200 bytes (the inner
//! connections never run path MTU discovery) plus the header and the DATAGRAM frame fits one outer packet.
//! Everything is driven by the engine's clock and seeded endpoints: deterministic like any flow.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use mpquic::cc::PathId;
use mpquic::proto::VarInt;
use mpquic::proto::connection::{
    ClientConfig, Connection, ConnectionStats, Event, ServerConfig, TransportConfig,
};
use mpquic::proto::endpoint::{Endpoint, EndpointConfig};
use mpquic::proto::host::{Host, Received};
use mpquic::proto::streams::StreamEvent;

use super::EngineError;
use super::flow::{Receiver, Sender, accept_streams, receive, send};
use super::tunnel_reorder::{self, Released, ReorderBuffer, ReorderStats};
use crate::results::InnerTotals;
use crate::scenario::tunnel::TunnelSpec;

/// The inner client's address inside the tunnel (TEST-NET-1, RFC 5737).
pub const INNER_CLIENT: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)), 50_000);
/// The inner server's address inside the tunnel.
pub const INNER_SERVER: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 2)), 4_433);

/// The outer connection's UDP payload: an inner datagram of 1200 bytes + the tunnel header (10) + the
/// DATAGRAM frame's type and length (3) + a short header with an 8-byte connection ID and a 4-byte packet
/// number (13) + the AEAD tag (16) = 1242 bytes, rounded up to 1280 so that an ACK frame can ride along.
pub const OUTER_MAX_UDP_PAYLOAD: u16 = 1280;

/// Sets the outer connection's part of `config`: the datagram size, and no congestion control for
/// `cc = "none"`.
pub fn outer_config(config: &mut TransportConfig, cc: &str) {
    config.max_udp_payload = OUTER_MAX_UDP_PAYLOAD;
    if cc == crate::scenario::tunnel::UNCONTROLLED {
        config.congestion_controller_factory = Some(super::tunnel_cc::factory());
    }
}

/// The transport configuration of an inner connection: controller `cc`, one path, the simulator's generous
/// stream windows, 1200-byte datagrams, idle timeout `idle`.
pub fn inner_config(cc: &str, idle: Duration) -> TransportConfig {
    TransportConfig {
        congestion_controller: cc.to_owned(),
        streams: super::streams_config(None),
        mtu_discovery: None,
        max_idle_timeout: idle,
        reinjection: mpquic::proto::connection::ReinjectionConfig {
            enabled: false,
            ..Default::default()
        },
        ..TransportConfig::default()
    }
}

/// Counters of a tunnel's ends.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TunnelStats {
    /// Inner datagrams put into the outer connection, towards the server and towards the client.
    pub encapsulated: [u64; 2],
    /// Inner datagrams the outer connection refused (it could not send DATAGRAMs yet).
    pub refused: u64,
    /// Received DATAGRAMs that were too short or named no inner flow.
    pub malformed: u64,
    /// The reorder buffer at the server (packets towards the server) and at the client.
    pub reorder: [ReorderStats; 2],
}

/// One inner flow: two hosts, one connection, the bulk application.
struct Inner {
    name: String,
    bytes: Option<u64>,
    client_config: ClientConfig,
    /// The inner client at [`INNER_CLIENT`]: its endpoint and, once the tunnel has started, its connection.
    client: Host,
    /// The inner server at [`INNER_SERVER`]: its endpoint and the one connection it accepts (the first
    /// Initial's; a later new connection is dropped at once, and the endpoint's routes to it lead nowhere).
    server: Host,
    sender: Sender,
    receiver: Receiver,
    /// Bytes the receiver read.
    read: u64,
    /// The stream's length, once the receiver read its FIN.
    fin_at: Option<u64>,
}

/// What one pass of the tunnel's applications produced.
#[derive(Debug, Default, Clone, Copy)]
pub struct Pass {
    /// Bytes the inner receivers read in this pass.
    pub read: u64,
}

/// The buffers encapsulation writes into: the inner connection's datagram, then its framed copy.
struct Buffers<'a> {
    out: &'a mut Vec<u8>,
    frames: &'a mut BytesMut,
}

/// The tunnel application of a flow (module documentation).
pub struct Tunnel {
    inner: Vec<Inner>,
    download: bool,
    started: bool,
    /// The next sequence number towards the server and towards the client.
    seq: [u64; 2],
    /// The reorder buffers at the server and at the client.
    reorder: [ReorderBuffer; 2],
    refused: u64,
    malformed: u64,
    /// Scratch list of released packets.
    released: Vec<Released>,
    /// Scratch buffer the inner connections write their datagrams into.
    buf: Vec<u8>,
    /// Where framed datagrams are written for the outer connections: each one is split off as a `Bytes`
    /// sharing this buffer's allocation, which is reused once the outer connections have sent them all
    /// (one allocation per [`FRAMES_CHUNK`] bytes at most, instead of one per datagram).
    frames: BytesMut,
    /// Emptied buffers of delivered datagrams, for the next ones received (decapsulation).
    spare: Vec<Vec<u8>>,
    flow: usize,
}

/// The size of a new buffer for framed datagrams ([`Tunnel::frames`]): room for about fifty of 1,210 bytes.
const FRAMES_CHUNK: usize = 64 * 1024;

impl std::fmt::Debug for Tunnel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tunnel")
            .field("inner", &self.inner.len())
            .field("seq", &self.seq)
            .finish_non_exhaustive()
    }
}

impl Tunnel {
    /// A tunnel with the inner flows of `spec`, each with its own client and server configuration from
    /// `configs` (called with each inner flow's transport configuration); `seed` feeds the inner endpoints.
    pub fn new(
        spec: &TunnelSpec,
        flow: usize,
        download: bool,
        idle: Duration,
        seed: u64,
        mut configs: impl FnMut(&TransportConfig) -> Result<(ClientConfig, Arc<ServerConfig>), EngineError>,
    ) -> Result<Tunnel, EngineError> {
        let mut inner = Vec::with_capacity(spec.inner.len());
        for (i, s) in spec.inner.iter().enumerate() {
            let (client_config, server_config) = configs(&inner_config(&s.cc, idle))?;
            let i = i as u64;
            inner.push(Inner {
                name: s.name.clone(),
                bytes: s.bytes,
                client_config,
                client: Host::new(
                    Endpoint::new(
                        EndpointConfig {
                            seed: super::derive_seed(seed, 4, i),
                            cid_len: 8,
                        },
                        None,
                    ),
                    INNER_CLIENT,
                ),
                server: Host::new(
                    Endpoint::new(
                        EndpointConfig {
                            seed: super::derive_seed(seed, 5, i),
                            cid_len: 8,
                        },
                        Some(server_config),
                    ),
                    INNER_SERVER,
                ),
                sender: Sender::default(),
                receiver: Receiver::default(),
                read: 0,
                fin_at: None,
            });
        }
        let window = usize::try_from(spec.reorder_window).unwrap_or(usize::MAX);
        Ok(Tunnel {
            inner,
            download,
            started: false,
            seq: [0, 0],
            reorder: [
                ReorderBuffer::new(window, spec.reorder_hold),
                ReorderBuffer::new(window, spec.reorder_hold),
            ],
            refused: 0,
            malformed: 0,
            released: Vec::new(),
            buf: Vec::with_capacity(1200),
            frames: BytesMut::new(),
            spare: Vec::new(),
            flow,
        })
    }

    /// Counters so far.
    pub fn stats(&self) -> TunnelStats {
        TunnelStats {
            encapsulated: self.seq,
            refused: self.refused,
            malformed: self.malformed,
            reorder: [self.reorder[0].stats(), self.reorder[1].stats()],
        }
    }

    /// Per inner flow: its name and the bytes its receiver read.
    pub fn inner_read(&self) -> Vec<(&str, u64)> {
        self.inner.iter().map(|i| (i.name.as_str(), i.read)).collect()
    }

    /// Per inner flow: the stream length read up to the FIN, once read.
    pub fn inner_fin(&self) -> Vec<Option<u64>> {
        self.inner.iter().map(|i| i.fin_at).collect()
    }

    /// Whether every inner flow has a size and its receiver has read all of it up to the FIN.
    pub fn complete(&self) -> bool {
        self.inner.iter().all(|i| i.bytes.is_some() && i.fin_at.is_some())
    }

    /// The sum of one counter of the inner senders' statistics (packets lost: the end-to-end
    /// retransmissions; congestion events: the end-to-end flow's congestion signals).
    pub fn sum_over_senders(&self, counter: impl Fn(&ConnectionStats) -> u64) -> u64 {
        self.inner
            .iter()
            .filter_map(|i| i.sender_conn(self.download))
            .map(|c| counter(&c.stats()))
            .fold(0u64, u64::saturating_add)
    }

    /// Per inner flow, in order: its name and its sender's path now (`None` before the sender has a
    /// connection): RTTs, window and the controller's own view.
    pub fn inner_totals(&self) -> Vec<InnerTotals> {
        self.inner
            .iter()
            .map(|i| InnerTotals {
                name: i.name.clone(),
                path: i.sender_conn(self.download).and_then(|c| c.path_stats(PathId(0))),
            })
            .collect()
    }

    /// The inner flows' sending connections, in order (tests and diagnostics).
    pub fn inner_senders(&self) -> Vec<Option<&Connection>> {
        self.inner.iter().map(|i| i.sender_conn(self.download)).collect()
    }

    /// The earliest inner connection timer and reorder hold deadline.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let conns = self
            .inner
            .iter()
            .flat_map(|i| [i.client.poll_timeout(), i.server.poll_timeout()]);
        let holds = self.reorder.iter().map(ReorderBuffer::deadline);
        conns.chain(holds).flatten().min()
    }

    /// Fires the inner connections' timers due at `now` (hold deadlines are handled by [`Tunnel::pump`]).
    pub fn handle_timeouts(&mut self, now: Instant) {
        for i in &mut self.inner {
            i.client.handle_timeouts(now);
            i.server.handle_timeouts(now);
        }
    }

    /// The flow stops: every inner sender resets its stream and writes no more.
    pub fn stop(&mut self) {
        let download = self.download;
        for i in &mut self.inner {
            let stream = i.sender.stream;
            let done = i.sender.done;
            i.sender.done = true;
            if let (Some(conn), Some(id), false) = (i.sender_conn_mut(download), stream, done) {
                let _ = conn.reset(id, VarInt::from_u32(0));
            }
        }
    }

    /// One pass at `now`, between the outer connections' event handling and their transmissions: received
    /// DATAGRAMs through the reorder buffers to the inner endpoints, expired holds, the inner applications,
    /// and every inner datagram into the outer connection of its end. `outer` is the outer client's and
    /// server's connection (when they exist).
    pub fn pump(
        &mut self,
        now: Instant,
        mut client: Option<&mut Connection>,
        mut server: Option<&mut Connection>,
    ) -> Result<Pass, EngineError> {
        // Decapsulation: index 0 is the direction towards the server.
        for (dir, conn) in [(0usize, server.as_deref_mut()), (1, client.as_deref_mut())] {
            let Some(conn) = conn else { continue };
            while let Some(d) = conn.recv_datagram() {
                self.decapsulate(dir, &d, now);
            }
        }
        for dir in 0..2 {
            if let Some(r) = self.reorder.get_mut(dir) {
                r.expire(now, &mut self.released);
            }
            self.deliver(dir, now);
        }
        if !self.started {
            let outer_ready = client
                .as_deref()
                .is_some_and(|c| !c.is_handshaking() && c.max_datagram_size().is_some())
                && server.as_deref().is_some_and(|c| !c.is_handshaking());
            if outer_ready {
                self.started = true;
                for i in &mut self.inner {
                    i.client
                        .connect(now, &i.client_config, INNER_SERVER, super::tls::SERVER_NAME)
                        .map_err(|e| EngineError::Setup(format!("tunnel {}: connect: {e}", i.name)))?;
                }
            }
        }
        let mut pass = Pass::default();
        for i in &mut self.inner {
            pass.read = pass.read.saturating_add(i.app(now, self.download, self.flow)?);
        }
        // Encapsulation.
        let bufs = &mut Buffers {
            out: &mut self.buf,
            frames: &mut self.frames,
        };
        for (k, i) in self.inner.iter_mut().enumerate() {
            let index = u16::try_from(k).unwrap_or(u16::MAX);
            if let Some(outer) = client.as_deref_mut() {
                Self::encapsulate(
                    &mut i.client,
                    now,
                    index,
                    &mut self.seq[0],
                    outer,
                    &mut self.refused,
                    bufs,
                );
            }
            if let Some(outer) = server.as_deref_mut() {
                Self::encapsulate(
                    &mut i.server,
                    now,
                    index,
                    &mut self.seq[1],
                    outer,
                    &mut self.refused,
                    bufs,
                );
            }
        }
        Ok(pass)
    }

    /// Every datagram the connection of inner `host` wants to send, framed into DATAGRAMs of `outer`.
    fn encapsulate(
        host: &mut Host,
        now: Instant,
        index: u16,
        seq: &mut u64,
        outer: &mut Connection,
        refused: &mut u64,
        bufs: &mut Buffers<'_>,
    ) {
        let frames = &mut *bufs.frames;
        host.poll_transmits(now, bufs.out, |d, buf| {
            let payload = buf.get(..d.transmit.size).unwrap_or(buf);
            let len = tunnel_reorder::HEADER_LEN + payload.len();
            if frames.capacity() < len {
                // Reuses the allocation when every datagram split from it is gone, else makes a new one.
                frames.reserve(FRAMES_CHUNK.max(len));
            }
            tunnel_reorder::encode_into(index, *seq, payload, frames);
            *seq = seq.saturating_add(1);
            if outer.send_datagram(frames.split().freeze()).is_err() {
                *refused = refused.saturating_add(1);
            }
            ControlFlow::Continue(())
        });
    }

    /// One received DATAGRAM of direction `dir`: into the reorder buffer.
    fn decapsulate(&mut self, dir: usize, data: &[u8], now: Instant) {
        let Some((index, seq, payload)) = tunnel_reorder::decode(data) else {
            self.malformed = self.malformed.saturating_add(1);
            return;
        };
        if usize::from(index) >= self.inner.len() {
            self.malformed = self.malformed.saturating_add(1);
            return;
        }
        if let Some(r) = self.reorder.get_mut(dir) {
            let mut data = self.spare.pop().unwrap_or_default();
            data.clear();
            data.extend_from_slice(payload);
            r.push(seq, (index, data), now, &mut self.released);
        }
        self.deliver(dir, now);
    }

    /// Hands the released packets of direction `dir` to their inner endpoints.
    fn deliver(&mut self, dir: usize, now: Instant) {
        for (index, mut data) in self.released.drain(..) {
            if let Some(i) = self.inner.get_mut(usize::from(index)) {
                if dir == 0 {
                    i.server_datagram(now, &mut data);
                } else {
                    i.client_datagram(now, &mut data);
                }
            }
            // Never more buffers than were held or released at once: the reorder window bounds them.
            self.spare.push(data);
        }
    }
}

impl Inner {
    fn sender_conn(&self, download: bool) -> Option<&Connection> {
        if download {
            self.server.first()
        } else {
            self.client.first()
        }
    }

    fn sender_conn_mut(&mut self, download: bool) -> Option<&mut Connection> {
        if download {
            self.server.first_mut()
        } else {
            self.client.first_mut()
        }
    }

    /// A datagram from the inner server. Before the client has connected it has no connection, and its
    /// endpoint does not see the datagram.
    fn client_datagram(&mut self, now: Instant, data: &mut [u8]) {
        if self.client.conns.is_empty() {
            return;
        }
        // A stateless answer of the client's endpoint (a Stateless Reset) is not sent.
        self.client
            .receive(now, Some(INNER_CLIENT), INNER_SERVER, None, data);
    }

    /// A datagram from the inner client. The server keeps only the first connection it accepts.
    fn server_datagram(&mut self, now: Instant, data: &mut [u8]) {
        // Stateless answers of the server's endpoint (Version Negotiation, Retry, Stateless Reset) are not
        // sent either.
        if let Received::Accepted(h) = self
            .server
            .receive(now, Some(INNER_SERVER), INNER_CLIENT, None, data)
        {
            if self.server.conns.len() > 1 {
                self.server.conns.remove(&h);
            }
        }
    }

    /// The inner flow's application on both ends; returns the bytes its receiver read.
    fn app(&mut self, now: Instant, download: bool, flow: usize) -> Result<u64, EngineError> {
        let mut read = 0u64;
        let mut no_limit = None;
        // The client's end, then the server's; the receiving end accepts the stream the sender opens.
        for (host, receives) in [(&mut self.client, download), (&mut self.server, !download)] {
            let Some(c) = host.first_mut() else { continue };
            while let Some(e) = c.poll_event() {
                if let Event::Stream(StreamEvent::Opened { dir }) = e {
                    if receives {
                        accept_streams(c, dir, &mut self.receiver);
                    }
                }
            }
            host.forward_endpoint_events();
            let Some(c) = host.first_mut() else { continue };
            if !c.is_handshaking() && !c.is_closed() {
                if receives {
                    let got = receive(c, now, &mut self.receiver, &mut no_limit, flow)?;
                    read = read.saturating_add(got.bytes);
                    self.fin_at = got.fin_at.or(self.fin_at);
                } else {
                    send(c, &mut self.sender, self.receiver.read, self.bytes);
                }
            }
        }
        // Acknowledgements processed above may have freed send buffer: one more write.
        let sending = if download {
            &mut self.server
        } else {
            &mut self.client
        };
        if let Some(c) = sending
            .first_mut()
            .filter(|c| !c.is_handshaking() && !c.is_closed())
        {
            send(c, &mut self.sender, self.receiver.read, self.bytes);
        }
        self.read = self.read.saturating_add(read);
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )]

    use super::*;

    #[test]
    fn a_full_inner_datagram_fits_one_outer_datagram_frame() {
        // 1200 (inner) + 10 (tunnel header) + 1 (frame type) + 2 (length varint, 1210 < 16384) + 1 (short
        // header's first byte) + 8 (connection ID) + 4 (packet number) + 16 (AEAD tag) = 1242 ≤ 1280.
        let needed = 1200 + tunnel_reorder::HEADER_LEN + 1 + 2 + 1 + 8 + 4 + 16;
        assert_eq!(needed, 1242);
        assert!(needed <= usize::from(OUTER_MAX_UDP_PAYLOAD));
        let mut c = TransportConfig::default();
        outer_config(&mut c, "none");
        assert_eq!(c.max_udp_payload, OUTER_MAX_UDP_PAYLOAD);
        assert!(c.congestion_controller_factory.is_some());
        let mut c = TransportConfig::default();
        outer_config(&mut c, "lia");
        assert!(c.congestion_controller_factory.is_none());
        assert_eq!(inner_config("bbr", Duration::ZERO).mtu_discovery, None);
    }
}
