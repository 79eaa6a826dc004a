//! `mpquic-netem` end to end on 127.0.0.1: the emulator started in-process through its library API, a plain
//! UDP "server" (a sink that records what arrives, optionally echoing it), and a UDP client. Checks rate,
//! delay, loss, queue drops, up/down in both directions, distinct 4-tuples per path, the schedule, the
//! control port, and the binary's exit codes.
//!
//! Tolerances are generous enough for a loaded two-core machine but every check can fail: rates and counts
//! are computed by hand from the configuration.

// Test helpers outside `#[test]` functions: the same allowances as the tests themselves.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss
)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mpquic_netsim::link::{LinkConfig, LossModel, QueueLimit};
use mpquic_tools::netem::{Emulator, EmulatorConfig, EmulatorHandle, PathConfig};
use tokio::net::UdpSocket;
use tokio::time::{Instant, sleep, timeout};

const ANY: &str = "127.0.0.1:0";

fn any() -> SocketAddr {
    ANY.parse().unwrap()
}

/// What the server saw: arrival time, source and length of each datagram.
type Log = Arc<Mutex<Vec<(Instant, SocketAddr, usize)>>>;

/// A UDP server on 127.0.0.1 that logs every datagram and, if `echo`, sends it back to its source.
async fn server(echo: bool) -> (SocketAddr, Log, Arc<UdpSocket>) {
    let socket = Arc::new(UdpSocket::bind(ANY).await.unwrap());
    let addr = socket.local_addr().unwrap();
    let log: Log = Arc::default();
    let (s, l) = (Arc::clone(&socket), Arc::clone(&log));
    tokio::spawn(async move {
        let mut buf = vec![0u8; 65_535];
        loop {
            let Ok((len, from)) = s.recv_from(&mut buf).await else {
                continue;
            };
            l.lock().unwrap().push((Instant::now(), from, len));
            if echo {
                let _ = s.send_to(&buf[..len], from).await;
            }
        }
    });
    (addr, log, socket)
}

async fn start(server: SocketAddr, links: Vec<LinkConfig>) -> EmulatorHandle {
    let mut config = EmulatorConfig::new(server).with_seed(42);
    for link in links {
        config = config.with_path(PathConfig::symmetric(any(), link));
    }
    Emulator::start(config).await.unwrap()
}

/// A client socket "connected" to path `k`'s front address.
async fn client(handle: &EmulatorHandle, k: usize) -> UdpSocket {
    let socket = UdpSocket::bind(ANY).await.unwrap();
    socket.connect(handle.front_addrs()[k]).await.unwrap();
    socket
}

/// Sends a ping and waits up to `wait` for the echo; returns the round-trip time.
async fn ping(socket: &UdpSocket, wait: Duration) -> Option<Duration> {
    let mut buf = [0u8; 2048];
    let sent = Instant::now();
    socket.send(&[7u8; 100]).await.unwrap();
    match timeout(wait, socket.recv(&mut buf)).await {
        Ok(Ok(_)) => Some(sent.elapsed()),
        _ => None,
    }
}

fn link(rate_bps: u64, delay_ms: u64) -> LinkConfig {
    LinkConfig::new(rate_bps, Duration::from_millis(delay_ms))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_is_emulated_within_five_percent() {
    const RATE: u64 = 20_000_000;
    const PAYLOAD: usize = 1200;
    let (addr, log, _s) = server(false).await;
    let handle = start(
        addr,
        vec![link(RATE, 5).with_queue(QueueLimit::Packets { packets: 64 })],
    )
    .await;
    let socket = client(&handle, 0).await;
    // Offer twice the rate for 2.2 s, catching up after each timer tick so the average holds under load.
    let offered_bps = 2.0 * RATE as f64;
    let begin = Instant::now();
    let mut sent = 0u64;
    while begin.elapsed() < Duration::from_millis(2200) {
        let due = (begin.elapsed().as_secs_f64() * offered_bps / (8.0 * PAYLOAD as f64)) as u64;
        while sent < due {
            let _ = socket.send(&[0u8; PAYLOAD]).await;
            sent += 1;
        }
        sleep(Duration::from_millis(1)).await;
    }
    sleep(Duration::from_millis(100)).await;
    let log = log.lock().unwrap().clone();
    let first = log.first().expect("nothing arrived").0;
    // A 1.5 s window once the queue is full: 0.4 s to 1.9 s after the first arrival.
    let (from, to) = (
        first + Duration::from_millis(400),
        first + Duration::from_millis(1900),
    );
    let bytes: usize = log
        .iter()
        .filter(|(t, ..)| *t >= from && *t < to)
        .map(|(.., len)| len)
        .sum();
    // Each datagram costs its payload + 28 bytes of IPv4/UDP headers on the emulated wire.
    let expected = RATE as f64 / 8.0 * 1.5 * PAYLOAD as f64 / (PAYLOAD + 28) as f64;
    let ratio = bytes as f64 / expected;
    eprintln!("rate {RATE} bit/s: received {bytes} B in 1.5 s, expected {expected:.0} B, ratio {ratio:.4}");
    let stats = handle.shutdown().await;
    eprintln!("sent {sent} in {:?}; {:?}", begin.elapsed(), stats[0].uplink);
    assert!(
        (0.95..=1.05).contains(&ratio),
        "received {bytes} B in 1.5 s, expected {expected:.0} B (ratio {ratio:.3}); offered {sent}; {stats:?}"
    );
    assert!(
        stats[0].uplink.dropped_queue.packets > 0,
        "offered twice the rate: the queue must drop"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_trip_is_twice_the_one_way_delay() {
    let (addr, _log, _s) = server(true).await;
    let handle = start(addr, vec![link(20_000_000, 20)]).await;
    let socket = client(&handle, 0).await;
    let mut rtts = Vec::new();
    for _ in 0..5 {
        rtts.push(ping(&socket, Duration::from_secs(1)).await.expect("ping lost"));
    }
    rtts.sort();
    eprintln!("RTTs through 2 x 20 ms: {rtts:?}");
    // 2 × 20 ms of propagation, plus 2 × 128 B at 20 Mbit/s (51 µs each way).
    let floor = Duration::from_micros(40_102);
    assert!(rtts[0] >= floor, "RTT below the configured delay: {rtts:?}");
    assert!(
        rtts[0] <= Duration::from_millis(44),
        "best RTT too high: {rtts:?}"
    );
    handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bernoulli_loss_within_binomial_tolerance() {
    const N: u64 = 2000;
    const P: f64 = 0.1;
    let (addr, log, _s) = server(false).await;
    let lossy = link(1_000_000_000, 1)
        .with_queue(QueueLimit::Packets { packets: 10_000 })
        .with_loss(LossModel::Bernoulli { p: P });
    let handle = start(addr, vec![lossy]).await;
    let socket = client(&handle, 0).await;
    for i in 0..N {
        socket.send(&[1u8; 100]).await.unwrap();
        if i % 50 == 49 {
            sleep(Duration::from_millis(2)).await;
        }
    }
    sleep(Duration::from_millis(200)).await;
    let stats = handle.shutdown().await;
    let up = stats[0].uplink;
    assert_eq!(up.received.packets, N, "the emulator missed datagrams: {up:?}");
    assert_eq!(up.forwarded.packets + up.dropped_loss.packets, N, "{up:?}");
    let sigma = (N as f64 * P * (1.0 - P)).sqrt();
    let lost = up.dropped_loss.packets as f64;
    assert!(
        (lost - N as f64 * P).abs() <= 4.5 * sigma,
        "lost {lost} of {N} at p = {P}"
    );
    assert_eq!(log.lock().unwrap().len() as u64, up.forwarded.packets);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn burst_beyond_the_queue_is_dropped_and_counted() {
    let (addr, log, _s) = server(false).await;
    // 1 Mbit/s: 9.8 ms per 1228-byte datagram, so a burst of 50 finds at most 10 queued.
    let handle = start(
        addr,
        vec![link(1_000_000, 1).with_queue(QueueLimit::Packets { packets: 10 })],
    )
    .await;
    let socket = client(&handle, 0).await;
    for _ in 0..50 {
        socket.send(&[2u8; 1200]).await.unwrap();
    }
    sleep(Duration::from_millis(300)).await;
    let stats = handle.shutdown().await;
    let up = stats[0].uplink;
    assert_eq!(up.received.packets, 50, "{up:?}");
    assert_eq!(up.forwarded.packets + up.dropped_queue.packets, 50, "{up:?}");
    assert!(up.dropped_queue.packets >= 35, "{up:?}");
    assert!((10..=15).contains(&up.forwarded.packets), "{up:?}");
    assert_eq!(log.lock().unwrap().len() as u64, up.forwarded.packets);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn down_path_drops_both_directions_while_the_other_forwards() {
    let (addr, _log, server_socket) = server(true).await;
    let handle = start(addr, vec![link(10_000_000, 5), link(10_000_000, 5)]).await;
    let (c0, c1) = (client(&handle, 0).await, client(&handle, 1).await);
    let wait = Duration::from_millis(300);
    assert!(ping(&c0, wait).await.is_some() && ping(&c1, wait).await.is_some());

    handle.set_up(0, false).unwrap();
    assert_eq!(ping(&c0, wait).await, None, "path 0 is down");
    assert!(ping(&c1, wait).await.is_some(), "path 1 still forwards");
    // Server → client on path 0 is dropped too.
    let back0 = handle.back_addrs()[0];
    server_socket.send_to(b"downlink", back0).await.unwrap();
    let mut buf = [0u8; 64];
    assert!(
        timeout(wait, c0.recv(&mut buf)).await.is_err(),
        "downlink of a down path delivered"
    );
    let stats = handle.stats();
    assert!(!stats[0].up && stats[1].up);
    assert!(stats[0].uplink.dropped_down.packets >= 1, "{:?}", stats[0]);
    assert!(stats[0].downlink.dropped_down.packets >= 1, "{:?}", stats[0]);

    handle.set_up(0, true).unwrap();
    assert!(ping(&c0, wait).await.is_some(), "path 0 is back up");
    handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_path_is_a_distinct_four_tuple_at_the_server() {
    let (addr, log, _s) = server(false).await;
    let handle = start(addr, vec![link(10_000_000, 1), link(10_000_000, 1)]).await;
    for k in 0..2 {
        client(&handle, k).await.send(b"hello").await.unwrap();
    }
    sleep(Duration::from_millis(100)).await;
    let mut sources: Vec<SocketAddr> = log.lock().unwrap().iter().map(|(_, from, _)| *from).collect();
    sources.sort();
    let mut backs = handle.back_addrs();
    backs.sort();
    assert_eq!(sources.len(), 2);
    assert_ne!(sources[0], sources[1]);
    assert_eq!(
        sources.iter().map(SocketAddr::port).collect::<Vec<_>>(),
        backs.iter().map(SocketAddr::port).collect::<Vec<_>>()
    );
    handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedule_and_control_port() {
    use mpquic_tools::netem::{PathSelector, ScheduledEvent};
    let (addr, _log, _s) = server(true).await;
    let mut config = EmulatorConfig::new(addr)
        .with_path(PathConfig::symmetric(any(), link(10_000_000, 1)))
        .with_path(PathConfig::symmetric(any(), link(10_000_000, 1)));
    config.events.push(ScheduledEvent {
        at: Duration::from_millis(100),
        path: PathSelector::One(1),
        up: false,
    });
    config.control = Some(any());
    let handle = Emulator::start(config).await.unwrap();
    let controller = handle.controller();
    assert!(controller.is_up(1).unwrap());
    sleep(Duration::from_millis(250)).await;
    assert!(!controller.is_up(1).unwrap(), "scheduled down at 100 ms");

    let control = UdpSocket::bind(ANY).await.unwrap();
    control.connect(handle.control_addr().unwrap()).await.unwrap();
    let mut buf = vec![0u8; 65_535];
    let mut ask = async |command: &str| {
        control.send(command.as_bytes()).await.unwrap();
        let len = timeout(Duration::from_secs(2), control.recv(&mut buf))
            .await
            .unwrap()
            .unwrap();
        String::from_utf8_lossy(&buf[..len]).into_owned()
    };
    assert_eq!(ask("down 0\nup 1").await, "ok\nok\n");
    assert!(!controller.is_up(0).unwrap() && controller.is_up(1).unwrap());
    assert!(ask("down 7").await.starts_with("error: no path 7"));
    assert!(ask("reboot").await.contains("up PATH|all"));
    let stats = ask("stats").await;
    let parsed: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(parsed.as_array().unwrap().len(), 2);
    assert_eq!(parsed[0]["up"], false);
    handle.shutdown().await;
}

#[test]
fn binary_rejects_bad_arguments_with_exit_code_2() {
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_mpquic-netem"))
            .args(args)
            .output()
            .unwrap()
    };
    for (args, expected) in [
        (
            &["--server", "127.0.0.1:4433", "--path", "rate=40mbps"][..],
            "kbit, mbit, gbit",
        ),
        (
            &["--server", "127.0.0.1:4433", "--path", "rate=1mbit,colour=red"][..],
            "valid keys are",
        ),
        (&["--server", "127.0.0.1:4433"][..], "--path"),
        (&["--path", "rate=1mbit"][..], "--server"),
        (&["--bogus"][..], "--bogus"),
    ] {
        let out = run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

#[test]
fn binary_runs_for_a_duration_and_prints_json() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mpquic-netem"))
        .args([
            "--server",
            "127.0.0.1:9",
            "--listen",
            ANY,
            "--path",
            "rate=1mbit,delay=1ms",
        ])
        .args(["--path", "rate=2mbit", "--duration", "300ms", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("path 1: client -> 127.0.0.1:"),
        "banner on stderr under --json: {stderr}"
    );
    let parsed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(parsed.as_array().unwrap().len(), 2);
    assert_eq!(parsed[1]["uplink"]["forwarded"]["packets"], 0);
}
