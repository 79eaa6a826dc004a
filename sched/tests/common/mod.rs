//! Shared helpers of the integration tests.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use mpquic_sched::{PathStatus, PathView};

/// A fixed starting instant (any instant will do: schedulers only compare instants they were given).
#[allow(clippy::disallowed_methods)] // test set-up: the only clock reading, used as an origin
pub fn t0() -> Instant {
    Instant::now()
}

/// Milliseconds.
pub fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// A validated, available path with `cwnd` bytes, `srtt` ms and rttvar `rttvar` ms, MSS 1200.
pub fn path(id: u32, cwnd: u64, srtt: u64, rttvar: u64) -> PathView {
    let mut p = PathView::new(id, cwnd, ms(srtt));
    p.rttvar = ms(rttvar);
    p
}

/// The same, with status backup.
pub fn backup(id: u32, cwnd: u64, srtt: u64) -> PathView {
    let mut p = path(id, cwnd, srtt, srtt / 2);
    p.status = PathStatus::Backup;
    p
}
