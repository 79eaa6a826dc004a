//! Opportunistic retransmission and penalisation against a multipath noq client whose receiver reads its
//! second socket only when the first is empty ([`World::second_socket_waits`]): mpquic serves a download on
//! two paths, and every packet it sends on path 1 waits at the client while path 0 is busy, a hole in the
//! stream. Measured on the sender: the stream's unacknowledged span (highest offset sent − lowest
//! unacknowledged offset) and how long the lowest unacknowledged offset stays put while data above it is
//! acknowledged (the lifetime of a hole). Also the losses the client declares among its own packets under
//! each ACK path policy. `REINJ_TRACE=1` prints the sender's state every 20 ms of virtual time.

use super::*;

/// The download.
const SIZE: usize = 24_000_000;
/// Each bottleneck (one per destination address): 100 Mbit/s, at most 20 ms of queue.
const RATE: u64 = 12_500_000;
const MAX_QUEUE: Duration = Duration::from_millis(20);
/// One-way propagation delay.
const DELAY: Duration = Duration::from_millis(10);
/// mpquic's stream send buffer (the default).
const SEND_BUFFER: u64 = 8 * 1024 * 1024;
/// mpquic's congestion window is capped below what a path's bottleneck holds (BDP 250 kB + 250 kB of queue),
/// so the fast path runs at its full rate without drop-tail losses: the holes come from path 1 only.
const MAX_WINDOW: u64 = 450_000;

/// noq with windows larger than mpquic's send buffer: flow control never binds, the send buffer does (the
/// case of the independent implementation that showed the problem).
fn big_windows(t: &mut noq_proto::TransportConfig) {
    t.stream_receive_window(noq_proto::VarInt::from_u32(64 * 1024 * 1024));
    t.receive_window(noq_proto::VarInt::MAX);
}

/// What one download measured.
#[derive(Debug)]
struct Run {
    /// Largest unacknowledged span seen (bytes).
    max_span: u64,
    /// Longest time the lowest unacknowledged offset stayed put with data acknowledged above it.
    max_hole: Duration,
    /// Virtual time from the request to the last byte read.
    elapsed: Duration,
    /// Stream bytes mpquic sent over both paths (retransmissions and copies included), over the download.
    stream_bytes_sent: u64,
    /// mpquic's counters.
    stats: mpc::ConnectionStats,
    /// Packets the noq client declared lost.
    noq_lost: u64,
    /// Packets the noq client sent.
    noq_sent: u64,
    /// Datagrams to the second address held back by the client's socket order (hold events).
    held: u64,
    /// Why the noq client closed the connection, if it did (then the download is incomplete).
    noq_closed: Option<String>,
}

impl Run {
    /// Stream bytes sent beyond the download, as a percentage of it.
    fn extra_pct(&self) -> f64 {
        (self.stream_bytes_sent as f64 - SIZE as f64) * 100.0 / SIZE as f64
    }
}

fn download(reinjection: bool, ack_path: mpc::AckPathPolicy, seed: u64) -> Run {
    let mp_tweak = move |t: &mut mpc::TransportConfig| {
        t.reinjection.enabled = reinjection;
        t.ack_path = ack_path;
        t.congestion_controller = format!("cubic:max_window={MAX_WINDOW}");
        assert_eq!(t.streams.send_buffer, SEND_BUFFER);
    };
    let mut w = World::with_tweaks(Role::NoqClient, seed, big_windows, &mp_tweak);
    w.delay = DELAY;
    w.rate = Some((RATE, MAX_QUEUE));
    w.handshake();
    let path1 = w.open_second_path();
    w.second_socket_waits = true;
    // A close by the client ends the run instead of failing it (the caller checks `noq_closed`).
    w.closing = true;
    let stream_bytes_before: u64 = {
        let c = w.mpp().conn().unwrap();
        [0, path1]
            .iter()
            .filter_map(|p| c.path_stats(PathId(*p)))
            .map(|s| s.stream_bytes_sent)
            .sum()
    };
    let body = pattern(SIZE, 3);
    let start = w.now;
    let mut request = Flow::default();
    let mut response = Flow::default();
    let mut max_span = 0u64;
    let mut max_hole = Duration::ZERO;
    // (lowest unacknowledged offset, since when) while a hole exists.
    let mut hole: Option<(u64, Instant)> = None;
    let trace = std::env::var("REINJ_TRACE").is_ok();
    let mut next_print = w.now;
    let ok = w.drive_until(Duration::from_secs(60), |w| {
        let now = w.now;
        pump(w.client.as_mut(), now, &mut request, b"GET /", true);
        pump(w.server.as_mut(), now, &mut response, &body, false);
        if let Some(id) = response.id {
            if let Some(p) = w.mpp().conn().unwrap().send_progress(mp_stream(id)) {
                max_span = max_span.max(p.span());
                if trace && now >= next_print {
                    next_print = now + Duration::from_millis(20);
                    let c = w.mpp().conn().unwrap();
                    let ps: Vec<_> = [0, path1]
                        .iter()
                        .filter_map(|q| c.path_stats(PathId(*q)))
                        .map(|s| {
                            (
                                s.cwnd,
                                s.bytes_in_flight,
                                s.srtt,
                                s.stream_bytes_sent,
                                s.packets_lost,
                            )
                        })
                        .collect();
                    eprintln!(
                        "t={:?} span={} above={} prefix={} sent={} {:?} {:?}",
                        now - start,
                        p.span(),
                        p.acked_above,
                        p.acked_prefix,
                        p.sent_end,
                        ps,
                        c.stats().reinjection
                    );
                }
                match hole {
                    Some((at, since)) if at == p.acked_prefix && p.has_hole() => {
                        max_hole = max_hole.max(now - since);
                    }
                    _ => hole = p.has_hole().then_some((p.acked_prefix, now)),
                }
            }
        }
        request.fin_seen || w.client.closed().is_some() || w.server.closed().is_some()
    });
    let elapsed = w.now - start;
    let noq_closed = w.client.closed();
    assert!(
        w.server.closed().is_none(),
        "mpquic closed: {:?}",
        w.server.closed()
    );
    if noq_closed.is_none() {
        assert!(
            ok && request.fin_seen,
            "download incomplete: {} of {SIZE} bytes",
            request.received.len()
        );
        assert_eq!(sha256(&request.received), sha256(&body), "download corrupted");
    }
    report(
        &mut w,
        &format!("download reinjection={reinjection} {ack_path:?}"),
    );
    let c = w.mpp().conn().unwrap();
    let stream_bytes_sent = [0, path1]
        .iter()
        .filter_map(|p| c.path_stats(PathId(*p)))
        .map(|s| s.stream_bytes_sent)
        .sum::<u64>()
        - stream_bytes_before;
    let stats = c.stats();
    let held = w.held;
    let noq = w.noqp().conn_mut().unwrap().stats();
    let run = Run {
        max_span,
        max_hole,
        elapsed,
        stream_bytes_sent,
        stats,
        noq_lost: noq.lost_packets,
        noq_sent: noq.sent_packets,
        held,
        noq_closed,
    };
    eprintln!(
        "[reinjection={reinjection} {ack_path:?}] max span {} B, longest hole {:?}, {:?} for {SIZE} B, extra stream \
         bytes {:.2} %, {:?}, noq declared {} of its {} packets lost, {} holds, noq closed: {:?}",
        run.max_span,
        run.max_hole,
        run.elapsed,
        run.extra_pct(),
        run.stats.reinjection,
        run.noq_lost,
        run.noq_sent,
        run.held,
        run.noq_closed
    );
    run
}

/// The threshold in force: mpquic's default, an eighth of the send buffer.
const THRESHOLD: u64 = SEND_BUFFER / 8;
/// noq's max_ack_delay (its default, 25 ms).
const NOQ_MAX_ACK_DELAY: Duration = Duration::from_millis(25);

/// Path 0's round-trip time at most: 20 ms of propagation plus the queue its window can build at the
/// bottleneck, (MAX_WINDOW − RATE · 20 ms) / RATE = (450 000 − 250 000) / 12.5 MB/s = 16 ms: 36 ms.
fn rtt0_max() -> Duration {
    let queue = Duration::from_nanos((MAX_WINDOW - RATE * 20 / 1000) * 1_000_000_000 / RATE);
    DELAY * 2 + queue
}

/// Path 0's share of a duration: the bytes its bottleneck delivers in `d`.
fn bytes_in(d: Duration) -> u64 {
    (d.as_secs_f64() * RATE as f64) as u64
}

/// The bounds with reinjection on (path 1's packets wait at the client as long as path 0 is busy, which is
/// the whole download: every path-1 packet is a hole that only a copy on path 0 fills):
/// * a hole lives until data acknowledged above it reaches the threshold — the first of it is acknowledged
///   at most one path-0 RTT after the hole was sent, and the threshold takes THRESHOLD / RATE = 83.9 ms of
///   path-0 acknowledgements — then its copy goes on path 0 at the next window opening and is acknowledged
///   one path-0 RTT (and at most one noq ACK delay) later: 36 + 83.9 + 36 + 25 = 180.9 ms;
/// * the span is the data acknowledged above the lowest hole (the threshold plus what path 0 delivers
///   while the copy travels, RATE · (RTT0 + ACK delay)) plus what is in flight on both paths (at most
///   MAX_WINDOW each): 1 048 576 + 762 500 + 2 · 450 000 = 2.71 MB.
fn bounds() -> (Duration, u64) {
    let hole =
        rtt0_max() + Duration::from_secs_f64(THRESHOLD as f64 / RATE as f64) + rtt0_max() + NOQ_MAX_ACK_DELAY;
    let span = THRESHOLD + bytes_in(rtt0_max() + NOQ_MAX_ACK_DELAY) + 2 * MAX_WINDOW;
    (hole, span)
}

/// Without reinjection the lowest hole (a packet of path 1) is never filled while path 0 is busy: the span
/// grows at path 0's rate until noq, which keeps at most 1024 separate buffered chunks of a stream, closes
/// the connection ("too many gaps in stream buffer") — long before the 8 MiB send buffer would have stopped
/// the sender — with a hole older than the bound that holds with reinjection.
#[test]
fn noqc_slow_second_socket_without_reinjection() {
    let r = download(false, mpc::AckPathPolicy::default(), 21);
    let (hole_bound, _) = bounds();
    assert!(
        r.held > 0,
        "the client never held a datagram to its second address"
    );
    assert_eq!(r.stats.reinjection, mpc::ReinjectionStats::default());
    let closed = r.noq_closed.as_deref().unwrap_or("");
    assert!(
        closed.contains("too many gaps"),
        "noq survived without reinjection: {closed:?}"
    );
    assert!(
        r.max_hole > hole_bound,
        "hole {:?} within {hole_bound:?}",
        r.max_hole
    );
    // 1024 chunks of at most 1200 bytes each were buffered at the client above the hole.
    assert!(r.max_span > 1024 * 1100, "span {}", r.max_span);
}

/// With reinjection (the default) the download completes intact, the lowest hole and the span stay within
/// the bounds of [`bounds`], and the copies cost less than 1 % of the download (each hole is re-sent once,
/// and only holes on path 1 are).
#[test]
fn noqc_slow_second_socket_with_reinjection() {
    let r = download(true, mpc::AckPathPolicy::default(), 21);
    let (hole_bound, span_bound) = bounds();
    assert!(
        r.held > 0,
        "the client never held a datagram to its second address"
    );
    assert_eq!(r.noq_closed, None);
    assert!(r.max_hole <= hole_bound, "hole {:?} > {hole_bound:?}", r.max_hole);
    assert!(r.max_span <= span_bound, "span {} > {span_bound}", r.max_span);
    let s = r.stats.reinjection;
    assert!(s.holes > 0 && s.packets > 0 && s.bytes > 0, "{s:?}");
    // Path 1 held every hole but loses nothing here, so it stays in slow start, where it is not penalised
    // (the penalty itself is tested in the connection's unit tests).
    assert!(r.extra_pct() < 1.0, "extra {:.2} %", r.extra_pct());
}

/// The losses the noq client declares among its own packets under each ACK path policy (printed for the
/// documentation; `--nocapture`), with and without reinjection.
#[test]
fn noqc_slow_second_socket_ack_policies() {
    for policy in [mpc::AckPathPolicy::SamePath, mpc::AckPathPolicy::LowestRtt] {
        for on in [false, true] {
            let r = download(on, policy, 21);
            assert_eq!(
                r.noq_closed.is_none(),
                on,
                "{policy:?} reinjection={on}: {:?}",
                r.noq_closed
            );
        }
    }
}
