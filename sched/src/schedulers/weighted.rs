//! `weighted`: static per-path weights, the per-packet distributor of an MPT-GRE style tunnel.
//!
//! Rule: packets are spread over the eligible paths that can send in proportion to their weights, with
//! smooth weighted round-robin (each decision every candidate's credit grows by its weight, the largest
//! credit wins and pays back the candidates' total weight; ties go to the lowest path ID). While every path
//! can send, any window of `Σw` consecutive decisions matches the weights exactly; a path that cannot send is
//! skipped without accumulating credit, so it does not burst when it comes back.
//!
//! Specification: `weighted:1=3,2=1` (path ID = weight). Paths without a weight get `default` (1 unless set,
//! e.g. `weighted:0=5,default=2`). A weight of 0 excludes the path: if only zero-weight paths could send the
//! decision is [`Decision::Wait`]. The backup rule of Linux MPTCP's `mptcp_is_available` applies before weights.
//!
//! **Decision reuse** ([`crate::Scheduler::reuses_decisions`]): not offered. Every decision moves credit between
//! the paths (smooth weighted round-robin): the answer rotates by design.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::params::Params;
use crate::{ConnView, Decision, PathEvent, PathId, SchedError, Scheduler};

/// Largest accepted weight.
pub const MAX_WEIGHT: u64 = 1_000_000;

/// Static weighted round-robin scheduler.
///
/// Weights and credits are vectors sorted by path ID (a tunnel asks once per packet, over a handful of
/// paths: a binary search in one cache line, where a B-tree map cost a node walk per lookup).
#[derive(Debug, Clone)]
pub struct Weighted {
    weights: Vec<(PathId, u64)>,
    default_weight: u64,
    credit: Vec<(PathId, i64)>,
}

impl Weighted {
    /// Named parameters (plus one numeric key per path ID).
    pub const PARAMS: &'static [&'static str] = &["<path id>", "default"];

    /// Weights per path; unlisted paths weigh `default_weight`. Weights above [`MAX_WEIGHT`] are clamped.
    pub fn new(weights: &[(PathId, u64)], default_weight: u64) -> Self {
        // Sorted by path ID, a later entry for the same path replacing an earlier one.
        let sorted: BTreeMap<PathId, u64> = weights.iter().map(|&(p, w)| (p, w.min(MAX_WEIGHT))).collect();
        Weighted {
            weights: sorted.into_iter().collect(),
            default_weight: default_weight.min(MAX_WEIGHT),
            credit: Vec::new(),
        }
    }

    /// Builds it from registry parameters: `<path id>=<weight>` (0..=1 000 000) and `default` (default 1).
    pub fn from_params(mut p: Params) -> Result<Self, SchedError> {
        let weights = p.per_path(0, MAX_WEIGHT)?;
        let default_weight = p.u64("default", 1, 0, MAX_WEIGHT)?;
        p.finish(Self::PARAMS)?;
        Ok(Self::new(&weights, default_weight))
    }

    /// The weight of `path`.
    pub fn weight(&self, path: PathId) -> u64 {
        match self.weights.binary_search_by_key(&path, |e| e.0) {
            Ok(i) => self.weights.get(i).map_or(self.default_weight, |e| e.1),
            Err(_) => self.default_weight,
        }
    }

    /// The credit of `path`, created at 0 (always `Some`: found, or just inserted).
    fn credit_mut(&mut self, path: PathId) -> Option<&mut i64> {
        let i = match self.credit.binary_search_by_key(&path, |e| e.0) {
            Ok(i) => i,
            Err(i) => {
                self.credit.insert(i, (path, 0));
                i
            }
        };
        self.credit.get_mut(i).map(|e| &mut e.1)
    }
}

impl Default for Weighted {
    fn default() -> Self {
        Self::new(&[], 1)
    }
}

impl Scheduler for Weighted {
    fn name(&self) -> &'static str {
        "weighted"
    }

    fn select_send(&mut self, conn: &ConnView<'_>, _now: Instant) -> Decision {
        let Some(e) = conn.eligible() else {
            return Decision::Blocked;
        };
        let mut total: i64 = 0;
        let mut best: Option<(i64, PathId)> = None;
        for p in e.sendable() {
            let w = self.weight(p.id);
            if w == 0 {
                continue;
            }
            // w ≤ MAX_WEIGHT, so the conversion is exact.
            let w = i64::try_from(w).unwrap_or(i64::MAX);
            total = total.saturating_add(w);
            let Some(c) = self.credit_mut(p.id) else {
                continue;
            };
            *c = c.saturating_add(w);
            let better = match best {
                None => true,
                Some((bc, bid)) => *c > bc || (*c == bc && p.id < bid),
            };
            if better {
                best = Some((*c, p.id));
            }
        }
        match best {
            Some((_, id)) => {
                if let Some(c) = self.credit_mut(id) {
                    *c = c.saturating_sub(total);
                }
                Decision::Path(id)
            }
            None => e.idle(),
        }
    }

    fn on_path_event(&mut self, event: &PathEvent) {
        if let PathEvent::Removed(id) | PathEvent::Abandoned(id) = event {
            if let Ok(i) = self.credit.binary_search_by_key(id, |e| e.0) {
                self.credit.remove(i);
            }
        }
    }
}
