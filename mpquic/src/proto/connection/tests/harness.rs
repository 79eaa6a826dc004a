//! The connection tests' view of the shared pair harness ([`crate::proto::testing`]): addresses as strings,
//! and constructors and a handshake that fail the test instead of returning errors.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use crate::proto::connection::{ClientConfig, ServerConfig, TransportConfig};
use crate::proto::crypto::CipherSuite;
pub use crate::proto::testing::Pair;

pub const CLIENT: &str = "10.0.0.1:4433";
pub const SERVER: &str = "10.0.0.2:443";

pub fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

pub fn configs(suite: Option<CipherSuite>, transport: TransportConfig) -> (ClientConfig, ServerConfig) {
    crate::proto::testing::configs(suite, transport).unwrap()
}

impl Pair {
    /// A pair over fresh configurations with `transport` on both sides (and only `suite`, when given).
    pub fn new(suite: Option<CipherSuite>, transport: TransportConfig, seed: u64) -> Pair {
        let (cc, sc) = configs(suite, transport);
        Pair::from_configs(cc, sc, seed)
    }

    /// A pair whose client connects with `cc` to a server with `sc`.
    pub fn from_configs(cc: ClientConfig, sc: ServerConfig, seed: u64) -> Pair {
        #[allow(clippy::disallowed_methods)] // virtual time starts at an arbitrary instant
        let now = Instant::now();
        Pair::start(cc, Arc::new(sc), seed, now).unwrap()
    }

    /// Forgets both sides' connections and what is on the link, optionally gives the server endpoint a new
    /// configuration (same seed), and starts a new client connection with the pair's client configuration
    /// (its TLS session store, hence its tickets, carry over).
    pub fn reconnect(&mut self, server: Option<ServerConfig>, seed: u64) {
        self.try_reconnect(server.map(Arc::new), seed).unwrap();
    }

    /// Drives the handshake to completion on both sides; fails the test if it does not complete.
    pub fn handshake(&mut self) {
        assert!(self.try_handshake(), "handshake did not complete");
    }
}

// The harness's own constants are the addresses these strings name.
#[test]
fn addresses_match_the_shared_harness() {
    assert_eq!(addr(CLIENT), crate::proto::testing::CLIENT);
    assert_eq!(addr(SERVER), crate::proto::testing::SERVER);
}
