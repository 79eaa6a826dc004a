//! Bulk flows: a client mpquic endpoint and connection on the flow's `from` host, a server endpoint on its `to`
//! host, and the application on both ends.
//!
//! The **sender** is the client (`direction = "upload"`, the default) or the server (`"download"`); the other
//! end is the **receiver**.
//!
//! - **Sender.** Once its end of the handshake completes it opens one unidirectional stream and writes a
//!   fixed byte pattern (byte at offset `o` is `o mod 251`): `bytes` bytes then FIN when the flow has a
//!   size, otherwise continuously until the flow stops (`stop` or the end of the scenario), where it resets
//!   the stream. Writes go straight from a shared pattern buffer ([`bytes::Bytes`] slices of up to [`CHUNK`]
//!   = 1 MiB, no copy). Once a write is refused or cut short (the send buffer is full), the sender writes
//!   again only after the receiver has read another [`CHUNK`] (or everything written so far): the send
//!   buffer then refills in large pieces rather than a packet's worth per acknowledgement. That keeps the
//!   stream's chunk list short, which matters because the stack walks it from the acknowledged base to the
//!   offset it sends, for every packet. The buffer (16 MiB) stays well above any window of the shipped
//!   scenarios, so the sender is never application-limited.
//! - **Receiver.** It accepts the stream, reads everything as it arrives (so flow control never stalls the
//!   sender), counts the bytes, and checks each byte against the pattern: a mismatch means the stack
//!   delivered wrong data and fails the run. It records the stream's length when it reads the FIN.
//! - **Accounting.** Delivered bytes count only while the flow is active (from `start` to `stop`, or to the
//!   FIN when the flow has a size); the flow's active time ends at its stop or completion.
//! - **Paths.** The connection starts on the flow's first path. A multipath flow (two or more paths)
//!   enables multipath on both ends, and the client opens path `k ≥ 1` from its address on that path's
//!   interface to the server's address on that path's interface at the path's `start`, or as soon as the
//!   core allows it after that (handshake confirmed, connection IDs for the next path ID received: every
//!   later step retries); a path with `migrate` is reached by migrating the connection's first path instead
//!   (`Connection::migrate`). A path with a `stop` is closed then (`Connection::close_path`; retried until
//!   another path is validated at both ends) and never re-opened. The state of each scenario path and the simulator's
//!   policy for dead paths are in [`super::paths`].

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Instant;

use mpquic::cc::PathId;
use mpquic::proto::VarInt;
use mpquic::proto::connection::{
    ClientConfig, ClosePathError, Connection, ConnectionStats, Event, MigrateError, ServerConfig,
};
use mpquic::proto::endpoint::{Endpoint, EndpointConfig};
use mpquic::proto::frame::Dir;
use mpquic::proto::frame::PathAbandon;
use mpquic::proto::host::Host;
use mpquic::proto::streams::{StreamEvent, StreamId, WriteError};
use mpquic::sched::PathStatus;

use super::EngineError;
use super::network::LinkIndex;
use super::objects::{ObjectRecord, Objects};
use super::paths::{PathPolicy, PathSlot, PathState, RxSeen, apportion, give_up_after};
use super::pattern::{CHUNK, pattern_at, refill_mark};
use super::reader::{ReadLimiter, read_stream};
use crate::metrics::app::{Playback, playback};
use crate::metrics::{PathSample, ReceiverSample};
use crate::results::ReceiverTotals;
use crate::scenario::workload::{RequestsSpec, VideoSpec};
use crate::time::SimTime;

/// Capacity of a new datagram buffer (buffers are reused through the engine's pool).
const DATAGRAM_CAPACITY: usize = 1500;

/// One datagram a flow wants to send.
#[derive(Debug)]
pub struct Outgoing {
    /// Towards the server (forward route) or the client (reverse route).
    pub to_server: bool,
    /// The scenario path whose pair of addresses the datagram carries (`None`: a 4-tuple the scenario does
    /// not know, which the network drops).
    pub path: Option<usize>,
    /// Source address.
    pub src: SocketAddr,
    /// Destination address.
    pub dst: SocketAddr,
    /// The UDP payload.
    pub data: Vec<u8>,
}

/// Collects every datagram the connections of `host` want to send at `now` into `out`, each written straight
/// into a buffer from `pool`. A datagram leaves from the address the core chose for its path
/// (`Transmit::local`), or from the host's address (the first path's) when the path is not bound to one; its
/// scenario path is the one whose pair of addresses it carries.
fn transmit_all(
    host: &mut Host,
    now: Instant,
    to_server: bool,
    paths: &[PathSetup],
    out: &mut Vec<Outgoing>,
    pool: &mut Vec<Vec<u8>>,
) {
    if host.conns.is_empty() {
        return;
    }
    let mut buf = pool
        .pop()
        .unwrap_or_else(|| Vec::with_capacity(DATAGRAM_CAPACITY));
    host.poll_transmits(now, &mut buf, |d, buf| {
        let next = pool
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(DATAGRAM_CAPACITY));
        let mut data = std::mem::replace(buf, next);
        data.truncate(d.transmit.size);
        let src = d.from;
        let dst = d.transmit.remote;
        let (client, server) = if to_server { (src, dst) } else { (dst, src) };
        let path = paths
            .iter()
            .position(|p| p.client == client && p.server == server);
        out.push(Outgoing {
            to_server,
            path,
            src,
            dst,
            data,
        });
        ControlFlow::Continue(())
    });
    pool.push(buf);
}

/// Whether another path than `id` is validated, and not abandoned, at both ends (the client's `conn` and
/// the `server`'s): the engine closes or abandons a path only then (the simulator can look at both ends;
/// an application would wait until the new path has carried traffic both ways). The core refuses only to
/// abandon the last path that is not abandoned, even when every other one is still unvalidated, and that
/// wedges the connection (the soak test found it; `docs/soak.md`): the server closes it ("last path
/// abandoned") when the abandon reaches it before the new path, and an end whose validation of the
/// remaining path fails leaves it unvalidated for good, scheduling nothing on it, with no timer or, with
/// data waiting, a pacing timer that stays in the past.
fn other_validated(conn: &Connection, server: Option<&Connection>, id: PathId) -> bool {
    let ok = |c: &Connection, p: PathId| c.path_stats(p).is_some_and(|s| s.validated && !s.abandoned);
    conn.paths()
        .into_iter()
        .filter(|&p| p != id)
        .any(|p| ok(conn, p) && server.is_some_and(|srv| ok(srv, p)))
}

/// One path of a flow, resolved for the engine.
#[derive(Debug, Clone)]
pub struct PathSetup {
    /// The client's address on this path (its interface's IP, the flow's client port).
    pub client: SocketAddr,
    /// The server's address on this path.
    pub server: SocketAddr,
    /// Links from client to server.
    pub forward: Vec<LinkIndex>,
    /// Links from server to client.
    pub reverse: Vec<LinkIndex>,
    /// When the client opens it (the first path: with the flow).
    pub start: SimTime,
    /// When the client closes it for good, if ever.
    pub stop: Option<SimTime>,
    /// Reached by migrating the connection's first path rather than by opening a new path.
    pub migrate: bool,
    /// The client's address here is another host's (`spoof`): nothing sent to it reaches the client.
    pub spoofed: bool,
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
    /// The server sends the data (`download`) rather than the client.
    pub download: bool,
    /// The paths in scenario order, at least one; the connection starts on the first.
    pub paths: Vec<PathSetup>,
    /// What the client does about paths that stop making progress.
    pub policy: PathPolicy,
    /// The application: bulk, requests or video.
    pub app: AppSetup,
    /// The receiving application's reading rate in bits per second (`None`: as fast as data arrives).
    pub read_rate: Option<u64>,
    /// Whether the results report the receiver's statistics (a flow with a `receiver` section or a
    /// workload other than bulk).
    pub receiver_stats: bool,
}

/// The application of a flow.
#[derive(Debug, Clone, Default)]
pub enum AppSetup {
    /// One stream of `bytes` (or without end).
    #[default]
    Bulk,
    /// Request/response objects ([`super::objects`]).
    Requests(RequestsSpec),
    /// Video chunks ([`super::objects`]).
    Video(VideoSpec),
}

impl FlowSetup {
    /// Whether the flow has several scenario paths (multipath is enabled on both ends unless all but the
    /// first are reached by migration).
    pub fn is_multipath(&self) -> bool {
        self.paths.len() > 1
    }

    /// The client's address on the first path.
    pub fn client(&self) -> Option<SocketAddr> {
        self.paths.first().map(|p| p.client)
    }

    /// The server's address on the first path.
    pub fn server(&self) -> Option<SocketAddr> {
        self.paths.first().map(|p| p.server)
    }
}

/// The sending application: one unidirectional stream of pattern bytes.
#[derive(Debug, Default)]
pub(super) struct Sender {
    pub(super) stream: Option<StreamId>,
    written: u64,
    pub(super) done: bool,
    /// After a refused or short write: write again once the receiver has read this many bytes.
    refill_at: Option<u64>,
}

/// The receiving application: every stream the peer opens, read as it arrives.
#[derive(Debug, Default)]
pub(super) struct Receiver {
    /// Open streams and the offset read so far on each.
    streams: BTreeMap<StreamId, u64>,
    /// Bytes read, over all streams.
    pub(super) read: u64,
}

/// What one receive pass produced.
#[derive(Debug, Default)]
pub(super) struct Received {
    /// Bytes read.
    pub(super) bytes: u64,
    /// A stream ended (FIN) at this length.
    pub(super) fin_at: Option<u64>,
    /// The reading stopped at the read rate (data may be left).
    limited: bool,
}

/// Accepts every stream the peer has opened in direction `dir`.
pub(super) fn accept_streams(conn: &mut Connection, dir: Dir, r: &mut Receiver) {
    loop {
        let id = match dir {
            Dir::Uni => conn.accept_uni(),
            Dir::Bi => conn.accept_bi(),
        };
        let Some(id) = id else { break };
        r.streams.insert(id, 0);
    }
}

/// Reads everything `conn` has for the receiver's streams and checks it against the pattern.
pub(super) fn receive(
    conn: &mut Connection,
    now: Instant,
    r: &mut Receiver,
    limiter: &mut Option<ReadLimiter>,
    flow: usize,
) -> Result<Received, EngineError> {
    let mut out = Received::default();
    let mut finished = Vec::new();
    for (id, offset) in &mut r.streams {
        let got = read_stream(conn, *id, offset, limiter, now, flow)?;
        r.read = r.read.saturating_add(got.bytes);
        out.bytes = out.bytes.saturating_add(got.bytes);
        out.limited |= got.limited;
        if got.fin {
            finished.push(*id);
            out.fin_at = Some(*offset);
        } else if got.reset {
            finished.push(*id);
        }
        if got.limited {
            break;
        }
    }
    for id in finished {
        r.streams.remove(&id);
    }
    Ok(out)
}

/// Writes pattern bytes on the sender's stream (opened on first use): `bytes` then FIN, or without end;
/// `read` is what the receiver has read so far (see the module documentation on refilling).
pub(super) fn send(conn: &mut Connection, s: &mut Sender, read: u64, bytes: Option<u64>) {
    if s.done {
        return;
    }
    let id = match s.stream {
        Some(id) => id,
        None => match conn.open_uni() {
            Some(id) => {
                s.stream = Some(id);
                id
            }
            None => return,
        },
    };
    if let Some(at) = s.refill_at {
        if read < at {
            return;
        }
        s.refill_at = None;
    }
    loop {
        let want = match bytes {
            Some(total) => total.saturating_sub(s.written),
            None => CHUNK as u64,
        };
        if want == 0 {
            let _ = conn.finish(id);
            s.done = true;
            return;
        }
        let len = usize::try_from(want).unwrap_or(CHUNK).min(CHUNK);
        match conn.write(id, pattern_at(s.written, len)) {
            Ok(n) => {
                s.written = s.written.saturating_add(n as u64);
                if n < len {
                    s.refill_at = Some(refill_mark(read, s.written));
                    return;
                }
            }
            Err(WriteError::Blocked) => {
                s.refill_at = Some(refill_mark(read, s.written));
                return;
            }
            Err(WriteError::Stopped(_) | WriteError::ClosedStream) => {
                s.done = true;
                return;
            }
        }
    }
}

/// A running flow (see the module documentation).
pub struct Flow {
    /// What it is.
    pub setup: FlowSetup,
    client_config: ClientConfig,
    /// The client's endpoint and its connection (one, once started), at the first path's client address.
    client: Host,
    /// The server's endpoint and the connections it accepted (one), at the first path's server address.
    server: Host,
    sender: Sender,
    receiver: Receiver,
    delivered: u64,
    started: bool,
    stopped: bool,
    completed_at: Option<SimTime>,
    /// The length of the data stream, once the receiver has read its FIN.
    fin_at: Option<u64>,
    /// Why the client's and the server's connection closed, if one did (diagnostics).
    lost: [Option<String>; 2],
    /// Per scenario path: its connection path, progress and accounting.
    slots: Vec<PathSlot>,
    /// Delivered bytes already attributed to paths.
    attributed: u64,
    /// Datagrams of the sender (data direction) the network dropped, per scenario path.
    drops: Vec<u64>,
    /// Receiver-side bytes received per connection path, for attribution.
    rx_seen: RxSeen,
    /// The request/response or video workload (`None`: bulk).
    objects: Option<Objects>,
    /// The receiving application's token bucket (a `read_rate`).
    limiter: Option<ReadLimiter>,
    /// A read in this service pass stopped at the read rate.
    read_limited: bool,
    /// When the application next needs to run on its own (a request due, the bucket refilled).
    app_wake: Option<Instant>,
    /// The inner flows of a tunnel flow ([`super::tunnel`]; `None`: not a tunnel).
    tunnel: Option<Box<super::tunnel::Tunnel>>,
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
        // A flow without paths never starts (`start` refuses it): its hosts' addresses are never used.
        let unspecified = SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0));
        let client = Host::new(
            Endpoint::new(
                EndpointConfig {
                    seed: super::derive_seed(seed, 1, 0),
                    cid_len: 8,
                },
                None,
            ),
            setup.client().unwrap_or(unspecified),
        );
        let server = Host::new(
            Endpoint::new(
                EndpointConfig {
                    seed: super::derive_seed(seed, 2, 0),
                    cid_len: 8,
                },
                Some(server_config),
            ),
            setup.server().unwrap_or(unspecified),
        );
        let slots = setup.paths.iter().map(|_| PathSlot::default()).collect();
        let drops = vec![0; setup.paths.len()];
        let objects = match &setup.app {
            AppSetup::Bulk => None,
            AppSetup::Requests(spec) => Some(Objects::requests(
                setup.index,
                spec,
                setup.download,
                super::derive_seed(seed, 3, 0),
                setup.start,
            )),
            AppSetup::Video(spec) => Some(Objects::video(setup.index, spec, setup.download, setup.start)),
        };
        Flow {
            setup,
            client_config,
            client,
            server,
            sender: Sender::default(),
            receiver: Receiver::default(),
            delivered: 0,
            started: false,
            stopped: false,
            completed_at: None,
            fin_at: None,
            lost: [None, None],
            slots,
            attributed: 0,
            drops,
            rx_seen: RxSeen::from([(PathId(0), (0, 0))]),
            objects,
            limiter: None,
            read_limited: false,
            app_wake: None,
            tunnel: None,
        }
    }

    /// Makes this flow a tunnel: `tunnel` is its application instead of a bulk stream.
    pub fn attach_tunnel(&mut self, tunnel: super::tunnel::Tunnel) {
        self.tunnel = Some(Box::new(tunnel));
    }

    /// The tunnel of a tunnel flow (tests and diagnostics).
    pub fn tunnel(&self) -> Option<&super::tunnel::Tunnel> {
        self.tunnel.as_deref()
    }

    /// Starts the client connection.
    pub fn start(&mut self, sim_now: SimTime, now: Instant) -> Result<(), EngineError> {
        let server = self
            .setup
            .server()
            .ok_or_else(|| EngineError::Setup(format!("flow {} has no path", self.setup.index)))?;
        self.client
            .connect(now, &self.client_config, server, super::tls::SERVER_NAME)
            .map_err(|e| EngineError::Setup(format!("flow {}: connect: {e}", self.setup.index)))?;
        self.started = true;
        self.limiter = self.setup.read_rate.map(|rate| ReadLimiter::new(rate, sim_now));
        if let Some(first) = self.slots.first_mut() {
            first.state = PathState::Open(PathId(0));
            first.last_progress = sim_now;
            first.opened = 1;
        }
        Ok(())
    }

    /// Stops sending at `now`: no more writes, the stream is reset, counting stops.
    pub fn stop(&mut self) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        if let Some(t) = self.tunnel.as_mut() {
            t.stop();
            return;
        }
        let download = self.setup.download;
        let conn = if download {
            self.server.first_mut()
        } else {
            self.client.first_mut()
        };
        if let Some(objects) = self.objects.as_mut() {
            objects.stop(conn);
            return;
        }
        if let (Some(conn), Some(id)) = (conn, self.sender.stream) {
            if !self.sender.done {
                let _ = conn.reset(id, VarInt::from_u32(0));
            }
        }
        self.sender.done = true;
    }

    /// The sending end's connection: the client's for an upload, the server's for a download.
    fn sender_conn(&self) -> Option<&Connection> {
        if self.setup.download {
            self.server.first()
        } else {
            self.client.first()
        }
    }

    /// The receiving end's connection: the server's for an upload, the client's for a download.
    fn receiver_conn(&self) -> Option<&Connection> {
        if self.setup.download {
            self.client.first()
        } else {
            self.server.first()
        }
    }

    /// The receiving end's reassembly statistics (out-of-order and unread bytes, head-of-line delay), if
    /// its connection exists.
    pub fn reassembly(&self) -> Option<ReceiverTotals> {
        let r = self.receiver_conn()?.stats().reassembly;
        Some(ReceiverTotals {
            out_of_order_bytes: r.out_of_order_bytes,
            max_out_of_order_bytes: r.max_out_of_order_bytes,
            unread_bytes: r.unread_bytes,
            max_unread_bytes: r.max_unread_bytes,
            bytes: r.bytes,
            out_of_order: r.out_of_order,
            hol_delay_mean: r.hol_delay_mean,
            hol_delay_p95: r.hol_delay_p95,
            hol_delay_max: r.hol_delay_max,
        })
    }

    /// The receiver's buffers now, for the recorder (`None` unless the flow is active and reports receiver
    /// statistics).
    pub fn receiver_sample(&self) -> Option<ReceiverSample> {
        if !self.setup.receiver_stats || !self.is_active() {
            return None;
        }
        let r = self.reassembly()?;
        Some(ReceiverSample {
            out_of_order_bytes: r.out_of_order_bytes,
            unread_bytes: r.unread_bytes,
        })
    }

    /// The objects (or video chunks) done so far, in order (empty for a bulk flow).
    pub fn object_records(&self) -> &[ObjectRecord] {
        self.objects.as_ref().map_or(&[], |o| o.records())
    }

    /// The playback of a video flow up to `end` ([`crate::metrics::app::playback`]); `None` for other
    /// kinds.
    pub fn playback(&self, end: SimTime) -> Option<Playback> {
        let AppSetup::Video(spec) = &self.setup.app else {
            return None;
        };
        let records = self.object_records();
        let done: Vec<SimTime> = records.iter().map(|r| r.done).collect();
        let first = records.first().map_or(self.setup.start, |r| r.requested);
        let more = !self.objects.as_ref().is_some_and(Objects::complete);
        Some(playback(first, &done, spec.chunk, end, more))
    }

    /// Whether the data travels towards the server (an upload).
    pub fn data_to_server(&self) -> bool {
        !self.setup.download
    }

    /// The length of the data stream as the receiver read it up to its FIN (`None`: no FIN yet).
    pub fn fin_at(&self) -> Option<u64> {
        self.fin_at
    }

    /// The client connection, if started (tests and diagnostics).
    pub fn client_connection(&self) -> Option<&Connection> {
        self.client.first()
    }

    /// The server's connection, once it accepted one (tests and diagnostics).
    pub fn server_connection(&self) -> Option<&Connection> {
        self.server.first()
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

    /// Packets the sender declared lost (each is retransmitted if it carried data).
    pub fn lost_packets(&self) -> u64 {
        self.sender_stat(|s| s.packets_lost)
    }

    /// Congestion events of the sender (loss and ECN-CE events that began a recovery period, over all
    /// its paths).
    pub fn congestion_events(&self) -> u64 {
        self.sender_stat(|s| s.congestion_events)
    }

    /// One counter of the sender's statistics; for a tunnel flow, summed over the inner senders.
    fn sender_stat(&self, counter: impl Fn(&ConnectionStats) -> u64) -> u64 {
        if let Some(t) = &self.tunnel {
            return t.sum_over_senders(counter);
        }
        self.sender_conn().map_or(0, |c| counter(&c.stats()))
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
        let host = if to_server {
            &mut self.server
        } else {
            &mut self.client
        };
        // Stateless responses (version negotiation, resets) never occur between our own endpoints: dropped.
        let _ = host.receive(now, Some(dst), src, None, data);
    }

    /// The earliest timer of the flow's connections and of its application.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let client = self.client.poll_timeout();
        let server = self.server.poll_timeout();
        let tunnel = self.tunnel.as_ref().and_then(|t| t.poll_timeout());
        [client, server, self.app_wake, tunnel]
            .into_iter()
            .flatten()
            .min()
    }

    /// Fires every timer due at `now`.
    pub fn handle_timeouts(&mut self, now: Instant) {
        self.client.handle_timeouts(now);
        self.server.handle_timeouts(now);
        if let Some(t) = self.tunnel.as_mut() {
            t.handle_timeouts(now);
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
        if let Some(l) = self.limiter.as_mut() {
            l.refill(sim_now);
        }
        self.read_limited = false;
        self.client_app(sim_now, now)?;
        self.server_app(sim_now, now)?;
        // Writes and reads may have produced events (and vice versa): one more client pass fills the send
        // buffer freed by acknowledgements processed above.
        self.client_app(sim_now, now)?;
        if let Some(t) = self.tunnel.as_mut() {
            let client = self.client.first_mut();
            let server = self.server.first_mut();
            let pass = t.pump(now, client, server)?;
            let active = !self.stopped && self.completed_at.is_none();
            if active {
                self.delivered = self.delivered.saturating_add(pass.read);
                if t.complete() {
                    self.completed_at = Some(sim_now);
                }
            }
        }
        self.update_wake(sim_now, now);
        if self.setup.paths.is_empty() {
            return Ok(());
        }
        transmit_all(&mut self.client, now, true, &self.setup.paths, out, pool);
        transmit_all(&mut self.server, now, false, &self.setup.paths, out, pool);
        Ok(())
    }

    /// The network dropped one of the sender's datagrams on scenario path `path`.
    pub fn note_drop(&mut self, path: usize) {
        if let Some(d) = self.drops.get_mut(path) {
            *d = d.saturating_add(1);
        }
    }

    /// Opens the paths that are due and allowed (multipath flows; see [`super::paths`]), or migrates to
    /// them (`migrate`).
    fn open_paths(&mut self, sim_now: SimTime, now: Instant) {
        // Asked after every event: once every path is open or closed there is nothing to look at.
        if self.slots.iter().all(|s| s.state != PathState::Pending) {
            return;
        }
        let Some(c) = self.client.first_mut() else {
            return;
        };
        for k in 0..self.slots.len() {
            let (Some(slot), Some(path)) = (self.slots.get(k), self.setup.paths.get(k)) else {
                continue;
            };
            if slot.state != PathState::Pending || path.start > sim_now {
                continue;
            }
            if path.stop.is_some_and(|t| t <= sim_now) {
                if let Some(slot) = self.slots.get_mut(k) {
                    slot.state = PathState::Closed;
                }
                continue;
            }
            let opened = if path.migrate {
                match c.migrate(now, path.client) {
                    Ok(()) => Ok(PathId(0)),
                    // Not yet possible (handshake not confirmed, no spare connection ID): retried later.
                    Err(MigrateError::HandshakeNotConfirmed | MigrateError::NoConnectionId) => return,
                    Err(MigrateError::NotClient | MigrateError::Disabled | MigrateError::Closed) => Err(()),
                }
            } else {
                match c.open_path(now, Some(path.client), path.server, PathStatus::Available) {
                    Ok(id) => Ok(id),
                    // Not yet possible (handshake not confirmed, no connection IDs for the next path ID,
                    // path-ID limit): retried on a later step.
                    Err(_) => return,
                }
            };
            let Ok(id) = opened else {
                if let Some(slot) = self.slots.get_mut(k) {
                    slot.state = PathState::Closed;
                }
                continue;
            };
            if path.migrate {
                // The first path moved here: the slot that carried it is done.
                for other in &mut self.slots {
                    if other.state == PathState::Open(id) {
                        other.state = PathState::Closed;
                    }
                }
            }
            if let Some(slot) = self.slots.get_mut(k) {
                slot.state = PathState::Open(id);
                slot.last_progress = sim_now;
                slot.last_rx = 0;
                slot.opened = slot.opened.saturating_add(1);
            }
            let seen = self.rx_seen.get(&id).map_or(0, |&(_, seen)| seen);
            self.rx_seen.insert(id, (k, seen));
        }
    }

    /// Closes the paths whose `stop` has come (see the module documentation): an open one with
    /// `Connection::close_path` (kept, and retried by the next call, until another path is validated at both ends), a
    /// pending or failed one by never opening it again.
    pub fn close_due_paths(&mut self, sim_now: SimTime, now: Instant) {
        let Some(c) = self.client.first_mut() else {
            return;
        };
        if c.is_closed() {
            return;
        }
        let server = self.server.first();
        for (slot, path) in self.slots.iter_mut().zip(&self.setup.paths) {
            if path.stop.is_none_or(|t| t > sim_now) {
                continue;
            }
            match slot.state {
                PathState::Closed => {}
                PathState::Pending | PathState::Failed { .. } => slot.state = PathState::Closed,
                // Kept until another path is validated (retried at the next check).
                PathState::Open(id) if !other_validated(c, server, id) => {}
                PathState::Open(id) => match c.close_path(now, id, PathAbandon::APPLICATION_ABANDON_PATH) {
                    Ok(()) => {
                        slot.state = PathState::Closed;
                        slot.closed = slot.closed.saturating_add(1);
                    }
                    Err(ClosePathError::LastPath) => {}
                    Err(ClosePathError::UnknownPath | ClosePathError::NotNegotiated) => {
                        slot.state = PathState::Closed;
                    }
                },
            }
        }
    }

    /// Closes scenario path `k` now with `Connection::close_path`, as an application would, without the
    /// engine's check that another path is validated at both ends (tests of the core's own checks);
    /// `None` if the path is not open.
    pub fn close_path_now(&mut self, now: Instant, k: usize) -> Option<Result<(), ClosePathError>> {
        let c = self.client.first_mut()?;
        let slot = self.slots.get_mut(k)?;
        let PathState::Open(id) = slot.state else {
            return None;
        };
        let result = c.close_path(now, id, PathAbandon::APPLICATION_ABANDON_PATH);
        if result.is_ok() {
            slot.state = PathState::Closed;
            slot.closed = slot.closed.saturating_add(1);
        }
        Some(result)
    }

    /// The client's connection marked `id` abandoned.
    fn on_path_abandoned(&mut self, sim_now: SimTime, id: PathId) {
        for slot in &mut self.slots {
            if slot.state == PathState::Open(id) {
                slot.state = PathState::Failed {
                    since: sim_now,
                    gave_up_after: sim_now.saturating_duration_since(slot.last_progress),
                };
            }
        }
    }

    /// The periodic path check of a multipath flow (see [`super::paths`]): attributes delivered bytes,
    /// abandons paths without progress, re-opens failed paths whose links are all up (`links_up(k)` for
    /// scenario path `k`).
    pub fn check_paths(&mut self, sim_now: SimTime, now: Instant, links_up: impl Fn(usize) -> bool) {
        self.attribute(false);
        self.close_due_paths(sim_now, now);
        let ptos = self.setup.policy.abandon_ptos;
        if !self.setup.is_multipath() || ptos == 0 {
            return;
        }
        let Some(c) = self.client.first_mut() else {
            return;
        };
        if c.is_closed() {
            return;
        }
        let server = self.server.first();
        for (k, slot) in self.slots.iter_mut().enumerate() {
            match slot.state {
                PathState::Pending | PathState::Closed => {}
                PathState::Open(id) => {
                    let Some(stats) = c.path_stats(id) else {
                        slot.state = PathState::Failed {
                            since: sim_now,
                            gave_up_after: sim_now.saturating_duration_since(slot.last_progress),
                        };
                        continue;
                    };
                    if stats.bytes_received > slot.last_rx || (stats.bytes_in_flight == 0 && stats.validated)
                    {
                        slot.last_rx = stats.bytes_received;
                        slot.last_progress = sim_now;
                        continue;
                    }
                    let stalled = sim_now.saturating_duration_since(slot.last_progress);
                    if stalled < give_up_after(&stats, ptos) || !other_validated(c, server, id) {
                        continue;
                    }
                    match c.close_path(now, id, PathAbandon::APPLICATION_ABANDON_PATH) {
                        Ok(()) => {
                            slot.abandoned = slot.abandoned.saturating_add(1);
                            slot.state = PathState::Failed {
                                since: sim_now,
                                gave_up_after: stalled,
                            };
                        }
                        // The last live path stays: the connection has nowhere else to go.
                        Err(ClosePathError::LastPath | ClosePathError::NotNegotiated) => {}
                        Err(ClosePathError::UnknownPath) => {
                            slot.state = PathState::Failed {
                                since: sim_now,
                                gave_up_after: stalled,
                            };
                        }
                    }
                }
                PathState::Failed { since, gave_up_after } => {
                    if links_up(k) && sim_now.saturating_duration_since(since) >= gave_up_after {
                        slot.state = PathState::Pending;
                    }
                }
            }
        }
        // Anything abandoned above queues a PathAbandoned event: handled by the next client pass.
        self.open_paths(sim_now, now);
    }

    /// Attributes the bytes delivered since the last call to paths, in proportion to what the receiver
    /// received on each (see [`super::paths`]); with `last`, bytes that cannot be attributed that way go by
    /// each path's total.
    pub fn attribute(&mut self, last: bool) {
        let pending = self.delivered.saturating_sub(self.attributed);
        if pending == 0 {
            return;
        }
        if !self.setup.is_multipath() {
            if let Some(s) = self.slots.first_mut() {
                s.delivered = s.delivered.saturating_add(pending);
            }
            self.attributed = self.delivered;
            return;
        }
        // The receiver's connection, borrowed field by field so that `rx_seen` can be updated meanwhile.
        let receiver = if self.setup.download {
            self.client.first()
        } else {
            self.server.first()
        };
        let Some(receiver) = receiver else {
            return;
        };
        let mut weights = vec![0u64; self.slots.len()];
        let mut totals = vec![0u64; self.slots.len()];
        for (id, (k, seen)) in &mut self.rx_seen {
            let Some(rx) = receiver.path_stats(*id).map(|s| s.bytes_received) else {
                continue;
            };
            if let Some(w) = weights.get_mut(*k) {
                *w = w.saturating_add(rx.saturating_sub(*seen));
            }
            if let Some(t) = totals.get_mut(*k) {
                *t = t.saturating_add(rx);
            }
            *seen = rx;
        }
        let parts = apportion(pending, &weights).or_else(|| {
            if last {
                apportion(pending, &totals).or_else(|| apportion(pending, &[1]))
            } else {
                None
            }
        });
        let Some(parts) = parts else {
            return;
        };
        for (slot, part) in self.slots.iter_mut().zip(parts) {
            slot.delivered = slot.delivered.saturating_add(part);
        }
        self.attributed = self.delivered;
    }

    /// Application bytes attributed to each scenario path (call [`Flow::attribute`] first).
    pub fn path_delivered(&self) -> Vec<u64> {
        self.slots.iter().map(|s| s.delivered).collect()
    }

    /// Packets the sender declared lost, per scenario path: exact for a single-path flow, split in
    /// proportion to the network's drops on each path for a multipath flow (see [`super::paths`]).
    pub fn path_retransmissions(&self) -> Vec<u64> {
        let lost = self.lost_packets();
        if !self.setup.is_multipath() {
            return vec![lost];
        }
        let delivered = self.path_delivered();
        apportion(lost, &self.drops)
            .or_else(|| apportion(lost, &delivered))
            .unwrap_or_else(|| vec![0; self.slots.len()])
    }

    /// Times each scenario path was opened and abandoned by the client.
    pub fn path_counts(&self) -> Vec<(u32, u32)> {
        self.slots.iter().map(|s| (s.opened, s.abandoned)).collect()
    }

    /// Why the client's (`[0]`) and the server's (`[1]`) connection closed, if one did (diagnostics).
    pub fn connection_errors(&self) -> &[Option<String>; 2] {
        &self.lost
    }

    /// The state of each scenario path (diagnostics).
    pub fn path_states(&self) -> Vec<PathState> {
        self.slots.iter().map(|s| s.state).collect()
    }

    /// Times each scenario path was closed by the client at its `stop` (0 or 1).
    pub fn path_closes(&self) -> Vec<u32> {
        self.slots.iter().map(|s| s.closed).collect()
    }

    fn client_app(&mut self, sim_now: SimTime, now: Instant) -> Result<(), EngineError> {
        let download = self.setup.download;
        // The endpoint learns of the connection's new and retired connection IDs before anything else.
        self.client.forward_endpoint_events();
        let Some(c) = self.client.first_mut() else {
            return Ok(());
        };
        let mut established = !c.is_handshaking();
        let mut abandoned = Vec::new();
        while let Some(e) = c.poll_event() {
            match e {
                Event::HandshakeCompleted => established = true,
                Event::PathAbandoned { path } => abandoned.push(path),
                Event::ConnectionLost(err) => self.lost[0] = Some(err.to_string()),
                Event::Stream(StreamEvent::Opened { dir }) if download && self.objects.is_none() => {
                    accept_streams(c, dir, &mut self.receiver);
                }
                _ => {}
            }
        }
        let closed = c.is_closed();
        for id in abandoned {
            self.on_path_abandoned(sim_now, id);
        }
        if established && !closed && self.setup.is_multipath() && self.completed_at.is_none() {
            self.open_paths(sim_now, now);
        }
        if self.tunnel.is_some() {
            return Ok(());
        }
        if let Some(objects) = self.objects.as_mut() {
            let Some(c) = self.client.first_mut() else {
                return Ok(());
            };
            if established && !closed {
                let pass = objects.client(c, sim_now, now, &mut self.limiter)?;
                if download {
                    self.on_pass(sim_now, pass);
                }
            }
            return Ok(());
        }
        if download {
            return self.client_receive(sim_now, now);
        }
        let Some(c) = self.client.first_mut() else {
            return Ok(());
        };
        if established && !closed {
            send(c, &mut self.sender, self.receiver.read, self.setup.bytes);
        }
        Ok(())
    }

    /// The client's receive pass of a download.
    fn client_receive(&mut self, sim_now: SimTime, now: Instant) -> Result<(), EngineError> {
        let Some(c) = self.client.first_mut() else {
            return Ok(());
        };
        let got = receive(c, now, &mut self.receiver, &mut self.limiter, self.setup.index)?;
        self.on_received(sim_now, &got);
        Ok(())
    }

    /// Accounting of a workload pass of the data's receiver: delivered bytes while active, completion when
    /// the last object of `count` is done.
    fn on_pass(&mut self, sim_now: SimTime, pass: super::objects::Pass) {
        let active = !self.stopped && self.completed_at.is_none();
        self.read_limited |= pass.limited;
        if active {
            self.delivered = self.delivered.saturating_add(pass.read);
            if pass.done && self.objects.as_ref().is_some_and(Objects::complete) {
                self.completed_at = Some(sim_now);
            }
        }
    }

    /// Sets when the application next runs on its own: a request due, or the bucket of a reader that
    /// stopped at its rate refilled; only times after `sim_now` (anything due now was done in this pass).
    fn update_wake(&mut self, sim_now: SimTime, now: Instant) {
        let bucket = self
            .limiter
            .as_ref()
            .filter(|_| self.read_limited)
            .map(ReadLimiter::wake_at);
        let request = self.objects.as_ref().and_then(|o| o.wake(sim_now));
        let wake = [bucket, request]
            .into_iter()
            .flatten()
            .filter(|&t| t > sim_now)
            .min();
        self.app_wake = wake.map(|t| now + t.saturating_duration_since(sim_now));
    }

    /// Accounting of a receive pass: delivered bytes while active, completion at the FIN of a sized flow.
    fn on_received(&mut self, sim_now: SimTime, got: &Received) {
        let active = !self.stopped && self.completed_at.is_none();
        self.read_limited |= got.limited;
        if active {
            self.delivered = self.delivered.saturating_add(got.bytes);
        }
        if let Some(len) = got.fin_at {
            self.fin_at = Some(len);
            if active && self.setup.bytes.is_some() {
                self.completed_at = Some(sim_now);
            }
        }
    }

    fn server_app(&mut self, sim_now: SimTime, now: Instant) -> Result<(), EngineError> {
        let download = self.setup.download;
        let mut first = true;
        let mut total = Received::default();
        let mut passes = Vec::new();
        self.server.forward_endpoint_events();
        for c in self.server.conns.values_mut() {
            while let Some(e) = c.poll_event() {
                match e {
                    Event::Stream(StreamEvent::Opened { dir: Dir::Bi }) if self.objects.is_some() => {
                        while let Some(id) = c.accept_bi() {
                            if let Some(o) = self.objects.as_mut() {
                                o.on_accept(id);
                            }
                        }
                    }
                    Event::Stream(StreamEvent::Opened { dir }) if !download && self.objects.is_none() => {
                        accept_streams(c, dir, &mut self.receiver);
                    }
                    Event::ConnectionLost(err) => self.lost[1] = Some(err.to_string()),
                    _ => {}
                }
            }
            if self.tunnel.is_some() {
                // The tunnel reads the outer connection's DATAGRAMs itself.
            } else if let Some(objects) = self.objects.as_mut() {
                if first && !c.is_handshaking() && !c.is_closed() {
                    passes.push(objects.server(c, sim_now, now, &mut self.limiter)?);
                }
            } else if download {
                // The data goes out on the server's first connection (there is only one per flow).
                if first && !c.is_handshaking() && !c.is_closed() {
                    send(c, &mut self.sender, self.receiver.read, self.setup.bytes);
                }
            } else {
                let got = receive(c, now, &mut self.receiver, &mut self.limiter, self.setup.index)?;
                total.bytes = total.bytes.saturating_add(got.bytes);
                total.fin_at = got.fin_at.or(total.fin_at);
                total.limited |= got.limited;
            }
            first = false;
        }
        if self.objects.is_some() {
            if !download {
                for pass in passes {
                    self.on_pass(sim_now, pass);
                }
            }
        } else {
            self.on_received(sim_now, &total);
        }
        Ok(())
    }

    /// The state of scenario path `path` for the recorder (`None` unless the flow is active and the path
    /// open on the connection).
    ///
    /// The sender's view of the path ([`Connection::path_stats`]): window, smoothed RTT, bytes in flight and
    /// the controller's own variables (`ssthresh` and the algorithm's named extras), plus the application
    /// bytes attributed to the path (call [`Flow::attribute`] first).
    pub fn path_sample(&self, path: usize) -> Option<PathSample> {
        if !self.is_active() {
            return None;
        }
        let slot = self.slots.get(path)?;
        let PathState::Open(id) = slot.state else {
            return None;
        };
        let stats = self.sender_conn()?.path_stats(id)?;
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
            delivered_bytes: slot.delivered,
            cc,
        })
    }
}
