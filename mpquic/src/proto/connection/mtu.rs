//! The connection's side of path MTU discovery: which path probes when, what acknowledgements and losses
//! tell each path's search ([`super::pmtud`]), and what a new path MTU changes (the path's packet size, the
//! pacer's burst, the congestion controller's segment size, qlog).
//!
//! Each path searches on its own (draft-ietf-quic-multipath-21 keeps path state per path): a path probes
//! once the handshake is confirmed, the path is validated, live and not in PTO backoff, and its congestion
//! window and pacer have room for the probe (probes count in bytes in flight; their loss is no congestion signal, see
//! `PathRecovery::set_mtu_probe`). A path whose peer address changes IP starts again at
//! `TransportConfig::max_udp_payload` and searches anew: its MTU belongs to the old network path, like the
//! RTT estimate and congestion window that RFC 9000 §9.4 resets then.

use std::time::Instant;

use crate::cc::PathId;
use crate::proto::recovery::{PacketRecord, SpaceId};

use super::Connection;
use super::frames_out::Records;
use super::pmtud::{BASE_PLPMTU, MtuChange, Pmtud};

impl Connection {
    /// The path and size of a path-MTU probe to send now, if any (discovery state is created here, the first
    /// time a path may probe).
    pub(super) fn mtu_probe_due(&mut self, now: Instant) -> Option<(PathId, u16)> {
        let config = self.config.mtu_discovery?;
        if !self.handshake_confirmed || self.one_rtt.is_none() {
            return None;
        }
        let peer_max = self.peer_params.as_ref()?.max_udp_payload_size.into_inner();
        let cc = self.cc.as_ref();
        for p in self.paths.values_mut() {
            // A path in PTO backoff sends its loss-detection probes first (an MTU probe would count as one
            // of them, being ack-eliciting, and is the packet most likely to be lost).
            if p.abandoned_at.is_some()
                || !p.validated
                || p.challenge.is_some()
                || p.recovery.pto_count() > 0
                || p.recovery.pending_probes(SpaceId::Data) > 0
            {
                continue;
            }
            let mtu = p.mtu;
            let Some(size) = p
                .pmtud
                .get_or_insert_with(|| Pmtud::new(config, mtu, peer_max))
                .poll_probe(now)
            else {
                continue;
            };
            let size64 = u64::from(size);
            if p.recovery.bytes_in_flight().saturating_add(size64) > cc.window(p.id) {
                continue;
            }
            if p.recovery
                .next_send_time(now, size64, cc)
                .is_some_and(|t| t > now)
            {
                continue;
            }
            return Some((p.id, size));
        }
        None
    }

    /// The probe of `path` was sealed as packet `pn`.
    pub(super) fn on_mtu_probe_sent(&mut self, path: PathId, pn: u64) {
        if let Some(p) = self.paths.get_mut(&path) {
            p.recovery.set_mtu_probe(pn);
            if let Some(m) = p.pmtud.as_mut() {
                m.on_probe_sent(pn);
            }
        }
    }

    /// The largest datagram for a packet on `path` whose plan allows `max_size`: loss-detection probes of
    /// the application-data space stay at BASE_PLPMTU while the path's MTU is above it, so that a path that
    /// stopped carrying large packets still acknowledges them (and black-hole detection learns of the loss).
    pub(super) fn pto_probe_size_cap(&self, path: PathId, max_size: usize) -> usize {
        let Some(p) = self.paths.get(&path) else {
            return max_size;
        };
        if p.pmtud.is_some() && p.mtu > BASE_PLPMTU && p.recovery.pending_probes(SpaceId::Data) > 0 {
            max_size.min(usize::from(BASE_PLPMTU))
        } else {
            max_size
        }
    }

    /// One acknowledgement or loss-timer pass of `path`'s application-data space: acknowledged packets
    /// first (they may clear a black-hole suspicion), then the lost ones as one loss event.
    pub(super) fn mtu_on_ack_and_loss(
        &mut self,
        now: Instant,
        path: PathId,
        acked: &[PacketRecord<Records>],
        lost: &[PacketRecord<Records>],
    ) {
        let Some(m) = self.paths.get_mut(&path).and_then(|p| p.pmtud.as_mut()) else {
            return;
        };
        let mut change = None;
        for r in acked {
            if let Some(c) = m.on_acked(now, r.pn, r.size) {
                change = Some(c);
            }
        }
        if !lost.is_empty() {
            if let Some(c) = m.on_lost(now, lost.iter().map(|r| (r.pn, r.size))) {
                change = Some(c);
            }
        }
        if let Some(c) = change {
            self.apply_mtu_change(now, path, c);
        }
    }

    /// The path's MTU changed: its packets, pacer and controller follow.
    fn apply_mtu_change(&mut self, now: Instant, path: PathId, change: MtuChange) {
        let Some(p) = self.paths.get_mut(&path) else {
            return;
        };
        p.mtu = change.new;
        p.recovery.set_max_datagram_size(change.new);
        self.cc.on_max_datagram_size(path, change.new);
        if change.black_hole {
            self.stats.mtu_black_holes += 1;
            tracing::debug!(
                path = path.0,
                old = change.old,
                "path MTU black hole: back to 1200 bytes"
            );
        } else {
            tracing::debug!(
                path = path.0,
                old = change.old,
                new = change.new,
                "path MTU raised"
            );
        }
        self.qlog_mtu_updated(now, path, change);
    }

    /// Raise timers that expired: their paths start a new search (so that the timer does not stay in the
    /// past while no datagram can be sent).
    pub(super) fn mtu_on_timeout(&mut self, now: Instant) {
        for p in self.paths.values_mut() {
            if let Some(m) = p.pmtud.as_mut() {
                if m.next_timeout().is_some_and(|t| now >= t) {
                    let _ = m.poll_probe(now);
                }
            }
        }
    }

    /// `path` moved to another network path: it starts again at the configured size and searches anew.
    pub(super) fn mtu_on_path_change(&mut self, path: PathId) {
        let mtu = self.config.max_udp_payload;
        if let Some(p) = self.paths.get_mut(&path) {
            if p.pmtud.take().is_some() && p.mtu != mtu {
                p.mtu = mtu;
                p.recovery.set_max_datagram_size(mtu);
            }
        }
    }
}
