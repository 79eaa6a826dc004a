//! Parsing of controller specifications: `name` or `name:key=value,key=value`.
//!
//! The parser is `mpquic-types`' (the schedulers of `mpquic-sched` use the same one): [`Spec::parse`] splits
//! the text (with the subject `"algorithm"`); each algorithm's `from_params` then takes the keys it knows from
//! [`Params`] with typed, range-checked getters, and [`Params::finish`] rejects whatever is left over, so a
//! typo never silently falls back to a default.

pub use mpquic_types::{Params, Spec, SpecError, SyntaxReason};
