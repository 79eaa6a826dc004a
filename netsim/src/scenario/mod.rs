//! Scenario files: the TOML format that describes a simulation (topology, flows, events, sweeps), its parsing
//! and its validation.
//!
//! The format is documented for users in `netsim/SCENARIOS.md`; the shipped scenarios are in
//! `netsim/scenarios/`. A file has these sections:
//!
//! | section | type | module |
//! |---|---|---|
//! | `[scenario]` | name, description, duration, seed, sample interval | [`Meta`] |
//! | `[nodes.<name>]` | hosts with interfaces, routers | [`node`] |
//! | `[links.<name>]` | two endpoints, the link model per direction | [`link`] |
//! | `[[flows]]` | bulk flows with their controller, scheduler and paths | [`flow`] |
//! | `[[events]]` | link down/up and setting changes at given times | [`event`] |
//! | `[sweep]` | parameters to vary and seeds | [`sweep`] |
//!
//! [`Scenario::from_toml_str`] parses and validates; a returned [`Scenario`] is known to be runnable: every
//! name resolves, every route is a chain between the flow's hosts ([`topology`]), every link configuration
//! and every controller and scheduler specification is accepted by its registry. Errors name the bad field by
//! its path (`flows[1].paths[0].route[1]: unknown link "bn2"`), see [`ScenarioError`].

pub mod error;
pub mod event;
pub mod flow;
pub mod limits;
pub mod link;
pub mod node;
pub mod quantity;
pub mod receiver;
pub mod summary;
pub mod sweep;
pub mod topology;
pub mod tunnel;
pub mod workload;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use error::ScenarioError;
pub use event::{EventAction, EventDirection, EventSpec};
pub use flow::{AckPath, FlowKind, FlowSpec, PathSpec, TransferDirection};
pub use link::{DelayOn, Direction, LinkOverride, LinkSpec};
pub use node::{InterfaceSpec, NodeSpec};
pub use sweep::{SweepRun, SweepSpec};
pub use topology::{Endpoint, Hop, ResolvedFlow, ResolvedPath, Topology};

use error::{link_error, parse_error};

/// The `[scenario]` section: what the scenario is and how long it runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    /// Short name (used in output file names).
    pub name: String,
    /// What the scenario reproduces and what it expects.
    #[serde(default)]
    pub description: String,
    /// Simulated time the scenario runs for: > 0 and at most 24 hours.
    #[serde(with = "crate::units::duration")]
    pub duration: Duration,
    /// Seed of every random stream (links derive theirs from it); a sweep may override it.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Interval between time-series samples (default 100 ms): > 0, ≤ `duration`, at most 100,000 sampling
    /// instants over `duration`, and at most 2,000,000 samples over every path of every flow ([`limits`]).
    #[serde(default = "default_interval", with = "crate::units::duration")]
    pub sample_interval: Duration,
    /// The simulator's dead-path policy: a multipath flow's client abandons a path after this many PTOs
    /// without progress (default 3; 0: never; at most 1000). See `engine::paths`.
    #[serde(default = "default_abandon_ptos")]
    pub abandon_path_after_ptos: u32,
    /// The connections' idle timeout (RFC 9000 §10.1 `max_idle_timeout`, both ends), default 0: none, so that
    /// a long outage never ends a connection before the scenario does. Otherwise in [1 ms, 1 h]; a flow whose
    /// peer stays silent that long is closed.
    #[serde(
        default,
        with = "crate::units::duration",
        skip_serializing_if = "Duration::is_zero"
    )]
    pub idle_timeout: Duration,
    /// Multipath flows issue one connection ID per unused path ID and top a path ID up when a path uses it
    /// (`mpquic`'s default, `TransportConfig::unused_path_cids` = 1); default `false`: every path ID gets the
    /// full number at the handshake, as when the shipped studies were run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lazy_path_cids: bool,
    /// Packet protection of every connection: `aes128gcm` (the default, real AES-128-GCM) or `null`, the
    /// simulator's cost-free cipher (`engine::null_cipher`: same packet sizes, same results, no
    /// cryptographic work per packet; the handshake stays real).
    #[serde(default, skip_serializing_if = "Crypto::is_default")]
    pub crypto: Crypto,
}

/// `scenario.crypto`: how the simulated connections protect their packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Crypto {
    /// TLS_AES_128_GCM_SHA256, as a real endpoint (the default).
    #[default]
    Aes128gcm,
    /// The null cipher: packets keep their sizes, payloads stay in the clear and tags are checksums.
    Null,
}

impl Crypto {
    fn is_default(&self) -> bool {
        *self == Crypto::default()
    }

    /// The name used in scenario files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Crypto::Aes128gcm => "aes128gcm",
            Crypto::Null => "null",
        }
    }
}

/// Smallest non-zero `scenario.idle_timeout`.
pub const MIN_IDLE_TIMEOUT: Duration = Duration::from_millis(1);
/// Largest `scenario.idle_timeout`.
pub const MAX_IDLE_TIMEOUT: Duration = Duration::from_secs(3600);

fn default_seed() -> u64 {
    1
}

fn default_abandon_ptos() -> u32 {
    3
}

fn default_interval() -> Duration {
    Duration::from_millis(100)
}

/// A whole scenario file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Name, duration, seed, sampling.
    pub scenario: Meta,
    /// Hosts and routers, by name.
    #[serde(default)]
    pub nodes: BTreeMap<String, NodeSpec>,
    /// Links, by name.
    #[serde(default)]
    pub links: BTreeMap<String, LinkSpec>,
    /// Flows, in order.
    pub flows: Vec<FlowSpec>,
    /// Scheduled link events.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventSpec>,
    /// Parameter sweep (used by `mpquic-sim sweep`; ignored by a single run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepSpec>,
}

/// Formats a duration for error messages (`10ms`, `1500us`).
fn fmt(d: Duration) -> String {
    crate::units::format_duration(d)
}

/// `⌈d / n⌉`, to the nanosecond.
fn div_ceil(d: Duration, n: u64) -> Duration {
    let nanos = d.as_nanos().div_ceil(u128::from(n.max(1)));
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

/// Characters allowed in node, link and flow names (they appear in endpoints, routes and sweep paths).
fn check_name(field: &str, name: &str) -> Result<(), ScenarioError> {
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(ScenarioError::invalid(
            field,
            format!("name \"{name}\": use letters, digits, '_' and '-' only (at least one)"),
        ))
    }
}

impl Scenario {
    /// Parses and validates a scenario written in TOML.
    pub fn from_toml_str(text: &str) -> Result<Scenario, ScenarioError> {
        let de = toml::de::Deserializer::parse(text).map_err(|e| ScenarioError::Parse {
            field: ".".to_owned(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        let scenario: Scenario = serde_path_to_error::deserialize(de)
            .map_err(|e| parse_error(e.path(), &e.inner().to_string()))?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Reads, parses and validates a scenario file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Scenario, ScenarioError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
            path: path.to_owned(),
            source,
        })?;
        Scenario::from_toml_str(&text)
    }

    /// Deserialises and validates a scenario from an already parsed TOML table (used by sweeps).
    pub fn from_toml_table(table: toml::Table) -> Result<Scenario, ScenarioError> {
        let scenario: Scenario = serde_path_to_error::deserialize(toml::Value::Table(table))
            .map_err(|e| parse_error(e.path(), &e.inner().to_string()))?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Checks everything a parser cannot: ranges, names, references, routes (see the module documentation).
    pub fn validate(&self) -> Result<(), ScenarioError> {
        self.validate_meta()?;
        self.validate_nodes()?;
        self.validate_links()?;
        self.validate_flows()?;
        self.validate_events()?;
        self.topology()?;
        if let Some(sweep) = &self.sweep {
            sweep.validate()?;
        }
        Ok(())
    }

    /// The resolved topology: endpoints and the hop-by-hop routes of every path.
    pub fn topology(&self) -> Result<Topology, ScenarioError> {
        Topology::resolve(&self.nodes, &self.links, &self.flows)
    }

    /// The flow called `name`.
    pub fn flow(&self, name: &str) -> Option<&FlowSpec> {
        self.flows.iter().find(|f| f.name == name)
    }

    fn validate_meta(&self) -> Result<(), ScenarioError> {
        let meta = &self.scenario;
        if meta.name.trim().is_empty() {
            return Err(ScenarioError::invalid("scenario.name", "an empty name"));
        }
        if meta.duration.is_zero() || meta.duration > limits::MAX_DURATION {
            return Err(ScenarioError::invalid(
                "scenario.duration",
                format!(
                    "{} is out of range: expected > 0 and at most {} (24 hours)",
                    fmt(meta.duration),
                    fmt(limits::MAX_DURATION)
                ),
            ));
        }
        let idle = meta.idle_timeout;
        if !idle.is_zero() && !(MIN_IDLE_TIMEOUT..=MAX_IDLE_TIMEOUT).contains(&idle) {
            return Err(ScenarioError::invalid(
                "scenario.idle_timeout",
                format!(
                    "{} is out of range: expected 0 (none) or between {} and {}",
                    crate::units::format_duration(idle),
                    crate::units::format_duration(MIN_IDLE_TIMEOUT),
                    crate::units::format_duration(MAX_IDLE_TIMEOUT)
                ),
            ));
        }
        if meta.sample_interval.is_zero() || meta.sample_interval > meta.duration {
            return Err(ScenarioError::invalid(
                "scenario.sample_interval",
                format!(
                    "{} is out of range: expected > 0 and ≤ the duration ({})",
                    fmt(meta.sample_interval),
                    fmt(meta.duration)
                ),
            ));
        }
        // The recorder keeps one sample per path at every instant k · interval ≤ duration.
        let instants = meta.duration.as_nanos().div_ceil(meta.sample_interval.as_nanos());
        let floor = div_ceil(meta.duration, limits::MAX_SAMPLES_PER_PATH);
        if instants > u128::from(limits::MAX_SAMPLES_PER_PATH) {
            return Err(ScenarioError::invalid(
                "scenario.sample_interval",
                format!(
                    "{} is out of range: it gives {instants} samples per path over {}; expected {} to {} (at \
                     most {} samples per path)",
                    fmt(meta.sample_interval),
                    fmt(meta.duration),
                    fmt(floor),
                    fmt(meta.duration),
                    limits::MAX_SAMPLES_PER_PATH
                ),
            ));
        }
        let paths: u128 = self.flows.iter().map(|f| f.paths.len() as u128).sum();
        if instants.saturating_mul(paths) > u128::from(limits::MAX_SAMPLES) {
            let per_path = limits::MAX_SAMPLES / u64::try_from(paths).unwrap_or(u64::MAX).max(1);
            return Err(ScenarioError::invalid(
                "scenario.sample_interval",
                format!(
                    "{} is out of range: {instants} instants × {paths} paths = {} samples, above the limit of {}; \
                     expected at least {}",
                    fmt(meta.sample_interval),
                    instants.saturating_mul(paths),
                    limits::MAX_SAMPLES,
                    fmt(div_ceil(meta.duration, per_path.max(1)))
                ),
            ));
        }
        if meta.abandon_path_after_ptos > limits::MAX_ABANDON_PTOS {
            return Err(ScenarioError::invalid(
                "scenario.abandon_path_after_ptos",
                format!(
                    "{} is out of range: expected 0 (never) to {}",
                    meta.abandon_path_after_ptos,
                    limits::MAX_ABANDON_PTOS
                ),
            ));
        }
        Ok(())
    }

    /// Checks a count of `what` in `field` against `1..=max` (`min` 0 allows none).
    fn check_count(
        field: &str,
        what: &str,
        count: usize,
        min: usize,
        max: usize,
    ) -> Result<(), ScenarioError> {
        if (min..=max).contains(&count) {
            Ok(())
        } else {
            Err(ScenarioError::invalid(
                field,
                format!("{count} {what} is out of range: expected {min} to {max}"),
            ))
        }
    }

    fn validate_nodes(&self) -> Result<(), ScenarioError> {
        if !self.nodes.values().any(NodeSpec::is_host) {
            return Err(ScenarioError::invalid(
                "nodes",
                "no host; flows need hosts to run between",
            ));
        }
        Self::check_count("nodes", "nodes", self.nodes.len(), 1, limits::MAX_NODES)?;
        let hosts = self.nodes.values().filter(|n| n.is_host()).count();
        Self::check_count("nodes", "hosts", hosts, 1, limits::MAX_HOSTS)?;
        let mut addresses = BTreeMap::new();
        for (name, node) in &self.nodes {
            check_name(&format!("nodes.{name}"), name)?;
            if let NodeSpec::Host { interfaces } = node {
                if interfaces.is_empty() {
                    return Err(ScenarioError::invalid(
                        format!("nodes.{name}.interfaces"),
                        "a host needs at least one interface",
                    ));
                }
                Self::check_count(
                    &format!("nodes.{name}.interfaces"),
                    "interfaces",
                    interfaces.len(),
                    1,
                    limits::MAX_INTERFACES,
                )?;
                let mut seen = BTreeSet::new();
                for (i, iface) in interfaces.iter().enumerate() {
                    let field = format!("nodes.{name}.interfaces[{i}]");
                    check_name(&format!("{field}.name"), &iface.name)?;
                    if !seen.insert(iface.name.as_str()) {
                        return Err(ScenarioError::invalid(
                            format!("{field}.name"),
                            format!("interface \"{}\" is declared twice", iface.name),
                        ));
                    }
                    if let Some(addr) = iface.address {
                        if let Some(other) = addresses.insert(addr, format!("{name}.{}", iface.name)) {
                            return Err(ScenarioError::invalid(
                                format!("{field}.address"),
                                format!("{addr} is already the address of \"{other}\""),
                            ));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn validate_links(&self) -> Result<(), ScenarioError> {
        if self.links.is_empty() {
            return Err(ScenarioError::invalid("links", "no link"));
        }
        Self::check_count("links", "links", self.links.len(), 1, limits::MAX_LINKS)?;
        for (name, link) in &self.links {
            let prefix = format!("links.{name}");
            check_name(&prefix, name)?;
            link.forward().validate().map_err(|e| link_error(&prefix, &e))?;
            link.check_delay_on()
                .map_err(|(field, message)| ScenarioError::invalid(format!("{prefix}.{field}"), message))?;
            if let Some(reverse) = &link.reverse {
                if reverse.is_empty() {
                    return Err(ScenarioError::invalid(
                        format!("{prefix}.reverse"),
                        "an empty table; set a field or leave `reverse` out",
                    ));
                }
                link.reverse()
                    .validate()
                    .map_err(|e| link_error(&format!("{prefix}.reverse"), &e))?;
            }
        }
        Ok(())
    }

    fn validate_flows(&self) -> Result<(), ScenarioError> {
        if self.flows.is_empty() {
            return Err(ScenarioError::invalid("flows", "no flow"));
        }
        Self::check_count("flows", "flows", self.flows.len(), 1, limits::MAX_FLOWS)?;
        let duration = self.scenario.duration;
        let mut names = BTreeSet::new();
        for (f, flow) in self.flows.iter().enumerate() {
            let field = format!("flows[{f}]");
            check_name(&format!("{field}.name"), &flow.name)?;
            if !names.insert(flow.name.as_str()) {
                return Err(ScenarioError::invalid(
                    format!("{field}.name"),
                    format!("flow \"{}\" is declared twice", flow.name),
                ));
            }
            for (key, host) in [("from", &flow.from), ("to", &flow.to)] {
                match self.nodes.get(host) {
                    Some(node) if node.is_host() => {}
                    Some(_) => {
                        return Err(ScenarioError::invalid(
                            format!("{field}.{key}"),
                            format!("\"{host}\" is a router; flows run between hosts"),
                        ));
                    }
                    None => {
                        return Err(ScenarioError::invalid(
                            format!("{field}.{key}"),
                            format!("unknown host \"{host}\""),
                        ));
                    }
                }
            }
            if flow.from == flow.to {
                return Err(ScenarioError::invalid(
                    format!("{field}.to"),
                    "the same host as `from`",
                ));
            }
            if flow.start >= duration {
                return Err(ScenarioError::invalid(
                    format!("{field}.start"),
                    format!(
                        "{} is not before the end of the scenario ({})",
                        fmt(flow.start),
                        fmt(duration)
                    ),
                ));
            }
            if let Some(stop) = flow.stop {
                if stop <= flow.start || stop > duration {
                    return Err(ScenarioError::invalid(
                        format!("{field}.stop"),
                        format!(
                            "{} is out of range: expected after `start` and ≤ the duration ({})",
                            fmt(stop),
                            fmt(duration)
                        ),
                    ));
                }
            }
            flow.validate_application(&field)?;
            if let Some(bytes) = flow.bytes.filter(|b| !(1..=limits::MAX_FLOW_BYTES).contains(b)) {
                return Err(ScenarioError::invalid(
                    format!("{field}.bytes"),
                    format!(
                        "{bytes} is out of range: expected 1 to {} (1 TB)",
                        limits::MAX_FLOW_BYTES
                    ),
                ));
            }
            // A tunnel's outer connection may run without congestion control (`tunnel::UNCONTROLLED`).
            if flow.tunnel.is_none() || flow.cc != tunnel::UNCONTROLLED {
                mpquic_cc::registry::build(&flow.cc)
                    .map_err(|e| ScenarioError::invalid(format!("{field}.cc"), e.to_string()))?;
            }
            mpquic_sched::registry::build(&flow.sched)
                .map_err(|e| ScenarioError::invalid(format!("{field}.sched"), e.to_string()))?;
            if flow.paths.is_empty() {
                return Err(ScenarioError::invalid(
                    format!("{field}.paths"),
                    "no path; list at least one `{ route = [...] }`",
                ));
            }
            Self::check_count(
                &format!("{field}.paths"),
                "paths",
                flow.paths.len(),
                1,
                limits::MAX_PATHS_PER_FLOW,
            )?;
            let stop = flow.stop_or(duration);
            for (p, path) in flow.paths.iter().enumerate() {
                let pfield = format!("{field}.paths[{p}]");
                if let Some(start) = path.start {
                    let ok = if p == 0 {
                        start == flow.start
                    } else {
                        start >= flow.start && start < stop
                    };
                    if !ok {
                        return Err(ScenarioError::invalid(
                            format!("{pfield}.start"),
                            format!(
                                "{} is out of range: the first path starts with the flow ({}), the others \
                                 between the flow's start and stop",
                                fmt(start),
                                fmt(flow.start)
                            ),
                        ));
                    }
                }
                let opens = path.start.unwrap_or(flow.start).max(flow.start);
                if let Some(path_stop) = path.stop {
                    if !flow.is_multipath() {
                        return Err(ScenarioError::invalid(
                            format!("{pfield}.stop"),
                            "only for a flow with several paths (a single path is the connection)",
                        ));
                    }
                    if path.migrate {
                        return Err(ScenarioError::invalid(
                            format!("{pfield}.stop"),
                            "not with `migrate` (the migrated path is the connection's first path)",
                        ));
                    }
                    if path_stop <= opens || path_stop > stop {
                        return Err(ScenarioError::invalid(
                            format!("{pfield}.stop"),
                            format!(
                                "{} is out of range: expected after the path's start ({}) and ≤ the flow's stop \
                                 ({})",
                                fmt(path_stop),
                                fmt(opens),
                                fmt(stop)
                            ),
                        ));
                    }
                }
                if path.migrate && p == 0 {
                    return Err(ScenarioError::invalid(
                        format!("{pfield}.migrate"),
                        "the first path is the one the connection starts on; `migrate` is for a later path",
                    ));
                }
                if path.spoof.is_some() && path.reverse.is_none() {
                    return Err(ScenarioError::invalid(
                        format!("{pfield}.reverse"),
                        "missing: a path with `spoof` needs a `reverse` route from the server to the spoofed \
                         interface",
                    ));
                }
            }
        }
        Ok(())
    }

    fn validate_events(&self) -> Result<(), ScenarioError> {
        Self::check_count("events", "events", self.events.len(), 0, limits::MAX_EVENTS)?;
        for (e, event) in self.events.iter().enumerate() {
            let field = format!("events[{e}]");
            if event.at > self.scenario.duration {
                return Err(ScenarioError::invalid(
                    format!("{field}.at"),
                    format!(
                        "{} is after the end of the scenario ({})",
                        fmt(event.at),
                        fmt(self.scenario.duration)
                    ),
                ));
            }
            let Some(link) = self.links.get(&event.link) else {
                return Err(ScenarioError::invalid(
                    format!("{field}.link"),
                    format!("unknown link \"{}\"", event.link),
                ));
            };
            match (event.action, &event.set) {
                (EventAction::Set, None) => {
                    return Err(ScenarioError::invalid(
                        format!("{field}.set"),
                        "missing: `action = \"set\"` needs a `set` table",
                    ));
                }
                (EventAction::Set, Some(set)) => {
                    if set.is_empty() {
                        return Err(ScenarioError::invalid(
                            format!("{field}.set"),
                            "an empty table; set at least one field",
                        ));
                    }
                    for direction in event.direction.directions() {
                        set.apply(&link.direction(*direction))
                            .validate()
                            .map_err(|err| link_error(&format!("{field}.set"), &err))?;
                    }
                }
                (EventAction::Down | EventAction::Up, Some(_)) => {
                    return Err(ScenarioError::invalid(
                        format!("{field}.set"),
                        "only allowed with `action = \"set\"`",
                    ));
                }
                (EventAction::Down | EventAction::Up, None) => {}
            }
        }
        Ok(())
    }
}
