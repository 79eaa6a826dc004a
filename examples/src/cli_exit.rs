//! Command-line parsing shared by the binaries: a usage error is one line on stderr naming what is valid, and
//! exit code 2 (clap's own rendering adds a usage block); `--help` and `--version` print as usual.

use std::process::ExitCode;

use clap::Parser;

/// Parses the command line, or returns the exit code after printing `program: <one-line error>`.
pub fn parse_or_usage_error<T: Parser>(program: &str) -> Result<T, ExitCode> {
    match T::try_parse() {
        Ok(args) => Ok(args),
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
                if !rest.is_empty() {
                    first = format!("{first} {}", rest.join(", "));
                }
            } else if let Some(values) = lines.map(str::trim).find(|l| l.starts_with("[possible values:")) {
                // An enumerated option's valid choices follow on a line of their own.
                first = format!("{first} {values}");
            }
            eprintln!("{program}: {}", first.trim_start_matches("error: "));
            Err(ExitCode::from(2))
        }
    }
}

/// Logs to stderr, filtered by `RUST_LOG`.
pub fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();
}

/// The whole `main` of a tool whose work is one async function: parses the command line (usage errors as in
/// [`parse_or_usage_error`]), sets up logging, and runs `main_with` on a multi-threaded tokio runtime.
pub fn run_tool<T, F>(program: &str, main_with: impl FnOnce(T) -> F) -> ExitCode
where
    T: Parser,
    F: std::future::Future<Output = ExitCode>,
{
    let cli: T = match parse_or_usage_error(program) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    init_tracing();
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt.block_on(main_with(cli)),
        Err(e) => {
            eprintln!("{program}: cannot start the runtime: {e}");
            ExitCode::FAILURE
        }
    }
}
