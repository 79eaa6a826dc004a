//! `mpquic-tunnel`: multipath IP tunnel over QUIC (see `mpquic-tunnel --help`).

use std::process::ExitCode;

use mpquic_tools::cli_exit::{init_tracing, parse_or_usage_error};
use mpquic_tools::tunnel::{cli::Cli, main_with};

fn main() -> ExitCode {
    let cli: Cli = match parse_or_usage_error("mpquic-tunnel") {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    init_tracing();
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt.block_on(main_with(cli)),
        Err(e) => {
            eprintln!("mpquic-tunnel: cannot start the runtime: {e}");
            ExitCode::FAILURE
        }
    }
}
