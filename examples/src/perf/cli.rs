//! The command line of `mpquic-perf`: clap definitions and the parsers of its values (sizes, paths,
//! controller and scheduler specifications), each of which names the valid choices when it rejects a value.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Multipath QUIC throughput tool: per-path goodput, window, RTT and retransmissions.
#[derive(Debug, Parser)]
#[command(name = "mpquic-perf", version, after_help = EXAMPLES)]
pub struct Cli {
    /// Client or server.
    #[command(subcommand)]
    pub command: Command,
}

const EXAMPLES: &str = "\
Examples:
  mpquic-perf server                                   # listen on 0.0.0.0:4433, self-signed certificate
  mpquic-perf client 127.0.0.1:4433 --insecure -t 5    # 5 s upload on one path
  mpquic-perf client 192.0.2.1:4433 --insecure -R -P 4 \\
      --path 10.0.0.2 --path 172.16.0.2                # download on 4 streams over two local interfaces
  mpquic-perf client 127.0.0.1:5000 --insecure --path 127.0.0.1 --path 127.0.0.1=127.0.0.1:5001 \\
      --cc olia --scheduler blest --json               # two paths through mpquic-netem, JSON report

The sender's congestion controller and scheduler govern a direction: for a download (-R) they are the
server's (--cc and --scheduler of `mpquic-perf server`).";

/// The two roles.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Accepts connections and serves uploads and downloads until interrupted.
    Server(ServerArgs),
    /// Connects, transfers, and reports per path and in total.
    Client(ClientArgs),
}

/// Options shared by both roles.
#[derive(Debug, Clone, Args)]
pub struct TransportArgs {
    /// Congestion controller for the data this side sends, with optional parameters
    /// (`cubic`, `olia`, `ccubic:variant=a2`; `mpquic-cc-demo --list` lists them all).
    #[arg(long, value_name = "NAME[:PARAMS]", default_value = "cubic", value_parser = parse_cc)]
    pub cc: String,
    /// Packet scheduler for the data this side sends (`minrtt`, `roundrobin`, `blest`, `redundant`, …).
    #[arg(long, value_name = "NAME[:PARAMS]", default_value = "minrtt", value_parser = parse_scheduler)]
    pub scheduler: String,
    /// Write a qlog file per connection into this directory.
    #[arg(long, value_name = "DIR")]
    pub qlog: Option<PathBuf>,
}

/// The server's certificate options (shared with `mpquic-tunnel server`).
#[derive(Debug, Clone, Args)]
pub struct CertArgs {
    /// PEM certificate chain (default: an in-memory self-signed certificate for localhost, 127.0.0.1, ::1).
    #[arg(long, value_name = "FILE", requires = "key")]
    pub cert: Option<PathBuf>,
    /// PEM private key of --cert.
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub key: Option<PathBuf>,
}

impl CertArgs {
    /// The certificate and key files, when both are given.
    pub fn files(&self) -> Option<(&std::path::Path, &std::path::Path)> {
        self.cert.as_deref().zip(self.key.as_deref())
    }
}

/// The client's trust options (shared with `mpquic-tunnel client`).
#[derive(Debug, Clone, Args)]
pub struct TrustArgs {
    /// Accept any server certificate (labs and tests only).
    #[arg(short = 'k', long)]
    pub insecure: bool,
    /// PEM file of the certificate(s) to trust (default: the system's roots).
    #[arg(long, value_name = "FILE", conflicts_with = "insecure")]
    pub ca: Option<PathBuf>,
    /// Name to verify the certificate against (default: `localhost` for an IP address, else the host).
    #[arg(long, value_name = "NAME")]
    pub server_name: Option<String>,
}

impl TrustArgs {
    /// What these options trust.
    pub fn trust(&self) -> super::tls::Trust<'_> {
        match (&self.ca, self.insecure) {
            (_, true) => super::tls::Trust::Anyone,
            (Some(path), false) => super::tls::Trust::PemFile(path),
            (None, false) => super::tls::Trust::System,
        }
    }

    /// The name the server's certificate is checked against.
    pub fn name(&self) -> String {
        self.server_name.clone().unwrap_or_else(|| "localhost".to_owned())
    }
}

/// `mpquic-perf server`.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// Address to listen on (the wildcard address accepts paths to any of the host's addresses).
    #[arg(short, long, value_name = "ADDR", default_value = "0.0.0.0:4433")]
    pub bind: SocketAddr,
    /// The server's certificate.
    #[command(flatten)]
    pub certificate: CertArgs,
    /// Exit after serving one connection.
    #[arg(short = '1', long)]
    pub one_off: bool,
    /// Print the report of each connection as one line of JSON.
    #[arg(long)]
    pub json: bool,
    /// Controller, scheduler and qlog.
    #[command(flatten)]
    pub transport: TransportArgs,
}

/// `mpquic-perf client`.
#[derive(Debug, Clone, Args)]
pub struct ClientArgs {
    /// The server (`host:port`); the handshake path's remote unless the first --path names one.
    #[arg(value_name = "SERVER", value_parser = parse_server)]
    pub server: SocketAddr,
    /// Transfer for this long, in seconds (more than 0, at most 86400).
    #[arg(short = 't', long, value_name = "SECS", default_value = "10", value_parser = parse_secs,
          conflicts_with = "bytes", allow_negative_numbers = true)]
    pub time: f64,
    /// Transfer this many bytes in total instead (`-n 100M`; suffixes K, M, G, T, KiB, MiB, GiB; 1 byte to
    /// 10^18).
    #[arg(short = 'n', long, value_name = "SIZE", value_parser = parse_size, allow_negative_numbers = true)]
    pub bytes: Option<u64>,
    /// Download: the server sends.
    #[arg(short = 'R', long)]
    pub reverse: bool,
    /// Number of parallel streams, 1 to 1000.
    #[arg(short = 'P', long, value_name = "N", default_value = "1", value_parser = parse_streams,
          allow_negative_numbers = true)]
    pub parallel: u16,
    /// A path `LOCAL[=REMOTE][,backup]`: our address (IP) and the server's (default SERVER), repeatable up
    /// to 16 times, each pair of addresses once. The first is the handshake path (its LOCAL is the OS's
    /// choice unless every path has the same LOCAL); the others are opened once the handshake is confirmed.
    /// Without --path: one path to SERVER.
    #[arg(long = "path", value_name = "LOCAL[=REMOTE][,backup]", value_parser = parse_path)]
    pub paths: Vec<PathSpec>,
    /// Seconds between per-path report lines (0: none; else 0.05 to 3600). A download adds a receiver line
    /// ([ RCV]): reassembly-buffer bytes above a gap now and their peak, unread bytes, the share of bytes that
    /// arrived out of order and the head-of-line delay so far (mean / p95 / max; docs/receive-windows.md).
    #[arg(short = 'i', long, value_name = "SECS", default_value = "1", value_parser = parse_interval,
          allow_negative_numbers = true)]
    pub interval: f64,
    /// Print the whole report as JSON in iperf3's layout (`start`, `intervals[].streams[]` with one entry per
    /// path, `intervals[].sum`, `end.sum_sent`/`end.sum_received`; docs/perf.md) instead of text; our own
    /// figures are under `mpquic` keys, among them the receiver's reassembly and head-of-line figures.
    #[arg(long)]
    pub json: bool,
    /// No live progress display, even on a terminal.
    #[arg(long)]
    pub no_progress: bool,
    /// Whom the client trusts.
    #[command(flatten)]
    pub trust: TrustArgs,
    /// Controller, scheduler and qlog.
    #[command(flatten)]
    pub transport: TransportArgs,
}

/// One `--path` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathSpec {
    /// Our address (port 0: the endpoint's port).
    pub local: SocketAddr,
    /// The server's address on this path (`None`: SERVER).
    pub remote: Option<SocketAddr>,
    /// Opened with backup status.
    pub backup: bool,
}

/// Parses `LOCAL[=REMOTE][,backup]`.
pub fn parse_path(s: &str) -> Result<PathSpec, String> {
    const FORM: &str =
        "expected LOCAL[=REMOTE][,backup], e.g. 10.0.0.2, 10.0.0.2=192.0.2.1:4433 or 10.0.0.3,backup";
    let (addrs, backup) = match s.split_once(',') {
        Some((a, "backup")) => (a, true),
        Some((_, flag)) => return Err(format!("unknown path flag `{flag}` (valid: backup); {FORM}")),
        None => (s, false),
    };
    let (local, remote) = match addrs.split_once('=') {
        Some((l, r)) => (l, Some(r)),
        None => (addrs, None),
    };
    let local = match local.parse::<IpAddr>() {
        Ok(ip) => SocketAddr::new(ip, 0),
        Err(_) => local
            .parse::<SocketAddr>()
            .map_err(|_| format!("bad local address `{local}`; {FORM}"))?,
    };
    let remote = remote
        .map(|r| parse_server(r).map_err(|e| format!("{e}; {FORM}")))
        .transpose()?;
    Ok(PathSpec {
        local,
        remote,
        backup,
    })
}

/// The most `--path` options: the transport keeps at most 16 path states at once (`max_paths`).
pub const MAX_PATHS: usize = 16;

/// Checks the `--path` list against the server address: at most [`MAX_PATHS`], and no two paths with the
/// same pair of addresses (LOCAL and REMOTE, REMOTE defaulting to SERVER): the second would be the same
/// 4-tuple, which QUIC cannot open as a separate path.
pub fn check_paths(server: SocketAddr, paths: &[PathSpec]) -> Result<(), String> {
    if paths.len() > MAX_PATHS {
        return Err(format!(
            "--path given {} times: expected 1 to {MAX_PATHS} paths",
            paths.len()
        ));
    }
    for (k, p) in paths.iter().enumerate() {
        let pair = (p.local, p.remote.unwrap_or(server));
        if let Some(first) = paths
            .iter()
            .take(k)
            .position(|q| (q.local, q.remote.unwrap_or(server)) == pair)
        {
            return Err(format!(
                "--path {}={}: paths {first} and {k} use the same pair of addresses; give each path its own \
                 LOCAL or REMOTE",
                pair.0.ip(),
                pair.1
            ));
        }
    }
    Ok(())
}

/// The number of parallel streams: 1 to 1000.
pub fn parse_streams(s: &str) -> Result<u16, String> {
    mpquic_netsim::units::parse_int_in(s, 1, 1000).map(|n| u16::try_from(n).unwrap_or(1))
}

/// Resolves `host:port` to its first address.
pub fn parse_server(s: &str) -> Result<SocketAddr, String> {
    s.to_socket_addrs()
        .map_err(|e| format!("cannot resolve `{s}` (expected host:port): {e}"))?
        .next()
        .ok_or_else(|| format!("`{s}` resolves to no address"))
}

/// Checks a congestion-controller specification against the registry.
pub fn parse_cc(s: &str) -> Result<String, String> {
    mpquic_cc::registry::build(s).map_err(|e| e.to_string())?;
    Ok(s.to_owned())
}

/// Checks a scheduler specification against the registry.
pub fn parse_scheduler(s: &str) -> Result<String, String> {
    mpquic_sched::registry::build(s).map_err(|e| e.to_string())?;
    Ok(s.to_owned())
}

/// A byte count with an optional decimal (K, M, G, T) or binary (KiB, MiB, GiB) suffix.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!("size `{s}` out of range (1 byte to 10^18)"));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "m" | "mb" => 1_000_000,
        "g" | "gb" => 1_000_000_000,
        "t" | "tb" => 1_000_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => {
            return Err(format!(
                "bad size unit in `{s}` (valid: K, M, G, T, KiB, MiB, GiB or none)"
            ));
        }
    };
    let n: f64 = num
        .parse()
        .map_err(|_| format!("bad size `{s}` (e.g. 1500, 10M, 2GiB)"))?;
    let bytes = n * mult as f64;
    if !(1.0..1e18).contains(&bytes) {
        return Err(format!("size `{s}` out of range (1 byte to 10^18)"));
    }
    Ok(bytes as u64)
}

/// A positive number of seconds.
pub fn parse_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err(format!("bad duration `{s}` (seconds, > 0 and at most 86400)")),
    }
}

/// A report interval: 0 (none) or at least 0.05 s.
pub fn parse_interval(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v == 0.0 || (0.05..=3600.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "bad interval `{s}` (0 for none, or 0.05 to 3600 seconds)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_decimal_and_binary_suffixes() {
        assert_eq!(parse_size("1500"), Ok(1500));
        assert_eq!(parse_size("10M"), Ok(10_000_000));
        assert_eq!(parse_size("2.5k"), Ok(2500));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert!(parse_size("3X").unwrap_err().contains("valid: K, M, G"));
        assert!(parse_size("0").is_err());
        assert!(parse_size("M").is_err());
        assert!(
            parse_size("-1")
                .unwrap_err()
                .contains("out of range (1 byte to 10^18)")
        );
    }

    #[test]
    fn paths_parse_local_remote_and_backup() {
        let p = parse_path("10.0.0.2").unwrap();
        assert_eq!(p.local, "10.0.0.2:0".parse().unwrap());
        assert_eq!((p.remote, p.backup), (None, false));
        let p = parse_path("127.0.0.1=127.0.0.1:5001,backup").unwrap();
        assert_eq!(p.remote, Some("127.0.0.1:5001".parse().unwrap()));
        assert!(p.backup);
        let p = parse_path("[::1]:7000").unwrap();
        assert_eq!(p.local, "[::1]:7000".parse().unwrap());
        assert!(parse_path("nonsense").unwrap_err().contains("LOCAL[=REMOTE]"));
        assert!(
            parse_path("10.0.0.2,primary")
                .unwrap_err()
                .contains("valid: backup")
        );
        assert!(parse_path("10.0.0.2=nowhere").is_err());
    }

    #[test]
    fn bad_controller_and_scheduler_name_the_valid_choices() {
        assert_eq!(parse_cc("olia").as_deref(), Ok("olia"));
        let e = parse_cc("tahoe").unwrap_err();
        assert!(
            e.contains("cubic") && e.contains("olia") && !e.contains('\n'),
            "{e}"
        );
        let e = parse_scheduler("fastest").unwrap_err();
        assert!(e.contains("minrtt") && e.contains("blest"), "{e}");
        assert!(parse_scheduler("weighted:weights=2,1").is_ok() || parse_scheduler("weighted").is_ok());
    }

    #[test]
    fn the_command_line_parses_and_conflicts_are_rejected() {
        let cli = Cli::try_parse_from([
            "mpquic-perf",
            "client",
            "127.0.0.1:4433",
            "-R",
            "-P",
            "3",
            "--path",
            "127.0.0.1",
            "--path",
            "127.0.0.2",
            "--cc",
            "lia",
            "-n",
            "5M",
        ])
        .unwrap();
        let Command::Client(c) = cli.command else {
            panic!("client expected")
        };
        assert!(c.reverse);
        assert_eq!((c.parallel, c.paths.len(), c.bytes), (3, 2, Some(5_000_000)));
        assert_eq!(c.transport.cc, "lia");
        assert!(
            Cli::try_parse_from(["mpquic-perf", "client", "127.0.0.1:1", "-t", "3", "-n", "1M"]).is_err()
        );
        assert!(Cli::try_parse_from(["mpquic-perf", "client", "127.0.0.1:1", "-P", "0"]).is_err());
        // A negative number is a bad value of its option, not an unknown argument.
        for (opt, value) in [("-t", "-5"), ("-n", "-1"), ("-P", "-1"), ("-i", "-1")] {
            let e = Cli::try_parse_from(["mpquic-perf", "client", "127.0.0.1:1", opt, value])
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("invalid value '{value}'")), "{opt}: {e}");
        }
    }

    #[test]
    fn duplicate_or_too_many_paths_are_rejected() {
        let server: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let p = |s: &str| parse_path(s).unwrap();
        assert_eq!(
            check_paths(server, &[p("127.0.0.1"), p("127.0.0.1=127.0.0.1:5001")]),
            Ok(())
        );
        // `127.0.0.1` and `127.0.0.1=SERVER` are the same path.
        let e = check_paths(server, &[p("127.0.0.1"), p("127.0.0.1=127.0.0.1:5000")]).unwrap_err();
        assert!(e.contains("paths 0 and 1 use the same pair"), "{e}");
        let many: Vec<PathSpec> = (0..17).map(|k| p(&format!("127.0.0.{}", k + 1))).collect();
        let e = check_paths(server, &many).unwrap_err();
        assert!(e.contains("17 times") && e.contains("1 to 16"), "{e}");
        assert!(Cli::try_parse_from(["mpquic-perf", "server", "--cert", "c.pem"]).is_err());
    }
}
