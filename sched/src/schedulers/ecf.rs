//! `ecf`: Earliest Completion First (Y. Lim, E. M. Nahum, D. Towsley, R. J. Gibbens, "ECF: An MPTCP Path
//! Scheduler to Manage Heterogeneous Paths", ACM CoNEXT 2017; the Linux MPTCP v0.x kernel's
//! `net/mptcp/mptcp_ecf.c`).
//!
//! Rule (the paper's Algorithm 1, in the kernel's form by default):
//! 1. `x_f` is the eligible path with the lowest srtt, window full or not; if it can send, use it.
//! 2. Otherwise `x_s` is the minRTT choice among eligible paths that can send. With `k` the bytes waiting
//!    to be sent ([`ConnView::bytes_waiting`]) and `δ = max(rttvar_f, rttvar_s)`:
//!    `n = 1 + K_f / cwnd_f` (windows in bytes).
//! 3. If `n · srtt_f < (1 + waiting·β)(srtt_s + δ)` (waiting for the fast path would finish sooner):
//!    if `K_s / cwnd_s · srtt_s ≥ 2·srtt_f + δ`, set `waiting = 1` and return [`Decision::Wait`];
//!    otherwise send on `x_s`.
//! 4. Otherwise set `waiting = 0` and send on `x_s`.
//!
//! **Kernel form (default).** `K_f = max(k, cwnd_f)` and `K_s = max(k, cwnd_s)`, as the kernel computes
//! them (`x_f = max(k, cwnd_f · mss)`): a backlog smaller than a window counts as a whole window, so with a
//! short backlog `n` is 2 and ECF waits only when the slow path's RTT (plus δ) exceeds two fast RTTs.
//! **Paper form** (`ecf:paper=true`). `K_f = K_s = k`, the paper's formula: with a backlog of a fraction of a
//! window `n` drops towards 1, so ECF waits for the fast path as soon as the slow one is slower by more than
//! δ (and the slow path's share would not complete within two fast RTTs). For `k ≥` both windows the two
//! forms agree.
//!
//! `β = 0.25` (kernel `mptcp_ecf_r_beta = 4`); the `waiting` bit (`switching_margin`) is the hysteresis that
//! keeps ECF waiting once it started. Retransmissions use the same rule.
//!
//! **Decision reuse** ([`crate::Scheduler::reuses_decisions`]): not offered. It reads the backlog `k`, which
//! shrinks with every packet sent, and keeps a hysteresis bit set as it decides.

use std::time::Instant;

use crate::params::Params;
use crate::{ConnView, Decision, SchedError, Scheduler};

/// Earliest-completion-first scheduler.
#[derive(Debug, Clone)]
pub struct Ecf {
    beta: f64,
    paper: bool,
    waiting: bool,
}

impl Ecf {
    /// Parameter names.
    pub const PARAMS: &'static [&'static str] = &["beta", "paper"];

    /// ECF in the kernel's form with hysteresis factor `beta` (the kernel's 0.25).
    pub fn new(beta: f64) -> Self {
        Ecf {
            beta,
            paper: false,
            waiting: false,
        }
    }

    /// ECF in the paper's form (`K = k` instead of the kernel's `max(k, cwnd)`), hysteresis factor `beta`.
    pub fn paper(beta: f64) -> Self {
        Ecf {
            paper: true,
            ..Self::new(beta)
        }
    }

    /// Builds it from registry parameters: `beta` in [0, 4] (default 0.25); `paper` (default false: the
    /// kernel's `max(k, cwnd)`; true: the paper's `k`).
    pub fn from_params(mut p: Params) -> Result<Self, SchedError> {
        let beta = p.f64("beta", 0.25, 0.0, 4.0)?;
        let paper = p.bool("paper", false)?;
        p.finish(Self::PARAMS)?;
        Ok(if paper { Self::paper(beta) } else { Self::new(beta) })
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
        // Step 1: the fastest path is available.
        if fast.id == slow.id {
            return Decision::Path(slow.id);
        }
        let k = conn.bytes_waiting as f64;
        let cwnd_f = fast.cwnd.max(1) as f64;
        let cwnd_s = slow.cwnd.max(1) as f64;
        let srtt_f = fast.srtt.as_secs_f64();
        let srtt_s = slow.srtt.as_secs_f64();
        let delta = fast.rttvar.max(slow.rttvar).as_secs_f64();
        // K_f and K_s: the kernel's max(k, cwnd) or the paper's k.
        let (k_f, k_s) = if self.paper {
            (k, k)
        } else {
            (k.max(cwnd_f), k.max(cwnd_s))
        };
        let n = 1.0 + k_f / cwnd_f;
        let margin = if self.waiting { 1.0 + self.beta } else { 1.0 };
        if n * srtt_f < margin * (srtt_s + delta) {
            // Waiting for the fast path would finish sooner, unless the slow path's share completes within
            // two fast RTTs anyway.
            if k_s / cwnd_s * srtt_s >= 2.0 * srtt_f + delta {
                self.waiting = true;
                return Decision::Wait;
            }
        } else {
            self.waiting = false;
        }
        Decision::Path(slow.id)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::{PathId, PathView};

    #[test]
    #[allow(clippy::disallowed_methods)] // test set-up: any instant will do
    fn the_paper_form_counts_the_backlog_itself() {
        // Fast: 10 ms, rttvar 1 ms, cwnd 12 000 B, full. Slow: 16 ms, rttvar 1 ms, cwnd 12 000 B, idle.
        // δ = 1 ms, k = 2 400 B.
        // Kernel: K_f = 12 000 → n = 2; 2·10 = 20 ≥ 16 + 1 = 17 → send on the slow path.
        // Paper: K_f = 2 400 → n = 1.2; 12 < 17, and K_s/cwnd_s·srtt_s = 0.2·16 = 3.2 < 2·10 + 1 = 21
        // → the slow path's share completes within two fast RTTs: send on the slow path.
        // With a slow path of 100 ms (δ = 1): kernel n = 2, 20 < 101, K_s/cwnd_s·100 = 100 ≥ 21 → wait;
        // paper n = 1.2, 12 < 101, 0.2·100 = 20 < 21 → send on the slow path.
        let now = Instant::now();
        let mut fast = PathView::new(0, 12_000, Duration::from_millis(10));
        fast.bytes_in_flight = 12_000;
        fast.rttvar = Duration::from_millis(1);
        let mut slow = PathView::new(1, 12_000, Duration::from_millis(16));
        slow.rttvar = Duration::from_millis(1);
        let paths = [fast.clone(), slow.clone()];
        let mut v = ConnView::new(&paths, 1200);
        v.bytes_waiting = 2_400;
        assert_eq!(Ecf::new(0.25).select_send(&v, now), Decision::Path(PathId(1)));
        assert_eq!(Ecf::paper(0.25).select_send(&v, now), Decision::Path(PathId(1)));
        slow.srtt = Duration::from_millis(100);
        let paths = [fast, slow];
        let mut v = ConnView::new(&paths, 1200);
        v.bytes_waiting = 2_400;
        assert_eq!(Ecf::new(0.25).select_send(&v, now), Decision::Wait);
        assert_eq!(Ecf::paper(0.25).select_send(&v, now), Decision::Path(PathId(1)));
        assert!(matches!(
            crate::registry::build("ecf:paper=yes"),
            Ok(s) if s.name() == "ecf"
        ));
    }
}
