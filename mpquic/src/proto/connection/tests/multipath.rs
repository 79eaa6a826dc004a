//! Multipath (draft-ietf-quic-multipath-21) over the pair harness: negotiation, a second path opened by the
//! client and carrying data in both directions, PATH_ABANDON with the data of the abandoned path sent again on
//! the surviving one, and the rules that reject misuse.

use std::time::Duration;

use super::cids::{closed_with, lost};
use super::harness::{CLIENT, Pair, SERVER, addr};
use super::migration::transfer_with;
use crate::cc::PathId;
use crate::proto::coding::VarInt;
use crate::proto::connection::{ClosePathError, Connection, Event, TransportConfig};
use crate::proto::error::TransportErrorCode;
use crate::proto::frame::{Frame, PathAbandon};
use crate::sched::PathStatus;

pub(super) const CLIENT2: &str = "10.0.1.1:5555";

pub(super) fn mp_config() -> TransportConfig {
    TransportConfig {
        initial_max_path_id: Some(4),
        // The scheduler tests derive their packet counts from 1200-byte packets.
        mtu_discovery: None,
        ..TransportConfig::default()
    }
}

/// A handshake with multipath on both sides and a second path (ID 1) from `CLIENT2`, validated by both.
fn two_paths(seed: u64) -> Pair {
    let mut p = two_paths_with(seed, mp_config());
    assert!(p.client.conn().multipath() && p.server.conn().multipath());
    assert_eq!(p.client.conn().paths(), vec![PathId(0), PathId(1)]);
    p
}

#[test]
fn multipath_is_negotiated_only_when_both_sides_offer_it() {
    let mut p = Pair::new(None, mp_config(), 40);
    p.handshake();
    assert!(p.client.conn().multipath());
    let off = TransportConfig {
        initial_max_path_id: None,
        ..TransportConfig::default()
    };
    let mut q = Pair::new(None, off, 40);
    q.handshake();
    assert!(!q.client.conn().multipath());
    let now = q.now;
    assert!(
        q.client
            .conn()
            .open_path(now, None, addr(SERVER), PathStatus::Available)
            .is_err()
    );
}

#[test]
fn second_path_carries_data_both_ways_and_data_is_intact() {
    let mut p = two_paths(41);
    transfer_with(&mut p, 3_000_000, 1, |_| {});
    for node in [&mut p.client, &mut p.server] {
        let c = node.conn();
        let s0 = c.path_stats(PathId(0)).unwrap();
        let s1 = c.path_stats(PathId(1)).unwrap();
        assert!(s0.bytes_sent > 200_000, "path 0 carried {} bytes", s0.bytes_sent);
        assert!(s1.bytes_sent > 200_000, "path 1 carried {} bytes", s1.bytes_sent);
    }
    // The server sees path 1 from the client's second address.
    assert_eq!(
        p.server.conn().path_stats(PathId(1)).unwrap().remote,
        addr(CLIENT2)
    );
    assert_eq!(
        p.server.conn().path_stats(PathId(0)).unwrap().remote,
        addr(CLIENT)
    );
}

#[test]
fn abandoned_path_data_is_resent_on_the_survivor() {
    let mut p = two_paths(42);
    transfer_with(&mut p, 2_000_000, 300_000, |p| {
        // The second interface dies and the client abandons its path: whatever was in flight there must
        // arrive over path 0.
        p.blackholed.push(addr(CLIENT2));
        let now = p.now;
        p.client
            .conn()
            .close_path(now, PathId(1), PathAbandon::APPLICATION_ABANDON_PATH)
            .unwrap();
    });
    assert!(
        p.client
            .events
            .iter()
            .any(|(_, e)| *e == Event::PathAbandoned { path: PathId(1) })
    );
    let ok = p.drive_until(Duration::from_secs(5), |p| {
        p.server
            .events
            .iter()
            .any(|(_, e)| *e == Event::PathAbandoned { path: PathId(1) })
    });
    assert!(ok, "the server never learned of the abandonment");
    // After 3 PTO both sides delete the path.
    p.run_for(Duration::from_secs(3));
    assert_eq!(p.client.conn().paths(), vec![PathId(0)]);
    assert_eq!(p.server.conn().paths(), vec![PathId(0)]);
    let now = p.now;
    assert_eq!(
        p.client.conn().close_path(now, PathId(0), VarInt::ZERO),
        Err(ClosePathError::LastPath)
    );
}

#[test]
fn multipath_frame_without_negotiation_is_a_protocol_violation() {
    let mut p = Pair::new(None, TransportConfig::default(), 43);
    p.handshake();
    let mut raw = Vec::new();
    Frame::MaxPathId(PathId(3)).encode(&mut raw);
    p.client.conn().inject_raw_frame_for_test(raw);
    assert!(p.drive_until(Duration::from_secs(5), |p| lost(&p.client.events).is_some()));
    assert_eq!(
        closed_with(&p.server.events),
        Some(TransportErrorCode::PROTOCOL_VIOLATION)
    );
}

#[test]
fn path_id_above_the_maximum_is_a_protocol_violation() {
    let mut p = Pair::new(None, mp_config(), 44);
    p.handshake();
    let mut raw = Vec::new();
    Frame::PathAbandon(PathAbandon {
        path_id: PathId(9),
        error_code: VarInt::ZERO,
    })
    .encode(&mut raw);
    p.client.conn().inject_raw_frame_for_test(raw);
    assert!(p.drive_until(Duration::from_secs(5), |p| lost(&p.client.events).is_some()));
    assert_eq!(
        closed_with(&p.server.events),
        Some(TransportErrorCode::PROTOCOL_VIOLATION)
    );
}

/// After the handshake of a pair whose client has the extra address `CLIENT2`: lets the first path settle for
/// 50 ms, opens path 1 from `CLIENT2` and drives the pair until both sides have validated it (at most
/// `within`).
pub(super) fn open_second_path(p: &mut Pair, within: Duration) {
    p.run_for(Duration::from_millis(50));
    let now = p.now;
    p.client
        .conn()
        .open_path(now, Some(addr(CLIENT2)), addr(SERVER), PathStatus::Available)
        .unwrap();
    let ok = p.drive_until(within, |p| {
        p.server.conns.len() == 1
            && p.server.conn().path_stats(PathId(1)).is_some_and(|s| s.validated)
            && p.client.conn().path_stats(PathId(1)).is_some_and(|s| s.validated)
    });
    assert!(ok, "path 1 was not validated by both sides");
}

/// Like [`two_paths`] with another transport configuration.
pub(super) fn two_paths_with(seed: u64, transport: TransportConfig) -> Pair {
    let mut p = Pair::new(None, transport, seed);
    p.client_extra_addrs.push(addr(CLIENT2));
    p.handshake();
    open_second_path(&mut p, Duration::from_secs(2));
    p
}

#[test]
fn redundant_scheduler_sends_the_data_on_both_paths() {
    let size = 600_000;
    let transport = TransportConfig {
        scheduler: "redundant".to_owned(),
        // The thresholds below were measured with every path ID's connection IDs issued at the handshake.
        unused_path_cids: u64::MAX,
        ..mp_config()
    };
    let mut p = two_paths_with(45, transport);
    transfer_with(&mut p, size, 1, |_| {});
    let c = p.client.conn();
    let s0 = c.path_stats(PathId(0)).unwrap().bytes_sent;
    let s1 = c.path_stats(PathId(1)).unwrap().bytes_sent;
    // Packets are repeated on the other path whenever its window allows (best effort, as in Linux MPTCP's
    // redundant scheduler): far more than one copy of the stream went out, on both paths.
    assert!(
        s0 + s1 > size as u64 * 13 / 10,
        "path 0 {s0} B, path 1 {s1} B for {size} B"
    );
    assert!(
        s0 > size as u64 / 2 && s1 > size as u64 / 2,
        "path 0 {s0} B, path 1 {s1} B"
    );
}

#[test]
fn minrtt_sends_each_byte_once_when_nothing_is_lost() {
    let size = 600_000;
    let mut p = two_paths_with(46, mp_config());
    transfer_with(&mut p, size, 1, |_| {});
    let c = p.client.conn();
    let sent = c.path_stats(PathId(0)).unwrap().bytes_sent + c.path_stats(PathId(1)).unwrap().bytes_sent;
    assert!(sent < size as u64 * 13 / 10, "{sent} B sent for {size} B of data");
}

#[test]
fn per_path_stream_bytes_add_up_to_the_application_data() {
    // No loss: each side sends its `size` bytes exactly once (minRTT never duplicates), split over both paths,
    // and the peer receives exactly what was sent on each path.
    let size = 600_000;
    let mut p = two_paths_with(47, mp_config());
    transfer_with(&mut p, size, 1, |_| {});
    let stats = |c: &Connection| [0, 1].map(|i| c.path_stats(PathId(i)).unwrap());
    let (c, s) = (stats(p.client.conn()), stats(p.server.conn()));
    for (from, to) in [(&c, &s), (&s, &c)] {
        let sent: u64 = from.iter().map(|x| x.stream_bytes_sent).sum();
        assert_eq!(sent, size as u64);
        for (a, b) in from.iter().zip(to.iter()) {
            assert_eq!(a.stream_bytes_sent, b.stream_bytes_received, "path {:?}", a.path);
            assert!(
                a.stream_bytes_sent > 0,
                "path {:?} carried no stream data",
                a.path
            );
        }
    }
}

#[test]
fn per_path_acknowledged_stream_bytes_are_what_each_path_delivered() {
    // No loss: once the last acknowledgements are in, every STREAM byte sent on a path was acknowledged
    // there, and the paths together acknowledged each side's `size` bytes once.
    let size = 600_000;
    let mut p = two_paths_with(48, mp_config());
    transfer_with(&mut p, size, 1, |_| {});
    p.drive_until(Duration::from_secs(1), |_| false);
    for c in [p.client.conn(), p.server.conn()] {
        let paths = [0, 1].map(|i| c.path_stats(PathId(i)).unwrap());
        for s in &paths {
            assert_eq!(s.stream_bytes_acked, s.stream_bytes_sent, "path {:?}", s.path);
        }
        assert_eq!(
            paths.iter().map(|s| s.stream_bytes_acked).sum::<u64>(),
            size as u64
        );
    }
}

#[derive(Debug)]
struct HighestPathFirst;

impl crate::sched::Scheduler for HighestPathFirst {
    fn name(&self) -> &'static str {
        "highest-path-first"
    }
    fn select_send(
        &mut self,
        conn: &crate::sched::ConnView<'_>,
        _now: std::time::Instant,
    ) -> crate::sched::Decision {
        // Only the highest live path, even when another one has room.
        match conn.paths.iter().filter(|v| v.is_alive()).max_by_key(|v| v.id) {
            Some(v) if v.can_send(conn.packet_size) => crate::sched::Decision::Path(v.id),
            _ => crate::sched::Decision::Blocked,
        }
    }
}

#[test]
fn a_user_scheduler_object_decides_the_path() {
    let transport = TransportConfig {
        scheduler_factory: Some(crate::proto::connection::SchedFactory(std::sync::Arc::new(
            || Box::new(HighestPathFirst),
        ))),
        ..mp_config()
    };
    let mut p = two_paths_with(47, transport);
    let before = p.client.conn().path_stats(PathId(0)).unwrap().bytes_sent;
    transfer_with(&mut p, 1_000_000, 1, |_| {});
    let c = p.client.conn();
    let s0 = c.path_stats(PathId(0)).unwrap().bytes_sent - before;
    let s1 = c.path_stats(PathId(1)).unwrap().bytes_sent;
    // Path 0 only carries ACKs and control frames.
    assert!(
        s1 > 10 * s0,
        "path 1 {s1} B, path 0 {s0} B: the user scheduler chose path 1"
    );
}

#[test]
fn a_path_that_fails_validation_is_abandoned_by_both_sides() {
    let mut p = Pair::new(None, mp_config(), 48);
    p.client_extra_addrs.push(addr(CLIENT2));
    p.handshake();
    p.run_for(Duration::from_millis(50));
    // Nothing reaches the client's second address: the server's PATH_RESPONSE and PATH_CHALLENGE are lost.
    p.blackholed.push(addr(CLIENT2));
    let now = p.now;
    let id = p
        .client
        .conn()
        .open_path(now, Some(addr(CLIENT2)), addr(SERVER), PathStatus::Available)
        .unwrap();
    let abandoned = |events: &[(crate::proto::endpoint::ConnectionHandle, Event)]| {
        events
            .iter()
            .any(|(_, e)| *e == Event::PathAbandoned { path: id })
    };
    let ok = p.drive_until(Duration::from_secs(10), |p| {
        abandoned(&p.client.events) && abandoned(&p.server.events)
    });
    assert!(ok, "the unvalidated path was not abandoned by both sides");
    // The connection goes on over path 0.
    transfer_with(&mut p, 200_000, 1, |_| {});
}

#[test]
fn a_path_that_dies_without_notice_does_not_stall_the_transfer() {
    let mut p = two_paths(49);
    transfer_with(&mut p, 2_000_000, 400_000, |p| {
        // Both directions of path 1 go dark; nobody abandons it.
        p.blackholed.push(addr(CLIENT2));
        p.dead_sources.push(addr(CLIENT2));
    });
}

#[test]
fn the_handshake_path_dying_without_notice_does_not_stall_the_transfer() {
    let mut p = two_paths(50);
    transfer_with(&mut p, 2_000_000, 400_000, |p| {
        // Both directions of path 0 go dark; nobody abandons it.
        p.blackholed.push(addr(CLIENT));
        p.dead_sources.push(addr(CLIENT));
    });
}

/// An upload of `size` bytes from the client over two paths, path 1 30 ms slower each way; returns the
/// packets the server sent on path 1 (only acknowledgements and probes: it sends no data).
fn server_packets_on_slow_path(policy: crate::proto::connection::AckPathPolicy, seed: u64) -> u64 {
    let transport = TransportConfig {
        ack_path: policy,
        // No opportunistic retransmission: it would move the slow path's holes to the fast path and penalise
        // the slow one, which this test needs busy.
        reinjection: crate::proto::connection::ReinjectionConfig {
            enabled: false,
            ..Default::default()
        },
        // Round-robin keeps data on the slow path too, and a 1 MiB send buffer paces the application
        // (with all 3 MB written at once, the fast path's window outgrows the slow path's share). Fixed
        // 4 MiB receive windows keep flow control out of it.
        scheduler: "roundrobin".to_owned(),
        streams: crate::proto::streams::StreamsConfig {
            send_buffer: 1 << 20,
            window_policy: crate::proto::streams::WindowPolicy::Fixed,
            stream_window_bidi_local: 4 << 20,
            stream_window_bidi_remote: 4 << 20,
            stream_window_uni: 4 << 20,
            conn_window: 4 << 20,
            ..Default::default()
        },
        ..mp_config()
    };
    let mut p = Pair::new(None, transport, seed);
    p.client_extra_addrs.push(addr(CLIENT2));
    p.extra_delay.insert(addr(CLIENT2), Duration::from_millis(30));
    p.handshake();
    p.run_for(Duration::from_millis(50));
    let now = p.now;
    p.client
        .conn()
        .open_path(now, Some(addr(CLIENT2)), addr(SERVER), PathStatus::Available)
        .unwrap();
    let ok = p.drive_until(Duration::from_secs(2), |p| {
        p.client.conn().path_stats(PathId(1)).is_some_and(|s| s.validated)
    });
    assert!(ok);
    let data = super::transfer::pattern(3_000_000, 4);
    let mut fc = super::transfer::Flow::default();
    let mut fs = super::transfer::Flow::default();
    let ok = p.drive_until(Duration::from_secs(30), |p| {
        super::transfer::pump(p, true, &mut fc, &data);
        if p.server.conns.len() == 1 {
            super::transfer::pump(p, false, &mut fs, &[]);
        }
        fs.fin_seen
    });
    assert!(ok && super::transfer::sha(&fs.received) == super::transfer::sha(&data));
    let c = p.client.conn().path_stats(PathId(1)).unwrap();
    assert!(
        c.packets_sent > 50,
        "path 1 carried {} client packets",
        c.packets_sent
    );
    p.server.conn().path_stats(PathId(1)).unwrap().packets_sent
}

#[test]
fn ack_path_policy_decides_where_path_acks_travel() {
    use crate::proto::connection::AckPathPolicy;
    let same = server_packets_on_slow_path(AckPathPolicy::SamePath, 50);
    let fastest = server_packets_on_slow_path(AckPathPolicy::LowestRtt, 50);
    // SamePath: path 1's data is acknowledged on path 1 (about 100 data packets there, acknowledged in
    // bursts: 24 packets). LowestRtt: on path 0, so path 1 only sees the server's path validation.
    assert!(same > 10, "server sent {same} packets on path 1 with SamePath");
    assert!(
        fastest < 5,
        "server sent {fastest} packets on path 1 with LowestRtt"
    );
}

/// A multipath connection whose client sends `frame` in a 1-RTT packet: the code the server closes with.
fn server_close_code_for(
    frame: Vec<u8>,
    transport: TransportConfig,
    seed: u64,
) -> Option<TransportErrorCode> {
    let mut p = Pair::new(None, transport, seed);
    p.handshake();
    p.run_for(Duration::from_millis(50));
    p.client.conn().inject_raw_frame_for_test(frame);
    p.drive_until(Duration::from_secs(5), |p| lost(&p.client.events).is_some());
    closed_with(&p.server.events)
}

fn encode(f: Frame<'_>) -> Vec<u8> {
    let mut v = Vec::new();
    f.encode(&mut v);
    v
}

#[test]
fn every_multipath_frame_rule_closes_with_protocol_violation() {
    use crate::proto::frame::{
        NewConnectionId, PathCidsBlocked, PathStatus as PathStatusFrame, RetireConnectionId,
    };
    let pv = Some(TransportErrorCode::PROTOCOL_VIOLATION);
    // initial_max_path_id is 7 on both sides (the default).
    let mut path_ack_above_max = Vec::new();
    crate::proto::frame::encode_ack(
        &mut path_ack_above_max,
        Some(PathId(8)),
        VarInt::ZERO,
        &[0..=0],
        None,
    )
    .unwrap();
    let mut path_ack_never_sent = Vec::new();
    crate::proto::frame::encode_ack(
        &mut path_ack_never_sent,
        Some(PathId(0)),
        VarInt::ZERO,
        &[5000..=5000],
        None,
    )
    .unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        // draft-ietf-quic-multipath-21 (MAX_PATH_ID): "MUST NOT be lower than the value advertised in the
        // initial_max_path_id transport parameter".
        (
            "MAX_PATH_ID below initial_max_path_id",
            encode(Frame::MaxPathId(PathId(3))),
        ),
        // (PATHS_BLOCKED): "Receipt of a value that is higher than the local maximum value MUST be treated as a
        // connection error of type PROTOCOL_VIOLATION."
        (
            "PATHS_BLOCKED above our maximum",
            encode(Frame::PathsBlocked(PathId(8))),
        ),
        // (PATH_CIDS_BLOCKED): a Next Sequence Number above the next connection ID we would issue.
        (
            "PATH_CIDS_BLOCKED beyond what we issued",
            encode(Frame::PathCidsBlocked(PathCidsBlocked {
                path_id: PathId(1),
                next_sequence: VarInt::from_u32(100),
            })),
        ),
        // §2: a path ID above the maximum the receiver advertised.
        ("PATH_ACK above the maximum path ID", path_ack_above_max),
        (
            "PATH_STATUS above the maximum path ID",
            encode(Frame::PathStatus(PathStatusFrame {
                path_id: PathId(8),
                sequence: VarInt::ZERO,
                available: false,
            })),
        ),
        (
            "PATH_NEW_CONNECTION_ID above the maximum path ID",
            encode(Frame::NewConnectionId(NewConnectionId {
                path_id: Some(PathId(8)),
                sequence: VarInt::ZERO,
                retire_prior_to: VarInt::ZERO,
                id: &[9; 8],
                reset_token: [9; 16],
            })),
        ),
        // RFC 9000 §19.16 applied per path: retiring a sequence number never issued.
        (
            "PATH_RETIRE_CONNECTION_ID of a sequence never issued",
            encode(Frame::RetireConnectionId(RetireConnectionId {
                path_id: Some(PathId(1)),
                sequence: VarInt::from_u32(1000),
            })),
        ),
        // RFC 9000 §13.1 per path: an acknowledgement of a packet never sent on that path.
        ("PATH_ACK of a packet never sent", path_ack_never_sent),
    ];
    for (i, (name, frame)) in cases.into_iter().enumerate() {
        let code = server_close_code_for(frame, mp_config(), 60 + i as u64);
        assert_eq!(code, pv, "{name}");
    }
}

#[test]
fn multipath_frames_need_negotiation_and_1rtt_packets() {
    let pv = Some(TransportErrorCode::PROTOCOL_VIOLATION);
    let off = TransportConfig {
        initial_max_path_id: None,
        ..TransportConfig::default()
    };
    let mut path_ack = Vec::new();
    crate::proto::frame::encode_ack(&mut path_ack, Some(PathId(0)), VarInt::ZERO, &[0..=0], None).unwrap();
    // draft-ietf-quic-multipath-21 §2: without both initial_max_path_id parameters, no frame of the extension.
    assert_eq!(
        server_close_code_for(path_ack.clone(), off, 70),
        pv,
        "PATH_ACK without negotiation"
    );
    assert_eq!(
        server_close_code_for(
            encode(Frame::PathStatus(crate::proto::frame::PathStatus {
                path_id: PathId(0),
                sequence: VarInt::ZERO,
                available: true,
            })),
            TransportConfig {
                initial_max_path_id: None,
                ..TransportConfig::default()
            },
            71
        ),
        pv,
        "PATH_STATUS without negotiation"
    );
    // §2: multipath frames are only allowed in 1-RTT packets.
    let mut p = Pair::new(None, mp_config(), 72);
    p.client.conn().inject_initial_frame_for_test(path_ack);
    assert!(p.drive_until(Duration::from_secs(5), |p| lost(&p.client.events).is_some()));
    match lost(&p.client.events) {
        Some(crate::proto::connection::ConnectionError::ConnectionClosed { code, .. }) => {
            assert_eq!(code, TransportErrorCode::PROTOCOL_VIOLATION);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unused_path_ids_get_one_cid_and_a_validated_path_the_full_number() {
    // mp_config offers path IDs 0..=4. After the handshake each side issued, per draft-ietf-quic-multipath-21
    // §3, one connection ID for each unused path ID (TransportConfig::unused_path_cids = 1); path 0 has 4
    // (DEFAULT_CIDS_PER_PATH within the default active_connection_id_limit). Once path 1 is validated both
    // sides top it up to 4; path IDs 2..=4 keep 1.
    let mut p = two_paths(46);
    for name in ["client", "server"] {
        let c = if name == "client" {
            p.client.conn()
        } else {
            p.server.conn()
        };
        assert_eq!(c.local_cids(PathId(0)).len(), 4, "{name} path 0");
        assert_eq!(c.local_cids(PathId(1)).len(), 4, "{name} path 1");
        for id in 2..=4 {
            assert_eq!(c.local_cids(PathId(id)).len(), 1, "{name} path {id}");
        }
    }
    // The PATH_NEW_CONNECTION_ID frames of the top-up arrive one round trip later.
    p.run_for(Duration::from_millis(200));
    assert_eq!(p.client.conn().remote_cid_count(PathId(1)), 4);
    assert_eq!(p.server.conn().remote_cid_count(PathId(1)), 4);
}
