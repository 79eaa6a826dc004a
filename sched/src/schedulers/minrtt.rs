//! `minrtt`: the lowest smoothed RTT among eligible paths with room (Linux MPTCP's default scheduler; Linux MPTCP's
//! `default` scheduler, `get_available_subflow` in `net/mptcp/mptcp_sched.c`). The crate's default.
//!
//! Rule: among eligible paths (backup only when no available path is alive, Linux MPTCP's `mptcp_is_available`) that
//! can send, pick the lowest `srtt`; if it has no window room the next-lowest is taken, which the "can send" filter
//! does. Ties go to the lowest path ID.
//!
//! Linux MPTCP's receive-window add-ons to this scheduler (opportunistic retransmission and slow-path
//! penalisation; Raiciu et al., "How Hard Can It Be? Designing and Implementing a Deployable Multipath TCP",
//! NSDI 2012, §4.2) are not part of it here: the mpquic connection implements them for every scheduler (its
//! `reinjection` transport setting), since they re-send data and write to the congestion controller, which
//! a scheduler cannot.
//!
//! **Decision reuse** ([`crate::Scheduler::reuses_decisions`]): offered. Its answer is the fastest sendable path
//! of the eligible tier: a function of each path's status, liveness, srtt and whether it may/can send. Sending on
//! the chosen path changes only that path's window use and pacer; while it can still send it stays sendable,
//! stays in the tier (a path that can send also may send, so the tier does not change) and its srtt is unchanged,
//! and no other path changed: the answer is the same. Stateless, and retransmissions are placed like new data.

use std::time::Instant;

use crate::params::Params;
use crate::{ConnView, Decision, SchedError, Scheduler};

/// Lowest-RTT-first scheduler (stateless).
#[derive(Debug, Clone, Default)]
pub struct MinRtt;

impl MinRtt {
    /// Parameter names (none).
    pub const PARAMS: &'static [&'static str] = &[];

    /// Builds it from registry parameters (it takes none).
    pub fn from_params(p: Params) -> Result<Self, SchedError> {
        p.finish(Self::PARAMS)?;
        Ok(MinRtt)
    }

    /// The minRTT decision for any view; other schedulers reuse it as their fallback.
    pub fn decide(conn: &ConnView<'_>) -> Decision {
        let Some(e) = conn.eligible() else {
            return Decision::Blocked;
        };
        match e.fastest_sendable() {
            Some(p) => Decision::Path(p.id),
            None => Decision::Blocked,
        }
    }
}

impl Scheduler for MinRtt {
    fn name(&self) -> &'static str {
        "minrtt"
    }

    /// Yes: see the module documentation.
    fn reuses_decisions(&self) -> bool {
        true
    }

    fn select_send(&mut self, conn: &ConnView<'_>, _now: Instant) -> Decision {
        Self::decide(conn)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::{PathId, PathView};

    #[test]
    #[allow(clippy::disallowed_methods)] // test set-up: any instant will do
    fn picks_the_fastest_path_with_room() {
        let now = Instant::now();
        let mut fast = PathView::new(0, 12_000, Duration::from_millis(10));
        let slow = PathView::new(1, 12_000, Duration::from_millis(40));
        let paths = [fast.clone(), slow.clone()];
        assert_eq!(
            MinRtt.select_send(&ConnView::new(&paths, 1200), now),
            Decision::Path(PathId(0))
        );
        fast.bytes_in_flight = 11_500;
        let paths = [fast, slow];
        assert_eq!(
            MinRtt.select_send(&ConnView::new(&paths, 1200), now),
            Decision::Path(PathId(1))
        );
    }
}
