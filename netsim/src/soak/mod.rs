//! The soak test: many connections with random paths opening and closing, random loss and link failures,
//! for a long stretch of simulated time; every transfer must arrive intact, and the memory each connection
//! costs is measured.
//!
//! [`SoakConfig::full`] is the contract's run (1000 connections, 10 simulated minutes; `mpquic-sim soak`,
//! see `docs/soak.md`); [`SoakConfig::quick`] (50 connections, 30 s) is the CI test that keeps it from
//! rotting (`netsim/tests/soak.rs`). The scenario is generated from the seed ([`scenario`]); it is an
//! ordinary scenario file (`mpquic-sim soak --write FILE` writes it), run by the ordinary [`Engine`].
//!
//! **Intact.** The engine's receivers check every byte of every stream against the sender's pattern as
//! they read it (a mismatch fails the run with [`EngineError::Corrupted`]); at the end [`Soak::finish`]
//! checks that every connection's receiver read its stream's FIN at exactly the size the sender wrote
//! (`Flow::fin_at`) and that the flow counted that many bytes delivered. (The pattern's byte at offset `o`
//! is `o mod 251`, so only data misplaced by a multiple of 251 bytes would go unnoticed.)
//!
//! **Memory.** Heap bytes from [`memory::CountingAlloc`] when it is the global allocator and counting
//! ([`memory::start_counting`]: `mpquic-sim soak` starts it),
//! and the resident set size from `/proc/self/status`. The engine builds every flow's endpoints and TLS
//! configurations up front and creates its connections when the flow starts; it never closes a
//! connection (a finished transfer leaves an idle one), so at the end every connection is alive. With
//! `baseline` the live heap before the engine was built and `N` the connections:
//! - *setup per connection* = (heap once the engine is built − baseline) / N: two endpoints and one TLS
//!   client and server configuration per flow (a real server shares one), links, queued events;
//! - *per connection at the end* = (heap at the end − baseline) / N: the above plus an idle connection on
//!   each side, every transfer delivered;
//! - *per connection at the peak* = (most heap in use at once − baseline) / N, with transfers in flight
//!   (their send and receive buffers; this part grows with the number of concurrent transfers, not with
//!   N);
//! - *peak RSS per connection* = (peak resident set − resident set before the engine) / N: what the process
//!   really held, allocator overhead and freed-but-kept pages included.
//!
//! The progress samples also record the live heap, so its growth over time shows whether anything leaks.

pub mod memory;
pub mod scenario;

use std::time::Duration;

use crate::engine::{Engine, EngineError, EngineStats};
use crate::scenario::Scenario;
use crate::time::SimTime;

/// What to run (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SoakConfig {
    /// Connections (flows), each one sized transfer.
    pub connections: usize,
    /// Simulated time.
    pub duration: Duration,
    /// Seed of the generated scenario and of the run.
    pub seed: u64,
    /// Client hosts, each with three access links.
    pub hosts: usize,
    /// Smallest transfer, in bytes (sizes are log-uniform).
    pub min_bytes: u64,
    /// Largest transfer, in bytes.
    pub max_bytes: u64,
    /// Simulated time between progress samples.
    pub sample_every: Duration,
}

impl SoakConfig {
    /// The contract's run: 1000 connections over 4 client hosts for 10 simulated minutes, 100 kB to 10 MB
    /// each.
    pub fn full() -> SoakConfig {
        SoakConfig {
            connections: 1000,
            duration: Duration::from_secs(600),
            seed: 1,
            hosts: 4,
            min_bytes: 100_000,
            max_bytes: 10_000_000,
            sample_every: Duration::from_secs(10),
        }
    }

    /// The CI variant: 50 connections over 2 client hosts for 30 simulated seconds, 50 kB to 1 MB each.
    pub fn quick() -> SoakConfig {
        SoakConfig {
            connections: 50,
            duration: Duration::from_secs(30),
            seed: 1,
            hosts: 2,
            min_bytes: 50_000,
            max_bytes: 1_000_000,
            sample_every: Duration::from_secs(1),
        }
    }
}

/// Why a soak run failed to run (an incomplete transfer is a finding in the [`SoakReport`], not an error).
#[derive(Debug, thiserror::Error)]
pub enum SoakError {
    /// The generated scenario did not validate (a bug in the generator).
    #[error("generated scenario: {0}")]
    Scenario(#[from] crate::scenario::ScenarioError),
    /// The engine failed: corrupted data, a stuck simulation, a setup error.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// One progress sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Simulated time.
    pub at: SimTime,
    /// Connections started so far.
    pub started: usize,
    /// Transfers completed so far.
    pub completed: usize,
    /// Live heap bytes, if the counting allocator is installed.
    pub heap: Option<u64>,
    /// Resident set size in bytes, where known.
    pub rss: Option<u64>,
}

/// Memory figures of a run, in bytes (see the module documentation for the method).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MemoryReport {
    /// Live heap before the engine was built.
    pub heap_baseline: Option<u64>,
    /// Live heap once the engine was built (no connection started yet).
    pub heap_built: Option<u64>,
    /// The most heap in use at once during the run.
    pub heap_peak: Option<u64>,
    /// Live heap at the end, every connection alive and idle.
    pub heap_end: Option<u64>,
    /// Resident set size before the engine was built.
    pub rss_baseline: Option<u64>,
    /// Peak resident set size of the process (`VmHWM`).
    pub rss_peak: Option<u64>,
    /// Connections.
    pub connections: usize,
}

impl MemoryReport {
    fn per(&self, x: Option<u64>, base: Option<u64>) -> Option<f64> {
        Some(x?.saturating_sub(base?) as f64 / self.connections.max(1) as f64)
    }

    /// Setup per connection: (heap once built − baseline) / connections.
    pub fn setup_per_connection(&self) -> Option<f64> {
        self.per(self.heap_built, self.heap_baseline)
    }

    /// Per connection at the end: (heap at the end − baseline) / connections.
    pub fn per_connection_end(&self) -> Option<f64> {
        self.per(self.heap_end, self.heap_baseline)
    }

    /// Per connection at the peak: (peak heap − baseline) / connections.
    pub fn per_connection_peak(&self) -> Option<f64> {
        self.per(self.heap_peak, self.heap_baseline)
    }

    /// Peak RSS per connection: (peak RSS − RSS baseline) / connections.
    pub fn rss_per_connection(&self) -> Option<f64> {
        self.per(self.rss_peak, self.rss_baseline)
    }
}

/// What a soak run found.
#[derive(Clone, Debug, PartialEq)]
pub struct SoakReport {
    /// The configuration.
    pub config: SoakConfig,
    /// What the generator drew.
    pub drawn: scenario::Drawn,
    /// Transfers that completed with every byte intact.
    pub intact: usize,
    /// The others: `(flow index, expected bytes, FIN at, delivered)`.
    pub incomplete: Vec<(usize, u64, Option<u64>, u64)>,
    /// Bytes delivered over all connections.
    pub delivered: u64,
    /// When the last transfer completed.
    pub last_completion: Option<SimTime>,
    /// Transfer times (start to completion) of the intact transfers: mean, median, maximum.
    pub transfer_times: Option<(Duration, Duration, Duration)>,
    /// Paths opened over all connections (re-openings after abandonment included).
    pub paths_opened: u64,
    /// Paths the dead-path policy abandoned.
    pub paths_abandoned: u64,
    /// Paths closed at their scheduled `stop`.
    pub paths_closed: u64,
    /// Engine counters.
    pub stats: EngineStats,
    /// Memory.
    pub memory: MemoryReport,
    /// Progress samples.
    pub samples: Vec<Progress>,
}

impl SoakReport {
    /// Whether every transfer arrived intact.
    pub fn passed(&self) -> bool {
        self.incomplete.is_empty() && self.intact == self.config.connections
    }
}

/// A soak run in progress: build it, [`Soak::step`] until it returns `None`, then [`Soak::finish`].
#[derive(Debug)]
pub struct Soak {
    config: SoakConfig,
    drawn: scenario::Drawn,
    engine: Engine,
    starts: Vec<SimTime>,
    samples: Vec<Progress>,
    heap_baseline: Option<u64>,
    heap_built: Option<u64>,
    rss_baseline: Option<u64>,
}

/// The generated scenario and what was drawn.
pub fn generate(config: &SoakConfig) -> Result<(Scenario, String, scenario::Drawn), SoakError> {
    let (text, drawn) = scenario::generate(config);
    let scenario = Scenario::from_toml_str(&text)?;
    Ok((scenario, text, drawn))
}

impl Soak {
    /// Generates the scenario and builds the engine (the memory baseline is taken first).
    pub fn new(config: SoakConfig) -> Result<Soak, SoakError> {
        let (scenario, _, drawn) = generate(&config)?;
        let starts = scenario
            .flows
            .iter()
            .map(|f| SimTime::from_duration(f.start))
            .collect();
        let heap_baseline = memory::live_heap();
        let rss_baseline = memory::rss().map(|(now, _)| now);
        memory::reset_peak();
        let engine = Engine::new(scenario)?;
        Ok(Soak {
            config,
            drawn,
            engine,
            starts,
            samples: Vec::new(),
            heap_baseline,
            heap_built: memory::live_heap(),
            rss_baseline,
        })
    }

    /// The engine (for inspection).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Runs the next `sample_every` of simulated time and returns its progress sample; `None` once the
    /// run is over.
    pub fn step(&mut self) -> Result<Option<Progress>, SoakError> {
        let now = self.engine.now();
        if now >= self.engine.end() {
            return Ok(None);
        }
        let next = now
            .saturating_add_nanos(u64::try_from(self.config.sample_every.as_nanos()).unwrap_or(u64::MAX))
            .min(self.engine.end());
        self.engine.run_until(next)?;
        let at = self.engine.now();
        let started = self.starts.iter().filter(|&&s| s <= at).count();
        let completed = (0..self.config.connections)
            .filter(|&f| self.engine.flow(f).is_some_and(|fl| fl.completed_at().is_some()))
            .count();
        let p = Progress {
            at,
            started,
            completed,
            heap: memory::live_heap(),
            rss: memory::rss().map(|(now, _)| now),
        };
        self.samples.push(p);
        Ok(Some(p))
    }

    /// Runs to the end (without progress output) and checks every transfer.
    pub fn run(config: SoakConfig) -> Result<SoakReport, SoakError> {
        let mut soak = Soak::new(config)?;
        while soak.step()?.is_some() {}
        Ok(soak.finish())
    }

    /// Checks every transfer and gathers the report (call once the steps are over).
    pub fn finish(self) -> SoakReport {
        let heap_end = memory::live_heap();
        let heap_peak = memory::peak_heap();
        let rss_peak = memory::rss().map(|(_, peak)| peak);
        let mut report = SoakReport {
            config: self.config.clone(),
            drawn: self.drawn.clone(),
            intact: 0,
            incomplete: Vec::new(),
            delivered: 0,
            last_completion: None,
            transfer_times: None,
            paths_opened: 0,
            paths_abandoned: 0,
            paths_closed: 0,
            stats: self.engine.stats(),
            memory: MemoryReport::default(),
            samples: self.samples.clone(),
        };
        let mut times = Vec::with_capacity(self.drawn.bytes.len());
        for (f, &bytes) in self.drawn.bytes.iter().enumerate() {
            let Some(flow) = self.engine.flow(f) else {
                report.incomplete.push((f, bytes, None, 0));
                continue;
            };
            let delivered = flow.delivered();
            report.delivered = report.delivered.saturating_add(delivered);
            if flow.fin_at() == Some(bytes) && delivered == bytes && flow.completed_at().is_some() {
                report.intact += 1;
                report.last_completion = report.last_completion.max(flow.completed_at());
                if let (Some(done), Some(&start)) = (flow.completed_at(), self.starts.get(f)) {
                    times.push(done.saturating_duration_since(start));
                }
            } else {
                report.incomplete.push((f, bytes, flow.fin_at(), delivered));
            }
            for (opened, abandoned) in flow.path_counts() {
                report.paths_opened += u64::from(opened);
                report.paths_abandoned += u64::from(abandoned);
            }
            report.paths_closed += flow.path_closes().iter().map(|&c| u64::from(c)).sum::<u64>();
        }
        times.sort_unstable();
        if let (Some(&median), Some(&max)) = (times.get(times.len() / 2), times.last()) {
            let total: Duration = times.iter().sum();
            let mean = total / u32::try_from(times.len()).unwrap_or(u32::MAX).max(1);
            report.transfer_times = Some((mean, median, max));
        }
        report.memory = MemoryReport {
            heap_baseline: self.heap_baseline,
            heap_built: self.heap_built,
            heap_peak,
            heap_end,
            rss_baseline: self.rss_baseline,
            rss_peak,
            connections: self.config.connections,
        };
        report
    }
}
