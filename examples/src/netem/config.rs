//! The emulator's configuration: the server address, and per path the front address and one
//! [`LinkConfig`] per direction; the seed; scheduled up/down events; an optional control port.
//!
//! This is the library's input, whatever produced it (the command line through [`super::spec`], a TOML file
//! through [`super::file`], or a test building it directly). Invariant after [`EmulatorConfig::validate`]: 1
//! to [`MAX_PATHS`] paths, every link configuration valid for the link model (its ranges are
//! `mpquic_netsim::link::limits`), every event naming an existing path at a time up to [`MAX_EVENT_TIME`],
//! an overhead up to [`MAX_OVERHEAD`] bytes.

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use mpquic_netsim::link::LinkConfig;
use serde::Serialize;

use super::error::NetemError;

/// The most paths (each has two sockets and its own tasks).
pub const MAX_PATHS: usize = 64;
/// The largest per-datagram overhead: 64 KiB, the most an IP packet can carry.
pub const MAX_OVERHEAD: usize = 65_535;
/// The latest time of a scheduled event, and the longest `--duration`: one year.
pub const MAX_EVENT_TIME: Duration = Duration::from_secs(365 * 86_400);

/// One direction of a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Client → server: received on the front socket, sent from the back socket.
    Uplink,
    /// Server → client: received on the back socket, sent from the front socket.
    Downlink,
}

impl Direction {
    /// Both directions, uplink first.
    pub const BOTH: [Direction; 2] = [Direction::Uplink, Direction::Downlink];

    fn index(self) -> u64 {
        match self {
            Direction::Uplink => 0,
            Direction::Downlink => 1,
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Uplink => "uplink",
            Direction::Downlink => "downlink",
        })
    }
}

/// One emulated path.
#[derive(Clone, Debug, PartialEq)]
pub struct PathConfig {
    /// Where the front socket binds: the address the client sends to (port 0: any free port).
    pub listen: SocketAddr,
    /// Client → server link.
    pub uplink: LinkConfig,
    /// Server → client link.
    pub downlink: LinkConfig,
}

impl PathConfig {
    /// A path whose two directions have the same configuration.
    pub fn symmetric(listen: SocketAddr, link: LinkConfig) -> PathConfig {
        PathConfig {
            listen,
            uplink: link.clone(),
            downlink: link,
        }
    }

    /// The link configuration of `direction`.
    pub fn link(&self, direction: Direction) -> &LinkConfig {
        match direction {
            Direction::Uplink => &self.uplink,
            Direction::Downlink => &self.downlink,
        }
    }
}

/// Which paths an event or command applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathSelector {
    /// One path, by index from 0.
    One(usize),
    /// Every path.
    All,
}

impl fmt::Display for PathSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathSelector::One(k) => write!(f, "{k}"),
            PathSelector::All => f.write_str("all"),
        }
    }
}

/// A path brought up or down at a time after the emulator started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScheduledEvent {
    /// When, from the emulator's start.
    pub at: Duration,
    /// Which paths.
    pub path: PathSelector,
    /// Up (`true`) or down (`false`), in both directions.
    pub up: bool,
}

impl ScheduledEvent {
    /// Checks the event against a configuration of `paths` paths: an existing path, a time up to
    /// [`MAX_EVENT_TIME`].
    pub fn check(&self, paths: usize) -> Result<(), NetemError> {
        if self.at > MAX_EVENT_TIME {
            return Err(NetemError::OutOfRange {
                what: "event time".to_owned(),
                value: mpquic_netsim::units::format_duration(self.at),
                expected: "0 to 1 year (31536000s) from the start",
            });
        }
        let last = paths.saturating_sub(1);
        match self.path {
            PathSelector::One(k) if k > last => Err(NetemError::UnknownPath { path: k, last }),
            PathSelector::One(_) | PathSelector::All => Ok(()),
        }
    }
}

/// Everything the emulator needs to start.
#[derive(Clone, Debug, PartialEq)]
pub struct EmulatorConfig {
    /// The one server every path relays to.
    pub server: SocketAddr,
    /// The paths, numbered from 0 in this order.
    pub paths: Vec<PathConfig>,
    /// Seed of every link's random streams (each direction of each path derives its own).
    pub seed: u64,
    /// Up/down changes at fixed times.
    pub events: Vec<ScheduledEvent>,
    /// Where to listen for text commands (`down 1`, `up all`, `stats`) over UDP, if anywhere.
    pub control: Option<SocketAddr>,
    /// Bytes added to each datagram's payload to get its size on the emulated wire (IP and UDP headers);
    /// by default 28 for an IPv4 server, 48 for IPv6, like the simulator; at most 65535.
    pub overhead: Option<usize>,
}

impl EmulatorConfig {
    /// A configuration relaying to `server` with no path yet, seed 1, no events, no control port.
    pub fn new(server: SocketAddr) -> EmulatorConfig {
        EmulatorConfig {
            server,
            paths: Vec::new(),
            seed: 1,
            events: Vec::new(),
            control: None,
            overhead: None,
        }
    }

    /// This configuration with one more path.
    pub fn with_path(mut self, path: PathConfig) -> EmulatorConfig {
        self.paths.push(path);
        self
    }

    /// This configuration with the given seed.
    pub fn with_seed(mut self, seed: u64) -> EmulatorConfig {
        self.seed = seed;
        self
    }

    /// The per-datagram overhead in force (see [`EmulatorConfig::overhead`]).
    pub fn wire_overhead(&self) -> usize {
        self.overhead
            .unwrap_or(if self.server.is_ipv4() { 28 } else { 48 })
    }

    /// The seed of one direction of one path: a SplitMix64 step over the emulator's seed, the path and the
    /// direction, so that the streams are independent and stable when paths are added after this one.
    pub fn link_seed(&self, path: usize, direction: Direction) -> u64 {
        let salt = (path as u64).wrapping_mul(2).wrapping_add(direction.index());
        let mut z = self
            .seed
            .wrapping_add(salt.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Checks that the configuration can run (see the module documentation).
    pub fn validate(&self) -> Result<(), NetemError> {
        if self.paths.is_empty() {
            return Err(NetemError::NoPath);
        }
        if self.paths.len() > MAX_PATHS {
            return Err(NetemError::OutOfRange {
                what: "paths".to_owned(),
                value: self.paths.len().to_string(),
                expected: "1 to 64 paths",
            });
        }
        if let Some(overhead) = self.overhead.filter(|o| *o > MAX_OVERHEAD) {
            return Err(NetemError::OutOfRange {
                what: "overhead".to_owned(),
                value: overhead.to_string(),
                expected: "0 to 65535 bytes",
            });
        }
        for (k, path) in self.paths.iter().enumerate() {
            for direction in Direction::BOTH {
                path.link(direction)
                    .validate()
                    .map_err(|source| NetemError::Link {
                        path: k,
                        direction,
                        source,
                    })?;
            }
        }
        for event in &self.events {
            event.check(self.paths.len())?;
        }
        Ok(())
    }
}
