//! Writing results: the summary table ([`table`]), JSON ([`json`]), CSV time series ([`csv`]) and plots
//! ([`plot`]).
//!
//! Units in every output: goodput and throughput in Mbit/s in tables and plots, bits per second in JSON and
//! CSV; RTT in milliseconds; windows and bytes in flight in bytes; time in seconds.

pub mod csv;
pub mod json;
pub mod plot;
pub mod table;

use thiserror::Error;

/// Writing an output failed.
#[derive(Debug, Error)]
pub enum OutputError {
    /// A file or directory could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Serialising to JSON failed.
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Drawing a plot failed.
    #[error("plot {path}: {message}")]
    Plot {
        /// The file.
        path: String,
        /// The drawing backend's message.
        message: String,
    },
}

impl OutputError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> OutputError {
        OutputError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
