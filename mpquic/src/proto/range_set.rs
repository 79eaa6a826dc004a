//! A set of `u64` kept as sorted, coalesced, **inclusive** ranges (`start..=end`), with an optional bound on
//! the number of ranges.
//!
//! Invariants: ranges never overlap and are never adjacent (two ranges are always separated by at least one
//! value that is not in the set), so the representation of a given set is unique. Inclusive bounds let the
//! set hold `u64::MAX` and match the `RangeInclusive` ranges the ACK codec takes
//! ([`crate::proto::frame::encode_ack`]).
//!
//! When an insertion makes the set hold more ranges than its bound, the **lowest** ranges are dropped: that
//! is what an ACK tracker wants (RFC 9000 §13.2.3: "An ACK frame is expected to fit within a single QUIC
//! packet. If it does not, then older ranges (those with the smallest packet numbers) are omitted."). The set
//! remembers a low-water mark, [`RangeSet::floor`]: every value below it was removed by
//! [`RangeSet::remove_below`] or dropped by the bound.
//!
//! # Representation and cost
//! The ranges sit in a `VecDeque`, in increasing order. An ACK tracker's set holds a few ranges (its bound
//! is 64 by default) and is used at both ends: packets arriving in order extend the highest range, and
//! acknowledged ACKs cut the lowest one. Those cases, and a lookup at or above the highest range, take a
//! few instructions and no tree walk; any other lookup is a binary search, and an insertion or removal
//! in the middle moves at most `len` ranges of 16 bytes. Nothing is allocated beyond the deque, which
//! holds at most `max_ranges + 1` ranges.

use std::collections::VecDeque;
use std::collections::vec_deque;
use std::ops::RangeInclusive;

/// A set of `u64` stored as coalesced inclusive ranges; see the [module documentation](self).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeSet {
    /// `(start, end)` (inclusive), increasing, non-overlapping and non-adjacent.
    ranges: VecDeque<(u64, u64)>,
    /// At most this many ranges are kept (≥ 1).
    max_ranges: usize,
    /// Every value below this was removed or dropped.
    floor: u64,
}

impl Default for RangeSet {
    fn default() -> Self {
        Self::new()
    }
}

impl RangeSet {
    /// An empty set with no bound on the number of ranges.
    pub fn new() -> Self {
        Self::with_max_ranges(usize::MAX)
    }

    /// An empty set that keeps at most `max_ranges` ranges (at least 1), dropping the lowest ones.
    pub fn with_max_ranges(max_ranges: usize) -> Self {
        RangeSet {
            ranges: VecDeque::new(),
            max_ranges: max_ranges.max(1),
            floor: 0,
        }
    }

    /// The bound on the number of ranges.
    pub fn max_ranges(&self) -> usize {
        self.max_ranges
    }

    /// The low-water mark: every value below it was removed by [`RangeSet::remove_below`] or dropped because
    /// the set held too many ranges. 0 until either happened. Values below it may be inserted again.
    pub fn floor(&self) -> u64 {
        self.floor
    }

    /// Number of ranges.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The smallest value.
    pub fn min(&self) -> Option<u64> {
        self.ranges.front().map(|(s, _)| *s)
    }

    /// The largest value.
    pub fn max(&self) -> Option<u64> {
        self.ranges.back().map(|(_, e)| *e)
    }

    /// Whether `v` is in the set.
    pub fn contains(&self, v: u64) -> bool {
        self.range_containing(v).is_some()
    }

    /// The range that holds `v`, if any.
    pub fn range_containing(&self, v: u64) -> Option<RangeInclusive<u64>> {
        // The highest range first: where new packet numbers fall.
        let &(s, e) = self.ranges.back()?;
        if v > e {
            return None;
        }
        if v >= s {
            return Some(s..=e);
        }
        // The last range starting at or below `v`.
        let i = self.ranges.partition_point(|&(s, _)| s <= v).checked_sub(1)?;
        let &(s, e) = self.ranges.get(i)?;
        (e >= v).then_some(s..=e)
    }

    /// Whether every value of `r` is in the set (true for an empty `r`).
    pub fn contains_all(&self, r: RangeInclusive<u64>) -> bool {
        let (start, end) = r.into_inner();
        start > end || self.range_containing(start).is_some_and(|c| *c.end() >= end)
    }

    /// Inserts `v`. Returns whether the set gained a value (false if `v` was present, or if it formed a new
    /// lowest range that the bound dropped at once).
    pub fn insert(&mut self, v: u64) -> bool {
        self.insert_range(v..=v)
    }

    /// Inserts every value of `r` (nothing if `r` is empty). Returns whether the set gained a value that it
    /// still holds after enforcing the bound.
    pub fn insert_range(&mut self, r: RangeInclusive<u64>) -> bool {
        let (start, end) = r.into_inner();
        if start > end {
            return false;
        }
        // Fast path, packets arriving in order: the new values extend the highest range.
        if let Some(last) = self.ranges.back_mut() {
            if last.1 < start && last.1.saturating_add(1) == start {
                last.1 = end;
                return true;
            }
        }
        // The first range that overlaps or touches the new one (its end is at least `start - 1`), and the
        // ranges after it that start at most at `end + 1`: all merge with it.
        let lo = self.ranges.partition_point(|&(_, e)| e.saturating_add(1) < start);
        let (mut new_start, mut new_end) = (start, end);
        let mut hi = lo;
        while let Some(&(s, e)) = self.ranges.get(hi) {
            if s > end.saturating_add(1) {
                break;
            }
            if hi == lo && s <= start && e >= end {
                return false; // already present
            }
            new_start = new_start.min(s);
            new_end = new_end.max(e);
            hi += 1;
        }
        if hi > lo {
            if let Some(first) = self.ranges.get_mut(lo) {
                *first = (new_start, new_end);
            }
            self.ranges.drain(lo + 1..hi);
        } else {
            self.ranges.insert(lo, (new_start, new_end));
        }
        let mut kept = true;
        while self.ranges.len() > self.max_ranges {
            if let Some((s, e)) = self.ranges.pop_front() {
                kept &= s != new_start;
                self.floor = self.floor.max(e.saturating_add(1));
            }
        }
        kept
    }

    /// Removes every value below `v`, and raises [`RangeSet::floor`] to `v`.
    pub fn remove_below(&mut self, v: u64) {
        self.floor = self.floor.max(v);
        while let Some(first) = self.ranges.front_mut() {
            if first.0 >= v {
                break;
            }
            if first.1 >= v {
                first.0 = v;
                break;
            }
            self.ranges.pop_front();
        }
    }

    /// Removes every value (the floor is kept).
    pub fn clear(&mut self) {
        self.ranges.clear();
    }

    /// The ranges, smallest first; `.rev()` gives them largest first (see also [`RangeSet::iter_desc`]).
    pub fn iter(&self) -> Iter<'_> {
        Iter(self.ranges.iter())
    }

    /// The ranges, largest first.
    pub fn iter_desc(&self) -> std::iter::Rev<Iter<'_>> {
        self.iter().rev()
    }
}

impl<'a> IntoIterator for &'a RangeSet {
    type Item = RangeInclusive<u64>;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// The ranges of a [`RangeSet`], smallest first (double-ended: `.rev()` walks them largest first).
#[derive(Debug, Clone)]
pub struct Iter<'a>(vec_deque::Iter<'a, (u64, u64)>);

impl Iterator for Iter<'_> {
    type Item = RangeInclusive<u64>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(s, e)| *s..=*e)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(s, e)| *s..=*e)
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl std::iter::FusedIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;

    fn ranges(s: &RangeSet) -> Vec<(u64, u64)> {
        s.iter().map(|r| r.into_inner()).collect()
    }

    /// The coalesced ranges of a model set.
    fn model_ranges(m: &BTreeSet<u64>) -> Vec<(u64, u64)> {
        let mut out: Vec<(u64, u64)> = Vec::new();
        for &v in m {
            match out.last_mut() {
                Some((_, e)) if e.checked_add(1) == Some(v) => *e = v,
                _ => out.push((v, v)),
            }
        }
        out
    }

    #[test]
    fn coalesces_and_reports_new_values() {
        let mut s = RangeSet::new();
        assert!(s.insert(5));
        assert!(s.insert(7));
        assert_eq!(ranges(&s), [(5, 5), (7, 7)]);
        assert!(s.insert(6));
        assert_eq!(ranges(&s), [(5, 7)]);
        assert!(!s.insert(6));
        assert!(!s.insert_range(5..=7));
        assert!(s.insert_range(0..=4));
        assert!(s.insert_range(10..=12));
        assert!(s.insert_range(20..=30));
        // One range swallowing two and touching a third.
        assert!(s.insert_range(8..=19));
        assert_eq!(ranges(&s), [(0, 30)]);
        assert_eq!((s.min(), s.max(), s.len()), (Some(0), Some(30), 1));
        #[allow(clippy::reversed_empty_ranges)]
        let empty = 3..=2;
        assert!(!s.insert_range(empty));
    }

    #[test]
    fn holds_u64_max() {
        let mut s = RangeSet::new();
        assert!(s.insert(u64::MAX));
        assert!(s.insert(u64::MAX - 1));
        assert!(s.insert_range(0..=u64::MAX - 3));
        assert_eq!(ranges(&s), [(0, u64::MAX - 3), (u64::MAX - 1, u64::MAX)]);
        assert!(s.insert(u64::MAX - 2));
        assert_eq!(ranges(&s), [(0, u64::MAX)]);
        assert!(s.contains(u64::MAX));
        assert!(s.contains_all(0..=u64::MAX));
    }

    #[test]
    fn iterates_both_ways() {
        let mut s = RangeSet::new();
        for v in [9, 1, 2, 5, 6, 7] {
            s.insert(v);
        }
        let up: Vec<_> = s.iter().collect();
        let down: Vec<_> = s.iter_desc().collect();
        assert_eq!(up, [1..=2, 5..=7, 9..=9]);
        assert_eq!(down, [9..=9, 5..=7, 1..=2]);
        assert_eq!(s.iter().len(), 3);
    }

    #[test]
    fn bound_drops_lowest_ranges_and_raises_floor() {
        let mut s = RangeSet::with_max_ranges(2);
        s.insert(10);
        s.insert(20);
        assert!(s.insert(30));
        assert_eq!(ranges(&s), [(20, 20), (30, 30)]);
        assert_eq!(s.floor(), 11);
        // A new lowest range is dropped at once: nothing was gained.
        assert!(!s.insert(0));
        assert_eq!(ranges(&s), [(20, 20), (30, 30)]);
        // Merging keeps the count: no drop.
        assert!(s.insert(21));
        assert_eq!(ranges(&s), [(20, 21), (30, 30)]);
        assert_eq!(s.floor(), 11);
    }

    #[test]
    fn remove_below_splits_a_range() {
        let mut s = RangeSet::new();
        s.insert_range(0..=10);
        s.insert_range(20..=30);
        s.remove_below(5);
        assert_eq!(ranges(&s), [(5, 10), (20, 30)]);
        s.remove_below(15);
        assert_eq!(ranges(&s), [(20, 30)]);
        assert_eq!(s.floor(), 15);
        s.remove_below(3); // lower: no effect, floor kept
        assert_eq!((ranges(&s), s.floor()), (vec![(20, 30)], 15));
        s.remove_below(31);
        assert!(s.is_empty());
        assert_eq!((s.min(), s.max()), (None, None));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u64),
        InsertRange(u64, u64),
        RemoveBelow(u64),
    }

    fn any_op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0u64..200).prop_map(Op::Insert),
            2 => (0u64..200, 0u64..12).prop_map(|(s, l)| Op::InsertRange(s, s + l)),
            1 => (0u64..200).prop_map(Op::RemoveBelow),
        ]
    }

    proptest! {
        /// Every operation agrees with a `BTreeSet` model that drops its lowest ranges the same way.
        #[test]
        fn matches_btreeset_model(
            max in prop_oneof![Just(usize::MAX), 1usize..6],
            ops in proptest::collection::vec(any_op(), 0..120),
        ) {
            let mut s = RangeSet::with_max_ranges(max);
            let mut m = BTreeSet::new();
            let mut floor = 0u64;
            for op in ops {
                match op {
                    Op::Insert(v) | Op::InsertRange(v, _) => {
                        let (a, b) = match op { Op::InsertRange(a, b) => (a, b), _ => (v, v) };
                        let before = m.clone();
                        m.extend(a..=b);
                        let mut mr = model_ranges(&m);
                        while mr.len() > max {
                            let (lo, hi) = mr.remove(0);
                            for x in lo..=hi { m.remove(&x); }
                            floor = floor.max(hi + 1);
                        }
                        let gained = (a..=b).any(|x| m.contains(&x) && !before.contains(&x));
                        let got = if a == b { s.insert(a) } else { s.insert_range(a..=b) };
                        prop_assert_eq!(got, gained, "{:?}", op);
                    }
                    Op::RemoveBelow(v) => {
                        s.remove_below(v);
                        m.retain(|x| *x >= v);
                        floor = floor.max(v);
                    }
                }
                prop_assert_eq!(ranges(&s), model_ranges(&m));
                prop_assert!(s.len() <= max);
                prop_assert_eq!(s.floor(), floor);
                prop_assert_eq!(s.min(), m.first().copied());
                prop_assert_eq!(s.max(), m.last().copied());
                let desc: Vec<_> = s.iter_desc().map(|r| r.into_inner()).collect();
                let mut mr = model_ranges(&m);
                mr.reverse();
                prop_assert_eq!(desc, mr);
            }
            for v in 0..220 {
                prop_assert_eq!(s.contains(v), m.contains(&v));
            }
            for a in (0..220).step_by(7) {
                for l in 0..10 {
                    prop_assert_eq!(s.contains_all(a..=a + l), (a..=a + l).all(|x| m.contains(&x)));
                }
            }
        }
    }
}
