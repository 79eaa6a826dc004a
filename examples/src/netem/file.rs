//! The configuration file (`--config FILE.toml`): paths written with the simulator's link syntax.
//!
//! ```toml
//! server = "127.0.0.1:4433"    # optional: --server overrides it
//! listen = "127.0.0.1:5000"    # optional: path k without its own listen uses this port + k
//! seed = 7                     # optional: --seed overrides it
//! control = "127.0.0.1:5999"   # optional: the UDP control port
//!
//! [[paths]]
//! listen = "127.0.0.1:5000"                                   # optional
//! link = { rate_bps = 40_000_000, delay = "10ms" }            # both directions
//! downlink = { rate_bps = 10_000_000 }                        # overrides for server -> client
//!
//! [[paths]]
//! uplink = { rate_bps = 20_000_000, delay = "40ms", loss = { kind = "bernoulli", p = 0.01 } }
//! downlink = { rate_bps = 20_000_000, delay = "40ms" }
//!
//! [[events]]
//! at = "5s"
//! path = 1          # an index from 0, or "all"
//! action = "down"   # or "up"
//! ```
//!
//! `link`, `uplink` and `downlink` are tables of [`LinkConfig`] fields exactly as in netsim scenario links
//! (`rate_bps`, `delay`, `jitter`, `loss`, `queue`, `impairments`, `up`; see `netsim/SCENARIOS.md`): the
//! keys of `uplink` (`downlink`) replace those of `link` for that direction, and the result must be a
//! complete link (`rate_bps` and `delay` at least). As in scenarios, the default queue is one BDP over twice
//! the direction's own delay.

use std::net::SocketAddr;
use std::path::Path;

use mpquic_netsim::link::LinkConfig;
use serde::Deserialize;
use thiserror::Error;

use super::config::{Direction, PathSelector, ScheduledEvent};
use super::units;

/// A configuration file that cannot be used.
#[derive(Debug, Error)]
#[error("{file}: {message}")]
pub struct FileError {
    /// The file.
    pub file: String,
    /// What is wrong, naming the field.
    pub message: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    server: Option<SocketAddr>,
    listen: Option<SocketAddr>,
    seed: Option<u64>,
    control: Option<SocketAddr>,
    #[serde(default)]
    paths: Vec<RawPath>,
    #[serde(default)]
    events: Vec<RawEvent>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPath {
    listen: Option<SocketAddr>,
    link: Option<toml::Table>,
    uplink: Option<toml::Table>,
    downlink: Option<toml::Table>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawSelector {
    Index(usize),
    Name(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEvent {
    at: String,
    path: RawSelector,
    action: String,
}

/// One path of a file.
#[derive(Clone, Debug, PartialEq)]
pub struct FilePath {
    /// Its own front address, if given.
    pub listen: Option<SocketAddr>,
    /// Client → server.
    pub uplink: LinkConfig,
    /// Server → client.
    pub downlink: LinkConfig,
}

/// A parsed configuration file; what it leaves out comes from the command line or the defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct FileConfig {
    /// `server`.
    pub server: Option<SocketAddr>,
    /// `listen`.
    pub listen: Option<SocketAddr>,
    /// `seed`.
    pub seed: Option<u64>,
    /// `control`.
    pub control: Option<SocketAddr>,
    /// `[[paths]]`, in order.
    pub paths: Vec<FilePath>,
    /// `[[events]]`, in order.
    pub events: Vec<ScheduledEvent>,
}

impl FileConfig {
    /// Reads and parses `file`.
    pub fn load(file: &Path) -> Result<FileConfig, FileError> {
        let name = file.display().to_string();
        let text = std::fs::read_to_string(file).map_err(|e| FileError {
            file: name.clone(),
            message: format!("cannot read: {e}"),
        })?;
        FileConfig::parse(&text).map_err(|message| FileError { file: name, message })
    }

    /// Parses the text of a configuration file; the error names the bad field.
    pub fn parse(text: &str) -> Result<FileConfig, String> {
        let raw: RawFile = toml::from_str(text).map_err(|e| e.to_string().trim_end().to_owned())?;
        let mut paths = Vec::with_capacity(raw.paths.len());
        for (k, path) in raw.paths.into_iter().enumerate() {
            let link = |direction: Direction, own: Option<&toml::Table>| -> Result<LinkConfig, String> {
                let mut table = path.link.clone().unwrap_or_default();
                if let Some(own) = own {
                    table.extend(own.clone());
                }
                let config: LinkConfig = toml::Value::Table(table)
                    .try_into()
                    .map_err(|e| format!("paths[{k}].{direction}: {}", e.to_string().trim_end()))?;
                config
                    .validate()
                    .map_err(|e| format!("paths[{k}].{direction}: {e}"))?;
                Ok(config)
            };
            paths.push(FilePath {
                listen: path.listen,
                uplink: link(Direction::Uplink, path.uplink.as_ref())?,
                downlink: link(Direction::Downlink, path.downlink.as_ref())?,
            });
        }
        let mut events = Vec::with_capacity(raw.events.len());
        for (i, event) in raw.events.into_iter().enumerate() {
            let at = units::parse_duration(&event.at).map_err(|e| format!("events[{i}].at: {e}"))?;
            let path = match event.path {
                RawSelector::Index(k) => PathSelector::One(k),
                RawSelector::Name(name) if name == "all" => PathSelector::All,
                RawSelector::Name(name) => {
                    return Err(format!(
                        "events[{i}].path: {name:?}: expected a path index from 0 or \"all\""
                    ));
                }
            };
            let up = match event.action.as_str() {
                "up" => true,
                "down" => false,
                other => {
                    return Err(format!(
                        "events[{i}].action: {other:?}: expected \"up\" or \"down\""
                    ));
                }
            };
            events.push(ScheduledEvent { at, path, up });
        }
        Ok(FileConfig {
            server: raw.server,
            listen: raw.listen,
            seed: raw.seed,
            control: raw.control,
            paths,
            events,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use mpquic_netsim::link::LossModel;

    use super::*;

    #[test]
    fn shipped_example_parses() {
        let text = include_str!("../../netem/two-paths.toml");
        let file = FileConfig::parse(text).unwrap();
        assert_eq!(file.paths.len(), 2);
        assert_eq!(file.events.len(), 2);
    }

    #[test]
    fn direction_tables_override_link() {
        let file = FileConfig::parse(
            r#"
            [[paths]]
            link = { rate_bps = 40_000_000, delay = "10ms" }
            downlink = { rate_bps = 10_000_000, loss = { kind = "bernoulli", p = 0.1 } }
            [[events]]
            at = "1.5s"
            path = "all"
            action = "down"
            "#,
        )
        .unwrap();
        let p = file.paths.first().unwrap();
        assert_eq!(p.uplink.rate_bps, 40_000_000);
        assert_eq!(p.downlink.rate_bps, 10_000_000);
        assert_eq!(p.downlink.delay, Duration::from_millis(10));
        assert_eq!(p.downlink.loss, LossModel::Bernoulli { p: 0.1 });
        assert_eq!(p.uplink.loss, LossModel::None);
        assert_eq!(
            file.events,
            vec![ScheduledEvent {
                at: Duration::from_millis(1500),
                path: PathSelector::All,
                up: false
            }]
        );
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            ("[[paths]]\nuplink = { rate_bps = 1 }\n", "paths[0].uplink"),
            (
                "[[paths]]\nlink = { rate_bps = 1, delay = \"1ms\", rat = 2 }\n",
                "rat",
            ),
            (
                "[[paths]]\nlink = { rate_bps = 1, delay = \"1ms\", loss = { kind = \"bernoulli\", p = 2.0 } }\n",
                "loss.p",
            ),
            (
                "[[events]]\nat = \"1s\"\npath = \"x\"\naction = \"down\"\n",
                "events[0].path",
            ),
            (
                "[[events]]\nat = \"1s\"\npath = 0\naction = \"off\"\n",
                "events[0].action",
            ),
            ("bogus = 1\n", "bogus"),
        ];
        for (text, expected) in cases {
            let e = FileConfig::parse(text).unwrap_err();
            assert!(e.contains(expected), "{text}: {e}");
        }
    }
}
