//! The multipath surface of a runtime [`Connection`] (draft-ietf-quic-multipath-21): opening, closing and
//! marking paths, their statistics, and a stream of path events.
//!
//! One UDP socket serves every path. A path is a (local address, remote address) pair and a path ID: the
//! endpoint learns the local address of each datagram from quinn-udp's packet information (`IP_PKTINFO` /
//! `IPV6_RECVPKTINFO`) and sends from the path's local address with the same mechanism. So an endpoint bound
//! to the wildcard address (`0.0.0.0:port` or `[::]:port`) opens paths from any of the host's interface
//! addresses on one port, without a socket per interface; paths that need distinct local ports need
//! endpoints of their own. This is the choice quinn-udp makes natural, and it keeps one receive task per
//! endpoint.

use std::future::poll_fn;
use std::net::SocketAddr;
use std::task::Poll;

use crate::cc::PathId;
use crate::proto::cid::OpenPathError;
use crate::proto::coding::VarInt;
use crate::proto::connection::{ClosePathError, ConnectionError, Event, PathStats};
use crate::sched::PathStatus;

use super::clock;
use super::connection::Connection;

/// Path events kept for [`Connection::path_event`] before the oldest is dropped.
pub(super) const MAX_PATH_EVENTS: usize = 256;

/// Something that happened to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathEvent {
    /// The peer opened a path (server side); it is validated before data goes on it.
    Opened {
        /// The path.
        path: PathId,
        /// The peer's address on it.
        remote: SocketAddr,
    },
    /// Path validation succeeded: the path carries data.
    Validated {
        /// The path.
        path: PathId,
    },
    /// A path's status changed, by our [`Connection::set_path_status`] (`local`) or the peer's PATH_STATUS
    /// frame.
    StatusChanged {
        /// The path.
        path: PathId,
        /// The new status.
        status: PathStatus,
        /// Whether we changed it.
        local: bool,
    },
    /// The path was abandoned (PATH_ABANDON sent or received); its unacknowledged data goes on other paths.
    Abandoned {
        /// The path.
        path: PathId,
    },
    /// The abandoned path's state was deleted; its ID will not be seen again.
    Closed {
        /// The path.
        path: PathId,
    },
    /// The path now sends to another peer address (the server's preferred address).
    PeerAddressChanged {
        /// The path.
        path: PathId,
        /// The new peer address.
        remote: SocketAddr,
    },
}

impl PathEvent {
    /// The path event a core event is, if any.
    pub(super) fn from_core(ev: &Event) -> Option<PathEvent> {
        Some(match *ev {
            Event::PathOpened { path, remote } => PathEvent::Opened { path, remote },
            Event::PathValidated { path } => PathEvent::Validated { path },
            Event::PathStatusChanged { path, status } => PathEvent::StatusChanged {
                path,
                status,
                local: false,
            },
            Event::PathAbandoned { path } => PathEvent::Abandoned { path },
            Event::PathClosed { path } => PathEvent::Closed { path },
            Event::PeerAddressChanged { path, remote } => PathEvent::PeerAddressChanged { path, remote },
            _ => return None,
        })
    }

    /// The path concerned.
    pub fn path(&self) -> PathId {
        match *self {
            PathEvent::Opened { path, .. }
            | PathEvent::Validated { path }
            | PathEvent::StatusChanged { path, .. }
            | PathEvent::Abandoned { path }
            | PathEvent::Closed { path }
            | PathEvent::PeerAddressChanged { path, .. } => path,
        }
    }
}

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
