//! Path limits: path states kept at once (`ConnectionLimits::max_paths`, which bounds the
//! initial_max_path_id and the MAX_PATH_ID we grant), path validations in flight (`path_validations`) and
//! PATH_CHALLENGE data remembered per validation (`path_challenges`), each pushed past by a peer or the
//! application.

use std::time::Duration;

use super::cids::{closed_with, lost};
use super::harness::{Pair, SERVER, addr};
use super::multipath::CLIENT2;
use crate::cc::PathId;
use crate::proto::cid::OpenPathError;
use crate::proto::coding::VarInt;
use crate::proto::connection::{ClientConfig, ConnectionLimits, ServerConfig, TransportConfig};
use crate::proto::error::TransportErrorCode;
use crate::proto::frame::{Frame, PathStatus as PathStatusFrame};
use crate::sched::PathStatus;

/// A multipath pair whose server has `limits` (the client keeps the defaults).
fn server_limited(limits: ConnectionLimits, seed: u64) -> Pair {
    let (cc, sc) = super::harness::configs(None, TransportConfig::default());
    let sc = ServerConfig {
        transport: TransportConfig {
            limits,
            ..sc.transport
        },
        ..sc
    };
    let mut p = Pair::from_configs(cc, sc, seed);
    p.client_extra_addrs.push(addr(CLIENT2));
    p.handshake();
    p.run_for(Duration::from_millis(50));
    p
}

/// draft-ietf-quic-multipath-21 §2: "a path ID above the advertised maximum → PROTOCOL_VIOLATION". With
/// `max_paths: 3` the server advertises initial_max_path_id 2 (not the configured 7), so path 3 is above it.
#[test]
fn max_paths_caps_the_advertised_path_id_and_a_path_id_above_it_is_protocol_violation() {
    let limits = ConnectionLimits {
        max_paths: 3,
        ..ConnectionLimits::default()
    };
    let mut p = server_limited(limits, 200);
    assert_eq!(p.server.conn().paths.ids.local_max(), PathId(2));
    assert_eq!(p.client.conn().paths.ids.peer_max(), PathId(2));
    let mut f = Vec::new();
    Frame::PathStatus(PathStatusFrame {
        path_id: PathId(3),
        sequence: VarInt::ZERO,
        available: true,
    })
    .encode(&mut f);
    p.client.conn().inject_raw_frame_for_test(f);
    assert!(p.drive_until(Duration::from_secs(5), |p| lost(&p.client.events).is_some()));
    assert_eq!(
        closed_with(&p.client.events),
        Some(TransportErrorCode::PROTOCOL_VIOLATION)
    );
}

/// Path-ID exhaustion: a client opens a path, abandons it as soon as it is validated, and opens the
/// next, over and over. Abandoned paths linger 3 PTO (draft-ietf-quic-multipath-21 §3), so if each abandonment
/// raised MAX_PATH_ID at once the server would hold ever more path states; with `max_paths: 3` it never holds
/// more than 3, and the churn still goes on (path IDs are granted again as lingering states are deleted).
#[test]
fn max_paths_bounds_path_states_while_a_peer_opens_and_abandons_paths() {
    let limits = ConnectionLimits {
        max_paths: 3,
        ..ConnectionLimits::default()
    };
    let mut p = server_limited(limits, 201);
    let mut opened = Vec::new();
    let mut most = 0;
    let ok = p.drive_until(Duration::from_secs(30), |p| {
        let now = p.now;
        let c = p.client.conn();
        if let Ok(id) = c.open_path(now, Some(addr(CLIENT2)), addr(SERVER), PathStatus::Available) {
            opened.push(id);
        }
        for id in c.paths() {
            let s = c.path_stats(id).unwrap();
            if id != PathId(0) && s.validated && !s.abandoned {
                c.close_path(now, id, VarInt::ZERO).unwrap();
            }
        }
        if let Some(s) = p.server.conns.values().next() {
            most = most.max(s.paths.len());
            assert!(s.paths.len() <= 3, "server holds {} paths", s.paths.len());
            assert!(s.paths.ids.abandoned_ranges() <= 2);
        }
        opened.len() >= 12
    });
    assert!(ok, "the churn stalled after paths {opened:?}");
    assert_eq!(most, 3, "the cap was never reached");
    assert!(lost(&p.client.events).is_none() && lost(&p.server.events).is_none());
}

/// `path_validations: 1` on the client: a second open_path while the first path is being validated is
/// refused with `ValidationsInProgress`, and succeeds once the first validation ended.
#[test]
fn open_path_beyond_the_path_validation_limit_is_refused() {
    let (cc, sc) = super::harness::configs(None, TransportConfig::default());
    let cc = ClientConfig {
        transport: TransportConfig {
            limits: ConnectionLimits {
                path_validations: 1,
                ..ConnectionLimits::default()
            },
            ..cc.transport
        },
        ..cc
    };
    let mut p = Pair::from_configs(cc, sc, 202);
    p.client_extra_addrs.push(addr(CLIENT2));
    p.handshake();
    p.run_for(Duration::from_millis(50));
    let now = p.now;
    let c = p.client.conn();
    let first = c.open_path(now, Some(addr(CLIENT2)), addr(SERVER), PathStatus::Available);
    assert_eq!(first, Ok(PathId(1)));
    assert_eq!(
        c.open_path(now, Some(addr(CLIENT2)), addr(SERVER), PathStatus::Available),
        Err(OpenPathError::ValidationsInProgress(1))
    );
    assert!(p.drive_until(Duration::from_secs(2), |p| {
        p.client.conn().path_stats(PathId(1)).is_some_and(|s| s.validated)
    }));
    let now = p.now;
    assert_eq!(
        p.client
            .conn()
            .open_path(now, Some(addr(CLIENT2)), addr(SERVER), PathStatus::Available),
        Ok(PathId(2))
    );
}

/// `path_validations: 1` on the server: a client opening three paths at once never makes it validate more
/// than one at a time (the others wait for a slot, answering the client's PATH_CHALLENGEs meanwhile), yet
/// every path ends validated on both sides.
#[test]
fn a_server_validates_at_most_path_validations_new_paths_at_once() {
    let limits = ConnectionLimits {
        path_validations: 1,
        ..ConnectionLimits::default()
    };
    let mut p = server_limited(limits, 203);
    let now = p.now;
    for want in 1..=3u32 {
        let got = p
            .client
            .conn()
            .open_path(now, Some(addr(CLIENT2)), addr(SERVER), PathStatus::Available);
        assert_eq!(got, Ok(PathId(want)));
    }
    let ok = p.drive_until(Duration::from_secs(20), |p| {
        let s = p.server.conn();
        assert!(
            s.validations_in_flight() <= 1,
            "{} in flight",
            s.validations_in_flight()
        );
        (1..=3).all(|i| {
            let v = |c: &mut crate::proto::connection::Connection| {
                c.path_stats(PathId(i))
                    .is_some_and(|st| st.validated && !st.abandoned)
            };
            v(p.server.conn()) && v(p.client.conn())
        })
    });
    let st: Vec<_> = [&mut p.client, &mut p.server]
        .into_iter()
        .map(|n| {
            let c = n.conn();
            c.paths().into_iter().map(|i| c.path_stats(i)).collect::<Vec<_>>()
        })
        .collect();
    assert!(ok, "not every path was validated: {st:#?} {:?}", p.client.events);
}

/// `path_challenges: 2`: a validation that goes unanswered resends PATH_CHALLENGE with fresh data each time
/// (RFC 9000 §8.2.1) but remembers only the 2 newest values; a PATH_RESPONSE echoing a forgotten one does not
/// validate, one echoing a remembered one does (RFC 9000 §8.2.2). The client migrates to another port whose
/// datagrams never arrive (same IP: the RTT estimate is kept, so the PTO stays short): its validation resends
/// every PTO (doubling) until the validation timer, about 3 s.
#[test]
fn path_challenge_data_remembered_per_validation_is_bounded() {
    let transport = TransportConfig {
        limits: ConnectionLimits {
            path_challenges: 2,
            ..ConnectionLimits::default()
        },
        ..TransportConfig::default()
    };
    let mut p = Pair::new(None, transport, 204);
    p.handshake();
    p.run_for(Duration::from_millis(500));
    let new_port = addr("10.0.0.1:4999");
    p.client_extra_addrs.push(new_port);
    p.dead_sources.push(new_port);
    let now = p.now;
    p.client.conn().migrate(now, new_port).unwrap();
    let id = PathId(0);
    let challenge = |p: &mut Pair| {
        p.client.conn().paths[&id]
            .challenge
            .as_ref()
            .map(|c| c.data.clone())
    };
    let first = challenge(&mut p).unwrap()[0];
    let mut sent = std::collections::BTreeSet::new();
    p.drive_until(Duration::from_secs(10), |p| {
        match challenge(p) {
            Some(d) => {
                assert!(d.len() <= 2, "{} challenge values remembered", d.len());
                sent.extend(d);
            }
            None => return true,
        }
        sent.len() >= 4
    });
    assert!(sent.len() >= 4, "only {} challenges were sent", sent.len());
    let remembered = challenge(&mut p).expect("still validating");
    assert_eq!(remembered.len(), 2);
    assert!(!remembered.contains(&first));
    let now = p.now;
    let validations = p.client.conn().paths[&id].validations;
    p.client.conn().on_path_response(now, first);
    assert_eq!(p.client.conn().paths[&id].validations, validations);
    p.client.conn().on_path_response(now, remembered[0]);
    assert_eq!(p.client.conn().paths[&id].validations, validations + 1);
}
