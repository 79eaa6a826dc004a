//! Errors of this crate: all of them come from building a controller by name ([`crate::registry`]).

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
    /// The controller has no parameter of this name.
    #[error("`{algorithm}` has no parameter `{key}`; valid parameters: {valid}")]
    UnknownParameter {
        /// The controller.
        algorithm: String,
        /// The unknown key.
        key: String,
        /// Valid parameters (`none` if it takes none).
        valid: String,
    },
    /// A parameter's value does not parse or is out of range.
    #[error("`{algorithm}`: bad value `{value}` for `{key}`: expected {expected}")]
    BadValue {
        /// The controller.
        algorithm: String,
        /// The parameter.
        key: String,
        /// The value given.
        value: String,
        /// What would have been accepted.
        expected: String,
    },
    /// The specification is not `name` or `name:key=value,key=value`.
    #[error("malformed specification `{spec}`: {reason}; expected `name` or `name:key=value,...`")]
    Syntax {
        /// The specification.
        spec: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}
