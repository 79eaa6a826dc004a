//! CI: the interop matrix mpquic × {mpquic, noq, quinn} in both roles, every test case those stacks support,
//! through the `mpquic-interop` binary's endpoint mode (as any external implementation would run). Fails on
//! any ✗ and prints the matrix. Logs: `target/interop-ci/` (kept for failed runs).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use mpquic_interop::TestCase;
use mpquic_interop::runner::{self, Outcome, RunnerConfig, implementations, matrix};

fn log_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("interop-ci")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mpquic_against_mpquic_noq_quinn_both_roles() {
    let exe = Path::new(env!("CARGO_BIN_EXE_mpquic-interop"));
    let imps = implementations::load(exe, None).unwrap();
    let pairs = [
        ("mpquic", "mpquic"),
        ("mpquic", "noq"),
        ("noq", "mpquic"),
        ("mpquic", "quinn"),
        ("quinn", "mpquic"),
    ];
    let start = mpquic_interop::clock::now();
    let mut results = Vec::new();
    for (c, s) in pairs {
        let cfg = RunnerConfig {
            implementations: imps.clone(),
            clients: vec![c.to_owned()],
            servers: vec![s.to_owned()],
            cases: TestCase::ALL.to_vec(),
            log_dir: log_dir(),
        };
        results.extend(runner::run_matrix(&cfg).await.unwrap());
    }
    println!("{}", matrix::table(&results));
    println!("matrix wall time: {:?}", start.elapsed());
    assert!(!matrix::any_failed(&results), "{}", matrix::table(&results));
    // What must be unsupported is, and nothing else: quinn has no multipath, noq cannot rotate CIDs on demand.
    for r in &results {
        let case: TestCase = r.case.parse().unwrap();
        let quinn = r.client == "quinn" || r.server == "quinn";
        let expect_unsupported =
            (quinn && case.multipath()) || (r.client == "noq" && case == TestCase::MpCidRotation);
        assert_eq!(
            r.outcome == Outcome::Unsupported,
            expect_unsupported,
            "{} → {} {}: {:?}",
            r.client,
            r.server,
            r.case,
            r.outcome
        );
    }
}
