//! 1-RTT keys and key update (RFC 9001 §6), driven by the connection.
//!
//! [`OneRttKeys`] holds the header keys (never updated), the current send and receive packet keys, the next
//! generation once it is derived, and the previous receive key until the connection retires it. The Key Phase
//! bit of the current keys is [`OneRttKeys::key_phase`].
//!
//! When the next generation is derived (RFC 9001 §6.3, §6.5 and §9.5). Deriving it costs two HKDF-Expand-Label
//! calls for the secrets, four for keys and IVs and two AES-GCM key set-ups: about 3 % of a whole handshake's
//! instructions, wasted on the many connections that never update their keys. So the keys do not derive it
//! when they become current; they derive it at the first of:
//! - [`OneRttKeys::prepare_next_keys`], which the connection calls from its timer one PTO after the keys became
//!   current (the handshake was confirmed, or a key update happened; [`OneRttKeys::next_keys_deadline`]).
//!   RFC 9001 §6.3: "For a short period after a key update completes, up to the PTO, endpoints MAY defer
//!   generation of the next set of receive packet protection keys." That happens outside packet processing,
//!   and from then on every packet is opened with keys already at hand, whatever its Key Phase, as quinn does
//!   by deriving at once: no timing signal.
//! - a key update we initiate (not packet processing either);
//! - a packet with the other Key Phase that is not for the previous keys, within that PTO. RFC 9001 §6.3: "An
//!   endpoint MAY generate new keys as part of packet processing, but this creates a timing signal that could
//!   be used by an attacker to learn when key updates happen and thus leak the value of the Key Phase bit."
//!   The signal is limited to one packet per key generation and to one PTO after the keys became current:
//!   the keys are kept even if that packet fails authentication (RFC 9001 §6.3: "Once generated, the next
//!   set of packet protection keys SHOULD be kept, even if the packet that was received was subsequently
//!   discarded."), so later packets, injected or not, find them ready.
//!
//! Receiving (RFC 9001 §6.2, §6.5): a packet whose Key Phase equals ours opens with the current keys. A packet
//! with the other Key Phase opens with the previous keys if its packet number is lower than every packet of the
//! current phase received on the same path (or none was received there yet), and with the next keys otherwise;
//! success with the next keys means the peer initiated an update, and both directions move to it at once.
//! In multipath every path has its own packet-number space, so "lower" is compared per path.
//!
//! Sending: the connection writes [`OneRttKeys::key_phase`] into the header, then calls [`OneRttKeys::seal`];
//! it reports acknowledgments with [`OneRttKeys::on_packet_acked`], which is what allows the next update.
//!
//! Timers stay with the connection: on a [`KeyUpdateEvent`] it arms a timer of three times the largest PTO
//! across paths, then calls [`OneRttKeys::discard_previous_keys`]; draft-ietf-quic-multipath-21 also asks it
//! to wait that long after an update is confirmed before initiating another.

use std::fmt;
use std::time::Instant;

use super::{AeadLimits, CryptoError, HeaderKey, Keys, PacketKey};
use crate::cc::PathId;

/// Send and receive packet keys of one generation.
struct KeyPair {
    local: PacketKey,
    remote: PacketKey,
}

impl From<rustls::quic::PacketKeySet> for KeyPair {
    fn from(set: rustls::quic::PacketKeySet) -> Self {
        KeyPair {
            local: PacketKey::new(set.local),
            remote: PacketKey::new(set.remote),
        }
    }
}

/// What a successful [`OneRttKeys::open`] learned besides the plaintext.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyUpdateEvent {
    /// The peer initiated a key update: both directions now use the new keys and the Key Phase flipped. Arm
    /// the timer that retires the previous receive keys.
    PeerInitiated,
    /// The first packet protected with the keys we initiated arrived. Arm the timer that retires the previous
    /// receive keys.
    NewKeysReceived,
}

/// A packet opened by [`OneRttKeys::open`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opened {
    /// The plaintext length: the payload is `packet[header_len..header_len + len]`.
    pub len: usize,
    /// A key-update step this packet caused, if any.
    pub event: Option<KeyUpdateEvent>,
}

/// Why [`OneRttKeys::initiate_update`] refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum KeyUpdateBlocked {
    /// The handshake is not confirmed yet (RFC 9001 §4.1.2).
    #[error("handshake not confirmed")]
    HandshakeNotConfirmed,
    /// No packet sent with the current keys has been acknowledged yet.
    #[error("current key phase not acknowledged")]
    NotAcknowledged,
}

/// The 1-RTT keys of a connection across key updates.
pub struct OneRttKeys {
    local_header: HeaderKey,
    remote_header: HeaderKey,
    current: KeyPair,
    /// The next generation, once derived (see the module documentation for when).
    next: Option<KeyPair>,
    /// Secrets of the first generation not derived yet: `next`'s if `next` is `None`, else the one after.
    secrets: rustls::quic::Secrets,
    /// Until when deriving `next` may wait (set by the connection; `None` once `next` is derived or before
    /// the connection sets it).
    next_deadline: Option<Instant>,
    previous_remote: Option<PacketKey>,
    key_phase: bool,
    generation: u64,
    handshake_confirmed: bool,
    /// The lowest packet number sent with the current keys, per path.
    first_sent: Vec<(PathId, u64)>,
    /// The lowest packet number received with the current keys, per path.
    first_received: Vec<(PathId, u64)>,
    /// Whether a packet sent with the current keys was acknowledged.
    current_acked: bool,
    /// We initiated the current keys and no packet protected with them arrived yet.
    awaiting_peer_update: bool,
    /// Packets sealed with the current send key, across all paths.
    sealed_with_current: u64,
    limits: AeadLimits,
}

impl OneRttKeys {
    /// The 1-RTT keys rustls hands out at the end of the handshake: generation-0 `keys` and the secrets of
    /// generation 1 (`rustls::quic::KeyChange::OneRtt`). Generation 1 is derived later (module documentation).
    pub fn new(keys: rustls::quic::Keys, next: rustls::quic::Secrets) -> Self {
        let keys = Keys::from_rustls(keys);
        let limits = AeadLimits::of(&keys.local.packet);
        OneRttKeys {
            local_header: keys.local.header,
            remote_header: keys.remote.header,
            current: KeyPair {
                local: keys.local.packet,
                remote: keys.remote.packet,
            },
            next: None,
            secrets: next,
            next_deadline: None,
            previous_remote: None,
            key_phase: false,
            generation: 0,
            handshake_confirmed: false,
            first_sent: Vec::new(),
            first_received: Vec::new(),
            current_acked: false,
            awaiting_peer_update: false,
            sealed_with_current: 0,
            limits,
        }
    }

    /// The header-protection key for packets we send.
    pub fn local_header(&self) -> &HeaderKey {
        &self.local_header
    }

    /// The header-protection key for packets we receive.
    pub fn remote_header(&self) -> &HeaderKey {
        &self.remote_header
    }

    /// The Key Phase bit to write into the short header of the next packet sent.
    pub fn key_phase(&self) -> bool {
        self.key_phase
    }

    /// How many key updates happened (0 for the handshake's keys).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The AEAD limits of the negotiated suite.
    pub fn limits(&self) -> AeadLimits {
        self.limits
    }

    /// Packets sealed with the current send key, across all paths.
    pub fn sealed_with_current_key(&self) -> u64 {
        self.sealed_with_current
    }

    /// Whether the next generation's keys are derived already.
    pub fn has_next_keys(&self) -> bool {
        self.next.is_some()
    }

    /// Asks for the next generation to be derived by `deadline` at the latest: the connection calls
    /// [`prepare_next_keys`](Self::prepare_next_keys) when [`next_keys_deadline`](Self::next_keys_deadline)
    /// is reached. Call it when the current keys become current: at handshake confirmation and after each key
    /// update, with `deadline` = now + PTO (RFC 9001 §6.3 allows deferring "up to the PTO"). An earlier
    /// deadline already set is kept.
    pub fn defer_next_keys_until(&mut self, deadline: Instant) {
        if self.next.is_none() {
            self.next_deadline = Some(self.next_deadline.map_or(deadline, |d| d.min(deadline)));
        }
    }

    /// When the connection should call [`prepare_next_keys`](Self::prepare_next_keys); `None` if the next
    /// keys are derived already or no deadline was set.
    pub fn next_keys_deadline(&self) -> Option<Instant> {
        self.next_deadline
    }

    /// Derives the next generation's keys now if they are not derived yet (outside packet processing: from
    /// the connection's timer).
    pub fn prepare_next_keys(&mut self) {
        self.next_pair();
    }

    /// Whether the previous receive key is still kept.
    pub fn has_previous_keys(&self) -> bool {
        self.previous_remote.is_some()
    }

    /// Records that the handshake is confirmed (RFC 9001 §4.1.2): key updates are allowed from now on.
    pub fn set_handshake_confirmed(&mut self) {
        self.handshake_confirmed = true;
    }

    /// Whether [`initiate_update`](Self::initiate_update) would succeed now.
    pub fn update_permitted(&self) -> Result<(), KeyUpdateBlocked> {
        // RFC 9001 §6.1: "An endpoint MUST NOT initiate a key update prior to having confirmed the handshake
        // (Section 4.1.2)."
        if !self.handshake_confirmed {
            return Err(KeyUpdateBlocked::HandshakeNotConfirmed);
        }
        // RFC 9001 §6.1: "An endpoint MUST NOT initiate a subsequent key update unless it has received an
        // acknowledgment for a packet that was sent protected with keys from the current key phase."
        if self.generation > 0 && !self.current_acked {
            return Err(KeyUpdateBlocked::NotAcknowledged);
        }
        Ok(())
    }

    /// Whether the current send key is close enough to its confidentiality limit that the connection should
    /// initiate a key update now (RFC 9001 §6.6).
    pub fn wants_update(&self) -> bool {
        self.sealed_with_current >= self.limits.update_threshold()
    }

    /// Initiates a key update (RFC 9001 §6.1): the next packets are sent with the next keys and the other
    /// Key Phase; the current receive key becomes the previous one.
    pub fn initiate_update(&mut self) -> Result<(), KeyUpdateBlocked> {
        self.update_permitted()?;
        self.rotate();
        self.awaiting_peer_update = true;
        Ok(())
    }

    /// Seals a 1-RTT packet sent on `path` with packet number `pn` (see [`PacketKey::seal`]). The header
    /// must carry [`key_phase`](Self::key_phase).
    pub fn seal(
        &mut self,
        path: PathId,
        pn: u64,
        packet: &mut [u8],
        header_len: usize,
    ) -> Result<(), CryptoError> {
        // RFC 9001 §6.6: "If the total number of encrypted packets with the same key exceeds the
        // confidentiality limit for the selected AEAD, the endpoint MUST stop using those keys."
        if self.sealed_with_current >= self.limits.confidentiality {
            return Err(CryptoError::ConfidentialityLimitReached);
        }
        self.current.local.seal(path, pn, packet, header_len)?;
        self.sealed_with_current = self.sealed_with_current.saturating_add(1);
        note_lowest(&mut self.first_sent, path, pn);
        Ok(())
    }

    /// Reports that the peer acknowledged packet `pn` sent on `path`. Call it with the largest packet number
    /// each PATH_ACK (or ACK) newly acknowledges.
    pub fn on_packet_acked(&mut self, path: PathId, pn: u64) {
        if lowest(&self.first_sent, path).is_some_and(|first| pn >= first) {
            self.current_acked = true;
        }
    }

    /// Opens a 1-RTT packet received on `path`, whose header protection was removed: `key_phase` is its Key
    /// Phase bit and `pn` its full packet number (see [`PacketKey::open`]).
    ///
    /// On failure the packet must be dropped and counted against the integrity limit.
    pub fn open(
        &mut self,
        path: PathId,
        pn: u64,
        key_phase: bool,
        packet: &mut [u8],
        header_len: usize,
    ) -> Result<Opened, CryptoError> {
        if key_phase == self.key_phase {
            let len = self.current.remote.open(path, pn, packet, header_len)?;
            note_lowest(&mut self.first_received, path, pn);
            let event = if self.awaiting_peer_update {
                // RFC 9001 §6.1: "An endpoint MUST retain old keys until it has successfully unprotected a
                // packet sent using the new keys." This is that packet: retiring may start now.
                self.awaiting_peer_update = false;
                Some(KeyUpdateEvent::NewKeysReceived)
            } else {
                None
            };
            return Ok(Opened { len, event });
        }
        // RFC 9001 §6.5: "A recovered packet number that is lower than any packet number from the current key
        // phase uses the previous packet protection keys; a recovered packet number that is higher than any
        // packet number from the current key phase requires the use of the next packet protection keys."
        // Packet numbers are per path in multipath, so the comparison is per path.
        //
        // This selection also enforces RFC 9001 §6.4: "An endpoint that successfully removes protection with
        // old keys when newer keys were used for packets with lower packet numbers MUST treat this as a
        // connection error of type KEY_UPDATE_ERROR." Old keys are never tried for such a packet, so it cannot
        // be opened with them; it is tried with the next keys and dropped.
        if let Some(previous) = &self.previous_remote {
            if lowest(&self.first_received, path).is_none_or(|first| pn < first) {
                let len = previous.open(path, pn, packet, header_len)?;
                return Ok(Opened { len, event: None });
            }
        }
        // RFC 9001 §5.5: "a packet that appears to trigger a key update but cannot be unprotected successfully
        // MUST be discarded." The error return does that: no state changed, except that the next keys may have
        // been derived for this packet, and those are kept (RFC 9001 §6.3, module documentation).
        let len = self.next_pair().remote.open(path, pn, packet, header_len)?;
        // RFC 9001 §6.2: "If a packet is successfully processed using the next key and IV, then the peer has
        // initiated a key update. The endpoint MUST update its send keys to the corresponding key phase in
        // response". Rotating moves both directions, so every later packet, acknowledgments included, uses
        // the new keys.
        self.rotate();
        note_lowest(&mut self.first_received, path, pn);
        Ok(Opened {
            len,
            event: Some(KeyUpdateEvent::PeerInitiated),
        })
    }

    /// Retires the previous receive key: call it when the timer armed on a [`KeyUpdateEvent`] fires
    /// (RFC 9001 §6.1: "An endpoint SHOULD retain old read keys for no more than three times the current PTO
    /// after having received a packet protected using the new keys.").
    pub fn discard_previous_keys(&mut self) {
        self.previous_remote = None;
    }

    /// Forgets the per-path packet-number bookkeeping of an abandoned path.
    pub fn on_path_removed(&mut self, path: PathId) {
        self.first_sent.retain(|(p, _)| *p != path);
        self.first_received.retain(|(p, _)| *p != path);
    }

    /// Pretends `n` packets were sealed with the current key.
    #[cfg(test)]
    pub(crate) fn set_sealed_for_test(&mut self, n: u64) {
        self.sealed_with_current = n;
    }

    /// The next generation's keys, derived now if they were not yet.
    fn next_pair(&mut self) -> &KeyPair {
        self.next_deadline = None;
        self.next
            .get_or_insert_with(|| KeyPair::from(self.secrets.next_packet_keys()))
    }

    /// Moves to the next generation in both directions. The generation after it is derived later (module
    /// documentation): the connection sets its deadline with [`defer_next_keys_until`](Self::defer_next_keys_until).
    fn rotate(&mut self) {
        self.next_deadline = None;
        let next = match self.next.take() {
            Some(next) => next,
            None => KeyPair::from(self.secrets.next_packet_keys()),
        };
        let old = std::mem::replace(&mut self.current, next);
        self.previous_remote = Some(old.remote);
        self.key_phase = !self.key_phase;
        self.generation = self.generation.saturating_add(1);
        self.first_sent.clear();
        self.first_received.clear();
        self.current_acked = false;
        self.awaiting_peer_update = false;
        self.sealed_with_current = 0;
    }
}

/// The per-path lowest packet number in `list`.
fn lowest(list: &[(PathId, u64)], path: PathId) -> Option<u64> {
    list.iter().find(|(p, _)| *p == path).map(|(_, pn)| *pn)
}

/// Lowers (or sets) `path`'s entry in `list` to `pn`. The list holds one entry per path that carried a packet
/// with the current keys; paths are bounded by the path IDs the endpoint allowed.
fn note_lowest(list: &mut Vec<(PathId, u64)>, path: PathId, pn: u64) {
    match list.iter_mut().find(|(p, _)| *p == path) {
        Some((_, first)) => *first = (*first).min(pn),
        None => list.push((path, pn)),
    }
}

impl fmt::Debug for OneRttKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OneRttKeys")
            .field("key_phase", &self.key_phase)
            .field("generation", &self.generation)
            .field("has_previous", &self.previous_remote.is_some())
            .field("has_next", &self.next.is_some())
            .field("current_acked", &self.current_acked)
            .field("sealed_with_current", &self.sealed_with_current)
            .finish_non_exhaustive()
    }
}
