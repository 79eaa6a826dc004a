//! `mpquic-netem`: a user-space UDP link emulator (see `mpquic-netem --help` and `mpquic_tools::netem`).

use std::process::ExitCode;

fn main() -> ExitCode {
    mpquic_tools::netem::cli::main()
}
