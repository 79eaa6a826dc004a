//! The TLS 1.3 handshake for QUIC (RFC 9001 §4) over `rustls::quic`, and the configuration helpers.
//!
//! [`TlsSession`] is a sans-IO wrapper: the connection feeds it the CRYPTO-frame bytes it receives
//! ([`TlsSession::read_handshake`]), drains the bytes to send ([`TlsSession::write_handshake`]) and installs
//! the keys each [`KeyChange`] hands out. Transport parameters travel as opaque bytes: the codec lives in the
//! transport-parameters module.
//!
//! 0-RTT (RFC 9001 §4.6): a client offers early data when its rustls configuration has
//! `enable_early_data` and its session store holds a ticket that allows it; the 0-RTT keys are then
//! [`TlsSession::zero_rtt_keys`] from the start, and rustls reports the transport parameters remembered with
//! the ticket until the server's new ones arrive. A server accepts 0-RTT when its rustls configuration has
//! `max_early_data_size = 0xffffffff` (RFC 9001 §4.6.1; rustls refuses any other non-zero value for QUIC) and
//! the ticket allows it; it then gets the 0-RTT keys after reading the ClientHello.
//!
//! Configuration: clients verify the server's certificate against the roots the caller supplies (no bundled
//! root store); [`client_config_dangerous_skip_verification`] turns that off for tests and labs. Only TLS 1.3
//! and its three QUIC suites are offered, optionally restricted to a subset ([`TlsOptions::cipher_suites`]).

use std::fmt;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::quic::Version;
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, ServerConfig, SignatureScheme};

use super::{Keys, OneRttKeys};
use crate::proto::error::{TransportError, TransportErrorCode};

/// An encryption level (RFC 9001 §4): which keys protect a packet. TLS never writes CRYPTO data at the 0-RTT
/// level (RFC 9000 §12.4: no CRYPTO frame in 0-RTT packets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Initial packets.
    Initial,
    /// 0-RTT packets (client to server only).
    ZeroRtt,
    /// Handshake packets.
    Handshake,
    /// 1-RTT packets.
    OneRtt,
}

/// A TLS 1.3 cipher suite usable with QUIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CipherSuite {
    /// TLS_AES_128_GCM_SHA256.
    Aes128Gcm,
    /// TLS_AES_256_GCM_SHA384.
    Aes256Gcm,
    /// TLS_CHACHA20_POLY1305_SHA256.
    ChaCha20Poly1305,
}

impl CipherSuite {
    /// Every suite, in the default order of preference.
    pub const ALL: [CipherSuite; 3] = [
        CipherSuite::Aes128Gcm,
        CipherSuite::Aes256Gcm,
        CipherSuite::ChaCha20Poly1305,
    ];

    fn rustls(self) -> rustls::SupportedCipherSuite {
        use rustls::crypto::ring::cipher_suite as cs;
        match self {
            CipherSuite::Aes128Gcm => cs::TLS13_AES_128_GCM_SHA256,
            CipherSuite::Aes256Gcm => cs::TLS13_AES_256_GCM_SHA384,
            CipherSuite::ChaCha20Poly1305 => cs::TLS13_CHACHA20_POLY1305_SHA256,
        }
    }

    fn from_rustls(suite: rustls::CipherSuite) -> Option<CipherSuite> {
        CipherSuite::ALL.into_iter().find(|s| s.rustls().suite() == suite)
    }
}

/// Options shared by client and server configurations.
#[derive(Debug, Clone)]
pub struct TlsOptions {
    /// ALPN protocols, most preferred first. RFC 9001 §8.1 requires an application protocol to be agreed.
    pub alpn_protocols: Vec<Vec<u8>>,
    /// The suites to offer or accept (empty means all of [`CipherSuite::ALL`]).
    pub cipher_suites: Vec<CipherSuite>,
    /// 0-RTT (RFC 9001 §4.6): a client offers early data when it resumes a session whose ticket allows it; a
    /// server issues tickets that allow it (max_early_data_size 0xffffffff, RFC 9001 §4.6.1) and accepts
    /// it. Off by default: 0-RTT data can be replayed (RFC 9001 §9.2), so the application must opt in.
    pub early_data: bool,
}

impl TlsOptions {
    /// Options offering the single ALPN protocol `alpn` and every suite.
    pub fn with_alpn(alpn: &[u8]) -> Self {
        TlsOptions {
            alpn_protocols: vec![alpn.to_vec()],
            cipher_suites: Vec::new(),
            early_data: false,
        }
    }

    /// The ring provider restricted to TLS 1.3 and the chosen suites.
    fn provider(&self) -> Arc<CryptoProvider> {
        let suites: &[CipherSuite] = if self.cipher_suites.is_empty() {
            &CipherSuite::ALL
        } else {
            &self.cipher_suites
        };
        Arc::new(CryptoProvider {
            cipher_suites: suites.iter().map(|s| s.rustls()).collect(),
            ..rustls::crypto::ring::default_provider()
        })
    }
}

/// A client configuration that verifies the server's certificate chain against `roots` (and its name against
/// the name given to [`TlsSession::client`]).
pub fn client_config(roots: RootCertStore, options: &TlsOptions) -> Result<Arc<ClientConfig>, rustls::Error> {
    client_config_with_provider(roots, options, options.provider())
}

/// [`client_config`] over the caller's rustls `provider` instead of ring's (`options.cipher_suites` is then
/// ignored: the provider's suites are offered), for a simulator or test that replaces the packet protection.
pub fn client_config_with_provider(
    roots: RootCertStore,
    options: &TlsOptions,
    provider: Arc<CryptoProvider>,
) -> Result<Arc<ClientConfig>, rustls::Error> {
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols.clone_from(&options.alpn_protocols);
    config.enable_early_data = options.early_data;
    Ok(Arc::new(config))
}

/// A client configuration that accepts **any** server certificate, for tests and labs only: the handshake
/// signature is still checked, so the server must hold the key of the certificate it presents, but nothing
/// ties that certificate to a trusted root or to the server name.
pub fn client_config_dangerous_skip_verification(
    options: &TlsOptions,
) -> Result<Arc<ClientConfig>, rustls::Error> {
    let provider = options.provider();
    let verifier = Arc::new(SkipServerVerification {
        provider: provider.clone(),
    });
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.alpn_protocols.clone_from(&options.alpn_protocols);
    config.enable_early_data = options.early_data;
    Ok(Arc::new(config))
}

/// A server configuration presenting `cert_chain` (end entity first) with its private `key`.
pub fn server_config(
    cert_chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    options: &TlsOptions,
) -> Result<Arc<ServerConfig>, rustls::Error> {
    server_config_with_provider(cert_chain, key, options, options.provider())
}

/// [`server_config`] over the caller's rustls `provider` (see [`client_config_with_provider`]).
pub fn server_config_with_provider(
    cert_chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    options: &TlsOptions,
    provider: Arc<CryptoProvider>,
) -> Result<Arc<ServerConfig>, rustls::Error> {
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_no_client_auth()
        .with_single_cert(cert_chain, key)?;
    config.alpn_protocols.clone_from(&options.alpn_protocols);
    // RFC 9001 §4.6.1: "Servers MUST NOT send the early_data extension with a max_early_data_size field set to
    // any value other than 0xffffffff." A server that does not accept 0-RTT sends none (size 0).
    config.max_early_data_size = if options.early_data { u32::MAX } else { 0 };
    Ok(Arc::new(config))
}

/// A certificate verifier that trusts every certificate but still checks handshake signatures.
#[derive(Debug)]
struct SkipServerVerification {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for SkipServerVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        // QUIC is TLS 1.3 only (RFC 9001 §4.2).
        Err(rustls::Error::PeerIncompatible(
            rustls::PeerIncompatible::Tls13RequiredForQuic,
        ))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A self-signed certificate and its key, for examples and tests.
#[derive(Debug)]
pub struct SelfSigned {
    /// The DER certificate.
    pub cert: CertificateDer<'static>,
    /// The PKCS #8 private key.
    pub key: PrivateKeyDer<'static>,
}

impl SelfSigned {
    /// A fresh self-signed certificate valid for `names` (DNS names or IP addresses).
    #[cfg(any(test, feature = "self-signed"))]
    pub fn generate(names: &[&str]) -> Result<SelfSigned, rcgen::Error> {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let certified = rcgen::generate_simple_self_signed(names)?;
        let key = rustls::pki_types::PrivatePkcs8KeyDer::from(certified.signing_key.serialize_der());
        Ok(SelfSigned {
            cert: certified.cert.der().clone(),
            key: PrivateKeyDer::Pkcs8(key),
        })
    }

    /// A root store trusting only this certificate, for a client of a server that presents it.
    pub fn root_store(&self) -> Result<RootCertStore, rustls::Error> {
        let mut roots = RootCertStore::empty();
        roots.add(self.cert.clone())?;
        Ok(roots)
    }
}

/// Keys the handshake makes available; install them before writing or reading more handshake data.
pub enum KeyChange {
    /// Keys of the Handshake level.
    Handshake(Keys),
    /// The 1-RTT keys, with key update (boxed: they are large and handed over once).
    OneRtt(Box<OneRttKeys>),
}

impl fmt::Debug for KeyChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyChange::Handshake(_) => f.write_str("KeyChange::Handshake"),
            KeyChange::OneRtt(_) => f.write_str("KeyChange::OneRtt"),
        }
    }
}

/// The handshake failed: the transport error to close with (a CRYPTO_ERROR carrying the TLS alert, RFC 9001
/// §4.8) and rustls' own description.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{error} ({tls})")]
pub struct HandshakeError {
    /// What CONNECTION_CLOSE reports.
    pub error: TransportError,
    /// The TLS-level cause.
    pub tls: rustls::Error,
}

/// A TLS 1.3 session carried in CRYPTO frames.
pub struct TlsSession {
    conn: rustls::quic::Connection,
    write_level: Level,
}

impl TlsSession {
    /// A client session towards `server_name` (used for SNI and certificate verification), sending the
    /// encoded transport parameters `transport_params`.
    pub fn client(
        config: Arc<ClientConfig>,
        server_name: &str,
        transport_params: Vec<u8>,
    ) -> Result<TlsSession, rustls::Error> {
        let name = ServerName::try_from(server_name.to_owned())
            .map_err(|_| rustls::Error::General("invalid server name".into()))?;
        let conn = rustls::quic::ClientConnection::new(config, Version::V1, name, transport_params)?;
        Ok(TlsSession {
            conn: conn.into(),
            write_level: Level::Initial,
        })
    }

    /// A server session sending the encoded transport parameters `transport_params`.
    pub fn server(config: Arc<ServerConfig>, transport_params: Vec<u8>) -> Result<TlsSession, rustls::Error> {
        let conn = rustls::quic::ServerConnection::new(config, Version::V1, transport_params)?;
        Ok(TlsSession {
            conn: conn.into(),
            write_level: Level::Initial,
        })
    }

    /// Whether this is the client side.
    pub fn is_client(&self) -> bool {
        matches!(self.conn, rustls::quic::Connection::Client(_))
    }

    /// Feeds handshake bytes received in CRYPTO frames, in order.
    pub fn read_handshake(&mut self, data: &[u8]) -> Result<(), HandshakeError> {
        self.conn.read_hs(data).map_err(|tls| {
            // RFC 9001 §4.8: "A TLS alert is converted into a QUIC connection error. The AlertDescription value
            // is added to 0x0100 to produce a QUIC error code from the range reserved for CRYPTO_ERROR".
            let error = match self.conn.alert() {
                Some(alert) => TransportError::new(TransportErrorCode::crypto(u8::from(alert)), "TLS alert"),
                None => TransportError::protocol_violation("TLS handshake failed"),
            };
            HandshakeError { error, tls }
        })
    }

    /// The level at which the bytes of the next [`write_handshake`](Self::write_handshake) call go.
    pub fn write_level(&self) -> Level {
        self.write_level
    }

    /// Appends the handshake bytes to send to `buf`; they belong to [`write_level`](Self::write_level) as it
    /// was before the call. A returned [`KeyChange`] moves the write level up: call again for the bytes of
    /// the new level.
    pub fn write_handshake(&mut self, buf: &mut Vec<u8>) -> Option<KeyChange> {
        match self.conn.write_hs(buf)? {
            rustls::quic::KeyChange::Handshake { keys } => {
                self.write_level = Level::Handshake;
                Some(KeyChange::Handshake(Keys::from_rustls(keys)))
            }
            rustls::quic::KeyChange::OneRtt { keys, next } => {
                self.write_level = Level::OneRtt;
                Some(KeyChange::OneRtt(Box::new(OneRttKeys::new(keys, next))))
            }
        }
    }

    /// Whether the handshake is still in progress (RFC 9001 §4.1.1: it is complete once the Finished
    /// messages are exchanged).
    pub fn is_handshaking(&self) -> bool {
        self.conn.is_handshaking()
    }

    /// The peer's encoded transport parameters, once received.
    pub fn peer_transport_params(&self) -> Option<&[u8]> {
        self.conn.quic_transport_parameters()
    }

    /// The negotiated ALPN protocol.
    pub fn alpn_protocol(&self) -> Option<&[u8]> {
        self.conn.alpn_protocol()
    }

    /// The negotiated cipher suite.
    pub fn cipher_suite(&self) -> Option<CipherSuite> {
        self.conn
            .negotiated_cipher_suite()
            .and_then(|s| CipherSuite::from_rustls(s.suite()))
    }

    /// The server name the client asked for (SNI), on the server side.
    pub fn server_name(&self) -> Option<&str> {
        match &self.conn {
            rustls::quic::Connection::Server(s) => s.server_name(),
            rustls::quic::Connection::Client(_) => None,
        }
    }

    /// The 0-RTT keys, if any (RFC 9001 §4.6): a client's when it offers early data, a server's once it
    /// accepted early data in the ClientHello.
    pub fn zero_rtt_keys(&self) -> Option<super::DirectionalKeys> {
        self.conn.zero_rtt_keys().map(super::DirectionalKeys::from_rustls)
    }

    /// Client: whether the server accepted our early data (known once EncryptedExtensions is read).
    pub fn is_early_data_accepted(&self) -> bool {
        match &self.conn {
            rustls::quic::Connection::Client(c) => c.is_early_data_accepted(),
            rustls::quic::Connection::Server(_) => false,
        }
    }

    /// Whether the handshake resumed a session (`None` until the ServerHello is processed).
    pub fn is_resumed(&self) -> Option<bool> {
        self.conn
            .handshake_kind()
            .map(|k| k == rustls::HandshakeKind::Resumed)
    }

    /// The peer's certificate chain, once received.
    pub fn peer_certificates(&self) -> Option<&[CertificateDer<'static>]> {
        self.conn.peer_certificates()
    }
}

impl fmt::Debug for TlsSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsSession")
            .field("client", &self.is_client())
            .field("write_level", &self.write_level)
            .field("handshaking", &self.is_handshaking())
            .finish_non_exhaustive()
    }
}
