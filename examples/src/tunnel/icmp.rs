//! "Packet too big" answers for packets the tunnel cannot carry, written back into the TUN device the way a
//! router on the path would answer them, so that the sender's path MTU discovery shrinks its packets.
//!
//! - IPv4: ICMP Destination Unreachable, code 4 "fragmentation needed and DF set" (RFC 792), with the next-hop
//!   MTU in the low 16 bits of the otherwise unused word (RFC 1191 §4), carrying the original IP header and the
//!   first 64 bits of its data (RFC 792). Only for packets with DF set: the tunnel never fragments, and a
//!   packet without DF that does not fit is dropped (and counted).
//! - IPv6: ICMPv6 Packet Too Big (RFC 4443 §3.2), type 2 code 0, with the MTU, carrying as much of the
//!   original packet as fits in the minimum IPv6 MTU of 1280 bytes (RFC 4443 §2.4 (c)).
//!
//! The answer comes from the original packet's destination address: the tunnel has no address of its own on
//! the link, and the host's own address as a source on an incoming packet would be dropped as a martian.
//! No answer is made to an ICMP error, to a non-initial fragment, or when either address is not a single
//! host's (RFC 1122 §3.2.2; RFC 4443 §2.4 (e)).

use std::net::{Ipv4Addr, Ipv6Addr};

/// IPv4 header length without options.
const IPV4_HEADER: usize = 20;
/// IPv6 fixed header length.
const IPV6_HEADER: usize = 40;
/// ICMP and ICMPv6 header length (type, code, checksum, 4-byte field).
const ICMP_HEADER: usize = 8;
/// RFC 4443 §2.4 (c): the error message must not exceed the minimum IPv6 MTU.
const IPV6_MIN_MTU: usize = 1280;
/// Hop limit / TTL of the answers.
const TTL: u8 = 64;

/// The Internet checksum (RFC 1071) of `data`, continuing from `sum` (the folded one's-complement sum, before
/// the final inversion).
fn ones_complement_sum(mut sum: u32, data: &[u8]) -> u32 {
    let mut words = data.chunks_exact(2);
    for w in &mut words {
        if let [a, b] = *w {
            sum += u32::from(u16::from_be_bytes([a, b]));
        }
    }
    if let [last] = *words.remainder() {
        sum += u32::from(u16::from_be_bytes([last, 0]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum
}

/// The checksum field for data whose one's-complement sum is `sum`.
fn checksum(sum: u32) -> [u8; 2] {
    let folded = u16::try_from(ones_complement_sum(sum, &[]) & 0xffff).unwrap_or(0);
    (!folded).to_be_bytes()
}

/// The answer to `packet` (read from the TUN device) that cannot be carried because the tunnel's MTU is
/// `mtu`; `None` when no answer is due or the packet is malformed.
pub fn too_big_reply(packet: &[u8], mtu: usize) -> Option<Vec<u8>> {
    match packet.first()? >> 4 {
        4 => fragmentation_needed(packet, mtu),
        6 => packet_too_big(packet, mtu),
        _ => None,
    }
}

/// Whether an IPv4 address is not a single host's (RFC 1122 §3.2.2).
fn not_a_host_v4(a: Ipv4Addr) -> bool {
    a.is_unspecified() || a.is_loopback() || a.is_broadcast() || a.is_multicast()
}

/// ICMP Destination Unreachable, fragmentation needed (type 3, code 4).
fn fragmentation_needed(packet: &[u8], mtu: usize) -> Option<Vec<u8>> {
    let ihl = usize::from(packet.first()? & 0x0f) * 4;
    if ihl < IPV4_HEADER || packet.len() < ihl {
        return None;
    }
    let flags_fragment = u16::from_be_bytes([*packet.get(6)?, *packet.get(7)?]);
    let dont_fragment = flags_fragment & 0x4000 != 0;
    let fragment_offset = flags_fragment & 0x1fff;
    if !dont_fragment || fragment_offset != 0 {
        return None;
    }
    let protocol = *packet.get(9)?;
    let src: [u8; 4] = packet.get(12..16)?.try_into().ok()?;
    let dst: [u8; 4] = packet.get(16..20)?.try_into().ok()?;
    if not_a_host_v4(Ipv4Addr::from(src)) || not_a_host_v4(Ipv4Addr::from(dst)) {
        return None;
    }
    // RFC 792: types 3, 4, 5, 11 and 12 are errors (RFC 1122 §3.2.2: never answered with an error).
    if protocol == 1 && matches!(packet.get(ihl), Some(3 | 4 | 5 | 11 | 12)) {
        return None;
    }
    // RFC 792: "the internet header plus the first 64 bits of the original datagram's data".
    let quoted = packet.get(..(ihl + 8).min(packet.len()))?;
    let total = IPV4_HEADER + ICMP_HEADER + quoted.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&[0x45, 0]);
    out.extend_from_slice(&u16::try_from(total).ok()?.to_be_bytes());
    // Identification 0, no flags, offset 0, TTL, protocol ICMP, checksum (filled below).
    out.extend_from_slice(&[0, 0, 0, 0, TTL, 1, 0, 0]);
    out.extend_from_slice(&dst);
    out.extend_from_slice(&src);
    let header_sum = checksum(ones_complement_sum(0, &out));
    out.get_mut(10..12)?.copy_from_slice(&header_sum);
    // RFC 1191 §4: "the low-order 16 bits of the ICMP header's unused field" carry the next-hop MTU.
    let next_hop_mtu = u16::try_from(mtu).unwrap_or(u16::MAX);
    out.extend_from_slice(&[3, 4, 0, 0, 0, 0]);
    out.extend_from_slice(&next_hop_mtu.to_be_bytes());
    out.extend_from_slice(quoted);
    let icmp_sum = checksum(ones_complement_sum(0, out.get(IPV4_HEADER..)?));
    out.get_mut(IPV4_HEADER + 2..IPV4_HEADER + 4)?
        .copy_from_slice(&icmp_sum);
    Some(out)
}

/// Whether an IPv6 address is not a single host's.
fn not_a_host_v6(a: Ipv6Addr) -> bool {
    a.is_unspecified() || a.is_loopback() || a.is_multicast()
}

/// ICMPv6 Packet Too Big (type 2, code 0).
fn packet_too_big(packet: &[u8], mtu: usize) -> Option<Vec<u8>> {
    if packet.len() < IPV6_HEADER {
        return None;
    }
    let next_header = *packet.get(6)?;
    let src: [u8; 16] = packet.get(8..24)?.try_into().ok()?;
    let dst: [u8; 16] = packet.get(24..40)?.try_into().ok()?;
    if not_a_host_v6(Ipv6Addr::from(src)) || not_a_host_v6(Ipv6Addr::from(dst)) {
        return None;
    }
    // RFC 4443 §2.1: ICMPv6 types 0 to 127 are errors; §2.4 (e.1): never answered with an error.
    if next_header == 58 && packet.get(IPV6_HEADER).is_some_and(|t| *t < 128) {
        return None;
    }
    let quoted = packet.get(..packet.len().min(IPV6_MIN_MTU - IPV6_HEADER - ICMP_HEADER))?;
    let body_len = ICMP_HEADER + quoted.len();
    let body_len16 = u16::try_from(body_len).ok()?;
    let mut out = Vec::with_capacity(IPV6_HEADER + body_len);
    out.extend_from_slice(&[0x60, 0, 0, 0]);
    out.extend_from_slice(&body_len16.to_be_bytes());
    out.extend_from_slice(&[58, TTL]);
    out.extend_from_slice(&dst);
    out.extend_from_slice(&src);
    out.extend_from_slice(&[2, 0, 0, 0]);
    out.extend_from_slice(&u32::try_from(mtu).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(quoted);
    // RFC 4443 §2.3 with RFC 8200 §8.1: the checksum covers a pseudo-header of source, destination,
    // upper-layer packet length (32 bits) and next header (32 bits, 58).
    let mut sum = ones_complement_sum(0, &dst);
    sum = ones_complement_sum(sum, &src);
    sum = ones_complement_sum(sum, &u32::try_from(body_len).ok()?.to_be_bytes());
    sum = ones_complement_sum(sum, &[0, 0, 0, 58]);
    sum = ones_complement_sum(sum, out.get(IPV6_HEADER..)?);
    let field = checksum(sum);
    out.get_mut(IPV6_HEADER + 2..IPV6_HEADER + 4)?
        .copy_from_slice(&field);
    Some(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use super::*;

    /// A 1500-byte IPv4/TCP packet 10.77.0.2:50000 → 10.77.0.1:5001 with DF, identification 0x1c46, TTL 64,
    /// sequence number 1, zero payload. Its header checksum: 4500 + 05dc + 1c46 + 4000 + 4006 + 0a4d + 0002 +
    /// 0a4d + 0001 = fbc5, inverted 043a.
    fn ipv4_packet() -> Vec<u8> {
        let mut p = vec![
            0x45, 0x00, 0x05, 0xdc, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x06, 0x04, 0x3a, 10, 77, 0, 2, 10, 77, 0,
            1, 0xc3, 0x50, 0x13, 0x89, 0, 0, 0, 1,
        ];
        p.resize(1500, 0);
        p
    }

    #[test]
    fn ipv4_fragmentation_needed_bytes() {
        let reply = too_big_reply(&ipv4_packet(), 1432).unwrap();
        // IP header: total length 20 + 8 + 28 = 56 (0x38), TTL 64, protocol 1, from 10.77.0.1 to 10.77.0.2.
        // Checksum: 4500 + 0038 + 4001 + 0a4d + 0001 + 0a4d + 0002 = 99d6, inverted 6629.
        // ICMP: type 3, code 4, next-hop MTU 1432 = 0x0598, the 20-byte header (whose words sum to ffff with
        // its own checksum) and 8 bytes of TCP. Checksum: 0304 + 0598 = 089c; + ffff = 1089b, folded 089c;
        // + c350 = cbec; + 1389 = df75; + 0000 + 0001 = df76; inverted 2089.
        #[rustfmt::skip]
        let expected: Vec<u8> = [
            &[0x45, 0x00, 0x00, 0x38, 0x00, 0x00, 0x00, 0x00, 0x40, 0x01, 0x66, 0x29,
              10, 77, 0, 1, 10, 77, 0, 2][..],
            &[0x03, 0x04, 0x20, 0x89, 0x00, 0x00, 0x05, 0x98][..],
            &ipv4_packet()[..28],
        ]
        .concat();
        assert_eq!(reply, expected);
        // The receiver's check: every checksummed region sums to ffff.
        assert_eq!(ones_complement_sum(0, &reply[..20]), 0xffff);
        assert_eq!(ones_complement_sum(0, &reply[20..]), 0xffff);
    }

    #[test]
    fn ipv4_packets_that_get_no_answer() {
        let mut no_df = ipv4_packet();
        no_df[6] = 0;
        assert_eq!(too_big_reply(&no_df, 1432), None);
        let mut fragment = ipv4_packet();
        fragment[7] = 0x10; // DF and offset 16 × 8 bytes.
        assert_eq!(too_big_reply(&fragment, 1432), None);
        let mut icmp_error = ipv4_packet();
        icmp_error[9] = 1;
        icmp_error[20] = 3;
        assert_eq!(too_big_reply(&icmp_error, 1432), None);
        // An echo request (type 8) is answered.
        icmp_error[20] = 8;
        assert!(too_big_reply(&icmp_error, 1432).is_some());
        let mut multicast = ipv4_packet();
        multicast[16] = 224;
        assert_eq!(too_big_reply(&multicast, 1432), None);
        assert_eq!(too_big_reply(&ipv4_packet()[..12], 1432), None);
        assert_eq!(too_big_reply(&[], 1432), None);
    }

    /// A 1500-byte IPv6/TCP packet fd00::2 port 50000 → fd00::1 port 5001, hop limit 64, payload length
    /// 1460, zero payload after the first 8 TCP bytes.
    fn ipv6_packet() -> Vec<u8> {
        let mut p = vec![0x60, 0, 0, 0, 0x05, 0xb4, 6, 64];
        p.extend_from_slice(&"fd00::2".parse::<Ipv6Addr>().unwrap().octets());
        p.extend_from_slice(&"fd00::1".parse::<Ipv6Addr>().unwrap().octets());
        p.extend_from_slice(&[0xc3, 0x50, 0x13, 0x89, 0, 0, 0, 1]);
        p.resize(1500, 0);
        p
    }

    #[test]
    fn ipv6_packet_too_big_bytes() {
        let reply = too_big_reply(&ipv6_packet(), 1412).unwrap();
        // 1280 − 40 − 8 = 1232 bytes of the original; payload length 8 + 1232 = 1240 = 0x04d8.
        assert_eq!(reply.len(), 1280);
        // Checksum by hand: pseudo-header fd00 + 0001 + fd00 + 0002 + 04d8 + 003a = 1ff15; ICMPv6 header
        // 0200 + 0584 (MTU 1412) → 20699; quoted IPv6 header 6000 + 05b4 + 0640 + fd00 + 0002 + fd00 +
        // 0001 = 265f7 → 46c90; TCP c350 + 1389 + 0001 = d6da → 5436a; folded 436a + 5 = 436f; inverted bc90.
        let mut expected = vec![0x60, 0, 0, 0, 0x04, 0xd8, 58, 64];
        expected.extend_from_slice(&"fd00::1".parse::<Ipv6Addr>().unwrap().octets());
        expected.extend_from_slice(&"fd00::2".parse::<Ipv6Addr>().unwrap().octets());
        expected.extend_from_slice(&[0x02, 0x00, 0xbc, 0x90, 0x00, 0x00, 0x05, 0x84]);
        expected.extend_from_slice(&ipv6_packet()[..1232]);
        assert_eq!(reply, expected);
    }

    #[test]
    fn ipv6_packets_that_get_no_answer() {
        let mut icmp_error = ipv6_packet();
        icmp_error[6] = 58;
        icmp_error[40] = 1; // Destination Unreachable.
        assert_eq!(too_big_reply(&icmp_error, 1412), None);
        icmp_error[40] = 128; // Echo Request: answered.
        assert!(too_big_reply(&icmp_error, 1412).is_some());
        let mut multicast = ipv6_packet();
        multicast[24] = 0xff;
        assert_eq!(too_big_reply(&multicast, 1412), None);
        assert_eq!(too_big_reply(&ipv6_packet()[..39], 1412), None);
    }

    #[test]
    fn checksum_of_rfc_1071_example() {
        // RFC 1071 §3 example: 0001 f203 f4f5 f6f7 sums to 2ddf0, folded ddf2, checksum 220d.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(ones_complement_sum(0, &data), 0xddf2);
        assert_eq!(checksum(ones_complement_sum(0, &data)), [0x22, 0x0d]);
        // An odd byte is padded with zero.
        assert_eq!(ones_complement_sum(0, &[0x12]), 0x1200);
    }
}
