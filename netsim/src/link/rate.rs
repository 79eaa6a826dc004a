//! Serialisation: putting a packet's bits on the wire at the link rate.
//!
//! The serialiser is a single FIFO server. It owns the link rate (bits/s) and the *tail*: the instant the
//! last accepted packet's last bit leaves. A packet offered at `now` starts at `max(now, tail)` and takes
//! `8 · len / rate` seconds. Departure times are computed exactly: the sub-nanosecond remainder of each
//! transmission is carried into the next one, so a back-to-back stream at 7 Mbit/s accumulates no rounding
//! drift. (A packet that finds the serialiser idle starts on a whole nanosecond.)
//!
//! Rate changes apply to packets accepted after the change; a packet already accepted keeps the departure time
//! it was given. This is what lets [`super::Link::enqueue`] return a final delivery time at once.

use std::time::Duration;

use crate::time::SimTime;

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// Time to serialise `bytes` bytes at `rate_bps` bits per second, rounded up to the nanosecond.
///
/// A rate of zero is treated as 1 bit/s (a [`super::LinkConfig`] never has one).
pub fn serialisation_time(bytes: u64, rate_bps: u64) -> Duration {
    let bits = u128::from(bytes) * 8 * NANOS_PER_SEC;
    let rate = u128::from(rate_bps.max(1));
    Duration::from_nanos(u64::try_from(bits.div_ceil(rate)).unwrap_or(u64::MAX))
}

/// A single FIFO transmitter at a (changeable) rate.
#[derive(Clone, Debug)]
pub(crate) struct Serialiser {
    /// Bits per second; never zero (validated by the link).
    rate_bps: u64,
    /// When the last accepted packet's last bit leaves.
    tail: SimTime,
    /// Fraction of a nanosecond past `tail`, as a numerator over `rate_bps` (always `< rate_bps`).
    tail_rem: u64,
}

impl Serialiser {
    /// An idle serialiser at `rate_bps` (callers guarantee `rate_bps > 0`).
    pub(crate) fn new(rate_bps: u64) -> Serialiser {
        Serialiser {
            rate_bps: rate_bps.max(1),
            tail: SimTime::ZERO,
            tail_rem: 0,
        }
    }

    /// The current rate in bits per second.
    pub(crate) fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    /// Changes the rate for packets accepted from now on.
    pub(crate) fn set_rate(&mut self, rate_bps: u64) {
        // The remainder is expressed in units of the old rate; round the tail up to a whole nanosecond.
        if self.tail_rem > 0 {
            self.tail = self.tail.saturating_add_nanos(1);
            self.tail_rem = 0;
        }
        self.rate_bps = rate_bps.max(1);
    }

    /// Accepts a packet of `bytes` bytes at `now`; returns when its first bit starts and its last bit leaves.
    pub(crate) fn transmit(&mut self, now: SimTime, bytes: u64) -> (SimTime, SimTime) {
        let (start, rem) = if self.tail >= now {
            (self.tail, self.tail_rem)
        } else {
            (now, 0)
        };
        let rate = u128::from(self.rate_bps);
        let total = u128::from(bytes) * 8 * NANOS_PER_SEC + u128::from(rem);
        let nanos = u64::try_from(total / rate).unwrap_or(u64::MAX);
        // `total % rate < rate_bps`, so it fits in a u64.
        let new_rem = u64::try_from(total % rate).unwrap_or(0);
        let finish = start.saturating_add_nanos(nanos);
        self.tail = finish;
        self.tail_rem = new_rem;
        (start, finish)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_to_back_packets_accumulate_no_rounding_drift() {
        // 1500 bytes at 7 Mbit/s = 12000/7 ms = 1_714_285.714… ns; 7 packets take exactly 12 ms.
        let mut s = Serialiser::new(7_000_000);
        let mut finish = SimTime::ZERO;
        for _ in 0..7 {
            finish = s.transmit(SimTime::ZERO, 1500).1;
        }
        assert_eq!(finish, SimTime::from_millis(12));
        assert_eq!(
            serialisation_time(1500, 7_000_000),
            Duration::from_nanos(1_714_286)
        );
    }
}
