//! Random bytes into the endpoint and connections never panic.

use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::harness::{CLIENT, Pair, SERVER, addr};
use crate::proto::connection::TransportConfig;
use crate::proto::endpoint::DatagramEvent;

proptest! {
    // Issue 4: "random bytes fed to the endpoint never panic (proptest, 10 000 cases in CI)"; about a second.
    #![proptest_config(ProptestConfig { cases: 10_000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_into_endpoint_handle_never_panic(data in proptest::collection::vec(any::<u8>(), 0..1500), long in any::<bool>(), retry in any::<bool>()) {
        let mut p = Pair::new(None, TransportConfig::default(), 20);
        p.server.ep.set_require_retry(retry);
        let mut data = data;
        if long && data.len() > 6 {
            // Steer some inputs into the long-header path with version 1.
            data[0] |= 0xc0;
            data[1..5].copy_from_slice(&1u32.to_be_bytes());
        }
        let now = p.now + Duration::from_millis(1);
        for node in [&mut p.server, &mut p.client] {
            let mut d = data.clone();
            if let Some(DatagramEvent::Known(h)) = node.ep.handle(now, None, addr(CLIENT), None, &mut d) {
                if let Some(c) = node.conns.get_mut(&h) {
                    let mut d = data.clone();
                    c.handle_datagram(now, None, addr(SERVER), None, &mut d);
                }
            }
        }
        let _: Instant = now;
    }
}

proptest! {
    #[test]
    fn random_bytes_into_an_established_connection_never_panic(data in proptest::collection::vec(any::<u8>(), 0..1300)) {
        let mut p = Pair::new(None, TransportConfig::default(), 21);
        p.handshake();
        let now = p.now;
        let cid = p.server.conn().local_cid();
        let mut d = data.clone();
        // A short header addressed to the connection, then random bytes.
        if d.len() > 9 {
            d[0] = 0x40 | (d[0] & 0x3f);
            d[1..9].copy_from_slice(cid.as_slice());
        }
        p.server.conn().handle_datagram(now, None, addr(CLIENT), None, &mut d);
        let mut buf = Vec::new();
        let _ = p.server.conn().poll_transmit(now, &mut buf);
    }

    #[test]
    fn random_retry_and_vn_like_packets_into_a_client_never_panic(data in proptest::collection::vec(any::<u8>(), 0..1300), vn in any::<bool>()) {
        let mut p = Pair::new(None, TransportConfig::default(), 22);
        let now = p.now;
        let scid = p.client.conn().local_cid();
        let mut d = data.clone();
        // A long header addressed to the client: Retry (version 1, type 3) or Version Negotiation (version 0).
        if d.len() > 15 {
            d[0] = if vn { 0x80 } else { 0xf0 };
            d[1..5].copy_from_slice(&(if vn { 0u32 } else { 1u32 }).to_be_bytes());
            d[5] = 8;
            d[6..14].copy_from_slice(scid.as_slice());
            d[14] %= 21;
        }
        p.client.conn().handle_datagram(now, None, addr(SERVER), None, &mut d);
        let mut buf = Vec::new();
        let _ = p.client.conn().poll_transmit(now, &mut buf);
    }
}
