//! Scenario errors.
//!
//! Every error names the offending field by its path in the scenario file, in the notation a reader uses to
//! find it: tables by key and arrays by index (`links.bn.loss.p`, `flows[1].paths[0].route`,
//! `sweep.axes[0].parameter`). Parse errors (a field of the wrong type, an unknown key) carry the same path
//! plus the TOML parser's own message, with its line and column when the text is at hand.

use std::path::PathBuf;

use thiserror::Error;

/// Why a scenario could not be read, parsed, validated or expanded.
#[derive(Debug, Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The text is not TOML, or a field has the wrong type or is unknown.
    #[error("{field}: {message}")]
    Parse {
        /// Path of the field where parsing stopped (`.` for the document itself).
        field: String,
        /// The parser's message.
        message: String,
    },
    /// A field parsed but its value is not acceptable.
    #[error("{field}: {message}")]
    Invalid {
        /// Path of the bad field.
        field: String,
        /// What is wrong and, where useful, what is expected.
        message: String,
    },
}

impl ScenarioError {
    /// An [`ScenarioError::Invalid`] for `field`.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> ScenarioError {
        ScenarioError::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }

    /// The path of the field the error is about (`None` for I/O errors).
    pub fn field(&self) -> Option<&str> {
        match self {
            ScenarioError::Io { .. } => None,
            ScenarioError::Parse { field, .. } | ScenarioError::Invalid { field, .. } => Some(field),
        }
    }
}

/// Converts a link configuration error into a scenario error under `prefix` (e.g. `links.bn`).
pub(crate) fn link_error(prefix: &str, err: &crate::link::ConfigError) -> ScenarioError {
    ScenarioError::invalid(
        format!("{prefix}.{}", err.field),
        format!("{} is invalid: expected {}", err.value, err.expected),
    )
}

/// Turns a path from `serde_path_to_error` (`flows[1].paths[0].route`) into a field name, `.` at the root.
pub(crate) fn parse_error(path: &serde_path_to_error::Path, message: &str) -> ScenarioError {
    let field = path.to_string();
    ScenarioError::Parse {
        field: if field.is_empty() { ".".to_owned() } else { field },
        message: message.trim_end().to_owned(),
    }
}
