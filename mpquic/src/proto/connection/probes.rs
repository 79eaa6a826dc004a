//! PTO probes that carry data (RFC 9002 §6.2.4): "When a PTO timer expires, a sender MUST send at least one
//! ack-eliciting packet in the packet number space as a probe. [...] a sender SHOULD send new data if
//! available [...] If the sender has no new data, it can retransmit data still in flight".
//!
//! The connection keeps the frame records of its ack-eliciting packets that carry retransmittable frames,
//! per path, space and packet number, until the packet is acknowledged or declared lost. When a probe is
//! due and no new data waits, the records of the oldest unacknowledged packets are queued again, so the probe
//! repeats them instead of carrying a bare PING.

use crate::cc::PathId;
use crate::proto::recovery::SpaceId;

use super::Connection;
use super::frames_out::{FrameRecord, Records};

impl Connection {
    /// A packet `pn` of `space` carrying `records` was sent on `path`.
    pub(super) fn remember_sent(&mut self, path: PathId, space: SpaceId, pn: u64, records: &Records) {
        if !records.iter().any(retransmittable) {
            return;
        }
        // `ConnectionLimits::probe_records` bounds the records per path: older ones are forgotten (their
        // probes fall back to PING).
        let cap = self.config.limits.probe_records();
        let Some(p) = self.paths.get_mut(&path) else {
            return;
        };
        while p.unacked.len() >= cap {
            p.unacked.pop_first();
        }
        let kept: Records = records.iter().filter(|r| retransmittable(r)).cloned().collect();
        p.unacked.insert((space as u8, pn), kept);
    }

    /// Packet `pn` of `space` on `path` was acknowledged or declared lost.
    pub(super) fn forget_sent(&mut self, path: PathId, space: SpaceId, pn: u64) {
        if let Some(p) = self.paths.get_mut(&path) {
            p.unacked.remove(&(space as u8, pn));
        }
    }

    /// A space was discarded on `path`.
    pub(super) fn forget_space(&mut self, path: PathId, space: SpaceId) {
        if let Some(p) = self.paths.get_mut(&path) {
            let s = space as u8;
            p.unacked.retain(|(sp, _), _| *sp != s);
        }
    }

    /// The PTO fired for `space` on `path` and asks for `probes` packets: unless new data waits for that
    /// space, queue the frames of the `probes` oldest unacknowledged packets again.
    pub(super) fn prepare_probe(&mut self, path: PathId, space: SpaceId, probes: u8) {
        let new_data = match space {
            SpaceId::Initial => self.crypto.first().is_some_and(|c| c.has_pending()),
            SpaceId::Handshake => self.crypto.get(1).is_some_and(|c| c.has_pending()),
            SpaceId::Data => {
                self.streams.has_stream_data()
                    || !self.datagrams_out.is_empty()
                    || self.crypto.get(2).is_some_and(|c| c.has_pending())
            }
        };
        if new_data {
            return;
        }
        let Some(p) = self.paths.get(&path) else {
            return;
        };
        let s = space as u8;
        let oldest: Vec<Records> = p
            .unacked
            .range((s, 0)..=(s, u64::MAX))
            .take(usize::from(probes.max(1)))
            .map(|(_, r)| r.clone())
            .collect();
        for records in oldest {
            self.on_records_lost(records);
        }
    }
}

/// Whether a record describes a frame worth repeating in a probe.
fn retransmittable(r: &FrameRecord) -> bool {
    !matches!(r, FrameRecord::Ack { .. })
}
