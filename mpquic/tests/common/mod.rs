//! Helpers shared by the integration tests: a self-signed certificate, rustls configurations trusting it,
//! test data and hashes, and tracing set-up.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::Arc;

use mpquic::proto::crypto::{TlsOptions, client_config, server_config};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use sha2::{Digest, Sha256};

/// The ALPN both sides use.
pub const ALPN: &[u8] = b"mpquic-test";

pub fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
}

/// A self-signed certificate for "localhost".
pub struct Certs {
    pub cert: CertificateDer<'static>,
    pub key: PrivatePkcs8KeyDer<'static>,
}

pub fn certs() -> Certs {
    let c = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    Certs {
        cert: c.cert.der().clone(),
        key: PrivatePkcs8KeyDer::from(c.signing_key.serialize_der()),
    }
}

pub fn rustls_server_with(c: &Certs, opts: &TlsOptions) -> Arc<rustls::ServerConfig> {
    server_config(
        vec![c.cert.clone()],
        PrivateKeyDer::Pkcs8(c.key.clone_key()),
        opts,
    )
    .unwrap()
}

pub fn rustls_client_with(c: &Certs, opts: &TlsOptions) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(c.cert.clone()).unwrap();
    client_config(roots, opts).unwrap()
}

pub fn rustls_server(c: &Certs) -> Arc<rustls::ServerConfig> {
    rustls_server_with(c, &TlsOptions::with_alpn(ALPN))
}

pub fn rustls_client(c: &Certs) -> Arc<rustls::ClientConfig> {
    rustls_client_with(c, &TlsOptions::with_alpn(ALPN))
}

pub fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// `len` bytes of a pattern that differs per `seed`.
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ ((i >> 8) as u8))
        .collect()
}

pub fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}
