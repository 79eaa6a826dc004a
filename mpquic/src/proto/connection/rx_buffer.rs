//! The receive buffer of [`Connection::handle_datagram`](super::Connection::handle_datagram): a datagram
//! given as a slice is copied into a buffer the connection owns, decrypted in place, and its frames' data
//! is handed on as slices of it ([`bytes::Bytes`]). A new buffer for every datagram costs an allocation of
//! about 1.5 KB (above the size glibc serves from its per-thread cache) and its free.
//!
//! So the connection keeps a handle on the last datagram's buffer, and the next datagram reuses that
//! allocation when nothing else still holds a slice of it ([`Bytes::try_into_mut`]: the handle is the
//! only reference left), as is the case when the application read the data before the next datagram
//! arrived, and for every datagram that carried no stream data. Otherwise (data waiting for a gap to fill,
//! or for the application) it takes a new buffer, and the old one is freed when its last slice goes. The
//! handle pins at most one datagram's buffer per connection. With the buffer kept, receiving a datagram
//! allocates nothing. Callers of
//! [`Connection::handle_datagram_buf`](super::Connection::handle_datagram_buf) pass their own buffer and
//! keep none here; such a call also drops a handle kept from an earlier `handle_datagram` (the runtime's
//! server hands a new connection its first datagram that way, then its own buffers), so that it does not
//! pin that datagram for the connection's lifetime.

use bytes::{Bytes, BytesMut};

/// The last datagram's buffer, kept for reuse (see the module documentation).
#[derive(Debug, Default)]
pub(super) struct RxBuffer {
    last: Option<Bytes>,
}

impl RxBuffer {
    /// A buffer holding a copy of `data`: the last one's allocation when it is free again, otherwise a new
    /// one.
    pub(super) fn fill(&mut self, data: &[u8]) -> BytesMut {
        if let Some(Ok(mut buf)) = self.last.take().map(Bytes::try_into_mut) {
            buf.clear();
            buf.extend_from_slice(data);
            return buf;
        }
        let mut buf = BytesMut::from(data);
        // Splitting makes the buffer reference-counted (the `bytes` crate moves a plain vector into a
        // shared block on the first split); the empty part goes at once. Freezing such a buffer, slicing it
        // and taking it back with `try_into_mut` then allocate nothing, where a plain vector would allocate
        // the shared block again at every freeze. (Only the cost depends on this; the contents do not.)
        drop(buf.split_off(buf.len()));
        buf
    }

    /// Keeps a handle on `payload`, a packet of the datagram being processed (a slice of its buffer).
    pub(super) fn keep(&mut self, payload: &Bytes) {
        self.last = Some(payload.clone());
    }

    /// Drops the handle (the caller passes its own buffers from now on).
    pub(super) fn release(&mut self) {
        self.last = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_the_allocation_once_no_slice_is_left() {
        let mut rx = RxBuffer::default();
        let first = rx.fill(&[1; 1200]).freeze();
        rx.keep(&first);
        let at = first.as_ptr();
        drop(first);
        // Only the kept handle is left: the same memory holds the next datagram.
        let second = rx.fill(&[2; 1100]);
        assert_eq!(second.as_ptr(), at);
        assert_eq!(&second[..], &[2; 1100][..]);
        let second = second.freeze();
        rx.keep(&second);
        // A slice still held (stream data not read yet): a new buffer, the old one untouched.
        let held = second.slice(10..20);
        drop(second);
        let third = rx.fill(&[3; 1300]);
        assert_ne!(third.as_ptr(), at);
        assert_eq!(&third[..], &[3; 1300][..]);
        assert_eq!(&held[..], &[2; 10][..]);
    }

    #[test]
    fn released_handle_pins_nothing() {
        let mut rx = RxBuffer::default();
        let first = rx.fill(&[5; 1200]).freeze();
        rx.keep(&first);
        assert!(!first.is_unique());
        rx.release();
        assert!(first.is_unique());
    }

    #[test]
    fn a_kept_slice_of_a_split_buffer_is_reused_from_its_start() {
        // A coalesced datagram: its packets are split off one buffer, and the kept handle is the last
        // packet's payload (past its header, an offset into the buffer). Once both are dropped, a datagram
        // as long as the first still goes into the same allocation, from its start.
        let mut rx = RxBuffer::default();
        let mut buf = rx.fill(&[7; 1400]);
        let start = buf.as_ptr();
        let head = buf.split_to(600).freeze();
        bytes::Buf::advance(&mut buf, 20);
        let tail = buf.freeze();
        rx.keep(&tail);
        drop(head);
        drop(tail);
        let next = rx.fill(&[9; 1400]);
        assert_eq!(next.as_ptr(), start);
        assert_eq!(&next[..], &[9; 1400][..]);
    }
}
