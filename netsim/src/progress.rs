//! Progress of a sweep or study for `mpquic-sim`: runs done out of the total and the estimated time left.
//!
//! On a terminal (stderr) it is a progress bar (indicatif) with the run in progress as its message; otherwise
//! (a log file, a batch job) one plain line per finished run: `NAME: 3/12 runs done, 10.2 s elapsed, about
//! 30.6 s left`. The estimate assumes the remaining runs take as long as the finished ones did on average.
//! This is the tool's reading of the wall clock; the simulation itself never reads one.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The time left for `total − done` runs if each takes the mean of the `done` that took `elapsed`; `None`
/// before the first run finishes.
pub fn eta(elapsed: Duration, done: u64, total: u64) -> Option<Duration> {
    if done == 0 {
        return None;
    }
    let left = total.saturating_sub(done);
    let per_run = elapsed.as_secs_f64() / done as f64;
    Some(Duration::from_secs_f64(per_run * left as f64))
}

/// Shows the progress of `total` runs.
#[derive(Debug)]
pub struct Progress {
    label: String,
    total: u64,
    bar: Option<ProgressBar>,
    started: Instant,
    done: Mutex<u64>,
}

/// Now, from the monotonic clock (progress display only).
#[allow(clippy::disallowed_methods)] // Wall time is what a progress display reports.
fn wall_now() -> Instant {
    Instant::now()
}

impl Progress {
    /// A bar on stderr if `terminal`, else plain lines on stderr.
    pub fn new(label: &str, total: u64, terminal: bool) -> Progress {
        let bar = terminal.then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(
                "{prefix} [{bar:20}] {pos}/{len} runs, {elapsed}, ETA {eta} {wide_msg}",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_prefix(label.to_owned());
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Progress {
            label: label.to_owned(),
            total,
            bar,
            started: wall_now(),
            done: Mutex::new(0),
        }
    }

    /// Whether this draws a bar.
    pub fn is_bar(&self) -> bool {
        self.bar.is_some()
    }

    /// The run in progress (the bar's message; a plain line without a bar).
    pub fn status(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.set_message(text.to_owned()),
            None => eprintln!("{text}"),
        }
    }

    /// A line above the bar (or on its own without one).
    pub fn println(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    /// One more run finished.
    pub fn run_done(&self) {
        let done = match self.done.lock() {
            Ok(mut d) => {
                *d = d.saturating_add(1);
                *d
            }
            Err(_) => return,
        };
        match &self.bar {
            Some(bar) => bar.inc(1),
            None => {
                let elapsed = self.started.elapsed();
                let left = eta(elapsed, done, self.total)
                    .map_or_else(String::new, |d| format!(", about {:.1} s left", d.as_secs_f64()));
                eprintln!(
                    "{}: {done}/{} runs done, {:.1} s elapsed{left}",
                    self.label,
                    self.total,
                    elapsed.as_secs_f64()
                );
            }
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_is_the_mean_run_time_times_the_runs_left() {
        // 3 runs in 12 s: 4 s each; 9 left: 36 s.
        assert_eq!(eta(Duration::from_secs(12), 3, 12), Some(Duration::from_secs(36)));
        assert_eq!(eta(Duration::from_secs(5), 0, 12), None);
        assert_eq!(eta(Duration::from_secs(5), 4, 4), Some(Duration::ZERO));
    }

    #[test]
    fn plain_progress_counts_runs() {
        let p = Progress::new("test", 2, false);
        assert!(!p.is_bar());
        p.run_done();
        p.run_done();
        assert_eq!(*p.done.lock().unwrap(), 2);
        p.finish();
    }
}
