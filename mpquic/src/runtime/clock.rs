//! The runtime's clock: the one place in the crate that reads the time.
//!
//! The protocol core ([`crate::proto`]) is sans-IO and takes `now` as an input; clippy bans
//! `Instant::now` everywhere else so that time stays an input there.

use std::time::Instant;

/// The current time.
// The runtime is the one place that reads the clock: it hands `now` to the sans-IO core.
#[allow(clippy::disallowed_methods)]
pub(crate) fn now() -> Instant {
    Instant::now()
}
