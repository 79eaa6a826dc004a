//! Connection configuration (transport knobs, TLS configs per side) and the seeded random generator the
//! connection and endpoint draw from, so that a run with a fixed seed is reproducible.

use std::sync::Arc;
use std::time::Duration;

use crate::proto::ack_tracker::AckConfig;
use crate::proto::recovery::RecoveryConfig;
use crate::proto::streams::StreamsConfig;

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
    /// Congestion controller spec for `mpquic_cc::registry::build` (default `"cubic"`).
    pub congestion_controller: String,
    /// Scheduler spec for `mpquic_sched::registry::build` (default `"minrtt"`).
    pub scheduler: String,
    /// Initiate a key update after this many 1-RTT packets sealed with the current keys (`None`: only when the
    /// AEAD limits ask for it).
    pub key_update_interval: Option<u64>,
    /// Maximum UDP payload we send.
    pub max_udp_payload: u16,
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
            key_update_interval: None,
            max_udp_payload: 1200,
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

/// A small deterministic generator (SplitMix64): connection IDs, PATH_CHALLENGE data, padding choices.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Fills `out` with random bytes.
    pub fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            for (o, b) in chunk.iter_mut().zip(v) {
                *o = b;
            }
        }
    }
}
