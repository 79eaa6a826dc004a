//! The `interop:` summary lines endpoints print on standard output, and their parser.
//!
//! Each line is `interop: key=value key=value ...`. A line with a `path=N` key describes path `N`; any other
//! line sets connection-wide facts. Keys the runner reads (an endpoint prints what it can observe; a check
//! that needs a fact nobody printed fails with "not observed"):
//!
//! | Key | Meaning |
//! |---|---|
//! | `multipath=yes\|no` | multipath negotiated |
//! | `retry=yes\|no` | client: a Retry was received; server: the connection followed a Retry it sent |
//! | `key_updates=N` | key updates seen (started by either side) |
//! | `cipher=NAME` | negotiated cipher suite (e.g. `TLS_CHACHA20_POLY1305_SHA256`) |
//! | `cid_rotations=N` | client: rounds of connection-ID rotation it made |
//! | `retired_cids=N` | RETIRE_CONNECTION_ID + PATH_RETIRE_CONNECTION_ID frames received |
//! | `download_ms=N` | client: milliseconds from the endpoint's start to its last downloaded byte (handshake and path opening included, closing not) |
//! | `peer_backup=yes\|no` | the peer marked a path backup (PATH_STATUS_BACKUP received) |
//! | `path=N sent=B received=B abandoned=yes\|no backup=yes\|no` | UDP payload bytes per path, final state |

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The line prefix.
pub const PREFIX: &str = "interop:";

/// What one endpoint reported about one connection (the last values win).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Report {
    /// Connection-wide facts.
    pub fields: BTreeMap<String, String>,
    /// Per path ID: its facts.
    pub paths: BTreeMap<u64, BTreeMap<String, String>>,
}

/// One path's line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PathLine {
    /// Path ID.
    pub id: u64,
    /// UDP payload bytes sent.
    pub sent: u64,
    /// UDP payload bytes received.
    pub received: u64,
    /// The path was abandoned (by either side).
    pub abandoned: bool,
    /// Our status for the path is backup.
    pub backup: bool,
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

impl PathLine {
    /// The line, prefix included.
    pub fn line(&self) -> String {
        format!(
            "{PREFIX} path={} sent={} received={} abandoned={} backup={}",
            self.id,
            self.sent,
            self.received,
            yes(self.abandoned),
            yes(self.backup)
        )
    }
}

/// Builds a connection-wide line from `(key, value)` pairs.
pub fn fields_line(pairs: &[(&str, String)]) -> String {
    let mut s = PREFIX.to_owned();
    for (k, v) in pairs {
        let _ = write!(s, " {k}={v}");
    }
    s
}

/// `yes`/`no` for a flag.
pub fn flag(b: bool) -> String {
    yes(b).to_owned()
}

impl Report {
    /// Parses every `interop:` line of an endpoint's output.
    pub fn parse(output: &str) -> Report {
        let mut r = Report::default();
        for line in output.lines() {
            let Some(rest) = line.trim().strip_prefix(PREFIX) else {
                continue;
            };
            let pairs: Vec<(String, String)> = rest
                .split_whitespace()
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            let path = pairs
                .iter()
                .find(|(k, _)| k == "path")
                .and_then(|(_, v)| v.parse::<u64>().ok());
            let target = match path {
                Some(id) => r.paths.entry(id).or_default(),
                None => &mut r.fields,
            };
            for (k, v) in pairs {
                if k != "path" {
                    target.insert(k, v);
                }
            }
        }
        r
    }

    /// Whether the endpoint printed anything.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.paths.is_empty()
    }

    /// A connection-wide value.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields.get(key).map(String::as_str)
    }

    /// A connection-wide number.
    pub fn number(&self, key: &str) -> Option<u64> {
        self.get(key).and_then(|v| v.parse().ok())
    }

    /// A connection-wide flag.
    pub fn flag(&self, key: &str) -> Option<bool> {
        self.get(key).map(|v| v == "yes")
    }

    /// A path's number.
    pub fn path_number(&self, path: u64, key: &str) -> Option<u64> {
        self.paths
            .get(&path)
            .and_then(|p| p.get(key))
            .and_then(|v| v.parse().ok())
    }

    /// A path's flag.
    pub fn path_flag(&self, path: u64, key: &str) -> Option<bool> {
        self.paths.get(&path).and_then(|p| p.get(key)).map(|v| v == "yes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip() {
        let p = PathLine {
            id: 1,
            sent: 10,
            received: 20,
            abandoned: true,
            backup: false,
        };
        let out = format!(
            "noise\n{}\n{}\n",
            fields_line(&[("multipath", flag(true)), ("key_updates", "2".to_owned())]),
            p.line()
        );
        let r = Report::parse(&out);
        assert_eq!(r.flag("multipath"), Some(true));
        assert_eq!(r.number("key_updates"), Some(2));
        assert_eq!(r.path_number(1, "sent"), Some(10));
        assert_eq!(r.path_flag(1, "abandoned"), Some(true));
        assert_eq!(r.path_flag(1, "backup"), Some(false));
        assert!(r.get("absent").is_none());
        assert!(Report::parse("nothing here").is_empty());
    }
}
