//! `otias`: Out-of-order Transmission for In-order Arrival Scheduling (Yang et al., 2014; sched.md §1.7,
//! ns-3 `MpTcpSchedulerOTIAS`).
//!
//! Rule: for every eligible path, estimate when the packet would arrive,
//! `T_i = ((unsent_i − (cwnd_i − unacked_i)) / cwnd_i + 0.5) · srtt_i`, where `unsent_i` is what is queued on
//! the path ([`PathView::queued_bytes`](crate::PathView::queued_bytes)) plus the packet being placed and
//! `unacked_i` its bytes in flight (all in bytes); pick the smallest (ties: lowest path ID).
//!
//! OTIAS queues the packet behind a full window when that path still gives the earliest arrival. A
//! per-packet scheduler has no per-path queue, so it returns [`Decision::Wait`] instead: the packet waits
//! for that path's window (only paths that will open without a path event are considered, so the wait
//! ends). The formula is used as given; `T_i` is below `srtt/2` when the window has more room than the packet
//! needs, which only ranks roomier paths first.

use std::time::Instant;

use crate::params::Params;
use crate::{ConnView, Decision, PathView, SchedError, Scheduler};

/// OTIAS arrival-time scheduler (stateless).
#[derive(Debug, Clone, Default)]
pub struct Otias;

impl Otias {
    /// Parameter names (none).
    pub const PARAMS: &'static [&'static str] = &[];

    /// Builds it from registry parameters (it takes none).
    pub fn from_params(p: Params) -> Result<Self, SchedError> {
        p.finish(Self::PARAMS)?;
        Ok(Otias)
    }

    /// The arrival-time estimate `T_i` in seconds.
    pub fn arrival_estimate(p: &PathView, packet_size: u64) -> f64 {
        let unsent = p.queued_bytes.saturating_add(packet_size) as f64;
        let free = p.cwnd as f64 - p.bytes_in_flight as f64;
        ((unsent - free) / p.cwnd.max(1) as f64 + 0.5) * p.srtt.as_secs_f64()
    }
}

impl Scheduler for Otias {
    fn name(&self) -> &'static str {
        "otias"
    }

    fn select_send(&mut self, conn: &ConnView<'_>, _now: Instant) -> Decision {
        let Some(e) = conn.eligible() else {
            return Decision::Blocked;
        };
        let best = e.paths().min_by(|a, b| {
            Self::arrival_estimate(a, conn.packet_size)
                .total_cmp(&Self::arrival_estimate(b, conn.packet_size))
                .then(a.id.cmp(&b.id))
        });
        match best {
            Some(p) if p.can_send(conn.packet_size) => Decision::Path(p.id),
            _ => e.idle(),
        }
    }
}
