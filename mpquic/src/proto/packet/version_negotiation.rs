//! Version Negotiation packets (RFC 9000 §6 and §17.2.1; RFC 8999 §6): building the server's answer to an
//! unsupported version, parsing one, and the client's decision to discard it or abandon the attempt.

use bytes::BufMut;

use super::connection_id::ConnectionId;
use super::datagram::MIN_INITIAL_DATAGRAM_SIZE;
use super::{PacketDecodeError, VERSION_NEGOTIATION};
use crate::proto::coding::Decoder;

/// Whether `version` is a reserved version (RFC 9000 §15: "Versions that follow the pattern 0x?a?a?a?a are
/// reserved for use in forcing version negotiation to be exercised").
pub const fn is_reserved_version(version: u32) -> bool {
    version & 0x0f0f_0f0f == 0x0a0a_0a0a
}

/// A received Version Negotiation packet, borrowing the datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionNegotiation<'a> {
    /// Destination Connection ID (echoes the client's SCID).
    pub dcid: ConnectionId,
    /// Source Connection ID (echoes the client's DCID).
    pub scid: ConnectionId,
    versions: &'a [u8],
    len: usize,
}

/// What a client does with a Version Negotiation packet (RFC 9000 §6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VnDisposition {
    /// Abandon the connection attempt: the server speaks none of our versions.
    Abandon,
    /// Ignore the packet; the reason names the rule.
    Discard(&'static str),
}

impl<'a> VersionNegotiation<'a> {
    /// Decodes a Version Negotiation packet: the whole of `buf`, whose version field is zero.
    /// Connection IDs longer than 20 bytes cannot echo ours, so such a packet is dropped.
    pub fn decode(buf: &'a [u8]) -> Result<Self, PacketDecodeError> {
        let mut d = Decoder::new(buf);
        // RFC 9000 §17.2.1: "Clients MUST ignore the value of this field." (the Unused bits of the first byte)
        let _first = d.u8()?;
        if d.u32()? != VERSION_NEGOTIATION {
            return Err(PacketDecodeError::invalid("not a Version Negotiation packet"));
        }
        let dcid = ConnectionId::decode_with_len(&mut d)?.ok_or(PacketDecodeError::invalid(
            "Version Negotiation DCID longer than ours can be",
        ))?;
        let scid = ConnectionId::decode_with_len(&mut d)?.ok_or(PacketDecodeError::invalid(
            "Version Negotiation SCID longer than ours can be",
        ))?;
        let versions = d.take_rest();
        // RFC 9000 §17.2.1: "The remainder of the Version Negotiation packet is a list of 32-bit versions".
        if versions.len() % 4 != 0 {
            return Err(PacketDecodeError::invalid(
                "Version Negotiation list not a multiple of 4 bytes",
            ));
        }
        Ok(VersionNegotiation {
            dcid,
            scid,
            versions,
            len: buf.len(),
        })
    }

    /// Bytes of the datagram it occupies: all of it.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The versions the server lists.
    pub fn versions(&self) -> impl Iterator<Item = u32> + 'a {
        self.versions
            .chunks_exact(4)
            .map(|c| c.iter().fold(0u32, |acc, b| (acc << 8) | u32::from(*b)))
    }

    /// What a client that attempted `our_version` with `our_dcid`/`our_scid` in its first Initial does with
    /// this packet. `processed_other_packet`: whether it already processed any packet of this attempt
    /// (including an earlier Version Negotiation packet).
    pub fn client_disposition(
        &self,
        our_version: u32,
        our_dcid: &ConnectionId,
        our_scid: &ConnectionId,
        processed_other_packet: bool,
    ) -> VnDisposition {
        // RFC 9000 §6.2: "A client MUST discard any Version Negotiation packet if it has received and
        // successfully processed any other packet, including an earlier Version Negotiation packet."
        if processed_other_packet {
            return VnDisposition::Discard("a packet was already processed");
        }
        // RFC 9000 §17.2.1: the server echoes both connection IDs, which "gives clients some assurance that
        // the server received the packet"; a packet that does not echo ours is not an answer to our Initial.
        if &self.dcid != our_scid || &self.scid != our_dcid {
            return VnDisposition::Discard("connection IDs do not echo ours");
        }
        // RFC 9000 §6.2: "A client MUST discard a Version Negotiation packet that lists the QUIC version
        // selected by the client."
        if self.versions().any(|v| v == our_version) {
            return VnDisposition::Discard("lists the version we selected");
        }
        // RFC 9000 §6.2: "A client that supports only this version of QUIC MUST abandon the current connection
        // attempt if it receives a Version Negotiation packet, with the following two exceptions."
        VnDisposition::Abandon
    }

    /// Writes a Version Negotiation packet with the given connection IDs (up to 255 bytes each, RFC 8999) and
    /// version list. `random` fills the unused bits. Returns `false`, writing nothing, if a CID is too long.
    pub fn encode<B: BufMut>(dcid: &[u8], scid: &[u8], versions: &[u32], random: u8, buf: &mut B) -> bool {
        let (Ok(dcid_len), Ok(scid_len)) = (u8::try_from(dcid.len()), u8::try_from(scid.len())) else {
            return false;
        };
        // RFC 9000 §17.2.1: "servers SHOULD set the most significant bit of this field (0x40) to 1 so that
        // Version Negotiation packets appear to have the Fixed Bit field."
        buf.put_u8(0x80 | 0x40 | (random & 0x3f));
        // RFC 9000 §17.2.1: "The Version field of a Version Negotiation packet MUST be set to 0x00000000."
        buf.put_u32(VERSION_NEGOTIATION);
        buf.put_u8(dcid_len);
        buf.put_slice(dcid);
        buf.put_u8(scid_len);
        buf.put_slice(scid);
        for v in versions {
            buf.put_u32(*v);
        }
        true
    }

    /// Builds a server's answer to `datagram`, whose first packet carries an unsupported version, listing
    /// `supported`. Returns why no answer may be sent instead: the caller then drops the datagram. Call it
    /// once per datagram (RFC 9000 §17.2.1: "A server MUST NOT send more than one Version Negotiation packet
    /// in response to a single UDP datagram.").
    pub fn respond<B: BufMut>(
        datagram: &[u8],
        supported: &[u32],
        random: u8,
        buf: &mut B,
    ) -> Result<(), PacketDecodeError> {
        // RFC 8999 §5.1 invariant long header; no version-specific rule applies (RFC 9000 §17.2.1:
        // "Version-specific rules for the connection ID therefore MUST NOT influence a decision about whether
        // to send a Version Negotiation packet.").
        let mut d = Decoder::new(datagram);
        let first = d.u8()?;
        if first & 0x80 == 0 {
            return Err(PacketDecodeError::invalid(
                "short header: no version to negotiate",
            ));
        }
        let version = d.u32()?;
        // RFC 9000 §6.1: "An endpoint MUST NOT send a Version Negotiation packet in response to receiving a
        // Version Negotiation packet."
        if version == VERSION_NEGOTIATION {
            return Err(PacketDecodeError::invalid(
                "no Version Negotiation in answer to one",
            ));
        }
        if supported.contains(&version) {
            return Err(PacketDecodeError::invalid("the version is supported"));
        }
        let dcid_len = d.u8()?;
        let dcid = d.bytes(usize::from(dcid_len))?;
        let scid_len = d.u8()?;
        let scid = d.bytes(usize::from(scid_len))?;
        // RFC 9000 §5.2.2: "Servers MUST drop smaller packets that specify unsupported versions."
        if datagram.len() < MIN_INITIAL_DATAGRAM_SIZE {
            return Err(PacketDecodeError::invalid(
                "unsupported version in a datagram under 1200 bytes",
            ));
        }
        // RFC 9000 §17.2.1: "The server MUST include the value from the Source Connection ID field of the packet
        // it receives in the Destination Connection ID field. The value for Source Connection ID MUST be copied
        // from the Destination Connection ID of the received packet".
        Self::encode(scid, dcid, supported, random, buf);
        Ok(())
    }
}
