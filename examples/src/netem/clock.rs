//! The emulator's clock: real monotonic time mapped onto the link model's [`SimTime`] as the offset from
//! the emulator's start.
//!
//! [`crate::clock::now`] is the only reading of the system clock. Deadlines go the
//! other way: the sender threads wait for `at - now` on a condition variable (a timed wait never ends
//! before its deadline, so a datagram is never delivered before the arrival time the model gave it, and
//! it ends within tens of microseconds after it), and scheduled events sleep until [`Clock::instant`] on
//! tokio's timer (millisecond resolution, fine for events). Late wake-ups add latency, never rate error:
//! the model's departure times do not depend on when datagrams are actually sent.

use std::time::Instant as StdInstant;

use mpquic_netsim::time::SimTime;
use tokio::time::Instant;

use crate::clock::now as monotonic_now;

/// Real time since the emulator started, as simulated time.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    start: StdInstant,
}

impl Clock {
    /// A clock whose epoch is now.
    pub fn start() -> Clock {
        Clock {
            start: monotonic_now(),
        }
    }

    /// Time elapsed since the start.
    pub fn now(&self) -> SimTime {
        SimTime::from_duration(monotonic_now().saturating_duration_since(self.start))
    }

    /// The real instant of simulated time `at` (saturating far in the future).
    pub fn instant(&self, at: SimTime) -> Instant {
        let std = self
            .start
            .checked_add(at.since_epoch())
            .or_else(|| {
                self.start
                    .checked_add(std::time::Duration::from_secs(86_400 * 365))
            })
            .unwrap_or(self.start);
        Instant::from_std(std)
    }
}
