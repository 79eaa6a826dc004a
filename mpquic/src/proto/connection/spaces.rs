//! The Initial and Handshake packet-number spaces (keys and receive-side ACK state; their sent packets live in
//! path 0's recovery), and the CRYPTO streams of every encryption level.
//!
//! A CRYPTO send stream keeps every byte TLS wrote (handshake flights are small) so that any lost range can
//! be sent again; a receive stream reassembles out-of-order data within a bounded window.

use std::collections::BTreeMap;

use crate::proto::ack_tracker::{AckConfig, AckTracker, SpaceKind};
use crate::proto::crypto::{Keys, Level};
use crate::proto::error::{TransportError, TransportErrorCode};
use crate::proto::frame::FrameType;

/// One long-header packet-number space.
#[derive(Debug)]
pub(super) struct Space {
    pub(super) keys: Option<Keys>,
    pub(super) ack: AckTracker,
    /// Whether the keys were discarded (packets of this level are dropped from then on).
    pub(super) discarded: bool,
}

/// The two long-header packet-number spaces, named (RFC 9000 §12.3: Initial and Handshake; the application
/// data space is per path, in each path's state, under draft-ietf-quic-multipath-21).
#[derive(Debug)]
pub(super) struct LongHeaderSpaces {
    pub(super) initial: Space,
    pub(super) handshake: Space,
}

impl LongHeaderSpaces {
    /// The space of `level`: `None` for 0-RTT and 1-RTT, which have none here.
    pub(super) fn get(&self, level: Level) -> Option<&Space> {
        match level {
            Level::Initial => Some(&self.initial),
            Level::Handshake => Some(&self.handshake),
            Level::ZeroRtt | Level::OneRtt => None,
        }
    }

    /// The space of `level`, mutably: `None` for 0-RTT and 1-RTT.
    pub(super) fn get_mut(&mut self, level: Level) -> Option<&mut Space> {
        match level {
            Level::Initial => Some(&mut self.initial),
            Level::Handshake => Some(&mut self.handshake),
            Level::ZeroRtt | Level::OneRtt => None,
        }
    }

    /// Both spaces, Initial first.
    pub(super) fn iter(&self) -> impl Iterator<Item = &Space> {
        [&self.initial, &self.handshake].into_iter()
    }
}

impl Space {
    pub(super) fn new(kind: SpaceKind, ack: AckConfig) -> Self {
        Space {
            keys: None,
            ack: AckTracker::new(kind, ack),
            discarded: false,
        }
    }
}

/// The CRYPTO stream of one encryption level, both directions.
#[derive(Debug, Default)]
pub(super) struct CryptoStream {
    data: Vec<u8>,
    sent: u64,
    lost: Vec<(u64, u64)>,
    read: u64,
    pending: BTreeMap<u64, Vec<u8>>,
}

impl CryptoStream {
    /// Appends handshake bytes to send.
    pub(super) fn push(&mut self, bytes: &[u8]) {
        self.data.extend_from_slice(bytes);
    }

    /// Whether anything (lost or new) waits to be sent.
    pub(super) fn has_pending(&self) -> bool {
        !self.lost.is_empty() || self.sent < self.data.len() as u64
    }

    /// The next range to send, of at most `max_len` bytes: lost data first.
    pub(super) fn poll(&mut self, max_len: usize) -> Option<(u64, &[u8])> {
        if max_len == 0 {
            return None;
        }
        let max = max_len as u64;
        let (offset, len) = if let Some((off, len)) = self.lost.first().copied() {
            if len > max {
                if let Some(first) = self.lost.first_mut() {
                    *first = (off + max, len - max);
                }
                (off, max)
            } else {
                self.lost.remove(0);
                (off, len)
            }
        } else {
            let total = self.data.len() as u64;
            if self.sent >= total {
                return None;
            }
            let off = self.sent;
            let len = (total - off).min(max);
            self.sent += len;
            (off, len)
        };
        let start = usize::try_from(offset).ok()?;
        let end = start.checked_add(usize::try_from(len).ok()?)?;
        self.data.get(start..end).map(|d| (offset, d))
    }

    /// Sends everything again from offset 0 (the client after a Retry).
    pub(super) fn restart(&mut self) {
        self.sent = 0;
        self.lost.clear();
    }

    /// A CRYPTO frame we sent was lost: send its range again.
    pub(super) fn on_lost(&mut self, offset: u64, len: u64) {
        if len > 0 {
            self.lost.push((offset, len));
        }
    }

    /// Received CRYPTO data at `offset`, accepted up to `limit` bytes beyond the read offset
    /// (`ConnectionLimits::crypto_buffer`); returns the newly contiguous bytes for TLS.
    pub(super) fn on_received(
        &mut self,
        offset: u64,
        data: &[u8],
        limit: u64,
    ) -> Result<Vec<u8>, TransportError> {
        let end = offset.saturating_add(data.len() as u64);
        // RFC 9000 §7.5: "If an endpoint does not expand its buffer, it MUST close the connection with a
        // CRYPTO_BUFFER_EXCEEDED error code."
        if end > self.read.saturating_add(limit) {
            return Err(TransportError::new(
                TransportErrorCode::CRYPTO_BUFFER_EXCEEDED,
                "CRYPTO data beyond the buffer",
            )
            .with_frame(FrameType::CRYPTO.0));
        }
        if end > self.read {
            let skip = usize::try_from(self.read.saturating_sub(offset)).unwrap_or(0);
            let start = offset.max(self.read);
            let chunk = data.get(skip..).unwrap_or_default();
            let keep = self.pending.get(&start).is_none_or(|v| v.len() < chunk.len());
            if keep {
                self.pending.insert(start, chunk.to_vec());
            }
        }
        let mut out = Vec::new();
        while let Some((&off, _)) = self.pending.first_key_value() {
            if off > self.read {
                break;
            }
            let Some((off, chunk)) = self.pending.pop_first() else {
                break;
            };
            let skip = usize::try_from(self.read - off).unwrap_or(usize::MAX);
            if let Some(fresh) = chunk.get(skip..) {
                out.extend_from_slice(fresh);
                self.read += fresh.len() as u64;
            }
        }
        Ok(out)
    }
}

/// Index of a level in per-level arrays.
pub(super) fn level_index(level: Level) -> usize {
    match level {
        Level::Initial => 0,
        Level::Handshake => 1,
        Level::OneRtt => 2,
        // No CRYPTO stream and no long-header space: out of range of the per-level arrays.
        Level::ZeroRtt => 3,
    }
}
