//! Validation of another 4-tuple for a path while the path keeps using its current one (RFC 9000 §8.2):
//! - the client's probe of the server's preferred address (RFC 9000 §9.6.1): once the handshake is confirmed,
//!   PATH_CHALLENGE to the preferred address of the current address family with a spare connection ID of
//!   path 0 (normally the preferred_address one, sequence 1); on success every later packet goes there with
//!   that connection ID, on failure the client stays where it is;
//! - the server's check of the previously active address after an apparent migration (RFC 9000 §9.3.3);
//! - the server's probe toward the client from its preferred address (RFC 9000 §9.6.2) before it sends
//!   non-probing packets from there.
//!
//! Probe datagrams carry one PATH_CHALLENGE padded to 1200 bytes (RFC 9000 §8.2.1) and stay out of the path's
//! congestion control and loss recovery: they test another route, and their retransmission is the
//! challenge's own timer. One probe per path: a newer one replaces an older one.

use std::net::SocketAddr;
use std::time::Instant;

use crate::cc::PathId;
use crate::proto::packet::ConnectionId;
use crate::proto::transport_params::Side;

use super::Connection;
use super::migration::Challenge;

/// What a successful probe leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AltKind {
    /// Client: the server's preferred address; the path moves there.
    Preferred,
    /// Server: the peer address the path used before an apparent migration; nothing moves.
    Previous,
    /// Server: our own new local address (the client reached our preferred address); we send from it.
    Local,
}

/// A validation of another 4-tuple of a path.
#[derive(Debug, Clone)]
pub(super) struct AltProbe {
    pub(super) kind: AltKind,
    /// The peer address probed.
    pub(super) remote: SocketAddr,
    /// Our address to send from.
    pub(super) local: Option<SocketAddr>,
    /// The peer's connection ID the probes carry.
    pub(super) dcid: ConnectionId,
    pub(super) challenge: Challenge,
}

impl Connection {
    /// Starts probing `remote` from `local` on `path` with `dcid`.
    pub(super) fn start_alt_probe(
        &mut self,
        now: Instant,
        path: PathId,
        kind: AltKind,
        remote: SocketAddr,
        local: Option<SocketAddr>,
        dcid: ConnectionId,
    ) {
        let Some(challenge) = self.new_challenge(now, path) else {
            return;
        };
        if let Some(p) = self.paths.get_mut(&path) {
            p.alt = Some(AltProbe {
                kind,
                remote,
                local,
                dcid,
                challenge,
            });
        }
    }

    /// Client, once the handshake is confirmed: validates the server's preferred address if it sent one
    /// (RFC 9000 §9.6.1: "Once the handshake is confirmed, the client SHOULD select one of the two addresses
    /// provided by the server and initiate path validation").
    pub(super) fn probe_preferred_address(&mut self, now: Instant) {
        if self.side != Side::Client || !self.config.use_preferred_address {
            return;
        }
        let Some(pa) = self.peer_params.as_ref().and_then(|p| p.preferred_address) else {
            return;
        };
        let Some(p) = self.paths.get(&PathId(0)) else {
            return;
        };
        // RFC 9000 §9.6.3: "A client that migrates to a new address SHOULD use a preferred address from the same
        // address family for the server." We only try the family we already reach the server with.
        let target: Option<SocketAddr> = match p.remote {
            SocketAddr::V4(_) => pa.ipv4.map(SocketAddr::V4),
            SocketAddr::V6(_) => pa.ipv6.map(SocketAddr::V6),
        };
        let Some(target) = target.filter(|t| *t != p.remote) else {
            return;
        };
        let local = p.local;
        // RFC 9000 §9.6.1: "A client constructs packets using any previously unused active connection ID, taken
        // from either the preferred_address transport parameter or a NEW_CONNECTION_ID frame."
        let Some(dcid) = self.paths.remote_cids.spare(PathId(0)) else {
            return;
        };
        self.start_alt_probe(now, PathId(0), AltKind::Preferred, target, local, dcid);
    }

    /// A PATH_RESPONSE with `data` arrived: completes the probe that sent it.
    pub(super) fn on_alt_response(&mut self, now: Instant, data: [u8; 8]) {
        let ids: Vec<_> = self.paths.id_list();
        for id in ids {
            let Some(p) = self.paths.get_mut(&id) else {
                continue;
            };
            if !p.alt.as_ref().is_some_and(|a| a.challenge.data.contains(&data)) {
                continue;
            }
            let Some(alt) = p.alt.take() else {
                continue;
            };
            match alt.kind {
                AltKind::Preferred => {
                    // RFC 9000 §9.6.1: "As soon as path validation succeeds, the client SHOULD begin sending all
                    // future packets to the new server address using the new connection ID and discontinue use
                    // of the old server address."
                    let old = p.remote;
                    p.remote = alt.remote;
                    p.validated = true;
                    p.validations += 1;
                    p.challenge = None;
                    p.prev_remote = None;
                    if old.ip() != alt.remote.ip() {
                        self.restart_congestion(now, id);
                    }
                    if self.paths.remote_cids.spare(id) == Some(alt.dcid) {
                        self.rotate_remote_cid(id);
                    }
                    self.events.push_back(super::Event::PeerAddressChanged {
                        path: id,
                        remote: alt.remote,
                    });
                }
                AltKind::Previous => {
                    // RFC 9000 §9.3.3: "if the path is viable but no longer desired, the validation will succeed
                    // but only results in probing packets being sent on the path."
                    p.validations += 1;
                }
                AltKind::Local => {
                    // RFC 9000 §9.6.2: "Once the server has completed its path validation and has received a
                    // non-probing packet with a new largest packet number on its preferred address, the server
                    // begins sending non-probing packets to the client exclusively from its preferred IP
                    // address."
                    p.local = alt.local;
                    p.validations += 1;
                }
            }
        }
    }

    /// Fires the probe timer of path `id` (resend with `fresh` data, or give up).
    pub(super) fn on_alt_timer(&mut self, now: Instant, id: PathId, fresh: [u8; 8]) {
        let Some(p) = self.paths.get_mut(&id) else {
            return;
        };
        if p.alt.as_mut().is_some_and(|a| a.challenge.on_timer(now, fresh)) {
            // RFC 9000 §9.6.1: "If path validation fails, the client MUST continue sending all future packets to
            // the server's original IP address." Nothing else changed while probing.
            p.alt = None;
        }
    }

    /// The next probe datagram to send: (path, challenge data, probe).
    pub(super) fn next_alt_probe(&mut self) -> Option<(PathId, [u8; 8], AltProbe)> {
        if self.one_rtt.is_none() || !self.handshake_complete {
            return None;
        }
        let p = self
            .paths
            .values_mut()
            .find(|p| p.alt.as_ref().is_some_and(|a| a.challenge.pending))?;
        let alt = p.alt.as_mut()?;
        let data = alt.challenge.take_pending()?;
        Some((p.id, data, alt.clone()))
    }

    /// Whether a probe of another 4-tuple is in progress on `path` (tests, diagnostics).
    pub fn alt_probe_pending(&self, path: PathId) -> bool {
        self.paths.get(&path).is_some_and(|p| p.alt.is_some())
    }
}
