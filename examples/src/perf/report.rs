//! What a perf run reports: samples per path and interval, the summary per path and in total, and their text
//! and JSON forms.
//!
//! Interval and path figures count bytes **delivered**: for an upload, the STREAM payload of the packets the
//! client sent on the path and the server acknowledged (`PathStats::stream_bytes_acked`); for a download, the
//! STREAM payload the client received on the path (`PathStats::stream_bytes_received`). An interval's sum is
//! the sum of its path rows, so it can never exceed what the paths carried; bytes written into the send
//! buffer but not yet acknowledged are not counted. The run's verified total ([`Total`]) is what the
//! application delivered, checked byte by byte. docs/perf.md describes the accounting.
//!
//! The receiver's figures ([`ReceiverFigures`]) are the receiving connection's reassembly statistics
//! (`mpquic::runtime::ReassemblyStats`, defined in docs/receive-windows.md): the client's for a download, the
//! server's for an upload (in the server's report).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

use mpquic::runtime::{PathId, PathStats, ReassemblyStats};
use serde::Serialize;

use super::wire::Direction;

/// One path over one interval.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PathSample {
    /// Path ID.
    pub path: u32,
    /// STREAM payload bytes delivered on the path during the interval (acknowledged for an upload, received
    /// for a download).
    pub bytes: u64,
    /// `bytes` as bits per second.
    pub goodput_bps: f64,
    /// Congestion window at the end of the interval (bytes).
    pub cwnd: u64,
    /// Smoothed RTT at the end of the interval (ms).
    pub srtt_ms: f64,
    /// RTT variation at the end of the interval (ms).
    pub rttvar_ms: f64,
    /// Maximum UDP payload on the path at the end of the interval (bytes).
    pub mtu: u16,
    /// Packets this side sent on the path and declared lost during the interval (their data is retransmitted).
    pub retransmissions: u64,
}

/// The receive side of a connection: reassembly-buffer occupancy and head-of-line delay.
///
/// Occupancy (`*_bytes`) is the value at the moment of the snapshot; the `max_*` figures and the head-of-line
/// delay cover the connection from its start to the snapshot.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Default)]
pub struct ReceiverFigures {
    /// Bytes received above a gap (waiting for earlier bytes), now.
    pub out_of_order_bytes: u64,
    /// Highest `out_of_order_bytes` so far.
    pub max_out_of_order_bytes: u64,
    /// Bytes received and not read by the application yet (in order or not), now.
    pub unread_bytes: u64,
    /// Highest `unread_bytes` so far.
    pub max_unread_bytes: u64,
    /// Share of the received stream bytes that arrived above a gap (0 to 1).
    pub out_of_order_fraction: f64,
    /// Head-of-line delay, byte-weighted mean (ms): how long received bytes waited above a gap.
    pub hol_delay_mean_ms: f64,
    /// Head-of-line delay, 95th percentile (ms; at most 12.5 % above the true value).
    pub hol_delay_p95_ms: f64,
    /// Longest head-of-line delay (ms).
    pub hol_delay_max_ms: f64,
}

impl From<&ReassemblyStats> for ReceiverFigures {
    fn from(s: &ReassemblyStats) -> Self {
        ReceiverFigures {
            out_of_order_bytes: s.out_of_order_bytes,
            max_out_of_order_bytes: s.max_out_of_order_bytes,
            unread_bytes: s.unread_bytes,
            max_unread_bytes: s.max_unread_bytes,
            out_of_order_fraction: if s.bytes == 0 {
                0.0
            } else {
                s.out_of_order as f64 / s.bytes as f64
            },
            hol_delay_mean_ms: ms(s.hol_delay_mean),
            hol_delay_p95_ms: ms(s.hol_delay_p95),
            hol_delay_max_ms: ms(s.hol_delay_max),
        }
    }
}

/// All paths over one interval.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Interval {
    /// Start, seconds since the transfer began.
    pub start: f64,
    /// End, seconds since the transfer began.
    pub end: f64,
    /// One sample per path alive in the interval.
    pub paths: Vec<PathSample>,
    /// Bytes delivered in the interval over all paths: the sum of the paths' `bytes`.
    pub total_bytes: u64,
    /// `total_bytes` as bits per second.
    pub total_goodput_bps: f64,
    /// The client's receive side at the end of the interval (meaningful for a download).
    pub receiver: ReceiverFigures,
}

impl Interval {
    /// The interval from `start` to `end` (seconds since the transfer began) of these path samples; its sum
    /// is theirs.
    pub fn of(start: f64, end: f64, paths: Vec<PathSample>, receiver: ReceiverFigures) -> Interval {
        let total_bytes = paths.iter().map(|p| p.bytes).sum();
        Interval {
            start,
            end,
            paths,
            total_bytes,
            total_goodput_bps: bps(total_bytes, end - start),
            receiver,
        }
    }
}

/// One path over the whole run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PathSummary {
    /// Path ID.
    pub path: u32,
    /// Our address, if known.
    pub local: Option<SocketAddr>,
    /// The peer's address.
    pub remote: SocketAddr,
    /// Backup status at the end.
    pub backup: bool,
    /// Abandoned by either side.
    pub abandoned: bool,
    /// STREAM payload bytes delivered on the path (acknowledged for an upload, received for a download).
    pub bytes: u64,
    /// STREAM payload bytes this side sent on the path (retransmissions included).
    pub stream_bytes_sent: u64,
    /// `bytes` over the run's duration, in bits per second.
    pub goodput_bps: f64,
    /// UDP payload bytes sent and received on the path.
    pub udp_bytes_sent: u64,
    /// UDP payload bytes received on the path.
    pub udp_bytes_received: u64,
    /// Packets sent by this side.
    pub packets_sent: u64,
    /// Packets this side sent and declared lost.
    pub retransmissions: u64,
    /// Smoothed RTT at the end (ms).
    pub srtt_ms: f64,
    /// Minimum RTT (ms).
    pub min_rtt_ms: f64,
    /// Congestion window at the end (bytes).
    pub cwnd: u64,
}

/// The whole run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Total {
    /// Application bytes delivered to the receiver, in order and checked.
    pub bytes: u64,
    /// From the first byte offered to the last one delivered (seconds).
    pub seconds: f64,
    /// `bytes` over `seconds`, in bits per second.
    pub goodput_bps: f64,
    /// Every byte matched the pattern at its offset.
    pub verified: bool,
}

/// Something that happened to a path, with its time since the transfer began.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PathEventRecord {
    /// Seconds since the transfer began.
    pub at: f64,
    /// What happened (`opened`, `validated`, `abandoned`, …).
    pub event: String,
    /// The path.
    pub path: u32,
}

/// What the run was asked to do (iperf3's `test_start`).
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct TestParams {
    /// Requested duration in seconds (0 for a byte count).
    pub duration: f64,
    /// Requested bytes over all streams (0 for a duration).
    pub bytes: u64,
    /// Largest chunk handed to a stream at once (bytes).
    pub blksize: u64,
    /// Seconds between interval samples (0: none).
    pub interval: f64,
}

/// A client's report.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Report {
    /// The server.
    pub server: SocketAddr,
    /// When the transfer started, in seconds since the Unix epoch (wall clock).
    pub started_unix: f64,
    /// The request.
    pub test: TestParams,
    /// Upload or download.
    pub direction: Direction,
    /// Parallel streams.
    pub streams: u16,
    /// Our congestion controller (the sender's for an upload).
    pub cc: String,
    /// Our scheduler (the sender's for an upload).
    pub scheduler: String,
    /// Multipath negotiated.
    pub multipath: bool,
    /// Handshake duration (ms).
    pub handshake_ms: f64,
    /// The interval samples.
    pub intervals: Vec<Interval>,
    /// Path events.
    pub events: Vec<PathEventRecord>,
    /// Per path, over the run.
    pub paths: Vec<PathSummary>,
    /// In total.
    pub total: Total,
    /// The client's receive side at the end of the run (meaningful for a download; the server reports an
    /// upload's).
    pub receiver: ReceiverFigures,
}

/// Bits per second of `bytes` over `secs`.
pub fn bps(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs
    } else {
        0.0
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Bytes a path delivered in the measured direction, as seen by the client: acknowledged by the server for an
/// upload, received for a download.
pub fn path_bytes(s: &PathStats, direction: Direction) -> u64 {
    match direction {
        Direction::Upload => s.stream_bytes_acked,
        Direction::Download => s.stream_bytes_received,
    }
}

/// What the summary and the JSON say the figures count.
pub fn accounting(direction: Direction) -> &'static str {
    match direction {
        Direction::Upload => "acknowledged",
        Direction::Download => "received",
    }
}

/// Turns successive snapshots of the paths' statistics into interval samples.
#[derive(Debug)]
pub struct Sampler {
    direction: Direction,
    last: BTreeMap<PathId, (u64, u64)>,
    delivered: u64,
}

impl Sampler {
    /// A sampler measuring `direction`.
    pub fn new(direction: Direction) -> Sampler {
        Sampler {
            direction,
            last: BTreeMap::new(),
            delivered: 0,
        }
    }

    /// Bytes delivered over all paths up to the last sample (a path's bytes stay counted after it is gone).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// The samples of the interval that ends with the snapshot `stats`, `secs` long.
    pub fn sample(&mut self, stats: &[PathStats], secs: f64) -> Vec<PathSample> {
        stats
            .iter()
            .map(|s| {
                let now = (path_bytes(s, self.direction), s.packets_lost);
                let (bytes0, lost0) = self.last.insert(s.path, now).unwrap_or((0, 0));
                let bytes = now.0.saturating_sub(bytes0);
                self.delivered = self.delivered.saturating_add(bytes);
                PathSample {
                    path: s.path.0,
                    bytes,
                    goodput_bps: bps(bytes, secs),
                    cwnd: s.cwnd,
                    srtt_ms: ms(s.srtt),
                    rttvar_ms: ms(s.rttvar),
                    mtu: s.mtu,
                    retransmissions: now.1.saturating_sub(lost0),
                }
            })
            .collect()
    }
}

/// The summary of each path over a run of `secs`.
pub fn summarize(stats: &[PathStats], direction: Direction, secs: f64) -> Vec<PathSummary> {
    stats
        .iter()
        .map(|s| {
            let bytes = path_bytes(s, direction);
            PathSummary {
                path: s.path.0,
                local: s.local,
                remote: s.remote,
                backup: s.backup,
                abandoned: s.abandoned,
                bytes,
                stream_bytes_sent: s.stream_bytes_sent,
                goodput_bps: bps(bytes, secs),
                udp_bytes_sent: s.bytes_sent,
                udp_bytes_received: s.bytes_received,
                packets_sent: s.packets_sent,
                retransmissions: s.packets_lost,
                srtt_ms: ms(s.srtt),
                min_rtt_ms: ms(s.min_rtt),
                cwnd: s.cwnd,
            }
        })
        .collect()
}

/// `1.23 MB`, decimal units.
pub fn fmt_bytes(b: u64) -> String {
    let b = b as f64;
    match b {
        b if b >= 1e9 => format!("{:.2} GB", b / 1e9),
        b if b >= 1e6 => format!("{:.2} MB", b / 1e6),
        b if b >= 1e3 => format!("{:.1} KB", b / 1e3),
        b => format!("{b:.0} B"),
    }
}

/// `12.3 Mbit/s`.
pub fn fmt_rate(bps: f64) -> String {
    match bps {
        r if r >= 1e9 => format!("{:.2} Gbit/s", r / 1e9),
        r if r >= 1e6 => format!("{:.1} Mbit/s", r / 1e6),
        r => format!("{:.1} kbit/s", r / 1e3),
    }
}

/// The header of the interval lines.
pub const INTERVAL_HEADER: &str =
    "[  ID] Interval           Data         Goodput         cwnd        srtt   retx";

/// The receiver line of an interval or a summary: reassembly occupancy now and its peak, and the
/// head-of-line delay so far.
pub fn receiver_line(label: &str, r: &ReceiverFigures) -> String {
    format!(
        "[{label}] reassembly {} (max {}), unread {} (max {}), out of order {:.1} %, HoL mean {:.2} / p95 {:.2} / max {:.2} ms",
        fmt_bytes(r.out_of_order_bytes),
        fmt_bytes(r.max_out_of_order_bytes),
        fmt_bytes(r.unread_bytes),
        fmt_bytes(r.max_unread_bytes),
        r.out_of_order_fraction * 100.0,
        r.hol_delay_mean_ms,
        r.hol_delay_p95_ms,
        r.hol_delay_max_ms
    )
}

/// The text lines of one interval: one per path, then the sum, then (for a download, where this side
/// receives) the receiver line.
pub fn interval_lines(i: &Interval, direction: Direction) -> String {
    let mut out = String::new();
    let span = format!("{:6.2}-{:<6.2} s", i.start, i.end);
    for p in &i.paths {
        let _ = writeln!(
            out,
            "[  P{}] {span}  {:>10}  {:>14}  {:>11}  {:>7.1} ms  {:>5}",
            p.path,
            fmt_bytes(p.bytes),
            fmt_rate(p.goodput_bps),
            fmt_bytes(p.cwnd),
            p.srtt_ms,
            p.retransmissions
        );
    }
    let _ = writeln!(
        out,
        "[ SUM] {span}  {:>10}  {:>14}",
        fmt_bytes(i.total_bytes),
        fmt_rate(i.total_goodput_bps)
    );
    if direction == Direction::Download {
        let _ = writeln!(out, "{}", receiver_line(" RCV", &i.receiver));
    }
    out
}

/// The final summary as text.
pub fn summary_text(r: &Report) -> String {
    let mut out = String::new();
    let dir = match r.direction {
        Direction::Upload => "upload",
        Direction::Download => "download",
    };
    let _ = writeln!(
        out,
        "- - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -\n\
         {dir} to {}, {} stream(s), cc {}, scheduler {}, multipath {}, handshake {:.1} ms",
        r.server,
        r.streams,
        r.cc,
        r.scheduler,
        if r.multipath { "on" } else { "off" },
        r.handshake_ms
    );
    for p in &r.paths {
        let local = p.local.map_or_else(|| "?".to_owned(), |a| a.to_string());
        let flags = match (p.backup, p.abandoned) {
            (_, true) => " (abandoned)",
            (true, false) => " (backup)",
            _ => "",
        };
        let _ = writeln!(
            out,
            "[  P{}] {local} -> {}{flags}: {}  {}  srtt {:.1} ms (min {:.1})  retx {}",
            p.path,
            p.remote,
            fmt_bytes(p.bytes),
            fmt_rate(p.goodput_bps),
            p.srtt_ms,
            p.min_rtt_ms,
            p.retransmissions
        );
    }
    let _ = writeln!(
        out,
        "(intervals and path rows count bytes {} by the {})",
        accounting(r.direction),
        match r.direction {
            Direction::Upload => "server",
            Direction::Download => "client",
        }
    );
    let _ = writeln!(
        out,
        "[TOTAL] {} delivered in {:.2} s = {}{}",
        fmt_bytes(r.total.bytes),
        r.total.seconds,
        fmt_rate(r.total.goodput_bps),
        if r.total.verified {
            ", every byte verified"
        } else {
            ", DATA MISMATCH"
        }
    );
    if r.direction == Direction::Download {
        let _ = writeln!(out, "{}", receiver_line("  RCV", &r.receiver));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(path: u32, acked: u64, lost: u64) -> PathStats {
        PathStats {
            path: PathId(path),
            remote: "127.0.0.1:1".parse().unwrap(),
            local: None,
            validated: true,
            backup: false,
            mtu: 1200,
            cwnd: 12_000,
            bytes_in_flight: 0,
            pacing_rate: None,
            srtt: Duration::from_millis(20),
            rttvar: Duration::ZERO,
            min_rtt: Duration::from_millis(10),
            latest_rtt: Duration::from_millis(20),
            bytes_sent: 0,
            bytes_received: 0,
            stream_bytes_sent: acked + 1_000,
            stream_bytes_received: 0,
            stream_bytes_acked: acked,
            packets_sent: 0,
            packets_received: 0,
            packets_lost: lost,
            bytes_lost: 0,
            congestion_events: 0,
            abandoned: false,
            cc: None,
        }
    }

    #[test]
    fn samples_are_deltas_per_path() {
        let mut s = Sampler::new(Direction::Upload);
        let a = s.sample(&[stats(0, 1_000_000, 2)], 1.0);
        assert_eq!((a[0].bytes, a[0].retransmissions), (1_000_000, 2));
        assert_eq!(a[0].goodput_bps, 8e6);
        // A path that appears later starts from zero; the first one reports only what is new.
        let b = s.sample(&[stats(0, 1_500_000, 2), stats(1, 250_000, 0)], 0.5);
        assert_eq!(
            (b[0].bytes, b[0].goodput_bps, b[0].retransmissions),
            (500_000, 8e6, 0)
        );
        assert_eq!((b[1].path, b[1].bytes, b[1].goodput_bps), (1, 250_000, 4e6));
        // Delivered so far: 1 MB, then 0.5 MB more on path 0 and 0.25 MB on path 1.
        assert_eq!(s.delivered(), 1_750_000);
        // A download measures received bytes, which these paths have none of.
        assert_eq!(
            Sampler::new(Direction::Download).sample(&[stats(0, 9, 0)], 1.0)[0].bytes,
            0
        );
    }

    #[test]
    fn an_interval_sums_its_path_rows() {
        let mut s = Sampler::new(Direction::Upload);
        let paths = s.sample(&[stats(0, 300_000, 0), stats(1, 200_000, 1)], 0.5);
        let i = Interval::of(1.0, 1.5, paths, ReceiverFigures::default());
        // 300 000 + 200 000 bytes in 0.5 s = 8 Mbit/s.
        assert_eq!((i.total_bytes, i.total_goodput_bps), (500_000, 8e6));
    }

    #[test]
    fn units_are_decimal() {
        assert_eq!(fmt_bytes(1_234_567), "1.23 MB");
        assert_eq!(fmt_rate(40e6), "40.0 Mbit/s");
        assert_eq!(fmt_rate(1.5e9), "1.50 Gbit/s");
        assert_eq!(bps(5_000_000, 2.0), 20e6);
    }
}
