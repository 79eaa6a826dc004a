//! The client's report in iperf3's JSON layout (`iperf3 --json`), so that scripts and plotting tools written
//! for iperf3 read `mpquic-perf --json` unchanged.
//!
//! iperf3 reports per socket; multipath QUIC has one connection with several paths, so each **path** takes
//! the place of an iperf3 stream (`socket` is the path ID). The keys iperf3 defines keep its names and units
//! (bytes, seconds, bits per second, RTT in microseconds); everything that is ours is under `mpquic` keys.
//! docs/perf.md lists the mapping key by key.

use serde_json::{Map, Value, json};

use super::report::{Interval, PathSample, PathSummary, Report, accounting, bps};
use super::wire::Direction;

/// The iperf3 keys `mpquic-perf` does not produce: they describe TCP sockets or the host's CPU, which have no
/// QUIC counterpart here (documented in docs/perf.md).
pub const OMITTED: &[&str] = &[
    "cookie",
    "tcp_mss_default",
    "sock_bufsize",
    "sndbuf_actual",
    "rcvbuf_actual",
    "cpu_utilization_percent",
];

/// Microseconds of a figure in milliseconds, rounded (iperf3 reports RTTs as integer microseconds).
fn us(ms: f64) -> u64 {
    (ms * 1e3).round().max(0.0) as u64
}

/// `Thu, 26 Nov 2026 21:33:50 GMT` for Unix seconds, as iperf3's `timestamp.time` (RFC 7231 §7.1.1.1
/// IMF-fixdate).
pub fn http_date(unix: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = unix / 86_400;
    let secs = unix % 86_400;
    // Days to the civil date: H. Hinnant, "chrono-Compatible Low-Level Date Algorithms" (days_from_civil's
    // inverse), with eras of 400 years starting on 1 March.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        DAYS.get((days % 7) as usize).copied().unwrap_or("Thu"),
        MONTHS.get((month - 1) as usize).copied().unwrap_or("Jan"),
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// One path's row of an interval (an iperf3 `intervals[].streams[]` entry).
fn interval_stream(i: &Interval, p: &PathSample, sender: bool) -> Value {
    json!({
        "socket": p.path,
        "start": i.start,
        "end": i.end,
        "seconds": i.end - i.start,
        "bytes": p.bytes,
        "bits_per_second": p.goodput_bps,
        "retransmits": p.retransmissions,
        "snd_cwnd": p.cwnd,
        "rtt": us(p.srtt_ms),
        "rttvar": us(p.rttvar_ms),
        "pmtu": p.mtu,
        "omitted": false,
        "sender": sender,
        "mpquic": p,
    })
}

/// An interval (iperf3 `intervals[]`): one stream per path and their sum.
fn interval(i: &Interval, sender: bool) -> Value {
    json!({
        "streams": i.paths.iter().map(|p| interval_stream(i, p, sender)).collect::<Vec<_>>(),
        "sum": {
            "start": i.start,
            "end": i.end,
            "seconds": i.end - i.start,
            "bytes": i.total_bytes,
            "bits_per_second": i.total_goodput_bps,
            "retransmits": i.paths.iter().map(|p| p.retransmissions).sum::<u64>(),
            "omitted": false,
            "sender": sender,
            "mpquic": { "receiver": i.receiver },
        },
    })
}

/// A path's window and RTT over the run: the largest window and RTT of its interval samples and its final
/// figures, the smallest RTT seen, and the mean of its interval samples (the final figure without samples).
fn rtt_and_window(r: &Report, s: &PathSummary) -> (u64, u64, u64, u64) {
    let samples: Vec<&PathSample> = r
        .intervals
        .iter()
        .flat_map(|i| i.paths.iter())
        .filter(|p| p.path == s.path)
        .collect();
    let max_cwnd = samples.iter().map(|p| p.cwnd).fold(s.cwnd, u64::max);
    let max_rtt = samples.iter().map(|p| p.srtt_ms).fold(s.srtt_ms, f64::max);
    let mean_rtt = if samples.is_empty() {
        s.srtt_ms
    } else {
        samples.iter().map(|p| p.srtt_ms).sum::<f64>() / samples.len() as f64
    };
    (max_cwnd, us(max_rtt), us(s.min_rtt_ms), us(mean_rtt))
}

/// The report in iperf3's layout.
pub fn to_iperf3(r: &Report) -> Value {
    let upload = r.direction == Direction::Upload;
    let secs = r.total.seconds;
    let connected: Vec<Value> = r
        .paths
        .iter()
        .map(|p| {
            json!({
                "socket": p.path,
                "local_host": p.local.map_or_else(String::new, |a| a.ip().to_string()),
                "local_port": p.local.map_or(0, |a| a.port()),
                "remote_host": p.remote.ip().to_string(),
                "remote_port": p.remote.port(),
            })
        })
        .collect();
    let start = json!({
        "connected": connected,
        "version": format!("mpquic-perf {}", env!("CARGO_PKG_VERSION")),
        "system_info": format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        "timestamp": {
            "time": http_date(r.started_unix as u64),
            "timesecs": r.started_unix as u64,
        },
        "connecting_to": { "host": r.server.ip().to_string(), "port": r.server.port() },
        "test_start": {
            "protocol": "QUIC",
            "num_streams": r.streams,
            "blksize": r.test.blksize,
            "omit": 0,
            "duration": r.test.duration.round() as u64,
            "bytes": r.test.bytes,
            "blocks": 0,
            "reverse": u8::from(!upload),
            "tos": 0,
        },
        "mpquic": {
            "direction": r.direction,
            "accounting": accounting(r.direction),
            "multipath": r.multipath,
            "scheduler": r.scheduler,
            "handshake_ms": r.handshake_ms,
            "duration": r.test.duration,
            "interval": r.test.interval,
        },
    });
    let mut streams = Vec::new();
    let (mut sent, mut received, mut retransmits) = (0u64, 0u64, 0u64);
    for p in &r.paths {
        let (max_cwnd, max_rtt, min_rtt, mean_rtt) = rtt_and_window(r, p);
        // The client sees the sender's side of an upload (what it put on the path) and only the receiver's
        // side of a download (what arrived): there the sender's bytes are the received ones.
        let sent_bytes = if upload { p.stream_bytes_sent } else { p.bytes };
        sent += sent_bytes;
        received += p.bytes;
        retransmits += p.retransmissions;
        streams.push(json!({
            "sender": {
                "socket": p.path,
                "start": 0,
                "end": secs,
                "seconds": secs,
                "bytes": sent_bytes,
                "bits_per_second": bps(sent_bytes, secs),
                "retransmits": p.retransmissions,
                "max_snd_cwnd": max_cwnd,
                "max_rtt": max_rtt,
                "min_rtt": min_rtt,
                "mean_rtt": mean_rtt,
                "sender": upload,
            },
            "receiver": {
                "socket": p.path,
                "start": 0,
                "end": secs,
                "seconds": secs,
                "bytes": p.bytes,
                "bits_per_second": bps(p.bytes, secs),
                "sender": upload,
            },
            "mpquic": p,
        }));
    }
    let mut end = object(json!({
        "streams": streams,
        "sum_sent": {
            "start": 0,
            "end": secs,
            "seconds": secs,
            "bytes": sent,
            "bits_per_second": bps(sent, secs),
            "retransmits": retransmits,
            "sender": upload,
        },
        "sum_received": {
            "start": 0,
            "end": secs,
            "seconds": secs,
            "bytes": received,
            "bits_per_second": bps(received, secs),
            "sender": upload,
        },
    }));
    // iperf3 names the controllers of both ends; the client knows its own (the sender's for an upload).
    let (sender_cc, receiver_cc) = if upload {
        (r.cc.clone(), String::new())
    } else {
        (String::new(), r.cc.clone())
    };
    end.insert("sender_tcp_congestion".to_owned(), Value::String(sender_cc));
    end.insert("receiver_tcp_congestion".to_owned(), Value::String(receiver_cc));
    end.insert(
        "mpquic".to_owned(),
        json!({
            "total": r.total,
            "events": r.events,
            "receiver": r.receiver,
        }),
    );
    json!({
        "start": start,
        "intervals": r.intervals.iter().map(|i| interval(i, upload)).collect::<Vec<_>>(),
        "end": Value::Object(end),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_imf_fixdates() {
        // 0 is Thursday 1 January 1970; 951 782 400 = 2000-02-29 00:00:00 (a leap day in a year divisible by
        // 400: 30 years × 365 days + 7 leap days (1972 … 1996) + 31 + 28 days = 11 016 days × 86 400 s).
        assert_eq!(http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(http_date(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
        // 1 700 000 000 s = 19 675 days (2023-11-14, a Tuesday) and 80 000 s (22:13:20).
        assert_eq!(http_date(1_700_000_000), "Tue, 14 Nov 2023 22:13:20 GMT");
    }

    #[test]
    fn rtts_are_integer_microseconds() {
        assert_eq!(us(12.3456), 12_346);
        assert_eq!(us(0.0), 0);
    }
}
