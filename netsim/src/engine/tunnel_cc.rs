//! The outer connection of an uncontrolled tunnel (`cc = "none"`): no congestion control.
//!
//! MPT-GRE forwards every packet it gets at once and leaves congestion control to the end-to-end flows inside
//! it. [`Uncontrolled`] gives every path a window far above any bandwidth-delay product the simulator can
//! build and no pacing rate (so the pacer does nothing, `mpquic`'s `recovery::pacer`): the outer connection
//! then sends each DATAGRAM as soon as it is queued, on the path the scheduler picks, and losses only reach
//! the inner controllers.

use std::time::Instant;

use mpquic::cc::{AckEvent, CcMetrics, CongestionController, CongestionEvent, PathId, SentEvent};
use mpquic::proto::connection::CcFactory;

/// Every path's window: 1 TiB, more than any simulated path holds (a 10 Gbit/s path with a 10 s RTT holds
/// 12.5 GB).
pub const WINDOW: u64 = 1 << 40;

/// No congestion control: a constant, huge window and no pacing.
#[derive(Debug, Default, Clone, Copy)]
pub struct Uncontrolled;

impl CongestionController for Uncontrolled {
    fn name(&self) -> &'static str {
        crate::scenario::tunnel::UNCONTROLLED
    }
    fn on_path_added(&mut self, _path: PathId, _now: Instant, _max_datagram_size: u16) {}
    fn on_path_removed(&mut self, _path: PathId) {}
    fn on_max_datagram_size(&mut self, _path: PathId, _max_datagram_size: u16) {}
    fn on_packet_sent(&mut self, _ev: &SentEvent) {}
    fn on_ack(&mut self, _ev: &AckEvent<'_>) {}
    fn on_congestion(&mut self, _ev: &CongestionEvent) {}
    fn window(&self, _path: PathId) -> u64 {
        WINDOW
    }
    fn pacing_rate(&self, _path: PathId) -> Option<u64> {
        None
    }
    fn metrics(&self, _path: PathId) -> Option<CcMetrics> {
        Some(CcMetrics {
            cwnd: WINDOW,
            ssthresh: None,
            pacing_rate: None,
            state: "uncontrolled",
            extras: Vec::new(),
        })
    }
}

/// The factory the outer connection's transport configuration carries.
pub fn factory() -> CcFactory {
    CcFactory(std::sync::Arc::new(|| Box::new(Uncontrolled)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn window_is_constant_and_there_is_no_pacing() {
        let mut cc = (factory().0)();
        let now = crate::engine::clock::Clock::new().instant(crate::time::SimTime::ZERO);
        cc.on_path_added(PathId(0), now, 1200);
        assert_eq!(cc.window(PathId(0)), WINDOW);
        assert_eq!(cc.window(PathId(7)), WINDOW);
        assert_eq!(cc.pacing_rate(PathId(0)), None);
        assert_eq!(cc.metrics(PathId(0)).unwrap().cwnd, WINDOW);
        assert_eq!(cc.name(), "none");
    }
}
