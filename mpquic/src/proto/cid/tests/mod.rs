//! Tests of the connection-ID module, split by topic: reset tokens, the issuer, the store of the peer's
//! connection IDs, path-ID flow control, a two-sided exchange over the frame codec, and property tests.
//!
//! Every rule the code enforces has a test named after it that breaks the rule and checks the error code.

mod local;
mod path_ids;
mod proptests;
mod remote;
mod reset;
mod two_sided;

use crate::cc::PathId;
use crate::proto::coding::VarInt;
use crate::proto::error::{TransportError, TransportErrorCode};
use crate::proto::frame::{Frame, NewConnectionId, RetireConnectionId, decode_frames};
use crate::proto::packet::connection_id::ConnectionId;
use crate::proto::transport_params::Side;

use super::{LocalCids, PathIds, RemoteCids, ResetKey};

/// A deterministic byte source (SplitMix64), standing in for the caller's RNG.
pub(super) struct TestRng(pub u64);

impl TestRng {
    pub fn fill(&mut self, buf: &mut [u8]) {
        for b in buf {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            *b = (z ^ (z >> 31)) as u8;
        }
    }
}

pub(super) fn cid(bytes: &[u8]) -> ConnectionId {
    ConnectionId::new(bytes).unwrap()
}

pub(super) fn key() -> ResetKey {
    ResetKey::new(b"a static key of thirty-two bytes")
}

pub(super) fn vi(v: u64) -> VarInt {
    VarInt::from_u64(v).unwrap()
}

/// Asserts an error's code and frame type.
#[track_caller]
pub(super) fn assert_err<T: std::fmt::Debug>(
    r: Result<T, TransportError>,
    code: TransportErrorCode,
    frame_type: crate::proto::frame::FrameType,
) -> TransportError {
    let e = r.unwrap_err();
    assert_eq!(e.code, code, "{e}");
    assert_eq!(e.frame_type, Some(frame_type.0), "{e}");
    e
}

/// Path-ID state of an endpoint with `local` and peer `peer` initial_max_path_id.
pub(super) fn path_ids(side: Side, local: Option<u32>, peer: Option<u32>) -> PathIds {
    let mut p = PathIds::new(side, local);
    p.set_peer_initial(peer);
    p
}

/// An issuer with 8-byte CIDs whose handshake SCID is 0xaa…, after the peer's parameters (limit, multipath).
/// Every path ID gets the full number of connection IDs up front (`set_unused_path_cids(u64::MAX)`), so the
/// per-path limits are tested on every path ID; `lazy_issuer` keeps the default share for unused path IDs.
pub(super) fn issuer(peer_limit: u64, multipath: bool) -> LocalCids {
    let mut l = lazy_issuer(peer_limit, multipath);
    l.set_unused_path_cids(u64::MAX);
    l
}

/// An issuer with the default share of connection IDs for unused path IDs.
pub(super) fn lazy_issuer(peer_limit: u64, multipath: bool) -> LocalCids {
    let mut l = LocalCids::new(8, key(), cid(&[0xaa; 8]), multipath).unwrap();
    l.set_peer_params(peer_limit, multipath);
    l
}

/// A store whose handshake DCID is 0xbb… with our `limit`.
pub(super) fn store(limit: u64, multipath: bool) -> RemoteCids {
    let mut r = RemoteCids::new(cid(&[0xbb; 8]), limit);
    r.set_multipath(multipath);
    r
}

/// A (PATH_)NEW_CONNECTION_ID frame with a one-byte-pattern CID.
pub(super) fn new_cid(path: Option<u32>, seq: u64, rpt: u64, id: &[u8], token: u8) -> NewConnectionId<'_> {
    NewConnectionId {
        path_id: path.map(PathId),
        sequence: vi(seq),
        retire_prior_to: vi(rpt),
        id,
        reset_token: [token; 16],
    }
}

/// A (PATH_)RETIRE_CONNECTION_ID frame.
pub(super) fn retire(path: Option<u32>, seq: u64) -> RetireConnectionId {
    RetireConnectionId {
        path_id: path.map(PathId),
        sequence: vi(seq),
    }
}

/// Encodes `frame` and decodes it back, checking the round trip and the predicted length.
pub(super) fn round_trip(frame: &Frame<'_>) -> Vec<u8> {
    let mut buf = Vec::new();
    frame.encode(&mut buf);
    assert_eq!(buf.len(), frame.encoded_len());
    let decoded: Vec<_> = decode_frames(&buf).collect::<Result<_, _>>().unwrap();
    assert_eq!(decoded, vec![frame.clone()]);
    buf
}

#[test]
fn error_codes_used_are_the_rfc_ones() {
    assert_eq!(TransportErrorCode::PROTOCOL_VIOLATION.0, 0x0a);
    assert_eq!(TransportErrorCode::CONNECTION_ID_LIMIT_ERROR.0, 0x09);
}
