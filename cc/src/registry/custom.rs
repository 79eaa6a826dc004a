//! Controllers the application registers at run time ([`register`]): once registered, a controller is built
//! by [`super::build`] from a specification string like any built-in one, so every place that takes a
//! specification (mpquic's `TransportConfig::congestion_controller`, the tools' `--cc` flags, simulator
//! scenarios) accepts it.
//!
//! Registration is process-wide and permanent: at most [`MAX_REGISTERED`] algorithms, each
//! [`AlgorithmInfo`] kept for the rest of the process (so that [`super::find`] can hand out `'static`
//! references like it does for the built-in ones).

use std::sync::{PoisonError, RwLock};

use thiserror::Error;

use super::{ALGORITHMS, AlgorithmInfo, Coupling};
use crate::params::Params;
use crate::{CcError, CongestionController};

/// The most algorithms [`register`] accepts in one process.
pub const MAX_REGISTERED: usize = 64;

/// The longest name or alias [`register`] accepts, in bytes.
pub const MAX_NAME_LEN: usize = 32;

/// The algorithms registered so far, in registration order.
static REGISTERED: RwLock<Vec<&'static AlgorithmInfo>> = RwLock::new(Vec::new());

/// Why [`register`] refused an algorithm.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RegisterError {
    /// The name or an alias is not 1 to [`MAX_NAME_LEN`] bytes of `a`-`z`, `0`-`9`, `-` and `_` starting with a
    /// letter (specifications are matched in lowercase, so any other name could never be built).
    #[error(
        "invalid congestion controller name `{0}`: 1 to 32 characters a-z, 0-9, '-', '_', starting with a letter"
    )]
    InvalidName(String),
    /// A built-in or already registered algorithm has this name or alias.
    #[error("congestion controller name `{0}` is already taken")]
    Taken(String),
    /// [`MAX_REGISTERED`] algorithms are registered already.
    #[error("at most {MAX_REGISTERED} congestion controllers can be registered")]
    Full,
}

impl AlgorithmInfo {
    /// Describes an algorithm for [`register`]: its name (what a specification starts with), other accepted
    /// names, a one-line description, whether it couples paths, the parameter keys it accepts, and the
    /// function that builds it from a specification's parameters. `build` takes what it needs from the
    /// [`Params`] with their typed getters; keys outside `params` are rejected after it returns.
    pub const fn new(
        name: &'static str,
        aliases: &'static [&'static str],
        description: &'static str,
        coupling: Coupling,
        params: &'static [&'static str],
        build: fn(&mut Params) -> Result<Box<dyn CongestionController>, CcError>,
    ) -> Self {
        AlgorithmInfo {
            name,
            aliases,
            description,
            coupling,
            params,
            build,
        }
    }

    fn names(&self) -> impl Iterator<Item = &'static str> {
        std::iter::once(self.name).chain(self.aliases.iter().copied())
    }
}

fn valid_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    name.len() <= MAX_NAME_LEN
        && bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// Registers `info` so that [`super::build`] and [`super::find`] accept its name and aliases. Refuses a name
/// that a built-in or registered algorithm already uses, an invalid name, and more than [`MAX_REGISTERED`]
/// algorithms.
pub fn register(info: AlgorithmInfo) -> Result<(), RegisterError> {
    if let Some(bad) = info.names().find(|n| !valid_name(n)) {
        return Err(RegisterError::InvalidName(bad.to_owned()));
    }
    let mut registered = REGISTERED.write().unwrap_or_else(PoisonError::into_inner);
    let taken = |n: &str| {
        ALGORITHMS
            .iter()
            .chain(registered.iter().copied())
            .any(|a| a.names().any(|m| m == n))
    };
    if let Some(dup) = info.names().find(|n| taken(n)) {
        return Err(RegisterError::Taken(dup.to_owned()));
    }
    // Two names of `info` itself may not collide either.
    let names: Vec<&str> = info.names().collect();
    if let Some(dup) = names.iter().enumerate().find_map(|(i, n)| {
        names
            .get(i + 1..)
            .is_some_and(|rest| rest.contains(n))
            .then_some(*n)
    }) {
        return Err(RegisterError::Taken(dup.to_owned()));
    }
    if registered.len() >= MAX_REGISTERED {
        return Err(RegisterError::Full);
    }
    registered.push(Box::leak(Box::new(info)));
    Ok(())
}

/// Every algorithm registered with [`register`], in registration order ([`super::list`] has the built-in
/// ones).
pub fn registered() -> Vec<&'static AlgorithmInfo> {
    REGISTERED.read().unwrap_or_else(PoisonError::into_inner).clone()
}

/// The registered algorithm called `name` (lowercase) or with that alias.
pub(super) fn find(name: &str) -> Option<&'static AlgorithmInfo> {
    registered().into_iter().find(|a| a.names().any(|n| n == name))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::Uncoupled;
    use crate::newreno::NewRenoConfig;

    /// Builds NewReno under another name (the controller keeps its own name, "newreno").
    fn build_reno(_: &mut Params) -> Result<Box<dyn CongestionController>, CcError> {
        Ok(Box::new(Uncoupled::new(NewRenoConfig::default())))
    }

    #[test]
    fn registered_names_build_and_clashes_are_refused() {
        let info =
            |name, aliases| AlgorithmInfo::new(name, aliases, "test", Coupling::Uncoupled, &[], build_reno);
        register(info("test-reno", &["test-reno-alias"])).unwrap();
        assert_eq!(super::super::build("Test-Reno").unwrap().name(), "newreno");
        assert_eq!(super::super::build("test-reno-alias").unwrap().name(), "newreno");
        // Keys outside the declared (empty) list are rejected, as for built-in algorithms.
        assert!(super::super::build("test-reno:x=1").is_err());
        assert_eq!(
            register(info("cubic", &[])),
            Err(RegisterError::Taken("cubic".into()))
        );
        assert_eq!(
            register(info("other", &["test-reno-alias"])),
            Err(RegisterError::Taken("test-reno-alias".into()))
        );
        assert_eq!(
            register(info("twice", &["twice"])),
            Err(RegisterError::Taken("twice".into()))
        );
        for bad in [
            "",
            "Upper",
            "9lives",
            "sp ace",
            "a:b",
            &"x".repeat(MAX_NAME_LEN + 1),
        ] {
            let bad: &'static str = Box::leak(bad.to_owned().into_boxed_str());
            assert_eq!(
                register(info(bad, &[])),
                Err(RegisterError::InvalidName(bad.into())),
                "{bad:?}"
            );
        }
        assert!(registered().iter().any(|a| a.name == "test-reno"));
    }
}
