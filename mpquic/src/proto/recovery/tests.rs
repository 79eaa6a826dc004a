//! Scenario tests of [`PathRecovery`]: hand-built send/ACK sequences checked against hand-computed RFC 9002
//! numbers, the congestion-controller events they must produce (with a recording controller), and NewReno from
//! the registry.

use std::ops::RangeInclusive;
use std::time::{Duration, Instant};

use super::*;
use crate::cc::{AckedPacket, CcMetrics, RttSnapshot, registry};
use crate::proto::coding::VarInt;
use crate::proto::error::TransportErrorCode;
use crate::proto::frame::ack::encode_ack;
use crate::proto::frame::{Frame, decode_frames};

#[allow(clippy::disallowed_methods)] // test set-up needs a base instant
fn t0() -> Instant {
    Instant::now()
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// What the recording controller saw.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Ev {
    Sent(SentEvent),
    Ack {
        path: PathId,
        now: Instant,
        packets: Vec<AckedPacket>,
        prior: u64,
        bytes_in_flight: u64,
        app_limited: bool,
        rtt: RttSnapshot,
        rate_sample: bool,
    },
    Congestion(CongestionEvent),
}

/// A congestion controller that records its events, with a fixed window and pacing rate.
#[derive(Debug, Default)]
pub(super) struct Recorder {
    pub events: Vec<Ev>,
    pub rate: Option<u64>,
    /// The window it reports (0 by default: never under-utilised, so `app_limited` is the packets' own).
    pub window: u64,
}

impl CongestionController for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn on_path_added(&mut self, _: PathId, _: Instant, _: u16) {}
    fn on_path_removed(&mut self, _: PathId) {}
    fn on_max_datagram_size(&mut self, _: PathId, _: u16) {}
    fn on_packet_sent(&mut self, ev: &SentEvent) {
        self.events.push(Ev::Sent(*ev));
    }
    fn on_ack(&mut self, ev: &AckEvent<'_>) {
        self.events.push(Ev::Ack {
            path: ev.path,
            now: ev.now,
            packets: ev.packets.to_vec(),
            prior: ev.prior_bytes_in_flight,
            bytes_in_flight: ev.bytes_in_flight,
            app_limited: ev.app_limited,
            rtt: ev.rtt,
            rate_sample: ev.rate_sample.is_some(),
        });
    }
    fn on_congestion(&mut self, ev: &CongestionEvent) {
        self.events.push(Ev::Congestion(*ev));
    }
    fn window(&self, _: PathId) -> u64 {
        self.window
    }
    fn pacing_rate(&self, _: PathId) -> Option<u64> {
        self.rate
    }
    fn metrics(&self, _: PathId) -> Option<CcMetrics> {
        None
    }
}

impl Recorder {
    fn take(&mut self) -> Vec<Ev> {
        std::mem::take(&mut self.events)
    }
}

const P1: PathId = PathId(1);

fn data_path() -> PathRecovery<u32> {
    PathRecovery::new(P1, RecoveryConfig::default())
}

fn pkt(frames: u32) -> OutgoingPacket<u32> {
    OutgoingPacket {
        size: 1200,
        ack_eliciting: true,
        in_flight: true,
        app_limited: false,
        frames,
    }
}

fn send(r: &mut PathRecovery<u32>, cc: &mut dyn CongestionController, now: Instant, space: SpaceId) -> u64 {
    let pn = r.next_packet_number(space).unwrap();
    let got = r.on_packet_sent(now, space, pkt(pn as u32), cc).unwrap();
    assert_eq!(got, pn);
    r.debug_check();
    pn
}

fn input(ranges: &[RangeInclusive<u64>], delay: Duration) -> AckInput<Vec<RangeInclusive<u64>>> {
    AckInput {
        ranges: ranges.to_vec(),
        ack_delay: delay,
        ecn: None,
        frame_type: FrameType::ACK,
    }
}

fn ack(
    r: &mut PathRecovery<u32>,
    cc: &mut dyn CongestionController,
    now: Instant,
    space: SpaceId,
    ranges: &[RangeInclusive<u64>],
) -> AckOutcome<u32> {
    let out = r
        .on_ack_ranges(now, space, input(ranges, Duration::ZERO), cc)
        .unwrap();
    r.debug_check();
    out
}

fn pns(records: &[PacketRecord<u32>]) -> Vec<u64> {
    records.iter().map(|p| p.pn).collect()
}

#[test]
fn cc_receives_exactly_the_expected_events() {
    let t0 = t0();
    let mut cc = Recorder::default();
    let mut r = data_path();
    for i in 0..5 {
        send(&mut r, &mut cc, t0 + ms(i), SpaceId::Data);
    }
    let sent = cc.take();
    assert_eq!(sent.len(), 5);
    for (i, ev) in sent.iter().enumerate() {
        let i = i as u64;
        assert_eq!(
            *ev,
            Ev::Sent(SentEvent {
                path: P1,
                now: t0 + ms(i),
                bytes: 1200,
                bytes_in_flight: 1200 * (i + 1),
                app_limited: false,
            })
        );
    }
    // ACK of 4 at 100 ms: RTT sample 96 ms (first: srtt 96, rttvar 48, min 96). Packets 0 and 1 are 3 behind:
    // lost. 2 and 3 are within 9/8 · 96 = 108 ms: the loss timer is set to 2 ms + 108 ms.
    let out = ack(&mut r, &mut cc, t0 + ms(100), SpaceId::Data, &[4..=4]);
    assert_eq!(pns(&out.acked), [4]);
    assert_eq!(pns(&out.lost), [0, 1]);
    assert_eq!(out.lost.iter().map(|p| p.frames).collect::<Vec<_>>(), [0, 1]);
    assert!(out.rtt_sample && !out.persistent_congestion && !out.ecn_ce_increased);
    let snap = RttSnapshot {
        latest: ms(96),
        smoothed: ms(96),
        rttvar: ms(48),
        min: ms(96),
    };
    assert_eq!(
        cc.take(),
        [
            Ev::Congestion(CongestionEvent {
                path: P1,
                now: t0 + ms(100),
                sent_time: t0 + ms(1),
                lost_bytes: 2400,
                bytes_in_flight: 2400,
                persistent_congestion: false,
                ecn: false,
                rtt: snap,
            }),
            Ev::Ack {
                path: P1,
                now: t0 + ms(100),
                packets: vec![AckedPacket {
                    bytes: 1200,
                    time_sent: t0 + ms(4)
                }],
                prior: 6000,
                bytes_in_flight: 2400,
                app_limited: false,
                rtt: snap,
                rate_sample: true,
            }
        ]
    );
    assert_eq!(r.bytes_in_flight(), 2400);
    assert_eq!(r.loss_time(), Some(t0 + ms(110)));
    assert_eq!(r.loss_detection_timer(), Some(t0 + ms(110)));
    assert_eq!(r.pto_deadline(), None);
    // Not due yet.
    assert!(matches!(
        r.on_timeout(t0 + ms(109), &mut cc),
        TimeoutOutcome::NotDue
    ));
    // The loss timer: 2 is lost; 3 at 111 ms.
    let TimeoutOutcome::Lost {
        space,
        lost,
        persistent_congestion,
    } = r.on_timeout(t0 + ms(110), &mut cc)
    else {
        panic!("loss timer expected");
    };
    assert_eq!(space, SpaceId::Data);
    assert_eq!(pns(&lost), [2]);
    assert!(!persistent_congestion);
    let evs = cc.take();
    assert_eq!(evs.len(), 1);
    assert!(
        matches!(&evs[0], Ev::Congestion(c) if c.sent_time == t0 + ms(2) && c.lost_bytes == 1200 && c.bytes_in_flight == 1200)
    );
    assert_eq!(r.loss_detection_timer(), Some(t0 + ms(111)));
    let TimeoutOutcome::Lost { lost, .. } = r.on_timeout(t0 + ms(111), &mut cc) else {
        panic!("loss timer expected");
    };
    assert_eq!(pns(&lost), [3]);
    assert_eq!(cc.take().len(), 1);
    // Nothing in flight, peer validated: no timer.
    assert_eq!(r.bytes_in_flight(), 0);
    assert_eq!(r.loss_detection_timer(), None);
    r.debug_check();
}

#[test]
fn newreno_halves_once_per_recovery_period() {
    let t0 = t0();
    let mut cc = registry::build("newreno").unwrap();
    cc.on_path_added(P1, t0, 1200);
    assert_eq!(cc.window(P1), 12_000);
    let mut r = data_path();
    for i in 0..10 {
        send(&mut r, &mut *cc, t0 + ms(i), SpaceId::Data);
    }
    // ACK of 9: 0..=6 lost by the packet threshold: one congestion event, window 12 000 → 6 000.
    let out = ack(&mut r, &mut *cc, t0 + ms(100), SpaceId::Data, &[9..=9]);
    assert_eq!(pns(&out.lost), [0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(cc.window(P1), 6000);
    // 7 and 8 lost on the timer: sent before the recovery period began, no second reduction.
    let TimeoutOutcome::Lost { lost, .. } = r.on_timeout(r.loss_detection_timer().unwrap(), &mut *cc) else {
        panic!("loss timer expected");
    };
    assert!(!lost.is_empty());
    while let TimeoutOutcome::Lost { .. } = r.on_timeout(r.loss_detection_timer().unwrap_or(t0), &mut *cc) {}
    assert_eq!(r.outstanding(SpaceId::Data), 0);
    assert_eq!(cc.window(P1), 6000);
    // Three packets sent after the period began (3600 B in flight: the 6000 B window is in use, RFC 9002
    // §7.8) are acknowledged: congestion avoidance, + 1200 · 1200 / cwnd per packet:
    // 6000 → 6240 → 6470.77 → 6693.31.
    let a = send(&mut r, &mut *cc, t0 + ms(200), SpaceId::Data);
    send(&mut r, &mut *cc, t0 + ms(200), SpaceId::Data);
    send(&mut r, &mut *cc, t0 + ms(200), SpaceId::Data);
    ack(&mut r, &mut *cc, t0 + ms(300), SpaceId::Data, &[a..=a + 2]);
    assert_eq!(cc.window(P1), 6693);
    // A new burst of losses of packets sent after that: one more halving (6693.31 · 0.5 = 3346.65).
    let first = send(&mut r, &mut *cc, t0 + ms(310), SpaceId::Data);
    for i in 1..6 {
        send(&mut r, &mut *cc, t0 + ms(310 + i), SpaceId::Data);
    }
    let out = ack(
        &mut r,
        &mut *cc,
        t0 + ms(400),
        SpaceId::Data,
        &[first + 5..=first + 5],
    );
    assert_eq!(pns(&out.lost), [first, first + 1, first + 2]);
    assert_eq!(cc.window(P1), 3346);
    while let TimeoutOutcome::Lost { .. } = r.on_timeout(r.loss_detection_timer().unwrap_or(t0), &mut *cc) {}
    assert_eq!(cc.window(P1), 3346);
}

#[test]
fn persistent_congestion_collapses_newreno_window() {
    let t0 = t0();
    let mut cc = registry::build("newreno").unwrap();
    cc.on_path_added(P1, t0, 1200);
    let mut r = data_path();
    // First sample 10 ms: srtt 10, rttvar 5.
    send(&mut r, &mut *cc, t0, SpaceId::Data);
    ack(&mut r, &mut *cc, t0 + ms(10), SpaceId::Data, &[0..=0]);
    send(&mut r, &mut *cc, t0 + ms(20), SpaceId::Data); // 1
    send(&mut r, &mut *cc, t0 + ms(100), SpaceId::Data); // 2
    send(&mut r, &mut *cc, t0 + ms(200), SpaceId::Data); // 3
    send(&mut r, &mut *cc, t0 + ms(210), SpaceId::Data); // 4
    // ACK of 4 at 220 ms: sample 10 ms → srtt 10, rttvar 3.75; persistent congestion duration
    // (10 + 15 + 25) · 3 = 150 ms. 1 is lost by count, 2 and 3 by time (older than 11.25 ms); 1..3 span
    // 20 → 200 ms = 180 ms > 150 ms with nothing acknowledged in between, all sent after the first sample.
    let out = ack(&mut r, &mut *cc, t0 + ms(220), SpaceId::Data, &[4..=4]);
    assert_eq!(r.rtt().var(), us(3750));
    assert_eq!(pns(&out.lost), [1, 2, 3]);
    assert!(out.persistent_congestion);
    // RFC 9002 §5.2: min_rtt restarts from the newest sample (10 ms here, unchanged).
    assert_eq!(r.rtt().min(), ms(10));
    // The window collapsed to kMinimumWindow (2400); persistent congestion ends the recovery period
    // (RFC 9002 Appendix B.8) and OnPacketsAcked follows OnPacketsLost (Appendix A.7), so the ACK of 4 then
    // grows it in slow start by one packet.
    assert_eq!(cc.window(P1), 2400 + 1200);
}

#[test]
fn no_persistent_congestion_when_a_packet_in_between_is_acked() {
    let t0 = t0();
    let mut cc = Recorder::default();
    let mut r = data_path();
    send(&mut r, &mut cc, t0, SpaceId::Data);
    ack(&mut r, &mut cc, t0 + ms(10), SpaceId::Data, &[0..=0]);
    send(&mut r, &mut cc, t0 + ms(20), SpaceId::Data); // 1
    send(&mut r, &mut cc, t0 + ms(100), SpaceId::Data); // 2
    send(&mut r, &mut cc, t0 + ms(200), SpaceId::Data); // 3
    send(&mut r, &mut cc, t0 + ms(210), SpaceId::Data); // 4
    send(&mut r, &mut cc, t0 + ms(211), SpaceId::Data); // 5
    // 2 acknowledged: the runs are {1} and {3}, each too short.
    let out = ack(&mut r, &mut cc, t0 + ms(220), SpaceId::Data, &[4..=5, 2..=2]);
    assert_eq!(pns(&out.acked), [2, 4, 5]);
    assert_eq!(pns(&out.lost), [1, 3]);
    assert!(!out.persistent_congestion);
    assert!(
        cc.take()
            .iter()
            .all(|e| !matches!(e, Ev::Congestion(c) if c.persistent_congestion))
    );
}

#[test]
fn rtt_sample_only_when_largest_newly_acked_and_an_ack_eliciting_packet_newly_acked() {
    let t0 = t0();
    let mut cc = Recorder::default();
    let mut r = data_path();
    let ack_only = |f| OutgoingPacket {
        size: 50,
        ack_eliciting: false,
        in_flight: false,
        app_limited: false,
        frames: f,
    };
    // RFC 9002 §5.1: largest (1) newly acknowledged although not ack-eliciting; 0 is ack-eliciting → sample,
    // measured from the largest acknowledged packet's send time.
    send(&mut r, &mut cc, t0, SpaceId::Data);
    r.on_packet_sent(t0 + ms(5), SpaceId::Data, ack_only(1), &mut cc);
    let out = ack(&mut r, &mut cc, t0 + ms(50), SpaceId::Data, &[0..=1]);
    assert!(out.rtt_sample);
    assert_eq!(r.rtt().latest(), ms(45));
    // Only a non-ack-eliciting packet newly acknowledged: no sample.
    r.on_packet_sent(t0 + ms(60), SpaceId::Data, ack_only(2), &mut cc);
    let out = ack(&mut r, &mut cc, t0 + ms(200), SpaceId::Data, &[0..=2]);
    assert_eq!(pns(&out.acked), [2]);
    assert!(!out.rtt_sample);
    assert_eq!(r.rtt().latest(), ms(45));
    // The largest acknowledged is not newly acknowledged (4 acked before): no sample from 3.
    send(&mut r, &mut cc, t0 + ms(300), SpaceId::Data); // 3
    send(&mut r, &mut cc, t0 + ms(301), SpaceId::Data); // 4
    let out = ack(&mut r, &mut cc, t0 + ms(340), SpaceId::Data, &[4..=4]);
    assert!(out.rtt_sample);
    assert_eq!(r.rtt().latest(), ms(39));
    let out = ack(&mut r, &mut cc, t0 + ms(341), SpaceId::Data, &[3..=4]);
    assert_eq!(pns(&out.acked), [3]);
    assert!(!out.rtt_sample);
    assert_eq!(r.rtt().latest(), ms(39));
    // Non-in-flight packets never reach the controller.
    assert!(cc.take().iter().all(|e| match e {
        Ev::Sent(s) => s.bytes == 1200,
        Ev::Ack { packets, .. } => packets.iter().all(|p| p.bytes == 1200),
        Ev::Congestion(_) => true,
    }));
}

/// Second sample 150 ms with a reported delay of 40 ms after a first sample of 100 ms (min_rtt 100).
fn second_sample_with_delay(r: &mut PathRecovery<u32>, space: SpaceId) -> Duration {
    let t0 = t0();
    let mut cc = Recorder::default();
    send(r, &mut cc, t0, space);
    ack(r, &mut cc, t0 + ms(100), space, &[0..=0]);
    send(r, &mut cc, t0 + ms(100), space);
    r.on_ack_ranges(t0 + ms(250), space, input(&[1..=1], ms(40)), &mut cc)
        .unwrap();
    assert_eq!(
        r.rtt().min(),
        ms(100),
        "min_rtt is never reduced by the ACK delay"
    );
    r.rtt().smoothed()
}

#[test]
fn ack_delay_capped_by_max_ack_delay_after_handshake_confirmed() {
    // Confirmed, max_ack_delay 25 ms: delay min(40, 25) = 25 → adjusted 125 → srtt 7/8·100 + 1/8·125.
    let mut r = data_path();
    assert_eq!(second_sample_with_delay(&mut r, SpaceId::Data), us(103_125));
}

#[test]
fn ack_delay_not_capped_before_handshake_confirmation() {
    // Not confirmed: the whole 40 ms is used → adjusted 110 → srtt 7/8·100 + 1/8·110.
    let mut r = PathRecovery::new_handshake_path(RecoveryConfig::default(), true);
    assert_eq!(second_sample_with_delay(&mut r, SpaceId::Handshake), us(101_250));
}

#[test]
fn ack_delay_ignored_for_initial_packets() {
    // Initial: the delay is ignored → adjusted 150 → srtt 7/8·100 + 1/8·150.
    let mut r = PathRecovery::new_handshake_path(RecoveryConfig::default(), true);
    assert_eq!(second_sample_with_delay(&mut r, SpaceId::Initial), us(106_250));
}

#[test]
fn ack_of_packet_never_sent_is_protocol_violation() {
    let t0 = t0();
    let mut cc = Recorder::default();
    let mut r = data_path();
    // Nothing sent at all.
    let e = r
        .on_ack_ranges(t0, SpaceId::Data, input(&[0..=0], Duration::ZERO), &mut cc)
        .unwrap_err();
    assert_eq!(e.code, TransportErrorCode::PROTOCOL_VIOLATION);
    assert_eq!(e.frame_type, Some(FrameType::ACK.0));
    for i in 0..3 {
        send(&mut r, &mut cc, t0 + ms(i), SpaceId::Data);
    }
    cc.take();
    // Beyond the largest sent (2), in a later range of the same frame: the valid ranges are not applied either.
    let e = r
        .on_ack_ranges(
            t0 + ms(50),
            SpaceId::Data,
            input(&[3..=3, 0..=1], Duration::ZERO),
            &mut cc,
        )
        .unwrap_err();
    assert_eq!(e.code, TransportErrorCode::PROTOCOL_VIOLATION);
    assert_eq!(r.outstanding(SpaceId::Data), 3);
    assert_eq!(r.bytes_in_flight(), 3600);
    assert_eq!(r.largest_acked(SpaceId::Data), None);
    assert!(!r.rtt().has_sample());
    assert!(cc.take().is_empty());
}

#[test]
fn ack_of_skipped_packet_number_is_protocol_violation() {
    let t0 = t0();
    let mut cc = Recorder::default();
    let mut r = data_path();
    send(&mut r, &mut cc, t0, SpaceId::Data);
    assert_eq!(r.skip_packet_number(SpaceId::Data), Some(1));
    assert_eq!(send(&mut r, &mut cc, t0, SpaceId::Data), 2);
    assert_eq!(
        pns(&ack(&mut r, &mut cc, t0 + ms(10), SpaceId::Data, &[2..=2]).acked),
        [2]
    );
    let e = r
        .on_ack_ranges(
            t0 + ms(11),
            SpaceId::Data,
            input(&[0..=2], Duration::ZERO),
            &mut cc,
        )
        .unwrap_err();
    assert_eq!(e.code, TransportErrorCode::PROTOCOL_VIOLATION);
    assert_eq!(e.reason, "ACK of a skipped packet number");
    // Acknowledging around it is fine.
    assert_eq!(
        pns(&ack(&mut r, &mut cc, t0 + ms(12), SpaceId::Data, &[2..=2, 0..=0]).acked),
        [0]
    );
}

#[test]
fn spurious_loss_is_reported_but_ignored_by_cc() {
    let t0 = t0();
    let mut cc = Recorder::default();
    let mut r = data_path();
    for i in 0..5 {
        send(&mut r, &mut cc, t0 + ms(i), SpaceId::Data);
    }
    let out = ack(&mut r, &mut cc, t0 + ms(100), SpaceId::Data, &[4..=4]);
    assert_eq!(pns(&out.lost), [0, 1]);
    cc.take();
    let in_flight = r.bytes_in_flight();
    // The peer acknowledges 0 and 1 late.
    let out = ack(&mut r, &mut cc, t0 + ms(101), SpaceId::Data, &[4..=4, 0..=1]);
    assert!(out.acked.is_empty());
    assert_eq!(out.spurious_losses, [0, 1]);
    assert!(cc.take().is_empty());
    assert_eq!(r.bytes_in_flight(), in_flight);
    // Acknowledged again: a duplicate, not a second spurious loss.
    let out = ack(&mut r, &mut cc, t0 + ms(102), SpaceId::Data, &[0..=4]);
    assert_eq!(pns(&out.acked), [2, 3]);
    assert!(out.spurious_losses.is_empty());
}

#[test]
fn ecn_ce_increase_is_a_congestion_event() {
    let t0 = t0();
    let mut cc = Recorder::default();
    let mut r = data_path();
    send(&mut r, &mut cc, t0, SpaceId::Data);
    send(&mut r, &mut cc, t0 + ms(1), SpaceId::Data);
    send(&mut r, &mut cc, t0 + ms(2), SpaceId::Data);
    cc.take();
    let ecn = |ce| EcnCounts {
        ect0: VarInt::from_u32(5),
        ect1: VarInt::from_u32(0),
        ce: VarInt::from_u32(ce),
    };
    let mut a = input(&[0..=0], Duration::ZERO);
    a.ecn = Some(ecn(0));
    let out = r.on_ack_ranges(t0 + ms(30), SpaceId::Data, a, &mut cc).unwrap();
    assert!(!out.ecn_ce_increased);
    assert!(matches!(cc.take().as_slice(), [Ev::Ack { .. }]));
    let mut a = input(&[0..=1], Duration::ZERO);
    a.ecn = Some(ecn(1));
    let out = r.on_ack_ranges(t0 + ms(31), SpaceId::Data, a, &mut cc).unwrap();
    assert!(out.ecn_ce_increased);
    let evs = cc.take();
    let [Ev::Congestion(c), Ev::Ack { .. }] = evs.as_slice() else {
        panic!("congestion then ack expected: {evs:?}");
    };
    assert!(c.ecn && !c.persistent_congestion);
    assert_eq!(
        (c.sent_time, c.lost_bytes, c.bytes_in_flight),
        (t0 + ms(1), 0, 1200)
    );
    // The same count again is no new signal.
    let mut a = input(&[0..=2], Duration::ZERO);
    a.ecn = Some(ecn(1));
    let out = r.on_ack_ranges(t0 + ms(32), SpaceId::Data, a, &mut cc).unwrap();
    assert!(!out.ecn_ce_increased);
    assert!(matches!(cc.take().as_slice(), [Ev::Ack { .. }]));
}

#[test]
fn pto_value_and_backoff_through_recovery() {
    let t0 = t0();
    let mut cc = Recorder::default();
    let mut r = data_path();
    send(&mut r, &mut cc, t0, SpaceId::Data);
    // No sample: 333 + 4 · 166.5 + max_ack_delay 25 = 1024 ms.
    assert_eq!(r.pto(SpaceId::Data), ms(1024));
    assert_eq!(r.pto_deadline(), Some(t0 + ms(1024)));
    assert!(matches!(
        r.on_timeout(t0 + ms(1023), &mut cc),
        TimeoutOutcome::NotDue
    ));
    let TimeoutOutcome::Probe { space, probes } = r.on_timeout(t0 + ms(1024), &mut cc) else {
        panic!("probe expected");
    };
    assert_eq!((space, probes), (SpaceId::Data, 2));
    assert_eq!(r.pto_count(), 1);
    assert_eq!(r.pending_probes(SpaceId::Data), 2);
    // Backoff: from the last ack-eliciting packet (t0), 2 · 1024 ms.
    assert_eq!(r.loss_detection_timer(), Some(t0 + ms(2048)));
    // Two probes at 1030 ms restart the timer from there.
    send(&mut r, &mut cc, t0 + ms(1030), SpaceId::Data);
    send(&mut r, &mut cc, t0 + ms(1030), SpaceId::Data);
    assert_eq!(r.pending_probes(SpaceId::Data), 0);
    assert_eq!(r.loss_detection_timer(), Some(t0 + ms(1030 + 2048)));
    assert!(matches!(
        r.on_timeout(t0 + ms(1030 + 2048), &mut cc),
        TimeoutOutcome::Probe {
            space: SpaceId::Data,
            ..
        }
    ));
    assert_eq!(r.pto_count(), 2);
    assert_eq!(r.pto_with_backoff(SpaceId::Data), ms(4096));
    assert_eq!(r.loss_detection_timer(), Some(t0 + ms(1030 + 4096)));
    // An ACK resets the backoff. Sample 100 ms: packet 0 (sent at 0) is lost by time, packet 1 waits for the
    // loss timer (1030 + 112.5 ms), which replaces the PTO.
    let out = ack(&mut r, &mut cc, t0 + ms(1130), SpaceId::Data, &[2..=2]);
    assert_eq!(pns(&out.lost), [0]);
    assert_eq!(r.pto_count(), 0);
    assert_eq!(r.loss_detection_timer(), Some(t0 + ms(1030) + us(112_500)));
    assert_eq!(r.pto_deadline(), None);
    // After the loss timer declares 1 lost, nothing is in flight.
    assert!(matches!(
        r.on_timeout(t0 + ms(1143), &mut cc),
        TimeoutOutcome::Lost { .. }
    ));
    assert_eq!(r.loss_detection_timer(), None);
}

#[test]
fn pto_not_armed_for_application_data_before_handshake_confirmed() {
    let t0 = t0();
    let mut cc = Recorder::default();
    let mut r = PathRecovery::new_handshake_path(RecoveryConfig::default(), true);
    send(&mut r, &mut cc, t0, SpaceId::Data);
    assert_eq!(r.loss_detection_timer(), None);
    r.on_handshake_confirmed(t0 + ms(5));
    assert_eq!(r.loss_detection_timer(), Some(t0 + ms(1024)));
}

#[test]
fn pto_uses_the_earlier_of_initial_and_handshake() {
    let t0 = t0();
    let mut cc = Recorder::default();
    let mut r = PathRecovery::new_handshake_path(RecoveryConfig::default(), true);
    send(&mut r, &mut cc, t0 + ms(10), SpaceId::Handshake);
    send(&mut r, &mut cc, t0 + ms(20), SpaceId::Initial);
    // No max_ack_delay for these spaces: 999 ms from each send; Handshake is earlier.
    assert_eq!(r.loss_detection_timer(), Some(t0 + ms(1009)));
    let TimeoutOutcome::Probe { space, .. } = r.on_timeout(t0 + ms(1009), &mut cc) else {
        panic!("probe expected");
    };
    assert_eq!(space, SpaceId::Handshake);
    // Discarding Initial keys resets the backoff and re-arms from what is left.
    let discarded = r.discard_space(t0 + ms(1010), SpaceId::Initial);
    assert_eq!(pns(&discarded), [0]);
    assert_eq!(r.pto_count(), 0);
    assert_eq!(r.loss_detection_timer(), Some(t0 + ms(1009)));
}

#[test]
fn client_anti_deadlock_probe() {
    let t0 = t0();
    let mut cc = Recorder::default();
    let mut r = PathRecovery::new_handshake_path(RecoveryConfig::default(), false);
    send(&mut r, &mut cc, t0, SpaceId::Initial);
    ack(&mut r, &mut cc, t0 + ms(50), SpaceId::Initial, &[0..=0]);
    // Nothing in flight, but the client does not know that the server validated its address: the timer
    // stays armed from now, 50 + max(4 · 25, 1) = 150 ms.
    assert_eq!(r.loss_detection_timer(), Some(t0 + ms(200)));
    assert!(matches!(
        r.on_timeout(t0 + ms(200), &mut cc),
        TimeoutOutcome::AntiDeadlock
    ));
    assert_eq!(r.pto_count(), 1);
    assert_eq!(r.loss_detection_timer(), Some(t0 + ms(200 + 300)));
    // An ACK in Initial does not reset the client's backoff.
    send(&mut r, &mut cc, t0 + ms(210), SpaceId::Initial);
    ack(&mut r, &mut cc, t0 + ms(260), SpaceId::Initial, &[1..=1]);
    assert_eq!(r.pto_count(), 1);
    // A Handshake ACK proves address validation: backoff reset, no timer with nothing in flight.
    send(&mut r, &mut cc, t0 + ms(270), SpaceId::Handshake);
    ack(&mut r, &mut cc, t0 + ms(320), SpaceId::Handshake, &[0..=0]);
    assert_eq!(r.pto_count(), 0);
    assert_eq!(r.loss_detection_timer(), None);
}

#[test]
fn server_at_amplification_limit_arms_no_pto() {
    let t0 = t0();
    let mut cc = Recorder::default();
    let mut r = PathRecovery::new_handshake_path(RecoveryConfig::default(), true);
    send(&mut r, &mut cc, t0, SpaceId::Initial);
    assert!(r.loss_detection_timer().is_some());
    r.set_amplification_limited(t0, true);
    assert_eq!(r.loss_detection_timer(), None);
    r.set_amplification_limited(t0 + ms(1), false);
    assert_eq!(r.loss_detection_timer(), Some(t0 + ms(999)));
}

#[test]
fn discard_space_removes_bytes_in_flight_without_cc_events() {
    let t0 = t0();
    let mut cc = Recorder::default();
    let mut r = PathRecovery::new_handshake_path(RecoveryConfig::default(), false);
    send(&mut r, &mut cc, t0, SpaceId::Initial);
    send(&mut r, &mut cc, t0, SpaceId::Initial);
    send(&mut r, &mut cc, t0 + ms(1), SpaceId::Handshake);
    cc.take();
    assert_eq!(r.bytes_in_flight(), 3600);
    let d = r.discard_space(t0 + ms(2), SpaceId::Initial);
    assert_eq!(pns(&d), [0, 1]);
    assert_eq!(r.bytes_in_flight(), 1200);
    assert!(cc.take().is_empty());
    assert!(!r.has_space(SpaceId::Initial));
    assert_eq!(r.next_packet_number(SpaceId::Initial), None);
    assert_eq!(r.on_packet_sent(t0, SpaceId::Initial, pkt(9), &mut cc), None);
    assert!(cc.take().is_empty());
    // An ACK for a discarded space is ignored.
    assert!(
        ack(&mut r, &mut cc, t0 + ms(3), SpaceId::Initial, &[0..=0])
            .acked
            .is_empty()
    );
    // Discarding twice, or the Application-data space, does nothing.
    assert!(r.discard_space(t0, SpaceId::Initial).is_empty());
    assert!(r.discard_space(t0, SpaceId::Data).is_empty());
    r.debug_check();
}

#[test]
fn abandon_returns_all_frames() {
    let t0 = t0();
    let mut cc = Recorder::default();
    let mut r = data_path();
    for i in 0..8 {
        send(&mut r, &mut cc, t0 + ms(i), SpaceId::Data);
    }
    // 5 acknowledged; 0, 1, 2 lost (5 ≥ pn + 3); 3, 4, 6, 7 still outstanding.
    let out = ack(&mut r, &mut cc, t0 + ms(50), SpaceId::Data, &[5..=5]);
    assert_eq!(pns(&out.lost), [0, 1, 2]);
    cc.take();
    let rest = r.abandon();
    assert_eq!(pns(&rest), [3, 4, 6, 7]);
    assert_eq!(rest.iter().map(|p| p.frames).collect::<Vec<_>>(), [3, 4, 6, 7]);
    assert_eq!(r.bytes_in_flight(), 0);
    assert_eq!(r.loss_detection_timer(), None);
    assert!(cc.take().is_empty());
    assert!(r.abandon().is_empty());
    r.debug_check();
}

#[test]
fn pacing_follows_the_controller_rate() {
    let t0 = t0();
    let mut cc = Recorder {
        rate: Some(1_200_000),
        ..Recorder::default()
    };
    let config = RecoveryConfig {
        pacer_burst_packets: 2,
        ..RecoveryConfig::default()
    };
    let mut r = PathRecovery::new(P1, config);
    assert_eq!(r.next_send_time(t0, 1200, &cc), None);
    send(&mut r, &mut cc, t0, SpaceId::Data);
    send(&mut r, &mut cc, t0, SpaceId::Data);
    // Burst of 2 spent: 1200 B at 1.2 MB/s is 1 ms.
    assert_eq!(r.next_send_time(t0, 1200, &cc), Some(t0 + ms(1)));
    // ACK-only packets are not paced.
    r.on_packet_sent(
        t0,
        SpaceId::Data,
        OutgoingPacket {
            size: 40,
            ack_eliciting: false,
            in_flight: false,
            app_limited: false,
            frames: 0,
        },
        &mut cc,
    );
    assert_eq!(r.next_send_time(t0, 1200, &cc), Some(t0 + ms(1)));
    // Without a rate: window-limited only.
    cc.rate = None;
    assert_eq!(r.next_send_time(t0, 1200, &cc), None);
}

#[test]
fn ack_frame_decoded_from_the_wire() {
    let t0 = t0();
    let mut cc = Recorder::default();
    let mut r = data_path();
    for i in 0..6 {
        send(&mut r, &mut cc, t0 + ms(i), SpaceId::Data);
    }
    let mut buf = Vec::new();
    encode_ack(&mut buf, Some(P1), VarInt::from_u32(1000), &[5..=5, 0..=2], None).unwrap();
    let Some(Ok(Frame::Ack(a))) = decode_frames(&buf).next() else {
        panic!("ACK expected");
    };
    // ack_delay_exponent 3: 1000 · 8 µs = 8 ms (first sample: the delay is not used).
    let out = r
        .on_ack_frame(t0 + ms(105), SpaceId::Data, &a, 3, &mut cc)
        .unwrap();
    assert_eq!(pns(&out.acked), [0, 1, 2, 5]);
    assert_eq!(r.rtt().smoothed(), ms(100));
    // An exponent beyond any valid one saturates instead of overflowing.
    encode_ack(&mut buf, Some(P1), VarInt::from_u32(u32::MAX), &[5..=5], None).unwrap();
    let mut frames = decode_frames(&buf);
    frames.next();
    let Some(Ok(Frame::Ack(a))) = frames.next() else {
        panic!("ACK expected");
    };
    assert!(
        r.on_ack_frame(t0 + ms(106), SpaceId::Data, &a, 200, &mut cc)
            .is_ok()
    );
    // A PATH_ACK acknowledging a packet beyond the largest sent carries the PATH_ACK frame type.
    let mut buf = Vec::new();
    encode_ack(&mut buf, Some(P1), VarInt::from_u32(0), &[9..=9], None).unwrap();
    let Some(Ok(Frame::Ack(a))) = decode_frames(&buf).next() else {
        panic!("ACK expected");
    };
    let e = r
        .on_ack_frame(t0 + ms(107), SpaceId::Data, &a, 3, &mut cc)
        .unwrap_err();
    assert_eq!(e.frame_type, Some(FrameType::PATH_ACK.0));
}

#[test]
fn unordered_ranges_are_clamped_not_trusted() {
    let t0 = t0();
    let mut cc = Recorder::default();
    let mut r = data_path();
    for i in 0..6 {
        send(&mut r, &mut cc, t0 + ms(i), SpaceId::Data);
    }
    // Ascending and overlapping ranges (not what a decoded frame yields): each is clamped below the previous.
    let out = ack(
        &mut r,
        &mut cc,
        t0 + ms(50),
        SpaceId::Data,
        &[1..=2, 0..=5, 3..=4, 0..=0],
    );
    assert_eq!(pns(&out.acked), [0, 1, 2]);
    // The largest acknowledged is 2.
    assert_eq!(r.largest_acked(SpaceId::Data), Some(2));
}

#[test]
fn app_limited_flag_reaches_the_controller() {
    let t0 = t0();
    let mut cc = Recorder::default();
    let mut r = data_path();
    let mut p = pkt(0);
    p.app_limited = true;
    r.on_packet_sent(t0, SpaceId::Data, p, &mut cc);
    assert!(r.delivery().is_app_limited());
    ack(&mut r, &mut cc, t0 + ms(30), SpaceId::Data, &[0..=0]);
    let evs = cc.take();
    assert!(matches!(&evs[0], Ev::Sent(s) if s.app_limited));
    assert!(matches!(
        &evs[1],
        Ev::Ack {
            app_limited: true,
            ..
        }
    ));
}

#[test]
fn lost_tombstones_are_forgotten_after_retention() {
    let t0 = t0();
    let mut cc = Recorder::default();
    let mut r = data_path();
    for i in 0..5 {
        send(&mut r, &mut cc, t0 + ms(i), SpaceId::Data);
    }
    ack(&mut r, &mut cc, t0 + ms(100), SpaceId::Data, &[4..=4]);
    // Much later (beyond 3 PTOs), a new ACK trims the tombstones of 0 and 1: their late ACK is a duplicate.
    send(&mut r, &mut cc, t0 + ms(10_000), SpaceId::Data);
    ack(&mut r, &mut cc, t0 + ms(10_050), SpaceId::Data, &[5..=5]);
    let out = ack(&mut r, &mut cc, t0 + ms(10_051), SpaceId::Data, &[5..=5, 0..=1]);
    assert!(out.spurious_losses.is_empty());
}

/// RFC 9002 §7.8: a sender that has data (its packets are not marked app-limited) but keeps far less than its
/// window in flight — a CPU-bound sender on a fast path — must not grow the window without bound; a sender
/// that fills its window grows it every round.
#[test]
fn an_under_used_window_does_not_grow_even_with_data_waiting() {
    let t0 = t0();
    // (packets in flight per round, `None`: as many as the window allows; rounds; final window by hand).
    // Slow start adds 1200 B per packet acknowledged while at least half the window was in flight:
    // 2 or 4 packets (2400, 4800 B) are under half of 12 000 B: no growth. 5 packets (6000 B) are half:
    // 12 000 → 18 000, then 6000 < 9000: stop. 10 packets: 12 000 → 24 000 → 36 000, then stop.
    // Filling the window doubles it every round: 12 000 · 2^5 = 384 000.
    let cases = [
        (Some(2u64), 20, 12_000u64),
        (Some(4), 20, 12_000),
        (Some(5), 20, 18_000),
        (Some(10), 20, 36_000),
        (None, 5, 384_000),
    ];
    for (per_round, rounds, expected) in cases {
        let mut cc = registry::build("newreno").unwrap();
        cc.on_path_added(P1, t0, 1200);
        let mut r = data_path();
        let mut next = 0;
        let mut at = t0;
        // Each round's packets are acknowledged together 10 ms after they left (no loss).
        for _ in 0..rounds {
            let first = next;
            let n = per_round.unwrap_or(cc.window(P1) / 1200);
            for _ in 0..n {
                send(&mut r, &mut *cc, at, SpaceId::Data);
                next += 1;
            }
            at += ms(10);
            ack(&mut r, &mut *cc, at, SpaceId::Data, &[first..=next - 1]);
        }
        assert_eq!(cc.window(P1), expected, "{per_round:?} packets per round");
        r.debug_check();
    }
}

/// RFC 9000 §14.4: the loss of a path-MTU probe "SHOULD NOT trigger a congestion control reaction". Packets
/// 0 (a 1452-byte probe) and 1..=4 are sent; the ACK of 2..=4 declares 0 and 1 lost by the packet threshold
/// (3): one congestion event for packet 1 alone (1200 bytes lost, newest lost is packet 1), and bytes in flight
/// drop by both (0 after the ACK). Without the probe mark the event would count 2652 bytes.
#[test]
fn lost_mtu_probe_is_no_congestion_signal() {
    let mut r = data_path();
    let mut cc = Recorder::default();
    let now = t0();
    let probe = OutgoingPacket { size: 1452, ..pkt(0) };
    let pn = r.on_packet_sent(now, SpaceId::Data, probe, &mut cc).unwrap();
    r.set_mtu_probe(pn);
    for _ in 1..=4 {
        send(&mut r, &mut cc, now, SpaceId::Data);
    }
    assert_eq!(r.bytes_in_flight(), 1452 + 4 * 1200);
    cc.take();
    let out = ack(&mut r, &mut cc, now + ms(10), SpaceId::Data, &[2..=4]);
    assert_eq!(pns(&out.lost), vec![0, 1]);
    let congestion: Vec<_> = cc
        .take()
        .into_iter()
        .filter_map(|e| match e {
            Ev::Congestion(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(congestion.len(), 1);
    assert_eq!(congestion[0].lost_bytes, 1200);
    assert_eq!(r.bytes_in_flight(), 0);

    // Only the probe lost: no congestion event at all.
    let mut r = data_path();
    let pn = r
        .on_packet_sent(
            now,
            SpaceId::Data,
            OutgoingPacket { size: 1452, ..pkt(0) },
            &mut cc,
        )
        .unwrap();
    r.set_mtu_probe(pn);
    for _ in 1..=3 {
        send(&mut r, &mut cc, now, SpaceId::Data);
    }
    cc.take();
    let out = ack(&mut r, &mut cc, now + ms(10), SpaceId::Data, &[1..=3]);
    assert_eq!(pns(&out.lost), vec![0]);
    assert!(!cc.take().iter().any(|e| matches!(e, Ev::Congestion(_))));
    assert_eq!(r.bytes_in_flight(), 0);
}

#[test]
fn recycled_acked_vector_is_reused_by_the_next_ack_and_emptied_first() {
    let t0 = t0();
    let mut cc = Recorder::default();
    let mut r = data_path();
    for i in 0..4 {
        send(&mut r, &mut cc, t0 + ms(i), SpaceId::Data);
    }
    let mut first = ack(&mut r, &mut cc, t0 + ms(50), SpaceId::Data, &[0..=1]);
    assert_eq!(pns(&first.acked), [0, 1]);
    // Handed back with a record still in it and room for 64: the record is dropped, the room kept.
    first.acked.truncate(1);
    first.acked.reserve_exact(64);
    let room = first.acked.capacity();
    r.recycle_acked(first.acked);
    let second = ack(&mut r, &mut cc, t0 + ms(51), SpaceId::Data, &[2..=3]);
    assert_eq!(pns(&second.acked), [2, 3]);
    assert_eq!(second.acked.iter().map(|p| p.frames).collect::<Vec<_>>(), [2, 3]);
    assert_eq!(second.acked.capacity(), room);
    // A smaller vector handed back after it does not replace the larger spare.
    r.recycle_acked(second.acked);
    r.recycle_acked(Vec::with_capacity(1));
    send(&mut r, &mut cc, t0 + ms(52), SpaceId::Data);
    let third = ack(&mut r, &mut cc, t0 + ms(60), SpaceId::Data, &[4..=4]);
    assert_eq!(pns(&third.acked), [4]);
    assert_eq!(third.acked.capacity(), room);
}
