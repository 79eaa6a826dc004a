//! The simulated network: one [`Link`] per link direction of the topology, host addresses, and hop-by-hop
//! forwarding.
//!
//! - **Links.** Every link of the scenario becomes two [`Link`]s, forward (`between[0]` → `between[1]`) and
//!   reverse, numbered in link-name order, forward first. Link `k`'s random streams are seeded from the run's
//!   seed and `k` ([`super::derive_seed`]).
//! - **Addresses.** Every host interface has an IP address: the one the scenario gives, or `10.0.h.i` with
//!   `h` the host's position among the hosts (in name order, from 1) and `i` the interface's position (from
//!   1). These addresses exist only inside the simulation; no real traffic is sent.
//! - **Forwarding.** A datagram follows the route of its path (forward route from client to server, reverse
//!   route back): it is offered to the first link when sent, and each time it arrives at the far end of a
//!   link it is offered to the next one at that instant (routers forward instantly), until it reaches the
//!   destination host. A datagram arriving after its link went down in the meantime is lost
//!   ([`Link::outage_since`]): an outage destroys what is queued and on the wire.
//! - **Wire size.** A datagram of `n` UDP payload bytes occupies `n + 28` bytes on a link (IPv4 and UDP
//!   headers), which is what queue limits and serialisation count.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};

use crate::link::{Delivery, Link, OutageEpoch};
use crate::scenario::{Direction, EventAction, EventSpec, Hop, Scenario};
use crate::time::SimTime;

use super::EngineError;

/// Bytes of IPv4 and UDP headers added to each datagram on the wire.
pub const HEADER_BYTES: usize = 28;

/// Index of a link direction in the [`Network`].
pub type LinkIndex = usize;

/// The links and addresses of a run (see the module documentation).
#[derive(Debug)]
pub struct Network {
    links: Vec<Link>,
    index: BTreeMap<(String, Direction), LinkIndex>,
    addresses: BTreeMap<(String, String), IpAddr>,
}

impl Network {
    /// Builds every link direction and assigns addresses.
    pub fn new(scenario: &Scenario, seed: u64) -> Result<Network, EngineError> {
        let mut links = Vec::with_capacity(scenario.links.len().saturating_mul(2));
        let mut index = BTreeMap::new();
        for (name, spec) in &scenario.links {
            for direction in [Direction::Forward, Direction::Reverse] {
                let k = links.len();
                let link_seed = super::derive_seed(seed, 1, k as u64);
                let link = Link::new(spec.direction(direction), link_seed)
                    .map_err(|e| EngineError::Setup(format!("links.{name} ({}): {e}", direction.as_str())))?;
                links.push(link);
                index.insert((name.clone(), direction), k);
            }
        }
        let mut addresses = BTreeMap::new();
        let hosts = scenario.nodes.iter().filter(|(_, n)| n.is_host());
        for (h, (host, node)) in hosts.enumerate() {
            for (i, iface) in node.interfaces().iter().enumerate() {
                let ip = iface.address.unwrap_or_else(|| {
                    let h = u8::try_from(h.saturating_add(1)).unwrap_or(u8::MAX);
                    let i = u8::try_from(i.saturating_add(1)).unwrap_or(u8::MAX);
                    IpAddr::V4(Ipv4Addr::new(10, 0, h, i))
                });
                addresses.insert((host.clone(), iface.name.clone()), ip);
            }
        }
        Ok(Network {
            links,
            index,
            addresses,
        })
    }

    /// The links crossed by `hops`, in order.
    pub fn route(&self, hops: &[Hop]) -> Result<Vec<LinkIndex>, EngineError> {
        hops.iter()
            .map(|h| {
                self.index
                    .get(&(h.link.clone(), h.direction))
                    .copied()
                    .ok_or_else(|| EngineError::Setup(format!("unknown link {h}")))
            })
            .collect()
    }

    /// The address of interface `interface` of host `host`.
    pub fn address(&self, host: &str, interface: &str) -> Option<IpAddr> {
        self.addresses
            .get(&(host.to_owned(), interface.to_owned()))
            .copied()
    }

    /// Offers a datagram of `payload.len()` bytes to link `link` at `now`.
    pub fn offer(&mut self, now: SimTime, link: LinkIndex, payload: &mut [u8]) -> Delivery {
        let wire = payload.len().saturating_add(HEADER_BYTES);
        match self.links.get_mut(link) {
            Some(l) => l.enqueue(now, wire, payload),
            None => Delivery::Dropped {
                reason: crate::link::DropReason::Down,
            },
        }
    }

    /// Whether link `link` is up.
    pub fn is_up(&self, link: LinkIndex) -> bool {
        self.links.get(link).is_some_and(Link::is_up)
    }

    /// Whether link `link` went down since `epoch`.
    pub fn outage_since(&self, link: LinkIndex, epoch: OutageEpoch) -> bool {
        self.links.get(link).is_none_or(|l| l.outage_since(epoch))
    }

    /// Applies a scheduled event at `now`.
    pub fn apply(&mut self, now: SimTime, event: &EventSpec) -> Result<(), EngineError> {
        for &direction in event.direction.directions() {
            let Some(&k) = self.index.get(&(event.link.clone(), direction)) else {
                return Err(EngineError::Setup(format!(
                    "event on unknown link {}",
                    event.link
                )));
            };
            let Some(link) = self.links.get_mut(k) else {
                continue;
            };
            let err = |e: crate::link::ConfigError| {
                EngineError::Setup(format!("event on {} at {now}: {e}", event.link))
            };
            match event.action {
                EventAction::Down => link.set_up(now, false),
                EventAction::Up => link.set_up(now, true),
                EventAction::Set => {
                    let Some(set) = &event.set else { continue };
                    if let Some(rate) = set.rate_bps {
                        link.set_rate(now, rate).map_err(err)?;
                    }
                    if let Some(delay) = set.delay {
                        link.set_delay(now, delay).map_err(err)?;
                    }
                    if let Some(jitter) = &set.jitter {
                        link.set_jitter(now, jitter.clone()).map_err(err)?;
                    }
                    if let Some(loss) = &set.loss {
                        link.set_loss(now, loss.clone()).map_err(err)?;
                    }
                    if let Some(queue) = &set.queue {
                        link.set_queue_limit(now, queue.clone()).map_err(err)?;
                    }
                    if let Some(impairments) = &set.impairments {
                        link.set_impairments(now, impairments.clone()).map_err(err)?;
                    }
                    if let Some(mtu) = set.mtu {
                        link.set_mtu(now, Some(mtu)).map_err(err)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Every link direction with its name and counters, in index order.
    pub fn links(&self) -> impl Iterator<Item = (&(String, Direction), &Link)> {
        self.index
            .iter()
            .filter_map(|(key, &k)| self.links.get(k).map(|l| (key, l)))
    }
}
