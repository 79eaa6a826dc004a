//! The `mpquic-sim` binary: `validate` succeeds on the shipped scenarios and fails on a bad one; `run` runs
//! every shipped quick scenario and gives identical JSON twice; `sweep` runs a sweep.

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
        assert!(plot.join("throughput.svg").exists());
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

#[test]
fn sweep_prints_one_row_per_run() {
    let dir = std::env::temp_dir().join(format!("mpquic-sim-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let small = dir.join("small.toml");
    // Two runs of the loss sweep, shortened.
    let text = std::fs::read_to_string(scenario("loss_sweep_quick"))
        .unwrap()
        .replace(r#"duration = "5s""#, r#"duration = "1s""#)
        .replace("values = [0.0, 0.01, 0.05, 0.2]", "values = [0.0, 0.05]")
        .replace(
            r#"values = ["cubic", "bbr", "newreno"]"#,
            r#"values = ["newreno"]"#,
        );
    std::fs::write(&small, text).unwrap();
    let out = sim().arg("sweep").arg(&small).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("0.05"), "{table}");
    let out = sim().arg("sweep").arg(&small).arg("--json").output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}
