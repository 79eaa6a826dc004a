//! The endpoint: one UDP socket, the core [`proto::endpoint::Endpoint`](crate::proto::endpoint::Endpoint)
//! routing its datagrams, and one receive task.
//!
//! The receive task reads batches of datagrams (GRO-coalesced ones are split at their stride), asks the core
//! endpoint which connection each belongs to (under the endpoint lock), then hands each to its connection
//! (without the endpoint lock) and flushes what the connection has to send. When a batch advances several
//! handshakes (not yet confirmed, RFC 9001 §4.1.2), their datagrams go to the connections' driver tasks
//! instead, so that their TLS work runs on every worker thread, each connection answers as soon as its own
//! work is done, and a client's session tickets reach its store one connection at a time. New server
//! connections are queued for [`Endpoint::accept`]. The task ends when every [`Endpoint`] handle is dropped
//! and every connection has drained.

use std::collections::{HashMap, VecDeque};
use std::future::poll_fn;
use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Poll, Waker};

use bytes::{Bytes, BytesMut};
use tokio::sync::Notify;

use crate::proto::coding::VarInt;
use crate::proto::connection::{ClientConfig, ConnectError as CoreConnectError, EndpointEvent, ServerConfig};
use crate::proto::endpoint::{
    ConnectionHandle, DatagramEvent, Endpoint as CoreEndpoint, EndpointConfig, EndpointLimits,
};

use super::clock;
use super::connection::Connecting;
use super::shared::{self, ConnShared, Received};
use super::socket::{Socket, ecn_from_udp};

/// Why [`Endpoint::connect`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// [`Endpoint::connect`] without [`Endpoint::set_default_client_config`].
    #[error("no default client configuration")]
    NoDefaultClientConfig,
    /// The endpoint was closed.
    #[error("endpoint closed")]
    EndpointClosed,
    /// The core refused the connection (TLS configuration, server name, congestion controller...).
    #[error(transparent)]
    Core(#[from] CoreConnectError),
}

/// The endpoint's shared state.
#[derive(Debug)]
struct EndpointState {
    core: CoreEndpoint,
    /// Keyed by handles we number ourselves: the cheap [`shared::IdHasher`] suffices (looked up per datagram).
    conns: HashMap<ConnectionHandle, Arc<ConnShared>, std::hash::BuildHasherDefault<shared::IdHasher>>,
    incoming: VecDeque<Connecting>,
    accept_wakers: Vec<Waker>,
    idle_wakers: Vec<Waker>,
    /// Live [`Endpoint`] handles.
    refs: usize,
    /// [`Endpoint::close`] was called: no more connections are accepted or opened.
    closed: bool,
    default_client: Option<ClientConfig>,
}

/// What the endpoint's handles, its receive task and its connections share.
#[derive(Debug)]
pub(crate) struct EndpointShared {
    state: Mutex<EndpointState>,
    /// The UDP socket ([`Endpoint::rebind`] replaces it).
    socket: std::sync::RwLock<Arc<Socket>>,
    /// Wakes the receive task to check whether it should end (or pick up a new socket).
    notify: Notify,
    runtime: tokio::runtime::Handle,
}

impl shared::EndpointLink for EndpointShared {
    fn runtime(&self) -> &tokio::runtime::Handle {
        EndpointShared::runtime(self)
    }

    fn socket(&self) -> Arc<Socket> {
        EndpointShared::socket(self)
    }

    fn connection_events(&self, handle: ConnectionHandle, events: &mut dyn Iterator<Item = EndpointEvent>) {
        EndpointShared::connection_events(self, handle, events);
    }

    fn connection_drained(&self, handle: ConnectionHandle) {
        EndpointShared::connection_drained(self, handle);
    }
}

impl EndpointShared {
    fn lock(&self) -> MutexGuard<'_, EndpointState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The tokio runtime the endpoint runs on.
    pub(crate) fn runtime(&self) -> &tokio::runtime::Handle {
        &self.runtime
    }

    /// The current UDP socket.
    pub(crate) fn socket(&self) -> Arc<Socket> {
        self.socket.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Routing updates from a connection (new or retired CIDs, reset tokens) for the core endpoint.
    pub(crate) fn connection_events(
        &self,
        handle: ConnectionHandle,
        events: impl Iterator<Item = EndpointEvent>,
    ) {
        let mut st = self.lock();
        for ev in events {
            st.core.handle_event(handle, ev);
        }
    }

    /// A connection finished draining: forget it.
    pub(crate) fn connection_drained(&self, handle: ConnectionHandle) {
        let mut st = self.lock();
        st.core.handle_event(handle, EndpointEvent::Drained);
        st.conns.remove(&handle);
        if st.conns.is_empty() {
            for w in st.idle_wakers.drain(..) {
                w.wake();
            }
        }
        drop(st);
        self.notify.notify_one();
    }

    fn should_stop(&self) -> bool {
        let st = self.lock();
        st.refs == 0 && st.conns.is_empty()
    }
}

/// A QUIC endpoint on one UDP socket: opens client connections and, with a server configuration, accepts
/// them. Cheap to clone. Must be created inside a tokio runtime.
#[derive(Debug)]
pub struct Endpoint {
    shared: Arc<EndpointShared>,
}

/// 64-bit seed from the operating system's random source.
fn os_seed() -> io::Result<u64> {
    use ring::rand::SecureRandom;
    let mut b = [0u8; 8];
    ring::rand::SystemRandom::new()
        .fill(&mut b)
        .map_err(|_| io::Error::other("no OS randomness"))?;
    Ok(u64::from_le_bytes(b))
}

impl Endpoint {
    /// A client-only endpoint bound to `bind_addr` (e.g. `127.0.0.1:0`).
    pub fn client(bind_addr: SocketAddr) -> io::Result<Endpoint> {
        Self::new(bind_addr, None)
    }

    /// An endpoint that accepts connections with `config` (and can also open client connections).
    pub fn server(config: ServerConfig, bind_addr: SocketAddr) -> io::Result<Endpoint> {
        Self::new(bind_addr, Some(Arc::new(config)))
    }

    fn new(bind_addr: SocketAddr, server: Option<Arc<ServerConfig>>) -> io::Result<Endpoint> {
        let runtime = tokio::runtime::Handle::try_current().map_err(io::Error::other)?;
        let socket = {
            let _guard = runtime.enter();
            Arc::new(Socket::bind(bind_addr)?)
        };
        let config = EndpointConfig {
            seed: os_seed()?,
            ..EndpointConfig::default()
        };
        let shared = Arc::new(EndpointShared {
            state: Mutex::new(EndpointState {
                core: CoreEndpoint::new(config, server),
                conns: HashMap::default(),
                incoming: VecDeque::new(),
                accept_wakers: Vec::new(),
                idle_wakers: Vec::new(),
                refs: 1,
                closed: false,
                default_client: None,
            }),
            socket: std::sync::RwLock::new(socket),
            notify: Notify::new(),
            runtime: runtime.clone(),
        });
        runtime.spawn(receive(shared.clone()));
        Ok(Endpoint { shared })
    }

    /// The local address the socket is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.shared.socket().local_addr()
    }

    /// Moves the endpoint to a new UDP socket bound to `bind_addr` (e.g. after the network changed, or to
    /// test migration). Client connections migrate actively (RFC 9000 §9.2: a fresh connection ID and
    /// validation of the new path; congestion state reset unless only the port changed); where the server
    /// forbade migration or gave no spare connection ID, the server sees a NAT rebinding instead. Datagrams
    /// still in the old socket's buffers are lost (and recovered like any loss).
    pub fn rebind(&self, bind_addr: SocketAddr) -> io::Result<()> {
        let socket = {
            let _guard = self.shared.runtime.enter();
            Arc::new(Socket::bind(bind_addr)?)
        };
        let local = socket.local_addr();
        *self.shared.socket.write().unwrap_or_else(PoisonError::into_inner) = socket;
        // The receive task picks up the new socket.
        self.shared.notify.notify_one();
        let conns: Vec<_> = self.shared.lock().conns.values().cloned().collect();
        let now = clock::now();
        for c in conns {
            {
                let mut st = c.lock();
                if st.conn.side() == crate::proto::transport_params::Side::Client {
                    // A wildcard socket keeps the interface address the path used; only the port is new.
                    let ip = match st.conn.path_stats(crate::cc::PathId(0)).and_then(|s| s.local) {
                        Some(old) if local.ip().is_unspecified() => old.ip(),
                        _ => local.ip(),
                    };
                    if let Err(e) = st.conn.migrate(now, SocketAddr::new(ip, local.port())) {
                        tracing::debug!(error = %e, "rebind without active migration");
                    }
                }
            }
            c.flush();
        }
        Ok(())
    }

    /// Server: whether every client must first prove its address with a Retry round trip (RFC 9000 §8.1.2).
    pub fn set_require_retry(&self, require: bool) {
        self.shared.lock().core.set_require_retry(require);
    }

    /// Limits on connections and on server handshakes in progress (see [`EndpointLimits`]: beyond them new
    /// clients get a Retry or CONNECTION_REFUSED).
    pub fn set_limits(&self, limits: EndpointLimits) {
        self.shared.lock().core.set_limits(limits);
    }

    /// Sets the configuration [`Endpoint::connect`] uses.
    pub fn set_default_client_config(&self, config: ClientConfig) {
        self.shared.lock().default_client = Some(config);
    }

    /// Connects to `addr`, verifying the server certificate for `server_name`, with the default client
    /// configuration.
    pub fn connect(&self, addr: SocketAddr, server_name: &str) -> Result<Connecting, ConnectError> {
        let config = self
            .shared
            .lock()
            .default_client
            .clone()
            .ok_or(ConnectError::NoDefaultClientConfig)?;
        self.connect_with(&config, addr, server_name)
    }

    /// Connects to `addr` with an explicit client configuration.
    pub fn connect_with(
        &self,
        config: &ClientConfig,
        addr: SocketAddr,
        server_name: &str,
    ) -> Result<Connecting, ConnectError> {
        let prepared = {
            let mut st = self.shared.lock();
            if st.closed {
                return Err(ConnectError::EndpointClosed);
            }
            st.core.prepare_connect()
        };
        let local_cid = prepared.local_cid();
        // The TLS set-up (the key share's X25519 key generation, the Initial keys) runs without the endpoint
        // lock: the receive task routes datagrams, and other tasks connect, meanwhile.
        let conn = prepared.build(clock::now(), config, addr, server_name)?;
        let mut st = self.shared.lock();
        if st.closed {
            return Err(ConnectError::EndpointClosed);
        }
        let handle = st.core.register_client(local_cid);
        let shared = ConnShared::new(conn, addr, handle, self.shared.clone());
        st.conns.insert(handle, shared.clone());
        drop(st);
        let connecting = Connecting::new(shared.clone());
        self.shared.runtime.spawn(shared::drive(shared));
        Ok(connecting)
    }

    /// Waits for the next incoming connection; `None` once the endpoint is closed.
    pub async fn accept(&self) -> Option<Connecting> {
        poll_fn(|cx| {
            let mut st = self.shared.lock();
            if let Some(c) = st.incoming.pop_front() {
                return Poll::Ready(Some(c));
            }
            if st.closed {
                return Poll::Ready(None);
            }
            if !st.accept_wakers.iter().any(|w| w.will_wake(cx.waker())) {
                st.accept_wakers.push(cx.waker().clone());
            }
            Poll::Pending
        })
        .await
    }

    /// Closes every connection with `code` and `reason` and stops accepting new ones. Call
    /// [`Endpoint::wait_idle`] to let the peers learn of the close before the runtime ends.
    pub fn close(&self, code: VarInt, reason: &[u8]) {
        let reason = Bytes::copy_from_slice(reason);
        let conns: Vec<_> = {
            let mut st = self.shared.lock();
            st.closed = true;
            st.incoming.clear();
            for w in st.accept_wakers.drain(..) {
                w.wake();
            }
            st.conns.values().cloned().collect()
        };
        for c in conns {
            c.close(code, reason.clone());
        }
    }

    /// Waits until every connection has drained (closed and its draining period over).
    pub async fn wait_idle(&self) {
        poll_fn(|cx| {
            let mut st = self.shared.lock();
            if st.conns.is_empty() {
                return Poll::Ready(());
            }
            if !st.idle_wakers.iter().any(|w| w.will_wake(cx.waker())) {
                st.idle_wakers.push(cx.waker().clone());
            }
            Poll::Pending
        })
        .await
    }

    /// Connections that have not drained yet.
    pub fn open_connections(&self) -> usize {
        self.shared.lock().conns.len()
    }
}

impl Clone for Endpoint {
    fn clone(&self) -> Self {
        self.shared.lock().refs += 1;
        Endpoint {
            shared: self.shared.clone(),
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        let mut st = self.shared.lock();
        st.refs = st.refs.saturating_sub(1);
        if st.refs == 0 {
            // Nobody can accept any more.
            st.closed = true;
            st.incoming.clear();
        }
        drop(st);
        self.shared.notify.notify_one();
    }
}

/// Size of one receive buffer: a GRO batch of full-size datagrams.
fn recv_buf_size(gro_segments: usize) -> usize {
    (gro_segments * 1500).clamp(1500, 64 * 1024)
}

/// A received datagram routed to a connection, to be processed once the endpoint lock is released.
struct Routed {
    conn: Arc<ConnShared>,
    rx: Received,
}

/// Whether the routed datagrams of a batch concern more than one connection in its handshake.
fn several_handshakes(routed: &[Routed]) -> bool {
    let mut first: Option<&Arc<ConnShared>> = None;
    for r in routed.iter().filter(|r| r.conn.is_handshaking()) {
        match first {
            None => first = Some(&r.conn),
            Some(c) if !Arc::ptr_eq(c, &r.conn) => return true,
            Some(_) => {}
        }
    }
    false
}

/// The receive task of an endpoint.
async fn receive(shared: Arc<EndpointShared>) {
    let mut socket = shared.socket();
    let mut local = socket.local_addr();
    let batch = quinn_udp::BATCH_SIZE.clamp(1, 32);
    let mut bufs: Vec<Vec<u8>> = (0..batch)
        .map(|_| vec![0u8; recv_buf_size(socket.gro_segments())])
        .collect();
    let mut metas = vec![quinn_udp::RecvMeta::default(); batch];
    let mut touched: Vec<Arc<ConnShared>> = Vec::new();
    let mut routed: Vec<Routed> = Vec::new();
    let mut responses = Vec::new();
    loop {
        if shared.should_stop() {
            return;
        }
        let current = shared.socket();
        if !Arc::ptr_eq(&current, &socket) {
            // Endpoint::rebind: receive on the new socket from now on.
            socket = current;
            local = socket.local_addr();
        }
        let received = {
            let mut slices: Vec<IoSliceMut<'_>> = bufs.iter_mut().map(|b| IoSliceMut::new(b)).collect();
            tokio::select! {
                r = socket.recv(&mut slices, &mut metas) => Some(r),
                () = shared.notify.notified() => None,
            }
        };
        let n = match received {
            None => continue,
            Some(Ok(n)) => n,
            Some(Err(e)) => {
                // ICMP errors surface here on some platforms; they concern one peer, not the socket.
                tracing::debug!(error = %e, "UDP receive error");
                if matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionReset
                        | io::ErrorKind::ConnectionRefused
                        | io::ErrorKind::Interrupted
                ) {
                    continue;
                }
                tracing::warn!(error = %e, "UDP receive failed: endpoint stops receiving");
                return;
            }
        };
        let now = clock::now();
        {
            let mut st = shared.lock();
            for (meta, buf) in metas.iter().zip(bufs.iter_mut()).take(n) {
                let Some(data) = buf.get_mut(..meta.len) else {
                    continue;
                };
                // Multipath finds paths by the local address of each datagram: RecvMeta::dst_ip.
                let local_addr = Some(SocketAddr::new(meta.dst_ip.unwrap_or(local.ip()), local.port()));
                let ecn = ecn_from_udp(meta.ecn);
                // One copy per received datagram (each segment of a GRO batch into its own buffer): its
                // packets are decrypted in place and the stream data they carry is handed on as slices of it,
                // without further copies. A buffered slice keeps only its own datagram alive, never a whole
                // batch, and `Streams::on_stream_frame` copies slices smaller than a quarter of their packet:
                // buffered stream data pins at most 4 × its size (RFC 9000 §21.6).
                let stride = meta.stride.max(1);
                for segment in data.chunks(stride) {
                    let mut segment = BytesMut::from(segment);
                    match st
                        .core
                        .handle_deferred(now, local_addr, meta.addr, ecn, &mut segment)
                    {
                        Some(DatagramEvent::Known(h)) => {
                            if let Some(c) = st.conns.get(&h) {
                                routed.push(Routed {
                                    conn: c.clone(),
                                    rx: Received {
                                        local: local_addr,
                                        remote: meta.addr,
                                        ecn,
                                        data: segment,
                                    },
                                });
                            }
                        }
                        Some(DatagramEvent::NewConnection(h, conn)) => {
                            let c = ConnShared::new(*conn, meta.addr, h, shared.clone());
                            st.conns.insert(h, c.clone());
                            let connecting = Connecting::new(c.clone());
                            if st.closed {
                                // Refuse: the close is sent by the driver; dropping `connecting` closes it.
                                drop(connecting);
                            } else {
                                st.incoming.push_back(connecting);
                                for w in st.accept_wakers.drain(..) {
                                    w.wake();
                                }
                            }
                            shared.runtime.spawn(shared::drive(c.clone()));
                            // Its first datagram (the ClientHello) is processed with the others, after the
                            // endpoint lock is released.
                            routed.push(Routed {
                                conn: c,
                                rx: Received {
                                    local: local_addr,
                                    remote: meta.addr,
                                    ecn,
                                    data: segment,
                                },
                            });
                        }
                        Some(DatagramEvent::Response(t, bytes)) => responses.push((t, bytes)),
                        None => {}
                    }
                }
            }
        }
        // The connections process their datagrams after the endpoint lock is released: decryption and TLS
        // (a handshake's key exchange and signature, a new server connection's ClientHello included) no longer
        // hold up `connect`, `accept` and the routing updates other connections report. Datagrams of one connection keep their order, and consecutive ones
        // are processed under one lock of that connection.
        //
        // Handshakes are the exception when the batch advances several: their datagrams carry the expensive
        // part (a server's key exchange and signature, a client's certificate verification), which this one
        // task would otherwise do for all of them in turn, on one thread, before sending any answer. Those
        // datagrams go to their connections' drivers instead, which tokio runs on every worker thread, and
        // each answers as soon as its own work is done. A lone handshake stays here (no task hop). A client's
        // handshake lasts until confirmed, so that the server's session tickets, which come with its
        // HANDSHAKE_DONE, are stored by each connection's driver rather than a batch's worth at once here
        // (`ConnShared::handshaking` says why that matters).
        let defer_handshakes = several_handshakes(&routed);
        let mut routed = routed.drain(..).peekable();
        while let Some(first) = routed.next() {
            let conn = first.conn;
            let defer = defer_handshakes && conn.is_handshaking();
            let mut deferred = false;
            let mut cs = None;
            for r in std::iter::once(first.rx).chain(std::iter::from_fn(|| {
                routed.next_if(|r| Arc::ptr_eq(&r.conn, &conn)).map(|r| r.rx)
            })) {
                match conn.defer(defer, r) {
                    None => deferred = true,
                    Some(r) => cs
                        .get_or_insert_with(|| conn.lock())
                        .handle_datagram(now, r.local, r.remote, r.ecn, r.data),
                }
            }
            let processed = cs.is_some();
            drop(cs);
            if deferred {
                conn.wake_driver();
            }
            if processed && !touched.iter().any(|t| Arc::ptr_eq(t, &conn)) {
                touched.push(conn);
            }
        }
        drop(routed);
        // Answer at once from this task (ACKs, and new data that the ACKs let out) rather than waking each
        // connection's driver: one task hop and one thread wake-up less per batch.
        for c in touched.drain(..) {
            c.flush();
        }
        for (t, bytes) in responses.drain(..) {
            let transmit = quinn_udp::Transmit {
                destination: t.remote,
                ecn: None,
                contents: bytes.get(..t.size).unwrap_or(&bytes),
                segment_size: None,
                src_ip: None,
            };
            if let Err(e) = socket.send(&transmit).await {
                tracing::debug!(error = %e, "stateless response not sent");
            }
        }
    }
}
