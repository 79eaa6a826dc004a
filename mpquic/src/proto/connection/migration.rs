//! Path validation and connection migration (RFC 9000 §8.2, §9).
//!
//! - Validation: [`Challenge`] holds the unpredictable data of our PATH_CHALLENGE frames (from the
//!   connection's CSPRNG), re-sent every PTO until a PATH_RESPONSE echoes one of them or the validation timer
//!   (three times the larger of the current PTO and a fresh path's PTO, RFC 9000 §8.2.4) expires.
//! - Answers: a PATH_CHALLENGE is echoed in a PATH_RESPONSE sent to the address the challenge came from
//!   (one pending answer per path: a newer challenge replaces an older one).
//! - Server: a 1-RTT packet with the largest packet number so far, carrying a non-probing frame, from a new
//!   address moves the path there (NAT rebinding or client migration): the new address is unvalidated (3×
//!   anti-amplification), is validated, and congestion/RTT state is reset unless only the port changed.
//!   If validation fails the path returns to the last validated address.
//! - Client: [`Connection::migrate`] moves to a new local address (refused if the server sent
//!   disable_active_migration), with a fresh connection ID, and validates the new path.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::cc::PathId;
use crate::proto::recovery::SpaceId;
use crate::proto::transport_params::{PreferredAddress, Side};

use super::Connection;

/// kInitialRtt (RFC 9002 §6.2.2): the RTT assumed for a path without samples.
const INITIAL_RTT: Duration = Duration::from_millis(333);

/// A path validation in progress.
#[derive(Debug, Clone)]
pub(super) struct Challenge {
    /// Data of the PATH_CHALLENGE frames sent (newest last).
    pub(super) data: Vec<[u8; 8]>,
    /// A PATH_CHALLENGE with the newest data waits to be sent.
    pub(super) pending: bool,
    /// When to send a new PATH_CHALLENGE if no answer came.
    resend_at: Instant,
    /// Current resend interval (doubles on each resend).
    interval: Duration,
    /// When validation fails.
    deadline: Instant,
    /// At most this many data values are remembered (`ConnectionLimits::path_challenges`; older ones are
    /// forgotten, so a PATH_RESPONSE echoing them no longer validates).
    cap: usize,
}

impl Challenge {
    /// The data of the next PATH_CHALLENGE to send, if one is pending.
    pub(super) fn take_pending(&mut self) -> Option<[u8; 8]> {
        if !self.pending {
            return None;
        }
        self.pending = false;
        self.data.last().copied()
    }

    /// A validation started at `now` with `data`, resent after `pto` (doubling) and failing after `timeout`,
    /// remembering at most `cap` data values.
    pub(super) fn new(now: Instant, data: [u8; 8], pto: Duration, timeout: Duration, cap: usize) -> Self {
        Challenge {
            data: vec![data],
            pending: true,
            resend_at: now + pto,
            interval: pto,
            deadline: now + timeout,
            cap: cap.max(1),
        }
    }

    pub(super) fn next_deadline(&self) -> Instant {
        self.resend_at.min(self.deadline)
    }

    /// Fires the timers due at `now`: `true` if the validation failed; otherwise a PATH_CHALLENGE with
    /// `fresh` data is queued when the resend timer expired.
    pub(super) fn on_timer(&mut self, now: Instant, fresh: [u8; 8]) -> bool {
        if now >= self.deadline {
            return true;
        }
        if now >= self.resend_at {
            if self.data.len() >= self.cap {
                let excess = self.data.len() + 1 - self.cap;
                self.data.drain(..excess);
            }
            self.data.push(fresh);
            self.pending = true;
            self.interval = self.interval.saturating_mul(2);
            self.resend_at = now + self.interval;
        }
        false
    }
}

/// A PATH_RESPONSE owed to a 4-tuple other than its path's current one.
#[derive(Debug, Clone, Copy)]
pub(super) struct OffPathResponse {
    pub(super) path: PathId,
    pub(super) data: [u8; 8],
    /// Where the PATH_CHALLENGE came from.
    pub(super) to: SocketAddr,
    /// The local address it arrived on.
    pub(super) local: Option<SocketAddr>,
    /// At most this many bytes (3× the datagram that carried the challenge, RFC 9000 §8.1).
    pub(super) budget: u64,
}

/// Why [`Connection::migrate`] refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MigrateError {
    /// Only a client migrates actively.
    #[error("only a client can migrate")]
    NotClient,
    /// RFC 9000 §9: "An endpoint MUST NOT initiate connection migration before the handshake is confirmed".
    #[error("handshake not confirmed")]
    HandshakeNotConfirmed,
    /// The server sent disable_active_migration (RFC 9000 §18.2).
    #[error("the peer disabled active migration")]
    Disabled,
    /// The peer gave no spare connection ID (RFC 9000 §9.5: one must not be reused from a new address).
    #[error("no spare connection ID from the peer")]
    NoConnectionId,
    /// The connection is closed.
    #[error("connection closed")]
    Closed,
}

impl Connection {
    /// Starts validating `path` (RFC 9000 §8.2.1): a PATH_CHALLENGE with fresh random data is sent on it.
    pub(super) fn start_path_validation(&mut self, now: Instant, path: PathId) {
        if let Some(c) = self.new_challenge(now, path) {
            if let Some(p) = self.paths.get_mut(&path) {
                p.challenge = Some(c);
            }
        }
    }

    /// A fresh validation for a 4-tuple of `path`.
    pub(super) fn new_challenge(&mut self, now: Instant, path: PathId) -> Option<Challenge> {
        let mut data = [0u8; 8];
        // RFC 9000 §8.2.1: "The endpoint MUST use unpredictable data in every PATH_CHALLENGE frame".
        self.rng.fill(&mut data);
        let three_pto = self.three_pto();
        let p = self.paths.get(&path)?;
        let pto = p.recovery.pto(SpaceId::Data);
        // RFC 9000 §8.2.4: "A value of three times the larger of the current PTO or the PTO for the new path
        // (using kInitialRtt, as defined in [QUIC-RECOVERY]) is RECOMMENDED."
        let fresh_pto = INITIAL_RTT + 4 * (INITIAL_RTT / 2) + p.recovery.max_ack_delay();
        let timeout = three_pto.max(fresh_pto.saturating_mul(3));
        let cap = self.config.limits.path_challenges();
        Some(Challenge::new(now, data, pto, timeout, cap))
    }

    /// A PATH_CHALLENGE arrived on the path of the datagram `rx`.
    pub(super) fn on_path_challenge(&mut self, rx: &super::recv::RxDatagram, data: [u8; 8]) {
        if let Some(p) = self.paths.get_mut(&rx.path) {
            // RFC 9000 §8.2.2: "On receiving a PATH_CHALLENGE frame, an endpoint MUST respond by echoing the data
            // contained in the PATH_CHALLENGE frame in a PATH_RESPONSE frame." One slot per path: a newer
            // challenge replaces an unanswered older one.
            p.path_response = Some(data);
            p.response_to = Some((rx.remote, rx.local, rx.len.saturating_mul(3)));
        }
    }

    /// A PATH_RESPONSE arrived (on any path).
    pub(super) fn on_path_response(&mut self, now: Instant, data: [u8; 8]) {
        // RFC 9000 §8.2.2: "Path validation succeeds when a PATH_RESPONSE frame is received that contains the
        // data that was sent in a previous PATH_CHALLENGE frame. A PATH_RESPONSE frame received on any network
        // path validates the path on which the PATH_CHALLENGE was sent." Other data is ignored.
        let mut validated = Vec::new();
        for p in self.paths.values_mut() {
            let matched = p.challenge.as_ref().is_some_and(|c| c.data.contains(&data));
            if matched {
                p.challenge = None;
                p.validated = true;
                p.prev_remote = None;
                p.validations += 1;
                p.recovery.set_amplification_limited(now, false);
                validated.push(p.id);
            }
        }
        let freed = !validated.is_empty();
        for id in validated {
            self.sched.on_path_event(&crate::sched::PathEvent::Validated(id));
            self.events.push_back(super::Event::PathValidated { path: id });
        }
        if freed {
            self.start_deferred_validations(now);
            // A validated path's ID is in use: its spare connection IDs are topped up.
            self.issue_cids();
        }
        self.on_alt_response(now, data);
    }

    /// Starts the validations of new paths that waited for a slot (`ConnectionLimits::path_validations`),
    /// lowest path ID first, as far as slots are free.
    pub(super) fn start_deferred_validations(&mut self, now: Instant) {
        let free = self
            .config
            .limits
            .path_validations()
            .saturating_sub(self.validations_in_flight());
        let waiting: Vec<PathId> = self
            .paths
            .values()
            .filter(|p| p.validation_deferred && p.abandoned_at.is_none())
            .map(|p| p.id)
            .take(free)
            .collect();
        for id in waiting {
            if let Some(p) = self.paths.get_mut(&id) {
                p.validation_deferred = false;
            }
            self.start_path_validation(now, id);
        }
    }

    /// The earliest path-validation timer.
    pub(super) fn validation_timeout(&self) -> Option<Instant> {
        self.paths
            .values()
            .flat_map(|p| [p.challenge.as_ref(), p.alt.as_ref().map(|a| &a.challenge)])
            .flatten()
            .map(Challenge::next_deadline)
            .min()
    }

    /// Fires the path-validation timers due at `now`.
    pub(super) fn on_validation_timeout(&mut self, now: Instant) {
        let ids: Vec<_> = self.paths.id_list();
        let mut failed = Vec::new();
        for id in ids {
            let mut fresh = [0u8; 8];
            self.rng.fill(&mut fresh);
            let Some(p) = self.paths.get_mut(&id) else {
                continue;
            };
            if let Some(c) = p.challenge.as_mut() {
                if c.on_timer(now, fresh) {
                    // RFC 9000 §9.3.2: "If the validation of the new address fails, the endpoint returns to the
                    // last validated address" (the spoofed-address case); without one, the path stays
                    // unvalidated and the 3× limit keeps bounding what is sent to it.
                    p.challenge = None;
                    if let Some(prev) = p.prev_remote.take() {
                        p.remote = prev;
                        p.validated = true;
                        p.recovery.set_amplification_limited(now, false);
                    } else if id != PathId(0) && !p.validated && p.abandoned_at.is_none() {
                        // draft-ietf-quic-multipath-21 §3: "If validation fails, the client still sends
                        // PATH_ABANDON (the path ID is consumed)"; a server does the same for a path it could
                        // not validate.
                        failed.push(id);
                    }
                }
            }
            self.rng.fill(&mut fresh);
            self.on_alt_timer(now, id, fresh);
        }
        for id in failed {
            self.abandon_unvalidated_path(now, id);
        }
        self.start_deferred_validations(now);
    }

    /// After a datagram from `from` to our `local` address (`len` bytes) whose packet qualified as a migration
    /// (RFC 9000 §9.3): the server moves path 0 to the new peer address, or validates the new local address
    /// (the client moved to our preferred address, RFC 9000 §9.6.2).
    pub(super) fn on_peer_address_change(
        &mut self,
        now: Instant,
        path: PathId,
        from: SocketAddr,
        local: Option<SocketAddr>,
        len: u64,
    ) {
        let Some(p) = self.paths.get_mut(&path) else {
            return;
        };
        let old = p.remote;
        let old_cid = p.remote_cid;
        let local_changed = local.is_some() && p.local.is_some() && p.local != local;
        if old == from {
            let probing = p
                .alt
                .as_ref()
                .is_some_and(|a| a.kind == super::alt_path::AltKind::Local && a.local == local);
            if local_changed && !probing {
                // RFC 9000 §9.6.2: "The server MUST send non-probing packets from its original address until it
                // receives a non-probing packet from the client at its preferred address and until the server has
                // validated the new path. The server MUST probe on the path toward the client from its preferred
                // address."
                self.start_alt_probe(now, path, super::alt_path::AltKind::Local, from, local, old_cid);
            }
            return;
        }
        p.remote = from;
        if local_changed {
            // RFC 9000 §9.6.3: a new client address seen at our preferred address is a migration like any other
            // (validated below, 3× limit until then); we answer from the address it reached.
            p.local = local;
        }
        let back = p.prev_remote == Some(from);
        let old_validated = p.validated;
        if back {
            // RFC 9000 §9.3: "An endpoint MAY skip validation of a peer address if that address has been seen
            // recently." Returning to the last validated address (e.g. after a spoofed packet) needs none.
            p.prev_remote = None;
            p.challenge = None;
            p.validated = true;
            p.recovery.set_amplification_limited(now, false);
        } else {
            if p.validated {
                p.prev_remote = Some(old);
            }
            // RFC 9000 §9.3: "an endpoint MUST perform path validation (Section 8.2) if it detects any change to
            // a peer's address, unless it has previously validated that address." Until then RFC 9000 §8.1's
            // 3× limit applies, counted from this datagram.
            p.validated = false;
            p.bytes_received = len;
            p.bytes_sent = 0;
        }
        // RFC 9000 §9.4: "the endpoint MUST NOT restore its send rate unless it is reasonably sure that the
        // peer's previous send rate is valid for the new path" and "an endpoint MAY retain its congestion
        // control state and RTT estimate" when only the port changed (NAT rebinding).
        if old.ip() != from.ip() {
            self.restart_congestion(now, path);
        }
        // RFC 9000 §9.5: "An endpoint MUST NOT reuse a connection ID when sending to more than one destination
        // address." Without a spare one, the current one is kept (a NAT rebinding is invisible to the peer).
        self.rotate_remote_cid(path);
        if !back {
            self.start_path_validation(now, path);
            if old_validated {
                // RFC 9000 §9.3.3: "In response to an apparent migration, endpoints MUST validate the previously
                // active path using a PATH_CHALLENGE frame." The probe uses the connection ID that address knew.
                let old_local = self.paths.get(&path).and_then(|p| p.local);
                self.start_alt_probe(
                    now,
                    path,
                    super::alt_path::AltKind::Previous,
                    old,
                    old_local,
                    old_cid,
                );
            }
        } else if let Some(p) = self.paths.get_mut(&path) {
            // Back on the previously active address: its check is moot.
            if p.alt.as_ref().is_some_and(|a| a.remote == from) {
                p.alt = None;
            }
        }
    }

    /// Moves the connection to a new local address (client active migration, RFC 9000 §9.2): the path
    /// switches to a spare connection ID of the server, sends from `new_local` and validates the new path.
    /// Congestion and RTT state are reset unless only the port changed (RFC 9000 §9.4).
    pub fn migrate(&mut self, now: Instant, new_local: SocketAddr) -> Result<(), MigrateError> {
        self.sched_input();
        if self.side != Side::Client {
            return Err(MigrateError::NotClient);
        }
        if self.state.is_closed() {
            return Err(MigrateError::Closed);
        }
        // RFC 9000 §9: "An endpoint MUST NOT initiate connection migration before the handshake is confirmed".
        if !self.handshake_confirmed {
            return Err(MigrateError::HandshakeNotConfirmed);
        }
        // RFC 9000 §18.2 (disable_active_migration): "the endpoint that receives this transport parameter MUST
        // NOT use a new local address when sending to the address that the peer used during the handshake."
        if self
            .peer_params
            .as_ref()
            .is_some_and(|p| p.disable_active_migration)
        {
            return Err(MigrateError::Disabled);
        }
        // RFC 9000 §9.5: "An endpoint MUST NOT reuse a connection ID when sending from more than one local
        // address".
        if self.paths.remote_cids.active_count(PathId(0)) < 2 || !self.rotate_remote_cid(PathId(0)) {
            return Err(MigrateError::NoConnectionId);
        }
        if let Some(p) = self.paths.get_mut(&PathId(0)) {
            let ip_changed = p.local.is_none_or(|l| l.ip() != new_local.ip());
            p.local = Some(new_local);
            if ip_changed {
                self.restart_congestion(now, PathId(0));
            }
        }
        self.start_path_validation(now, PathId(0));
        Ok(())
    }

    /// A path's 4-tuple changed its IP address: its RTT estimate and congestion state start afresh (RFC 9000
    /// §9.4: "the endpoint MUST NOT restore its send rate unless it is reasonably sure that the peer's previous
    /// send rate is valid for the new path").
    pub(super) fn restart_congestion(&mut self, now: Instant, path: PathId) {
        let mtu = self.config.max_udp_payload;
        if let Some(p) = self.paths.get_mut(&path) {
            p.recovery.reset_rtt();
        }
        self.mtu_on_path_change(path);
        self.cc.on_path_removed(path);
        self.cc.on_path_added(path, now, mtu);
    }

    /// The server's preferred_address transport parameter (RFC 9000 §9.6), if it sent one.
    pub fn peer_preferred_address(&self) -> Option<&PreferredAddress> {
        self.peer_params.as_ref()?.preferred_address.as_ref()
    }

    /// Whether the peer sent disable_active_migration.
    pub fn peer_disabled_active_migration(&self) -> bool {
        self.peer_params
            .as_ref()
            .is_some_and(|p| p.disable_active_migration)
    }

    /// Path validations in flight: live paths whose current 4-tuple is being validated
    /// (`ConnectionLimits::path_validations` caps those started for new paths).
    pub fn validations_in_flight(&self) -> usize {
        self.paths.validations_in_flight()
    }

    /// Whether a path validation is in progress on `path`.
    pub fn path_validation_pending(&self, path: PathId) -> bool {
        self.paths.get(&path).is_some_and(|p| p.challenge.is_some())
    }

    /// Writes a PATH_RESPONSE owed to an address other than the path's current one (a probe from a new
    /// address, RFC 9000 §8.2.2: the response goes where the challenge came from), within 3× the bytes of the
    /// datagram that carried the challenge.
    pub(super) fn off_path_response(&mut self) -> Option<OffPathResponse> {
        if self.one_rtt.is_none() || !self.handshake_complete {
            return None;
        }
        let p = self
            .paths
            .values_mut()
            .find(|p| p.path_response.is_some() && p.response_to.is_some_and(|r| !p.is_current(r.0, r.1)))?;
        let data = p.path_response.take()?;
        let (to, local, budget) = p.response_to.take()?;
        Some(OffPathResponse {
            path: p.id,
            data,
            to,
            local: local.or(p.local),
            budget,
        })
    }
}
