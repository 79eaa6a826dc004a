//! Propagation delay and jitter.
//!
//! A packet whose last bit leaves the sender at `departure` arrives at
//! `candidate = departure + delay + jitter`, where `delay` is the link's one-way propagation delay and
//! `jitter ≥ 0` is drawn per packet from a [`JitterDistribution`]. Jitter only ever *adds* delay, so `delay`
//! is the minimum one-way latency. (netem's `delay D J` spreads packets over `D ± J`; the same spread is
//! `delay = D − J` with a uniform jitter of `max = 2J`.)
//!
//! Ordering: with `allow_reordering = false` (the default, like a single wire or a FIFO radio link) a packet
//! never overtakes the previous one: `arrival = max(candidate, previous arrival)`, so arrivals are
//! non-decreasing (equal times are possible; the caller delivers them in the order they were returned). With
//! `allow_reordering = true` the arrival is the candidate, and a packet with a small jitter sample may arrive
//! before an earlier one with a large sample.

use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::error::ConfigError;
use super::limits::MAX_DELAY;
use crate::time::{SimTime, duration_to_nanos};

/// The distribution of the extra delay added to each packet.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum JitterDistribution {
    /// No jitter (TOML: `{ kind = "none" }`).
    #[default]
    None,
    /// Uniform over `[0, max]` (TOML: `{ kind = "uniform", max = "5ms" }`): mean `max / 2`, standard deviation
    /// `max / √12`.
    Uniform {
        /// The largest extra delay.
        #[serde(with = "crate::units::duration")]
        max: Duration,
    },
    /// Normal with the given mean and standard deviation, truncated at zero: a negative sample counts as zero
    /// (as netem does). With `mean ≥ 3 · stddev` the truncation moves the mean by less than `0.0004 · stddev`.
    /// TOML: `{ kind = "normal", mean = "10ms", stddev = "2ms" }`.
    Normal {
        /// Mean extra delay.
        #[serde(with = "crate::units::duration")]
        mean: Duration,
        /// Standard deviation of the extra delay.
        #[serde(with = "crate::units::duration")]
        stddev: Duration,
    },
}

/// Jitter settings of a link.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JitterConfig {
    /// Distribution of the extra delay.
    #[serde(default)]
    pub distribution: JitterDistribution,
    /// Whether a packet may overtake an earlier one (see the module documentation). Default: `false`.
    #[serde(default)]
    pub allow_reordering: bool,
}

impl JitterConfig {
    /// No jitter.
    pub const NONE: JitterConfig = JitterConfig {
        distribution: JitterDistribution::None,
        allow_reordering: false,
    };

    /// Checks the configuration: every duration at most [`MAX_DELAY`] (one hour; durations are
    /// non-negative by type).
    pub fn validate(&self) -> Result<(), ConfigError> {
        const EXPECTED: &str = "a duration from 0 to 1 hour (3600s)";
        let check = |field: &'static str, d: Duration| {
            if d > MAX_DELAY {
                Err(ConfigError::new(
                    field,
                    crate::units::format_duration(d),
                    EXPECTED,
                ))
            } else {
                Ok(())
            }
        };
        match self.distribution {
            JitterDistribution::None => Ok(()),
            JitterDistribution::Uniform { max } => check("jitter.distribution.max", max),
            JitterDistribution::Normal { mean, stddev } => {
                check("jitter.distribution.mean", mean)?;
                check("jitter.distribution.stddev", stddev)
            }
        }
    }
}

/// The propagation stage of a link: delay, jitter, ordering.
#[derive(Clone, Debug)]
pub(crate) struct DelayLine {
    delay: Duration,
    jitter: JitterConfig,
    rng: ChaCha8Rng,
    /// Latest arrival handed out (the floor for the next one when ordering is preserved).
    last_arrival: SimTime,
}

impl DelayLine {
    pub(crate) fn new(delay: Duration, jitter: JitterConfig, rng: ChaCha8Rng) -> DelayLine {
        DelayLine {
            delay,
            jitter,
            rng,
            last_arrival: SimTime::ZERO,
        }
    }

    pub(crate) fn delay(&self) -> Duration {
        self.delay
    }

    pub(crate) fn jitter(&self) -> &JitterConfig {
        &self.jitter
    }

    pub(crate) fn set_delay(&mut self, delay: Duration) {
        self.delay = delay;
    }

    pub(crate) fn set_jitter(&mut self, jitter: JitterConfig) {
        self.jitter = jitter;
    }

    /// Arrival time of a packet whose last bit leaves at `departure`: no earlier than any arrival handed out
    /// before when ordering is preserved. Records the arrival as the latest one.
    pub(crate) fn arrival(&mut self, departure: SimTime) -> SimTime {
        let jitter = self.sample_jitter_nanos();
        let candidate = departure.saturating_add(self.delay).saturating_add_nanos(jitter);
        let at = if self.jitter.allow_reordering {
            candidate
        } else {
            candidate.max(self.last_arrival)
        };
        self.last_arrival = self.last_arrival.max(at);
        at
    }

    fn sample_jitter_nanos(&mut self) -> u64 {
        match self.jitter.distribution {
            JitterDistribution::None => 0,
            JitterDistribution::Uniform { max } => self.rng.random_range(0..=duration_to_nanos(max)),
            JitterDistribution::Normal { mean, stddev } => {
                let z = standard_normal(&mut self.rng);
                let sample = duration_to_nanos(mean) as f64 + z * duration_to_nanos(stddev) as f64;
                // `as` maps negative values (and NaN) to 0 and saturates above u64::MAX: the truncation at 0.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let nanos = sample.round() as u64;
                nanos
            }
        }
    }
}

/// One standard normal sample (Box–Muller; the second variate is discarded, so each sample costs two uniform draws).
fn standard_normal(rng: &mut ChaCha8Rng) -> f64 {
    // u1 in (0, 1] so that ln(u1) is finite.
    let u1 = 1.0 - rng.random::<f64>();
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}
