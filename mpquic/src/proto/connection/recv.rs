//! Receiving: a datagram is split into its coalesced packets, each is unprotected with the keys of its level
//! (the path ID goes into the 1-RTT nonce), deduplicated by its space's ACK tracker, and its frames are
//! dispatched. Any [`TransportError`] a frame raises closes the connection with that code and frame type.

use std::net::SocketAddr;
use std::time::Instant;

use bytes::{Buf, Bytes, BytesMut};

use crate::cc::PathId;
use crate::proto::ack_tracker::EcnCodepoint;
use crate::proto::crypto::{KeyUpdateEvent, Level};
use crate::proto::error::{TransportError, TransportErrorCode};
use crate::proto::frame::{Frame, PacketKind, decode_frames};
use crate::proto::packet::{DecodedPacket, PacketType, PartialDecode};
use crate::proto::recovery::SpaceId;

use super::close::State;
use super::spaces::level_index;
use super::{Connection, ConnectionError, EndpointEvent, Event};

/// The datagram being processed, passed down to its packets and frames: where it came from, its size and
/// ECN mark, and what its packets decided about it.
#[derive(Debug)]
pub(super) struct RxDatagram {
    /// The path its Destination Connection ID names.
    pub(super) path: PathId,
    /// The peer address it came from.
    pub(super) remote: SocketAddr,
    /// Our address it arrived on, if known.
    pub(super) local: Option<SocketAddr>,
    /// Its size in bytes.
    pub(super) len: u64,
    /// Its ECN codepoint.
    pub(super) ecn: Option<EcnCodepoint>,
    /// A packet in it carried a non-probing frame and the largest packet number so far (RFC 9000 §9.3): if it
    /// came from a new peer address, the path moves there.
    pub(super) migrate: bool,
    /// The datagram is in the connection's own receive buffer ([`Connection::handle_datagram`]): keep a
    /// handle on it for reuse (`rx_buffer`).
    keep_buffer: bool,
}

impl Connection {
    /// Processes one UDP datagram received from `remote` (on local address `local`, if known). The datagram is
    /// copied once into a buffer of the connection's (the last datagram's, when nothing holds a slice of it
    /// any more: see `rx_buffer`) and processed as by [`Connection::handle_datagram_buf`]; callers that own
    /// their receive buffer as a `BytesMut` may call that directly and save the copy.
    pub fn handle_datagram(
        &mut self,
        now: Instant,
        local: Option<SocketAddr>,
        remote: SocketAddr,
        ecn: Option<EcnCodepoint>,
        data: &mut [u8],
    ) {
        let buf = self.rx_buffer.fill(data);
        self.process_datagram(now, local, remote, ecn, buf, true);
    }

    /// Processes one UDP datagram received from `remote` (on local address `local`, if known), taking
    /// ownership of its bytes. Each packet is decrypted in place and frozen, and the data of its STREAM,
    /// CRYPTO and DATAGRAM frames is handed on as slices of it: no payload is copied.
    pub fn handle_datagram_buf(
        &mut self,
        now: Instant,
        local: Option<SocketAddr>,
        remote: SocketAddr,
        ecn: Option<EcnCodepoint>,
        data: BytesMut,
    ) {
        // A buffer kept from an earlier `handle_datagram` (a server's first Initial goes through it) would
        // never be reused by this caller: let it go rather than pin it for the connection's lifetime.
        self.rx_buffer.release();
        self.process_datagram(now, local, remote, ecn, data, false);
    }

    /// Processes one datagram (`keep_buffer`: it is in the connection's receive buffer, see
    /// [`RxDatagram::keep_buffer`]).
    fn process_datagram(
        &mut self,
        now: Instant,
        local: Option<SocketAddr>,
        remote: SocketAddr,
        ecn: Option<EcnCodepoint>,
        mut data: BytesMut,
        keep_buffer: bool,
    ) {
        self.qlog_sync(super::qlog::Call::Receive);
        // Acknowledgements, losses, RTT samples, path frames: the scheduler's views may change.
        self.sched_input();
        if matches!(self.state, State::Draining { .. } | State::Drained) {
            return;
        }
        self.stats.datagrams_received += 1;
        self.last_now = now;
        let path_id = self.datagram_path(&data);
        let len = data.len() as u64;
        if !self.paths.contains(&path_id) && !self.accept_new_path(now, path_id, remote, local) {
            // A path we abandoned or never heard of (a client learns of no path it did not open).
            self.stats.packets_dropped += 1;
            return;
        }
        let mut on_path = true;
        if let Some(p) = self.paths.get_mut(&path_id) {
            // A client only follows its own address changes (Connection::migrate); a server counts bytes from a
            // new address once the path moves there (RFC 9000 §9.3).
            on_path =
                p.is_current(remote, local) || self.side == crate::proto::transport_params::Side::Client;
            if on_path {
                p.bytes_received = p.bytes_received.saturating_add(len);
                if !p.validated {
                    p.recovery.set_amplification_limited(now, false);
                }
            }
            if p.local.is_none() {
                p.local = local;
            }
        }
        let mut rx = RxDatagram {
            path: path_id,
            remote,
            local,
            len,
            ecn,
            migrate: false,
            keep_buffer,
        };
        // RFC 9000 §10.3.1: "An endpoint detects a potential Stateless Reset using the trailing 16 bytes of the
        // UDP datagram." Kept aside before in-place decryption touches the datagram.
        let tail: Option<[u8; 16]> = (data.len() >= crate::proto::packet::MIN_STATELESS_RESET_SIZE)
            .then(|| data.len() - 16)
            .and_then(|start| data.get(start..))
            .and_then(|t| <[u8; 16]>::try_from(t).ok());
        let received_before = self.stats.packets_received;
        while !data.is_empty() {
            let pd = match DecodedPacket::decode(&data, self.local_cid.len()) {
                Ok(DecodedPacket::Protected(pd)) => pd,
                Ok(DecodedPacket::VersionNegotiation(vn)) => {
                    self.on_version_negotiation(&vn);
                    return;
                }
                Ok(DecodedPacket::Retry(r)) => {
                    let len = r.len();
                    let packet = data.get(..len).map(<[u8]>::to_vec).unwrap_or_default();
                    self.on_retry(&r, &packet);
                    return;
                }
                Err(_) => break,
            };
            if pd.len() > data.len() {
                break;
            }
            let packet = if pd.len() == data.len() {
                // The last (usually the only) packet: no split, which would share the buffer.
                std::mem::take(&mut data)
            } else if pd.is_empty() {
                // Cannot happen for a decoded header; skip a byte rather than loop.
                data.advance(1);
                continue;
            } else {
                data.split_to(pd.len())
            };
            if let Err(err) = self.handle_packet(now, &mut rx, pd, packet) {
                self.close_with_error(now, err);
                return;
            }
            if self.state.is_closed() {
                return;
            }
        }
        if self.stats.packets_received == received_before {
            self.check_stateless_reset(now, tail);
        }
        if !on_path && rx.migrate {
            self.on_peer_address_change(now, path_id, remote, local, len);
        }
    }

    /// A Version Negotiation packet (client only). RFC 9000 §6.2: "A client that supports only this version of
    /// QUIC MUST abandon the current connection attempt if it receives a Version Negotiation packet", except
    /// when it already processed another packet or the packet lists the version it selected (then it is
    /// discarded, `VersionNegotiation::client_disposition`).
    fn on_version_negotiation(&mut self, vn: &crate::proto::packet::VersionNegotiation<'_>) {
        if self.side != crate::proto::transport_params::Side::Client {
            return;
        }
        let our_dcid = self.orig_dcid;
        let disposition = vn.client_disposition(
            crate::proto::packet::VERSION_1,
            &our_dcid,
            &self.local_cid,
            self.stats.packets_received > 0,
        );
        match disposition {
            crate::proto::packet::VnDisposition::Abandon => {
                let offered = vn.versions().take(64).collect();
                self.events
                    .push_back(Event::ConnectionLost(ConnectionError::VersionMismatch {
                        offered,
                    }));
                self.drain();
            }
            crate::proto::packet::VnDisposition::Discard(_) => self.stats.packets_dropped += 1,
        }
    }

    /// A datagram none of whose packets could be processed may be a Stateless Reset: compare its trailing 16
    /// bytes with the reset tokens of the peer's connection IDs we use. RFC 9000 §10.3.1: "If the last 16 bytes
    /// of the datagram are identical in value to a stateless reset token, the endpoint MUST enter the draining
    /// period and not send any further packets on this connection."
    fn check_stateless_reset(&mut self, now: Instant, tail: Option<[u8; 16]>) {
        let Some(tail) = tail else {
            return;
        };
        // Datagrams shorter than the smallest Stateless Reset (21 bytes) have no `tail`; every token is compared
        // in constant time.
        let mut found = false;
        for t in self.paths.remote_cids.reset_tokens() {
            found |= t.ct_eq(&tail);
        }
        if found {
            self.on_peer_close(now, ConnectionError::Reset);
        }
    }

    fn handle_packet(
        &mut self,
        now: Instant,
        rx: &mut RxDatagram,
        pd: PartialDecode,
        mut packet: BytesMut,
    ) -> Result<(), TransportError> {
        let (path_id, ecn) = (rx.path, rx.ecn);
        if matches!(self.state, State::Closing { .. }) {
            self.on_packet_while_closing();
            return Ok(());
        }
        let dcid = *pd.dcid();
        let dcid_ok = self.paths.local_cids.lookup(&dcid).is_some()
            || (self.side == crate::proto::transport_params::Side::Server
                && Some(*pd.dcid()) == self.tokens.initial_dcid);
        if !dcid_ok {
            self.stats.packets_dropped += 1;
            return Ok(());
        }
        if self.side == crate::proto::transport_params::Side::Client && pd.check_received_by_client().is_err()
        {
            self.stats.packets_dropped += 1;
            return Ok(());
        }
        let (level, kind) = match pd.packet_type() {
            PacketType::Initial => (Level::Initial, PacketKind::Initial),
            PacketType::Handshake => (Level::Handshake, PacketKind::Handshake),
            PacketType::OneRtt => (Level::OneRtt, PacketKind::OneRtt),
            PacketType::ZeroRtt => (Level::ZeroRtt, PacketKind::ZeroRtt),
        };
        let Some((pn, header, payload_len)) = self.unprotect(now, path_id, level, pd, &mut packet) else {
            self.stats.packets_dropped += 1;
            return Ok(());
        };
        // RFC 9000 §17.2: "An endpoint MUST treat receipt of a packet that has a non-zero value for these bits
        // after removing both packet and header protection as a connection error of type PROTOCOL_VIOLATION."
        header.check_reserved_bits()?;
        let duplicate = match level {
            Level::ZeroRtt | Level::OneRtt => self.paths.get(&path_id).is_none_or(|p| p.ack.is_duplicate(pn)),
            _ => self.spaces.get(level).is_none_or(|s| s.ack.is_duplicate(pn)),
        };
        if duplicate {
            self.stats.packets_dropped += 1;
            return Ok(());
        }
        self.stats.packets_received += 1;
        if matches!(level, Level::ZeroRtt | Level::OneRtt) {
            if let Some(p) = self.paths.get_mut(&path_id) {
                p.packets_received += 1;
            }
        }
        if level == Level::OneRtt {
            self.on_one_rtt_received_for_early_data();
        }
        if self.side == crate::proto::transport_params::Side::Client && level == Level::Initial {
            // RFC 9000 §7.2: "the client MUST change the Destination Connection ID it uses for sending packets
            // in response to only the first received Initial or Retry packet."
            if let Some(scid) = header.scid.filter(|_| self.paths.contains(&path_id)) {
                if self.stats.packets_received == 1 {
                    self.paths.set_initial_remote_cid(path_id, scid);
                }
            }
        }
        if self.side == crate::proto::transport_params::Side::Server && level == Level::Handshake {
            // RFC 9000 §8.1: "a server MUST consider the client address validated once it receives a Handshake
            // packet protected with keys derived from the handshake". RFC 9001 §4.9.1: "a server MUST discard
            // Initial keys when it first successfully processes a Handshake packet".
            if let Some(p) = self.paths.get_mut(&path_id) {
                p.validated = true;
                p.recovery.set_amplification_limited(now, false);
            }
            self.discard_initial(now);
        }
        self.restart_idle_timer(now);
        let header_len = header.header_len;
        // The decrypted payload stays where it was received: frames reference it without a copy.
        let payload_end = header_len.saturating_add(payload_len);
        let payload = if payload_end <= packet.len() {
            packet.truncate(payload_end);
            packet.advance(header_len);
            packet.freeze()
        } else {
            Bytes::new()
        };
        if rx.keep_buffer {
            self.rx_buffer.keep(&payload);
        }
        self.qlog_packet_received(now, level, path_id, pn, header_len, &payload);
        let scid = header.scid;
        let mut ack_eliciting = false;
        let mut non_probing = false;
        let largest = level == Level::OneRtt
            && self
                .paths
                .get(&path_id)
                .is_some_and(|p| p.ack.largest_received().is_none_or(|l| pn > l));
        for frame in decode_frames(&payload) {
            let frame = frame?;
            frame.check_allowed_in(kind)?;
            if level == Level::ZeroRtt {
                Self::check_zero_rtt_frame(&frame)?;
            }
            ack_eliciting |= frame.is_ack_eliciting();
            non_probing |= !frame.is_probing();
            self.handle_frame(now, level, rx, scid.as_ref(), &dcid, frame, &payload)?;
            if self.state.is_closed() {
                return Ok(());
            }
        }
        // RFC 9000 §9.3: "If the recipient permits the migration, it MUST send subsequent packets to the new peer
        // address" — for "a packet with a non-probing frame" that "is the largest packet number received".
        // Probing packets from a new address do not move the path.
        if largest && non_probing && self.side == crate::proto::transport_params::Side::Server {
            rx.migrate = true;
        }
        let ecn = ecn.unwrap_or_default();
        match level {
            // RFC 9001 §5.6: "A server MUST NOT use 0-RTT keys to protect packets; it uses 1-RTT keys to protect
            // acknowledgements of 0-RTT packets": 0-RTT packets enter path 0's application-data ACK tracker.
            Level::ZeroRtt | Level::OneRtt => {
                if let Some(p) = self.paths.get_mut(&path_id) {
                    p.ack.on_packet_received(now, pn, ack_eliciting, ecn);
                }
            }
            _ => {
                if let Some(s) = self.spaces.get_mut(level) {
                    s.ack.on_packet_received(now, pn, ack_eliciting, ecn);
                }
            }
        }
        Ok(())
    }

    /// Removes header and packet protection; `None` if the packet must be dropped.
    fn unprotect(
        &mut self,
        now: Instant,
        path_id: PathId,
        level: Level,
        pd: PartialDecode,
        packet: &mut [u8],
    ) -> Option<(u64, crate::proto::packet::Header, usize)> {
        let pn_offset = pd.pn_offset();
        match level {
            Level::OneRtt => {
                let keys = self.one_rtt.as_mut()?;
                keys.remote_header().remove(packet, pn_offset).ok()?;
                let header = pd.finish(packet).ok()?;
                let largest = self.paths.get(&path_id)?.ack.largest_received();
                let pn = header.full_packet_number(largest);
                let opened = keys
                    .open(path_id, pn, header.key_phase, packet, header.header_len)
                    .ok()?;
                if let Some(ev) = opened.event {
                    self.key_discard_deadline = Some(now + self.three_pto());
                    self.defer_next_keys(now);
                    if ev == KeyUpdateEvent::PeerInitiated {
                        self.stats.key_updates += 1;
                        self.events.push_back(Event::KeyUpdated);
                    }
                }
                Some((pn, header, opened.len))
            }
            Level::ZeroRtt => self.unprotect_zero_rtt(pd, packet),
            Level::Initial | Level::Handshake => {
                let space = self.spaces.get(level)?;
                let keys = space.keys.as_ref()?;
                keys.remote.header.remove(packet, pn_offset).ok()?;
                let header = pd.finish(packet).ok()?;
                let pn = header.full_packet_number(space.ack.largest_received());
                let len = keys
                    .remote
                    .packet
                    .open(PathId(0), pn, packet, header.header_len)
                    .ok()?;
                Some((pn, header, len))
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn handle_frame(
        &mut self,
        now: Instant,
        level: Level,
        rx: &RxDatagram,
        scid: Option<&crate::proto::packet::ConnectionId>,
        dcid: &crate::proto::packet::ConnectionId,
        frame: Frame<'_>,
        payload: &Bytes,
    ) -> Result<(), TransportError> {
        let path_id = rx.path;
        let ty = frame.ty().0;
        match frame {
            Frame::Padding(_) | Frame::Ping => {}
            Frame::Ack(ack) => self.on_ack(now, level, path_id, &ack)?,
            Frame::Crypto(c) => {
                let limit = self.config.limits.crypto_buffer();
                let data = self
                    .crypto
                    .get_mut(level_index(level))
                    .map(|s| s.on_received(c.offset.into_inner(), c.data, limit))
                    .transpose()?
                    .unwrap_or_default();
                if !data.is_empty() {
                    self.tls.read_handshake(&data).map_err(|e| e.error)?;
                    self.write_tls();
                    // A resuming client's TLS reports the previous connection's parameters (remembered for
                    // 0-RTT) until EncryptedExtensions arrives at the Handshake level: wait for those.
                    if self.side == crate::proto::transport_params::Side::Server || level != Level::Initial {
                        self.on_peer_params(now, scid)?;
                    }
                    self.check_handshake_complete(now);
                }
            }
            Frame::NewToken(token) => {
                // RFC 9000 §19.7: "Servers MUST treat receipt of a NEW_TOKEN frame as a connection error of type
                // PROTOCOL_VIOLATION."
                if self.side == crate::proto::transport_params::Side::Server {
                    return Err(TransportError::protocol_violation("NEW_TOKEN from a client").with_frame(ty));
                }
                self.on_new_token(payload.slice_ref(token));
            }
            Frame::Stream(s) => {
                if let Some(p) = self.paths.get_mut(&path_id) {
                    p.stream_bytes_received = p.stream_bytes_received.saturating_add(s.data.len() as u64);
                }
                self.streams.on_stream_frame(&s, payload, now)?
            }
            Frame::ResetStream(f) => self.streams.on_reset_stream(&f)?,
            Frame::StopSending(f) => self.streams.on_stop_sending(&f)?,
            Frame::MaxData(v) => {
                self.streams.on_max_data(v);
                self.streams.note_time(now);
            }
            Frame::MaxStreamData { id, max } => {
                self.streams.on_max_stream_data(id, max)?;
                self.streams.note_time(now);
            }
            Frame::MaxStreams { dir, count } => self.streams.on_max_streams(dir, count),
            Frame::DataBlocked(v) => self.streams.on_data_blocked(v),
            Frame::StreamDataBlocked { id, limit } => self.streams.on_stream_data_blocked(id, limit)?,
            Frame::StreamsBlocked { dir, limit } => self.streams.on_streams_blocked(dir, limit),
            Frame::NewConnectionId(f) => self.on_new_cid_frame(&f)?,
            Frame::RetireConnectionId(f) => self.on_retire_cid_frame(&f, dcid)?,
            Frame::PathChallenge(data) => self.on_path_challenge(rx, data),
            Frame::PathResponse(data) => self.on_path_response(now, data),
            Frame::ConnectionClose(c) => {
                let reason = ConnectionError::ConnectionClosed {
                    code: TransportErrorCode(c.error_code.into_inner()),
                    frame_type: c.frame_type.into_inner(),
                    reason: payload.slice_ref(c.reason),
                };
                self.on_peer_close(now, reason);
            }
            Frame::ApplicationClose(c) => {
                let reason = ConnectionError::ApplicationClosed {
                    code: c.error_code,
                    reason: payload.slice_ref(c.reason),
                };
                self.on_peer_close(now, reason);
            }
            Frame::HandshakeDone => {
                // RFC 9000 §19.20: "A server MUST treat receipt of a HANDSHAKE_DONE frame as a connection error
                // of type PROTOCOL_VIOLATION."
                if self.side == crate::proto::transport_params::Side::Server {
                    return Err(
                        TransportError::protocol_violation("HANDSHAKE_DONE from a client").with_frame(ty)
                    );
                }
                self.on_handshake_confirmed(now);
            }
            Frame::Datagram(d) => {
                // RFC 9221 §3: "An endpoint that receives a DATAGRAM frame when it has not indicated support via
                // the transport parameter MUST terminate the connection with an error of type PROTOCOL_VIOLATION.
                // Similarly, an endpoint that receives a DATAGRAM frame that is larger than the value it sent in
                // its max_datagram_frame_size transport parameter MUST terminate the connection with an error of
                // type PROTOCOL_VIOLATION."
                let max = self
                    .config
                    .max_datagram_frame_size
                    .ok_or(TransportError::protocol_violation("DATAGRAM without support").with_frame(ty))?;
                let frame_len = Frame::Datagram(d).encoded_len() as u64;
                if frame_len > max {
                    return Err(TransportError::protocol_violation("DATAGRAM too large").with_frame(ty));
                }
                if self.datagrams_in.len() >= self.config.limits.datagrams_in.max(1) {
                    self.datagrams_in.pop_front();
                }
                self.datagrams_in.push_back(payload.slice_ref(d.data));
                self.events.push_back(Event::DatagramReceived);
            }
            Frame::PathStatus(f) => self.on_path_status_frame(&f)?,
            Frame::MaxPathId(max) => self.on_max_path_id_frame(max)?,
            Frame::PathsBlocked(max) => self.on_paths_blocked_frame(max)?,
            Frame::PathCidsBlocked(f) => self.on_path_cids_blocked_frame(&f)?,
            Frame::PathAbandon(f) => self.on_path_abandon_frame(now, &f)?,
        }
        Ok(())
    }

    fn on_ack(
        &mut self,
        now: Instant,
        level: Level,
        path_id: PathId,
        ack: &crate::proto::frame::Ack<'_>,
    ) -> Result<(), TransportError> {
        let (space, path_id) = match level {
            Level::Initial => (SpaceId::Initial, PathId(0)),
            Level::Handshake => (SpaceId::Handshake, PathId(0)),
            // RFC 9000 §12.4: no ACK in 0-RTT packets (refused before dispatch).
            Level::ZeroRtt => return Ok(()),
            Level::OneRtt => {
                // draft-ietf-quic-multipath-21 §2: PATH_ACK acknowledges one path's packets and may travel on any
                // path; a plain ACK in 1-RTT means path 0. Unknown or abandoned paths: ignored.
                let _ = path_id;
                match self.paths.ids.check_frame_path(ack.path_id, ack.ty())? {
                    crate::proto::cid::PathDisposition::Process(p) => (SpaceId::Data, p),
                    crate::proto::cid::PathDisposition::Ignore => return Ok(()),
                }
            }
        };
        let exponent = if level == Level::OneRtt {
            self.peer_ack_delay_exponent
        } else {
            crate::proto::transport_params::DEFAULT_ACK_DELAY_EXPONENT as u8
        };
        let Some(path) = self.paths.get_mut(&path_id) else {
            return Ok(());
        };
        let mut outcome = path
            .recovery
            .on_ack_frame(now, space, ack, exponent, self.cc.as_mut())?;
        let srtt = path.recovery.rtt().smoothed();
        self.streams.set_rtt(srtt);
        // The Linux window policy measures the reader over the largest smoothed RTT of the live paths with a
        // sample, as MPTCP's receive-buffer autotuning does over its subflows (`mptcp_rcv_space_adjust`).
        let slowest = self.paths.slowest_live_srtt().unwrap_or(srtt);
        self.streams.set_sizing_rtt(slowest);
        if level == Level::OneRtt {
            if let Some(keys) = self.one_rtt.as_mut() {
                for r in &outcome.acked {
                    keys.on_packet_acked(path_id, r.pn);
                }
            }
        }
        self.count_lost(path_id, &outcome.lost);
        if space == SpaceId::Data {
            self.mtu_on_ack_and_loss(now, path_id, &outcome.acked, &outcome.lost);
        }
        self.ecn_on_lost(path_id, outcome.lost.len() as u64);
        self.ecn_on_ack(
            path_id,
            space,
            ack.ecn,
            outcome.acked.len() as u64,
            outcome.ecn_ce_increased,
        );
        let mut stream_bytes = 0u64;
        for r in outcome.acked.drain(..) {
            stream_bytes = stream_bytes.saturating_add(self.on_records_acked(r.frames));
        }
        if let Some(p) = self.paths.get_mut(&path_id) {
            p.stream_bytes_acked = p.stream_bytes_acked.saturating_add(stream_bytes);
            p.recovery.recycle_acked(outcome.acked);
        }
        for r in outcome.lost {
            self.on_records_lost(r.frames);
        }
        Ok(())
    }

    /// TLS finished: the handshake is complete (RFC 9001 §4.1.1); for the server also confirmed (§4.1.2).
    fn check_handshake_complete(&mut self, now: Instant) {
        if self.handshake_complete || self.tls.is_handshaking() {
            return;
        }
        self.handshake_complete = true;
        if matches!(self.state, State::Handshake) {
            self.state = State::Established;
        }
        self.events.push_back(Event::HandshakeCompleted);
        self.endpoint_events.push_back(EndpointEvent::HandshakeCompleted);
        self.issue_cids();
        if self.side == crate::proto::transport_params::Side::Server {
            // RFC 9001 §4.1.2: "the TLS handshake is considered confirmed at the server when the handshake
            // completes. The server MUST send a HANDSHAKE_DONE frame as soon as the handshake is complete."
            self.handshake_done_pending = true;
            self.on_handshake_confirmed(now);
        }
    }

    /// The handshake is confirmed: discard Handshake keys (RFC 9001 §4.9.2) and arm 1-RTT recovery.
    pub(super) fn on_handshake_confirmed(&mut self, now: Instant) {
        if self.handshake_confirmed {
            return;
        }
        self.handshake_confirmed = true;
        self.queue_new_token();
        self.discard_initial(now);
        // RFC 9001 §4.9.2: "An endpoint MUST discard its Handshake keys when the TLS handshake is confirmed".
        if let Some(s) = self.spaces.get_mut(Level::Handshake) {
            s.keys = None;
            s.discarded = true;
        }
        let mut dropped = Vec::new();
        for p in self.paths.values_mut() {
            dropped.extend(p.recovery.discard_space(now, SpaceId::Handshake));
            p.recovery.on_handshake_confirmed(now);
        }
        drop(dropped);
        if let Some(k) = self.one_rtt.as_mut() {
            k.set_handshake_confirmed();
        }
        self.defer_next_keys(now);
        self.events.push_back(Event::HandshakeConfirmed);
        self.probe_preferred_address(now);
    }

    /// Discards the Initial keys and space (RFC 9001 §4.9.1).
    pub(super) fn discard_initial(&mut self, now: Instant) {
        let Some(s) = self.spaces.get_mut(Level::Initial) else {
            return;
        };
        if s.discarded {
            return;
        }
        s.keys = None;
        s.discarded = true;
        if let Some(p) = self.paths.get_mut(&PathId(0)) {
            drop(p.recovery.discard_space(now, SpaceId::Initial));
        }
    }
}
