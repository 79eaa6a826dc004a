//! A set of disjoint, non-adjacent half-open `u64` ranges, kept merged. Used for acknowledged and lost
//! stream byte ranges. The number of entries is bounded by the caller (ranges lie inside a send buffer whose
//! size the application configures).

use std::collections::BTreeMap;
use std::ops::Range;

/// Disjoint half-open ranges `[start, end)`, merged on insertion.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RangeSet {
    /// start → end.
    map: BTreeMap<u64, u64>,
}

impl RangeSet {
    /// Whether the set is empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Number of disjoint ranges.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// Sum of the ranges' lengths.
    pub(crate) fn total(&self) -> u64 {
        self.map.iter().map(|(s, e)| e - s).sum()
    }

    /// The lowest range.
    pub(crate) fn first(&self) -> Option<Range<u64>> {
        self.map.first_key_value().map(|(&s, &e)| s..e)
    }

    /// Adds `r`, merging with overlapping and adjacent ranges.
    pub(crate) fn insert(&mut self, r: Range<u64>) {
        if r.start >= r.end {
            return;
        }
        let (mut start, mut end) = (r.start, r.end);
        // A range starting at or before `start` that reaches it.
        if let Some((&s, &e)) = self.map.range(..=start).next_back() {
            if e >= start {
                start = s;
                end = end.max(e);
                self.map.remove(&s);
            }
        }
        // Ranges starting inside [start, end].
        while let Some((&s, &e)) = self.map.range(start..=end).next() {
            end = end.max(e);
            self.map.remove(&s);
        }
        self.map.insert(start, end);
    }

    /// Removes `r` from the set.
    pub(crate) fn remove(&mut self, r: Range<u64>) {
        if r.start >= r.end {
            return;
        }
        if let Some((&s, &e)) = self.map.range(..r.start).next_back() {
            if e > r.start {
                self.map.insert(s, r.start);
                if e > r.end {
                    self.map.insert(r.end, e);
                    return;
                }
            }
        }
        while let Some((&s, &e)) = self.map.range(r.start..r.end).next() {
            self.map.remove(&s);
            if e > r.end {
                self.map.insert(r.end, e);
                break;
            }
        }
    }

    /// Removes everything below `offset`.
    pub(crate) fn remove_below(&mut self, offset: u64) {
        self.remove(0..offset);
    }

    /// Whether `offset` is covered.
    #[cfg(test)]
    pub(crate) fn contains(&self, offset: u64) -> bool {
        self.map
            .range(..=offset)
            .next_back()
            .is_some_and(|(_, &e)| e > offset)
    }

    /// The end of the range starting exactly at `start`, if there is one.
    pub(crate) fn end_of_range_at(&self, start: u64) -> Option<u64> {
        self.map.get(&start).copied()
    }

    /// Removes all ranges.
    pub(crate) fn clear(&mut self) {
        self.map.clear();
    }

    /// The first gap at or above `from` that has a range of the set above it (a hole), if any: O(log n).
    pub(crate) fn hole_from(&self, from: u64) -> Option<Range<u64>> {
        let mut pos = from;
        if let Some((_, &e)) = self.map.range(..=pos).next_back() {
            pos = pos.max(e);
        }
        let (&s, _) = self.map.range(pos..).next()?;
        (s > pos).then_some(pos..s)
    }

    /// The parts of `r` not covered by the set, in order.
    pub(crate) fn gaps(&self, r: Range<u64>) -> Vec<Range<u64>> {
        let mut out = Vec::new();
        let mut pos = r.start;
        if let Some((_, &e)) = self.map.range(..=pos).next_back() {
            pos = pos.max(e);
        }
        if pos >= r.end {
            return out;
        }
        for (&s, &e) in self.map.range(pos..r.end) {
            if s > pos {
                out.push(pos..s);
            }
            pos = pos.max(e);
        }
        if pos < r.end {
            out.push(pos..r.end);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(s: &RangeSet) -> Vec<Range<u64>> {
        s.map.iter().map(|(&a, &b)| a..b).collect()
    }

    #[test]
    fn insert_merges_and_remove_splits() {
        let mut s = RangeSet::default();
        s.insert(10..20);
        s.insert(30..40);
        s.insert(20..25);
        assert_eq!(ranges(&s), vec![10..25, 30..40]);
        s.insert(5..35);
        assert_eq!(ranges(&s), vec![5..40]);
        s.remove(10..12);
        assert_eq!(ranges(&s), vec![5..10, 12..40]);
        s.remove(0..13);
        assert_eq!(ranges(&s), vec![13..40]);
        s.insert(50..60);
        s.remove(30..55);
        assert_eq!(ranges(&s), vec![13..30, 55..60]);
        assert!(s.contains(13) && !s.contains(30) && s.contains(59) && !s.contains(60));
        assert_eq!(s.gaps(0..70), vec![0..13, 30..55, 60..70]);
        assert_eq!(s.gaps(14..20), Vec::<Range<u64>>::new());
        assert_eq!(s.len(), 2);
        s.remove_below(58);
        assert_eq!(ranges(&s), vec![58..60]);
        assert_eq!(s.end_of_range_at(58), Some(60));
    }
}
