//! `roundrobin`: rotate over eligible paths, `segments` packets each (sched.md §1.4; `net/mptcp/mptcp_rr.c`).
//!
//! Rule: each path has a quota; the current path carries `segments` consecutive packets, then the turn moves
//! to the next eligible path in path-ID order (wrapping around). With `cwnd_limited = true` (the kernel
//! default, used by the seed paper) a path without room is skipped, so the rotation fills every window and is
//! ACK-clocked. With `cwnd_limited = false` the rotation is strict ("real" round-robin): when the path whose
//! turn it is has no room the scheduler returns [`Decision::Wait`] instead of skipping it.
//!
//! The backup rule of sched.md §1.0 is applied too (the kernel's RR ignores backup status; we keep one
//! meaning of "backup" for every scheduler). Retransmissions take the next turn like new data, but prefer a
//! path they were not sent on (the shared reinjection rule). Kept as a baseline: kernel maintainers see no
//! real use case for it beyond testing (mptcp_net-next#194).

use std::time::Instant;

use crate::params::Params;
use crate::{ConnView, Decision, PathId, SchedError, Scheduler};

/// Round-robin scheduler.
#[derive(Debug, Clone)]
pub struct RoundRobin {
    segments: u64,
    cwnd_limited: bool,
    current: Option<PathId>,
    used: u64,
}

impl RoundRobin {
    /// Parameter names.
    pub const PARAMS: &'static [&'static str] = &["segments", "cwnd_limited"];

    /// A rotation of `segments` packets per turn (kernel `num_segments`, default 1), skipping full paths when
    /// `cwnd_limited` (default true).
    pub fn new(segments: u64, cwnd_limited: bool) -> Self {
        RoundRobin {
            segments: segments.max(1),
            cwnd_limited,
            current: None,
            used: 0,
        }
    }

    /// Builds it from registry parameters: `segments` (1..=1000, default 1), `cwnd_limited` (default true).
    pub fn from_params(mut p: Params) -> Result<Self, SchedError> {
        let segments = p.u64("segments", 1, 1, 1000)?;
        let cwnd_limited = p.bool("cwnd_limited", true)?;
        p.finish(Self::PARAMS)?;
        Ok(Self::new(segments, cwnd_limited))
    }
}

impl Default for RoundRobin {
    fn default() -> Self {
        Self::new(1, true)
    }
}

impl Scheduler for RoundRobin {
    fn name(&self) -> &'static str {
        "roundrobin"
    }

    fn select_send(&mut self, conn: &ConnView<'_>, _now: Instant) -> Decision {
        let Some(e) = conn.eligible() else {
            return Decision::Blocked;
        };
        let size = conn.packet_size;
        // The current path keeps its turn until its quota is used.
        let current = self
            .current
            .filter(|_| self.used < self.segments)
            .and_then(|cur| e.paths().find(|p| p.id == cur));
        if let Some(p) = current {
            if p.can_send(size) {
                self.used = self.used.saturating_add(1);
                return Decision::Path(p.id);
            }
            if !self.cwnd_limited {
                return e.idle();
            }
        }
        // Next path in ID order after the current one, wrapping around; full paths are skipped only when
        // cwnd-limited.
        let after = |id: PathId| self.current.is_none_or(|c| id > c);
        let pick = |only_after: bool| {
            e.paths()
                .filter(|p| !only_after || after(p.id))
                .filter(|p| !self.cwnd_limited || p.can_send(size))
                .min_by_key(|p| p.id)
        };
        match pick(true).or_else(|| pick(false)) {
            Some(p) if p.can_send(size) => {
                self.current = Some(p.id);
                self.used = 1;
                Decision::Path(p.id)
            }
            Some(p) => {
                // Strict rotation: it is this path's turn, wait for it.
                self.current = Some(p.id);
                self.used = 0;
                e.idle()
            }
            None => e.idle(),
        }
    }

    fn on_path_event(&mut self, event: &crate::PathEvent) {
        if let crate::PathEvent::Removed(id) = event {
            if self.current == Some(*id) {
                self.used = self.segments;
            }
        }
    }
}
