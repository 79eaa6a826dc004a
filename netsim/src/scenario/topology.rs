//! Topology resolution: link endpoints to nodes and interfaces, and each path's route to a chain of link
//! directions.
//!
//! Rules checked here (each failure names the field):
//! - an endpoint is `"host.interface"`, `"host"` for a host with exactly one interface, or `"router"`;
//! - a link joins two different nodes; a host interface is attached to at most one link;
//! - a path's `route` is a chain: its first link touches the flow's `from` host, each next link touches the
//!   node the previous one reached, the last reaches the `to` host; in between it only crosses routers, and it
//!   visits no node twice. Crossing a link from `between[0]` to `between[1]` uses its forward direction,
//!   the other way its reverse direction;
//! - an explicit `reverse` route is a chain from `to` back to `from` that leaves from the interface the
//!   forward route arrived at and arrives at the interface it left from (a QUIC path is one pair of
//!   addresses);
//! - two paths of a flow do not use the same pair of interfaces;
//! - a path with `spoof` claims the address of an interface of a third host (neither `from` nor `to`): its
//!   `route` still leaves from the flow's `from` host, its (required) `reverse` leads from the interface the
//!   route arrived at to the spoofed interface, and that interface is the path's `local` end;
//! - a path with `migrate` reaches the same server interface as the first path (a migration changes only the
//!   client's address).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::error::ScenarioError;
use super::flow::FlowSpec;
use super::link::{Direction, LinkSpec};
use super::node::NodeSpec;

/// One end of a link.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Endpoint {
    /// The node.
    pub node: String,
    /// The host interface, or `None` for a router.
    pub interface: Option<String>,
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.interface {
            Some(i) => write!(f, "{}.{i}", self.node),
            None => f.write_str(&self.node),
        }
    }
}

/// One link crossed in one direction.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Hop {
    /// The link's name.
    pub link: String,
    /// The direction it is crossed in.
    pub direction: Direction,
}

impl std::fmt::Display for Hop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let arrow = match self.direction {
            Direction::Forward => ">",
            Direction::Reverse => "<",
        };
        write!(f, "{}{arrow}", self.link)
    }
}

/// A path with its routes resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResolvedPath {
    /// The client's interface on the path, whose address its datagrams carry (with `spoof`: the spoofed
    /// interface of another host).
    pub local: Endpoint,
    /// With `spoof`: the client's own interface, where `forward` starts (`None`: `local`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaves_from: Option<Endpoint>,
    /// The receiver's interface (the path's remote address).
    pub remote: Endpoint,
    /// Links crossed by data, from sender to receiver.
    pub forward: Vec<Hop>,
    /// Links crossed by acknowledgements, from receiver to sender.
    pub reverse: Vec<Hop>,
    /// The smallest initial rate along `forward`, in bits per second: the path's capacity `B_x`.
    pub capacity_bps: u64,
}

/// A flow with its paths resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResolvedFlow {
    /// The flow's name.
    pub name: String,
    /// Its paths, in file order.
    pub paths: Vec<ResolvedPath>,
}

/// The resolved topology of a scenario.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Topology {
    /// Each link's endpoints, `[between[0], between[1]]`.
    pub links: BTreeMap<String, [Endpoint; 2]>,
    /// Every flow, in file order.
    pub flows: Vec<ResolvedFlow>,
}

impl Topology {
    /// Resolves endpoints and routes (see the module documentation).
    pub fn resolve(
        nodes: &BTreeMap<String, NodeSpec>,
        links: &BTreeMap<String, LinkSpec>,
        flows: &[FlowSpec],
    ) -> Result<Topology, ScenarioError> {
        let mut endpoints = BTreeMap::new();
        let mut attached: BTreeMap<Endpoint, String> = BTreeMap::new();
        for (name, link) in links {
            let mut pair = Vec::with_capacity(2);
            for (i, text) in link.between.iter().enumerate() {
                let field = format!("links.{name}.between[{i}]");
                let end = endpoint(nodes, text).map_err(|m| ScenarioError::invalid(&field, m))?;
                if end.interface.is_some() {
                    if let Some(other) = attached.insert(end.clone(), name.clone()) {
                        return Err(ScenarioError::invalid(
                            field,
                            format!("interface \"{end}\" is already attached to link \"{other}\""),
                        ));
                    }
                }
                pair.push(end);
            }
            let [a, b]: [Endpoint; 2] = pair
                .try_into()
                .map_err(|_| ScenarioError::invalid(format!("links.{name}.between"), "two endpoints"))?;
            if a.node == b.node {
                return Err(ScenarioError::invalid(
                    format!("links.{name}.between"),
                    format!(
                        "both ends are on node \"{}\"; a link joins two different nodes",
                        a.node
                    ),
                ));
            }
            endpoints.insert(name.clone(), [a, b]);
        }
        let mut topology = Topology {
            links: endpoints,
            flows: Vec::with_capacity(flows.len()),
        };
        for (f, flow) in flows.iter().enumerate() {
            let mut paths: Vec<ResolvedPath> = Vec::with_capacity(flow.paths.len());
            for (p, path) in flow.paths.iter().enumerate() {
                let field = format!("flows[{f}].paths[{p}]");
                let (origin, forward, remote) = topology.chain(
                    nodes,
                    &path.route,
                    &flow.from,
                    &flow.to,
                    &format!("{field}.route"),
                )?;
                let (local, leaves_from) = match &path.spoof {
                    None => (origin, None),
                    Some(text) => (
                        spoofed(nodes, flow, text, &format!("{field}.spoof"))?,
                        Some(origin),
                    ),
                };
                let reverse = match &path.reverse {
                    None => forward
                        .iter()
                        .rev()
                        .map(|h| Hop {
                            link: h.link.clone(),
                            direction: h.direction.opposite(),
                        })
                        .collect(),
                    Some(route) => {
                        let rfield = format!("{field}.reverse");
                        let (start, hops, end) =
                            topology.chain(nodes, route, &flow.to, &local.node, &rfield)?;
                        if start != remote || end != local {
                            return Err(ScenarioError::invalid(
                                rfield,
                                format!(
                                    "goes from \"{start}\" to \"{end}\" but the route goes from \"{local}\" to \
                                     \"{remote}\"; the reverse route must join the same two interfaces"
                                ),
                            ));
                        }
                        hops
                    }
                };
                if let Some(q) = paths.iter().position(|o| o.local == local && o.remote == remote) {
                    return Err(ScenarioError::invalid(
                        field,
                        format!(
                            "uses the same interfaces as paths[{q}] (\"{local}\" → \"{remote}\"); each path \
                             needs its own pair of addresses"
                        ),
                    ));
                }
                if path.migrate && paths.first().is_some_and(|first| first.remote != remote) {
                    return Err(ScenarioError::invalid(
                        format!("{field}.route"),
                        format!(
                            "arrives at \"{remote}\" but the first path at \"{}\"; a path the client migrates \
                             to must reach the same server interface",
                            paths.first().map(|p| p.remote.to_string()).unwrap_or_default()
                        ),
                    ));
                }
                let capacity_bps = forward
                    .iter()
                    .filter_map(|h| links.get(&h.link).map(|l| l.direction(h.direction).rate_bps))
                    .min()
                    .unwrap_or(0);
                paths.push(ResolvedPath {
                    local,
                    leaves_from,
                    remote,
                    forward,
                    reverse,
                    capacity_bps,
                });
            }
            topology.flows.push(ResolvedFlow {
                name: flow.name.clone(),
                paths,
            });
        }
        Ok(topology)
    }

    /// Follows `route` from host `from` to host `to`; returns the interfaces left from and arrived at.
    fn chain(
        &self,
        nodes: &BTreeMap<String, NodeSpec>,
        route: &[String],
        from: &str,
        to: &str,
        field: &str,
    ) -> Result<(Endpoint, Vec<Hop>, Endpoint), ScenarioError> {
        if route.is_empty() {
            return Err(ScenarioError::invalid(
                field,
                "an empty route; list at least one link",
            ));
        }
        let mut at = from.to_owned();
        let mut visited = BTreeSet::from([at.clone()]);
        let mut hops = Vec::with_capacity(route.len());
        let mut first = None;
        let mut last = None;
        for (k, name) in route.iter().enumerate() {
            let hop_field = format!("{field}[{k}]");
            let Some([a, b]) = self.links.get(name) else {
                return Err(ScenarioError::invalid(
                    hop_field,
                    format!("unknown link \"{name}\""),
                ));
            };
            let (direction, near, far) = if a.node == at {
                (Direction::Forward, a, b)
            } else if b.node == at {
                (Direction::Reverse, b, a)
            } else {
                return Err(ScenarioError::invalid(
                    hop_field,
                    format!(
                        "link \"{name}\" ({a} – {b}) does not touch \"{at}\", where the route has reached"
                    ),
                ));
            };
            if k == 0 {
                first = Some(near.clone());
            }
            let is_last = k + 1 == route.len();
            let far_is_host = nodes.get(&far.node).is_some_and(NodeSpec::is_host);
            if !is_last && far_is_host {
                return Err(ScenarioError::invalid(
                    hop_field,
                    format!(
                        "link \"{name}\" leads to host \"{}\"; a route crosses only routers",
                        far.node
                    ),
                ));
            }
            if !visited.insert(far.node.clone()) {
                return Err(ScenarioError::invalid(
                    hop_field,
                    format!(
                        "link \"{name}\" returns to \"{}\"; a route visits each node once",
                        far.node
                    ),
                ));
            }
            hops.push(Hop {
                link: name.clone(),
                direction,
            });
            at = far.node.clone();
            last = Some(far.clone());
        }
        if at != to {
            return Err(ScenarioError::invalid(
                field,
                format!("ends at \"{at}\", not at the destination host \"{to}\""),
            ));
        }
        match (first, last) {
            (Some(first), Some(last)) => Ok((first, hops, last)),
            _ => Err(ScenarioError::invalid(
                field,
                "an empty route; list at least one link",
            )),
        }
    }

    /// The resolved flow called `name`.
    pub fn flow(&self, name: &str) -> Option<&ResolvedFlow> {
        self.flows.iter().find(|f| f.name == name)
    }
}

/// Resolves the interface a path spoofs (`spoof = "host.interface"`): a host interface of a third host.
fn spoofed(
    nodes: &BTreeMap<String, NodeSpec>,
    flow: &FlowSpec,
    text: &str,
    field: &str,
) -> Result<Endpoint, ScenarioError> {
    let end = endpoint(nodes, text).map_err(|m| ScenarioError::invalid(field, m))?;
    if end.interface.is_none() {
        return Err(ScenarioError::invalid(
            field,
            format!("\"{end}\" is a router, which has no address to spoof"),
        ));
    }
    if end.node == flow.from || end.node == flow.to {
        return Err(ScenarioError::invalid(
            field,
            format!("\"{end}\" is on one of the flow's own hosts; a spoofed address belongs to a third host"),
        ));
    }
    Ok(end)
}

/// Resolves an endpoint written as `host.interface`, `host` or `router`.
fn endpoint(nodes: &BTreeMap<String, NodeSpec>, text: &str) -> Result<Endpoint, String> {
    let (node_name, interface) = match text.split_once('.') {
        Some((n, i)) => (n, Some(i)),
        None => (text, None),
    };
    let Some(node) = nodes.get(node_name) else {
        return Err(format!("unknown node \"{node_name}\""));
    };
    match (node, interface) {
        (NodeSpec::Router, None) => Ok(Endpoint {
            node: node_name.to_owned(),
            interface: None,
        }),
        (NodeSpec::Router, Some(_)) => Err(format!(
            "\"{node_name}\" is a router, which has no interfaces; write \"{node_name}\""
        )),
        (NodeSpec::Host { interfaces }, Some(i)) => {
            if interfaces.iter().any(|x| x.name == i) {
                Ok(Endpoint {
                    node: node_name.to_owned(),
                    interface: Some(i.to_owned()),
                })
            } else {
                let known: Vec<&str> = interfaces.iter().map(|x| x.name.as_str()).collect();
                Err(format!(
                    "host \"{node_name}\" has no interface \"{i}\" (it has: {})",
                    known.join(", ")
                ))
            }
        }
        (NodeSpec::Host { interfaces }, None) => match interfaces.as_slice() {
            [only] => Ok(Endpoint {
                node: node_name.to_owned(),
                interface: Some(only.name.clone()),
            }),
            _ => Err(format!(
                "host \"{node_name}\" has several interfaces; write \"{node_name}.<interface>\""
            )),
        },
    }
}
