//! Quantities a study report reads from a run's time series rather than from its end-of-run results: the
//! mean and the largest congestion window of each path over the whole run, and each path's goodput in
//! consecutive fixed windows ("phases", e.g. the 20 s steps of a competitor count).
//!
//! Every run of a study keeps this summary (a few numbers per path), while the full series are kept only
//! for the runs that are plotted.
//!
//! The series has one sample every `sample_interval` (`k · interval`, `k ≥ 1`) while a path is open; a
//! sample's throughput is the path's goodput over the interval that ends at it. The mean window is the mean
//! of the samples' windows (the run-mean: no part of the run is left out); a phase `j` of length `P` covers
//! the samples with `j · P < t ≤ (j + 1) · P` (except a path's first sample, which has no interval and so no
//! throughput), and its goodput is the mean of their throughputs (a path
//! closed for part of the phase counts only its open intervals, so a competitor that stops mid-phase
//! reports its rate while it ran).

use std::time::Duration;

use crate::metrics::PathSeries;

/// The most phases a part may ask for.
pub const MAX_PHASES: u64 = 100;

/// The summary of one path's series.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PathSummary {
    /// The flow's index in the scenario.
    pub flow: usize,
    /// The path's index within the flow.
    pub path: usize,
    /// Mean congestion window over the samples, bytes (`None` without samples).
    pub cwnd_mean_bytes: Option<f64>,
    /// Largest congestion window sampled, bytes.
    pub cwnd_max_bytes: Option<u64>,
    /// Goodput in each phase, bits per second (`None` for a phase without samples).
    pub phase_goodput_bps: Vec<Option<f64>>,
}

/// The summary of every path of a run.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SeriesSummary {
    /// Per path, in series order.
    pub paths: Vec<PathSummary>,
}

impl SeriesSummary {
    /// Summarises `series`; with `phase = Some(P)`, cuts `duration` into `⌈duration / P⌉` phases (at most
    /// [`MAX_PHASES`]).
    pub fn of(series: &[PathSeries], phase: Option<Duration>, duration: Duration) -> SeriesSummary {
        let phases = phase_count(phase, duration);
        let paths = series
            .iter()
            .map(|s| {
                let cwnds: Vec<f64> = s.samples.iter().map(|x| u64_to_f64(x.cwnd)).collect();
                let mut sums = vec![(0.0_f64, 0_u32); phases];
                if let Some(p) = phase.filter(|p| !p.is_zero()) {
                    // A series' first sample has no previous observation, hence no throughput (the
                    // recorder gives it 0): it is left out.
                    for sample in s.samples.iter().skip(1) {
                        let t = sample.time.since_epoch();
                        // Phase of t: the j with j·P < t ≤ (j+1)·P.
                        let j = t.as_nanos().saturating_sub(1) / p.as_nanos().max(1);
                        if let Some(slot) = usize::try_from(j).ok().and_then(|j| sums.get_mut(j)) {
                            slot.0 += sample.throughput_bps;
                            slot.1 = slot.1.saturating_add(1);
                        }
                    }
                }
                PathSummary {
                    flow: s.flow_index,
                    path: s.path,
                    cwnd_mean_bytes: crate::metrics::mean(&cwnds),
                    cwnd_max_bytes: s.samples.iter().map(|x| x.cwnd).max(),
                    phase_goodput_bps: sums
                        .into_iter()
                        .map(|(sum, n)| (n > 0).then(|| sum / f64::from(n)))
                        .collect(),
                }
            })
            .collect();
        SeriesSummary { paths }
    }

    /// The summary of path `path` of flow `flow`.
    pub fn path(&self, flow: usize, path: usize) -> Option<&PathSummary> {
        self.paths.iter().find(|p| p.flow == flow && p.path == path)
    }
}

/// `⌈duration / phase⌉`, at most [`MAX_PHASES`]; 0 without a phase length.
pub fn phase_count(phase: Option<Duration>, duration: Duration) -> usize {
    let Some(p) = phase.filter(|p| !p.is_zero()) else {
        return 0;
    };
    let n = duration.as_nanos().div_ceil(p.as_nanos());
    usize::try_from(n.min(u128::from(MAX_PHASES))).unwrap_or(0)
}

#[allow(clippy::cast_precision_loss)]
fn u64_to_f64(x: u64) -> f64 {
    x as f64
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::float_cmp)]

    use super::*;
    use crate::metrics::{PathSample, Recorder, SampleSource};
    use crate::time::SimTime;

    /// One flow, one path; the window is 1000 · k bytes at sample k, and 1 Mbit is delivered per second
    /// during the first 3 s, 3 Mbit per second after.
    struct Source {
        now_s: u64,
    }

    impl SampleSource for Source {
        fn path_sample(&self, _flow: usize, _path: usize) -> Option<PathSample> {
            let s = self.now_s;
            let delivered_bits = if s <= 3 { s } else { 3 + 3 * (s - 3) } * 1_000_000;
            Some(PathSample {
                cwnd: 1000 * s,
                delivered_bytes: delivered_bits / 8,
                ..PathSample::default()
            })
        }
    }

    #[test]
    fn windows_and_phases_by_hand() {
        let second = Duration::from_secs(1);
        let mut rec = Recorder::new(second, Duration::from_secs(6), &[("f".to_owned(), 1)]);
        for s in 1..=6 {
            rec.record(
                SimTime::ZERO.saturating_add(second * u32::try_from(s).unwrap()),
                &Source { now_s: s },
            );
        }
        let sum = SeriesSummary::of(rec.series(), Some(Duration::from_secs(3)), Duration::from_secs(6));
        let p = sum.path(0, 0).unwrap();
        // Windows 1000 … 6000: mean 3500, max 6000.
        assert_eq!(p.cwnd_mean_bytes, Some(3500.0));
        assert_eq!(p.cwnd_max_bytes, Some(6000));
        // Samples at 2 and 3 s (phase 0: 0 < t ≤ 3 s; the first sample, at 1 s, has no interval) carry
        // 1 Mbit/s each; 4, 5, 6 s (phase 1) 3 Mbit/s (3 Mbit more per second from 3 s on).
        assert_eq!(p.phase_goodput_bps.len(), 2);
        assert!((p.phase_goodput_bps[0].unwrap() - 1e6).abs() < 1.0);
        assert!((p.phase_goodput_bps[1].unwrap() - 3e6).abs() < 1.0);
        assert!(sum.path(0, 1).is_none());
    }

    #[test]
    fn phase_count_rounds_up_and_is_bounded() {
        let s = Duration::from_secs;
        assert_eq!(phase_count(Some(s(20)), s(180)), 9);
        assert_eq!(phase_count(Some(s(20)), s(181)), 10);
        assert_eq!(phase_count(None, s(180)), 0);
        assert_eq!(phase_count(Some(Duration::ZERO), s(180)), 0);
        assert_eq!(phase_count(Some(Duration::from_millis(1)), s(180)), 100);
    }
}
