//! Per-path, per-direction counters, and how they are printed (a text table, or JSON).
//!
//! Every datagram read from a socket is counted once in `received` and, once its fate is known, once more
//! in exactly one of `forwarded` or a `dropped_*` counter; the difference is what is still held by the
//! emulated link (queued or propagating). Bytes are UDP payload bytes (what the application sent), not the
//! wire size the link model charges (payload plus headers).

use std::fmt::Write as _;
use std::net::SocketAddr;

use serde::Serialize;

/// A number of datagrams and their total payload size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Count {
    /// Datagrams.
    pub packets: u64,
    /// Payload bytes.
    pub bytes: u64,
}

impl Count {
    /// Adds one datagram of `len` bytes.
    pub fn add(&mut self, len: usize) {
        self.packets = self.packets.saturating_add(1);
        self.bytes = self.bytes.saturating_add(len as u64);
    }
}

/// What one direction of one path did with the datagrams it received.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DirectionCounters {
    /// Read from the receiving socket.
    pub received: Count,
    /// Sent out of the other socket.
    pub forwarded: Count,
    /// Refused by the drop-tail queue (or by the emulator's memory cap on held datagrams).
    pub dropped_queue: Count,
    /// Lost by the loss model.
    pub dropped_loss: Count,
    /// Received while the path was down, or held by the link when it went down.
    pub dropped_down: Count,
    /// Not deliverable: server→client before any client datagram on this path, or a failed send.
    pub dropped_other: Count,
    /// Extra copies sent by the duplication impairment.
    pub duplicated: Count,
    /// Forwarded with one bit flipped by the corruption impairment.
    pub corrupted: Count,
}

impl DirectionCounters {
    /// All drops, whatever the reason.
    pub fn dropped(&self) -> Count {
        let mut total = Count::default();
        for c in [
            self.dropped_queue,
            self.dropped_loss,
            self.dropped_down,
            self.dropped_other,
        ] {
            total.packets = total.packets.saturating_add(c.packets);
            total.bytes = total.bytes.saturating_add(c.bytes);
        }
        total
    }
}

/// A snapshot of one path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PathCounters {
    /// Path index, from 0.
    pub path: usize,
    /// The front socket's address (where the client sends).
    pub front: SocketAddr,
    /// The back socket's address (what the server sees as the client).
    pub back: SocketAddr,
    /// The last client address seen on the front socket.
    pub client: Option<SocketAddr>,
    /// Whether the path is up.
    pub up: bool,
    /// Client → server.
    pub uplink: DirectionCounters,
    /// Server → client.
    pub downlink: DirectionCounters,
}

/// Formats a byte count with a decimal prefix (`1.50 MB`).
fn human_bytes(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.2} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{bytes} B")
    }
}

/// The counters as a text table, one row per path and direction, preceded by a header line.
pub fn format_table(paths: &[PathCounters]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<4} {:<5} {:<8} {:>9} {:>11} {:>9} {:>11} {:>8} {:>8} {:>8} {:>8}",
        "path",
        "state",
        "dir",
        "rx pkts",
        "rx bytes",
        "fwd pkts",
        "fwd bytes",
        "queue",
        "loss",
        "down",
        "other"
    );
    for p in paths {
        for (name, c) in [("uplink", &p.uplink), ("downlink", &p.downlink)] {
            let _ = writeln!(
                out,
                "{:<4} {:<5} {:<8} {:>9} {:>11} {:>9} {:>11} {:>8} {:>8} {:>8} {:>8}",
                p.path,
                if p.up { "up" } else { "down" },
                name,
                c.received.packets,
                human_bytes(c.received.bytes),
                c.forwarded.packets,
                human_bytes(c.forwarded.bytes),
                c.dropped_queue.packets,
                c.dropped_loss.packets,
                c.dropped_down.packets,
                c.dropped_other.packets,
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_a_row_per_direction() {
        let mut up = DirectionCounters::default();
        up.received.add(1200);
        up.forwarded.add(1200);
        let p = PathCounters {
            path: 0,
            front: SocketAddr::from(([127, 0, 0, 1], 5000)),
            back: SocketAddr::from(([127, 0, 0, 1], 40000)),
            client: None,
            up: true,
            uplink: up,
            downlink: DirectionCounters::default(),
        };
        let table = format_table(&[p]);
        assert_eq!(table.lines().count(), 3, "{table}");
        assert!(table.contains("1.2 kB"), "{table}");
        assert_eq!(human_bytes(1_500_000), "1.50 MB");
    }
}
