//! Seed inputs for every target, made from real traffic: a client and a server ([`Pair`](crate::pair::Pair)) run a handshake,
//! open a second path (multipath), move stream data and DATAGRAMs both ways, change a path's status,
//! abandon the path and close. Every datagram on the link is recorded, with the plaintext of its packets
//! (opened by the receiver's real keys, [`Connection::open_for_fuzzing`]). From that:
//! - `packet`: the datagrams;
//! - `frame`: the plaintext payloads (CRYPTO, ACK, PATH_ACK, STREAM, PATH_NEW_CONNECTION_ID, MAX_PATH_ID,
//!   PATH_CHALLENGE/RESPONSE, PATH_STATUS_*, PATH_ABANDON, DATAGRAM, CONNECTION_CLOSE…);
//! - `transport_params`: both sides' parameters, cut out of the ClientHello and the EncryptedExtensions;
//! - `ack_ranges`: scripts that send packets and feed the ACK and PATH_ACK frames seen;
//! - `stream_reassembly`: scripts that feed the STREAM frames seen, then read;
//! - `endpoint`: the client's datagrams of the handshake;
//! - `connection`: the client's 1-RTT payloads, to be sealed again on an established connection.
//!
//! `examples/seed_corpus.rs` writes them to `fuzz/corpus/TARGET/`.
//!
//! [`Connection::open_for_fuzzing`]: mpquic::proto::connection::Connection::open_for_fuzzing

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use mpquic::cc::PathId;
use mpquic::proto::coding::VarInt;
use mpquic::proto::connection::Event;
use mpquic::proto::frame::{Frame, decode_frames};
use mpquic::proto::packet::PacketType;
use mpquic::sched::PathStatus;

use crate::connection::{OP_SEALED, OP_TIME, OPEN_STREAM, SECOND_PATH};
use crate::input::put_chunk;
use crate::pair::{CLIENT2, Captured, SERVER};

/// Seeds by target name.
pub type Seeds = BTreeMap<&'static str, Vec<Vec<u8>>>;

/// Runs the real exchange and returns what was on the link. `None` if the exchange could not be set up.
pub fn capture() -> Option<Vec<Captured>> {
    let mut p = crate::pair::new_pair(3)?;
    p.capture = Some(Vec::new());
    if !p.try_handshake() {
        return None;
    }
    let now = p.now;
    p.client
        .first_conn()?
        .open_path(now, Some(CLIENT2), SERVER, PathStatus::Available)
        .ok()?;
    let validated = p.drive_until_steps(Duration::from_secs(2), 300, |p| {
        p.client
            .events
            .iter()
            .any(|(_, e)| matches!(e, Event::PathValidated { .. }))
    });
    if !validated {
        return None;
    }
    let c = p.client.first_conn()?;
    let id = c.open_bi()?;
    let _ = c.write(id, Bytes::from(vec![0x61; 20_000]));
    let _ = c.finish(id);
    let _ = c.send_datagram(Bytes::from_static(b"datagram from the client"));
    p.run_for_steps(Duration::from_millis(60), 400);
    let now = p.now;
    let s = p.server.first_conn()?;
    if let Some(sid) = s.accept_bi() {
        while let Ok(Some(_)) = s.read(sid, 1 << 20, now) {}
        let _ = s.write(sid, Bytes::from(vec![0x62; 6_000]));
        let _ = s.finish(sid);
    }
    let _ = s.send_datagram(Bytes::from_static(b"datagram from the server"));
    p.run_for_steps(Duration::from_millis(60), 400);
    let c = p.client.first_conn()?;
    let _ = c.set_path_status(PathId(1), PathStatus::Backup);
    p.run_for_steps(Duration::from_millis(40), 200);
    let now = p.now;
    let _ = p
        .client
        .first_conn()?
        .close_path(now, PathId(1), VarInt::from_u32(0));
    p.run_for_steps(Duration::from_millis(40), 200);
    let now = p.now;
    p.client
        .first_conn()?
        .close(now, VarInt::from_u32(0), Bytes::from_static(b"done"));
    p.run_for_steps(Duration::from_millis(40), 200);
    p.capture.take()
}

/// Seeds for every target from [`capture`].
pub fn generate() -> Option<Seeds> {
    let log = capture()?;
    let mut seeds = Seeds::new();
    let mut add = |target: &'static str, data: Vec<u8>| {
        let v = seeds.entry(target).or_default();
        if !v.contains(&data) {
            v.push(data);
        }
    };

    for d in &log {
        // cid length 8, a zero mask: the datagram as it was.
        let mut s = vec![8u8, 0, 0, 0, 0, 0];
        s.extend_from_slice(&d.data);
        add("packet", s);
        for (_, payload) in &d.plaintext {
            add("frame", payload.clone());
        }
    }

    // Every frame type, also those the exchange did not use, one per seed and all in one payload.
    let every: Vec<u8> = EVERY_FRAME_TYPE.concat();
    for f in EVERY_FRAME_TYPE {
        add("frame", f.to_vec());
    }
    add("frame", every.clone());
    let mut s = vec![SECOND_PATH | OPEN_STREAM];
    for f in EVERY_FRAME_TYPE {
        s.push(OP_SEALED);
        put_chunk(&mut s, f);
    }
    add("connection", s);

    for (sender, params) in transport_parameters(&log) {
        let mut s = vec![sender];
        s.extend_from_slice(&0x0123_4567_89ab_cdefu64.to_be_bytes());
        s.extend_from_slice(&params);
        add("transport_params", s);
    }

    for frame in ack_frames(&log) {
        add("ack_ranges", ack_script(&frame));
    }
    add("ack_ranges", tracker_script());

    for script in stream_scripts(&log) {
        add("stream_reassembly", script);
    }

    // The client's handshake datagrams, with and without Retry required.
    let handshake: Vec<&Captured> = log
        .iter()
        .filter(|d| d.to_server && d.data.first().is_some_and(|b| b & 0x80 != 0))
        .collect();
    for settings in [0u8, 1] {
        let mut s = vec![settings];
        for d in &handshake {
            s.push(0);
            put_chunk(&mut s, &d.data);
        }
        add("endpoint", s);
    }
    if let Some(first) = handshake.first() {
        let mut s = vec![0u8, 0];
        put_chunk(&mut s, &first.data);
        add("endpoint", s);
    }

    // The client's 1-RTT payloads, sealed again: a few consecutive slices of them.
    let one_rtt: Vec<&Vec<u8>> = log
        .iter()
        .filter(|d| d.to_server)
        .flat_map(|d| d.plaintext.iter())
        .filter(|(t, _)| *t == PacketType::OneRtt)
        .map(|(_, p)| p)
        .collect();
    for (i, chunk) in one_rtt.chunks(8).enumerate() {
        let mut s = vec![SECOND_PATH | OPEN_STREAM];
        for (j, payload) in chunk.iter().enumerate() {
            s.push(OP_SEALED | (((i + j) as u8 & 1) << 2));
            put_chunk(&mut s, payload);
        }
        s.push(OP_TIME | (5 << 2));
        put_chunk(&mut s, &[]);
        add("connection", s);
    }
    // The server's payloads sent back as if from the client (frames of the wrong role).
    let from_server: Vec<&Vec<u8>> = log
        .iter()
        .filter(|d| !d.to_server)
        .flat_map(|d| d.plaintext.iter())
        .filter(|(t, _)| *t == PacketType::OneRtt)
        .map(|(_, p)| p)
        .take(8)
        .collect();
    let mut s = vec![SECOND_PATH];
    for payload in from_server {
        s.push(OP_SEALED);
        put_chunk(&mut s, payload);
    }
    add("connection", s);
    Some(seeds)
}

/// The CRYPTO stream of one direction and level, reassembled.
fn crypto_stream(log: &[Captured], to_server: bool, ty: PacketType) -> Vec<u8> {
    let mut out = Vec::new();
    for d in log.iter().filter(|d| d.to_server == to_server) {
        for (t, payload) in &d.plaintext {
            if *t != ty {
                continue;
            }
            for f in decode_frames(payload).map_while(Result::ok) {
                if let Frame::Crypto(c) = f {
                    let off = usize::try_from(c.offset.into_inner()).unwrap_or(usize::MAX);
                    if off == out.len() {
                        out.extend_from_slice(c.data);
                    }
                }
            }
        }
    }
    out
}

/// The quic_transport_parameters extension (0x39) of the ClientHello (sender byte 0, the client) and of the
/// EncryptedExtensions (sender byte 1, the server).
fn transport_parameters(log: &[Captured]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    let ch = crypto_stream(log, true, PacketType::Initial);
    if let Some(p) = client_hello_params(&ch) {
        out.push((0, p));
    }
    let hs = crypto_stream(log, false, PacketType::Handshake);
    // EncryptedExtensions: type 8, 3-byte length, 2-byte extensions length, extensions.
    if hs.first() == Some(&8) {
        if let Some(p) = hs.get(6..).and_then(find_params) {
            out.push((1, p));
        }
    }
    out
}

fn client_hello_params(ch: &[u8]) -> Option<Vec<u8>> {
    // Type 1, 3-byte length, version (2), random (32), session ID, cipher suites, compression, extensions.
    if ch.first() != Some(&1) {
        return None;
    }
    let mut at = 4 + 2 + 32;
    at += 1 + usize::from(*ch.get(at)?);
    at += 2 + usize::from(u16::from_be_bytes([*ch.get(at)?, *ch.get(at + 1)?]));
    at += 1 + usize::from(*ch.get(at)?);
    find_params(ch.get(at + 2..)?)
}

fn find_params(mut exts: &[u8]) -> Option<Vec<u8>> {
    while exts.len() >= 4 {
        let ty = u16::from_be_bytes([*exts.first()?, *exts.get(1)?]);
        let len = usize::from(u16::from_be_bytes([*exts.get(2)?, *exts.get(3)?]));
        let body = exts.get(4..4 + len)?;
        if ty == 0x39 {
            return Some(body.to_vec());
        }
        exts = exts.get(4 + len..)?;
    }
    None
}

/// The encoded ACK and PATH_ACK frames seen, with the space they acknowledge (0 Initial, 1 Handshake, 2 data).
fn ack_frames(log: &[Captured]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    for d in log {
        for (t, payload) in &d.plaintext {
            let space = match t {
                PacketType::Initial => 0,
                PacketType::Handshake => 1,
                _ => 2,
            };
            for f in decode_frames(payload).map_while(Result::ok) {
                if let Frame::Ack(a) = &f {
                    let mut buf = Vec::new();
                    f.encode(&mut buf);
                    let largest = a.largest.into_inner();
                    if largest < 200 && out.iter().all(|(_, b)| *b != buf) {
                        out.push((space, buf));
                    }
                }
            }
        }
    }
    out
}

/// An `ack_ranges` script: send as many packets as the frame acknowledges in its space, then feed it.
fn ack_script((space, frame): &(u8, Vec<u8>)) -> Vec<u8> {
    let largest = match decode_frames(frame).next() {
        Some(Ok(Frame::Ack(a))) => a.largest.into_inner(),
        _ => 0,
    };
    let mut s = vec![0u8, 64];
    for i in 0..=largest {
        // op 0 (send) in the space, ack-eliciting every other packet, 1200 bytes.
        s.extend_from_slice(&[space << 4, if i % 2 == 0 { 1 } else { 0 }, 0x04, 0x9c]);
    }
    s.extend_from_slice(&[(space << 4) | 5, 3, frame.len() as u8]);
    s.extend_from_slice(frame);
    // Time passes: the loss and probe timers fire.
    s.extend_from_slice(&[6, 0x40, 0x00, 6, 0xff, 0xff]);
    s
}

/// An `ack_ranges` script through the receive side: send, receive some, acknowledge with PATH_ACK, repeat.
fn tracker_script() -> Vec<u8> {
    let mut s = vec![0x01u8, 16];
    for round in 0..4u8 {
        for _ in 0..20 {
            s.extend_from_slice(&[0x20, 0x01, 0x04, 0xb0]);
        }
        // receive (op 3, data space): 32 bits of which were received, counted back 20 from the next.
        s.extend_from_slice(&[0x23, 0xff, 0xfb, 0xef, 0x7f - round, 20]);
        // ack from the tracker (op 4, data space, PATH_ACK), up to 400 bytes, exponent 3, acked.
        s.extend_from_slice(&[0x64, 100, 3, 0]);
        s.extend_from_slice(&[6, 0x01, 0x00]);
    }
    s
}

/// `stream_reassembly` scripts replaying the STREAM frames of each direction (as stream 0), in order and
/// reversed, then reading.
fn stream_scripts(log: &[Captured]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for to_server in [true, false] {
        let mut frames = Vec::new();
        for d in log.iter().filter(|d| d.to_server == to_server) {
            for (_, payload) in &d.plaintext {
                for f in decode_frames(payload).map_while(Result::ok) {
                    if let Frame::Stream(st) = f {
                        let off = u16::try_from(st.offset.into_inner()).unwrap_or(u16::MAX);
                        let len = u16::try_from(st.data.len()).unwrap_or(4095).min(4095);
                        frames.push((off, len, st.fin));
                    }
                }
            }
        }
        for reversed in [false, true] {
            let mut s = Vec::new();
            let mut ordered = frames.clone();
            if reversed {
                ordered.reverse();
            }
            for (i, (off, len, fin)) in ordered.iter().enumerate() {
                // stream 0 (op bits 7..5 = 0), long length (0x08), fin → low bits 3.
                s.push(0x08 | if *fin { 3 } else { 0 });
                s.extend_from_slice(&off.to_be_bytes());
                s.extend_from_slice(&len.to_be_bytes());
                if i % 3 == 2 {
                    // read up to 4 KiB
                    s.extend_from_slice(&[4, 0x10, 0x00]);
                }
            }
            s.extend_from_slice(&[7, 10]);
            out.push(s);
        }
    }
    out
}

/// One frame of every type (RFC 9000 §19, RFC 9221, draft-ietf-quic-multipath-21), encoded by hand.
pub const EVERY_FRAME_TYPE: &[&[u8]] = &[
    &[0x00, 0x00],
    &[0x01],
    // ACK: largest 32, delay 5, 2 more ranges.
    &[0x02, 0x20, 0x05, 0x02, 0x03, 0x01, 0x02, 0x00, 0x00],
    &[0x03, 0x10, 0x00, 0x00, 0x02, 0x05, 0x00, 0x01],
    &[0x04, 0x00, 0x05, 0x10],
    &[0x05, 0x00, 0x07],
    &[0x06, 0x00, 0x03, 0x16, 0x03, 0x03],
    &[0x07, 0x04, 0x01, 0x02, 0x03, 0x04],
    &[0x0f, 0x04, 0x40, 0x10, 0x03, 0x61, 0x62, 0x63],
    &[0x08, 0x00, 0x61, 0x62],
    &[0x10, 0x44, 0x00],
    &[0x11, 0x00, 0x44, 0x00],
    &[0x12, 0x10],
    &[0x13, 0x10],
    &[0x14, 0x44, 0x00],
    &[0x15, 0x04, 0x40, 0x10],
    &[0x16, 0x08],
    &[0x17, 0x08],
    &[
        0x18, 0x05, 0x01, 0x08, 1, 2, 3, 4, 5, 6, 7, 8, 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8,
        0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf,
    ],
    &[0x19, 0x01],
    &[0x1a, 1, 2, 3, 4, 5, 6, 7, 8],
    &[0x1b, 1, 2, 3, 4, 5, 6, 7, 8],
    &[0x1c, 0x0a, 0x08, 0x03, 0x62, 0x61, 0x64],
    &[0x1d, 0x05, 0x00],
    &[0x1e],
    &[0x30, 0x78, 0x79],
    &[0x31, 0x02, 0x78, 0x79],
    // PATH_ACK on path 1, PATH_ACK_ECN on path 0.
    &[0x3e, 0x01, 0x10, 0x00, 0x01, 0x02, 0x01, 0x01],
    &[0x3f, 0x00, 0x10, 0x00, 0x00, 0x02, 0x05, 0x00, 0x01],
    &[0x7e, 0x75, 0x01, 0x00],
    &[0x7e, 0x76, 0x01, 0x02],
    &[0x7e, 0x77, 0x01, 0x03],
    &[
        0x7e, 0x78, 0x01, 0x02, 0x00, 0x08, 9, 9, 9, 9, 9, 9, 9, 9, 0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6,
        0xb7, 0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf,
    ],
    &[0x7e, 0x79, 0x01, 0x00],
    &[0x7e, 0x7a, 0x09],
    &[0x7e, 0x7b, 0x07],
    &[0x7e, 0x7c, 0x01, 0x04],
];
