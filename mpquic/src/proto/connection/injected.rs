//! Frames that unit tests inject on purpose to break the protocol (a STREAM frame for a closed stream, a frame
//! not allowed in Initial or 0-RTT packets), to check how the peer reacts. Outside `cfg(test)` the type holds
//! nothing: every query answers "nothing injected" and the production struct carries no test state.

/// Raw frame bytes waiting to be sent in the next packet of a kind.
#[derive(Debug, Default)]
pub(super) struct InjectedFrames {
    /// For the next 1-RTT packet on the control path.
    #[cfg(test)]
    pub(super) one_rtt: Vec<Vec<u8>>,
    /// For the next Initial packet.
    #[cfg(test)]
    pub(super) initial: Vec<Vec<u8>>,
    /// For the next 0-RTT packet.
    #[cfg(test)]
    pub(super) zero_rtt: Vec<Vec<u8>>,
}

impl InjectedFrames {
    /// Whether frames wait for a 1-RTT packet.
    pub(super) fn has_one_rtt(&self) -> bool {
        #[cfg(test)]
        return !self.one_rtt.is_empty();
        #[cfg(not(test))]
        false
    }

    /// Whether frames wait for an Initial packet.
    pub(super) fn has_initial(&self) -> bool {
        #[cfg(test)]
        return !self.initial.is_empty();
        #[cfg(not(test))]
        false
    }

    /// Whether frames wait for a 0-RTT packet.
    pub(super) fn has_zero_rtt(&self) -> bool {
        #[cfg(test)]
        return !self.zero_rtt.is_empty();
        #[cfg(not(test))]
        false
    }

    /// The frames for a 1-RTT packet, in the order they are written (last injected first, as before).
    pub(super) fn take_one_rtt(&mut self) -> Vec<Vec<u8>> {
        #[cfg(test)]
        return std::mem::take(&mut self.one_rtt).into_iter().rev().collect();
        #[cfg(not(test))]
        Vec::new()
    }

    /// The frames for an Initial packet, in injection order.
    pub(super) fn take_initial(&mut self) -> Vec<Vec<u8>> {
        #[cfg(test)]
        return std::mem::take(&mut self.initial);
        #[cfg(not(test))]
        Vec::new()
    }

    /// The frames for a 0-RTT packet, in injection order.
    pub(super) fn take_zero_rtt(&mut self) -> Vec<Vec<u8>> {
        #[cfg(test)]
        return std::mem::take(&mut self.zero_rtt);
        #[cfg(not(test))]
        Vec::new()
    }
}
