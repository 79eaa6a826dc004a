//! Test hooks for fuzzing (feature `fuzzing`): seal an arbitrary 1-RTT payload with this connection's real
//! keys, so that a fuzzer can reach the peer's frame handlers behind packet protection; and open the packets
//! of a datagram addressed to this connection without processing them, so that a seed generator can record
//! the plaintext frames of real traffic.
//!
//! Nothing here is used by the connection itself; the feature is off by default.

use crate::cc::PathId;
use crate::proto::crypto::Level;
use crate::proto::packet::{CoalescedPackets, DecodedPacket, OutgoingHeader, PacketType};
use crate::proto::recovery::SpaceId;

use super::Connection;
use super::send::TAG_LEN;

impl Connection {
    /// Appends to `buf` a 1-RTT packet on `path` whose plaintext payload is `payload` (any bytes: frames or
    /// garbage), protected with the current 1-RTT keys as the peer expects it (the path's current Destination
    /// Connection ID, the next packet number in a 4-byte field, the key phase, the multipath nonce). The packet
    /// number is consumed: it is recorded as skipped, so nothing else is ever sent with it. Short payloads are
    /// padded with PADDING frames up to the header-protection sample. Returns the packet's size, or `None`
    /// before the 1-RTT keys exist, on an unknown path, or when the keys refuse to seal.
    ///
    /// Only for fuzzing and tests: the packet is not tracked by loss recovery.
    pub fn seal_one_rtt_for_fuzzing(
        &mut self,
        path: PathId,
        payload: &[u8],
        buf: &mut Vec<u8>,
    ) -> Option<usize> {
        let parts = self.header_parts(Level::OneRtt, SpaceId::Data, path)?;
        let pn = self
            .paths
            .get_mut(&path)?
            .recovery
            .skip_packet_number(SpaceId::Data)?;
        let header = OutgoingHeader::Short {
            dcid: &parts.dcid,
            spin: false,
            key_phase: self.one_rtt.as_ref()?.key_phase(),
        };
        let start = buf.len();
        let pe = header.encode(pn, 4, buf);
        buf.extend_from_slice(payload);
        let min = start + pe.min_packet_len();
        if buf.len() + TAG_LEN < min {
            buf.resize(min - TAG_LEN, 0);
        }
        buf.resize(buf.len() + TAG_LEN, 0);
        let keys = self.one_rtt.as_mut()?;
        let packet = buf.get_mut(start..)?;
        let sealed = keys
            .seal(path, pn, packet, pe.header_len())
            .and_then(|()| keys.local_header().apply(packet, pe.pn_offset()));
        if sealed.is_err() {
            buf.truncate(start);
            return None;
        }
        Some(buf.len() - start)
    }

    /// Opens every packet of `datagram` (addressed to this connection) that the current keys can open, without
    /// processing it or changing any state but the key-update bookkeeping of a 1-RTT open: for each, its type
    /// and its plaintext payload. Call it before handing the same datagram to
    /// [`handle_datagram`](Self::handle_datagram).
    ///
    /// Only for fuzzing and tests (the seed corpus generator).
    pub fn open_for_fuzzing(&mut self, datagram: &[u8]) -> Vec<(PacketType, Vec<u8>)> {
        let mut out = Vec::new();
        let path_id = self.datagram_path(datagram);
        for item in CoalescedPackets::new(datagram, self.local_cid.len()) {
            let Ok((range, DecodedPacket::Protected(pd))) = item else {
                continue;
            };
            let Some(mut packet) = datagram.get(range).map(<[u8]>::to_vec) else {
                continue;
            };
            let ty = pd.packet_type();
            let pn_offset = pd.pn_offset();
            let opened = match ty {
                PacketType::OneRtt => (|| {
                    let keys = self.one_rtt.as_mut()?;
                    keys.remote_header().remove(&mut packet, pn_offset).ok()?;
                    let header = pd.finish(&packet).ok()?;
                    let pn = header.full_packet_number(self.paths.get(&path_id)?.ack.largest_received());
                    let len = keys
                        .open(path_id, pn, header.key_phase, &mut packet, header.header_len)
                        .ok()?
                        .len;
                    packet
                        .get(header.header_len..header.header_len + len)
                        .map(<[u8]>::to_vec)
                })(),
                PacketType::Initial | PacketType::Handshake => (|| {
                    let level = if ty == PacketType::Initial {
                        Level::Initial
                    } else {
                        Level::Handshake
                    };
                    let space = self.spaces.get(level)?;
                    let keys = space.keys.as_ref()?;
                    keys.remote.header.remove(&mut packet, pn_offset).ok()?;
                    let header = pd.finish(&packet).ok()?;
                    let pn = header.full_packet_number(space.ack.largest_received());
                    let len = keys
                        .remote
                        .packet
                        .open(PathId(0), pn, &mut packet, header.header_len)
                        .ok()?;
                    packet
                        .get(header.header_len..header.header_len + len)
                        .map(<[u8]>::to_vec)
                })(),
                PacketType::ZeroRtt => None,
            };
            if let Some(p) = opened {
                out.push((ty, p));
            }
        }
        out
    }
}
