//! Cases (a)–(f): negotiation, one path, a second path, PATH_ABANDON, PATH_STATUS, CID rotation.

use super::*;

// ----- (a) negotiation -----

fn negotiation(role: Role) {
    let mut w = World::new(role, 1);
    w.handshake();
    assert!(w.mp().multipath(), "mpquic did not negotiate multipath");
    assert!(w.noq().multipath(), "noq did not negotiate multipath");
    // Both sides stay up while the post-handshake frames (PATH_NEW_CONNECTION_ID, PATH_ACK) flow.
    w.run_for(Duration::from_millis(500));
    assert_eq!(w.mp().paths(), vec![0]);
}

both_roles!(mpc_multipath_negotiated, noqc_multipath_negotiated, negotiation);

// ----- (b) one path -----

fn single_path(role: Role) {
    let mut w = World::new(role, 2);
    w.handshake();
    transfer(&mut w, MB2, 0, |_| {});
    report(&mut w, "single path");
    assert_eq!(w.sent(CLIENT2, SERVER), 0);
    assert_eq!(w.sent(SERVER, CLIENT2), 0);
    assert!(w.sent(CLIENT, SERVER) > MB2 as u64);
    assert!(w.sent(SERVER, CLIENT) > MB2 as u64);
}

both_roles!(mpc_single_path_transfer, noqc_single_path_transfer, single_path);

// ----- (c) a second path -----

fn second_path(role: Role) {
    let mut w = World::new(role, 3);
    w.handshake();
    let id = w.open_second_path();
    transfer(&mut w, MB2, 0, |_| {});
    report(&mut w, "second path");
    let (sent, received) = w.mp().path_bytes(id).expect("mpquic has no state for path 1");
    assert!(
        sent > 0 && received > 0,
        "mpquic path 1: sent {sent}, received {received}"
    );
    // Whatever the schedulers did, the second 4-tuple carried traffic both ways.
    assert!(w.sent(CLIENT2, SERVER) > 0 && w.sent(SERVER, CLIENT2) > 0);
}

both_roles!(
    mpc_second_path_validated_and_used,
    noqc_second_path_validated_and_used,
    second_path
);

// ----- (d) PATH_ABANDON mid-transfer -----

fn abandon(role: Role, by_client: bool) {
    let mut w = World::new(role, 4);
    w.handshake();
    let id = w.open_second_path();
    transfer(&mut w, MB2, 500_000, |w| {
        let now = w.now;
        let p = if by_client {
            w.client.as_mut()
        } else {
            w.server.as_mut()
        };
        p.close_path(now, id)
            .unwrap_or_else(|e| panic!("{} close_path: {e}", p.name()));
    });
    report(&mut w, "abandon");
    let ok = w.drive_until(Duration::from_secs(2), |w| {
        w.client.saw_abandoned(id) && w.server.saw_abandoned(id)
    });
    assert!(
        ok,
        "abandonment not seen by both: client {}, server {}",
        w.client.saw_abandoned(id),
        w.server.saw_abandoned(id)
    );
    // Both sides drop the path state after 3 PTO and the connection stays up on path 0.
    w.run_for(Duration::from_secs(2));
    assert_eq!(w.mp().paths(), vec![0], "mpquic kept the abandoned path");
    let before = w.sent(CLIENT2, SERVER) + w.sent(SERVER, CLIENT2);
    transfer(&mut w, 100_000, 0, |_| {});
    assert_eq!(
        w.sent(CLIENT2, SERVER) + w.sent(SERVER, CLIENT2),
        before,
        "traffic on the abandoned path"
    );
}

both_roles!(
    mpc_client_abandons_path_mid_transfer,
    noqc_client_abandons_path_mid_transfer,
    |r| abandon(r, true)
);

both_roles!(
    mpc_server_abandons_path_mid_transfer,
    noqc_server_abandons_path_mid_transfer,
    |r| abandon(r, false)
);

// ----- (e) PATH_STATUS -----

/// noq marks path 1 backup; mpquic records the peer's status (mpquic cannot send PATH_STATUS: no API).
fn noq_sends_backup(role: Role) {
    let mut w = World::new(role, 5);
    w.handshake();
    let id = w.open_second_path();
    w.noq().set_backup(id).unwrap();
    let ok = w.drive_until(Duration::from_secs(1), |w| w.mp().peer_says_backup(id));
    assert!(ok, "mpquic did not take PATH_STATUS_BACKUP into account");
    assert!(w.noq_frames().1.path_status_backup >= 1);
    // With path 0 alive, mpquic's scheduler keeps data off the backup path: what mpquic sends there during a
    // 500 kB transfer is acknowledgements of noq's packets on it, if any, at most.
    let (mp_sent_before, _) = w.mp().path_bytes(id).unwrap();
    transfer(&mut w, 500_000, 0, |_| {});
    report(&mut w, "backup");
    let (mp_sent_after, _) = w.mp().path_bytes(id).unwrap();
    assert!(
        mp_sent_after - mp_sent_before < 50_000,
        "mpquic sent {} bytes on the backup path",
        mp_sent_after - mp_sent_before
    );
}

both_roles!(
    mpc_noq_server_marks_path_backup,
    noqc_noq_client_marks_path_backup,
    noq_sends_backup
);

/// mpquic marks path 1 backup with PATH_STATUS_BACKUP: noq records it, and mpquic's own scheduler keeps its
/// data off that path. (The status is advisory, draft-21 §3: noq 1.4 still schedules its own data on a path
/// its peer marked backup, so only mpquic's direction is checked.)
fn mpquic_sends_backup(role: Role) {
    let mut w = World::new(role, 15);
    w.handshake();
    let id = w.open_second_path();
    w.mp().set_backup(id).unwrap();
    let ok = w.drive_until(Duration::from_secs(1), |w| w.noq().peer_says_backup(id));
    assert!(ok, "noq did not take mpquic's PATH_STATUS_BACKUP into account");
    assert!(w.noq_frames().0.path_status_backup >= 1);
    let (mp_sent_before, _) = w.mp().path_bytes(id).unwrap();
    transfer(&mut w, 500_000, 0, |_| {});
    report(&mut w, "backup set by mpquic");
    let (mp_sent_after, _) = w.mp().path_bytes(id).unwrap();
    assert!(
        mp_sent_after - mp_sent_before < 50_000,
        "mpquic sent {} bytes on the path it marked backup",
        mp_sent_after - mp_sent_before
    );
}

both_roles!(
    mpc_mpquic_client_marks_path_backup,
    noqc_mpquic_server_marks_path_backup,
    mpquic_sends_backup
);

// ----- (f) connection-ID rotation on path 1 -----

fn cid_rotation(role: Role) {
    let mut w = World::new(role, 6);
    w.handshake();
    let id = w.open_second_path();
    for round in 0..3 {
        let c = w.mpp().conn_mut().unwrap();
        let before = c.remote_cid(PathId(id)).unwrap();
        assert!(
            c.rotate_remote_cid(PathId(id)),
            "round {round}: no spare connection ID from noq for path 1"
        );
        assert!(
            c.rotate_local_cids(PathId(id)),
            "round {round}: mpquic could not issue new CIDs"
        );
        assert_ne!(c.remote_cid(PathId(id)).unwrap(), before);
        transfer(&mut w, 300_000, 0, |_| {});
    }
    report(&mut w, "cid rotation");
    let (rx, _) = w.noq_frames();
    assert!(
        rx.path_retire_connection_id >= 3,
        "noq saw {} PATH_RETIRE_CONNECTION_ID",
        rx.path_retire_connection_id
    );
    let (sent, received) = w.mp().path_bytes(id).unwrap();
    assert!(sent > 0 && received > 0);
}

both_roles!(
    mpc_cid_rotation_on_second_path,
    noqc_cid_rotation_on_second_path,
    cid_rotation
);
