//! The [`Scheduler`] trait: the per-connection object that answers "which path carries the next packet".
//!
//! It mirrors the Linux MPTCP `get_send` / `get_retrans` split (upstream Linux MPTCP's scheduler interface) and the
//! callback tables of the out-of-tree kernel and xquic (the out-of-tree Linux MPTCP scheduler interface, §6.4).

use std::time::Instant;

use crate::{AckInfo, ConnView, Decision, LossInfo, PathEvent, PathId, SentInfo};

/// A packet scheduler. One object per connection; it may keep private per-connection and per-path state
/// (keyed by [`crate::PathId`], in ordered maps or vectors so that results never depend on hash order).
///
/// The connection calls [`Scheduler::select_send`] (new data) or [`Scheduler::select_retrans`]
/// (retransmitted frames) each time it could send a packet, carries out the [`Decision`], and reports what
/// happened through the `on_*` callbacks. See the crate documentation for the sender's side of the contract.
///
/// Rules a scheduler keeps:
/// * return only paths for which [`crate::PathView::can_send`] holds (use [`ConnView::eligible`], which also
///   applies the shared backup and reinjection rules of Linux MPTCP's `mptcp_is_available`);
/// * a decision is a commitment: stateful schedulers (rotations, hysteresis bits) advance their state when
///   they decide, and the connection sends the packet as decided;
/// * read no clock (`now` is an input), use no unseeded randomness, never panic on any view or event
///   sequence (events for unknown paths are ignored).
pub trait Scheduler: Send + std::fmt::Debug {
    /// Registry name of the scheduler (`"minrtt"`, `"blest"`…).
    fn name(&self) -> &'static str;

    /// Chooses the path(s) for a packet of new data (Linux `get_send`).
    fn select_send(&mut self, conn: &ConnView<'_>, now: Instant) -> Decision;

    /// Chooses the path(s) for a packet of retransmitted frames (Linux `get_retrans`); `conn.sent_on` lists
    /// the paths they already went on. Defaults to [`Scheduler::select_send`].
    fn select_retrans(&mut self, conn: &ConnView<'_>, now: Instant) -> Decision {
        self.select_send(conn, now)
    }

    /// Whether the connection may reuse this scheduler's last [`Decision::Path`] for the next packet without
    /// asking again. Default `false`: asked for every packet.
    ///
    /// A scheduler that returns `true` promises that asking again would return the same path whenever
    /// * the connection received nothing, no timer fired and no path was opened, closed or changed status or
    ///   MTU since the answer (so every RTT, window, liveness flag, delivery rate and status is unchanged);
    /// * the clock `now` is the same;
    /// * since the answer, packets were sent only on the chosen path, and it still passes
    ///   [`crate::PathView::can_send`] for the view's packet size.
    ///
    /// Between two such questions the views differ only in the chosen path's `bytes_in_flight` and
    /// `pacing_budget` (and possibly its `cwnd`, which a controller may adjust as it sends), and in the
    /// connection's backlog: [`ConnView::bytes_waiting`], [`ConnView::flow_credit`],
    /// [`ConnView::retransmit_queue`] and with it [`ConnView::is_retransmission`]. So the promise holds for a
    /// scheduler that
    /// 1. keeps no state that [`Scheduler::select_send`], [`Scheduler::select_retrans`] or
    ///    [`Scheduler::on_sent`] change (its answer is a function of the views);
    /// 2. answers new data and retransmissions alike and reads none of the backlog fields above (nor
    ///    `batch_packets`);
    /// 3. reads the chosen path's window and bytes in flight only through [`crate::PathView::can_send`] /
    ///    [`crate::PathView::may_send`] (directly or through [`ConnView::eligible`]): a chosen path that
    ///    still can send stays chosen when its free window shrinks.
    ///
    /// The connection still reports every packet with [`Scheduler::on_sent`] and asks again after any input
    /// event. A scheduler that opts in without all three properties would see packets placed where it would
    /// not have placed them: keep the default unless each one holds.
    fn reuses_decisions(&self) -> bool {
        false
    }

    /// How many of the next questions would get the last answer again, a [`Decision::Path`], by a scheduler
    /// whose state moves with every answer (a rotation's quota): the connection may then take that path
    /// for up to this many further packets without asking, and reports each with
    /// [`Scheduler::on_answer_reused`] instead. Default 0: no answer is reused this way. Not consulted when
    /// [`Scheduler::reuses_decisions`] is `true` (such answers are reused without a count).
    ///
    /// The count is a promise under the conditions of [`Scheduler::reuses_decisions`] (no input event, the
    /// same clock, packets sent only on the chosen path, which still passes [`crate::PathView::can_send`]),
    /// except that the scheduler's own state moves with every answer. Precisely: if the last question got
    /// `Decision::Path(p)` and this returns `n`, then for every `k ≤ n`, asking `k` more times with views
    /// that differ from the last one only as listed under [`Scheduler::reuses_decisions`] (with
    /// [`Scheduler::on_sent`] reports of the packets in between) would answer `Decision::Path(p)` each time;
    /// and calling [`Scheduler::on_answer_reused`]`(p)` instead of asking leaves the scheduler in the state
    /// asking would have left it in, with this count one lower (`u64::MAX` means no limit and stays
    /// `u64::MAX`). So the decisions, and the scheduler's state after each, are those of asking for every
    /// packet.
    ///
    /// The connection reads the count after an answer and before taking it again each time, so any other
    /// call (`on_ack`, `on_loss`, `on_path_event`, a question answered otherwise) may end it by returning 0;
    /// the connection asks again after any input event whatever the count.
    fn reusable_answers(&self) -> u64 {
        0
    }

    /// The connection took the last answer, `Decision::Path(path)`, for one more packet without asking (see
    /// [`Scheduler::reusable_answers`]): advance the state exactly as answering the question would have.
    /// The packet is reported with [`Scheduler::on_sent`] as usual, once it is sent.
    fn on_answer_reused(&mut self, _path: PathId) {}

    /// A packet was sent (after a decision, or by the connection on its own: probes, ACK-only packets).
    fn on_sent(&mut self, _sent: &SentInfo) {}

    /// Bytes were acknowledged on a path.
    fn on_ack(&mut self, _ack: &AckInfo) {}

    /// Bytes were declared lost on a path.
    fn on_loss(&mut self, _loss: &LossInfo) {}

    /// A path was added, validated, changed status, was abandoned or removed.
    fn on_path_event(&mut self, _event: &PathEvent) {}
}

/// Asks `scheduler` about the packet described by `conn`: [`Scheduler::select_retrans`] when
/// `conn.is_retransmission`, else [`Scheduler::select_send`].
pub fn select(scheduler: &mut dyn Scheduler, conn: &ConnView<'_>, now: Instant) -> Decision {
    if conn.is_retransmission {
        scheduler.select_retrans(conn, now)
    } else {
        scheduler.select_send(conn, now)
    }
}
