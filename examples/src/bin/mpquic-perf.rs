//! `mpquic-perf`: multipath QUIC throughput client and server (see `mpquic-perf --help`).

use std::process::ExitCode;

use mpquic_tools::cli_exit::run_tool;
use mpquic_tools::perf::{cli::Cli, main_with};

fn main() -> ExitCode {
    run_tool::<Cli, _>("mpquic-perf", main_with)
}
