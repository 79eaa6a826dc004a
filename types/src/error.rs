//! Why a specification was rejected: malformed text, an unknown parameter, or a value that does not parse
//! or is out of range. The messages name the controller or scheduler and list what would have been valid.

use thiserror::Error;

/// Why a specification such as `"ccubic:variant=a2"` or `"weighted:1=3,2=1"` was rejected.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SpecError {
    /// The controller or scheduler has no parameter of this name.
    #[error("`{name}` has no parameter `{key}`; valid parameters: {valid}")]
    UnknownParameter {
        /// The controller or scheduler.
        name: String,
        /// The unknown key.
        key: String,
        /// Valid parameters (`none` if it takes none).
        valid: String,
    },
    /// A parameter's value does not parse or is out of range.
    #[error("`{name}`: bad value `{value}` for `{key}`: expected {expected}")]
    BadValue {
        /// The controller or scheduler.
        name: String,
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
        reason: SyntaxReason,
    },
}

/// What is wrong with a malformed specification ([`SpecError::Syntax`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum SyntaxReason {
    /// Nothing before the `:` (or an empty text); the field names what the specification configures
    /// (`"algorithm"`, `"scheduler"`).
    #[error("empty {0} name")]
    EmptyName(&'static str),
    /// An item after the `:` has no `=`.
    #[error("parameter without `=`")]
    MissingEquals,
    /// An item has nothing before its `=`.
    #[error("empty parameter name")]
    EmptyKey,
    /// A key appears twice.
    #[error("parameter given twice")]
    Repeated,
}
