//! Path validation and connection migration (RFC 9000 §8.2, §9): NAT rebinding, client migration,
//! disable_active_migration, spoofed source addresses, PATH_CHALLENGE echo.

use std::net::SocketAddr;
use std::time::Duration;

use super::harness::{Pair, addr};
use super::transfer::{Flow, pattern, pump, sha};
use crate::cc::PathId;
use crate::proto::connection::{MigrateError, TransportConfig};
use crate::proto::frame::Frame;

const NAT: &str = "10.0.0.1:40000";
const NEW_IP: &str = "10.0.9.9:4433";
const ATTACKER: &str = "192.0.2.66:666";

/// A bidirectional transfer of `size` bytes each way; `at` runs once when the server has received `trigger`
/// bytes. Checks both directions with SHA-256.
pub(super) fn transfer_with(p: &mut Pair, size: usize, trigger: usize, mut at: impl FnMut(&mut Pair)) {
    let a = pattern(size, 1);
    let b = pattern(size, 2);
    let mut fc = Flow::default();
    let mut fs = Flow::default();
    let mut fired = false;
    let ok = p.drive_until(Duration::from_secs(60), |p| {
        pump(p, true, &mut fc, &a);
        if p.server.conns.len() == 1 {
            pump(p, false, &mut fs, &b);
        }
        if !fired && fs.received.len() >= trigger {
            fired = true;
            at(p);
        }
        fc.fin_seen && fs.fin_seen
    });
    assert!(fired, "trigger never reached");
    assert!(
        ok,
        "transfer incomplete: client got {} server got {}",
        fc.received.len(),
        fs.received.len()
    );
    assert_eq!(sha(&fs.received), sha(&a), "client → server data corrupted");
    assert_eq!(sha(&fc.received), sha(&b), "server → client data corrupted");
}

fn server_path(p: &mut Pair) -> (SocketAddr, bool, u64) {
    let c = p.server.conn();
    let path = &c.paths[&PathId(0)];
    (path.remote, path.validated, path.validations)
}

#[test]
fn nat_rebinding_mid_transfer_completes_and_validates_new_address() {
    let mut p = Pair::new(None, TransportConfig::default(), 11);
    p.handshake();
    let cwnd_before = std::cell::Cell::new(0);
    transfer_with(&mut p, 400_000, 100_000, |p| {
        cwnd_before.set(p.server.conn().path_stats(PathId(0)).unwrap().cwnd);
        p.client_nat = Some(addr(NAT));
    });
    let (remote, validated, validations) = server_path(&mut p);
    assert_eq!(remote, addr(NAT));
    assert!(validated, "server did not validate the rebound address");
    assert!(validations >= 1);
    assert!(!p.server.conn().path_validation_pending(PathId(0)));
}

#[test]
fn client_migration_to_new_local_address() {
    let mut p = Pair::new(None, TransportConfig::default(), 12);
    p.handshake();
    let cid_before = p.client.conn().remote_cid(PathId(0)).unwrap();
    let mut result = None;
    transfer_with(&mut p, 400_000, 100_000, |p| {
        p.client.addr = addr(NEW_IP);
        let now = p.now;
        result = Some(p.client.conn().migrate(now, addr(NEW_IP)));
    });
    assert_eq!(result, Some(Ok(())));
    assert_ne!(
        p.client.conn().remote_cid(PathId(0)).unwrap(),
        cid_before,
        "RFC 9000 §9.5: new CID"
    );
    let (remote, validated, _) = server_path(&mut p);
    assert_eq!(remote, addr(NEW_IP));
    assert!(validated, "server did not validate the client's new address");
    let client_path = &p.client.conn().paths[&PathId(0)];
    assert!(
        client_path.validations >= 1,
        "client did not validate its new path"
    );
    assert_eq!(client_path.local, Some(addr(NEW_IP)));
}

#[test]
fn disable_active_migration_refuses_migrate() {
    let transport = TransportConfig {
        disable_active_migration: true,
        ..TransportConfig::default()
    };
    let mut p = Pair::new(None, transport, 13);
    p.handshake();
    let now = p.now;
    assert!(p.client.conn().peer_disabled_active_migration());
    assert_eq!(
        p.client.conn().migrate(now, addr(NEW_IP)),
        Err(MigrateError::Disabled)
    );
    // NAT rebinding is still handled (it is not active migration).
    transfer_with(&mut p, 100_000, 20_000, |p| p.client_nat = Some(addr(NAT)));
    assert_eq!(server_path(&mut p).0, addr(NAT));
}

#[test]
fn migrate_before_handshake_confirmed_is_refused() {
    let mut p = Pair::new(None, TransportConfig::default(), 14);
    let now = p.now;
    assert_eq!(
        p.client.conn().migrate(now, addr(NEW_IP)),
        Err(MigrateError::HandshakeNotConfirmed)
    );
}

#[test]
fn spoofed_source_does_not_redirect_the_path() {
    let mut p = Pair::new(None, TransportConfig::default(), 15);
    p.handshake();
    transfer_with(&mut p, 400_000, 100_000, |p| p.spoof_next = Some(addr(ATTACKER)));
    let (remote, validated, _) = server_path(&mut p);
    assert_eq!(
        remote,
        addr(super::harness::CLIENT),
        "path must return to the genuine address"
    );
    assert!(validated);
    // RFC 9000 §9.3.1 / §8.1: at most 3× what the spoofed address sent reached it.
    let to_attacker = p.server_sent_to.get(&addr(ATTACKER)).copied().unwrap_or(0);
    assert!(
        to_attacker > 0,
        "the spoofed packet never moved the path (test did not exercise anything)"
    );
    assert!(
        to_attacker <= 3 * 1200,
        "sent {to_attacker} bytes to an unvalidated address"
    );
}

#[test]
fn spoofed_source_alone_reverts_after_validation_timeout() {
    let mut p = Pair::new(
        None,
        TransportConfig {
            // Only the packets the test injects move the path (a path-MTU probe is a non-probing packet).
            mtu_discovery: None,
            ..TransportConfig::default()
        },
        16,
    );
    p.handshake();
    // A spoofed copy of one client packet; the genuine copy then arrives as a duplicate and the client stays
    // silent afterwards.
    let s = p.client.conn().open_bi().unwrap();
    p.client.conn().write(s, bytes::Bytes::from_static(b"x")).unwrap();
    p.spoof_next = Some(addr(ATTACKER));
    p.run_for(Duration::from_millis(10));
    let (remote, validated, _) = server_path(&mut p);
    assert_eq!(
        remote,
        addr(ATTACKER),
        "a non-probing packet with the largest number moves the path"
    );
    assert!(!validated);
    // The client goes silent (everything is lost): only the validation timer can restore the path.
    p.loss = 1.0;
    let ok = p.drive_until(Duration::from_secs(10), |p| {
        server_path(p).0 == addr(super::harness::CLIENT)
    });
    assert!(ok, "the path did not return to the validated address");
    assert!(server_path(&mut p).1);
    let to_attacker = p.server_sent_to.get(&addr(ATTACKER)).copied().unwrap_or(0);
    assert!(
        to_attacker <= 3 * 1200,
        "sent {to_attacker} bytes to an unvalidated address"
    );
}

#[test]
fn probing_packet_from_new_address_does_not_move_the_path() {
    let mut p = Pair::new(
        None,
        TransportConfig {
            // Only the packets the test injects move the path (a path-MTU probe is a non-probing packet).
            mtu_discovery: None,
            ..TransportConfig::default()
        },
        17,
    );
    p.handshake();
    p.run_for(Duration::from_millis(100));
    // A PATH_CHALLENGE-only packet from a new address: answered there, path unchanged.
    let mut raw = Vec::new();
    Frame::PathChallenge([7; 8]).encode(&mut raw);
    p.client.conn().injected.one_rtt.push(raw);
    p.client_nat = Some(addr(NAT));
    p.run_for(Duration::from_millis(15));
    assert_eq!(server_path(&mut p).0, addr(super::harness::CLIENT));
    assert!(
        p.server_sent_to.get(&addr(NAT)).copied().unwrap_or(0) > 0,
        "no PATH_RESPONSE to the prober"
    );
}

#[test]
fn path_challenge_is_answered_with_the_same_data() {
    let mut p = Pair::new(None, TransportConfig::default(), 18);
    p.handshake();
    p.run_for(Duration::from_millis(100));
    let now = p.now;
    p.server.conn().start_path_validation(now, PathId(0));
    let data = p.server.conn().paths[&PathId(0)]
        .challenge
        .as_ref()
        .unwrap()
        .data
        .clone();
    assert_eq!(data.len(), 1);
    let ok = p.drive_until(Duration::from_secs(5), |p| {
        p.server.conn().paths[&PathId(0)].validations == 1
    });
    assert!(ok, "PATH_RESPONSE did not echo the challenge");
    assert!(!p.server.conn().path_validation_pending(PathId(0)));
}

#[test]
fn path_response_with_other_data_does_not_validate() {
    let mut p = Pair::new(None, TransportConfig::default(), 19);
    p.handshake();
    p.run_for(Duration::from_millis(100));
    let now = p.now;
    p.server.conn().start_path_validation(now, PathId(0));
    // Lose the challenge; answer with made-up data instead.
    p.server
        .conn()
        .paths
        .get_mut(&PathId(0))
        .unwrap()
        .challenge
        .as_mut()
        .unwrap()
        .pending = false;
    let mut raw = Vec::new();
    Frame::PathResponse([9; 8]).encode(&mut raw);
    p.client.conn().injected.one_rtt.push(raw);
    p.run_for(Duration::from_millis(50));
    assert_eq!(p.server.conn().paths[&PathId(0)].validations, 0);
    assert!(p.server.conn().path_validation_pending(PathId(0)));
}

#[test]
fn path_challenge_is_resent_until_the_validation_timer() {
    let mut p = Pair::new(None, TransportConfig::default(), 20);
    p.handshake();
    p.run_for(Duration::from_millis(100));
    let now = p.now;
    // The client can no longer be reached: every challenge is lost.
    p.client_nat = Some(addr(NAT));
    p.server.conn().start_path_validation(now, PathId(0));
    p.run_for(Duration::from_secs(2));
    let c = p.server.conn().paths[&PathId(0)].challenge.clone();
    if let Some(c) = c {
        assert!(c.data.len() >= 2, "no retransmitted PATH_CHALLENGE with new data");
    }
    p.run_for(Duration::from_secs(10));
    assert!(
        !p.server.conn().path_validation_pending(PathId(0)),
        "validation timer never fired"
    );
}

#[test]
fn migrate_without_spare_cid_is_refused_rfc9000_9_5() {
    let mut p = Pair::new(None, TransportConfig::default(), 21);
    p.handshake();
    p.run_for(Duration::from_millis(100));
    // Use up every spare connection ID of the server without letting replacements arrive.
    while p.client.conn().rotate_remote_cid(PathId(0)) {}
    let now = p.now;
    assert_eq!(
        p.client.conn().migrate(now, addr(NEW_IP)),
        Err(MigrateError::NoConnectionId)
    );
}

/// RFC 9000 §9.4: RTT and congestion state reset on a new IP address, kept on a port-only change.
fn rtt_after_rebinding(to: &str, seed: u64) -> Duration {
    let mut p = Pair::new(None, TransportConfig::default(), seed);
    p.handshake();
    p.run_for(Duration::from_millis(200));
    assert!(p.server.conn().path_stats(PathId(0)).unwrap().srtt < Duration::from_millis(100));
    p.client_nat = Some(addr(to));
    let s = p.client.conn().open_bi().unwrap();
    p.client
        .conn()
        .write(s, bytes::Bytes::from_static(b"hello"))
        .unwrap();
    p.run_for(Duration::from_millis(11));
    assert_eq!(server_path(&mut p).0, addr(to));
    p.server.conn().path_stats(PathId(0)).unwrap().srtt
}

#[test]
fn rebinding_resets_rtt_only_when_the_ip_changes() {
    assert!(
        rtt_after_rebinding(NAT, 22) < Duration::from_millis(100),
        "port-only change kept RTT"
    );
    assert!(
        rtt_after_rebinding(NEW_IP, 23) >= Duration::from_millis(300),
        "new IP resets RTT"
    );
}

const PREFERRED: &str = "10.0.0.3:4443";

fn preferred_config() -> TransportConfig {
    let std::net::SocketAddr::V4(v4) = addr(PREFERRED) else {
        unreachable!()
    };
    TransportConfig {
        preferred_address: Some(crate::proto::connection::PreferredAddressConfig {
            ipv4: Some(v4),
            ipv6: None,
        }),
        ..TransportConfig::default()
    }
}

fn client_remote(p: &mut Pair) -> SocketAddr {
    p.client.conn().paths[&PathId(0)].remote
}

#[test]
fn client_moves_to_the_servers_preferred_address_rfc9000_9_6() {
    let mut p = Pair::new(None, preferred_config(), 31);
    p.server_extra_addrs.push(addr(PREFERRED));
    p.handshake();
    let pa = p.client.conn().peer_preferred_address().cloned().unwrap();
    let cid_before = p.client.conn().remote_cid(PathId(0)).unwrap();
    transfer_with(&mut p, 600_000, 300_000, |_| {});
    assert_eq!(client_remote(&mut p), addr(PREFERRED));
    // RFC 9000 §9.6.1: "using the new connection ID" — the one from the transport parameter (sequence 1).
    let cid_after = p.client.conn().remote_cid(PathId(0)).unwrap();
    assert_ne!(cid_after, cid_before);
    assert_eq!(cid_after, pa.connection_id);
    assert!(p.client.events.iter().any(|(_, e)| matches!(
        e,
        crate::proto::connection::Event::PeerAddressChanged { remote, .. } if *remote == addr(PREFERRED)
    )));
    // RFC 9000 §9.6.2: the server validated the path from its preferred address and now sends from there.
    let server_path = &p.server.conn().paths[&PathId(0)];
    assert_eq!(server_path.local, Some(addr(PREFERRED)));
    assert!(server_path.validated);
    assert!(p.server_sent_from.get(&addr(PREFERRED)).copied().unwrap_or(0) > 100_000);
    assert!(!p.client.conn().alt_probe_pending(PathId(0)));
    assert!(!p.server.conn().alt_probe_pending(PathId(0)));
}

#[test]
fn unreachable_preferred_address_keeps_the_original_path_rfc9000_9_6_1() {
    let mut p = Pair::new(None, preferred_config(), 32);
    p.server_extra_addrs.push(addr(PREFERRED));
    p.blackholed.push(addr(PREFERRED));
    p.handshake();
    assert!(
        p.client.conn().alt_probe_pending(PathId(0)),
        "no probe of the preferred address"
    );
    transfer_with(&mut p, 300_000, 100_000, |_| {});
    let ok = p.drive_until(Duration::from_secs(10), |p| {
        !p.client.conn().alt_probe_pending(PathId(0))
    });
    assert!(ok, "the probe never gave up");
    // "If path validation fails, the client MUST continue sending all future packets to the server's original
    // IP address."
    assert_eq!(client_remote(&mut p), addr(super::harness::SERVER));
    // Lost probes are not congestion signals for the path in use.
    let cc = p.client.conn().path_stats(PathId(0)).unwrap().cc.unwrap();
    assert_eq!(
        cc.ssthresh, None,
        "a lost probe reduced the window of the path in use"
    );
}

#[test]
fn client_can_decline_the_preferred_address() {
    let mut transport = preferred_config();
    transport.use_preferred_address = false;
    let mut p = Pair::new(None, transport, 33);
    p.server_extra_addrs.push(addr(PREFERRED));
    p.handshake();
    assert!(p.client.conn().peer_preferred_address().is_some());
    transfer_with(&mut p, 100_000, 50_000, |_| {});
    assert_eq!(client_remote(&mut p), addr(super::harness::SERVER));
    assert_eq!(p.server_sent_from.get(&addr(PREFERRED)), None);
}

#[test]
fn apparent_migration_challenges_the_previous_address_rfc9000_9_3_3() {
    let mut p = Pair::new(
        None,
        TransportConfig {
            // Only the packets the test injects move the path (a path-MTU probe is a non-probing packet).
            mtu_discovery: None,
            ..TransportConfig::default()
        },
        34,
    );
    p.handshake();
    let s = p.client.conn().open_bi().unwrap();
    p.client.conn().write(s, bytes::Bytes::from_static(b"x")).unwrap();
    p.spoof_next = Some(addr(ATTACKER));
    p.run_for(Duration::from_millis(10));
    assert_eq!(server_path(&mut p).0, addr(ATTACKER));
    // "In response to an apparent migration, endpoints MUST validate the previously active path using a
    // PATH_CHALLENGE frame."
    let alt = p.server.conn().paths[&PathId(0)]
        .alt
        .clone()
        .expect("no challenge of the old path");
    assert_eq!(alt.remote, addr(super::harness::CLIENT));
    let validations = server_path(&mut p).2;
    // The genuine client answers on its active path with a non-probing packet, which moves the server back.
    let ok = p.drive_until(Duration::from_secs(2), |p| {
        server_path(p).0 == addr(super::harness::CLIENT) && !p.server.conn().alt_probe_pending(PathId(0))
    });
    assert!(ok, "the server did not return to the genuine address");
    assert!(
        server_path(&mut p).2 > validations,
        "the old path's challenge was not answered"
    );
}
