//! ECN (RFC 9000 §13.4): outgoing packets are marked ECT(0) while the path's ECN validation has not failed;
//! the peer's ECN counts in ACK frames are checked against what was sent (§13.4.2.1), and a failed check
//! stops marking on that path (§13.4.2.2). CE increases reach the congestion controller through recovery
//! (RFC 9002 §7.1).

use crate::cc::PathId;
use crate::proto::ack_tracker::EcnCodepoint;
use crate::proto::frame::EcnCounts;
use crate::proto::recovery::SpaceId;

use super::Connection;

/// Packets lost while ECN is still being tested after which marking is assumed to cause the loss (RFC 9000
/// §13.4.2: "If all packets marked with non-zero ECN codepoints are subsequently lost, it can disable marking
/// on the assumption that the marking caused the loss.").
const TESTING_LOSS_LIMIT: u64 = 10;

/// Where ECN validation of a path stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EcnStatus {
    /// Packets are marked ECT(0); no ACK has confirmed the peer's counts yet.
    Testing,
    /// The peer's counts matched what we sent: marking continues.
    Capable,
    /// Validation failed (counts missing, decreasing or too low, or every marked packet lost): no marking.
    Failed,
}

/// The ECN state of one path.
#[derive(Debug, Clone)]
pub(super) struct EcnPath {
    pub(super) status: EcnStatus,
    /// The largest counts the peer reported, per space (Initial, Handshake, application data).
    last: [EcnCounts; 3],
    lost_while_testing: u64,
    /// ECN-CE increases reported by the peer (each one a congestion signal).
    pub(super) ce_events: u64,
}

impl Default for EcnPath {
    fn default() -> Self {
        let zero = EcnCounts {
            ect0: crate::proto::coding::VarInt::ZERO,
            ect1: crate::proto::coding::VarInt::ZERO,
            ce: crate::proto::coding::VarInt::ZERO,
        };
        EcnPath {
            status: EcnStatus::Testing,
            last: [zero; 3],
            lost_while_testing: 0,
            ce_events: 0,
        }
    }
}

impl EcnPath {
    /// The codepoint of the next datagram.
    pub(super) fn codepoint(&self) -> Option<EcnCodepoint> {
        (self.status != EcnStatus::Failed).then_some(EcnCodepoint::Ect0)
    }

    /// Checks an ACK frame of `space` that newly acknowledged `newly_acked` packets (all sent ECT(0)-marked
    /// while validation had not failed).
    pub(super) fn on_ack(
        &mut self,
        space: SpaceId,
        counts: Option<EcnCounts>,
        newly_acked: u64,
        ce_increased: bool,
    ) {
        if ce_increased {
            self.ce_events += 1;
        }
        if self.status == EcnStatus::Failed || newly_acked == 0 {
            return;
        }
        // RFC 9000 §13.4.2.1: "If an ACK frame newly acknowledges a packet that the endpoint sent with either the
        // ECT(0) or ECT(1) codepoint set, ECN validation fails if the corresponding ECN counts are not present in
        // the ACK frame."
        let Some(c) = counts else {
            self.status = EcnStatus::Failed;
            return;
        };
        let Some(last) = self.last.get_mut(space as usize) else {
            return;
        };
        let (e0, e1, ce) = (c.ect0.into_inner(), c.ect1.into_inner(), c.ce.into_inner());
        let (l0, l1, lce) = (
            last.ect0.into_inner(),
            last.ect1.into_inner(),
            last.ce.into_inner(),
        );
        // RFC 9000 §13.4.2.1: "ECN validation also fails if the sum of the increase in ECT(0) and ECN-CE counts
        // is less than the number of newly acknowledged packets that were originally sent with an ECT(0)
        // marking." and: "An endpoint could also use ECN counts [...] detect a network element that is changing
        // the codepoint [...]": counts that decrease, or ECT(1) we never sent, fail validation too.
        let decreased = e0 < l0 || e1 < l1 || ce < lce;
        let increase = e0.saturating_sub(l0).saturating_add(ce.saturating_sub(lce));
        if decreased || e1 > l1 || increase < newly_acked {
            self.status = EcnStatus::Failed;
            return;
        }
        *last = c;
        self.status = EcnStatus::Capable;
    }

    /// Packets were declared lost.
    fn on_lost(&mut self, count: u64) {
        if self.status == EcnStatus::Testing {
            self.lost_while_testing = self.lost_while_testing.saturating_add(count);
            if self.lost_while_testing >= TESTING_LOSS_LIMIT {
                self.status = EcnStatus::Failed;
            }
        }
    }
}

impl Connection {
    /// ECN validation of `path` after an ACK frame of `space`.
    pub(super) fn ecn_on_ack(
        &mut self,
        path: PathId,
        space: SpaceId,
        counts: Option<EcnCounts>,
        newly_acked: u64,
        ce_increased: bool,
    ) {
        if let Some(p) = self.paths.get_mut(&path) {
            p.ecn.on_ack(space, counts, newly_acked, ce_increased);
        }
    }

    /// ECN bookkeeping for packets of `path` declared lost.
    pub(super) fn ecn_on_lost(&mut self, path: PathId, count: u64) {
        if count > 0 {
            if let Some(p) = self.paths.get_mut(&path) {
                p.ecn.on_lost(count);
            }
        }
    }

    /// Where ECN validation of `path` stands.
    pub fn ecn_status(&self, path: PathId) -> Option<EcnStatus> {
        self.paths.get(&path).map(|p| p.ecn.status)
    }
}
