//! The sans-IO QUIC connection: public API and dispatch.
//!
//! Calling contract (quinn-proto's, with a path in every output):
//! - feed every datagram for this connection to [`Connection::handle_datagram`];
//! - call [`Connection::poll_transmit`] until it returns `None` and send each datagram on its path;
//! - arm a timer at [`Connection::poll_timeout`] and call [`Connection::handle_timeout`] when it fires;
//! - drain [`Connection::poll_event`] (application) and [`Connection::poll_endpoint_event`] (endpoint).
//!
//! Time (`now`) and randomness (the seed in the constructor) are inputs. Work is split by concern:
//! [`spaces`](self) (Initial/Handshake spaces, CRYPTO streams), `paths` (per-path state), `path_set` (the set
//! of paths with their path IDs and connection IDs, the PATH_ABANDON queue, redundant copies, the scheduler's
//! view, and the invariants that hold across paths), `recv` (datagram →
//! packets → frames), `send` (packet assembly and coalescing), `frames_out` (frame records), `timers`, `close`
//! (closing and draining), `events`, `cids` (connection IDs issued and received, routing updates), `retry`
//! (client Retry handling, NEW_TOKEN), `probes` (PTO probes that repeat in-flight data), `ecn` (ECT(0)
//! marking and validation), `migration` (path validation, NAT rebinding, [`Connection::migrate`]),
//! `early_data` (0-RTT keys, remembered transport parameters, acceptance and rejection,
//! [`Connection::handshake_kind`]), `pmtud` (a path's MTU search, [`MtuDiscoveryConfig`]) and `mtu` (probes,
//! acknowledgements and losses fed to each path's search, a new size applied).

mod alt_path;
mod cids;
mod close;
mod config;
mod datagram_queue;
mod early_data;
mod ecn;
mod events;
mod frames_out;
#[cfg(feature = "fuzzing")]
mod fuzzing;
mod injected;
mod migration;
mod mtu;
mod multipath;
mod path_map;
mod path_set;
mod paths;
mod pmtud;
mod probes;
mod qlog;
mod records_pool;
mod recv;
mod reinject;
mod retry;
mod rx_buffer;
mod scheduling;
mod send;
mod spaces;
mod timers;

#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;

pub use crate::proto::qlog::{QlogContext, QlogFactory};
pub use crate::proto::streams::{FlowControlStats, ReassemblyStats};
pub use config::{
    AckPathPolicy, CcFactory, ClientConfig, ConnectionLimits, DEFAULT_INITIAL_MAX_PATH_ID,
    PreferredAddressConfig, Rng, SchedFactory, ServerConfig, TransportConfig,
};
pub use early_data::HandshakeKind;
pub use ecn::EcnStatus;
pub use events::{ConnectionError, EndpointEvent, Event};
pub use migration::MigrateError;
pub use multipath::ClosePathError;
pub use pmtud::{BASE_PLPMTU, MtuDiscoveryConfig, MtuDiscoveryConfigError};
pub use reinject::{
    AUTO_THRESHOLD_DIVISOR, MAX_ACK_THRESHOLD, MIN_ACK_THRESHOLD, ReinjectionConfig, ReinjectionConfigError,
    ReinjectionStats,
};
pub(crate) use retry::Tokens;

use crate::cc::{CongestionController, PathId};
use crate::proto::ack_tracker::{EcnCodepoint, SpaceKind};
use crate::proto::coding::VarInt;
use crate::proto::crypto::{Keys, Level, OneRttKeys, TlsSession};
use crate::proto::error::TransportError;
use crate::proto::packet::ConnectionId;
use crate::proto::streams::{ReadError, StreamId, Streams, WriteError};
use crate::proto::transport_params::{Side, TransportParameters};
use crate::sched::Scheduler;

use close::State;

/// Our active_connection_id_limit: how many of the peer's connection IDs we store per path.
const LOCAL_CID_LIMIT: u64 = 4;
use paths::Path;
use spaces::{CryptoStream, LongHeaderSpaces, Space};

/// Statistics of one path ([`Connection::path_stats`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PathStats {
    /// The path.
    pub path: PathId,
    /// The peer's address on this path.
    pub remote: SocketAddr,
    /// Our address on this path, once known.
    pub local: Option<SocketAddr>,
    /// Whether the peer's address is validated (RFC 9000 §8.1).
    pub validated: bool,
    /// Whether the path has backup status.
    pub backup: bool,
    /// Maximum UDP payload sent on the path.
    pub mtu: u16,
    /// Congestion window in bytes.
    pub cwnd: u64,
    /// Bytes in flight.
    pub bytes_in_flight: u64,
    /// Pacing rate in bytes per second, if the controller paces.
    pub pacing_rate: Option<u64>,
    /// Smoothed RTT (RFC 9002 §5.3).
    pub srtt: Duration,
    /// RTT variation.
    pub rttvar: Duration,
    /// Minimum RTT.
    pub min_rtt: Duration,
    /// Latest RTT sample.
    pub latest_rtt: Duration,
    /// UDP payload bytes sent on the path.
    pub bytes_sent: u64,
    /// UDP payload bytes received on the path.
    pub bytes_received: u64,
    /// STREAM frame payload bytes sent on the path, retransmissions included: the path's share of the
    /// application's data (goodput per path).
    pub stream_bytes_sent: u64,
    /// STREAM frame payload bytes received on the path, duplicates included.
    pub stream_bytes_received: u64,
    /// STREAM frame payload bytes of packets sent on the path that the peer acknowledged: the path's share of
    /// the data delivered (a byte sent twice and acknowledged twice, as the redundant scheduler does, counts
    /// twice; a copy declared lost does not count).
    pub stream_bytes_acked: u64,
    /// Packets sent on the path (1-RTT and, on path 0, the handshake's).
    pub packets_sent: u64,
    /// Packets received and decrypted on the path (1-RTT).
    pub packets_received: u64,
    /// Packets sent on the path and declared lost.
    pub packets_lost: u64,
    /// Bytes of the packets declared lost.
    pub bytes_lost: u64,
    /// Congestion events that began a recovery period on the path (RFC 9002 §7.3.2): the path's loss
    /// events, counted by the connection by that rule whatever the controller does with them, so a burst
    /// of losses in one round trip counts once and the count means the same for every controller.
    pub congestion_events: u64,
    /// The path was abandoned (its state is kept 3 PTO).
    pub abandoned: bool,
    /// The congestion controller's view of the path (window, threshold, state, algorithm variables).
    pub cc: Option<mpquic_cc::CcMetrics>,
}

/// One datagram to send, written into the caller's buffer by [`Connection::poll_transmit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmit {
    /// The path it belongs to.
    pub path: PathId,
    /// Our address to send from, if the path is bound to one.
    pub local: Option<SocketAddr>,
    /// Destination.
    pub remote: SocketAddr,
    /// ECN codepoint to set.
    pub ecn: Option<EcnCodepoint>,
    /// Bytes written.
    pub size: usize,
    /// Segment size when several datagrams were written back to back (`None`: one datagram).
    pub segment_size: Option<usize>,
}

/// Counters about a connection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnectionStats {
    /// Datagrams sent.
    pub datagrams_sent: u64,
    /// Datagrams received.
    pub datagrams_received: u64,
    /// Packets sent.
    pub packets_sent: u64,
    /// Packets received and successfully decrypted.
    pub packets_received: u64,
    /// Packets dropped (undecryptable, duplicate, wrong level).
    pub packets_dropped: u64,
    /// Packets declared lost.
    pub packets_lost: u64,
    /// Congestion events over all paths, closed ones included ([`PathStats::congestion_events`]).
    pub congestion_events: u64,
    /// Bytes sent in UDP payloads.
    pub bytes_sent: u64,
    /// Key updates performed.
    pub key_updates: u64,
    /// Path MTU black holes detected (a path fell back to 1200 bytes), over all paths.
    pub mtu_black_holes: u64,
    /// Receiver statistics: reassembly-buffer occupancy and head-of-line delay of received stream data.
    pub reassembly: crate::proto::streams::ReassemblyStats,
    /// Opportunistic retransmission and penalisation ([`TransportConfig::reinjection`]).
    pub reinjection: ReinjectionStats,
    /// Flow control: time blocked on credit as a sender, due credit left unsent as a receiver.
    pub flow: crate::proto::streams::FlowControlStats,
}

/// Errors of [`Connection::send_datagram`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SendDatagramError {
    /// The peer does not accept DATAGRAM frames (RFC 9221 §3).
    #[error("datagrams not supported by the peer")]
    Unsupported,
    /// The datagram is larger than the peer accepts or than fits in a packet.
    #[error("datagram too large")]
    TooLarge,
    /// The connection is closed.
    #[error("connection closed")]
    Closed,
}

/// A QUIC connection (RFC 9000), multipath-ready, without I/O.
pub struct Connection {
    side: Side,
    config: TransportConfig,
    /// CSPRNG: connection IDs, PATH_CHALLENGE data.
    rng: Rng,
    state: State,
    tls: TlsSession,
    /// Initial and Handshake spaces.
    spaces: LongHeaderSpaces,
    /// CRYPTO streams of Initial, Handshake and 1-RTT.
    crypto: [CryptoStream; 3],
    one_rtt: Option<Box<OneRttKeys>>,
    /// The paths, their path IDs and connection IDs, the PATH_ABANDON queue and redundant copies (`path_set`).
    paths: path_set::PathSet,
    cc: Box<dyn CongestionController>,
    sched: Box<dyn Scheduler>,
    streams: Streams,
    /// Our handshake Source Connection ID (long headers).
    local_cid: ConnectionId,
    /// Reset tokens already reported to the endpoint.
    announced_tokens: Vec<crate::proto::packet::ResetToken>,
    /// Client: the DCID of its first Initial; server: the DCID the client chose.
    orig_dcid: ConnectionId,
    #[allow(dead_code)] // multipath negotiation
    local_params: TransportParameters,
    peer_params: Option<TransportParameters>,
    handshake_complete: bool,
    handshake_confirmed: bool,
    handshake_done_pending: bool,
    idle_timeout: Option<Duration>,
    /// The last activity that restarts the idle timer (RFC 9000 §10.1); see [`Connection::idle_deadline`].
    idle_since: Instant,
    /// Whether the idle period is at least three PTOs (after the first packet activity; not for the
    /// deadline set from the transport parameters).
    idle_pto_floor: bool,
    /// An ack-eliciting packet was sent since the last packet received and processed (RFC 9000 §10.1).
    idle_sent_since_receive: bool,
    key_discard_deadline: Option<Instant>,
    events: VecDeque<Event>,
    endpoint_events: VecDeque<EndpointEvent>,
    datagrams_in: VecDeque<Bytes>,
    datagrams_out: datagram_queue::DatagramQueue,
    /// Emptied frame-record vectors of acknowledged and lost packets, for the next packets built.
    records_pool: records_pool::RecordsPool,
    /// Whether the client sent its first Handshake packet (it then discards Initial keys).
    sent_handshake: bool,
    /// The peer's ack_delay_exponent.
    peer_ack_delay_exponent: u8,
    /// The client has to send an anti-deadlock probe (RFC 9002 §6.2.2.1).
    anti_deadlock_probe: bool,
    stats: ConnectionStats,
    /// The latest `now` seen by `handle_timeout` (for pacing queries in `poll_timeout`).
    last_now: Instant,
    /// The buffer [`Connection::handle_datagram`] copies datagrams into, kept for reuse.
    rx_buffer: rx_buffer::RxBuffer,
    /// What the connection keeps of its conversation with the scheduler (`scheduling`).
    sched_state: scheduling::SchedState,
    /// Raw frames injected by unit tests to break the protocol on purpose (nothing outside `cfg(test)`).
    injected: injected::InjectedFrames,
    /// Retry and address-validation tokens.
    tokens: Tokens,
    /// 0-RTT keys, remembered transport parameters and the server's answer (`early_data`).
    early: early_data::EarlyData,
    /// The qlog, if [`TransportConfig::qlog`] gave a writer (`qlog.rs`).
    qlog: Option<Box<qlog::Qlog>>,
    /// Opportunistic retransmission and penalisation (`reinject`).
    reinject: reinject::ReinjectState,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("side", &self.side)
            .field("state", &self.state)
            .field("paths", &self.paths.len())
            .finish_non_exhaustive()
    }
}

/// Errors creating a connection.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// TLS refused the configuration or server name.
    #[error("TLS: {0}")]
    Tls(#[from] rustls::Error),
    /// The congestion controller spec is invalid.
    #[error("congestion controller: {0}")]
    Cc(String),
    /// The scheduler spec is invalid.
    #[error("scheduler: {0}")]
    Sched(String),
    /// Key derivation failed.
    #[error("crypto: {0}")]
    Crypto(#[from] crate::proto::crypto::CryptoError),
    /// The connection-ID configuration is unusable.
    #[error("connection IDs: {0}")]
    Cid(#[from] crate::proto::cid::CidConfigError),
    /// A stream window setting is outside its range.
    #[error("streams: {0}")]
    Streams(#[from] crate::proto::streams::StreamsConfigError),
    /// A reinjection setting is outside its range.
    #[error("{0}")]
    Reinjection(#[from] ReinjectionConfigError),
    /// A path MTU discovery setting is outside its range.
    #[error("{0}")]
    MtuDiscovery(#[from] MtuDiscoveryConfigError),
    /// A pacer setting is outside its range.
    #[error("{0}")]
    Pacer(#[from] crate::proto::recovery::PacerConfigError),
}

/// Everything a new connection is built from.
pub(crate) struct NewConnection {
    pub(crate) side: Side,
    pub(crate) config: TransportConfig,
    pub(crate) seed: [u8; 32],
    pub(crate) now: Instant,
    pub(crate) remote: SocketAddr,
    pub(crate) local_cid: ConnectionId,
    pub(crate) remote_cid: ConnectionId,
    pub(crate) orig_dcid: ConnectionId,
    /// The endpoint's stateless reset key.
    pub(crate) reset_key: crate::proto::cid::ResetKey,
    /// Token and Retry state.
    pub(crate) tokens: Tokens,
    /// Whether the peer's address is already validated (client: always; server: by a token).
    pub(crate) address_validated: bool,
}

impl Connection {
    /// A client connection to `remote` for `server_name`, with our CID `local_cid` and the random initial
    /// destination CID `initial_dcid`.
    pub(crate) fn client(
        config: &ClientConfig,
        server_name: &str,
        new: NewConnection,
    ) -> Result<Connection, ConnectError> {
        let params = Self::local_params(&new);
        let tls = TlsSession::client(config.tls.clone(), server_name, encode_params(&params))?;
        let local_cids = Self::new_local_cids(&new)?;
        let rng = Rng::from_seed(new.seed);
        let mut conn = Self::build(new, tls, params, local_cids, rng)?;
        conn.init_client_early_data();
        conn.write_tls();
        Ok(conn)
    }

    /// A server connection for a client whose first Initial was addressed to `orig_dcid`.
    pub(crate) fn server(config: &ServerConfig, new: NewConnection) -> Result<Connection, ConnectError> {
        let mut params = Self::local_params(&new);
        let mut local_cids = Self::new_local_cids(&new)?;
        let mut rng = Rng::from_seed(new.seed);
        if let Some(pa) = new.config.preferred_address {
            // RFC 9000 §18.2: "A server that chooses a zero-length connection ID MUST NOT provide a preferred
            // address" (`issue_preferred_address` refuses then).
            if let Some((cid, token)) = local_cids.issue_preferred_address(&mut |b| rng.fill(b)) {
                params.preferred_address = Some(crate::proto::transport_params::PreferredAddress {
                    ipv4: pa.ipv4,
                    ipv6: pa.ipv6,
                    connection_id: cid,
                    stateless_reset_token: token,
                });
            }
        }
        let tls = TlsSession::server(config.tls.clone(), encode_params(&params))?;
        let mut conn = Self::build(new, tls, params, local_cids, rng)?;
        conn.flush_routing_updates();
        Ok(conn)
    }

    fn new_local_cids(new: &NewConnection) -> Result<crate::proto::cid::LocalCids, ConnectError> {
        let mut cids = crate::proto::cid::LocalCids::new(
            new.local_cid.len(),
            new.reset_key.clone(),
            new.local_cid,
            false,
        )?;
        cids.set_unused_path_cids(new.config.unused_path_cids);
        Ok(cids)
    }

    fn local_params(new: &NewConnection) -> TransportParameters {
        let mut p = TransportParameters::default();
        new.config.streams.apply_to(&mut p);
        let idle_ms = u64::try_from(new.config.max_idle_timeout.as_millis()).unwrap_or(u64::MAX);
        p.max_idle_timeout = VarInt::from_u64(idle_ms).unwrap_or(VarInt::MAX);
        p.max_ack_delay =
            VarInt::from_u64(u64::try_from(new.config.ack.max_ack_delay.as_millis()).unwrap_or(u64::MAX))
                .unwrap_or(VarInt::MAX);
        p.max_datagram_frame_size = new
            .config
            .max_datagram_frame_size
            .map(|v| VarInt::from_u64(v).unwrap_or(VarInt::MAX));
        p.initial_source_connection_id = Some(new.local_cid);
        p.active_connection_id_limit = VarInt::from_u64(LOCAL_CID_LIMIT).unwrap_or(VarInt::MAX);
        p.disable_active_migration = new.config.disable_active_migration;
        // draft-ietf-quic-multipath-21 §2: "When advertising the initial_max_path_id transport parameter, the
        // endpoint MUST use non-zero-length Source and Destination Connection IDs."
        if !new.local_cid.is_empty() {
            // `ConnectionLimits::max_paths`: never more path IDs at the start than path states we keep.
            p.initial_max_path_id = new
                .config
                .limits
                .initial_max_path_id(new.config.initial_max_path_id);
        }
        if new.side == Side::Server {
            p.original_destination_connection_id = Some(new.orig_dcid);
            // RFC 9000 §18.2: the server's stateless_reset_token goes with its handshake connection ID.
            p.stateless_reset_token = Some(new.reset_key.token(&new.local_cid));
            p.retry_source_connection_id = new.tokens.retry_scid;
        }
        p
    }

    fn build(
        new: NewConnection,
        tls: TlsSession,
        local_params: TransportParameters,
        local_cids: crate::proto::cid::LocalCids,
        rng: Rng,
    ) -> Result<Connection, ConnectError> {
        new.config.streams.validate()?;
        new.config.reinjection.validate()?;
        new.config.recovery.validate()?;
        if let Some(m) = &new.config.mtu_discovery {
            m.validate()?;
        }
        let crypto_side = match new.side {
            Side::Client => crate::proto::crypto::Side::Client,
            Side::Server => crate::proto::crypto::Side::Server,
        };
        let mut initial = Space::new(SpaceKind::Initial, new.config.ack);
        // RFC 9001 §5.2: Initial keys come from the Destination Connection ID of the client's first Initial
        // (after a Retry: the Retry's Source Connection ID, which the client now uses).
        let keys_dcid = new.tokens.initial_dcid.unwrap_or(new.orig_dcid);
        initial.keys = Some(Keys::initial(&keys_dcid, crypto_side)?);
        let handshake = Space::new(SpaceKind::Handshake, new.config.ack);
        let mut cc = match &new.config.congestion_controller_factory {
            Some(f) => (f.0)(),
            None => crate::cc::registry::build(&new.config.congestion_controller)
                .map_err(|e| ConnectError::Cc(e.to_string()))?,
        };
        let sched = match &new.config.scheduler_factory {
            Some(f) => (f.0)(),
            None => crate::sched::registry::build(&new.config.scheduler)
                .map_err(|e| ConnectError::Sched(e.to_string()))?,
        };
        let mtu = new.config.max_udp_payload;
        cc.on_path_added(PathId(0), new.now, mtu);
        let path = Path::handshake_path(
            new.remote,
            new.remote_cid,
            new.config.recovery,
            new.config.ack,
            new.side == Side::Server,
            mtu,
        );
        let mut path = path;
        if new.address_validated {
            path.validated = true;
        }
        let mut streams = Streams::new(new.side, new.config.streams.clone());
        streams.set_remembered_stops(new.config.limits.remembered_stops);
        streams.set_max_recv_fragments(new.config.limits.recv_fragments);
        let idle_timeout = (!new.config.max_idle_timeout.is_zero()).then_some(new.config.max_idle_timeout);
        let remote_cids = crate::proto::cid::RemoteCids::new(new.remote_cid, LOCAL_CID_LIMIT);
        let mut path_ids = crate::proto::cid::PathIds::new(new.side, local_params.initial_max_path_id);
        path_ids.set_max_states(new.config.limits.max_paths());
        let paths = path_set::PathSet::new(path, path_ids, local_cids, remote_cids);
        let qlog = Self::qlog_open(&new, &local_params);
        Ok(Connection {
            side: new.side,
            rng,
            state: State::Handshake,
            tls,
            spaces: LongHeaderSpaces { initial, handshake },
            crypto: Default::default(),
            one_rtt: None,
            paths,
            cc,
            sched,
            streams,
            local_cid: new.local_cid,
            announced_tokens: Vec::new(),
            orig_dcid: new.orig_dcid,
            local_params,
            peer_params: None,
            handshake_complete: false,
            handshake_confirmed: false,
            handshake_done_pending: false,
            idle_timeout,
            idle_since: new.now,
            idle_pto_floor: false,
            idle_sent_since_receive: false,
            key_discard_deadline: None,
            events: VecDeque::new(),
            endpoint_events: VecDeque::new(),
            datagrams_in: VecDeque::new(),
            datagrams_out: datagram_queue::DatagramQueue::default(),
            records_pool: records_pool::RecordsPool::default(),
            sent_handshake: false,
            peer_ack_delay_exponent: 3,
            anti_deadlock_probe: false,
            stats: ConnectionStats::default(),
            last_now: new.now,
            rx_buffer: rx_buffer::RxBuffer::default(),
            injected: injected::InjectedFrames::default(),
            sched_state: scheduling::SchedState::default(),
            early: early_data::EarlyData::default(),
            qlog,
            reinject: reinject::ReinjectState::default(),
            tokens: new.tokens,
            config: new.config,
        })
    }

    // ----- status -----

    /// Which side we are.
    pub fn side(&self) -> Side {
        self.side
    }

    /// Whether the handshake is still in progress.
    pub fn is_handshaking(&self) -> bool {
        !self.handshake_complete
    }

    /// Whether the connection is closing, draining or drained.
    pub fn is_closed(&self) -> bool {
        self.state.is_closed()
    }

    /// Whether the connection is fully drained: nothing more will be sent or received.
    pub fn is_drained(&self) -> bool {
        matches!(self.state, State::Drained)
    }

    /// Counters, and the receiver statistics of the streams.
    pub fn stats(&self) -> ConnectionStats {
        ConnectionStats {
            reassembly: self.streams.reassembly_stats(),
            reinjection: self.reinject.stats,
            flow: self.streams.flow_stats(),
            ..self.stats
        }
    }

    /// Our connection ID.
    pub fn local_cid(&self) -> ConnectionId {
        self.local_cid
    }

    /// The negotiated cipher suite, once known.
    pub fn cipher_suite(&self) -> Option<crate::proto::crypto::CipherSuite> {
        self.tls.cipher_suite()
    }

    /// The smoothed RTT of a path.
    pub fn rtt(&self, path: PathId) -> Option<Duration> {
        self.paths.get(&path).map(|p| p.recovery.rtt().smoothed())
    }

    /// The paths of the connection, in path-ID order.
    pub fn paths(&self) -> Vec<PathId> {
        self.paths.id_list()
    }

    /// Statistics of one path: its window and bytes in flight, RTT estimates, traffic counters and the
    /// congestion controller's internal variables (`None` for an unknown path).
    pub fn path_stats(&self, path: PathId) -> Option<PathStats> {
        let p = self.paths.get(&path)?;
        let rtt = p.recovery.rtt();
        Some(PathStats {
            path,
            remote: p.remote,
            local: p.local,
            validated: p.validated,
            backup: p.status == crate::sched::PathStatus::Backup,
            mtu: p.mtu,
            cwnd: self.cc.window(path),
            bytes_in_flight: p.recovery.bytes_in_flight(),
            pacing_rate: self.cc.pacing_rate(path),
            srtt: rtt.smoothed(),
            rttvar: rtt.var(),
            min_rtt: rtt.min(),
            latest_rtt: rtt.latest(),
            bytes_sent: p.bytes_sent,
            bytes_received: p.bytes_received,
            stream_bytes_sent: p.stream_bytes_sent,
            stream_bytes_received: p.stream_bytes_received,
            stream_bytes_acked: p.stream_bytes_acked,
            packets_sent: p.packets_sent,
            packets_received: p.packets_received,
            packets_lost: p.packets_lost,
            bytes_lost: p.bytes_lost,
            congestion_events: p.recovery.congestion_events(),
            abandoned: p.abandoned_at.is_some(),
            cc: self.cc.metrics(path),
        })
    }

    /// The next application event.
    pub fn poll_event(&mut self) -> Option<Event> {
        if let Some(e) = self.events.pop_front() {
            return Some(e);
        }
        self.streams.poll_event().map(Event::Stream)
    }

    /// The next endpoint notification.
    pub fn poll_endpoint_event(&mut self) -> Option<EndpointEvent> {
        self.endpoint_events.pop_front()
    }

    // ----- streams -----

    /// Opens a bidirectional stream, if the peer's limit allows.
    pub fn open_bi(&mut self) -> Option<StreamId> {
        self.streams.open_bi()
    }

    /// Opens a unidirectional stream, if the peer's limit allows.
    pub fn open_uni(&mut self) -> Option<StreamId> {
        self.streams.open_uni()
    }

    /// Accepts a bidirectional stream the peer opened.
    pub fn accept_bi(&mut self) -> Option<StreamId> {
        self.streams.accept_bi()
    }

    /// Accepts a unidirectional stream the peer opened.
    pub fn accept_uni(&mut self) -> Option<StreamId> {
        self.streams.accept_uni()
    }

    /// Queues data on a stream; returns how many bytes were accepted.
    pub fn write(&mut self, id: StreamId, data: Bytes) -> Result<usize, WriteError> {
        self.streams.write(id, data)
    }

    /// Ends a stream's send side.
    pub fn finish(&mut self, id: StreamId) -> Result<(), WriteError> {
        self.streams.finish(id)
    }

    /// Abandons a stream's send side with RESET_STREAM.
    pub fn reset(
        &mut self,
        id: StreamId,
        error_code: VarInt,
    ) -> Result<(), crate::proto::streams::ClosedStream> {
        self.streams.reset(id, error_code)
    }

    /// Whether flow-control credit (MAX_DATA / MAX_STREAM_DATA) is due and not yet sent: a runtime sends it
    /// without waiting for other work once a read made it due.
    pub fn flow_credit_due(&self) -> bool {
        self.streams.credit_due()
    }

    /// Reads up to `max_len` in-order bytes; `Ok(None)` at the end of the stream.
    pub fn read(&mut self, id: StreamId, max_len: usize, now: Instant) -> Result<Option<Bytes>, ReadError> {
        self.streams.read(id, max_len, now)
    }

    /// Changes how the receive window of stream `id` grows from now on (see
    /// [`Streams::set_recv_window`](crate::proto::streams::Streams::set_recv_window)): the window policy and
    /// its maximum, 1 to 2^62 − 1 bytes.
    pub fn set_stream_receive_window(
        &mut self,
        id: StreamId,
        max_window: u64,
        policy: crate::proto::streams::WindowPolicy,
    ) -> Result<(), crate::proto::streams::SetWindowError> {
        self.streams.set_recv_window(id, max_window, policy)
    }

    /// Asks the peer to stop sending on a stream (STOP_SENDING).
    pub fn stop(
        &mut self,
        id: StreamId,
        error_code: VarInt,
    ) -> Result<(), crate::proto::streams::ClosedStream> {
        self.streams.stop(id, error_code)
    }

    // ----- datagrams (RFC 9221) -----

    /// Queues an unreliable datagram.
    pub fn send_datagram(&mut self, data: Bytes) -> Result<(), SendDatagramError> {
        if self.is_closed() {
            return Err(SendDatagramError::Closed);
        }
        // RFC 9221 §3 with RFC 9000 §7.4.1: in 0-RTT the remembered max_datagram_frame_size applies.
        let max = self
            .peer_params
            .as_ref()
            .or(self.remembered_params())
            .and_then(|p| p.max_datagram_frame_size)
            .ok_or(SendDatagramError::Unsupported)?;
        // RFC 9221 §3: "An endpoint MUST NOT send DATAGRAM frames until it has received the
        // max_datagram_frame_size transport parameter with a non-zero value".
        if max.into_inner() == 0 {
            return Err(SendDatagramError::Unsupported);
        }
        let frame_len = 1 + VarInt::size_of(data.len() as u64).unwrap_or(8) + data.len();
        if frame_len > self.max_datagram_frame_len(max.into_inner()) {
            return Err(SendDatagramError::TooLarge);
        }
        // `ConnectionLimits::datagrams_out`: an application that queues faster than the path sends loses the
        // oldest datagrams, not memory.
        self.datagrams_out.push(data, self.config.limits.datagrams_out);
        Ok(())
    }

    /// Test hook: sends a STREAM frame for `id` whatever the stream's state, to break RFC 9000 on purpose.
    #[cfg(test)]
    pub(crate) fn inject_stream_frame_for_test(&mut self, id: StreamId, data: &[u8]) {
        let mut v = Vec::new();
        crate::proto::frame::Frame::Stream(crate::proto::frame::Stream {
            id: id.to_varint(),
            offset: VarInt::ZERO,
            fin: false,
            data,
        })
        .encode(&mut v);
        self.injected.one_rtt.push(v);
    }

    /// Test hook: sends these raw frame bytes in the next 1-RTT packet, to break RFC 9000 on purpose.
    #[cfg(test)]
    pub(crate) fn inject_raw_frame_for_test(&mut self, frame: Vec<u8>) {
        self.injected.one_rtt.push(frame);
    }

    /// Test hook: sends these raw frame bytes in the next Initial packet.
    #[cfg(test)]
    pub(crate) fn inject_initial_frame_for_test(&mut self, frame: Vec<u8>) {
        self.injected.initial.push(frame);
    }

    /// The largest DATAGRAM frame (type, length and payload) that [`Connection::send_datagram`] accepts, given
    /// the peer's `max_datagram_frame_size`: the peer's limit and what fits in one 1-RTT packet of
    /// `max_udp_payload` bytes after the short header (1 + connection ID + 4-byte packet number) and the AEAD tag.
    fn max_datagram_frame_len(&self, peer_max: u64) -> usize {
        let room =
            usize::from(self.config.max_udp_payload).saturating_sub(1 + self.paths_dcid_len() + 4 + 16);
        room.min(usize::try_from(peer_max).unwrap_or(usize::MAX))
    }

    /// The largest payload [`Connection::send_datagram`] accepts now (`None`: the peer does not accept
    /// datagrams, or its transport parameters are not known yet). RFC 9221 §5: a DATAGRAM frame is never split
    /// over packets, so the limit is the frame that fits in one packet, less its type and length fields.
    pub fn max_datagram_size(&self) -> Option<usize> {
        let max = self
            .peer_params
            .as_ref()
            .or(self.remembered_params())?
            .max_datagram_frame_size?
            .into_inner();
        if max == 0 {
            return None;
        }
        let frame = self.max_datagram_frame_len(max);
        // The largest n with 1 + size_of(n) + n <= frame.
        let n = (1..=8usize)
            .filter_map(|len| frame.checked_sub(1 + len))
            .filter(|&n| VarInt::size_of(n as u64).is_some_and(|l| 1 + l + n <= frame))
            .max()?;
        Some(n)
    }

    /// The next received datagram.
    pub fn recv_datagram(&mut self) -> Option<Bytes> {
        self.datagrams_in.pop_front()
    }

    fn paths_dcid_len(&self) -> usize {
        self.paths.max_remote_cid_len()
    }

    /// Forces a key update now (for tests and applications that rotate keys on their own schedule).
    pub fn force_key_update(&mut self) -> bool {
        let ok = self.one_rtt.as_mut().is_some_and(|k| k.initiate_update().is_ok());
        self.defer_next_keys(self.last_now);
        if ok {
            self.stats.key_updates += 1;
        }
        ok
    }

    /// The current 1-RTT key generation (0 before any key update).
    pub fn key_generation(&self) -> u64 {
        self.one_rtt.as_ref().map_or(0, |k| k.generation())
    }

    // ----- handshake glue -----

    /// Drains TLS output into the CRYPTO streams and installs new keys.
    fn write_tls(&mut self) {
        loop {
            let level = self.tls.write_level();
            let mut buf = Vec::new();
            let change = self.tls.write_handshake(&mut buf);
            if let Some(c) = self.crypto.get_mut(spaces::level_index(level)) {
                c.push(&buf);
            }
            match change {
                Some(crate::proto::crypto::KeyChange::Handshake(keys)) => {
                    if let Some(s) = self.spaces.get_mut(Level::Handshake) {
                        s.keys = Some(keys);
                    }
                }
                Some(crate::proto::crypto::KeyChange::OneRtt(keys)) => self.one_rtt = Some(keys),
                None => {
                    if buf.is_empty() {
                        break;
                    }
                }
            }
        }
        self.on_tls_keys_for_early_data();
    }

    /// Applies the peer's transport parameters once TLS has them.
    fn on_peer_params(&mut self, now: Instant, scid: Option<&ConnectionId>) -> Result<(), TransportError> {
        if self.peer_params.is_some() {
            return Ok(());
        }
        let Some(raw) = self.tls.peer_transport_params() else {
            return Ok(());
        };
        let params = TransportParameters::decode(raw, self.side.peer())?;
        self.on_early_data_decided(now, &params)?;
        let observed = scid
            .copied()
            .or_else(|| self.paths.get(&PathId(0)).map(|p| p.remote_cid));
        if let Some(observed) = observed {
            match self.side {
                Side::Server => crate::proto::transport_params::check_client_cids(&params, &observed)?,
                Side::Client => crate::proto::transport_params::check_server_cids(
                    &params,
                    &observed,
                    &self.orig_dcid,
                    self.tokens.retry_scid.as_ref(),
                )?,
            }
        }
        self.streams.set_peer_params(&params);
        self.paths.ids.set_peer_initial(params.initial_max_path_id);
        let multipath = self.paths.ids.multipath();
        if let Some(observed) = observed {
            crate::proto::transport_params::check_multipath_cids(&params, &self.local_cid, &observed)?;
        }
        self.paths
            .local_cids
            .set_peer_params(params.active_connection_id_limit.into_inner(), multipath);
        self.paths.remote_cids.set_multipath(multipath);
        if self.side == Side::Client {
            if let Some(t) = params.stateless_reset_token {
                self.paths.remote_cids.set_initial_reset_token(t);
            }
            if let Some(pa) = &params.preferred_address {
                // RFC 9000 §5.1.1: the preferred_address connection ID has sequence number 1.
                self.paths
                    .remote_cids
                    .insert_preferred_address(pa.connection_id, pa.stateless_reset_token);
            }
        }
        self.announce_reset_tokens();
        let peer_idle = Duration::from_millis(params.max_idle_timeout.into_inner());
        // RFC 9000 §10.1: "each endpoint advertises a max_idle_timeout, but the effective value at an endpoint is
        // computed as the minimum of the two advertised values".
        self.idle_timeout = match (self.idle_timeout, peer_idle.is_zero()) {
            (Some(a), false) => Some(a.min(peer_idle)),
            (None, false) => Some(peer_idle),
            (a, true) => a,
        };
        self.idle_since = now;
        self.idle_pto_floor = false;
        self.peer_ack_delay_exponent = u8::try_from(params.ack_delay_exponent.into_inner()).unwrap_or(20);
        let mad = Duration::from_millis(params.max_ack_delay.into_inner());
        for p in self.paths.values_mut() {
            p.recovery.set_max_ack_delay(now, mad);
        }
        self.peer_params = Some(params);
        Ok(())
    }
}

fn encode_params(p: &TransportParameters) -> Vec<u8> {
    let mut v = Vec::new();
    p.encode(&mut v, None);
    v
}
