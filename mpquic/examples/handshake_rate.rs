//! Handshake rate over loopback: full handshakes (no resumption, no 0-RTT) each followed by a 1-byte echo on
//! a bidirectional stream, for mpquic (multipath offered, its default), mpquic with multipath off, and quinn,
//! in one process.
//!
//! ```text
//! cargo run --release -p mpquic --example handshake_rate -- [--conns N] [--runs K] [--in-flight C,...] [--stack S] [--resume]
//! ```
//!
//! - `--conns N`: connections per measurement (default 2000).
//! - `--runs K`: measurements per stack and concurrency (default 3); the stacks are interleaved run by run so
//!   that drift in the machine's load affects them alike. The report gives the median.
//! - `--in-flight C,...`: how many connections are in progress at once (default `1,64`: sequential, and 64
//!   client tasks each opening connections one after the other).
//! - `--stack mpquic|mpquic-sp|quinn`: only that stack (repeatable).
//! - `--resume`: rustls' default session resumption instead of full handshakes: the servers send two TLS 1.3
//!   session tickets per connection (right after reading the client's Finished, with HANDSHAKE_DONE), the
//!   client keeps up to 8 per server name (rustls' in-memory store, shared by every connection of the client
//!   configuration) and each new connection offers one if it finds one. Each run reports "resumed k/N": the
//!   resumptions the server accepted (counted in its session cache, rustls' default of 256 sessions), then
//!   how many connections offered a ticket, how many tickets the client received, how many of those the
//!   store evicted unused (it keeps the 8 newest), and the longest run of tickets received with no connection
//!   taking one in between. With C connections in flight, the first C find no ticket; every later one
//!   finds one as long as tickets arrive one connection at a time, followed by that connection's next step
//!   (each full handshake costs a P-256 signature and its verification more). Without `--resume` the servers
//!   send no tickets, every handshake is full (the report shows "resumed 0/N"), and the stacks do the same
//!   cryptographic work.
//!
//! One connection: the client connects, opens a bidirectional stream, writes one byte and finishes the stream,
//! reads the server's echo to the end, then closes the connection. The server accepts, echoes the byte back on
//! the same stream and finishes it, then waits for the client's close. conn/s = N / (time from the first
//! `connect` to the last echo read). Each measurement uses a fresh client and server endpoint.
//!
//! Same set-up for both stacks: TLS 1.3 with TLS_AES_128_GCM_SHA256 (rustls + ring, the configurations of
//! `mpquic::proto::crypto`), the same self-signed certificate (ECDSA P-256), and **4 MiB socket receive and
//! send buffers**: what mpquic's runtime asks of the kernel for every socket, so quinn gets the same (quinn's
//! own default leaves the kernel's ~208 KiB, which drops datagrams when 64 handshakes arrive at once).
//! Everything else is each stack's default. Timings are informative only: nothing asserts on them.

// A benchmark binary: it needs the wall clock.
#![allow(clippy::disallowed_methods)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mpquic::runtime::{self as mp, TransportConfig, VarInt};

#[path = "support/tls.rs"]
mod tls;

use tls::{Certs, Res, rustls_client, rustls_server};

const ALPN: &[u8] = b"hsrate";
/// The socket buffers mpquic's runtime asks for (each direction); quinn's sockets get the same.
const SOCKET_BUFFER_BYTES: usize = 4 << 20;
/// One measurement may not take longer than this.
const RUN_TIMEOUT: Duration = Duration::from_secs(300);
/// Largest accepted `--in-flight` value and `--conns` value (a typo should not exhaust memory or ports).
const MAX_IN_FLIGHT: usize = 4096;
const MAX_CONNS: usize = 1_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stack {
    /// mpquic at its defaults: multipath offered.
    Mpquic,
    /// mpquic with multipath not offered (`initial_max_path_id: None`).
    MpquicSinglePath,
    /// quinn at its defaults, with 4 MiB socket buffers.
    Quinn,
}

impl Stack {
    const ALL: [Stack; 3] = [Stack::Mpquic, Stack::MpquicSinglePath, Stack::Quinn];

    fn key(self) -> &'static str {
        match self {
            Stack::Mpquic => "mpquic",
            Stack::MpquicSinglePath => "mpquic-sp",
            Stack::Quinn => "quinn",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Stack::Mpquic => "mpquic (multipath offered)",
            Stack::MpquicSinglePath => "mpquic (multipath off)",
            Stack::Quinn => "quinn (4 MiB buffers)",
        }
    }
}

#[derive(Debug, Clone)]
struct Options {
    stacks: Vec<Stack>,
    conns: usize,
    runs: usize,
    in_flight: Vec<usize>,
    /// rustls' default session resumption instead of full handshakes.
    resume: bool,
}

fn parse_args() -> Res<Options> {
    let mut o = Options {
        stacks: Vec::new(),
        conns: 2000,
        runs: 3,
        in_flight: vec![1, 64],
        resume: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--conns" => o.conns = value()?.parse()?,
            "--runs" => o.runs = value()?.parse()?,
            "--in-flight" => {
                o.in_flight = value()?.split(',').map(str::parse).collect::<Result<_, _>>()?;
            }
            "--stack" => {
                let s = value()?;
                let stack = Stack::ALL
                    .into_iter()
                    .find(|q| q.key() == s)
                    .ok_or_else(|| format!("--stack: one of mpquic, mpquic-sp, quinn, not {s}"))?;
                o.stacks.push(stack);
            }
            "--resume" => o.resume = true,
            "-h" | "--help" => {
                println!(
                    "handshake_rate [--conns N] [--runs K] [--in-flight C,...] [--stack mpquic|mpquic-sp|quinn] \
                     [--resume]"
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    if o.stacks.is_empty() {
        o.stacks = Stack::ALL.to_vec();
    }
    if !(1..=MAX_CONNS).contains(&o.conns) {
        return Err(format!("--conns must be in 1..={MAX_CONNS}, not {}", o.conns).into());
    }
    if o.runs == 0 {
        return Err("--runs must be positive".into());
    }
    if o.in_flight.is_empty() || o.in_flight.iter().any(|&c| !(1..=MAX_IN_FLIGHT).contains(&c)) {
        return Err(format!("--in-flight values must be in 1..={MAX_IN_FLIGHT}").into());
    }
    Ok(o)
}

// ----- configuration shared by both stacks -----

/// The client's TLS 1.3 session store (rustls' in-memory one, its default) counting the tickets it is given
/// and whether each connection found one to resume with.
#[derive(Debug)]
struct CountingStore {
    inner: rustls::client::ClientSessionMemoryCache,
    /// Tickets received (NewSessionTicket).
    inserted: AtomicUsize,
    /// Connections that found a ticket (resumption attempted).
    taken: AtomicUsize,
    /// Connections that found none (full handshake).
    missed: AtomicUsize,
    /// The store's bookkeeping, under one lock with the operations on `inner`.
    book: std::sync::Mutex<StoreBook>,
    /// The server's session cache, for the same measurement.
    server: Arc<CountingServerCache>,
}

/// What happened in the store, in order: how many tickets it held (rustls keeps at most
/// [`TICKETS_PER_SERVER`] per server name and evicts the oldest), how many it evicted unused, and the longest
/// run of insertions with no connection taking a ticket in between (tickets that arrive in bursts).
#[derive(Debug, Default)]
struct StoreBook {
    held: usize,
    evicted: usize,
    run: usize,
    longest_run: usize,
}

/// rustls' `ClientSessionMemoryCache` keeps up to this many TLS 1.3 tickets per server name.
const TICKETS_PER_SERVER: usize = 8;

impl CountingStore {
    fn new() -> Arc<Self> {
        Arc::new(CountingStore {
            server: Arc::new(CountingServerCache {
                inner: rustls::server::ServerSessionMemoryCache::new(256),
                resumed: AtomicUsize::new(0),
            }),
            inner: rustls::client::ClientSessionMemoryCache::new(256),
            inserted: AtomicUsize::new(0),
            taken: AtomicUsize::new(0),
            missed: AtomicUsize::new(0),
            book: std::sync::Mutex::new(StoreBook::default()),
        })
    }
}

impl rustls::client::ClientSessionStore for CountingStore {
    fn set_kx_hint(&self, name: rustls::pki_types::ServerName<'static>, group: rustls::NamedGroup) {
        self.inner.set_kx_hint(name, group);
    }
    fn kx_hint(&self, name: &rustls::pki_types::ServerName<'_>) -> Option<rustls::NamedGroup> {
        self.inner.kx_hint(name)
    }
    fn set_tls12_session(
        &self,
        name: rustls::pki_types::ServerName<'static>,
        value: rustls::client::Tls12ClientSessionValue,
    ) {
        self.inner.set_tls12_session(name, value);
    }
    fn tls12_session(
        &self,
        name: &rustls::pki_types::ServerName<'_>,
    ) -> Option<rustls::client::Tls12ClientSessionValue> {
        self.inner.tls12_session(name)
    }
    fn remove_tls12_session(&self, name: &rustls::pki_types::ServerName<'static>) {
        self.inner.remove_tls12_session(name);
    }
    fn insert_tls13_ticket(
        &self,
        name: rustls::pki_types::ServerName<'static>,
        value: rustls::client::Tls13ClientSessionValue,
    ) {
        self.inserted.fetch_add(1, Ordering::Relaxed);
        let mut book = self
            .book
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.inner.insert_tls13_ticket(name, value);
        if book.held == TICKETS_PER_SERVER {
            book.evicted += 1;
        } else {
            book.held += 1;
        }
        book.run += 1;
        book.longest_run = book.longest_run.max(book.run);
    }
    fn take_tls13_ticket(
        &self,
        name: &rustls::pki_types::ServerName<'static>,
    ) -> Option<rustls::client::Tls13ClientSessionValue> {
        let mut book = self
            .book
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let t = self.inner.take_tls13_ticket(name);
        book.held = book.held.saturating_sub(usize::from(t.is_some()));
        book.run = 0;
        let counter = if t.is_some() { &self.taken } else { &self.missed };
        counter.fetch_add(1, Ordering::Relaxed);
        t
    }
}

/// The server's session cache: rustls' default (`ServerSessionMemoryCache` of 256 sessions, which holds the
/// sessions its TLS 1.3 tickets name), counting the sessions a ClientHello's ticket found: the resumptions the
/// server accepted.
#[derive(Debug)]
struct CountingServerCache {
    inner: Arc<rustls::server::ServerSessionMemoryCache>,
    resumed: AtomicUsize,
}

impl rustls::server::StoresServerSessions for CountingServerCache {
    fn put(&self, key: Vec<u8>, value: Vec<u8>) -> bool {
        self.inner.put(key, value)
    }
    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.inner.get(key)
    }
    fn take(&self, key: &[u8]) -> Option<Vec<u8>> {
        let v = self.inner.take(key);
        if v.is_some() {
            self.resumed.fetch_add(1, Ordering::Relaxed);
        }
        v
    }
    fn can_cache(&self) -> bool {
        self.inner.can_cache()
    }
}

/// The server's rustls configuration: with `resume`, rustls' default (two session tickets per connection,
/// sessions in `cache`); without, no tickets, so that every handshake is a full one.
fn ticketing_server(
    c: &Certs,
    resume: bool,
    cache: &Arc<CountingServerCache>,
) -> Res<Arc<rustls::ServerConfig>> {
    let mut config = (*rustls_server(c)?).clone();
    if !resume {
        config.send_tls13_tickets = 0;
    }
    config.session_storage = cache.clone();
    Ok(Arc::new(config))
}

/// The client's rustls configuration with a [`CountingStore`] as its session store.
fn counted_client(c: &Certs, store: &Arc<CountingStore>) -> Res<Arc<rustls::ClientConfig>> {
    let mut config = (*rustls_client(c)?).clone();
    config.resumption = rustls::client::Resumption::store(store.clone());
    Ok(Arc::new(config))
}

fn certs() -> Res<Certs> {
    tls::certs(ALPN)
}

fn loopback() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

fn mp_transport(stack: Stack) -> TransportConfig {
    let mut t = TransportConfig::default();
    if stack == Stack::MpquicSinglePath {
        t.initial_max_path_id = None;
    }
    t
}

fn mp_endpoints(
    c: &Certs,
    stack: Stack,
    resume: bool,
    store: &Arc<CountingStore>,
) -> Res<(mp::Endpoint, mp::Endpoint)> {
    let server = mp::Endpoint::server(
        mp::ServerConfig {
            tls: ticketing_server(c, resume, &store.server)?,
            transport: mp_transport(stack),
        },
        loopback(),
    )?;
    let client = mp::Endpoint::client(loopback())?;
    client.set_default_client_config(mp::ClientConfig {
        tls: counted_client(c, store)?,
        transport: mp_transport(stack),
    });
    Ok((server, client))
}

/// A loopback UDP socket with the buffers mpquic asks for (best effort, capped by net.core.{r,w}mem_max).
fn quinn_socket() -> Res<std::net::UdpSocket> {
    let socket = std::net::UdpSocket::bind(loopback())?;
    let state = quinn_udp::UdpSocketState::new((&socket).into())?;
    state.set_recv_buffer_size((&socket).into(), SOCKET_BUFFER_BYTES)?;
    state.set_send_buffer_size((&socket).into(), SOCKET_BUFFER_BYTES)?;
    Ok(socket)
}

fn quinn_endpoints(
    c: &Certs,
    resume: bool,
    store: &Arc<CountingStore>,
) -> Res<(quinn::Endpoint, quinn::Endpoint)> {
    let crypto =
        quinn::crypto::rustls::QuicServerConfig::try_from(ticketing_server(c, resume, &store.server)?)?;
    let server = quinn::Endpoint::new(
        quinn::EndpointConfig::default(),
        Some(quinn::ServerConfig::with_crypto(Arc::new(crypto))),
        quinn_socket()?,
        Arc::new(quinn::TokioRuntime),
    )?;
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(counted_client(c, store)?)?;
    let mut client = quinn::Endpoint::new(
        quinn::EndpointConfig::default(),
        None,
        quinn_socket()?,
        Arc::new(quinn::TokioRuntime),
    )?;
    client.set_default_client_config(quinn::ClientConfig::new(Arc::new(crypto)));
    Ok((server, client))
}

// ----- one connection in each stack -----

/// The byte the client sends and expects back.
const PING: u8 = 0x5a;

async fn mp_serve(incoming: mp::Connecting) -> Res<()> {
    let conn = incoming.await.map_err(|e| format!("accept: {e:?}"))?;
    let (mut send, mut recv) = conn.accept_bi().await.map_err(|e| format!("accept_bi: {e:?}"))?;
    let data = recv.read_to_end(16).await?;
    send.write_all(&data).await?;
    send.finish()?;
    // Keep the connection until the client closes it (dropping the handle would close it first).
    let _ = conn.closed().await;
    Ok(())
}

async fn mp_one(client: &mp::Endpoint, server: SocketAddr) -> Res<()> {
    let conn = client
        .connect(server, "localhost")?
        .await
        .map_err(|e| format!("connect: {e:?}"))?;
    let (mut send, mut recv) = conn.open_bi().await.map_err(|e| format!("open_bi: {e:?}"))?;
    send.write_all(&[PING]).await?;
    send.finish()?;
    let echo = recv.read_to_end(16).await?;
    if echo != [PING] {
        return Err(format!("echo {echo:?} instead of [{PING}]").into());
    }
    conn.close(VarInt::from_u32(0), b"");
    Ok(())
}

async fn quinn_serve(incoming: quinn::Incoming) -> Res<()> {
    let conn = incoming.await?;
    let (mut send, mut recv) = conn.accept_bi().await?;
    let data = recv.read_to_end(16).await?;
    send.write_all(&data).await?;
    send.finish()?;
    let _ = conn.closed().await;
    Ok(())
}

async fn quinn_one(client: &quinn::Endpoint, server: SocketAddr) -> Res<()> {
    let conn = client.connect(server, "localhost")?.await?;
    let (mut send, mut recv) = conn.open_bi().await?;
    send.write_all(&[PING]).await?;
    send.finish()?;
    let echo = recv.read_to_end(16).await?;
    if echo != [PING] {
        return Err(format!("echo {echo:?} instead of [{PING}]").into());
    }
    conn.close(quinn::VarInt::from_u32(0), b"");
    Ok(())
}

// ----- a measurement -----

/// Runs `conns` connections with `in_flight` client tasks, each opening connections one after the other while
/// the shared count lasts. Returns the elapsed time.
async fn drive<F, Fut>(conns: usize, in_flight: usize, one: F) -> Res<Duration>
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Res<()>> + Send,
{
    let left = Arc::new(AtomicUsize::new(conns));
    let start = Instant::now();
    let mut tasks = Vec::with_capacity(in_flight);
    for _ in 0..in_flight.min(conns) {
        let left = left.clone();
        let one = one.clone();
        tasks.push(tokio::spawn(async move {
            while left
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok()
            {
                one().await?;
            }
            Res::Ok(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    Ok(start.elapsed())
}

async fn measure(
    stack: Stack,
    c: &Certs,
    conns: usize,
    in_flight: usize,
    resume: bool,
    store: &Arc<CountingStore>,
) -> Res<Duration> {
    match stack {
        Stack::Mpquic | Stack::MpquicSinglePath => {
            let (server, client) = mp_endpoints(c, stack, resume, store)?;
            let addr = server.local_addr();
            let acceptor = {
                let server = server.clone();
                tokio::spawn(async move {
                    while let Some(incoming) = server.accept().await {
                        tokio::spawn(async move {
                            if let Err(e) = mp_serve(incoming).await {
                                eprintln!("mpquic server: {e}");
                            }
                        });
                    }
                })
            };
            let d = drive(conns, in_flight, move || {
                let client = client.clone();
                async move { mp_one(&client, addr).await }
            })
            .await?;
            server.close(VarInt::from_u32(0), b"done");
            let _ = tokio::time::timeout(Duration::from_secs(2), server.wait_idle()).await;
            acceptor.abort();
            Ok(d)
        }
        Stack::Quinn => {
            let (server, client) = quinn_endpoints(c, resume, store)?;
            let addr = server.local_addr()?;
            let acceptor = {
                let server = server.clone();
                tokio::spawn(async move {
                    while let Some(incoming) = server.accept().await {
                        tokio::spawn(async move {
                            if let Err(e) = quinn_serve(incoming).await {
                                eprintln!("quinn server: {e}");
                            }
                        });
                    }
                })
            };
            let d = drive(conns, in_flight, move || {
                let client = client.clone();
                async move { quinn_one(&client, addr).await }
            })
            .await?;
            server.close(quinn::VarInt::from_u32(0), b"done");
            let _ = tokio::time::timeout(Duration::from_secs(2), server.wait_idle()).await;
            acceptor.abort();
            Ok(d)
        }
    }
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
    println!(
        "handshake_rate: {} connections per measurement, {} run(s), in flight {:?}, {}",
        o.conns,
        o.runs,
        o.in_flight,
        if o.resume {
            "session resumption"
        } else {
            "full handshakes"
        }
    );
    for &in_flight in &o.in_flight {
        let mut rates: Vec<(Stack, Vec<f64>)> = o.stacks.iter().map(|&s| (s, Vec::new())).collect();
        for run in 0..o.runs {
            for (stack, r) in &mut rates {
                let store = CountingStore::new();
                let d = tokio::time::timeout(
                    RUN_TIMEOUT,
                    measure(*stack, &c, o.conns, in_flight, o.resume, &store),
                )
                .await
                .map_err(|_| format!("{}: timed out", stack.name()))??;
                let rate = o.conns as f64 / d.as_secs_f64().max(1e-9);
                let (evicted, longest_run) = {
                    let book = store
                        .book
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    (book.evicted, book.longest_run)
                };
                println!(
                    "in flight {in_flight:>4}, run {}/{}: {:<27} {:>8.3} s {:>8.1} conn/s, resumed {}/{} (offered {}, \
                     {} tickets, {evicted} evicted unused, longest burst {longest_run})",
                    run + 1,
                    o.runs,
                    stack.name(),
                    d.as_secs_f64(),
                    rate,
                    store.server.resumed.load(Ordering::Relaxed),
                    store.taken.load(Ordering::Relaxed) + store.missed.load(Ordering::Relaxed),
                    store.taken.load(Ordering::Relaxed),
                    store.inserted.load(Ordering::Relaxed),
                );
                r.push(rate);
            }
        }
        println!();
        println!(
            "in flight {in_flight}: {:<27} {:>12} {:>8} {:>8}",
            "stack", "median", "min", "max"
        );
        let mut medians = Vec::new();
        for (stack, r) in &mut rates {
            r.sort_by(f64::total_cmp);
            let m = median(r);
            medians.push((*stack, m));
            println!(
                "in flight {in_flight}: {:<27} {:>7.1} c/s {:>8.1} {:>8.1}",
                stack.name(),
                m,
                r.first().copied().unwrap_or(0.0),
                r.last().copied().unwrap_or(0.0)
            );
        }
        let get = |s: Stack| medians.iter().find(|(q, _)| *q == s).map(|(_, m)| *m);
        if let Some(quinn) = get(Stack::Quinn).filter(|q| *q > 0.0) {
            for s in [Stack::Mpquic, Stack::MpquicSinglePath] {
                if let Some(m) = get(s) {
                    println!(
                        "in flight {in_flight}: ratio {} / quinn = {:.2}",
                        s.name(),
                        m / quinn
                    );
                }
            }
        }
        println!();
    }
    Ok(())
}

fn main() -> Res<()> {
    let o = parse_args()?;
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
