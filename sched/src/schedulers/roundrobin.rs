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
//! **Reused answers.** Not stateless ([`crate::Scheduler::reuses_decisions`] stays `false`): every decision
//! advances the chosen path's quota, and rounds reset. But within a turn the answer is known in advance, and
//! [`crate::Scheduler::reusable_answers`] says for how many more packets: after answering path `p` with its
//! quota now `q` in a turn of `T = max(segments, batch_packets)` packets, the next `T − q` questions asked
//! under unchanged inputs answer `p` again. Proof: `p` was chosen either (a) as the lowest-ID candidate
//! with a partly used quota, (b) as the lowest-ID unused one when no candidate had a partly used quota, or
//! (c) as the first candidate of a new round (all other quotas 0). Unchanged inputs leave the candidates
//! the same (the connection checks that `p` can still send; the other paths' windows, pacers and
//! liveness did not move) and only `p`'s quota moves: in (a) no candidate with a lower ID has a partly
//! used quota, in (b) and (c) no other candidate has one at all, so while `q < T` path `p` is again the
//! lowest-ID candidate with a partly used quota, and `T` is unchanged (`batch_packets` moves only with
//! the sender's batch or the packet size, both input events). When `p` is the only candidate (one path,
//! or the others' windows full) the answer stays `p` without limit: with a full quota no candidate has a
//! partly used or an unused one, so a new round starts, again with `p`. The connection reports each
//! packet it took that way with [`crate::Scheduler::on_answer_reused`], which moves the quotas as the
//! answer would have (one more for `p`, after clearing them all when `p`'s turn was full). Without
//! batches and with `segments = 1` (the simulator's default) every turn is one packet, and an answer is
//! reused only while its path is the only candidate.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::params::Params;
use crate::{ConnView, Decision, PathEvent, PathId, PathView, SchedError, Scheduler};

/// Round-robin scheduler.
#[derive(Debug, Clone)]
pub struct RoundRobin {
    segments: u64,
    cwnd_limited: bool,
    /// Packets each path carried in the current round (absent: 0; a new round sets every entry to 0).
    quota: BTreeMap<PathId, u64>,
    /// The last answer, while it is a path; `None` after any other answer or a path event.
    last: Option<Turn>,
}

/// A path answer and what it was given under (for [`Scheduler::reusable_answers`]).
#[derive(Debug, Clone, Copy)]
struct Turn {
    path: PathId,
    /// The turn length: `max(segments, batch_packets)`.
    len: u64,
    /// The path was the only candidate.
    sole: bool,
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
            last: None,
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

    /// Starts a new round: every quota back to 0. The entries are kept (a zero counts as an absent one), so
    /// that the round's first packet does not allocate the map's node again.
    fn new_round(&mut self) {
        self.quota.values_mut().for_each(|q| *q = 0);
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
        self.new_round();
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
        self.last = None;
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
                self.last = Some(Turn {
                    path: p.id,
                    len: segments,
                    sole: candidates().nth(1).is_none(),
                });
                Decision::Path(p.id)
            }
            // Strict rotation: it is this path's turn, wait for it.
            _ => e.idle(),
        }
    }

    /// The rest of the current turn, `T − q`, or no limit for the only candidate (see the module
    /// documentation).
    fn reusable_answers(&self) -> u64 {
        match self.last {
            Some(t) if t.sole => u64::MAX,
            Some(t) => t.len.saturating_sub(self.quota(t.path)),
            None => 0,
        }
    }

    /// One more packet for `path`, as answering would have given it: its quota grows by one, after a new
    /// round when its turn was full (then it is the only candidate).
    fn on_answer_reused(&mut self, path: PathId) {
        let Some(t) = self.last.filter(|t| t.path == path) else {
            return;
        };
        // The answer gave `path` a quota of at least 1: its entry exists (one lookup, as this runs per packet).
        match self.quota.get_mut(&path) {
            Some(q) if *q < t.len => *q += 1,
            _ => {
                self.new_round();
                self.quota.insert(path, 1);
            }
        }
    }

    fn on_path_event(&mut self, event: &PathEvent) {
        self.last = None;
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
    #[test]
    #[allow(clippy::disallowed_methods)] // test set-up: any instant will do
    fn a_turn_reports_how_many_answers_are_left_and_reused_ones_move_the_quota() {
        // segments = 3, two open paths: path 0's turn is 3 packets. After the first answer its quota is 1,
        // so 3 − 1 = 2 more answers are path 0; taking them without asking leaves quota 3 and nothing left,
        // and the next question starts path 1's turn (3 − 1 = 2 left again).
        let now = Instant::now();
        let mut rr = RoundRobin::new(3, true);
        let open = [
            PathView::new(0, 1 << 30, Duration::from_millis(10)),
            PathView::new(1, 1 << 30, Duration::from_millis(10)),
        ];
        let view = ConnView::new(&open, 1200);
        assert_eq!(rr.reusable_answers(), 0, "nothing answered yet");
        assert_eq!(rr.select_send(&view, now), Decision::Path(PathId(0)));
        assert_eq!(rr.reusable_answers(), 2);
        rr.on_answer_reused(PathId(0));
        rr.on_answer_reused(PathId(0));
        assert_eq!((rr.quota(PathId(0)), rr.reusable_answers()), (3, 0));
        assert_eq!(rr.select_send(&view, now), Decision::Path(PathId(1)));
        assert_eq!((rr.quota(PathId(1)), rr.reusable_answers()), (1, 2));
        // A path event ends the count (the connection asks again after one anyway).
        rr.on_path_event(&PathEvent::Validated(PathId(1)));
        assert_eq!(rr.reusable_answers(), 0);
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // test set-up: any instant will do
    fn the_only_candidate_is_answered_without_limit_and_rounds_restart_as_asked() {
        // segments = 2, path 1's window full: path 0 is the only candidate. Asking four times gives quotas
        // 1, 2, then a new round (all quotas cleared, path 1's partly used quota of 1 too) 1, 2. Reusing the
        // first answer three times must leave the same quotas.
        let now = Instant::now();
        let mut paths = [
            PathView::new(0, 1 << 30, Duration::from_millis(10)),
            PathView::new(1, 1 << 30, Duration::from_millis(10)),
        ];
        let mut asked = RoundRobin::new(2, true);
        // Path 0 takes its turn (2), path 1 one packet of its own, then path 1 fills.
        for want in [0, 0, 1] {
            let d = asked.select_send(&ConnView::new(&paths, 1200), now);
            assert_eq!(d, Decision::Path(PathId(want)));
        }
        paths[1].bytes_in_flight = 1 << 30;
        let mut reused = asked.clone();
        let view = ConnView::new(&paths, 1200);
        // Path 0 full, path 1 a candidate no more: a new round, path 0 with quota 1.
        for rr in [&mut asked, &mut reused] {
            assert_eq!(rr.select_send(&view, now), Decision::Path(PathId(0)));
            assert_eq!((rr.quota(PathId(0)), rr.quota(PathId(1))), (1, 0));
        }
        assert_eq!(reused.reusable_answers(), u64::MAX);
        for _ in 0..3 {
            assert_eq!(asked.select_send(&view, now), Decision::Path(PathId(0)));
            reused.on_answer_reused(PathId(0));
            assert_eq!(asked.quota(PathId(0)), reused.quota(PathId(0)));
        }
        assert_eq!(asked.quota(PathId(0)), 2, "1, 2, new round 1, 2");
    }
}
