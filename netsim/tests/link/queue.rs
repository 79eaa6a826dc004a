//! Serialisation, drop-tail admission and rate changes: closed forms, checked exactly.

use std::time::Duration;

use mpquic_netsim::link::{Backlog, DropReason, LinkConfig, QueueLimit, ResolvedLimit, serialisation_time};

use crate::common::*;

#[test]
fn serialisation_delay_is_size_over_rate() {
    let mut l = link(unlimited(RATE_8M, 10));
    // 1500 B at 8 Mbit/s = 1.5 ms; plus 10 ms of propagation.
    let a = delivered(l.enqueue_len(ms(0), 1500));
    assert_eq!(a.departure, us(1500));
    assert_eq!(a.at, us(11_500));
    // Back to back: the second waits for the first.
    let b = delivered(l.enqueue_len(ms(0), 500));
    assert_eq!(b.departure, us(2000));
    assert_eq!(b.at, us(12_000));
    // An idle link starts at `now`.
    let c = delivered(l.enqueue_len(ms(100), 1500));
    assert_eq!(c.at, ms(100) + Duration::from_micros(11_500));
    assert_eq!(serialisation_time(1500, 1_000_000_000), Duration::from_micros(12));
}

#[test]
fn saturated_queue_delay_is_queue_over_rate() {
    // 15000 B of queue at 8 Mbit/s drain in 15 ms.
    let mut l =
        link(LinkConfig::new(RATE_8M, Duration::ZERO).with_queue(QueueLimit::Bytes { bytes: 15_000 }));
    let burst: Vec<_> = (0..20).map(|_| l.enqueue_len(ms(0), 1500)).collect();
    assert!(burst[..10].iter().all(|d| d.arrival().is_some()));
    assert!(
        burst[10..]
            .iter()
            .all(|d| d.drop_reason() == Some(DropReason::QueueFull))
    );
    assert_eq!(burst[9].arrival().map(|a| a.departure), Some(ms(15)));
    // Keep it saturated: offer every 0.5 ms (3× the drain rate) for one second. Slots free every 1.5 ms, on
    // offer instants, so each accepted packet finds 13500 B ahead of it and waits exactly queue/rate = 15 ms.
    let mut accepted = 0;
    for i in 1..=2000u64 {
        let now = us(500 * i);
        if let Some(a) = l.enqueue_len(now, 1500).arrival() {
            assert_eq!(
                a.departure.saturating_duration_since(now),
                Duration::from_millis(15),
                "offer {i}"
            );
            accepted += 1;
        }
    }
    // One per 1.5 ms over 1 s.
    assert_eq!(accepted, 666);
    assert_eq!(l.stats().max_queue_bytes, 15_000);
    assert_eq!(l.stats().max_queue_packets, 10);
}

#[test]
fn drop_tail_bytes_drops_exactly_past_the_limit() {
    let mut l = link(LinkConfig::new(RATE_8M, Duration::ZERO).with_queue(QueueLimit::Bytes { bytes: 3000 }));
    assert!(l.enqueue_len(ms(0), 1500).arrival().is_some());
    assert!(l.enqueue_len(ms(0), 1500).arrival().is_some());
    assert_eq!(l.enqueue_len(ms(0), 1).drop_reason(), Some(DropReason::QueueFull));
    // Half of the first packet is on the wire after 750 µs: 750 + 1500 B remain.
    assert_eq!(
        l.backlog(us(750)),
        Backlog {
            bytes: 2250,
            packets: 2
        }
    );
    assert_eq!(
        l.enqueue_len(us(750), 751).drop_reason(),
        Some(DropReason::QueueFull)
    );
    assert!(l.enqueue_len(us(750), 750).arrival().is_some());
    assert_eq!(
        l.backlog(us(750)),
        Backlog {
            bytes: 3000,
            packets: 3
        }
    );
    assert_eq!(
        l.enqueue_len(us(750), 1).drop_reason(),
        Some(DropReason::QueueFull)
    );
    // Everything is serialised at 3000 µs + 750 µs = 3.75 ms.
    assert_eq!(l.backlog(us(3749)), Backlog { bytes: 1, packets: 1 });
    assert_eq!(l.backlog(us(3750)), Backlog::default());
    assert_eq!(l.stats().dropped_queue_full.packets, 3);
    assert_eq!(l.stats().dropped_queue_full.bytes, 753);
}

#[test]
fn drop_tail_packets_counts_the_packet_on_the_wire() {
    let mut l = link(LinkConfig::new(RATE_8M, Duration::ZERO).with_queue(QueueLimit::Packets { packets: 3 }));
    for _ in 0..3 {
        assert!(l.enqueue_len(ms(0), 100).arrival().is_some());
    }
    assert_eq!(l.enqueue_len(ms(0), 1).drop_reason(), Some(DropReason::QueueFull));
    // The first 100 B packet is done at 100 µs; one slot frees then, not before.
    assert_eq!(
        l.enqueue_len(us(99), 1).drop_reason(),
        Some(DropReason::QueueFull)
    );
    assert!(l.enqueue_len(us(100), 1).arrival().is_some());
    assert_eq!(
        l.enqueue_len(us(100), 1).drop_reason(),
        Some(DropReason::QueueFull)
    );
}

#[test]
fn drop_tail_bdp_is_a_multiple_of_rate_times_base_rtt() {
    let bdp = |multiple, base_rtt| {
        LinkConfig::new(RATE_8M, Duration::from_millis(5)).with_queue(QueueLimit::Bdp { multiple, base_rtt })
    };
    // 8 Mbit/s × 10 ms = 10 000 B; without base_rtt the RTT is twice the 5 ms delay.
    assert_eq!(link(bdp(1.0, None)).queue_limit(), ResolvedLimit::Bytes(10_000));
    assert_eq!(
        link(bdp(0.5, Some(Duration::from_millis(10)))).queue_limit(),
        ResolvedLimit::Bytes(5_000)
    );
    assert_eq!(
        link(bdp(4.0, Some(Duration::from_millis(20)))).queue_limit(),
        ResolvedLimit::Bytes(80_000)
    );
    let mut l = link(bdp(1.0, None));
    let accepted = (0..20)
        .filter(|_| l.enqueue_len(ms(0), 1000).arrival().is_some())
        .count();
    assert_eq!(accepted, 10);
}

#[test]
fn idle_link_admits_a_packet_larger_than_the_limit() {
    let mut l = link(LinkConfig::new(RATE_8M, Duration::ZERO).with_queue(QueueLimit::Bytes { bytes: 100 }));
    assert!(l.enqueue_len(ms(0), 1500).arrival().is_some());
    assert_eq!(l.enqueue_len(ms(0), 1).drop_reason(), Some(DropReason::QueueFull));
    assert!(l.enqueue_len(us(1500), 1500).arrival().is_some());
}

#[test]
fn rate_change_applies_to_packets_offered_after_it() {
    let config = LinkConfig::new(RATE_8M, Duration::from_millis(1)).with_queue(QueueLimit::Bdp {
        multiple: 1.0,
        base_rtt: Some(Duration::from_millis(10)),
    });
    let mut l = link(config);
    let before: Vec<_> = (0..3)
        .map(|_| delivered(l.enqueue_len(ms(0), 1500)).departure)
        .collect();
    assert_eq!(before, [us(1500), us(3000), us(4500)]);
    assert_eq!(l.queue_limit(), ResolvedLimit::Bytes(10_000));
    l.set_rate(ms(1), 2 * RATE_8M).unwrap();
    // The BDP limit follows the rate.
    assert_eq!(l.queue_limit(), ResolvedLimit::Bytes(20_000));
    // The backlog keeps its times; the next packet queues behind it and is serialised at 16 Mbit/s.
    let a = delivered(l.enqueue_len(ms(1), 1500));
    assert_eq!(a.departure, us(4500 + 750));
    assert_eq!(a.at, us(6250));
    // Idle again: 750 µs per 1500 B from `now`.
    assert_eq!(delivered(l.enqueue_len(ms(10), 1500)).departure, us(10_750));
    // Slower again.
    l.set_rate(ms(20), RATE_8M / 8).unwrap();
    assert_eq!(delivered(l.enqueue_len(ms(20), 1500)).departure, ms(32));
    assert_eq!(l.config().rate_bps, 1_000_000);
}

#[test]
fn rate_change_keeps_exact_timing_with_odd_rates() {
    // 7 Mbit/s: 1500 B = 1.714285… ms; 7 back-to-back packets end exactly at 12 ms.
    let mut l = link(unlimited(7_000_000, 0));
    let last = (0..7)
        .map(|_| delivered(l.enqueue_len(ms(0), 1500)).departure)
        .last();
    assert_eq!(last, Some(ms(12)));
    // Changing the rate mid-backlog rounds the old tail up by at most a nanosecond.
    let mut l = link(unlimited(7_000_000, 0));
    let first = delivered(l.enqueue_len(ms(0), 1500)).departure;
    l.set_rate(ms(0), RATE_8M).unwrap();
    let second = delivered(l.enqueue_len(ms(0), 1500)).departure;
    assert_eq!(second.as_nanos() - first.as_nanos(), 1_500_000 + 1);
}

/// Found by `arbitrary_operations_keep_the_invariants`: cutting the rate until the BDP limit is under a byte
/// was rejected as an invalid queue. It is accepted; the link then carries one packet at a time.
#[test]
fn regression_rate_cut_below_a_one_byte_bdp_is_accepted() {
    let config = LinkConfig::new(RATE_8M, Duration::from_millis(5)).with_queue(QueueLimit::Bdp {
        multiple: 0.1,
        base_rtt: Some(Duration::from_millis(1)),
    });
    let mut l = link(config);
    l.set_rate(ms(0), 1).unwrap();
    assert_eq!(l.queue_limit(), ResolvedLimit::Bytes(0));
    assert!(l.enqueue_len(ms(0), 1).arrival().is_some());
    assert_eq!(l.enqueue_len(ms(0), 1).drop_reason(), Some(DropReason::QueueFull));
}
