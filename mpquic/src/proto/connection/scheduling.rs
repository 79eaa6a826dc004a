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
//! path asks the scheduler once per instant (`now`) and sends on while that path's window and pacer allow:
//! with one path and a clock that stands still the scheduler has nothing else to decide, and the views it
//! would get cost as much as the rest of the packet's bookkeeping.
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
#[derive(Debug, Default)]
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
    /// A batched sender on a connection with a single path: that path and the time the scheduler chose it.
    single_path_turn: Option<(PathId, Instant)>,
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
        // A batched sender with a single path: the scheduler chooses once per instant. Until the clock moves
        // nothing it sees changes but that path's window and pacer, which `can_carry_data` checks.
        let single = self.sched_state.batch.max_datagrams > 1 && self.paths.len() == 1;
        if single
            && let Some((p, at)) = self.sched_state.single_path_turn
            && at == now
            && self.can_carry_data(p, now)
        {
            return Some(p);
        }
        self.sched_state.single_path_turn = None;
        let decision = self.ask_scheduler(now)?;
        let first = decision.paths().first().copied();
        if let Some(p) = first {
            self.sched_state.committed = Some(decision);
            self.sched_state.deferred = false;
            if single {
                self.sched_state.single_path_turn = Some((p, now));
            }
        }
        first
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
    }

    /// Asks the scheduler which path carries new data, if any is waiting.
    fn ask_scheduler(&mut self, now: Instant) -> Option<Decision> {
        if self.one_rtt.is_none() || !self.handshake_complete {
            return None;
        }
        if !self.streams.has_stream_data() && self.datagrams_out.is_empty() {
            return None;
        }
        let mut views = std::mem::take(&mut self.sched_state.views);
        self.paths.fill_views(self.cc.as_ref(), now, &mut views);
        let packet_size = views.first().map_or(1200, |v| v.mss);
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
