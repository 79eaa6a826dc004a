//! The studies' metrics (`docs/studies.md`) as pure functions, and the time-series [`Recorder`].
//!
//! Conventions:
//! - rates are in **bits per second** (`f64`), capacities in bits per second (`u64` as in link settings);
//! - a function whose result is undefined for its input (an empty set, a zero denominator) returns `None`
//!   rather than a NaN, and the output writers print it as `-` (table), `null` (JSON) or an empty cell (CSV);
//! - percentiles use the **nearest-rank** method: the p-th percentile of `n` values sorted ascending is the
//!   value of rank `⌈p/100 · n⌉` (1-based; rank 1 for p = 0). It is always one of the values (no
//!   interpolation), so p95 of 20 samples is the 19th smallest and p95 of 10 samples is the largest.

pub mod app;
pub mod confidence;
pub mod recorder;

use std::time::Duration;

pub use recorder::{PathSample, PathSeries, ReceiverSample, Recorder, Sample, SampleSource};

/// Goodput in bits per second: application bytes delivered over `elapsed` (`None` for zero time).
pub fn goodput_bps(bytes: u64, elapsed: Duration) -> Option<f64> {
    let secs = elapsed.as_secs_f64();
    // Precision loss above 2^53 bytes is irrelevant here.
    #[allow(clippy::cast_precision_loss)]
    let bits = bytes as f64 * 8.0;
    (secs > 0.0).then(|| bits / secs)
}

/// Utilisation: goodput over capacity, both in bits per second (`None` for zero capacity).
pub fn utilisation(goodput_bps: f64, capacity_bps: u64) -> Option<f64> {
    #[allow(clippy::cast_precision_loss)]
    let capacity = capacity_bps as f64;
    (capacity > 0.0).then(|| goodput_bps / capacity)
}

/// Jain's fairness index `J = (Σx)² / (n · Σx²)`: 1 when all shares are equal, `1/n` when one takes all.
/// `None` for an empty set or when every share is zero (0/0).
pub fn jain_index(shares: &[f64]) -> Option<f64> {
    let sum: f64 = shares.iter().sum();
    let sum_sq: f64 = shares.iter().map(|x| x * x).sum();
    #[allow(clippy::cast_precision_loss)]
    let n = shares.len() as f64;
    (n > 0.0 && sum_sq > 0.0).then(|| sum * sum / (n * sum_sq))
}

/// Aggregate benefit of a multipath connection, in `[-1, 1]` when `G ≤ ΣB`:
///
/// ```text
/// Agr_Bf = (G − B_max) / (ΣB − B_max)   if G ≥ B_max
///          (G − B_max) / B_max           otherwise
/// ```
///
/// with `G` the connection's total goodput and `B_x` the capacity of path `x`. 1 means every path is fully
/// used, 0 means the connection does as well as the best path alone, −1 means it delivers nothing. `None`
/// without a positive capacity, or when `G ≥ B_max` and `ΣB = B_max` (one path: the first branch is 0/0).
/// The value is not clamped: a measured `G` above `ΣB` gives more than 1.
pub fn aggregate_benefit(total_goodput_bps: f64, capacities_bps: &[u64]) -> Option<f64> {
    #[allow(clippy::cast_precision_loss)]
    let caps: Vec<f64> = capacities_bps.iter().map(|&c| c as f64).collect();
    let b_max = caps.iter().copied().fold(0.0_f64, f64::max);
    if b_max <= 0.0 {
        return None;
    }
    let sum: f64 = caps.iter().sum();
    if total_goodput_bps >= b_max {
        let spare = sum - b_max;
        (spare > 0.0).then(|| (total_goodput_bps - b_max) / spare)
    } else {
        Some((total_goodput_bps - b_max) / b_max)
    }
}

/// MP/SP ratio: a multipath connection's goodput over a competing single-path flow's (`None` if the latter
/// is zero). The design goal for coupled controllers on a shared bottleneck is ≈ 1.
pub fn mp_sp_ratio(multipath_bps: f64, single_path_bps: f64) -> Option<f64> {
    (single_path_bps > 0.0).then(|| multipath_bps / single_path_bps)
}

/// Arithmetic mean (`None` for no values).
pub fn mean(values: &[f64]) -> Option<f64> {
    #[allow(clippy::cast_precision_loss)]
    let n = values.len() as f64;
    (n > 0.0).then(|| values.iter().sum::<f64>() / n)
}

/// Sample standard deviation (divisor `n − 1`; `None` for fewer than two values): the spread of a sweep's
/// repetitions.
pub fn std_dev(values: &[f64]) -> Option<f64> {
    let m = mean(values)?;
    #[allow(clippy::cast_precision_loss)]
    let n = values.len() as f64;
    (n > 1.0).then(|| (values.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0)).sqrt())
}

/// The `p`-th percentile by nearest rank (see the module documentation); `p` is clamped to `[0, 100]`.
/// `None` for no values; NaNs sort last.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let p = if p.is_nan() { 100.0 } else { p.clamp(0.0, 100.0) };
    #[allow(clippy::cast_precision_loss)]
    let n = sorted.len() as f64;
    // 1-based rank ⌈p/100 · n⌉, at least 1; within [1, n] by construction.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let rank = ((p / 100.0 * n).ceil() as usize).max(1);
    sorted.get(rank.saturating_sub(1)).or(sorted.last()).copied()
}

/// The 95th percentile by nearest rank.
pub fn p95(values: &[f64]) -> Option<f64> {
    percentile(values, 95.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-12)
    }

    #[test]
    fn goodput_and_utilisation() {
        // 1.25 MB in 1 s = 10 Mbit/s; on a 20 Mbit/s path: 50 %.
        assert!(close(goodput_bps(1_250_000, Duration::from_secs(1)), 10e6));
        assert!(close(goodput_bps(1_250_000, Duration::from_millis(500)), 20e6));
        assert_eq!(goodput_bps(1, Duration::ZERO), None);
        assert!(close(utilisation(10e6, 20_000_000), 0.5));
        assert_eq!(utilisation(10e6, 0), None);
    }

    #[test]
    fn jain_by_hand() {
        assert!(close(jain_index(&[5.0, 5.0]), 1.0));
        // One flow takes everything: 1/n.
        assert!(close(jain_index(&[10.0, 0.0, 0.0, 0.0]), 0.25));
        // (1+3)² / (2·(1+9)) = 16/20.
        assert!(close(jain_index(&[1.0, 3.0]), 0.8));
        // (1+2+3)² / (3·14) = 36/42.
        assert!(close(jain_index(&[1.0, 2.0, 3.0]), 36.0 / 42.0));
        assert_eq!(jain_index(&[]), None);
        assert_eq!(jain_index(&[0.0, 0.0]), None);
    }

    #[test]
    fn aggregate_benefit_both_branches() {
        let caps = [100_000_000, 50_000_000];
        // G ≥ B_max: (120 − 100) / (150 − 100) = 0.4; every path full = 1; best path alone = 0.
        assert!(close(aggregate_benefit(120e6, &caps), 0.4));
        assert!(close(aggregate_benefit(150e6, &caps), 1.0));
        assert!(close(aggregate_benefit(100e6, &caps), 0.0));
        // G < B_max: (60 − 100) / 100 = −0.4; nothing delivered = −1.
        assert!(close(aggregate_benefit(60e6, &caps), -0.4));
        assert!(close(aggregate_benefit(0.0, &caps), -1.0));
        // One path: only the second branch is defined.
        assert!(close(aggregate_benefit(50e6, &[100_000_000]), -0.5));
        assert_eq!(aggregate_benefit(100e6, &[100_000_000]), None);
        assert_eq!(aggregate_benefit(1.0, &[]), None);
    }

    #[test]
    fn mp_sp_ratio_by_hand() {
        assert!(close(mp_sp_ratio(30e6, 20e6), 1.5));
        assert_eq!(mp_sp_ratio(30e6, 0.0), None);
    }

    #[test]
    fn mean_spread_and_nearest_rank_percentiles() {
        assert!(close(mean(&[1.0, 2.0, 6.0]), 3.0));
        assert_eq!(mean(&[]), None);
        // Deviations −2, −1, 3: (4 + 1 + 9) / 2 = 7.
        assert!(close(std_dev(&[1.0, 2.0, 6.0]), 7.0_f64.sqrt()));
        assert_eq!(std_dev(&[1.0]), None);
        let twenty: Vec<f64> = (1..=20).map(f64::from).rev().collect();
        // ⌈0.95 · 20⌉ = 19.
        assert_eq!(p95(&twenty), Some(19.0));
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        // ⌈0.95 · 10⌉ = 10: the largest.
        assert_eq!(p95(&ten), Some(10.0));
        assert_eq!(percentile(&ten, 50.0), Some(5.0));
        assert_eq!(percentile(&ten, 0.0), Some(1.0));
        assert_eq!(percentile(&ten, 250.0), Some(10.0));
        assert_eq!(p95(&[7.0]), Some(7.0));
        assert_eq!(p95(&[]), None);
    }
}
