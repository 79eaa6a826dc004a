//! The [`Scheduler`] trait: the per-connection object that answers "which path carries the next packet".
//!
//! It mirrors the Linux MPTCP `get_send` / `get_retrans` split (upstream Linux MPTCP's scheduler interface) and the
//! callback tables of the out-of-tree kernel and xquic (the out-of-tree Linux MPTCP scheduler interface, §6.4).

use std::time::Instant;

use crate::{AckInfo, ConnView, Decision, LossInfo, PathEvent, SentInfo};

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
