//! Errors of this crate: building a scheduler by name ([`SchedError`], from [`crate::registry`]) and a
//! decision that names a path which cannot carry the packet ([`InvalidDecision`], from [`crate::validate`]).

use mpquic_types::SpecError;
use thiserror::Error;

use crate::PathId;

/// Why a scheduler could not be built from a specification such as `"weighted:1=3,2=1"`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SchedError {
    /// No scheduler has this name.
    #[error("unknown scheduler `{name}`; valid names: {valid}")]
    UnknownScheduler {
        /// The name asked for.
        name: String,
        /// Every valid name, comma-separated.
        valid: String,
    },
    /// A malformed specification, an unknown parameter or a bad value (the scheduler's name is in the
    /// message).
    #[error(transparent)]
    Spec(#[from] SpecError),
}

/// Why a decision cannot be carried out on the current view (see [`crate::validate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum InvalidDecision {
    /// The decision names a path the view does not contain.
    #[error("{0} is not a path of the connection")]
    UnknownPath(PathId),
    /// The path is unvalidated, abandoned, potentially failed, or has no window or pacing room for the packet.
    #[error("{0} cannot send the packet now")]
    Unusable(PathId),
    /// A [`crate::Decision::Paths`] list is empty.
    #[error("empty path list")]
    EmptyPaths,
    /// A [`crate::Decision::Paths`] list names a path twice.
    #[error("{0} listed twice")]
    DuplicatePath(PathId),
}
