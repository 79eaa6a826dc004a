//! What the process tests of `mpquic-perf` share: the server, the emulator in front of it and a two-path
//! client, each a child process on loopback that is killed when its handle is dropped.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

/// The `mpquic-perf` binary.
pub const PERF: &str = env!("CARGO_BIN_EXE_mpquic-perf");
/// The `mpquic-netem` binary.
pub const NETEM: &str = env!("CARGO_BIN_EXE_mpquic-netem");

/// A child process killed when dropped.
pub struct Proc(pub Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Reads the child's stdout until `pick` finds what it wants in a line (the rest keeps draining).
pub fn read_until<T>(child: &mut Child, mut pick: impl FnMut(&str) -> Option<T>, mut want: usize) -> Vec<T> {
    let out = child.stdout.take().unwrap();
    let mut lines = BufReader::new(out).lines();
    let mut found = Vec::new();
    while want > 0 {
        let line = lines.next().expect("process ended early").unwrap();
        if let Some(t) = pick(&line) {
            found.push(t);
            want -= 1;
        }
    }
    std::thread::spawn(move || for _ in lines {});
    found
}

/// Starts `mpquic-perf server` on an ephemeral loopback port; returns it and its address.
pub fn server() -> (Proc, SocketAddr) {
    let mut child = Command::new(PERF)
        .args(["server", "--bind", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let addr = read_until(
        &mut child,
        |l| {
            l.strip_prefix("mpquic-perf server listening on ")
                .map(|a| a.parse().unwrap())
        },
        1,
    );
    (Proc(child), addr[0])
}

/// Starts the emulator in front of `server` with `paths` specs; returns the front address of each path.
pub fn netem(server: SocketAddr, paths: &[&str], extra: &[&str]) -> (Proc, Vec<SocketAddr>) {
    let mut cmd = Command::new(NETEM);
    cmd.args(["--server", &server.to_string(), "--listen", "127.0.0.1:0"]);
    for p in paths {
        cmd.args(["--path", p]);
    }
    let mut child = cmd.args(extra).stdout(Stdio::piped()).spawn().unwrap();
    // "path k: client -> FRONT ... BACK -> server"
    let fronts = read_until(
        &mut child,
        |l| {
            let rest = l.strip_prefix("path ")?.split_once("client -> ")?.1;
            rest.split_whitespace().next()?.parse().ok()
        },
        paths.len(),
    );
    (Proc(child), fronts)
}

/// Runs `mpquic-perf client ARGS` to the end.
pub fn client(args: &[&str]) -> Output {
    Command::new(PERF).arg("client").args(args).output().unwrap()
}

/// Runs a client over both emulated paths and returns its JSON report.
pub fn two_path_run(fronts: &[SocketAddr], extra: &[&str]) -> Value {
    let second = format!("127.0.0.1={}", fronts[1]);
    let front0 = fronts[0].to_string();
    let mut args = vec![
        front0.as_str(),
        "--insecure",
        "--json",
        "--path",
        "127.0.0.1",
        "--path",
        &second,
    ];
    args.extend_from_slice(extra);
    let out = client(&args);
    assert!(
        out.status.success(),
        "client failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
