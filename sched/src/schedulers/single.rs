//! `single`: only the lowest-numbered eligible path, as a single-path stack would (noq's behaviour today,
//! kept as a baseline for the studies).
//!
//! Rule: the eligible path (backup rule of Linux MPTCP's `mptcp_is_available` applied) with the lowest path ID carries
//! every packet; when its window is full the scheduler waits for it rather than overflow to another path. It moves
//! to the next path only when that one dies (abandoned, potentially failed) or changes status.
//!
//! **Decision reuse** ([`crate::Scheduler::reuses_decisions`]): offered. Its answer is the lowest-numbered
//! eligible path if it can send: a function of status, liveness and may/can send. While the chosen path can still
//! send nothing it reads has changed (see [`crate::Scheduler::reuses_decisions`]). Stateless.

use std::time::Instant;

use crate::params::Params;
use crate::{ConnView, Decision, SchedError, Scheduler};

/// Lowest-numbered-path scheduler (stateless).
#[derive(Debug, Clone, Default)]
pub struct Single;

impl Single {
    /// Parameter names (none).
    pub const PARAMS: &'static [&'static str] = &[];

    /// Builds it from registry parameters (it takes none).
    pub fn from_params(p: Params) -> Result<Self, SchedError> {
        p.finish(Self::PARAMS)?;
        Ok(Single)
    }
}

impl Scheduler for Single {
    fn name(&self) -> &'static str {
        "single"
    }

    /// Yes: see the module documentation.
    fn reuses_decisions(&self) -> bool {
        true
    }

    fn select_send(&mut self, conn: &ConnView<'_>, _now: Instant) -> Decision {
        let Some(e) = conn.eligible() else {
            return Decision::Blocked;
        };
        match e.paths().min_by_key(|p| p.id) {
            Some(p) if p.can_send(conn.packet_size) => Decision::Path(p.id),
            _ => e.idle(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::{PathId, PathView};

    #[test]
    #[allow(clippy::disallowed_methods)] // test set-up: any instant will do
    fn sticks_to_the_lowest_path_and_waits_for_it() {
        let now = Instant::now();
        let mut p0 = PathView::new(0, 12_000, Duration::from_millis(50));
        let p1 = PathView::new(1, 12_000, Duration::from_millis(10));
        let paths = [p1.clone(), p0.clone()];
        assert_eq!(
            Single.select_send(&ConnView::new(&paths, 1200), now),
            Decision::Path(PathId(0))
        );
        p0.bytes_in_flight = 12_000;
        let paths = [p0.clone(), p1.clone()];
        assert_eq!(
            Single.select_send(&ConnView::new(&paths, 1200), now),
            Decision::Wait
        );
        p0.abandoned = true;
        let paths = [p0, p1];
        assert_eq!(
            Single.select_send(&ConnView::new(&paths, 1200), now),
            Decision::Path(PathId(1))
        );
    }
}
