//! `blest`: Blocking Estimation (S. Ferlin, Ö. Alay, O. Mehani, R. Boreli, "BLEST: Blocking Estimation-based
//! MPTCP Scheduler for Heterogeneous Networks", IFIP Networking 2016; the Linux MPTCP v0.x kernel's
//! `net/mptcp/mptcp_blest.c`).
//!
//! Rule (the paper's form):
//! 1. `x_f` is the eligible path with the lowest srtt, window full or not; if it can send, use it (BLEST
//!    only steps in when minRTT would pick a path that is not the fastest).
//! 2. Otherwise `x_s` is the minRTT choice among eligible paths that can send; `r = srtt_s / srtt_f`.
//! 3. The fast path would send `X = (cwnd_f + MSS_f·(r − 1)/2) · r` bytes during one slow-path RTT
//!    (windows in bytes).
//! 4. Use `x_s` only if `λ·X ≤ SW − (bytes_in_flight_s + MSS_s)`; otherwise return [`Decision::Wait`].
//!
//! `SW`, MPTCP's connection send window measured from the oldest unacknowledged byte, is in QUIC
//! `flow_credit + Σ bytes_in_flight`: the remaining MAX_DATA credit plus what is outstanding on all paths.
//!
//! **λ** (the kernel's adaptation): λ starts at 1.2, is clamped to [1.0, 1.3], and is updated at most once
//! per slow-path min RTT, when BLEST evaluates a slow path: +0.04 if a send-window-blocked retransmission
//! happened since the last update, −0.01 otherwise. The event is the one the paper's λ reacts to: the
//! connection's send window was used up, so the fast path could not send, because data outstanding on a
//! slower path held the receiver's window (head-of-line blocking), and data had to be sent again (MPTCP's
//! opportunistic retransmission). A QUIC connection reports it as [`SentInfo`] with both
//! [`SentInfo::retransmission`] and [`SentInfo::flow_blocked`] set: a packet repeating lost stream data
//! while the connection-level flow-control credit was below one packet.
//!
//! Not implemented: the kernel's refinements of `X` (linger time from per-path min/max srtt, slow-start
//! doubling); the paper form above is used.
//!
//! **Decision reuse** ([`crate::Scheduler::reuses_decisions`]): not offered. It reads the flow-control credit and
//! the slow path's bytes in flight beyond the can-send test (the send window `SW`), and adapts λ as it decides
//! and hears of sent packets.

use std::time::Instant;

use crate::params::Params;
use crate::{ConnView, Decision, SchedError, Scheduler, SentInfo};

/// Blocking-estimation scheduler.
#[derive(Debug, Clone)]
pub struct Blest {
    lambda: f64,
    min: f64,
    max: f64,
    increase: f64,
    decrease: f64,
    adapt: bool,
    retrans_event: bool,
    last_update: Option<Instant>,
}

impl Blest {
    /// Parameter names.
    pub const PARAMS: &'static [&'static str] = &["lambda", "min", "max", "increase", "decrease", "adapt"];

    /// BLEST with the kernel's λ settings: start 1.2 in [1.0, 1.3], +0.04 / −0.01, adaptive.
    pub fn new() -> Self {
        Blest {
            lambda: 1.2,
            min: 1.0,
            max: 1.3,
            increase: 0.04,
            decrease: 0.01,
            adapt: true,
            retrans_event: false,
            last_update: None,
        }
    }

    /// Builds it from registry parameters: `lambda` (start, default 1.2), `min` (1.0), `max` (1.3), all in
    /// [0.1, 10] with `min ≤ lambda ≤ max`; `increase` (0.04) and `decrease` (0.01) in [0, 1]; `adapt`
    /// (default true; false keeps λ fixed).
    pub fn from_params(mut p: Params) -> Result<Self, SchedError> {
        let min = p.f64("min", 1.0, 0.1, 10.0)?;
        let max = p.f64("max", 1.3f64.max(min), min, 10.0)?;
        let lambda = p.f64("lambda", 1.2f64.clamp(min, max), min, max)?;
        let increase = p.f64("increase", 0.04, 0.0, 1.0)?;
        let decrease = p.f64("decrease", 0.01, 0.0, 1.0)?;
        let adapt = p.bool("adapt", true)?;
        p.finish(Self::PARAMS)?;
        Ok(Blest {
            lambda,
            min,
            max,
            increase,
            decrease,
            adapt,
            ..Self::new()
        })
    }

    /// The current strictness factor λ.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    fn adapt_lambda(&mut self, now: Instant, slow_rtt: std::time::Duration) {
        if !self.adapt {
            return;
        }
        let Some(last) = self.last_update else {
            self.last_update = Some(now);
            return;
        };
        if now.saturating_duration_since(last) < slow_rtt {
            return;
        }
        self.lambda = if self.retrans_event {
            self.lambda + self.increase
        } else {
            self.lambda - self.decrease
        }
        .clamp(self.min, self.max);
        self.retrans_event = false;
        self.last_update = Some(now);
    }
}

impl Default for Blest {
    fn default() -> Self {
        Self::new()
    }
}

impl Scheduler for Blest {
    fn name(&self) -> &'static str {
        "blest"
    }

    fn select_send(&mut self, conn: &ConnView<'_>, now: Instant) -> Decision {
        let Some(e) = conn.eligible() else {
            return Decision::Blocked;
        };
        let (Some(slow), Some(fast)) = (e.fastest_sendable(), e.fastest()) else {
            return Decision::Blocked;
        };
        // Step 1.
        if fast.id == slow.id {
            return Decision::Path(slow.id);
        }
        let slow_rtt = if slow.min_rtt.is_zero() {
            slow.srtt
        } else {
            slow.min_rtt
        };
        self.adapt_lambda(now, slow_rtt);
        let srtt_f = fast.srtt.as_secs_f64().max(1e-6);
        let r = slow.srtt.as_secs_f64() / srtt_f;
        // Step 3: bytes the fast path sends during one slow-path RTT.
        let x = (fast.cwnd as f64 + fast.mss as f64 * (r - 1.0) / 2.0) * r;
        // Step 4: room left in the send window once this packet is outstanding on the slow path.
        let sw = conn.flow_credit.saturating_add(conn.total_bytes_in_flight()) as f64;
        let avail = sw - (slow.bytes_in_flight as f64 + slow.mss as f64);
        if self.lambda * x <= avail {
            Decision::Path(slow.id)
        } else {
            Decision::Wait
        }
    }

    fn on_sent(&mut self, sent: &SentInfo) {
        if sent.retransmission && sent.flow_blocked {
            self.retrans_event = true;
        }
    }
}
