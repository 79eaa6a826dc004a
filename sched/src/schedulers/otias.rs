//! `otias`: Out-of-order Transmission for In-order Arrival Scheduling (F. Yang, Q. Wang, P. D. Amer,
//! "Out-of-Order Transmission for In-Order Arrival Scheduling for Multipath TCP", IEEE AINA Workshops 2014;
//! the formula as the ns-3 `MpTcpSchedulerOTIAS` computes it).
//!
//! Rule: for every eligible path, estimate when the packet would arrive,
//! `T_i = ((unsent_i − (cwnd_i − unacked_i)) / cwnd_i + 0.5) · srtt_i` (all in bytes), and pick the smallest
//! (ties: lowest path ID). `unacked_i` is the path's bytes in flight. `unsent_i` is what must leave before
//! the packet has left: the connection's unsent data, [`ConnView::bytes_waiting`] (this packet included, as
//! the formula's sender queue), plus whatever is already assigned to the path and not yet sent
//! ([`PathView::queued_bytes`](crate::PathView::queued_bytes), 0 for a connection that places packets one
//! at a time).
//!
//! The backlog is what makes OTIAS wait. With the fast path `f` full and the slow path `s` idle,
//! `T_f = (k/cwnd_f + 0.5)·srtt_f` and `T_s = (k/cwnd_s − 0.5)·srtt_s` for a backlog of `k` bytes: both grow
//! with `k`, the slow one faster, so above `k* = 0.5·(srtt_f + srtt_s) / (srtt_s/cwnd_s − srtt_f/cwnd_f)`
//! the packet arrives sooner by waiting for the fast path (60 000 B windows, 20 and 100 ms: `k*` = 45 000 B).
//! Below it, and for the last packets of a transfer, the slow path is used.
//!
//! OTIAS queues the packet behind a full window when that path still gives the earliest arrival. A
//! per-packet scheduler has no per-path queue, so it returns [`Decision::Wait`] instead: the packet waits
//! for that path's window (only paths that will open without a path event are considered, so the wait
//! ends). The formula is used as given; `T_i` is below `srtt/2` (even negative) when the window has more
//! room than the backlog needs, which only ranks roomier paths first.

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

    /// The arrival-time estimate `T_i` in seconds of a packet behind `unsent` bytes of connection backlog
    /// (the packet included) on `p`; the path's own [`PathView::queued_bytes`] are added to it.
    pub fn arrival_estimate(p: &PathView, unsent: u64) -> f64 {
        let unsent = p.queued_bytes.saturating_add(unsent) as f64;
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
        let unsent = conn.bytes_waiting.max(conn.packet_size);
        let best = e.paths().min_by(|a, b| {
            Self::arrival_estimate(a, unsent)
                .total_cmp(&Self::arrival_estimate(b, unsent))
                .then(a.id.cmp(&b.id))
        });
        match best {
            Some(p) if p.can_send(conn.packet_size) => Decision::Path(p.id),
            _ => e.idle(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::PathId;

    #[test]
    #[allow(clippy::disallowed_methods)] // test set-up: any instant will do
    fn the_backlog_decides_between_the_slow_path_and_waiting() {
        // Fast: cwnd 60 000 B, full, srtt 20 ms. Slow: cwnd 60 000 B, idle, srtt 100 ms.
        // k* = 0.5·(20 + 100) / (100/60 000 − 20/60 000) = 60 / (80/60 000) = 45 000 B.
        // k = 44 400: T_f = (0.74 + 0.5)·20 = 24.8 ms, T_s = (0.74 − 0.5)·100 = 24.0 ms → slow.
        // k = 45 600: T_f = (0.76 + 0.5)·20 = 25.2 ms, T_s = (0.76 − 0.5)·100 = 26.0 ms → wait.
        let now = Instant::now();
        let mut fast = PathView::new(0, 60_000, Duration::from_millis(20));
        fast.bytes_in_flight = 60_000;
        let slow = PathView::new(1, 60_000, Duration::from_millis(100));
        let paths = [fast, slow];
        let mut v = ConnView::new(&paths, 1200);
        v.bytes_waiting = 44_400;
        assert_eq!(Otias.select_send(&v, now), Decision::Path(PathId(1)));
        v.bytes_waiting = 45_600;
        assert_eq!(Otias.select_send(&v, now), Decision::Wait);
    }
}
