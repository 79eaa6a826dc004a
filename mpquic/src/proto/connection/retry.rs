//! Address validation on the connection side: the client's handling of Retry (RFC 9000 §17.2.5.2, integrity
//! tag RFC 9001 §5.8) and of NEW_TOKEN (stored for later connections), and the server's NEW_TOKEN issuance
//! after the handshake (RFC 9000 §8.1.3). The endpoint does the stateless half (Retry, INVALID_TOKEN).

use std::sync::{Arc, Mutex};

use bytes::Bytes;

use crate::cc::PathId;
use crate::proto::crypto::{Keys, Level};
use crate::proto::frame::Frame;
use crate::proto::packet::{ConnectionId, RetryPacket};
use crate::proto::token::{LruTokenStore, TokenStore};
use crate::proto::transport_params::Side;

use super::Connection;
use super::frames_out::{FrameRecord, Records};

/// Token and Retry state of a connection.
#[derive(Default)]
pub(crate) struct Tokens {
    /// Client: the Token field of our Initial packets (from a Retry, or a stored NEW_TOKEN token).
    pub(super) initial_token: Bytes,
    /// Client: the Source Connection ID of the Retry we accepted (at most one); server: the
    /// retry_source_connection_id transport parameter.
    pub(super) retry_scid: Option<ConnectionId>,
    /// Client: where NEW_TOKEN tokens go, filed under the server name.
    store: Option<(Arc<Mutex<LruTokenStore>>, String)>,
    /// Server: the Destination Connection ID of the client's Initials (its own choice, or our Retry SCID).
    pub(super) initial_dcid: Option<ConnectionId>,
    /// Server: the NEW_TOKEN token to send after the handshake, and whether it still has to be sent.
    new_token: Option<Bytes>,
    new_token_pending: bool,
}

impl Tokens {
    /// A client's: the token for its first Initial (empty: none) and the store for NEW_TOKEN tokens.
    pub(crate) fn client(token: Bytes, store: Arc<Mutex<LruTokenStore>>, server_name: &str) -> Self {
        Tokens {
            initial_token: token,
            store: Some((store, server_name.to_owned())),
            ..Tokens::default()
        }
    }

    /// A server's: the DCID the client's Initials use, the Retry SCID if there was a Retry, and a NEW_TOKEN
    /// token to give the client once the handshake completes.
    pub(crate) fn server(
        initial_dcid: ConnectionId,
        retry_scid: Option<ConnectionId>,
        new_token: Option<Bytes>,
    ) -> Self {
        Tokens {
            retry_scid,
            initial_dcid: Some(initial_dcid),
            new_token,
            ..Tokens::default()
        }
    }
}

impl Connection {
    /// A Retry packet (client only), `packet` being its bytes (the rest of the datagram).
    pub(super) fn on_retry(&mut self, retry: &RetryPacket<'_>, packet: &[u8]) {
        if self.side != Side::Client {
            return;
        }
        // RFC 9000 §17.2.5.2: "After the client has received and processed an Initial or Retry packet from the
        // server, it MUST discard any subsequent Retry packets that it receives."
        let processed = self.tokens.retry_scid.is_some() || self.stats.packets_received > 0;
        if retry.check_client_may_accept(&self.local_cid, processed).is_err() {
            self.stats.packets_dropped += 1;
            return;
        }
        // RFC 9000 §17.2.5.2: "Clients MUST discard Retry packets that have a Retry Integrity Tag that cannot be
        // validated".
        if !crate::proto::crypto::verify_retry_integrity(self.orig_dcid.as_slice(), packet) {
            self.stats.packets_dropped += 1;
            return;
        }
        // RFC 9000 §17.2.5.2: "A client MUST discard a Retry packet that contains a Source Connection ID field
        // that is identical to the Destination Connection ID field of its Initial packet."
        if retry.scid == self.orig_dcid {
            self.stats.packets_dropped += 1;
            return;
        }
        let Ok(keys) = Keys::initial(&retry.scid, crate::proto::crypto::Side::Client) else {
            return;
        };
        // RFC 9000 §17.2.5.2: "The client MUST use the value from the Source Connection ID field of the Retry
        // packet in the Destination Connection ID field of subsequent packets that it sends." RFC 9001 §5.2:
        // Initial keys are derived from that new Destination Connection ID.
        self.tokens.retry_scid = Some(retry.scid);
        self.tokens.initial_token = Bytes::copy_from_slice(retry.token);
        self.paths.set_initial_remote_cid(PathId(0), retry.scid);
        if let Some(space) = self.spaces.get_mut(Level::Initial) {
            space.keys = Some(keys);
        }
        // RFC 9000 §17.2.5.2: the client "responds to a Retry packet with an Initial packet that includes the
        // provided Retry token to continue connection establishment": the ClientHello is sent again (packet
        // numbers continue, RFC 9000 §17.2.5.3).
        if let Some(c) = self.crypto.get_mut(0) {
            c.restart();
        }
        self.resend_zero_rtt_after_retry(self.last_now);
    }

    /// NEW_TOKEN from the server: keep it for the next connection to this server (RFC 9000 §8.1.3).
    pub(super) fn on_new_token(&mut self, token: Bytes) {
        if let Some((store, name)) = &self.tokens.store {
            if let Ok(mut s) = store.lock() {
                s.insert(name, token);
            }
        }
    }

    /// Server: the handshake is confirmed, the NEW_TOKEN token may go out.
    pub(super) fn queue_new_token(&mut self) {
        if self.side == Side::Server && self.tokens.new_token.is_some() {
            self.tokens.new_token_pending = true;
        }
    }

    /// Whether a NEW_TOKEN frame waits.
    pub(super) fn has_new_token(&self) -> bool {
        self.tokens.new_token_pending
    }

    /// A NEW_TOKEN frame was lost: send it again.
    pub(super) fn on_new_token_lost(&mut self) {
        self.tokens.new_token_pending = self.tokens.new_token.is_some();
    }

    /// Writes the NEW_TOKEN frame if it is due and fits.
    pub(super) fn write_new_token(
        &mut self,
        buf: &mut Vec<u8>,
        end: usize,
        records: &mut Records,
        ack_eliciting: &mut bool,
    ) {
        if !self.tokens.new_token_pending {
            return;
        }
        let Some(token) = self.tokens.new_token.as_ref() else {
            return;
        };
        let frame = Frame::NewToken(token);
        if frame.encoded_len() > end.saturating_sub(buf.len()) {
            return;
        }
        frame.encode(buf);
        self.tokens.new_token_pending = false;
        records.push(FrameRecord::NewToken);
        *ack_eliciting = true;
    }

    /// The Token field of our Initial packets.
    pub(super) fn initial_token(&self) -> Bytes {
        self.tokens.initial_token.clone()
    }

    /// Whether a Retry was accepted (client) or the connection follows one (server).
    pub fn retried(&self) -> bool {
        self.tokens.retry_scid.is_some()
    }
}
