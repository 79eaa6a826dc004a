//! What the connection tells the scheduler and what it does with the answer.
//!
//! **Inputs.** Each time a data packet could be placed, the scheduler gets a view of every path
//! ([`Path::view`](super::paths::Path::view): window, bytes in flight, RTTs, the delivery rate of the path's
//! estimator, the controller's slow-start state, the pacer) and of the connection: its backlog (stream data
//! written and not sent yet, whether or not flow control lets it go now; lost data queued again;
//! datagrams), the flow-control credit, and whether the
//! packet repeats lost data. After a data packet is sent the scheduler hears of it
//! ([`crate::sched::SentInfo`]): on which path, whether it repeated stream data, and whether the
//! connection-level flow-control credit was exhausted when it left.
//!
//! **A decision is a commitment.** Stateful schedulers (rotations, weights, plans, hysteresis bits) advance
//! when they decide, so every path decision is carried out by a data packet. When the datagram being built
//! must go on a path `p` for other work (an acknowledgement, a probe, a PATH_RESPONSE, control frames) and
//! the scheduler names another path `q`, the decision is kept: the datagram goes on `p` without data, and the
//! next datagram carries data on `q` without asking again, before `p`'s work if that is still due, so that
//! neither waits for more than one datagram. A kept decision is dropped (and the scheduler asked again) only
//! when its path can no longer send: abandoned, window or pacer closed, or no data left.
//!
//! **Batched senders.** A caller that sends datagrams in batches (the runtime with GSO: one system call
//! carries datagrams of one size to one destination) tells the connection its batch with
//! [`Connection::set_send_batch`], and every view the scheduler gets carries it as
//! [`ConnView::batch_packets`] (packets of the path's datagram size in one batch). A scheduler that rotates
//! paths packet by packet (round-robin) then gives each path a turn of at least one batch, so each path's
//! datagrams fill a batch and its stream data stays contiguous (whole runs of offsets acknowledged
//! together, fewer holes to reassemble at the receiver), while the rotation, and so its share, is kept.
//! Without a batch (the default, and the simulator) `batch_packets` is 1. A batched sender with a single
//! path reuses the scheduler's answer like a reusable scheduler's (below), whatever the scheduler (unless
//! it counts its answers, below): with one path and a clock that stands still the scheduler has nothing
//! else to decide, and the views it would get cost as much as the rest of the packet's bookkeeping.
//!
//! **Reused answers.** Building a view of every path for every data packet is the largest per-packet cost
//! of a multipath sender. A scheduler that declares its answer reusable
//! ([`Scheduler::reuses_decisions`](crate::sched::Scheduler::reuses_decisions): its answer is a function of
//! the path views alone, and a chosen path that can still send stays chosen) is asked once, and its
//! [`Decision::Path`] is taken again for the next packets, without views, while all of this holds:
//! * no input event reached the connection since the answer: `SchedState::inputs` counts them, bumped by
//!   every call that can change what a view shows (a datagram received: acknowledgements, losses, RTT
//!   samples, path frames, MTU; a timer; a path opened, closed or given another status; a migration; a
//!   penalised path; a new send batch);
//! * the clock `now` is the one of the answer;
//! * every packet sent since went on the chosen path (the connection's packet count minus the path's is
//!   unchanged), and the other paths' windows and pacing rates read the same (no controller moved them);
//! * the chosen path can still carry data, by the connection's test (`can_carry_data`: window and pacer
//!   for a full-sized datagram of the path) and by the scheduler's ([`PathView::can_send`] for the view's
//!   packet size, the first path's datagram size).
//!
//! Then the views the scheduler would get differ from the last ones only in the chosen path's window use,
//! its pacer and the connection's backlog, none of which changes a reusable scheduler's answer; the reused
//! decision is committed exactly as an asked one, and every packet is still reported with `on_sent`.
//!
//! **Counted answers.** A scheduler whose state moves with every answer (round-robin's quotas) may still
//! know its next answers: after a [`Decision::Path`] its
//! [`Scheduler::reusable_answers`](crate::sched::Scheduler::reusable_answers) says how many more questions,
//! asked under the conditions above, would get the same path. The connection then takes the answer again
//! under those conditions while that count is positive, and for each packet calls
//! [`Scheduler::on_answer_reused`](crate::sched::Scheduler::on_answer_reused), which moves the scheduler's
//! state as the question would have. The scheduler's own count is read each time (it is the only count), so
//! the decisions and the state after each are those of asking for every packet; only the views are not
//! built. Round-robin with GSO batches is asked about once per turn instead of once per packet.
//!
//! **Nothing to decide.** A scheduler returns only paths that pass [`PathView::can_send`]; when no path
//! does (every window full, pacer closed or path dead), its answer can only send nothing. A reusable
//! scheduler, which keeps no state, is then not asked at all, and no views are built: the connection reads
//! each path's liveness, window and pacer directly (`no_path_can_send`). Another scheduler is still asked
//! (it may move its state when asked: ECF's waiting bit, BLEST's λ, a rotation).
//!
//! Debug builds ask the scheduler anyway in all these cases and check that it gives the reused answer (and
//! for a counted one, counts one fewer), or sends nothing; for a counted answer the question takes the place
//! of `on_answer_reused`.
//!
//! **Holes first.** Before the scheduler is asked, opportunistic retransmission (`reinject`) may claim the
//! next data packet for a hole that holds the stream: that packet goes on the fastest path that can send,
//! and the kept decision, untouched, waits for the packet after it.

use std::time::Instant;

use crate::cc::PathId;
use crate::sched::{ConnView, Decision, PathView};

use super::Connection;
use super::reinject::ReinjectPlan;

/// The connection's side of the scheduler conversation.
#[derive(Debug)]
pub(super) struct SchedState {
    /// The scheduler's path views, kept to reuse their allocation (rebuilt for every decision).
    views: Vec<PathView>,
    /// A path decision not carried out yet (a [`Decision::Path`] or [`Decision::Paths`]).
    committed: Option<Decision>,
    /// The kept decision was already passed over once for path-bound work on another path.
    deferred: bool,
    /// The STREAM frames written into the packet being built repeated stream data (see
    /// [`Connection::write_data_frames`]); read and cleared when the packet is sealed.
    pub(super) packet_repeats_data: bool,
    /// The last data decision was a hole's copy (`reinject`), not the scheduler's.
    reinjecting: bool,
    /// The datagram being built carries a hole's copy; read and cleared when its data packet is reported.
    reinjection_packet: bool,
    /// The sender's batch ([`Connection::set_send_batch`]).
    batch: SendBatch,
    /// Input events that can change a path view (see the module documentation): a reused answer is valid
    /// only while this count is the one it was given under.
    pub(super) inputs: u64,
    /// The scheduler's last reusable answer.
    reusable: Option<Reusable>,
    /// The windows and pacing rates of the paths other than the reusable answer's, when it was given.
    others: Vec<(PathId, u64, Option<u64>)>,
    /// The view's packet size at the last question.
    packet_size: u64,
    /// Debug builds: check every reused answer against a fresh one (tests that count questions turn it off).
    verify_reuse: bool,
}

/// A scheduler's answer that later packets may reuse without asking (see the module documentation).
#[derive(Debug, Clone, Copy)]
struct Reusable {
    path: PathId,
    /// A counted answer: taken while the scheduler's [`Scheduler::reusable_answers`] is positive, each time
    /// reported with [`Scheduler::on_answer_reused`] (otherwise: no limit, a stateless scheduler or a
    /// single path).
    ///
    /// [`Scheduler::reusable_answers`]: crate::sched::Scheduler::reusable_answers
    /// [`Scheduler::on_answer_reused`]: crate::sched::Scheduler::on_answer_reused
    counted: bool,
    at: Instant,
    inputs: u64,
    packet_size: u64,
    /// Packets sent by the connection on other paths than `path` when the answer was given.
    sent_elsewhere: u64,
}

impl Default for SchedState {
    fn default() -> Self {
        SchedState {
            views: Vec::new(),
            committed: None,
            deferred: false,
            packet_repeats_data: false,
            reinjecting: false,
            reinjection_packet: false,
            batch: SendBatch::default(),
            inputs: 0,
            reusable: None,
            others: Vec::new(),
            packet_size: 1200,
            verify_reuse: cfg!(debug_assertions),
        }
    }
}

/// How many datagrams the sender groups into one batch to one destination.
#[derive(Debug, Clone, Copy)]
struct SendBatch {
    max_datagrams: usize,
    max_bytes: usize,
}

impl Default for SendBatch {
    fn default() -> Self {
        SendBatch {
            max_datagrams: 1,
            max_bytes: usize::MAX,
        }
    }
}

impl SendBatch {
    /// Packets of `packet_size` bytes in one batch (at least 1).
    fn packets(&self, packet_size: u64) -> u64 {
        let by_bytes = u64::try_from(self.max_bytes).unwrap_or(u64::MAX) / packet_size.max(1);
        u64::try_from(self.max_datagrams)
            .unwrap_or(u64::MAX)
            .min(by_bytes)
            .max(1)
    }
}

/// How the datagram being built uses the scheduler's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DataPlan {
    /// The datagram goes on its path without data (the decision, if any, waits for the next one).
    None,
    /// The datagram goes on this path, with data.
    On(PathId),
}

impl Connection {
    /// The first path of the decision for the next data packet: the kept one if its path can still send,
    /// otherwise a new answer of the scheduler (kept until carried out). `None` when no data waits or the
    /// scheduler waits.
    fn data_decision(&mut self, now: Instant) -> Option<PathId> {
        self.sched_state.reinjecting = false;
        self.sched_state.reinjection_packet = false;
        match self.reinject_decision(now) {
            ReinjectPlan::On(p) => {
                self.sched_state.reinjecting = true;
                return Some(p);
            }
            ReinjectPlan::Wait => return None,
            ReinjectPlan::Scheduler => {}
        }
        if let Some(d) = &self.sched_state.committed {
            let first = d.paths().first().copied();
            if first.is_some_and(|p| self.can_carry_data(p, now)) {
                return first;
            }
            self.sched_state.committed = None;
            self.sched_state.deferred = false;
        }
        // The last answer, if nothing it depends on changed (see the module documentation).
        if let Some(p) = self.reused_decision(now) {
            self.take_reused(now, p);
            self.sched_state.committed = Some(Decision::Path(p));
            self.sched_state.deferred = false;
            return Some(p);
        }
        self.sched_state.reusable = None;
        let decision = self.ask_scheduler(now)?;
        let first = decision.paths().first().copied();
        if let Some(p) = first {
            if matches!(decision, Decision::Path(_))
                && let Some(counted) = self.reuse_allowance()
            {
                self.keep_reusable(p, now, counted);
            }
            self.sched_state.committed = Some(decision);
            self.sched_state.deferred = false;
        }
        first
    }

    /// Counts an input event: answers given before it are not reused (see the module documentation).
    pub(super) fn sched_input(&mut self) {
        self.sched_state.inputs = self.sched_state.inputs.wrapping_add(1);
    }

    /// Whether the scheduler's last answer (a [`Decision::Path`]) may be reused, and how: `Some(false)`
    /// without limit, when the scheduler is stateless or the sender batches on a single path (one path
    /// leaves nothing else to decide while the clock stands still); `Some(true)` counted, when the scheduler
    /// gives a count ([`Scheduler::reusable_answers`](crate::sched::Scheduler::reusable_answers)); `None`:
    /// ask for the next packet.
    fn reuse_allowance(&self) -> Option<bool> {
        if self.sched.reuses_decisions() {
            return Some(false);
        }
        if self.sched.reusable_answers() > 0 {
            return Some(true);
        }
        (self.sched_state.batch.max_datagrams > 1 && self.paths.len() == 1).then_some(false)
    }

    /// Packets sent on other paths than `path`.
    fn sent_elsewhere(&self, path: PathId) -> u64 {
        let here = self.paths.get(&path).map_or(0, |p| p.packets_sent);
        self.stats.packets_sent.wrapping_sub(here)
    }

    /// Records the scheduler's answer `path` at `now` for reuse (`counted`: see [`Reusable::counted`]).
    fn keep_reusable(&mut self, path: PathId, now: Instant, counted: bool) {
        let cc = self.cc.as_ref();
        let others = &mut self.sched_state.others;
        others.clear();
        others.extend(
            self.paths
                .ids()
                .filter(|q| *q != path)
                .map(|q| (q, cc.window(q), cc.pacing_rate(q))),
        );
        self.sched_state.reusable = Some(Reusable {
            path,
            counted,
            at: now,
            inputs: self.sched_state.inputs,
            packet_size: self.sched_state.packet_size,
            sent_elsewhere: self.sent_elsewhere(path),
        });
    }

    /// The last answer, if it may be taken again at `now` without asking (see the module documentation).
    fn reused_decision(&self, now: Instant) -> Option<PathId> {
        let r = self.sched_state.reusable?;
        if r.at != now
            || r.inputs != self.sched_state.inputs
            || r.sent_elsewhere != self.sent_elsewhere(r.path)
        {
            return None;
        }
        if r.counted && self.sched.reusable_answers() == 0 {
            return None;
        }
        let cc = self.cc.as_ref();
        let others_same = self.sched_state.others.len() + 1 == self.paths.len()
            && self
                .sched_state
                .others
                .iter()
                .all(|&(q, w, rate)| cc.window(q) == w && cc.pacing_rate(q) == rate);
        // `can_carry_data` (one window read): a datagram of the path's size fits the window and the pacer,
        // and so does the view's packet size, which the scheduler tested (`PathView::can_send`).
        let waiting = self.streams.has_stream_data() || !self.datagrams_out.is_empty();
        let can_send = |p: &super::paths::Path| {
            let size = u64::from(p.mtu).max(r.packet_size);
            p.abandoned_at.is_none()
                && p.validated
                && p.recovery.bytes_in_flight().saturating_add(size) <= cc.window(r.path)
                && p.recovery
                    .next_send_time(now, u64::from(p.mtu), cc)
                    .is_none_or(|t| t <= now)
        };
        (others_same && waiting && self.paths.get(&r.path).is_some_and(can_send)).then_some(r.path)
    }

    /// Takes the reused answer `path` for one more packet. A counted answer is one fewer, and the scheduler
    /// hears of it ([`Scheduler::on_answer_reused`](crate::sched::Scheduler::on_answer_reused)) to move its
    /// state as the question would have; debug builds ask the question instead and check the answer.
    fn take_reused(&mut self, now: Instant, path: PathId) {
        if !self.sched_state.reusable.is_some_and(|r| r.counted) {
            self.verify_reused(now, path);
        } else if cfg!(debug_assertions) && self.sched_state.verify_reuse {
            // One fewer, except `u64::MAX`: no limit.
            let left = match self.sched.reusable_answers() {
                u64::MAX => u64::MAX,
                n => n.saturating_sub(1),
            };
            self.verify_counted(now, path, left);
        } else {
            self.sched.on_answer_reused(path);
        }
    }

    /// Debug builds, a counted answer: asked (which moves its state as a question does), the scheduler
    /// gives the reused answer, and counts one fewer packet left.
    fn verify_counted(&mut self, now: Instant, path: PathId, left: u64) {
        self.ask_expecting(now, path, "counted");
        debug_assert_eq!(
            self.sched.reusable_answers(),
            left,
            "{} counts other packets left than its reused answer",
            self.sched.name()
        );
    }

    /// Debug builds: the scheduler, asked, gives the reused answer (a reusable scheduler keeps no state, so
    /// asking changes nothing).
    fn verify_reused(&mut self, now: Instant, path: PathId) {
        // Only a scheduler that declared reuse is stateless: asking another one (reused on a single path)
        // would move its state.
        if !cfg!(debug_assertions) || !self.sched_state.verify_reuse || !self.sched.reuses_decisions() {
            return;
        }
        self.ask_expecting(now, path, "reused");
    }

    /// Debug builds: asks the scheduler (keeping the reusable answer as it was) and checks that it answers
    /// `path`, the `kind` ("reused", "counted") answer the connection was about to take.
    fn ask_expecting(&mut self, now: Instant, path: PathId, kind: &str) {
        let reusable = self.sched_state.reusable;
        let fresh = self.ask_scheduler(now);
        self.sched_state.reusable = reusable;
        debug_assert_eq!(
            fresh,
            Some(Decision::Path(path)),
            "{} answered otherwise than its {kind} answer",
            self.sched.name()
        );
    }

    /// Tests that count the scheduler's questions: no extra question to check reused answers.
    #[cfg(test)]
    pub(crate) fn set_verify_reuse(&mut self, on: bool) {
        self.sched_state.verify_reuse = on;
    }

    /// The kept decision is carried out by the datagram being built: for a redundant decision its other
    /// paths get copies of the packet's STREAM frames (`duplicate_on`).
    fn take_decision(&mut self) {
        if std::mem::take(&mut self.sched_state.reinjecting) {
            // A hole's copy: the scheduler's kept decision waits for the next packet.
            self.sched_state.reinjection_packet = true;
            return;
        }
        self.sched_state.deferred = false;
        if let Some(Decision::Paths(ps)) = self.sched_state.committed.take() {
            self.paths.set_duplicate_on(ps.iter().skip(1).copied());
        }
    }

    /// Whether a data packet can go on `path` now: live, validated, window and pacer open, data waiting.
    fn can_carry_data(&self, path: PathId, now: Instant) -> bool {
        let waiting = self.streams.has_stream_data() || !self.datagrams_out.is_empty();
        waiting
            && self.paths.get(&path).is_some_and(|p| {
                p.abandoned_at.is_none()
                    && p.validated
                    && p.cwnd_allows(self.cc.as_ref())
                    && p.recovery
                        .next_send_time(now, u64::from(p.mtu), self.cc.as_ref())
                        .is_none_or(|t| t <= now)
            })
    }

    /// The path of the next datagram when nothing else claims one: the path the scheduler chose for data.
    pub(super) fn plan_data_only(&mut self, now: Instant) -> Option<PathId> {
        let p = self.data_decision(now)?;
        self.take_decision();
        Some(p)
    }

    /// The next datagram has work due on `bound` (an acknowledgement, a probe, a path response, control
    /// frames; `may_switch`: other paths may carry data first). It carries data when the decision names
    /// `bound`; when the decision names another path that was already passed over once (and `may_switch`),
    /// the datagram goes there with data instead and `bound`'s work follows in the next one.
    pub(super) fn plan_with_bound_work(&mut self, now: Instant, bound: PathId, may_switch: bool) -> DataPlan {
        match self.data_decision(now) {
            Some(p) if p == bound => {
                self.take_decision();
                DataPlan::On(p)
            }
            Some(p) if may_switch && self.sched_state.deferred => {
                self.take_decision();
                DataPlan::On(p)
            }
            Some(_) => {
                self.sched_state.deferred = true;
                DataPlan::None
            }
            None => DataPlan::None,
        }
    }

    /// Tells the connection how its datagrams are sent: in batches of up to `max_datagrams` datagrams to one
    /// destination and `max_bytes` in all (with GSO: the segments of one system call and the largest UDP
    /// send). Schedulers see it as [`ConnView::batch_packets`] (see the module documentation). The default,
    /// `max_datagrams` 1, is a sender without batches.
    pub fn set_send_batch(&mut self, max_datagrams: usize, max_bytes: usize) {
        self.sched_state.batch = SendBatch {
            max_datagrams: max_datagrams.max(1),
            max_bytes,
        };
        self.sched_input();
    }

    /// Asks the scheduler which path carries new data, if any is waiting and a path can send.
    fn ask_scheduler(&mut self, now: Instant) -> Option<Decision> {
        if self.one_rtt.is_none() || !self.handshake_complete {
            return None;
        }
        if !self.streams.has_stream_data() && self.datagrams_out.is_empty() {
            return None;
        }
        // A scheduler returns only paths that can send (`PathView::can_send`): when none can, its answer
        // sends nothing. Not asking is the same answer only for a scheduler without state (one that reuses
        // its decisions): another one may move its state when asked.
        if self.sched.reuses_decisions() && self.no_path_can_send(now) {
            self.verify_nothing_sendable(now);
            return None;
        }
        self.ask_with_views(now)
    }

    /// Whether no path passes [`PathView::can_send`] for the view's packet size now (not alive, window
    /// full or pacer closed), read from the paths without building their views.
    fn no_path_can_send(&self, now: Instant) -> bool {
        let cc = self.cc.as_ref();
        // The view's packet size: the first path's datagram size (see `ask_with_views`).
        let size = self.paths.values().next().map_or(1200, |p| u64::from(p.mtu));
        self.paths.values().all(|p| {
            p.abandoned_at.is_some()
                || !p.validated
                || p.recovery.bytes_in_flight().saturating_add(size) > cc.window(p.id)
                || p.recovery
                    .next_send_time(now, u64::from(p.mtu), cc)
                    .is_some_and(|t| t > now)
        })
    }

    /// Debug builds: asked, the scheduler indeed sends nothing.
    fn verify_nothing_sendable(&mut self, now: Instant) {
        if !cfg!(debug_assertions) || !self.sched_state.verify_reuse {
            return;
        }
        let fresh = self.ask_with_views(now);
        debug_assert_eq!(fresh, None, "{} sent with no path able to", self.sched.name());
    }

    /// Builds the views and asks the scheduler.
    fn ask_with_views(&mut self, now: Instant) -> Option<Decision> {
        let mut views = std::mem::take(&mut self.sched_state.views);
        self.paths.fill_views(self.cc.as_ref(), now, &mut views);
        let packet_size = views.first().map_or(1200, |v| v.mss);
        self.sched_state.packet_size = packet_size;
        let mut view = ConnView::new(&views, packet_size);
        let (retransmit, sendable) = self.streams.send_backlog();
        // The backlog (ECF's k, OTIAS's unsent data, STTF's send queue): everything waiting to be
        // packetised, this packet included.
        view.bytes_waiting = sendable
            .saturating_add(self.datagrams_out.bytes())
            .max(packet_size);
        view.flow_credit = self.streams.conn_send_credit();
        view.batch_packets = self.sched_state.batch.packets(packet_size);
        // The scheduler places retransmissions too (they may go to another path than the lost packet's).
        view.retransmit_queue = retransmit;
        view.is_retransmission = view.retransmit_queue > 0;
        let decision = if view.is_retransmission {
            self.sched.select_retrans(&view, now)
        } else {
            self.sched.select_send(&view, now)
        };
        self.sched_state.views = views;
        decision.sends().then_some(decision)
    }

    /// Tells the scheduler about a sealed packet that carried STREAM data (`size` bytes on `path`).
    pub(super) fn report_data_packet(&mut self, now: Instant, path: PathId, size: u64) {
        let mtu = self.paths.get(&path).map_or(1200, |p| u64::from(p.mtu));
        let retransmission = std::mem::take(&mut self.sched_state.packet_repeats_data);
        if std::mem::take(&mut self.sched_state.reinjection_packet) && retransmission {
            self.on_reinjection_packet();
        }
        self.sched.on_sent(&crate::sched::SentInfo {
            path,
            bytes: size,
            now,
            retransmission,
            // No further packet of new data fits in the connection-level credit (RFC 9000 §4.1).
            flow_blocked: self.streams.conn_send_credit() < mtu,
        });
    }
}
