//! `mpquic-perf server`, `mpquic-netem` and `mpquic-perf client --json` as separate processes on loopback:
//! goodput over two emulated paths against the emulated rates, a path taken down mid-run, and the one-line
//! usage errors.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use serde_json::Value;

#[path = "common/perf_procs.rs"]
mod perf_procs;

use perf_procs::{PERF, client, netem, read_until, server, two_path_run};

/// Goodput tests share two cores: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// 40 Mbit/s with a 10 ms RTT and 20 Mbit/s with a 40 ms RTT, one BDP of queue each (the default).
const PATHS: [&str; 2] = ["rate=40mbit,delay=5ms", "rate=20mbit,delay=20ms"];
const CAPACITY_BPS: f64 = 60e6;

fn check_both_paths_and_total(report: &Value) {
    let paths = report["end"]["streams"].as_array().unwrap();
    assert_eq!(paths.len(), 2, "{report:#}");
    let total = &report["end"]["mpquic"]["total"];
    for p in paths {
        // Each path delivered at least a fifth of what it could have alone over the run.
        let rate = if p["receiver"]["socket"] == 0 { 40e6 } else { 20e6 };
        let floor = rate / 8.0 * total["seconds"].as_f64().unwrap() / 5.0;
        assert!(
            p["receiver"]["bytes"].as_f64().unwrap() > floor,
            "path {} carried too little: {p:#}",
            p["receiver"]["socket"]
        );
    }
    assert_eq!(total["verified"], true);
    let goodput = total["goodput_bps"].as_f64().unwrap();
    let share = goodput / CAPACITY_BPS;
    assert!(
        (0.80..=1.05).contains(&share),
        "total goodput {:.1} Mbit/s is {:.0} % of the emulated 60 Mbit/s",
        goodput / 1e6,
        share * 100.0
    );
}

#[test]
fn upload_over_two_emulated_paths_gets_their_summed_rate() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (_server, addr) = server();
    let (_netem, fronts) = netem(addr, &PATHS, &[]);
    let report = two_path_run(&fronts, &["-t", "8"]);
    assert_eq!(report["start"]["mpquic"]["direction"], "upload");
    check_both_paths_and_total(&report);
}

#[test]
fn download_over_two_emulated_paths_gets_their_summed_rate() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (_server, addr) = server();
    let (_netem, fronts) = netem(addr, &PATHS, &[]);
    let report = two_path_run(&fronts, &["-t", "8", "-R", "-P", "2"]);
    assert_eq!(report["start"]["mpquic"]["direction"], "download");
    check_both_paths_and_total(&report);
    check_receiver_figures(&report);
}

/// The client receives a download over paths of 5 ms and 20 ms one way: bytes sent on the slow path arrive
/// after later bytes sent on the fast one, so some bytes must wait above a gap (HoL delay > 0), and every
/// figure must be consistent: unread bytes include the out-of-order ones, so their peak is at least as high;
/// the mean delay is at most the longest; peaks never fall from one interval to the next.
fn check_receiver_figures(report: &Value) {
    let r = &report["end"]["mpquic"]["receiver"];
    let f = |v: &Value, k: &str| v[k].as_f64().unwrap_or_else(|| panic!("no {k} in {v:#}"));
    let fraction = f(r, "out_of_order_fraction");
    assert!(fraction > 0.0 && fraction < 1.0, "{r:#}");
    assert!(f(r, "max_out_of_order_bytes") > 0.0, "{r:#}");
    assert!(
        f(r, "max_unread_bytes") >= f(r, "max_out_of_order_bytes"),
        "{r:#}"
    );
    assert!(f(r, "hol_delay_max_ms") > 0.0, "{r:#}");
    assert!(f(r, "hol_delay_mean_ms") <= f(r, "hol_delay_max_ms"), "{r:#}");
    assert!(
        f(r, "hol_delay_p95_ms") <= f(r, "hol_delay_max_ms") * 1.125,
        "{r:#}"
    );
    let intervals = report["intervals"].as_array().unwrap();
    assert!(!intervals.is_empty());
    let mut last = (0.0, 0.0);
    for i in intervals {
        let ri = &i["sum"]["mpquic"]["receiver"];
        let now = (f(ri, "max_out_of_order_bytes"), f(ri, "max_unread_bytes"));
        assert!(now.0 >= last.0 && now.1 >= last.1, "peaks fell: {intervals:#?}");
        assert!(now.0 <= f(r, "max_out_of_order_bytes"), "{ri:#} vs {r:#}");
        last = now;
    }
}

#[test]
fn a_path_taken_down_mid_run_does_not_stop_the_transfer() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (_server, addr) = server();
    // The handshake path (0, the faster one) goes down for good 3 s in.
    let (_netem, fronts) = netem(addr, &PATHS, &["--down", "0@3s"]);
    let report = two_path_run(&fronts, &["-t", "8"]);
    assert_eq!(report["end"]["mpquic"]["total"]["verified"], true);
    let intervals = report["intervals"].as_array().unwrap();
    // From 1.5 s after the outage until the client stops writing at 8 s (later intervals drain the send
    // buffer over path 1).
    let after: Vec<&Value> = intervals
        .iter()
        .filter(|i| (4.5..8.0).contains(&i["sum"]["start"].as_f64().unwrap()))
        .collect();
    assert!(after.len() >= 2, "{report:#}");
    for i in after {
        // Path 1 alone: 20 Mbit/s; the connection keeps going at a good part of it.
        let g = i["sum"]["bits_per_second"].as_f64().unwrap();
        assert!(g > 10e6, "goodput {g} after path 0 went down: {i:#}");
        let p0 = i["streams"].as_array().unwrap().iter().find(|p| p["socket"] == 0);
        assert!(
            p0.is_none_or(|p| p["bytes"].as_u64().unwrap() < 100_000),
            "path 0 is down: {i:#}"
        );
    }
}

fn usage_error(args: &[&str]) -> String {
    let out = client(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "one line expected: {err}");
    err
}

#[test]
fn bad_cc_or_path_is_a_one_line_error_naming_the_valid_choices() {
    let e = usage_error(&["127.0.0.1:4433", "--cc", "tahoe"]);
    assert!(
        e.contains("tahoe") && e.contains("cubic") && e.contains("olia") && e.contains("balia"),
        "{e}"
    );
    let e = usage_error(&["127.0.0.1:4433", "--cc", "cubic:gamma=2"]);
    assert!(e.contains("gamma") && e.contains("beta"), "{e}");
    let e = usage_error(&["127.0.0.1:4433", "--scheduler", "fastest"]);
    assert!(e.contains("minrtt") && e.contains("roundrobin"), "{e}");
    let e = usage_error(&["127.0.0.1:4433", "--path", "not-an-address"]);
    assert!(e.contains("LOCAL[=REMOTE][,backup]"), "{e}");
    let e = usage_error(&["127.0.0.1:4433", "--path", "127.0.0.1,spare"]);
    assert!(e.contains("valid: backup"), "{e}");
}

#[test]
fn qlog_dir_gets_one_parsable_trace_per_side() {
    let dir = std::env::temp_dir().join(format!("mpquic-perf-qlog-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (sdir, cdir) = (dir.join("server"), dir.join("client"));
    let mut child = Command::new(PERF)
        .args([
            "server",
            "--bind",
            "127.0.0.1:0",
            "-1",
            "--qlog",
            sdir.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let addr: Vec<SocketAddr> = read_until(
        &mut child,
        |l| {
            l.strip_prefix("mpquic-perf server listening on ")
                .map(|a| a.parse().unwrap())
        },
        1,
    );
    let out = client(&[
        &addr[0].to_string(),
        "-k",
        "-n",
        "1M",
        "-i",
        "0",
        "--qlog",
        cdir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The one-off server exits after the connection, flushing its trace.
    assert!(child.wait().unwrap().success());
    for (side, d) in [("client", &cdir), ("server", &sdir)] {
        let files: Vec<_> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(files.len(), 1, "{files:?}");
        assert!(files[0].to_str().unwrap().ends_with(&format!("_{side}.sqlog")));
        let text = std::fs::read_to_string(&files[0]).unwrap();
        let records: Vec<Value> = text
            .split('\u{1e}')
            .filter(|r| !r.trim().is_empty())
            .map(|r| serde_json::from_str(r).unwrap())
            .collect();
        assert_eq!(records[0]["qlog_format"], "JSON-SEQ");
        assert_eq!(records[0]["trace"]["vantage_point"]["type"], side);
        // 1 MB is over 700 data packets of at most 1452 bytes (the size path MTU discovery reaches on
        // loopback), sent by one side and received by the other, plus acknowledgements.
        let count = |name: &str| records.iter().filter(|r| r["name"] == name).count();
        let (sent, received) = (count("transport:packet_sent"), count("transport:packet_received"));
        assert!(
            sent > 10 && received > 10 && sent + received > 700,
            "{side}: {sent} sent, {received} received"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
