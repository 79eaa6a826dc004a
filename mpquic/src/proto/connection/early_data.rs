//! 0-RTT (RFC 9001 §4.6, RFC 9000 §7.4.1, §12.3, §17.2.3) and the kind of handshake a connection had.
//!
//! What this module owns, per connection ([`EarlyData`]):
//! - the 0-RTT keys: a client's sealing keys from the start when rustls offers early data (a resumable
//!   session whose ticket allows it and `enable_early_data`), a server's opening keys once rustls accepted
//!   early data in the ClientHello;
//! - on the client, the server transport parameters remembered with the session ticket (rustls keeps them in
//!   the ticket and reports them until the server's new ones arrive), reduced to the subset RFC 9000 §7.4.1
//!   lets 0-RTT use; they set the stream limits and flow-control credit of 0-RTT data;
//! - what became of 0-RTT: offered, accepted, rejected.
//!
//! 0-RTT packets share the application data packet-number space of path 0 with 1-RTT packets (RFC 9000
//! §12.3), so they are tracked by path 0's recovery (`SpaceId::Data`) and acknowledged by the server in
//! 1-RTT packets. The client builds them coalesced after its Initial (RFC 9000 §12.2 order: Initial, 0-RTT,
//! Handshake) or alone; they carry stream control frames, STREAM and DATAGRAM frames only.
//!
//! Invariants:
//! - a client holds 0-RTT keys only until it installs 1-RTT keys (RFC 9001 §4.9.3) or learns of rejection;
//! - a server holds 0-RTT keys only if rustls accepted early data, until its first 1-RTT packet;
//! - on rejection every outstanding application-data packet (all 0-RTT) is removed from recovery and its
//!   frames queued again: the data goes out in 1-RTT packets, same stream IDs and offsets.
//!
//! A server drops 0-RTT packets that arrive before it has their keys (before the Initial with the
//! ClientHello, or after rejecting early data): the endpoint creates connections only from Initials, and the
//! connection counts such packets. The client's loss recovery sends their data again in 1-RTT.

use std::time::Instant;

use crate::cc::PathId;
use crate::proto::coding::VarInt;
use crate::proto::crypto::{DirectionalKeys, Level};
use crate::proto::error::TransportError;
use crate::proto::frame::Frame;
use crate::proto::packet::{OutgoingHeader, PartialDecode};
use crate::proto::recovery::SpaceId;
use crate::proto::transport_params::{Side, TransportParameters};

use super::Connection;
use super::frames_out::Records;

/// How a connection's handshake went ([`Connection::handshake_kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HandshakeKind {
    /// A full handshake, without 0-RTT.
    Full,
    /// A resumed session (a ticket from an earlier connection), without 0-RTT.
    Resumed,
    /// A resumed session whose 0-RTT data the server accepted.
    ZeroRttAccepted,
    /// The client sent 0-RTT data and the server rejected it (the client sent it again in 1-RTT). A server
    /// reports this when it received 0-RTT packets it could not accept.
    ZeroRttRejected,
}

/// What became of 0-RTT on this connection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    /// No 0-RTT: not offered (client) or not accepted yet (server).
    #[default]
    None,
    /// Client: early data offered, the server's answer not known yet.
    Offered,
    /// Accepted by the server.
    Accepted,
    /// Client: rejected by the server.
    Rejected,
}

/// The 0-RTT state of a connection.
#[derive(Debug, Default)]
pub(super) struct EarlyData {
    /// Client: keys that seal our 0-RTT packets; server: keys that open the client's.
    keys: Option<DirectionalKeys>,
    state: State,
    /// Server: 0-RTT keys were installed once (they are never installed again after being discarded).
    had_keys: bool,
    /// Client: the server's remembered transport parameters (the RFC 9000 §7.4.1 subset).
    remembered: Option<TransportParameters>,
    /// 0-RTT packets sent (client) or accepted (server).
    packets: u64,
    /// Server: 0-RTT packets dropped because we had no 0-RTT keys.
    dropped: u64,
}

/// The transport parameters 0-RTT may use: RFC 9000 §7.4.1: "A client MUST NOT use remembered values for the
/// following parameters: ack_delay_exponent, max_ack_delay, initial_source_connection_id,
/// original_destination_connection_id, preferred_address, retry_source_connection_id, and
/// stateless_reset_token." Of the rest we use the limits (RFC 9000 §7.4.1) and max_datagram_frame_size
/// (RFC 9221 §3); idle timeout, UDP payload size, migration and multipath are the new connection's business.
pub(super) fn remembered_subset(p: &TransportParameters) -> TransportParameters {
    TransportParameters {
        initial_max_data: p.initial_max_data,
        initial_max_stream_data_bidi_local: p.initial_max_stream_data_bidi_local,
        initial_max_stream_data_bidi_remote: p.initial_max_stream_data_bidi_remote,
        initial_max_stream_data_uni: p.initial_max_stream_data_uni,
        initial_max_streams_bidi: p.initial_max_streams_bidi,
        initial_max_streams_uni: p.initial_max_streams_uni,
        active_connection_id_limit: p.active_connection_id_limit,
        max_datagram_frame_size: p.max_datagram_frame_size,
        ..TransportParameters::default()
    }
}

/// RFC 9000 §7.4.1: "If 0-RTT data is accepted by the server, the server MUST NOT reduce any limits or alter
/// any values that might be violated by the client with its 0-RTT data. In particular, a server that accepts
/// 0-RTT data MUST NOT set values for the following parameters (Section 18.2) that are smaller than the
/// remembered values of the parameters." RFC 9221 §3: a client that stored max_datagram_frame_size "MUST
/// validate that the new value ... is greater than or equal to the stored value; if not, the client MUST
/// terminate the connection with error PROTOCOL_VIOLATION." The same error for all of them.
pub(super) fn check_not_reduced(
    remembered: &TransportParameters,
    new: &TransportParameters,
) -> Result<(), TransportError> {
    let pairs: [(VarInt, VarInt, &'static str); 7] = [
        (
            remembered.active_connection_id_limit,
            new.active_connection_id_limit,
            "0-RTT accepted with a smaller active_connection_id_limit",
        ),
        (
            remembered.initial_max_data,
            new.initial_max_data,
            "0-RTT accepted with a smaller initial_max_data",
        ),
        (
            remembered.initial_max_stream_data_bidi_local,
            new.initial_max_stream_data_bidi_local,
            "0-RTT accepted with a smaller initial_max_stream_data_bidi_local",
        ),
        (
            remembered.initial_max_stream_data_bidi_remote,
            new.initial_max_stream_data_bidi_remote,
            "0-RTT accepted with a smaller initial_max_stream_data_bidi_remote",
        ),
        (
            remembered.initial_max_stream_data_uni,
            new.initial_max_stream_data_uni,
            "0-RTT accepted with a smaller initial_max_stream_data_uni",
        ),
        (
            remembered.initial_max_streams_bidi,
            new.initial_max_streams_bidi,
            "0-RTT accepted with a smaller initial_max_streams_bidi",
        ),
        (
            remembered.initial_max_streams_uni,
            new.initial_max_streams_uni,
            "0-RTT accepted with a smaller initial_max_streams_uni",
        ),
    ];
    for (old, new, reason) in pairs {
        if new < old {
            return Err(TransportError::protocol_violation(reason));
        }
    }
    if let Some(old) = remembered.max_datagram_frame_size {
        if new.max_datagram_frame_size.unwrap_or(VarInt::ZERO) < old {
            return Err(TransportError::protocol_violation(
                "0-RTT accepted with a smaller max_datagram_frame_size",
            ));
        }
    }
    Ok(())
}

impl Connection {
    // ----- public API -----

    /// How the handshake went: full, resumed, or with 0-RTT accepted or rejected. `None` until the handshake
    /// is complete.
    pub fn handshake_kind(&self) -> Option<HandshakeKind> {
        if !self.handshake_complete {
            return None;
        }
        Some(match self.early.state {
            State::Accepted => HandshakeKind::ZeroRttAccepted,
            State::Rejected => HandshakeKind::ZeroRttRejected,
            State::None | State::Offered if self.early.dropped > 0 && self.side == Side::Server => {
                HandshakeKind::ZeroRttRejected
            }
            State::None | State::Offered => match self.tls.is_resumed() {
                Some(true) => HandshakeKind::Resumed,
                _ => HandshakeKind::Full,
            },
        })
    }

    /// Client: whether 0-RTT packets can be sent now (early data offered, 1-RTT keys not installed yet):
    /// streams opened and data written now leave in 0-RTT packets.
    pub fn is_zero_rtt_available(&self) -> bool {
        self.side == Side::Client && self.early.keys.is_some()
    }

    /// Client: whether early data was offered in this connection's ClientHello.
    pub fn zero_rtt_offered(&self) -> bool {
        self.side == Side::Client && self.early.state != State::None
    }

    /// 0-RTT packets sent (client) or accepted (server).
    pub fn zero_rtt_packets(&self) -> u64 {
        self.early.packets
    }

    /// Test hook: sends these raw frame bytes in the next 0-RTT packet, to break RFC 9000 §12.4 on purpose.
    #[cfg(test)]
    pub(crate) fn inject_zero_rtt_frame_for_test(&mut self, frame: Vec<u8>) {
        self.injected.zero_rtt.push(frame);
    }

    // ----- client -----

    /// Client, at creation: if rustls offers early data, take the 0-RTT keys and apply the remembered
    /// transport parameters to the stream layer (RFC 9000 §7.4.1: "Remembered transport parameters apply to
    /// the new connection until the handshake completes and the client starts sending 1-RTT packets").
    pub(super) fn init_client_early_data(&mut self) {
        let Some(keys) = self.tls.zero_rtt_keys() else {
            return;
        };
        let remembered = self
            .tls
            .peer_transport_params()
            .and_then(|raw| TransportParameters::decode(raw, Side::Server).ok())
            .map(|p| remembered_subset(&p));
        let Some(remembered) = remembered else {
            // No usable parameters: without limits no 0-RTT data could be sent anyway.
            tracing::debug!("0-RTT offered by TLS but no remembered transport parameters: not used");
            return;
        };
        self.streams.set_peer_params(&remembered);
        self.early.remembered = Some(remembered);
        self.early.keys = Some(keys);
        self.early.state = State::Offered;
        tracing::debug!("0-RTT keys available: early data offered");
    }

    /// The parameters 0-RTT data obeys while the server's are unknown (client).
    pub(super) fn remembered_params(&self) -> Option<&TransportParameters> {
        self.early.remembered.as_ref()
    }

    /// Client: the server's transport parameters arrived with EncryptedExtensions, and with them the server's
    /// answer to our early data.
    pub(super) fn on_early_data_decided(
        &mut self,
        now: Instant,
        params: &TransportParameters,
    ) -> Result<(), TransportError> {
        if self.side != Side::Client || self.early.state != State::Offered {
            return Ok(());
        }
        if self.tls.is_early_data_accepted() {
            self.early.state = State::Accepted;
            tracing::debug!("0-RTT accepted");
            if let Some(old) = &self.early.remembered {
                check_not_reduced(old, params)?;
            }
            return Ok(());
        }
        self.early.state = State::Rejected;
        // RFC 9001 §5.6: "A client SHOULD stop sending 0-RTT data if it receives an indication that 0-RTT data
        // has been rejected."
        self.early.keys = None;
        // RFC 9001 §4.6.2: "When 0-RTT is rejected, all connection characteristics that the client assumed might
        // be incorrect ... The client therefore MUST reset the state of all streams": nothing the server
        // received counts. Every 0-RTT packet is lost; their frames (stream data from offset 0, stream control)
        // are queued again and go out in 1-RTT packets. DATAGRAMs are not repeated (RFC 9221: unreliable).
        let lost = self
            .paths
            .get_mut(&PathId(0))
            .map(|p| p.recovery.drain_rejected_0rtt(now))
            .unwrap_or_default();
        tracing::debug!(
            packets = lost.len(),
            "0-RTT rejected: data queued again for 1-RTT"
        );
        for r in lost {
            self.on_records_lost(r.frames);
        }
        Ok(())
    }

    /// Client: a Retry arrived. RFC 9000 §17.2.3: "After a client receives a Retry packet, 0-RTT packets are
    /// likely to have been lost or discarded by the server. A client SHOULD attempt to resend data in 0-RTT
    /// packets after it sends a new Initial packet." (RFC 9001 §4.6.2: a Retry does not reject 0-RTT.)
    pub(super) fn resend_zero_rtt_after_retry(&mut self, now: Instant) {
        if self.early.keys.is_none() {
            return;
        }
        let lost = self
            .paths
            .get_mut(&PathId(0))
            .map(|p| p.recovery.drain_rejected_0rtt(now))
            .unwrap_or_default();
        for r in lost {
            self.on_records_lost(r.frames);
        }
    }

    /// Keys changed in TLS: a server picks up the 0-RTT keys once rustls accepted early data; a client drops
    /// them when it installs 1-RTT keys.
    pub(super) fn on_tls_keys_for_early_data(&mut self) {
        match self.side {
            Side::Server => {
                if self.early.had_keys {
                    return;
                }
                if let Some(keys) = self.tls.zero_rtt_keys() {
                    self.early.keys = Some(keys);
                    self.early.had_keys = true;
                    self.early.state = State::Accepted;
                    tracing::debug!("0-RTT accepted: keys installed");
                }
            }
            Side::Client => {
                // RFC 9001 §4.9.3: "a client MUST discard 0-RTT keys as soon as it installs 1-RTT keys as they
                // have no further use."
                if self.one_rtt.is_some() {
                    self.early.keys = None;
                }
            }
        }
    }

    /// Whether a 0-RTT packet is due on path 0 (client): data or stream control frames wait, and the
    /// congestion window has room.
    pub(super) fn zero_rtt_has_work(&self) -> bool {
        if self.side != Side::Client || self.early.keys.is_none() || self.one_rtt.is_some() {
            return false;
        }
        let wants = self.streams.has_stream_data()
            || self.streams.has_control_frames()
            || !self.datagrams_out.is_empty()
            || self.injected.has_zero_rtt();
        wants
            && self
                .paths
                .get(&PathId(0))
                .is_some_and(|p| p.cwnd_allows(self.cc.as_ref()))
    }

    /// Builds one 0-RTT packet on path 0 at the end of `buf`, ending at most at offset `max_size` (RFC 9000
    /// §17.2.3). It carries what RFC 9000 §12.4 allows and the client has: stream control frames, STREAM and
    /// DATAGRAM frames; no ACK (RFC 9000 §17.2.3: "a client cannot send an ACK frame in a 0-RTT packet"),
    /// no CRYPTO. Returns whether a packet was written.
    pub(super) fn build_zero_rtt_packet(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        max_size: usize,
        pad_to: Option<usize>,
    ) -> bool {
        let start = buf.len();
        let Some(parts) = self.header_parts(Level::ZeroRtt, SpaceId::Data, PathId(0)) else {
            return false;
        };
        let (pn, pn_len) = (parts.pn, parts.pn_len);
        let header = OutgoingHeader::ZeroRtt {
            dcid: &parts.dcid,
            scid: &parts.scid,
        };
        if start + header.encoded_len(pn_len) + super::send::TAG_LEN + 8 > max_size {
            return false;
        }
        let pe = header.encode(pn, pn_len, buf);
        let body_start = buf.len();
        let end = max_size.saturating_sub(super::send::TAG_LEN);
        let mut records: Records = self.records_pool.take();
        while let Some(f) = self.streams.poll_control_frame(end.saturating_sub(buf.len())) {
            f.encode(buf);
            records.push(super::frames_out::FrameRecord::Control(f));
        }
        for f in self.injected.take_zero_rtt() {
            buf.extend_from_slice(&f);
        }
        self.write_data_frames(buf, end, &mut records);
        if buf.len() == body_start {
            buf.truncate(start);
            self.records_pool.give(records);
            return false;
        }
        let sealed = self.seal_packet(
            now,
            Level::ZeroRtt,
            PathId(0),
            pn,
            pe,
            start,
            buf,
            pad_to,
            super::send::Tracking::AckEliciting,
            records,
        );
        if sealed.is_some() {
            self.early.packets += 1;
        }
        sealed.is_some()
    }

    /// The 0-RTT sealing keys (client).
    pub(super) fn zero_rtt_seal_keys(&self) -> Option<&DirectionalKeys> {
        match self.side {
            Side::Client => self.early.keys.as_ref(),
            Side::Server => None,
        }
    }

    // ----- server -----

    /// Removes header and packet protection from a 0-RTT packet (server). `None`: drop it. RFC 9001 §5.6: "A
    /// client MUST NOT attempt to decrypt 0-RTT packets it receives and instead MUST discard them." RFC 9001
    /// §4.6.2: "When rejecting 0-RTT, a server MUST NOT process any 0-RTT packets, even if it could" — a
    /// server that rejected has no 0-RTT keys.
    pub(super) fn unprotect_zero_rtt(
        &mut self,
        pd: PartialDecode,
        packet: &mut [u8],
    ) -> Option<(u64, crate::proto::packet::Header, usize)> {
        if self.side == Side::Client {
            return None;
        }
        let Some(keys) = self.early.keys.as_ref() else {
            self.early.dropped = self.early.dropped.saturating_add(1);
            return None;
        };
        let pn_offset = pd.pn_offset();
        keys.header.remove(packet, pn_offset).ok()?;
        let header = pd.finish(packet).ok()?;
        let largest = self.paths.get(&PathId(0))?.ack.largest_received();
        let pn = header.full_packet_number(largest);
        let len = keys.packet.open(PathId(0), pn, packet, header.header_len).ok()?;
        self.early.packets = self.early.packets.saturating_add(1);
        Some((pn, header, len))
    }

    /// A frame of a 0-RTT packet, beyond RFC 9000 §12.4's table (checked by `check_allowed_in`). RFC 9000
    /// §12.5: "it is not possible to send the following frames in 0-RTT packets for various reasons: ACK,
    /// CRYPTO, HANDSHAKE_DONE, NEW_TOKEN, PATH_RESPONSE, and RETIRE_CONNECTION_ID. A server MAY treat receipt of
    /// these frames in 0-RTT packets as a connection error of type PROTOCOL_VIOLATION." The table covers all
    /// but RETIRE_CONNECTION_ID, which we refuse here (the client has no connection ID of ours to retire yet).
    pub(super) fn check_zero_rtt_frame(frame: &Frame<'_>) -> Result<(), TransportError> {
        if let Frame::RetireConnectionId(_) = frame {
            return Err(
                TransportError::protocol_violation("RETIRE_CONNECTION_ID in a 0-RTT packet")
                    .with_frame(frame.ty().0),
            );
        }
        Ok(())
    }

    /// A 1-RTT packet arrived (server). RFC 9001 §4.9.3: "a server MAY discard 0-RTT keys as soon as it receives
    /// a 1-RTT packet": the client sends no 0-RTT packet after it installed 1-RTT keys, so only reordered ones
    /// are lost, and the client's loss recovery repeats their data in 1-RTT.
    pub(super) fn on_one_rtt_received_for_early_data(&mut self) {
        if self.side == Side::Server && self.early.keys.is_some() {
            self.early.keys = None;
            tracing::debug!("first 1-RTT packet: 0-RTT keys discarded");
        }
    }
}
