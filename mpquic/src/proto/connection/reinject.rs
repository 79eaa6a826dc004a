//! Opportunistic retransmission and penalisation: a multipath sender does not let one slow path's packet
//! hold back the whole stream.
//!
//! The receiver delivers a stream in order, so a packet stuck on a slow (or slowly read) path is a hole
//! that every byte sent after it waits behind; the sender keeps filling the fast path until its send buffer
//! or the peer's flow-control window is full of data above the hole, and then stalls. Raiciu, Paasch,
//! Barré, Ford, Honda, Duchêne, Bonaventure and Handley, "How Hard Can It Be? Designing and Implementing a
//! Deployable Multipath TCP" (NSDI 2012, §4.2), answer with two mechanisms, which Linux MPTCP applies when the
//! connection is receive-window limited:
//! * **opportunistic retransmission**: the data that blocks the window is sent again on a path that has
//!   room (here the usable path with the lowest smoothed RTT that can send now, never the one holding it);
//! * **penalisation**: the path that held it has its congestion window reduced, at most once per its RTT,
//!   so that it carries less of what comes next.
//!
//! Here a hole is an unacknowledged range of a sending stream with data acknowledged above it; the holes are
//! re-sent lowest first, each once (every byte at most once by this mechanism), when
//! * (a) the sender is held by the peer's flow control (MAX_DATA or the stream's MAX_STREAM_DATA) while
//!   data waits — Linux's trigger; or
//! * (b) the bytes acknowledged above the stream's lowest unacknowledged offset reach
//!   [`ReinjectionConfig::ack_threshold`] — the hole holds
//!   the send buffer even while flow control does not bind yet (a peer with a large window).
//!
//! Only with two or more usable paths (validated, not abandoned, not backup, not potentially failed), only
//! onto another path than the holder (the one with the lowest smoothed RTT), and only when the copy helps: it
//! is expected back
//! before the original, or the original is overdue (older than its path's probe timeout; a packet that only
//! waits its path's normal round trip is left alone). The repeated bytes go out before new data,
//! like lost data; the stream receiver drops what it already has (RFC 9000 §2.2: "Data that has already been
//! received can be discarded"), so nothing is lost by sending twice. The mechanism is connection-level: it
//! works under every scheduler, which keeps choosing the paths of everything else.
//!
//! `docs/reinjection.md` has the measurements and the choice of the default threshold.

use std::collections::BTreeMap;
use std::ops::Range;
use std::time::{Duration, Instant};

use crate::cc::{CongestionEvent, PathId};
use crate::proto::recovery::SpaceId;
use crate::proto::streams::{SendProgress, StreamId};
use crate::sched::PathStatus;

use super::Connection;
use super::frames_out::FrameRecord;

/// Packets of a path scanned (oldest first) to find the one that carries a hole's first byte.
const HOLDER_SCAN: usize = 1024;

/// Smallest explicit [`ReinjectionConfig::ack_threshold`]: one full-size packet.
pub const MIN_ACK_THRESHOLD: u64 = 1200;
/// Largest explicit [`ReinjectionConfig::ack_threshold`]: the largest stream offset (RFC 9000 §4.5, 2^62 − 1).
pub const MAX_ACK_THRESHOLD: u64 = (1 << 62) - 1;
/// The automatic threshold is this fraction (1/N) of the send buffer.
pub const AUTO_THRESHOLD_DIVISOR: u64 = 8;

/// Opportunistic retransmission and penalisation settings ([`TransportConfig::reinjection`]).
///
/// [`TransportConfig::reinjection`]: super::TransportConfig::reinjection
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReinjectionConfig {
    /// Re-send holes on a faster path (default true). Acts only while two or more paths are usable, so a
    /// single-path connection is unaffected.
    pub enabled: bool,
    /// Bytes acknowledged above a hole that trigger its retransmission (trigger (b) of the module doc).
    /// `None` (default): an eighth of the stream send buffer (`StreamsConfig::send_buffer`; 1 MiB for the
    /// default 8 MiB), so a hole never holds more than about an eighth of what the sender may have
    /// outstanding before it is repaired. Range when set: [`MIN_ACK_THRESHOLD`]..=[`MAX_ACK_THRESHOLD`].
    pub ack_threshold: Option<u64>,
    /// Also re-send a hole whenever the peer's flow control holds the sender (trigger (a), Linux's; default
    /// true).
    pub on_flow_control: bool,
    /// Reduce the congestion window of the path that held the hole, at most once per its smoothed RTT
    /// (default true; see `CongestionController::on_penalize`).
    pub penalise: bool,
}

impl Default for ReinjectionConfig {
    fn default() -> Self {
        ReinjectionConfig {
            enabled: true,
            ack_threshold: None,
            on_flow_control: true,
            penalise: true,
        }
    }
}

/// A setting of [`ReinjectionConfig`] outside its range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ReinjectionConfigError {
    /// `ack_threshold` is outside [`MIN_ACK_THRESHOLD`]..=[`MAX_ACK_THRESHOLD`].
    #[error("reinjection.ack_threshold = {0} is outside {MIN_ACK_THRESHOLD}..={MAX_ACK_THRESHOLD}")]
    AckThreshold(u64),
}

impl ReinjectionConfig {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), ReinjectionConfigError> {
        match self.ack_threshold {
            Some(t) if !(MIN_ACK_THRESHOLD..=MAX_ACK_THRESHOLD).contains(&t) => {
                Err(ReinjectionConfigError::AckThreshold(t))
            }
            _ => Ok(()),
        }
    }

    /// The threshold in force for a stream send buffer of `send_buffer` bytes.
    pub fn threshold(&self, send_buffer: u64) -> u64 {
        self.ack_threshold
            .unwrap_or(send_buffer / AUTO_THRESHOLD_DIVISOR)
            .max(MIN_ACK_THRESHOLD)
    }
}

/// Counters of opportunistic retransmission ([`ConnectionStats::reinjection`](super::ConnectionStats)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReinjectionStats {
    /// Holes re-sent (each once).
    pub holes: u64,
    /// How many of them fired because flow control held the sender (trigger (a)); the others reached the
    /// acknowledgement threshold.
    pub on_flow_control: u64,
    /// Stream bytes queued for sending again (the extra bytes, unless acknowledged before they left).
    pub bytes: u64,
    /// Packets that carried re-sent holes.
    pub packets: u64,
    /// Paths penalised (window reductions).
    pub penalisations: u64,
}

/// A hole being re-sent: which stream range, and the path it goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pending {
    stream: StreamId,
    range: Range<u64>,
    /// The path holding it (if found), which the copy avoids.
    holder: Option<PathId>,
}

/// The connection's opportunistic-retransmission state.
#[derive(Debug, Default)]
pub(super) struct ReinjectState {
    /// The hole being re-sent, until all its bytes left.
    pending: Option<Pending>,
    /// When each path was last penalised.
    penalised_at: BTreeMap<PathId, Instant>,
    /// A due hole whose original is on time: (stream, hole start, when it becomes overdue). It is not looked
    /// at again before then (finding its packet scans the holder's outstanding packets).
    on_time: Option<(StreamId, u64, Instant)>,
    /// The counters.
    pub(super) stats: ReinjectionStats,
}

/// What the next data packet does about holes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReinjectPlan {
    /// Nothing to re-send: the scheduler decides.
    Scheduler,
    /// A hole is re-sent in a packet on this path.
    On(PathId),
    /// A hole waits for its path's window or pacer: no other data goes first.
    Wait,
}

/// Where a hole's copy may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// No usable path other than the holder.
    None,
    /// The fastest such path, which can send now.
    Now(PathId),
    /// The fastest such path cannot send now.
    Later,
}

/// Why a hole is re-sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Trigger {
    /// The peer's flow control holds the sender.
    FlowControl,
    /// The data acknowledged above the hole reached the threshold.
    AckThreshold,
}

/// Whether a hole of a stream with progress `p` is to be re-sent now (`conn_blocked`: the connection-level
/// credit is used up), and why. Pure, for the unit tests.
pub(super) fn trigger(
    p: &SendProgress,
    conn_blocked: bool,
    threshold: u64,
    on_flow_control: bool,
) -> Option<Trigger> {
    // Nothing left to re-send: no hole above what was already re-sent.
    p.next_hole?;
    if on_flow_control && p.has_unsent && (p.credit_blocked || conn_blocked) {
        return Some(Trigger::FlowControl);
    }
    (p.acked_above >= threshold).then_some(Trigger::AckThreshold)
}

impl Connection {
    /// Where sending on stream `id` stands (lowest unacknowledged offset, highest offset sent, bytes
    /// acknowledged above the lowest hole); `None` without a sending part.
    pub fn send_progress(&self, id: StreamId) -> Option<SendProgress> {
        self.streams.send_progress(id)
    }

    /// Whether `p` can take part: validated, live, available (not backup), not potentially failed.
    fn reinject_usable(&self, p: PathId) -> bool {
        self.paths.get(&p).is_some_and(|x| {
            x.abandoned_at.is_none()
                && x.validated
                && x.status == PathStatus::Available
                && x.recovery.pto_count() < super::paths::POTENTIALLY_FAILED_PTOS
        })
    }

    /// Whether `p`'s window and pacer let a full-size packet go now.
    fn reinject_can_send(&self, p: PathId, now: Instant) -> bool {
        self.paths.get(&p).is_some_and(|x| {
            x.cwnd_allows(self.cc.as_ref())
                && x.recovery
                    .next_send_time(now, u64::from(x.mtu), self.cc.as_ref())
                    .is_none_or(|t| t <= now)
        })
    }

    fn srtt(&self, p: PathId) -> Duration {
        self.paths
            .get(&p)
            .map_or(Duration::MAX, |x| x.recovery.rtt().smoothed())
    }

    /// The path for a copy of a hole held by `holder`: the usable path other than the holder with the lowest
    /// smoothed RTT. It need not be faster than the holder by its estimate: a held path's smoothed RTT can
    /// lag behind the hold (its few samples come from packets that did get through), so whether the copy
    /// helps is judged from the original's age ([`Connection::copy_helps`]); as in Linux MPTCP, only the
    /// penalty requires the holder to be the slower path.
    fn reinject_target(&self, holder: Option<PathId>, now: Instant) -> Target {
        let best = self
            .paths
            .ids()
            .filter(|p| Some(*p) != holder && self.reinject_usable(*p))
            .min_by_key(|p| (self.srtt(*p), *p));
        match best {
            None => Target::None,
            Some(p) if self.reinject_can_send(p, now) => Target::Now(p),
            Some(_) => Target::Later,
        }
    }

    /// The path whose oldest outstanding packets carry byte `offset` of stream `id`, and when that packet was
    /// sent (slowest paths first: the holder is usually the slow one, and its hole packet among its oldest).
    fn hole_holder(&self, id: StreamId, offset: u64) -> Option<(PathId, Instant)> {
        let mut paths: Vec<PathId> = self.paths.id_list();
        paths.sort_by_key(|p| std::cmp::Reverse(self.srtt(*p)));
        paths.into_iter().find_map(|p| {
            let x = self.paths.get(&p)?;
            x.recovery
                .outstanding_sent(SpaceId::Data)
                .take(HOLDER_SCAN)
                .find(|(_, records)| {
                    records.iter().any(|r| {
                        matches!(r, FrameRecord::Stream(s) if s.id == id && s.offset <= offset
                            && offset < s.offset.saturating_add(s.len))
                    })
                })
                .map(|(sent, _)| (p, sent))
        })
    }

    /// Whether a copy on `target` helps a hole whose packet left on `holder` at `sent`: the copy is expected
    /// back before the original (`age + srtt(target) < srtt(holder)`), or the original is overdue: older than
    /// its path's probe timeout, RFC 9002 §6.2.1 "smoothed_rtt + max(4*rttvar, kGranularity) +
    /// max_ack_delay", the longest an acknowledgement may normally take.
    fn copy_helps(&self, holder: PathId, sent: Instant, target: PathId, now: Instant) -> bool {
        let Some(h) = self.paths.get(&holder) else {
            return true;
        };
        let age = now.saturating_duration_since(sent);
        let overdue = h.recovery.pto(SpaceId::Data);
        age >= overdue || age.saturating_add(self.srtt(target)) < h.recovery.rtt().smoothed()
    }

    /// The path the next data packet must take to re-send a hole, if one is being re-sent or is due now.
    /// Called before the scheduler is asked.
    pub(super) fn reinject_decision(&mut self, now: Instant) -> ReinjectPlan {
        if !self.config.reinjection.enabled || self.one_rtt.is_none() || !self.handshake_complete {
            return ReinjectPlan::Scheduler;
        }
        if let Some(p) = self.reinject.pending.clone() {
            if self.streams.resend_waiting(p.stream, p.range.clone()) {
                match self.reinject_target(p.holder, now) {
                    Target::Now(path) => return ReinjectPlan::On(path),
                    Target::Later => return ReinjectPlan::Wait,
                    // No other usable path any more: the scheduler places it like lost data.
                    Target::None => {}
                }
            }
            self.reinject.pending = None;
        }
        if !self.streams.has_holes() {
            return ReinjectPlan::Scheduler;
        }
        let usable = self.paths.ids().filter(|p| self.reinject_usable(*p)).count();
        if usable < 2 {
            return ReinjectPlan::Scheduler;
        }
        let cfg = self.config.reinjection;
        let threshold = cfg.threshold(self.config.streams.send_buffer);
        let mtu = self.paths.min_mtu().map_or(1200, u64::from);
        let conn_blocked = self.streams.conn_credit_below(mtu);
        let due = self
            .streams
            .holes()
            .find_map(|(id, p)| Some((id, p, trigger(&p, conn_blocked, threshold, cfg.on_flow_control)?)));
        let Some((id, progress, why)) = due else {
            return ReinjectPlan::Scheduler;
        };
        let first = progress.next_hole.map_or(progress.acked_prefix, |h| h.0);
        if self
            .reinject
            .on_time
            .is_some_and(|(s, at, until)| s == id && at == first && now < until)
        {
            return ReinjectPlan::Scheduler;
        }
        let found = self.hole_holder(id, first);
        let holder = found.map(|(p, _)| p);
        let Target::Now(target) = self.reinject_target(holder, now) else {
            // No other usable path, or it cannot send now: try again at the next packet.
            return ReinjectPlan::Scheduler;
        };
        if let Some((h, sent)) = found {
            if !self.copy_helps(h, sent, target, now) {
                // The original is on its way and should arrive first: look again once it is overdue.
                let until = self
                    .paths
                    .get(&h)
                    .map_or(now, |x| sent + x.recovery.pto(SpaceId::Data));
                self.reinject.on_time = Some((id, first, until));
                return ReinjectPlan::Scheduler;
            }
        }
        let Some((range, bytes)) = self.streams.reinject(id) else {
            return ReinjectPlan::Scheduler;
        };
        tracing::debug!(
            stream = id.into_inner(),
            ?range,
            bytes,
            ?holder,
            ?target,
            ?why,
            "re-sending a hole on another path"
        );
        let stats = &mut self.reinject.stats;
        stats.holes += 1;
        stats.bytes = stats.bytes.saturating_add(bytes);
        if why == Trigger::FlowControl {
            stats.on_flow_control += 1;
        }
        // NSDI 2012 §4.2 / Linux MPTCP: the holder is penalised only if it is the slower path: by its smoothed
        // RTT, or by this packet, overdue (older than the holder's probe timeout) where its estimate lags.
        let overdue = found.is_some_and(|(h, sent)| {
            self.paths
                .get(&h)
                .is_some_and(|x| now.saturating_duration_since(sent) >= x.recovery.pto(SpaceId::Data))
        });
        if let Some(h) = holder.filter(|h| cfg.penalise && (overdue || self.srtt(*h) > self.srtt(target))) {
            self.penalise(h, now);
        }
        self.reinject.pending = Some(Pending {
            stream: id,
            range,
            holder,
        });
        ReinjectPlan::On(target)
    }

    /// Reduces `path`'s congestion window for holding a hole, unless it was penalised less than one smoothed
    /// RTT ago (NSDI 2012 §4.2: "at most once per RTT").
    fn penalise(&mut self, path: PathId, now: Instant) {
        let Some(p) = self.paths.get(&path) else {
            return;
        };
        // Linux MPTCP halves a slow-starting subflow's window but keeps its slow-start threshold ("If in slow
        // start, do not reduce the ssthresh"), so the path goes on searching for its rate. A congestion event
        // would end the search (CUBIC's ssthresh drops to 0.7 of a window that is still growing, and on a long
        // path the window takes many seconds to come back), so a path still in slow start (BBR: startup) is not
        // penalised here.
        if matches!(self.cc.state(path), Some("slow_start" | "startup")) {
            return;
        }
        let rtt = p.recovery.rtt();
        if self
            .reinject
            .penalised_at
            .get(&path)
            .is_some_and(|t| now.saturating_duration_since(*t) < rtt.smoothed())
        {
            return;
        }
        let ev = CongestionEvent {
            path,
            now,
            sent_time: now,
            lost_bytes: 0,
            // At most half the window (see `on_penalize`): Linux halves the window whatever the controller.
            bytes_in_flight: p.recovery.bytes_in_flight().min(self.cc.window(path) / 2),
            persistent_congestion: false,
            ecn: false,
            rtt: rtt.snapshot(),
        };
        self.cc.on_penalize(&ev);
        self.sched_input();
        self.reinject.penalised_at.insert(path, now);
        self.reinject.penalised_at.retain(|p, _| self.paths.contains(p));
        self.reinject.stats.penalisations += 1;
        tracing::debug!(
            path = path.0,
            window = self.cc.window(path),
            "penalised a path holding a hole"
        );
    }

    /// A data packet that carried a re-sent hole was sealed.
    pub(super) fn on_reinjection_packet(&mut self) {
        self.reinject.stats.packets += 1;
    }
}
