//! `ecf`: Earliest Completion First (Lim et al., CoNEXT 2017; sched.md §1.3, `net/mptcp/mptcp_ecf.c`).
//!
//! Rule (seed Algorithm 3, as the kernel computes it):
//! 1. `x_f` is the eligible path with the lowest srtt, window full or not; if it can send, use it.
//! 2. Otherwise `x_s` is the minRTT choice among eligible paths that can send. With `k` the bytes waiting
//!    to be sent ([`ConnView::bytes_waiting`]) and `δ = max(rttvar_f, rttvar_s)`:
//!    `n = 1 + max(k, cwnd_f) / cwnd_f` (windows in bytes, the kernel's `x_f = max(k, cwnd_f·MSS)`).
//! 3. If `n · srtt_f < (1 + waiting·β)(srtt_s + δ)` (waiting for the fast path would finish sooner):
//!    if `max(k, cwnd_s)/cwnd_s · srtt_s ≥ 2·srtt_f + δ`, set `waiting = 1` and return [`Decision::Wait`];
//!    otherwise send on `x_s`.
//! 4. Otherwise set `waiting = 0` and send on `x_s`.
//!
//! `β = 0.25` (kernel `mptcp_ecf_r_beta = 4`); the `waiting` bit (`switching_margin`) is the hysteresis that
//! keeps ECF waiting once it started. Retransmissions use the same rule.

use std::time::Instant;

use crate::params::Params;
use crate::{ConnView, Decision, SchedError, Scheduler};

/// Earliest-completion-first scheduler.
#[derive(Debug, Clone)]
pub struct Ecf {
    beta: f64,
    waiting: bool,
}

impl Ecf {
    /// Parameter names.
    pub const PARAMS: &'static [&'static str] = &["beta"];

    /// ECF with hysteresis factor `beta` (sched.md §1.3: 0.25).
    pub fn new(beta: f64) -> Self {
        Ecf { beta, waiting: false }
    }

    /// Builds it from registry parameters: `beta` in [0, 4] (default 0.25).
    pub fn from_params(mut p: Params) -> Result<Self, SchedError> {
        let beta = p.f64("beta", 0.25, 0.0, 4.0)?;
        p.finish(Self::PARAMS)?;
        Ok(Self::new(beta))
    }

    /// The hysteresis bit: set after a [`Decision::Wait`], cleared when sending on the slow path is clearly
    /// better.
    pub fn waiting(&self) -> bool {
        self.waiting
    }
}

impl Default for Ecf {
    fn default() -> Self {
        Self::new(0.25)
    }
}

impl Scheduler for Ecf {
    fn name(&self) -> &'static str {
        "ecf"
    }

    fn select_send(&mut self, conn: &ConnView<'_>, _now: Instant) -> Decision {
        let Some(e) = conn.eligible() else {
            return Decision::Blocked;
        };
        let (Some(slow), Some(fast)) = (e.fastest_sendable(), e.fastest()) else {
            return Decision::Blocked;
        };
        // sched.md §1.3 step 1: the fastest path is available.
        if fast.id == slow.id {
            return Decision::Path(slow.id);
        }
        let k = conn.bytes_waiting as f64;
        let cwnd_f = fast.cwnd.max(1) as f64;
        let cwnd_s = slow.cwnd.max(1) as f64;
        let srtt_f = fast.srtt.as_secs_f64();
        let srtt_s = slow.srtt.as_secs_f64();
        let delta = fast.rttvar.max(slow.rttvar).as_secs_f64();
        let n = 1.0 + k.max(cwnd_f) / cwnd_f;
        let margin = if self.waiting { 1.0 + self.beta } else { 1.0 };
        if n * srtt_f < margin * (srtt_s + delta) {
            // Waiting for the fast path would finish sooner, unless the slow path's share completes within
            // two fast RTTs anyway.
            if k.max(cwnd_s) / cwnd_s * srtt_s >= 2.0 * srtt_f + delta {
                self.waiting = true;
                return Decision::Wait;
            }
        } else {
            self.waiting = false;
        }
        Decision::Path(slow.id)
    }
}
