//! Timers: [`Connection::poll_timeout`] is the minimum over the idle timer, the closing/draining period, every
//! path's loss-detection and ACK-delay timers, the long-header ACK timers, pacing, the key-discard timer
//! and the deadline of the next 1-RTT keys; [`Connection::handle_timeout`] fires whatever is due.

use std::time::Instant;

use crate::proto::recovery::{SpaceId, TimeoutOutcome};

use super::Connection;
use super::close::State;

impl Connection {
    /// When [`Connection::handle_timeout`] should be called next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.state {
            State::Closing { deadline, .. } | State::Draining { deadline } => return Some(deadline),
            State::Drained => return None,
            State::Handshake | State::Established => {}
        }
        let mut t: Option<Instant> = None;
        let mut consider = |x: Option<Instant>| {
            if let Some(x) = x {
                t = Some(t.map_or(x, |t| t.min(x)));
            }
        };
        consider(self.idle_deadline());
        consider(self.key_discard_deadline);
        consider(self.one_rtt.as_ref().and_then(|k| k.next_keys_deadline()));
        for s in self.spaces.iter() {
            if s.keys.is_some() {
                consider(s.ack.ack_deadline());
            }
        }
        let data_waiting = self.streams.has_stream_data() || !self.datagrams_out.is_empty();
        // One pass over the paths (this runs after every packet): the path-validation timers
        // (`validation_timeout`), the deletion of abandoned paths (`abandoned_path_timeout`), then the timers
        // of the live paths, path-MTU discovery's raise timer among them.
        for p in self.paths.values() {
            consider(
                p.challenge
                    .as_ref()
                    .map(super::migration::Challenge::next_deadline),
            );
            consider(p.alt.as_ref().map(|a| a.challenge.next_deadline()));
            if p.abandoned_at.is_some() {
                consider(p.abandoned_at);
                continue;
            }
            consider(p.pmtud.as_ref().and_then(|m| m.next_timeout()));
            consider(p.recovery.loss_detection_timer());
            if self.handshake_complete {
                consider(p.ack.ack_deadline());
            }
            if data_waiting && p.cwnd_allows(self.cc.as_ref()) {
                consider(
                    p.recovery
                        .next_send_time(self.last_now(), u64::from(p.mtu), self.cc.as_ref()),
                );
            }
        }
        t
    }

    /// A packet from the peer was received and processed at `now`: the idle timer restarts. Only the time
    /// is stored; the deadline is computed when asked, so the per-packet cost is one store.
    pub(super) fn restart_idle_timer(&mut self, now: Instant) {
        // RFC 9000 §10.1: "An endpoint restarts its idle timer when a packet from its peer is received and
        // processed successfully."
        self.idle_since = now;
        self.idle_pto_floor = true;
        self.idle_sent_since_receive = false;
    }

    /// An ack-eliciting packet was sent at `now`. RFC 9000 §10.1: "An endpoint also restarts its idle timer
    /// when sending an ack-eliciting packet if no other ack-eliciting packets have been sent since last
    /// receiving and processing a packet." So only the first one after a packet from the peer counts:
    /// probes and data sent into silence do not keep the connection alive, and a dead peer is given up one
    /// idle timeout after the last sign of life (plus at most the time to the first packet sent after it).
    ///
    /// The multipath extension keeps this one connection-wide timer (draft-ietf-quic-multipath-21, "Idle
    /// Timeout and Keep-Alives": the idle timeout of RFC 9000 applies when no packet is received on any path;
    /// the draft defines no per-path idle timeout). This connection keeps none either and sends no
    /// keep-alives of its own: a path that stops answering is detected by its PTOs (a potentially failed path
    /// carries no data) and the application may abandon it; nothing else restarts on sending.
    pub(super) fn on_ack_eliciting_sent(&mut self, now: Instant) {
        self.streams.on_packet_sent(now);
        if !self.idle_sent_since_receive {
            self.idle_since = now;
            self.idle_pto_floor = true;
            self.idle_sent_since_receive = true;
        }
    }

    /// When the connection times out for idleness, if it has an idle timeout. RFC 9000 §10.1: "To avoid
    /// excessively small idle timeout periods, endpoints MUST increase the idle timeout period to be at least
    /// three times the current Probe Timeout (PTO)."
    pub(super) fn idle_deadline(&self) -> Option<Instant> {
        let t = self.idle_timeout?;
        let period = if self.idle_pto_floor {
            t.max(self.three_pto())
        } else {
            t
        };
        Some(self.idle_since + period)
    }

    /// A reference time for pacing queries made without `now` (the latest `now` seen).
    fn last_now(&self) -> Instant {
        self.last_now
    }

    /// Fires every timer due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.qlog_sync(super::qlog::Call::Timeout);
        self.last_now = now;
        // Losses, PTOs, abandoned paths: the scheduler's views may change.
        self.sched_input();
        match self.state {
            State::Closing { deadline, .. } | State::Draining { deadline } => {
                if now >= deadline {
                    self.drain();
                }
                return;
            }
            State::Drained => return,
            State::Handshake | State::Established => {}
        }
        if self.idle_deadline().is_some_and(|d| now >= d) {
            self.on_idle_timeout();
            return;
        }
        if self.key_discard_deadline.is_some_and(|d| now >= d) {
            self.key_discard_deadline = None;
            if let Some(k) = self.one_rtt.as_mut() {
                k.discard_previous_keys();
            }
        }
        if let Some(k) = self.one_rtt.as_mut() {
            if k.next_keys_deadline().is_some_and(|d| now >= d) {
                k.prepare_next_keys();
            }
        }
        if self.validation_timeout().is_some_and(|t| now >= t) {
            self.on_validation_timeout(now);
        }
        if self.abandoned_path_timeout().is_some_and(|t| now >= t) {
            self.on_abandoned_path_timeout(now);
        }
        self.mtu_on_timeout(now);
        // Most timeouts are a pacer's release or an acknowledgement's delay: the paths' list (an allocation)
        // only when some loss-detection timer is due.
        let due = |t: Option<Instant>| t.is_some_and(|t| now >= t);
        if !self
            .paths
            .values()
            .any(|p| due(p.recovery.loss_detection_timer()))
        {
            return;
        }
        let ids: Vec<_> = self.paths.id_list();
        for id in ids {
            let Some(p) = self.paths.get_mut(&id) else {
                continue;
            };
            if !due(p.recovery.loss_detection_timer()) {
                continue;
            }
            match p.recovery.on_timeout(now, self.cc.as_mut()) {
                TimeoutOutcome::NotDue => {}
                TimeoutOutcome::Probe { space, probes } => {
                    self.prepare_probe(id, space, probes);
                    self.reinject_if_failed(id);
                }
                TimeoutOutcome::Lost { lost, space, .. } => {
                    self.count_lost(id, &lost);
                    if space == SpaceId::Data {
                        self.mtu_on_ack_and_loss(now, id, &[], &lost);
                    }
                    self.ecn_on_lost(id, lost.len() as u64);
                    for r in lost {
                        self.on_records_lost(r.frames);
                    }
                }
                TimeoutOutcome::AntiDeadlock => {
                    // RFC 9002 §6.2.2.1: the client sends a probe so the server can keep sending.
                    self.anti_deadlock_probe = true;
                }
            }
        }
    }
}
