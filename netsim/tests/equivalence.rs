//! Equivalence: every shipped scenario, shortened, gives byte-for-byte the JSON results stored under
//! `netsim/tests/expected/`. Any change to the simulator or to mpquic that moves a single packet of a
//! shipped scenario shows here, so speed work (a faster event queue, a cheaper per-packet path, the
//! null cipher) can prove it changed nothing.
//!
//! The cases, one expectation file each:
//! - every scenario file `netsim/scenarios/*.toml` and `netsim/scenarios/studies/*.toml` (not the
//!   manifests): its sweep expanded as `mpquic-sim sweep` does;
//! - every study manifest `netsim/scenarios/studies/*.study.toml`: its quick variant (`mpquic-sim study NAME
//!   --quick`), every part, each part's sweep expanded with the manifest's overrides.
//!
//! Every run is capped at [`CAP`] of simulated time (the scenario's own duration if shorter; events and
//! flow starts after the cap never happen, and the sampling interval shrinks to the cap if it is longer).
//!
//! Two sets, each run with real AES-128-GCM and again with the null cipher (`scenario.crypto = "null"`,
//! which must not change a single byte of the results):
//! - `shipped_scenarios_first_runs{,_null_cipher}` (default: 98 runs, under a minute each in the test
//!   build on two cores): the first run of each case's sweep (each part's first run for a study), into
//!   `expected/first/`;
//! - `shipped_scenarios_every_run{,_null_cipher}` (ignored by default, reason and command in their
//!   attributes: about 1,900 runs, 4–5 minutes each on two cores in a release build): every run of every case, into `expected/every/`. Run them with
//!   `cargo test --release -p mpquic-netsim --test equivalence -- --ignored`.
//!
//! To regenerate the stored files after an intended change of behaviour, run the test with
//! `MPQUIC_SIM_BLESS=1` (for example
//! `MPQUIC_SIM_BLESS=1 cargo test --release -p mpquic-netsim --test equivalence -- --include-ignored`) and
//! commit the changed files with the reason in the message. The results are the same in the test build
//! (`profile.test`, opt-level 1, debug assertions on) and in release builds.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mpquic_netsim::engine::Engine;
use mpquic_netsim::scenario::Crypto;
use mpquic_netsim::scenario::sweep::{self, SweepRun};
use mpquic_netsim::study::{self, Study};

/// Simulated time per run.
const CAP: Duration = Duration::from_millis(1500);

/// The environment variable that rewrites the stored files instead of comparing.
const BLESS: &str = "MPQUIC_SIM_BLESS";

fn scenarios_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

fn expected_dir(kind: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/expected")
        .join(kind)
}

/// One run of a case: where it comes from and the scenario to run.
struct Run {
    part: String,
    run: SweepRun,
}

/// One case: a name (its expectation file) and its runs.
struct Case {
    name: String,
    runs: Vec<Run>,
}

/// The scenario files of `dir` (not manifests), sorted.
fn scenario_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.ends_with(".toml") && !name.ends_with(study::MANIFEST_SUFFIX)
        })
        .collect();
    out.sort();
    out
}

/// Every case, with all its runs.
fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let dir = scenarios_dir();
    for (prefix, d) in [("", dir.clone()), ("studies-", dir.join("studies"))] {
        for file in scenario_files(&d) {
            let text = std::fs::read_to_string(&file).unwrap();
            let runs = sweep::expand(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
            out.push(Case {
                name: format!("{prefix}{stem}"),
                runs: runs
                    .into_iter()
                    .map(|run| Run {
                        part: String::new(),
                        run,
                    })
                    .collect(),
            });
        }
    }
    for manifest in study::list(&dir.join("studies")).unwrap() {
        let s = Study::load(&manifest, true).unwrap_or_else(|e| panic!("{e}"));
        let runs = s
            .parts
            .iter()
            .flat_map(|p| {
                p.runs.iter().map(|run| Run {
                    part: p.spec.name.clone(),
                    run: run.clone(),
                })
            })
            .collect();
        out.push(Case {
            name: format!("study-{}", study::name_of(&manifest)),
            runs,
        });
    }
    out
}

/// Keeps the first run of each part of each case.
fn first_runs(cases: Vec<Case>) -> Vec<Case> {
    cases
        .into_iter()
        .map(|mut c| {
            let mut seen: Vec<String> = Vec::new();
            c.runs.retain(|r| {
                if seen.contains(&r.part) {
                    false
                } else {
                    seen.push(r.part.clone());
                    true
                }
            });
            c
        })
        .collect()
}

/// Runs one run, capped, with packet protection `crypto`, and returns its JSON record.
fn run_one(run: &Run, crypto: Crypto) -> serde_json::Value {
    let mut scenario = run.run.scenario.clone();
    scenario.scenario.crypto = crypto;
    scenario.scenario.duration = scenario.scenario.duration.min(CAP);
    scenario.scenario.sample_interval = scenario.scenario.sample_interval.min(scenario.scenario.duration);
    let out = Engine::run(scenario).unwrap_or_else(|e| panic!("run {}: {e}", run.run.index));
    serde_json::json!({
        "part": run.part,
        "index": run.run.index,
        "settings": run.run.settings,
        "seed": run.run.seed,
        "result": out.result,
    })
}

/// Runs every run of every case on two threads; returns each case's JSON text.
fn run_cases(cases: &[Case], crypto: Crypto) -> Vec<String> {
    let work: Vec<(usize, usize)> = cases
        .iter()
        .enumerate()
        .flat_map(|(c, case)| (0..case.runs.len()).map(move |r| (c, r)))
        .collect();
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<serde_json::Value>>> = Mutex::new(vec![None; work.len()]);
    let worker = || {
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(&(c, r)) = work.get(k) else {
                break;
            };
            let value = run_one(&cases[c].runs[r], crypto);
            done.lock().unwrap()[k] = Some(value);
        }
    };
    std::thread::scope(|s| {
        s.spawn(worker);
        worker();
    });
    let done = done.into_inner().unwrap();
    let mut per_case: Vec<Vec<serde_json::Value>> = vec![Vec::new(); cases.len()];
    for ((c, _), value) in work.iter().zip(done) {
        per_case[*c].push(value.unwrap());
    }
    per_case
        .into_iter()
        .map(|runs| {
            let mut text = serde_json::to_string_pretty(&runs).unwrap();
            text.push('\n');
            text
        })
        .collect()
}

/// The first line where `expected` and `actual` differ: (line number from 1, expected line, actual line).
fn first_difference<'a>(expected: &'a str, actual: &'a str) -> Option<(usize, &'a str, &'a str)> {
    let mut e = expected.lines();
    let mut a = actual.lines();
    let mut n = 0;
    loop {
        n += 1;
        match (e.next(), a.next()) {
            (None, None) => return None,
            (x, y) if x == y => {}
            (x, y) => return Some((n, x.unwrap_or("<end of file>"), y.unwrap_or("<end of file>"))),
        }
    }
}

/// Compares (or with [`BLESS`] writes) each case's JSON, run with packet protection `crypto`, with
/// `expected/<kind>/<case>.json`; fails listing every case that differs with its first differing line.
/// Only runs with the real cipher are blessed.
fn check(kind: &str, cases: &[Case], crypto: Crypto) {
    let texts = run_cases(cases, crypto);
    let dir = expected_dir(kind);
    let bless = crypto == Crypto::Aes128gcm && std::env::var_os(BLESS).is_some_and(|v| v != "0");
    if bless {
        std::fs::create_dir_all(&dir).unwrap();
    }
    let mut failures = Vec::new();
    for (case, text) in cases.iter().zip(&texts) {
        let path = dir.join(format!("{}.json", case.name));
        if bless {
            std::fs::write(&path, text).unwrap();
            continue;
        }
        let expected = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        if let Some((line, want, got)) = first_difference(&expected, text) {
            failures.push(format!(
                "{}: line {line} differs\n  expected: {}\n  actual:   {}",
                path.display(),
                want.trim(),
                got.trim()
            ));
        } else if expected != *text {
            failures.push(format!("{}: differs in line endings", path.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from the stored results with crypto = {} (rerun with {BLESS}=1 to store the new ones if the \
         change is intended):\n{}",
        failures.len(),
        cases.len(),
        crypto.name(),
        failures.join("\n")
    );
}

#[test]
fn shipped_scenarios_first_runs() {
    check("first", &first_runs(cases()), Crypto::Aes128gcm);
}

/// The null cipher changes no result: the same runs with `crypto = "null"` give the stored files (made
/// with real AES-128-GCM) byte for byte.
#[test]
fn shipped_scenarios_first_runs_null_cipher() {
    check("first", &first_runs(cases()), Crypto::Null);
}

// Ignored in `cargo test`: about 1,900 runs take 4–5 minutes on two cores in a release build (far longer in
// the test build), more than CI's budget; the default tests above cover the first run of every case. Run it with
// `cargo test --release -p mpquic-netsim --test equivalence -- --ignored` (docs/simulator-speed.md).
#[test]
#[ignore = "about 1,900 runs: cargo test --release -p mpquic-netsim --test equivalence -- --ignored"]
fn shipped_scenarios_every_run() {
    check("every", &cases(), Crypto::Aes128gcm);
}

// Ignored for the same reason as `shipped_scenarios_every_run`, and run by the same command
// (`cargo test --release -p mpquic-netsim --test equivalence -- --ignored`, docs/simulator-speed.md).
#[test]
#[ignore = "about 1,900 runs: cargo test --release -p mpquic-netsim --test equivalence -- --ignored"]
fn shipped_scenarios_every_run_null_cipher() {
    check("every", &cases(), Crypto::Null);
}

#[test]
fn first_difference_names_the_line() {
    assert_eq!(first_difference("a\nb\nc\n", "a\nb\nc\n"), None);
    assert_eq!(first_difference("a\nb\nc\n", "a\nx\nc\n"), Some((2, "b", "x")));
    assert_eq!(
        first_difference("a\nb\n", "a\nb\nc\n"),
        Some((3, "<end of file>", "c"))
    );
}
