//! Datagram-level rules: splitting a datagram into coalesced packets (RFC 9000 §12.2) and the 1200-byte
//! minimum for datagrams that carry Initial packets (RFC 9000 §14.1).

use std::ops::Range;

use super::PacketDecodeError;
use super::connection_id::ConnectionId;
use super::header::DecodedPacket;

/// RFC 9000 §14.1: "the smallest allowed maximum datagram size of 1200 bytes".
pub const MIN_INITIAL_DATAGRAM_SIZE: usize = 1200;

/// How many bytes of padding a client must add to a datagram of `datagram_len` bytes that carries an Initial
/// packet (RFC 9000 §14.1: "A client MUST expand the payload of all UDP datagrams carrying Initial packets to
/// at least the smallest allowed maximum datagram size of 1200 bytes by adding PADDING frames to the Initial
/// packet or by coalescing the Initial packet"). A server needs the same for ack-eliciting Initials.
pub const fn initial_padding_needed(datagram_len: usize) -> usize {
    MIN_INITIAL_DATAGRAM_SIZE.saturating_sub(datagram_len)
}

/// The check a server makes before processing an Initial packet carried in a `datagram_len`-byte datagram.
pub fn check_initial_datagram_size(datagram_len: usize) -> Result<(), PacketDecodeError> {
    // RFC 9000 §14.1: "A server MUST discard an Initial packet that is carried in a UDP datagram with a payload
    // that is smaller than the smallest allowed maximum datagram size of 1200 bytes."
    if datagram_len < MIN_INITIAL_DATAGRAM_SIZE {
        return Err(PacketDecodeError::invalid(
            "Initial in a datagram under 1200 bytes",
        ));
    }
    Ok(())
}

/// Iterates over the packets coalesced in a datagram (RFC 9000 §12.2).
///
/// Each item is the packet's byte range in the datagram and its decoded visible header, or the reason the
/// packet is dropped. A long-header packet ends where its Length field says; a short-header, Retry or Version
/// Negotiation packet takes the rest. After a packet whose end cannot be found the iteration stops; a packet
/// with a different Destination Connection ID than the first is reported as an error and skipped
/// (RFC 9000 §12.2: "Receivers SHOULD ignore any subsequent packets with a different Destination Connection ID
/// than the first packet in the datagram.").
///
/// The items borrow the datagram; to unprotect packets in place, collect the ranges first or loop with
/// [`DecodedPacket::decode`] on `&datagram[offset..]` directly.
#[derive(Debug, Clone)]
pub struct CoalescedPackets<'a> {
    datagram: &'a [u8],
    offset: usize,
    local_cid_len: usize,
    first_dcid: Option<ConnectionId>,
}

impl<'a> CoalescedPackets<'a> {
    /// Splits `datagram`; `local_cid_len` is the length of this endpoint's connection IDs (for short headers).
    pub fn new(datagram: &'a [u8], local_cid_len: usize) -> Self {
        CoalescedPackets {
            datagram,
            offset: 0,
            local_cid_len,
            first_dcid: None,
        }
    }
}

impl<'a> Iterator for CoalescedPackets<'a> {
    type Item = Result<(Range<usize>, DecodedPacket<'a>), PacketDecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.datagram.get(self.offset..).filter(|r| !r.is_empty())?;
        let packet = match DecodedPacket::decode(rest, self.local_cid_len) {
            Ok(p) => p,
            Err(e) => {
                self.offset = self.datagram.len();
                return Some(Err(e));
            }
        };
        let start = self.offset;
        // `len()` is at least 1 and at most `rest.len()`, so the iteration always advances.
        self.offset = start + packet.len().clamp(1, rest.len());
        let dcid = ConnectionId::new(packet.dcid()).unwrap_or_default();
        match self.first_dcid {
            None => self.first_dcid = Some(dcid),
            Some(first) if first != dcid => {
                return Some(Err(PacketDecodeError::invalid(
                    "coalesced packet with a different DCID",
                )));
            }
            Some(_) => {}
        }
        Some(Ok((start..self.offset, packet)))
    }
}
