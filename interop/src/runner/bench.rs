//! `mpquic-interop bench`: time to complete one download through emulated paths, for several client/server
//! pairs at each stack's defaults, run after run.
//!
//! Each run is an ordinary interop run (fresh server and client processes, a fresh emulator, the file checked
//! by SHA-256) of the `transfer` case (one emulated path) or the `mp-transfer` case (two or more: the client opens
//! its second path from 127.0.0.2 to the second emulated front), with the paths given on the command line
//! instead of the case's own network and without the case's behaviour checks. The pairs run interleaved (run 1
//! of every pair, then run 2, ...) so that a machine's slow minute hurts all of them alike. The time is the
//! client's `download_ms` (from its start to the last byte written: handshake, path opening and download,
//! not the closing and draining), or the client process's life for an implementation that does not report it. What the server reports per path (UDP bytes
//! sent) shows how each sender split the data.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use mpquic_tools::netem::PathConfig;

use super::implementations::Implementation;
use super::network::Plan;
use super::{Outcome, Run, run_measured};
use crate::cases::TestCase;
use crate::endpoint::tls;
use crate::error::InteropError;

/// What to measure.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// Every known implementation.
    pub implementations: Vec<Implementation>,
    /// `(client, server)` pairs, in the order of the table.
    pub pairs: Vec<(String, String)>,
    /// The emulated paths (at least one).
    pub links: Vec<PathConfig>,
    /// Size of the downloaded file in bytes.
    pub size: u64,
    /// Runs per pair.
    pub runs: usize,
    /// Root log folder (`DIR/bench/<client>_<server>/run-K/`).
    pub log_dir: PathBuf,
}

/// One run of one pair.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchRun {
    /// Client implementation.
    pub client: String,
    /// Server implementation.
    pub server: String,
    /// Run number, from 1.
    pub run: usize,
    /// Outcome (files compared; no behaviour checks).
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Time to complete in seconds: the client's `download_ms` (its start to its last byte; the built-ins
    /// report it), else its process life.
    pub seconds: f64,
    /// UDP payload bytes the server reported sending, per path ID (empty if it reported none).
    pub server_sent: BTreeMap<u64, u64>,
}

/// Runs every pair `cfg.runs` times, interleaved.
pub async fn run_bench(cfg: &BenchConfig) -> Result<Vec<BenchRun>, InteropError> {
    if cfg.links.is_empty() {
        return Err(InteropError::Network(
            "bench needs at least one --path".to_owned(),
        ));
    }
    let find = |n: &String| {
        cfg.implementations
            .iter()
            .find(|i| &i.name == n)
            .ok_or_else(|| InteropError::Unknown {
                kind: "implementation",
                name: n.clone(),
            })
    };
    let case = if cfg.links.len() > 1 {
        TestCase::MpTransfer
    } else {
        TestCase::Transfer
    };
    let run = Run {
        case,
        plan: Plan {
            links: cfg.links.clone(),
            ..Plan::of(TestCase::Transfer)
        },
        sizes: vec![cfg.size],
        checks: false,
    };
    let cert = tls::self_signed_pem(&["localhost", "server"])?;
    let mut out = Vec::new();
    for k in 1..=cfg.runs {
        for (c, s) in &cfg.pairs {
            let (client, server) = (find(c)?, find(s)?);
            let dir = cfg
                .log_dir
                .join("bench")
                .join(format!("{c}_{s}"))
                .join(format!("run-{k}"));
            let m = run_measured(client, server, &run, &dir, &cert).await?;
            let server_sent = m
                .server
                .paths
                .iter()
                .filter_map(|(id, f)| Some((*id, f.get("sent")?.parse().ok()?)))
                .collect();
            // The client's own completion time when it reports one, else its process life.
            let seconds = m
                .client
                .number("download_ms")
                .map_or(m.client_time.as_secs_f64(), |ms| ms as f64 / 1000.0);
            let r = BenchRun {
                client: c.clone(),
                server: s.clone(),
                run: k,
                outcome: m.outcome,
                seconds,
                server_sent,
            };
            eprintln!(
                "{c:>8} → {s:<8} run {k}: {:.3} s {}",
                r.seconds,
                match &r.outcome {
                    Outcome::Passed => "✓".to_owned(),
                    Outcome::Unsupported => "unsupported".to_owned(),
                    Outcome::Failed(w) => format!("✗ {w}"),
                }
            );
            out.push(r);
        }
    }
    Ok(out)
}

/// The median of `v` (the mean of the two middle values for an even count), `None` if empty.
pub fn median(v: &[f64]) -> Option<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => s.get(n / 2).copied(),
        _ => Some((s.get(n / 2 - 1)? + s.get(n / 2)?) / 2.0),
    }
}

/// Per pair, over its passed runs: median, min and max time, goodput at the median, the median bytes the
/// server sent per path, and the ratio `reference median / pair median` (above 1: faster than the reference,
/// the first pair).
pub fn table(rows: &[BenchRun], pairs: &[(String, String)], size: u64) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<20} {:>6} {:>9} {:>9} {:>9} {:>10} {:>22} {:>9}",
        "client → server", "passed", "median s", "min s", "max s", "Mbit/s", "server sent MB/path", "× first"
    );
    let mut reference = None;
    for (c, sv) in pairs {
        let mine: Vec<&BenchRun> = rows
            .iter()
            .filter(|r| &r.client == c && &r.server == sv && r.outcome == Outcome::Passed)
            .collect();
        let all = rows.iter().filter(|r| &r.client == c && &r.server == sv).count();
        let times: Vec<f64> = mine.iter().map(|r| r.seconds).collect();
        let med = median(&times);
        if reference.is_none() {
            reference = med;
        }
        let paths: std::collections::BTreeSet<u64> =
            mine.iter().flat_map(|r| r.server_sent.keys().copied()).collect();
        let per_path: Vec<String> = paths
            .iter()
            .map(|p| {
                let v: Vec<f64> = mine
                    .iter()
                    .map(|r| r.server_sent.get(p).copied().unwrap_or(0) as f64 / 1e6)
                    .collect();
                median(&v).map_or("-".to_owned(), |m| format!("{m:.1}"))
            })
            .collect();
        let fmt = |x: Option<f64>| x.map_or("-".to_owned(), |v| format!("{v:.3}"));
        let min = times.iter().copied().reduce(f64::min);
        let max = times.iter().copied().reduce(f64::max);
        let rate = med.map(|m| size as f64 * 8.0 / m / 1e6);
        let ratio = match (reference, med) {
            (Some(r), Some(m)) if m > 0.0 => format!("{:.2}", r / m),
            _ => "-".to_owned(),
        };
        let _ = writeln!(
            s,
            "{:<20} {:>6} {:>9} {:>9} {:>9} {:>10} {:>22} {:>9}",
            format!("{c} → {sv}"),
            format!("{}/{all}", mine.len()),
            fmt(med),
            fmt(min),
            fmt(max),
            rate.map_or("-".to_owned(), |r| format!("{r:.1}")),
            if per_path.is_empty() {
                "-".to_owned()
            } else {
                per_path.join(" / ")
            },
            ratio
        );
    }
    s
}

/// The runs as JSON.
pub fn json(rows: &[BenchRun]) -> String {
    serde_json::to_string_pretty(rows).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    fn row(c: &str, s: &str, secs: f64, sent: &[(u64, u64)]) -> BenchRun {
        BenchRun {
            client: c.to_owned(),
            server: s.to_owned(),
            run: 1,
            outcome: Outcome::Passed,
            seconds: secs,
            server_sent: sent.iter().copied().collect(),
        }
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn table_ratio_is_reference_time_over_pair_time() {
        let pairs = vec![
            ("noq".to_owned(), "noq".to_owned()),
            ("mpquic".to_owned(), "mpquic".to_owned()),
        ];
        let rows = vec![
            row("noq", "noq", 4.0, &[(0, 20_000_000), (1, 10_000_000)]),
            row("noq", "noq", 6.0, &[(0, 22_000_000), (1, 8_000_000)]),
            row("mpquic", "mpquic", 2.5, &[(0, 25_000_000), (1, 5_000_000)]),
        ];
        let t = table(&rows, &pairs, 30_000_000);
        let lines: Vec<&str> = t.lines().collect();
        // noq: median 5.0 s → 30 MB × 8 / 5 s = 48 Mbit/s; per path medians 21.0 / 9.0 MB; ratio 1.00.
        assert!(lines[1].contains("5.000") && lines[1].contains("48.0"), "{t}");
        assert!(
            lines[1].contains("21.0 / 9.0") && lines[1].ends_with("1.00"),
            "{t}"
        );
        // mpquic: 2.5 s → 96 Mbit/s, ratio 5.0 / 2.5 = 2.00.
        assert!(lines[2].contains("96.0") && lines[2].ends_with("2.00"), "{t}");
    }
}
