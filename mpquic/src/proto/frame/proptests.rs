//! Frame codec property tests: round trip of every frame variant (alone and in sequences, with the last
//! STREAM/DATAGRAM without a Length field), ACK ranges through the encoder and the lazy iterator, and
//! arbitrary bytes that never panic and whose decodable frames re-encode to themselves.

use proptest::prelude::*;

use super::tests::{FEE, PV, cat, decode_all, decode_one, round_trip, v, varint_bytes};
use super::*;

fn leak(b: Vec<u8>) -> &'static [u8] {
    Box::leak(b.into_boxed_slice())
}

fn any_varint() -> impl Strategy<Value = VarInt> {
    prop_oneof![0u64..64, 0u64..(1 << 14), 0u64..(1 << 30), 0u64..(1 << 62)].prop_map(v)
}

fn any_path() -> impl Strategy<Value = PathId> {
    prop_oneof![0u32..4, any::<u32>()].prop_map(PathId)
}

fn any_data(max: usize) -> impl Strategy<Value = &'static [u8]> {
    proptest::collection::vec(any::<u8>(), 0..max).prop_map(leak)
}

fn any_dir() -> impl Strategy<Value = Dir> {
    prop_oneof![Just(Dir::Bi), Just(Dir::Uni)]
}

/// Descending, non-adjacent packet-number ranges built from a largest value and (gap, length) steps.
fn any_ranges() -> impl Strategy<Value = Vec<std::ops::RangeInclusive<u64>>> {
    let step = prop_oneof![0u64..4, 0u64..1000, 0u64..(1 << 40)];
    (
        0u64..(1 << 62),
        proptest::collection::vec((step.clone(), step), 0..40),
    )
        .prop_map(|(largest, steps)| {
            let mut out = Vec::new();
            let first_len = steps.first().map_or(0, |s| s.1);
            let mut smallest = largest.saturating_sub(first_len);
            out.push(smallest..=largest);
            for (gap, len) in steps.into_iter().skip(1) {
                let Some(hi) = smallest.checked_sub(gap).and_then(|x| x.checked_sub(2)) else {
                    break;
                };
                smallest = hi.saturating_sub(len);
                out.push(smallest..=hi);
            }
            out
        })
}

fn any_ecn() -> impl Strategy<Value = Option<EcnCounts>> {
    proptest::option::of(
        (any_varint(), any_varint(), any_varint()).prop_map(|(a, b, c)| EcnCounts {
            ect0: a,
            ect1: b,
            ce: c,
        }),
    )
}

fn any_ack() -> impl Strategy<Value = Frame<'static>> {
    (
        proptest::option::of(any_path()),
        any_varint(),
        any_ranges(),
        any_ecn(),
    )
        .prop_map(|(path, delay, ranges, ecn)| {
            let mut buf = Vec::new();
            encode_ack(&mut buf, path, delay, &ranges, ecn.as_ref()).unwrap();
            assert_eq!(Ok(buf.len()), ack_encoded_len(path, delay, &ranges, ecn.as_ref()));
            let f = decode_one(leak(buf)).unwrap();
            let Frame::Ack(a) = &f else { unreachable!() };
            assert_eq!(a.iter().collect::<Vec<_>>(), ranges);
            f
        })
}

fn any_frame() -> impl Strategy<Value = Frame<'static>> {
    let cid = (
        proptest::option::of(any_path()),
        any_varint(),
        any::<u64>(),
        proptest::collection::vec(any::<u8>(), 1..=20).prop_map(leak),
        any::<[u8; 16]>(),
    )
        .prop_map(|(path_id, sequence, r, id, reset_token)| {
            let retire_prior_to = v(r % (sequence.into_inner() + 1));
            Frame::NewConnectionId(NewConnectionId {
                path_id,
                sequence,
                retire_prior_to,
                id,
                reset_token,
            })
        });
    let stream =
        (any_varint(), any_varint(), any::<bool>(), any_data(64)).prop_map(|(id, off, fin, data)| {
            let offset = v(off.into_inner().min((1 << 62) - 1 - data.len() as u64));
            Frame::Stream(Stream {
                id,
                offset,
                fin,
                data,
            })
        });
    let crypto = (any_varint(), any_data(64)).prop_map(|(off, data)| {
        Frame::Crypto(Crypto {
            offset: v(off.into_inner().min((1 << 62) - 1 - data.len() as u64)),
            data,
        })
    });
    let count = (0u64..=(1 << 60)).prop_map(v);
    prop_oneof![
        (1usize..64).prop_map(Frame::Padding),
        Just(Frame::Ping),
        any_ack(),
        (any_varint(), any_varint(), any_varint()).prop_map(|(id, error_code, final_size)| {
            Frame::ResetStream(ResetStream {
                id,
                error_code,
                final_size,
            })
        }),
        (any_varint(), any_varint())
            .prop_map(|(id, error_code)| Frame::StopSending(StopSending { id, error_code })),
        crypto,
        proptest::collection::vec(any::<u8>(), 1..64).prop_map(|t| Frame::NewToken(leak(t))),
        stream,
        any_varint().prop_map(Frame::MaxData),
        (any_varint(), any_varint()).prop_map(|(id, max)| Frame::MaxStreamData { id, max }),
        (any_dir(), count.clone()).prop_map(|(dir, count)| Frame::MaxStreams { dir, count }),
        any_varint().prop_map(Frame::DataBlocked),
        (any_varint(), any_varint()).prop_map(|(id, limit)| Frame::StreamDataBlocked { id, limit }),
        (any_dir(), count).prop_map(|(dir, limit)| Frame::StreamsBlocked { dir, limit }),
        cid,
        (proptest::option::of(any_path()), any_varint()).prop_map(|(path_id, sequence)| {
            Frame::RetireConnectionId(RetireConnectionId { path_id, sequence })
        }),
        any::<[u8; 8]>().prop_map(Frame::PathChallenge),
        any::<[u8; 8]>().prop_map(Frame::PathResponse),
        (any_varint(), any_varint(), any_data(32)).prop_map(|(error_code, frame_type, reason)| {
            Frame::ConnectionClose(ConnectionClose {
                error_code,
                frame_type,
                reason,
            })
        }),
        (any_varint(), any_data(32)).prop_map(|(error_code, reason)| Frame::ApplicationClose(
            ApplicationClose { error_code, reason }
        )),
        Just(Frame::HandshakeDone),
        any_data(64).prop_map(|data| Frame::Datagram(Datagram { data })),
        (any_path(), any_varint())
            .prop_map(|(path_id, error_code)| Frame::PathAbandon(PathAbandon { path_id, error_code })),
        (any_path(), any_varint(), any::<bool>()).prop_map(|(path_id, sequence, available)| {
            Frame::PathStatus(PathStatus {
                path_id,
                sequence,
                available,
            })
        }),
        any_path().prop_map(Frame::MaxPathId),
        any_path().prop_map(Frame::PathsBlocked),
        (any_path(), any_varint()).prop_map(|(path_id, next_sequence)| Frame::PathCidsBlocked(
            PathCidsBlocked {
                path_id,
                next_sequence
            }
        )),
    ]
}

/// Known frame types, to steer random bodies past the type check.
fn any_known_type() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..=0x1e, 0x30u64..=0x31, 0x3eu64..=0x3f, 0x3e75u64..=0x3e7c]
}

proptest! {
    #[test]
    fn round_trip_every_variant(f in any_frame()) {
        round_trip(&f);
    }

    #[test]
    fn round_trip_sequences(frames in proptest::collection::vec(any_frame(), 1..8), last_without_len in any::<bool>()) {
        // Padding runs would merge with each other; keep one frame per run.
        let frames: Vec<_> = frames.into_iter().filter(|f| !matches!(f, Frame::Padding(_))).collect();
        let mut buf = Vec::new();
        for (i, f) in frames.iter().enumerate() {
            match f {
                Frame::Stream(s) if last_without_len && i + 1 == frames.len() => s.encode(&mut buf, false),
                Frame::Datagram(d) if last_without_len && i + 1 == frames.len() => d.encode(&mut buf, false),
                f => f.encode(&mut buf),
            }
        }
        prop_assert_eq!(decode_all(&buf), Ok(frames));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        for f in decode_frames(&bytes).flatten() {
            // Whatever decodes re-encodes to something that decodes to the same frame.
            round_trip(&f);
        }
    }

    #[test]
    fn arbitrary_bodies_never_panic(ty in any_known_type(), body in proptest::collection::vec(any::<u8>(), 0..128)) {
        let bytes = cat(&[&varint_bytes(ty), &body]);
        for r in decode_frames(&bytes) {
            match r {
                Ok(f) => round_trip(&f),
                Err(e) => prop_assert!(e.code == FEE || e.code == PV, "{}", e),
            }
        }
    }
}
