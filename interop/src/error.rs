//! Errors of the runner and the endpoints.

use std::path::PathBuf;

/// What can go wrong in the runner or an endpoint (a failed *check* is not an error: see
/// [`crate::runner::Outcome`]).
#[derive(Debug, thiserror::Error)]
pub enum InteropError {
    /// A file or socket operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// An environment variable is missing or malformed.
    #[error("environment variable {name}: {problem}")]
    Env {
        /// The variable.
        name: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// The implementations file could not be read or parsed.
    #[error("implementations file {path}: {problem}")]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// Unknown implementation or test case name.
    #[error("unknown {kind} {name:?}")]
    Unknown {
        /// "implementation" or "test case".
        kind: &'static str,
        /// The name given.
        name: String,
    },
    /// TLS configuration or certificate problem.
    #[error("TLS: {0}")]
    Tls(String),
    /// A QUIC connection failed.
    #[error("connection: {0}")]
    Connection(String),
    /// An HTTP/0.9 exchange failed.
    #[error("request {path}: {problem}")]
    Request {
        /// The requested path.
        path: String,
        /// What went wrong.
        problem: String,
    },
    /// The network emulator failed.
    #[error("network: {0}")]
    Network(String),
    /// Something did not happen in time.
    #[error("timed out: {0}")]
    Timeout(String),
}

impl InteropError {
    /// An [`InteropError::Io`] with context.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> InteropError {
        InteropError::Io {
            what: what.into(),
            source,
        }
    }
}
