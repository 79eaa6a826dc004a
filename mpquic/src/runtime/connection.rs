//! The application's handles on a connection: [`Connecting`] (a handshake in progress, 0-RTT) and
//! [`Connection`] (streams, datagrams, close, statistics, and the multipath methods: opening, closing and
//! marking paths, path events). They share the connection's state with its driver and the endpoint
//! (`shared.rs`).

use std::future::{Future, poll_fn};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;

use crate::cc::PathId;
use crate::proto::cid::OpenPathError;
use crate::proto::coding::VarInt;
use crate::proto::connection::{
    ClosePathError, ConnectionError, ConnectionStats, HandshakeKind, PathStats, SendDatagramError,
};
use crate::proto::frame::Dir;
use crate::proto::streams::StreamId;
use crate::sched::PathStatus;

use super::clock;
use super::paths::PathEvent;
use super::shared::{ConnRef, ConnShared, register};
use super::socket::TransmitStats;
use super::streams::{RecvStream, SendStream};

/// A connection whose handshake is in progress; resolves to a [`Connection`] once it completes.
#[derive(Debug)]
#[must_use = "a connection attempt does nothing unless awaited"]
pub struct Connecting {
    conn: Option<ConnRef>,
}

impl Connecting {
    pub(crate) fn new(shared: Arc<ConnShared>) -> Connecting {
        Connecting {
            conn: Some(ConnRef::new(shared)),
        }
    }

    /// The peer's address.
    pub fn remote_address(&self) -> Option<SocketAddr> {
        self.conn.as_ref().map(|c| c.remote)
    }

    /// Uses the connection before its handshake completes (quinn's `Connecting::into_0rtt`).
    ///
    /// Client: succeeds when early data is offered (the rustls `ClientConfig` has `enable_early_data` and its
    /// session store holds a ticket from this server that allows 0-RTT, see
    /// [`TlsOptions::early_data`](crate::proto::crypto::TlsOptions::early_data)); streams opened and data
    /// written now leave in 0-RTT packets, within the limits remembered from the earlier connection. If the
    /// server rejects 0-RTT, the data is sent again in 1-RTT packets after the handshake (same streams, same
    /// bytes) and [`ZeroRttAccepted`] resolves to `false`: the application decides whether what it sent under
    /// 0-RTT assumptions still holds (RFC 9001 §4.6.2). 0-RTT data can be replayed by an attacker (RFC 9001
    /// §9.2): send only idempotent requests. Without early data the `Connecting` is handed back.
    ///
    /// Server: always succeeds; streams the client opened in 0-RTT can be accepted at once. What the server
    /// writes is sent once the handshake completes. [`ZeroRttAccepted`] says whether 0-RTT was accepted.
    pub fn into_0rtt(mut self) -> Result<(Connection, ZeroRttAccepted), Connecting> {
        let Some(conn) = self.conn.as_ref() else {
            return Err(self);
        };
        let usable = {
            let st = conn.lock();
            st.error.is_none()
                && (st.handshake_done
                    || st.conn.is_zero_rtt_available()
                    || st.conn.side() == crate::proto::transport_params::Side::Server)
        };
        if !usable {
            return Err(self);
        }
        match self.conn.take() {
            Some(conn) => {
                let accepted = ZeroRttAccepted {
                    shared: conn.0.clone(),
                };
                Ok((Connection { inner: conn }, accepted))
            }
            None => Err(self),
        }
    }
}

/// Resolves once the handshake of a connection used through [`Connecting::into_0rtt`] completes: `true` if
/// the server accepted 0-RTT, `false` if it rejected it (or the connection failed first).
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct ZeroRttAccepted {
    /// Not an application reference: waiting on this does not keep the connection open.
    shared: Arc<ConnShared>,
}

impl Future for ZeroRttAccepted {
    type Output = bool;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        let mut st = self.shared.lock();
        if st.handshake_done {
            let kind = st.conn.handshake_kind();
            return Poll::Ready(kind == Some(HandshakeKind::ZeroRttAccepted));
        }
        if st.error.is_some() {
            return Poll::Ready(false);
        }
        register(&mut st.connecting, cx.waker());
        Poll::Pending
    }
}

impl Future for Connecting {
    type Output = Result<Connection, ConnectionError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(conn) = self.conn.as_ref() else {
            return Poll::Ready(Err(ConnectionError::LocallyClosed));
        };
        {
            let mut st = conn.lock();
            if let Some(e) = &st.error {
                return Poll::Ready(Err(e.clone()));
            }
            if !st.handshake_done {
                register(&mut st.connecting, cx.waker());
                return Poll::Pending;
            }
        }
        match self.conn.take() {
            Some(conn) => Poll::Ready(Ok(Connection { inner: conn })),
            None => Poll::Ready(Err(ConnectionError::LocallyClosed)),
        }
    }
}

/// An established QUIC connection. Cheap to clone; the connection closes (code 0) when the last handle and
/// stream are dropped.
#[derive(Debug, Clone)]
pub struct Connection {
    pub(super) inner: ConnRef,
}

impl Connection {
    /// Opens a bidirectional stream, waiting for the peer's stream limit if needed. The peer learns of the
    /// stream when data is first sent on it.
    pub async fn open_bi(&self) -> Result<(SendStream, RecvStream), ConnectionError> {
        let id = self.open(Dir::Bi).await?;
        Ok((
            SendStream::new(self.inner.clone(), id),
            RecvStream::new(self.inner.clone(), id),
        ))
    }

    /// Opens a unidirectional stream, waiting for the peer's stream limit if needed.
    pub async fn open_uni(&self) -> Result<SendStream, ConnectionError> {
        let id = self.open(Dir::Uni).await?;
        Ok(SendStream::new(self.inner.clone(), id))
    }

    async fn open(&self, dir: Dir) -> Result<StreamId, ConnectionError> {
        poll_fn(|cx| {
            let mut st = self.inner.lock();
            if let Some(e) = &st.error {
                return Poll::Ready(Err(e.clone()));
            }
            let id = match dir {
                Dir::Bi => st.conn.open_bi(),
                Dir::Uni => st.conn.open_uni(),
            };
            match id {
                Some(id) => Poll::Ready(Ok(id)),
                None => {
                    let w = match dir {
                        Dir::Bi => &mut st.open_bi,
                        Dir::Uni => &mut st.open_uni,
                    };
                    register(w, cx.waker());
                    Poll::Pending
                }
            }
        })
        .await
    }

    /// Waits for the peer to open a bidirectional stream.
    pub async fn accept_bi(&self) -> Result<(SendStream, RecvStream), ConnectionError> {
        let id = self.accept(Dir::Bi).await?;
        Ok((
            SendStream::new(self.inner.clone(), id),
            RecvStream::new(self.inner.clone(), id),
        ))
    }

    /// Waits for the peer to open a unidirectional stream.
    pub async fn accept_uni(&self) -> Result<RecvStream, ConnectionError> {
        let id = self.accept(Dir::Uni).await?;
        Ok(RecvStream::new(self.inner.clone(), id))
    }

    async fn accept(&self, dir: Dir) -> Result<StreamId, ConnectionError> {
        let id = poll_fn(|cx| {
            let mut st = self.inner.lock();
            let id = match dir {
                Dir::Bi => st.conn.accept_bi(),
                Dir::Uni => st.conn.accept_uni(),
            };
            if let Some(id) = id {
                return Poll::Ready(Ok(id));
            }
            if let Some(e) = &st.error {
                return Poll::Ready(Err(e.clone()));
            }
            let w = match dir {
                Dir::Bi => &mut st.accept_bi,
                Dir::Uni => &mut st.accept_uni,
            };
            register(w, cx.waker());
            Poll::Pending
        })
        .await?;
        // Accepting may let the core raise the peer's stream limit: sent from this task, as a write is.
        self.inner.flush();
        Ok(id)
    }

    /// Sends an unreliable datagram (RFC 9221).
    pub fn send_datagram(&self, data: Bytes) -> Result<(), SendDatagramError> {
        self.inner.lock().conn.send_datagram(data)?;
        self.inner.wake_driver();
        Ok(())
    }

    /// The largest datagram [`Connection::send_datagram`] accepts now (`None`: the peer takes no datagrams).
    pub fn max_datagram_size(&self) -> Option<usize> {
        self.inner.lock().conn.max_datagram_size()
    }

    /// Waits for the next datagram from the peer.
    pub async fn read_datagram(&self) -> Result<Bytes, ConnectionError> {
        poll_fn(|cx| {
            let mut st = self.inner.lock();
            if let Some(d) = st.conn.recv_datagram() {
                return Poll::Ready(Ok(d));
            }
            if let Some(e) = &st.error {
                return Poll::Ready(Err(e.clone()));
            }
            register(&mut st.datagrams, cx.waker());
            Poll::Pending
        })
        .await
    }

    /// Closes the connection immediately with an application error code and reason (RFC 9000 §10.2):
    /// pending stream data is abandoned, the peer sees the code and reason.
    pub fn close(&self, code: VarInt, reason: &[u8]) {
        self.inner
            .lock()
            .conn
            .close(clock::now(), code, Bytes::copy_from_slice(reason));
        // The CONNECTION_CLOSE leaves from this task (the flush wakes the driver for the closing period's
        // timer if it must), as a stream write does.
        self.inner.flush();
    }

    /// Waits until the connection ends and says why.
    pub async fn closed(&self) -> ConnectionError {
        poll_fn(|cx| {
            let mut st = self.inner.lock();
            if let Some(e) = &st.error {
                return Poll::Ready(e.clone());
            }
            register(&mut st.closed, cx.waker());
            Poll::Pending
        })
        .await
    }

    /// Why the connection ended, if it did.
    pub fn close_reason(&self) -> Option<ConnectionError> {
        self.inner.lock().error.clone()
    }

    /// How the handshake went (full, resumed, 0-RTT accepted or rejected); `None` while it is in progress
    /// (a connection from [`Connecting::into_0rtt`]).
    pub fn handshake_kind(&self) -> Option<HandshakeKind> {
        self.inner.lock().conn.handshake_kind()
    }

    /// Client: whether the server made this connection prove its address with a Retry.
    pub fn retried(&self) -> bool {
        self.inner.lock().conn.retried()
    }

    /// Starts a key update now (RFC 9001 §6): `false` if one cannot start yet (1-RTT keys not confirmed, or the
    /// previous update not yet acknowledged). The connection also updates keys on its own
    /// (`TransportConfig::key_update_interval`, AEAD limits).
    pub fn force_key_update(&self) -> bool {
        let started = self.inner.lock().conn.force_key_update();
        self.inner.flush();
        started
    }

    /// The negotiated cipher suite, once the handshake has chosen one.
    pub fn cipher_suite(&self) -> Option<crate::proto::crypto::CipherSuite> {
        self.inner.lock().conn.cipher_suite()
    }

    /// Counters.
    pub fn stats(&self) -> ConnectionStats {
        self.inner.lock().conn.stats()
    }

    /// Counters of the datagrams this connection handed to the socket: system calls, datagrams per GSO
    /// batch, flush turns.
    pub fn transmit_stats(&self) -> TransmitStats {
        self.inner.transmit_stats()
    }

    /// The smoothed RTT of the first path.
    pub fn rtt(&self) -> Option<Duration> {
        self.inner.lock().conn.rtt(PathId(0))
    }

    /// The peer's current address on the first path (it changes when the peer migrates or rebinds, or when
    /// we move to the server's preferred address).
    pub fn remote_address(&self) -> SocketAddr {
        self.inner
            .lock()
            .conn
            .path_stats(PathId(0))
            .map_or(self.inner.remote, |s| s.remote)
    }

    /// Statistics of one path (`None` for an unknown path): window, bytes in flight, RTTs, traffic counters,
    /// validation state and the congestion controller's variables.
    pub fn path_stats(&self, path: PathId) -> Option<crate::proto::connection::PathStats> {
        self.inner.lock().conn.path_stats(path)
    }
}

// ----- multipath (draft-ietf-quic-multipath-21): opening, closing and marking paths, path events. How paths
// map onto the endpoint's one socket: `paths.rs`.

impl Connection {
    /// Whether multipath was negotiated (both sides set `TransportConfig::initial_max_path_id`).
    pub fn multipath(&self) -> bool {
        self.inner.lock().conn.multipath()
    }

    /// Opens a path from our `local` address (`None`: the address the OS picks; port 0: the endpoint's port,
    /// the only one it can send from) to the server's `remote` address (client only, once the handshake is
    /// confirmed). The path is validated with PATH_CHALLENGE
    /// before data goes on it; watch [`Connection::path_event`] for [`PathEvent::Validated`]. Fails with
    /// [`OpenPathError::NoConnectionIds`] until the peer's connection IDs for the next path ID arrived.
    pub fn open_path(
        &self,
        local: Option<SocketAddr>,
        remote: SocketAddr,
        status: PathStatus,
    ) -> Result<PathId, OpenPathError> {
        let local = local.map(|a| match a.port() {
            0 => SocketAddr::new(a.ip(), self.inner.socket_port()),
            _ => a,
        });
        let id = self
            .inner
            .lock()
            .conn
            .open_path(clock::now(), local, remote, status)?;
        self.inner.flush();
        Ok(id)
    }

    /// [`Connection::open_path`], waiting up to `timeout` for what a fresh connection lacks: the handshake's
    /// confirmation (HANDSHAKE_DONE), the server's connection IDs for the next path ID, or a larger maximum path
    /// ID (MAX_PATH_ID). Fails at once if multipath was not negotiated or the connection is closed, and with
    /// the last transient error after `timeout`.
    pub async fn open_path_when_ready(
        &self,
        local: Option<SocketAddr>,
        remote: SocketAddr,
        status: PathStatus,
        timeout: std::time::Duration,
    ) -> Result<PathId, OpenPathError> {
        let deadline = clock::now() + timeout;
        loop {
            let err = match self.open_path(local, remote, status) {
                Ok(id) => return Ok(id),
                Err(e) => e,
            };
            let transient = match err {
                OpenPathError::NotNegotiated => self.multipath() && self.close_reason().is_none(),
                OpenPathError::NoConnectionIds(_)
                | OpenPathError::BlockedByPeer(_)
                | OpenPathError::ValidationsInProgress(_) => self.close_reason().is_none(),
                OpenPathError::NotClient | OpenPathError::BlockedLocally(_) => false,
            };
            if !transient || clock::now() >= deadline {
                return Err(err);
            }
            // These arrive within a round trip or two of the handshake; a short poll keeps this simple.
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
    }

    /// Abandons a path with PATH_ABANDON and `error_code`; its unacknowledged data is sent again on the other
    /// paths. The last path cannot be abandoned (close the connection instead).
    pub fn close_path(&self, path: PathId, error_code: VarInt) -> Result<(), ClosePathError> {
        self.inner
            .lock()
            .conn
            .close_path(clock::now(), path, error_code)?;
        self.inner.flush();
        Ok(())
    }

    /// Marks a path available or backup, for our scheduler and (PATH_STATUS) for the peer's.
    pub fn set_path_status(&self, path: PathId, status: PathStatus) -> Result<(), ClosePathError> {
        {
            let mut st = self.inner.lock();
            st.conn.set_path_status(path, status)?;
            st.push_path_event(PathEvent::StatusChanged {
                path,
                status,
                local: true,
            });
        }
        self.inner.flush();
        Ok(())
    }

    /// Rotates the connection IDs of `path` (RFC 9000 §5.1.2, draft-ietf-quic-multipath-21 §7.2): we switch to
    /// the next connection ID the peer gave us for the path (retiring the old one with
    /// (PATH_)RETIRE_CONNECTION_ID) and issue fresh ones of ours, asking the peer to retire the older ones.
    /// Returns whether our connection ID towards the peer changed (`false`: no spare one from the peer yet).
    pub fn rotate_path_cids(&self, path: PathId) -> bool {
        let rotated = {
            let mut st = self.inner.lock();
            let remote = st.conn.rotate_remote_cid(path);
            st.conn.rotate_local_cids(path);
            remote
        };
        self.inner.flush();
        rotated
    }

    /// The connection's paths (abandoned ones included until their state is deleted), in path-ID order.
    pub fn paths(&self) -> Vec<PathId> {
        self.inner.lock().conn.paths()
    }

    /// Statistics of every path, in path-ID order.
    pub fn all_path_stats(&self) -> Vec<PathStats> {
        let st = self.inner.lock();
        st.conn
            .paths()
            .into_iter()
            .filter_map(|p| st.conn.path_stats(p))
            .collect()
    }

    /// Waits for the next path event. Events are kept (up to 256, oldest dropped first) until taken.
    pub async fn path_event(&self) -> Result<PathEvent, ConnectionError> {
        poll_fn(|cx| {
            let mut st = self.inner.lock();
            if let Some(ev) = st.path_events.pop_front() {
                return Poll::Ready(Ok(ev));
            }
            if let Some(e) = &st.error {
                return Poll::Ready(Err(e.clone()));
            }
            if !st.path_event_wakers.iter().any(|w| w.will_wake(cx.waker())) {
                st.path_event_wakers.push(cx.waker().clone());
            }
            Poll::Pending
        })
        .await
    }
}
