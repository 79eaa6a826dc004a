//! Shared helpers for the link tests.

use std::time::Duration;

use mpquic_netsim::SimTime;
use mpquic_netsim::link::{Arrival, Delivery, Link, LinkConfig, QueueLimit};

/// Seed of the statistical tests: `NETSIM_SEED` if set, else a fixed default. Failure messages print it.
pub fn seed() -> u64 {
    std::env::var("NETSIM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_1234)
}

/// 8 Mbit/s = one byte per microsecond, which makes closed forms easy to read.
pub const RATE_8M: u64 = 8_000_000;

/// A link of `rate_bps` and `delay_ms` with an (effectively) unlimited byte queue: the largest allowed,
/// 1 GB, far beyond what any test offers.
pub fn unlimited(rate_bps: u64, delay_ms: u64) -> LinkConfig {
    LinkConfig::new(rate_bps, Duration::from_millis(delay_ms)).with_queue(QueueLimit::Bytes {
        bytes: mpquic_netsim::link::limits::MAX_QUEUE_BYTES,
    })
}

/// Builds a link; panics on an invalid configuration (tests only).
pub fn link(config: LinkConfig) -> Link {
    Link::new(config, seed()).expect("valid test configuration")
}

/// The arrival of a delivered packet; panics if it was dropped.
#[track_caller]
pub fn delivered(d: Delivery) -> Arrival {
    match d {
        Delivery::Deliver(a) => a,
        Delivery::Dropped { reason } => panic!("expected a delivery, got a drop ({reason:?})"),
    }
}

/// Milliseconds as a `SimTime`.
pub fn ms(v: u64) -> SimTime {
    SimTime::from_millis(v)
}

/// Microseconds as a `SimTime`.
pub fn us(v: u64) -> SimTime {
    SimTime::from_micros(v)
}

/// Asserts `|observed − expected| ≤ k·sigma`, naming the quantity and the seed.
#[track_caller]
pub fn assert_within(what: &str, observed: f64, expected: f64, sigma: f64, k: f64) {
    assert!(
        (observed - expected).abs() <= k * sigma,
        "{what}: observed {observed}, expected {expected} ± {k}·{sigma} (seed {}; set NETSIM_SEED to vary)",
        seed()
    );
}

/// Mean and (sample) standard deviation.
pub fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}
