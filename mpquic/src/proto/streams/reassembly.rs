//! Receiver statistics of the reassembly buffer: how many received bytes wait above a gap (out of order)
//! or unread, and how long bytes wait until the application can read them in order (head-of-line delay).
//! See [`ReassemblyStats`] for the exact definitions.

use std::time::Duration;

/// Receive-side statistics of a connection, summed over its streams (see `docs/receive-windows.md`).
///
/// Occupancy counts bytes the receiver buffers now; the head-of-line (HoL) figures cover every stream byte
/// received (duplicates are not counted again) from the moment it became readable in order. Bytes still
/// waiting above a gap when their stream is reset or stopped never become readable and are not counted.
/// A byte's HoL delay runs from the arrival of the datagram that first brought it to the arrival of the one
/// that filled the last gap below it.
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

/// Sub-buckets per power of two in the head-of-line delay histogram: each bucket spans at most 1/8 of its
/// lower bound, so a percentile read from it is at most 12.5 % above the true value.
const SUB_BUCKETS: u64 = 8;

/// Buckets of the histogram: delays of 0 to 7 ns have one bucket each, then eight per power of two up to
/// 2^64 ns (584 years), so no delay falls outside.
const BUCKETS: usize = 496;

/// The histogram bucket of a delay of `ns` nanoseconds.
fn bucket(ns: u64) -> usize {
    if ns < SUB_BUCKETS {
        return ns as usize;
    }
    // ns ≥ 8, so the exponent is 3 to 63 and the three bits below the leading one pick the sub-bucket.
    let exp = u64::from(63 - ns.leading_zeros());
    let sub = (ns >> (exp - 3)) & (SUB_BUCKETS - 1);
    ((exp - 2) * SUB_BUCKETS + sub) as usize
}

/// The largest delay (ns) that falls into bucket `i`.
fn bucket_top(i: usize) -> u64 {
    let i = i as u64;
    if i < SUB_BUCKETS {
        return i;
    }
    let exp = i / SUB_BUCKETS + 2;
    let sub = i % SUB_BUCKETS;
    let width = 1u64 << (exp - 3);
    ((SUB_BUCKETS + sub) << (exp - 3)).saturating_add(width - 1)
}

/// Head-of-line delay over the bytes that became readable: counts, the byte-weighted sum, the maximum and
/// a log-scale histogram of the non-zero delays (allocated at the first one, [`BUCKETS`] counters: 4 KiB).
#[derive(Debug, Clone, Default)]
pub(crate) struct HolStats {
    /// Bytes that became readable in order.
    bytes: u64,
    /// Of those, bytes that waited (a non-zero delay).
    out_of_order: u64,
    /// Σ bytes × delay (ns); u128 cannot overflow (2^64 bytes × 2^64 ns).
    weighted_ns: u128,
    /// The longest delay.
    max: Duration,
    /// Bytes per delay bucket, non-zero delays only (`out_of_order` in total).
    hist: Option<Box<[u64; BUCKETS]>>,
}

impl HolStats {
    /// `n` bytes arrived in order: readable at once, no delay. O(1).
    pub(crate) fn in_order(&mut self, n: u64) {
        self.bytes = self.bytes.saturating_add(n);
    }

    /// `n` bytes became readable after waiting `delay` on average (byte-weighted), the longest of them
    /// `longest`.
    pub(crate) fn waited(&mut self, n: u64, delay: Duration, longest: Duration) {
        if delay.is_zero() && longest.is_zero() {
            self.in_order(n);
            return;
        }
        self.bytes = self.bytes.saturating_add(n);
        self.out_of_order = self.out_of_order.saturating_add(n);
        let ns = u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX);
        self.weighted_ns = self
            .weighted_ns
            .saturating_add(u128::from(n).saturating_mul(u128::from(ns)));
        self.max = self.max.max(longest).max(delay);
        let hist = self.hist.get_or_insert_with(|| Box::new([0; BUCKETS]));
        if let Some(b) = hist.get_mut(bucket(ns)) {
            *b = b.saturating_add(n);
        }
    }

    /// The byte-weighted mean delay.
    fn mean(&self) -> Duration {
        match self.weighted_ns.checked_div(u128::from(self.bytes)) {
            Some(ns) => Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX)),
            None => Duration::ZERO,
        }
    }

    /// The byte-weighted 95th percentile (nearest rank: the smallest delay that at least 95 % of the bytes
    /// do not exceed), as the top of its histogram bucket, and never above the maximum.
    fn p95(&self) -> Duration {
        // rank = ⌈0.95 · bytes⌉, the 1-based index of the byte in delay order.
        let rank = (u128::from(self.bytes) * 95).div_ceil(100);
        let mut seen = u128::from(self.bytes - self.out_of_order.min(self.bytes));
        if seen >= rank {
            return Duration::ZERO;
        }
        let Some(hist) = &self.hist else {
            return Duration::ZERO;
        };
        for (i, &n) in hist.iter().enumerate() {
            seen += u128::from(n);
            if seen >= rank {
                return Duration::from_nanos(bucket_top(i)).min(self.max);
            }
        }
        self.max
    }
}

/// A receiving stream's share of the buffer: unread bytes and, of those, bytes above the first gap.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Occupancy {
    /// Buffered bytes the application has not read.
    pub(crate) unread: u64,
    /// Of those, bytes above the first gap.
    pub(crate) out_of_order: u64,
}

/// The connection's reassembly figures: occupancy summed over its streams (kept up to date by each
/// stream's change, O(1)) and the head-of-line delay of every byte.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reassembly {
    /// Current occupancy over all streams.
    now: Occupancy,
    /// The highest of each.
    max: Occupancy,
    /// Head-of-line delay.
    pub(crate) hol: HolStats,
}

impl Reassembly {
    /// One stream's occupancy went from `before` to `after`.
    pub(crate) fn recount(&mut self, before: Occupancy, after: Occupancy) {
        let apply = |total: u64, b: u64, a: u64| total.saturating_add(a).saturating_sub(b);
        self.now.unread = apply(self.now.unread, before.unread, after.unread);
        self.now.out_of_order = apply(self.now.out_of_order, before.out_of_order, after.out_of_order);
        self.max.unread = self.max.unread.max(self.now.unread);
        self.max.out_of_order = self.max.out_of_order.max(self.now.out_of_order);
    }

    /// The figures for [`ReassemblyStats`].
    pub(crate) fn stats(&self) -> ReassemblyStats {
        ReassemblyStats {
            out_of_order_bytes: self.now.out_of_order,
            max_out_of_order_bytes: self.max.out_of_order,
            unread_bytes: self.now.unread,
            max_unread_bytes: self.max.unread,
            bytes: self.hol.bytes,
            out_of_order: self.hol.out_of_order,
            hol_delay_mean: self.hol.mean(),
            hol_delay_p95: self.hol.p95(),
            hol_delay_max: self.hol.max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_an_eighth_wide() {
        for i in 0..BUCKETS - 1 {
            assert_eq!(bucket(bucket_top(i)), i, "top of {i}");
            assert_eq!(bucket(bucket_top(i) + 1), i + 1, "past the top of {i}");
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
        assert_eq!(bucket_top(BUCKETS - 1), u64::MAX);
        // 1 ms = 1 000 000 ns lies in [2^19, 2^20): the bucket starting at (8 + 7) · 2^16 = 983 040 ns
        // spans 2^16 ns, so its top is 1 048 575 ns, 4.9 % above 1 ms.
        assert_eq!(bucket_top(bucket(1_000_000)), 1_048_575);
        for ns in [8u64, 100, 12_345, 1_000_000, 987_654_321] {
            let top = bucket_top(bucket(ns));
            assert!(top >= ns && (top - ns) * 8 <= ns, "{ns} -> {top}");
        }
    }
}
