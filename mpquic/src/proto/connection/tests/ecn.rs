//! ECN marking and validation (RFC 9000 §13.4).

use std::time::Duration;

use bytes::Bytes;

use super::harness::Pair;
use crate::cc::PathId;
use crate::proto::ack_tracker::EcnCodepoint;
use crate::proto::connection::{EcnStatus, TransportConfig};

fn transfer(p: &mut Pair, len: usize) {
    let c = p.client.conn();
    let id = c.open_uni().unwrap();
    c.write(id, Bytes::from(vec![1u8; len])).unwrap();
    c.finish(id).unwrap();
    let mut got = 0;
    let ok = p.drive_until(Duration::from_secs(20), |p| {
        let now = p.now;
        let s = p.server.conn();
        while s.accept_uni().is_some() {}
        while let Ok(Some(b)) = s.read(id, 1 << 20, now) {
            got += b.len();
        }
        got == len
    });
    assert!(ok, "transfer incomplete: {got}/{len}");
}

#[test]
fn rfc9000_13_4_2_ecn_validated_when_counts_match() {
    let mut p = Pair::new(None, TransportConfig::default(), 80);
    p.handshake();
    transfer(&mut p, 50_000);
    assert_eq!(p.client.conn().ecn_status(PathId(0)), Some(EcnStatus::Capable));
    assert_eq!(p.server.conn().ecn_status(PathId(0)), Some(EcnStatus::Capable));
    let mut buf = Vec::new();
    let now = p.now;
    let c = p.client.conn();
    let id = c.open_bi().unwrap();
    c.write(id, Bytes::from_static(b"x")).unwrap();
    let t = c.poll_transmit(now, &mut buf).unwrap();
    assert_eq!(t.ecn, Some(EcnCodepoint::Ect0));
}

#[test]
fn rfc9000_13_4_2_1_missing_ecn_counts_fail_validation_and_stop_marking() {
    // RFC 9000 §13.4.2.1: "ECN validation fails if the corresponding ECN counts are not present in the ACK
    // frame." A network that clears the codepoint makes the peer's ACKs carry no counts.
    let mut p = Pair::new(None, TransportConfig::default(), 81);
    p.bleach_ecn = true;
    p.handshake();
    transfer(&mut p, 20_000);
    assert_eq!(p.client.conn().ecn_status(PathId(0)), Some(EcnStatus::Failed));
    let mut buf = Vec::new();
    let now = p.now;
    let c = p.client.conn();
    let id = c.open_bi().unwrap();
    c.write(id, Bytes::from_static(b"x")).unwrap();
    let t = c.poll_transmit(now, &mut buf).unwrap();
    assert_eq!(t.ecn, None, "marking must stop after validation failed");
}

#[test]
fn rfc9002_7_1_ecn_ce_reaches_congestion_control() {
    let window_after = |ce: bool| {
        let mut p = Pair::new(None, TransportConfig::default(), 82);
        p.handshake();
        p.ce_mark = ce;
        transfer(&mut p, 200_000);
        let c = p.client.conn();
        // CE-marked packets count as ECN-CE in the peer's ACKs: validation holds (ECT(0) + CE increase covers
        // the acknowledged packets) and each increase is a congestion event.
        assert_eq!(c.ecn_status(PathId(0)), Some(EcnStatus::Capable));
        assert_eq!(c.paths[&PathId(0)].ecn.ce_events > 0, ce);
        assert_eq!(c.stats().packets_lost, 0);
        c.cc.window(PathId(0))
    };
    let (clean, marked) = (window_after(false), window_after(true));
    assert!(
        marked < clean,
        "CE did not shrink the window: {marked} vs {clean}"
    );
}

fn counts(e0: u32, e1: u32, ce: u32) -> Option<crate::proto::frame::EcnCounts> {
    Some(crate::proto::frame::EcnCounts {
        ect0: crate::proto::coding::VarInt::from_u32(e0),
        ect1: crate::proto::coding::VarInt::from_u32(e1),
        ce: crate::proto::coding::VarInt::from_u32(ce),
    })
}

#[test]
fn rfc9000_13_4_2_1_ecn_count_increase_below_newly_acked_fails_validation() {
    use crate::proto::connection::ecn::EcnPath;
    use crate::proto::recovery::SpaceId;
    let mut e = EcnPath::default();
    e.on_ack(SpaceId::Data, counts(3, 0, 0), 3, false);
    assert_eq!(e.status, EcnStatus::Capable);
    // 4 newly acknowledged ECT(0) packets, but ECT(0) + CE grew by 3 only.
    e.on_ack(SpaceId::Data, counts(5, 0, 1), 4, true);
    assert_eq!(e.status, EcnStatus::Failed);
    assert_eq!(e.codepoint(), None);
}

#[test]
fn rfc9000_13_4_2_1_decreasing_or_ect1_counts_fail_validation() {
    use crate::proto::connection::ecn::EcnPath;
    use crate::proto::recovery::SpaceId;
    let mut e = EcnPath::default();
    e.on_ack(SpaceId::Data, counts(10, 0, 0), 10, false);
    e.on_ack(SpaceId::Data, counts(9, 0, 2), 1, true);
    assert_eq!(e.status, EcnStatus::Failed);
    let mut e = EcnPath::default();
    e.on_ack(SpaceId::Data, counts(2, 1, 0), 2, false);
    assert_eq!(e.status, EcnStatus::Failed, "ECT(1) was never sent");
    // Counts are per packet-number space: Initial counts do not mix with application-data counts.
    let mut e = EcnPath::default();
    e.on_ack(SpaceId::Initial, counts(2, 0, 0), 2, false);
    e.on_ack(SpaceId::Data, counts(1, 0, 0), 1, false);
    assert_eq!(e.status, EcnStatus::Capable);
}
