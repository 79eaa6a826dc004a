//! Model-based property tests: random send / skip / ACK / timeout / discard sequences on a [`PathRecovery`]
//! driven by real congestion controllers never panic, keep bytes in flight equal to the sum of the
//! outstanding in-flight packets of a simple model, and hand every frame record back exactly once (acked,
//! lost, discarded, or still outstanding until [`PathRecovery::abandon`] returns it).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::RangeInclusive;
use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::*;
use crate::cc::registry;

#[derive(Clone, Debug)]
enum Op {
    Send {
        space: u8,
        size: u16,
        ack_eliciting: bool,
        in_flight: bool,
        app_limited: bool,
        dt_us: u32,
    },
    Skip {
        space: u8,
    },
    Ack {
        space: u8,
        /// Offset of the largest acknowledged below the largest sent (negative: beyond it).
        top_back: i8,
        /// (gap, length) pairs, largest range first.
        ranges: Vec<(u8, u8)>,
        delay_us: u32,
        ce: Option<u8>,
        dt_us: u32,
    },
    Timeout {
        jump: bool,
        dt_us: u32,
    },
    Discard {
        space: u8,
    },
    Confirm,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..3u8, 1..1500u16, any::<bool>(), any::<bool>(), any::<bool>(), 0..20_000u32).prop_map(
            |(space, size, ack_eliciting, in_flight, app_limited, dt_us)| Op::Send {
                space,
                size,
                ack_eliciting,
                in_flight,
                app_limited,
                dt_us,
            }
        ),
        1 => (0..3u8).prop_map(|space| Op::Skip { space }),
        4 => (
            0..3u8,
            -2..12i8,
            prop::collection::vec((any::<u8>(), 0..6u8), 1..4),
            0..50_000u32,
            prop::option::of(0..4u8),
            0..60_000u32
        )
            .prop_map(|(space, top_back, ranges, delay_us, ce, dt_us)| Op::Ack {
                space,
                top_back,
                ranges: ranges.into_iter().map(|(g, l)| (g % 4, l)).collect(),
                delay_us,
                ce,
                dt_us,
            }),
        2 => (any::<bool>(), 0..500_000u32).prop_map(|(jump, dt_us)| Op::Timeout { jump, dt_us }),
        1 => (0..2u8).prop_map(|space| Op::Discard { space }),
        1 => Just(Op::Confirm),
    ]
}

fn space_of(i: u8) -> SpaceId {
    match i {
        0 => SpaceId::Initial,
        1 => SpaceId::Handshake,
        _ => SpaceId::Data,
    }
}

/// The ranges an `Ack` op describes, largest first.
fn ranges_of(next_pn: u64, top_back: i8, pairs: &[(u8, u8)]) -> Vec<RangeInclusive<u64>> {
    let top = i128::from(next_pn) - 1 - i128::from(top_back);
    let Ok(mut hi) = u64::try_from(top) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, &(gap, len)) in pairs.iter().enumerate() {
        if i > 0 {
            let Some(h) = hi.checked_sub(u64::from(gap) + 2) else {
                break;
            };
            hi = h;
        }
        let lo = hi.saturating_sub(u64::from(len));
        out.push(lo..=hi);
        if lo == 0 {
            break;
        }
        hi = lo;
    }
    out
}

#[derive(Default)]
struct Model {
    /// (space, pn) → (in flight, size, frame id).
    outstanding: BTreeMap<(SpaceId, u64), (bool, u16, u32)>,
    skipped: BTreeSet<(SpaceId, u64)>,
    returned: BTreeSet<u32>,
    sent_frames: u32,
}

impl Model {
    fn bytes_in_flight(&self) -> u64 {
        self.outstanding
            .values()
            .filter(|(f, _, _)| *f)
            .map(|(_, s, _)| u64::from(*s))
            .sum()
    }

    fn give_back(&mut self, space: SpaceId, records: &[PacketRecord<u32>]) {
        for rec in records {
            let (in_flight, size, id) = self
                .outstanding
                .remove(&(space, rec.pn))
                .unwrap_or_else(|| panic!("{space:?} {} returned but not outstanding", rec.pn));
            assert_eq!((rec.in_flight, rec.size, rec.frames), (in_flight, size, id));
            assert!(self.returned.insert(id), "frame record {id} returned twice");
        }
    }
}

fn run(ops: Vec<Op>, cc_name: &str, handshake_path: bool, is_server: bool) {
    #[allow(clippy::disallowed_methods)] // test set-up needs a base instant
    let mut now = Instant::now();
    let mut cc = registry::build(cc_name).unwrap();
    let path = if handshake_path { PathId(0) } else { PathId(3) };
    cc.on_path_added(path, now, 1200);
    let mut r: PathRecovery<u32> = if handshake_path {
        PathRecovery::new_handshake_path(RecoveryConfig::default(), is_server)
    } else {
        PathRecovery::new(path, RecoveryConfig::default())
    };
    let mut m = Model::default();
    for op in ops {
        match op {
            Op::Send {
                space,
                size,
                ack_eliciting,
                in_flight,
                app_limited,
                dt_us,
            } => {
                now += Duration::from_micros(u64::from(dt_us));
                let space = space_of(space);
                let expected = r.next_packet_number(space);
                let id = m.sent_frames;
                let p = OutgoingPacket {
                    size,
                    ack_eliciting,
                    in_flight,
                    app_limited,
                    frames: id,
                };
                let got = r.on_packet_sent(now, space, p, &mut *cc);
                assert_eq!(got, expected);
                if let Some(pn) = got {
                    m.sent_frames += 1;
                    m.outstanding
                        .insert((space, pn), (in_flight || ack_eliciting, size, id));
                }
            }
            Op::Skip { space } => {
                let space = space_of(space);
                if let Some(pn) = r.skip_packet_number(space) {
                    m.skipped.insert((space, pn));
                }
            }
            Op::Ack {
                space,
                top_back,
                ranges,
                delay_us,
                ce,
                dt_us,
            } => {
                now += Duration::from_micros(u64::from(dt_us));
                let space = space_of(space);
                let Some(next) = r.next_packet_number(space) else {
                    continue;
                };
                let ranges = ranges_of(next, top_back, &ranges);
                let beyond = ranges.iter().any(|r| *r.end() >= next);
                let hits_skipped = ranges.iter().any(|rg| {
                    m.skipped
                        .range((space, *rg.start())..=(space, *rg.end()))
                        .next()
                        .is_some()
                });
                let before = (r.bytes_in_flight(), r.outstanding(space), r.largest_acked(space));
                let input = AckInput {
                    ranges,
                    ack_delay: Duration::from_micros(u64::from(delay_us)),
                    ecn: ce.map(|ce| EcnCounts {
                        ce: crate::proto::coding::VarInt::from_u32(u32::from(ce)),
                        ..EcnCounts::default()
                    }),
                    frame_type: FrameType::PATH_ACK,
                };
                match r.on_ack_ranges(now, space, input, &mut *cc) {
                    Ok(out) => {
                        assert!(!beyond, "ACK beyond the largest sent accepted");
                        m.give_back(space, &out.acked);
                        m.give_back(space, &out.lost);
                        assert!(out.acked.windows(2).all(|w| w[0].pn < w[1].pn));
                        assert!(out.lost.windows(2).all(|w| w[0].pn < w[1].pn));
                    }
                    Err(e) => {
                        assert!(beyond || hits_skipped, "unexpected {e}");
                        assert_eq!(
                            e.code,
                            crate::proto::error::TransportErrorCode::PROTOCOL_VIOLATION
                        );
                        let after = (r.bytes_in_flight(), r.outstanding(space), r.largest_acked(space));
                        assert_eq!(before, after, "a rejected ACK changed the state");
                    }
                }
            }
            Op::Timeout { jump, dt_us } => {
                now += Duration::from_micros(u64::from(dt_us));
                if jump {
                    if let Some(t) = r.loss_detection_timer() {
                        now = now.max(t);
                    }
                }
                match r.on_timeout(now, &mut *cc) {
                    TimeoutOutcome::Lost { space, lost, .. } => m.give_back(space, &lost),
                    TimeoutOutcome::Probe { space, probes } => {
                        assert_eq!(r.pending_probes(space), probes);
                    }
                    TimeoutOutcome::NotDue | TimeoutOutcome::AntiDeadlock => {}
                }
            }
            Op::Discard { space } => {
                let space = space_of(space);
                let out = r.discard_space(now, space);
                m.give_back(space, &out);
            }
            Op::Confirm => r.on_handshake_confirmed(now),
        }
        r.debug_check();
        assert_eq!(r.bytes_in_flight(), m.bytes_in_flight(), "bytes in flight");
    }
    // Abandoning the path returns everything still outstanding.
    let rest = r.abandon();
    for rec in &rest {
        let space = SpaceId::ALL
            .into_iter()
            .find(|s| {
                m.outstanding
                    .get(&(*s, rec.pn))
                    .is_some_and(|(_, _, id)| *id == rec.frames)
            })
            .expect("abandoned record is outstanding");
        m.give_back(space, std::slice::from_ref(rec));
    }
    assert!(
        m.outstanding.is_empty(),
        "records never returned: {:?}",
        m.outstanding
    );
    assert_eq!(m.returned.len() as u32, m.sent_frames);
    assert_eq!(r.bytes_in_flight(), 0);
    r.debug_check();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_sequences_keep_the_model(
        ops in prop::collection::vec(op(), 0..120),
        cc_name in prop::sample::select(vec!["newreno", "cubic", "bbr", "lia", "olia", "vegas"]),
        handshake_path in any::<bool>(),
        is_server in any::<bool>(),
    ) {
        run(ops, cc_name, handshake_path, is_server);
    }
}

#[test]
fn regression_ranges_of_helper() {
    assert_eq!(ranges_of(10, 0, &[(0, 1), (1, 0)]), vec![8..=9, 5..=5]);
    assert_eq!(ranges_of(0, 0, &[(0, 1)]), Vec::<RangeInclusive<u64>>::new());
    assert_eq!(ranges_of(3, -2, &[(0, 9)]), vec![0..=4]);
}
