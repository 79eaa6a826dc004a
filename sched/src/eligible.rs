//! The policies every scheduler shares (Linux MPTCP's `mptcp_is_available`), written once: which paths a packet may use
//! at all ([`Eligible`]: the backup rule and the reinjection preference), and [`validate`], the check a connection
//! can run on any decision.
//!
//! **Backup rule.** A path of status [`PathStatus::Backup`] is used only when no available path is alive
//! (validated, not abandoned, not potentially failed) with a window that will open. A live available path
//! whose window is merely full makes the decision [`Decision::Blocked`], not a fall-over to the backup:
//! this is what the Linux MPTCP v0.x kernel does (`get_available_subflow` in `net/mptcp/mptcp_sched.c`
//! returns NULL when an unused active subflow is only temporarily unavailable, the `force` flag), and it is
//! what users of a backup path expect: a metered standby link carries nothing while the primary works.
//! Consequently a backup path is never chosen while an available path can send.
//!
//! **Reinjection rule.** For a retransmission, if some eligible path that the frames were not already sent on
//! can send, only such paths are eligible (Linux MPTCP's `mptcp_is_available`). The kernel also lets a reinjected
//! segment fall to a backup subflow once every active one carried it; we do not, because in QUIC a loss on a live path
//! is usually congestion, and failover is driven by [`PathView::potentially_failed`] instead.

use crate::{ConnView, Decision, InvalidDecision, PathId, PathStatus, PathView};

/// The paths a packet may use, after the backup rule and the reinjection rule of Linux MPTCP's `mptcp_is_available`.
///
/// Obtain it with [`ConnView::eligible`]. [`Eligible::sendable`] are the paths a scheduler may return;
/// [`Eligible::paths`] adds those that cannot send yet but will without a path event, which are the paths
/// worth [`Decision::Wait`]ing for.
#[derive(Clone, Copy, Debug)]
pub struct Eligible<'v, 'a> {
    conn: &'v ConnView<'a>,
    status: PathStatus,
    unused_only: bool,
}

impl<'a> ConnView<'a> {
    /// The eligible paths for this packet, or `None` when no path is alive (then the decision is
    /// [`Decision::Blocked`]).
    pub fn eligible(&self) -> Option<Eligible<'_, 'a>> {
        let size = self.packet_size;
        // Linux MPTCP's `mptcp_is_available`: "Backup subflows are used only when no active subflow can send."
        let status = [PathStatus::Available, PathStatus::Backup]
            .into_iter()
            .find(|s| self.paths.iter().any(|p| p.status == *s && p.may_send(size)))?;
        // Linux MPTCP's `mptcp_is_available`: "A reinjected segment prefers a subflow it has not already been sent on."
        let unused_only = self.is_retransmission
            && self
                .paths
                .iter()
                .any(|p| p.status == status && p.can_send(size) && !self.sent_on.contains(&p.id));
        Some(Eligible {
            conn: self,
            status,
            unused_only,
        })
    }
}

impl<'v, 'a> Eligible<'v, 'a> {
    /// The status tier in use: [`PathStatus::Available`], or [`PathStatus::Backup`] when no available path
    /// is alive.
    pub fn status(&self) -> PathStatus {
        self.status
    }

    /// The connection view this set was computed from.
    pub fn conn(&self) -> &'v ConnView<'a> {
        self.conn
    }

    fn admits(&self, p: &PathView) -> bool {
        p.status == self.status
            && p.may_send(self.conn.packet_size)
            && !(self.unused_only && self.conn.sent_on.contains(&p.id))
    }

    /// Eligible paths that can send now or will without a path event ([`PathView::may_send`]), in the
    /// order of [`ConnView::paths`].
    pub fn paths(&self) -> impl Iterator<Item = &'a PathView> + '_ {
        self.conn.paths.iter().filter(|p| self.admits(p))
    }

    /// Eligible paths that can send now ([`PathView::can_send`]): the only paths a scheduler may return.
    pub fn sendable(&self) -> impl Iterator<Item = &'a PathView> + '_ {
        let size = self.conn.packet_size;
        self.paths().filter(move |p| p.can_send(size))
    }

    /// Whether `p` is eligible and can send now.
    pub fn can_send(&self, p: &PathView) -> bool {
        self.admits(p) && p.can_send(self.conn.packet_size)
    }

    /// The decision for "send nothing now": [`Decision::Wait`] if some eligible path could send (the
    /// scheduler idles on purpose), else [`Decision::Blocked`].
    pub fn idle(&self) -> Decision {
        if self.sendable().next().is_some() {
            Decision::Wait
        } else {
            Decision::Blocked
        }
    }

    /// The eligible path with the lowest smoothed RTT that can send now (ties: lowest path ID): the
    /// minRTT choice of Linux MPTCP's default scheduler.
    pub fn fastest_sendable(&self) -> Option<&'a PathView> {
        fastest(self.sendable())
    }

    /// The eligible path with the lowest smoothed RTT whether or not its window has room now (ties: lowest
    /// path ID): the `x_f` of BLEST and ECF (BLEST (Ferlin et al., IFIP Networking 2016), §1.3).
    pub fn fastest(&self) -> Option<&'a PathView> {
        fastest(self.paths())
    }
}

/// The path with the lowest smoothed RTT (ties: lowest path ID).
pub fn fastest<'a>(paths: impl Iterator<Item = &'a PathView>) -> Option<&'a PathView> {
    paths.min_by_key(|p| (p.srtt, p.id))
}

/// Checks that `decision` names only paths the view says can carry the packet now (the test of
/// [`PathView::can_send`]), and that a [`Decision::Paths`] list is non-empty and free of duplicates.
/// [`Decision::Wait`] and [`Decision::Blocked`] are always valid.
///
/// Built-in schedulers never fail it (a property test checks every registered one); a connection running a
/// user-supplied scheduler can call it and treat an error as [`Decision::Blocked`].
pub fn validate(decision: &Decision, conn: &ConnView<'_>) -> Result<(), InvalidDecision> {
    let check = |id: PathId| -> Result<(), InvalidDecision> {
        let p = conn.path(id).ok_or(InvalidDecision::UnknownPath(id))?;
        if p.can_send(conn.packet_size) {
            Ok(())
        } else {
            Err(InvalidDecision::Unusable(id))
        }
    };
    match decision {
        Decision::Path(id) => check(*id),
        Decision::Paths(ids) => {
            if ids.is_empty() {
                return Err(InvalidDecision::EmptyPaths);
            }
            for (i, id) in ids.iter().enumerate() {
                if ids.iter().take(i).any(|seen| seen == id) {
                    return Err(InvalidDecision::DuplicatePath(*id));
                }
                check(*id)?;
            }
            Ok(())
        }
        Decision::Wait | Decision::Blocked => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn backup_not_used_while_an_available_path_is_alive_even_if_full() {
        let mut a = PathView::new(0, 12_000, ms(10));
        a.bytes_in_flight = 12_000;
        let mut b = PathView::new(1, 12_000, ms(5));
        b.status = PathStatus::Backup;
        let paths = [a.clone(), b.clone()];
        let c = ConnView::new(&paths, 1200);
        let e = c.eligible().unwrap();
        assert_eq!(e.status(), PathStatus::Available);
        assert_eq!(e.sendable().count(), 0);
        assert_eq!(e.idle(), Decision::Blocked);

        a.abandoned = true;
        let paths = [a, b];
        let c = ConnView::new(&paths, 1200);
        let e = c.eligible().unwrap();
        assert_eq!(e.status(), PathStatus::Backup);
        assert_eq!(e.fastest_sendable().map(|p| p.id), Some(PathId(1)));
    }

    #[test]
    fn retransmissions_prefer_paths_not_yet_used() {
        let paths = [PathView::new(0, 12_000, ms(10)), PathView::new(1, 12_000, ms(50))];
        let mut c = ConnView::new(&paths, 1200);
        c.is_retransmission = true;
        let used = [PathId(0)];
        c.sent_on = &used;
        let e = c.eligible().unwrap();
        assert_eq!(e.fastest_sendable().map(|p| p.id), Some(PathId(1)));
    }

    #[test]
    fn validate_rejects_unusable_paths() {
        let mut full = PathView::new(1, 12_000, ms(10));
        full.bytes_in_flight = 11_000;
        let mut unvalidated = PathView::new(2, 12_000, ms(10));
        unvalidated.validated = false;
        let paths = [PathView::new(0, 12_000, ms(10)), full, unvalidated];
        let c = ConnView::new(&paths, 1200);
        assert_eq!(validate(&Decision::Path(PathId(0)), &c), Ok(()));
        assert_eq!(
            validate(&Decision::Path(PathId(1)), &c),
            Err(InvalidDecision::Unusable(PathId(1)))
        );
        assert_eq!(
            validate(&Decision::Path(PathId(2)), &c),
            Err(InvalidDecision::Unusable(PathId(2)))
        );
        assert_eq!(
            validate(&Decision::Path(PathId(9)), &c),
            Err(InvalidDecision::UnknownPath(PathId(9)))
        );
        assert_eq!(
            validate(&Decision::Paths(vec![]), &c),
            Err(InvalidDecision::EmptyPaths)
        );
        assert_eq!(
            validate(&Decision::Paths(vec![PathId(0), PathId(0)]), &c),
            Err(InvalidDecision::DuplicatePath(PathId(0)))
        );
        assert_eq!(validate(&Decision::Wait, &c), Ok(()));
    }

    #[test]
    fn pacing_budget_limits_can_send() {
        let mut p = PathView::new(0, 12_000, ms(10));
        p.pacing_budget = Some(1000);
        assert!(!p.can_send(1200));
        assert!(p.may_send(1200));
        p.pacing_budget = Some(1200);
        assert!(p.can_send(1200));
    }
}
