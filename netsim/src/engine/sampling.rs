//! Sampling: the engine's flows seen through [`SampleSource`].
//!
//! Per scenario path the recorder gets the client's view of the connection path carrying it
//! (`Connection::path_stats`: window, smoothed RTT, bytes in flight, the controller's metrics) and the
//! application bytes attributed to it so far, from which it derives throughput ([`super::paths`]); per flow
//! that reports receiver statistics, the receiving end's out-of-order and unread bytes.

use crate::metrics::{PathSample, ReceiverSample, SampleSource};

use super::flow::Flow;

/// The flows of a run, borrowed for one sampling instant.
#[derive(Debug)]
pub struct Source<'a> {
    /// Every flow, in scenario order.
    pub flows: &'a [Flow],
}

impl SampleSource for Source<'_> {
    fn path_sample(&self, flow: usize, path: usize) -> Option<PathSample> {
        self.flows.get(flow)?.path_sample(path)
    }

    fn receiver_sample(&self, flow: usize) -> Option<ReceiverSample> {
        self.flows.get(flow)?.receiver_sample()
    }
}
