//! The README's main job: a real multipath transfer over loopback through two emulated paths.
//!
//! Starts, in one process, an [`mpquic-perf` server](crate::perf::server), an [emulator](crate::netem) with
//! one path per link (by default 40 Mbit/s with a 10 ms RTT and 20 Mbit/s with a 40 ms RTT, queues of one
//! bandwidth-delay product), and a [client](crate::perf::client) that sends its handshake over path 0, opens a
//! second path through the other emulated link, and transfers for the given time. Everything goes through
//! real UDP sockets on 127.0.0.1; the emulator is the only thing between client and server. It prints the
//! per-interval lines, the per-path and total goodput, and how the total compares to the emulated capacity.
//! Interval and path figures count bytes delivered (acknowledged by the server for an upload, received for a
//! download; docs/perf.md), so an interval's sum never exceeds what the emulated paths carried.

use std::net::SocketAddr;
use std::time::Duration;

use mpquic_netsim::link::LinkConfig;

use crate::netem::{Emulator, EmulatorConfig, PathConfig, PathCounters};
use crate::perf::client::{self, ClientOptions};
use crate::perf::display::Display;
use crate::perf::report::Report;
use crate::perf::server::{Server, ServerOptions};
use crate::perf::wire::{Amount, Direction};
use crate::perf::{PerfError, tls};

/// One emulated path: rate and round-trip time (split evenly between the two directions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DemoLink {
    /// Bits per second, each direction.
    pub rate_bps: u64,
    /// Round-trip propagation delay.
    pub rtt: Duration,
}

/// What the demo runs.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// The emulated paths, in path-ID order.
    pub links: Vec<DemoLink>,
    /// Transfer duration.
    pub duration: Duration,
    /// Download (server sends) instead of upload.
    pub download: bool,
    /// Congestion controller of the sender.
    pub cc: String,
    /// Scheduler of the sender.
    pub scheduler: String,
    /// Parallel streams.
    pub streams: u16,
    /// Seconds between interval lines (0: none).
    pub interval: f64,
    /// Interval lines, progress and summary on stdout.
    pub verbose: bool,
    /// Live progress line (stdout is a terminal).
    pub progress: bool,
}

impl Default for DemoOptions {
    fn default() -> DemoOptions {
        DemoOptions {
            links: vec![
                DemoLink {
                    rate_bps: 40_000_000,
                    rtt: Duration::from_millis(10),
                },
                DemoLink {
                    rate_bps: 20_000_000,
                    rtt: Duration::from_millis(40),
                },
            ],
            duration: Duration::from_secs(10),
            download: false,
            cc: "cubic".to_owned(),
            scheduler: "minrtt".to_owned(),
            streams: 1,
            interval: 1.0,
            verbose: true,
            progress: false,
        }
    }
}

/// What the demo measured.
#[derive(Debug, Clone)]
pub struct DemoResult {
    /// The client's report.
    pub report: Report,
    /// The emulator's counters per path.
    pub emulator: Vec<PathCounters>,
    /// Sum of the emulated rates (bits per second).
    pub capacity_bps: u64,
}

/// Runs the demo.
pub async fn run(options: &DemoOptions) -> Result<DemoResult, PerfError> {
    let loopback = SocketAddr::from(([127, 0, 0, 1], 0));
    let (server_tls, cert) = tls::server(None)?;
    let server = Server::bind(
        ServerOptions {
            bind: loopback,
            cc: options.cc.clone(),
            scheduler: options.scheduler.clone(),
            one_off: true,
            json: false,
            quiet: true,
        },
        server_tls,
        None,
    )?;
    let mut emulation = EmulatorConfig::new(server.local_addr());
    for l in &options.links {
        let link = LinkConfig::new(l.rate_bps, l.rtt / 2);
        emulation = emulation.with_path(PathConfig::symmetric(loopback, link));
    }
    let emulator = Emulator::start(emulation)
        .await
        .map_err(|e| PerfError::Usage(format!("emulator: {e}")))?;
    let fronts = emulator.front_addrs();
    let server_task = tokio::spawn(server.serve());

    let direction = if options.download {
        Direction::Download
    } else {
        Direction::Upload
    };
    let first = fronts
        .first()
        .copied()
        .ok_or_else(|| PerfError::Usage("no path".to_owned()))?;
    let client_options = ClientOptions {
        server: first,
        server_name: "localhost".to_owned(),
        direction,
        amount: Amount::Time(options.duration),
        streams: options.streams,
        paths: fronts.iter().map(|&f| (loopback, Some(f), false)).collect(),
        cc: options.cc.clone(),
        scheduler: options.scheduler.clone(),
        interval: options.interval,
    };
    let client_tls = tls::client(tls::Trust::Certs(cert.into_iter().collect()))?;
    let mut display = if options.verbose {
        let tenths = (options.duration.as_secs_f64() * 10.0) as u64;
        Display::text(direction, options.progress, Some(tenths))
    } else {
        Display::quiet(direction)
    };
    if options.verbose {
        display.print(&describe(options, &fronts));
    }
    let result = client::run(&client_options, client_tls, None, &mut display).await;
    display.finish();
    let counters = emulator.shutdown().await;
    let _ = tokio::time::timeout(Duration::from_secs(2), server_task).await;
    Ok(DemoResult {
        report: result?,
        emulator: counters,
        capacity_bps: options.links.iter().map(|l| l.rate_bps).sum(),
    })
}

fn describe(options: &DemoOptions, fronts: &[SocketAddr]) -> String {
    let mut s = format!(
        "multipath {} over {} emulated paths on loopback for {:.0} s (cc {}, scheduler {}):",
        if options.download { "download" } else { "upload" },
        options.links.len(),
        options.duration.as_secs_f64(),
        options.cc,
        options.scheduler
    );
    for (k, (l, f)) in options.links.iter().zip(fronts).enumerate() {
        s.push_str(&format!(
            "\n  path {k}: {} Mbit/s, RTT {} ms, via emulator port {}",
            l.rate_bps as f64 / 1e6,
            l.rtt.as_millis(),
            f.port()
        ));
    }
    s
}
