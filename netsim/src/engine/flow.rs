//! Bulk flows: a client mpquic endpoint and connection on the flow's `from` host, a server endpoint on its `to`
//! host, and the application on both ends.
//!
//! - **Client.** At the flow's `start` it connects; once the handshake completes it opens one
//!   unidirectional stream and writes a fixed byte pattern (byte at offset `o` is `o mod 251`): `bytes`
//!   bytes then FIN when the flow has a size, otherwise continuously until the flow stops (`stop` or the
//!   end of the scenario), where it resets the stream. Writes go straight from a shared pattern buffer
//!   ([`bytes::Bytes`] slices of up to [`CHUNK`] = 1 MiB, no copy). Once a write is refused or cut short
//!   (the send buffer is full), the client writes again only after the server has read another [`CHUNK`]
//!   (or everything written so far): the send buffer then refills in large pieces rather than a packet's
//!   worth per acknowledgement. That keeps the stream's chunk list short, which matters because the stack
//!   walks it from the acknowledged base to the offset it sends, for every packet. The buffer (16 MiB)
//!   stays well above any window of the shipped scenarios, so the sender is never application-limited.
//! - **Server.** It accepts the stream, reads everything as it arrives (so flow control never stalls the
//!   sender), counts the bytes, and checks each byte against the pattern: a mismatch means the stack
//!   delivered wrong data and fails the run.
//! - **Accounting.** Delivered bytes count only while the flow is active (from `start` to `stop`, or to the
//!   FIN when the flow has a size); the flow's active time ends at its stop or completion.
//! - **Paths.** Single-path for now: the connection runs on the flow's first path; further paths of a
//!   multipath flow wait for connection-level multipath (issue 6) and report no samples and no bytes.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use bytes::Bytes;
use mpquic::cc::PathId;
use mpquic::proto::VarInt;
use mpquic::proto::connection::{ClientConfig, Connection, Event, ServerConfig};
use mpquic::proto::endpoint::{ConnectionHandle, DatagramEvent, Endpoint, EndpointConfig};
use mpquic::proto::frame::Dir;
use mpquic::proto::streams::{ReadError, StreamEvent, StreamId, WriteError};

use super::EngineError;
use super::network::LinkIndex;
use crate::metrics::PathSample;
use crate::time::SimTime;

/// Period of the byte pattern (a prime, so that it never lines up with packet sizes).
const PATTERN_PERIOD: usize = 251;
/// Largest single write or pattern comparison, and how much the server must read before a client whose
/// send buffer was full writes again (see the module documentation).
const CHUNK: usize = 1 << 20;
/// Capacity of a new datagram buffer (buffers are reused through the engine's pool).
const DATAGRAM_CAPACITY: usize = 1500;
/// Largest single read.
const READ_MAX: usize = 1 << 20;

/// The pattern buffer: `CHUNK + PATTERN_PERIOD` bytes, byte `i` = `i mod 251`.
fn pattern() -> &'static Bytes {
    static PATTERN: OnceLock<Bytes> = OnceLock::new();
    PATTERN.get_or_init(|| {
        let v: Vec<u8> = (0..CHUNK + PATTERN_PERIOD)
            .map(|i| u8::try_from(i % PATTERN_PERIOD).unwrap_or(0))
            .collect();
        Bytes::from(v)
    })
}

/// `len` pattern bytes (at most [`CHUNK`]) starting at stream offset `offset`.
fn pattern_at(offset: u64, len: usize) -> Bytes {
    let start = usize::try_from(offset % PATTERN_PERIOD as u64).unwrap_or(0);
    pattern().slice(start..start.saturating_add(len.min(CHUNK)))
}

/// Whether `data`, received at stream offset `offset`, matches the pattern.
fn matches_pattern(offset: u64, data: &[u8]) -> bool {
    let mut off = offset;
    data.chunks(CHUNK).all(|piece| {
        let ok = pattern_at(off, piece.len()).as_ref() == piece;
        off = off.saturating_add(piece.len() as u64);
        ok
    })
}

/// One datagram a flow wants to send.
#[derive(Debug)]
pub struct Outgoing {
    /// Towards the server (forward route) or the client (reverse route).
    pub to_server: bool,
    /// Source address.
    pub src: SocketAddr,
    /// Destination address.
    pub dst: SocketAddr,
    /// The UDP payload.
    pub data: Vec<u8>,
}

/// The read count at which a client with a full send buffer writes again: another [`CHUNK`] beyond `read`,
/// but never beyond what was `written` (a sender whose acknowledgements were lost cannot wait forever).
fn refill_mark(read: u64, written: u64) -> u64 {
    read.saturating_add(CHUNK as u64).min(written)
}

/// Collects every datagram `conn` wants to send at `now` into `out`, each in a buffer from `pool`.
fn transmit_all(
    conn: &mut Connection,
    now: Instant,
    to_server: bool,
    src: SocketAddr,
    out: &mut Vec<Outgoing>,
    pool: &mut Vec<Vec<u8>>,
) {
    loop {
        let mut data = pool
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(DATAGRAM_CAPACITY));
        let Some(t) = conn.poll_transmit(now, &mut data) else {
            pool.push(data);
            return;
        };
        data.truncate(t.size);
        out.push(Outgoing {
            to_server,
            src,
            dst: t.remote,
            data,
        });
    }
}

/// The static description of a flow, resolved for the engine.
#[derive(Debug, Clone)]
pub struct FlowSetup {
    /// Index in the scenario.
    pub index: usize,
    /// When the client connects.
    pub start: SimTime,
    /// When the flow stops sending.
    pub stop: SimTime,
    /// Bytes to send, or `None` for "until stopped".
    pub bytes: Option<u64>,
    /// Client address (first path's local interface).
    pub client: SocketAddr,
    /// Server address (first path's remote interface).
    pub server: SocketAddr,
    /// Links from client to server.
    pub forward: Vec<LinkIndex>,
    /// Links from server to client.
    pub reverse: Vec<LinkIndex>,
    /// Number of paths in the scenario (only the first is used).
    pub paths: usize,
}

/// A running flow (see the module documentation).
pub struct Flow {
    /// What it is.
    pub setup: FlowSetup,
    client_config: ClientConfig,
    client_ep: Endpoint,
    client: Option<(ConnectionHandle, Connection)>,
    server_ep: Endpoint,
    server: BTreeMap<ConnectionHandle, Connection>,
    stream: Option<StreamId>,
    written: u64,
    write_done: bool,
    /// After a refused or short write: write again once the server has read this many bytes.
    refill_at: Option<u64>,
    /// Bytes the server has read, over all streams.
    read: u64,
    /// Server-side streams and the offset read so far on each.
    recv: BTreeMap<StreamId, u64>,
    delivered: u64,
    started: bool,
    stopped: bool,
    completed_at: Option<SimTime>,
}

impl std::fmt::Debug for Flow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flow")
            .field("setup", &self.setup)
            .field("delivered", &self.delivered)
            .finish_non_exhaustive()
    }
}

impl Flow {
    /// A flow not yet started; `seed` feeds both endpoints.
    pub fn new(
        setup: FlowSetup,
        client_config: ClientConfig,
        server_config: Arc<ServerConfig>,
        seed: u64,
    ) -> Flow {
        let client_ep = Endpoint::new(
            EndpointConfig {
                seed: super::derive_seed(seed, 1, 0),
                cid_len: 8,
            },
            None,
        );
        let server_ep = Endpoint::new(
            EndpointConfig {
                seed: super::derive_seed(seed, 2, 0),
                cid_len: 8,
            },
            Some(server_config),
        );
        Flow {
            setup,
            client_config,
            client_ep,
            client: None,
            server_ep,
            server: BTreeMap::new(),
            stream: None,
            written: 0,
            write_done: false,
            refill_at: None,
            read: 0,
            recv: BTreeMap::new(),
            delivered: 0,
            started: false,
            stopped: false,
            completed_at: None,
        }
    }

    /// Starts the client connection.
    pub fn start(&mut self, now: Instant) -> Result<(), EngineError> {
        let (h, c) = self
            .client_ep
            .connect(
                now,
                &self.client_config,
                self.setup.server,
                super::tls::SERVER_NAME,
            )
            .map_err(|e| EngineError::Setup(format!("flow {}: connect: {e}", self.setup.index)))?;
        self.client = Some((h, c));
        self.started = true;
        Ok(())
    }

    /// Stops sending at `now`: no more writes, the stream is reset, counting stops.
    pub fn stop(&mut self) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        if let (Some((_, conn)), Some(id)) = (self.client.as_mut(), self.stream) {
            if !self.write_done {
                let _ = conn.reset(id, VarInt::from_u32(0));
            }
        }
        self.write_done = true;
    }

    /// Whether the flow is sending or receiving (started, not stopped, not completed).
    pub fn is_active(&self) -> bool {
        self.started && !self.stopped && self.completed_at.is_none()
    }

    /// When the flow completed (all `bytes` delivered), if it did.
    pub fn completed_at(&self) -> Option<SimTime> {
        self.completed_at
    }

    /// Application bytes delivered to the server while active.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Packets the client declared lost (each is retransmitted if it carried data).
    pub fn lost_packets(&self) -> u64 {
        self.client.as_ref().map_or(0, |(_, c)| c.stats().packets_lost)
    }

    /// A datagram arrived for this flow.
    pub fn handle_datagram(
        &mut self,
        now: Instant,
        to_server: bool,
        src: SocketAddr,
        dst: SocketAddr,
        data: &mut [u8],
    ) {
        let (ep, conns) = if to_server {
            (&mut self.server_ep, &mut self.server)
        } else {
            let Some((h, c)) = self.client.as_mut() else {
                return;
            };
            match self.client_ep.handle(now, Some(dst), src, None, data) {
                Some(DatagramEvent::Known(k)) if k == *h => {
                    c.handle_datagram(now, Some(dst), src, None, data);
                }
                _ => {}
            }
            return;
        };
        match ep.handle(now, Some(dst), src, None, data) {
            Some(DatagramEvent::Known(h)) => {
                if let Some(c) = conns.get_mut(&h) {
                    c.handle_datagram(now, Some(dst), src, None, data);
                }
            }
            Some(DatagramEvent::NewConnection(h, c)) => {
                conns.insert(h, *c);
            }
            // Stateless responses (version negotiation, resets) never occur between our own endpoints.
            Some(DatagramEvent::Response(..)) | None => {}
        }
    }

    /// The earliest timer of the flow's connections.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let client = self.client.as_ref().and_then(|(_, c)| c.poll_timeout());
        let server = self.server.values().filter_map(Connection::poll_timeout).min();
        match (client, server) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Fires every timer due at `now`.
    pub fn handle_timeouts(&mut self, now: Instant) {
        if let Some((_, c)) = self.client.as_mut() {
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
        }
        for c in self.server.values_mut() {
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
        }
    }

    /// Runs the application on both ends and collects every datagram to send into `out`, each written
    /// straight into a buffer taken from `pool` (or a new one).
    pub fn service(
        &mut self,
        sim_now: SimTime,
        now: Instant,
        out: &mut Vec<Outgoing>,
        pool: &mut Vec<Vec<u8>>,
    ) -> Result<(), EngineError> {
        self.client_app(now);
        self.server_app(sim_now, now)?;
        // Writes and reads may have produced events (and vice versa): one more client pass fills the send
        // buffer freed by acknowledgements processed above.
        self.client_app(now);
        let (client, server) = (self.setup.client, self.setup.server);
        if let Some((_, c)) = self.client.as_mut() {
            transmit_all(c, now, true, client, out, pool);
        }
        for c in self.server.values_mut() {
            transmit_all(c, now, false, server, out, pool);
        }
        Ok(())
    }

    fn client_app(&mut self, now: Instant) {
        let Some((h, c)) = self.client.as_mut() else {
            return;
        };
        let mut established = !c.is_handshaking();
        while let Some(e) = c.poll_event() {
            if e == Event::HandshakeCompleted {
                established = true;
            }
        }
        while let Some(e) = c.poll_endpoint_event() {
            self.client_ep.handle_event(*h, e);
        }
        if !established || self.write_done || c.is_closed() {
            return;
        }
        let id = match self.stream {
            Some(id) => id,
            None => match c.open_uni() {
                Some(id) => {
                    self.stream = Some(id);
                    id
                }
                None => return,
            },
        };
        let _ = now;
        if let Some(at) = self.refill_at {
            if self.read < at {
                return;
            }
            self.refill_at = None;
        }
        loop {
            let want = match self.setup.bytes {
                Some(total) => total.saturating_sub(self.written),
                None => CHUNK as u64,
            };
            if want == 0 {
                let _ = c.finish(id);
                self.write_done = true;
                return;
            }
            let len = usize::try_from(want).unwrap_or(CHUNK).min(CHUNK);
            match c.write(id, pattern_at(self.written, len)) {
                Ok(n) => {
                    self.written = self.written.saturating_add(n as u64);
                    if n < len {
                        self.refill_at = Some(refill_mark(self.read, self.written));
                        return;
                    }
                }
                Err(WriteError::Blocked) => {
                    self.refill_at = Some(refill_mark(self.read, self.written));
                    return;
                }
                Err(WriteError::Stopped(_) | WriteError::ClosedStream) => {
                    self.write_done = true;
                    return;
                }
            }
        }
    }

    fn server_app(&mut self, sim_now: SimTime, now: Instant) -> Result<(), EngineError> {
        for (h, c) in &mut self.server {
            while let Some(e) = c.poll_event() {
                if let Event::Stream(StreamEvent::Opened { dir }) = e {
                    loop {
                        let id = match dir {
                            Dir::Uni => c.accept_uni(),
                            Dir::Bi => c.accept_bi(),
                        };
                        let Some(id) = id else { break };
                        self.recv.insert(id, 0);
                    }
                }
            }
            while let Some(e) = c.poll_endpoint_event() {
                self.server_ep.handle_event(*h, e);
            }
            let mut finished = Vec::new();
            for (id, offset) in &mut self.recv {
                loop {
                    match c.read(*id, READ_MAX, now) {
                        Ok(Some(data)) => {
                            if !matches_pattern(*offset, &data) {
                                return Err(EngineError::Corrupted {
                                    flow: self.setup.index,
                                    offset: *offset,
                                });
                            }
                            *offset = offset.saturating_add(data.len() as u64);
                            self.read = self.read.saturating_add(data.len() as u64);
                            if !self.stopped && self.completed_at.is_none() {
                                self.delivered = self.delivered.saturating_add(data.len() as u64);
                            }
                        }
                        Ok(None) => {
                            finished.push(*id);
                            if self.setup.bytes.is_some() && self.completed_at.is_none() && !self.stopped {
                                self.completed_at = Some(sim_now);
                            }
                            break;
                        }
                        Err(ReadError::Blocked) => break,
                        Err(ReadError::Reset(_) | ReadError::ClosedStream) => {
                            finished.push(*id);
                            break;
                        }
                    }
                }
            }
            for id in finished {
                self.recv.remove(&id);
            }
        }
        Ok(())
    }

    /// The state of path `path` for the recorder (`None` unless it is the first path of an active flow).
    ///
    /// The sender's view of the path ([`Connection::path_stats`]): window, smoothed RTT, bytes in flight and
    /// the controller's own variables (`ssthresh` and the algorithm's named extras), plus delivered bytes.
    pub fn path_sample(&self, path: usize) -> Option<PathSample> {
        if path != 0 || !self.is_active() {
            return None;
        }
        let (_, c) = self.client.as_ref()?;
        let stats = c.path_stats(PathId(0))?;
        let mut cc = Vec::new();
        if let Some(m) = &stats.cc {
            if let Some(ssthresh) = m.ssthresh {
                cc.push(("ssthresh".to_owned(), ssthresh as f64));
            }
            if let Some(rate) = m.pacing_rate {
                cc.push(("pacing_rate".to_owned(), rate as f64));
            }
            cc.extend(m.extras.iter().map(|e| (e.name.to_owned(), e.value)));
        }
        Some(PathSample {
            cwnd: stats.cwnd,
            srtt: stats.srtt,
            bytes_in_flight: stats.bytes_in_flight,
            delivered_bytes: self.delivered,
            cc,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_slices_line_up() {
        let a = pattern_at(0, 1000);
        let b = pattern_at(1000, 500);
        let whole: Vec<u8> = (0..1500u64).map(|i| (i % 251) as u8).collect();
        assert_eq!([a.as_ref(), b.as_ref()].concat(), whole);
        assert!(matches_pattern(1000, &b));
        assert!(!matches_pattern(1001, &b));
        let big: Vec<u8> = (0..200_000u64).map(|i| ((i + 7) % 251) as u8).collect();
        assert!(matches_pattern(7, &big));
    }
}
