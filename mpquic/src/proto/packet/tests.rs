//! Tests of the packet module: RFC 9001 Appendix A vectors, one named test per rejection rule, round-trip
//! proptests and arbitrary-input proptests.

use super::*;
use crate::proto::TransportErrorCode;
use proptest::prelude::*;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn cid(s: &str) -> ConnectionId {
    ConnectionId::new(&hex(s)).unwrap()
}

fn protected(p: DecodedPacket<'_>) -> PartialDecode {
    match p {
        DecodedPacket::Protected(p) => p,
        other => panic!("expected a protected packet, got {other:?}"),
    }
}

fn invalid(r: Result<DecodedPacket<'_>, PacketDecodeError>) -> &'static str {
    match r {
        Err(PacketDecodeError::Invalid(reason)) => reason,
        other => panic!("expected Invalid, got {other:?}"),
    }
}

/// `header` followed by `rest` and zeros up to `total` bytes.
fn packet(header: &str, rest: &str, total: usize) -> Vec<u8> {
    let mut p = hex(header);
    p.extend(hex(rest));
    p.resize(total, 0);
    p
}

const A2_UNPROTECTED: &str = "c300000001088394c8f03e5157080000449e00000002";
const A2_PROTECTED: &str = "c000000001088394c8f03e5157080000449e7b9aec34";
const A2_SAMPLE: &str = "d1b1c98dd7689fb8ec11d242b123dc9b";
const A3_UNPROTECTED: &str = "c1000000010008f067a5502a4262b50040750001";
const A3_PROTECTED: &str = "cf000000010008f067a5502a4262b5004075c0d9";
const A3_SAMPLE: &str = "2cd0991cd25b0aac406a5816b6394100";

// ---- RFC 9001 Appendix A vectors ----

#[test]
fn rfc9001_a2_client_initial_unprotected_header() {
    let p = packet(A2_UNPROTECTED, "", 1200);
    let pd = protected(DecodedPacket::decode(&p, 8).unwrap());
    assert_eq!(pd.packet_type(), PacketType::Initial);
    assert_eq!(pd.version(), VERSION_1);
    assert_eq!(pd.dcid(), &cid("8394c8f03e515708"));
    assert_eq!(pd.scid(), Some(&ConnectionId::EMPTY));
    assert!(pd.token(&p).is_empty());
    assert_eq!(pd.pn_offset(), 18);
    assert_eq!(pd.sample_offset(), 22);
    assert_eq!(pd.len(), 1200); // Length 0x049e = 1182 after the 18-byte header prefix
    let h = pd.finish(&p).unwrap();
    assert_eq!((h.pn, h.pn_len, h.header_len, h.reserved_bits), (2, 4, 22, 0));
    assert_eq!(h.payload_range(), 22..1200);
    assert_eq!(h.full_packet_number(None), 2);
    h.check_reserved_bits().unwrap();
}

#[test]
fn rfc9001_a2_client_initial_header_protection_removal() {
    let mut p = packet(A2_PROTECTED, A2_SAMPLE, 1200);
    let pd = protected(DecodedPacket::decode(&p, 8).unwrap());
    assert_eq!(pd.sample(&p).unwrap()[..], hex(A2_SAMPLE)[..]);
    // RFC 9001 A.2: mask = 437b9aec36.
    let h = pd
        .remove_protection(&mut p, &[0x43, 0x7b, 0x9a, 0xec, 0x36])
        .unwrap();
    assert_eq!(p[..22], hex(A2_UNPROTECTED)[..]);
    assert_eq!((h.pn, h.pn_len), (2, 4));
}

#[test]
fn rfc9001_a2_client_initial_header_encoding_and_protection() {
    let dcid = cid("8394c8f03e515708");
    let hdr = OutgoingHeader::Initial {
        dcid: &dcid,
        scid: &ConnectionId::EMPTY,
        token: &[],
    };
    let mut buf = Vec::new();
    let pe = hdr.encode(2, 4, &mut buf);
    assert_eq!(buf.len(), hdr.encoded_len(4));
    assert_eq!(pe.header_len(), 22);
    pe.set_length(&mut buf, 1200).unwrap();
    assert_eq!(buf, hex(A2_UNPROTECTED));
    buf.extend(hex(A2_SAMPLE));
    buf.resize(1200, 0);
    assert_eq!(pe.sample(&buf).unwrap()[..], hex(A2_SAMPLE)[..]);
    pe.apply_protection(&mut buf, &[0x43, 0x7b, 0x9a, 0xec, 0x36])
        .unwrap();
    assert_eq!(buf[..22], hex(A2_PROTECTED)[..]);
}

#[test]
fn rfc9001_a3_server_initial() {
    // The protected payload starts 5a48; the sample begins 4 bytes after the 2-byte packet number.
    let mut p = packet(A3_PROTECTED, &format!("5a48{A3_SAMPLE}"), 135);
    let pd = protected(DecodedPacket::decode(&p, 0).unwrap());
    assert_eq!(pd.len(), 135);
    assert_eq!(pd.dcid(), &ConnectionId::EMPTY);
    assert_eq!(pd.scid(), Some(&cid("f067a5502a4262b5")));
    assert_eq!(pd.sample(&p).unwrap()[..], hex(A3_SAMPLE)[..]);
    let h = pd
        .remove_protection(&mut p, &[0x2e, 0xc0, 0xd8, 0x35, 0x6a])
        .unwrap();
    assert_eq!(p[..20], hex(A3_UNPROTECTED)[..]);
    assert_eq!((h.pn, h.pn_len, h.header_len), (1, 2, 20));

    let scid = cid("f067a5502a4262b5");
    let hdr = OutgoingHeader::Initial {
        dcid: &ConnectionId::EMPTY,
        scid: &scid,
        token: &[],
    };
    let mut buf = Vec::new();
    hdr.encode(1, 2, &mut buf).set_length(&mut buf, 135).unwrap();
    assert_eq!(buf, hex(A3_UNPROTECTED));
}

#[test]
fn rfc9001_a4_retry() {
    let p = hex("ff000000010008f067a5502a4262b5746f6b656e04a265ba2eff4d829058fb3f0f2496ba");
    let DecodedPacket::Retry(r) = DecodedPacket::decode(&p, 0).unwrap() else {
        panic!("not a Retry")
    };
    assert_eq!(r.version, VERSION_1);
    assert_eq!(r.dcid, ConnectionId::EMPTY);
    assert_eq!(r.scid, cid("f067a5502a4262b5"));
    assert_eq!(r.token, b"token");
    assert_eq!(r.tag[..], hex("04a265ba2eff4d829058fb3f0f2496ba")[..]);
    assert_eq!(r.len(), p.len());
    let mut pseudo = Vec::new();
    r.pseudo_packet(&cid("8394c8f03e515708"), &mut pseudo);
    assert_eq!(
        pseudo,
        hex("088394c8f03e515708 ff000000010008f067a5502a4262b5746f6b656e")
    );
    // Building the same Retry (unused bits 0xf) reproduces the bytes before the tag.
    let mut built = Vec::new();
    encode_retry(
        &ConnectionId::EMPTY,
        &cid("f067a5502a4262b5"),
        b"token",
        0x0f,
        &mut built,
    );
    assert_eq!(built, r.without_tag);
    r.check_client_may_accept(&ConnectionId::EMPTY, false).unwrap();
}

#[test]
fn rfc9001_a5_chacha20_short_header() {
    let mut p = hex("4cfe4189655e5cd55c41f69080575d7999c25a5bfb");
    let pd = protected(DecodedPacket::decode(&p, 0).unwrap());
    assert_eq!(pd.packet_type(), PacketType::OneRtt);
    assert_eq!((pd.pn_offset(), pd.len()), (1, 21));
    assert_eq!(
        pd.sample(&p).unwrap()[..],
        hex("5e5cd55c41f69080575d7999c25a5bfb")[..]
    );
    let h = pd
        .remove_protection(&mut p, &[0xae, 0xfe, 0xfe, 0x7d, 0x03])
        .unwrap();
    assert_eq!(p[..4], hex("4200bff4")[..]);
    assert_eq!((h.pn, h.pn_len, h.spin, h.key_phase), (0xbff4, 3, false, false));
    assert_eq!(h.full_packet_number(Some(654_360_563)), 654_360_564);
}

// ---- rejection rules ----

#[test]
fn long_header_fixed_bit_zero_is_dropped() {
    let mut p = packet(A2_UNPROTECTED, "", 1200);
    p[0] &= !0x40;
    assert_eq!(invalid(DecodedPacket::decode(&p, 8)), "fixed bit is zero");
}

#[test]
fn short_header_fixed_bit_zero_is_dropped() {
    let mut p = hex("4cfe4189655e5cd55c41f69080575d7999c25a5bfb");
    p[0] &= !0x40;
    assert_eq!(invalid(DecodedPacket::decode(&p, 0)), "fixed bit is zero");
}

fn long_header_with_cids(dcid_len: usize, scid_len: usize, version: u32) -> Vec<u8> {
    let mut p = vec![0xc0];
    p.extend(version.to_be_bytes());
    p.push(dcid_len as u8);
    p.extend(vec![1; dcid_len]);
    p.push(scid_len as u8);
    p.extend(vec![2; scid_len]);
    p.extend([0x00, 0x40, 0x20]); // empty token, Length 32
    p.resize(p.len() + 32, 0);
    p
}

#[test]
fn v1_long_header_dcid_longer_than_20_is_dropped() {
    let p = long_header_with_cids(21, 0, VERSION_1);
    assert_eq!(
        invalid(DecodedPacket::decode(&p, 0)),
        "v1 long header DCID longer than 20 bytes"
    );
    assert!(DecodedPacket::decode(&long_header_with_cids(20, 20, VERSION_1), 0).is_ok());
}

#[test]
fn v1_long_header_scid_longer_than_20_is_dropped() {
    let p = long_header_with_cids(8, 21, VERSION_1);
    assert_eq!(
        invalid(DecodedPacket::decode(&p, 0)),
        "v1 long header SCID longer than 20 bytes"
    );
}

#[test]
fn unsupported_version_is_reported_even_with_long_cids() {
    let p = long_header_with_cids(200, 0, 0xff00_001d);
    assert_eq!(
        DecodedPacket::decode(&p, 0),
        Err(PacketDecodeError::UnsupportedVersion { version: 0xff00_001d })
    );
}

#[test]
fn length_exceeding_datagram_is_dropped() {
    let p = packet(A2_UNPROTECTED, "", 1199);
    assert_eq!(
        invalid(DecodedPacket::decode(&p, 8)),
        "Length exceeds the datagram"
    );
}

#[test]
fn long_packet_too_short_for_sample_is_dropped() {
    // Handshake packet, empty CIDs, Length 19: one byte short of 4 + 16.
    let mut p = hex("e0 00000001 00 00 13");
    p.resize(p.len() + 19, 0);
    assert_eq!(
        invalid(DecodedPacket::decode(&p, 0)),
        "packet too short for the header-protection sample"
    );
    let mut p = hex("e0 00000001 00 00 14");
    p.resize(p.len() + 20, 0);
    assert!(DecodedPacket::decode(&p, 0).is_ok());
}

#[test]
fn short_packet_too_short_for_sample_is_dropped() {
    // RFC 9000 §10.3: short header packets smaller than 21 bytes are never valid (with a zero-length CID).
    let p = hex("4cfe4189655e5cd55c41f69080575d7999c25a5b");
    assert_eq!(
        invalid(DecodedPacket::decode(&p, 0)),
        "packet too short for the header-protection sample"
    );
    let mut p = vec![0x40; 8 + 21];
    p.truncate(8 + 20);
    assert!(DecodedPacket::decode(&p, 8).is_err());
}

#[test]
fn local_cid_len_above_20_is_rejected() {
    let p = vec![0x40; 64];
    assert_eq!(
        invalid(DecodedPacket::decode(&p, 21)),
        "local connection ID length above 20"
    );
}

#[test]
fn client_drops_server_initial_with_token() {
    let (d, s) = (cid("0102030405060708"), cid("0a0b"));
    let with = encode_packet(
        OutgoingHeader::Initial {
            dcid: &d,
            scid: &s,
            token: b"t",
        },
        0,
        100,
    );
    let pd = protected(DecodedPacket::decode(&with, 8).unwrap());
    assert_eq!(
        pd.check_received_by_client(),
        Err(PacketDecodeError::Invalid("server Initial with a token"))
    );
    let without = encode_packet(
        OutgoingHeader::Initial {
            dcid: &d,
            scid: &s,
            token: &[],
        },
        0,
        100,
    );
    assert!(
        protected(DecodedPacket::decode(&without, 8).unwrap())
            .check_received_by_client()
            .is_ok()
    );
}

#[test]
fn retry_with_empty_token_is_dropped() {
    let p = hex("ff000000010008f067a5502a4262b504a265ba2eff4d829058fb3f0f2496ba");
    assert_eq!(invalid(DecodedPacket::decode(&p, 0)), "Retry with an empty token");
}

#[test]
fn retry_shorter_than_tag_is_dropped() {
    let p = hex("ff000000010008f067a5502a4262b504a265ba2eff4d829058fb3f0f2496");
    assert_eq!(
        invalid(DecodedPacket::decode(&p, 0)),
        "Retry shorter than its integrity tag"
    );
}

#[test]
fn retry_after_initial_or_retry_is_discarded() {
    let p = hex("ff000000010008f067a5502a4262b5746f6b656e04a265ba2eff4d829058fb3f0f2496ba");
    let DecodedPacket::Retry(r) = DecodedPacket::decode(&p, 0).unwrap() else {
        panic!()
    };
    assert!(r.check_client_may_accept(&ConnectionId::EMPTY, true).is_err());
    assert!(r.check_client_may_accept(&cid("01"), false).is_err());
}

#[test]
fn reserved_bits_non_zero_is_protocol_violation() {
    let mut p = packet(A2_UNPROTECTED, "", 1200);
    p[0] |= 0x08;
    let h = protected(DecodedPacket::decode(&p, 8).unwrap())
        .finish(&p)
        .unwrap();
    assert_eq!(h.reserved_bits, 0x08);
    assert_eq!(
        h.check_reserved_bits().unwrap_err().code,
        TransportErrorCode::PROTOCOL_VIOLATION
    );

    let mut p = hex("4200bff4655e5cd55c41f69080575d7999c25a5bfb");
    p[0] |= 0x10;
    let h = protected(DecodedPacket::decode(&p, 0).unwrap())
        .finish(&p)
        .unwrap();
    assert_eq!(
        h.check_reserved_bits().unwrap_err().code,
        TransportErrorCode::PROTOCOL_VIOLATION
    );
}

#[test]
fn finish_rejects_changed_unprotected_bits() {
    let p = packet(A2_UNPROTECTED, "", 1200);
    let pd = protected(DecodedPacket::decode(&p, 8).unwrap());
    let mut q = p.clone();
    q[0] ^= 0x10; // long type bit: not under header protection
    assert!(pd.clone().finish(&q).is_err());
    assert!(pd.finish(&p[..100]).is_err());
}

#[test]
fn server_drops_initial_in_datagram_under_1200_bytes() {
    assert!(check_initial_datagram_size(1199).is_err());
    assert!(check_initial_datagram_size(1200).is_ok());
    assert_eq!(initial_padding_needed(1000), 200);
    assert_eq!(initial_padding_needed(1300), 0);
}

#[test]
fn set_length_rejects_packets_too_long_for_two_bytes() {
    let d = cid("0102");
    let mut buf = Vec::new();
    let pe = OutgoingHeader::Handshake { dcid: &d, scid: &d }.encode(0, 1, &mut buf);
    assert_eq!(
        pe.set_length(&mut buf, pe.pn_offset() + 16_384),
        Err(PacketEncodeError::TooLong)
    );
    assert_eq!(pe.set_length(&mut buf, pe.pn_offset() + 16_383), Ok(()));
    assert_eq!(
        pe.set_length(&mut buf[..3], 100),
        Err(PacketEncodeError::BufferTooShort)
    );
    assert_eq!(
        pe.apply_protection(&mut buf, &[0; 5]),
        Err(PacketEncodeError::TooShortForSample)
    );
}

// ---- Version Negotiation ----

fn client_initial_unsupported(len: usize) -> Vec<u8> {
    let mut p = hex("c0 1a2a3a4a 08 0102030405060708 04 0a0b0c0d");
    p.resize(len, 0);
    p
}

#[test]
fn version_negotiation_echoes_cids_and_round_trips() {
    let dg = client_initial_unsupported(1200);
    assert_eq!(
        DecodedPacket::decode(&dg, 0),
        Err(PacketDecodeError::UnsupportedVersion { version: 0x1a2a_3a4a })
    );
    let mut vn = Vec::new();
    VersionNegotiation::respond(&dg, &[VERSION_1, 0x0a0a_0a0a], 0xff, &mut vn).unwrap();
    assert_eq!(
        vn,
        hex("ff 00000000 04 0a0b0c0d 08 0102030405060708 00000001 0a0a0a0a")
    );
    let DecodedPacket::VersionNegotiation(v) = DecodedPacket::decode(&vn, 0).unwrap() else {
        panic!()
    };
    assert_eq!(v.dcid, cid("0a0b0c0d"));
    assert_eq!(v.scid, cid("0102030405060708"));
    assert_eq!(v.versions().collect::<Vec<_>>(), [VERSION_1, 0x0a0a_0a0a]);
    assert_eq!(v.len(), vn.len());
}

#[test]
fn no_version_negotiation_in_answer_to_version_negotiation() {
    let mut vn = Vec::new();
    VersionNegotiation::encode(&[1; 8], &[2; 8], &[VERSION_1], 0, &mut vn);
    vn.resize(1200, 0);
    assert!(VersionNegotiation::respond(&vn, &[VERSION_1], 0, &mut Vec::new()).is_err());
}

#[test]
fn no_version_negotiation_for_datagram_under_1200_bytes() {
    let dg = client_initial_unsupported(1199);
    assert_eq!(
        VersionNegotiation::respond(&dg, &[VERSION_1], 0, &mut Vec::new()),
        Err(PacketDecodeError::Invalid(
            "unsupported version in a datagram under 1200 bytes"
        ))
    );
}

#[test]
fn no_version_negotiation_for_short_header_or_supported_version() {
    assert!(VersionNegotiation::respond(&[0x40; 1200], &[VERSION_1], 0, &mut Vec::new()).is_err());
    let p = packet(A2_UNPROTECTED, "", 1200);
    assert!(VersionNegotiation::respond(&p, &[VERSION_1], 0, &mut Vec::new()).is_err());
}

#[test]
fn version_negotiation_cids_longer_than_20_use_rfc8999_lengths() {
    let mut dg = hex("c0 1a2a3a4a");
    dg.push(100);
    dg.extend([7; 100]);
    dg.push(0);
    dg.resize(1200, 0);
    let mut vn = Vec::new();
    VersionNegotiation::respond(&dg, &[VERSION_1], 0, &mut vn).unwrap();
    assert_eq!(vn[5], 0);
    assert_eq!(vn[6], 100);
}

fn vn_for_client(versions: &[u32]) -> Vec<u8> {
    let mut vn = Vec::new();
    // Echoes a client that sent DCID 0102…08, SCID 0a0b0c0d.
    VersionNegotiation::encode(&hex("0a0b0c0d"), &hex("0102030405060708"), versions, 0, &mut vn);
    vn
}

#[test]
fn client_discards_version_negotiation_listing_its_version() {
    let vn = vn_for_client(&[0x6b33_43cf, VERSION_1]);
    let v = VersionNegotiation::decode(&vn).unwrap();
    let (dcid, scid) = (cid("0102030405060708"), cid("0a0b0c0d"));
    assert_eq!(
        v.client_disposition(VERSION_1, &dcid, &scid, false),
        VnDisposition::Discard("lists the version we selected")
    );
}

#[test]
fn client_discards_version_negotiation_after_processing_a_packet() {
    let vn = vn_for_client(&[0x6b33_43cf]);
    let v = VersionNegotiation::decode(&vn).unwrap();
    let (dcid, scid) = (cid("0102030405060708"), cid("0a0b0c0d"));
    assert!(matches!(
        v.client_disposition(VERSION_1, &dcid, &scid, true),
        VnDisposition::Discard(_)
    ));
    assert_eq!(
        v.client_disposition(VERSION_1, &dcid, &scid, false),
        VnDisposition::Abandon
    );
}

#[test]
fn client_discards_version_negotiation_not_echoing_its_cids() {
    let vn = vn_for_client(&[0x6b33_43cf]);
    let v = VersionNegotiation::decode(&vn).unwrap();
    let (dcid, scid) = (cid("0102030405060709"), cid("0a0b0c0d"));
    assert!(matches!(
        v.client_disposition(VERSION_1, &dcid, &scid, false),
        VnDisposition::Discard(_)
    ));
}

#[test]
fn version_negotiation_list_not_multiple_of_four_is_dropped() {
    let mut vn = vn_for_client(&[VERSION_1]);
    vn.pop();
    assert!(VersionNegotiation::decode(&vn).is_err());
}

#[test]
fn reserved_versions() {
    assert!(is_reserved_version(0x0a0a_0a0a));
    assert!(is_reserved_version(0x1a2a_3a4a));
    assert!(!is_reserved_version(VERSION_1));
}

// ---- Stateless Reset ----

#[test]
fn stateless_reset_build_and_detect() {
    let token = ResetToken([0x5a; 16]);
    let size = stateless_reset_size(1200, 43).unwrap();
    assert_eq!(size, 43);
    let mut dg = Vec::new();
    assert!(encode_stateless_reset(&token, &[0xff; 64], size, &mut dg));
    assert_eq!(dg.len(), 43);
    assert_eq!(dg[0] & 0xc0, 0x40, "short header form with the fixed bit");
    assert_eq!(dg[27..], [0x5a; 16]);
    let other = ResetToken([1; 16]);
    assert_eq!(find_stateless_reset(&dg, [&other, &token]), Some(1));
    assert_eq!(find_stateless_reset(&dg, [&other]), None);
    // Long-header-looking datagrams are detected too (RFC 9000 §10.3).
    dg[0] = 0xc0;
    assert_eq!(find_stateless_reset(&dg, [&token]), Some(0));
}

#[test]
fn stateless_reset_is_smaller_than_the_trigger() {
    assert_eq!(stateless_reset_size(30, 1000), Some(29));
    assert_eq!(stateless_reset_size(22, 1000), Some(21));
    // Not smaller than 21 bytes.
    assert_eq!(stateless_reset_size(21, 1000), None);
    assert_eq!(stateless_reset_size(0, 1000), None);
    assert!(!encode_stateless_reset(
        &ResetToken::default(),
        &[],
        20,
        &mut Vec::new()
    ));
}

#[test]
fn datagram_under_21_bytes_is_never_a_stateless_reset() {
    let token = ResetToken([0; 16]);
    assert_eq!(find_stateless_reset(&[0u8; 20], [&token]), None);
    assert_eq!(find_stateless_reset(&[0u8; 21], [&token]), Some(0));
}

// ---- coalescing ----

fn encode_packet(hdr: OutgoingHeader<'_>, pn: u64, payload_len: usize) -> Vec<u8> {
    let mut buf = Vec::new();
    let pe = hdr.encode(pn, 2, &mut buf);
    let total = (buf.len() + payload_len).max(pe.min_packet_len());
    buf.resize(total, 0xaa);
    pe.set_length(&mut buf, total).unwrap();
    buf
}

#[test]
fn coalesced_datagram_is_split_by_length() {
    let (d, s) = (cid("0102030405060708"), cid("0a0b"));
    let mut dg = encode_packet(
        OutgoingHeader::Initial {
            dcid: &d,
            scid: &s,
            token: b"tok",
        },
        0,
        100,
    );
    let a = dg.len();
    dg.extend(encode_packet(
        OutgoingHeader::Handshake { dcid: &d, scid: &s },
        1,
        50,
    ));
    let b = dg.len();
    dg.extend(encode_packet(
        OutgoingHeader::Short {
            dcid: &d,
            spin: true,
            key_phase: true,
        },
        2,
        30,
    ));
    let items: Vec<_> = CoalescedPackets::new(&dg, 8).map(Result::unwrap).collect();
    assert_eq!(items.len(), 3);
    assert_eq!(items[0].0, 0..a);
    assert_eq!(items[1].0, a..b);
    assert_eq!(items[2].0, b..dg.len());
    let types: Vec<_> = items
        .iter()
        .map(|(_, p)| protected(p.clone()).packet_type())
        .collect();
    assert_eq!(
        types,
        [PacketType::Initial, PacketType::Handshake, PacketType::OneRtt]
    );
    let initial = protected(items[0].1.clone());
    assert_eq!(initial.token(&dg[items[0].0.clone()]), b"tok");
    let short = protected(items[2].1.clone()).finish(&dg[b..]).unwrap();
    assert!(short.spin && short.key_phase);
}

#[test]
fn coalesced_packet_with_different_dcid_is_ignored() {
    let (d, other, s) = (cid("0102030405060708"), cid("0807060504030201"), cid("0a0b"));
    let mut dg = encode_packet(
        OutgoingHeader::Initial {
            dcid: &d,
            scid: &s,
            token: &[],
        },
        0,
        100,
    );
    dg.extend(encode_packet(
        OutgoingHeader::Handshake {
            dcid: &other,
            scid: &s,
        },
        1,
        50,
    ));
    dg.extend(encode_packet(
        OutgoingHeader::Handshake { dcid: &d, scid: &s },
        2,
        50,
    ));
    let items: Vec<_> = CoalescedPackets::new(&dg, 8).collect();
    assert_eq!(items.len(), 3);
    assert!(items[0].is_ok());
    assert_eq!(
        items[1].as_ref().unwrap_err(),
        &PacketDecodeError::Invalid("coalesced packet with a different DCID")
    );
    assert!(items[2].is_ok());
}

#[test]
fn coalesced_garbage_stops_iteration() {
    let (d, s) = (cid("0102030405060708"), cid("0a0b"));
    let mut dg = encode_packet(
        OutgoingHeader::Initial {
            dcid: &d,
            scid: &s,
            token: &[],
        },
        0,
        100,
    );
    dg.extend([0u8; 40]); // fixed bit zero: not a QUIC packet
    let items: Vec<_> = CoalescedPackets::new(&dg, 8).collect();
    assert_eq!(items.len(), 2);
    assert!(items[1].is_err());
}

// ---- proptests ----

fn arb_cid() -> impl Strategy<Value = ConnectionId> {
    proptest::collection::vec(any::<u8>(), 0..=MAX_CID_SIZE).prop_map(|v| ConnectionId::new(&v).unwrap())
}

#[derive(Debug, Clone)]
struct HeaderCase {
    kind: u8,
    dcid: ConnectionId,
    scid: ConnectionId,
    token: Vec<u8>,
    spin: bool,
    key_phase: bool,
    pn: u64,
    pn_len: usize,
    payload: usize,
    mask: [u8; 5],
}

fn arb_case() -> impl Strategy<Value = HeaderCase> {
    (
        0u8..4,
        arb_cid(),
        arb_cid(),
        proptest::collection::vec(any::<u8>(), 0..80),
        any::<(bool, bool)>(),
        0u64..(1 << 62),
        1usize..=4,
        0usize..300,
        any::<[u8; 5]>(),
    )
        .prop_map(
            |(kind, dcid, scid, token, (spin, key_phase), pn, pn_len, payload, mask)| HeaderCase {
                kind,
                dcid,
                scid,
                token,
                spin,
                key_phase,
                pn,
                pn_len,
                payload,
                mask,
            },
        )
}

fn header_of(c: &HeaderCase) -> OutgoingHeader<'_> {
    match c.kind {
        0 => OutgoingHeader::Initial {
            dcid: &c.dcid,
            scid: &c.scid,
            token: &c.token,
        },
        1 => OutgoingHeader::ZeroRtt {
            dcid: &c.dcid,
            scid: &c.scid,
        },
        2 => OutgoingHeader::Handshake {
            dcid: &c.dcid,
            scid: &c.scid,
        },
        _ => OutgoingHeader::Short {
            dcid: &c.dcid,
            spin: c.spin,
            key_phase: c.key_phase,
        },
    }
}

proptest! {
    #[test]
    fn header_round_trip(c in arb_case(), trailing in proptest::collection::vec(any::<u8>(), 0..40)) {
        let hdr = header_of(&c);
        let mut buf = Vec::new();
        let pe = hdr.encode(c.pn, c.pn_len, &mut buf);
        prop_assert_eq!(buf.len(), hdr.encoded_len(c.pn_len));
        prop_assert_eq!(pe.header_len(), buf.len());
        let total = (buf.len() + c.payload).max(pe.min_packet_len());
        buf.resize(total, 0x5c);
        pe.set_length(&mut buf, total).unwrap();
        pe.apply_protection(&mut buf, &c.mask).unwrap();
        let is_short = c.kind == 3;
        if !is_short {
            buf.extend(&trailing); // a coalesced tail must not change the decode
        }
        let pd = protected(DecodedPacket::decode(&buf, c.dcid.len()).unwrap());
        prop_assert_eq!(pd.len(), total);
        prop_assert_eq!(pd.pn_offset(), pe.pn_offset());
        prop_assert_eq!(pd.dcid(), &c.dcid);
        let h = pd.remove_protection(&mut buf, &c.mask).unwrap();
        prop_assert_eq!(h.ty, hdr.packet_type());
        prop_assert_eq!(h.version, VERSION_1);
        prop_assert_eq!(h.pn_len, c.pn_len);
        prop_assert_eq!(u64::from(h.pn), c.pn & ((1u64 << (8 * c.pn_len)) - 1));
        prop_assert_eq!(h.header_len, pe.header_len());
        prop_assert_eq!(h.packet_len, total);
        prop_assert_eq!(h.reserved_bits, 0);
        if is_short {
            prop_assert_eq!((h.spin, h.key_phase), (c.spin, c.key_phase));
            prop_assert_eq!(h.scid, None);
        } else {
            prop_assert_eq!(h.scid, Some(c.scid));
            let expected_token: &[u8] = if c.kind == 0 { &c.token } else { &[] };
            prop_assert_eq!(&buf[h.token.clone()], expected_token);
        }
    }

    #[test]
    fn truncated_packets_are_errors_not_panics(c in arb_case(), cut in any::<prop::sample::Index>()) {
        let hdr = header_of(&c);
        let mut buf = Vec::new();
        let pe = hdr.encode(c.pn, c.pn_len, &mut buf);
        let total = (buf.len() + c.payload).max(pe.min_packet_len());
        buf.resize(total, 0);
        pe.set_length(&mut buf, total).unwrap();
        let cut = cut.index(buf.len());
        let r = DecodedPacket::decode(&buf[..cut], c.dcid.len());
        if c.kind != 3 {
            prop_assert!(r.is_err());
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
        cid_len in 0usize..=21,
        mask in any::<[u8; 5]>(),
    ) {
        let mut owned = bytes.clone();
        if let Ok(DecodedPacket::Protected(pd)) = DecodedPacket::decode(&bytes, cid_len) {
            let _ = pd.sample(&owned);
            let _ = pd.remove_protection(&mut owned, &mask);
        }
        for item in CoalescedPackets::new(&bytes, cid_len).flatten() {
            let _ = item.1.len();
        }
        let _ = VersionNegotiation::respond(&bytes, &[VERSION_1], 0, &mut Vec::new());
        let _ = VersionNegotiation::decode(&bytes);
        let _ = find_stateless_reset(&bytes, [&ResetToken::default()]);
    }

    #[test]
    fn arbitrary_long_headers_never_panic(
        first in 0xc0u8..=0xff,
        cids in proptest::collection::vec(any::<u8>(), 0..50),
        tail in proptest::collection::vec(any::<u8>(), 0..100),
    ) {
        // Steer random input into the v1 long header paths.
        let mut p = vec![first, 0, 0, 0, 1];
        p.extend(cids);
        p.extend(tail);
        let mut owned = p.clone();
        if let Ok(DecodedPacket::Protected(pd)) = DecodedPacket::decode(&p, 0) {
            let _ = pd.remove_protection(&mut owned, &[0xff; 5]);
        }
    }

    #[test]
    fn version_negotiation_round_trip(
        dcid in arb_cid(),
        scid in arb_cid(),
        versions in proptest::collection::vec(any::<u32>(), 0..10),
        random in any::<u8>(),
    ) {
        let mut vn = Vec::new();
        prop_assert!(VersionNegotiation::encode(&dcid, &scid, &versions, random, &mut vn));
        prop_assert_eq!(vn.len(), 7 + dcid.len() + scid.len() + 4 * versions.len());
        let DecodedPacket::VersionNegotiation(v) = DecodedPacket::decode(&vn, 0).unwrap() else {
            panic!("not VN");
        };
        prop_assert_eq!(v.dcid, dcid);
        prop_assert_eq!(v.scid, scid);
        prop_assert_eq!(v.versions().collect::<Vec<_>>(), versions);
    }

    #[test]
    fn retry_round_trip(
        dcid in arb_cid(),
        scid in arb_cid(),
        token in proptest::collection::vec(any::<u8>(), 1..100),
        tag in any::<[u8; 16]>(),
        unused in any::<u8>(),
    ) {
        let mut p = Vec::new();
        encode_retry(&dcid, &scid, &token, unused, &mut p);
        p.extend(tag);
        let DecodedPacket::Retry(r) = DecodedPacket::decode(&p, 0).unwrap() else { panic!("not Retry") };
        prop_assert_eq!((r.dcid, r.scid, r.token, r.tag), (dcid, scid, &token[..], tag));
        prop_assert_eq!(r.len(), p.len());
    }

    #[test]
    fn stateless_reset_round_trip(
        token in any::<[u8; 16]>(),
        random in proptest::collection::vec(any::<u8>(), 0..100),
        trigger in 0usize..2000,
        max in 0usize..100,
    ) {
        let token = ResetToken(token);
        match stateless_reset_size(trigger, max) {
            None => prop_assert!(trigger <= MIN_STATELESS_RESET_SIZE || max < MIN_STATELESS_RESET_SIZE),
            Some(size) => {
                prop_assert!(size < trigger && size <= max && size >= MIN_STATELESS_RESET_SIZE);
                let mut dg = Vec::new();
                prop_assert!(encode_stateless_reset(&token, &random, size, &mut dg));
                prop_assert_eq!(dg.len(), size);
                prop_assert_eq!(dg[0] & 0xc0, 0x40);
                prop_assert_eq!(find_stateless_reset(&dg, [&token]), Some(0));
            }
        }
    }
}
