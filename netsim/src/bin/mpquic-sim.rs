//! `mpquic-sim`: validate, run and sweep scenario files; run whole studies into markdown reports.
//!
//! Exit codes: 0 success, 1 invalid scenario (or unreadable file; for `study` also an unknown study or an
//! invalid manifest), 2 bad command-line usage (one line on stderr naming the option, the value and the
//! valid range), 3 a run failed (engine error) or an output could not be written.
//!
//! Numeric options have documented ranges (`docs/limits.md`): `soak --connections` 1 to 5000, `--hosts` 1
//! to 100, `--duration` 1 to 86400 s, `--min-bytes`/`--max-bytes` 1 to 10^9 (max ≥ min); `study --jobs`
//! 1 to 256; `--seed` 0 to 2^64 − 1; `bench --rate` 10^6 to 10^11 bit/s, `--duration` 100 ms to 1 h,
//! `--runs` 1 to 100. A negative number is an out-of-range value, not an unknown option.
//!
//! `bench` runs the speed benchmark's reference case (`mpquic_netsim::bench`, `docs/simulator-speed.md`)
//! and prints simulated seconds per wall-clock second.
//!
//! Runs that take more than two seconds of wall time report their progress on stderr; `sweep` and `study`
//! show runs done out of the total and the time left (a progress bar on a terminal, plain lines otherwise).
//!
//! `sweep FILE --shard K/N --out DIR` and `study NAME --shard K/N` run the K-th of N deterministic slices
//! (`mpquic_netsim::shard`) and write `shard-K-of-N.json`; `merge DIR...` checks that the shards of one input
//! are all there and rebuilds the unsharded outputs: the sweep's table or JSON (byte for byte), the study's
//! report (docs/cluster.md).
//!
//! `soak` runs the soak test (`netsim::soak`, `docs/soak.md`); for its memory figures this binary's global
//! allocator is the counting one of `mpquic_netsim::soak::memory` (it forwards to jemalloc, which is
//! also what every other subcommand allocates with).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use mpquic_netsim::Scenario;
use mpquic_netsim::bench::{self, BenchCase, Figures};
use mpquic_netsim::engine::{Engine, RunOutput};
use mpquic_netsim::output::{self, table};
use mpquic_netsim::progress::Progress;
use mpquic_netsim::scenario::sweep;
use mpquic_netsim::shard::{self, Kind, Shard, ShardFile, ShardRun};
use mpquic_netsim::study::{self, PartOutcome, RunRecord, Study, StudyError};
use mpquic_netsim::units::parse_int_in;

/// Deterministic network simulator for multipath QUIC.
#[derive(Debug, Parser)]
#[command(name = "mpquic-sim", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Parse and validate scenario files and print a summary of each topology.
    Validate {
        /// Scenario files (TOML).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Run a scenario once (its `[sweep]` section, if any, is ignored).
    Run(RunArgs),
    /// Run a scenario across its `[sweep]` values and seeds (or one slice of them with --shard).
    Sweep(SweepArgs),
    /// Run a whole study (every part, variant and seed) and write a markdown report with tables and plots.
    Study(StudyArgs),
    /// Combine the shard files of a sharded sweep or study (`shard-K-of-N.json` in the given directories)
    /// into the outputs of the unsharded run.
    Merge(MergeArgs),
    /// Run the soak test: many connections with random paths opening and closing, random loss and link
    /// outages; check that every transfer arrives intact and report memory per connection.
    Soak(SoakArgs),
    /// Measure the simulator's speed on the reference case (one CUBIC flow, 10 ms RTT, 1 x BDP drop-tail
    /// queue): simulated seconds per wall-clock second, goodput, datagrams per second.
    Bench(BenchArgs),
}

/// `bench --crypto`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum CryptoArg {
    /// Real AES-128-GCM packet protection.
    Aes128gcm,
    /// The simulator's cost-free cipher (same packets and results, no cryptographic work per packet).
    Null,
}

#[derive(Debug, clap::Args)]
struct BenchArgs {
    /// Link rate in bit/s, 1000000 to 100000000000.
    #[arg(long, value_name = "BPS", allow_negative_numbers = true, value_parser = bench_rate,
          default_value_t = bench::DEFAULT_RATE_BPS)]
    rate: u64,
    /// Simulated time (`20s`, `500ms`), 100 ms to 1 h.
    #[arg(long, value_name = "TIME", allow_negative_numbers = true, value_parser = bench_duration,
          default_value = "20s")]
    duration: Duration,
    /// Packet protection.
    #[arg(long, value_enum, default_value = "aes128gcm")]
    crypto: CryptoArg,
    /// Timed runs (each the same deterministic run), 1 to 100.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = bench_runs,
          default_value_t = 1)]
    runs: u64,
}

fn bench_rate(s: &str) -> Result<u64, String> {
    parse_int_in(s, bench::MIN_RATE_BPS, bench::MAX_RATE_BPS).map_err(|e| format!("{e} (bit/s)"))
}

fn bench_duration(s: &str) -> Result<Duration, String> {
    let d = mpquic_netsim::units::parse_duration(s)?;
    if d < bench::MIN_DURATION || d > bench::MAX_DURATION {
        return Err(format!("duration {s:?} is out of range: expected 100ms to 3600s"));
    }
    Ok(d)
}

fn bench_runs(s: &str) -> Result<u64, String> {
    parse_int_in(s, 1, bench::MAX_RUNS)
}

/// The soak options' ranges (`docs/limits.md`): the generated scenario must stay within the scenario limits
/// (`scenario::limits`: at most 5000 flows, 254 hosts, 24 hours).
const SOAK_MAX_CONNECTIONS: u64 = 5_000;
const SOAK_MAX_HOSTS: u64 = 100;
const SOAK_MAX_DURATION_S: u64 = 86_400;
const SOAK_MAX_BYTES: u64 = 1_000_000_000;
/// The most threads `study` runs on.
const MAX_JOBS: u64 = 256;

fn connections(s: &str) -> Result<usize, String> {
    parse_int_in(s, 1, SOAK_MAX_CONNECTIONS).map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

fn hosts(s: &str) -> Result<usize, String> {
    parse_int_in(s, 1, SOAK_MAX_HOSTS).map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

fn soak_duration(s: &str) -> Result<u64, String> {
    parse_int_in(s, 1, SOAK_MAX_DURATION_S).map_err(|e| format!("{e} (seconds)"))
}

fn transfer_bytes(s: &str) -> Result<u64, String> {
    parse_int_in(s, 1, SOAK_MAX_BYTES)
}

fn seed(s: &str) -> Result<u64, String> {
    parse_int_in(s, 0, u64::MAX)
}

/// The longest controller metric name `--plot-cc` accepts.
const MAX_METRIC_NAME: usize = 64;

fn metric_name(s: &str) -> Result<String, String> {
    if s.is_empty() || s.len() > MAX_METRIC_NAME || !s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(format!(
            "a controller metric name is 1 to {MAX_METRIC_NAME} letters, digits or `_`, not {s:?}"
        ));
    }
    Ok(s.to_owned())
}

fn jobs(s: &str) -> Result<usize, String> {
    parse_int_in(s, 1, MAX_JOBS).map(|n| usize::try_from(n).unwrap_or(1))
}

#[derive(Debug, clap::Args)]
struct SoakArgs {
    /// Start from the CI variant (50 connections, 30 s) instead of the full run (1000, 600 s).
    #[arg(long)]
    quick: bool,
    /// Connections, 1 to 5000.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = connections)]
    connections: Option<usize>,
    /// Simulated seconds, 1 to 86400.
    #[arg(long, value_name = "SECS", allow_negative_numbers = true, value_parser = soak_duration)]
    duration: Option<u64>,
    /// Seed of the generated scenario and of the run (0 to 2^64 - 1).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = seed)]
    seed: Option<u64>,
    /// Client hosts (three access links each), 1 to 100.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = hosts)]
    hosts: Option<usize>,
    /// Smallest transfer in bytes (sizes are log-uniform), 1 to 10^9.
    #[arg(long, value_name = "BYTES", allow_negative_numbers = true, value_parser = transfer_bytes)]
    min_bytes: Option<u64>,
    /// Largest transfer in bytes, --min-bytes to 10^9.
    #[arg(long, value_name = "BYTES", allow_negative_numbers = true, value_parser = transfer_bytes)]
    max_bytes: Option<u64>,
    /// Write the generated scenario file here and exit without running it.
    #[arg(long, value_name = "FILE")]
    write: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct StudyArgs {
    /// Study name (`a`, `b1`, ..., from `NAME.study.toml` in the studies directory), a path to a
    /// `.study.toml` file, or `all`.
    name: String,
    /// Run the quick variant (the manifest's `quick` overrides: shorter, fewer seeds).
    #[arg(long)]
    quick: bool,
    /// Directory the reports are written into (`DIR/NAME/report.md`).
    #[arg(long, value_name = "DIR", default_value = "study-reports")]
    out: PathBuf,
    /// Directory holding the study manifests.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_STUDIES_DIR)]
    dir: PathBuf,
    /// Runs in parallel, 1 to 256 (default: the number of CPUs; never more than the study has runs).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = jobs)]
    jobs: Option<usize>,
    /// Run only slice K of N (1 <= K <= N <= 10000: the runs at positions K-1, K-1+N, ...) and write its
    /// results to OUT/NAME/shard-K-of-N.json and its plots under OUT/NAME; `merge OUT/NAME` writes the report.
    #[arg(long, value_name = "K/N", value_parser = shard_spec)]
    shard: Option<Shard>,
}

#[derive(Debug, clap::Args)]
struct SweepArgs {
    /// The scenario and the outputs.
    #[command(flatten)]
    run: RunArgs,
    /// Run only slice K of N (1 <= K <= N <= 10000: the runs at positions K-1, K-1+N, ...); needs --out.
    #[arg(long, value_name = "K/N", value_parser = shard_spec, requires = "out")]
    shard: Option<Shard>,
    /// Write the runs' results to DIR/shard-K-of-N.json (1-of-1 without --shard) for `merge`, instead of
    /// printing the table.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct MergeArgs {
    /// Directories holding the shard files (or the shard files themselves).
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Sweep: print the results as JSON instead of a table (as `sweep --json`).
    #[arg(long)]
    json: bool,
    /// Study: directory the report is written into (`DIR/NAME/report.md`).
    #[arg(long, value_name = "DIR", default_value = "study-reports")]
    out: PathBuf,
}

fn shard_spec(s: &str) -> Result<Shard, String> {
    Shard::parse(s).map_err(|e| {
        e.to_string()
            .trim_start_matches(&format!("--shard {s:?}: "))
            .to_owned()
    })
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// Scenario file (TOML).
    file: PathBuf,
    /// Print the results as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Write CSV time series (one file per flow and path) into this directory.
    #[arg(long, value_name = "DIR")]
    csv: Option<PathBuf>,
    /// Write SVG and PNG plots (throughput, cwnd, RTT per path) into this directory.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Also plot these controller metrics per path (`cc_NAME.svg`/`.png` in the `--plot` directory), e.g.
    /// `rtt_mid,beta` for D-OLIA's delay estimator; the names are the CSV files' `cc.NAME` columns. `run` fails
    /// with the run's metric names when none of its paths reports one; `sweep` plots what each run has.
    #[arg(long, value_name = "NAME,...", value_delimiter = ',', requires = "plot", value_parser = metric_name)]
    plot_cc: Vec<String>,
    /// Seed for `run` (overrides `scenario.seed`; 0 to 2^64 - 1); `sweep` uses the seeds of its `[sweep]`
    /// section.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = seed)]
    seed: Option<u64>,
}

/// Exit code of a failed run or output.
const RUN_FAILED: u8 = 3;
/// Exit code of a bad command line.
const USAGE: u8 = 2;

/// Prints a usage error as one line, `mpquic-sim: <what is wrong>`, and returns exit code 2.
fn usage_error(message: &str) -> ExitCode {
    eprintln!("mpquic-sim: {message}");
    ExitCode::from(USAGE)
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // `--help` and `--version` print as usual.
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            let text = e.to_string();
            let mut lines = text.lines();
            let mut first = lines.next().unwrap_or("bad arguments").to_owned();
            // "the following required arguments were not provided:" lists them on the lines below: keep them
            // on the one line.
            if first.ends_with(':') {
                let rest: Vec<&str> = lines
                    .take_while(|l| !l.trim().is_empty())
                    .map(str::trim)
                    .collect();
                first = format!("{first} {}", rest.join(", "));
            }
            return usage_error(first.trim_start_matches("error: "));
        }
    };
    match cli.command {
        Command::Validate { files } => validate(files),
        Command::Run(args) => run(&args),
        Command::Sweep(args) => sweep_cmd(&args),
        Command::Study(args) => study_cmd(&args),
        Command::Merge(args) => merge_cmd(&args),
        Command::Soak(args) => soak_cmd(&args),
        Command::Bench(args) => bench_cmd(&args),
    }
}

/// The counting allocator, for the soak test's memory figures (it counts only once `soak` starts it).
#[global_allocator]
static ALLOC: mpquic_netsim::soak::memory::CountingAlloc = mpquic_netsim::soak::memory::CountingAlloc;

fn mib(bytes: Option<u64>) -> String {
    bytes.map_or("-".to_owned(), |b| format!("{:.1} MiB", b as f64 / 1048576.0))
}

fn kib(bytes: Option<f64>) -> String {
    bytes.map_or("-".to_owned(), |b| format!("{:.1} KiB", b / 1024.0))
}

fn soak_cmd(args: &SoakArgs) -> ExitCode {
    use mpquic_netsim::soak::{Soak, SoakConfig};
    // Heap figures: counted from here on (off for the other commands, where counting costs time).
    mpquic_netsim::soak::memory::start_counting();
    let mut config = if args.quick {
        SoakConfig::quick()
    } else {
        SoakConfig::full()
    };
    if let Some(n) = args.connections {
        config.connections = n;
    }
    if let Some(d) = args.duration {
        config.duration = Duration::from_secs(d);
        config.sample_every = config.sample_every.min(config.duration);
    }
    if let Some(seed) = args.seed {
        config.seed = seed;
    }
    if let Some(h) = args.hosts {
        config.hosts = h;
    }
    if let Some(b) = args.min_bytes {
        config.min_bytes = b;
    }
    if let Some(b) = args.max_bytes {
        config.max_bytes = b;
    }
    if config.max_bytes < config.min_bytes {
        return usage_error(&format!(
            "--max-bytes {} is below the smallest transfer ({}): expected {} to {SOAK_MAX_BYTES}",
            config.max_bytes, config.min_bytes, config.min_bytes
        ));
    }
    if let Some(file) = &args.write {
        return match mpquic_netsim::soak::generate(&config) {
            Ok((_, text, _)) => match std::fs::write(file, text) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("{}: {e}", file.display());
                    ExitCode::from(RUN_FAILED)
                }
            },
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        };
    }
    let t0 = wall_now();
    let mut soak = match Soak::new(config.clone()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("soak: {e}");
            return ExitCode::from(RUN_FAILED);
        }
    };
    eprintln!(
        "soak: {} connections, {} s simulated, seed {}, {} client hosts (built in {:.1} s)",
        config.connections,
        config.duration.as_secs(),
        config.seed,
        config.hosts,
        t0.elapsed().as_secs_f64()
    );
    loop {
        match soak.step() {
            Ok(Some(p)) => eprintln!(
                "  {:>7.1} s simulated, {:>7.1} s wall: {:>5} started, {:>5} completed, heap {}, RSS {}",
                p.at.since_epoch().as_secs_f64(),
                t0.elapsed().as_secs_f64(),
                p.started,
                p.completed,
                mib(p.heap),
                mib(p.rss)
            ),
            Ok(None) => break,
            Err(e) => {
                eprintln!("soak: {e}");
                return ExitCode::from(RUN_FAILED);
            }
        }
    }
    let wall = t0.elapsed();
    let r = soak.finish();
    let m = &r.memory;
    let d = &r.drawn;
    println!(
        "soak: seed {}, {} connections over {} s simulated",
        config.seed,
        config.connections,
        config.duration.as_secs()
    );
    println!("  wall time            {:.1} s", wall.as_secs_f64());
    println!(
        "  transfers intact     {} / {} ({:.1} MB delivered; last completed at {})",
        r.intact,
        config.connections,
        r.delivered as f64 / 1e6,
        r.last_completion.map_or("-".to_owned(), |t| t.to_string())
    );
    println!(
        "  connections          {} multipath, {} downloads, {} paths",
        d.multipath, d.downloads, d.paths
    );
    if let Some((mean, median, max)) = r.transfer_times {
        println!(
            "  transfer times       mean {:.1} s, median {:.1} s, max {:.1} s",
            mean.as_secs_f64(),
            median.as_secs_f64(),
            max.as_secs_f64()
        );
    }
    println!(
        "  path churn           {} opened, {} abandoned (dead-path policy), {} closed at their stop ({} scheduled)",
        r.paths_opened, r.paths_abandoned, r.paths_closed, d.scheduled_closes
    );
    println!(
        "  network              {} link outages, {} loss changes; {} datagrams, {} unroutable",
        d.outages, d.loss_changes, r.stats.datagrams, r.stats.unroutable
    );
    println!(
        "  heap                 baseline {}, built {}, peak {}, end {}",
        mib(m.heap_baseline),
        mib(m.heap_built),
        mib(m.heap_peak),
        mib(m.heap_end)
    );
    println!(
        "  heap per connection  setup {}, end (idle) {}, peak {}",
        kib(m.setup_per_connection()),
        kib(m.per_connection_end()),
        kib(m.per_connection_peak())
    );
    println!(
        "  RSS                  baseline {}, peak {} ({} per connection)",
        mib(m.rss_baseline),
        mib(m.rss_peak),
        kib(m.rss_per_connection())
    );
    if r.passed() {
        ExitCode::SUCCESS
    } else {
        for (f, bytes, fin, delivered) in r.incomplete.iter().take(20) {
            eprintln!("  flow f{f}: {delivered} of {bytes} bytes delivered, FIN at {fin:?}");
        }
        eprintln!("soak: {} transfer(s) incomplete", r.incomplete.len());
        ExitCode::from(RUN_FAILED)
    }
}

/// Runs the reference case `args.runs` times and prints each run's figures and the best and median speed.
fn bench_cmd(args: &BenchArgs) -> ExitCode {
    let case = BenchCase {
        rate_bps: args.rate,
        duration: args.duration,
        crypto: match args.crypto {
            CryptoArg::Aes128gcm => mpquic_netsim::scenario::Crypto::Aes128gcm,
            CryptoArg::Null => mpquic_netsim::scenario::Crypto::Null,
        },
    };
    let scenario = match case.scenario() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("bench: {}", case.describe());
    let mut speeds = Vec::new();
    let mut cpu_speeds = Vec::new();
    for k in 1..=args.runs {
        let t0 = wall_now();
        let cpu0 = thread_cpu_time();
        let out = match Engine::run(scenario.clone()) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("bench: run {k} failed: {e}");
                return ExitCode::from(RUN_FAILED);
            }
        };
        // A kernel without scheduler statistics reports 0 throughout.
        let cpu = thread_cpu_time()
            .zip(cpu0)
            .map(|(b, a)| b.saturating_sub(a))
            .filter(|d| !d.is_zero());
        let f = Figures::of(&case, &out, t0.elapsed(), cpu);
        let cpu_text = match (f.cpu, f.speed_cpu) {
            (Some(c), Some(s)) => format!(", {:.2} s CPU ({s:.2} simulated s per CPU s)", c.as_secs_f64()),
            _ => String::new(),
        };
        println!(
            "  run {k}: {:.2} s wall, {:.2} simulated s per wall s{cpu_text}, goodput {:.1} Mbit/s, \
             {} datagrams ({:.0} per wall s, {:.0} per simulated s)",
            f.wall.as_secs_f64(),
            f.speed,
            f.goodput_bps / 1e6,
            f.datagrams,
            f.datagrams_per_wall_s,
            f.datagrams_per_sim_s
        );
        speeds.push(f.speed);
        cpu_speeds.extend(f.speed_cpu);
    }
    let best = speeds.iter().copied().fold(0.0, f64::max);
    if let Some(median) = bench::median(&speeds) {
        println!(
            "  simulated s per wall s: best {best:.2}, median {median:.2} ({} runs)",
            speeds.len()
        );
    }
    let best = cpu_speeds.iter().copied().fold(0.0, f64::max);
    if let Some(median) = bench::median(&cpu_speeds) {
        println!("  simulated s per CPU s: best {best:.2}, median {median:.2}");
    }
    ExitCode::SUCCESS
}

/// CPU time the calling thread has run, from Linux's `/proc/thread-self/schedstat` (its first field, in
/// nanoseconds); `None` elsewhere.
fn thread_cpu_time() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

fn validate(files: Vec<PathBuf>) -> ExitCode {
    let mut failed = false;
    for file in files {
        match Scenario::from_file(&file) {
            Ok(scenario) => match scenario.topology() {
                Ok(topology) => {
                    println!("{}: ok", file.display());
                    print!("{}", scenario.summary(&topology));
                }
                Err(e) => {
                    eprintln!("{}: {e}", file.display());
                    failed = true;
                }
            },
            Err(e) => {
                eprintln!("{}: {e}", file.display());
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Wall-clock time since `start` (the binary may read the clock; the engine never does).
#[allow(clippy::disallowed_methods)]
fn wall_now() -> Instant {
    Instant::now()
}

/// Runs one scenario, printing progress on stderr once it has taken more than two seconds.
fn simulate(scenario: Scenario, label: &str) -> Result<RunOutput, String> {
    simulate_with(scenario, label, &|line| eprintln!("{line}"))
}

/// Runs one scenario, handing a progress line to `status` every second once it has taken more than two.
fn simulate_with(scenario: Scenario, label: &str, status: &dyn Fn(&str)) -> Result<RunOutput, String> {
    let started = wall_now();
    let mut engine = Engine::new(scenario).map_err(|e| e.to_string())?;
    let end = engine.end();
    let step = Duration::from_millis(250);
    let mut last_report = started;
    while engine.now() < end {
        let next = engine.now().saturating_add(step);
        engine.run_until(next).map_err(|e| e.to_string())?;
        let now = wall_now();
        if now.duration_since(started) > Duration::from_secs(2)
            && now.duration_since(last_report) >= Duration::from_secs(1)
        {
            last_report = now;
            status(&format!(
                "{label}: {:.1} / {:.1} s simulated ({:.1} s wall)",
                engine.now().since_epoch().as_secs_f64(),
                end.since_epoch().as_secs_f64(),
                now.duration_since(started).as_secs_f64()
            ));
        }
    }
    Ok(engine.finish())
}

fn read(args: &RunArgs) -> Result<String, ExitCode> {
    std::fs::read_to_string(&args.file).map_err(|e| {
        eprintln!("{}: {e}", args.file.display());
        ExitCode::FAILURE
    })
}

/// Writes the CSV files and plots of one run into `csv` and `plot`, with plots of the controller metrics
/// `metrics` that the run reports.
fn write_series(
    out: &RunOutput,
    csv: Option<&PathBuf>,
    plot: Option<&PathBuf>,
    metrics: &[String],
) -> Result<(), String> {
    if let Some(dir) = csv {
        output::csv::write_series(dir, &out.series).map_err(|e| e.to_string())?;
    }
    if let Some(dir) = plot {
        let title = format!("{} (seed {})", out.result.scenario, out.result.seed);
        output::plot::write_plots(dir, &title, &out.series).map_err(|e| e.to_string())?;
        let reported = output::plot::metric_names(&out.series);
        let present: Vec<String> = metrics.iter().filter(|m| reported.contains(m)).cloned().collect();
        output::plot::write_metric_plots(dir, &title, &out.series, &present).map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn run(args: &RunArgs) -> ExitCode {
    let text = match read(args) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let mut scenario = match Scenario::from_toml_str(&text) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{}: {e}", args.file.display());
            return ExitCode::FAILURE;
        }
    };
    if let Some(seed) = args.seed {
        scenario.scenario.seed = seed;
    }
    scenario.sweep = None;
    let label = scenario.scenario.name.clone();
    let out = match simulate(scenario, &label) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{}: run failed: {e}", args.file.display());
            return ExitCode::from(RUN_FAILED);
        }
    };
    if args.json {
        match output::json::to_json(&out.result) {
            Ok(j) => println!("{j}"),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(RUN_FAILED);
            }
        }
    } else {
        print!("{}", table::summary(&out.result));
    }
    let reported = output::plot::metric_names(&out.series);
    if let Some(missing) = args.plot_cc.iter().find(|m| !reported.contains(m)) {
        eprintln!(
            "mpquic-sim: --plot-cc: no path of this run reports the controller metric `{missing}` (its metrics: {})",
            reported.join(", ")
        );
        return ExitCode::from(USAGE);
    }
    if let Err(e) = write_series(&out, args.csv.as_ref(), args.plot.as_ref(), &args.plot_cc) {
        eprintln!("{e}");
        return ExitCode::from(RUN_FAILED);
    }
    ExitCode::SUCCESS
}

/// Whether progress goes to a terminal (a bar) or elsewhere (plain lines).
fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// Prints a sweep's results as the unsharded `sweep` does: a table, or JSON with `json`.
fn print_sweep(rows: Vec<table::SweepRow>, indices: &[usize], json: bool) -> ExitCode {
    if json {
        let values: Vec<serde_json::Value> = rows
            .iter()
            .zip(indices)
            .map(|(row, index)| {
                serde_json::json!({
                    "index": index,
                    "settings": row.settings,
                    "seed": row.seed,
                    "result": row.result,
                })
            })
            .collect();
        match output::json::value_to_json(&values) {
            Ok(j) => println!("{j}"),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(RUN_FAILED);
            }
        }
    } else {
        print!("{}", table::sweep(&rows));
    }
    ExitCode::SUCCESS
}

fn sweep_cmd(args: &SweepArgs) -> ExitCode {
    let file = &args.run.file;
    let text = match read(&args.run) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let runs = match sweep::expand(&text) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{}: {e}", file.display());
            return ExitCode::FAILURE;
        }
    };
    let total = runs.len();
    // `--out` without `--shard` is the one slice of one.
    let shard = args
        .out
        .as_ref()
        .map(|_| args.shard.unwrap_or(Shard { k: 1, n: 1 }));
    let runs: Vec<_> = runs
        .into_iter()
        .filter(|r| shard.is_none_or(|s| s.takes(r.index)))
        .collect();
    let short = file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let name = match shard {
        Some(s) => format!("{short} {}/{}", s.k, s.n),
        None => short,
    };
    let progress = Progress::new(&name, runs.len() as u64, stderr_is_terminal());
    let mut rows = Vec::with_capacity(runs.len());
    let mut indices = Vec::with_capacity(runs.len());
    for run in runs {
        let label = format!(
            "run {}/{total} ({})",
            run.index.saturating_add(1),
            sweep::describe(&run.settings, run.seed)
        );
        progress.status(&label);
        let out = match simulate_with(run.scenario, &label, &|line| progress.status(line)) {
            Ok(o) => o,
            Err(e) => {
                progress.finish();
                eprintln!("{}: {label} failed: {e}", file.display());
                return ExitCode::from(RUN_FAILED);
            }
        };
        let sub = |d: &PathBuf| d.join(format!("run{}", run.index));
        if let Err(e) = write_series(
            &out,
            args.run.csv.as_ref().map(sub).as_ref(),
            args.run.plot.as_ref().map(sub).as_ref(),
            &args.run.plot_cc,
        ) {
            progress.finish();
            eprintln!("{e}");
            return ExitCode::from(RUN_FAILED);
        }
        progress.run_done();
        indices.push(run.index);
        rows.push(table::SweepRow {
            settings: run.settings,
            seed: run.seed,
            result: out.result,
        });
    }
    progress.finish();
    let (Some(shard), Some(dir)) = (shard, args.out.as_ref()) else {
        return print_sweep(rows, &indices, args.run.json);
    };
    let file_out = ShardFile {
        format: shard::FORMAT,
        kind: Kind::Sweep,
        source: file.clone(),
        fingerprint: shard::fingerprint([text.as_bytes()]),
        quick: false,
        shard,
        total,
        runs: rows
            .into_iter()
            .zip(indices)
            .map(|(row, index)| ShardRun {
                part: None,
                index,
                position: index,
                settings: row.settings,
                seed: row.seed,
                result: row.result,
                plotted: false,
                summary: Default::default(),
            })
            .collect(),
    };
    match file_out.write(dir) {
        Ok(path) => {
            println!("{}", path.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(RUN_FAILED)
        }
    }
}

/// The study with only the runs of `shard` (positions over all parts in order, as `Study::run` numbers
/// them).
fn study_slice(s: &Study, shard: Shard) -> Study {
    let mut slice = s.clone();
    let mut position = 0usize;
    for part in &mut slice.parts {
        part.runs.retain(|_| {
            let take = shard.takes(position);
            position = position.saturating_add(1);
            take
        });
    }
    slice
}

/// Whether `record` of `part` is the first seed of its setting in the whole part (the run the report plots).
fn plotted(part: &study::Part, record: &RunRecord) -> bool {
    part.spec.plots
        && part
            .runs
            .iter()
            .find(|r| r.settings == record.settings)
            .is_some_and(|r| r.index == record.index)
}

/// Runs slice `shard` of study `s`: writes the plots of its plotted runs where the report expects them and
/// the shard file into `out/NAME/`; returns the shard file's path.
fn study_shard(
    s: &Study,
    shard: Shard,
    outcomes: Vec<PartOutcome>,
    out: &std::path::Path,
) -> Result<PathBuf, String> {
    let root = out.join(&s.header.name);
    let mut positions = std::collections::BTreeMap::new();
    let mut position = 0usize;
    for part in &s.parts {
        for run in &part.runs {
            positions.insert((part.spec.name.clone(), run.index), position);
            position = position.saturating_add(1);
        }
    }
    let mut runs = Vec::new();
    for (part, outcome) in s.parts.iter().zip(outcomes) {
        for record in outcome.runs {
            let is_plotted = plotted(part, &record);
            if is_plotted {
                if let Some(series) = &record.series {
                    // As the report names and titles them (study::report::write).
                    let dir = root.join(&part.spec.name).join(format!("run{}", record.index));
                    let title = format!(
                        "{} {} (seed {})",
                        s.header.name,
                        record.setting_label(),
                        record.seed
                    );
                    output::plot::write_plots(&dir, &title, series).map_err(|e| e.to_string())?;
                }
            }
            runs.push(ShardRun {
                part: Some(part.spec.name.clone()),
                index: record.index,
                position: positions
                    .get(&(part.spec.name.clone(), record.index))
                    .copied()
                    .unwrap_or(usize::MAX),
                settings: record.settings,
                seed: record.seed,
                result: record.result,
                plotted: is_plotted,
                summary: record.summary,
            });
        }
    }
    let file = ShardFile {
        format: shard::FORMAT,
        kind: Kind::Study,
        source: s.manifest.clone(),
        fingerprint: shard::study_fingerprint(s).map_err(|e| e.to_string())?,
        quick: s.quick,
        shard,
        total: s.run_count(),
        runs,
    };
    file.write(&root).map_err(|e| e.to_string())
}

/// The studies directory `study` reads when `--dir` is not given.
const DEFAULT_STUDIES_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/studies");

/// How a report's reproduce command names study `name`: as the command line named it (a manifest path
/// stays that path), and with `--dir` when the manifests came from another directory than the default.
fn study_ref(args: &StudyArgs, name: &str) -> String {
    if args.name != "all" && args.name != name {
        return args.name.clone();
    }
    if args.dir == Path::new(DEFAULT_STUDIES_DIR) {
        name.to_string()
    } else {
        format!("{name} --dir {}", args.dir.display())
    }
}

/// How a merged report's reproduce command names the study whose manifest the shards ran: by name when the
/// manifest is one of the default directory's (what `study NAME` finds), otherwise by the manifest's path
/// (the shard files do not say whether the shards were started by name with `--dir` or by path; the path
/// names the same study either way).
fn manifest_ref(manifest: &Path, name: &str) -> String {
    if manifest.parent() == Some(Path::new(DEFAULT_STUDIES_DIR)) {
        name.to_string()
    } else {
        manifest.display().to_string()
    }
}

/// Runs one study or all of them; prints each report's path (or each shard file's with --shard).
fn study_cmd(args: &StudyArgs) -> ExitCode {
    let manifests = if args.name == "all" {
        study::list(&args.dir)
    } else {
        study::find(&args.dir, &args.name).map(|m| vec![m])
    };
    let manifests = match manifests {
        Ok(m) if m.is_empty() => {
            eprintln!("{}: no *{} files", args.dir.display(), study::MANIFEST_SUFFIX);
            return ExitCode::FAILURE;
        }
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    // Load (and so validate) every study before running any.
    let mut studies = Vec::with_capacity(manifests.len());
    for manifest in &manifests {
        match Study::load(manifest, args.quick) {
            Ok(s) => studies.push(s),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .max(1);
    let started = wall_now();
    let mut index = String::from("| study | runs | wall s | report |\n|---|---|---|---|\n");
    for full in &studies {
        let s = match args.shard {
            Some(shard) => study_slice(full, shard),
            None => full.clone(),
        };
        let name = s.header.name.clone();
        let t0 = wall_now();
        // `Study::run` uses no more threads than there are runs.
        let threads = jobs.min(s.run_count().max(1));
        let progress = Progress::new(
            &format!("study {name}"),
            s.run_count() as u64,
            stderr_is_terminal(),
        );
        progress.println(&format!(
            "study {name}: {} runs on {threads} thread(s){}",
            s.run_count(),
            args.shard.map_or_else(String::new, |k| format!(
                " (shard {}/{} of {} runs)",
                k.k,
                k.n,
                full.run_count()
            ))
        ));
        let run_one = |scenario: Scenario, label: &str| {
            progress.status(label);
            let r = simulate_with(scenario, label, &|line| progress.status(line));
            progress.run_done();
            r
        };
        let result = s.run(jobs, run_one);
        progress.finish();
        let outcomes = match result {
            Ok(o) => o,
            Err(e @ StudyError::Run { .. }) => {
                eprintln!("study {name}: {e}");
                return ExitCode::from(RUN_FAILED);
            }
            Err(e) => {
                eprintln!("study {name}: {e}");
                return ExitCode::FAILURE;
            }
        };
        let wall = wall_now().duration_since(t0).as_secs_f64();
        if let Some(shard) = args.shard {
            match study_shard(full, shard, outcomes, &args.out) {
                Ok(path) => println!(
                    "{name}: {} runs, {wall:.1} s wall: {}",
                    s.run_count(),
                    path.display()
                ),
                Err(e) => {
                    eprintln!("study {name}: {e}");
                    return ExitCode::from(RUN_FAILED);
                }
            }
            continue;
        }
        let quick = if args.quick { " --quick" } else { "" };
        let command = format!("mpquic-sim study {}{quick}", study_ref(args, &name));
        match study::report::write(&args.out, &s, &outcomes, &command, Some(wall)) {
            Ok(report) => {
                println!(
                    "{name}: {} runs, {wall:.1} s wall: {}",
                    s.run_count(),
                    report.display()
                );
                index.push_str(&format!(
                    "| {name} | {} | {wall:.1} | [{name}/report.md]({name}/report.md) |\n",
                    s.run_count()
                ));
            }
            Err(e) => {
                eprintln!("study {name}: {e}");
                return ExitCode::from(RUN_FAILED);
            }
        }
    }
    if studies.len() > 1 && args.shard.is_none() {
        let total = wall_now().duration_since(started).as_secs_f64();
        index.push_str(&format!("\nTotal wall time {total:.1} s.\n"));
        let path = args.out.join("index.md");
        if let Err(e) = std::fs::write(&path, index) {
            eprintln!("{}: {e}", path.display());
            return ExitCode::from(RUN_FAILED);
        }
        println!(
            "all: {} studies, {total:.1} s wall: {}",
            studies.len(),
            path.display()
        );
    }
    ExitCode::SUCCESS
}

/// `merge`: the shards of one sweep (printed as `sweep` prints) or one study (its report written).
fn merge_cmd(args: &MergeArgs) -> ExitCode {
    let merged = match shard::collect(&args.dirs) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("merge: {e}");
            return ExitCode::FAILURE;
        }
    };
    match merged.kind {
        Kind::Sweep => {
            let indices: Vec<usize> = merged.runs.iter().map(|r| r.index).collect();
            let rows = merged
                .runs
                .into_iter()
                .map(|r| table::SweepRow {
                    settings: r.settings,
                    seed: r.seed,
                    result: r.result,
                })
                .collect();
            print_sweep(rows, &indices, args.json)
        }
        Kind::Study => merge_study(args, merged),
    }
}

fn merge_study(args: &MergeArgs, merged: shard::Merged) -> ExitCode {
    let s = match Study::load(&merged.source, merged.quick) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("merge: {e}");
            return ExitCode::FAILURE;
        }
    };
    match shard::study_fingerprint(&s) {
        Ok(f) if f == merged.fingerprint => {}
        Ok(_) => {
            eprintln!(
                "merge: {} or its scenario files changed since the shards ran",
                merged.source.display()
            );
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("merge: {e}");
            return ExitCode::FAILURE;
        }
    }
    let mut by_part: std::collections::BTreeMap<String, Vec<RunRecord>> = std::collections::BTreeMap::new();
    for r in merged.runs {
        by_part
            .entry(r.part.unwrap_or_default())
            .or_default()
            .push(RunRecord {
                settings: r.settings,
                seed: r.seed,
                index: r.index,
                result: r.result,
                // The shard wrote the plots; the report links them.
                series: r.plotted.then(Vec::new),
                summary: r.summary,
            });
    }
    let mut outcomes = Vec::with_capacity(s.parts.len());
    for part in &s.parts {
        let mut runs = by_part.remove(&part.spec.name).unwrap_or_default();
        runs.sort_by_key(|r| r.index);
        if runs.len() != part.runs.len() {
            eprintln!(
                "merge: part \"{}\" has {} runs in the shards, the study {}",
                part.spec.name,
                runs.len(),
                part.runs.len()
            );
            return ExitCode::FAILURE;
        }
        outcomes.push(PartOutcome {
            name: part.spec.name.clone(),
            replicate: part.spec.replicate.clone(),
            runs,
        });
    }
    let quick = if merged.quick { " --quick" } else { "" };
    let command = format!(
        "mpquic-sim study {}{quick} --shard K/{} (K = 1 … {}), then mpquic-sim merge",
        manifest_ref(&merged.source, &s.header.name),
        merged.shards,
        merged.shards
    );
    match study::report::write(&args.out, &s, &outcomes, &command, None) {
        Ok(report) => {
            println!(
                "{}: {} runs merged from {} shards: {}",
                s.header.name,
                s.run_count(),
                merged.shards,
                report.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("merge: {e}");
            ExitCode::from(RUN_FAILED)
        }
    }
}
