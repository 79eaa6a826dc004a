//! Round-robin over two paths through the runtime's send path: the client's datagrams are written turn by
//! turn with the runtime's `write_turn` into its GSO batching (`runtime::Outgoing`), with the runs of packets
//! the runtime configures (`configure_send_batch`), and the batches are split back into datagrams on the
//! harness's link. Virtual time: every count below is deterministic.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::harness::{CLIENT, Pair, addr};
use super::multipath::{CLIENT2, mp_config, two_paths_with};
use crate::cc::PathId;
use crate::proto::connection::{SchedFactory, Transmit, TransportConfig};
use crate::runtime::{Outgoing, configure_send_batch, ecn_from_udp, write_turn};
use crate::sched::Decision;

/// GSO segments per system call on Linux (`UDP_MAX_SEGMENTS`), what quinn-udp reports there.
const MAX_SEGMENTS: usize = 64;

/// What the client's batches looked like.
#[derive(Debug, Default)]
struct Batches {
    /// `write_turn` calls.
    calls: u64,
    /// Turns (`write_turn` calls) that wrote at least one datagram.
    turns: u64,
    /// System calls the runtime would make (one per batch).
    batches: u64,
    /// Datagrams in them.
    datagrams: u64,
    /// Datagrams shorter than a full-sized one (they close their batch).
    short: u64,
    /// Datagrams the core wrote for another lane than the previous one in the same turn
    /// (`TransmitStats::lane_switches`).
    lane_switches: u64,
}

/// Sends the client's datagrams through the runtime's batching and records the batches; `told`: the
/// connection knows the batch (as in the runtime), else it schedules as a sender without batches.
fn batch_client(p: &mut Pair, told: bool) -> Rc<RefCell<Batches>> {
    let rec = Rc::new(RefCell::new(Batches::default()));
    if told {
        configure_send_batch(p.client.conn(), MAX_SEGMENTS);
    }
    let r = rec.clone();
    let local_of = |ip: Option<std::net::IpAddr>| -> SocketAddr {
        let c2 = addr(CLIENT2);
        if ip == Some(c2.ip()) { c2 } else { addr(CLIENT) }
    };
    let mut out = Outgoing::default();
    p.client_transmit = Some(Box::new(move |conn, now| {
        let mut datagrams = Vec::new();
        loop {
            out.clear();
            let (n, more) = write_turn(conn, now, &mut out, MAX_SEGMENTS);
            let mut r = r.borrow_mut();
            r.calls += 1;
            r.turns += u64::from(n > 0);
            r.lane_switches = out.stats.lane_switches;
            for t in out.transmits() {
                let seg = t.segment_size.unwrap_or(t.contents.len());
                let local = local_of(t.src_ip);
                r.batches += 1;
                for d in t.contents.chunks(seg) {
                    r.datagrams += 1;
                    r.short += u64::from(d.len() < FULL);
                    let tr = Transmit {
                        path: PathId(u32::from(local == addr(CLIENT2))),
                        local: Some(local),
                        remote: t.destination,
                        ecn: ecn_from_udp(t.ecn),
                        size: d.len(),
                        segment_size: None,
                    };
                    datagrams.push((d.to_vec(), tr));
                }
            }
            if !more {
                break;
            }
        }
        datagrams
    }));
    rec
}

/// Round-robin `spec` over the multipath test configuration, with a pacer that lets a whole window go at
/// once: its bucket holds what the rate produces in 400 ms, 20 round trips here. That is the situation of a fast
/// path, which the runtime's batching is for: the default 1 ms is ≈ 20 round trips of loopback (≈ 50 µs), and
/// a sender woken by acknowledgements then writes a window's worth per turn.
fn rr_config(spec: &str) -> TransportConfig {
    let mut t = TransportConfig {
        scheduler: spec.to_owned(),
        ..mp_config()
    };
    t.recovery.pacer_burst_interval = Duration::from_millis(400);
    t
}

/// Full-sized datagrams: `mp_config` turns path-MTU discovery off, so every data packet fills 1200 bytes.
const FULL: usize = 1200;

/// Segments of one full batch: 64 segments, but at most 64,000 bytes (`MAX_GSO_BYTES`): ⌊64000 / 1200⌋ = 53.
/// Round-robin's turns last that many packets when the connection knows the batch.
const TURN: u64 = 53;

/// Uploads 4 MB over two paths (10 ms one way each, no loss) under `spec`, the client's datagrams going through
/// the runtime's turns and GSO batching; returns the batch counts and the stream bytes on path 0 and path 1.
fn rr_upload(spec: &str, told: bool) -> (Batches, u64, u64) {
    let mut p = two_paths_with(71, rr_config(spec));
    let rec = batch_client(&mut p, told);
    let data: Vec<u8> = (0..4_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let got = super::transfer::upload_uni(&mut p, &data, Duration::from_secs(60));
    assert_eq!(got.len(), data.len());
    assert!(got == data, "{spec}: the server read other bytes than were sent");
    let c = p.client.conn();
    let s0 = c.path_stats(PathId(0)).unwrap().stream_bytes_sent;
    let s1 = c.path_stats(PathId(1)).unwrap().stream_bytes_sent;
    p.client_transmit = None;
    let b = Rc::try_unwrap(rec).unwrap().into_inner();
    (b, s0, s1)
}

#[test]
fn roundrobin_fills_gso_batches_and_keeps_its_share() {
    let size = 4_000_000u64;
    for spec in ["roundrobin", "roundrobin:cwnd_limited=false"] {
        let (b, s0, s1) = rr_upload(spec, true);
        let (plain, p0, p1) = rr_upload(spec, false);
        // Every byte exactly once (no loss, so nothing is repeated), split over both paths.
        assert_eq!(s0 + s1, size, "{spec}");
        assert_eq!(p0 + p1, size, "{spec}, batch unknown");
        // Batches. Within one write turn a lane's batch closes only when it holds TURN segments or after a
        // shorter datagram, and two lanes are in use: batches ≤ 2·turns + datagrams / TURN + short datagrams.
        let bound = 2 * b.turns + b.datagrams.div_ceil(TURN) + b.short;
        assert!(b.batches <= bound, "{spec}: {b:?}, bound {bound}");
        // Here (window-limited bursts: see `rr_config`) a write turn carries tens of datagrams, so a system
        // call carries far more than one: at least 10 on average.
        assert!(b.datagrams >= 10 * bound, "{spec}: {b:?}, bound {bound}");
        // Contiguity. A round-robin turn ends after TURN packets or when its path can no longer send. Within
        // a write turn the clock and the inputs stand still, so a path that could not send stays so: at
        // most two such ends (one per path) and the write turn's own end. A short datagram (an acknowledgement,
        // the stream's last packet) may switch lanes twice. So the core switches lanes at most
        // datagrams / TURN + 3·turns + 2·short times…
        let switches = b.datagrams.div_ceil(TURN) + 3 * b.turns + 2 * b.short;
        assert!(b.lane_switches <= switches, "{spec}: {b:?}, bound {switches}");
        // …where round-robin without the batch alternates paths packet by packet: with strict turns every
        // data packet but a write turn's first switches lanes (with `cwnd_limited`, packets after one path's
        // window filled stay on the other).
        if spec.ends_with("false") {
            assert!(
                plain.lane_switches + plain.turns + plain.short >= plain.datagrams,
                "{spec}, batch unknown: {plain:?}"
            );
        }
        assert!(
            plain.lane_switches > 10 * b.lane_switches,
            "{spec}: {plain:?} vs {b:?}"
        );
        // Share. The paths are identical (same delay, no loss), so round-robin gives each one half; turns of a
        // batch rotate like the packets they group. With strict turns the paths take alternate turns, so
        // their stream bytes differ by at most one turn: TURN packets of at most 1200 − 1 − 8 − 1 − 16 =
        // 1174 stream bytes (short header with an 8-byte connection ID and a 1-byte packet number at least,
        // AEAD tag), 62,222 B. With `cwnd_limited` a path whose window is full is skipped, so the rotation
        // follows the windows; the paths are identical, so allow two turns.
        let turn_bytes = TURN * 1174;
        let allowed = if spec.ends_with("false") {
            turn_bytes
        } else {
            2 * turn_bytes
        };
        assert!(s0.abs_diff(s1) <= allowed, "{spec}: path 0 {s0} B, path 1 {s1} B");
        assert!(
            p0.abs_diff(p1) <= allowed,
            "{spec}, batch unknown: path 0 {p0} B, path 1 {p1} B"
        );
    }
}

/// minRTT, counting how often the connection asks it.
#[derive(Debug)]
struct Counting {
    inner: crate::sched::schedulers::MinRtt,
    asked: Arc<AtomicU64>,
}

impl crate::sched::Scheduler for Counting {
    fn name(&self) -> &'static str {
        "counting-minrtt"
    }

    fn select_send(&mut self, conn: &crate::sched::ConnView<'_>, now: std::time::Instant) -> Decision {
        self.asked.fetch_add(1, Ordering::Relaxed);
        self.inner.select_send(conn, now)
    }
}

/// One path, the client uploading through the runtime's batching; returns the batches, how often the
/// scheduler was asked and the client's data packets.
fn single_path_upload(told: bool) -> (Batches, u64, u64) {
    let asked = Arc::new(AtomicU64::new(0));
    let a = asked.clone();
    let mut t = rr_config("minrtt");
    t.scheduler_factory = Some(SchedFactory(Arc::new(move || {
        Box::new(Counting {
            inner: crate::sched::schedulers::MinRtt,
            asked: a.clone(),
        })
    })));
    let mut p = Pair::new(None, t, 72);
    p.handshake();
    let rec = batch_client(&mut p, told);
    let data: Vec<u8> = (0..2_000_000u32).map(|i| (i % 251) as u8).collect();
    let got = super::transfer::upload_uni(&mut p, &data, Duration::from_secs(60));
    assert!(got == data, "the server read other bytes than were sent");
    let c = p.client.conn();
    assert_eq!(c.paths(), vec![PathId(0)]);
    let stats = c.path_stats(PathId(0)).unwrap();
    assert_eq!(stats.stream_bytes_sent, data.len() as u64);
    p.client_transmit = None;
    let b = Rc::try_unwrap(rec).unwrap().into_inner();
    (b, asked.load(Ordering::Relaxed), stats.packets_sent)
}

#[test]
fn a_batched_sender_with_one_path_asks_the_scheduler_once_per_instant() {
    let (b, asked, packets) = single_path_upload(true);
    let (plain, plain_asked, plain_packets) = single_path_upload(false);
    // Without the batch the scheduler places every data packet: at least one question per data packet
    // (2,000,000 B / at most 1174 stream bytes per packet ≥ 1704 packets).
    assert!(
        plain_asked >= 1704,
        "{plain_asked} questions, {plain_packets} packets, {plain:?}"
    );
    // With it, once per instant: within one `write_turn` call the clock stands still, so after the
    // scheduler's choice the connection asks again only when the path can no longer send (at most once, since
    // a full window or an empty pacer stays so while the clock stands still), and a data packet built for
    // an acknowledgement's datagram may ask once more: at most 3 questions per call.
    assert!(
        asked <= 3 * b.calls,
        "{asked} questions in {} write turns",
        b.calls
    );
    assert!(asked * 10 < plain_asked, "{asked} vs {plain_asked} questions");
    // The same transfer otherwise: as many packets within the few a different ACK timing may add.
    assert!(
        packets.abs_diff(plain_packets) * 100 <= plain_packets,
        "{packets} vs {plain_packets} packets"
    );
}
