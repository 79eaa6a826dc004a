//! Bulk-transfer goodput over loopback: one connection, one unidirectional stream of N bytes, in one process,
//! for mpquic, quinn and noq against themselves and mpquic against each of the others; and two-path runs
//! (127.0.0.1 and 127.0.0.2) for mpquic and noq next to the same transfer on one path.
//!
//! ```text
//! cargo run --release -p mpquic --example bulk_loopback -- [--bytes N] [--runs K] [--mtu M] [--pair P,...]
//! ```
//!
//! - `--bytes N`: stream length (default 256 MiB; suffixes `K`, `M`, `G` are binary: `64M` = 64 MiB).
//! - `--runs K`: runs per measurement (default 3); measurements are interleaved run by run so that drift in
//!   the machine's state affects all of them alike.
//! - Default: **every stack at its defaults** (mpquic's `TransportConfig::default()`, quinn's and noq's default
//!   `TransportConfig`: each its own controller, path-MTU discovery where the stack has it).
//! - `--mtu M`: the pinned comparison instead: every stack sends M-byte UDP payloads (at least 1200) with
//!   path-MTU discovery off and runs CUBIC.
//! - `--pair P,...`: only these measurements (repeatable). Single path, client → server: `mpquic`, `quinn`,
//!   `noq`, `interop` (mpquic → quinn), `mpnoq` (mpquic → noq). Two paths, each as download and upload and
//!   each next to the same run on one path: `mp2-minrtt`, `mp2-roundrobin` (mpquic with that scheduler),
//!   `noq2` (noq multipath). Groups: `single`, `multi`. Default: all.
//! - `--direction download|upload`, `--paths 1|2`: only the two-path measurements of that direction / that
//!   number of paths (for instruction counts of one configuration under callgrind).
//! - `--send-buffer N`: mpquic's per-stream send buffer (`StreamsConfig::send_buffer`).
//! - `--pacer-max-burst P`: mpquic's cap on the pacer's bucket at high rates, in packets
//!   (`RecoveryConfig::pacer_max_burst_packets`; 0: no cap, the behaviour before the cap existed).
//! - `--no-verify`: only count the received bytes instead of comparing them with what was sent.
//! - `BULK_TRACE=1`: every 100 ms, the mpquic sender's path state on stderr.
//!
//! Each run prints the packets the sender sent and declared lost, and the packets the receiver sent (its ACKs,
//! mostly); two-path runs also print the share of the sender's bytes on path 1; mpquic-to-mpquic runs print
//! both ends' socket counters (`Connection::transmit_stats`: system calls, datagrams per GSO batch, flush
//! turns). Every stack uses
//! TLS_AES_128_GCM_SHA256 only; flow control and everything else are each stack's defaults. The data path is
//! zero-copy: the sender hands out `Bytes` slices of one pattern buffer with `write_chunk`, the receiver
//! takes `Bytes` with `read_chunk` and compares them with the pattern in place (or only counts them).
//!
//! The clock starts just before the sender opens the stream (after the handshake, and after path 1 is
//! validated in two-path runs) and stops when the receiver reads the end of the stream; goodput = stream
//! bytes × 8 / that time. Timings are informative only: nothing is asserted about them.

// A benchmark binary: it needs the wall clock.
#![allow(clippy::disallowed_methods)]

mod common;
mod stack_mpquic;
mod stack_noq;
mod stack_quinn;
#[path = "../support/tls.rs"]
mod tls;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mpquic::runtime::{self as mp, VarInt};

use common::{Certs, Received, Res, Settings, certs, pattern, server_addr};

/// One run may not take longer than this.
const RUN_TIMEOUT: Duration = Duration::from_secs(300);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stack {
    Mpquic,
    Quinn,
    Noq,
}

/// An endpoint of any stack.
enum Ep {
    Mp(mp::Endpoint),
    Quinn(quinn::Endpoint),
    Noq(noq::Endpoint),
}

/// A connection of any stack.
enum Conn {
    Mp(mp::Connection),
    Quinn(quinn::Connection),
    Noq(noq::Connection),
}

impl Ep {
    fn server(stack: Stack, c: &Certs, s: &Settings) -> Res<Ep> {
        Ok(match stack {
            Stack::Mpquic => Ep::Mp(stack_mpquic::server(c, s)?),
            Stack::Quinn => Ep::Quinn(stack_quinn::server(c, s)?),
            Stack::Noq => Ep::Noq(stack_noq::server(c, s)?),
        })
    }

    fn client(stack: Stack, c: &Certs, s: &Settings) -> Res<Ep> {
        Ok(match stack {
            Stack::Mpquic => Ep::Mp(stack_mpquic::client(c, s)?),
            Stack::Quinn => Ep::Quinn(stack_quinn::client(c, s)?),
            Stack::Noq => Ep::Noq(stack_noq::client(c, s)?),
        })
    }

    fn local_addr(&self) -> Res<SocketAddr> {
        Ok(match self {
            Ep::Mp(e) => e.local_addr(),
            Ep::Quinn(e) => e.local_addr()?,
            Ep::Noq(e) => e.local_addr()?,
        })
    }

    async fn connect(&self, server: SocketAddr) -> Res<Conn> {
        Ok(match self {
            Ep::Mp(e) => Conn::Mp(stack_mpquic::connect(e, server).await?),
            Ep::Quinn(e) => Conn::Quinn(stack_quinn::connect(e, server).await?),
            Ep::Noq(e) => Conn::Noq(stack_noq::connect(e, server).await?),
        })
    }

    async fn accept(&self) -> Res<Conn> {
        Ok(match self {
            Ep::Mp(e) => Conn::Mp(stack_mpquic::accept(e).await?),
            Ep::Quinn(e) => Conn::Quinn(stack_quinn::accept(e).await?),
            Ep::Noq(e) => Conn::Noq(stack_noq::accept(e).await?),
        })
    }

    /// Lets the connections drain (bounded: a peer that vanished must not hold up the next run).
    async fn wait_idle(&self) {
        let limit = Duration::from_secs(2);
        let _ = match self {
            Ep::Mp(e) => tokio::time::timeout(limit, e.wait_idle()).await,
            Ep::Quinn(e) => tokio::time::timeout(limit, e.wait_idle()).await,
            Ep::Noq(e) => tokio::time::timeout(limit, e.wait_idle()).await,
        };
    }
}

impl Conn {
    async fn open_second_path(&self, client_port: u16, server: SocketAddr) -> Res<()> {
        match self {
            Conn::Mp(c) => stack_mpquic::open_second_path(c, client_port, server).await,
            Conn::Noq(c) => stack_noq::open_second_path(c, server).await,
            Conn::Quinn(_) => Err("quinn has no multipath".into()),
        }
    }

    async fn send(&self, pattern: &Bytes, total: u64) -> Res<()> {
        match self {
            Conn::Mp(c) => stack_mpquic::send(c, pattern, total).await,
            Conn::Quinn(c) => stack_quinn::send(c, pattern, total).await,
            Conn::Noq(c) => stack_noq::send(c, pattern, total).await,
        }
    }

    async fn receive(&self, pattern: &Bytes, verify: bool) -> Res<Received> {
        match self {
            Conn::Mp(c) => stack_mpquic::receive(c, pattern, verify).await,
            Conn::Quinn(c) => stack_quinn::receive(c, pattern, verify).await,
            Conn::Noq(c) => stack_noq::receive(c, pattern, verify).await,
        }
    }

    fn close(&self) {
        match self {
            Conn::Mp(c) => c.close(VarInt::from_u32(0), b"done"),
            Conn::Quinn(c) => c.close(quinn::VarInt::from_u32(0), b"done"),
            Conn::Noq(c) => c.close(noq::VarInt::from_u32(0), b"done"),
        }
    }

    async fn closed(&self) {
        match self {
            Conn::Mp(c) => drop(c.closed().await),
            Conn::Quinn(c) => drop(c.closed().await),
            Conn::Noq(c) => drop(c.closed().await),
        }
    }

    /// mpquic only: how the connection's datagrams went to the socket (GSO batches, flush turns).
    fn transmit_summary(&self) -> Option<String> {
        match self {
            Conn::Mp(c) => Some(stack_mpquic::transmit_summary(c)),
            Conn::Quinn(_) | Conn::Noq(_) => None,
        }
    }

    /// Packets sent, packets declared lost, share of the sent bytes on path 1 (two-path runs).
    fn sender_stats(&self) -> (u64, u64, Option<f64>) {
        match self {
            Conn::Mp(c) => stack_mpquic::sender_stats(c),
            Conn::Quinn(c) => stack_quinn::sender_stats(c),
            Conn::Noq(c) => stack_noq::sender_stats(c),
        }
    }
}

// ----- what is measured -----

/// A single-path pair, client → server (the client sends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pair {
    MpMp,
    QuinnQuinn,
    NoqNoq,
    MpQuinn,
    MpNoq,
}

impl Pair {
    const ALL: [Pair; 5] = [
        Pair::MpMp,
        Pair::QuinnQuinn,
        Pair::NoqNoq,
        Pair::MpQuinn,
        Pair::MpNoq,
    ];

    fn key(self) -> &'static str {
        match self {
            Pair::MpMp => "mpquic",
            Pair::QuinnQuinn => "quinn",
            Pair::NoqNoq => "noq",
            Pair::MpQuinn => "interop",
            Pair::MpNoq => "mpnoq",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Pair::MpMp => "mpquic -> mpquic",
            Pair::QuinnQuinn => "quinn  -> quinn",
            Pair::NoqNoq => "noq    -> noq",
            Pair::MpQuinn => "mpquic -> quinn",
            Pair::MpNoq => "mpquic -> noq",
        }
    }

    fn stacks(self) -> (Stack, Stack) {
        match self {
            Pair::MpMp => (Stack::Mpquic, Stack::Mpquic),
            Pair::QuinnQuinn => (Stack::Quinn, Stack::Quinn),
            Pair::NoqNoq => (Stack::Noq, Stack::Noq),
            Pair::MpQuinn => (Stack::Mpquic, Stack::Quinn),
            Pair::MpNoq => (Stack::Mpquic, Stack::Noq),
        }
    }
}

/// A two-path configuration (same stack at both ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Multi {
    MpMinRtt,
    MpRoundRobin,
    Noq,
}

impl Multi {
    const ALL: [Multi; 3] = [Multi::MpMinRtt, Multi::MpRoundRobin, Multi::Noq];

    fn key(self) -> &'static str {
        match self {
            Multi::MpMinRtt => "mp2-minrtt",
            Multi::MpRoundRobin => "mp2-roundrobin",
            Multi::Noq => "noq2",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Multi::MpMinRtt => "mpquic minrtt",
            Multi::MpRoundRobin => "mpquic roundrobin",
            Multi::Noq => "noq",
        }
    }

    fn stack(self) -> Stack {
        match self {
            Multi::MpMinRtt | Multi::MpRoundRobin => Stack::Mpquic,
            Multi::Noq => Stack::Noq,
        }
    }

    fn scheduler(self) -> Option<&'static str> {
        match self {
            Multi::MpMinRtt => Some("minrtt"),
            Multi::MpRoundRobin => Some("roundrobin"),
            Multi::Noq => None,
        }
    }
}

/// One measurement of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Measure {
    Single(Pair),
    /// Two-path configuration, download (server sends) or upload, over two paths or one.
    Multi {
        multi: Multi,
        download: bool,
        two_paths: bool,
    },
}

impl Measure {
    fn name(self) -> String {
        match self {
            Measure::Single(p) => p.name().to_owned(),
            Measure::Multi {
                multi,
                download,
                two_paths,
            } => format!(
                "{} {} {}",
                multi.name(),
                if download { "download" } else { "upload" },
                if two_paths { "2 paths" } else { "1 path" }
            ),
        }
    }
}

#[derive(Debug, Clone)]
struct Options {
    measures: Vec<Measure>,
    bytes: u64,
    runs: usize,
    settings: Settings,
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

fn single() -> Vec<Measure> {
    Pair::ALL.into_iter().map(Measure::Single).collect()
}

fn multi(m: Multi) -> Vec<Measure> {
    let mut v = Vec::new();
    for download in [true, false] {
        for two_paths in [false, true] {
            v.push(Measure::Multi {
                multi: m,
                download,
                two_paths,
            });
        }
    }
    v
}

fn measures_for(key: &str) -> Res<Vec<Measure>> {
    if key == "single" {
        return Ok(single());
    }
    if key == "multi" {
        return Ok(Multi::ALL.into_iter().flat_map(multi).collect());
    }
    if let Some(p) = Pair::ALL.into_iter().find(|p| p.key() == key) {
        return Ok(vec![Measure::Single(p)]);
    }
    if let Some(m) = Multi::ALL.into_iter().find(|m| m.key() == key) {
        return Ok(multi(m));
    }
    Err(format!(
        "--pair: one of mpquic, quinn, noq, interop, mpnoq, mp2-minrtt, mp2-roundrobin, noq2, single, multi; not {key}"
    )
    .into())
}

fn parse_args() -> Res<Options> {
    let mut o = Options {
        measures: Vec::new(),
        bytes: 256 << 20,
        runs: 3,
        settings: Settings::default(),
        verify: true,
    };
    let (mut direction, mut paths) = (None, None);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--bytes" => o.bytes = parse_size(&value()?)?,
            "--runs" => o.runs = value()?.parse()?,
            "--mtu" => {
                let mtu: u16 = value()?.parse()?;
                if mtu < 1200 {
                    return Err(format!("--mtu must be at least 1200, not {mtu}").into());
                }
                o.settings.pinned_mtu = Some(mtu);
            }
            "--send-buffer" => o.settings.send_buffer = Some(parse_size(&value()?)?),
            "--pacer-max-burst" => o.settings.pacer_max_burst = Some(value()?.parse()?),
            "--no-verify" => o.verify = false,
            "--direction" => {
                let v = value()?;
                let download = match v.as_str() {
                    "download" => true,
                    "upload" => false,
                    _ => return Err(format!("--direction: download or upload, not {v}").into()),
                };
                direction = Some(download);
            }
            "--paths" => {
                let v = value()?;
                let two = match v.as_str() {
                    "1" => false,
                    "2" => true,
                    _ => return Err(format!("--paths: 1 or 2, not {v}").into()),
                };
                paths = Some(two);
            }
            "--pair" => {
                for key in value()?.split(',') {
                    for m in measures_for(key)? {
                        if !o.measures.contains(&m) {
                            o.measures.push(m);
                        }
                    }
                }
            }
            "-h" | "--help" => {
                println!(
                    "bulk_loopback [--bytes N[K|M|G]] [--runs K] [--mtu M] [--pair P,...] [--direction download|upload] [--paths 1|2] [--send-buffer N] [--pacer-max-burst P] [--no-verify]"
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    if o.measures.is_empty() {
        o.measures = measures_for("single")?;
        o.measures.extend(measures_for("multi")?);
    }
    // `--direction` and `--paths` keep only those two-path measurements (single-path pairs stay).
    o.measures.retain(|m| match *m {
        Measure::Single(_) => true,
        Measure::Multi {
            download, two_paths, ..
        } => direction.is_none_or(|d| d == download) && paths.is_none_or(|p| p == two_paths),
    });
    if o.measures.is_empty() {
        return Err("no measurement left after --direction / --paths".into());
    }
    if o.bytes == 0 || o.runs == 0 {
        return Err("--bytes and --runs must be positive".into());
    }
    Ok(o)
}

// ----- one transfer -----

struct Outcome {
    duration: Duration,
    packets: u64,
    lost: u64,
    receiver_packets: u64,
    path1_share: Option<f64>,
    /// mpquic's sender and receiver socket counters.
    transmits: Option<(String, String)>,
}

/// One transfer on fresh endpoints and a fresh connection.
async fn run(m: Measure, c: &Certs, o: &Options, pattern: &Bytes) -> Res<Outcome> {
    let mut s = o.settings.clone();
    let (client_stack, server_stack, download, two_paths) = match m {
        Measure::Single(p) => {
            let (cl, sv) = p.stacks();
            (cl, sv, false, false)
        }
        Measure::Multi {
            multi,
            download,
            two_paths,
        } => {
            s.scheduler = multi.scheduler();
            // Both the one-path and the two-path runs bind the wildcard address and offer multipath: only
            // the second path differs.
            s.two_paths = true;
            (multi.stack(), multi.stack(), download, two_paths)
        }
    };
    let server = Ep::server(server_stack, c, &s)?;
    let client = Ep::client(client_stack, c, &s)?;
    let addr = server_addr(server.local_addr()?);
    let (cc, sc) = tokio::join!(client.connect(addr), server.accept());
    let (cc, sc) = (cc?, sc?);
    if two_paths {
        cc.open_second_path(client.local_addr()?.port(), addr).await?;
    }
    let (sender, receiver) = if download { (&sc, &cc) } else { (&cc, &sc) };
    let start = Instant::now();
    let (sent, received) = tokio::join!(sender.send(pattern, o.bytes), async {
        let r = receiver.receive(pattern, o.verify).await;
        receiver.close();
        r
    });
    sent?;
    // The receiver closes once it has everything; the sender waits for that.
    sender.closed().await;
    let (packets, lost, path1_share) = sender.sender_stats();
    let receiver_packets = receiver.sender_stats().0;
    let transmits = sender.transmit_summary().zip(receiver.transmit_summary());
    drop((cc, sc));
    client.wait_idle().await;
    server.wait_idle().await;
    let received = received?;
    if received.bytes != o.bytes {
        return Err(format!("{}: received {} of {} bytes", m.name(), received.bytes, o.bytes).into());
    }
    if !received.intact {
        return Err(format!("{}: received data differs from what was sent", m.name()).into());
    }
    Ok(Outcome {
        duration: received.end.saturating_duration_since(start),
        packets,
        lost,
        receiver_packets,
        path1_share,
        transmits,
    })
}

// ----- the report -----

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

struct Series {
    measure: Measure,
    rates: Vec<f64>,
    shares: Vec<f64>,
}

impl Series {
    fn median(&self) -> f64 {
        let mut r = self.rates.clone();
        r.sort_by(f64::total_cmp);
        median(&r)
    }
}

fn print_single(results: &[Series]) {
    let rows: Vec<_> = results
        .iter()
        .filter(|s| matches!(s.measure, Measure::Single(_)))
        .collect();
    if rows.is_empty() {
        return;
    }
    println!();
    println!("{:<17} {:>12} {:>12} {:>12}", "pair", "median", "min", "max");
    for s in &rows {
        let mut r = s.rates.clone();
        r.sort_by(f64::total_cmp);
        println!(
            "{:<17} {:>7.1} Mb/s {:>7.1} Mb/s {:>7.1} Mb/s",
            s.measure.name(),
            median(&r),
            r.first().copied().unwrap_or(0.0),
            r.last().copied().unwrap_or(0.0)
        );
    }
    let get = |p: Pair| {
        results
            .iter()
            .find(|s| s.measure == Measure::Single(p))
            .map(Series::median)
            .filter(|m| *m > 0.0)
    };
    let ratios = [
        (Pair::MpMp, Pair::QuinnQuinn),
        (Pair::MpMp, Pair::NoqNoq),
        (Pair::MpQuinn, Pair::QuinnQuinn),
        (Pair::MpNoq, Pair::NoqNoq),
    ];
    let mut first = true;
    for (a, b) in ratios {
        if let (Some(x), Some(y)) = (get(a), get(b)) {
            if first {
                println!();
                first = false;
            }
            println!("ratio (medians): {} / {} = {:.2}", a.name(), b.name(), x / y);
        }
    }
}

fn print_multi(results: &[Series]) {
    let find = |multi, download, two_paths| {
        results.iter().find(|s| {
            s.measure
                == Measure::Multi {
                    multi,
                    download,
                    two_paths,
                }
        })
    };
    let mut header = false;
    for multi in Multi::ALL {
        for download in [true, false] {
            let (Some(one), Some(two)) = (find(multi, download, false), find(multi, download, true)) else {
                continue;
            };
            if !header {
                println!();
                println!(
                    "{:<30} {:>14} {:>14} {:>8} {:>14}",
                    "two paths (127.0.0.1 + .2)", "1 path median", "2 paths median", "ratio", "path 1 share"
                );
                header = true;
            }
            let (m1, m2) = (one.median(), two.median());
            let mut shares = two.shares.clone();
            shares.sort_by(f64::total_cmp);
            let share = if shares.is_empty() {
                "-".to_owned()
            } else {
                format!("{:.0} %", median(&shares) * 100.0)
            };
            println!(
                "{:<30} {:>9.1} Mb/s {:>9.1} Mb/s {:>8.2} {:>14}",
                format!(
                    "{} {}",
                    multi.name(),
                    if download { "download" } else { "upload" }
                ),
                m1,
                m2,
                if m1 > 0.0 { m2 / m1 } else { 0.0 },
                share
            );
        }
    }
}

async fn bench(o: Options) -> Res<()> {
    let c = certs()?;
    let pattern = pattern();
    println!(
        "bulk_loopback: {} bytes ({:.1} MiB) per run, {} run(s), {}, {}",
        o.bytes,
        o.bytes as f64 / f64::from(1u32 << 20),
        o.runs,
        match o.settings.pinned_mtu {
            Some(m) => format!("pinned: {m}-byte UDP payloads, path-MTU discovery off, CUBIC"),
            None => "every stack at its defaults".to_owned(),
        },
        if o.verify { "verified" } else { "counted only" }
    );
    if let Some(p) = o.settings.pacer_max_burst {
        println!("mpquic pacer_max_burst_packets = {p}");
    }
    let mut results: Vec<Series> = o
        .measures
        .iter()
        .map(|&measure| Series {
            measure,
            rates: Vec::new(),
            shares: Vec::new(),
        })
        .collect();
    for i in 0..o.runs {
        for s in &mut results {
            let out = tokio::time::timeout(RUN_TIMEOUT, run(s.measure, &c, &o, &pattern))
                .await
                .map_err(|_| format!("{}: run timed out", s.measure.name()))??;
            let rate = mbit_per_s(o.bytes, out.duration);
            let share = out.path1_share.map_or(String::new(), |x| {
                format!(", {:.0} % of the bytes on path 1", x * 100.0)
            });
            println!(
                "run {}/{} {:<40} {:>8.3} s {:>9.1} Mbit/s  (sender: {} packets, {} lost; receiver: {} packets{share})",
                i + 1,
                o.runs,
                s.measure.name(),
                out.duration.as_secs_f64(),
                rate,
                out.packets,
                out.lost,
                out.receiver_packets,
            );
            if let Some((tx, rx)) = &out.transmits {
                println!("    sender {tx}\n    receiver {rx}");
            }
            s.rates.push(rate);
            s.shares.extend(out.path1_share);
        }
    }
    print_single(&results);
    print_multi(&results);
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
