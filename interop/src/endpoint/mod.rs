//! The built-in endpoints (`mpquic-interop endpoint mpquic|noq|quinn`): thin adapters over each stack that
//! follow the quic-interop-runner conventions ([`crate::env`]) and print `interop:` summary lines
//! ([`crate::report`]).
//!
//! The HTTP/0.9 exchange ([`crate::hq`]), the per-case actions (key update, path abandon, connection-ID
//! rotation, backup marking) and the summary are written once here over the [`Conn`] trait; each stack's file
//! ([`mpquic_ep`], [`noq_ep`], [`quinn_ep`]) only connects, accepts, opens paths and maps its statistics.

pub mod mpquic_ep;
pub mod noq_ep;
pub mod quinn_ep;
pub mod tls;

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};

use crate::cases::{CID_ROTATION_EVERY, CID_ROTATIONS, CLIENT_ABANDON_AFTER, SERVER_ABANDON_AFTER, TestCase};
use crate::env::{EndpointEnv, Role};
use crate::error::InteropError;
use crate::hq;
use crate::report::{PathLine, fields_line};

/// Exit code for an unsupported test case (quic-interop-runner convention).
pub const EXIT_UNSUPPORTED: i32 = 127;
/// How long a client may take for all its downloads.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(90);
/// How often the control loop looks at progress and paths.
const TICK: Duration = Duration::from_millis(5);

/// When the endpoint started ([`Builtin::run`]): the client reports its downloads' completion from here.
static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// A built-in implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// This project.
    Mpquic,
    /// noq 1.4 (multipath, draft-21).
    Noq,
    /// quinn 0.11 (single path).
    Quinn,
}

impl Builtin {
    /// Every built-in.
    pub const ALL: [Builtin; 3] = [Builtin::Mpquic, Builtin::Noq, Builtin::Quinn];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Mpquic => "mpquic",
            Builtin::Noq => "noq",
            Builtin::Quinn => "quinn",
        }
    }

    /// Whether it takes part in `case` in `role`.
    pub fn supports(self, role: Role, case: TestCase) -> bool {
        match self {
            Builtin::Mpquic => true,
            // noq has no API to rotate connection IDs on demand: it can only be the server there.
            Builtin::Noq => !(case == TestCase::MpCidRotation && role == Role::Client),
            Builtin::Quinn => !case.multipath(),
        }
    }

    /// Runs the endpoint described by `env`; returns the process exit code.
    pub async fn run(self, env: EndpointEnv) -> i32 {
        let _ = STARTED.set(crate::clock::now());
        let Some(case) = env.case().filter(|c| self.supports(env.role, *c)) else {
            tracing::warn!(testcase = %env.testcase, "unsupported test case");
            return EXIT_UNSUPPORTED;
        };
        let result = match (self, env.role) {
            (Builtin::Mpquic, Role::Client) => mpquic_ep::client(&env, case).await,
            (Builtin::Mpquic, Role::Server) => mpquic_ep::server(&env, case).await,
            (Builtin::Noq, Role::Client) => noq_ep::client(&env, case).await,
            (Builtin::Noq, Role::Server) => noq_ep::server(&env, case).await,
            (Builtin::Quinn, Role::Client) => quinn_ep::client(&env, case).await,
            (Builtin::Quinn, Role::Server) => quinn_ep::server(&env, case).await,
        };
        match result {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("{} {}: {e}", self.name(), env.role.name());
                1
            }
        }
    }
}

impl FromStr for Builtin {
    type Err = InteropError;

    fn from_str(s: &str) -> Result<Builtin, InteropError> {
        Builtin::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| InteropError::Unknown {
                kind: "implementation",
                name: s.to_owned(),
            })
    }
}

/// One connection of any stack, as the shared client and server logic needs it.
pub trait Conn: Clone + Send + Sync + 'static {
    /// Send half of a stream.
    type Send: AsyncWrite + Unpin + Send + 'static;
    /// Receive half of a stream.
    type Recv: AsyncRead + Unpin + Send + 'static;
    /// Opens a bidirectional stream.
    fn open_bi(&self) -> impl Future<Output = Result<(Self::Send, Self::Recv), InteropError>> + Send;
    /// Accepts the peer's next bidirectional stream (`None`: the connection ended).
    fn accept_bi(&self) -> impl Future<Output = Option<(Self::Send, Self::Recv)>> + Send;
    /// Resolves when the connection has ended.
    fn closed(&self) -> impl Future<Output = ()> + Send;
    /// Starts a key update; `false` if it cannot start yet.
    fn key_update(&self) -> bool;
    /// Abandons path `id`.
    fn abandon_path(&self, id: u64) -> Result<(), InteropError>;
    /// Marks path `id` backup on our side; `false` if it does not exist (yet).
    fn set_backup(&self, id: u64) -> bool;
    /// Rotates the connection IDs of every open path; `false` if none could rotate.
    fn rotate_cids(&self) -> bool;
    /// The current per-path view.
    fn paths(&self) -> Vec<PathLine>;
    /// Connection-wide facts for the summary.
    fn facts(&self) -> Vec<(&'static str, String)>;
}

/// Per-path lines merged over time: a path whose state the stack deleted keeps its last numbers and counts as
/// abandoned.
#[derive(Debug, Default)]
pub struct PathTracker {
    paths: Mutex<BTreeMap<u64, PathLine>>,
}

impl PathTracker {
    /// Merges the current view.
    pub fn update(&self, now: Vec<PathLine>) {
        let Ok(mut map) = self.paths.lock() else {
            return;
        };
        for old in map.values_mut() {
            if !now.iter().any(|p| p.id == old.id) {
                old.abandoned = true;
            }
        }
        for p in now {
            let e = map.entry(p.id).or_insert(p);
            e.sent = e.sent.max(p.sent);
            e.received = e.received.max(p.received);
            e.abandoned |= p.abandoned;
            e.backup = p.backup;
        }
    }

    /// The merged lines.
    pub fn lines(&self) -> Vec<PathLine> {
        self.paths
            .lock()
            .map(|m| m.values().copied().collect())
            .unwrap_or_default()
    }
}

/// Prints the summary of `conn` (facts, extra facts, per-path lines).
pub fn print_summary<C: Conn>(conn: &C, tracker: &PathTracker, extra: &[(&str, String)]) {
    let mut facts: Vec<(&str, String)> = conn.facts();
    facts.extend(extra.iter().cloned());
    println!("{}", fields_line(&facts));
    for p in tracker.lines() {
        println!("{}", p.line());
    }
}

/// What the per-case control loop did.
#[derive(Debug, Default)]
struct Actions {
    key_updated: bool,
    abandoned: bool,
    rotations: u64,
    backups: Vec<u64>,
}

/// One pass of the per-case actions, given the bytes moved so far.
fn act<C: Conn>(conn: &C, role: Role, case: TestCase, progress: u64, a: &mut Actions) {
    match (role, case) {
        (Role::Client, TestCase::KeyUpdate) if !a.key_updated && progress > 0 => {
            a.key_updated = conn.key_update();
            if a.key_updated {
                tracing::info!(progress, "key update started");
            }
        }
        (Role::Client, TestCase::MpPathAbandon) if !a.abandoned && progress >= CLIENT_ABANDON_AFTER => {
            a.abandoned = conn
                .abandon_path(1)
                .inspect_err(|e| tracing::warn!("abandon path 1: {e}"))
                .is_ok();
        }
        (Role::Server, TestCase::MpPathAbandonServer) if !a.abandoned && progress >= SERVER_ABANDON_AFTER => {
            a.abandoned = conn
                .abandon_path(1)
                .inspect_err(|e| tracing::warn!("abandon path 1: {e}"))
                .is_ok();
        }
        // The rotation itself is the last part of the guard: a round that could not rotate is tried again.
        (Role::Client, TestCase::MpCidRotation)
            if a.rotations < CID_ROTATIONS
                && progress >= (a.rotations + 1) * CID_ROTATION_EVERY
                && conn.rotate_cids() =>
        {
            a.rotations += 1;
            tracing::info!(progress, round = a.rotations, "connection IDs rotated");
        }
        (Role::Server, TestCase::MpPathStatus) => {
            for p in conn.paths() {
                if p.id != 0 && !p.abandoned && !a.backups.contains(&p.id) && conn.set_backup(p.id) {
                    a.backups.push(p.id);
                }
            }
        }
        _ => {}
    }
}

/// Client: downloads every request (all at once, one stream each), performing the case's actions as data
/// arrives, then prints the summary and closes the connection.
pub async fn drive_client<C: Conn>(conn: C, env: &EndpointEnv, case: TestCase) -> Result<(), InteropError> {
    let progress = Arc::new(AtomicU64::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for req in &env.requests {
        let out: PathBuf = hq::resolve(&env.downloads, &req.path).ok_or_else(|| InteropError::Request {
            path: req.path.clone(),
            problem: "no file name".to_owned(),
        })?;
        let (conn, progress, path) = (conn.clone(), progress.clone(), req.path.clone());
        tasks.spawn(async move {
            let (send, recv) = conn.open_bi().await?;
            hq::fetch(send, recv, &path, &out, &progress).await
        });
    }
    let tracker = PathTracker::default();
    let mut actions = Actions::default();
    let deadline = tokio::time::Instant::now() + CLIENT_TIMEOUT;
    let mut tick = tokio::time::interval(TICK);
    let mut result = Ok(());
    while !tasks.is_empty() {
        tokio::select! {
            done = tasks.join_next() => {
                match done {
                    Some(Ok(Ok(_))) | None => {}
                    Some(Ok(Err(e))) => { result = Err(e); break; }
                    Some(Err(e)) => { result = Err(InteropError::Connection(format!("download task: {e}"))); break; }
                }
            }
            _ = tick.tick() => {
                act(&conn, Role::Client, case, progress.load(Ordering::Relaxed), &mut actions);
                tracker.update(conn.paths());
                if tokio::time::Instant::now() > deadline {
                    result = Err(InteropError::Timeout(format!(
                        "downloads after {CLIENT_TIMEOUT:?} ({} B received)",
                        progress.load(Ordering::Relaxed)
                    )));
                    break;
                }
            }
        }
    }
    let mut extra = Vec::new();
    if result.is_ok()
        && let Some(start) = STARTED.get()
    {
        // From the endpoint's start (handshake and path opening included) to the last byte written, before the
        // connection closes and drains.
        extra.push(("download_ms", start.elapsed().as_millis().to_string()));
    }
    if case == TestCase::MpCidRotation {
        extra.push(("cid_rotations", actions.rotations.to_string()));
    }
    tracker.update(conn.paths());
    print_summary(&conn, &tracker, &extra);
    result
}

/// Server: serves every stream of `conn` until the connection ends, performing the case's actions, then prints
/// the connection's summary.
pub async fn serve_connection<C: Conn>(
    conn: C,
    www: PathBuf,
    case: TestCase,
    extra: Vec<(&'static str, String)>,
) {
    let progress = Arc::new(AtomicU64::new(0));
    let acceptor = {
        let (conn, progress, www) = (conn.clone(), progress.clone(), www.clone());
        tokio::spawn(async move {
            while let Some((send, recv)) = conn.accept_bi().await {
                if case == TestCase::MpPathStatus {
                    // The client validates its second path before it asks for anything, so the path exists by
                    // now: mark it backup before serving. Left to the control loop's next tick (up to 5 ms
                    // later), a fast client could get a megabyte over the path first.
                    for p in conn.paths() {
                        if p.id != 0 && !p.abandoned {
                            conn.set_backup(p.id);
                        }
                    }
                }
                let (progress, www) = (progress.clone(), www.clone());
                tokio::spawn(async move {
                    match hq::serve(send, recv, &www, progress).await {
                        Ok((path, n)) => tracing::info!(%path, bytes = n, "served"),
                        Err(e) => tracing::warn!("{e}"),
                    }
                });
            }
        })
    };
    let tracker = PathTracker::default();
    let mut actions = Actions::default();
    let mut tick = tokio::time::interval(TICK);
    let closed = conn.closed();
    tokio::pin!(closed);
    loop {
        tokio::select! {
            () = &mut closed => break,
            _ = tick.tick() => {
                act(&conn, Role::Server, case, progress.load(Ordering::Relaxed), &mut actions);
                tracker.update(conn.paths());
            }
        }
    }
    acceptor.abort();
    print_summary(&conn, &tracker, &extra);
}
