//! Bulk-transfer goodput over loopback: one connection, one unidirectional stream of N bytes, for
//! mpquic → mpquic, quinn → quinn and mpquic (client) → quinn (server), K runs each, in one process.
//!
//! ```text
//! cargo run --release -p mpquic --example bulk_loopback -- [--bytes N] [--runs K] [--mtu M] [--pair P] [--no-verify]
//! ```
//!
//! - `--bytes N`: stream length (default 256 MiB; suffixes `K`, `M`, `G` are binary: `64M` = 64 MiB).
//! - `--runs K`: runs per pair (default 3); the pairs are interleaved run by run so that drift in the
//!   machine's state affects all of them alike.
//! - `--mtu M`: UDP payload size of both stacks (default 1200: mpquic's default and quinn's initial MTU;
//!   quinn's path-MTU discovery is turned off so both send datagrams of the same size).
//! - `--pair mpquic|quinn|interop`: run only that pair.
//! - `--send-buffer N`: mpquic's per-stream send buffer (`StreamsConfig::send_buffer`; default: the library's
//!   default).
//! - `--no-verify`: only count the received bytes instead of comparing them with what was sent.
//! - `BULK_TRACE=1` in the environment: every 100 ms, the mpquic sender's path state on stderr (window, bytes in
//!   flight, pacing rate, RTTs, packets sent).
//!
//! Each run prints the packets the sender sent and declared lost, and the packets the receiver sent (its ACKs,
//! mostly): the second number shows how the two ends batch their work.
//! Both stacks use TLS_AES_128_GCM_SHA256 only and CUBIC (mpquic's `"cubic"`, quinn's `CubicConfig`); flow
//! control and everything else are each stack's defaults. The data path is zero-copy on both sides: the
//! sender hands out `Bytes` slices of one pattern buffer with `write_chunk`, the receiver takes `Bytes` with
//! `read_chunk` and compares them with the pattern in place (a `memcmp` per chunk) or only counts them.
//!
//! The clock starts just before the client opens the stream (after the handshake) and stops when the
//! server reads the end of the stream; goodput = stream bytes × 8 / that time. Timings are informative
//! only: nothing is asserted about them.

// A benchmark binary: it needs the wall clock.
#![allow(clippy::disallowed_methods)]

use std::error::Error;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mpquic::proto::crypto::{CipherSuite, TlsOptions, client_config, server_config};
use mpquic::runtime::{self as mp, TransportConfig, VarInt};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

type Res<T> = Result<T, Box<dyn Error + Send + Sync>>;

const ALPN: &[u8] = b"bulk";
/// Length of the pattern buffer every written chunk is a slice of.
const PATTERN_LEN: usize = 1 << 20;
/// Largest chunk asked of `read_chunk`.
const READ_MAX: usize = 1 << 20;
/// One run may not take longer than this.
const RUN_TIMEOUT: Duration = Duration::from_secs(300);

#[derive(Debug, Clone)]
struct Options {
    pairs: Vec<Pair>,
    bytes: u64,
    runs: usize,
    mtu: u16,
    send_buffer: Option<u64>,
    verify: bool,
}

fn parse_size(s: &str) -> Res<u64> {
    let (digits, mult) = match s.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&s[..s.len() - 1], 1u64 << 10),
        Some('M') => (&s[..s.len() - 1], 1 << 20),
        Some('G') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    let n: u64 = digits.parse()?;
    n.checked_mul(mult).ok_or_else(|| "size overflows".into())
}

fn parse_args() -> Res<Options> {
    let mut o = Options {
        pairs: Pair::ALL.to_vec(),
        bytes: 256 << 20,
        runs: 3,
        mtu: 1200,
        send_buffer: None,
        verify: true,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--bytes" => o.bytes = parse_size(&value()?)?,
            "--runs" => o.runs = value()?.parse()?,
            "--mtu" => o.mtu = value()?.parse()?,
            "--send-buffer" => o.send_buffer = Some(parse_size(&value()?)?),
            "--no-verify" => o.verify = false,
            "--pair" => {
                let p = value()?;
                let pair = Pair::ALL
                    .into_iter()
                    .find(|q| q.key() == p)
                    .ok_or_else(|| format!("--pair: one of mpquic, quinn, interop, not {p}"))?;
                o.pairs = vec![pair];
            }
            "-h" | "--help" => {
                println!(
                    "bulk_loopback [--bytes N[K|M|G]] [--runs K] [--mtu M] [--pair P] [--send-buffer N] [--no-verify]"
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    if o.bytes == 0 || o.runs == 0 || o.mtu < 1200 {
        return Err("--bytes and --runs must be positive, --mtu at least 1200".into());
    }
    Ok(o)
}

// ----- configuration shared by both stacks -----

struct Certs {
    cert: CertificateDer<'static>,
    key: PrivatePkcs8KeyDer<'static>,
}

fn certs() -> Res<Certs> {
    let c = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()])?;
    Ok(Certs {
        cert: c.cert.der().clone(),
        key: PrivatePkcs8KeyDer::from(c.signing_key.serialize_der()),
    })
}

fn tls_options() -> TlsOptions {
    TlsOptions {
        alpn_protocols: vec![ALPN.to_vec()],
        cipher_suites: vec![CipherSuite::Aes128Gcm],
        early_data: false,
    }
}

fn rustls_server(c: &Certs) -> Res<Arc<rustls::ServerConfig>> {
    Ok(server_config(
        vec![c.cert.clone()],
        PrivateKeyDer::Pkcs8(c.key.clone_key()),
        &tls_options(),
    )?)
}

fn rustls_client(c: &Certs) -> Res<Arc<rustls::ClientConfig>> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(c.cert.clone())?;
    Ok(client_config(roots, &tls_options())?)
}

fn loopback() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

fn mp_transport(o: &Options) -> TransportConfig {
    let mut t = TransportConfig {
        congestion_controller: "cubic".to_owned(),
        max_udp_payload: o.mtu,
        ..TransportConfig::default()
    };
    if let Some(b) = o.send_buffer {
        t.streams.send_buffer = b;
    }
    t
}

fn quinn_transport(o: &Options) -> Arc<quinn::TransportConfig> {
    let mut t = quinn::TransportConfig::default();
    t.congestion_controller_factory(Arc::new(quinn::congestion::CubicConfig::default()))
        .initial_mtu(o.mtu)
        .mtu_discovery_config(None);
    Arc::new(t)
}

fn mp_server(c: &Certs, o: &Options) -> Res<mp::Endpoint> {
    let config = mp::ServerConfig {
        tls: rustls_server(c)?,
        transport: mp_transport(o),
    };
    Ok(mp::Endpoint::server(config, loopback())?)
}

fn mp_client(c: &Certs, o: &Options) -> Res<mp::Endpoint> {
    let ep = mp::Endpoint::client(loopback())?;
    ep.set_default_client_config(mp::ClientConfig {
        tls: rustls_client(c)?,
        transport: mp_transport(o),
    });
    Ok(ep)
}

fn quinn_server(c: &Certs, o: &Options) -> Res<quinn::Endpoint> {
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(rustls_server(c)?)?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    config.transport_config(quinn_transport(o));
    Ok(quinn::Endpoint::server(config, loopback())?)
}

fn quinn_client(c: &Certs, o: &Options) -> Res<quinn::Endpoint> {
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(rustls_client(c)?)?;
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    config.transport_config(quinn_transport(o));
    let mut ep = quinn::Endpoint::client(loopback())?;
    ep.set_default_client_config(config);
    Ok(ep)
}

// ----- the data -----

fn pattern() -> Bytes {
    (0..PATTERN_LEN)
        .map(|i| (i as u8).wrapping_mul(31) ^ (i >> 8) as u8)
        .collect::<Vec<u8>>()
        .into()
}

/// The next chunk to write at stream offset `sent`: a slice of the pattern, never copied.
fn next_chunk(pattern: &Bytes, sent: u64, total: u64) -> Bytes {
    let pos = (sent % PATTERN_LEN as u64) as usize;
    let left = usize::try_from(total - sent).unwrap_or(usize::MAX);
    let len = (PATTERN_LEN - pos).min(left);
    pattern.slice(pos..pos + len)
}

/// What the receiver saw.
struct Received {
    bytes: u64,
    /// Every byte matched the pattern (always true without verification).
    intact: bool,
    end: Instant,
}

/// Counts (and with `verify` compares with the pattern) one received chunk at stream offset `offset`.
fn check(pattern: &Bytes, offset: u64, mut chunk: &[u8], verify: bool) -> bool {
    if !verify {
        return true;
    }
    let mut pos = (offset % PATTERN_LEN as u64) as usize;
    while !chunk.is_empty() {
        let n = chunk.len().min(PATTERN_LEN - pos);
        let (head, rest) = chunk.split_at(n);
        if pattern.get(pos..pos + n) != Some(head) {
            return false;
        }
        chunk = rest;
        pos = 0;
    }
    true
}

// ----- one side of the transfer in each stack -----

async fn mp_send(conn: &mp::Connection, pattern: &Bytes, total: u64) -> Res<()> {
    let mut s = conn.open_uni().await.map_err(|e| format!("open_uni: {e:?}"))?;
    if std::env::var_os("BULK_TRACE").is_some() {
        let c = conn.clone();
        tokio::spawn(async move {
            while c.close_reason().is_none() {
                tokio::time::sleep(Duration::from_millis(100)).await;
                for p in c.all_path_stats() {
                    eprintln!(
                        "path {}: cwnd {} B, in flight {} B, pacing {:?} B/s, srtt {:?}, min_rtt {:?}, {} packets sent",
                        p.path.0, p.cwnd, p.bytes_in_flight, p.pacing_rate, p.srtt, p.min_rtt, p.packets_sent
                    );
                }
            }
        });
    }
    let mut sent = 0;
    while sent < total {
        let chunk = next_chunk(pattern, sent, total);
        sent += chunk.len() as u64;
        s.write_chunk(chunk).await?;
    }
    s.finish()?;
    Ok(())
}

async fn quinn_send(conn: &quinn::Connection, pattern: &Bytes, total: u64) -> Res<()> {
    let mut s = conn.open_uni().await?;
    let mut sent = 0;
    while sent < total {
        let chunk = next_chunk(pattern, sent, total);
        sent += chunk.len() as u64;
        s.write_chunk(chunk).await?;
    }
    s.finish()?;
    Ok(())
}

async fn mp_receive(conn: &mp::Connection, pattern: &Bytes, verify: bool) -> Res<Received> {
    let mut r = conn
        .accept_uni()
        .await
        .map_err(|e| format!("accept_uni: {e:?}"))?;
    let mut bytes = 0u64;
    let mut intact = true;
    while let Some(chunk) = r.read_chunk(READ_MAX).await? {
        intact &= check(pattern, bytes, &chunk, verify);
        bytes += chunk.len() as u64;
    }
    Ok(Received {
        bytes,
        intact,
        end: Instant::now(),
    })
}

async fn quinn_receive(conn: &quinn::Connection, pattern: &Bytes, verify: bool) -> Res<Received> {
    let mut r = conn.accept_uni().await?;
    let mut bytes = 0u64;
    let mut intact = true;
    while let Some(chunk) = r.read_chunk(READ_MAX, true).await? {
        intact &= chunk.offset == bytes && check(pattern, bytes, &chunk.bytes, verify);
        bytes += chunk.bytes.len() as u64;
    }
    Ok(Received {
        bytes,
        intact,
        end: Instant::now(),
    })
}

// ----- the pairs -----

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pair {
    MpMp,
    QuinnQuinn,
    MpQuinn,
}

impl Pair {
    const ALL: [Pair; 3] = [Pair::MpMp, Pair::QuinnQuinn, Pair::MpQuinn];

    /// The name `--pair` takes.
    fn key(self) -> &'static str {
        match self {
            Pair::MpMp => "mpquic",
            Pair::QuinnQuinn => "quinn",
            Pair::MpQuinn => "interop",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Pair::MpMp => "mpquic -> mpquic",
            Pair::QuinnQuinn => "quinn  -> quinn",
            Pair::MpQuinn => "mpquic -> quinn",
        }
    }
}

/// Accepts one connection and completes its handshake (concurrently with the client's `connect`).
async fn mp_accept(server: &mp::Endpoint) -> Res<mp::Connection> {
    let incoming = server.accept().await.ok_or("no incoming connection")?;
    Ok(incoming.await.map_err(|e| format!("accept: {e:?}"))?)
}

/// Accepts one connection and completes its handshake (concurrently with the client's `connect`).
async fn quinn_accept(server: &quinn::Endpoint) -> Res<quinn::Connection> {
    Ok(server.accept().await.ok_or("no incoming connection")?.await?)
}

/// One transfer: the time from opening the stream to reading its end, and the sender's packets sent and
/// declared lost.
async fn run(pair: Pair, c: &Certs, o: &Options, pattern: &Bytes) -> Res<(Duration, u64, u64, u64)> {
    let (start, received, (packets, lost), acks) = match pair {
        Pair::MpMp => {
            let server = mp_server(c, o)?;
            let client = mp_client(c, o)?;
            let connecting = client.connect(server.local_addr(), "localhost")?;
            let (cc, sc) = tokio::join!(connecting, mp_accept(&server));
            let (cc, sc) = (cc.map_err(|e| format!("connect: {e:?}"))?, sc?);
            let start = Instant::now();
            let (sent, received) = tokio::join!(mp_send(&cc, pattern, o.bytes), async {
                let r = mp_receive(&sc, pattern, o.verify).await;
                sc.close(VarInt::from_u32(0), b"done");
                r
            });
            sent?;
            // The server closes once it has everything; the client waits for that.
            let _ = cc.closed().await;
            let st = cc.stats();
            let lost = (st.packets_sent, st.packets_lost);
            let acks = sc.stats().packets_sent;
            drop((cc, sc));
            let _ = tokio::time::timeout(Duration::from_secs(2), client.wait_idle()).await;
            let _ = tokio::time::timeout(Duration::from_secs(2), server.wait_idle()).await;
            (start, received?, lost, acks)
        }
        Pair::QuinnQuinn => {
            let server = quinn_server(c, o)?;
            let client = quinn_client(c, o)?;
            let connecting = client.connect(server.local_addr()?, "localhost")?;
            let (cc, sc) = tokio::join!(connecting, quinn_accept(&server));
            let (cc, sc) = (cc?, sc?);
            let start = Instant::now();
            let (sent, received) = tokio::join!(quinn_send(&cc, pattern, o.bytes), async {
                let r = quinn_receive(&sc, pattern, o.verify).await;
                sc.close(quinn::VarInt::from_u32(0), b"done");
                r
            });
            sent?;
            let _ = cc.closed().await;
            let st = cc.stats().path;
            let lost = (st.sent_packets, st.lost_packets);
            let acks = sc.stats().path.sent_packets;
            drop((cc, sc));
            let _ = tokio::time::timeout(Duration::from_secs(2), client.wait_idle()).await;
            let _ = tokio::time::timeout(Duration::from_secs(2), server.wait_idle()).await;
            (start, received?, lost, acks)
        }
        Pair::MpQuinn => {
            let server = quinn_server(c, o)?;
            let client = mp_client(c, o)?;
            let connecting = client.connect(server.local_addr()?, "localhost")?;
            let (cc, sc) = tokio::join!(connecting, quinn_accept(&server));
            let (cc, sc) = (cc.map_err(|e| format!("connect: {e:?}"))?, sc?);
            let start = Instant::now();
            let (sent, received) = tokio::join!(mp_send(&cc, pattern, o.bytes), async {
                let r = quinn_receive(&sc, pattern, o.verify).await;
                sc.close(quinn::VarInt::from_u32(0), b"done");
                r
            });
            sent?;
            let _ = cc.closed().await;
            let st = cc.stats();
            let lost = (st.packets_sent, st.packets_lost);
            let acks = sc.stats().path.sent_packets;
            drop((cc, sc));
            let _ = tokio::time::timeout(Duration::from_secs(2), client.wait_idle()).await;
            let _ = tokio::time::timeout(Duration::from_secs(2), server.wait_idle()).await;
            (start, received?, lost, acks)
        }
    };
    if received.bytes != o.bytes {
        return Err(format!(
            "{}: received {} of {} bytes",
            pair.name(),
            received.bytes,
            o.bytes
        )
        .into());
    }
    if !received.intact {
        return Err(format!("{}: received data differs from what was sent", pair.name()).into());
    }
    Ok((received.end.saturating_duration_since(start), packets, lost, acks))
}

fn mbit_per_s(bytes: u64, d: Duration) -> f64 {
    bytes as f64 * 8.0 / d.as_secs_f64().max(1e-9) / 1e6
}

fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    match (sorted.get(n / 2), n % 2) {
        (Some(&m), 1) => m,
        (Some(&hi), _) => sorted.get(n / 2 - 1).map_or(hi, |&lo| (lo + hi) / 2.0),
        (None, _) => 0.0,
    }
}

async fn bench(o: Options) -> Res<()> {
    let c = certs()?;
    let pattern = pattern();
    println!(
        "bulk_loopback: {} bytes ({:.1} MiB) per run, {} run(s) per pair, UDP payload {} B, {}",
        o.bytes,
        o.bytes as f64 / f64::from(1u32 << 20),
        o.runs,
        o.mtu,
        if o.verify { "verified" } else { "counted only" }
    );
    let mut results: Vec<(Pair, Vec<f64>)> = o.pairs.iter().map(|&p| (p, Vec::new())).collect();
    for i in 0..o.runs {
        for (pair, rates) in &mut results {
            let (d, packets, lost, acks) = tokio::time::timeout(RUN_TIMEOUT, run(*pair, &c, &o, &pattern))
                .await
                .map_err(|_| format!("{}: run timed out", pair.name()))??;
            let rate = mbit_per_s(o.bytes, d);
            println!(
                "run {}/{} {:<17} {:>8.3} s {:>9.1} Mbit/s  (sender: {packets} packets, {lost} lost; receiver: {acks} packets)",
                i + 1,
                o.runs,
                pair.name(),
                d.as_secs_f64(),
                rate
            );
            rates.push(rate);
        }
    }
    println!();
    println!("{:<17} {:>12} {:>12} {:>12}", "pair", "median", "min", "max");
    let mut medians = Vec::new();
    for (pair, rates) in &mut results {
        rates.sort_by(f64::total_cmp);
        let m = median(rates);
        medians.push((*pair, m));
        println!(
            "{:<17} {:>7.1} Mb/s {:>7.1} Mb/s {:>7.1} Mb/s",
            pair.name(),
            m,
            rates.first().copied().unwrap_or(0.0),
            rates.last().copied().unwrap_or(0.0)
        );
    }
    let get = |p: Pair| medians.iter().find(|(q, _)| *q == p).map_or(0.0, |(_, m)| *m);
    let quinn = get(Pair::QuinnQuinn);
    if quinn > 0.0 {
        println!();
        println!(
            "ratio (median): mpquic->mpquic / quinn->quinn = {:.2}, mpquic->quinn / quinn->quinn = {:.2}",
            get(Pair::MpMp) / quinn,
            get(Pair::MpQuinn) / quinn
        );
    }
    Ok(())
}

fn main() -> Res<()> {
    let o = parse_args()?;
    // Logs for debugging only (they cost throughput): RUST_LOG=mpquic=debug,quinn=debug.
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .init();
    }
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()?
        .block_on(bench(o))
}
