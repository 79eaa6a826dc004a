//! Target `connection`: arbitrary frames into an established multipath connection, behind packet protection.
//!
//! Each run completes a real handshake between an in-process client and server ([`Pair`]), optionally
//! opens and validates a second path (multipath, draft-ietf-quic-multipath-21) and opens a stream, then
//! takes the rest of the input as operations, each `[control u8][length u16][bytes]`:
//! - sealed payload: the bytes become the plaintext payload of a 1-RTT packet that the client seals with its
//!   real keys on path 0 or 1 ([`Connection::seal_one_rtt_for_fuzzing`]) and the server receives: the frame
//!   decoder and every frame handler (ACK/PATH_ACK, STREAM, flow control, connection IDs, path management,
//!   CONNECTION_CLOSE…) see arbitrary frames as a peer would send them;
//! - raw datagram: the bytes as they are, from the client's address;
//! - time: both sides exchange what they have for a few milliseconds, so the client reacts to the server's
//!   answers and timers fire.
//!
//! Properties: no panic, no runaway sender.
//!
//! [`Connection::seal_one_rtt_for_fuzzing`]: mpquic::proto::connection::Connection::seal_one_rtt_for_fuzzing

use std::time::Duration;

use bytes::Bytes;
use mpquic::cc::PathId;
use mpquic::proto::connection::Event;
use mpquic::sched::PathStatus;

use crate::input::Input;
use crate::pair::{CLIENT, CLIENT2, Pair, SERVER};

/// Most operations taken from one input.
const MAX_OPS: usize = 32;

/// Settings bit: open and validate a second path before the operations.
pub const SECOND_PATH: u8 = 1;
/// Settings bit: the client opens a bidirectional stream and sends some data before the operations.
pub const OPEN_STREAM: u8 = 2;

/// Operation: a sealed 1-RTT payload (control byte `op | path << 2`).
pub const OP_SEALED: u8 = 0;
/// Operation: a raw datagram.
pub const OP_RAW: u8 = 2;
/// Operation: let time pass (`(control >> 2)` milliseconds, times 4).
pub const OP_TIME: u8 = 3;

/// An established pair, with the settings applied. `None` if the handshake or the second path fails.
pub fn established(settings: u8) -> Option<Pair> {
    let mut p = crate::pair::new_pair(1)?;
    assert!(p.try_handshake(), "the handshake completes");
    if settings & SECOND_PATH != 0 {
        let now = p.now;
        let c = p.client.first_conn()?;
        c.open_path(now, Some(CLIENT2), SERVER, PathStatus::Available)
            .ok()?;
        let ok = p.drive_until_steps(Duration::from_secs(2), 200, |p| {
            p.client
                .events
                .iter()
                .any(|(_, e)| matches!(e, Event::PathValidated { path } if *path == PathId(1)))
        });
        assert!(ok, "the second path validates");
    }
    if settings & OPEN_STREAM != 0 {
        let c = p.client.first_conn()?;
        let id = c.open_bi()?;
        let _ = c.write(id, Bytes::from_static(&[0x5a; 3000]));
        p.run_for_steps(Duration::from_millis(30), 200);
    }
    Some(p)
}

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let settings = input.u8();
    let Some(mut p) = established(settings) else {
        return;
    };
    for _ in 0..MAX_OPS {
        if input.is_empty() {
            break;
        }
        let control = input.u8();
        let bytes = input.chunk();
        let now = p.now;
        match control & 0x03 {
            OP_SEALED | 1 => {
                let path = PathId(u32::from((control >> 2) & 1));
                let from = if path == PathId(0) { CLIENT } else { CLIENT2 };
                let Some(client) = p.client.first_conn() else {
                    return;
                };
                let mut buf = Vec::new();
                if client.seal_one_rtt_for_fuzzing(path, bytes, &mut buf).is_some() {
                    let _ = p.server.receive(now, SERVER, from, None, &mut buf, false);
                }
            }
            OP_RAW => {
                let mut buf = bytes.to_vec();
                let _ = p.server.receive(now, SERVER, CLIENT, None, &mut buf, false);
            }
            _ => p.run_for_steps(Duration::from_millis(u64::from(control >> 2) * 4), 64),
        }
        p.flush();
    }
    p.run_for_steps(Duration::from_millis(100), 64);
}
