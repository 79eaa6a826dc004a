//! Connection IDs, per path ID: the ones we issue ([`LocalCids`]), the ones the peer issued to us
//! ([`RemoteCids`]), path-ID flow control ([`PathIds`]) and stateless reset tokens ([`ResetKey`]).
//!
//! Multipath (draft-ietf-quic-multipath-21 §2–§3) keys everything here by [`PathId`]: every connection ID
//! belongs to exactly one path ID, each path ID has its own sequence-number space and Retire Prior To, and
//! active_connection_id_limit applies per path. Without multipath only path 0 exists and the RFC 9000 frames
//! are used. A received packet's path is the path ID of its Destination Connection ID ([`LocalCids::lookup`]).
//!
//! The connection wires the parts together: frames naming a path go through [`PathIds::check_frame_path`]
//! (path above our maximum → PROTOCOL_VIOLATION, abandoned path → ignored), then to the store they concern:
//! - (PATH_)NEW_CONNECTION_ID → [`RemoteCids::handle_new_cid`];
//! - (PATH_)RETIRE_CONNECTION_ID → [`LocalCids::handle_retire`] (issues replacements);
//! - MAX_PATH_ID / PATHS_BLOCKED → [`PathIds::handle_max_path_id`] / [`PathIds::handle_paths_blocked`], then
//!   [`LocalCids::replenish`] for path IDs that became usable;
//! - PATH_CIDS_BLOCKED → [`PathIds::check_path_cids_blocked`] with [`LocalCids::next_sequence`].
//!
//! Outgoing frames are pulled: [`LocalCids::next_pending`], [`RemoteCids::next_retire`],
//! [`PathIds::poll_max_path_id`], [`PathIds::poll_paths_blocked`]; each has an `on_lost` that re-queues it
//! only while it is still current, so retransmission is idempotent.

pub mod local;
pub mod path_ids;
pub mod remote;
pub mod reset;
pub mod routes;

#[cfg(test)]
mod tests;

use crate::cc::PathId;
use crate::proto::packet::connection_id::ConnectionId;

pub use local::{CidConfigError, DEFAULT_CIDS_PER_PATH, DEFAULT_UNUSED_PATH_CIDS, IssuedCid, LocalCids};
pub use path_ids::{OpenPathError, PathDisposition, PathIds};
pub use remote::RemoteCids;
pub use reset::ResetKey;
pub use routes::RouteTable;

/// Where one of our connection IDs belongs: the path ID and the sequence number within that path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CidInfo {
    /// The path the connection ID belongs to.
    pub path_id: PathId,
    /// Its sequence number in that path's space.
    pub sequence: u64,
}

/// A change to the endpoint's table that routes incoming datagrams to connections by connection ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoutingUpdate {
    /// A connection ID was issued: route it to this connection.
    Added {
        /// The connection ID.
        cid: ConnectionId,
        /// Its path and sequence number.
        info: CidInfo,
    },
    /// A connection ID was retired or forgotten: stop routing it.
    Removed {
        /// The connection ID.
        cid: ConnectionId,
    },
}
