//! Corruption, duplication, up/down, and determinism.

use std::time::Duration;

use mpquic_netsim::SimTime;
use mpquic_netsim::link::{
    Delivery, DropReason, Impairments, JitterConfig, JitterDistribution, Link, LinkConfig, LossModel,
    QueueLimit,
};

use crate::common::*;

const N: u64 = 100_000;

#[test]
fn duplication_rate_within_three_sigma() {
    let d = 0.05;
    let mut l = link(unlimited(1_000_000_000, 10).with_impairments(Impairments {
        corruption: 0.0,
        duplication: d,
    }));
    let mut dups = 0u64;
    for i in 0..N {
        let a = delivered(l.enqueue_len(ms(i), 1000));
        if let Some(dup) = a.duplicate_at {
            // Order preserved by default: the copy arrives with or after the original.
            assert!(dup >= a.at && dup >= a.departure + Duration::from_millis(10));
            dups += 1;
        }
    }
    assert_eq!(l.stats().duplicated.packets, dups);
    // Binomial: σ = √(d(1−d)/N) ≈ 6.9e-4.
    assert_within(
        "duplication rate",
        dups as f64 / N as f64,
        d,
        (d * (1.0 - d) / N as f64).sqrt(),
        3.0,
    );
}

#[test]
fn corruption_flips_exactly_one_bit_at_the_configured_rate() {
    let c = 0.02;
    let mut l = link(unlimited(1_000_000_000, 10).with_impairments(Impairments {
        corruption: c,
        duplication: 0.0,
    }));
    let original: Vec<u8> = (0..64).collect();
    let mut corrupted = 0u64;
    for i in 0..N {
        let mut payload = original.clone();
        let a = delivered(l.enqueue(ms(i), 1200, &mut payload));
        let flipped: u32 = payload
            .iter()
            .zip(&original)
            .map(|(x, y)| (x ^ y).count_ones())
            .sum();
        assert_eq!(flipped, u32::from(a.corrupted), "packet {i}");
        corrupted += u64::from(a.corrupted);
    }
    assert_eq!(l.stats().corrupted.packets, corrupted);
    // Binomial: σ = √(c(1−c)/N) ≈ 4.4e-4.
    assert_within(
        "corruption rate",
        corrupted as f64 / N as f64,
        c,
        (c * (1.0 - c) / N as f64).sqrt(),
        3.0,
    );
}

#[test]
fn empty_payload_is_never_reported_corrupted() {
    let mut l = link(unlimited(1_000_000_000, 1).with_impairments(Impairments {
        corruption: 1.0,
        duplication: 0.0,
    }));
    assert!(!delivered(l.enqueue_len(ms(0), 1200)).corrupted);
    let mut one = [0u8];
    assert!(delivered(l.enqueue(ms(1), 1200, &mut one)).corrupted);
    assert_eq!(one[0].count_ones(), 1);
}

#[test]
fn down_link_drops_everything_and_up_again_delivers() {
    let mut l = link(unlimited(RATE_8M, 10));
    let before = delivered(l.enqueue_len(ms(0), 1500));
    assert!(!l.outage_since(before.epoch));
    l.set_up(ms(1), false);
    assert!(!l.is_up());
    for i in 0..1000 {
        assert_eq!(
            l.enqueue_len(ms(1) + Duration::from_micros(i), 1500)
                .drop_reason(),
            Some(DropReason::Down)
        );
    }
    assert_eq!(l.stats().dropped_down.packets, 1000);
    // A caller that wants outages to destroy packets in flight can tell this one was caught by it.
    assert!(l.outage_since(before.epoch));
    l.set_up(ms(50), true);
    let after = delivered(l.enqueue_len(ms(50), 1500));
    assert_eq!(after.at, ms(50) + Duration::from_micros(11_500));
    assert!(!l.outage_since(after.epoch));
    // A link configured down starts down.
    let mut config = unlimited(RATE_8M, 10);
    config.up = false;
    assert_eq!(
        link(config).enqueue_len(ms(0), 1).drop_reason(),
        Some(DropReason::Down)
    );
}

/// A link with every random stage enabled.
fn noisy(seed: u64) -> Link {
    let config = LinkConfig::new(20_000_000, Duration::from_millis(10))
        .with_queue(QueueLimit::Packets { packets: 20 })
        .with_loss(LossModel::GilbertElliott {
            p: 0.05,
            r: 0.3,
            k: 0.98,
            h: 0.2,
        })
        .with_jitter(JitterConfig {
            distribution: JitterDistribution::Normal {
                mean: Duration::from_millis(2),
                stddev: Duration::from_millis(1),
            },
            allow_reordering: true,
        })
        .with_impairments(Impairments {
            corruption: 0.1,
            duplication: 0.1,
        });
    Link::new(config, seed).unwrap()
}

/// Outcomes and payloads of a fixed offer pattern (faster than the link, so the queue drops too).
fn run(mut l: Link) -> (Vec<Delivery>, Vec<Vec<u8>>) {
    let mut outcomes = Vec::new();
    let mut payloads = Vec::new();
    for i in 0..5000u64 {
        let mut payload = vec![(i % 251) as u8; 100];
        outcomes.push(l.enqueue(SimTime::from_micros(400 * i), 1200, &mut payload));
        payloads.push(payload);
    }
    (outcomes, payloads)
}

#[test]
fn same_seed_same_outputs_different_seed_different_outputs() {
    let a = run(noisy(7));
    assert_eq!(a, run(noisy(7)));
    assert_ne!(a.0, run(noisy(8)).0);
    // Every kind of outcome occurred, so the comparison covered every stage.
    let reasons: Vec<_> = a.0.iter().filter_map(Delivery::drop_reason).collect();
    assert!(reasons.contains(&DropReason::Loss) && reasons.contains(&DropReason::QueueFull));
    assert!(
        a.0.iter()
            .filter_map(Delivery::arrival)
            .any(|x| x.corrupted && x.duplicate_at.is_some())
    );
}

#[test]
fn stages_draw_from_independent_streams() {
    // Turning jitter and impairments on does not change which packets the loss model loses.
    let loss = LossModel::Bernoulli { p: 0.1 };
    let plain = unlimited(1_000_000_000, 10).with_loss(loss.clone());
    let busy = plain.clone().with_jitter(JitterConfig {
        distribution: JitterDistribution::Uniform {
            max: Duration::from_millis(3),
        },
        allow_reordering: false,
    });
    let busy = busy.with_impairments(Impairments {
        corruption: 0.5,
        duplication: 0.5,
    });
    let lost = |config: LinkConfig| {
        let mut l = Link::new(config, 3).unwrap();
        (0..2000)
            .map(|i| l.enqueue(ms(i), 100, &mut [0u8; 8]).drop_reason().is_some())
            .collect::<Vec<_>>()
    };
    assert_eq!(lost(plain), lost(busy));
}
