//! `mpquic-interop`: runs the interop matrix (default) or acts as one endpoint (`endpoint mpquic|noq|quinn`,
//! configured by the quic-interop-runner environment). See `interop/README.md`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mpquic_interop::endpoint::Builtin;
use mpquic_interop::env::EndpointEnv;
use mpquic_interop::runner::{self, RunnerConfig, implementations, matrix};
use mpquic_interop::{InteropError, TestCase};

#[derive(Parser)]
#[command(name = "mpquic-interop", about = "Multipath QUIC interop runner")]
struct Cli {
    #[command(subcommand)]
    command: Option<Cmd>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum Cmd {
    /// Act as one endpoint, configured by ROLE, TESTCASE, REQUESTS, WWW, DOWNLOADS, CERTS, ... (see the README).
    Endpoint {
        /// mpquic, noq or quinn.
        implementation: String,
    },
    /// List implementations and test cases.
    List,
    /// Time to complete one download through emulated paths, pair by pair (see the README).
    Bench(BenchArgs),
}

#[derive(clap::Args)]
struct BenchArgs {
    /// `client:server` pairs, comma-separated; the first is the reference of the ratio column.
    #[arg(long, value_delimiter = ',', default_value = "noq:noq,mpquic:mpquic", value_parser = parse_pair)]
    pairs: Vec<(String, String)>,
    /// One emulated path, `mpquic-netem --path` syntax (e.g. `rate=40mbit,delay=5ms,loss=1%`); repeat for
    /// more paths (two or more: a multipath download, the client's second path from 127.0.0.2).
    #[arg(long = "path", value_name = "SPEC", required = true, value_parser = parse_link)]
    paths: Vec<mpquic_tools::netem::spec::PathSpec>,
    /// Size of the downloaded file: bytes, or with K, M or G (powers of 1000); 1 byte to 4G.
    #[arg(long, default_value = "30M", value_parser = parse_size)]
    size: u64,
    /// Runs per pair: 1 to 100.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=100))]
    runs: u16,
    /// TOML file declaring external implementations.
    #[arg(long)]
    implementations: Option<PathBuf>,
    /// Log folder (runs go to <logs>/bench/<client>_<server>/run-K/).
    #[arg(long, default_value = "interop-logs")]
    logs: PathBuf,
    /// Also write the runs as JSON here (default: <logs>/bench.json).
    #[arg(long)]
    json: Option<PathBuf>,
}

fn parse_pair(s: &str) -> Result<(String, String), String> {
    match s.split_once(':') {
        Some((c, v)) if !c.is_empty() && !v.is_empty() => Ok((c.to_owned(), v.to_owned())),
        _ => Err(format!("pair {s:?}: give CLIENT:SERVER, e.g. mpquic:noq")),
    }
}

fn parse_link(s: &str) -> Result<mpquic_tools::netem::spec::PathSpec, String> {
    mpquic_tools::netem::spec::parse_path(s).map_err(|e| e.to_string())
}

fn parse_size(s: &str) -> Result<u64, String> {
    let (num, mult) = match s.char_indices().last() {
        Some((i, 'K' | 'k')) => (s.get(..i), 1_000),
        Some((i, 'M' | 'm')) => (s.get(..i), 1_000_000),
        Some((i, 'G' | 'g')) => (s.get(..i), 1_000_000_000),
        _ => (Some(s), 1),
    };
    let n: u64 = num
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("size {s:?}: give a number of bytes, optionally with K, M or G"))?;
    match n.checked_mul(mult) {
        Some(v) if (1..=4_000_000_000).contains(&v) => Ok(v),
        _ => Err(format!("size {s:?}: must be from 1 byte to 4G")),
    }
}

fn bench(args: BenchArgs) -> Result<bool, InteropError> {
    let exe = std::env::current_exe().map_err(|e| InteropError::io("own executable", e))?;
    let cfg = runner::bench::BenchConfig {
        implementations: implementations::load(&exe, args.implementations.as_ref())?,
        pairs: args.pairs,
        links: args
            .paths
            .into_iter()
            .map(|p| p.into_path(std::net::SocketAddr::from(([127, 0, 0, 1], 0))))
            .collect(),
        size: args.size,
        runs: usize::from(args.runs),
        log_dir: args.logs.clone(),
    };
    let rows = runtime()?.block_on(runner::bench::run_bench(&cfg))?;
    println!("{}", runner::bench::table(&rows, &cfg.pairs, cfg.size));
    let json_path = args.json.unwrap_or_else(|| args.logs.join("bench.json"));
    std::fs::create_dir_all(&args.logs).map_err(|e| InteropError::io("log folder", e))?;
    std::fs::write(&json_path, runner::bench::json(&rows))
        .map_err(|e| InteropError::io(format!("writing {}", json_path.display()), e))?;
    println!("JSON: {}; logs: {}", json_path.display(), args.logs.display());
    Ok(!rows
        .iter()
        .any(|r| matches!(r.outcome, runner::Outcome::Failed(_))))
}

#[derive(clap::Args)]
struct RunArgs {
    /// Client implementations (comma-separated; default: all).
    #[arg(long, value_delimiter = ',')]
    client: Vec<String>,
    /// Server implementations (comma-separated; default: all).
    #[arg(long, value_delimiter = ',')]
    server: Vec<String>,
    /// Only pairs that include this implementation (as client or server).
    #[arg(long)]
    only: Option<String>,
    /// Test cases (comma-separated; default: all).
    #[arg(long, value_delimiter = ',')]
    cases: Vec<String>,
    /// TOML file declaring external implementations.
    #[arg(long)]
    implementations: Option<PathBuf>,
    /// Log folder (one sub-folder per run).
    #[arg(long, default_value = "interop-logs")]
    logs: PathBuf,
    /// Also write the results as JSON here (default: <logs>/results.json).
    #[arg(long)]
    json: Option<PathBuf>,
}

fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .try_init();
}

fn runtime() -> Result<tokio::runtime::Runtime, InteropError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| InteropError::io("tokio runtime", e))
}

fn endpoint(name: &str) -> Result<i32, InteropError> {
    let builtin: Builtin = name.parse()?;
    let env = EndpointEnv::from_env()?;
    Ok(runtime()?.block_on(builtin.run(env)))
}

fn run(args: RunArgs) -> Result<bool, InteropError> {
    let exe = std::env::current_exe().map_err(|e| InteropError::io("own executable", e))?;
    let imps = implementations::load(&exe, args.implementations.as_ref())?;
    let all: Vec<String> = imps.iter().map(|i| i.name.clone()).collect();
    let pick = |v: Vec<String>| if v.is_empty() { all.clone() } else { v };
    let (clients, servers) = (pick(args.client), pick(args.server));
    if let Some(only) = &args.only {
        if !clients.contains(only) && !servers.contains(only) {
            return Err(InteropError::Unknown {
                kind: "implementation",
                name: only.clone(),
            });
        }
        // Pairs with `only` on either side.
        let cfg_pairs: Vec<(String, String)> = clients
            .iter()
            .flat_map(|c| servers.iter().map(move |s| (c.clone(), s.clone())))
            .filter(|(c, s)| c == only || s == only)
            .collect();
        return run_pairs(&imps, cfg_pairs, &args.cases, &args.logs, args.json.as_ref());
    }
    let pairs = clients
        .iter()
        .flat_map(|c| servers.iter().map(move |s| (c.clone(), s.clone())))
        .collect();
    run_pairs(&imps, pairs, &args.cases, &args.logs, args.json.as_ref())
}

fn run_pairs(
    imps: &[implementations::Implementation],
    pairs: Vec<(String, String)>,
    cases: &[String],
    logs: &std::path::Path,
    json: Option<&PathBuf>,
) -> Result<bool, InteropError> {
    let cases: Vec<TestCase> = if cases.is_empty() {
        TestCase::ALL.to_vec()
    } else {
        cases.iter().map(|c| c.parse()).collect::<Result<_, _>>()?
    };
    let rt = runtime()?;
    let mut results = Vec::new();
    for (c, s) in pairs {
        let cfg = RunnerConfig {
            implementations: imps.to_vec(),
            clients: vec![c],
            servers: vec![s],
            cases: cases.clone(),
            log_dir: logs.to_path_buf(),
        };
        results.extend(rt.block_on(runner::run_matrix(&cfg))?);
    }
    println!("{}", matrix::table(&results));
    let json_path = json.cloned().unwrap_or_else(|| logs.join("results.json"));
    std::fs::create_dir_all(logs).map_err(|e| InteropError::io("log folder", e))?;
    std::fs::write(&json_path, matrix::json(&results))
        .map_err(|e| InteropError::io(format!("writing {}", json_path.display()), e))?;
    println!("JSON: {}; logs: {}", json_path.display(), logs.display());
    Ok(!matrix::any_failed(&results))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing();
    let result = match cli.command {
        Some(Cmd::Endpoint { implementation }) => match endpoint(&implementation) {
            Ok(code) => return ExitCode::from(u8::try_from(code).unwrap_or(1)),
            Err(e) => Err(e),
        },
        Some(Cmd::List) => {
            println!("built-in implementations: mpquic, noq, quinn (plus those of --implementations FILE)");
            println!("test cases:");
            for c in TestCase::ALL {
                println!("  {c}");
            }
            Ok(true)
        }
        Some(Cmd::Bench(args)) => bench(args),
        None => run(cli.run),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("mpquic-interop: {e}");
            ExitCode::from(2)
        }
    }
}
