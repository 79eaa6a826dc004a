//! Numbers with units as written on the command line: rates (`40mbit`), durations (`10ms`), queue limits
//! (`64`, `64pkt`, `150KB`, `1bdp`), probabilities (`0.01`, `1%`).
//!
//! Each parser returns a [`UnitError`] that names the text it rejected and what a valid value looks like, so
//! that the command line can print one line and exit. Durations are parsed by the simulator's own parser
//! ([`mpquic_netsim::units::parse_duration`]) so that `10ms` means the same here and in scenario files.
//! Decimal prefixes are powers of 1000, as in `tc` (`1kbit` = 1000 bit/s, `1KB` = 1000 bytes).

use std::time::Duration;

use thiserror::Error;

/// A value that does not parse, with what would have.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("invalid {what} {text:?}: expected {expected}")]
pub struct UnitError {
    /// What was being parsed (`rate`, `delay`, `queue`, …).
    pub what: &'static str,
    /// The text rejected.
    pub text: String,
    /// What a valid value looks like.
    pub expected: &'static str,
}

impl UnitError {
    pub(crate) fn new(what: &'static str, text: &str, expected: &'static str) -> UnitError {
        UnitError {
            what,
            text: text.to_owned(),
            expected,
        }
    }
}

/// What a rate looks like.
pub const RATE_EXPECTED: &str = "a number with a unit among bit, kbit, mbit, gbit (per second), e.g. 40mbit";
/// What a duration looks like.
pub const DURATION_EXPECTED: &str = "a number with a unit among ns, us, ms, s, e.g. 10ms (or 0)";
/// What a queue limit looks like.
pub const QUEUE_EXPECTED: &str =
    "packets (64 or 64pkt), bytes (150000B, 150KB, 1MB) or a multiple of the path's BDP (1bdp, 2.5bdp)";
/// What a probability looks like.
pub const PROBABILITY_EXPECTED: &str = "a probability in [0, 1] or a percentage, e.g. 0.01 or 1%";

/// Splits `text` into its leading decimal number and the rest (the unit), lower-cased.
fn split_number(text: &str) -> (&str, String) {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    (number, unit.trim().to_ascii_lowercase())
}

/// A non-negative finite decimal number.
fn parse_number(number: &str) -> Option<f64> {
    if number.is_empty() {
        return None;
    }
    number.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0)
}

/// `value · scale` rounded to the nearest integer, if it fits in a u64.
fn scaled(value: f64, scale: f64) -> Option<u64> {
    let v = (value * scale).round();
    // 2^64 as f64 is exact; anything at or above it does not fit.
    if v.is_finite() && (0.0..18_446_744_073_709_551_616.0).contains(&v) {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let n = v as u64;
        Some(n)
    } else {
        None
    }
}

/// Parses a rate in bits per second: `40mbit`, `1.5gbit`, `500kbit`, `9600bit`. Must be > 0.
pub fn parse_rate(text: &str) -> Result<u64, UnitError> {
    let err = || UnitError::new("rate", text, RATE_EXPECTED);
    let (number, unit) = split_number(text);
    let scale = match unit.as_str() {
        "bit" => 1.0,
        "kbit" => 1e3,
        "mbit" => 1e6,
        "gbit" => 1e9,
        _ => return Err(err()),
    };
    let bps = parse_number(number)
        .and_then(|v| scaled(v, scale))
        .ok_or_else(err)?;
    if bps == 0 {
        return Err(err());
    }
    Ok(bps)
}

/// Parses a duration: `10ms`, `1.5s`, `250us`, `0`.
pub fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    mpquic_netsim::units::parse_duration(text)
        .map_err(|_| UnitError::new("duration", text, DURATION_EXPECTED))
}

/// A queue limit as written on the command line, before the path's BDP is known.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueSpec {
    /// At most this many packets (> 0).
    Packets(u64),
    /// At most this many bytes (> 0).
    Bytes(u64),
    /// This multiple (> 0) of the path's bandwidth-delay product.
    Bdp(f64),
}

/// Parses a queue limit: `64`, `64pkt` (packets), `150000B`, `150KB`, `1MB` (bytes), `1bdp`, `2.5bdp`.
pub fn parse_queue(text: &str) -> Result<QueueSpec, UnitError> {
    let err = || UnitError::new("queue", text, QUEUE_EXPECTED);
    let (number, unit) = split_number(text);
    let value = parse_number(number).ok_or_else(err)?;
    let integer = |scale: f64| scaled(value, scale).filter(|n| *n > 0).ok_or_else(err);
    let spec = match unit.as_str() {
        "" | "p" | "pkt" | "pkts" | "packets" => {
            if value.fract() != 0.0 {
                return Err(err());
            }
            QueueSpec::Packets(integer(1.0)?)
        }
        "b" => QueueSpec::Bytes(integer(1.0)?),
        "kb" => QueueSpec::Bytes(integer(1e3)?),
        "mb" => QueueSpec::Bytes(integer(1e6)?),
        "bdp" if value > 0.0 => QueueSpec::Bdp(value),
        _ => return Err(err()),
    };
    Ok(spec)
}

/// Parses a probability: `0.01` or `1%`, within `[0, 1]`.
pub fn parse_probability(text: &str) -> Result<f64, UnitError> {
    let err = || UnitError::new("probability", text, PROBABILITY_EXPECTED);
    let (number, unit) = split_number(text);
    let value = parse_number(number).ok_or_else(err)?;
    let p = match unit.as_str() {
        "" => value,
        "%" => value / 100.0,
        _ => return Err(err()),
    };
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(err())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_in_decimal_units() {
        assert_eq!(parse_rate("40mbit"), Ok(40_000_000));
        assert_eq!(parse_rate("1.5gbit"), Ok(1_500_000_000));
        assert_eq!(parse_rate("500kbit"), Ok(500_000));
        assert_eq!(parse_rate("9600bit"), Ok(9600));
        assert_eq!(parse_rate("40Mbit"), Ok(40_000_000));
        for bad in ["40", "40mbps", "mbit", "0mbit", "-1mbit", "1e3kbit", ""] {
            let e = parse_rate(bad).unwrap_err();
            assert!(e.to_string().contains("kbit, mbit, gbit"), "{bad}: {e}");
        }
    }

    #[test]
    fn durations_like_scenarios() {
        assert_eq!(parse_duration("10ms"), Ok(Duration::from_millis(10)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        let e = parse_duration("10").unwrap_err();
        assert!(e.to_string().contains("ns, us, ms, s"), "{e}");
    }

    #[test]
    fn queues_in_packets_bytes_or_bdp() {
        assert_eq!(parse_queue("64"), Ok(QueueSpec::Packets(64)));
        assert_eq!(parse_queue("64pkt"), Ok(QueueSpec::Packets(64)));
        assert_eq!(parse_queue("150000B"), Ok(QueueSpec::Bytes(150_000)));
        assert_eq!(parse_queue("150KB"), Ok(QueueSpec::Bytes(150_000)));
        assert_eq!(parse_queue("1.5MB"), Ok(QueueSpec::Bytes(1_500_000)));
        assert_eq!(parse_queue("2.5bdp"), Ok(QueueSpec::Bdp(2.5)));
        for bad in ["0", "1.5", "0bdp", "10 frames", "x"] {
            let e = parse_queue(bad).unwrap_err();
            assert!(e.to_string().contains("bdp"), "{bad}: {e}");
        }
    }

    #[test]
    fn probabilities_and_percentages() {
        assert_eq!(parse_probability("0.01"), Ok(0.01));
        assert_eq!(parse_probability("10%"), Ok(0.1));
        assert_eq!(parse_probability("1"), Ok(1.0));
        for bad in ["1.5", "200%", "p", "0.1x"] {
            assert!(parse_probability(bad).is_err(), "{bad}");
        }
    }
}
