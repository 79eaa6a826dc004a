//! The tools' one reading of the wall clock (the library's core never reads one; tools that relay and measure
//! real sockets in real time must).

use std::time::Instant;

/// Now, from the monotonic clock.
#[allow(clippy::disallowed_methods)] // Real sockets in real time: the perf tool and the emulator need the clock.
pub fn now() -> Instant {
    Instant::now()
}

/// Seconds since the Unix epoch, from the wall clock (for the timestamp of a report).
#[allow(clippy::disallowed_methods)] // A report's timestamp is the wall clock's time by definition.
pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}
