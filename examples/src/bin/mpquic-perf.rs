//! `mpquic-perf`: multipath QUIC throughput client and server (see `mpquic-perf --help`).

use std::process::ExitCode;

use clap::Parser;
use mpquic_tools::perf::{cli::Cli, main_with};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) => {
            // One line naming what is valid, and exit code 2 (clap's own rendering adds a usage block).
            let text = e.to_string();
            let first = text
                .lines()
                .next()
                .unwrap_or("bad arguments")
                .trim_start_matches("error: ");
            eprintln!("mpquic-perf: {first}");
            return ExitCode::from(2);
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt.block_on(main_with(cli)),
        Err(e) => {
            eprintln!("mpquic-perf: cannot start the runtime: {e}");
            ExitCode::FAILURE
        }
    }
}
