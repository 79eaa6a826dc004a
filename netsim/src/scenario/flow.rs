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
//! direction = "upload"   # who sends the data: "upload" (the client, default) or "download" (the server)
//! reinjection = false     # opportunistic retransmission and penalisation (mpquic's default is on; the
//!                         # simulator keeps it off unless asked, so that earlier results stay as they were)
//! ack_path = "same_path"  # where PATH_ACKs travel: "same_path" (default) or "lowest_rtt"
//! pacer_max_burst = 32    # cap on the pacer's bucket at high rates, in packets (mpquic's default is 32;
//!                         # the simulator keeps 0, no cap, unless asked, so that earlier results stay)
//! paths = [
//!   { route = ["wifi", "core"] },
//!   { route = ["lte", "core"], reverse = ["core", "lte"], start = "5s", stop = "20s" },
//! ]
//! ```
//!
//! Besides `bulk`, a flow may run a request/response workload (`kind = "requests"` with a `requests` table) or
//! chunked video (`kind = "video"` with a `video` table), see [`super::workload`]; and any flow may describe
//! its receiving application in a `receiver` table (window policy and sizes, reading rate), see
//! [`super::receiver`]. `bytes` is for bulk flows only (the other kinds have `count`).
//!
//! A flow with one path is a single-path flow: the studies' "TCP" competitors and cross traffic. Each path is
//! the sequence of links its packets cross from `from` to `to`; its acknowledgements cross `reverse`, which
//! defaults to the same links in the opposite order and direction.
//!
//! Two path keys exist for attack and churn tests:
//! - `spoof = "victim.eth0"`: the client claims that interface's address on the path (a forged source
//!   address): its datagrams leave from the interface `route` starts at but carry the spoofed address, and
//!   what the server sends back follows `reverse` (then required) to the spoofed host, which runs no endpoint
//!   of the flow and never answers;
//! - `migrate = true` (a path after the first): at its `start` the client moves the connection's first path
//!   to this path's address (RFC 9000 §9.2 active migration) instead of opening a new path; the path must
//!   reach the same server interface as the first.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ScenarioError;
use super::receiver::ReceiverSpec;
use super::workload::{RequestsSpec, VideoSpec};

/// What a flow sends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowKind {
    /// As much as the controller allows, from `start` until `stop` or until `bytes` are delivered.
    #[default]
    Bulk,
    /// Request/response transfers, one object at a time (the `requests` table).
    Requests,
    /// Chunked video with a playback buffer (the `video` table).
    Video,
}

impl FlowKind {
    /// The name as written in scenario files.
    pub fn as_str(self) -> &'static str {
        match self {
            FlowKind::Bulk => "bulk",
            FlowKind::Requests => "requests",
            FlowKind::Video => "video",
        }
    }
}

/// Which end of a flow sends the data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransferDirection {
    /// The client (`from`) sends, the server (`to`) receives.
    #[default]
    Upload,
    /// The server (`to`) sends, the client (`from`) receives.
    Download,
}

impl TransferDirection {
    /// Whether the default (upload), for `skip_serializing_if`.
    pub fn is_upload(&self) -> bool {
        *self == TransferDirection::Upload
    }
}

/// Where a flow's endpoints send the PATH_ACKs of each path (`TransportConfig::ack_path` of mpquic).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AckPath {
    /// On the path being acknowledged (mpquic's default).
    #[default]
    SamePath,
    /// On the validated path with the lowest smoothed RTT.
    LowestRtt,
}

impl AckPath {
    /// Whether the default (`same_path`), for `skip_serializing_if`.
    pub fn is_default(&self) -> bool {
        *self == AckPath::SamePath
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u32) -> bool {
    *n == 0
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
    /// Which end sends the data (default: the client, `upload`).
    #[serde(default, skip_serializing_if = "TransferDirection::is_upload")]
    pub direction: TransferDirection,
    /// Opportunistic retransmission and penalisation (`TransportConfig::reinjection`), default off in the
    /// simulator (mpquic's own default is on).
    #[serde(default, skip_serializing_if = "is_false")]
    pub reinjection: bool,
    /// Where PATH_ACKs travel (default `same_path`).
    #[serde(default, skip_serializing_if = "AckPath::is_default")]
    pub ack_path: AckPath,
    /// Cap on the pacer's bucket at high rates in packets (`RecoveryConfig::pacer_max_burst_packets`),
    /// 0 to 65 536; default 0 in the simulator (no cap, the behaviour its studies ran with; mpquic's own
    /// default is 32).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pacer_max_burst: u32,
    /// The paths, at least one; the first is the one the connection starts on.
    pub paths: Vec<PathSpec>,
    /// The receiving application: window policy and sizes, reading rate (default: the simulator's
    /// generous windows, reading as fast as data arrives).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver: Option<ReceiverSpec>,
    /// The request/response workload (`kind = "requests"` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<RequestsSpec>,
    /// The video workload (`kind = "video"` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video: Option<VideoSpec>,
    /// Path MTU discovery at both ends (default `false`: every path stays at 1200 bytes, the simulator's
    /// studies were run that way). `true`: the library's default discovery (search up to 1452 bytes of UDP
    /// payload on each path, black-hole fallback to 1200).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mtu_discovery: bool,
    /// Inner flows carried as DATAGRAMs of this flow's connection (a multipath tunnel), see
    /// [`super::tunnel`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tunnel: Option<super::tunnel::TunnelSpec>,
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
    /// When the client closes the path (PATH_ABANDON; it is not re-opened). Multipath flows only; the
    /// engine closes a path only while another one is validated at both ends, so the close may wait.
    #[serde(
        default,
        with = "crate::units::option_duration",
        skip_serializing_if = "Option::is_none"
    )]
    pub stop: Option<Duration>,
    /// A host interface (`"host.interface"`, or `"host"` with one interface) whose address the client
    /// claims on this path: a spoofed source (see the module documentation). Needs an explicit `reverse`
    /// from the server to that interface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spoof: Option<String>,
    /// The client migrates the connection's first path here at `start` instead of opening a new path
    /// (see the module documentation).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub migrate: bool,
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

    /// Checks the workload and receiver settings: each kind has its table and no other's, `bytes` only for
    /// bulk, every range (see [`super::workload`] and [`super::receiver`]); `field` is the flow's path
    /// (`flows[1]`).
    pub fn validate_application(&self, field: &str) -> Result<(), ScenarioError> {
        let kind = self.kind.as_str();
        let stray = |key: &str| {
            ScenarioError::invalid(
                format!("{field}.{key}"),
                format!("only for `kind = \"{key}\"` (this flow is `{kind}`)"),
            )
        };
        match self.kind {
            FlowKind::Bulk => {}
            FlowKind::Requests | FlowKind::Video => {
                if let Some(bytes) = self.bytes {
                    return Err(ScenarioError::invalid(
                        format!("{field}.bytes"),
                        format!("{bytes}: only for bulk flows; a `{kind}` flow ends after `{kind}.count`"),
                    ));
                }
            }
        }
        match (&self.requests, self.kind) {
            (Some(r), FlowKind::Requests) => r.validate(&format!("{field}.requests"))?,
            (None, FlowKind::Requests) => {
                return Err(ScenarioError::invalid(
                    format!("{field}.requests"),
                    "missing: a `requests` flow needs a `requests` table (sizes, gap, count)",
                ));
            }
            (Some(_), _) => return Err(stray("requests")),
            (None, _) => {}
        }
        match (&self.video, self.kind) {
            (Some(v), FlowKind::Video) => v.validate(&format!("{field}.video"))?,
            (None, FlowKind::Video) => {
                return Err(ScenarioError::invalid(
                    format!("{field}.video"),
                    "missing: a `video` flow needs a `video` table (bitrate, chunk, buffer, count)",
                ));
            }
            (Some(_), _) => return Err(stray("video")),
            (None, _) => {}
        }
        if let Some(r) = &self.receiver {
            r.validate(&format!("{field}.receiver"))?;
        }
        if let Some(t) = &self.tunnel {
            if self.kind != FlowKind::Bulk || self.bytes.is_some() || self.receiver.is_some() {
                return Err(ScenarioError::invalid(
                    format!("{field}.tunnel"),
                    "a tunnel flow is `kind = \"bulk\"` without `bytes` or `receiver` (its inner flows have \
                     their own sizes and read as fast as data arrives)",
                ));
            }
            t.validate(&format!("{field}.tunnel"))?;
        }
        let max_burst = mpquic::proto::recovery::MAX_MAX_BURST_PACKETS;
        if self.pacer_max_burst > max_burst {
            return Err(ScenarioError::invalid(
                format!("{field}.pacer_max_burst"),
                format!("{}: outside 0..={max_burst} (0: no cap)", self.pacer_max_burst),
            ));
        }
        Ok(())
    }
}
