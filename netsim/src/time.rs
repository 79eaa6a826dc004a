//! Simulated time.
//!
//! [`SimTime`] is an instant on the simulation's time line: a count of nanoseconds since the simulation epoch
//! (time zero, when a scenario starts). The simulator advances it virtually; the real-socket emulator
//! (`mpquic-netem`) maps its monotonic clock onto it by subtracting the instant it started at. Nothing in this
//! crate reads a wall clock.
//!
//! Invariant: arithmetic never panics. Adding a [`Duration`] saturates at [`SimTime::MAX`] (about 584 years after
//! the epoch, far beyond any scenario) and differences saturate at zero.

use std::fmt;
use std::ops::{Add, AddAssign};
use std::time::Duration;

/// An instant in simulated time: nanoseconds since the simulation epoch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(u64);

impl SimTime {
    /// The simulation epoch (time zero).
    pub const ZERO: SimTime = SimTime(0);
    /// The latest representable instant; arithmetic saturates here.
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// The instant `nanos` nanoseconds after the epoch.
    pub const fn from_nanos(nanos: u64) -> SimTime {
        SimTime(nanos)
    }

    /// The instant `micros` microseconds after the epoch (saturating).
    pub const fn from_micros(micros: u64) -> SimTime {
        SimTime(micros.saturating_mul(1_000))
    }

    /// The instant `millis` milliseconds after the epoch (saturating).
    pub const fn from_millis(millis: u64) -> SimTime {
        SimTime(millis.saturating_mul(1_000_000))
    }

    /// The instant `offset` after the epoch (saturating at [`SimTime::MAX`]).
    pub fn from_duration(offset: Duration) -> SimTime {
        SimTime(duration_to_nanos(offset))
    }

    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Time elapsed since the epoch.
    pub const fn since_epoch(self) -> Duration {
        Duration::from_nanos(self.0)
    }

    /// `self - earlier`, or zero if `earlier` is later than `self`.
    pub const fn saturating_duration_since(self, earlier: SimTime) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// `self + d`, or `None` past [`SimTime::MAX`].
    pub fn checked_add(self, d: Duration) -> Option<SimTime> {
        u64::try_from(d.as_nanos())
            .ok()
            .and_then(|n| self.0.checked_add(n))
            .map(SimTime)
    }

    /// `self + d`, saturating at [`SimTime::MAX`].
    pub fn saturating_add(self, d: Duration) -> SimTime {
        SimTime(self.0.saturating_add(duration_to_nanos(d)))
    }

    /// `self + nanos` nanoseconds, saturating at [`SimTime::MAX`].
    pub const fn saturating_add_nanos(self, nanos: u64) -> SimTime {
        SimTime(self.0.saturating_add(nanos))
    }
}

/// A duration in nanoseconds, saturating at `u64::MAX`.
pub(crate) fn duration_to_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Add<Duration> for SimTime {
    type Output = SimTime;

    /// Saturating addition (see [`SimTime::saturating_add`]).
    fn add(self, rhs: Duration) -> SimTime {
        self.saturating_add(rhs)
    }
}

impl AddAssign<Duration> for SimTime {
    fn add_assign(&mut self, rhs: Duration) {
        *self = self.saturating_add(rhs);
    }
}

impl fmt::Display for SimTime {
    /// Seconds with nanosecond precision, e.g. `1.250000000s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:09}s", self.0 / 1_000_000_000, self.0 % 1_000_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(SimTime::MAX + Duration::from_secs(1), SimTime::MAX);
        assert_eq!(
            SimTime::ZERO.saturating_duration_since(SimTime::from_nanos(5)),
            Duration::ZERO
        );
        assert_eq!(SimTime::MAX.checked_add(Duration::from_nanos(1)), None);
        assert_eq!(SimTime::from_duration(Duration::MAX), SimTime::MAX);
        assert_eq!(SimTime::from_millis(3).as_nanos(), 3_000_000);
        assert_eq!(
            SimTime::from_micros(3) + Duration::from_micros(2),
            SimTime::from_micros(5)
        );
        assert_eq!(SimTime::from_millis(1250).to_string(), "1.250000000s");
    }
}
