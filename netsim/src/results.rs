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
//!   the goodputs of the paths that cross it, with the packets the link direction dropped (queue full,
//!   random loss) over the run;
//! - the sender's congestion events (losses and ECN-CE marks that began a recovery period, RFC 9002
//!   §7.3.2), per flow; for a tunnel flow, its encapsulation and reorder-buffer counters and its inner
//!   flows' RTTs ([`TunnelResult`]);
//! - aggregate benefit of every multipath flow, and its MP/SP ratio against the mean goodput of the
//!   single-path flows that share a bottleneck with it (none: `None`);
//! - for flows that report them (a `receiver` section or a workload other than bulk): the receiving end's
//!   head-of-line delay and buffer peaks ([`ReceiverResult`]), the flow completion times of a request
//!   workload ([`ObjectsResult`]) and the chunk times and stalls of a video ([`VideoResult`]). These keys are
//!   absent from the JSON of other flows.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::engine::tunnel::TunnelStats;
use crate::engine::tunnel_reorder::ReorderStats;
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

/// The receiving end's reassembly statistics at the end of a run (the library's `ReassemblyStats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverTotals {
    /// Bytes waiting above a gap now.
    pub out_of_order_bytes: u64,
    /// Peak of `out_of_order_bytes`: the reassembly buffer's peak.
    pub max_out_of_order_bytes: u64,
    /// Bytes received and not read now.
    pub unread_bytes: u64,
    /// Peak of `unread_bytes`.
    pub max_unread_bytes: u64,
    /// New stream bytes received.
    pub bytes: u64,
    /// Of those, bytes that arrived above a gap.
    pub out_of_order: u64,
    /// Byte-weighted mean head-of-line delay.
    pub hol_delay_mean: Duration,
    /// 95th percentile of the head-of-line delay.
    pub hol_delay_p95: Duration,
    /// Largest head-of-line delay.
    pub hol_delay_max: Duration,
}

/// What the engine measured on a video flow.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VideoTotals {
    /// Bytes of one chunk.
    pub chunk_bytes: u64,
    /// Download time of each chunk (request to last byte read), in order.
    pub chunk_times: Vec<Duration>,
    /// The playback model's result ([`metrics::app::playback`]).
    pub playback: metrics::app::Playback,
}

/// One inner flow of a tunnel at the end of the run.
#[derive(Clone, Debug, PartialEq)]
pub struct InnerTotals {
    /// The inner flow's name.
    pub name: String,
    /// Its sender's path (`None`: the inner connection never started).
    pub path: Option<mpquic::proto::connection::PathStats>,
}

/// What the engine measured on one flow.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowTotals {
    /// How long the flow was active (start to stop or completion).
    pub active: Duration,
    /// Per path, in scenario order.
    pub paths: Vec<PathTotals>,
    /// Congestion events of the sender over all paths (for a tunnel flow, of its inner senders).
    pub congestion_events: u64,
    /// A tunnel flow's counters (`None`: not a tunnel flow).
    pub tunnel: Option<TunnelStats>,
    /// A tunnel flow's inner flows at the end of the run (empty for other flows).
    pub tunnel_inner: Vec<InnerTotals>,
    /// The receiving end's statistics, for flows that report them.
    pub receiver: Option<ReceiverTotals>,
    /// The completion time of each object of a request workload, in order (`None`: not such a flow).
    pub objects: Option<Vec<Duration>>,
    /// A video flow's chunks and playback.
    pub video: Option<VideoTotals>,
}

/// Results of one path.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

/// The receiving end of a flow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReceiverResult {
    /// Mean head-of-line delay (byte-weighted), ms: how long received bytes waited above a gap.
    pub hol_delay_mean_ms: f64,
    /// 95th percentile of the head-of-line delay, ms.
    pub hol_delay_p95_ms: f64,
    /// Largest head-of-line delay, ms.
    pub hol_delay_max_ms: f64,
    /// Peak of the reassembly buffer (bytes waiting above a gap).
    pub reassembly_peak_bytes: u64,
    /// Peak of the bytes received and not yet read.
    pub unread_peak_bytes: u64,
    /// Fraction of the received bytes that arrived above a gap (`None` when nothing was received).
    pub out_of_order_fraction: Option<f64>,
}

/// Flow completion times of a request workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObjectsResult {
    /// Objects completed.
    pub count: usize,
    /// Mean FCT, ms (`None` without objects; likewise below).
    pub fct_mean_ms: Option<f64>,
    /// Median FCT (nearest rank), ms.
    pub fct_p50_ms: Option<f64>,
    /// 95th percentile FCT, ms.
    pub fct_p95_ms: Option<f64>,
    /// 99th percentile FCT, ms.
    pub fct_p99_ms: Option<f64>,
    /// Largest FCT, ms.
    pub fct_max_ms: Option<f64>,
}

/// Chunks and playback of a video flow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VideoResult {
    /// Chunks downloaded in full.
    pub chunks: usize,
    /// Bytes of one chunk.
    pub chunk_bytes: u64,
    /// Mean chunk download time, ms (`None` without chunks; likewise below).
    pub chunk_time_mean_ms: Option<f64>,
    /// 95th percentile chunk download time, ms.
    pub chunk_time_p95_ms: Option<f64>,
    /// Largest chunk download time, ms.
    pub chunk_time_max_ms: Option<f64>,
    /// Time to the first chunk (playback start), ms.
    pub startup_ms: Option<f64>,
    /// Total stall time after playback started, s.
    pub stall_s: f64,
    /// Number of stalls.
    pub stalls: u32,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

impl ReceiverResult {
    /// The result of `t`.
    #[allow(clippy::cast_precision_loss)]
    pub fn from_totals(t: &ReceiverTotals) -> ReceiverResult {
        ReceiverResult {
            hol_delay_mean_ms: ms(t.hol_delay_mean),
            hol_delay_p95_ms: ms(t.hol_delay_p95),
            hol_delay_max_ms: ms(t.hol_delay_max),
            reassembly_peak_bytes: t.max_out_of_order_bytes,
            unread_peak_bytes: t.max_unread_bytes,
            out_of_order_fraction: (t.bytes > 0).then(|| t.out_of_order as f64 / t.bytes as f64),
        }
    }
}

impl ObjectsResult {
    /// The statistics of the completion times `fct`.
    pub fn from_times(fct: &[Duration]) -> ObjectsResult {
        let st = metrics::app::TimeStats::of(fct);
        ObjectsResult {
            count: fct.len(),
            fct_mean_ms: st.map(|s| s.mean_ms),
            fct_p50_ms: st.map(|s| s.p50_ms),
            fct_p95_ms: st.map(|s| s.p95_ms),
            fct_p99_ms: st.map(|s| s.p99_ms),
            fct_max_ms: st.map(|s| s.max_ms),
        }
    }
}

impl VideoResult {
    /// The result of `t`.
    pub fn from_totals(t: &VideoTotals) -> VideoResult {
        let st = metrics::app::TimeStats::of(&t.chunk_times);
        VideoResult {
            chunks: t.chunk_times.len(),
            chunk_bytes: t.chunk_bytes,
            chunk_time_mean_ms: st.map(|s| s.mean_ms),
            chunk_time_p95_ms: st.map(|s| s.p95_ms),
            chunk_time_max_ms: st.map(|s| s.max_ms),
            startup_ms: t.playback.startup.map(ms),
            stall_s: t.playback.stall.as_secs_f64(),
            stalls: t.playback.stalls,
        }
    }
}

/// Results of one flow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// The sender's congestion events over all paths: losses and ECN-CE marks that began a recovery period
    /// (RFC 9002 §7.3.2; a burst lost within one round trip is one event), counted by the connection the
    /// same way for every controller. For a tunnel flow, as `retransmissions`, the inner flows' senders'.
    /// (Absent from results written before the counter existed: read as 0.)
    #[serde(default)]
    pub congestion_events: u64,
    /// Aggregate benefit (multipath flows only).
    pub aggregate_benefit: Option<f64>,
    /// MP/SP ratio (multipath flows sharing a bottleneck with single-path flows only).
    pub mp_sp_ratio: Option<f64>,
    /// Per path.
    pub paths: Vec<PathResult>,
    /// The receiving end (flows with a `receiver` section or a workload other than bulk).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver: Option<ReceiverResult>,
    /// Flow completion times (request workloads).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objects: Option<ObjectsResult>,
    /// Chunks and stalls (video workloads).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub video: Option<VideoResult>,
    /// Encapsulation and reordering (tunnel flows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tunnel: Option<TunnelResult>,
}

/// One direction of a tunnel flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TunnelDirectionResult {
    /// Inner datagrams encapsulated in this direction.
    pub encapsulated: u64,
    /// The far end's reorder buffer: packets released in order, held, late (numbered below the next
    /// expected one: a packet whose number was given up arrives late and is released at once); sequence
    /// numbers given up because the hold ended (`skipped_timeout`) or the window overflowed
    /// (`skipped_overflow`); the most packets held at once.
    #[serde(flatten)]
    pub reorder: ReorderStats,
}

/// One inner flow of a tunnel, its sender's path at the end of the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InnerFlowResult {
    /// The inner flow's name.
    pub name: String,
    /// The sender's `min_rtt` (RFC 9002 §5.2: the smallest RTT sample, reset to the latest sample after
    /// persistent congestion) in ms; `None` if the inner connection never started.
    pub min_rtt_ms: Option<f64>,
    /// The sender's smoothed RTT in ms; `None` as above.
    pub srtt_ms: Option<f64>,
    /// The controller's state (`"probe_bw"`, `"congestion_avoidance"`, …), if it reports one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cc_state: Option<String>,
    /// The controller's own variables by name, in its units (bytes, bytes/s, seconds or plain numbers;
    /// BBR's `rt_prop` is its minimum-RTT estimate in seconds), with `cwnd` in bytes. A variable without a
    /// finite value is left out (JSON has no NaN or infinity, and `merge` reads these files back).
    #[serde(default)]
    pub cc: BTreeMap<String, f64>,
}

/// What a tunnel flow's encapsulation and reorder buffers did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TunnelResult {
    /// Inner datagrams the outer connection refused (it could not send DATAGRAMs yet).
    pub refused: u64,
    /// Received DATAGRAMs too short or naming no inner flow.
    pub malformed: u64,
    /// Towards the server (the client's inner packets).
    pub to_server: TunnelDirectionResult,
    /// Towards the client.
    pub to_client: TunnelDirectionResult,
    /// The inner flows, in scenario order (absent from results written before it existed: read as empty).
    #[serde(default)]
    pub inner: Vec<InnerFlowResult>,
}

impl TunnelResult {
    fn from_stats(s: &TunnelStats, inner: &[InnerTotals]) -> Self {
        let [to_server, to_client] = s.encapsulated;
        let [at_server, at_client] = s.reorder;
        TunnelResult {
            refused: s.refused,
            malformed: s.malformed,
            to_server: TunnelDirectionResult {
                encapsulated: to_server,
                reorder: at_server,
            },
            to_client: TunnelDirectionResult {
                encapsulated: to_client,
                reorder: at_client,
            },
            inner: inner.iter().map(InnerFlowResult::from_totals).collect(),
        }
    }
}

impl InnerFlowResult {
    fn from_totals(i: &InnerTotals) -> Self {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let cc = i.path.as_ref().and_then(|p| p.cc.as_ref());
        // The controller's variables: `cwnd` first, then its own, those with a finite value only.
        #[allow(clippy::cast_precision_loss)] // a window below 2^53 bytes is exact
        let variables = cc.map(|m| {
            let extras = m
                .extras
                .iter()
                .filter(|x| x.value.is_finite())
                .map(|x| (x.name.to_owned(), x.value));
            std::iter::once(("cwnd".to_owned(), m.cwnd as f64))
                .chain(extras)
                .collect()
        });
        InnerFlowResult {
            name: i.name.clone(),
            min_rtt_ms: i.path.as_ref().map(|p| ms(p.min_rtt)),
            srtt_ms: i.path.as_ref().map(|p| ms(p.srtt)),
            cc_state: cc.map(|m| m.state.to_owned()),
            cc: variables.unwrap_or_default(),
        }
    }
}

/// Fairness on one bottleneck.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BottleneckResult {
    /// The link.
    pub link: String,
    /// The direction crossed.
    pub direction: Direction,
    /// The paths crossing it, as `flow/pathK`.
    pub paths: Vec<String>,
    /// Jain's index across their goodputs.
    pub jain: Option<f64>,
    /// Packets this link direction dropped because its queue was full (all flows' packets; read as 0 from
    /// results written before the counter existed, as the next).
    #[serde(default)]
    pub dropped_queue_full: u64,
    /// Packets this link direction dropped by its random loss model.
    #[serde(default)]
    pub dropped_loss: u64,
}

/// Results of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
                congestion_events: t.congestion_events,
                aggregate_benefit: if spec.is_multipath() {
                    goodput.and_then(|g| metrics::aggregate_benefit(g, &caps))
                } else {
                    None
                },
                mp_sp_ratio: None,
                paths,
                receiver: t.receiver.as_ref().map(ReceiverResult::from_totals),
                objects: t.objects.as_deref().map(ObjectsResult::from_times),
                video: t.video.as_ref().map(VideoResult::from_totals),
                tunnel: t
                    .tunnel
                    .as_ref()
                    .map(|s| TunnelResult::from_stats(s, &t.tunnel_inner)),
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
                // Filled in by the engine from the link's counters (`Engine::finish`).
                dropped_queue_full: 0,
                dropped_loss: 0,
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use mpquic::cc::{CcMetrics, Metric, PathId};
    use mpquic::proto::connection::PathStats;

    use super::*;

    /// An inner flow's controller variables keep the finite ones only, so the JSON reads back.
    #[test]
    fn inner_flow_variables_without_a_finite_value_are_left_out() {
        let path = PathStats {
            path: PathId(0),
            remote: "10.0.0.2:443".parse().unwrap(),
            local: None,
            validated: true,
            backup: false,
            mtu: 1200,
            cwnd: 24_000,
            bytes_in_flight: 0,
            pacing_rate: None,
            srtt: Duration::from_millis(30),
            rttvar: Duration::ZERO,
            min_rtt: Duration::from_millis(20),
            latest_rtt: Duration::from_millis(30),
            bytes_sent: 0,
            bytes_received: 0,
            stream_bytes_sent: 0,
            stream_bytes_received: 0,
            stream_bytes_acked: 0,
            packets_sent: 0,
            packets_received: 0,
            packets_lost: 0,
            bytes_lost: 0,
            congestion_events: 0,
            abandoned: false,
            cc: Some(CcMetrics {
                cwnd: 24_000,
                ssthresh: None,
                pacing_rate: None,
                state: "probe_bw",
                extras: vec![
                    Metric {
                        name: "rt_prop",
                        value: 0.02,
                    },
                    Metric {
                        name: "owd_min",
                        value: f64::INFINITY,
                    },
                    Metric {
                        name: "beta",
                        value: f64::NAN,
                    },
                ],
            }),
        };
        let inner = [InnerTotals {
            name: "tcp".to_owned(),
            path: Some(path),
        }];
        let r = TunnelResult::from_stats(&TunnelStats::default(), &inner);
        let i = &r.inner[0];
        assert_eq!((i.min_rtt_ms, i.srtt_ms), (Some(20.0), Some(30.0)));
        assert_eq!(i.cc_state.as_deref(), Some("probe_bw"));
        let names: Vec<_> = i.cc.keys().map(String::as_str).collect();
        assert_eq!(names, ["cwnd", "rt_prop"]);
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<TunnelResult>(&json).unwrap(), r);
    }
}
