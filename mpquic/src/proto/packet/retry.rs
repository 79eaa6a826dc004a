//! Retry packets (RFC 9000 §17.2.5) and the Retry pseudo-packet over which the integrity tag is computed
//! (RFC 9001 §5.8). The tag itself (AES-128-GCM with a fixed key) belongs to `crypto`; this module only lays
//! out the bytes.

use bytes::BufMut;

use super::connection_id::ConnectionId;
use super::{PacketDecodeError, VERSION_1};

/// Size of the Retry Integrity Tag (RFC 9001 §5.8: the output of AEAD_AES_128_GCM, 128 bits).
pub const RETRY_INTEGRITY_TAG_LEN: usize = 16;

/// A received Retry packet, borrowing the datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPacket<'a> {
    /// Version (1).
    pub version: u32,
    /// Destination Connection ID (the client's SCID).
    pub dcid: ConnectionId,
    /// Source Connection ID chosen by the server; the client's next Initial goes to it.
    pub scid: ConnectionId,
    /// The Retry Token (never empty: [`RetryPacket`]s with an empty token are not decoded).
    pub token: &'a [u8],
    /// The Retry Integrity Tag.
    pub tag: [u8; RETRY_INTEGRITY_TAG_LEN],
    /// The whole packet without the tag (what the pseudo-packet embeds).
    pub without_tag: &'a [u8],
}

impl<'a> RetryPacket<'a> {
    /// Finishes decoding once the first byte, version and CIDs have been read; `rest` is what follows the SCID.
    pub(crate) fn decode_after_cids(
        packet: &'a [u8],
        version: u32,
        dcid: ConnectionId,
        scid: ConnectionId,
        rest: &'a [u8],
    ) -> Result<Self, PacketDecodeError> {
        let token_len = rest
            .len()
            .checked_sub(RETRY_INTEGRITY_TAG_LEN)
            .ok_or(PacketDecodeError::invalid("Retry shorter than its integrity tag"))?;
        // RFC 9000 §17.2.5.2: "A client MUST discard a Retry packet with a zero-length Retry Token field."
        if token_len == 0 {
            return Err(PacketDecodeError::invalid("Retry with an empty token"));
        }
        let (token, tag) = rest.split_at(token_len);
        let tag = tag
            .try_into()
            .map_err(|_| PacketDecodeError::invalid("Retry tag"))?;
        let without_tag = packet
            .get(..packet.len() - RETRY_INTEGRITY_TAG_LEN)
            .ok_or(PacketDecodeError::invalid("packet truncated"))?;
        Ok(RetryPacket {
            version,
            dcid,
            scid,
            token,
            tag,
            without_tag,
        })
    }

    /// Bytes of the datagram the Retry occupies: all of it.
    pub fn len(&self) -> usize {
        self.without_tag.len() + RETRY_INTEGRITY_TAG_LEN
    }

    /// Always false.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Writes the Retry pseudo-packet for this packet, given the Destination Connection ID of the client's
    /// first Initial (RFC 9001 §5.8). `crypto` computes the expected tag over it and compares with
    /// [`tag`](Self::tag); RFC 9000 §17.2.5.2: "Clients MUST discard Retry packets that have a Retry Integrity
    /// Tag that cannot be validated".
    pub fn pseudo_packet<B: BufMut>(&self, original_dcid: &ConnectionId, buf: &mut B) {
        retry_pseudo_packet(original_dcid, self.without_tag, buf);
    }

    /// The checks a client makes before acting on this Retry (besides the integrity tag).
    /// `processed_initial_or_retry`: whether the client already processed an Initial or Retry from the server.
    pub fn check_client_may_accept(
        &self,
        client_scid: &ConnectionId,
        processed_initial_or_retry: bool,
    ) -> Result<(), PacketDecodeError> {
        // RFC 9000 §17.2.5.2: "After the client has received and processed an Initial or Retry packet from the
        // server, it MUST discard any subsequent Retry packets that it receives."
        if processed_initial_or_retry {
            return Err(PacketDecodeError::invalid(
                "Retry after an Initial or Retry was processed",
            ));
        }
        // The Retry answers the client's Initial, so it is addressed to the client's SCID (RFC 9000 §7.2).
        if &self.dcid != client_scid {
            return Err(PacketDecodeError::invalid(
                "Retry not addressed to this client's SCID",
            ));
        }
        Ok(())
    }
}

/// Writes a Retry packet without its integrity tag (RFC 9000 §17.2.5): append the 16-byte tag computed by
/// `crypto` over [`retry_pseudo_packet`] to finish it. `unused` fills the 4 unused bits ("set to an arbitrary
/// value by the server"). Version 1.
pub fn encode_retry<B: BufMut>(
    dcid: &ConnectionId,
    scid: &ConnectionId,
    token: &[u8],
    unused: u8,
    buf: &mut B,
) {
    buf.put_u8(0xf0 | (unused & 0x0f));
    buf.put_u32(VERSION_1);
    dcid.encode_with_len(buf);
    scid.encode_with_len(buf);
    buf.put_slice(token);
}

/// Writes the Retry pseudo-packet (RFC 9001 §5.8, Figure 8): ODCID Length (8), Original Destination
/// Connection ID, then the Retry packet up to (excluding) the Retry Integrity Tag.
pub fn retry_pseudo_packet<B: BufMut>(original_dcid: &ConnectionId, retry_without_tag: &[u8], buf: &mut B) {
    original_dcid.encode_with_len(buf);
    buf.put_slice(retry_without_tag);
}
