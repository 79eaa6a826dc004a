//! Stateless reset across stacks (RFC 9000 §10.3): the mpquic server restarts with the same static secret,
//! has forgotten the connection, and answers the noq client's next packet with a Stateless Reset whose token
//! it recomputes from the connection ID (AES-CMAC under the key derived from the secret); noq recognises it
//! by the token mpquic issued during the handshake and ends the connection with a reset.

use super::*;

#[test]
fn noqc_recognises_the_stateless_reset_of_a_restarted_mpquic_server() {
    let seed = 21;
    let mut w = World::new(Role::NoqClient, seed);
    w.handshake();
    w.run_for(Duration::from_millis(50));
    assert!(w.noq().closed().is_none());
    // The restart: a fresh endpoint from the same seed, hence the same reset key (World::new seeds the server
    // with `seed ^ 0x5555`), with no connection.
    let addrs = w.mpp().addrs.clone();
    let c = certs();
    *w.mpp() = MpPeer::server(seed ^ 0x5555, addrs, &c, &|_| {});
    // The client sends on its connection; the server can only answer with a Stateless Reset.
    let before = w.sent(SERVER, CLIENT);
    let id = w.noq().open_bi().expect("a stream");
    assert_eq!(w.noq().write(id, b"anyone there?"), 13);
    w.closing = true; // the end of the connection is expected
    let ok = w.drive_until(Duration::from_secs(2), |w| w.noq().closed().is_some());
    assert!(ok, "noq's connection did not end");
    let reason = w.noq().closed().unwrap();
    // noq_proto::ConnectionError::Reset: "the peer has sent a stateless reset".
    assert_eq!(reason, "Reset", "noq ended the connection for another reason");
    assert!(w.sent(SERVER, CLIENT) > before, "the server sent nothing");
}

/// The same restart with a different secret: the reset's token does not match, noq does not take the
/// datagram for a reset and the connection is still open after it (it ends later by idle timeout, not here).
#[test]
fn noqc_ignores_a_reset_from_a_server_with_another_secret() {
    let seed = 22;
    let mut w = World::new(Role::NoqClient, seed);
    w.handshake();
    w.run_for(Duration::from_millis(50));
    let addrs = w.mpp().addrs.clone();
    let c = certs();
    *w.mpp() = MpPeer::server(seed ^ 0xaaaa, addrs, &c, &|_| {});
    let before = w.sent(SERVER, CLIENT);
    let id = w.noq().open_bi().expect("a stream");
    assert_eq!(w.noq().write(id, b"anyone there?"), 13);
    // Running checks after every step that neither connection closed.
    w.run_for(Duration::from_millis(500));
    assert_eq!(w.noq().closed(), None);
    // Not vacuous: the restarted server did answer (with resets under its own key).
    assert!(w.sent(SERVER, CLIENT) > before, "the server sent nothing");
}
