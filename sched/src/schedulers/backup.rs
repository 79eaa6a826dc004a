//! `backup` (alias `priority`): explicit priority / failover scheduling.
//!
//! Rule: the status tier comes first: available paths, and backup paths only when no available path is
//! alive (the shared rule of Linux MPTCP's `mptcp_is_available`, i.e. the failover users expect: a standby path carries
//! nothing while a primary works). Within the tier, paths are ordered by a configured rank (lower first), then by path
//! ID; the packet goes on the first path in that order that can send. With `strict=true` only the first alive
//! path of the tier is used, and the scheduler waits for it when its window is full instead of overflowing
//! to the next one.
//!
//! Specification: `backup:2=0,1=1` (path ID = rank; 0 is the highest priority); unranked paths come after
//! every ranked one, in path-ID order. `backup:strict=true` for no overflow.
//!
//! **Decision reuse** ([`crate::Scheduler::reuses_decisions`]): offered. Its answer is the first eligible path in
//! rank order that can send (strict: the first eligible path, if it can send): a function of status, liveness,
//! may/can send and the fixed ranks. While the chosen path can still send it stays first. Ranks are
//! configuration, not state.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::params::Params;
use crate::{ConnView, Decision, PathId, SchedError, Scheduler};

/// Priority / failover scheduler.
#[derive(Debug, Clone, Default)]
pub struct Backup {
    ranks: BTreeMap<PathId, u64>,
    strict: bool,
}

impl Backup {
    /// Named parameters (plus one numeric key per path ID).
    pub const PARAMS: &'static [&'static str] = &["<path id>", "strict"];

    /// Ranks per path (lower = preferred; unranked paths after all ranked ones) and the strict flag.
    pub fn new(ranks: &[(PathId, u64)], strict: bool) -> Self {
        Backup {
            ranks: ranks.iter().copied().collect(),
            strict,
        }
    }

    /// Builds it from registry parameters: `<path id>=<rank>` (0..=1 000 000) and `strict` (default false).
    pub fn from_params(mut p: Params) -> Result<Self, SchedError> {
        let ranks = p.per_path(0, 1_000_000)?;
        let strict = p.bool("strict", false)?;
        p.finish(Self::PARAMS)?;
        Ok(Self::new(&ranks, strict))
    }

    fn order(&self, id: PathId) -> (u64, PathId) {
        (self.ranks.get(&id).copied().unwrap_or(u64::MAX), id)
    }
}

impl Scheduler for Backup {
    fn name(&self) -> &'static str {
        "backup"
    }

    /// Yes: see the module documentation.
    fn reuses_decisions(&self) -> bool {
        true
    }

    fn select_send(&mut self, conn: &ConnView<'_>, _now: Instant) -> Decision {
        let Some(e) = conn.eligible() else {
            return Decision::Blocked;
        };
        let first = if self.strict {
            e.paths().min_by_key(|p| self.order(p.id))
        } else {
            e.sendable().min_by_key(|p| self.order(p.id))
        };
        match first {
            Some(p) if p.can_send(conn.packet_size) => Decision::Path(p.id),
            _ => e.idle(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::{PathStatus, PathView};

    #[test]
    #[allow(clippy::disallowed_methods)] // test set-up: any instant will do
    fn ranks_then_failover() {
        let now = Instant::now();
        let mut s = Backup::new(&[(PathId(2), 0)], false);
        let mut p1 = PathView::new(1, 12_000, Duration::from_millis(5));
        let mut p2 = PathView::new(2, 12_000, Duration::from_millis(50));
        let mut p3 = PathView::new(3, 12_000, Duration::from_millis(1));
        p3.status = PathStatus::Backup;
        let paths = [p1.clone(), p2.clone(), p3.clone()];
        assert_eq!(
            s.select_send(&ConnView::new(&paths, 1200), now),
            Decision::Path(PathId(2))
        );
        p2.bytes_in_flight = 12_000;
        let paths = [p1.clone(), p2.clone(), p3.clone()];
        assert_eq!(
            s.select_send(&ConnView::new(&paths, 1200), now),
            Decision::Path(PathId(1))
        );
        p1.bytes_in_flight = 12_000;
        let paths = [p1.clone(), p2.clone(), p3.clone()];
        // Primaries full but alive: no failover, wait for an acknowledgement.
        assert_eq!(
            s.select_send(&ConnView::new(&paths, 1200), now),
            Decision::Blocked
        );
        p1.potentially_failed = true;
        p2.abandoned = true;
        let paths = [p1, p2, p3];
        assert_eq!(
            s.select_send(&ConnView::new(&paths, 1200), now),
            Decision::Path(PathId(3))
        );
    }
}
