//! Simulated time as the QUIC stack sees it.
//!
//! mpquic's sans-IO connections take `now` as a [`std::time::Instant`]. The engine takes one base instant
//! when a run starts (the only wall-clock read in the crate) and hands the connections `base + t` for the
//! simulated time `t`. Only differences between instants matter to the stack, and nothing derived from the
//! base instant reaches the outputs, so results do not depend on when a run happened.

use std::time::Instant;

use crate::time::SimTime;

/// Maps [`SimTime`] onto [`Instant`] and back.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    base: Instant,
}

impl Clock {
    /// A clock whose epoch is the current instant.
    pub fn new() -> Clock {
        // The one wall-clock read: an arbitrary origin for the stack's `Instant`s; only offsets are used.
        #[allow(clippy::disallowed_methods)]
        let base = Instant::now();
        Clock { base }
    }

    /// The instant of simulated time `t`.
    pub fn instant(&self, t: SimTime) -> Instant {
        // `Instant + Duration` panics on overflow; simulated times are far below any platform limit, but
        // stay panic-free anyway.
        self.base.checked_add(t.since_epoch()).unwrap_or(self.base)
    }

    /// The simulated time of `instant`, rounded up to the next nanosecond (never before the epoch), so that a
    /// timer handled at the returned time has expired.
    pub fn sim_time(&self, instant: Instant) -> SimTime {
        SimTime::from_duration(instant.saturating_duration_since(self.base))
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let c = Clock::new();
        let t = SimTime::from_micros(1_234_567);
        assert_eq!(c.sim_time(c.instant(t)), t);
    }
}
