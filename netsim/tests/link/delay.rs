//! Propagation delay and jitter: distributions against their configuration, ordering modes.

use std::time::Duration;

use mpquic_netsim::SimTime;
use mpquic_netsim::link::{JitterConfig, JitterDistribution, Link};

use crate::common::*;

/// Jitter samples (arrival − departure − delay, in ms) of `n` packets offered 1 s apart.
fn jitter_samples(distribution: JitterDistribution, n: u64) -> Vec<f64> {
    let jitter = JitterConfig {
        distribution,
        allow_reordering: true,
    };
    let mut l = link(unlimited(1_000_000_000, 10).with_jitter(jitter));
    (0..n)
        .map(|i| {
            let a = delivered(l.enqueue_len(SimTime::from_millis(1000 * i), 1000));
            let extra = a.at.saturating_duration_since(a.departure) - Duration::from_millis(10);
            extra.as_secs_f64() * 1e3
        })
        .collect()
}

#[test]
fn uniform_jitter_mean_and_stddev_match_config() {
    let n = 100_000;
    let xs = jitter_samples(
        JitterDistribution::Uniform {
            max: Duration::from_millis(10),
        },
        n,
    );
    assert!(xs.iter().all(|&x| (0.0..=10.0).contains(&x)));
    let (mean, sd) = mean_sd(&xs);
    // U[0, 10 ms]: mean 5 ms, σ = 10/√12 ≈ 2.887 ms. σ of the sample mean = σ/√n ≈ 9.1 µs; σ of the sample
    // standard deviation ≈ σ·√((κ − 1)/(4n)) with kurtosis κ = 1.8, i.e. σ·√(0.2/n) ≈ 4.1 µs. 4σ bounds.
    let sigma = 10.0 / 12f64.sqrt();
    let n = n as f64;
    assert_within("uniform jitter mean (ms)", mean, 5.0, sigma / n.sqrt(), 4.0);
    assert_within("uniform jitter sd (ms)", sd, sigma, sigma * (0.2 / n).sqrt(), 4.0);
}

#[test]
fn normal_jitter_mean_and_stddev_match_config() {
    let n = 100_000;
    let dist = JitterDistribution::Normal {
        mean: Duration::from_millis(20),
        stddev: Duration::from_millis(4),
    };
    let xs = jitter_samples(dist, n);
    let (mean, sd) = mean_sd(&xs);
    // N(20, 4) ms, truncated at 0 five σ away (negligible). σ of the sample mean = 4/√n ≈ 12.6 µs, of the
    // sample standard deviation ≈ 4/√(2n) ≈ 8.9 µs. 4σ bounds.
    let n = n as f64;
    assert_within("normal jitter mean (ms)", mean, 20.0, 4.0 / n.sqrt(), 4.0);
    assert_within("normal jitter sd (ms)", sd, 4.0, 4.0 / (2.0 * n).sqrt(), 4.0);
}

#[test]
fn normal_jitter_is_truncated_at_zero() {
    let dist = JitterDistribution::Normal {
        mean: Duration::ZERO,
        stddev: Duration::from_millis(4),
    };
    let xs = jitter_samples(dist, 10_000);
    assert!(xs.iter().all(|&x| x >= 0.0));
    // Half the samples are clamped to exactly zero (binomial: 5000 ± 3·50).
    let zeros = xs.iter().filter(|&&x| x == 0.0).count() as f64;
    assert_within("clamped samples", zeros, 5000.0, 50.0, 3.0);
}

/// Arrivals of packets offered every 1 ms with a jitter up to 10 ms.
fn arrivals(allow_reordering: bool) -> Vec<SimTime> {
    let jitter = JitterConfig {
        distribution: JitterDistribution::Uniform {
            max: Duration::from_millis(10),
        },
        allow_reordering,
    };
    let mut l: Link = link(unlimited(1_000_000_000, 5).with_jitter(jitter));
    (0..10_000)
        .map(|i| delivered(l.enqueue_len(ms(i), 1000)).at)
        .collect()
}

#[test]
fn order_preserving_jitter_never_reorders() {
    assert!(arrivals(false).windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn reordering_jitter_reorders_some_packets() {
    let a = arrivals(true);
    let inversions = a.windows(2).filter(|w| w[0] > w[1]).count();
    // Two consecutive jitters J₁, J₂ ~ U[0, 10 ms] with a 1 ms gap invert when J₁ − J₂ > 1 ms: probability
    // 0.9²/2 = 0.405, so about 4000 of 9999 pairs.
    assert!((3000..5000).contains(&inversions), "{inversions} inversions");
}

#[test]
fn set_delay_applies_to_later_packets() {
    let mut l = link(unlimited(1_000_000_000, 10));
    let first = delivered(l.enqueue_len(ms(0), 125)).at;
    assert_eq!(first, us(10_001));
    l.set_delay(ms(0), Duration::from_millis(1)).unwrap();
    // Order preserved: the second packet may not overtake the first one.
    assert_eq!(delivered(l.enqueue_len(ms(0), 125)).at, first);
    assert_eq!(delivered(l.enqueue_len(ms(20), 125)).at, us(21_001));
}
