//! JSON output: a [`RunResult`] (or a list of them for a sweep) as pretty-printed JSON. Undefined metrics
//! are `null`; rates in bits per second, RTTs in milliseconds.

use serde::Serialize;

use super::OutputError;
use crate::results::RunResult;

/// One run as JSON.
pub fn to_json(result: &RunResult) -> Result<String, OutputError> {
    Ok(serde_json::to_string_pretty(result)?)
}

/// Any serialisable value (e.g. a sweep's rows) as JSON.
pub fn value_to_json<T: Serialize>(value: &T) -> Result<String, OutputError> {
    Ok(serde_json::to_string_pretty(value)?)
}
