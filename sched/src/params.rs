//! Parsing of scheduler specifications: `name` or `name:key=value,key=value` (same syntax, and same parser
//! from `mpquic-types`, as the congestion-controller registry of `mpquic-cc`).
//!
//! [`Spec::parse`] splits the text (with the subject `"scheduler"`); each scheduler's `from_params` then
//! takes the keys it knows from [`Params`] with typed, range-checked getters, and [`Params::finish`] rejects
//! whatever is left over, so a typo never silently falls back to a default. Schedulers with per-path
//! settings (`weighted:1=3,2=1`, `backup:2=0,1=1`) take every numeric key at once with [`Params::per_path`].

pub use mpquic_types::{Params, Spec, SpecError, SyntaxReason};
