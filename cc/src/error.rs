//! Errors of this crate: all of them come from building a controller by name ([`crate::registry`]).

use mpquic_types::SpecError;
use thiserror::Error;

/// Why a controller could not be built from a specification such as `"ccubic:variant=a2"`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CcError {
    /// No controller has this name.
    #[error("unknown congestion controller `{name}`; valid names: {valid}")]
    UnknownAlgorithm {
        /// The name asked for.
        name: String,
        /// Every valid name, comma-separated.
        valid: String,
    },
    /// A malformed specification, an unknown parameter or a bad value (the controller's name is in the
    /// message).
    #[error(transparent)]
    Spec(#[from] SpecError),
}
