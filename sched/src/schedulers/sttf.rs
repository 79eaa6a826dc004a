//! `sttf`: Shortest Transfer Time First (the model of the `mptcp_sttf.c` kernel scheduler of the
//! `vkirany/mptcp-kau` tree, used by P. Hurtig, K.-J. Grinnemo, A. Brunstrom, S. Ferlin, Ö. Alay,
//! N. Kuhn, "Low-Latency Scheduling in MPTCP", IEEE/ACM Transactions on Networking, 2019).
//!
//! **Transfer-time model.** A packet placed on path `p` behind `q` bytes already queued there is delivered:
//! * at `srtt/2` if the queue plus the packet fit in the free window;
//! * otherwise after `r` rounds of one srtt each, `r·srtt + srtt/2`, where the window grows every round
//!   (doubles in slow start, [`PathView::in_slow_start`], grows by one MSS per round in congestion
//!   avoidance) and `r` is the first round by which the free window plus the windows of the rounds cover
//!   the queue and the packet (at most [`MAX_ROUNDS`] rounds; beyond, the estimate saturates).
//!
//! **Decision.** The kernel assigns every segment of the connection's send queue, one by one, to the
//! subflow with the shortest transfer time given what it already queued there, so a backlog spreads over
//! the paths; a packet placed with an empty per-path queue would always go behind the fast path whenever
//! the slow path's srtt is above 3× the fast one's. A connection placing one packet at a time keeps no
//! per-path queues; the backlog is the connection's unsent data, [`ConnView::bytes_waiting`] (`n` packets,
//! this one included). STTF therefore sends the packet on a path that can send now only if that path gets a
//! share of the backlog in the kernel's assignment: path `i`, with transfer time `t_i` for one more packet,
//! gets one iff fewer than `n` packets could be delivered before `t_i` by the other paths (ties go to the
//! lower path ID). Among such paths the one with the smallest `t_i` is taken (ties: lowest path ID). If no
//! path that can send now gets a share, the packet waits ([`Decision::Wait`]) for the faster paths, as the
//! kernel would queue it there. With a backlog of one packet this is "pick the smallest transfer time".
//!
//! Example (fixed windows, congestion avoidance): fast path 20 ms with a full 12 000 B window, slow path
//! 90 ms with 6 000 B free, a backlog of 47 packets. The slow path's packet arrives at 45 ms; by then the
//! fast path delivers its next round (13 200 B = 11 packets, at 30 ms) and nothing more (the round after
//! arrives at 50 ms): 11 < 47, so the slow path gets a share and carries packets until its window is full
//! (5 packets); the rest waits for the fast path. With a backlog of 11 packets or fewer it carries none.
//!
//! **Decision reuse** ([`crate::Scheduler::reuses_decisions`]): not offered. Its transfer-time model reads the
//! backlog and the free window of every path, both of which each packet sent changes.

use std::time::{Duration, Instant};

use crate::params::Params;
use crate::{ConnView, Decision, Eligible, PathView, SchedError, Scheduler};

/// Cap on simulated rounds (beyond it the estimate saturates).
pub const MAX_ROUNDS: u32 = 64;

/// Shortest-transfer-time scheduler (stateless).
#[derive(Debug, Clone, Default)]
pub struct Sttf;

/// The delivery schedule of a path under the kernel model: for round `r` = 0 (the free window) up to
/// [`MAX_ROUNDS`], the delivery time of a packet sent in that round and the bytes (the per-path queue
/// included) delivered by the end of it.
fn schedule(p: &PathView) -> impl Iterator<Item = (u32, Duration, u64)> + '_ {
    let half = p.srtt / 2;
    let mss = p.mss.max(1);
    let mut window = p.cwnd.max(mss);
    let mut total = p.room();
    (0..=MAX_ROUNDS).map(move |r| {
        if r > 0 {
            window = if p.in_slow_start {
                window.saturating_mul(2)
            } else {
                window.saturating_add(mss)
            };
            total = total.saturating_add(window);
        }
        (r, p.srtt.saturating_mul(r).saturating_add(half), total)
    })
}

impl Sttf {
    /// Parameter names (none).
    pub const PARAMS: &'static [&'static str] = &[];

    /// Builds it from registry parameters (it takes none).
    pub fn from_params(p: Params) -> Result<Self, SchedError> {
        p.finish(Self::PARAMS)?;
        Ok(Sttf)
    }

    /// The transfer-time estimate of the next `packet_size` bytes on `p`, behind its
    /// [`PathView::queued_bytes`].
    pub fn transfer_time(p: &PathView, packet_size: u64) -> Duration {
        let need = p.queued_bytes.saturating_add(packet_size);
        let mut last = p.srtt / 2;
        for (r, at, total) in schedule(p) {
            last = at;
            // The free window covers round 0; round r adds one window. Saturates at MAX_ROUNDS.
            if need <= total || r == MAX_ROUNDS {
                break;
            }
        }
        last
    }

    /// Packets of `packet_size` bytes that `p` delivers, after its own queue, before `level` (at `level`
    /// too when `inclusive`), counted up to `cap`.
    fn delivered_before(p: &PathView, packet_size: u64, level: Duration, inclusive: bool, cap: u64) -> u64 {
        let size = packet_size.max(1);
        let mut count = 0;
        for (r, at, total) in schedule(p) {
            let before = at < level || (inclusive && at == level);
            if !before {
                break;
            }
            if r == MAX_ROUNDS {
                // The saturated estimate: every further packet has this transfer time.
                return cap;
            }
            count = total.saturating_sub(p.queued_bytes) / size;
            if count >= cap {
                return cap;
            }
        }
        count
    }

    /// Whether `p` gets a share of a backlog of `n` packets in the kernel's greedy assignment: fewer than `n`
    /// packets are delivered by the other eligible paths before the first packet `p` would deliver.
    fn gets_share(e: &Eligible<'_, '_>, p: &PathView, t: Duration, packet_size: u64, n: u64) -> bool {
        let mut ahead = 0u64;
        for q in e.paths().filter(|q| q.id != p.id) {
            ahead = ahead.saturating_add(Self::delivered_before(q, packet_size, t, q.id < p.id, n));
            if ahead >= n {
                return false;
            }
        }
        true
    }
}

impl Scheduler for Sttf {
    fn name(&self) -> &'static str {
        "sttf"
    }

    fn select_send(&mut self, conn: &ConnView<'_>, _now: Instant) -> Decision {
        let Some(e) = conn.eligible() else {
            return Decision::Blocked;
        };
        let size = conn.packet_size.max(1);
        let n = conn.bytes_waiting.max(size).div_ceil(size);
        let best = e
            .sendable()
            .map(|p| (Self::transfer_time(p, size), p))
            .filter(|(t, p)| Self::gets_share(&e, p, *t, size, n))
            .min_by_key(|(t, p)| (*t, p.id));
        match best {
            Some((_, p)) => Decision::Path(p.id),
            None => e.idle(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PathId;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // test set-up: any instant will do
    fn a_backlog_spreads_over_the_slow_path_only_when_the_fast_one_cannot_deliver_it_sooner() {
        // The example of the module documentation. Fast path: 12 000 B full, srtt 20 ms: its next packets
        // arrive at 30 ms (13 200 B = 11 packets), then 50 ms. Slow path: 90 ms, 6 000 B free: 45 ms.
        let now = Instant::now();
        let mut fast = PathView::new(0, 12_000, ms(20));
        fast.bytes_in_flight = 12_000;
        let mut slow = PathView::new(1, 6_000, ms(90));
        let paths = [fast.clone(), slow.clone()];
        let mut v = ConnView::new(&paths, 1200);
        assert_eq!(Sttf::transfer_time(&paths[0], 1200), ms(30));
        assert_eq!(Sttf::transfer_time(&paths[1], 1200), ms(45));
        // 47 packets: 11 arrive on the fast path before 45 ms, 11 < 47 → the slow path takes one.
        v.bytes_waiting = 47 * 1200;
        assert_eq!(Sttf.select_send(&v, now), Decision::Path(PathId(1)));
        // 12 packets: 11 < 12 → still one for the slow path; 11 packets: 11 ≥ 11 → wait for the fast path.
        v.bytes_waiting = 12 * 1200;
        assert_eq!(Sttf.select_send(&v, now), Decision::Path(PathId(1)));
        v.bytes_waiting = 11 * 1200;
        assert_eq!(Sttf.select_send(&v, now), Decision::Wait);
        // A per-path queue (a view from a sender that keeps one): 6 000 B already queued on the slow path put
        // its next packet in round 1, at 90 + 45 = 135 ms, when the fast path has delivered
        // 11 + 12 + 13 + 14 + 15 + 16 packets (rounds at 30…130 ms) = 81 ≥ 47 → wait.
        slow.queued_bytes = 6_000;
        let paths = [fast, slow];
        let mut v = ConnView::new(&paths, 1200);
        v.bytes_waiting = 47 * 1200;
        assert_eq!(Sttf::transfer_time(&paths[1], 1200), ms(135));
        assert_eq!(Sttf.select_send(&v, now), Decision::Wait);
        v.bytes_waiting = 82 * 1200;
        assert_eq!(Sttf.select_send(&v, now), Decision::Path(PathId(1)));
    }
}
