//! [`ConnectionId`]: a QUIC connection ID of at most 20 bytes (RFC 9000 §5.1, §17.2), stored inline so that
//! copying one out of a received datagram never allocates.

use std::fmt;
use std::ops::Deref;

use bytes::BufMut;

use crate::proto::coding::{Decoder, UnexpectedEnd};

/// The longest connection ID QUIC version 1 allows (RFC 9000 §17.2: "In QUIC version 1, this value MUST NOT
/// exceed 20 bytes.").
pub const MAX_CID_SIZE: usize = 20;

/// A connection ID of 0 to [`MAX_CID_SIZE`] bytes.
///
/// Invariant: the bytes past `len` are zero, so the derived equality, ordering and hashing only see the ID.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ConnectionId {
    len: u8,
    bytes: [u8; MAX_CID_SIZE],
}

impl ConnectionId {
    /// The zero-length connection ID.
    pub const EMPTY: ConnectionId = ConnectionId {
        len: 0,
        bytes: [0; MAX_CID_SIZE],
    };

    /// A connection ID holding `bytes`, or `None` if it is longer than [`MAX_CID_SIZE`].
    pub fn new(bytes: &[u8]) -> Option<Self> {
        let mut cid = Self::EMPTY;
        cid.bytes.get_mut(..bytes.len())?.copy_from_slice(bytes);
        cid.len = u8::try_from(bytes.len()).ok()?;
        Some(cid)
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Whether this is the zero-length connection ID.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The ID's bytes.
    pub fn as_slice(&self) -> &[u8] {
        // `len` never exceeds MAX_CID_SIZE (constructor invariant); `get` keeps this panic-free regardless.
        self.bytes.get(..self.len()).unwrap_or(&[])
    }

    /// Writes the one-byte length followed by the ID (the long-header and NEW_CONNECTION_ID layout).
    pub fn encode_with_len<B: BufMut>(&self, buf: &mut B) {
        buf.put_u8(self.len);
        buf.put_slice(self.as_slice());
    }

    /// Reads a one-byte length and the ID. `Ok(None)` when the length exceeds [`MAX_CID_SIZE`] (the bytes are
    /// still consumed, so the caller can decide whether that is an error).
    pub fn decode_with_len(d: &mut Decoder<'_>) -> Result<Option<Self>, UnexpectedEnd> {
        let len = d.u8()?;
        let bytes = d.bytes(usize::from(len))?;
        Ok(Self::new(bytes))
    }
}

impl Deref for ConnectionId {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for ConnectionId {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl fmt::Debug for ConnectionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for ConnectionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("<empty>");
        }
        for b in self.as_slice() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_longer_than_20_bytes() {
        assert!(ConnectionId::new(&[0; 20]).is_some());
        assert!(ConnectionId::new(&[0; 21]).is_none());
        let mut buf = vec![21u8];
        buf.extend_from_slice(&[7; 21]);
        assert_eq!(ConnectionId::decode_with_len(&mut Decoder::new(&buf)), Ok(None));
    }

    #[test]
    fn equality_ignores_storage_and_round_trips() {
        let a = ConnectionId::new(&[1, 2, 3]).unwrap();
        assert_eq!(a, ConnectionId::new(&[1, 2, 3]).unwrap());
        assert_ne!(a, ConnectionId::new(&[1, 2, 3, 0]).unwrap());
        assert_eq!(a.to_string(), "010203");
        let mut buf = Vec::new();
        a.encode_with_len(&mut buf);
        assert_eq!(buf, [3, 1, 2, 3]);
        assert_eq!(
            ConnectionId::decode_with_len(&mut Decoder::new(&buf)),
            Ok(Some(a))
        );
    }
}
