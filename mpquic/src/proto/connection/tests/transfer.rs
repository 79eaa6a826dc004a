//! Stream and datagram transfer tests, with and without loss, and key update mid-transfer.

use std::time::Duration;

use bytes::Bytes;

use super::harness::Pair;
use crate::cc::PathId;
use crate::proto::connection::{Event, TransportConfig};
use crate::proto::streams::StreamId;

pub(super) fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 8) as u8)
        .collect()
}

pub(super) fn sha(data: &[u8]) -> Vec<u8> {
    ring::digest::digest(&ring::digest::SHA256, data)
        .as_ref()
        .to_vec()
}

/// Per-side progress of a bidirectional transfer on one stream.
#[derive(Default)]
pub(super) struct Flow {
    pub(super) stream: Option<StreamId>,
    sent: usize,
    finished: bool,
    pub(super) received: Vec<u8>,
    pub(super) fin_seen: bool,
}

pub(super) fn pump(p: &mut Pair, is_client: bool, flow: &mut Flow, data: &[u8]) {
    let now = p.now;
    let conn = if is_client {
        p.client.conn()
    } else {
        p.server.conn()
    };
    if flow.stream.is_none() {
        flow.stream = if is_client {
            conn.open_bi()
        } else {
            conn.accept_bi()
        };
    }
    let Some(id) = flow.stream else { return };
    while flow.sent < data.len() {
        let end = (flow.sent + 64 * 1024).min(data.len());
        match conn.write(id, Bytes::copy_from_slice(&data[flow.sent..end])) {
            Ok(n) if n > 0 => flow.sent += n,
            _ => break,
        }
    }
    if flow.sent == data.len() && !flow.finished {
        conn.finish(id).unwrap();
        flow.finished = true;
    }
    loop {
        match conn.read(id, usize::MAX, now) {
            Ok(Some(b)) => flow.received.extend_from_slice(&b),
            Ok(None) => {
                flow.fin_seen = true;
                break;
            }
            Err(_) => break,
        }
    }
}

/// The client uploads `data` on one unidirectional stream, written in 64 KiB pieces as the send buffer
/// takes them, within `deadline` of simulated time; returns what the server read.
pub(super) fn upload_uni(p: &mut Pair, data: &[u8], deadline: Duration) -> Vec<u8> {
    let id = p.client.conn().open_uni().unwrap();
    let (mut sent, mut finished) = (0, false);
    let mut got = Vec::new();
    let mut peer = None;
    let ok = p.drive_until(deadline, |p| {
        let now = p.now;
        let c = p.client.conn();
        while sent < data.len() {
            let end = (sent + 64 * 1024).min(data.len());
            match c.write(id, Bytes::copy_from_slice(&data[sent..end])) {
                Ok(n) if n > 0 => sent += n,
                _ => break,
            }
        }
        if sent == data.len() && !finished {
            c.finish(id).unwrap();
            finished = true;
        }
        let s = p.server.conn();
        if peer.is_none() {
            peer = s.accept_uni();
        }
        let Some(rid) = peer else { return false };
        loop {
            match s.read(rid, usize::MAX, now) {
                Ok(Some(b)) => got.extend_from_slice(&b),
                Ok(None) => return true,
                Err(_) => return false,
            }
        }
    });
    assert!(ok, "upload incomplete: {} of {} bytes", got.len(), data.len());
    got
}

fn bidirectional(p: &mut Pair, size: usize, deadline: Duration) {
    let a = pattern(size, 1);
    let b = pattern(size, 2);
    let mut fc = Flow::default();
    let mut fs = Flow::default();
    let ok = p.drive_until(deadline, |p| {
        pump(p, true, &mut fc, &a);
        if p.server.conns.len() == 1 {
            pump(p, false, &mut fs, &b);
        }
        fc.fin_seen && fs.fin_seen
    });
    assert!(
        ok,
        "transfer incomplete: client got {} server got {} (lost {})",
        fc.received.len(),
        fs.received.len(),
        p.client.conn().stats().packets_lost
    );
    assert_eq!(sha(&fs.received), sha(&a), "client → server data corrupted");
    assert_eq!(sha(&fc.received), sha(&b), "server → client data corrupted");
}

#[test]
fn bidirectional_1mb_transfer_sha256() {
    let mut p = Pair::new(None, TransportConfig::default(), 3);
    p.handshake();
    bidirectional(&mut p, 1 << 20, Duration::from_secs(60));
}

#[test]
fn bidirectional_1mb_transfer_with_5_percent_loss() {
    let mut p = Pair::new(None, TransportConfig::default(), 4);
    p.handshake();
    p.loss = 0.05;
    bidirectional(&mut p, 1 << 20, Duration::from_secs(300));
    assert!(p.dropped > 0);
    let lost = p.client.conn().stats().packets_lost + p.server.conn().stats().packets_lost;
    assert!(lost > 0, "losses must have been detected and repaired");
}

#[test]
fn key_update_mid_transfer() {
    let transport = TransportConfig {
        key_update_interval: Some(200),
        ..TransportConfig::default()
    };
    let mut p = Pair::new(None, transport, 5);
    p.handshake();
    bidirectional(&mut p, 1 << 20, Duration::from_secs(60));
    assert!(
        p.client.conn().key_generation() >= 2,
        "generation {}",
        p.client.conn().key_generation()
    );
    // The side that just initiated an update may be one generation ahead until the peer's next packet.
    let (c, s) = (p.client.conn().key_generation(), p.server.conn().key_generation());
    assert!(s >= 2 && c.abs_diff(s) <= 1, "client {c} server {s}");
    assert!(p.client.events.iter().any(|(_, e)| *e == Event::KeyUpdated));
}

#[test]
fn hundred_concurrent_small_streams() {
    let mut p = Pair::new(None, TransportConfig::default(), 6);
    p.handshake();
    let now = p.now;
    let mut ids = Vec::new();
    for i in 0..100u32 {
        let c = p.client.conn();
        let id = c.open_uni().expect("stream limit");
        c.write(id, Bytes::from(format!("stream {i} payload").into_bytes()))
            .unwrap();
        c.finish(id).unwrap();
        ids.push(id);
    }
    let _ = now;
    let mut got = std::collections::BTreeMap::new();
    let ok = p.drive_until(Duration::from_secs(10), |p| {
        let now = p.now;
        let s = p.server.conn();
        while let Some(id) = s.accept_uni() {
            got.insert(id, (Vec::new(), false));
        }
        for (id, (buf, fin)) in got.iter_mut() {
            while let Ok(r) = s.read(*id, usize::MAX, now) {
                match r {
                    Some(b) => buf.extend_from_slice(&b),
                    None => {
                        *fin = true;
                        break;
                    }
                }
            }
        }
        got.len() == 100 && got.values().all(|(_, f)| *f)
    });
    assert!(
        ok,
        "only {} streams complete",
        got.values().filter(|(_, f)| *f).count()
    );
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(got[id].0, format!("stream {i} payload").into_bytes());
    }
}

#[test]
fn datagrams_both_ways() {
    let mut p = Pair::new(None, TransportConfig::default(), 7);
    p.handshake();
    for i in 0..10u8 {
        p.client.conn().send_datagram(Bytes::from(vec![i; 100])).unwrap();
        p.server
            .conn()
            .send_datagram(Bytes::from(vec![i + 100; 50]))
            .unwrap();
    }
    let mut at_server = Vec::new();
    let mut at_client = Vec::new();
    let ok = p.drive_until(Duration::from_secs(5), |p| {
        while let Some(d) = p.server.conn().recv_datagram() {
            at_server.push(d);
        }
        while let Some(d) = p.client.conn().recv_datagram() {
            at_client.push(d);
        }
        at_server.len() == 10 && at_client.len() == 10
    });
    assert!(ok, "{} / {} datagrams", at_server.len(), at_client.len());
    assert_eq!(at_server[3], Bytes::from(vec![3u8; 100]));
    assert_eq!(at_client[9], Bytes::from(vec![109u8; 50]));
    assert!(p.server.events.iter().any(|(_, e)| *e == Event::DatagramReceived));
}

#[test]
fn a_datagram_only_sender_grows_its_window() {
    // RFC 9002 §7.8: a sender is application-limited when it has nothing to send. Datagrams queued beyond the
    // window are something to send, so the window grows as it does for stream data.
    let mut p = Pair::new(None, TransportConfig::default(), 9);
    p.handshake();
    let initial = p.client.conn().path_stats(PathId(0)).unwrap().cwnd;
    let mut received = 0usize;
    let grew = p.drive_until(Duration::from_secs(1), |p| {
        // Keep more queued than the window lets out (20 datagrams a step; the queue's bound is 1024).
        for _ in 0..20 {
            let _ = p.client.conn().send_datagram(Bytes::from(vec![0u8; 1000]));
        }
        while p.server.conn().recv_datagram().is_some() {
            received += 1;
        }
        p.client.conn().path_stats(PathId(0)).unwrap().cwnd > 2 * initial
    });
    let cwnd = p.client.conn().path_stats(PathId(0)).unwrap().cwnd;
    assert!(
        grew,
        "window {cwnd} stayed near the initial {initial} after {received} datagrams"
    );
}

#[test]
fn datagram_too_large_is_refused() {
    let mut p = Pair::new(None, TransportConfig::default(), 8);
    p.handshake();
    let err = p.client.conn().send_datagram(Bytes::from(vec![0u8; 1500]));
    assert_eq!(err, Err(crate::proto::connection::SendDatagramError::TooLarge));
    // 1200-byte packets, 8-byte connection IDs: 1200 - (1 + 8 + 4) - 16 = 1171 bytes for the frame, of which
    // the type takes 1 and the length 2 (1168 >= 64): 1168 bytes of payload fit, 1169 do not.
    assert_eq!(p.client.conn().max_datagram_size(), Some(1168));
    assert_eq!(
        p.client.conn().send_datagram(Bytes::from(vec![0u8; 1168])),
        Ok(())
    );
    let err = p.client.conn().send_datagram(Bytes::from(vec![0u8; 1169]));
    assert_eq!(err, Err(crate::proto::connection::SendDatagramError::TooLarge));
}

#[test]
fn transfer_across_controllers_and_schedulers() {
    for (cc, sched) in [("newreno", "minrtt"), ("bbr", "roundrobin"), ("lia", "minrtt")] {
        let transport = TransportConfig {
            congestion_controller: cc.to_owned(),
            scheduler: sched.to_owned(),
            ..TransportConfig::default()
        };
        let mut p = Pair::new(None, transport, 9);
        p.handshake();
        p.loss = 0.02;
        bidirectional(&mut p, 256 * 1024, Duration::from_secs(120));
    }
}
