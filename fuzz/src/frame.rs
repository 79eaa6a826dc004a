//! Target `frame`: the frame codec (RFC 9000 §19, RFC 9221 §4 and every frame of draft-ietf-quic-multipath-21)
//! on an arbitrary decrypted payload.
//!
//! Properties:
//! - decoding never panics and stops at the first error;
//! - [`Frame::encoded_len`] is exactly what [`Frame::encode`] writes;
//! - decode → encode → decode gives the same frames, and encoding them again gives the same bytes;
//! - ACK / PATH_ACK ranges are descending, disjoint and never below zero, their count matches the ACK Range
//!   Count, and [`encode_ack`] of those ranges decodes back to the same ranges (canonical re-encoding);
//! - the per-packet-type rules ([`Frame::check_allowed_in`]) agree with [`Frame::allowed_in`].

use mpquic::proto::frame::{Ack, Frame, PacketKind, ack_encoded_len, decode_frames, encode_ack};

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let mut frames = Vec::new();
    let mut consumed_all = true;
    for f in decode_frames(data) {
        match f {
            Ok(f) => frames.push(f),
            Err(_) => {
                consumed_all = false;
                break;
            }
        }
    }
    let mut buf = Vec::new();
    for f in &frames {
        let before = buf.len();
        f.encode(&mut buf);
        assert_eq!(buf.len() - before, f.encoded_len(), "encoded_len of {:?}", f.ty());
        for kind in [
            PacketKind::Initial,
            PacketKind::ZeroRtt,
            PacketKind::Handshake,
            PacketKind::OneRtt,
        ] {
            assert_eq!(f.allowed_in(kind), f.check_allowed_in(kind).is_ok());
        }
        let _ = (f.is_ack_eliciting(), f.is_probing(), f.ty().name());
        if let Frame::Ack(a) = f {
            check_ack(a);
        }
    }
    let again: Vec<Frame<'_>> = match decode_frames(&buf).collect::<Result<_, _>>() {
        Ok(v) => v,
        Err(e) => panic!("re-encoded frames did not decode: {e:?}"),
    };
    assert_eq!(again, frames, "decode → encode → decode");
    let mut buf2 = Vec::new();
    for f in &again {
        f.encode(&mut buf2);
    }
    assert_eq!(buf2, buf, "encoding is stable");
    if consumed_all && frames.iter().all(|f| !matches!(f, Frame::Padding(_))) {
        // Without PADDING runs (coalesced) and with every byte decoded, nothing was lost on the way.
        assert!(buf.len() <= data.len() + frames.len() * 8);
    }
}

/// The ranges of an ACK / PATH_ACK frame are well formed and re-encode canonically.
fn check_ack(a: &Ack<'_>) {
    let ranges: Vec<_> = a.iter().collect();
    assert_eq!(
        ranges.len() as u64,
        a.range_count() + 1,
        "one range per ACK Range plus the first"
    );
    let mut below: Option<u64> = None;
    for r in &ranges {
        assert!(r.start() <= r.end(), "empty range");
        if let Some(b) = below {
            // Separated by at least one unacknowledged packet number (RFC 9000 §19.3.1).
            assert!(*r.end() + 1 < b, "ranges descending and disjoint");
        }
        below = Some(*r.start());
    }
    assert_eq!(ranges.first().map(|r| *r.end()), Some(a.largest.into_inner()));
    assert_eq!(Some(a.smallest()), ranges.last().map(|r| *r.start()));
    let len = match ack_encoded_len(a.path_id, a.delay, &ranges, a.ecn.as_ref()) {
        Ok(n) => n,
        Err(e) => panic!("decoded ACK ranges do not encode: {e:?}"),
    };
    let mut buf = Vec::new();
    assert!(encode_ack(&mut buf, a.path_id, a.delay, &ranges, a.ecn.as_ref()).is_ok());
    assert_eq!(buf.len(), len);
    match decode_frames(&buf).next() {
        Some(Ok(Frame::Ack(b))) => {
            assert_eq!(b.iter().collect::<Vec<_>>(), ranges);
            assert_eq!((b.path_id, b.delay, b.ecn), (a.path_id, a.delay, a.ecn));
            assert!(
                b.encoded_len() <= a.encoded_len(),
                "canonical encoding is not longer"
            );
        }
        other => panic!("re-encoded ACK did not decode: {other:?}"),
    }
}
