//! Tunnel flows: inner single-path connections carried as QUIC DATAGRAMs of an outer multipath connection,
//! the simulator's model of a multipath IP tunnel such as MPT-GRE (GRE-in-UDP, RFC 8086, spread over several
//! paths) or `mpquic-tunnel`.
//!
//! ```toml
//! [[flows]]
//! name = "tun"
//! from = "client"
//! to = "server"
//! cc = "none"                  # the outer connection's controller: "none" (no congestion control, the
//!                              # MPT-GRE mode) or any registry controller ("lia", "olia", "cubic", ...)
//! sched = "weighted:0=1,1=1"   # how the outer connection spreads packets over the paths
//! paths = [{ route = ["p1"] }, { route = ["p2"] }]
//! [flows.tunnel]
//! reorder_window = 1600        # packets held ahead of a gap at the receiving end (0: no reorder buffer)
//! reorder_hold = "300ms"       # longest hold of a packet ahead of a gap
//! inner = [{ name = "tcp", cc = "highspeed" }, { name = "tcp2", cc = "bbr", bytes = 10_000_000 }]
//! ```
//!
//! Each inner flow is a single-path mpquic connection (one bulk stream in the flow's `direction`, its own
//! controller) between two virtual addresses inside the tunnel; every UDP datagram it sends is one DATAGRAM
//! frame of the outer connection. The outer connection is an ordinary multipath flow over the scenario's
//! paths: `cc`, `sched` and the other flow keys apply to it. `cc = "none"` gives it an unlimited window and
//! no pacing, so it forwards every inner packet at once and the inner controllers alone react to the paths,
//! as in MPT-GRE. Ranges:
//!
//! | key | range | default |
//! |---|---|---|
//! | `reorder_window` | 0 to [`MAX_REORDER_WINDOW`] packets (0: off) | 1600 |
//! | `reorder_hold` | [`MIN_REORDER_HOLD`] (1 ms) to [`MAX_REORDER_HOLD`] (10 s) | 300 ms |
//! | `inner` | 1 to [`MAX_INNER_FLOWS`] flows, names unique (letters, digits, `_`, `-`) | — |
//! | `inner[i].cc` | a controller of the registry | — |
//! | `inner[i].bytes` | 1 to 1 TB (absent: until the flow stops) | absent |
//!
//! A tunnel flow is `kind = "bulk"` without `bytes` or `receiver` (the inner flows have their own sizes and
//! read as fast as data arrives), and `cc = "none"` is accepted only on a tunnel flow. The engine side is `engine::tunnel`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ScenarioError;
use super::limits::MAX_FLOW_BYTES;

/// The outer controller name that means "no congestion control" (tunnel flows only).
pub const UNCONTROLLED: &str = "none";
/// The largest reorder window: 65,536 packets (≈ 80 MB of held packets at the very most).
pub const MAX_REORDER_WINDOW: u32 = 65_536;
/// The shortest non-zero hold.
pub const MIN_REORDER_HOLD: Duration = Duration::from_millis(1);
/// The longest hold.
pub const MAX_REORDER_HOLD: Duration = Duration::from_secs(10);
/// The most inner flows of one tunnel (each is a connection pair, and a 16-bit index in the tunnel header).
pub const MAX_INNER_FLOWS: usize = 64;
/// MPT-GRE's reorder window in the study's configuration.
pub const DEFAULT_REORDER_WINDOW: u32 = 1600;
/// MPT-GRE's hold time in the study's configuration.
pub const DEFAULT_REORDER_HOLD: Duration = Duration::from_millis(300);

fn default_window() -> u32 {
    DEFAULT_REORDER_WINDOW
}

fn default_hold() -> Duration {
    DEFAULT_REORDER_HOLD
}

/// The `tunnel` table of a flow.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TunnelSpec {
    /// Packets held ahead of a gap at the receiving tunnel end (0: no reorder buffer).
    #[serde(default = "default_window")]
    pub reorder_window: u32,
    /// How long the lowest held packet waits for the gap before it to fill.
    #[serde(default = "default_hold", with = "crate::units::duration")]
    pub reorder_hold: Duration,
    /// The flows carried inside the tunnel.
    pub inner: Vec<InnerSpec>,
}

/// One inner flow.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InnerSpec {
    /// Name, unique in the tunnel (sweep parameters: `flows.tun.tunnel.inner.tcp.cc`).
    pub name: String,
    /// Its congestion controller (registry specification).
    pub cc: String,
    /// Bytes to deliver (absent: until the tunnel flow stops).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

impl TunnelSpec {
    /// Checks every key against its range (module documentation); `field` is the table's path
    /// (`flows[0].tunnel`).
    pub fn validate(&self, field: &str) -> Result<(), ScenarioError> {
        if self.reorder_window > MAX_REORDER_WINDOW {
            return Err(ScenarioError::invalid(
                format!("{field}.reorder_window"),
                format!(
                    "{} is out of range: expected 0 (no reorder buffer) to {MAX_REORDER_WINDOW} packets",
                    self.reorder_window
                ),
            ));
        }
        if !(MIN_REORDER_HOLD..=MAX_REORDER_HOLD).contains(&self.reorder_hold) {
            return Err(ScenarioError::invalid(
                format!("{field}.reorder_hold"),
                format!(
                    "{} is out of range: expected 1ms to 10s",
                    crate::units::format_duration(self.reorder_hold)
                ),
            ));
        }
        if !(1..=MAX_INNER_FLOWS).contains(&self.inner.len()) {
            return Err(ScenarioError::invalid(
                format!("{field}.inner"),
                format!(
                    "{} inner flows: expected 1 to {MAX_INNER_FLOWS}",
                    self.inner.len()
                ),
            ));
        }
        let mut names = std::collections::BTreeSet::new();
        for (i, inner) in self.inner.iter().enumerate() {
            let ifield = format!("{field}.inner[{i}]");
            super::check_name(&format!("{ifield}.name"), &inner.name)?;
            if !names.insert(inner.name.as_str()) {
                return Err(ScenarioError::invalid(
                    format!("{ifield}.name"),
                    format!("inner flow \"{}\" is declared twice", inner.name),
                ));
            }
            mpquic_cc::registry::build(&inner.cc)
                .map_err(|e| ScenarioError::invalid(format!("{ifield}.cc"), e.to_string()))?;
            if let Some(bytes) = inner.bytes.filter(|b| !(1..=MAX_FLOW_BYTES).contains(b)) {
                return Err(ScenarioError::invalid(
                    format!("{ifield}.bytes"),
                    format!("{bytes} is out of range: expected 1 to {MAX_FLOW_BYTES} (1 TB)"),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )]

    use super::*;

    fn spec() -> TunnelSpec {
        TunnelSpec {
            reorder_window: DEFAULT_REORDER_WINDOW,
            reorder_hold: DEFAULT_REORDER_HOLD,
            inner: vec![InnerSpec {
                name: "tcp".into(),
                cc: "highspeed".into(),
                bytes: None,
            }],
        }
    }

    fn field_of(s: &TunnelSpec) -> String {
        s.validate("flows[0].tunnel")
            .unwrap_err()
            .field()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn defaults_are_valid_and_each_bad_key_is_named() {
        spec().validate("t").unwrap();
        let mut s = spec();
        s.reorder_window = MAX_REORDER_WINDOW + 1;
        assert_eq!(field_of(&s), "flows[0].tunnel.reorder_window");
        let mut s = spec();
        s.reorder_hold = Duration::ZERO;
        assert_eq!(field_of(&s), "flows[0].tunnel.reorder_hold");
        s.reorder_hold = Duration::from_secs(11);
        assert_eq!(field_of(&s), "flows[0].tunnel.reorder_hold");
        let mut s = spec();
        s.inner.clear();
        assert_eq!(field_of(&s), "flows[0].tunnel.inner");
        let mut s = spec();
        s.inner[0].cc = "nosuch".into();
        assert_eq!(field_of(&s), "flows[0].tunnel.inner[0].cc");
        let mut s = spec();
        s.inner[0].bytes = Some(0);
        assert_eq!(field_of(&s), "flows[0].tunnel.inner[0].bytes");
        let mut s = spec();
        s.inner.push(s.inner[0].clone());
        assert_eq!(field_of(&s), "flows[0].tunnel.inner[1].name");
        let mut s = spec();
        s.inner[0].name = "a b".into();
        assert_eq!(field_of(&s), "flows[0].tunnel.inner[0].name");
        let mut s = spec();
        s.reorder_window = 0;
        s.validate("t").unwrap();
    }
}
