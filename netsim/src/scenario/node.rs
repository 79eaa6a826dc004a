//! Nodes of a scenario: hosts (with named interfaces and addresses) and routers.
//!
//! ```toml
//! [nodes.client]
//! kind = "host"
//! interfaces = [{ name = "wifi", address = "10.0.1.1" }, { name = "lte", address = "10.0.2.1" }]
//!
//! [nodes.r1]
//! kind = "router"
//! ```
//!
//! A host ends flows; a router only forwards. Each host interface attaches to at most one link; a router takes
//! any number. Addresses are optional: the engine assigns the ones left out (`10.<host>.<interface>.1` in
//! declaration order) and an explicit address must be unique in the scenario.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

/// A node, keyed by its name in the `nodes` table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum NodeSpec {
    /// An end host: sends and receives flows through its interfaces.
    Host {
        /// Its interfaces, at least one.
        interfaces: Vec<InterfaceSpec>,
    },
    /// A router: forwards packets between the links attached to it.
    Router,
}

impl NodeSpec {
    /// Whether the node is a host.
    pub fn is_host(&self) -> bool {
        matches!(self, NodeSpec::Host { .. })
    }

    /// The interfaces (none for a router).
    pub fn interfaces(&self) -> &[InterfaceSpec] {
        match self {
            NodeSpec::Host { interfaces } => interfaces,
            NodeSpec::Router => &[],
        }
    }
}

/// A network interface of a host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterfaceSpec {
    /// Name, unique within the host (`"wifi"`, `"eth0"`).
    pub name: String,
    /// IPv4 or IPv6 address; assigned by the engine when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<IpAddr>,
}
