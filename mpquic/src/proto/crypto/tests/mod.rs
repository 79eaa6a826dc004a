//! Tests of the crypto module, split by topic: RFC 9001 Appendix A and multipath vectors, the handshake over
//! [`super::TlsSession`], and key update.

mod handshake;
mod key_update;
mod vectors;

use ring::hkdf;

use super::{HeaderKey, KeyChange, Keys, OneRttKeys, SelfSigned, TlsOptions, TlsSession};
use super::{client_config, server_config};

/// Bytes from hex, ignoring whitespace.
pub(super) fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
        .collect()
}

struct Len(usize);

impl hkdf::KeyType for Len {
    fn len(&self) -> usize {
        self.0
    }
}

/// HKDF-Expand-Label (RFC 8446 §7.1) with SHA-256 and an empty context, independent of rustls.
pub(super) fn expand_label(secret: &[u8], label: &str, len: usize) -> Vec<u8> {
    let prk = hkdf::Prk::new_less_safe(hkdf::HKDF_SHA256, secret);
    let full = format!("tls13 {label}");
    let mut info = Vec::new();
    info.extend_from_slice(&(len as u16).to_be_bytes());
    info.push(full.len() as u8);
    info.extend_from_slice(full.as_bytes());
    info.push(0);
    let mut out = vec![0; len];
    prk.expand(&[&info], Len(len)).unwrap().fill(&mut out).unwrap();
    out
}

/// HKDF-Extract with SHA-256, independent of rustls.
pub(super) fn extract(salt: &[u8], ikm: &[u8]) -> Vec<u8> {
    // A PRK cannot be read back from ring; expanding it with the raw HMAC instead gives the same bytes.
    ring::hmac::sign(&ring::hmac::Key::new(ring::hmac::HMAC_SHA256, salt), ikm)
        .as_ref()
        .to_vec()
}

/// One endpoint of an in-memory handshake, with the keys it has installed.
pub(super) struct Peer {
    pub tls: TlsSession,
    pub handshake: Option<Keys>,
    pub one_rtt: Option<Box<OneRttKeys>>,
}

impl Peer {
    fn new(tls: TlsSession) -> Self {
        Peer {
            tls,
            handshake: None,
            one_rtt: None,
        }
    }
}

/// Moves every handshake byte `from` has to `to`, installing key changes; returns whether anything moved.
fn pump(from: &mut Peer, to: &mut Peer) -> Result<bool, super::HandshakeError> {
    let mut moved = false;
    loop {
        let mut buf = Vec::new();
        let change = from.tls.write_handshake(&mut buf);
        if !buf.is_empty() {
            moved = true;
            to.tls.read_handshake(&buf)?;
        }
        match change {
            None => return Ok(moved),
            Some(KeyChange::Handshake(keys)) => from.handshake = Some(keys),
            Some(KeyChange::OneRtt(keys)) => from.one_rtt = Some(keys),
        }
        moved = true;
    }
}

/// Runs the handshake to completion (or to the first error).
pub(super) fn run_handshake(client: &mut Peer, server: &mut Peer) -> Result<(), super::HandshakeError> {
    for _ in 0..16 {
        let a = pump(client, server)?;
        let b = pump(server, client)?;
        if !a && !b {
            return Ok(());
        }
    }
    panic!("handshake did not settle");
}

pub(super) const CLIENT_TP: &[u8] = b"client transport parameters";
pub(super) const SERVER_TP: &[u8] = b"server transport parameters";

/// A client and a server with a fresh self-signed certificate for "localhost", verification on.
pub(super) fn peers(client_opts: &TlsOptions, server_opts: &TlsOptions) -> (Peer, Peer) {
    let cert = SelfSigned::generate(&["localhost"]).unwrap();
    let client_cfg = client_config(cert.root_store().unwrap(), client_opts).unwrap();
    let server_cfg = server_config(vec![cert.cert.clone()], cert.key.clone_key(), server_opts).unwrap();
    let client = TlsSession::client(client_cfg, "localhost", CLIENT_TP.to_vec()).unwrap();
    let server = TlsSession::server(server_cfg, SERVER_TP.to_vec()).unwrap();
    (Peer::new(client), Peer::new(server))
}

/// Both sides' 1-RTT keys after a successful handshake with ALPN "mpq".
pub(super) fn one_rtt_pair(opts: &TlsOptions) -> (OneRttKeys, OneRttKeys) {
    let (mut client, mut server) = peers(opts, opts);
    run_handshake(&mut client, &mut server).unwrap();
    (*client.one_rtt.unwrap(), *server.one_rtt.unwrap())
}

/// Protects the header of a sealed packet with `key` (shortcut for tests).
pub(super) fn protect(key: &HeaderKey, packet: &mut [u8], pn_offset: usize) {
    key.apply(packet, pn_offset).unwrap();
}
