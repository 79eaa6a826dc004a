//! Byte sizes and rates with units, for the receiver and workload settings of a flow.
//!
//! A **size** is an integer number of bytes (`131072`) or a string with a unit: `"128KiB"`, `"6MiB"`,
//! `"1GiB"` (binary, ×1024), `"64kB"`, `"1.5MB"`, `"1GB"` (decimal, ×1000) or `"1500B"`. A **rate** is an
//! integer number of bits per second (`20000000`) or a string: `"20Mbit/s"`, `"500kbit/s"`, `"1Gbit/s"`,
//! `"800bit/s"` (decimal prefixes, as for link rates). The number may have a fraction (`"1.5MiB"`,
//! `"2.5Mbit/s"`); the conversion is exact decimal arithmetic, and a value that is not a whole number of
//! bytes (bits per second) is rejected rather than rounded. Serialisation writes the plain integer.
//!
//! Use through serde's `with` attribute: `#[serde(with = "crate::scenario::quantity::bytes")]` (or
//! `option_bytes`, `rate`, `option_rate`).

/// Units of a size, with their value in bytes.
const SIZE_UNITS: [(&str, u64); 7] = [
    ("B", 1),
    ("kB", 1_000),
    ("KiB", 1 << 10),
    ("MB", 1_000_000),
    ("MiB", 1 << 20),
    ("GB", 1_000_000_000),
    ("GiB", 1 << 30),
];

/// Units of a rate, with their value in bits per second.
const RATE_UNITS: [(&str, u64); 4] = [
    ("bit/s", 1),
    ("kbit/s", 1_000),
    ("Mbit/s", 1_000_000),
    ("Gbit/s", 1_000_000_000),
];

/// Parses `<decimal><unit>` against `units` exactly (see the module documentation); `what` names the kind
/// of quantity in messages.
fn parse_with(text: &str, units: &[(&str, u64)], what: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let unit = unit.trim();
    let names: Vec<&str> = units.iter().map(|(n, _)| *n).collect();
    let Some(&(_, scale)) = units.iter().find(|(name, _)| *name == unit) else {
        return Err(format!(
            "{what} {text:?}: expected a unit among {}",
            names.join(", ")
        ));
    };
    let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(format!("{what} {text:?}: missing number"));
    }
    let bad = || format!("{what} {text:?}: bad number");
    let overflow = || format!("{what} {text:?} is too large");
    let int: u64 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().map_err(|e: std::num::ParseIntError| {
            if *e.kind() == std::num::IntErrorKind::PosOverflow {
                overflow()
            } else {
                bad()
            }
        })?
    };
    let mut value = u128::from(int)
        .checked_mul(u128::from(scale))
        .ok_or_else(overflow)?;
    // The fraction as numerator / 10^digits, times the unit: it must come out whole.
    let mut numerator: u128 = 0;
    let mut denominator: u128 = 1;
    for c in frac_part.chars() {
        let digit = c.to_digit(10).ok_or_else(bad)?;
        numerator = numerator
            .checked_mul(10)
            .and_then(|n| n.checked_add(u128::from(digit)))
            .ok_or_else(overflow)?;
        denominator = denominator.checked_mul(10).ok_or_else(overflow)?;
    }
    let scaled = numerator.checked_mul(u128::from(scale)).ok_or_else(overflow)?;
    if scaled % denominator != 0 {
        return Err(format!(
            "{what} {text:?} is not a whole number of {}",
            names.first().copied().unwrap_or("")
        ));
    }
    value = value.checked_add(scaled / denominator).ok_or_else(overflow)?;
    u64::try_from(value).map_err(|_| overflow())
}

/// Parses a size in bytes written with a unit (`"128KiB"`).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    parse_with(text, &SIZE_UNITS, "size")
}

/// Parses a rate in bits per second written with a unit (`"20Mbit/s"`).
pub fn parse_rate(text: &str) -> Result<u64, String> {
    parse_with(text, &RATE_UNITS, "rate")
}

/// Formats a size with the largest binary unit that represents it exactly (`"128KiB"`, `"1500B"`).
pub fn format_bytes(bytes: u64) -> String {
    for (name, unit) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if bytes >= unit && bytes % unit == 0 {
            return format!("{}{name}", bytes / unit);
        }
    }
    format!("{bytes}B")
}

/// Formats a rate with the largest decimal unit that represents it exactly (`"20Mbit/s"`).
pub fn format_rate(bps: u64) -> String {
    for (name, unit) in [
        ("Gbit/s", 1_000_000_000u64),
        ("Mbit/s", 1_000_000),
        ("kbit/s", 1_000),
    ] {
        if bps >= unit && bps % unit == 0 {
            return format!("{}{name}", bps / unit);
        }
    }
    format!("{bps}bit/s")
}

/// An integer, or a string parsed by `parse`.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Written {
    Int(u64),
    Text(String),
}

fn read<'de, D: serde::Deserializer<'de>>(
    d: D,
    parse: fn(&str) -> Result<u64, String>,
) -> Result<u64, D::Error> {
    use serde::Deserialize;
    match Written::deserialize(d)? {
        Written::Int(v) => Ok(v),
        Written::Text(t) => parse(&t).map_err(serde::de::Error::custom),
    }
}

/// Serde adapter for a size in bytes (integer or `"128KiB"`).
pub mod bytes {
    use serde::{Deserializer, Serializer};

    /// Writes the number of bytes.
    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(*v)
    }

    /// Reads an integer or a string with a unit.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        super::read(d, super::parse_bytes)
    }
}

/// Serde adapter for an optional size (absent field = `None`; pair with `#[serde(default)]`).
pub mod option_bytes {
    use serde::{Deserializer, Serializer};

    /// Writes the number of bytes, or nothing.
    pub fn serialize<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => s.serialize_some(v),
            None => s.serialize_none(),
        }
    }

    /// Reads an integer or a string with a unit.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        super::read(d, super::parse_bytes).map(Some)
    }
}

/// Serde adapter for a rate in bits per second (integer or `"20Mbit/s"`).
pub mod rate {
    use serde::{Deserializer, Serializer};

    /// Writes bits per second.
    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(*v)
    }

    /// Reads an integer or a string with a unit.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        super::read(d, super::parse_rate)
    }
}

/// Serde adapter for an optional rate (absent field = `None`; pair with `#[serde(default)]`).
pub mod option_rate {
    use serde::{Deserializer, Serializer};

    /// Writes bits per second, or nothing.
    pub fn serialize<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => s.serialize_some(v),
            None => s.serialize_none(),
        }
    }

    /// Reads an integer or a string with a unit.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        super::read(d, super::parse_rate).map(Some)
    }
}

/// A list of sizes, each an integer or a string with a unit.
pub mod bytes_list {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the numbers of bytes.
    pub fn serialize<S: Serializer>(v: &[u64], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v)
    }

    /// Reads integers or strings with a unit.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
        let items = Vec::<super::Written>::deserialize(d)?;
        items
            .into_iter()
            .map(|w| match w {
                super::Written::Int(v) => Ok(v),
                super::Written::Text(t) => super::parse_bytes(&t).map_err(serde::de::Error::custom),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_exactly() {
        assert_eq!(parse_bytes("128KiB"), Ok(131_072));
        assert_eq!(parse_bytes("4KiB"), Ok(4096));
        assert_eq!(parse_bytes("6MiB"), Ok(6_291_456));
        assert_eq!(parse_bytes("1.5MiB"), Ok(1_572_864));
        assert_eq!(parse_bytes("64kB"), Ok(64_000));
        assert_eq!(parse_bytes("1500B"), Ok(1500));
        assert_eq!(parse_bytes("1GiB"), Ok(1 << 30));
        assert!(parse_bytes("1.5B").unwrap_err().contains("whole number"));
        assert!(parse_bytes("12").unwrap_err().contains("expected a unit"));
        assert!(parse_bytes("KiB").unwrap_err().contains("missing number"));
        assert!(parse_bytes("1.2.3KiB").is_err());
        assert!(parse_bytes("-1KiB").is_err());
        assert!(
            parse_bytes("99999999999999999999GiB")
                .unwrap_err()
                .contains("too large")
        );
    }

    #[test]
    fn rates_parse_exactly() {
        assert_eq!(parse_rate("20Mbit/s"), Ok(20_000_000));
        assert_eq!(parse_rate("2.5Mbit/s"), Ok(2_500_000));
        assert_eq!(parse_rate("500kbit/s"), Ok(500_000));
        assert_eq!(parse_rate("1Gbit/s"), Ok(1_000_000_000));
        assert!(parse_rate("20Mbps").is_err());
    }

    #[test]
    fn formats_round_trip() {
        for v in [131_072u64, 1500, 6_291_456, 1 << 30, 1_000_000] {
            assert_eq!(parse_bytes(&format_bytes(v)), Ok(v));
        }
        assert_eq!(format_bytes(131_072), "128KiB");
        assert_eq!(format_rate(20_000_000), "20Mbit/s");
        assert_eq!(format_rate(1500), "1500bit/s");
        assert_eq!(parse_rate(&format_rate(2_500_000)), Ok(2_500_000));
    }
}
