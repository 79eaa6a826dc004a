//! Property tests: arbitrary sequences of operations never panic and keep the link's invariants.
//!
//! Invariants checked after every operation:
//! - a delivery arrives no earlier than `now + delay` (and `departure + delay`), and departs no earlier than
//!   `now` plus the serialisation time (less a nanosecond of carried rounding);
//! - drop-tail: a packet is refused for a full queue exactly when the backlog would exceed the limit and the
//!   serialiser is busy;
//! - with ordering preserved, nothing arrives before anything handed out earlier (duplicates included);
//! - the counters add up: offered = delivered + all drops, in packets and bytes.

use std::time::Duration;

use mpquic_netsim::SimTime;
use mpquic_netsim::link::{
    Backlog, Delivery, DropReason, Impairments, JitterConfig, JitterDistribution, Link, LinkConfig,
    LossModel, QueueLimit, ResolvedLimit, serialisation_time,
};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Enqueue {
        len: usize,
        payload: usize,
    },
    Advance(u64),
    /// A `now` earlier than the latest one (the link treats it as the latest).
    Backwards(u64),
    SetRate(u64),
    SetDelay(u64),
    SetUp(bool),
    SetLoss(LossModel),
    SetJitter(JitterConfig),
    SetQueue(QueueLimit),
    SetImpairments(Impairments),
}

fn prob() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.0), Just(1.0), 0.0..=1.0]
}

fn loss() -> impl Strategy<Value = LossModel> {
    prop_oneof![
        Just(LossModel::None),
        prob().prop_map(|p| LossModel::Bernoulli { p }),
        (prob(), 0.01..=1.0, prob(), prob()).prop_map(|(p, r, k, h)| LossModel::GilbertElliott {
            p,
            r,
            k,
            h
        }),
    ]
}

fn jitter() -> impl Strategy<Value = JitterConfig> {
    let dist = prop_oneof![
        Just(JitterDistribution::None),
        (0u64..50_000_000).prop_map(|n| JitterDistribution::Uniform {
            max: Duration::from_nanos(n)
        }),
        (0u64..50_000_000, 0u64..50_000_000).prop_map(|(m, s)| JitterDistribution::Normal {
            mean: Duration::from_nanos(m),
            stddev: Duration::from_nanos(s)
        }),
    ];
    (dist, any::<bool>()).prop_map(|(distribution, allow_reordering)| JitterConfig {
        distribution,
        allow_reordering,
    })
}

fn queue() -> impl Strategy<Value = QueueLimit> {
    prop_oneof![
        (1u64..200_000).prop_map(|bytes| QueueLimit::Bytes { bytes }),
        (1u64..200).prop_map(|packets| QueueLimit::Packets { packets }),
        (0.1f64..8.0, 1u64..500).prop_map(|(multiple, ms)| QueueLimit::Bdp {
            multiple,
            base_rtt: Some(Duration::from_millis(ms))
        }),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0usize..3000, 0usize..64).prop_map(|(len, payload)| Op::Enqueue { len, payload }),
        4 => (0u64..5_000_000).prop_map(Op::Advance),
        1 => (0u64..5_000_000).prop_map(Op::Backwards),
        1 => prop_oneof![1u64..1_000, 1_000u64..10_000_000_000].prop_map(Op::SetRate),
        1 => (0u64..200_000_000).prop_map(Op::SetDelay),
        1 => any::<bool>().prop_map(Op::SetUp),
        1 => loss().prop_map(Op::SetLoss),
        1 => jitter().prop_map(Op::SetJitter),
        1 => queue().prop_map(Op::SetQueue),
        1 => (prob(), prob()).prop_map(|(corruption, duplication)| Op::SetImpairments(Impairments { corruption, duplication })),
    ]
}

fn admits(backlog: Backlog, len: u64, limit: ResolvedLimit) -> bool {
    backlog.packets == 0
        || match limit {
            ResolvedLimit::Bytes(max) => backlog.bytes + len <= max,
            ResolvedLimit::Packets(max) => backlog.packets < max,
        }
}

fn check(seed: u64, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let config =
        LinkConfig::new(10_000_000, Duration::from_millis(5)).with_queue(QueueLimit::Packets { packets: 50 });
    let mut l = Link::new(config, seed).unwrap();
    let mut now = SimTime::ZERO;
    let mut latest_arrival = SimTime::ZERO;
    // Config changes may fail validation (e.g. a zero delay with a default BDP queue); that is fine.
    for op in ops {
        match op {
            Op::Advance(ns) => now = now.saturating_add_nanos(ns),
            Op::Backwards(ns) => {
                // Let the link see `now` first, then offer a packet in its past.
                let _ = l.backlog(now);
                let earlier = SimTime::from_nanos(now.as_nanos().saturating_sub(ns));
                prop_assert!(l.enqueue_len(earlier, 100).arrival().is_none_or(|a| a.at >= now));
            }
            Op::SetRate(r) => l.set_rate(now, r).unwrap(),
            Op::SetDelay(ns) => l.set_delay(now, Duration::from_nanos(ns)).unwrap(),
            Op::SetUp(up) => l.set_up(now, up),
            Op::SetLoss(m) => l.set_loss(now, m).unwrap(),
            Op::SetJitter(j) => l.set_jitter(now, j).unwrap(),
            Op::SetQueue(q) => {
                let _ = l.set_queue_limit(now, q);
            }
            Op::SetImpairments(i) => l.set_impairments(now, i).unwrap(),
            Op::Enqueue { len, payload } => {
                let config = l.config();
                let backlog = l.backlog(now);
                let limit = l.queue_limit();
                let mut buf = vec![0xa5u8; payload];
                let d = l.enqueue(now, len, &mut buf);
                match d {
                    Delivery::Dropped {
                        reason: DropReason::Down,
                    } => prop_assert!(!config.up),
                    Delivery::Dropped {
                        reason: DropReason::QueueFull,
                    } => {
                        prop_assert!(config.up && !admits(backlog, len as u64, limit))
                    }
                    Delivery::Dropped {
                        reason: DropReason::TooLarge,
                    } => prop_assert!(config.up && config.mtu.is_some_and(|m| len as u64 > u64::from(m))),
                    Delivery::Dropped {
                        reason: DropReason::Loss,
                    } => {
                        prop_assert!(config.up && admits(backlog, len as u64, limit))
                    }
                    Delivery::Deliver(a) => {
                        prop_assert!(config.up && admits(backlog, len as u64, limit));
                        let min_tx = serialisation_time(len as u64, config.rate_bps)
                            .saturating_sub(Duration::from_nanos(1));
                        prop_assert!(a.departure >= now + min_tx);
                        prop_assert!(a.at >= now + config.delay);
                        prop_assert!(a.at >= a.departure + config.delay);
                        if let Some(dup) = a.duplicate_at {
                            prop_assert!(dup >= a.departure + config.delay);
                        }
                        if !config.jitter.allow_reordering {
                            prop_assert!(a.at >= latest_arrival);
                            prop_assert!(a.duplicate_at.is_none_or(|d| d >= a.at));
                        }
                        let flipped: u32 = buf.iter().map(|b| (b ^ 0xa5).count_ones()).sum();
                        prop_assert_eq!(flipped, u32::from(a.corrupted));
                        latest_arrival = latest_arrival.max(a.at).max(a.duplicate_at.unwrap_or(a.at));
                    }
                }
            }
        }
        let s = l.stats();
        let dropped = s.dropped();
        prop_assert_eq!(s.offered.packets, s.delivered.packets + dropped.packets);
        prop_assert_eq!(s.offered.bytes, s.delivered.bytes + dropped.bytes);
    }
    Ok(())
}

proptest! {
    #[test]
    fn arbitrary_operations_keep_the_invariants(seed in any::<u64>(), ops in prop::collection::vec(op(), 0..300)) {
        check(seed, ops)?;
    }

    #[test]
    fn order_preserving_mode_never_reorders(
        seed in any::<u64>(),
        gaps in prop::collection::vec((0u64..2_000_000, 1usize..1500), 1..400),
        max_jitter_ns in 0u64..20_000_000,
    ) {
        let jitter = JitterConfig {
            distribution: JitterDistribution::Uniform { max: Duration::from_nanos(max_jitter_ns) },
            allow_reordering: false,
        };
        let config = LinkConfig::new(50_000_000, Duration::from_millis(3))
            .with_queue(QueueLimit::Bytes { bytes: mpquic_netsim::link::limits::MAX_QUEUE_BYTES })
            .with_jitter(jitter)
            .with_impairments(Impairments { corruption: 0.0, duplication: 0.2 });
        let mut l = Link::new(config, seed).unwrap();
        let mut now = SimTime::ZERO;
        let mut last = SimTime::ZERO;
        for (gap, len) in gaps {
            now = now.saturating_add_nanos(gap);
            let a = *l.enqueue_len(now, len).arrival().unwrap();
            prop_assert!(a.at >= last);
            last = a.duplicate_at.unwrap_or(a.at).max(a.at);
        }
    }
}
