//! `redundant`: duplicate every packet on every eligible path that can send (Linux MPTCP's redundant scheduler
//! (`mptcp_redundant.c`), ReMP TCP; `net/mptcp/mptcp_redundant.c`).
//!
//! Rule: new data goes on **every** eligible path with window and pacing room ([`Decision::Paths`], which
//! means duplicate, never stripe); a path without room simply does not get this packet. Backup paths are
//! used only when no available path is alive (Linux MPTCP's `mptcp_is_available`). Retransmissions are placed once,
//! with minRTT, as the kernel places reinjections.
//!
//! QUIC mapping: duplicated STREAM frames are legal, the receiver drops the copies. Bandwidth is spent to
//! buy latency and resilience; Linux MPTCP's redundant scheduler (`mptcp_redundant.c`) notes goodput must drop.
//!
//! **Decision reuse** ([`crate::Scheduler::reuses_decisions`]): not offered. It duplicates on every sendable
//! path, so the packets it places go on several paths and change the next answer, and it places retransmissions
//! (minRTT) differently from new data while the retransmission queue drains packet by packet.

use std::time::Instant;

use super::MinRtt;
use crate::params::Params;
use crate::{ConnView, Decision, SchedError, Scheduler};

/// Duplicate-on-every-path scheduler (stateless).
#[derive(Debug, Clone, Default)]
pub struct Redundant;

impl Redundant {
    /// Parameter names (none).
    pub const PARAMS: &'static [&'static str] = &[];

    /// Builds it from registry parameters (it takes none).
    pub fn from_params(p: Params) -> Result<Self, SchedError> {
        p.finish(Self::PARAMS)?;
        Ok(Redundant)
    }
}

impl Scheduler for Redundant {
    fn name(&self) -> &'static str {
        "redundant"
    }

    fn select_send(&mut self, conn: &ConnView<'_>, _now: Instant) -> Decision {
        let Some(e) = conn.eligible() else {
            return Decision::Blocked;
        };
        let mut ids: Vec<_> = e.sendable().map(|p| p.id).collect();
        ids.sort_unstable();
        ids.dedup();
        match ids.as_slice() {
            [] => Decision::Blocked,
            [one] => Decision::Path(*one),
            _ => Decision::Paths(ids),
        }
    }

    fn select_retrans(&mut self, conn: &ConnView<'_>, _now: Instant) -> Decision {
        // Linux MPTCP's redundant scheduler (`mptcp_redundant.c`): "Reinjections are placed first, with minRTT."
        MinRtt::decide(conn)
    }
}
