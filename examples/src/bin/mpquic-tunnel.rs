//! `mpquic-tunnel`: multipath IP tunnel over QUIC (see `mpquic-tunnel --help`).

use std::process::ExitCode;

use mpquic_tools::cli_exit::run_tool;
use mpquic_tools::tunnel::{cli::Cli, main_with};

fn main() -> ExitCode {
    run_tool::<Cli, _>("mpquic-tunnel", main_with)
}
