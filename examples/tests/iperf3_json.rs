//! `mpquic-perf --json` follows iperf3's JSON layout: the same keys with the same kinds of values as the
//! output of `iperf3 --json` (the fixture `fixtures/iperf3_tcp_client.json`, a TCP client's report written
//! after iperf3's documented output format), with our own figures only under `mpquic` keys and the TCP- and
//! host-specific keys listed in `iperf3::OMITTED` left out.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use mpquic_tools::perf::iperf3::to_iperf3;
use mpquic_tools::perf::report::{
    Interval, PathEventRecord, PathSample, PathSummary, ReceiverFigures, Report, TestParams, Total,
};
use mpquic_tools::perf::wire::Direction;
use serde_json::Value;

#[path = "common/iperf3_shape.rs"]
mod iperf3_shape;

use iperf3_shape::{FIXTURE, check, compare};

fn sample(path: u32, bytes: u64, secs: f64) -> PathSample {
    PathSample {
        path,
        bytes,
        goodput_bps: bytes as f64 * 8.0 / secs,
        cwnd: 60_000 + u64::from(path),
        srtt_ms: 10.5 + f64::from(path) * 30.0,
        rttvar_ms: 1.25,
        mtu: 1452,
        retransmissions: u64::from(path),
    }
}

fn summary(path: u32, bytes: u64) -> PathSummary {
    PathSummary {
        path,
        local: Some(format!("127.0.0.1:{}", 40_000 + path).parse().unwrap()),
        remote: format!("127.0.0.1:{}", 5_000 + path).parse().unwrap(),
        backup: false,
        abandoned: false,
        bytes,
        stream_bytes_sent: bytes + 3_000,
        goodput_bps: bytes as f64 * 8.0 / 2.0,
        udp_bytes_sent: bytes + 90_000,
        udp_bytes_received: 20_000,
        packets_sent: bytes / 1_400,
        retransmissions: 2,
        srtt_ms: 12.0,
        min_rtt_ms: 10.0,
        cwnd: 70_000,
    }
}

/// Two paths over 2 s: path 0 delivers 500 kB then 400 kB, path 1 200 kB then 300 kB.
fn report(direction: Direction) -> Report {
    Report {
        server: "127.0.0.1:5000".parse().unwrap(),
        started_unix: 1_700_000_000.25,
        test: TestParams {
            duration: 2.0,
            bytes: 0,
            blksize: 65_536,
            interval: 1.0,
        },
        direction,
        streams: 1,
        cc: "cubic".to_owned(),
        scheduler: "minrtt".to_owned(),
        multipath: true,
        handshake_ms: 3.5,
        intervals: vec![
            Interval::of(
                0.0,
                1.0,
                vec![sample(0, 500_000, 1.0), sample(1, 200_000, 1.0)],
                ReceiverFigures::default(),
            ),
            Interval::of(
                1.0,
                2.0,
                vec![sample(0, 400_000, 1.0), sample(1, 300_000, 1.0)],
                ReceiverFigures::default(),
            ),
        ],
        events: vec![PathEventRecord {
            at: 0.1,
            event: "validated".to_owned(),
            path: 1,
        }],
        paths: vec![summary(0, 900_000), summary(1, 500_000)],
        total: Total {
            bytes: 1_399_970,
            seconds: 2.0,
            goodput_bps: 1_399_970.0 * 8.0 / 2.0,
            verified: true,
        },
        receiver: ReceiverFigures::default(),
    }
}

#[test]
fn the_fixture_is_iperf3s_layout() {
    // The comparison itself: the fixture matches itself, and a report without `end` or with a string for a
    // number does not.
    let theirs: Value = serde_json::from_str(FIXTURE).unwrap();
    check(&theirs);
    let mut broken = theirs.clone();
    broken.as_object_mut().unwrap().remove("end");
    broken["intervals"][0]["sum"]["bytes"] = Value::String("1".to_owned());
    broken["start"]["version"] = Value::Bool(true);
    let mut errors = Vec::new();
    compare("", "", &broken, &theirs, &mut errors);
    assert_eq!(errors.len(), 3, "{errors:#?}");
}

#[test]
fn an_upload_report_has_iperf3s_keys_and_value_kinds() {
    let j = to_iperf3(&report(Direction::Upload));
    check(&j);
    // One iperf3 "stream" per path; the sum is theirs: 500 000 + 200 000 bytes = 5.6 Mbit/s in 1 s.
    let i0 = &j["intervals"][0];
    assert_eq!(i0["streams"].as_array().unwrap().len(), 2);
    assert_eq!(i0["streams"][1]["socket"], 1);
    assert_eq!(i0["sum"]["bytes"], 700_000);
    assert_eq!(i0["sum"]["bits_per_second"], 5.6e6);
    assert_eq!(i0["sum"]["retransmits"], 1);
    assert_eq!(i0["sum"]["sender"], true);
    // RTTs in microseconds: 10.5 ms and 40.5 ms.
    assert_eq!(i0["streams"][0]["rtt"], 10_500);
    assert_eq!(i0["streams"][1]["rtt"], 40_500);
    assert_eq!(i0["streams"][0]["rttvar"], 1_250);
    // Received: what the paths delivered (900 000 + 500 000); sent: what they carried (3 000 more each).
    let end = &j["end"];
    assert_eq!(end["sum_received"]["bytes"], 1_400_000);
    assert_eq!(end["sum_sent"]["bytes"], 1_406_000);
    assert_eq!(end["sum_received"]["bits_per_second"], 5.6e6);
    assert_eq!(end["streams"][0]["sender"]["max_snd_cwnd"], 70_000);
    assert_eq!(end["streams"][1]["sender"]["max_rtt"], 40_500);
    assert_eq!(end["streams"][1]["sender"]["min_rtt"], 10_000);
    assert_eq!(end["sender_tcp_congestion"], "cubic");
    assert_eq!(end["mpquic"]["total"]["verified"], true);
    assert_eq!(j["start"]["test_start"]["protocol"], "QUIC");
    assert_eq!(j["start"]["test_start"]["duration"], 2);
    assert_eq!(j["start"]["test_start"]["reverse"], 0);
    assert_eq!(j["start"]["timestamp"]["timesecs"], 1_700_000_000u64);
    assert_eq!(j["start"]["timestamp"]["time"], "Tue, 14 Nov 2023 22:13:20 GMT");
    assert_eq!(j["start"]["connected"][1]["remote_port"], 5001);
    assert_eq!(j["start"]["mpquic"]["accounting"], "acknowledged");
    // The intervals add up to the end's received sum.
    let over_intervals: u64 = j["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["sum"]["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(over_intervals, 1_400_000);
}

#[test]
fn a_download_report_has_the_same_layout_with_the_client_receiving() {
    let j = to_iperf3(&report(Direction::Download));
    check(&j);
    assert_eq!(j["intervals"][0]["sum"]["sender"], false);
    assert_eq!(j["start"]["test_start"]["reverse"], 1);
    assert_eq!(j["start"]["mpquic"]["accounting"], "received");
    // The client sees only what arrived: sent and received are the same bytes.
    assert_eq!(j["end"]["sum_sent"]["bytes"], j["end"]["sum_received"]["bytes"]);
    assert_eq!(j["end"]["receiver_tcp_congestion"], "cubic");
    let mut no_intervals = report(Direction::Download);
    no_intervals.intervals.clear();
    check(&to_iperf3(&no_intervals));
}
