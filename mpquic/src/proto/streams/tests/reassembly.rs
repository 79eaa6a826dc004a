//! Receiver statistics against a hand-built out-of-order arrival sequence (occupancy and head-of-line
//! delay computed by hand), and a property test across the window policies: the receiver never buffers
//! more than it advertised, a stalled reader gets no new credit, the advertised limits never decrease, and
//! the statistics stay consistent with what was read.

use std::time::Duration;

use proptest::prelude::*;

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// `len` bytes of stream `id` at `offset`, arriving at `t`.
fn arrive(s: &mut Streams, id: StreamId, offset: u64, len: usize, t: Instant) {
    s.on_stream_data(id, offset, Bytes::from(vec![0u8; len]), false, t)
        .unwrap();
}

fn read_all(s: &mut Streams, id: StreamId, t: Instant) -> u64 {
    let mut n = 0;
    while let Ok(Some(b)) = s.read(id, usize::MAX, t) {
        n += b.len() as u64;
    }
    n
}

#[test]
fn hol_delay_and_occupancy_of_a_hand_built_sequence() {
    let (_, mut s) = pair(small(1 << 20), small(1 << 20));
    let id = sid(Side::Client, Dir::Uni, 0);
    let t = t0();
    let occ = |s: &Streams| {
        let r = s.reassembly_stats();
        (r.unread_bytes, r.out_of_order_bytes)
    };
    // t = 0: [0, 1000) in order.
    arrive(&mut s, id, 0, 1000, t);
    assert_eq!(occ(&s), (1000, 0));
    // t = 10: [2000, 3000) above the gap [1000, 2000).
    arrive(&mut s, id, 2000, 1000, t + ms(10));
    assert_eq!(occ(&s), (2000, 1000));
    // t = 20: [3000, 5000), t = 30: [6000, 6300), both above the gap.
    arrive(&mut s, id, 3000, 2000, t + ms(20));
    arrive(&mut s, id, 6000, 300, t + ms(30));
    assert_eq!(occ(&s), (4300, 3300));
    // A duplicate changes nothing.
    arrive(&mut s, id, 2500, 1000, t + ms(35));
    assert_eq!(occ(&s), (4300, 3300));
    // t = 40: [1000, 2000) fills the gap: [2000, 3000) waited 30 ms, [3000, 5000) 20 ms; [1000, 2000)
    // itself came in order. [6000, 6300) still waits above [5000, 6000).
    arrive(&mut s, id, 1000, 1000, t + ms(40));
    assert_eq!(occ(&s), (5300, 300));
    assert_eq!(read_all(&mut s, id, t + ms(40)), 5000);
    assert_eq!(occ(&s), (300, 300));
    // t = 100: [5000, 6000) in order; [6000, 6300) waited 70 ms.
    arrive(&mut s, id, 5000, 1000, t + ms(100));
    assert_eq!(occ(&s), (1300, 0));
    assert_eq!(read_all(&mut s, id, t + ms(100)), 1300);
    let r = s.reassembly_stats();
    assert_eq!((r.unread_bytes, r.out_of_order_bytes), (0, 0));
    // Peaks: 3300 above gaps at t = 30; 5300 unread at t = 40 before the read.
    assert_eq!((r.max_unread_bytes, r.max_out_of_order_bytes), (5300, 3300));
    // 6300 bytes, 3300 of them waited: 1000 × 30 ms + 2000 × 20 ms + 300 × 70 ms = 91 000 byte·ms, over
    // 6300 bytes: 14.444… ms = 14 444 444 ns (truncated).
    assert_eq!((r.bytes, r.out_of_order), (6300, 3300));
    assert_eq!(r.hol_delay_mean, Duration::from_nanos(14_444_444));
    assert_eq!(r.hol_delay_max, ms(70));
    // p95: rank ⌈0.95 × 6300⌉ = 5985. In delay order: 3000 bytes at 0, 2000 at 20 ms (5000), 1000 at
    // 30 ms (6000 ≥ 5985): the 30 ms bucket. 30 000 000 ns lies in [2^24, 2^25), whose eighths are 2^21 =
    // 2 097 152 ns wide; 30 000 000 / 2^21 = 14.3, so the bucket is [14 · 2^21, 15 · 2^21) and its top
    // 31 457 279 ns (4.9 % above 30 ms).
    assert_eq!(r.hol_delay_p95, Duration::from_nanos(31_457_279));
}

#[test]
fn bytes_waiting_when_a_stream_is_reset_are_not_counted() {
    let (_, mut s) = pair(small(1 << 20), small(1 << 20));
    let id = sid(Side::Client, Dir::Uni, 0);
    let t = t0();
    arrive(&mut s, id, 0, 100, t);
    arrive(&mut s, id, 500, 400, t + ms(5));
    assert_eq!(s.reassembly_stats().out_of_order_bytes, 400);
    s.on_reset_stream(&ResetStream {
        id: id.to_varint(),
        error_code: v(1),
        final_size: v(900),
    })
    .unwrap();
    let r = s.reassembly_stats();
    assert_eq!((r.unread_bytes, r.out_of_order_bytes), (0, 0));
    assert_eq!((r.max_unread_bytes, r.max_out_of_order_bytes), (500, 400));
    assert_eq!((r.bytes, r.out_of_order), (100, 0));
    assert_eq!(r.hol_delay_max, Duration::ZERO);
    // A second stream's bytes waiting when it is stopped leave the figures too.
    let id2 = sid(Side::Client, Dir::Uni, 1);
    arrive(&mut s, id2, 10, 10, t);
    assert_eq!(s.reassembly_stats().out_of_order_bytes, 10);
    s.stop(id2, v(0)).unwrap();
    assert_eq!(s.reassembly_stats().unread_bytes, 0);
}

#[test]
fn small_pieces_merged_above_a_gap_keep_the_summed_delay() {
    // Two 100-byte pieces above a gap, at 0 and 10 ms, merge into one fragment; the gap fills at 30 ms:
    // they waited 30 and 20 ms, 5000 byte·ms over 200 + 50 bytes = 20 ms mean; the longest 30 ms.
    let (_, mut s) = pair(small(1 << 20), small(1 << 20));
    let id = sid(Side::Client, Dir::Uni, 0);
    let t = t0();
    arrive(&mut s, id, 50, 100, t);
    arrive(&mut s, id, 150, 100, t + ms(10));
    assert_eq!(s.recv_fragments(), 1, "merged");
    arrive(&mut s, id, 0, 50, t + ms(30));
    let r = s.reassembly_stats();
    assert_eq!((r.bytes, r.out_of_order), (250, 200));
    assert_eq!(r.hol_delay_mean, ms(20));
    assert_eq!(r.hol_delay_max, ms(30));
}

/// Delivers a sender's frame at `now`.
fn deliver_at(to: &mut Streams, f: &StreamFrame, now: Instant) {
    let mut data = Vec::new();
    for b in &f.data {
        data.extend_from_slice(b);
    }
    to.on_stream_data(f.id, f.offset, Bytes::from(data), f.fin, now)
        .expect("the sender stays within the limits it was given");
}

/// Moves control frames (MAX_DATA, MAX_STREAM_DATA, …) both ways.
fn exchange_control(c: &mut Streams, s: &mut Streams) {
    while let Some(f) = s.poll_control_frame(1200) {
        deliver_control(c, &f).unwrap();
        s.on_control_frame_acked(&f);
    }
    while let Some(f) = c.poll_control_frame(1200) {
        deliver_control(s, &f).unwrap();
        c.on_control_frame_acked(&f);
    }
}

const POLICIES: [WindowPolicy; 3] = [WindowPolicy::Fixed, WindowPolicy::Auto, WindowPolicy::Linux];

proptest! {
    #[test]
    fn flow_control_holds_under_every_policy(
        policy in 0usize..3,
        ops in proptest::collection::vec((0u8..5, 0u16..4000, 0u8..40), 1..250),
    ) {
        let policy = POLICIES[policy];
        let cfg = StreamsConfig {
            window_policy: policy,
            stream_window_uni: 4000,
            min_stream_window: 2000,
            max_stream_window: 64_000,
            conn_window: 6000,
            min_conn_window: 2000,
            max_conn_window: 128_000,
            ..small(4000)
        };
        let (mut c, mut s) = pair(small(4000), cfg);
        s.set_rtt(ms(20));
        let id = c.open_uni().unwrap();
        c.write(id, Bytes::from(vec![5u8; 300_000])).unwrap();
        let mut now = t0();
        let mut held: Vec<StreamFrame> = Vec::new();
        let mut consumed = 0u64;
        let mut stalled = false;
        // The stream exists at the receiver from its first frame; until then its limit is the initial window.
        let (mut limit, mut conn_limit) = (s.recv_limit(id).unwrap_or(4000), s.conn_recv_limit());
        for (op, n, dt) in ops {
            let mut read = false;
            match op {
                // The sender sends up to a few frames; some are held back (reordered behind later ones).
                0 => {
                    for k in 0..(n % 6 + 1) {
                        let Some(f) = c.write_stream_frame(1200) else { break };
                        if (n >> k) & 1 == 1 {
                            held.push(f);
                        } else {
                            deliver_at(&mut s, &f, now);
                            c.on_stream_frame_acked(f.record());
                        }
                    }
                }
                // The held frames arrive, last first.
                1 => {
                    while let Some(f) = held.pop() {
                        deliver_at(&mut s, &f, now);
                        c.on_stream_frame_acked(f.record());
                    }
                }
                // A frame is lost (retransmitted later).
                2 => {
                    if let Some(f) = c.write_stream_frame(1200) {
                        c.on_stream_frame_lost(f.record());
                    }
                }
                // The reader reads up to n bytes, unless stalled.
                3 if !stalled => {
                    let mut left = usize::from(n);
                    while left > 0 {
                        let Ok(Some(b)) = s.read(id, left, now) else { break };
                        left -= b.len();
                        consumed += b.len() as u64;
                        read = true;
                    }
                }
                3 => {}
                _ => stalled = !stalled,
            }
            exchange_control(&mut c, &mut s);
            now += ms(u64::from(dt));
            let new_limit = s.recv_limit(id).unwrap_or(limit);
            let new_conn = s.conn_recv_limit();
            prop_assert!(new_limit >= limit && new_conn >= conn_limit, "limits never decrease");
            if !read {
                prop_assert_eq!(new_limit, limit, "no read, no new stream credit");
                prop_assert_eq!(new_conn, conn_limit, "no read, no new connection credit");
            }
            (limit, conn_limit) = (new_limit, new_conn);
            let buffered = s.read_buffered(id).unwrap_or(0);
            prop_assert!(buffered <= limit - consumed, "buffered {buffered} beyond the window {}", limit - consumed);
            prop_assert!(buffered <= conn_limit - consumed);
            if policy == WindowPolicy::Fixed {
                prop_assert_eq!(s.recv_window(id).unwrap_or(4000), 4000);
                prop_assert_eq!(s.conn_recv_window(), 6000);
            }
            let r = s.reassembly_stats();
            prop_assert_eq!(r.unread_bytes, buffered);
            prop_assert!(r.out_of_order_bytes <= r.unread_bytes);
            prop_assert!(r.max_unread_bytes >= r.unread_bytes);
            prop_assert!(r.max_out_of_order_bytes >= r.out_of_order_bytes);
            // Every byte became readable once: the ones read plus the unread ones below the first gap.
            prop_assert_eq!(r.bytes, consumed + r.unread_bytes - r.out_of_order_bytes);
            prop_assert!(r.out_of_order <= r.bytes);
            prop_assert!(r.hol_delay_mean <= r.hol_delay_max && r.hol_delay_p95 <= r.hol_delay_max);
        }
    }
}
