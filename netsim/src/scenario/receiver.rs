//! The receiving application of a flow: how its receive windows grow and how fast it reads.
//!
//! ```toml
//! [[flows]]
//! # ...
//! receiver = { policy = "linux", min_window = "4KiB", window = "128KiB", max_window = "6MiB",
//!              conn_window = "128KiB", max_conn_window = "6MiB", read_rate = "20Mbit/s" }
//! ```
//!
//! | key | meaning | range | default |
//! |---|---|---|---|
//! | `policy` | how receive windows grow: `fixed` (never), `auto` (doubling auto-tuning), `linux` (`tcp_rmem`-like right-sizing to ≈ 2 × what the application read in the last RTT) | one of the three | `auto` |
//! | `window_update` | when freed credit is sent: `eighth` (once it raises the limit by an eighth of the window, the library's default) or `half` (once less than half the window is left) | one of the two | `half` with `auto`, `eighth` otherwise |
//! | `window` | initial receive window of every stream | 1 KiB – 1 GiB | 16 MiB |
//! | `min_window` | floor of a stream window (`linux` only; ignored by the others) | 1 KiB – `window` | the library's |
//! | `max_window` | cap of a stream window | `window` – 1 GiB | 64 MiB, or `window` if larger |
//! | `conn_window` | initial connection receive window | 1 KiB – 1 GiB | 16 MiB |
//! | `min_conn_window` | floor of the connection window (`linux` only) | 1 KiB – `conn_window` | the library's |
//! | `max_conn_window` | cap of the connection window | `conn_window` – 1 GiB | 64 MiB, or `conn_window` if larger |
//! | `read_rate` | the application reads at most this many bits per second (token bucket, see the engine) | 8 kbit/s – 1 Tbit/s | unlimited |
//!
//! Sizes are bytes (integer or `"128KiB"`), the rate bits per second (integer or `"20Mbit/s"`), see
//! [`super::quantity`]. The defaults of the windows are the simulator's own for flows without a `receiver`
//! section (generous, so that flow control never limits a bulk transfer), so a section that sets only
//! `read_rate` changes nothing else. The `auto` policy keeps the half-window update rule by default (the
//! library's default became `eighth` after the studies were run; `half` keeps their results). The settings apply to both ends of the connection (each end receives
//! something: the data, or the requests and acknowledgements of a request/response workload).

use serde::{Deserialize, Serialize};

use super::ScenarioError;
use super::quantity::format_bytes;

/// The simulator's default initial windows (stream and connection) for every flow.
pub const DEFAULT_WINDOW: u64 = 16 << 20;
/// The simulator's default window caps.
pub const DEFAULT_MAX_WINDOW: u64 = 64 << 20;
/// Smallest window accepted.
pub const MIN_WINDOW: u64 = 1 << 10;
/// Largest window accepted.
pub const MAX_WINDOW: u64 = 1 << 30;
/// Slowest read rate accepted, bits per second.
pub const MIN_READ_RATE: u64 = 8_000;
/// Fastest read rate accepted, bits per second.
pub const MAX_READ_RATE: u64 = 1_000_000_000_000;

/// How a receive window grows (the library's `WindowPolicy`, by name).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Stays at its initial size.
    Fixed,
    /// Doubles when the application drains it within two RTTs, up to the cap.
    #[default]
    Auto,
    /// Linux `tcp_rmem`-like right-sizing: ≈ 2 × the bytes read in the last RTT, between floor and cap.
    Linux,
}

impl Policy {
    /// The name as written in scenario files.
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Fixed => "fixed",
            Policy::Auto => "auto",
            Policy::Linux => "linux",
        }
    }
}

/// When freed credit is sent (the library's `WindowUpdate`, by name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Update {
    /// Once the new limit is an eighth of the window above the advertised one.
    Eighth,
    /// Once less than half the window is left.
    Half,
}

impl Update {
    /// The name as written in scenario files.
    pub fn as_str(self) -> &'static str {
        match self {
            Update::Eighth => "eighth",
            Update::Half => "half",
        }
    }
}

/// A flow's `receiver` table (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiverSpec {
    /// Window policy (default `auto`).
    #[serde(default)]
    pub policy: Policy,
    /// Window update rule (default: `half` with `auto`, `eighth` otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_update: Option<Update>,
    /// Initial stream window, bytes.
    #[serde(
        default,
        with = "super::quantity::option_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    pub window: Option<u64>,
    /// Floor of a stream window (`linux`), bytes.
    #[serde(
        default,
        with = "super::quantity::option_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    pub min_window: Option<u64>,
    /// Cap of a stream window, bytes.
    #[serde(
        default,
        with = "super::quantity::option_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_window: Option<u64>,
    /// Initial connection window, bytes.
    #[serde(
        default,
        with = "super::quantity::option_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    pub conn_window: Option<u64>,
    /// Floor of the connection window (`linux`), bytes.
    #[serde(
        default,
        with = "super::quantity::option_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    pub min_conn_window: Option<u64>,
    /// Cap of the connection window, bytes.
    #[serde(
        default,
        with = "super::quantity::option_bytes",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_conn_window: Option<u64>,
    /// Reading rate of the application, bits per second (`None`: as fast as data arrives).
    #[serde(
        default,
        with = "super::quantity::option_rate",
        skip_serializing_if = "Option::is_none"
    )]
    pub read_rate: Option<u64>,
}

/// The windows of a receiver with every default applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Windows {
    /// Policy.
    pub policy: Policy,
    /// Window update rule.
    pub update: Update,
    /// Initial stream window.
    pub window: u64,
    /// Stream floor (`None`: the library's default).
    pub min_window: Option<u64>,
    /// Stream cap.
    pub max_window: u64,
    /// Initial connection window.
    pub conn_window: u64,
    /// Connection floor (`None`: the library's default).
    pub min_conn_window: Option<u64>,
    /// Connection cap.
    pub max_conn_window: u64,
}

impl ReceiverSpec {
    /// The windows with defaults applied (see the module documentation).
    pub fn windows(&self) -> Windows {
        let window = self.window.unwrap_or(DEFAULT_WINDOW);
        let conn_window = self.conn_window.unwrap_or(DEFAULT_WINDOW);
        Windows {
            policy: self.policy,
            update: self.window_update.unwrap_or(match self.policy {
                Policy::Auto => Update::Half,
                Policy::Fixed | Policy::Linux => Update::Eighth,
            }),
            window,
            min_window: self.min_window,
            max_window: self.max_window.unwrap_or(DEFAULT_MAX_WINDOW.max(window)),
            conn_window,
            min_conn_window: self.min_conn_window,
            max_conn_window: self
                .max_conn_window
                .unwrap_or(DEFAULT_MAX_WINDOW.max(conn_window)),
        }
    }

    /// Checks every range; `field` is the table's path (`flows[0].receiver`).
    pub fn validate(&self, field: &str) -> Result<(), ScenarioError> {
        let w = self.windows();
        let range = |key: &str, value: u64, lo: u64, hi: u64, lo_name: &str| {
            if value < lo || value > hi {
                Err(ScenarioError::invalid(
                    format!("{field}.{key}"),
                    format!(
                        "{value} bytes ({}) is out of range: expected {lo_name} ({}) to 1GiB",
                        format_bytes(value),
                        format_bytes(lo)
                    ),
                ))
            } else {
                Ok(())
            }
        };
        range("window", w.window, MIN_WINDOW, MAX_WINDOW, "1KiB")?;
        range("conn_window", w.conn_window, MIN_WINDOW, MAX_WINDOW, "1KiB")?;
        range("max_window", w.max_window, w.window, MAX_WINDOW, "`window`")?;
        range(
            "max_conn_window",
            w.max_conn_window,
            w.conn_window,
            MAX_WINDOW,
            "`conn_window`",
        )?;
        for (key, floor, initial) in [
            ("min_window", w.min_window, w.window),
            ("min_conn_window", w.min_conn_window, w.conn_window),
        ] {
            if let Some(floor) = floor {
                if floor < MIN_WINDOW || floor > initial {
                    let of = if key == "min_window" {
                        "window"
                    } else {
                        "conn_window"
                    };
                    return Err(ScenarioError::invalid(
                        format!("{field}.{key}"),
                        format!(
                            "{floor} bytes ({}) is out of range: expected 1KiB to `{of}` ({})",
                            format_bytes(floor),
                            format_bytes(initial)
                        ),
                    ));
                }
            }
        }
        if let Some(rate) = self.read_rate {
            if !(MIN_READ_RATE..=MAX_READ_RATE).contains(&rate) {
                return Err(ScenarioError::invalid(
                    format!("{field}.read_rate"),
                    format!(
                        "{rate} bit/s is out of range: expected 8kbit/s to 1000Gbit/s ({MIN_READ_RATE} to \
                         {MAX_READ_RATE} bit/s)"
                    ),
                ));
            }
        }
        Ok(())
    }
}
