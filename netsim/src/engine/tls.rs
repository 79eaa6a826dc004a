//! TLS material for simulated connections: a fixed Ed25519 certificate for `localhost`.
//!
//! The key is a constant and Ed25519 signatures are deterministic, so the certificate, and with it the size
//! of every handshake packet, is the same in every run; an ECDSA certificate would vary in length by a byte
//! or two from run to run (DER-encoded signatures), which would shift packet timings and break byte-identical
//! results. The TLS handshake's own randoms (client random, key shares) change bytes but never sizes.

use std::sync::Arc;

use mpquic::proto::connection::{ClientConfig, ServerConfig, TransportConfig};
use mpquic::proto::crypto::{
    TlsOptions, client_config, client_config_with_provider, server_config, server_config_with_provider,
};
use rustls::RootCertStore;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

use super::null_cipher;
use crate::scenario::Crypto;

/// The server name every simulated server presents.
pub const SERVER_NAME: &str = "localhost";

/// ALPN protocol of simulated connections.
const ALPN: &[u8] = b"mpquic-sim";

/// PKCS #8 v1 prefix of an Ed25519 private key (RFC 8410 §7), followed by the 32-byte seed.
const ED25519_PKCS8_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

/// A fixed key seed (not a secret: the simulation has nothing to protect).
const KEY_SEED: [u8; 32] = *b"mpquic-netsim fixed ed25519 key!";

/// Why TLS configuration failed (never expected with the built-in material).
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// Certificate generation failed.
    #[error("certificate: {0}")]
    Cert(#[from] rcgen::Error),
    /// rustls refused the configuration.
    #[error("TLS configuration: {0}")]
    Rustls(#[from] rustls::Error),
    /// The null cipher's provider could not be built.
    #[error(transparent)]
    NullCipher(#[from] null_cipher::MissingSuite),
}

/// The TLS material of a run: the certificate and one rustls server configuration, shared by every
/// flow's server (its session cache alone is ≈ 25 KiB, and a real server has one); each flow's client gets
/// its own rustls configuration (see [`Material::configs`]).
#[derive(Debug, Clone)]
pub struct Material {
    cert: rustls::pki_types::CertificateDer<'static>,
    options: TlsOptions,
    /// The null cipher's provider, or none for mpquic's own (ring's TLS 1.3 suites).
    provider: Option<Arc<CryptoProvider>>,
    server: Arc<rustls::ServerConfig>,
}

impl Material {
    /// Builds the certificate and the server configuration, with real AES-128-GCM packet protection or the
    /// null cipher ([`null_cipher`], whose one suite has AES-128-GCM's code point: the suite the real
    /// handshake picks).
    pub fn new(crypto: Crypto) -> Result<Material, TlsError> {
        let mut pkcs8 = ED25519_PKCS8_PREFIX.to_vec();
        pkcs8.extend_from_slice(&KEY_SEED);
        let der = PrivatePkcs8KeyDer::from(pkcs8);
        let key_pair = rcgen::KeyPair::from_pkcs8_der_and_sign_algo(&der, &rcgen::PKCS_ED25519)?;
        let params = rcgen::CertificateParams::new(vec![SERVER_NAME.to_owned()])?;
        let cert = params.self_signed(&key_pair)?;
        let cert = cert.der().clone();
        let options = TlsOptions::with_alpn(ALPN);
        let provider = match crypto {
            Crypto::Aes128gcm => None,
            Crypto::Null => Some(null_cipher::provider()?),
        };
        let chain = vec![cert.clone()];
        let key = PrivateKeyDer::Pkcs8(der);
        let server = match &provider {
            None => server_config(chain, key, &options)?,
            Some(p) => server_config_with_provider(chain, key, &options, p.clone())?,
        };
        Ok(Material {
            cert,
            options,
            provider,
            server,
        })
    }

    /// Client and server configurations carrying `transport`. The client's rustls configuration is new
    /// for every call, so that no flow resumes another flow's TLS session (which would change its
    /// handshake); the server's is the shared one (a server only resumes sessions a client offers).
    pub fn configs(
        &self,
        transport: &TransportConfig,
    ) -> Result<(ClientConfig, Arc<ServerConfig>), TlsError> {
        let mut roots = RootCertStore::empty();
        roots.add(self.cert.clone())?;
        let client = match &self.provider {
            None => client_config(roots, &self.options)?,
            Some(p) => client_config_with_provider(roots, &self.options, p.clone())?,
        };
        Ok((
            ClientConfig {
                tls: client,
                transport: transport.clone(),
            },
            Arc::new(ServerConfig {
                tls: self.server.clone(),
                transport: transport.clone(),
            }),
        ))
    }
}

/// Client and server configurations carrying `transport`, from fresh [`Material`] with real packet
/// protection.
pub fn configs(transport: &TransportConfig) -> Result<(ClientConfig, Arc<ServerConfig>), TlsError> {
    Material::new(Crypto::Aes128gcm)?.configs(transport)
}
