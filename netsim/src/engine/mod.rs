//! The simulation engine: real mpquic connections over the simulated network, in virtual time.
//!
//! One run of a [`Scenario`]:
//! - the [`network`] builds a [`crate::Link`] per link direction and forwards datagrams hop by hop along
//!   their path's route;
//! - each [`flow`] is a client mpquic endpoint and connection on its `from` host and a server endpoint on its
//!   `to` host, with a bulk sender and a checking receiver (upload or download), or a request/response or
//!   video workload ([`objects`]); the receiving application may read at a limited rate ([`reader`]) and
//!   its connection's receive windows follow the flow's `receiver` settings;
//! - a path with `spoof` carries a third host's address: datagrams the server sends to it follow the path's
//!   reverse route to that host, which counts them and answers nothing ([`Engine::spoofed_traffic`], the
//!   measure of the anti-amplification attack tests);
//! - the [`queue`] holds timed events (datagram arrivals, flow start and stop, scheduled link events,
//!   samples); connection timers are not queued, since they move with every packet: each flow's earliest
//!   timer is read from its connections after every step that touched the flow, and kept until the next;
//! - [`sampling`] feeds the [`Recorder`] every `sample_interval`;
//! - the connections protect their packets with real AES-128-GCM, or with the cost-free [`null_cipher`] when
//!   the scenario sets `crypto = "null"` (same packet sizes, same results);
//! - at the end, [`RunResult::build`] turns totals and series into the studies' metrics.
//!
//! # The loop
//!
//! At each step the engine takes the earliest of the next queued event and the earliest connection timer
//! (kept in an ordered set, so a step costs no scan over the flows). At equal times timers fire first, flow
//! by flow in index order, then events in the order they were queued. After any step that
//! touched a flow, the flow's application runs and everything its connections want to send is offered to
//! the first link of the route. The run ends at the scenario's duration.
//!
//! # Determinism
//!
//! One seed defines a run: every random stream derives from it with [`derive_seed`] (link `k`: domain 1;
//! flow `f`: domain 2, whose endpoints derive their own), event ties break by insertion order, every
//! collection iterated is ordered (`Vec`, `BTreeMap`), the TLS certificate is fixed ([`tls`]), and the QUIC
//! clocks are simulated time added to one base [`std::time::Instant`] ([`clock`]). Outputs contain only
//! simulated times, so two runs with the same scenario and seed give byte-identical results.

pub mod clock;
pub mod flow;
pub mod network;
pub mod null_cipher;
pub mod objects;
pub mod paths;
pub mod pattern;
pub mod queue;
pub mod reader;
pub mod sampling;
pub mod tls;
pub mod tunnel;
pub mod tunnel_cc;
pub mod tunnel_reorder;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mpquic::proto::connection::TransportConfig;
use mpquic::proto::streams::{StreamsConfig, WindowPolicy, WindowUpdate};

use crate::link::{LinkStats, OutageEpoch};
use crate::metrics::{PathSeries, Recorder};
use crate::results::{FlowTotals, PathTotals, RunResult, VideoTotals};
use crate::scenario::receiver::{self, Policy, ReceiverSpec, Update};
use crate::scenario::{Direction, FlowKind, Scenario, Topology};
use crate::time::SimTime;

use clock::Clock;
use flow::{AppSetup, Flow, FlowSetup, Outgoing, PathSetup};
use network::{LinkIndex, Network};
use queue::EventQueue;

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The scenario could not be turned into a network and flows.
    #[error("setup: {0}")]
    Setup(String),
    /// TLS material could not be built.
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    /// A receiver got bytes that do not match what the sender wrote.
    #[error("flow {flow}: received data does not match the sent pattern at stream offset {offset}")]
    Corrupted {
        /// The flow's index.
        flow: usize,
        /// Stream offset of the bad chunk.
        offset: u64,
    },
    /// The simulation stopped advancing (a connection timer that does not clear when fired).
    #[error("no progress at {0}: a connection timer keeps firing without advancing")]
    Stuck(SimTime),
}

/// Derives an independent seed for `(domain, index)` from the run's seed (SplitMix64 finaliser over a
/// mix of the three).
pub fn derive_seed(seed: u64, domain: u64, index: u64) -> u64 {
    let mut z = seed
        ^ domain.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ index.wrapping_add(1).wrapping_mul(0xd1b5_4a32_d192_ed03);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A datagram on its way through the network.
#[derive(Debug)]
struct Packet {
    flow: usize,
    /// The flow's scenario path it travels on.
    path: usize,
    to_server: bool,
    /// Position of the link it is crossing in its route.
    hop: usize,
    link: LinkIndex,
    epoch: OutageEpoch,
    src: SocketAddr,
    dst: SocketAddr,
    data: Vec<u8>,
}

/// A queued event.
#[derive(Debug)]
enum Event {
    /// A datagram reached the far end of a link.
    Arrive(Packet),
    /// A flow starts.
    FlowStart(usize),
    /// A flow stops.
    FlowStop(usize),
    /// A path of a multipath flow is due to open.
    PathStart(usize),
    /// A path of a multipath flow is due to close.
    PathStop(usize),
    /// The periodic path check of a multipath flow ([`paths::CHECK_INTERVAL`]).
    PathCheck(usize),
    /// Scheduled link event `k` of the scenario.
    Link(usize),
    /// A sampling instant.
    Sample,
}

/// Counters about the engine itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EngineStats {
    /// Events processed (arrivals, starts, stops, link events, samples).
    pub events: u64,
    /// Connection timer firings.
    pub timeouts: u64,
    /// Datagrams sent by the connections.
    pub datagrams: u64,
    /// Datagrams whose pair of addresses matches none of their flow's paths (dropped).
    pub unroutable: u64,
}

/// A count of datagrams and their UDP payload bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Datagrams.
    pub datagrams: u64,
    /// UDP payload bytes (what RFC 9000 §8.1's anti-amplification limit counts).
    pub bytes: u64,
}

impl Traffic {
    fn add(&mut self, len: usize) {
        self.datagrams = self.datagrams.saturating_add(1);
        self.bytes = self.bytes.saturating_add(len as u64);
    }
}

/// The traffic of a spoofed address (a path with `spoof`): what the flow's server got from it and what
/// the server sent to it. The spoofed host runs no endpoint of the flow: it answers nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpoofedTraffic {
    /// Datagrams with the spoofed source address delivered to the server.
    pub from: Traffic,
    /// Datagrams the server sent to the spoofed address, counted as the server emits them.
    pub sent_to: Traffic,
    /// Datagrams addressed to the spoofed address that reached the spoofed host (and were dropped there).
    pub delivered_to: Traffic,
}

/// Everything a run produces.
#[derive(Debug)]
pub struct RunOutput {
    /// The metrics.
    pub result: RunResult,
    /// The time series, flows in scenario order, paths in flow order.
    pub series: Vec<PathSeries>,
    /// Engine counters.
    pub stats: EngineStats,
}

/// Steps without time advancing before the run is declared stuck.
const STUCK_LIMIT: u32 = 1_000_000;

/// A run in progress (see the module documentation).
#[derive(Debug)]
pub struct Engine {
    scenario: Scenario,
    topology: Topology,
    clock: Clock,
    now: SimTime,
    /// `now` as the connections' clock reads it (`clock.instant(now)`), kept beside it: every step needs it.
    now_instant: Instant,
    end: SimTime,
    queue: EventQueue<Event>,
    network: Network,
    flows: Vec<Flow>,
    /// Destination address → (flow, towards the server). Spoofed addresses are not here.
    routes: network::AddrMap<(usize, bool)>,
    /// Spoofed client addresses → (flow, scenario path, traffic).
    spoofed: BTreeMap<SocketAddr, (usize, usize, SpoofedTraffic)>,
    recorder: Recorder,
    stats: EngineStats,
    out: Vec<Outgoing>,
    /// Datagram buffers to reuse (a delivered or dropped datagram's buffer comes back here).
    pool: Vec<Vec<u8>>,
    /// Each flow's earliest connection timer, as of the last step that touched the flow (a sans-IO
    /// connection's timers change only through calls on it).
    timers: Vec<Option<Instant>>,
    /// The same timers ordered by time (then flow), so that the earliest is found without a scan: a run
    /// with a thousand flows would otherwise spend most of its time looking for it.
    timer_order: BTreeSet<(Instant, usize)>,
    /// The earliest of `timer_order` and its simulated time, as last computed by [`Engine::next_timer`]:
    /// the loop asks for it at every step, and the earliest timer changes far less often.
    next_timer_cache: Option<(Instant, SimTime)>,
    /// Scratch list of the flows whose timers are due, kept for its allocation.
    due: Vec<usize>,
}

/// Most buffers kept in the pool.
const POOL_MAX: usize = 4096;

/// The stream settings of a flow: the simulator's generous windows (16 MiB, growing to 64 MiB with the
/// library's default policy) and a 16 MiB send buffer, or the windows and policy of the flow's `receiver`
/// section (its absent fields keep the simulator's values; absent floors are the library's).
pub fn streams_config(receiver: Option<&ReceiverSpec>) -> StreamsConfig {
    const MIB: u64 = 1024 * 1024;
    let base = StreamsConfig {
        stream_window_bidi_local: receiver::DEFAULT_WINDOW,
        stream_window_bidi_remote: receiver::DEFAULT_WINDOW,
        stream_window_uni: receiver::DEFAULT_WINDOW,
        max_stream_window: receiver::DEFAULT_MAX_WINDOW,
        conn_window: receiver::DEFAULT_WINDOW,
        max_conn_window: receiver::DEFAULT_MAX_WINDOW,
        send_buffer: 16 * MIB,
        // The `auto` policy's update rule when the studies were run (see the receiver table's docs).
        window_update: WindowUpdate::Half,
        ..StreamsConfig::default()
    };
    let Some(spec) = receiver else {
        return base;
    };
    let w = spec.windows();
    StreamsConfig {
        window_policy: match w.policy {
            Policy::Fixed => WindowPolicy::Fixed,
            Policy::Auto => WindowPolicy::Auto,
            Policy::Linux => WindowPolicy::Linux,
        },
        window_update: match w.update {
            Update::Eighth => WindowUpdate::Eighth,
            Update::Half => WindowUpdate::Half,
        },
        stream_window_bidi_local: w.window,
        stream_window_bidi_remote: w.window,
        stream_window_uni: w.window,
        max_stream_window: w.max_window,
        min_stream_window: w.min_window.unwrap_or(base.min_stream_window),
        conn_window: w.conn_window,
        max_conn_window: w.max_conn_window,
        min_conn_window: w.min_conn_window.unwrap_or(base.min_conn_window),
        ..base
    }
}

/// The transport configuration of a flow: its controller and scheduler, generous flow-control windows (the
/// studies are about congestion control, so flow control must never be the limit), the scenario's idle
/// timeout (none by default: a long outage must not end a connection before the scenario does), and for a
/// flow with several paths multipath with room for twice as many path IDs (abandoned paths are re-opened
/// under new IDs; each abandoned ID lets the peer raise the limit by one). A flow's `receiver` section
/// replaces the windows and their policy ([`streams_config`]).
fn transport_config(
    spec: &crate::scenario::FlowSpec,
    paths: usize,
    idle: Duration,
    lazy_path_cids: bool,
) -> TransportConfig {
    let (cc, sched, receiver) = (&spec.cc, &spec.sched, spec.receiver.as_ref());
    TransportConfig {
        // Pinned: every path ID gets its connection IDs at the handshake unless the scenario asks for the
        // library's default (`scenario.lazy_path_cids`), so the studies' numbers stay what they were.
        unused_path_cids: if lazy_path_cids {
            mpquic::proto::cid::DEFAULT_UNUSED_PATH_CIDS
        } else {
            u64::MAX
        },
        // Pinned, not mpquic's defaults, so that results do not move with them: opportunistic retransmission
        // only when the flow asks (`reinjection = true`), PATH_ACKs on the flow's `ack_path`.
        reinjection: mpquic::proto::connection::ReinjectionConfig {
            enabled: spec.reinjection,
            ..Default::default()
        },
        ack_path: match spec.ack_path {
            crate::scenario::AckPath::SamePath => mpquic::proto::connection::AckPathPolicy::SamePath,
            crate::scenario::AckPath::LowestRtt => mpquic::proto::connection::AckPathPolicy::LowestRtt,
        },
        // Pinned: no cap on the pacer's bucket unless the flow asks (`pacer_max_burst`), as the studies ran.
        recovery: mpquic::proto::recovery::RecoveryConfig {
            pacer_max_burst_packets: spec.pacer_max_burst,
            ..Default::default()
        },
        // Path MTU discovery only where a flow asks for it: the studies ran with 1200-byte datagrams.
        mtu_discovery: spec
            .mtu_discovery
            .then(mpquic::proto::connection::MtuDiscoveryConfig::default),
        max_idle_timeout: idle,
        congestion_controller: cc.to_owned(),
        scheduler: sched.to_owned(),
        streams: streams_config(receiver),
        initial_max_path_id: (paths > 1)
            .then(|| u32::try_from(paths.saturating_mul(2)).unwrap_or(u32::MAX).max(8)),
        ..TransportConfig::default()
    }
}

impl Engine {
    /// Prepares a run of `scenario` with its own seed.
    pub fn new(scenario: Scenario) -> Result<Engine, EngineError> {
        let topology = scenario
            .topology()
            .map_err(|e| EngineError::Setup(e.to_string()))?;
        let seed = scenario.scenario.seed;
        let network = Network::new(&scenario, seed)?;
        let end = SimTime::from_duration(scenario.scenario.duration);
        let mut queue = EventQueue::default();
        let mut flows = Vec::with_capacity(scenario.flows.len());
        let mut routes = network::AddrMap::default();
        let mut spoofed = BTreeMap::new();
        let tls = tls::Material::new(scenario.scenario.crypto)?;
        let policy = paths::PathPolicy {
            abandon_ptos: scenario.scenario.abandon_path_after_ptos,
        };
        for (f, (spec, resolved)) in scenario.flows.iter().zip(&topology.flows).enumerate() {
            if resolved.paths.is_empty() {
                return Err(EngineError::Setup(format!("flow {} has no path", spec.name)));
            }
            let ip = |e: &crate::scenario::Endpoint| {
                e.interface
                    .as_deref()
                    .and_then(|i| network.address(&e.node, i))
                    .ok_or_else(|| EngineError::Setup(format!("no address for {e}")))
            };
            let port_offset = u16::try_from(f).unwrap_or(u16::MAX - 50_000);
            let start = SimTime::from_duration(spec.start);
            let mut path_setups = Vec::with_capacity(resolved.paths.len());
            for (k, (path, path_spec)) in resolved.paths.iter().zip(&spec.paths).enumerate() {
                let client = SocketAddr::new(ip(&path.local)?, 50_000u16.saturating_add(port_offset));
                let server = SocketAddr::new(ip(&path.remote)?, 4_433u16.saturating_add(port_offset));
                let is_spoofed = path.leaves_from.is_some();
                if is_spoofed {
                    // Datagrams to a spoofed address end at the spoofed host, which is not the client.
                    spoofed.insert(client, (f, k, SpoofedTraffic::default()));
                } else {
                    routes.insert(client, (f, false));
                }
                routes.insert(server, (f, true));
                path_setups.push(PathSetup {
                    client,
                    server,
                    forward: network.route(&path.forward)?,
                    reverse: network.route(&path.reverse)?,
                    start: path_spec.start.map_or(start, SimTime::from_duration).max(start),
                    stop: path_spec.stop.map(SimTime::from_duration),
                    migrate: path_spec.migrate,
                    spoofed: is_spoofed,
                });
            }
            let setup = FlowSetup {
                index: f,
                start,
                stop: SimTime::from_duration(spec.stop_or(scenario.scenario.duration)),
                bytes: spec.bytes,
                download: spec.direction == crate::scenario::TransferDirection::Download,
                paths: path_setups,
                policy,
                app: match spec.kind {
                    FlowKind::Bulk => AppSetup::Bulk,
                    FlowKind::Requests => AppSetup::Requests(spec.requests.clone().unwrap_or_default()),
                    FlowKind::Video => match &spec.video {
                        Some(v) => AppSetup::Video(v.clone()),
                        None => {
                            return Err(EngineError::Setup(format!(
                                "flow {}: no `video` table",
                                spec.name
                            )));
                        }
                    },
                },
                read_rate: spec.receiver.as_ref().and_then(|r| r.read_rate),
                receiver_stats: spec.receiver.is_some() || spec.kind != FlowKind::Bulk,
            };
            let multipath = setup.is_multipath();
            // Paths reached by migration are the first path moved elsewhere: they do not count towards
            // multipath (a flow with one path and a migration is a plain RFC 9000 connection).
            let opened = setup.paths.iter().filter(|p| !p.migrate).count();
            let mut config = transport_config(
                spec,
                opened,
                scenario.scenario.idle_timeout,
                scenario.scenario.lazy_path_cids,
            );
            if spec.tunnel.is_some() {
                tunnel::outer_config(&mut config, &spec.cc);
            }
            let (client_config, server_config) = tls.configs(&config)?;
            queue.push(setup.start, Event::FlowStart(f));
            queue.push(setup.stop, Event::FlowStop(f));
            if multipath {
                let mut starts: Vec<SimTime> = setup.paths.iter().skip(1).map(|p| p.start).collect();
                starts.sort();
                starts.dedup();
                for t in starts.into_iter().filter(|&t| t > setup.start) {
                    queue.push(t, Event::PathStart(f));
                }
                let mut stops: Vec<SimTime> = setup.paths.iter().filter_map(|p| p.stop).collect();
                stops.sort();
                stops.dedup();
                for t in stops {
                    queue.push(t, Event::PathStop(f));
                }
            }
            let download = setup.download;
            let mut flow = Flow::new(
                setup,
                client_config,
                server_config,
                derive_seed(seed, 2, f as u64),
            );
            if let Some(t) = &spec.tunnel {
                let idle = scenario.scenario.idle_timeout;
                let configs = |c: &TransportConfig| Ok(tls.configs(c)?);
                let seed = derive_seed(seed, 2, f as u64);
                flow.attach_tunnel(tunnel::Tunnel::new(t, f, download, idle, seed, configs)?);
            }
            flows.push(flow);
        }
        for (k, event) in scenario.events.iter().enumerate() {
            queue.push(SimTime::from_duration(event.at), Event::Link(k));
        }
        let scenario_flows = flows.len();
        let shapes: Vec<(String, usize)> = scenario
            .flows
            .iter()
            .map(|f| (f.name.clone(), f.paths.len()))
            .collect();
        let recorder = Recorder::new(
            scenario.scenario.sample_interval,
            scenario.scenario.duration,
            &shapes,
        );
        if let Some(t) = recorder.next_due() {
            queue.push(t, Event::Sample);
        }
        let clock = Clock::new();
        Ok(Engine {
            scenario,
            topology,
            now_instant: clock.instant(SimTime::ZERO),
            clock,
            now: SimTime::ZERO,
            end,
            queue,
            network,
            flows,
            routes,
            spoofed,
            recorder,
            stats: EngineStats::default(),
            out: Vec::new(),
            pool: Vec::new(),
            timers: vec![None; scenario_flows],
            timer_order: BTreeSet::new(),
            next_timer_cache: None,
            due: Vec::new(),
        })
    }

    /// Runs a whole scenario.
    pub fn run(scenario: Scenario) -> Result<RunOutput, EngineError> {
        let mut engine = Engine::new(scenario)?;
        engine.run_until(SimTime::MAX)?;
        Ok(engine.finish())
    }

    /// The current simulated time.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// The end of the scenario.
    pub fn end(&self) -> SimTime {
        self.end
    }

    /// Engine counters so far.
    pub fn stats(&self) -> EngineStats {
        self.stats
    }

    /// Counters of link `link` in direction `direction`.
    pub fn link_stats(&self, link: &str, direction: Direction) -> Option<&LinkStats> {
        self.network.link_stats(link, direction)
    }

    /// Application bytes flow `flow` has delivered so far.
    pub fn delivered(&self, flow: usize) -> Option<u64> {
        self.flows.get(flow).map(Flow::delivered)
    }

    /// Per scenario path of flow `flow`: how many times the client opened it and how many times the
    /// engine abandoned it ([`paths`]).
    pub fn path_counts(&self, flow: usize) -> Option<Vec<(u32, u32)>> {
        self.flows.get(flow).map(Flow::path_counts)
    }

    /// Flow `flow` (its connections, its path bookkeeping), for tests and diagnostics.
    pub fn flow(&self, flow: usize) -> Option<&Flow> {
        self.flows.get(flow)
    }

    /// Has flow `flow`'s client close scenario path `path` now, bypassing the engine's own rule for
    /// closing paths (another path validated at both ends): for tests of what the core allows. `None` if
    /// the flow or open path does not exist; otherwise what `Connection::close_path` returned.
    pub fn close_path_now(
        &mut self,
        flow: usize,
        path: usize,
    ) -> Result<Option<Result<(), mpquic::proto::connection::ClosePathError>>, EngineError> {
        let now = self.now_instant;
        let result = self.flows.get_mut(flow).and_then(|f| f.close_path_now(now, path));
        if result.is_some() {
            self.service(flow)?;
        }
        Ok(result)
    }

    /// The traffic of the spoofed address of scenario path `path` of flow `flow` (`None` if that path
    /// has no `spoof`).
    pub fn spoofed_traffic(&self, flow: usize, path: usize) -> Option<SpoofedTraffic> {
        self.spoofed
            .values()
            .find(|(f, p, _)| *f == flow && *p == path)
            .map(|(_, _, t)| *t)
    }

    /// The series recorded so far.
    pub fn series(&self) -> &[PathSeries] {
        self.recorder.series()
    }

    /// The earliest connection timer, as simulated time rounded up so that the timer has expired then.
    fn next_timer(&mut self) -> Option<SimTime> {
        let &(i, _) = self.timer_order.first()?;
        if let Some((cached, t)) = self.next_timer_cache {
            if cached == i {
                return Some(t);
            }
        }
        let mut t = self.clock.sim_time(i);
        if self.clock.instant(t) < i {
            t = t.saturating_add_nanos(1);
        }
        self.next_timer_cache = Some((i, t));
        Some(t)
    }

    /// Advances the simulation to `limit` (or the end of the scenario, whichever is first).
    pub fn run_until(&mut self, limit: SimTime) -> Result<(), EngineError> {
        let limit = limit.min(self.end);
        let mut idle_steps = 0u32;
        loop {
            let tq = self.queue.peek_time();
            let tt = self.next_timer();
            let t = match (tq, tt) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => match a.or(b) {
                    Some(t) => t,
                    None => break,
                },
            };
            if t > limit {
                break;
            }
            if t > self.now {
                self.set_now(t);
                idle_steps = 0;
            } else {
                idle_steps = idle_steps.saturating_add(1);
                if idle_steps > STUCK_LIMIT {
                    return Err(EngineError::Stuck(self.now));
                }
            }
            if tt.is_some_and(|tt| tt <= t) {
                self.fire_timers()?;
            } else if let Some((_, event)) = self.queue.pop() {
                self.stats.events = self.stats.events.saturating_add(1);
                self.process(event)?;
            }
        }
        self.set_now(self.now.max(limit));
        Ok(())
    }

    /// Moves the simulated clock to `t`.
    fn set_now(&mut self, t: SimTime) {
        self.now = t;
        self.now_instant = self.clock.instant(t);
    }

    /// Fires the timers due now, flow by flow in index order.
    fn fire_timers(&mut self) -> Result<(), EngineError> {
        let now = self.now_instant;
        let mut due = std::mem::take(&mut self.due);
        due.extend(
            self.timer_order
                .iter()
                .take_while(|&&(t, _)| t <= now)
                .map(|&(_, f)| f),
        );
        due.sort_unstable();
        for &f in &due {
            if let Some(flow) = self.flows.get_mut(f) {
                flow.handle_timeouts(now);
            }
            self.stats.timeouts = self.stats.timeouts.saturating_add(1);
            self.service(f)?;
        }
        due.clear();
        self.due = due;
        Ok(())
    }

    fn process(&mut self, event: Event) -> Result<(), EngineError> {
        let now = self.now_instant;
        match event {
            Event::Arrive(packet) => self.arrive(packet)?,
            Event::FlowStart(f) => {
                let mut multipath = false;
                if let Some(flow) = self.flows.get_mut(f) {
                    flow.start(self.now, now)?;
                    multipath = flow.setup.is_multipath();
                }
                if multipath {
                    self.queue.push(
                        self.now.saturating_add(paths::CHECK_INTERVAL),
                        Event::PathCheck(f),
                    );
                }
                self.service(f)?;
            }
            Event::PathStart(f) => self.service(f)?,
            Event::PathStop(f) => {
                if let Some(flow) = self.flows.get_mut(f) {
                    flow.close_due_paths(self.now, now);
                }
                self.service(f)?;
            }
            Event::PathCheck(f) => {
                let network = &self.network;
                let mut active = false;
                if let Some(flow) = self.flows.get_mut(f) {
                    let paths = &flow.setup.paths;
                    let up: Vec<bool> = paths
                        .iter()
                        .map(|p| p.forward.iter().chain(&p.reverse).all(|&l| network.is_up(l)))
                        .collect();
                    flow.check_paths(self.now, now, |k| up.get(k).copied().unwrap_or(false));
                    active = flow.is_active();
                }
                if active {
                    self.queue.push(
                        self.now.saturating_add(paths::CHECK_INTERVAL),
                        Event::PathCheck(f),
                    );
                }
                self.service(f)?;
            }
            Event::FlowStop(f) => {
                if let Some(flow) = self.flows.get_mut(f) {
                    flow.stop();
                }
                self.service(f)?;
            }
            Event::Link(k) => {
                if let Some(spec) = self.scenario.events.get(k) {
                    self.network.apply(self.now, spec)?;
                }
            }
            Event::Sample => {
                for flow in &mut self.flows {
                    flow.attribute(false);
                }
                let source = sampling::Source { flows: &self.flows };
                self.recorder.record(self.now, &source);
                if let Some(t) = self.recorder.next_due() {
                    self.queue.push(t, Event::Sample);
                }
            }
        }
        Ok(())
    }

    /// A datagram reached the end of a link: forward it or hand it to its host.
    fn arrive(&mut self, mut packet: Packet) -> Result<(), EngineError> {
        if self.network.outage_since(packet.link, packet.epoch) {
            self.dropped(packet);
            return Ok(());
        }
        let next_hop = packet.hop.saturating_add(1);
        let next_link = self
            .flows
            .get(packet.flow)
            .and_then(|f| f.setup.paths.get(packet.path))
            .and_then(|p| {
                let route = if packet.to_server { &p.forward } else { &p.reverse };
                route.get(next_hop).copied()
            });
        if let Some(link) = next_link {
            packet.hop = next_hop;
            packet.link = link;
            self.forward(packet);
            return Ok(());
        }
        // Last hop: the destination address names the flow and side.
        let Some(&(f, to_server)) = self.routes.get(&packet.dst) else {
            if let Some((_, _, t)) = self.spoofed.get_mut(&packet.dst) {
                // The spoofed host: it counts what reaches it and never answers.
                t.delivered_to.add(packet.data.len());
            }
            self.recycle(packet.data);
            return Ok(());
        };
        if to_server && !self.spoofed.is_empty() {
            if let Some((_, _, t)) = self.spoofed.get_mut(&packet.src) {
                t.from.add(packet.data.len());
            }
        }
        let now = self.now_instant;
        if let Some(flow) = self.flows.get_mut(f) {
            flow.handle_datagram(now, to_server, packet.src, packet.dst, &mut packet.data);
        }
        self.recycle(packet.data);
        self.service(f)
    }

    /// Returns a datagram buffer to the pool.
    fn recycle(&mut self, buf: Vec<u8>) {
        if self.pool.len() < POOL_MAX {
            self.pool.push(buf);
        }
    }

    /// A datagram was lost in the network: counted against its path if the sender sent it.
    fn dropped(&mut self, packet: Packet) {
        if let Some(flow) = self.flows.get_mut(packet.flow) {
            if packet.to_server == flow.data_to_server() {
                flow.note_drop(packet.path);
            }
        }
        self.recycle(packet.data);
    }

    /// Offers `packet` to the link named in it and queues its arrival (and a duplicate's).
    fn forward(&mut self, mut packet: Packet) {
        let delivery = self.network.offer(self.now, packet.link, &mut packet.data);
        let Some(arrival) = delivery.arrival().copied() else {
            self.dropped(packet);
            return;
        };
        packet.epoch = arrival.epoch;
        let lane = packet.link;
        if let Some(dup_at) = arrival.duplicate_at {
            let copy = Packet {
                data: packet.data.clone(),
                ..packet
            };
            self.queue.push_lane(dup_at, lane, Event::Arrive(copy));
        }
        self.queue.push_lane(arrival.at, lane, Event::Arrive(packet));
    }

    /// Runs flow `f`'s application and sends what its connections produced.
    fn service(&mut self, f: usize) -> Result<(), EngineError> {
        let now = self.now_instant;
        let mut out = std::mem::take(&mut self.out);
        if let Some(flow) = self.flows.get_mut(f) {
            flow.service(self.now, now, &mut out, &mut self.pool)?;
        }
        if let (Some(timer), Some(flow)) = (self.timers.get_mut(f), self.flows.get(f)) {
            let next = flow.poll_timeout();
            if *timer != next {
                if let Some(old) = *timer {
                    self.timer_order.remove(&(old, f));
                }
                if let Some(t) = next {
                    self.timer_order.insert((t, f));
                }
                *timer = next;
            }
        }
        for o in out.drain(..) {
            self.stats.datagrams = self.stats.datagrams.saturating_add(1);
            if !o.to_server && !self.spoofed.is_empty() {
                if let Some((_, _, t)) = self.spoofed.get_mut(&o.dst) {
                    t.sent_to.add(o.data.len());
                }
            }
            let first = o.path.and_then(|k| {
                let p = self.flows.get(f)?.setup.paths.get(k)?;
                let route = if o.to_server { &p.forward } else { &p.reverse };
                route.first().copied().map(|l| (k, l))
            });
            let Some((path, link)) = first else {
                self.stats.unroutable = self.stats.unroutable.saturating_add(1);
                self.recycle(o.data);
                continue;
            };
            self.forward(Packet {
                flow: f,
                path,
                to_server: o.to_server,
                hop: 0,
                link,
                epoch: OutageEpoch(0),
                src: o.src,
                dst: o.dst,
                data: o.data,
            });
        }
        self.out = out;
        Ok(())
    }

    /// Per-flow totals at the current time (attributes what is left of delivered bytes to paths).
    fn totals(&mut self) -> Vec<FlowTotals> {
        for flow in &mut self.flows {
            flow.attribute(true);
        }
        self.flows
            .iter()
            .map(|flow| {
                let s = &flow.setup;
                let end = flow.completed_at().unwrap_or(s.stop).min(self.now.max(s.start));
                let paths = flow
                    .path_delivered()
                    .into_iter()
                    .zip(flow.path_retransmissions())
                    .zip(flow.path_counts())
                    .map(
                        |((delivered_bytes, retransmissions), (_, abandoned))| PathTotals {
                            delivered_bytes,
                            retransmissions,
                            abandoned,
                        },
                    )
                    .collect();
                let times = || {
                    flow.object_records()
                        .iter()
                        .map(|r| r.done.saturating_duration_since(r.requested))
                        .collect::<Vec<_>>()
                };
                FlowTotals {
                    active: end.saturating_duration_since(s.start),
                    paths,
                    congestion_events: flow.congestion_events(),
                    tunnel: flow.tunnel().map(tunnel::Tunnel::stats),
                    tunnel_inner: flow.tunnel().map_or_else(Vec::new, tunnel::Tunnel::inner_totals),
                    receiver: if s.receiver_stats {
                        Some(flow.reassembly().unwrap_or_default())
                    } else {
                        None
                    },
                    objects: matches!(s.app, AppSetup::Requests(_)).then(times),
                    video: match &s.app {
                        AppSetup::Video(v) => Some(VideoTotals {
                            chunk_bytes: v.chunk_bytes(),
                            chunk_times: times(),
                            playback: flow.playback(end).unwrap_or_default(),
                        }),
                        _ => None,
                    },
                }
            })
            .collect()
    }

    /// Ends the run: results and series.
    pub fn finish(mut self) -> RunOutput {
        let totals = self.totals();
        let series = self.recorder.into_series();
        let mut result = RunResult::build(&self.scenario, &self.topology, &totals, &series);
        for b in &mut result.bottlenecks {
            if let Some(l) = self.network.link_stats(&b.link, b.direction) {
                b.dropped_queue_full = l.dropped_queue_full.packets;
                b.dropped_loss = l.dropped_loss.packets;
            }
        }
        RunOutput {
            result,
            series,
            stats: self.stats,
        }
    }
}
