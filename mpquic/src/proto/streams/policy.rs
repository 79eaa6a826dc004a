//! Receive-window policies: how a stream's or the connection's flow-control window grows while the
//! application reads (see [`WindowPolicy`] and `docs/receive-windows.md`).

use std::fmt;
use std::str::FromStr;

/// How a receive window (stream or connection) grows.
///
/// The window is the number of bytes beyond what the application has consumed that the peer may send
/// (RFC 9000 §4.1). Whatever the policy, the limit advertised to the peer never decreases and the
/// receiver never buffers more than it advertised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WindowPolicy {
    /// The window stays at its initial size for the whole connection.
    Fixed,
    /// The existing doubling auto-tuning (quiche/Chromium style) up to the configured maximum. Default.
    ///
    /// When a window update is due (less than half the window left) and the previous update is less than
    /// two round-trip times old, the application drains the window faster than the peer can refill it, so
    /// the window doubles.
    #[default]
    Auto,
    /// Linux `tcp_rmem`-like dynamic right-sizing: starts at the initial ("default") size, never below
    /// the minimum, grows to about 2 x the bytes the application consumed in the last RTT, bounded by the maximum.
    ///
    /// Once per smoothed RTT the receiver measures the bytes the application consumed since the previous
    /// measurement; when that is more than every earlier measurement, the window becomes
    /// `2 × consumed + 16 × 1200` bytes (Linux's cushion of 16 segments), never smaller than before and
    /// never above the maximum. This is the rule of Linux's `tcp_rcv_space_adjust` without its extra
    /// slow-start term.
    Linux,
}

impl WindowPolicy {
    /// The name [`FromStr`] accepts: `"fixed"`, `"auto"` or `"linux"`.
    pub fn name(self) -> &'static str {
        match self {
            WindowPolicy::Fixed => "fixed",
            WindowPolicy::Auto => "auto",
            WindowPolicy::Linux => "linux",
        }
    }
}

impl fmt::Display for WindowPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A window policy name that is not one of `fixed`, `auto`, `linux`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown window policy {0:?}: expected one of \"fixed\", \"auto\", \"linux\"")]
pub struct ParseWindowPolicyError(pub String);

impl FromStr for WindowPolicy {
    type Err = ParseWindowPolicyError;

    /// Parses `"fixed"`, `"auto"` or `"linux"` (ASCII case-insensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "fixed" => Ok(WindowPolicy::Fixed),
            "auto" => Ok(WindowPolicy::Auto),
            "linux" => Ok(WindowPolicy::Linux),
            _ => Err(ParseWindowPolicyError(s.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_errors_name_the_choices() {
        for p in [WindowPolicy::Fixed, WindowPolicy::Auto, WindowPolicy::Linux] {
            assert_eq!(p.name().parse::<WindowPolicy>(), Ok(p));
            assert_eq!(p.to_string(), p.name());
        }
        assert_eq!("Linux".parse::<WindowPolicy>(), Ok(WindowPolicy::Linux));
        assert_eq!(WindowPolicy::default(), WindowPolicy::Auto);
        let e = "cubic".parse::<WindowPolicy>().unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("\"cubic\"")
                && msg.contains("fixed")
                && msg.contains("auto")
                && msg.contains("linux")
        );
    }
}
