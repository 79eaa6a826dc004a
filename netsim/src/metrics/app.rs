//! Application metrics: statistics of completion times (flow completion time of request/response objects,
//! download time of video chunks) and the video playback model.
//!
//! Percentiles use the nearest-rank method of [`super::percentile`].

use std::time::Duration;

use crate::time::SimTime;

/// Count, mean, percentiles and maximum of a set of durations, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeStats {
    /// How many.
    pub count: usize,
    /// Mean, ms.
    pub mean_ms: f64,
    /// Median (nearest rank), ms.
    pub p50_ms: f64,
    /// 95th percentile (nearest rank), ms.
    pub p95_ms: f64,
    /// 99th percentile (nearest rank), ms.
    pub p99_ms: f64,
    /// Largest, ms.
    pub max_ms: f64,
}

impl TimeStats {
    /// The statistics of `times` (`None` for none).
    pub fn of(times: &[Duration]) -> Option<TimeStats> {
        let ms: Vec<f64> = times.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        Some(TimeStats {
            count: ms.len(),
            mean_ms: super::mean(&ms)?,
            p50_ms: super::percentile(&ms, 50.0)?,
            p95_ms: super::percentile(&ms, 95.0)?,
            p99_ms: super::percentile(&ms, 99.0)?,
            max_ms: ms.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// What the viewer of a video experienced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Playback {
    /// From the first request to the end of the first chunk (playback starts then); `None` if no chunk
    /// arrived.
    pub startup: Option<Duration>,
    /// Time playback was stalled (buffer empty with more media due), startup excluded.
    pub stall: Duration,
    /// Number of stalls.
    pub stalls: u32,
}

/// The playback model: chunks of `chunk` media each, the first requested at `first_request`, chunk `k`
/// read in full at `done[k]` (in order). Playback starts at `p_0 = done[0]`; chunk `k` plays from
/// `p_k = max(p_(k−1) + chunk, done[k])`, and playback stalls for `done[k] − (p_(k−1) + chunk)` when that
/// is positive. When `more` (more chunks were due: the video had not been downloaded in full) and the
/// media ran out before `end`, the time from the media's end to `end` is one more stall.
pub fn playback(
    first_request: SimTime,
    done: &[SimTime],
    chunk: Duration,
    end: SimTime,
    more: bool,
) -> Playback {
    let mut out = Playback::default();
    let Some(&first) = done.first() else {
        return out;
    };
    out.startup = Some(first.saturating_duration_since(first_request));
    let mut media_end = first.saturating_add(chunk);
    for &c in done.iter().skip(1) {
        if c > media_end {
            out.stall = out.stall.saturating_add(c.saturating_duration_since(media_end));
            out.stalls = out.stalls.saturating_add(1);
        }
        media_end = media_end.max(c).saturating_add(chunk);
    }
    if more && end > media_end {
        out.stall = out.stall.saturating_add(end.saturating_duration_since(media_end));
        out.stalls = out.stalls.saturating_add(1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn playback_by_hand() {
        let s = SimTime::from_millis;
        let chunk = Duration::from_secs(2);
        // First chunk at 0.5 s (startup 0.5 s): media until 2.5 s. Chunk 1 at 1.0 s → media until 4.5 s.
        // Chunk 2 at 5.0 s: stall 0.5 s, media until 7.0 s. Chunk 3 at 6.0 s → media until 9.0 s.
        let done = [s(500), s(1000), s(5000), s(6000)];
        let p = playback(s(0), &done, chunk, s(9000), true);
        assert_eq!(p.startup, Some(Duration::from_millis(500)));
        assert_eq!(p.stall, Duration::from_millis(500));
        assert_eq!(p.stalls, 1);
        // Run ends at 10 s with more due: 1 s more stall.
        let p = playback(s(0), &done, chunk, s(10_000), true);
        assert_eq!(p.stall, Duration::from_millis(1500));
        assert_eq!(p.stalls, 2);
        // The whole video was downloaded: no stall at the end.
        let p = playback(s(0), &done, chunk, s(10_000), false);
        assert_eq!(p.stall, Duration::from_millis(500));
        assert_eq!(playback(s(0), &[], chunk, s(1), true), Playback::default());
    }

    #[test]
    fn time_stats_by_hand() {
        let t: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        let st = TimeStats::of(&t).unwrap();
        assert_eq!(st.count, 100);
        assert!((st.mean_ms - 50.5).abs() < 1e-9);
        assert!((st.p50_ms - 50.0).abs() < 1e-9);
        assert!((st.p95_ms - 95.0).abs() < 1e-9);
        assert!((st.p99_ms - 99.0).abs() < 1e-9);
        assert!((st.max_ms - 100.0).abs() < 1e-9);
        assert_eq!(TimeStats::of(&[]), None);
    }
}
