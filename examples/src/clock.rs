//! The tools' one reading of the wall clock (the library's core never reads one; tools that relay and measure
//! real sockets in real time must).

use std::time::Instant;

/// Now, from the monotonic clock.
#[allow(clippy::disallowed_methods)] // Real sockets in real time: the perf tool and the emulator need the clock.
pub fn now() -> Instant {
    Instant::now()
}
