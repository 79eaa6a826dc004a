//! The drop-tail queue in front of the serialiser.
//!
//! The queue holds every accepted packet whose last bit has not yet left (including the one being serialised).
//! Its occupancy at `now` is the *backlog*: the bytes not yet serialised at `now` (the packet on the wire
//! counts only for its remaining part, pro rata of its transmission time, rounded up) and the number of packets
//! not yet fully serialised.
//!
//! Admission (drop-tail): a packet of `len` bytes is accepted iff the serialiser is idle (empty backlog: a
//! packet never waits, so no limit can refuse it; this keeps a limit smaller than one packet from turning
//! the link into a black hole) or the backlog *including it* stays within the limit:
//! `backlog_bytes + len ≤ limit` for byte limits, `backlog_packets + 1 ≤ limit` for packet limits. A BDP limit
//! is a byte limit of `⌊multiple · rate · base_rtt / 8⌋`, recomputed when the rate or the delay changes; if it
//! comes to less than a packet (a rate cut to a few kbit/s), the link still carries one packet at a time.
//!
//! Invariant: `entries` is in serialisation order, finish times are non-decreasing, and `total_bytes` is the
//! sum of their sizes.

use std::collections::VecDeque;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::error::ConfigError;
use super::limits::{MAX_BDP_MULTIPLE, MAX_DELAY, MAX_QUEUE_BYTES, MAX_QUEUE_PACKETS};
use crate::time::SimTime;

/// How much a link's queue may hold before it drops arriving packets (drop-tail).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueLimit {
    /// At most this many bytes not yet serialised (TOML: `{ kind = "bytes", bytes = 150000 }`).
    Bytes {
        /// The limit in bytes: 1 to 10^9 (1 GB).
        bytes: u64,
    },
    /// At most this many packets not yet fully serialised (TOML: `{ kind = "packets", packets = 100 }`).
    Packets {
        /// The limit in packets: 1 to 10^6.
        packets: u64,
    },
    /// A multiple of the bandwidth-delay product `rate · base_rtt`, in bytes
    /// (TOML: `{ kind = "bdp", multiple = 1.0, base_rtt = "40ms" }`).
    Bdp {
        /// How many BDPs: > 0 and at most 1000.
        multiple: f64,
        /// Round-trip time of the path(s) this link is the bottleneck of. When absent, twice the link's own
        /// one-way delay (right for a single link used in both directions with the same delay).
        #[serde(
            default,
            with = "crate::units::option_duration",
            skip_serializing_if = "Option::is_none"
        )]
        base_rtt: Option<Duration>,
    },
}

impl Default for QueueLimit {
    /// One BDP over twice the link's one-way delay: the default of the project's scenarios.
    fn default() -> Self {
        QueueLimit::Bdp {
            multiple: 1.0,
            base_rtt: None,
        }
    }
}

/// A queue limit resolved against the current rate and delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResolvedLimit {
    /// At most this many bytes of backlog.
    Bytes(u64),
    /// At most this many packets of backlog.
    Packets(u64),
}

impl QueueLimit {
    /// Checks the limit for a link of one-way `delay`.
    pub fn validate(&self, delay: Duration) -> Result<(), ConfigError> {
        match *self {
            QueueLimit::Bytes { bytes } if !(1..=MAX_QUEUE_BYTES).contains(&bytes) => Err(ConfigError::new(
                "queue.bytes",
                bytes,
                "a byte count from 1 to 10^9 (1 GB)",
            )),
            QueueLimit::Packets { packets } if !(1..=MAX_QUEUE_PACKETS).contains(&packets) => Err(
                ConfigError::new("queue.packets", packets, "a packet count from 1 to 10^6"),
            ),
            QueueLimit::Bytes { .. } | QueueLimit::Packets { .. } => Ok(()),
            QueueLimit::Bdp { multiple, base_rtt } => {
                if !(multiple.is_finite() && multiple > 0.0 && multiple <= MAX_BDP_MULTIPLE) {
                    return Err(ConfigError::new(
                        "queue.multiple",
                        multiple,
                        "a number > 0 and at most 1000",
                    ));
                }
                if let Some(rtt) = base_rtt.filter(|r| *r > MAX_DELAY) {
                    return Err(ConfigError::new(
                        "queue.base_rtt",
                        crate::units::format_duration(rtt),
                        "a duration > 0 and at most 1 hour (3600s)",
                    ));
                }
                let rtt = base_rtt.unwrap_or(delay.saturating_mul(2));
                if rtt.is_zero() {
                    return Err(ConfigError::new(
                        "queue.base_rtt",
                        "0",
                        "a duration > 0 (set it when the link's delay is 0)",
                    ));
                }
                Ok(())
            }
        }
    }

    /// The limit in force for a link of `rate_bps` and one-way `delay`.
    pub fn resolve(&self, rate_bps: u64, delay: Duration) -> ResolvedLimit {
        match *self {
            QueueLimit::Bytes { bytes } => ResolvedLimit::Bytes(bytes),
            QueueLimit::Packets { packets } => ResolvedLimit::Packets(packets),
            QueueLimit::Bdp { multiple, base_rtt } => {
                let rtt = base_rtt.unwrap_or(delay.saturating_mul(2));
                // rate · rtt in bit·ns is an integer, exact in f64 up to 2^53 (e.g. 10 Gbit/s × 900 s), so for
                // round multiples the result is exact (8 Mbit/s × 10 ms = 10 000 B, not 9 999.999…).
                let bit_nanos = u128::from(rate_bps) * rtt.as_nanos();
                #[allow(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    clippy::cast_precision_loss
                )]
                let bytes = (multiple * bit_nanos as f64 / 8e9).floor() as u64;
                ResolvedLimit::Bytes(bytes)
            }
        }
    }
}

/// Occupancy of the queue at an instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    /// Bytes not yet serialised.
    pub bytes: u64,
    /// Packets not yet fully serialised (the one on the wire included).
    pub packets: u64,
}

/// A packet accepted and not yet fully serialised.
#[derive(Clone, Copy, Debug)]
struct Entry {
    start: SimTime,
    finish: SimTime,
    bytes: u64,
}

/// The packets between the link's input and the wire.
#[derive(Clone, Debug, Default)]
pub(crate) struct Queue {
    entries: VecDeque<Entry>,
    total_bytes: u64,
}

impl Queue {
    /// Forgets packets fully serialised by `now` and returns the backlog at `now`.
    pub(crate) fn backlog(&mut self, now: SimTime) -> Backlog {
        while let Some(front) = self.entries.front() {
            if front.finish > now {
                break;
            }
            self.total_bytes = self.total_bytes.saturating_sub(front.bytes);
            self.entries.pop_front();
        }
        let Some(front) = self.entries.front() else {
            return Backlog::default();
        };
        // Only the front packet can be on the wire; the ones behind it start when it finishes.
        let sent = if front.start < now {
            let total = u128::from(front.finish.as_nanos().saturating_sub(front.start.as_nanos()));
            let left = u128::from(front.finish.as_nanos().saturating_sub(now.as_nanos()));
            let unsent = (u128::from(front.bytes) * left).div_ceil(total.max(1));
            front
                .bytes
                .saturating_sub(u64::try_from(unsent).unwrap_or(u64::MAX))
        } else {
            0
        };
        Backlog {
            bytes: self.total_bytes.saturating_sub(sent),
            packets: self.entries.len() as u64,
        }
    }

    /// Whether a packet of `len` bytes fits given `backlog` (see the module documentation).
    pub(crate) fn admits(backlog: Backlog, len: u64, limit: ResolvedLimit) -> bool {
        if backlog.packets == 0 {
            return true;
        }
        match limit {
            ResolvedLimit::Bytes(max) => backlog.bytes.saturating_add(len) <= max,
            ResolvedLimit::Packets(max) => backlog.packets.saturating_add(1) <= max,
        }
    }

    /// Records an accepted packet serialised from `start` to `finish`.
    pub(crate) fn push(&mut self, start: SimTime, finish: SimTime, bytes: u64) {
        self.entries.push_back(Entry { start, finish, bytes });
        self.total_bytes = self.total_bytes.saturating_add(bytes);
    }
}
