//! Application workloads and receivers: request/response flow completion times, video stalls, a reader
//! limited to a rate, a fixed receive window.

use mpquic_netsim::Scenario;
use mpquic_netsim::engine::Engine;
use mpquic_netsim::results::RunResult;

/// A client and a server joined by one link `l` of `rate` bit/s and `delay_ms` one way (a queue of 1000
/// packets, no loss), one flow with the given extra keys (`kind`, `requests`, `receiver`, ...).
fn one_link(rate: u64, delay_ms: u64, duration_s: f64, flow: &str) -> Scenario {
    let text = format!(
        r#"
[scenario]
name = "wl"
duration = "{duration_s}s"
sample_interval = "100ms"
seed = 5

[nodes.client]
kind = "host"
interfaces = [{{ name = "eth0" }}]

[nodes.server]
kind = "host"
interfaces = [{{ name = "eth0" }}]

[links.l]
between = ["client.eth0", "server.eth0"]
rate_bps = {rate}
delay = "{delay_ms}ms"
queue = {{ kind = "packets", packets = 1000 }}

[[flows]]
name = "f"
from = "client"
to = "server"
cc = "newreno"
paths = [{{ route = ["l"] }}]
{flow}
"#
    );
    Scenario::from_toml_str(&text).unwrap()
}

fn run(s: Scenario) -> RunResult {
    Engine::run(s).unwrap().result
}

/// A full datagram is 1,228 bytes on the wire and carries ≈ 1,160 bytes of stream data (the multipath
/// tests measure the same ratio); the link serialises the UDP payload.
const WIRE_PER_DATA: f64 = 1228.0 / 1160.0;

/// Serialisation time in ms of `bytes` of stream data at `rate` bit/s, datagram overhead included.
fn serialise_ms(bytes: f64, rate: f64) -> f64 {
    bytes * WIRE_PER_DATA * 8.0 / rate * 1e3
}

fn requests(download: bool, keys: &str) -> String {
    let dir = if download { "download" } else { "upload" };
    format!("kind = \"requests\"\ndirection = \"{dir}\"\nrequests = {{ {keys} }}")
}

/// Objects that fit in the initial window (RFC 9002: 10 datagrams, ≈ 11.6 kB of data): 10 kB on a
/// 100 Mbit/s / 40 ms RTT path. Each object is one round trip — the request's half RTT and the response's
/// — plus the serialisation of the response (9 datagrams: 10 kB × 1228/1160 × 8 / 100 Mbit/s = 0.85 ms),
/// so FCT = 40.85 ms; measured 40.85 – 40.97 ms. An upload sends the object itself as the request: its FCT
/// (to the server's read of the last byte) is half an RTT plus the serialisation, 20.85 ms; measured
/// 20.84 – 20.86 ms. Tolerance 2 %.
#[test]
fn fct_of_objects_within_the_initial_window_is_one_rtt_plus_serialisation() {
    for download in [true, false] {
        let hand = if download { 40.0 } else { 20.0 } + serialise_ms(10_000.0, 100e6);
        let r = run(one_link(
            100_000_000,
            20,
            2.0,
            &requests(download, r#"sizes = ["10kB"], gap = "100ms", count = 5"#),
        ));
        let o = r.flows[0].objects.as_ref().unwrap();
        println!("download {download}: {o:?}, hand {hand:.2} ms");
        assert_eq!(o.count, 5);
        for v in [o.fct_p50_ms, o.fct_max_ms, o.fct_mean_ms] {
            let v = v.unwrap();
            assert!((v / hand - 1.0).abs() < 0.02, "FCT {v:.2} ms vs {hand:.2} ms");
        }
        // The flow completed with its fifth object: 5 × 10 kB delivered.
        assert_eq!(r.flows[0].delivered_bytes, 50_000);
    }
}

/// Slow start: the first 100 kB object on a 100 Mbit/s / 40 ms RTT path (BDP 500 kB, so the window limits).
/// Flights of 10, 20 and 40 datagrams carry 11.6 + 23.2 + 46.4 = 81.2 kB; the fourth flight carries the
/// remaining 18.8 kB (17 datagrams). The request takes half an RTT, each of the three window-limited flights
/// an RTT (the next one leaves on the acknowledgements of the previous one), the last flight half an RTT and
/// its serialisation (17 × 1228 B at 100 Mbit/s = 1.67 ms): 4 × 40 + 1.67 = 161.7 ms; measured 165.2 ms (the
/// pacer spreads each flight a little). Tolerance 5 %. Later objects find the window open and take ≈ 1.5
/// RTT or less.
#[test]
fn fct_of_the_first_object_counts_slow_start_rounds() {
    let r = run(one_link(
        100_000_000,
        20,
        2.0,
        &requests(true, r#"sizes = ["100kB"], gap = "100ms", count = 3"#),
    ));
    let o = r.flows[0].objects.as_ref().unwrap();
    let hand = 4.0 * 40.0 + 17.0 * 1228.0 * 8.0 / 100e6 * 1e3;
    println!("{o:?}, hand {hand:.2} ms");
    let first = o.fct_max_ms.unwrap();
    assert!(
        (first / hand - 1.0).abs() < 0.05,
        "first FCT {first:.2} vs {hand:.2} ms"
    );
    assert!(o.fct_p50_ms.unwrap() < 2.0 * 40.0, "{o:?}");
}

/// Serialisation-bound objects: 1 MB on a 10 Mbit/s / 2 ms RTT path (BDP 2.5 kB: the window opens within
/// a few round trips and the link is the limit). FCT = 1 RTT + 1 MB × 1228/1160 × 8 / 10 Mbit/s
/// = 2 + 846.9 = 848.9 ms; measured 845.3 – 847.4 ms. Tolerance 2 %.
#[test]
fn fct_of_large_objects_is_their_serialisation() {
    let r = run(one_link(
        10_000_000,
        1,
        4.0,
        &requests(true, r#"sizes = ["1MB"], gap = "200ms", count = 3"#),
    ));
    let o = r.flows[0].objects.as_ref().unwrap();
    let hand = 2.0 + serialise_ms(1e6, 10e6);
    println!("{o:?}, hand {hand:.2} ms");
    assert_eq!(o.count, 3);
    for v in [o.fct_p50_ms.unwrap(), o.fct_max_ms.unwrap()] {
        assert!((v / hand - 1.0).abs() < 0.02, "FCT {v:.2} vs {hand:.2} ms");
    }
}

fn video(download: bool, keys: &str) -> String {
    let dir = if download { "download" } else { "upload" };
    format!("kind = \"video\"\ndirection = \"{dir}\"\nvideo = {{ {keys} }}")
}

/// Video on a 10 Mbit/s / 20 ms RTT path, 1 s chunks, 8 s. At 2 Mbit/s a chunk (250 kB) takes
/// 250 kB × 1228/1160 × 8 / 10 Mbit/s + 1 RTT ≈ 232 ms < 1 s: the buffer fills and playback never stalls.
/// At 15 Mbit/s a chunk (1.875 MB) takes ≈ 1.61 s > 1 s: after the first, each chunk arrives ≈ 0.61 s after
/// the media ran out. Chunks are done at ≈ 1.6, 3.2, 4.8, 6.4 s (the first later by the handshake's RTT), so
/// three stalls of ≈ 0.61 s (1.8 s), and the media runs out again at ≈ 7.45 s, stalling to the end at 8 s
/// (≈ 0.55 s): ≈ 2.4 s in 4 stalls. Tolerance ±0.4 s.
#[test]
fn video_stalls_only_when_the_bitrate_exceeds_the_path() {
    for download in [true, false] {
        let low = run(one_link(
            10_000_000,
            10,
            8.0,
            &video(download, r#"bitrate = "2Mbit/s", chunk = "1s", buffer = "4s""#),
        ));
        let v = low.flows[0].video.as_ref().unwrap();
        println!("low, download {download}: {v:?}");
        assert_eq!(v.chunk_bytes, 250_000);
        assert_eq!(v.stall_s, 0.0, "{v:?}");
        assert_eq!(v.stalls, 0);
        // Every chunk takes a quarter of its media time or less; the buffer (4 s) caps how far ahead the
        // player gets, so at most 8 + 3 chunks are fetched in 8 s.
        assert!(v.chunk_time_max_ms.unwrap() < 300.0, "{v:?}");
        assert!((8..=11).contains(&v.chunks), "{v:?}");

        let high = run(one_link(
            10_000_000,
            10,
            8.0,
            &video(download, r#"bitrate = "15Mbit/s", chunk = "1s", buffer = "4s""#),
        ));
        let v = high.flows[0].video.as_ref().unwrap();
        println!("high, download {download}: {v:?}");
        assert!((v.stall_s - 2.4).abs() < 0.4, "{v:?}");
        assert!(v.stalls >= 3, "{v:?}");
        let chunk_ms = serialise_ms(1_875_000.0, 10e6);
        assert!(
            (v.chunk_time_p95_ms.unwrap() / chunk_ms - 1.0).abs() < 0.05,
            "{v:?} vs {chunk_ms:.0} ms"
        );
    }
}

/// A receiver reading at 20 Mbit/s on a 100 Mbit/s / 20 ms RTT path: the sender is held back by flow
/// control, and goodput is the read rate. Over 5 s the handshake (one RTT, 0.4 % of the time) and the
/// reader's 25 kB bucket (+0.04 Mbit/s) move it by less than 1 %: 20 Mbit/s ± 2 %. Both directions.
#[test]
fn read_rate_limits_goodput() {
    for dir in ["download", "upload"] {
        let r = run(one_link(
            100_000_000,
            10,
            5.0,
            &format!("direction = \"{dir}\"\nreceiver = {{ read_rate = \"20Mbit/s\" }}"),
        ));
        let f = &r.flows[0];
        let g = f.goodput_bps.unwrap();
        println!("{dir}: {:.3} Mbit/s, receiver {:?}", g / 1e6, f.receiver);
        assert!((g / 20e6 - 1.0).abs() < 0.02, "{dir}: {g}");
        // The stack buffered what the reader had not read: the unread peak is far above one bucket.
        assert!(
            f.receiver.as_ref().unwrap().unread_peak_bytes > 100_000,
            "{:?}",
            f.receiver
        );
    }
}

/// A fixed 64 KiB stream window on a 100 Mbit/s / 40 ms RTT path (BDP 500 kB): the window, not the path,
/// is the limit. A fixed window raises its limit to `consumed + W` as soon as that adds an eighth of the
/// window (the library's rule for `fixed` and `linux`, like a TCP receiver whose window moves with every
/// ACK). The sender's limit therefore lags the reader by between 0 and W/8 of credit, W/16 on average, and
/// each byte of credit comes back one round trip after the byte that freed it: goodput =
/// (W − W/16) / RTT = 15/16 × 65,536 × 8 / 40 ms = 12.29 Mbit/s. (With the half-window rule of `auto`, a
/// window-limited sender that sends each credit as one burst gets only W / (2 · RTT) = 6.55 Mbit/s: the
/// burst's first datagram triggers the round trip's only update.) Measured 12.24 (download) and 12.27 Mbit/s (upload). Tolerance ±3 %. The connection window
/// (fixed 1 MiB) does not bind. A reader that keeps up never has bytes above a gap on a lossless path, and
/// never more than the window unread.
#[test]
fn a_fixed_window_limits_goodput_to_fifteen_sixteenths_of_a_window_per_rtt() {
    let w = 65_536.0;
    let hand = 15.0 / 16.0 * w * 8.0 / 0.040;
    for dir in ["download", "upload"] {
        let r = run(one_link(
            100_000_000,
            20,
            4.0,
            &format!(
                "direction = \"{dir}\"\nreceiver = {{ policy = \"fixed\", window = \"64KiB\", conn_window = \"1MiB\" }}"
            ),
        ));
        let f = &r.flows[0];
        let g = f.goodput_bps.unwrap();
        println!(
            "{dir}: {:.3} Mbit/s (hand {:.3}), {:?}",
            g / 1e6,
            hand / 1e6,
            f.receiver
        );
        assert!((g / hand - 1.0).abs() < 0.03, "{dir}: {g} vs {hand}");
        assert!(g < w * 8.0 / 0.040, "{dir}: {g} above W/RTT");
        let rx = f.receiver.as_ref().unwrap();
        assert_eq!(rx.reassembly_peak_bytes, 0, "{rx:?}");
        assert!(rx.unread_peak_bytes <= 65_536, "{rx:?}");
    }
}

/// The same fixed 64 KiB window with `window_update = "half"`: credit is sent only once less than half the
/// window is left, so the sender gets a half window per round trip: W / (2 · RTT) = 65,536 × 8 / 80 ms =
/// 6.55 Mbit/s (±5 %: the sender's half-window bursts and the reader's steps do not line up exactly).
#[test]
fn the_half_window_update_rule_halves_a_window_limited_sender() {
    let w = 65_536.0;
    let hand = w * 8.0 / (2.0 * 0.040);
    let r = run(one_link(
        100_000_000,
        20,
        4.0,
        "receiver = { policy = \"fixed\", window_update = \"half\", window = \"64KiB\", conn_window = \"1MiB\" }",
    ));
    let g = r.flows[0].goodput_bps.unwrap();
    println!("{:.3} Mbit/s (hand {:.3})", g / 1e6, hand / 1e6);
    assert!((g / hand - 1.0).abs() < 0.05, "{g} vs {hand}");
}
