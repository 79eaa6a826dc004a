//! Receiver statistics of the reassembly buffer: how many received bytes wait above a gap (out of order)
//! or unread, and how long bytes wait until the application can read them in order (head-of-line delay).
//! See [`ReassemblyStats`] for the exact definitions.

use std::time::Duration;

/// Receive-side statistics of a connection, summed over its streams (see `docs/receive-windows.md`).
///
/// Occupancy counts bytes the receiver buffers now; the head-of-line (HoL) figures cover every new stream
/// byte received (duplicates are not counted again) once it became readable in order, or was discarded
/// (reset or stopped stream) while waiting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReassemblyStats {
    /// Bytes received and buffered but not readable in order (above a gap), summed over streams, now.
    pub out_of_order_bytes: u64,
    /// Highest value `out_of_order_bytes` reached.
    pub max_out_of_order_bytes: u64,
    /// All received bytes the application has not read yet (in order or not), now.
    pub unread_bytes: u64,
    /// Highest value `unread_bytes` reached.
    pub max_unread_bytes: u64,
    /// Stream bytes received (new bytes only, not duplicates) that the HoL figures cover.
    pub bytes: u64,
    /// Of those, bytes that arrived above a gap (had to wait in the reassembly buffer).
    pub out_of_order: u64,
    /// Head-of-line delay: time from a byte's arrival until it became readable in order (0 for bytes arriving
    /// in order), byte-weighted, over all `bytes`.
    pub hol_delay_mean: Duration,
    /// The byte-weighted 95th percentile of the head-of-line delay over all `bytes`, from a log-scale
    /// histogram: an upper bound of the true value, at most 1/8 (12.5 %) above it.
    pub hol_delay_p95: Duration,
    /// The longest head-of-line delay of any byte (exact).
    pub hol_delay_max: Duration,
}
