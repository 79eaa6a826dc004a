//! # mpquic-types: the vocabulary mpquic's crates share
//!
//! The congestion controllers (`mpquic-cc`), the schedulers (`mpquic-sched`) and the connection (`mpquic`)
//! speak about the same things; this crate defines them once, with no dependency but `thiserror`:
//!
//! - [`PathId`]: a path of a connection, as numbered by draft-ietf-quic-multipath-21 §3;
//! - [`PathStatus`]: available or backup (draft-ietf-quic-multipath-21 §3.3);
//! - [`Spec`] and [`Params`]: the `name` or `name:key=value,key=value` specifications by which a controller
//!   or a scheduler is chosen (`"ccubic:variant=a2"`, `"weighted:1=3,2=1"`), with typed, range-checked
//!   getters; and [`SpecError`], why a specification was rejected.
//!
//! `mpquic-cc` and `mpquic-sched` re-export these items, so `mpquic_cc::PathId`, `mpquic_sched::PathId` and
//! `mpquic_types::PathId` are one type.
//!
//! ```
//! use mpquic_types::{Params, PathId, Spec};
//!
//! let spec = Spec::parse("CCubic: variant=a2", "algorithm")?;
//! let mut params = Params::new(&spec.name, spec.params);
//! assert_eq!(params.choice("variant", "a1", &["a1", "a2"])?, "a2");
//! params.finish(&["variant"])?;
//!
//! let spec = Spec::parse("weighted:1=3,2=1", "scheduler")?;
//! let mut params = Params::new(&spec.name, spec.params);
//! assert_eq!(params.per_path(0, 1000)?, vec![(PathId(1), 3), (PathId(2), 1)]);
//! # Ok::<(), mpquic_types::SpecError>(())
//! ```

#![deny(missing_docs)]

mod error;
mod path;
mod spec;

pub use error::{SpecError, SyntaxReason};
pub use path::{PathId, PathStatus};
pub use spec::{Params, Spec};

/// The crate README's examples, compiled and run as doctests so that the page crates.io shows stays correct.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
