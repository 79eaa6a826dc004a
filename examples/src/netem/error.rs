//! Errors of the emulator's library API: configuration that cannot run and sockets that cannot be opened.
//!
//! Parse errors of the command line and of configuration files live next to their parsers
//! ([`super::spec::SpecError`], [`super::file::FileError`]); this enum is what [`super::Emulator::start`] and
//! the control methods return.

use std::io;
use std::net::SocketAddr;

use mpquic_netsim::link::ConfigError;
use thiserror::Error;

use super::config::Direction;

/// Why the emulator could not start or could not apply a change.
#[derive(Debug, Error)]
pub enum NetemError {
    /// The configuration has no path.
    #[error("no path configured: give at least one path")]
    NoPath,
    /// A link direction's configuration is out of range.
    #[error("path {path} {direction}: {source}")]
    Link {
        /// Path index (from 0).
        path: usize,
        /// Which direction.
        direction: Direction,
        /// What is wrong.
        #[source]
        source: ConfigError,
    },
    /// A path index that does not exist.
    #[error("no path {path}: paths are numbered 0 to {last}")]
    UnknownPath {
        /// The index asked for.
        path: usize,
        /// The last valid index.
        last: usize,
    },
    /// A number outside its documented range (the number of paths, the overhead, an event time).
    #[error("{what} = {value} is out of range: expected {expected}")]
    OutOfRange {
        /// The setting (`paths`, `overhead`, `event time`).
        what: String,
        /// The value given.
        value: String,
        /// The valid range.
        expected: &'static str,
    },
    /// A socket could not be opened.
    #[error("cannot bind {what} on {addr}: {source}")]
    Bind {
        /// Which socket (`path 0 front`, `control`, …).
        what: String,
        /// The address asked for.
        addr: SocketAddr,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Another socket operation failed.
    #[error("socket error: {0}")]
    Io(#[from] io::Error),
}
