//! Property tests: reassembly of arbitrarily split, overlapping, duplicated and reordered STREAM frames
//! delivers exactly the original bytes with memory bounded by the window; random loss and reordering on a
//! send/receive pair still delivers everything; arbitrary peer input never panics and never grows state
//! beyond the advertised limits.

use proptest::prelude::*;

use super::*;
use crate::proto::frame::{ResetStream, StopSending};

fn checksum(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

proptest! {
    #[test]
    fn reassembly_delivers_exactly_the_original_bytes(
        data in proptest::collection::vec(any::<u8>(), 0..3000),
        cuts in proptest::collection::vec((0usize..3000, 0usize..400), 1..60),
        seed in any::<u64>(),
        read_sizes in proptest::collection::vec(1usize..700, 1..8),
    ) {
        let window = 4096u64;
        let (_, mut s) = pair(small(window), small(window));
        let id = sid(Side::Client, Dir::Uni, 0);
        let all = Bytes::from(data.clone());
        // Pieces: random ranges (overlapping, duplicated) plus a covering set, so everything arrives.
        let mut pieces: Vec<(usize, usize)> = cuts
            .iter()
            .map(|&(start, len)| {
                let start = start.min(data.len());
                (start, (start + len).min(data.len()))
            })
            .collect();
        let mut pos = 0;
        let mut k = 0;
        while pos < data.len() {
            let len = 1 + (cuts[k % cuts.len()].1 % 700);
            pieces.push((pos, (pos + len).min(data.len())));
            pos += len;
            k += 1;
        }
        pieces.push((data.len(), data.len()));
        // Deterministic shuffle from the seed.
        let mut x = seed | 1;
        for i in (1..pieces.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            pieces.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let mut out = Vec::new();
        let mut reads = read_sizes.iter().cycle();
        let now = t0();
        let mut finished = false;
        for (a, b) in pieces {
            let fin = b == data.len();
            s.on_stream_data(id, a as u64, all.slice(a..b), fin, t0()).unwrap();
            prop_assert!(s.read_buffered(id).unwrap_or(0) <= window);
            // Read some of what is available between frames.
            if !finished {
                match s.read(id, *reads.next().unwrap(), now) {
                    Ok(Some(chunk)) => out.extend_from_slice(&chunk),
                    Ok(None) => finished = true,
                    Err(_) => {}
                }
            }
        }
        while !finished {
            match s.read(id, *reads.next().unwrap(), now) {
                Ok(Some(chunk)) => out.extend_from_slice(&chunk),
                Ok(None) => finished = true,
                Err(e) => prop_assert!(false, "read failed: {e:?}"),
            }
        }
        prop_assert_eq!(out.len(), data.len());
        prop_assert_eq!(checksum(&out), checksum(&data));
        prop_assert_eq!(out, data);
        prop_assert_eq!(s.stream_count(), 0);
    }

    #[test]
    fn lossy_transfer_over_several_streams_delivers_everything(
        sizes in proptest::collection::vec(0usize..5000, 1..4),
        losses in proptest::collection::vec(proptest::bool::weighted(0.3), 1..50),
        frame_len in 20usize..1500,
    ) {
        let (mut c, mut s) = pair(small(2000), small(2000));
        let now = t0();
        let mut ids = Vec::new();
        for (k, &n) in sizes.iter().enumerate() {
            let id = c.open_bi().unwrap();
            let data: Vec<u8> = (0..n).map(|i| (i * 31 + k) as u8).collect();
            c.write(id, Bytes::from(data)).unwrap();
            c.finish(id).unwrap();
            ids.push(id);
        }
        let mut received: Vec<Vec<u8>> = vec![Vec::new(); ids.len()];
        let mut done = vec![false; ids.len()];
        // At least one delivery per cycle of the loss pattern, so progress is always possible.
        let mut losses = losses;
        losses.push(false);
        let mut lose = losses.iter().cycle();
        for _round in 0..10_000 {
            let mut progress = false;
            for _ in 0..100 {
                let Some(f) = c.poll_control_frame(frame_len) else { break };
                progress = true;
                if *lose.next().unwrap() { c.on_control_frame_lost(&f); continue; }
                deliver_control(&mut s, &f).unwrap();
                c.on_control_frame_acked(&f);
            }
            for _ in 0..100 {
                let Some(f) = c.write_stream_frame(frame_len) else { break };
                progress = true;
                if *lose.next().unwrap() { c.on_stream_frame_lost(f.record()); continue; }
                deliver_stream(&mut s, &f).unwrap();
                c.on_stream_frame_acked(f.record());
            }
            for (k, id) in ids.iter().enumerate() {
                if done[k] { continue; }
                loop {
                    match s.read(*id, 333, now) {
                        Ok(Some(b)) => received[k].extend_from_slice(&b),
                        Ok(None) => { done[k] = true; break; }
                        Err(_) => break,
                    }
                }
            }
            for _ in 0..100 {
                let Some(f) = s.poll_control_frame(frame_len) else { break };
                progress = true;
                if *lose.next().unwrap() { s.on_control_frame_lost(&f); continue; }
                deliver_control(&mut c, &f).unwrap();
                s.on_control_frame_acked(&f);
            }
            if done.iter().all(|d| *d) { break; }
            prop_assert!(progress || done.iter().all(|d| *d), "stalled");
        }
        for (k, &n) in sizes.iter().enumerate() {
            let want: Vec<u8> = (0..n).map(|i| (i * 31 + k) as u8).collect();
            prop_assert_eq!(&received[k], &want);
        }
        // Everything acknowledged: the client's send buffers are empty.
        for id in &ids {
            prop_assert_eq!(c.send_buffered(*id).unwrap_or(0), 0);
        }
    }

    #[test]
    fn arbitrary_peer_input_never_panics_and_stays_bounded(
        ops in proptest::collection::vec(
            (0u8..9, 0u64..64, prop_oneof![0u64..3000, any::<u64>()], 0usize..300, any::<bool>()),
            1..200,
        ),
    ) {
        let (_, mut s) = pair(small(1000), small(1000));
        let now = t0();
        for (op, raw_id, n, len, flag) in ops {
            let id = VarInt::from_u64(raw_id).unwrap();
            let big = VarInt::from_u64(n & ((1 << 62) - 1)).unwrap();
            let offset = n % 4096;
            let r = match op {
                0 => s.on_stream_data(StreamId::from_varint(id), offset, Bytes::from(vec![1; len]), flag, t0()),
                1 => s.on_reset_stream(&ResetStream { id, error_code: big, final_size: VarInt::from_u64(offset).unwrap() }),
                2 => s.on_stop_sending(&StopSending { id, error_code: big }),
                3 => s.on_max_stream_data(id, big),
                4 => s.on_stream_data_blocked(id, big),
                5 => { s.on_max_data(big); Ok(()) }
                6 => { s.on_max_streams(if flag { Dir::Bi } else { Dir::Uni }, VarInt::from_u64(n % (1 << 61)).unwrap()); Ok(()) }
                7 => {
                    // The application reads or stops a stream.
                    let sid = StreamId::from_varint(id);
                    if flag { let _ = s.read(sid, len, now); } else { let _ = s.stop(sid, big); }
                    Ok(())
                }
                _ => {
                    while let Some(f) = s.poll_control_frame(1200) {
                        if flag { s.on_control_frame_lost(&f) } else { s.on_control_frame_acked(&f) }
                        if flag { break; }
                    }
                    Ok(())
                }
            };
            if r.is_err() {
                // The connection would close here.
                break;
            }
            // 4 + 4 peer streams at most; buffers within the windows.
            prop_assert!(s.stream_count() <= 8);
            for raw in 0..64u64 {
                let sid = StreamId::from_varint(VarInt::from_u64(raw).unwrap());
                prop_assert!(s.read_buffered(sid).unwrap_or(0) <= 1000);
            }
        }
    }
}
