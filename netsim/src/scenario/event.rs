//! Scheduled link events: a link goes down or up, or some of its settings change, at a given time.
//!
//! ```toml
//! [[events]]
//! at = "10s"
//! link = "wifi"
//! action = "down"             # "down", "up" or "set"
//!
//! [[events]]
//! at = "20s"
//! link = "bn"
//! action = "set"
//! direction = "forward"       # "both" (default), "forward" or "reverse"
//! set = { rate_bps = 50_000_000, loss = { kind = "bernoulli", p = 0.01 } }
//! ```
//!
//! Events apply in time order; two events at the same time apply in file order. Flows starting and stopping
//! are not events: they are the `start` and `stop` of each flow.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::link::{Direction, LinkOverride};

/// What an event does to its link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventAction {
    /// The link stops carrying packets.
    Down,
    /// The link carries packets again.
    Up,
    /// Some settings change (the `set` table).
    Set,
}

/// Which directions of a link an event affects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventDirection {
    /// Both directions.
    #[default]
    Both,
    /// `between[0]` → `between[1]` only.
    Forward,
    /// `between[1]` → `between[0]` only.
    Reverse,
}

impl EventDirection {
    /// The directions affected.
    pub fn directions(self) -> &'static [Direction] {
        match self {
            EventDirection::Both => &[Direction::Forward, Direction::Reverse],
            EventDirection::Forward => &[Direction::Forward],
            EventDirection::Reverse => &[Direction::Reverse],
        }
    }
}

/// One scheduled event, an entry of the `events` array.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventSpec {
    /// When it happens (from the start of the scenario).
    #[serde(with = "crate::units::duration")]
    pub at: Duration,
    /// The link it affects.
    pub link: String,
    /// What happens.
    pub action: EventAction,
    /// Which directions (default both).
    #[serde(default)]
    pub direction: EventDirection,
    /// The new settings, for `action = "set"` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<LinkOverride>,
}
