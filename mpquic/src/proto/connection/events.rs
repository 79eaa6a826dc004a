//! What the connection tells the application ([`Event`]) and the endpoint ([`EndpointEvent`]), and why a
//! connection ended ([`ConnectionError`]).

use bytes::Bytes;

use crate::proto::coding::VarInt;
use crate::proto::error::{TransportError, TransportErrorCode};
use crate::proto::streams::StreamEvent;

/// Why a connection ended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectionError {
    /// We detected a protocol error and closed the connection with it.
    #[error("closed by us: {0}")]
    TransportError(TransportError),
    /// The peer closed the connection with a transport-level CONNECTION_CLOSE (type 0x1c).
    #[error(
        "closed by the peer: {code} (frame type {frame_type:#x}): {}",
        String::from_utf8_lossy(reason)
    )]
    ConnectionClosed {
        /// The peer's error code.
        code: TransportErrorCode,
        /// The frame type that triggered the error (0: unknown).
        frame_type: u64,
        /// The peer's reason phrase.
        reason: Bytes,
    },
    /// The peer closed the connection with an application CONNECTION_CLOSE (type 0x1d).
    #[error(
        "closed by the peer's application: code {code}: {}",
        String::from_utf8_lossy(reason)
    )]
    ApplicationClosed {
        /// The application error code.
        code: VarInt,
        /// The reason phrase.
        reason: Bytes,
    },
    /// The idle timeout expired (RFC 9000 §10.1).
    #[error("idle timeout")]
    TimedOut,
    /// The application closed the connection locally.
    #[error("closed locally")]
    LocallyClosed,
    /// The peer sent a Stateless Reset (RFC 9000 §10.3).
    #[error("stateless reset by the peer")]
    Reset,
    /// The server supports none of our QUIC versions (it answered with Version Negotiation, RFC 9000 §6.2).
    #[error("no common QUIC version (server offers {offered:x?})")]
    VersionMismatch {
        /// The versions the server listed.
        offered: Vec<u32>,
    },
    /// The TLS handshake failed.
    #[error("handshake failed: {0}")]
    HandshakeFailed(TransportError),
}

/// Application-facing events, from [`Connection::poll_event`](super::Connection::poll_event).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The TLS handshake completed (RFC 9001 §4.1.1); 1-RTT data may flow.
    HandshakeCompleted,
    /// The handshake is confirmed (RFC 9001 §4.1.2).
    HandshakeConfirmed,
    /// A stream event.
    Stream(StreamEvent),
    /// A DATAGRAM frame arrived; read it with `recv_datagram`.
    DatagramReceived,
    /// A key update completed (initiated by either side).
    KeyUpdated,
    /// The peer opened a path (server side; draft-ietf-quic-multipath-21 §3). It is validated before data goes
    /// on it.
    PathOpened {
        /// The path.
        path: crate::cc::PathId,
        /// The peer's address on it.
        remote: std::net::SocketAddr,
    },
    /// Path validation succeeded (RFC 9000 §8.2): the path carries data from now on.
    PathValidated {
        /// The path.
        path: crate::cc::PathId,
    },
    /// The peer changed a path's status with PATH_STATUS_AVAILABLE / PATH_STATUS_BACKUP.
    PathStatusChanged {
        /// The path.
        path: crate::cc::PathId,
        /// The new status.
        status: crate::sched::PathStatus,
    },
    /// An abandoned path's state was deleted (3 PTO after abandonment); its ID will not be seen again.
    PathClosed {
        /// The path.
        path: crate::cc::PathId,
    },
    /// A path was abandoned (PATH_ABANDON sent or received, draft-ietf-quic-multipath-21 §3); its unacknowledged
    /// data is sent again on the other paths.
    PathAbandoned {
        /// The path.
        path: crate::cc::PathId,
    },
    /// A path now sends to another peer address: the client moved to the server's preferred address
    /// (RFC 9000 §9.6).
    PeerAddressChanged {
        /// The path.
        path: crate::cc::PathId,
        /// The new peer address.
        remote: std::net::SocketAddr,
    },
    /// The connection was lost or closed; it now drains.
    ConnectionLost(ConnectionError),
}

/// Connection → endpoint notifications, from [`Connection::poll_endpoint_event`](super::Connection::poll_endpoint_event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointEvent {
    /// The handshake completed: a server connection no longer counts against the endpoint's
    /// `max_handshakes`.
    HandshakeCompleted,
    /// The connection finished draining: its connection IDs may be forgotten.
    Drained,
    /// The connection issued a connection ID: route datagrams addressed to it to this connection.
    NewCid(crate::proto::packet::ConnectionId),
    /// A connection ID was retired: stop routing it.
    RetiredCid(crate::proto::packet::ConnectionId),
    /// The connection now accepts a Stateless Reset from `remote` ending in `token` (the token of a peer
    /// connection ID it uses): route such datagrams to it even though their connection ID is unknown.
    ResetToken {
        /// The peer's address.
        remote: std::net::SocketAddr,
        /// The token.
        token: crate::proto::packet::ResetToken,
    },
}
