//! The `mpquic-sim` binary: `validate` succeeds on the shipped scenarios and fails on a bad one; `run` runs
//! every shipped quick scenario and gives identical JSON twice; `sweep` runs a sweep, and with `--csv` and
//! `--plot` writes each run's outputs into its own directory.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::process::Command;

fn sim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mpquic-sim"))
}

fn scenario(name: &str) -> String {
    format!("{}/scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn validate_prints_the_topology() {
    let out = sim()
        .args(["validate", &scenario("two_paths"), &scenario("fairness_quick")])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("path 1: client.lte -> server.p1 via lte> (capacity 20 Mbit/s)"),
        "{text}"
    );
    assert!(text.contains("10s: link wifi down (both directions)"), "{text}");
}

#[test]
fn validate_fails_on_a_bad_file() {
    let dir = std::env::temp_dir().join(format!("mpquic-sim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    let text = std::fs::read_to_string(scenario("two_paths"))
        .unwrap()
        .replace(r#"{ route = ["lte"] }"#, r#"{ route = ["lte2"] }"#);
    std::fs::write(&bad, text).unwrap();
    let out = sim().arg("validate").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("flows[0].paths[1].route[0]: unknown link \"lte2\""),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn run_every_quick_scenario_with_outputs_and_identical_json_twice() {
    let dir = std::env::temp_dir().join(format!("mpquic-sim-run-{}", std::process::id()));
    for name in ["fairness_quick", "loss_sweep_quick", "competition_quick"] {
        let csv = dir.join(name).join("csv");
        let plot = dir.join(name).join("plot");
        let out = sim()
            .args(["run", &scenario(name), "--json", "--csv"])
            .arg(&csv)
            .arg("--plot")
            .arg(&plot)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let goodput = json["flows"][0]["goodput_bps"].as_f64().unwrap();
        assert!(goodput > 1e6, "{name}: goodput {goodput}");
        assert!(csv.read_dir().unwrap().count() >= 1);
        for stem in ["throughput", "cwnd", "rtt"] {
            for ext in ["svg", "png"] {
                assert!(
                    plot.join(format!("{stem}.{ext}")).exists(),
                    "{name}: no {stem}.{ext}"
                );
            }
        }
        let again = sim().args(["run", &scenario(name), "--json"]).output().unwrap();
        assert_eq!(out.stdout, again.stdout, "{name}: two runs differ");
    }
    let other = sim()
        .args(["run", &scenario("fairness_quick"), "--json", "--seed", "9"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&other.stdout).unwrap();
    assert_eq!(json["seed"], 9);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The loss sweep shortened to 1 s and two runs (loss 0 and 5 %, NewReno), written into `dir`.
fn small_sweep(dir: &std::path::Path) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let small = dir.join("small.toml");
    let text = std::fs::read_to_string(scenario("loss_sweep_quick"))
        .unwrap()
        .replace(r#"duration = "5s""#, r#"duration = "1s""#)
        .replace("values = [0.0, 0.01, 0.05, 0.2]", "values = [0.0, 0.05]")
        .replace(
            r#"values = ["cubic", "bbr", "newreno"]"#,
            r#"values = ["newreno"]"#,
        );
    std::fs::write(&small, text).unwrap();
    small
}

#[test]
fn sweep_prints_one_row_per_run() {
    let dir = std::env::temp_dir().join(format!("mpquic-sim-sweep-{}", std::process::id()));
    let small = small_sweep(&dir);
    let out = sim().arg("sweep").arg(&small).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("0.05"), "{table}");
    // Progress on stderr: one line per run, naming its settings.
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("run 1/2 (links.bn.loss.p=0"), "{err}");
    assert!(err.contains("run 2/2 (links.bn.loss.p=0.05"), "{err}");
    let out = sim().arg("sweep").arg(&small).arg("--json").output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sweep_writes_csv_and_plots_per_run() {
    let dir = std::env::temp_dir().join(format!("mpquic-sim-sweep-out-{}", std::process::id()));
    let small = small_sweep(&dir);
    let (csv, plot) = (dir.join("csv"), dir.join("plot"));
    let out = sim()
        .arg("sweep")
        .arg(&small)
        .arg("--csv")
        .arg(&csv)
        .arg("--plot")
        .arg(&plot)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut series = Vec::new();
    for run in ["run0", "run1"] {
        let file = csv.join(run).join("f1_path0.csv");
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut lines = text.lines();
        assert!(
            lines
                .next()
                .unwrap()
                .starts_with("time_s,cwnd_bytes,srtt_ms,throughput_bps")
        );
        // 1 s at the 100 ms sample interval: samples at 0.1 … 0.9 s.
        assert_eq!(lines.count(), 9, "{run}: {text}");
        series.push(text);
        for stem in ["throughput", "cwnd", "rtt"] {
            for ext in ["svg", "png"] {
                let file = plot.join(run).join(format!("{stem}.{ext}"));
                assert!(file.metadata().unwrap().len() > 1000, "{}", file.display());
            }
        }
    }
    // The two runs differ (loss 0 vs 5 %): each directory holds its own run.
    assert_ne!(series[0], series[1]);
    assert!(!csv.join("run2").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `run --plot DIR --plot-cc NAME,...` draws the named controller metrics; a metric the run does not report
/// and a malformed name are command-line errors (exit 2, one line).
#[test]
fn run_plots_controller_metrics_by_name() {
    let dir = std::env::temp_dir().join(format!("mpquic-sim-plot-cc-{}", std::process::id()));
    let plot = dir.join("plot");
    let ok = sim()
        .args(["run", &scenario("fairness_quick"), "--plot"])
        .arg(&plot)
        .args(["--plot-cc", "ssthresh"])
        .output()
        .unwrap();
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    for ext in ["svg", "png"] {
        let file = plot.join(format!("cc_ssthresh.{ext}"));
        assert!(file.metadata().unwrap().len() > 1000, "{}", file.display());
    }
    let missing = sim()
        .args(["run", &scenario("fairness_quick"), "--plot"])
        .arg(&plot)
        .args(["--plot-cc", "rtt_mid"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    let err = String::from_utf8(missing.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("`rtt_mid`") && err.contains("ssthresh"), "{err}");
    let bad = sim()
        .args(["run", &scenario("fairness_quick"), "--plot"])
        .arg(&plot)
        .args(["--plot-cc", "rtt-mid"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `study d5 --quick` runs the study's ten runs (two settings × five start offsets) and writes the report
/// with its tables and plots; the same report comes out with one job or two; an unknown study is a
/// usage-level failure (exit 1).
#[test]
fn study_writes_a_report_with_tables_and_plots() {
    let dir = std::env::temp_dir().join(format!("mpquic-sim-study-{}", std::process::id()));
    let mut reports = Vec::new();
    for jobs in ["1", "2"] {
        let out_dir = dir.join(jobs);
        let out = sim()
            .args(["study", "d5", "--quick", "--jobs", jobs, "--out"])
            .arg(&out_dir)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        let report = out_dir.join("d5").join("report.md");
        assert!(stdout.contains(&report.display().to_string()), "{stdout}");
        let text = std::fs::read_to_string(&report).unwrap();
        assert!(text.contains("# D5: TCP-LP next to Reno"), "{text}");
        assert!(
            text.contains("| # | `flows.low.cc` | n | low Mbit/s | reno Mbit/s |"),
            "{text}"
        );
        assert!(text.contains("| 0 | lp | 5 |"), "{text}");
        assert!(text.contains("| 1 | newreno | 5 |"), "{text}");
        assert!(text.contains("Jain flows"), "{text}");
        let part = out_dir.join("d5").join("lp_vs_reno");
        for file in [
            "summary.svg",
            "summary.png",
            "run0/throughput.svg",
            "run5/rtt.png",
        ] {
            assert!(part.join(file).metadata().unwrap().len() > 1000, "{file}");
        }
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out_dir.join("d5").join("results.json")).unwrap())
                .unwrap();
        assert_eq!(json.as_array().unwrap().len(), 10);
        // The wall time differs between the two; the tables must not.
        let tables: String = text.lines().filter(|l| l.starts_with('|')).collect();
        reports.push(tables);
    }
    assert_eq!(reports[0], reports[1]);
    let out = sim()
        .args(["study", "nope", "--quick", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("no study \"nope\"") && err.contains("d5"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `soak --quick` (shortened) passes and reports transfers and memory per connection (this binary counts
/// its allocations); `soak --write` writes a scenario file that `validate` accepts.
#[test]
fn soak_reports_intact_transfers_and_memory() {
    let out = sim()
        .args(["soak", "--quick", "--connections", "20"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("transfers intact     20 / 20"), "{text}");
    assert!(text.contains("heap per connection  setup"), "{text}");
    assert!(!text.contains("end (idle) -"), "no heap figures: {text}");

    let file = std::env::temp_dir().join(format!("mpquic-sim-soak-{}.toml", std::process::id()));
    let status = sim()
        .args(["soak", "--quick", "--write"])
        .arg(&file)
        .status()
        .unwrap();
    assert!(status.success());
    let out = sim().arg("validate").arg(&file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8(out.stdout).unwrap().contains("f49: c"));
    std::fs::remove_file(&file).unwrap();
}

/// Runs `mpquic-sim` with `args`; expects exit code `code` and one line on stderr, and returns it.
fn one_line_error(args: &[&str], code: i32) -> String {
    let out = sim().args(args).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: one line expected: {err}"
    );
    err
}

#[test]
fn validate_rejects_a_sample_interval_run_could_not_survive() {
    let dir = std::env::temp_dir().join(format!("mpquic-sim-samples-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("1ns.toml");
    let text = std::fs::read_to_string(scenario("two_paths")).unwrap();
    assert!(text.contains("sample_interval = \"100ms\""));
    std::fs::write(
        &file,
        text.replacen("sample_interval = \"100ms\"", "sample_interval = \"1ns\"", 1),
    )
    .unwrap();
    for command in ["validate", "run"] {
        let e = one_line_error(&[command, file.to_str().unwrap()], 1);
        assert!(
            e.contains("scenario.sample_interval: 1ns is out of range: it gives")
                && e.contains("samples per path"),
            "{command}: {e}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn soak_options_out_of_range_are_one_line_usage_errors() {
    for (args, expected) in [
        (
            &["--connections", "0"][..],
            "invalid value '0' for '--connections <N>': expected an integer from 1 to 5000",
        ),
        (
            &["--connections", "4000000000"][..],
            "invalid value '4000000000' for '--connections <N>'",
        ),
        (
            &["--hosts", "100000"][..],
            "invalid value '100000' for '--hosts <N>': expected an integer from 1 to 100",
        ),
        (
            &["--duration", "99999999999999"][..],
            "invalid value '99999999999999' for '--duration <SECS>': expected an integer from 1 to 86400",
        ),
        (&["--duration", "0"][..], "for '--duration <SECS>'"),
        (
            &["--seed", "-1"][..],
            "invalid value '-1' for '--seed <N>': expected an integer from 0 to",
        ),
        (
            &["--min-bytes", "0"][..],
            "for '--min-bytes <BYTES>': expected an integer from 1 to 1000000000",
        ),
        (
            &["--min-bytes", "1000", "--max-bytes", "999"][..],
            "--max-bytes 999 is below the smallest transfer (1000)",
        ),
    ] {
        let mut all = vec!["soak", "--quick"];
        all.extend_from_slice(args);
        let e = one_line_error(&all, 2);
        assert!(
            e.starts_with("mpquic-sim: ") && e.contains(expected),
            "{args:?}: {e}"
        );
    }
}

#[test]
fn study_jobs_and_negative_seeds_are_checked() {
    let e = one_line_error(&["study", "a", "--jobs", "0"], 2);
    assert!(
        e.contains("invalid value '0' for '--jobs <N>': expected an integer from 1 to 256"),
        "{e}"
    );
    let e = one_line_error(&["run", &scenario("two_paths"), "--seed", "-1"], 2);
    assert!(e.contains("invalid value '-1' for '--seed <N>'"), "{e}");
}

#[test]
fn bench_options_out_of_range_are_one_line_usage_errors() {
    for (args, expected) in [
        (
            &["--rate", "999999"][..],
            "invalid value '999999' for '--rate <BPS>': expected an integer from 1000000 to 100000000000 (bit/s)",
        ),
        (&["--rate", "-5"][..], "invalid value '-5' for '--rate <BPS>'"),
        (&["--rate", "1G"][..], "invalid value '1G' for '--rate <BPS>'"),
        (
            &["--duration", "50ms"][..],
            "invalid value '50ms' for '--duration <TIME>': duration \"50ms\" is out of range: expected 100ms to 3600s",
        ),
        (
            &["--duration", "20"][..],
            "invalid value '20' for '--duration <TIME>': duration \"20\": expected a unit among ns, us, ms, s",
        ),
        (
            &["--runs", "0"][..],
            "invalid value '0' for '--runs <N>': expected an integer from 1 to 100",
        ),
        (
            &["--crypto", "rot13"][..],
            "invalid value 'rot13' for '--crypto <CRYPTO>'",
        ),
    ] {
        let mut all = vec!["bench"];
        all.extend_from_slice(args);
        let e = one_line_error(&all, 2);
        assert!(
            e.starts_with("mpquic-sim: ") && e.contains(expected),
            "{args:?}: {e}"
        );
    }
}

#[test]
fn bench_prints_each_run_and_the_speed() {
    let out = sim()
        .args([
            "bench",
            "--rate",
            "20000000",
            "--duration",
            "1s",
            "--crypto",
            "null",
            "--runs",
            "2",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(
            "bench: one CUBIC flow, 20 Mbit/s, 10 ms RTT, 1 x BDP drop-tail queue, 1s simulated, crypto null\n"
        ),
        "{text}"
    );
    let runs: Vec<&str> = text.lines().filter(|l| l.starts_with("  run ")).collect();
    assert_eq!(runs.len(), 2, "{text}");
    // Both runs are the same deterministic run: the same goodput and datagram count.
    let figures = |l: &str| {
        l.split_once("goodput ")
            .unwrap()
            .1
            .split_once(" (")
            .unwrap()
            .0
            .to_owned()
    };
    assert_eq!(figures(runs[0]), figures(runs[1]), "{text}");
    assert!(text.contains("simulated s per wall s: best "), "{text}");
}
