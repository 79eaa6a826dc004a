//! Links of a scenario: two endpoints and the link model of each direction.
//!
//! A link joins two endpoints (`between = [a, b]`). Its *forward* direction carries packets from `a` to `b`,
//! its *reverse* direction from `b` to `a`. The fields of [`LinkConfig`] written on the link apply to both
//! directions; a `reverse` table overrides any of them for the reverse direction only:
//!
//! ```toml
//! [links.uplink]
//! between = ["phone.lte", "r1"]
//! rate_bps = 50_000_000          # a → b
//! delay = "20ms"
//! reverse = { rate_bps = 10_000_000 }   # b → a: 10 Mbit/s, same delay
//! ```

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::link::{Impairments, JitterConfig, LinkConfig, LossModel, QueueLimit};

/// A link as written in a scenario file (the key of its table is its name).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// The two endpoints: `"host.interface"`, `"host"` (a host with a single interface) or `"router"`.
    pub between: [String; 2],
    /// Serialisation rate in bits per second (both directions unless overridden).
    pub rate_bps: u64,
    /// One-way propagation delay.
    #[serde(with = "crate::units::duration")]
    pub delay: Duration,
    /// Jitter (default none).
    #[serde(default)]
    pub jitter: JitterConfig,
    /// Random loss (default none).
    #[serde(default)]
    pub loss: LossModel,
    /// Drop-tail queue limit (default one BDP over twice `delay`).
    #[serde(default)]
    pub queue: QueueLimit,
    /// Corruption and duplication (default none).
    #[serde(default)]
    pub impairments: Impairments,
    /// Whether the link starts up (both directions; default `true`).
    #[serde(default = "default_up")]
    pub up: bool,
    /// The largest packet carried, in bytes on the wire, UDP payload plus 28 bytes of IPv4 and UDP headers
    /// (both directions unless overridden; default none: any size). Range 68 to 65535.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    /// Overrides for the reverse direction (`between[1]` → `between[0]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<LinkOverride>,
}

fn default_up() -> bool {
    true
}

/// Changes to some of a direction's settings (every field optional); used by `reverse` and by `set` events.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkOverride {
    /// New rate in bits per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_bps: Option<u64>,
    /// New one-way delay.
    #[serde(
        default,
        with = "crate::units::option_duration",
        skip_serializing_if = "Option::is_none"
    )]
    pub delay: Option<Duration>,
    /// New jitter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<JitterConfig>,
    /// New loss model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossModel>,
    /// New queue limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueLimit>,
    /// New impairments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impairments: Option<Impairments>,
    /// New MTU (a `set` event that lowers it makes a path MTU black hole).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
}

impl LinkOverride {
    /// Whether no field is set.
    pub fn is_empty(&self) -> bool {
        *self == LinkOverride::default()
    }

    /// `base` with the fields set here replaced.
    pub fn apply(&self, base: &LinkConfig) -> LinkConfig {
        let mut config = base.clone();
        if let Some(rate) = self.rate_bps {
            config.rate_bps = rate;
        }
        if let Some(delay) = self.delay {
            config.delay = delay;
        }
        if let Some(jitter) = &self.jitter {
            config.jitter = jitter.clone();
        }
        if let Some(loss) = &self.loss {
            config.loss = loss.clone();
        }
        if let Some(queue) = &self.queue {
            config.queue = queue.clone();
        }
        if let Some(impairments) = &self.impairments {
            config.impairments = impairments.clone();
        }
        if let Some(mtu) = self.mtu {
            config.mtu = Some(mtu);
        }
        config
    }
}

/// One direction of a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// From `between[0]` to `between[1]`.
    Forward,
    /// From `between[1]` to `between[0]`.
    Reverse,
}

impl Direction {
    /// The other direction.
    pub fn opposite(self) -> Direction {
        match self {
            Direction::Forward => Direction::Reverse,
            Direction::Reverse => Direction::Forward,
        }
    }

    /// `"forward"` or `"reverse"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Forward => "forward",
            Direction::Reverse => "reverse",
        }
    }
}

impl LinkSpec {
    /// The settings of the forward direction (`between[0]` → `between[1]`).
    pub fn forward(&self) -> LinkConfig {
        LinkConfig {
            rate_bps: self.rate_bps,
            delay: self.delay,
            jitter: self.jitter.clone(),
            loss: self.loss.clone(),
            queue: self.queue.clone(),
            impairments: self.impairments.clone(),
            up: self.up,
            mtu: self.mtu,
        }
    }

    /// The settings of the reverse direction: the forward ones with `reverse` applied.
    pub fn reverse(&self) -> LinkConfig {
        let forward = self.forward();
        match &self.reverse {
            Some(o) => o.apply(&forward),
            None => forward,
        }
    }

    /// The settings of one direction.
    pub fn direction(&self, direction: Direction) -> LinkConfig {
        match direction {
            Direction::Forward => self.forward(),
            Direction::Reverse => self.reverse(),
        }
    }
}
