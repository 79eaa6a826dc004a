//! One side of a [`Pair`](super::Pair): a [`Host`] (its endpoint and connections, reached through `Deref`)
//! plus what only tests want: the events its connections raised, collected in order, a panicking accessor
//! for the connection a test knows exists, and a check of the deferred-accept contract.

use std::net::SocketAddr;
use std::ops::{ControlFlow, Deref, DerefMut};
use std::time::Instant;

use crate::proto::ack_tracker::EcnCodepoint;
use crate::proto::connection::{Connection, Event};
use crate::proto::endpoint::{ConnectionHandle, Endpoint};
use crate::proto::host::{Host, Received};

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

/// A [`Host`] and the events its connections raised. The host's fields (`ep`, `conns`, `addr`) and
/// methods are reachable through `Deref`.
pub struct Node {
    /// The endpoint and its connections.
    pub host: Host,
    /// Events of its connections, in the order they were raised.
    pub events: Vec<(ConnectionHandle, Event)>,
}

impl Deref for Node {
    type Target = Host;
    fn deref(&self) -> &Host {
        &self.host
    }
}

impl DerefMut for Node {
    fn deref_mut(&mut self) -> &mut Host {
        &mut self.host
    }
}

impl Node {
    /// A node with no connections.
    pub fn new(ep: Endpoint, addr: SocketAddr) -> Node {
        Node {
            host: Host::new(ep, addr),
            events: Vec::new(),
        }
    }

    /// The first connection, if any.
    pub fn first_conn(&mut self) -> Option<&mut Connection> {
        self.host.first_mut()
    }

    /// The first connection, for tests that know there is one.
    ///
    /// # Panics
    /// When the node has no connection: the test drove the pair wrongly.
    #[allow(clippy::panic)] // a harness misuse is a test failure
    pub fn conn(&mut self) -> &mut Connection {
        match self.host.first_mut() {
            Some(c) => c,
            None => panic!("the node has no connection"),
        }
    }

    /// Whether a connection of this node raised `event`.
    pub fn saw(&self, event: &Event) -> bool {
        self.events.iter().any(|(_, e)| e == event)
    }

    /// Routes one datagram received on `local` from `from` through the host ([`Host::receive`]). With
    /// `deferred`, the endpoint only routes ([`Host::receive_deferred`]) and a new connection processes its
    /// first datagram afterwards, as the runtime does (and this checks that the new connection has not
    /// processed it yet). Returns the endpoint's stateless response, if any, and its ECN codepoint.
    ///
    /// # Panics
    /// With `deferred`, when a new connection has already processed the datagram (a broken contract of
    /// `Endpoint::handle_deferred`).
    pub fn receive(
        &mut self,
        now: Instant,
        local: SocketAddr,
        from: SocketAddr,
        ecn: Option<EcnCodepoint>,
        data: &mut [u8],
        deferred: bool,
    ) -> Option<(Vec<u8>, Option<EcnCodepoint>)> {
        let received = if deferred {
            self.host.receive_deferred(now, Some(local), from, ecn, data)
        } else {
            self.host.receive(now, Some(local), from, ecn, data)
        };
        match received {
            Received::Accepted(h) if deferred => {
                if let Some(c) = self.host.conns.get_mut(&h) {
                    // The contract of `handle_deferred`: a new connection has not processed its first datagram.
                    assert_eq!(
                        c.stats().packets_received,
                        0,
                        "deferred: the datagram is not processed yet"
                    );
                    c.handle_datagram(now, Some(local), from, ecn, data);
                }
                None
            }
            Received::Response(t, buf) => buf.get(..t.size).map(|d| (d.to_vec(), t.ecn)),
            Received::Delivered(_) | Received::Accepted(_) | Received::Dropped => None,
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
        if max == 0 {
            return out;
        }
        let mut buf = Vec::new();
        self.host.poll_transmits(now, &mut buf, |d, buf| {
            let t = d.transmit;
            assert!(t.size <= 1200 || t.size == buf.len(), "one datagram per transmit");
            out.push(Outgoing {
                from: d.from,
                to: t.remote,
                data: buf.get(..t.size).map(<[u8]>::to_vec).unwrap_or_default(),
                ecn: t.ecn,
            });
            if out.len() < max {
                ControlFlow::Continue(())
            } else {
                ControlFlow::Break(())
            }
        });
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

    /// Fires the timers of its connections that are due at `now` ([`Host::handle_timeouts`]).
    pub fn fire_timers(&mut self, now: Instant) {
        self.host.handle_timeouts(now);
    }

    /// Moves its connections' events into `events` and their endpoint events to the endpoint
    /// ([`Host::forward_endpoint_events`]).
    pub fn collect_events(&mut self) {
        for (h, c) in self.host.conns.iter_mut() {
            while let Some(e) = c.poll_event() {
                self.events.push((h, e));
            }
        }
        self.host.forward_endpoint_events();
    }

    /// The earliest timer of its connections ([`Host::poll_timeout`]).
    pub fn next_timeout(&self) -> Option<Instant> {
        self.host.poll_timeout()
    }
}
