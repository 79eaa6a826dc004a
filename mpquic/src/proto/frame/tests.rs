//! Frame codec tests: hand-built vectors, one test per rejection rule (named after it), packet-type and
//! ack-eliciting/probing tables. The property tests are in `proptests.rs`.

use std::ops::RangeInclusive;

use super::*;
use crate::proto::error::TransportErrorCode;

pub(super) const FEE: TransportErrorCode = TransportErrorCode::FRAME_ENCODING_ERROR;
pub(super) const PV: TransportErrorCode = TransportErrorCode::PROTOCOL_VIOLATION;

pub(super) fn v(x: u64) -> VarInt {
    VarInt::from_u64(x).unwrap()
}

fn enc(f: &Frame<'_>) -> Vec<u8> {
    let mut buf = Vec::new();
    f.encode(&mut buf);
    buf
}

pub(super) fn decode_all(bytes: &[u8]) -> Result<Vec<Frame<'_>>, TransportError> {
    decode_frames(bytes).collect()
}

pub(super) fn decode_one(bytes: &[u8]) -> Result<Frame<'_>, TransportError> {
    let mut frames = decode_all(bytes)?;
    assert_eq!(frames.len(), 1, "{frames:?}");
    Ok(frames.remove(0))
}

/// Expects the payload to fail with `code`, attributed to frame type `ty`.
fn rejects(bytes: &[u8], code: TransportErrorCode, ty: FrameType) -> TransportError {
    let e = decode_all(bytes).expect_err("must be rejected");
    assert_eq!((e.code, e.frame_type), (code, Some(ty.0)), "{e}");
    e
}

pub(super) fn varint_bytes(x: u64) -> Vec<u8> {
    let mut b = Vec::new();
    v(x).encode(&mut b);
    b
}

pub(super) fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

pub(super) fn round_trip(f: &Frame<'_>) {
    let buf = enc(f);
    assert_eq!(buf.len(), f.encoded_len(), "encoded_len of {f:?}");
    assert_eq!(decode_one(&buf).as_ref(), Ok(f), "bytes {buf:02x?}");
}

// ---- Hand-built vectors -----------------------------------------------------------------------------------

#[test]
fn ack_ranges_hand_example() {
    // Ranges [0..=2, 5..=9]: Largest 9, First ACK Range 4 (9..=5), Gap 1 (packets 3 and 4 missing: 5 - 2 - 2),
    // ACK Range Length 2 (2..=0).
    let ranges = [5..=9, 0..=2];
    let mut buf = Vec::new();
    encode_ack(&mut buf, None, v(0), &ranges, None).unwrap();
    assert_eq!(buf, [0x02, 9, 0, 1, 4, 1, 2]);
    assert_eq!(ack_encoded_len(None, v(0), &ranges, None), Ok(buf.len()));
    let Frame::Ack(ack) = decode_one(&buf).unwrap() else {
        panic!()
    };
    assert_eq!((ack.largest, ack.first_range, ack.range_count()), (v(9), v(4), 1));
    assert_eq!(ack.iter().collect::<Vec<_>>(), ranges);
    assert_eq!(ack.smallest(), 0);
    assert_eq!(ack.ty(), FrameType::ACK);
}

#[test]
fn path_ack_with_ecn_hand_example() {
    let ecn = EcnCounts {
        ect0: v(10),
        ect1: v(0),
        ce: v(300),
    };
    let ranges = [100..=100, 90..=95, 1..=1];
    let mut buf = Vec::new();
    encode_ack(&mut buf, Some(PathId(3)), v(25), &ranges, Some(&ecn)).unwrap();
    // 0x3f, path 3, largest 100 (2 bytes), delay 25, count 2, first 0, gap 100-95-2=3, len 5, gap 90-1-2=87
    // (2 bytes), len 0, ECT0 10, ECT1 0, CE 300 (2 bytes).
    assert_eq!(
        buf,
        [0x3f, 3, 0x40, 100, 25, 2, 0, 3, 5, 0x40, 87, 0, 10, 0, 0x41, 0x2c]
    );
    let Frame::Ack(ack) = decode_one(&buf).unwrap() else {
        panic!()
    };
    assert_eq!(ack.path_id, Some(PathId(3)));
    assert_eq!(ack.ecn, Some(ecn));
    assert_eq!(ack.ty(), FrameType::PATH_ACK_ECN);
    assert_eq!(ack.iter().collect::<Vec<_>>(), ranges);
}

#[test]
fn path_abandon_multi_byte_frame_type() {
    // 0x3e75 = 15989 ≤ 2^14 - 1 = 16383, so its shortest varint encoding is two bytes: 0b01 prefix on
    // 0x3e75 gives 0x7e 0x75. (A four-byte form, 0x80 0x00 0x3e 0x75, is a valid varint but not minimal.)
    let mut ty = Vec::new();
    FrameType::PATH_ABANDON.encode(&mut ty);
    assert_eq!(ty, [0x7e, 0x75]);
    assert_eq!(FrameType::PATH_ABANDON.size(), 2);
    let f = Frame::PathAbandon(PathAbandon {
        path_id: PathId(1),
        error_code: PathAbandon::PATH_UNSTABLE_OR_POOR,
    });
    assert_eq!(enc(&f), [0x7e, 0x75, 0x01, 0x7e, 0x76]);
    round_trip(&f);
    // Every multipath type above 0x3f takes two bytes.
    for t in 0x3e75..=0x3e7c {
        assert_eq!(FrameType(t).size(), 2);
    }
}

#[test]
fn non_minimal_frame_type_is_protocol_violation() {
    // RFC 9000 §12.4: frame types MUST use the shortest encoding (PING as 0x40 0x01).
    rejects(&[0x40, 0x01], PV, FrameType::PING);
    rejects(&[0x80, 0x00, 0x3e, 0x75, 0x01, 0x00], PV, FrameType::PATH_ABANDON);
}

#[test]
fn unknown_frame_type_is_frame_encoding_error() {
    for t in [0x1f, 0x20, 0x2f, 0x32, 0x3d, 0x3e74, 0x3e7d, 0x3fff, 1 << 20] {
        rejects(&varint_bytes(t), FEE, FrameType(t));
    }
}

#[test]
fn truncated_frame_type_is_frame_encoding_error() {
    let e = decode_all(&[0x7e]).unwrap_err();
    assert_eq!((e.code, e.frame_type), (FEE, None));
}

#[test]
fn padding_runs_are_coalesced() {
    assert_eq!(
        decode_all(&[0, 0, 0, 1, 0]),
        Ok(vec![Frame::Padding(3), Frame::Ping, Frame::Padding(1)])
    );
    assert_eq!(enc(&Frame::Padding(4)), [0, 0, 0, 0]);
}

#[test]
fn stream_type_bits() {
    // 0x08: no offset, no length (data to the end), no FIN.
    let f = decode_one(&[0x08, 4, 1, 2, 3]).unwrap();
    assert_eq!(
        f,
        Frame::Stream(Stream {
            id: v(4),
            offset: v(0),
            fin: false,
            data: &[1, 2, 3]
        })
    );
    // 0x0f: offset, length, FIN; followed by PING.
    let fs = decode_all(&[0x0f, 4, 0x40, 0x80, 2, 9, 9, 0x01]).unwrap();
    assert_eq!(
        fs,
        [
            Frame::Stream(Stream {
                id: v(4),
                offset: v(128),
                fin: true,
                data: &[9, 9]
            }),
            Frame::Ping
        ]
    );
    // The encoder sets OFF only for a non-zero offset and LEN on request.
    let s = Stream {
        id: v(1),
        offset: v(0),
        fin: true,
        data: b"ab",
    };
    assert_eq!(s.ty(false), FrameType(0x09));
    let mut buf = Vec::new();
    s.encode(&mut buf, false);
    assert_eq!(buf, [0x09, 1, b'a', b'b']);
    assert_eq!(buf.len(), s.encoded_len(false));
    assert_eq!(s.header_len(true), 3);
    assert_eq!(FrameType(0x0b).to_string(), "STREAM(0xb)");
    assert_eq!(format!("{:?}", FrameType::PATH_ACK), "PATH_ACK(0x3e)");
}

#[test]
fn datagram_without_length_takes_the_rest() {
    let d = Datagram { data: b"hello" };
    let mut buf = Vec::new();
    d.encode(&mut buf, false);
    assert_eq!(buf.len(), d.encoded_len(false));
    assert_eq!(buf[0], 0x30);
    assert_eq!(decode_one(&buf), Ok(Frame::Datagram(d)));
}

#[test]
fn iteration_stops_at_first_error() {
    let mut it = decode_frames(&[0x01, 0x1f, 0x01]);
    assert_eq!(it.next(), Some(Ok(Frame::Ping)));
    assert_eq!(
        it.next().map(|r| r.map_err(|e| e.frame_type)),
        Some(Err(Some(0x1f)))
    );
    assert_eq!(it.next(), None);
    assert_eq!(it.next(), None);
}

// ---- One test per rejection rule ------------------------------------------------------------------------

#[test]
fn new_connection_id_length_zero_is_frame_encoding_error() {
    rejects(
        &cat(&[&[0x18, 1, 0, 0], &[0; 16]]),
        FEE,
        FrameType::NEW_CONNECTION_ID,
    );
}

#[test]
fn new_connection_id_length_above_20_is_frame_encoding_error() {
    rejects(
        &cat(&[&[0x18, 1, 0, 21], &[0; 21 + 16]]),
        FEE,
        FrameType::NEW_CONNECTION_ID,
    );
    // 20 is the maximum and is accepted.
    assert!(decode_one(&cat(&[&[0x18, 1, 0, 20], &[0; 20 + 16]])).is_ok());
}

#[test]
fn new_connection_id_retire_prior_to_above_sequence_is_frame_encoding_error() {
    rejects(
        &cat(&[&[0x18, 1, 2, 4, 1, 2, 3, 4], &[0; 16]]),
        FEE,
        FrameType::NEW_CONNECTION_ID,
    );
    assert!(decode_one(&cat(&[&[0x18, 2, 2, 4, 1, 2, 3, 4], &[0; 16]])).is_ok());
}

#[test]
fn path_new_connection_id_length_and_retire_prior_to_rules() {
    let ty = FrameType::PATH_NEW_CONNECTION_ID;
    rejects(&cat(&[&[0x7e, 0x78, 5, 1, 0, 0], &[0; 16]]), FEE, ty);
    rejects(&cat(&[&[0x7e, 0x78, 5, 1, 0, 21], &[0; 21 + 16]]), FEE, ty);
    rejects(&cat(&[&[0x7e, 0x78, 5, 1, 2, 1, 7], &[0; 16]]), FEE, ty);
    let bytes = cat(&[&[0x7e, 0x78, 5, 1, 1, 1, 7], &[0xaa; 16]]);
    let f = decode_one(&bytes).unwrap();
    let Frame::NewConnectionId(cid) = f else { panic!() };
    assert_eq!(
        (cid.path_id, cid.sequence, cid.id, cid.reset_token),
        (Some(PathId(5)), v(1), &[7][..], [0xaa; 16])
    );
}

#[test]
fn stream_offset_plus_length_above_2_62_minus_1_is_frame_encoding_error() {
    let max = varint_bytes((1 << 62) - 1);
    let max_minus_1 = varint_bytes((1 << 62) - 2);
    rejects(&cat(&[&[0x0e, 0], &max, &[1, 0xff]]), FEE, FrameType(0x0e));
    // Without a Length field the data runs to the end of the packet; the same rule applies.
    rejects(&cat(&[&[0x0c, 0], &max, &[0xff]]), FEE, FrameType(0x0c));
    // Ending exactly at 2^62 - 1 is allowed.
    assert!(decode_one(&cat(&[&[0x0e, 0], &max_minus_1, &[1, 0xff]])).is_ok());
    assert!(decode_one(&cat(&[&[0x0f, 0], &max, &[0]])).is_ok());
}

#[test]
fn crypto_offset_plus_length_above_2_62_minus_1_is_frame_encoding_error() {
    let max = varint_bytes((1 << 62) - 1);
    rejects(&cat(&[&[0x06], &max, &[1, 0xff]]), FEE, FrameType::CRYPTO);
    assert!(decode_one(&cat(&[&[0x06], &max, &[0]])).is_ok());
}

#[test]
fn max_streams_above_2_60_is_frame_encoding_error() {
    let over = varint_bytes((1 << 60) + 1);
    let limit = varint_bytes(1 << 60);
    for ty in [FrameType::MAX_STREAMS_BIDI, FrameType::MAX_STREAMS_UNI] {
        rejects(&cat(&[&[ty.0 as u8], &over]), FEE, ty);
        assert!(decode_one(&cat(&[&[ty.0 as u8], &limit])).is_ok());
    }
}

#[test]
fn streams_blocked_above_2_60_is_frame_encoding_error() {
    let over = varint_bytes((1 << 60) + 1);
    let limit = varint_bytes(1 << 60);
    for ty in [FrameType::STREAMS_BLOCKED_BIDI, FrameType::STREAMS_BLOCKED_UNI] {
        rejects(&cat(&[&[ty.0 as u8], &over]), FEE, ty);
        assert!(decode_one(&cat(&[&[ty.0 as u8], &limit])).is_ok());
    }
}

#[test]
fn ack_first_range_below_packet_number_zero_is_frame_encoding_error() {
    // Largest 3, First ACK Range 4: the smallest would be -1.
    rejects(&[0x02, 3, 0, 0, 4], FEE, FrameType::ACK);
    assert!(decode_one(&[0x02, 3, 0, 0, 3]).is_ok());
}

#[test]
fn ack_gap_below_packet_number_zero_is_frame_encoding_error() {
    // Largest 9, first range 4 (smallest 5); Gap 4 would make the next largest 5 - 4 - 2 = -1.
    rejects(&[0x02, 9, 0, 1, 4, 4, 0], FEE, FrameType::ACK);
    assert!(decode_one(&[0x02, 9, 0, 1, 4, 3, 0]).is_ok());
}

#[test]
fn ack_range_length_below_packet_number_zero_is_frame_encoding_error() {
    // Largest 9, first range 4, gap 1 (next largest 2); ACK Range Length 3 would reach -1.
    rejects(&[0x02, 9, 0, 1, 4, 1, 3], FEE, FrameType::ACK);
    rejects(&[0x3e, 0, 9, 0, 1, 4, 1, 3], FEE, FrameType::PATH_ACK);
}

#[test]
fn ack_range_count_that_cannot_fit_is_frame_encoding_error() {
    // A Range Count of 2^62 - 1 in a tiny frame is rejected before any range is read.
    let huge = varint_bytes((1 << 62) - 1);
    let e = rejects(&cat(&[&[0x02, 9, 0], &huge, &[0, 0, 0]]), FEE, FrameType::ACK);
    assert_eq!(e.reason, "ACK Range Count exceeds the frame");
    // Two ranges announced, bytes for one.
    rejects(&[0x02, 60, 0, 2, 0, 0, 0, 0], FEE, FrameType::ACK);
    // A count that fits is read; here the ECN counts are missing.
    rejects(&[0x03, 60, 0, 1, 0, 0, 0], FEE, FrameType::ACK_ECN);
}

#[test]
fn connection_close_reason_beyond_packet_is_frame_encoding_error() {
    rejects(
        &[0x1c, 0x0a, 0x00, 5, b'a', b'b'],
        FEE,
        FrameType::CONNECTION_CLOSE,
    );
    rejects(&[0x1d, 0x00, 0x40, 0x10, b'a'], FEE, FrameType::APPLICATION_CLOSE);
    let f = decode_one(&[0x1c, 0x0a, 0x06, 2, b'a', b'b']).unwrap();
    assert_eq!(
        f,
        Frame::ConnectionClose(ConnectionClose {
            error_code: v(10),
            frame_type: v(6),
            reason: b"ab"
        })
    );
}

#[test]
fn new_token_empty_is_frame_encoding_error() {
    rejects(&[0x07, 0], FEE, FrameType::NEW_TOKEN);
    assert_eq!(decode_one(&[0x07, 1, 9]), Ok(Frame::NewToken(&[9])));
}

#[test]
fn path_id_above_2_32_minus_1_is_protocol_violation() {
    let over = varint_bytes(1 << 32);
    let cases: &[(FrameType, &[u8])] = &[
        (FrameType::PATH_ACK, &[9, 0, 0, 0]),
        (FrameType::PATH_ABANDON, &[0]),
        (FrameType::PATH_STATUS_BACKUP, &[1]),
        (FrameType::PATH_STATUS_AVAILABLE, &[1]),
        (
            FrameType::PATH_NEW_CONNECTION_ID,
            &[1, 0, 1, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        ),
        (FrameType::PATH_RETIRE_CONNECTION_ID, &[1]),
        (FrameType::PATH_CIDS_BLOCKED, &[1]),
    ];
    for (ty, rest) in cases {
        let mut bytes = Vec::new();
        ty.encode(&mut bytes);
        let ok = cat(&[&bytes, &varint_bytes(u32::MAX.into()), rest]);
        assert!(decode_one(&ok).is_ok(), "{ty}");
        rejects(&cat(&[&bytes, &over, rest]), PV, *ty);
    }
}

#[test]
fn max_path_id_above_2_32_minus_1_is_protocol_violation() {
    let over = varint_bytes(1 << 32);
    rejects(&cat(&[&[0x7e, 0x7a], &over]), PV, FrameType::MAX_PATH_ID);
    rejects(&cat(&[&[0x7e, 0x7b], &over]), PV, FrameType::PATHS_BLOCKED);
    assert_eq!(
        decode_one(&cat(&[&[0x7e, 0x7a], &varint_bytes(u32::MAX.into())])),
        Ok(Frame::MaxPathId(PathId(u32::MAX)))
    );
}

#[test]
fn truncated_frames_are_frame_encoding_errors() {
    for f in samples() {
        let buf = enc(&f);
        if matches!(f, Frame::Padding(_)) {
            continue;
        }
        for cut in 1..buf.len() {
            let e = decode_all(&buf[..cut]).expect_err(&format!("{f:?} cut at {cut}"));
            let want = if cut < f.ty().size() { None } else { Some(f.ty().0) };
            assert_eq!((e.code, e.frame_type), (FEE, want), "{f:?} cut at {cut}");
        }
    }
}

// ---- Packet types, ack-eliciting, probing ---------------------------------------------------------------

/// One instance of every variant (and both subtypes where a variant covers two frame types).
pub(super) fn samples() -> Vec<Frame<'static>> {
    let ecn = EcnCounts {
        ect0: v(1),
        ect1: v(2),
        ce: v(3),
    };
    let acks = [
        (None, None),
        (None, Some(&ecn)),
        (Some(PathId(2)), None),
        (Some(PathId(2)), Some(&ecn)),
    ]
    .map(|(p, e)| {
        let mut b = Vec::new();
        encode_ack(&mut b, p, v(3), &[5..=9, 0..=2], e).unwrap();
        b
    });
    let ack = |b: Vec<u8>| match decode_one(Box::leak(b.into_boxed_slice())).unwrap() {
        f @ Frame::Ack(_) => f,
        _ => unreachable!(),
    };
    let cid = NewConnectionId {
        path_id: None,
        sequence: v(3),
        retire_prior_to: v(1),
        id: &[1, 2, 3, 4],
        reset_token: [7; 16],
    };
    let mut all = acks.map(ack).to_vec();
    all.extend([
        Frame::Padding(1),
        Frame::Ping,
        Frame::ResetStream(ResetStream {
            id: v(4),
            error_code: v(1),
            final_size: v(1000),
        }),
        Frame::StopSending(StopSending {
            id: v(4),
            error_code: v(1),
        }),
        Frame::Crypto(Crypto {
            offset: v(100),
            data: b"hello",
        }),
        Frame::NewToken(b"token"),
        Frame::Stream(Stream {
            id: v(8),
            offset: v(70_000),
            fin: true,
            data: b"data",
        }),
        Frame::MaxData(v(1 << 20)),
        Frame::MaxStreamData {
            id: v(4),
            max: v(1 << 16),
        },
        Frame::MaxStreams {
            dir: Dir::Bi,
            count: v(100),
        },
        Frame::MaxStreams {
            dir: Dir::Uni,
            count: v(100),
        },
        Frame::DataBlocked(v(1 << 20)),
        Frame::StreamDataBlocked {
            id: v(4),
            limit: v(1 << 16),
        },
        Frame::StreamsBlocked {
            dir: Dir::Bi,
            limit: v(100),
        },
        Frame::StreamsBlocked {
            dir: Dir::Uni,
            limit: v(100),
        },
        Frame::NewConnectionId(cid),
        Frame::NewConnectionId(NewConnectionId {
            path_id: Some(PathId(9)),
            ..cid
        }),
        Frame::RetireConnectionId(RetireConnectionId {
            path_id: None,
            sequence: v(2),
        }),
        Frame::RetireConnectionId(RetireConnectionId {
            path_id: Some(PathId(9)),
            sequence: v(2),
        }),
        Frame::PathChallenge([1, 2, 3, 4, 5, 6, 7, 8]),
        Frame::PathResponse([1, 2, 3, 4, 5, 6, 7, 8]),
        Frame::ConnectionClose(ConnectionClose {
            error_code: v(7),
            frame_type: v(0x3e75),
            reason: b"bad",
        }),
        Frame::ApplicationClose(ApplicationClose {
            error_code: v(0x100),
            reason: b"bye",
        }),
        Frame::HandshakeDone,
        Frame::Datagram(Datagram { data: b"dgram" }),
        Frame::PathAbandon(PathAbandon {
            path_id: PathId(1),
            error_code: PathAbandon::APPLICATION_ABANDON_PATH,
        }),
        Frame::PathStatus(PathStatus {
            path_id: PathId(1),
            sequence: v(5),
            available: false,
        }),
        Frame::PathStatus(PathStatus {
            path_id: PathId(1),
            sequence: v(6),
            available: true,
        }),
        Frame::MaxPathId(PathId(16)),
        Frame::PathsBlocked(PathId(16)),
        Frame::PathCidsBlocked(PathCidsBlocked {
            path_id: PathId(3),
            next_sequence: v(4),
        }),
    ]);
    all
}

#[test]
fn every_sample_round_trips() {
    let all = samples();
    for f in &all {
        round_trip(f);
    }
    // Every known frame type is covered (STREAM by one of its eight types; DATAGRAM 0x30, the type without a
    // Length field, by `datagram_without_length_takes_the_rest`).
    let mut types: Vec<u64> = all
        .iter()
        .map(|f| f.ty().0)
        .filter(|t| !(0x08..=0x0f).contains(t))
        .collect();
    types.sort_unstable();
    types.dedup();
    assert_eq!(types.len(), 0x1f - 8 + 1 + 2 + 8, "{types:x?}");
}

#[test]
fn frame_in_forbidden_packet_type_is_protocol_violation() {
    use PacketKind::*;
    // RFC 9000 §12.4 Table 3 (I, H, 0, 1), RFC 9221 for DATAGRAM, draft-ietf-quic-multipath-21 for the rest.
    let table: &[(u64, &str)] = &[
        (0x00, "IH01"),
        (0x01, "IH01"),
        (0x02, "IH_1"),
        (0x03, "IH_1"),
        (0x04, "__01"),
        (0x05, "__01"),
        (0x06, "IH_1"),
        (0x07, "___1"),
        (0x08, "__01"),
        (0x0f, "__01"),
        (0x10, "__01"),
        (0x11, "__01"),
        (0x12, "__01"),
        (0x13, "__01"),
        (0x14, "__01"),
        (0x15, "__01"),
        (0x16, "__01"),
        (0x17, "__01"),
        (0x18, "__01"),
        (0x19, "__01"),
        (0x1a, "__01"),
        (0x1b, "___1"),
        (0x1c, "IH01"),
        (0x1d, "__01"),
        (0x1e, "___1"),
        (0x30, "__01"),
        (0x31, "__01"),
        (0x3e, "___1"),
        (0x3f, "___1"),
        (0x3e75, "___1"),
        (0x3e76, "___1"),
        (0x3e77, "___1"),
        (0x3e78, "___1"),
        (0x3e79, "___1"),
        (0x3e7a, "___1"),
        (0x3e7b, "___1"),
        (0x3e7c, "___1"),
        (0x1f, "____"),
    ];
    for (ty, cols) in table {
        let allowed: Vec<bool> = cols.chars().map(|c| c != '_').collect();
        let got: Vec<bool> = [Initial, Handshake, ZeroRtt, OneRtt]
            .map(|k| FrameType(*ty).allowed_in(k))
            .to_vec();
        assert_eq!(got, allowed, "frame type {ty:#x}");
    }
    for f in samples() {
        assert_eq!(f.check_allowed_in(OneRtt), Ok(()), "{f:?}");
    }
    let e = Frame::MaxPathId(PathId(1))
        .check_allowed_in(Handshake)
        .unwrap_err();
    assert_eq!((e.code, e.frame_type), (PV, Some(0x3e7a)));
    let e = Frame::HandshakeDone.check_allowed_in(ZeroRtt).unwrap_err();
    assert_eq!((e.code, e.frame_type), (PV, Some(0x1e)));
}

#[test]
fn ack_eliciting_and_probing_frames() {
    for f in samples() {
        let ty = f.ty();
        // RFC 9002 §2: all frames other than ACK, PADDING and CONNECTION_CLOSE are ack-eliciting.
        let non_eliciting = matches!(ty.0, 0x00 | 0x02 | 0x03 | 0x1c | 0x1d | 0x3e | 0x3f);
        assert_eq!(f.is_ack_eliciting(), !non_eliciting, "{ty}");
        // RFC 9000 §9.1: PATH_CHALLENGE, PATH_RESPONSE, NEW_CONNECTION_ID and PADDING are probing frames.
        let probing = matches!(ty.0, 0x00 | 0x18 | 0x1a | 0x1b | 0x3e78);
        assert_eq!(f.is_probing(), probing, "{ty}");
    }
}

#[test]
fn ack_encoder_rejects_invalid_ranges() {
    let bad: &[&[RangeInclusive<u64>]] = &[
        &[5..=9, 3..=4],                     // adjacent: gap of zero packet numbers cannot be encoded
        &[5..=9, 4..=6],                     // overlapping
        &[0..=2, 5..=9],                     // ascending
        &[RangeInclusive::new(9, 5)],        // empty range
        &[0..=(1 << 62)],                    // beyond the varint range
        &[5..=9, RangeInclusive::new(2, 1)], // empty later range
    ];
    for ranges in bad {
        let mut buf = Vec::new();
        assert_eq!(
            encode_ack(&mut buf, None, v(0), ranges, None),
            Err(AckRangesError::Unordered),
            "{ranges:?}"
        );
        assert!(buf.is_empty());
    }
    assert_eq!(
        encode_ack(&mut Vec::new(), None, v(0), &[], None),
        Err(AckRangesError::Empty)
    );
    assert!(encode_ack(&mut Vec::new(), None, v(0), &[5..=9, 0..=3], None).is_ok());
}
