//! Long and short packet headers of QUIC version 1 (RFC 9000 §17.2–§17.3), parsed in two steps around header
//! protection (RFC 9001 §5.4), and built with a Length field patched after the payload.
//!
//! Receive path:
//! 1. [`DecodedPacket::decode`] reads the parts header protection leaves visible: form, fixed bit, long type,
//!    version, connection IDs, the Initial token and the Length field. Retry and Version Negotiation packets
//!    are complete at this point; protected packets come back as a [`PartialDecode`], which knows the packet's
//!    length inside the datagram (for coalescing), the packet-number offset and the header-protection sample
//!    offset ([`PartialDecode::sample`]).
//! 2. `crypto` computes the 5-byte mask from the sample. [`PartialDecode::remove_protection`] applies it in
//!    place (RFC 9001 §5.4.1) and returns the [`Header`] with the reserved bits, key phase, packet-number
//!    length and truncated packet number. If the crypto layer unmasks the bytes itself (as rustls'
//!    `HeaderProtectionKey::decrypt_in_place` does), call [`PartialDecode::finish`] instead.
//!
//! Send path: [`OutgoingHeader::encode`] writes the header with a 2-byte placeholder Length (long headers only)
//! and returns a [`PartialEncode`]. Once the payload and AEAD tag length are known, [`PartialEncode::set_length`]
//! patches the Length; after encryption, [`PartialEncode::apply_protection`] masks the first byte and the
//! packet number.

use std::ops::Range;

use bytes::BufMut;

use super::connection_id::{ConnectionId, MAX_CID_SIZE};
use super::retry::RetryPacket;
use super::version_negotiation::VersionNegotiation;
use super::{PacketDecodeError, PacketEncodeError, VERSION_1, VERSION_NEGOTIATION};
use crate::proto::coding::{Decoder, VarInt};
use crate::proto::error::TransportError;
use crate::proto::packet_number;

/// Size of the header-protection sample for every AEAD of RFC 9001 (§5.4.2, §5.4.3, §5.4.4).
pub const HP_SAMPLE_LEN: usize = 16;

/// The header-protection sample starts this many bytes after the start of the Packet Number field
/// (RFC 9001 §5.4.2: the packet number is assumed to be 4 bytes long).
const SAMPLE_PN_SKIP: usize = 4;

/// Header form bit (RFC 9000 §17.2, §17.3).
const FORM_BIT: u8 = 0x80;
/// Fixed bit (RFC 9000 §17.2, §17.3).
const FIXED_BIT: u8 = 0x40;
/// Spin bit of a short header (RFC 9000 §17.3.1).
const SPIN_BIT: u8 = 0x20;
/// Key phase bit of a short header (RFC 9000 §17.3.1).
const KEY_PHASE_BIT: u8 = 0x04;
/// Reserved bits of a long header (RFC 9000 §17.2).
const LONG_RESERVED_BITS: u8 = 0x0c;
/// Reserved bits of a short header (RFC 9000 §17.3.1).
const SHORT_RESERVED_BITS: u8 = 0x18;
/// Packet-number length bits (RFC 9000 §17.2, §17.3.1).
const PN_LEN_BITS: u8 = 0x03;
/// Bits of the first byte covered by header protection in a long header (RFC 9001 §5.4.1).
const LONG_HP_MASK: u8 = 0x0f;
/// Bits of the first byte covered by header protection in a short header (RFC 9001 §5.4.1).
const SHORT_HP_MASK: u8 = 0x1f;
/// Size of the Length placeholder written by [`OutgoingHeader::encode`]: a 2-byte varint (up to 16383).
pub(crate) const LENGTH_FIELD_SIZE: usize = 2;
/// Largest value the 2-byte Length placeholder can carry.
const MAX_TWO_BYTE_VARINT: usize = (1 << 14) - 1;

/// Long header packet types (RFC 9000 §17.2, Table 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LongType {
    /// 0x00, RFC 9000 §17.2.2.
    Initial,
    /// 0x01, RFC 9000 §17.2.3.
    ZeroRtt,
    /// 0x02, RFC 9000 §17.2.4.
    Handshake,
    /// 0x03, RFC 9000 §17.2.5.
    Retry,
}

impl LongType {
    /// The type from the two type bits (mask 0x30) of a version 1 first byte.
    pub const fn from_first_byte(first: u8) -> LongType {
        match (first >> 4) & 0x03 {
            0 => LongType::Initial,
            1 => LongType::ZeroRtt,
            2 => LongType::Handshake,
            _ => LongType::Retry,
        }
    }

    /// The two-bit type value.
    pub const fn bits(self) -> u8 {
        match self {
            LongType::Initial => 0,
            LongType::ZeroRtt => 1,
            LongType::Handshake => 2,
            LongType::Retry => 3,
        }
    }
}

/// Types of packets that carry a packet number and are protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PacketType {
    /// Initial (long header).
    Initial,
    /// 0-RTT (long header).
    ZeroRtt,
    /// Handshake (long header).
    Handshake,
    /// 1-RTT (short header).
    OneRtt,
}

impl PacketType {
    /// Whether packets of this type use the long header.
    pub const fn is_long(self) -> bool {
        !matches!(self, PacketType::OneRtt)
    }

    const fn long_type(self) -> Option<LongType> {
        match self {
            PacketType::Initial => Some(LongType::Initial),
            PacketType::ZeroRtt => Some(LongType::ZeroRtt),
            PacketType::Handshake => Some(LongType::Handshake),
            PacketType::OneRtt => None,
        }
    }
}

/// One packet found at the start of a datagram (or of what is left of it after coalesced packets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodedPacket<'a> {
    /// A packet under header protection; finish it with [`PartialDecode::remove_protection`].
    Protected(PartialDecode),
    /// A Retry packet (RFC 9000 §17.2.5); it takes the rest of the datagram.
    Retry(RetryPacket<'a>),
    /// A Version Negotiation packet (RFC 9000 §17.2.1); it takes the rest of the datagram.
    VersionNegotiation(VersionNegotiation<'a>),
}

impl<'a> DecodedPacket<'a> {
    /// Decodes the packet at the start of `buf`. `local_cid_len` is the length of the connection IDs this
    /// endpoint issues: a short header does not say how long its Destination Connection ID is (RFC 9000
    /// §17.3.1; RFC 8999 §5.2), so the receiver must know.
    ///
    /// Only QUIC version 1 is supported: any other non-zero version gives
    /// [`PacketDecodeError::UnsupportedVersion`].
    pub fn decode(buf: &'a [u8], local_cid_len: usize) -> Result<Self, PacketDecodeError> {
        let mut d = Decoder::new(buf);
        let first = d.u8()?;
        if first & FORM_BIT == 0 {
            return PartialDecode::decode_short(buf, first, local_cid_len).map(DecodedPacket::Protected);
        }
        let version = d.u32()?;
        if version == VERSION_NEGOTIATION {
            return VersionNegotiation::decode(buf).map(DecodedPacket::VersionNegotiation);
        }
        if version != VERSION_1 {
            return Err(PacketDecodeError::UnsupportedVersion { version });
        }
        // RFC 9000 §17.2: "Packets containing a zero value for this bit are not valid packets in this version
        // and MUST be discarded."
        if first & FIXED_BIT == 0 {
            return Err(PacketDecodeError::invalid("fixed bit is zero"));
        }
        // RFC 9000 §17.2: "Endpoints that receive a version 1 long header with a value larger than 20 MUST
        // drop the packet."
        let dcid = ConnectionId::decode_with_len(&mut d)?.ok_or(PacketDecodeError::invalid(
            "v1 long header DCID longer than 20 bytes",
        ))?;
        let scid = ConnectionId::decode_with_len(&mut d)?.ok_or(PacketDecodeError::invalid(
            "v1 long header SCID longer than 20 bytes",
        ))?;
        let ty = match LongType::from_first_byte(first) {
            LongType::Retry => {
                return RetryPacket::decode_after_cids(buf, version, dcid, scid, d.rest())
                    .map(DecodedPacket::Retry);
            }
            LongType::Initial => PacketType::Initial,
            LongType::ZeroRtt => PacketType::ZeroRtt,
            LongType::Handshake => PacketType::Handshake,
        };
        let token = if ty == PacketType::Initial {
            let token = d.varint_prefixed()?;
            let start = buf.len() - d.remaining() - token.len();
            start..start + token.len()
        } else {
            0..0
        };
        let length = d.varint()?.into_inner();
        let pn_offset = buf.len() - d.remaining();
        let length = usize::try_from(length).map_err(|_| PacketDecodeError::invalid("Length too large"))?;
        if length > d.remaining() {
            return Err(PacketDecodeError::invalid("Length exceeds the datagram"));
        }
        let pd = PartialDecode {
            first_byte: first,
            ty,
            version,
            dcid,
            scid: Some(scid),
            token_start: token.start,
            token_len: token.len(),
            pn_offset,
            len: pn_offset + length,
        };
        pd.check_sample_available()?;
        Ok(DecodedPacket::Protected(pd))
    }

    /// Bytes of the datagram this packet occupies (Retry and Version Negotiation take the rest of it).
    pub fn len(&self) -> usize {
        match self {
            DecodedPacket::Protected(p) => p.len(),
            DecodedPacket::Retry(r) => r.len(),
            DecodedPacket::VersionNegotiation(v) => v.len(),
        }
    }

    /// Always false: a decoded packet has at least a first byte.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The Destination Connection ID.
    pub fn dcid(&self) -> &[u8] {
        match self {
            DecodedPacket::Protected(p) => p.dcid(),
            DecodedPacket::Retry(r) => &r.dcid,
            DecodedPacket::VersionNegotiation(v) => &v.dcid,
        }
    }
}

/// A protected packet whose visible header fields have been read (step 1 of 2).
///
/// Owns no borrow of the datagram, so the caller can then mutate the packet bytes in place to remove header
/// and packet protection. All offsets are relative to the first byte of this packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartialDecode {
    first_byte: u8,
    ty: PacketType,
    version: u32,
    dcid: ConnectionId,
    scid: Option<ConnectionId>,
    token_start: usize,
    token_len: usize,
    pn_offset: usize,
    len: usize,
}

impl PartialDecode {
    fn decode_short(buf: &[u8], first: u8, local_cid_len: usize) -> Result<Self, PacketDecodeError> {
        // RFC 9000 §17.3.1: "Packets containing a zero value for this bit are not valid packets in this
        // version and MUST be discarded."
        if first & FIXED_BIT == 0 {
            return Err(PacketDecodeError::invalid("fixed bit is zero"));
        }
        if local_cid_len > MAX_CID_SIZE {
            return Err(PacketDecodeError::invalid("local connection ID length above 20"));
        }
        let dcid_bytes = buf
            .get(1..1 + local_cid_len)
            .ok_or(PacketDecodeError::invalid("packet truncated"))?;
        let dcid =
            ConnectionId::new(dcid_bytes).ok_or(PacketDecodeError::invalid("DCID longer than 20 bytes"))?;
        let pd = PartialDecode {
            first_byte: first,
            ty: PacketType::OneRtt,
            version: VERSION_1,
            dcid,
            scid: None,
            token_start: 0,
            token_len: 0,
            pn_offset: 1 + local_cid_len,
            // RFC 9000 §12.2: "A packet with a short header does not include a length, so it can only be the
            // last packet included in a UDP datagram."
            len: buf.len(),
        };
        pd.check_sample_available()?;
        Ok(pd)
    }

    /// RFC 9001 §5.4.2: "To ensure that sufficient data is available for sampling, packets are padded so that
    /// the combined lengths of the encoded packet number and protected payload is at least 4 bytes longer than
    /// the sample required for header protection." A shorter packet cannot be unprotected and is dropped
    /// (RFC 9000 §10.3: "Endpoints MUST discard packets that are too small to be valid QUIC packets.").
    fn check_sample_available(&self) -> Result<(), PacketDecodeError> {
        if self.len < self.sample_offset() + HP_SAMPLE_LEN {
            return Err(PacketDecodeError::invalid(
                "packet too short for the header-protection sample",
            ));
        }
        Ok(())
    }

    /// The packet type.
    pub fn packet_type(&self) -> PacketType {
        self.ty
    }

    /// The QUIC version (always [`VERSION_1`] for now; implicit for short headers).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The Destination Connection ID.
    pub fn dcid(&self) -> &ConnectionId {
        &self.dcid
    }

    /// The Source Connection ID (long headers only).
    pub fn scid(&self) -> Option<&ConnectionId> {
        self.scid.as_ref()
    }

    /// Where the Initial token lies in the packet (empty for other types).
    pub fn token_range(&self) -> Range<usize> {
        self.token_start..self.token_start + self.token_len
    }

    /// The Initial token, read from `packet` (this packet's bytes, starting at its first byte).
    pub fn token<'p>(&self, packet: &'p [u8]) -> &'p [u8] {
        packet.get(self.token_range()).unwrap_or(&[])
    }

    /// Whether the header is long.
    pub fn is_long(&self) -> bool {
        self.ty.is_long()
    }

    /// The first byte as received (its low bits still protected).
    pub fn protected_first_byte(&self) -> u8 {
        self.first_byte
    }

    /// Offset of the Packet Number field.
    pub fn pn_offset(&self) -> usize {
        self.pn_offset
    }

    /// Offset of the header-protection sample (RFC 9001 §5.4.2: `pn_offset + 4`).
    pub fn sample_offset(&self) -> usize {
        self.pn_offset + SAMPLE_PN_SKIP
    }

    /// The header-protection sample (RFC 9001 §5.4.2), read from `packet` (this packet's bytes).
    pub fn sample<'p>(&self, packet: &'p [u8]) -> Option<&'p [u8; HP_SAMPLE_LEN]> {
        packet
            .get(self.sample_offset()..self.sample_offset() + HP_SAMPLE_LEN)?
            .try_into()
            .ok()
    }

    /// Bytes this packet occupies in the datagram. A long header packet ends where its Length says; a short
    /// header packet takes the rest of the datagram.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a packet has at least a first byte.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The check a client makes on a packet from the server before processing it.
    pub fn check_received_by_client(&self) -> Result<(), PacketDecodeError> {
        // RFC 9000 §17.2.2: "Initial packets sent by the server MUST set the Token Length field to 0; clients
        // that receive an Initial packet with a non-zero Token Length field MUST either discard the packet or
        // generate a connection error of type PROTOCOL_VIOLATION." We discard it.
        if self.ty == PacketType::Initial && self.token_len != 0 {
            return Err(PacketDecodeError::invalid("server Initial with a token"));
        }
        Ok(())
    }

    /// Applies the header-protection `mask` (RFC 9001 §5.4.1) to `packet` in place and finishes the header.
    /// `packet` holds this packet's bytes from its first byte (at least [`len`](Self::len) bytes).
    pub fn remove_protection(self, packet: &mut [u8], mask: &[u8; 5]) -> Result<Header, PacketDecodeError> {
        let low = if self.is_long() {
            LONG_HP_MASK
        } else {
            SHORT_HP_MASK
        };
        let first = packet
            .first_mut()
            .ok_or(PacketDecodeError::invalid("packet truncated"))?;
        *first ^= mask[0] & low;
        let pn_len = usize::from(*first & PN_LEN_BITS) + 1;
        let pn = packet
            .get_mut(self.pn_offset..self.pn_offset + pn_len)
            .ok_or(PacketDecodeError::invalid("packet truncated"))?;
        for (b, m) in pn.iter_mut().zip(&mask[1..]) {
            *b ^= m;
        }
        self.finish(packet)
    }

    /// Finishes the header from `packet` whose first byte and packet number are already unprotected.
    pub fn finish(self, packet: &[u8]) -> Result<Header, PacketDecodeError> {
        if packet.len() < self.len {
            return Err(PacketDecodeError::invalid("packet truncated"));
        }
        let first = *packet
            .first()
            .ok_or(PacketDecodeError::invalid("packet truncated"))?;
        let low = if self.is_long() {
            LONG_HP_MASK
        } else {
            SHORT_HP_MASK
        };
        if first & !low != self.first_byte & !low {
            return Err(PacketDecodeError::invalid(
                "unprotected bits of the first byte changed",
            ));
        }
        let pn_len = usize::from(first & PN_LEN_BITS) + 1;
        let pn_bytes = packet
            .get(self.pn_offset..self.pn_offset + pn_len)
            .ok_or(PacketDecodeError::invalid("packet truncated"))?;
        let pn = pn_bytes.iter().fold(0u32, |acc, b| (acc << 8) | u32::from(*b));
        let header_len = self.pn_offset + pn_len;
        let short = !self.is_long();
        Ok(Header {
            ty: self.ty,
            version: self.version,
            dcid: self.dcid,
            scid: self.scid,
            token: self.token_range(),
            spin: short && first & SPIN_BIT != 0,
            key_phase: short && first & KEY_PHASE_BIT != 0,
            reserved_bits: first
                & if short {
                    SHORT_RESERVED_BITS
                } else {
                    LONG_RESERVED_BITS
                },
            pn,
            pn_len,
            header_len,
            packet_len: self.len,
        })
    }
}

/// A fully decoded header (after header protection removal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The packet type.
    pub ty: PacketType,
    /// The QUIC version (implicit [`VERSION_1`] for short headers).
    pub version: u32,
    /// Destination Connection ID.
    pub dcid: ConnectionId,
    /// Source Connection ID (long headers only).
    pub scid: Option<ConnectionId>,
    /// Where the Initial token lies in the packet (empty for other types).
    pub token: Range<usize>,
    /// The latency spin bit (RFC 9000 §17.4; short headers only).
    pub spin: bool,
    /// The key phase bit (RFC 9001 §6; short headers only).
    pub key_phase: bool,
    /// The reserved bits of the first byte, in place (mask 0x0c long, 0x18 short). Must be checked with
    /// [`check_reserved_bits`](Self::check_reserved_bits) after packet protection has been removed.
    pub reserved_bits: u8,
    /// The truncated packet number as sent.
    pub pn: u32,
    /// Length of the Packet Number field (1–4).
    pub pn_len: usize,
    /// Header length, which is also the offset of the protected payload.
    pub header_len: usize,
    /// Length of the whole packet in the datagram.
    pub packet_len: usize,
}

impl Header {
    /// Where the protected payload (ciphertext and AEAD tag) lies in the packet.
    pub fn payload_range(&self) -> Range<usize> {
        self.header_len..self.packet_len
    }

    /// The full packet number, given the largest packet number processed so far in this packet-number space
    /// (RFC 9000 Appendix A.3). In multipath, the space is that of the packet's path.
    pub fn full_packet_number(&self, largest_pn: Option<u64>) -> u64 {
        packet_number::decode(self.pn, self.pn_len, largest_pn)
    }

    /// Checks the reserved bits. Call it only once packet protection has been removed successfully.
    pub fn check_reserved_bits(&self) -> Result<(), TransportError> {
        // RFC 9000 §17.2 (and §17.3.1 for short headers): "An endpoint MUST treat receipt of a packet that has
        // a non-zero value for these bits after removing both packet and header protection as a connection
        // error of type PROTOCOL_VIOLATION."
        if self.reserved_bits != 0 {
            return Err(TransportError::protocol_violation(
                "reserved header bits are not zero",
            ));
        }
        Ok(())
    }
}

/// A header to send. Version 1 only; use [`super::encode_retry`] and
/// [`VersionNegotiation::encode`] for the unprotected packet types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutgoingHeader<'t> {
    /// An Initial packet header (RFC 9000 §17.2.2).
    Initial {
        /// Destination Connection ID.
        dcid: &'t ConnectionId,
        /// Source Connection ID.
        scid: &'t ConnectionId,
        /// Token from a Retry or NEW_TOKEN frame (RFC 9000 §17.2.2: "Initial packets sent by the server MUST
        /// set the Token Length field to 0").
        token: &'t [u8],
    },
    /// A 0-RTT packet header (RFC 9000 §17.2.3).
    ZeroRtt {
        /// Destination Connection ID.
        dcid: &'t ConnectionId,
        /// Source Connection ID.
        scid: &'t ConnectionId,
    },
    /// A Handshake packet header (RFC 9000 §17.2.4).
    Handshake {
        /// Destination Connection ID.
        dcid: &'t ConnectionId,
        /// Source Connection ID.
        scid: &'t ConnectionId,
    },
    /// A 1-RTT packet header (RFC 9000 §17.3.1).
    Short {
        /// Destination Connection ID.
        dcid: &'t ConnectionId,
        /// Latency spin bit.
        spin: bool,
        /// Key phase bit.
        key_phase: bool,
    },
}

impl OutgoingHeader<'_> {
    /// The packet type.
    pub fn packet_type(&self) -> PacketType {
        match self {
            OutgoingHeader::Initial { .. } => PacketType::Initial,
            OutgoingHeader::ZeroRtt { .. } => PacketType::ZeroRtt,
            OutgoingHeader::Handshake { .. } => PacketType::Handshake,
            OutgoingHeader::Short { .. } => PacketType::OneRtt,
        }
    }

    /// Encoded size of the header with a `pn_len`-byte packet number (and the 2-byte Length placeholder).
    pub fn encoded_len(&self, pn_len: usize) -> usize {
        let pn_len = pn_len.clamp(1, 4);
        match self {
            OutgoingHeader::Initial { dcid, scid, token } => {
                let token_len = VarInt::size_of(token.len() as u64).unwrap_or(8) + token.len();
                7 + dcid.len() + scid.len() + token_len + LENGTH_FIELD_SIZE + pn_len
            }
            OutgoingHeader::ZeroRtt { dcid, scid } | OutgoingHeader::Handshake { dcid, scid } => {
                7 + dcid.len() + scid.len() + LENGTH_FIELD_SIZE + pn_len
            }
            OutgoingHeader::Short { dcid, .. } => 1 + dcid.len() + pn_len,
        }
    }

    /// Writes the unprotected header with packet number `pn` truncated to `pn_len` bytes (1–4; clamped; choose
    /// it with [`packet_number::encoded_len`]). Long headers get a 2-byte Length placeholder to patch with
    /// [`PartialEncode::set_length`]. Offsets in the result are relative to where the header starts in `buf`.
    pub fn encode<B: BufMut>(&self, pn: u64, pn_len: usize, buf: &mut B) -> PartialEncode {
        let pn_len = pn_len.clamp(1, 4);
        let pn_bits = (pn_len - 1) as u8;
        let mut written = 0usize;
        let mut len_offset = None;
        match *self {
            OutgoingHeader::Short {
                dcid,
                spin,
                key_phase,
            } => {
                let mut first = FIXED_BIT | pn_bits;
                if spin {
                    first |= SPIN_BIT;
                }
                if key_phase {
                    first |= KEY_PHASE_BIT;
                }
                buf.put_u8(first);
                buf.put_slice(dcid);
                written += 1 + dcid.len();
            }
            OutgoingHeader::Initial { dcid, scid, .. }
            | OutgoingHeader::ZeroRtt { dcid, scid }
            | OutgoingHeader::Handshake { dcid, scid } => {
                let ty = self.packet_type().long_type().map_or(0, LongType::bits);
                buf.put_u8(FORM_BIT | FIXED_BIT | (ty << 4) | pn_bits);
                buf.put_u32(VERSION_1);
                dcid.encode_with_len(buf);
                scid.encode_with_len(buf);
                written += 7 + dcid.len() + scid.len();
                if let OutgoingHeader::Initial { token, .. } = *self {
                    let token_len = VarInt::try_from(token.len()).unwrap_or(VarInt::MAX);
                    token_len.encode(buf);
                    buf.put_slice(token);
                    written += token_len.size() + token.len();
                }
                len_offset = Some(written);
                buf.put_u16(0x4000); // 2-byte varint placeholder, patched by `set_length`
                written += LENGTH_FIELD_SIZE;
            }
        }
        let pn_offset = written;
        let truncated = packet_number::truncate(pn, pn_len).to_be_bytes();
        buf.put_slice(truncated.get(4 - pn_len..).unwrap_or(&[]));
        PartialEncode {
            long: self.packet_type().is_long(),
            len_offset,
            pn_offset,
            pn_len,
        }
    }
}

/// Where the fields that are finished after the payload lie in an encoded header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartialEncode {
    long: bool,
    len_offset: Option<usize>,
    pn_offset: usize,
    pn_len: usize,
}

impl PartialEncode {
    /// Offset of the Packet Number field.
    pub fn pn_offset(&self) -> usize {
        self.pn_offset
    }

    /// Length of the Packet Number field.
    pub fn pn_len(&self) -> usize {
        self.pn_len
    }

    /// Header length (offset of the payload).
    pub fn header_len(&self) -> usize {
        self.pn_offset + self.pn_len
    }

    /// Offset of the header-protection sample (RFC 9001 §5.4.2).
    pub fn sample_offset(&self) -> usize {
        self.pn_offset + SAMPLE_PN_SKIP
    }

    /// The smallest total packet length (header + payload + AEAD tag) that leaves room for the
    /// header-protection sample; pad the payload up to it (RFC 9001 §5.4.2).
    pub fn min_packet_len(&self) -> usize {
        self.sample_offset() + HP_SAMPLE_LEN
    }

    /// Patches the Length field of a long header so that the packet is `packet_len` bytes long in total
    /// (header + payload + AEAD tag). `header` starts at the packet's first byte. Does nothing for short
    /// headers. Call before packet protection: the Length is part of the associated data.
    pub fn set_length(&self, header: &mut [u8], packet_len: usize) -> Result<(), PacketEncodeError> {
        let Some(off) = self.len_offset else { return Ok(()) };
        let value = packet_len
            .checked_sub(self.pn_offset)
            .ok_or(PacketEncodeError::BufferTooShort)?;
        if value > MAX_TWO_BYTE_VARINT {
            return Err(PacketEncodeError::TooLong);
        }
        let field = header
            .get_mut(off..off + LENGTH_FIELD_SIZE)
            .ok_or(PacketEncodeError::BufferTooShort)?;
        field.copy_from_slice(&(0x4000 | value as u16).to_be_bytes());
        Ok(())
    }

    /// The sample to feed header protection, from the protected `packet`.
    pub fn sample<'p>(&self, packet: &'p [u8]) -> Result<&'p [u8; HP_SAMPLE_LEN], PacketEncodeError> {
        packet
            .get(self.sample_offset()..self.sample_offset() + HP_SAMPLE_LEN)
            .and_then(|s| s.try_into().ok())
            .ok_or(PacketEncodeError::TooShortForSample)
    }

    /// Applies the header-protection `mask` to the first byte and the packet number (RFC 9001 §5.4.1), after
    /// packet protection.
    pub fn apply_protection(&self, packet: &mut [u8], mask: &[u8; 5]) -> Result<(), PacketEncodeError> {
        if packet.len() < self.min_packet_len() {
            return Err(PacketEncodeError::TooShortForSample);
        }
        let low = if self.long { LONG_HP_MASK } else { SHORT_HP_MASK };
        let first = packet.first_mut().ok_or(PacketEncodeError::BufferTooShort)?;
        *first ^= mask[0] & low;
        let pn = packet
            .get_mut(self.pn_offset..self.pn_offset + self.pn_len)
            .ok_or(PacketEncodeError::BufferTooShort)?;
        for (b, m) in pn.iter_mut().zip(&mask[1..]) {
            *b ^= m;
        }
        Ok(())
    }
}
