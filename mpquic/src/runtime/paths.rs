//! Path events of a runtime [`Connection`](super::Connection) (draft-ietf-quic-multipath-21): what the
//! connection reports about its paths, turned from the core's events. The multipath methods themselves
//! (opening, closing and marking paths, their statistics, waiting for events) are on
//! [`Connection`](super::Connection) in `connection.rs`; this module does not depend on it.
//!
//! One UDP socket serves every path. A path is a (local address, remote address) pair and a path ID: the
//! endpoint learns the local address of each datagram from quinn-udp's packet information (`IP_PKTINFO` /
//! `IPV6_RECVPKTINFO`) and sends from the path's local address with the same mechanism. So an endpoint bound
//! to the wildcard address (`0.0.0.0:port` or `[::]:port`) opens paths from any of the host's interface
//! addresses on one port, without a socket per interface; paths that need distinct local ports need
//! endpoints of their own. This is the choice quinn-udp makes natural, and it keeps one receive task per
//! endpoint.

use std::net::SocketAddr;

use crate::cc::PathId;
use crate::proto::connection::Event;
use crate::sched::PathStatus;

/// Path events kept for [`Connection::path_event`](super::Connection::path_event) before the oldest is dropped.
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
    /// A path's status changed, by our
    /// [`Connection::set_path_status`](crate::runtime::Connection::set_path_status) (`local`) or the peer's
    /// PATH_STATUS frame.
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
