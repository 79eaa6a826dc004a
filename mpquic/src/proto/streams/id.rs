//! Stream identifiers (RFC 9000 §2.1): a 62-bit integer whose two least significant bits give the initiator
//! (bit 0: client 0, server 1) and the direction (bit 1: bidirectional 0, unidirectional 1); the remaining bits
//! are the stream's index among the streams of its type.

use std::fmt;

use crate::proto::coding::VarInt;
use crate::proto::frame::Dir;
use crate::proto::transport_params::Side;

/// The largest number of streams of one type (RFC 9000 §4.6: a count cannot exceed 2^60).
pub const MAX_STREAM_INDEX_COUNT: u64 = 1 << 60;

/// A stream ID (RFC 9000 §2.1). Always below 2^62.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamId(u64);

impl StreamId {
    /// The `index`-th stream of the given initiator and direction, if `index < 2^60`.
    pub fn new(initiator: Side, dir: Dir, index: u64) -> Option<StreamId> {
        if index >= MAX_STREAM_INDEX_COUNT {
            return None;
        }
        let side_bit = match initiator {
            Side::Client => 0,
            Side::Server => 1,
        };
        let dir_bit = match dir {
            Dir::Bi => 0,
            Dir::Uni => 2,
        };
        Some(StreamId(index << 2 | dir_bit | side_bit))
    }

    /// The stream ID carried in a frame.
    pub const fn from_varint(v: VarInt) -> StreamId {
        StreamId(v.into_inner())
    }

    /// The stream ID as a varint (always representable).
    pub fn to_varint(self) -> VarInt {
        VarInt::from_u64(self.0).unwrap_or(VarInt::MAX)
    }

    /// The raw value.
    pub const fn into_inner(self) -> u64 {
        self.0
    }

    /// Which endpoint opened the stream (RFC 9000 §2.1: "The least significant bit (0x01) of the stream ID
    /// identifies the initiator of the stream").
    pub const fn initiator(self) -> Side {
        if self.0 & 1 == 0 {
            Side::Client
        } else {
            Side::Server
        }
    }

    /// The stream's direction (RFC 9000 §2.1: "The second least significant bit (0x02) of the stream ID
    /// distinguishes between bidirectional streams (with the bit set to 0) and unidirectional streams").
    pub const fn dir(self) -> Dir {
        if self.0 & 2 == 0 { Dir::Bi } else { Dir::Uni }
    }

    /// The stream's index among the streams of its type (the ID shifted right by two bits).
    pub const fn index(self) -> u64 {
        self.0 >> 2
    }

    /// Whether `side` can send on this stream: bidirectional streams both ways, unidirectional ones only
    /// from their initiator.
    pub fn can_send(self, side: Side) -> bool {
        self.dir() == Dir::Bi || self.initiator() == side
    }

    /// Whether `side` can receive on this stream.
    pub fn can_recv(self, side: Side) -> bool {
        self.dir() == Dir::Bi || self.initiator() != side
    }
}

impl fmt::Debug for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let who = match self.initiator() {
            Side::Client => "client",
            Side::Server => "server",
        };
        let dir = match self.dir() {
            Dir::Bi => "bi",
            Dir::Uni => "uni",
        };
        write!(f, "{}({who} {dir} #{})", self.0, self.index())
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl From<StreamId> for VarInt {
    fn from(id: StreamId) -> VarInt {
        id.to_varint()
    }
}

/// Index of a direction in per-direction arrays.
pub(crate) const fn dir_index(dir: Dir) -> usize {
    match dir {
        Dir::Bi => 0,
        Dir::Uni => 1,
    }
}

/// The direction at an index of a per-direction array.
pub(crate) const DIRS: [Dir; 2] = [Dir::Bi, Dir::Uni];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc9000_section_2_1_table_1() {
        // RFC 9000 §2.1, Table 1: 0x00 client bidi, 0x01 server bidi, 0x02 client uni, 0x03 server uni.
        let cases = [
            (0, Side::Client, Dir::Bi),
            (1, Side::Server, Dir::Bi),
            (2, Side::Client, Dir::Uni),
            (3, Side::Server, Dir::Uni),
        ];
        for (raw, side, dir) in cases {
            let id = StreamId::new(side, dir, 0).unwrap();
            assert_eq!(id.into_inner(), raw);
            assert_eq!(id.initiator(), side);
            assert_eq!(id.dir(), dir);
            assert_eq!(id.index(), 0);
        }
        let id = StreamId::new(Side::Server, Dir::Uni, 5).unwrap();
        assert_eq!(id.into_inner(), 23);
        assert_eq!(id.index(), 5);
        assert!(StreamId::new(Side::Client, Dir::Bi, MAX_STREAM_INDEX_COUNT).is_none());
        let last = StreamId::new(Side::Server, Dir::Uni, MAX_STREAM_INDEX_COUNT - 1).unwrap();
        assert_eq!(last.to_varint(), VarInt::MAX);
    }

    #[test]
    fn direction_rules() {
        let uni = StreamId::new(Side::Client, Dir::Uni, 1).unwrap();
        assert!(uni.can_send(Side::Client) && !uni.can_recv(Side::Client));
        assert!(!uni.can_send(Side::Server) && uni.can_recv(Side::Server));
        let bi = StreamId::new(Side::Server, Dir::Bi, 1).unwrap();
        assert!(bi.can_send(Side::Client) && bi.can_recv(Side::Client));
        assert_eq!(format!("{bi:?}"), "5(server bi #1)");
    }
}
