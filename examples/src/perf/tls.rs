//! TLS configurations of the perf tool: the server's certificate (PEM files, or an in-memory self-signed one)
//! and the client's trust (system roots, a PEM file, or none with `--insecure`).

use std::path::Path;
use std::sync::Arc;

use mpquic::proto::crypto::{
    SelfSigned, TlsOptions, client_config, client_config_dangerous_skip_verification, server_config,
};
use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::PerfError;
use super::wire::ALPN;

fn options() -> TlsOptions {
    TlsOptions::with_alpn(ALPN)
}

/// The names of the self-signed certificate.
pub const SELF_SIGNED_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The server's TLS configuration: `cert_key` (PEM files) or a fresh self-signed certificate, which is
/// returned too so that an in-process client can trust it.
pub fn server(
    cert_key: Option<(&Path, &Path)>,
) -> Result<(Arc<rustls::ServerConfig>, Option<CertificateDer<'static>>), PerfError> {
    match cert_key {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_file_iter(cert)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| PerfError::Tls(format!("{}: {e}", cert.display())))?;
            let key = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| PerfError::Tls(format!("{}: {e}", key.display())))?;
            let config = server_config(chain, key, &options()).map_err(|e| PerfError::Tls(e.to_string()))?;
            Ok((config, None))
        }
        None => {
            let s = SelfSigned::generate(&SELF_SIGNED_NAMES).map_err(|e| PerfError::Tls(e.to_string()))?;
            let cert = s.cert.clone();
            let config =
                server_config(vec![s.cert], s.key, &options()).map_err(|e| PerfError::Tls(e.to_string()))?;
            Ok((config, Some(cert)))
        }
    }
}

/// Whom the client trusts.
#[derive(Debug)]
pub enum Trust<'a> {
    /// The operating system's root certificates.
    System,
    /// The certificates of a PEM file.
    PemFile(&'a Path),
    /// These certificates.
    Certs(Vec<CertificateDer<'static>>),
    /// Anyone (`--insecure`).
    Anyone,
}

/// The client's TLS configuration.
pub fn client(trust: Trust<'_>) -> Result<Arc<rustls::ClientConfig>, PerfError> {
    let tls = |e: rustls::Error| PerfError::Tls(e.to_string());
    let mut roots = RootCertStore::empty();
    match trust {
        Trust::Anyone => return client_config_dangerous_skip_verification(&options()).map_err(tls),
        Trust::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(PerfError::Tls(
                    "no system root certificates found: pass --ca FILE or --insecure".to_owned(),
                ));
            }
        }
        Trust::PemFile(path) => {
            let certs = CertificateDer::pem_file_iter(path)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| PerfError::Tls(format!("{}: {e}", path.display())))?;
            for c in certs {
                roots.add(c).map_err(tls)?;
            }
        }
        Trust::Certs(certs) => {
            for c in certs {
                roots.add(c).map_err(tls)?;
            }
        }
    }
    client_config(roots, &options()).map_err(tls)
}
