//! The perf protocol on the wire: one bidirectional stream per transfer, opened by the client.
//!
//! The client's stream starts with a [`Request`] (15 bytes: magic `MPRF`, version, direction, amount kind,
//! amount). Upload: the client then sends the data and finishes the stream; the server counts and checks it
//! and answers with the byte count it received (8 bytes, big endian) before finishing its side. Download: the
//! client finishes its side after the request; the server sends the data and finishes. Data is the
//! [`pattern`](super::pattern) from offset 0, so that the receiver checks every byte.

use std::time::Duration;

/// The ALPN protocol of mpquic-perf.
pub const ALPN: &[u8] = b"mpquic-perf/1";

const MAGIC: [u8; 4] = *b"MPRF";
const VERSION: u8 = 1;

/// Which way the data flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Client to server.
    Upload,
    /// Server to client (`-R`).
    Download,
}

/// How much one stream carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Amount {
    /// Exactly this many bytes.
    Bytes(u64),
    /// As much as the sender can in this time (millisecond precision on the wire).
    Time(Duration),
}

/// The header of every perf stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Which way the data flows.
    pub direction: Direction,
    /// How much data.
    pub amount: Amount,
}

/// A request that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Not an mpquic-perf stream.
    #[error("not an mpquic-perf request (bad magic)")]
    Magic,
    /// A version this build does not speak.
    #[error("unsupported mpquic-perf protocol version {0} (this build speaks {VERSION})")]
    Version(u8),
    /// An unknown direction or amount kind.
    #[error("malformed mpquic-perf request: bad {0}")]
    Field(&'static str),
}

impl Request {
    /// Encoded length.
    pub const LEN: usize = 15;

    /// The request's bytes.
    pub fn encode(&self) -> [u8; Self::LEN] {
        let mut out = [0; Self::LEN];
        let (kind, value) = match self.amount {
            Amount::Bytes(n) => (0u8, n),
            Amount::Time(d) => (1u8, u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        };
        let dir = match self.direction {
            Direction::Upload => 0u8,
            Direction::Download => 1,
        };
        let head = [MAGIC[0], MAGIC[1], MAGIC[2], MAGIC[3], VERSION, dir, kind];
        for (o, b) in out.iter_mut().zip(head.iter().chain(value.to_be_bytes().iter())) {
            *o = *b;
        }
        out
    }

    /// Parses a request.
    pub fn decode(bytes: &[u8; Self::LEN]) -> Result<Request, WireError> {
        let [m0, m1, m2, m3, version, dir, kind, v @ ..] = *bytes;
        if [m0, m1, m2, m3] != MAGIC {
            return Err(WireError::Magic);
        }
        if version != VERSION {
            return Err(WireError::Version(version));
        }
        let direction = match dir {
            0 => Direction::Upload,
            1 => Direction::Download,
            _ => return Err(WireError::Field("direction")),
        };
        let value = u64::from_be_bytes(v);
        let amount = match kind {
            0 => Amount::Bytes(value),
            1 => Amount::Time(Duration::from_millis(value)),
            _ => return Err(WireError::Field("amount kind")),
        };
        Ok(Request { direction, amount })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_and_have_a_fixed_layout() {
        let r = Request {
            direction: Direction::Download,
            amount: Amount::Time(Duration::from_millis(2500)),
        };
        let b = r.encode();
        assert_eq!(&b[..7], b"MPRF\x01\x01\x01");
        assert_eq!(&b[7..], &2500u64.to_be_bytes());
        assert_eq!(Request::decode(&b), Ok(r));
        let up = Request {
            direction: Direction::Upload,
            amount: Amount::Bytes(7),
        };
        assert_eq!(Request::decode(&up.encode()), Ok(up));
    }

    #[test]
    fn malformed_requests_are_rejected() {
        let mut b = Request {
            direction: Direction::Upload,
            amount: Amount::Bytes(1),
        }
        .encode();
        b[4] = 9;
        assert_eq!(Request::decode(&b), Err(WireError::Version(9)));
        b[4] = 1;
        b[5] = 2;
        assert_eq!(Request::decode(&b), Err(WireError::Field("direction")));
        b[5] = 0;
        b[6] = 5;
        assert_eq!(Request::decode(&b), Err(WireError::Field("amount kind")));
        b[0] = b'X';
        assert_eq!(Request::decode(&b), Err(WireError::Magic));
    }
}
