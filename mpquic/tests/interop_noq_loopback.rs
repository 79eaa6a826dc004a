//! Multipath interop with the real noq 1.4 (its tokio runtime and noq-udp sockets) over loopback, in both roles:
//! `mpc_*` = mpquic client / noq server, `noqc_*` = noq client / mpquic server.
//!
//! The client binds the wildcard address and opens path 1 from 127.0.0.2 (path 0 runs from 127.0.0.1); the
//! server listens on 127.0.0.1 (mpquic's on the wildcard address). Data always goes on a unidirectional stream
//! opened by the sender and is checked with SHA-256 by the receiver; byte shares per path come from the sender's
//! own per-path statistics. Cases: (1) multipath negotiated, path 1 validated by both; (2) 20 MB sent by mpquic
//! (upload as client, download as server), each path carrying at least 20 % of the bytes; (3) path 1 abandoned
//! mid-transfer by the client and by the server; (4) mpquic marks path 1 backup and keeps its data off it
//! (noq, being advisory, may not: its share is printed); (5) path 1 runs through a UDP relay in front of the
//! server that starts dropping everything mid-transfer: the transfer completes over path 0. In (3) and (5) the
//! sender holds back the second half of its data until path 1 is abandoned or blackholed, so that half can only
//! cross path 0. Every test is bounded by a timeout; the file takes 1–2 s (3–4 s with three copies at once on
//! two cores).
//!
//! Results: `docs/interop-noq.md`. Logs: `RUST_LOG=mpquic=debug,noq=debug,noq_proto=debug cargo test -p mpquic
//! --test interop_noq_loopback -- --nocapture`.

// Test code: helpers outside `#[test]` functions fail loudly too.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use common::{certs, init_tracing, pattern, rustls_client, rustls_server, sha256};
use mpquic::proto::frame::PathAbandon;
use mpquic::runtime::{self as mp, PathEvent, PathId, PathStatus};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::UdpSocket;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The client's second address (path 1).
const LOCAL2: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
/// Paths noq accepts (mpquic's default `initial_max_path_id` is 7: 8 paths).
const NOQ_PATHS: u32 = 8;
const MB: usize = 1_000_000;
/// Every test's bound.
const TEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Bound on one wait for a condition inside a test.
const WAIT: Duration = Duration::from_secs(15);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// mpquic client, noq server.
    MpClient,
    /// noq client, mpquic server.
    NoqClient,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stack {
    Mp,
    Noq,
}

fn wildcard() -> SocketAddr {
    "0.0.0.0:0".parse().unwrap()
}

/// noq's defaults (no path idle timeout: it is not needed to get past a blackholed path here) with multipath.
fn noq_transport() -> Arc<noq::TransportConfig> {
    let mut t = noq::TransportConfig::default();
    t.max_concurrent_multipath_paths(NOQ_PATHS);
    Arc::new(t)
}

fn npath(id: u32) -> noq::PathId {
    noq::PathId::from(id)
}

/// Polls `cond` every few milliseconds until it holds; panics with `what` after [`WAIT`].
async fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !cond() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The next mpquic path event matching `want`, skipping others.
async fn mp_event(conn: &mp::Connection, want: impl Fn(&PathEvent) -> bool) -> PathEvent {
    tokio::time::timeout(WAIT, async {
        loop {
            let ev = conn.path_event().await.unwrap();
            if want(&ev) {
                return ev;
            }
        }
    })
    .await
    .expect("mpquic path event")
}

// ----- the relay in front of the server for path 1 -----

/// A UDP relay: datagrams to `addr` go to the server from a socket of its own, the server's answers go back
/// to whoever last sent to `addr`. Once `blackhole` is set it drops everything, both ways.
struct Relay {
    addr: SocketAddr,
    /// The address the server sees path 1 come from.
    back_addr: SocketAddr,
    blackhole: Arc<AtomicBool>,
    /// Datagrams dropped since the blackhole began.
    dropped: Arc<AtomicU64>,
    tasks: [JoinHandle<()>; 2],
}

impl Relay {
    async fn start(server: SocketAddr) -> Relay {
        let front = Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
        let back = Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
        let addr = front.local_addr().unwrap();
        let back_addr = back.local_addr().unwrap();
        let blackhole = Arc::new(AtomicBool::new(false));
        let dropped = Arc::new(AtomicU64::new(0));
        let client: Arc<Mutex<Option<SocketAddr>>> = Arc::default();
        let up = {
            let (front, back, blackhole, dropped, client) = (
                front.clone(),
                back.clone(),
                blackhole.clone(),
                dropped.clone(),
                client.clone(),
            );
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65_536];
                while let Ok((n, from)) = front.recv_from(&mut buf).await {
                    if blackhole.load(Ordering::Relaxed) {
                        dropped.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    *client.lock().unwrap() = Some(from);
                    let _ = back.send_to(&buf[..n], server).await;
                }
            })
        };
        let down = {
            let blackhole = blackhole.clone();
            let dropped = dropped.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65_536];
                while let Ok((n, _)) = back.recv_from(&mut buf).await {
                    if blackhole.load(Ordering::Relaxed) {
                        dropped.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    let to = *client.lock().unwrap();
                    if let Some(to) = to {
                        let _ = front.send_to(&buf[..n], to).await;
                    }
                }
            })
        };
        Relay {
            addr,
            back_addr,
            blackhole,
            dropped,
            tasks: [up, down],
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

// ----- a connected pair with path 1 validated -----

struct Pair {
    role: Role,
    mp_ep: mp::Endpoint,
    mp: mp::Connection,
    noq_ep: noq::Endpoint,
    noq: noq::Connection,
    /// noq's handle on path 1 (keeps its statistics after it is abandoned).
    noq_path1: noq::Path,
    relay: Option<Relay>,
}

impl Pair {
    fn client(&self) -> Stack {
        match self.role {
            Role::MpClient => Stack::Mp,
            Role::NoqClient => Stack::Noq,
        }
    }

    fn server(&self) -> Stack {
        match self.role {
            Role::MpClient => Stack::Noq,
            Role::NoqClient => Stack::Mp,
        }
    }

    /// Handshake, multipath checks, and path 1 from 127.0.0.2 validated by both sides (case 1).
    /// With `relay`, path 1 goes through a [`Relay`] in front of the server.
    async fn connect(role: Role, relay: bool) -> Pair {
        Pair::connect_with(role, relay, "minrtt").await
    }

    /// [`Pair::connect`] with mpquic's scheduler `scheduler` (a registry name).
    async fn connect_with(role: Role, relay: bool, scheduler: &str) -> Pair {
        let mp_transport = || mp::TransportConfig {
            scheduler: scheduler.to_owned(),
            ..mp::TransportConfig::default()
        };
        init_tracing();
        let c = certs();
        let noq_server_cfg = || {
            let crypto = noq::crypto::rustls::QuicServerConfig::try_from(rustls_server(&c)).unwrap();
            let mut cfg = noq::ServerConfig::with_crypto(Arc::new(crypto));
            cfg.transport_config(noq_transport());
            cfg
        };
        let noq_client_cfg = || {
            let crypto = noq::crypto::rustls::QuicClientConfig::try_from(rustls_client(&c)).unwrap();
            let mut cfg = noq::ClientConfig::new(Arc::new(crypto));
            cfg.transport_config(noq_transport());
            cfg
        };
        let (mp_ep, mp, noq_ep, noq, server) = match role {
            Role::MpClient => {
                let noq_ep = noq::Endpoint::server(noq_server_cfg(), "127.0.0.1:0".parse().unwrap()).unwrap();
                let server = noq_ep.local_addr().unwrap();
                let accept = {
                    let ep = noq_ep.clone();
                    tokio::spawn(async move { ep.accept().await.unwrap().await.unwrap() })
                };
                let mp_ep = mp::Endpoint::client(wildcard()).unwrap();
                mp_ep.set_default_client_config(mp::ClientConfig {
                    tls: rustls_client(&c),
                    transport: mp_transport(),
                });
                let mp = mp_ep.connect(server, "localhost").unwrap().await.unwrap();
                let noq = accept.await.unwrap();
                (mp_ep, mp, noq_ep, noq, server)
            }
            Role::NoqClient => {
                let mp_ep = mp::Endpoint::server(
                    mp::ServerConfig {
                        tls: rustls_server(&c),
                        transport: mp_transport(),
                    },
                    wildcard(),
                )
                .unwrap();
                let server = SocketAddr::from(([127, 0, 0, 1], mp_ep.local_addr().port()));
                let accept = {
                    let ep = mp_ep.clone();
                    tokio::spawn(async move { ep.accept().await.unwrap().await.unwrap() })
                };
                let noq_ep = noq::Endpoint::client(wildcard()).unwrap();
                let noq = noq_ep
                    .connect_with(noq_client_cfg(), server, "localhost")
                    .unwrap()
                    .await
                    .unwrap();
                let mp = accept.await.unwrap();
                (mp_ep, mp, noq_ep, noq, server)
            }
        };
        assert!(mp.multipath(), "mpquic: multipath not negotiated");
        assert!(noq.is_multipath_enabled(), "noq: multipath not negotiated");

        let relay = if relay {
            Some(Relay::start(server).await)
        } else {
            None
        };
        let remote1 = relay.as_ref().map_or(server, |r| r.addr);
        // The client opens path 1 from 127.0.0.2 (once the server's path-1 connection IDs have arrived).
        let deadline = tokio::time::Instant::now() + WAIT;
        let noq_path1 = match role {
            Role::MpClient => {
                let local2 = SocketAddr::new(LOCAL2, mp_ep.local_addr().port());
                let id = loop {
                    match mp.open_path(Some(local2), remote1, PathStatus::Available) {
                        Ok(id) => break id,
                        Err(mp::OpenPathError::NoConnectionIds(_) | mp::OpenPathError::NotNegotiated)
                            if tokio::time::Instant::now() < deadline =>
                        {
                            tokio::time::sleep(Duration::from_millis(5)).await;
                        }
                        Err(e) => panic!("mpquic open_path: {e}"),
                    }
                };
                assert_eq!(id, PathId(1));
                mp_event(&mp, |e| *e == PathEvent::Validated { path: id }).await;
                // noq validated the path once it got the answer to its PATH_CHALLENGE on it.
                wait_for("noq server to validate path 1", || {
                    noq.path_stats(npath(1))
                        .is_some_and(|s| s.frame_rx.path_response >= 1)
                })
                .await;
                noq.path(npath(1)).expect("noq server has no path 1")
            }
            Role::NoqClient => {
                let path = loop {
                    let tuple = noq::FourTuple::new(remote1, Some(LOCAL2));
                    match tokio::time::timeout(WAIT, noq.open_path(tuple, noq::PathStatus::Available))
                        .await
                        .expect("noq open_path")
                    {
                        Ok(p) => break p,
                        Err(noq::PathError::RemoteCidsExhausted)
                            if tokio::time::Instant::now() < deadline =>
                        {
                            tokio::time::sleep(Duration::from_millis(5)).await;
                        }
                        Err(e) => panic!("noq open_path: {e}"),
                    }
                };
                assert_eq!(path.id(), npath(1));
                let ev = mp_event(&mp, |e| matches!(e, PathEvent::Opened { .. })).await;
                let PathEvent::Opened { path: id, remote } = ev else {
                    unreachable!()
                };
                assert_eq!(id, PathId(1));
                match &relay {
                    Some(r) => assert_eq!(remote, r.back_addr, "mpquic server's path 1 peer"),
                    None => assert_eq!(remote.ip(), LOCAL2, "mpquic server's path 1 peer"),
                }
                mp_event(&mp, |e| *e == PathEvent::Validated { path: PathId(1) }).await;
                path
            }
        };
        // Until its first RTT sample (noq acknowledges the PATH_CHALLENGE within its ack delay), mpquic's path
        // 1 has the 333 ms initial RTT and its scheduler puts data there only when path 0 is full: wait for one,
        // so that transfers start with both paths in play.
        wait_for("an RTT sample on mpquic's path 1", || {
            mp.path_stats(PathId(1))
                .is_some_and(|s| s.latest_rtt < Duration::from_millis(300))
        })
        .await;
        let st = mp.path_stats(PathId(1)).unwrap();
        assert!(st.validated && !st.abandoned);
        if role == Role::MpClient {
            assert_eq!(st.local.map(|a| a.ip()), Some(LOCAL2), "mpquic client's path 1");
        }
        Pair {
            role,
            mp_ep,
            mp,
            noq_ep,
            noq,
            noq_path1,
            relay,
        }
    }

    /// mpquic's bytes sent on `path`.
    fn mp_sent(&self, path: u32) -> u64 {
        self.mp.path_stats(PathId(path)).map_or(0, |s| s.bytes_sent)
    }

    /// Starts sending `len` bytes from `sender` on a unidirectional stream. With `gate`, the sender stops after
    /// that fraction of the data until [`Transfer::release`].
    fn send(&self, sender: Stack, len: usize, seed: u8, gate: Option<f64>) -> Transfer {
        let data = Bytes::from(pattern(len, seed));
        let digest = sha256(&data);
        let progress = Arc::new(AtomicUsize::new(0));
        let split = gate.map_or(len, |f| (len as f64 * f) as usize);
        let (first, rest) = (data.slice(..split), data.slice(split..));
        let (open, gate_rx) = oneshot::channel::<()>();
        let open = gate.map(|_| open);
        let (tx, rx) = match sender {
            Stack::Mp => {
                let (a, b) = (self.mp.clone(), self.noq.clone());
                let tx = tokio::spawn(async move {
                    send_gated(a.open_uni().await.unwrap(), first, rest, gate_rx).await;
                });
                let p = progress.clone();
                let rx = tokio::spawn(async move { hash_received(b.accept_uni().await.unwrap(), p).await });
                (tx, rx)
            }
            Stack::Noq => {
                let (a, b) = (self.noq.clone(), self.mp.clone());
                let tx = tokio::spawn(async move {
                    send_gated(a.open_uni().await.unwrap(), first, rest, gate_rx).await;
                });
                let p = progress.clone();
                let rx = tokio::spawn(async move { hash_received(b.accept_uni().await.unwrap(), p).await });
                (tx, rx)
            }
        };
        Transfer {
            sender,
            len,
            digest,
            progress,
            open,
            tx,
            rx,
        }
    }

    /// Closes path 1 from `by`'s side and waits until mpquic reports it abandoned.
    async fn close_path1(&self, by: Stack) {
        match by {
            Stack::Mp => self
                .mp
                .close_path(PathId(1), PathAbandon::APPLICATION_ABANDON_PATH)
                .unwrap(),
            Stack::Noq => self.noq_path1.close().unwrap(),
        }
        mp_event(&self.mp, |e| *e == PathEvent::Abandoned { path: PathId(1) }).await;
    }

    fn report(&self, what: &str) {
        for s in self.mp.all_path_stats() {
            eprintln!(
                "[{what}] {:?} mpquic path {}: sent {} B, received {} B, lost {} pkts, srtt {:?}, backup {}, abandoned {}",
                self.role,
                s.path.0,
                s.bytes_sent,
                s.bytes_received,
                s.packets_lost,
                s.srtt,
                s.backup,
                s.abandoned
            );
        }
        for id in [0, 1] {
            let s = if id == 1 {
                Some(self.noq_path1.stats())
            } else {
                self.noq.path_stats(npath(id))
            };
            if let Some(s) = s {
                eprintln!(
                    "[{what}] {:?} noq path {id}: sent {} B, received {} B, lost {} pkts, rtt {:?}, PATH_ACK tx {}, PATH_ABANDON rx/tx {}/{}",
                    self.role,
                    s.udp_tx.bytes,
                    s.udp_rx.bytes,
                    s.lost_packets,
                    s.rtt,
                    s.frame_tx.path_acks,
                    s.frame_rx.path_abandon,
                    s.frame_tx.path_abandon
                );
            }
        }
    }

    fn close(self) {
        self.mp.close(0u32.into(), b"done");
        self.noq.close(0u32.into(), b"done");
        drop(self.relay);
        drop(self.mp_ep);
        drop(self.noq_ep);
    }
}

struct Transfer {
    sender: Stack,
    len: usize,
    digest: [u8; 32],
    /// Bytes the receiver has read so far.
    progress: Arc<AtomicUsize>,
    /// Lets a gated sender go on.
    open: Option<oneshot::Sender<()>>,
    tx: JoinHandle<()>,
    rx: JoinHandle<[u8; 32]>,
}

impl Transfer {
    /// Waits until the receiver has read `fraction` of the data.
    async fn reached(&self, fraction: f64) {
        let want = (self.len as f64 * fraction) as usize;
        let p = self.progress.clone();
        wait_for(&format!("{:?} → {want} B", self.sender), || {
            p.load(Ordering::Relaxed) >= want
        })
        .await;
    }

    /// Lets a gated sender write the rest; returns the bytes the receiver had read by then.
    fn release(&mut self) -> usize {
        let at = self.progress.load(Ordering::Relaxed);
        self.open.take().expect("not gated").send(()).unwrap();
        at
    }

    /// Waits for the end of the stream and checks length and SHA-256.
    async fn done(self) {
        let digest = tokio::time::timeout(TEST_TIMEOUT, self.rx)
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "{:?}'s transfer stalled at {} of {} B",
                    self.sender,
                    self.progress.load(Ordering::Relaxed),
                    self.len
                )
            })
            .unwrap();
        self.tx.abort();
        assert_eq!(self.progress.load(Ordering::Relaxed), self.len, "length");
        assert_eq!(digest, self.digest, "SHA-256 of what {:?} sent", self.sender);
    }
}

async fn bounded(f: impl std::future::Future<Output = ()>) {
    tokio::time::timeout(TEST_TIMEOUT, f)
        .await
        .expect("test timed out");
}

// ----- case 1: multipath negotiated, path 1 validated by both -----

async fn second_path(role: Role) {
    let p = Pair::connect(role, false).await;
    // Path 1 from 127.0.0.2 is known on both sides and carries traffic both ways.
    let s = p.noq_path1.stats();
    assert!(s.udp_rx.bytes > 0 && s.udp_tx.bytes > 0, "noq path 1: {s:?}");
    let m = p.mp.path_stats(PathId(1)).unwrap();
    assert!(m.bytes_received > 0 && m.bytes_sent > 0);
    match role {
        Role::MpClient => assert_eq!(m.local.unwrap().ip(), LOCAL2),
        Role::NoqClient => assert_eq!(m.remote.ip(), LOCAL2),
    }
    assert_eq!(p.mp.paths(), vec![PathId(0), PathId(1)]);
    p.report("second path");
    p.close();
}

/// Writes `first`, waits for the gate if `rest` is not empty, writes `rest` and ends the stream, then keeps it
/// until the task is dropped (the peer gets every byte).
async fn send_gated<S: AsyncWrite + Unpin>(mut s: S, first: Bytes, rest: Bytes, gate: oneshot::Receiver<()>) {
    if rest.is_empty() {
        s.write_all(&first).await.unwrap();
    } else {
        // Before a path event the sender is application-limited (16 KiB per millisecond, ~16 MB/s), so that the
        // scheduler has room on both paths for the whole first part. Written at once, the first part can leave
        // in a few milliseconds, mostly on path 0: one early loss (noq's single socket overflowing under a
        // path-0 burst) leaves path 1 with a 11 kB window for the whole of it.
        for chunk in first.chunks(16 * 1024) {
            s.write_all(chunk).await.unwrap();
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        gate.await.unwrap();
        s.write_all(&rest).await.unwrap();
    }
    s.shutdown().await.unwrap();
    std::future::pending::<()>().await;
}

/// Reads a stream to its end, counting bytes into `progress`; returns its SHA-256.
async fn hash_received<R: AsyncRead + Unpin>(mut r: R, progress: Arc<AtomicUsize>) -> [u8; 32] {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = r.read(&mut buf).await.unwrap();
        if n == 0 {
            return h.finalize().into();
        }
        h.update(&buf[..n]);
        progress.fetch_add(n, Ordering::Relaxed);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpc_second_path_validated() {
    bounded(second_path(Role::MpClient)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn noqc_second_path_validated() {
    bounded(second_path(Role::NoqClient)).await;
}

// ----- case 2: 20 MB sent by mpquic over both paths -----

/// Round-robin, not the default minRTT: on loopback nothing limits either path, so under minRTT the split
/// follows whichever window fills first, and a path the scheduler seldom needs does not grow its window
/// (RFC 9002 §7.8) — path 1 then carries a few per cent. Round-robin makes "both paths carry the transfer" a
/// property of the scheduler; aggregation under capacity limits is tested in netsim
/// (`netsim/tests/engine/multipath.rs`) and by the interop runner's mp-transfer case.
async fn transfer_on_both_paths(role: Role) {
    const SIZE: usize = 20 * MB;
    let p = Pair::connect_with(role, false, "roundrobin").await;
    let (b0, b1) = (p.mp_sent(0), p.mp_sent(1));
    p.send(Stack::Mp, SIZE, 1, None).done().await;
    let (d0, d1) = (p.mp_sent(0) - b0, p.mp_sent(1) - b1);
    p.report("20 MB");
    let total = d0 + d1;
    assert!(total >= SIZE as u64);
    assert!(
        d0 * 5 >= total && d1 * 5 >= total,
        "mpquic as {:?}: path 0 {d0} B, path 1 {d1} B (each should be >= 20 %)",
        p.client()
    );
    p.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpc_upload_20mb_on_both_paths() {
    bounded(transfer_on_both_paths(Role::MpClient)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn noqc_download_20mb_on_both_paths() {
    bounded(transfer_on_both_paths(Role::NoqClient)).await;
}

// ----- case 3: path 1 abandoned mid-transfer by the client, by the server -----

const ABANDON_SIZE: usize = 8 * MB;

/// Round-robin so that path 1 carries data before it is abandoned (see [`transfer_on_both_paths`]).
async fn abandon_mid_transfer(role: Role, by_client: bool) {
    let p = Pair::connect_with(role, false, "roundrobin").await;
    let by = if by_client { p.client() } else { p.server() };
    // The second half of the data is written only once path 1 is abandoned.
    let mut t = p.send(Stack::Mp, ABANDON_SIZE, 2, Some(0.5));
    t.reached(0.3).await;
    assert!(
        p.mp_sent(1) > MB as u64 / 10,
        "path 1 carried only {} B before the abandon; path 0 {} B; path 1 {:?}",
        p.mp_sent(1),
        p.mp_sent(0),
        p.mp.path_stats(PathId(1))
    );
    p.close_path1(by).await;
    let (on0, on1) = (p.mp_sent(0), p.mp_sent(1));
    let at = t.release();
    t.done().await;
    p.report(&format!("{by:?} abandons path 1"));
    eprintln!("[abandon] {role:?}, by {by:?}: mpquic had sent {on1} B on path 1 before the abandon");
    // The second half, written after the abandon, went over path 0; mpquic sent next to nothing on path 1
    // (its statistics go 3 PTO after the abandon).
    let (d0, d1) = (p.mp_sent(0) - on0, p.mp_sent(1).saturating_sub(on1));
    eprintln!(
        "[abandon] {role:?}, by {by:?}: receiver had {at} B at the abandon; since then mpquic sent {d0} B on \
         path 0, {d1} B on path 1"
    );
    assert!(
        d0 >= ABANDON_SIZE as u64 / 2,
        "path 0 carried only {d0} B after the abandon"
    );
    assert!(
        d1 <= 64 * 1024,
        "mpquic sent {d1} B on path 1 after abandoning it"
    );
    // PATH_ABANDON went from the closing side to the other, and mpquic keeps path 1 only as abandoned.
    let noq = p.noq.stats();
    match by {
        Stack::Mp => assert!(noq.frame_rx.path_abandon >= 1, "noq never got PATH_ABANDON"),
        Stack::Noq => assert!(noq.frame_tx.path_abandon >= 1, "noq never sent PATH_ABANDON"),
    }
    assert!(p.mp.path_stats(PathId(1)).is_none_or(|s| s.abandoned));
    p.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpc_client_abandons_path1_mid_transfer() {
    bounded(abandon_mid_transfer(Role::MpClient, true)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpc_server_abandons_path1_mid_transfer() {
    bounded(abandon_mid_transfer(Role::MpClient, false)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn noqc_client_abandons_path1_mid_transfer() {
    bounded(abandon_mid_transfer(Role::NoqClient, true)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn noqc_server_abandons_path1_mid_transfer() {
    bounded(abandon_mid_transfer(Role::NoqClient, false)).await;
}

// ----- case 4: mpquic marks path 1 backup -----

async fn mpquic_marks_backup(role: Role) {
    const SIZE: usize = 8 * MB;
    const NOQ_SIZE: usize = 4 * MB;
    let p = Pair::connect(role, false).await;
    p.mp.set_path_status(PathId(1), PathStatus::Backup).unwrap();
    wait_for("noq to receive PATH_STATUS_BACKUP", || {
        p.noq.stats().frame_rx.path_status_backup >= 1
    })
    .await;
    assert!(p.mp.path_stats(PathId(1)).unwrap().backup);
    let (b0, b1) = (p.mp_sent(0), p.mp_sent(1));
    let noq_b1 = p.noq_path1.stats().udp_tx.bytes;
    // mpquic sends 8 MB while noq sends 4 MB: mpquic's path 1 carries only acknowledgements of noq's data.
    let ours = p.send(Stack::Mp, SIZE, 3, None);
    let theirs = p.send(Stack::Noq, NOQ_SIZE, 4, None);
    ours.done().await;
    theirs.done().await;
    let (d0, d1) = (p.mp_sent(0) - b0, p.mp_sent(1) - b1);
    let noq_d1 = p.noq_path1.stats().udp_tx.bytes - noq_b1;
    p.report("mpquic marks path 1 backup");
    eprintln!(
        "[backup] {role:?}: mpquic sent {d0} B on path 0, {d1} B on backup path 1; noq sent {noq_d1} B of its \
         {NOQ_SIZE} B on path 1"
    );
    assert!(d0 >= SIZE as u64);
    assert!(
        d1 * 50 <= SIZE as u64,
        "mpquic put {d1} B on its backup path 1 (path 0: {d0} B)"
    );
    p.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpc_mpquic_marks_path1_backup() {
    bounded(mpquic_marks_backup(Role::MpClient)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn noqc_mpquic_marks_path1_backup() {
    bounded(mpquic_marks_backup(Role::NoqClient)).await;
}

// ----- case 5: path 1 blackholed mid-transfer -----

/// Round-robin so that path 1 carries data before it is blackholed (see [`transfer_on_both_paths`]).
async fn blackhole_mid_transfer(role: Role) {
    const SIZE: usize = 8 * MB;
    let p = Pair::connect_with(role, true, "roundrobin").await;
    // The second half of the data is written only once path 1 is blackholed.
    let mut t = p.send(Stack::Mp, SIZE, 5, Some(0.5));
    t.reached(0.3).await;
    let relay = p.relay.as_ref().unwrap();
    relay.blackhole.store(true, Ordering::Relaxed);
    let (on0, on1) = (p.mp_sent(0), p.mp_sent(1));
    assert!(
        on1 > MB as u64 / 10,
        "path 1 carried only {on1} B before the blackhole (path 0: {on0} B); path 1 {:?}",
        p.mp.path_stats(PathId(1))
    );
    let at = t.release();
    t.done().await;
    p.report("path 1 blackholed");
    let (d0, d1) = (p.mp_sent(0) - on0, p.mp_sent(1) - on1);
    eprintln!(
        "[blackhole] {role:?}: receiver had {at} B at the blackhole; since then mpquic sent {d0} B on path 0, \
         {d1} B on path 1; relay dropped {} datagrams; mpquic paths now {:?}",
        relay.dropped.load(Ordering::Relaxed),
        p.mp.paths()
    );
    // The second half, written after the blackhole, can only have gone over path 0.
    assert!(
        d0 >= SIZE as u64 / 2,
        "path 0 carried only {d0} B after the blackhole"
    );
    p.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpc_path1_blackholed_mid_transfer() {
    bounded(blackhole_mid_transfer(Role::MpClient)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn noqc_path1_blackholed_mid_transfer() {
    bounded(blackhole_mid_transfer(Role::NoqClient)).await;
}
