//! The runner: every (client, server, test case) in turn, each in its own log folder.
//!
//! For one run it writes the files to serve (`www/`), a self-signed certificate (`certs/`), starts the server
//! (`ROLE=server`), waits for its `interop: listening=` line (or the implementation's start-up time), starts
//! the network of the case ([`network`]), starts the client (`ROLE=client`) and performs the case's
//! mid-transfer actions as the downloads grow. When the client exits it gives the server a moment to print its
//! summary, stops it, compares every file by SHA-256 and runs the case's checks ([`checks`]). Exit code 127
//! from either endpoint means unsupported.

pub mod bench;
pub mod checks;
pub mod implementations;
pub mod matrix;
pub mod network;
pub mod relay;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::process::{Child, Command};

use crate::cases::TestCase;
use crate::endpoint::{EXIT_UNSUPPORTED, tls};
use crate::env::Role;
use crate::error::InteropError;
use crate::report::Report;
use implementations::{Implementation, expand};
use network::{Network, Plan};

/// How long a client may run.
const CLIENT_LIMIT: Duration = Duration::from_secs(120);
/// How long the server may take to print its summary after the client exited.
const SUMMARY_WAIT: Duration = Duration::from_secs(3);
/// How long a built-in server may take to start.
const READY_WAIT: Duration = Duration::from_secs(10);

/// The result of one run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "outcome", content = "reason", rename_all = "lowercase")]
pub enum Outcome {
    /// Files and behaviour as expected.
    Passed,
    /// Something failed (why).
    Failed(String),
    /// One side does not support the case.
    Unsupported,
}

/// One cell of the matrix.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CaseResult {
    /// Client implementation.
    pub client: String,
    /// Server implementation.
    pub server: String,
    /// Test case.
    pub case: String,
    /// Outcome.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Wall time of the run in milliseconds.
    pub duration_ms: u64,
    /// The run's log folder.
    pub log_dir: PathBuf,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct RunnerConfig {
    /// Every known implementation.
    pub implementations: Vec<Implementation>,
    /// Client names.
    pub clients: Vec<String>,
    /// Server names.
    pub servers: Vec<String>,
    /// Cases.
    pub cases: Vec<TestCase>,
    /// Root log folder (one sub-folder per run).
    pub log_dir: PathBuf,
}

/// `len` bytes that differ per `seed` (xorshift), fast enough for tens of megabytes in a debug build.
pub fn file_bytes(len: u64, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    while (out.len() as u64) < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        for b in x.to_le_bytes() {
            if (out.len() as u64) < len {
                out.push(b);
            }
        }
    }
    out
}

fn sha256_file(path: &Path) -> Option<[u8; 32]> {
    std::fs::read(path).ok().map(|d| Sha256::digest(&d).into())
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> InteropError {
    move |e| InteropError::io(what, e)
}

/// A free UDP port on 127.0.0.1 (bound, then released).
fn free_port() -> Result<u16, InteropError> {
    let s = std::net::UdpSocket::bind("127.0.0.1:0").map_err(io("free port".to_owned()))?;
    Ok(s.local_addr().map_err(io("free port".to_owned()))?.port())
}

struct Prepared {
    dir: PathBuf,
    files: Vec<(String, [u8; 32])>,
    total: u64,
}

fn prepare(
    dir: &Path,
    case: TestCase,
    sizes: &[u64],
    cert: &(String, String),
) -> Result<Prepared, InteropError> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(io(format!("clearing {}", dir.display())))?;
    }
    for sub in ["www", "downloads", "certs", "qlog/client", "qlog/server"] {
        std::fs::create_dir_all(dir.join(sub)).map_err(io(format!("creating {}/{sub}", dir.display())))?;
    }
    std::fs::write(dir.join("certs/cert.pem"), &cert.0).map_err(io("writing cert.pem".to_owned()))?;
    std::fs::write(dir.join("certs/priv.key"), &cert.1).map_err(io("writing priv.key".to_owned()))?;
    let mut files = Vec::new();
    let mut total = 0;
    for (i, &size) in sizes.iter().enumerate() {
        let name = format!("{}-{i}-{size}.bin", case.name());
        let data = file_bytes(size, (i as u64 + 1) * 7919 + size);
        std::fs::write(dir.join("www").join(&name), &data).map_err(io(format!("writing {name}")))?;
        files.push((name, Sha256::digest(&data).into()));
        total += size;
    }
    Ok(Prepared {
        dir: dir.to_path_buf(),
        files,
        total,
    })
}

fn spawn(
    imp: &Implementation,
    role: Role,
    vars: &BTreeMap<&str, String>,
    env: &[(&str, String)],
    dir: &Path,
) -> Result<Child, InteropError> {
    let argv = expand(imp.command(role), vars);
    let (prog, args) = argv
        .split_first()
        .ok_or_else(|| InteropError::Network(format!("{}: empty command", imp.name)))?;
    let out =
        std::fs::File::create(dir.join(format!("{}.out", role.name()))).map_err(io("log file".to_owned()))?;
    let err =
        std::fs::File::create(dir.join(format!("{}.err", role.name()))).map_err(io("log file".to_owned()))?;
    let mut cmd = Command::new(prog);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    for (k, v) in &imp.env {
        cmd.env(k, v);
    }
    cmd.spawn()
        .map_err(io(format!("starting {} {}: {prog}", imp.name, role.name())))
}

fn read_log(dir: &Path, role: Role) -> String {
    std::fs::read_to_string(dir.join(format!("{}.out", role.name()))).unwrap_or_default()
}

/// Bytes downloaded so far.
fn downloaded(p: &Prepared) -> u64 {
    p.files
        .iter()
        .filter_map(|(n, _)| std::fs::metadata(p.dir.join("downloads").join(n)).ok())
        .map(|m| m.len())
        .sum()
}

/// Runs one (client, server, case).
pub async fn run_one(
    client: &Implementation,
    server: &Implementation,
    case: TestCase,
    dir: &Path,
    cert: &(String, String),
) -> Outcome {
    if !client.supports(Role::Client, case) || !server.supports(Role::Server, case) {
        return Outcome::Unsupported;
    }
    let run = Run {
        case,
        plan: Plan::of(case),
        sizes: case.file_sizes(),
        checks: true,
    };
    match run_inner(client, server, &run, dir, cert).await {
        Ok(m) => m.outcome,
        Err(e) => Outcome::Failed(e.to_string()),
    }
}

/// What one run does: the case (the endpoints' `TESTCASE`), its network, the files and whether the case's
/// behaviour checks apply (the files are always compared).
#[derive(Debug, Clone)]
pub struct Run {
    /// The endpoints' test case.
    pub case: TestCase,
    /// The network between them.
    pub plan: Plan,
    /// Sizes of the files the client downloads.
    pub sizes: Vec<u64>,
    /// Whether the case's behaviour checks run.
    pub checks: bool,
}

/// The outcome of one run with what was measured.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Files and behaviour.
    pub outcome: Outcome,
    /// From the client's start to its exit (process start, handshake and every download).
    pub client_time: Duration,
    /// What the client reported (`interop:` lines).
    pub client: Report,
    /// What the server reported (`interop:` lines).
    pub server: Report,
    /// What the network counted.
    pub net: network::NetStats,
}

/// Runs one client/server pair as `run` says and measures it (`mpquic-interop bench`).
pub async fn run_measured(
    client: &Implementation,
    server: &Implementation,
    run: &Run,
    dir: &Path,
    cert: &(String, String),
) -> Result<Measured, InteropError> {
    run_inner(client, server, run, dir, cert).await
}

async fn run_inner(
    client: &Implementation,
    server: &Implementation,
    run: &Run,
    dir: &Path,
    cert: &(String, String),
) -> Result<Measured, InteropError> {
    let case = run.case;
    let mut measured = Measured {
        outcome: Outcome::Unsupported,
        client_time: Duration::ZERO,
        client: Report::default(),
        server: Report::default(),
        net: network::NetStats::default(),
    };
    let done = |outcome: Outcome, m: Measured| Ok(Measured { outcome, ..m });
    let p = prepare(dir, case, &run.sizes, cert)?;
    let port = free_port()?;
    let server_addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let d = |s: &str| dir.join(s).display().to_string();
    let mut vars: BTreeMap<&str, String> = BTreeMap::from([
        ("testcase", case.name().to_owned()),
        ("www", d("www")),
        ("downloads", d("downloads")),
        ("certs", d("certs")),
        ("cert", d("certs/cert.pem")),
        ("key", d("certs/priv.key")),
        ("listen_addr", server_addr.to_string()),
        ("listen_port", port.to_string()),
        ("server_host", "localhost".to_owned()),
    ]);
    // ----- server -----
    vars.insert("role", "server".to_owned());
    vars.insert("alpn", server.alpn.clone());
    vars.insert("qlogdir", d("qlog/server"));
    let server_env = [
        ("ROLE", "server".to_owned()),
        ("TESTCASE", case.name().to_owned()),
        ("WWW", d("www")),
        ("CERTS", d("certs")),
        ("QLOGDIR", d("qlog/server")),
        ("LISTEN_ADDR", server_addr.to_string()),
    ];
    let mut srv = spawn(server, Role::Server, &vars, &server_env, dir)?;
    let ready_by = tokio::time::Instant::now()
        + if server.reports {
            READY_WAIT
        } else {
            Duration::from_millis(server.startup_ms)
        };
    loop {
        if let Some(status) = srv.try_wait().map_err(io("server status".to_owned()))? {
            let outcome = match status.code() {
                Some(EXIT_UNSUPPORTED) => Outcome::Unsupported,
                c => Outcome::Failed(format!("server exited early ({c:?})")),
            };
            return done(outcome, measured);
        }
        if server.reports && read_log(dir, Role::Server).contains("interop: listening=") {
            break;
        }
        if tokio::time::Instant::now() >= ready_by {
            if server.reports {
                let _ = srv.kill().await;
                return done(Outcome::Failed("server did not start".to_owned()), measured);
            }
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // ----- network -----
    let plan = &run.plan;
    let net = Network::start(plan, server_addr, u64::from(port)).await?;
    let (send_to, paths) = net.client_addrs(server_addr, case.second_path())?;
    // ----- client -----
    let requests: Vec<String> = p
        .files
        .iter()
        .map(|(n, _)| format!("https://localhost:{}/{n}", send_to.port()))
        .collect();
    vars.insert("role", "client".to_owned());
    vars.insert("alpn", client.alpn.clone());
    vars.insert("qlogdir", d("qlog/client"));
    vars.insert("server_addr", send_to.to_string());
    vars.insert("server_ip", send_to.ip().to_string());
    vars.insert("server_port", send_to.port().to_string());
    vars.insert("requests", requests.join(" "));
    vars.insert("paths", paths.clone());
    let client_env = [
        ("ROLE", "client".to_owned()),
        ("TESTCASE", case.name().to_owned()),
        ("REQUESTS", requests.join(" ")),
        ("DOWNLOADS", d("downloads")),
        ("CERTS", d("certs")),
        ("QLOGDIR", d("qlog/client")),
        ("SERVER_ADDR", send_to.to_string()),
        ("CLIENT_PATHS", paths),
    ];
    let client_start = tokio::time::Instant::now();
    let mut cli = spawn(client, Role::Client, &vars, &client_env, dir)?;
    let deadline = tokio::time::Instant::now() + CLIENT_LIMIT;
    let mut steps = plan.steps.iter().peekable();
    let mut before_action = None;
    let mut actions_done = 0usize;
    let status = loop {
        if let Some(s) = cli.try_wait().map_err(io("client status".to_owned()))? {
            measured.client_time = client_start.elapsed();
            break Some(s);
        }
        if tokio::time::Instant::now() >= deadline {
            let _ = cli.kill().await;
            break None;
        }
        if let Some((frac, action)) = steps.peek().copied() {
            let got = downloaded(&p);
            if got as f64 >= *frac * p.total as f64 {
                if before_action.is_none() {
                    before_action = Some(net.forwarded());
                }
                tracing::info!(case = %case, ?action, got, "mid-transfer action");
                net.act(*action).await?;
                actions_done += 1;
                steps.next();
                continue;
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let netstats = net.stats(before_action.unwrap_or_default(), actions_done);
    net.stop().await;
    // ----- server summary -----
    if server.reports {
        let by = tokio::time::Instant::now() + SUMMARY_WAIT;
        while tokio::time::Instant::now() < by && !read_log(dir, Role::Server).contains("interop: multipath=")
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    let _ = srv.kill().await;
    let client_report = Report::parse(&read_log(dir, Role::Client));
    let server_report = Report::parse(&read_log(dir, Role::Server));
    let _ = std::fs::write(
        dir.join("reports.json"),
        serde_json::to_string_pretty(&serde_json::json!({
            "client": client_report, "server": server_report, "network": netstats,
        }))
        .unwrap_or_default(),
    );
    measured.client = client_report.clone();
    measured.server = server_report.clone();
    measured.net = netstats.clone();
    let Some(status) = status else {
        let why = format!("client still running after {CLIENT_LIMIT:?}");
        return done(Outcome::Failed(why), measured);
    };
    match status.code() {
        Some(0) => {}
        Some(EXIT_UNSUPPORTED) => return done(Outcome::Unsupported, measured),
        c => {
            let err = std::fs::read_to_string(dir.join("client.err")).unwrap_or_default();
            let last = err.lines().last().unwrap_or("").to_owned();
            return done(Outcome::Failed(format!("client exit {c:?}: {last}")), measured);
        }
    }
    for (name, want) in &p.files {
        match sha256_file(&dir.join("downloads").join(name)) {
            None => return done(Outcome::Failed(format!("{name} not downloaded")), measured),
            Some(h) if h != *want => {
                return done(Outcome::Failed(format!("{name}: SHA-256 differs")), measured);
            }
            Some(_) => {}
        }
    }
    let seen = checks::Seen {
        client: &client_report,
        server: &server_report,
        net: &netstats,
        total: p.total,
    };
    let checked = if run.checks {
        checks::check(case, &seen)
    } else {
        Ok(())
    };
    let outcome = match checked {
        Ok(()) => {
            // Passed runs keep their logs and reports, not the data.
            let _ = std::fs::remove_dir_all(dir.join("www"));
            let _ = std::fs::remove_dir_all(dir.join("downloads"));
            Outcome::Passed
        }
        Err(why) => Outcome::Failed(why),
    };
    done(outcome, measured)
}

/// Runs the matrix; results in order (server, client, case).
pub async fn run_matrix(cfg: &RunnerConfig) -> Result<Vec<CaseResult>, InteropError> {
    let find = |n: &String| {
        cfg.implementations
            .iter()
            .find(|i| &i.name == n)
            .ok_or_else(|| InteropError::Unknown {
                kind: "implementation",
                name: n.clone(),
            })
    };
    let cert = tls::self_signed_pem(&["localhost", "server"])?;
    let mut out = Vec::new();
    for s in &cfg.servers {
        let server = find(s)?;
        for c in &cfg.clients {
            let client = find(c)?;
            for case in &cfg.cases {
                let dir = cfg
                    .log_dir
                    .join(format!("{}_{}", client.name, server.name))
                    .join(case.name());
                let start = crate::clock::now();
                let outcome = run_one(client, server, *case, &dir, &cert).await;
                let duration_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
                let mark = match &outcome {
                    Outcome::Passed => "✓".to_owned(),
                    Outcome::Unsupported => "unsupported".to_owned(),
                    Outcome::Failed(w) => format!("✗ {w}"),
                };
                tracing::info!(
                    "{} → {} {}: {mark} ({duration_ms} ms)",
                    client.name,
                    server.name,
                    case
                );
                eprintln!(
                    "{:>8} → {:<8} {:<24} {mark} ({duration_ms} ms)",
                    client.name,
                    server.name,
                    case.name()
                );
                out.push(CaseResult {
                    client: client.name.clone(),
                    server: server.name.clone(),
                    case: case.name().to_owned(),
                    outcome,
                    duration_ms,
                    log_dir: dir,
                });
            }
        }
    }
    Ok(out)
}
