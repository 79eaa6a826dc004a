//! The sans-IO endpoint: routes datagrams to connections by Destination Connection ID, creates server
//! connections from valid client Initials, and answers what belongs to no connection (Version Negotiation,
//! Stateless Reset) through [`crate::proto::stateless`].
//!
//! Stateless work, rate-limited by a token bucket: Version Negotiation; Stateless Reset for short-header
//! packets whose connection ID is unknown (never for a routed one; datagrams ending in a reset token a
//! connection announced are routed to it instead); Retry when [`Endpoint::set_require_retry`] is on, and an
//! Initial with CONNECTION_CLOSE (INVALID_TOKEN) for an invalid Retry token (RFC 9000 §8.1.2). Server
//! connections get a NEW_TOKEN token to hand out after the handshake; client connections file the tokens they
//! receive in the endpoint's [`LruTokenStore`], used by the next [`Endpoint::connect`] to that server name.
//! Randomness (connection IDs, reset and token keys, nonces, Retry SCIDs) comes from a ChaCha20 [`Rng`].
//!
//! Limits ([`EndpointLimits`], [`Endpoint::set_limits`]): a server refuses new connections beyond
//! `max_connections` with an Initial carrying CONNECTION_CLOSE (CONNECTION_REFUSED, RFC 9000 §5.2.2), and
//! while `max_handshakes` server handshakes are in progress it answers clients whose address no token
//! validates with a Retry (RFC 9000 §8.1.2: a spoofed source cannot complete it, so only reachable clients
//! take handshake slots) and refuses the others.
//!
//! The endpoint does not own connections: [`Endpoint::connect`] and [`DatagramEvent::NewConnection`] hand
//! them to the caller with a [`ConnectionHandle`]; [`DatagramEvent::Known`] says which one a datagram is for.
//! Connections report back with [`EndpointEvent`]s, given to [`Endpoint::handle_event`].

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::cc::PathId;
use crate::proto::ack_tracker::EcnCodepoint;
use crate::proto::cid::{ResetKey, RouteTable};
use crate::proto::connection::Tokens;
use crate::proto::connection::{
    ClientConfig, ConnectError, Connection, EndpointEvent, NewConnection, Rng, ServerConfig, Transmit,
};
use crate::proto::packet::ResetToken;
use crate::proto::packet::{
    ConnectionId, DecodedPacket, MIN_INITIAL_DATAGRAM_SIZE, PacketDecodeError, PacketType, VERSION_1,
    VersionNegotiation,
};
use crate::proto::stateless::RetryRandom;
use crate::proto::stateless::{ResponseBucket, StatelessResponder};
use crate::proto::token::{
    InitialDecision, LruTokenStore, NONCE_LEN, TokenConfig, TokenKey, TokenStore, TokenValidator,
};
use crate::proto::transport_params::Side;

/// Stateless responses allowed in a burst (Stateless Reset, Retry, INVALID_TOKEN close, Version Negotiation).
const STATELESS_BURST: u32 = 64;
/// Stateless responses allowed per second once the burst is spent.
const STATELESS_PER_SECOND: u32 = 100;
/// Reset tokens remembered per connection (the latest ones).
const MAX_TOKENS_PER_CONNECTION: usize = 8;
/// Largest Stateless Reset we send.
const MAX_RESET_LEN: u16 = 1200;

/// Default [`EndpointLimits::max_connections`].
pub const DEFAULT_MAX_CONNECTIONS: usize = 65_536;
/// Default [`EndpointLimits::max_handshakes`].
pub const DEFAULT_MAX_HANDSHAKES: usize = 1024;

/// How much a server endpoint accepts at once (see the module documentation for what happens beyond).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndpointLimits {
    /// Connections (client and server, until drained) beyond which new client Initials are refused with
    /// CONNECTION_REFUSED. Default [`DEFAULT_MAX_CONNECTIONS`].
    pub max_connections: usize,
    /// Server handshakes in progress (created, handshake not complete, not drained) beyond which clients
    /// get a Retry if their address is not validated yet, and CONNECTION_REFUSED if it is. Each holds TLS
    /// state and up to the anti-amplification budget of sent data. Default [`DEFAULT_MAX_HANDSHAKES`].
    pub max_handshakes: usize,
}

impl Default for EndpointLimits {
    fn default() -> Self {
        EndpointLimits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_handshakes: DEFAULT_MAX_HANDSHAKES,
        }
    }
}

/// Identifies a connection of an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnectionHandle(pub usize);

/// Endpoint-wide settings.
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    /// Seed of the endpoint's ChaCha20 generator (connection IDs, reset key, token key and nonces, Retry source
    /// connection IDs, per-connection seeds). [`EndpointConfig::default`] draws it from the operating system's
    /// entropy; set it explicitly only for reproducible tests.
    pub seed: u64,
    /// Length of the connection IDs we issue (RFC 9000 §5.1; 8 by default, at most 20).
    pub cid_len: usize,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        EndpointConfig {
            seed: rand::random(),
            cid_len: 8,
        }
    }
}

/// What [`Endpoint::handle`] decided about a datagram.
#[derive(Debug)]
pub enum DatagramEvent {
    /// For an existing connection: pass the datagram to its [`Connection::handle_datagram`].
    Known(ConnectionHandle),
    /// A new server connection, which already processed the datagram ([`Endpoint::handle`]) or is to be given
    /// it next ([`Endpoint::handle_deferred`]).
    NewConnection(ConnectionHandle, Box<Connection>),
    /// A stateless response to send.
    Response(Transmit, Vec<u8>),
}

/// A QUIC endpoint without I/O.
#[derive(Debug)]
pub struct Endpoint {
    config: EndpointConfig,
    server: Option<Arc<ServerConfig>>,
    rng: Rng,
    /// Stateless reset tokens of every connection ID we issue are derived from this key (RFC 9000 §10.3.2).
    reset_key: ResetKey,
    /// Stateless answers (Stateless Reset, Retry, INVALID_TOKEN close), rate-limited.
    responder: Option<StatelessResponder<ResponseBucket>>,
    /// The instant stateless tokens count time from (the first `now` seen).
    epoch: Option<Instant>,
    /// Client: NEW_TOKEN tokens received from servers, by server name, for later connections.
    token_store: Arc<Mutex<LruTokenStore>>,
    routes: RouteTable<ConnectionHandle>,
    /// Reset tokens connections accept, by peer address (a Stateless Reset carries a random connection ID).
    reset_tokens: HashMap<SocketAddr, Vec<(ConnectionHandle, ResetToken)>>,
    /// What each connection has in `routes` and `reset_tokens` (to remove exactly that when it drains).
    cids_of: HashMap<ConnectionHandle, ConnRoutes, HandleHash>,
    /// Server connections whose handshake is in progress.
    handshaking: HashSet<ConnectionHandle, HandleHash>,
    limits: EndpointLimits,
    next_handle: usize,
}

impl Endpoint {
    /// An endpoint; with a server config it accepts connections.
    pub fn new(config: EndpointConfig, server: Option<Arc<ServerConfig>>) -> Self {
        let rng = Rng::new(config.seed);
        Self::with_rng(config, server, rng)
    }

    /// An endpoint drawing its randomness from `rng` instead of `config.seed`: pass [`Rng::from_entropy`] for
    /// 256-bit keys in production (the 64-bit seed of [`Endpoint::new`] bounds the key space to 2^64).
    pub fn with_rng(config: EndpointConfig, server: Option<Arc<ServerConfig>>, mut rng: Rng) -> Self {
        let reset_key = ResetKey::random(&mut |b| rng.fill(b));
        let mut secret = [0u8; crate::proto::token::SECRET_LEN];
        rng.fill(&mut secret);
        let validator = TokenKey::new(&secret)
            .map(|k| TokenValidator::new(k, TokenConfig::default()))
            .ok();
        let cid_len = config.cid_len.clamp(1, 20);
        let responder = validator.map(|validator| StatelessResponder {
            validator,
            reset_key: reset_key.clone(),
            limiter: ResponseBucket::new(STATELESS_BURST, STATELESS_PER_SECOND),
            local_cid_len: cid_len,
            max_reset_len: usize::from(MAX_RESET_LEN),
        });
        Endpoint {
            config: EndpointConfig {
                cid_len: config.cid_len.clamp(1, 20),
                ..config
            },
            server,
            rng,
            reset_key,
            responder,
            epoch: None,
            token_store: Arc::new(Mutex::new(LruTokenStore::default())),
            routes: RouteTable::new(),
            reset_tokens: HashMap::new(),
            cids_of: HashMap::default(),
            handshaking: HashSet::default(),
            limits: EndpointLimits::default(),
            next_handle: 0,
        }
    }

    /// Sets the limits on connections and handshakes in progress; connections already accepted stay.
    pub fn set_limits(&mut self, limits: EndpointLimits) {
        self.limits = limits;
    }

    /// The limits in force.
    pub fn limits(&self) -> EndpointLimits {
        self.limits
    }

    /// Server handshakes in progress.
    pub fn handshakes_in_progress(&self) -> usize {
        self.handshaking.len()
    }

    fn new_cid(&mut self, len: usize) -> ConnectionId {
        loop {
            let mut b = [0u8; 20];
            let len = len.min(20);
            self.rng.fill(b.get_mut(..len).unwrap_or_default());
            let cid = ConnectionId::new(b.get(..len).unwrap_or_default()).unwrap_or_default();
            if !self.routes.contains_key(&cid) {
                return cid;
            }
        }
    }

    fn register(&mut self, cids: Vec<ConnectionId>) -> ConnectionHandle {
        let handle = ConnectionHandle(self.next_handle);
        self.next_handle += 1;
        for c in &cids {
            self.routes.insert(*c, handle);
        }
        self.cids_of.insert(
            handle,
            ConnRoutes {
                cids,
                reset_remotes: Vec::new(),
            },
        );
        handle
    }

    /// Starts a client connection to `remote`.
    pub fn connect(
        &mut self,
        now: Instant,
        config: &ClientConfig,
        remote: SocketAddr,
        server_name: &str,
    ) -> Result<(ConnectionHandle, Connection), ConnectError> {
        let prepared = self.prepare_connect();
        let local_cid = prepared.local_cid();
        let conn = prepared.build(now, config, remote, server_name)?;
        Ok((self.register_client(local_cid), conn))
    }

    /// [`Endpoint::connect`] in three steps, so that a caller that guards the endpoint with a lock can build
    /// the connection without holding it: the TLS set-up of a client connection (its key share, an X25519
    /// key generation, and the Initial keys) is most of the cost of `connect`. This step draws the
    /// connection IDs and the connection's seed; [`PreparedConnect::build`] builds the connection (no
    /// endpoint needed); [`Endpoint::register_client`] routes its connection ID and numbers it. The same
    /// random draws in the same order as `connect`, so a seeded endpoint gives the same connections.
    pub fn prepare_connect(&mut self) -> PreparedConnect {
        let local_cid = self.new_cid(self.config.cid_len);
        // RFC 9000 §7.2: "the client MUST use a Destination Connection ID ... unpredictable ... at least 8 bytes".
        let initial_dcid = self.new_cid(16);
        let seed = self.rng.fork_seed();
        PreparedConnect {
            local_cid,
            initial_dcid,
            seed,
            reset_key: self.reset_key.clone(),
            token_store: self.token_store.clone(),
        }
    }

    /// Routes the connection ID of a client connection built from [`Endpoint::prepare_connect`] and returns
    /// its handle. Call it before the connection sends anything (the server's answers are routed by it).
    pub fn register_client(&mut self, local_cid: ConnectionId) -> ConnectionHandle {
        self.register(vec![local_cid])
    }

    /// Routes one received datagram. A [`DatagramEvent::NewConnection`] has already processed it.
    pub fn handle(
        &mut self,
        now: Instant,
        local: Option<SocketAddr>,
        remote: SocketAddr,
        ecn: Option<EcnCodepoint>,
        datagram: &mut [u8],
    ) -> Option<DatagramEvent> {
        self.route(now, local, remote, ecn, datagram, true)
    }

    /// Routes one received datagram like [`Self::handle`], except that a [`DatagramEvent::NewConnection`]
    /// has **not** processed it yet: the caller passes it to the new connection's
    /// [`Connection::handle_datagram_buf`] itself, before any later datagram for that connection. The
    /// ClientHello's TLS work (key exchange, signature) then runs outside whatever lock guards the endpoint.
    pub fn handle_deferred(
        &mut self,
        now: Instant,
        local: Option<SocketAddr>,
        remote: SocketAddr,
        ecn: Option<EcnCodepoint>,
        datagram: &mut [u8],
    ) -> Option<DatagramEvent> {
        self.route(now, local, remote, ecn, datagram, false)
    }

    fn route(
        &mut self,
        now: Instant,
        local: Option<SocketAddr>,
        remote: SocketAddr,
        ecn: Option<EcnCodepoint>,
        datagram: &mut [u8],
        process_first: bool,
    ) -> Option<DatagramEvent> {
        let first = match DecodedPacket::decode(datagram, self.config.cid_len) {
            Ok(p) => p,
            Err(PacketDecodeError::UnsupportedVersion { .. }) => {
                return self.version_negotiation(remote, datagram);
            }
            Err(_) => return None,
        };
        let dcid = ConnectionId::new(first.dcid()).unwrap_or_default();
        if let Some(h) = self.routes.get(&dcid) {
            return Some(DatagramEvent::Known(h));
        }
        let DecodedPacket::Protected(pd) = first else {
            return None;
        };
        if let Some(h) = self.reset_route(remote, datagram) {
            return Some(DatagramEvent::Known(h));
        }
        if pd.packet_type() == PacketType::OneRtt {
            return self.stateless_reset(now, local, remote, datagram);
        }
        if pd.packet_type() != PacketType::Initial {
            return None;
        }
        let server = self.server.clone()?;
        // RFC 9000 §14.1: "A server MUST discard an Initial packet that is carried in a UDP datagram with a
        // payload that is smaller than the smallest allowed maximum datagram size of 1200 bytes."
        if datagram.len() < MIN_INITIAL_DATAGRAM_SIZE {
            return None;
        }
        let t = self.since_epoch(now);
        // Token policy (RFC 9000 §8.1): Retry, INVALID_TOKEN close, or proceed; the validator also enforces
        // RFC 9000 §7.2: "This Destination Connection ID MUST be at least 8 bytes in length." for Initials
        // without a Retry token.
        let validated = match self.responder.as_ref()?.decide(datagram, &pd, remote, t) {
            InitialDecision::Proceed(v) => v,
            InitialDecision::SendRetry => return self.send_retry(t, local, remote, &pd),
            InitialDecision::Close { error, .. } => {
                let mut out = Vec::new();
                self.responder
                    .as_mut()?
                    .initial_close(&pd, remote, &error, t, &mut out)
                    .ok()?;
                return Some(response(local, remote, out));
            }
            InitialDecision::Drop { .. } => return None,
        };
        // RFC 9000 §5.2.2: "If a server refuses to accept a new connection, it SHOULD send an Initial packet
        // containing a CONNECTION_CLOSE frame with error code CONNECTION_REFUSED."
        if self.cids_of.len() >= self.limits.max_connections {
            tracing::debug!(%remote, "connection limit reached: refused");
            return self.refuse(local, remote, &pd, t, "too many connections");
        }
        if self.handshaking.len() >= self.limits.max_handshakes {
            if !validated.address_validated {
                tracing::debug!(%remote, "handshake limit reached: Retry");
                return self.send_retry(t, local, remote, &pd);
            }
            tracing::debug!(%remote, "handshake limit reached: refused");
            return self.refuse(local, remote, &pd, t, "too many handshakes in progress");
        }
        let new_token = self.issue_new_token(remote, t);
        let remote_cid = pd.scid().copied().unwrap_or_default();
        let local_cid = self.new_cid(self.config.cid_len);
        let seed = self.rng.fork_seed();
        let mut conn = Connection::server(
            &server,
            NewConnection {
                side: Side::Server,
                config: server.transport.clone(),
                seed,
                now,
                remote,
                local_cid,
                remote_cid,
                orig_dcid: validated.original_dcid,
                reset_key: self.reset_key.clone(),
                tokens: Tokens::server(dcid, validated.retry_scid, new_token),
                address_validated: validated.address_validated,
            },
        )
        .ok()?;
        if process_first {
            conn.handle_datagram(now, local, remote, ecn, datagram);
        }
        let handle = self.register(vec![local_cid, dcid]);
        // A connection whose first datagram is still to be processed is handshaking; one that ends its
        // handshake (or fails) reports HandshakeCompleted or Drained.
        if !process_first || conn.is_handshaking() {
            self.handshaking.insert(handle);
        }
        Some(DatagramEvent::NewConnection(handle, Box::new(conn)))
    }

    /// Answers the client Initial `pd` with CONNECTION_REFUSED (rate-limited like every stateless answer).
    fn refuse(
        &mut self,
        local: Option<SocketAddr>,
        remote: SocketAddr,
        pd: &crate::proto::packet::PartialDecode,
        t: Duration,
        reason: &'static str,
    ) -> Option<DatagramEvent> {
        let error = crate::proto::error::TransportError::new(
            crate::proto::error::TransportErrorCode::CONNECTION_REFUSED,
            reason,
        );
        let mut out = Vec::new();
        self.responder
            .as_mut()?
            .initial_close(pd, remote, &error, t, &mut out)
            .ok()?;
        Some(response(local, remote, out))
    }

    /// The connection a datagram from `remote` ending in one of its reset tokens belongs to (RFC 9000 §10.3.1).
    fn reset_route(&self, remote: SocketAddr, datagram: &[u8]) -> Option<ConnectionHandle> {
        let tail = crate::proto::packet::stateless_reset::trailing_token(datagram)?;
        let mut found = None;
        for (h, t) in self.reset_tokens.get(&remote)? {
            if t.ct_eq(tail) && found.is_none() {
                found = Some(*h);
            }
        }
        found
    }

    /// Server: require (or stop requiring) a Retry round trip from clients whose address no token validates
    /// (RFC 9000 §8.1.2), e.g. under load.
    pub fn set_require_retry(&mut self, require: bool) {
        if let Some(r) = self.responder.as_mut() {
            r.validator.set_require_retry(require);
        }
    }

    /// Client: how many NEW_TOKEN tokens are stored for later connections.
    pub fn stored_tokens(&self) -> usize {
        self.token_store.lock().map_or(0, |s| s.len())
    }

    fn nonce(&mut self) -> [u8; NONCE_LEN] {
        let mut n = [0u8; NONCE_LEN];
        self.rng.fill(&mut n);
        n
    }

    /// A NEW_TOKEN token for the client at `remote`, sent once its connection is established.
    fn issue_new_token(&mut self, remote: SocketAddr, t: Duration) -> Option<bytes::Bytes> {
        let nonce = self.nonce();
        let sealed = self
            .responder
            .as_ref()?
            .validator
            .issue_new_token(remote, nonce, t)
            .ok()?;
        Some(bytes::Bytes::copy_from_slice(sealed.as_slice()))
    }

    /// Answers a client Initial with a Retry (RFC 9000 §8.1.2) carrying a fresh token and a new, unpredictable
    /// Source Connection ID.
    fn send_retry(
        &mut self,
        t: Duration,
        local: Option<SocketAddr>,
        remote: SocketAddr,
        pd: &crate::proto::packet::PartialDecode,
    ) -> Option<DatagramEvent> {
        let random = RetryRandom {
            retry_scid: self.new_cid(self.config.cid_len),
            nonce: self.nonce(),
            unused: u8::try_from(self.rng.next_u64() & 0x0f).unwrap_or(0),
        };
        let mut out = Vec::new();
        self.responder
            .as_mut()?
            .retry(pd, remote, &random, t, &mut out)
            .ok()?;
        Some(response(local, remote, out))
    }

    /// Seconds since the endpoint's epoch, the time base of its tokens and rate limiter.
    fn since_epoch(&mut self, now: Instant) -> Duration {
        let epoch = *self.epoch.get_or_insert(now);
        now.saturating_duration_since(epoch)
    }

    /// Answers a short-header packet for a connection ID we do not know with a Stateless Reset (RFC 9000
    /// §10.3), rate-limited. Never called for a routed connection ID.
    fn stateless_reset(
        &mut self,
        now: Instant,
        local: Option<SocketAddr>,
        remote: SocketAddr,
        datagram: &[u8],
    ) -> Option<DatagramEvent> {
        let t = self.since_epoch(now);
        let mut random = vec![0u8; usize::from(MAX_RESET_LEN) + 2];
        self.rng.fill(&mut random);
        let mut out = Vec::new();
        self.responder
            .as_mut()?
            .stateless_reset(datagram, remote, &random, t, &mut out)
            .ok()?;
        let size = out.len();
        Some(DatagramEvent::Response(
            Transmit {
                path: PathId(0),
                local,
                remote,
                ecn: None,
                size,
                segment_size: None,
            },
            out,
        ))
    }

    fn version_negotiation(&mut self, remote: SocketAddr, datagram: &[u8]) -> Option<DatagramEvent> {
        self.server.as_ref()?;
        // RFC 9000 §6.1: only for a long header in a datagram large enough to be an Initial.
        if datagram.len() < MIN_INITIAL_DATAGRAM_SIZE {
            return None;
        }
        let mut d = crate::proto::coding::Decoder::new(datagram);
        let _first = d.u8().ok()?;
        let _version = d.u32().ok()?;
        let dcid = ConnectionId::decode_with_len(&mut d).ok()??;
        let scid = ConnectionId::decode_with_len(&mut d).ok()??;
        let mut out = Vec::new();
        let random = u8::try_from(self.rng.next_u64() & 0x7f).unwrap_or(0);
        if !VersionNegotiation::encode(&scid, &dcid, &[VERSION_1], random, &mut out) {
            return None;
        }
        let size = out.len();
        Some(DatagramEvent::Response(
            Transmit {
                path: PathId(0),
                local: None,
                remote,
                ecn: None,
                size,
                segment_size: None,
            },
            out,
        ))
    }

    /// A connection's notification.
    pub fn handle_event(&mut self, handle: ConnectionHandle, event: EndpointEvent) {
        match event {
            EndpointEvent::HandshakeCompleted => {
                self.handshaking.remove(&handle);
            }
            EndpointEvent::Drained => {
                self.handshaking.remove(&handle);
                let Some(gone) = self.cids_of.remove(&handle) else {
                    return;
                };
                for c in &gone.cids {
                    self.routes.remove(c);
                }
                // Only the addresses this connection announced tokens under: a drain costs what the connection
                // registered, not a walk over every peer address of the endpoint.
                for remote in &gone.reset_remotes {
                    if let Some(v) = self.reset_tokens.get_mut(remote) {
                        v.retain(|(h, _)| *h != handle);
                        if v.is_empty() {
                            self.reset_tokens.remove(remote);
                        }
                    }
                }
            }
            EndpointEvent::ResetToken { remote, token } => {
                if let Some(entry) = self.cids_of.get_mut(&handle) {
                    if !entry.reset_remotes.contains(&remote) {
                        entry.reset_remotes.push(remote);
                    }
                    let v = self.reset_tokens.entry(remote).or_default();
                    if v.iter().filter(|(h, _)| *h == handle).count() >= MAX_TOKENS_PER_CONNECTION {
                        if let Some(i) = v.iter().position(|(h, _)| *h == handle) {
                            v.remove(i);
                        }
                    }
                    v.push((handle, token));
                }
            }
            EndpointEvent::NewCid(cid) => {
                // A connection that already drained issues nothing more.
                if let Some(entry) = self.cids_of.get_mut(&handle) {
                    self.routes.insert(cid, handle);
                    if !entry.cids.contains(&cid) {
                        entry.cids.push(cid);
                    }
                }
            }
            EndpointEvent::RetiredCid(cid) => {
                if self.routes.get(&cid) == Some(handle) {
                    self.routes.remove(&cid);
                }
                if let Some(entry) = self.cids_of.get_mut(&handle) {
                    entry.cids.retain(|c| *c != cid);
                }
            }
        }
    }

    /// Number of connections with routes.
    pub fn connection_count(&self) -> usize {
        self.cids_of.len()
    }

    /// Number of connection IDs routed to a connection (bounded by the connections times the connection IDs
    /// each keeps issued: the peers' active_connection_id_limit per path).
    pub fn route_count(&self) -> usize {
        self.routes.len()
    }
}

/// What the endpoint registered for one connection: its routed connection IDs and the peer addresses under
/// which it announced reset tokens.
#[derive(Debug)]
struct ConnRoutes {
    cids: Vec<ConnectionId>,
    reset_remotes: Vec<SocketAddr>,
}

/// Hashes [`ConnectionHandle`]s, which the endpoint numbers itself (nobody else chooses them, so a
/// multiplicative hash is enough and cheaper than SipHash).
type HandleHash = std::hash::BuildHasherDefault<HandleHasher>;

/// See [`HandleHash`].
#[derive(Debug, Default, Clone, Copy)]
struct HandleHasher(u64);

impl std::hash::Hasher for HandleHasher {
    fn finish(&self) -> u64 {
        // The multiply leaves the entropy in the high bits; the table indexes with the low ones.
        self.0.rotate_left(26)
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = self.0.wrapping_add(n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A client connection's identity drawn by [`Endpoint::prepare_connect`], to be built by
/// [`PreparedConnect::build`] (without the endpoint) and registered with [`Endpoint::register_client`].
#[derive(Debug)]
pub struct PreparedConnect {
    local_cid: ConnectionId,
    initial_dcid: ConnectionId,
    seed: [u8; 32],
    reset_key: ResetKey,
    token_store: Arc<Mutex<LruTokenStore>>,
}

impl PreparedConnect {
    /// The connection ID to pass to [`Endpoint::register_client`].
    pub fn local_cid(&self) -> ConnectionId {
        self.local_cid
    }

    /// Builds the client connection (TLS set-up included).
    pub fn build(
        self,
        now: Instant,
        config: &ClientConfig,
        remote: SocketAddr,
        server_name: &str,
    ) -> Result<Connection, ConnectError> {
        let token = self
            .token_store
            .lock()
            .ok()
            .and_then(|mut s| s.take(server_name))
            .unwrap_or_default();
        Connection::client(
            config,
            server_name,
            NewConnection {
                side: Side::Client,
                config: config.transport.clone(),
                seed: self.seed,
                now,
                remote,
                local_cid: self.local_cid,
                remote_cid: self.initial_dcid,
                orig_dcid: self.initial_dcid,
                reset_key: self.reset_key,
                tokens: Tokens::client(token, self.token_store, server_name),
                address_validated: true,
            },
        )
    }
}

/// A stateless response datagram.
fn response(local: Option<SocketAddr>, remote: SocketAddr, out: Vec<u8>) -> DatagramEvent {
    let size = out.len();
    DatagramEvent::Response(
        Transmit {
            path: PathId(0),
            local,
            remote,
            ecn: None,
            size,
            segment_size: None,
        },
        out,
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

    use super::*;

    /// A short-header datagram to an unknown 8-byte connection ID that ends in `token` (what a Stateless
    /// Reset looks like, RFC 9000 §10.3).
    fn reset_like(token: &ResetToken) -> Vec<u8> {
        let mut d = vec![0x41u8; 60];
        d[1..9].copy_from_slice(&[0xee; 8]);
        let n = d.len();
        d[n - 16..].copy_from_slice(&token.0);
        d
    }

    #[allow(clippy::disallowed_methods)] // an origin for the endpoint's time
    fn routed_to(ep: &mut Endpoint, remote: SocketAddr, token: &ResetToken) -> Option<ConnectionHandle> {
        match ep.handle(Instant::now(), None, remote, None, &mut reset_like(token)) {
            Some(DatagramEvent::Known(h)) => Some(h),
            _ => None,
        }
    }

    #[test]
    fn drained_connection_forgets_exactly_its_routes_and_reset_tokens() {
        let mut ep = Endpoint::new(EndpointConfig { seed: 7, cid_len: 8 }, None);
        let a = ep.prepare_connect();
        let ha = ep.register_client(a.local_cid());
        let b = ep.prepare_connect();
        let hb = ep.register_client(b.local_cid());
        let r1: SocketAddr = "192.0.2.1:4433".parse().unwrap();
        let r2: SocketAddr = "192.0.2.2:4433".parse().unwrap();
        let (ta1, ta2, tb) = (ResetToken([1; 16]), ResetToken([2; 16]), ResetToken([3; 16]));
        // Connection a announced tokens under two peer addresses (it migrated), b under one of them.
        ep.handle_event(
            ha,
            EndpointEvent::ResetToken {
                remote: r1,
                token: ta1,
            },
        );
        ep.handle_event(
            ha,
            EndpointEvent::ResetToken {
                remote: r2,
                token: ta2,
            },
        );
        ep.handle_event(
            hb,
            EndpointEvent::ResetToken {
                remote: r1,
                token: tb,
            },
        );
        let extra = ConnectionId::new(&[9; 8]).unwrap();
        ep.handle_event(ha, EndpointEvent::NewCid(extra));
        assert_eq!(ep.route_count(), 3, "two handshake CIDs and a's extra one");
        assert_eq!(routed_to(&mut ep, r1, &ta1), Some(ha));
        assert_eq!(routed_to(&mut ep, r2, &ta2), Some(ha));
        assert_eq!(routed_to(&mut ep, r1, &tb), Some(hb));
        // RFC 9000 §10.3.1: a token is matched only for the peer address it was announced under.
        assert_eq!(routed_to(&mut ep, r2, &ta1), None);

        ep.handle_event(ha, EndpointEvent::Drained);
        assert_eq!(ep.connection_count(), 1);
        assert_eq!(ep.route_count(), 1, "only b's connection ID is left");
        assert_eq!(routed_to(&mut ep, r1, &ta1), None);
        assert_eq!(routed_to(&mut ep, r2, &ta2), None);
        assert_eq!(routed_to(&mut ep, r1, &tb), Some(hb));
        // r2 held only a's token: its entry is gone, r1 keeps b's.
        assert_eq!(ep.reset_tokens.len(), 1);
        assert_eq!(ep.reset_tokens.get(&r1).map(Vec::len), Some(1));
        // Events for a drained connection change nothing.
        ep.handle_event(
            ha,
            EndpointEvent::ResetToken {
                remote: r2,
                token: ta2,
            },
        );
        ep.handle_event(ha, EndpointEvent::NewCid(extra));
        assert_eq!(ep.route_count(), 1);
        assert_eq!(routed_to(&mut ep, r2, &ta2), None);
    }

    #[test]
    fn reset_tokens_per_connection_and_address_are_bounded() {
        let mut ep = Endpoint::new(EndpointConfig { seed: 8, cid_len: 8 }, None);
        let a = ep.prepare_connect();
        let ha = ep.register_client(a.local_cid());
        let r: SocketAddr = "192.0.2.1:4433".parse().unwrap();
        for i in 0..20u8 {
            ep.handle_event(
                ha,
                EndpointEvent::ResetToken {
                    remote: r,
                    token: ResetToken([i; 16]),
                },
            );
        }
        // The latest MAX_TOKENS_PER_CONNECTION (8) are kept: 12..=19.
        assert_eq!(
            ep.reset_tokens.get(&r).map(Vec::len),
            Some(MAX_TOKENS_PER_CONNECTION)
        );
        assert_eq!(routed_to(&mut ep, r, &ResetToken([11; 16])), None);
        assert_eq!(routed_to(&mut ep, r, &ResetToken([12; 16])), Some(ha));
        assert_eq!(routed_to(&mut ep, r, &ResetToken([19; 16])), Some(ha));
        assert_eq!(ep.cids_of.get(&ha).map(|c| c.reset_remotes.len()), Some(1));
    }
}
