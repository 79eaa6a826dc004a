//! Parameter sweeps: one scenario file, run across values of one or more parameters and across seeds.
//!
//! ```toml
//! [sweep]
//! parameter = "links.bn.loss.p"          # a dotted path into this file
//! values = [0.0, 0.001, 0.01, 0.1]
//! seeds = [1, 2, 3]                       # default: [scenario.seed]
//!
//! [[sweep.axes]]                          # more axes: every combination is run
//! parameter = ["flows.a.cc", "flows.b.cc"]  # several paths set to the same value
//! values = ["cubic", "bbr"]
//! ```
//!
//! A parameter is a path into the TOML document: keys separated by dots; an array element is chosen by
//! index (`flows[1].cc` or `flows.1.cc`) or, for arrays of tables with a `name` key, by that name
//! (`flows.f1.cc`). Every table on the way must exist in the file; the last key is replaced or added. The value
//! is set on the parsed TOML before it is turned into a [`Scenario`], so any field can be swept and the
//! resulting scenario is validated like a file.
//!
//! Expansion order: the first axis varies slowest, seeds fastest; runs are numbered from 0 in that order. A
//! sweep expands to at most 10,000 runs ([`super::limits::MAX_SWEEP_RUNS`]).

use serde::{Deserialize, Serialize};

use super::limits::MAX_SWEEP_RUNS;
use super::{Scenario, ScenarioError};

/// One parameter path or several set together.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Parameters {
    /// One path.
    One(String),
    /// Several paths, all set to each value.
    Many(Vec<String>),
}

impl Parameters {
    /// The paths.
    pub fn paths(&self) -> Vec<&str> {
        match self {
            Parameters::One(p) => vec![p.as_str()],
            Parameters::Many(ps) => ps.iter().map(String::as_str).collect(),
        }
    }

    /// The paths joined with `,` (a column name in sweep tables).
    pub fn label(&self) -> String {
        self.paths().join(",")
    }
}

/// One axis of a sweep: parameter paths and the values they take.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AxisSpec {
    /// Where the value goes.
    pub parameter: Parameters,
    /// The values, at least one.
    pub values: Vec<toml::Value>,
}

/// The `[sweep]` section.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    /// The first axis's parameter (with `values`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameter: Option<Parameters>,
    /// The first axis's values (with `parameter`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<toml::Value>>,
    /// Further axes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub axes: Vec<AxisSpec>,
    /// Seeds to run each combination with (default: the scenario's seed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seeds: Vec<u64>,
}

impl SweepSpec {
    /// Every axis, `parameter`/`values` first.
    pub fn all_axes(&self) -> Vec<AxisSpec> {
        let mut axes = Vec::with_capacity(self.axes.len().saturating_add(1));
        if let (Some(parameter), Some(values)) = (&self.parameter, &self.values) {
            axes.push(AxisSpec {
                parameter: parameter.clone(),
                values: values.clone(),
            });
        }
        axes.extend(self.axes.iter().cloned());
        axes
    }

    /// Checks the shape of the section (parameters are checked against the document by [`expand`]).
    pub fn validate(&self) -> Result<(), ScenarioError> {
        match (&self.parameter, &self.values) {
            (Some(_), None) => {
                return Err(ScenarioError::invalid(
                    "sweep.values",
                    "missing: `parameter` needs `values`",
                ));
            }
            (None, Some(_)) => {
                return Err(ScenarioError::invalid(
                    "sweep.parameter",
                    "missing: `values` needs `parameter`",
                ));
            }
            _ => {}
        }
        if self.parameter.is_none() && self.axes.is_empty() {
            return Err(ScenarioError::invalid(
                "sweep",
                "nothing to sweep: give `parameter` and `values`, or `[[sweep.axes]]`",
            ));
        }
        let first = self
            .parameter
            .iter()
            .map(|p| ("sweep".to_owned(), p, self.values.as_deref()));
        let rest = self.axes.iter().enumerate().map(|(i, a)| {
            (
                format!("sweep.axes[{i}]"),
                &a.parameter,
                Some(a.values.as_slice()),
            )
        });
        for (field, parameter, values) in first.chain(rest) {
            let paths = parameter.paths();
            if paths.is_empty() || paths.iter().any(|p| p.trim().is_empty()) {
                return Err(ScenarioError::invalid(
                    format!("{field}.parameter"),
                    "an empty parameter path",
                ));
            }
            if values.is_none_or(<[toml::Value]>::is_empty) {
                return Err(ScenarioError::invalid(format!("{field}.values"), "no value"));
            }
        }
        let runs = self.run_count();
        if runs > MAX_SWEEP_RUNS as u128 {
            return Err(ScenarioError::invalid(
                "sweep",
                format!(
                    "{runs} runs (the values of every axis multiplied, times {} seed(s)) is out of range: expected 1 \
                     to {MAX_SWEEP_RUNS}",
                    self.seeds.len().max(1)
                ),
            ));
        }
        Ok(())
    }

    /// How many runs the sweep expands to: the product of every axis's number of values, times the number
    /// of seeds (one when none are listed). Computed without expanding, so that a sweep too large to hold
    /// is rejected before anything is allocated.
    pub fn run_count(&self) -> u128 {
        let first = self.values.as_ref().map_or(1, Vec::len);
        let axes = self.axes.iter().map(|a| a.values.len());
        std::iter::once(first)
            .chain(axes)
            .chain(std::iter::once(self.seeds.len().max(1)))
            .fold(1u128, |n, k| n.saturating_mul(k as u128))
    }
}

/// One parameter assignment of a sweep run.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Setting {
    /// The parameter path(s), joined with `,`.
    pub parameter: String,
    /// The value as written in TOML (strings without quotes).
    pub value: String,
}

/// One concrete run of a sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepRun {
    /// Position in expansion order, from 0.
    pub index: usize,
    /// The value of each axis.
    pub settings: Vec<Setting>,
    /// The seed.
    pub seed: u64,
    /// The scenario with the values and the seed set (and no `sweep` section).
    pub scenario: Scenario,
}

/// Formats a TOML value for tables: strings bare, everything else as TOML.
pub fn value_label(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Expands a scenario text into its sweep runs. Without a `[sweep]` section there is one run: the scenario
/// itself with its own seed.
pub fn expand(text: &str) -> Result<Vec<SweepRun>, ScenarioError> {
    let base = Scenario::from_toml_str(text)?;
    let table: toml::Table = toml::from_str(text).map_err(|e| ScenarioError::Parse {
        field: ".".to_owned(),
        message: e.to_string().trim_end().to_owned(),
    })?;
    expand_parsed(base, table)
}

/// [`expand`] for a document already parsed into a TOML table (e.g. after [`set_path`] changed some of its
/// values, the `[sweep]` section included).
pub fn expand_table(table: toml::Table) -> Result<Vec<SweepRun>, ScenarioError> {
    let base = Scenario::from_toml_table(table.clone())?;
    expand_parsed(base, table)
}

fn expand_parsed(base: Scenario, mut table: toml::Table) -> Result<Vec<SweepRun>, ScenarioError> {
    table.remove("sweep");
    let Some(sweep) = base.sweep.clone() else {
        let mut scenario = base;
        scenario.sweep = None;
        return Ok(vec![SweepRun {
            index: 0,
            settings: Vec::new(),
            seed: scenario.scenario.seed,
            scenario,
        }]);
    };
    let axes = sweep.all_axes();
    let seeds = if sweep.seeds.is_empty() {
        vec![base.scenario.seed]
    } else {
        sweep.seeds.clone()
    };
    // Every combination of one value per axis, first axis slowest.
    let mut combos: Vec<Vec<(usize, &toml::Value)>> = vec![Vec::new()];
    for axis in &axes {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                axis.values.iter().map(move |v| {
                    let mut next = c.clone();
                    next.push((next.len(), v));
                    next
                })
            })
            .collect();
    }
    let mut runs = Vec::with_capacity(combos.len().saturating_mul(seeds.len()));
    for combo in combos {
        let mut doc = table.clone();
        let mut settings = Vec::with_capacity(combo.len());
        for (a, value) in combo {
            let Some(axis) = axes.get(a) else { continue };
            let field = axis_field(&sweep, a);
            for path in axis.parameter.paths() {
                set_path(&mut doc, path, value.clone()).map_err(|m| {
                    ScenarioError::invalid(format!("{field}.parameter"), format!("\"{path}\": {m}"))
                })?;
            }
            settings.push(Setting {
                parameter: axis.parameter.label(),
                value: value_label(value),
            });
        }
        for &seed in &seeds {
            let mut doc = doc.clone();
            set_path(&mut doc, "scenario.seed", toml::Value::Integer(seed_value(seed)?))
                .map_err(|m| ScenarioError::invalid("scenario.seed", m))?;
            let run_name = describe(&settings, seed);
            let mut scenario = Scenario::from_toml_table(doc).map_err(|e| match e {
                ScenarioError::Parse { field, message } => ScenarioError::Parse {
                    field,
                    message: format!("{message} (in sweep run {run_name})"),
                },
                ScenarioError::Invalid { field, message } => ScenarioError::Invalid {
                    field,
                    message: format!("{message} (in sweep run {run_name})"),
                },
                other @ ScenarioError::Io { .. } => other,
            })?;
            scenario.scenario.seed = seed;
            scenario.sweep = None;
            runs.push(SweepRun {
                index: runs.len(),
                settings: settings.clone(),
                seed,
                scenario,
            });
        }
    }
    Ok(runs)
}

/// The field name of axis `a` as written in the file.
fn axis_field(sweep: &SweepSpec, a: usize) -> String {
    if sweep.parameter.is_some() {
        match a.checked_sub(1) {
            None => "sweep".to_owned(),
            Some(i) => format!("sweep.axes[{i}]"),
        }
    } else {
        format!("sweep.axes[{a}]")
    }
}

/// TOML integers are `i64`; seeds above `i64::MAX` cannot be written in a file anyway.
fn seed_value(seed: u64) -> Result<i64, ScenarioError> {
    i64::try_from(seed)
        .map_err(|_| ScenarioError::invalid("sweep.seeds", format!("{seed} is above 2^63 - 1")))
}

/// `links.bn.loss.p=0.01, seed 2`.
pub fn describe(settings: &[Setting], seed: u64) -> String {
    let mut parts: Vec<String> = settings
        .iter()
        .map(|s| format!("{}={}", s.parameter, s.value))
        .collect();
    parts.push(format!("seed {seed}"));
    parts.join(", ")
}

/// Splits `flows[1].paths[0].route` into `flows`, `1`, `paths`, `0`, `route`.
fn segments(path: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let mut rest = part;
        let key_end = rest.find('[').unwrap_or(rest.len());
        let (key, tail) = rest.split_at(key_end);
        if key.is_empty() && tail.is_empty() {
            return Err("an empty segment (two dots in a row?)".to_owned());
        }
        if !key.is_empty() {
            out.push(key.to_owned());
        }
        rest = tail;
        while let Some(inner) = rest.strip_prefix('[') {
            let Some((index, after)) = inner.split_once(']') else {
                return Err(format!("unclosed '[' in \"{part}\""));
            };
            out.push(index.to_owned());
            rest = after;
        }
        if !rest.is_empty() {
            return Err(format!("unexpected \"{rest}\" in \"{part}\""));
        }
    }
    Ok(out)
}

/// Sets `value` at the dotted `path` of `doc` (see the module documentation for the path syntax).
pub fn set_path(doc: &mut toml::Table, path: &str, value: toml::Value) -> Result<(), String> {
    let segs = segments(path)?;
    let Some((last, init)) = segs.split_last() else {
        return Err("an empty path".to_owned());
    };
    let mut walked = String::new();
    let mut here: &mut toml::Value = {
        let Some(first) = init.first() else {
            doc.insert(last.clone(), value);
            return Ok(());
        };
        walked.push_str(first);
        doc.get_mut(first.as_str())
            .ok_or_else(|| format!("the file has no \"{first}\""))?
    };
    for seg in init.iter().skip(1) {
        here = step(here, seg, &walked)?;
        walked.push('.');
        walked.push_str(seg);
    }
    match here {
        toml::Value::Table(t) => {
            t.insert(last.clone(), value);
            Ok(())
        }
        toml::Value::Array(_) => {
            let slot = step(here, last, &walked)?;
            *slot = value;
            Ok(())
        }
        _ => Err(format!("\"{walked}\" is not a table or an array")),
    }
}

/// One step down from `here` by `seg`: a key of a table, an index or a `name` of an array.
fn step<'a>(here: &'a mut toml::Value, seg: &str, walked: &str) -> Result<&'a mut toml::Value, String> {
    match here {
        toml::Value::Table(t) => t
            .get_mut(seg)
            .ok_or_else(|| format!("\"{walked}\" has no key \"{seg}\"")),
        toml::Value::Array(items) => {
            if let Ok(i) = seg.parse::<usize>() {
                let len = items.len();
                return items
                    .get_mut(i)
                    .ok_or_else(|| format!("\"{walked}\" has {len} elements, no [{i}]"));
            }
            items
                .iter_mut()
                .find(|v| v.get("name").and_then(toml::Value::as_str) == Some(seg))
                .ok_or_else(|| format!("\"{walked}\" has no element with name \"{seg}\""))
        }
        _ => Err(format!("\"{walked}\" is not a table or an array")),
    }
}
