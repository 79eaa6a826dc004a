//! Parsing of specifications: `name` or `name:key=value,key=value`, the one syntax by which a congestion
//! controller (`"ccubic:variant=a2"`) or a scheduler (`"weighted:1=3,2=1"`) is chosen.
//!
//! [`Spec::parse`] splits the text; the `from_params` of the controller or scheduler then takes the keys it
//! knows from [`Params`] with typed, range-checked getters, and [`Params::finish`] rejects whatever is left
//! over, so a typo never silently falls back to a default. Per-path settings (`weighted:1=3,2=1`,
//! `backup:2=0,1=1`) are taken all at once with [`Params::per_path`].

use std::time::Duration;

use crate::{PathId, SpecError, SyntaxReason};

/// A parsed specification: the name (lower-cased) and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// Name of the controller or scheduler, lower-cased and trimmed.
    pub name: String,
    /// `key=value` pairs in the order given (keys lower-cased).
    pub params: Vec<(String, String)>,
}

impl Spec {
    /// Parses `name` or `name:key=value,key=value` (white space around names, keys and values is ignored).
    ///
    /// `subject` says what the name names (`"algorithm"`, `"scheduler"`): it appears in the error for an
    /// empty name ("empty algorithm name").
    pub fn parse(spec: &str, subject: &'static str) -> Result<Spec, SpecError> {
        let syntax = |reason| SpecError::Syntax {
            spec: spec.to_string(),
            reason,
        };
        let (name, rest) = match spec.split_once(':') {
            Some((n, r)) => (n, Some(r)),
            None => (spec, None),
        };
        let name = name.trim().to_ascii_lowercase();
        if name.is_empty() {
            return Err(syntax(SyntaxReason::EmptyName(subject)));
        }
        let mut params: Vec<(String, String)> = Vec::new();
        if let Some(rest) = rest {
            for item in rest.split(',') {
                let item = item.trim();
                if item.is_empty() {
                    continue;
                }
                let (k, v) = item
                    .split_once('=')
                    .ok_or_else(|| syntax(SyntaxReason::MissingEquals))?;
                let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_string());
                if k.is_empty() {
                    return Err(syntax(SyntaxReason::EmptyKey));
                }
                if params.iter().any(|(seen, _)| *seen == k) {
                    return Err(syntax(SyntaxReason::Repeated));
                }
                params.push((k, v));
            }
        }
        Ok(Spec { name, params })
    }
}

/// The parameters of one specification, consumed key by key by the controller or scheduler that owns them.
#[derive(Debug, Clone)]
pub struct Params {
    name: String,
    entries: Vec<(String, String, bool)>,
}

impl Params {
    /// Parameters of the controller or scheduler `name` from `key=value` pairs.
    pub fn new(name: &str, pairs: Vec<(String, String)>) -> Params {
        Params {
            name: name.to_string(),
            entries: pairs.into_iter().map(|(k, v)| (k, v, false)).collect(),
        }
    }

    /// No parameters (the defaults of `name`).
    pub fn empty(name: &str) -> Params {
        Params::new(name, Vec::new())
    }

    /// The controller or scheduler these parameters belong to.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn take(&mut self, key: &str) -> Option<String> {
        self.entries
            .iter_mut()
            .find(|(k, _, used)| k == key && !*used)
            .map(|(_, v, used)| {
                *used = true;
                v.clone()
            })
    }

    fn bad_value(&self, key: &str, value: &str, expected: String) -> SpecError {
        SpecError::BadValue {
            name: self.name.clone(),
            key: key.to_string(),
            value: value.to_string(),
            expected,
        }
    }

    /// A real number in `[min, max]`, or `default` if absent.
    pub fn f64(&mut self, key: &str, default: f64, min: f64, max: f64) -> Result<f64, SpecError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.parse::<f64>() {
                Ok(x) if x.is_finite() && x >= min && x <= max => Ok(x),
                _ => Err(self.bad_value(key, &v, format!("a number in [{min}, {max}]"))),
            },
        }
    }

    /// An integer in `[min, max]`, or `default` if absent.
    pub fn u64(&mut self, key: &str, default: u64, min: u64, max: u64) -> Result<u64, SpecError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.parse::<u64>() {
                Ok(x) if x >= min && x <= max => Ok(x),
                _ => Err(self.bad_value(key, &v, format!("an integer in [{min}, {max}]"))),
            },
        }
    }

    /// A boolean (`true/false`, `on/off`, `yes/no`, `1/0`), or `default` if absent.
    pub fn bool(&mut self, key: &str, default: bool) -> Result<bool, SpecError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.to_ascii_lowercase().as_str() {
                "true" | "on" | "yes" | "1" => Ok(true),
                "false" | "off" | "no" | "0" => Ok(false),
                _ => Err(self.bad_value(key, &v, "true or false".to_string())),
            },
        }
    }

    /// A duration in milliseconds (fractions allowed) in `[min, max]`, or `default` if absent.
    pub fn millis(
        &mut self,
        key: &str,
        default: Duration,
        min: Duration,
        max: Duration,
    ) -> Result<Duration, SpecError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.parse::<f64>() {
                Ok(ms) if ms.is_finite() && ms >= 0.0 => {
                    let d = Duration::from_secs_f64(ms / 1000.0);
                    if d >= min && d <= max {
                        Ok(d)
                    } else {
                        Err(self.bad_value(
                            key,
                            &v,
                            format!(
                                "milliseconds in [{}, {}]",
                                min.as_secs_f64() * 1e3,
                                max.as_secs_f64() * 1e3
                            ),
                        ))
                    }
                }
                _ => Err(self.bad_value(key, &v, "a number of milliseconds".to_string())),
            },
        }
    }

    /// One of `choices` (case-insensitive), or `default` if absent.
    pub fn choice(
        &mut self,
        key: &str,
        default: &'static str,
        choices: &[&'static str],
    ) -> Result<&'static str, SpecError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => {
                let lower = v.to_ascii_lowercase();
                choices
                    .iter()
                    .find(|c| **c == lower)
                    .copied()
                    .ok_or_else(|| self.bad_value(key, &v, format!("one of {}", choices.join(", "))))
            }
        }
    }

    /// Every parameter whose key is a path ID (a decimal `u32`), with an integer value in `[min, max]`,
    /// sorted by path ID.
    pub fn per_path(&mut self, min: u64, max: u64) -> Result<Vec<(PathId, u64)>, SpecError> {
        let mut out = Vec::new();
        for i in 0..self.entries.len() {
            let Some((key, value, used)) = self.entries.get(i).cloned() else {
                continue;
            };
            if used {
                continue;
            }
            let Ok(id) = key.parse::<u32>() else {
                continue;
            };
            match value.parse::<u64>() {
                Ok(x) if x >= min && x <= max => out.push((PathId(id), x)),
                _ => return Err(self.bad_value(&key, &value, format!("an integer in [{min}, {max}]"))),
            }
            if let Some(e) = self.entries.get_mut(i) {
                e.2 = true;
            }
        }
        out.sort_by_key(|(id, _)| *id);
        // "1=3,01=2" names path 1 twice.
        if let Some(w) = out.windows(2).find(|w| matches!(w, [a, b] if a.0 == b.0)) {
            let id = w.first().map(|(id, _)| id.0).unwrap_or_default();
            return Err(self.bad_value(&id.to_string(), "", "each path given once".to_string()));
        }
        Ok(out)
    }

    /// Fails on the first key that no getter consumed; `valid` lists the parameters of the controller or
    /// scheduler.
    pub fn finish(self, valid: &[&str]) -> Result<(), SpecError> {
        match self.entries.iter().find(|(_, _, used)| !used) {
            None => Ok(()),
            Some((key, _, _)) => Err(SpecError::UnknownParameter {
                name: self.name.clone(),
                key: key.clone(),
                valid: if valid.is_empty() {
                    "none".to_string()
                } else {
                    valid.join(", ")
                },
            }),
        }
    }
}

#[cfg(test)]
mod tests;
