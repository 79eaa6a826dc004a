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
//!
//! # Delay on one direction only
//!
//! Emulators are often set up with the delay on one direction only (a Dummynet pipe or a netem qdisc on the
//! data path, nothing on the return path), so that the configured delay *is* the round-trip time the link
//! adds. `delay_on = "forward"` (or `"reverse"`) models that: the named direction gets `delay`, the other
//! none. A BDP queue limit without a `base_rtt` then uses `delay` itself as the round trip in *both*
//! directions (the link adds `delay + 0` to a round trip, not `2 · delay`). The default `"both"` applies
//! `delay` to each direction. `delay_on` other than `"both"` cannot be combined with `reverse.delay`
//! (say the delay of each direction in one place).

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
    /// Which directions get `delay` (default both; see the module documentation).
    #[serde(default, skip_serializing_if = "DelayOn::is_both")]
    pub delay_on: DelayOn,
    /// Overrides for the reverse direction (`between[1]` → `between[0]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<LinkOverride>,
}

fn default_up() -> bool {
    true
}

/// Which directions of a link get its `delay` (TOML: `delay_on = "both"`, `"forward"` or `"reverse"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DelayOn {
    /// Both directions (the default): the link adds `2 · delay` to a round trip.
    #[default]
    Both,
    /// Only `between[0]` → `between[1]`: the link adds `delay` to a round trip.
    Forward,
    /// Only `between[1]` → `between[0]`: the link adds `delay` to a round trip.
    Reverse,
}

impl DelayOn {
    /// Whether this is the default.
    pub fn is_both(&self) -> bool {
        *self == DelayOn::Both
    }

    /// `"both"`, `"forward"` or `"reverse"`.
    pub fn as_str(self) -> &'static str {
        match self {
            DelayOn::Both => "both",
            DelayOn::Forward => "forward",
            DelayOn::Reverse => "reverse",
        }
    }
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
        let delay = if self.delay_on == DelayOn::Reverse {
            Duration::ZERO
        } else {
            self.delay
        };
        LinkConfig {
            rate_bps: self.rate_bps,
            delay,
            jitter: self.jitter.clone(),
            loss: self.loss.clone(),
            queue: self.one_way_queue(&self.queue),
            impairments: self.impairments.clone(),
            up: self.up,
            mtu: self.mtu,
        }
    }

    /// The settings of the reverse direction: the forward ones with `reverse` applied (and the delay of
    /// `delay_on`).
    pub fn reverse(&self) -> LinkConfig {
        let mut config = self.forward();
        if self.delay_on != DelayOn::Both {
            config.delay = if self.delay_on == DelayOn::Reverse {
                self.delay
            } else {
                Duration::ZERO
            };
        }
        if let Some(o) = &self.reverse {
            config = o.apply(&config);
            if let Some(queue) = &o.queue {
                config.queue = self.one_way_queue(queue);
            }
        }
        config
    }

    /// `queue` with, when the delay is on one direction only, a BDP limit's missing `base_rtt` set to
    /// `delay` (the round trip this link adds).
    fn one_way_queue(&self, queue: &QueueLimit) -> QueueLimit {
        match (self.delay_on, queue) {
            (
                DelayOn::Forward | DelayOn::Reverse,
                QueueLimit::Bdp {
                    multiple,
                    base_rtt: None,
                },
            ) => QueueLimit::Bdp {
                multiple: *multiple,
                base_rtt: Some(self.delay),
            },
            _ => queue.clone(),
        }
    }

    /// Checks `delay_on` against the rest of the link: not with `reverse.delay`, and only with a delay > 0.
    /// Returns the field at fault and the message.
    pub fn check_delay_on(&self) -> Result<(), (String, String)> {
        if self.delay_on == DelayOn::Both {
            return Ok(());
        }
        let on = self.delay_on.as_str();
        if let Some(d) = self.reverse.as_ref().and_then(|r| r.delay) {
            return Err((
                "reverse.delay".to_owned(),
                format!(
                    "{} cannot be combined with delay_on = \"{on}\": give each direction's delay in one place",
                    crate::units::format_duration(d)
                ),
            ));
        }
        if self.delay.is_zero() {
            return Err((
                "delay_on".to_owned(),
                format!("\"{on}\" needs a delay > 0 (the link has none to put on one direction)"),
            ));
        }
        Ok(())
    }

    /// The settings of one direction.
    pub fn direction(&self, direction: Direction) -> LinkConfig {
        match direction {
            Direction::Forward => self.forward(),
            Direction::Reverse => self.reverse(),
        }
    }
}
