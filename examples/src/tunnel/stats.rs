//! The tunnel's counters (packets and bytes at each stage, ICMP answers, drops, the reorder buffer's figures)
//! and the periodic status report: one line for the tunnel and one per path, as text or JSON.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use mpquic::proto::connection::PathStats;
use serde::Serialize;

use super::reorder::ReorderStats;
use crate::perf::report::{bps, fmt_bytes, fmt_rate};

/// Packets and bytes.
#[derive(Debug, Default)]
pub struct Count {
    packets: AtomicU64,
    bytes: AtomicU64,
}

impl Count {
    /// Counts one packet of `len` bytes.
    pub fn add(&self, len: usize) {
        self.packets.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(len as u64, Ordering::Relaxed);
    }

    fn get(&self) -> PacketCount {
        PacketCount {
            packets: self.packets.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
        }
    }
}

/// Everything the forwarding tasks count, shared between them.
#[derive(Debug, Default)]
pub struct Counters {
    /// IP packets read from the TUN device.
    pub from_tun: Count,
    /// Packets handed to the connection (DATAGRAM frames or stream records).
    pub sent: Count,
    /// Packets received from the connection.
    pub received: Count,
    /// Packets written to the TUN device.
    pub to_tun: Count,
    /// Oversized packets answered with ICMP / ICMPv6 "too big".
    pub too_big_answered: AtomicU64,
    /// Oversized packets dropped without an answer (IPv4 without DF, ICMP errors, fragments).
    pub too_big_dropped: AtomicU64,
    /// Packets the connection refused (closed, or no datagram support).
    pub send_failed: AtomicU64,
    /// Received frames that were not a tunnel packet.
    pub malformed: AtomicU64,
    /// Packets the TUN device refused.
    pub tun_write_failed: AtomicU64,
    /// The reorder buffer's figures.
    pub reorder: Mutex<ReorderStats>,
}

/// Packets and bytes, as numbers.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PacketCount {
    /// Packets.
    pub packets: u64,
    /// Bytes of IP packets.
    pub bytes: u64,
}

/// The counters at one moment.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    /// Read from the TUN device.
    pub from_tun: PacketCount,
    /// Handed to the connection.
    pub sent: PacketCount,
    /// Received from the connection.
    pub received: PacketCount,
    /// Written to the TUN device.
    pub to_tun: PacketCount,
    /// Answered with "too big".
    pub too_big_answered: u64,
    /// Too big, dropped without an answer.
    pub too_big_dropped: u64,
    /// Refused by the connection.
    pub send_failed: u64,
    /// Malformed frames received.
    pub malformed: u64,
    /// Refused by the TUN device.
    pub tun_write_failed: u64,
    /// Reorder buffer.
    pub reorder: ReorderStats,
}

impl Counters {
    /// The counters now.
    pub fn snapshot(&self) -> Snapshot {
        let n = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Snapshot {
            from_tun: self.from_tun.get(),
            sent: self.sent.get(),
            received: self.received.get(),
            to_tun: self.to_tun.get(),
            too_big_answered: n(&self.too_big_answered),
            too_big_dropped: n(&self.too_big_dropped),
            send_failed: n(&self.send_failed),
            malformed: n(&self.malformed),
            tun_write_failed: n(&self.tun_write_failed),
            reorder: self.reorder.lock().map(|r| *r).unwrap_or_default(),
        }
    }
}

/// One path in a status report.
#[derive(Debug, Clone, Serialize)]
pub struct PathStatus {
    /// Path ID.
    pub path: u32,
    /// The peer's address on it.
    pub remote: SocketAddr,
    /// `active`, `backup`, `validating` or `abandoned`.
    pub state: &'static str,
    /// UDP bytes sent per second over the interval, in bit/s.
    pub tx_bps: f64,
    /// UDP bytes received per second over the interval, in bit/s.
    pub rx_bps: f64,
    /// UDP bytes sent on the path so far.
    pub bytes_sent: u64,
    /// UDP bytes received on the path so far.
    pub bytes_received: u64,
    /// Smoothed RTT, ms.
    pub srtt_ms: f64,
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Packets declared lost so far.
    pub lost: u64,
}

/// One status report.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// Seconds since the connection was established.
    pub t: f64,
    /// Tunnel packets sent per second over the interval, in bit/s (IP bytes).
    pub tx_bps: f64,
    /// Tunnel packets written to the TUN device per second, in bit/s (IP bytes).
    pub rx_bps: f64,
    /// The TUN MTU in force.
    pub tun_mtu: usize,
    /// The counters so far.
    pub counters: Snapshot,
    /// Per path.
    pub paths: Vec<PathStatus>,
}

/// Turns successive counters into per-interval rates.
#[derive(Debug, Default)]
pub struct Reporter {
    last_t: f64,
    last: Snapshot,
    last_paths: BTreeMap<u32, (u64, u64)>,
}

impl Reporter {
    /// The report at `t` seconds.
    pub fn status(&mut self, t: f64, counters: Snapshot, paths: &[PathStats], tun_mtu: usize) -> Status {
        let secs = (t - self.last_t).max(1e-9);
        let status = Status {
            t,
            tx_bps: bps(counters.sent.bytes.saturating_sub(self.last.sent.bytes), secs),
            rx_bps: bps(counters.to_tun.bytes.saturating_sub(self.last.to_tun.bytes), secs),
            tun_mtu,
            counters,
            paths: paths
                .iter()
                .map(|p| {
                    let (sent, received) = self.last_paths.get(&p.path.0).copied().unwrap_or((0, 0));
                    PathStatus {
                        path: p.path.0,
                        remote: p.remote,
                        state: if p.abandoned {
                            "abandoned"
                        } else if !p.validated {
                            "validating"
                        } else if p.backup {
                            "backup"
                        } else {
                            "active"
                        },
                        tx_bps: bps(p.bytes_sent.saturating_sub(sent), secs),
                        rx_bps: bps(p.bytes_received.saturating_sub(received), secs),
                        bytes_sent: p.bytes_sent,
                        bytes_received: p.bytes_received,
                        srtt_ms: p.srtt.as_secs_f64() * 1e3,
                        cwnd: p.cwnd,
                        lost: p.packets_lost,
                    }
                })
                .collect(),
        };
        self.last_t = t;
        self.last = counters;
        self.last_paths = paths
            .iter()
            .map(|p| (p.path.0, (p.bytes_sent, p.bytes_received)))
            .collect();
        status
    }
}

/// The status as text: a tunnel line, then one line per path.
pub fn status_text(s: &Status) -> String {
    let c = &s.counters;
    let r = &c.reorder;
    let mut out = format!(
        "[{:7.2}s] tunnel tx {} rx {} | pkts out {} in {} | mtu {} too-big {}+{} | reorder held {} late {} \
         skipped {}\n",
        s.t,
        fmt_rate(s.tx_bps),
        fmt_rate(s.rx_bps),
        c.sent.packets,
        c.to_tun.packets,
        s.tun_mtu,
        c.too_big_answered,
        c.too_big_dropped,
        r.held,
        r.late,
        r.skipped_timeout + r.skipped_overflow,
    );
    for p in &s.paths {
        out.push_str(&format!(
            "           [P{}] {} {:<10} tx {} rx {} rtt {:.1} ms cwnd {} lost {}\n",
            p.path,
            p.remote,
            p.state,
            fmt_rate(p.tx_bps),
            fmt_rate(p.rx_bps),
            p.srtt_ms,
            fmt_bytes(p.cwnd),
            p.lost
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use super::*;

    #[test]
    fn rates_are_per_interval() {
        let c = Counters::default();
        for _ in 0..10 {
            c.sent.add(1000);
            c.to_tun.add(500);
        }
        let mut r = Reporter::default();
        let s = r.status(2.0, c.snapshot(), &[], 1432);
        // 10 000 bytes in 2 s = 40 000 bit/s; 5 000 bytes = 20 000 bit/s.
        assert_eq!((s.tx_bps, s.rx_bps), (40_000.0, 20_000.0));
        c.sent.add(1000);
        let s = r.status(3.0, c.snapshot(), &[], 1432);
        assert_eq!((s.tx_bps, s.rx_bps), (8_000.0, 0.0));
        assert_eq!(
            s.counters.sent,
            PacketCount {
                packets: 11,
                bytes: 11_000
            }
        );
        assert!(status_text(&s).contains("pkts out 11 in 10"));
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["counters"]["sent"]["bytes"], 11_000);
    }
}
