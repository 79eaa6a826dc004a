//! Two [`Node`]s joined by an in-memory link, and the virtual clock that drives them.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::proto::ack_tracker::EcnCodepoint;
use crate::proto::connection::{ClientConfig, Connection, Event, Rng, ServerConfig, Transmit};
use crate::proto::endpoint::{Endpoint, EndpointConfig};

use super::node::{Node, Outgoing};
use super::{CLIENT, HarnessError, SERVER};

/// Most datagrams one node may send in one flush before the harness calls it a runaway sender (when
/// [`Pair::flush_limit`] is `None`).
const RUNAWAY: usize = 100_000;

/// A datagram on the link.
struct InFlight {
    at: Instant,
    to_server: bool,
    from: SocketAddr,
    to: SocketAddr,
    data: Vec<u8>,
    ecn: Option<EcnCodepoint>,
}

/// A datagram seen on the link, with the plaintext of the packets its receiver could open (feature
/// `fuzzing`: the seed generator of the fuzz targets records real traffic).
#[derive(Debug, Clone)]
pub struct Captured {
    /// Sent by the client.
    pub to_server: bool,
    /// The UDP payload.
    pub data: Vec<u8>,
    /// Packets the receiver could open: type and plaintext payload.
    pub plaintext: Vec<(crate::proto::packet::PacketType, Vec<u8>)>,
}

/// Two endpoints and the link between them.
pub struct Pair {
    /// Virtual time.
    pub now: Instant,
    /// The client side.
    pub client: Node,
    /// The server side.
    pub server: Node,
    /// One-way delay.
    pub delay: Duration,
    /// Probability that a datagram is lost (seeded).
    pub loss: f64,
    rng: Rng,
    link: Vec<InFlight>,
    /// Datagrams delivered to a node.
    pub delivered: u64,
    /// Datagrams lost on the link (random loss, black holes, unknown destinations).
    pub dropped: u64,
    /// The network clears ECN codepoints.
    pub bleach_ecn: bool,
    /// The network marks every ECT packet Congestion Experienced.
    pub ce_mark: bool,
    /// The client configuration (trusts the server's certificate; its session store carries tickets).
    pub client_config: ClientConfig,
    /// The client's address as the server sees it (a NAT in front of the client); `None`: its own address.
    pub client_nat: Option<SocketAddr>,
    /// The next client datagram is also sent, 1 ms earlier, with this spoofed source address.
    pub spoof_next: Option<SocketAddr>,
    /// Bytes the server sent, by destination address.
    pub server_sent_to: HashMap<SocketAddr, u64>,
    /// Bytes the server sent, by source address.
    pub server_sent_from: HashMap<SocketAddr, u64>,
    /// Other addresses the server receives on (e.g. its preferred address).
    pub server_extra_addrs: Vec<SocketAddr>,
    /// Other addresses the client receives on (its second interface).
    pub client_extra_addrs: Vec<SocketAddr>,
    /// Datagrams to these addresses are lost.
    pub blackholed: Vec<SocketAddr>,
    /// Datagrams from these addresses are lost.
    pub dead_sources: Vec<SocketAddr>,
    /// Extra one-way delay of datagrams from or to these addresses.
    pub extra_delay: HashMap<SocketAddr, Duration>,
    /// Every datagram the client sent, when set.
    pub client_sent: Option<Vec<Vec<u8>>>,
    /// Route with `Endpoint::handle_deferred` and feed a new connection its first datagram afterwards, as
    /// the runtime does.
    pub deferred_accept: bool,
    /// Most datagrams each node sends per flush; `None`: no limit, but a node that sends more than
    /// 100,000 in one flush fails the run as a runaway sender.
    pub flush_limit: Option<usize>,
    /// When set, every datagram delivered is recorded here with the plaintext of its packets.
    #[cfg(feature = "fuzzing")]
    pub capture: Option<Vec<Captured>>,
    /// When set, the client's datagrams of each flush come from this function (the runtime's GSO batching,
    /// for example) instead of `poll_transmit`: each datagram with the transmit that describes it.
    pub client_transmit: Option<ClientTransmit>,
}

/// A replacement for the client's `poll_transmit` loop: the datagrams one connection sends at an instant.
pub type ClientTransmit = Box<dyn FnMut(&mut Connection, Instant) -> Vec<(Vec<u8>, Transmit)>>;

impl Pair {
    /// A pair whose client (at [`CLIENT`]) has started connecting with `cc` to a server (at [`SERVER`])
    /// with `sc`, at virtual time `start`. Both endpoints' seeds derive from `seed`; the link has a 10 ms
    /// one-way delay and no loss.
    pub fn start(
        cc: ClientConfig,
        sc: Arc<ServerConfig>,
        seed: u64,
        start: Instant,
    ) -> Result<Pair, HarnessError> {
        let mut client = Node::new(Endpoint::new(EndpointConfig { seed, cid_len: 8 }, None), CLIENT);
        let server_config = EndpointConfig {
            seed: seed ^ 0x5555,
            cid_len: 8,
        };
        let server = Node::new(Endpoint::new(server_config, Some(sc)), SERVER);
        client.connect(start, &cc, SERVER, "localhost")?;
        Ok(Pair {
            now: start,
            client,
            server,
            delay: Duration::from_millis(10),
            loss: 0.0,
            rng: Rng::new(seed.wrapping_mul(31).wrapping_add(7)),
            link: Vec::new(),
            delivered: 0,
            dropped: 0,
            bleach_ecn: false,
            ce_mark: false,
            client_config: cc,
            client_nat: None,
            spoof_next: None,
            server_sent_to: HashMap::new(),
            server_sent_from: HashMap::new(),
            server_extra_addrs: Vec::new(),
            client_extra_addrs: Vec::new(),
            blackholed: Vec::new(),
            dead_sources: Vec::new(),
            extra_delay: HashMap::new(),
            client_sent: None,
            deferred_accept: false,
            flush_limit: None,
            #[cfg(feature = "fuzzing")]
            capture: None,
            client_transmit: None,
        })
    }

    /// Forgets both sides' connections and what is on the link, optionally gives the server endpoint a new
    /// configuration (endpoint seed `seed`), and starts a new client connection with the pair's client
    /// configuration (its TLS session store, hence its tickets, carry over).
    pub fn try_reconnect(
        &mut self,
        server: Option<Arc<ServerConfig>>,
        seed: u64,
    ) -> Result<(), HarnessError> {
        self.client.conns.clear();
        self.server.conns.clear();
        self.client.events.clear();
        self.server.events.clear();
        self.link.clear();
        if let Some(sc) = server {
            self.server.ep = Endpoint::new(EndpointConfig { seed, cid_len: 8 }, Some(sc));
        }
        self.client
            .host
            .connect(self.now, &self.client_config, SERVER, "localhost")?;
        Ok(())
    }

    fn lose(&mut self) -> bool {
        if self.loss <= 0.0 {
            return false;
        }
        let r = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        r < self.loss
    }

    /// Puts on the link everything both sides have to send now (at most [`flush_limit`](Self::flush_limit)
    /// datagrams each), applying the link's impairments.
    ///
    /// # Panics
    /// Without a flush limit, when a node sends 100,000 datagrams in one flush (a runaway sender).
    pub fn flush(&mut self) {
        let max = self.flush_limit.unwrap_or(RUNAWAY);
        for to_server in [true, false] {
            let node = if to_server {
                &mut self.client
            } else {
                &mut self.server
            };
            let out = match self.client_transmit.as_mut().filter(|_| to_server) {
                Some(f) => {
                    let mut out = Vec::new();
                    let host = &mut node.host;
                    for c in host.conns.values_mut() {
                        for (data, t) in f(c, self.now) {
                            out.push(Outgoing {
                                from: t.local.unwrap_or(host.addr),
                                to: t.remote,
                                data,
                                ecn: t.ecn,
                            });
                        }
                    }
                    out
                }
                None => node.poll_transmits(self.now, max),
            };
            assert!(
                self.flush_limit.is_some() || out.len() < RUNAWAY,
                "runaway sender"
            );
            for d in out {
                self.send(to_server, d);
            }
        }
    }

    /// One datagram from the client (`to_server`) or the server onto the link.
    fn send(&mut self, to_server: bool, d: Outgoing) {
        let Outgoing { from, to, data, ecn } = d;
        let from = if to_server {
            self.client_nat.unwrap_or(from)
        } else {
            from
        };
        if to_server {
            if let Some(log) = self.client_sent.as_mut() {
                log.push(data.clone());
            }
        } else {
            *self.server_sent_to.entry(to).or_default() += data.len() as u64;
            *self.server_sent_from.entry(from).or_default() += data.len() as u64;
        }
        if self.blackholed.contains(&to) || self.dead_sources.contains(&from) {
            self.dropped += 1;
            return;
        }
        if to_server {
            if let Some(spoof) = self.spoof_next.take() {
                self.link.push(InFlight {
                    at: (self.now + self.delay)
                        .checked_sub(Duration::from_millis(1))
                        .unwrap_or(self.now),
                    to_server,
                    from: spoof,
                    to,
                    data: data.clone(),
                    ecn,
                });
            }
        }
        if self.lose() {
            self.dropped += 1;
            return;
        }
        let extra = self.extra_delay.get(&from).or(self.extra_delay.get(&to)).copied();
        let ecn = match ecn {
            _ if self.bleach_ecn => None,
            Some(EcnCodepoint::Ect0 | EcnCodepoint::Ect1) if self.ce_mark => Some(EcnCodepoint::Ce),
            other => other,
        };
        self.link.push(InFlight {
            at: self.now + self.delay + extra.unwrap_or_default(),
            to_server,
            from,
            to,
            data,
            ecn,
        });
    }

    /// Whether the destination of a datagram is an address its node receives on. Datagrams to an address
    /// the server does not have, or the client no longer has (old NAT mapping, old local address), are lost.
    fn reachable(&self, p: &InFlight) -> bool {
        if p.to_server {
            p.to == self.server.addr || self.server_extra_addrs.contains(&p.to)
        } else {
            p.to == self.client_nat.unwrap_or(self.client.addr) || self.client_extra_addrs.contains(&p.to)
        }
    }

    /// Delivers the datagrams due now; stateless responses go back on the link.
    fn deliver(&mut self) {
        let now = self.now;
        let (due, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.link)
            .into_iter()
            .partition(|p| p.at <= now);
        self.link = rest;
        let mut responses = Vec::new();
        for mut p in due {
            self.delivered += 1;
            if !self.reachable(&p) {
                self.dropped += 1;
                continue;
            }
            #[cfg(feature = "fuzzing")]
            let original = self.capture.is_some().then(|| p.data.clone());
            let deferred = self.deferred_accept;
            let node = if p.to_server {
                &mut self.server
            } else {
                &mut self.client
            };
            // Packets are opened before the datagram is processed (keys that processing discards) and after
            // (keys that processing derives, e.g. Handshake keys from a coalesced Initial).
            #[cfg(feature = "fuzzing")]
            let before = match &original {
                Some(d) => node
                    .first_conn()
                    .map(|c| c.open_for_fuzzing(d))
                    .unwrap_or_default(),
                None => Vec::new(),
            };
            let response = node.receive(now, p.to, p.from, p.ecn, &mut p.data, deferred);
            #[cfg(feature = "fuzzing")]
            if let (Some(log), Some(data)) = (self.capture.as_mut(), original) {
                let node = if p.to_server {
                    &mut self.server
                } else {
                    &mut self.client
                };
                let mut plaintext = before;
                let after = node
                    .first_conn()
                    .map(|c| c.open_for_fuzzing(&data))
                    .unwrap_or_default();
                for (ty, payload) in after {
                    if plaintext.iter().all(|(t, _)| *t != ty) {
                        plaintext.push((ty, payload));
                    }
                }
                log.push(Captured {
                    to_server: p.to_server,
                    data,
                    plaintext,
                });
            }
            if let Some((data, ecn)) = response {
                responses.push(InFlight {
                    at: now + self.delay,
                    to_server: !p.to_server,
                    from: p.to,
                    to: p.from,
                    data,
                    ecn,
                });
            }
        }
        self.link.extend(responses);
    }

    fn collect_events(&mut self) {
        self.client.collect_events();
        self.server.collect_events();
    }

    /// The earliest arrival or timer.
    fn next_time(&self) -> Option<Instant> {
        [
            self.link.iter().map(|p| p.at).min(),
            self.client.next_timeout(),
            self.server.next_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// One step: send, advance to the next arrival or timer if it is due by `limit`, fire the timers, deliver.
    /// Returns false when nothing is due by `limit` (time then moves to `limit` when one is given).
    pub fn step_within(&mut self, limit: Option<Instant>) -> bool {
        self.flush();
        self.collect_events();
        let next = self.next_time();
        let t = match (next, limit) {
            (Some(t), Some(l)) if t > l => None,
            (t, _) => t,
        };
        let Some(t) = t else {
            if let Some(l) = limit {
                self.now = self.now.max(l);
            }
            return false;
        };
        self.now = self.now.max(t);
        self.client.fire_timers(self.now);
        self.server.fire_timers(self.now);
        self.deliver();
        self.collect_events();
        true
    }

    /// One step without a time limit; false when idle.
    pub fn step(&mut self) -> bool {
        self.step_within(None)
    }

    /// Steps until `done` holds (true), or the pair is idle, virtual time has passed `now + max` or 2,000,000
    /// steps were taken (false). The last step may end past `now + max`.
    pub fn drive_until(&mut self, max: Duration, mut done: impl FnMut(&mut Pair) -> bool) -> bool {
        let end = self.now + max;
        for _ in 0..2_000_000 {
            if done(self) {
                return true;
            }
            if !self.step() || self.now > end {
                return done(self);
            }
        }
        false
    }

    /// Steps until `done` holds (true) or `max` of virtual time or the step budget runs out (false), never
    /// moving time past `now + max`: far timers (the idle timeout) only fire when asked for.
    pub fn drive_until_steps(
        &mut self,
        max: Duration,
        steps: usize,
        mut done: impl FnMut(&mut Pair) -> bool,
    ) -> bool {
        let end = self.now + max;
        for _ in 0..steps {
            if done(self) {
                return true;
            }
            if !self.step_within(Some(end)) {
                break;
            }
        }
        done(self)
    }

    /// Steps while there is work due before `now + d` (at most 2,000,000 steps), then moves time to `now + d`
    /// (never past it, so idle timers do not fire early).
    pub fn run_for(&mut self, d: Duration) {
        self.run_for_steps(d, 2_000_000);
    }

    /// As [`run_for`](Self::run_for) with a step budget.
    pub fn run_for_steps(&mut self, d: Duration, steps: usize) {
        let end = self.now + d;
        for _ in 0..steps {
            if !self.step_within(Some(end)) {
                break;
            }
        }
        self.now = self.now.max(end);
    }

    /// Whether the client saw its handshake confirmed and the server saw it complete.
    pub fn handshake_done(&self) -> bool {
        self.client.saw(&Event::HandshakeConfirmed) && self.server.saw(&Event::HandshakeCompleted)
    }

    /// Drives the handshake to completion on both sides within 10 s of virtual time (false if it does not
    /// complete).
    pub fn try_handshake(&mut self) -> bool {
        self.drive_until(Duration::from_secs(10), |p| p.handshake_done())
    }
}
