//! The queue of DATAGRAM frames (RFC 9221) the application asked to send: bounded by
//! `ConnectionLimits::datagrams_out` (the oldest is dropped: datagrams are unreliable), and keeping the sum of
//! its payload bytes, which the scheduler's view reads for every packet (ECF's `k`: Lim et al., ACM CoNEXT 2017)
//! without walking the queue.

use std::collections::VecDeque;

use bytes::Bytes;

/// Datagrams waiting to be sent, oldest first, with their total size.
#[derive(Debug, Default)]
pub(super) struct DatagramQueue {
    queue: VecDeque<Bytes>,
    /// Sum of the lengths of `queue`'s datagrams.
    bytes: u64,
}

impl DatagramQueue {
    /// Queues `data`, first dropping the oldest datagrams so that at most `cap` (at least 1) are queued.
    pub(super) fn push(&mut self, data: Bytes, cap: usize) {
        while self.queue.len() >= cap.max(1) {
            self.pop_front();
        }
        self.bytes += data.len() as u64;
        self.queue.push_back(data);
    }

    /// The oldest datagram.
    pub(super) fn front(&self) -> Option<&Bytes> {
        self.queue.front()
    }

    /// Removes the oldest datagram.
    pub(super) fn pop_front(&mut self) -> Option<Bytes> {
        let d = self.queue.pop_front()?;
        self.bytes -= d.len() as u64;
        Some(d)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Payload bytes queued.
    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }
}
