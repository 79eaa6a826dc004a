//! A deterministic client/server pair on the public API of `mpquic::proto`: two endpoints joined by an
//! in-memory link with a fixed one-way delay, virtual time, fixed seeds. The `endpoint` and `connection`
//! targets and the seed generator build on it.
//!
//! The TLS certificate and configurations are made once per process ([`configs`]); the handshake itself
//! uses rustls' randomness (ephemeral keys), so ciphertexts differ between runs while everything the fuzz
//! input drives (packet numbers, connection IDs, timing) is reproducible.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use mpquic::proto::ack_tracker::EcnCodepoint;
use mpquic::proto::connection::{ClientConfig, Connection, Event, ServerConfig, TransportConfig};
use mpquic::proto::crypto::{SelfSigned, TlsOptions, client_config, server_config};
use mpquic::proto::endpoint::{ConnectionHandle, DatagramEvent, Endpoint, EndpointConfig};

/// The client's address.
pub const CLIENT: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 4433);
/// The client's second address (its second interface, for a second path).
pub const CLIENT2: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 1, 1)), 4433);
/// The server's address.
pub const SERVER: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), 443);

/// Client and server configurations with a self-signed certificate, made once per process. `None` if the
/// certificate cannot be made (never expected).
pub fn configs() -> Option<&'static (ClientConfig, Arc<ServerConfig>)> {
    static CONFIGS: OnceLock<Option<(ClientConfig, Arc<ServerConfig>)>> = OnceLock::new();
    CONFIGS
        .get_or_init(|| {
            let cert = SelfSigned::generate(&["localhost"]).ok()?;
            let opts = TlsOptions::with_alpn(b"mpq");
            let roots = cert.root_store().ok()?;
            let server = server_config(vec![cert.cert.clone()], cert.key.clone_key(), &opts).ok()?;
            let client = client_config(roots, &opts).ok()?;
            let transport = TransportConfig::default();
            Some((
                ClientConfig {
                    tls: client,
                    transport: transport.clone(),
                },
                Arc::new(ServerConfig {
                    tls: server,
                    transport,
                }),
            ))
        })
        .as_ref()
}

/// A server endpoint with the shared configuration.
pub fn server_endpoint(seed: u64) -> Option<Endpoint> {
    let (_, sc) = configs()?;
    Some(Endpoint::new(
        EndpointConfig { seed, cid_len: 8 },
        Some(sc.clone()),
    ))
}

/// One side: an endpoint and its connections.
pub struct Node {
    /// The endpoint.
    pub ep: Endpoint,
    /// Its connections.
    pub conns: BTreeMap<ConnectionHandle, Connection>,
    /// Events of its connections, in order.
    pub events: Vec<Event>,
    /// Its default address.
    pub addr: SocketAddr,
}

impl Node {
    /// The first connection.
    pub fn conn(&mut self) -> Option<&mut Connection> {
        self.conns.values_mut().next()
    }

    /// Routes one datagram to the endpoint and, if it is for a connection, to that connection. Returns the
    /// stateless response, if any.
    pub fn receive(
        &mut self,
        now: Instant,
        local: SocketAddr,
        from: SocketAddr,
        ecn: Option<EcnCodepoint>,
        data: &mut [u8],
    ) -> Option<Vec<u8>> {
        match self.ep.handle(now, Some(local), from, ecn, data) {
            Some(DatagramEvent::Known(h)) => {
                if let Some(c) = self.conns.get_mut(&h) {
                    c.handle_datagram(now, Some(local), from, ecn, data);
                }
                None
            }
            Some(DatagramEvent::NewConnection(h, c)) => {
                self.conns.insert(h, *c);
                None
            }
            Some(DatagramEvent::Response(t, buf)) => buf.get(..t.size).map(<[u8]>::to_vec),
            None => None,
        }
    }

    /// Fires due timers, drains events into `events` and the endpoint, and returns the datagrams the
    /// connections want to send: (from, to, bytes, ECN). At most `max` datagrams.
    pub fn drive(
        &mut self,
        now: Instant,
        max: usize,
    ) -> Vec<(SocketAddr, SocketAddr, Vec<u8>, Option<EcnCodepoint>)> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        for (h, c) in &mut self.conns {
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
            while out.len() < max {
                let Some(t) = c.poll_transmit(now, &mut buf) else {
                    break;
                };
                let data = buf.get(..t.size).map(<[u8]>::to_vec).unwrap_or_default();
                out.push((t.local.unwrap_or(self.addr), t.remote, data, t.ecn));
                buf.clear();
            }
            while let Some(e) = c.poll_event() {
                self.events.push(e);
            }
            while let Some(e) = c.poll_endpoint_event() {
                self.ep.handle_event(*h, e);
            }
        }
        out
    }

    /// The earliest timer of its connections.
    pub fn next_timeout(&self) -> Option<Instant> {
        self.conns.values().filter_map(Connection::poll_timeout).min()
    }
}

/// A datagram on the link.
struct InFlight {
    at: Instant,
    to_server: bool,
    from: SocketAddr,
    to: SocketAddr,
    data: Vec<u8>,
    ecn: Option<EcnCodepoint>,
}

/// A datagram seen on the link, for the seed generator.
#[derive(Debug, Clone)]
pub struct Captured {
    /// Sent by the client.
    pub to_server: bool,
    /// The UDP payload.
    pub data: Vec<u8>,
    /// Packets the receiver could open: type and plaintext payload.
    pub plaintext: Vec<(mpquic::proto::packet::PacketType, Vec<u8>)>,
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
    link: Vec<InFlight>,
    /// When set, every datagram delivered is recorded here with the plaintext of its packets.
    pub capture: Option<Vec<Captured>>,
}

impl Pair {
    /// A pair whose client has started connecting. `None` if the configurations cannot be made.
    pub fn new(seed: u64) -> Option<Pair> {
        let (cc, sc) = configs()?;
        let now = crate::base_instant();
        let mut client = Node {
            ep: Endpoint::new(EndpointConfig { seed, cid_len: 8 }, None),
            conns: BTreeMap::new(),
            events: Vec::new(),
            addr: CLIENT,
        };
        let server = Node {
            ep: Endpoint::new(
                EndpointConfig {
                    seed: seed ^ 0x5555,
                    cid_len: 8,
                },
                Some(sc.clone()),
            ),
            conns: BTreeMap::new(),
            events: Vec::new(),
            addr: SERVER,
        };
        let (h, c) = client.ep.connect(now, cc, SERVER, "localhost").ok()?;
        client.conns.insert(h, c);
        Some(Pair {
            now,
            client,
            server,
            delay: Duration::from_millis(10),
            link: Vec::new(),
            capture: None,
        })
    }

    /// Sends what both sides have to send now (at most `max` datagrams each).
    pub fn flush(&mut self, max: usize) {
        let now = self.now;
        let at = now + self.delay;
        for (from, to, data, ecn) in self.client.drive(now, max) {
            self.link.push(InFlight {
                at,
                to_server: true,
                from,
                to,
                data,
                ecn,
            });
        }
        for (from, to, data, ecn) in self.server.drive(now, max) {
            self.link.push(InFlight {
                at,
                to_server: false,
                from,
                to,
                data,
                ecn,
            });
        }
    }

    /// Delivers the datagrams due now.
    fn deliver(&mut self) {
        let now = self.now;
        let (due, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.link)
            .into_iter()
            .partition(|p| p.at <= now);
        self.link = rest;
        for mut p in due {
            let node = if p.to_server {
                &mut self.server
            } else {
                &mut self.client
            };
            // Packets are opened before the datagram is processed (keys that processing discards) and after
            // (keys that processing derives, e.g. Handshake keys from a coalesced Initial).
            let original = self.capture.is_some().then(|| p.data.clone());
            let before = match &original {
                Some(d) => node.conn().map(|c| c.open_for_fuzzing(d)).unwrap_or_default(),
                None => Vec::new(),
            };
            let response = node.receive(now, p.to, p.from, p.ecn, &mut p.data);
            if let (Some(log), Some(data)) = (self.capture.as_mut(), original) {
                let mut plaintext = before;
                let after = node.conn().map(|c| c.open_for_fuzzing(&data)).unwrap_or_default();
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
            if let Some(data) = response {
                self.link.push(InFlight {
                    at: now + self.delay,
                    to_server: !p.to_server,
                    from: p.to,
                    to: p.from,
                    data,
                    ecn: None,
                });
            }
        }
    }

    /// One step: send, advance to the next event if it is due by `limit`, deliver. Returns false (and moves
    /// time to `limit`) when nothing is due by then: time never jumps past `limit`, so far timers (idle
    /// timeout) only fire when asked for.
    pub fn step_within(&mut self, limit: Instant) -> bool {
        self.flush(64);
        let next = [
            self.link.iter().map(|p| p.at).min(),
            self.client.next_timeout(),
            self.server.next_timeout(),
        ]
        .into_iter()
        .flatten()
        .min();
        match next {
            Some(t) if t <= limit => {
                self.now = self.now.max(t);
                self.deliver();
                true
            }
            _ => {
                self.now = self.now.max(limit);
                false
            }
        }
    }

    /// Steps until `done` holds (true) or `max` of virtual time or the step budget runs out (false).
    pub fn drive_until(
        &mut self,
        max: Duration,
        steps: usize,
        mut done: impl FnMut(&mut Pair) -> bool,
    ) -> bool {
        let limit = self.now + max;
        for _ in 0..steps {
            if done(self) {
                return true;
            }
            if !self.step_within(limit) {
                break;
            }
        }
        done(self)
    }

    /// Runs the handshake to completion on both sides (false if it does not complete).
    pub fn handshake(&mut self) -> bool {
        self.drive_until(Duration::from_secs(10), 1000, |p| {
            p.client.events.contains(&Event::HandshakeConfirmed)
                && p.server.events.contains(&Event::HandshakeCompleted)
        })
    }

    /// Lets both sides exchange what they have for `d` of virtual time (at most `steps` steps).
    pub fn run_for(&mut self, d: Duration, steps: usize) {
        let _ = self.drive_until(d, steps, |_| false);
    }
}
