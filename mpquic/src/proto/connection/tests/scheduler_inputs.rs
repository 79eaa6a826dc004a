//! What the connection feeds its scheduler and what it does with the answer, checked through real
//! connections over the pair harness: every decision below is made by the registry's scheduler on the view
//! the connection built, and compared with the scheduler's published formula worked out by hand in the
//! comments.
//!
//! The paths' windows are held fixed by [`FixedWindows`] (no growth, no reduction, no pacing), so that the
//! hand computations hold for the whole run; [`Recorder`] wraps the scheduler under test and keeps each view,
//! decision and sent-packet report.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::harness::{Pair, addr, configs};
use super::multipath::{CLIENT2, mp_config};
use super::transfer::pattern;
use crate::cc::{AckEvent, CcMetrics, CongestionController, CongestionEvent, SentEvent};
use crate::proto::ack_tracker::EcnCodepoint;
use crate::proto::connection::{CcFactory, SchedFactory, TransportConfig};
use crate::proto::streams::StreamsConfig;
use crate::sched::schedulers::Blest;
use crate::sched::{ConnView, Decision, PathId, PathView, Scheduler, SentInfo, registry};

/// Congestion windows fixed per path (bytes), changeable by the test while the connection runs.
#[derive(Debug, Clone, Default)]
pub(super) struct Windows(Arc<Mutex<BTreeMap<u32, u64>>>);

impl Windows {
    pub(super) fn new(windows: &[(u32, u64)]) -> Self {
        Windows(Arc::new(Mutex::new(windows.iter().copied().collect())))
    }

    pub(super) fn set(&self, path: u32, window: u64) {
        self.0.lock().unwrap().insert(path, window);
    }
}

/// A controller whose windows never change: each path's window is what [`Windows`] says (1 MiB when not
/// set); no pacing. Its state is "fixed": not slow start.
#[derive(Debug)]
pub(super) struct FixedWindows(pub(super) Windows);

impl CongestionController for FixedWindows {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn on_path_added(&mut self, _path: PathId, _now: Instant, _max_datagram_size: u16) {}
    fn on_path_removed(&mut self, _path: PathId) {}
    fn on_max_datagram_size(&mut self, _path: PathId, _max_datagram_size: u16) {}
    fn on_packet_sent(&mut self, _ev: &SentEvent) {}
    fn on_ack(&mut self, _ev: &AckEvent<'_>) {}
    fn on_congestion(&mut self, _ev: &CongestionEvent) {}
    fn window(&self, path: PathId) -> u64 {
        self.0.0.lock().unwrap().get(&path.0).copied().unwrap_or(1 << 20)
    }
    fn pacing_rate(&self, _path: PathId) -> Option<u64> {
        None
    }
    fn metrics(&self, path: PathId) -> Option<CcMetrics> {
        Some(CcMetrics {
            cwnd: self.window(path),
            ssthresh: None,
            pacing_rate: None,
            state: "fixed",
            extras: Vec::new(),
        })
    }
}

/// One call of the scheduler: the view the connection built and the answer.
#[derive(Debug, Clone)]
pub(super) struct Call {
    pub(super) paths: Vec<PathView>,
    pub(super) bytes_waiting: u64,
    pub(super) flow_credit: u64,
    pub(super) decision: Decision,
    /// BLEST's λ after the call (when the scheduler under test is BLEST).
    pub(super) lambda: Option<f64>,
}

impl Call {
    pub(super) fn path(&self, id: u32) -> &PathView {
        self.paths.iter().find(|p| p.id == PathId(id)).unwrap()
    }

    pub(super) fn sendable(&self, id: u32) -> bool {
        self.path(id).can_send(1200)
    }
}

/// What a [`Recorder`] saw.
#[derive(Debug, Default)]
pub(super) struct Log {
    pub(super) calls: Vec<Call>,
    pub(super) sent: Vec<SentInfo>,
}

/// The scheduler under test, shared with the test so that it can be inspected.
#[derive(Debug)]
enum Inner {
    Boxed(Box<dyn Scheduler>),
    Blest(Blest),
}

impl Inner {
    fn get(&mut self) -> &mut dyn Scheduler {
        match self {
            Inner::Boxed(s) => s.as_mut(),
            Inner::Blest(b) => b,
        }
    }
}

/// Wraps a scheduler and records its calls; the decisions are the wrapped scheduler's.
#[derive(Debug, Clone)]
pub(super) struct Recorder {
    inner: Arc<Mutex<Inner>>,
    pub(super) log: Arc<Mutex<Log>>,
}

impl Recorder {
    pub(super) fn new(spec: &str) -> Self {
        Recorder {
            inner: Arc::new(Mutex::new(Inner::Boxed(registry::build(spec).unwrap()))),
            log: Arc::default(),
        }
    }

    fn blest(b: Blest) -> Self {
        Recorder {
            inner: Arc::new(Mutex::new(Inner::Blest(b))),
            log: Arc::default(),
        }
    }

    /// A scheduler factory handing out this recorder (for one connection).
    pub(super) fn factory(&self) -> SchedFactory {
        let r = self.clone();
        SchedFactory(Arc::new(move || Box::new(r.clone())))
    }

    pub(super) fn calls(&self) -> Vec<Call> {
        self.log.lock().unwrap().calls.clone()
    }

    pub(super) fn sent(&self) -> Vec<SentInfo> {
        self.log.lock().unwrap().sent.clone()
    }

    fn lambda(&self) -> Option<f64> {
        match &*self.inner.lock().unwrap() {
            Inner::Blest(b) => Some(b.lambda()),
            Inner::Boxed(_) => None,
        }
    }

    fn record(&self, conn: &ConnView<'_>, decision: &Decision) {
        let lambda = self.lambda();
        self.log.lock().unwrap().calls.push(Call {
            paths: conn.paths.to_vec(),
            bytes_waiting: conn.bytes_waiting,
            flow_credit: conn.flow_credit,
            decision: decision.clone(),
            lambda,
        });
    }
}

impl Scheduler for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn select_send(&mut self, conn: &ConnView<'_>, now: Instant) -> Decision {
        let d = self.inner.lock().unwrap().get().select_send(conn, now);
        self.record(conn, &d);
        d
    }
    fn select_retrans(&mut self, conn: &ConnView<'_>, now: Instant) -> Decision {
        let d = self.inner.lock().unwrap().get().select_retrans(conn, now);
        self.record(conn, &d);
        d
    }
    fn on_sent(&mut self, sent: &SentInfo) {
        self.inner.lock().unwrap().get().on_sent(sent);
        self.log.lock().unwrap().sent.push(*sent);
    }
    fn on_ack(&mut self, ack: &crate::sched::AckInfo) {
        self.inner.lock().unwrap().get().on_ack(ack);
    }
    fn on_loss(&mut self, loss: &crate::sched::LossInfo) {
        self.inner.lock().unwrap().get().on_loss(loss);
    }
    fn on_path_event(&mut self, event: &crate::sched::PathEvent) {
        self.inner.lock().unwrap().get().on_path_event(event);
    }
}

/// Generous receive windows: flow control is not the limit unless a test says so.
fn big_windows() -> StreamsConfig {
    const MIB: u64 = 1 << 20;
    StreamsConfig {
        stream_window_bidi_local: 16 * MIB,
        stream_window_bidi_remote: 16 * MIB,
        stream_window_uni: 16 * MIB,
        max_stream_window: 64 * MIB,
        conn_window: 16 * MIB,
        max_conn_window: 64 * MIB,
        ..StreamsConfig::default()
    }
}

/// A client whose scheduler is `rec` and whose windows are `windows`, and a server with `server_streams`
/// receive windows; path 0 is `CLIENT`–`SERVER` with 10 ms each way (20 ms RTT), path 1 `CLIENT2`–`SERVER`
/// with `slow_extra` more each way. Both paths are validated when it returns.
fn two_paths(
    seed: u64,
    rec: &Recorder,
    windows: &Windows,
    slow_extra: Duration,
    server_streams: StreamsConfig,
) -> Pair {
    let w = windows.clone();
    let cc = CcFactory(Arc::new(move || Box::new(FixedWindows(w.clone()))));
    two_paths_with_cc(seed, rec, Some(cc), slow_extra, server_streams)
}

/// [`two_paths`] with the client's controller from `cc` (the configured default when `None`).
fn two_paths_with_cc(
    seed: u64,
    rec: &Recorder,
    cc_factory: Option<CcFactory>,
    slow_extra: Duration,
    server_streams: StreamsConfig,
) -> Pair {
    let (mut cc, mut sc) = configs(None, mp_config());
    // The packet schedules below are computed with every path ID's connection IDs issued at the handshake,
    // so that no PATH_NEW_CONNECTION_ID frame joins the data once path 1 is open.
    cc.transport = TransportConfig {
        scheduler_factory: Some(rec.factory()),
        congestion_controller_factory: cc_factory,
        streams: big_windows(),
        unused_path_cids: u64::MAX,
        ..mp_config()
    };
    sc.transport = TransportConfig {
        streams: server_streams,
        unused_path_cids: u64::MAX,
        ..mp_config()
    };
    let mut p = Pair::from_configs(cc, sc, seed);
    p.client_extra_addrs.push(addr(CLIENT2));
    p.extra_delay.insert(addr(CLIENT2), slow_extra);
    p.handshake();
    super::multipath::open_second_path(&mut p, Duration::from_secs(3));
    p.run_for(Duration::from_millis(500));
    p
}

/// Writes `data` on a new client stream (all of it: the send buffer holds 8 MiB) and finishes it.
fn client_write(p: &mut Pair, data: &[u8]) -> crate::proto::streams::StreamId {
    let c = p.client.conn();
    let id = c.open_bi().unwrap();
    let n = c.write(id, Bytes::copy_from_slice(data)).unwrap();
    assert_eq!(n, data.len());
    c.finish(id).unwrap();
    id
}

/// Drives the pair, the server reading everything, until the server saw the FIN of `stream` or `max`
/// passed; returns whether it did.
fn deliver(p: &mut Pair, stream: crate::proto::streams::StreamId, len: usize, max: Duration) -> bool {
    let mut got = 0usize;
    let mut fin = false;
    p.drive_until(max, |p| {
        let now = p.now;
        let s = p.server.conn();
        while !fin {
            match s.read(stream, usize::MAX, now) {
                Ok(Some(b)) => got += b.len(),
                Ok(None) => fin = true,
                Err(_) => break,
            }
        }
        fin && got == len
    })
}

fn data_packets_on(sent: &[SentInfo], path: u32) -> usize {
    sent.iter().filter(|s| s.path == PathId(path)).count()
}

/// Marks an ack-eliciting packet of the server as received on the client's path 0, after a gap, so that an
/// ACK is due there immediately (RFC 9000 §13.2.1: a gap calls for an immediate acknowledgement). The packet
/// number is made up: the test does not deliver the client's datagrams.
fn ack_due_on_path_0(p: &mut Pair) {
    let now = p.now;
    let c = p.client.conn();
    let tracker = &mut c.paths.get_mut(&PathId(0)).unwrap().ack;
    let pn = tracker.largest_received().map_or(0, |l| l + 2);
    assert!(tracker.on_packet_received(now, pn, true, EcnCodepoint::NotEct));
    assert!(tracker.wants_immediate_ack());
}

/// Issue: a decision must be a commitment. Round-robin over two paths with room, an ACK due on path 0 before
/// every datagram: the ACK claims each datagram for path 0, and before the fix the scheduler's answer was
/// kept only when it was path 0: of 10 calls, path 0 got 5 data packets and path 1 none, although
/// round-robin had advanced 10 times.
///
/// Round-robin (one packet per turn) answers 0, 1, 0, 1, … so the 10 answers are 5 × path 0, 5 × path 1, and
/// the data packets must follow them one for one, in order. The ACK on path 0 waits at most one datagram.
#[test]
fn round_robin_decisions_are_carried_out_when_an_ack_claims_the_datagram() {
    let rec = Recorder::new("roundrobin");
    let windows = Windows::new(&[]);
    let mut p = two_paths(81, &rec, &windows, Duration::from_millis(20), big_windows());
    let calls_before = rec.calls().len();
    let sent_before = rec.sent().len();
    client_write(&mut p, &pattern(200_000, 3));
    let mut buf = Vec::new();
    let mut datagram_paths = Vec::new();
    for _ in 0..40 {
        let calls = rec.calls().len() - calls_before;
        let sent = rec.sent().len() - sent_before;
        if calls >= 10 && sent >= calls {
            break;
        }
        ack_due_on_path_0(&mut p);
        let now = p.now;
        let t = p.client.conn().poll_transmit(now, &mut buf).unwrap();
        datagram_paths.push(t.path.0);
    }
    let decisions: Vec<u32> = rec.calls()[calls_before..]
        .iter()
        .map(|c| match c.decision {
            Decision::Path(id) => id.0,
            ref other => panic!("round-robin answered {other:?}"),
        })
        .collect();
    let data: Vec<u32> = rec.sent()[sent_before..].iter().map(|s| s.path.0).collect();
    assert_eq!(decisions.len(), 10, "{decisions:?}");
    assert_eq!(decisions, [0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
    assert_eq!(data, decisions, "data packets must follow the decisions");
    assert_eq!(data.iter().filter(|&&x| x == 0).count(), 5);
    assert_eq!(data.iter().filter(|&&x| x == 1).count(), 5);
    // The ACK due on path 0 before every datagram: never two datagrams in a row elsewhere.
    assert!(
        !datagram_paths.windows(2).any(|w| w == [1, 1]),
        "{datagram_paths:?}"
    );
}

/// The kernel's round-robin keeps a partly used quota. `roundrobin:segments=3` over two paths with room: the
/// turns are 0 0 0 1 1 1 0; then path 0's window is full (held at 0 by the test) and path 1 takes two packets;
/// when path 0's window opens, path 0 finishes its turn (2 more: its quota was 1 of 3) before path 1
/// finishes its own (1 more), and a new round starts: 0 0 0 1 1 1. Without the per-path quota path 0 lost the
/// rest of its turn (path 1 went on to 3, then path 0 started a fresh turn).
#[test]
fn round_robin_keeps_a_partial_quota_when_a_window_fills_mid_turn() {
    let rec = Recorder::new("roundrobin:segments=3");
    let windows = Windows::new(&[]);
    let mut p = two_paths(82, &rec, &windows, Duration::from_millis(20), big_windows());
    let sent_before = rec.sent().len();
    client_write(&mut p, &pattern(200_000, 4));
    let mut buf = Vec::new();
    let mut poll_until = |p: &mut Pair, packets: usize| {
        for _ in 0..20 {
            if rec.sent().len() - sent_before >= packets {
                return;
            }
            let now = p.now;
            p.client.conn().poll_transmit(now, &mut buf).unwrap();
        }
        panic!("no data packet");
    };
    poll_until(&mut p, 7);
    windows.set(0, 0);
    poll_until(&mut p, 9);
    windows.set(0, 1 << 20);
    poll_until(&mut p, 18);
    let data: Vec<u32> = rec.sent()[sent_before..sent_before + 18]
        .iter()
        .map(|s| s.path.0)
        .collect();
    assert_eq!(data, [0, 0, 0, 1, 1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 1]);
}

/// LLHD's goodput input (LLHD: maximise `γ_i = GP_i/GP_max + β·RTT_max/RTT_i`, β = 0.001). Path 0: a
/// 20 000 B window over 20 ms, path 1: a 1 000 000 B window over 200 ms; windows kept full, each path
/// delivers one window per round trip: GP_0 = 20 000 B / 0.02 s = 1 MB/s, GP_1 = 1 000 000 B / 0.2 s =
/// 5 MB/s. Then γ_0 = 1/5 + 0.001·200/20 = 0.21 and γ_1 = 5/5 + 0.001·200/200 = 1.001: while both can send,
/// the slow path that delivers five times more is preferred. Before the fix the connection never set the
/// delivery rate, γ_i was the RTT term alone (0.01 against 0.001) and LLHD was minRTT.
///
/// A warm-up transfer gives both paths rate samples (windows are whole packets of 1 200 B: 16 and 833, so
/// 0.96 and 5.0 MB/s); then, with both paths idle, 400 000 B are written: every packet of it fits in path 1's
/// window, and LLHD puts all of it there.
#[test]
fn llhd_prefers_the_path_that_delivers_more() {
    let rec = Recorder::new("llhd");
    let windows = Windows::new(&[(0, 20_000), (1, 1_000_000)]);
    let mut p = two_paths(83, &rec, &windows, Duration::from_millis(90), big_windows());
    let id = client_write(&mut p, &pattern(3_000_000, 5));
    assert!(deliver(&mut p, id, 3_000_000, Duration::from_secs(10)));
    p.run_for(Duration::from_millis(500));
    let (calls_before, sent_before) = (rec.calls().len(), rec.sent().len());
    let id = client_write(&mut p, &pattern(400_000, 6));
    assert!(deliver(&mut p, id, 400_000, Duration::from_secs(10)));
    let calls = &rec.calls()[calls_before..];
    let first = &calls[0];
    let (gp0, gp1) = (
        first.path(0).delivery_rate.unwrap() as f64,
        first.path(1).delivery_rate.unwrap() as f64,
    );
    assert!((gp0 - 1e6).abs() < 0.2e6, "path 0 delivers {gp0} B/s");
    assert!((gp1 - 5e6).abs() < 0.5e6, "path 1 delivers {gp1} B/s");
    let mut both = 0;
    for c in calls.iter().filter(|c| c.sendable(0) && c.sendable(1)) {
        let (p0, p1) = (c.path(0), c.path(1));
        let gp = |v: &PathView| v.delivery_rate.unwrap() as f64;
        let (gp_max, rtt_max) = (gp(p0).max(gp(p1)), p0.srtt.max(p1.srtt).as_secs_f64());
        let gamma = |v: &PathView| gp(v) / gp_max + 0.001 * rtt_max / v.srtt.as_secs_f64();
        let (g0, g1) = (gamma(p0), gamma(p1));
        assert!(
            (g0 - 0.21).abs() < 0.05 && (g1 - 1.001).abs() < 0.01,
            "γ {g0} {g1}"
        );
        assert_eq!(c.decision, Decision::Path(PathId(1)), "γ0 {g0}, γ1 {g1}");
        both += 1;
    }
    assert!(both > 300, "{both} decisions with both paths free");
    let sent = &rec.sent()[sent_before..];
    assert_eq!(data_packets_on(sent, 0), 0);
    assert!(data_packets_on(sent, 1) > 300);
}

/// OTIAS counts the connection's backlog. `T_i = (max(0, unsent − (cwnd_i − unacked_i))/cwnd_i + 0.5)·srtt_i`
/// with `unsent` the bytes waiting: path 0 20 ms with a 60 000 B window, path 1 100 ms with 300 000 B. With
/// path 0 full, `T_0 = (k/60 000 + 0.5)·20` for a backlog of `k`, and `T_1 ≥ 0.5·100 = 50 ms` (equal when
/// path 1's window has room for the backlog): path 1 can only win when `T_0 > 50 ms`, above
/// `k₁ = 60 000·(100 − 20)/(2·20) = 120 000 B`. So a smaller backlog waits for path 0, and path 1 carries
/// packets only while more than `k₁` waits (the 400 000 B written leave it plenty at first: with both paths
/// idle, `T_1 = ((400 000 − 300 000)/300 000 + 0.5)·100 = 83 ms` beats `T_0 = (340 000/60 000 + 0.5)·20 =
/// 123 ms`, and path 1 takes packets until its free window is down to about 120 000 B). This harness
/// acknowledges path 0's window a round trip at a time, so path 0 is full once per 20 ms round, with the
/// backlog about 60 000 B lower each time (≈ 167 000, 108 000, 50 000 B): the scheduler is asked at least
/// once with path 0 full and less than 108 000 B waiting, and must wait. Before the
/// backlog was counted, `unsent` was one packet: `T_0` = 10.4 ms against `T_1` = −48 ms, and path 1 was used
/// whenever path 0 was full, whatever the backlog; before the estimate was kept at or above `srtt/2`, path 1
/// won with any backlog below 45 000 B, the small backlogs that path 0 drains first.
#[test]
fn otias_waits_for_the_fast_path_while_the_backlog_is_small() {
    let rec = Recorder::new("otias");
    let windows = Windows::new(&[(0, 60_000), (1, 300_000)]);
    let mut p = two_paths(84, &rec, &windows, Duration::from_millis(40), big_windows());
    let calls_before = rec.calls().len();
    let id = client_write(&mut p, &pattern(400_000, 7));
    assert!(deliver(&mut p, id, 400_000, Duration::from_secs(10)));
    let calls = &rec.calls()[calls_before..];
    // A margin of 12 000 B below k₁ covers a path-0 srtt up to 21 ms (k₁ = 60 000·(50 − 10.5)/21 =
    // 112 900 B); the samples here are 20 ms.
    let mut waits = 0;
    for c in calls.iter() {
        if c.decision == Decision::Path(PathId(1)) {
            assert!(
                c.bytes_waiting > 108_000,
                "path 1 with a backlog of {} B",
                c.bytes_waiting
            );
        }
        if !c.sendable(0) && c.sendable(1) && c.bytes_waiting < 108_000 {
            assert_eq!(c.decision, Decision::Wait, "backlog {} B", c.bytes_waiting);
            waits += 1;
        }
    }
    assert!(waits >= 1, "{waits} waits for path 0");
    assert!(data_packets_on(&rec.sent(), 1) > 0);
}

/// STTF spreads the connection's backlog as the kernel assigns its send queue. Fixed windows, congestion
/// avoidance (growth model: one MSS per round): path 0 20 ms with 12 000 B (10 packets), path 1 90 ms with
/// 6 000 B (5 packets). 64 KiB written with both idle (57 packets of about 1 160 B; the model counts
/// `⌈k/1 200⌉` = 55 at the start):
/// * path 0's 10 packets go at once (srtt/2 = 10 ms, the earliest);
/// * path 0 full: its next packets arrive at 30 ms (round 1: 11 packets), then 50 ms; path 1's at 45 ms.
///   About 45 packets are left and 11 < 45 arrive on path 0 before 45 ms, so path 1 gets a share: it takes
///   packets while its window has room, 5;
/// * path 1 full (next at 135 ms, when path 0 has delivered 81 > 40): the rest waits for path 0.
///
/// So 52 packets go on path 0 and 5 on path 1. A backlog of 12 000 B (11 packets): path 0 takes 10, and for
/// the last one path 0 delivers 11 ≥ 1 before 45 ms: path 1 gets nothing. Before the fix STTF saw no
/// backlog: 30 ms on path 0 against 45 ms, so it waited for path 0 for every packet and path 1 got none of
/// the 64 KiB.
#[test]
fn sttf_spreads_a_backlog_as_the_kernel_assigns_its_send_queue() {
    let rec = Recorder::new("sttf");
    let windows = Windows::new(&[(0, 12_000), (1, 6_000)]);
    let mut p = two_paths(85, &rec, &windows, Duration::from_millis(35), big_windows());
    let sent_before = rec.sent().len();
    let id = client_write(&mut p, &pattern(12_000, 8));
    assert!(deliver(&mut p, id, 12_000, Duration::from_secs(5)));
    p.run_for(Duration::from_millis(300));
    let sent = &rec.sent()[sent_before..];
    assert_eq!(data_packets_on(sent, 1), 0);
    assert!(data_packets_on(sent, 0) >= 11);

    let (calls_before, sent_before) = (rec.calls().len(), rec.sent().len());
    let id = client_write(&mut p, &pattern(65_536, 9));
    assert!(deliver(&mut p, id, 65_536, Duration::from_secs(5)));
    let sent = &rec.sent()[sent_before..];
    assert_eq!(data_packets_on(sent, 1), 5, "path 1 carries its window");
    assert!(
        data_packets_on(sent, 0) >= 51,
        "{} on path 0",
        data_packets_on(sent, 0)
    );
    for c in &rec.calls()[calls_before..] {
        assert!(!c.path(0).in_slow_start && !c.path(1).in_slow_start);
        if c.decision == Decision::Path(PathId(1)) {
            // Path 1 only with more than the 11 packets path 0 delivers before 45 ms.
            assert!(c.bytes_waiting.div_ceil(1200) > 11, "{}", c.bytes_waiting);
        }
    }
}

/// The slow-start flag comes from the controller: NewReno starts in slow start (the view says so on the
/// first data packet) and leaves it at the first loss (the view says so afterwards).
#[test]
fn the_slow_start_flag_follows_the_controller() {
    let rec = Recorder::new("minrtt");
    let mut p = two_paths_with_cc(
        86,
        &rec,
        Some(CcFactory(Arc::new(|| {
            crate::cc::registry::build("newreno").unwrap()
        }))),
        Duration::from_millis(20),
        big_windows(),
    );
    let calls_before = rec.calls().len();
    p.loss = 0.02;
    let id = client_write(&mut p, &pattern(2_000_000, 10));
    assert!(deliver(&mut p, id, 2_000_000, Duration::from_secs(30)));
    let calls = &rec.calls()[calls_before..];
    assert!(calls[0].path(0).in_slow_start && calls[0].path(1).in_slow_start);
    assert!(p.client.conn().stats().packets_lost > 0);
    let last = calls.last().unwrap();
    assert!(!last.path(0).in_slow_start, "still in slow start after losses");
}

/// Loses one data packet of the client on path 0: its window (`window`, held by `windows`) is opened by
/// one packet, the packet the scheduler places there is taken from the client and discarded, and the window
/// is closed again. Returns whether a data packet was lost.
fn lose_one_data_packet(p: &mut Pair, rec: &Recorder, windows: &Windows, window: u64) -> bool {
    let before = rec.sent().len();
    windows.set(0, window + 1200);
    let now = p.now;
    let mut buf = Vec::new();
    let t = p.client.conn().poll_transmit(now, &mut buf);
    windows.set(0, window);
    let sent = rec.sent();
    t.is_some_and(|t| t.path.0 == 0) && sent.len() == before + 1 && sent[before].path == PathId(0)
}

/// Drives an upload of `len` bytes on `stream` to its end, in steps of 1 ms. The server reads everything it
/// has at once every `read_every` (`None`: every step). With `lose` (path 0's window), once per
/// `read_every` period, when the client's connection-level credit is below 60 000 B, one of its data packets
/// on path 0 is lost ([`lose_one_data_packet`]). Returns the number of packets lost so.
fn upload(
    p: &mut Pair,
    stream: crate::proto::streams::StreamId,
    len: usize,
    read_every: Option<Duration>,
    lose: Option<(&Recorder, &Windows, u64)>,
) -> u32 {
    let start = p.now;
    let mut got = 0usize;
    let mut fin = false;
    let mut next_read = start;
    let mut lost_in: Option<u128> = None;
    let mut count = 0;
    for _ in 0..60_000 {
        let now = p.now;
        let period = read_every.map_or(1, |d| now.duration_since(start).as_nanos() / d.as_nanos());
        if now >= next_read {
            if let Some(d) = read_every {
                next_read += d;
            }
            let s = p.server.conn();
            while !fin {
                match s.read(stream, usize::MAX, now) {
                    Ok(Some(b)) => got += b.len(),
                    Ok(None) => fin = true,
                    Err(_) => break,
                }
            }
        }
        if fin && got == len {
            return count;
        }
        if let Some((rec, windows, window)) = lose {
            let c = p.client.conn();
            let low = c.streams.conn_send_credit() < 60_000 && c.streams.has_stream_data();
            if low && lost_in.is_none_or(|l| period > l) && lose_one_data_packet(p, rec, windows, window) {
                lost_in = Some(period);
                count += 1;
            }
        }
        p.run_for(Duration::from_millis(1));
    }
    panic!("upload incomplete: {got} of {len} B");
}

/// BLEST's decision for a recorded call where path 0 (fast) is full and path 1 can send, by the paper's
/// rule: `X = (cwnd_f + MSS·(r − 1)/2)·r` with `r = srtt_s/srtt_f`, send on path 1 iff
/// `λ·X ≤ SW − (bytes_in_flight_s + MSS)`, `SW = flow credit + Σ bytes in flight`. Returns (X, avail, send).
fn blest_rule(c: &Call) -> (f64, f64, bool) {
    let (f, s) = (c.path(0), c.path(1));
    let r = s.srtt.as_secs_f64() / f.srtt.as_secs_f64();
    let x = (f.cwnd as f64 + f.mss as f64 * (r - 1.0) / 2.0) * r;
    let sw = (c.flow_credit + f.bytes_in_flight + s.bytes_in_flight) as f64;
    let avail = sw - (s.bytes_in_flight + s.mss) as f64;
    (x, avail, c.lambda.unwrap() * x <= avail)
}

/// BLEST's λ hears of send-window-blocked retransmissions. The receiver's connection window is 200 000 B;
/// path 0 has a fixed 52 800 B window over 20 ms, path 1 the same over 60 ms: `r = 3` and
/// `X = (52 800 + 1 200·(3 − 1)/2)·3 = 162 000 B`, `SW` at most about 200 000 B.
///
/// Phase 1: the receiving application reads once per slow-path RTT (60 ms), and once per period, when the
/// sender's credit is nearly used up, one of its packets on path 0 is lost: the hole holds the receiver's
/// window, the sender uses up its credit, and the lost data is sent again while flow control blocks new
/// data — a blocked retransmission every slow-path RTT. λ starts at 1.2 and gains 0.04 per update (once per
/// slow-path RTT) with such an event: 1.24, 1.28, then 1.3, the maximum, where it stays. Before the fix the
/// connection reported every packet as neither retransmitted nor blocked, so λ only lost 0.01 per update.
///
/// Phase 2: the application reads continuously, nothing is lost, `SW` comes back to about 200 000 B. With
/// λ = 1.3, `λ·X = 210 600 B` exceeds any `SW − MSS`: BLEST waits every time, also where λ = 1.2 (the
/// value before any update, `λ·X = 194 400 B`) would have sent on path 1. Without events λ then decays by
/// 0.01 per update, and path 1 is used again once `λ·X ≤ avail` (λ ≤ 1.23 for `avail` ≈ 200 000 B).
///
/// In both phases every decision is the rule's for the recorded view.
#[test]
fn blest_lambda_rises_with_blocked_retransmissions_and_blest_waits() {
    let rec = Recorder::blest(Blest::new());
    let windows = Windows::new(&[(0, 52_800), (1, 52_800)]);
    // Credit in half-window steps (the phases below were worked out with them): the sender's credit runs
    // low once per read, which is when phase 1 loses a packet.
    let server = StreamsConfig {
        conn_window: 200_000,
        max_conn_window: 200_000,
        window_update: crate::proto::streams::WindowUpdate::Half,
        ..big_windows()
    };
    let mut p = two_paths(87, &rec, &windows, Duration::from_millis(20), server);
    let rtt_s = Duration::from_millis(60);

    // Phase 1.
    let (calls_before, sent_before) = (rec.calls().len(), rec.sent().len());
    let len = 2_000_000;
    let id = client_write(&mut p, &pattern(len, 11));
    let lost = upload(&mut p, id, len, Some(rtt_s), Some((&rec, &windows, 52_800)));
    let sent = &rec.sent()[sent_before..];
    let blocked = sent.iter().filter(|s| s.retransmission && s.flow_blocked).count();
    assert!(lost >= 15, "{lost} packets lost");
    assert!(
        blocked as u32 >= lost,
        "{blocked} blocked retransmissions for {lost} losses"
    );
    let calls = rec.calls()[calls_before..].to_vec();
    let evaluated: Vec<&Call> = calls.iter().filter(|c| !c.sendable(0) && c.sendable(1)).collect();
    let lambdas: Vec<f64> = evaluated.iter().map(|c| c.lambda.unwrap()).collect();
    let first_max = lambdas.iter().position(|l| (l - 1.3).abs() < 1e-9);
    assert!(first_max.is_some(), "λ never reached 1.3: {lambdas:?}");
    assert!(
        lambdas[first_max.unwrap()..].iter().all(|&l| l >= 1.29),
        "λ fell back: {lambdas:?}"
    );
    for c in &evaluated {
        let (x, avail, send) = blest_rule(c);
        assert!((x - 162_000.0).abs() < 1_620.0, "X = {x}");
        assert_eq!(
            c.decision == Decision::Path(PathId(1)),
            send,
            "λ {:?} X {x} avail {avail}",
            c.lambda
        );
    }

    // Phase 2.
    let calls_before = rec.calls().len();
    let id = client_write(&mut p, &pattern(2 * len, 12));
    assert_eq!(upload(&mut p, id, 2 * len, None, None), 0);
    let calls = rec.calls()[calls_before..].to_vec();
    let evaluated: Vec<&Call> = calls.iter().filter(|c| !c.sendable(0) && c.sendable(1)).collect();
    let mut full_window_waits = 0;
    let mut slow_sends = 0;
    for c in &evaluated {
        let (x, avail, send) = blest_rule(c);
        let lambda = c.lambda.unwrap();
        assert_eq!(
            c.decision == Decision::Path(PathId(1)),
            send,
            "λ {lambda} X {x} avail {avail}"
        );
        if lambda >= 1.29 {
            assert_eq!(c.decision, Decision::Wait, "λ {lambda}, avail {avail}");
            if avail >= 194_400.0 {
                full_window_waits += 1;
            }
        }
        if send {
            assert!(lambda <= 1.24, "λ {lambda}");
            slow_sends += 1;
        }
    }
    assert!(
        full_window_waits > 0,
        "no decision at λ = 1.3 with SW near 200 000 B"
    );
    assert!(slow_sends > 0, "λ never decayed enough to use path 1 again");
}
