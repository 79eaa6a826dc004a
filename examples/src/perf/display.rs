//! What the client shows while it runs: interval lines (text mode), a live progress line when stdout is a
//! terminal (indicatif), or nothing (JSON mode, in-process use).

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use mpquic::runtime::PathStats;

use super::report::{INTERVAL_HEADER, Interval, Sampler, fmt_bytes, fmt_rate, interval_lines};
use super::wire::Direction;

/// The client's live output.
#[derive(Debug)]
pub struct Display {
    lines: bool,
    header_done: bool,
    bar: Option<ProgressBar>,
    rates: Sampler,
    last_tick: f64,
    direction: Direction,
}

impl Display {
    /// Prints nothing.
    pub fn quiet(direction: Direction) -> Display {
        Display {
            lines: false,
            header_done: false,
            bar: None,
            rates: Sampler::new(direction),
            last_tick: 0.0,
            direction,
        }
    }

    /// Interval lines on stdout, and a progress line under them if `progress` (the caller checks that stdout
    /// is a terminal). `target`: the run's total bytes or duration in tenths of a second, for the bar.
    pub fn text(direction: Direction, progress: bool, target: Option<u64>) -> Display {
        let bar = progress.then(|| {
            let bar = target.map_or_else(ProgressBar::new_spinner, ProgressBar::new);
            let template = if target.is_some() {
                "{spinner} [{bar:30}] {percent:>3}% {msg}"
            } else {
                "{spinner} {msg}"
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        Display {
            lines: true,
            bar,
            ..Display::quiet(direction)
        }
    }

    /// Updates the progress line: elapsed time, bytes delivered so far, and each path's rate since the last
    /// update (delivered bytes: acknowledged for an upload, received for a download).
    pub fn progress(&mut self, elapsed: f64, stats: &[PathStats], position: u64) {
        let Some(bar) = &self.bar else { return };
        let secs = elapsed - self.last_tick;
        if secs < 0.25 {
            return;
        }
        self.last_tick = elapsed;
        let paths: Vec<String> = self
            .rates
            .sample(stats, secs)
            .iter()
            .map(|p| format!("P{} {}", p.path, fmt_rate(p.goodput_bps)))
            .collect();
        bar.set_position(position);
        bar.set_message(format!(
            "{elapsed:5.1} s  {}  {}",
            fmt_bytes(self.rates.delivered()),
            paths.join("  ")
        ));
    }

    /// Prints an interval's lines.
    pub fn interval(&mut self, i: &Interval) {
        if !self.lines {
            return;
        }
        let mut text = String::new();
        if !self.header_done {
            self.header_done = true;
            text.push_str(INTERVAL_HEADER);
            text.push('\n');
        }
        text.push_str(&interval_lines(i, self.direction));
        self.print(text.trim_end());
    }

    /// Prints a line (above the progress line if there is one).
    pub fn print(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None if self.lines => println!("{text}"),
            None => {}
        }
    }

    /// Removes the progress line.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
