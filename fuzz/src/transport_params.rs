//! Target `transport_params`: transport parameter decoding (RFC 9000 §18, §7.4; draft-ietf-quic-multipath-21
//! initial_max_path_id).
//!
//! Input: the first byte's low bit picks the sender (client or server), the next eight bytes seed a GREASE
//! parameter, the rest is the encoded parameters. Properties:
//! - decoding never panics; what it accepts passes [`TransportParameters::validate`];
//! - [`TransportParameters::encoded_len`] is exactly what [`TransportParameters::encode`] writes (with and
//!   without GREASE);
//! - decode → encode → decode gives equal parameters, GREASE or not;
//! - the multipath and connection-ID checks that read decoded parameters never panic.

use mpquic::proto::packet::ConnectionId;
use mpquic::proto::transport_params::{
    Grease, Side, TransportParameters, check_client_cids, check_multipath_cids, check_server_cids,
    multipath_negotiated,
};

use crate::input::Input;

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let sender = if input.u8() & 1 == 0 {
        Side::Client
    } else {
        Side::Server
    };
    let grease = Grease { seed: input.u64() };
    let encoded = input.rest();
    let Ok(params) = TransportParameters::decode(encoded, sender) else {
        return;
    };
    assert!(params.validate(sender).is_ok(), "decoded parameters validate");
    for g in [None, Some(grease)] {
        let mut buf = Vec::new();
        params.encode(&mut buf, g);
        assert_eq!(buf.len(), params.encoded_len(g), "encoded_len is exact");
        match TransportParameters::decode(&buf, sender) {
            Ok(again) => assert_eq!(again, params, "decode → encode → decode"),
            Err(e) => panic!("re-encoded parameters did not decode: {e:?}"),
        }
    }
    let _ = multipath_negotiated(&params, &TransportParameters::default());
    let _ = multipath_negotiated(&params, &params);
    let _ = params.datagrams_supported();
    let cid = ConnectionId::new(&[1, 2, 3, 4, 5, 6, 7, 8]).unwrap_or_default();
    let _ = check_multipath_cids(&params, &cid, &cid);
    let _ = check_client_cids(&params, &cid);
    let _ = check_server_cids(&params, &cid, &cid, Some(&cid));
}
