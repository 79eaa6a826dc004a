//! Parsing of controller specifications: `name` or `name:key=value,key=value`.
//!
//! [`Spec::parse`] splits the text; each algorithm's `from_params` then takes the keys it knows from
//! [`Params`] with typed, range-checked getters, and [`Params::finish`] rejects whatever is left over, so a
//! typo never silently falls back to a default.

use std::time::Duration;

use crate::CcError;

/// A parsed specification: the algorithm name (lower-cased) and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// Algorithm name, lower-cased and trimmed.
    pub name: String,
    /// `key=value` pairs in the order given.
    pub params: Vec<(String, String)>,
}

impl Spec {
    /// Parses `name` or `name:key=value,key=value` (white space around names, keys and values is ignored).
    pub fn parse(spec: &str) -> Result<Spec, CcError> {
        let syntax = |reason| CcError::Syntax {
            spec: spec.to_string(),
            reason,
        };
        let (name, rest) = match spec.split_once(':') {
            Some((n, r)) => (n, Some(r)),
            None => (spec, None),
        };
        let name = name.trim().to_ascii_lowercase();
        if name.is_empty() {
            return Err(syntax("empty algorithm name"));
        }
        let mut params = Vec::new();
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
                if params.iter().any(|(seen, _): &(String, String)| *seen == k) {
                    return Err(syntax("parameter given twice"));
                }
                params.push((k, v));
            }
        }
        Ok(Spec { name, params })
    }
}

/// The parameters of one specification, consumed key by key by the algorithm that owns them.
#[derive(Debug, Clone)]
pub struct Params {
    algorithm: String,
    entries: Vec<(String, String, bool)>,
}

impl Params {
    /// Parameters for `algorithm` from `key=value` pairs.
    pub fn new(algorithm: &str, pairs: Vec<(String, String)>) -> Params {
        Params {
            algorithm: algorithm.to_string(),
            entries: pairs.into_iter().map(|(k, v)| (k, v, false)).collect(),
        }
    }

    /// No parameters (the defaults of `algorithm`).
    pub fn empty(algorithm: &str) -> Params {
        Params::new(algorithm, Vec::new())
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

    fn bad(&self, key: &str, value: &str, expected: String) -> CcError {
        CcError::BadValue {
            algorithm: self.algorithm.clone(),
            key: key.to_string(),
            value: value.to_string(),
            expected,
        }
    }

    /// A real number in `[min, max]`, or `default` if absent.
    pub fn f64(&mut self, key: &str, default: f64, min: f64, max: f64) -> Result<f64, CcError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.parse::<f64>() {
                Ok(x) if x.is_finite() && x >= min && x <= max => Ok(x),
                _ => Err(self.bad(key, &v, format!("a number in [{min}, {max}]"))),
            },
        }
    }

    /// An integer in `[min, max]`, or `default` if absent.
    pub fn u64(&mut self, key: &str, default: u64, min: u64, max: u64) -> Result<u64, CcError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.parse::<u64>() {
                Ok(x) if x >= min && x <= max => Ok(x),
                _ => Err(self.bad(key, &v, format!("an integer in [{min}, {max}]"))),
            },
        }
    }

    /// A boolean (`true/false`, `on/off`, `yes/no`, `1/0`), or `default` if absent.
    pub fn bool(&mut self, key: &str, default: bool) -> Result<bool, CcError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.to_ascii_lowercase().as_str() {
                "true" | "on" | "yes" | "1" => Ok(true),
                "false" | "off" | "no" | "0" => Ok(false),
                _ => Err(self.bad(key, &v, "true or false".to_string())),
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
    ) -> Result<Duration, CcError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.parse::<f64>() {
                Ok(ms) if ms.is_finite() && ms >= 0.0 => {
                    let d = Duration::from_secs_f64(ms / 1000.0);
                    if d >= min && d <= max {
                        Ok(d)
                    } else {
                        Err(self.bad(
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
                _ => Err(self.bad(key, &v, "a number of milliseconds".to_string())),
            },
        }
    }

    /// One of `choices` (case-insensitive), or `default` if absent.
    pub fn choice(
        &mut self,
        key: &str,
        default: &'static str,
        choices: &[&'static str],
    ) -> Result<&'static str, CcError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => {
                let lower = v.to_ascii_lowercase();
                choices
                    .iter()
                    .find(|c| **c == lower)
                    .copied()
                    .ok_or_else(|| self.bad(key, &v, format!("one of {}", choices.join(", "))))
            }
        }
    }

    /// Fails on the first key that no getter consumed; `valid` lists the algorithm's parameters.
    pub fn finish(self, valid: &[&str]) -> Result<(), CcError> {
        match self.entries.iter().find(|(_, _, used)| !used) {
            None => Ok(()),
            Some((key, _, _)) => Err(CcError::UnknownParameter {
                algorithm: self.algorithm.clone(),
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
        let s = Spec::parse(" CCubic : variant=a2, large_bdp_packets = 100 ").unwrap();
        assert_eq!(s.name, "ccubic");
        assert_eq!(
            s.params,
            vec![
                ("variant".into(), "a2".into()),
                ("large_bdp_packets".into(), "100".into())
            ]
        );
        assert_eq!(Spec::parse("cubic").unwrap().params, vec![]);
    }

    #[test]
    fn rejects_malformed_specs() {
        assert!(matches!(Spec::parse(""), Err(CcError::Syntax { .. })));
        assert!(matches!(Spec::parse("cubic:beta"), Err(CcError::Syntax { .. })));
        assert!(matches!(Spec::parse("cubic:=1"), Err(CcError::Syntax { .. })));
        assert!(matches!(
            Spec::parse("cubic:a=1,a=2"),
            Err(CcError::Syntax { .. })
        ));
    }

    #[test]
    fn typed_getters_check_ranges_and_leftovers() {
        let s = Spec::parse("x:beta=0.7,n=3,on=yes,mode=A,t=2.5").unwrap();
        let mut p = Params::new("x", s.params);
        assert_eq!(p.f64("beta", 0.5, 0.0, 1.0).unwrap(), 0.7);
        assert_eq!(p.u64("n", 1, 1, 10).unwrap(), 3);
        assert!(p.bool("on", false).unwrap());
        assert_eq!(p.choice("mode", "b", &["a", "b"]).unwrap(), "a");
        assert_eq!(
            p.millis("t", Duration::ZERO, Duration::ZERO, Duration::from_secs(1))
                .unwrap(),
            Duration::from_micros(2500)
        );
        assert_eq!(p.f64("absent", 0.25, 0.0, 1.0).unwrap(), 0.25);
        p.finish(&["beta"]).unwrap();

        let mut p = Params::new("x", Spec::parse("x:beta=2").unwrap().params);
        assert!(matches!(
            p.f64("beta", 0.5, 0.0, 1.0),
            Err(CcError::BadValue { .. })
        ));
        let p = Params::new("x", Spec::parse("x:typo=2").unwrap().params);
        let err = p.finish(&["beta", "c"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`x` has no parameter `typo`; valid parameters: beta, c"
        );
    }
}
