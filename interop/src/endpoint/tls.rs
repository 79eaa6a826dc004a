//! TLS for every built-in stack, built once with mpquic's helpers (TLS 1.3, ring, ALPN `hq-interop`): the
//! server loads `$CERTS/cert.pem` and `$CERTS/priv.key`; the client trusts `$CERTS/cert.pem` when it exists and
//! skips verification otherwise (as quic-interop-runner clients do). In chacha20 only
//! TLS_CHACHA20_POLY1305_SHA256 is offered and accepted; noq and quinn still get AES-128-GCM for their Initial
//! packets (RFC 9001 §5.2 fixes that suite for Initial protection) through `with_initial`.

use std::sync::Arc;

use mpquic::proto::crypto::{
    CipherSuite, TlsOptions, client_config, client_config_dangerous_skip_verification, server_config,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::cases::TestCase;
use crate::env::EndpointEnv;
use crate::error::InteropError;
use crate::hq::ALPN;

fn tls_err(e: impl std::fmt::Display) -> InteropError {
    InteropError::Tls(e.to_string())
}

/// The TLS options of a test case.
pub fn options(case: TestCase) -> TlsOptions {
    let mut o = TlsOptions::with_alpn(ALPN);
    if case.chacha_only() {
        o.cipher_suites = vec![CipherSuite::ChaCha20Poly1305];
    }
    o
}

fn with_keylog<T>(env: &EndpointEnv, cfg: Arc<T>, set: impl FnOnce(&mut T)) -> Arc<T>
where
    T: Clone,
{
    if !env.keylog {
        return cfg;
    }
    let mut c = Arc::unwrap_or_clone(cfg);
    set(&mut c);
    Arc::new(c)
}

/// The client's rustls configuration.
pub fn client(env: &EndpointEnv, case: TestCase) -> Result<Arc<rustls::ClientConfig>, InteropError> {
    let opts = options(case);
    let cert = env.cert_file();
    let cfg = if cert.exists() {
        let mut roots = rustls::RootCertStore::empty();
        for c in CertificateDer::pem_file_iter(&cert).map_err(tls_err)? {
            roots.add(c.map_err(tls_err)?).map_err(tls_err)?;
        }
        client_config(roots, &opts).map_err(tls_err)?
    } else {
        client_config_dangerous_skip_verification(&opts).map_err(tls_err)?
    };
    Ok(with_keylog(env, cfg, |c| {
        c.key_log = Arc::new(rustls::KeyLogFile::new());
    }))
}

/// The server's rustls configuration.
pub fn server(env: &EndpointEnv, case: TestCase) -> Result<Arc<rustls::ServerConfig>, InteropError> {
    let chain = CertificateDer::pem_file_iter(env.cert_file())
        .map_err(|e| tls_err(format!("{}: {e}", env.cert_file().display())))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(tls_err)?;
    let key = PrivateKeyDer::from_pem_file(env.key_file())
        .map_err(|e| tls_err(format!("{}: {e}", env.key_file().display())))?;
    let cfg = server_config(chain, key, &options(case)).map_err(tls_err)?;
    Ok(with_keylog(env, cfg, |c| {
        c.key_log = Arc::new(rustls::KeyLogFile::new());
    }))
}

/// AES-128-GCM as a QUIC suite: noq and quinn protect Initial packets with it whatever the negotiated suite.
pub fn initial_suite() -> Result<rustls::quic::Suite, InteropError> {
    rustls::crypto::ring::cipher_suite::TLS13_AES_128_GCM_SHA256
        .tls13()
        .and_then(|s| s.quic_suite())
        .ok_or_else(|| tls_err("AES-128-GCM has no QUIC suite"))
}

/// A self-signed certificate for `names`, as PEM (certificate, PKCS#8 key): what the runner writes to `CERTS`.
pub fn self_signed_pem(names: &[&str]) -> Result<(String, String), InteropError> {
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let c = rcgen::generate_simple_self_signed(names).map_err(tls_err)?;
    Ok((
        pem("CERTIFICATE", c.cert.der()),
        pem("PRIVATE KEY", &c.signing_key.serialize_der()),
    ))
}

/// PEM armour (RFC 7468) around DER bytes.
pub fn pem(label: &str, der: &[u8]) -> String {
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut text = String::new();
    for chunk in der.chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                let idx = ((n >> (18 - 6 * i)) & 63) as usize;
                text.push(char::from(B64.get(idx).copied().unwrap_or(b'A')));
            } else {
                text.push('=');
            }
        }
    }
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in text.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap_or_default());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// The standard name of a negotiated suite.
pub fn suite_name(s: CipherSuite) -> &'static str {
    match s {
        CipherSuite::Aes128Gcm => "TLS_AES_128_GCM_SHA256",
        CipherSuite::Aes256Gcm => "TLS_AES_256_GCM_SHA384",
        CipherSuite::ChaCha20Poly1305 => "TLS_CHACHA20_POLY1305_SHA256",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_round_trips_through_rustls() {
        let (cert, key) = self_signed_pem(&["localhost"]).unwrap();
        assert_eq!(CertificateDer::pem_slice_iter(cert.as_bytes()).count(), 1);
        assert!(PrivateKeyDer::from_pem_slice(key.as_bytes()).is_ok());
        assert_eq!(pem("X", b"ab"), "-----BEGIN X-----\nYWI=\n-----END X-----\n");
    }
}
