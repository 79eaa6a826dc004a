//! The link MTU: packets larger than it are dropped before they queue (they use no capacity), packets up to
//! it pass, a change applies to packets offered afterwards, and out-of-range values are refused by name.

use mpquic_netsim::SimTime;
use mpquic_netsim::link::DropReason;

use crate::common::{RATE_8M, link, unlimited};

#[test]
fn packets_above_the_mtu_are_dropped_and_use_no_capacity() {
    let mut l = link(unlimited(RATE_8M, 10).with_mtu(Some(1428)));
    let t = SimTime::ZERO;
    assert_eq!(l.enqueue_len(t, 1429).drop_reason(), Some(DropReason::TooLarge));
    // At 8 Mbit/s (one byte per µs) a 1428-byte packet offered at 0 departs at 1428 µs: the dropped one did
    // not occupy the link first.
    let a = *l.enqueue_len(t, 1428).arrival().unwrap();
    assert_eq!(a.departure, SimTime::from_nanos(1_428_000));
    let s = l.stats();
    assert_eq!(s.dropped_too_large.packets, 1);
    assert_eq!(s.dropped_too_large.bytes, 1429);
    assert_eq!(s.dropped().packets, 1);
    assert_eq!(s.offered.packets, s.delivered.packets + s.dropped().packets);
}

#[test]
fn a_lower_mtu_applies_from_then_on() {
    let mut l = link(unlimited(RATE_8M, 10));
    assert!(
        l.enqueue_len(SimTime::ZERO, 9000).arrival().is_some(),
        "no MTU: any size"
    );
    l.set_mtu(SimTime::from_nanos(1_000), Some(1308)).unwrap();
    assert_eq!(l.config().mtu, Some(1308));
    assert_eq!(
        l.enqueue_len(SimTime::from_nanos(2_000), 1309).drop_reason(),
        Some(DropReason::TooLarge)
    );
    assert!(
        l.enqueue_len(SimTime::from_nanos(2_000), 1308)
            .arrival()
            .is_some()
    );
    l.set_mtu(SimTime::from_nanos(3_000), None).unwrap();
    assert!(
        l.enqueue_len(SimTime::from_nanos(4_000), 9000)
            .arrival()
            .is_some()
    );
}

#[test]
fn out_of_range_mtus_are_refused_by_name() {
    for bad in [0, 67, 65_536] {
        let e = unlimited(RATE_8M, 10).with_mtu(Some(bad)).validate().unwrap_err();
        assert_eq!(e.field, "mtu");
        assert_eq!(e.value, bad.to_string());
    }
    for good in [68, 1500, 65_535] {
        unlimited(RATE_8M, 10).with_mtu(Some(good)).validate().unwrap();
    }
    let mut l = link(unlimited(RATE_8M, 10));
    assert_eq!(l.set_mtu(SimTime::ZERO, Some(10)).unwrap_err().field, "mtu");
}
