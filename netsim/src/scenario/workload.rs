//! Application workloads besides bulk: request/response transfers (`kind = "requests"`, web-like) and
//! chunked video (`kind = "video"`).
//!
//! ```toml
//! [[flows]]
//! kind = "requests"
//! # object sizes cycle through a list ...
//! requests = { sizes = ["10KiB", "100KiB", "1MiB"], gap = "100ms", count = 50 }
//! # ... or are drawn from a distribution with the flow's own seeded random stream
//! requests = { size = { dist = "lognormal", median = "30KiB", sigma = 1.5, max = "10MiB" }, gap = "0" }
//!
//! [[flows]]
//! kind = "video"
//! video = { bitrate = "5Mbit/s", chunk = "2s", buffer = "10s" }
//! ```
//!
//! **Requests.** The client requests one object at a time, each on a new bidirectional stream; the next
//! request goes out `gap` after the previous object completed (a closed loop with think time). With
//! `direction = "download"` the client sends an 8-byte request naming the size and the server answers with
//! the object; with `"upload"` the client sends the object and the server answers with an 8-byte
//! acknowledgement once it has read all of it. An object's **flow completion time** (FCT) runs from the
//! request (the client opens the stream) to the moment the receiving application has read the object's last
//! byte.
//!
//! | key | meaning | range | default |
//! |---|---|---|---|
//! | `sizes` | object sizes, used in turn and cycled | 1 to 1000 entries, each 1 B – 1 GiB | (one of `sizes`, `size`) |
//! | `size` | a size distribution (below) | | |
//! | `gap` | think time after an object completes | 0 – 1 h | 0 |
//! | `count` | objects after which the flow completes | 1 – 1,000,000 | until `stop` |
//!
//! Size distributions (`dist`), every draw rounded to whole bytes and clamped to `[1 B, max]`, `max`
//! 1 B – 1 GiB (default 1 GiB):
//! - `lognormal`: `median` (1 B – 1 GiB) and `sigma` (the standard deviation of the logarithm, 0 – 4):
//!   `median · exp(sigma · Z)`, `Z` standard normal (Box–Muller);
//! - `pareto`: `min` (the scale, 1 B – 1 GiB) and `shape` (α, 0.1 – 10): `min · U^(−1/α)`;
//! - `exponential`: `mean` (1 B – 1 GiB): `−mean · ln U`;
//! - `uniform`: `min` to `max` (1 B – 1 GiB, `min ≤ max`).
//!
//! `U` is uniform on (0, 1] from the flow's random stream (ChaCha8 seeded from the scenario seed and the
//! flow's index), so a seed fixes every size.
//!
//! **Video.** A player downloads (or, with `direction = "upload"`, the client uploads) chunks of `chunk`
//! seconds of media at `bitrate`: each chunk is `bitrate · chunk / 8` bytes, transferred like a request's
//! object. The next chunk is requested when the previous one has been read in full, unless the playback
//! buffer is full: then when it has drained to `buffer − chunk`, so that the new chunk fits. The
//! **playback model**: playback starts when the first chunk has been read in full (the startup delay);
//! chunk `k` plays from `p_k = max(p_(k−1) + chunk, c_k)` where `c_k` is when its last byte was read; the
//! player **stalls** for `c_k − (p_(k−1) + chunk)` when that is positive, and at the end of the run for the
//! time the buffer has been empty while more chunks were due. Metrics: chunk download time (request to last
//! byte), total stall time and number of stalls, startup delay.
//!
//! | key | meaning | range | default |
//! |---|---|---|---|
//! | `bitrate` | media bitrate, bits per second (integer or `"5Mbit/s"`) | 8 kbit/s – 10 Gbit/s, a chunk at most 1 GiB | required |
//! | `chunk` | media duration of a chunk | 10 ms – 60 s | 2 s |
//! | `buffer` | most media the player buffers ahead | `chunk` – 1 h | 10 s |
//! | `count` | chunks after which the flow completes | 1 – 1,000,000 | until `stop` |

use std::time::Duration;

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::ScenarioError;
use super::quantity::format_bytes;

/// Largest object or chunk, bytes.
pub const MAX_OBJECT: u64 = 1 << 30;
/// Most entries in `sizes`.
pub const MAX_SIZES: usize = 1000;
/// Largest `count`.
pub const MAX_COUNT: u64 = 1_000_000;
/// Longest `gap` or `buffer`.
pub const MAX_WAIT: Duration = Duration::from_secs(3600);

fn default_max() -> u64 {
    MAX_OBJECT
}

/// A distribution of object sizes (see the module documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum SizeDist {
    /// `median · exp(sigma · Z)`.
    Lognormal {
        /// Median, bytes.
        #[serde(with = "super::quantity::bytes")]
        median: u64,
        /// Standard deviation of the logarithm.
        sigma: f64,
        /// Cap, bytes.
        #[serde(default = "default_max", with = "super::quantity::bytes")]
        max: u64,
    },
    /// `min · U^(−1/shape)`.
    Pareto {
        /// Scale (the smallest value), bytes.
        #[serde(with = "super::quantity::bytes")]
        min: u64,
        /// Tail index α.
        shape: f64,
        /// Cap, bytes.
        #[serde(default = "default_max", with = "super::quantity::bytes")]
        max: u64,
    },
    /// `−mean · ln U`.
    Exponential {
        /// Mean, bytes.
        #[serde(with = "super::quantity::bytes")]
        mean: u64,
        /// Cap, bytes.
        #[serde(default = "default_max", with = "super::quantity::bytes")]
        max: u64,
    },
    /// Uniform on `[min, max]`.
    Uniform {
        /// Smallest, bytes.
        #[serde(with = "super::quantity::bytes")]
        min: u64,
        /// Largest, bytes.
        #[serde(with = "super::quantity::bytes")]
        max: u64,
    },
}

/// A uniform draw on (0, 1].
fn unit(rng: &mut impl Rng) -> f64 {
    1.0 - rng.random::<f64>()
}

/// A standard normal draw (Box–Muller: `sqrt(−2 ln U1) · cos(2π U2)`).
fn standard_normal(rng: &mut impl Rng) -> f64 {
    let (u1, u2) = (unit(rng), unit(rng));
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// `x` rounded to whole bytes and clamped to `[1, max]` (NaN gives 1).
#[allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]
fn clamp_bytes(x: f64, max: u64) -> u64 {
    let max_f = max as f64;
    if x.is_nan() || x < 1.0 {
        1
    } else if x >= max_f {
        max
    } else {
        (x.round() as u64).clamp(1, max)
    }
}

impl SizeDist {
    /// One size drawn from `rng`.
    #[allow(clippy::cast_precision_loss)]
    pub fn draw(&self, rng: &mut impl Rng) -> u64 {
        match *self {
            SizeDist::Lognormal { median, sigma, max } => {
                clamp_bytes(median as f64 * (sigma * standard_normal(rng)).exp(), max)
            }
            SizeDist::Pareto { min, shape, max } => {
                clamp_bytes(min as f64 * unit(rng).powf(-1.0 / shape), max)
            }
            SizeDist::Exponential { mean, max } => clamp_bytes(-(mean as f64) * unit(rng).ln(), max),
            SizeDist::Uniform { min, max } => rng.random_range(min..=max.max(min)),
        }
    }

    fn validate(&self, field: &str) -> Result<(), ScenarioError> {
        let bytes = |key: &str, v: u64, lo: u64, lo_name: &str| {
            if v < lo || v > MAX_OBJECT {
                Err(ScenarioError::invalid(
                    format!("{field}.{key}"),
                    format!(
                        "{v} bytes ({}) is out of range: expected {lo_name} to 1GiB",
                        format_bytes(v)
                    ),
                ))
            } else {
                Ok(())
            }
        };
        let real = |key: &str, v: f64, lo: f64, hi: f64| {
            if v.is_finite() && (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(ScenarioError::invalid(
                    format!("{field}.{key}"),
                    format!("{v} is out of range: expected {lo} to {hi}"),
                ))
            }
        };
        match *self {
            SizeDist::Lognormal { median, sigma, max } => {
                bytes("median", median, 1, "1B")?;
                real("sigma", sigma, 0.0, 4.0)?;
                bytes("max", max, 1, "1B")
            }
            SizeDist::Pareto { min, shape, max } => {
                bytes("min", min, 1, "1B")?;
                real("shape", shape, 0.1, 10.0)?;
                bytes("max", max, min, "`min`")
            }
            SizeDist::Exponential { mean, max } => {
                bytes("mean", mean, 1, "1B")?;
                bytes("max", max, 1, "1B")
            }
            SizeDist::Uniform { min, max } => {
                bytes("min", min, 1, "1B")?;
                bytes("max", max, min, "`min`")
            }
        }
    }
}

/// The `requests` table of a `kind = "requests"` flow (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestsSpec {
    /// Object sizes used in turn.
    #[serde(
        default,
        with = "super::quantity::bytes_list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub sizes: Vec<u64>,
    /// A size distribution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<SizeDist>,
    /// Think time after each object.
    #[serde(default, with = "crate::units::duration")]
    pub gap: Duration,
    /// Objects after which the flow completes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}

fn default_chunk() -> Duration {
    Duration::from_secs(2)
}

fn default_buffer() -> Duration {
    Duration::from_secs(10)
}

/// The `video` table of a `kind = "video"` flow (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VideoSpec {
    /// Media bitrate, bits per second.
    #[serde(with = "super::quantity::rate")]
    pub bitrate: u64,
    /// Media duration of one chunk.
    #[serde(default = "default_chunk", with = "crate::units::duration")]
    pub chunk: Duration,
    /// Most media buffered ahead of playback.
    #[serde(default = "default_buffer", with = "crate::units::duration")]
    pub buffer: Duration,
    /// Chunks after which the flow completes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}

fn check_count(field: &str, count: Option<u64>) -> Result<(), ScenarioError> {
    match count {
        Some(n) if n == 0 || n > MAX_COUNT => Err(ScenarioError::invalid(
            format!("{field}.count"),
            format!("{n} is out of range: expected 1 to {MAX_COUNT}"),
        )),
        _ => Ok(()),
    }
}

impl RequestsSpec {
    /// Checks every range; `field` is the table's path (`flows[0].requests`).
    pub fn validate(&self, field: &str) -> Result<(), ScenarioError> {
        match (self.sizes.is_empty(), &self.size) {
            (true, None) => {
                return Err(ScenarioError::invalid(
                    format!("{field}.sizes"),
                    "missing: give `sizes = [...]` or a distribution `size = { dist = ... }`",
                ));
            }
            (false, Some(_)) => {
                return Err(ScenarioError::invalid(
                    format!("{field}.size"),
                    "not with `sizes`: give one of the two",
                ));
            }
            _ => {}
        }
        if self.sizes.len() > MAX_SIZES {
            return Err(ScenarioError::invalid(
                format!("{field}.sizes"),
                format!("{} entries: expected at most {MAX_SIZES}", self.sizes.len()),
            ));
        }
        for (i, &s) in self.sizes.iter().enumerate() {
            if s == 0 || s > MAX_OBJECT {
                return Err(ScenarioError::invalid(
                    format!("{field}.sizes[{i}]"),
                    format!("{s} bytes is out of range: expected 1B to 1GiB"),
                ));
            }
        }
        if let Some(size) = &self.size {
            size.validate(&format!("{field}.size"))?;
        }
        if self.gap > MAX_WAIT {
            return Err(ScenarioError::invalid(
                format!("{field}.gap"),
                format!(
                    "{} is out of range: expected 0 to 1h",
                    crate::units::format_duration(self.gap)
                ),
            ));
        }
        check_count(field, self.count)
    }
}

impl VideoSpec {
    /// Bytes of one chunk: `bitrate · chunk / 8`, rounded down, at least 1.
    pub fn chunk_bytes(&self) -> u64 {
        let bits = u128::from(self.bitrate).saturating_mul(self.chunk.as_nanos()) / 1_000_000_000;
        u64::try_from(bits / 8).unwrap_or(u64::MAX).max(1)
    }

    /// Checks every range; `field` is the table's path (`flows[0].video`).
    pub fn validate(&self, field: &str) -> Result<(), ScenarioError> {
        if !(8_000..=10_000_000_000).contains(&self.bitrate) {
            return Err(ScenarioError::invalid(
                format!("{field}.bitrate"),
                format!(
                    "{} bit/s is out of range: expected 8kbit/s to 10Gbit/s",
                    self.bitrate
                ),
            ));
        }
        let fmt = crate::units::format_duration;
        if self.chunk < Duration::from_millis(10) || self.chunk > Duration::from_secs(60) {
            return Err(ScenarioError::invalid(
                format!("{field}.chunk"),
                format!("{} is out of range: expected 10ms to 60s", fmt(self.chunk)),
            ));
        }
        if self.chunk_bytes() > MAX_OBJECT {
            return Err(ScenarioError::invalid(
                format!("{field}.bitrate"),
                format!(
                    "a chunk of {} at {} bit/s is {} bytes: at most 1GiB",
                    fmt(self.chunk),
                    self.bitrate,
                    self.chunk_bytes()
                ),
            ));
        }
        if self.buffer < self.chunk || self.buffer > MAX_WAIT {
            return Err(ScenarioError::invalid(
                format!("{field}.buffer"),
                format!(
                    "{} is out of range: expected `chunk` ({}) to 1h",
                    fmt(self.buffer),
                    fmt(self.chunk)
                ),
            ));
        }
        check_count(field, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    #[allow(clippy::cast_precision_loss)]
    fn draws_follow_their_distribution() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let n = 20_000;
        // Lognormal: the median of the draws is the median parameter (within 3 %).
        let d = SizeDist::Lognormal {
            median: 30_000,
            sigma: 1.0,
            max: MAX_OBJECT,
        };
        let mut v: Vec<u64> = (0..n).map(|_| d.draw(&mut rng)).collect();
        v.sort_unstable();
        let median = v[n / 2] as f64;
        assert!((median / 30_000.0 - 1.0).abs() < 0.03, "{median}");
        // Pareto α = 2, xm = 1000: mean α·xm/(α−1) = 2000; nothing below xm.
        let d = SizeDist::Pareto {
            min: 1000,
            shape: 2.0,
            max: MAX_OBJECT,
        };
        let v: Vec<u64> = (0..n).map(|_| d.draw(&mut rng)).collect();
        assert!(v.iter().all(|&x| x >= 1000));
        let mean = v.iter().sum::<u64>() as f64 / n as f64;
        assert!((mean / 2000.0 - 1.0).abs() < 0.08, "{mean}");
        // Exponential mean 5000, capped at 6000: the cap holds.
        let d = SizeDist::Exponential {
            mean: 5000,
            max: 6000,
        };
        let v: Vec<u64> = (0..n).map(|_| d.draw(&mut rng)).collect();
        assert!(v.iter().all(|&x| (1..=6000).contains(&x)));
        assert!(v.contains(&6000));
        // Uniform.
        let d = SizeDist::Uniform { min: 10, max: 20 };
        assert!((0..100).all(|_| (10..=20).contains(&d.draw(&mut rng))));
    }

    #[test]
    fn chunk_bytes_by_hand() {
        let v = VideoSpec {
            bitrate: 5_000_000,
            chunk: Duration::from_secs(2),
            buffer: Duration::from_secs(10),
            count: None,
        };
        // 5 Mbit/s × 2 s / 8 = 1.25 MB.
        assert_eq!(v.chunk_bytes(), 1_250_000);
    }
}
