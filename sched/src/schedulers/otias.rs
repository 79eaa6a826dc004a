//! `otias`: Out-of-order Transmission for In-order Arrival Scheduling (F. Yang, Q. Wang, P. D. Amer,
//! "Out-of-Order Transmission for In-Order Arrival Scheduling for Multipath TCP", IEEE AINA Workshops 2014;
//! the formula as the ns-3 `MpTcpSchedulerOTIAS` computes it).
//!
//! Rule: for every eligible path, estimate when the packet would arrive,
//! `T_i = (max(0, unsent_i − (cwnd_i − unacked_i)) / cwnd_i + 0.5) · srtt_i` (all in bytes), and pick the
//! smallest (ties: lowest path ID). `unacked_i` is the path's bytes in flight. `unsent_i` is what must leave
//! before the packet has left: the connection's unsent data, [`ConnView::bytes_waiting`] (this packet
//! included, as the formula's sender queue), plus whatever is already assigned to the path and not yet sent
//! ([`PathView::queued_bytes`](crate::PathView::queued_bytes), 0 for a connection that places packets one
//! at a time). The first term counts the round trips the packet waits behind a full window; when the
//! window has room for everything ahead of it, it waits none, and arrives after half a round trip: no
//! estimate is below `srtt_i / 2`. (The ns-3 `MpTcpSchedulerOTIAS` leaves the term unclamped, so an idle
//! path with a large window gets an estimate below its one-way delay, even negative, and wins against a
//! faster path whose packet in fact arrives first; XQUIC's OTIAS counts zero rounds there, as here.)
//!
//! The backlog is what makes OTIAS use a slower path. With the fast path `f` full and the slow path `s`
//! idle, a backlog of `k` bytes that fits in the slow window (`k ≤ cwnd_s`) gives `T_f = (k/cwnd_f + 0.5)·srtt_f`
//! and `T_s = 0.5·srtt_s`: the slow path wins once the fast path needs longer to drain the backlog than the
//! slow path's one-way delay, above `k₁ = cwnd_f·(srtt_s − srtt_f) / (2·srtt_f)` (fast 60 000 B / 20 ms, slow
//! 100 ms: `k₁` = 120 000 B, reachable when the slow window holds that much). A smaller backlog, and the
//! last packets of a transfer, wait for the fast path: they arrive sooner behind its window.
//!
//! OTIAS queues the packet behind a full window when that path still gives the earliest arrival. A
//! per-packet scheduler has no per-path queue, so it returns [`Decision::Wait`] instead: the packet waits
//! for that path's window (only paths that will open without a path event are considered, so the wait
//! ends).
//!
//! **Decision reuse** ([`crate::Scheduler::reuses_decisions`]): not offered. Its arrival estimate reads the
//! backlog and the free window of every path, both of which each packet sent changes.

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
    /// (the packet included) on `p`; the path's own [`PathView::queued_bytes`] are added to it. Never below
    /// `srtt / 2`.
    pub fn arrival_estimate(p: &PathView, unsent: u64) -> f64 {
        let unsent = p.queued_bytes.saturating_add(unsent) as f64;
        let free = p.cwnd as f64 - p.bytes_in_flight as f64;
        let rounds = (unsent - free).max(0.0) / p.cwnd.max(1) as f64;
        (rounds + 0.5) * p.srtt.as_secs_f64()
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
        // Fast: cwnd 60 000 B, full, srtt 20 ms. Slow: cwnd 300 000 B, idle, srtt 100 ms.
        // k₁ = 60 000·(100 − 20)/(2·20) = 120 000 B (≤ the slow window: T_s = 50 ms).
        // k = 118 800: T_f = (1.98 + 0.5)·20 = 49.6 ms < 50 ms → wait for the fast path.
        // k = 121 200: T_f = (2.02 + 0.5)·20 = 50.4 ms > 50 ms → slow.
        let now = Instant::now();
        let mut fast = PathView::new(0, 60_000, Duration::from_millis(20));
        fast.bytes_in_flight = 60_000;
        let slow = PathView::new(1, 300_000, Duration::from_millis(100));
        let paths = [fast, slow];
        let mut v = ConnView::new(&paths, 1200);
        v.bytes_waiting = 118_800;
        assert_eq!(Otias.select_send(&v, now), Decision::Wait);
        v.bytes_waiting = 121_200;
        assert_eq!(Otias.select_send(&v, now), Decision::Path(PathId(1)));
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // test set-up: any instant will do
    fn an_idle_slow_path_never_beats_its_one_way_delay() {
        // Both windows 60 000 B, fast full (20 ms), slow idle (100 ms). A packet on the slow path arrives
        // after 50 ms at the earliest; behind the fast window a backlog k arrives after (k/60 000 + 0.5)·20
        // ms, sooner for every k ≤ 60 000 (≤ 30 ms), and for larger k the slow path waits rounds too:
        // ((k − 60 000)/60 000 + 0.5)·100 > (k/60 000 + 0.5)·20 for every k > 60 000. So OTIAS waits for
        // the fast path whatever the backlog. Unclamped, 1 200 B gave the slow path (0.02 − 1 + 0.5)·100 =
        // −48 ms and took it.
        let now = Instant::now();
        let mut fast = PathView::new(0, 60_000, Duration::from_millis(20));
        fast.bytes_in_flight = 60_000;
        let slow = PathView::new(1, 60_000, Duration::from_millis(100));
        assert!((Otias::arrival_estimate(&slow, 1200) - 0.050).abs() < 1e-12);
        assert!((Otias::arrival_estimate(&fast, 1200) - 0.0104).abs() < 1e-12);
        let paths = [fast, slow];
        let mut v = ConnView::new(&paths, 1200);
        for k in [1200, 30_000, 60_000, 120_000, 600_000] {
            v.bytes_waiting = k;
            assert_eq!(Otias.select_send(&v, now), Decision::Wait, "backlog {k}");
        }
        // Without the fast path's window full, it is simply the earliest.
        let paths = [
            PathView::new(0, 60_000, Duration::from_millis(20)),
            paths[1].clone(),
        ];
        let v = ConnView::new(&paths, 1200);
        assert_eq!(Otias.select_send(&v, now), Decision::Path(PathId(0)));
    }
}
