//! `sttf`: Shortest Transfer Time First (sched.md §1.7, `vkirany/mptcp-kau net/mptcp/mptcp_sttf.c`).
//!
//! Rule: estimate, for every eligible path, when the next packet would be delivered:
//! * if what is queued on the path plus this packet fits in the free window, `srtt/2`;
//! * otherwise simulate the window round by round (one round = one srtt; the window doubles in slow start
//!   and grows by one MSS per round in congestion avoidance), draining the queue, until the packet is sent:
//!   `rounds · srtt + srtt/2` (at most [`MAX_ROUNDS`] rounds).
//!
//! Pick the smallest (ties: lowest path ID). If that path's window is full the packet waits for it
//! ([`Decision::Wait`]), as the kernel would queue it there.

use std::time::{Duration, Instant};

use crate::params::Params;
use crate::{ConnView, Decision, PathView, SchedError, Scheduler};

/// Cap on simulated rounds (beyond it the estimate saturates).
pub const MAX_ROUNDS: u32 = 64;

/// Shortest-transfer-time scheduler (stateless).
#[derive(Debug, Clone, Default)]
pub struct Sttf;

impl Sttf {
    /// Parameter names (none).
    pub const PARAMS: &'static [&'static str] = &[];

    /// Builds it from registry parameters (it takes none).
    pub fn from_params(p: Params) -> Result<Self, SchedError> {
        p.finish(Self::PARAMS)?;
        Ok(Sttf)
    }

    /// The transfer-time estimate of the next `packet_size` bytes on `p`.
    pub fn transfer_time(p: &PathView, packet_size: u64) -> Duration {
        let half = p.srtt / 2;
        let need = p.queued_bytes.saturating_add(packet_size);
        let free = p.room();
        if need <= free {
            return half;
        }
        let mss = p.mss.max(1);
        let mut remaining = need - free;
        let mut window = p.cwnd.max(mss);
        let mut rounds = 0u32;
        while rounds < MAX_ROUNDS {
            rounds += 1;
            window = if p.in_slow_start {
                window.saturating_mul(2)
            } else {
                window.saturating_add(mss)
            };
            if remaining <= window {
                break;
            }
            remaining -= window;
        }
        p.srtt.saturating_mul(rounds).saturating_add(half)
    }
}

impl Scheduler for Sttf {
    fn name(&self) -> &'static str {
        "sttf"
    }

    fn select_send(&mut self, conn: &ConnView<'_>, _now: Instant) -> Decision {
        let Some(e) = conn.eligible() else {
            return Decision::Blocked;
        };
        let best = e
            .paths()
            .min_by_key(|p| (Self::transfer_time(p, conn.packet_size), p.id));
        match best {
            Some(p) if p.can_send(conn.packet_size) => Decision::Path(p.id),
            _ => e.idle(),
        }
    }
}
