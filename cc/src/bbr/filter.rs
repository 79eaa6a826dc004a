//! The windowed max filter of BBR's `BtlBw` estimate (draft-cardwell-iccrg-bbr-congestion-control-00 §4.1.1.1,
//! BBRv1: draft-cardwell-iccrg-bbr-congestion-control-00, Linux `tcp_bbr.c`): Kathleen Nichols' three-sample algorithm,
//! as in Linux `lib/win_minmax.c`, with time measured in packet-timed round trips.
//!
//! It keeps the best, second-best and third-best samples of the last `window` rounds, each one newer than the
//! one before, so the maximum is known in O(1) and ages out after `window` rounds (a sample taken at round `t`
//! is forgotten once the current round exceeds `t + window`).

/// A sample: its value (bytes per second) and the round it was taken in.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Sample {
    t: u64,
    v: f64,
}

/// Windowed running maximum of `f64` samples keyed by round count.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowedMaxFilter {
    best: Sample,
    second: Sample,
    third: Sample,
}

impl Default for WindowedMaxFilter {
    fn default() -> Self {
        let zero = Sample { t: 0, v: 0.0 };
        WindowedMaxFilter {
            best: zero,
            second: zero,
            third: zero,
        }
    }
}

impl WindowedMaxFilter {
    /// An empty filter (maximum 0).
    pub fn new() -> Self {
        Self::default()
    }

    /// The current windowed maximum.
    pub fn get(&self) -> f64 {
        self.best.v
    }

    /// Forgets everything and starts over from sample `v` at round `t`.
    pub fn reset(&mut self, t: u64, v: f64) -> f64 {
        let s = Sample { t, v };
        self.best = s;
        self.second = s;
        self.third = s;
        v
    }

    /// Adds sample `v` taken at round `t` (rounds never go backwards) and returns the maximum over the
    /// last `window` rounds. Non-finite or negative samples are ignored.
    pub fn update(&mut self, window: u64, t: u64, v: f64) -> f64 {
        if !v.is_finite() || v < 0.0 {
            return self.best.v;
        }
        let s = Sample { t, v };
        if v >= self.best.v || t.saturating_sub(self.third.t) > window {
            // A new maximum, or nothing left in the window: forget earlier samples.
            return self.reset(t, v);
        }
        if v >= self.second.v {
            self.second = s;
            self.third = s;
        } else if v >= self.third.v {
            self.third = s;
        }
        self.subwin_update(window, s)
    }

    /// Ages the best samples out of the window, or fills the sub-windows with newer samples.
    fn subwin_update(&mut self, window: u64, s: Sample) -> f64 {
        let dt = s.t.saturating_sub(self.best.t);
        if dt > window {
            // The best sample expired: promote the second and third, take `s` as the new third.
            self.best = self.second;
            self.second = self.third;
            self.third = s;
            if s.t.saturating_sub(self.best.t) > window {
                self.best = self.second;
                self.second = self.third;
                self.third = s;
            }
        } else if self.second.t == self.best.t && dt > window / 4 {
            // A quarter of the window passed without a second choice: take one.
            self.second = s;
            self.third = s;
        } else if self.third.t == self.second.t && dt > window / 2 {
            // Half the window passed without a third choice: take one.
            self.third = s;
        }
        self.best.v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_holds_for_ten_rounds_then_expires() {
        let mut f = WindowedMaxFilter::new();
        assert_eq!(f.update(10, 0, 100.0), 100.0);
        // Rounds 1..=10 bring 50: the 100 of round 0 is still in the window (10 - 0 = 10, not > 10).
        for t in 1..=10 {
            assert_eq!(f.update(10, t, 50.0), 100.0, "round {t}");
        }
        // Round 11: 11 - 0 > 10, the 100 expires and the newest 50 becomes the max.
        assert_eq!(f.update(10, 11, 50.0), 50.0);
    }

    #[test]
    fn second_best_takes_over_when_best_expires() {
        let mut f = WindowedMaxFilter::new();
        f.update(10, 0, 100.0);
        f.update(10, 3, 80.0); // 3 > 10/4 = 2: becomes second and third choice
        f.update(10, 6, 60.0); // 6 - 0 > 10/2 = 5 and third == second: becomes third
        assert_eq!(f.get(), 100.0);
        // Round 11: 100 (round 0) expires, 80 (round 3) is the max.
        assert_eq!(f.update(10, 11, 10.0), 80.0);
        // A larger sample always wins at once.
        assert_eq!(f.update(10, 12, 90.0), 90.0);
        // NaN and negatives are ignored.
        assert_eq!(f.update(10, 12, f64::NAN), 90.0);
        assert_eq!(f.update(10, 12, -1.0), 90.0);
    }
}
