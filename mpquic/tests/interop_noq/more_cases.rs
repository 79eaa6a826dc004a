//! Beyond the basic cases: loss, abandoning path 0, key updates, path-ID churn, a second path on the same
//! 4-tuple, NAT rebinding on path 1, a path whose validation fails, idle then close.

use super::*;

// ----- more: loss, abandoning path 0, key update, path-ID churn, a second path on the same 4-tuple -----

/// Two paths and 2 % random loss in both directions: PATH_ACK ranges with gaps, retransmission across paths.
fn lossy_two_paths(role: Role) {
    let mut w = World::new(role, 7);
    w.handshake();
    let id = w.open_second_path();
    w.loss = 0.02;
    transfer(&mut w, 1_000_000, 0, |_| {});
    report(&mut w, "2% loss");
    assert!(w.mp().lost() > 0 && w.noq().lost() > 0, "the link lost nothing?");
    let (sent, received) = w.mp().path_bytes(id).unwrap();
    assert!(sent > 0 && received > 0);
}

both_roles!(mpc_two_paths_with_loss, noqc_two_paths_with_loss, lossy_two_paths);

/// Path 0 (the handshake path) is abandoned mid-transfer; the transfer completes on path 1, and a second one
/// runs on path 1 alone.
fn abandon_path0(role: Role, by_client: bool) {
    let mut w = World::new(role, 8);
    w.handshake();
    let id = w.open_second_path();
    transfer(&mut w, 1_000_000, 300_000, |w| {
        let now = w.now;
        let p = if by_client {
            w.client.as_mut()
        } else {
            w.server.as_mut()
        };
        p.close_path(now, 0)
            .unwrap_or_else(|e| panic!("{} close_path(0): {e}", p.name()));
    });
    report(&mut w, "abandon path 0");
    let ok = w.drive_until(Duration::from_secs(2), |w| {
        w.client.saw_abandoned(0) && w.server.saw_abandoned(0)
    });
    assert!(ok, "abandonment of path 0 not seen by both");
    w.run_for(Duration::from_secs(2));
    assert_eq!(w.mp().paths(), vec![id], "mpquic paths after abandoning path 0");
    let before = w.sent(CLIENT, SERVER) + w.sent(SERVER, CLIENT);
    transfer(&mut w, 300_000, 0, |_| {});
    assert_eq!(
        w.sent(CLIENT, SERVER) + w.sent(SERVER, CLIENT),
        before,
        "traffic on the abandoned path 0"
    );
}

both_roles!(mpc_client_abandons_path0, noqc_client_abandons_path0, |r| {
    abandon_path0(r, true)
});

both_roles!(mpc_server_abandons_path0, noqc_server_abandons_path0, |r| {
    abandon_path0(r, false)
});

/// A 1-RTT key update in the middle of a transfer on two paths (the path ID is in the nonce of both
/// generations), initiated by mpquic or by noq.
fn key_update(role: Role, by_mp: bool) {
    let mut w = World::new(role, 9);
    w.handshake();
    let id = w.open_second_path();
    let gen_before = w.mpp().conn().unwrap().key_generation();
    transfer(&mut w, 1_000_000, 300_000, |w| {
        if by_mp {
            assert!(w.mpp().conn_mut().unwrap().force_key_update());
        } else {
            w.noqp().conn_mut().unwrap().force_key_update();
        }
    });
    report(&mut w, "key update");
    assert!(
        w.mpp().conn().unwrap().key_generation() > gen_before,
        "mpquic's key generation did not move"
    );
    let (sent, received) = w.mp().path_bytes(id).unwrap();
    assert!(sent > 0 && received > 0);
}

both_roles!(mpc_key_update_by_mpquic, noqc_key_update_by_mpquic, |r| {
    key_update(r, true)
});

both_roles!(mpc_key_update_by_noq, noqc_key_update_by_noq, |r| key_update(
    r, false
));

/// The client opens, uses and abandons a path six times: path IDs 1..=6 go beyond initial_max_path_id (4),
/// so each side must raise its limit with MAX_PATH_ID as path IDs are used up.
fn path_churn(role: Role) {
    let mut w = World::new(role, 10);
    w.handshake();
    w.run_for(Duration::from_millis(50));
    for expected in 1..=6u32 {
        let now = w.now;
        let id = w
            .client
            .open_path(now, addr(CLIENT2), addr(SERVER))
            .unwrap_or_else(|e| {
                report(&mut w, "churn");
                panic!("{} client could not open path {expected}: {e}", w.client.name())
            });
        assert_eq!(id, expected);
        let ok = w.drive_until(Duration::from_secs(3), |w| {
            w.client.path_validated(id) && w.server.path_validated(id)
        });
        assert!(ok, "path {id} not validated");
        transfer(&mut w, 100_000, 0, |_| {});
        let now = w.now;
        w.client.close_path(now, id).unwrap();
        let ok = w.drive_until(Duration::from_secs(2), |w| {
            w.client.saw_abandoned(id) && w.server.saw_abandoned(id)
        });
        assert!(ok, "abandonment of path {id} not seen by both");
        w.run_for(Duration::from_secs(1));
    }
    report(&mut w, "churn");
}

both_roles!(
    mpc_path_ids_beyond_initial_max,
    noqc_path_ids_beyond_initial_max,
    path_churn
);

/// Path 1 uses the same 4-tuple as path 0 (draft-ietf-quic-multipath-21 §3: several paths may share a
/// 4-tuple; they differ by path ID).
fn same_tuple(role: Role) {
    let mut w = World::new(role, 11);
    w.handshake();
    w.run_for(Duration::from_millis(50));
    let now = w.now;
    let id = w
        .client
        .open_path(now, addr(CLIENT), addr(SERVER))
        .unwrap_or_else(|e| panic!("{} client could not open a path: {e}", w.client.name()));
    let ok = w.drive_until(Duration::from_secs(3), |w| {
        w.client.path_validated(id) && w.server.path_validated(id)
    });
    assert!(ok, "path {id} on path 0's 4-tuple not validated");
    transfer(&mut w, 1_000_000, 0, |_| {});
    report(&mut w, "same 4-tuple");
    let (sent, received) = w.mp().path_bytes(id).unwrap();
    assert!(sent > 0 && received > 0);
    assert_eq!(w.sent(CLIENT2, SERVER), 0);
}

both_roles!(
    mpc_second_path_on_same_tuple,
    noqc_second_path_on_same_tuple,
    same_tuple
);

/// A NAT in front of the client's second interface rebinds mid-transfer: path 1's 4-tuple changes
/// (draft-ietf-quic-multipath-21 §3: an RFC 9000 migration within that path ID). The server validates the new
/// address and the transfer completes.
fn rebinding_on_path1(role: Role) {
    let mut w = World::new(role, 12);
    w.handshake();
    let id = w.open_second_path();
    transfer(&mut w, 1_000_000, 300_000, |w| {
        w.nat.insert(addr(CLIENT2), addr(CLIENT2_NAT));
    });
    report(&mut w, "rebinding on path 1");
    assert!(
        w.sent(CLIENT2_NAT, SERVER) > 0,
        "nothing sent through the new mapping"
    );
    assert!(
        w.sent(SERVER, CLIENT2_NAT) > 0,
        "the server never answered on the rebound 4-tuple"
    );
    let before = w.sent(SERVER, CLIENT2_NAT);
    transfer(&mut w, 300_000, 0, |_| {});
    assert!(
        w.sent(SERVER, CLIENT2_NAT) > before,
        "the server does not use path 1 at its new address"
    );
    if role == Role::NoqClient {
        let s = w.mp().path_bytes(id);
        assert!(s.is_some());
        let remote = w.mpp().conn().unwrap().path_stats(PathId(id)).unwrap().remote;
        assert_eq!(remote, addr(CLIENT2_NAT), "mpquic server's path 1 remote");
    }
}

both_roles!(
    mpc_nat_rebinding_on_second_path,
    noqc_nat_rebinding_on_second_path,
    rebinding_on_path1
);

/// The client opens path 1 but the server's answers never reach `CLIENT2`: validation fails and the client
/// abandons the path (draft-ietf-quic-multipath-21 §3: "the client still sends PATH_ABANDON"); the connection
/// carries on over path 0.
fn validation_failure(role: Role) {
    // noq gives up on a path only through its path idle timeout (off by default). Only the noq client gets one:
    // a noq server would also abandon the idle path 0 and, with path 1 gone, end the connection.
    let mut w = match role {
        Role::NoqClient => World::with_noq(role, 13, |t| {
            t.default_path_max_idle_timeout(Some(Duration::from_secs(3)));
        }),
        Role::MpClient => World::new(role, 13),
    };
    w.handshake();
    w.run_for(Duration::from_millis(50));
    w.blackholed.push(addr(CLIENT2));
    let now = w.now;
    let id = w.client.open_path(now, addr(CLIENT2), addr(SERVER)).unwrap();
    let ok = w.drive_until(Duration::from_secs(10), |w| w.client.saw_abandoned(id));
    report(&mut w, "validation failure");
    assert!(ok, "{} client did not give up on path {id}", w.client.name());
    assert!(!w.client.path_validated(id));
    // The server learns of it (if it created the path at all) and forgets it after 3 PTO (of a path that
    // only ever saw backed-off probes: seconds).
    let ok = w.drive_until(Duration::from_secs(20), |w| w.mp().paths() == vec![0]);
    assert!(ok, "mpquic still holds the failed path: {:?}", w.mp().paths());
    assert!(w.noq_frames().0.path_abandon + w.noq_frames().1.path_abandon >= 1);
    transfer(&mut w, 200_000, 0, |_| {});
}

both_roles!(
    mpc_path_validation_failure,
    noqc_path_validation_failure,
    validation_failure
);

/// Two paths, 20 s of silence (under both idle timeouts), then a transfer; then mpquic closes the connection
/// and noq sees the application close.
fn idle_then_close(role: Role) {
    let mut w = World::new(role, 14);
    w.handshake();
    let id = w.open_second_path();
    w.run_for(Duration::from_secs(20));
    transfer(&mut w, 200_000, 0, |_| {});
    assert!(w.mp().paths().contains(&id), "path 1 was lost while idle");
    let now = w.now;
    w.closing = true;
    w.mpp()
        .conn_mut()
        .unwrap()
        .close(now, VarInt::from_u32(7), Bytes::from_static(b"bye"));
    w.run_for(Duration::from_millis(200));
    let why = w.noq().closed().expect("noq did not see the close");
    assert!(
        why.contains("ApplicationClosed") && why.contains('7'),
        "noq saw {why}"
    );
}

both_roles!(
    mpc_idle_then_application_close,
    noqc_idle_then_application_close,
    idle_then_close
);
