//! `daps`: Delay-Aware Packet Scheduling (N. Kuhn, E. Lochin, A. Mifdaoui, G. Sarwar, O. Mehani, R. Boreli,
//! "DAPS: Intelligent Delay-Aware Packet Scheduling For Multipath Transport", IEEE ICC 2014; implemented after a
//! public DAPS kernel module).
//!
//! **Plan.** For every eligible path `i`: one-way delay `d_i = srtt_i / 2` rounded to a multiple of `step`
//! (default 4 ms, at least one step) so the plan stays short, and a smoothed window
//! `c_i ← 7/8·c_i + 1/8·cwnd_i/MSS_i` in packets (at least 1). The hyperperiod is `H = lcm(d_i)` (in steps,
//! capped at `max_ticks`). At each tick `t` in `[0, H)`, every path with `t mod d_i = 0` sends `c_i`
//! packets, which arrive at `t + d_i`. Sorting these batches by arrival time (ties: path ID) gives the plan:
//! the order in which consecutive packets must be assigned to paths so that they **arrive in order**.
//!
//! **Per-packet decision.** The scheduler walks the plan: the next packet goes to the path of the current
//! batch; after `c_i` packets the walk moves to the next batch. When that path cannot send yet the
//! decision is [`Decision::Wait`] (sending the packet elsewhere would break the in-order arrival the plan
//! was built for). Batches whose path is no longer eligible are skipped. When the walk reaches the end of the
//! plan, or on any path event, the plan is rebuilt from the current view.
//!
//! **Decision reuse** ([`crate::Scheduler::reuses_decisions`]): not offered. It walks a plan: every decision
//! advances its position, so the next answer depends on the last one.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::params::Params;
use crate::{ConnView, Decision, Eligible, PathEvent, PathId, SchedError, Scheduler};

/// Delay-aware planning scheduler.
#[derive(Debug, Clone)]
pub struct Daps {
    step: Duration,
    max_ticks: u64,
    smoothed_cwnd: BTreeMap<PathId, f64>,
    plan: Vec<(PathId, u64)>,
    pos: usize,
    used: u64,
    /// Scratch space of `rebuild` (kept so that a rebuild allocates nothing once it has grown):
    /// `(path, delay in steps, packets)` per path, and the batches `(arrival tick, path, packets)`.
    rows: Vec<(PathId, u64, u64)>,
    batches: Vec<(u64, PathId, u64)>,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

impl Daps {
    /// Parameter names.
    pub const PARAMS: &'static [&'static str] = &["step_ms", "max_ticks"];

    /// DAPS with delay quantum `step` and hyperperiod cap `max_ticks` (in steps).
    pub fn new(step: Duration, max_ticks: u64) -> Self {
        Daps {
            step: step.max(Duration::from_micros(1)),
            max_ticks: max_ticks.max(1),
            smoothed_cwnd: BTreeMap::new(),
            plan: Vec::new(),
            pos: 0,
            used: 0,
            rows: Vec::new(),
            batches: Vec::new(),
        }
    }

    /// Builds it from registry parameters: `step_ms` in [1, 1000] (default 4), `max_ticks` in [1, 10 000]
    /// (default 1000).
    pub fn from_params(mut p: Params) -> Result<Self, SchedError> {
        let step = p.u64("step_ms", 4, 1, 1000)?;
        let max_ticks = p.u64("max_ticks", 1000, 1, 10_000)?;
        p.finish(Self::PARAMS)?;
        Ok(Self::new(Duration::from_millis(step), max_ticks))
    }

    /// The current plan: `(path, packets)` batches in arrival order.
    pub fn plan(&self) -> &[(PathId, u64)] {
        &self.plan
    }

    fn rebuild(&mut self, e: &Eligible<'_, '_>) {
        let step = self.step.as_nanos().max(1);
        let mut rows = std::mem::take(&mut self.rows);
        rows.clear();
        for p in e.paths() {
            let half = (p.srtt / 2).as_nanos();
            let delay = u64::try_from((half + step / 2) / step).unwrap_or(u64::MAX).max(1);
            let target = p.cwnd as f64 / p.mss.max(1) as f64;
            let c = self.smoothed_cwnd.entry(p.id).or_insert(target);
            *c = 0.875 * *c + 0.125 * target;
            rows.push((p.id, delay, (c.round() as u64).max(1)));
        }
        let mut h: u64 = 1;
        for (_, d, _) in &rows {
            h = (h / gcd(h, *d)).saturating_mul(*d);
            if h >= self.max_ticks {
                h = self.max_ticks;
                break;
            }
        }
        let mut batches = std::mem::take(&mut self.batches);
        batches.clear();
        for (id, d, c) in &rows {
            let mut t = 0;
            while t < h {
                batches.push((t.saturating_add(*d), *id, *c));
                t = t.saturating_add(*d);
            }
        }
        batches.sort_unstable();
        self.plan.clear();
        self.plan.extend(batches.iter().map(|&(_, id, c)| (id, c)));
        self.rows = rows;
        self.batches = batches;
        self.pos = 0;
        self.used = 0;
    }
}

impl Default for Daps {
    fn default() -> Self {
        Self::new(Duration::from_millis(4), 1000)
    }
}

impl Scheduler for Daps {
    fn name(&self) -> &'static str {
        "daps"
    }

    fn select_send(&mut self, conn: &ConnView<'_>, _now: Instant) -> Decision {
        let Some(e) = conn.eligible() else {
            return Decision::Blocked;
        };
        let mut rebuilt = false;
        loop {
            let Some(&(id, count)) = self.plan.get(self.pos) else {
                if rebuilt {
                    return e.idle();
                }
                self.rebuild(&e);
                rebuilt = true;
                continue;
            };
            match e.paths().find(|p| p.id == id) {
                None => {
                    // Path no longer eligible: skip its batch.
                    self.pos += 1;
                    self.used = 0;
                }
                Some(p) if p.can_send(conn.packet_size) => {
                    self.used += 1;
                    if self.used >= count {
                        self.pos += 1;
                        self.used = 0;
                    }
                    return Decision::Path(id);
                }
                Some(_) => return e.idle(),
            }
        }
    }

    fn on_path_event(&mut self, event: &PathEvent) {
        if let PathEvent::Removed(id) = event {
            self.smoothed_cwnd.remove(id);
        }
        self.plan.clear();
        self.pos = 0;
        self.used = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PathView;

    #[test]
    #[allow(clippy::disallowed_methods)] // test set-up: any instant will do
    fn plan_orders_batches_by_arrival() {
        let now = Instant::now();
        // One-way delays 4 ms (1 step) and 8 ms (2 steps): H = 2 steps. Path 0 sends at t=0 (arrives 1) and
        // t=1 (arrives 2); path 1 sends at t=0 (arrives 2). Windows: 2 and 3 packets.
        let paths = [
            PathView::new(0, 2400, Duration::from_millis(8)),
            PathView::new(1, 3600, Duration::from_millis(16)),
        ];
        let mut d = Daps::default();
        let c = ConnView::new(&paths, 1200);
        assert_eq!(d.select_send(&c, now), Decision::Path(PathId(0)));
        assert_eq!(d.plan(), &[(PathId(0), 2), (PathId(0), 2), (PathId(1), 3)]);
    }
}
