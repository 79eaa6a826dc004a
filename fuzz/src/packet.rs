//! Target `packet`: packet header parsing (RFC 9000 §17) of arbitrary datagrams.
//!
//! Input: one byte picks the local connection ID length (0–21; 21 is invalid), five bytes are a
//! header-protection mask, the rest is the datagram. Properties:
//! - splitting coalesced packets advances, stays inside the datagram and never panics;
//! - every decoded header has consistent offsets (packet number and sample inside the packet);
//! - removing header protection (with the input's mask, and with the real Initial keys derived from the
//!   Destination Connection ID) never panics, and an unprotected Initial, 0-RTT, Handshake or 1-RTT header
//!   re-encodes to a header that decodes to the same fields;
//! - Version Negotiation and Retry packets re-encode to packets that decode to the same fields;
//! - a payload sealed with the client's Initial keys opens with the server's to the same bytes.

use mpquic::cc::PathId;
use mpquic::proto::crypto::{Keys, Side};
use mpquic::proto::frame::decode_frames;
use mpquic::proto::packet::stateless_reset::trailing_token;
use mpquic::proto::packet::{
    CoalescedPackets, ConnectionId, DecodedPacket, Header, OutgoingHeader, PacketType, PartialDecode,
    ResetToken, RetryPacket, VersionNegotiation, encode_retry, find_stateless_reset,
};

use crate::input::Input;

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let cid_len = usize::from(input.u8() % 22);
    let mask: [u8; 5] = input.array();
    let datagram = input.rest();

    let mut end = 0usize;
    for item in CoalescedPackets::new(datagram, cid_len) {
        let Ok((range, packet)) = item else { break };
        assert_eq!(range.start, end, "coalesced packets are contiguous");
        assert!(
            range.start < range.end && range.end <= datagram.len(),
            "packet inside the datagram"
        );
        end = range.end;
        let Some(bytes) = datagram.get(range) else { break };
        check_packet(bytes, packet, cid_len, &mask);
    }
    // The stateless-reset helpers read the tail of any datagram.
    if let Some(token) = trailing_token(datagram) {
        let token = ResetToken(*token);
        assert_eq!(find_stateless_reset(datagram, std::iter::once(&token)), Some(0));
    }
}

fn check_packet(bytes: &[u8], packet: DecodedPacket<'_>, cid_len: usize, mask: &[u8; 5]) {
    assert!(packet.len() <= bytes.len() && !packet.is_empty());
    match packet {
        DecodedPacket::Protected(pd) => check_protected(bytes, pd, cid_len, mask),
        DecodedPacket::Retry(r) => check_retry(&r),
        DecodedPacket::VersionNegotiation(vn) => check_vn(&vn),
    }
}

fn check_protected(bytes: &[u8], pd: PartialDecode, cid_len: usize, mask: &[u8; 5]) {
    assert!(pd.len() <= bytes.len());
    assert!(pd.pn_offset() < pd.len());
    assert!(
        pd.sample(bytes).is_some(),
        "a decoded packet has its header-protection sample"
    );
    assert!(pd.token_range().end <= pd.len());
    let _ = pd.check_received_by_client();
    let _ = pd.token(bytes);

    // With the input's mask.
    let mut copy = bytes.to_vec();
    if let Ok(header) = pd.clone().remove_protection(&mut copy, mask) {
        check_header(&copy, &header, cid_len);
    }

    // With the real Initial keys of this Destination Connection ID (what a server does with a new Initial).
    if pd.packet_type() == PacketType::Initial {
        let Ok(keys) = Keys::initial(pd.dcid().as_slice(), Side::Server) else {
            return;
        };
        let mut copy = bytes.to_vec();
        let Ok(field) = keys.remote.header.remove(&mut copy, pd.pn_offset()) else {
            return;
        };
        assert!((1..=4).contains(&field.len));
        let dcid = *pd.dcid();
        let Ok(header) = pd.finish(&copy) else { return };
        assert_eq!(header.pn, field.truncated);
        let pn = header.full_packet_number(None);
        let Some(packet) = copy.get_mut(..header.packet_len) else {
            return;
        };
        if let Ok(n) = keys.remote.packet.open(PathId(0), pn, packet, header.header_len) {
            let payload = packet
                .get(header.header_len..header.header_len + n)
                .unwrap_or_default();
            for frame in decode_frames(payload) {
                if frame.is_err() {
                    break;
                }
            }
        }
        seal_open_round_trip(&dcid, copy.get(header.header_len..).unwrap_or_default());
    }
}

/// Re-encodes an unprotected header and checks that it decodes to the same fields.
fn check_header(packet: &[u8], h: &Header, cid_len: usize) {
    assert!((1..=4).contains(&h.pn_len));
    assert!(h.header_len <= h.packet_len && h.packet_len <= packet.len());
    assert!(h.payload_range().end <= packet.len());
    let _ = h.check_reserved_bits();
    let _ = h.full_packet_number(Some(u64::from(h.pn)));
    let _ = h.full_packet_number(Some(u64::MAX >> 2));
    let token = packet.get(h.token.clone()).unwrap_or_default();
    let scid = h.scid.unwrap_or_default();
    let out = match h.ty {
        PacketType::Initial => OutgoingHeader::Initial {
            dcid: &h.dcid,
            scid: &scid,
            token,
        },
        PacketType::ZeroRtt => OutgoingHeader::ZeroRtt {
            dcid: &h.dcid,
            scid: &scid,
        },
        PacketType::Handshake => OutgoingHeader::Handshake {
            dcid: &h.dcid,
            scid: &scid,
        },
        PacketType::OneRtt => OutgoingHeader::Short {
            dcid: &h.dcid,
            spin: h.spin,
            key_phase: h.key_phase,
        },
    };
    let mut buf = Vec::new();
    let pe = out.encode(u64::from(h.pn), h.pn_len, &mut buf);
    assert_eq!(buf.len(), out.encoded_len(h.pn_len), "encoded_len is exact");
    assert_eq!(pe.header_len(), buf.len());
    // A payload long enough for the sample, then the Length field patched.
    buf.resize(pe.min_packet_len().max(buf.len() + 20), 0);
    let len = buf.len();
    assert!(pe.set_length(&mut buf, len).is_ok());
    let decoded = match DecodedPacket::decode(&buf, cid_len) {
        Ok(DecodedPacket::Protected(pd)) => pd,
        other => panic!("re-encoded {:?} header did not decode: {other:?}", h.ty),
    };
    let h2 = match decoded.finish(&buf) {
        Ok(h2) => h2,
        Err(e) => panic!("re-encoded header did not finish: {e:?}"),
    };
    assert_eq!(h2.ty, h.ty);
    assert_eq!(h2.version, h.version);
    assert_eq!(h2.dcid, h.dcid);
    assert_eq!(h2.scid, h.scid);
    assert_eq!(buf.get(h2.token.clone()), Some(token));
    assert_eq!((h2.spin, h2.key_phase), (h.spin, h.key_phase));
    assert_eq!((h2.pn, h2.pn_len), (h.pn, h.pn_len));
    assert_eq!(h2.reserved_bits, 0);
    assert_eq!(h2.header_len, pe.header_len());
    assert_eq!(h2.packet_len, len);
}

/// Seals `payload` as an Initial with the client's keys for `dcid` and opens it with the server's.
fn seal_open_round_trip(dcid: &ConnectionId, payload: &[u8]) {
    let (Ok(client), Ok(server)) = (
        Keys::initial(dcid.as_slice(), Side::Client),
        Keys::initial(dcid.as_slice(), Side::Server),
    ) else {
        return;
    };
    let payload = payload.get(..payload.len().min(1200)).unwrap_or_default();
    let scid = ConnectionId::default();
    let header = OutgoingHeader::Initial {
        dcid,
        scid: &scid,
        token: &[],
    };
    let pn = 7u64;
    let mut buf = Vec::new();
    let pe = header.encode(pn, 2, &mut buf);
    buf.extend_from_slice(payload);
    let tag = client.local.packet.tag_len();
    let min = pe.min_packet_len();
    if buf.len() + tag < min {
        buf.resize(min - tag, 0);
    }
    let plain = buf.get(pe.header_len()..).unwrap_or_default().to_vec();
    buf.resize(buf.len() + tag, 0);
    let len = buf.len();
    assert!(pe.set_length(&mut buf, len).is_ok());
    assert!(
        client
            .local
            .packet
            .seal(PathId(0), pn, &mut buf, pe.header_len())
            .is_ok()
    );
    assert!(client.local.header.apply(&mut buf, pe.pn_offset()).is_ok());
    let field = match server.remote.header.remove(&mut buf, pe.pn_offset()) {
        Ok(f) => f,
        Err(e) => panic!("header protection round trip: {e:?}"),
    };
    assert_eq!(field.len, 2);
    assert_eq!(u64::from(field.truncated), pn);
    let n = match server
        .remote
        .packet
        .open(PathId(0), pn, &mut buf, pe.header_len())
    {
        Ok(n) => n,
        Err(e) => panic!("packet protection round trip: {e:?}"),
    };
    assert_eq!(
        buf.get(pe.header_len()..pe.header_len() + n),
        Some(plain.as_slice())
    );
}

fn check_retry(r: &RetryPacket<'_>) {
    assert!(!r.token.is_empty());
    let _ = r.check_client_may_accept(&r.dcid, false);
    let mut pseudo = Vec::new();
    r.pseudo_packet(&r.scid, &mut pseudo);
    let mut buf = Vec::new();
    let unused = r.without_tag.first().map_or(0, |b| b & 0x0f);
    encode_retry(&r.dcid, &r.scid, r.token, unused, &mut buf);
    buf.extend_from_slice(&r.tag);
    match DecodedPacket::decode(&buf, 0) {
        Ok(DecodedPacket::Retry(r2)) => {
            assert_eq!(
                (r2.dcid, r2.scid, r2.token, r2.tag),
                (r.dcid, r.scid, r.token, r.tag)
            );
            assert_eq!(r2.without_tag, r.without_tag);
        }
        other => panic!("re-encoded Retry did not decode: {other:?}"),
    }
}

fn check_vn(vn: &VersionNegotiation<'_>) {
    let versions: Vec<u32> = vn.versions().collect();
    let mut buf = Vec::new();
    assert!(VersionNegotiation::encode(
        vn.dcid.as_slice(),
        vn.scid.as_slice(),
        &versions,
        0x5a,
        &mut buf
    ));
    match VersionNegotiation::decode(&buf) {
        Ok(vn2) => {
            assert_eq!((vn2.dcid, vn2.scid), (vn.dcid, vn.scid));
            assert_eq!(vn2.versions().collect::<Vec<_>>(), versions);
        }
        Err(e) => panic!("re-encoded Version Negotiation did not decode: {e:?}"),
    }
}
