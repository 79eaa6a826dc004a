//! `mpquic-sim`: validate, run and sweep scenario files.
//!
//! Exit codes: 0 success, 1 invalid scenario (or unreadable file), 2 clap's code for bad command-line usage,
//! 3 a run failed (engine error) or an output could not be written.
//!
//! Runs that take more than two seconds of wall time report their progress on stderr.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use mpquic_netsim::Scenario;
use mpquic_netsim::engine::{Engine, RunOutput};
use mpquic_netsim::output::{self, table};
use mpquic_netsim::scenario::sweep;

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
    /// Run a scenario across its `[sweep]` values and seeds.
    Sweep(RunArgs),
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
    /// Seed for `run` (overrides `scenario.seed`); `sweep` uses the seeds of its `[sweep]` section.
    #[arg(long)]
    seed: Option<u64>,
}

/// Exit code of a failed run or output.
const RUN_FAILED: u8 = 3;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Validate { files } => validate(files),
        Command::Run(args) => run(&args),
        Command::Sweep(args) => sweep_cmd(&args),
    }
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
            eprintln!(
                "{label}: {:.1} / {:.1} s simulated ({:.1} s wall)",
                engine.now().since_epoch().as_secs_f64(),
                end.since_epoch().as_secs_f64(),
                now.duration_since(started).as_secs_f64()
            );
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

/// Writes the CSV files and plots of one run into `csv` and `plot`.
fn write_series(out: &RunOutput, csv: Option<&PathBuf>, plot: Option<&PathBuf>) -> Result<(), String> {
    if let Some(dir) = csv {
        output::csv::write_series(dir, &out.series).map_err(|e| e.to_string())?;
    }
    if let Some(dir) = plot {
        let title = format!("{} (seed {})", out.result.scenario, out.result.seed);
        output::plot::write_plots(dir, &title, &out.series).map_err(|e| e.to_string())?;
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
    if let Err(e) = write_series(&out, args.csv.as_ref(), args.plot.as_ref()) {
        eprintln!("{e}");
        return ExitCode::from(RUN_FAILED);
    }
    ExitCode::SUCCESS
}

fn sweep_cmd(args: &RunArgs) -> ExitCode {
    let text = match read(args) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let runs = match sweep::expand(&text) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{}: {e}", args.file.display());
            return ExitCode::FAILURE;
        }
    };
    let total = runs.len();
    let mut rows = Vec::with_capacity(total);
    let mut json = Vec::with_capacity(total);
    for run in runs {
        let label = format!(
            "run {}/{total} ({})",
            run.index.saturating_add(1),
            sweep::describe(&run.settings, run.seed)
        );
        eprintln!("{label}");
        let out = match simulate(run.scenario, &label) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("{}: {label} failed: {e}", args.file.display());
                return ExitCode::from(RUN_FAILED);
            }
        };
        let sub = |d: &PathBuf| d.join(format!("run{}", run.index));
        if let Err(e) = write_series(
            &out,
            args.csv.as_ref().map(sub).as_ref(),
            args.plot.as_ref().map(sub).as_ref(),
        ) {
            eprintln!("{e}");
            return ExitCode::from(RUN_FAILED);
        }
        if args.json {
            json.push(serde_json::json!({
                "index": run.index,
                "settings": run.settings,
                "seed": run.seed,
                "result": out.result,
            }));
        }
        rows.push(table::SweepRow {
            settings: run.settings,
            seed: run.seed,
            result: out.result,
        });
    }
    if args.json {
        match output::json::value_to_json(&json) {
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
