//! The command line's path and event syntax.
//!
//! A path is a comma-separated list of `key=value` settings:
//!
//! ```text
//! rate=40mbit,delay=10ms,loss=1%,queue=64,jitter=2ms,listen=127.0.0.1:6000
//! rate=20mbit,delay=20ms,down.rate=5mbit,up.loss=0.01
//! ```
//!
//! | key | value | default |
//! |---|---|---|
//! | `rate` | `bit`, `kbit`, `mbit`, `gbit` per second | required |
//! | `delay` | one-way propagation delay: `ns`, `us`, `ms`, `s` | `0` |
//! | `jitter` | extra delay, uniform in `[0, D]`: `D`; or `normal:MEAN:STDDEV` | none |
//! | `reorder` | `true`/`false`: may jitter reorder datagrams | `false` |
//! | `loss` | Bernoulli `P` (`0.01` or `1%`); or Gilbert–Elliott `ge:P:R[:K:H]` | none |
//! | `queue` | packets `64`/`64pkt`, bytes `150KB`, or `1bdp` (of the path's RTT) | `1bdp`, or 64 packets if the RTT is 0 |
//! | `corrupt`, `duplicate` | probabilities | 0 |
//! | `listen` | front address of this path | `--listen` port + path index |
//! | `state` | `up` or `down` at start | `up` |
//!
//! A link setting applies to both directions unless prefixed by a direction: `up.` (or `uplink.`) for
//! client → server, `down.` (or `downlink.`) for server → client; a prefixed setting overrides the plain one
//! for its direction. A BDP queue is the direction's rate times the path's RTT (uplink plus downlink delay).
//!
//! An event is `PATH@TIME` (`1@5s`, `all@2.5s`), used by `--down` and `--up`.

use std::net::SocketAddr;
use std::time::Duration;

use mpquic_netsim::link::{Impairments, JitterConfig, JitterDistribution, LinkConfig, LossModel, QueueLimit};
use thiserror::Error;

use super::config::{Direction, PathConfig, PathSelector, ScheduledEvent};
use super::units::{self, QueueSpec, UnitError};

/// The keys a path spec accepts.
pub const KEYS_EXPECTED: &str = "rate, delay, jitter, reorder, loss, queue, corrupt, duplicate (each optionally \
                                 prefixed by up. or down.), listen, state";

/// What a jitter value looks like.
const JITTER_EXPECTED: &str =
    "a duration (uniform in [0, D]) or normal:MEAN:STDDEV, e.g. 2ms or normal:5ms:1ms";
/// What a loss value looks like.
const LOSS_EXPECTED: &str = "a probability (0.01 or 1%) or Gilbert-Elliott ge:P:R[:K:H], e.g. ge:0.01:0.3";
/// What a boolean looks like.
const BOOL_EXPECTED: &str = "true or false";
/// What a state looks like.
const STATE_EXPECTED: &str = "up or down";
/// What an event looks like.
pub const EVENT_EXPECTED: &str = "PATH@TIME with PATH a path index from 0 or all, e.g. 1@5s or all@2.5s";

/// A path spec or an event that does not parse.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum SpecError {
    /// A setting is not `key=value`, or the key is unknown.
    #[error("path {spec:?}: unknown setting {item:?}: valid keys are {KEYS_EXPECTED}")]
    UnknownKey {
        /// The whole spec.
        spec: String,
        /// The bad item.
        item: String,
    },
    /// A value does not parse.
    #[error("path {spec:?}: {key}: {source}")]
    Value {
        /// The whole spec.
        spec: String,
        /// The key.
        key: String,
        /// What is wrong.
        #[source]
        source: UnitError,
    },
    /// Something is missing or inconsistent.
    #[error("path {spec:?}: {message}")]
    Invalid {
        /// The whole spec.
        spec: String,
        /// What is wrong.
        message: String,
    },
    /// An event does not parse.
    #[error("event {text:?}: expected {EVENT_EXPECTED}")]
    Event {
        /// The text rejected.
        text: String,
    },
}

/// The settings of one direction, as given (unset fields take the plain setting, then the default).
#[derive(Clone, Debug, Default, PartialEq)]
struct DirectionSpec {
    rate_bps: Option<u64>,
    delay: Option<Duration>,
    jitter: Option<JitterDistribution>,
    reorder: Option<bool>,
    loss: Option<LossModel>,
    queue: Option<QueueSpec>,
    corrupt: Option<f64>,
    duplicate: Option<f64>,
}

impl DirectionSpec {
    /// `self` with the unset fields taken from `base`.
    fn over(&self, base: &DirectionSpec) -> DirectionSpec {
        DirectionSpec {
            rate_bps: self.rate_bps.or(base.rate_bps),
            delay: self.delay.or(base.delay),
            jitter: self.jitter.clone().or_else(|| base.jitter.clone()),
            reorder: self.reorder.or(base.reorder),
            loss: self.loss.clone().or_else(|| base.loss.clone()),
            queue: self.queue.clone().or_else(|| base.queue.clone()),
            corrupt: self.corrupt.or(base.corrupt),
            duplicate: self.duplicate.or(base.duplicate),
        }
    }
}

/// A parsed path spec: an optional front address and the two directions' link configurations.
#[derive(Clone, Debug, PartialEq)]
pub struct PathSpec {
    /// `listen=ADDR`, if given.
    pub listen: Option<SocketAddr>,
    /// Client → server.
    pub uplink: LinkConfig,
    /// Server → client.
    pub downlink: LinkConfig,
}

impl PathSpec {
    /// The path configuration, listening on `listen` unless the spec gave an address.
    pub fn into_path(self, default_listen: SocketAddr) -> PathConfig {
        PathConfig {
            listen: self.listen.unwrap_or(default_listen),
            uplink: self.uplink,
            downlink: self.downlink,
        }
    }
}

fn parse_bool(text: &str) -> Result<bool, UnitError> {
    match text {
        "true" | "yes" | "1" => Ok(true),
        "false" | "no" | "0" => Ok(false),
        _ => Err(UnitError::new("boolean", text, BOOL_EXPECTED)),
    }
}

fn parse_jitter(text: &str) -> Result<JitterDistribution, UnitError> {
    let err = || UnitError::new("jitter", text, JITTER_EXPECTED);
    match text.split(':').collect::<Vec<_>>().as_slice() {
        [max] => {
            let max = units::parse_duration(max).map_err(|_| err())?;
            Ok(if max.is_zero() {
                JitterDistribution::None
            } else {
                JitterDistribution::Uniform { max }
            })
        }
        ["normal", mean, stddev] => Ok(JitterDistribution::Normal {
            mean: units::parse_duration(mean).map_err(|_| err())?,
            stddev: units::parse_duration(stddev).map_err(|_| err())?,
        }),
        _ => Err(err()),
    }
}

fn parse_loss(text: &str) -> Result<LossModel, UnitError> {
    let err = || UnitError::new("loss", text, LOSS_EXPECTED);
    let p = |t: &str| units::parse_probability(t).map_err(|_| err());
    match text.split(':').collect::<Vec<_>>().as_slice() {
        [prob] => {
            let prob = p(prob)?;
            Ok(if prob == 0.0 {
                LossModel::None
            } else {
                LossModel::Bernoulli { p: prob }
            })
        }
        ["ge", gp, gr, rest @ ..] if rest.len() <= 2 => Ok(LossModel::GilbertElliott {
            p: p(gp)?,
            r: p(gr)?,
            k: rest.first().map_or(Ok(1.0), |t| p(t))?,
            h: rest.get(1).map_or(Ok(0.0), |t| p(t))?,
        }),
        _ => Err(err()),
    }
}

/// Parses a path spec (see the module documentation).
pub fn parse_path(spec: &str) -> Result<PathSpec, SpecError> {
    let mut listen = None;
    let mut up = true;
    let mut both = DirectionSpec::default();
    let mut uplink = DirectionSpec::default();
    let mut downlink = DirectionSpec::default();
    let value_err = |key: &str, source: UnitError| SpecError::Value {
        spec: spec.to_owned(),
        key: key.to_owned(),
        source,
    };
    // Each setting once: `up.` and `uplink.` (`down.`, `downlink.`) name the same direction.
    let mut seen: Vec<(&str, &str, &str)> = Vec::new();
    for (position, item) in spec.split(',').map(str::trim).enumerate() {
        if item.is_empty() {
            return Err(SpecError::Invalid {
                spec: spec.to_owned(),
                message: format!(
                    "setting {} is empty (two commas in a row, or a comma at an end): give KEY=VALUE \
                     settings separated by single commas",
                    position + 1
                ),
            });
        }
        let unknown = || SpecError::UnknownKey {
            spec: spec.to_owned(),
            item: item.to_owned(),
        };
        let (key, value) = item.split_once('=').ok_or_else(unknown)?;
        let (key, value) = (key.trim(), value.trim());
        let canonical = match key.split_once('.') {
            Some(("up" | "uplink", name)) => ("up", name),
            Some(("down" | "downlink", name)) => ("down", name),
            _ => ("", key),
        };
        if let Some((_, _, first)) = seen.iter().find(|(d, n, _)| (*d, *n) == canonical) {
            return Err(SpecError::Invalid {
                spec: spec.to_owned(),
                message: format!("{key} is given twice ({first} and {item}): give each setting once"),
            });
        }
        seen.push((canonical.0, canonical.1, item));
        match key {
            "listen" => {
                listen = Some(value.parse().map_err(|_| {
                    value_err(
                        key,
                        UnitError::new("address", value, "IP:PORT, e.g. 127.0.0.1:6000"),
                    )
                })?);
                continue;
            }
            "state" => {
                up = match value {
                    "up" => true,
                    "down" => false,
                    _ => return Err(value_err(key, UnitError::new("state", value, STATE_EXPECTED))),
                };
                continue;
            }
            _ => {}
        }
        let (target, name) = match key.split_once('.') {
            Some(("up" | "uplink", name)) => (&mut uplink, name),
            Some(("down" | "downlink", name)) => (&mut downlink, name),
            Some(_) => return Err(unknown()),
            None => (&mut both, key),
        };
        let err = |source| value_err(key, source);
        match name {
            "rate" => target.rate_bps = Some(units::parse_rate(value).map_err(err)?),
            "delay" => target.delay = Some(units::parse_duration(value).map_err(err)?),
            "jitter" => target.jitter = Some(parse_jitter(value).map_err(err)?),
            "reorder" => target.reorder = Some(parse_bool(value).map_err(err)?),
            "loss" => target.loss = Some(parse_loss(value).map_err(err)?),
            "queue" => target.queue = Some(units::parse_queue(value).map_err(err)?),
            "corrupt" => target.corrupt = Some(units::parse_probability(value).map_err(err)?),
            "duplicate" => target.duplicate = Some(units::parse_probability(value).map_err(err)?),
            _ => return Err(unknown()),
        }
    }
    let uplink = uplink.over(&both);
    let downlink = downlink.over(&both);
    let rtt = uplink
        .delay
        .unwrap_or_default()
        .saturating_add(downlink.delay.unwrap_or_default());
    let build = |d: &DirectionSpec, direction: Direction| -> Result<LinkConfig, SpecError> {
        let invalid = |message: String| SpecError::Invalid {
            spec: spec.to_owned(),
            message,
        };
        let rate_bps = d.rate_bps.ok_or_else(|| {
            invalid(format!(
                "no rate for the {direction}: add rate=, e.g. rate=40mbit"
            ))
        })?;
        let queue = match d.queue.clone() {
            Some(QueueSpec::Packets(packets)) => QueueLimit::Packets { packets },
            Some(QueueSpec::Bytes(bytes)) => QueueLimit::Bytes { bytes },
            Some(QueueSpec::Bdp(_)) | None if rtt.is_zero() => match d.queue {
                None => QueueLimit::Packets { packets: 64 },
                Some(_) => {
                    return Err(invalid(
                        "queue: a BDP queue needs a delay > 0; give packets (64) or bytes (150KB)".to_owned(),
                    ));
                }
            },
            Some(QueueSpec::Bdp(multiple)) => QueueLimit::Bdp {
                multiple,
                base_rtt: Some(rtt),
            },
            None => QueueLimit::Bdp {
                multiple: 1.0,
                base_rtt: Some(rtt),
            },
        };
        let mut link = LinkConfig::new(rate_bps, d.delay.unwrap_or_default())
            .with_queue(queue)
            .with_jitter(JitterConfig {
                distribution: d.jitter.clone().unwrap_or_default(),
                allow_reordering: d.reorder.unwrap_or(false),
            })
            .with_loss(d.loss.clone().unwrap_or_default())
            .with_impairments(Impairments {
                corruption: d.corrupt.unwrap_or(0.0),
                duplication: d.duplicate.unwrap_or(0.0),
            });
        link.up = up;
        link.validate()
            .map_err(|e| invalid(format!("{direction}: {e}")))?;
        Ok(link)
    };
    Ok(PathSpec {
        listen,
        uplink: build(&uplink, Direction::Uplink)?,
        downlink: build(&downlink, Direction::Downlink)?,
    })
}

/// Parses an event `PATH@TIME` (see the module documentation); `up` says what it does.
pub fn parse_event(text: &str, up: bool) -> Result<ScheduledEvent, SpecError> {
    let err = || SpecError::Event {
        text: text.to_owned(),
    };
    let (path, at) = text.split_once('@').ok_or_else(err)?;
    let path = match path.trim() {
        "all" => PathSelector::All,
        k => PathSelector::One(k.parse().map_err(|_| err())?),
    };
    let at = units::parse_duration(at).map_err(|_| err())?;
    Ok(ScheduledEvent { at, path, up })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_settings_apply_to_both_directions() {
        let p = parse_path("rate=40mbit,delay=10ms,loss=1%,queue=64").unwrap();
        assert_eq!(p.listen, None);
        assert_eq!(p.uplink, p.downlink);
        assert_eq!(p.uplink.rate_bps, 40_000_000);
        assert_eq!(p.uplink.delay, Duration::from_millis(10));
        assert_eq!(p.uplink.loss, LossModel::Bernoulli { p: 0.01 });
        assert_eq!(p.uplink.queue, QueueLimit::Packets { packets: 64 });
        assert!(p.uplink.up);
    }

    #[test]
    fn prefixed_settings_override_one_direction() {
        let p = parse_path("rate=20mbit,delay=20ms,down.rate=5mbit,uplink.delay=5ms,listen=127.0.0.1:6000")
            .unwrap();
        assert_eq!(p.listen, Some("127.0.0.1:6000".parse().unwrap()));
        assert_eq!(p.uplink.rate_bps, 20_000_000);
        assert_eq!(p.downlink.rate_bps, 5_000_000);
        assert_eq!(p.uplink.delay, Duration::from_millis(5));
        assert_eq!(p.downlink.delay, Duration::from_millis(20));
        // Default queue: one BDP of the path's RTT (25 ms).
        assert_eq!(
            p.downlink.queue,
            QueueLimit::Bdp {
                multiple: 1.0,
                base_rtt: Some(Duration::from_millis(25))
            }
        );
    }

    #[test]
    fn rate_may_be_given_per_direction_only() {
        let p = parse_path("up.rate=1mbit,down.rate=2mbit").unwrap();
        assert_eq!((p.uplink.rate_bps, p.downlink.rate_bps), (1_000_000, 2_000_000));
        assert_eq!(p.uplink.queue, QueueLimit::Packets { packets: 64 });
        let e = parse_path("up.rate=1mbit").unwrap_err();
        assert!(e.to_string().contains("no rate for the downlink"), "{e}");
    }

    #[test]
    fn jitter_loss_state_and_impairments() {
        let p = parse_path("rate=1gbit,delay=1ms,jitter=normal:5ms:1ms,reorder=true,loss=ge:0.01:0.3,state=down,corrupt=0.5,duplicate=1%")
            .unwrap();
        assert_eq!(
            p.uplink.jitter.distribution,
            JitterDistribution::Normal {
                mean: Duration::from_millis(5),
                stddev: Duration::from_millis(1)
            }
        );
        assert!(p.uplink.jitter.allow_reordering);
        assert_eq!(
            p.uplink.loss,
            LossModel::GilbertElliott {
                p: 0.01,
                r: 0.3,
                k: 1.0,
                h: 0.0
            }
        );
        assert!(!p.uplink.up && !p.downlink.up);
        assert_eq!(p.downlink.impairments.corruption, 0.5);
        assert_eq!(p.downlink.impairments.duplication, 0.01);
        let p = parse_path("rate=1gbit,jitter=2ms,queue=1.5bdp,delay=1ms").unwrap();
        assert_eq!(
            p.uplink.jitter.distribution,
            JitterDistribution::Uniform {
                max: Duration::from_millis(2)
            }
        );
        assert_eq!(
            p.uplink.queue,
            QueueLimit::Bdp {
                multiple: 1.5,
                base_rtt: Some(Duration::from_millis(2))
            }
        );
    }

    #[test]
    fn bad_values_name_what_is_valid() {
        let cases = [
            ("rate=40mbps", "bit, kbit, mbit, gbit"),
            ("rate=40mbit,delay=10", "ns, us, ms, s"),
            ("rate=40mbit,loss=2", "ge:P:R"),
            ("rate=40mbit,queue=lots", "bdp"),
            ("rate=40mbit,jitter=normal:5ms", "normal:MEAN:STDDEV"),
            ("rate=40mbit,bandwidth=1", "valid keys are rate, delay"),
            ("rate=40mbit,sideways.delay=1ms", "valid keys are"),
            ("rate=40mbit,state=off", "up or down"),
            ("rate=40mbit,listen=localhost", "IP:PORT"),
            ("delay=10ms", "add rate="),
            ("rate=40mbit,queue=1bdp", "BDP queue needs a delay"),
            ("rate=40mbit,40mbit", "valid keys are"),
            (
                "rate=40mbit,rate=20mbit",
                "rate is given twice (rate=40mbit and rate=20mbit)",
            ),
            ("rate=1mbit,up.delay=1ms,uplink.delay=2ms", "given twice"),
            ("rate=1mbit,state=up,state=down", "state is given twice"),
            ("rate=40mbit,,delay=1ms", "setting 2 is empty"),
            ("rate=40mbit,", "setting 2 is empty"),
            ("", "setting 1 is empty"),
            (
                "rate=40mbit,delay=3601s",
                "`delay` = 3601s: a one-way delay from 0 to 1 hour",
            ),
            (
                "rate=40mbit,delay=1ms,jitter=3601s",
                "jitter.distribution.max` = 3601s",
            ),
            ("rate=2000gbit", "10^12"),
            ("rate=1mbit,queue=2000000", "10^6"),
        ];
        for (spec, expected) in cases {
            let e = parse_path(spec).unwrap_err().to_string();
            assert!(e.contains(expected), "{spec}: {e}");
        }
    }

    #[test]
    fn events() {
        assert_eq!(
            parse_event("1@5s", false),
            Ok(ScheduledEvent {
                at: Duration::from_secs(5),
                path: PathSelector::One(1),
                up: false
            })
        );
        assert_eq!(parse_event("all@2.5s", true).unwrap().path, PathSelector::All);
        for bad in ["1", "x@5s", "1@5", "@1s"] {
            let e = parse_event(bad, true).unwrap_err().to_string();
            assert!(e.contains("PATH@TIME"), "{bad}: {e}");
        }
    }
}
