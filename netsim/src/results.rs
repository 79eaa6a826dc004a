//! The result of one run: per flow and per path totals turned into the studies' metrics.
//!
//! The engine reports, per path, the application bytes delivered and the packets retransmitted
//! ([`PathTotals`]), per flow the time it was active ([`FlowTotals`]), and hands over the recorder's series.
//! [`RunResult::build`] computes:
//! - goodput per path and per flow over the flow's active time, utilisation against the path's capacity
//!   (the smallest link rate on its forward route, [`crate::scenario::ResolvedPath::capacity_bps`]);
//! - mean and p95 (nearest rank) RTT per path, over the smoothed-RTT samples of the recorder;
//! - Jain's index across flows (a multipath connection counts as one flow) and per **bottleneck**: a link
//!   direction crossed by at least two paths and that is the slowest link of at least one of them, across
//!   the goodputs of the paths that cross it;
//! - aggregate benefit of every multipath flow, and its MP/SP ratio against the mean goodput of the
//!   single-path flows that share a bottleneck with it (none: `None`).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use crate::metrics::{self, PathSeries};
use crate::scenario::{Direction, Scenario, Topology};

/// What the engine measured on one path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathTotals {
    /// Application bytes delivered over the path.
    pub delivered_bytes: u64,
    /// Packets retransmitted (declared lost and sent again) on the path.
    pub retransmissions: u64,
    /// Times the client abandoned the path for lack of progress (the simulator's dead-path policy,
    /// `engine::paths`).
    pub abandoned: u32,
}

/// What the engine measured on one flow.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowTotals {
    /// How long the flow was active (start to stop or completion).
    pub active: Duration,
    /// Per path, in scenario order.
    pub paths: Vec<PathTotals>,
}

/// Results of one path.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PathResult {
    /// Index within the flow.
    pub path: usize,
    /// `local -> remote` interfaces.
    pub endpoints: String,
    /// Forward route (`link>` forward, `link<` reverse direction).
    pub route: Vec<String>,
    /// Capacity `B_x` in bits per second.
    pub capacity_bps: u64,
    /// Application bytes delivered.
    pub delivered_bytes: u64,
    /// Goodput in bits per second.
    pub goodput_bps: Option<f64>,
    /// Goodput over capacity.
    pub utilisation: Option<f64>,
    /// Packets retransmitted.
    pub retransmissions: u64,
    /// Times the client abandoned the path for lack of progress (re-opened when its links came back).
    pub abandoned: u32,
    /// Mean smoothed RTT in milliseconds.
    pub rtt_mean_ms: Option<f64>,
    /// 95th percentile (nearest rank) of the smoothed RTT in milliseconds.
    pub rtt_p95_ms: Option<f64>,
}

/// Results of one flow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowResult {
    /// Name.
    pub name: String,
    /// Controller specification.
    pub cc: String,
    /// Scheduler specification.
    pub sched: String,
    /// Active time in seconds.
    pub active_s: f64,
    /// Application bytes delivered over all paths.
    pub delivered_bytes: u64,
    /// Goodput in bits per second.
    pub goodput_bps: Option<f64>,
    /// Packets retransmitted over all paths.
    pub retransmissions: u64,
    /// Aggregate benefit (multipath flows only).
    pub aggregate_benefit: Option<f64>,
    /// MP/SP ratio (multipath flows sharing a bottleneck with single-path flows only).
    pub mp_sp_ratio: Option<f64>,
    /// Per path.
    pub paths: Vec<PathResult>,
}

/// Fairness on one bottleneck.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BottleneckResult {
    /// The link.
    pub link: String,
    /// The direction crossed.
    pub direction: Direction,
    /// The paths crossing it, as `flow/pathK`.
    pub paths: Vec<String>,
    /// Jain's index across their goodputs.
    pub jain: Option<f64>,
}

/// Results of one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunResult {
    /// Scenario name.
    pub scenario: String,
    /// Seed.
    pub seed: u64,
    /// Simulated duration in seconds.
    pub duration_s: f64,
    /// Per flow, in scenario order.
    pub flows: Vec<FlowResult>,
    /// Jain's index across flows (connection level).
    pub jain_flows: Option<f64>,
    /// Per bottleneck.
    pub bottlenecks: Vec<BottleneckResult>,
}

impl RunResult {
    /// Computes the results (see the module documentation). Missing totals count as zero.
    pub fn build(
        scenario: &Scenario,
        topology: &Topology,
        totals: &[FlowTotals],
        series: &[PathSeries],
    ) -> RunResult {
        let empty = FlowTotals::default();
        let mut flows = Vec::with_capacity(scenario.flows.len());
        for (f, (spec, resolved)) in scenario.flows.iter().zip(&topology.flows).enumerate() {
            let t = totals.get(f).unwrap_or(&empty);
            let mut paths = Vec::with_capacity(resolved.paths.len());
            for (p, path) in resolved.paths.iter().enumerate() {
                let pt = t.paths.get(p).cloned().unwrap_or_default();
                let goodput = metrics::goodput_bps(pt.delivered_bytes, t.active);
                let rtts: Vec<f64> = series
                    .iter()
                    .find(|s| s.flow_index == f && s.path == p)
                    .map(|s| s.srtt_secs().into_iter().map(|x| x * 1e3).collect())
                    .unwrap_or_default();
                paths.push(PathResult {
                    path: p,
                    endpoints: format!("{} -> {}", path.local, path.remote),
                    route: path.forward.iter().map(ToString::to_string).collect(),
                    capacity_bps: path.capacity_bps,
                    delivered_bytes: pt.delivered_bytes,
                    goodput_bps: goodput,
                    utilisation: goodput.and_then(|g| metrics::utilisation(g, path.capacity_bps)),
                    retransmissions: pt.retransmissions,
                    abandoned: pt.abandoned,
                    rtt_mean_ms: metrics::mean(&rtts),
                    rtt_p95_ms: metrics::p95(&rtts),
                });
            }
            let delivered: u64 = paths
                .iter()
                .map(|p| p.delivered_bytes)
                .fold(0, u64::saturating_add);
            let goodput = metrics::goodput_bps(delivered, t.active);
            let caps: Vec<u64> = paths.iter().map(|p| p.capacity_bps).collect();
            flows.push(FlowResult {
                name: spec.name.clone(),
                cc: spec.cc.clone(),
                sched: spec.sched.clone(),
                active_s: t.active.as_secs_f64(),
                delivered_bytes: delivered,
                goodput_bps: goodput,
                retransmissions: paths
                    .iter()
                    .map(|p| p.retransmissions)
                    .fold(0, u64::saturating_add),
                aggregate_benefit: if spec.is_multipath() {
                    goodput.and_then(|g| metrics::aggregate_benefit(g, &caps))
                } else {
                    None
                },
                mp_sp_ratio: None,
                paths,
            });
        }

        // Bottlenecks: link directions crossed by ≥ 2 paths, the slowest link of at least one of them.
        let mut crossings: BTreeMap<(String, Direction), Vec<(usize, usize)>> = BTreeMap::new();
        let mut slowest: BTreeMap<(String, Direction), bool> = BTreeMap::new();
        for (f, resolved) in topology.flows.iter().enumerate() {
            for (p, path) in resolved.paths.iter().enumerate() {
                for hop in &path.forward {
                    let key = (hop.link.clone(), hop.direction);
                    crossings.entry(key.clone()).or_default().push((f, p));
                    let rate = scenario
                        .links
                        .get(&hop.link)
                        .map(|l| l.direction(hop.direction).rate_bps);
                    if rate == Some(path.capacity_bps) {
                        slowest.insert(key, true);
                    }
                }
            }
        }
        let goodput_of = |f: usize, p: usize| {
            flows
                .get(f)
                .and_then(|fl| fl.paths.get(p))
                .and_then(|pr| pr.goodput_bps)
                .unwrap_or(0.0)
        };
        let mut bottlenecks = Vec::new();
        for (key, users) in &crossings {
            if users.len() < 2 || !slowest.get(key).copied().unwrap_or(false) {
                continue;
            }
            let shares: Vec<f64> = users.iter().map(|&(f, p)| goodput_of(f, p)).collect();
            bottlenecks.push(BottleneckResult {
                link: key.0.clone(),
                direction: key.1,
                paths: users
                    .iter()
                    .map(|&(f, p)| {
                        let name = flows.get(f).map(|x| x.name.as_str()).unwrap_or_default();
                        format!("{name}/path{p}")
                    })
                    .collect(),
                jain: metrics::jain_index(&shares),
            });
        }

        // MP/SP: single-path flows sharing a bottleneck with each multipath flow.
        for (f, spec) in scenario.flows.iter().enumerate() {
            if !spec.is_multipath() {
                continue;
            }
            let mut competitors: Vec<usize> = Vec::new();
            for (key, users) in &crossings {
                if users.len() < 2 || !slowest.get(key).copied().unwrap_or(false) {
                    continue;
                }
                if !users.iter().any(|&(uf, _)| uf == f) {
                    continue;
                }
                for &(uf, _) in users {
                    let single = scenario.flows.get(uf).is_some_and(|s| !s.is_multipath());
                    if uf != f && single && !competitors.contains(&uf) {
                        competitors.push(uf);
                    }
                }
            }
            let sp: Vec<f64> = competitors
                .iter()
                .filter_map(|&c| flows.get(c).and_then(|x| x.goodput_bps))
                .collect();
            let ratio = match (flows.get(f).and_then(|x| x.goodput_bps), metrics::mean(&sp)) {
                (Some(mp), Some(sp)) => metrics::mp_sp_ratio(mp, sp),
                _ => None,
            };
            if let Some(flow) = flows.get_mut(f) {
                flow.mp_sp_ratio = ratio;
            }
        }

        let shares: Vec<f64> = flows.iter().map(|f| f.goodput_bps.unwrap_or(0.0)).collect();
        RunResult {
            scenario: scenario.scenario.name.clone(),
            seed: scenario.scenario.seed,
            duration_s: scenario.scenario.duration.as_secs_f64(),
            jain_flows: metrics::jain_index(&shares),
            flows,
            bottlenecks,
        }
    }
}
