//! TLS configurations of the perf tool: the server's certificate (PEM files, or an in-memory self-signed one)
//! and the client's trust (system roots, a PEM file, or none with `--insecure`).
//!
//! Files are loaded and checked when the tool starts, so that a bad file is reported by name before any
//! connection: "no certificate found in FILE", "FILE: bad encoding at certificate 2: …", "no private key
//! found in FILE", a key that does not match the certificate. A handshake that fails on the server's
//! certificate is explained in words by [`explain_handshake_failure`].

use std::path::Path;
use std::sync::Arc;

use mpquic::proto::crypto::{
    SelfSigned, TlsOptions, client_config, client_config_dangerous_skip_verification, server_config,
};
use mpquic::runtime::ConnectionError;
use rustls::RootCertStore;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::ParsedCertificate;

use super::PerfError;
use super::wire::ALPN;

fn options() -> TlsOptions {
    TlsOptions::with_alpn(ALPN)
}

/// [`server`] for another application protocol (`mpquic-tunnel` shares the certificate handling).
pub fn server_with_alpn(
    cert_key: Option<(&Path, &Path)>,
    alpn: &[u8],
) -> Result<(Arc<rustls::ServerConfig>, Option<CertificateDer<'static>>), PerfError> {
    server_for(cert_key, &TlsOptions::with_alpn(alpn))
}

/// [`client`] for another application protocol.
pub fn client_with_alpn(trust: Trust<'_>, alpn: &[u8]) -> Result<Arc<rustls::ClientConfig>, PerfError> {
    client_for(trust, &TlsOptions::with_alpn(alpn))
}

/// The names of the self-signed certificate.
pub const SELF_SIGNED_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// A PEM error of `file`: unreadable, or what rustls-pki-types found wrong with its encoding.
fn pem_error(option: &str, file: &Path, e: pem::Error) -> PerfError {
    match e {
        pem::Error::Io(io) => PerfError::File(format!("{option} {}: cannot read: {io}", file.display())),
        other => PerfError::File(format!("{}: bad encoding ({option}): {other}", file.display())),
    }
}

/// Reads every certificate of the PEM file given to `option` and checks that each one parses as an X.509
/// certificate; at least one is required.
pub fn load_certificates(option: &str, file: &Path) -> Result<Vec<CertificateDer<'static>>, PerfError> {
    let certs = CertificateDer::pem_file_iter(file)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| pem_error(option, file, e))?;
    if certs.is_empty() {
        return Err(PerfError::File(format!(
            "{option}: no certificate found in {} (expected PEM \"-----BEGIN CERTIFICATE-----\" sections)",
            file.display()
        )));
    }
    for (i, cert) in certs.iter().enumerate() {
        ParsedCertificate::try_from(cert).map_err(|e| {
            // rustls words this for a peer's certificate ("invalid peer certificate: …"); keep the cause.
            let cause = match e {
                rustls::Error::InvalidCertificate(c) => format!("not a valid X.509 certificate ({c})"),
                other => other.to_string(),
            };
            PerfError::File(format!(
                "{}: bad encoding at certificate {} of {} ({option}): {cause}",
                file.display(),
                i + 1,
                certs.len()
            ))
        })?;
    }
    Ok(certs)
}

/// Reads the private key of the PEM file given to `--key`.
pub fn load_private_key(file: &Path) -> Result<PrivateKeyDer<'static>, PerfError> {
    PrivateKeyDer::from_pem_file(file).map_err(|e| match e {
        pem::Error::NoItemsFound => PerfError::File(format!(
            "--key: no private key found in {} (expected a PEM PKCS#8, PKCS#1 or SEC1 key)",
            file.display()
        )),
        other => pem_error("--key", file, other),
    })
}

/// The server's TLS configuration: `cert_key` (PEM files) or a fresh self-signed certificate, which is
/// returned too so that an in-process client can trust it.
pub fn server(
    cert_key: Option<(&Path, &Path)>,
) -> Result<(Arc<rustls::ServerConfig>, Option<CertificateDer<'static>>), PerfError> {
    server_for(cert_key, &options())
}

fn server_for(
    cert_key: Option<(&Path, &Path)>,
    options: &TlsOptions,
) -> Result<(Arc<rustls::ServerConfig>, Option<CertificateDer<'static>>), PerfError> {
    match cert_key {
        Some((cert, key)) => {
            let chain = load_certificates("--cert", cert)?;
            let private = load_private_key(key)?;
            let config = server_config(chain, private, options).map_err(|e| match e {
                rustls::Error::InconsistentKeys(_) => PerfError::File(format!(
                    "--key {} does not match the certificate of --cert {}",
                    key.display(),
                    cert.display()
                )),
                other => PerfError::File(format!(
                    "--cert {} / --key {}: {other}",
                    cert.display(),
                    key.display()
                )),
            })?;
            Ok((config, None))
        }
        None => {
            let s = SelfSigned::generate(&SELF_SIGNED_NAMES).map_err(|e| PerfError::Tls(e.to_string()))?;
            let cert = s.cert.clone();
            let config =
                server_config(vec![s.cert], s.key, options).map_err(|e| PerfError::Tls(e.to_string()))?;
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
    client_for(trust, &options())
}

fn client_for(trust: Trust<'_>, options: &TlsOptions) -> Result<Arc<rustls::ClientConfig>, PerfError> {
    let tls = |e: rustls::Error| PerfError::Tls(e.to_string());
    let mut roots = RootCertStore::empty();
    match trust {
        Trust::Anyone => return client_config_dangerous_skip_verification(options).map_err(tls),
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
            let certs = load_certificates("--ca", path)?;
            let count = certs.len();
            for (i, c) in certs.into_iter().enumerate() {
                roots.add(c).map_err(|e| {
                    PerfError::File(format!(
                        "{}: certificate {} of {count} cannot be a trust anchor (--ca): {e}",
                        path.display(),
                        i + 1
                    ))
                })?;
            }
        }
        Trust::Certs(certs) => {
            for c in certs {
                roots.add(c).map_err(tls)?;
            }
        }
    }
    client_config(roots, options).map_err(tls)
}

/// The TLS alert a handshake failure carries, and whether our side raised it: QUIC closes a failed
/// handshake with CRYPTO_ERROR, 0x0100 + the alert (RFC 9001 §4.8).
fn crypto_alert(e: &ConnectionError) -> Option<(u8, bool)> {
    let (code, ours) = match e {
        ConnectionError::TransportError(t) => (t.code.0, true),
        ConnectionError::ConnectionClosed { code, .. } => (code.0, false),
        _ => return None,
    };
    let alert = code.checked_sub(0x100).filter(|a| *a <= 0xff)?;
    Some((u8::try_from(alert).ok()?, ours))
}

/// The name of a TLS alert (RFC 8446 §6).
fn alert_name(alert: u8) -> &'static str {
    match alert {
        10 => "unexpected_message",
        20 => "bad_record_mac",
        40 => "handshake_failure",
        42 => "bad_certificate",
        43 => "unsupported_certificate",
        44 => "certificate_revoked",
        45 => "certificate_expired",
        46 => "certificate_unknown",
        47 => "illegal_parameter",
        48 => "unknown_ca",
        49 => "access_denied",
        50 => "decode_error",
        51 => "decrypt_error",
        70 => "protocol_version",
        80 => "internal_error",
        109 => "missing_extension",
        110 => "unsupported_extension",
        112 => "unrecognized_name",
        116 => "certificate_required",
        120 => "no_application_protocol",
        _ => "unknown alert",
    }
}

/// A handshake failure in words, for the client: which check on the server's certificate failed and what
/// to do about it, from the TLS alert the connection closed with (rustls raises `unknown_ca` for an
/// unknown issuer, `bad_certificate` for a name mismatch or a malformed certificate, `certificate_expired`
/// for one outside its validity, `decrypt_error` for a bad signature). `None` when the failure is not a TLS
/// alert.
pub fn explain_handshake_failure(e: &ConnectionError) -> Option<String> {
    let (alert, ours) = crypto_alert(e)?;
    let name = alert_name(alert);
    if !ours {
        return Some(match alert {
            120 => "the server refused the handshake: no common application protocol (ALPN); is it an \
                    mpquic-perf server?"
                .to_owned(),
            _ => format!("the server ended the handshake with TLS alert {name} ({alert})"),
        });
    }
    let fix = "pass --ca FILE or --insecure";
    Some(match alert {
        48 => format!("server certificate not trusted: unknown issuer; {fix}"),
        42 => format!(
            "server certificate rejected: bad certificate (not valid for the server name, or malformed); check \
             --server-name, or {fix}"
        ),
        45 => format!("server certificate rejected: expired or not yet valid; {fix}"),
        44 => format!("server certificate rejected: revoked; {fix}"),
        43 => format!("server certificate rejected: not valid for a TLS server (key usage); {fix}"),
        51 => format!("server certificate rejected: bad signature; {fix}"),
        46 | 50 => format!("server certificate rejected: {name}; {fix}"),
        120 => "the server does not speak mpquic-perf: no common application protocol (ALPN)".to_owned(),
        _ => format!("TLS handshake failed: alert {name} ({alert})"),
    })
}

#[cfg(test)]
mod tests {
    use mpquic::proto::error::{TransportError, TransportErrorCode};

    use super::*;

    #[test]
    fn alerts_are_explained_in_words() {
        // RFC 9001 §4.8: unknown_ca (48) travels as CRYPTO_ERROR 0x0100 + 48 = 0x130.
        let local =
            ConnectionError::TransportError(TransportError::new(TransportErrorCode(0x130), "TLS alert"));
        assert_eq!(
            explain_handshake_failure(&local).unwrap(),
            "server certificate not trusted: unknown issuer; pass --ca FILE or --insecure"
        );
        let name =
            ConnectionError::TransportError(TransportError::new(TransportErrorCode(0x12a), "TLS alert"));
        assert!(
            explain_handshake_failure(&name)
                .unwrap()
                .contains("--server-name")
        );
        let peer = ConnectionError::ConnectionClosed {
            code: TransportErrorCode(0x178),
            frame_type: 0,
            reason: bytes::Bytes::new(),
        };
        assert!(explain_handshake_failure(&peer).unwrap().contains("ALPN"));
        let other = ConnectionError::TransportError(TransportError::protocol_violation("x"));
        assert_eq!(explain_handshake_failure(&other), None);
        assert_eq!(explain_handshake_failure(&ConnectionError::TimedOut), None);
    }
}
