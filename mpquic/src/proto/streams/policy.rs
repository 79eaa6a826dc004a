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
    /// The doubling auto-tuning (quiche/Chromium style) up to the configured maximum. Default.
    ///
    /// Each time the application has consumed another half window, the time that took is compared with
    /// two round trips (the smoothed RTT, at least 1 ms); less means the application drains the window
    /// faster than the peer can refill it, so the window doubles. (Under [`WindowUpdate::Half`] the time
    /// between two half-window updates is compared with two smoothed RTTs, unfloored.)
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

/// When a receiver tells the peer about credit the application freed (MAX_STREAM_DATA / MAX_DATA,
/// RFC 9000 §4.2: "a receiver MAY send MAX_STREAM_DATA frames in multiple packets ... to avoid blocking
/// the sender"). The new limit is always `consumed + window`; this rule decides when it is worth a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WindowUpdate {
    /// Once the new limit is at least an eighth of the window above the advertised one (quinn's threshold).
    /// A window-limited sender then never waits for more than an eighth of the window, so a window `W`
    /// carries about `15/16 · W` per round trip. Default.
    #[default]
    Eighth,
    /// Once less than half the window is left (the rule of quiche and Chromium): four times fewer frames,
    /// but a window-limited sender gets only about `W / 2` per round trip. Under [`WindowPolicy::Auto`] the
    /// doubling rule then measures the time between these updates against two smoothed RTTs, with no
    /// floor (the rule before [`WindowUpdate::Eighth`] became the default; the simulator keeps it so that
    /// its studies keep their results).
    Half,
}

impl WindowUpdate {
    /// The name [`FromStr`] accepts: `"eighth"` or `"half"`.
    pub fn name(self) -> &'static str {
        match self {
            WindowUpdate::Eighth => "eighth",
            WindowUpdate::Half => "half",
        }
    }
}

impl fmt::Display for WindowUpdate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A window update rule name that is not one of `eighth`, `half`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown window update rule {0:?}: expected one of \"eighth\", \"half\"")]
pub struct ParseWindowUpdateError(pub String);

impl FromStr for WindowUpdate {
    type Err = ParseWindowUpdateError;

    /// Parses `"eighth"` or `"half"` (ASCII case-insensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "eighth" => Ok(WindowUpdate::Eighth),
            "half" => Ok(WindowUpdate::Half),
            _ => Err(ParseWindowUpdateError(s.to_owned())),
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

    #[test]
    fn update_rule_names_round_trip_and_errors_name_the_choices() {
        for u in [WindowUpdate::Eighth, WindowUpdate::Half] {
            assert_eq!(u.name().parse::<WindowUpdate>(), Ok(u));
            assert_eq!(u.to_string(), u.name());
        }
        assert_eq!("HALF".parse::<WindowUpdate>(), Ok(WindowUpdate::Half));
        assert_eq!(WindowUpdate::default(), WindowUpdate::Eighth);
        let msg = "quarter".parse::<WindowUpdate>().unwrap_err().to_string();
        assert!(
            msg.contains("\"quarter\"") && msg.contains("eighth") && msg.contains("half"),
            "{msg}"
        );
    }
}
