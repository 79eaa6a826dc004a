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

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use crate::link::{Delivery, Link, LinkStats, OutageEpoch};
use crate::scenario::{Direction, EventAction, EventSpec, Hop, Scenario};
use crate::time::SimTime;

use super::EngineError;

/// Bytes of IPv4 and UDP headers added to each datagram on the wire.
pub const HEADER_BYTES: usize = 28;

/// A map keyed by the simulation's own socket addresses, looked up once per delivered datagram. The keys
/// are the scenario's addresses, not chosen by anyone outside the simulation, so a cheap multiplicative
/// hash ([`AddrHasher`]) serves instead of the standard library's collision-resistant SipHash. It is never
/// iterated, so the hash has no effect on any result.
pub type AddrMap<V> = HashMap<SocketAddr, V, BuildHasherDefault<AddrHasher>>;

/// The hash of an [`AddrMap`]: each written word is mixed in with a rotation, an XOR and a multiplication
/// by an odd constant (the scheme of the Rust compiler's "FxHasher").
#[derive(Debug, Default, Clone, Copy)]
pub struct AddrHasher(u64);

impl AddrHasher {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::K);
    }
}

impl Hasher for AddrHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            for (d, s) in w.iter_mut().zip(rest) {
                *d = *s;
            }
            self.add(u64::from_le_bytes(w));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

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

    /// Counters of link `link` in direction `direction`.
    pub fn link_stats(&self, link: &str, direction: Direction) -> Option<&LinkStats> {
        self.links()
            .find(|((name, d), _)| name == link && *d == direction)
            .map(|(_, l)| l.stats())
    }

    /// Every link direction with its name and counters, in index order.
    pub fn links(&self) -> impl Iterator<Item = (&(String, Direction), &Link)> {
        self.index
            .iter()
            .filter_map(|(key, &k)| self.links.get(k).map(|l| (key, l)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addr_hasher_mixes_words_by_hand() {
        // From 0: (0 rotl 5) ^ 1 = 1, times K = K.
        let mut h = AddrHasher::default();
        h.write_u64(1);
        assert_eq!(h.finish(), AddrHasher::K);
        // A second word: ((K rotl 5) ^ 2) · K, wrapping.
        h.write_u16(2);
        assert_eq!(
            h.finish(),
            (AddrHasher::K.rotate_left(5) ^ 2).wrapping_mul(AddrHasher::K)
        );
        // Bytes are read as little-endian words, the last one zero-padded: 9 bytes are two words.
        let mut a = AddrHasher::default();
        a.write(&[1, 0, 0, 0, 0, 0, 0, 0, 2]);
        let mut b = AddrHasher::default();
        b.write_u64(1);
        b.write_u64(2);
        assert_eq!(a.finish(), b.finish());
    }

    #[test]
    fn addr_map_finds_every_address() {
        let mut m: AddrMap<usize> = AddrMap::default();
        let addrs: Vec<SocketAddr> = (0..200u16)
            .map(|i| SocketAddr::from(([10, 0, (i / 50) as u8, (i % 50) as u8], 4433 + i % 3)))
            .collect();
        for (i, a) in addrs.iter().enumerate() {
            m.insert(*a, i);
        }
        assert_eq!(m.len(), 200);
        for (i, a) in addrs.iter().enumerate() {
            assert_eq!(m.get(a), Some(&i));
        }
        assert_eq!(m.get(&SocketAddr::from(([10, 0, 9, 9], 4433))), None);
    }
}
