//! Wire primitives: QUIC variable-length integers (RFC 9000 §16) and [`Decoder`], a cursor over untrusted
//! bytes whose every read is bounds-checked and returns [`UnexpectedEnd`] instead of panicking.
//!
//! Encoding writes into any [`bytes::BufMut`]; decoding borrows from the input, so frames that carry data
//! (STREAM, CRYPTO, DATAGRAM) can refer to the received datagram without copying.

use std::fmt;

use bytes::BufMut;
use thiserror::Error;

/// The input ended before the value being decoded did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("unexpected end of input")]
pub struct UnexpectedEnd;

/// A value does not fit in a variable-length integer (it is ≥ 2^62).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("value exceeds the variable-length integer range (2^62 - 1)")]
pub struct VarIntBoundsExceeded;

/// A QUIC variable-length integer: an unsigned value below 2^62 (RFC 9000 §16).
#[derive(Default, Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VarInt(u64);

impl VarInt {
    /// The largest representable value, 2^62 − 1.
    pub const MAX: VarInt = VarInt((1 << 62) - 1);
    /// Zero.
    pub const ZERO: VarInt = VarInt(0);

    /// A varint from a value known to be in range at compile time.
    pub const fn from_u32(v: u32) -> VarInt {
        VarInt(v as u64)
    }

    /// A varint from `v`, if `v < 2^62`.
    pub fn from_u64(v: u64) -> Result<VarInt, VarIntBoundsExceeded> {
        if v <= Self::MAX.0 {
            Ok(VarInt(v))
        } else {
            Err(VarIntBoundsExceeded)
        }
    }

    /// The value.
    pub const fn into_inner(self) -> u64 {
        self.0
    }

    /// Encoded size in bytes of the shortest encoding of `v` (1, 2, 4 or 8), or `None` when `v ≥ 2^62`.
    pub const fn size_of(v: u64) -> Option<usize> {
        if v < 1 << 6 {
            Some(1)
        } else if v < 1 << 14 {
            Some(2)
        } else if v < 1 << 30 {
            Some(4)
        } else if v < 1 << 62 {
            Some(8)
        } else {
            None
        }
    }

    /// Encoded size in bytes (RFC 9000 §16: the shortest encoding).
    pub const fn size(self) -> usize {
        match Self::size_of(self.0) {
            Some(n) => n,
            None => 8, // unreachable: a VarInt is always < 2^62
        }
    }

    /// Writes the shortest encoding (inlined: an ACK frame writes about ten of them).
    #[inline]
    pub fn encode<B: BufMut>(self, buf: &mut B) {
        let v = self.0;
        match self.size() {
            1 => buf.put_u8(v as u8),
            2 => buf.put_u16(0x4000 | v as u16),
            4 => buf.put_u32(0x8000_0000 | v as u32),
            _ => buf.put_u64(0xc000_0000_0000_0000 | v),
        }
    }

    /// Reads one varint (any of the four lengths; RFC 9000 §16 does not require the shortest).
    pub fn decode(d: &mut Decoder<'_>) -> Result<VarInt, UnexpectedEnd> {
        let first = d.u8()?;
        let len = 1usize << (first >> 6);
        let mut v = u64::from(first & 0x3f);
        for _ in 1..len {
            v = (v << 8) | u64::from(d.u8()?);
        }
        Ok(VarInt(v))
    }
}

impl fmt::Debug for VarInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Display for VarInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<u8> for VarInt {
    fn from(v: u8) -> Self {
        VarInt(u64::from(v))
    }
}

impl From<u16> for VarInt {
    fn from(v: u16) -> Self {
        VarInt(u64::from(v))
    }
}

impl From<u32> for VarInt {
    fn from(v: u32) -> Self {
        VarInt(u64::from(v))
    }
}

impl TryFrom<u64> for VarInt {
    type Error = VarIntBoundsExceeded;
    fn try_from(v: u64) -> Result<Self, Self::Error> {
        VarInt::from_u64(v)
    }
}

impl TryFrom<usize> for VarInt {
    type Error = VarIntBoundsExceeded;
    fn try_from(v: usize) -> Result<Self, Self::Error> {
        VarInt::from_u64(v as u64)
    }
}

impl From<VarInt> for u64 {
    fn from(v: VarInt) -> u64 {
        v.0
    }
}

/// A bounds-checked cursor over untrusted input.
#[derive(Debug, Clone)]
pub struct Decoder<'a> {
    buf: &'a [u8],
}

impl<'a> Decoder<'a> {
    /// A cursor at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Decoder { buf }
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.buf.len()
    }

    /// Whether the input is exhausted.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The unread input.
    pub fn rest(&self) -> &'a [u8] {
        self.buf
    }

    /// Takes the next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], UnexpectedEnd> {
        if n > self.buf.len() {
            return Err(UnexpectedEnd);
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    /// Takes all remaining bytes.
    pub fn take_rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.buf)
    }

    /// Takes `N` bytes as an array.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], UnexpectedEnd> {
        let b = self.bytes(N)?;
        b.try_into().map_err(|_| UnexpectedEnd)
    }

    /// A byte.
    pub fn u8(&mut self) -> Result<u8, UnexpectedEnd> {
        Ok(u8::from_be_bytes(self.array()?))
    }

    /// A big-endian u16.
    pub fn u16(&mut self) -> Result<u16, UnexpectedEnd> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    /// A big-endian u32.
    pub fn u32(&mut self) -> Result<u32, UnexpectedEnd> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    /// A big-endian u64.
    pub fn u64(&mut self) -> Result<u64, UnexpectedEnd> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    /// A variable-length integer.
    pub fn varint(&mut self) -> Result<VarInt, UnexpectedEnd> {
        VarInt::decode(self)
    }

    /// A varint-prefixed byte string.
    pub fn varint_prefixed(&mut self) -> Result<&'a [u8], UnexpectedEnd> {
        let len = self.varint()?.into_inner();
        let len = usize::try_from(len).map_err(|_| UnexpectedEnd)?;
        self.bytes(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn decode_all(bytes: &[u8]) -> Result<(VarInt, usize), UnexpectedEnd> {
        let mut d = Decoder::new(bytes);
        let v = d.varint()?;
        Ok((v, d.remaining()))
    }

    #[test]
    fn rfc9000_appendix_a1_vectors() {
        // RFC 9000 Appendix A.1 sample encodings.
        let cases: &[(&[u8], u64)] = &[
            (
                &[0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c],
                151_288_809_941_952_652,
            ),
            (&[0x9d, 0x7f, 0x3e, 0x7d], 494_878_333),
            (&[0x7b, 0xbd], 15_293),
            (&[0x25], 37),
            (&[0x40, 0x25], 37), // non-minimal two-byte encoding of 37 is valid
        ];
        for (bytes, value) in cases {
            assert_eq!(decode_all(bytes), Ok((VarInt(*value), 0)));
        }
        // The minimal encodings round-trip to the same bytes.
        for (bytes, value) in &cases[..4] {
            let mut out = Vec::new();
            VarInt(*value).encode(&mut out);
            assert_eq!(&out[..], *bytes);
        }
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic() {
        assert_eq!(decode_all(&[]), Err(UnexpectedEnd));
        assert_eq!(decode_all(&[0x40]), Err(UnexpectedEnd));
        assert_eq!(decode_all(&[0x80, 1, 2]), Err(UnexpectedEnd));
        assert_eq!(decode_all(&[0xc0, 1, 2, 3, 4, 5, 6]), Err(UnexpectedEnd));
        let mut d = Decoder::new(&[3, 1, 2]);
        assert_eq!(d.varint_prefixed(), Err(UnexpectedEnd));
    }

    #[test]
    fn bounds() {
        assert_eq!(VarInt::from_u64(1 << 62), Err(VarIntBoundsExceeded));
        assert_eq!(VarInt::from_u64((1 << 62) - 1), Ok(VarInt::MAX));
        assert_eq!(VarInt::size_of(63), Some(1));
        assert_eq!(VarInt::size_of(64), Some(2));
        assert_eq!(VarInt::size_of(16_383), Some(2));
        assert_eq!(VarInt::size_of(16_384), Some(4));
        assert_eq!(VarInt::size_of((1 << 30) - 1), Some(4));
        assert_eq!(VarInt::size_of(1 << 30), Some(8));
        assert_eq!(VarInt::size_of(1 << 62), None);
    }

    proptest! {
        #[test]
        fn round_trip(v in 0u64..(1 << 62), tail in proptest::collection::vec(any::<u8>(), 0..4)) {
            let v = VarInt::from_u64(v).unwrap();
            let mut out = Vec::new();
            v.encode(&mut out);
            prop_assert_eq!(out.len(), v.size());
            out.extend_from_slice(&tail);
            prop_assert_eq!(decode_all(&out), Ok((v, tail.len())));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..16)) {
            let mut d = Decoder::new(&bytes);
            while d.varint().is_ok() {}
        }
    }
}
