//! Receive-window policies with hand-computed windows: a reader limited to 1 MB per 50 ms round trip
//! against a peer that fills whatever credit it has, for `linux`, `auto` and `fixed`; the Linux minimum and
//! every policy's maximum; and the per-stream change at run time.

use std::time::Duration;

use super::super::flow::{LINUX_CUSHION, RecvWindow};
use super::*;

const RTT: Duration = Duration::from_millis(50);
/// The reader takes at most this much per round trip (1 MB per 50 ms = 20 MB/s).
const READ_PER_RTT: u64 = 1_000_000;
const KIB: u64 = 1024;

/// One round trip of the model: the peer has filled the window up to the advertised limit (it sends as
/// fast as credit allows; the credit of the previous round arrived), then the reader takes
/// `min(available, READ_PER_RTT)` in one read at `t`. Returns the window after the read.
fn round(w: &mut RecvWindow, consumed: &mut u64, t: Instant) -> u64 {
    w.receive_up_to(w.advertised()).unwrap();
    let n = (w.advertised() - *consumed).min(READ_PER_RTT);
    *consumed += n;
    let before = w.advertised();
    w.consume(n, Some(t), RTT);
    assert!(w.advertised() >= before, "the advertised limit never decreases");
    w.window()
}

/// Runs `rounds` round trips from a fresh window and returns the window after each.
fn windows(mut w: RecvWindow, rounds: u32) -> Vec<u64> {
    let t = t0();
    let mut consumed = 0;
    (0..rounds)
        .map(|k| round(&mut w, &mut consumed, t + RTT * k))
        .collect()
}

#[test]
fn linux_grows_to_twice_the_reading_rate_and_no_further() {
    // 256 KiB = 262 144 initial. Round 0 (t = 0): the reader takes the 262 144 bytes; the first read only
    // starts the measurement. Round 1 (t = 50 ms): another 262 144 in one RTT, above the 0 measured so far:
    // window = 2 · 262 144 + 16 · 1200 = 543 488. Round 2: the peer filled 543 488, the reader takes it:
    // 2 · 543 488 + 19 200 = 1 106 176. Round 3: 1 106 176 available, the reader takes its 1 000 000:
    // 2 · 1 000 000 + 19 200 = 2 019 200. From then on it takes 1 000 000 per RTT, not more than the
    // largest measurement, so the window stays at 2 019 200 (≈ 2 MB: two round trips of the reader's rate).
    assert_eq!(LINUX_CUSHION, 19_200);
    let w = RecvWindow::with_policy(WindowPolicy::Linux, 256 * KIB, 4096, 16 << 20);
    let got = windows(w, 40);
    assert_eq!(&got[..4], &[262_144, 543_488, 1_106_176, 2_019_200]);
    assert!(got[4..].iter().all(|&w| w == 2_019_200), "{got:?}");
}

#[test]
fn linux_tracks_the_reader_not_the_window() {
    // With the peer filling the window and no reader limit beyond it, the window is what the reader
    // consumes per RTT: 2 · W + 19 200 each round until the 4 MiB maximum, never above it.
    let mut w = RecvWindow::with_policy(WindowPolicy::Linux, 256 * KIB, 4096, 4 << 20);
    let t = t0();
    let mut consumed = 0u64;
    let mut expect = 256 * KIB;
    for k in 0..12u32 {
        w.receive_up_to(w.advertised()).unwrap();
        let n = w.advertised() - consumed;
        consumed += n;
        w.consume(n, Some(t + RTT * k), RTT);
        if k >= 1 {
            expect = (2 * n + LINUX_CUSHION).max(expect).min(4 << 20);
        }
        assert_eq!(w.window(), expect, "round {k}");
    }
    // 262 144 → 543 488 → 1 106 176 → 2 231 552 → 4 482 304 capped at 4 194 304.
    assert_eq!(w.window(), 4 << 20);
}

#[test]
fn linux_maximum_and_minimum_bound_the_window() {
    // Maximum 1 500 000: round 3 would give 2 019 200, cut to 1 500 000; never beyond.
    let w = RecvWindow::with_policy(WindowPolicy::Linux, 256 * KIB, 4096, 1_500_000);
    let got = windows(w, 20);
    assert_eq!(&got[..4], &[262_144, 543_488, 1_106_176, 1_500_000]);
    assert!(got.iter().all(|&w| w <= 1_500_000));
    // Minimum: an initial window of 1000 starts at the 4096 floor (Linux's tcp_rmem[0]); the others ignore
    // the floor.
    let linux = RecvWindow::with_policy(WindowPolicy::Linux, 1000, 4096, 1 << 20);
    assert_eq!((linux.window(), linux.advertised()), (4096, 4096));
    for p in [WindowPolicy::Auto, WindowPolicy::Fixed] {
        let w = RecvWindow::with_policy(p, 1000, 4096, 1 << 20);
        assert_eq!((w.window(), w.advertised()), (1000, 1000), "{p}");
    }
    // The transport parameters carry the window actually enforced.
    let cfg = StreamsConfig {
        window_policy: WindowPolicy::Linux,
        stream_window_uni: 1000,
        conn_window: 2000,
        min_stream_window: 4096,
        min_conn_window: 8192,
        ..StreamsConfig::default()
    };
    let p = params(&cfg);
    assert_eq!(p.initial_max_stream_data_uni.into_inner(), 4096);
    assert_eq!(p.initial_max_data.into_inner(), 8192);
    assert_eq!(p.initial_max_stream_data_bidi_local.into_inner(), 256 * KIB);
}

#[test]
fn auto_doubles_while_updates_come_within_two_rtts_as_before() {
    // The doubling rule: half a window consumed within 2 RTT (50 ms rounds, so within one round) doubles
    // the window. Round 0: the first read starts the measurement, 262 144 stays. Round 1: 262 144 more
    // (≥ half) 50 ms later: 524 288. Round 2: 524 288 more: 1 048 576. Round 3: 1 000 000 (≥ 524 288):
    // 2 097 152. Afterwards the reader takes 1 000 000 per round, less than half of 2 097 152, so each
    // half window takes two rounds (100 ms, not less than 2 RTT): the window stays at 2 097 152. The half
    // rule (doubling when half-window updates follow each other within 2 RTT) gives the same windows here.
    let w = RecvWindow::with_policy(WindowPolicy::Auto, 256 * KIB, 4096, 16 << 20);
    let got = windows(w, 40);
    assert_eq!(&got[..4], &[262_144, 524_288, 1_048_576, 2_097_152]);
    assert!(got[4..].iter().all(|&w| w == 2_097_152), "{got:?}");
    let half = RecvWindow::with_policy(WindowPolicy::Auto, 256 * KIB, 4096, 16 << 20)
        .with_update(super::super::WindowUpdate::Half);
    assert_eq!(windows(half, 40), got);
    // Capped at its maximum.
    let w = RecvWindow::with_policy(WindowPolicy::Auto, 256 * KIB, 4096, 600_000);
    assert!(windows(w, 40).iter().all(|&w| w <= 600_000));
    // `RecvWindow::new` is the Auto policy.
    let got_new = windows(RecvWindow::new(256 * KIB, 16 << 20), 10);
    let got_auto = windows(
        RecvWindow::with_policy(WindowPolicy::Auto, 256 * KIB, 0, 16 << 20),
        10,
    );
    assert_eq!(got_new, got_auto);
}

#[test]
fn fixed_never_grows() {
    // Every round the reader takes the whole 262 144-byte window (less than its 1 MB): the window, and so
    // the rate (262 144 B per 50 ms), stay put.
    let mut w = RecvWindow::with_policy(WindowPolicy::Fixed, 256 * KIB, 4096, 16 << 20);
    let t = t0();
    let mut consumed = 0;
    for k in 0..40u32 {
        assert_eq!(round(&mut w, &mut consumed, t + RTT * k), 262_144);
        assert_eq!(w.advertised(), consumed + 262_144);
    }
    // The connection window does not follow a stream window either.
    w.ensure_window(1 << 20);
    assert_eq!(w.window(), 262_144);
}

#[test]
fn set_recv_window_changes_one_stream_at_run_time() {
    let (mut c, mut s) = pair(small(1000), small(1000));
    let id = c.open_uni().unwrap();
    c.write(id, Bytes::from(vec![7u8; 5000])).unwrap();
    flush(&mut c, &mut s);
    assert_eq!(s.read_buffered(id), Some(1000));
    assert_eq!(s.recv_limit(id), Some(1000));
    // Range checks name the value.
    assert_eq!(
        s.set_recv_window(id, 0, WindowPolicy::Fixed),
        Err(SetWindowError::InvalidWindow(0))
    );
    assert_eq!(
        s.set_recv_window(id, 1 << 62, WindowPolicy::Fixed),
        Err(SetWindowError::InvalidWindow(1 << 62))
    );
    assert_eq!(
        s.set_recv_window(sid(Side::Client, Dir::Uni, 3), 10, WindowPolicy::Auto),
        Err(SetWindowError::ClosedStream),
        "never opened"
    );
    // A fixed 3000-byte window: nothing read yet, so the limit rises at once to 0 + 3000.
    s.set_recv_window(id, 3000, WindowPolicy::Fixed).unwrap();
    assert_eq!(s.recv_window_policy(id), Some(WindowPolicy::Fixed));
    assert_eq!((s.recv_window(id), s.recv_limit(id)), (Some(3000), Some(3000)));
    flush(&mut s, &mut c);
    flush(&mut c, &mut s);
    assert_eq!(s.read_buffered(id), Some(3000));
    // Shrinking to 500 never takes back the advertised 3000.
    s.set_recv_window(id, 500, WindowPolicy::Fixed).unwrap();
    assert_eq!((s.recv_window(id), s.recv_limit(id)), (Some(500), Some(3000)));
    // Reading 2800 of the 3000 leaves 200 < 250: the update is consumed + window = 3300.
    let now = t0();
    let mut read = 0;
    while read < 2800 {
        read += s.read(id, 2800 - read, now).unwrap().unwrap().len();
    }
    assert_eq!(s.recv_limit(id), Some(3300));
    // Back to a growing window: Auto keeps the current 500 (below its new maximum).
    s.set_recv_window(id, 1 << 20, WindowPolicy::Auto).unwrap();
    assert_eq!(s.recv_window(id), Some(500));
}

#[test]
fn config_ranges_are_validated_with_the_field_named() {
    assert_eq!(StreamsConfig::default().validate(), Ok(()));
    let e = StreamsConfig {
        max_stream_window: 1 << 62,
        ..StreamsConfig::default()
    }
    .validate()
    .unwrap_err();
    assert_eq!(
        e,
        StreamsConfigError::WindowTooLarge {
            field: "max_stream_window",
            value: 1 << 62
        }
    );
    assert!(e.to_string().contains("max_stream_window = 4611686018427387904"));
    let e = StreamsConfig {
        min_conn_window: 1 << 30,
        ..StreamsConfig::default()
    }
    .validate()
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "min_conn_window = 1073741824 is above max_conn_window = 25165824"
    );
}

#[test]
fn linux_measures_over_the_slowest_path_rtt() {
    // Last path's RTT 10 ms, slowest path 100 ms: the Linux policy measures once per 100 ms. 10 000 bytes
    // arrive and are read at 0, 50 and 100 ms. The read at 0 starts the measurement; at 50 ms only 50 ms
    // passed; at 100 ms the reader consumed 20 000 bytes since the start: window = 2 · 20 000 + 19 200 =
    // 59 200, and the limit consumed + window = 30 000 + 59 200 = 89 200. (Measuring over 10 ms would have
    // grown it at 50 ms already, to 2 · 10 000 + 19 200 = 39 200.)
    let cfg = StreamsConfig {
        window_policy: WindowPolicy::Linux,
        stream_window_uni: 10_000,
        max_stream_window: 1_000_000,
        conn_window: 1_000_000,
        max_conn_window: 4_000_000,
        ..small(10_000)
    };
    let (_, mut s) = pair(small(10_000), cfg);
    s.set_rtt(Duration::from_millis(10));
    s.set_sizing_rtt(Duration::from_millis(100));
    let id = sid(Side::Client, Dir::Uni, 0);
    let t = t0();
    let mut windows = Vec::new();
    for k in 0..3u32 {
        let at = t + Duration::from_millis(50) * k;
        s.on_stream_data(
            id,
            10_000 * u64::from(k),
            Bytes::from(vec![1u8; 10_000]),
            false,
            at,
        )
        .unwrap();
        while let Ok(Some(_)) = s.read(id, usize::MAX, at) {}
        windows.push((s.recv_window(id).unwrap(), s.recv_limit(id).unwrap()));
    }
    assert_eq!(windows, [(10_000, 20_000), (10_000, 30_000), (59_200, 89_200)]);
}
