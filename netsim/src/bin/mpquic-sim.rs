//! `mpquic-sim`: validate scenario files now; run them and sweep them once the engine exists.
//!
//! Exit codes: 0 success, 1 invalid scenario (or unreadable file), 2 the engine is not yet available
//! (`run`, `sweep`), and clap's own code 2 for bad command-line usage.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mpquic_netsim::Scenario;
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
    /// Run a scenario once (needs the simulation engine: not yet available).
    Run(RunArgs),
    /// Run a scenario across its `[sweep]` values and seeds (needs the engine: not yet available).
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
    /// Write SVG plots (throughput, cwnd, RTT per path) into this directory.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
}

const ENGINE_MISSING: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Validate { files } => {
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
        Command::Run(args) | Command::Sweep(args) => {
            // Validate first so that a bad file is reported as such, then refuse honestly.
            let text = match std::fs::read_to_string(&args.file) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("{}: {e}", args.file.display());
                    return ExitCode::FAILURE;
                }
            };
            match sweep::expand(&text) {
                Ok(runs) => {
                    eprintln!(
                        "{}: valid ({} run{}), but the simulation engine is not yet available in this build; \
                         nothing was run",
                        args.file.display(),
                        runs.len(),
                        if runs.len() == 1 { "" } else { "s" }
                    );
                    ExitCode::from(ENGINE_MISSING)
                }
                Err(e) => {
                    eprintln!("{}: {e}", args.file.display());
                    ExitCode::FAILURE
                }
            }
        }
    }
}
