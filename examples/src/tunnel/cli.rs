//! The command line of `mpquic-tunnel`: clap definitions and the parsers of its values. Paths, controllers,
//! schedulers, certificates and report intervals take the same options and syntax as `mpquic-perf`
//! ([`crate::perf::cli`]).

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use super::reorder::{MAX_HOLD, MAX_WINDOW};
use crate::perf::cli::{
    CertArgs, PathSpec, TransportArgs, TrustArgs, parse_interval, parse_path, parse_server,
};

/// Multipath IP tunnel over QUIC: a TUN device at each end, IP packets in QUIC DATAGRAM frames over every
/// path of one multipath connection.
#[derive(Debug, Parser)]
#[command(name = "mpquic-tunnel", version, after_help = EXAMPLES)]
pub struct Cli {
    /// Server or client.
    #[command(subcommand)]
    pub command: Command,
}

const EXAMPLES: &str = "\
Examples (as root, or with CAP_NET_ADMIN):
  mpquic-tunnel server --bind 0.0.0.0:4433 --tun mpq0 --address 10.77.0.1/30
  mpquic-tunnel client 192.0.2.1:4433 --insecure --tun mpq0 --address 10.77.0.2/30 \\
      --path 10.0.0.2 --path 172.16.0.2=198.51.100.1:4433 --reorder-window 64 --reorder-hold 20
  Then 10.77.0.1 and 10.77.0.2 reach each other over both paths.

The TUN MTU is the largest packet one QUIC DATAGRAM frame carries on a link of --mtu bytes
(1500: 1432 over IPv4); larger packets are answered with ICMP fragmentation needed / ICMPv6
packet too big, as a router would. Exit codes: 0 after Ctrl-C, 1 on a failure at run time,
2 for bad options or missing privileges (CAP_NET_ADMIN, /dev/net/tun).";

/// The two roles.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Waits for a client and forwards packets between its TUN device and the client's.
    Server(ServerArgs),
    /// Connects to a server over one or more paths and forwards packets between the TUN devices.
    Client(ClientArgs),
}

/// How packets travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// One packet per QUIC DATAGRAM frame (RFC 9221): unreliable, no head-of-line blocking.
    Datagram,
    /// Length-prefixed packets on one bidirectional stream: reliable and in order.
    Stream,
}

/// The TUN device and the tunnel's behaviour, the same for both roles.
#[derive(Debug, Clone, Args)]
pub struct DeviceArgs {
    /// Name of the TUN device to create (1 to 15 characters of letters, digits, `-`, `_`, `.`).
    #[arg(long, value_name = "NAME", value_parser = parse_tun_name)]
    pub tun: String,
    /// Address and prefix length of the TUN device (`10.77.0.1/30`, `fd00:77::1/64`).
    #[arg(long, value_name = "IP/PREFIX", value_parser = parse_prefix)]
    pub address: (IpAddr, u8),
    /// MTU of the links the tunnel's paths run over, in bytes (1280 to 9000); the TUN MTU is derived from
    /// it (see the examples).
    #[arg(long, value_name = "BYTES", default_value = "1500", value_parser = parse_mtu,
          allow_negative_numbers = true)]
    pub mtu: u16,
    /// Hold packets that arrive ahead of a gap, at most this many (0: no reorder buffer; else 1 to 65536).
    #[arg(long, value_name = "PKTS", default_value = "0", value_parser = parse_window,
          allow_negative_numbers = true)]
    pub reorder_window: usize,
    /// Give a gap up after this many milliseconds (1 to 10000).
    #[arg(long, value_name = "MS", default_value = "20", value_parser = parse_hold,
          allow_negative_numbers = true)]
    pub reorder_hold: u64,
    /// Seconds between status lines (0: none; else 0.05 to 3600).
    #[arg(short = 'i', long, value_name = "SECS", default_value = "5", value_parser = parse_interval,
          allow_negative_numbers = true)]
    pub interval: f64,
    /// Print the status lines and the final counters as JSON, one object per line.
    #[arg(long)]
    pub json: bool,
    /// Controller, scheduler and qlog.
    #[command(flatten)]
    pub transport: TransportArgs,
}

impl DeviceArgs {
    /// The reorder hold time.
    pub fn hold(&self) -> Duration {
        Duration::from_millis(self.reorder_hold)
    }
}

/// `mpquic-tunnel server`.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// Address to listen on.
    #[arg(short, long, value_name = "ADDR", default_value = "0.0.0.0:4433")]
    pub bind: SocketAddr,
    /// The server's certificate.
    #[command(flatten)]
    pub certificate: CertArgs,
    /// TUN device, MTU, reorder buffer, reports, transport.
    #[command(flatten)]
    pub device: DeviceArgs,
}

/// `mpquic-tunnel client`.
#[derive(Debug, Clone, Args)]
pub struct ClientArgs {
    /// The server (`host:port`); the handshake path's remote unless the first --path names one.
    #[arg(value_name = "SERVER", value_parser = parse_server)]
    pub server: SocketAddr,
    /// A path `LOCAL[=REMOTE][,backup]`, as in mpquic-perf: our address and the server's (default SERVER),
    /// repeatable up to 16 times. Without --path: one path to SERVER.
    #[arg(long = "path", value_name = "LOCAL[=REMOTE][,backup]", value_parser = parse_path)]
    pub paths: Vec<PathSpec>,
    /// Datagrams (default) or one stream.
    #[arg(long, value_enum, default_value = "datagram")]
    pub mode: Mode,
    /// Whom the client trusts.
    #[command(flatten)]
    pub trust: TrustArgs,
    /// TUN device, MTU, reorder buffer, reports, transport.
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Exit when the connection ends or cannot be made, instead of connecting again.
    #[arg(long)]
    pub no_reconnect: bool,
    /// Longest wait between two connection attempts, in seconds (1 to 3600): the wait starts at 1 s and
    /// doubles after every failed attempt up to this.
    #[arg(long, value_name = "SECS", default_value = "30", value_parser = parse_reconnect_max,
          allow_negative_numbers = true)]
    pub reconnect_max: u64,
}

/// The longest wait between connection attempts: 1 to 3600 seconds.
pub fn parse_reconnect_max(s: &str) -> Result<u64, String> {
    mpquic_netsim::units::parse_int_in(s, 1, 3600)
}

/// A Linux interface name: 1 to 15 bytes (IFNAMSIZ − 1), no `/`, whitespace or `:` (ip-link(8) rejects them).
pub fn parse_tun_name(s: &str) -> Result<String, String> {
    let ok = !s.is_empty()
        && s.len() <= 15
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && s != "."
        && s != "..";
    if ok {
        Ok(s.to_owned())
    } else {
        Err(format!(
            "bad interface name `{s}` (1 to 15 characters of letters, digits, '-', '_', '.')"
        ))
    }
}

/// `IP/PREFIX`, the prefix at most 32 (IPv4) or 128 (IPv6).
pub fn parse_prefix(s: &str) -> Result<(IpAddr, u8), String> {
    const FORM: &str = "expected IP/PREFIX, e.g. 10.77.0.1/30 or fd00:77::1/64";
    let (ip, len) = s.split_once('/').ok_or_else(|| format!("`{s}`: {FORM}"))?;
    let ip: IpAddr = ip.parse().map_err(|_| format!("bad address `{ip}`; {FORM}"))?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    match len.parse::<u8>() {
        Ok(n) if n <= max => Ok((ip, n)),
        _ => Err(format!("bad prefix length `{len}` (0 to {max})")),
    }
}

/// The largest `--mtu`: jumbo frames.
pub const MAX_LINK_MTU: u16 = 9000;

/// The link MTU: 1280 to [`MAX_LINK_MTU`] bytes.
pub fn parse_mtu(s: &str) -> Result<u16, String> {
    mpquic_netsim::units::parse_int_in(s, 1280, u64::from(MAX_LINK_MTU))
        .map(|n| u16::try_from(n).unwrap_or(1500))
}

/// The reorder window: 0 (off) to [`MAX_WINDOW`] packets.
pub fn parse_window(s: &str) -> Result<usize, String> {
    mpquic_netsim::units::parse_int_in(s, 0, MAX_WINDOW as u64).map(|n| usize::try_from(n).unwrap_or(0))
}

/// The reorder hold: 1 to 10000 ms.
pub fn parse_hold(s: &str) -> Result<u64, String> {
    mpquic_netsim::units::parse_int_in(s, 1, MAX_HOLD.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;

    #[test]
    fn values_parse_and_bad_ones_name_the_range() {
        assert_eq!(
            parse_prefix("10.77.0.1/30"),
            Ok(("10.77.0.1".parse().unwrap(), 30))
        );
        assert_eq!(parse_prefix("fd00::1/64"), Ok(("fd00::1".parse().unwrap(), 64)));
        assert!(parse_prefix("10.77.0.1/33").unwrap_err().contains("0 to 32"));
        assert!(parse_prefix("10.77.0.1").unwrap_err().contains("IP/PREFIX"));
        assert!(parse_prefix("tun/3").unwrap_err().contains("bad address"));
        assert_eq!(parse_tun_name("mpq0"), Ok("mpq0".to_owned()));
        assert!(parse_tun_name("a-very-long-name0").is_err());
        assert!(parse_tun_name("a/b").is_err());
        assert!(parse_tun_name("").is_err());
        assert_eq!(parse_mtu("1500"), Ok(1500));
        assert!(parse_mtu("1279").is_err());
        assert!(parse_mtu("9001").is_err());
        assert_eq!(parse_window("0"), Ok(0));
        assert!(parse_window("65537").is_err());
        assert!(parse_hold("0").is_err());
        assert_eq!(parse_hold("10000"), Ok(10_000));
    }

    #[test]
    fn the_command_line_parses() {
        let cli = Cli::try_parse_from([
            "mpquic-tunnel",
            "client",
            "127.0.0.1:4433",
            "--tun",
            "mpq0",
            "--address",
            "10.77.0.2/30",
            "--path",
            "10.0.1.1=10.0.1.2:5000",
            "--path",
            "10.0.2.1=10.0.2.2:5001,backup",
            "--mode",
            "stream",
            "--reorder-window",
            "64",
            "--cc",
            "olia",
            "-k",
        ])
        .unwrap();
        let Command::Client(c) = cli.command else {
            panic!("client expected")
        };
        assert_eq!(c.paths.len(), 2);
        assert!(c.paths[1].backup);
        assert_eq!(c.mode, Mode::Stream);
        assert_eq!(c.device.reorder_window, 64);
        assert_eq!(c.device.hold(), Duration::from_millis(20));
        assert_eq!(c.device.mtu, 1500);
        assert!(c.trust.insecure);
        assert!(
            Cli::try_parse_from(["mpquic-tunnel", "server", "--tun", "t", "--address", "10.0.0.1/8"]).is_ok()
        );
        // --tun and --address are required.
        assert!(Cli::try_parse_from(["mpquic-tunnel", "server", "--tun", "t"]).is_err());
        assert!(
            Cli::try_parse_from([
                "mpquic-tunnel",
                "server",
                "--tun",
                "t",
                "--address",
                "10.0.0.1/8",
                "--mtu",
                "-1"
            ])
            .unwrap_err()
            .to_string()
            .contains("invalid value '-1'")
        );
    }
}
