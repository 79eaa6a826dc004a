//! The `mpquic-netem` command line: arguments (clap), how they combine with a configuration file into an
//! [`EmulatorConfig`], and the run loop (banner, periodic and final counters, signals, duration).
//!
//! Exit codes: 0 after a clean stop (Ctrl-C or `--duration`), 1 when the emulator cannot start (a socket
//! cannot be bound), 2 for a bad command line or configuration file.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use mpquic_netsim::link::{JitterDistribution, LinkConfig, LossModel, QueueLimit};
use mpquic_netsim::units::format_duration;

use super::config::{EmulatorConfig, MAX_EVENT_TIME, MAX_OVERHEAD, PathConfig, ScheduledEvent};
use super::emulator::{Controller, Emulator};
use super::error::NetemError;
use super::file::FileConfig;
use super::spec::{self, PathSpec};
use super::stats::{PathCounters, format_table};
use super::units;

const AFTER_HELP: &str = "\
PATH SPECS (--path), comma-separated KEY=VALUE:
  rate=40mbit        serialisation rate: bit, kbit, mbit, gbit per second (required;
                     1bit to 1000gbit)
  delay=10ms         one-way propagation delay: ns, us, ms, s (default 0; at most 3600s)
  jitter=2ms         extra delay, uniform in [0, 2ms]; or jitter=normal:MEAN:STDDEV (each
                     at most 3600s)
  reorder=true       let jitter reorder datagrams (default false: FIFO)
  loss=1%            Bernoulli loss (or 0.01); Gilbert-Elliott: loss=ge:P:R[:K:H]
  queue=64           drop-tail limit: packets (64, 64pkt; up to 10^6), bytes (150KB, 1MB;
                     up to 1000MB) or 1.5bdp (up to 1000bdp)
                     (default 1bdp of the path's RTT = uplink + downlink delay; 64 packets if 0)
  corrupt=P          probability of one flipped bit;  duplicate=P  of a second copy
  listen=IP:PORT     this path's front address (default: --listen port + path index)
  state=down         start with the path down (default up)
  A link key applies to both directions; prefix it with up. (client->server) or down.
  (server->client) to set one direction: rate=20mbit,down.rate=5mbit,up.delay=30ms.
  Each key once per spec (up.delay and uplink.delay are the same key); no empty items.
  1 to 64 paths.
  Rates and sizes use powers of 1000. Each datagram costs its UDP payload + 28 bytes
  (IPv4/UDP headers; 48 for IPv6) on the emulated wire (--overhead changes that).

PATHS: numbered from 0. Path k forwards client datagrams received on its front address to
  the server from its own ephemeral back port, so the server sees one 4-tuple per path;
  server replies go back through the downlink to the last client address seen on path k.

CONFIG FILE (--config), TOML, links in the netsim scenario syntax:
  server = \"127.0.0.1:4433\"      # listen, seed, control: optional, like the flags
  [[paths]]
  listen = \"127.0.0.1:5000\"      # optional
  link = { rate_bps = 40_000_000, delay = \"10ms\" }         # both directions
  downlink = { rate_bps = 10_000_000, loss = { kind = \"bernoulli\", p = 0.01 } }
  [[events]]
  at = \"5s\"
  path = 0                       # or \"all\"
  action = \"down\"                # or \"up\"
  uplink/downlink keys replace those of link; see examples/netem/two-paths.toml and
  netsim/SCENARIOS.md. --path adds paths after the file's; flags override the file.

UP/DOWN: a down path drops everything in both directions, including what it holds.
  --down 1@5s --up 1@8s    scheduled, from the start (PATH may be all)
  --control 127.0.0.1:5999 UDP text commands, one per line, one reply per datagram:
                           down 1 | up 1 | down all | up all | toggle 1 | stats (JSON)
                           e.g.  echo 'down 1' | nc -u -w1 127.0.0.1 5999
  SIGUSR1                  takes down the lowest-numbered path that is up
  SIGUSR2                  brings every path up

COUNTERS (per path and direction; --interval and at exit; --json for the final ones):
  rx/fwd: datagrams and payload bytes received / forwarded; queue, loss, down: dropped by
  the queue, the loss model, or because the path was down; other: no client yet, send error.

EXAMPLES:
  mpquic-netem --server 127.0.0.1:4433 --path rate=40mbit,delay=10ms \\
      --path rate=20mbit,delay=40ms,loss=0.01 --listen 127.0.0.1:5000
  mpquic-netem --server 127.0.0.1:4433 --path rate=50mbit,delay=5ms,down.rate=10mbit,queue=2bdp \\
      --path rate=10mbit,delay=30ms,jitter=5ms --down 1@5s --up 1@8s --interval 1 --duration 15s
  mpquic-netem --config examples/netem/two-paths.toml --control 127.0.0.1:5999 --json

Logs go to stderr; set RUST_LOG=info to see path changes and client addresses.";

/// `mpquic-netem`'s arguments.
#[derive(Debug, Parser)]
#[command(
    name = "mpquic-netem",
    version,
    about = "User-space UDP link emulator: relays a client to one server over N emulated paths \
             (rate, delay, jitter, loss, queue, up/down per direction)",
    after_help = AFTER_HELP
)]
pub struct Args {
    /// The server every path relays to.
    #[arg(long, value_name = "IP:PORT")]
    pub server: Option<SocketAddr>,
    /// One path, as comma-separated KEY=VALUE settings (repeat for more paths; see PATH SPECS).
    #[arg(long = "path", value_name = "SPEC", value_parser = spec::parse_path)]
    pub paths: Vec<PathSpec>,
    /// Front address of path 0; path k listens on its port + k (port 0: every path picks a free port)
    /// [default: 127.0.0.1:5000].
    #[arg(long, value_name = "IP:PORT")]
    pub listen: Option<SocketAddr>,
    /// A TOML file of paths and events (see CONFIG FILE).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Seed of the links' random streams (loss, jitter, impairments), 0 to 2^64 - 1 [default: 1].
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = |s: &str| mpquic_netsim::units::parse_int_in(s, 0, u64::MAX))]
    pub seed: Option<u64>,
    /// Take a path down at a time from the start (at most a year): PATH@TIME, e.g. 1@5s or all@2s
    /// (repeatable).
    #[arg(long, value_name = "PATH@TIME", allow_hyphen_values = true,
          value_parser = |s: &str| spec::parse_event(s, false))]
    pub down: Vec<ScheduledEvent>,
    /// Bring a path up at a time from the start (at most a year): PATH@TIME, e.g. 1@8s (repeatable).
    #[arg(long, value_name = "PATH@TIME", allow_hyphen_values = true,
          value_parser = |s: &str| spec::parse_event(s, true))]
    pub up: Vec<ScheduledEvent>,
    /// Listen for text commands on this UDP address (see UP/DOWN).
    #[arg(long, value_name = "IP:PORT")]
    pub control: Option<SocketAddr>,
    /// Stop after this long, e.g. 30s or 1.5s; more than 0 and at most a year [default: run until Ctrl-C].
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true, value_parser = parse_run_duration)]
    pub duration: Option<Duration>,
    /// Print the counters every SECS seconds (e.g. 1 or 0.5; 0.001 to 86400).
    #[arg(long, value_name = "SECS", allow_negative_numbers = true, value_parser = parse_interval)]
    pub interval: Option<Duration>,
    /// Print the final counters as JSON on stdout (everything else then goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// Header bytes added to each datagram's payload on the emulated wire, 0 to 65535 [default: 28 for
    /// IPv4, 48 for IPv6].
    #[arg(long, value_name = "BYTES", allow_negative_numbers = true, value_parser = parse_overhead)]
    pub overhead: Option<usize>,
}

fn parse_overhead(text: &str) -> Result<usize, String> {
    let max = u64::try_from(MAX_OVERHEAD).unwrap_or(u64::MAX);
    mpquic_netsim::units::parse_int_in(text, 0, max)
        .map(|n| usize::try_from(n).unwrap_or(MAX_OVERHEAD))
        .map_err(|e| format!("{e} (bytes)"))
}

fn parse_run_duration(text: &str) -> Result<Duration, String> {
    let d = units::parse_duration(text).map_err(|e| e.to_string())?;
    if d.is_zero() || d > MAX_EVENT_TIME {
        return Err(format!(
            "{} is out of range: expected more than 0 and at most a year (31536000s)",
            format_duration(d)
        ));
    }
    Ok(d)
}

fn parse_interval(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.001 && *s <= 86_400.0)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| {
            format!("expected a number of seconds between 0.001 and 86400, e.g. 1 or 0.5, not {text:?}")
        })
}

/// The default front address of path 0.
const DEFAULT_LISTEN: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 5000);

/// Path `k`'s default front address: `base` with its port + k (or port 0 when `base`'s is 0).
fn path_listen(base: SocketAddr, k: usize) -> Result<SocketAddr, String> {
    if base.port() == 0 {
        return Ok(base);
    }
    let port = u16::try_from(k)
        .ok()
        .and_then(|k| base.port().checked_add(k))
        .ok_or_else(|| {
            format!(
                "path {k}: --listen port {} + {k} is past 65535: give a lower port",
                base.port()
            )
        })?;
    Ok(SocketAddr::new(base.ip(), port))
}

impl Args {
    /// Combines the arguments and the configuration file (if any) into an emulator configuration; the
    /// error is one line for the user.
    pub fn to_config(&self) -> Result<EmulatorConfig, String> {
        let file = match &self.config {
            Some(path) => Some(FileConfig::load(path).map_err(|e| e.to_string())?),
            None => None,
        };
        let file_name = self
            .config
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let file_server = file.as_ref().and_then(|f| f.server);
        let server = self
            .server
            .or(file_server)
            .ok_or("no server: give --server IP:PORT (or server = \"IP:PORT\" in --config)")?;
        let base = self
            .listen
            .or(file.as_ref().and_then(|f| f.listen))
            .unwrap_or(DEFAULT_LISTEN);
        let mut config = EmulatorConfig::new(server);
        let mut file_events = Vec::new();
        config.seed = self.seed.or(file.as_ref().and_then(|f| f.seed)).unwrap_or(1);
        config.control = self.control.or(file.as_ref().and_then(|f| f.control));
        config.overhead = self.overhead;
        if let Some(file) = file {
            for p in file.paths {
                let listen = match p.listen {
                    Some(l) => l,
                    None => path_listen(base, config.paths.len())?,
                };
                config.paths.push(PathConfig {
                    listen,
                    uplink: p.uplink,
                    downlink: p.downlink,
                });
            }
            file_events = file.events;
        }
        for p in &self.paths {
            let listen = path_listen(base, config.paths.len())?;
            config.paths.push(p.clone().into_path(listen));
        }
        // Each event is checked where it was written, so that the error names the file entry or the option.
        let paths = config.paths.len();
        let blame = |where_: String, e: NetemError| match e {
            NetemError::UnknownPath { path, last } => {
                format!("{where_}: no path {path}: paths are numbered 0 to {last}, or all")
            }
            other => format!("{where_}: {other}"),
        };
        if paths > 0 {
            for (i, event) in file_events.iter().enumerate() {
                event.check(paths).map_err(|e| {
                    let field = if matches!(e, NetemError::UnknownPath { .. }) {
                        "path"
                    } else {
                        "at"
                    };
                    blame(format!("{file_name}: events[{i}].{field}"), e)
                })?;
            }
            for (option, events) in [("--down", &self.down), ("--up", &self.up)] {
                for event in events.iter() {
                    event.check(paths).map_err(|e| {
                        blame(
                            format!("{option} {}@{}", event.path, format_duration(event.at)),
                            e,
                        )
                    })?;
                }
            }
        }
        config.events.extend(file_events);
        config.events.extend(self.down.iter().chain(&self.up).copied());
        config.validate().map_err(|e| match e {
            NetemError::NoPath => {
                "no path: give at least one --path SPEC (or [[paths]] in --config)".to_owned()
            }
            NetemError::OutOfRange { ref what, .. } if what == "overhead" => format!("--overhead: {e}"),
            NetemError::OutOfRange { ref what, .. } if what == "paths" => {
                format!("--path/[[paths]]: {e}")
            }
            other => other.to_string(),
        })?;
        Ok(config)
    }
}

/// A short human description of a link direction: `40 Mbit/s 10ms q=1bdp loss=1%`.
fn describe(link: &LinkConfig) -> String {
    #[allow(clippy::cast_precision_loss)]
    let rate = link.rate_bps as f64;
    let mut s = if rate >= 1e9 {
        format!("{} Gbit/s", rate / 1e9)
    } else if rate >= 1e6 {
        format!("{} Mbit/s", rate / 1e6)
    } else {
        format!("{} kbit/s", rate / 1e3)
    };
    s.push_str(&format!(" {}", format_duration(link.delay)));
    match &link.jitter.distribution {
        JitterDistribution::None => {}
        JitterDistribution::Uniform { max } => s.push_str(&format!(" jitter=0..{}", format_duration(*max))),
        JitterDistribution::Normal { mean, stddev } => s.push_str(&format!(
            " jitter=N({},{})",
            format_duration(*mean),
            format_duration(*stddev)
        )),
    }
    match &link.queue {
        QueueLimit::Packets { packets } => s.push_str(&format!(" q={packets}pkt")),
        QueueLimit::Bytes { bytes } => s.push_str(&format!(" q={bytes}B")),
        QueueLimit::Bdp { multiple, .. } => s.push_str(&format!(" q={multiple}bdp")),
    }
    match &link.loss {
        LossModel::None => {}
        LossModel::Bernoulli { p } => s.push_str(&format!(" loss={}%", p * 100.0)),
        LossModel::GilbertElliott { p, r, k, h } => s.push_str(&format!(" loss=ge:{p}:{r}:{k}:{h}")),
        LossModel::Burst { p, burst } => s.push_str(&format!(" loss={}%x{burst}", p * 100.0)),
    }
    if !link.up {
        s.push_str(" (down)");
    }
    s
}

/// Writes a line to the human output (stdout, or stderr under `--json`).
fn say(json: bool, text: &str) {
    if json {
        eprint!("{text}");
    } else {
        print!("{text}");
        let _ = std::io::stdout().flush();
    }
}

/// Parses the command line, runs the emulator, and returns the exit code (see the module documentation).
pub fn main() -> ExitCode {
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .try_init();
    let args: Args = match crate::cli_exit::parse_or_usage_error("mpquic-netem") {
        Ok(a) => a,
        Err(code) => return code,
    };
    let config = match args.to_config() {
        Ok(c) => c,
        Err(message) => {
            eprintln!("mpquic-netem: {message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(config, &args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Takes down the lowest-numbered path that is up (SIGUSR1).
fn take_next_down(controller: &Controller) {
    let next = (0..controller.path_count()).find(|&k| controller.is_up(k).unwrap_or(false));
    match next {
        Some(k) => {
            let _ = controller.set_up(k, false);
            tracing::warn!(path = k, "SIGUSR1: path down");
        }
        None => tracing::warn!("SIGUSR1: every path is already down"),
    }
}

#[cfg(unix)]
async fn signal_loop(controller: Controller) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut usr1), Ok(mut usr2)) = (
        signal(SignalKind::user_defined1()),
        signal(SignalKind::user_defined2()),
    ) else {
        tracing::warn!("cannot install SIGUSR1/SIGUSR2 handlers");
        return;
    };
    loop {
        tokio::select! {
            _ = usr1.recv() => take_next_down(&controller),
            _ = usr2.recv() => {
                let _ = controller.set_up_selected(super::config::PathSelector::All, true);
                tracing::warn!("SIGUSR2: every path up");
            }
        }
    }
}

#[cfg(not(unix))]
async fn signal_loop(_controller: Controller) {
    std::future::pending::<()>().await;
}

async fn run(config: EmulatorConfig, args: &Args) -> Result<(), NetemError> {
    let json = args.json;
    let describe_paths: Vec<(String, String)> = config
        .paths
        .iter()
        .map(|p| (describe(&p.uplink), describe(&p.downlink)))
        .collect();
    let server = config.server;
    let seed = config.seed;
    let handle = Emulator::start(config).await?;
    let mut banner = format!(
        "mpquic-netem: relaying to {server} over {} path(s), seed {seed}\n",
        describe_paths.len()
    );
    for ((k, (front, back)), (up, down)) in handle
        .front_addrs()
        .into_iter()
        .zip(handle.back_addrs())
        .enumerate()
        .zip(&describe_paths)
    {
        banner.push_str(&format!(
            "path {k}: client -> {front} ... {back} -> server\n  uplink   {up}\n  downlink {down}\n"
        ));
    }
    if let Some(control) = handle.control_addr() {
        banner.push_str(&format!("control: udp {control}\n"));
    }
    say(json, &banner);
    let controller = handle.controller();
    let signals = tokio::spawn(signal_loop(controller.clone()));
    let stop = async {
        match args.duration {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(stop);
    let mut ticker = args.interval.map(|period| {
        let mut t = tokio::time::interval(period);
        t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        t.reset(); // The first tick one period from now, not at once.
        t
    });
    loop {
        tokio::select! {
            () = &mut stop => break,
            r = tokio::signal::ctrl_c() => {
                if let Err(e) = r {
                    tracing::warn!(error = %e, "cannot wait for Ctrl-C");
                    std::future::pending::<()>().await;
                }
                break;
            }
            _ = async {
                match ticker.as_mut() {
                    Some(t) => t.tick().await,
                    None => std::future::pending().await,
                }
            } => {
                let t = controller.elapsed().as_secs_f64();
                say(json, &format!("t={t:.1}s\n{}", format_table(&controller.stats())));
            }
        }
    }
    signals.abort();
    let last: Vec<PathCounters> = handle.shutdown().await;
    if json {
        match serde_json::to_string_pretty(&last) {
            Ok(text) => println!("{text}"),
            Err(e) => eprintln!("error: cannot encode counters: {e}"),
        }
    } else {
        let t = controller.elapsed().as_secs_f64();
        say(
            false,
            &format!("final counters, t={t:.1}s:\n{}", format_table(&last)),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("mpquic-netem").chain(list.iter().copied()))
    }

    #[test]
    fn paths_listen_on_consecutive_ports() {
        let a = args(&[
            "--server",
            "127.0.0.1:4433",
            "--path",
            "rate=40mbit,delay=10ms",
            "--path",
            "rate=20mbit,delay=40ms,loss=0.01,listen=127.0.0.1:7000",
            "--path",
            "rate=1mbit",
            "--listen",
            "127.0.0.1:6000",
            "--down",
            "1@5s",
            "--seed",
            "9",
        ])
        .unwrap();
        let c = a.to_config().unwrap();
        let listens: Vec<String> = c.paths.iter().map(|p| p.listen.to_string()).collect();
        assert_eq!(listens, ["127.0.0.1:6000", "127.0.0.1:7000", "127.0.0.1:6002"]);
        assert_eq!(c.seed, 9);
        assert_eq!(c.events.len(), 1);
    }

    #[test]
    fn clap_rejects_bad_values_naming_valid_ones() {
        for (list, expected) in [
            (
                vec!["--server", "127.0.0.1:1", "--path", "rate=40mbps"],
                "kbit, mbit, gbit",
            ),
            (
                vec!["--server", "127.0.0.1:1", "--path", "rate=1mbit", "--down", "x"],
                "PATH@TIME",
            ),
            (
                vec![
                    "--server",
                    "127.0.0.1:1",
                    "--path",
                    "rate=1mbit",
                    "--interval",
                    "0",
                ],
                "seconds",
            ),
            (
                vec![
                    "--server",
                    "127.0.0.1:1",
                    "--path",
                    "rate=1mbit",
                    "--duration",
                    "5",
                ],
                "ms, s",
            ),
        ] {
            let e = args(&list).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains(expected), "{list:?}: {e}");
        }
    }

    #[test]
    fn missing_pieces_are_named() {
        let e = args(&["--path", "rate=1mbit"]).unwrap().to_config().unwrap_err();
        assert!(e.contains("--server"), "{e}");
        let e = args(&["--server", "127.0.0.1:1"])
            .unwrap()
            .to_config()
            .unwrap_err();
        assert!(e.contains("--path"), "{e}");
        let e = args(&[
            "--server",
            "127.0.0.1:1",
            "--path",
            "rate=1mbit",
            "--down",
            "3@1s",
        ])
        .unwrap()
        .to_config()
        .unwrap_err();
        assert!(e.contains("numbered 0 to 0"), "{e}");
        let e = args(&[
            "--server",
            "127.0.0.1:1",
            "--path",
            "rate=1mbit",
            "--listen",
            "127.0.0.1:65535",
        ])
        .unwrap();
        assert!(e.to_config().is_ok());
    }

    #[test]
    fn shipped_file_with_extra_path() {
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/netem/two-paths.toml");
        let c = args(&["--config", file, "--path", "rate=1mbit", "--seed", "3"])
            .unwrap()
            .to_config()
            .unwrap();
        assert_eq!(c.server.to_string(), "127.0.0.1:4433");
        assert_eq!(c.paths.len(), 3);
        assert_eq!(c.paths.get(2).unwrap().listen.to_string(), "127.0.0.1:5002");
        assert_eq!(c.seed, 3);
    }

    #[test]
    fn describes_links() {
        let p = spec::parse_path("rate=40mbit,delay=10ms,loss=1%,queue=64,jitter=2ms").unwrap();
        assert_eq!(
            describe(&p.uplink),
            "40 Mbit/s 10ms jitter=0..2ms q=64pkt loss=1%"
        );
    }
}
