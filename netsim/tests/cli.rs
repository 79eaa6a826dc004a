//! The `mpquic-sim` binary: `validate` succeeds on the shipped scenarios and fails on a bad one; `run` and
//! `sweep` refuse with exit code 2 until the engine exists.

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
fn run_and_sweep_exit_2_without_the_engine() {
    for cmd in ["run", "sweep"] {
        let out = sim().args([cmd, &scenario("loss_sweep_quick")]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        assert!(
            String::from_utf8(out.stderr)
                .unwrap()
                .contains("engine is not yet available")
        );
        assert!(out.stdout.is_empty());
    }
}
