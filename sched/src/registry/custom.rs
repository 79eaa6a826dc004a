//! Schedulers the application registers at run time ([`register`]): once registered, a scheduler is built by
//! [`super::build`] from a specification string like any built-in one, so every place that takes a
//! specification (mpquic's `TransportConfig::scheduler`, the tools' `--scheduler` flags, simulator scenarios)
//! accepts it.
//!
//! Registration is process-wide and permanent: at most [`MAX_REGISTERED`] schedulers.

use std::sync::{PoisonError, RwLock};

use thiserror::Error;

use super::{ALIASES, Builder, ENTRIES};

/// The most schedulers [`register`] accepts in one process.
pub const MAX_REGISTERED: usize = 64;

/// The longest name [`register`] accepts, in bytes.
pub const MAX_NAME_LEN: usize = 32;

/// One registered scheduler.
#[derive(Clone, Copy)]
pub(super) struct Registered {
    pub(super) name: &'static str,
    pub(super) description: &'static str,
    pub(super) params: &'static [&'static str],
    pub(super) build: Builder,
}

/// The schedulers registered so far, in registration order.
static REGISTERED: RwLock<Vec<Registered>> = RwLock::new(Vec::new());

/// Why [`register`] refused a scheduler.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RegisterError {
    /// The name is not 1 to [`MAX_NAME_LEN`] bytes of `a`-`z`, `0`-`9`, `-` and `_` starting with a letter
    /// (specifications are matched in lowercase, so any other name could never be built).
    #[error("invalid scheduler name `{0}`: 1 to 32 characters a-z, 0-9, '-', '_', starting with a letter")]
    InvalidName(String),
    /// A built-in or already registered scheduler, or an alias, has this name.
    #[error("scheduler name `{0}` is already taken")]
    Taken(String),
    /// [`MAX_REGISTERED`] schedulers are registered already.
    #[error("at most {MAX_REGISTERED} schedulers can be registered")]
    Full,
}

fn valid_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    name.len() <= MAX_NAME_LEN
        && bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// Registers a scheduler: its `name` (what a specification starts with), a one-line `description`, the
/// parameter keys it accepts (`params`, informational: `build` rejects unknown keys itself, normally with
/// [`Params::finish`](crate::params::Params::finish)), and the function that builds it from a
/// specification's parameters. Refuses a name a built-in scheduler, an alias or a registered scheduler
/// already uses, an invalid name, and more than [`MAX_REGISTERED`] schedulers.
pub fn register(
    name: &'static str,
    description: &'static str,
    params: &'static [&'static str],
    build: Builder,
) -> Result<(), RegisterError> {
    if !valid_name(name) {
        return Err(RegisterError::InvalidName(name.to_owned()));
    }
    let mut registered = REGISTERED.write().unwrap_or_else(PoisonError::into_inner);
    let taken = ENTRIES.iter().any(|e| e.name == name)
        || ALIASES.iter().any(|(alias, _)| *alias == name)
        || registered.iter().any(|r| r.name == name);
    if taken {
        return Err(RegisterError::Taken(name.to_owned()));
    }
    if registered.len() >= MAX_REGISTERED {
        return Err(RegisterError::Full);
    }
    registered.push(Registered {
        name,
        description,
        params,
        build,
    });
    Ok(())
}

/// Every registered scheduler, in registration order.
pub(super) fn all() -> Vec<Registered> {
    REGISTERED.read().unwrap_or_else(PoisonError::into_inner).clone()
}

/// The registered scheduler called `name`.
pub(super) fn find(name: &str) -> Option<Registered> {
    all().into_iter().find(|r| r.name == name)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Instant;

    use super::*;
    use crate::params::Params;
    use crate::schedulers::MinRtt;
    use crate::{ConnView, Decision, SchedError, Scheduler};

    /// minRTT under its own name (other tests build every listed name and check the name).
    #[derive(Debug)]
    struct Fastest;

    impl Scheduler for Fastest {
        fn name(&self) -> &'static str {
            "test-fastest"
        }
        fn select_send(&mut self, conn: &ConnView<'_>, _now: Instant) -> Decision {
            MinRtt::decide(conn)
        }
    }

    fn build_minrtt(p: Params) -> Result<Box<dyn Scheduler>, SchedError> {
        p.finish(&[])?;
        Ok(Box::new(Fastest))
    }

    #[test]
    fn registered_names_build_and_clashes_are_refused() {
        register("test-fastest", "test", &[], build_minrtt).unwrap();
        assert_eq!(
            super::super::build("Test-Fastest").unwrap().name(),
            "test-fastest"
        );
        assert!(super::super::build("test-fastest:x=1").is_err());
        assert!(super::super::names().contains(&"test-fastest"));
        assert!(super::super::list().contains(&("test-fastest", "test")));
        assert_eq!(super::super::params("test-fastest"), Some(&[][..]));
        for taken in ["minrtt", "rr", "test-fastest"] {
            assert_eq!(
                register(taken, "", &[], build_minrtt),
                Err(RegisterError::Taken(taken.into()))
            );
        }
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
                register(bad, "", &[], build_minrtt),
                Err(RegisterError::InvalidName(bad.into())),
                "{bad:?}"
            );
        }
    }
}
