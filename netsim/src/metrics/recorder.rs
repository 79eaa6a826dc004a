//! The time-series recorder: per flow and per path, one sample every `interval` of simulated time.
//!
//! The engine owns the connections; the recorder sees them only through [`SampleSource`], which returns a
//! [`PathSample`] (the path's state *now*) for a flow and path index. The engine asks [`Recorder::next_due`]
//! when the next sample is due, schedules an event at that time, and calls [`Recorder::record`] from it.
//!
//! Memory is bounded by construction: samples are taken at fixed instants `k · interval` for
//! `k = 1 ..= ⌈duration / interval⌉`, at most one per instant per path, so a path never holds more than
//! `⌈duration / interval⌉` samples; [`Recorder::record`] ignores calls past the end.
//!
//! A flow that reports receiver statistics adds the state of its receiving end to every sample of its
//! paths ([`ReceiverSample`]: out-of-order and unread bytes, one value per flow, repeated in each path's
//! series so that a path's file shows it next to the path's window and RTT).
//!
//! Throughput in a sample is the path's goodput over the interval that ends at the sample: the growth of
//! its cumulative delivered bytes since the previous sample of that path (or since the path appeared),
//! divided by the elapsed time.

use std::time::Duration;

use serde::Serialize;

use crate::time::SimTime;

/// A path's state at one instant, as the engine reports it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathSample {
    /// Congestion window in bytes.
    pub cwnd: u64,
    /// Smoothed RTT.
    pub srtt: Duration,
    /// Bytes sent and not yet acknowledged or declared lost.
    pub bytes_in_flight: u64,
    /// Application bytes delivered over this path since it opened (cumulative).
    pub delivered_bytes: u64,
    /// The controller's own metrics for this path (`ssthresh`, `alpha`, …), by name.
    pub cc: Vec<(String, f64)>,
}

/// A flow's receiving end at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ReceiverSample {
    /// Bytes received above a gap, waiting in the reassembly buffer.
    pub out_of_order_bytes: u64,
    /// Bytes received and not yet read by the application (in order or not).
    pub unread_bytes: u64,
}

/// Where the recorder reads path state from (implemented by the engine).
pub trait SampleSource {
    /// The state of path `path` of flow `flow` (indices as in the scenario), or `None` while the path is not
    /// open (not started yet, or closed).
    fn path_sample(&self, flow: usize, path: usize) -> Option<PathSample>;

    /// The receiving end of flow `flow`, for flows that report it (default: none).
    fn receiver_sample(&self, _flow: usize) -> Option<ReceiverSample> {
        None
    }
}

/// One recorded sample.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sample {
    /// When it was taken (JSON: seconds).
    #[serde(rename = "time_s", serialize_with = "time_secs")]
    pub time: SimTime,
    /// Congestion window in bytes.
    pub cwnd: u64,
    /// Smoothed RTT (JSON: milliseconds).
    #[serde(rename = "srtt_ms", serialize_with = "duration_ms")]
    pub srtt: Duration,
    /// Goodput over the interval ending here, in bits per second.
    pub throughput_bps: f64,
    /// Bytes in flight.
    pub bytes_in_flight: u64,
    /// The controller's metrics, by name.
    pub cc: Vec<(String, f64)>,
    /// The flow's receiving end, for flows that report it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver: Option<ReceiverSample>,
}

fn time_secs<S: serde::Serializer>(t: &SimTime, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(t.since_epoch().as_secs_f64())
}

fn duration_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1e3)
}

/// The samples of one path.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PathSeries {
    /// The flow's name.
    pub flow: String,
    /// The flow's index in the scenario.
    pub flow_index: usize,
    /// The path's index within the flow.
    pub path: usize,
    /// Samples in time order.
    pub samples: Vec<Sample>,
    /// Time and cumulative delivered bytes of the previous observation.
    #[serde(skip)]
    last: Option<(SimTime, u64)>,
}

impl PathSeries {
    /// `flow/path k`: the series name used in plots and file names.
    pub fn label(&self) -> String {
        format!("{}/path{}", self.flow, self.path)
    }

    /// The smoothed-RTT samples in seconds.
    pub fn srtt_secs(&self) -> Vec<f64> {
        self.samples.iter().map(|s| s.srtt.as_secs_f64()).collect()
    }
}

/// Collects [`PathSeries`] at a fixed interval (see the module documentation).
#[derive(Clone, Debug)]
pub struct Recorder {
    interval: Duration,
    /// Number of sampling instants.
    ticks: u64,
    /// Next instant index (1-based; `ticks + 1` when done).
    next: u64,
    series: Vec<PathSeries>,
}

impl Recorder {
    /// A recorder sampling every `interval` over `duration`, for the given flows (name and number of paths,
    /// in scenario order). A zero interval is taken as 1 ns.
    pub fn new(interval: Duration, duration: Duration, flows: &[(String, usize)]) -> Recorder {
        let interval = interval.max(Duration::from_nanos(1));
        let ticks = u64::try_from(duration.as_nanos().div_ceil(interval.as_nanos())).unwrap_or(u64::MAX);
        let capacity = usize::try_from(ticks).unwrap_or(usize::MAX).min(1 << 20);
        let mut series = Vec::new();
        for (flow_index, (name, paths)) in flows.iter().enumerate() {
            for path in 0..*paths {
                series.push(PathSeries {
                    flow: name.clone(),
                    flow_index,
                    path,
                    samples: Vec::with_capacity(capacity),
                    last: None,
                });
            }
        }
        Recorder {
            interval,
            ticks,
            next: 1,
            series,
        }
    }

    /// The sampling interval.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// The next sampling instant, or `None` when every instant has been sampled.
    pub fn next_due(&self) -> Option<SimTime> {
        (self.next <= self.ticks).then(|| self.instant(self.next))
    }

    fn instant(&self, k: u64) -> SimTime {
        let nanos = u64::try_from(self.interval.as_nanos()).unwrap_or(u64::MAX);
        SimTime::from_nanos(nanos.saturating_mul(k))
    }

    /// Samples every path from `source` if an instant is due at or before `now`. Instants missed since the
    /// last call are skipped (the state at `now` is not the state at those instants), so the engine should
    /// call at each [`Recorder::next_due`]. Returns whether a sample was taken.
    pub fn record(&mut self, now: SimTime, source: &impl SampleSource) -> bool {
        let Some(due) = self.next_due() else {
            return false;
        };
        if now < due {
            return false;
        }
        // Skip to the latest instant ≤ now.
        let interval = u64::try_from(self.interval.as_nanos()).unwrap_or(u64::MAX).max(1);
        let k = (now.as_nanos() / interval).min(self.ticks);
        self.next = k.saturating_add(1);
        let time = self.instant(k);
        let mut receiver: Option<(usize, Option<ReceiverSample>)> = None;
        for series in &mut self.series {
            let Some(s) = source.path_sample(series.flow_index, series.path) else {
                series.last = None;
                continue;
            };
            let throughput_bps = match series.last {
                Some((t, bytes)) => {
                    let bits = s.delivered_bytes.saturating_sub(bytes);
                    #[allow(clippy::cast_precision_loss)]
                    let bits = bits as f64 * 8.0;
                    let secs = time.saturating_duration_since(t).as_secs_f64();
                    if secs > 0.0 { bits / secs } else { 0.0 }
                }
                None => 0.0,
            };
            series.last = Some((time, s.delivered_bytes));
            let rx = match receiver {
                Some((f, rx)) if f == series.flow_index => rx,
                _ => {
                    let rx = source.receiver_sample(series.flow_index);
                    receiver = Some((series.flow_index, rx));
                    rx
                }
            };
            series.samples.push(Sample {
                time,
                cwnd: s.cwnd,
                srtt: s.srtt,
                throughput_bps,
                bytes_in_flight: s.bytes_in_flight,
                cc: s.cc,
                receiver: rx,
            });
        }
        true
    }

    /// Every path's series, flows in scenario order, paths in flow order.
    pub fn series(&self) -> &[PathSeries] {
        &self.series
    }

    /// The series of path `path` of flow `flow`.
    pub fn path(&self, flow: usize, path: usize) -> Option<&PathSeries> {
        self.series
            .iter()
            .find(|s| s.flow_index == flow && s.path == path)
    }

    /// Takes the series out.
    pub fn into_series(self) -> Vec<PathSeries> {
        self.series
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// One flow, two paths; path 1 opens at the second sample. Each path delivers `rate` bytes per 100 ms.
    struct Fake {
        now_ms: Cell<u64>,
    }

    impl SampleSource for Fake {
        fn path_sample(&self, flow: usize, path: usize) -> Option<PathSample> {
            assert_eq!(flow, 0);
            let t = self.now_ms.get();
            let rate = [125_000u64, 25_000][path];
            if path == 1 && t < 200 {
                return None;
            }
            Some(PathSample {
                cwnd: 10_000 + t,
                srtt: Duration::from_millis(20),
                bytes_in_flight: 5_000,
                delivered_bytes: rate * (t / 100),
                cc: vec![("alpha".to_owned(), 0.5)],
            })
        }
    }

    #[test]
    fn samples_at_fixed_instants_with_interval_throughput() {
        let mut r = Recorder::new(
            Duration::from_millis(100),
            Duration::from_millis(450),
            &[("mp".to_owned(), 2)],
        );
        let src = Fake { now_ms: Cell::new(0) };
        assert_eq!(r.next_due(), Some(SimTime::from_millis(100)));
        assert!(!r.record(SimTime::from_millis(50), &src));
        for ms in [100, 200, 300, 400, 500, 600] {
            src.now_ms.set(ms);
            let due = r.next_due();
            assert_eq!(r.record(SimTime::from_millis(ms), &src), due.is_some());
        }
        assert_eq!(r.next_due(), None);
        let p0 = r.path(0, 0).unwrap();
        // ⌈450 / 100⌉ = 5 instants, the last at 500 ms.
        assert_eq!(p0.samples.len(), 5);
        assert_eq!(p0.samples[4].time, SimTime::from_millis(500));
        assert_eq!(p0.samples[0].throughput_bps, 0.0);
        // 125 kB per 100 ms = 10 Mbit/s.
        assert!((p0.samples[1].throughput_bps - 10e6).abs() < 1e-6);
        assert_eq!(p0.samples[1].cc, vec![("alpha".to_owned(), 0.5)]);
        let p1 = r.path(0, 1).unwrap();
        assert_eq!(p1.samples.len(), 4);
        assert_eq!(p1.samples[0].time, SimTime::from_millis(200));
        assert!((p1.samples[1].throughput_bps - 2e6).abs() < 1e-6);
        assert_eq!(p1.label(), "mp/path1");
    }

    #[test]
    fn late_calls_skip_missed_instants_and_memory_stays_bounded() {
        let mut r = Recorder::new(
            Duration::from_millis(100),
            Duration::from_secs(1),
            &[("f".to_owned(), 1)],
        );
        let src = Fake { now_ms: Cell::new(0) };
        src.now_ms.set(350);
        assert!(r.record(SimTime::from_millis(350), &src));
        assert_eq!(r.path(0, 0).unwrap().samples[0].time, SimTime::from_millis(300));
        assert_eq!(r.next_due(), Some(SimTime::from_millis(400)));
        for ms in (400..5_000).step_by(10) {
            src.now_ms.set(ms);
            r.record(SimTime::from_millis(ms), &src);
        }
        assert_eq!(r.path(0, 0).unwrap().samples.len(), 8);
    }
}
