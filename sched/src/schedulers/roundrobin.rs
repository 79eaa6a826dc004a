//! `roundrobin`: rotate over eligible paths, `segments` packets each (the Linux MPTCP v0.x kernel's
//! `net/mptcp/mptcp_rr.c`).
//!
//! Rule, as the kernel keeps it: every path has a quota counter. A path that can take the packet and has a
//! partly used quota (`0 < quota < segments`) continues its turn; otherwise a path with an unused quota
//! (0) starts one; when every path that can take it has a full quota, all quotas are reset to 0 (a new
//! round) and the choice is made again. The chosen path's quota grows by one per packet. So a path whose
//! window fills in the middle of its turn **keeps** the rest of its quota: if its window opens again before
//! the round ends, it finishes its turn before the others continue theirs (the lowest path ID first).
//! Paths are taken in path-ID order (the kernel walks its subflow list, and among unused subflows takes the
//! last one it meets).
//!
//! With `cwnd_limited = true` (the kernel default, used by the MPTCP scheduler studies) a path "can take the
//! packet" only when its window has room, so the rotation fills every window and is ACK-clocked. With
//! `cwnd_limited = false` the rotation is strict ("real" round-robin): every live path takes its turn, and
//! when the path whose turn it is has no room the scheduler returns [`Decision::Wait`] instead of skipping it.
//!
//! A batched sender ([`ConnView::batch_packets`] > 1: with GSO, one system call carries a batch of datagrams
//! to one destination) lengthens every turn to at least one batch: `max(segments, batch_packets)` packets.
//! Rotating packet by packet would leave every batch half empty and interleave the paths' stream data
//! (every acknowledgement of one path then leaves holes for the other's); turns of a batch keep the rotation
//! and its share (strict turns: equal packets per path, up to one turn) while each path's packets are
//! consecutive. Without batches (the simulator) `batch_packets` is 1 and nothing changes.
//!
//! The backup rule of the shared eligibility test is applied too (the kernel's RR ignores backup status; we
//! keep one meaning of "backup" for every scheduler). Retransmissions take the next turn like new data, but
//! prefer a path they were not sent on (the shared reinjection rule). Kept as a baseline: kernel maintainers
//! see no real use case for it beyond testing (mptcp_net-next#194).
//!
//! **Decision reuse** ([`crate::Scheduler::reuses_decisions`]): not offered. Every decision advances the chosen
//! path's quota (and rounds reset): the answer rotates by design.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::params::Params;
use crate::{ConnView, Decision, PathEvent, PathId, PathView, SchedError, Scheduler};

/// Round-robin scheduler.
#[derive(Debug, Clone)]
pub struct RoundRobin {
    segments: u64,
    cwnd_limited: bool,
    /// Packets each path carried in the current round (absent: 0).
    quota: BTreeMap<PathId, u64>,
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
            quota: BTreeMap::new(),
        }
    }

    /// Builds it from registry parameters: `segments` (1..=1000, default 1), `cwnd_limited` (default true).
    pub fn from_params(mut p: Params) -> Result<Self, SchedError> {
        let segments = p.u64("segments", 1, 1, 1000)?;
        let cwnd_limited = p.bool("cwnd_limited", true)?;
        p.finish(Self::PARAMS)?;
        Ok(Self::new(segments, cwnd_limited))
    }

    /// Packets `path` carried in the current round.
    pub fn quota(&self, path: PathId) -> u64 {
        self.quota.get(&path).copied().unwrap_or(0)
    }

    /// The path whose turn it is among `candidates` (the kernel's `mptcp_rr_next_segment` choice), resetting
    /// the round when every candidate used its quota. `None` when there is no candidate.
    fn turn<'a, I>(&mut self, segments: u64, candidates: impl Fn() -> I) -> Option<&'a PathView>
    where
        I: Iterator<Item = &'a PathView>,
    {
        let q = |s: &Self, p: &PathView| s.quota(p.id);
        let partial = candidates()
            .filter(|p| (1..segments).contains(&q(self, p)))
            .min_by_key(|p| p.id);
        if partial.is_some() {
            return partial;
        }
        let unused = candidates().filter(|p| q(self, p) == 0).min_by_key(|p| p.id);
        if unused.is_some() {
            return unused;
        }
        // Every candidate has a full quota: a new round.
        let first = candidates().min_by_key(|p| p.id)?;
        self.quota.clear();
        Some(first)
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
        let cwnd_limited = self.cwnd_limited;
        let candidates = || e.paths().filter(move |p| !cwnd_limited || p.can_send(size));
        // A turn lasts at least one of the sender's batches.
        let segments = self.segments.max(conn.batch_packets);
        match self.turn(segments, candidates) {
            Some(p) if p.can_send(size) => {
                let q = self.quota.entry(p.id).or_insert(0);
                *q = q.saturating_add(1);
                Decision::Path(p.id)
            }
            // Strict rotation: it is this path's turn, wait for it.
            _ => e.idle(),
        }
    }

    fn on_path_event(&mut self, event: &PathEvent) {
        if let PathEvent::Removed(id) | PathEvent::Abandoned(id) = event {
            self.quota.remove(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    #[allow(clippy::disallowed_methods)] // test set-up: any instant will do
    fn a_path_that_fills_mid_turn_keeps_the_rest_of_its_quota() {
        // segments = 3. Path 0 takes 3, path 1 takes 3, path 0 takes 1 and fills; path 1 takes 2; path 0's
        // window opens: it finishes its turn (2 more) before path 1 finishes its own (1 more); then a new round.
        let now = Instant::now();
        let mut rr = RoundRobin::new(3, true);
        let open = [
            PathView::new(0, 1 << 30, Duration::from_millis(10)),
            PathView::new(1, 1 << 30, Duration::from_millis(30)),
        ];
        let mut full0 = open.clone();
        full0[0].bytes_in_flight = 1 << 30;
        let mut seq = Vec::new();
        let mut pick = |rr: &mut RoundRobin, paths: &[PathView]| {
            let d = rr.select_send(&ConnView::new(paths, 1200), now);
            seq.push(d.paths()[0].0);
        };
        for _ in 0..7 {
            pick(&mut rr, &open);
        }
        for _ in 0..2 {
            pick(&mut rr, &full0);
        }
        for _ in 0..9 {
            pick(&mut rr, &open);
        }
        assert_eq!(seq, [0, 0, 0, 1, 1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 1]);
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // test set-up: any instant will do
    fn a_batched_sender_gets_turns_of_one_batch() {
        // batch_packets = 4, segments = 1: turns of 4 packets. Strict turns (cwnd_limited = false): when path
        // 1 fills after 2 packets of its second turn, the scheduler waits for it instead of going back to
        // path 0; once it opens, path 1 finishes its turn (2 more), then path 0 has a full turn again.
        let now = Instant::now();
        let mut rr = RoundRobin::new(1, false);
        let open = [
            PathView::new(0, 1 << 30, Duration::from_millis(10)),
            PathView::new(1, 1 << 30, Duration::from_millis(10)),
        ];
        let mut full1 = open.clone();
        full1[1].bytes_in_flight = 1 << 30;
        let mut seq = Vec::new();
        let mut pick = |rr: &mut RoundRobin, paths: &[PathView]| {
            let mut view = ConnView::new(paths, 1200);
            view.batch_packets = 4;
            match rr.select_send(&view, now) {
                Decision::Path(p) => seq.push(Some(p.0)),
                _ => seq.push(None),
            }
        };
        for _ in 0..14 {
            pick(&mut rr, &open);
        }
        pick(&mut rr, &full1);
        for _ in 0..6 {
            pick(&mut rr, &open);
        }
        let want = [0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1]
            .map(Some)
            .into_iter()
            .chain([None])
            .chain([1, 1, 0, 0, 0, 0].map(Some));
        assert_eq!(seq, want.collect::<Vec<_>>());
    }
}
