//! Transport parameters.
