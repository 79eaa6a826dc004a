//! The test cases: names (the `TESTCASE` values), the files the client downloads, and what the endpoints do
//! for each (the runner's side — network and checks — is in [`crate::runner::plan`] and
//! [`crate::runner::checks`]).

use std::fmt;
use std::str::FromStr;

use crate::error::InteropError;

/// One megabyte (10^6 bytes), the unit of the file sizes.
pub const MB: u64 = 1_000_000;

/// A test case of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TestCase {
    /// Handshake and one small file.
    Handshake,
    /// 2 + 3 + 5 MB, requested at once on three streams.
    Transfer,
    /// Only TLS_CHACHA20_POLY1305_SHA256 offered and accepted.
    ChaCha20,
    /// The server sends a Retry.
    Retry,
    /// The client starts a key update once data flows.
    KeyUpdate,
    /// 2 % random loss in both directions.
    TransferLoss,
    /// Two 2 s outages of the only path mid-transfer.
    Blackhole,
    /// The client's apparent source port changes mid-transfer (twice).
    RebindPort,
    /// Multipath negotiated by both sides.
    MpHandshake,
    /// Data on both paths of a two-path connection.
    MpTransfer,
    /// The client abandons path 1 mid-transfer.
    MpPathAbandon,
    /// The server abandons path 1 mid-transfer.
    MpPathAbandonServer,
    /// Path 1 is a backup path: the server keeps its data on path 0.
    MpPathStatus,
    /// Path 1 is blackholed for good mid-transfer: the transfer completes on path 0.
    MpFailover,
    /// The client rotates the connection IDs of both paths mid-transfer.
    MpCidRotation,
}

impl TestCase {
    /// Every case, in matrix order.
    pub const ALL: [TestCase; 15] = [
        TestCase::Handshake,
        TestCase::Transfer,
        TestCase::ChaCha20,
        TestCase::Retry,
        TestCase::KeyUpdate,
        TestCase::TransferLoss,
        TestCase::Blackhole,
        TestCase::RebindPort,
        TestCase::MpHandshake,
        TestCase::MpTransfer,
        TestCase::MpPathAbandon,
        TestCase::MpPathAbandonServer,
        TestCase::MpPathStatus,
        TestCase::MpFailover,
        TestCase::MpCidRotation,
    ];

    /// The `TESTCASE` value.
    pub fn name(self) -> &'static str {
        match self {
            TestCase::Handshake => "handshake",
            TestCase::Transfer => "transfer",
            TestCase::ChaCha20 => "chacha20",
            TestCase::Retry => "retry",
            TestCase::KeyUpdate => "keyupdate",
            TestCase::TransferLoss => "transferloss",
            TestCase::Blackhole => "blackhole",
            TestCase::RebindPort => "rebind-port",
            TestCase::MpHandshake => "mp-handshake",
            TestCase::MpTransfer => "mp-transfer",
            TestCase::MpPathAbandon => "mp-path-abandon",
            TestCase::MpPathAbandonServer => "mp-path-abandon-server",
            TestCase::MpPathStatus => "mp-path-status",
            TestCase::MpFailover => "mp-failover",
            TestCase::MpCidRotation => "mp-cid-rotation",
        }
    }

    /// Whether the case needs multipath (the client opens a second path).
    pub fn multipath(self) -> bool {
        matches!(
            self,
            TestCase::MpHandshake
                | TestCase::MpTransfer
                | TestCase::MpPathAbandon
                | TestCase::MpPathAbandonServer
                | TestCase::MpPathStatus
                | TestCase::MpFailover
                | TestCase::MpCidRotation
        )
    }

    /// Whether the client opens a second path (every multipath case but mp-handshake).
    pub fn second_path(self) -> bool {
        self.multipath() && self != TestCase::MpHandshake
    }

    /// The sizes of the files the client downloads, in bytes.
    pub fn file_sizes(self) -> Vec<u64> {
        match self {
            TestCase::Handshake | TestCase::Retry | TestCase::MpHandshake => vec![10_000],
            TestCase::Transfer => vec![2 * MB, 3 * MB, 5 * MB],
            TestCase::ChaCha20 | TestCase::TransferLoss => vec![2 * MB],
            TestCase::KeyUpdate | TestCase::RebindPort => vec![3 * MB],
            TestCase::Blackhole | TestCase::MpPathStatus | TestCase::MpCidRotation => vec![5 * MB],
            TestCase::MpTransfer => vec![10 * MB],
            TestCase::MpPathAbandon | TestCase::MpPathAbandonServer | TestCase::MpFailover => vec![8 * MB],
        }
    }

    /// Only TLS_CHACHA20_POLY1305_SHA256 is offered (client) and accepted (server).
    pub fn chacha_only(self) -> bool {
        self == TestCase::ChaCha20
    }
}

/// Client: bytes received (all files together) after which the client abandons path 1 in mp-path-abandon.
pub const CLIENT_ABANDON_AFTER: u64 = 2 * MB;
/// Server: bytes sent (all responses together) after which the server abandons path 1 in
/// mp-path-abandon-server.
pub const SERVER_ABANDON_AFTER: u64 = 2 * MB;
/// Client: in mp-cid-rotation the client rotates the connection IDs of every path each time it has received
/// this many more bytes, [`CID_ROTATIONS`] times.
pub const CID_ROTATION_EVERY: u64 = MB;
/// How many rotation rounds the client makes in mp-cid-rotation.
pub const CID_ROTATIONS: u64 = 3;

impl fmt::Display for TestCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TestCase {
    type Err = InteropError;

    fn from_str(s: &str) -> Result<TestCase, InteropError> {
        TestCase::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| InteropError::Unknown {
                kind: "test case",
                name: s.to_owned(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for c in TestCase::ALL {
            assert_eq!(c.name().parse::<TestCase>().unwrap(), c);
        }
        assert!("nope".parse::<TestCase>().is_err());
    }
}
