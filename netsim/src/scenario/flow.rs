//! Flows of a scenario: who sends to whom, how much, when, with which controller and scheduler, over which
//! paths.
//!
//! ```toml
//! [[flows]]
//! name = "mp"
//! kind = "bulk"
//! from = "client"
//! to = "server"
//! start = "0s"            # default 0
//! stop = "30s"            # default: the end of the scenario
//! bytes = 100_000_000     # optional: stop once this many bytes are delivered
//! cc = "olia"             # congestion controller, by registry name (mpquic-cc), parameters allowed
//! sched = "minrtt"        # scheduler, by registry name (mpquic-sched); default "minrtt"
//! paths = [
//!   { route = ["wifi", "core"] },
//!   { route = ["lte", "core"], reverse = ["core", "lte"], start = "5s" },
//! ]
//! ```
//!
//! A flow with one path is a single-path flow: the studies' "TCP" competitors and cross traffic. Each path is
//! the sequence of links its packets cross from `from` to `to`; its acknowledgements cross `reverse`, which
//! defaults to the same links in the opposite order and direction.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What a flow sends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowKind {
    /// As much as the controller allows, from `start` until `stop` or until `bytes` are delivered.
    #[default]
    Bulk,
}

/// A flow, one entry of the `flows` array.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Name, unique in the scenario (used in results and in sweep parameters: `flows.<name>.cc`).
    pub name: String,
    /// What it sends (default `bulk`).
    #[serde(default)]
    pub kind: FlowKind,
    /// The sending host (the QUIC client).
    pub from: String,
    /// The receiving host (the QUIC server).
    pub to: String,
    /// When it starts (default 0).
    #[serde(default, with = "crate::units::duration")]
    pub start: Duration,
    /// When it stops (default: the end of the scenario).
    #[serde(
        default,
        with = "crate::units::option_duration",
        skip_serializing_if = "Option::is_none"
    )]
    pub stop: Option<Duration>,
    /// Application bytes to deliver; the flow ends when they are all delivered (or at `stop`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Congestion controller specification (`"cubic"`, `"ccubic:variant=a2"`).
    pub cc: String,
    /// Scheduler specification (default `"minrtt"`).
    #[serde(default = "default_sched")]
    pub sched: String,
    /// The paths, at least one; the first is the one the connection starts on.
    pub paths: Vec<PathSpec>,
}

fn default_sched() -> String {
    mpquic_sched::registry::DEFAULT.to_owned()
}

/// One path of a flow.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathSpec {
    /// Links crossed from the flow's `from` host to its `to` host, in order.
    pub route: Vec<String>,
    /// Links crossed back, from `to` to `from` (default: `route` reversed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<Vec<String>>,
    /// When the path is opened (default: when the flow starts). The first path always starts with the flow;
    /// a later start reproduces "subflow 1 starts first" setups.
    #[serde(
        default,
        with = "crate::units::option_duration",
        skip_serializing_if = "Option::is_none"
    )]
    pub start: Option<Duration>,
}

impl FlowSpec {
    /// When the flow stops, given the scenario's duration.
    pub fn stop_or(&self, scenario_duration: Duration) -> Duration {
        self.stop.unwrap_or(scenario_duration)
    }

    /// Whether the flow has more than one path.
    pub fn is_multipath(&self) -> bool {
        self.paths.len() > 1
    }
}
