//! Administrative state: up or down.
//!
//! A down link drops every packet offered to it ([`super::DropReason::Down`]). Packets accepted while it was
//! up keep their delivery times (the link model cannot take back a [`super::Delivery`] it returned); a caller
//! that wants an outage to also destroy the packets queued or in flight when it began compares the
//! [`OutageEpoch`] recorded in each [`super::Arrival`] with the link's current one when the arrival is due
//! ([`super::Link::outage_since`]). Scheduled changes (down at t₁, up at t₂) are applied by the caller at those
//! times through [`super::Link::set_up`].

/// Counts the outages a link has had: it increases each time the link goes from up to down.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OutageEpoch(pub u64);

/// Up/down state and outage counter.
#[derive(Clone, Debug)]
pub(crate) struct LinkState {
    up: bool,
    epoch: OutageEpoch,
}

impl LinkState {
    pub(crate) fn new(up: bool) -> LinkState {
        LinkState {
            up,
            epoch: OutageEpoch(0),
        }
    }

    pub(crate) fn is_up(&self) -> bool {
        self.up
    }

    pub(crate) fn epoch(&self) -> OutageEpoch {
        self.epoch
    }

    /// Sets the state; going from up to down starts a new outage epoch.
    pub(crate) fn set_up(&mut self, up: bool) {
        if self.up && !up {
            self.epoch = OutageEpoch(self.epoch.0.saturating_add(1));
        }
        self.up = up;
    }
}
