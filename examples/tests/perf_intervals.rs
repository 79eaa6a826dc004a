//! The interval accounting of `mpquic-perf` end to end: `mpquic-perf server`, `mpquic-netem` with two paths
//! and `mpquic-perf client --json` as separate processes on loopback. In every interval the sum is the sum of
//! the path rows (within one packet per path), no interval delivers more than the emulated paths can carry
//! (neither above 110 % of their rate nor above 100 % plus the measurement granularity), and no interval
//! before the last is empty. The JSON of each run also has iperf3's layout (the check of `iperf3_json.rs`,
//! here on a real run's output).
//!
//! The rates are low (6 and 3 Mbit/s) so that a loaded two-core machine keeps up; only these structural
//! properties are checked, no goodput target.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::sync::Mutex;

use serde_json::Value;

#[path = "common/iperf3_shape.rs"]
mod iperf3_shape;
#[path = "common/perf_procs.rs"]
mod perf_procs;

use perf_procs::{netem, server, two_path_run};

/// The two runs share two cores: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// 6 Mbit/s with a 20 ms RTT and 3 Mbit/s with a 40 ms RTT.
const PATHS: [&str; 2] = ["rate=6mbit,delay=10ms", "rate=3mbit,delay=20ms"];
const CAPACITY_BPS: f64 = 9e6;
/// One full-size packet (the largest UDP payload path MTU discovery reaches on loopback is below it).
const PACKET: f64 = 1_500.0;
/// The granularity of acknowledged bytes: a receiver may hold its acknowledgement back by up to its
/// max_ack_delay (RFC 9000 §13.2.1; 25 ms by default, §18.2), so an interval boundary can shift what the
/// paths delivered in 25 ms at their full rate (9 Mbit/s × 25 ms = 28 125 bytes) into the next interval,
/// and one packet per path on top.
const GRANULARITY: f64 = CAPACITY_BPS / 8.0 * 0.025 + 2.0 * PACKET;

/// Server, emulator and client; returns the client's JSON report.
fn run(extra: &[&str]) -> Value {
    let (_server, addr) = server();
    let (_netem, fronts) = netem(addr, &PATHS, &[]);
    two_path_run(&fronts, extra)
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The structural checks of every interval.
fn check_intervals(report: &Value) {
    let intervals = report["intervals"].as_array().unwrap();
    // 4 s in intervals of 0.5 s, plus the drain of what is still buffered when the writer stops (the send
    // buffer holds up to 8 MiB: at 9 Mbit/s the run lasts about 12 s).
    assert!(intervals.len() >= 7, "{report:#}");
    let mut saw_two_paths = false;
    for (k, i) in intervals.iter().enumerate() {
        let sum = &i["sum"];
        let rows = i["streams"].as_array().unwrap();
        saw_two_paths |= rows.len() == 2;
        let rows_bytes: f64 = rows.iter().map(|r| num(&r["bytes"])).sum();
        let bytes = num(&sum["bytes"]);
        assert!(
            (bytes - rows_bytes).abs() <= PACKET * rows.len() as f64,
            "interval {k}: sum {bytes} bytes, path rows {rows_bytes}: {i:#}"
        );
        let secs = num(&sum["seconds"]);
        assert!(
            (secs - (num(&sum["end"]) - num(&sum["start"]))).abs() < 1e-9,
            "{i:#}"
        );
        // Both bounds: never above 110 % of what the paths carry in the interval, and never more than the
        // measurement granularity above 100 % (for 0.5 s intervals the second is the tighter: 105.5 %).
        let carried = CAPACITY_BPS / 8.0 * secs;
        let most = (1.10 * carried).min(carried + GRANULARITY);
        assert!(
            bytes <= most,
            "interval {k} delivered {bytes} bytes in {secs:.3} s, more than the paths carry ({carried:.0} \
             bytes, at most {most:.0} with the margins): {i:#}"
        );
        if k + 1 < intervals.len() {
            assert!(bytes > 0.0, "interval {k} is empty before the end: {report:#}");
        }
    }
    assert!(saw_two_paths, "never two paths: {report:#}");
    assert_eq!(report["end"]["mpquic"]["total"]["verified"], true);
    // The end's received sum is the sum of the intervals (the same delivered bytes, counted once).
    let over_intervals: f64 = intervals.iter().map(|i| num(&i["sum"]["bytes"])).sum();
    assert_eq!(
        over_intervals,
        num(&report["end"]["sum_received"]["bytes"]),
        "{report:#}"
    );
    iperf3_shape::check(report);
}

#[test]
fn upload_intervals_sum_their_paths_and_stay_within_capacity() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let report = run(&["-t", "4", "-i", "0.5"]);
    assert_eq!(report["start"]["mpquic"]["accounting"], "acknowledged");
    check_intervals(&report);
}

#[test]
fn download_intervals_sum_their_paths_and_stay_within_capacity() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let report = run(&["-t", "4", "-i", "0.5", "-R"]);
    assert_eq!(report["start"]["mpquic"]["accounting"], "received");
    check_intervals(&report);
}
