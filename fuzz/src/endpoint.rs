//! Target `endpoint`: a server [`Endpoint`](mpquic::proto::endpoint::Endpoint) fed arbitrary datagrams, with
//! the connections it creates, virtual time and fixed seeds.
//!
//! Input: one byte of settings (bit 0: require Retry), then datagrams, each `[control u8][length u16][bytes]`
//! (see [`Input::chunk`]). The control byte picks the source address (three clients), the ECN codepoint, how
//! far time advances first, and whether to force a version-1 long header (to steer random bytes past the
//! version check). After each datagram every connection's timers fire and it sends what it wants (the
//! output is dropped). A seed replays the client's datagrams of a real handshake, so the fuzzer mutates real
//! Initial and Handshake packets.
//!
//! Properties: no panic, and no runaway sender (each connection sends a bounded number of datagrams per
//! input datagram: the amplification limit and the congestion window hold).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use mpquic::proto::ack_tracker::EcnCodepoint;

use crate::input::Input;
use crate::pair::{CLIENT, CLIENT2, Node, SERVER, server_endpoint};

const SOURCES: [SocketAddr; 3] = [
    CLIENT,
    CLIENT2,
    SocketAddr::new(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 9)), 5000),
];

/// Most datagrams taken from one input.
const MAX_DATAGRAMS: usize = 64;

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let settings = input.u8();
    let Some(mut ep) = server_endpoint(7) else { return };
    ep.set_require_retry(settings & 1 != 0);
    let mut node = Node::new(ep, SERVER);
    let mut now = crate::base_instant();
    for _ in 0..MAX_DATAGRAMS {
        if input.is_empty() {
            break;
        }
        let control = input.u8();
        let mut datagram = input.chunk().to_vec();
        let from = SOURCES
            .get(usize::from(control & 0x03) % SOURCES.len())
            .copied()
            .unwrap_or(CLIENT);
        let ecn = match (control >> 2) & 0x03 {
            0 => None,
            1 => Some(EcnCodepoint::Ect0),
            2 => Some(EcnCodepoint::Ect1),
            _ => Some(EcnCodepoint::Ce),
        };
        now += Duration::from_millis(u64::from((control >> 4) & 0x07).pow(3));
        if control & 0x80 != 0 && datagram.len() > 6 {
            if let Some(first) = datagram.first_mut() {
                *first |= 0xc0;
            }
            if let Some(v) = datagram.get_mut(1..5) {
                v.copy_from_slice(&1u32.to_be_bytes());
            }
        }
        let _response = node.receive(now, SERVER, from, ecn, &mut datagram, false);
        let sent = node.drive(now, 1024);
        assert!(sent.len() < 1024, "runaway sender");
    }
    // Let every timer run out: idle timeouts, PTOs, draining.
    for _ in 0..32 {
        let Some(t) = node.next_timeout() else { break };
        now = now.max(t);
        let sent = node.drive(now, 1024);
        assert!(sent.len() < 1024, "runaway sender");
    }
}
