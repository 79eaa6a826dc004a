//! Reused scheduler answers (see the `scheduling` module): a scheduler that declares its answers reusable
//! is asked once for the packets of one instant, and again after every input event that can change its
//! views; any other scheduler is asked for every data packet, as before.
//!
//! The client's paths have windows fixed by [`FixedWindows`] (no growth, no pacing), its scheduler is
//! minRTT wrapped in [`Counting`], and the test polls the client's connection itself at instants it
//! chooses, so that every question and every event is accounted for.
//!
//! Counted answers (a scheduler with state that says how many more packets its answer stays valid,
//! `Scheduler::reusable_answers`): a whole two-path transfer under round-robin, once reusing them and once
//! asking for every packet, must make the same decisions ([`Recording`]).

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::harness::{CLIENT, Pair, SERVER, addr, configs};
use super::multipath::{CLIENT2, mp_config};
use super::scheduler_inputs::{FixedWindows, Windows};
use crate::cc::PathId;
use crate::proto::connection::{CcFactory, SchedFactory, TransportConfig};
use crate::sched::schedulers::{MinRtt, RoundRobin};
use crate::sched::{AckInfo, ConnView, Decision, LossInfo, PathEvent, PathStatus, Scheduler, SentInfo};

/// What the connection did with its scheduler.
#[derive(Debug, Default)]
struct Counts {
    /// Questions (`select_send` / `select_retrans`).
    asked: AtomicU64,
    /// Data packets reported (`on_sent`).
    sent: AtomicU64,
}

impl Counts {
    fn asked(&self) -> u64 {
        self.asked.load(Ordering::Relaxed)
    }

    fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
}

/// minRTT, counting questions and reports; `reuse` says whether it declares its answers reusable.
#[derive(Debug)]
struct Counting {
    reuse: bool,
    counts: Arc<Counts>,
}

impl Scheduler for Counting {
    fn name(&self) -> &'static str {
        "counting-minrtt"
    }

    fn select_send(&mut self, conn: &ConnView<'_>, _now: Instant) -> Decision {
        self.counts.asked.fetch_add(1, Ordering::Relaxed);
        MinRtt::decide(conn)
    }

    fn reuses_decisions(&self) -> bool {
        self.reuse
    }

    fn on_sent(&mut self, _sent: &SentInfo) {
        self.counts.sent.fetch_add(1, Ordering::Relaxed);
    }
}

/// Two validated paths (0: `CLIENT`, 1: `CLIENT2`, same delay) with windows from `windows`, the client's
/// scheduler a [`Counting`] minRTT; the client has 1 MB waiting on a stream and nothing in flight when it
/// returns (nothing was sent since the stream was written). Checks are made with the reuse check of debug
/// builds turned off, so that every question counted is one the connection asked for a packet.
fn setup(reuse: bool, windows: &Windows) -> (Pair, Arc<Counts>) {
    let counts = Arc::new(Counts::default());
    let c = counts.clone();
    let w = windows.clone();
    let (mut cc, mut sc) = configs(None, mp_config());
    cc.transport = TransportConfig {
        scheduler_factory: Some(SchedFactory(Arc::new(move || {
            Box::new(Counting {
                reuse,
                counts: c.clone(),
            })
        }))),
        congestion_controller_factory: Some(CcFactory(Arc::new(move || Box::new(FixedWindows(w.clone()))))),
        unused_path_cids: u64::MAX,
        ..mp_config()
    };
    sc.transport = TransportConfig {
        unused_path_cids: u64::MAX,
        ..mp_config()
    };
    let mut p = Pair::from_configs(cc, sc, 91);
    p.client_extra_addrs.push(addr(CLIENT2));
    p.handshake();
    super::multipath::open_second_path(&mut p, Duration::from_secs(3));
    // Everything acknowledged, no ACK or probe due any more.
    p.run_for(Duration::from_millis(500));
    let c = p.client.conn();
    c.set_verify_reuse(false);
    for id in [PathId(0), PathId(1)] {
        assert_eq!(c.path_stats(id).unwrap().bytes_in_flight, 0, "{id:?}");
    }
    let s = c.open_bi().unwrap();
    let data: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
    assert_eq!(c.write(s, Bytes::from(data)).unwrap(), 1_000_000);
    // Questions before this point (path validation, handshake data) are not counted.
    counts.asked.store(0, Ordering::Relaxed);
    counts.sent.store(0, Ordering::Relaxed);
    (p, counts)
}

/// Polls the client's connection at `now` for at most `max` datagrams; returns them (unsent: the test
/// decides what the server gets) with the path each went on.
fn poll(p: &mut Pair, now: Instant, max: usize) -> Vec<(PathId, Vec<u8>)> {
    let c = p.client.conn();
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while out.len() < max {
        let Some(t) = c.poll_transmit(now, &mut buf) else {
            break;
        };
        out.push((t.path, buf[..t.size].to_vec()));
    }
    out
}

/// The client's address for a path of [`setup`].
fn local(path: PathId) -> std::net::SocketAddr {
    if path == PathId(1) {
        addr(CLIENT2)
    } else {
        addr(CLIENT)
    }
}

#[test]
fn a_reusable_scheduler_is_asked_once_for_the_packets_of_one_instant() {
    let (mut p, counts) = setup(true, &Windows::default());
    let now = p.now;
    let sent = poll(&mut p, now, 10);
    // Ten full data packets on the faster path (1 MiB windows: room for all of them), one question.
    assert_eq!(sent.len(), 10);
    assert_eq!(counts.sent(), 10, "every packet is reported");
    assert_eq!(counts.asked(), 1);
    let first = sent[0].0;
    assert!(sent.iter().all(|(path, _)| *path == first), "{sent:?}");
}

#[test]
fn a_scheduler_that_does_not_declare_reuse_is_asked_for_every_packet() {
    let (mut p, counts) = setup(false, &Windows::default());
    let now = p.now;
    let sent = poll(&mut p, now, 10);
    assert_eq!(sent.len(), 10);
    assert_eq!(counts.sent(), 10);
    assert_eq!(counts.asked(), 10, "one question per data packet");
}

#[test]
fn a_moved_clock_invalidates_the_answer() {
    let (mut p, counts) = setup(true, &Windows::default());
    let now = p.now;
    assert_eq!(poll(&mut p, now, 3).len(), 3);
    assert_eq!(counts.asked(), 1);
    // One microsecond later: asked again, then reused for the next two.
    let later = now + Duration::from_micros(1);
    assert_eq!(poll(&mut p, later, 3).len(), 3);
    assert_eq!(counts.asked(), 2);
    assert_eq!(counts.sent(), 6);
}

#[test]
fn a_received_acknowledgement_invalidates_the_answer() {
    let (mut p, counts) = setup(true, &Windows::default());
    let now = p.now;
    let sent = poll(&mut p, now, 4);
    assert_eq!(sent.len(), 4);
    assert_eq!(counts.asked(), 1);
    // The server gets the four packets at the same instant and acknowledges them (two ack-eliciting
    // packets call for an immediate ACK, RFC 9000 §13.2.2); the client receives its ACKs at that instant.
    for (path, mut d) in sent {
        p.server
            .receive(now, addr(SERVER), local(path), None, &mut d, false);
    }
    let acks = p.server.poll_transmits(now, 10);
    assert!(!acks.is_empty(), "the server acknowledges");
    let before = p.client.conn().stats().packets_received;
    for mut a in acks {
        p.client.receive(now, a.to, a.from, None, &mut a.data, false);
    }
    assert!(p.client.conn().stats().packets_received > before);
    assert_eq!(poll(&mut p, now, 3).len(), 3);
    assert_eq!(counts.asked(), 2, "asked again after the acknowledgement, once");
    assert_eq!(counts.sent(), 7);
}

#[test]
fn a_path_status_change_invalidates_the_answer() {
    let (mut p, counts) = setup(true, &Windows::default());
    let now = p.now;
    let sent = poll(&mut p, now, 3);
    assert_eq!(counts.asked(), 1);
    // Equal delays: minRTT breaks the tie by path ID.
    assert!(sent.iter().all(|(path, _)| *path == PathId(0)), "{sent:?}");
    // Path 0 becomes a backup: asked again, the data moves to path 1. The PATH_STATUS frame goes first, on
    // the control path (0), in a datagram of its own: question 2 is asked for it and names path 1, which
    // waits for the next datagram (a decision is kept). That control packet went on another path than the
    // answer's, so the data packet after the kept one asks once more (question 3); the rest reuse it.
    p.client
        .conn()
        .set_path_status(PathId(0), PathStatus::Backup)
        .unwrap();
    let next = poll(&mut p, now, 5);
    assert_eq!(next.len(), 5);
    assert_eq!(next[0].0, PathId(0));
    assert!(next[0].1.len() < 100, "the control datagram carries no data");
    assert!(
        next[1..]
            .iter()
            .all(|(path, d)| *path == PathId(1) && d.len() == 1200),
        "{next:?}"
    );
    assert_eq!(counts.asked(), 3);
    assert_eq!(counts.sent(), 3 + 4);
}

#[test]
fn a_closed_window_invalidates_the_answer() {
    // Both windows hold four full-sized packets (4 × 1200 B): the first path takes four, then the
    // scheduler is asked again and the other path takes four. Then no path can send: a reusable
    // scheduler (no state) is not asked, its answer could only be to send nothing.
    let windows = Windows::new(&[(0, 4800), (1, 4800)]);
    let (mut p, counts) = setup(true, &windows);
    let now = p.now;
    let sent = poll(&mut p, now, 20);
    assert_eq!(sent.len(), 8, "{sent:?}");
    assert_eq!(counts.sent(), 8);
    assert_eq!(counts.asked(), 2);
    let first = sent[0].0;
    assert!(sent[..4].iter().all(|(path, _)| *path == first));
    assert!(sent[4..].iter().all(|(path, _)| *path != first));
    // Without reuse: one question per packet, and a last one answered "blocked".
    let (mut q, plain) = setup(false, &windows);
    let now = q.now;
    assert_eq!(poll(&mut q, now, 20).len(), 8);
    assert_eq!(plain.asked(), 9);
}

#[test]
fn another_paths_window_moving_invalidates_the_answer() {
    let windows = Windows::default();
    let (mut p, counts) = setup(true, &windows);
    let now = p.now;
    assert_eq!(poll(&mut p, now, 3).len(), 3);
    assert_eq!(counts.asked(), 1);
    // No event reached the connection, but the controller now gives path 1 another window (a controller
    // may move any path's window): the views differ in more than the chosen path, so it is asked again.
    windows.set(1, 2400);
    let next = poll(&mut p, now, 3);
    assert!(next.iter().all(|(path, _)| *path == PathId(0)), "{next:?}");
    assert_eq!(counts.asked(), 2);
    assert_eq!(counts.sent(), 6);
}

/// What a [`Recording`] round-robin decided and was told.
#[derive(Debug, Default)]
struct Log {
    /// Every decision, asked (`select_send` / `select_retrans`) or reused (`on_answer_reused`), in order,
    /// with the round-robin's state (its `Debug` form: quotas and turn) right after it.
    decisions: Vec<(Decision, String)>,
    /// Questions asked.
    asked: u64,
    /// Answers reused without asking.
    reused: u64,
    /// The path of every data packet reported with `on_sent`.
    sent: Vec<PathId>,
}

/// Round-robin recording its decisions into a shared [`Log`]; `reuse`: it passes on its count of reusable
/// answers (otherwise it counts none, and the connection asks for every packet).
#[derive(Debug)]
struct Recording {
    inner: RoundRobin,
    reuse: bool,
    log: Arc<Mutex<Log>>,
}

impl Scheduler for Recording {
    fn name(&self) -> &'static str {
        "recording-roundrobin"
    }

    fn select_send(&mut self, conn: &ConnView<'_>, now: Instant) -> Decision {
        let d = self.inner.select_send(conn, now);
        let mut log = self.log.lock().unwrap();
        log.asked += 1;
        log.decisions.push((d.clone(), format!("{:?}", self.inner)));
        d
    }

    fn reusable_answers(&self) -> u64 {
        if self.reuse {
            self.inner.reusable_answers()
        } else {
            0
        }
    }

    fn on_answer_reused(&mut self, path: PathId) {
        self.inner.on_answer_reused(path);
        let mut log = self.log.lock().unwrap();
        log.reused += 1;
        log.decisions
            .push((Decision::Path(path), format!("{:?}", self.inner)));
    }

    fn on_sent(&mut self, sent: &SentInfo) {
        self.log.lock().unwrap().sent.push(sent.path);
        self.inner.on_sent(sent);
    }

    fn on_ack(&mut self, ack: &AckInfo) {
        self.inner.on_ack(ack);
    }

    fn on_loss(&mut self, loss: &LossInfo) {
        self.inner.on_loss(loss);
    }

    fn on_path_event(&mut self, event: &PathEvent) {
        self.inner.on_path_event(event);
    }
}

/// The client uploads 1.5 MB over two paths (path 1 15 ms slower each way, 1 % random loss: windows fill,
/// pacers close, acknowledgements and losses arrive between packets), in batches of 8 packets (so
/// round-robin's turns last 8 packets), its scheduler a [`Recording`] round-robin (`cwnd_limited` as
/// given). `reuse`: counted answers are reused, with the debug builds' re-asking check off so that every
/// reused answer goes through `on_answer_reused`; else the scheduler is asked for every packet. Returns the
/// log and the stream bytes of both paths.
fn rr_transfer(cwnd_limited: bool, reuse: bool) -> (Log, [u64; 2]) {
    let log = Arc::new(Mutex::new(Log::default()));
    let l = log.clone();
    let (mut cc, mut sc) = configs(None, mp_config());
    cc.transport = TransportConfig {
        scheduler_factory: Some(SchedFactory(Arc::new(move || {
            Box::new(Recording {
                inner: RoundRobin::new(1, cwnd_limited),
                reuse,
                log: l.clone(),
            })
        }))),
        unused_path_cids: u64::MAX,
        ..mp_config()
    };
    sc.transport = TransportConfig {
        unused_path_cids: u64::MAX,
        ..mp_config()
    };
    let mut p = Pair::from_configs(cc, sc, 93);
    p.client_extra_addrs.push(addr(CLIENT2));
    p.handshake();
    super::multipath::open_second_path(&mut p, Duration::from_secs(3));
    let c = p.client.conn();
    c.set_verify_reuse(!reuse);
    c.set_send_batch(8, usize::MAX);
    p.extra_delay.insert(addr(CLIENT2), Duration::from_millis(15));
    p.loss = 0.01;
    let data: Vec<u8> = (0..1_500_000u32).map(|i| (i % 253) as u8).collect();
    let got = super::transfer::upload_uni(&mut p, &data, Duration::from_secs(120));
    assert!(got == data, "the server read other bytes than were sent");
    let c = p.client.conn();
    let bytes = [0, 1].map(|i| c.path_stats(PathId(i)).unwrap().stream_bytes_sent);
    let log = std::mem::take(&mut *log.lock().unwrap());
    (log, bytes)
}

#[test]
fn reused_roundrobin_answers_decide_exactly_as_asking_every_time() {
    for cwnd_limited in [true, false] {
        let (asked, asked_bytes) = rr_transfer(cwnd_limited, false);
        let (reused, reused_bytes) = rr_transfer(cwnd_limited, true);
        // Asked every time: every decision is a question.
        assert_eq!(asked.reused, 0);
        assert_eq!(asked.asked, asked.decisions.len() as u64);
        // With reuse, a good share of the decisions are taken without asking (else this test would prove
        // nothing): a turn of 8 packets is asked once and reused up to 7 times, but it is cut short when the
        // clock moves (the pacer releases packets a few at a time here), an acknowledgement arrives or its
        // path's window closes. At least a third of the decisions are reused.
        assert!(
            2 * reused.reused >= reused.asked,
            "cwnd_limited={cwnd_limited}: {} asked, {} reused",
            reused.asked,
            reused.reused
        );
        // The same decisions in the same order, with the same round-robin state after each…
        assert_eq!(
            reused.decisions.len(),
            asked.decisions.len(),
            "cwnd_limited={cwnd_limited}"
        );
        for (i, (r, a)) in reused.decisions.iter().zip(&asked.decisions).enumerate() {
            assert_eq!(r, a, "cwnd_limited={cwnd_limited}: decision {i}");
        }
        // …hence the same packets on the same paths: the transfers are identical.
        assert_eq!(reused.sent, asked.sent, "cwnd_limited={cwnd_limited}");
        assert_eq!(reused_bytes, asked_bytes, "cwnd_limited={cwnd_limited}");
        // Both paths carried data (the rotation ran), and the losses were repaired: more than the 1.5 MB
        // of the stream went out.
        assert!(asked_bytes.iter().all(|b| *b > 100_000), "{asked_bytes:?}");
        assert!(asked_bytes[0] + asked_bytes[1] > 1_500_000, "{asked_bytes:?}");
    }
}
