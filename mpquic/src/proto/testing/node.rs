//! One side of a [`Pair`](super::Pair): an endpoint, its connections and the events they raised.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Instant;

use crate::proto::ack_tracker::EcnCodepoint;
use crate::proto::connection::{Connection, Event};
use crate::proto::endpoint::{ConnectionHandle, DatagramEvent, Endpoint};

/// A datagram a node sends.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// Source address.
    pub from: SocketAddr,
    /// Destination address.
    pub to: SocketAddr,
    /// The UDP payload.
    pub data: Vec<u8>,
    /// ECN codepoint.
    pub ecn: Option<EcnCodepoint>,
}

/// An endpoint and its connections.
pub struct Node {
    /// The endpoint.
    pub ep: Endpoint,
    /// Its connections, by handle (ordered, so iteration is deterministic).
    pub conns: BTreeMap<ConnectionHandle, Connection>,
    /// Its default address.
    pub addr: SocketAddr,
    /// Events of its connections, in the order they were raised.
    pub events: Vec<(ConnectionHandle, Event)>,
}

impl Node {
    /// A node with no connections.
    pub fn new(ep: Endpoint, addr: SocketAddr) -> Node {
        Node {
            ep,
            conns: BTreeMap::new(),
            addr,
            events: Vec::new(),
        }
    }

    /// The first connection, if any.
    pub fn first_conn(&mut self) -> Option<&mut Connection> {
        self.conns.values_mut().next()
    }

    /// The first connection, for tests that know there is one.
    ///
    /// # Panics
    /// When the node has no connection: the test drove the pair wrongly.
    #[allow(clippy::panic)] // a harness misuse is a test failure
    pub fn conn(&mut self) -> &mut Connection {
        match self.conns.values_mut().next() {
            Some(c) => c,
            None => panic!("the node has no connection"),
        }
    }

    /// Whether a connection of this node raised `event`.
    pub fn saw(&self, event: &Event) -> bool {
        self.events.iter().any(|(_, e)| e == event)
    }

    /// Routes one datagram received on `local` from `from` to the endpoint and, if it belongs to a
    /// connection, to that connection; a new connection is kept. With `deferred`, the endpoint only routes
    /// (`Endpoint::handle_deferred`) and a new connection processes its first datagram afterwards, as the
    /// runtime does (and this checks that the new connection has not processed it yet). Returns the endpoint's stateless response, if any, and its ECN codepoint.
    pub fn receive(
        &mut self,
        now: Instant,
        local: SocketAddr,
        from: SocketAddr,
        ecn: Option<EcnCodepoint>,
        data: &mut [u8],
        deferred: bool,
    ) -> Option<(Vec<u8>, Option<EcnCodepoint>)> {
        let routed = if deferred {
            self.ep.handle_deferred(now, Some(local), from, ecn, data)
        } else {
            self.ep.handle(now, Some(local), from, ecn, data)
        };
        match routed {
            Some(DatagramEvent::Known(h)) => {
                if let Some(c) = self.conns.get_mut(&h) {
                    c.handle_datagram(now, Some(local), from, ecn, data);
                }
                None
            }
            Some(DatagramEvent::NewConnection(h, mut c)) => {
                if deferred {
                    // The contract of `handle_deferred`: a new connection has not processed its first datagram.
                    assert_eq!(
                        c.stats().packets_received,
                        0,
                        "deferred: the datagram is not processed yet"
                    );
                    c.handle_datagram(now, Some(local), from, ecn, data);
                }
                self.conns.insert(h, *c);
                None
            }
            Some(DatagramEvent::Response(t, buf)) => buf.get(..t.size).map(|d| (d.to_vec(), t.ecn)),
            None => None,
        }
    }

    /// Polls its connections for datagrams to send at `now`, at most `max` in all: (source, destination,
    /// bytes, ECN), the source being the connection's local address or, when it has none, the node's.
    ///
    /// # Panics
    /// When a transmit is not one datagram (the sans-IO core hands out one datagram per `poll_transmit`
    /// unless it is larger than the minimum size and then fills the buffer exactly).
    pub fn poll_transmits(&mut self, now: Instant, max: usize) -> Vec<Outgoing> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        for c in self.conns.values_mut() {
            while out.len() < max {
                let Some(t) = c.poll_transmit(now, &mut buf) else {
                    break;
                };
                assert!(t.size <= 1200 || t.size == buf.len(), "one datagram per transmit");
                out.push(Outgoing {
                    from: t.local.unwrap_or(self.addr),
                    to: t.remote,
                    data: buf.get(..t.size).map(<[u8]>::to_vec).unwrap_or_default(),
                    ecn: t.ecn,
                });
                buf.clear();
            }
        }
        out
    }

    /// One round of a node on its own: fires due timers, polls at most `max` datagrams and collects the
    /// events.
    pub fn drive(&mut self, now: Instant, max: usize) -> Vec<Outgoing> {
        self.fire_timers(now);
        let out = self.poll_transmits(now, max);
        self.collect_events();
        out
    }

    /// Fires the timers of its connections that are due at `now`.
    pub fn fire_timers(&mut self, now: Instant) {
        for c in self.conns.values_mut() {
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
        }
    }

    /// Moves its connections' events into `events` and their endpoint events to the endpoint.
    pub fn collect_events(&mut self) {
        for (h, c) in &mut self.conns {
            while let Some(e) = c.poll_event() {
                self.events.push((*h, e));
            }
            while let Some(e) = c.poll_endpoint_event() {
                self.ep.handle_event(*h, e);
            }
        }
    }

    /// The earliest timer of its connections.
    pub fn next_timeout(&self) -> Option<Instant> {
        self.conns.values().filter_map(Connection::poll_timeout).min()
    }
}
