//! Certificates and TLS configurations shared by the loopback benchmarks (`bulk_loopback`, `handshake_rate`):
//! one self-signed certificate for `localhost` and TLS_AES_128_GCM_SHA256 only, for every stack, so that the
//! stacks compared do the same cryptographic work.

use std::error::Error;
use std::sync::Arc;

use mpquic::proto::crypto::{CipherSuite, TlsOptions, client_config, server_config};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

pub(crate) type Res<T> = Result<T, Box<dyn Error + Send + Sync>>;

/// The certificate, its key and the ALPN protocol both ends offer.
pub(crate) struct Certs {
    cert: CertificateDer<'static>,
    key: PrivatePkcs8KeyDer<'static>,
    alpn: &'static [u8],
}

/// A fresh self-signed certificate for `localhost`, with `alpn` for both ends.
pub(crate) fn certs(alpn: &'static [u8]) -> Res<Certs> {
    let c = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()])?;
    Ok(Certs {
        cert: c.cert.der().clone(),
        key: PrivatePkcs8KeyDer::from(c.signing_key.serialize_der()),
        alpn,
    })
}

fn tls_options(c: &Certs) -> TlsOptions {
    TlsOptions {
        alpn_protocols: vec![c.alpn.to_vec()],
        cipher_suites: vec![CipherSuite::Aes128Gcm],
        early_data: false,
    }
}

/// The server's rustls configuration.
pub(crate) fn rustls_server(c: &Certs) -> Res<Arc<rustls::ServerConfig>> {
    Ok(server_config(
        vec![c.cert.clone()],
        PrivateKeyDer::Pkcs8(c.key.clone_key()),
        &tls_options(c),
    )?)
}

/// The client's rustls configuration, trusting the self-signed certificate.
pub(crate) fn rustls_client(c: &Certs) -> Res<Arc<rustls::ClientConfig>> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(c.cert.clone())?;
    Ok(client_config(roots, &tls_options(c))?)
}
