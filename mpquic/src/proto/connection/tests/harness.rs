//! A deterministic pair harness: a client endpoint and a server endpoint joined by an in-memory link with a
//! fixed one-way delay and optional seeded random loss. Time is virtual.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::proto::ack_tracker::EcnCodepoint;
use crate::proto::connection::{
    ClientConfig, Connection, Event, Rng, ServerConfig, Transmit, TransportConfig,
};
use crate::proto::crypto::{CipherSuite, SelfSigned, TlsOptions, client_config, server_config};
use crate::proto::endpoint::{ConnectionHandle, DatagramEvent, Endpoint, EndpointConfig};

pub const CLIENT: &str = "10.0.0.1:4433";
pub const SERVER: &str = "10.0.0.2:443";

pub fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

pub fn configs(suite: Option<CipherSuite>, transport: TransportConfig) -> (ClientConfig, ServerConfig) {
    let cert = SelfSigned::generate(&["localhost"]).unwrap();
    let mut opts = TlsOptions::with_alpn(b"mpq");
    if let Some(s) = suite {
        opts.cipher_suites = vec![s];
    }
    let roots = cert.root_store().unwrap();
    let server = server_config(vec![cert.cert.clone()], cert.key.clone_key(), &opts).unwrap();
    let client = client_config(roots, &opts).unwrap();
    (
        ClientConfig {
            tls: client,
            transport: transport.clone(),
        },
        ServerConfig {
            tls: server,
            transport,
        },
    )
}

/// One side: an endpoint and its connections.
pub struct Node {
    pub ep: Endpoint,
    pub conns: HashMap<ConnectionHandle, Connection>,
    pub addr: SocketAddr,
    pub events: Vec<(ConnectionHandle, Event)>,
}

impl Node {
    /// The only connection.
    pub fn conn(&mut self) -> &mut Connection {
        self.conns.values_mut().next().unwrap()
    }
}

struct InFlight {
    at: Instant,
    to_server: bool,
    from: SocketAddr,
    to: SocketAddr,
    data: Vec<u8>,
    ecn: Option<EcnCodepoint>,
}

/// Two endpoints and the link between them.
pub struct Pair {
    pub now: Instant,
    pub client: Node,
    pub server: Node,
    pub delay: Duration,
    pub loss: f64,
    rng: Rng,
    link: Vec<InFlight>,
    pub delivered: u64,
    /// The network clears ECN codepoints.
    pub bleach_ecn: bool,
    /// The network marks every ECT packet Congestion Experienced.
    pub ce_mark: bool,
    /// The client configuration (trusts the server's certificate).
    pub client_config: ClientConfig,
    pub dropped: u64,
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
    /// When set, the client's datagrams of each flush come from this function (the runtime's GSO batching, for
    /// example) instead of `poll_transmit`: each datagram with the transmit that describes it.
    #[allow(clippy::type_complexity)]
    pub client_transmit: Option<Box<dyn FnMut(&mut Connection, Instant) -> Vec<(Vec<u8>, Transmit)>>>,
}

impl Pair {
    pub fn new(suite: Option<CipherSuite>, transport: TransportConfig, seed: u64) -> Pair {
        let (cc, sc) = configs(suite, transport);
        Pair::from_configs(cc, sc, seed)
    }

    /// A pair whose client connects with `cc` to a server with `sc`.
    pub fn from_configs(cc: ClientConfig, sc: ServerConfig, seed: u64) -> Pair {
        #[allow(clippy::disallowed_methods)] // virtual time starts at an arbitrary instant
        let now = Instant::now();
        let mut client = Node {
            ep: Endpoint::new(EndpointConfig { seed, cid_len: 8 }, None),
            conns: HashMap::new(),
            addr: addr(CLIENT),
            events: Vec::new(),
        };
        let server = Node {
            ep: Endpoint::new(
                EndpointConfig {
                    seed: seed ^ 0x5555,
                    cid_len: 8,
                },
                Some(Arc::new(sc)),
            ),
            conns: HashMap::new(),
            addr: addr(SERVER),
            events: Vec::new(),
        };
        let (h, c) = client.ep.connect(now, &cc, addr(SERVER), "localhost").unwrap();
        client.conns.insert(h, c);
        Pair {
            now,
            client,
            server,
            delay: Duration::from_millis(10),
            loss: 0.0,
            rng: Rng::new(seed.wrapping_mul(31).wrapping_add(7)),
            link: Vec::new(),
            delivered: 0,
            bleach_ecn: false,
            ce_mark: false,
            client_config: cc,
            dropped: 0,
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
            client_transmit: None,
        }
    }

    fn lose(&mut self) -> bool {
        if self.loss <= 0.0 {
            return false;
        }
        let r = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        r < self.loss
    }

    /// Sends everything both sides have to send now.
    fn flush(&mut self) {
        let mut buf = Vec::new();
        for to_server in [true, false] {
            let node = if to_server {
                &mut self.client
            } else {
                &mut self.server
            };
            let mut out = Vec::new();
            let node_addr = node.addr;
            for conn in node.conns.values_mut() {
                if let Some(f) = self.client_transmit.as_mut().filter(|_| to_server) {
                    for (data, t) in f(conn, self.now) {
                        let from = self.client_nat.unwrap_or(t.local.unwrap_or(node_addr));
                        out.push((data, t.ecn, from, t.remote));
                    }
                    continue;
                }
                while let Some(t) = conn.poll_transmit(self.now, &mut buf) {
                    assert!(t.size <= 1200 || t.size == buf.len());
                    let from = if to_server {
                        self.client_nat.unwrap_or(t.local.unwrap_or(node_addr))
                    } else {
                        t.local.unwrap_or(node_addr)
                    };
                    out.push((buf[..t.size].to_vec(), t.ecn, from, t.remote));
                    assert!(out.len() < 100_000, "runaway sender");
                }
            }
            for (data, ecn, from, to) in out {
                if to_server {
                    if let Some(log) = self.client_sent.as_mut() {
                        log.push(data.clone());
                    }
                }
                if !to_server {
                    *self.server_sent_to.entry(to).or_default() += data.len() as u64;
                    *self.server_sent_from.entry(from).or_default() += data.len() as u64;
                }
                if self.blackholed.contains(&to) || self.dead_sources.contains(&from) {
                    self.dropped += 1;
                    continue;
                }
                if to_server {
                    if let Some(spoof) = self.spoof_next.take() {
                        self.link.push(InFlight {
                            at: self.now + self.delay - Duration::from_millis(1),
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
                    continue;
                }
                let extra = self.extra_delay.get(&from).or(self.extra_delay.get(&to)).copied();
                self.link.push(InFlight {
                    at: self.now + self.delay + extra.unwrap_or_default(),
                    to_server,
                    from,
                    to,
                    data,
                    ecn: match ecn {
                        _ if self.bleach_ecn => None,
                        Some(EcnCodepoint::Ect0 | EcnCodepoint::Ect1) if self.ce_mark => {
                            Some(EcnCodepoint::Ce)
                        }
                        other => other,
                    },
                });
            }
        }
    }

    fn deliver(&mut self) {
        let now = self.now;
        let (due, rest): (Vec<_>, Vec<_>) = self.link.drain(..).partition(|p| p.at <= now);
        self.link = rest;
        let mut responses = Vec::new();
        for mut p in due {
            self.delivered += 1;
            let from = p.from;
            let node = if p.to_server {
                // Datagrams to an address the server does not have are lost.
                if p.to != self.server.addr && !self.server_extra_addrs.contains(&p.to) {
                    self.dropped += 1;
                    continue;
                }
                &mut self.server
            } else {
                // Datagrams to an address the client no longer has (old NAT mapping, old local address) are lost.
                if p.to != self.client_nat.unwrap_or(self.client.addr)
                    && !self.client_extra_addrs.contains(&p.to)
                {
                    self.dropped += 1;
                    continue;
                }
                &mut self.client
            };
            let local = p.to;
            let routed = if self.deferred_accept {
                node.ep
                    .handle_deferred(now, Some(local), from, p.ecn, &mut p.data)
            } else {
                node.ep.handle(now, Some(local), from, p.ecn, &mut p.data)
            };
            match routed {
                Some(DatagramEvent::Known(h)) => {
                    if let Some(c) = node.conns.get_mut(&h) {
                        c.handle_datagram(now, Some(local), from, p.ecn, &mut p.data);
                    }
                }
                Some(DatagramEvent::NewConnection(h, mut c)) => {
                    if self.deferred_accept {
                        assert_eq!(
                            c.stats().packets_received,
                            0,
                            "deferred: the datagram is not processed yet"
                        );
                        c.handle_datagram(now, Some(local), from, p.ecn, &mut p.data);
                    }
                    node.conns.insert(h, *c);
                }
                Some(DatagramEvent::Response(t, data)) => {
                    responses.push(InFlight {
                        at: now + self.delay,
                        to_server: !p.to_server,
                        from: p.to,
                        to: from,
                        data: data[..t.size].to_vec(),
                        ecn: t.ecn,
                    });
                }
                None => {}
            }
        }
        self.link.extend(responses);
    }

    fn collect_events(&mut self) {
        for node in [&mut self.client, &mut self.server] {
            for (h, c) in node.conns.iter_mut() {
                while let Some(e) = c.poll_event() {
                    node.events.push((*h, e));
                }
                while let Some(e) = c.poll_endpoint_event() {
                    node.ep.handle_event(*h, e);
                }
            }
        }
    }

    fn next_time(&self) -> Option<Instant> {
        let mut t = self.link.iter().map(|p| p.at).min();
        for node in [&self.client, &self.server] {
            for c in node.conns.values() {
                if let Some(x) = c.poll_timeout() {
                    t = Some(t.map_or(x, |t| t.min(x)));
                }
            }
        }
        t
    }

    /// One step: send, advance to the next event, fire timers, deliver. Returns false when idle.
    pub fn step(&mut self) -> bool {
        self.flush();
        self.collect_events();
        let Some(t) = self.next_time() else {
            return false;
        };
        if t > self.now {
            self.now = t;
        }
        for node in [&mut self.client, &mut self.server] {
            for c in node.conns.values_mut() {
                if c.poll_timeout().is_some_and(|x| x <= self.now) {
                    c.handle_timeout(self.now);
                }
            }
        }
        self.deliver();
        self.collect_events();
        true
    }

    /// Steps until `done` holds (true) or the step budget or virtual deadline runs out (false).
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

    /// Steps while there is work due before `now + d` (never jumps past it, so idle timers do not fire).
    pub fn run_for(&mut self, d: Duration) {
        let end = self.now + d;
        for _ in 0..2_000_000 {
            self.flush();
            self.collect_events();
            match self.next_time() {
                Some(t) if t <= end => {}
                _ => break,
            }
            self.step();
        }
        self.now = self.now.max(end);
    }

    /// Forgets both sides' connections and what is on the link, optionally gives the server endpoint a new
    /// configuration (same seed), and starts a new client connection with the pair's client configuration
    /// (its TLS session store, hence its tickets, carry over).
    pub fn reconnect(&mut self, server: Option<ServerConfig>, seed: u64) {
        self.client.conns.clear();
        self.server.conns.clear();
        self.client.events.clear();
        self.server.events.clear();
        self.link.clear();
        if let Some(sc) = server {
            self.server.ep = Endpoint::new(EndpointConfig { seed, cid_len: 8 }, Some(Arc::new(sc)));
        }
        let cc = self.client_config.clone();
        let (h, c) = self
            .client
            .ep
            .connect(self.now, &cc, addr(SERVER), "localhost")
            .unwrap();
        self.client.conns.insert(h, c);
    }

    pub fn handshake(&mut self) {
        let ok = self.drive_until(Duration::from_secs(10), |p| {
            p.client
                .events
                .iter()
                .any(|(_, e)| *e == Event::HandshakeConfirmed)
                && p.server
                    .events
                    .iter()
                    .any(|(_, e)| *e == Event::HandshakeCompleted)
        });
        assert!(ok, "handshake did not complete");
    }
}
