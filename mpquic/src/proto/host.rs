//! A sans-IO host: one [`Endpoint`] and the [`Connection`]s it routes to, driven by whoever owns the event
//! loop (a simulator, a test harness, an embedding with its own sockets and clock).
//!
//! The endpoint only *routes*: it tells which connection a datagram belongs to, hands out new server
//! connections, and answers stateless datagrams (Version Negotiation, Retry, Stateless Reset). Someone has to
//! keep the connections, pass each datagram on, fire timers, forward the connections' notifications back to
//! the endpoint and collect what the connections want to send. [`Host`] is that glue, written once:
//!
//! - [`Host::receive`] routes a datagram and gives it to its connection, keeping a new one;
//!   [`Host::receive_deferred`] keeps a new connection without letting it process the datagram yet, as a
//!   runtime that does the TLS work outside the endpoint's lock does.
//! - [`Host::handle_timeouts`] fires the timers that are due; [`Host::poll_timeout`] is the earliest.
//! - [`Host::forward_endpoint_events`] passes the connections' notifications (new and retired connection
//!   IDs, handshake completion, draining) to the endpoint, which routes by them.
//! - [`Host::poll_transmits`] collects every datagram the connections have to send, written into the
//!   caller's buffer (no allocation per datagram unless the caller wants one).
//!
//! Everything runs in a fixed order: connections are kept in handle order ([`Connections`]) and every pass
//! visits them in that order, so a host driven by a deterministic clock behaves deterministically. The host
//! does not read connection events ([`Connection::poll_event`]): they belong to the application, which
//! walks [`Host::conns`] itself.
//!
//! The in-memory test pair (`proto::testing`, feature `testing`) and the simulator (`mpquic-netsim`) both
//! drive their endpoints through this type; the socket runtime (module `runtime`, feature `runtime`) has its
//! own, concurrent, driver.

use std::net::SocketAddr;
use std::ops::{ControlFlow, Index};
use std::time::Instant;

use crate::proto::ack_tracker::EcnCodepoint;
use crate::proto::connection::{ClientConfig, ConnectError, Connection, Transmit};
use crate::proto::endpoint::{ConnectionHandle, DatagramEvent, Endpoint};

/// What [`Host::receive`] did with a datagram.
#[derive(Debug)]
pub enum Received {
    /// The datagram went to this existing connection, which processed it.
    Delivered(ConnectionHandle),
    /// The datagram opened this new server connection, now kept in [`Host::conns`]. With
    /// [`Host::receive`] the connection has processed it; with [`Host::receive_deferred`] it has not, and
    /// the caller passes it to the connection's [`Connection::handle_datagram`] next.
    Accepted(ConnectionHandle),
    /// The endpoint answers statelessly: send `data[..transmit.size]` back to the datagram's source, from
    /// the address it arrived on.
    Response(Transmit, Vec<u8>),
    /// Nothing to do: the datagram was not routable, or was routed to a connection the host no longer keeps.
    Dropped,
}

/// A datagram one of the host's connections wrote, as [`Host::poll_transmits`] hands it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outgoing {
    /// The connection that wrote it.
    pub conn: ConnectionHandle,
    /// Its source address: the connection's local address for the path ([`Transmit::local`]), or the host's
    /// default address ([`Host::addr`]) when the path is not bound to one.
    pub from: SocketAddr,
    /// The connection's description of it: destination, ECN codepoint, size and segmentation.
    pub transmit: Transmit,
}

/// One endpoint and its connections (see the module documentation).
///
/// The fields are public so that an event loop can borrow the endpoint and a connection at once (the
/// application of one connection, say, while the endpoint stays reachable). Keep only connections of
/// this endpoint in [`Host::conns`], under the handles the endpoint gave them.
#[derive(Debug)]
pub struct Host {
    /// The endpoint.
    pub ep: Endpoint,
    /// Its connections, in handle order.
    pub conns: Connections,
    /// The default local address: the source of datagrams whose path is not bound to a local address.
    pub addr: SocketAddr,
}

impl Host {
    /// A host of `ep`, at local address `addr`, with no connections.
    pub fn new(ep: Endpoint, addr: SocketAddr) -> Host {
        Host {
            ep,
            conns: Connections::default(),
            addr,
        }
    }

    /// Starts a client connection to `remote` ([`Endpoint::connect`]) and keeps it; returns its handle.
    pub fn connect(
        &mut self,
        now: Instant,
        config: &ClientConfig,
        remote: SocketAddr,
        server_name: &str,
    ) -> Result<ConnectionHandle, ConnectError> {
        let (h, c) = self.ep.connect(now, config, remote, server_name)?;
        self.conns.insert(h, c);
        Ok(h)
    }

    /// The connection with the lowest handle (a client's only connection), if any.
    #[inline]
    pub fn first(&self) -> Option<&Connection> {
        self.conns.first()
    }

    /// The connection with the lowest handle, mutably.
    #[inline]
    pub fn first_mut(&mut self) -> Option<&mut Connection> {
        self.conns.first_mut()
    }

    /// Routes one datagram received on `local` from `remote` ([`Endpoint::handle`]) and gives it to its
    /// connection; a new server connection is kept (it has processed the datagram).
    #[inline]
    pub fn receive(
        &mut self,
        now: Instant,
        local: Option<SocketAddr>,
        remote: SocketAddr,
        ecn: Option<EcnCodepoint>,
        data: &mut [u8],
    ) -> Received {
        let routed = self.ep.handle(now, local, remote, ecn, data);
        self.settle(routed, now, local, remote, ecn, data)
    }

    /// As [`Host::receive`], but routed with [`Endpoint::handle_deferred`]: a new server connection is kept
    /// **without** having processed the datagram ([`Received::Accepted`]); the caller passes the datagram
    /// to it before any other.
    pub fn receive_deferred(
        &mut self,
        now: Instant,
        local: Option<SocketAddr>,
        remote: SocketAddr,
        ecn: Option<EcnCodepoint>,
        data: &mut [u8],
    ) -> Received {
        let routed = self.ep.handle_deferred(now, local, remote, ecn, data);
        self.settle(routed, now, local, remote, ecn, data)
    }

    /// Acts on the endpoint's routing decision: a known connection processes the datagram, a new one is
    /// kept, a stateless response is handed back.
    fn settle(
        &mut self,
        routed: Option<DatagramEvent>,
        now: Instant,
        local: Option<SocketAddr>,
        remote: SocketAddr,
        ecn: Option<EcnCodepoint>,
        data: &mut [u8],
    ) -> Received {
        match routed {
            Some(DatagramEvent::Known(h)) => match self.conns.get_mut(&h) {
                Some(c) => {
                    c.handle_datagram(now, local, remote, ecn, data);
                    Received::Delivered(h)
                }
                None => Received::Dropped,
            },
            Some(DatagramEvent::NewConnection(h, c)) => {
                self.conns.insert(h, c);
                Received::Accepted(h)
            }
            Some(DatagramEvent::Response(t, buf)) => Received::Response(t, buf),
            None => Received::Dropped,
        }
    }

    /// Fires the timer of every connection whose timer is due at `now`, in handle order.
    #[inline]
    pub fn handle_timeouts(&mut self, now: Instant) {
        for c in self.conns.values_mut() {
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
        }
    }

    /// The earliest timer of the connections (`None`: no connection has one).
    #[inline]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.conns.values().filter_map(|c| c.poll_timeout()).min()
    }

    /// Passes every connection's endpoint notifications ([`Connection::poll_endpoint_event`]) to the
    /// endpoint, connection by connection in handle order. Call it after the connections have processed
    /// datagrams, timers or application calls and before the endpoint routes more datagrams: the endpoint
    /// routes by the connection IDs these notifications announce and retire.
    #[inline]
    pub fn forward_endpoint_events(&mut self) {
        for (h, c) in self.conns.iter_mut() {
            while let Some(e) = c.poll_endpoint_event() {
                self.ep.handle_event(h, e);
            }
        }
    }

    /// Collects the datagrams the connections have to send at `now`: each connection in handle order is
    /// polled ([`Connection::poll_transmit`]) until it has nothing more. Every datagram is written into
    /// `buf` (`buf[..out.transmit.size]`) and handed to `f` with its [`Outgoing`] description. `f` may
    /// take the bytes and leave another buffer in their place (`std::mem::replace`): the next datagram is
    /// written into whatever `buf` holds then, so a caller with a pool of buffers allocates nothing per
    /// datagram. When `f` returns [`ControlFlow::Break`] polling stops at once; the next call starts again
    /// from the first connection.
    pub fn poll_transmits(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        mut f: impl FnMut(Outgoing, &mut Vec<u8>) -> ControlFlow<()>,
    ) {
        for (h, c) in self.conns.iter_mut() {
            while let Some(transmit) = c.poll_transmit(now, buf) {
                let out = Outgoing {
                    conn: h,
                    from: transmit.local.unwrap_or(self.addr),
                    transmit,
                };
                if f(out, buf).is_break() {
                    return;
                }
            }
        }
    }
}

/// A host's connections by handle, in handle order: a vector sorted by handle, which a host with one or
/// two connections (a client, a simulated server) walks at the cost of a slice. Each connection is boxed:
/// the endpoint hands out new connections boxed and a connection is several kilobytes.
///
/// The methods mirror those of a `BTreeMap<ConnectionHandle, Connection>`.
#[derive(Debug, Default)]
pub struct Connections {
    /// Sorted by handle, no handle twice.
    items: Vec<(ConnectionHandle, Box<Connection>)>,
}

impl Connections {
    /// Number of connections.
    #[inline]
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Where `h` is (`Ok`) or would go (`Err`).
    #[inline]
    fn position(&self, h: &ConnectionHandle) -> Result<usize, usize> {
        self.items.binary_search_by(|(k, _)| k.cmp(h))
    }

    /// Keeps `conn` under handle `h`; returns the connection `h` had before, if any. The endpoint numbers
    /// connections in increasing order, so a new connection usually goes at the end.
    pub fn insert(
        &mut self,
        h: ConnectionHandle,
        conn: impl Into<Box<Connection>>,
    ) -> Option<Box<Connection>> {
        let conn = conn.into();
        if self.items.last().is_none_or(|(last, _)| *last < h) {
            self.items.push((h, conn));
            return None;
        }
        match self.position(&h) {
            Ok(i) => self.items.get_mut(i).map(|(_, c)| std::mem::replace(c, conn)),
            Err(i) => {
                self.items.insert(i, (h, conn));
                None
            }
        }
    }

    /// Removes and returns the connection with handle `h`.
    pub fn remove(&mut self, h: &ConnectionHandle) -> Option<Box<Connection>> {
        let i = self.position(h).ok()?;
        Some(self.items.remove(i).1)
    }

    /// Forgets every connection.
    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// The connection with handle `h`.
    #[inline]
    pub fn get(&self, h: &ConnectionHandle) -> Option<&Connection> {
        let i = self.position(h).ok()?;
        self.items.get(i).map(|(_, c)| &**c)
    }

    /// The connection with handle `h`, mutably.
    #[inline]
    pub fn get_mut(&mut self, h: &ConnectionHandle) -> Option<&mut Connection> {
        let i = self.position(h).ok()?;
        self.items.get_mut(i).map(|(_, c)| &mut **c)
    }

    /// The connection with the lowest handle.
    #[inline]
    pub fn first(&self) -> Option<&Connection> {
        self.items.first().map(|(_, c)| &**c)
    }

    /// The connection with the lowest handle, mutably.
    #[inline]
    pub fn first_mut(&mut self) -> Option<&mut Connection> {
        self.items.first_mut().map(|(_, c)| &mut **c)
    }

    /// Handles and connections in handle order.
    #[inline]
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (ConnectionHandle, &Connection)> {
        self.items.iter().map(|(h, c)| (*h, &**c))
    }

    /// Handles and connections in handle order, mutably.
    #[inline]
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (ConnectionHandle, &mut Connection)> {
        self.items.iter_mut().map(|(h, c)| (*h, &mut **c))
    }

    /// The handles in order.
    #[inline]
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &ConnectionHandle> {
        self.items.iter().map(|(h, _)| h)
    }

    /// The connections in handle order.
    #[inline]
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Connection> {
        self.items.iter().map(|(_, c)| &**c)
    }

    /// The connections in handle order, mutably.
    #[inline]
    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Connection> {
        self.items.iter_mut().map(|(_, c)| &mut **c)
    }
}

impl Index<&ConnectionHandle> for Connections {
    type Output = Connection;

    /// The connection with handle `h`.
    ///
    /// # Panics
    /// When there is none, as indexing a map with a missing key does: use [`Connections::get`] when it may
    /// be missing.
    #[allow(clippy::panic)] // the contract of `Index`
    fn index(&self, h: &ConnectionHandle) -> &Connection {
        match self.get(h) {
            Some(c) => c,
            None => panic!("no connection with handle {h:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::proto::connection::TransportConfig;
    use crate::proto::endpoint::EndpointConfig;
    use crate::proto::packet::VERSION_1;
    use crate::proto::testing::{CLIENT, SERVER, configs};

    /// An arbitrary start of virtual time.
    fn start() -> Instant {
        #[allow(clippy::disallowed_methods)] // virtual time starts at an arbitrary instant
        Instant::now()
    }

    /// A client host that has started connecting to a server host, both at `now`.
    fn hosts(now: Instant) -> (Host, Host) {
        let (cc, sc) = configs(None, TransportConfig::default()).unwrap();
        let mut client = Host::new(
            Endpoint::new(EndpointConfig { seed: 1, cid_len: 8 }, None),
            CLIENT,
        );
        let server_ep = Endpoint::new(EndpointConfig { seed: 2, cid_len: 8 }, Some(Arc::new(sc)));
        let server = Host::new(server_ep, SERVER);
        client.connect(now, &cc, SERVER, "localhost").unwrap();
        (client, server)
    }

    /// Every datagram `from` has to send at `now`, with its source and destination.
    fn drain(from: &mut Host, now: Instant) -> Vec<(SocketAddr, SocketAddr, Vec<u8>)> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        from.poll_transmits(now, &mut buf, |d, buf| {
            let mut data = std::mem::take(buf);
            data.truncate(d.transmit.size);
            out.push((d.from, d.transmit.remote, data));
            ControlFlow::Continue(())
        });
        out
    }

    #[test]
    fn two_hosts_complete_a_handshake_over_a_lossless_in_memory_link() {
        let mut now = start();
        let (mut client, mut server) = hosts(now);
        let mut accepted = 0;
        let mut delivered = 0;
        for _ in 0..20 {
            for (from, to, mut data) in drain(&mut client, now) {
                // The client's path is not bound to a local address: its datagrams leave from the host's.
                assert_eq!(from, CLIENT);
                match server.receive(now, Some(to), from, None, &mut data) {
                    Received::Accepted(_) => accepted += 1,
                    Received::Delivered(_) => delivered += 1,
                    other => panic!("unexpected {other:?}"),
                }
            }
            server.forward_endpoint_events();
            for (from, to, mut data) in drain(&mut server, now) {
                assert!(matches!(
                    client.receive(now, Some(to), from, None, &mut data),
                    Received::Delivered(_)
                ));
            }
            client.forward_endpoint_events();
            if client.first().is_some_and(|c| !c.is_handshaking())
                && server.first().is_some_and(|c| !c.is_handshaking())
            {
                break;
            }
            now += Duration::from_millis(5);
            client.handle_timeouts(now);
            server.handle_timeouts(now);
        }
        assert!(!client.first().unwrap().is_handshaking(), "client handshake");
        assert!(!server.first().unwrap().is_handshaking(), "server handshake");
        // One connection accepted, from the first Initial; everything after went to it.
        assert_eq!(accepted, 1);
        assert!(delivered >= 1);
        assert_eq!(server.conns.len(), 1);
        assert_eq!(server.ep.connection_count(), 1);
        // The host's timeout is its connection's.
        assert_eq!(client.poll_timeout(), client.first().unwrap().poll_timeout());
    }

    #[test]
    fn deferred_accept_leaves_the_first_datagram_to_the_caller() {
        let now = start();
        let (mut client, mut server) = hosts(now);
        let (from, to, mut data) = drain(&mut client, now).remove(0);
        let Received::Accepted(h) = server.receive_deferred(now, Some(to), from, None, &mut data) else {
            panic!("the Initial opens a connection");
        };
        let c = server.conns.get_mut(&h).unwrap();
        assert_eq!(c.stats().packets_received, 0);
        c.handle_datagram(now, Some(to), from, None, &mut data);
        assert!(c.stats().packets_received >= 1);
    }

    #[test]
    fn polling_stops_at_break_and_writes_into_the_buffer_left_in_place() {
        let now = start();
        let (mut client, _) = hosts(now);
        let mut buf = Vec::new();
        let mut seen = Vec::new();
        client.poll_transmits(now, &mut buf, |d, buf| {
            seen.push((d.transmit.size, buf.len()));
            ControlFlow::Break(())
        });
        // One datagram, written into `buf` itself: the client's first Initial, padded to 1200 bytes
        // (RFC 9000 §14.1).
        assert_eq!(seen.len(), 1);
        assert!(seen[0].0 >= 1200);
        assert_eq!(seen[0].1, seen[0].0);
        assert_eq!(buf.len(), seen[0].0);
    }

    #[test]
    fn unknown_versions_are_answered_and_garbage_is_dropped() {
        let now = start();
        let (_, mut server) = hosts(now);
        // A long header of an unknown version in a datagram of Initial size: Version Negotiation
        // (RFC 9000 §6.1), listing version 1.
        let mut d = vec![0u8; 1200];
        d[0] = 0xc0;
        d[1..5].copy_from_slice(&0x1a2a_3a4a_u32.to_be_bytes());
        d[5] = 8;
        d[14] = 8;
        let Received::Response(t, out) = server.receive(now, Some(SERVER), CLIENT, None, &mut d) else {
            panic!("Version Negotiation expected");
        };
        assert_eq!(t.remote, CLIENT);
        // First byte, version 0, both connection IDs (1 + 8 each), one supported version.
        assert_eq!(t.size, 1 + 4 + 9 + 9 + 4);
        assert_eq!(out[1..5], [0, 0, 0, 0]);
        assert_eq!(out[t.size - 4..t.size], VERSION_1.to_be_bytes());
        assert!(server.conns.is_empty());
        // Three bytes are nothing.
        let mut junk = [1u8, 2, 3];
        assert!(matches!(
            server.receive(now, Some(SERVER), CLIENT, None, &mut junk),
            Received::Dropped
        ));
    }

    #[test]
    fn connections_stay_in_handle_order_whatever_the_insertion_order() {
        let now = start();
        let (cc, _) = configs(None, TransportConfig::default()).unwrap();
        let mut ep = Endpoint::new(EndpointConfig { seed: 3, cid_len: 8 }, None);
        let mut made: Vec<_> = (0..4)
            .map(|_| ep.connect(now, &cc, SERVER, "localhost").unwrap())
            .collect();
        let cids: Vec<_> = made.iter().map(|(_, c)| c.local_cid()).collect();
        let handles: Vec<_> = made.iter().map(|(h, _)| *h).collect();
        let (h3, c3) = made.pop().unwrap();
        let mut conns = Connections::default();
        for (h, c) in made.into_iter().rev() {
            assert!(conns.insert(h, c).is_none());
        }
        assert_eq!(conns.keys().copied().collect::<Vec<_>>(), handles[..3]);
        assert_eq!(conns.first().unwrap().local_cid(), cids[0]);
        // The same handle again: replaced, the old connection handed back.
        let old = conns.insert(handles[1], c3).unwrap();
        assert_eq!(old.local_cid(), cids[1]);
        assert_eq!(conns[&handles[1]].local_cid(), cids[3]);
        assert_eq!(conns.len(), 3);
        assert_eq!(conns.remove(&handles[0]).unwrap().local_cid(), cids[0]);
        assert!(conns.get(&handles[0]).is_none());
        assert!(conns.get_mut(&h3).is_none());
        assert_eq!(
            conns.iter().map(|(h, _)| h).collect::<Vec<_>>(),
            [handles[1], handles[2]]
        );
        conns.clear();
        assert!(conns.is_empty() && conns.first_mut().is_none());
    }
}
