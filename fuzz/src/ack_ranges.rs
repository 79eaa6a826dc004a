//! Target `ack_ranges`: ACK / PATH_ACK processing against a sent-packet map (RFC 9002 Appendix A,
//! draft-ietf-quic-multipath-21 per-path spaces), with the receive side that writes the frames.
//!
//! The input is a script run on one [`PathRecovery`] (the handshake path: Initial, Handshake and
//! Application-data spaces) and a congestion controller picked by the input: send packets, skip packet
//! numbers, let a receiver ([`AckTracker`]) see some of them and write ACK or PATH_ACK frames, feed
//! arbitrary ACK frames decoded from the input, advance time and fire the loss/PTO timer, discard spaces and
//! abandon the path. A model of what was sent checks, after every step:
//! - every record comes back at most once, and only if it was outstanding: acknowledged packets lie in the
//!   frame's ranges, spurious losses were declared lost before;
//! - an acknowledgement of a packet number never sent is an error, and an error changes nothing;
//! - bytes in flight and the outstanding counts equal the model's; the largest acknowledged never decreases;
//! - [`AckTracker`] frames decode, acknowledge only what it received, and always include the largest.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use mpquic::cc::{CongestionController, PathId};
use mpquic::proto::ack_tracker::{AckConfig, AckTracker, EcnCodepoint, SpaceKind};
use mpquic::proto::frame::{Ack, Frame, decode_frames};
use mpquic::proto::recovery::{
    AckOutcome, OutgoingPacket, PacketRecord, PathRecovery, RecoveryConfig, SpaceId, TimeoutOutcome,
};

use crate::input::Input;

const CONTROLLERS: [&str; 6] = ["newreno", "cubic", "bbr", "olia", "lia", "westwood"];

/// The model of one space.
#[derive(Default)]
struct Model {
    /// Outstanding packets: size and whether they count in flight.
    outstanding: BTreeMap<u64, (u16, bool)>,
    /// Declared lost, not acknowledged since.
    lost: BTreeSet<u64>,
    skipped: BTreeSet<u64>,
    next: u64,
    discarded: bool,
}

struct State {
    now: Instant,
    rec: PathRecovery<u64>,
    cc: Box<dyn CongestionController>,
    models: [Model; 3],
    trackers: [AckTracker; 3],
}

fn space_of(b: u8) -> SpaceId {
    match b % 4 {
        0 => SpaceId::Initial,
        1 => SpaceId::Handshake,
        _ => SpaceId::Data,
    }
}

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let head = input.u8();
    let now = crate::base_instant();
    let Some(name) = CONTROLLERS.get(usize::from(head) % CONTROLLERS.len()) else {
        return;
    };
    let Ok(mut cc) = mpquic::cc::registry::build(name) else {
        return;
    };
    cc.on_path_added(PathId(0), now, 1200);
    let config = RecoveryConfig {
        packet_threshold: u64::from(head >> 4),
        ..RecoveryConfig::default()
    };
    let is_server = head & 0x08 != 0;
    let ack_config = AckConfig {
        max_ranges: usize::from(input.u8() % 70),
        ..AckConfig::default()
    };
    let mut s = State {
        now,
        rec: PathRecovery::new_handshake_path(config, is_server),
        cc,
        models: Default::default(),
        trackers: [
            AckTracker::new(SpaceKind::Initial, ack_config),
            AckTracker::new(SpaceKind::Handshake, ack_config),
            AckTracker::new(SpaceKind::Data, ack_config),
        ],
    };
    let mut steps = 0;
    while !input.is_empty() && steps < 4096 {
        steps += 1;
        let op = input.u8();
        let space = space_of(op >> 4);
        match op % 8 {
            0 | 1 => send(&mut s, &mut input, space),
            2 => {
                let m = model(&mut s.models, space);
                let got = s.rec.skip_packet_number(space);
                if !m.discarded {
                    assert_eq!(got, Some(m.next));
                    m.skipped.insert(m.next);
                    m.next += 1;
                }
            }
            3 => receive(&mut s, &mut input, space),
            4 => ack_from_tracker(&mut s, &mut input, space, op & 0x40 != 0),
            5 => raw_ack(&mut s, &mut input, space),
            6 => {
                s.now += Duration::from_micros(u64::from(input.u16()) * 50);
                timeout(&mut s);
            }
            _ => lifecycle(&mut s, &mut input),
        }
        check(&s);
    }
}

fn model(models: &mut [Model; 3], space: SpaceId) -> &mut Model {
    let [a, b, c] = models;
    match space {
        SpaceId::Initial => a,
        SpaceId::Handshake => b,
        SpaceId::Data => c,
    }
}

fn tracker(trackers: &mut [AckTracker; 3], space: SpaceId) -> &mut AckTracker {
    let [a, b, c] = trackers;
    match space {
        SpaceId::Initial => a,
        SpaceId::Handshake => b,
        SpaceId::Data => c,
    }
}

fn send(s: &mut State, input: &mut Input<'_>, space: SpaceId) {
    let flags = input.u8();
    let size = 20 + input.u16() % 1400;
    let m = model(&mut s.models, space);
    let packet = OutgoingPacket {
        size,
        ack_eliciting: flags & 1 != 0,
        in_flight: flags & 2 != 0,
        app_limited: flags & 4 != 0,
        frames: m.next,
    };
    let in_flight = packet.in_flight || packet.ack_eliciting;
    let got = s.rec.on_packet_sent(s.now, space, packet, s.cc.as_mut());
    if m.discarded {
        assert_eq!(got, None, "a discarded space sends nothing");
        return;
    }
    assert_eq!(got, Some(m.next), "packet numbers are consecutive");
    m.outstanding.insert(m.next, (size, in_flight));
    m.next += 1;
}

/// The receiver sees some packet numbers: those sent recently, selected by the input's bits, and sometimes one
/// that was skipped or never sent.
fn receive(s: &mut State, input: &mut Input<'_>, space: SpaceId) {
    let bits = input.u32();
    let back = u64::from(input.u8());
    let m = model(&mut s.models, space);
    let start = m.next.saturating_sub(back);
    let now = s.now;
    let t = tracker(&mut s.trackers, space);
    for i in 0..32u64 {
        if bits & (1 << i) != 0 {
            let ecn = match i % 3 {
                0 => EcnCodepoint::Ect0,
                1 => EcnCodepoint::NotEct,
                _ => EcnCodepoint::Ce,
            };
            t.on_packet_received(now, start + i, i % 2 == 0, ecn);
        }
    }
}

/// The receiver writes an ACK (or PATH_ACK) frame; the sender processes it.
fn ack_from_tracker(s: &mut State, input: &mut Input<'_>, space: SpaceId, path_ack: bool) {
    let max_len = usize::from(input.u8()) * 4;
    let exp = input.u8() % 21;
    let path = (path_ack && space == SpaceId::Data).then_some(PathId(0));
    let now = s.now;
    let t = tracker(&mut s.trackers, space);
    let mut buf = Vec::new();
    let Some(written) = t.write_ack(now, path, exp, &mut buf, max_len) else {
        return;
    };
    assert_eq!(buf.len(), written.len);
    assert!(buf.len() <= max_len);
    let ack = match decode_frames(&buf).next() {
        Some(Ok(Frame::Ack(a))) => a,
        other => panic!("AckTracker wrote a frame that does not decode: {other:?}"),
    };
    assert_eq!(ack.path_id, path);
    assert_eq!(Some(ack.largest.into_inner()), t.largest_received());
    assert_eq!(ack.range_count() + 1, written.ranges as u64);
    for r in ack.iter() {
        assert!(
            t.ranges().contains_all(r.clone()),
            "acknowledges only what was received"
        );
    }
    let largest = written.largest;
    process_ack(s, space, &ack, exp);
    if input.u8() & 1 == 0 {
        tracker(&mut s.trackers, space).on_ack_frame_acked(largest);
    }
}

/// An arbitrary ACK frame from the input.
fn raw_ack(s: &mut State, input: &mut Input<'_>, space: SpaceId) {
    let exp = input.u8() % 21;
    let n = usize::from(input.u8());
    let bytes = input.bytes(n);
    if let Some(Ok(Frame::Ack(ack))) = decode_frames(bytes).next() {
        process_ack(s, space, &ack, exp);
    }
}

fn process_ack(s: &mut State, space: SpaceId, ack: &Ack<'_>, exp: u8) {
    let ranges: Vec<_> = ack.iter().collect();
    let flight_before = s.rec.bytes_in_flight();
    let outstanding_before = s.rec.outstanding(space);
    let largest_before = s.rec.largest_acked(space);
    let result = s.rec.on_ack_frame(s.now, space, ack, exp, s.cc.as_mut());
    let m = model(&mut s.models, space);
    if m.discarded {
        assert!(matches!(&result, Ok(o) if o.acked.is_empty() && o.lost.is_empty()));
        return;
    }
    let beyond = ranges.iter().any(|r| *r.end() >= m.next);
    let outcome = match result {
        Err(_) => {
            let skipped = ranges.iter().any(|r| m.skipped.range(r.clone()).next().is_some());
            assert!(
                beyond || skipped,
                "an error names an unsent or skipped packet number"
            );
            assert_eq!(s.rec.bytes_in_flight(), flight_before, "an error changes nothing");
            assert_eq!(
                s.rec.outstanding(space),
                outstanding_before,
                "an error changes nothing"
            );
            return;
        }
        Ok(o) => o,
    };
    assert!(!beyond, "an ACK of a packet number never sent is an error");
    let AckOutcome {
        acked,
        lost,
        spurious_losses,
        ..
    } = outcome;
    for r in &acked {
        assert!(
            ranges.iter().any(|x| x.contains(&r.pn)),
            "acked {} is in the frame",
            r.pn
        );
        take(m, r, "acknowledged");
    }
    for r in &lost {
        take(m, r, "declared lost");
        m.lost.insert(r.pn);
    }
    for pn in spurious_losses {
        assert!(m.lost.remove(&pn), "spurious loss {pn} was declared lost");
        assert!(ranges.iter().any(|x| x.contains(&pn)));
    }
    assert!(
        s.rec.largest_acked(space) >= largest_before,
        "largest acknowledged never decreases"
    );
}

/// Removes a returned record from the model, checking it was outstanding and is returned once.
fn take(m: &mut Model, r: &PacketRecord<u64>, what: &str) {
    assert_eq!(r.frames, r.pn, "the record of packet {} is its own", r.pn);
    let Some((size, in_flight)) = m.outstanding.remove(&r.pn) else {
        panic!("packet {} {what} but not outstanding", r.pn);
    };
    assert_eq!((r.size, r.in_flight), (size, in_flight));
}

fn timeout(s: &mut State) {
    let due = s.rec.loss_detection_timer().is_some_and(|t| t <= s.now);
    match s.rec.on_timeout(s.now, s.cc.as_mut()) {
        TimeoutOutcome::NotDue => assert!(!due, "a due timer fires"),
        TimeoutOutcome::Lost { space, lost, .. } => {
            let m = model(&mut s.models, space);
            assert!(!m.discarded);
            for r in &lost {
                take(m, r, "lost on timeout");
                m.lost.insert(r.pn);
            }
        }
        TimeoutOutcome::Probe { .. } | TimeoutOutcome::AntiDeadlock => {}
    }
}

fn lifecycle(s: &mut State, input: &mut Input<'_>) {
    let what = input.u8();
    match what % 6 {
        0 | 1 => {
            let space = if what % 6 == 0 {
                SpaceId::Initial
            } else {
                SpaceId::Handshake
            };
            let records = s.rec.discard_space(s.now, space);
            let m = model(&mut s.models, space);
            for r in &records {
                take(m, r, "discarded");
            }
            assert!(
                m.outstanding.is_empty(),
                "discarding returns every outstanding packet"
            );
            m.discarded = true;
            m.lost.clear();
        }
        2 => {
            let records = s.rec.abandon();
            let outstanding: usize = s.models.iter().map(|m| m.outstanding.len()).sum();
            assert_eq!(
                records.len(),
                outstanding,
                "abandoning returns every outstanding packet"
            );
            for r in &records {
                assert!(
                    s.models.iter().any(|m| m.outstanding.contains_key(&r.pn)),
                    "abandon returned {} which is not outstanding",
                    r.pn
                );
            }
            for m in &mut s.models {
                m.outstanding.clear();
            }
            assert_eq!(s.rec.bytes_in_flight(), 0);
        }
        3 => s.rec.on_handshake_confirmed(s.now),
        4 => s.rec.set_amplification_limited(s.now, what & 0x10 != 0),
        _ => s
            .rec
            .set_max_ack_delay(s.now, Duration::from_millis(u64::from(input.u8()))),
    }
}

fn check(s: &State) {
    let mut flight = 0u64;
    for (space, m) in SpaceId::ALL.iter().zip(&s.models) {
        if !m.discarded {
            assert_eq!(
                s.rec.outstanding(*space),
                m.outstanding.len(),
                "outstanding in {space:?}"
            );
            assert_eq!(s.rec.next_packet_number(*space), Some(m.next));
        }
        flight += m
            .outstanding
            .values()
            .filter(|(_, f)| *f)
            .map(|(n, _)| u64::from(*n))
            .sum::<u64>();
    }
    assert_eq!(s.rec.bytes_in_flight(), flight, "bytes in flight");
}
