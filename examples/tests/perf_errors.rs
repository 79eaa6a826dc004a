//! `mpquic-perf` started as a process with bad input: every error is one line that names the option, the
//! file or the address and says what is wrong; bad usage and unusable files exit with 2, failures at run
//! time (a socket, the handshake) with 1. Only 127.0.0.1 and unroutable documentation addresses
//! (192.0.2.0/24, RFC 5737) are used; nothing is sent anywhere but loopback.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

const PERF: &str = env!("CARGO_BIN_EXE_mpquic-perf");

/// A child process killed when dropped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A scratch directory for this test process, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("mpquic-perf-errors-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn file(&self, name: &str, text: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn perf(args: &[&str]) -> Output {
    Command::new(PERF).args(args).output().unwrap()
}

/// Runs `args`, expects exit code `code` and one line on stderr; returns that line.
fn one_line_error(args: &[&str], code: i32) -> String {
    let out = perf(args);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: one line expected: {err}"
    );
    err
}

/// Standard base64 (RFC 4648 §4) with padding, for PEM.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * k)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn pem(label: &str, der: &[u8]) -> String {
    let body: Vec<String> = base64(der)
        .as_bytes()
        .chunks(64)
        .map(|c| String::from_utf8(c.to_vec()).unwrap())
        .collect();
    format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        body.join("\n")
    )
}

/// A self-signed certificate and its PKCS#8 key, PEM.
fn certificate(name: &str) -> (String, String) {
    let c = rcgen::generate_simple_self_signed(vec![name.to_owned()]).unwrap();
    (
        pem("CERTIFICATE", c.cert.der()),
        pem("PRIVATE KEY", &c.signing_key.serialize_der()),
    )
}

#[test]
fn pem_encoding_round_trips() {
    // RFC 4648 §10 test vectors.
    assert_eq!(base64(b"fo"), "Zm8=");
    assert_eq!(base64(b"foob"), "Zm9vYg==");
    assert_eq!(base64(b"foobar"), "Zm9vYmFy");
}

/// PEM framing around bytes that are not a DER certificate.
const MALFORMED: &str = "-----BEGIN CERTIFICATE-----\nAAECAwQFBgcICQ==\n-----END CERTIFICATE-----\n";

#[test]
fn negative_numbers_name_their_option_and_range() {
    for (args, option, range) in [
        (["-t", "-5"], "--time", "at most 86400"),
        (["-n", "-1"], "--bytes", "1 byte to 10^18"),
        (["-P", "-1"], "--parallel", "1 to 1000"),
        (["-i", "-1"], "--interval", "0.05 to 3600"),
    ] {
        let mut all = vec!["client", "127.0.0.1:9"];
        all.extend(args);
        let e = one_line_error(&all, 2);
        assert!(
            e.contains(&format!("invalid value '{}'", args[1])) && e.contains(option) && e.contains(range),
            "{args:?}: {e}"
        );
    }
}

#[test]
fn duplicate_or_too_many_paths_are_usage_errors() {
    let mut twenty = vec!["client", "127.0.0.1:9", "-k"];
    for _ in 0..20 {
        twenty.extend(["--path", "127.0.0.1"]);
    }
    let e = one_line_error(&twenty, 2);
    assert!(e.contains("--path given 20 times: expected 1 to 16"), "{e}");
    let e = one_line_error(
        &[
            "client",
            "127.0.0.1:9",
            "-k",
            "--path",
            "127.0.0.1",
            "--path",
            "127.0.0.1=127.0.0.1:9",
        ],
        2,
    );
    assert!(e.contains("paths 0 and 1 use the same pair of addresses"), "{e}");
}

#[test]
fn certificate_key_and_ca_files_are_checked_at_start_up() {
    let dir = Scratch::new("files");
    let (cert, key) = certificate("localhost");
    let cert_file = dir.file("cert.pem", &cert);
    let key_file = dir.file("key.pem", &key);
    let empty = dir.file("empty.pem", "not a certificate\n");
    let malformed = dir.file("malformed.pem", MALFORMED);
    let e = one_line_error(&["client", "127.0.0.1:9", "--ca", &empty], 2);
    assert!(
        e.contains(&format!("--ca: no certificate found in {empty}")),
        "{e}"
    );
    let e = one_line_error(&["client", "127.0.0.1:9", "--ca", &malformed], 2);
    assert!(
        e.contains(&format!("{malformed}: bad encoding at certificate 1 of 1 (--ca)")),
        "{e}"
    );
    let e = one_line_error(
        &[
            "server",
            "--bind",
            "127.0.0.1:0",
            "--cert",
            &key_file,
            "--key",
            &key_file,
        ],
        2,
    );
    assert!(
        e.contains(&format!("--cert: no certificate found in {key_file}")),
        "{e}"
    );
    let e = one_line_error(
        &[
            "server",
            "--bind",
            "127.0.0.1:0",
            "--cert",
            &malformed,
            "--key",
            &key_file,
        ],
        2,
    );
    assert!(
        e.contains(&format!(
            "{malformed}: bad encoding at certificate 1 of 1 (--cert)"
        )),
        "{e}"
    );
    let e = one_line_error(
        &[
            "server",
            "--bind",
            "127.0.0.1:0",
            "--cert",
            &cert_file,
            "--key",
            &cert_file,
        ],
        2,
    );
    assert!(
        e.contains(&format!("--key: no private key found in {cert_file}")),
        "{e}"
    );
    let (_, other_key) = certificate("localhost");
    let other_key = dir.file("other-key.pem", &other_key);
    let e = one_line_error(
        &[
            "server",
            "--bind",
            "127.0.0.1:0",
            "--cert",
            &cert_file,
            "--key",
            &other_key,
        ],
        2,
    );
    assert!(e.contains("does not match the certificate of --cert"), "{e}");
    let missing = dir.0.join("missing.pem");
    let e = one_line_error(&["client", "127.0.0.1:9", "--ca", missing.to_str().unwrap()], 2);
    assert!(
        e.contains(&format!("--ca {}: cannot read", missing.display())),
        "{e}"
    );
}

fn server(extra: &[&str]) -> (Proc, SocketAddr) {
    let mut child = Command::new(PERF)
        .args(["server", "--bind", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("server ended early").unwrap();
        if let Some(a) = line.strip_prefix("mpquic-perf server listening on ") {
            break a.parse().unwrap();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (Proc(child), addr)
}

#[test]
fn an_untrusted_server_certificate_is_explained_in_words() {
    let dir = Scratch::new("trust");
    let (_server, addr) = server(&[]);
    // A valid certificate, but not the issuer of the server's self-signed one (and named differently: a CA
    // with the issuer's name but another key would fail on the signature instead).
    let mut params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "some other CA");
    let other = params.self_signed(&rcgen::KeyPair::generate().unwrap()).unwrap();
    let ca = dir.file("other-ca.pem", &pem("CERTIFICATE", other.der()));
    let e = one_line_error(
        &["client", &addr.to_string(), "--ca", &ca, "-n", "1K", "-i", "0"],
        1,
    );
    assert!(
        e.contains("server certificate not trusted: unknown issuer; pass --ca FILE or --insecure"),
        "{e}"
    );
}

#[test]
fn io_errors_name_the_path_or_the_address() {
    let dir = Scratch::new("io");
    let file = dir.file("not-a-dir", "x");
    let e = one_line_error(&["client", "127.0.0.1:9", "-k", "--qlog", &file], 2);
    assert!(
        e.contains(&format!("--qlog {file}: cannot create the directory")),
        "{e}"
    );
    let e = one_line_error(&["server", "--bind", "127.0.0.1:0", "--qlog", &file], 2);
    assert!(e.contains(&format!("--qlog {file}")), "{e}");
    // 192.0.2.1 (RFC 5737 documentation range) is not an address of this host.
    let e = one_line_error(&["server", "--bind", "192.0.2.1:4433"], 1);
    assert!(e.contains("cannot bind 192.0.2.1:4433 (--bind)"), "{e}");
    let e = one_line_error(&["client", "127.0.0.1:9", "-k", "--path", "192.0.2.7"], 1);
    assert!(
        e.contains("cannot bind the client socket to 192.0.2.7:0 (the LOCAL of --path)"),
        "{e}"
    );
    // A port in use.
    let taken = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let e = one_line_error(&["server", "--bind", &addr], 1);
    assert!(e.contains(&format!("cannot bind {addr} (--bind)")), "{e}");
}
