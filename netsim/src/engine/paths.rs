//! The paths of a flow as the engine tracks them: which connection path carries each scenario path, the
//! simulator's policy for paths that stop working, and how delivered bytes and losses are attributed to
//! paths.
//!
//! # Scenario paths and connection paths
//!
//! Scenario path `k` of a flow is a pair of interfaces (client's, server's) with a route each way; the
//! client has one address per path (its interface's IP and the flow's client port) and the server one per
//! path. Path 0 is the connection's first path (path ID 0). For a multipath flow the client opens path
//! `k ≥ 1` with `Connection::open_path(local = client address k, remote = server address k)` at the path's
//! `start`, retrying on every later step while the core refuses (handshake not yet confirmed, connection IDs
//! for the next path ID not yet received, path-ID limit). Each datagram goes over the scenario path whose
//! pair of addresses it carries ([`super::flow::Outgoing::path`]); the server learns a new path from the
//! connection ID of its first datagram.
//!
//! # Dead paths: the simulator's policy
//!
//! The core reinjects the in-flight data of a path with 2 consecutive PTOs onto the working paths and stops
//! scheduling on it, which is enough for failover (the multipath contract tests measure the same recovery
//! with this policy on and off); but it keeps probing the path with backed-off PTOs, so a path whose link
//! returns is used again only when a probe gets through. The engine therefore also acts as an application
//! would: the client abandons a path (`Connection::close_path`, error APPLICATION_ABANDON_PATH) once it has
//! gone [`PathPolicy::abandon_ptos`] (`n`) consecutive PTOs without progress, that is `PTO · (2^n − 1)`
//! (3 PTOs: 7 × PTO) with the exponential backoff of RFC 9002 §6.2.1 ([`give_up_after`]), and re-opens it
//! when its links are up again, where
//! - *progress* is any datagram received by the client on the path, and a path with nothing in flight that
//!   is validated counts as progressing (idle, not dead);
//! - one *PTO* is the path's current `srtt + max(4·rttvar, 1 ms) + 25 ms` (RFC 9002 §6.2.1 with the default
//!   max_ack_delay);
//! - the check runs every [`CHECK_INTERVAL`] of simulated time for each multipath flow;
//! - a path is abandoned only while another path is validated at both ends (the core would refuse only
//!   the last path that is not abandoned; see [`super::flow`] for why that is not enough), and
//!   single-path flows are never touched.
//!
//! The core sends the abandoned path's unacknowledged data again on the others (if it has not reinjected
//! it already). The path is **re-opened** (a new path ID, same addresses) once every link of its routes is
//! up again and at least as long as it took to give up on it has passed: the engine stands in for a host
//! that learns its interface is back.
//! `abandon_ptos = 0` (scenario key `abandon_path_after_ptos`) disables the policy.
//!
//! # Scheduled closes and migrations
//!
//! A path with a `stop` is closed by the client at that time (`Connection::close_path`,
//! APPLICATION_ABANDON_PATH) and never re-opened, once another path is validated at both ends: until then
//! the close is retried at every check. A path with `migrate` is not opened: at its `start` the
//! client moves the connection's first path (path ID 0) to the path's address (`Connection::migrate`), and
//! the scenario path that carried path ID 0 so far is closed.
//!
//! # Attribution
//!
//! The core reports per path the UDP payload bytes received (`PathStats::bytes_received`) but not which path
//! carried which stream bytes. Application bytes delivered to the receiver are attributed to paths in
//! proportion to the bytes the server received on each path since the previous attribution (every
//! [`CHECK_INTERVAL`], at every sample and at the end); the per-path figures therefore sum to the flow's
//! delivered bytes exactly, and include a small share of acknowledgement and probe overhead. Likewise the
//! core counts lost packets per connection only: a multipath flow's losses are split across paths in
//! proportion to the client datagrams the network dropped on each path (queue overflow, random loss,
//! outage). Single-path flows are exact.

use std::collections::BTreeMap;
use std::time::Duration;

use mpquic::cc::PathId;
use mpquic::proto::connection::PathStats;

use crate::time::SimTime;

/// How often a multipath flow's paths are checked for progress (and delivered bytes attributed).
pub const CHECK_INTERVAL: Duration = Duration::from_millis(10);

/// The max_ack_delay assumed in the PTO estimate (RFC 9000 §18.2 default).
const MAX_ACK_DELAY: Duration = Duration::from_millis(25);

/// What the client does about paths that stop making progress (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathPolicy {
    /// PTOs without progress before a path is abandoned; 0: never.
    pub abandon_ptos: u32,
}

/// The state of one scenario path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PathState {
    /// Not opened yet (waiting for its start, or for the core to allow it).
    #[default]
    Pending,
    /// Carried by this connection path.
    Open(PathId),
    /// Abandoned at `since` after `gave_up_after` without progress; re-opened once its links are up and
    /// `gave_up_after` has passed again.
    Failed {
        /// When it was abandoned.
        since: SimTime,
        /// How long it went without progress.
        gave_up_after: Duration,
    },
    /// Closed for good: its `stop` came, or the client migrated away from it (or could not migrate to it).
    Closed,
}

/// What the engine tracks about one scenario path.
#[derive(Clone, Debug, Default)]
pub struct PathSlot {
    /// Its state.
    pub state: PathState,
    /// The client's `bytes_received` on the path at the last progress.
    pub last_rx: u64,
    /// The last time the path made progress.
    pub last_progress: SimTime,
    /// Application bytes attributed to the path (cumulative).
    pub delivered: u64,
    /// Times the client opened the path (the first path counts once).
    pub opened: u32,
    /// Times the engine abandoned it.
    pub abandoned: u32,
    /// Times the client closed it at its `stop` (0 or 1).
    pub closed: u32,
}

/// Bytes the server has seen per connection path, for attribution: connection path → (scenario path,
/// bytes received when last attributed).
pub type RxSeen = BTreeMap<PathId, (usize, u64)>;

/// One PTO of a path, before backoff (see the module documentation).
pub fn pto(stats: &PathStats) -> Duration {
    stats.srtt + (stats.rttvar * 4).max(Duration::from_millis(1)) + MAX_ACK_DELAY
}

/// How long a path may go without progress before it is abandoned: `ptos` consecutive PTOs with the
/// exponential backoff of RFC 9002 §6.2.1, `PTO · (2^ptos − 1)`.
pub fn give_up_after(stats: &PathStats, ptos: u32) -> Duration {
    let backed_off = (1u32 << ptos.min(16)).saturating_sub(1);
    pto(stats).saturating_mul(backed_off)
}

/// Splits `total` in proportion to `weights` (largest remainder, ties to the lowest index), so that the
/// parts sum to `total`; `None` when every weight is zero.
pub fn apportion(total: u64, weights: &[u64]) -> Option<Vec<u64>> {
    let sum: u128 = weights.iter().map(|&w| u128::from(w)).sum();
    if sum == 0 {
        return None;
    }
    let mut parts = Vec::with_capacity(weights.len());
    let mut remainders = Vec::with_capacity(weights.len());
    let mut given = 0u64;
    for (i, &w) in weights.iter().enumerate() {
        let exact = u128::from(total) * u128::from(w);
        let part = u64::try_from(exact / sum).unwrap_or(u64::MAX);
        parts.push(part);
        remainders.push((exact % sum, i));
        given = given.saturating_add(part);
    }
    // Largest remainder first, then lowest index.
    remainders.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut left = total.saturating_sub(given);
    for (_, i) in remainders {
        if left == 0 {
            break;
        }
        if let Some(p) = parts.get_mut(i) {
            *p = p.saturating_add(1);
            left -= 1;
        }
    }
    Some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apportion_sums_exactly() {
        assert_eq!(apportion(10, &[1, 1]), Some(vec![5, 5]));
        assert_eq!(apportion(10, &[2, 1]), Some(vec![7, 3]));
        assert_eq!(apportion(11, &[1, 1]), Some(vec![6, 5]));
        assert_eq!(apportion(7, &[0, 3]), Some(vec![0, 7]));
        assert_eq!(apportion(7, &[0, 0]), None);
        assert_eq!(apportion(0, &[4, 4]), Some(vec![0, 0]));
        let parts = apportion(1_000_003, &[17, 5, 9]).unwrap();
        assert_eq!(parts.iter().sum::<u64>(), 1_000_003);
        assert_eq!(
            apportion(u64::MAX, &[u64::MAX, 1]).map(|p| p.iter().sum::<u64>()),
            Some(u64::MAX)
        );
    }
}
