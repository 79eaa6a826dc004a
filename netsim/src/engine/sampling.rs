//! Sampling: the engine's flows seen through [`SampleSource`].
//!
//! Per path the recorder gets the smoothed RTT (`Connection::rtt`) and the bytes delivered so far, from which
//! it derives throughput. The connection does not expose its congestion window, bytes in flight or the
//! controller's metrics yet; those fields are 0 (or empty) until it does.

use crate::metrics::{PathSample, SampleSource};

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
}
