//! Building schedulers by name: `"minrtt"`, `"weighted:1=3,2=1"`, `"blest:lambda=1.2"`.
//!
//! [`build`] parses the specification ([`crate::params::Spec`]), finds the scheduler (names are
//! case-insensitive; aliases `default` → minrtt, `priority` → backup, `rr` → roundrobin), and lets it take
//! its parameters; unknown names, unknown parameters and bad values are errors that list what is valid.
//! [`list`] gives every name with a one-line description, for `--help` texts and scenario validation.
//!
//! Applications add their own schedulers with [`register`] (the crate documentation has an example); from
//! then on [`build`], [`list`], [`names`] and [`params`] know them like the built-in ones.

use crate::params::{Params, Spec};
use crate::schedulers::{
    Backup, Blest, Daps, Ecf, Llhd, MinRtt, Otias, Redundant, RoundRobin, Single, Sttf, Weighted,
};
use crate::{SchedError, Scheduler};

/// The name of the default scheduler (minRTT, Linux MPTCP's default).
pub const DEFAULT: &str = "minrtt";

/// Builds a scheduler from the parameters of its specification (the part after `name:`).
pub type Builder = fn(Params) -> Result<Box<dyn Scheduler>, SchedError>;

mod custom;
pub use custom::{MAX_NAME_LEN, MAX_REGISTERED, RegisterError, register};

struct Entry {
    name: &'static str,
    description: &'static str,
    params: &'static [&'static str],
    build: Builder,
}

fn boxed<S: Scheduler + 'static>(r: Result<S, SchedError>) -> Result<Box<dyn Scheduler>, SchedError> {
    r.map(|s| Box::new(s) as Box<dyn Scheduler>)
}

const ENTRIES: &[Entry] = &[
    Entry {
        name: "minrtt",
        description: "lowest smoothed RTT among paths with room (default; Linux MPTCP default)",
        params: MinRtt::PARAMS,
        build: |p| boxed(MinRtt::from_params(p)),
    },
    Entry {
        name: "roundrobin",
        description: "rotate over paths, `segments` packets each; `cwnd_limited=false` for strict turns",
        params: RoundRobin::PARAMS,
        build: |p| boxed(RoundRobin::from_params(p)),
    },
    Entry {
        name: "weighted",
        description: "static per-path weights, e.g. `weighted:1=3,2=1` (unlisted paths: `default`, 1)",
        params: Weighted::PARAMS,
        build: |p| boxed(Weighted::from_params(p)),
    },
    Entry {
        name: "redundant",
        description: "duplicate every packet on every path with room (ReMP)",
        params: Redundant::PARAMS,
        build: |p| boxed(Redundant::from_params(p)),
    },
    Entry {
        name: "backup",
        description: "priority/failover: available paths by rank (`backup:2=0,1=1`), backup paths only when none is alive",
        params: Backup::PARAMS,
        build: |p| boxed(Backup::from_params(p)),
    },
    Entry {
        name: "single",
        description: "lowest-numbered usable path only (single-path baseline)",
        params: Single::PARAMS,
        build: |p| boxed(Single::from_params(p)),
    },
    Entry {
        name: "blest",
        description: "minRTT that waits for the fast path when the slow one would block the send window (λ adapts)",
        params: Blest::PARAMS,
        build: |p| boxed(Blest::from_params(p)),
    },
    Entry {
        name: "ecf",
        description: "earliest completion first: waits for the fast path when that finishes sooner (β hysteresis)",
        params: Ecf::PARAMS,
        build: |p| boxed(Ecf::from_params(p)),
    },
    Entry {
        name: "otias",
        description: "smallest estimated arrival time counting data queued behind each window",
        params: Otias::PARAMS,
        build: |p| boxed(Otias::from_params(p)),
    },
    Entry {
        name: "sttf",
        description: "shortest transfer time first, simulating window growth round by round",
        params: Sttf::PARAMS,
        build: |p| boxed(Sttf::from_params(p)),
    },
    Entry {
        name: "llhd",
        description: "maximise normalised goodput + β·RTT_max/RTT (paper form, β = 0.001)",
        params: Llhd::PARAMS,
        build: |p| boxed(Llhd::from_params(p)),
    },
    Entry {
        name: "daps",
        description: "delay-aware plan over the hyperperiod of path delays, for in-order arrival",
        params: Daps::PARAMS,
        build: |p| boxed(Daps::from_params(p)),
    },
];

const ALIASES: &[(&str, &str)] = &[
    ("default", "minrtt"),
    ("priority", "backup"),
    ("rr", "roundrobin"),
];

/// Builds a scheduler from a specification: `name` or `name:key=value,...`.
pub fn build(spec: &str) -> Result<Box<dyn Scheduler>, SchedError> {
    let spec = Spec::parse(spec, "scheduler")?;
    let name = ALIASES
        .iter()
        .find(|(alias, _)| *alias == spec.name)
        .map_or(spec.name.as_str(), |(_, canonical)| canonical);
    if let Some(entry) = ENTRIES.iter().find(|e| e.name == name) {
        return (entry.build)(Params::new(entry.name, spec.params));
    }
    let entry = custom::find(name).ok_or_else(|| SchedError::UnknownScheduler {
        name: spec.name.clone(),
        valid: names().join(", "),
    })?;
    (entry.build)(Params::new(entry.name, spec.params))
}

/// Every scheduler name with a one-line description, in registry order (the registered ones last).
pub fn list() -> Vec<(&'static str, &'static str)> {
    let registered = custom::all().into_iter().map(|r| (r.name, r.description));
    ENTRIES
        .iter()
        .map(|e| (e.name, e.description))
        .chain(registered)
        .collect()
}

/// Every scheduler name, in registry order (the registered ones last).
pub fn names() -> Vec<&'static str> {
    list().into_iter().map(|(name, _)| name).collect()
}

/// The parameters `name` accepts (`<path id>` stands for numeric per-path keys), or `None` for an unknown
/// name.
pub fn params(name: &str) -> Option<&'static [&'static str]> {
    ENTRIES
        .iter()
        .find(|e| e.name == name)
        .map(|e| e.params)
        .or_else(|| custom::find(name).map(|r| r.params))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_every_listed_name_and_aliases() {
        for (name, description) in list() {
            assert!(!description.is_empty());
            assert_eq!(build(name).unwrap().name(), name);
        }
        assert_eq!(build("default").unwrap().name(), "minrtt");
        assert_eq!(build("PRIORITY").unwrap().name(), "backup");
        assert_eq!(build("rr").unwrap().name(), "roundrobin");
    }

    #[test]
    fn errors_name_the_scheduler() {
        let err = |spec| build(spec).err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(
            err(" :1=2"),
            "malformed specification ` :1=2`: empty scheduler name; expected `name` or `name:key=value,...`"
        );
        assert!(err("fastest").starts_with("unknown scheduler `fastest`; valid names: "));
        assert_eq!(
            err("minrtt:x=1"),
            "`minrtt` has no parameter `x`; valid parameters: none"
        );
    }
}
