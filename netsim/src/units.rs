//! Human-readable durations in configuration files, and bounded integers on command lines.
//!
//! Scenario files (TOML) write durations as a decimal number followed by a unit: `"10ms"`, `"1.5s"`, `"250us"`,
//! `"100ns"` (`µs` is accepted for `us`); a bare `"0"` is zero. The conversion is exact (decimal arithmetic,
//! no floating point) down to the nanosecond; digits below a nanosecond are rejected rather than rounded.
//! Serialisation writes the largest unit that represents the value exactly (`"10ms"`, `"1500us"`).
//!
//! Use through serde's `with` attribute: `#[serde(with = "crate::units::duration")]`, or
//! `crate::units::option_duration` for an `Option<Duration>`.

use std::time::Duration;

/// Units accepted after the number, with their length in nanoseconds.
const UNITS: [(&str, u64); 5] = [
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
];

/// Parses a duration written as `<decimal><unit>` (see the module documentation).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let unit = unit.trim();
    let Some(&(_, unit_nanos)) = UNITS.iter().find(|(name, _)| *name == unit) else {
        return Err(format!("duration {text:?}: expected a unit among ns, us, ms, s"));
    };
    let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(format!("duration {text:?}: missing number"));
    }
    let overflow = || format!("duration {text:?} is too large");
    let int: u64 = if int_part.is_empty() {
        0
    } else {
        int_part
            .parse()
            .map_err(|_| format!("duration {text:?}: bad number"))?
    };
    let mut nanos = int.checked_mul(unit_nanos).ok_or_else(overflow)?;
    // Fractional digits: each one is worth a tenth of the previous place.
    let mut place = unit_nanos;
    for c in frac_part.chars() {
        let digit = u64::from(
            c.to_digit(10)
                .ok_or_else(|| format!("duration {text:?}: bad number"))?,
        );
        if place % 10 != 0 {
            if digit != 0 {
                return Err(format!("duration {text:?} is finer than a nanosecond"));
            }
            continue;
        }
        place /= 10;
        nanos = nanos.checked_add(digit * place).ok_or_else(overflow)?;
    }
    Ok(Duration::from_nanos(nanos))
}

/// Parses a decimal integer within `min..=max` (a command-line option's value); the error names the range,
/// so that a negative number or one too large reads `expected an integer from 1 to 5000`.
pub fn parse_int_in(text: &str, min: u64, max: u64) -> Result<u64, String> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|v| (min..=max).contains(v))
        .ok_or_else(|| format!("expected an integer from {min} to {max}"))
}

/// Formats a duration with the largest unit that represents it exactly.
pub fn format_duration(d: Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0".to_owned();
    }
    for (name, unit) in [("s", 1_000_000_000u128), ("ms", 1_000_000), ("us", 1_000)] {
        if nanos % unit == 0 {
            return format!("{}{name}", nanos / unit);
        }
    }
    format!("{nanos}ns")
}

/// Serde adapter for a [`Duration`] written as `"10ms"`.
pub mod duration {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    /// Writes the duration as a string with a unit.
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::format_duration(*d))
    }

    /// Reads a duration written as a string with a unit.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        super::parse_duration(&text).map_err(serde::de::Error::custom)
    }
}

/// Serde adapter for an optional [`Duration`] written as `"10ms"` (absent field = `None`; pair with
/// `#[serde(default)]`).
pub mod option_duration {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    /// Writes the duration as a string with a unit, or nothing.
    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&super::format_duration(*d)),
            None => s.serialize_none(),
        }
    }

    /// Reads an optional duration written as a string with a unit.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let text = Option::<String>::deserialize(d)?;
        text.map(|t| super::parse_duration(&t).map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_exactly() {
        assert_eq!(parse_duration("10ms"), Ok(Duration::from_millis(10)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration(".25ms"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("3µs"), Ok(Duration::from_micros(3)));
        assert_eq!(parse_duration("7ns"), Ok(Duration::from_nanos(7)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("0.000000001s"), Ok(Duration::from_nanos(1)));
        assert_eq!(
            parse_duration("1.50ns"),
            Err("duration \"1.50ns\" is finer than a nanosecond".into())
        );
        assert!(parse_duration("10").is_err());
        assert!(parse_duration("ms").is_err());
        assert!(parse_duration("1.2.3s").is_err());
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("99999999999999999999s").is_err());
    }

    #[test]
    fn integers_in_a_range() {
        assert_eq!(parse_int_in("7", 1, 10), Ok(7));
        assert_eq!(parse_int_in(" 10 ", 1, 10), Ok(10));
        for bad in ["0", "11", "-1", "1.5", "x", "", "99999999999999999999"] {
            assert_eq!(
                parse_int_in(bad, 1, 10),
                Err("expected an integer from 1 to 10".to_owned()),
                "{bad}"
            );
        }
    }

    #[test]
    fn formats_with_largest_exact_unit() {
        for d in [
            Duration::ZERO,
            Duration::from_secs(2),
            Duration::from_micros(1500),
            Duration::from_nanos(7),
        ] {
            assert_eq!(parse_duration(&format_duration(d)), Ok(d));
        }
        assert_eq!(format_duration(Duration::from_micros(1500)), "1500us");
        assert_eq!(format_duration(Duration::from_millis(10)), "10ms");
    }
}
