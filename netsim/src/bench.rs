//! The simulator's speed benchmark (`mpquic-sim bench`): the reference case and its figures.
//!
//! The reference case is one CUBIC flow (real mpquic endpoints, 1200-byte datagrams) over a single link of
//! `rate` bits per second with 5 ms one-way delay in each direction (10 ms RTT), a drop-tail queue of one
//! bandwidth-delay product, no loss, for `duration` of simulated time (by default 1 Gbit/s and 20 s). The
//! engine never reads the clock; the caller times [`crate::engine::Engine::run`] and turns the wall time
//! into [`Figures`].

use std::time::Duration;

use crate::Scenario;
use crate::engine::RunOutput;
use crate::scenario::{Crypto, ScenarioError};

/// Default link rate of the reference case: 1 Gbit/s.
pub const DEFAULT_RATE_BPS: u64 = 1_000_000_000;
/// Default simulated time: 20 s.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(20);
/// Smallest `--rate`: 1 Mbit/s (below it a 10 ms BDP holds less than one packet).
pub const MIN_RATE_BPS: u64 = 1_000_000;
/// Largest `--rate`: 100 Gbit/s.
pub const MAX_RATE_BPS: u64 = 100_000_000_000;
/// Smallest `--duration`: 100 ms (the flow's sampling interval).
pub const MIN_DURATION: Duration = Duration::from_millis(100);
/// Largest `--duration`: one hour.
pub const MAX_DURATION: Duration = Duration::from_secs(3600);
/// Largest `--runs`.
pub const MAX_RUNS: u64 = 100;

/// The reference case's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchCase {
    /// Link rate, bits per second ([`MIN_RATE_BPS`] to [`MAX_RATE_BPS`]).
    pub rate_bps: u64,
    /// Simulated time ([`MIN_DURATION`] to [`MAX_DURATION`]).
    pub duration: Duration,
    /// Packet protection.
    pub crypto: Crypto,
}

impl Default for BenchCase {
    fn default() -> Self {
        BenchCase {
            rate_bps: DEFAULT_RATE_BPS,
            duration: DEFAULT_DURATION,
            crypto: Crypto::Aes128gcm,
        }
    }
}

impl BenchCase {
    /// The scenario of the case (validated as any scenario file).
    pub fn scenario(&self) -> Result<Scenario, ScenarioError> {
        let text = format!(
            r#"[scenario]
name = "bench"
description = "Speed benchmark: one CUBIC flow, {rate} bit/s, 10 ms RTT, 1 x BDP drop-tail queue"
duration = "{ms}ms"
seed = 1
sample_interval = "100ms"
crypto = "{crypto}"

[nodes.client]
kind = "host"
interfaces = [{{ name = "eth0", address = "10.0.0.1" }}]

[nodes.server]
kind = "host"
interfaces = [{{ name = "eth0", address = "10.0.0.2" }}]

[links.bn]
between = ["client.eth0", "server.eth0"]
rate_bps = {rate}
delay = "5ms"
queue = {{ kind = "bdp", multiple = 1.0 }}

[[flows]]
name = "f1"
from = "client"
to = "server"
cc = "cubic"
paths = [{{ route = ["bn"] }}]
"#,
            rate = self.rate_bps,
            ms = self.duration.as_millis(),
            crypto = self.crypto.name(),
        );
        Scenario::from_toml_str(&text)
    }

    /// One line describing the case.
    pub fn describe(&self) -> String {
        format!(
            "one CUBIC flow, {}, 10 ms RTT, 1 x BDP drop-tail queue, {} simulated, crypto {}",
            rate_label(self.rate_bps),
            crate::units::format_duration(self.duration),
            self.crypto.name()
        )
    }
}

/// A rate for people: `1 Gbit/s`, `250 Mbit/s`, `1.5 Gbit/s`.
pub fn rate_label(bps: u64) -> String {
    let v = bps as f64;
    if bps >= 1_000_000_000 {
        format!("{} Gbit/s", trim(v / 1e9))
    } else {
        format!("{} Mbit/s", trim(v / 1e6))
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// The figures of one timed run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figures {
    /// Wall-clock time of the run (building the engine included).
    pub wall: Duration,
    /// Simulated seconds per wall-clock second.
    pub speed: f64,
    /// CPU time of the run's thread, when the platform reports it: on a loaded machine the wall time
    /// includes waiting for a CPU, this does not.
    pub cpu: Option<Duration>,
    /// Simulated seconds per CPU second.
    pub speed_cpu: Option<f64>,
    /// The flow's goodput, bits per second of simulated time.
    pub goodput_bps: f64,
    /// Datagrams the connections sent.
    pub datagrams: u64,
    /// Datagrams per wall-clock second.
    pub datagrams_per_wall_s: f64,
    /// Datagrams per simulated second.
    pub datagrams_per_sim_s: f64,
}

impl Figures {
    /// The figures of `out`, a run of `case` that took `wall` (and `cpu` of its thread's CPU time).
    pub fn of(case: &BenchCase, out: &RunOutput, wall: Duration, cpu: Option<Duration>) -> Figures {
        let wall_s = wall.as_secs_f64().max(1e-9);
        let sim_s = case.duration.as_secs_f64();
        let goodput_bps = out
            .result
            .flows
            .first()
            .and_then(|f| f.goodput_bps)
            .unwrap_or(0.0);
        let datagrams = out.stats.datagrams;
        Figures {
            wall,
            speed: sim_s / wall_s,
            cpu,
            speed_cpu: cpu.map(|c| sim_s / c.as_secs_f64().max(1e-9)),
            goodput_bps,
            datagrams,
            datagrams_per_wall_s: datagrams as f64 / wall_s,
            datagrams_per_sim_s: datagrams as f64 / sim_s.max(1e-9),
        }
    }
}

/// The median of `values` (the lower of the two middle ones for an even count); `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len().saturating_sub(1) / 2).copied()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use super::*;

    #[test]
    fn reference_scenario_is_the_documented_case() {
        let s = BenchCase::default().scenario().unwrap();
        assert_eq!(s.scenario.duration, Duration::from_secs(20));
        assert_eq!(s.scenario.crypto, Crypto::Aes128gcm);
        assert_eq!(s.flows.len(), 1);
        assert_eq!(s.flows[0].cc, "cubic");
        let bn = &s.links["bn"];
        assert_eq!(bn.rate_bps, 1_000_000_000);
        let null = BenchCase {
            crypto: Crypto::Null,
            rate_bps: MIN_RATE_BPS,
            duration: MIN_DURATION,
        };
        let s = null.scenario().unwrap();
        assert_eq!(s.scenario.crypto, Crypto::Null);
        assert_eq!(s.scenario.duration, Duration::from_millis(100));
    }

    #[test]
    fn labels_and_median() {
        assert_eq!(rate_label(1_000_000_000), "1 Gbit/s");
        assert_eq!(rate_label(1_500_000_000), "1.5 Gbit/s");
        assert_eq!(rate_label(250_000_000), "250 Mbit/s");
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.0));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn figures_from_a_short_run() {
        // 20 Mbit/s for 2 s: the link carries at most 20e6 / 8 / 1200 ≈ 2083 full datagrams per second, so
        // the goodput is below the rate and, after a slow start of a few 10 ms rounds, above half of it.
        let case = BenchCase {
            rate_bps: 20_000_000,
            duration: Duration::from_secs(2),
            crypto: Crypto::Null,
        };
        let out = crate::engine::Engine::run(case.scenario().unwrap()).unwrap();
        let f = Figures::of(
            &case,
            &out,
            Duration::from_millis(500),
            Some(Duration::from_millis(250)),
        );
        assert!((f.speed - 4.0).abs() < 1e-12);
        assert!((f.speed_cpu.unwrap() - 8.0).abs() < 1e-12);
        assert!(f.goodput_bps > 10e6 && f.goodput_bps < 20e6, "{}", f.goodput_bps);
        assert!(
            f.datagrams > 2000 && f.datagrams < 2 * 2 * 2084,
            "{}",
            f.datagrams
        );
        assert!((f.datagrams_per_wall_s - 2.0 * f.datagrams as f64).abs() < 1e-6);
        assert!((f.datagrams_per_sim_s - f.datagrams as f64 / 2.0).abs() < 1e-9);
    }
}
