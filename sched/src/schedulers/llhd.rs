//! `llhd`: Low Latency and High Data rate (code name DRS; the scheduler of the published `imtiaztee/DRS`
//! kernel module, in the normalised form of its paper).
//!
//! Rule (the paper's normalised form, not the published code's constants): among eligible paths that can
//! send, maximise `γ_i = GP_i / GP_max + β · RTT_max / RTT_i`, where GP is goodput (the path's delivery rate,
//! [`PathView::delivery_rate`](crate::PathView::delivery_rate); 0 without a sample), RTT is srtt, and
//! `GP_max`, `RTT_max` are the maxima over the eligible paths (window full or not, so the normalisation does
//! not jump as windows fill). Ties go to the lowest path ID; backup paths only when no available path is alive.
//!
//! β defaults to the paper's **0.001** (the code's 10 applies to unnormalised kernel units). With it the
//! goodput term dominates and RTT breaks near-ties: 1 MB/s at 20 ms against 5 MB/s at 200 ms gives
//! γ = 0.2 + 0.001·10 = 0.21 against 1 + 0.001 = 1.001, so the faster-delivering, slower path is preferred
//! while it has room. Raise `beta` (e.g. `llhd:beta=1`) to weigh latency more. A connection feeds the
//! delivery rate of its paths' estimators; before any path has a rate sample the first term is 0 for every
//! path and LLHD acts as minRTT.
//!
//! **Decision reuse** ([`crate::Scheduler::reuses_decisions`]): offered. Its answer maximises γ over the sendable
//! paths, with γ built from delivery rates and smoothed RTTs (which change only with acknowledgements) and maxima
//! over the eligible paths (which change only with liveness and may-send, unchanged while the chosen path can
//! still send). No state.

use std::time::Instant;

use crate::params::Params;
use crate::{ConnView, Decision, SchedError, Scheduler};

/// LLHD scheduler (stateless apart from β).
#[derive(Debug, Clone)]
pub struct Llhd {
    beta: f64,
}

impl Llhd {
    /// Parameter names.
    pub const PARAMS: &'static [&'static str] = &["beta"];

    /// LLHD with latency weight `beta`.
    pub fn new(beta: f64) -> Self {
        Llhd { beta }
    }

    /// Builds it from registry parameters: `beta` in [0, 1000] (default 0.001).
    pub fn from_params(mut p: Params) -> Result<Self, SchedError> {
        let beta = p.f64("beta", 0.001, 0.0, 1000.0)?;
        p.finish(Self::PARAMS)?;
        Ok(Self::new(beta))
    }
}

impl Default for Llhd {
    fn default() -> Self {
        Self::new(0.001)
    }
}

impl Scheduler for Llhd {
    fn name(&self) -> &'static str {
        "llhd"
    }

    /// Yes: see the module documentation.
    fn reuses_decisions(&self) -> bool {
        true
    }

    fn select_send(&mut self, conn: &ConnView<'_>, _now: Instant) -> Decision {
        let Some(e) = conn.eligible() else {
            return Decision::Blocked;
        };
        let gp_max = e.paths().filter_map(|p| p.delivery_rate).max().unwrap_or(0) as f64;
        let rtt_max = e
            .paths()
            .map(|p| p.srtt.as_secs_f64())
            .fold(0.0f64, f64::max)
            .max(1e-6);
        let gamma = |p: &crate::PathView| {
            let gp = if gp_max > 0.0 {
                p.delivery_rate.unwrap_or(0) as f64 / gp_max
            } else {
                0.0
            };
            gp + self.beta * rtt_max / p.srtt.as_secs_f64().max(1e-6)
        };
        let best = e
            .sendable()
            .max_by(|a, b| gamma(a).total_cmp(&gamma(b)).then(b.id.cmp(&a.id)));
        match best {
            Some(p) => Decision::Path(p.id),
            None => Decision::Blocked,
        }
    }
}
