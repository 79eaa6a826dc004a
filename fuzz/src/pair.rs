//! The fuzz targets' use of the shared in-memory pair harness ([`mpquic::proto::testing`]): one set of
//! configurations per process, fixed seeds and a bounded number of datagrams per flush, so that a fuzz
//! input cannot make a step arbitrarily long.
//!
//! The TLS certificate and configurations are made once per process ([`configs`]); the handshake itself
//! uses rustls' randomness (ephemeral keys), so ciphertexts differ between runs while everything the fuzz
//! input drives (packet numbers, connection IDs, timing) is reproducible.

use std::sync::{Arc, OnceLock};

use mpquic::proto::connection::{ClientConfig, ServerConfig, TransportConfig};
use mpquic::proto::endpoint::{Endpoint, EndpointConfig};
pub use mpquic::proto::testing::{CLIENT, CLIENT2, Captured, Node, Pair, SERVER};

/// Most datagrams each side sends per flush.
pub const FLUSH_LIMIT: usize = 64;

/// Client and server configurations with a self-signed certificate, made once per process. `None` if the
/// certificate cannot be made (never expected).
pub fn configs() -> Option<&'static (ClientConfig, Arc<ServerConfig>)> {
    static CONFIGS: OnceLock<Option<(ClientConfig, Arc<ServerConfig>)>> = OnceLock::new();
    CONFIGS
        .get_or_init(|| {
            let (cc, sc) = mpquic::proto::testing::configs(None, TransportConfig::default()).ok()?;
            Some((cc, Arc::new(sc)))
        })
        .as_ref()
}

/// A server endpoint with the shared configuration.
pub fn server_endpoint(seed: u64) -> Option<Endpoint> {
    let (_, sc) = configs()?;
    Some(Endpoint::new(
        EndpointConfig { seed, cid_len: 8 },
        Some(sc.clone()),
    ))
}

/// A pair whose client has started connecting, at the targets' base instant, with the client's second
/// interface ([`CLIENT2`]) reachable. `None` if the configurations cannot be made.
pub fn new_pair(seed: u64) -> Option<Pair> {
    let (cc, sc) = configs()?;
    let mut p = Pair::start(cc.clone(), sc.clone(), seed, crate::base_instant()).ok()?;
    p.client_extra_addrs.push(CLIENT2);
    p.flush_limit = Some(FLUSH_LIMIT);
    Some(p)
}
