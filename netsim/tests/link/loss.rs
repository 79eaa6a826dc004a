//! Random loss: observed rates against the closed forms, with tolerances from the sampling error.
//!
//! Packets are offered 1 ms apart on a 1 Gbit/s link, so the queue never drops and every packet reaches the
//! loss stage.

use mpquic_netsim::link::{Delivery, DropReason, LossModel};

use crate::common::*;

/// Offers `n` packets and returns, for each, whether it was lost.
fn loss_pattern(model: LossModel, n: u64) -> Vec<bool> {
    let mut l = link(unlimited(1_000_000_000, 1).with_loss(model));
    (0..n)
        .map(|i| match l.enqueue_len(ms(i), 1200) {
            Delivery::Dropped { reason } => {
                assert_eq!(reason, DropReason::Loss);
                true
            }
            Delivery::Deliver(_) => false,
        })
        .collect()
}

fn rate(pattern: &[bool]) -> f64 {
    pattern.iter().filter(|&&x| x).count() as f64 / pattern.len() as f64
}

/// Lengths of the runs of consecutive losses.
fn bursts(pattern: &[bool]) -> Vec<f64> {
    let mut out = Vec::new();
    let mut run = 0u32;
    for &lost in pattern {
        if lost {
            run += 1;
        } else if run > 0 {
            out.push(f64::from(run));
            run = 0;
        }
    }
    out
}

#[test]
fn bernoulli_loss_rate_within_three_sigma() {
    let (p, n) = (0.01, 100_000);
    let pattern = loss_pattern(LossModel::Bernoulli { p }, n);
    // Binomial: σ of the observed rate = √(p(1−p)/n) ≈ 3.1e-4.
    let sigma = (p * (1.0 - p) / n as f64).sqrt();
    assert_within("Bernoulli loss rate", rate(&pattern), p, sigma, 3.0);
}

#[test]
fn bernoulli_extremes() {
    assert!(
        loss_pattern(LossModel::Bernoulli { p: 0.0 }, 1000)
            .iter()
            .all(|&x| !x)
    );
    assert!(
        loss_pattern(LossModel::Bernoulli { p: 1.0 }, 1000)
            .iter()
            .all(|&x| x)
    );
}

/// σ of the sample mean of the loss indicator of a Gilbert–Elliott chain over `n` packets.
///
/// The indicator X_t has stationary mean L and variance L(1−L). Its autocovariance at lag t ≥ 1 comes only
/// from the state: Cov(X_0, X_t) = (ℓ_B − ℓ_G)² π_G π_B λ^t with λ = 1 − p − r (the chain's second eigenvalue)
/// and ℓ the per-state loss probabilities. Hence n·Var(mean) → L(1−L) + 2 (ℓ_B − ℓ_G)² π_G π_B λ / (1 − λ).
fn ge_sigma(p: f64, r: f64, k: f64, h: f64, n: f64) -> f64 {
    let (pi_b, pi_g) = (p / (p + r), r / (p + r));
    let l = pi_g * (1.0 - k) + pi_b * (1.0 - h);
    let lambda = 1.0 - p - r;
    let gap = (1.0 - h) - (1.0 - k);
    ((l * (1.0 - l) + 2.0 * gap * gap * pi_g * pi_b * lambda / (1.0 - lambda)) / n).sqrt()
}

#[test]
fn gilbert_elliott_stationary_loss_rate() {
    let (p, r, k, h, n) = (0.02, 0.25, 0.99, 0.3, 200_000);
    let model = LossModel::GilbertElliott { p, r, k, h };
    // L = (r(1−k) + p(1−h)) / (p + r) = (0.0025 + 0.014) / 0.27 ≈ 0.0611; σ ≈ 1.1e-3 (see ge_sigma).
    let expected = model.stationary_loss_rate();
    assert!((expected - 0.0165 / 0.27).abs() < 1e-12);
    let pattern = loss_pattern(model, n);
    assert_within(
        "GE loss rate",
        rate(&pattern),
        expected,
        ge_sigma(p, r, k, h, n as f64),
        3.0,
    );
}

#[test]
fn gilbert_mean_burst_length_is_one_over_r() {
    // Simple Gilbert (k = 1, h = 0): loss rate π_B = p/(p+r) ≈ 0.0476, bursts = stays in Bad, geometric with
    // mean 1/r = 5 and standard deviation √(1−r)/r ≈ 4.47.
    let (p, r, n) = (0.01, 0.2, 200_000u64);
    let pattern = loss_pattern(LossModel::GilbertElliott { p, r, k: 1.0, h: 0.0 }, n);
    assert_within(
        "Gilbert loss rate",
        rate(&pattern),
        p / (p + r),
        ge_sigma(p, r, 1.0, 0.0, n as f64),
        3.0,
    );
    let b = bursts(&pattern);
    // About n·π_B·r ≈ 1900 bursts: σ of their mean ≈ 4.47/√1900 ≈ 0.10.
    let (mean, _) = mean_sd(&b);
    let sigma = (1.0 - r).sqrt() / r / (b.len() as f64).sqrt();
    assert_within("Gilbert mean burst length", mean, 1.0 / r, sigma, 3.0);
}

#[test]
fn gilbert_elliott_is_burstier_than_bernoulli_at_the_same_rate() {
    let (p, r) = (0.01, 0.2);
    let ge = loss_pattern(LossModel::GilbertElliott { p, r, k: 1.0, h: 0.0 }, 100_000);
    let iid = loss_pattern(LossModel::Bernoulli { p: p / (p + r) }, 100_000);
    // Bernoulli runs have mean 1/(1−p) ≈ 1.05; Gilbert runs 5.
    assert!(mean_sd(&bursts(&iid)).0 < 1.2);
    assert!(mean_sd(&bursts(&ge)).0 > 4.0);
}

#[test]
fn set_loss_changes_the_model_from_now_on() {
    let mut l = link(unlimited(1_000_000_000, 1));
    assert!(l.enqueue_len(ms(0), 100).arrival().is_some());
    l.set_loss(ms(1), LossModel::Bernoulli { p: 1.0 }).unwrap();
    assert_eq!(l.enqueue_len(ms(1), 100).drop_reason(), Some(DropReason::Loss));
    l.set_loss(ms(2), LossModel::None).unwrap();
    assert!(l.enqueue_len(ms(2), 100).arrival().is_some());
    assert_eq!(l.stats().dropped_loss.packets, 1);
}
