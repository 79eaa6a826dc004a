//! Stream layer behaviour: flow-control accounting and update thresholds, auto-tuning, retransmission and
//! memory release, RESET_STREAM/STOP_SENDING interplay, stream limits and implicit opening, fairness.

use std::time::Duration;

use bytes::Bytes;

use super::*;

// ----- flow control -----

/// A 1000-byte stream window with the update rule `update`, 1500 bytes written and flushed: the sender
/// stops at 1000 and says so. Returns the pair and the stream.
fn blocked_at_1000(update: WindowUpdate) -> (Streams, Streams, StreamId) {
    let cfg = StreamsConfig {
        window_update: update,
        ..small(1000)
    };
    let (mut c, mut s) = pair(cfg.clone(), cfg);
    let id = c.open_bi().unwrap();
    c.write(id, Bytes::from(vec![7; 1500])).unwrap();
    flush(&mut c, &mut s);
    assert_eq!(
        c.send_buffered(id),
        Some(500),
        "the acknowledged 1000 bytes are released"
    );
    assert!(controls(&mut c).contains(&StreamControlFrame::StreamDataBlocked { id, limit: 1000 }));
    (c, s, id)
}

/// Reads exactly `n` bytes of `id`.
fn read_exactly(s: &mut Streams, id: StreamId, n: usize) {
    let mut got = 0;
    while got < n {
        got += s.read(id, n - got, t0()).unwrap().unwrap().len();
    }
}

#[test]
fn max_stream_data_and_max_data_are_sent_every_eighth_of_the_window() {
    let (_c, mut s, id) = blocked_at_1000(WindowUpdate::Eighth);
    // An eighth of the stream window is 125: 124 read raise the limit by 124, not yet worth a frame.
    read_exactly(&mut s, id, 124);
    assert!(controls(&mut s).is_empty(), "124 < 125");
    read_exactly(&mut s, id, 1);
    assert_eq!(
        controls(&mut s),
        vec![StreamControlFrame::MaxStreamData { id, max: 1125 }]
    );
    // The rest (875): the stream limit goes to 2000; the connection window (4000, an eighth = 500) has
    // 1000 consumed now, 1000 above its advertised 4000: MAX_DATA 5000 too.
    read_exactly(&mut s, id, 875);
    let got = controls(&mut s);
    assert!(
        got.contains(&StreamControlFrame::MaxStreamData { id, max: 2000 }),
        "{got:?}"
    );
    assert!(got.contains(&StreamControlFrame::MaxData(5000)), "{got:?}");
}

#[test]
fn max_stream_data_and_max_data_are_sent_below_half_the_window_under_the_half_rule() {
    let (_c, mut s, id) = blocked_at_1000(WindowUpdate::Half);
    read_exactly(&mut s, id, 500);
    assert!(controls(&mut s).is_empty(), "500 of 1000 left: not below half");
    read_exactly(&mut s, id, 1);
    assert_eq!(
        controls(&mut s),
        vec![StreamControlFrame::MaxStreamData { id, max: 1501 }]
    );
    // The connection window (4000) is still more than half open.
    let (rest, _) = read_all(&mut s, id, t0());
    assert_eq!(rest.len(), 499);
    assert!(controls(&mut s).is_empty());
}

#[test]
fn connection_credit_is_shared_and_released_by_reads() {
    let mut cfg = small(1000);
    cfg.conn_window = 1500;
    cfg.max_conn_window = 1500;
    let (mut c, mut s) = pair(small(1000), cfg);
    let a = c.open_uni().unwrap();
    let b = c.open_uni().unwrap();
    c.write(a, Bytes::from(vec![1; 1000])).unwrap();
    c.write(b, Bytes::from(vec![2; 1000])).unwrap();
    flush(&mut c, &mut s);
    assert_eq!(c.conn_send_credit(), 0);
    assert_eq!(controls(&mut c), vec![StreamControlFrame::DataBlocked(1500)]);
    let now = t0();
    let (da, _) = read_all(&mut s, a, now);
    assert_eq!(da.len(), 1000);
    // 1000 of 1500 consumed: 500 left is not below 750... it is: update to 1000 + 1500.
    assert!(controls(&mut s).contains(&StreamControlFrame::MaxData(2500)));
}

#[test]
fn non_increasing_limits_are_ignored() {
    let (mut c, _) = pair(small(1000), small(1000));
    let id = c.open_bi().unwrap();
    c.on_max_data(v(10));
    assert_eq!(c.conn_send_credit(), 4000);
    c.on_max_stream_data(id.to_varint(), v(5)).unwrap();
    c.write(id, Bytes::from(vec![0; 2000])).unwrap();
    assert_eq!(c.write_stream_frame(5000).unwrap().len(), 1000);
    c.on_max_streams(Dir::Bi, v(1));
    for _ in 1..4 {
        c.open_bi().unwrap();
    }
    assert!(c.open_bi().is_none());
}

#[test]
fn lost_max_data_is_resent_with_the_current_value() {
    let mut cfg = small(2000);
    cfg.conn_window = 2000;
    cfg.max_conn_window = 2000;
    let (mut c, mut s) = pair(small(2000), cfg);
    let now = t0();
    let id = c.open_uni().unwrap();
    c.write(id, Bytes::from(vec![1; 5000])).unwrap();
    flush(&mut c, &mut s);
    let max_data = |s: &mut Streams| -> Vec<StreamControlFrame> {
        let all = controls(s);
        all.into_iter()
            .filter(|f| matches!(f, StreamControlFrame::MaxData(_)))
            .collect()
    };
    assert_eq!(s.read(id, 1001, now).unwrap().unwrap().len(), 1001);
    let old = max_data(&mut s);
    assert_eq!(old, vec![StreamControlFrame::MaxData(3001)]);
    deliver_control(&mut c, &old[0]).unwrap();
    deliver_control(&mut c, &StreamControlFrame::MaxStreamData { id, max: 3001 }).unwrap();
    flush(&mut c, &mut s);
    let (got, _) = read_all(&mut s, id, now);
    assert_eq!(got.len(), 2000);
    let newer = max_data(&mut s);
    assert_eq!(newer, vec![StreamControlFrame::MaxData(5001)]);
    // Losing the stale frame re-sends nothing (the newer one covers it) ...
    s.on_control_frame_lost(&old[0]);
    assert!(controls(&mut s).is_empty());
    // ... losing the newest re-sends it, once however often it is reported.
    s.on_control_frame_lost(&newer[0]);
    s.on_control_frame_lost(&newer[0]);
    assert_eq!(controls(&mut s), newer);
    // A DATA_BLOCKED at an old limit also brings the current one back.
    s.on_data_blocked(v(3001));
    assert_eq!(controls(&mut s), newer);
    s.on_data_blocked(v(5001));
    assert!(controls(&mut s).is_empty());
}

#[test]
fn data_blocked_frames_are_deduplicated_and_dropped_when_unblocked() {
    let (mut c, mut s) = pair(small(1000), small(1000));
    let id = c.open_uni().unwrap();
    c.write(id, Bytes::from(vec![0; 3000])).unwrap();
    c.write(id, Bytes::from(vec![0; 10])).unwrap();
    while c.write_stream_frame(1200).is_some() {}
    let f = StreamControlFrame::StreamDataBlocked { id, limit: 1000 };
    assert_eq!(controls(&mut c), vec![f]);
    c.on_control_frame_lost(&f);
    c.on_control_frame_lost(&f);
    // Raised in the meantime: the lost frame is not worth re-sending.
    c.on_max_stream_data(id.to_varint(), v(2000)).unwrap();
    assert!(controls(&mut c).is_empty());
    let _ = &mut s;
}

// ----- auto-tuning -----

/// Sends `rounds` windows' worth through a stream, reading it all each round, with `gap` between rounds.
fn run_autotune(gap: Duration, rounds: u32) -> (u64, u64) {
    let mut cfg = small(1000);
    cfg.max_stream_window = 64_000;
    cfg.conn_window = 1000;
    cfg.max_conn_window = 256_000;
    let (mut c, mut s) = pair(StreamsConfig::default(), cfg);
    s.set_rtt(Duration::from_millis(100));
    let id = c.open_uni().unwrap();
    let mut now = t0();
    for _ in 0..rounds {
        c.write(id, Bytes::from(vec![0; 100_000])).unwrap();
        flush(&mut c, &mut s);
        now += gap;
        let _ = read_all(&mut s, id, now);
        flush(&mut s, &mut c);
    }
    (s.recv_window(id).unwrap(), s.conn_recv_window())
}

#[test]
fn autotuning_grows_the_window_under_a_fast_consumer() {
    let (stream, conn) = run_autotune(Duration::from_millis(10), 20);
    assert_eq!(stream, 64_000, "doubled up to the cap");
    assert!(conn >= stream, "connection window follows: {conn}");
}

#[test]
fn autotuning_keeps_the_window_under_a_slow_consumer() {
    let (stream, conn) = run_autotune(Duration::from_millis(500), 20);
    assert_eq!((stream, conn), (1000, 1000));
}

// ----- retransmission and memory -----

#[test]
fn lost_ranges_are_retransmitted_first_and_acked_memory_is_freed() {
    let (mut c, mut s) = pair(small(100_000), small(100_000));
    let id = c.open_bi().unwrap();
    let data: Vec<u8> = (0..3000u32).map(|i| i as u8).collect();
    c.write(id, Bytes::from(data.clone())).unwrap();
    let f1 = c.write_stream_frame(1000).unwrap();
    let f2 = c.write_stream_frame(1000).unwrap();
    assert_eq!(f2.offset, f1.len());
    // f1 lost (say on path 0), f2 acknowledged (on path 1): the buffer still holds everything from 0.
    c.on_stream_frame_acked(f2.record());
    assert_eq!(c.send_buffered(id), Some(3000));
    c.on_stream_frame_lost(f1.record());
    // The retransmission comes before new data, in two pieces if the frame is small.
    let r1 = c.write_stream_frame(500).unwrap();
    assert_eq!(r1.offset, 0);
    let r2 = c.write_stream_frame(1000).unwrap();
    assert_eq!(r2.offset, r1.len());
    assert_eq!(r2.offset + r2.len(), f1.len());
    let f3 = c.write_stream_frame(2000).unwrap();
    assert_eq!(f3.offset, f2.offset + f2.len());
    for f in [&r1, &r2, &f2, &f3] {
        deliver_stream(&mut s, f).unwrap();
    }
    c.on_stream_frame_acked(r2.record());
    assert_eq!(c.send_buffered(id), Some(3000), "prefix not acknowledged yet");
    c.on_stream_frame_acked(r1.record());
    assert_eq!(c.send_buffered(id), Some(3000 - f3.offset));
    c.on_stream_frame_acked(f3.record());
    assert_eq!(c.send_buffered(id), Some(0));
    // A late loss report of acknowledged data re-sends nothing.
    c.on_stream_frame_lost(f1.record());
    assert!(c.write_stream_frame(2000).is_none());
    assert!(!c.has_stream_data());
    let (got, r) = read_all(&mut s, id, t0());
    assert_eq!((got, r), (data, Err(ReadError::Blocked)));
}

#[test]
fn spurious_loss_after_partial_ack_resends_only_the_gaps() {
    let (mut c, _) = pair(small(100_000), small(100_000));
    let id = c.open_uni().unwrap();
    c.write(id, Bytes::from(vec![1; 300])).unwrap();
    c.finish(id).unwrap();
    let f = c.write_stream_frame(1000).unwrap();
    assert!(f.fin);
    // A retransmission of 100..200 (through another record) was acknowledged.
    c.on_stream_frame_acked(StreamFrameRecord {
        id,
        offset: 100,
        len: 100,
        fin: false,
    });
    c.on_stream_frame_lost(f.record());
    let a = c.write_stream_frame(1000).unwrap();
    let b = c.write_stream_frame(1000).unwrap();
    assert_eq!((a.offset, a.len(), a.fin), (0, 100, false));
    assert_eq!((b.offset, b.len(), b.fin), (200, 100, true));
    assert!(c.write_stream_frame(1000).is_none());
    c.on_stream_frame_acked(a.record());
    c.on_stream_frame_acked(b.record());
    assert_eq!(c.poll_event(), Some(StreamEvent::Finished { id }));
    assert_eq!(c.stream_count(), 0);
}

#[test]
fn lost_fin_alone_is_resent_as_an_empty_frame() {
    let (mut c, _) = pair(small(1000), small(1000));
    let id = c.open_uni().unwrap();
    c.write(id, Bytes::from_static(b"abc")).unwrap();
    let d = c.write_stream_frame(100).unwrap();
    c.finish(id).unwrap();
    let fin = c.write_stream_frame(100).unwrap();
    assert_eq!((fin.offset, fin.len(), fin.fin), (3, 0, true));
    c.on_stream_frame_acked(d.record());
    c.on_stream_frame_lost(fin.record());
    let again = c.write_stream_frame(100).unwrap();
    assert_eq!(again.record(), fin.record());
}

#[test]
fn write_is_refused_when_the_buffer_is_full_and_writable_follows() {
    let mut cfg = small(100_000);
    cfg.send_buffer = 1000;
    let (mut c, _) = pair(cfg, small(100_000));
    let id = c.open_uni().unwrap();
    assert_eq!(c.write(id, Bytes::from(vec![0; 1500])), Ok(1000));
    assert_eq!(c.write(id, Bytes::from_static(b"x")), Err(WriteError::Blocked));
    let f = c.write_stream_frame(600).unwrap();
    c.on_stream_frame_acked(f.record());
    assert_eq!(c.poll_event(), Some(StreamEvent::Writable { id }));
    assert_eq!(c.write(id, Bytes::from(vec![0; 1500])), Ok(f.len() as usize));
}

// ----- RESET_STREAM / STOP_SENDING -----

#[test]
fn stop_sending_makes_the_peer_reset_with_the_same_code() {
    let (mut c, mut s) = pair(small(10_000), small(10_000));
    let id = c.open_bi().unwrap();
    c.write(id, Bytes::from(vec![5; 3000])).unwrap();
    flush(&mut c, &mut s);
    assert_eq!(s.accept_bi(), Some(id));
    assert_eq!(s.read_buffered(id), Some(3000));
    s.stop(id, v(42)).unwrap();
    assert_eq!(s.read_buffered(id), Some(0), "buffered data dropped");
    let f = controls(&mut s);
    assert_eq!(
        f,
        vec![StreamControlFrame::StopSending {
            id,
            error_code: v(42)
        }]
    );
    deliver_control(&mut c, &f[0]).unwrap();
    assert_eq!(
        c.poll_event(),
        Some(StreamEvent::Stopped {
            id,
            error_code: v(42)
        })
    );
    assert_eq!(
        c.write(id, Bytes::from_static(b"x")),
        Err(WriteError::Stopped(v(42)))
    );
    let reset = controls(&mut c);
    assert_eq!(
        reset,
        vec![StreamControlFrame::ResetStream {
            id,
            error_code: v(42),
            final_size: 3000
        }]
    );
    // The reset is lost once, re-sent, then acknowledged: the sending part is gone.
    c.on_control_frame_lost(&reset[0]);
    assert_eq!(controls(&mut c), reset);
    deliver_control(&mut s, &reset[0]).unwrap();
    c.on_control_frame_acked(&reset[0]);
    // The server's sending part of the bidirectional stream is still there until it finishes it.
    s.finish(id).unwrap();
    flush(&mut s, &mut c);
    assert_eq!(s.stream_count(), 0);
    let (_, end) = read_all(&mut c, id, t0());
    assert_eq!(end, Ok(None));
    assert_eq!(c.stream_count(), 0);
}

#[test]
fn reset_received_discards_data_and_releases_connection_credit() {
    let mut cfg = small(1000);
    cfg.conn_window = 900;
    cfg.max_conn_window = 900;
    let (mut c, mut s) = pair(small(1000), cfg);
    let id = c.open_uni().unwrap();
    c.write(id, Bytes::from(vec![5; 500])).unwrap();
    flush(&mut c, &mut s);
    c.reset(id, v(3)).unwrap();
    assert_eq!(
        c.write(id, Bytes::from_static(b"x")),
        Err(WriteError::ClosedStream)
    );
    assert_eq!(c.reset(id, v(3)), Err(ClosedStream));
    assert_eq!(
        controls(&mut c),
        vec![StreamControlFrame::ResetStream {
            id,
            error_code: v(3),
            final_size: 500
        }]
    );
    // Acknowledgements and losses of data sent before the reset change nothing.
    c.on_stream_frame_lost(StreamFrameRecord {
        id,
        offset: 0,
        len: 500,
        fin: false,
    });
    assert!(c.write_stream_frame(1000).is_none());
    // The server sees a final size of 600 (100 bytes it never received): 600 charged, all released.
    assert_eq!(s.poll_event(), Some(StreamEvent::Opened { dir: Dir::Uni }));
    assert_eq!(s.poll_event(), Some(StreamEvent::Readable { id }));
    let f = ResetStream {
        id: id.to_varint(),
        error_code: v(3),
        final_size: v(600),
    };
    s.on_reset_stream(&f).unwrap();
    assert_eq!(s.read_buffered(id), Some(0));
    assert_eq!(s.poll_event(), Some(StreamEvent::Readable { id }));
    assert_eq!(controls(&mut s), vec![StreamControlFrame::MaxData(1500)]);
    assert_eq!(s.accept_uni(), Some(id));
    assert_eq!(s.read(id, 10, t0()), Err(ReadError::Reset(v(3))));
    assert_eq!(s.stream_count(), 0);
    assert_eq!(s.read(id, 10, t0()), Err(ReadError::ClosedStream));
}

#[test]
fn stop_after_fin_needs_no_stop_sending_and_data_after_stop_is_counted() {
    let (mut c, mut s) = pair(small(1000), small(1000));
    let a = sid(Side::Client, Dir::Uni, 0);
    s.on_stream_data(a, 0, Bytes::from_static(b"abc"), true, t0())
        .unwrap();
    s.stop(a, v(1)).unwrap();
    assert!(controls(&mut s).is_empty());
    assert_eq!(s.stream_count(), 0);
    let b = sid(Side::Client, Dir::Uni, 1);
    s.on_stream_data(b, 0, Bytes::from_static(b"abc"), false, t0())
        .unwrap();
    s.stop(b, v(2)).unwrap();
    assert_eq!(s.stop(b, v(2)), Err(ClosedStream));
    // Data after STOP_SENDING still counts against flow control, and is discarded.
    s.on_stream_data(b, 3, Bytes::from(vec![0; 997]), false, t0())
        .unwrap();
    assert_eq!(
        code(s.on_stream_data(b, 1000, Bytes::from_static(b"x"), false, t0())),
        FCE
    );
    assert_eq!(s.read_buffered(b), Some(0));
    let stop: Vec<_> = controls(&mut s)
        .into_iter()
        .filter(|f| matches!(f, StreamControlFrame::StopSending { .. }))
        .collect();
    assert_eq!(
        stop,
        vec![StreamControlFrame::StopSending {
            id: b,
            error_code: v(2)
        }]
    );
    // Once the final size is known the stream is settled and gone; a lost STOP_SENDING is not re-sent.
    s.on_stream_data(b, 1000, Bytes::new(), true, t0()).unwrap();
    assert_eq!(s.stream_count(), 0);
    s.on_control_frame_lost(&stop[0]);
    assert!(controls(&mut s).is_empty());
    let _ = &mut c;
}

/// Found by the quinn interop test (runtime): a FIN arriving alone after the reader consumed all data must make
/// the stream readable again, or the reader never learns the stream ended.
#[test]
fn regression_fin_only_frame_after_all_data_was_read_is_readable() {
    let (_, mut s) = pair(small(1000), small(1000));
    let id = sid(Side::Client, Dir::Uni, 0);
    s.on_stream_data(id, 0, Bytes::from_static(b"abc"), false, t0())
        .unwrap();
    assert_eq!(s.poll_event(), Some(StreamEvent::Opened { dir: Dir::Uni }));
    assert_eq!(s.poll_event(), Some(StreamEvent::Readable { id }));
    assert_eq!(s.accept_uni(), Some(id));
    assert_eq!(s.read(id, 10, t0()), Ok(Some(Bytes::from_static(b"abc"))));
    assert_eq!(s.poll_event(), None);
    s.on_stream_data(id, 3, Bytes::new(), true, t0()).unwrap();
    assert_eq!(s.poll_event(), Some(StreamEvent::Readable { id }));
    assert_eq!(s.read(id, 10, t0()), Ok(None));
}

/// Found by the runtime interop test: once the RESET_STREAM answering a STOP_SENDING is acknowledged the send part
/// is gone, but the application's next write must still report `Stopped` with the peer's code (once).
#[test]
fn regression_write_after_acked_stop_reset_reports_stopped() {
    let (mut c, _) = pair(small(1000), small(1000));
    let id = c.open_uni().unwrap();
    c.write(id, Bytes::from_static(b"x")).unwrap();
    c.on_stop_sending(&StopSending {
        id: id.to_varint(),
        error_code: v(9),
    })
    .unwrap();
    let reset = std::iter::from_fn(|| c.poll_control_frame(100))
        .find(|f| matches!(f, StreamControlFrame::ResetStream { .. }))
        .expect("a RESET_STREAM answers STOP_SENDING");
    c.on_control_frame_acked(&reset);
    assert_eq!(
        c.write(id, Bytes::from_static(b"y")),
        Err(WriteError::Stopped(v(9)))
    );
    assert_eq!(
        c.write(id, Bytes::from_static(b"y")),
        Err(WriteError::ClosedStream)
    );
}

// ----- stream limits and implicit opening -----

#[test]
fn rfc9000_3_2_lower_numbered_streams_are_opened_implicitly() {
    let (_, mut s) = pair(small(1000), small(1000));
    let id = sid(Side::Client, Dir::Bi, 2);
    s.on_stream_data(id, 0, Bytes::from_static(b"x"), false, t0())
        .unwrap();
    assert_eq!(s.poll_event(), Some(StreamEvent::Opened { dir: Dir::Bi }));
    assert_eq!(s.poll_event(), Some(StreamEvent::Readable { id }));
    assert_eq!(s.poll_event(), None);
    assert_eq!(s.stream_count(), 3);
    let accepted: Vec<_> = std::iter::from_fn(|| s.accept_bi()).collect();
    assert_eq!(
        accepted,
        (0..3).map(|i| sid(Side::Client, Dir::Bi, i)).collect::<Vec<_>>()
    );
    // MAX_STREAM_DATA and STOP_SENDING open peer bidirectional streams too.
    s.on_max_stream_data(sid(Side::Client, Dir::Bi, 3).to_varint(), v(10))
        .unwrap();
    assert_eq!(s.accept_bi(), Some(sid(Side::Client, Dir::Bi, 3)));
    assert_eq!(s.poll_event(), Some(StreamEvent::Opened { dir: Dir::Bi }));
}

#[test]
fn max_streams_is_raised_as_peer_streams_close() {
    let (mut c, mut s) = pair(small(1000), small(1000));
    let mut ids = Vec::new();
    for _ in 0..4 {
        let id = c.open_uni().unwrap();
        c.write(id, Bytes::from_static(b"x")).unwrap();
        c.finish(id).unwrap();
        ids.push(id);
    }
    // At the limit: no stream, and STREAMS_BLOCKED is queued once.
    assert_eq!(c.open_uni(), None);
    assert_eq!(c.open_uni(), None);
    assert_eq!(
        controls(&mut c),
        vec![StreamControlFrame::StreamsBlocked {
            dir: Dir::Uni,
            limit: 4
        }]
    );
    flush(&mut c, &mut s);
    assert!(controls(&mut s).is_empty());
    for id in &ids[..2] {
        assert_eq!(s.accept_uni(), Some(*id));
        let _ = read_all(&mut s, *id, t0());
    }
    // Two of four closed: the peer gets two more.
    assert_eq!(
        controls(&mut s),
        vec![StreamControlFrame::MaxStreams {
            dir: Dir::Uni,
            count: 6
        }]
    );
    deliver_control(
        &mut c,
        &StreamControlFrame::MaxStreams {
            dir: Dir::Uni,
            count: 6,
        },
    )
    .unwrap();
    // Finished events for the four streams, then Available.
    let evs: Vec<_> = std::iter::from_fn(|| c.poll_event()).collect();
    assert_eq!(evs.last(), Some(&StreamEvent::Available { dir: Dir::Uni }));
    assert!(c.open_uni().is_some() && c.open_uni().is_some());
    assert!(c.open_uni().is_none());
    // A lost MAX_STREAMS is re-sent with the current value; an old one is not.
    s.on_control_frame_lost(&StreamControlFrame::MaxStreams {
        dir: Dir::Uni,
        count: 5,
    });
    assert!(controls(&mut s).is_empty());
    s.on_control_frame_lost(&StreamControlFrame::MaxStreams {
        dir: Dir::Uni,
        count: 6,
    });
    assert_eq!(
        controls(&mut s),
        vec![StreamControlFrame::MaxStreams {
            dir: Dir::Uni,
            count: 6
        }]
    );
}

#[test]
fn peer_streams_stay_bounded_by_the_advertised_limit() {
    let (_, mut s) = pair(small(1000), small(1000));
    for i in 0..4 {
        s.on_stream_data(
            sid(Side::Client, Dir::Bi, i),
            0,
            Bytes::from_static(b"x"),
            false,
            t0(),
        )
        .unwrap();
    }
    assert_eq!(s.stream_count(), 4);
    assert!(
        s.on_stream_data(sid(Side::Client, Dir::Bi, 1 << 40), 0, Bytes::new(), false, t0())
            .is_err()
    );
    assert_eq!(s.stream_count(), 4);
}

// ----- fairness and priority -----

#[test]
fn streams_share_packets_round_robin() {
    let (mut c, _) = pair(small(1 << 20), small(1 << 20));
    let ids: Vec<_> = (0..3).map(|_| c.open_uni().unwrap()).collect();
    for id in &ids {
        c.write(*id, Bytes::from(vec![0; 10_000])).unwrap();
    }
    let order: Vec<_> = (0..9).map(|_| c.write_stream_frame(100).unwrap().id).collect();
    let expected: Vec<_> = ids.iter().cycle().take(9).copied().collect();
    assert_eq!(order, expected);
    let mut sent = [0u64; 3];
    while let Some(f) = c.write_stream_frame(1000) {
        let i = ids.iter().position(|x| *x == f.id).unwrap();
        sent[i] += f.len();
        if sent.iter().any(|&n| n >= 5000) {
            break;
        }
    }
    let (min, max) = (sent.iter().min().unwrap(), sent.iter().max().unwrap());
    assert!(max - min <= 1000, "{sent:?}");
}

#[test]
fn higher_priority_streams_go_first() {
    let (mut c, _) = pair(small(1 << 20), small(1 << 20));
    let low = c.open_uni().unwrap();
    let high = c.open_uni().unwrap();
    c.write(low, Bytes::from(vec![0; 1000])).unwrap();
    c.write(high, Bytes::from(vec![0; 1000])).unwrap();
    c.set_priority(high, 5).unwrap();
    let order: Vec<_> = std::iter::from_fn(|| c.write_stream_frame(600).map(|f| f.id)).collect();
    assert_eq!(order, vec![high, high, low, low]);
}

#[test]
fn stream_frames_respect_connection_credit() {
    let mut cfg = small(1000);
    cfg.conn_window = 1500;
    let (mut c, _) = pair(small(1000), cfg);
    let a = c.open_uni().unwrap();
    let b = c.open_uni().unwrap();
    c.write(a, Bytes::from(vec![0; 1000])).unwrap();
    c.write(b, Bytes::from(vec![0; 1000])).unwrap();
    let total: u64 = std::iter::from_fn(|| c.write_stream_frame(400))
        .map(|f| f.len())
        .sum();
    assert_eq!(total, 1500);
    assert!(!c.has_stream_data());
    c.on_max_data(v(2000));
    assert!(c.has_stream_data());
    let total: u64 = std::iter::from_fn(|| c.write_stream_frame(400))
        .map(|f| f.len())
        .sum();
    assert_eq!(total, 500);
}

#[test]
fn small_frames_are_copied_and_large_ones_shared() {
    let (_, mut s) = pair(small(10_000), small(10_000));
    let id = sid(Side::Client, Dir::Uni, 0);
    let f = StreamFrame {
        id,
        offset: 0,
        fin: false,
        data: vec![Bytes::from(vec![9u8; 1000])],
    };
    let mut buf = Vec::new();
    f.encode(&mut buf, true);
    let payload = Bytes::from(buf);
    let Frame::Stream(fr) = decode_frames(&payload).next().unwrap().unwrap() else {
        panic!()
    };
    s.on_stream_frame(&fr, &payload, t0()).unwrap();
    let got = s.read(id, usize::MAX, t0()).unwrap().unwrap();
    assert_eq!(got.as_ptr(), fr.data.as_ptr(), "shared, not copied");
}
