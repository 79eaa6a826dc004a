//! A set of disjoint, non-adjacent half-open `u64` ranges, kept merged and sorted. Used for acknowledged and
//! lost stream byte ranges. The number of entries is bounded by the caller (ranges lie inside a send buffer
//! whose size the application configures, and each range is the union of whole STREAM frames the sender
//! sent, so there are at most as many ranges as frames in flight).
//!
//! The ranges are kept in a sorted [`VecDeque`]: acknowledgements arrive mostly at the top of the set (the
//! newest data) and the prefix leaves it at the bottom, so the common operations are O(1) amortised: an
//! insertion at or past the last range appends to it or after it, and [`RangeSet::pop_front`] takes
//! ranges off the front. When two paths carry one stream their
//! acknowledgements interleave offsets: an insertion lands inside the set, found by binary search, and
//! extends a range in place or merges it with its neighbours (the merged ones leave the deque, each
//! once). Only an insertion that neither touches nor overlaps a range, or a merge inside the set, shifts
//! entries: those on the shorter side of it, 16 bytes each. A peer that acknowledges every other packet
//! and then fills the holes from the middle makes each acknowledgement shift up to half the ranges; with
//! the default 8 MiB send buffer and 1200-byte packets that is at most ≈ 3 500 ranges, a 28 KiB move.

use std::collections::VecDeque;
use std::ops::Range;

/// Disjoint half-open ranges `[start, end)`, merged on insertion, sorted by start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RangeSet {
    /// `(start, end)`, sorted, each non-empty, with a gap of at least one between neighbours.
    ranges: VecDeque<(u64, u64)>,
}

impl RangeSet {
    /// Whether the set is empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Number of disjoint ranges.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.ranges.len()
    }

    /// The ranges, lowest first.
    #[cfg(test)]
    pub(crate) fn to_vec(&self) -> Vec<Range<u64>> {
        self.ranges.iter().map(|&(s, e)| s..e).collect()
    }

    /// Sum of the ranges' lengths.
    pub(crate) fn total(&self) -> u64 {
        self.ranges.iter().map(|(s, e)| e - s).sum()
    }

    /// The lowest range.
    pub(crate) fn first(&self) -> Option<Range<u64>> {
        self.ranges.front().map(|&(s, e)| s..e)
    }

    /// Removes and returns the lowest range.
    pub(crate) fn pop_front(&mut self) -> Option<Range<u64>> {
        self.ranges.pop_front().map(|(s, e)| s..e)
    }

    /// Adds `r`, merging with overlapping and adjacent ranges. Returns how many of its bytes were not in
    /// the set before.
    pub(crate) fn insert(&mut self, r: Range<u64>) -> u64 {
        let (start, end) = (r.start, r.end);
        if start >= end {
            return 0;
        }
        // At or past the last range, the common case: append to it or after it.
        match self.ranges.back_mut() {
            None => {
                self.ranges.push_back((start, end));
                return end - start;
            }
            Some(last) if start > last.1 => {
                self.ranges.push_back((start, end));
                return end - start;
            }
            Some(last) if start >= last.0 => {
                let new = end.saturating_sub(last.1);
                last.1 = last.1.max(end);
                return new;
            }
            Some(_) => {}
        }
        // The ranges `first..past` overlap or touch `start..end`: those ending at or after `start` and
        // starting at or before `end`.
        let first = self.ranges.partition_point(|&(_, e)| e < start);
        let past = self.ranges.partition_point(|&(s, _)| s <= end);
        if first >= past {
            self.ranges.insert(first, (start, end));
            return end - start;
        }
        let mut covered = 0;
        let (mut lo, mut hi) = (start, end);
        for &(s, e) in self.ranges.range(first..past) {
            covered += e.min(end).saturating_sub(s.max(start));
            lo = lo.min(s);
            hi = hi.max(e);
        }
        if let Some(slot) = self.ranges.get_mut(first) {
            *slot = (lo, hi);
        }
        self.ranges.drain(first + 1..past);
        (end - start) - covered
    }

    /// Removes `r` from the set.
    pub(crate) fn remove(&mut self, r: Range<u64>) {
        let (start, end) = (r.start, r.end);
        if start >= end {
            return;
        }
        // The ranges `first..past` overlap `start..end`: those ending after `start` and starting before
        // `end`.
        let mut first = self.ranges.partition_point(|&(_, e)| e <= start);
        let mut past = self.ranges.partition_point(|&(s, _)| s < end);
        if first >= past {
            return;
        }
        if let Some(&(s, e)) = self.ranges.get(first) {
            if s < start {
                if let Some(slot) = self.ranges.get_mut(first) {
                    slot.1 = start;
                }
                if e > end {
                    // `r` lies inside this range: split it.
                    self.ranges.insert(first + 1, (end, e));
                    return;
                }
                first += 1;
            }
        }
        if past > first {
            if let Some(slot) = self.ranges.get_mut(past - 1) {
                if slot.1 > end {
                    slot.0 = end;
                    past -= 1;
                }
            }
        }
        if past > first {
            self.ranges.drain(first..past);
        }
    }

    /// Removes everything below `offset`.
    #[cfg(test)]
    pub(crate) fn remove_below(&mut self, offset: u64) {
        while let Some(front) = self.ranges.front_mut() {
            if front.1 <= offset {
                self.ranges.pop_front();
            } else {
                front.0 = front.0.max(offset);
                break;
            }
        }
    }

    /// Whether `offset` is covered.
    #[cfg(test)]
    pub(crate) fn contains(&self, offset: u64) -> bool {
        let i = self.ranges.partition_point(|&(s, _)| s <= offset);
        i > 0 && self.ranges.get(i - 1).is_some_and(|&(_, e)| e > offset)
    }

    /// The end of the range starting exactly at `start`, if there is one.
    #[cfg(test)]
    pub(crate) fn end_of_range_at(&self, start: u64) -> Option<u64> {
        let i = self.ranges.partition_point(|&(s, _)| s < start);
        self.ranges.get(i).filter(|&&(s, _)| s == start).map(|&(_, e)| e)
    }

    /// Removes all ranges.
    pub(crate) fn clear(&mut self) {
        self.ranges.clear();
    }

    /// The first gap at or above `from` that has a range of the set above it (a hole), if any: O(log n).
    pub(crate) fn hole_from(&self, from: u64) -> Option<Range<u64>> {
        // Ranges `..next` start at or below `from`; the one before `next` may cover it.
        let next = self.ranges.partition_point(|&(s, _)| s <= from);
        let pos = match next.checked_sub(1).and_then(|i| self.ranges.get(i)) {
            Some(&(_, e)) => from.max(e),
            None => from,
        };
        let &(s, _) = self.ranges.get(next)?;
        (s > pos).then_some(pos..s)
    }

    /// The parts of `r` not covered by the set, in order.
    pub(crate) fn gaps(&self, r: Range<u64>) -> Vec<Range<u64>> {
        let mut out = Vec::new();
        // Ranges `..next` start at or below `r.start`; the one before `next` may cover its beginning.
        let next = self.ranges.partition_point(|&(s, _)| s <= r.start);
        let mut pos = match next.checked_sub(1).and_then(|i| self.ranges.get(i)) {
            Some(&(_, e)) => r.start.max(e),
            None => r.start,
        };
        if pos >= r.end {
            return out;
        }
        for &(s, e) in self.ranges.range(next..) {
            if s >= r.end {
                break;
            }
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
        s.ranges.iter().map(|&(a, b)| a..b).collect()
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

    /// Two paths carry alternate 10-byte frames of one stream and are acknowledged in turns: path A's
    /// frames (0..10, 20..30, …) then path B's (10..20, 30..40, …). Hand-computed states after each step.
    #[test]
    fn interleaved_acknowledgements_from_two_paths() {
        let mut s = RangeSet::default();
        // Path A's acknowledgements of 0..10, 20..30, 40..50: three separate ranges, each appended.
        assert_eq!(s.insert(0..10), 10);
        assert_eq!(s.insert(20..30), 10);
        assert_eq!(s.insert(40..50), 10);
        assert_eq!(ranges(&s), vec![0..10, 20..30, 40..50]);
        // Path B's 10..20 fills the first hole: 0..10 and 20..30 merge into 0..30.
        assert_eq!(s.insert(10..20), 10);
        assert_eq!(ranges(&s), vec![0..30, 40..50]);
        // Path A runs ahead: 60..70 appended, then 50..60 (path B) joins 40..50 and 60..70.
        assert_eq!(s.insert(60..70), 10);
        assert_eq!(s.insert(50..60), 10);
        assert_eq!(ranges(&s), vec![0..30, 40..70]);
        // 30..40 closes the last hole: one range.
        assert_eq!(s.insert(30..40), 10);
        assert_eq!(ranges(&s), vec![0..70]);
        assert_eq!(s.total(), 70);
    }

    /// Insertions that extend a range inside the set in place, at its start or end, without touching the
    /// neighbours; one that joins nothing goes between them.
    #[test]
    fn insertions_inside_the_set_extend_or_fall_between() {
        let mut s = RangeSet::default();
        for r in [0..10, 100..110, 200..210, 300..310] {
            s.insert(r);
        }
        // The end of 100..110 grows to 120; the start of 200..210 moves down to 190.
        assert_eq!(s.insert(110..120), 10);
        assert_eq!(s.insert(190..200), 10);
        assert_eq!(ranges(&s), vec![0..10, 100..120, 190..210, 300..310]);
        // 150..160 touches nothing: a new range between.
        assert_eq!(s.insert(150..160), 10);
        assert_eq!(ranges(&s), vec![0..10, 100..120, 150..160, 190..210, 300..310]);
        // Before everything.
        let mut t = RangeSet::default();
        t.insert(50..60);
        assert_eq!(t.insert(10..20), 10);
        assert_eq!(ranges(&t), vec![10..20, 50..60]);
        assert_eq!(s.len(), 5);
    }

    /// Duplicates and overlaps count only the bytes not yet in the set.
    #[test]
    fn duplicates_and_overlaps_count_only_new_bytes() {
        let mut s = RangeSet::default();
        s.insert(10..20);
        s.insert(30..40);
        s.insert(50..60);
        // Exact duplicates, in the middle and at the end: nothing new.
        assert_eq!(s.insert(30..40), 0);
        assert_eq!(s.insert(50..60), 0);
        assert_eq!(s.insert(52..55), 0);
        assert_eq!(s.insert(12..18), 0);
        // 15..55 covers 15..20, 30..40, 50..55 (20 bytes held): 20 new bytes, all four merge.
        assert_eq!(s.insert(15..55), 20);
        assert_eq!(ranges(&s), vec![10..60]);
        // Past the end, overlapping the last range: 55..70 brings 60..70.
        assert_eq!(s.insert(55..70), 10);
        // Adjacent at the end merges; one past leaves a gap.
        assert_eq!(s.insert(70..71), 1);
        assert_eq!(s.insert(72..73), 1);
        assert_eq!(ranges(&s), vec![10..71, 72..73]);
        // A range spanning all of it and more: 0..10, 71..72 and 73..80 are new.
        assert_eq!(s.insert(0..80), 18);
        assert_eq!(ranges(&s), vec![0..80]);
        // Empty and inverted ranges change nothing.
        assert_eq!(s.insert(90..90), 0);
        #[allow(clippy::reversed_empty_ranges)]
        let inverted = 95..91;
        assert_eq!(s.insert(inverted), 0);
        assert_eq!(ranges(&s), vec![0..80]);
    }

    /// Removal at the edges of ranges, across several of them, inside one, and of nothing.
    #[test]
    fn removal_cases() {
        let mut s = RangeSet::default();
        for r in [0..10, 20..30, 40..50, 60..70] {
            s.insert(r);
        }
        // Nothing there.
        s.remove(10..20);
        s.remove(75..90);
        assert_eq!(ranges(&s), vec![0..10, 20..30, 40..50, 60..70]);
        // Inside one range: it splits.
        s.remove(22..24);
        assert_eq!(ranges(&s), vec![0..10, 20..22, 24..30, 40..50, 60..70]);
        // From the middle of one to the middle of another: the start of one, the end of the other, and all
        // of those between.
        s.remove(5..45);
        assert_eq!(ranges(&s), vec![0..5, 45..50, 60..70]);
        // Exactly one whole range.
        s.remove(45..50);
        assert_eq!(ranges(&s), vec![0..5, 60..70]);
        // The front goes with `remove_below`, the back with a range past it.
        s.remove_below(3);
        assert_eq!(ranges(&s), vec![3..5, 60..70]);
        s.remove(65..1000);
        assert_eq!(ranges(&s), vec![3..5, 60..65]);
        assert_eq!(s.pop_front(), Some(3..5));
        assert_eq!(s.pop_front(), Some(60..65));
        assert_eq!(s.pop_front(), None);
        assert!(s.is_empty());
    }

    /// Holes: the first gap at or above an offset with a range above it.
    #[test]
    fn holes_and_gaps() {
        let mut s = RangeSet::default();
        assert_eq!(s.hole_from(0), None);
        s.insert(10..20);
        s.insert(30..40);
        assert_eq!(s.hole_from(0), Some(0..10));
        assert_eq!(s.hole_from(10), Some(20..30));
        assert_eq!(s.hole_from(15), Some(20..30));
        assert_eq!(s.hole_from(25), Some(25..30));
        assert_eq!(s.hole_from(30), None);
        assert_eq!(s.hole_from(40), None);
        assert_eq!(s.gaps(5..35), vec![5..10, 20..30]);
        assert_eq!(s.gaps(30..40), Vec::<Range<u64>>::new());
        assert_eq!(s.gaps(35..45), vec![40..45]);
        s.clear();
        assert_eq!(s.gaps(1..2), vec![1..2]);
    }

    /// Against a byte-per-bit model: a long pseudo-random sequence of inserts and removals keeps the set
    /// equal to the model, and every insert reports the model's count of newly set bytes.
    #[test]
    fn matches_a_bitmap_model() {
        const N: usize = 512;
        let mut s = RangeSet::default();
        let mut model = [false; N];
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for step in 0..20_000 {
            // xorshift64
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let a = (x % N as u64) as usize;
            let len = ((x >> 20) % 40) as usize;
            let b = (a + len).min(N);
            if (x >> 40) % 3 == 0 {
                s.remove(a as u64..b as u64);
                model[a..b].iter_mut().for_each(|m| *m = false);
            } else {
                let new = model[a..b].iter().filter(|m| !**m).count() as u64;
                assert_eq!(s.insert(a as u64..b as u64), new, "step {step}");
                model[a..b].iter_mut().for_each(|m| *m = true);
            }
            let mut expect = Vec::new();
            let mut i = 0;
            while i < N {
                if model[i] {
                    let j = (i..N).find(|&j| !model[j]).unwrap_or(N);
                    expect.push(i as u64..j as u64);
                    i = j;
                } else {
                    i += 1;
                }
            }
            assert_eq!(ranges(&s), expect, "step {step}");
        }
    }
}
