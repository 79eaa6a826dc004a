//! Connection configuration (transport knobs, TLS configs per side) and the seeded random generator the
//! connection and endpoint draw from, so that a run with a fixed seed is reproducible.

use std::sync::Arc;
use std::time::Duration;

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::proto::ack_tracker::AckConfig;
use crate::proto::recovery::RecoveryConfig;
use crate::proto::streams::StreamsConfig;

use super::MtuDiscoveryConfig;

/// Default initial_max_path_id: path IDs 0 to 7 at the start (abandoned IDs are replaced with MAX_PATH_ID).
pub const DEFAULT_INITIAL_MAX_PATH_ID: u32 = 7;

/// Transport settings shared by both sides.
#[derive(Debug, Clone)]
pub struct TransportConfig {
    /// Our `max_idle_timeout` (zero: none); the effective timeout is the minimum of both sides' non-zero values.
    pub max_idle_timeout: Duration,
    /// Stream limits and flow-control windows.
    pub streams: StreamsConfig,
    /// Largest DATAGRAM frame we accept (`None`: datagrams disabled, RFC 9221 §3).
    pub max_datagram_frame_size: Option<u64>,
    /// Receive-side ACK policy.
    pub ack: AckConfig,
    /// Loss recovery settings of every path.
    pub recovery: RecoveryConfig,
    /// Congestion controller spec for `mpquic_cc::registry::build` (default `"cubic"`), used unless
    /// [`TransportConfig::congestion_controller_factory`] is set.
    pub congestion_controller: String,
    /// Scheduler spec for `mpquic_sched::registry::build` (default `"minrtt"`), used unless
    /// [`TransportConfig::scheduler_factory`] is set.
    pub scheduler: String,
    /// A user-supplied congestion controller: called once per connection.
    pub congestion_controller_factory: Option<CcFactory>,
    /// A user-supplied scheduler: called once per connection.
    pub scheduler_factory: Option<SchedFactory>,
    /// Initiate a key update after this many 1-RTT packets sealed with the current keys (`None`: only when the
    /// AEAD limits ask for it).
    pub key_update_interval: Option<u64>,
    /// Maximum UDP payload we send: on every path at first, and for good when [`TransportConfig::mtu_discovery`]
    /// is off. Default 1200 (RFC 9000 §14: every QUIC path carries it).
    pub max_udp_payload: u16,
    /// Path MTU discovery (RFC 8899 DPLPMTUD as RFC 9000 §14.3 applies it), run on each path on its own:
    /// `None` keeps every path at [`TransportConfig::max_udp_payload`]. Default on, with
    /// [`MtuDiscoveryConfig::default`] (search up to 1452 bytes, re-search every 600 s, black-hole fallback
    /// to 1200). Checked by [`MtuDiscoveryConfig::validate`] when a connection is created.
    pub mtu_discovery: Option<MtuDiscoveryConfig>,
    /// Send the disable_active_migration transport parameter (RFC 9000 §18.2): the peer must not migrate
    /// actively (NAT rebinding is still handled).
    pub disable_active_migration: bool,
    /// Server: addresses to offer in the preferred_address transport parameter (RFC 9000 §9.6), with a fresh
    /// connection ID. The server must receive on them (bind the socket to the wildcard address, or to each).
    pub preferred_address: Option<PreferredAddressConfig>,
    /// Which path carries the PATH_ACKs of each path (multipath only).
    pub ack_path: AckPathPolicy,
    /// Opportunistic retransmission of holes on a faster path and penalisation of the path that held them
    /// (multipath only; on by default, acts while two or more paths are usable).
    pub reinjection: super::ReinjectionConfig,
    /// Offer multipath (draft-ietf-quic-multipath-21) with this initial_max_path_id: the largest path ID we
    /// accept at the start (`None`: multipath off). Needs non-zero-length connection IDs. Default
    /// [`DEFAULT_INITIAL_MAX_PATH_ID`]: multipath is used whenever the peer offers it too; peers that do not
    /// (quinn, any RFC 9000 stack) ignore the parameter. Advertised as at most `limits.max_paths − 1`
    /// ([`ConnectionLimits::max_paths`]).
    pub initial_max_path_id: Option<u32>,
    /// Multipath: how many connection IDs we issue up front for each path ID that no path uses yet (1 to
    /// 2^64 − 1, 0 is taken as 1; default [`crate::proto::cid::DEFAULT_UNUSED_PATH_CIDS`] = 1, the minimum
    /// draft-ietf-quic-multipath-21 §3 asks for). A path ID in use gets the full number (4, within the peer's
    /// active_connection_id_limit) once a path uses it; `u64::MAX` issues the full number for every path ID at
    /// the handshake (the behaviour before this setting existed; each connection ID costs a reset-token HMAC, a
    /// frame and routing-table entries at both ends).
    pub unused_path_cids: u64,
    /// Client: validate the server's preferred address once the handshake is confirmed and move there if it
    /// answers (RFC 9000 §9.6.1, a SHOULD). Only an address of the family already in use is tried.
    pub use_preferred_address: bool,
    /// Bounds on what a peer (or the application) can make the connection buffer.
    pub limits: ConnectionLimits,
    /// Write a qlog (JSON-SEQ) of each connection into the writer this factory returns (`None`: no qlog).
    /// See [`crate::proto::qlog`]; `mpquic::runtime::qlog_directory` opens one file per connection.
    pub qlog: Option<crate::proto::qlog::QlogFactory>,
}

/// Where the acknowledgements of a path's packets travel (draft-ietf-quic-multipath-21 §5: PATH_ACK "may
/// travel on any path"; the draft advises keeping the choice stable).
///
/// The default is [`AckPathPolicy::SamePath`]. An independent draft-21 implementation, downloading from
/// mpquic over two paths, declared between 637 and 2,184 of its ACK-only packets on its second path lost
/// under `SamePath` (our PATH_ACKs for that path ride only in our packets on it, and a scheduler that
/// prefers the fast path sends few there), and none under [`AckPathPolicy::LowestRtt`]. The default stays
/// `SamePath` because
/// * those losses cost nothing: ACK-only packets are not in flight and count in no congestion window
///   (RFC 9002 §2: "Packets are considered in flight when they are ack-eliciting or contain a PADDING
///   frame"), so the peer sends its data exactly as before;
///   noq (draft-21) in the same situation declares none lost under either policy (`docs/reinjection.md`);
/// * `LowestRtt` makes the peer's RTT samples of a slow path its forward delay plus the fast path's return
///   delay, so the RTTs and delivery rates that the peer's schedulers and controllers read no longer describe
///   one path; with mpquic on both sides the scheduler inputs move (BLEST's λ, LLHD's per-path delivery rate,
///   STTF's window estimate).
///
/// Choose `LowestRtt` against a peer that counts lost ACK-only packets against a path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AckPathPolicy {
    /// On the path the data arrived on (the path being acknowledged), or the control path once it is
    /// abandoned or not validated. RTT samples then measure one path both ways.
    #[default]
    SamePath,
    /// On the validated path with the lowest smoothed RTT: acknowledgements return fastest, at the cost of RTT
    /// samples that mix two paths' one-way delays.
    LowestRtt,
}

/// Builds a user-supplied congestion controller for each connection ([`TransportConfig`]).
#[derive(Clone)]
pub struct CcFactory(pub Arc<dyn Fn() -> Box<dyn mpquic_cc::CongestionController> + Send + Sync>);

impl std::fmt::Debug for CcFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CcFactory(..)")
    }
}

/// Builds a user-supplied scheduler for each connection ([`TransportConfig`]).
#[derive(Clone)]
pub struct SchedFactory(pub Arc<dyn Fn() -> Box<dyn mpquic_sched::Scheduler> + Send + Sync>);

impl std::fmt::Debug for SchedFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SchedFactory(..)")
    }
}

/// The addresses a server offers in its preferred_address transport parameter (RFC 9000 §18.2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PreferredAddressConfig {
    /// The IPv4 address and port, if any.
    pub ipv4: Option<std::net::SocketAddrV4>,
    /// The IPv6 address and port, if any.
    pub ipv6: Option<std::net::SocketAddrV6>,
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            max_idle_timeout: Duration::from_secs(30),
            streams: StreamsConfig::default(),
            max_datagram_frame_size: Some(65_535),
            ack: AckConfig::default(),
            recovery: RecoveryConfig::default(),
            congestion_controller: "cubic".to_owned(),
            scheduler: "minrtt".to_owned(),
            congestion_controller_factory: None,
            scheduler_factory: None,
            key_update_interval: None,
            max_udp_payload: 1200,
            mtu_discovery: Some(MtuDiscoveryConfig::default()),
            disable_active_migration: false,
            preferred_address: None,
            initial_max_path_id: Some(DEFAULT_INITIAL_MAX_PATH_ID),
            unused_path_cids: crate::proto::cid::DEFAULT_UNUSED_PATH_CIDS,
            ack_path: AckPathPolicy::default(),
            reinjection: super::ReinjectionConfig::default(),
            use_preferred_address: true,
            limits: ConnectionLimits::default(),
            qlog: None,
        }
    }
}

/// Bounds on per-connection state that neither flow control nor a transport parameter already bounds, and
/// on the paths a connection keeps. (Stream data is bounded by the flow-control windows of [`StreamsConfig`]
/// and the send buffer, connection IDs by active_connection_id_limit, streams by `max_bidi_streams` /
/// `max_uni_streams`.) `docs/proto-connection.md` lists every limit, what happens beyond it and its test.
///
/// [`StreamsConfig`]: crate::proto::streams::StreamsConfig
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// CRYPTO data accepted beyond what TLS consumed, per encryption level; more is a connection error of
    /// type CRYPTO_BUFFER_EXCEEDED (RFC 9000 §7.5). Default 64 KiB (at least 4096).
    pub crypto_buffer: u64,
    /// Received DATAGRAM frames waiting for the application; beyond it the oldest is dropped (RFC 9221 §5:
    /// datagrams are unreliable). Default 1024.
    pub datagrams_in: usize,
    /// Datagrams the application queued that are not sent yet; beyond it the oldest is dropped. Default 1024.
    pub datagrams_out: usize,
    /// Path states the connection keeps at once, abandoned paths still in their 3-PTO linger
    /// (draft-ietf-quic-multipath-21 §3) included. The initial_max_path_id we advertise is at most
    /// `max_paths − 1`, and the MAX_PATH_ID we grant when a path is abandoned only grows while the paths in
    /// use plus the lingering ones stay within the cap (it grows again once a lingering state is deleted).
    /// A peer that uses a path ID above what we granted is a PROTOCOL_VIOLATION; [`open_path`] beyond it
    /// fails with `BlockedLocally`. Default 16 (at least 1).
    ///
    /// [`open_path`]: crate::proto::connection::Connection::open_path
    pub max_paths: usize,
    /// Path validations (RFC 9000 §8.2) we run at once: [`open_path`] beyond it fails with
    /// `ValidationsInProgress`, and a server that learns of one more new path keeps it but starts validating
    /// it only when a slot frees (until then the path answers PATH_CHALLENGE and acknowledges, within the 3×
    /// anti-amplification limit, and carries no data from us). draft-ietf-quic-multipath-21 §5 advises pacing
    /// concurrent validations. Default 8 (at least 1).
    ///
    /// [`open_path`]: crate::proto::connection::Connection::open_path
    pub path_validations: usize,
    /// PATH_CHALLENGE data values remembered per validation: each resend carries fresh data (RFC 9000
    /// §8.2.1), and a PATH_RESPONSE echoing any remembered one validates; older ones are forgotten.
    /// Default 4 (at least 1).
    pub path_challenges: usize,
    /// Redundant copies (the `redundant` scheduler) waiting to be sent; beyond it the oldest is dropped (the
    /// original is in flight anyway). Default 64 (at least 1).
    pub duplicates: usize,
    /// STOP_SENDING codes of streams whose sending part is already gone, kept so that the application's next
    /// write reports `Stopped`; beyond it the oldest is forgotten (that write reports `ClosedStream`).
    /// Default 1024.
    pub remembered_stops: usize,
    /// Received stream fragments buffered over all streams (RFC 9000 §21.6: out-of-order pieces with gaps
    /// commit memory beyond the flow-control window); beyond it the connection closes with
    /// PROTOCOL_VIOLATION. Default 65 536 (at least 1); see
    /// [`DEFAULT_MAX_RECV_FRAGMENTS`](crate::proto::streams::DEFAULT_MAX_RECV_FRAGMENTS).
    pub recv_fragments: usize,
}

/// RFC 9000 §7.5: "Implementations MUST support buffering at least 4096 bytes of data received in
/// out-of-order CRYPTO frames."
const MIN_CRYPTO_BUFFER: u64 = 4096;

impl ConnectionLimits {
    /// The CRYPTO buffer in force: the configured one, but never below RFC 9000 §7.5's 4096 bytes.
    pub fn crypto_buffer(&self) -> u64 {
        self.crypto_buffer.max(MIN_CRYPTO_BUFFER)
    }

    /// The path cap in force (at least path 0).
    pub fn max_paths(&self) -> usize {
        self.max_paths.max(1)
    }

    /// The initial_max_path_id we advertise given `configured`: never more path IDs than
    /// [`ConnectionLimits::max_paths`] allows.
    pub fn initial_max_path_id(&self, configured: Option<u32>) -> Option<u32> {
        let cap = u32::try_from(self.max_paths() - 1).unwrap_or(u32::MAX);
        configured.map(|m| m.min(cap))
    }

    /// The validation cap in force (at least 1).
    pub fn path_validations(&self) -> usize {
        self.path_validations.max(1)
    }

    /// PATH_CHALLENGE data remembered per validation (at least 1: the one just sent).
    pub fn path_challenges(&self) -> usize {
        self.path_challenges.max(1)
    }

    /// Queued redundant copies (at least 1).
    pub fn duplicates(&self) -> usize {
        self.duplicates.max(1)
    }
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            crypto_buffer: 64 * 1024,
            datagrams_in: 1024,
            datagrams_out: 1024,
            max_paths: 16,
            path_validations: 8,
            path_challenges: 4,
            duplicates: 64,
            remembered_stops: crate::proto::streams::DEFAULT_REMEMBERED_STOPS,
            recv_fragments: crate::proto::streams::DEFAULT_MAX_RECV_FRAGMENTS,
        }
    }
}

/// What a client connection needs.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// TLS configuration (see `crypto::client_config`).
    pub tls: Arc<rustls::ClientConfig>,
    /// Transport settings.
    pub transport: TransportConfig,
}

/// What a server needs to accept connections.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// TLS configuration (see `crypto::server_config`).
    pub tls: Arc<rustls::ServerConfig>,
    /// Transport settings.
    pub transport: TransportConfig,
}

/// The connection's and endpoint's random generator: ChaCha20 (a CSPRNG), so connection IDs, stateless reset
/// keys, token nonces and Retry source connection IDs are unpredictable to anyone who does not know the seed,
/// while a fixed seed keeps tests reproducible.
#[derive(Debug, Clone)]
pub struct Rng(ChaCha20Rng);

impl Rng {
    /// A generator from a 64-bit `seed` (expanded by ChaCha20; use [`Rng::from_seed`] or [`Rng::from_entropy`]
    /// for full-strength keys in production).
    pub fn new(seed: u64) -> Self {
        Rng(ChaCha20Rng::seed_from_u64(seed))
    }

    /// A generator from a 256-bit seed.
    pub fn from_seed(seed: [u8; 32]) -> Self {
        Rng(ChaCha20Rng::from_seed(seed))
    }

    /// A generator seeded from the operating system's entropy source.
    pub fn from_entropy() -> Self {
        Rng(ChaCha20Rng::from_os_rng())
    }

    /// A 256-bit seed for a child generator (one per connection).
    pub fn fork_seed(&mut self) -> [u8; 32] {
        let mut s = [0u8; 32];
        self.0.fill_bytes(&mut s);
        s
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Fills `out` with random bytes.
    pub fn fill(&mut self, out: &mut [u8]) {
        self.0.fill_bytes(out);
    }
}
