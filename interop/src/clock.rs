//! The crate's one reading of the wall clock: the runner and the endpoints time real sockets and processes.

use std::time::Instant;

/// Now, from the monotonic clock.
#[allow(clippy::disallowed_methods)] // Real processes and sockets in real time: timeouts and durations.
pub fn now() -> Instant {
    Instant::now()
}
