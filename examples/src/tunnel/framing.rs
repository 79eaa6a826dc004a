//! How IP packets travel inside the QUIC connection, and the MTU arithmetic that keeps every packet in one
//! QUIC packet.
//!
//! # Datagram mode (the default)
//!
//! One IP packet per QUIC DATAGRAM frame (RFC 9221), never split and never merged:
//!
//! ```text
//! DATAGRAM frame payload = sequence number (QUIC varint, RFC 9000 §16, 1 to 8 bytes) || IP packet
//! ```
//!
//! Each direction numbers its packets 0, 1, 2, … (up to 2^62 − 1: no wrap in practice). The receiver uses the
//! numbers to put packets back in order ([`super::reorder`]) and to count gaps and late arrivals. A payload that
//! holds only the sequence number is a keep-alive and carries no packet.
//!
//! # Stream mode
//!
//! Every packet on the one bidirectional stream the client opens, each prefixed with its length:
//!
//! ```text
//! record = length (u16, network byte order) || IP packet of that length
//! ```
//!
//! A record of length 0 carries nothing (the client writes one when it opens the stream, so that the server
//! sees the stream at once). The stream is reliable and ordered: no sequence number is needed.
//!
//! # MTU arithmetic
//!
//! With a link MTU of `M` bytes on the paths between the tunnel endpoints (`--mtu`, default 1500):
//!
//! ```text
//! UDP payload     P = M − 20 (IPv4 header; 40 for IPv6) − 8 (UDP header)         1500 → 1472 over IPv4
//! DATAGRAM frame  F = P − 1 (short header's first byte) − C (destination connection ID, 8 bytes in mpquic)
//!                       − 4 (packet number, budgeted at its longest) − 16 (AEAD tag)       1472 → 1443
//! frame payload   D = F − 1 (frame type) − 2 (length varint, for 64 ≤ D ≤ 16383)          1443 → 1440
//! TUN MTU         T = D − 8 (sequence number varint, budgeted at its longest)              1440 → 1432
//! ```
//!
//! `D` is what the connection itself reports ([`mpquic::runtime::Connection::max_datagram_size`], also capped
//! by the peer's `max_datagram_frame_size`), so the tunnel asks the connection once the handshake is done and
//! sets the TUN MTU to `D − 8`; before that it uses the estimate above. Stream mode uses the same MTU, so that
//! both modes carry the same packets.

use bytes::{BufMut, Bytes, BytesMut};
use mpquic::proto::coding::{Decoder, VarInt};

/// The most bytes the sequence number can take (a varint of 8 bytes); the MTU budgets for it.
pub const SEQ_BUDGET: usize = 8;

/// The overhead of a 1-RTT packet around its frames, with mpquic's 8-byte connection IDs: first byte,
/// connection ID, 4-byte packet number, 16-byte AEAD tag.
pub const QUIC_OVERHEAD: usize = 1 + 8 + 4 + 16;

/// IPv4 and UDP headers.
pub const UDP_IPV4_OVERHEAD: usize = 20 + 8;

/// IPv6 and UDP headers.
pub const UDP_IPV6_OVERHEAD: usize = 40 + 8;

/// The smallest TUN MTU: an IPv6 link must carry 1280 bytes (RFC 8200 §5), and an IPv4 host must be able to
/// receive 576 (RFC 791); we stay at the IPv4 figure so that small test links work.
pub const MIN_TUN_MTU: usize = 576;

/// A malformed tunnel frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The DATAGRAM payload ends inside the sequence number.
    #[error("datagram of {0} bytes ends inside its sequence number")]
    TruncatedSequence(usize),
    /// A stream record longer than the largest IP packet.
    #[error("stream record of {len} bytes exceeds the tunnel MTU {mtu}")]
    RecordTooLong {
        /// The record's length field.
        len: usize,
        /// The MTU in force.
        mtu: usize,
    },
}

/// The UDP payload for a link MTU `link_mtu` over IPv4 (`ipv6` false) or IPv6.
pub fn udp_payload(link_mtu: usize, ipv6: bool) -> usize {
    let ip_udp = if ipv6 {
        UDP_IPV6_OVERHEAD
    } else {
        UDP_IPV4_OVERHEAD
    };
    link_mtu.saturating_sub(ip_udp)
}

/// The largest DATAGRAM payload in a UDP payload of `udp_payload` bytes (the connection's own rule, which
/// [`mpquic::runtime::Connection::max_datagram_size`] reports once connected): the frame is what remains after
/// [`QUIC_OVERHEAD`], less its type byte and its length varint.
pub fn datagram_payload(udp_payload: usize) -> usize {
    let frame = udp_payload.saturating_sub(QUIC_OVERHEAD);
    // The largest n with 1 + varint_len(n) + n <= frame.
    [1usize, 2, 4, 8]
        .iter()
        .filter_map(|&len| frame.checked_sub(1 + len))
        .filter(|&n| VarInt::size_of(n as u64).is_some_and(|l| 1 + l + n <= frame))
        .max()
        .unwrap_or(0)
}

/// The TUN MTU for a largest DATAGRAM payload of `datagram_payload` bytes: room for the sequence number.
pub fn tun_mtu(datagram_payload: usize) -> usize {
    datagram_payload.saturating_sub(SEQ_BUDGET)
}

/// Frames one IP packet for a DATAGRAM frame: its sequence number, then the packet.
pub fn encode_datagram(seq: u64, packet: &[u8]) -> Bytes {
    let seq = VarInt::from_u64(seq).unwrap_or(VarInt::MAX);
    let mut b = BytesMut::with_capacity(seq.size() + packet.len());
    seq.encode(&mut b);
    b.put_slice(packet);
    b.freeze()
}

/// A keep-alive datagram: a sequence number and no packet (it takes no number from the sequence).
pub fn keepalive() -> Bytes {
    Bytes::from_static(&[0])
}

/// Splits a received DATAGRAM payload into its sequence number and its IP packet (`None` for a keep-alive).
pub fn decode_datagram(payload: &Bytes) -> Result<Option<(u64, Bytes)>, FrameError> {
    let mut d = Decoder::new(payload);
    let seq = VarInt::decode(&mut d).map_err(|_| FrameError::TruncatedSequence(payload.len()))?;
    let used = payload.len() - d.remaining();
    if d.is_empty() {
        return Ok(None);
    }
    Ok(Some((seq.into_inner(), payload.slice(used..))))
}

/// Frames one IP packet as a stream record (length, then the packet); `packet` is at most 65535 bytes.
pub fn encode_record(packet: &[u8], out: &mut Vec<u8>) {
    let len = u16::try_from(packet.len()).unwrap_or(u16::MAX);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(packet.get(..usize::from(len)).unwrap_or(packet));
}

/// Checks a stream record's length field against the MTU in force (a longer record is a broken or hostile
/// peer: the connection is closed rather than a buffer of its choosing allocated).
pub fn check_record_len(len: u16, mtu: usize) -> Result<usize, FrameError> {
    let len = usize::from(len);
    if len > mtu {
        return Err(FrameError::RecordTooLong { len, mtu });
    }
    Ok(len)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use super::*;

    #[test]
    fn datagram_round_trip_with_every_varint_length() {
        let packet = [0x45u8, 0, 0, 20, 1, 2, 3];
        // RFC 9000 §16: 1 byte up to 63, 2 up to 16383, 4 up to 2^30 − 1, 8 beyond.
        for (seq, len) in [
            (0u64, 1usize),
            (63, 1),
            (64, 2),
            (16_383, 2),
            (16_384, 4),
            (1 << 30, 8),
        ] {
            let d = encode_datagram(seq, &packet);
            assert_eq!(d.len(), len + packet.len(), "seq {seq}");
            let (s, p) = decode_datagram(&d).unwrap().unwrap();
            assert_eq!((s, &p[..]), (seq, &packet[..]));
        }
        // 300 = 0x012c as a 2-byte varint: 0x41 0x2c.
        assert_eq!(&encode_datagram(300, &[0x60])[..], &[0x41, 0x2c, 0x60]);
    }

    #[test]
    fn keepalive_and_truncated_datagrams() {
        assert_eq!(decode_datagram(&keepalive()), Ok(None));
        // 0x40 announces a 2-byte varint and nothing follows.
        assert_eq!(
            decode_datagram(&Bytes::from_static(&[0x40])),
            Err(FrameError::TruncatedSequence(1))
        );
        assert_eq!(
            decode_datagram(&Bytes::new()),
            Err(FrameError::TruncatedSequence(0))
        );
    }

    #[test]
    fn record_round_trip_and_limit() {
        let mut out = Vec::new();
        encode_record(&[1, 2, 3], &mut out);
        encode_record(&[], &mut out);
        assert_eq!(out, [0, 3, 1, 2, 3, 0, 0]);
        assert_eq!(check_record_len(1432, 1432), Ok(1432));
        assert_eq!(
            check_record_len(1433, 1432),
            Err(FrameError::RecordTooLong { len: 1433, mtu: 1432 })
        );
    }

    #[test]
    fn mtu_arithmetic_matches_the_documented_example() {
        // 1500 − 28 = 1472; 1472 − 29 = 1443; 1443 − 3 = 1440; 1440 − 8 = 1432.
        assert_eq!(udp_payload(1500, false), 1472);
        assert_eq!(datagram_payload(1472), 1440);
        assert_eq!(tun_mtu(1440), 1432);
        // IPv6: 1500 − 48 = 1452 → 1423 → 1420 → 1412.
        assert_eq!(tun_mtu(datagram_payload(udp_payload(1500, true))), 1412);
        // mpquic's default 1200-byte packets: 1200 − 29 = 1171 → 1168, as the connection reports.
        assert_eq!(datagram_payload(1200), 1168);
        // At the varint boundary: in a 66-byte frame, 64 bytes need a 2-byte length (1 + 2 + 64 = 67 > 66),
        // while 63 take a 1-byte one (1 + 1 + 63 = 65 <= 66): 63 is the largest.
        assert_eq!(datagram_payload(66 + QUIC_OVERHEAD), 63);
    }
}
