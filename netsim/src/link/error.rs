//! Configuration errors.
//!
//! Every validation failure names the offending field by its path in the configuration file (`rate_bps`,
//! `loss.p`, `jitter.distribution.stddev`, …), the value found and what was expected, so that a scenario author
//! can fix the file without reading this crate.

use thiserror::Error;

/// A link configuration value (from a file or a setter) is out of range.
#[derive(Clone, Debug, PartialEq, Error)]
#[error("invalid link configuration: `{field}` = {value}: {expected}")]
pub struct ConfigError {
    /// Path of the bad field, as written in a configuration file (e.g. `loss.p`).
    pub field: &'static str,
    /// The value that was rejected, formatted for humans.
    pub value: String,
    /// What a valid value looks like.
    pub expected: &'static str,
}

impl ConfigError {
    /// An error for `field`, which held `value` but must satisfy `expected`.
    pub fn new(field: &'static str, value: impl std::fmt::Display, expected: &'static str) -> ConfigError {
        ConfigError {
            field,
            value: value.to_string(),
            expected,
        }
    }
}

/// Checks that `value` is a probability: finite and within `[0, 1]`.
pub(crate) fn check_probability(field: &'static str, value: f64) -> Result<(), ConfigError> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(ConfigError::new(field, value, "a probability in [0, 1]"))
    }
}
