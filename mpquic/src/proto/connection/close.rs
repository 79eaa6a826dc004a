//! Closing and draining (RFC 9000 §10.2): the connection states after the handshake, the CONNECTION_CLOSE we
//! send, and the transitions caused by a local close, a protocol error, a peer's close and the idle timeout.

use std::time::Instant;

use bytes::Bytes;

use crate::proto::coding::VarInt;
use crate::proto::error::{TransportError, TransportErrorCode};

use super::{Connection, ConnectionError, EndpointEvent, Event};

/// The CONNECTION_CLOSE we send while closing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum CloseFrame {
    /// Type 0x1c.
    Transport {
        code: TransportErrorCode,
        frame_type: u64,
        reason: &'static str,
    },
    /// Type 0x1d.
    Application { code: VarInt, reason: Bytes },
}

/// The life cycle of a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum State {
    Handshake,
    Established,
    /// We sent CONNECTION_CLOSE; we answer further packets with it until `deadline`.
    Closing {
        deadline: Instant,
        frame: CloseFrame,
        send_pending: bool,
    },
    /// The peer closed: we send nothing until `deadline`.
    Draining {
        deadline: Instant,
    },
    Drained,
}

impl State {
    pub(super) fn is_closed(&self) -> bool {
        matches!(
            self,
            State::Closing { .. } | State::Draining { .. } | State::Drained
        )
    }
}

impl Connection {
    /// Closes the connection with an application error code and reason (RFC 9000 §10.2).
    pub fn close(&mut self, now: Instant, code: VarInt, reason: Bytes) {
        if self.state.is_closed() {
            return;
        }
        self.enter_closing(now, CloseFrame::Application { code, reason });
        self.events
            .push_back(Event::ConnectionLost(ConnectionError::LocallyClosed));
    }

    /// Closes the connection because of a protocol error of ours to report.
    pub(super) fn close_with_error(&mut self, now: Instant, err: TransportError) {
        if self.state.is_closed() {
            return;
        }
        tracing::debug!(%err, "closing connection");
        self.enter_closing(
            now,
            CloseFrame::Transport {
                code: err.code,
                frame_type: err.frame_type.unwrap_or(0),
                reason: err.reason,
            },
        );
        self.events
            .push_back(Event::ConnectionLost(ConnectionError::TransportError(err)));
    }

    /// The largest current PTO across paths.
    pub(super) fn largest_pto(&self) -> std::time::Duration {
        self.paths.largest_pto()
    }

    /// Three times the largest current PTO across paths: the closing and draining period.
    pub(super) fn three_pto(&self) -> std::time::Duration {
        self.largest_pto().saturating_mul(3)
    }

    /// The 1-RTT keys just became current (handshake confirmed, or a key update): the next generation may be
    /// derived up to one PTO later (RFC 9001 §6.3; `OneRttKeys` docs).
    pub(super) fn defer_next_keys(&mut self, now: Instant) {
        let at = now + self.largest_pto();
        if let Some(k) = self.one_rtt.as_mut() {
            k.defer_next_keys_until(at);
        }
    }

    fn enter_closing(&mut self, now: Instant, frame: CloseFrame) {
        // RFC 9000 §10.2.1: "An endpoint that has not established state, such as a server that detects an error
        // in an Initial packet, does not enter the closing state", but the closing period costs nothing here.
        let deadline = now + self.three_pto();
        self.state = State::Closing {
            deadline,
            frame,
            send_pending: true,
        };
    }

    /// The peer sent CONNECTION_CLOSE: enter draining (RFC 9000 §10.2.2).
    pub(super) fn on_peer_close(&mut self, now: Instant, reason: ConnectionError) {
        if matches!(self.state, State::Draining { .. } | State::Drained) {
            return;
        }
        let was_closing = matches!(self.state, State::Closing { .. });
        // RFC 9000 §10.2.2: "An endpoint that receives a CONNECTION_CLOSE frame MAY send a single packet
        // containing a CONNECTION_CLOSE frame before entering the draining state"; we do not.
        self.state = State::Draining {
            deadline: now + self.three_pto(),
        };
        if !was_closing {
            self.events.push_back(Event::ConnectionLost(reason));
        }
    }

    /// A packet arrived while closing: answer with CONNECTION_CLOSE again (RFC 9000 §10.2.1).
    pub(super) fn on_packet_while_closing(&mut self) {
        if let State::Closing { send_pending, .. } = &mut self.state {
            *send_pending = true;
        }
    }

    /// The connection is gone.
    pub(super) fn drain(&mut self) {
        if !matches!(self.state, State::Drained) {
            self.state = State::Drained;
            self.endpoint_events.push_back(EndpointEvent::Drained);
            self.qlog_sync(super::qlog::Call::Timeout);
        }
    }

    /// The idle timer fired (RFC 9000 §10.1): the connection is silently closed and its state discarded.
    pub(super) fn on_idle_timeout(&mut self) {
        if !self.state.is_closed() {
            self.events
                .push_back(Event::ConnectionLost(ConnectionError::TimedOut));
        }
        self.drain();
    }
}
