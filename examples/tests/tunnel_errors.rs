//! `mpquic-tunnel` started with bad options or without the privilege to create a TUN device: one line on
//! stderr naming the option or what is missing, exit code 2. Nothing is created and nothing is sent.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::process::{Command, Output};

const TUNNEL: &str = env!("CARGO_BIN_EXE_mpquic-tunnel");

fn tunnel(args: &[&str]) -> Output {
    Command::new(TUNNEL).args(args).output().unwrap()
}

/// Expects exit code 2 and one line on stderr; returns it.
fn usage_error(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line expected: {stderr}");
    assert!(stderr.starts_with("mpquic-tunnel: "), "{stderr}");
    stderr
}

#[test]
fn bad_options_are_one_line_and_exit_2() {
    let server = |extra: &[&str]| {
        let mut a = vec!["server", "--tun", "mpqtest0", "--address", "10.77.0.1/30"];
        a.extend_from_slice(extra);
        tunnel(&a)
    };
    let cases: Vec<(Output, &str)> = vec![
        (server(&["--mtu", "1000"]), "1280 to 9000"),
        (server(&["--reorder-window", "70000"]), "0 to 65536"),
        (server(&["--reorder-hold", "0"]), "1 to 10000"),
        (server(&["--cc", "tahoe"]), "cubic"),
        (server(&["--scheduler", "fastest"]), "minrtt"),
        (server(&["-i", "0.01"]), "0.05 to 3600"),
        (server(&["--cert", "c.pem"]), "--key"),
        (
            tunnel(&["server", "--tun", "a/b", "--address", "10.77.0.1/30"]),
            "bad interface name",
        ),
        (
            tunnel(&["server", "--tun", "t0", "--address", "10.77.0.1/40"]),
            "0 to 32",
        ),
        (tunnel(&["server", "--tun", "t0"]), "--address"),
        (
            tunnel(&[
                "client",
                "127.0.0.1:4433",
                "--tun",
                "t0",
                "--address",
                "10.77.0.2/30",
                "--path",
                "10.0.0.1,primary",
            ]),
            "valid: backup",
        ),
        (
            tunnel(&[
                "client",
                "127.0.0.1:4433",
                "--tun",
                "t0",
                "--address",
                "10.77.0.2/30",
                "--mode",
                "carrier-pigeon",
            ]),
            "datagram",
        ),
        (
            tunnel(&[
                "client",
                "127.0.0.1:4433",
                "--tun",
                "t0",
                "--address",
                "10.77.0.2/30",
                "--reconnect-max",
                "0",
            ]),
            "1 to 3600",
        ),
    ];
    for (out, needle) in cases {
        let line = usage_error(&out);
        assert!(line.contains(needle), "`{needle}` not in: {line}");
    }
}

#[test]
fn duplicate_paths_are_refused_before_any_device_is_made() {
    let out = tunnel(&[
        "client",
        "127.0.0.1:4433",
        "--tun",
        "t0",
        "--address",
        "10.77.0.2/30",
        "--path",
        "127.0.0.1",
        "--path",
        "127.0.0.1=127.0.0.1:4433",
    ]);
    let line = usage_error(&out);
    assert!(line.contains("same pair of addresses"), "{line}");
}

/// Without CAP_NET_ADMIN (run as `nobody` through setpriv, when this test runs as root and setpriv exists;
/// as an unprivileged user directly): exit 2 naming what is missing.
#[test]
fn without_privilege_the_missing_capability_is_named() {
    let args = [
        "server",
        "--bind",
        "127.0.0.1:0",
        "--tun",
        "mpqpriv0",
        "--address",
        "10.77.9.1/30",
    ];
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    let out = if root {
        let has_setpriv = Command::new("setpriv")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !has_setpriv {
            println!("SKIPPED: running as root and setpriv(1) is unavailable to drop privileges");
            return;
        }
        Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
            ])
            .arg(TUNNEL)
            .args(args)
            .output()
            .unwrap()
    } else {
        tunnel(&args)
    };
    let line = usage_error(&out);
    assert!(
        line.contains("CAP_NET_ADMIN") || line.contains("/dev/net/tun"),
        "{line}"
    );
}
