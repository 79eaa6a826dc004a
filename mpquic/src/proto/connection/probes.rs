//! PTO probes that carry data (RFC 9002 §6.2.4): "When a PTO timer expires, a sender MUST send at least one
//! ack-eliciting packet in the packet number space as a probe. [...] a sender SHOULD send new data if
//! available [...] If the sender has no new data, it can retransmit data still in flight".
//!
//! The frame records of every outstanding packet are in the path's sent-packet map (recovery), until the
//! packet is acknowledged or declared lost. When a probe is due and no new data waits, the retransmittable
//! records of the oldest outstanding packets are queued again, so the probe repeats them instead of carrying
//! a bare PING.

use crate::cc::PathId;
use crate::proto::recovery::SpaceId;

use super::Connection;
use super::frames_out::{FrameRecord, Records};

impl Connection {
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
        let oldest = self.outstanding_records(path, space, usize::from(probes.max(1)));
        for records in oldest {
            self.on_records_lost(records);
        }
    }

    /// The retransmittable records of the first `packets` outstanding packets of `space` on `path` that
    /// carry any.
    pub(super) fn outstanding_records(&self, path: PathId, space: SpaceId, packets: usize) -> Vec<Records> {
        let Some(p) = self.paths.get(&path) else {
            return Vec::new();
        };
        p.recovery
            .outstanding_frames(space)
            .filter(|records| records.iter().any(retransmittable))
            .take(packets)
            .map(|records| records.iter().filter(|r| retransmittable(r)).cloned().collect())
            .collect()
    }
}

/// Whether a record describes a frame worth repeating in a probe.
fn retransmittable(r: &FrameRecord) -> bool {
    !matches!(r, FrameRecord::Ack { .. })
}
