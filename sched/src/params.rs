//! Parsing of scheduler specifications: `name` or `name:key=value,key=value` (same syntax as the
//! congestion-controller registry of `mpquic-cc`).
//!
//! [`Spec::parse`] splits the text; each scheduler's `from_params` then takes the keys it knows from
//! [`Params`] with typed, range-checked getters, and [`Params::finish`] rejects whatever is left over, so a
//! typo never silently falls back to a default. Schedulers with per-path settings (`weighted:1=3,2=1`,
//! `backup:2=0,1=1`) take every numeric key at once with [`Params::per_path`].

use crate::{PathId, SchedError};

/// A parsed specification: the scheduler name (lower-cased) and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// Scheduler name, lower-cased and trimmed.
    pub name: String,
    /// `key=value` pairs in the order given (keys lower-cased).
    pub params: Vec<(String, String)>,
}

impl Spec {
    /// Parses `name` or `name:key=value,key=value` (white space around names, keys and values is ignored).
    pub fn parse(spec: &str) -> Result<Spec, SchedError> {
        let syntax = |reason| SchedError::Syntax {
            spec: spec.to_string(),
            reason,
        };
        let (name, rest) = match spec.split_once(':') {
            Some((n, r)) => (n, Some(r)),
            None => (spec, None),
        };
        let name = name.trim().to_ascii_lowercase();
        if name.is_empty() {
            return Err(syntax("empty scheduler name"));
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
                    .ok_or_else(|| syntax("parameter without `=`"))?;
                let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_string());
                if k.is_empty() {
                    return Err(syntax("empty parameter name"));
                }
                if params.iter().any(|(seen, _)| *seen == k) {
                    return Err(syntax("parameter given twice"));
                }
                params.push((k, v));
            }
        }
        Ok(Spec { name, params })
    }
}

/// The parameters of one specification, consumed key by key by the scheduler that owns them.
#[derive(Debug, Clone)]
pub struct Params {
    scheduler: String,
    entries: Vec<(String, String, bool)>,
}

impl Params {
    /// Parameters for `scheduler` from `key=value` pairs.
    pub fn new(scheduler: &str, pairs: Vec<(String, String)>) -> Params {
        Params {
            scheduler: scheduler.to_string(),
            entries: pairs.into_iter().map(|(k, v)| (k, v, false)).collect(),
        }
    }

    /// No parameters (the defaults of `scheduler`).
    pub fn empty(scheduler: &str) -> Params {
        Params::new(scheduler, Vec::new())
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

    fn bad(&self, key: &str, value: &str, expected: String) -> SchedError {
        SchedError::BadValue {
            scheduler: self.scheduler.clone(),
            key: key.to_string(),
            value: value.to_string(),
            expected,
        }
    }

    /// A real number in `[min, max]`, or `default` if absent.
    pub fn f64(&mut self, key: &str, default: f64, min: f64, max: f64) -> Result<f64, SchedError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.parse::<f64>() {
                Ok(x) if x.is_finite() && x >= min && x <= max => Ok(x),
                _ => Err(self.bad(key, &v, format!("a number in [{min}, {max}]"))),
            },
        }
    }

    /// An integer in `[min, max]`, or `default` if absent.
    pub fn u64(&mut self, key: &str, default: u64, min: u64, max: u64) -> Result<u64, SchedError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.parse::<u64>() {
                Ok(x) if x >= min && x <= max => Ok(x),
                _ => Err(self.bad(key, &v, format!("an integer in [{min}, {max}]"))),
            },
        }
    }

    /// A boolean (`true/false`, `on/off`, `yes/no`, `1/0`), or `default` if absent.
    pub fn bool(&mut self, key: &str, default: bool) -> Result<bool, SchedError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.to_ascii_lowercase().as_str() {
                "true" | "on" | "yes" | "1" => Ok(true),
                "false" | "off" | "no" | "0" => Ok(false),
                _ => Err(self.bad(key, &v, "true or false".to_string())),
            },
        }
    }

    /// Every parameter whose key is a path ID (a decimal `u32`), with an integer value in `[min, max]`,
    /// sorted by path ID.
    pub fn per_path(&mut self, min: u64, max: u64) -> Result<Vec<(PathId, u64)>, SchedError> {
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
                _ => return Err(self.bad(&key, &value, format!("an integer in [{min}, {max}]"))),
            }
            if let Some(e) = self.entries.get_mut(i) {
                e.2 = true;
            }
        }
        out.sort_by_key(|(id, _)| *id);
        // "1=3,01=2" names path 1 twice.
        if let Some(w) = out.windows(2).find(|w| matches!(w, [a, b] if a.0 == b.0)) {
            let id = w.first().map(|(id, _)| id.0).unwrap_or_default();
            return Err(self.bad(&id.to_string(), "", "each path given once".to_string()));
        }
        Ok(out)
    }

    /// Fails on the first key that no getter consumed; `valid` lists the scheduler's parameters.
    pub fn finish(self, valid: &[&str]) -> Result<(), SchedError> {
        match self.entries.iter().find(|(_, _, used)| !used) {
            None => Ok(()),
            Some((key, _, _)) => Err(SchedError::UnknownParameter {
                scheduler: self.scheduler.clone(),
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
mod tests {
    use super::*;

    #[test]
    fn parses_name_and_parameters() {
        let s = Spec::parse(" Weighted : 1=3, 2 = 1 ").unwrap();
        assert_eq!(s.name, "weighted");
        assert_eq!(s.params, vec![("1".into(), "3".into()), ("2".into(), "1".into())]);
        assert_eq!(Spec::parse("minrtt").unwrap().params, vec![]);
    }

    #[test]
    fn rejects_malformed_specs() {
        assert!(matches!(Spec::parse(""), Err(SchedError::Syntax { .. })));
        assert!(matches!(
            Spec::parse("blest:lambda"),
            Err(SchedError::Syntax { .. })
        ));
        assert!(matches!(Spec::parse("blest:=1"), Err(SchedError::Syntax { .. })));
        assert!(matches!(Spec::parse("x:a=1,a=2"), Err(SchedError::Syntax { .. })));
    }

    #[test]
    fn typed_getters_check_ranges_and_leftovers() {
        let s = Spec::parse("x:lambda=1.2,n=3,on=yes,1=4,7=2").unwrap();
        let mut p = Params::new("x", s.params);
        assert_eq!(p.f64("lambda", 1.0, 1.0, 1.3).unwrap(), 1.2);
        assert_eq!(p.u64("n", 1, 1, 10).unwrap(), 3);
        assert!(p.bool("on", false).unwrap());
        assert_eq!(p.per_path(0, 10).unwrap(), vec![(PathId(1), 4), (PathId(7), 2)]);
        p.finish(&["lambda"]).unwrap();

        let mut p = Params::new("x", Spec::parse("x:lambda=2").unwrap().params);
        assert!(matches!(
            p.f64("lambda", 1.2, 1.0, 1.3),
            Err(SchedError::BadValue { .. })
        ));
        let mut p = Params::new("x", Spec::parse("x:1=-3").unwrap().params);
        assert!(matches!(p.per_path(0, 10), Err(SchedError::BadValue { .. })));
        let mut p = Params::new("x", Spec::parse("x:1=3,01=2").unwrap().params);
        assert!(matches!(p.per_path(0, 10), Err(SchedError::BadValue { .. })));
        let p = Params::new("x", Spec::parse("x:typo=2").unwrap().params);
        let err = p.finish(&["lambda", "adapt"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`x` has no parameter `typo`; valid parameters: lambda, adapt"
        );
    }
}
